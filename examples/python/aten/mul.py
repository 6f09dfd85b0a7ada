import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def mul_kernel(x_ptr, y_ptr, output_ptr, n_elements, COMPUTE_FLOAT: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    if COMPUTE_FLOAT:
        out = x.to(tl.float32) * y.to(tl.float32)
    else:
        out = x.to(tl.int64) * y.to(tl.int64)
    tl.store(output_ptr + offsets, out.to(output_ptr.dtype.element_ty), mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def mul_scalar_kernel(x_ptr, output_ptr, scalar, n_elements, COMPUTE_FLOAT: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    if COMPUTE_FLOAT:
        out = x.to(tl.float32) * scalar
    else:
        out = x.to(tl.int64) * scalar
    tl.store(output_ptr + offsets, out.to(output_ptr.dtype.element_ty), mask=mask)


def mul_Tensor(self, other):
    out_dtype = torch.result_type(self, other)
    if self.shape != other.shape:
        self, other = torch.broadcast_tensors(self, other)
    x = self.contiguous()
    y = other.contiguous()
    output = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    mul_kernel[grid](x, y, output, n_elements, COMPUTE_FLOAT=out_dtype.is_floating_point)
    return output


def mul_Scalar(self, other):
    out_dtype = torch.result_type(self, other)
    x = self.contiguous()
    output = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    n_elements = output.numel()
    is_float = out_dtype.is_floating_point
    scalar = float(other) if is_float else int(other)
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    mul_scalar_kernel[grid](x, output, scalar, n_elements, COMPUTE_FLOAT=is_float)
    return output


def mul_out(self, other, *, out):
    result = mul_Tensor(self, other)
    out.copy_(result)
    return out


def mul_Scalar_out(self, other, *, out):
    result = mul_Scalar(self, other)
    out.copy_(result)
    return out


def mul(a, b):
    return a * b


def mul_int(a, b):
    return a * b


mul_float = mul_complex = mul_int_complex = mul_complex_int = mul_int
mul_float_complex = mul_complex_float = mul_int_float = mul_float_int = mul_int


def mul_left_t(l, n):
    return list(l) * n


def mul_right_(n, l):
    return n * list(l)
