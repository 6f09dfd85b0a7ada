#!/bin/bash
# Results, heartbeats and lease renewals are taken only from the worker that holds the
# lease, on the connection it registered on (docs/security.md). While a genuine worker
# runs a job whose true verdict is `timeout`, raw ZeroMQ peers try to write `pass`:
#   - a peer that never registered, naming the worker's id, job and epoch;
#   - the same peer renewing the lease with a heartbeat;
#   - a peer that registers under a name of its own and claims the job;
#   - a peer that registers under the genuine worker's own name (a new process, CURVE
#     off) and claims the job.
# Every attempt is refused and logged with the peer's address (and key, with CURVE),
# and the store ends with the genuine verdicts only, each row naming its worker. With
# CURVE on, a second allowlisted key gets nowhere either, and cannot take the name.
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=3000 KGB_HEARTBEAT_MS=400
# a worker stopping waits for its running executor (up to its grace period)
export KGB_STOP_TIMEOUT=45
CATVER=$("$KGB_BIN/kgb" ops --json | "$KGB_PY" -c 'import json,sys; print(json.load(sys.stdin)["catalog_version"])')
[ -n "$CATVER" ] || die "no catalog version from kgb ops --json"

# run_attack LABEL: submit a campaign whose job w1 runs to its time limit, attack it
# while it runs, then check the store. Uses KGBWIRE_CURVE_* from the environment.
run_attack() {
	local label=$1
	make_manifest "$TEST_DIR/$label.json" --methods agent-b --ops softmax --name "forge-$label" \
		--set time_limit_ms=20000 --set shard_size=64
	local id job w1id wid epoch lo hi host out nlog
	id=$(submit "$TEST_DIR/$label.json")
	job=$(q "SELECT id FROM jobs WHERE campaign_id = $id ORDER BY id LIMIT 1")
	w1id=$(q "SELECT id FROM workers WHERE name = 'w1'")
	job_running_on_w1() { [ "$(q "SELECT worker_id FROM jobs WHERE id = $job AND state = 'running'")" = "$w1id" ]; }
	wait_for 60 "$label: job $job running on w1" job_running_on_w1
	wid=w-$w1id
	epoch=$(q "SELECT epoch FROM jobs WHERE id = $job")
	lo=$(q "SELECT case_lo FROM jobs WHERE id = $job")
	hi=$(q "SELECT case_hi FROM jobs WHERE id = $job")
	host=$(q "SELECT hostname FROM workers WHERE id = $w1id")
	nlog=$(wc -l <"$(log_of "$COORD")")
	since() { tail -n +"$((nlog + 1))" "$(log_of "$COORD")"; }

	# 1. a peer that never registered
	out=$(kgbwire forge-result "$KGB_WORKER_ENDPOINT" "$wid" "$job" "$epoch" "$lo" "$hi") ||
		die "$label: kgbwire forge-result failed: $out"
	case $out in accepted=0\ register_again=1*) ok "$label: a result from an unregistered peer is refused" ;;
	*) fail "$label: unregistered peer's result: $out" ;; esac
	check "$label: ... and logged with the peer's address" \
		grep -q "job=$job worker=$wid: result for job $job refused: connection .* (from address 127.0.0.1" <(since)

	# 2. a lease renewal from it
	out=$(kgbwire forge-heartbeat "$KGB_WORKER_ENDPOINT" "$wid" "$job" "$epoch") ||
		die "$label: kgbwire forge-heartbeat failed: $out"
	assert_eq "$out" "known=0 cancel=" "$label: a heartbeat from an unregistered peer renews nothing"
	check "$label: ... and is logged as refused" grep -q "worker=$wid: heartbeat refused" <(since)

	# 3. a peer registered under a name of its own
	out=$(kgbwire impostor "$KGB_WORKER_ENDPOINT" "evil-$label" "$host" "$CATVER" "$job" "$epoch" "$lo" "$hi") ||
		die "$label: kgbwire impostor failed: $out"
	check "$label: the impostor could register under its own name" grep -q '^register ok=1' <<<"$out"
	check "$label: its heartbeat naming the job is answered with a cancel" grep -q "^known=1 cancel=$job\$" <<<"$out"
	check "$label: its result is refused (not the lease holder)" \
		grep -q "^accepted=0 register_again=0 reason=.*does not hold its lease" <<<"$out"

	# 4. a peer under the genuine worker's own name: with CURVE the name is bound to
	#    w1's key and the registration is refused; without, it is another process, which
	#    inherits none of w1's leases
	out=$(kgbwire impostor "$KGB_WORKER_ENDPOINT" w1 "$host" "$CATVER" "$job" "$epoch" "$lo" "$hi") ||
		die "$label: kgbwire impostor w1 failed: $out"
	if [ -n "${KGBWIRE_CURVE_SECRET_KEY_FILE:-}" ]; then
		check "$label: another key cannot register under w1's name" \
			grep -q "^register ok=0 .*bound to CURVE key" <<<"$out"
		check "$label: ... and the refusal is logged with the key" \
			grep -qF "$(cut -d' ' -f1 "${KGBWIRE_CURVE_SECRET_KEY_FILE%.key}.pub")" <(since)
	else
		check "$label: a second process under w1's name may register" grep -q '^register ok=1' <<<"$out"
		check "$label: ... but its result for w1's job is refused" \
			grep -q "^accepted=0 register_again=0 reason=.*does not hold its lease" <<<"$out"
	fi

	wait_campaign "$id" 180
	assert_eq "$(q "SELECT count(*) FROM results WHERE job_id = $job AND verdict = 'pass'")" 0 \
		"$label: no forged pass was stored for job $job"
	assert_eq "$(q "SELECT count(*) FROM results WHERE job_id = $job")" "$((hi - lo))" \
		"$label: one result per case"
	assert_eq "$(q "SELECT DISTINCT worker_id FROM results WHERE job_id = $job")" "$w1id" \
		"$label: every result of job $job was written by w1"
	# w1's own verdict: the first case times out, which ends the executor, and the
	# cases after it are not run
	assert_eq "$(q "SELECT DISTINCT verdict FROM results WHERE job_id = $job AND verdict <> 'not_run'")" \
		timeout "$label: the stored verdict is w1's own (timeout)"
	assert_eq "$(q "SELECT count(*) FROM results WHERE worker_id IS NULL")" 0 "$label: every result names its worker"
}

# ---- CURVE off ----
COORD=coord
db_init
start_coordinator coord
start_worker w1
wait_registered w1
run_attack plain
check "coordinator stayed up" proc_alive coord
check "w1 stayed up" proc_alive w1
stop_checked w1
stop_checked coord

# ---- CURVE on: w2's key is on the allowlist, but w2 holds no lease ----
K=$TEST_DIR/keys
mkdir -p "$K"
for k in coord w1 w2 u1; do
	kgb keygen --out "$K/$k" --name "$k" >/dev/null 2>&1 || die "kgb keygen $k failed"
done
cat "$K/w1.pub" "$K/w2.pub" >"$TEST_DIR/workers.allow"
cat "$K/u1.pub" >"$TEST_DIR/users.allow"
# the same store: w1's name, known without a key so far, is bound to the first key
# that registers it
start_coordinator coord2 --curve-secret "$K/coord.key" --curve-workers "$TEST_DIR/workers.allow" \
	--curve-users "$TEST_DIR/users.allow"
COORD=coord2
export KGB_CURVE_SERVER_KEY_FILE=$K/coord.pub KGB_CURVE_SECRET_KEY_FILE=$K/u1.key
KGB_CURVE_SECRET_KEY_FILE=$K/w1.key start_worker w1
wait_registered w1
assert_eq "$(q "SELECT curve_key FROM workers WHERE name = 'w1'")" "$(cut -d' ' -f1 "$K/w1.pub")" \
	"the store binds w1's name to its key"
export KGBWIRE_CURVE_SERVER_KEY_FILE=$K/coord.pub KGBWIRE_CURVE_SECRET_KEY_FILE=$K/w2.key
run_attack curve
check "the refusals name w2's key" grep -qF "key $(cut -d' ' -f1 "$K/w2.pub")" "$(log_of coord2)"
stop_checked w1
stop_checked coord2
test_done
