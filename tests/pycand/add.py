# KernelGenBench-format candidate for aten::add (add.Tensor): correct for tensors of up
# to five dimensions, any strides, `other` broadcast against `self`. Like a module
# written for KernelGenBench it also defines functions for overloads kgb's add cases do
# not call: `add` (aten.add.default, two Python numbers), `add_out`; a case of add
# calls add.Tensor and must reach add_Tensor, never those.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, d1, d2, d3, d4,
               xs0, xs1, xs2, xs3, xs4, ys0, ys1, ys2, ys3, ys4, os0, os1, os2, os3, os4,
               BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i4 = offs % d4
    r = offs // d4
    i3 = r % d3
    r = r // d3
    i2 = r % d2
    r = r // d2
    i1 = r % d1
    i0 = r // d1
    x = tl.load(x_ptr + i0 * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3 + i4 * xs4, mask=mask)
    y = tl.load(y_ptr + i0 * ys0 + i1 * ys1 + i2 * ys2 + i3 * ys3 + i4 * ys4, mask=mask)
    if x.dtype.is_floating():
        # f16 and bf16 in fp32, as torch computes them
        x = x.to(tl.float32)
        y = y.to(tl.float32)
    r = x + alpha * y
    tl.store(out_ptr + i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3 + i4 * os4,
             r.to(out_ptr.dtype.element_ty), mask=mask)


def _dims5(t):
    """Shape and strides padded on the left to five dimensions."""
    pad = 5 - t.dim()
    return [1] * pad + list(t.shape), [0] * pad + list(t.stride())


def _add_into(out, self, other, alpha):
    if self.dim() > 5:
        raise NotImplementedError("add_Tensor: more than five dimensions")
    other = other.expand(self.shape)            # a view: broadcasting without a copy
    n = out.numel()
    shape, xs = _dims5(self)
    _, ys = _dims5(other)
    _, os_ = _dims5(out)
    a = float(alpha) if self.is_floating_point() else int(alpha)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](self, other, out, a, n, *shape[1:], *xs, *ys, *os_, BLOCK=1024)
    return out


def add(a, b):
    """aten.add.default: add(Scalar a, Scalar b) -> Scalar, two Python numbers."""
    return a + b


def add_Tensor(self, other, *, alpha=1):
    # a row-major result whatever self's layout (kgb's output, as torch's for these cases)
    return _add_into(torch.empty(self.shape, dtype=self.dtype, device=self.device), self, other, alpha)


def add_out(self, other, *, alpha=1, out):
    return _add_into(out, self, other, alpha)
