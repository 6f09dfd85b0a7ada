#!/bin/bash
# kgb-worker run --case N --dump DIR: one case's inputs, reference and output on disk
# with a JSON description. Checked independently of the worker: index_select's
# reference is recomputed in Python from the dumped inputs, the raw output is decoded
# by dtype and compared to its float64 copy, and the elements outside the tolerance
# are counted and must match the worker's own message (a planted wrong kernel) or be
# none (the correct baseline).
. "$(dirname "$0")/lib.sh"

demo=$KGB_ROOT/examples/demo
job() { # job FILE PLAN
	printf '{"op": "index_select", "cases": "smoke", "seed": 7, "timing": false, "time_limit_ms": 60000, "plan": "%s"}\n' \
		"$2" >"$1"
}
job "$TEST_DIR/bad.json" "$demo/agent-b/index_select.plan.json"
job "$TEST_DIR/good.json" "$demo/baseline/index_select.plan.json"

rc=0
"$KGB_BIN/kgb-worker" run "$TEST_DIR/bad.json" --case 2 --dump "$TEST_DIR/bad" --json >"$TEST_DIR/bad.out" 2>"$TEST_DIR/bad.err" || rc=$?
assert_eq "$rc" 1 "the planted wrong kernel fails (exit 1)"
assert_eq "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["cases"]), d["cases"][0]["case"])' "$TEST_DIR/bad.out")" \
	"1 2" "--case 2 runs case 2 only"
check "case.json written" test -s "$TEST_DIR/bad/case-2/case.json"
rc=0
"$KGB_BIN/kgb-worker" run "$TEST_DIR/good.json" --case 2 --dump "$TEST_DIR/good" --json >"$TEST_DIR/good.out" 2>&1 || rc=$?
assert_eq "$rc" 0 "the baseline passes case 2 (exit 0)"

# check.py DIR RUN_OUTPUT: prints "wrong=N claimed=M" after checking layout and files
cat >"$TEST_DIR/check.py" <<'PY'
import json, re, struct, sys
d, run = sys.argv[1], json.load(open(sys.argv[2]))
c = json.load(open(d + '/case.json'))
case = run['cases'][0]
assert c['case'] == case['case'] and c['label'] == case['label'], (c['label'], case['label'])
assert c['verdict'] == case['verdict'], (c['verdict'], case['verdict'])
fmt = {'f32': 'f', 'f64': 'd', 'i64': 'q', 'i32': 'i'}
t = {x['name']: x for x in c['tensors']}
def load(x, key):
    raw = open(d + '/' + x['files'][key], 'rb').read()
    code = 'd' if key.endswith('f64') else fmt[x['dtype']]
    n = len(raw) // struct.calcsize(code)
    assert n == x['storage'], (x['name'], key, n, x['storage'])
    return struct.unpack('<%d%s' % (n, code), raw)
for x in c['tensors']:
    assert x['bytes'] == x['storage'] * x['element_bytes'], x
self_, index = load(t['self'], 'input'), load(t['index'], 'input')
out, out64, ref = load(t['out'], 'output'), load(t['out'], 'output_f64'), load(t['out'], 'reference_f64')
assert list(out) == list(out64), 'the raw output and its float64 copy differ'
# index_select(self, 0, index): out[i, :] = self[index[i], :], with the dumped strides
ss, os_ = t['self']['strides'], t['out']['strides']
rows, cols = t['out']['shape']
for i in range(rows):
    for j in range(cols):
        want = self_[index[i] * ss[0] + j * ss[1]]
        assert ref[i * os_[0] + j * os_[1]] == want, ('reference', i, j)
scale = max(abs(v) for v in ref)
tol = lambda r: c['atol_rel'] * scale + c['rtol'] * abs(r)
wrong = sum(1 for i in range(rows) for j in range(cols)
            if abs(out[i * os_[0] + j * os_[1]] - ref[i * os_[0] + j * os_[1]]) > tol(ref[i * os_[0] + j * os_[1]]))
m = re.search(r'(\d+) of \d+ elements wrong', case['message'])
print('wrong=%d claimed=%s' % (wrong, m.group(1) if m else 0))
PY
got=$(python3 "$TEST_DIR/check.py" "$TEST_DIR/bad/case-2" "$TEST_DIR/bad.out" 2>&1) || fail "bad kernel dump: $got"
read -r w cl <<<"$(echo "$got" | sed 's/wrong=\([0-9]*\) claimed=\([0-9]*\)/\1 \2/')"
check "the dumped output is wrong where the worker says ($got)" test "$w" = "$cl" -a "$w" -gt 0
got=$(python3 "$TEST_DIR/check.py" "$TEST_DIR/good/case-2" "$TEST_DIR/good.out" 2>&1) || fail "good kernel dump: $got"
assert_eq "$got" "wrong=0 claimed=0" "the baseline's dumped output matches the dumped reference"

# bad input is refused, naming the value
rc=0
"$KGB_BIN/kgb-worker" run "$TEST_DIR/good.json" --case 99999 >/dev/null 2>"$TEST_DIR/range.err" || rc=$?
assert_eq "$rc" 2 "--case out of range is a usage error"
check "the error names the value and the range" grep -q -- "--case: 99999 is out of range (index_select has" "$TEST_DIR/range.err"
rc=0
"$KGB_BIN/kgb-worker" run "$TEST_DIR/good.json" --case 2 --dump /proc/no/such >/dev/null 2>"$TEST_DIR/dir.err" || rc=$?
assert_eq "$rc" 2 "an impossible --dump directory is a usage error"
check "the error names the directory" grep -q "/proc/no/such" "$TEST_DIR/dir.err"
test_done
