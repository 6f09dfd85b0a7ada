"""kgb's own Triton kernels for the host steps of a Python candidate
(docs/python-candidates.md, "Host steps").

A wrapper's data movement on the host (`x.contiguous()`, `clone()`, a `reshape` that
copies, `out.copy_(tmp)`, `torch.zeros`, `fill_`) is replayed as a launch of one of
these kernels in the candidate's plan, so it runs on kgb's stream inside the timed
region, as the wrapper's own torch calls do in a Python harness. The recorder
(kgb_record.py) writes the launches; the worker compiles this file like any Triton
source of a plan, reading this file from beside the recorder.

Both kernels walk an element index over a strided view of up to 8 dimensions. The
recorder passes the view's sizes and strides (in elements) as scalars, innermost
dimension last and padded at the front with size 1, after merging the dimensions that
both sides can walk as one; NDIM says how many of the inner dimensions are real, so the
others cost nothing. Pointers are of an integer type of the element's width: the copy
is of bits (a NaN's payload and a negative zero survive), and one kernel serves every
dtype. Offsets are in elements from the start of the buffer (a plan passes whole
buffers). WIDE makes the index arithmetic 64-bit, for a view whose extent does not fit
31 bits.
"""

import triton
import triton.language as tl


@triton.jit
def _kgb_dim(rem, size, dst_st, src_st, d, s):
    """One dimension of the walk: its index, taken off the rest, added to both offsets."""
    k = rem % size
    return rem // size, d + k * dst_st, s + k * src_st


@triton.jit
def _kgb_block(n, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    """The element indices of this program's block (64-bit with WIDE), and which are < n."""
    pid = tl.program_id(0)
    if WIDE:
        pid = pid.to(tl.int64)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    return i, i < n


@triton.jit
def _kgb_offsets(i, dst_off, src_off,
                 size0, size1, size2, size3, size4, size5, size6, size7,
                 dst_st0, dst_st1, dst_st2, dst_st3, dst_st4, dst_st5, dst_st6, dst_st7,
                 src_st0, src_st1, src_st2, src_st3, src_st4, src_st5, src_st6, src_st7,
                 NDIM: tl.constexpr):
    """The offsets of the views' element i (row-major over the sizes, the last dim
    fastest) in dst and src."""
    rem = i
    d = i * 0 + dst_off
    s = i * 0 + src_off
    if NDIM > 0:
        rem, d, s = _kgb_dim(rem, size7, dst_st7, src_st7, d, s)
    if NDIM > 1:
        rem, d, s = _kgb_dim(rem, size6, dst_st6, src_st6, d, s)
    if NDIM > 2:
        rem, d, s = _kgb_dim(rem, size5, dst_st5, src_st5, d, s)
    if NDIM > 3:
        rem, d, s = _kgb_dim(rem, size4, dst_st4, src_st4, d, s)
    if NDIM > 4:
        rem, d, s = _kgb_dim(rem, size3, dst_st3, src_st3, d, s)
    if NDIM > 5:
        rem, d, s = _kgb_dim(rem, size2, dst_st2, src_st2, d, s)
    if NDIM > 6:
        rem, d, s = _kgb_dim(rem, size1, dst_st1, src_st1, d, s)
    if NDIM > 7:
        rem, d, s = _kgb_dim(rem, size0, dst_st0, src_st0, d, s)
    return d, s


@triton.jit
def kgb_copy(dst, src, n, dst_off, src_off,
             size0, size1, size2, size3, size4, size5, size6, size7,
             dst_st0, dst_st1, dst_st2, dst_st3, dst_st4, dst_st5, dst_st6, dst_st7,
             src_st0, src_st1, src_st2, src_st3, src_st4, src_st5, src_st6, src_st7,
             NDIM: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    """dst[dst view] = src[src view], element by element in the views' common order."""
    i, mask = _kgb_block(n, WIDE, BLOCK)
    d, s = _kgb_offsets(i, dst_off, src_off,
                        size0, size1, size2, size3, size4, size5, size6, size7,
                        dst_st0, dst_st1, dst_st2, dst_st3, dst_st4, dst_st5, dst_st6, dst_st7,
                        src_st0, src_st1, src_st2, src_st3, src_st4, src_st5, src_st6, src_st7, NDIM)
    v = tl.load(src + s, mask=mask)
    tl.store(dst + d, v, mask=mask)


@triton.jit
def kgb_fill(dst, value, n, dst_off,
             size0, size1, size2, size3, size4, size5, size6, size7,
             dst_st0, dst_st1, dst_st2, dst_st3, dst_st4, dst_st5, dst_st6, dst_st7,
             NDIM: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    """dst[dst view] = value, the bits of one element as an integer of that width."""
    i, mask = _kgb_block(n, WIDE, BLOCK)
    d, _ = _kgb_offsets(i, dst_off, 0,
                        size0, size1, size2, size3, size4, size5, size6, size7,
                        dst_st0, dst_st1, dst_st2, dst_st3, dst_st4, dst_st5, dst_st6, dst_st7,
                        0, 0, 0, 0, 0, 0, 0, 0, NDIM)
    v = tl.zeros([BLOCK], dtype=dst.dtype.element_ty) + value.to(dst.dtype.element_ty)
    tl.store(dst + d, v, mask=mask)
