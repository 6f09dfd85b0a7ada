# aten softmax over the last dim for Triton: one program per row, three passes over
# the row in BLOCK-wide chunks (max, sum of exp, write), float32 accumulation.
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * cols
    o_row = out_ptr + row * cols
    mx = tl.full([BLOCK], float("-inf"), tl.float32)
    for j in range(0, cols, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        v = tl.load(x_row + offs, mask=offs < cols, other=float("-inf")).to(tl.float32)
        mx = tl.maximum(mx, v)
    m = tl.max(mx, 0)
    acc = tl.zeros([BLOCK], tl.float32)
    for j in range(0, cols, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        v = tl.load(x_row + offs, mask=offs < cols, other=float("-inf")).to(tl.float32)
        acc += tl.exp(v - m)
    inv = 1.0 / tl.sum(acc, 0)
    for j in range(0, cols, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        msk = offs < cols
        v = tl.load(x_row + offs, mask=msk, other=0.0).to(tl.float32)
        tl.store(o_row + offs, (tl.exp(v - m) * inv).to(out_ptr.dtype.element_ty), mask=msk)
