#!/bin/bash
# Cancelling a large campaign (docs/scheduler.md, "Cancel"): the CLI is answered once the
# campaign's row is cancelled, without waiting for its jobs; the coordinator keeps
# answering while the jobs' rows are marked in slices; in the end every job of the
# campaign is cancelled in the store and nothing of another campaign is touched. A
# cancel cut short by a stop is finished by the next start.
. "$(dirname "$0")/lib.sh"

NJOBS=${KGB_TEST_CANCEL_JOBS:-20000}
db_init
# a platform the store knows with no worker on it: the jobs are made at submit and
# stay queued
start_coordinator coord
stop_checked coord
q "INSERT INTO platforms (name, backend, device_name, arch) VALUES ('sim:cancel', 'sim', 'cancel', 'sim')" >/dev/null
start_coordinator coord

cases=$(kgb ops --json | python3 -c 'import json,sys; print([o["cases"] for o in json.load(sys.stdin)["operators"] if o["name"]=="add"][0])')
# manifest OUT NAME JOBS: candidates of add (the demo's baseline plan), one case per job
manifest() {
	python3 - "$KGB_ROOT" "$1" "$2" "$3" "$cases" <<'PY'
import json, math, sys
root, out, name, jobs, cases = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
plan = json.load(open(root + '/examples/demo/baseline/add.plan.json'))
src = open(root + '/examples/demo/baseline/add.cl').read()
cands = [{"operator": "add", "plan": plan, "sources": {"add.cl": {"inline": src}}}]
methods = [{"name": "m%d" % i, "candidates": cands} for i in range(max(1, math.ceil(jobs / cases)))]
json.dump({"name": name, "operators": ["add"], "platforms": ["sim:cancel"], "shard_size": 1,
           "timing": False, "heldout": 0, "methods": methods}, open(out, "w"))
PY
}
manifest "$TEST_DIR/big.json" big "$NJOBS"
manifest "$TEST_DIR/small.json" small 10
big=$(submit "$TEST_DIR/big.json")
small=$(submit "$TEST_DIR/small.json")
nbig=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $big")
nsmall=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $small")
check "campaign $big has at least $NJOBS queued jobs ($nbig)" test "$nbig" -ge "$NJOBS"
wait_for 120 "campaign $big in the coordinator's memory" grep -q "campaign=$big loaded: $nbig jobs" "$(log_of coord)"

out=$(kgb cancel "$big") || die "kgb cancel $big failed: $out"
check "the cancel reports every job ($out)" grep -q "cancelled: $nbig jobs cancelled" <<<"$out"
assert_eq "$(q "SELECT state FROM campaigns WHERE id = $big")" cancelled "the campaign row is cancelled"
answered=$(sed -n "s/.*campaign=$big cancelled: .* answered \([0-9.]*\) ms after the request.*/\1/p" "$(log_of coord)")
check "the coordinator logs when it answered ($answered ms after the request)" test -n "$answered"
# the jobs' rows are not waited for (loose bound: sanitizer build on a busy machine)
check "answered within 1.5 s of the request ($answered ms)" python3 -c "import sys; sys.exit(not float('${answered:-1e9}') < 1500)"
# the loop answers while the slices run (kgb platforms is served from memory)
check "the coordinator answers during the slices" kgb platforms
all_cancelled() { [ "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $big AND state <> 'cancelled'")" = 0 ]; }
wait_for 300 "every job of campaign $big cancelled in the store" all_cancelled
check "the slices are logged with their count" grep -q "campaign=$big $nbig jobs marked cancelled in the store" \
	"$(log_of coord)"
assert_eq "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $small AND state = 'queued'")" "$nsmall" \
	"the other campaign's jobs are untouched"
assert_eq "$(q "SELECT state FROM campaigns WHERE id = $small")" queued "the other campaign is still queued"
check "the other campaign can still be cancelled" kgb cancel "$small"
check "a second cancel of campaign $big is refused" test_must_fail kgb cancel "$big"
rc=0
out=$(kgb status "$small" --watch --interval 0.2) || rc=$?
assert_eq "$rc" 5 "status --watch of a cancelled campaign exits 5, not 0 as for done"
check "the watch says the cancelled campaign is incomplete ($out)" \
	grep -q "campaign $small was cancelled: 0 of $nsmall jobs had run; its results are incomplete" <<<"$out"

# a cancel cut short: the campaign row says cancelled, its jobs are still queued (as if
# the coordinator stopped between two slices); the next start finishes it
stop_checked coord
manifest "$TEST_DIR/cut.json" cut 10
start_coordinator coord
cut=$(submit "$TEST_DIR/cut.json")
stop_checked coord
q "UPDATE campaigns SET state = 'cancelled' WHERE id = $cut" >/dev/null
ncut=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $cut AND state = 'queued'")
check "campaign $cut: cancelled with $ncut jobs still queued" test "$ncut" -gt 0
start_coordinator coord
cut_done() { [ "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $cut AND state <> 'cancelled'")" = 0 ]; }
wait_for 60 "the restarted coordinator finishes the cancel of campaign $cut" cut_done
stop_checked coord
test_done
