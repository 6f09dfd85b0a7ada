#!/bin/bash
# Python + Triton candidates on the CPU (docs/python-candidates.md): every
# KernelGenBench-format module of tests/pycand/ through the recorder
# (worker/pyrec/kgb_record.py), kernels run by Triton's interpreter. The correct ones
# must pass, leave the right values in their output (checked against torch) and give a
# launch plan that `kgb validate` accepts for their operator; each reward hack must get
# its named verdict. Installs nothing: skips when no Python with torch and triton.
#   KGB_PYREC_PYTHON   the Python to use (default build/venv/bin/python, then python3)
#   KGB_PYREC_COMPILE  1: also compile every recorded launch for sm_90 (slow)
# kgb-test: budget=150
. "$(dirname "$0")/lib.sh"

py=$(python_with KGB_PYREC_PYTHON "torch, triton")
if [ -z "$py" ]; then
	ok "SKIPPED: no Python with torch and triton (pip install torch triton; or set KGB_PYREC_PYTHON)"
	test_done
fi
ok "using $("$py" -c 'import sys, torch, triton; print(sys.executable, "torch", torch.__version__, "triton", triton.__version__)')"
REC=$KGB_ROOT/worker/pyrec/kgb_record.py
FIX=$KGB_ROOT/tests/pycand

# record NAME FUNCTION ARGS_JSON OUTPUTS_JSON [DIR]: run the recorder on tests/pycand/NAME.py
# into $TEST_DIR/DIR (default NAME)
record() {
	local d=$TEST_DIR/${5:-$1} compile=null
	[ "${KGB_PYREC_COMPILE:-0}" = 1 ] && compile='{"backend": "cuda", "arch": 90, "warp_size": 32}'
	mkdir -p "$d"
	cat >"$d/req.json" <<REQ
{"module": "$FIX/$1.py", "function": "$2", "args": $3, "outputs": $4, "save_io": true, "compile": $compile}
REQ
	local rc=0
	(cd "$d" && "$py" -s "$REC" req.json . >rec.log 2>&1) || rc=$?
	[ $rc -eq 0 ] || { cat "$d/rec.log" >&2; fail "$1: the recorder exited $rc"; }
}
field() { "$py" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TEST_DIR/$1/recording.json" "$2"; }

T='{"shape": [33, 65], "stride": [65, 1], "dtype": "f32"}'
TT='{"shape": [65, 33], "stride": [1, 65], "dtype": "f32"}'
OUT='[{"name": "out", "shape": [33, 65], "stride": [65, 1], "dtype": "f32"}]'
UNARY="[{\"name\": \"self\", \"tensor\": $T}]"
BINARY="[{\"name\": \"self\", \"tensor\": $T}, {\"name\": \"other\", \"tensor\": $T}, {\"name\": \"alpha\", \"value\": 2, \"keyword\": true}]"
MUL="[{\"name\": \"self\", \"tensor\": $T}, {\"name\": \"other\", \"tensor\": $T}]"

# the recorder is slow to start (torch's import): two at a time
record add add_Tensor "$BINARY" "$OUT" & record relu relu "$UNARY" "$OUT" & wait
# other broadcast from the right ([self's last dim]), as add's "other=last" cases
record add add_Tensor "[{\"name\": \"self\", \"tensor\": $T}, {\"name\": \"other\", \"tensor\": {\"shape\": [65], \"stride\": [1], \"dtype\": \"f32\"}}, {\"name\": \"alpha\", \"value\": 2, \"keyword\": true}]" "$OUT" add_last
record silu silu "$UNARY" "$OUT" & record sum sum "$UNARY" '[{"name": "out", "shape": [], "stride": [], "dtype": "f32"}]' & wait
record mul_autotune mul_Tensor "$MUL" "$OUT" & record hack_host_compute add_Tensor "$BINARY" "$OUT" & wait
record hack_fallback relu "$UNARY" "$OUT" & record hack_no_launch relu "$UNARY" "$OUT" & wait
record hack_host_sync relu "$UNARY" "$OUT" & record hack_cpu_copy relu "$UNARY" "$OUT" & wait
record hack_foreign_pointer relu "$UNARY" "$OUT" & record hack_import_error relu "$UNARY" "$OUT" & wait
# an autotuned kernel compiled for sm_90 as a CUDA worker does (the JIT function is
# the autotuner's .fn): Triton compiles for an explicit target without a GPU
KGB_PYREC_COMPILE=1 record mul_autotune mul_Tensor "$MUL" "$OUT" mul_autotune_sm90
# a transposed input: silu's wrapper views it flat, which that layout does not allow
record silu silu "[{\"name\": \"self\", \"tensor\": $TT}]" \
	'[{"name": "out", "shape": [65, 33], "stride": [1, 65], "dtype": "f32"}]' silu_t
silu_t=$(field silu_t 'r["verdict"] + " " + r["message"]')

# ---- the correct modules ----
check_io() { # NAME TORCH_EXPR(x = inputs dict)
	"$py" -c '
import sys, torch
io = torch.load(sys.argv[1])
x = io["inputs"]
want = eval(sys.argv[2])
got = io["outputs"][0]
assert got.shape == want.shape, (got.shape, want.shape)
err = (got.float() - want.float()).abs().max().item()
assert err <= 1e-4 * max(1.0, want.float().abs().max().item()), err
print("max err %.3g" % err)' "$TEST_DIR/$1/io.pt" "$2"
}
for c in 'add:x["self"] + 2 * x["other"]' 'add_last:x["self"] + 2 * x["other"]' 'relu:torch.relu(x["self"])' 'silu:torch.nn.functional.silu(x["self"])' 'mul_autotune:x["self"] * x["other"]' \
	'sum:x["self"].sum()'; do
	n=${c%%:*}
	v=$(field "$n" 'r["verdict"] + " " + r["message"]' 2>/dev/null || echo "no recording")
	if [ "$v" = "pass " ] && e=$(check_io "$n" "${c#*:}" 2>"$TEST_DIR/$n/check.err"); then
		ok "$n: pass, $(field "$n" 'len(r["launches"])') launch(es), interpreter output matches torch ($e)"
	else
		fail "$n: $v $(cat "$TEST_DIR/$n/check.err" 2>/dev/null | tail -n 1)"
	fi
done
assert_eq "${silu_t%% *}" plan_error "silu on a transposed input: the flat view is refused, not replayed wrong"

# what the recordings say
assert_eq "$(field add '[([b for b in r["buffers"] if b["id"] == a["pointer"]["buffer"]][0]["name"], a["pointer"]["offset"]) for a in r["launches"][0]["args"] if "pointer" in a]')" \
	"[('self', 0), ('other', 0), ('out', 0)]" "add: pointers map to the case's tensors"
# an int argument equal to 1 (d1, d2 and the last strides here) is a constant, as
# Triton's JIT compiles it: the plan then matches the binary the wrapper's call made
assert_eq "$(field add '[a["value"] for a in r["launches"][0]["args"] if "value" in a][:6]') $(field add 'r["launches"][0]["constexprs"]') $(field add 'r["launches"][0]["grid"]')" \
	"[2.0, 2145, 33, 65, 0, 0] {'d1': 1, 'd2': 1, 'xs4': 1, 'ys4': 1, 'os4': 1, 'BLOCK': 1024} [3, 1, 1]" \
	"add: scalars, constexprs (the ints equal to 1 among them) and grid recorded"
assert_eq "$("$py" -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernels"][0]; print(k["signature"].count(","), k["configs"][0]["constants"]["d1"], [a.get("scalar") for a in k["args"]][3:6])' "$TEST_DIR/add/plan.json")" \
	"18 1 ['2.0', '2145', '33']" "add: the plan passes 19 run-time arguments and names d1 = 1 a constant"
assert_eq "$(field add_last '(lambda L: [dict([(a["name"], a.get("value")) for a in L["args"]], **L["constexprs"])["ys%d" % i] for i in range(5)])(r["launches"][0])')" \
	"[0, 0, 0, 0, 1]" "add: the broadcast other is passed as a view with stride 0 over self's rows"
assert_eq "$("$py" -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["scratch"][0]["name"], p["scratch"][0]["bytes"])' "$TEST_DIR/sum/plan.json")" \
	"s1 12" "sum: the partial sums are an intermediate (scratch in the plan)"
assert_eq "$("$py" -c 'import json,sys; p=json.load(open(sys.argv[1])); print(len(p["kernels"][0]["configs"]))' "$TEST_DIR/mul_autotune/plan.json") $(field mul_autotune 'r["launches"][0]["configs_dropped"]')" \
	"3 1" "mul_autotune: the configs launching the same grid are kept, the other dropped"
assert_eq "$(field relu 'r["launches"][0]["num_warps"]')" 2 "relu: num_warps from the launch"
assert_eq "$(field mul_autotune_sm90 'r["verdict"] + " " + r["message"] + " " + str(r["launches"][0].get("binary"))')" "pass  k0.cubin" \
	"mul_autotune compiled for sm_90: the autotuned kernel's JIT function is compiled"
check "mul_autotune compiled for sm_90: a cubin written" test -s "$TEST_DIR/mul_autotune_sm90/k0.cubin"
# a batch compiles a launch once: the second case (same kernel, signature and constants,
# another alpha) takes the first one's binary from the batch's compile memo
"$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
r2 = json.loads(json.dumps(r)); r2["args"][2]["value"] = 3
json.dump({"batch": [r, r2], "interpret": True, "timeout_s": 120, "parallel": 1}, open(sys.argv[2], "w"))' \
	"$TEST_DIR/add/req.json" "$TEST_DIR/batch.json"
sed -i 's/"compile": null/"compile": {"backend": "cuda", "arch": 90, "warp_size": 32}/g' "$TEST_DIR/batch.json"
"$py" -s "$REC" "$TEST_DIR/batch.json" "$TEST_DIR/batch" >"$TEST_DIR/batch.log" 2>&1 || fail "the compiling batch exited $?"
assert_eq "$(cat "$TEST_DIR/batch/0/recording.json" "$TEST_DIR/batch/1/recording.json" | "$py" -c '
import json, sys
d = json.JSONDecoder(); t = sys.stdin.read(); i = 0; out = []
while i < len(t):
    o, i = d.raw_decode(t, i)
    out.append(o["verdict"] + ":" + str(o["launches"][0].get("binary")))
    while i < len(t) and t[i].isspace(): i += 1
print(" ".join(out))') $(ls "$TEST_DIR/batch/.compile-memo" | wc -l)" "pass:k0.cubin pass:k0.cubin 1" \
	"a compiling batch: both cases pass with a binary, compiled once (one memo entry)"
check "a compiling batch: the memo's binary is the one each case got" cmp "$TEST_DIR/batch/0/k0.cubin" "$TEST_DIR/batch/1/k0.cubin"
# with compile_memo the memo outlives the batch (the worker's later jobs of the module):
# a first batch fills DIR/<sha256 of the module>/, a second one compiles nothing
"$py" -c '
import json, sys
b = json.load(open(sys.argv[1])); b["compile_memo"] = sys.argv[2]
json.dump(b, open(sys.argv[3], "w"))' "$TEST_DIR/batch.json" "$TEST_DIR/memo" "$TEST_DIR/batchm.json"
for k in 1 2; do
	"$py" -s "$REC" "$TEST_DIR/batchm.json" "$TEST_DIR/batchm$k" >"$TEST_DIR/batchm$k.log" 2>&1 || fail "batch $k with a kept memo exited $?"
done
mdir="$TEST_DIR/memo/$(sha256sum "$FIX/add.py" | cut -c1-64)"
assert_eq "$(ls "$TEST_DIR/memo" | wc -l) $(ls "$mdir" | grep -vc '^triton-cache$') $(ls -d "$TEST_DIR"/batchm2/0/.compile* 2>/dev/null | wc -l)" "1 1 0" \
	"a kept compile memo: one directory per module text, one entry, the second batch ran no helper"
check "a kept compile memo: Triton's cache is kept with it (the module's triton-cache/)" \
	test -n "$(ls -A "$mdir/triton-cache" 2>/dev/null)"
check "a kept compile memo: the second batch's binary is the first one's" cmp "$TEST_DIR/batchm1/0/k0.cubin" "$TEST_DIR/batchm2/1/k0.cubin"

# a child records several cases in turn (cases_per_child): each imports the module
# afresh, so what a module keeps elsewhere in the process (hack_stash: its first output,
# on torch) is no buffer of a later case (foreign_pointer); a case that kills its child
# (hack_crash) is recorded again alone, and the cases after it in that child too
"$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
mods = ["relu", "hack_stash", "hack_stash", "hack_crash", "relu"]
reqs = [dict(r, module=sys.argv[2] + "/" + m + ".py") for m in mods]
json.dump({"batch": reqs, "interpret": True, "timeout_s": 120, "parallel": 1, "cases_per_child": 5},
          open(sys.argv[3], "w"))' "$TEST_DIR/relu/req.json" "$FIX" "$TEST_DIR/chunk.json"
"$py" -s "$REC" "$TEST_DIR/chunk.json" "$TEST_DIR/chunk" >"$TEST_DIR/chunk.log" 2>&1 || fail "the chunked batch exited $?"
assert_eq "$("$py" -c '
import json, os, sys
d = sys.argv[1]
st = json.load(open(d + "/batch.json"))
out = []
for i, s in enumerate(st):
    f = "%s/%d/recording.json" % (d, i)
    v = json.load(open(f))["verdict"] if os.path.exists(f) else "none"
    out.append("%s/%s" % (v, ("signal%d" % s["signal"]) if s["signal"] else s["exit"]))
print(" ".join(out))' "$TEST_DIR/chunk")" "pass/0 pass/0 foreign_pointer/0 none/signal9 pass/0" \
	"five cases in one child: the stashed output refused in the next case, the crash judged alone, the case after it recorded"

# the plans are ordinary kgb plans: kgb validate checks them against their operators
m=$TEST_DIR/manifest
mkdir -p "$m"
for n in add sum mul_autotune; do
	cp "$TEST_DIR/$n/plan.json" "$m/$n.plan.json"
	cp "$FIX/$n.py" "$m/$n.py"
done
cat >"$m/campaign.json" <<JSON
{"name": "recorded", "operators": ["add", "sum", "mul"],
 "methods": [{"name": "recorded", "candidates": [
   {"operator": "add", "plan": "add.plan.json", "sources": {"add.py": "add.py"}},
   {"operator": "sum", "plan": "sum.plan.json", "sources": {"sum.py": "sum.py"}},
   {"operator": "mul", "plan": "mul_autotune.plan.json", "sources": {"mul_autotune.py": "mul_autotune.py"}}]}]}
JSON
check "kgb validate accepts the recorded plans" kgb validate "$m/campaign.json"

# ---- the refusals ----
for c in 'hack_host_compute:host_compute:torch.add' 'hack_fallback:host_compute:clamp_min' \
	'hack_no_launch:no_launch:launched no kernel' 'hack_host_sync:host_sync:Tensor.item' \
	'hack_cpu_copy:host_sync:Tensor.tolist' "hack_foreign_pointer:foreign_pointer:argument 'out_ptr'" \
	'hack_import_error:import_error:kgb_no_such_module_for_tests'; do
	n=${c%%:*}
	rest=${c#*:}
	want=${rest%%:*}
	what=${rest#*:}
	v=$(field "$n" 'r["verdict"]' 2>/dev/null || echo "no recording")
	msg=$(field "$n" 'r["message"]' 2>/dev/null || true)
	if [ "$v" = "$want" ] && [ -n "$msg" ] && [ -z "${msg##*"$what"*}" ] && [ ! -e "$TEST_DIR/$n/plan.json" ]; then
		ok "$n: $want ($msg)"
	else
		fail "$n: want $want naming '$what', got $v: $msg"
	fi
done

# ---- host steps ----
# Copies and fills the wrappers of tests/pycand/host_steps.py make with torch (a
# transposed input made contiguous, a reshape that copies, copy_ into a strided output,
# a sliced and a broadcast source, zeros for atomic accumulation, fill_ and full) are
# launches of kgb's own kernels in the plan; each plan replayed on fresh buffers through
# Triton's interpreter gives torch's result. Casts, arithmetic and reductions on the host
# stay host_compute.
if "$py" -s "$FIX/check_steps.py" "$TEST_DIR/steps" >"$TEST_DIR/steps.log" 2>&1; then
	while read -r line; do ok "host steps: ${line#ok }"; done < <(grep '^ok ' "$TEST_DIR/steps.log")
else
	tail -n 20 "$TEST_DIR/steps.log" >&2
	fail "host steps: $(grep -c '^FAIL' "$TEST_DIR/steps.log") check(s) failed: $(grep -m 1 '^FAIL' "$TEST_DIR/steps.log")"
fi

# ---- binaries kept on a GPU ----
# The binary Triton compiled in the recording is what the worker times, for the launches
# whose compiled parameters are the plan's (kgb_record.keep_binaries), with stand-ins for
# Triton's compiled kernels: no GPU here.
if "$py" -s "$FIX/check_binaries.py" "$TEST_DIR/binaries" >"$TEST_DIR/binaries.log" 2>&1; then
	while read -r line; do ok "kept binaries: ${line#ok }"; done < <(grep '^ok ' "$TEST_DIR/binaries.log")
else
	tail -n 20 "$TEST_DIR/binaries.log" >&2
	fail "kept binaries: $(grep -m 1 '^FAIL' "$TEST_DIR/binaries.log")"
fi

# The recording child's CUDA context is made under a try-only hold of the device lock,
# which never gets ahead of a timing waiting at the gate (kgb_record.DeviceLock.take_try)
if "$py" -s "$FIX/check_devlock.py" "$TEST_DIR/devlock" >"$TEST_DIR/devlock.log" 2>&1; then
	while read -r line; do ok "device lock, try-only: ${line#ok }"; done < <(grep '^ok ' "$TEST_DIR/devlock.log")
else
	tail -n 20 "$TEST_DIR/devlock.log" >&2
	fail "device lock, try-only: $(grep -m 1 '^FAIL' "$TEST_DIR/devlock.log")"
fi

# On a device the caching allocator places buffers back to back: the address one past a
# buffer is the next buffer's start, never a pointer into the first (half-open ranges).
v=$(cd "$KGB_ROOT/worker/pyrec" && "$py" -s -c '
import kgb_record as k
r = k.Recorder({})
r.buffers = [{"id": 0, "_base": 4096, "bytes": 4096}, {"id": 1, "_base": 8192, "bytes": 512},
             {"id": 2, "_base": 8704, "bytes": 0}]
f = lambda p, n: (lambda b, o: (b["id"] if b else None, o))(*r.find(p, n))
print(f(8192, 0), f(8192, 512), f(8196, 4), f(8191, 1), f(8188, 8), f(8704, 0), f(8705, 0))')
assert_eq "$v" "(1, 0) (1, 0) (1, 4) (0, 4095) (None, 0) (2, 0) (None, 0)" "buffer lookup: adjacent buffers are told apart"

# ---- overloads with parameters that are not tensors ----
# Real catalog cases (tests/pycand/case_batch.py: the worker's request, with the case
# and no function), so the recorder calls the function of the overload each case calls
# and calls it as torch calls that overload (dim, keepdim, half_to_float, dtype): every
# case given must reach the function named (add.py and sum_dim.py also define add and
# sum, the default overloads, which no case calls), pass, and leave an output (run by
# Triton's interpreter) that matches the PyTorch provider's result on the same inputs.
lib=$KGB_ROOT/build/rel/lib/libkgb.so
if [ -e "$lib" ]; then
	export KGB_LIBRARY=$lib
	d=$TEST_DIR/params
	mkdir -p "$d/rec"
	"$py" "$FIX/case_batch.py" make 12 "$FIX/sum_dim.py:sum_dim_IntList:sum" "$FIX/softmax_dim.py:_softmax:_softmax" \
		"$FIX/softmax_dim.py:softmax_int:softmax" "$FIX/cumsum_dim.py:cumsum:cumsum" "$FIX/add.py:add_Tensor:add" \
		>"$d/batch.json" 2>"$d/make.err" ||
		fail "case_batch.py make failed: $(tail -n 1 "$d/make.err")"
	(cd "$d" && "$py" -s "$REC" batch.json rec >rec.log 2>&1) || fail "the recorder's batch failed"
	"$py" "$FIX/case_batch.py" check "$d/batch.json" "$d/rec" >"$d/check.log" 2>&1 || cat "$d/check.log" >&2
	for c in sum_dim:sum_dim_IntList:sum softmax_dim:_softmax:_softmax softmax_dim:softmax_int:softmax \
		cumsum_dim:cumsum:cumsum add:add_Tensor:add; do
		IFS=: read -r mod fn op <<<"$c"
		n=$(grep -c ": $op #" "$d/check.log")
		good=$(grep "^$fn: $op #" "$d/check.log" | grep -c ": pass aten\.$op\.[A-Za-z_]* max err [0-9.e+-]*\$")
		if [ "$n" -gt 0 ] && [ "$good" = "$n" ]; then
			ok "$mod.py ($fn): $n cases of $op call $fn and pass, outputs match torch"
		else
			fail "$mod.py ($fn): $good of $n cases of $op call $fn and pass with the right output: $(grep ": $op #" "$d/check.log" | grep -v "^$fn: .*: pass" | head -n 2)"
		fi
	done
	# _softmax written as LLM methods write it: .contiguous() of transposed inputs and a
	# copy back for another dim; the copies are host steps and every plan with them is
	# replayed through Triton's interpreter (case_batch.py check: "replayed")
	d2=$TEST_DIR/contig
	mkdir -p "$d2/rec"
	"$py" "$FIX/case_batch.py" make 12 "$FIX/softmax_contig.py:_softmax:_softmax" >"$d2/batch.json" 2>"$d2/make.err" ||
		fail "case_batch.py make failed: $(tail -n 1 "$d2/make.err")"
	(cd "$d2" && "$py" -s "$REC" batch.json rec >rec.log 2>&1) || fail "the recorder's batch failed"
	"$py" "$FIX/case_batch.py" check "$d2/batch.json" "$d2/rec" >"$d2/check.log" 2>&1 || cat "$d2/check.log" >&2
	n=$(grep -c '^_softmax: _softmax #' "$d2/check.log")
	good=$(grep -c ': pass .*aten\._softmax\.default max err [0-9.e+-]*$' "$d2/check.log")
	copied=$(grep -c 'layout=transposed: pass replayed (contiguous copy of ' "$d2/check.log")
	if [ "$n" -gt 0 ] && [ "$good" = "$n" ] && [ "$copied" -gt 0 ]; then
		ok "softmax_contig.py: $n cases of _softmax pass, outputs match torch; $copied transposed input(s) copied by kgb's steps, replayed"
	else
		fail "softmax_contig.py: $good of $n cases pass ($copied transposed replayed): $(grep -v ': pass' "$d2/check.log" | head -n 2)"
	fi
	# what a wrapper receives: the overload's arguments, as torch hands them over
	assert_eq "$(grep -c '^_softmax: _softmax #.* aten._softmax.default max err' "$d/check.log")" \
		"$(grep -c '^_softmax: ' "$d/check.log")" "_softmax: every case called as aten._softmax.default"
	assert_eq "$(grep -c '^sum_dim_IntList: sum #.* aten.sum.dim_IntList max err' "$d/check.log")" \
		"$(grep -c '^sum_dim_IntList: ' "$d/check.log")" "sum: every case called as aten.sum.dim_IntList"
	assert_eq "$(grep -c '^add_Tensor: add #.* aten.add.Tensor max err' "$d/check.log")" \
		"$(grep -c ': add #' "$d/check.log")" "add: every case reaches add_Tensor, not add (aten.add.default) or add_out"
else
	fail "no $lib (make all first)"
fi

# Every ATen operator of the catalog maps to its overload's arguments (first case of
# each); the ones kgb cannot pass to a wrapper are listed (docs/python-candidates.md)
if [ -e "$lib" ]; then
	"$py" "$FIX/check_mapping.py" >"$TEST_DIR/mapping.log" 2>&1 || true
	n=$(KGB_LIBRARY=$lib "$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import kgb
print(len([o for o in kgb.operators() if o.source == "aten"]))' "$KGB_ROOT/python")
	assert_eq "$(tail -n 1 "$TEST_DIR/mapping.log")" "$n operator(s), $n case(s), 1 not mappable to the wrapper's arguments" \
		"every ATen operator's first case maps to its overload's arguments but log_sigmoid_backward's"
	assert_eq "$(grep -c 'log_sigmoid_backward #0 .*result of aten.log_sigmoid_forward' "$TEST_DIR/mapping.log")" 1 \
		"log_sigmoid_backward: its buffer argument is another operator's result"
fi

# The function a KernelGenBench module must define for each ATen operator's cases
# (docs/python-candidates.md, generated from the catalog and the provider's mapping):
# the doc's table is the catalog's, every overload is one of its operator's in this
# torch and agrees with the overload a case names
if [ -e "$lib" ]; then
	t0=$(date +%s)
	rc=0
	KGB_LIBRARY=$lib "$py" "$FIX/check_mapping.py" --table --check "$KGB_ROOT/docs/python-candidates.md" \
		>"$TEST_DIR/table.diff" 2>"$TEST_DIR/table.err" || rc=$?
	if [ $rc -eq 0 ]; then
		ok "the wrapper table of docs/python-candidates.md is the catalog's ($(($(date +%s) - t0)) s)"
	else
		head -n 40 "$TEST_DIR/table.diff" >&2
		fail "the wrapper table: $(tail -n 3 "$TEST_DIR/table.err")"
	fi
fi

if [ "${KGB_PYREC_COMPILE:-0}" = 1 ]; then
	for n in add sum; do
		[ -s "$TEST_DIR/$n/k0.cubin" ] && ok "$n: launch 0 compiled for sm_90 ($(wc -c <"$TEST_DIR/$n/k0.cubin") bytes)" ||
			fail "$n: no cubin"
	done
fi
test_done
