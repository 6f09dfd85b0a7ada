import torch
import triton
import triton.language as tl


@triton.jit
def _pow_fp32(base, exponent):
    # base ** exponent for base > 0 (and base == 0: 0 for exponent > 0)
    r = tl.exp2(exponent * tl.log2(base))
    return tl.where(base == 0.0, tl.where(exponent == 0.0, 1.0, 0.0), r)


@triton.jit
def pow_tensor_tensor_kernel(x_ptr, e_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    e = tl.load(e_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    tl.store(out_ptr + offsets, _pow_fp32(x, e).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def pow_tensor_scalar_kernel(x_ptr, out_ptr, exponent, n_elements, INT_EXP: tl.constexpr,
                             BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    if INT_EXP == 2:
        y = x * x
    elif INT_EXP == 3:
        y = x * x * x
    elif INT_EXP == -1:
        y = 1.0 / x
    elif INT_EXP == 1:
        y = x
    elif INT_EXP == 0:
        y = tl.full(x.shape, 1.0, tl.float32)
    else:
        if exponent == 0.5:
            y = tl.sqrt(x)
        else:
            y = _pow_fp32(x, exponent)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def pow_scalar_tensor_kernel(e_ptr, out_ptr, log2_base, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    e = tl.load(e_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, tl.exp2(e * log2_base).to(out_ptr.dtype.element_ty), mask=mask)


def _grid(n, block):
    return (triton.cdiv(n, block),)


def pow_Tensor_Tensor(self, exponent):
    out_dtype = torch.result_type(self, exponent)
    x, e = torch.broadcast_tensors(self, exponent)
    x = x.contiguous()
    e = e.contiguous()
    out = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    n = out.numel()
    pow_tensor_tensor_kernel[_grid(n, 1024)](x, e, out, n, BLOCK_SIZE=1024)
    return out


def pow_Tensor_Scalar(self, exponent):
    out_dtype = torch.result_type(self, exponent)
    x = self.contiguous()
    out = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    n = out.numel()
    e = float(exponent)
    int_exp = int(e) if e.is_integer() and -1 <= e <= 3 else 99
    pow_tensor_scalar_kernel[_grid(n, 1024)](x, out, e, n, INT_EXP=int_exp, BLOCK_SIZE=1024)
    return out


def pow_Scalar(self, exponent):
    # self is a Python number, exponent a tensor
    import math
    out_dtype = torch.result_type(self, exponent)
    e = exponent.contiguous()
    out = torch.empty(e.shape, dtype=out_dtype, device=e.device)
    n = out.numel()
    if float(self) <= 0:
        raise NotImplementedError("pow.Scalar: only positive bases")
    pow_scalar_tensor_kernel[_grid(n, 1024)](e, out, math.log2(float(self)), n, BLOCK_SIZE=1024)
    return out


def pow_Tensor_Tensor_out(self, exponent, *, out):
    out.copy_(pow_Tensor_Tensor(self, exponent))
    return out


def pow_Tensor_Scalar_out(self, exponent, *, out):
    out.copy_(pow_Tensor_Scalar(self, exponent))
    return out


def pow_Scalar_out(self, exponent, *, out):
    out.copy_(pow_Scalar(self, exponent))
    return out


def pow_float(a, b):
    return float(a) ** float(b)


pow_int = pow_Scalar_Scalar = pow_int_float = pow_float_int = pow_float


def pow_complex(a, b):
    return a ** b


pow_float_complex = pow_complex_float = pow_complex


def pow_int_to_int(a, b):
    # torch's own pow.int_to_int answers a float (pow(7, 2) is 49.0)
    return float(int(a) ** int(b))
