import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, L, inner, IS_INT: tl.constexpr, BLOCK: tl.constexpr):
    # x, y contiguous [outer, L, inner]; scan along L for one (outer, inner) pair
    pid = tl.program_id(0).to(tl.int64)
    outer_idx = pid // inner
    inner_idx = pid % inner
    base = outer_idx * L * inner + inner_idx
    if IS_INT:
        carry = tl.zeros([1], dtype=tl.int64)
    else:
        carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, L, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < L
        if IS_INT:
            v = tl.load(x_ptr + base + offs * inner, mask=mask, other=0).to(tl.int64)
        else:
            v = tl.load(x_ptr + base + offs * inner, mask=mask, other=0.0).to(tl.float32)
        s = tl.cumsum(v, axis=0) + carry
        tl.store(y_ptr + base + offs * inner, s.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(v, axis=0)


def cumsum(self, dim, *, dtype=None):
    if dtype is None:
        # integral inputs (bool, int8 .. int64) accumulate in int64
        dtype = torch.int64 if not (self.is_floating_point() or self.is_complex()) else self.dtype
    x = self.contiguous()
    nd = x.dim()
    d = dim % nd if nd > 0 else 0
    L = x.shape[d] if nd > 0 else 1
    inner = 1
    for s in x.shape[d + 1:]:
        inner *= s
    outer = x.numel() // (L * inner) if L * inner > 0 else 0
    y = torch.empty(x.shape, dtype=dtype, device=x.device)
    if y.numel() == 0:
        return y
    BLOCK = min(1024, triton.next_power_of_2(L))
    cumsum_kernel[(outer * inner,)](x, y, L, inner, IS_INT=not dtype.is_floating_point, BLOCK=BLOCK)
    return y


def cumsum_out(self, dim, *, dtype=None, out):
    out.copy_(cumsum(self, dim, dtype=dtype))
    return out


def cumsum_dimname(self, dim, *, dtype=None):
    return cumsum(self, self.names.index(dim), dtype=dtype)


def cumsum_dimname_out(self, dim, *, dtype=None, out):
    return cumsum_out(self, self.names.index(dim), dtype=dtype, out=out)
