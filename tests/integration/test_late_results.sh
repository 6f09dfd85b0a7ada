#!/bin/bash
# kgb-test: budget=40
# Results the coordinator once refused although they were the lease holder's (each
# window held open with a lock in the real PostgreSQL, the worker a protocol double:
# tests/tools/kgbwire.py late):
#   requeue  the holder's late result arrives while the requeue after its lease expired
#            is being written: taken once the requeue is in (it was refused as stale);
#   restart  the requeue was written and the coordinator restarted before the worker
#            registered again: the job, loaded as queued, still knows its last holder;
#   regen    a new process registers under the worker's name while a job is being
#            assigned to the name: the assignment goes to the new process with its lease
#            (its result was refused: "does not hold its lease").
# Each campaign ends with the job's cases recorded once, from the result sent.
. "$(dirname "$0")/lib.sh"

# short job leases; long backoff: a requeued job waits rather than going out again
export KGB_LEASE_MS=1500 KGB_HEARTBEAT_MS=300 KGB_BACKOFF_MS=60000
db_init
start_coordinator coord
CATVER=$(kgb ops --json | "$KGB_PY" -c 'import json,sys; print(json.load(sys.stdin)["catalog_version"])')
make_manifest "$TEST_DIR/m.json" --methods baseline --ops add --set timing=false --set shard_size=2

# scenario NAME: run it on a fresh campaign on a platform of its own; prints the double's output
scenario() {
	local name=$1 out
	submit "$TEST_DIR/m.json" >/dev/null
	out=$(kgbwire late "$KGB_WORKER_ENDPOINT" "$name" "fw-$name" "$(hostname)" "$CATVER" "opencl:late-$name" 2>&1) ||
		fail "kgbwire late $name: $out"
	check "$name: the result is taken ($(tail -n1 <<<"$out"))" grep -q '^accepted=1 ' <<<"$out"
	job_done_once "$name" "$(sed -n 's/^job=\([0-9]*\) .*/\1/p' <<<"$out" | tail -n1)"
}

# job_done_once NAME JOB: the job is done with each of its cases recorded once
job_done_once() {
	assert_eq "$(q "SELECT state, (SELECT count(*) FROM results r WHERE r.job_id = j.id) = j.case_hi - j.case_lo
	               FROM jobs j WHERE j.id = ${2:-0}")" "done|t" "$1: job $2 done with each of its cases recorded once"
}

scenario requeue

# restart: the double prints "restart now" once the requeue is written
export KGBWIRE_GO=$TEST_DIR/go
submit "$TEST_DIR/m.json" >/dev/null
kgbwire late "$KGB_WORKER_ENDPOINT" restart fw-restart "$(hostname)" "$CATVER" opencl:late-restart \
	>"$TEST_DIR/restart.out" 2>&1 &
dbl=$!
wait_for 60 "the double asks for the restart" grep -q '^restart now' "$TEST_DIR/restart.out"
stop_checked coord
start_coordinator coord
touch "$KGBWIRE_GO"
wait "$dbl" || fail "kgbwire late restart: $(cat "$TEST_DIR/restart.out")"
out=$(cat "$TEST_DIR/restart.out")
check "restart: the result is taken ($(tail -n1 <<<"$out"))" grep -q '^accepted=1 ' <<<"$out"
job_done_once restart "$(sed -n 's/^job=\([0-9]*\) .*/\1/p' <<<"$out" | head -n1)"

scenario regen

stop_checked coord
test_done
