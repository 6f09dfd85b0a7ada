# Helpers for the integration tests (bash; source it first thing in a test_*.sh).
#
# A test runs the real daemons as processes, talks to them over real ZeroMQ sockets and
# checks a real PostgreSQL. Everything a test starts is registered here and torn down
# when the test exits, however it exits; daemon logs are checked for sanitizer reports.
#
# Environment (all optional; tests/run.sh sets them):
#   KGB_BIN          directory of the binaries (default build/san/bin)
#   KGB_TEST_DIR     scratch directory of this test (default: a new one, removed at exit)
#   KGB_TEST_PG_URL  a PostgreSQL cluster shared by the suite (pg-test.sh URL, database
#                    kgb); each test gets a fresh database in it. Unset: the test
#                    starts its own cluster with scripts/pg-test.sh when it calls db_init.
#   KGB_TEST_KEEP=1  keep the scratch directory
#
# Functions:
#   db_init                       fresh database; exports KGB_DATABASE_URL
#   q SQL                         one query against it, unaligned tuples-only output
#   start_coordinator [NAME] [ARGS...]   start kgb-coordinator, wait for "kgb-coordinator: ready";
#                                 exports KGB_CLUSTER_ID (its store's id): the test's CLI
#                                 and workers refuse any other coordinator
#   start_worker NAME [ARGS...]   start kgb-worker --coordinator $KGB_WORKER_ENDPOINT --name NAME
#   stop_proc NAME                SIGTERM, wait (KGB_STOP_TIMEOUT s), SIGKILL if needed; returns
#                                 the exit status
#   kill_proc NAME SIG            send a signal (KILL also reaps it)
#   proc_alive NAME               true while it runs
#   log_of NAME                   path of its current log
#   kgb ARGS...                   the CLI, against this test's coordinator
#   wait_for SECS DESC CMD...     poll CMD every 0.2 s until it succeeds; fail (fatal) after SECS
#   unwrap FILE                   the CLI's wrapped prose, one line per paragraph
#   wait_done SECS DESC CMD...    the same for a state that stays once reached, polling
#                                 less often the longer it waits (up to every 2 s)
#   test_must_fail CMD...         CMD must exit non-zero (not by a signal, not a sanitizer abort)
#   ok DESC / fail DESC           record a check; check DESC CMD... runs CMD and records it
#   assert_eq GOT WANT DESC       record an equality check
#   die MSG                       fatal: record a failure and exit (teardown runs)
#   test_done                     print "N passed, N failed" and exit with the status

set -euo pipefail

KGB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KGB_BIN=$(cd "${KGB_BIN:-$KGB_ROOT/build/san/bin}" 2>/dev/null && pwd) ||
	{ echo "lib.sh: binary directory ${KGB_BIN:-build/san/bin} does not exist (run make)" >&2; exit 1; }
export KGB_BIN KGB_ROOT
TEST_NAME=$(basename "$0" .sh)

_own_dir=0
if [ -n "${KGB_TEST_DIR:-}" ]; then
	TEST_DIR=$KGB_TEST_DIR
	mkdir -p "$TEST_DIR"
else
	TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kgb-$TEST_NAME.XXXXXX")
	_own_dir=1
fi
TEST_DIR=$(cd "$TEST_DIR" && pwd)
# the embedded store may run as another user (root -> postgres): let it traverse
chmod 0755 "$TEST_DIR"
mkdir -p "$TEST_DIR/logs"
export KGB_CACHE_DIR=${KGB_CACHE_DIR:-$TEST_DIR/cache}
# cluster ids pinned at first use (common/cluster.h) stay in the test's directory
export KGB_CONFIG_DIR=$TEST_DIR/config
: "${KGB_STOP_TIMEOUT:=20}"

# Sanitizer settings for every process we start (tests/run.sh sets the same).
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS UBSAN_OPTIONS
if [ -z "${LSAN_OPTIONS:-}" ]; then
	LSAN_OPTIONS="suppressions=$KGB_ROOT/tests/lsan.supp:print_suppressions=0"
fi
export LSAN_OPTIONS

_passed=0
_failed=0
declare -A _PID=() _LOG=() _NSTART=()
_pg_own_dir=""
_done=0

_say() { printf '%s: %s\n' "$TEST_NAME" "$*" >&2; }
ok() { _passed=$((_passed + 1)); printf 'ok   %s: %s\n' "$TEST_NAME" "$*"; }
fail() { _failed=$((_failed + 1)); printf 'FAIL %s: %s\n' "$TEST_NAME" "$*" >&2; }
die() { fail "$*"; exit 1; }

check() {
	local desc=$1; shift
	if "$@"; then ok "$desc"; else fail "$desc (command: $*)"; fi
}

assert_eq() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		fail "$3: got '$1', want '$2'"
	fi
}

# assert_contains TEXT NEEDLE DESC: TEXT holds NEEDLE (a fixed string)
assert_contains() {
	case $1 in
	*"$2"*) ok "$3" ;;
	*) fail "$3: '$2' not in: $(printf '%s' "$1" | tail -n 5)" ;;
	esac
}

# The Debian python3 has python3-zmq (scripts/deps.sh); another python3 first on PATH
# (pyenv, a virtualenv) may not.
KGB_PY=python3
for _p in /usr/bin/python3 python3; do
	if "$_p" -c 'import zmq' 2>/dev/null; then KGB_PY=$_p; break; fi
done
export KGB_PY
# python_with VAR MODULES: the Python that can `import MODULES` ("torch, numpy"): $VAR
# when set, else build/venv/bin/python (where .ci/run installs them), else python3 on
# PATH. Prints its path, or nothing when none can (the caller then skips, saying why).
python_with() {
	local p=${!1:-}
	if [ -n "$p" ]; then
		"$p" -c "import $2" 2>/dev/null && command -v "$p"
		return 0
	fi
	for p in "$KGB_ROOT/build/venv/bin/python" python3; do
		if command -v "$p" >/dev/null && "$p" -c "import $2" 2>/dev/null; then
			command -v "$p"
			return 0
		fi
	done
	return 0
}

# py = a Python that imports $2 (python_with $1 "$2"); without one the test ends here,
# passed with the line "SKIPPED: $3".
python_or_skip() {
	py=$(python_with "$1" "$2")
	if [ -z "$py" ]; then
		ok "SKIPPED: $3"
		test_done
	fi
}

# KGB_LIBRARY: the release build's libkgb.so, the one Python can load (a sanitizer
# build's cannot be loaded into Python).
use_libkgb() {
	KGB_LIBRARY=$KGB_ROOT/build/rel/lib/libkgb.so
	[ -f "$KGB_LIBRARY" ] || die "$KGB_LIBRARY missing (make all)"
	export KGB_LIBRARY
}

# Python loads kgb from the source tree: use_libkgb, and PYTHONPATH the package in
# python/, as `pip install ./python` would provide it.
use_kgb_package() {
	use_libkgb
	export PYTHONPATH=$KGB_ROOT/python${PYTHONPATH:+:$PYTHONPATH}
}

kgbwire() { "$KGB_PY" "$KGB_ROOT/tests/tools/kgbwire.py" "$@"; }

# ---- ports and endpoints ----

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Endpoints are chosen once per test, so a restarted coordinator binds the same ones.
if [ -z "${KGB_WORKER_ENDPOINT:-}" ] || [ "${KGB_TEST_FIXED_PORTS:-0}" != 1 ]; then
	KGB_WORKER_ENDPOINT="tcp://127.0.0.1:$(free_port)"
	KGB_CLI_ENDPOINT="tcp://127.0.0.1:$(free_port)"
fi
export KGB_WORKER_ENDPOINT KGB_CLI_ENDPOINT

# ---- database ----

db_init() {
	local db
	db="kgb_$(echo "$TEST_NAME" | tr -c 'a-z0-9\n' '_')_$$"
	if [ -n "${KGB_TEST_PG_URL:-}" ]; then
		psql -XAtq -v ON_ERROR_STOP=1 "$KGB_TEST_PG_URL" -c "CREATE DATABASE $db" >/dev/null ||
			die "cannot create database $db in $KGB_TEST_PG_URL"
		KGB_DATABASE_URL=$(printf '%s' "$KGB_TEST_PG_URL" | sed -E "s#/kgb(\\?|\$)#/$db\\1#")
	else
		KGB_DATABASE_URL=$(sh "$KGB_ROOT/scripts/pg-test.sh" start) || die "scripts/pg-test.sh start failed"
		_pg_own_dir=$(printf '%s' "$KGB_DATABASE_URL" | sed -n 's/.*host=\([^&]*\).*/\1/p')
	fi
	export KGB_DATABASE_URL
}

q() {
	[ -n "${KGB_DATABASE_URL:-}" ] || die "q: no database (call db_init)"
	psql -XAtq -v ON_ERROR_STOP=1 "$KGB_DATABASE_URL" -c "$1"
}

# ---- processes ----

# _spawn NAME LOG CMD...: start CMD in the background with stdout+stderr to LOG
_spawn() {
	local name=$1 log=$2; shift 2
	"$@" >"$log" 2>&1 &
	_PID[$name]=$!
	_LOG[$name]=$log
}

_next_log() {
	local name=$1 n=$(( ${_NSTART[$1]:-0} + 1 ))
	_NSTART[$name]=$n
	echo "$TEST_DIR/logs/$name.$n.log"
}

log_of() { echo "${_LOG[$1]}"; }
pid_of() { echo "${_PID[$1]:-}"; }

proc_alive() {
	local p=${_PID[$1]:-}
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null && ! _is_zombie "$p"
}
_is_zombie() { [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ]; }

# start_coordinator [NAME] [ARGS...]: with KGB_DATABASE_URL if set, else the embedded
# store in $TEST_DIR/NAME.data (override with --data-dir in ARGS).
start_coordinator() {
	local name=${1:-coord}; [ $# -gt 0 ] && shift
	local log; log=$(_next_log "$name")
	local args=("$@")
	if [ -z "${KGB_DATABASE_URL:-}" ] && [[ " ${args[*]-} " != *" --data-dir "* ]]; then
		args=(--data-dir "$TEST_DIR/$name.data" "${args[@]}")
	fi
	# emptied here, not only by the background start: a log of an earlier run under this
	# name must not be read as this one's
	: >"$log"
	_spawn "$name" "$log" "$KGB_BIN/kgb-coordinator" "${args[@]}"
	local i line id
	for ((i = 0; i < ${KGB_READY_TIMEOUT:-120} * 5; i++)); do
		# ready, with its store's cluster id: the CLI and the workers of this test talk
		# to this coordinator only (bash alone: a test may take directories off PATH)
		id=
		while IFS= read -r line; do
			case $line in
			"kgb-coordinator: ready (cluster "*) id=${line#*cluster }; id=${id%%)*} ;;
			esac
		done <"$log"
		if [ -n "$id" ]; then
			export KGB_CLUSTER_ID=$id
			return 0
		fi
		if ! proc_alive "$name"; then
			_dump_log "$log"
			die "coordinator $name exited before it was ready (log $log)"
		fi
		sleep 0.2
	done
	_dump_log "$log"
	die "coordinator $name not ready after ${KGB_READY_TIMEOUT:-120} s (log $log)"
}

# start_worker NAME [ARGS...]: the worker's executor children may crash on purpose
# (planted defects): ASan must not turn their SIGSEGV into a report of its own. One
# slot unless the test asks for more (--slots, or KGB_WORKER_SLOTS=auto for the
# machine's size), so that no test depends on the machine's CPU count.
start_worker() {
	local name=$1; shift
	local log; log=$(_next_log "$name")
	KGB_WORKER_SLOTS="${KGB_WORKER_SLOTS:-1}" \
	ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0" \
		_spawn "$name" "$log" "$KGB_BIN/kgb-worker" --coordinator "$KGB_WORKER_ENDPOINT" --name "$name" "$@"
}

# notify_listen NAME SOCK: a datagram socket at SOCK as systemd's NOTIFY_SOCKET is (a
# double of the service manager, which does not run here); each message is one line of
# NAME's log, its assignments joined by spaces. notified NAME RE: a message matched RE.
notify_listen() {
	local log; log=$(_next_log "$1")
	_spawn "$1" "$log" python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    print(s.recv(4096).decode().replace("\n", " "), flush=True)' "$2"
	wait_for 20 "notify socket $2 bound" test -S "$2"
}
notified() { grep -q "$2" "$(log_of "$1")"; }

# wait_registered NAME: until the coordinator lists the worker
wait_registered() {
	wait_for 60 "worker $1 registered" _worker_listed "$1"
}
_worker_listed() { kgb workers 2>/dev/null | grep -q -- "$1"; }

stop_proc() {
	local name=$1 p=${_PID[$1]:-} rc=0 i
	[ -n "$p" ] || return 0
	kill -CONT "$p" 2>/dev/null || true
	kill -TERM "$p" 2>/dev/null || true
	for ((i = 0; i < KGB_STOP_TIMEOUT * 10; i++)); do
		kill -0 "$p" 2>/dev/null && ! _is_zombie "$p" || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null && ! _is_zombie "$p"; then
		fail "$name (pid $p) still running ${KGB_STOP_TIMEOUT} s after SIGTERM; killed"
		kill -KILL "$p" 2>/dev/null || true
	fi
	wait "$p" 2>/dev/null || rc=$?
	unset "_PID[$name]"
	_check_log "$name" "${_LOG[$name]}"
	return $rc
}

# stop_checked NAME: stop it and record that it exited 0
stop_checked() {
	local rc=0
	stop_proc "$1" || rc=$?
	assert_eq "$rc" 0 "$1 exits 0 on SIGTERM"
}

kill_proc() {
	local name=$1 sig=$2 p=${_PID[$1]:-}
	[ -n "$p" ] || die "kill_proc: no process $name"
	kill "-$sig" "$p"
	if [ "$sig" = KILL ] || [ "$sig" = 9 ]; then
		wait "$p" 2>/dev/null || true
		unset "_PID[$name]"
	fi
}

kgb() { "$KGB_BIN/kgb" "$@"; }

wait_for() {
	local secs=$1 desc=$2; shift 2
	local end=$((SECONDS + secs))
	while ! "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $end ]; then
			die "timed out after ${secs} s waiting for: $desc"
		fi
		sleep 0.2
	done
}

# wait_done SECS DESC CMD...: wait_for for a state that, once reached, stays (a campaign
# finished, every row done): the pause between polls grows with the time waited (a
# tenth of it, from 0.2 s up to 2 s), so a wait of many minutes does not spend its CPU
# on thousands of polls; a transient state needs wait_for
# unwrap FILE: the CLI's prose as one line per paragraph (kgb wraps notes at the table
# width, each continuation indented deeper than the line it continues)
unwrap() {
	awk 'function ind(s) { match(s, /^ */); return RLENGTH }
	     NR > 1 && ind($0) > base && $0 !~ /^ *$/ { sub(/^ +/, ""); line = line " " $0; next }
	     { if (NR > 1) print line; line = $0; base = ind($0) }
	     END { if (NR) print line }' "$1"
}

wait_done() {
	local secs=$1 desc=$2; shift 2
	local t0=$SECONDS end=$((SECONDS + secs)) nap
	while ! "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $end ]; then
			die "timed out after ${secs} s waiting for: $desc"
		fi
		nap=$((SECONDS - t0))   # tenths of a second: a tenth of the wait so far
		[ $nap -ge 2 ] || nap=2
		[ $nap -le 20 ] || nap=20
		sleep "$((nap / 10)).$((nap % 10))"
	done
}

# wait_for_quiet SECS CMD...: like wait_for, but returns 1 on timeout instead of failing
wait_for_quiet() {
	local secs=$1; shift
	local end=$((SECONDS + secs))
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

test_must_fail() {
	local rc=0
	"$@" || rc=$?
	if [ $rc -eq 0 ]; then
		_say "test_must_fail: '$*' succeeded"
		return 1
	fi
	if [ $rc -gt 128 ] && [ $rc -le 192 ]; then
		_say "test_must_fail: '$*' died by signal $((rc - 128))"
		return 1
	fi
	if [ $rc -eq 124 ] || [ $rc -eq 127 ]; then
		_say "test_must_fail: '$*' exited $rc (timeout or not found)"
		return 1
	fi
	return 0
}

# ---- campaigns ----

# The demo campaign's operators, their plan file names, and agent-b's planted verdicts
# (examples/demo/README.md).
DEMO_OPS="add silu sum softmax index_select clone cumsum gt rms_norm rotary_embedding cublasSgemm_v2 cublasSaxpy_v2"
declare -A DEMO_FILE=(
	[add]=add [silu]=silu [sum]=sum [softmax]=softmax [index_select]=index_select [clone]=clone
	[cumsum]=cumsum [gt]=gt [rms_norm]=rms_norm [rotary_embedding]=rotary_embedding
	[cublasSgemm_v2]=sgemm [cublasSaxpy_v2]=saxpy
)
declare -A DEMO_PLANTED=(
	[add]=compile_error [silu]=launch_error [sum]=crash [softmax]=timeout
	[index_select]=wrong_result [clone]=unwritten_output [cumsum]=out_of_bounds_write
	[gt]=input_modified [rms_norm]=wrong_result
	[rotary_embedding]=pass [cublasSgemm_v2]=pass [cublasSaxpy_v2]=pass
)

# verdicts_match GOT WANT: GOT (distinct verdicts, space-separated, sorted) is WANT, or
# for a crash or timeout WANT plus not_run (the cases after the one that killed the
# executor)
verdicts_match() {
	case "$2" in
	crash|timeout) [ "$1" = "$2" ] || [ "$1" = "$2 not_run" ] || [ "$1" = "not_run $2" ] ;;
	*) [ "$1" = "$2" ] ;;
	esac
}

# make_manifest OUT [manifest.py options]: a variant of examples/demo/demo.json
# headless_browser: prints the name of a Chromium on PATH (chromium, chromium-browser,
# google-chrome); fails when there is none (the caller skips, saying why)
headless_browser() {
	local b
	for b in chromium chromium-browser google-chrome; do
		if command -v "$b" >/dev/null; then
			echo "$b"
			return 0
		fi
	done
	return 1
}

make_manifest() {
	python3 "$KGB_ROOT/tests/tools/manifest.py" "$@" || die "tests/tools/manifest.py $* failed"
}

# submit FILE: kgb submit; prints the campaign id
submit() {
	local out id
	out=$(kgb submit "$1") || die "kgb submit $1 failed: $out"
	id=$(printf '%s\n' "$out" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
	[ -n "$id" ] || die "kgb submit $1: no campaign id in its output: $out"
	echo "$id"
}

# campaign_done ID: every job of the campaign is finished (and there is at least one)
campaign_done() {
	[ "$(q "SELECT count(*) > 0 AND count(*) FILTER (WHERE state IN ('queued', 'running')) = 0
	        FROM jobs WHERE campaign_id = $1")" = t ]
}

wait_campaign() { wait_done "${2:-600}" "campaign $1 finished" campaign_done "$1"; }

# expected_cases ID: the number of (job, case) results the campaign must end with
expected_cases() {
	q "SELECT coalesce(sum(j.case_hi - j.case_lo), 0) FROM jobs j WHERE j.campaign_id = $1"
}

# results_count ID: result rows recorded for the campaign
results_count() {
	q "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.campaign_id = $1"
}

# verdict_table ID: "method|op|verdict|count" lines, sorted
verdict_table() {
	q "SELECT c.method, c.op, r.verdict, count(*) FROM results r JOIN jobs j ON j.id = r.job_id
	   JOIN candidates c ON c.id = j.candidate_id WHERE j.campaign_id = $1
	   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
}

# ---- logs and teardown ----

_SAN_RE='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer)'

_check_log() {
	local name=$1 log=$2
	[ -f "$log" ] || return 0
	if grep -Eq "$_SAN_RE" "$log"; then
		fail "$name: sanitizer report in $log"
		grep -E -A 30 "$_SAN_RE" "$log" | head -60 >&2
	fi
}

_dump_log() {
	[ -f "$1" ] || return 0
	echo "---- tail of $1 ----" >&2
	tail -n "${2:-40}" "$1" >&2
}

_teardown() {
	local rc=$? name
	[ $_done -eq 1 ] || { [ $rc -eq 0 ] || fail "test exited with status $rc"; }
	# workers first, so they do not retry against a dying coordinator
	for name in "${!_PID[@]}"; do
		[[ $name == coord* ]] || stop_proc "$name" || true
	done
	for name in "${!_PID[@]}"; do
		stop_proc "$name" || true
	done
	# an embedded store left running by a coordinator killed with SIGKILL: its pid is in
	# the coordinator's log ("embedded store: postgres pid N, ...")
	local p
	for p in $(grep -ho 'embedded store: postgres pid [0-9]*' "$TEST_DIR"/logs/coord*.log 2>/dev/null |
	           grep -o '[0-9]*$' | sort -u); do
		if kill -0 "$p" 2>/dev/null && grep -q postgres "/proc/$p/cmdline" 2>/dev/null; then
			kill -QUIT "$p" 2>/dev/null || true
		fi
	done
	# as root the cluster lives outside the data dir (named in DATA/pg.location)
	local loc d
	for loc in "$TEST_DIR"/*/pg.location; do
		[ -f "$loc" ] || continue
		d=$(head -n1 "$loc")
		case "$d" in /var/lib/kgb/pg-*) sleep 0.5; rm -rf "$d" ;; esac
	done
	if [ -n "$_pg_own_dir" ]; then
		sh "$KGB_ROOT/scripts/pg-test.sh" stop "$_pg_own_dir" || true
	fi
	if [ $_failed -gt 0 ]; then
		local f
		for f in "$TEST_DIR"/logs/*.log; do
			[ -f "$f" ] && _dump_log "$f" 25
		done
	fi
	if [ $_own_dir -eq 1 ] && [ "${KGB_TEST_KEEP:-0}" != 1 ] && [ $_failed -eq 0 ]; then
		rm -rf "$TEST_DIR"
	elif [ $_failed -gt 0 ]; then
		echo "$TEST_NAME: logs kept in $TEST_DIR/logs" >&2
	fi
	echo "$TEST_NAME: $_passed passed, $_failed failed"
	if [ $_failed -gt 0 ]; then exit 1; fi
	exit $rc
}
trap _teardown EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

test_done() {
	_done=1
	[ $_passed -gt 0 ] || fail "no check ran"
	exit 0
}
