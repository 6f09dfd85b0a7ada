import torch
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(A, B, C, M, N, K,
               sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = A + batch * sab
    B = B + batch * sbb
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        # float32 inputs multiply in full precision, as torch.bmm does by default
        acc += tl.dot(a, b, input_precision="ieee")
    C = C + batch * scb
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _bmm(a, b, out_dtype, out=None):
    if a.dim() != 3 or b.dim() != 3:
        raise RuntimeError("batch1 and batch2 must be 3D tensors")
    Bt, M, K = a.shape
    Bt2, K2, N = b.shape
    if Bt != Bt2 or K != K2:
        raise RuntimeError("bmm: shape mismatch %s @ %s" % (list(a.shape), list(b.shape)))
    if out is None:
        out = torch.empty((Bt, M, N), dtype=out_dtype, device=a.device)
    if M >= 64 and N >= 64:
        BLOCK_M, BLOCK_N, BLOCK_K, warps = 64, 64, 32, 4
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps = 16, 16, 16, 2
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), Bt)
    bmm_kernel[grid](a, b, out, M, N, K,
                     a.stride(0), a.stride(1), a.stride(2),
                     b.stride(0), b.stride(1), b.stride(2),
                     out.stride(0), out.stride(1), out.stride(2),
                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=warps)
    return out


def bmm(self, mat2):
    return _bmm(self, mat2, self.dtype)


def bmm_out(self, mat2, *, out):
    if out.is_contiguous():
        return _bmm(self, mat2, out.dtype, out)
    out.copy_(_bmm(self, mat2, out.dtype))
    return out


def bmm_dtype(self, mat2, out_dtype):
    return _bmm(self, mat2, out_dtype)


def bmm_dtype_out(self, mat2, out_dtype, *, out):
    out.copy_(_bmm(self, mat2, out_dtype))
    return out
