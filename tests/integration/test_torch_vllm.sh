#!/bin/bash
# kgb's vLLM definitions against the PyTorch composites of the native provider
# (python/kgb/providers/vllm_ops.py) on the CPU: tests/integration/torch_aten_proof.py
# --dataset vllm runs every case of every vLLM operator that has a composite on kgb's
# inputs and judges it by kgb's validator; the failures must all be expected deviations
# (torch_vllm_deviations.txt). Installs nothing: skips when no Python with torch is found.
#   KGB_TORCH_PYTHON          the Python to use (default build/venv/bin/python, then python3)
#   KGB_VLLM_PROOF_MAX_ELEMS  skip cases of more elements than this, except each operator's
#                             case 0 (default 131072: 1199 of the 1806 cases, about a
#                             minute on 2 idle cores; 0 runs every case, about 4 minutes)
#   KGB_VLLM_PROOF_OPS        a comma-separated subset of operators
. "$(dirname "$0")/lib.sh"

python_or_skip KGB_TORCH_PYTHON "torch, numpy" \
	"no Python with torch and numpy (.ci/run installs them into build/venv; or set KGB_TORCH_PYTHON)"
use_kgb_package
ok "using $("$py" -c 'import sys, torch; print(sys.executable, "torch", torch.__version__)')"

opsarg=()
[ -n "${KGB_VLLM_PROOF_OPS:-}" ] && opsarg=(--ops "$KGB_VLLM_PROOF_OPS")
rc=0
"$py" "$KGB_ROOT/tests/integration/torch_aten_proof.py" --dataset vllm \
	--max-elems "${KGB_VLLM_PROOF_MAX_ELEMS:-131072}" "${opsarg[@]}" >"$TEST_DIR/proof.log" 2>&1 || rc=$?
grep -v '^ok ' "$TEST_DIR/proof.log" | grep -v '^\[W' || true
[ $rc -eq 0 ] && ok "the vLLM composites pass kgb's validator on every case run, or the failure is a listed deviation: $(grep '^cases:' "$TEST_DIR/proof.log")" ||
	fail "the vLLM composites and kgb disagree (see the disagreements above)"
test_done
