import torch
import triton
import triton.language as tl


@triton.jit
def _sub_kernel(a_ptr, b_ptr, c_ptr, alpha, N, USE_FP32: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < N
    a = tl.load(a_ptr + offs, mask=m, other=0)
    b = tl.load(b_ptr + offs, mask=m, other=0)
    if USE_FP32:
        c = a.to(tl.float32) - alpha * b.to(tl.float32)
    else:
        c = a.to(tl.int64) - alpha * b.to(tl.int64)
    tl.store(c_ptr + offs, c.to(c_ptr.dtype.element_ty), mask=m)


@triton.jit
def _sub_scalar_kernel(a_ptr, c_ptr, value, N, USE_FP32: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < N
    a = tl.load(a_ptr + offs, mask=m, other=0)
    if USE_FP32:
        c = a.to(tl.float32) - value
    else:
        c = a.to(tl.int64) - value
    tl.store(c_ptr + offs, c.to(c_ptr.dtype.element_ty), mask=m)


BLOCK_SIZE = 1024


def sub_Tensor(self, other, *, alpha=1):
    result_dtype = torch.result_type(self, other)
    a, b = torch.broadcast_tensors(self, other)
    a = a.contiguous()
    b = b.contiguous()
    c = torch.empty(a.shape, dtype=result_dtype, device=self.device)
    N = c.numel()
    use_fp32 = result_dtype.is_floating_point
    alpha = float(alpha) if use_fp32 else int(alpha)
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    _sub_kernel[grid](a, b, c, alpha, N, USE_FP32=use_fp32, BLOCK_SIZE=BLOCK_SIZE)
    return c


def sub_Scalar(self, other, alpha=1):
    result_dtype = torch.result_type(self, other)
    a = self.contiguous()
    c = torch.empty(a.shape, dtype=result_dtype, device=self.device)
    N = c.numel()
    use_fp32 = result_dtype.is_floating_point
    value = float(other) * float(alpha) if use_fp32 else int(other) * int(alpha)
    grid = (triton.cdiv(N, BLOCK_SIZE),)
    _sub_scalar_kernel[grid](a, c, value, N, USE_FP32=use_fp32, BLOCK_SIZE=BLOCK_SIZE)
    return c


def sub_out(self, other, *, alpha=1, out):
    out.copy_(sub_Tensor(self, other, alpha=alpha))
    return out


def sub_Scalar_out(self, other, alpha=1, *, out):
    out.copy_(sub_Scalar(self, other, alpha))
    return out


def sub(a, b):
    return a - b


def sub_int(a, b):
    return a - b


sub_float = sub_complex = sub_int_complex = sub_complex_int = sub_int
sub_float_complex = sub_complex_float = sub_int_float = sub_float_int = sub_int
