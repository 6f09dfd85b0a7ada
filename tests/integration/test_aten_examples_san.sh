#!/bin/bash
# test_aten_examples.sh under ASan + UBSan on a slice of aten20.json that takes every
# kind of operator the manifest has through the sanitizer binaries: unary elementwise
# (acosh), a reduction to an index (argmax), indexing (gather), an in-place strided
# copy (copy_) and broadcast weights (prelu, whose references `kgb refs` checks too).
# The rest of aten20.json runs on the release build (test_aten_examples.sh, which
# leaves these five to this test).
# kgb-test: budget=240
# the slice is ATEN_SAN_SLICE in test_aten_examples.sh, which the release grid leaves out
KGB_ATEN_SAN=1
. "$(dirname "$0")/test_aten_examples.sh"
