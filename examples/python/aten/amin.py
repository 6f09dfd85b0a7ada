import torch
import triton
import triton.language as tl


@triton.jit
def amin_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row_start = x_ptr + pid.to(tl.int64) * N
    best = tl.full([BLOCK], float("inf"), tl.float32)
    for off in range(0, N, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        v = tl.load(row_start + idx, mask=idx < N, other=float("inf"))
        best = tl.minimum(best, v.to(tl.float32))
    tl.store(out_ptr + pid, tl.min(best, axis=0).to(out_ptr.dtype.element_ty))


def amin(self, dim=[], keepdim=False):
    ndim = self.dim()
    if isinstance(dim, int):
        dim = [dim]
    red = sorted({d % ndim for d in dim}) if (ndim and len(dim)) else list(range(ndim))
    keep = [d for d in range(ndim) if d not in red]
    shape = [(1 if d in red else self.shape[d]) for d in range(ndim)] if keepdim else [self.shape[d] for d in keep]
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    N = 1
    for d in red:
        N *= self.shape[d]
    if N == 0:
        raise RuntimeError("amin(): Expected reduction dim to have non-zero size")
    x = self.permute(keep + red).contiguous()
    BLOCK = min(1024, triton.next_power_of_2(N))
    amin_kernel[(max(out.numel(), 1),)](x, out, N, BLOCK=BLOCK)
    return out


def amin_out(self, dim=[], keepdim=False, *, out):
    out.copy_(amin(self, dim, keepdim))
    return out
