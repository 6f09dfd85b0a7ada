#!/bin/bash
# The A/A check: a campaign's baseline timed against itself, through the real daemons
# (docs/timing.md, "Run-to-run noise").
#
#   scripts/aa-check.sh [--runs N] [--together] [--all-methods] [--set KEY=JSON]... [--backend B] [MANIFEST]
#
# Starts kgb-coordinator (embedded PostgreSQL in a scratch directory) and one kgb-worker,
# then submits MANIFEST N times (default 2) with "aa": true: each campaign times the
# baseline method twice, in jobs of its own, and when it is done stores the platform's
# noise floor from the two timings (migration 0008). Once all are done, each campaign is
# judged by the floor the others measured, never by its own: the share of operators
# that tie is the check (target: at least 95%). With --all-methods the
# manifest's other methods run too; with --together the N campaigns are submitted at
# once and share the worker (each waits for the others' jobs), else one after the
# other; and `kgb compare` of the first and the last
# campaign shows how a re-run of the same kernels is judged.
#
# MANIFEST defaults to examples/demo/demo.json on the CPU (--backend opencl) and
# examples/cuda/cuda.json with a CUDA worker (--backend cuda), which needs the bundle of
# scripts/bundle.sh at $KGB_BUNDLE (default .bundle, as scripts/gpu-campaign.sh). Without
# --all-methods only the baseline method is kept. --set overrides a top-level field of
# the manifest (e.g. --set timing_budget_ms=100). The derived manifest is written beside
# the original (its relative paths resolve) and removed at exit.
#
# Logs, reports and results go to $KGB_AA_DIR (kept), else to a temporary directory
# removed at exit unless KGB_AA_KEEP=1. Prints each campaign's A/A line and the result:
#   AA campaign=ID platform=P ties=T operators=N share=S% floor_from=C
#   aa-check: PASS|FAIL (share S% of N operators judged by another campaign's floor)
# Exit status 0 when that share is at least KGB_AA_TARGET percent (default 95).
# KGB_AA_WAIT_S (default 1800) bounds the wait for the campaigns, in seconds.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=2
ALL=0
TOGETHER=0
BACKEND=opencl
SETS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) RUNS=$2; shift 2 ;;
	--all-methods) ALL=1; shift ;;
	--together) TOGETHER=1; shift ;;
	--set) SETS+=("$2"); shift 2 ;;
	--backend) BACKEND=$2; shift 2 ;;
	-h | --help) sed -n '2,29p' "$0"; exit 0 ;;
	-*) echo "aa-check: unknown option $1 (--help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ "$RUNS" -ge 2 ] 2>/dev/null || { echo "aa-check: --runs $RUNS: at least 2 (each campaign is judged by the floor of another)" >&2; exit 2; }
TARGET=${KGB_AA_TARGET:-95}
WAIT_S=${KGB_AA_WAIT_S:-1800}

if [ "$BACKEND" = opencl ]; then
	MANIFEST=${1:-$ROOT/examples/demo/demo.json}
	BIN=$(cd "${KGB_BIN:-$ROOT/build/rel/bin}" && pwd)
else
	MANIFEST=${1:-$ROOT/examples/cuda/cuda.json}
	B=${KGB_BUNDLE:-$ROOT/.bundle}
	[ -x "$B/kgb-worker" ] || { echo "aa-check: no bundle at $B: run scripts/bundle.sh first" >&2; exit 2; }
	. "$ROOT/scripts/gpu-env.sh"
	gpu_store || exit 2
	export LD_LIBRARY_PATH="$KGB_BUNDLE_LIB:$KGB_PG_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	BIN=$B
	# the example manifests name one GPU; the check runs on whichever this worker has
	SETS=('platforms="all"' "${SETS[@]}")
fi
for b in kgb kgb-coordinator kgb-worker; do
	[ -x "$BIN/$b" ] || { echo "aa-check: $BIN/$b missing: run make first" >&2; exit 2; }
done
[ -f "$MANIFEST" ] || { echo "aa-check: $MANIFEST: no such file" >&2; exit 2; }

own_dir=0
if [ -n "${KGB_AA_DIR:-}" ]; then
	DIR=$KGB_AA_DIR
else
	DIR=$(mktemp -d "${TMPDIR:-/tmp}/kgb-aa.XXXXXX")
	own_dir=1
fi
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
chmod 0755 "$DIR"
. "$ROOT/scripts/coord-up.sh"
unset KGB_DATABASE_URL
export KGB_WORKER_ENDPOINT="tcp://127.0.0.1:$(kgb_free_port)"
export KGB_CLI_ENDPOINT="tcp://127.0.0.1:$(kgb_free_port)"
export KGB_CACHE_DIR=${KGB_CACHE_DIR:-$DIR/cache}
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$DIR/pocl-cache}
K() { "$BIN/kgb" "$@"; }

DERIVED="$(dirname "$MANIFEST")/.aa-$(basename "$MANIFEST")"
CPID=""
WPID=""
cleanup() {
	rm -f "$DERIVED"
	[ -z "$WPID" ] || { kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null || true; }
	[ -z "$CPID" ] || { kill "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null || true; }
	# a directory of our own goes, with the embedded cluster (as root it lives outside
	# it, named in pg.location), unless KGB_AA_KEEP=1; KGB_AA_DIR is always kept
	if [ "$own_dir" = 1 ] && [ "${KGB_AA_KEEP:-0}" != 1 ]; then
		if [ -f "$DIR/store/pg.location" ]; then
			pgbase=$(head -n1 "$DIR/store/pg.location")
			case "$pgbase" in /var/lib/kgb/pg-*) rm -rf "$pgbase" ;; esac
		fi
		rm -rf "$DIR"
	fi
}
trap cleanup EXIT

python3 - "$MANIFEST" "$DERIVED" "$ALL" "${SETS[@]}" <<'PY'
import json, sys
src, dst, keep_all = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
m = json.load(open(src))
if not m.get("baseline"):
    sys.exit("aa-check: %s: no \"baseline\" method to time against itself" % src)
if not keep_all:
    m["methods"] = [x for x in m["methods"] if x.get("name") == m["baseline"]]
m["aa"] = True
# held-out cases are never timed: they would add jobs and nothing to the floor
m.setdefault("heldout", 0)
for kv in sys.argv[4:]:
    k, v = kv.split("=", 1)
    m[k] = json.loads(v)
# --set 'operators=[...]' keeps those operators' candidates only
if isinstance(m.get("operators"), list):
    for x in m["methods"]:
        if "candidates" in x:
            x["candidates"] = [c for c in x["candidates"] if c.get("operator") in m["operators"]]
json.dump(m, open(dst, "w"), indent=1)
PY

"$BIN/kgb-coordinator" --data-dir "$DIR/store" >"$DIR/coordinator.log" 2>&1 &
CPID=$!
kgb_coord_ready "$DIR/coordinator.log" "$CPID" 120 || { echo "aa-check: the coordinator did not start" >&2; exit 1; }
"$BIN/kgb-worker" --name aa0 --backend "$BACKEND" >"$DIR/worker.log" 2>&1 &
WPID=$!
for ((i = 0; ; i++)); do
	K workers 2>/dev/null | grep -q aa0 && break
	kill -0 "$WPID" 2>/dev/null || { tail -n 20 "$DIR/worker.log"; echo "aa-check: the worker exited" >&2; exit 1; }
	[ $i -lt 300 ] || { echo "aa-check: the worker did not register within 60 s" >&2; exit 1; }
	sleep 0.2
done
echo "== aa-check: $(basename "$MANIFEST"), $RUNS campaigns, backend $BACKEND"

submit() {
	local sub id
	sub=$(K submit "$DERIVED") || { echo "$sub"; echo "aa-check: submit failed" >&2; exit 1; }
	id=$(printf '%s\n' "$sub" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
	[ -n "$id" ] || { echo "$sub"; echo "aa-check: no campaign id in kgb submit's output" >&2; exit 1; }
	ids+=("$id")
}
await() {
	local left=$((WAIT_S - ($(date +%s) - t0)))
	[ "$left" -gt 0 ] && timeout "$left" "$BIN/kgb" status "$1" --watch >/dev/null && {
		echo "== campaign $1 done in $(($(date +%s) - t0)) s"
		return 0
	}
	# what it was doing when the wait ran out, for whoever reads the log
	echo "aa-check: campaign $1 did not finish within $WAIT_S s" >&2
	K status "$1" >&2 || true
	K workers --wide >&2 || true
	tail -n 20 "$DIR/worker.log" >&2
	exit 1
}
ids=()
if [ "$TOGETHER" = 1 ]; then
	# every campaign submitted at once: they share the worker's slots, as campaigns of
	# a busy cluster do, and WAIT_S bounds them all
	for ((r = 1; r <= RUNS; r++)); do submit; done
	t0=$(date +%s)
	for id in "${ids[@]}"; do await "$id"; done
else
	for ((r = 1; r <= RUNS; r++)); do
		submit
		t0=$(date +%s)
		await "${ids[-1]}"
	done
fi

# every campaign judged once all are done: the first by its own floor (it has no
# other), each later one by the pooled floor of the others (migration 0008)
fail=0
judged=0
for id in "${ids[@]}"; do
	K report "$id" | tee "$DIR/report-$id.txt"
	K results "$id" --json >"$DIR/results-$id.json"
	python3 - "$DIR/results-$id.json" "$id" >>"$DIR/aa.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
floors = {f["platform"]: f for f in doc.get("noise_floors", [])}
for a in doc.get("aa", []):
    f = floors.get(a["platform"], {})
    print("AA campaign=%s platform=%s ties=%d operators=%d share=%.1f%% floor_from=%s own=%s"
          % (sys.argv[2], a["platform"], a["ties"], a["operators"], 100.0 * a["ties"] / max(a["operators"], 1),
             f.get("campaigns", "-"), str(f.get("own", True)).lower()))
PY
done
# the run-to-run spread per size class (docs/timing.md, "Tiny cases and the floor"):
# d = ln(t1 / t2) of every case both timings passed, classed by the smaller median
for id in "${ids[@]}"; do
	for op in $(python3 -c 'import json,sys; print(" ".join(sorted({r["op"] for r in json.load(open(sys.argv[1]))["rows"]})))' \
		"$DIR/results-$id.json"); do
		K show "$id" "$op" --json 2>/dev/null
	done | python3 -c '
import json, math, sys
dec, text, pos, rows = json.JSONDecoder(), sys.stdin.read(), 0, []
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    a, pos = dec.raw_decode(text, pos)
    rows += a
t = {}
for r in rows:
    if r.get("verdict") == "pass" and r.get("median_ns", 0) > 0:
        t.setdefault((r["platform"], r["case"], r["label"]), {})[r["method"]] = r["median_ns"]
cls = {"small (<20 us)": [], "medium (20 us-1 ms)": [], "large (>=1 ms)": []}
for k, m in t.items():
    aa = [x for x in m if x.endswith("-aa") and x[:-3] in m]
    if not aa:
        continue
    a, b = m[aa[0][:-3]], m[aa[0]]
    lo = min(a, b)
    cls["small (<20 us)" if lo < 2e4 else "medium (20 us-1 ms)" if lo < 1e6 else "large (>=1 ms)"].append(math.log(a / b))
for name, d in cls.items():
    if d:
        print("AA-SIZE campaign=%s class=%s cases=%d rms_d=%.3f max_abs_d=%.3f" % (sys.argv[1], name.split()[0],
              len(d), math.sqrt(sum(x * x for x in d) / len(d)), max(abs(x) for x in d)))
' "$id" >>"$DIR/aa.txt"
done
echo
cat "$DIR/aa.txt"
read -r ties total < <(awk '/^AA / && / own=false/ { for (i = 1; i <= NF; i++) { split($i, kv, "=");
	if (kv[1] == "ties") t += kv[2]; if (kv[1] == "operators") n += kv[2] } } END { print t + 0, n + 0 }' "$DIR/aa.txt")
if [ "$ALL" = 1 ]; then
	echo
	echo "== the same kernels re-run: kgb compare ${ids[0]} ${ids[-1]}"
	K compare "${ids[0]}" "${ids[-1]}" | tee "$DIR/compare.txt"
fi
if [ "$total" -eq 0 ]; then
	echo "aa-check: FAIL (no operator judged by another campaign's floor)"
	exit 1
fi
share=$(awk -v t="$ties" -v n="$total" 'BEGIN { printf "%.1f", 100 * t / n }')
if awk -v s="$share" -v g="$TARGET" 'BEGIN { exit !(s >= g) }'; then
	echo "aa-check: PASS (share $share% of $total operators judged by another campaign's floor; target $TARGET%)"
else
	echo "aa-check: FAIL (share $share% of $total operators judged by another campaign's floor; target $TARGET%)"
	fail=1
fi
exit "$fail"
