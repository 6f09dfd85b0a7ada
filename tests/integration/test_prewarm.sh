#!/bin/bash
# Pre-warmed executors (docs/worker.md, "Pre-warmed executors"): a worker started with
# --prewarm on keeps an executor per free slot (and one at least) with its device open
# before any job arrives; every job of a campaign starts in one of them, every case
# still passes, each job's log says its device was opened before it arrived, and the
# worker keeps no executor behind when it stops. One that ends while it waits is let
# go (logged, a pause before the next), and jobs then start in fresh executors.
# The device is PoCL's CPU device; on GPUs the same path is the default (auto).
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1 --slots 2 --prewarm on
wait_registered w1
wlog() { cat "$TEST_DIR"/logs/w1.*.log; }
warm_pids() { wlog | sed -n 's/.*pre-warming executor pid \([0-9]*\).*/\1/p'; }
two_warm() { [ "$(warm_pids | wc -l)" -ge 2 ]; }
wait_for 30 "two executors pre-warmed before any job" two_warm
ok "the worker pre-warms an executor per free slot before any job"
for p in $(warm_pids); do
	check "pre-warmed executor $p waits for its job" kill -0 "$p"
done

make_manifest "$TEST_DIR/m.json" --methods baseline --ops add,silu,sum,neg --name prewarm \
	--set shard_size=8 --set time_limit_ms=60000 --set timing_budget_ms=20 --set 'cases="smoke"'
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 400
njobs=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id")
check "the campaign has more jobs than slots ($njobs)" test "$njobs" -gt 2
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "one result per case"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.verdict <> 'pass'")" 0 "every case passes in pre-warmed executors"
started=$(wlog | grep -c ' started: op ')
prewarmed=$(wlog | grep -c ' started: op .*(pre-warmed)')
assert_eq "$prewarmed" "$started" "every job started in a pre-warmed executor ($prewarmed of $started)"
# each job's executor is one the worker had announced before the job
bad=0
for p in $(wlog | sed -n 's/.* started: op .*executor pid \([0-9]*\) (pre-warmed).*/\1/p'); do
	warm_pids | grep -qx "$p" || bad=$((bad + 1))
done
assert_eq "$bad" 0 "each job ran in an executor started before it"
opened=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND log LIKE '%opened before the job arrived%'")
assert_eq "$opened" "$njobs" "each job's log says its device was opened before it arrived"

# an executor that ends while it waits: let go, logged, jobs start cold meanwhile
waiting=$(for p in $(warm_pids); do kill -0 "$p" 2>/dev/null && echo "$p"; done)
check "executors wait for the next jobs after the campaign" test -n "$waiting"
for p in $waiting; do kill -KILL "$p"; done
ended() { wlog | grep -q 'pre-warmed executor pid [0-9]* ended before it had a job (status -9)'; }
wait_for 20 "the worker notices its waiting executors ended" ended
ok "a waiting executor that was killed is let go and logged"
make_manifest "$TEST_DIR/m2.json" --methods baseline --ops add,neg --name prewarm2 \
	--set shard_size=8 --set time_limit_ms=60000 --set timing_budget_ms=20 --set 'cases="smoke"'
id2=$(submit "$TEST_DIR/m2.json")
wait_campaign "$id2" 400
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id2 AND r.verdict <> 'pass'")" 0 "jobs after the loss still pass"
assert_eq "$(results_count "$id2")" "$(expected_cases "$id2")" "one result per case after the loss"

pids=$(warm_pids)
stop_checked w1
left=0
for p in $pids; do
	kill -0 "$p" 2>/dev/null && ! _is_zombie "$p" && left=$((left + 1))
done
assert_eq "$left" 0 "no executor outlives the stopped worker"
stop_checked coord
test_done
