#!/bin/bash
# Speedups against another baseline after the fact, and per-case speedups in kgb show,
# against the real daemons and PostgreSQL:
#  - kgb report/results/compare/show --baseline METHOD recompute the speedups from the
#    stored timings (no job runs again): with the other of two methods as the baseline,
#    every speedup is the inverse of the default one, with the same uncertainty;
#  - the JSON, CSV, text and HTML outputs all follow the chosen baseline;
#  - --baseline native uses the stored native timings (none here: no speedups);
#  - an unknown method is refused with a message naming the campaign's methods;
#  - kgb show gives each case's speedup with the same 2-sigma interval and tie marking
#    as kgb report, equal to the store's per-case view kgb_case_speedups.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

make_manifest "$TEST_DIR/m.json" --methods baseline,agent-a --ops add,sum --name bl \
	--set time_limit_ms=60000 --set timing_budget_ms=30
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 300
assert_eq "$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id AND verdict <> 'pass'")" 0 \
	"every case of both methods passes"
nres=$(results_count "$id")

# ---- report: default baseline, then the other method ----
kgb report "$id" --json >"$TEST_DIR/def.json" || fail "kgb report --json"
kgb report "$id" --baseline agent-a --json >"$TEST_DIR/alt.json" || fail "kgb report --baseline agent-a --json"
python3 - "$TEST_DIR/def.json" "$TEST_DIR/alt.json" >"$TEST_DIR/inv.txt" 2>&1 <<'EOF' && ok "report --baseline agent-a inverts every speedup: $(tr '\n' ' ' <"$TEST_DIR/inv.txt")" || { cat "$TEST_DIR/inv.txt" >&2; fail "report --baseline agent-a does not invert the speedups"; }
import json, math, sys
d, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d["baseline"] == "baseline", d["baseline"]
assert a["baseline"] == "agent-a", a["baseline"]
row = lambda doc, m, op: [r for r in doc["rows"] if r["method"] == m and r["op"] == op][0]
n = 0
for op in ("add", "sum"):
    x, y = row(d, "agent-a", op), row(a, "baseline", op)
    assert not x["is_baseline"] and y["is_baseline"] is False, (x, y)
    assert row(d, "baseline", op)["is_baseline"] and row(a, "agent-a", op)["is_baseline"]
    assert x["speedup"] and y["speedup"], (op, x["speedup"], y["speedup"])
    assert abs(x["speedup"] * y["speedup"] - 1) < 1e-9, (op, x["speedup"], y["speedup"])
    assert abs(x["speedup_rse"] - y["speedup_rse"]) < 1e-12, (op, x["speedup_rse"], y["speedup_rse"])
    assert x["tie"] == y["tie"]
    print("%s %.3fx/%.3fx" % (op, x["speedup"], y["speedup"]))
    n += 1
sd = {s["method"]: s for s in d["summary"]}
sa = {s["method"]: s for s in a["summary"]}
assert abs(sd["agent-a"]["geomean_speedup"] * sa["baseline"]["geomean_speedup"] - 1) < 1e-9
assert sa["agent-a"]["is_baseline"] and not sa["baseline"]["is_baseline"]
EOF
assert_eq "$(results_count "$id")" "$nres" "no case ran again"
assert_eq "$(q "SELECT count(*) FROM campaigns")" 1 "no campaign was submitted"

kgb report "$id" --baseline agent-a >"$TEST_DIR/alt.txt" || fail "kgb report --baseline agent-a"
check "the report names the chosen baseline" grep -q "^campaign $id bl, baseline: agent-a" "$TEST_DIR/alt.txt"
check "the report marks agent-a as the baseline" grep -Eq '^agent-a \(baseline\)' "$TEST_DIR/alt.txt"
kgb report "$id" --baseline agent-a --csv >"$TEST_DIR/alt.csv" || fail "kgb report --baseline --csv"
kgb results "$id" --baseline agent-a --csv >"$TEST_DIR/altrows.csv" || fail "kgb results --baseline --csv"
python3 - "$TEST_DIR/alt.csv" "$TEST_DIR/altrows.csv" "$TEST_DIR/alt.json" <<'EOF' && ok "CSV summary and rows follow --baseline" || fail "CSV outputs ignore --baseline"
import csv, json, sys
summ = {r["method"]: r for r in csv.DictReader(open(sys.argv[1]))}
rows = {(r["method"], r["op"]): r for r in csv.DictReader(open(sys.argv[2]))}
a = json.load(open(sys.argv[3]))
assert summ["agent-a"]["is_baseline"] == "true" and summ["baseline"]["is_baseline"] == "false", summ
for r in a["rows"]:
    c = rows[(r["method"], r["op"])]
    assert abs(float(c["speedup"]) - r["speedup"]) <= 1e-6 * r["speedup"], (c, r)
EOF
kgb report "$id" --baseline agent-a --html "$TEST_DIR/alt.html" 2>/dev/null || fail "kgb report --baseline --html"
check "the HTML report names the chosen baseline" grep -q 'Baseline: agent-a;' "$TEST_DIR/alt.html"

# ---- compare with another baseline ----
kgb compare "$id" --methods baseline,agent-a --baseline agent-a --json >"$TEST_DIR/cmp.json" ||
	fail "kgb compare --baseline"
python3 - "$TEST_DIR/cmp.json" "$TEST_DIR/alt.json" <<'EOF' && ok "compare --baseline uses the same speedups as report --baseline" || fail "compare --baseline differs from report --baseline"
import json, sys
c, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = {r["op"]: r["speedup"] for r in a["rows"] if r["method"] == "baseline"}
got = {r["op"]: r["speedup_before"] for r in c["rows"]}
assert set(got) == {"add", "sum"}, got
for op in got:
    assert abs(got[op] - want[op]) <= 1e-9 * want[op], (op, got[op], want[op])
EOF

# ---- native timings as the baseline; unknown methods ----
kgb results "$id" --baseline native --json >"$TEST_DIR/nat.json" || fail "kgb results --baseline native"
check "--baseline native: no native timings stored, so no speedups and no baseline row" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["baseline"] == "native"
assert all(r["speedup"] is None and not r["is_baseline"] for r in d["rows"]), d["rows"]' "$TEST_DIR/nat.json"
for cmd in "report $id" "results $id" "compare $id --methods baseline,agent-a" "show $id add"; do
	# shellcheck disable=SC2086
	if kgb $cmd --baseline nobody >"$TEST_DIR/unk.out" 2>"$TEST_DIR/unk.err"; then
		fail "kgb $cmd --baseline nobody succeeded"
	else
		check "kgb $cmd --baseline nobody names the campaign's methods" \
			grep -q "\-\-baseline nobody: campaign $id has no method 'nobody' (its methods: agent-a, baseline; or native" \
			"$TEST_DIR/unk.err"
	fi
done

# ---- show: per-case speedups with report's interval and tie marking ----
kgb show "$id" add --json >"$TEST_DIR/show.json" || fail "kgb show --json"
q "SELECT method || '|' || case_index || '|' || round(speedup::numeric, 6) || '|' || round(speedup_rse::numeric, 6) || '|' || CASE WHEN tie THEN 't' ELSE 'f' END
   FROM kgb_case_speedups WHERE campaign_id = $id AND op = 'add' ORDER BY 1" >"$TEST_DIR/view_cases.txt"
python3 - "$TEST_DIR/show.json" >"$TEST_DIR/show_cases.txt" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    if "speedup" in r:
        print("%s|%d|%.6f|%.6f|%s" % (r["method"], r["case"], r["speedup"], r["speedup_rse"], "t" if r["tie"] else "f"))
EOF
check "show has per-case speedups" test -s "$TEST_DIR/show_cases.txt"
assert_eq "$(sort "$TEST_DIR/show_cases.txt")" "$(sort "$TEST_DIR/view_cases.txt")" \
	"show's per-case speedups, standard errors and ties equal kgb_case_speedups"
kgb show "$id" add --method agent-a --wide >"$TEST_DIR/show.txt" || fail "kgb show"
check "show says what the speedups are against" grep -q '^speedups against baseline, \[2-sigma interval\]' "$TEST_DIR/show.txt"
python3 - "$TEST_DIR/show.json" "$TEST_DIR/show.txt" >"$TEST_DIR/fmt.txt" 2>&1 <<'EOF' && ok "show prints each speedup as report does: $(head -n1 "$TEST_DIR/fmt.txt")" || { cat "$TEST_DIR/fmt.txt" >&2; fail "show's speedup cells differ from report's format"; }
import json, math, sys
def fs(x):  # kgb_cli_fmt_speedup
    return "%.2fx" % x if x < 9.995 else "%.1fx" % x if x < 99.95 else "%.0fx" % x
text = open(sys.argv[2]).read().splitlines()
n = 0
for r in json.load(open(sys.argv[1])):
    if r["method"] != "agent-a" or "speedup" not in r:
        continue
    s, e = r["speedup"], r["speedup_rse"]
    cell = "%s [%s-%s]%s" % (fs(s), fs(s * math.exp(-2 * e))[:-1], fs(s * math.exp(2 * e))[:-1], " tie" if r["tie"] else "")
    assert r["tie"] == (abs(math.log(s)) <= 2 * e), r
    # the platform column may be shortened: match method and case
    line = [l for l in text if l.split()[:1] == ["agent-a"] and l.split()[2:3] == [str(r["case"])]]
    assert line and line[0].rstrip().endswith(cell), (line, cell)
    n += 1
assert n > 0
print("%d cases, e.g. %s" % (n, cell))
EOF
kgb show "$id" add --baseline agent-a --json >"$TEST_DIR/show_alt.json" || fail "kgb show --baseline agent-a"
python3 - "$TEST_DIR/show.json" "$TEST_DIR/show_alt.json" <<'EOF' && ok "show --baseline agent-a inverts each case's speedup" || fail "show --baseline agent-a"
import json, sys
d = {r["case"]: r for r in json.load(open(sys.argv[1])) if r["method"] == "agent-a" and "speedup" in r}
a = {r["case"]: r for r in json.load(open(sys.argv[2])) if r["method"] == "baseline" and "speedup" in r}
assert d and set(d) == set(a), (sorted(d), sorted(a))
for k in d:
    assert abs(d[k]["speedup"] * a[k]["speedup"] - 1) < 1e-9, k
assert not any("speedup" in r for r in json.load(open(sys.argv[2])) if r["method"] == "agent-a")
EOF

test_done
