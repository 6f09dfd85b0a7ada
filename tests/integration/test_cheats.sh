#!/bin/bash
# Kernels that cheat (tests/integration/cheats/README.md) through the standalone runner
# (`kgb-worker run JOBFILE`): each must fail with its verdict, the controls must pass
# or crash as they should, and an executor killed from outside must come back as an
# infrastructure error (a retry), not as the kernel's crash. docs/security.md.
# kgb-test: budget=150
. "$(dirname "$0")/lib.sh"

ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"
CHEATS=$KGB_ROOT/tests/integration/cheats

# job NAME OP CASES TIMING: write $TEST_DIR/NAME.job.json for cheats/NAME.plan.json
job() {
	cat >"$TEST_DIR/$1.job.json" <<JOB
{"op": "$2", "cases": $3, "seed": 23, "backend": "opencl", "device": 0, "timing": $4,
 "time_limit_ms": 120000, "timing_budget_ms": 30, "plan": "$CHEATS/$1.plan.json"}
JOB
}

# run NAME: run the job, leave the output in $TEST_DIR/NAME.out.json; echo the exit status
run() {
	local rc=0
	timeout 600 "$KGB_BIN/kgb-worker" run "$TEST_DIR/$1.job.json" >"$TEST_DIR/$1.out.json" \
		2>"$TEST_DIR/$1.err" || rc=$?
	_check_log "kgb-worker run $1" "$TEST_DIR/$1.err"
	echo $rc
}

# summary NAME: "verdict:count ..." sorted, then the first failing message
summary() {
	"$KGB_PY" - "$TEST_DIR/$1.out.json" <<'PY' 2>/dev/null || echo "unreadable output"
import json, sys, collections
d = json.load(open(sys.argv[1]))
c = collections.Counter(x["verdict"] for x in d["cases"])
print(" ".join(f"{k}:{c[k]}" for k in sorted(c)))
msgs = [x.get("message", "") for x in d["cases"] if x["verdict"] != "pass"]
print(msgs[0] if msgs else "")
PY
}

# expect NAME PYTHON-CONDITION DESCRIPTION: the condition sees `v` (verdict counts),
# `cases` (the case objects) and `d` (the whole output)
expect() {
	if "$KGB_PY" - "$TEST_DIR/$1.out.json" "$2" <<'PY'; then
import json, sys, collections
d = json.load(open(sys.argv[1]))
cases = d["cases"]
v = collections.Counter(x["verdict"] for x in cases)
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
		ok "$1: $3"
	else
		fail "$1: $3; got $(summary "$1" | tr '\n' ' ')"
	fi
}

# 1. reading the output before writing it
job add_fold add '"smoke"' false
rc=$(run add_fold)
# (unwritten_output where an addend is below the poison's ulp: the old contents stayed)
expect add_fold 'v["pass"] == 0 and set(v) <= {"wrong_result", "unwritten_output", "nondeterministic"}' \
	"folding the old output in fails every case"
assert_eq "$rc" 1 "add_fold: kgb-worker run exits 1"
job amin_fmin amin '[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]' false
run amin_fmin >/dev/null
expect amin_fmin 'v["pass"] == 0 and v["wrong_result"] > 0 and set(v) <= {"wrong_result", "nondeterministic"}' \
	"a reduction seeded from the old output with fmin fails every case"

# 2. recognising the poison: run 3 reuses the output on the second input set
job add_recognise add '"smoke"' false
run add_recognise >/dev/null
expect add_recognise 'v["wrong_result"] == len(cases) and all("run 3 (input set B" in x["message"] for x in cases)' \
	"computing only over poison fails in run 3 on every case"

# 3. far out of bounds: the guard page faults and names the verdict
job add_far_write add '[0,1]' false
run add_far_write >/dev/null
expect add_far_write 'cases[0]["verdict"] == "out_of_bounds_write" and "guard band" in cases[0]["message"] and cases[1]["verdict"] == "not_run"' \
	"a write 32 KiB past the end is out_of_bounds_write"
job add_far_read add '[0]' false
run add_far_read >/dev/null
expect add_far_read 'cases[0]["verdict"] == "illegal_address" and "read far out of bounds" in cases[0]["message"]' \
	"a read 32 KiB past the end is illegal_address"

# 4. remembering across launches (OpenCL C 2.0, chosen by the plan's options)
job add_cl20 add '[0,1,18]' true
run add_cl20 >/dev/null
expect add_cl20 'v["pass"] == 3 and cases[2].get("timing", {}).get("samples", 0) > 0' \
	"the honest add as OpenCL C 2.0 passes and is timed (control)"
job add_remember add '[0,1,18]' true
run add_remember >/dev/null
expect add_remember 'cases[0]["verdict"] == "pass" and cases[2]["verdict"] == "stale_result" and "inputs of its own" in cases[2]["message"] and "timed run" in cases[2]["message"]' \
	"a result cached in program-scope globals fails its timed case on inputs of its own"
grep -q "a fresh module for every validated run" "$TEST_DIR/add_remember.out.json" ||
	fail "add_remember: the job log does not say that modules are fresh per run"

# 6. answers served from an earlier launch: every timed sample has inputs of its own
# and two are validated (stale_result). One PoCL thread, so that every work-group of
# a launch finds the local memory the previous launch left (deterministic).
job add_memo_pscope add '[0,1,18]' true
run add_memo_pscope >/dev/null
expect add_memo_pscope 'cases[0]["verdict"] == "pass" and cases[1]["verdict"] == "pass" and cases[2]["verdict"] == "stale_result" and "timed run" in cases[2]["message"]' \
	"a program-scope memo keyed by the inputs (two entries per element) is stale_result on its timed case"
job amin_local_memo amin '[0,200]' true
POCL_CPU_MAX_CU_NUM=1 KGB_LOCAL_SCRUB=off run amin_local_memo >/dev/null
expect amin_local_memo 'cases[0]["verdict"] == "pass" and cases[1]["verdict"] == "stale_result" and "inputs of its own" in cases[1]["message"]' \
	"amin remembering its answers in stale __local memory (scrub off) is stale_result on its timed case"
grep -q "local memory not scrubbed (KGB_LOCAL_SCRUB=off)" "$TEST_DIR/amin_local_memo.out.json" ||
	fail "amin_local_memo: the job log does not say the scrub was off"
POCL_CPU_MAX_CU_NUM=1 run amin_local_memo >/dev/null
expect amin_local_memo 'v["pass"] == 2 and cases[1].get("timing", {}).get("samples", 0) > 0' \
	"with the scrub (default) the same kernel finds no memo: it computes, passes and is timed"
grep -q "local memory scrubbed before each" "$TEST_DIR/amin_local_memo.out.json" ||
	fail "amin_local_memo: the job log does not say local memory was scrubbed"
# 7. shape overfit: exact on every public size, no tail elsewhere. Held-out cases (with
# the job's key, sizes outside the public list) catch it; the honest add passes them.
heldout_job() { # NAME PLAN
	cat >"$TEST_DIR/$1.job.json" <<JOB
{"op": "add", "cases": [0, 3, 18, 430, 431, 622, 814], "seed": 23, "heldout_key": 977, "backend": "opencl",
 "device": 0, "timing": false, "time_limit_ms": 120000, "plan": "$2"}
JOB
}
heldout_job add_tailless "$CHEATS/add_tailless.plan.json"
run add_tailless >/dev/null
expect add_tailless 'all(x["verdict"] == "pass" for x in cases[:3]) and all(x["verdict"] in ("wrong_result", "unwritten_output") and x["label"].startswith("heldout=") for x in cases[3:])' \
	"a kernel exact only on the public sizes passes them and fails every held-out case"
heldout_job add_honest "$KGB_ROOT/examples/demo/baseline/add.plan.json"
run add_honest >/dev/null
expect add_honest 'v["pass"] == len(cases) == 7' "the honest add passes the public and the held-out cases (control)"

# 5. a fault of the kernel is a crash; a kill from outside is an infrastructure error
job add_segv add '[0,1]' false
run add_segv >/dev/null
expect add_segv 'cases[0]["verdict"] == "crash" and "SIGSEGV" in cases[0]["message"] and not d.get("infra_error")' \
	"a wild write (SIGSEGV) is the kernel's crash (control)"
job add_hang add '[0,1]' false
"$KGB_BIN/kgb-worker" run "$TEST_DIR/add_hang.job.json" >"$TEST_DIR/add_hang.out.json" 2>"$TEST_DIR/add_hang.err" &
wpid=$!
exe=""
for _ in $(seq 1 100); do
	# the executor runs kgb-worker's own binary; other children (the probe of its
	# Python for native candidates) come and go
	exe=$(pgrep -x -P "$wpid" kgb-worker | head -n 1 || true)
	[ -n "$exe" ] && break
	sleep 0.2
done
[ -n "$exe" ] || fail "add_hang: no executor child of kgb-worker $wpid"
sleep 3  # compile done, the kernel spinning
kill -KILL "$exe" 2>/dev/null || fail "add_hang: cannot kill executor $exe"
rc=0
wait "$wpid" || rc=$?
expect add_hang 'd.get("infra_error") is True and all(x["verdict"] != "crash" for x in cases)' \
	"an executor killed from outside (SIGKILL) is an infrastructure error, not a crash"
grep -q "killed from outside by SIGKILL" "$TEST_DIR/add_hang.out.json" ||
	fail "add_hang: the job log does not name the outside kill"
[ "$rc" -ne 0 ] || fail "add_hang: kgb-worker run exited 0 after an infrastructure error"
test_done
