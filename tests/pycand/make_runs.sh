#!/bin/sh
# Lay out two KernelGenBench run directories under OUTDIR from the modules of
# tests/pycand/ (docs/kernelgenbench-layout.md), for `kgb import kernelgenbench`:
#   OUTDIR/agent_run  the agent track: kernels/<ns>__<op>.py, workspaces/<name>/ with a
#                     Claude Code (cc_output.jsonl) or OpenCode (oc_output.json) token
#                     log, progress.json, config.yaml. Every reward hack of tests/pycand/
#                     under an operator of kgb's catalog (the wrapper renamed to it), and
#                     the correct silu; one module of an operator kgb does not know.
#   OUTDIR/param_run  the agent track of the correct modules whose overloads take
#                     parameters: the example set's sum, cumsum_dim, softmax_dim (as softmax); and
#                     wrong_silu, whose kernel is off by one.
#   OUTDIR/llm_run    the LLM track: round_<k>/<ns>::<op>.py, each round's
#                     generation_summary.json, pass_at_k_results.json, args.json: add
#                     failed in round 0 and passed in round 1, silu passed in round 0.
# usage: make_runs.sh OUTDIR
set -eu
out=$1
fix=$(cd "$(dirname "$0")" && pwd)
a=$out/agent_run
rm -rf "$a" "$out/llm_run" "$out/param_run"
mkdir -p "$a/kernels" "$a/logs"

# module OP FUNCTION SOURCE FROM [PARAMS [DIR]]: tests/pycand/SOURCE.py with def FROM
# renamed to FUNCTION (the function KernelGenBench names for the overload OP's cases
# call: docs/python-candidates.md, "The wrapper a case calls"), its parameters to PARAMS
# (the overload's, as torch passes them to the wrapper), into DIR/kernels/aten__OP.py
# (default the agent run)
module() {
	sed "s/^def $4(.*):\$/def $2(${5:-self}):/" "$fix/$3.py" >"${6:-$a}/kernels/aten__$1.py"
}
module silu silu silu silu
module clone clone hack_fallback relu 'self, *, memory_format=None'
module cumsum cumsum hack_host_sync relu 'self, dim, *, dtype=None'
module softmax softmax_int hack_no_launch relu 'self, dim, dtype=None'
module sum sum_dim_IntList hack_foreign_pointer relu 'self, dim, keepdim=False, *, dtype=None'
module gt gt_Tensor hack_host_compute add_Tensor 'self, other, *, alpha=1'
printf '\n\ngt_Scalar = gt_Tensor   # the cases with a number for other call aten::gt.Scalar\n' >>"$a/kernels/aten__gt.py"
module index_select index_select hack_import_error relu 'self, dim, index'
module _local_scalar_dense _local_scalar_dense hack_cpu_copy relu
cp "$fix/relu.py" "$a/kernels/aten__not_in_kgb_catalog.py"

# OUTDIR/param_run: an agent track of correct modules whose overloads take parameters
# that are not tensors (dim, keepdim, dtype, half_to_float); sum is the example set's,
# whose kernel loops over a run-time bound (Triton's interpreter holds it as a NumPy
# array: the replay must convert it as the recorder does)
p=$out/param_run
rm -rf "$p"
mkdir -p "$p/kernels"
cp "$fix/../../examples/python/aten/sum.py" "$p/kernels/aten__sum.py"
cp "$fix/cumsum_dim.py" "$p/kernels/aten__cumsum.py"
cp "$fix/softmax_dim.py" "$p/kernels/aten__softmax.py"
cp "$fix/wrong_silu.py" "$p/kernels/aten__silu.py"
printf 'method: claude_code\ndataset: KernelGenBench-aten\nmodel: some-model\n' >"$p/config.yaml"

# token logs (cli/agentlog.h): Claude Code's for silu (a session that ended: its result
# event's usage, 300 + 60 + 3 + 1000) and clone (killed before its result: msg_1 streamed
# twice counted once, 100 + 20 + 3 + 1000, and msg_2, 200 + 40); OpenCode's for cumsum
# (its steps summed: 400 + 60 + 30 + 10, then 1500 + 450 + 40 + 10; reasoning, 10 and
# 50, apart)
mkdir -p "$a/workspaces/aten__silu" "$a/workspaces/aten__clone" "$a/workspaces/aten__cumsum"
cat >"$a/workspaces/aten__silu/cc_output.jsonl" <<'JSONL'
{"type": "system", "subtype": "init", "session_id": "s1"}
{"type": "assistant", "message": {"id": "msg_1", "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 1000}}}
not json: an agent's stray output line
{"type": "assistant", "message": {"id": "msg_2", "usage": {"input_tokens": 200, "output_tokens": 40}}}
{"type": "result", "subtype": "success", "usage": {"input_tokens": 300, "output_tokens": 60, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 1000}}
JSONL
cat >"$a/workspaces/aten__clone/cc_output.jsonl" <<'JSONL'
{"type": "system", "subtype": "init", "session_id": "s1"}
{"type": "assistant", "message": {"id": "msg_1", "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 1000}}}
{"type": "assistant", "message": {"id": "msg_1", "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 1000}}}
{"type": "assistant", "message": {"id": "msg_2", "usage": {"input_tokens": 200, "output_tokens": 40}}}
JSONL
cat >"$a/workspaces/aten__cumsum/oc_output.json" <<'JSONL'
{"type": "step_start", "part": {"id": "prt_1"}}
{"type": "step_finish", "part": {"id": "prt_2", "tokens": {"input": 400, "output": 60, "reasoning": 10, "cache": {"read": 30, "write": 10}}}}
{"type": "step_finish", "part": {"id": "prt_3", "tokens": {"input": 1500, "output": 450, "reasoning": 50, "cache": {"read": 40, "write": 10}}}}
JSONL

# progress.json: durations; softmax carries the method's own token count (which wins
# over a log), clone none (its log counts)
cat >"$a/progress.json" <<'JSON'
{"dataset": "KernelGenBench-aten", "start_time": "2026-01-01T12:00:00", "end_time": "2026-01-01T15:00:00",
 "summary": {"total": 9, "completed": 9, "running": 0, "failed": 0, "pending": 0},
 "operators": {
  "aten::silu": {"status": "completed", "attempt": 1, "duration_seconds": 412.5, "code_generated": true, "error": null},
  "aten::clone": {"status": "completed", "attempt": 1, "duration_seconds": 100, "code_generated": true, "error": null,
                  "token_usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation": 0, "cache_read": 0, "total": 0}},
  "aten::softmax": {"status": "completed", "attempt": 2, "duration_seconds": 77, "code_generated": true, "error": null,
                    "token_usage": {"input_tokens": 4000, "output_tokens": 321, "cache_creation": 0, "cache_read": 0, "total": 4321}},
  "aten::mm": {"status": "failed", "attempt": 3, "duration_seconds": 900, "code_generated": false, "error": "timeout"}},
 "token_usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation": 0, "cache_read": 0, "total": 0}}
JSON
printf 'method: claude_code\ndataset: KernelGenBench-aten\nmodel: some-model\n' >"$a/config.yaml"

l=$out/llm_run
mkdir -p "$l/round_0" "$l/round_1"
cp "$fix/hack_import_error.py" "$l/round_0/aten::add.py"
cp "$fix/silu.py" "$l/round_0/aten::silu.py"
cp "$fix/add.py" "$l/round_1/aten::add.py"
cat >"$l/round_0/generation_summary.json" <<'JSON'
{"round": 0, "timestamp": "2026-01-01T12:00:00",
 "statistics": {"total_apis": 2, "successful": 2, "failed": 0, "success_rate": 1.0},
 "results": [{"operator": "aten::add", "test_file_name": "aten::add.py", "success": true, "error": null, "code_length": 900, "tokens": 1000, "gen_seconds": 20},
             {"operator": "aten::silu", "test_file_name": "aten::silu.py", "success": true, "error": null, "code_length": 800, "tokens": 700, "gen_seconds": 15}],
 "failed_operators": []}
JSON
cat >"$l/round_1/generation_summary.json" <<'JSON'
{"round": 1, "timestamp": "2026-01-01T12:10:00",
 "statistics": {"total_apis": 1, "successful": 1, "failed": 0, "success_rate": 1.0},
 "results": [{"operator": "aten::add", "test_file_name": "aten::add.py", "success": true, "error": null, "code_length": 950, "tokens": 1500, "gen_seconds": 25.5}],
 "failed_operators": []}
JSON
cat >"$l/pass_at_k_results.json" <<'JSON'
{"total_operators": 2, "total_passed": 2, "final_pass_rate": 1.0,
 "passed_operators": ["aten::add", "aten::silu"],
 "operator_details": {
  "aten::add": {"passed": true, "namespace": "aten", "kernel_name": "add", "first_pass_round": 1, "total_attempts": 2},
  "aten::silu": {"passed": true, "namespace": "aten", "kernel_name": "silu", "first_pass_round": 0, "total_attempts": 1}}}
JSON
printf '{"model_name": "model-x", "max_rounds": 2, "dataset": "KernelGenBench", "test_type": "triton"}\n' >"$l/args.json"
