#!/bin/bash
# Every candidate of the demo campaign through the standalone runner
# (`kgb-worker run JOBFILE`, no coordinator): the baseline and agent-a pass every case,
# each of agent-b's planted defects gets its verdict. Isolates the worker, the
# catalog and the validator from the daemons' protocol.
. "$(dirname "$0")/lib.sh"

ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"
for m in baseline agent-a agent-b; do
	for op in $DEMO_OPS; do
		job=$TEST_DIR/$m.$op.job.json
		out=$TEST_DIR/$m.$op.out.json
		cat >"$job" <<JOB
{"op": "$op", "cases": "smoke", "seed": 11, "backend": "opencl", "device": 0, "timing": false,
 "time_limit_ms": 30000, "timing_budget_ms": 20,
 "plan": "$KGB_ROOT/examples/demo/$m/${DEMO_FILE[$op]}.plan.json"}
JOB
		rc=0
		timeout 300 "$KGB_BIN/kgb-worker" run "$job" >"$out" 2>"$TEST_DIR/$m.$op.err" || rc=$?
		_check_log "kgb-worker run $m/$op" "$TEST_DIR/$m.$op.err"
		got=$("$KGB_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted({c["verdict"] for c in d["cases"]})), len(d["cases"]))' "$out" 2>/dev/null || echo "unreadable output")
		want=pass
		[ "$m" != agent-b ] || want=${DEMO_PLANTED[$op]}
		verdicts=${got% *}
		if verdicts_match "$verdicts" "$want"; then
			ok "$m $op: $want (${got##* } cases)"
		else
			fail "$m $op: got '$got' (exit $rc), want '$want'; $(head -c 300 "$TEST_DIR/$m.$op.err")"
		fi
		# exit status: 0 when every case passed, non-zero otherwise
		if [ "$want" = pass ]; then
			assert_eq "$rc" 0 "$m $op: kgb-worker run exits 0"
		elif [ $rc -eq 0 ] || [ $rc -gt 128 ]; then
			fail "$m $op: kgb-worker run exited $rc for a failing candidate"
		fi
	done
done
test_done
