#!/bin/sh
# The GPU proofs of docs/native.md and docs/python-candidates.md, one phase per device
# call (a call runs at most 10 minutes), each through the real daemons with the embedded
# store (scripts/gpu-campaign.sh, scripts/gpu-python.sh):
#
#   scripts/gpu-proof.sh aten   every case of the 110 ATen operators, native (PyTorch)
#   scripts/gpu-proof.sh blas   every case of the 50 cuBLAS routines, native (cuBLAS);
#                               then the native baselines of the other operators of the
#                               CUDA examples, and the CUDA examples with their speedups
#                               against those baselines
#   scripts/gpu-proof.sh busy   the native cuBLAS campaign at the default timing budget
#                               (500 ms per case), for how busy the worker keeps the
#                               device (docs/worker.md, "How busy a device is")
#   scripts/gpu-proof.sh cands  the CUDA examples alone (no baseline method): a campaign
#                               of many small candidate jobs, each in a fresh executor,
#                               for how busy the device is kept then
#   scripts/gpu-proof.sh rest   the Python + Triton candidates (scripts/gpu-python.sh);
#                               the vLLM composites, native
#   scripts/gpu-proof.sh defs [--ops a,b]
#                               the definitions proof of tests/integration/
#                               torch_aten_proof.py with PyTorch on the GPU (no daemons):
#                               every failing case named with its message
#
# Deadlines per campaign (seconds): KGB_PROOF_ATEN_S, KGB_PROOF_CUBLAS_S,
# KGB_PROOF_CUDA_S, KGB_PROOF_PYTHON_S, KGB_PROOF_VLLM_S; KGB_PROOF_BUDGET_MS is the
# timing budget per case, KGB_PROOF_SLOTS the worker's slots.
# Options after the phase go to gpu-campaign.sh (--slots N, --wait S, --backend opencl
# for a dry run on a CPU). Logs, reports and results JSON are gathered into
# $KGB_PROOF_OUT/<phase>.tgz (default $OUT, else a fresh temporary directory); the
# summary lines are printed.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PHASE=${1:-}
[ $# -gt 0 ] && shift
DEST=${KGB_PROOF_OUT:-${OUT:-$(mktemp -d)}}
WORK=$(mktemp -d)
export OUT="$WORK"
mkdir -p "$DEST"
BUDGET=${KGB_PROOF_BUDGET_MS:-50}
rc=0
# cuda_alone NAME OUT: the CUDA examples' manifest without its baseline method
cuda_alone() {
	python3 -c 'import json, sys
m = json.load(open("examples/cuda/cuda.json"))
m.pop("baseline", None)
m["name"] = sys.argv[1]
json.dump(m, open(sys.argv[2], "w"), indent=1)' "$1" "$2"
}
case "$PHASE" in
aten)
	# KGB_PROOF_ATEN_OPS=a,b runs only those operators
	M=examples/native/aten-native.json
	if [ -n "${KGB_PROOF_ATEN_OPS:-}" ]; then
		M=examples/native/.aten-native-some.gpu.json
		KGB_PROOF_ATEN_OPS=$KGB_PROOF_ATEN_OPS python3 - <<'PY' || exit 2
import json, os
m = json.load(open("examples/native/aten-native.json"))
want = os.environ["KGB_PROOF_ATEN_OPS"].split(",")
bad = [o for o in want if o not in m["operators"]]
if bad:
    raise SystemExit("KGB_PROOF_ATEN_OPS: no ATen operator %s" % ", ".join(bad))
m["operators"] = want
m["name"] = "aten-native-some"
json.dump(m, open("examples/native/.aten-native-some.gpu.json", "w"), indent=1)
PY
	fi
	sh scripts/gpu-campaign.sh --slots "${KGB_PROOF_SLOTS:-14}" --set "timing_budget_ms=$BUDGET" "$@" \
		"$M"@"${KGB_PROOF_ATEN_S:-540}" || rc=1
	;;
blas)
	# the CUDA examples without a baseline method: their speedups are against the
	# native timings stored by the campaigns before them (the cuBLAS one, and one of
	# the examples' ATen and vLLM operators)
	cuda_alone cuda-examples-vs-native examples/cuda/.cuda-vs-native.gpu.json || exit 2
	python3 - <<'PY' || exit 2
import json
ops = set(json.load(open("examples/cuda/.cuda-vs-native.gpu.json"))["operators"])
for lib in ("aten", "vllm"):
    n = json.load(open(f"examples/native/{lib}-native.json"))
    n["operators"] = [o for o in n["operators"] if o in ops]
    n["name"] = f"{lib}-native-cuda-examples"
    json.dump(n, open(f"examples/native/.{lib}-native-cuda.gpu.json", "w"), indent=1)
PY
	sh scripts/gpu-campaign.sh --slots "${KGB_PROOF_SLOTS:-14}" --set "timing_budget_ms=$BUDGET" "$@" \
		examples/native/cublas-native.json@"${KGB_PROOF_CUBLAS_S:-150}" \
		examples/native/.aten-native-cuda.gpu.json@60 examples/native/.vllm-native-cuda.gpu.json@60 \
		examples/cuda/.cuda-vs-native.gpu.json@"${KGB_PROOF_CUDA_S:-240}" || rc=1
	;;
cands)
	cuda_alone cuda-examples-alone examples/cuda/.cuda-alone.gpu.json || exit 2
	sh scripts/gpu-campaign.sh --slots "${KGB_PROOF_SLOTS:-14}" --set "timing_budget_ms=$BUDGET" "$@" \
		examples/cuda/.cuda-alone.gpu.json@"${KGB_PROOF_CUDA_S:-240}" || rc=1
	;;
busy)
	# how busy the device is kept: the native cuBLAS campaign (2,234 cases of small
	# jobs) at the default timing budget unless KGB_PROOF_BUDGET_MS says otherwise,
	# with the worker's own figures (WORKER line) and nvidia-smi's (CAMPAIGN line)
	sh scripts/gpu-campaign.sh --slots "${KGB_PROOF_SLOTS:-14}" --set "timing_budget_ms=${KGB_PROOF_BUDGET_MS:-500}" \
		"$@" examples/native/cublas-native.json@"${KGB_PROOF_CUBLAS_S:-420}" || rc=1
	;;
rest)
	# the campaigns get all but the last 40 s, so that their results are printed
	OUT="$WORK/python" KGB_GPU_PYTHON_WAIT_S=$((${KGB_PROOF_PYTHON_S:-200} - 40)) \
		timeout "${KGB_PROOF_PYTHON_S:-200}" bash scripts/gpu-python.sh >"$WORK/python.log" 2>&1 || rc=1
	tail -n 40 "$WORK/python.log"
	# KGB_PROOF_VLLM_S=0 leaves the vLLM campaign out
	if [ "${KGB_PROOF_VLLM_S:-120}" != 0 ]; then
		sh scripts/gpu-campaign.sh --slots "${KGB_PROOF_SLOTS:-14}" --set "timing_budget_ms=$BUDGET" "$@" \
			examples/native/vllm-native.json@"${KGB_PROOF_VLLM_S:-120}" || rc=1
	fi
	;;
defs)
	B=${KGB_BUNDLE:-$ROOT/.bundle}
	. "$ROOT/scripts/gpu-env.sh"
	LD_LIBRARY_PATH="$KGB_BUNDLE_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" KGB_LIBRARY="$B/libkgb.so" \
		python3 tests/integration/torch_aten_proof.py --device cuda:0 "$@" >"$WORK/defs.log" 2>&1 || rc=1
	grep -v '^ok ' "$WORK/defs.log"
	;;
*)
	echo "usage: scripts/gpu-proof.sh aten|blas|cands|busy|rest|defs [gpu-campaign.sh options]" >&2
	exit 2
	;;
esac
# everything but the store's data directory and the compile cache
tar -C "$WORK" --exclude=./data --exclude=./python/coord.data --exclude=./python/cache -czf "$DEST/$PHASE.tgz" . 2>/dev/null
echo "gpu-proof $PHASE: rc=$rc (logs: $DEST/$PHASE.tgz)"
exit "$rc"
