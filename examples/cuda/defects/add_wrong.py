# Planted defect (wrong_result): ignores alpha.
import triton
import triton.language as tl


@triton.jit
def add_kernel(self_ptr, other_ptr, out_ptr, alpha, n, other_n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(self_ptr + offs, mask=m).to(tl.float32)
    y = tl.load(other_ptr + offs % other_n, mask=m).to(tl.float32)
    tl.store(out_ptr + offs, (x + 2.0 * y).to(out_ptr.dtype.element_ty), mask=m)
