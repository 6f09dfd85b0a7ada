"""The native provider process: runs an operator's own library on kgb's cases for the
worker (worker/native_provider.c), under kgb's inputs, validator and timing rule.

    python -m kgb.providers.run < request.json

The request (JSON on stdin):

    {"op": "add", "cases": [0, 1, 2], "seed": 1, "device": "cpu" | "cuda:0",
     "timing": true, "budget_ms": 500, "results": "/path/results.jsonl",
     "device_lock": "/path/lock"}

device_lock (optional) is the worker's lock of the device (docs/worker.md, "Sharing a
device"): when several jobs share the device, each case's device work (its two
validated runs and its timing) runs holding an flock on it, so that no other job's
work overlaps the timed region. The case's inputs and CPU reference are computed
before it is taken. A case that has to wait for it first writes {"wait": 0}.

For every case, in order, a line {"start": 0} and then one JSON line with its result
are appended to the results file (default results.jsonl in the working directory),
flushed at once, so that the worker sees each case start and end and the lines written
before a crash survive:

    {"case": 0, "verdict": "pass", "message": "...", "max_abs_err": 0.0, "max_rel_err": 0.0,
     "timed": true, "timing": {"median_ns": ..., "min_ns": ..., "p10_ns": ..., "p90_ns": ...,
     "mean_ns": ..., "stdev_ns": ..., "samples": 40, "rse": 0.004, "method": "..."},
     "library": "torch 2.11.0", "device": "cpu: AMD EPYC ..."}

A failure that concerns every case (torch does not import, the device cannot be used)
is one line {"all": true, "verdict": "unsupported" | "infra_error", "message": ...}.

Per case: kgb.Case gives the inputs of (operator, case, seed) with kgb's exact sizes,
strides and storage offset on the device. Two validated runs, each on fresh inputs;
the results of each are written into OUT buffers that hold a poison byte (different in
the two runs) and judged by kgb's validator, which also checks that the
IN tensors are unchanged. A passing timed case is timed with kgb's stopping rule
(kgb.Sampler, the worker's): CUDA times the operator call alone with an event pair,
after an L2 flush, per sample; the CPU with the monotonic clock. INOUT tensors are
restored before every sample (outside the timed region), and the last timed run is
judged as well. On CUDA the samples are queued in batches, as the worker's executor
does (docs/backends.md, "Batches of timing samples"): 8 at first, doubling up to 256
(KGB_TIMING_BATCH caps it; 1 waits for every sample), cut to what the budget has left,
one wait per batch; each sample is still its own event pair. The timing record's
occupied_ns is how long the batches kept the device busy (restores and flushes
included)."""
import fcntl
import json
import os
import sys
import time
import traceback

RESULTS = "results.jsonl"


class Out:
    def __init__(self, path):
        self.f = open(path, "a")

    def line(self, obj):
        self.f.write(json.dumps(obj, sort_keys=True) + "\n")
        self.f.flush()


def _fail_all(out, verdict, message):
    out.line({"all": True, "verdict": verdict, "message": message})


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


class Device:
    """Where the operator runs: the torch device, its name, and the timer."""

    def __init__(self, torch, spec):
        self.torch = torch
        self.spec = spec
        self.flush_buf = None
        if spec == "cpu":
            self.dev = torch.device("cpu")
            self.name = "cpu: " + _cpu_name()
            self.cuda = False
            self.method = "monotonic-clock"
            return
        if not spec.startswith("cuda:"):
            raise ValueError("device '%s': expected cpu or cuda:N" % spec)
        if not torch.cuda.is_available():
            raise RuntimeError("torch %s has no usable CUDA device (torch.cuda.is_available() is False)"
                               % torch.__version__)
        idx = int(spec[5:])
        if idx >= torch.cuda.device_count():
            raise RuntimeError("device %s: torch sees %d CUDA device(s)" % (spec, torch.cuda.device_count()))
        self.dev = torch.device(spec)
        torch.cuda.set_device(self.dev)
        self.cuda = True
        self.name = "%s: %s" % (spec, torch.cuda.get_device_name(self.dev))
        self.method = "cuda-events+l2flush"
        l2 = getattr(torch.cuda.get_device_properties(self.dev), "L2_cache_size", 0) or (64 << 20)
        # twice the L2, so that nothing the operator reads survives the flush
        self.flush_buf = torch.empty(max(2 * l2, 32 << 20), dtype=torch.uint8, device=self.dev)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.dev)

    def flush(self):
        if self.flush_buf is not None:
            self.flush_buf.zero_()

    def time_batch(self, fn, restore, n):
        """CUDA: n samples queued back to back (restore, flush, fn between its own events),
        one wait. Returns ([ns of each fn], ns from the first restore to the last event,
        the last result)."""
        torch = self.torch
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2 * n + 1)]
        ev[0].record()
        r = None
        for i in range(n):
            restore()
            self.flush()
            ev[2 * i + 1].record()
            r = fn()
            ev[2 * i + 2].record()
        ev[-1].synchronize()
        times = [ev[2 * i + 1].elapsed_time(ev[2 * i + 2]) * 1e6 for i in range(n)]
        return times, ev[0].elapsed_time(ev[-1]) * 1e6, r

    def time_call(self, fn):
        """(result, ns of fn alone)."""
        if self.cuda:
            torch = self.torch
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            r = fn()
            b.record()
            b.synchronize()
            return r, a.elapsed_time(b) * 1e6
        t0 = time.monotonic_ns()
        r = fn()
        return r, float(time.monotonic_ns() - t0)


def _classify(e):
    """The verdict of an exception raised by the library."""
    msg = str(e).strip().splitlines()
    text = msg[0] if msg else type(e).__name__
    name = type(e).__name__
    low = text.lower()
    if isinstance(e, NotImplementedError) or "not implemented for" in low or "no kernel" in low \
            or "could not run" in low or "is only supported for" in low:
        return "unsupported", "%s: %s" % (name, text)
    if "out of memory" in low:
        return "resource_error", "%s: %s" % (name, text)
    if "illegal memory access" in low or "device-side assert" in low:
        return "crash", "%s: %s" % (name, text)
    return "launch_error", "%s: %s" % (name, text)


class Provider:
    """Finds the function that runs an operator: (library label, fn(case, inputs) ->
    {output name: tensor}), or (None, reason)."""

    def __init__(self, torch, device=None):
        self.torch = torch
        self.device = device      # where factory operators create their results
        self.torch_label = "torch " + torch.__version__.split("+")[0]
        self._vllm = None

    def vllm(self):
        if self._vllm is None:
            from . import vllm_ops
            self._vllm = vllm_ops
        return self._vllm

    def find(self, op):
        if op.source == "aten":
            from . import torch_aten
            torch_aten.set_device(self.device)
            if not torch_aten.supports(op.name):
                return None, "no PyTorch mapping for ATen operator %s" % op.name
            return self.torch_label, torch_aten.OPS[op.name]
        if op.source == "vllm":
            v = self.vllm()
            fn, label = v.find(op.name)
            if fn is None:
                return None, label
            return label, fn
        if op.source == "cublas":
            return None, "cuBLAS operators are run by the CUDA backend's cuBLAS provider, not by PyTorch"
        return None, "operator %s (source %s) has no native library" % (op.name, op.source)


def _results_of(case, res):
    outs = [t.name for t in case.tensors if t.role != "in"]
    missing = [n for n in outs if n not in res]
    if missing:
        raise RuntimeError("provider returned no %s" % ", ".join(missing))
    return {n: res[n] for n in outs}


class DeviceLock:
    """The worker's device lock, taken around each case's device work (or nothing)."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600) if path else -1
        # the gate (worker/devlock.h): an exclusive taker holds it shared while it
        # waits, so that shared takers coming after it wait too
        self.gate = -1
        if path:
            try:
                self.gate = os.open(path + ".gate", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                pass

    def acquire(self, out, idx):
        if self.fd < 0:
            return
        try:
            if self.gate >= 0:
                fcntl.flock(self.gate, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            out.line({"wait": idx})
            if self.gate >= 0:
                fcntl.flock(self.gate, fcntl.LOCK_SH)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        if self.gate >= 0:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    def release(self):
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)


def run_case(kgb, torch, dev, prov, opinfo, idx, seed, timing, budget_ns, out, lock):
    """Run one case: a {"start": idx} line when its device work begins, then its result."""
    try:
        return _run_case(kgb, torch, dev, prov, opinfo, idx, seed, timing, budget_ns, out, lock)
    finally:
        lock.release()


def _emit(out, rec, hm0):
    """The case's line, with the reference cache's hits and misses in it."""
    if hm0 is not None:
        import kgb
        h, m = kgb.ref_cache_counts()
        rec["prof"]["ref_hits"], rec["prof"]["ref_misses"] = h - hm0[0], m - hm0[1]
    out.line(rec)


def _run_case(kgb, torch, dev, prov, opinfo, idx, seed, timing, budget_ns, out, lock):
    # where the case's time goes (docs/worker.md, "Where a case's time goes"), in ms
    pf = {"inputs": 0.0, "reference": 0.0, "transfer": 0.0, "run": 0.0, "validate": 0.0, "timing": 0.0,
          "wait": 0.0}
    rec = {"case": idx, "verdict": "pass", "message": "", "timed": False, "device": dev.name, "prof": pf}
    hm0 = kgb.ref_cache_counts() if hasattr(kgb, "ref_cache_counts") else None
    try:
        case = kgb.Case(opinfo, idx, seed)
    except Exception as e:
        out.line({"start": idx})
        rec.update(verdict="infra_error", message="case %d of %s: %s" % (idx, opinfo.name, e))
        _emit(out, rec, hm0)
        return
    label, fn = prov.find(opinfo)
    if label is None:
        out.line({"start": idx})
        rec.update(verdict="unsupported", message=fn)
        _emit(out, rec, hm0)
        return
    rec["library"] = label
    rec["timed"] = bool(case.timed and timing)
    # the inputs and the CPU reference before the device lock (kgb.Case keeps both):
    # other jobs' device work goes on meanwhile; a failure here is reported below
    try:
        t0 = time.monotonic_ns()
        for t in case.tensors:
            if t.role != "out":
                case.raw_input(t.name)
        t1 = time.monotonic_ns()
        for t in case.tensors:
            if t.role != "in":
                case.raw_reference(t.name)
        pf["inputs"] += (t1 - t0) / 1e6
        pf["reference"] += (time.monotonic_ns() - t1) / 1e6
    except Exception:
        pass
    p1, p2 = 0xFF, 0x7F
    try:
        with torch.no_grad():
            # the OUT buffers' poison of the two runs: 0xFF and 0x7F are NaN or a value
            # near the type's maximum in every float type, so a correct result never
            # equals them, while an unwritten element still does (integer results equal
            # to the poison are exact matches of the reference, which the validator does
            # not count as unwritten). Each run holds the device lock for its device work
            # only: upload, call, copy of the results and inputs back; kgb's validator
            # runs on the host after the lock is given back.
            for r, poison in enumerate((p1, p2)):
                t0 = time.monotonic_ns()
                lock.acquire(out, idx)
                out.line({"start": idx})
                t1 = time.monotonic_ns()
                inputs = case.inputs("torch", dev.dev)
                t2 = time.monotonic_ns()
                r = _results_of(case, fn(case, inputs))
                dev.sync()
                t3 = time.monotonic_ns()
                res = _host(torch, r)
                del r
                case.keep_inputs_on_host()
                del inputs
                lock.release()
                t4 = time.monotonic_ns()
                v = case.validate(res, poison=poison)
                pf["wait"] += (t1 - t0) / 1e6
                pf["transfer"] += (t2 - t1 + t4 - t3) / 1e6
                pf["run"] += (t3 - t2) / 1e6
                pf["validate"] += (time.monotonic_ns() - t4) / 1e6
                rec["max_abs_err"] = max(rec.get("max_abs_err", 0.0), v.max_abs_err)
                rec["max_rel_err"] = max(rec.get("max_rel_err", 0.0), v.max_rel_err)
                if not v.ok:
                    rec.update(verdict=v.name, message="run %d: %s" % (r + 1, v.message or v.name))
                    _emit(out, rec, hm0)
                    return
            if rec["timed"]:
                t0 = time.monotonic_ns()
                lock.acquire(out, idx)
                out.line({"start": idx})
                t1 = time.monotonic_ns()
                rec["timing"] = time_case(kgb, torch, dev, case, fn, budget_ns, rec, lock)
                pf["wait"] += (t1 - t0) / 1e6
                pf["timing"] += (time.monotonic_ns() - t1) / 1e6
                if rec["verdict"] != "pass":
                    rec.pop("timing", None)
    except Exception as e:
        verdict, msg = _classify(e)
        rec.update(verdict=verdict, message=msg)
        rec.pop("timing", None)
    lock.release()
    if rec["verdict"] == "pass" and not rec["message"]:
        rec["message"] = "native %s on %s" % (label, dev.name)
    _emit(out, rec, hm0)
    case.close()


def _host(torch, res):
    """The results copied to host memory (after the device work is complete)."""
    return {n: (t.detach().cpu() if isinstance(t, torch.Tensor) else t) for n, t in res.items()}


def time_case(kgb, torch, dev, case, fn, budget_ns, rec, lock):
    """Time fn on the case with kgb's stopping rule, holding the device lock; the last
    run is judged after the lock is given back. Returns the Timing fields (or sets rec's
    verdict on a failure)."""
    inputs = case.inputs("torch", dev.dev)
    inout = [t.name for t in case.tensors if t.role == "inout"]
    pristine = {n: inputs[n].clone() for n in inout}

    def restore():
        for n in inout:
            inputs[n].copy_(pristine[n])

    call = lambda: fn(case, inputs)  # noqa: E731
    s = kgb.Sampler(budget_ns)
    # warm-up: up to three runs within a tenth of the budget (the first also allocates)
    dev.flush()
    t0 = time.monotonic_ns()
    for w in range(3):
        if w and time.monotonic_ns() - t0 > 0.1 * budget_ns:
            break
        restore()
        call()
    dev.sync()
    last = {}

    def run_batch(n):
        w0 = time.monotonic_ns()
        if n > 1:
            times, occ, last["res"] = dev.time_batch(call, restore, n)
        else:
            restore()
            dev.flush()
            last["res"], ns = dev.time_call(call)
            times, occ = [ns], ns
        return times, float(time.monotonic_ns() - w0), occ

    occupied, _ = sample_loop(s, budget_ns, run_batch, batch_cap() if dev.cuda else 1)
    dev.sync()
    res = last["res"]
    res = _host(torch, _results_of(case, res))
    case.keep_inputs_on_host()
    lock.release()
    v = case.validate(res, poison=0xFF)
    if not v.ok:
        rec.update(verdict=v.name, message="timed run (last): %s" % (v.message or v.name))
        return None
    st = s.stats()
    return {"median_ns": st["median"], "min_ns": st["min"], "p10_ns": st["p10"], "p90_ns": st["p90"],
            "mean_ns": st["mean"], "stdev_ns": st["stdev"], "samples": int(st["n"]), "rse": st["rse"],
            "occupied_ns": occupied, "method": "%s [%s]" % (dev.method, rec["library"])}


def batch_cap():
    """The most samples in one batch: KGB_TIMING_BATCH (a positive integer), else 256."""
    v = os.environ.get("KGB_TIMING_BATCH", "").strip()
    try:
        n = int(v) if v else 256
    except ValueError:
        n = 256
    return max(1, min(n, 4096))


def sample_loop(s, budget_ns, run_batch, cap):
    """Feed the sampler s until it is done from run_batch(n) -> (ns of each of n samples,
    wall ns of the batch, ns the batch kept the device busy). Batches start at 8 (or cap)
    and double up to cap, cut to what the budget has left at the wall time per sample
    seen so far; samples past the sampler's end are dropped. Returns (occupied ns, the
    sizes of the batches)."""
    size, per, spent, occupied, sizes = min(8, cap), None, 0.0, 0.0, []
    while not s.done:
        n = size
        if per:
            n = max(1, min(n, int((budget_ns - spent) / per)))
        times, wall, occ = run_batch(n)
        sizes.append(n)
        occupied += occ
        spent += wall
        per = wall / max(1, len(times))
        for t in times:
            if s.done:
                break
            s.add(t, per)
        size = min(size * 2, cap)
    return occupied, sizes


def _die_with_parent():
    """SIGKILL when the worker's executor (the parent) ends, whatever this process is
    doing then (Linux prctl PR_SET_PDEATHSIG); no-op elsewhere."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except Exception:
        pass


def main(argv):
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:
        return 3
    try:
        req = json.load(sys.stdin)
    except Exception as e:
        Out(RESULTS).line({"all": True, "verdict": "infra_error",
                           "message": "native provider: bad request on stdin: %s" % e})
        return 2
    out = Out(req.get("results") or RESULTS)
    try:
        opname, cases = req["op"], [int(c) for c in req["cases"]]
        seed, device = int(req.get("seed", 1)), str(req.get("device", "cpu"))
        timing, budget_ms = bool(req.get("timing", True)), float(req.get("budget_ms") or 500)
    except Exception as e:
        _fail_all(out, "infra_error", "native provider: bad request on stdin: %s" % e)
        return 2
    try:
        import torch
    except Exception as e:
        _fail_all(out, "unsupported", "native provider: torch does not import in %s (%s: %s)"
                  % (sys.executable, type(e).__name__, e))
        return 0
    try:
        import kgb
    except Exception as e:
        _fail_all(out, "infra_error", "native provider: the kgb package does not load: %s" % e)
        return 0
    try:
        opinfo = kgb.operator(opname)
    except Exception as e:
        _fail_all(out, "infra_error", "native provider: %s" % e)
        return 0
    try:
        dev = Device(torch, device)
    except Exception as e:
        _fail_all(out, "unsupported", "native provider: device %s: %s" % (device, e))
        return 0
    prov = Provider(torch, dev.dev)
    try:
        lock = DeviceLock(req.get("device_lock"))
    except OSError as e:
        _fail_all(out, "infra_error", "native provider: device lock %s: %s" % (req.get("device_lock"), e))
        return 0
    for idx in cases:
        if os.getppid() != parent:
            return 3   # the worker's executor is gone: nobody reads the rest
        try:
            run_case(kgb, torch, dev, prov, opinfo, idx, seed, timing, budget_ms * 1e6, out, lock)
        except Exception:
            out.line({"case": idx, "verdict": "infra_error", "device": dev.name,
                      "message": "native provider: " + traceback.format_exc().strip().splitlines()[-1]})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
