#!/bin/bash
# The answer time of `kgb verify` (docs/agents.md, "Answer time"): the wall time of one
# call, from the command's start to its answer, as an agent waits for it.
#
#   scripts/bench-verify.sh [--repeats N] [--slots N] [--op OP] [--platform P] [--python PY]
#                           [CANDIDATE]
#
# Starts a throwaway PostgreSQL (scripts/pg-test.sh), kgb-coordinator and one CPU
# kgb-worker (OpenCL through PoCL) from $KGB_BIN (default build/rel/bin) with a fresh
# reference and compile cache, then calls `kgb verify --json` on CANDIDATE (default
# examples/aten's floor, laid out as a plan directory) N times (default
# 3) with --no-timing and N times with timing, alternately, and prints one line per
# call and the median of each mode:
#   verify mode=no-timing call=1 seconds=S passed=true jobs=J
#   verify mode=no-timing median_s=S (first call S: references computed, then cached)
# The first call of each mode pays for the references of the dev cases (the dev seed
# is fixed, so later calls find them in the cache) and the compiles. --python PY gives
# the worker a Python with torch and Triton (kgb-worker --python), for a Python module
# as CANDIDATE (e.g. examples/python/aten/floor.py, recorded and replayed through
# Triton's interpreter on the CPU). --platform P picks the platform when the worker
# offers several (a GPU machine's worker offers its GPU and its CPU).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPEATS=3
SLOTS=1
OP=floor
PY=""
PLAT=""
while [ $# -gt 0 ]; do
	case "$1" in
	--repeats) REPEATS=$2; shift 2 ;;
	--slots) SLOTS=$2; shift 2 ;;
	--op) OP=$2; shift 2 ;;
	--python) PY=$2; shift 2 ;;
	--platform) PLAT=$2; shift 2 ;;
	-h | --help) sed -n '2,23p' "$0"; exit 0 ;;
	-*) echo "bench-verify: unknown option $1 (--help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
BIN=$(cd "${KGB_BIN:-$ROOT/build/rel/bin}" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kgb-bench-verify.XXXXXX")
chmod 0755 "$WORK"
PG=""
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	[ -z "$PG" ] || sh "$ROOT/scripts/pg-test.sh" stop "$PG" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ $# -gt 0 ]; then
	CAND=$1
else
	mkdir -p "$WORK/floor"
	cp "$ROOT/examples/aten/floor.plan.json" "$WORK/floor/plan.json"
	cp "$ROOT/examples/aten/floor.cl" "$WORK/floor/floor.cl"
	CAND=$WORK/floor
fi
. "$ROOT/scripts/coord-up.sh"
export KGB_WORKER_ENDPOINT="tcp://127.0.0.1:$(kgb_free_port)" KGB_CLI_ENDPOINT="tcp://127.0.0.1:$(kgb_free_port)"
export KGB_CACHE_DIR=$WORK/cache POCL_CACHE_DIR=$WORK/pocl
PG=$(sh "$ROOT/scripts/pg-test.sh" start)
export KGB_DATABASE_URL=$PG
"$BIN/kgb-coordinator" >"$WORK/coord.log" 2>&1 &
PIDS+=($!)
kgb_coord_ready "$WORK/coord.log" "${PIDS[-1]}" 120 || exit 1
"$BIN/kgb-worker" --coordinator "$KGB_WORKER_ENDPOINT" --name bench --slots "$SLOTS" ${PY:+--python "$PY"} \
	>"$WORK/worker.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 600); do "$BIN/kgb" workers 2>/dev/null | grep -q bench && break; sleep 0.2; done
if [ -n "$PY" ]; then   # the worker registers again once its Python probe answers
	for _ in $(seq 900); do "$BIN/kgb" workers 2>/dev/null | grep -q 'python candidates: recorded' && break; sleep 0.2; done
fi

declare -A TIMES=()
for i in $(seq "$REPEATS"); do
	for mode in no-timing timing; do
		args=(--json --op "$OP" ${PLAT:+--platform "$PLAT"})
		[ "$mode" = timing ] || args+=(--no-timing)
		t0=$(date +%s.%N)
		"$BIN/kgb" verify "${args[@]}" "$CAND" >"$WORK/answer.json" || true
		t1=$(date +%s.%N)
		s=$(python3 -c "print('%.2f' % ($t1 - $t0))")
		read -r passed jobs why < <(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
f = (a.get("failures") or [{}])[0]
why = ("state=%s %s" % (a.get("state"), a.get("reason") or a.get("error") or "") if a.get("state") != "done"
       else "" if a.get("passed") else "first_failure=%s: %s" % (f.get("verdict"), f.get("message")))
print(str(a.get("passed")).lower(), a.get("campaign_id", 0), why[:200])' "$WORK/answer.json")
		jobs=$(psql -XAtq "$PG" -c "SELECT count(*) FROM jobs WHERE campaign_id = $jobs")
		echo "verify mode=$mode call=$i seconds=$s passed=$passed jobs=$jobs${why:+ $why}"
		TIMES[$mode]="${TIMES[$mode]:-} $s"
	done
done
for mode in no-timing timing; do
	python3 - "$mode" ${TIMES[$mode]} <<'PY'
import statistics, sys
mode, xs = sys.argv[1], [float(x) for x in sys.argv[2:]]
print("verify mode=%s median_s=%.2f (first call %.2f: references computed, then cached)"
      % (mode, statistics.median(xs), xs[0]))
PY
done
