# KernelGenBench-format candidate for aten::relu: correct.
import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def relu(self):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = self.numel()
    relu_kernel[(triton.cdiv(n, 256),)](self, out, n, BLOCK=256, num_warps=2)
    return out
