#!/bin/bash
# The coordinator killed with SIGKILL in the middle of a campaign and started again on
# the same store and endpoints: the workers reconnect, the campaign completes, and the
# store holds every expected case exactly once (no lost and no duplicated result).
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=3000 KGB_HEARTBEAT_MS=500
db_init
start_coordinator coord
start_worker w1
start_worker w2
wait_registered w1
wait_registered w2

# many small jobs so that the kill lands between results
make_manifest "$TEST_DIR/m.json" --methods baseline,agent-a \
	--ops add,gt,cublasSaxpy_v2 --set shard_size=4 --set timing=false
id=$(submit "$TEST_DIR/m.json")
njobs=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id")
expect=$(expected_cases "$id")
ok "campaign $id: $njobs jobs, $expect cases"

some_done() {
	local n; n=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'done'")
	[ "$n" -ge 3 ]
}
wait_for 300 "3 jobs of campaign $id done" some_done
done_before=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'done'")
kill_proc coord KILL
ok "coordinator killed with SIGKILL after $done_before of $njobs jobs"
if [ "$done_before" -ge "$njobs" ]; then
	fail "the campaign finished before the kill: the test proves nothing (make the jobs smaller)"
fi
sleep 1
start_coordinator coord
ok "coordinator restarted"
wait_campaign "$id" 600

assert_eq "$(results_count "$id")" "$expect" "every case recorded (no loss)"
assert_eq "$(q "SELECT count(*) FROM (SELECT job_id, case_index FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id GROUP BY 1, 2 HAVING count(*) > 1) d")" 0 "no case recorded twice"
assert_eq "$(q "SELECT count(*) FROM jobs j WHERE j.campaign_id = $id AND
               (SELECT count(*) FROM results r WHERE r.job_id = j.id) <> j.case_hi - j.case_lo")" 0 \
	"every job has exactly its cases"
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state <> 'done'")" 0 "every job done"
assert_eq "$(q "SELECT string_agg(DISTINCT r.verdict, ' ') FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id")" pass "every case passes (correct candidates only)"
assert_eq "$(q "SELECT count(*) FROM campaigns")" 1 "the campaign was not stored twice"
kgb status "$id" >"$TEST_DIR/status.txt" || fail "kgb status after the restart"
check "the workers are known to the new coordinator" _worker_listed w1

stop_checked w1
stop_checked w2
stop_checked coord
test_done
