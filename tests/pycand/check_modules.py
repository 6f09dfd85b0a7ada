"""KernelGenBench-format modules checked against torch on kgb's catalog cases, without
kgb's recorder: for every module DIR/<op>.py and every chosen case of operator <op>,
the case's inputs (kgb's shapes, strides, storage offsets, dtypes and values, on the
CPU), the overload and arguments the PyTorch provider's mapping calls
(torch_aten.overload_call), the module's wrapper for that overload (`<op>_<Overload>`,
`<op>` for `.default`) run under Triton's interpreter, and its result compared with
torch's own overload on the same inputs. Unless --no-out, the overload's out= form
(`<op>_out`, `<op>_Scalar_out`, ...) is called too, with an out tensor of the
result's shape and dtype, and must return that tensor filled with the same values.
Inputs must come back unchanged.

    check_modules.py [--all | --most N] [--no-out] [--ops a,b] [--quiet] [DIR]

Default: per operator the small untimed cases case_batch.py picks (one of each
parameter setting first, at most 12); --all every case of the catalog. Prints one line
per failing case, one per module (cases passed, seconds), and exits 1 on any mismatch,
missing wrapper or error. Needs libkgb (KGB_LIBRARY or build/rel/lib) and torch."""
import glob
import importlib.util
import os
import sys
import time

os.environ["TRITON_INTERPRET"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, here)
import torch  # noqa: E402
import kgb  # noqa: E402
from kgb.providers import torch_aten  # noqa: E402
from case_batch import pick  # noqa: E402

_CONFIG = [0]


def _autotune_one_config():
    """Triton's autotuner benchmarks on a device, which the interpreter has not: run one
    configuration instead, a different one per case (the case's index modulo their
    number), so that every configuration a module offers is checked across the cases."""
    from triton.runtime.autotuner import Autotuner

    def run(self, *args, **kwargs):
        c = self.configs[_CONFIG[0] % len(self.configs)]
        kw = dict(kwargs)
        kw.update(c.all_kwargs())
        if c.pre_hook:
            c.pre_hook(dict(dict(zip(self.arg_names, args)), **kw))
        return self.fn.run(*args, **kw)
    Autotuner.run = run


def _interpreter_scalar_index():
    """Triton's interpreter holds a kernel's scalars as one-element arrays and converts
    them with int(array), which NumPy 2.4 refuses for arrays that are not 0-d: a loop
    `for i in range(0, n, BLOCK)` over a run-time n fails there before the module's code
    is reached. Convert through .item() instead (what older NumPy did)."""
    from triton.runtime import interpreter
    orig = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        orig(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))
    interpreter._patch_lang_tensor = patched

    # It also keeps bf16 as its raw uint16 bits and multiplies those bits in tl.dot:
    # widen bf16 operands to fp32 first (a GPU's dot takes bf16 as numbers).
    import triton.language as tl
    builder = interpreter.InterpreterBuilder
    orig_dot = builder.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        def widen(h):
            if h.dtype.scalar != tl.bfloat16:
                return h
            data = interpreter._convert_float(h.data, tl.bfloat16, tl.float32, None).view(interpreter.np.float32)
            return interpreter.TensorHandle(data, tl.float32)
        return orig_dot(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)
    builder.create_dot = create_dot


TOL = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float64: 1e-9}


def wrapper_name(op, ovl):
    name = ovl._overloadname
    return op if name == "default" else "%s_%s" % (op, name)


def out_overload(ovl):
    """The out= overload of ovl's packet whose other arguments are ovl's, or None."""
    want = [(a.name, str(a.type)) for a in ovl._schema.arguments]
    packet = getattr(torch.ops.aten, ovl._schema.name.split("::")[-1])
    for name in packet.overloads():
        o = getattr(packet, name)
        args = o._schema.arguments
        outs = [a for a in args if a.is_out]
        if len(outs) == 1 and [(a.name, str(a.type)) for a in args if not a.is_out] == want:
            return o
    return None


def expected(case, ovl, args, kwargs):
    try:
        return ovl(*args, **kwargs)
    except (RuntimeError, NotImplementedError):
        # torch has no CPU kernel for some half-precision forms (_softmax with
        # half_to_float, rounding divisions): the same overload in fp32, rounded to the
        # case's output dtype
        up = lambda v: v.float() if isinstance(v, torch.Tensor) and v.dtype in (torch.float16, torch.bfloat16) else v
        fargs = [up(a) for a in args]
        fkw = {k: up(v) for k, v in kwargs.items()}
        if ovl._overloadname == "default" and ovl._schema.name == "aten::_softmax":
            fargs[2] = False
        r = ovl(*fargs, **fkw)
        return r.to(kgb.torch_dtype(case.tensor("out").dtype))


def compare(got, want):
    """None when got matches want, else why not."""
    if not isinstance(got, torch.Tensor):
        return "returned %s, not a tensor" % type(got).__name__
    if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
        return "returned %s %s, torch gives %s %s" % (got.dtype, list(got.shape), want.dtype, list(want.shape))
    if got.numel() == 0:
        return None
    if not want.is_floating_point():
        bad = (got != want).sum().item()
        return None if bad == 0 else "%d element(s) differ" % bad
    g, w = got.double(), want.double()
    nan = torch.isnan(w)
    if not torch.equal(torch.isnan(g), nan):
        return "NaN where torch has none (or the reverse)"
    e = (g - w).abs().masked_fill(nan, 0)
    fin = w.masked_fill(nan, 0).abs()
    scale = max(1.0, fin.max().item())
    tol = TOL[want.dtype] * scale
    m = e.max().item()
    return None if m <= tol else "max err %.3g > %.3g" % (m, tol)


def check_overloads(mod, opname):
    """Every overload torch lists for the operator needs its wrapper; those taking only
    Python numbers are called on two sample values and compared with torch's. Returns
    the problems."""
    bad = []
    packet = getattr(torch.ops.aten, opname)
    sample = {"int": 7, "float": 7.5, "Scalar": 7.5, "complex": 1.5 + 2j}
    for name in packet.overloads():
        ovl = getattr(packet, name)
        fname = wrapper_name(opname, ovl)
        fn = getattr(mod, fname, None)
        if fn is None:
            bad.append("%s: no function %s" % (ovl, fname))
            continue
        types = [str(a.type) for a in ovl._schema.arguments]
        if types and all(t in sample for t in types):
            args = [sample[t] if i == 0 else (2 if t == "int" else 2.0 if t != "complex" else 0.5 - 1j)
                    for i, t in enumerate(types)]
            want, got = ovl(*args), fn(*args)
            if type(want) is not type(got) or abs(want - got) > 1e-12 * max(1, abs(want)):
                bad.append("%s%s: %r, torch gives %r" % (fname, tuple(args), got, want))
    return bad


def check_case(mod, opname, case, use_out):
    inputs = case.inputs("torch")
    before = {k: v.clone() for k, v in inputs.items()}
    ovl, args, kwargs = torch_aten.overload_call(case, inputs, device="cpu")
    want = expected(case, ovl, args, kwargs)
    fname = wrapper_name(opname, ovl)
    fn = getattr(mod, fname, None)
    if fn is None:
        return "%s: no function %s" % (ovl, fname)
    with torch.no_grad():
        got = fn(*args, **kwargs)
    why = compare(got, want)
    if why:
        return "%s via %s: %s" % (ovl, fname, why)
    for k, v in inputs.items():
        if not torch.equal(v, before[k]) and not (v.is_floating_point() and torch.isnan(v).any()):
            return "%s: input %s changed" % (fname, k)
    if use_out:
        oo = out_overload(ovl)
        if oo is not None:
            oname = wrapper_name(opname, oo)
            ofn = getattr(mod, oname, None)
            if ofn is None:
                return "%s: no function %s" % (oo, oname)
            buf = torch.empty(want.shape, dtype=want.dtype)
            with torch.no_grad():
                r = ofn(*args, **dict(kwargs, out=buf))
            if r is not buf:
                return "%s did not return its out tensor" % oname
            why = compare(buf, want)
            if why:
                return "%s via %s: %s" % (oo, oname, why)
    return None


def main(argv):
    every = "--all" in argv
    use_out = "--no-out" not in argv
    quiet = "--quiet" in argv
    most, ops, d = 12, None, os.path.join(here, "..", "..", "examples", "python", "aten")
    rest = [a for a in argv if a not in ("--all", "--no-out", "--quiet")]
    i = 0
    while i < len(rest):
        if rest[i] == "--most":
            most, i = int(rest[i + 1]), i + 2
        elif rest[i] == "--ops":
            ops, i = rest[i + 1].split(","), i + 2
        else:
            d, i = rest[i], i + 1
    files = sorted(glob.glob(os.path.join(d, "*.py")))
    if ops is not None:
        files = [f for f in files if os.path.basename(f)[:-3] in ops]
    if not files:
        print("check_modules: no modules in %s" % d)
        return 1
    _autotune_one_config()
    _interpreter_scalar_index()
    total_bad = total = 0
    t_all = time.time()
    for f in files:
        opname = os.path.basename(f)[:-3]
        op = kgb.operator(opname)
        spec = importlib.util.spec_from_file_location("kgb_mod_" + opname, f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for why in check_overloads(mod, opname):
            print("%s: %s" % (opname, why))
            total_bad += 1
        idx = range(op.cases) if every else pick(op, most)
        t0 = time.time()
        npass = 0
        for ci in idx:
            case = kgb.Case(op, ci)
            _CONFIG[0] = ci
            try:
                why = check_case(mod, opname, case, use_out)
            except Exception as e:  # noqa: BLE001
                why = "raised %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            if why:
                print("%s #%d %s: %s" % (opname, ci, case.label, why))
            else:
                npass += 1
                if not quiet:
                    print("%s #%d %s: ok" % (opname, ci, case.label), flush=True)
            case.close()
        n = len(idx)
        total += n
        total_bad += n - npass
        print("MODULE %s: %d of %d case(s) pass (%.1f s)" % (opname, npass, n, time.time() - t0), flush=True)
    print("SUMMARY %d module(s), %d case(s), %d fail (%.1f s)" % (len(files), total, total_bad, time.time() - t_all))
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
