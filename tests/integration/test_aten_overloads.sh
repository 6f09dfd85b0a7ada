#!/bin/bash
# The OpenCL candidates of the nineteen ATen operators whose cases call different
# overloads or leave optional tensors out (examples/aten/aten-overloads.json: sub.Tensor
# and sub.Scalar, pow's three overloads, scatter's four, linear with and without bias,
# ...): each is one plan whose kernels are chosen per case with "when". The same run as
# test_aten_examples.sh: a coordinator, one worker, the manifest submitted through the
# CLI, and every candidate must pass every case of its operator.
#   KGB_ATEN_OPS  a comma-separated subset of the operators (quicker runs)
# `make test` runs three of them (every case of each: two overloads, an optional
# tensor); all nineteen (4,435 cases, about 40 minutes on 2 cores) run with
# KGB_SLOW_TESTS=1, which `make test-slow` sets.
# kgb-test: budget=300
export KGB_ATEN_MANIFEST=aten-overloads.json
if [ "${KGB_SLOW_TESTS:-0}" != 1 ] && [ -z "${KGB_ATEN_OPS:-}" ]; then
	export KGB_ATEN_OPS=fill_,masked_fill_,linear
	echo "test_aten_overloads: operators $KGB_ATEN_OPS only (KGB_SLOW_TESTS=1 runs all nineteen)" >&2
fi
exec bash "$(dirname "$0")/test_aten_examples.sh"
