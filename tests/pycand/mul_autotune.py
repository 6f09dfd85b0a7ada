# KernelGenBench-format candidate for aten::mul (mul.Tensor): correct, autotuned.
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=2),
             triton.Config({"BLOCK": 1024}, num_warps=4),
             triton.Config({"BLOCK": 1024}, num_warps=8, num_stages=2),
             triton.Config({"BLOCK": 256}, num_warps=2)],
    key=["n"])
@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * tl.load(y_ptr + offs, mask=mask), mask=mask)


def mul_Tensor(self, other):
    out = torch.empty_like(self)
    n = out.numel()
    mul_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](self, other, out, n)
    return out
