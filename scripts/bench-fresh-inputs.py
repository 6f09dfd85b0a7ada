#!/usr/bin/env python3
"""What timed samples on inputs of their own cost (docs/timing.md, "Fresh inputs").

Runs timed cases of example candidates through `kgb-worker run` (the real executor),
each case as a job of its own, alternately in two modes, --repeats times each:

  fixed   KGB_FRESH_INPUTS=off: every sample on input set A, no scrub (kgb before)
  fresh   the default: inputs of its own per sample, two validated, local memory
          scrubbed where the backend can

and prints per case and mode: the median of the repeat medians, the run-to-run spread
of the medians ((max - min) / median), the median relative standard error and sample
count, the wall seconds of the job, and (fresh) the host time spent on the inputs and
references of the two validated samples (from the job log). Set A's and B's references
come from a cache filled by one untimed job per operator first, as on a worker.

  scripts/bench-fresh-inputs.py [--backend opencl] [--examples examples/aten]
      [--cases add:18,226 amin:200 ...] [--repeats 3] [--budget-ms 500] [--bin build/rel/bin]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CASES = ["add:18,226", "amin:200", "softmax:30", "mm:14"]


def run_job(args, op, cases, timing, env_extra, tmp):
    job = {"op": op, "cases": cases, "seed": 1, "backend": args.backend, "device": args.device,
           "timing": timing, "time_limit_ms": 600000, "timing_budget_ms": args.budget_ms,
           "plan": os.path.join(args.examples, op + ".plan.json")}
    path = os.path.join(tmp, "job.json")
    with open(path, "w") as f:
        json.dump(job, f)
    env = dict(os.environ, **env_extra)
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(args.bin, "kgb-worker"), "run", path], env=env, capture_output=True,
                       text=True)
    wall = time.monotonic() - t0
    try:
        out = json.loads(p.stdout)
    except ValueError:
        sys.exit(f"bench-fresh-inputs: kgb-worker run {op} {cases}: no JSON output (exit {p.returncode}): "
                 f"{p.stderr.strip()[-400:]}")
    return out, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="opencl")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--examples", default=os.path.join(ROOT, "examples", "aten"))
    ap.add_argument("--cases", nargs="+", default=DEFAULT_CASES, help="OP:CASE[,CASE...]")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget-ms", type=int, default=500)
    ap.add_argument("--bin", default=os.environ.get("KGB_BIN", os.path.join(ROOT, "build", "rel", "bin")))
    args = ap.parse_args()

    work = []
    for spec in args.cases:
        op, _, idx = spec.partition(":")
        if not idx:
            sys.exit(f"bench-fresh-inputs: --cases '{spec}': expected OP:CASE[,CASE...]")
        work += [(op, int(i)) for i in idx.split(",")]

    modes = [("fixed", {"KGB_FRESH_INPUTS": "off"}), ("fresh", {})]
    res = {}   # (op, case, mode) -> list of (median_ns, rse, samples, wall_s, refs_ms)
    with tempfile.TemporaryDirectory(prefix="kgb-fresh.") as tmp:
        os.environ.setdefault("KGB_CACHE_DIR", os.path.join(tmp, "cache"))
        for op in sorted({op for op, _ in work}):
            run_job(args, op, [c for o, c in work if o == op], False, {}, tmp)   # fills the reference cache
        for r in range(args.repeats):
            for op, case in work:
                for name, env in (modes if r % 2 == 0 else modes[::-1]):
                    out, wall = run_job(args, op, [case], True, env, tmp)
                    cr = out["cases"][0]
                    if cr["verdict"] != "pass" or not cr.get("timing"):
                        sys.exit(f"bench-fresh-inputs: {op} case {case} ({name}): {cr['verdict']}: "
                                 f"{cr.get('message', '')}")
                    t = cr["timing"]
                    m = re.search(r"inputs and references of 2 validated timed samples: ([0-9.]+) ms",
                                  out.get("log", ""))
                    res.setdefault((op, case, name), []).append(
                        (t["median_ns"], t.get("rse", 0), t.get("samples", 0), wall, float(m.group(1)) if m else 0))

    print(f"backend {args.backend}, device {args.device}, budget {args.budget_ms} ms, {args.repeats} repeats, "
          f"examples {os.path.relpath(args.examples, ROOT)}")
    print("| case | mode | median (us) | spread | rse (median) | samples (median) | job wall (s) | validated refs (ms) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for op, case in work:
        for name, _ in modes:
            rows = res[(op, case, name)]
            med = [x[0] for x in rows]
            mm = statistics.median(med)
            spread = (max(med) - min(med)) / mm * 100 if mm else 0
            print(f"| {op} {case} | {name} | {mm / 1e3:.1f} | {spread:.1f}% | "
                  f"{statistics.median(x[1] for x in rows) * 100:.2f}% | {statistics.median(x[2] for x in rows):.0f} | "
                  f"{statistics.median(x[3] for x in rows):.2f} | "
                  f"{statistics.median(x[4] for x in rows):.0f} |")


if __name__ == "__main__":
    main()
