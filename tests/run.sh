#!/bin/bash
# The test suite (`make test` runs it after building build/rel and build/san):
#   1. the unit tests, build/san/bin/kgb-unit, under ASan + UBSan, KGB_UNIT_JOBS
#      (default 3) tests at a time;
#   2. every tests/integration/test_*.sh, each in its own scratch directory with a time
#      limit, sharing one throwaway PostgreSQL cluster (scripts/pg-test.sh; every test
#      gets its own database in it), KGB_TEST_JOBS (default 3) at a time beside the unit
#      tests, the costliest first;
#   3. valgrind --leak-check=full over a few CLI commands and one standalone worker
#      job on the release binaries, where ASan cannot see (PoCL's compiled kernels);
#   4. every libFuzzer target for KGB_FUZZ_SECONDS (default 20) over its seed corpus
#      (make fuzz-ci; KGB_SKIP_FUZZ=1 skips it, as does running only some tests).
# All four share the machine: a slot runs one integration test, the unit runner, the
# valgrind block or the fuzz block. Ends with a summary (wall and CPU seconds of each
# part), the ten slowest parts and "N passed, N failed"; exits non-zero on any failure.
#
# An integration test says what it costs in a header line:
#   # kgb-test: budget=SECONDS [bin=rel]
# budget is the wall time it should take on a quiet 2-core machine (default 90); the
# summary marks a test over its budget (no failure: the budget is for people, the suite
# has no timed assertions). bin=rel runs it on build/rel/bin instead of the sanitizer
# binaries (a full grid whose sanitizer coverage another test keeps on a slice);
# KGB_TEST_SAN_ONLY=1 (make test-full) runs every test on the sanitizer binaries.
#
#   tests/run.sh [PATTERN...]   run only the integration tests whose name contains a PATTERN
# Environment: KGB_TEST_TIMEOUT (per integration test, seconds, default 1800),
# KGB_TEST_JOBS, KGB_UNIT_JOBS, KGB_TEST_SAN_ONLY=1, KGB_SKIP_UNIT=1,
# KGB_SKIP_VALGRIND=1, KGB_TEST_KEEP=1 (keep scratch directories).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SAN_BIN=$ROOT/build/san/bin
REL_BIN=$ROOT/build/rel/bin
TIMEOUT=${KGB_TEST_TIMEOUT:-1800}
JOBS=${KGB_TEST_JOBS:-3}
UNIT_JOBS=${KGB_UNIT_JOBS:-3}
DEFAULT_BUDGET=90

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kgb-tests.XXXXXX")
chmod 0755 "$WORK"
mkdir -p "$WORK/parts"
# one reference and compile cache for the whole run: every test pays for a case once
export KGB_CACHE_DIR=$WORK/cache
# unit tests that need the source tree (the Triton helper, the Python recorder, the
# venv of scripts/deps.sh --torch) find it here
export KGB_SOURCE_DIR=$ROOT
export POCL_CACHE_DIR=$WORK/pocl-cache

declare -a RESULTS=()
declare -A RUNNING=()    # pid -> part name
npass=0
nfail=0
PG_URL=""
T_START=$SECONDS

# record NAME STATUS SECONDS [NOTE]: one line of a part's results, kept in
# $PART_RES (a part running in the background writes there; the runner reads it when
# the part ends)
PART_RES=$WORK/parts/main.res
record() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$PART_RES"
}

cleanup() {
	# `timeout` leads a process group of its own: TERM it, and it passes the signal on
	for f in "$WORK"/parts/*.timeout; do [ -e "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
	for pid in "${!RUNNING[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null; done
	if [ -n "$PG_URL" ]; then sh "$ROOT/scripts/pg-test.sh" stop "$PG_URL" || true; fi
	if [ "${KGB_TEST_KEEP:-0}" != 1 ] && [ $nfail -eq 0 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for b in kgb kgb-coordinator kgb-worker kgb-unit; do
	[ -x "$SAN_BIN/$b" ] || { echo "tests/run.sh: $SAN_BIN/$b missing (make SAN=1)" >&2; exit 1; }
done

# cpu_seconds FILE: the user+system CPU seconds of the children in FILE, the output of
# bash's `times` (run by the shell whose children they are, not in a $(...) subshell)
cpu_seconds() {
	sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.0f", s }'
}

# start_part NAME BUDGET FUNCTION [ARGS...]: run FUNCTION in the background in its own
# process group, its output to parts/NAME.out, its results to parts/NAME.res, its
# wall and CPU seconds to parts/NAME.time
start_part() {
	local name=$1 budget=$2; shift 2
	set -m
	(
		trap - EXIT INT TERM
		PART_RES=$WORK/parts/$name.res
		: >"$PART_RES"
		t0=$SECONDS
		"$@" >"$WORK/parts/$name.out" 2>&1
		times >"$WORK/parts/$name.cpu"
		printf '%s %s %s\n' $((SECONDS - t0)) "$(cpu_seconds "$WORK/parts/$name.cpu")" "$budget" >"$WORK/parts/$name.time"
	) &
	set +m
	RUNNING[$!]=$name
}

# finish_part PID: print what the part said and take its results
finish_part() {
	local name=${RUNNING[$1]} line n st s note
	unset "RUNNING[$1]"
	cat "$WORK/parts/$name.out" 2>/dev/null
	local wall=0 cpu=0 budget=0
	read -r wall cpu budget <"$WORK/parts/$name.time" 2>/dev/null || true
	echo "$name $wall $cpu $budget" >>"$WORK/parts.times"
	[ -s "$WORK/parts/$name.res" ] || printf '%s\t1\t%s\t(the part ended without a result)\n' "$name" "$wall" >"$WORK/parts/$name.res"
	while IFS=$'\t' read -r n st s note; do
		local mark=PASS
		if [ "$st" -ne 0 ]; then mark=FAIL; nfail=$((nfail + 1)); else npass=$((npass + 1)); fi
		line=$(printf '%-4s %-44s %5ss %s' "$mark" "$n" "$s" "$note")
		RESULTS+=("$line")
		echo "$line"
	done <"$WORK/parts/$name.res"
}

# wait_slot N: wait until fewer than N parts run
wait_slot() {
	local pid
	while [ ${#RUNNING[@]} -ge "$1" ]; do
		pid=""
		wait -n -p pid "${!RUNNING[@]}" 2>/dev/null || true
		if [ -n "$pid" ] && [ -n "${RUNNING[$pid]:-}" ]; then
			finish_part "$pid"
		else # not ours, or interrupted: find any that ended
			for pid in "${!RUNNING[@]}"; do kill -0 "$pid" 2>/dev/null || finish_part "$pid"; done
		fi
	done
}

# ---- 1. unit tests ----
unit_part() {
	echo "== unit tests (build/san/bin/kgb-unit --jobs $UNIT_JOBS)"
	local t0=$SECONDS rc=0
	(cd "$WORK" && KGB_TEST_TIMEOUT=${KGB_UNIT_TEST_TIMEOUT:-300} exec timeout -k 10 "$((TIMEOUT * 4))" \
		"$SAN_BIN/kgb-unit" --jobs "$UNIT_JOBS") >"$WORK/unit.log" 2>&1 &
	echo $! >"$WORK/parts/unit.timeout"
	wait $! || rc=$?
	rm -f "$WORK/parts/unit.timeout"
	tail -n 1 "$WORK/unit.log"
	echo "   the ten costliest unit tests (CPU, then wall seconds):"
	grep -E '^(ok|FAIL|TIMEOUT) ' "$WORK/unit.log" | awk '$7 == "cpu" { print $5, $3, $2 }' |
		sort -rn | head -n 10 | awk '{ printf "     %7.1f s cpu %7.1f s wall  %s\n", $1 / 1000, $2 / 1000, $3 }'
	[ $rc -eq 0 ] || grep -E -B 30 '^(FAIL|TIMEOUT) ' "$WORK/unit.log" | tail -n 120
	record unit "$rc" $((SECONDS - t0))
}

# ---- 2. integration tests ----
# header_of TEST KEY: the value of KEY in the test's "# kgb-test:" line, or nothing
header_of() { sed -n 's/^# kgb-test:.*\b'"$2"'=\([a-z0-9]*\).*/\1/p' "$1" | head -n1; }

integration_part() { # TEST BUDGET
	local t=$1 budget=$2 name dir rc=0 note="" bin=$SAN_BIN
	name=$(basename "$t" .sh)
	dir=$WORK/$name
	mkdir -p "$dir"
	if [ "$(header_of "$t" bin)" = rel ] && [ "${KGB_TEST_SAN_ONLY:-0}" != 1 ]; then
		bin=$REL_BIN
		note="(release build) "
	fi
	# a test's header may give it a longer limit (timeout=SECONDS); never a shorter one
	local tmo
	tmo=$(header_of "$t" timeout)
	[ -n "$tmo" ] && [ "$tmo" -gt "$TIMEOUT" ] || tmo=$TIMEOUT
	local t0=$SECONDS
	KGB_BIN=$bin KGB_TEST_DIR=$dir timeout -k 15 "$tmo" bash "$t" >"$dir/output.log" 2>&1 &
	echo $! >"$WORK/parts/$name.timeout"
	wait $! || rc=$?
	rm -f "$WORK/parts/$name.timeout"
	local took=$((SECONDS - t0))
	[ $rc -ne 124 ] || note="$note(timed out after ${tmo}s) "
	[ "$took" -le "$budget" ] || note="$note(over its ${budget}s budget) "
	echo "-- $name"
	grep -E '^(ok|FAIL) ' "$dir/output.log" | sed 's/^/    /'
	if [ $rc -ne 0 ]; then
		echo "---- $name output (last 80 lines) ----"
		tail -n 80 "$dir/output.log"
	fi
	record "$name" "$rc" "$took" "$note"
}

# ---- 3. valgrind ----
valgrind_part() {
	echo "== valgrind (build/rel/bin)"
	if ! command -v valgrind >/dev/null; then
		record valgrind 1 0 "(valgrind not installed: scripts/deps.sh)"
		return
	fi
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
}

# ---- 4. fuzz targets, bounded ----
fuzz_part() {
	echo "== fuzz targets (make fuzz-ci, ${KGB_FUZZ_SECONDS:-20} s each)"
	local t0=$SECONDS rc=0
	if ! command -v clang >/dev/null; then
		record fuzz 1 0 "(clang not installed: scripts/deps.sh installs clang and libclang-rt-14-dev)"
		return
	fi
	make -s fuzz-ci FUZZ_SECONDS="${KGB_FUZZ_SECONDS:-20}" >"$WORK/fuzz.log" 2>&1 || rc=$?
	grep -E '^== |stat::' "$WORK/fuzz.log" || true
	[ $rc -eq 0 ] || tail -n 40 "$WORK/fuzz.log" >&2
	record fuzz $rc $((SECONDS - t0))
}

# ---- the schedule ----
PG_URL=$(sh "$ROOT/scripts/pg-test.sh" start) || { echo "tests/run.sh: cannot start PostgreSQL" >&2; exit 1; }
export KGB_TEST_PG_URL=$PG_URL
echo "PostgreSQL for the tests: $PG_URL"
echo "== $JOBS parts at a time beside the unit tests; each part's lines come when it ends"

# the unit runner is a part of its own beside the slots: it is mostly waiting on its
# children's sockets and daemons, and it is the longest part
[ "${KGB_SKIP_UNIT:-0}" = 1 ] || start_part unit 600 unit_part

# integration tests by budget, the costliest first, so that the long ones do not end
# the run alone; then valgrind and fuzz
declare -a ORDER=()
for t in "$ROOT"/tests/integration/test_*.sh; do
	name=$(basename "$t" .sh)
	if [ $# -gt 0 ]; then
		sel=0
		for p in "$@"; do [[ $name == *"$p"* ]] && sel=1; done
		[ $sel -eq 1 ] || continue
	fi
	b=$(header_of "$t" budget)
	ORDER+=("${b:-$DEFAULT_BUDGET} $t")
done
slots=$JOBS
[ "${KGB_SKIP_UNIT:-0}" = 1 ] || slots=$((JOBS + 1))
while read -r budget t; do
	[ -n "$t" ] || continue
	wait_slot "$slots"
	start_part "$(basename "$t" .sh)" "$budget" integration_part "$t" "$budget"
done < <(printf '%s\n' "${ORDER[@]}" | sort -rn -k1,1)
if [ "${KGB_SKIP_VALGRIND:-0}" != 1 ]; then
	wait_slot "$slots"
	start_part valgrind 240 valgrind_part
fi
if [ "${KGB_SKIP_FUZZ:-0}" != 1 ] && [ $# -eq 0 ]; then
	wait_slot "$slots"
	start_part fuzz 180 fuzz_part
fi
wait_slot 1

echo
echo "== summary"
printf '%s\n' "${RESULTS[@]}"
if [ -s "$WORK/parts.times" ]; then
	echo
	echo "== the ten slowest parts (wall and CPU seconds, budget), of $((SECONDS - T_START)) s in all"
	sort -k2,2 -rn "$WORK/parts.times" | head -n 10 |
		awk '{ printf "  %6d s wall %6d s cpu  %6s s budget  %s%s\n", $2, $3, $4, $1, ($2 > $4 ? "  OVER BUDGET" : "") }'
	awk '{ c += $3 } END { printf "  CPU of all parts: %d s\n", c }' "$WORK/parts.times"
fi
[ $nfail -eq 0 ] || echo "scratch directories kept in $WORK"
echo "$npass passed, $nfail failed"
[ $nfail -eq 0 ]
