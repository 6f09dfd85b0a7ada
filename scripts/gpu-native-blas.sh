#!/bin/sh
# Native cuBLAS on a CUDA machine (docs/native.md): every case of the 50 operators of
# the cuBLAS dataset through `kgb-worker run` with {"kind": "native"}, the timed cases
# timed, one JSON result per operator in $OUT and a summary (cases passed per
# operator, the median of each timed case, the library version) on stdout.
#
# Build the bundle first where the build tools are (scripts/bundle.sh), then run this
# where the GPU is, from the repository root, with the bundle beside it:
#   scripts/gpu-native-blas.sh [OP...]      (default: examples/native/cublas-native.json's list)
# KGB_NATIVE_BACKEND picks the backend (default cuda; hip runs hipBLAS the same way).
# KGB_CUBLAS_LIBRARY names the library when libcublas.so.13/.12/.11 is not on the
# loader's path; otherwise the CUDA toolkit's lib64 and the Python wheels
# (nvidia/cublas/lib, nvidia/cu13/lib) are searched.
set -u
cd "$(dirname "$0")/.."
B=${KGB_BUNDLE:-$(pwd)/.bundle}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
BUDGET=${KGB_NATIVE_BUDGET_MS:-200}
BACKEND=${KGB_NATIVE_BACKEND:-cuda}
if [ ! -x "$B/kgb-worker" ]; then
	echo "gpu-native-blas: no bundle at $B: run scripts/bundle.sh first" >&2
	exit 2
fi
. scripts/gpu-env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export KGB_CACHE_DIR="${KGB_CACHE_DIR:-$(mktemp -d)}"
if [ "$BACKEND" = cuda ] && [ -z "${KGB_CUBLAS_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so\.1[123] '; then
	for d in /usr/local/cuda/lib64 $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null |
		tr ' ' '\n' | sed 's|$|/nvidia/cublas/lib|; p; s|cublas/lib$|cu13/lib|'); do
		for v in 13 12 11; do
			if [ -e "$d/libcublas.so.$v" ]; then
				export KGB_CUBLAS_LIBRARY="$d/libcublas.so.$v"
				break 2
			fi
		done
	done
fi
[ "$BACKEND" = cuda ] && echo "cuBLAS: ${KGB_CUBLAS_LIBRARY:-the loader's libcublas.so.13/.12/.11}"
if [ $# -gt 0 ]; then
	OPS="$*"
else
	OPS=$(python3 -c 'import json; print(" ".join(json.load(open("examples/native/cublas-native.json"))["operators"]))')
fi
T0=$(date +%s)
for op in $OPS; do
	cat > "$OUT/$op.job.json" <<EOF
{"op": "$op", "cases": "all", "seed": 7, "backend": "$BACKEND", "device": 0, "timing": true,
 "timing_budget_ms": $BUDGET, "time_limit_ms": 60000, "plan": {"kind": "native"}}
EOF
	LD_LIBRARY_PATH="$KGB_BUNDLE_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/kgb-worker" run "$OUT/$op.job.json" --json \
		> "$OUT/$op.json" 2> "$OUT/$op.log"
done
T1=$(date +%s)
python3 - "$OUT" $OPS <<'EOF'
import json, sys
out, ops = sys.argv[1], sys.argv[2:]
total = passed = 0
bad = []
for op in ops:
    try:
        r = json.load(open(f"{out}/{op}.json"))
    except Exception as e:
        log = open(f"{out}/{op}.log").read().strip().splitlines()[-3:] if __import__("os").path.exists(f"{out}/{op}.log") else []
        print(f"{op}: no result ({e}); log: {' | '.join(log)}"); bad.append(op); continue
    cases = r.get("cases", r if isinstance(r, list) else [])
    n = len(cases); p = sum(1 for c in cases if c.get("verdict") == "pass")
    total += n; passed += p
    timed = [c for c in cases if c.get("timing")]
    med = ", ".join(f"case {c['case']}: {c['timing'].get('median_ns', 0) / 1e3:.1f} us" for c in timed)
    meth = next((c["timing"].get("method") for c in timed if c["timing"].get("method")), "")
    print(f"{op}: {p}/{n} pass; {med} {('[' + meth + ']') if meth else ''}")
    for c in cases:
        if c.get("verdict") != "pass":
            print(f"    case {c.get('case')}: {c.get('verdict')}: {c.get('message', '')[:300]}")
    if p != n:
        bad.append(op)
print(f"total: {passed}/{total} cases pass over {len(ops)} operators; failing operators: {' '.join(bad) or 'none'}")
EOF
echo "wall: $((T1 - T0)) s for the runs"
