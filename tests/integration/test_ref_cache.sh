#!/bin/bash
# The reference cache shared by a campaign's candidates (docs/references.md, "The
# reference cache") and the per-case profile (docs/worker.md, "Where a case's time goes"):
# a campaign of two correct candidates of ATen, vLLM and cuBLAS operators on one CPU
# worker. Every case passes; every job's `done` line carries its profile; for every
# operator the second candidate's jobs find in the cache what the first one's computed
# (hits = misses: each (case, seed) computed once, read once; no held-out cases, which
# each candidate draws for itself); scripts/profile-campaign.py sums the profile per dataset; and no entry's
# file name carries a seed. A second worker sizes its slots from the machine.
# kgb-test: budget=120
. "$(dirname "$0")/lib.sh"

export KGB_CACHE_DIR="$TEST_DIR/cache-own"
db_init
start_coordinator coord
start_worker w1
wait_registered w1

# untimed (the cache is for validation's inputs and references); KGB_REFCACHE_TIMING=1
# times the timed cases too (20 ms each), for a profile with timing in it
make_manifest "$TEST_DIR/m.json" --methods baseline,agent-a --ops add,rms_norm,cublasSaxpy_v2 --name refcache \
	--set time_limit_ms=60000 --set timing_budget_ms=20 --set 'cases="smoke"' --set heldout=0 \
	--set "timing=$([ "${KGB_REFCACHE_TIMING:-0}" = 1 ] && echo true || echo false)"
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 400
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "one result per case"
assert_eq "$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id
               WHERE j.campaign_id = $id AND r.verdict <> 'pass'")" 0 "every case of both candidates passes"
njobs=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id")
log=$(log_of w1)
ndone=$(grep -c ' done: op=.*; profile (ms): .*inputs [0-9]' "$log")
check "every job's done line carries its profile ($ndone of $njobs)" test "$ndone" -ge "$njobs"

check "per operator, the second candidate reads what the first computed (hits = misses > 0)" python3 - "$log" <<'PY'
import re, sys
per = {}
for line in open(sys.argv[1]):
    m = re.search(r" done: op=(\S+) .*ref cache (\d+) hit / (\d+) miss", line)
    if m:
        h, mi = per.setdefault(m.group(1), [0, 0])
        per[m.group(1)] = [h + int(m.group(2)), mi + int(m.group(3))]
assert set(per) == {"add", "rms_norm", "cublasSaxpy_v2"}, per
for op, (h, mi) in per.items():
    assert h == mi and h > 0, (op, h, mi)
print(per)
PY

python3 "$KGB_ROOT/scripts/profile-campaign.py" --kgb "$KGB_BIN/kgb" "$log" >"$TEST_DIR/profile.txt"
check "profile-campaign.py prints the aten, vllm, cublas and all profiles" \
	python3 - "$TEST_DIR/profile.txt" <<'PY'
import sys
t = open(sys.argv[1]).read()
for d in ("aten", "vllm", "cublas", "all"):
    assert "PROFILE dataset=%s " % d in t, t
assert " reference " in t and " ms/case " in t, t
PY
cat "$TEST_DIR/profile.txt"
python3 "$KGB_ROOT/scripts/profile-campaign.py" --by-kind "$log" >"$TEST_DIR/profile-kind.txt"
check "profile-campaign.py --by-kind: each job counted in one kind (no python here), with the wall per case" \
	python3 - "$TEST_DIR/profile-kind.txt" "$TEST_DIR/profile.txt" <<'PY'
import re, sys
t, by_ds = open(sys.argv[1]).read(), open(sys.argv[2]).read()
kinds = dict(re.findall(r"PROFILE kind=(\w+) jobs=(\d+) cases=\d+ wall_per_case_ms=\d+ ", t))
assert "all" in kinds and "python" not in kinds, t
assert sum(int(v) for k, v in kinds.items() if k != "all") == int(kinds["all"]), t
assert kinds["all"] == re.search(r"PROFILE dataset=all jobs=(\d+)", by_ds).group(1), (t, by_ds)
PY

# the entries' names are hashes: nothing in the cache's tree names a seed, a case or an
# operator, and only the worker's user may enter it
check "no cache path names the campaign's seed, a case or an operator" python3 - "$KGB_CACHE_DIR/ref" \
	"$(q "SELECT seed FROM campaigns WHERE id = $id")" <<'PY'
import os, re, stat, sys
root, seed = sys.argv[1], sys.argv[2]
n = 0
for d, dirs, files in os.walk(root):
    assert stat.S_IMODE(os.stat(d).st_mode) & 0o077 == 0, d
    for f in files:
        n += 1
        rel = os.path.relpath(os.path.join(d, f), root)
        # the catalog version, then the key's hash: nothing else
        m = re.fullmatch(r"([^/]+)/([0-9a-f]{2})/([0-9a-f]{64})\.bin", rel)
        assert m and m.group(3).startswith(m.group(2)) and seed not in m.group(1), rel
assert n > 0
PY

# slots sized from the machine (docs/worker.md, "Slots and helpers"): a worker with
# KGB_WORKER_SLOTS=auto on PoCL's CPU device takes (usable CPUs - 2) / devices, one at
# least and two at most, and no more CPUs than the machine has online; w1 (one slot as
# the tests' default) says its count was given
KGB_WORKER_SLOTS=auto start_worker w2 --backend opencl
wait_registered w2
line=$(grep -h ' slot(s) each (sized from the machine' "$TEST_DIR"/logs/w2.*.log | head -1)
check "w2's start line says its slots were sized from the machine ($line)" test -n "$line"
check "w1's start line says its slot count was given" grep -q ' 1 slot(s) each (as given' "$log"
read -r nd slots cpus <<<"$(sed -n 's/.*: \([0-9]*\) device(s), \([0-9]*\) slot(s) each (sized from the machine, \([0-9]*\) usable CPU.*/\1 \2 \3/p' <<<"$line")"
want=$(( cpus > 2 ? (cpus - 2) / (nd > 0 ? nd : 1) : 1 )); want=$(( want < 1 ? 1 : want > 2 ? 2 : want ))
assert_eq "$slots" "$want" "w2's slots for $cpus usable CPU(s) and $nd device(s)"
check "w2 counts no more CPUs than are online ($cpus of $(getconf _NPROCESSORS_ONLN))" \
	test "$cpus" -ge 1 -a "$cpus" -le "$(getconf _NPROCESSORS_ONLN)"
stop_checked w2
stop_checked w1
stop_checked coord
test_done
