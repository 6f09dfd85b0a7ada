# KernelGenBench-format candidate for aten::sum.default, sum(self, *, dtype=None): the
# full reduction, two launches through an intermediate buffer of partial sums. kgb's
# sum cases call sum.dim_IntList, which this module does not define.
import torch
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def final_sum_kernel(part_ptr, out_ptr, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(part_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sum(p, axis=0))


def sum(self, *, dtype=None):
    x = self.contiguous().view(-1)
    n = x.numel()
    nblocks = triton.cdiv(n, 1024)
    part = torch.empty((nblocks,), dtype=torch.float32, device=self.device)
    out = torch.empty((), dtype=self.dtype, device=self.device)
    partial_sum_kernel[(nblocks,)](x, part, n, BLOCK=1024)
    final_sum_kernel[(1,)](part, out, nblocks, BLOCK=triton.next_power_of_2(nblocks))
    return out
