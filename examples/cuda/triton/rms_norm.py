# vllm rms_norm for Triton: one program per token, float32 accumulation.
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, out_ptr, eps, hidden, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * hidden
    o_row = out_ptr + row * hidden
    acc = tl.zeros([BLOCK], tl.float32)
    for j in range(0, hidden, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        v = tl.load(x_row + offs, mask=offs < hidden, other=0.0).to(tl.float32)
        acc += v * v
    r = 1.0 / tl.sqrt(tl.sum(acc, 0) / hidden + eps)
    for j in range(0, hidden, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        msk = offs < hidden
        v = tl.load(x_row + offs, mask=msk, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=msk, other=0.0).to(tl.float32)
        tl.store(o_row + offs, (v * r * w).to(out_ptr.dtype.element_ty), mask=msk)
