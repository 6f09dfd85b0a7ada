#!/bin/bash
# The demo campaign end to end: coordinator on PostgreSQL, one CPU worker, the demo
# manifest (with a short job time limit for the planted infinite loop). The store must
# hold exactly the planted verdict for every defect of agent-b, every correct candidate
# must pass every case, every case must be recorded once, and the CLI's results and
# report must agree with the store.
# kgb-test: budget=150
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

make_manifest "$TEST_DIR/demo.json" --set time_limit_ms=30000 --set timing_budget_ms=200
id=$(submit "$TEST_DIR/demo.json")
ok "campaign $id submitted"
# 72 jobs: 42 of public cases, 30 of held-out ones (one per candidate of the 10
# operators that have them)
wait_campaign "$id" 1500

n_expect=$(expected_cases "$id")
# held-out cases are on by default (the demo's manifest does not say "heldout"): every
# candidate of an operator that has them gets KGB_HELDOUT_DEFAULT (2) of them, one shard
# past its public cases (docs/security.md, "Foreknowledge")
assert_eq "$(q "SELECT heldout FROM campaigns WHERE id = $id")" 2 "two held-out cases per candidate by default"
assert_eq "$(q "SELECT count(*) FROM candidates WHERE campaign_id = $id AND heldout_lo IS NOT NULL")" 30 \
	"30 candidates have held-out cases (10 of the 12 operators have held-out parameters)"
n_cand=$(q "SELECT coalesce(sum(c.case_count + CASE WHEN c.heldout_lo IS NULL THEN 0 ELSE k.heldout END), 0)
           FROM candidates c JOIN campaigns k ON k.id = c.campaign_id WHERE c.campaign_id = $id")
assert_eq "$n_expect" "$n_cand" "the jobs cover every case of every candidate once, held-out ones included"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
               WHERE j.campaign_id = $id AND r.case_index >= c.heldout_lo AND r.timed")" 0 "held-out cases are never timed"
assert_eq "$(results_count "$id")" "$n_expect" "one result per (job, case)"
assert_eq "$(q "SELECT count(*) FROM candidates WHERE campaign_id = $id")" 36 "36 candidates (3 methods x 12 operators)"
# cases never overlap between the jobs of a candidate
assert_eq "$(q "SELECT count(*) FROM jobs a JOIN jobs b ON a.candidate_id = b.candidate_id
               AND a.platform_id = b.platform_id AND a.id < b.id
               AND a.case_lo < b.case_hi AND b.case_lo < a.case_hi WHERE a.campaign_id = $id")" 0 \
	"no two jobs of a candidate share a case"

verdict_table "$id" >"$TEST_DIR/verdicts.txt"
cat "$TEST_DIR/verdicts.txt"

# verdicts_of METHOD OP: the distinct verdicts of that candidate, space-separated, sorted
verdicts_of() {
	q "SELECT string_agg(DISTINCT r.verdict, ' ' ORDER BY r.verdict) FROM results r
	   JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
	   WHERE j.campaign_id = $id AND c.method = '$1' AND c.op = '$2'"
}

for m in baseline agent-a; do
	for op in $DEMO_OPS; do
		assert_eq "$(verdicts_of "$m" "$op")" pass "$m $op passes every case"
	done
done
for op in $DEMO_OPS; do
	want=${DEMO_PLANTED[$op]}
	got=$(verdicts_of agent-b "$op")
	if verdicts_match "$got" "$want"; then
		ok "agent-b $op: $want"
	else
		fail "agent-b $op: verdicts '$got', want '$want'"
	fi
done

check "every verdict has a message unless it passed" \
	test "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
	          WHERE j.campaign_id = $id AND r.verdict NOT IN ('pass', 'not_run') AND r.message = ''")" = 0

# timing: the timed cases of passing candidates carry consistent statistics, and a
# kernel far cheaper than the timing budget (200 ms, cache flushes included) gets
# several samples
check "timed passing cases have min <= median <= p90 and at least one sample" \
	test "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
	          WHERE j.campaign_id = $id AND r.verdict = 'pass' AND r.timed
	            AND NOT (r.samples >= 1 AND r.min_ns > 0 AND r.min_ns <= r.median_ns
	                     AND r.median_ns <= r.p90_ns)")" = 0
check "cheap timed kernels get at least 3 samples" \
	test "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
	          WHERE j.campaign_id = $id AND r.verdict = 'pass' AND r.timed
	            AND r.median_ns < 1e6 AND r.samples < 3")" = 0
check "some cases were timed" \
	test "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
	          WHERE j.campaign_id = $id AND r.timed AND r.median_ns > 0")" -gt 0

# the CLI agrees with the store
kgb results "$id" --json >"$TEST_DIR/results.json" || fail "kgb results $id --json failed"
python3 - "$TEST_DIR/results.json" >"$TEST_DIR/results.check" 2>&1 <<'PY' || true
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc['rows'] if isinstance(doc, dict) else doc
seen = {(r['method'], r['op']): r for r in rows}
print(len(rows))
b = seen.get(('agent-b', 'add'), {})
print(b.get('verdict'))
print(seen.get(('agent-a', 'sum'), {}).get('verdict'))
PY
mapfile -t rc <"$TEST_DIR/results.check"
assert_eq "${rc[0]:-}" 36 "kgb results --json lists 36 (method, operator) rows"
assert_eq "${rc[1]:-}" compile_error "kgb results --json: agent-b add is compile_error"
assert_eq "${rc[2]:-}" pass "kgb results --json: agent-a sum passes"
kgb report "$id" >"$TEST_DIR/report.txt" || fail "kgb report $id failed"
check "kgb report names every method" grep -q agent-b "$TEST_DIR/report.txt"
check "the report has speedups against the baseline" grep -qi speedup "$TEST_DIR/report.txt"
check "the campaign is marked done" test "$(q "SELECT state FROM campaigns WHERE id = $id")" = done

# failing cases are named by their parameters: every recorded case carries its label
# (the cases never run excepted), in the store, the views and `kgb show`
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.verdict <> 'not_run' AND coalesce(r.label, '') = ''")" 0 \
	"every recorded case has its parameters as a label"
check "labels name the dtype" \
	test "$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id AND label LIKE '%dtype=%'")" -gt 0
assert_eq "$(q "SELECT solved FROM kgb_operator_results WHERE campaign_id = $id AND method = 'agent-b' AND op = 'index_select'")" \
	f "kgb_operator_results: agent-b index_select is not solved"
assert_eq "$(q "SELECT passed = cases FROM kgb_operator_results WHERE campaign_id = $id AND method = 'agent-a' AND op = 'sum'")" \
	t "kgb_operator_results: agent-a sum passes every case"
assert_eq "$(q "SELECT solved FROM kgb_method_summary WHERE campaign_id = $id AND method = 'baseline'")" 12 \
	"kgb_method_summary: the baseline solves 12 operators"
assert_eq "$(q "SELECT count(*) FROM kgb_case_speedups WHERE campaign_id = $id AND method = 'agent-b'
               AND op = 'index_select'")" 0 "kgb_case_speedups: no speedup for a failing candidate"
kgb show "$id" index_select --method agent-b --failing >"$TEST_DIR/show.txt" || fail "kgb show failed"
check "kgb show lists the failing cases with their parameters" grep -q 'wrong_result' "$TEST_DIR/show.txt"
check "... and names their dtype" grep -q 'dtype=' "$TEST_DIR/show.txt"
check "kgb show --failing hides passing cases" test_must_fail grep -qw pass "$TEST_DIR/show.txt"
kgb show "$id" sum --method agent-a >"$TEST_DIR/show-sum.txt" || fail "kgb show sum failed"
check "kgb show gives the speedup with its 2-sigma interval, as kgb report does" grep -Eq '[0-9.]+x \[[0-9.]+-[0-9.]+\]' "$TEST_DIR/show-sum.txt"
check "kgb show of an unknown operator fails" test_must_fail kgb show "$id" nosuchop

stop_checked w1
stop_checked coord
test_done
