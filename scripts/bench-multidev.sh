#!/bin/bash
# One worker, several devices (docs/multi-gpu.md): throughput and timing isolation.
#
#   scripts/bench-multidev.sh [--jobs N] [--repeats R] JOBFILE
#   scripts/bench-multidev.sh --fake [--jobs N] [--repeats R]
#   (--no-build: use $KGB_BIN/kgb-worker and $KGB_BIN/kgb-multidev-bench as they are,
#   for a GPU machine without build tools: build them where the tools are and copy
#   them with the libraries scripts/bundle.sh gathers, on LD_LIBRARY_PATH)
#
# 1. Throughput. kgb-multidev-bench (tests/bench/multidev.c) plays the coordinator for
#    one kgb-worker daemon and runs N copies of JOBFILE (default 8 per device) on
#    device 0 alone, then spread over every device the daemon registered. Prints jobs
#    per minute of both and their ratio (ideal: the number of devices).
# 2. Timing isolation. Times JOBFILE on device 0 (`kgb-worker run --device 0`, timing
#    on) R times (default 5) with device 1 idle, then R times while device 1 runs the
#    same job in a loop. Prints the median over runs of the timed cases' median time
#    for both and their difference in percent (target: within 2%).
#
# JOBFILE is a standalone job file (docs/TEAM-NOTES.md "Job files") whose backend is
# the one to measure (for instance cuda, with a Triton or CUDA candidate); its device
# field is ignored. The machine needs at least two devices of that backend.
#
# --fake runs everything against the HIP test double (tests/doubles/fake_hip.c) with
# KGB_FAKE_DEVICES devices (default 2) whose kernels take KGB_FAKE_KERNEL_US
# microseconds (default 20000), and a generated job of op add. That is a smoke test
# of this script, the bench driver and the daemon on a machine without GPUs: the
# double's "kernels" run on the host, so its figures say nothing about hardware.
#
# Environment: KGB_BIN (default build/rel/bin).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=${KGB_BIN:-build/rel/bin}
JOBS=0
REPEATS=5
FAKE=0
BUILD=1
JOBFILE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--fake) FAKE=1 ;;
	--no-build) BUILD=0 ;;
	--jobs) JOBS=$2; shift ;;
	--repeats) REPEATS=$2; shift ;;
	-h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-multidev: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) JOBFILE=$1 ;;
	esac
	shift
done
case "$JOBS$REPEATS" in *[!0-9]*) echo "bench-multidev: --jobs and --repeats take numbers" >&2; exit 2 ;; esac
[ "$REPEATS" -ge 1 ] || { echo "bench-multidev: --repeats must be at least 1" >&2; exit 2; }
if [ $FAKE -eq 0 ] && [ -z "$JOBFILE" ]; then
	echo "bench-multidev: give a JOBFILE, or --fake for the smoke run on the test double" >&2
	exit 2
fi
[ $FAKE -eq 1 ] || [ -f "$JOBFILE" ] || { echo "bench-multidev: $JOBFILE: no such file" >&2; exit 1; }

say() { printf 'bench-multidev: %s\n' "$*"; }

# ---- build the driver (like scripts/bundle.sh: every worker object but main) ----
BENCH=$BIN/kgb-multidev-bench
if [ $BUILD -eq 1 ]; then
	NPROC=$(nproc 2>/dev/null || echo 2)
	O=build/rel/obj
	WORKER_OBJS=$(for f in worker/*.c worker/backends/*.c; do
		[ "$f" = worker/main.c ] || echo "$O/${f%.c}.o"
	done | tr '\n' ' ')
	# shellcheck disable=SC2086
	make -s -j"$NPROC" build/rel/bin/kgb-worker $WORKER_OBJS build/rel/libkgbcommon.a
	[ $FAKE -eq 0 ] || make -s -j"$NPROC" build/rel/lib/libfakehip.so
	BENCH=build/rel/bin/kgb-multidev-bench
	# shellcheck disable=SC2086
	cc -Icommon -Iworker -Ibuild/gen -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread \
		-o "$BENCH" tests/bench/multidev.c $WORKER_OBJS build/rel/libkgbcommon.a \
		-lzmq -ljansson -lprotobuf-c -lsodium -lopenblas -lm -ldl
fi
for b in "$BIN/kgb-worker" "$BENCH"; do
	[ -x "$b" ] || { echo "bench-multidev: $b missing" >&2; exit 1; }
done

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/kgb-bench-multidev.XXXXXX")
busy_pid=""
cleanup() {
	if [ -n "$busy_pid" ]; then kill "$busy_pid" 2>/dev/null || true; wait "$busy_pid" 2>/dev/null || true; fi
	rm -rf "$SCRATCH"
}
trap cleanup EXIT
export KGB_CACHE_DIR=${KGB_CACHE_DIR:-$SCRATCH/cache}
export KGB_LOG_LEVEL=${KGB_LOG_LEVEL:-error}

if [ $FAKE -eq 1 ]; then
	lib=$(cd build/rel/lib && pwd)/libfakehip.so
	export KGB_HIP_LIBRARY=$lib KGB_HIPRTC_LIBRARY=$lib
	export KGB_FAKE_HIP_DEVICES=${KGB_FAKE_DEVICES:-2}
	export KGB_FAKE_HIP_KERNEL_US=${KGB_FAKE_KERNEL_US:-20000}
	unset HIP_VISIBLE_DEVICES
	case_idx=$("$BENCH" --fake-add-case)
	JOBFILE=$SCRATCH/fake-add.json
	cat >"$JOBFILE" <<EOF
{"op": "add", "cases": [$case_idx, $case_idx], "seed": 1, "backend": "hip", "device": 0,
 "timing": true, "time_limit_ms": 60000, "timing_budget_ms": 300,
 "plan": {"kernels": [{"entry": "add_f32", "lang": "hip", "source": "add.hip",
   "defines": {"BLOCK": "256"}, "grid": ["cdiv(out.numel, 256)"], "block": ["256"],
   "args": [{"tensor": "self"}, {"tensor": "other"}, {"tensor": "out"}, {"scalar": "out.numel"}]}]},
 "sources": {"add.hip": {"inline": "extern \"C\" __global__ void add_f32(const float *a, const float *b, float *c, int n)\n{\n\tint i = blockIdx.x * BLOCK + threadIdx.x;\n\tif (i < n) STORE_c(c, i, LOAD_a(a, i) + LOAD_b(b, i));\n}\n"}}}
EOF
	say "SMOKE RUN on the HIP test double ($KGB_FAKE_HIP_DEVICES fake devices, kernels of $KGB_FAKE_HIP_KERNEL_US us on the host CPU): the figures below say nothing about GPUs"
fi

# ---- 1. throughput ----
run_bench() { # DEVICES JOBS -> one JSON line
	"$BENCH" "$JOBFILE" --devices "$1" --jobs "$2" --worker "$BIN/kgb-worker"
}

backend=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("backend", "opencl"))' "$JOBFILE")
ndev=$("$BIN/kgb-worker" devices --json | python3 -c '
import json, sys
print(sum(b["count"] for b in json.load(sys.stdin) if b["backend"] == sys.argv[1]))' "$backend")
if [ "$ndev" -lt 2 ]; then
	say "kgb-worker devices lists $ndev $backend device(s): at least 2 are needed"
	exit 1
fi
[ "$JOBS" -gt 0 ] || JOBS=$((8 * ndev))
say "$backend: $ndev devices, $JOBS jobs per run"
one=$(run_bench 1 "$JOBS" | tail -n1)
all=$(run_bench "$ndev" "$JOBS" | tail -n1)
echo "one device:  $one"
echo "all devices: $all"
python3 - "$one" "$all" <<'EOF'
import json, sys
one, all_ = json.loads(sys.argv[1]), json.loads(sys.argv[2])
r = all_["jobs_per_min"] / one["jobs_per_min"] if one["jobs_per_min"] else float("nan")
print(f"throughput: {one['jobs_per_min']:.1f} jobs/min on 1 device, {all_['jobs_per_min']:.1f} jobs/min on "
      f"{all_['devices']} devices ({all_['device_name']}): ratio {r:.2f} (ideal {all_['devices']})")
for name, o in (("1 device", one), (f"{all_['devices']} devices", all_)):
    if o["infra_errors"] or o["cases_passed"] != o["cases"]:
        print(f"warning: {name}: {o['cases_passed']}/{o['cases']} cases passed, {o['infra_errors']} infra errors")
EOF

# ---- 2. timing isolation: device 0 with device 1 idle, then busy ----
time_dev0() { # -> median over the timed cases of median_ns, one line
	"$BIN/kgb-worker" run "$JOBFILE" --device 0 --json | python3 -c '
import json, sys, statistics
o = json.load(sys.stdin)
t = [c["timing"]["median_ns"] for c in o["cases"] if c.get("timing")]
if not t:
    sys.exit("no timed case in the job (is timing on, and are its cases timed cases of the operator?)")
print(statistics.median(t))'
}
idle=()
for ((i = 0; i < REPEATS; i++)); do idle+=("$(time_dev0)"); done
( while :; do "$BIN/kgb-worker" run "$JOBFILE" --device 1 --json >/dev/null 2>&1 || true; done ) &
busy_pid=$!
sleep 2 # let device 1 get going
busy=()
for ((i = 0; i < REPEATS; i++)); do busy+=("$(time_dev0)"); done
kill "$busy_pid" 2>/dev/null || true
wait "$busy_pid" 2>/dev/null || true
busy_pid=""
python3 - "${idle[*]}" "${busy[*]}" <<'EOF'
import statistics, sys
idle = [float(x) for x in sys.argv[1].split()]
busy = [float(x) for x in sys.argv[2].split()]
mi, mb = statistics.median(idle), statistics.median(busy)
d = 100.0 * (mb - mi) / mi if mi else float("nan")
print(f"timing on device 0: {mi / 1e3:.2f} us with device 1 idle, {mb / 1e3:.2f} us with device 1 busy: "
      f"{d:+.2f}% (target within 2%; {len(idle)} runs each)")
EOF
