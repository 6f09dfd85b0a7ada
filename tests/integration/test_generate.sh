#!/bin/bash
# kgb generate end to end (docs/methods.md) against a double of the model API
# (tests/tools/model_double.py: no real endpoint is reachable here), a coordinator on
# PostgreSQL and a CPU worker: 10 operators, 2 samples, 3 rounds with reflection on
# the OpenAI-compatible API, the double answering with canned demo kernels (correct,
# broken, without code, with a plan that does not load) and serving a 429 with
# Retry-After, a 500, a reply past the timeout, a truncated body and malformed JSON on
# each prompt's first request. The client is killed (kill -9) in the middle of round 1
# with requests in flight and run again with the same command: every answer the double
# delivered is on record exactly once (no prompt asked again once answered, none
# lost), each round is one campaign, the operators passed per round are the scripted
# ones, reflection put kgb's failure messages and the previous code into the prompts,
# and the usage is on record. Then a run on the Anthropic API from a config file, a
# token budget that stops a run, and a wrong key that is not echoed.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
start_worker w1 --slots 2
wait_registered w1

_spawn double "$TEST_DIR/logs/double.1.log" python3 "$KGB_ROOT/tests/tools/model_double.py" "$KGB_ROOT" \
	"$TEST_DIR/double.port"
wait_for 20 "the model API double listens" test -s "$TEST_DIR/double.port"
DOUBLE="http://127.0.0.1:$(cat "$TEST_DIR/double.port")"
dget() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "$DOUBLE$1"; }
dcounts() { dget /counts; }

OPS=add,silu,sum,index_select,clone,cumsum,gt,rms_norm,rotary_embedding,cublasSaxpy_v2
export OPENAI_API_KEY=test-key-openai
GEN=(generate --api openai --base-url "$DOUBLE/v1" --model double-1 --ops "$OPS" -n 2 -t 0.8 -r 3 --reflect
     --cases smoke --no-timing --request-timeout 2 --backoff 0.2 -j 3 --state-dir "$TEST_DIR/state" --poll 0.3)

# round 1's answers come slowly, so that the client can be killed in its middle
dget "/control?delay=1&delay_round=1" >/dev/null
"$KGB_BIN/kgb" "${GEN[@]}" >"$TEST_DIR/gen1.out" 2>"$TEST_DIR/gen1.err" &
gen_pid=$!
round1() {
	kill -0 "$gen_pid" 2>/dev/null || die "kgb generate exited early: $(cat "$TEST_DIR/gen1.err")"
	[ "$(q "SELECT count(*) FROM gen_samples WHERE round = 1")" -ge "$1" ]
}
wait_for 180 "round 1 has answers on record" round1 2
# hold every further answer; once none is being written and every delivered answer is
# on record, kill the client: requests are in flight, the round is half done
dget "/control?hold=1" >/dev/null
delivered() { dcounts | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(c["answered"] for c in d["prompts"].values()))'; }
settled() {
	dcounts | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["writing"] == 0 and d["held"] >= 1 else 1)' &&
		[ "$(q "SELECT count(*) FROM gen_samples")" = "$(delivered)" ]
}
wait_for 30 "every delivered answer on record, a request held" settled
kill -KILL "$gen_pid"
wait "$gen_pid" 2>/dev/null || true
n_killed=$(q "SELECT count(*) FROM gen_samples WHERE round = 1")
check "killed in the middle of round 1 ($n_killed of its 10 samples on record)" test "$n_killed" -lt 10
assert_eq "$(q "SELECT count(*) FROM gen_rounds WHERE round = 1")" 0 "round 1's campaign was not submitted yet"
dget "/control?hold=0&drop=1&delay=0" >/dev/null

# the same command again: it resumes
kgb "${GEN[@]}" >"$TEST_DIR/gen2.out" 2>"$TEST_DIR/gen2.err" || { cat "$TEST_DIR/gen2.err" >&2; die "the resumed run failed"; }
check "the second run resumed run 1" grep -q '^run 1 (resumed)' "$TEST_DIR/gen2.out"
run=1

# every answer the double delivered is on record once: nothing asked again, nothing lost
dcounts >"$TEST_DIR/counts.json"
q "SELECT prompt_hash, count(*) FROM gen_samples WHERE http_status = 200 GROUP BY 1 ORDER BY 1" >"$TEST_DIR/stored.txt"
python3 - "$TEST_DIR/counts.json" "$TEST_DIR/stored.txt" >"$TEST_DIR/diff.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["prompts"]
stored = dict(l.split("|") for l in open(sys.argv[2]).read().split())
for h, c in sorted(d.items()):
    if c["answered"] != int(stored.get(h, 0)):
        print("%s %s round %d: delivered %d, on record %s" % (h[:12], c["op"], c["round"], c["answered"], stored.get(h, 0)))
for h in stored:
    if h not in d:
        print("%s on record, never asked" % h[:12])
PY
check "per prompt, the answers delivered equal the answers on record ($(wc -l <"$TEST_DIR/diff.txt") differ)" \
	test ! -s "$TEST_DIR/diff.txt"
cat "$TEST_DIR/diff.txt" >&2
assert_eq "$(q "SELECT round || ':' || count(*) FROM gen_samples WHERE run_id = $run GROUP BY round ORDER BY round" | tr '\n' ' ')" \
	"0:20 1:10 2:4 " "samples per round: 10, 5 and 2 operators asked, 2 samples each"
assert_eq "$(q "SELECT count(*) FROM gen_samples WHERE run_id = $run AND http_status <> 200")" 0 \
	"every sample was answered in the end (retries)"
assert_eq "$(q "SELECT count(*) FROM gen_rounds WHERE run_id = $run AND campaign_id IS NOT NULL")" 3 "three rounds on record"
assert_eq "$(q "SELECT count(*) FROM campaigns WHERE name LIKE 'generate-run$run-round%'")" 3 \
	"each round's campaign submitted once"

# the operators each round passed, and the solved ones so far
kgb generate --status "$run" --json >"$TEST_DIR/status.json"
kgb generate --status "$run" >"$TEST_DIR/status.txt"
cat "$TEST_DIR/status.txt"
assert_eq "$(python3 -c 'import json,sys; print(" ".join("%d:%d/%d/%d" % (r["round"], r["operators"], r["operators_passed"], r["solved"]) for r in json.load(open(sys.argv[1]))["rounds"]))' "$TEST_DIR/status.json")" \
	"0:10/5/5 1:5/3/8 2:2/1/9" "operators asked/passed/solved per round"
q "SELECT op, round, bool_or(passed) FROM gen_sample_verdicts WHERE run_id = $run GROUP BY 1, 2 ORDER BY 2, 1" \
	>"$TEST_DIR/passed.txt"
assert_eq "$(grep '|t$' "$TEST_DIR/passed.txt" | cut -d'|' -f1,2 | tr '\n' ' ')" \
	"add|0 cublasSaxpy_v2|0 rms_norm|0 rotary_embedding|0 sum|0 clone|1 cumsum|1 silu|1 index_select|2 " \
	"the scripted operators pass in their rounds"
check "the status table shows the tokens per round" grep -q 'INPUT' "$TEST_DIR/status.txt"

# samples without a candidate say why; the others are linked to their candidates
assert_eq "$(q "SELECT op || ': ' || split_part(error, ':', 1) FROM gen_samples WHERE run_id = $run AND round = 0
               AND error <> '' GROUP BY 1 ORDER BY 1" | tr '\n' ';')" \
	"clone: the answer has no fenced code block;cumsum: the candidate does not load;" \
	"round 0: no code (clone), a plan that does not load (cumsum)"
assert_eq "$(q "SELECT count(candidate_id) FROM gen_sample_verdicts WHERE run_id = $run AND round = 0")" 16 \
	"round 0: 16 samples became candidates"
assert_eq "$(q "SELECT count(*) FROM gen_samples s JOIN gen_rounds g USING (run_id, round)
               JOIN candidates c ON c.campaign_id = g.campaign_id AND c.idx = s.cand_idx
               WHERE s.run_id = $run AND (c.op <> s.op OR c.method <> 'llm-double-1' OR c.model <> 'double-1'
               OR c.round <> s.round OR c.sample <> s.sample OR c.input_tokens <> s.input_tokens
               OR c.output_tokens <> s.output_tokens OR c.cache_read_tokens <> s.cache_read_tokens
               OR c.reasoning_tokens <> s.reasoning_tokens OR c.cache_write_tokens IS NOT NULL
               OR c.tokens <> s.input_tokens + s.output_tokens + s.cache_read_tokens OR c.gen_seconds <> s.wall_s)")" 0 \
	"each candidate is its sample's: operator, method, model, round, sample, usage, tokens, seconds"

# usage as the OpenAI-compatible API reported it (the double: 7 cached prompt tokens,
# 3 reasoning tokens); the retried faults
assert_eq "$(q "SELECT count(*) FROM gen_samples WHERE run_id = $run AND (cache_read_tokens <> 7 OR reasoning_tokens <> 3
               OR cache_write_tokens IS NOT NULL OR input_tokens <= 0 OR output_tokens <= 0)")" 0 \
	"usage: input without the cached tokens, output, cache read, reasoning; no cache write reported"
for op in sum rms_norm rotary_embedding cublasSaxpy_v2 add; do
	assert_eq "$(q "SELECT max(attempts) FROM gen_samples WHERE run_id = $run AND op = '$op' AND round = 0")" 2 \
		"$op: the first request's fault was retried once"
done
# the retried 429 waited for its Retry-After (1 s; the backoff is 0.2 s)
check "the 429's Retry-After was waited for" \
	test "$(q "SELECT bool_and(wall_s >= 1) FROM gen_samples WHERE run_id = $run AND op = 'sum' AND attempts = 2")" = t

# reflection: kgb's failure messages and the previous answer in round 1's prompts
dget /prompts >"$TEST_DIR/prompts.json"
prompt_has() { # OP ROUND TEXT
	python3 - "$TEST_DIR/prompts.json" "$TEST_DIR/counts.json" "$@" <<'PY'
import json, sys
p, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["prompts"]
hits = [h for h, v in c.items() if v["op"] == sys.argv[3] and v["round"] == int(sys.argv[4]) and sys.argv[5] in p[h]]
sys.exit(0 if hits else 1)
PY
}
check "silu's round 1 prompt has its launch_error cases" prompt_has silu 1 ": launch_error"
check "silu's round 1 prompt has its previous plan" prompt_has silu 1 '"entry": "silu"'
check "index_select's round 2 prompt has its wrong_result cases" prompt_has index_select 2 "wrong_result"
check "clone's round 1 prompt says the answer had no code" prompt_has clone 1 "no fenced code block"
check "cumsum's round 1 prompt says why its plan did not load" prompt_has cumsum 1 "no_such_tensor"

# the key is never stored, journaled or printed
assert_eq "$(q "SELECT count(*) FROM gen_runs r JOIN gen_samples s ON s.run_id = r.id
               WHERE r::text LIKE '%test-key%' OR s::text LIKE '%test-key%'")" 0 "the key is not in the store"
check "the key is not in the journal or the output" \
	test_must_fail grep -rq test-key "$TEST_DIR/state" "$TEST_DIR/gen1.err" "$TEST_DIR/gen2.err" "$TEST_DIR/gen2.out"

# a finished run asks nothing more
before=$(dcounts | python3 -c 'import json,sys; print(sum(c["requests"] for c in json.load(sys.stdin)["prompts"].values()))')
kgb "${GEN[@]}" -q >/dev/null 2>"$TEST_DIR/gen3.err" || die "the third run failed: $(cat "$TEST_DIR/gen3.err")"
after=$(dcounts | python3 -c 'import json,sys; print(sum(c["requests"] for c in json.load(sys.stdin)["prompts"].values()))')
assert_eq "$after" "$before" "running a finished run again asks nothing"

# a round whose campaign was submitted but not recorded (the client killed in between)
# is found by its campaign's name, not submitted again; --resume RUN takes the run's
# definition from the store
q "DELETE FROM gen_rounds WHERE run_id = $run AND round = 2" >/dev/null
kgb generate --resume "$run" --state-dir "$TEST_DIR/state" --poll 0.3 >"$TEST_DIR/gen4.out" 2>"$TEST_DIR/gen4.err" ||
	die "generate --resume $run failed: $(cat "$TEST_DIR/gen4.err")"
check "--resume $run opened the run with its 10 operators, 2 samples, 3 rounds" \
	grep -q "^run $run (resumed): method llm-double-1, model double-1, 10 operators, 2 samples, 3 rounds" "$TEST_DIR/gen4.out"
assert_eq "$(q "SELECT count(*) FROM campaigns WHERE name LIKE 'generate-run$run-round%'")" 3 \
	"a round missing from gen_rounds is found by its campaign's name, not submitted again"
assert_eq "$(q "SELECT count(*) FROM gen_rounds WHERE run_id = $run")" 3 "and it is recorded again"
after4=$(dcounts | python3 -c 'import json,sys; print(sum(c["requests"] for c in json.load(sys.stdin)["prompts"].values()))')
assert_eq "$after4" "$before" "and nothing was asked"

# the Anthropic API, from a config file; its usage kinds
cat >"$TEST_DIR/anthropic.json" <<EOF
{"api": "anthropic", "base-url": "$DOUBLE/v1", "model": "double-2", "ops": "add,clone", "rounds": 2,
 "reflect": true, "cases": "smoke", "no-timing": true, "state-dir": "$TEST_DIR/state", "poll": 0.3,
 "api-key-env": "DOUBLE_ANTHROPIC_KEY"}
EOF
DOUBLE_ANTHROPIC_KEY=test-key-anthropic kgb generate --config "$TEST_DIR/anthropic.json" -q >"$TEST_DIR/anth.out" 2>&1 ||
	die "the Anthropic run failed: $(cat "$TEST_DIR/anth.out")"
arun=$(sed -n 's/^run \([0-9]*\) .*/\1/p' "$TEST_DIR/anth.out" | head -n1)
assert_eq "$(q "SELECT api || ' ' || method FROM gen_runs WHERE id = $arun")" "anthropic llm-double-2" "the Anthropic run on record"
assert_eq "$(q "SELECT string_agg(DISTINCT cache_write_tokens || '/' || cache_read_tokens || '/' || coalesce(reasoning_tokens::text, '-'), ',')
               FROM gen_samples WHERE run_id = $arun")" "11/5/-" "Anthropic usage: cache write, cache read; no reasoning count"
assert_eq "$(q "SELECT op || ':' || round || ':' || passed FROM gen_sample_verdicts WHERE run_id = $arun ORDER BY round, op" | tr '\n' ' ')" \
	"add:0:true clone:0:false clone:1:true " "Anthropic run: add in round 0, clone after reflection"

# a token budget stops the run: one request at a time, the first answer spends it
kgb generate --api openai --base-url "$DOUBLE/v1" --model double-1 --method budgeted --ops silu,gt -n 2 -r 3 \
	--cases smoke --no-timing --budget-tokens 10 -j 1 --state-dir "$TEST_DIR/state" --poll 0.3 \
	>"$TEST_DIR/budget.out" 2>&1 || die "the budgeted run failed: $(cat "$TEST_DIR/budget.out")"
brun=$(sed -n 's/^run \([0-9]*\) .*/\1/p' "$TEST_DIR/budget.out" | head -n1)
check "the budgeted run says the budget is spent" grep -q 'the budget is spent' "$TEST_DIR/budget.out"
assert_eq "$(q "SELECT count(*) FROM gen_samples WHERE run_id = $brun")" 1 "the budget let one sample be asked"
assert_eq "$(q "SELECT count(*) FROM gen_rounds WHERE run_id = $brun")" 1 "and no round after the one it stopped in"

# a wrong key: an error that is not retried and does not echo the key
OPENAI_API_KEY=wrong-secret-key kgb generate --api openai --base-url "$DOUBLE/v1" --model double-1 --method wrongkey \
	--ops add --cases smoke --no-timing --state-dir "$TEST_DIR/state" >"$TEST_DIR/wrong.out" 2>&1 ||
	die "the wrong-key run failed: $(cat "$TEST_DIR/wrong.out")"
assert_eq "$(q "SELECT http_status || ' ' || attempts || ' ' || (error LIKE '%***%') || ' ' || (error LIKE '%wrong-secret%')
               FROM gen_samples s JOIN gen_runs r ON r.id = s.run_id WHERE r.method = 'wrongkey'")" "401 1 true false" \
	"a 401 is final, and the key it echoed is masked"
check "the key is not in the output" test_must_fail grep -q wrong-secret "$TEST_DIR/wrong.out"

# an answer that reached the journal but not the store (the coordinator was down) is
# recorded from the journal by the next run, and not asked again
JGEN=(generate --api openai --base-url "$DOUBLE/v1" --model double-1 --method journaled --ops softmax --cases smoke
      --no-timing --state-dir "$TEST_DIR/state" --poll 0.3)
dget "/control?hold=1" >/dev/null
"$KGB_BIN/kgb" --timeout 3 "${JGEN[@]}" >"$TEST_DIR/j1.out" 2>&1 &
j_pid=$!
held() { dcounts | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["held"] >= 1 else 1)'; }
wait_for 30 "the journaled run's request is held" held
stop_checked coord
dget "/control?hold=0" >/dev/null
rc=0
wait "$j_pid" || rc=$?
check "with the coordinator down the answer is not recorded: exit 3 ($rc)" test "$rc" = 3
jfile=$(ls "$TEST_DIR"/state/run-*.jsonl | xargs grep -l '"op":"softmax"')
check "the answer is in the run's journal" test -n "$jfile"
start_coordinator coord
wait_registered w1
kgb "${JGEN[@]}" >"$TEST_DIR/j2.out" 2>&1 || die "the journaled run failed again: $(cat "$TEST_DIR/j2.out")"
check "the journal's answer was recorded" grep -q '1 answers of the journal' "$TEST_DIR/j2.out"
assert_eq "$(dcounts | python3 -c 'import json,sys; print(sum(c["requests"] for c in json.load(sys.stdin)["prompts"].values() if c["op"] == "softmax"))')" 1 \
	"softmax was asked once"
assert_eq "$(q "SELECT s.op || ':' || v.passed FROM gen_sample_verdicts v JOIN gen_samples s USING (run_id, op, round, sample)
               JOIN gen_runs r ON r.id = s.run_id WHERE r.method = 'journaled'")" "softmax:true" \
	"its candidate was evaluated"

stop_checked w1
stop_checked coord
test_done
