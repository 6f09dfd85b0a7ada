#!/bin/bash
# test_aten_examples.sh under ASan + UBSan on a slice of aten20.json that takes every
# kind of operator the manifest has through the sanitizer binaries: unary elementwise
# (acosh), a reduction to an index (argmax), indexing (gather), an in-place strided
# copy (copy_) and broadcast weights (prelu, whose references `kgb refs` checks too).
# The full grid runs on the release build (test_aten_examples.sh).
# kgb-test: budget=240
KGB_ATEN_OPS=${KGB_ATEN_OPS:-acosh,argmax,gather,copy_,prelu}
. "$(dirname "$0")/test_aten_examples.sh"
