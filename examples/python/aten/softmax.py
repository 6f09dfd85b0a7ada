import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx.to(tl.int64) * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    out_row_ptr = output_ptr + row_idx.to(tl.int64) * output_row_stride
    tl.store(out_row_ptr + col_offsets, softmax_output.to(output_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel_looped(output_ptr, input_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    # rows too long for one block: online max/sum, then a second pass
    row = tl.program_id(0).to(tl.int64)
    in_row = input_ptr + row * n_cols
    out_row = output_ptr + row * n_cols
    m = tl.full([BLOCK_SIZE], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK_SIZE], tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        new_m = tl.maximum(m, x)
        s = s * tl.where(new_m == -float("inf"), 0.0, tl.exp(m - new_m)) + \
            tl.where(x == -float("inf"), 0.0, tl.exp(x - new_m))
        m = new_m
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - row_max)), axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(out_row + cols, (tl.exp(x - row_max) / total).to(output_ptr.dtype.element_ty), mask=cols < n_cols)


MAX_FUSED = 8192


def _softmax_lastdim(x2d, out_dtype):
    n_rows, n_cols = x2d.shape
    y = torch.empty((n_rows, n_cols), dtype=out_dtype, device=x2d.device)
    if y.numel() == 0:
        return y
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    if BLOCK_SIZE <= MAX_FUSED:
        num_warps = 4
        if BLOCK_SIZE >= 2048:
            num_warps = 8
        if BLOCK_SIZE >= 4096:
            num_warps = 16
        softmax_kernel[(n_rows,)](y, x2d, x2d.stride(0), y.stride(0), n_cols,
                                  BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    else:
        softmax_kernel_looped[(n_rows,)](y, x2d, n_cols, BLOCK_SIZE=2048, num_warps=8)
    return y


def softmax_int(self, dim, dtype=None):
    out_dtype = dtype if dtype is not None else self.dtype
    if self.dim() == 0:
        y = _softmax_lastdim(self.reshape(1, 1), out_dtype)
        return y.reshape(())
    dim = dim % self.dim()
    # bring dim last, softmax over rows, and put it back
    x = self.transpose(dim, -1).contiguous()
    shape = x.shape
    y = _softmax_lastdim(x.reshape(-1, shape[-1]), out_dtype)
    y = y.reshape(shape).transpose(dim, -1).contiguous()
    return y


def softmax_int_out(self, dim, dtype=None, *, out):
    out.copy_(softmax_int(self, dim, dtype))
    return out


def softmax_Dimname(self, dim, *, dtype=None):
    return softmax_int(self, self.names.index(dim), dtype)
