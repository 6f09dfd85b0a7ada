#!/bin/bash
# kgb report ID --html FILE: a campaign with passing and failing operators is written as
# one self-contained page (no script, no external reference), whose failing-case table
# names the cases' parameters; headless Chromium renders it, and the screenshot must
# show the heatmap: cells of the exact "every case passed" and "no case passed" colours.
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
# failing cases with their parameters, as the store has them
nfail=$(q "SELECT count(*) FROM kgb_case_results WHERE campaign_id = $id AND verdict <> 'pass'")
got=$(sed -n '/<table id="failing">/,/<\/table>/p' "$html" | grep -c '^<tr><td>')
assert_eq "$got" "$nfail" "every failing case listed ($nfail)"
label=$(q "SELECT label FROM kgb_case_results WHERE campaign_id = $id AND op = 'clone'
           AND verdict <> 'pass' ORDER BY case_index DESC LIMIT 1")
check "failing cases carry their parameters ($label)" test -n "$label"
check "the label of a failing clone case is in the page" \
	grep -qF "$(printf '%s' "$label" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g')" "$html"

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

test_done
