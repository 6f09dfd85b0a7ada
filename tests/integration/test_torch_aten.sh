#!/bin/bash
# kgb's ATen definitions against PyTorch on the CPU (tests/integration/torch_aten_proof.py):
# every case of every ATen operator run through torch.ops.aten on kgb's inputs (from
# libkgb.so through the Python package in python/) and judged by kgb's validator; the
# failures must all be expected deviations (torch_aten_deviations.txt). Also runs the
# examples of docs/python.md. Installs nothing: skips when no Python with torch is found.
#   KGB_TORCH_PYTHON          the Python to use (default build/venv/bin/python, then python3)
#   KGB_TORCH_PROOF_MAX_ELEMS skip cases of more elements than this (default 131072;
#                             0 runs all 12,216 cases: over an hour on 2 busy cores)
#   KGB_TORCH_PROOF_OPS       a comma-separated subset of operators
. "$(dirname "$0")/lib.sh"

python_or_skip KGB_TORCH_PYTHON "torch, numpy" \
	"no Python with torch and numpy (.ci/run installs them into build/venv; or set KGB_TORCH_PYTHON)"
use_kgb_package
ok "using $("$py" -c 'import sys, torch; print(sys.executable, "torch", torch.__version__)')"

# the examples of docs/python.md, as written there
"$py" "$KGB_ROOT/tests/tools/doc_examples.py" "$KGB_ROOT/docs/python.md" >"$TEST_DIR/doc.log" 2>&1 &&
	ok "docs/python.md examples run: $(tail -n 1 "$TEST_DIR/doc.log")" ||
	{ cat "$TEST_DIR/doc.log" >&2; fail "docs/python.md examples"; }

# factory operators have no input to take the device from: the provider's device must
# reach them (on a GPU they were otherwise created and timed on the CPU); "meta" stands
# for a device other than the CPU here
got=$("$py" - <<'PY' 2>&1
import kgb
from kgb.providers import torch_aten
torch_aten.set_device("meta")
out = []
for op in ("arange", "full", "zeros", "empty_strided", "scalar_tensor"):
    c = kgb.Case(op, 0, 1)
    r = torch_aten.OPS[op](c, {})
    out.append("%s:%s" % (op, r["out"].device.type))
print(" ".join(out))
PY
)
assert_eq "$got" "arange:meta full:meta zeros:meta empty_strided:meta scalar_tensor:meta" \
	"factory operators create on the provider's device"

opsarg=()
[ -n "${KGB_TORCH_PROOF_OPS:-}" ] && opsarg=(--ops "$KGB_TORCH_PROOF_OPS")
rc=0
"$py" "$KGB_ROOT/tests/integration/torch_aten_proof.py" --max-elems "${KGB_TORCH_PROOF_MAX_ELEMS:-131072}" \
	"${opsarg[@]}" >"$TEST_DIR/proof.log" 2>&1 || rc=$?
grep -v '^ok ' "$TEST_DIR/proof.log" | grep -v '^\[W' || true
[ $rc -eq 0 ] && ok "PyTorch passes kgb's validator on every case run, or the failure is a listed deviation: $(grep '^cases:' "$TEST_DIR/proof.log")" ||
	fail "PyTorch and kgb disagree (see the disagreements above)"
test_done
