#!/bin/bash
# The A/A check through the real daemons and PostgreSQL: two campaigns with "aa": true
# time the demo's baseline against itself (each time twice, in jobs of their own). Each
# stores the CPU's noise floor when it is done (migration 0008), and each is judged by
# the other's floor, never its own. At least 95% of the operators must tie, under
# whatever load the machine has (docs/timing.md, "Run-to-run noise": the tie holds
# because the floor is the measured spread between runs, taken at its 95% upper
# confidence bound). The CLI and the HTML report must print the intervals, the floor
# used and the A/A share; the views must use the same floor.
# kgb-test: budget=180
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

# the demo's twelve operators: two campaigns give 24 operators judged, so one may fall
# outside its interval and the share still be 95% (23 of 24); one job per candidate
# (shard_size covers every smoke case, no held-out cases: they are never timed) and a
# short timing budget keep it quick
make_manifest "$TEST_DIR/aa.json" --methods baseline --set aa=true --set shard_size=64 \
	--set timing_budget_ms=20 --set time_limit_ms=60000 --set heldout=0

# bad input first: "aa" must be a boolean, and needs a baseline to time twice
python3 - "$TEST_DIR/aa.json" "$TEST_DIR/bad1.json" "$TEST_DIR/bad2.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
b = dict(m, aa="yes")
json.dump(b, open(sys.argv[2], "w"))
b = dict(m)
del b["baseline"]
json.dump(b, open(sys.argv[3], "w"))
PY
out=$(kgb submit "$TEST_DIR/bad1.json" 2>&1) && fail "aa: \"yes\" was accepted" ||
	check "\"aa\": \"yes\" is refused naming the field and value" grep -q 'aa: expected true or false, got "yes"' <<<"$out"
out=$(kgb submit "$TEST_DIR/bad2.json" 2>&1) && fail "aa without a baseline was accepted" ||
	check "\"aa\" without a baseline is refused naming the field" grep -q 'aa: an A/A check times the baseline twice' <<<"$out"

id1=$(submit "$TEST_DIR/aa.json")
wait_campaign "$id1" 1500
wait_for 30 "campaign $id1 done" test "$(q "SELECT state FROM campaigns WHERE id = $id1")" = done
nops=$(q "SELECT count(*) FROM candidates WHERE campaign_id = $id1 AND method = 'baseline'")
assert_eq "$(q "SELECT count(*) FROM candidates WHERE campaign_id = $id1 AND method = 'baseline-aa'")" "$nops" \
	"the A/A campaign times every baseline candidate again as baseline-aa"
assert_eq "$(q "SELECT count(*) FROM jobs a JOIN candidates ca ON ca.id = a.candidate_id
               JOIN jobs b ON b.campaign_id = a.campaign_id JOIN candidates cb ON cb.id = b.candidate_id
               WHERE a.campaign_id = $id1 AND a.id = b.id AND ca.method <> cb.method")" 0 \
	"the replicate's cases run in jobs of their own"
assert_eq "$(q "SELECT count(*) FROM noise_floors WHERE campaign_id = $id1")" 1 \
	"campaign $id1 stored one noise floor (one platform)"
assert_eq "$(q "SELECT ops = $nops AND cases > 0 AND method = 'baseline' AND op_ss >= 0
               AND measured_at > now() - interval '1 hour' FROM noise_floors WHERE campaign_id = $id1")" t \
	"the floor says what it was measured from and when"

id2=$(submit "$TEST_DIR/aa.json")
wait_campaign "$id2" 1500
wait_for 30 "campaign $id2 done" test "$(q "SELECT state FROM campaigns WHERE id = $id2")" = done
assert_eq "$(q "SELECT count(*) FROM noise_floors")" 2 "two A/A campaigns, two measurements"

# each campaign judged by the other's floor
total=0
ties=0
for pair in "$id1 $id2" "$id2 $id1"; do
	set -- $pair
	kgb results "$1" --json >"$TEST_DIR/r$1.json" || fail "kgb results $1 --json"
	read -r from own t n < <(python3 - "$TEST_DIR/r$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["noise_floors"][0] if d["noise_floors"] else {}
a = d.get("aa") or [{}]
print(f.get("campaigns", "-"), str(f.get("own")).lower(), a[0].get("ties", 0), a[0].get("operators", 0))
PY
	)
	assert_eq "$from $own" "$2 false" "campaign $1 is judged by campaign $2's floor, not its own"
	assert_eq "$n" "$nops" "campaign $1: every operator of the replicate is judged"
	total=$((total + n))
	ties=$((ties + t))
	# the views (migration 0008) call the same ties with the same floor
	assert_eq "$(q "SELECT count(*) FILTER (WHERE tie) FROM kgb_operator_speedups
	               WHERE campaign_id = $1 AND method = 'baseline-aa'")" "$t" \
		"campaign $1: kgb_operator_speedups counts the same ties as kgb results"
	check "campaign $1: the views carry the floor used" \
		test "$(q "SELECT count(*) FROM kgb_operator_speedups WHERE campaign_id = $1 AND noise_floor > 0")" = "$nops"
done
share=$(awk -v t="$ties" -v n="$total" 'BEGIN { printf "%.1f", 100 * t / n }')
echo "A/A: $ties of $total operators tie ($share%)"
check "A/A: at least 95% of operators tie ($ties of $total)" awk -v s="$share" 'BEGIN { exit !(s >= 95) }'

# the CLI prints the floor used, the A/A share and the intervals
kgb report "$id2" >"$TEST_DIR/report.txt" || fail "kgb report $id2"
cat "$TEST_DIR/report.txt"
unwrap "$TEST_DIR/report.txt" >"$TEST_DIR/report.joined"   # the prose wraps at the width
check "kgb report names the floor and where it comes from" \
	sh -c "grep -Eq 'noise floor on opencl:' '$TEST_DIR/report.txt' &&
		grep -Eq 'from A/A campaign $id1: $nops operators' '$TEST_DIR/report.txt'"
check "kgb report prints the A/A share" \
	grep -Eq "A/A check on opencl:.*baseline-aa against baseline: [0-9]+ of $nops operators tie" "$TEST_DIR/report.joined"
check "kgb report prints intervals and ties" grep -Eq 'baseline-aa +add .*x \[[0-9.]+-[0-9.]+\]' "$TEST_DIR/report.txt"
kgb show "$id2" add --method baseline-aa >"$TEST_DIR/show.txt" || fail "kgb show $id2 add"
check "kgb show names the per-case floor" grep -Eq "noise floor on opencl:.*per case" "$TEST_DIR/show.txt"
kgb compare "$id1" "$id2" --method baseline-aa >"$TEST_DIR/compare.txt" || fail "kgb compare $id1 $id2"
cat "$TEST_DIR/compare.txt"
check "kgb compare names both campaigns' floors" \
	grep -q "before: noise floor on opencl" "$TEST_DIR/compare.txt"
check "kgb compare gives the ratio's interval" grep -Eq 'x \[[0-9.]+-[0-9.]+\] +(same|faster|slower)' "$TEST_DIR/compare.txt"
kgb report "$id2" --html "$TEST_DIR/report.html" || fail "kgb report --html"
check "the HTML report lists every speedup with its interval and call" \
	test "$(grep -Ec '<tr><td>baseline-aa</td>.*\[[0-9.]+-[0-9.]+\]</td><td class="num">[0-9.]+%</td><td>(tie|faster|slower)</td>' \
		"$TEST_DIR/report.html")" = "$nops"
check "the HTML report names the floor" grep -q '<li>noise floor on opencl' "$TEST_DIR/report.html"
check "the HTML report gives the A/A share" grep -Eq "A/A check on .*: [0-9]+ of $nops operators tie" "$TEST_DIR/report.html"
check "the HTML summary has the geomean's interval" grep -Eq '<td class="num">[0-9.]+x \[[0-9.]+-[0-9.]+\]( tie)?</td>' \
	"$TEST_DIR/report.html"

stop_checked w1
stop_checked coord
test_done
