#!/bin/bash
# kgb-test: budget=90
# Two coordinators on one PostgreSQL, two CPU workers and the CLI given both endpoints
# (docs/scheduler.md, "Standby coordinator"). With a campaign in flight:
#   1. the active one is killed with SIGKILL: the standby takes over, the workers follow
#      it and the campaign finishes;
#   2. the first one comes back as a standby; the active one is paused with SIGSTOP: the
#      standby takes over, and once it serves the paused one is let go on with SIGCONT:
#      it steps down (exit status 3) and no write of its old term reaches the store.
# The standby tells its service manager READY=1 with STATUS=standby, and STATUS=active
# once it serves; the Kubernetes readiness probe's command fails on a standby. Each
# campaign ends with every case recorded exactly once. The time from the kill (or
# the pause) until the standby answers the CLI is printed.
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=3000 KGB_HEARTBEAT_MS=500
db_init
WEP_A=$KGB_WORKER_ENDPOINT CEP_A=$KGB_CLI_ENDPOINT
WEP_B="tcp://127.0.0.1:$(free_port)" CEP_B="tcp://127.0.0.1:$(free_port)"

start_coordinator a
# start_standby NAME WEP CEP: a coordinator that finds another one active
start_standby() {
	local name=$1 log; log=$(_next_log "$1")
	: >"$log"
	KGB_WORKER_ENDPOINT=$2 KGB_CLI_ENDPOINT=$3 _spawn "$name" "$log" "$KGB_BIN/kgb-coordinator"
	wait_for 120 "coordinator $name standing by" grep -q "^kgb-coordinator: standby (cluster $KGB_CLUSTER_ID)" "$log"
}
notify_listen notify "$TEST_DIR/notify.sock"
NOTIFY_SOCKET=$TEST_DIR/notify.sock start_standby b "$WEP_B" "$CEP_B"
ok "coordinator b stands by"
wait_for 20 "READY=1 from the standby" notified notify '^READY=1 STATUS=standby'
ok "the standby told its service manager READY=1 with STATUS=standby"

# every statement of the coordinators that changes jobs or results, as committed, with
# the leader epoch it ran under (a fixture of this test, not of kgb)
q "CREATE TABLE audit (epoch bigint, at timestamptz NOT NULL DEFAULT clock_timestamp());
   CREATE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
     IF coalesce(current_setting('kgb.epoch', true), '') <> '' THEN
       INSERT INTO audit (epoch) VALUES (current_setting('kgb.epoch')::bigint); END IF;
     RETURN NULL; END \$\$;
   CREATE TRIGGER audit_jobs AFTER INSERT OR UPDATE OR DELETE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION audit_write();
   CREATE TRIGGER audit_results AFTER INSERT OR UPDATE OR DELETE ON results FOR EACH STATEMENT EXECUTE FUNCTION audit_write();"

export KGB_WORKER_ENDPOINT="$WEP_A,$WEP_B" KGB_CLI_ENDPOINT="$CEP_A,$CEP_B"
start_worker w1
start_worker w2
wait_registered w1
wait_registered w2

make_manifest "$TEST_DIR/m.json" --methods baseline --ops add,gt \
	--set shard_size=4 --set timing=false

ms() { date +%s%3N; }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }
# serves CEP: that coordinator, alone, answers the CLI (the readiness probe of
# deploy/kubernetes/kgb-coordinator.yaml: a standby fails it)
serves() { kgb workers --timeout 1 --coordinator "$1" >/dev/null 2>&1; }
check "a standby fails the readiness probe" test_must_fail serves "$CEP_B"
check "the active coordinator passes it" serves "$CEP_A"

# campaign_checks ID: every case of the campaign recorded exactly once, every job done
campaign_checks() {
	local id=$1
	assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "campaign $id: every case recorded"
	assert_eq "$(q "SELECT count(*) FROM (SELECT job_id, case_index FROM results r JOIN jobs j ON j.id = r.job_id
	               WHERE j.campaign_id = $id GROUP BY 1, 2 HAVING count(*) > 1) d")" 0 \
		"campaign $id: no case recorded twice"
	assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state <> 'done'")" 0 \
		"campaign $id: every job done"
}

# some_done ID: a few of its jobs are done (the campaign is in flight)
some_done() { [ "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $1 AND state = 'done'")" -ge 3 ]; }

# ---- 1. SIGKILL of the active coordinator ----
id1=$(submit "$TEST_DIR/m.json")
wait_for 300 "3 jobs of campaign $id1 done" some_done "$id1"
kill_proc a KILL
t0=$(ms)
wait_for 60 "coordinator b serving" serves "$CEP_B"
t1=$(ms)
ok "coordinator b took over after the SIGKILL of a: $(secs $((t1 - t0))) s until it served the CLI"
[ "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id1 AND state <> 'done'")" -gt 0 ] ||
	fail "campaign $id1 finished before the kill: the test proves nothing"
wait_for 20 "READY=1 with STATUS=active from b" notified notify '^READY=1 STATUS=active (leader epoch [0-9]*), serving$'
ok "b told its service manager it is active once it served"
wait_campaign "$id1" 300
campaign_checks "$id1"
check "the CLI with both endpoints follows b" kgb status "$id1"

# ---- 2. SIGSTOP of the active coordinator, SIGCONT after the takeover ----
start_standby a "$WEP_A" "$CEP_A"
ok "coordinator a is back, as a standby"
id2=$(submit "$TEST_DIR/m.json")
wait_for 300 "3 jobs of campaign $id2 done" some_done "$id2"
eb=$(q "SELECT epoch FROM coord_leader")
before=$(q "SELECT count(*) FROM audit WHERE epoch = $eb")
[ "$before" -gt 0 ] || fail "the audit saw no write of b (epoch $eb): the check below would prove nothing"
kill_proc b STOP
t0=$(ms)
wait_for 60 "coordinator a serving" serves "$CEP_A"
t1=$(ms)
ok "coordinator a took over from the paused b: $(secs $((t1 - t0))) s after the SIGSTOP until it served the CLI"
assert_eq "$(q "SELECT epoch > $eb FROM coord_leader")" t "the leader epoch moved on"
kill_proc b CONT
b_gone() { ! proc_alive b; }
wait_for 60 "coordinator b exits" b_gone
rc=0
stop_proc b || rc=$?
assert_eq "$rc" 3 "the paused coordinator steps down when it resumes (exit status 3)"
check "it says why" grep -q "stepping down" "$(log_of b)"
assert_eq "$(q "SELECT count(*) FROM audit, coord_leader l WHERE audit.epoch = $eb AND audit.at >= l.since")" 0 \
	"no write of the paused coordinator's term reached the store after the takeover"
wait_campaign "$id2" 300
campaign_checks "$id2"

stop_checked w1
stop_checked w2
stop_checked a
test_done
