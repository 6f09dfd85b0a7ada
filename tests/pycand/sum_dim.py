# KernelGenBench-format candidate for aten::sum.dim_IntList: correct for any dims,
# keepdim and strides. One program per output element walks the reduced elements of
# its slice through the input's own strides (no copy), accumulating in fp32. Also
# `sum`, aten.sum.default (every element), which kgb's sum cases do not call.
import torch
import triton
import triton.language as tl


@triton.jit
def sum_dims_kernel(x_ptr, out_ptr, K1, K2, K3, ks0, ks1, ks2, ks3, R1, R2, R3, rs0, rs1, rs2, rs3, RN: tl.constexpr,
                    BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i3 = pid % K3
    t = pid // K3
    i2 = t % K2
    t = t // K2
    i1 = t % K1
    i0 = t // K1
    base = i0 * ks0 + i1 * ks1 + i2 * ks2 + i3 * ks3
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, RN, BLOCK):
        r = start + tl.arange(0, BLOCK)
        r3 = r % R3
        q = r // R3
        r2 = q % R2
        q = q // R2
        r1 = q % R1
        r0 = q // R1
        off = base + r0 * rs0 + r1 * rs1 + r2 * rs2 + r3 * rs3
        acc += tl.load(x_ptr + off, mask=r < RN, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def _merge(sizes, strides):
    """Size-1 dims dropped, neighbours that step as one merged; at most 4 dims."""
    ds = [(s, st) for s, st in zip(sizes, strides) if s != 1]
    out = []
    for s, st in ds:
        if out and out[-1][1] == s * st:
            out[-1] = (out[-1][0] * s, st)
        else:
            out.append((s, st))
    if len(out) > 4:
        raise NotImplementedError("more than 4 dims that cannot be merged")
    out = [(1, 0)] * (4 - len(out)) + out
    return [s for s, _ in out], [st for _, st in out]


def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    nd = self.dim()
    dims = list(range(nd)) if dim is None or len(dim) == 0 else sorted({d % max(nd, 1) for d in dim})
    kept = [d for d in range(nd) if d not in dims]
    out_dtype = dtype if dtype is not None else self.dtype
    shape = [1 if d in dims else self.size(d) for d in range(nd)] if keepdim else [self.size(d) for d in kept]
    out = torch.empty(shape, dtype=out_dtype, device=self.device)
    # the kept dims keep their order (the output is row-major over them); merging
    # them is only allowed where the input steps as one
    ks, kst = _merge([self.size(d) for d in kept], [self.stride(d) for d in kept])
    rsz, rst = _merge([self.size(d) for d in dims], [self.stride(d) for d in dims])
    rn = 1
    for d in dims:
        rn *= self.size(d)
    nout = max(1, out.numel())
    block = min(1024, triton.next_power_of_2(max(rn, 1)))
    sum_dims_kernel[(nout,)](self, out, ks[1], ks[2], ks[3], kst[0], kst[1], kst[2], kst[3],
                             rsz[1], rsz[2], rsz[3], rst[0], rst[1], rst[2], rst[3], RN=rn, BLOCK=block)
    return out


def sum(self, *, dtype=None):
    """aten.sum.default: every element. Not what kgb's cases call (sum.dim_IntList)."""
    return sum_dim_IntList(self, list(range(self.dim())), dtype=dtype)
