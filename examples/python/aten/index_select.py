import torch
import triton
import triton.language as tl


@triton.jit
def index_select_kernel(src_ptr, idx_ptr, out_ptr, total, n_idx, rows, inner, BLOCK_SIZE: tl.constexpr):
    # src contiguous [outer, rows, inner]; out contiguous [outer, n_idx, inner]
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < total
    i = offs % inner
    t = offs // inner
    j = t % n_idx
    o = t // n_idx
    idx = tl.load(idx_ptr + j, mask=mask, other=0)
    src = (o * rows + idx) * inner + i
    vals = tl.load(src_ptr + src, mask=mask)
    tl.store(out_ptr + offs, vals, mask=mask)


def index_select(self, dim, index):
    x = self.contiguous()
    index = index.contiguous()
    nd = x.dim()
    dim = dim % nd if nd > 0 else 0
    rows = x.shape[dim] if nd > 0 else 1
    inner = 1
    for s in x.shape[dim + 1:]:
        inner *= s
    outer = 1
    for s in x.shape[:dim]:
        outer *= s
    n_idx = index.numel()
    out_shape = list(x.shape)
    if nd > 0:
        out_shape[dim] = n_idx
    out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    total = out.numel()
    if total == 0:
        return out
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(total, BLOCK_SIZE),)
    index_select_kernel[grid](x, index, out, total, n_idx, rows, inner, BLOCK_SIZE=BLOCK_SIZE)
    return out


def index_select_out(self, dim, index, *, out):
    result = index_select(self, dim, index)
    out.copy_(result)
    return out


def index_select_dimname(self, dim, index):
    return index_select(self, self.names.index(dim), index)


def index_select_dimname_out(self, dim, index, *, out):
    return index_select_out(self, self.names.index(dim), index, out=out)
