#!/bin/bash
# The GPU figures of docs/python-candidates.md and docs/timing.md in one device run,
# each phase through the documented bundle path (scripts/bundle.sh here first):
#
#   python  scripts/gpu-python-proof.sh over examples/python/aten: the module set and
#           the native baseline of the same operators, every case, timed
#   aa      scripts/aa-check.sh --backend cuda: the CUDA examples' baseline against
#           itself, two campaigns, each judged by the other's noise floor
#
#   scripts/gpu-proof-candidates.sh [PHASE ...]      (default: python aa)
#
# Each phase has a deadline (KGB_PROOF_PYTHON_NATIVE_S, KGB_PROOF_PYTHON_S,
# KGB_PROOF_AA_S) so the whole fits one 10-minute device call; KGB_PROOF_SMOKE=1 runs
# the smoke cases only. Logs go to $OUT when it
# is set (the device tool's folder), else to a fresh directory; the scratch stores stay
# in a temporary directory.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
LOGS=${OUT:-$(mktemp -d)}
mkdir -p "$LOGS"
SCRATCH=$(mktemp -d)
PHASES=${*:-python aa}
rc=0
for ph in $PHASES; do
	t0=$(date +%s)
	case $ph in
	python)
		echo "== phase python ($(date -u +%H:%M:%S))"
		OUT=$SCRATCH/python timeout $((${KGB_PROOF_PYTHON_NATIVE_S:-200} + ${KGB_PROOF_PYTHON_S:-260} + 90)) \
			scripts/gpu-python-proof.sh --native-s "${KGB_PROOF_PYTHON_NATIVE_S:-200}" \
			--python-s "${KGB_PROOF_PYTHON_S:-260}" --slots 14 ${KGB_PROOF_SMOKE:+--smoke} examples/python/aten \
			>"$LOGS/python-proof.log" 2>&1 || rc=1
		tail -n 80 "$LOGS/python-proof.log"
		for f in worker.log coordinator.log; do
			[ -f "$SCRATCH/python/$f" ] && tail -n 400 "$SCRATCH/python/$f" >"$LOGS/python-$f"
		done
		;;
	aa)
		echo "== phase aa ($(date -u +%H:%M:%S))"
		KGB_AA_DIR=$SCRATCH/aa KGB_AA_WAIT_S=${KGB_PROOF_AA_S:-150} \
			timeout $((${KGB_PROOF_AA_S:-150} + 60)) scripts/aa-check.sh --backend cuda \
			--set timing_budget_ms=50 >"$LOGS/aa-check.log" 2>&1 || rc=1
		tail -n 40 "$LOGS/aa-check.log"
		;;
	*)
		echo "gpu-proof-candidates: unknown phase $ph (python, aa)" >&2
		exit 2
		;;
	esac
	echo "== phase $ph: $(($(date +%s) - t0)) s"
done
rm -rf "$SCRATCH"
exit $rc
