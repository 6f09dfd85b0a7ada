#!/bin/bash
# The coordinator against an external PostgreSQL (a cluster of scripts/pg-test.sh on
# TCP, given by KGB_DATABASE_URL): the first start applies every migration once, a
# second start applies none and finds the data of the first.
. "$(dirname "$0")/lib.sh"

PGDIR=$(mktemp -d /var/tmp/kgb-extpg.XXXXXX 2>/dev/null || mktemp -d)
rmdir "$PGDIR"
KGB_DATABASE_URL=$(sh "$KGB_ROOT/scripts/pg-test.sh" start --tcp "$PGDIR") || die "pg-test.sh start --tcp failed"
_pg_own_dir=$PGDIR
export KGB_DATABASE_URL
ok "external PostgreSQL at $KGB_DATABASE_URL"
nmig=$(ls "$KGB_ROOT"/coordinator/migrations/*.sql | wc -l)

start_coordinator coord
assert_eq "$(q "SELECT count(*) FROM schema_migrations")" "$nmig" "all $nmig migrations recorded after the first start"
check "no embedded cluster was created" test ! -e "$TEST_DIR/coord.data"
mig1=$(q "SELECT * FROM schema_migrations ORDER BY 1")

start_worker w1
wait_registered w1
make_manifest "$TEST_DIR/m.json" --methods baseline --ops gt --set timing_budget_ms=20
id=$(submit "$TEST_DIR/m.json")
wait_campaign "$id" 300
n1=$(results_count "$id")
check "results recorded in the external store" test "$n1" -gt 0
stop_checked w1
stop_checked coord

start_coordinator coord
assert_eq "$(q "SELECT * FROM schema_migrations ORDER BY 1")" "$mig1" "the second start applied no migration"
assert_eq "$(results_count "$id")" "$n1" "the results survive a restart"
kgb status "$id" >"$TEST_DIR/status.txt" || fail "kgb status $id after the restart"
check "the restarted coordinator knows campaign $id" grep -q "$id" "$TEST_DIR/status.txt"
stop_checked coord
test_done
