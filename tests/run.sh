#!/bin/bash
# The test suite (`make test` runs it after building build/rel and build/san):
#   1. the unit tests, build/san/bin/kgb-unit, under ASan + UBSan;
#   2. every tests/integration/test_*.sh against the sanitizer binaries, each in its own
#      scratch directory with a time limit, sharing one throwaway PostgreSQL cluster
#      (scripts/pg-test.sh; every test gets its own database in it);
#   3. valgrind --leak-check=full over a few CLI commands and one standalone worker
#      job on the release binaries, where ASan cannot see (PoCL's compiled kernels);
#   4. every libFuzzer target for KGB_FUZZ_SECONDS (default 20) over its seed corpus
#      (make fuzz-ci; KGB_SKIP_FUZZ=1 skips it, as does running only some tests).
# Ends with a summary and "N passed, N failed"; exits non-zero on any failure.
#
#   tests/run.sh [PATTERN...]   run only the integration tests whose name contains a PATTERN
# Environment: KGB_TEST_TIMEOUT (per integration test, seconds, default 1800),
# KGB_SKIP_UNIT=1, KGB_SKIP_VALGRIND=1, KGB_TEST_KEEP=1 (keep scratch directories).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SAN_BIN=$ROOT/build/san/bin
REL_BIN=$ROOT/build/rel/bin
TIMEOUT=${KGB_TEST_TIMEOUT:-1800}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kgb-tests.XXXXXX")
chmod 0755 "$WORK"
# one reference and compile cache for the whole run: every test pays for a case once
export KGB_CACHE_DIR=$WORK/cache
# unit tests that need the source tree (the Triton helper, the Python recorder, the
# venv of scripts/deps.sh --torch) find it here
export KGB_SOURCE_DIR=$ROOT
export POCL_CACHE_DIR=$WORK/pocl-cache

declare -a RESULTS=()
npass=0
nfail=0
PG_URL=""

record() { # NAME STATUS SECONDS [NOTE]
	local mark=PASS
	if [ "$2" -ne 0 ]; then mark=FAIL; nfail=$((nfail + 1)); else npass=$((npass + 1)); fi
	RESULTS+=("$(printf '%-4s %-40s %5ss %s' "$mark" "$1" "$3" "${4:-}")")
	printf '%s %s (%ss) %s\n' "$mark" "$1" "$3" "${4:-}"
}

cleanup() {
	if [ -n "$PG_URL" ]; then sh "$ROOT/scripts/pg-test.sh" stop "$PG_URL" || true; fi
	if [ "${KGB_TEST_KEEP:-0}" != 1 ] && [ $nfail -eq 0 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for b in kgb kgb-coordinator kgb-worker kgb-unit; do
	[ -x "$SAN_BIN/$b" ] || { echo "tests/run.sh: $SAN_BIN/$b missing (make SAN=1)" >&2; exit 1; }
done

# ---- 1. unit tests ----
if [ "${KGB_SKIP_UNIT:-0}" != 1 ]; then
	echo "== unit tests (build/san/bin/kgb-unit)"
	t0=$SECONDS
	rc=0
	(cd "$WORK" && KGB_TEST_TIMEOUT=${KGB_UNIT_TEST_TIMEOUT:-300} timeout -k 10 "$((TIMEOUT * 4))" "$SAN_BIN/kgb-unit") >"$WORK/unit.log" 2>&1 || rc=$?
	tail -n 5 "$WORK/unit.log"
	[ $rc -eq 0 ] || tail -n 60 "$WORK/unit.log" >&2
	record unit "$rc" $((SECONDS - t0))
fi

# ---- 2. integration tests ----
echo "== integration tests (KGB_BIN=build/san/bin)"
PG_URL=$(sh "$ROOT/scripts/pg-test.sh" start) || { echo "tests/run.sh: cannot start PostgreSQL" >&2; exit 1; }
export KGB_TEST_PG_URL=$PG_URL
echo "PostgreSQL for the tests: $PG_URL"

for t in "$ROOT"/tests/integration/test_*.sh; do
	name=$(basename "$t" .sh)
	if [ $# -gt 0 ]; then
		sel=0
		for p in "$@"; do [[ $name == *"$p"* ]] && sel=1; done
		[ $sel -eq 1 ] || continue
	fi
	dir=$WORK/$name
	mkdir -p "$dir"
	t0=$SECONDS
	rc=0
	KGB_BIN=$SAN_BIN KGB_TEST_DIR=$dir timeout -k 15 "$TIMEOUT" bash "$t" >"$dir/output.log" 2>&1 || rc=$?
	note=""
	[ $rc -ne 124 ] || note="(timed out after ${TIMEOUT}s)"
	grep -E '^(ok|FAIL) ' "$dir/output.log" | sed 's/^/    /'
	if [ $rc -ne 0 ]; then
		echo "---- $name output (last 80 lines) ----"
		tail -n 80 "$dir/output.log"
	fi
	record "$name" "$rc" $((SECONDS - t0)) "$note"
done

# ---- 3. valgrind ----
if [ "${KGB_SKIP_VALGRIND:-0}" != 1 ]; then
	echo "== valgrind (build/rel/bin)"
	if ! command -v valgrind >/dev/null; then
		record valgrind 1 0 "(valgrind not installed: scripts/deps.sh)"
	else
		VG=(valgrind -q --num-callers=50 --leak-check=full --show-leak-kinds=definite,indirect
			--errors-for-leak-kinds=definite,indirect --error-exitcode=99
			--suppressions="$ROOT/tests/valgrind.supp")
		vdir=$WORK/valgrind
		mkdir -p "$vdir"
		PY=python3
		for p in /usr/bin/python3 python3; do "$p" -c 'import zmq' 2>/dev/null && { PY=$p; break; }; done
		# vg NAME EXPECT STDIN CMD...: EXPECT is "ok" (exit 0) or "fail" (exit 1..98)
		vg() {
			local name=$1 expect=$2 input=$3; shift 3
			local t0=$SECONDS rc=0 note="" st=0
			(cd "$vdir" && timeout -k 10 "$TIMEOUT" "${VG[@]}" --log-file="$vdir/$name.vg.%p" "$@" <"$input") \
				>"$vdir/$name.out" 2>"$vdir/$name.err" || rc=$?
			if [ $rc -eq 99 ] || [ -n "$(cat "$vdir/$name.vg."* 2>/dev/null)" ]; then
				st=1; note="(valgrind errors, see $vdir/$name.vg.*)"
				cat "$vdir/$name.vg."* | head -60
			elif [ "$expect" = ok ] && [ $rc -ne 0 ]; then
				st=1; note="(exit $rc)"; tail -n 20 "$vdir/$name.err"
			elif [ "$expect" = fail ] && { [ $rc -eq 0 ] || [ $rc -gt 98 ]; }; then
				st=1; note="(exit $rc, expected a failure status)"; tail -n 20 "$vdir/$name.err"
			fi
			record "valgrind:$name" $st $((SECONDS - t0)) "$note"
		}
		printf '{"name": "x", "operators": {"dataset": "nope"}, "methods": []}\n' >"$vdir/bad.json"
		vg cli-help ok /dev/null "$REL_BIN/kgb" --help
		vg cli-submit-help ok /dev/null "$REL_BIN/kgb" submit --help
		vg cli-validate-demo ok /dev/null "$REL_BIN/kgb" validate "$ROOT/examples/demo/demo.json"
		vg cli-submit-bad fail /dev/null "$REL_BIN/kgb" submit "$vdir/bad.json"
		vg cli-status-down fail /dev/null "$REL_BIN/kgb" --coordinator tcp://127.0.0.1:1 --timeout 1 status
		# the executor child (PoCL, the compiled kernel, validation, timing) run directly
		# on one job: valgrind sees inside PoCL's kernels where ASan cannot
		for cand in baseline/add agent-b/clone; do
			op=${cand#*/}
			job=$vdir/${cand//\//-}.job
			"$PY" "$ROOT/tests/tools/kgbwire.py" jobassign "$job" "$op" 0,1 \
				"$ROOT/examples/demo/$cand.plan.json" || record "valgrind:jobassign-$op" 1 0
			vg "executor-${cand//\//-}" ok "$job" "$REL_BIN/kgb-worker" exec --backend opencl --device 0
			got=$("$PY" "$ROOT/tests/tools/kgbwire.py" records "$vdir/executor-${cand//\//-}.out" 2>&1 |
			      sed -n 's/^case [0-9]* verdict //p' | sort -u | tr '\n' ' ')
			want="pass "
			[ "$cand" != agent-b/clone ] || want="unwritten_output "
			if [ "$got" = "$want" ]; then st=0; else st=1; fi
			record "valgrind:executor-${cand//\//-}-verdicts" $st 0 "(got: ${got:-nothing}; want: $want)"
		done
	fi
fi

# ---- 4. fuzz targets, bounded ----
if [ "${KGB_SKIP_FUZZ:-0}" != 1 ] && [ $# -eq 0 ]; then
	echo "== fuzz targets (make fuzz-ci, ${KGB_FUZZ_SECONDS:-20} s each)"
	t0=$SECONDS
	if ! command -v clang >/dev/null; then
		record fuzz 1 0 "(clang not installed: scripts/deps.sh installs clang and libclang-rt-14-dev)"
	else
		rc=0
		make -s fuzz-ci FUZZ_SECONDS="${KGB_FUZZ_SECONDS:-20}" >"$WORK/fuzz.log" 2>&1 || rc=$?
		grep -E '^== |stat::' "$WORK/fuzz.log" || true
		[ $rc -eq 0 ] || tail -n 40 "$WORK/fuzz.log" >&2
		record fuzz $rc $((SECONDS - t0))
	fi
fi

echo
echo "== summary"
printf '%s\n' "${RESULTS[@]}"
[ $nfail -eq 0 ] || echo "scratch directories kept in $WORK"
echo "$npass passed, $nfail failed"
[ $nfail -eq 0 ]
