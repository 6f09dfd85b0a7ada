#!/bin/bash
# Garbage at both of the coordinator's sockets (random bytes, an Envelope with
# protocol version 99, an oversize frame, an empty frame, an Envelope with no body, a
# multi-frame message, a truncated frame, a message of the wrong kind for the socket):
# each is rejected with a logged reason, the coordinator stays up, a registered worker
# stays registered, and `kgb status` still works afterwards.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1
CLOG=$(log_of coord)

# send SOCKET KIND REGEX: one garbage message; the coordinator logs a new line that
# matches REGEX (case-insensitive) and is still alive
send() {
	local sock=$1 kind=$2 re=$3 ep n0
	if [ "$sock" = cli ]; then ep=$KGB_CLI_ENDPOINT; else ep=$KGB_WORKER_ENDPOINT; fi
	n0=$(wc -l <"$CLOG")
	if ! KGBWIRE_SOCKET=$sock kgbwire garbage "$ep" "$kind"; then
		fail "$sock/$kind: the sender failed"
		return
	fi
	logged() { tail -n +"$((n0 + 1))" "$CLOG" | grep -Eqi -- "$re"; }
	if wait_for_quiet 15 logged; then
		ok "$sock/$kind rejected: $(tail -n +"$((n0 + 1))" "$CLOG" | grep -Ei -- "$re" | head -n1 | cut -c1-160)"
	else
		fail "$sock/$kind: no log line matching /$re/ (new lines: $(tail -n +"$((n0 + 1))" "$CLOG" | head -n3 | tr '\n' ' '))"
	fi
	if ! proc_alive coord; then
		die "coordinator died after $sock/$kind"
	fi
}

for sock in worker cli; do
	send "$sock" random 'decod|invalid|malformed|reject|bad'
	send "$sock" version99 'version|99'
	send "$sock" oversize 'large|oversize|size|exceed|limit'
	send "$sock" empty 'empty|decod|reject|bad|invalid'
	send "$sock" nobody 'body|empty|reject|invalid'
	send "$sock" multipart 'frame|part|reject|invalid|decod'
	send "$sock" truncated 'decod|invalid|malformed|reject|bad'
	send "$sock" wrongkind 'not accepted|unexpected|unknown|wrong|reject|invalid'
done

check "coordinator still running" proc_alive coord
check "kgb status works after the garbage" kgb status
check "kgb workers still lists w1" _worker_listed w1
check "the worker is alive" proc_alive w1
# and the real protocol still works end to end
make_manifest "$TEST_DIR/m.json" --methods baseline --ops add,gt --set timing_budget_ms=20
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 300
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "a campaign after the garbage completes"

stop_checked w1
stop_checked coord
test_done
