# Wrappers that move data with torch on the host before or after their kernels, as
# LLM-written KernelGenBench modules do: kgb replays each copy and fill as a launch of
# its own kernels (worker/pyrec/kgb_steps.py). The last four compute on the host or
# launch nothing of their own and must still be refused. tests/pycand/check_steps.py
# records each wrapper and replays its plan.
import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.jit
def rowsum_atomic_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    # each program adds one block of a row's columns into the row's (zeroed) sum
    row = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(x, axis=0))


def _relu(x, out):
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)


def relu_contiguous(self):
    # a transposed input copied contiguously; the kernel gets views of the copy
    x = self.contiguous()
    out = torch.empty_like(x)
    _relu(x.view(-1), out.view(-1))
    return out


def relu_reshape(self):
    # reshape(-1) of a transposed input copies; the result is a view of the copy
    x = self.reshape(-1)
    out = torch.empty_like(x)
    _relu(x, out)
    return out.view(self.shape)


def _relu_out(x, *, out):
    # an out= variant: the result is computed contiguously and copied into out
    tmp = torch.empty(out.shape, dtype=out.dtype, device=out.device)
    _relu(x.contiguous(), tmp)
    out.copy_(tmp)
    return out


def relu_out(self):
    # the output keeps the input's (column-major) layout: the copy_ writes strided
    out = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device)
    return _relu_out(self, out=out)


def relu_sliced(self):
    # a slice that starts one element into the input: the copy reads from an offset
    x = self[:, 1:].contiguous()
    out = torch.empty_like(x)
    _relu(x, out)
    return out


def relu_chain(self):
    # a clone keeps the transposed layout, the contiguous copy of it is a second copy
    x = self.clone().contiguous()
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    _relu(x, out)
    return out


def relu_permuted(self):
    # four dimensions, none of which merge: the copy walks every one
    x = self.permute(3, 1, 0, 2).contiguous()
    out = torch.empty_like(x)
    _relu(x, out)
    return out


def add_expand(self, other):
    # other broadcast over self's rows (stride 0), made contiguous on the host
    b = other.expand_as(self).contiguous()
    out = torch.empty_like(self)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 256),)](self, b, out, n, BLOCK=256)
    return out


def rowsum_zeros(self):
    # atomic accumulation into torch.zeros: the zeroing is part of the wrapper's work
    rows, cols = self.shape
    out = torch.zeros((rows,), dtype=self.dtype, device=self.device)
    rowsum_atomic_kernel[(rows, triton.cdiv(cols, 16))](self, out, cols, BLOCK=16)
    return out


def rowsum_fill(self):
    # the same through an empty buffer filled by the wrapper, and a constant full
    rows, cols = self.shape
    out = torch.empty((rows,), dtype=self.dtype, device=self.device)
    out.fill_(0.0)
    bias = torch.full((rows,), 0.5, dtype=self.dtype, device=self.device)
    rowsum_atomic_kernel[(rows, triton.cdiv(cols, 16))](self, out, cols, BLOCK=16)
    n = rows
    add_kernel[(triton.cdiv(n, 256),)](out, bias, out, n, BLOCK=256)
    return out


def relu_float(self):
    # an f16 input converted to f32 on the host: a cast computes
    x = self.float()
    out = torch.empty_like(x)
    _relu(x.view(-1), out.view(-1))
    return out.half()


def relu_plus_one(self):
    x = (self + 1).contiguous()
    out = torch.empty_like(x)
    _relu(x.view(-1), out.view(-1))
    return out


def relu_torch_sum(self):
    # a reduction by torch on the host
    total = torch.sum(self)
    out = torch.empty_like(self)
    _relu(self.view(-1), out.view(-1))
    return out, total


def relu_copy_only(self):
    # only kgb's copy would run: no kernel of the module's own
    return self.clone()
