import torch
import triton
import triton.language as tl

# rounding modes
_TRUE, _TRUNC, _FLOOR = 0, 1, 2


@triton.jit
def div_kernel(x_ptr, y_ptr, out_ptr, y_scalar, n_elements,
               Y_IS_SCALAR: tl.constexpr, MODE: tl.constexpr, FLOAT_MATH: tl.constexpr,
               BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0)
    if Y_IS_SCALAR:
        y = y_scalar
    else:
        y = tl.load(y_ptr + offsets, mask=mask, other=1)
    if FLOAT_MATH:
        # correctly rounded, as torch divides: `/` on a GPU is an approximate division,
        # which floor and trunc turn into an off-by-one quotient
        q = tl.div_rn(x.to(tl.float32), y.to(tl.float32))
        if MODE == 1:
            q = tl.where(q < 0, -tl.floor(-q), tl.floor(q))
        elif MODE == 2:
            q = tl.floor(q)
    else:
        # integer division: C truncation built from non-negative operands, then floor
        a = x.to(tl.int64)
        b = y.to(tl.int64)
        b = tl.where(b == 0, 1, b)
        aa = tl.where(a < 0, -a, a)
        bb = tl.where(b < 0, -b, b)
        t = aa // bb
        q = tl.where((a < 0) != (b < 0), -t, t)
        if MODE == 2:
            r = a - q * b
            q = tl.where((r != 0) & ((r < 0) != (b < 0)), q - 1, q)
    tl.store(out_ptr + offsets, q.to(out_ptr.dtype.element_ty), mask=mask)


def _result_dtype(self, other, mode):
    dt = torch.result_type(self, other)
    if mode == _TRUE and not dt.is_floating_point:
        return torch.get_default_dtype()
    return dt


def _div(self, other, mode):
    out_dtype = _result_dtype(self, other, mode)
    float_math = out_dtype.is_floating_point
    if isinstance(other, torch.Tensor):
        x, y = torch.broadcast_tensors(self, other)
        x, y = x.contiguous(), y.contiguous()
        y_scalar, y_is_scalar = 0, False
    else:
        x = self.contiguous()
        y = x
        y_scalar = float(other) if float_math else int(other)
        y_is_scalar = True
    out = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    n = out.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    div_kernel[grid](x, y, out, y_scalar, n, Y_IS_SCALAR=y_is_scalar, MODE=mode, FLOAT_MATH=float_math,
                     BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


def _mode(rounding_mode):
    if rounding_mode is None:
        return _TRUE
    if rounding_mode == "trunc":
        return _TRUNC
    if rounding_mode == "floor":
        return _FLOOR
    raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'"
                     % rounding_mode)


def div_Tensor(self, other):
    return _div(self, other, _TRUE)


def div_Scalar(self, other):
    return _div(self, other, _TRUE)


def div_Tensor_mode(self, other, *, rounding_mode):
    return _div(self, other, _mode(rounding_mode))


def div_Scalar_mode(self, other, *, rounding_mode):
    return _div(self, other, _mode(rounding_mode))


def div_out(self, other, *, out):
    out.copy_(div_Tensor(self, other))
    return out


def div_out_mode(self, other, *, rounding_mode, out):
    out.copy_(div_Tensor_mode(self, other, rounding_mode=rounding_mode))
    return out


def div_Scalar_out(self, other, *, out):
    out.copy_(div_Scalar(self, other))
    return out


def div_Scalar_mode_out(self, other, *, rounding_mode, out):
    out.copy_(div_Scalar_mode(self, other, rounding_mode=rounding_mode))
    return out


def div(a, b):
    return a / b


def div_int(a, b):
    return a / b


div_float = div_complex = div_int
