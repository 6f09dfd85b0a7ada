#!/bin/sh
# The GPU test: everything the CUDA backend must show on a real NVIDIA device, in one
# run (docs/cuda-backend.md, docs/timing.md):
#   1. the machine (driver, toolkit, Python, Triton) and `kgb-worker devices`
#   2. the backend's health check
#   3. scripts/gpu-suite.py: Triton, CUDA C and PTX candidates of the catalog
#      operators (every case must pass), the planted defects (each must get its verdict,
#      the device healthy after each and the next job passing), and the
#      device-utilization batch (>= 50 jobs)
#   4. scripts/bench-timing.py: kgb's median against triton.testing.do_bench on the
#      same compiled kernels, with the run-to-run spread
#
# Build the bundle first where the build tools are (scripts/bundle.sh), then run this
# where the GPU is, from the repository root, with the bundle beside it:
#   scripts/bundle.sh && <copy the tree and .bundle/> && scripts/gpu-test.sh
# Logs and JSON land in $OUT (default: a fresh temporary directory).
#   --skip-suite / --skip-bench   leave a part out
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${KGB_BUNDLE:-$ROOT/.bundle}
OUT=${OUT:-$(mktemp -d)}
SKIP_SUITE=0
SKIP_BENCH=0
for a in "$@"; do
	case "$a" in
	--skip-suite) SKIP_SUITE=1 ;;
	--skip-bench) SKIP_BENCH=1 ;;
	*) echo "usage: scripts/gpu-test.sh [--skip-suite] [--skip-bench]" >&2; exit 2 ;;
	esac
done
if [ ! -x "$B/kgb-worker" ]; then
	echo "gpu-test: no bundle at $B: run scripts/bundle.sh first" >&2
	exit 2
fi
# the bundled libraries are for kgb's binaries only (Python keeps its own)
. "$ROOT/scripts/gpu-env.sh"
W() { LD_LIBRARY_PATH="$KGB_BUNDLE_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/kgb-worker" "$@"; }
export KGB_CACHE_DIR="${KGB_CACHE_DIR:-$(mktemp -d)}"
export KGB_TRITON_HELPER="$B/triton_compile.py"
export PYTHONUNBUFFERED=1
# leave NVLink multicast off, as the machine's rules ask
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
FAIL=0
T0=$(date +%s)

echo "== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader 2>&1
uname -r
python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)' 2>&1
python3 "$B/triton_compile.py" --version | sed "s/^/triton helper sees triton /"
command -v nvcc >/dev/null && nvcc --version | tail -1
ls /usr/local/cuda/include/cuda_fp16.h 2>&1 | head -1
python3 -c 'import ctypes; ctypes.CDLL("libnvrtc.so.13"); print("libnvrtc.so.13 loads")' 2>&1 | tail -1

echo "== devices"
W devices || FAIL=1

echo "== health"
if W exec --backend cuda --device 0 --health; then echo "health: ok"; else echo "health: FAILED"; FAIL=1; fi

if [ "$SKIP_SUITE" = 0 ]; then
	echo "== suite (candidates, defects, utilization)"
	python3 scripts/gpu-suite.py --worker "$B/kgb-worker" --out "$OUT" 2>&1 | tee "$OUT/suite.log"
	grep -q 'overall=PASS' "$OUT/suite.log" || FAIL=1
fi

if [ "$SKIP_BENCH" = 0 ]; then
	echo "== timing fidelity"
	python3 scripts/bench-timing.py --bench "$B/kgb-cuda-bench" --variants --repeats 5 --json "$OUT/timing.json" 2>&1 |
		grep -v -e 'UserWarning' -e 'warn_once' | tee "$OUT/timing.log"
	grep -q 'TIMING-SUMMARY' "$OUT/timing.log" || FAIL=1
fi

echo "== summary ($(($(date +%s) - T0)) s)"
grep -h -e '^SUITE-SUMMARY' -e '^UTILIZATION' -e '^TIMING-SUMMARY' "$OUT"/*.log 2>/dev/null
grep -h -e 'FAIL' "$OUT/suite.log" 2>/dev/null | head -20
echo "gpu-test: $([ "$FAIL" = 0 ] && echo PASS || echo FAIL) (logs in $OUT)"
exit "$FAIL"
