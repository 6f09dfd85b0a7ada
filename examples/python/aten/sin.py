import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def sin_kernel(x_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    output = tl.sin(x.to(tl.float32))
    tl.store(output_ptr + offsets, output.to(output_ptr.dtype.element_ty), mask=mask)


def sin(self):
    x = self.contiguous()
    output = torch.empty_like(x)
    n_elements = output.numel()
    if n_elements == 0:
        return output
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    sin_kernel[grid](x, output, n_elements)
    return output


def sin_out(self, *, out):
    result = sin(self)
    out.copy_(result)
    return out


def sin_float(a):
    import math
    return math.sin(a)


sin_int = sin_float


def sin_complex(a):
    import cmath
    return cmath.sin(a)


def sin_Scalar(a):
    return sin_complex(a) if isinstance(a, complex) else sin_float(a)
