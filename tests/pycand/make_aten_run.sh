#!/bin/sh
# Lay out the module set of examples/python/aten/ (one KernelGenBench-format module per
# ATen operator) as an LLM-track run under OUTDIR/aten_llm_run
# (docs/kernelgenbench-layout.md), for `kgb import kernelgenbench`:
#   round_0/aten::<op>.py            every module, as the runner names them
#   round_0/generation_summary.json  one entry per operator, success, code length
#   pass_at_k_results.json           every operator passed in round 0
#   args.json                        model_name "aten-set", one round
# usage: make_aten_run.sh OUTDIR [MODULE_DIR]
set -eu
out=$1
src=${2:-$(cd "$(dirname "$0")/../../examples/python/aten" && pwd)}
r=$out/aten_llm_run
rm -rf "$r"
mkdir -p "$r/round_0"
ops=""
for f in "$src"/*.py; do
	op=$(basename "$f" .py)
	cp "$f" "$r/round_0/aten::$op.py"
	ops="$ops $op"
done
[ -n "$ops" ] || { echo "make_aten_run.sh: no modules in $src" >&2; exit 1; }
n=$(echo $ops | wc -w)
{
	printf '{"round": 0, "timestamp": "2026-01-01T12:00:00",\n'
	printf ' "statistics": {"total_apis": %d, "successful": %d, "failed": 0, "success_rate": 1.0},\n "results": [' "$n" "$n"
	sep=""
	for op in $ops; do
		printf '%s\n  {"operator": "aten::%s", "test_file_name": "aten::%s.py", "success": true, "error": null, "code_length": %d}' \
			"$sep" "$op" "$op" "$(wc -c <"$r/round_0/aten::$op.py")"
		sep=","
	done
	printf '],\n "failed_operators": []}\n'
} >"$r/round_0/generation_summary.json"
{
	printf '{"total_operators": %d, "total_passed": %d, "final_pass_rate": 1.0,\n "passed_operators": [' "$n" "$n"
	sep=""
	for op in $ops; do printf '%s"aten::%s"' "$sep" "$op"; sep=", "; done
	printf '],\n "operator_details": {'
	sep=""
	for op in $ops; do
		printf '%s\n  "aten::%s": {"passed": true, "namespace": "aten", "kernel_name": "%s", "first_pass_round": 0, "total_attempts": 1}' \
			"$sep" "$op" "$op"
		sep=","
	done
	printf '}}\n'
} >"$r/pass_at_k_results.json"
printf '{"model_name": "aten-set", "max_rounds": 1, "dataset": "KernelGenBench", "test_type": "triton"}\n' >"$r/args.json"
