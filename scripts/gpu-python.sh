#!/bin/bash
# Python + Triton candidates on a CUDA device, end to end (docs/python-candidates.md):
# the KernelGenBench runs of tests/pycand/make_runs.sh (agent track: every reward hack
# and the correct silu; LLM track: the correct add and silu) imported with
# `kgb import kernelgenbench`, submitted to a coordinator (embedded PostgreSQL) and run
# by a CUDA worker that records every case on the device and replays the passing
# recordings. Prints per module the verdicts and, per timed case, kgb's median next to
# the wrapper timed the way a Python harness times it (triton.testing.do_bench: CUDA
# events around the whole wrapper call, Python and allocation included), from
# scripts/gpu-python-harness.py.
#
#   scripts/gpu-python.sh --bundle   here (build machine): build kgb, kgb-coordinator,
#                                    kgb-worker and gather them, the recorder, the Triton
#                                    helper, their shared libraries and a PostgreSQL
#                                    server into .bundle-py/ and .bundle-py.tar.xz (the
#                                    run extracts the latter when the former is absent)
#   scripts/gpu-python.sh            on the GPU machine, from the repository root
# Logs and JSON land in $OUT (default: a fresh temporary directory). As root the
# bundle is copied to $KGB_PY_BUNDLE_COPY (default /opt/kgb-py-bundle) for the
# server's user. KGB_PY_BACKEND=opencl runs the same flow on a CPU (a dry run of the
# script: the correct modules are then unsupported and nothing is timed).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${KGB_PY_BUNDLE:-$ROOT/.bundle-py}

if [ "${1:-}" = --bundle ]; then
	set -e
	make -j"$(nproc)" CC="${CC:-cc}" build/rel/bin/kgb build/rel/bin/kgb-coordinator build/rel/bin/kgb-worker
	rm -rf "$B"
	mkdir -p "$B/bin/pyrec" "$B/lib" "$B/pg"
	cp build/rel/bin/kgb build/rel/bin/kgb-coordinator build/rel/bin/kgb-worker worker/triton_compile.py "$B/bin/"
	cp worker/pyrec/kgb_record.py "$B/bin/pyrec/"
	# PostgreSQL: its binaries and modules keep their relative layout (the server finds
	# its share directory relative to its bin directory)
	pgv=$(ls /usr/lib/postgresql | sort -n | tail -n1)
	mkdir -p "$B/pg/usr/lib/postgresql" "$B/pg/usr/share/postgresql"
	cp -a "/usr/lib/postgresql/$pgv" "$B/pg/usr/lib/postgresql/"
	cp -a "/usr/share/postgresql/$pgv" "$B/pg/usr/share/postgresql/"
	# no JIT (LLVM alone is larger than everything else together)
	rm -rf "$B/pg/usr/lib/postgresql/$pgv/lib/bitcode" "$B/pg/usr/lib/postgresql/$pgv/lib/llvmjit"* \
		"$B/pg/usr/share/postgresql/$pgv/man"
	printf '#!/bin/sh\n[ "$1" = --bindir ] && echo "$(dirname "$0")/../pg/usr/lib/postgresql/%s/bin"\n' "$pgv" >"$B/bin/pg_config"
	chmod +x "$B/bin/pg_config"
	for bin in "$B"/bin/kgb* "$B/pg/usr/lib/postgresql/$pgv/bin/postgres" "$B/pg/usr/lib/postgresql/$pgv/bin/initdb" \
		"$B/pg/usr/lib/postgresql/$pgv/lib/"*.so; do
		ldd "$bin" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
	done | sort -u | while read -r lib; do
		case "$(basename "$lib")" in
		libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
		*) cp -L "$lib" "$B/lib/" ;;
		esac
	done
	# one compressed file as well, for copying to the GPU machine
	tar -C "$(dirname "$B")" -cf - "$(basename "$B")" | xz -T0 -3 >"$B.tar.xz"
	echo "bundle: $B ($(du -sh "$B" | cut -f1)), $B.tar.xz ($(du -sh "$B.tar.xz" | cut -f1))"
	exit 0
fi

if [ ! -x "$B/bin/kgb-worker" ] && [ -f "$B.tar.xz" ]; then
	tar -C "$(dirname "$B")" -xJf "$B.tar.xz" || exit 2
fi
[ -x "$B/bin/kgb-worker" ] || { echo "gpu-python: no bundle at $B: run scripts/gpu-python.sh --bundle first" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d)}
PY=${KGB_PYREC_PYTHON:-$(command -v python3)}
export PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
FAIL=0
T0=$(date +%s)

# the server runs as user postgres when we are root: it needs that user and a copy of
# the bundle it can read
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || useradd -r -M -d /nonexistent postgres || { echo "gpu-python: cannot create user postgres" >&2; exit 2; }
	C=${KGB_PY_BUNDLE_COPY:-/opt/kgb-py-bundle}
	rm -rf "$C" && cp -a "$B" "$C" && chmod -R a+rX "$C" && B=$C
fi
export PATH="$B/bin:$PATH"
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KGB_PYREC_PYTHON=$PY KGB_TRITON_PYTHON=$PY KGB_TRITON_HELPER="$B/bin/triton_compile.py" KGB_PYREC="$B/bin/pyrec/kgb_record.py"
export KGB_CACHE_DIR="$OUT/cache"
port=$((20000 + RANDOM % 20000))
export KGB_CLI_ENDPOINT="tcp://127.0.0.1:$port"

echo "== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1
"$PY" -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'

sh tests/pycand/make_runs.sh "$OUT" || exit 2
for run in agent_run llm_run; do
	kgb import kernelgenbench "$OUT/$run" -o "$OUT/$run.json" || FAIL=1
	"$PY" - "$OUT/$run.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m.update(cases="smoke", shard_size=64, timing=True, timing_budget_ms=300, time_limit_ms=600000)
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
done

echo "== daemons"
kgb-coordinator --data-dir "$OUT/coord.data" --cli "$KGB_CLI_ENDPOINT" --workers "tcp://127.0.0.1:$((port + 1))" \
	>"$OUT/coord.log" 2>&1 &
CPID=$!
for _ in $(seq 1 300); do grep -q 'kgb-coordinator: ready' "$OUT/coord.log" && break; sleep 0.2; done
grep -q 'kgb-coordinator: ready' "$OUT/coord.log" || { tail -20 "$OUT/coord.log"; echo "gpu-python: FAIL (no coordinator)"; kill $CPID; exit 1; }
kgb-worker --coordinator "tcp://127.0.0.1:$((port + 1))" --name gpu0 --backend "${KGB_PY_BACKEND:-cuda}" \
	>"$OUT/worker.log" 2>&1 &
WPID=$!
trap 'kill $WPID $CPID 2>/dev/null; wait 2>/dev/null' EXIT

ids=""
for run in agent_run llm_run; do
	id=$(kgb submit "$OUT/$run.json" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
	[ -n "$id" ] || { echo "gpu-python: submitting $run failed"; FAIL=1; continue; }
	echo "$run: campaign $id"
	ids="$ids $id"
done
for id in $ids; do
	timeout 1800 kgb status "$id" --watch >/dev/null 2>&1 || { echo "campaign $id did not finish"; FAIL=1; }
done

echo "== verdicts per module"
for id in $ids; do
	kgb results "$id" | tee -a "$OUT/results.txt"
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
