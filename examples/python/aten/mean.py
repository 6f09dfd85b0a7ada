import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 4, "BLOCK_N": 256}, num_warps=4),
        triton.Config({"BLOCK_M": 1, "BLOCK_N": 1024}, num_warps=4),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 64}, num_warps=4),
    ],
    key=["M", "N"],
)
@triton.jit
def mean_kernel(x_ptr, out_ptr, M, N, inv_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # a block of rows of a contiguous [M, N] matrix, reduced along N
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
        m = row_mask[:, None] & (cols[None, :] < N)
        acc += tl.load(ptrs, mask=m, other=0.0).to(tl.float32)
    s = tl.sum(acc, axis=1) * inv_n
    tl.store(out_ptr + rows, s.to(out_ptr.dtype.element_ty), mask=row_mask)


def _mean(x, dims, keepdim, dtype):
    nd = x.dim()
    if dims is None or len(dims) == 0:
        dims = list(range(nd))
    dims = sorted({d % nd for d in dims}) if nd else []
    kept = [d for d in range(nd) if d not in dims]
    out_dtype = dtype if dtype is not None else x.dtype
    if keepdim:
        out_shape = [1 if d in dims else x.size(d) for d in range(nd)]
    else:
        out_shape = [x.size(d) for d in kept]
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)
    N = 1
    for d in dims:
        N *= x.size(d)
    M = out.numel()
    if M == 0:
        return out
    xt = x.permute(kept + dims).contiguous() if nd else x
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
    mean_kernel[grid](xt, out, M, N, 1.0 / N if N else float("nan"))
    return out


def mean(self, *, dtype=None):
    return _mean(self, None, False, dtype)


def mean_dim(self, dim, keepdim=False, *, dtype=None):
    return _mean(self, list(dim) if dim is not None else None, keepdim, dtype)


def mean_out(self, dim, keepdim=False, *, dtype=None, out):
    out.copy_(mean_dim(self, dim, keepdim, dtype=dtype))
    return out


def mean_dtype_out(self, *, dtype=None, out):
    out.copy_(mean(self, dtype=dtype))
    return out


def mean_names_dim(self, dim, keepdim=False, *, dtype=None):
    return mean_dim(self, [self.names.index(d) for d in dim], keepdim, dtype=dtype)


def mean_names_out(self, dim, keepdim=False, *, dtype=None, out):
    out.copy_(mean_names_dim(self, dim, keepdim, dtype=dtype))
    return out
