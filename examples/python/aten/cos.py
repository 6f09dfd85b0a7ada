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
def cos_kernel(x_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    output = tl.cos(x.to(tl.float32))
    tl.store(output_ptr + offsets, output.to(output_ptr.dtype.element_ty), mask=mask)


def cos(self):
    x = self.contiguous()
    output = torch.empty_like(x)
    n_elements = output.numel()
    if n_elements == 0:
        return output
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    cos_kernel[grid](x, output, n_elements)
    return output


def cos_out(self, *, out):
    result = cos(self)
    out.copy_(result)
    return out


def cos_float(a):
    import math
    return math.cos(a)


cos_int = cos_float


def cos_complex(a):
    import cmath
    return cmath.cos(a)


def cos_Scalar(a):
    return cos_complex(a) if isinstance(a, complex) else cos_float(a)
