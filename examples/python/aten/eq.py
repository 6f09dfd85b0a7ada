import torch
import triton
import triton.language as tl


@triton.jit
def eq_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    # compare in fp32 when either side is floating point
    if a.dtype.is_floating() or b.dtype.is_floating():
        res = a.to(tl.float32) == b.to(tl.float32)
    else:
        res = a == b
    tl.store(out_ptr + offs, res, mask=mask)


@triton.jit
def eq_scalar_kernel(a_ptr, out_ptr, value, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a.to(tl.float32) == value, mask=mask)


def eq_Tensor(self, other):
    a, b = torch.broadcast_tensors(self, other)
    a = a.contiguous()
    b = b.contiguous()
    out = torch.empty(a.shape, dtype=torch.bool, device=a.device)
    n = out.numel()
    BLOCK_SIZE = 512
    eq_kernel[(triton.cdiv(n, BLOCK_SIZE),)](a, b, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


def eq_Scalar(self, other):
    a = self.contiguous()
    out = torch.empty(a.shape, dtype=torch.bool, device=a.device)
    n = out.numel()
    BLOCK_SIZE = 512
    eq_scalar_kernel[(triton.cdiv(n, BLOCK_SIZE),)](a, out, float(other), n, BLOCK_SIZE=BLOCK_SIZE)
    return out


def eq_Tensor_out(self, other, *, out):
    out.copy_(eq_Tensor(self, other))
    return out


def eq_Scalar_out(self, other, *, out):
    out.copy_(eq_Scalar(self, other))
    return out


def eq(a, b):
    return a == b


def eq_int(a, b):
    return a == b


eq_float = eq_int_float = eq_float_int = eq_float_complex = eq_complex_float = eq_int
eq_complex = eq_bool = eq_str = eq_device = eq_enum = eq_int


def eq_int_list(a, b):
    return list(a) == list(b)


eq_float_list = eq_bool_list = eq_str_list = eq_int_list


def eq_Tensor_list(a, b):
    # lists of tensors are equal when they have the same length and every pair is equal
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or not bool(eq_Tensor(x, y).all()):
            return False
    return True
