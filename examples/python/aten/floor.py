import torch
import triton
import triton.language as tl


@triton.jit
def floor_kernel(x_ptr, y_ptr, n, IS_INT: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if IS_INT:
        y = x  # floor of an integer is itself
    else:
        y = tl.floor(x.to(tl.float32)).to(x.dtype)
    tl.store(y_ptr + offs, y, mask=m)


def floor(self):
    x = self.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    floor_kernel[grid](x, y, n, IS_INT=not x.is_floating_point(), BLOCK_SIZE=BLOCK_SIZE)
    return y


def floor_out(self, *, out):
    out.copy_(floor(self))
    return out


def floor_int(a):
    return a


def floor_float(a):
    import math
    return math.floor(a)


def floor_Scalar(a):
    return a if isinstance(a, int) else floor_float(a)
