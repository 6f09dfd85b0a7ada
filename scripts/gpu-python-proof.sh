#!/bin/bash
# Python + Triton modules on a GPU through the documented path only (docs/deploy.md,
# "Running from a bundle"; docs/python-candidates.md): the bundle of scripts/bundle.sh,
# its libraries and PostgreSQL unpacked, kgb-coordinator on the embedded store,
# kgb-worker started as the docs start it (no variable pointing at the recorder, the
# Triton helper, the library or a Python: whatever the calling shell had is removed),
# then
#   1. MODULE_DIR (KernelGenBench-format modules, one per ATen operator, named <op>.py,
#      aten::<op>.py or aten__<op>.py) laid out as an LLM-track run
#      (docs/kernelgenbench-layout.md), `kgb import kernelgenbench`, `kgb validate`;
#   2. the native baseline campaign of the same operators (PyTorch, every case);
#   3. the Python campaign over every case of those operators;
# each waited for in turn, and prints the cases passed per operator, the wall time of
# each campaign and their ratio, and the Python modules' speedups against the native
# timings the first campaign stored (`kgb results`, `kgb report`).
#
#   scripts/bundle.sh && <copy the tree and .bundle/> && scripts/gpu-python-proof.sh MODULE_DIR
#
# Options: --smoke (the smoke cases only), --slots N (the worker's, default 8),
# --backend B (default cuda; opencl tries the script on a CPU through PoCL), --budget MS
# (timing budget per case, default 50), --native-s S and --python-s S (deadline of each
# campaign, default 120 and 300: with the start-up the whole stays under 8 minutes),
# --ops A,B,... (only the modules of those operators, so that both campaigns can finish
# within one device call), --phase native|python with --store DIR (the two campaigns in
# two calls: `native` runs the native baseline and leaves DIR/native.dump, a pg_dump of
# the store, and DIR/native.wall; `python` restores them into its store before the
# Python campaign and compares as one call would; default: both in one call).
# KGB_BUNDLE names the bundle (default .bundle), OUT the log directory (default a fresh
# one), KGB_PROOF_PG where PostgreSQL is unpacked (default /opt/kgb-pg, as
# docs/deploy.md), KGB_PROOF_PORT the coordinator's worker port (CLI port + 1).
# Exit status 0 when the worker offered python and both campaigns finished in time
# (and, on a GPU, some case of the python campaign passed).
# A dry run here: PATH=<a venv with torch and triton>/bin:$PATH (its python3 plays the
# GPU machine's) scripts/gpu-python-proof.sh --smoke --backend opencl MODULE_DIR
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SMOKE=0 SLOTS=8 BACKEND=cuda BUDGET=50 NATIVE_S=120 PYTHON_S=300 OPS= PHASE=both STORE=
usage() {
	echo "usage: scripts/gpu-python-proof.sh [--smoke] [--slots N] [--backend B] [--budget MS] [--native-s S] [--python-s S] [--ops A,B,...] [--phase native|python --store DIR] MODULE_DIR" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) SMOKE=1; shift ;;
	--slots) SLOTS=$2; shift 2 ;;
	--backend) BACKEND=$2; shift 2 ;;
	--budget) BUDGET=$2; shift 2 ;;
	--native-s) NATIVE_S=$2; shift 2 ;;
	--python-s) PYTHON_S=$2; shift 2 ;;
	--ops) OPS=$2; shift 2 ;;
	--phase) PHASE=$2; shift 2 ;;
	--store) STORE=$2; shift 2 ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || usage
case $PHASE in
both) ;;
native | python)
	[ -n "$STORE" ] || { echo "gpu-python-proof: --phase $PHASE needs --store DIR" >&2; exit 2; }
	mkdir -p "$STORE" && STORE=$(cd "$STORE" && pwd) || exit 2
	if [ "$PHASE" = python ] && { ! [ -s "$STORE/native.dump" ] || ! [ -s "$STORE/native.wall" ]; }; then
		echo "gpu-python-proof: $STORE holds no native.dump and native.wall (run --phase native first)" >&2
		exit 2
	fi ;;
*) usage ;;
esac
MODS=$(cd "$1" 2>/dev/null && pwd) || { echo "gpu-python-proof: no directory $1" >&2; exit 2; }
B=$(cd "${KGB_BUNDLE:-$ROOT/.bundle}" 2>/dev/null && pwd) || { echo "gpu-python-proof: no bundle (run scripts/bundle.sh)" >&2; exit 2; }
for f in kgb kgb-coordinator kgb-worker lib.tar.xz pg.tar.xz pyrec/kgb_record.py triton_compile.py; do
	[ -e "$B/$f" ] || { echo "gpu-python-proof: the bundle $B lacks $f (run scripts/bundle.sh)" >&2; exit 2; }
done
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
T0=$(date +%s)
FAIL=0

# nothing the docs do not set: no recorder, helper, library or Python named by hand
unset KGB_PYREC KGB_PYREC_PYTHON KGB_TRITON_PYTHON KGB_TRITON_HELPER KGB_TRITON_PYTHONPATH \
	KGB_LIBRARY KGB_PYTHON KGB_PYTHONPATH KGB_WORKER_PYTHON KGB_CACHE_DIR

echo "== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "(no nvidia-smi)"
python3 -c 'import sys, torch, triton; print("python3", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -n1

echo "== the bundle, unpacked as docs/deploy.md says"
cd "$B"
[ -d lib ] || tar -xJf lib.tar.xz || exit 2
PG=${KGB_PROOF_PG:-/opt/kgb-pg}
# unpacked again when the bundle's server is newer than the one unpacked there
if [ ! -f "$PG/VERSION" ] || [ pg.tar.xz -nt "$PG/.unpacked" ]; then
	mkdir -p "$PG" && tar -C "$PG" -xJf pg.tar.xz && chmod -R a+rX "$PG" && touch "$PG/.unpacked" || exit 2
fi
export LD_LIBRARY_PATH=$PWD/lib:$PG/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KGB_PG_BINDIR=$PG/usr/lib/postgresql/$(cat "$PG/VERSION")/bin
. "$ROOT/scripts/coord-up.sh"
if [ -n "${KGB_PROOF_PORT:-}" ]; then
	export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$KGB_PROOF_PORT KGB_CLI_ENDPOINT=tcp://127.0.0.1:$((KGB_PROOF_PORT + 1))
else
	export KGB_WORKER_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port) KGB_CLI_ENDPOINT=tcp://127.0.0.1:$(kgb_free_port)
fi
./kgb-coordinator --data-dir "$OUT/data" >"$OUT/coordinator.log" 2>&1 &
CPID=$!
WPID=
# (a bare `wait` would wait for every child: each wait names its process)
trap 'if [ -n "$WPID" ]; then kill $WPID 2>/dev/null; wait $WPID 2>/dev/null; fi; kill $CPID 2>/dev/null; wait $CPID 2>/dev/null' EXIT
kgb_coord_ready "$OUT/coordinator.log" "$CPID" 60 || { echo "gpu-python-proof: FAIL (the coordinator did not start)"; exit 1; }
# the embedded store's socket directory (docs/store.md, "Inspecting the embedded store")
PGRUN="$(cat "$OUT/data/pg.location" 2>/dev/null || echo "$OUT/data/pg")/run"
if [ "$PHASE" = python ]; then
	# the native campaign of an earlier call, restored over the fresh store; the
	# coordinator is started again on it, as after any restart
	"$KGB_PG_BINDIR/pg_restore" -h "$PGRUN" -U kgb --clean --if-exists --no-owner -d kgb "$STORE/native.dump" ||
		{ echo "gpu-python-proof: FAIL (pg_restore of $STORE/native.dump)"; exit 1; }
	kill "$CPID" && wait "$CPID" 2>/dev/null
	# a log of its own: its ready line names the restored store's cluster id
	mv "$OUT/coordinator.log" "$OUT/coordinator-before-restore.log"
	./kgb-coordinator --data-dir "$OUT/data" >"$OUT/coordinator.log" 2>&1 &
	CPID=$!
	kgb_coord_ready "$OUT/coordinator.log" "$CPID" 60 ||
		{ echo "gpu-python-proof: FAIL (the coordinator did not start on the restored store)"; exit 1; }
	echo "== the native baseline restored from $STORE/native.dump"
fi
./kgb-worker --name gpu0 --backend "$BACKEND" --slots "$SLOTS" >"$OUT/worker.log" 2>&1 &
WPID=$!
cd "$ROOT"
K() { "$B/kgb" "$@"; }
# the worker says whether it records Python candidates once its probe has answered
for _ in $(seq 1 600); do grep -q 'python candidates:' "$OUT/worker.log" && break; sleep 0.2; done
line=$(grep -o 'python candidates: .*' "$OUT/worker.log" | head -n1)
echo "worker gpu0: ${line:-no word on python candidates after 120 s}"
case $line in
*"python candidates: offered"*) ;;
*) echo "gpu-python-proof: FAIL (the worker does not offer python)"; tail -n 20 "$OUT/worker.log"; exit 1 ;;
esac
PLAT=$(K workers --json 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin); ws = d["workers"] if isinstance(d, dict) else d
print(next(dv["platform"] for w in ws if w.get("name") == "gpu0" for dv in w.get("devices", [])))' 2>/dev/null)
[ -n "$PLAT" ] || { echo "gpu-python-proof: FAIL (worker gpu0 lists no device)"; K workers; exit 1; }
echo "platform: $PLAT"

echo "== the modules as an LLM-track run"
RUN=$OUT/llm_run
mkdir -p "$RUN/round_0"
for f in "$MODS"/*.py; do
	[ -f "$f" ] || continue
	n=$(basename "$f" .py)
	n=${n#aten::}
	n=${n#aten__}
	case ",$OPS," in ,,|*",$n,"*) ;; *) continue ;; esac
	cp "$f" "$RUN/round_0/aten::$n.py"
done
[ -n "$(ls "$RUN/round_0")" ] || { echo "gpu-python-proof: FAIL (no module in $MODS${OPS:+ of --ops $OPS})"; exit 1; }
printf '{"model_name": "modules", "max_rounds": 1, "dataset": "KernelGenBench", "test_type": "triton"}\n' >"$RUN/args.json"
K import kernelgenbench "$RUN" -o "$OUT/python.json" --method modules 2>"$OUT/import.err" ||
	{ cat "$OUT/import.err"; echo "gpu-python-proof: FAIL (kgb import)"; exit 1; }
cat "$OUT/import.err"
# every case (or the smoke cases), timed, on this platform; the native baseline of the
# same operators beside it
python3 - "$OUT" "$PLAT" "$SMOKE" "$BUDGET" "$NATIVE_S" "$PYTHON_S" <<'PY' || exit 2
import json, sys
out, plat, smoke, budget, native_s, python_s = sys.argv[1:]
m = json.load(open(out + "/python.json"))
ops = sorted({c["operator"] for meth in m["methods"] for c in meth["candidates"]})
common = {"platforms": [plat], "timing": True, "timing_budget_ms": int(budget), "shard_size": 32, "seed": 7}
if smoke == "1":
    common["cases"] = "smoke"
m.update(common, name="python-modules", time_limit_ms=int(python_s) * 1000)
json.dump(m, open(out + "/python.json", "w"), indent=1)
n = dict(common, name="native-baseline", operators=ops, time_limit_ms=int(native_s) * 1000,
         methods=[{"name": "torch", "native": True}])
json.dump(n, open(out + "/native.json", "w"), indent=1)
print("operators (%d): %s" % (len(ops), " ".join(ops)))
PY
K validate "$OUT/python.json" >"$OUT/validate.log" 2>&1 || FAIL=1
tail -n 3 "$OUT/validate.log"

# run MANIFEST DEADLINE: submit, wait (cancel at the deadline); prints "ID SECONDS";
# a campaign that fails to submit or finish leaves $OUT/failed
run() {
	local id t0 t1
	id=$(K submit "$1" 2>>"$OUT/submit.err" | sed -n 's/^campaign \([0-9][0-9]*\) .*/\1/p' | head -n1)
	[ -n "$id" ] || { echo "submitting $1 failed" >>"$OUT/failed"; echo "0 0"; return 1; }
	t0=$(date +%s.%N)
	if ! timeout "$2" "$B/kgb" status "$id" --watch >/dev/null 2>&1; then
		K cancel "$id" >/dev/null 2>&1
		echo "campaign $id did not finish in $2 s: cancelled" | tee -a "$OUT/failed" >&2
	fi
	t1=$(date +%s.%N)
	echo "$id $(python3 -c "print('%.1f' % ($t1 - $t0))")"
}
if [ "$PHASE" = python ]; then
	NID=$(K campaigns --json 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)
cs = d["campaigns"] if isinstance(d, dict) else d
print(max([c["id"] for c in cs if c.get("name") == "native-baseline"] or [""]))' 2>/dev/null)
	NWALL=$(cat "$STORE/native.wall")
	[ -n "$NID" ] || { echo "gpu-python-proof: FAIL (no native-baseline campaign in $STORE/native.dump)"; exit 1; }
	echo "== native baseline: campaign $NID of the earlier call, $NWALL s"
else
	echo "== native baseline campaign"
	read -r NID NWALL <<<"$(run "$OUT/native.json" "$NATIVE_S")"
fi
if [ "$PHASE" = native ]; then
	cat "$OUT/submit.err" 2>/dev/null
	[ -f "$OUT/failed" ] && FAIL=1
	K results "$NID" | tee "$OUT/native.results.txt"
	"$KGB_PG_BINDIR/pg_dump" -h "$PGRUN" -U kgb -Fc -f "$STORE/native.dump" kgb &&
		echo "$NWALL" >"$STORE/native.wall" || { echo "gpu-python-proof: pg_dump failed" >&2; FAIL=1; }
	[ -s "$STORE/native.dump" ] && echo "the store dumped to $STORE/native.dump ($(wc -c <"$STORE/native.dump") bytes), native wall $NWALL s"
	echo "gpu-python-proof: native phase $([ "$FAIL" = 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - T0)) s (logs in $OUT)"
	exit "$FAIL"
fi
echo "== python campaign"
read -r PID_ PWALL <<<"$(run "$OUT/python.json" "$PYTHON_S")"
cat "$OUT/submit.err" 2>/dev/null
[ -f "$OUT/failed" ] && FAIL=1

echo "== native baseline (campaign $NID)"
K results "$NID" | tee "$OUT/native.results.txt"
echo "== python modules (campaign $PID_), speedups against the stored native timings"
K report "$PID_" | tee "$OUT/python.report.txt"
K results "$PID_" --json >"$OUT/python.results.json" 2>/dev/null
K results "$NID" --json >"$OUT/native.results.json" 2>/dev/null
python3 - "$OUT" "$NWALL" "$PWALL" "$BACKEND" <<'PY' || FAIL=1
import json, sys
out, nwall, pwall, backend = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def rows(name):
    try:
        d = json.load(open("%s/%s.results.json" % (out, name)))
    except (OSError, ValueError):
        return []
    return d["rows"] if isinstance(d, dict) else d
py, nat = rows("python"), rows("native")
print("%-16s %14s %14s %9s" % ("operator", "python passed", "native passed", "speedup"))
nat_by = {r["op"]: r for r in nat}
tp = tt = 0
for r in sorted(py, key=lambda r: r["op"]):
    n = nat_by.get(r["op"], {})
    sp = r.get("speedup")
    tp += r["cases_passed"]; tt += r["cases_total"]
    print("%-16s %14s %14s %9s" % (r["op"], "%d/%d" % (r["cases_passed"], r["cases_total"]),
                                   "%d/%d" % (n.get("cases_passed", 0), n.get("cases_total", 0)),
                                   "%.2fx" % sp if sp else "-"))
print("PROOF cases passed %d/%d; wall python %.1f s, native %.1f s, ratio %.2f"
      % (tp, tt, pwall, nwall, pwall / nwall if nwall > 0 else float("nan")))
# a campaign cut off by its deadline ran only part of the set: the cost per case run
# compares the two (the target is the Python campaign at most 2x the native one)
pdone = sum(r.get("cases_done", 0) for r in py)
ndone = sum(r.get("cases_done", 0) for r in nat)
if pdone and ndone:
    print("PROOF-RATE python %d cases run in %.1f s (%.2f/s), native %d in %.1f s (%.2f/s): "
          "%.2fx the native wall time per case" % (pdone, pwall, pdone / pwall, ndone, nwall, ndone / nwall,
                                                    (pwall / pdone) / (nwall / ndone)))
# on the CPU no Triton binary is replayed (a dry run of the script); on a GPU a proof
# in which nothing passed is no proof
if backend != "opencl" and tp == 0:
    sys.exit("no case of the python campaign passed")
PY
echo "gpu-python-proof: $([ "$FAIL" = 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - T0)) s (logs in $OUT)"
exit "$FAIL"
