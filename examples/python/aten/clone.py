import torch
import triton
import triton.language as tl


@triton.jit
def clone_kernel(src_ptr, dst_ptr, numel,
                 size1, size2, size3, size4,
                 stride0, stride1, stride2, stride3, stride4,
                 BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < numel
    # unravel the contiguous destination index into 5-d coordinates
    rem = offsets
    i4 = rem % size4
    rem = rem // size4
    i3 = rem % size3
    rem = rem // size3
    i2 = rem % size2
    rem = rem // size2
    i1 = rem % size1
    i0 = rem // size1
    src = i0 * stride0 + i1 * stride1 + i2 * stride2 + i3 * stride3 + i4 * stride4
    vals = tl.load(src_ptr + src, mask=mask)
    tl.store(dst_ptr + offsets, vals, mask=mask)


def _strided_copy(src, dst):
    numel = src.numel()
    if numel == 0:
        return dst
    nd = src.dim()
    if nd > 5:
        raise NotImplementedError("clone: tensors of more than 5 dims")
    sizes = [1] * (5 - nd) + list(src.shape)
    strides = [0] * (5 - nd) + list(src.stride())
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(numel, BLOCK_SIZE),)
    clone_kernel[grid](src, dst, numel, sizes[1], sizes[2], sizes[3], sizes[4], *strides,
                       BLOCK_SIZE=BLOCK_SIZE)
    return dst


def clone(self, *, memory_format=None):
    # the result is always contiguous (torch.contiguous_format)
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    return _strided_copy(self, out)


def clone_out(self, *, memory_format=None, out):
    if out.is_contiguous() and out.shape == self.shape and out.dtype == self.dtype:
        return _strided_copy(self, out)
    out.copy_(clone(self))
    return out
