#!/bin/bash
# "platforms": "all" means every platform that can run a candidate's kernel language:
# a Triton candidate is not sent to an OpenCL (CPU) platform, where it could only be
# recorded as unsupported and counted unsolved; an OpenCL candidate of the same
# campaign is. With no platform that runs Triton known yet, the campaign does not end
# when the OpenCL jobs are done: it stays open, says why, and gets the Triton
# candidate's jobs when a CUDA platform joins (GPU nodes in maintenance are routine).
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
out=$(kgb submit "$d/all.json" 2>&1) || die "kgb submit all.json failed: $out"
id=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
check "the submit says the Triton candidate waits for a platform ($out)" \
	grep -q "1 candidate(s) in triton: no platform that runs them has joined yet; the campaign stays open" <<<"$out"
ocl_open() { [ "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND is_open")" = 0 ]; }
wait_for 120 "the OpenCL candidate's jobs done" ocl_open
sleep 1
assert_eq "$(q "SELECT state FROM campaigns WHERE id = $id")" running "the campaign stays open (running) for the Triton candidate"
assert_eq "$(kgb status "$id" --json | python3 -c 'import json,sys; print(" ".join(p["platform"] + "=" + p.get("waiting", "") for p in json.load(sys.stdin)["campaigns"][0]["platforms"] if p.get("waiting")))')" \
	"all=no platform that runs triton has joined yet: the campaign stays open for one" "status says what it waits for"

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

# a CUDA platform joins (a row the store knows, as a GPU worker's registration makes
# it): the open campaign gets the Triton candidate's jobs there, and nothing more
stop_checked coord
q "INSERT INTO platforms (name, backend, device_name, arch) VALUES ('sim:gpu', 'cuda', 'g', 'sim')" >/dev/null
start_coordinator coord
wait_for 60 "campaign $id expanded for sim:gpu" grep -q "campaign=$id platform=sim:gpu: [0-9]* new jobs" "$(log_of coord)"
assert_eq "$(q "SELECT DISTINCT c.method FROM jobs j JOIN candidates c ON c.id = j.candidate_id JOIN platforms p ON p.id = j.platform_id
               WHERE j.campaign_id = $id AND p.name = 'sim:gpu'")" triton-m "the new platform gets the Triton candidate's job only"
check "kgb cancel $id" kgb cancel "$id"

test_done
