import torch
import triton
import triton.language as tl

MAX_DIMS = 5


@triton.jit
def rsub_strided_kernel(
    self_ptr, other_ptr, out_ptr, alpha, numel,
    D1, D2, D3, D4,
    ss0, ss1, ss2, ss3, ss4,
    os0, os1, os2, os3, os4,
    OTHER_IS_SCALAR: tl.constexpr, FP32: tl.constexpr, BLOCK: tl.constexpr,
):
    # out (contiguous) = other - alpha * self; self and other read through their strides
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < numel
    i4 = idx % D4
    rem = idx // D4
    i3 = rem % D3
    rem = rem // D3
    i2 = rem % D2
    rem = rem // D2
    i1 = rem % D1
    i0 = rem // D1
    s_off = i0 * ss0 + i1 * ss1 + i2 * ss2 + i3 * ss3 + i4 * ss4
    s = tl.load(self_ptr + s_off, mask=mask, other=0)
    if FP32:
        s = s.to(tl.float32)
    else:
        s = s.to(tl.int64)
    if OTHER_IS_SCALAR:
        res = other_ptr - alpha * s
    else:
        o_off = i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3 + i4 * os4
        o = tl.load(other_ptr + o_off, mask=mask, other=0)
        if FP32:
            o = o.to(tl.float32)
        else:
            o = o.to(tl.int64)
        res = o - alpha * s
    tl.store(out_ptr + idx, res.to(out_ptr.dtype.element_ty), mask=mask)


def _pad(t):
    """sizes and strides padded on the left to MAX_DIMS"""
    if t.dim() > MAX_DIMS:
        raise NotImplementedError("rsub: at most %d dims" % MAX_DIMS)
    extra = MAX_DIMS - t.dim()
    return [1] * extra + list(t.shape), [0] * extra + list(t.stride())


def _rsub(self, other, alpha, other_is_scalar):
    out_dtype = torch.result_type(self, other)
    fp32 = out_dtype.is_floating_point
    alpha = float(alpha) if fp32 else int(alpha)
    if other_is_scalar:
        shape = self.shape
        other_arg = float(other) if fp32 else int(other)
        ost = [0] * MAX_DIMS
    else:
        shape = torch.broadcast_shapes(self.shape, other.shape)
        other_arg = other.expand(shape)   # stride-0 view, no copy
        _, ost = _pad(other_arg)
    self_b = self.expand(shape)
    sizes, sst = _pad(self_b)
    out = torch.empty(shape, dtype=out_dtype, device=self.device)
    numel = out.numel()
    BLOCK = 1024
    grid = (triton.cdiv(numel, BLOCK),)
    rsub_strided_kernel[grid](self_b, other_arg, out, alpha, numel, sizes[1], sizes[2], sizes[3], sizes[4],
                              *sst, *ost, OTHER_IS_SCALAR=other_is_scalar, FP32=fp32, BLOCK=BLOCK)
    return out


def rsub_Tensor(self, other, *, alpha=1):
    return _rsub(self, other, alpha, False)


def rsub_Scalar(self, other, alpha=1):
    return _rsub(self, other, alpha, True)


def rsub_Tensor_out(self, other, *, alpha=1, out):
    res = rsub_Tensor(self, other, alpha=alpha)
    out.copy_(res)
    return out


def rsub_Scalar_out(self, other, alpha=1, *, out):
    res = rsub_Scalar(self, other, alpha)
    out.copy_(res)
    return out
