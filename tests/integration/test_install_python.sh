#!/bin/bash
# The worker as `make install` lays it out (docs/deploy.md), started with a clean
# environment (env -i, PATH and HOME only: no KGB_PYREC, no KGB_TRITON_HELPER), finds
# the recorder of Python candidates, the PyTorch provider it loads and the Triton
# helper under PREFIX/libexec/kgb, and says at registration whether it records Python
# candidates (docs/python-candidates.md, "Which workers record Python candidates"):
#   - a worker whose Python has no torch (PATH's python3) does not offer them, logs
#     why, gets none of their jobs, and `kgb submit` of a python candidate (and
#     `kgb status`) says which platform waits and why;
#   - a worker started with --python naming a Python with torch and Triton offers them,
#     and the waiting jobs run there, recorded (no "not found" verdict).
# Skips the second half when build/venv (or KGB_PYREC_PYTHON) has no torch and triton.
. "$(dirname "$0")/lib.sh"

root=$TEST_DIR/root
make -s -C "$KGB_ROOT" install DESTDIR="$root" PREFIX=/usr/local >"$TEST_DIR/install.log" 2>&1 ||
	die "make install failed: $(tail -n 20 "$TEST_DIR/install.log")"
for f in bin/kgb-worker libexec/kgb/triton_compile.py libexec/kgb/pyrec/kgb_record.py libexec/kgb/pyrec/kgb_steps.py libexec/kgb/pyrec/kgb_replay.py libexec/kgb/pyrec/kgb_confine.py \
	libexec/kgb/pyrec/torch_aten.py share/kgb/python/kgb/providers/run.py; do
	check "make install puts $f under PREFIX" test -f "$root/usr/local/$f"
done

# a python3 without torch: the first on the clean PATH
bare_path=/usr/bin:/bin
nopy=$(PATH=$bare_path command -v python3 || true)
[ -n "$nopy" ] || die "no python3 on $bare_path"
if "$nopy" -c 'import torch' 2>/dev/null; then
	ok "SKIPPED: $nopy imports torch, so no worker here lacks it"
	test_done
fi

# the installed worker, environment emptied but for PATH and HOME; CPU device only
start_installed() {
	local name=$1 log; shift
	log=$(_next_log "$name")
	_spawn "$name" "$log" env -i PATH="$bare_path" HOME="$TEST_DIR" \
		"$root/usr/local/bin/kgb-worker" --coordinator "$KGB_WORKER_ENDPOINT" --name "$name" \
		--backend opencl "$@"
}
logged() { grep -q -- "$2" "$(log_of "$1")"; }

db_init
start_coordinator coord
start_installed bare
wait_registered bare
wait_for 120 "worker bare says whether it records Python candidates" logged bare "python candidates:"
line=$(grep "python candidates:" "$(log_of bare)" | head -n1)
case $line in
*"NOT offered: torch not importable by $nopy"*) ok "the worker without torch does not offer python, saying why: ${line#*python candidates: }" ;;
*) fail "worker bare: want 'NOT offered: torch not importable by $nopy', got: $line" ;;
esac
wait_for 30 "the coordinator heard bare's answer" logged coord "name=bare .*python candidates: not recorded (torch not importable"
check "kgb workers says bare does not record python, and why" \
	grep -qF "bare python candidates: not recorded (torch not importable by $nopy" <(kgb workers)

plat=$(q "SELECT p.name FROM platforms p JOIN devices d ON d.platform_id = p.id JOIN workers w ON w.id = d.worker_id
          WHERE w.name = 'bare' LIMIT 1")
mkdir -p "$TEST_DIR/m"
cp "$KGB_ROOT/tests/pycand/silu.py" "$TEST_DIR/m/silu.py"
cat >"$TEST_DIR/m/run.json" <<EOF
{"name": "installed", "operators": ["silu"], "platforms": ["$plat"], "cases": "smoke", "timing": false,
 "shard_size": 64, "time_limit_ms": 300000,
 "methods": [{"name": "m", "candidates": [{"operator": "silu", "kind": "python", "module": "silu.py"}]}]}
EOF
kgb submit "$TEST_DIR/m/run.json" >"$TEST_DIR/submit.out" 2>"$TEST_DIR/submit.err" ||
	die "kgb submit failed: $(cat "$TEST_DIR/submit.err")"
id=$(sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' "$TEST_DIR/submit.out")
want="python: no live worker of $plat can record Python candidates (worker bare: torch not importable by $nopy"
if grep -qF -- "$want" "$TEST_DIR/submit.err"; then
	ok "kgb submit says why the python jobs wait: $(cat "$TEST_DIR/submit.err")"
else
	fail "kgb submit: want '$want...' on stderr, got: $(cat "$TEST_DIR/submit.err")"
fi
sleep 3
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state <> 'queued'")" 0 \
	"the python jobs wait: none was given to the worker that cannot record them"
kgb status "$id" >"$TEST_DIR/st.txt" 2>&1
st=$(unwrap "$TEST_DIR/st.txt")   # the notes wrap at the width
if grep -qF -- "wait on $plat: $want" <<<"$st"; then
	ok "kgb status says why they wait"
else
	fail "kgb status $id: want 'wait on $plat: $want...', got: $st"
fi

py=${KGB_PYREC_PYTHON:-$KGB_ROOT/build/venv/bin/python}
if ! [ -x "$py" ] || ! "$py" -c 'import torch, triton' 2>/dev/null; then
	ok "SKIPPED (second half): $py cannot import torch and triton"
	test_done
fi
start_installed able --python "$py"
wait_for 120 "worker able offers python" logged able "python candidates: offered, recorded with $py: torch"
ok "the worker started with --python offers python: $(grep -o 'python candidates: .*' "$(log_of able)" | head -n1)"
wait_campaign "$id" 600
assert_eq "$(q "SELECT string_agg(DISTINCT w.name, ',') FROM jobs j JOIN workers w ON w.id = j.worker_id
                WHERE j.campaign_id = $id")" able "the python jobs ran on the worker that records them"
assert_eq "$(results_count "$id")" "$(expected_cases "$id")" "one result per case"
notfound=$(q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.campaign_id = $id
              AND (r.message LIKE '%not found%' OR r.message LIKE '%not run by this worker%'
                   OR r.verdict = 'infra_error')")
assert_eq "$notfound" 0 "no case says the recorder, the provider or the helper was not found"
q "SELECT r.verdict, left(r.message, 160) FROM results r JOIN jobs j ON j.id = r.job_id
   WHERE j.campaign_id = $id ORDER BY r.case_index LIMIT 3"
test_done
