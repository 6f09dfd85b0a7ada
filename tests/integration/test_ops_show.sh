#!/bin/bash
# kgb ops OPERATOR shows the operator's tensors by name (the names a plan's arguments
# use), their roles and dtypes, and its scalars, in the table and in --json.
. "$(dirname "$0")/lib.sh"

kgb ops add >"$TEST_DIR/add.txt" || die "kgb ops add failed"
row() { awk -v n="$2" -v r="$3" '$1 == n && $2 == r {f = 1} END {exit !f}' "$TEST_DIR/$1.txt"; }
check "add: self is an input" row add self in
check "add: other is an input" row add other in
check "add: out is the output" row add out out
check "add: alpha is a scalar" row add alpha scalar
check "add: the dtypes are listed" grep -Eq '^self +in +.*f16.*f32' "$TEST_DIR/add.txt"
check "add: the plan symbols are explained" grep -q 'NAME.numel' "$TEST_DIR/add.txt"

# gt's other is a tensor in .Tensor cases and a scalar in .Scalar ones: both shown
kgb ops gt >"$TEST_DIR/gt.txt" || die "kgb ops gt failed"
check "gt: other as a tensor" row gt other in
check "gt: other as a scalar" row gt other scalar
check "gt: out is bool" grep -Eq '^out +out +bool' "$TEST_DIR/gt.txt"

kgb ops index_select --json >"$TEST_DIR/is.json" || die "kgb ops index_select --json failed"
assert_eq "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s:%s:%s" % (t["name"], t["role"], t["dtypes"]) for t in d["tensors"]))' "$TEST_DIR/is.json")" \
	"self:in:f16,bf16,f32 index:in:i64 out:out:f16,bf16,f32" "index_select --json: tensors with roles and dtypes"

# held-out cases: how many and which parameters they resize (never their sizes), or
# why there are none
check "add: its held-out cases resize shape, 2 per candidate by default" \
	grep -q 'held-out cases: 2 per candidate by default.*with shape$' "$TEST_DIR/add.txt"
check "add: no held-out size is listed" test_must_fail grep -q 'heldout=' "$TEST_DIR/add.txt"
kgb ops rms_norm >"$TEST_DIR/rms.txt" || die "kgb ops rms_norm failed"
check "rms_norm: none, and why" grep -q 'held-out cases: none: no parameter the generic rule resizes' "$TEST_DIR/rms.txt"
assert_eq "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["heldout"], d["heldout_cases"], d["no_heldout"])' "$TEST_DIR/is.json")" \
	"shape 2 None" "index_select --json: held-out parameters and count"

rc=0
kgb ops no_such_op >/dev/null 2>"$TEST_DIR/err.txt" || rc=$?
assert_eq "$rc" 1 "an unknown operator is a usage error"
check "the error names it" grep -q "unknown operator 'no_such_op'" "$TEST_DIR/err.txt"
test_done
