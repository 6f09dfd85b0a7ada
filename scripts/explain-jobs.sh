#!/bin/bash
# The plans of the scheduler's statements on jobs (docs/store.md, "Job updates"): a
# throwaway PostgreSQL (scripts/pg-test.sh) gets the coordinator's schema (its
# migrations, applied by a coordinator started once), then a 250,000-job campaign in
# progress (100,000 done, 1,000 running, 149,000 queued) next to 51 finished campaigns
# (500,000 jobs) (scripts/explain-jobs/store.sql); scripts/explain-jobs/explain.sql
# runs each statement as the coordinator does (generic plans) under EXPLAIN ANALYZE.
# The updates run in transactions that are rolled back. Usage: scripts/explain-jobs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
make -s all >/dev/null
url=$(sh scripts/pg-test.sh start)
W=$(mktemp -d "${TMPDIR:-/tmp}/kgb-explain.XXXXXX")
cpid=
trap '[ -n "$cpid" ] && kill "$cpid" 2>/dev/null; sh scripts/pg-test.sh stop "$url" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
. scripts/coord-up.sh
KGB_DATABASE_URL=$url KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) \
	build/rel/bin/kgb-coordinator >"$W/coord.log" 2>&1 &
cpid=$!
kgb_coord_ready "$W/coord.log" "$cpid" 120
kill "$cpid"
wait "$cpid" || true
cpid=
psql -XAtq -v ON_ERROR_STOP=1 "$url" -f scripts/explain-jobs/store.sql
psql -X -v ON_ERROR_STOP=1 "$url" -f scripts/explain-jobs/explain.sql | grep -v '^\(SET\|PREPARE\|BEGIN\|ROLLBACK\)$'
