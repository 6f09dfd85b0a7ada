#!/bin/bash
# Scale of one coordinator (docs/scheduler.md, "Measured"): a real coordinator on its
# embedded, durable PostgreSQL (fsync on), simulated workers speaking the real protocol
# (tests/bench/loadgen.c), and every figure printed as a JSON line:
#   1. saturated: N = 10, 100, 1000 workers answering at once: jobs/s, result rows/s,
#      latency from the result to its durable acknowledgement (p50, p99), re-sends;
#      coordinator CPU per job and RSS; PostgreSQL's count of the updates of jobs rows
#      and of the HOT ones among them (jobs_row_updates, jobs_hot_updates, jobs_hot_pct)
#   2. sustained: 1000 workers whose jobs take DELAY ms on average (default 5000, each
#      drawn from DELAY * [1 - F, 1 + F], F = 0.5): throughput against what the workers
#      offer, latency
#   3. large campaigns: a 110k-job one submitted and cancelled, then a 250k-job one:
#      submit (store, expand, in memory) and cancel times (answer, memory, store
#      slices), the CLI's round trip while the slices run
# After each run the results are read back (`kgb results --json`): every job's cases
# recorded, every one "pass" (a fast wrong system does not count). The coordinator's log
# is left in build/bench-scale-coord.log.
#
#   scripts/bench-scale.sh [--quick] [--large-only] [--jobs J] [--delay-ms D] [--spread F] [--big N]
#                          [--saturated] [--workers "N1 N2 ..."]
#
# --quick: fewer jobs (for a smoke run). --large-only: part 3 only (a short run of 10
# simulated workers first makes the platform the large campaigns are queued on).
# --saturated: run only part 1; --workers: its worker counts (default "10 100 1000").
# KGB_BENCH_COORD_WRAP: a command prefix for the coordinator, to profile it (e.g.
# "valgrind --tool=callgrind --callgrind-out-file=build/callgrind.out"; give it fewer
# --jobs). Run it on a quiet machine and quote figures from one run: they move with the
# machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=3000
DELAY=5000
SPREAD=0.5
BIG=250000
CANCEL_JOBS=110000
SUSTAIN_JOBS=6000
LARGE_ONLY=0
SATURATED_ONLY=0
SAT_WORKERS="10 100 1000"
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) JOBS=300; SUSTAIN_JOBS=2000; BIG=20000; CANCEL_JOBS=5000 ;;
	--large-only) LARGE_ONLY=1 ;;
	--jobs) JOBS=$2; shift ;;
	--delay-ms) DELAY=$2; shift ;;
	--spread) SPREAD=$2; shift ;;
	--big) BIG=$2; shift ;;
	--saturated) SATURATED_ONLY=1 ;;
	--workers) SAT_WORKERS=$2; shift ;;
	*) echo "usage: scripts/bench-scale.sh [--quick] [--large-only] [--jobs J] [--delay-ms D] [--spread F] [--big N] [--saturated] [--workers \"N ...\"]" >&2; exit 2 ;;
	esac
	shift
done

make -s all >/dev/null
cc -Icommon -Iworker -Ibuild/gen -D_GNU_SOURCE -DKGB_VERSION="\"$(cat VERSION)\"" -std=gnu11 -O2 -g -Wall \
	-Wextra -Werror -pthread -o build/rel/bin/kgb-loadgen tests/bench/loadgen.c build/rel/libkgbcommon.a \
	-lzmq -ljansson -lprotobuf-c -lsodium -lopenblas -lm -ldl
BIN=$(pwd)/build/rel/bin
W=$(mktemp -d "${TMPDIR:-/tmp}/kgb-bench-scale.XXXXXX")
chmod 0755 "$W"
. "$(dirname "$0")/coord-up.sh"
export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port)
export KGB_CACHE_DIR=$W/cache
unset KGB_DATABASE_URL
# shellcheck disable=SC2086 # the wrapper is a command line, split on purpose
${KGB_BENCH_COORD_WRAP:-} "$BIN/kgb-coordinator" --data-dir "$W/store" >"$W/coord.log" 2>&1 &
CPID=$!
trap 'kill $CPID 2>/dev/null; wait $CPID 2>/dev/null; cp "$W/coord.log" build/bench-scale-coord.log; rm -rf "$W"' EXIT
kgb_coord_ready "$W/coord.log" "$CPID" 600 || exit 1
kgb() { "$BIN/kgb" --timeout 600 "$@"; }
cpu_ms() { awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$1/stat"; }
postmaster() {
	local base="$W/store/pg"
	[ -f "$W/store/pg.location" ] && base=$(cat "$W/store/pg.location") # as root: outside the data dir
	head -1 "$base/data/postmaster.pid"
}
# the embedded PostgreSQL: the postmaster (with its reaped children) and its live children
pg_cpu_ms() {
	local pm k=0 pid
	pm=$(postmaster)
	k=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
	for pid in $(ps -o pid= --ppid "$pm"); do
		k=$((k + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
	done
	echo $((k * 1000 / $(getconf CLK_TCK)))
}
rss_mb() { awk '/VmRSS/ {print $2 / 1024}' "/proc/$1/status"; }
# psql SQL: a query on the embedded store (its socket is in the coordinator's log)
store_sql() {
	local sock
	sock=$(sed -n 's/.*embedded store: postgres pid [0-9]*, cluster .*, socket \(.*\), log .*/\1/p' "$W/coord.log" | tail -1)
	psql -XAtq -v ON_ERROR_STOP=1 "host=$sock port=5432 user=kgb dbname=kgb" -c "$1"
}
# updates of jobs rows so far, and how many of them were HOT ("N HOT"), as the backends
# have reported them (a busy backend reports at most once a second, an idle one 10 s
# after its last report)
jobs_upd() { store_sql "SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'jobs'"; }
ADD_CASES=$(kgb ops --json | python3 -c 'import json,sys; print([o["cases"] for o in json.load(sys.stdin)["operators"] if o["name"]=="add"][0])')

# manifest JOBS PLATFORM OUT: candidates of add (the demo's baseline plan), one case per
# job, for about JOBS jobs on PLATFORM
manifest() {
	python3 - "$1" "$2" "$3" "$ADD_CASES" <<'PY'
import json, sys, math
jobs, plat, out, cases = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
plan = json.load(open('examples/demo/baseline/add.plan.json'))
src = open('examples/demo/baseline/add.cl').read()
n = max(1, math.ceil(jobs / cases))
cands = [{"operator": "add", "plan": plan, "sources": {"add.cl": {"inline": src}}}]
methods = [{"name": "m%d" % i, "candidates": cands} for i in range(n)]
json.dump({"name": "bench-" + plat, "operators": ["add"], "platforms": [plat], "shard_size": 1,
           "timing": False, "methods": methods}, open(out, "w"))
print(n * cases)
PY
}

# check ID: every job's cases recorded and passing
check() {
	kgb results "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin); rows = d["rows"] if isinstance(d, dict) else d
bad = [r for r in rows if r["verdict"] != "pass" or r["cases_done"] != r["cases_total"]]
ok = bool(rows) and not bad
print(json.dumps({"check": "results read back", "candidates": len(rows), "cases": sum(r["cases_done"] for r in rows), "complete_and_pass": ok}))
sys.exit(0 if ok else 1)'
}

run() { # LABEL WORKERS JOBS DELAY [SPREAD]
	local plat="sim:$1" id out c0 c1 njobs u0 u1
	# the platform joins when the simulated workers register: the jobs are made then
	njobs=$(manifest "$3" "$plat" "$W/$1.json")
	id=$(kgb submit --wait-for-platforms "$W/$1.json" | sed -n 's/^campaign \([0-9]*\) .*/\1/p')
	u0=$(jobs_upd)
	c0=$(cpu_ms $CPID)
	p0=$(pg_cpu_ms)
	out=$("$BIN/kgb-loadgen" --endpoint "$KGB_WORKER_ENDPOINT" --workers "$2" --jobs "$njobs" \
		--platform "$plat" --delay-ms "$4" --delay-spread "${5:-0}" --name "$1" --timeout-s 900) || true
	c1=$(cpu_ms $CPID)
	p1=$(pg_cpu_ms)
	sleep 12 # an idle backend reports its counters 10 s after its last report
	u1=$(jobs_upd)
	python3 - "$out" "$1" "$c1" "$c0" "$(rss_mb $CPID)" "$p1" "$p0" "$u0" "$u1" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
(u0, h0), (u1, h1) = [map(int, a.split()) for a in sys.argv[8:10]]
d["jobs_row_updates"] = u1 - u0 # PostgreSQL's count, from pg_stat_user_tables
d["jobs_hot_updates"] = h1 - h0
d["jobs_hot_pct"] = round(100.0 * (h1 - h0) / max(1, u1 - u0), 1)
n = max(1, d["jobs_acked"])
d["run"] = sys.argv[2]
d["coordinator_cpu_ms_per_job"] = round((float(sys.argv[3]) - float(sys.argv[4])) / n, 3)
d["postgres_cpu_ms_per_job"] = round((float(sys.argv[6]) - float(sys.argv[7])) / n, 3)
d["coordinator_rss_mb"] = round(float(sys.argv[5]), 1)
if "loadgen_cpu_ms" in d: # the simulated workers share the machine
    d["loadgen_cpu_ms_per_job"] = round(d.pop("loadgen_cpu_ms") / n, 3)
if d["delay_ms"] > 0:
    d["offered_jobs_per_s"] = round(d["workers"] * d["slots"] * 1000.0 / d["delay_ms"], 1)
print(json.dumps(d))
PY
	sleep 1
	check "$id"
}

store_line() { grep 'store: .* statements in' "$W/coord.log" | tail -1 | sed 's/^.*INFO /# /'; }
if [ "$LARGE_ONLY" = 1 ]; then
	echo "== a platform for the large campaigns: 10 simulated workers, 100 jobs"
	run "large" 10 100 0
	BIGPLAT=sim:large
else
	echo "== saturated (workers answer at once)"
	for n in $SAT_WORKERS; do run "sat-$n" "$n" "$JOBS" 0; done
	[ "$SATURATED_ONLY" = 1 ] && { store_line; exit 0; }
	echo "== sustained: 1000 workers, jobs of ${DELAY} ms on average, spread ${SPREAD} (offered: $((1000 * 1000 / DELAY)) jobs/s)"
	run "sustain-1000" 1000 "$SUSTAIN_JOBS" "$DELAY" "$SPREAD"
	BIGPLAT=sim:sustain-1000
fi

now() { date +%s.%N; }
ms() { python3 -c 'import sys; print(round((float(sys.argv[2]) - float(sys.argv[1])) * 1000, 1))' "$1" "$2"; }
probe() { local a; a=$(now); kgb platforms >/dev/null; ms "$a" "$(now)"; } # the loop's answer time
# big LABEL JOBS: submit about JOBS jobs on the platform of the last run (known,
# its workers gone: the jobs are made at submit and stay queued), then cancel them
big() {
	local id jobs out t0 t1 t2 t3 t4 c0 c1 p0 p1 idle_probe worst load_worst p store_ms drop_ms answer_ms
	manifest "$2" "$BIGPLAT" "$W/$1.json" >/dev/null
	c0=$(cpu_ms $CPID)
	p0=$(pg_cpu_ms)
	t0=$(now)
	out=$(kgb submit --wait-for-platforms "$W/$1.json")
	t1=$(now)
	id=$(echo "$out" | sed -n 's/^campaign \([0-9]*\) .*/\1/p')
	jobs=$(echo "$out" | sed -n 's/.*: \([0-9]*\) jobs.*/\1/p')
	# while its jobs are read into memory in pages, the loop keeps answering
	load_worst=0
	for _ in $(seq 600); do
		grep -q "campaign=$id loaded" "$W/coord.log" && break
		p=$(probe)
		load_worst=$(python3 -c 'import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))' "$load_worst" "$p")
	done
	t2=$(now)
	c1=$(cpu_ms $CPID)
	p1=$(pg_cpu_ms)
	idle_probe=$(probe)
	t3=$(now)
	kgb cancel "$id" >/dev/null
	t4=$(now)
	# while the store marks the jobs in slices, the loop keeps answering
	worst=0
	for _ in $(seq 600); do
		p=$(probe)
		worst=$(python3 -c 'import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))' "$worst" "$p")
		grep -q "campaign=$id [0-9]* jobs marked cancelled" "$W/coord.log" && break
		sleep 0.1
	done
	store_ms=$(sed -n "s/.*campaign=$id \([0-9]*\) jobs marked cancelled in the store in \([0-9]*\) ms.*/\2/p" "$W/coord.log")
	drop_ms=$(sed -n "s/.*campaign=$id cancelled: [0-9]* open jobs dropped in \([0-9.]*\) ms.*/\1/p" "$W/coord.log")
	answer_ms=$(sed -n "s/.*campaign=$id cancelled: .* answered \([0-9.]*\) ms after the request.*/\1/p" "$W/coord.log")
	python3 - <<PY
import json
print(json.dumps({"run": "$1", "jobs": int("${jobs:-0}"), "submit_reply_s": $(ms "$t0" "$t1") / 1000,
  "submit_in_memory_s": $(ms "$t0" "$t2") / 1000, "submit_coordinator_cpu_s": round(($c1 - $c0) / 1000, 2),
  "submit_postgres_cpu_s": round(($p1 - $p0) / 1000, 2),
  "worst_cli_round_trip_during_load_ms": $load_worst, "cli_round_trip_idle_ms": $idle_probe, "cancel_cli_round_trip_ms": $(ms "$t3" "$t4"),
  "cancel_answered_in_coordinator_ms": float("${answer_ms:-nan}"),
  "cancel_memory_drop_ms": float("${drop_ms:-nan}"), "cancel_store_slices_ms": float("${store_ms:-nan}"),
  "worst_cli_round_trip_during_slices_ms": $worst, "coordinator_rss_mb": round($(rss_mb $CPID), 1)}))
PY
}
echo "== large campaigns: submit and cancel (${CANCEL_JOBS} jobs, then ${BIG})"
big cancel-$CANCEL_JOBS "$CANCEL_JOBS"
big big-$BIG "$BIG"
store_line
