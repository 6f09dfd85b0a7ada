# Sourced by the scripts that start their own kgb-coordinator (sh or bash):
#   kgb_free_port              a TCP port free on 127.0.0.1 now (the kernel's pick)
#   kgb_coord_ready LOG PID [SECONDS]
#                              wait for "kgb-coordinator: ready" in LOG; return 1, with
#                              the log's tail, when the coordinator PID exits first (an
#                              endpoint already bound by another coordinator, a store
#                              that does not start) or is not ready in SECONDS (default
#                              300). Exports KGB_CLUSTER_ID, the id from its ready line,
#                              so the script's worker and CLI refuse any other
#                              coordinator (docs/security.md, "Which coordinator").
kgb_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

kgb_coord_ready() {
	_kcr_n=$(( ${3:-300} * 10 ))
	while [ "$_kcr_n" -gt 0 ]; do
		if grep -q 'kgb-coordinator: ready' "$1" 2>/dev/null; then
			KGB_CLUSTER_ID=$(sed -n 's/^kgb-coordinator: ready (cluster \([0-9a-z]*\)).*/\1/p' "$1" | tail -n 1)
			export KGB_CLUSTER_ID
			return 0
		fi
		if ! kill -0 "$2" 2>/dev/null; then
			tail -n 20 "$1" >&2
			echo "kgb-coordinator (pid $2) exited before it was ready (log $1): nothing was started against another coordinator" >&2
			return 1
		fi
		sleep 0.1
		_kcr_n=$((_kcr_n - 1))
	done
	tail -n 20 "$1" >&2
	echo "kgb-coordinator (pid $2) not ready after ${3:-300} s (log $1)" >&2
	return 1
}
