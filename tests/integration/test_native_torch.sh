#!/bin/bash
# Native candidates through the daemons (docs/native.md, "PyTorch and vLLM providers"):
# a campaign whose method is `"native": true` over an ATen operator (torch.ops.aten) and
# a vLLM operator (its PyTorch composite), run by a CPU worker whose executor starts the
# provider process (python -m kgb.providers.run). Every case must pass, every timed case
# must carry a timing labelled with the library, and the store must see ordinary
# results. The timings are kept in native_timings; a second campaign without a baseline
# method reports its speedups against them. Then the failure path: a worker whose
# KGB_PYTHON has no torch gives every case `unsupported`, naming the reason: the submit
# says no live worker can run native candidates, and `unsupported` is the environment's
# failure, not the kernel's: out of accuracy and of the kernel failures (results,
# report, status, the store's views), not red in the HTML report. Skips when no Python
# with torch is found.
#   KGB_TORCH_PYTHON   the Python to use (default build/venv/bin/python, then python3)
. "$(dirname "$0")/lib.sh"

python_or_skip KGB_TORCH_PYTHON "torch, numpy" \
	"no Python with torch and numpy (scripts/deps.sh --torch build/venv; or set KGB_TORCH_PYTHON)"
# the worker's executor passes these to the provider: the Python, and the uninstrumented
# library (the daemons may be a sanitizer build, whose libkgb.so Python cannot load)
use_libkgb
export KGB_PYTHON=$py
ok "provider Python: $("$py" -c 'import sys, torch; print(sys.executable, "torch", torch.__version__)')"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

ATEN="sum"
VLLM="rms_norm"
ops=$(printf '"%s", ' $ATEN $VLLM)
cat >"$TEST_DIR/native.json" <<JSON
{"name": "native-torch", "operators": [${ops%, }],
 "methods": [{"name": "torch", "native": true}],
 "cases": "smoke", "shard_size": 64, "time_limit_ms": 60000, "timing_budget_ms": 40}
JSON
id=$(submit "$TEST_DIR/native.json")
ok "campaign $id submitted"
t0=$SECONDS
wait_campaign "$id" 240
ok "campaign $id finished in $((SECONDS - t0)) s"

verdict_table "$id" | tee "$TEST_DIR/verdicts.txt"
n_expect=$(expected_cases "$id")
assert_eq "$(results_count "$id")" "$n_expect" "one result per case ($n_expect)"
assert_eq "$(q "SELECT count(*) FROM candidates WHERE campaign_id = $id AND plan->>'kind' = 'native'")" 2 \
	"2 native candidates, one per operator"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.verdict <> 'pass'")" 0 "every case passes"
# timed cases: a timing from kgb's rule, labelled with the timer and the library
ntimed=$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.campaign_id = $id AND r.timed")
check "some cases were timed ($ntimed)" test "$ntimed" -gt 0
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.timed
                 AND NOT (r.samples >= 1 AND r.min_ns > 0 AND r.min_ns <= r.median_ns
                          AND r.median_ns <= r.p90_ns)")" 0 "every timed case has min <= median <= p90, samples >= 1"
want_torch=$("$py" -c 'import torch; print(torch.__version__.split("+")[0])')
assert_eq "$(q "SELECT string_agg(DISTINCT c.op || ' ' || r.timing_method, '; ' ORDER BY c.op || ' ' || r.timing_method)
               FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
               WHERE j.campaign_id = $id AND r.timed AND c.op IN ('sum', 'rms_norm')")" \
	"rms_norm monotonic-clock [composite (torch $want_torch)]; sum monotonic-clock [torch $want_torch]" \
	"timing method names the timer and the library (composite for vLLM)"
check "passing cases say which library ran them" \
	test "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
	          WHERE j.campaign_id = $id AND r.message NOT LIKE 'native % on cpu: %'")" = 0
check "kgb results lists the native method" sh -c "\"$KGB_BIN/kgb\" results $id | grep -q torch"

# ---- the stored native timings, and speedups against them ----
assert_eq "$(q "SELECT count(*) FROM native_timings")" "$ntimed" "every timed native case is kept in native_timings"
assert_eq "$(q "SELECT string_agg(DISTINCT op || ': ' || library, '; ' ORDER BY op || ': ' || library)
               FROM kgb_native_baseline")" \
	"rms_norm: composite (torch $want_torch); sum: torch $want_torch" "the native baseline names the library per operator"
make_manifest "$TEST_DIR/plans.json" --methods baseline --ops sum,rms_norm --name plans \
	--set timing_budget_ms=40 --set time_limit_ms=60000
# no baseline method: the report falls back to the stored native timings
"$py" -c 'import json, sys; m = json.load(open(sys.argv[1])); m.pop("baseline", None); json.dump(m, open(sys.argv[1], "w"))' \
	"$TEST_DIR/plans.json"
id3=$(submit "$TEST_DIR/plans.json")
wait_campaign "$id3" 120
kgb results "$id3" --json >"$TEST_DIR/results3.json" || fail "kgb results $id3 --json"
"$py" - "$TEST_DIR/results3.json" <<'PY' >"$TEST_DIR/speedups.txt" 2>&1 && ok "a campaign without a baseline method reports speedups against the stored native timings: $(tr '\n' ' ' <"$TEST_DIR/speedups.txt")" || { cat "$TEST_DIR/speedups.txt" >&2; fail "speedups against the native timings"; }
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"] if isinstance(doc, dict) else doc
got = {r["op"]: r for r in rows if r["method"] == "baseline"}
assert set(got) == {"sum", "rms_norm"}, got
for op, r in sorted(got.items()):
    assert r["speedup"] > 0, (op, r)
    print("%s %.3g" % (op, r["speedup"]))
PY

# ---- failure path: a Python without torch ----
stop_checked w1
nopy=$TEST_DIR/notorch
python3 -m venv --without-pip "$nopy" || die "python3 -m venv failed"
if "$nopy/bin/python" -c 'import torch' 2>/dev/null; then
	fail "the venv without torch imports torch"
fi
KGB_PYTHON=$nopy/bin/python start_worker w2
wait_registered w2
# the worker's probe of its provider's Python reaches the coordinator
# the worker's probe of its provider's Python reaches the coordinator, and w1 (with
# torch) is no longer counted live
native_told() {
	kgb workers --json | python3 -c 'import json, sys
w = {x["name"]: x for x in json.load(sys.stdin)["workers"]}
sys.exit(not (w["w2"]["native_note"].startswith("torch does not import") and not w["w1"]["alive"]))'
}
wait_for 120 "worker w2 says its Python has no torch, w1 is gone" native_told
cat >"$TEST_DIR/notorch.json" <<JSON
{"name": "native-notorch", "operators": ["cat"], "methods": [{"name": "torch", "native": true}],
 "shard_size": 64, "time_limit_ms": 60000, "timing_budget_ms": 40}
JSON
out=$(kgb submit "$TEST_DIR/notorch.json" 2>&1) || die "kgb submit notorch.json: $out"
id2=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
check "the submit says no live worker can run native candidates ($out)" \
	grep -q "native: no live worker of .* can run native candidates (worker w2: torch does not import in $nopy/bin/python" \
	<<<"$out"
wait_campaign "$id2" 120
assert_eq "$(q "SELECT string_agg(DISTINCT r.verdict, ' ') FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id2")" unsupported "without torch every case is unsupported"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id2 AND r.message LIKE '%torch does not import in $nopy/bin/python%'")" \
	"$(expected_cases "$id2")" "the message names the Python and the missing torch"
# unsupported is the environment's failure: out of accuracy and of the kernel failures
kgb results "$id2" >"$TEST_DIR/results2.txt" || fail "kgb results $id2"
check "kgb results says the operator did not run: unsupported, out of accuracy" \
	grep -q "unsupported: 1 operator(s) of torch on .* did not run" "$TEST_DIR/results2.txt"
assert_eq "$(kgb results "$id2" --json | python3 -c 'import json,sys; s = json.load(sys.stdin)["summary"][0]; print(s["operators"], s["unsupported"], s["solved"])')" \
	"0 1 0" "the summary counts it unsupported, not among the operators of accuracy"
assert_eq "$(kgb status "$id2" --json | python3 -c 'import json,sys; p = json.load(sys.stdin)["campaigns"][0]["platforms"][0]; print(p["kernel_failed"], p["unsupported"] > 0, p["passed"])')" \
	"0 True 0" "kgb status counts its jobs unsupported (infrastructure), not kernel-failed nor passed"
assert_eq "$(q "SELECT sum(failed) FROM kgb_operator_results WHERE campaign_id = $id2")" 0 \
	"the store's views count no kernel failure"
kgb report "$id2" --html "$TEST_DIR/r2.html" >/dev/null || fail "kgb report $id2 --html"
check "the HTML heatmap shows the operator as unsupported, not red" \
	grep -q 'fill="#b8c4dc" stroke="#fff" stroke-width="2"><title>cat on [^<]*: unsupported' "$TEST_DIR/r2.html"

test_done
