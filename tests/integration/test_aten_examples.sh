#!/bin/bash
# The ATen OpenCL examples end to end: a coordinator on its embedded store, one CPU
# worker, examples/aten/aten20.json (24 operators) submitted through the CLI. Every
# candidate must pass every case of its operator: the verdict is pass and the number of
# passing cases equals the operator's case count in the catalog (`kgb ops --json`).
#   KGB_ATEN_MANIFEST  another manifest of examples/aten (aten-all.json: all 70 operators; make test-slow runs it)
#   KGB_ATEN_TIMEOUT   seconds to wait for the campaign (default 3400)
#   KGB_ATEN_OPS       a comma-separated subset of the manifest's operators (quicker runs);
#                      "all": every operator of aten20.json, the sanitizer slice included
# The grid runs on the release binaries (tests/run.sh: bin=rel): the daemons' paths are
# the same for every operator. test_aten_examples_san.sh runs a slice of aten20.json
# (ATEN_SAN_SLICE below) under the sanitizers with every assertion of this file, so the
# release grid leaves those operators to it: each of the 24 is checked once per run.
# kgb-test: budget=600 bin=rel timeout=3600
. "$(dirname "$0")/lib.sh"

unset KGB_DATABASE_URL
start_coordinator coord --data-dir "$TEST_DIR/store"
start_worker w1
wait_registered w1

# make test-slow (KGB_SLOW_TESTS=1) runs every operator of aten-all.json
if [ "${KGB_SLOW_TESTS:-0}" = 1 ]; then dflt=aten-all.json; else dflt=aten20.json; fi
src=$KGB_ROOT/examples/aten/${KGB_ATEN_MANIFEST:-$dflt}
[ -f "$src" ] || die "no manifest $src"
# the slice test_aten_examples_san.sh runs: one operator of each kind aten20.json has
# (its header says which)
ATEN_SAN_SLICE=acosh,argmax,gather,copy_,prelu
opsarg=()
if [ -n "${KGB_ATEN_OPS:-}" ]; then
	[ "$KGB_ATEN_OPS" = all ] || opsarg=(--ops "$KGB_ATEN_OPS")
elif [ "${KGB_ATEN_SAN:-0}" = 1 ]; then
	opsarg=(--ops "$ATEN_SAN_SLICE")
elif [ "$(basename "$src")" = aten20.json ]; then
	opsarg=(--skip-ops "$ATEN_SAN_SLICE")
	echo "$TEST_NAME: aten20.json without $ATEN_SAN_SLICE (test_aten_examples_san runs them; KGB_ATEN_OPS=all runs them here too)" >&2
fi
make_manifest "$TEST_DIR/aten.json" --source "$src" "${opsarg[@]}"
check "the manifest validates offline" kgb validate "$TEST_DIR/aten.json"
id=$(submit "$TEST_DIR/aten.json")
ok "campaign $id submitted"

# the campaign is finished when every row of `kgb results` has all its cases done
rows_done() {
	kgb results "$id" --json >"$TEST_DIR/progress.json" 2>/dev/null || return 1
	python3 - "$TEST_DIR/progress.json" "$TEST_DIR/aten.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
want = sum(len(m['candidates']) for m in json.load(open(sys.argv[2]))['methods'])
rows = doc['rows'] if isinstance(doc, dict) else doc
done = [r for r in rows if r['cases_total'] > 0 and r['cases_done'] >= r['cases_total']]
sys.exit(0 if len(rows) >= want and len(done) == len(rows) else 1)
PY
}
# one `kgb status --watch` follows the campaign to its end (a status request every 5 s
# in one process) instead of polling rows_done, a `kgb results --json` and a Python start
# (0.12 s of CPU) every 2 s for the whole campaign; rows_done then confirms the end
t0=$SECONDS
timeout "${KGB_ATEN_TIMEOUT:-3400}" "$KGB_BIN/kgb" status "$id" --watch --interval 5 >"$TEST_DIR/watch.log" 2>&1 ||
	echo "$TEST_NAME: kgb status --watch ended with status $? (see watch.log); polling the rows" >&2
left=$(( ${KGB_ATEN_TIMEOUT:-3400} - (SECONDS - t0) ))
wait_done "$(( left > 120 ? left : 120 ))" "campaign $id finished" rows_done

kgb results "$id" --json >"$TEST_DIR/results.json" || fail "kgb results $id --json failed"
kgb ops --dataset all --json >"$TEST_DIR/ops.json" || fail "kgb ops --json failed"
python3 - "$TEST_DIR/results.json" "$TEST_DIR/ops.json" "$TEST_DIR/aten.json" >"$TEST_DIR/check.txt" <<'PY' || true
import json, sys
res = json.load(open(sys.argv[1]))
rows = res['rows'] if isinstance(res, dict) else res
ops = {o['name']: o for o in json.load(open(sys.argv[2]))['operators']}
man = json.load(open(sys.argv[3]))
cands = [(m['name'], c['operator']) for m in man['methods'] for c in m['candidates']]
byop = {(r['method'], r['op']): r for r in rows}
for meth, op in cands:
    r = byop.get((meth, op))
    if r is None:
        print('MISSING %s %s' % (meth, op))
        continue
    n = ops[op]['cases'] if op in ops else -1
    print('%s %s %s %d %d %d %s' % (meth, op, r['verdict'], r['cases_passed'], r['cases_total'], n,
                                     (r.get('first_failure') or '-').replace('\n', ' ')[:200]))
PY
cat "$TEST_DIR/check.txt"
n_cand=$(python3 -c 'import json,sys; print(sum(len(m["candidates"]) for m in json.load(open(sys.argv[1]))["methods"]))' "$TEST_DIR/aten.json")
assert_eq "$(grep -vc '^MISSING' "$TEST_DIR/check.txt")" "$n_cand" "kgb results lists every candidate ($n_cand)"
while read -r meth op verdict passed total want first; do
	[ "$meth" = MISSING ] && { fail "no result row for $op"; continue; }
	assert_eq "$verdict" pass "$meth $op: verdict"
	assert_eq "$passed" "$want" "$meth $op: passing cases = the catalog's case count"
	assert_eq "$total" "$want" "$meth $op: cases run = the catalog's case count"
done <"$TEST_DIR/check.txt"

# kgb refs: every case of an operator gets its reference, twice in a row: computed and
# cached, then loaded from the cache
# (a cache of their own: the suite's shared one is filled by other tests meanwhile)
# (prelu's: run where the campaign has prelu, the sanitizer slice in make test, not again
# in the tests that leave it out)
if python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))
sys.exit(all(c["operator"] != "prelu" for x in m["methods"] for c in x["candidates"]))' "$TEST_DIR/aten.json"; then
	for run in 1 2; do
		KGB_CACHE_DIR=$TEST_DIR/refcache kgb refs --op prelu --jobs 2 --json >"$TEST_DIR/refs.$run.json" ||
			fail "kgb refs --op prelu ($run) failed"
		got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["cases"], d["failed"], d["slowest"][0]["name"])' \
			"$TEST_DIR/refs.$run.json" 2>/dev/null || echo "unreadable")
		want="$(python3 -c 'import json,sys; print([o["cases"] for o in json.load(open(sys.argv[1]))["operators"] if o["name"] == "prelu"][0])' \
			"$TEST_DIR/ops.json") 0 prelu"
		assert_eq "$got" "$want" "kgb refs --op prelu ($run): every case, none failed"
		nent[$run]=$(find "$TEST_DIR/refcache/ref" -name '*.bin' 2>/dev/null | wc -l)
	done
	# entries are named by the hash of their key (docs/references.md): the second run adds none
	check "the reference cache holds entries" test "${nent[1]}" -gt 0
	assert_eq "${nent[2]}" "${nent[1]}" "the second kgb refs of prelu adds no cache entry (it reads the first's)"
fi

stop_checked w1
stop_checked coord
test_done
