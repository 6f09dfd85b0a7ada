#!/bin/sh
# Campaigns on a GPU machine through the real daemons: the embedded PostgreSQL (the
# server carried in the bundle), kgb-coordinator, one CUDA kgb-worker, and the kgb CLI.
# For each manifest: submit, wait, then the report, the results, the wall time, the
# device's busy fraction as the worker counts it (`kgb workers`) and nvidia-smi's mean
# utilisation over the campaign.
#
#   scripts/bundle.sh && <copy the tree and .bundle/> && scripts/gpu-campaign.sh [--slots N] MANIFEST...
# (--slots N: the worker's slots; without it the worker sizes them from the machine, docs/worker.md)
# (MANIFEST@SECONDS waits that long for that campaign instead of --wait's figure;
# --backend opencl runs the same on a CPU, for trying the script without a GPU;
# --set KEY=JSON overrides a top-level field of every manifest, e.g. --set 'cases="smoke"',
# written as a copy beside the manifest so its relative paths still resolve;
# --cpu also starts a worker on the CPU's OpenCL device (PoCL), so candidates that run on
# both are measured on both; --tables PLATFORM ends with `kgb tables` over every
# campaign, the cross-chip table against PLATFORM (or a bare backend: its one platform),
# in $OUT/tables.{txt,json,html}; --dump FILE ends with a pg_dump -Fc of the whole store
# into FILE, to be restored elsewhere with scripts/merge-store.sh)
#
# Logs land in $OUT (default: a fresh temporary directory). Exit status 0 when every
# campaign finished (whatever its verdicts), 1 otherwise.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${KGB_BUNDLE:-$ROOT/.bundle}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
SLOTS=
BACKEND=${KGB_GPU_BACKEND:-cuda}
WAIT_S=${KGB_GPU_CAMPAIGN_WAIT_S:-480}
while [ $# -gt 0 ]; do
	case "$1" in
	--slots) SLOTS=$2; shift 2 ;;
	--wait) WAIT_S=$2; shift 2 ;;
	--backend) BACKEND=$2; shift 2 ;;
	--set) SETS="${SETS:-} $2"; shift 2 ;;
	--cpu) CPU=1; shift ;;
	--tables) TABLES_REF=$2; shift 2 ;;
	--dump) DUMP=$2; shift 2 ;;
	-*) echo "usage: scripts/gpu-campaign.sh [--slots N] [--wait S] [--backend B] [--set KEY=JSON]... [--cpu] [--tables PLATFORM] [--dump FILE] MANIFEST..." >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -x "$B/kgb-worker" ] || { echo "gpu-campaign: no bundle at $B: run scripts/bundle.sh first" >&2; exit 2; }
. "$ROOT/scripts/gpu-env.sh"
gpu_store || exit 2
export LD_LIBRARY_PATH="$KGB_BUNDLE_LIB:$KGB_PG_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KGB_CACHE_DIR="${KGB_CACHE_DIR:-$(mktemp -d)}"
. "$ROOT/scripts/coord-up.sh"
# KGB_GPU_PORT: the worker port (CLI: + 1); else ports the kernel picks
if [ -n "${KGB_GPU_PORT:-}" ]; then
	export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$KGB_GPU_PORT KGB_CLI_ENDPOINT=tcp://127.0.0.1:$((KGB_GPU_PORT + 1))
else
	export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port)
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K() { "$B/kgb" "$@"; }
FAIL=0

"$B/kgb-coordinator" --data-dir "$OUT/data" >"$OUT/coordinator.log" 2>&1 &
CPID=$!
kgb_coord_ready "$OUT/coordinator.log" "$CPID" || { echo "gpu-campaign: FAIL (no coordinator of its own)" >&2; exit 1; }
# every executor's holds of the device lock, for scripts/devlock-trace.py (DEVLOCK lines)
export KGB_DEVLOCK_TRACE="$OUT/devlock.trace"
: >"$KGB_DEVLOCK_TRACE"
# without --slots the worker sizes its slots from the machine (docs/worker.md)
"$B/kgb-worker" --name gpu0 --backend "$BACKEND" ${SLOTS:+--slots "$SLOTS"} >"$OUT/worker.log" 2>&1 &
WPID=$!
CPUPID=
if [ -n "${CPU:-}" ]; then
	"$B/kgb-worker" --name cpu0 --backend opencl >"$OUT/worker-cpu.log" 2>&1 &
	CPUPID=$!
fi
IDS=
cleanup() {
	kill "$WPID" $CPUPID 2>/dev/null
	wait "$WPID" $CPUPID 2>/dev/null
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
}
trap cleanup EXIT
i=0
until K workers 2>/dev/null | grep -q gpu0; do
	i=$((i + 1))
	if [ "$i" -gt 120 ] || ! kill -0 "$CPID" 2>/dev/null; then
		echo "gpu-campaign: the coordinator or worker did not come up" >&2
		tail -n 20 "$OUT/coordinator.log" "$OUT/worker.log"
		exit 1
	fi
	sleep 1
done
# the slots the worker runs: --slots, else what it sized from the machine
[ -n "$SLOTS" ] || SLOTS=$(K workers --json 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin); ws = d["workers"] if isinstance(d, dict) else d
print(sum(dv.get("slots", 1) for w in ws if w.get("name") == "gpu0" for dv in w.get("devices", [])) or 1)' 2>/dev/null || echo 1)
echo "== daemons up: embedded store, coordinator, worker gpu0 ($SLOTS slots)"
# a standing worker has its pre-warmed executors open before a campaign comes: on a GPU
# wait (30 s at most) until each of the --slots executors has opened the device, which
# it does holding the lock (a line in the lock's trace), so that the campaign's figures
# are those of a worker in service rather than of one starting
if [ "$BACKEND" != opencl ]; then
	i=0
	while [ "$i" -lt 300 ] && [ "$(cat "$KGB_DEVLOCK_TRACE" 2>/dev/null | wc -l)" -lt "$SLOTS" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "== $(cat "$KGB_DEVLOCK_TRACE" 2>/dev/null | wc -l) executor(s) opened the device before the first campaign"
fi
K workers

for m in "$@"; do
	wait_s=$WAIT_S
	case "$m" in
	*@[0-9]*) wait_s=${m##*@}; m=${m%@*} ;;
	esac
	name=$(basename "$m" .json)
	if [ -n "${SETS:-}" ]; then
		d="$(dirname "$m")/.$name.gpu.json"
		python3 - "$m" "$d" $SETS <<'PY' || { FAIL=1; continue; }
import json, sys
m = json.load(open(sys.argv[1]))
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    m[k] = json.loads(v)
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
		m=$d
	fi
	echo "== campaign $m"
	nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 250 >"$OUT/$name.smi" 2>/dev/null &
	SPID=$!
	K workers --json >"$OUT/$name.workers0.json" 2>&1
	tl0=$(wc -l <"$KGB_DEVLOCK_TRACE")
	t0=$(date +%s.%N)
	sub=$(K submit "$m" 2>&1)
	echo "$sub"
	id=$(printf '%s\n' "$sub" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
	if [ -z "$id" ]; then
		kill "$SPID" 2>/dev/null
		FAIL=1
		continue
	fi
	IDS="$IDS $id"
	if ! timeout "$wait_s" "$B/kgb" status "$id" --watch --interval 5 >"$OUT/$name.watch" 2>&1; then
		echo "campaign $id: not finished after $wait_s s"
		FAIL=1
	fi
	t1=$(date +%s.%N)
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	K status "$id"
	K report "$id" | tee "$OUT/$name.report"
	K results "$id" --json >"$OUT/$name.results.json" 2>&1
	# the worker's load reaches the coordinator with its next heartbeat, which can come
	# after the last result: wait (10 s at most) until it counts the campaign's jobs
	njobs=$(printf '%s\n' "$sub" | sed -n 's/.* \([0-9][0-9]*\) jobs.*/\1/p' | head -n1)
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		K workers --json >"$OUT/$name.workers.json" 2>&1
		python3 - "$OUT/$name.workers0.json" "$OUT/$name.workers.json" "${njobs:-0}" <<'PY' && break
import json, sys
def jobs(p):
    try:
        w = json.load(open(p))
    except (OSError, ValueError):
        return 0
    ws = w.get("workers", w) if isinstance(w, dict) else w
    return sum((d.get("load") or {}).get("jobs", 0) for x in ws for d in x.get("devices", []))
sys.exit(0 if jobs(sys.argv[2]) - jobs(sys.argv[1]) >= int(sys.argv[3]) else 1)
PY
		sleep 1
	done
	K workers
	# the worker's own figures over this campaign: what its counters grew by, over the
	# time the device had work
	# and where the executors' time went (the jobs' phases, summed by the worker): the
	# exclusive phase is the device's timing work; its sum over the wall time bounds how
	# busy the device can be with this much timing to do
	python3 - "$OUT/$name.workers0.json" "$OUT/$name.workers.json" "$id" "$t0" "$t1" <<'PY'
import json, sys
def load(p):
    try:
        w = json.load(open(p))
    except (OSError, ValueError):
        return {}
    ws = w.get("workers", w) if isinstance(w, dict) else w
    return {(x["name"], d["index"]): d.get("load") or {} for x in ws for d in x.get("devices", [])}
a, b = load(sys.argv[1]), load(sys.argv[2])
for k, l in b.items():
    l0 = a.get(k, {})
    d = lambda f: l.get(f, 0) - l0.get(f, 0)
    act = d("active_ms")
    if act <= 0:
        continue
    nv = "%.1f%%" % (100 * d("nvml_ms") / act) if l.get("nvml_ms", 0) > 0 else "n/a"
    print("WORKER campaign=%s device=%s:%d active_s=%.1f kernels=%.1f%% occupied=%.1f%% nvml=%s jobs=%d"
          % (sys.argv[3], k[0], k[1], act / 1e3, 100 * d("device_ms") / act, 100 * d("occupied_ms") / act,
             nv, d("jobs")))
    p, p0 = l.get("phases") or {}, l0.get("phases") or {}
    if p:
        s = lambda f: (p.get(f, 0) - p0.get(f, 0)) / 1e3
        wall = float(sys.argv[5]) - float(sys.argv[4])
        print("PHASES campaign=%s device=%s:%d jobs=%d open_s=%.1f prepare_s=%.1f waits_s=%.1f shared_s=%.1f "
              "compare_s=%.1f exclusive_s=%.1f occupied_s=%.1f exclusive/wall=%.1f%%"
              % (sys.argv[3], k[0], k[1], d("jobs"), s("open_ms"), s("prepare_ms"), s("lock_wait_ms"), s("shared_ms"),
                 s("compare_ms"), s("exclusive_ms"), d("occupied_ms") / 1e3, 100 * s("exclusive_ms") / wall))
PY
	# the device lock's holds over the campaign: exclusive (timing), shared only, none
	tail -n +"$((tl0 + 1))" "$KGB_DEVLOCK_TRACE" >"$OUT/$name.devlock"
	[ -s "$OUT/$name.devlock" ] && python3 "$ROOT/scripts/devlock-trace.py" "$OUT/$name.devlock"
	awk -v t0="$t0" -v t1="$t1" -v id="$id" '
		$1 ~ /^[0-9]+$/ { s += $1; n++; if ($1 > 0) busy++ }
		END { printf "CAMPAIGN id=%s wall_s=%.1f nvidia_smi_util_mean=%.1f%% samples_nonzero=%.1f%% (n=%d)\n",
		      id, t1 - t0, n ? s / n : -1, n ? 100 * busy / n : -1, n }' "$OUT/$name.smi"
done
if [ -n "${TABLES_REF:-}" ] && [ -n "$IDS" ]; then
	# a bare backend (--tables cuda) names that backend's one platform
	case $TABLES_REF in
	*:*) ;;
	*) TABLES_REF=$(K platforms --json | python3 -c 'import json, sys
b = sys.argv[1]
d = json.load(sys.stdin)
ps = d["platforms"] if isinstance(d, dict) else d
names = [p["name"] for p in ps if p["name"].split(":")[0] == b]
print(names[0] if len(names) == 1 else b)' "$TABLES_REF") ;;
	esac
	echo "== kgb tables$IDS --reference $TABLES_REF"
	# shellcheck disable=SC2086
	{ K tables $IDS --reference "$TABLES_REF" | tee "$OUT/tables.txt" &&
	  K tables $IDS --reference "$TABLES_REF" --json >"$OUT/tables.json" &&
	  K tables $IDS --reference "$TABLES_REF" --html "$OUT/tables.html"; } || FAIL=1
fi
if [ -n "${DUMP:-}" ]; then
	# the embedded store's socket directory (docs/store.md, "Inspecting the embedded store")
	PGRUN="$(cat "$OUT/data/pg.location" 2>/dev/null || echo "$OUT/data/pg")/run"
	"$KGB_PG_BINDIR/pg_dump" -h "$PGRUN" -U kgb -Fc -f "$DUMP" kgb || { echo "gpu-campaign: pg_dump failed" >&2; FAIL=1; }
	[ -s "$DUMP" ] && echo "gpu-campaign: the store dumped to $DUMP ($(wc -c <"$DUMP") bytes)"
fi
echo "gpu-campaign: $([ "$FAIL" = 0 ] && echo PASS || echo FAIL) (logs in $OUT)"
exit "$FAIL"
