#!/bin/bash
# A campaign's jobs made by the store at submit (docs/scheduler.md, "Large campaigns";
# docs/store.md, "Job references"): a campaign of thousands of jobs over two platforms,
# with whole-operator candidates and a case selection, gets exactly the expected job
# rows (candidate, platform, case range) in candidate, platform, shard order, and all of
# them reach the coordinator's memory (read in pages); the statement-level reference
# checks refuse a job naming a missing campaign, candidate or platform with a clear
# error, deleting a campaign deletes its jobs, a platform in use cannot be deleted; and
# a small campaign runs to completion on a CPU worker; platforms that join later get
# their jobs from the store the same way (only the candidates their backend runs).
. "$(dirname "$0")/lib.sh"

NCANDS=${KGB_TEST_SUBMIT_CANDS:-60}
SHARD=7
db_init
# two platforms the store knows with no worker on them: the large campaign's jobs are
# made at submit and stay queued
start_coordinator coord
stop_checked coord
q "INSERT INTO platforms (name, backend, device_name, arch) VALUES ('sim:a', 'sim', 'a', 'sim'), ('sim:b', 'sim', 'b', 'sim')" >/dev/null
start_coordinator coord
start_worker w1
wait_registered w1

cases=$(kgb ops --json | python3 -c 'import json,sys; print([o["cases"] for o in json.load(sys.stdin)["operators"] if o["name"]=="add"][0])')
SEL='[0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 20]'
# NCANDS whole-operator candidates of add, then one with a case selection
python3 - "$KGB_ROOT" "$TEST_DIR/big.json" "$NCANDS" "$SHARD" "$SEL" <<'PY'
import json, sys
root, out, n, shard, sel = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5])
plan = json.load(open(root + '/examples/demo/baseline/add.plan.json'))
src = open(root + '/examples/demo/baseline/add.cl').read()
cand = {"operator": "add", "plan": plan, "sources": {"add.cl": {"inline": src}}}
methods = [{"name": "m%d" % i, "candidates": [cand]} for i in range(n)]
methods.append({"name": "sel", "candidates": [dict(cand, cases=sel)]})
# no held-out cases: their shard's range comes from the secret seed (test_secret_seed.sh)
json.dump({"name": "big", "operators": ["add"], "platforms": ["sim:a", "sim:b"], "shard_size": shard,
           "timing": False, "heldout": 0, "methods": methods}, open(out, "w"))
PY
# the expected rows: idx|platform|lo|hi in candidate, platform, shard order
# the shards a candidate gets: whole ranges of the shard size, or for a case
# selection its runs of consecutive cases cut at the shard size (both expectations)
cat >"$TEST_DIR/shards.py" <<'PY'
def runs(sel, shard):
    out, k = [], 0
    while k < len(sel):
        e = k + 1
        while e < len(sel) and sel[e] == sel[e - 1] + 1 and e - k < shard:
            e += 1
        out.append((sel[k], sel[e - 1] + 1))
        k = e
    return out

def whole(cases, shard):
    return [(lo, min(lo + shard, cases)) for lo in range(0, cases, shard)]
PY
PYTHONPATH="$TEST_DIR" python3 - "$NCANDS" "$SHARD" "$cases" "$SEL" >"$TEST_DIR/expected.txt" <<'PY'
import json, sys
from shards import runs, whole
n, shard, cases, sel = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
for i in range(n + 1):
    shards = runs(sel, shard) if i == n else whole(cases, shard)
    for p in ("sim:a", "sim:b"):
        for lo, hi in shards:
            print("%d|%s|%d|%d" % (i, p, lo, hi))
PY
nexp=$(wc -l <"$TEST_DIR/expected.txt")

out=$(kgb submit "$TEST_DIR/big.json") || die "kgb submit big.json failed: $out"
big=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p')
check "the submit reports $nexp jobs ($out)" grep -q ": $nexp jobs" <<<"$out"
q "SELECT c.idx, p.name, j.case_lo, j.case_hi FROM jobs j JOIN candidates c ON c.id = j.candidate_id
   JOIN platforms p ON p.id = j.platform_id WHERE j.campaign_id = $big ORDER BY j.id" >"$TEST_DIR/got.txt"
assert_eq "$(wc -l <"$TEST_DIR/got.txt")" "$nexp" "campaign $big: the jobs table holds $nexp jobs"
check "every job has the expected candidate, platform and cases, in candidate, platform, shard order" \
	cmp "$TEST_DIR/expected.txt" "$TEST_DIR/got.txt"
assert_eq "$(q "SELECT count(*) FROM jobs j JOIN candidates c ON c.id = j.candidate_id
               WHERE j.campaign_id = $big AND (c.campaign_id <> j.campaign_id OR j.op <> 'add'
               OR j.state <> 'queued' OR j.epoch <> 0 OR j.attempts <> 0)")" 0 \
	"every job: its campaign's candidate, operator add, queued at epoch 0"
assert_eq "$(q "SELECT max(id) - min(id) + 1 FROM jobs WHERE campaign_id = $big")" "$nexp" "the jobs' ids are one range"
wait_for 120 "campaign $big in the coordinator's memory" grep -q "campaign=$big loaded: $nexp jobs in memory" "$(log_of coord)"
pages=$(sed -n "s/.*campaign=$big loaded: $nexp jobs in memory, \([0-9]*\) pages.*/\1/p" "$(log_of coord)")
check "loaded in pages ($pages)" test "${pages:-0}" -ge 1

# the reference checks of migration 0006a
cand=$(q "SELECT id FROM candidates WHERE campaign_id = $big ORDER BY id LIMIT 1")
plat=$(q "SELECT id FROM platforms WHERE name = 'sim:a'")
ins() { q "INSERT INTO jobs (campaign_id, candidate_id, platform_id, op, case_lo, case_hi) VALUES ($1, $2, $3, 'add', 900, 901)" 2>&1; }
refused() { # DESC WANT CAMPAIGN CANDIDATE PLATFORM
	local out
	if out=$(ins "$3" "$4" "$5"); then
		fail "$1: the insert was accepted"
		return
	fi
	check "$1: refused with '$2' ($out)" grep -q -- "$2" <<<"$out"
}
refused "a job on a missing platform" "platform_id 999999: no such platform" "$big" "$cand" 999999
refused "a job of a missing candidate" "candidate_id 999999: no such candidate" "$big" 999999 "$plat"
refused "a job of a missing campaign" "campaign_id 999999: no such campaign" 999999 "$cand" "$plat"
out=$(psql -XAtq -v VERBOSITY=verbose "$KGB_DATABASE_URL" -c "INSERT INTO jobs (campaign_id, candidate_id,
	platform_id, op, case_lo, case_hi) VALUES (999999, $cand, $plat, 'add', 900, 901)" 2>&1) || true
check "the refusal is a foreign-key violation, SQLSTATE 23503 ($out)" grep -q "ERROR:  23503:" <<<"$out"
assert_eq "$(q "SELECT count(*) FROM jobs WHERE case_lo = 900")" 0 "no refused job was stored"
check "a good job is accepted" ins "$big" "$cand" "$plat"
q "DELETE FROM jobs WHERE case_lo = 900" >/dev/null
out=$(q "UPDATE jobs SET platform_id = 999999 WHERE id = (SELECT min(id) FROM jobs WHERE campaign_id = $big)" 2>&1) &&
	fail "moving a job to a missing platform was accepted"
check "moving a job to a missing platform is refused ($out)" grep -q "platform_id 999999: no such platform" <<<"$out"
out=$(q "DELETE FROM platforms WHERE name = 'sim:b'" 2>&1) && fail "deleting a platform jobs use was accepted"
check "deleting a platform jobs use is refused ($out)" grep -q "platforms: platform [0-9]* is used by job" <<<"$out"

# the job updates of migration 0006b: an assignment changes no indexed column and is a
# HOT update, the result (which closes the job) is not; PostgreSQL's counts for the
# transaction, rolled back
jid=$(q "SELECT min(id) FROM jobs WHERE campaign_id = $big")
out=$(psql -XAtq -v ON_ERROR_STOP=1 "$KGB_DATABASE_URL" 2>&1 <<SQL
BEGIN;
UPDATE jobs SET state = 'running', epoch = epoch + 1, attempts = attempts + 1, worker_id = NULL, device_idx = 0,
	assigned_at = now(), not_before = NULL WHERE id = $jid AND state = 'queued';
SELECT 'assigned ' || n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'jobs';
UPDATE jobs SET state = 'queued', device_idx = NULL, not_before = now(), last_error = 'test' WHERE id = $jid;
SELECT 'requeued ' || n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'jobs';
UPDATE jobs SET state = 'done', finished_at = now(), compile_ms = 1, device_ms = 2, wall_ms = 3, log = '' WHERE id = $jid;
SELECT 'done ' || n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'jobs';
ROLLBACK;
SQL
)
assert_eq "$(tr '\n' ' ' <<<"$out")" "assigned 1 1 requeued 2 2 done 3 2 " \
	"job $jid: assignment and requeue are HOT updates, the result is not (updates, HOT updates)"
assert_eq "$(q "SELECT state FROM jobs WHERE id = $jid")" queued "job $jid: still queued after the rollback"

# a small campaign on the CPU worker's platform runs to completion
cpu=$(q "SELECT name FROM platforms WHERE backend <> 'sim' ORDER BY id LIMIT 1")
check "the worker offers a platform ($cpu)" test -n "$cpu"
make_manifest "$TEST_DIR/small.json" --methods baseline --ops add,gt --set shard_size=16 --set timing=false \
	--set "platforms=[\"$cpu\"]"
small=$(submit "$TEST_DIR/small.json")
expect=$(expected_cases "$small")
wait_campaign "$small" 300
assert_eq "$(results_count "$small")" "$expect" "campaign $small: every case recorded"
assert_eq "$(q "SELECT string_agg(DISTINCT r.verdict, ' ') FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $small")" pass "campaign $small: every case passes"
wait_for 60 "campaign $small done" test "$(q "SELECT state FROM campaigns WHERE id = $small")" = done

# platforms that join after the submit: the store makes their jobs as at submit
# (kgb_coord_expand). A campaign for every platform with an OpenCL candidate, a CUDA one
# and an OpenCL case selection; then, with the coordinator stopped, platforms of
# backends opencl (runs the OpenCL candidates), cuda (the CUDA one) and sim (unknown:
# runs all) appear in the store, and its next start expands the campaign onto them
stop_checked w1 # the campaign's jobs on the CPU platform stay queued
python3 - "$KGB_ROOT" "$TEST_DIR/grow.json" "$SHARD" "$SEL" <<'PY'
import json, sys
root, out, shard, sel = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
plan = json.load(open(root + '/examples/demo/baseline/add.plan.json'))
src = open(root + '/examples/demo/baseline/add.cl').read()
cl = {"operator": "add", "plan": plan, "sources": {"add.cl": {"inline": src}}}
cuplan = json.loads(json.dumps(plan))
cuplan["kernels"][0].update(lang="cuda", source="add.cu")
cu = {"operator": "add", "plan": cuplan, "sources": {"add.cu": {"inline": "// not compiled here"}}}
methods = [{"name": "cl", "candidates": [cl]}, {"name": "cu", "candidates": [cu]},
           {"name": "sel", "candidates": [dict(cl, cases=sel)]}]
json.dump({"name": "grow", "operators": ["add"], "platforms": ["all"], "shard_size": shard,
           "timing": False, "heldout": 0, "methods": methods}, open(out, "w"))
PY
out=$(kgb submit "$TEST_DIR/grow.json") || die "kgb submit grow.json failed: $out"
grow=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p')
before=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $grow")
check "campaign $grow has jobs on the known platforms ($before)" test "$before" -gt 0
stop_checked coord
q "INSERT INTO platforms (name, backend, device_name, arch) VALUES ('sim:cl', 'opencl', 'c', 'sim'),
   ('sim:cu', 'cuda', 'u', 'sim'), ('sim:any', 'sim', 'y', 'sim')" >/dev/null
start_coordinator coord
# the expected rows per new platform: idx|lo|hi in candidate, shard order
PYTHONPATH="$TEST_DIR" python3 - "$SHARD" "$cases" "$SEL" >"$TEST_DIR/grow-expected.txt" <<'PY'
import json, sys
from shards import runs, whole
shard, cases, sel = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
for plat, idxs in (("sim:cl", (0, 2)), ("sim:cu", (1,)), ("sim:any", (0, 1, 2))):
    for i in idxs:
        for lo, hi in (runs(sel, shard) if i == 2 else whole(cases, shard)):
            print("%s|%d|%d|%d" % (plat, i, lo, hi))
PY
for p in sim:cl sim:cu sim:any; do
	n=$(grep -c "^$p|" "$TEST_DIR/grow-expected.txt")
	wait_for 60 "campaign $grow: $n new jobs on $p in memory" \
		grep -q "campaign=$grow platform=$p: $n new jobs" "$(log_of coord)"
done
q "SELECT p.name, c.idx, j.case_lo, j.case_hi FROM jobs j JOIN candidates c ON c.id = j.candidate_id
   JOIN platforms p ON p.id = j.platform_id WHERE j.campaign_id = $grow AND p.name IN ('sim:cl', 'sim:cu', 'sim:any')
   ORDER BY p.id, j.id" >"$TEST_DIR/grow-got.txt"
check "the new platforms' jobs: the candidates each backend runs, their shards, in candidate and shard order" \
	cmp "$TEST_DIR/grow-expected.txt" "$TEST_DIR/grow-got.txt"
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $grow")" \
	"$((before + $(wc -l <"$TEST_DIR/grow-expected.txt")))" "no new jobs on the platforms that had them"
assert_eq "$(q "SELECT count(*) FROM jobs j JOIN platforms p ON p.id = j.platform_id WHERE j.campaign_id = $grow
               AND p.name LIKE 'sim:%' AND (j.state <> 'queued' OR j.op <> 'add' OR NOT j.is_open)")" 0 \
	"every new job queued (and open), operator add"
check "kgb cancel $grow" kgb cancel "$grow"

# deleting a campaign deletes its jobs and their results (was ON DELETE CASCADE)
check "kgb cancel $big" kgb cancel "$big"
stop_checked coord
q "DELETE FROM campaigns WHERE id IN ($big, $small, $grow)" >/dev/null
assert_eq "$(q "SELECT count(*) FROM jobs")" 0 "deleting the campaigns deleted their jobs"
assert_eq "$(q "SELECT count(*) FROM results")" 0 "and the jobs' results"
check "a platform no job uses can be deleted" q "DELETE FROM platforms WHERE name = 'sim:b'"
test_done
