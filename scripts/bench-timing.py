#!/usr/bin/env python3
"""Timing fidelity: kgb's median against triton.testing.do_bench, same kernel, same GPU.

For each kernel below (memory- and compute-bound, small and large) this script
  1. times it with kgb-cuda-bench, which compiles it through the CUDA backend (the
     Triton helper in its sandbox) and samples with the executor's rule (L2 flushed
     before every sample, one event pair per launch, >= 10 samples, stop at 0.5%
     relative standard error or the budget);
  2. compiles the same request with the same helper code in this process
     (worker/triton_compile.py build_source: same source, constants, signature,
     target, options), checks the cubin is byte-identical to the helper's, and times
     it with triton.testing.do_bench (median);
  3. repeats both, interleaved, and prints the ratio kgb / do_bench and the run-to-run
     spread ((max - min) / median of the repeat medians) of each.

    bench-timing.py --bench PATH/kgb-cuda-bench [--repeats 3] [--json OUT.json]
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "worker"))
TRITON_DIR = os.path.join(ROOT, "examples", "cuda", "triton")


def cdiv(a, b):
    return (a + b - 1) // b


def elementwise(name, src, entry, dtype, n, nbuf, extra_args, sig_scalars, bound="memory"):
    es = {"f32": 4, "f16": 2}[dtype]
    tt = {"f32": "fp32", "f16": "fp16"}[dtype]
    return {
        "name": name, "bound": bound, "source": src, "entry": entry,
        "signature": ",".join(["*" + tt] * nbuf + sig_scalars),
        "constants": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3,
        "grid": [cdiv(n, 1024), 1, 1],
        "buffers": [{"bytes": n * es, "dtype": dtype}] * nbuf,
        "args": [{"buf": i} for i in range(nbuf)] + extra_args,
        "bytes": n * es * nbuf,
    }


def rowwise(name, src, entry, dtype, rows, cols, nbuf, weight, extra_args, sig_scalars):
    es = {"f32": 4, "f16": 2}[dtype]
    tt = {"f32": "fp32", "f16": "fp16"}[dtype]
    bufs = [{"bytes": rows * cols * es, "dtype": dtype}]
    if weight:
        bufs.append({"bytes": cols * es, "dtype": dtype})
    bufs.append({"bytes": rows * cols * es, "dtype": dtype})
    return {
        "name": name, "bound": "memory", "source": src, "entry": entry,
        "signature": ",".join(["*" + tt] * len(bufs) + sig_scalars),
        "constants": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 3,
        "grid": [rows, 1, 1], "buffers": bufs,
        "args": [{"buf": i} for i in range(len(bufs))] + extra_args,
        "bytes": 2 * rows * cols * es,
    }


def gemm(name, m, n, k):
    return {
        "name": name, "bound": "compute", "source": "sgemm.py", "entry": "sgemm_kernel",
        "signature": "*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,fp32,fp32",
        "constants": {"BM": 64, "BN": 64, "BK": 32}, "num_warps": 4, "num_stages": 3,
        "grid": [cdiv(m, 64), cdiv(n, 64), 1],
        "buffers": [{"bytes": m * k * 4, "dtype": "f32"}, {"bytes": k * n * 4, "dtype": "f32"},
                    {"bytes": m * n * 4, "dtype": "f32"}],
        # column-major, no transpose: sam=1, sak=lda=m, sbk=1, sbn=ldb=k, ldc=m
        "args": [{"buf": 0}, {"buf": 1}, {"buf": 2}, {"i32": m}, {"i32": n}, {"i32": k},
                 {"i32": 1}, {"i32": m}, {"i32": 1}, {"i32": k}, {"i32": m},
                 {"f32": 1.0}, {"f32": 0.0}],
        "flops": 2 * m * n * k,
    }


def kernels():
    ks = []
    for n, tag in ((1 << 20, "1M"), (1 << 26, "64M")):
        ks.append(elementwise("add_f32_" + tag, "add.py", "add_kernel", "f32", n, 3,
                              [{"f32": 0.5}, {"i32": n}, {"i32": n}], ["fp32", "i32", "i32"]))
    ks.append(elementwise("silu_f16_16M", "silu.py", "silu_kernel", "f16", 1 << 24, 2,
                          [{"i32": 1 << 24}], ["i32"]))
    ks.append(rowwise("softmax_f32_4096x4096", "softmax.py", "softmax_kernel", "f32", 4096, 4096, 2,
                      False, [{"i32": 4096}], ["i32"]))
    ks.append(rowwise("rms_norm_f16_16384x4096", "rms_norm.py", "rms_norm_kernel", "f16", 16384,
                      4096, 3, True, [{"f32": 1e-6}, {"i32": 4096}], ["fp32", "i32"]))
    ks.append(gemm("sgemm_f32_512", 512, 512, 512))
    ks.append(gemm("sgemm_f32_4096", 4096, 4096, 4096))
    return ks


def helper_request(k):
    with open(os.path.join(TRITON_DIR, k["source"])) as f:
        src = f.read()
    return {"source": src, "entry": k["entry"], "signature": k["signature"],
            "constants": k["constants"], "num_warps": k["num_warps"],
            "num_stages": k["num_stages"], "num_ctas": 1,
            "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}


def run_kgb(bench, k, budget_ms, workdir, min_samples=10, flush_mb=0):
    spec = {x: y for x, y in k.items() if not x.startswith("_")}
    spec["min_samples"] = min_samples
    spec["source"] = os.path.join(TRITON_DIR, k["source"])
    spec["repeats"] = 1
    spec["budget_ms"] = budget_ms
    path = os.path.join(workdir, k["name"] + ".spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    env = dict(os.environ)
    lib = os.environ.get("KGB_BUNDLE_LIB")
    if lib:
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    if flush_mb:
        env["KGB_CUDA_FLUSH_MB"] = str(flush_mb)
    r = subprocess.run([bench, path], capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("kgb-cuda-bench %s failed: %s" % (k["name"], r.stderr[-2000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def cached_cubins():
    """sha256 of every cubin in kgb's compile cache."""
    top = os.path.join(os.environ.get("KGB_CACHE_DIR", ""), "compile")
    out = set()
    if os.path.isdir(top):
        for e in os.listdir(top):
            p = os.path.join(top, e, "kernel.cubin")
            if os.path.exists(p):
                with open(p, "rb") as f:
                    out.add(hashlib.sha256(f.read()).hexdigest())
    return out


def compile_here(k, workdir):
    """Compile the request in this process exactly as the helper does (same working
    directory layout, so even the line tables match) and report whether the cubin is
    byte-identical to one kgb compiled and cached."""
    import triton
    import triton_compile as tc

    req = helper_request(k)
    d = tempfile.mkdtemp(dir=workdir)
    cwd = os.getcwd()
    os.chdir(d)
    try:
        src, _ = tc.build_source(req, ".")
        k["_arg_names"] = list(src.fn.arg_names)
        compiled = triton.compile(src, target=tc.target_of(req), options=tc.options_of(req))
    finally:
        os.chdir(cwd)
    h = hashlib.sha256(compiled.asm["cubin"]).hexdigest()
    return compiled, h


def launch_args(k, rt_args):
    """Triton's launcher takes every parameter in order, constexprs included (it skips
    them itself); kgb's launch passes only the run-time ones."""
    it = iter(rt_args)
    out = []
    for name in k["_arg_names"]:
        out.append(k["constants"][name] if name in k["constants"] else next(it))
    return out


def torch_args(k):
    import torch

    bufs = []
    for b in k["buffers"]:
        dt = {"f32": torch.float32, "f16": torch.float16}[b["dtype"]]
        es = 4 if b["dtype"] == "f32" else 2
        bufs.append(torch.empty(b["bytes"] // es, dtype=dt, device="cuda").uniform_(-1, 1))
    args = []
    for a in k["args"]:
        if "buf" in a:
            args.append(bufs[a["buf"]])
        else:
            args.append(list(a.values())[0])
    return bufs, args


def spread(v):
    m = statistics.median(v)
    return (max(v) - min(v)) / m if m else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget-ms", type=float, default=500)
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--variants", action="store_true",
                    help="also time the small kernels with more samples and a larger flush")
    a = ap.parse_args()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ.setdefault("TRITON_DISABLE_LINE_INFO", "1")  # as the helper compiles
    import torch
    import triton
    from triton.testing import do_bench

    workdir = tempfile.mkdtemp(prefix="kgb-bench-")
    rows = []
    for k in kernels():
        if a.only and a.only not in k["name"]:
            continue
        compiled, cubin_sha = compile_here(k, workdir)
        bufs, args = torch_args(k)
        args = launch_args(k, args)
        grid = tuple(k["grid"])

        def fn():
            compiled[grid](*args)

        fn()
        torch.cuda.synchronize()
        kgb_m, db_m, info = [], [], None
        for _ in range(a.repeats):
            info = run_kgb(a.bench, k, a.budget_ms, workdir)
            kgb_m.append(info["medians_ns"][0] / 1e6)
            db_m.append(do_bench(fn, warmup=25, rep=200, return_mode="median"))
        same = cubin_sha in cached_cubins()  # kgb compiled (and cached) this very binary
        km, dm = statistics.median(kgb_m), statistics.median(db_m)
        variants = {}
        if a.variants and k["name"] in ("add_f32_1M", "softmax_f32_4096x4096", "silu_f16_16M"):
            for label, ms, fmb in (("min_samples=200", 200, 0), ("flush=256MB", 10, 256),
                                   ("min_samples=200+flush=256MB", 200, 256)):
                v = [run_kgb(a.bench, k, a.budget_ms, workdir, ms, fmb)["medians_ns"][0] / 1e6
                     for _ in range(a.repeats)]
                variants[label] = {"runs_ms": v, "median_ms": statistics.median(v),
                                   "ratio": statistics.median(v) / dm, "spread": spread(v)}
                print("  variant %-28s %-26s kgb %9.4f ms  ratio %.4f  spread %.2f%%"
                      % (label, k["name"], statistics.median(v), statistics.median(v) / dm, 100 * spread(v)),
                      flush=True)
        row = {"kernel": k["name"], "bound": k["bound"], "kgb_ms": km, "do_bench_ms": dm,
               "ratio": km / dm, "kgb_spread": spread(kgb_m), "do_bench_spread": spread(db_m),
               "kgb_runs_ms": kgb_m, "do_bench_runs_ms": db_m, "kgb_samples": info["samples"],
               "kgb_rse": info["rse"], "throttled_samples": info["throttled_samples"],
               "sm_clock_mhz": info["sm_clock_mhz"], "same_cubin": same, "variants": variants}
        if "bytes" in k:
            row["GB_per_s"] = k["bytes"] / (km * 1e-3) / 1e9
        if "flops" in k:
            row["TFLOP_per_s"] = k["flops"] / (km * 1e-3) / 1e12
        rows.append(row)
        del bufs, args
        torch.cuda.empty_cache()
        print("bench %-26s kgb %9.4f ms  do_bench %9.4f ms  ratio %.4f  spread kgb %.2f%% do_bench %.2f%%  same_cubin=%s"
              % (k["name"], km, dm, km / dm, 100 * spread(kgb_m), 100 * spread(db_m), same), flush=True)
    dev = torch.cuda.get_device_name(0)
    out = {"device": dev, "triton": triton.__version__, "torch": torch.__version__,
           "repeats": a.repeats, "rows": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    worst = max(abs(r["ratio"] - 1) for r in rows) if rows else 0
    worst_spread = max(r["kgb_spread"] for r in rows) if rows else 0
    print("TIMING-SUMMARY kernels=%d max|ratio-1|=%.2f%% max_kgb_spread=%.2f%% device=%s"
          % (len(rows), 100 * worst, 100 * worst_spread, dev))


if __name__ == "__main__":
    main()
