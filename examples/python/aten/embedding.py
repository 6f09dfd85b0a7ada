import torch
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(weight_ptr, indices_ptr, out_ptr, n_indices, D, stride_w,
                     BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # a tile of BLOCK_N looked-up rows x BLOCK_D columns: out[r, :] = weight[indices[r], :]
    pid_n = tl.program_id(0)
    pid_d = tl.program_id(1)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    row_mask = rows < n_indices
    idx = tl.load(indices_ptr + rows, mask=row_mask, other=0).to(tl.int64)
    mask = row_mask[:, None] & (cols[None, :] < D)
    vals = tl.load(weight_ptr + idx[:, None] * stride_w + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None].to(tl.int64) * D + cols[None, :], vals, mask=mask)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # padding_idx only matters for the backward pass
    assert weight.dim() == 2, "weight must be 2-D"
    weight = weight.contiguous()
    idx = indices.contiguous().reshape(-1)
    n, D = idx.numel(), weight.shape[1]
    out = torch.empty((*indices.shape, D), dtype=weight.dtype, device=weight.device)
    if n == 0 or D == 0:
        return out
    BLOCK_D = min(triton.next_power_of_2(D), 256)
    BLOCK_N = max(1, 4096 // BLOCK_D)
    grid = (triton.cdiv(n, BLOCK_N), triton.cdiv(D, BLOCK_D))
    embedding_kernel[grid](weight, idx, out, n, D, weight.stride(0), BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
                           num_warps=4)
    return out


def embedding_out(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False, *, out):
    out.copy_(embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse))
    return out
