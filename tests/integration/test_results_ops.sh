#!/bin/bash
# What a user does after the first report, against the real daemons and PostgreSQL:
#  - status counts kernel failures apart from infrastructure failures (a demo run once
#    showed "done 42 failed 0" while most of agent-b's kernels failed);
#  - speedups come with their interval, and the CLI's tie flag follows the store's rule;
#  - CSV numbers are never in exponent form; tables fit in 120 columns;
#  - show-manifest prints the stored manifest; campaigns lists owner and times;
#  - rerun --failing makes a partial campaign of the failing cases only, marked as such
#    in the store and the report; compare shows per-operator changes;
#  - a manifest may select cases by parameter (partial), and a bad selection is refused
#    naming the field;
#  - an "all" campaign whose only worker is gone says why its jobs wait, status --watch
#    ends (exit 4) instead of hanging, drain and cancel --platform end it, and its
#    unrun candidates show as cancelled, at 0%, not pending at 100%.
. "$(dirname "$0")/lib.sh"

export KGB_LEASE_MS=2000 KGB_HEARTBEAT_MS=400 KGB_USER=tester
db_init
start_coordinator coord
start_worker w1
wait_registered w1

make_manifest "$TEST_DIR/m.json" --ops add --name ops1 \
	--set time_limit_ms=60000 --set timing_budget_ms=50 --set shard_size=32
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 300
plat=$(q "SELECT name FROM platforms LIMIT 1")

# ---- 1. status: kernel failures apart from infrastructure failures ----
want_kf=$(q "SELECT count(*) FROM jobs j WHERE j.campaign_id = $id AND j.state = 'done'
             AND EXISTS (SELECT 1 FROM results r WHERE r.job_id = j.id AND kgb_kernel_failure(r.verdict))")
check "agent-b's planted defects make kernel failures ($want_kf jobs)" test "$want_kf" -gt 0
kgb status "$id" --json >"$TEST_DIR/st.json" || fail "kgb status --json"
got_kf=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(p["kernel_failed"] for p in d["campaigns"][0]["platforms"]))' "$TEST_DIR/st.json")
got_if=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(p["infra_failed"] for p in d["campaigns"][0]["platforms"]))' "$TEST_DIR/st.json")
assert_eq "$got_kf" "$want_kf" "status counts the jobs with a kernel failure"
assert_eq "$got_if" "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'failed'")" \
	"status counts infrastructure failures apart"
kgb status "$id" >"$TEST_DIR/st.txt"
check "the status table has K-FAIL and I-FAIL columns" grep -q 'K-FAIL.*I-FAIL' "$TEST_DIR/st.txt"
check "status names the owner and the start and end times" \
	grep -Eq "owner tester, submitted [0-9-]+ [0-9:]+, started [0-9-]+ [0-9:]+, ended [0-9-]+ [0-9:]+" "$TEST_DIR/st.txt"

# ---- 3. speedups with their uncertainty; ties by the store's rule ----
kgb results "$id" --json >"$TEST_DIR/r.json" || fail "kgb results --json"
q "SELECT method || '|' || op || '|' || round(speedup::numeric, 6) || '|' || round(speedup_rse::numeric, 6) || '|' || CASE WHEN tie THEN 't' ELSE 'f' END
   FROM kgb_operator_speedups WHERE campaign_id = $id ORDER BY 1" >"$TEST_DIR/view_speedups.txt"
python3 - "$TEST_DIR/r.json" >"$TEST_DIR/cli_speedups.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in sorted(d["rows"], key=lambda r: r["method"] + "|" + r["op"]):
    if r.get("speedup") and not r["is_baseline"]:
        print("%s|%s|%.6f|%.6f|%s" % (r["method"], r["op"], r["speedup"], r["speedup_rse"], "t" if r["tie"] else "f"))
EOF
check "some operator has a speedup with an uncertainty" test -s "$TEST_DIR/cli_speedups.txt"
assert_eq "$(sort "$TEST_DIR/cli_speedups.txt")" "$(sort "$TEST_DIR/view_speedups.txt")" \
	"the CLI's speedups, standard errors and ties equal kgb_operator_speedups"
kgb results "$id" >"$TEST_DIR/r.txt"
kgb results "$id" --wide >"$TEST_DIR/rw.txt"   # one row per (method, operator, platform)
check "results show a speedup interval [lo-hi]" grep -Eq '[0-9.]+x \[[0-9.]+-[0-9.]+\]' "$TEST_DIR/r.txt"
check "a failing candidate shows no speedup" \
	grep -Eq '^agent-b +add .* compile_error +[0-9/]+ +- ' "$TEST_DIR/rw.txt"
kgb report "$id" >"$TEST_DIR/rep.txt"
check "report has a TIES column" grep -q 'TIES' "$TEST_DIR/rep.txt"

# ---- 6. CSV numbers, table widths ----
kgb results "$id" --csv >"$TEST_DIR/r.csv"
check "CSV has no number in exponent form" test -z "$(grep -E '[0-9]e[+-][0-9]' "$TEST_DIR/r.csv")"
python3 - "$TEST_DIR/r.csv" <<'EOF' || fail "CSV median_ns values are integers or exact decimals"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
for r in rows:
    if r["median_ns"]:
        float(r["median_ns"])
        assert "e" not in r["median_ns"].lower(), r["median_ns"]
EOF
widest=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$TEST_DIR/r.txt")
check "results table within 120 columns (widest line $widest)" test "$widest" -le 120

# ---- 4. show-manifest, campaigns ----
kgb show-manifest "$id" >"$TEST_DIR/shown.json" || fail "kgb show-manifest"
q "SELECT manifest::text FROM campaigns WHERE id = $id" >"$TEST_DIR/stored.json"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a != b)' \
	"$TEST_DIR/shown.json" "$TEST_DIR/stored.json" && ok "show-manifest prints the stored manifest" ||
	fail "show-manifest differs from campaigns.manifest"
kgb campaigns >"$TEST_DIR/camps.txt"
check "campaigns lists the campaign with its owner and state" grep -Eq "^$id +ops1 +tester +done " "$TEST_DIR/camps.txt"
assert_eq "$(kgb campaigns --user nobody)" "no campaigns" "campaigns --user filters by owner"

# ---- job-file: a stored case reproduced by kgb-worker run with the campaign's inputs ----
pick=$(q "SELECT c.method || ' ' || r.case_index || ' ' || r.verdict FROM results r JOIN jobs j ON j.id = r.job_id
          JOIN candidates c ON c.id = j.candidate_id WHERE j.campaign_id = $id AND c.op = 'add'
          AND r.verdict NOT IN ('pass', 'not_run') ORDER BY r.verdict = 'wrong_result' DESC, c.method, r.case_index LIMIT 1")
read -r jf_method jf_case jf_verdict <<<"$pick"
check "a failing case of add to reproduce ($pick)" test -n "$jf_verdict"
kgb job-file "$id" add --method "$jf_method" -o "$TEST_DIR/job.json" 2>"$TEST_DIR/jobfile.err" ||
	fail "kgb job-file: $(cat "$TEST_DIR/jobfile.err")"
nfail=$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
           WHERE j.campaign_id = $id AND c.op = 'add' AND c.method = '$jf_method' AND r.verdict <> 'pass'")
assert_eq "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$TEST_DIR/job.json")" \
	"$nfail" "the job file holds the candidate's failing cases by default"
"$KGB_BIN/kgb-worker" run "$TEST_DIR/job.json" --case "$jf_case" >"$TEST_DIR/jobrun.json" 2>"$TEST_DIR/jobrun.err" || true
assert_eq "$(python3 -c 'import json,sys; print(" ".join(c["verdict"] for c in json.load(open(sys.argv[1]))["cases"]))' \
	"$TEST_DIR/jobrun.json" 2>&1)" "$jf_verdict" "kgb-worker run on the job file gives case $jf_case of $jf_method the stored verdict"
pass_case=$(q "SELECT r.case_index FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
               WHERE j.campaign_id = $id AND c.op = 'add' AND c.method = 'baseline' AND r.verdict = 'pass' LIMIT 1")
kgb job-file "$id" add --method baseline --case "$pass_case" -o "$TEST_DIR/job_pass.json" 2>/dev/null ||
	fail "kgb job-file --case $pass_case"
"$KGB_BIN/kgb-worker" run "$TEST_DIR/job_pass.json" >"$TEST_DIR/jobrun_pass.json" 2>/dev/null || true
assert_eq "$(python3 -c 'import json,sys; print(" ".join(c["verdict"] for c in json.load(open(sys.argv[1]))["cases"]))' \
	"$TEST_DIR/jobrun_pass.json" 2>&1)" "pass" "a passing case reproduces as pass"
rc=0
kgb job-file "$id" add >/dev/null 2>"$TEST_DIR/jobfile_amb.err" || rc=$?
check "job-file without --method refuses when several methods ran the operator" \
	grep -q "name one with --method" "$TEST_DIR/jobfile_amb.err"

# ---- 4, 5. rerun --failing: a partial campaign of the failing cases ----
out=$(kgb rerun "$id" --failing) || fail "kgb rerun --failing: $out"
id2=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) submitted.*/\1/p')
check "rerun submitted a campaign ($out)" test -n "$id2"
assert_eq "$(q "SELECT partial, parent_id, owner FROM campaigns WHERE id = $id2")" "t|$id|tester" \
	"the re-run is partial, names its parent and owner"
# every candidate of the re-run failed in the first campaign, and its cases are exactly the failing
# public ones (held-out cases are not selectable: the re-run draws its own)
failing=$(q "SELECT c.method || '/' || c.op || ':' || string_agg(DISTINCT r.case_index::text, ',' ORDER BY r.case_index::text)
            FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
            WHERE j.campaign_id = $id AND r.verdict <> 'pass' AND r.case_index < coalesce(c.heldout_lo, 2147483647)
            GROUP BY c.method, c.op ORDER BY 1")
rerun=$(q "SELECT c.method || '/' || c.op || ':' || string_agg(x::text, ',' ORDER BY x::text)
           FROM candidates c, jsonb_array_elements_text(c.cases) x WHERE c.campaign_id = $id2
           GROUP BY c.method, c.op ORDER BY 1")
assert_eq "$rerun" "$failing" "the re-run selects exactly the failing cases of the failing candidates"
wait_campaign "$id2" 300
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
               WHERE j.campaign_id = $id2 AND r.case_index < coalesce(c.heldout_lo, 2147483647)")" \
	"$(q "SELECT sum(jsonb_array_length(cases)) FROM candidates WHERE campaign_id = $id2")" \
	"the re-run ran the selected cases only, once each (and its own held-out cases)"
kgb report "$id2" >"$TEST_DIR/rep2.txt"
check "the report says the campaign is partial" grep -q 'partial campaign' "$TEST_DIR/rep2.txt"
assert_eq "$(q "SELECT bool_and(partial) FROM kgb_method_summary WHERE campaign_id = $id2")" t \
	"kgb_method_summary marks the re-run partial"
kgb compare "$id" --methods baseline,agent-b --wide >"$TEST_DIR/cmp.txt" || fail "kgb compare --methods"
check "compare: agent-b broke add (baseline passes, agent-b does not compile)" \
	grep -Eq '^add +[^ ]+ +pass +compile_error .* broken$' "$TEST_DIR/cmp.txt"
kgb compare "$id" "$id2" --json >"$TEST_DIR/cmp2.json" || fail "kgb compare ID1 ID2"
check "compare ID1 ID2 has rows" python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["rows"]' "$TEST_DIR/cmp2.json"

# ---- 5. case selection in a manifest ----
python3 - "$TEST_DIR/m.json" "$TEST_DIR/sel.json" "$TEST_DIR/badsel.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["name"] = "sel"
m["methods"] = [x for x in m["methods"] if x["name"] == "agent-a"]
m.pop("baseline", None)
for c in m["methods"][0]["candidates"]:
    if c["operator"] == "add":
        c["cases"] = {"where": {"dtype": "f32"}}
m["methods"][0]["candidates"] = [c for c in m["methods"][0]["candidates"] if c["operator"] == "add"]
m["operators"] = ["add"]
m["heldout"] = 0  # the selected public cases alone, counted below
json.dump(m, open(sys.argv[2], "w"))
m["methods"][0]["candidates"][0]["cases"] = {"where": {"dtyp": "f32"}}
json.dump(m, open(sys.argv[3], "w"))
EOF
check "a selection naming no parameter is refused, naming the field" \
	sh -c "$KGB_BIN/kgb validate '$TEST_DIR/badsel.json' 2>&1 | grep -q \"cases.where.dtyp: no case of 'add' has a parameter 'dtyp'\""
id3=$(submit "$TEST_DIR/sel.json")
assert_eq "$(q "SELECT partial FROM campaigns WHERE id = $id3")" t "a manifest with a case selection is partial"
nsel=$(q "SELECT case_count FROM candidates WHERE campaign_id = $id3 AND op = 'add'")
check "add's selection keeps some but not all of its 22 smoke cases ($nsel)" test "$nsel" -gt 0 -a "$nsel" -lt 22
wait_campaign "$id3" 300
assert_eq "$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id3 AND op = 'add' AND label NOT LIKE '%dtype=f32%'")" 0 \
	"only f32 cases of add ran"
assert_eq "$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id3 AND op = 'add'")" "$nsel" \
	"every selected case of add ran"

# ---- 2. an "all" campaign whose only worker is gone ----
stop_checked w1
no_live_worker() {
	[ "$(kgb workers --json | python3 -c 'import json,sys; print(any(w["alive"] for w in json.load(sys.stdin)["workers"]))')" = False ]
}
wait_for 30 "w1 no longer live" no_live_worker
make_manifest "$TEST_DIR/all.json" --ops add --methods baseline,agent-a --name orphan --set shard_size=4
id4=$(submit "$TEST_DIR/all.json")
kgb status "$id4" >"$TEST_DIR/st4.txt"
unwrap "$TEST_DIR/st4.txt" >"$TEST_DIR/st4.joined"   # the notes wrap at the width
check "status says why the jobs wait" grep -q "no live worker for platform $plat since 20" "$TEST_DIR/st4.joined"
rc=0
timeout 60 "$KGB_BIN/kgb" status "$id4" --watch --interval 0.3 >"$TEST_DIR/watch4.txt" 2>&1 || rc=$?
assert_eq "$rc" 4 "status --watch ends with exit 4 when the campaign cannot progress"
check "and says so" grep -q "campaign $id4 cannot progress: no live worker for platform $plat" "$TEST_DIR/watch4.txt"
kgb drain "$id4" >"$TEST_DIR/drain.txt" || fail "kgb drain: $(cat "$TEST_DIR/drain.txt")"
check "drain names the platform" grep -q "jobs cancelled on $plat" "$TEST_DIR/drain.txt"
state_is() { [ "$(q "SELECT state FROM campaigns WHERE id = $1")" = "$2" ]; }
wait_for 30 "campaign $id4 done after drain" state_is "$id4" done
kgb status "$id4" --watch --interval 0.3 >"$TEST_DIR/watch4b.txt" || fail "status --watch after drain"
check "a drained campaign with nothing run is at 0%, not 100%" grep -q "cancelled [0-9]* total [0-9]* (0%)" "$TEST_DIR/watch4b.txt"
kgb results "$id4" >"$TEST_DIR/r4.txt"
check "its candidates show as cancelled, not pending" grep -q ' cancelled ' "$TEST_DIR/r4.txt"
check "results say the campaign is incomplete" grep -q "^incomplete: [0-9]* of [0-9]* rows were cancelled" "$TEST_DIR/r4.txt"
check "none as pending" test -z "$(grep ' pending ' "$TEST_DIR/r4.txt")"

id5=$(submit "$TEST_DIR/all.json")
kgb cancel "$id5" --platform "$plat" >"$TEST_DIR/c5.txt" || fail "kgb cancel --platform: $(cat "$TEST_DIR/c5.txt")"
wait_for 30 "campaign $id5 done after cancel --platform" state_is "$id5" done
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id5 AND state <> 'cancelled'")" 0 \
	"cancel --platform ended every job on that platform"
test_must_fail kgb cancel "$id5" --platform nosuch:platform 2>"$TEST_DIR/c6.txt" && ok "cancel of a done campaign is refused" ||
	fail "cancel --platform of a done campaign succeeded"

# the coordinator keeps serving after all this; a worker that returns finds nothing to do for them
start_worker w1
wait_registered w1
sleep 1
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id IN ($id4, $id5) AND state <> 'cancelled'")" 0 \
	"cancelled jobs stay cancelled when the worker returns"
stop_checked w1
stop_checked coord
test_done
