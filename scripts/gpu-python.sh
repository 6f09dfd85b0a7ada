#!/bin/bash
# Python + Triton candidates on a CUDA device, end to end (docs/python-candidates.md):
# the KernelGenBench runs of tests/pycand/make_runs.sh (agent track: every reward hack
# and the correct silu; LLM track: the correct add and silu; a run of the modules whose
# wrappers take the overload's non-tensor arguments: sum, softmax, cumsum) imported with
# `kgb import kernelgenbench`, submitted to a coordinator (the embedded PostgreSQL the
# bundle carries) and run by a CUDA worker that records every case on the device and
# replays the passing recordings. Prints per module the verdicts and, per timed case,
# kgb's median next to the wrapper timed the way a Python harness times it
# (triton.testing.do_bench: CUDA events around the whole wrapper call, Python and
# allocation included), from scripts/gpu-python-harness.py.
#
#   scripts/bundle.sh && <copy the tree and .bundle/> && scripts/gpu-python.sh
# The recorder is the tree's worker/pyrec/kgb_record.py. Logs and JSON land in $OUT
# (default: a fresh temporary directory). KGB_GPU_BACKEND=opencl runs the same flow on
# a CPU (a dry run of the script: the correct modules are then validated through
# Triton's interpreter and nothing is timed). KGB_GPU_PYTHON_WAIT_S (default 1800)
# bounds the wait for all its campaigns together, in seconds.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${KGB_BUNDLE:-$ROOT/.bundle}
[ -x "$B/kgb-worker" ] && [ -x "$B/kgb-coordinator" ] && [ -x "$B/kgb" ] ||
	{ echo "gpu-python: no bundle at $B: run scripts/bundle.sh first" >&2; exit 2; }
. "$ROOT/scripts/gpu-env.sh"
gpu_store || exit 2
export LD_LIBRARY_PATH="$KGB_BUNDLE_LIB:$KGB_PG_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
PY=${KGB_PYREC_PYTHON:-$(command -v python3)}
export PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
FAIL=0
T0=$(date +%s)

export KGB_PYREC_PYTHON=$PY KGB_TRITON_PYTHON=$PY KGB_TRITON_HELPER="$B/triton_compile.py"
export KGB_PYREC="$ROOT/worker/pyrec/kgb_record.py"
export KGB_CACHE_DIR="$OUT/cache"
. "$ROOT/scripts/coord-up.sh"
# KGB_GPU_PORT: the worker port (CLI: + 1); else ports the kernel picks
if [ -n "${KGB_GPU_PORT:-}" ]; then
	export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$KGB_GPU_PORT KGB_CLI_ENDPOINT=tcp://127.0.0.1:$((KGB_GPU_PORT + 1))
else
	export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port)
fi
kgb() { "$B/kgb" "$@"; }

echo "== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1
"$PY" -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'

sh tests/pycand/make_runs.sh "$OUT" || exit 2
for run in agent_run llm_run param_run; do
	kgb import kernelgenbench "$OUT/$run" -o "$OUT/$run.json" || FAIL=1
	"$PY" - "$OUT/$run.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m.update(cases="smoke", shard_size=64, timing=True, timing_budget_ms=300, time_limit_ms=600000)
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
done

echo "== daemons"
"$B/kgb-coordinator" --data-dir "$OUT/coord.data" >"$OUT/coord.log" 2>&1 &
CPID=$!
kgb_coord_ready "$OUT/coord.log" "$CPID" 60 || { echo "gpu-python: FAIL (no coordinator)"; kill $CPID 2>/dev/null; exit 1; }
"$B/kgb-worker" --name gpu0 --backend "${KGB_GPU_BACKEND:-cuda}" >"$OUT/worker.log" 2>&1 &
WPID=$!
trap 'kill $WPID $CPID 2>/dev/null; wait 2>/dev/null' EXIT

ids=""
DEADLINE=$(($(date +%s) + ${KGB_GPU_PYTHON_WAIT_S:-1800}))   # for all the campaigns together
for run in agent_run llm_run param_run; do
	id=$(kgb submit "$OUT/$run.json" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
	[ -n "$id" ] || { echo "gpu-python: submitting $run failed"; FAIL=1; continue; }
	echo "$run: campaign $id"
	ids="$ids $id"
done
for id in $ids; do
	left=$((DEADLINE - $(date +%s)))
	[ "$left" -gt 0 ] || left=1
	timeout "$left" "$B/kgb" status "$id" --watch >/dev/null 2>&1 ||
		{ echo "campaign $id did not finish"; FAIL=1; }
done

echo "== verdicts per module"
for id in $ids; do
	kgb results "$id" | tee -a "$OUT/results.txt"
done
echo "== every case that did not pass, with its message"
for id in $ids; do
	for op in $(kgb results "$id" --json | "$PY" -c 'import json, sys
d = json.load(sys.stdin); rows = d["rows"] if isinstance(d, dict) else d
print(" ".join(sorted({r.get("operator") or r.get("op") for r in rows})))'); do
		kgb show "$id" "$op" 2>/dev/null | grep -v ' pass ' | head -n 30
	done
done
echo "== time per timed case: kgb vs the wrapper timed like a Python harness"
for id in $ids; do
	for op in $(kgb results "$id" --json | "$PY" -c 'import json, sys
d = json.load(sys.stdin); rows = d["rows"] if isinstance(d, dict) else d
print(" ".join(sorted({r.get("operator") or r.get("op") for r in rows})))'); do
		kgb show "$id" "$op" --json >"$OUT/show.$id.$op.json" 2>/dev/null || true
	done
done
"$PY" scripts/gpu-python-harness.py --out "$OUT" --runs "$OUT/agent_run.json" "$OUT/llm_run.json" 2>&1 | tee "$OUT/harness.log"
grep -q '^HARNESS-SUMMARY' "$OUT/harness.log" || FAIL=1
echo "gpu-python: $([ "$FAIL" = 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - T0)) s (logs in $OUT)"
exit "$FAIL"
