#!/bin/bash
# "platforms": "all" means every platform that can run a candidate's kernel language:
# a Triton candidate is not sent to an OpenCL (CPU) platform, where it could only be
# recorded as unsupported and counted unsolved; an OpenCL candidate of the same
# campaign is. With no platform that runs Triton known yet, the campaign does not end
# when the OpenCL jobs are done: it stays open, says why, and gets the Triton
# candidate's jobs when a CUDA platform joins (GPU nodes in maintenance are routine).
# Then operating the cluster (docs/cli.md): `kgb platform retire` ends the waiting jobs
# of a platform whose machines are gone and keeps later "all" campaigns off it until a
# worker registers it again; `kgb worker drain`/`resume`; `kgb hold`/`release` (a held
# campaign gets no worker); `kgb job` (worker, attempts, times, verdicts); `kgb status`
# without an id lists active and recent campaigns, `--all` and `--state` the others.
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

# ---- kgb platform retire (docs/cli.md, "Operating the cluster") ----
# sim:gpu has no live worker: the Triton job there waits. Retiring the platform ends
# it; campaigns for every platform leave it out from then on; a worker that registers
# it again brings it back.
wait_registered w1 # again, after the coordinator's restart
ocl=$(q "SELECT name FROM platforms WHERE backend = 'opencl' ORDER BY id LIMIT 1")
rc=0
out=$(kgb platform retire "$ocl" 2>&1) || rc=$?
assert_eq "$rc" 2 "a platform that a live worker offers is not retired"
check "... naming the worker ($out)" grep -q "has live worker(s) (w1)" <<<"$out"
out=$(kgb platform retire sim:gpu 2>&1) || fail "kgb platform retire sim:gpu: $out"
check "the retire says what it ended ($out)" \
	grep -q "platform sim:gpu retired: .*; [0-9]* open job(s) of 1 campaign(s) for every platform ended there" <<<"$out"
assert_eq "$(q "SELECT count(*) FROM jobs j JOIN platforms p ON p.id = j.platform_id
               WHERE j.campaign_id = $id AND p.name = 'sim:gpu' AND j.is_open")" 0 "no open job left on sim:gpu"
check "kgb platforms says sim:gpu is retired" sh -c "\"$KGB_BIN/kgb\" platforms | grep -q '^sim:gpu: retired'"
assert_eq "$(q "SELECT retired_at IS NOT NULL FROM platforms WHERE name = 'sim:gpu'")" t "the store keeps the retirement"
out=$(kgb submit "$d/all.json" 2>&1) || die "kgb submit all.json (after the retire) failed: $out"
id2=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
assert_eq "$(q "SELECT count(*) FROM jobs j JOIN platforms p ON p.id = j.platform_id
               WHERE j.campaign_id = $id2 AND p.name = 'sim:gpu'")" 0 "a new campaign for every platform gets no job on the retired one"
check "... and its Triton candidate waits for a platform that runs it ($out)" \
	grep -q "1 candidate(s) in triton: no platform that runs them has joined yet" <<<"$out"
# a worker that offers sim:gpu again (a CPU device under that platform name)
start_worker w2 --platform sim:gpu
wait_registered w2
wait_for 60 "sim:gpu no longer retired" grep -q "platform=sim:gpu no longer retired: worker w2 registered it again" "$(log_of coord)"
assert_eq "$(q "SELECT retired_at IS NULL FROM platforms WHERE name = 'sim:gpu'")" t "the store forgets the retirement"
wait_for 60 "campaign $id2 expanded for sim:gpu again" grep -q "campaign=$id2 platform=sim:gpu: [0-9]* new jobs" "$(log_of coord)"
check "kgb cancel $id2" kgb cancel "$id2"
# campaign $id kept its ended job there: back, the platform gives it nothing to wait for
camp_state_is_done() { [ "$(q "SELECT state FROM campaigns WHERE id = $id")" = done ]; }
wait_for 60 "campaign $id done once sim:gpu is back" camp_state_is_done
stop_checked w2

# ---- kgb worker drain / resume, kgb hold / release, kgb job, kgb status --state ----
out=$(kgb worker drain w1) || fail "kgb worker drain w1: $out"
check "the drain says what it does ($out)" grep -q "worker w1 drained: no new job goes to it" <<<"$out"
check "kgb workers says w1 is drained" sh -c "\"$KGB_BIN/kgb\" workers | grep -q '^w1: drained'"
assert_eq "$(q "SELECT drained FROM workers WHERE name = 'w1'")" t "the store keeps the drain"
rc=0
kgb worker drain nobody >"$TEST_DIR/nobody.out" 2>&1 || rc=$?
assert_eq "$rc" 2 "draining an unknown worker is refused"
check "... listing the known ones" grep -q "no worker named 'nobody' (known: .*w1" "$TEST_DIR/nobody.out"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m["methods"] = m["methods"][:1]; m["name"] = "held"; json.dump(m, open(sys.argv[2], "w"))' \
	"$d/all.json" "$d/ocl.json"
id3=$(submit "$d/ocl.json")
out=$(kgb hold "$id3") || fail "kgb hold $id3: $out"
check "the hold says how to release ($out)" grep -q "kgb release $id3" <<<"$out"
kgb worker resume w1 >/dev/null || fail "kgb worker resume w1"
assert_eq "$(q "SELECT drained FROM workers WHERE name = 'w1'")" f "the store forgets the drain"
# nothing may be assigned while the campaign is held: give the scheduler time to err
sleep 2
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id3 AND state <> 'queued'")" 0 \
	"a held campaign's jobs get no worker (drained, then resumed)"
check "kgb status shows the campaign held" sh -c "\"$KGB_BIN/kgb\" status $id3 | grep -q 'held: its queued jobs get no worker'"
check "kgb status --state held lists it" sh -c "\"$KGB_BIN/kgb\" status --state held --json | grep -q '\"id\": $id3'"
out=$(kgb release "$id3") || fail "kgb release $id3: $out"
wait_campaign "$id3" 120
job=$(q "SELECT min(id) FROM jobs WHERE campaign_id = $id3")
kgb job "$job" >"$TEST_DIR/job.txt" || fail "kgb job $job"
cat "$TEST_DIR/job.txt"
check "kgb job names the worker" grep -qE "^  worker +w1, device 0" "$TEST_DIR/job.txt"
check "... the attempts" grep -qE "^  attempts +1 " "$TEST_DIR/job.txt"
check "... when it started and how long it ran" grep -qE "^  duration +[0-9]" "$TEST_DIR/job.txt"
check "... and its verdicts" grep -qE "^  results +[0-9]+ case\(s\) recorded: pass [0-9]+" "$TEST_DIR/job.txt"
assert_eq "$(kgb job "$job" --json | python3 -c 'import json,sys; j = json.load(sys.stdin); print(j["state"], j["worker"], j["attempts"])')" \
	"done w1 1" "kgb job --json"
check "kgb job --campaign lists the campaign's jobs" sh -c "\"$KGB_BIN/kgb\" job --campaign $id3 | grep -qE '^ *$job +opencl-m +add '"
rc=0
kgb job 999999 >"$TEST_DIR/nojob.out" 2>&1 || rc=$?
assert_eq "$rc" 2 "an unknown job is refused"
check "... saying so" grep -q "no job 999999" "$TEST_DIR/nojob.out"
# kgb status without an id: active campaigns and those ended in the last day
q "UPDATE campaigns SET finished_at = now() - interval '2 days' WHERE id = $id3" >/dev/null
kgb status >"$TEST_DIR/status.txt" || fail "kgb status"
check "kgb status leaves out a campaign that ended two days ago" test_must_fail grep -qE "^$id3 " "$TEST_DIR/status.txt"
check "... and says how to see it" grep -q "not shown: kgb status --all" "$TEST_DIR/status.txt"
check "kgb status --all lists it" sh -c "\"$KGB_BIN/kgb\" status --all | grep -qE '^$id3 '"
check "kgb status --state done lists it" sh -c "\"$KGB_BIN/kgb\" status --state done | grep -qE '^$id3 '"
check "kgb status --state bogus is a usage error" test_must_fail kgb status --state bogus

test_done
