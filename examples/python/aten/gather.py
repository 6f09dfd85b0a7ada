import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(inp_ptr, idx_ptr, out_ptr, numel, DIM: tl.constexpr,
                  n1, n2, n3, n4,
                  is0, is1, is2, is3, is4,
                  xs0, xs1, xs2, xs3, xs4,
                  BLOCK: tl.constexpr):
    # out has index's shape (padded to 5-d, contiguous); inp and index read through
    # their strides; the coordinate along DIM comes from index
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    c4 = offs % n4
    r = offs // n4
    c3 = r % n3
    r = r // n3
    c2 = r % n2
    r = r // n2
    c1 = r % n1
    c0 = r // n1
    idx = tl.load(idx_ptr + c0 * xs0 + c1 * xs1 + c2 * xs2 + c3 * xs3 + c4 * xs4, mask=mask, other=0)
    if DIM == 0:
        c0 = idx
    elif DIM == 1:
        c1 = idx
    elif DIM == 2:
        c2 = idx
    elif DIM == 3:
        c3 = idx
    else:
        c4 = idx
    v = tl.load(inp_ptr + c0 * is0 + c1 * is1 + c2 * is2 + c3 * is3 + c4 * is4, mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)


def gather(self, dim, index, *, sparse_grad=False):
    nd = max(self.dim(), 1)
    if nd > 5:
        raise NotImplementedError("gather: at most 5 dims")
    dim = dim % nd
    out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    numel = out.numel()
    if numel == 0:
        return out
    pad = 5 - nd
    sizes = [1] * pad + (list(index.shape) if index.dim() else [1])
    istr = [0] * pad + (list(self.stride()) if self.dim() else [0])
    xstr = [0] * pad + (list(index.stride()) if index.dim() else [0])
    BLOCK = 512
    gather_kernel[(triton.cdiv(numel, BLOCK),)](self, index, out, numel, dim + pad,
                                                sizes[1], sizes[2], sizes[3], sizes[4],
                                                *istr, *xstr, BLOCK=BLOCK)
    return out


def gather_out(self, dim, index, *, sparse_grad=False, out):
    out.copy_(gather(self, dim, index, sparse_grad=sparse_grad))
    return out


def gather_dimname(self, dim, index, *, sparse_grad=False):
    return gather(self, self.names.index(dim), index, sparse_grad=sparse_grad)


def gather_dimname_out(self, dim, index, *, sparse_grad=False, out):
    return gather_out(self, self.names.index(dim), index, sparse_grad=sparse_grad, out=out)
