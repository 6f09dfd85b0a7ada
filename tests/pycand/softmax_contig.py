# KernelGenBench-format candidate for aten::_softmax written the way LLM methods write
# it: the input made contiguous on the host (a transpose first for another dim), one
# program per row, the result copied back into the input's dim order. The copies are
# kgb's host steps; on a contiguous input along the last dim there are none.
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.where(mask, tl.exp(x - tl.max(x, axis=0)), 0.0)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n_cols + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _softmax(self, dim, half_to_float):
    d = dim % self.dim()
    x = self.transpose(d, -1).contiguous()
    out = torch.empty(x.shape, dtype=torch.float32 if half_to_float else self.dtype, device=self.device)
    n_cols = x.shape[-1]
    softmax_rows_kernel[(x.numel() // n_cols,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out.transpose(d, -1).contiguous()
