#!/bin/bash
# Prometheus metrics (docs/metrics.md): the coordinator serves /metrics over HTTP on
# KGB_METRICS_ENDPOINT. Scraped with curl during a campaign: jobs by platform and
# state, live workers, store latency; a worker killed mid-job shows as an expired
# lease; at the end the recorded-results counter equals the store's result rows and
# the stored job counts equal the store's. A bad endpoint stops the coordinator with
# an error naming it; other paths get 404.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || die "curl is not installed (scripts/deps.sh)"
db_init

# a bad endpoint is refused at start, naming the variable and the value
KGB_METRICS_ENDPOINT=127.0.0.1:notaport "$KGB_BIN/kgb-coordinator" >"$TEST_DIR/bad.log" 2>&1 && rc=0 || rc=$?
check "a bad KGB_METRICS_ENDPOINT stops the coordinator (exit $rc)" test "$rc" -ne 0
check "the error names KGB_METRICS_ENDPOINT and the value" \
	grep -q "KGB_METRICS_ENDPOINT.*notaport" "$TEST_DIR/bad.log"

port=$(free_port)
export KGB_METRICS_ENDPOINT=127.0.0.1:$port KGB_LEASE_MS=2000
start_coordinator coord
url=http://127.0.0.1:$port/metrics
check "the coordinator logs where the metrics are served" grep -q "metrics: .*http://127.0.0.1:$port/metrics" "$(log_of coord)"
scrape() { curl -fsS --max-time 5 "$url"; }
# metric NAME_WITH_LABELS: its value in a fresh scrape (empty if absent)
metric() { scrape | awk -v k="$1" '$1 == k {print $2}'; }
# metric_is NAME OP VALUE: a fresh scrape's NAME compares (test OP) to VALUE; for wait_for
# wait_ok SECS DESC CMD...: wait_for, then record DESC as a passed check
wait_ok() { wait_for "$@"; ok "$2"; }
metric_is() { local v; v=$(metric "$1"); [ -n "$v" ] && [ "$v" "$2" "$3" ]; }

scrape >"$TEST_DIR/m0.txt" || die "curl $url failed"
check "text exposition format: HELP and TYPE lines" grep -q '^# TYPE kgb_jobs gauge' "$TEST_DIR/m0.txt"
assert_eq "$(awk '$1 == "kgb_workers{state=\"alive\"}" {print $2}' "$TEST_DIR/m0.txt")" 0 "no worker yet"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")
assert_eq "$code" 404 "another path is 404"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")
assert_eq "$code" 405 "POST is refused"

start_worker w1
wait_registered w1
wait_ok 10 "the metrics count one live worker" metric_is 'kgb_workers{state="alive"}' = 1

make_manifest "$TEST_DIR/m.json" --methods baseline --ops clone,index_select \
	--set time_limit_ms=30000 --set timing_budget_ms=50 --name metrics
id=$(submit "$TEST_DIR/m.json")
plat=$(q "SELECT p.name FROM jobs j JOIN platforms p ON p.id = j.platform_id WHERE j.campaign_id = $id LIMIT 1")

# during the campaign: a running job shows under its platform
wait_ok 60 "a running job in kgb_jobs{platform=\"$plat\",state=\"running\"}" \
	metric_is "kgb_jobs{platform=\"$plat\",state=\"running\"}" -ge 1
scrape >"$TEST_DIR/m1.txt"
open=$(awk -v p="$plat" 'index($1, "kgb_jobs{platform=\"" p "\"") == 1 {s += $2} END {print s + 0}' "$TEST_DIR/m1.txt")
check "open jobs counted during the campaign ($open)" test "$open" -ge 1
check "the store latency histogram has probes" \
	test "$(awk '$1 == "kgb_store_latency_seconds_count" {print $2}' "$TEST_DIR/m1.txt")" -ge 1
assert_eq "$(awk '$1 == "kgb_store_connected" {print $2}' "$TEST_DIR/m1.txt")" 1 "the store is connected"

# kill the worker holding a job: its lease expires (KGB_LEASE_MS=2000)
kill_proc w1 KILL
wait_ok 20 "kgb_leases_expired_total counts the expired lease" metric_is kgb_leases_expired_total -ge 1
wait_ok 20 "the dead worker is counted lost" metric_is 'kgb_workers{state="lost"}' = 1
start_worker w2
wait_registered w2
wait_campaign "$id" 400

# at the end: counters agree with the store
stored=$(results_count "$id")
wait_ok 5 "kgb_case_results_recorded_total = result rows in the store ($stored)" \
	metric_is kgb_case_results_recorded_total = "$stored"
done_jobs=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $id AND state = 'done'")
wait_ok 15 "kgb_jobs_stored{state=\"done\"} = done jobs in the store ($done_jobs)" \
	metric_is "kgb_jobs_stored{platform=\"$plat\",state=\"done\"}" = "$done_jobs"
assert_eq "$(metric "kgb_jobs{platform=\"$plat\",state=\"queued\"}")" 0 "no job open after the campaign"
check "scrapes are counted" test "$(metric kgb_metrics_scrapes_total)" -ge 5

# the benchmark's figures per campaign, method and platform: the overall row of
# `kgb tables ID` (one table function feeds both)
kgb tables "$id" --json >"$TEST_DIR/t.json" || die "kgb tables $id --json failed"
row=$(python3 -c 'import json, sys
r = [x for x in json.load(open(sys.argv[1]))["summary"] if x["source"] == "all" and x["method"] == "baseline"][0]
print(r["operators"], r["passed"], "%.6f" % r["accuracy"])' "$TEST_DIR/t.json")
set -- $row
lbl="{campaign=\"$id\",method=\"baseline\",platform=\"$plat\"}"
wait_ok 25 "kgb_method_operators$lbl = $1 (kgb tables)" metric_is "kgb_method_operators$lbl" = "$1"
assert_eq "$(metric "kgb_method_operators_passed$lbl")" "$2" "kgb_method_operators_passed = kgb tables' passed"
assert_eq "$(printf '%.6f' "$(metric "kgb_method_accuracy$lbl")")" "$3" "kgb_method_accuracy = kgb tables' accuracy"
check "the campaign's operators are both counted" test "$1" -eq 2

stop_checked w2
stop_checked coord
test_done
