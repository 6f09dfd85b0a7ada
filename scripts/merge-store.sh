#!/bin/bash
# The cross-chip table over two machines that share no network: a GPU machine's store,
# dumped there (scripts/gpu-campaign.sh --dump FILE), restored here into a PostgreSQL of
# its own (scripts/pg-test.sh); a kgb-coordinator on it, a CPU worker (OpenCL, PoCL);
# the same manifest submitted again, so its candidates run on this machine's CPU as
# they ran on the GPU; then `kgb tables` over every campaign of the store, against the
# reference platform (docs/tables.md, "Across machines").
#
#   scripts/merge-store.sh [--reference BACKEND|PLATFORM] [--wait S] DUMP MANIFEST
#
# --reference defaults to cuda (a bare backend names its one platform). The tables go to
# $OUT/tables.{txt,json,html} ($OUT: default a fresh directory); the restored cluster is
# removed at the end. Exit status 0 when the CPU campaign finished and the tables were
# made.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REF=cuda WAIT_S=1200
while [ $# -gt 0 ]; do
	case "$1" in
	--reference) REF=$2; shift 2 ;;
	--wait) WAIT_S=$2; shift 2 ;;
	-*) echo "usage: scripts/merge-store.sh [--reference BACKEND|PLATFORM] [--wait S] DUMP MANIFEST" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || { echo "usage: scripts/merge-store.sh [--reference BACKEND|PLATFORM] [--wait S] DUMP MANIFEST" >&2; exit 2; }
DUMP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
MANIFEST=$2
[ -s "$DUMP" ] || { echo "merge-store: $DUMP: no such dump" >&2; exit 2; }
BIN=$ROOT/build/rel/bin
[ -x "$BIN/kgb-coordinator" ] || { echo "merge-store: build first (make)" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
. "$ROOT/scripts/coord-up.sh"

URL=$(scripts/pg-test.sh start) || exit 1
PGDIR=$(echo "$URL" | sed -n 's/.*host=\(.*\)$/\1/p')
CPID= WPID=
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
	[ -n "$CPID" ] && kill "$CPID" 2>/dev/null && wait "$CPID" 2>/dev/null
	scripts/pg-test.sh stop "$PGDIR" >/dev/null 2>&1
}
trap cleanup EXIT
PGB=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
# the dump holds the schema it was made with; the coordinator migrates it if older
"$PGB/pg_restore" --no-owner -d "$URL" "$DUMP" || { echo "merge-store: pg_restore of $DUMP failed" >&2; exit 1; }
echo "merge-store: restored $DUMP: campaigns $("$PGB/psql" -Atc "SELECT string_agg(id || ' ' || name, ', ' ORDER BY id) FROM campaigns" "$URL")"

export KGB_DATABASE_URL=$URL KGB_CONFIG_DIR=$OUT/config
export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port)
"$BIN/kgb-coordinator" >"$OUT/coordinator.log" 2>&1 &
CPID=$!
kgb_coord_ready "$OUT/coordinator.log" "$CPID" 120 || exit 1
"$BIN/kgb-worker" --name cpu0 --backend opencl >"$OUT/worker.log" 2>&1 &
WPID=$!
K() { "$BIN/kgb" "$@"; }
i=0
until K workers 2>/dev/null | grep -q cpu0; do
	i=$((i + 1))
	[ $i -lt 300 ] || { echo "merge-store: the CPU worker did not register" >&2; exit 1; }
	sleep 0.2
done
# the manifest again, on this machine's platform only: the GPU's platform is in the
# store but no worker of it is here, and its jobs would keep the campaign from ending
PLAT=$(K workers --json | python3 -c 'import json, sys
d = json.load(sys.stdin); ws = d["workers"] if isinstance(d, dict) else d
print(next(dv["platform"] for w in ws if w.get("name") == "cpu0" for dv in w.get("devices", [])))') ||
	{ echo "merge-store: the CPU worker lists no device" >&2; exit 1; }
HERE=$(dirname "$MANIFEST")/.merge-store.$$.json
python3 - "$MANIFEST" "$HERE" "$PLAT" <<'PY' || exit 1
import json, sys
m = json.load(open(sys.argv[1]))
m["platforms"] = [sys.argv[3]]
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
t0=$(date +%s)
id=$(K submit "$HERE" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
rm -f "$HERE"
[ -n "$id" ] || { echo "merge-store: submitting $MANIFEST failed" >&2; exit 1; }
timeout "$WAIT_S" "$BIN/kgb" status "$id" --watch >/dev/null || { echo "merge-store: campaign $id did not finish in $WAIT_S s" >&2; exit 1; }
echo "merge-store: CPU campaign $id finished in $(($(date +%s) - t0)) s"
case $REF in
*:*) ;;
*) REF=$(K platforms --json | python3 -c 'import json, sys
d = json.load(sys.stdin)
ps = d["platforms"] if isinstance(d, dict) else d
names = [p["name"] for p in ps if p["name"].split(":")[0] == sys.argv[1]]
print(names[0] if len(names) == 1 else sys.argv[1])' "$REF") ;;
esac
IDS=$("$PGB/psql" -Atc "SELECT string_agg(id::text, ' ' ORDER BY id) FROM campaigns" "$URL")
echo "== kgb tables $IDS --reference $REF"
# shellcheck disable=SC2086
K tables $IDS --reference "$REF" | tee "$OUT/tables.txt" &&
	K tables $IDS --reference "$REF" --json >"$OUT/tables.json" &&
	K tables $IDS --reference "$REF" --html "$OUT/tables.html" || exit 1
echo "merge-store: tables in $OUT"
