#!/bin/bash
# A worker pointed at an address where no coordinator listens says so within a few
# seconds, keeps retrying and reports again at growing intervals; once a coordinator
# starts there it registers and says the coordinator answers again. The coordinator
# says at start which address it binds and that loopback is the default.
. "$(dirname "$0")/lib.sh"

db_init
start_worker w1
log=$(log_of w1)
t0=$SECONDS
wait_for 8 "the worker reports that it cannot reach the coordinator" \
	grep -q "cannot reach the coordinator at $KGB_WORKER_ENDPOINT" "$log"
ok "reported within $((SECONDS - t0)) s of start"
check "the report says the coordinator binds loopback by default" grep -q "binds 127.0.0.1 unless KGB_WORKER_ENDPOINT" "$log"
reports() { [ "$(grep -c 'cannot reach the coordinator' "$log")" -ge "$1" ]; }
wait_for 15 "a second report" reports 2
ok "a second report while it goes on"
# the interval between reports grows (backoff): "next report in A s", then in B s > A
nexts=$(grep -o 'next report in [0-9]* s' "$log" | awk '{print $4}' | head -n 2 | tr '\n' ' ')
read -r a b <<<"$nexts"
check "the reports back off (next report in $a s, then $b s)" test "$b" -gt "$a"
check "the worker is still running" proc_alive w1

start_coordinator coord
wait_registered w1
ok "the worker registers once a coordinator listens there"
wait_for 10 "the worker logs that the coordinator answers again" grep -q "coordinator at .* answers again" "$log"
ok "the worker logs that the coordinator answers again"
check "the coordinator logs its worker address and that loopback is the default" \
	grep -q "$KGB_WORKER_ENDPOINT is loopback (the default)" "$(log_of coord)"

# a coordinator that goes away after registration is reported as well
n=$(grep -c 'cannot reach the coordinator\|no answer from the coordinator' "$log")
stop_checked coord
silent() { [ "$(grep -c 'cannot reach the coordinator\|no answer from the coordinator' "$log")" -gt "$n" ]; }
wait_for 12 "the worker reports the coordinator gone" silent
ok "the worker reports a coordinator that went away after registration"
stop_checked w1
test_done
