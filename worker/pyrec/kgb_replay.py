#!/usr/bin/env python3
"""kgb's replay of recorded Python + Triton plans through Triton's interpreter, on the
CPU (docs/python-candidates.md, "In the executor").

The executor runs this in a sandboxed child, once per job, for the cases whose
recording passed, on a backend that does not run Triton kernels. It never calls the
candidate's wrapper: it launches the kernels the plan names, with the plan's grids,
constants and scalars, on buffers holding kgb's own bytes (the case's inputs, kgb's
poison in the outputs, guard bands around every buffer), and writes back every
buffer whole; the executor judges them with kgb's validator.

stdin: one line of JSON, then the bytes it points into:
    {"sources": {"add.py": "<module text>"},     # the job's sources by name
     "timeout_s": 180, "parallel": 2,
     "cases": [{"plan": {...},                   # the recorded plan (docs/candidate-format.md)
                "guard_bytes": 4096,
                "buffers": [{"name": "self", "kind": "tensor", "bytes": 8, "guard": 171}, ...],
                "runs": [{"load": {"self": [OFFSET, LEN], "s3": {"fill": 7}}}, ...]}]}
Each run fills every buffer's guard bands with its guard byte, loads the buffers it
names (bytes from the blob, or a fill), leaves the others as the previous run left
them, launches every kernel of the plan in order, and writes
OUTDIR/<case>/r<run>.<buffer index> (guard band, contents, guard band). A kernel is found by (source, entry): the job's
source of that name, else a file of that name next to this script (kgb's own kernels).
Every case runs in its own child forked after torch and Triton are imported;
OUTDIR/batch.json gives each child's exit status, signal, whether it ran past
timeout_s, and its error (a launch that raised).

Exit status: 0 the batch ran, 2 a malformed request, 3 torch or Triton is missing.
"""

import inspect
import json
import os
import sys
import traceback

# a plan signature's pointer types as torch dtypes (worker/triton_compile.py's names)
POINTER_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
                  "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
                  "i1": "bool", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}
HERE = os.path.dirname(os.path.abspath(__file__))


class ReplayError(Exception):
    pass


def number(text):
    """A plan's literal ("3", "-1", "0.5", "1e-05", "True") as a Python number."""
    s = str(text).strip()
    if s in ("True", "False"):
        return s == "True"
    try:
        return int(s, 0)
    except ValueError:
        return float(s)


_MODULES = {}


def kernel(sources, source, entry):
    """The Triton function `entry` of source `source` (imported once per child)."""
    if source not in _MODULES:
        import importlib.util
        text = sources.get(source)
        if text is None:
            path = os.path.join(HERE, os.path.basename(source))
            if not os.path.isfile(path):
                raise ReplayError("kernel '%s': no source named '%s' in the job or next to the replayer"
                                  % (entry, source))
        else:
            base = os.path.basename(source)
            if not base.endswith(".py") or base.startswith("."):
                base = "candidate.py"
            path = os.path.abspath(base)
            with open(path, "w") as f:
                f.write(text)
        # from here on the candidate's code runs: it may open nothing outside its sandbox
        import kgb_confine
        kgb_confine.install([os.path.dirname(path)])
        name = "kgb_replay_%d" % len(_MODULES)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _MODULES[source] = mod
    fn = getattr(_MODULES[source], entry, None)
    # autotune and heuristics wrappers hold the kernel in .fn: the plan's configuration
    # is launched on the kernel itself
    for _ in range(8):
        if fn is None or type(fn).__name__ in ("JITFunction", "InterpretedFunction"):
            break
        fn = getattr(fn, "fn", None)
    if fn is None or not hasattr(fn, "__getitem__"):
        raise ReplayError("source '%s' defines no Triton kernel '%s'" % (source, entry))
    return fn


def replay_case(case, sources, blob, outdir):
    import torch
    g = int(case["guard_bytes"])
    bufs = {}
    for b in case["buffers"]:
        n = int(b["bytes"])
        bufs[b["name"]] = (torch.empty(g + n + g, dtype=torch.uint8), n, int(b["guard"]))
    kernels = case["plan"].get("kernels") or []
    for r, run in enumerate(case["runs"]):
        for name, (t, n, guard) in bufs.items():
            t[:g] = guard
            t[g + n:] = guard
            how = run.get("load", {}).get(name)
            if isinstance(how, dict):
                t[g:g + n] = int(how["fill"])
            elif how is not None:
                off, ln = int(how[0]), int(how[1])
                t[g:g + ln] = torch.frombuffer(blob, dtype=torch.uint8, count=ln, offset=off) if ln else t[g:g]
        for ki, K in enumerate(kernels):
            launch(ki, K, bufs, g, sources)
        for bi, (t, n, guard) in enumerate(bufs.values()):
            with open(os.path.join(outdir, "r%d.%d" % (r, bi)), "wb") as f:
                f.write(t.numpy().tobytes())


def launch(ki, K, bufs, g, sources):
    import torch
    sig = [s.strip() for s in (K.get("signature") or "").split(",")] if K.get("signature") else []
    args = []
    for ai, a in enumerate(K.get("args") or []):
        name = a.get("tensor") or a.get("scratch")
        if name is not None:
            if name not in bufs:
                raise ReplayError("kernels[%d].args[%d]: no buffer '%s'" % (ki, ai, name))
            t, n, _ = bufs[name]
            ty = sig[ai] if ai < len(sig) else "*u8"
            dt = getattr(torch, POINTER_DTYPES.get(ty.lstrip("*"), "uint8"))
            es = torch.empty(0, dtype=dt).element_size()
            args.append(t[g:g + n - n % es].view(dt))
        elif "scalar" in a:
            v = number(a["scalar"])
            args.append(float(v) if a.get("type", "").startswith("f") else int(v))
        else:
            raise ReplayError("kernels[%d].args[%d]: %s cannot be replayed" % (ki, ai, json.dumps(a)[:100]))
    cfg = (K.get("configs") or [{}])[0]
    consts = {k: number(v) for k, v in (cfg.get("constants") or {}).items()}
    grid = tuple(int(number(x)) for x in (K.get("grid") or ["1"]))
    fn = kernel(sources, K.get("source", ""), K["entry"])
    # the plan's arguments are the kernel's parameters that are not constexpr, in
    # order (as the recorder listed them); constexprs may come between them
    pyfn = getattr(fn, "fn", fn)
    names = [p.name for p in inspect.signature(pyfn).parameters.values()
             if not _is_constexpr(p) and p.name not in consts]
    if len(names) != len(args):
        raise ReplayError("kernel '%s' takes %d arguments that are not constexpr; the plan passes %d"
                          % (K["entry"], len(names), len(args)))
    fn[grid](**dict(zip(names, args)), **consts)


def _is_constexpr(p):
    a = p.annotation
    if a is inspect.Parameter.empty:
        return False
    return "constexpr" in (a if isinstance(a, str) else getattr(a, "__name__", repr(a)))


def main(argv):
    outdir = argv[1] if len(argv) > 1 else "."
    data = sys.stdin.buffer.read()
    nl = data.find(b"\n")
    try:
        req = json.loads(data[:nl if nl >= 0 else len(data)])
        cases = req["cases"]
        sources = req.get("sources") or {}
        if not isinstance(cases, list) or not isinstance(sources, dict):
            raise ValueError("cases: expected a list, sources an object")
    except (ValueError, KeyError, TypeError) as e:
        print("kgb_replay: bad request: %s" % e, file=sys.stderr)
        return 2
    blob = bytearray(data[nl + 1:]) if nl >= 0 else bytearray()
    os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print("kgb_replay: torch or triton missing: %s" % e, file=sys.stderr)
        return 3
    # the interpreter's scalars as the recording saw them (NumPy 2 refuses int() of a
    # one-element array that a kernel's run-time bound or reduction result is)
    from kgb_record import _interpreter_scalar_index
    _interpreter_scalar_index()
    import signal
    import time
    t = req.get("timeout_s", 180)
    timeout_s = float(t) if isinstance(t, (int, float)) and t > 0 else 180.0
    par = req.get("parallel")
    par = par if isinstance(par, int) and 0 < par <= 64 else 1
    status = [None] * len(cases)
    running = {}
    pending = list(enumerate(cases))
    while pending or running:
        while pending and len(running) < par:
            i, case = pending.pop(0)
            sub = os.path.abspath(os.path.join(outdir, str(i)))
            os.makedirs(sub, exist_ok=True)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                rc = 1
                try:
                    os.chdir(sub)
                    replay_case(case, sources, blob, ".")
                    rc = 0
                except BaseException as e:  # noqa: BLE001 - the kernel's fault, or a bad plan
                    msg = "%s: %s" % (type(e).__name__, e)
                    with open("error.txt", "w") as f:
                        f.write(msg.strip().splitlines()[-1][:400] if msg.strip() else type(e).__name__)
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(rc)
            running[pid] = (i, time.monotonic() + timeout_s)
        pid, st = os.waitpid(-1, os.WNOHANG)
        done = [(pid, st, False)] if pid else []
        now = time.monotonic()
        for p, (i, deadline) in list(running.items()):
            if not pid and now > deadline:
                os.kill(p, signal.SIGKILL)
                done.append((p, os.waitpid(p, 0)[1], True))
        for p, st, timed_out in done:
            i = running.pop(p)[0]
            err = None
            try:
                with open(os.path.join(outdir, str(i), "error.txt")) as f:
                    err = f.read()
            except OSError:
                pass
            status[i] = {"exit": os.WEXITSTATUS(st) if os.WIFEXITED(st) else -1,
                         "signal": os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0,
                         "timed_out": timed_out, "error": err}
        if not done:
            time.sleep(0.01)
    with open(os.path.join(outdir, "batch.json"), "w") as f:
        json.dump(status, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
