#!/bin/bash
# A worker stopped with SIGSTOP past its lease and then continued: a second worker
# takes the job over under a new epoch and its result is recorded; the first worker's
# late result carries the old epoch and is rejected (the coordinator logs a stale
# epoch), so the store keeps the re-run's result only, once.
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=2000 KGB_HEARTBEAT_MS=400
db_init
start_coordinator coord
start_worker w1
wait_registered w1

# the job spins until its time limit: w1 is certainly inside it when stopped, and
# holds a finished result (timeout) to deliver when it is continued.
make_manifest "$TEST_DIR/m.json" --methods agent-b --ops softmax --set time_limit_ms=4000 --set shard_size=64
id=$(submit "$TEST_DIR/m.json")
job=$(q "SELECT id FROM jobs WHERE campaign_id = $id ORDER BY id LIMIT 1")

job_running_on() {
	[ "$(q "SELECT w.name FROM jobs j JOIN workers w ON w.id = j.worker_id
	        WHERE j.id = $job AND j.state = 'running'")" = "$1" ]
}
wait_for 60 "job $job running on w1" job_running_on w1
epoch1=$(q "SELECT epoch FROM jobs WHERE id = $job")
sleep 0.5
kill_proc w1 STOP
ok "w1 stopped (SIGSTOP) inside job $job, epoch $epoch1"

start_worker w2
wait_for 60 "job $job running on w2" job_running_on w2
epoch2=$(q "SELECT epoch FROM jobs WHERE id = $job")
check "the take-over has a newer epoch ($epoch2 > $epoch1)" test "$epoch2" -gt "$epoch1"
wait_campaign "$id" 120
w2id=$(q "SELECT id FROM workers WHERE name = 'w2'")
snapshot() {
	q "SELECT case_index, verdict, epoch, worker_id, recorded_at FROM results WHERE job_id = $job ORDER BY case_index"
}
before=$(snapshot)

# w1 comes back: its time limit has long passed, it sends its result for epoch1
nlog=$(wc -l <"$(log_of coord)")
wlog=$(wc -l <"$(log_of w1)")
kill_proc w1 CONT
# w1 either delivers its late result, which the coordinator refuses as stale, or first
# hears (from the answer to its heartbeat) that the job is no longer its and drops it:
# both ways nothing of epoch1 may land
stale_logged() {
	tail -n +"$((nlog + 1))" "$(log_of coord)" | grep -qi 'stale' ||
		tail -n +"$((wlog + 1))" "$(log_of w1)" | grep -q "job=$job epoch=$epoch1 .*cancelled by the coordinator"
}
if wait_for_quiet 30 stale_logged; then
	ok "w1's late result was refused as stale, or w1 dropped it when told the job is not its"
else
	fail "no 'stale epoch' line in the coordinator's log and no cancellation in w1's after w1 was continued"
fi
sleep 2   # give a wrongly accepted result time to land
after=$(snapshot)
assert_eq "$after" "$before" "the results of job $job are unchanged by w1's late result"
assert_eq "$(q "SELECT count(*) FROM results WHERE job_id = $job")" \
	"$(q "SELECT case_hi - case_lo FROM jobs WHERE id = $job")" "one result per case"
assert_eq "$(q "SELECT DISTINCT worker_id FROM results WHERE job_id = $job")" "$w2id" "recorded from w2 only"
assert_eq "$(q "SELECT DISTINCT epoch FROM results WHERE job_id = $job")" "$epoch2" "recorded under w2's epoch"
check "w1 is still running after its result was rejected" proc_alive w1
check "coordinator stayed up" proc_alive coord
kgb status "$id" >/dev/null || fail "kgb status after the stale result"

stop_checked w1
stop_checked w2
stop_checked coord
test_done
