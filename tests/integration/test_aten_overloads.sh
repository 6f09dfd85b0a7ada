#!/bin/bash
# The OpenCL candidates of the nineteen ATen operators whose cases call different
# overloads or leave optional tensors out (examples/aten/aten-overloads.json: sub.Tensor
# and sub.Scalar, pow's three overloads, scatter's four, linear with and without bias,
# ...): each is one plan whose kernels are chosen per case with "when". The same run as
# test_aten_examples.sh: a coordinator, one worker, the manifest submitted through the
# CLI, and every candidate must pass every case of its operator.
#   KGB_ATEN_OPS  a comma-separated subset of the operators (quicker runs)
export KGB_ATEN_MANIFEST=aten-overloads.json
exec bash "$(dirname "$0")/test_aten_examples.sh"
