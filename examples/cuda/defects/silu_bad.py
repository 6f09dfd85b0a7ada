# Planted defect (compile_error): tl.arange needs a power-of-two range.
import triton
import triton.language as tl


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, 1000)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=m)
