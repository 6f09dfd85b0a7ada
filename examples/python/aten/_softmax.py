import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_inner_kernel(x_ptr, y_ptr, R, inner, BLOCK_R: tl.constexpr):
    # x, y contiguous [outer, R, inner]; one program per (outer, inner) pair
    pid = tl.program_id(0).to(tl.int64)
    o = pid // inner
    i = pid % inner
    base = o * R * inner + i
    r = tl.arange(0, BLOCK_R)
    if BLOCK_R >= R:
        x = tl.load(x_ptr + base + r * inner, mask=r < R, other=float("-inf")).to(tl.float32)
        mx = tl.max(x, axis=0)
        e = tl.exp(x - mx)
        tl.store(y_ptr + base + r * inner, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=r < R)
    else:
        mx = float("-inf")
        for start in range(0, R, BLOCK_R):
            rr = start + r
            x = tl.load(x_ptr + base + rr * inner, mask=rr < R, other=float("-inf")).to(tl.float32)
            mx = tl.maximum(mx, tl.max(x, axis=0))
        den = 0.0
        for start in range(0, R, BLOCK_R):
            rr = start + r
            x = tl.load(x_ptr + base + rr * inner, mask=rr < R, other=float("-inf")).to(tl.float32)
            den += tl.sum(tl.exp(x - mx), axis=0)
        for start in range(0, R, BLOCK_R):
            rr = start + r
            x = tl.load(x_ptr + base + rr * inner, mask=rr < R, other=float("-inf")).to(tl.float32)
            tl.store(y_ptr + base + rr * inner, (tl.exp(x - mx) / den).to(y_ptr.dtype.element_ty), mask=rr < R)


def _softmax(self, dim, half_to_float):
    if half_to_float and self.dtype != torch.float16 and self.dtype != torch.bfloat16:
        raise RuntimeError("softmax with half to float conversion is supported on half inputs only")
    x = self.contiguous()
    nd = x.dim()
    d = dim % nd if nd > 0 else 0
    R = x.shape[d] if nd > 0 else 1
    outer = 1
    for s in x.shape[:d]:
        outer *= s
    inner = 1
    for s in x.shape[d + 1:]:
        inner *= s
    out_dtype = torch.float32 if half_to_float else x.dtype
    y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    if x.numel() == 0:
        return y
    BLOCK_R = min(triton.next_power_of_2(R), 4096)
    _softmax_inner_kernel[(outer * inner,)](x, y, R, inner, BLOCK_R=BLOCK_R, num_warps=4)
    return y


def _softmax_out(self, dim, half_to_float, *, out):
    result = _softmax(self, dim, half_to_float)
    out.copy_(result)
    return out
