"""Every ATen operator of kgb's catalog: does the PyTorch provider's mapping give the
overload call a KernelGenBench wrapper is made with (torch_aten.overload_call), for the
first case (or every case with --all)? Prints one line per operator that cannot be
mapped, or whose arguments are not the case's inputs (a tensor computed on the host,
a Computed result), and a summary. Needs libkgb (KGB_LIBRARY) and torch.
    python3 tests/pycand/check_mapping.py [--all] [--dispatch]
--dispatch also compares each call with what torch's dispatcher hands a
TorchDispatchMode for the same call (operators that are not decomposed before it)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402
import kgb  # noqa: E402
from kgb.providers import torch_aten  # noqa: E402


def fake_inputs(case):
    out = {}
    for t in case.tensors:
        if t.role in ("in", "inout"):
            base = torch.zeros(max(t.storage, 1), dtype=kgb.torch_dtype(t.dtype))
            out[t.name] = torch.as_strided(base, t.shape, t.stride, t.storage_offset)
    return out


def tensors_of(v):
    if isinstance(v, torch.Tensor):
        yield v
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from tensors_of(x)


def problems(case, inputs, args, kwargs):
    bad = []
    stores = {x.untyped_storage().data_ptr() for x in inputs.values()}
    for i, v in list(enumerate(args)) + list(kwargs.items()):
        for x in [v] + (list(v) if isinstance(v, (list, tuple)) else []):
            if isinstance(x, torch_aten.Computed):
                bad.append("argument %s is %r" % (i, x))
        for t in tensors_of(v):
            if t.untyped_storage().data_ptr() not in stores:
                bad.append("argument %s is a tensor computed on the host (%s %s)" % (i, t.dtype, list(t.shape)))
    return bad


def dispatched(ovl, args, kwargs):
    """What torch's dispatcher hands a TorchDispatchMode when ovl is called with args
    and kwargs: (args, kwargs), or None when the overload is decomposed before it."""
    from torch.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), k=None):
            if func is ovl and not seen:
                seen.append((list(a), dict(k or {})))
            return func(*a, **(k or {}))
    with Mode():
        ovl(*args, **kwargs)
    return seen[0] if seen else None


def main():
    every = "--all" in sys.argv
    dispatch = "--dispatch" in sys.argv
    ops = [o for o in kgb.operators() if o.source == "aten"]
    nfail = ncases = ncmp = ndiff = 0
    for op in ops:
        n = op.cases if every else min(1, op.cases)
        for i in range(n):
            ncases += 1
            case = kgb.Case(op, i)
            try:
                inputs = fake_inputs(case)
                ovl, args, kwargs = torch_aten.overload_call(case, inputs, device="cpu")
            except Exception as e:  # noqa: BLE001
                print("%s #%d: cannot be mapped: %s: %s" % (op.name, i, type(e).__name__, e))
                nfail += 1
                continue
            bad = problems(case, inputs, args, kwargs)
            if bad:
                print("%s #%d (%s): %s" % (op.name, i, ovl, "; ".join(bad)))
                nfail += 1
                continue
            if dispatch:
                try:
                    d = dispatched(ovl, args, kwargs)
                except Exception as e:  # noqa: BLE001
                    d = None
                    print("%s #%d: the overload itself fails on zeros: %s" % (op.name, i, str(e).splitlines()[0]))
                if d is not None:
                    ncmp += 1
                    if not (torch_aten._same(d[0], list(args)) and d[1].keys() == kwargs.keys() and
                            all(torch_aten._same(d[1][k], kwargs[k]) for k in kwargs)):
                        ndiff += 1
                        print("%s #%d: the dispatcher passes %r %r, overload_call %r %r" % (
                            op.name, i, d[0], d[1], args, kwargs))
            if not every:
                print("%s #%d: %s(%s)" % (op.name, i, ovl, ", ".join(
                    ["T" if isinstance(a, torch.Tensor) else repr(a) for a in args] +
                    ["%s=%r" % kv for kv in kwargs.items()])))
    if dispatch:
        print("%d call(s) compared with the dispatcher's, %d differ" % (ncmp, ndiff))
    print("%d operator(s), %d case(s), %d not mappable to the wrapper's arguments" % (len(ops), ncases, nfail))
    return 0


if __name__ == "__main__":
    sys.exit(main())
