"""Recorder requests for real catalog cases, as the worker makes them
(worker/pycand.c, kgb_pycand_request): the case's inputs as tensors, its outputs, and
for an ATen operator the case itself, from which the recorder calls the wrapper as
torch calls the overload. Also checks a recorded batch against torch.

    case_batch.py make MOST MODULE.py:FUNCTION:OP ... > batch.json
    case_batch.py check batch.json BATCH_DIR      # after kgb_record.py batch.json BATCH_DIR

The requests name no function, as the worker's for an ATen operator: the recorder
names the wrapper after the overload each case calls. FUNCTION is the one the case
must reach; `check` fails a case whose recording called another.

`make` takes the operator's cases that are not timed and have at most 8192 input
elements, one of each setting of the parameters first, at most MOST per operator, all
in one batch (one recorder start). `check` prints one line per case: the function
the recorder called, its verdict, the overload and the largest error of the wrapper's
output (run by Triton's interpreter) against the PyTorch provider's result on the same
inputs; a plan with host steps (copies and fills kgb replays) is also replayed on fresh
buffers (tests/pycand/replay.py) and its output compared the same way ("replayed").
Exits 1 when a case called another function, did not pass or its output differs. Needs
libkgb (KGB_LIBRARY) and torch."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kgb  # noqa: E402


def tensor_json(t):
    return {"shape": list(t.shape), "stride": list(t.stride), "dtype": t.dtype, "offset": 0}


def request(case, source, source_name, function=None):
    args, outs = [], []
    for t in case.tensors:
        if t.role in ("in", "inout"):
            args.append({"name": t.name, "tensor": tensor_json(t)})
        if t.role in ("out", "inout"):
            outs.append(dict(tensor_json(t), name=t.name))
    for n, v in case.scalars.items():
        integral = case.scalar_dtypes[n].startswith(("i", "u"))
        args.append({"name": n, "value": int(v) if integral else float(v), "keyword": True})
    c = {"op": case.op.name, "params": case.params,
         "scalars": [{"name": n, "dtype": case.scalar_dtypes[n], "value": float(v)} for n, v in case.scalars.items()],
         "symbols": case.symbols,
         "tensors": [dict(tensor_json(t), name=t.name, role=t.role) for t in case.tensors]}
    return {"source": source, "source_name": source_name, "function": function, "args": args,
            "outputs": outs, "allow_sync": False, "save_io": True, "compile": None, "case": c}


def pick(op, most):
    """Small untimed cases: the first of each distinct setting of the parameters other
    than the shape (spread evenly when there are more than most), then others spread
    evenly up to most."""
    small, firsts, seen = [], [], set()
    for i in range(op.cases):
        c = kgb.Case(op, i)
        n = sum(t.storage for t in c.tensors if t.role != "out")
        if not c.timed and n <= 8192:
            small.append(i)
            key = tuple(sorted((k, v) for k, v in c.params.items() if k != "shape"))
            if key not in seen:
                seen.add(key)
                firsts.append(i)
    spread = lambda xs, k: [xs[j * len(xs) // k] for j in range(k)] if len(xs) > k else list(xs)
    out = spread(firsts, most)
    rest = [i for i in small if i not in out]
    out += spread(rest, most - len(out))
    return sorted(out)


def make(most, specs):
    batch, cases = [], []
    for spec in specs:
        module, function, opname = spec.split(":")
        op = kgb.operator(opname)
        src = open(module).read()
        for i in pick(op, int(most)):
            batch.append(request(kgb.Case(op, i), src, os.path.basename(module)))
            cases.append([opname, i, function])
    json.dump({"batch": batch, "interpret": True, "timeout_s": 600, "parallel": 2, "cases": cases}, sys.stdout)


def check(batch_json, d):
    os.environ["TRITON_INTERPRET"] = "1"
    import torch
    from kgb.providers import torch_aten
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import replay
    bad = 0
    spec = json.load(open(batch_json))
    for k, (opname, i, function) in enumerate(spec["cases"]):
        case = kgb.Case(opname, int(i))
        rec = json.load(open(os.path.join(d, str(k), "recording.json")))
        line = "%s: %s #%s %s: %s" % (rec.get("function"), opname, i, case.label, rec["verdict"])
        if rec.get("function") != function:
            print(line, "WRONG wrapper: the case must call %s" % function)
            bad += 1
            continue
        if rec["verdict"] != "pass":
            print(line, rec["message"])
            bad += 1
            continue
        io = torch.load(os.path.join(d, str(k), "io.pt"))
        try:
            want = torch_aten.run(case, inputs=dict(io["inputs"]))
        except RuntimeError:
            if opname != "_softmax":
                raise
            # torch has no half_to_float softmax on the CPU: the same in fp32
            x = io["inputs"]["self"]
            want = {"out": torch.softmax(x.float(), int(case.params["dim"]))}
        outs = [t.name for t in case.tensors if t.role in ("out", "inout")]
        got_outs = list(io["outputs"])
        if rec.get("steps"):
            # kgb's plan, host steps included, on fresh buffers: what the worker replays
            req = spec["batch"][k]
            plan = json.load(open(os.path.join(d, str(k), "plan.json")))
            layouts = dict(io["inputs"])
            for t in case.tensors:
                if t.role == "out":
                    layouts[t.name] = torch.empty_strided(t.shape, t.stride, dtype=want[t.name].dtype)
            done = replay.replay(plan, {req["source_name"]: req["source"]}, layouts)
            got_outs = [done[n] for n in outs]
            line += " replayed (%s)" % "; ".join(rec["steps"])
        errs = []
        for name, got in zip(outs, got_outs):
            w = want[name].detach().cpu()
            assert got.shape == w.shape and got.dtype == w.dtype, (got.shape, w.shape, got.dtype, w.dtype)
            e = (got.double() - w.double()).abs().max().item() if got.numel() else 0.0
            scale = max(1.0, w.double().abs().max().item()) if w.numel() else 1.0
            tol = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2}.get(w.dtype, 0.0)
            errs.append(e)
            if not e <= tol * scale:
                bad += 1
                line += " WRONG %s: max err %.3g (tolerance %.3g)" % (name, e, tol * scale)
        print("%s %s max err %s" % (line, rec.get("overload"), " ".join("%.3g" % e for e in errs)))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    sys.exit(check(sys.argv[2], sys.argv[3]))
