#!/usr/bin/env python3
"""kgb's recorder for Python + Triton candidates (docs/python-candidates.md).

The worker runs this in a sandboxed child, once per case. It reads one JSON request
(argv[1], or stdin when argv[1] is "-"), imports the candidate module, builds the
case's inputs with kgb's exact sizes, strides, dtypes and storage offsets, calls the
wrapper once and records what the wrapper launches. It never measures anything.

Request:
    {"module": "add.py",                       # path of the candidate's module text
     "function": "add_Tensor" | null,          # the wrapper to call; null with an ATen
                                               # "case": the recorder names it after the
                                               # overload the case calls (wrapper_for)
     "args": [{"name": "self", "tensor": {"shape": [4], "stride": [1],
                                          "dtype": "float32", "offset": 0}},
              {"name": "alpha", "value": 1, "keyword": true}],
     "outputs": [{"name": "out", "shape": [4], "stride": [1], "dtype": "float32"}],
     "case": {"op": "add", "params": {...}, "scalars": [...], "symbols": {...},
              "tensors": [...]} | absent,      # an ATen case: the wrapper is called as
                                               # torch calls the overload, with the
                                               # arguments the PyTorch provider's mapping
                                               # gives it (CaseView, overload_arguments)
     "allow_sync": false,                      # the operator itself needs device data
     "save_io": false,                         # also write io.pt (inputs, outputs) for tests
     "compile": {"backend": "cuda", "arch": 90, "warp_size": 32} | null,
     "interpret": null}                        # true: CPU tensors and Triton's interpreter,
                                               # false: the GPU, null: the GPU if there is one

A batch, {"batch": [REQUEST, ...], "interpret": ..., "device_index": N, "timeout_s": 180,
"parallel": 1, "cases_per_child": 1, "device_lock": {"path": LOCK, "trace": FILE} | null,
"compile_memo": DIR | null},
records every request in children forked after torch and Triton are imported, each
recording up to "cases_per_child" requests in turn (the candidate's module imported
afresh for each), into OUTDIR/<i>/, and writes OUTDIR/batch.json with each request's
exit status; a child past timeout_s per request is killed and its unfinished requests
recorded again one per child; at most "parallel" children run at a time. A launch the
Triton helper compiled is kept for the next case with the same request: in the batch,
or with "compile_memo" under DIR/<SHA-256 of the module's text>/ for later batches of
the same module (the newest MEMO_MODULES modules are kept).

Writes into the output directory (argv[2], default "."):
    recording.json   verdict, buffers, launches, output mapping, host torch calls
    plan.json        the recording as a kgb launch plan (only when the verdict is "pass")
    k<N>.cubin, k<N>.abi.json   the compiled binary of launch N (only with "compile")

Exit status: 0 a recording was written (whatever its verdict), 2 a malformed request,
3 torch or Triton is missing.

`kgb_record.py --serve SOCKET device|interpret` (the worker, once per mode at start:
docs/python-candidates.md, "The recorder server") imports torch and Triton once, then
listens on the Unix socket SOCKET. Each connection sends one line of JSON, {"dir": DIR,
"length": N, "as_bytes": N, "cpu_s": N}, and then N bytes: a batch request as above.
The server forks a child for it, which starts a session of its own, takes the limits,
works in DIR (its output in DIR/output.log), answers "pid PID", records the batch into
DIR as `kgb_record.py - DIR` would, and answers "exit STATUS". A batch whose client goes
away is ended with its children. The server ends when its parent (the worker) does, or
when its socket is removed.

`kgb_record.py --probe` (the worker, once at start) prints one line, the Python with
its torch and Triton versions, or what is missing (torch or Triton not importable, the
PyTorch provider not found); exit 0 when this Python can record, 3 when it cannot.
"""

import inspect
import json
import os
import sys
import time

_STARTED = time.monotonic()  # the recorder's start, for the batch's start-up figure
import traceback

# the worker's Triton helper, installed one directory above the recorder
HELPER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "triton_compile.py")
VERDICTS = ("pass", "host_compute", "no_launch", "host_sync", "foreign_pointer",
            "import_error", "plan_error", "unsupported")

# Launch options Triton takes as keyword arguments next to the kernel's own.
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion",
                  "launch_cooperative_grid", "launch_pdl", "warmup", "debug")

ALLOC_OPS = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like",
             "new_empty", "new_zeros", "new_empty_strided"}
ZERO_ALLOC_OPS = {"zeros", "zeros_like", "new_zeros"}
VIEW_OPS = {"view", "view_as", "reshape", "reshape_as", "as_strided", "permute", "transpose",
            "t", "T", "mT", "H", "unsqueeze", "squeeze", "flatten", "unflatten", "expand",
            "expand_as", "narrow", "select", "__getitem__", "contiguous", "movedim",
            "split", "chunk", "unbind", "detach", "diagonal", "swapaxes", "to", "cuda",
            "type_as", "alias"}
META_OPS = {"size", "stride", "numel", "dim", "ndimension", "nelement", "element_size",
            "storage_offset", "is_contiguous", "data_ptr", "dtype", "device", "shape",
            "ndim", "is_cuda", "layout", "requires_grad", "__len__", "get_device",
            "is_floating_point", "is_complex", "is_signed", "itemsize", "nbytes",
            "untyped_storage", "is_leaf", "grad_fn", "names", "is_sparse", "is_quantized",
            "is_meta", "_base", "__hash__", "dim_order"}
# dtype promotion and broadcasting: answered from dtypes and shapes alone (a wrapper
# picks its result's dtype and shape with them); broadcast_tensors gives views
META_OPS |= {"result_type", "promote_types", "can_cast", "broadcast_shapes"}
VIEW_OPS |= {"broadcast_tensors", "broadcast_to"}
# Data movement the wrapper may do on the host: replayed as kgb's own launches
# (kgb_steps.py) in the plan, "Host steps" in docs/python-candidates.md.
FILL_ALLOC_OPS = {"full", "full_like", "new_full", "ones", "ones_like", "new_ones"}
# calls whose result may be a copy of their first argument: a reshape lays the copy out
# contiguously in the source's shape and then views it; the others keep the shape
COPY_OPS = {"contiguous", "clone", "reshape", "reshape_as", "flatten", "to", "type_as", "type",
            "cuda", "float", "double", "half", "bfloat16", "int", "long", "short", "char", "byte",
            "bool"}
RESHAPE_OPS = {"reshape", "reshape_as", "flatten"}
FILL_OPS = {"zero_", "fill_"}
STEPS_SOURCE = "kgb_steps.py"
STEP_BLOCK = 1024
STEP_MAX_DIMS = 8
INT_OF_WIDTH = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}
SYNC_OPS = {"item", "cpu", "tolist", "numpy", "__bool__", "__int__", "__float__",
            "__index__", "nonzero", "unique", "masked_select", "__repr__", "__str__",
            "__format__", "argwhere", "unique_consecutive", "bincount"}

# kgb's dtype names (common/dtype.c) as torch spells them; torch names pass through.
KGB_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
              "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
              "bool": "bool", "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}

DTYPE_CODES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
               "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
               "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


class Refusal(Exception):
    def __init__(self, verdict, message):
        Exception.__init__(self, message)
        self.verdict = verdict
        self.message = message


class RequestError(Exception):
    pass


def short_name(func):
    import torch
    try:
        name = torch.overrides.resolve_name(func) or ""
    except Exception:  # noqa: BLE001
        name = ""
    if not name:
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    full = name
    parts = name.split(".")
    if parts[-1] in ("__get__", "__set__") and len(parts) > 1:
        parts = parts[:-1]
    return parts[-1], full


_TORCH_ATEN = []


def torch_aten():
    """The PyTorch provider's module (python/kgb/providers/torch_aten.py), loaded from
    next to the recorder or from the source tree, with kgb's dtype names resolved here
    (the sandbox has no libkgb)."""
    if _TORCH_ATEN:
        return _TORCH_ATEN[0]
    import importlib.util
    import torch
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(here, "torch_aten.py"),
              os.path.join(here, "..", "..", "python", "kgb", "providers", "torch_aten.py")):
        if os.path.isfile(p):
            spec = importlib.util.spec_from_file_location("kgb_torch_aten", p)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            mod._torch_dtype = lambda name: getattr(torch, KGB_DTYPES.get(name, name))
            _TORCH_ATEN.append(mod)
            return mod
    raise RequestError("case: the PyTorch provider (torch_aten.py) is neither next to the recorder "
                       "nor in the source tree")


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class CaseView:
    """The request's "case" as the provider's mapping reads a kgb.Case: op.name,
    params (strings or None), scalars (floats) and scalar_dtypes, symbols (integral
    numbers as ints), tensors (name, role, dtype, shape, stride) and tensor(name)."""

    def __init__(self, c):
        self.op = _Obj(name=c["op"])
        self.params = {str(k): (None if v is None else str(v)) for k, v in (c.get("params") or {}).items()}
        self.scalars, self.scalar_dtypes = {}, {}
        for s in c.get("scalars") or []:
            self.scalars[s["name"]] = float(s["value"])
            self.scalar_dtypes[s["name"]] = s["dtype"]
        self.symbols = {}
        for k, v in (c.get("symbols") or {}).items():
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            self.symbols[k] = v
        self.tensors = [_Obj(name=t["name"], role=t["role"], dtype=t["dtype"], shape=tuple(int(x) for x in t["shape"]),
                             stride=tuple(int(x) for x in t["stride"]), storage_offset=int(t.get("offset", 0)))
                        for t in c.get("tensors") or []]

    def tensor(self, name):
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError("the case has no tensor %r" % name)


def case_of(c):
    try:
        if not isinstance(c, dict) or not isinstance(c.get("op"), str):
            raise ValueError("expected an object with an \"op\" string")
        return CaseView(c)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise RequestError("case: %s" % e)


# The recorder of the case being recorded, and whether Triton's entry points are patched
# (Recorder.install_hooks)
_ACTIVE = [None, False]


class Recorder:
    def __init__(self, req):
        import torch
        self.torch = torch
        self.req = req
        self.buffers = []        # dicts; "storage": (base, nbytes) kept out of the JSON
        self.launches = []
        self.host_calls = []
        self.inside_launch = 0
        self.pending_autotune = None
        self.device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
        self.refusal = None
        self.overload = None     # the ATen overload the case calls ("aten.add.Tensor")
        self._overload = None
        self.function = req.get("function")   # the wrapper called (wrapper_for)

    # ---- buffers -------------------------------------------------------------
    def add_buffer(self, t, role, name=None, op=None, zero=False):
        st = t.untyped_storage()
        base, nbytes = st.data_ptr(), st.nbytes()
        for b in self.buffers:
            if b["_base"] == base:
                return b
        b = {"id": len(self.buffers), "role": role, "bytes": nbytes, "_base": base,
             "dtype": str(t.dtype).replace("torch.", "")}
        if name:
            b["name"] = name
        if op:
            b["op"] = op
        if role == "allocation":
            b["zero"] = zero
            b["shape"] = list(t.shape)
            b["stride"] = list(t.stride())
        self.buffers.append(b)
        return b

    def find(self, ptr, nbytes=1):
        """The buffer holding [ptr, ptr + nbytes) and the offset into it. Ranges are
        half-open: on a device the caching allocator places buffers back to back, so
        the address one past a buffer's end is the start of the next one, not a
        pointer into the first. A buffer that starts at ptr wins."""
        hit = None
        for b in self.buffers:
            base, end = b["_base"], b["_base"] + b["bytes"]
            if not (base <= ptr < end or ptr == base == end):
                continue
            if ptr + max(nbytes, 0) > end:
                continue
            if ptr == base:
                return b, 0
            hit = hit or (b, ptr - base)
        return hit if hit else (None, 0)

    def known_storage(self, t):
        return self.find(t.untyped_storage().data_ptr(), 0)[0] is not None

    # ---- inputs --------------------------------------------------------------
    def make_inputs(self):
        torch = self.torch
        args, kwargs, self.inputs = [], {}, {}
        for i, a in enumerate(self.req.get("args") or []):
            if not isinstance(a, dict) or not isinstance(a.get("name"), str):
                raise RequestError("args[%d]: expected an object with a \"name\"" % i)
            if "tensor" in a:
                m = a["tensor"]
                try:
                    dtype = getattr(torch, KGB_DTYPES.get(m["dtype"], m["dtype"]))
                    shape, stride = [int(x) for x in m["shape"]], [int(x) for x in m["stride"]]
                    offset = int(m.get("offset", 0))
                except (KeyError, AttributeError, TypeError, ValueError) as e:
                    raise RequestError("args[%d].tensor: %s" % (i, e))
                if len(shape) != len(stride):
                    raise RequestError("args[%d].tensor: %d sizes but %d strides" % (i, len(shape), len(stride)))
                span = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(shape) else 0
                base = torch.empty(offset + span, dtype=dtype, device=self.device)
                if dtype.is_floating_point:
                    base.uniform_(-1, 1)
                elif dtype == torch.bool:
                    base.random_(0, 2)
                else:
                    # zeros: an integer input may be an index (gather, index_select,
                    # embedding), and any other value can point outside the indexed
                    # tensor, which on a GPU is an illegal address in the recording; the
                    # recording does not depend on values (host_sync is refused), and
                    # kgb judges the replay on its own inputs
                    base.zero_()
                t = torch.as_strided(base, shape, stride, offset)
                self.add_buffer(t, "input", name=a["name"])
                self.inputs[a["name"]] = t
                v = t
            elif "value" in a:
                v = a["value"]
            else:
                raise RequestError("args[%d]: needs \"tensor\" or \"value\"" % i)
            if a.get("keyword"):
                kwargs[a["name"]] = v
            else:
                args.append(v)
        if self.req.get("case") is not None:
            return self.overload_arguments(args, kwargs)
        return args, kwargs

    def overload_arguments(self, args, kwargs):
        """The wrapper's arguments for an ATen case: the call of the ATen overload the
        PyTorch provider makes for it (python/kgb/providers/torch_aten.py), with this
        recording's input tensors, normalised as torch's dispatcher hands them to a
        Python kernel. A case the provider does not map keeps the request's args."""
        torch = self.torch
        case = case_of(self.req["case"])
        ta = torch_aten()
        if case.op.name not in ta.OPS:
            return args, kwargs
        try:
            ovl, args, kwargs = ta.overload_call(case, dict(self.inputs), device=self.device)
        except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as e:
            raise Refusal("unsupported", "kgb cannot make the arguments of aten.%s for this case: %s"
                          % (case.op.name, _last_line(e)))
        self.overload = str(ovl)
        self._overload = ovl
        known = {t.untyped_storage().data_ptr() for t in self.inputs.values()}

        def check(name, v):
            if isinstance(v, ta.Computed):
                raise Refusal("unsupported", "%s: argument '%s' is %r, which kgb does not pass to a wrapper"
                              % (ovl, name, v))
            if isinstance(v, torch.Tensor) and v.untyped_storage().data_ptr() not in known:
                raise Refusal("unsupported", "%s: argument '%s' is a tensor the case does not have (%s %s, "
                              "made on the host by the provider's mapping)" % (ovl, name, v.dtype, list(v.shape)))
            if isinstance(v, (list, tuple)):
                for x in v:
                    check(name, x)
        names = [a.name for a in ovl._schema.arguments if not a.kwarg_only]
        for i, v in enumerate(args):
            check(names[i] if i < len(names) else str(i), v)
        for k, v in kwargs.items():
            check(k, v)
        return list(args), dict(kwargs)

    # ---- torch calls on the host ---------------------------------------------
    def torch_call(self, func, types, args, kwargs):
        torch = self.torch
        kwargs = dict(kwargs or {})
        if self.inside_launch:
            return func(*args, **kwargs)
        name, full = short_name(func)
        self.host_calls.append(full)
        if name in META_OPS:
            return func(*args, **kwargs)
        if name in SYNC_OPS or (name in ("to", "cpu") and _to_cpu(args, kwargs) and self.device != "cpu"):
            if self.req.get("allow_sync"):
                return func(*args, **kwargs)
            raise Refusal("host_sync", "the wrapper reads device data on the host: %s" % full)
        # Record on the CPU as if on the GPU: a device the recording lacks becomes ours.
        if self.device == "cpu":
            if "device" in kwargs and _is_gpu(kwargs["device"]):
                kwargs["device"] = "cpu"
            if name in ("cuda",):
                return args[0]
            if name == "to":
                args = tuple("cpu" if _is_gpu(x) else x for x in args)
                if _is_gpu(kwargs.get("device")):
                    kwargs["device"] = "cpu"
        if name in ALLOC_OPS or name in FILL_ALLOC_OPS:
            value = _fill_value(name, args, kwargs)
            if value is not None and not isinstance(value, (bool, int, float)):
                raise Refusal("host_compute", "the wrapper computes on the host: %s with a fill value "
                              "of type %s (kgb fills only with a number)" % (full, type(value).__name__))
            out = func(*args, **kwargs)
            self.add_buffer(out, "allocation", op=full, zero=name in ZERO_ALLOC_OPS or value == 0)
            if value is not None:
                self.add_step("fill", name, full, out, value=value)
            return out
        if name in FILL_OPS and args and isinstance(args[0], torch.Tensor):
            value = 0 if name == "zero_" else (args[1] if len(args) > 1 else kwargs.get("value"))
            if not isinstance(value, (bool, int, float)):
                raise Refusal("host_compute", "the wrapper computes on the host: %s with a fill value "
                              "of type %s (kgb fills only with a number)" % (full, type(value).__name__))
            self.add_step("fill", name, full, args[0], value=value)
            return func(*args, **kwargs)
        if name == "copy_" and len(args) > 1 and isinstance(args[0], torch.Tensor):
            dst, src = args[0], args[1]
            if not isinstance(src, torch.Tensor) or src.dtype != dst.dtype:
                raise Refusal("host_compute", "the wrapper computes on the host: %s from %s into %s "
                              "(a cast computes)" % (full, getattr(src, "dtype", type(src).__name__), dst.dtype))
            try:
                src = src.expand(dst.shape)
            except RuntimeError as e:
                raise Refusal("plan_error", "the wrapper raised: %s" % _last_line(e))
            out = func(*args, **kwargs)
            self.add_step("copy", name, full, dst, src=src)
            return out
        if name in VIEW_OPS or name in COPY_OPS:
            out = func(*args, **kwargs)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for o in outs:
                if isinstance(o, torch.Tensor) and not self.known_storage(o):
                    self.copied(name, full, args[0] if args else None, o)
            return out
        raise Refusal("host_compute", "the wrapper computes on the host: %s" % full)

    # ---- host steps: the wrapper's copies and fills, replayed by kgb ---------------
    def copied(self, name, full, src, out):
        """out is a new tensor a COPY_OPS call made of src: a copy step into a new
        allocation, or a refusal when the call computed (a cast, or anything else)."""
        torch = self.torch
        if name not in COPY_OPS or not isinstance(src, torch.Tensor):
            raise Refusal("host_compute", "the wrapper computes on the host: %s made a "
                          "copy (a view was not possible)" % full)
        if out.dtype != src.dtype:
            raise Refusal("host_compute", "the wrapper computes on the host: %s converts %s to %s "
                          "(a cast computes)" % (full, _dtype_name(src.dtype), _dtype_name(out.dtype)))
        self.add_buffer(out, "allocation", op=full)
        dst = out
        if name in RESHAPE_OPS:
            # torch copies a reshape's source contiguously in its own shape, then views it
            dst = torch.as_strided(out, src.shape, _contiguous_strides(src.shape), out.storage_offset())
        if list(dst.shape) != list(src.shape):
            raise Refusal("host_compute", "the wrapper computes on the host: %s made a %s of a %s "
                          "tensor" % (full, list(out.shape), list(src.shape)))
        self.add_step("copy", name, full, dst, src=src)

    def view_of(self, t, full, side):
        """(buffer, element offset) of a tensor of a known buffer, and its layout."""
        b = self.find(t.untyped_storage().data_ptr(), 0)[0]
        if b is None:
            raise Refusal("foreign_pointer", "%s: its %s is outside every buffer of the case and the "
                          "wrapper's allocations" % (full, side))
        off = t.data_ptr() - b["_base"]
        if off < 0 or off % t.element_size():
            raise Refusal("plan_error", "%s: its %s starts %d bytes into a buffer" % (full, side, off))
        return b, {"buffer": b["id"], "offset": off // t.element_size(), "shape": list(t.shape),
                   "stride": list(t.stride()), "dtype": _dtype_name(t.dtype)}

    def add_step(self, kind, name, full, dst, src=None, value=None):
        """A launch of kgb's own copy (dst = src, same shape) or fill (dst = value) over
        strided views of known buffers, in the order of the wrapper's calls. The torch
        call itself runs too (the recording goes on with its result); a copy is checked
        to have moved exactly what the step will move."""
        torch = self.torch
        es = dst.element_size()
        if es not in INT_OF_WIDTH:
            raise Refusal("plan_error", "%s: kgb moves elements of 1, 2, 4 or 8 bytes, not %s"
                          % (full, dst.dtype))
        db, dv = self.view_of(dst, full, "destination")
        views = [dv]
        step = {"kgb_step": kind, "op": name, "call": full, "dst": dv}
        if src is not None:
            sb, sv = self.view_of(src, full, "source")
            views.append(sv)
            step["src"] = sv
        else:
            bits = torch.full((1,), value, dtype=dst.dtype).view(getattr(torch, INT_OF_WIDTH[es])).item()
            step["value"] = value
        n = dst.numel()
        if n == 0:
            return  # nothing moves
        sizes, strides = _merge_dims(list(dst.shape), [v["stride"] for v in views])
        if len(sizes) > STEP_MAX_DIMS:
            raise Refusal("plan_error", "%s: a view of %d dimensions that cannot be merged (kgb's copy "
                          "takes %d)" % (full, len(sizes), STEP_MAX_DIMS))
        pad = STEP_MAX_DIMS - len(sizes)
        sizes = [1] * pad + sizes
        strides = [[0] * pad + st for st in strides]
        extent = max(v["offset"] + sum((s - 1) * st for s, st in zip(v["shape"], v["stride"])) for v in views)
        wide = n + STEP_BLOCK >= 2**31 or extent >= 2**31
        ity = "i64" if wide else "i32"
        ptr = "*" + DTYPE_CODES[INT_OF_WIDTH[es]]
        args = [{"name": "dst", "type": ptr, "pointer": {"buffer": db["id"], "offset": 0}}]
        db["launched"] = True
        if src is not None:
            args.append({"name": "src", "type": ptr, "pointer": {"buffer": sb["id"], "offset": 0}})
            sb["launched"] = True
        else:
            args.append({"name": "value", "type": "i64" if es == 8 else "i32", "value": bits})
        args.append({"name": "n", "type": ity, "value": n})
        for v, side in zip(views, ("dst", "src")):
            args.append({"name": side + "_off", "type": ity, "value": v["offset"]})
        args += [{"name": "size%d" % k, "type": ity, "value": x} for k, x in enumerate(sizes)]
        for st, side in zip(strides, ("dst", "src")):
            args += [{"name": "%s_st%d" % (side, k), "type": ity, "value": x} for k, x in enumerate(st)]
        step.update({"kernel": "kgb_" + kind, "source": STEPS_SOURCE,
                     "grid": [-(-n // STEP_BLOCK), 1, 1], "args": args,
                     "constexprs": {"NDIM": len(sizes) - pad, "WIDE": int(wide), "BLOCK": STEP_BLOCK},
                     "num_warps": 4, "num_stages": 1})
        if src is not None:
            # torch has made the copy: the step must describe what it moved
            it = getattr(torch, INT_OF_WIDTH[es])
            if not torch.equal(dst.view(it), src.view(it)):
                raise Refusal("host_compute", "the wrapper computes on the host: %s (kgb's copy of "
                              "these layouts would not give torch's result)" % full)
        self.launches.append(step)

    # ---- Triton launches -----------------------------------------------------
    def launch(self, jitfn, pyfn, args, kwargs, grid):
        torch = self.torch
        opts = {k: kwargs.pop(k) for k in list(kwargs) if k in LAUNCH_OPTIONS}
        sig = inspect.signature(pyfn)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        params = sig.parameters
        autotune, self.pending_autotune = self.pending_autotune, None
        def grid_of(meta):
            g = grid(meta) if callable(grid) else grid
            if isinstance(g, int):
                g = (g,)
            return [int(x) for x in g] + [1] * (3 - len(g))
        g = grid_of(dict(bound.arguments))
        rec = {"kernel": pyfn.__name__, "grid": g[:3], "args": [], "constexprs": {},
               "num_warps": int(opts.get("num_warps", 4) or 4),
               "num_stages": int(opts.get("num_stages", 3) or 3)}
        tuned = set(autotune["names"]) if autotune else set()
        for pname, v in bound.arguments.items():
            if _is_constexpr(params[pname]):
                if pname not in tuned:
                    rec["constexprs"][pname] = _plain(v, pname)
                continue
            if isinstance(v, torch.Tensor):
                ptr = v.data_ptr()
                span = v.element_size() * (1 + sum((s - 1) * st for s, st in zip(v.shape, v.stride()))) if v.numel() else 0
                b, off = self.find(ptr, span)
                if b is None:
                    raise Refusal("foreign_pointer", "launch %d (%s): argument '%s' points outside every "
                                  "buffer of the case and the wrapper's allocations"
                                  % (len(self.launches), pyfn.__name__, pname))
                code = DTYPE_CODES.get(str(v.dtype).replace("torch.", ""))
                if code is None:
                    raise Refusal("plan_error", "argument '%s': dtype %s has no Triton pointer type" % (pname, v.dtype))
                b["launched"] = True
                rec["args"].append({"name": pname, "type": "*" + code,
                                    "pointer": {"buffer": b["id"], "offset": off}})
            elif isinstance(v, bool):
                rec["args"].append({"name": pname, "type": "i1", "value": int(v)})
            elif isinstance(v, int) and v == 1 and _specialises_one(jitfn, pname):
                # Triton compiles an int argument equal to 1 as the constant 1 (its JIT's
                # specialisation): the plan does the same, so the binary the wrapper's
                # call compiled is the plan's (keep_binaries) and a compile matches it
                rec["constexprs"][pname] = 1
            elif isinstance(v, int):
                ty = "i32" if -2**31 <= v < 2**31 else "i64"
                rec["args"].append({"name": pname, "type": ty, "value": v})
            elif isinstance(v, float):
                rec["args"].append({"name": pname, "type": "fp32", "value": v})
            else:
                raise Refusal("plan_error", "launch %d (%s): argument '%s' of type %s cannot be replayed"
                              % (len(self.launches), pyfn.__name__, pname, type(v).__name__))
        if autotune:
            # A plan's grid cannot name a configuration's constant: each configuration
            # carries the grid it launches, and the plan keeps those that launch this one.
            for c in autotune["configs"]:
                c["grid"] = grid_of(dict(bound.arguments, **c["constants"]))[:3]
            rec["configs"] = autotune["configs"]
            rec["autotune_key"] = autotune["key"]
        self.launches.append(rec)

    def install_hooks(self):
        """Point Triton's launch and autotune entry points at this recorder. They are
        patched once per process (a child of a batch records several cases in turn):
        the patches find the recorder of the case being recorded in _ACTIVE."""
        _ACTIVE[0] = self
        if _ACTIVE[1]:
            return
        _ACTIVE[1] = True
        import triton

        targets = []
        try:
            from triton.runtime.jit import JITFunction
            targets.append(JITFunction)
        except ImportError:
            pass
        try:
            from triton.runtime.interpreter import InterpretedFunction
            targets.append(InterpretedFunction)
        except ImportError:
            pass
        for cls in targets:
            orig = cls.run

            def run(self, *args, grid=None, warmup=False, _orig=orig, **kwargs):
                rec = _ACTIVE[0]
                if warmup or rec.inside_launch:
                    return _orig(self, *args, grid=grid, warmup=warmup, **kwargs)
                pyfn = getattr(self, "fn", None)
                pyfn = pyfn if inspect.isfunction(pyfn) else getattr(pyfn, "fn", pyfn)
                rec.inside_launch += 1  # the recorder's own tensor queries are not the wrapper's
                try:
                    n = len(rec.launches)
                    rec.launch(self, pyfn, args, dict(kwargs), grid)
                    kernel = _orig(self, *args, grid=grid, warmup=warmup, **kwargs)
                    if len(rec.launches) == n + 1 and hasattr(kernel, "asm"):
                        rec.launches[-1]["_compiled"] = kernel  # what Triton compiled for it
                    return kernel
                finally:
                    rec.inside_launch -= 1
            cls.run = run

        from triton.runtime.autotuner import Autotuner
        orig_at = Autotuner.run

        def at_run(self, *args, **kwargs):
            rec = _ACTIVE[0]
            if rec.inside_launch:
                return orig_at(self, *args, **kwargs)
            configs = []
            names = set()
            for c in self.configs:
                kw = dict(getattr(c, "kwargs", {}) or {})
                names.update(kw)
                configs.append({"constants": {k: _plain(v, k) for k, v in kw.items()},
                                "num_warps": int(getattr(c, "num_warps", 4) or 4),
                                "num_stages": int(getattr(c, "num_stages", 3) or 3)})
            rec.pending_autotune = {"configs": configs, "names": sorted(names),
                                    "key": list(getattr(self, "keys", []) or [])}
            # Tuning is kgb's business (outside measurement): run the first config once.
            c = self.configs[0]
            kw = dict(kwargs)
            kw.update(c.all_kwargs() if hasattr(c, "all_kwargs") else c.kwargs)
            if getattr(c, "pre_hook", None):
                raise Refusal("plan_error", "autotune config pre_hook cannot be replayed")
            n = len(rec.launches)
            ret = self.fn.run(*args, **kw)
            if len(rec.launches) == n + 1:
                # every configuration is compiled after the call (warm_configs), so the
                # plan's configurations take Triton's binaries as a plain launch does
                rec.launches[-1]["_warm"] = (self.fn, args, kwargs, [
                    c.all_kwargs() if hasattr(c, "all_kwargs") else dict(c.kwargs) for c in self.configs])
            return ret
        Autotuner.run = at_run
        del triton

    # ---- the whole recording -------------------------------------------------
    def record(self, module_path, function):
        import importlib.util
        from torch.overrides import TorchFunctionMode
        rec = self

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return rec.torch_call(func, types, args, kwargs)

        self.install_hooks()
        # from here on the candidate's code runs: it may open nothing outside its sandbox
        import kgb_confine
        kgb_confine.install([os.path.dirname(os.path.abspath(module_path)), getattr(self, "outdir", ".")])
        t0 = time.monotonic()
        try:
            spec = importlib.util.spec_from_file_location("kgb_candidate", module_path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["kgb_candidate"] = mod
            spec.loader.exec_module(mod)
        except BaseException as e:  # noqa: BLE001 - whatever the module does wrong
            raise Refusal("import_error", "the module does not import: %s" % _last_line(e))
        t1 = time.monotonic()
        self.seconds["import"] = t1 - t0
        args, kwargs = self.make_inputs()
        self.seconds["inputs"] = time.monotonic() - t1
        fn = self.wrapper_for(mod, function)
        t1 = time.monotonic()
        with Mode():
            try:
                out = fn(*args, **kwargs)
            except Refusal:
                raise
            except BaseException as e:  # noqa: BLE001
                raise Refusal("plan_error", "the wrapper raised: %s" % _last_line(e))
        self.seconds["call"] = time.monotonic() - t1
        if not any("kgb_step" not in L for L in self.launches):
            raise Refusal("no_launch", "the wrapper launched no kernel")
        mapped = self.map_outputs(out)
        if self.req.get("save_io"):
            # the inputs and what the launches left in the outputs, for tests that check
            # the recorded run itself (on the CPU through Triton's interpreter)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            self.torch.save({"inputs": self.inputs, "outputs": [o.detach().cpu() for o in outs]},
                            os.path.join(getattr(self, "outdir", "."), "io.pt"))
        return mapped

    def wrapper_for(self, mod, requested):
        """The module's function for this request. For an ATen case the PyTorch
        provider maps, the overload the case calls names it (torch_aten.wrapper_name:
        `add_Tensor` for aten.add.Tensor, `_softmax` for aten._softmax.default), as
        KernelGenBench's harness registers one function per overload; a request that
        names another is kgb's own error. Otherwise the request's function (vLLM and
        cuBLAS operators: the operator's name). A module without it is refused with
        the functions it does define for the operator; no other overload's function
        stands in (add_out, registered for aten.add.out, is not add_Tensor)."""
        if self.overload is not None:
            ovl, name = self._overload, torch_aten().wrapper_name
            function = name(ovl)
            if requested is not None and requested != function:
                raise RequestError("function: '%s', but the case calls %s, whose wrapper is '%s'"
                                   % (requested, self.overload, function))
            calls = " (the case calls %s.%s)" % (ovl._schema.name, ovl._overloadname)
            names = [name(getattr(ovl.overloadpacket, o)) for o in ovl.overloadpacket.overloads()]
        elif requested is None:
            case = self.req.get("case") or {}
            raise Refusal("unsupported", "kgb's PyTorch provider has no mapping for aten.%s: the overload "
                          "the case calls, and so the module's function for it, is not known" % case.get("op"))
        else:
            function, calls, names = requested, "", [requested]
        self.function = function
        fn = getattr(mod, function, None)
        if callable(fn):
            return fn
        mine = sorted(n for n in set(names) if inspect.isfunction(getattr(mod, n, None)))
        if not mine:
            mine = sorted(n for n, v in vars(mod).items()
                          if inspect.isfunction(v) and getattr(v, "__module__", None) == mod.__name__)[:12]
            has = "; its functions: %s" % ", ".join(mine) if mine else "; it defines no function"
        else:
            has = "; it defines %s" % ", ".join(mine)
        raise Refusal("import_error", "the module defines no %s%s%s" % (function, calls, has))

    def map_outputs(self, out):
        torch = self.torch
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        want = self.req.get("outputs") or []
        if len(outs) != len(want):
            raise Refusal("plan_error", "the wrapper returned %d tensor(s), the operator has %d output(s)"
                          % (len(outs), len(want)))
        mapped = []
        for i, (o, w) in enumerate(zip(outs, want)):
            if not isinstance(o, torch.Tensor):
                raise Refusal("plan_error", "output %d is a %s, not a tensor" % (i, type(o).__name__))
            b, off = self.find(o.data_ptr(), 0)
            if b is None:
                raise Refusal("foreign_pointer", "output %d is not a buffer of the case or the wrapper" % i)
            if b["role"] == "allocation" and not b.get("launched"):
                raise Refusal("host_compute", "output %d was never written by a launched kernel" % i)
            layout_ok = (list(o.shape) == list(w.get("shape", o.shape)) and
                         (o.numel() <= 1 or list(o.stride()) == list(w.get("stride", o.stride()))) and
                         str(o.dtype).replace("torch.", "") ==
                         KGB_DTYPES.get(w.get("dtype"), w.get("dtype", str(o.dtype).replace("torch.", ""))))
            if not layout_ok:
                raise Refusal("plan_error", "output %d has shape %s stride %s dtype %s; the case wants %s %s %s"
                              % (i, list(o.shape), list(o.stride()), o.dtype, w.get("shape"),
                                 w.get("stride"), w.get("dtype")))
            if off != 0:
                raise Refusal("plan_error", "output %d starts %d bytes into its buffer" % (i, off))
            if b["role"] == "allocation":
                b["role"] = "output"
                b["name"] = w["name"]
            mapped.append({"name": w["name"], "buffer": b["id"]})
        return mapped


def to_plan(recording, source_name):
    """The recording as a kgb launch plan: kgb's own tensors for inputs and outputs,
    plan scratch for intermediates, literal grids and scalars (a recording is of one case)."""
    buffers = {b["id"]: b for b in recording["buffers"]}
    scratch, kernels = [], []
    # a zeroed allocation is zeroed by a fill step of the plan, inside the timed
    # region, never by the plan's scratch zeroing, which runs before it
    for b in recording["buffers"]:
        if b["role"] == "allocation" and b.get("launched"):
            scratch.append({"name": "s%d" % b["id"], "bytes": str(b["bytes"]), "zero": False})
    if source_name == STEPS_SOURCE and any("kgb_step" in L for L in recording["launches"]):
        raise Refusal("plan_error", "the module is named %s, as kgb's own kernels for the wrapper's "
                      "copies and fills are" % STEPS_SOURCE)
    for i, L in enumerate(recording["launches"]):
        args, sig = [], []
        for a in L["args"]:
            sig.append(a["type"])
            if "pointer" in a:
                b = buffers[a["pointer"]["buffer"]]
                if a["pointer"]["offset"] != 0:
                    raise Refusal("plan_error", "launch %d (%s): argument '%s' points %d bytes into '%s'; "
                                  "plans pass whole buffers" % (i, L["kernel"], a["name"], a["pointer"]["offset"],
                                                                b.get("name", "s%d" % b["id"])))
                if b["role"] in ("input", "output"):
                    args.append({"tensor": b["name"]})
                else:
                    args.append({"scratch": "s%d" % b["id"]})
            else:
                ty = {"i1": "i32", "i32": "i32", "i64": "i64", "fp32": "f32"}[a["type"]]
                if a["type"] == "i1":
                    sig[-1] = "i32"
                args.append({"scalar": repr(a["value"]), "type": ty})
        if "configs" in L:
            configs = [{"constants": dict(L["constexprs"], **c["constants"]), "num_warps": c["num_warps"],
                        "num_stages": c["num_stages"]} for c in L["configs"] if c["grid"] == L["grid"]]
            L["configs_dropped"] = len(L["configs"]) - len(configs)
        else:
            configs = [{"constants": L["constexprs"], "num_warps": L["num_warps"], "num_stages": L["num_stages"]}]
        for c in configs:
            c["constants"] = {k: (str(v) if not isinstance(v, bool) else ("1" if v else "0"))
                              for k, v in c["constants"].items()}
        kernels.append({"entry": L["kernel"], "lang": "triton", "source": L.get("source", source_name),
                        "signature": ",".join(sig), "configs": configs,
                        "grid": [str(x) for x in L["grid"]], "args": args})
    plan = {"kernels": kernels}
    if scratch:
        plan["scratch"] = scratch
    return plan


def steps_source():
    """The text of kgb's own step kernels, installed next to the recorder."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), STEPS_SOURCE)) as f:
        return f.read()


def describe_steps(recording):
    """One line per host step of a recording, naming the buffers as the plan does:
    "contiguous copy of self (f32 [64, 33] strides [1, 64]) -> s0"."""
    buffers = {b["id"]: b for b in recording["buffers"]}

    def name(v):
        b = buffers[v["buffer"]]
        return b["name"] if b["role"] in ("input", "output") else "s%d" % b["id"]

    def layout(v, dtype=True):
        s = "%s%s strides %s" % (v["dtype"] + " " if dtype else "", v["shape"], v["stride"])
        return s + (" offset %d" % v["offset"] if v["offset"] else "")

    lines = []
    for L in recording["launches"]:
        if "kgb_step" not in L:
            continue
        d = L["dst"]
        # an in-place call names itself (copy_, fill_), another what it did
        what = L["op"] if L["op"].endswith("_") else "%s %s" % (L["op"], L["kgb_step"])
        if L["kgb_step"] == "copy":
            lines.append("%s of %s (%s) -> %s (%s)" % (what, name(L["src"]), layout(L["src"]),
                                                      name(d), layout(d, False)))
        else:
            lines.append("%s of %s (%s) with %r" % (what, name(d), layout(d), L["value"]))
    return lines


def _compile_memo(text):
    """The directory of the batch's compile memo for the helper request `text`
    (None outside a batch): run_batch names the memo's root in KGB_PYREC_COMPILE_MEMO."""
    root = os.environ.get("KGB_PYREC_COMPILE_MEMO")
    if not root:
        return None
    import hashlib
    return os.path.join(root, hashlib.sha256(text.encode()).hexdigest())


def _compile_memo_fill(memo, work):
    """Copy the helper's output into the memo: a private directory renamed into place,
    so a concurrent case sees all of an entry or none of it."""
    import shutil
    import tempfile
    tmp = None
    try:
        tmp = tempfile.mkdtemp(dir=os.path.dirname(memo), prefix=".fill-")
        for name in ("kernel.cubin", "kernel.abi.json"):
            shutil.copyfile(os.path.join(work, name), os.path.join(tmp, name))
        os.rename(tmp, memo)
    except OSError:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)  # another case filled it first


def compile_launches(recording, module_text, target, outdir):
    """Compile every launch for an explicit target through the worker's Triton helper
    (worker/triton_compile.py), so that the binaries are the ones the C side would
    compile itself. The helper runs as its own process: the recording may have put
    Triton in interpreter mode, which cannot compile."""
    import shutil
    import subprocess
    helper = HELPER_PATH
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for i, L in enumerate(recording["launches"]):
        cfg = (L.get("configs") or [None])[0]
        consts = dict(L["constexprs"], **(cfg["constants"] if cfg else {}))
        req = {"source": steps_source() if "kgb_step" in L else module_text, "entry": L["kernel"],
               "signature": ",".join("i32" if a["type"] == "i1" else a["type"] for a in L["args"]),
               "constants": consts, "num_warps": cfg["num_warps"] if cfg else L["num_warps"],
               "num_stages": cfg["num_stages"] if cfg else L["num_stages"], "target": target}
        text = json.dumps(req, sort_keys=True)
        memo = _compile_memo(text)
        if memo is not None and os.path.isfile(os.path.join(memo, "kernel.abi.json")):
            # the same kernel, signature, constants and options compiled by an earlier
            # case of this batch: the helper is deterministic in its request
            shutil.copyfile(os.path.join(memo, "kernel.cubin"), os.path.join(outdir, "k%d.cubin" % i))
            shutil.copyfile(os.path.join(memo, "kernel.abi.json"), os.path.join(outdir, "k%d.abi.json" % i))
        else:
            work = os.path.abspath(os.path.join(outdir, ".compile%d" % i))
            os.makedirs(work, exist_ok=True)
            p = subprocess.run([sys.executable, "-s", helper, work], input=text.encode(),
                               cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if p.returncode != 0:
                tail = p.stdout.decode(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
                raise Refusal("compile_error", "launch %d (%s) does not compile for %s: %s"
                              % (i, L["kernel"], target, tail[0][:300]))
            if memo is not None:
                _compile_memo_fill(memo, work)
            shutil.move(os.path.join(work, "kernel.cubin"), os.path.join(outdir, "k%d.cubin" % i))
            shutil.move(os.path.join(work, "kernel.abi.json"), os.path.join(outdir, "k%d.abi.json" % i))
            shutil.rmtree(work, ignore_errors=True)
        with open(os.path.join(outdir, "k%d.abi.json" % i)) as f:
            L["shared"] = json.load(f).get("shared", 0)
        L["binary"] = "k%d.cubin" % i


def warm_configs(recording):
    """On a GPU: compile every configuration of each autotuned launch (Triton's JIT,
    without launching; its cache is the module's, kept across jobs), for keep_binaries.
    Runs after the device lock is let go: compiling needs no device."""
    for L in recording["launches"]:
        warm = L.pop("_warm", None)
        if warm is None:
            continue
        fn, args, kwargs, configs = warm
        kernels = []
        for cfg in configs:
            kw = dict(kwargs)
            kw.update(cfg)
            kw["warmup"] = True
            try:
                kernels.append(fn.run(*args, **kw))
            except Exception:  # noqa: BLE001 - that configuration is compiled by the worker
                kernels.append(None)
        L["_compiled_configs"] = kernels


def _keep_one(helper, kernel, L, outdir, stem):
    """Write kernel's binary and ABI as outdir/<stem>.jit.cubin and .jit.abi.json when its
    compiled run-time parameters are exactly the plan's (names and types)."""
    if kernel is None or helper is None:
        return
    try:
        src = getattr(kernel, "src", None)
        sig = getattr(src, "signature", None) or {}
        args = [{"name": k, "type": v} for k, v in sig.items() if v != "constexpr"]
        want = ["i32" if a["type"] == "i1" else a["type"] for a in L["args"]]
        if [a["type"] for a in args] != want or [a["name"] for a in args] != [a["name"] for a in L["args"]]:
            return
        cubin = kernel.asm.get("cubin")
        abi = helper.abi_of(kernel, args, kernel.metadata.target)
    except Exception:  # noqa: BLE001 - a Triton without these fields: the worker compiles
        return
    if not cubin:
        return
    with open(os.path.join(outdir, stem + ".jit.cubin"), "wb") as f:
        f.write(cubin)
    with open(os.path.join(outdir, stem + ".jit.abi.json"), "w") as f:
        json.dump(abi, f, indent=1, sort_keys=True)


def keep_binaries(recording, outdir):
    """On a GPU Triton has compiled every launch of the recording for this device, with
    the specialisation of the case's arguments: keep each binary and its ABI (kNNN.jit.cubin,
    kNNN.jit.abi.json; for configuration j of an autotuned launch, compiled by
    warm_configs, kNNN.cj.jit.*), so the worker times what the wrapper ran instead of
    compiling the kernel a second time. Only where the compiled run-time parameters are
    exactly the plan's (an int argument equal to 1 is a constant for both, see launch).
    The binary comes from the candidate's process; the worker uses it for this job only."""
    helper = _HELPER[0]
    for i, L in enumerate(recording["launches"]):
        kernel = L.pop("_compiled", None)
        compiled = L.pop("_compiled_configs", None)
        if "kgb_step" in L:
            continue
        if "configs" not in L:
            _keep_one(helper, kernel, L, outdir, "k%d" % i)
            continue
        # an autotuned launch: configuration j of the plan (those launching the
        # recorded grid, in order: to_plan) as k<i>.c<j>
        j = 0
        for o, c in enumerate(L["configs"]):
            if c.get("grid") != L.get("grid"):
                continue
            if compiled and o < len(compiled):
                _keep_one(helper, compiled[o], L, outdir, "k%d.c%d" % (i, j))
            j += 1


def _fill_value(name, args, kwargs):
    """The value an allocation is filled with (None: left uninitialised)."""
    if name in ZERO_ALLOC_OPS:
        return 0
    if name in ("ones", "ones_like", "new_ones"):
        return 1
    pos = {"full": 1, "full_like": 1, "new_full": 2}.get(name)
    if pos is None:
        return None
    return args[pos] if len(args) > pos else kwargs.get("fill_value")


def _dtype_name(dt):
    """kgb's name of a torch dtype (f32), else torch's (complex64)."""
    t = str(dt).replace("torch.", "")
    return next((k for k, v in KGB_DTYPES.items() if v == t), t)


def _contiguous_strides(shape):
    st, acc = [], 1
    for s in reversed(list(shape)):
        st.append(acc)
        acc *= max(int(s), 1)
    return st[::-1]


def _merge_dims(shape, strides):
    """shape and the strides of several views of it, without size-1 dimensions and with
    each run of dimensions that every view walks as one merged: ([sizes], [[strides]...])."""
    keep = [i for i, s in enumerate(shape) if s != 1]
    sizes, out = [], [[] for _ in strides]
    for i in keep:
        if sizes and all(o[-1] == st[i] * shape[i] for o, st in zip(out, strides)):
            sizes[-1] *= shape[i]
            for o, st in zip(out, strides):
                o[-1] = st[i]
            continue
        sizes.append(shape[i])
        for o, st in zip(out, strides):
            o.append(st[i])
    return sizes, out


def _is_gpu(d):
    s = str(d) if d is not None else ""
    return s.startswith("cuda") or s.startswith("hip")


def _to_cpu(args, kwargs):
    return any(str(x) == "cpu" for x in list(args[1:]) + [kwargs.get("device")])


def _is_constexpr(p):
    a = p.annotation
    if a is inspect.Parameter.empty:
        return False
    return "constexpr" in (a if isinstance(a, str) else getattr(a, "__name__", repr(a)))


def _specialises_one(jitfn, name):
    """Whether Triton's JIT compiles parameter name as a constant when it is 1: every
    int parameter but those of do_not_specialize and those annotated with a type
    (`n: tl.int32` keeps its type). The interpreter keeps no parameter list: there the
    constant changes nothing."""
    for p in getattr(jitfn, "params", None) or ():
        if getattr(p, "name", None) == name:
            try:
                typed = bool(p.annotation_type)
            except Exception:  # noqa: BLE001 - a Triton without it: judge by the annotation
                typed = p._param.annotation is not inspect.Parameter.empty
            return not getattr(p, "do_not_specialize", False) and not typed
    return True


def _plain(v, name):
    v = getattr(v, "value", v)  # tl.constexpr
    if isinstance(v, (bool, int, float)) or v is None:
        return v
    raise Refusal("plan_error", "constexpr '%s' = %r is not a number" % (name, v))


def _last_line(e):
    s = "%s: %s" % (type(e).__name__, e)
    return s.strip().splitlines()[-1][:400] if s.strip() else type(e).__name__


def load_request(text):
    """The request as a dict, with an inline module written into the working directory."""
    req = json.loads(text)
    if not isinstance(req, dict):
        raise RequestError("expected a JSON object")
    return req


def prepare_module(req):
    if isinstance(req.get("source"), str) and "module" not in req:
        # the module's text inline: written into the (private) working directory
        # source_name is the module's name in the job (a path in a manifest's
        # directory, perhaps): the plan names it; the file here is its base name
        name = req.get("source_name") or "candidate.py"
        if not isinstance(name, str) or not name.endswith(".py"):
            raise RequestError("source_name: expected a file name ending in .py, got %r" % (name,))
        name = os.path.basename(name)
        if name.startswith(".") or not all(c.isalnum() or c in "_-." for c in name):
            name = "candidate.py"
        with open(name, "w") as f:
            f.write(req["source"])
        req["module"] = os.path.abspath(name)
    if not isinstance(req.get("module"), str):
        raise RequestError("expected a \"module\" (or \"source\") string")
    fn = req.get("function")
    if not (isinstance(fn, str) or fn is None and req.get("case") is not None):
        raise RequestError("function: expected the wrapper's name (or null with a \"case\": the "
                           "overload the case calls names it), got %r" % (fn,))


def import_toolchain(interpret):
    """Import torch and Triton; interpreter mode when asked or when there is no GPU.
    Returns (torch, triton) or raises ImportError."""
    if interpret is None:
        # NVML's count does not initialise CUDA, so children forked later still can
        os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
        import torch
        interpret = not torch.cuda.is_available()
    if interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    import torch
    import triton
    if interpret:
        _interpreter_scalar_index()
    else:
        _load_helper()
    return torch, triton


_HELPER = [None]


def _load_helper():
    """The worker's Triton helper (triton_compile.py, beside this directory), imported
    before the candidate runs: keep_binaries writes an ABI with it, in its format."""
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("kgb_triton_helper", HELPER_PATH)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _HELPER[0] = mod
    except (OSError, ImportError, SyntaxError):
        _HELPER[0] = None  # no binaries kept: the worker compiles every launch itself


def _interpreter_scalar_index():
    """Triton's interpreter holds a kernel's scalars as one-element arrays and converts
    them with int(array), which NumPy 2.4 refuses for arrays that are not 0-d: a loop
    `for i in range(0, n, BLOCK)` over a run-time n would fail before the module's own
    code is reached. Convert through the element instead (what older NumPy did)."""
    try:
        from triton.runtime import interpreter
        orig = interpreter._patch_lang_tensor
    except (ImportError, AttributeError):
        return

    def patched(tensor, scope):
        orig(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))
    interpreter._patch_lang_tensor = patched


def record_one(req, outdir, lock=None, pre=None):
    """Record one request into outdir; returns the exit status (0, or 2 for a bad request).
    With lock (a DeviceLock taken by the caller), it is let go once the candidate's call
    has ended on the device: compiling its launches needs no device, and a timing
    waiting for the device need not wait for that."""
    import torch
    import triton
    prepare_module(req)
    t0 = time.monotonic()
    rec = Recorder(req)
    rec.outdir = outdir
    rec.seconds = dict(pre or {})
    result = {"recording": 1, "function": req.get("function"), "device": rec.device,
              "triton_version": triton.__version__, "torch_version": torch.__version__}
    plan = None
    try:
        result["outputs"] = rec.record(req["module"], req.get("function"))
        result["verdict"], result["message"] = "pass", ""
    except Refusal as r:
        result["verdict"], result["message"] = r.verdict, r.message
    if lock is not None and lock.held:
        if _is_gpu(rec.device):
            try:
                torch.cuda.synchronize()  # whatever the call left queued ends under the lock
            except Exception:  # noqa: BLE001 - a faulted context: the verdict says it
                pass
        lock.release()
    if rec.overload:
        result["overload"] = rec.overload
    result["function"] = rec.function
    result["buffers"] = [{k: v for k, v in b.items() if not k.startswith("_")} for b in rec.buffers]
    result["launches"] = rec.launches
    result["host_calls"] = rec.host_calls
    result["steps"] = describe_steps(result)
    if result["verdict"] == "pass":
        try:
            plan = to_plan(result, req.get("source_name") or os.path.basename(req["module"]))
            t1 = time.monotonic()
            if _is_gpu(rec.device):
                warm_configs(result)
            keep_binaries(result, outdir)
            rec.seconds["keep"] = time.monotonic() - t1
            if req.get("compile"):
                t1 = time.monotonic()
                with open(req["module"]) as f:
                    compile_launches(result, f.read(), req["compile"], outdir)
                rec.seconds["compile"] = time.monotonic() - t1
        except Refusal as r:
            result["verdict"], result["message"] = r.verdict, r.message
            plan = None
        except Exception as e:  # noqa: BLE001 - the candidate's kernel does not compile
            result["verdict"], result["message"] = "compile_error", _last_line(e)
            traceback.print_exc()
            plan = None
    # where the recording's time went (seconds of wall): waiting for the device lock
    # and opening the CUDA context before record_one (run_batch's "lock" and
    # "context"), importing the module, making the inputs, the wrapper's call, keeping
    # Triton's binaries, compiling the launches, and all of record_one
    rec.seconds["total"] = time.monotonic() - t0
    result["seconds"] = {k: round(v, 4) for k, v in rec.seconds.items()}
    for L in result["launches"]:
        for k in ("_compiled", "_compiled_configs", "_warm"):
            L.pop(k, None)
    with open(os.path.join(outdir, "recording.json"), "w") as f:
        json.dump(result, f, indent=1)
    if plan is not None:
        with open(os.path.join(outdir, "plan.json"), "w") as f:
            json.dump(plan, f, indent=1)
    return 0


class DeviceLock:
    """The worker's device lock (worker/devlock.h), taken shared the way a validation
    run takes it: the gate (path + ".gate") held exclusively while waiting, so a
    recording never gets ahead of a timing already waiting for the device. Every hold
    is appended to the trace (KGB_DEVLOCK_TRACE's format: "pid SH asked granted
    released", ns of CLOCK_MONOTONIC), the release read before the lock is let go."""

    def __init__(self, spec):
        self.path = spec.get("path") if isinstance(spec, dict) else None
        self.trace = spec.get("trace") if isinstance(spec, dict) else None
        self.fd = None
        self.trace_fd = None
        self.gate = None
        self.held = False

    def take(self):
        import fcntl
        import time
        if not self.path:
            return
        self._open()
        self.asked = time.monotonic_ns()
        if self.gate is not None:
            fcntl.flock(self.gate, fcntl.LOCK_EX)
        fcntl.flock(self.fd, fcntl.LOCK_SH)
        if self.gate is not None:
            fcntl.flock(self.gate, fcntl.LOCK_UN)
        self.granted = time.monotonic_ns()
        self.held = True

    def _open(self):
        if self.fd is None:
            # opened once and kept: a child recording several cases takes the lock again
            # after the candidate's module has run, confined to the sandbox (kgb_confine),
            # and the lock and the trace lie outside it
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            if self.trace:
                try:
                    self.trace_fd = os.open(self.trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                                            0o644)
                except OSError:
                    self.trace_fd = None  # a trace is a diagnostic
            try:
                self.gate = os.open(self.path + ".gate", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                self.gate = None

    def take_try(self, limit_s=10.0):
        """The lock shared, asked for the way kgb_devlock_try_for asks: the gate and
        then the lock tried every millisecond, never waited for, so a timing that waits
        at the gate goes first; after limit_s it goes ahead without the lock (held
        stays False)."""
        import fcntl
        import time
        if not self.path:
            return
        self._open()
        self.asked = time.monotonic_ns()
        end = time.monotonic() + limit_s
        while True:
            got = False
            try:
                if self.gate is not None:
                    fcntl.flock(self.gate, fcntl.LOCK_EX | fcntl.LOCK_NB)
                try:
                    fcntl.flock(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    got = True
                except BlockingIOError:
                    pass
                if self.gate is not None:
                    fcntl.flock(self.gate, fcntl.LOCK_UN)
            except BlockingIOError:
                pass
            if got:
                break
            if time.monotonic() > end:
                return
            time.sleep(0.001)
        self.granted = time.monotonic_ns()
        self.held = True

    def release(self):
        import fcntl
        import time
        if self.fd is None or not self.held:
            return
        released = time.monotonic_ns()
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        self.held = False
        if self.trace_fd is not None:
            try:
                os.write(self.trace_fd, ("%d SH %d %d %d\n" % (os.getpid(), self.asked, self.granted,
                                                              released)).encode())
            except OSError:
                pass  # a trace is a diagnostic


MEMO_MODULES = 4096  # module directories a worker's compile memo keeps (the newest)


def _batch_memo(batch, root):
    """The compile memo of a batch whose requests are all of one module, kept across
    batches under root: one directory per module text (its SHA-256), so that a
    candidate's recording only ever meets launches compiled from its own source. Runs
    before any candidate code. None when there is no root, the batch mixes modules or
    the directory cannot be made (the batch then has a memo of its own)."""
    if not isinstance(root, str) or not root or not batch:
        return None
    mods = {r.get("module") for r in batch}
    if len(mods) != 1 or not isinstance(next(iter(mods)), str):
        return None
    import hashlib
    try:
        with open(next(iter(mods)), "rb") as f:
            d = os.path.join(root, hashlib.sha256(f.read()).hexdigest())
        os.makedirs(d, exist_ok=True)
        os.utime(d)  # its age is the last batch that used it
        ents = list(os.scandir(root))
        if len(ents) > MEMO_MODULES:
            import shutil
            ents.sort(key=lambda e: e.stat().st_mtime)
            for e in ents[:len(ents) - MEMO_MODULES // 2]:
                if e.path != d:
                    shutil.rmtree(e.path, ignore_errors=True)
        return d
    except OSError:
        return None


def run_batch(batch, outdir, timeout_s, device_index=None, parallel=1, device_lock=None, per_child=1,
              compile_memo=None, watch=None):
    """Record every request of a batch into outdir/<i>/, in children forked from this
    process (torch and Triton are imported once), at most `parallel` children at a
    time, each recording up to `per_child` requests in turn: on a device one CUDA
    context then serves several cases. Every case imports the candidate's module
    afresh, so nothing one case's call leaves in the module reaches another; what it
    could leave elsewhere in the process (a tensor kept in another module) is no
    buffer of the next case, which the recorder refuses (foreign_pointer). A child
    gets timeout_s per request; one that is killed, or dies, leaves its unfinished
    requests to be recorded again one per child, so a case that crashes or hangs is
    judged alone. Writes outdir/batch.json: per request its exit status, signal and
    whether it ran past timeout_s (then it was killed). With device_lock ({"path": ...,
    "trace": ...}) each case is recorded holding the device lock shared, from before it
    touches the device until its call has ended there (record_one; DeviceLock). With
    watch (the recorder server's connection), a client that goes away ends the batch:
    its children are killed and the batch left unfinished."""
    import signal
    import time
    started = time.monotonic()
    status = [None] * len(batch)
    running = {}  # pid -> (chunk, deadline)
    root = os.path.abspath(outdir)

    def start(chunk):
        for i, _ in chunk:
            os.makedirs(os.path.join(root, str(i)), exist_ok=True)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            first = True
            lock = DeviceLock(device_lock)
            for i, req in chunk:
                sub = os.path.join(root, str(i))
                rc = 1
                pre = {}
                try:
                    os.chdir(sub)
                    if first and device_index is not None and os.environ.get("TRITON_INTERPRET") != "1":
                        # the child's CUDA context, made under a try-only shared hold, as
                        # an executor opens its device (docs/worker.md, "Sharing a
                        # device"): making one allocates and clears device memory, which
                        # disturbs a timing beside it, and a timing waiting at the gate
                        # never waits for it
                        import torch
                        t = time.monotonic()
                        lock.take_try()
                        torch.cuda.set_device(device_index)
                        torch.cuda.init()
                        lock.release()
                        pre["context"] = time.monotonic() - t
                    first = False
                    t = time.monotonic()
                    lock.take()
                    pre["lock"] = time.monotonic() - t
                    if len(chunk) > 1:
                        # the confinement is installed once per process: every case
                        # of the chunk writes under the batch's directory
                        import kgb_confine
                        kgb_confine.install([root, os.path.dirname(os.path.abspath(req.get("module", ".")))])
                    rc = record_one(req, ".", lock, pre)
                except RequestError as e:
                    print("kgb_record: bad request %d: %s" % (i, e), file=sys.stderr)
                    rc = 2
                except BaseException:  # noqa: BLE001
                    traceback.print_exc()
                finally:
                    lock.release()
                sys.stdout.flush()
                sys.stderr.flush()
                try:
                    with open(os.path.join(sub, ".exit"), "w") as f:
                        f.write("%d\n" % rc)
                except OSError:
                    pass
                if len(chunk) == 1:
                    os._exit(rc)
            os._exit(0)
        running[pid] = (chunk, time.monotonic() + timeout_s * len(chunk))

    def reap(pid, st, timed_out):
        chunk = running.pop(pid)[0]
        if len(chunk) == 1:
            status[chunk[0][0]] = {"exit": os.WEXITSTATUS(st) if os.WIFEXITED(st) else -1,
                                   "signal": os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0,
                                   "timed_out": timed_out}
            return
        for i, req in chunk:
            try:
                with open(os.path.join(root, str(i), ".exit")) as f:
                    status[i] = {"exit": int(f.read().strip()), "signal": 0, "timed_out": False}
            except (OSError, ValueError):
                pending.append([(i, req)])  # unfinished when the child ended: alone

    # one Triton cache for the batch (every case is of the same module): a kernel the
    # wrapper launches in every case is compiled once, not once per child; and one
    # compile memo: a launch the helper compiled for one case is copied for the next
    # case that launches the same kernel with the same signature and constants, instead
    # of a helper process per launch per case. With compile_memo both are kept for the
    # worker's later jobs of the same module text (so on a GPU a later job's wrapper
    # finds its kernels compiled), and only that module's recordings ever read them.
    memo = _batch_memo(batch, compile_memo)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(memo, "triton-cache") if memo else os.path.join(root, ".triton-cache")
    os.environ["KGB_PYREC_COMPILE_MEMO"] = memo or os.path.join(root, ".compile-memo")
    os.makedirs(os.environ["KGB_PYREC_COMPILE_MEMO"], exist_ok=True)
    items = list(enumerate(batch))
    per = max(1, per_child)
    # as many children as run at once get the cases in turn, so that a batch smaller than
    # parallel x per_child still runs side by side
    per = max(1, min(per, -(-len(items) // max(1, parallel))))
    pending = [items[k:k + per] for k in range(0, len(items), per)]
    while pending or running:
        while pending and len(running) < max(1, parallel):
            start(pending.pop(0))
        pid, st = os.waitpid(-1, os.WNOHANG)
        if pid:
            reap(pid, st, False)
            continue
        now = time.monotonic()
        for p, (chunk, deadline) in list(running.items()):
            if now > deadline:
                os.kill(p, signal.SIGKILL)
                reap(p, os.waitpid(p, 0)[1], True)
        if watch is not None and _gone(watch):
            for p in list(running):
                os.kill(p, signal.SIGKILL)
                os.waitpid(p, 0)
            return 1
        time.sleep(0.01)
    with open(os.path.join(root, "batch.json"), "w") as f:
        json.dump(status, f)
    # the recorder's start-up before the batch (Python, torch and Triton imported) and
    # the batch's own wall, for the job's profile (kgb_pycand_record_batch)
    with open(os.path.join(root, "batch-seconds.json"), "w") as f:
        json.dump({"startup": round(started - _STARTED, 4), "batch": round(time.monotonic() - started, 4),
                   "server": watch is not None}, f)
    return 0


def _gone(conn):
    """Whether the client at the other end of conn has closed it (it sends nothing
    after its request)."""
    import select
    import socket
    r, _, _ = select.select([conn], [], [], 0)
    if not r:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def serve(path, interpret):
    """The recorder server (the module's docstring): torch and Triton imported once,
    a child forked per batch. Returns when the parent that started it has gone."""
    import select
    import signal
    import socket
    parent = os.getppid()
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path + ".new")
    os.chmod(path + ".new", 0o600)
    srv.listen(64)
    os.rename(path + ".new", path)  # a client finds it only once it listens
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the batches are reaped by the kernel
    print("kgb_record: serving on %s (%s)" % (path, "interpreter" if interpret else "device"), flush=True)
    # it ends when the worker does, or when the worker removes its socket
    while os.getppid() == parent and os.path.exists(path):
        r, _, _ = select.select([srv], [], [], 1.0)
        if not r:
            continue
        try:
            conn, _ = srv.accept()
        except OSError:
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            rc = 1
            try:
                srv.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                rc = _serve_one(conn)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
            os._exit(rc)
        conn.close()
    return 0


def _serve_one(conn):
    """One batch of the recorder server, in the child forked for it."""
    import resource
    global _STARTED
    _STARTED = time.monotonic()  # this batch's start-up is the fork's
    f = conn.makefile("rb")
    try:
        head = json.loads(f.readline().decode())
        n = int(head["length"])
        text = f.read(n).decode()
        if len(text.encode()) != n:
            raise ValueError("the request ended after %d of %d bytes" % (len(text.encode()), n))
        outdir = head["dir"]
    except (ValueError, KeyError, TypeError) as e:
        conn.sendall(b"error bad request: %s\n" % str(e).encode()[:200])
        return 2
    os.setsid()
    as_bytes = head.get("as_bytes") or 0
    if isinstance(as_bytes, int) and as_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (as_bytes, as_bytes))
    cpu = head.get("cpu_s") or 0
    if isinstance(cpu, int) and cpu > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(outdir)
    fd = os.open("output.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    conn.sendall(b"pid %d\n" % os.getpid())
    rc = _run_request(text, ".", watch=conn)
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(b"exit %d\n" % rc)
    return rc


def probe():
    """What the worker asks once at start (kgb_pycand_probe): can this Python record?
    Prints one line, the versions or what is missing; exit 0 yes, 3 no."""
    for name in ("torch", "triton"):
        try:
            __import__(name)
        except Exception as e:  # noqa: BLE001
            print("%s not importable by %s (%s)" % (name, sys.executable, _last_line(e)))
            return 3
    try:
        torch_aten()
    except Exception as e:  # noqa: BLE001
        print("%s" % _last_line(e))
        return 3
    import torch
    import triton
    print("%s: torch %s, triton %s" % (sys.executable, torch.__version__, triton.__version__))
    return 0


def main(argv):
    if len(argv) < 2:
        print("usage: kgb_record.py REQUEST.json|- [OUTDIR] | --probe | --serve SOCKET device|interpret",
              file=sys.stderr)
        return 2
    if argv[1] == "--probe":
        return probe()
    if argv[1] == "--serve":
        if len(argv) != 4 or argv[3] not in ("device", "interpret"):
            print("usage: kgb_record.py --serve SOCKET device|interpret", file=sys.stderr)
            return 2
        try:
            import_toolchain(argv[3] == "interpret")
        except Exception as e:  # noqa: BLE001
            print("kgb_record: torch or triton missing: %s" % e, file=sys.stderr)
            return 3
        return serve(argv[2], argv[3] == "interpret")
    outdir = argv[2] if len(argv) > 2 else "."
    try:
        text = sys.stdin.read() if argv[1] == "-" else open(argv[1]).read()
    except OSError as e:
        print("kgb_record: bad request: %s" % e, file=sys.stderr)
        return 2
    return _run_request(text, outdir)


def _run_request(text, outdir, watch=None):
    """A request's text (one request or a batch) recorded into outdir; the exit status.
    In the recorder server (watch), torch and Triton are imported already: a request
    for the other mode is refused (exit 2)."""
    try:
        req = load_request(text)
        batch = req.get("batch")
        if batch is not None:
            if not isinstance(batch, list) or not all(isinstance(r, dict) for r in batch):
                raise RequestError("batch: expected a list of request objects")
            interpret = req.get("interpret")
        else:
            prepare_module(req)
            interpret = req.get("interpret")
        if interpret is not None and not isinstance(interpret, bool):
            raise RequestError("interpret: expected true, false or null")
        if watch is not None and (batch is None or
                                  bool(interpret) != (os.environ.get("TRITON_INTERPRET") == "1")):
            raise RequestError("the recorder server takes batches of its own mode (%s)"
                               % ("interpret" if os.environ.get("TRITON_INTERPRET") == "1" else "device"))
    except (OSError, ValueError, RequestError) as e:
        print("kgb_record: bad request: %s" % e, file=sys.stderr)
        return 2
    if watch is None:
        try:
            import_toolchain(interpret)
        except Exception as e:  # noqa: BLE001
            print("kgb_record: torch or triton missing: %s" % e, file=sys.stderr)
            return 3
    if batch is not None:
        t = req.get("timeout_s", 180)
        d = req.get("device_index")
        par = req.get("parallel")
        per = req.get("cases_per_child")
        return run_batch(batch, outdir, float(t) if isinstance(t, (int, float)) and t > 0 else 180.0,
                         d if isinstance(d, int) and d >= 0 else None,
                         par if isinstance(par, int) and 0 < par <= 64 else 1, req.get("device_lock"),
                         per if isinstance(per, int) and 0 < per <= 1024 else 1, req.get("compile_memo"),
                         watch)
    try:
        return record_one(req, outdir)
    except RequestError as e:
        print("kgb_record: bad request: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
