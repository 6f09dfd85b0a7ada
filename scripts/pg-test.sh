#!/bin/sh
# A throwaway PostgreSQL cluster for tests.
#
#   scripts/pg-test.sh start [--tcp] [DIR]   create and start a cluster in DIR (default: a new
#                                            directory under /var/tmp, or $TMPDIR when not
#                                            root); prints its connection URL on stdout
#   scripts/pg-test.sh stop DIR|URL          stop it and remove DIR
#   scripts/pg-test.sh url DIR               print the URL again
#
# The cluster listens on a Unix socket in DIR only (no TCP), or with --tcp on 127.0.0.1
# and a free port. Authentication is "trust" for the superuser kgb, which owns the
# database kgb. As root the server runs as the `postgres` user (PostgreSQL refuses to
# run as root); DIR is then owned by that user.
set -eu

die() { echo "pg-test.sh: $*" >&2; exit 1; }

pgbin() {
	# the newest installed server, else whatever is on PATH
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
		if [ -x "$d/initdb" ]; then echo "$d"; return; fi
	done
	p=$(command -v initdb 2>/dev/null) || die "initdb not found (install the postgresql package: scripts/deps.sh)"
	dirname "$p"
}

# run a command as the cluster's owner
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd_start() {
	tcp=0
	if [ "${1:-}" = --tcp ]; then tcp=1; shift; fi
	dir=${1:-}
	if [ -z "$dir" ]; then
		if [ "$(id -u)" -eq 0 ]; then
			dir=$(mktemp -d /var/tmp/kgb-pg.XXXXXX)
		else
			dir=$(mktemp -d "${TMPDIR:-/tmp}/kgb-pg.XXXXXX")
		fi
	else
		mkdir -p "$dir"
	fi
	dir=$(cd "$dir" && pwd)
	# the Unix socket path must fit in sun_path (107 bytes)
	[ ${#dir} -le 80 ] || die "$dir: path too long for a Unix socket directory (max 80 characters)"
	[ ! -e "$dir/data/PG_VERSION" ] || die "$dir: a cluster already exists there"
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 || die "user postgres does not exist (install the postgresql package)"
		chown postgres: "$dir"
		chmod 0755 "$dir"
	fi
	bin=$(pgbin)
	if ! as_owner "$bin/initdb" -D "$dir/data" -U kgb --auth=trust -E UTF8 --locale=C.UTF-8 \
		--no-sync >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		die "initdb failed in $dir/data"
	fi
	if [ $tcp -eq 1 ]; then
		port=$(free_port)
		listen="-c listen_addresses=127.0.0.1 -c port=$port"
		url="postgresql://kgb@127.0.0.1:$port/kgb"
	else
		port=5432
		listen="-c listen_addresses="
		url="postgresql://kgb@/kgb?host=$dir"
	fi
	# small and fast: this cluster holds test data only
	if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "$listen -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50 -c shared_buffers=32MB" \
		start >/dev/null; then
		cat "$dir/server.log" >&2 || true
		die "pg_ctl start failed in $dir/data"
	fi
	if [ $tcp -eq 1 ]; then
		host=127.0.0.1
	else
		host=$dir
	fi
	as_owner "$bin/createdb" -h "$host" -p "$port" -U kgb kgb || die "createdb kgb failed"
	echo "$url" > "$dir/url"
	[ "$(id -u)" -ne 0 ] || chown postgres: "$dir/url"
	echo "$url"
}

# DIR from a DIR or a URL we printed
dir_of() {
	case "$1" in
	postgres*://*host=/*) d=${1##*host=}; d=${d%%&*}; echo "$d" ;;
	postgres*://*)
		die "$1: stop a TCP cluster by its directory, not its URL" ;;
	*) echo "$1" ;;
	esac
}

cmd_stop() {
	[ $# -eq 1 ] || die "usage: pg-test.sh stop DIR|URL"
	dir=$(dir_of "$1")
	[ -f "$dir/data/PG_VERSION" ] || die "$dir: not a cluster made by pg-test.sh (no data/PG_VERSION)"
	bin=$(pgbin)
	as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
		as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}

case "${1:-}" in
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
url) [ $# -eq 2 ] || die "usage: pg-test.sh url DIR"; cat "$2/url" ;;
*) die "usage: pg-test.sh start [--tcp] [DIR] | stop DIR|URL | url DIR" ;;
esac
