#!/bin/bash
# kgb-test: budget=60
# A worker started by the Slurm script (deploy/slurm/kgb-worker.sbatch) gets SIGTERM, as
# Slurm's --signal sends it before the allocation ends, while it runs two jobs that
# would not end within its grace period. It stops taking jobs, hands both leases back
# and exits 0; the coordinator requeues them at once, the attempt not counted, and a
# second worker finishes them. Leases last 10 minutes here, so a job that waited for
# its lease to expire would not finish within the test: the store's record of each job
# (its last error, its attempts) says how it came back. Every case is stored once.
#
# Slurm itself is not here: `srun` is a double (tests/integration/lib.sh names it) that
# runs the one task on this machine, so the worker is the task that gets the signal.
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=600000 KGB_HEARTBEAT_MS=400
db_init
start_coordinator coord

# agent-b's softmax spins forever: both jobs are still running when the signal comes,
# and end with the timeout verdict after time_limit_ms on the second worker
make_manifest "$TEST_DIR/m.json" --methods agent-b --ops softmax --set time_limit_ms=5000 \
	--set shard_size=4 --set heldout=0
id=$(submit "$TEST_DIR/m.json")

mkdir -p "$TEST_DIR/bin"
cat >"$TEST_DIR/bin/srun" <<'EOF'
#!/bin/sh
# double of Slurm's srun: runs the step's one task here, as the only node
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
export SLURMD_NODENAME=node1 SLURM_STEP_ID=0 SLURM_PROCID=0
exec "$@"
EOF
chmod +x "$TEST_DIR/bin/srun"
log=$(_next_log slurm)
SLURM_JOB_ID=4242 KGB_WORKER_GRACE_MS=1000 KGB_WORKER_SLOTS=2 KGB_WORKER_BACKEND=opencl \
	PATH="$TEST_DIR/bin:$KGB_BIN:$PATH" \
	ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0" \
	_spawn slurm "$log" bash "$KGB_ROOT/deploy/slurm/kgb-worker.sbatch"
wname=slurm-4242-node1
wait_registered "$wname"
ok "the Slurm script started worker $wname"

both_running() {
	[ "$(q "SELECT count(*) FROM jobs j JOIN workers w ON w.id = j.worker_id
	        WHERE j.campaign_id = $id AND j.state = 'running' AND w.name = '$wname'")" = 2 ]
}
wait_for 60 "both jobs running on $wname" both_running
started() { [ "$(grep -c ' started: op softmax' "$log")" -ge 2 ]; }
wait_for 60 "both executors started" started
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id")" 2 "two jobs (the 8 smoke cases, 4 a job)"
rc=0
stop_proc slurm || rc=$?
assert_eq "$rc" 0 "the worker exits 0 on SIGTERM"
check "the worker handed back two leases" test "$(grep -c 'lease handed back: the shutdown grace' "$log")" -eq 2
check "the coordinator heard it stop" grep -q "name=$wname is stopping" "$(log_of coord)"
assert_eq "$(q "SELECT state FROM workers WHERE name = '$wname'")" gone "the worker is recorded as gone"
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'queued' AND attempts = 0")" 2 \
	"both jobs queued again at once, the attempt given back"

start_worker w2 --backend opencl --slots 2
wait_campaign "$id" 120
ok "w2 finished the campaign (leases last ${KGB_LEASE_MS} ms: none expired)"

assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'done' AND attempts = 1
                AND last_error LIKE 'lease handed back by worker % ($wname): the worker stopped'")" 2 \
	"both jobs done after one counted attempt, their last requeue a hand-back"
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND last_error LIKE '%expired%'")" 0 \
	"no lease expired"
check "no lease expiry in the coordinator log" test "$(grep -c 'lease expired' "$(log_of coord)")" -eq 0
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "one result per case"
assert_eq "$(q "SELECT count(*) FROM (SELECT job_id, case_index FROM results r JOIN jobs j ON j.id = r.job_id
                WHERE j.campaign_id = $id GROUP BY 1, 2 HAVING count(*) > 1) d")" 0 "no case stored twice"
assert_eq "$(q "SELECT DISTINCT w.name FROM results r JOIN jobs j ON j.id = r.job_id
                JOIN workers w ON w.id = r.worker_id WHERE j.campaign_id = $id")" w2 "the results come from w2"

stop_checked w2
stop_checked coord
test_done
