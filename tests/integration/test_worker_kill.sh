#!/bin/bash
# A worker killed with SIGKILL in the middle of a job: the lease runs out, the job goes
# back to the queue and a second worker runs it; the job's cases are recorded exactly
# once and the job shows two attempts. The executor child of the killed worker must
# not outlive it.
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=2000 KGB_HEARTBEAT_MS=400
db_init
start_coordinator coord
start_worker w1
wait_registered w1

# agent-b's softmax spins forever: the job is reliably still running when w1 dies,
# and ends with the timeout verdict after time_limit_ms on the second worker.
make_manifest "$TEST_DIR/m.json" --methods agent-b --ops softmax --set time_limit_ms=5000 --set shard_size=64 --set heldout=0
id=$(submit "$TEST_DIR/m.json")
job=$(q "SELECT id FROM jobs WHERE campaign_id = $id ORDER BY id LIMIT 1")
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id")" 1 "one job (shard_size covers every case)"

job_running_on() {
	[ "$(q "SELECT w.name FROM jobs j JOIN workers w ON w.id = j.worker_id
	        WHERE j.id = $job AND j.state = 'running'")" = "$1" ]
}
wait_for 60 "job $job running on w1" job_running_on w1
sleep 1   # into the device work
w1pid=$(pid_of w1)
kids=$(pgrep -P "$w1pid" || true)
kill_proc w1 KILL
ok "w1 (pid $w1pid) killed with SIGKILL while running job $job"

# the executor children die with their worker
children_gone() {
	local k
	for k in $kids; do
		kill -0 "$k" 2>/dev/null && return 1
	done
	return 0
}
if wait_for_quiet 15 children_gone; then
	ok "w1's executor children ($(echo $kids)) exited with it"
else
	fail "w1's executor children outlived it: $(for k in $kids; do ps -o pid=,comm= -p "$k"; done | tr '\n' ' ')"
	for k in $kids; do kill -KILL "$k" 2>/dev/null || true; done
fi

start_worker w2
wait_for 60 "job $job running on w2" job_running_on w2
ok "job $job re-assigned to w2 after w1's lease expired"
wait_campaign "$id" 120

assert_eq "$(q "SELECT state FROM jobs WHERE id = $job")" done "job $job done"
check "job $job has at least 2 attempts" test "$(q "SELECT attempts FROM jobs WHERE id = $job")" -ge 2
assert_eq "$(q "SELECT count(*) FROM results WHERE job_id = $job")" \
	"$(q "SELECT case_hi - case_lo FROM jobs WHERE id = $job")" "one result per case of job $job"
assert_eq "$(q "SELECT count(*) FROM (SELECT case_index FROM results WHERE job_id = $job
                GROUP BY case_index HAVING count(*) > 1) d")" 0 "no case recorded twice"
assert_eq "$(q "SELECT DISTINCT w.name FROM results r JOIN workers w ON w.id = r.worker_id
               WHERE r.job_id = $job")" w2 "the results come from w2"
check "the timeout verdict is recorded" \
	test "$(q "SELECT count(*) FROM results WHERE job_id = $job AND verdict = 'timeout'")" -ge 1
check "coordinator stayed up" proc_alive coord

stop_checked w2
stop_checked coord
test_done
