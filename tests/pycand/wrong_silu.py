# KernelGenBench-format candidate for aten::silu: wrong. Each program reads one element
# past the one it writes (an off-by-one in the load's index): every output but the
# last is its neighbour's silu, so the module records and replays, and fails validation.
import torch
import triton
import triton.language as tl


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


def silu(self):
    x = self.view(-1)
    out = torch.empty_like(x)
    n = x.numel()
    silu_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
    return out.view(self.shape)
