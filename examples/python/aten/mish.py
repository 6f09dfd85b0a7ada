import torch
import triton
import triton.language as tl


@triton.jit
def _softplus(x):
    # log(1 + exp(x)), linear above the threshold 20 as in PyTorch
    return tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))


@triton.jit
def _tanh_pos(s):
    # tanh for s >= 0 without overflow
    e = tl.exp(-2.0 * s)
    return (1.0 - e) / (1.0 + e)


@triton.jit
def mish_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = x * _tanh_pos(_softplus(x))
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def mish(self):
    x = self.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    mish_kernel[grid](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


def mish_out(self, *, out):
    result = mish(self)
    out.copy_(result)
    return out
