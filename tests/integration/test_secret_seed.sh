#!/bin/bash
# Secret campaign seeds (docs/security.md, "Foreknowledge"). The known-inputs cheat: an
# add that carries the answers of case 0 for the inputs of seeds 1 and 2 (computed here,
# as an attacker would, by running kgb's own reference) and recognises them by the first
# four elements of self. It passes a job file run with seed 1 for input set A and 2 for
# set B (the control: the attack works where both sets' inputs are known, as they were
# when set B's seed followed from set A's by a public rule) and fails a campaign whose
# seed kgb drew in secret. The
# seed is in the store from the submit on, `kgb results` hides it until the campaign
# ends and shows it after; a manifest's fixed seed is shown as public.
. "$(dirname "$0")/lib.sh"

demo=$KGB_ROOT/examples/demo
for s in 1 2; do
	printf '{"op": "add", "cases": [0], "seed": %s, "timing": false, "time_limit_ms": 60000, "plan": "%s"}\n' \
		"$s" "$demo/baseline/add.plan.json" >"$TEST_DIR/honest$s.job.json"
	"$KGB_BIN/kgb-worker" run "$TEST_DIR/honest$s.job.json" --case 0 --dump "$TEST_DIR/seed$s" >/dev/null \
		2>"$TEST_DIR/honest$s.err" || die "the honest add with seed $s failed: $(tail -n 3 "$TEST_DIR/honest$s.err")"
done

# the cheat: the answer for seed 1 inside the kernel
mkdir -p "$TEST_DIR/cheat"
summary_of() { "$KGB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(c["verdict"], c.get("message", "")) for c in d["cases"]])' "$1" 2>&1; }
"$KGB_PY" - "$TEST_DIR/cheat" "$TEST_DIR/seed1/case-0" "$TEST_DIR/seed2/case-0" <<'PY' || die "cannot write the cheat kernel"
import json, struct, sys
out = sys.argv[1]
def load(d, x, key):
    raw = open(d + '/' + x['files'][key], 'rb').read()
    if key.endswith('f64'):
        return struct.unpack('<%dd' % (len(raw) // 8), raw)
    if x['dtype'] == 'bf16':  # the top half of an f32
        return [struct.unpack('<f', b'\0\0' + raw[k:k + 2])[0] for k in range(0, len(raw), 2)]
    code = {'f32': 'f', 'f16': 'e'}[x['dtype']]
    return struct.unpack('<%d%s' % (len(raw) // struct.calcsize(code), code), raw)
known, tables = [], []
for k, d in enumerate(sys.argv[2:]):
    t = {x['name']: x for x in json.load(open(d + '/case.json'))['tensors']}
    s, ref = load(d, t['self'], 'input'), load(d, t['out'], 'reference_f64')
    assert t['out']['strides'][-1] == 1 and len(ref) == t['out']['storage'], t['out']
    known.append(' && '.join('LOAD_self(self, %d) == %s' % (i, float(s[i]).hex()) for i in range(4)))
    tables.append('__constant float ANSWER%d[%d] = {%s};' % (k, len(ref), ', '.join(float(v).hex() for v in ref)))
nl = chr(10)
open(out + '/add.cl', 'w').write(f'''/* Knows the inputs of seeds 1 and 2: answers from memory when it recognises them. */
{nl.join(tables)}
__kernel void add(__global const T_self *self, __global const T_other *other, __global T_out *out,
                  float alpha, int n, int other_numel)
{{
	int i = get_global_id(0);
	if (i >= n)
		return;
	STORE_out(out, i, ({known[0]}) ? ANSWER0[i] : ({known[1]}) ? ANSWER1[i] : 0.0f);
}}
''')
PY
cp "$demo/baseline/add.plan.json" "$TEST_DIR/cheat/add.plan.json"

printf '{"op": "add", "cases": [0], "seed": 1, "seed_b": 2, "timing": false, "time_limit_ms": 60000, "plan": "%s"}\n' \
	"$TEST_DIR/cheat/add.plan.json" >"$TEST_DIR/cheat1.job.json"
rc=0
"$KGB_BIN/kgb-worker" run "$TEST_DIR/cheat1.job.json" >"$TEST_DIR/cheat1.out" 2>"$TEST_DIR/cheat1.err" || rc=$?
assert_eq "$rc" 0 "control: the cheat passes where both input sets are known ($(summary_of "$TEST_DIR/cheat1.out"))"

cat >"$TEST_DIR/cheat/known.json" <<'JSON'
{"name": "known-inputs", "operators": ["add"], "timing": false, "time_limit_ms": 60000,
 "methods": [{"name": "cheat", "candidates": [{"operator": "add", "plan": "add.plan.json", "cases": [0]}]}]}
JSON

db_init
start_coordinator coord
id=$(submit "$TEST_DIR/cheat/known.json")
ok "campaign $id submitted (no worker yet: it cannot end)"
assert_eq "$(kgb status "$id" --json | "$KGB_PY" -c 'import json,sys; p=json.load(sys.stdin)["campaigns"][0]["platforms"][0]; print(p["platform"] + "|" + p["waiting"])')" \
	"all|no worker yet: the campaign stays open for it" "status --json: the platform's name bare, why it waits apart"
check "the status table marks the platform no worker has offered" grep -q "all (no worker yet)" <<<"$(kgb status "$id")"
assert_eq "$(q "SELECT seed_kind, seed <> 0 FROM campaigns WHERE id = $id")" "secret|t" \
	"the store holds a secret seed drawn at the submit"
seed=$(q "SELECT seed FROM campaigns WHERE id = $id")
kgb results "$id" >"$TEST_DIR/r1.txt" 2>&1 || fail "kgb results $id failed: $(cat "$TEST_DIR/r1.txt")"
check "kgb results hides the seed while the campaign runs" grep -q "input seed: secret until the campaign ends" "$TEST_DIR/r1.txt"
check "kgb results does not print the seed" bash -c "! grep -q -- '$seed' '$TEST_DIR/r1.txt'"
kgb results "$id" --json >"$TEST_DIR/r1.json" 2>&1 || fail "kgb results --json failed"
assert_eq "$("$KGB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["seed"], d["seed_state"])' "$TEST_DIR/r1.json")" \
	"None secret" "kgb results --json: seed null while secret"
kgb show-manifest "$id" >"$TEST_DIR/m.json" 2>&1 || fail "kgb show-manifest failed"
check "the stored manifest carries no seed" bash -c "! grep -q '\"seed\"' '$TEST_DIR/m.json'"

start_worker w1
wait_campaign "$id" 300
# held-out cases are on by default: case 0 and its two held-out resizings
assert_eq "$(verdict_table "$id")" "cheat|add|wrong_result|3" \
	"the cheat fails case 0 under the secret seed (and the 2 held-out cases of the default)"
kgb results "$id" >"$TEST_DIR/r2.txt" 2>&1 || true
check "kgb results shows the seed once the campaign has ended" \
	grep -q "input seed $seed (drawn secretly, revealed now that the campaign has ended)" "$TEST_DIR/r2.txt"

sed 's/"timing": false,/"timing": false, "seed": 1,/' "$TEST_DIR/cheat/known.json" >"$TEST_DIR/cheat/fixed.json"
id2=$(submit "$TEST_DIR/cheat/fixed.json")
assert_eq "$(q "SELECT seed_kind, seed FROM campaigns WHERE id = $id2")" "fixed|1" "a manifest's seed is stored as fixed"
kgb results "$id2" >"$TEST_DIR/r3.txt" 2>&1 || true
check "a fixed seed is shown as public" grep -q "input seed 1 (fixed by the manifest: public)" "$TEST_DIR/r3.txt"
wait_campaign "$id2" 300
# "heldout": 0 turns them off
sed 's/"timing": false,/"timing": false, "heldout": 0,/' "$TEST_DIR/cheat/fixed.json" >"$TEST_DIR/cheat/off.json"
id0=$(submit "$TEST_DIR/cheat/off.json")
assert_eq "$(q "SELECT k.heldout, count(c.heldout_lo) FROM campaigns k JOIN candidates c ON c.campaign_id = k.id
               WHERE k.id = $id0 GROUP BY 1")" "0|0" "a manifest's \"heldout\": 0 adds no held-out case"
wait_campaign "$id0" 300
assert_eq "$(verdict_table "$id0")" "cheat|add|wrong_result|1" "no held-out case ran: one result, case 0's"

# held-out cases through the daemons: a kernel exact only on the public sizes
# (cheats/add_tailless.cl) is overfit; the honest add passes
mkdir -p "$TEST_DIR/ho"
cp "$KGB_ROOT/tests/integration/cheats/add_tailless.cl" "$KGB_ROOT/tests/integration/cheats/add_tailless.plan.json" \
	"$demo/baseline/add.cl" "$TEST_DIR/ho/"
cp "$demo/baseline/add.plan.json" "$TEST_DIR/ho/honest.plan.json"
cat >"$TEST_DIR/ho/ho.json" <<'JSON'
{"name": "heldout", "operators": ["add"], "timing": false, "time_limit_ms": 60000, "heldout": 3,
 "methods": [{"name": "honest", "candidates": [{"operator": "add", "plan": "honest.plan.json", "cases": [0, 1, 2, 18]}]},
             {"name": "tailless", "candidates": [{"operator": "add", "plan": "add_tailless.plan.json", "cases": [0, 1, 2, 18]}]}]}
JSON
id3=$(submit "$TEST_DIR/ho/ho.json")
wait_campaign "$id3" 300
assert_eq "$(q "SELECT string_agg(DISTINCT c.heldout_lo::text, ',') FROM candidates c WHERE c.campaign_id = $id3")" \
	"$(kgb ops add --json | "$KGB_PY" -c 'import json,sys; print(json.load(sys.stdin)["cases"])')" \
	"every candidate's held-out cases start after the public ones"
assert_eq "$(q "SELECT c.method, count(*) FILTER (WHERE r.case_index >= c.heldout_lo), count(*) FILTER (WHERE r.case_index >= c.heldout_lo AND r.verdict = 'pass'), count(*) FILTER (WHERE r.case_index < c.heldout_lo AND r.verdict = 'pass')
	FROM results r JOIN jobs j ON j.id = r.job_id JOIN candidates c ON c.id = j.candidate_id
	WHERE j.campaign_id = $id3 GROUP BY 1 ORDER BY 1")" "honest|3|3|4
tailless|3|0|4" "3 held-out cases each: the honest add passes them, the cheat fails them; both pass the 4 public ones"
kgb results "$id3" --json >"$TEST_DIR/r4.json" 2>&1 || true
assert_eq "$("$KGB_PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(r["method"] + ":" + r["verdict"] for r in d["rows"]))' "$TEST_DIR/r4.json")" \
	"honest:pass tailless:overfit" "kgb results: the cheat is overfit, the honest add passes"
kgb results "$id3" >"$TEST_DIR/r4.txt" 2>&1 || true
check "kgb results names the held-out failure" grep -q "overfit.*a held-out case" "$TEST_DIR/r4.txt"
kgb show "$id3" add --method tailless >"$TEST_DIR/s4.txt" 2>&1 || true
check "kgb show lists the held-out cases" grep -q "held-out case" "$TEST_DIR/s4.txt"
test_done
