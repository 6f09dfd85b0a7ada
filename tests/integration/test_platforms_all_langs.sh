#!/bin/bash
# "platforms": "all" means every platform that can run a candidate's kernel language:
# a Triton candidate is not sent to an OpenCL (CPU) platform, where it could only be
# recorded as unsupported and counted unsolved; an OpenCL candidate of the same
# campaign is. The campaign ends when the OpenCL jobs are done.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

d=$TEST_DIR/m
mkdir -p "$d/ocl" "$d/tri"
cp "$KGB_ROOT/examples/demo/baseline/add.plan.json" "$KGB_ROOT/examples/demo/baseline/add.cl" "$d/ocl/"
cp "$KGB_ROOT/examples/cuda/triton/add.plan.json" "$KGB_ROOT/examples/cuda/triton/add.py" "$d/tri/"
cat >"$d/all.json" <<'JSON'
{"name": "langs", "operators": ["add"], "platforms": "all", "cases": "smoke", "timing": false,
 "time_limit_ms": 30000,
 "methods": [
  {"name": "opencl-m", "candidates": [{"operator": "add", "plan": "ocl/add.plan.json"}]},
  {"name": "triton-m", "candidates": [{"operator": "add", "plan": "tri/add.plan.json"}]}]}
JSON
id=$(submit "$d/all.json")
wait_campaign "$id" 120

jobs_of() {
	q "SELECT count(*) FROM jobs j JOIN candidates c ON c.id = j.candidate_id
	   WHERE j.campaign_id = $id AND c.method = '$1'"
}
check "the OpenCL candidate has jobs on the CPU platform ($(jobs_of opencl-m))" test "$(jobs_of opencl-m)" -gt 0
assert_eq "$(jobs_of triton-m)" 0 "the Triton candidate has no job on the CPU platform"
assert_eq "$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id AND verdict = 'unsupported'")" 0 \
	"no case recorded as unsupported"
assert_eq "$(q "SELECT string_agg(DISTINCT verdict, ' ') FROM kgb_case_results WHERE campaign_id = $id")" pass \
	"the OpenCL candidate's cases pass"
# the submit leaves the Triton candidate out of the CPU platform, saying why (a
# platform that joins later is expanded the same way: coordinator/state.c)
check "the coordinator says why the Triton candidate was left out" \
	grep -q "platform=opencl:.*: 1 candidate(s) left out: backend opencl cannot run their kernel languages" "$(log_of coord)"

test_done
