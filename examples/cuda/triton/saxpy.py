# cublasSaxpy_v2 for Triton: y[i*incy] += alpha * x[i*incx].
import triton
import triton.language as tl


@triton.jit
def saxpy_kernel(x_ptr, y_ptr, n, incx, incy, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs * incx, mask=m)
    y = tl.load(y_ptr + offs * incy, mask=m)
    tl.store(y_ptr + offs * incy, y + alpha * x, mask=m)
