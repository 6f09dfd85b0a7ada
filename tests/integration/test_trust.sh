#!/bin/bash
# Trust between the parts (docs/security.md), one stack:
#   1. a kernel source reads no file but itself: an #include of a file outside the
#      candidate (absolute, ../, a symbolic link beside the source) is refused by
#      `kgb validate`, by the coordinator at submit, and by the worker's compile
#      (compile_error naming the include), and the file's contents appear nowhere;
#   2. results checked for sense: a lease holder's malformed results (verdict 999,
#      verdict 0, a case twice, a case outside the shard, a timing in an untimed
#      campaign) are refused and logged with the worker's name, counted per worker
#      (kgb workers, metrics), the job goes to a genuine worker, whose verdicts are
#      the ones stored;
#   3. names and expressions: a campaign name with terminal escapes and a 1,000-deep
#      ?: chain in a plan are refused by `kgb validate`, the name shown escaped;
#   5. users and roles: with CURVE a campaign's owner is its key's user; another user
#      may not cancel, drain or rerun it, an admin may; over ipc:// without CURVE the
#      owner is the peer's local user (SO_PEERCRED);
#   4. the cluster id: the CLI and a worker refuse a coordinator with another id
#      (KGB_CLUSTER_ID, or the id pinned for the endpoint), and a second coordinator
#      on the same endpoints fails loudly instead of sharing them.
. "$(dirname "$0")/lib.sh"

SECRET="kgb-secret-$$-$RANDOM"
printf '%s\n' "$SECRET" >"$TEST_DIR/secret.txt"

# ---- 1. includes ----
# inc_candidate DIR INCLUDE: the baseline add with INCLUDE in front, and a manifest
inc_candidate() {
	local d=$1
	mkdir -p "$d/cand"
	cp "$KGB_ROOT/examples/demo/baseline/add.plan.json" "$d/cand/"
	{ printf '%s\n' "$2"; cat "$KGB_ROOT/examples/demo/baseline/add.cl"; } >"$d/cand/add.cl"
	cat >"$d/m.json" <<EOF
{"name": "inc", "operators": ["add"], "platforms": "all", "timing": false, "cases": "smoke",
 "methods": [{"name": "m", "candidates": [{"operator": "add", "plan": "cand/add.plan.json"}]}]}
EOF
}
declare -A INC=(
	[absolute]="#include \"$TEST_DIR/secret.txt\""
	[parent]='#include "../../secret.txt"'
	[symlink]='#include "link.h"'
	[spliced]=$'#inc\\\nlude "/etc/hostname"'
)
for k in absolute parent symlink spliced; do
	d=$TEST_DIR/inc-$k
	inc_candidate "$d" "${INC[$k]}"
	[ "$k" != symlink ] || ln -s "$TEST_DIR/secret.txt" "$d/cand/link.h"
	out=$(kgb validate --no-triton "$d/m.json" 2>&1) && rc=0 || rc=$?
	check "$k include: kgb validate refuses it (exit $rc)" test "$rc" -ne 0
	check "$k include: ... naming the file, line and include" grep -q "add.cl: line 1: #inc.* refused" <<<"$out"
	check "$k include: ... and showing nothing of the file" test "$(grep -c "$SECRET" <<<"$out")" = 0
	# the worker's compile, with the check at submit left out (a standalone job)
	"$KGB_PY" - "$d/cand/add.cl" >"$d/job.json" <<EOF
import json, sys
print(json.dumps({"op": "add", "cases": [0], "seed": 1, "backend": "opencl", "device": 0, "timing": False,
                  "time_limit_ms": 30000, "plan": "$d/cand/add.plan.json",
                  "sources": {"add.cl": {"inline": open(sys.argv[1]).read()}}}))
EOF
	ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0" "$KGB_BIN/kgb-worker" run "$d/job.json" >"$d/out.json" 2>"$d/err" || true
	check "$k include: the worker's compile gives compile_error naming the include" \
		"$KGB_PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"][0]
sys.exit(not (c["verdict"] == "compile_error" and "#inc" in c.get("message", "") and "refused" in c["message"]))' "$d/out.json"
	check "$k include: ... and the file's contents are in none of its output" \
		test "$(cat "$d/out.json" "$d/err" | grep -c "$SECRET")" = 0
done

# ---- 4. names and expressions ----
d=$TEST_DIR/names
inc_candidate "$d" "/* nothing included */"
"$KGB_PY" - "$d/m.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["name"] = "evil\x1b]0;owned\x07\x1b[2J"
json.dump(m, open(sys.argv[1], "w"))
EOF
out=$(kgb validate --no-triton "$d/m.json" 2>&1) && rc=0 || rc=$?
check "a campaign name with terminal escapes is refused (exit $rc)" test "$rc" -ne 0
check "... shown escaped" grep -qF "'evil\x1b]0;owned\x07\x1b[2J': a control character" <<<"$out"
check "... with no escape byte in the message" test "$(printf '%s' "$out" | tr -d '\n' | grep -c $'\x1b')" = 0
"$KGB_PY" - "$d/m.json" "$d/cand/add.plan.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["name"] = "deep"
json.dump(m, open(sys.argv[1], "w"))
p = json.load(open(sys.argv[2]))
p["kernels"][0]["grid"] = ["0?1:" * 1000 + "cdiv(out.numel, 256)"]
json.dump(p, open(sys.argv[2], "w"))
EOF
out=$(kgb validate --no-triton "$d/m.json" 2>&1) && rc=0 || rc=$?
check "a 1,000-deep ?: chain in a plan is refused (exit $rc)" test "$rc" -ne 0
check "... as nested too deep" grep -q "nested deeper than 64" <<<"$out"

# ---- the stack ----
db_init
mport=$(free_port)
export KGB_METRICS_ENDPOINT=127.0.0.1:$mport KGB_HEARTBEAT_MS=300
start_coordinator coord --max-attempts 30 --backoff-ms 20
CLUSTER=$KGB_CLUSTER_ID
assert_eq "$(q "SELECT id FROM cluster")" "$CLUSTER" "the coordinator's cluster id is its store's"

# the coordinator refuses an include at submit too (the CLI's check left out)
"$KGB_PY" - "$TEST_DIR/inc-absolute/cand" >"$TEST_DIR/inc-inline.json" <<'EOF'
import json, sys
d = sys.argv[1]
print(json.dumps({"name": "inc", "operators": ["add"], "platforms": "all", "methods": [{"name": "m",
    "candidates": [{"operator": "add", "plan": json.load(open(d + "/add.plan.json")),
                    "sources": {"add.cl": {"inline": open(d + "/add.cl").read()}}}]}]}))
EOF
out=$(kgbwire submit "$KGB_CLI_ENDPOINT" "$TEST_DIR/inc-inline.json")
check "the coordinator refuses an included file at submit ($out)" grep -q "^ok=0 .*#include .* refused" <<<"$out"
assert_eq "$(q "SELECT count(*) FROM campaigns")" 0 "... and stores nothing of it"

# ---- 2. results checked for sense ----
CATVER=$(kgb ops --json | "$KGB_PY" -c 'import json,sys; print(json.load(sys.stdin)["catalog_version"])')
PLAT=opencl:trust-test
make_manifest "$TEST_DIR/add.json" --methods baseline --ops add --name sense --set timing=false --set shard_size=4096
id=$(submit "$TEST_DIR/add.json")
declare -A WANT=(
	[verdict999]='verdict 999 (outside the enum) is not a case verdict'
	[verdict0]='verdict 0 (unspecified) is not a case verdict'
	[dup]='reported twice (verdict wrong_result the second time)'
	[outside]="outside the job's shard"
	[timed]='marked timed, but the campaign does not time'
)
for k in verdict999 verdict0 dup outside timed; do
	out=$(kgbwire rogue "$KGB_WORKER_ENDPOINT" "rogue-$k" "$(hostname)" "$CATVER" "$PLAT" "$k" 2>&1) ||
		die "kgbwire rogue $k: $out"
	check "$k: the holder's result is refused ($out)" grep -q "accepted=0 reason=result refused: case .*${WANT[$k]}" <<<"$out"
	check "$k: ... and logged naming the worker" grep -q "name=rogue-$k: result refused: .*${WANT[$k]}" "$(log_of coord)"
done
assert_eq "$(q "SELECT count(*) FROM results")" 0 "no refused result was stored"
start_worker w1 --platform "$PLAT"
wait_campaign "$id" 300
w1=$(q "SELECT id FROM workers WHERE name = 'w1'")
assert_eq "$(q "SELECT DISTINCT verdict || ' ' || worker_id FROM results")" "pass $w1" \
	"the stored verdicts are the genuine worker's (pass)"
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "one result per case"
wl=$(kgb workers)
check "kgb workers counts the refusals per worker" grep -q "^rogue-dup: 1 result(s) refused as senseless; it gets no more jobs" <<<"$wl"
check "kgb workers prints the cluster id" grep -q "cluster $CLUSTER\$" <<<"$wl"
metrics_has() { curl -fsS "http://127.0.0.1:$mport/metrics" | grep -q "^kgb_results_refused_total{worker=\"$1\"} $2\$"; }
wait_for 10 "the metrics count rogue-timed's refusal" metrics_has rogue-timed 1
# the metrics page is a snapshot the coordinator refreshes: one taken before w1
# registered has rogue-timed's line and none of w1's yet
# (one fetch that fails, on a loaded machine, is no verdict: wait_for asks again, and
# fails the test when the line never comes)
wait_for 10 "w1's line on the metrics page, with no refusal" metrics_has w1 0
ok "... and none for w1 (kgb_results_refused_total{worker=\"w1\"} 0)"

# ---- 3. the cluster id ----
out=$(KGB_CLUSTER_ID=0123456789abcdef kgb status 2>&1) && rc=0 || rc=$?
assert_eq "$rc" 2 "the CLI refuses a coordinator with another cluster id"
check "... saying which" grep -q "is cluster $CLUSTER, not KGB_CLUSTER_ID=0123456789abcdef" <<<"$out"
# first use pins the id for the endpoint; another id pinned there is refused
(unset KGB_CLUSTER_ID; kgb status >/dev/null) || fail "kgb status without KGB_CLUSTER_ID"
check "first use pins the endpoint's cluster id" grep -q "^$KGB_CLI_ENDPOINT $CLUSTER\$" "$KGB_CONFIG_DIR/clusters"
printf '%s fedcba9876543210\n' "$KGB_CLI_ENDPOINT" >"$KGB_CONFIG_DIR/clusters"
out=$(unset KGB_CLUSTER_ID; kgb status 2>&1) && rc=0 || rc=$?
assert_eq "$rc" 2 "the CLI refuses a coordinator other than the one pinned"
check "... naming the pin file and line" grep -q "clusters line 1 pinned cluster fedcba9876543210" <<<"$out"
KGB_CLUSTER_ID=fedcba9876543210 start_worker wbad
wait_for 30 "the worker with another cluster id exits" eval '! proc_alive wbad'
rc=0; stop_proc wbad || rc=$?
assert_eq "$rc" 2 "a worker refuses a coordinator with another cluster id (exit 2)"
check "... saying so" grep -q "is cluster $CLUSTER, not KGB_CLUSTER_ID=fedcba9876543210" "$(log_of wbad)"
# a second coordinator on the same endpoints fails loudly and takes nothing over; the
# scripts' wait (scripts/coord-up.sh) says so instead of going on with the first one's
. "$KGB_ROOT/scripts/coord-up.sh"
"$KGB_BIN/kgb-coordinator" >"$TEST_DIR/second.log" 2>&1 &
second=$!
out=$( (unset KGB_CLUSTER_ID; kgb_coord_ready "$TEST_DIR/second.log" "$second" 60) 2>&1) && rc=0 || rc=$?
wait "$second" && src=0 || src=$?
check "a second coordinator on the same endpoints exits non-zero (exit $src)" test "$src" -ne 0
check "... saying the address is in use" grep -qi "address already in use" "$TEST_DIR/second.log"
assert_eq "$rc" 1 "the scripts' wait for their coordinator fails"
check "... saying it exited before it was ready" grep -q "exited before it was ready" <<<"$out"
check "the first one is still the one answering" grep -q "cluster $CLUSTER\$" <(kgb workers)
# every script that starts a coordinator takes ports the kernel picks (unless told)
# and waits through kgb_coord_ready
for f in $(grep -l 'kgb-coordinator.*&$' "$KGB_ROOT"/scripts/*.sh); do
	check "$(basename "$f") waits through kgb_coord_ready" grep -q "kgb_coord_ready\|coord-up.sh" "$f"
	check "$(basename "$f") has no fixed default port" test "$(grep -Ec 'tcp://[^ "]*[0-9]{4}' "$f")" = 0
done

stop_checked w1
stop_checked coord

# ---- 5. users and roles ----
# CURVE on, the same store: the owner is the key's user, whatever KGB_USER says;
# another user may not cancel, drain or rerun it, an admin may
K=$TEST_DIR/keys
mkdir -p "$K"
for k in coord w alice bob root; do
	kgb keygen --out "$K/$k" --name "$k" >/dev/null 2>&1 || die "kgb keygen $k failed"
done
cat "$K/w.pub" >"$TEST_DIR/workers.allow"
{ cat "$K/alice.pub" "$K/bob.pub"; printf '%s root role=admin\n' "$(cut -d' ' -f1 "$K/root.pub")"; } >"$TEST_DIR/users.allow"
start_coordinator coord2 --curve-secret "$K/coord.key" --curve-workers "$TEST_DIR/workers.allow" \
	--curve-users "$TEST_DIR/users.allow"
export KGB_CURVE_SERVER_KEY_FILE=$K/coord.pub
as() { local who=$1; shift; KGB_CURVE_SECRET_KEY_FILE=$K/$who.key KGB_USER=mallory kgb "$@"; }
make_manifest "$TEST_DIR/own.json" --methods baseline --ops add --name own --set timing=false
out=$(as alice submit "$TEST_DIR/own.json") || die "alice's submit failed: $out"
own=$(sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' <<<"$out" | head -n1)
assert_eq "$(q "SELECT owner FROM campaigns WHERE id = $own")" alice "the owner is the key's user, not KGB_USER"
for cmd in cancel drain rerun; do
	out=$(as bob "$cmd" "$own" 2>&1) && rc=0 || rc=$?
	check "bob may not $cmd alice's campaign (exit $rc)" test "$rc" -ne 0
	check "... told whose it is" grep -q "campaign $own belongs to 'alice': user 'bob' may $cmd only its own" <<<"$out"
done
assert_eq "$(q "SELECT state FROM campaigns WHERE id = $own")" queued "alice's campaign is untouched"
check "an admin may cancel it" as root cancel "$own"
assert_eq "$(q "SELECT state FROM campaigns WHERE id = $own")" cancelled "... and it is cancelled"
out=$(as bob submit "$TEST_DIR/own.json") || die "bob's submit failed: $out"
bobs=$(sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' <<<"$out" | head -n1)
check "bob may cancel his own" as bob cancel "$bobs"
unset KGB_CURVE_SERVER_KEY_FILE
stop_checked coord2

# CURVE off on an ipc:// endpoint: the owner is the peer process's user (SO_PEERCRED);
# another local user may not cancel it
export KGB_CLI_ENDPOINT=ipc://$TEST_DIR/cli.sock
start_coordinator coord3
chmod 0777 "$TEST_DIR/cli.sock"
out=$(KGB_USER=mallory kgb submit "$TEST_DIR/own.json") || die "submit over ipc failed: $out"
mine=$(sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' <<<"$out" | head -n1)
assert_eq "$(q "SELECT owner FROM campaigns WHERE id = $mine")" "$(id -un)" \
	"over ipc:// the owner is the peer's user, not KGB_USER"
if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && ! runuser -u postgres -- test -x "$KGB_BIN/kgb"; then
	ok "SKIPPED another local user's cancel: user postgres cannot run $KGB_BIN/kgb (a directory above it is private)"
elif [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then
	out=$(runuser -u postgres -- env KGB_USER="$(id -un)" KGB_CONFIG_DIR=/nonexistent "$KGB_BIN/kgb" cancel "$mine" 2>&1) &&
		rc=0 || rc=$?
	check "another local user may not cancel it (exit $rc)" test "$rc" -ne 0
	check "... told whose it is" grep -q "belongs to '$(id -un)': user 'postgres' may cancel only its own" <<<"$out"
else
	_say "skipped: a second local user needs root and a 'postgres' user"
fi
check "its owner may" kgb cancel "$mine"
stop_checked coord3
test_done
