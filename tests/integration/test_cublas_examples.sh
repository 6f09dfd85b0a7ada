#!/bin/bash
# The cuBLAS OpenCL examples through the standalone runner (`kgb-worker run`): complex
# tensors, pointer arrays as offsets, negative increments and beta = 0 over NaN, from
# the catalog through the executor and the validator. Each example passes every case
# of its operator; two planted defects (a kernel that ignores the pointer arrays, one
# that reads C when beta is 0) are wrong_result on the cases that expose them.
. "$(dirname "$0")/lib.sh"

EX=$KGB_ROOT/examples/cublas
run_job() { # NAME OP PLAN -> $TEST_DIR/NAME.out.json; echoes the exit status
	cat >"$TEST_DIR/$1.job.json" <<JOB
{"op": "$2", "cases": "all", "seed": 5, "backend": "opencl", "device": 0, "timing": false,
 "time_limit_ms": 60000, "timing_budget_ms": 20, "plan": "$3"}
JOB
	local rc=0
	timeout 600 "$KGB_BIN/kgb-worker" run "$TEST_DIR/$1.job.json" >"$TEST_DIR/$1.out.json" \
		2>"$TEST_DIR/$1.err" || rc=$?
	_check_log "kgb-worker run $1" "$TEST_DIR/$1.err"
	echo $rc
}
# "verdict:count ..." of a run's output, sorted
verdicts() {
	"$KGB_PY" -c '
import json, sys, collections
d = json.load(open(sys.argv[1]))
print(" ".join("%s:%d" % kv for kv in sorted(collections.Counter(c["verdict"] for c in d["cases"]).items())))' \
		"$TEST_DIR/$1.out.json" 2>/dev/null || echo unreadable
}
ncases() { kgb ops --dataset cublas --json | "$KGB_PY" -c '
import json, sys
print([o["cases"] for o in json.load(sys.stdin)["operators"] if o["name"] == sys.argv[1]][0])' "$1"; }

for ex in cgemm:cublasCgemm_v2 zgemm_batched:cublasZgemmBatched cdotu:cublasCdotu_v2; do
	f=${ex%%:*}
	op=${ex##*:}
	rc=$(run_job "$f" "$op" "$EX/$f.plan.json")
	assert_eq "$(verdicts "$f")" "pass:$(ncases "$op")" "$op: every case passes"
	assert_eq "$rc" 0 "$op: kgb-worker run exits 0"
done

# the defect plans live next to copies of the sources (plans name sources relatively)
cp "$EX/zgemm_batched.cl" "$EX/cgemm.cl" "$TEST_DIR/"

# defect 1: the batched kernel ignores the pointer arrays
"$KGB_PY" - "$EX/zgemm_batched.plan.json" "$TEST_DIR/strided.plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
k = p["kernels"][0]
k["defines"] = {"ASSUME_STRIDED": "1", "SA": "{A.stride0}", "SB": "{B.stride0}", "SC": "{C.stride0}"}
json.dump(p, open(sys.argv[2], "w"))
PY
rc=$(run_job strided cublasZgemmBatched "$TEST_DIR/strided.plan.json")
assert_eq "$(verdicts strided)" "wrong_result:$(ncases cublasZgemmBatched)" \
	"ZgemmBatched ignoring the arrays: wrong_result on every case"
[ "$rc" -ne 0 ] || fail "kgb-worker run exited 0 for the strided defect"

# defect 2: reads C when beta is 0: wrong_result exactly on the beta=0 cases
"$KGB_PY" - "$EX/cgemm.plan.json" "$TEST_DIR/readc.plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["kernels"][0]["defines"] = {"ALWAYS_READ_C": "1"}
json.dump(p, open(sys.argv[2], "w"))
PY
rc=$(run_job readc cublasCgemm_v2 "$TEST_DIR/readc.plan.json")
got=$("$KGB_PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
beta0 = {c["case"] for c in d["cases"] if "beta=0" in c["label"].split()}
bad = {c["case"] for c in d["cases"] if c["verdict"] != "pass"}
kinds = {c["verdict"] for c in d["cases"] if c["verdict"] != "pass"}
print(len(beta0) > 0 and bad == beta0 and kinds == {"wrong_result"})' "$TEST_DIR/readc.out.json" 2>/dev/null ||
	echo unreadable)
assert_eq "$got" True "Cgemm reading C at beta = 0: wrong_result on exactly the beta=0 cases"
[ "$rc" -ne 0 ] || fail "kgb-worker run exited 0 for the read-C defect"
test_done
