import torch
import triton
import triton.language as tl


@triton.jit
def rsqrt_kernel(x_ptr, out_ptr, numel, S1, S2, S3, S4, st0, st1, st2, st3, st4,
                 BLOCK: tl.constexpr):
    # reads x through its strides (up to 5 dims), writes a contiguous out
    pid = tl.program_id(0)
    lin = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = lin < numel
    c4 = lin % S4
    t = lin // S4
    c3 = t % S3
    t = t // S3
    c2 = t % S2
    t = t // S2
    c1 = t % S1
    c0 = t // S1
    x = tl.load(x_ptr + c0 * st0 + c1 * st1 + c2 * st2 + c3 * st3 + c4 * st4, mask=mask, other=1.0)
    y = 1.0 / tl.sqrt(x.to(tl.float32))
    tl.store(out_ptr + lin, y.to(out_ptr.dtype.element_ty), mask=mask)


def _sizes_strides(t, nd=5):
    if t.dim() > nd:
        raise NotImplementedError("rsqrt supports up to %d dims" % nd)
    pad = nd - t.dim()
    return [1] * pad + list(t.size()), [0] * pad + list(t.stride())


def rsqrt(self):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    numel = self.numel()
    if numel == 0:
        return out
    sizes, strides = _sizes_strides(self)
    BLOCK = 512
    rsqrt_kernel[(triton.cdiv(numel, BLOCK),)](self, out, numel, sizes[1], sizes[2], sizes[3], sizes[4],
                                               *strides, BLOCK=BLOCK)
    return out


def rsqrt_out(self, *, out):
    out.copy_(rsqrt(self))
    return out
