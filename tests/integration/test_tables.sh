#!/bin/bash
# kgb tables (docs/tables.md) over two real campaigns on the CPU: a coordinator on
# PostgreSQL and two workers on the same PoCL device under two platform names, the
# second with work groups limited to 256 items (POCL_MAX_WORK_GROUP_SIZE), so kernels
# with larger work groups pass on the first and fail on the second, as on a chip with
# smaller limits. Two cases per candidate (case selections: the campaigns are partial),
# and the default held-out cases of silu, gt and rms_norm, which a clean pass includes.
# Methods with rounds (iter: round 0, then round 1 regenerating the
# failed operator in a second campaign) and samples (samp: three of round 0), with
# token usage (tests/tables/make_manifests.py). Every figure is checked twice: the ones
# that follow from the verdicts against values worked out by hand below, and all of
# them against tests/tables/oracle.py, which recomputes them from the raw rows.
. "$(dirname "$0")/lib.sh"

P1=opencl:cpu-ref
P2=opencl:cpu-wg256
db_init
start_coordinator coord
start_worker w1 --backend opencl --platform "$P1"
POCL_MAX_WORK_GROUP_SIZE=256 start_worker w2 --backend opencl --platform "$P2"
wait_registered w1
wait_registered w2

M=$TEST_DIR/m
mkdir -p "$M"
python3 "$KGB_ROOT/tests/tables/make_manifests.py" "$M" || die "make_manifests.py failed"
a=$(submit "$M/tables-a.json")
b=$(submit "$M/tables-b.json")
wait_campaign "$a" 300
wait_campaign "$b" 300
assert_eq "$(results_count "$a")" "$(expected_cases "$a")" "campaign $a: one result per case"

kgb tables "$a" "$b" --reference "$P1" --json >"$TEST_DIR/t.json" || die "kgb tables --json failed"
# j EXPR: EXPR evaluated in Python over the document d, with helpers
#   s(method, platform, source) -> summary row; k(method, platform, k) -> pass_at_k row
j() {
	python3 - "$TEST_DIR/t.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def s(m, p, src='all'):
    return next(r for r in d['summary'] if (r['method'], r['platform'], r['source']) == (m, p, src))
def k(m, p, k):
    return next(r for r in d['pass_at_k'] if (r['method'], r['platform'], r['k']) == (m, p, k))
def x(m, p):
    return next(r for r in d['cross_chip'] if (r['method'], r['platform']) == (m, p))
r = eval(sys.argv[2])
def show(v):
    if v is None:
        return '-'
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return ('%.4f' % v).rstrip('0').rstrip('.')
    return str(v)
print(' '.join(show(v) for v in (r if isinstance(r, tuple) else (r,))))
PY
}

# accuracy (passed / N of the 4 operators): worked out from examples/demo/README.md's
# verdicts and the work-group sizes (make_manifests.py)
assert_eq "$(j "tuple(s(m, p)['passed'] for m in ('baseline', 'iter', 'samp') for p in ('$P1', '$P2'))")" \
	"4 4 4 2 2 2" "operators passed: baseline 4/4 on both; iter 4/4 on $P1, 2/4 on $P2; samp 2/4"
assert_eq "$(j "(s('iter', '$P2', 'aten')['accuracy'], s('iter', '$P2', 'vllm')['accuracy'], s('iter', '$P2', 'cublas')['accuracy'])")" \
	"0 1 1" "iter on $P2 per source: aten 0/2, vllm 1/1, cublas 1/1"
assert_eq "$(j "(s('samp', '$P1')['attempted'], s('samp', '$P1', 'cublas')['accuracy'])")" "2 0" \
	"samp has no rms_norm or cublas candidate: 2 attempted, cublas 0/1"
# Pass@K over rounds: iter passes gt, rms_norm, cublasSaxpy_v2 in round 0 and silu in
# round 1 on $P1; on $P2 only rms_norm and cublasSaxpy_v2, both in round 0
assert_eq "$(j "(k('iter', '$P1', 1)['pass_at_k_rounds'], k('iter', '$P1', 2)['pass_at_k_rounds'], k('iter', '$P2', 2)['pass_at_k_rounds'])")" \
	"0.75 1 0.5" "Pass@1 and Pass@2 of iter: 3/4, 4/4 on $P1; 2/4 on $P2"
# pass@k from samp's samples: silu n=3 c=2, gt n=3 c=1, rms_norm and cublas none:
# k=1: (2/3 + 1/3) / 4 = 0.25; k=2: (1 + (1 - 1/3)) / 4 = 5/12; k=3: 2/4
assert_eq "$(j "tuple(k('samp', '$P1', n)['pass_at_k_unbiased'] for n in (1, 2, 3))")" "0.25 0.4167 0.5" \
	"unbiased pass@1, pass@2, pass@3 of samp"
assert_eq "$(j "(k('iter', '$P1', 1)['pass_at_k_unbiased'], k('iter', '$P1', 2)['pass_at_k_unbiased'])")" "0.75 -" \
	"iter has one sample per operator: pass@1 = 3/4, pass@2 undefined"
# tokens: iter's candidates (make_manifests.py), input + output + cache write + cache
# read: 6200 + 900 + 3900 + 690 + 7750 = 19440, of which 13000 cache reads; per success
# on $P1 (4 passed): 19440 / 4 and (19440 - 13000) / 4; reasoning apart (50)
assert_eq "$(j "(s('iter', '$P1')['tokens'], s('iter', '$P1')['cache_read_tokens'], s('iter', '$P1')['tokens_per_success'], s('iter', '$P1')['tokens_per_success_no_cache_read'], s('iter', '$P1')['reasoning_tokens'])")" \
	"19440 13000 4860 1610 50" "iter's tokens, cache reads, tokens per success with and without them"
assert_eq "$(j "(s('iter', '$P2')['tokens_per_success'], s('iter', '$P1')['gen_seconds'])")" "9720 125" \
	"iter on $P2: 19440 tokens / 2 operators; 30 + 20 + 40 + 10 + 25 s of generation"
# the cross-chip table against $P1: iter drops 50 points and loses gt and silu on
# $P2, each at its first case (gt's 0, silu's 2), refused for its work group
assert_eq "$(j "(x('iter', '$P2')['drop_points'], x('iter', '$P2')['lost'], x('samp', '$P2')['drop_points'], x('baseline', '$P2')['lost'])")" \
	"50 2 0 0" "cross-chip: iter -50 pp, 2 operators lost; samp and baseline unchanged"
assert_eq "$(j "' '.join('%s:%s:%s:%s' % (r['op'], r['platform'], r['case_index'], r['verdict']) for r in d['lost'])")" \
	"gt:$P2:0:resource_error silu:$P2:2:resource_error" "lost operators with their first failing case"
assert_eq "$(j "' '.join('%s:%s' % (r['method'], r['operators']) for r in d['matched'] if r['platform'] == '$P1')")" \
	"iter:1 samp:1" "matched subset on $P1: silu, the one operator iter and samp both passed with a speedup (gt's cases are untimed)"
# provenance
assert_eq "$(j "(d['kgb_version'] == '$(kgb --version | cut -d' ' -f2)', len(d['campaigns']), d['campaigns'][0]['seed'], sorted(p['name'] for p in d['platforms']) == ['$P1', '$P2'], all(p['devices'] for p in d['platforms']))")" \
	"True 2 7 True True" "provenance: version, campaigns and seeds, platforms with their devices"

# every figure, recomputed from the raw rows
python3 "$KGB_ROOT/tests/tables/oracle.py" "$KGB_DATABASE_URL" "$TEST_DIR/t.json" "$P1" >"$TEST_DIR/oracle.txt" 2>&1
rc=$?
cat "$TEST_DIR/oracle.txt"
check "every figure agrees with the recomputation from the raw rows" test "$rc" = 0

# the same run submitted again (here cancelled at once) adds no sample, round or token:
# a (method, operator, round, sample) counts once, the earliest campaign's
c=$(submit "$M/tables-b.json")
kgb cancel "$c" >/dev/null || die "kgb cancel $c failed"
kgb tables "$a" "$b" "$c" --reference "$P1" --json >"$TEST_DIR/t3.json" || die "kgb tables $a $b $c failed"
assert_eq "$(python3 -c "import json; x, y = (json.load(open('$TEST_DIR/' + f)) for f in ('t.json', 't3.json')); print([k for k in ('summary', 'pass_at_k', 'matched', 'cross_chip', 'lost', 'operator_rows') if x[k] != y[k]], len(y['campaigns']))")" \
	"[] 3" "campaign $c, a second submission of campaign $b, changes no table"

# kgb results on one campaign: a row per candidate with its round and sample; the
# summary counts each operator once
kgb results "$a" --json >"$TEST_DIR/r.json" || die "kgb results $a --json failed"
assert_eq "$(python3 -c "import json; d = json.load(open('$TEST_DIR/r.json')); print(sorted((r['sample'], r['verdict']) for r in d['rows'] if r['method'] == 'samp' and r['op'] == 'silu' and r['platform'] == '$P1'), [(s['attempted'], s['solved']) for s in d['summary'] if s['method'] == 'samp' and s['platform'] == '$P1'])")" \
	"[(0, 'launch_error'), (1, 'pass'), (2, 'pass')] [(2, 2)]" "kgb results: samp's three silu samples, and 2 operators attempted and solved"

# the operator set: MS counts all its 210 operators, passed or not attempted
kgb tables "$a" "$b" --set ms --json >"$TEST_DIR/ms.json" || die "kgb tables --set ms failed"
assert_eq "$(python3 -c "import json; d = json.load(open('$TEST_DIR/ms.json')); r = next(r for r in d['summary'] if r['method'] == 'iter' and r['platform'] == '$P1' and r['source'] == 'all'); print(r['operators'], r['passed'], round(r['fast_1_0'] * r['operators']) == round(r['fast_1_0_passed'] * r['passed']))")" \
	"210 4 True" "--set ms: N = 210; fast_p over N and over passed agree on the count"

# CSV carries the provenance and the store's columns; bad arguments are refused
kgb tables "$a" "$b" --reference "$P1" --csv cross_chip >"$TEST_DIR/x.csv" || die "kgb tables --csv failed"
check "CSV: provenance lines first" grep -q "^# campaign $a tables-a (.*), baseline baseline, seed 7" "$TEST_DIR/x.csv"
check "CSV: the cross-chip header" grep -qx "method,platform,accuracy,speedup,speedup_low,speedup_high,reference_accuracy,drop_points,drop_relative,lost" "$TEST_DIR/x.csv"
assert_eq "$(grep -c "^iter,$P2,0.5," "$TEST_DIR/x.csv")" 1 "CSV: iter on $P2 at 0.5"
test_must_fail kgb tables "$a" 999 2>"$TEST_DIR/e1" >/dev/null
check "an unknown campaign is named" grep -q "no campaign 999" "$TEST_DIR/e1"
test_must_fail kgb tables "$a" --reference opencl:nowhere 2>"$TEST_DIR/e2" >/dev/null
check "an unknown reference platform is named" grep -q "opencl:nowhere" "$TEST_DIR/e2"
test_must_fail kgb tables "$a" --set nosuch 2>"$TEST_DIR/e3" >/dev/null
check "an unknown set is named" grep -q "nosuch" "$TEST_DIR/e3"
kgb tables "$a" "$b" --reference "$P1" >"$TEST_DIR/t.txt" || die "kgb tables (text) failed"
check "text: the cross-chip rows" grep -q "iter .*$P2 .*50.0% .*-50.0 pp" "$TEST_DIR/t.txt"

# HTML: the methods x platforms matrix and a methods x operators heatmap per platform
html=$TEST_DIR/t.html
kgb tables "$a" "$b" --reference "$P1" --html "$html" || die "kgb tables --html failed"
check "no script or external reference" test "$(grep -Eci '<script|<link|src=|url\(|https?://' "$html")" = 0
browser=$(headless_browser) || browser=""
if [ -z "$browser" ]; then
	echo "SKIP $TEST_NAME: no chromium on PATH (apt-get install chromium): the page's DOM is not checked" >&2
else
	timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TEST_DIR/chromium" \
		--dump-dom "file://$html" >"$TEST_DIR/dom.html" 2>"$TEST_DIR/chromium.log" ||
		{ cat "$TEST_DIR/chromium.log" >&2; die "$browser --dump-dom failed"; }
	python3 - "$TEST_DIR/dom.html" "$P1" "$P2" >"$TEST_DIR/dom.txt" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.table = None; s.cells = {}; s.heads = {}; s.tag = None
    def handle_starttag(s, tag, a):
        a = dict(a); s.tag = tag
        if tag == 'table':
            s.table = a.get('id') or 'heatmap:' + a.get('data-platform', '')
        if tag == 'td':
            a['text'] = ''
            s.cells.setdefault(s.table, []).append(a)
        if tag == 'th':
            s.heads.setdefault(s.table, []).append('')
    def handle_data(s, d):
        if s.tag == 'td' and s.table in s.cells:
            s.cells[s.table][-1]['text'] += d
        if s.tag == 'th' and s.table in s.heads:
            s.heads[s.table][-1] += d
    def handle_endtag(s, tag):
        s.tag = None
p = P(); p.feed(open(sys.argv[1]).read())
m = p.cells.get('matrix', [])
print('matrix', len(m), ' '.join(sorted({c.get('data-accuracy', '')[:4] for c in m})))
for plat in sys.argv[2:]:
    h = p.cells.get('heatmap:' + plat, [])
    print(plat, len(h), sum(c.get('data-passed') == 'true' for c in h))
# methods x operators: every cell says its outcome in text (a speedup or "pass" where
# it passed, "fail" or "no candidate" where it did not), and the header names every
# operator of the cells whole
for plat in sys.argv[2:]:
    h = p.cells.get('heatmap:' + plat, [])
    said = all((c['text'] == 'pass' or 'x [' in c['text'] or c['text'].endswith('x')) if c.get('data-passed') == 'true'
               else c['text'] in ('fail', 'no candidate') for c in h)
    ops = {c.get('data-op') for c in h}
    print(plat, 'text' if said and h else 'no-text', 'heads' if ops <= set(p.heads.get('heatmap:' + plat, [])) else 'cut')
PY
	assert_eq "$(head -3 "$TEST_DIR/dom.txt" | tr '\n' ' ')" \
		"matrix 6 0.50 1.00 $P1 12 10 $P2 12 8 " \
		"rendered: a 3 x 2 matrix (accuracies 50% and 100%), 3 x 4 heatmaps with 10 and 8 passing cells"
	assert_eq "$(tail -n +4 "$TEST_DIR/dom.txt" | tr '\n' ' ')" "$P1 text heads $P2 text heads " \
		"rendered: methods x operators cells say their outcome in text; operator headers whole"
fi

stop_checked w1
stop_checked w2
stop_checked coord
test_done
