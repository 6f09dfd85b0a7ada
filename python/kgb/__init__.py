"""kgb's operator catalog from Python: the inputs kgb generates for (operator, case,
seed) as NumPy arrays or torch tensors with kgb's exact sizes, strides and storage
offset, and kgb's own validator for an output. A thin ctypes layer over libkgb.so
(include/kgb.h); see docs/python.md."""
import ctypes

from ._lib import lib, OpInfo, TensorInfo, VerdictInfo, StatsInfo

__all__ = ["KgbError", "Operator", "TensorSpec", "Verdict", "Case", "Sampler", "operators", "operator",
           "version", "catalog_version", "POISON"]

POISON = 0xFF  # the byte output buffers are filled with before a run (as the worker's first run)
IN, OUT, INOUT = 0, 1, 2
_ROLE_NAMES = {IN: "in", OUT: "out", INOUT: "inout"}
_DATASETS = {"aten": 1, "vllm": 2, "cublas": 4, "demo": 8}


class KgbError(Exception):
    """A bad argument or a failure reported by libkgb."""


def _s(b):
    return None if b is None else b.decode()


def version():
    return _s(lib.kgb_lib_version())


def catalog_version():
    return _s(lib.kgb_lib_catalog_version())


def ref_cache_counts():
    """This process's reference cache lookups so far: (hits, misses)."""
    h, m = ctypes.c_uint64(0), ctypes.c_uint64(0)
    lib.kgb_lib_ref_cache_counts(ctypes.byref(h), ctypes.byref(m))
    return h.value, m.value


class Operator:
    """One operator of the catalog (read-only attributes from kgb_lib_op_info)."""

    def __init__(self, index):
        info = OpInfo()
        if lib.kgb_lib_op_info(index, ctypes.byref(info)) != 0:
            raise KgbError("operator index %d is out of range" % index)
        self.index = index
        self.name = _s(info.name)
        self.source = _s(info.source)
        self.category = _s(info.category)
        self.dtypes = _s(info.dtypes).split()
        self.summary = _s(info.summary)
        self.signature = _s(info.signature)
        self.deviation = _s(info.deviation)
        self.datasets = [n for n, bit in _DATASETS.items() if info.datasets & bit]
        self.cases = info.cases
        self.smoke_cases = info.smoke_cases
        self.inplace = bool(info.inplace)

    def case(self, index, seed=1):
        return Case(self, index, seed)

    def heldout_index(self, base, h):
        """The index of held-out case h of public case base (0: the operator has none);
        Case builds it with a held-out key."""
        return lib.kgb_lib_heldout_index(self.index, base, h)

    def __repr__(self):
        return "<kgb.Operator %s (%s, %d cases)>" % (self.name, self.source, self.cases)


def operators(dataset=None):
    """Every operator of the catalog, in catalog order; dataset: "aten", "vllm", "cublas",
    "demo", "nocublas", "ms" or "all" to keep only those."""
    mask = None
    if dataset is not None:
        m = ctypes.c_uint32()
        if lib.kgb_lib_dataset_mask(dataset.encode(), ctypes.byref(m)) != 0:
            raise KgbError("unknown dataset %r (aten, vllm, cublas, nocublas, ms, demo, all)" % dataset)
        mask = m.value
    ops = [Operator(i) for i in range(lib.kgb_lib_op_count())]
    if mask is not None:
        ops = [o for o in ops if any(mask & _DATASETS[d] for d in o.datasets)]
    return ops


def operator(name):
    i = lib.kgb_lib_op_find(name.encode())
    if i < 0:
        raise KgbError("no operator named %r in the catalog" % name)
    return Operator(i)


class TensorSpec:
    """A tensor of a case: name, role ("in", "out", "inout"), dtype (kgb name: "f16", ...),
    shape, stride (elements), storage_offset (elements), storage (elements of the buffer)."""

    def __init__(self, index, info):
        self.index = index
        self.name = _s(info.name)
        self.dtype = _s(info.dtype)
        self.role = _ROLE_NAMES[info.role]
        self.elem_size = info.elem_size
        self.shape = tuple(info.shape[d] for d in range(info.ndim))
        self.stride = tuple(info.stride[d] for d in range(info.ndim))
        self.storage_offset = info.storage_offset
        self.storage = info.storage
        self.numel = info.numel

    @property
    def nbytes(self):
        return self.storage * self.elem_size

    def __repr__(self):
        return "<kgb.TensorSpec %s %s %s shape=%s stride=%s offset=%d storage=%d>" % (
            self.name, self.role, self.dtype, list(self.shape), list(self.stride), self.storage_offset,
            self.storage)


class Verdict:
    """kgb's verdict on one run: name ("pass", "wrong_result", ...), code (kgb.Verdict
    number), max_abs_err, max_rel_err, message (the first failing element)."""

    def __init__(self, v):
        self.code = v.verdict
        self.name = _s(v.name)
        self.max_abs_err = v.max_abs_err
        self.max_rel_err = v.max_rel_err
        self.message = _s(v.message)

    @property
    def ok(self):
        return self.name == "pass"

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return "<kgb.Verdict %s%s>" % (self.name, (": " + self.message) if self.message else "")


# ---- buffers: kgb dtype names -> numpy / torch ----

_NP = {"bool": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64",
       "f16": "float16", "bf16": "uint16", "f32": "float32", "f64": "float64",
       "f8e4m3": "uint8", "f8e5m2": "uint8"}
_TORCH = {"bool": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64",
          "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
          "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}


def numpy_dtype(kgb_dtype):
    """The NumPy dtype of a kgb dtype. NumPy has no bfloat16 and no fp8: bf16 is given as
    its raw uint16 bit patterns, f8e4m3 and f8e5m2 as their uint8 bytes."""
    import numpy as np
    return np.dtype(_NP[kgb_dtype])


def torch_dtype(kgb_dtype):
    import torch
    return getattr(torch, _TORCH[kgb_dtype])


def _np_view(spec, raw):
    """A strided NumPy view of spec over the bytearray/ndarray raw (storage bytes)."""
    import numpy as np
    dt = numpy_dtype(spec.dtype)
    flat = np.frombuffer(raw, dtype=dt, count=spec.storage) if spec.storage else np.zeros(1, dt)
    return np.lib.stride_tricks.as_strided(flat[spec.storage_offset:], shape=spec.shape,
                                           strides=[s * dt.itemsize for s in spec.stride],
                                           writeable=True)


def _torch_flat(spec, raw, device):
    import torch
    n = max(spec.nbytes, spec.elem_size)
    buf = torch.zeros(n, dtype=torch.uint8)
    if spec.nbytes:
        buf[:spec.nbytes] = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
    flat = buf.view(torch_dtype(spec.dtype))
    return flat.to(device) if device is not None else flat


def _torch_view(spec, flat):
    import torch
    return torch.as_strided(flat, spec.shape, spec.stride, spec.storage_offset)


def _to_bytes(spec, value, base):
    """Write value (any layout, spec's shape) into a copy of base (storage bytes) through
    spec's strided view; returns the bytes."""
    buf = bytearray(base)
    mod = type(value).__module__
    if mod.startswith("torch"):
        import torch
        v = value.detach()
        if v.dtype != torch_dtype(spec.dtype):
            raise KgbError("tensor %s: dtype %s, kgb expects %s" % (spec.name, v.dtype, spec.dtype))
        if tuple(v.shape) != spec.shape:
            raise KgbError("tensor %s: shape %s, kgb expects %s" % (spec.name, list(v.shape), list(spec.shape)))
        if spec.nbytes == 0:
            return bytes(buf)
        flat = torch.frombuffer(buf, dtype=torch.uint8).view(torch_dtype(spec.dtype))
        torch.as_strided(flat, spec.shape, spec.stride, spec.storage_offset).copy_(v.cpu())
        return bytes(buf)
    import numpy as np
    v = np.asarray(value)
    if v.dtype != numpy_dtype(spec.dtype):
        raise KgbError("tensor %s: dtype %s, kgb expects %s" % (spec.name, v.dtype, spec.dtype))
    if v.shape != spec.shape:
        raise KgbError("tensor %s: shape %s, kgb expects %s" % (spec.name, list(v.shape), list(spec.shape)))
    if spec.nbytes:
        arr = np.frombuffer(buf, dtype=np.uint8)  # writable: backed by the bytearray
        _np_view(spec, arr)[...] = v
    return bytes(buf)


def _flat_bytes(flat):
    """The bytes of a whole storage buffer made by Case._make (bytearray or torch tensor)."""
    if isinstance(flat, bytearray):
        return bytes(flat)
    import torch
    return flat.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()


class Case:
    """One case of an operator with its inputs for one seed.

    Case(op, index, seed=1, heldout_key=0): op is an Operator or an operator name; with a
    campaign's held-out key, index may be a held-out case's (Operator.heldout_index)."""

    def __init__(self, op, index, seed=1, heldout_key=0):
        if isinstance(op, str):
            op = operator(op)
        self.op = op
        self.index = index
        self.seed = seed
        err = ctypes.create_string_buffer(512)
        h = lib.kgb_lib_case_new_keyed(op.index, index, seed, heldout_key, err, len(err))
        if not h:
            raise KgbError(err.value.decode())
        self._h = ctypes.c_void_p(h)
        self.label = _s(lib.kgb_lib_case_label(self._h))
        self.timed = bool(lib.kgb_lib_case_timed(self._h))
        rt, at = ctypes.c_double(), ctypes.c_double()
        lib.kgb_lib_case_tolerance(self._h, ctypes.byref(rt), ctypes.byref(at))
        self.rtol, self.atol_rel = rt.value, at.value
        self.params = {}
        for i in range(lib.kgb_lib_case_param_count(self._h)):
            self.params[_s(lib.kgb_lib_case_param_name(self._h, i))] = _s(lib.kgb_lib_case_param_value(self._h, i))
        self.scalars, self.scalar_dtypes = {}, {}
        for i in range(lib.kgb_lib_case_scalar_count(self._h)):
            n, d, v = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_double()
            lib.kgb_lib_case_scalar(self._h, i, ctypes.byref(n), ctypes.byref(d), ctypes.byref(v))
            self.scalars[_s(n.value)] = v.value
            self.scalar_dtypes[_s(n.value)] = _s(d.value)
        self.symbols = {}
        for i in range(lib.kgb_lib_case_symbol_count(self._h)):
            n, v, st = ctypes.c_char_p(), ctypes.c_double(), ctypes.c_char_p()
            lib.kgb_lib_case_symbol(self._h, i, ctypes.byref(n), ctypes.byref(v), ctypes.byref(st))
            val = _s(st.value) if st.value is not None else v.value
            if isinstance(val, float) and val.is_integer():
                val = int(val)
            self.symbols[_s(n.value)] = val
        self.tensors = []
        for i in range(lib.kgb_lib_case_tensor_count(self._h)):
            ti = TensorInfo()
            lib.kgb_lib_case_tensor(self._h, i, ctypes.byref(ti))
            self.tensors.append(TensorSpec(i, ti))
        self._given = {}

    def close(self):
        if getattr(self, "_h", None) and self._h.value:
            lib.kgb_lib_case_destroy(ctypes.byref(self._h))

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<kgb.Case %s #%d seed=%d %s>" % (self.op.name, self.index, self.seed, self.label)

    def tensor(self, name):
        for t in self.tensors:
            if t.name == name:
                return t
        raise KgbError("op %s case %d has no tensor %r (it has %s)" % (
            self.op.name, self.index, name, ", ".join(t.name for t in self.tensors)))

    def raw_input(self, name):
        """The storage bytes kgb uploads for tensor name (zeros for an output)."""
        t = self.tensor(name)
        n = ctypes.c_size_t()
        err = ctypes.create_string_buffer(512)
        p = lib.kgb_lib_case_input(self._h, t.index, ctypes.byref(n), err, len(err))
        if not p:
            raise KgbError(err.value.decode())
        return ctypes.string_at(p, n.value) if n.value else b""

    def raw_reference(self, name):
        """The storage bytes of kgb's CPU reference for output tensor name."""
        t = self.tensor(name)
        n = ctypes.c_size_t()
        err = ctypes.create_string_buffer(512)
        p = lib.kgb_lib_case_reference(self._h, t.index, ctypes.byref(n), err, len(err))
        if not p:
            raise KgbError(err.value.decode())
        return ctypes.string_at(p, n.value) if n.value else b""

    def _make(self, spec, raw, kind, device):
        """(view, flat): spec's strided view over a fresh buffer holding raw, and the buffer."""
        if kind == "torch":
            flat = _torch_flat(spec, raw, device)
            return _torch_view(spec, flat), flat
        if kind == "numpy":
            if device is not None:
                raise KgbError("NumPy arrays live on the host: device must be None")
            flat = bytearray(raw)
            return _np_view(spec, flat), flat
        raise KgbError("kind must be 'numpy' or 'torch', not %r" % kind)

    def inputs(self, kind="numpy", device=None):
        """Every IN and INOUT tensor as kgb generates it for this seed: a dict name ->
        array/tensor with kgb's shape, strides and storage offset over a fresh copy of the
        whole storage. validate() later checks that the IN tensors were left unchanged."""
        out = {}
        self._given = {}
        for t in self.tensors:
            if t.role != "out":
                out[t.name], flat = self._make(t, self.raw_input(t.name), kind, device)
                if t.role == "in":
                    self._given[t.name] = flat
        return out

    def keep_inputs_on_host(self):
        """Copy the IN tensors last given by inputs() to host memory, so that validate()
        can check them after the device is given up (or reused)."""
        self._given = {n: f if isinstance(f, bytearray) else f.detach().cpu() for n, f in self._given.items()}

    def outputs(self, kind="numpy", device=None):
        """Every OUT tensor as a buffer filled with the poison byte, with kgb's layout (for
        a provider that writes its results in place)."""
        return {t.name: self._make(t, bytes([POISON]) * t.nbytes, kind, device)[0]
                for t in self.tensors if t.role == "out"}

    def reference(self, name, kind="numpy"):
        t = self.tensor(name)
        return self._make(t, self.raw_reference(name), kind, None)[0]

    def validate(self, results, check_inputs=True, poison=POISON):
        """Judge results (dict name -> array/tensor of kgb's shape and dtype, any layout;
        one entry per OUT and INOUT tensor) with kgb's validator. Returns a Verdict.
        check_inputs: also check that the IN tensors last returned by inputs() are unchanged.
        poison: the byte the OUT buffers hold before the results are written into them (a
        provider validating two runs gives each its own)."""
        ptrs = (ctypes.c_void_p * max(1, len(self.tensors)))()
        keep = []
        names = set(results)
        for t in self.tensors:
            if t.role == "in":
                if check_inputs and t.name in self._given:
                    b = _flat_bytes(self._given[t.name])[:t.nbytes] or b"\0"
                    keep.append(b)
                    ptrs[t.index] = ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p)
                continue
            if t.name not in results:
                raise KgbError("op %s case %d: no result for output %s" % (self.op.name, self.index, t.name))
            names.discard(t.name)
            base = bytes([poison]) * t.nbytes if t.role == "out" else self.raw_input(t.name)
            b = _to_bytes(t, results[t.name], base)
            if not b:
                b = b"\0"
            keep.append(b)
            ptrs[t.index] = ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p)
        if names:
            raise KgbError("op %s case %d: %s not an output of the case" % (
                self.op.name, self.index, ", ".join(sorted(names))))
        v = VerdictInfo()
        if lib.kgb_lib_case_validate(self._h, ptrs, poison, ctypes.byref(v)) != 0:
            raise KgbError(_s(v.message))
        return Verdict(v)


class Sampler:
    """kgb's timing stopping rule (the worker's): add(sample_ns, wall_ns) after each
    sample until done; stats() gives median, min, max, p10, p90, mean, stdev, rse, n."""

    def __init__(self, budget_ns):
        self._h = ctypes.c_void_p(lib.kgb_lib_sampler_new(float(budget_ns)))

    def add(self, sample_ns, wall_ns):
        lib.kgb_lib_sampler_add(self._h, float(sample_ns), float(wall_ns))

    @property
    def done(self):
        return bool(lib.kgb_lib_sampler_done(self._h))

    def stats(self):
        s = StatsInfo()
        lib.kgb_lib_sampler_stats(self._h, ctypes.byref(s))
        return {n: getattr(s, n) for n, _ in StatsInfo._fields_}

    def __del__(self):
        if getattr(self, "_h", None) and self._h.value:
            lib.kgb_lib_sampler_destroy(ctypes.byref(self._h))
