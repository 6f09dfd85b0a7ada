# KernelGenBench-format candidate for aten::_softmax (and softmax.int): correct for any
# dim and strides of up to five dims. One program per slice along dim: a pass for the
# maximum and the sum of exponentials (online), a pass writing the result, all through
# the input's and output's own strides.
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_dim_kernel(x_ptr, out_ptr, K1, K2, K3, ks0, ks1, ks2, ks3, os0, os1, os2, os3, R: tl.constexpr, rs, ors,
                       BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i3 = pid % K3
    t = pid // K3
    i2 = t % K2
    t = t // K2
    i1 = t % K1
    i0 = t // K1
    xb = i0 * ks0 + i1 * ks1 + i2 * ks2 + i3 * ks3
    ob = i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, R, BLOCK):
        r = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + xb + r * rs, mask=r < R, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    mx = tl.max(m, axis=0)
    total = tl.sum(s * tl.where(m == float("-inf"), 0.0, tl.exp(m - mx)), axis=0)
    for start in range(0, R, BLOCK):
        r = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + xb + r * rs, mask=r < R, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - mx) / total
        tl.store(out_ptr + ob + r * ors, y.to(out_ptr.dtype.element_ty), mask=r < R)


def _pad4(v, fill):
    if len(v) > 4:
        raise NotImplementedError("more than 5 dims")
    return [fill] * (4 - len(v)) + list(v)


def _launch(x, dim, out_dtype):
    nd = x.dim()
    d = dim % nd if nd else 0
    out = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    if x.numel() == 0:
        return out
    kept = [k for k in range(nd) if k != d]
    ks = _pad4([x.size(k) for k in kept], 1)
    kst = _pad4([x.stride(k) for k in kept], 0)
    ost = _pad4([out.stride(k) for k in kept], 0)
    R = x.size(d) if nd else 1
    rs = x.stride(d) if nd else 0
    ors = out.stride(d) if nd else 0
    n = 1
    for k in kept:
        n *= x.size(k)
    block = min(1024, triton.next_power_of_2(R))
    softmax_dim_kernel[(n,)](x, out, ks[1], ks[2], ks[3], kst[0], kst[1], kst[2], kst[3],
                             ost[0], ost[1], ost[2], ost[3], R=R, rs=rs, ors=ors, BLOCK=block)
    return out


def _softmax(self, dim, half_to_float):
    return _launch(self, dim, torch.float32 if half_to_float else self.dtype)


def softmax_int(self, dim, dtype=None):
    return _launch(self, dim, dtype if dtype is not None else self.dtype)
