#!/bin/bash
# `make demo`: run the demo campaign on this machine, end to end.
#
# Starts the coordinator with its embedded PostgreSQL in a scratch data directory, one
# worker serving the CPU through OpenCL (PoCL), submits examples/demo/demo.json, shows
# the progress with `kgb status --watch`, prints `kgb report`, then stops the worker and
# the coordinator with SIGTERM and waits for them. Exits 0 when the campaign completed
# and the report printed.
#
# Environment: KGB_BIN (default build/rel/bin), KGB_DEMO_DIR (scratch directory; default
# a new one, removed afterwards unless KGB_DEMO_KEEP=1), KGB_DEMO_TIMEOUT (seconds for
# the campaign, default 900), KGB_DEMO_MANIFEST (default examples/demo/demo.json).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${KGB_BIN:-$ROOT/build/rel/bin}" && pwd)
MANIFEST=${KGB_DEMO_MANIFEST:-$ROOT/examples/demo/demo.json}
TIMEOUT=${KGB_DEMO_TIMEOUT:-900}

for b in kgb kgb-coordinator kgb-worker; do
	[ -x "$BIN/$b" ] || { echo "demo: $BIN/$b missing: run make first" >&2; exit 1; }
done
[ -f "$MANIFEST" ] || { echo "demo: $MANIFEST: no such file" >&2; exit 1; }

own_dir=0
if [ -n "${KGB_DEMO_DIR:-}" ]; then
	DIR=$KGB_DEMO_DIR
	mkdir -p "$DIR"
else
	DIR=$(mktemp -d "${TMPDIR:-/tmp}/kgb-demo.XXXXXX")
	own_dir=1
fi
DIR=$(cd "$DIR" && pwd)
# as root the embedded PostgreSQL runs as another user, who must reach the data dir
chmod 0755 "$DIR"

. "$ROOT/scripts/coord-up.sh"
# private endpoints and store: the demo never touches a kgb already running here
unset KGB_DATABASE_URL
export KGB_WORKER_ENDPOINT="tcp://127.0.0.1:$(kgb_free_port)"
export KGB_CLI_ENDPOINT="tcp://127.0.0.1:$(kgb_free_port)"
export KGB_CACHE_DIR=$DIR/cache
export POCL_CACHE_DIR=$DIR/pocl-cache

coord_pid=""
worker_pid=""
status=1

say() { printf 'demo: %s\n' "$*"; }

# stop PID NAME: SIGTERM, wait up to 30 s, then SIGKILL; returns its exit status
stop() {
	local pid=$1 name=$2 i rc=0
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		[ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" != Z ] || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null && [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" != Z ]; then
		say "$name did not stop within 30 s of SIGTERM; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || rc=$?
	return $rc
}

cleanup() {
	local rc=0
	trap - EXIT INT TERM
	if [ -n "$worker_pid" ]; then
		stop "$worker_pid" worker || rc=$?
		[ $rc -eq 0 ] || { say "worker exited with status $rc"; status=1; }
	fi
	rc=0
	if [ -n "$coord_pid" ]; then
		stop "$coord_pid" coordinator || rc=$?
		[ $rc -eq 0 ] || { say "coordinator exited with status $rc"; status=1; }
	fi
	say "stopped the worker and the coordinator"
	if [ $status -ne 0 ]; then
		for f in "$DIR/coordinator.log" "$DIR/worker.log"; do
			[ -f "$f" ] || continue
			echo "---- last lines of $f ----"
			tail -n 30 "$f"
		done
		say "logs kept in $DIR"
	elif [ $own_dir -eq 1 ] && [ "${KGB_DEMO_KEEP:-0}" != 1 ]; then
		# as root the embedded cluster lives outside the data dir, named in pg.location
		if [ -f "$DIR/store/pg.location" ]; then
			local pgbase; pgbase=$(head -n1 "$DIR/store/pg.location")
			case "$pgbase" in /var/lib/kgb/pg-*) rm -rf "$pgbase" ;; esac
		fi
		rm -rf "$DIR"
	else
		say "logs in $DIR"
	fi
	exit $status
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT TERM

say "scratch directory $DIR"
say "starting kgb-coordinator (embedded PostgreSQL in $DIR/store)"
"$BIN/kgb-coordinator" --data-dir "$DIR/store" >"$DIR/coordinator.log" 2>&1 &
coord_pid=$!
if ! kgb_coord_ready "$DIR/coordinator.log" "$coord_pid" 120; then
	wait "$coord_pid" || true
	coord_pid=""
	say "the coordinator did not start"
	exit 1
fi
say "coordinator ready, cluster $KGB_CLUSTER_ID (workers: $KGB_WORKER_ENDPOINT, CLI: $KGB_CLI_ENDPOINT)"

"$BIN/kgb-worker" --coordinator "$KGB_WORKER_ENDPOINT" --name demo-cpu >"$DIR/worker.log" 2>&1 &
worker_pid=$!
for ((i = 0; ; i++)); do
	"$BIN/kgb" workers 2>/dev/null | grep -q demo-cpu && break
	if ! kill -0 "$worker_pid" 2>/dev/null; then
		wait "$worker_pid" || true
		worker_pid=""
		say "the worker exited during start-up"
		exit 1
	fi
	if [ $i -ge 300 ]; then say "the worker did not register within 60 s"; exit 1; fi
	sleep 0.2
done
say "worker demo-cpu registered:"
"$BIN/kgb" platforms || true

say "submitting ${MANIFEST#"$ROOT"/}"
out=$("$BIN/kgb" submit "$MANIFEST") || { echo "$out"; say "kgb submit failed"; exit 1; }
echo "$out"
id=$(printf '%s\n' "$out" | grep -oiE 'campaign[^0-9]*[0-9]+' | head -n1 | grep -oE '[0-9]+$' || true)
[ -n "$id" ] || id=$(printf '%s\n' "$out" | grep -oE '[0-9]+' | head -n1 || true)
[ -n "$id" ] || { say "cannot read the campaign id from kgb submit's output"; exit 1; }

say "campaign $id: watching progress (kgb status $id --watch)"
rc=0
timeout "$TIMEOUT" "$BIN/kgb" status "$id" --watch || rc=$?
if [ $rc -eq 124 ]; then
	say "the campaign did not finish within $TIMEOUT s"
	"$BIN/kgb" status "$id" || true
	exit 1
elif [ $rc -ne 0 ]; then
	say "kgb status --watch failed (exit $rc)"
	exit 1
fi

echo
"$BIN/kgb" report "$id" || { say "kgb report failed"; exit 1; }
status=0
