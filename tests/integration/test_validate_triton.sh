#!/bin/bash
# kgb validate compiles Triton plans for an explicit target (no GPU needed), so a
# signature that cannot compile is refused at validate time: a wrong type name, a
# wrong argument count, a num_warps that is not a power of two. The shipped Triton
# examples validate. Skips the compile checks when no Python with triton is found.
#   KGB_TRITON_TEST_PYTHON  the Python to use (default build/venv/bin/python, then python3)
. "$(dirname "$0")/lib.sh"

py=${KGB_TRITON_TEST_PYTHON:-}
if [ -z "$py" ]; then
	for p in "$KGB_ROOT/build/venv/bin/python" python3; do
		if "$p" -c 'import triton' 2>/dev/null; then py=$p; break; fi
	done
fi

d=$TEST_DIR/m
mkdir -p "$d"
cp "$KGB_ROOT/examples/cuda/triton/add.py" "$d/"
# manifest PLANFILE: a one-candidate manifest around a plan (the add example's, edited)
manifest() {
	cat >"$d/$1.json" <<JSON
{"name": "$1", "operators": ["add"], "platforms": "all", "cases": "smoke",
 "methods": [{"name": "m", "candidates": [{"operator": "add", "plan": "$1.plan.json"}]}]}
JSON
}
# plan NAME SED: the add example's plan with a sed expression applied
plan() {
	sed "$2" "$KGB_ROOT/examples/cuda/triton/add.plan.json" >"$d/$1.plan.json"
	manifest "$1"
}
plan good 's/x/x/'
plan badtype 's/"\*@self,\*@other,\*@out,fp32,i32,i32"/"*float32,*@other,*@out,fp32,i32,i32"/'
plan argcount 's/"\*@self,\*@other,\*@out,fp32,i32,i32"/"*@self,*@other,*@out,fp32,i32"/'
plan constname 's/"BLOCK": "1024"/"BLOK": "1024"/'
plan nosig '/"signature"/d'
check "the edits took (bad type)" grep -q 'float32' "$d/badtype.plan.json"
check "the edits took (constant name)" grep -q '"BLOK"' "$d/constname.plan.json"

# checks that need no Triton
out=$(kgb validate "$d/badtype.json" --no-triton) || fail "--no-triton: validate failed: $out"
check "--no-triton skips the compile" test "$(echo "$out" | grep -c '^ok: 1 candidates')" = 1
rc=0
kgb validate "$d/good.json" --triton-target sm90 >/dev/null 2>"$TEST_DIR/target.err" || rc=$?
assert_eq "$rc" 1 "a malformed --triton-target is refused"
check "the error names the value" grep -q "'sm90' is not cuda:ARCH" "$TEST_DIR/target.err"
out=$(kgb validate "$d/badtype.json" --triton-python /nonexistent/python3) ||
	fail "validate without Triton must still pass: $out"
check "without Triton the compile is skipped with a note" grep -q "note: 1 Triton kernel(s) not compiled" <<<"$out"

if [ -z "$py" ]; then
	ok "SKIPPED the compile checks: no Python with triton (scripts/deps.sh --torch build/venv, or set KGB_TRITON_TEST_PYTHON)"
	test_done
fi
export KGB_TRITON_PYTHON=$py
out=$(kgb validate "$d/good.json" 2>&1) || fail "the add example does not validate: $out"
check "the add example compiles for cuda:90 ($(echo "$out" | tail -n 1))" grep -q "triton: 1 kernel(s) compile for cuda:90" <<<"$out"
# must_refuse NAME PATTERN: validate fails (exit 1) and stderr matches PATTERN
must_refuse() {
	local rc=0
	kgb validate "$d/$1.json" >/dev/null 2>"$TEST_DIR/$1.err" || rc=$?
	if [ "$rc" = 1 ] && grep -q -- "$2" "$TEST_DIR/$1.err"; then
		ok "$1 refused: $(head -c 300 "$TEST_DIR/$1.err")"
	else
		fail "$1: exit $rc, want 1 with '$2': $(cat "$TEST_DIR/$1.err")"
	fi
}
must_refuse badtype "unknown type '\*float32'"
must_refuse argcount "5 types given, but the kernel has 6 run-time parameters"
must_refuse constname "constants.BLOK: the kernel has no such parameter"
must_refuse nosig "a Triton kernel needs a signature"
check "the refusal names the candidate, kernel and signature" \
	grep -q 'argcount.json: methods\[0\].candidates\[0\]: kernels\[0\] (add_kernel, configs\[0\]) does not compile for cuda:90 with signature "\*fp32,\*fp32,\*fp32,fp32,i32"' \
	"$TEST_DIR/argcount.err"

# every shipped Triton plan compiles (21 compiles, about a minute: make test-slow)
if [ "${KGB_SLOW_TESTS:-0}" = 1 ]; then
	out=$(kgb validate "$KGB_ROOT/examples/cuda/cuda.json" 2>&1) || fail "examples/cuda/cuda.json: $out"
	check "examples/cuda/cuda.json: its Triton kernels compile ($(echo "$out" | tail -n 1))" grep -q "^triton: " <<<"$out"
fi
test_done
