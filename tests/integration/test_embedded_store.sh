#!/bin/bash
# The embedded default: with no KGB_DATABASE_URL the coordinator runs a private
# PostgreSQL in its data directory (Unix socket only, no TCP), stops it on SIGTERM, and
# starts again on the same directory, also after being killed with SIGKILL (the stale
# server of the killed run must not stop the new one).
. "$(dirname "$0")/lib.sh"

unset KGB_DATABASE_URL
# a stock Debian or Ubuntu has no initdb, postgres or pg_ctl on PATH (some images link
# them into /usr/local/bin): the coordinator must find them without PATH's help
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do
	[ -x "$d/initdb" ] || [ -x "$d/postgres" ] || [ -x "$d/pg_ctl" ] || printf '%s:' "$d"; done)
PATH=${PATH%:}
export PATH
check "no PostgreSQL server program is on PATH for this test" test_must_fail command -v initdb
DATA=$TEST_DIR/store
start_coordinator coord --data-dir "$DATA"
ok "coordinator ready with an embedded store in $DATA"
check "kgb status works" kgb status

# the embedded server, as the coordinator's log names it:
#   "embedded store: postgres pid N, cluster DIR, socket ..."
pg_pid() { grep -ho 'embedded store: postgres pid [0-9]*' "$TEST_DIR"/logs/coord.*.log | tail -n1 | grep -o '[0-9]*$'; }
pg_cluster() { grep -ho 'embedded store: postgres pid [0-9]*, cluster [^,]*' "$TEST_DIR"/logs/coord.*.log | tail -n1 | sed 's/.*cluster //'; }
pg_running() {
	local p; p=$(pg_pid) || return 1
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && grep -q postgres "/proc/$p/cmdline" 2>/dev/null
}
# line 6 of postmaster.pid is the server's listen address: empty for Unix sockets only
pg_tcp() {
	local f; f="$(pg_cluster)/postmaster.pid"
	[ -f "$f" ] || { echo "no $f" >&2; return 0; }
	[ -n "$(sed -n 6p "$f")" ]
}
check "the embedded PostgreSQL runs" pg_running
check "the embedded PostgreSQL does not listen on TCP" test_must_fail pg_tcp

start_worker w1
wait_registered w1
make_manifest "$TEST_DIR/m.json" --methods baseline --ops gt --set timing_budget_ms=20
id=$(submit "$TEST_DIR/m.json")
wait_campaign_cli() { kgb status "$id" | grep -Eq 'done|finished|complete'; }
wait_for 300 "campaign $id done (kgb status)" wait_campaign_cli
kgb results "$id" >"$TEST_DIR/results.1" || fail "kgb results $id"
stop_checked w1

stop_checked coord
if wait_for_quiet 20 test_must_fail pg_running; then
	ok "SIGTERM stopped the embedded PostgreSQL too"
else
	fail "the embedded PostgreSQL still runs after the coordinator exited: pid $(pg_pid)"
fi

start_coordinator coord --data-dir "$DATA"
kgb results "$id" >"$TEST_DIR/results.2" || fail "kgb results $id after a restart"
check "the results survive a clean restart" cmp -s "$TEST_DIR/results.1" "$TEST_DIR/results.2"

kill_proc coord KILL
ok "coordinator killed with SIGKILL"
start_coordinator coord --data-dir "$DATA"
ok "coordinator started again after SIGKILL"
kgb results "$id" >"$TEST_DIR/results.3" || fail "kgb results $id after SIGKILL and restart"
check "the results survive SIGKILL" cmp -s "$TEST_DIR/results.1" "$TEST_DIR/results.3"
stop_checked coord
if wait_for_quiet 20 test_must_fail pg_running; then
	ok "no PostgreSQL left running"
else
	fail "PostgreSQL left running after the last stop: pid $(pg_pid)"
fi
test_done
