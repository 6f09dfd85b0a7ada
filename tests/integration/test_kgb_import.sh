#!/bin/bash
# `kgb import kernelgenbench DIR` on both layouts of a KernelGenBench run
# (docs/kernelgenbench-layout.md), laid out by tests/pycand/make_runs.sh from the
# modules of tests/pycand/: the manifest names one method, one python candidate per
# operator of kgb's catalog (the module of the LLM track's first passing round), tokens
# and generation seconds from progress.json, the agents' token logs or the round
# summaries; `kgb validate` accepts it; malformed run files are refused naming the file
# and the field. Needs neither torch nor a coordinator.
. "$(dirname "$0")/lib.sh"

sh "$KGB_ROOT/tests/pycand/make_runs.sh" "$TEST_DIR" || die "make_runs.sh failed"
cd "$TEST_DIR" || die "cd $TEST_DIR"

check "import the agent track" kgb import kernelgenbench agent_run -o agent.json
check "import the LLM track" kgb import kernelgenbench llm_run -o llm.json
check "kgb validate accepts the agent-track manifest" kgb validate agent.json
check "kgb validate accepts the LLM-track manifest" kgb validate llm.json

# field MANIFEST EXPR: a Python expression over m (the manifest) and c (operator -> candidate)
field() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
c = {x["operator"]: x for x in m["methods"][0]["candidates"]}
print(eval(sys.argv[2]))' "$1" "$2"
}
assert_eq "$(field agent.json 'm["name"], len(m["methods"]), m["methods"][0]["name"]')" \
	"('claude_code', 1, 'claude_code')" "agent: one method named after config.yaml's method"
assert_eq "$(field agent.json 'sorted(c)')" \
	"['_local_scalar_dense', 'clone', 'cumsum', 'gt', 'index_select', 'silu', 'softmax', 'sum']" \
	"agent: one candidate per module of a catalog operator (the unknown one skipped)"
assert_eq "$(field agent.json 'sorted({x["kind"] for x in c.values()}), c["clone"]["module"]')" \
	"(['python'], 'agent_run/kernels/aten__clone.py')" "agent: python candidates, modules relative to the manifest"
assert_eq "$(field agent.json '[(o, c[o].get("tokens"), c[o].get("gen_seconds")) for o in ("silu", "clone", "cumsum", "softmax", "sum")]')" \
	"[('silu', 1363.0, 412.5), ('clone', 1363.0, 100.0), ('cumsum', 2500.0, None), ('softmax', 4321.0, 77.0), ('sum', None, None)]" \
	"agent: tokens from the Claude Code and OpenCode logs or progress.json, seconds from progress.json"
assert_eq "$(field llm.json 'm["name"], sorted(c), c["add"]["module"], c["silu"]["module"]')" \
	"('llm-model-x', ['add', 'silu'], 'llm_run/round_1/aten::add.py', 'llm_run/round_0/aten::silu.py')" \
	"llm: method from args.json's model, each operator's module of its first passing round"
assert_eq "$(field llm.json '[(o, c[o]["tokens"], c[o]["gen_seconds"]) for o in ("add", "silu")]')" \
	"[('add', 2500.0, 45.5), ('silu', 700.0, 15.0)]" "llm: tokens and seconds summed over the rounds up to the kept one"

# --rounds: every round's module a candidate of its own, with that round's tokens and
# seconds; importing again gives the same manifest (a resubmission adds nothing to
# kgb tables: docs/tables.md)
check "import the LLM track with --rounds" kgb import kernelgenbench llm_run --rounds -o rounds.json
assert_eq "$(field rounds.json 'm["operators"], [(x["operator"], x["round"], x["tokens"], x["gen_seconds"], x["module"]) for x in m["methods"][0]["candidates"]]')" \
	"(['add', 'silu'], [('add', 0, 1000.0, 20.0, 'llm_run/round_0/aten::add.py'), ('add', 1, 1500.0, 25.5, 'llm_run/round_1/aten::add.py'), ('silu', 0, 700.0, 15.0, 'llm_run/round_0/aten::silu.py')])" \
	"llm --rounds: add in rounds 0 and 1, silu in round 0, each with its round's tokens and seconds"
# round 0's add is the planted import error (make_runs.sh), which validate now sees
test_must_fail kgb validate rounds.json >/dev/null 2>rounds.err
check "kgb validate refuses only round 0's add, naming its candidate" \
	grep -q "rounds.json: methods\[0\].candidates\[0\]: module aten::add.py" rounds.err
check "... and no other module" grep -q "1 of 3 Python module(s) refused" rounds.err
kgb import kernelgenbench llm_run --rounds -o rounds2.json 2>/dev/null || fail "second import failed"
check "importing the same run again gives the same manifest" cmp rounds.json rounds2.json

# without -o: the modules inline, and --method names the method
kgb import kernelgenbench llm_run --method 'my method' >inline.json 2>/dev/null || fail "import to stdout failed"
assert_eq "$(field inline.json 'm["name"], "def add_Tensor" in c["add"]["module"]["inline"]')" \
	"('my-method', True)" "stdout: modules inline, --method cleaned to a method name"
check "kgb validate accepts the inline manifest" kgb validate inline.json

# refused DESC WANT CMD...: CMD fails, and its error contains WANT
refused() {
	local desc=$1 want=$2 out rc=0
	shift 2
	out=$("$@" 2>&1 >/dev/null) || rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ -z "${out##*"$want"*}" ]; then
		ok "$desc: refused ($out)"
	else
		fail "$desc: exit $rc, want an error naming '$want', got: $out"
	fi
}

# malformed inputs name the file and the field
cp -r agent_run bad1
printf '{"operators": {"aten::silu": {"duration_seconds": "long"}}}' >bad1/progress.json
refused "a duration that is not a number" "bad1/progress.json: operators.aten::silu.duration_seconds: expected a number" \
	kgb import kernelgenbench bad1
cp -r agent_run bad2
printf '{"operators": [' >bad2/progress.json
refused "progress.json that is not JSON" "bad2/progress.json: not valid JSON" kgb import kernelgenbench bad2
cp -r llm_run bad3
printf '{"round": 0, "results": {}}' >"bad3/round_0/generation_summary.json"
refused "a round summary without a results list" "bad3/round_0/generation_summary.json: results: expected a list" \
	kgb import kernelgenbench bad3
mkdir -p empty
refused "a directory that is no run" "empty: neither kernels/ (agent track) nor round_<k>/<op>.py (LLM track)" \
	kgb import kernelgenbench empty
refused "an unknown format" "unknown format 'kernelbench'" kgb import kernelbench agent_run
refused "--rounds on an agent-track run" "agent-track" kgb import kernelgenbench agent_run --rounds -o x.json
test_done
