#!/bin/bash
# Malformed manifests: `kgb submit` exits non-zero with an error that names the file,
# the field and the value, and nothing is stored. The coordinator checks again what
# reaches it without the CLI (a SubmitRequest sent directly) and refuses it too.
. "$(dirname "$0")/lib.sh"

db_init
start_coordinator coord
campaigns0=$(q "SELECT count(*) FROM campaigns")
cand0=$(q "SELECT count(*) FROM candidates")
jobs0=$(q "SELECT count(*) FROM jobs")

M=$TEST_DIR/m
mkdir -p "$M"
make_manifest "$M/good.json" --methods baseline --ops add

# variant NAME PYTHON: good.json with the python statement applied to m (a dict)
variant() {
	"$KGB_PY" - "$M/good.json" "$M/$1.json" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(m, open(sys.argv[2], 'w'), indent=1)
PY
}

# must_refuse NAME WORD...: kgb submit NAME.json fails and its stderr has NAME.json and
# every WORD
must_refuse() {
	local name=$1; shift
	local err=$M/$name.err w missing=""
	if ! test_must_fail kgb submit "$M/$name.json" 2>"$err" >/dev/null; then
		fail "$name: kgb submit did not fail cleanly"
		return
	fi
	grep -qF "$name.json" "$err" || missing="$missing file"
	for w in "$@"; do
		grep -qF -- "$w" "$err" || missing="$missing '$w'"
	done
	if [ -z "$missing" ]; then
		ok "$name: refused: $(head -n1 "$err")"
	else
		fail "$name: the error lacks$missing: $(head -n3 "$err")"
	fi
}

printf '{"name": "broken", "operators": {"dataset": "demo"},\n "methods": [\n' >"$M/bad-json.json"
must_refuse bad-json
variant unknown-op 'm["methods"][0]["candidates"][0]["operator"] = "addd"'
must_refuse unknown-op addd candidates
variant unknown-field 'm["shard_sise"] = 4'
must_refuse unknown-field shard_sise
variant bad-shard 'm["shard_size"] = 0'
must_refuse bad-shard shard_size 0
variant bad-time 'm["time_limit_ms"] = "fast"'
must_refuse bad-time time_limit_ms fast
variant bad-tokens 'm["methods"][0]["candidates"][0]["tokens"] = -5'
must_refuse bad-tokens tokens -5
variant bad-dataset 'm["operators"] = {"dataset": "nosuch"}'
must_refuse bad-dataset nosuch
variant bad-baseline 'm["baseline"] = "nobody"'
must_refuse bad-baseline baseline nobody
variant missing-plan 'm["methods"][0]["candidates"][0]["plan"] = "/nonexistent/add.plan.json"'
must_refuse missing-plan /nonexistent/add.plan.json
# a plan that names a tensor the operator does not have
sed 's/"tensor": "other"/"tensor": "otherr"/' "$KGB_ROOT/examples/demo/baseline/add.plan.json" >"$M/add-bad.plan.json"
cp "$KGB_ROOT/examples/demo/baseline/add.cl" "$M/"
variant bad-plan "m['methods'][0]['candidates'][0]['plan'] = '$M/add-bad.plan.json'"
must_refuse bad-plan otherr
variant dup-method 'm["methods"].append(dict(m["methods"][0]))'
must_refuse dup-method baseline
# samples and rounds (docs/candidate-format.md, "Samples, rounds and usage")
variant bad-round 'm["methods"][0]["candidates"][0]["round"] = -2'
must_refuse bad-round "methods[0].candidates[0].round" -2
variant bad-usage 'm["methods"][0]["candidates"][0]["usage"] = {"input": 10, "cache_read": "many"}'
must_refuse bad-usage "methods[0].candidates[0].usage.cache_read" many
variant dup-sample 'c = m["methods"][0]["candidates"]; c[0]["sample"] = 3; c.append(dict(c[0]))'
must_refuse dup-sample "methods[0].candidates[1].operator" "round 0, sample 3"
# files a manifest may not carry into the store: outside its directory (by "../", an
# absolute path or a symbolic link), special files, and a candidate over the size limit
mkdir -p "$TEST_DIR/secret"
echo "not for the store" >"$TEST_DIR/secret/key.txt"
srcvar() { # NAME PATH: good.json whose first candidate names PATH as its add.cl
	variant "$1" "m['methods'][0]['candidates'][0]['sources'] = {'add.cl': '$2'}"
}
srcvar outside-dotdot ../secret/key.txt
must_refuse outside-dotdot "sources.add.cl" "outside the manifest's directory" --allow-outside-sources
srcvar outside-abs "$TEST_DIR/secret/key.txt"
must_refuse outside-abs "sources.add.cl" "outside the manifest's directory"
ln -s "$TEST_DIR/secret/key.txt" "$M/link.cl"
srcvar outside-link link.cl
must_refuse outside-link "sources.add.cl" "resolves to '$TEST_DIR/secret/key.txt'"
ln -s /dev/zero "$M/zero.cl"
srcvar dev-zero zero.cl
must_refuse dev-zero "sources.add.cl" "/dev/zero"
mkfifo "$M/fifo.cl"
srcvar fifo fifo.cl
must_refuse fifo "sources.add.cl" "not a regular file (a FIFO)"
head -c $((9 << 20)) /dev/zero | tr '\0' 'x' >"$M/huge.cl"
srcvar oversize huge.cl
must_refuse oversize "sources.add.cl" "over the limit of"
# a platform no worker has offered (the coordinator has none here): a typo unless the
# user says to wait for it
variant platform-typo 'm["platforms"] = ["opencl:pthread-cpux"]'
must_refuse platform-typo "platforms[0]" "opencl:pthread-cpux" "matches no platform" "--wait-for-platforms"
check "--allow-outside-sources lets the user name a file outside" \
	kgb validate --allow-outside-sources "$M/outside-dotdot.json"
check "... but never a special file" test_must_fail kgb validate --allow-outside-sources "$M/dev-zero.json"

# the same refusals at the coordinator, bypassing the CLI
# an oversize inline candidate, sent directly
"$KGB_PY" - "$M/good.json" "$M/oversize-inline.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
c = m['methods'][0]['candidates'][0]
c['plan'] = json.load(open(sys.argv[1].rsplit('/', 1)[0] + '/' + c['plan']))
c['sources'] = {'add.cl': {'inline': 'x' * (9 << 20)}}
json.dump(m, open(sys.argv[2], 'w'))
PY
for name in bad-json unknown-op unknown-field bad-shard oversize-inline bad-usage; do
	out=$(kgbwire submit "$KGB_CLI_ENDPOINT" "$M/$name.json" 2>&1) || true
	case "$out" in
	ok=0*) ok "coordinator refuses $name sent directly: ${out#*error=}" ;;
	*) fail "coordinator's answer to $name sent directly: $out" ;;
	esac
done

assert_eq "$(q "SELECT count(*) FROM campaigns")" "$campaigns0" "no campaign stored"
assert_eq "$(q "SELECT count(*) FROM candidates")" "$cand0" "no candidate stored"
assert_eq "$(q "SELECT count(*) FROM jobs")" "$jobs0" "no job stored"

# and the good manifest is accepted, so the refusals above were about the defects
id=$(submit "$M/good.json")
assert_eq "$(q "SELECT count(*) FROM campaigns")" "$((campaigns0 + 1))" "the good manifest is stored (campaign $id)"
# samples, rounds, model and usage are stored with each candidate (migration 0009); a
# usage kind not given is NULL (unknown), and tokens is the usage's total when not given
variant samples 'c = m["methods"][0]["candidates"]; c.append(dict(c[0], round=1, sample=2, model="m-large",
    usage={"input": 1200, "output": 300, "cache_read": 5000, "reasoning": 120})); del c[1]["tokens"]'
id=$(submit "$M/samples.json")
assert_eq "$(q "SELECT string_agg(concat_ws(' ', round, sample, quote_literal(model), tokens,
	coalesce(input_tokens::text, '-'), coalesce(output_tokens::text, '-'), coalesce(cache_write_tokens::text, '-'),
	coalesce(cache_read_tokens::text, '-'), coalesce(reasoning_tokens::text, '-')), '; ' ORDER BY idx)
	FROM candidates WHERE campaign_id = $id")" "0 0 '' 0 - - - - -; 1 2 'm-large' 6500 1200 300 - 5000 120" \
	"round, sample, model and usage stored per candidate (campaign $id)"
out=$(kgb submit --wait-for-platforms "$M/platform-typo.json") || fail "kgb submit --wait-for-platforms: $out"
check "--wait-for-platforms queues for a platform that has not joined yet" grep -q '^campaign [0-9]* ' <<<"$out"
check "coordinator stayed up" proc_alive coord
stop_checked coord
test_done
