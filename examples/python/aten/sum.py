import torch
import triton
import triton.language as tl


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    # one program per row of a contiguous [M, N] view; fp32 accumulation
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        vals = tl.load(base + cols, mask=cols < N, other=0.0)
        acc += vals.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))


def _normalize_dims(dim, ndim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    n = max(ndim, 1)
    return sorted(set(d % n for d in dim)) if ndim > 0 else []


def _sum(x, dims, keepdim, dtype):
    out_dtype = dtype if dtype is not None else x.dtype
    nd = x.dim()
    kept = [d for d in range(nd) if d not in dims]
    out_shape = [1 if d in dims else x.shape[d] for d in range(nd)] if keepdim else [x.shape[d] for d in kept]
    # move the reduced dims to the end and make the input a contiguous [M, N] matrix
    x2 = x.permute(*kept, *dims).contiguous() if nd > 0 else x.reshape(1)
    N = 1
    for d in dims:
        N *= x.shape[d]
    M = x2.numel() // N if N > 0 else 1
    for d in kept:
        M = M if N > 0 else M * x.shape[d]
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)
    if out.numel() == 0:
        return out
    BLOCK_N = min(triton.next_power_of_2(max(N, 1)), 2048)
    sum_rows_kernel[(out.numel(),)](x2, out, N, BLOCK_N=BLOCK_N, num_warps=4 if BLOCK_N <= 1024 else 8)
    return out


def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, _normalize_dims(dim, self.dim()), keepdim, dtype)


def sum(self, *, dtype=None):
    return _sum(self, list(range(self.dim())), False, dtype)


def sum_IntList_out(self, dim, keepdim=False, *, dtype=None, out):
    result = sum_dim_IntList(self, dim, keepdim, dtype=dtype)
    out.copy_(result)
    return out


def sum_out(self, *, dtype=None, out):
    result = sum(self, dtype=dtype)
    out.copy_(result)
    return out


# named dims
def sum_dim_DimnameList(self, dim, keepdim=False, *, dtype=None):
    return sum_dim_IntList(self, [self.names.index(d) for d in dim], keepdim, dtype=dtype)


def sum_DimnameList_out(self, dim, keepdim=False, *, dtype=None, out):
    out.copy_(sum_dim_DimnameList(self, dim, keepdim, dtype=dtype))
    return out


# Python lists
def sum_int(self):
    total = 0
    for v in self:
        total += v
    return total


sum_float = sum_complex = sum_int


def sum_bool(self):
    return sum_int([int(v) for v in self])
