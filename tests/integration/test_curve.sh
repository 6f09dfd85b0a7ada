#!/bin/bash
# CurveZMQ with the coordinator's ZAP allowlist (docs/security.md): keys from
# `kgb keygen`, a coordinator with CURVE on both sockets, a worker with an allowed key
# runs a small campaign, a CLI with an allowed key gets answers, unknown keys (worker
# and CLI) are refused and logged, keys are per socket, SIGHUP reloads the lists
# (a broken list is not taken), and a mis-configured coordinator refuses to start.
. "$(dirname "$0")/lib.sh"

K=$TEST_DIR/keys
mkdir -p "$K"
for k in coord w1 w2 u1 u2; do
	kgb keygen --out "$K/$k" --name "$k" >"$K/$k.printed" 2>/dev/null || die "kgb keygen --out $K/$k failed"
done
pubkey() { cut -d' ' -f1 "$K/$1.pub"; }
assert_eq "$(cat "$K/w1.printed")" "$(pubkey w1)" "keygen prints the public key it wrote"
assert_eq "$(stat -c %a "$K/w1.key")" 600 "the secret key file is mode 0600"
check "keygen does not replace an existing key pair" test_must_fail kgb keygen --out "$K/w1"
check "keys differ" test "$(pubkey w1)" != "$(pubkey w2)"

cat "$K/w1.pub" >"$TEST_DIR/workers.allow"
{ echo "# users of the coordinator"; cat "$K/u1.pub"; } >"$TEST_DIR/users.allow"

# ---- configurations the coordinator must refuse before it starts anything ----
rc=0
"$KGB_BIN/kgb-coordinator" --curve-workers "$TEST_DIR/workers.allow" >"$TEST_DIR/bad1.log" 2>&1 || rc=$?
assert_eq "$rc" 2 "an allowlist without a secret key is a configuration error"
check "... and says the secret key is missing" grep -q "KGB_CURVE_SECRET_KEY_FILE" "$TEST_DIR/bad1.log"
rc=0
"$KGB_BIN/kgb-coordinator" --curve-secret "$K/coord.key" --curve-workers "$TEST_DIR/workers.allow" \
	>"$TEST_DIR/bad2.log" 2>&1 || rc=$?
assert_eq "$rc" 2 "CURVE without a users allowlist is a configuration error"
check "... naming KGB_CURVE_USERS_FILE" grep -q "KGB_CURVE_USERS_FILE" "$TEST_DIR/bad2.log"
rc=0
"$KGB_BIN/kgb-coordinator" --curve-secret "$K/coord.key" --curve-workers "$K/w1.key" \
	--curve-users "$TEST_DIR/users.allow" >"$TEST_DIR/bad3.log" 2>&1 || rc=$?
assert_eq "$rc" 2 "a secret key file given as an allowlist is refused"
check "... saying it is a secret key file" grep -q "secret key file" "$TEST_DIR/bad3.log"

# ---- without CURVE: a warning when a socket is reachable from other machines ----
nodb='host=/nonexistent dbname=none connect_timeout=1'
KGB_DATABASE_URL=$nodb timeout -s TERM 3 "$KGB_BIN/kgb-coordinator" --workers "tcp://0.0.0.0:$(free_port)" \
	--cli "tcp://127.0.0.1:$(free_port)" >"$TEST_DIR/open.log" 2>&1 || true
check "plain sockets on 0.0.0.0: warned as unauthenticated" grep -q "unauthenticated" "$TEST_DIR/open.log"
KGB_DATABASE_URL=$nodb timeout -s TERM 3 "$KGB_BIN/kgb-coordinator" --workers "tcp://127.0.0.1:$(free_port)" \
	--cli "tcp://127.0.0.1:$(free_port)" >"$TEST_DIR/local.log" 2>&1 || true
check "plain sockets on loopback: no warning" test_must_fail grep -q "unauthenticated" "$TEST_DIR/local.log"

# ---- the coordinator with CURVE ----
db_init
start_coordinator coord --curve-secret "$K/coord.key" --curve-workers "$TEST_DIR/workers.allow" \
	--curve-users "$TEST_DIR/users.allow"
CLOG=$(log_of coord)
check "the coordinator logs its public key" grep -qF "public key is $(pubkey coord)" "$CLOG"

# the CLI (lib.sh's kgb, wait_registered) speaks as u1 from here on
export KGB_CURVE_SERVER_KEY_FILE=$K/coord.pub
export KGB_CURVE_SECRET_KEY_FILE=$K/u1.key
# as KEY CMD...: the CLI with another secret key
as() { local key=$1; shift; KGB_CURVE_SECRET_KEY_FILE=$K/$key.key "$KGB_BIN/kgb" "$@"; }

KGB_CURVE_SECRET_KEY_FILE=$K/w1.key start_worker w1
KGB_CURVE_SECRET_KEY_FILE=$K/w2.key start_worker w2
wait_registered w1
ok "worker w1 (allowed key) registered"

check "a CLI with an allowed key gets the status" kgb status
check "a CLI with an allowed key lists the workers" kgb workers

make_manifest "$TEST_DIR/small.json" --methods baseline --ops add,sum --name curve-small \
	--set time_limit_ms=30000 --set timing_budget_ms=50
id=$(submit "$TEST_DIR/small.json")
ok "campaign $id submitted over CURVE"
wait_campaign "$id" 300
n_expect=$(expected_cases "$id")
check "the campaign has cases" test "$n_expect" -gt 0
assert_eq "$(results_count "$id")" "$n_expect" "one result per case of the campaign"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.verdict <> 'pass'")" 0 "every case of the baseline passes"
check "kgb results answers over CURVE" kgb results "$id"

# ---- unknown keys ----
check "worker w2 (unknown key) never appears in kgb workers" test_must_fail grep -q w2 <(kgb workers)
assert_eq "$(q "SELECT count(*) FROM workers WHERE name = 'w2'")" 0 "worker w2 is not in the store"
check "the coordinator logged the refusal of w2's key" \
	grep -qF "refused workers client at 127.0.0.1, key $(pubkey w2)" "$CLOG"
check "worker w2 logs that its key was refused" grep -q "coordinator refused our key" "$(log_of w2)"
# ... and says so again in its reports of the coordinator's silence, never that no
# coordinator may be running there
refusals() { [ "$(grep -c "coordinator refused our key" "$(log_of w2)")" -ge 2 ]; }
wait_for 60 "worker w2 repeats that its key was refused" refusals
check "worker w2 never blames a coordinator that is not running" \
	test_must_fail grep -q "is kgb-coordinator running" "$(log_of w2)"

out=$TEST_DIR/u2.out
rc=0
as u2 --timeout 10 status >"$out" 2>&1 || rc=$?
assert_eq "$rc" 2 "a CLI with an unknown key exits 2 (refused)"
check "... and says the coordinator refused its key" grep -q "coordinator at .* refused our key" "$out"
check "the coordinator logged the refusal of u2's key" grep -qF "refused cli client at 127.0.0.1, key $(pubkey u2)" "$CLOG"
check "a worker's key is not a user's key" test_must_fail as w1 --timeout 10 status
# a CLI without a key, or with the wrong server key, is told why at once (exit 2), not
# after its timeout (exit 3) with a question whether the coordinator runs
rc=0
env -u KGB_CURVE_SERVER_KEY_FILE -u KGB_CURVE_SECRET_KEY_FILE "$KGB_BIN/kgb" --timeout 60 status \
	>"$TEST_DIR/plain.out" 2>&1 || rc=$?
assert_eq "$rc" 2 "a CLI without CURVE is refused before its timeout: $(cat "$TEST_DIR/plain.out")"
check "... saying the coordinator needs a CURVE key" grep -q "KGB_CURVE_SERVER_KEY_FILE" "$TEST_DIR/plain.out"
check "... not asking whether it runs" test_must_fail grep -q "is kgb-coordinator running" "$TEST_DIR/plain.out"
rc=0
KGB_CURVE_SERVER_KEY_FILE=$K/w1.pub "$KGB_BIN/kgb" --timeout 60 status >"$TEST_DIR/wrongsrv.out" 2>&1 || rc=$?
assert_eq "$rc" 2 "a CLI with the wrong server key is refused before its timeout: $(cat "$TEST_DIR/wrongsrv.out")"
check "... saying the server key is not the coordinator's" \
	grep -q "is not the coordinator's public key" "$TEST_DIR/wrongsrv.out"
rc=0
KGB_CURVE_SECRET_KEY_FILE= "$KGB_BIN/kgb" --timeout 3 status >"$TEST_DIR/nosecret.out" 2>&1 || rc=$?
assert_eq "$rc" 1 "a server key without a key pair of our own is a usage error"
check "... naming KGB_CURVE_SECRET_KEY_FILE" grep -q "KGB_CURVE_SECRET_KEY_FILE" "$TEST_DIR/nosecret.out"

# ---- handshakes refused before ZAP: no CURVE at all, or the wrong server key ----
# (the CLI attempts above reached the cli socket; these two are workers). A peer
# without CURVE is refused as a mechanism mismatch, or as a handshake that failed
# without detail when the peer notices the mismatch first and hangs up. The address is
# read when the connection is accepted, and is "-" when it closed before that.
KGB_CURVE_SERVER_KEY_FILE= KGB_CURVE_SECRET_KEY_FILE= start_worker w-plain
KGB_CURVE_SERVER_KEY_FILE=$K/w1.pub KGB_CURVE_SECRET_KEY_FILE=$K/w1.key start_worker w-wrongsrv
wait_for 30 "the plain worker's handshake refused and logged" \
	grep -qE "workers socket: refused handshake from address (127\.0\.0\.1:[0-9]+|- \(closed [a-z ]*\)): (security mechanism mismatch|handshake failed)" "$CLOG"
wait_for 30 "the wrong-server-key worker's handshake refused and logged" \
	grep -qE "workers socket: refused handshake from address (127\.0\.0\.1:[0-9]+|- \(closed [a-z ]*\)): cryptographic error" "$CLOG"
check "the CLI without CURVE was refused and logged on the cli socket" \
	grep -qE "cli socket: refused handshake from address (127\.0\.0\.1:[0-9]+|- \(closed [a-z ]*\)): (security mechanism mismatch|handshake failed)" "$CLOG"
check "the CLI with the wrong server key was refused and logged on the cli socket" \
	grep -qE "cli socket: refused handshake from address (127\.0\.0\.1:[0-9]+|- \(closed [a-z ]*\)): cryptographic error" "$CLOG"
check "neither refused worker is in the store" \
	test "$(q "SELECT count(*) FROM workers WHERE name IN ('w-plain', 'w-wrongsrv')")" = 0
wait_for 30 "the plain worker says the coordinator needs a CURVE key" \
	grep -q "refused our handshake.*it requires CURVE\|KGB_CURVE_SERVER_KEY_FILE" "$(log_of w-plain)"
check "the plain worker never blames a coordinator that is not running" \
	test_must_fail grep -q "is kgb-coordinator running" "$(log_of w-plain)"
kill_proc w-plain TERM
kill_proc w-wrongsrv TERM

# ---- SIGHUP reloads the allowlists ----
cat "$K/u2.pub" >>"$TEST_DIR/users.allow"
cat "$K/w2.pub" >>"$TEST_DIR/workers.allow"
kill_proc coord HUP
wait_for 10 "the lists reloaded" grep -q "cli allowlist .* reloaded: 2 key" "$CLOG"
check "u2 is admitted after SIGHUP" as u2 --timeout 10 status
wait_for 60 "worker w2 registered after SIGHUP" _worker_listed w2
ok "worker w2 got in after its key was added and the lists reloaded"

echo "this is not a key" >>"$TEST_DIR/users.allow"
kill_proc coord HUP
wait_for 10 "the broken list reported" grep -q "allowlists not reloaded" "$CLOG"
check "after a broken reload the old lists stay: u2 still admitted" as u2 --timeout 10 status
check "the coordinator names the bad line" grep -q "users.allow:4:" "$CLOG"

stop_checked w1
stop_checked w2
stop_checked coord
test_done
