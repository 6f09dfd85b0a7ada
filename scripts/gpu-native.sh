#!/bin/sh
# Native baselines on a CUDA device (docs/native.md): every case of every ATen operator
# (and the vLLM operators with a PyTorch composite) run by the CUDA worker's executor
# through the native provider (python -m kgb.providers.run on cuda:0, torch.ops.aten
# under kgb's inputs, validator and event-pair timer), one `kgb-worker run` job per
# operator. Prints per operator the verdict counts, the number of timed cases and their
# median of medians, and the wall time of each operator and of the whole run.
#
# Run where the GPU is, from the repository root, with the bundle beside it
# (scripts/bundle.sh: kgb-worker, libkgb.so and their libraries). Through the daemons
# instead: scripts/gpu-campaign.sh examples/native/aten-native.json.
#   scripts/gpu-native.sh [--ops a,b,c] [--dataset aten|vllm|nocublas] [--cases smoke|all]
# Needs a python3 with torch (CUDA build) and numpy; KGB_PYTHON picks another.
# Logs and per-operator JSON land in $OUT (default: a fresh temporary directory).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${KGB_BUNDLE:-$ROOT/.bundle}
OUT=${OUT:-$(mktemp -d)}
OPS=""
DATASET=aten
CASES=all
while [ $# -gt 0 ]; do
	case "$1" in
	--ops) OPS=$2; shift 2 ;;
	--dataset) DATASET=$2; shift 2 ;;
	--cases) CASES=$2; shift 2 ;;
	*) echo "usage: scripts/gpu-native.sh [--ops a,b] [--dataset aten|vllm|nocublas] [--cases smoke|all]" >&2; exit 2 ;;
	esac
done
WORKER=$B/kgb-worker
[ -x "$WORKER" ] || WORKER=$ROOT/build/rel/bin/kgb-worker
[ -x "$WORKER" ] || { echo "gpu-native: no kgb-worker (scripts/bundle.sh or make all)" >&2; exit 2; }
LIB=${KGB_LIBRARY:-$B/libkgb.so}
[ -f "$LIB" ] || LIB=$ROOT/build/rel/lib/libkgb.so
[ -f "$LIB" ] || { echo "gpu-native: $LIB missing (make all)" >&2; exit 2; }
PY=${KGB_PYTHON:-$(command -v python3)}
export KGB_PYTHON="$PY" KGB_LIBRARY="$LIB" KGB_PYTHONPATH="$ROOT/python"
if [ -f "$B/lib.tar.xz" ] || [ -d "$B/lib" ]; then
	. "$ROOT/scripts/gpu-env.sh"
fi
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KGB_CACHE_DIR="${KGB_CACHE_DIR:-$(mktemp -d)}"
export PYTHONPATH="$ROOT/python"
mkdir -p "$OUT"

"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__,
      "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NO CUDA")' ||
	{ echo "gpu-native: $PY has no torch" >&2; exit 2; }
if [ -z "$OPS" ]; then
	OPS=$("$PY" -c 'import kgb, sys; print(",".join(o.name for o in kgb.operators(sys.argv[1])))' "$DATASET") ||
		{ echo "gpu-native: cannot list dataset $DATASET" >&2; exit 2; }
fi
echo "== native provider on cuda:0: $(echo "$OPS" | tr ',' '\n' | wc -l) operator(s), cases $CASES, results in $OUT"
T0=$(date +%s)
for op in $(echo "$OPS" | tr ',' ' '); do
	cat >"$OUT/$op.job.json" <<JOB
{"op": "$op", "cases": "$CASES", "seed": 1, "backend": "cuda", "device": 0, "timing": true,
 "time_limit_ms": 120000, "timing_budget_ms": 100, "plan": {"kind": "native"}}
JOB
	t=$(date +%s)
	"$WORKER" run "$OUT/$op.job.json" >"$OUT/$op.out.json" 2>"$OUT/$op.err"
	echo "$op $(( $(date +%s) - t ))" >>"$OUT/walltimes.txt"
	"$PY" -c 'import json, sys
try:
    c = json.load(open(sys.argv[1]))["cases"]
except Exception as e:
    print("%s: no result (%s)" % (sys.argv[2], e)); sys.exit()
print("%s: %d/%d pass, %d timed, %s s" % (sys.argv[2], sum(x["verdict"] == "pass" for x in c), len(c),
      sum(1 for x in c if x.get("timing")), sys.argv[3]))' "$OUT/$op.out.json" "$op" "$(( $(date +%s) - t ))"
done
WALL=$(( $(date +%s) - T0 ))
"$PY" - "$OUT" "$WALL" <<'PY'
import json, os, statistics, sys
out, wall = sys.argv[1], int(sys.argv[2])
walls = dict(l.split() for l in open(os.path.join(out, "walltimes.txt")))
tot, passed, bad_ops = 0, 0, []
print("%-36s %6s %6s %6s %12s %6s  %s" % ("operator", "cases", "pass", "timed", "median(us)", "wall", "other verdicts"))
for op in sorted(walls):
    try:
        r = json.load(open(os.path.join(out, op + ".out.json")))
    except Exception as e:
        print("%-36s  no result (%s): %s" % (op, e, open(os.path.join(out, op + ".err")).read()[-300:]))
        bad_ops.append(op)
        continue
    cases = r["cases"]
    counts = {}
    for c in cases:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    med = [c["timing"]["median_ns"] for c in cases if c.get("timing")]
    other = ", ".join("%s %d" % kv for kv in sorted(counts.items()) if kv[0] != "pass")
    first = next((c["message"] for c in cases if c["verdict"] != "pass"), "")
    print("%-36s %6d %6d %6d %12.2f %6s  %s%s" % (op, len(cases), counts.get("pass", 0), len(med),
          statistics.median(med) / 1e3 if med else 0, walls[op], other, (" (" + first[:120] + ")") if first else ""))
    tot += len(cases)
    passed += counts.get("pass", 0)
    if counts.get("pass", 0) != len(cases):
        bad_ops.append(op)
print("total: %d cases, %d pass, %d operator(s) with other verdicts%s; wall %d s" % (
    tot, passed, len(bad_ops), (": " + " ".join(bad_ops)) if bad_ops else "", wall))
PY
