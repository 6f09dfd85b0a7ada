#!/usr/bin/env python3
"""The job part of scripts/gpu-test.sh: standalone `kgb-worker run` jobs on a CUDA device.

  candidates  every plan under examples/cuda/{cuda,triton,ptx}: all cases of its
              operator, timed; every case must pass
  defects     every planted defect under examples/cuda/defects: the expected verdict
              must appear, nothing may pass that should not, and afterwards the device
              must be healthy (`kgb-worker exec --health`) and a known-good job must
              pass in full
  utilization a batch of >= 50 jobs back to back; the fraction of wall time the device
              spends in validation and timing work

    gpu-suite.py --worker .bundle/kgb-worker [--out DIR] [--only candidates|defects|utilization]

Prints one line per job and a summary; exits 1 if any check failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(ROOT, "examples", "cuda")

OPS = {"add": "add", "silu": "silu", "softmax": "softmax", "rms_norm": "rms_norm",
       "saxpy": "cublasSaxpy_v2", "sgemm": "cublasSgemm_v2"}

# (plan, operator, expected verdict, time limit ms, extra sources {name: path under EX})
DEFECTS = [
    ("add_wrong.plan.json", "add", "wrong_result", 60000, {}),
    ("add_wrong_triton.plan.json", "add", "wrong_result", 60000, {}),
    ("silu_partial.plan.json", "silu", "unwritten_output", 60000, {}),
    ("silu_oob.plan.json", "silu", "out_of_bounds_write", 60000, {}),
    ("silu_inplace.plan.json", "silu", "input_modified", 60000, {}),
    ("silu_illegal.plan.json", "silu", "illegal_address", 60000, {}),
    ("saxpy_hang.plan.json", "cublasSaxpy_v2", "timeout", 4000, {}),
    ("add_syntax.plan.json", "add", "compile_error", 60000, {}),
    ("silu_bad_triton.plan.json", "silu", "compile_error", 60000, {}),
    ("sgemm_shared.plan.json", "cublasSgemm_v2", "resource_error", 60000, {"sgemm.cu": "cuda/sgemm.cu"}),
    ("saxpy_threads.plan.json", "cublasSaxpy_v2", "resource_error", 60000, {"saxpy.cu": "cuda/saxpy.cu"}),
]

HEALTH_JOB = ("cuda/saxpy.plan.json", "cublasSaxpy_v2")


class Runner:
    def __init__(self, worker, workdir, env):
        self.worker = worker
        self.workdir = workdir
        self.env = env
        self.n = 0

    def job(self, plan, op, timing=True, time_limit_ms=120000, budget_ms=100, sources=None, cases="all"):
        self.n += 1
        spec = {"op": op, "cases": cases, "seed": 1 + self.n % 7, "backend": "cuda", "device": 0,
                "timing": timing, "time_limit_ms": time_limit_ms, "timing_budget_ms": budget_ms,
                "plan": os.path.join(EX, plan)}
        if sources:
            spec["sources"] = {k: os.path.join(EX, v) for k, v in sources.items()}
        path = os.path.join(self.workdir, "job%03d.json" % self.n)
        with open(path, "w") as f:
            json.dump(spec, f)
        t0 = time.time()
        r = subprocess.run([self.worker, "run", path, "--json"], capture_output=True, text=True,
                           env=self.env, timeout=time_limit_ms / 1000 + 120)
        wall = time.time() - t0
        try:
            out = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            out = {"error": (r.stderr or r.stdout)[-1500:], "cases": []}
        out["_wall_s"] = wall
        out["_rc"] = r.returncode
        return out

    def health(self):
        r = subprocess.run([self.worker, "exec", "--backend", "cuda", "--device", "0", "--health"],
                           capture_output=True, text=True, env=self.env, timeout=120)
        return r.returncode == 0, (r.stderr or "").strip()[-300:]


def verdicts(out):
    vs = {}
    for c in out.get("cases", []):
        vs[c.get("verdict")] = vs.get(c.get("verdict"), 0) + 1
    return vs


def first_message(out, verdict):
    for c in out.get("cases", []):
        if c.get("verdict") == verdict:
            return (c.get("message") or "")[:160]
    return (out.get("error") or "")[:300]


def candidates(rn, results):
    ok_all = True
    for lang in ("cuda", "triton", "ptx"):
        d = os.path.join(EX, lang)
        for f in sorted(os.listdir(d)):
            if not f.endswith(".plan.json"):
                continue
            op = OPS[f[: -len(".plan.json")]]
            out = rn.job(os.path.join(lang, f), op)
            vs = verdicts(out)
            ok = out.get("total", 0) > 0 and out.get("passed") == out.get("total")
            ok_all &= ok
            timed = [c for c in out.get("cases", []) if c.get("timing")]
            med = ""
            if timed:
                t = timed[-1]["timing"]
                med = " last_timed_median=%.2fus n=%s" % (t.get("median_ns", 0) / 1e3, t.get("samples"))
            bad = "" if ok else " FIRST_FAILURE: " + next(
                ("%s: %s" % (c.get("verdict"), (c.get("message") or "")[:200])
                 for c in out.get("cases", []) if c.get("verdict") != "pass"), out.get("error", ""))
            print("CANDIDATE %-6s %-16s %-15s %3s/%-3s %s compile_ms=%.0f%s%s"
                  % (lang, f[: -len(".plan.json")], op, out.get("passed"), out.get("total"),
                     "PASS" if ok else "FAIL", out.get("compile_ms", 0), med, bad), flush=True)
            results.append({"kind": "candidate", "lang": lang, "plan": f, "op": op, "ok": ok,
                            "verdicts": vs, "compile_ms": out.get("compile_ms"),
                            "device_ms": out.get("device_ms"), "wall_ms": out.get("wall_ms")})
    return ok_all


def defects(rn, results):
    ok_all = True
    for plan, op, want, limit, srcs in DEFECTS:
        out = rn.job(os.path.join("defects", plan), op, time_limit_ms=limit, sources=srcs)
        vs = verdicts(out)
        got = want in vs
        wrong = {v: n for v, n in vs.items() if v not in (want, "pass", "not_run")}
        healthy, why = rn.health()
        nxt = rn.job(*HEALTH_JOB, timing=False)
        next_ok = nxt.get("total", 0) > 0 and nxt.get("passed") == nxt.get("total")
        ok = got and not wrong and healthy and next_ok
        ok_all &= ok
        print("DEFECT %-28s expected=%-19s got=%-40s health=%s next_job=%s/%s -> %s | %s"
              % (plan[: -len(".plan.json")], want, ",".join("%s:%d" % kv for kv in sorted(vs.items())),
                 "ok" if healthy else "FAILED(" + why + ")", nxt.get("passed"), nxt.get("total"),
                 "OK" if ok else "FAIL", first_message(out, want)), flush=True)
        results.append({"kind": "defect", "plan": plan, "op": op, "expected": want, "verdicts": vs,
                        "healthy_after": healthy, "next_job_passed": next_ok, "ok": ok})
    return ok_all


def nvml_sampler(stop, samples):
    """nvidia-smi's utilization.gpu every 100 ms (the fraction of time a kernel ran)."""
    try:
        p = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                              "-lms", "100"], stdout=subprocess.PIPE, text=True)
    except OSError:
        return
    while not stop.is_set():
        line = p.stdout.readline()
        if not line:
            break
        try:
            samples.append(float(line.strip()))
        except ValueError:
            pass
    p.terminate()
    p.wait()


def utilization(rn, results, njobs):
    plans = []
    for lang in ("cuda", "triton", "ptx"):
        for f in sorted(os.listdir(os.path.join(EX, lang))):
            if f.endswith(".plan.json"):
                plans.append((os.path.join(lang, f), OPS[f[: -len(".plan.json")]]))
    stop, samples = threading.Event(), []
    th = threading.Thread(target=nvml_sampler, args=(stop, samples), daemon=True)
    th.start()
    t0 = time.time()
    tot = {"device_ms": 0.0, "wall_ms": 0.0, "compile_ms": 0.0, "cases": 0, "passed": 0}
    for i in range(njobs):
        plan, op = plans[i % len(plans)]
        out = rn.job(plan, op, budget_ms=50)
        for k in ("device_ms", "wall_ms", "compile_ms"):
            tot[k] += out.get(k, 0) or 0
        tot["cases"] += out.get("total", 0)
        tot["passed"] += out.get("passed", 0)
    wall = (time.time() - t0) * 1000
    stop.set()
    th.join(timeout=2)
    kernel = tot["device_ms"] / wall
    phase = (tot["wall_ms"] - tot["compile_ms"]) / wall
    nv = sum(samples) / len(samples) / 100 if samples else float("nan")
    print("UTILIZATION jobs=%d cases=%d passed=%d batch_wall_s=%.1f executor_wall_s=%.1f compile_s=%.1f "
          "kernel_s=%.2f | device-phase fraction (executor validating+timing / batch wall) = %.1f%% | "
          "kernel-busy fraction (event-timed kernel time / batch wall) = %.1f%% | nvidia-smi utilization.gpu mean = %.1f%% (%d samples)"
          % (njobs, tot["cases"], tot["passed"], wall / 1000, tot["wall_ms"] / 1000, tot["compile_ms"] / 1000,
             tot["device_ms"] / 1000, 100 * phase, 100 * kernel, 100 * nv, len(samples)), flush=True)
    results.append({"kind": "utilization", "jobs": njobs, "batch_wall_ms": wall, **tot,
                    "device_phase_fraction": phase, "kernel_busy_fraction": kernel,
                    "nvidia_smi_util_mean": nv, "nvidia_smi_samples": len(samples)})
    return tot["passed"] == tot["cases"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True)
    ap.add_argument("--out")
    ap.add_argument("--only", action="append")
    ap.add_argument("--jobs", type=int, default=54)
    a = ap.parse_args()
    env = dict(os.environ)
    lib = os.environ.get("KGB_BUNDLE_LIB")
    if lib:
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    workdir = tempfile.mkdtemp(prefix="kgb-gpu-jobs-")
    rn = Runner(os.path.abspath(a.worker), workdir, env)
    results, ok = [], True
    parts = a.only or ["candidates", "defects", "utilization"]
    if "candidates" in parts:
        ok &= candidates(rn, results)
    if "defects" in parts:
        ok &= defects(rn, results)
    if "utilization" in parts:
        ok &= utilization(rn, results, a.jobs)
    if a.out:
        with open(os.path.join(a.out, "suite.json"), "w") as f:
            json.dump(results, f, indent=1)
    nc = sum(1 for r in results if r["kind"] == "candidate")
    nd = sum(1 for r in results if r["kind"] == "defect")
    print("SUITE-SUMMARY candidates=%d/%d defects=%d/%d overall=%s"
          % (sum(r["ok"] for r in results if r["kind"] == "candidate"), nc,
             sum(r["ok"] for r in results if r["kind"] == "defect"), nd, "PASS" if ok else "FAIL"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
