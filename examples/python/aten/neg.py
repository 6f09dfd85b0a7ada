import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=2),
    ],
    key=["n_elements"],
)
@triton.jit
def neg_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, (-x.to(tl.float32)).to(y_ptr.dtype.element_ty), mask=mask)


def neg(self):
    x = self.contiguous()
    y = torch.empty_like(x)
    n_elements = x.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    neg_kernel[grid](x, y, n_elements)
    return y


def neg_out(self, *, out):
    result = neg(self)
    out.copy_(result)
    return out


def neg_int(a):
    return -a


neg_float = neg_complex = neg_Scalar = neg_int
