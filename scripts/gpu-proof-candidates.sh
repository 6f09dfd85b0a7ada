#!/bin/bash
# The GPU figures of docs/python-candidates.md and docs/timing.md in one device run,
# each phase through the documented bundle path (scripts/bundle.sh here first):
#
#   python  scripts/gpu-python-proof.sh over examples/python/aten: the module set and
#           the native baseline of the same operators, every case, timed
#   aa      scripts/aa-check.sh --backend cuda: the CUDA examples' baseline against
#           itself, two campaigns, each judged by the other's noise floor
#   cheats  the CUDA cheats of tests/integration/cheats (answers kept in shared memory
#           and in a __device__ array) and the honest CUDA add, each a `kgb-worker run`
#           job of add cases 0, 18 and 226 (18 and 226 timed), with the scrub (the
#           default) and with KGB_LOCAL_SCRUB=off; a CHEATS line per job gives each
#           case's verdict and median (docs/security.md)
#
#   recbench the recorder's cost per case on the device (RECBENCH lines)
#   crosschip scripts/gpu-campaign.sh --dump over examples/python/cross-chip.json: the
#           store for scripts/merge-store.sh (the cross-chip table with a CPU machine)
#
#   scripts/gpu-proof-candidates.sh [PHASE ...]      (default: python aa)
#
# Each phase has a deadline (KGB_PROOF_PYTHON_NATIVE_S, KGB_PROOF_PYTHON_S,
# KGB_PROOF_AA_S, KGB_PROOF_CROSSCHIP_S) so the whole fits one 10-minute device call; KGB_PROOF_SMOKE=1 runs
# the smoke cases only; KGB_PROOF_PYTHON_OPS=A,B,... the python phase on those operators'
# modules only (gpu-python-proof.sh --ops), so that both of its campaigns finish. The
# whole module set needs two calls: phase python-native (its native.dump and
# native.wall come back with the logs), then, with those two files in build/proof/
# here and carried (carry: .bundle, build/proof), phase python-modules. Logs go to $OUT when it
# is set (the device tool's folder), else to a fresh directory; the scratch stores stay
# in a temporary directory.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LOGS=${OUT:-$(mktemp -d)}
mkdir -p "$LOGS"
SCRATCH=$(mktemp -d)
PHASES=${*:-python aa}
archive() {
	(cd "$LOGS" && ls | grep -v -e '^logs\.tar\.gz$' -e '^\.list$' >.list && [ -s .list ] &&
		tar czf logs.tar.gz.new -T .list && mv logs.tar.gz.new logs.tar.gz)
}
rc=0
for ph in $PHASES; do
	t0=$(date +%s)
	case $ph in
	python | python-native | python-modules)
		# python: both campaigns in this call; python-native, then python-modules in the
		# next call: the native baseline's store dumped into KGB_PROOF_STORE (default
		# build/proof, which also comes back with the logs: carry it into the next call)
		echo "== phase $ph ($(date -u +%H:%M:%S))"
		store=${KGB_PROOF_STORE:-$ROOT/build/proof}
		case $ph in
		python) split= ;;
		python-native) split="--phase native --store $store" ;;
		python-modules) split="--phase python --store $store" ;;
		esac
		# shellcheck disable=SC2086
		OUT=$SCRATCH/$ph timeout $((${KGB_PROOF_PYTHON_NATIVE_S:-200} + ${KGB_PROOF_PYTHON_S:-260} + 90)) \
			scripts/gpu-python-proof.sh --native-s "${KGB_PROOF_PYTHON_NATIVE_S:-200}" \
			--python-s "${KGB_PROOF_PYTHON_S:-260}" --slots 14 ${KGB_PROOF_SMOKE:+--smoke} \
			${KGB_PROOF_PYTHON_OPS:+--ops "$KGB_PROOF_PYTHON_OPS"} $split examples/python/aten \
			>"$LOGS/$ph-proof.log" 2>&1 || rc=1
		tail -n 80 "$LOGS/$ph-proof.log"
		for f in worker.log coordinator.log; do
			[ -f "$SCRATCH/$ph/$f" ] && cp "$SCRATCH/$ph/$f" "$LOGS/$ph-$f"
		done
		if [ "$ph" = python-native ]; then
			for f in native.dump native.wall; do
				[ -f "$store/$f" ] && cp "$store/$f" "$LOGS/$f"
			done
		fi
		;;
	aa)
		echo "== phase aa ($(date -u +%H:%M:%S))"
		KGB_AA_DIR=$SCRATCH/aa KGB_AA_WAIT_S=${KGB_PROOF_AA_S:-150} \
			timeout $((${KGB_PROOF_AA_S:-150} + 60)) scripts/aa-check.sh --backend cuda --together \
			--set timing_budget_ms=50 >"$LOGS/aa-check.log" 2>&1 || rc=1
		tail -n 60 "$LOGS/aa-check.log"
		for f in worker.log coordinator.log; do
			[ -f "$SCRATCH/aa/$f" ] && cp "$SCRATCH/aa/$f" "$LOGS/aa-$f"
		done
		;;
	cheats)
		echo "== phase cheats ($(date -u +%H:%M:%S))"
		B=${KGB_BUNDLE:-$ROOT/.bundle}
		C=$ROOT/tests/integration/cheats
		for name in add_smem_memo add_global_memo add; do
			plan=$C/$name.plan.json
			[ "$name" = add ] && plan=$ROOT/examples/cuda/cuda/add.plan.json
			for scrub in on off; do
				job=$SCRATCH/$name-$scrub.job.json
				printf '{"op": "add", "cases": [0, 18, 226], "seed": 23, "backend": "cuda", "device": 0, "timing": true, "time_limit_ms": 120000, "timing_budget_ms": 100, "plan": "%s"}\n' \
					"$plan" >"$job"
				LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" KGB_LOCAL_SCRUB=$scrub \
					timeout "${KGB_PROOF_CHEATS_S:-40}" "$B/kgb-worker" run "$job" >"$LOGS/cheats-$name-$scrub.json" \
					2>"$LOGS/cheats-$name-$scrub.err" || true
				python3 - "$LOGS/cheats-$name-$scrub.json" "$name" "$scrub" "$LOGS/cheats-$name-$scrub.err" <<'PY' || rc=1
import json, sys
path, name, scrub, err = sys.argv[1:5]
try:
    d = json.load(open(path))
except Exception:  # a job that gave no result: the last line of its stderr says why
    lines = open(err, errors="replace").read().strip().splitlines() or ["(nothing on stderr)"]
    print("CHEATS %s scrub=%s: no output: %s" % (name, scrub, lines[-1][:300]))
    sys.exit(1)
cells = []
for c in d["cases"]:
    t = c.get("timing") or {}
    med = t.get("median_ns") or 0
    cells.append("%d:%s%s" % (c["case"], c["verdict"], " %.1fus" % (med / 1e3) if med else ""))
print("CHEATS %s scrub=%s: %s" % (name, scrub, " ".join(cells)))
PY
				grep -o 'local memory [^"\\]*' "$LOGS/cheats-$name-$scrub.json" | head -n 1
			done
		done
		;;
	recbench)
		# what recording costs per case on the device: the bundle's recorder on a batch
		# of 16 add cases, one child per case (each its own CUDA context) and eight cases
		# per child, and a CUDA context's start alone
		echo "== phase recbench ($(date -u +%H:%M:%S))"
		B=${KGB_BUNDLE:-$ROOT/.bundle}
		d=$SCRATCH/recbench
		mkdir -p "$d"
		python3 - "$ROOT/examples/python/aten/add.py" "$d" <<'PY'
import json, sys
mod, d = sys.argv[1:3]
reqs = []
for i in range(16):
    n = 4096 * (i + 1)
    t = {"shape": [n], "stride": [1], "dtype": "float32", "offset": 0}
    reqs.append({"module": mod, "function": "add_Tensor",
                 "args": [{"name": "self", "tensor": t}, {"name": "other", "tensor": t},
                          {"name": "alpha", "value": 2, "keyword": True}],
                 "outputs": [{"name": "out", "shape": [n], "stride": [1], "dtype": "float32"}],
                 "compile": {"backend": "cuda", "arch": 90, "warp_size": 32}})
for per in (1, 8):
    json.dump({"batch": reqs, "interpret": False, "device_index": 0, "timeout_s": 120, "parallel": 1,
               "cases_per_child": per}, open("%s/batch%d.json" % (d, per), "w"))
PY
		for par in 1 8; do
			r0=$(date +%s.%N)
			python3 -s "$B/pyrec/kgb_record.py" "$d/batch$par.json" "$d/out$par" >"$LOGS/recbench$par.log" 2>&1
			r1=$(date +%s.%N)
			python3 - "$d/out$par" "$par" "$r0" "$r1" <<'PY'
import glob, json, sys
out, par, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
r = [json.load(open(f)) for f in sorted(glob.glob(out + "/*/recording.json"))]
v = [x["verdict"] for x in r]
sec = {}
for x in r:
    for k, s in x.get("seconds", {}).items():
        sec[k] = sec.get(k, 0.0) + s
print("RECBENCH cases_per_child=%s cases=%d pass=%d wall=%.1f s per_case=%.2f s; mean per case: %s" % (
    par, len(v), v.count("pass"), t1 - t0, (t1 - t0) / max(1, len(v)),
    ", ".join("%s %.3f s" % (k, s / max(1, len(r))) for k, s in sorted(sec.items()))))
PY
		done
		python3 -c 'import time; t0 = time.time(); import torch; t1 = time.time(); torch.zeros(1, device="cuda"); torch.cuda.synchronize(); t2 = time.time(); print("RECBENCH import torch %.2f s, CUDA context %.2f s" % (t1 - t0, t2 - t1))'
		;;
	crosschip)
		# the GPU half of the cross-chip table (docs/tables.md, "Across machines"): the
		# Python modules and the native baseline of examples/python/cross-chip.json on
		# the CUDA worker, the store dumped for scripts/merge-store.sh on a CPU machine
		echo "== phase crosschip ($(date -u +%H:%M:%S))"
		OUT=$SCRATCH/crosschip scripts/gpu-campaign.sh --dump "$LOGS/crosschip.dump" \
			--tables cuda "examples/python/cross-chip.json@${KGB_PROOF_CROSSCHIP_S:-240}" \
			>"$LOGS/crosschip.log" 2>&1 || rc=1
		tail -n 40 "$LOGS/crosschip.log"
		for f in "$SCRATCH"/crosschip/*; do
			[ -f "$f" ] && cp "$f" "$LOGS/crosschip-$(basename "$f")"
		done
		;;
	*)
		echo "gpu-proof-candidates: unknown phase $ph (python, aa, cheats, recbench, crosschip)" >&2
		exit 2
		;;
	esac
	echo "== phase $ph: $(($(date +%s) - t0)) s"
	# one archive of every log so far (a device run returns a few files only, and a
	# call cut off by its time limit still returns the phases done)
	archive
done
rm -rf "$SCRATCH"
(cd "$LOGS" && xargs rm -f <.list; rm -f .list)
echo "logs: $LOGS/logs.tar.gz"
exit $rc
