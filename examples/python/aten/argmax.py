import torch
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, out_ptr, R, BLOCK_R: tl.constexpr):
    # first index of the maximum of row pid of a contiguous [rows, R] matrix
    pid = tl.program_id(0)
    base = x_ptr + pid.to(tl.int64) * R
    best_val = -float("inf")
    best_idx = 0
    for start in range(0, R, BLOCK_R):
        offs = start + tl.arange(0, BLOCK_R)
        vals = tl.load(base + offs, mask=offs < R, other=-float("inf")).to(tl.float32)
        blk_max = tl.max(vals, axis=0)
        blk_idx = tl.argmax(vals, axis=0)
        take = blk_max > best_val
        best_idx = tl.where(take, start + blk_idx, best_idx)
        best_val = tl.where(take, blk_max, best_val)
    tl.store(out_ptr + pid, best_idx.to(tl.int64))


def argmax(self, dim=None, keepdim=False):
    if dim is None:
        x = self.contiguous().reshape(1, -1)
        out_shape = [1] * self.dim() if keepdim else []
    else:
        nd = self.dim()
        d = dim % nd if nd else 0
        if nd == 0:
            x = self.reshape(1, 1)
            out_shape = []
        else:
            x = self.movedim(d, -1).contiguous()
            x = x.reshape(-1, self.shape[d])
            out_shape = list(self.shape)
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    rows, R = x.shape
    out = torch.empty(out_shape, dtype=torch.int64, device=self.device)
    BLOCK_R = min(triton.next_power_of_2(R), 1024)
    argmax_kernel[(rows,)](x, out, R, BLOCK_R=BLOCK_R)
    return out


def argmax_out(self, dim=None, keepdim=False, *, out):
    res = argmax(self, dim, keepdim)
    out.copy_(res)
    return out
