#!/bin/bash
# Sharing a device (docs/worker.md, "Sharing a device"): a worker with two slots per
# device runs two executors at once on its one device; they take turns on the device
# through its lock (on a CPU device for whole jobs, since compiles and references there
# would share the cores being timed), every case still passes, at least one job waited
# for the device and says so in its log, and `kgb workers` shows the device's load as
# the worker counts it (kernel time over the time it had work, jobs finished). With
# KGB_DEVLOCK_TRACE, every hold of the lock is in the trace, no two exclusive holds
# overlap, and scripts/devlock-trace.py accounts for them.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
export KGB_DEVLOCK_TRACE="$TEST_DIR/devlock.trace"
start_worker w1 --slots 2
unset KGB_DEVLOCK_TRACE
wait_registered w1

make_manifest "$TEST_DIR/m.json" --methods baseline --ops add,silu,sum,neg --name sharing \
	--set shard_size=8 --set time_limit_ms=60000 --set timing_budget_ms=30 --set 'cases="smoke"'
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 400
n_expect=$(expected_cases "$id")
njobs=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id")
check "the campaign has more jobs than slots" test "$njobs" -gt 2
assert_eq "$(results_count "$id")" "$n_expect" "one result per case"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.verdict <> 'pass'")" 0 "every case passes with two executors on one device"
waited=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND log LIKE '%for the device (another job held it)%'")
check "at least one job waited for the device held by the other slot ($waited did)" test "$waited" -ge 1
# each job's phases (docs/worker.md, "Where an executor's time goes"): in its log, with
# the wait counted, and in the worker's "done" line
phw=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND log ~ 'phases \(ms\): open [0-9]+, prepare [0-9]+, lock waits [1-9]'")
check "a job's phases count its wait for the device ($phw jobs)" test "$phw" -ge 1
phd=$(cat "$TEST_DIR"/logs/w1.*.log | grep -c ' done: .*; phases (ms): open [0-9]')
check "the worker's done lines carry the jobs' phases ($phd of $njobs jobs)" test "$phd" -ge "$njobs"

# the lock's trace: one exclusive hold per job on a CPU device, none overlapping
check "the trace has a hold per job, exclusive, none overlapping another" python3 - "$TEST_DIR/devlock.trace" "$njobs" <<'PY'
import sys
holds = [l.split() for l in open(sys.argv[1])]
assert len(holds) == int(sys.argv[2]), (len(holds), sys.argv[2])
assert all(h[1] == "EX" for h in holds), holds
iv = sorted((int(h[3]), int(h[4])) for h in holds)
assert all(a[1] <= b[0] for a, b in zip(iv, iv[1:])), iv
PY
python3 "$KGB_ROOT/scripts/devlock-trace.py" "$TEST_DIR/devlock.trace" --json >"$TEST_DIR/devlock.json"
check "devlock-trace.py: every hold exclusive, a share of the span held" python3 - "$TEST_DIR/devlock.json" "$njobs" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["holds_ex"] == int(sys.argv[2]) and s["holds_sh"] == 0 and s["shared_only_pct"] == 0, s
assert 0 < s["exclusive_pct"] <= 100 and abs(s["exclusive_pct"] + s["unheld_pct"] - 100) < 1e-6, s
PY

# the load reaches the coordinator with the next heartbeats, with the jobs' phases
# summed: the same waits and exclusive time as the jobs' logs (rounded there to 1 ms; a
# CPU device is locked for the whole job, so its jobs have no exclusive phase)
logwait=$(q "SELECT coalesce(sum(substring(log from 'lock waits ([0-9]+)')::int), 0) FROM jobs WHERE campaign_id = $id")
logexcl=$(q "SELECT coalesce(sum(substring(log from 'exclusive ([0-9]+);')::int), 0) FROM jobs WHERE campaign_id = $id")
load_ok() {
	kgb workers --json | python3 -c '
import json, sys
njobs, logwait, logexcl = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
ws = json.load(sys.stdin)["workers"]
w = [x for x in ws if x["name"] == "w1"][0]
l = w["devices"][0]["load"]
assert l["jobs"] >= njobs, l
assert l["device_ms"] > 0 and l["active_ms"] > l["device_ms"], l
assert l["busy"] is not None and 0 < l["busy"] <= 1, l
p = l["phases"]
assert p["lock_wait_ms"] > 0 and abs(p["lock_wait_ms"] - logwait) <= 0.5 * njobs + 1, (p, logwait)
assert abs(p["exclusive_ms"] - logexcl) <= 0.5 * njobs + 1, (p, logexcl)
' "$njobs" "$logwait" "$logexcl"
}
wait_for 30 "kgb workers shows the device's load" load_ok
ok "kgb workers --json: jobs, kernel time, active time, busy fraction and summed phases of the device"
kgb workers --wide >"$TEST_DIR/workers.out"
check "kgb workers prints a BUSY column" grep -q BUSY "$TEST_DIR/workers.out"
check "... with the device's percentage" grep -qE ' [0-9]+%' "$TEST_DIR/workers.out"
stop_checked w1
stop_checked coord
test_done
