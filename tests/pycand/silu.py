# KernelGenBench-format candidate for aten::silu: correct; reshapes are views.
import torch
import triton
import triton.language as tl


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


def silu(self):
    x = self.view(-1)
    out = torch.empty_like(x)
    n = x.numel()
    silu_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
    return out.view(self.shape)
