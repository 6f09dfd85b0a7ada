#!/bin/bash
# kgb-test: budget=120
# kgb report ID --html FILE: a campaign with passing and failing operators is written as
# one self-contained page (no script, no external reference), whose failing-case table
# groups identical messages with a count and names the cases' parameters; headless
# Chromium renders it: the screenshot must show the heatmap (cells of the exact "every
# case passed" and "no case passed" colours), the DOM the grouped failures, verdicts
# written in the cells and platform names whole. On the same campaign: kgb failures
# (and show ID --failing), tables within 80 columns that cut no value, --wide, -o,
# --csv, "did you mean" for a platform, JSON values free of decoration.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

# baseline passes everything; agent-b's clone writes nothing (every case fails),
# rotary_embedding passes (a speedup against the baseline)
make_manifest "$TEST_DIR/m.json" --methods baseline,agent-b --ops clone,rotary_embedding \
	--set time_limit_ms=30000 --set timing_budget_ms=50 --name html
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 400

html=$TEST_DIR/report.html
kgb report "$id" --html "$html" || die "kgb report $id --html failed"
check "the report was written" test -s "$html"
test_must_fail kgb report "$id" --html "$TEST_DIR/r2.html" --json
check "--html with --json is refused" test ! -e "$TEST_DIR/r2.html"
test_must_fail kgb report "$id" --html "$TEST_DIR/no/such/dir/r.html" 2>"$TEST_DIR/err.txt"
check "an unwritable path is named in the error" grep -q "no/such/dir/r.html" "$TEST_DIR/err.txt"

# self-contained: no script, no link, no image or frame source, no URL but the SVG namespace
check "no script, link, src or url() in the page" \
	test "$(grep -Eci '<script|<link|src=|url\(|@import' "$html")" = 0
check "no address but the SVG namespace" \
	test "$(grep -Eo 'https?://[^"]*' "$html" | grep -vc '^http://www.w3.org/2000/svg$')" = 0
# one heatmap per method, a cell per operator and platform
assert_eq "$(grep -c '<svg class="heatmap"' "$html")" 2 "two heatmaps (baseline, agent-b)"
nplat=$(q "SELECT count(DISTINCT platform_id) FROM jobs WHERE campaign_id = $id")
assert_eq "$(grep -c '<rect x=.*<title>' "$html")" $((2 * 2 * nplat)) "one heatmap cell per method, operator and platform"
check "a speedup distribution chart" grep -q '<svg class="speedups"' "$html"
# failing cases grouped by identical verdict and message, with a count, as the store has them
nfail=$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id AND verdict <> 'pass'")
ngroups=$(q "SELECT count(*) FROM (SELECT DISTINCT verdict, message FROM kgb_case_results
             WHERE campaign_id = $id AND verdict <> 'pass') g")
check "some failing cases share a message ($nfail cases, $ngroups messages)" test "$ngroups" -lt "$nfail"
got=$(sed -n '/<table id="failing">/,/<\/table>/p' "$html" | grep -c '^<tr><td class="num count">')
assert_eq "$got" "$ngroups" "one failing-case row per distinct message ($ngroups)"
sum=$(sed -n '/<table id="failing">/,/<\/table>/p' "$html" | sed -n 's/^<tr><td class="num count">\([0-9]*\)<.*/\1/p' |
	awk '{s += $1} END {print s + 0}')
assert_eq "$sum" "$nfail" "the groups' counts add up to every failing case ($nfail)"
# (a held-out case's label names no parameter: its sizes stay the campaign's secret)
label=$(q "SELECT label FROM kgb_case_results WHERE campaign_id = $id AND op = 'clone'
           AND verdict <> 'pass' AND label NOT LIKE 'held-out case%' ORDER BY case_index DESC LIMIT 1")
check "failing cases carry their parameters ($label)" test -n "$label"
check "the label of a failing clone case is in the page" \
	grep -qF "$(printf '%s' "$label" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g')" "$html"

# the same groups in the CLI, over every operator: kgb failures and kgb show ID --failing
kgb failures "$id" >"$TEST_DIR/fail.txt" || die "kgb failures $id failed"
check "kgb failures counts cases and messages" grep -q "$nfail failing cases, $ngroups distinct messages" "$TEST_DIR/fail.txt"
kgb show "$id" --failing >"$TEST_DIR/fail2.txt" || die "kgb show $id --failing (no operator) failed"
check "kgb show ID --failing without an operator is kgb failures" cmp -s "$TEST_DIR/fail.txt" "$TEST_DIR/fail2.txt"
kgb failures "$id" --json >"$TEST_DIR/fail.json" || die "kgb failures --json failed"
assert_eq "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["groups"]), sum(g["count"] for g in d["groups"]), sum(len(g["cases"]) for g in d["groups"]))' "$TEST_DIR/fail.json")" \
	"$ngroups $nfail $nfail" "kgb failures --json: groups, counts and cases"
kgb failures "$id" --csv >"$TEST_DIR/fail.csv" || die "kgb failures --csv failed"
assert_eq "$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), sum(int(x["count"]) for x in r))' "$TEST_DIR/fail.csv")" \
	"$ngroups $nfail" "kgb failures --csv: one line per group"

# tables fit 80 columns without cutting values: platform names, operators, verdicts whole
KGB_TABLE_WIDTH=80 kgb results "$id" >"$TEST_DIR/r80.txt" || die "kgb results at 80 columns failed"
cat "$TEST_DIR/r80.txt"
check "no line of kgb results is wider than 80 columns" test "$(awk 'length > 80' "$TEST_DIR/r80.txt" | wc -l)" = 0
check "nothing cut at 80 columns" test "$(grep -c '\.\.\.' "$TEST_DIR/r80.txt")" = 0
for v in $(q "SELECT DISTINCT platform FROM kgb_case_results WHERE campaign_id = $id") \
	$(q "SELECT DISTINCT verdict FROM kgb_case_results WHERE campaign_id = $id") rotary_embedding; do
	check "'$v' whole at 80 columns" grep -qw -- "$v" "$TEST_DIR/r80.txt"
done
KGB_TABLE_WIDTH=80 kgb status "$id" >"$TEST_DIR/s80.txt" || die "kgb status at 80 columns failed"
check "no line of kgb status is wider than 80 columns" test "$(awk 'length > 80' "$TEST_DIR/s80.txt" | wc -l)" = 0
KGB_TABLE_WIDTH=80 kgb results "$id" --wide >"$TEST_DIR/rwide.txt" || die "kgb results --wide failed"
check "--wide: every column" grep -q 'METHOD *OPERATOR *PLATFORM *VERDICT *CASES *SPEEDUP *TIME *TOKENS *FIRST FAILURE' "$TEST_DIR/rwide.txt"
test_must_fail kgb results "$id" -o operatr,verdict >/dev/null 2>"$TEST_DIR/ro.txt"
check "-o: a mistyped column gets a did-you-mean" grep -q "did you mean 'operator'" "$TEST_DIR/ro.txt"
test_must_fail kgb results "$id" -o verdict,nosuch >/dev/null 2>"$TEST_DIR/ro.txt"
check "-o: a column no table has is named" grep -q "no table printed has a column 'nosuch'" "$TEST_DIR/ro.txt"
kgb results "$id" -o op,verdict >"$TEST_DIR/ro.txt" || die "kgb results -o op,verdict failed"
check "-o op,verdict: those columns only, in that order" grep -qx 'OPERATOR  *VERDICT' "$TEST_DIR/ro.txt"
# "did you mean" for a platform name; JSON and CSV values free of decoration
plat=$(q "SELECT DISTINCT platform FROM kgb_case_results WHERE campaign_id = $id LIMIT 1")
test_must_fail kgb results "$id" --platform "${plat%?}" 2>"$TEST_DIR/dym.txt" >/dev/null
check "a mistyped platform gets a did-you-mean ($plat)" grep -qF "did you mean '$plat'" "$TEST_DIR/dym.txt"
kgb status "$id" --json >"$TEST_DIR/st.json" || die "kgb status --json failed"
kgb results "$id" --json >"$TEST_DIR/res.json" || die "kgb results --json failed"
check "JSON names are plain values (no '(no worker yet)', no '(baseline)')" python3 -c '
import json, re, sys
st = json.load(open(sys.argv[1])); res = json.load(open(sys.argv[2]))
names = [p["platform"] for c in st["campaigns"] for p in c["platforms"]]
names += [r["platform"] for r in res["rows"]] + [r["method"] for r in res["rows"]]
sys.exit(0 if names and all(re.fullmatch(r"[A-Za-z0-9_.:+-]+", n) for n in names) else 1)' "$TEST_DIR/st.json" "$TEST_DIR/res.json"
kgb status "$id" --csv >"$TEST_DIR/st.csv" || die "kgb status --csv failed"
assert_eq "$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), r[0]["state"])' "$TEST_DIR/st.csv")" \
	"1 done" "kgb status --csv: the campaign as one CSV row"
for c in workers platforms campaigns; do
	kgb $c --csv >"$TEST_DIR/$c.csv" || die "kgb $c --csv failed"
	check "kgb $c --csv: a header and rows" test "$(wc -l <"$TEST_DIR/$c.csv")" -ge 2
done

# render it
browser=$(headless_browser) || browser=""
if [ -z "$browser" ]; then
	echo "SKIP $TEST_NAME: no chromium on PATH (apt-get install chromium): screenshot not checked" >&2
	test_done
fi
shot=$TEST_DIR/report.png
# --no-sandbox: the suite may run as root, where Chromium's sandbox refuses to start
timeout 90 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
	--user-data-dir="$TEST_DIR/chromium" --window-size=1200,1400 --screenshot="$shot" \
	"file://$html" >"$TEST_DIR/chromium.log" 2>&1 || { cat "$TEST_DIR/chromium.log" >&2; die "$browser --screenshot failed"; }
check "the screenshot was taken" test -s "$shot"
# the exact colours of a fully-passing and a fully-failing cell (report_html.c)
python3 "$KGB_ROOT/tests/tools/pngcount.py" "$shot" 1a9850 d73027 ffffff >"$TEST_DIR/pixels.txt" ||
	die "pngcount.py failed on the screenshot"
cat "$TEST_DIR/pixels.txt"
green=$(awk '$1 == "1a9850" {print $2}' "$TEST_DIR/pixels.txt")
red=$(awk '$1 == "d73027" {print $2}' "$TEST_DIR/pixels.txt")
white=$(awk '$1 == "ffffff" {print $2}' "$TEST_DIR/pixels.txt")
# a cell is 150 x 34 pixels less its border and text: thousands of pixels each
check "green (all cases passed) heatmap cells are rendered ($green pixels)" test "$green" -gt 10000
check "red (no case passed) heatmap cells are rendered ($red pixels)" test "$red" -gt 2000
check "the page background is rendered too ($white white pixels)" test "$white" -gt 100000

# the DOM Chromium builds: the failing table grouped, the verdicts written in the
# heatmap cells (not only in their hover titles), the platform names whole
timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TEST_DIR/chromium" \
	--dump-dom "file://$html" >"$TEST_DIR/dom.html" 2>"$TEST_DIR/chromium.log" ||
	{ cat "$TEST_DIR/chromium.log" >&2; die "$browser --dump-dom failed"; }
python3 - "$TEST_DIR/dom.html" >"$TEST_DIR/dom.txt" <<'PY' || die "reading the DOM failed"
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.counts = []; s.verdicts = []; s.labels = []
    def handle_starttag(s, tag, a):
        s.stack.append((tag, dict(a)))
    def handle_endtag(s, tag):
        while s.stack and s.stack.pop()[0] != tag:
            pass
    def handle_data(s, d):
        if not s.stack:
            return
        tag, a = s.stack[-1]
        if tag == 'td' and a.get('class') == 'num count':
            s.counts.append(int(d))
        if tag == 'tspan' and a.get('class') == 'verdict':
            s.verdicts.append(d)
        if tag == 'text' and 'rotate(-30' in (a.get('transform') or ''):
            s.labels.append((float(a['y']), d))
p = P(); p.feed(open(sys.argv[1]).read())
print('groups', len(p.counts), sum(p.counts))
print('verdicts', ' '.join(sorted({v.split()[0] for v in p.verdicts if not v[0].isdigit()})))
# a label rotated by 30 degrees rises half its length (at most 6.5 px a character)
fit = all(y - 3.3 * len(l) >= 0 for y, l in p.labels)
print('labels', ' '.join(sorted({l for _, l in p.labels})), 'fit' if fit else 'cut')
PY
cat "$TEST_DIR/dom.txt"
assert_eq "$(sed -n 1p "$TEST_DIR/dom.txt")" "groups $ngroups $nfail" "rendered: one row per message, counts adding up"
for v in $(q "SELECT DISTINCT verdict FROM kgb_case_results WHERE campaign_id = $id AND verdict <> 'pass'"); do
	check "rendered: verdict $v written in a heatmap cell" grep -q "^verdicts .*\b$v\b" "$TEST_DIR/dom.txt"
done
check "rendered: platform names inside the chart" grep -q " fit$" "$TEST_DIR/dom.txt"
for v in $(q "SELECT DISTINCT platform FROM kgb_case_results WHERE campaign_id = $id"); do
	check "rendered: platform $v labelled whole" grep -qF " $v" "$TEST_DIR/dom.txt"
done

test_done
