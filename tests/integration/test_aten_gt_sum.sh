#!/bin/bash
# The gt and sum examples of examples/aten end to end on every case of their operators
# (they once passed 110 of 137 and 69 of 141: gt had no path for a Python-scalar other,
# sum reduced the last dim whatever the case's dim). examples/aten/gt-sum.json is
# submitted through the CLI to a coordinator and one CPU worker; each candidate must
# pass, with as many passing cases as `kgb ops` lists. Both are also in aten-all.json
# (make test-slow); this test keeps them in make test at a fraction of its cost.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
# two slots: the host-side work of a case (inputs, reference, comparison) dominates,
# so two jobs at once use both cores of a 2-core machine
start_worker w1 --slots 2
wait_registered w1

for op in gt sum; do
	check "aten-all.json has the $op example" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert sys.argv[2] in m["operators"]
assert any(c["operator"] == sys.argv[2] and c["plan"] == sys.argv[2] + ".plan.json" for x in m["methods"] for c in x["candidates"])' \
		"$KGB_ROOT/examples/aten/aten-all.json" "$op"
done

# correctness only: no timing; two jobs per operator
make_manifest "$TEST_DIR/m.json" --source "$KGB_ROOT/examples/aten/gt-sum.json" --set timing=false --set shard_size=72
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 900
kgb results "$id" --json >"$TEST_DIR/results.json" || fail "kgb results --json"
kgb ops --dataset all --json >"$TEST_DIR/ops.json" || fail "kgb ops --json"
for op in gt sum; do
	got=$(python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["op"] == sys.argv[3]]
n = [o["cases"] for o in json.load(open(sys.argv[2]))["operators"] if o["name"] == sys.argv[3]][0]
r = rows[0] if len(rows) == 1 else {"verdict": "rows=%d" % len(rows), "cases_passed": 0, "cases_total": 0, "first_failure": ""}
print("%s %d/%d of %d %s" % (r["verdict"], r["cases_passed"], r["cases_total"], n, (r.get("first_failure") or "")[:160]))' \
		"$TEST_DIR/results.json" "$TEST_DIR/ops.json" "$op")
	n=$(python3 -c 'import json,sys; print([o["cases"] for o in json.load(open(sys.argv[1]))["operators"] if o["name"] == sys.argv[2]][0])' \
		"$TEST_DIR/ops.json" "$op")
	assert_eq "$got" "pass $n/$n of $n " "$op: every case of the operator passes"
done
assert_eq "$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id AND verdict <> 'pass'")" 0 \
	"the store has no failing case"

stop_checked w1
stop_checked coord
test_done
