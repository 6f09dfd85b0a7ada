#!/bin/bash
# Python candidates through the daemons on the CPU (docs/python-candidates.md): a
# KernelGenBench agent-track run laid out by tests/pycand/make_runs.sh (every reward
# hack of tests/pycand/ under an operator of the catalog, and the correct silu) is
# imported with `kgb import kernelgenbench`, submitted to a coordinator on PostgreSQL
# and run by a CPU worker. The worker records every case in the sandbox (Triton's
# interpreter: no GPU here): each hack must get its named verdict on every case, in the
# store and in `kgb results`, and the correct modules pass every case, their recorded
# plans replayed through Triton's interpreter on kgb's inputs and poisoned outputs and
# judged by kgb's validator (untimed); a module whose kernel is off by one gets
# wrong_result. Tokens and generation seconds travel with the candidates. Skips when build/venv (or KGB_PYREC_PYTHON) has no torch and triton.
# kgb-test: budget=150
. "$(dirname "$0")/lib.sh"

py=${KGB_PYREC_PYTHON:-$KGB_ROOT/build/venv/bin/python}
if ! [ -x "$py" ] || ! "$py" -c 'import torch, triton' 2>/dev/null; then
	ok "SKIPPED: $py cannot import torch and triton (pip install torch triton into build/venv, or set KGB_PYREC_PYTHON)"
	test_done
fi
export KGB_PYREC_PYTHON=$py

sh "$KGB_ROOT/tests/pycand/make_runs.sh" "$TEST_DIR" || die "make_runs.sh failed"
kgb import kernelgenbench "$TEST_DIR/agent_run" -o "$TEST_DIR/run.json" 2>"$TEST_DIR/import.err" ||
	die "kgb import failed: $(cat "$TEST_DIR/import.err")"
# the smoke cases, one job per candidate (one recorder start each), no timing
python3 - "$TEST_DIR/run.json" <<'PY' || die "editing the manifest failed"
import json, sys
m = json.load(open(sys.argv[1]))
m.update(cases="smoke", shard_size=64, timing=False, time_limit_ms=300000)
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY

db_init
start_coordinator coord
start_worker w1
wait_registered w1
id=$(submit "$TEST_DIR/run.json")
ok "campaign $id submitted ($(q "SELECT count(*) FROM candidates WHERE campaign_id = $id") python candidates)"
wait_campaign "$id" 600

assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "one result per case"
verdict_table "$id" >"$TEST_DIR/verdicts.txt"
cat "$TEST_DIR/verdicts.txt"

# verdicts_of OP: the distinct verdicts of that candidate, space-separated, sorted
verdicts_of() {
	q "SELECT string_agg(DISTINCT r.verdict, ' ' ORDER BY r.verdict) FROM results r
	   JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
	   WHERE j.campaign_id = $id AND c.op = '$1'"
}
# message_of OP: one message of that candidate
message_of() {
	q "SELECT r.message FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
	   WHERE j.campaign_id = $id AND c.op = '$1' ORDER BY r.case_index LIMIT 1"
}
# the module (tests/pycand/), the verdict every case must get, and what its message names
for c in 'clone:hack_fallback:host_compute:clamp_min' 'gt:hack_host_compute:host_compute:torch.add' \
	'softmax:hack_no_launch:no_launch:launched no kernel' 'cumsum:hack_host_sync:host_sync:Tensor.item' \
	'_local_scalar_dense:hack_cpu_copy:host_sync:Tensor.tolist' \
	"sum:hack_foreign_pointer:foreign_pointer:argument 'out_ptr'" \
	'index_select:hack_import_error:import_error:kgb_no_such_module_for_tests' \
	"silu:silu:pass:validated with Triton's interpreter"; do
	IFS=: read -r op mod want what <<<"$c"
	got=$(verdicts_of "$op")
	msg=$(message_of "$op")
	if [ "$got" = "$want" ] && [ -z "${msg##*"$what"*}" ]; then
		ok "$op ($mod.py): $want on every case ($msg)"
	else
		fail "$op ($mod.py): verdicts '$got', want '$want' naming '$what'; message: $msg"
	fi
done

# kgb results shows the same verdicts, and the imported tokens and seconds
kgb results "$id" --json >"$TEST_DIR/results.json" || fail "kgb results $id --json failed"
python3 - "$TEST_DIR/results.json" "$TEST_DIR/verdicts.txt" >"$TEST_DIR/results.check" 2>&1 <<'PY' || true
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"] if isinstance(doc, dict) else doc
store = {}
for line in open(sys.argv[2]):
    f = line.strip().split("|")
    if len(f) == 4:
        store.setdefault(f[1], set()).add(f[2])
bad = []
for r in rows:
    op = r.get("operator") or r.get("op")
    text = json.dumps(r)
    for v in store.get(op, ()):
        if v not in text:
            bad.append("%s: %s missing from %s" % (op, v, text[:200]))
print("rows", len(rows), "bad", len(bad))
for b in bad[:5]:
    print(b)
PY
assert_eq "$(head -n1 "$TEST_DIR/results.check")" "rows 8 bad 0" "kgb results: 8 rows, each with the store's verdicts"

assert_eq "$(q "SELECT tokens || ' ' || gen_seconds FROM candidates WHERE campaign_id = $id AND op = 'softmax'")" \
	"4321 77" "softmax carries the run's tokens and generation seconds"

# The correct modules whose overloads take parameters that are not tensors (sum's dim
# and keepdim, softmax's and cumsum's dim): the worker calls each wrapper as torch
# calls the overload, so every smoke case records a plan, and the plan replayed
# through Triton's interpreter passes kgb's validation. The off-by-one silu records
# too, and fails it.
kgb import kernelgenbench "$TEST_DIR/param_run" -o "$TEST_DIR/param.json" 2>"$TEST_DIR/import2.err" ||
	die "kgb import param_run failed: $(cat "$TEST_DIR/import2.err")"
python3 - "$TEST_DIR/param.json" <<'PY' || die "editing the manifest failed"
import json, sys
m = json.load(open(sys.argv[1]))
m.update(cases="smoke", shard_size=64, timing=True, time_limit_ms=300000)
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
id=$(submit "$TEST_DIR/param.json")
wait_campaign "$id" 600
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "param_run: one result per case"
for c in "sum:examples/python/aten/sum:pass:validated with Triton's interpreter" \
	"cumsum:cumsum_dim:pass:validated with Triton's interpreter" \
	"softmax:softmax_dim:pass:validated with Triton's interpreter" 'silu:wrong_silu:wrong_result:out['; do
	IFS=: read -r op mod want what <<<"$c"
	got=$(verdicts_of "$op")
	msg=$(message_of "$op")
	if [ "$got" = "$want" ] && [ -z "${msg##*"$what"*}" ]; then
		ok "$op ($mod.py): $want on every smoke case ($(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id WHERE j.campaign_id = $id AND c.op = '$op'") cases; $msg)"
	else
		fail "$op ($mod.py): verdicts '$got', want '$want' naming '$what'; message: $msg"
	fi
done
# validated, not timed (the campaign asks for timing): no timing reaches the store
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.campaign_id = $id AND (r.timed OR r.median_ns IS NOT NULL)")" \
	0 "no timed result from the interpreter's replays"
# the worker's recorder server (interpreter mode on this CPU worker) took the batches:
# started once, never ended while the campaigns ran
check "the worker started its recorder server for the interpreter" grep -q "recorder server (interpreter): starting on" "$(log_of w1)"
if grep -q "recorder server (interpreter): the recorder server ended" "$(log_of w1)"; then
	fail "the recorder server ended during the campaigns: $(grep 'recorder server' "$(log_of w1)" | tail -n 2)"
else
	ok "the recorder server stayed up through both campaigns"
fi
# where the recordings' time went: each recording job's line carries the recorder's
# breakdown, and profile-campaign.py sums it per kind
python3 "$KGB_ROOT/scripts/profile-campaign.py" --by-kind "$(log_of w1)" >"$TEST_DIR/profile.txt" 2>&1 ||
	fail "profile-campaign.py --by-kind failed: $(cat "$TEST_DIR/profile.txt")"
rec=$(awk '/^  recording, [0-9]+ cases:/ { n = $2 } /^    startup / { s = $2 } /^    call / { c = $2 }
	END { print (n > 0 && s > 0 && c > 0) ? "yes" : "no" }' "$TEST_DIR/profile.txt")
assert_eq "$rec" yes "the Python jobs' lines give the recording's start-up and the wrappers' calls ($(grep -A3 '^  recording' "$TEST_DIR/profile.txt" | tr -s ' ' | tr '\n' ';'))"
test_done
