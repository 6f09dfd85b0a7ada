# cublasSgemm_v2 for Triton, column-major: C = alpha * op(A) op(B) + beta * C.
# op(A)(i, l) = A[i * sam + l * sak]; op(B)(l, j) = B[l * sbk + j * sbn]; C[i + j * ldc].
# The dot runs in IEEE fp32 (not tf32) to meet fp32 tolerances.
import triton
import triton.language as tl


@triton.jit
def sgemm_kernel(a_ptr, b_ptr, c_ptr, m, n, k, sam, sak, sbk, sbn, ldc, alpha, beta,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for l0 in range(0, k, BK):
        kk = l0 + rk
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * sam + kk[None, :].to(tl.int64) * sak,
                    mask=(rm[:, None] < m) & (kk[None, :] < k), other=0.0)
        b = tl.load(b_ptr + kk[:, None].to(tl.int64) * sbk + rn[None, :].to(tl.int64) * sbn,
                    mask=(kk[:, None] < k) & (rn[None, :] < n), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    cmask = (rm[:, None] < m) & (rn[None, :] < n)
    cptr = c_ptr + rm[:, None].to(tl.int64) + rn[None, :].to(tl.int64) * ldc
    if beta == 0.0:
        out = alpha * acc
    else:
        out = alpha * acc + beta * tl.load(cptr, mask=cmask, other=0.0)
    tl.store(cptr, out, mask=cmask)
