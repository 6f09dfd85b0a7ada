#!/bin/sh
# step.sh NAME CMD...: run CMD, then print how long it took ("== step NAME: N s"), so
# that `make test` and .ci/run show where their time goes. Exits with CMD's status.
name=$1
shift
t0=$(date +%s)
rc=0
"$@" || rc=$?
if [ $rc -eq 0 ]; then
	echo "== step $name: $(($(date +%s) - t0)) s"
else
	echo "== step $name: $(($(date +%s) - t0)) s, failed (exit $rc)"
fi
exit $rc
