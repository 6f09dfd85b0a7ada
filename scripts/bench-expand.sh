#!/bin/bash
# A platform joining a large campaign (docs/scheduler.md, "Expansion"): on a throwaway
# PostgreSQL (scripts/pg-test.sh), a queued campaign for every platform with 100
# candidates of 2,500 one-case shards, and a platform it has no jobs on; a coordinator
# started on it expands the campaign onto the platform (250,000 jobs) and then loads
# them. Prints the time from the start-up load to the expansion's answer (the
# coordinator's log) and the coordinator's CPU time up to then.
#   scripts/bench-expand.sh [BIN]      BIN: the coordinator's directory (build/rel/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/rel/bin}
[ $# -gt 0 ] || make -s all >/dev/null
url=$(sh scripts/pg-test.sh start)
W=$(mktemp -d "${TMPDIR:-/tmp}/kgb-bench-expand.XXXXXX")
cpid=
trap '[ -n "$cpid" ] && kill "$cpid" 2>/dev/null; sh scripts/pg-test.sh stop "$url" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
. scripts/coord-up.sh
export KGB_DATABASE_URL=$url KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port)
start() { # LOG: a coordinator, until PATTERN is in its log; fails if it exits first
	"$BIN/kgb-coordinator" >"$W/$1" 2>&1 &
	cpid=$!
	for _ in $(seq 1200); do
		grep -q "$2" "$W/$1" && return 0
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$W/$1" >&2
	echo "bench-expand: the coordinator exited or did not log '$2' (log $W/$1)" >&2
	exit 1
}
stop() { kill "$cpid"; wait "$cpid" || true; cpid=; }
start schema.log 'kgb-coordinator: ready' # the schema
stop
psql -XAtq -v ON_ERROR_STOP=1 "$url" <<'SQL'
INSERT INTO platforms (name, backend, device_name) VALUES ('sim:a', 'sim', 'a');
INSERT INTO campaigns (name, state, seed, shard_size, time_limit_ms, timing_budget_ms, manifest)
VALUES ('big', 'queued', 1, 1, 1000, 1000, '{}');
INSERT INTO candidates (campaign_id, idx, method, op, case_count, plan)
SELECT 1, i, 'm' || i, 'add', 2500, '{"kernels": []}' FROM generate_series(0, 99) i;
SQL
start expand.log 'platform=sim:a: [0-9]* new jobs'
cpu_ms=$(awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$cpid/stat")
stop
python3 - "$W/expand.log" "$cpu_ms" "$(psql -XAtq "$url" -c 'SELECT count(*) FROM jobs')" <<'PY'
import json, re, sys, datetime
t = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\S+)Z .*(queued or running jobs loaded|new jobs)', line)
    if m:
        t[m.group(2)] = datetime.datetime.fromisoformat(m.group(1))
print(json.dumps({"jobs": int(sys.argv[3]),
                  "expansion_s": round((t["new jobs"] - t["queued or running jobs loaded"]).total_seconds(), 2),
                  "coordinator_cpu_ms_whole_start": float(sys.argv[2])}))
PY
