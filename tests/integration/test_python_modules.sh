#!/bin/bash
# The KernelGenBench-format module set of examples/python/aten/ (one module per ATen
# operator, a wrapper per overload) against torch on real catalog cases, kernels run by
# Triton's interpreter (tests/pycand/check_modules.py): a few modules on a few cases
# each, the overload's out= wrapper too; a module whose kernel computes the wrong thing
# and one that lacks a wrapper a case calls must be reported. The set laid out as an
# LLM-track run (tests/pycand/make_aten_run.sh) imports with one python candidate per
# module and validates. Installs nothing: skips the module checks when no Python with
# torch and triton.
#   KGB_PYREC_PYTHON   the Python to use (default build/venv/bin/python, then python3)
. "$(dirname "$0")/lib.sh"

SET=$KGB_ROOT/examples/python/aten
CHECK=$KGB_ROOT/tests/pycand/check_modules.py
nmod=$(ls "$SET"/*.py | wc -l)

# the run layout and the importer: needs neither torch nor a coordinator
sh "$KGB_ROOT/tests/pycand/make_aten_run.sh" "$TEST_DIR" || die "make_aten_run.sh failed"
(cd "$TEST_DIR" && kgb import kernelgenbench aten_llm_run -o aten.json) >"$TEST_DIR/import.log" 2>&1 ||
	die "kgb import kernelgenbench failed: $(tail -n 2 "$TEST_DIR/import.log")"
assert_eq "$(tail -n 1 "$TEST_DIR/import.log")" "kgb import: method llm-aten-set: $nmod python candidate(s)" \
	"the LLM-track run of the set imports with one python candidate per module"
assert_eq "$(kgb validate "$TEST_DIR/aten.json" 2>&1 | head -n 1)" "ok: $nmod candidates, $nmod operators" \
	"kgb validate accepts the set's manifest"
assert_contains "$(kgb validate "$TEST_DIR/aten.json" 2>&1)" \
	"python: $nmod module(s) parse and define the function of every overload their cases call" \
	"kgb validate parses every module of the set"

# validate parses the modules (never imports them) and names what a case would miss:
# add's Tensor wrapper renamed, a syntax error in cos
cp -r "$TEST_DIR/aten_llm_run" "$TEST_DIR/bad_run"
addpy=$(find "$TEST_DIR/bad_run" -name 'aten::add.py')
cospy=$(find "$TEST_DIR/bad_run" -name 'aten::cos.py')
sed -i 's/^def add_Tensor(/def add_tensor(/' "$addpy"
printf 'import os\nos.system("touch %s/imported")\ndef broken(:\n' "$TEST_DIR" >>"$cospy"
(cd "$TEST_DIR" && kgb import kernelgenbench bad_run -o bad.json) >"$TEST_DIR/import_bad.log" 2>&1 ||
	die "kgb import of the broken run failed: $(tail -n 2 "$TEST_DIR/import_bad.log")"
rc=0
kgb validate "$TEST_DIR/bad.json" >"$TEST_DIR/validate_bad.log" 2>&1 || rc=$?
out=$(cat "$TEST_DIR/validate_bad.log")
assert_eq "$rc" 1 "kgb validate refuses a set with a broken module (usage error)"
assert_contains "$out" "module aten::add.py defines no add_Tensor (aten::add.Tensor); it defines add, add_Scalar" \
	"the missing wrapper is named with its overload and what the module defines instead"
assert_contains "$out" "module aten::cos.py: line 59, column 12: invalid syntax" \
	"the syntax error is named with its line and column"
assert_contains "$out" "kgb validate: 2 of $nmod Python module(s) refused" "every broken module is reported, not the first only"
[ ! -e "$TEST_DIR/imported" ] && ok "the module was parsed, never run" || fail "validate ran the module's code"

python_or_skip KGB_PYREC_PYTHON "torch, triton" \
	"the module checks: no Python with torch and triton (pip install torch triton; or set KGB_PYREC_PYTHON)"
use_libkgb

# modules: elementwise with broadcasting, scalar overloads and integers (add), a
# reduction over dim lists (sum), a row softmax of any dim (softmax), a tl.dot matmul
# (mm), an indexed copy (index_select); one of each parameter setting first
OPS=add,sum,softmax,mm,index_select
"$py" -W ignore "$CHECK" --most 3 --ops $OPS "$SET" >"$TEST_DIR/check.log" 2>&1 ||
	{ tail -n 20 "$TEST_DIR/check.log" >&2; fail "check_modules.py exited non-zero"; }
for op in ${OPS//,/ }; do
	line=$(grep "^MODULE $op: " "$TEST_DIR/check.log" || true)
	if [[ $line =~ ^MODULE\ $op:\ ([0-9]+)\ of\ ([0-9]+)\ case ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
		[ "${BASH_REMATCH[2]}" -gt 0 ]; then
		ok "$op.py: ${BASH_REMATCH[1]} cases pass, out= form included, outputs match torch"
	else
		fail "$op.py: ${line:-no MODULE line}"
	fi
done

# through kgb's recorder: sum's kernel loops over a run-time bound (range(0, N, BLOCK_N)),
# which Triton's interpreter under NumPy 2.4 cannot take without the recorder's
# conversion of its scalars; add_Tensor picks its result dtype with torch.result_type
# and broadcasts with torch.broadcast_tensors, which compute nothing on device data;
# the first cases are contiguous and need no host copy
d=$TEST_DIR/rec
mkdir -p "$d"
"$py" "$KGB_ROOT/tests/pycand/case_batch.py" make 1 "$SET/sum.py:sum_dim_IntList:sum" "$SET/add.py:add_Tensor:add" \
	>"$d/batch.json" 2>"$d/make.err" ||
	fail "case_batch.py make failed: $(tail -n 1 "$d/make.err")"
(cd "$d" && "$py" -s "$KGB_ROOT/worker/pyrec/kgb_record.py" batch.json out >rec.log 2>&1) || fail "the recorder's batch failed"
"$py" "$KGB_ROOT/tests/pycand/case_batch.py" check "$d/batch.json" "$d/out" >"$d/check.log" 2>&1 || true
check "the recorder records sum.py's loop over a run-time bound, output matching torch" \
	grep -q "^sum_dim_IntList: sum #0 .*: pass aten.sum.dim_IntList max err" "$d/check.log"
check "the recorder lets add_Tensor's dtype promotion and broadcast views through, output matching torch" \
	grep -q "^add_Tensor: add #0 .*: pass aten.add.Tensor max err" "$d/check.log"

# a module computing the wrong thing, and one without the out= wrapper its overload has
bad=$TEST_DIR/bad
mkdir -p "$bad/wrong" "$bad/missing"
sed 's/x.to(tl.float32) + alpha \* y.to(tl.float32)/x.to(tl.float32) - alpha * y.to(tl.float32)/' "$SET/add.py" \
	>"$bad/wrong/add.py"
cmp -s "$SET/add.py" "$bad/wrong/add.py" && die "the wrong add.py is not different"
sed '/^def sum_IntList_out/,/^    return out/d' "$SET/sum.py" >"$bad/missing/sum.py"
rc=0
"$py" -W ignore "$CHECK" --most 2 --ops add "$bad/wrong" >"$TEST_DIR/wrong.log" 2>&1 || rc=$?
assert_eq "$rc" 1 "a module computing self - alpha*other for add fails"
check "its failing case names the overload, the wrapper and the error" \
	grep -q "^add #[0-9]* .*: aten.add.Tensor via add_Tensor: max err " "$TEST_DIR/wrong.log"
rc=0
"$py" -W ignore "$CHECK" --most 2 --ops sum "$bad/missing" >"$TEST_DIR/missing.log" 2>&1 || rc=$?
assert_eq "$rc" 1 "a sum module without sum_IntList_out fails"
check "the missing wrapper is named" grep -q "aten.sum.IntList_out: no function sum_IntList_out" "$TEST_DIR/missing.log"
test_done
