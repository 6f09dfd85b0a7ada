#!/usr/bin/env python3
"""kgb's figures for python candidates next to the same wrappers timed the way a Python
harness times them (scripts/gpu-python.sh runs this on the GPU machine).

For every case `kgb show --json` reported (OUT/show.<campaign>.<op>.json), prints kgb's
verdict and median; for the passing timed cases it also builds the case's inputs from
its label (dtype, shape, and for add the broadcast form of `other` and alpha), imports
the candidate's module, checks the wrapper's output against torch, and times the whole
wrapper call with triton.testing.do_bench (CUDA events around the call: the wrapper's
Python, its allocations and launches, as a harness that calls the wrapper measures).
kgb's median covers the recorded launches only, replayed on kgb's buffers.
Ends with a HARNESS-SUMMARY line."""
import argparse
import glob
import importlib.util
import json
import math
import os
import re
import sys

DT = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "i64": "int64", "i32": "int32"}
REF = {"add": lambda a, kw: a[0] + kw.get("alpha", 1) * a[1], "silu": lambda a, kw: a[0] * a[0].sigmoid(),
       "mul": lambda a, kw: a[0] * a[1], "relu": lambda a, kw: a[0].relu()}


def parse_label(label):
    kv = dict(re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", label))
    return kv


def build(op, kv, torch):
    """(args, kwargs) for op's wrapper from a case label, or None when the label is not
    one this script can rebuild (a layout other than contiguous, another operator)."""
    if op not in REF or "shape" not in kv or "dtype" not in kv or kv.get("layout", "contig") != "contig":
        return None
    shape = [int(x) for x in kv["shape"].strip("[]").split(",") if x]
    dtype = getattr(torch, DT.get(kv["dtype"], kv["dtype"]))
    x = torch.randn(shape, device="cuda").to(dtype)
    if op in ("silu", "relu"):
        return [x], {}
    form = kv.get("other", kv.get("mode", "full"))
    oshape = {"full": shape, "same": shape, "last": shape[-1:], "one": [1], "col": shape[:-1] + [1]}.get(form)
    if oshape is None:
        return None
    y = torch.randn(oshape, device="cuda").to(dtype)
    kw = {"alpha": float(kv["alpha"])} if op == "add" and "alpha" in kv else {}
    return [x, y], kw


# the function of the overload the arguments above are made for (add.Tensor,
# mul.Tensor, silu.default, relu.default), as kgb calls it (docs/python-candidates.md,
# "The wrapper a case calls"): a module's bare add is aten.add.default, two numbers
FUNCTION = {"add": "add_Tensor", "mul": "mul_Tensor", "silu": "silu", "relu": "relu"}


def wrapper(mod, op):
    fn = getattr(mod, FUNCTION.get(op, op), None)
    return fn if callable(fn) else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", nargs="+", required=True, help="the manifests kgb import wrote")
    a = ap.parse_args()
    import torch
    import triton.testing
    modules = {}  # (method, op) -> module path
    for mpath in a.runs:
        m = json.load(open(mpath))
        for meth in m["methods"]:
            for c in meth.get("candidates", []):
                if isinstance(c.get("module"), str):
                    modules[(meth["name"], c["operator"])] = os.path.join(os.path.dirname(mpath), c["module"])
    rows = []
    for f in sorted(glob.glob(os.path.join(a.out, "show.*.json"))):
        op = os.path.basename(f).split(".", 2)[2][:-len(".json")]   # show.<id>.<op>.json
        try:
            rows += [dict(r, operator=op) for r in json.load(open(f))]
        except ValueError:
            print("unreadable: %s" % f)
    fmt = "%-12s %-20s %4s %-40s %-15s %10s %10s %7s  %s"
    print(fmt % ("method", "operator", "case", "label", "kgb verdict", "kgb us", "harness us", "h/kgb", "note"))
    loaded, ratios, failures = {}, [], 0
    for r in rows:
        op, meth = r["operator"], r["method"]
        kgb_us = r["median_ns"] / 1e3 if r.get("median_ns") else None
        h_us, note = None, ""
        if r["verdict"] == "pass" and r.get("timed") and kgb_us:
            path = modules.get((meth, op))
            kv = parse_label(r["label"])
            args = build(op, kv, torch)
            if path is None or args is None:
                note = "inputs not rebuilt from the label"
            else:
                if path not in loaded:
                    spec = importlib.util.spec_from_file_location("cand_%d" % len(loaded), path)
                    mod = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(mod)
                    loaded[path] = mod
                fn = wrapper(loaded[path], op)
                out = fn(*args[0], **args[1])
                want = REF[op](args[0], args[1])
                err = (out.float() - want.float()).abs().max().item()
                tol = 1e-2 * max(1.0, want.float().abs().max().item())
                if not err <= tol:
                    note = "wrapper output differs from torch by %.3g" % err
                    failures += 1
                ms = triton.testing.do_bench(lambda: fn(*args[0], **args[1]), warmup=25, rep=200,
                                             return_mode="median")
                h_us = ms * 1e3
                ratios.append(h_us / kgb_us)
        print(fmt % (meth[:12], op[:20], r["case"], r["label"][:40], r["verdict"],
                     "%.2f" % kgb_us if kgb_us else "-", "%.2f" % h_us if h_us else "-",
                     "%.2f" % (h_us / kgb_us) if h_us and kgb_us else "-", note))
    gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else float("nan")
    print("HARNESS-SUMMARY cases=%d compared=%d geomean_harness_over_kgb=%.3f output_mismatches=%d"
          % (len(rows), len(ratios), gm, failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
