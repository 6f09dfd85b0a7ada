#!/bin/bash
# kgb verify for agents (docs/agents.md) against a real coordinator, PostgreSQL and CPU
# worker:
#  - the agent loop tests/agent/agent_loop.py edits floor's kernel three times (a
#    compile error, a kernel that takes every tensor as contiguous, the correct one),
#    calling `kgb verify --json` after each until it passes: the answers name the
#    failing cases with their messages, the log holds the compiler's error, the exit
#    status follows the answer, only the dev cases run and no answer carries a seed or
#    a held-out case;
#  - interactive priority: the loop runs while a batch campaign of 60 one-case jobs,
#    submitted first, waits for the same one-slot worker, and its verifies are answered
#    while that campaign still has queued jobs (in submission order they would wait for
#    all of them);
#  - `kgb import kernelgenbench --versions` of a Claude Code log of that loop gives one
#    candidate per verified version (the coordinator's copy), with the tokens spent
#    since the previous answer;
#  - a plan kgb refuses before it runs gets an answer naming the file and the field.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1
wait_registered w1

# ---- a batch campaign in the queue ----
# 60 one-case jobs of add (the demo's plan), submitted first
python3 - "$KGB_ROOT" "$TEST_DIR/batch.json" <<'PY'
import json, sys
root, out = sys.argv[1], sys.argv[2]
plan = json.load(open(root + "/examples/demo/baseline/add.plan.json"))
src = open(root + "/examples/demo/baseline/add.cl").read()
cand = {"operator": "add", "plan": plan, "sources": {"add.cl": {"inline": src}}, "cases": list(range(60))}
json.dump({"name": "batch", "operators": ["add"], "shard_size": 1, "timing": False,
           "methods": [{"name": "batch", "candidates": [cand]}]}, open(out, "w"))
PY
batch=$(submit "$TEST_DIR/batch.json")
wait_for 60 "the batch's first job running" \
	test "$(q "SELECT count(*) FROM jobs WHERE campaign_id = $batch AND state <> 'queued'")" -gt 0

# ---- the agent loop, while the batch waits ----
# floor's plan and three versions of its kernel, the last one examples/aten/floor.cl
mkdir -p "$TEST_DIR/floor" "$TEST_DIR/edits"
cp "$KGB_ROOT/examples/aten/floor.plan.json" "$TEST_DIR/floor/plan.json"
python3 - "$KGB_ROOT/examples/aten/floor.cl" "$TEST_DIR/edits" <<'PY'
import sys
src = open(sys.argv[1]).read()
store = "STORE_out(out, it.off[1], FN(LOAD_self(self, it.off[0])));"
loop = "\tfor (int k = 0; k < EPT && base + k < n; k++) {\n\t\t" + store + "\n\t\tkgb_it_next(&it);\n\t}"
assert store in src and loop in src
edits = {
    "v1_broken.cl": ("attempt 1: a missing semicolon", src.replace(store, store[:-1])),
    "v2_contiguous.cl": ("attempt 2: every tensor taken as contiguous",
                         src.replace(loop, "\tfor (int k = 0; k < EPT && base + k < n; k++)\n"
                                           "\t\tSTORE_out(out, base + k, FN(LOAD_self(self, base + k)));")),
    "v3_correct.cl": ("attempt 3: examples/aten/floor.cl", src)}
for name, (what, text) in edits.items():
    open(sys.argv[2] + "/" + name, "w").write("/* %s */\n%s" % (what, text))
PY
rc=0
"$KGB_PY" "$KGB_ROOT/tests/agent/agent_loop.py" --kgb "$KGB_BIN/kgb" --verify-args=--no-timing --transcript "$TEST_DIR/transcript.jsonl" \
	"$TEST_DIR/floor/floor.cl" "$TEST_DIR/edits/v1_broken.cl" "$TEST_DIR/edits/v2_contiguous.cl" \
	"$TEST_DIR/edits/v3_correct.cl" \
	2>"$TEST_DIR/agent.err" || rc=$?
assert_eq "$rc" 0 "the agent loop reaches a passing candidate"
queued=$(q "SELECT count(*) FROM jobs WHERE campaign_id = $batch AND state = 'queued'")
check "its three verifies were answered while $queued of the batch's 60 jobs were still queued" test "$queued" -gt 0
kgb cancel "$batch" >/dev/null || die "kgb cancel $batch failed"
plat=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["platform"])' \
	"$TEST_DIR/transcript.jsonl")
ncases=$(kgb ops --json | python3 -c 'import json,sys; print([o["cases"] for o in json.load(sys.stdin)["operators"] if o["name"]=="floor"][0])')
python3 - "$TEST_DIR/transcript.jsonl" "$ncases" >"$TEST_DIR/loop.txt" <<'PY' || fail "the agent loop's answers (see below)"
import json, sys
answers = [json.loads(l) for l in open(sys.argv[1])]
ncases = int(sys.argv[2])
def need(c, what):
    print(("ok   " if c else "FAIL ") + what)
need(len(answers) == 3, "three attempts, the last one passing (got %d)" % len(answers))
a1, a2, a3 = (answers + [{}, {}, {}])[:3]
dev = a3.get("dev_cases", [])
need(len(dev) > 0 and len(dev) < ncases and all(0 <= i < ncases for i in dev) and dev == sorted(set(dev)),
     "the dev cases are a proper subset of floor's %d cases: %s" % (ncases, dev))
need(all(a.get("dev_cases") == dev for a in answers), "every attempt runs the same dev cases")
need(a1.get("passed") is False and a1.get("exit_status") == 6, "attempt 1 fails with exit status 6")
v1 = {f["verdict"] for f in a1.get("failures", [])}
need(v1 == {"compile_error"} and a1["cases"]["passed"] == 0 and len(a1["failures"]) == len(dev),
     "attempt 1: every dev case is a compile_error (%s)" % sorted(v1))
need("error" in a1.get("log", "").lower() and "floor" in a1.get("log", ""),
     "attempt 1: the log excerpt holds the compiler's error")
f2 = a2.get("failures", [])
need(a2.get("passed") is False and a2.get("exit_status") == 6 and 0 < a2["cases"]["passed"] < len(dev)
     and len(f2) == len(dev) - a2["cases"]["passed"],
     "attempt 2 passes some dev cases and fails the others (%s of %d pass)" % (a2.get("cases"), len(dev)))
need(all(f["verdict"] in ("wrong_result", "out_of_bounds_write", "unwritten_output") and f["message"] and f["name"]
         for f in f2), "attempt 2: each failing case has its parameters and a message (%s)"
     % sorted({f["verdict"] for f in f2}))
need(all("layout=contig" not in f["name"] for f in f2), "attempt 2: the failing cases are non-contiguous ones")
need(a3.get("passed") is True and a3.get("exit_status") == 0 and a3["cases"]["passed"] == len(dev)
     and a3["cases"]["total"] == len(dev) and a3.get("failures") == [],
     "attempt 3 passes every dev case and exits 0")
need(len({a["campaign_id"] for a in answers}) == 3, "each attempt is a campaign of its own")
text = open(sys.argv[1]).read()
need("seed 0x" not in text and not any(k for a in answers for k in a if "seed" in k or "held" in k),
     "no answer carries a seed (the log's are withheld) or a held-out case")
PY
while read -r line; do
	case "$line" in
	ok*) ok "${line#ok   }" ;;
	*) fail "${line#FAIL }" ;;
	esac
done <"$TEST_DIR/loop.txt"
ids=$(python3 -c 'import json,sys; print(",".join(str(json.loads(l)["campaign_id"]) for l in open(sys.argv[1])))' \
	"$TEST_DIR/transcript.jsonl")
assert_eq "$(q "SELECT count(*) FROM campaigns WHERE id IN ($ids) AND heldout = 0 AND partial")" 3 \
	"the verify campaigns have no held-out cases and count as partial (never the benchmark's result)"
assert_eq "$(q "SELECT DISTINCT priority FROM campaigns WHERE id IN ($ids)")" 2000000 \
	"the verify campaigns run at interactive priority, above any a manifest can ask for"
assert_eq "$(q "SELECT priority FROM campaigns WHERE id = $batch")" 0 "the batch keeps its own priority"

# ---- the agent's log: one candidate per verified version ----
# a Claude Code log of the loop above, killed before its result: each answer read back
# as a tool result, msg_2 streamed twice, a wrap-up message after the last answer
run=$TEST_DIR/agent_run
mkdir -p "$run/kernels" "$run/workspaces/aten__floor"
echo '# the final module: --versions imports the verified versions instead' >"$run/kernels/aten__floor.py"
printf 'method: claude_code\nmodel: model-z\n' >"$run/config.yaml"
python3 - "$TEST_DIR/transcript.jsonl" "$run/workspaces/aten__floor/cc_output.jsonl" <<'PY'
import json, sys
answers = [l.rstrip("\n") for l in open(sys.argv[1])]
def asst(mid, **u):
    return {"type": "assistant", "message": {"id": mid, "usage": u, "content": [
        {"type": "tool_use", "name": "Bash", "input": {"command": "kgb verify --json floor/"}}]}}
def result(text, blocks=False):
    c = [{"type": "text", "text": text}] if blocks else text
    return {"type": "user", "message": {"content": [{"type": "tool_result", "content": c}]}}
ev = [{"type": "system", "subtype": "init", "session_id": "s1"},
      asst("msg_1", input_tokens=1000, output_tokens=100, cache_creation_input_tokens=500),
      result("kgb verify: a note on stderr\n" + answers[0]),
      asst("msg_2", input_tokens=1200, output_tokens=150, cache_read_input_tokens=500),
      asst("msg_2", input_tokens=1200, output_tokens=150, cache_read_input_tokens=500),
      result(answers[1]),
      asst("msg_3", input_tokens=1300, output_tokens=80, cache_read_input_tokens=1000),
      result(answers[2], blocks=True),
      asst("msg_4", input_tokens=100, output_tokens=20)]
with open(sys.argv[2], "w") as f:
    for e in ev:
        f.write(json.dumps(e) + "\n")
PY
kgb import kernelgenbench "$run" --versions -o "$TEST_DIR/versions.json" 2>"$TEST_DIR/import.err" ||
	fail "kgb import --versions: $(cat "$TEST_DIR/import.err")"
check "the versions' manifest validates" kgb validate "$TEST_DIR/versions.json"
check "one candidate per verified version, with its round, tokens since the previous answer and model" \
	python3 - "$TEST_DIR/versions.json" "$TEST_DIR/transcript.jsonl" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
c = m["methods"][0]["candidates"]
assert m["methods"][0]["name"] == "claude_code", m["methods"][0]["name"]
assert [x["round"] for x in c] == [0, 1, 2], [x.get("round") for x in c]
want = [{"input": 1000, "output": 100, "cache_write": 500, "cache_read": 0},
        {"input": 1200, "output": 150, "cache_write": 0, "cache_read": 500},
        {"input": 1400, "output": 100, "cache_write": 0, "cache_read": 1000}]
assert [x["usage"] for x in c] == want, [x["usage"] for x in c]
assert [x["tokens"] for x in c] == [1600, 1850, 2500], [x["tokens"] for x in c]
assert all(x["operator"] == "floor" and x["model"] == "model-z" and "cases" not in x for x in c)
srcs = [x["sources"]["floor.cl"]["inline"] for x in c]
assert "attempt 1" in srcs[0] and "attempt 2" in srcs[1] and "attempt 3" in srcs[2], [s[:60] for s in srcs]
PY

# ---- human output and a refused plan ----
out=$(kgb verify --no-timing "$TEST_DIR/floor/plan.json" --op floor) || fail "kgb verify (text) exits 0: $out"
check "the text answer says PASSED ($out)" grep -q "floor on $plat, campaign [0-9]*: PASSED" <<<"$out"
sed 's/"tensor": "self"/"tensor": "selff"/' "$TEST_DIR/floor/plan.json" >"$TEST_DIR/floor/bad.plan.json"
rc=0
kgb verify --json --op floor "$TEST_DIR/floor/bad.plan.json" >"$TEST_DIR/bad.json" || rc=$?
assert_eq "$rc" 1 "a plan refused before it runs: exit status 1"
check "its answer names the file and the field ($(cat "$TEST_DIR/bad.json"))" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert a["passed"] is False and a["state"] == "refused", a
assert "bad.plan.json" in a["error"] and "kernels[0].args[0]" in a["error"] and "selff" in a["error"], a["error"]
' "$TEST_DIR/bad.json"
test_must_fail kgb verify --json "$TEST_DIR/floor/plan.json" 2>"$TEST_DIR/noop.err" ||
	fail "a plan whose name says no operator is refused"
check "and told to give --op" grep -q "give --op" "$TEST_DIR/noop.err"

stop_checked w1
stop_checked coord
test_done
