#!/bin/bash
# kgb-test: budget=30
# The command-line conventions, offline (no coordinator): shell completion generated
# from the command tables (bash runs it), man pages (groff renders them), docs/cli.md's
# command reference equal to kgb help --markdown, the config file beside the
# environment (the environment wins, kgb config says where each value came from, a bad
# key is named with the one meant), and "did you mean" for commands and options.
. "$(dirname "$0")/lib.sh"

# --- completion: bash completes commands, a command's options, and files
kgb completion bash >"$TEST_DIR/kgb.bash" || die "kgb completion bash failed"
complete_words() {
	bash -c 'kgb() { "$KGB_BIN/kgb" "$@"; }; source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kgb; echo "${COMPREPLY[*]}"' \
		_ "$TEST_DIR/kgb.bash" "$@"
}
assert_eq "$(complete_words kgb res)" "results" "bash: 'kgb res<TAB>' completes the command"
assert_eq "$(complete_words kgb fail)" "failures" "bash: a new command is completed too (from the table)"
check "bash: 'kgb results 7 --<TAB>' offers --json, --csv, --wide and --format" \
	sh -c 'w=" $1 "; for o in --json --csv --wide --format --platform; do case $w in *" $o "*) ;; *) exit 1 ;; esac; done' _ \
	"$(complete_words kgb results 7 --)"
assert_eq "$(complete_words kgb --timeout 3 status --wa)" "--watch" "bash: global options before the command are skipped"
mkdir -p "$TEST_DIR/d" && touch "$TEST_DIR/d/manifest.json"
assert_eq "$(cd "$TEST_DIR/d" && complete_words kgb submit man)" "manifest.json" "bash: submit completes a file name"
assert_eq "$(complete_words kgb completion z)" "zsh" "bash: the shells of kgb completion"
kgb completion zsh >"$TEST_DIR/_kgb" || die "kgb completion zsh failed"
check "zsh: a #compdef script with every command" grep -q '^#compdef kgb' "$TEST_DIR/_kgb"
check "zsh: the options of failures" grep -q "'--platform=\[only this platform\]" "$TEST_DIR/_kgb"
if command -v zsh >/dev/null; then
	check "zsh: the script parses" zsh -n "$TEST_DIR/_kgb"
	mkdir -p "$TEST_DIR/zfunc" && cp "$TEST_DIR/_kgb" "$TEST_DIR/zfunc/_kgb"
	assert_eq "$(HOME=$TEST_DIR zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit && compinit -u -d "$2"; print -r -- ${_comps[kgb]}' _ "$TEST_DIR/zfunc" "$TEST_DIR/zcompdump")" \
		"_kgb" "zsh: compinit takes it from \$fpath for kgb"
else
	echo "SKIP $TEST_NAME: no zsh on PATH: the zsh script is not parsed" >&2
fi
test_must_fail kgb completion fish 2>"$TEST_DIR/e"
check "an unknown shell is named" grep -q "unknown shell 'fish'" "$TEST_DIR/e"

# --- man pages, from the same help text
kgb help --man results >"$TEST_DIR/kgb-results.1" || die "kgb help --man results failed"
check "man: the page heads KGB-RESULTS(1)" grep -q '^\.TH KGB-RESULTS 1' "$TEST_DIR/kgb-results.1"
for o in json csv platform baseline wide format coordinator; do
	check "man: kgb-results(1) has --$o" grep -q "^\.B .*\\\\-\\\\-$o" "$TEST_DIR/kgb-results.1"
done
kgb help --man >"$TEST_DIR/kgb.1" || die "kgb help --man failed"
check "man: kgb(1) lists the failures command" grep -q '^\.B failures' "$TEST_DIR/kgb.1"
check "man: kgb(1) names the config file" grep -q 'config/kgb/config' "$TEST_DIR/kgb.1"
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww -z "$TEST_DIR/kgb-results.1" 2>"$TEST_DIR/groff.txt"
	check "man: groff renders kgb-results(1) without a warning" test ! -s "$TEST_DIR/groff.txt"
fi
sh "$KGB_ROOT/scripts/cli-docs.sh" --man "$KGB_BIN/kgb" "$TEST_DIR/man" >/dev/null || die "cli-docs.sh --man failed"
check "make man's script writes a page per command" test -s "$TEST_DIR/man/kgb-completion.1" -a -s "$TEST_DIR/man/kgb.1"

# --- docs/cli.md: its command reference is the help text
sh "$KGB_ROOT/scripts/cli-docs.sh" --check "$KGB_BIN/kgb" 2>"$TEST_DIR/docs.txt"
check "docs/cli.md's command reference equals kgb help --markdown (scripts/cli-docs.sh rewrites it)" \
	test ! -s "$TEST_DIR/docs.txt"
cat "$TEST_DIR/docs.txt" >&2
kgb help --markdown >"$TEST_DIR/ref.md"
for c in $(kgb --help | awk '/^commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}'); do
	check "the reference has kgb $c" grep -qx "### kgb $c" "$TEST_DIR/ref.md"
done
check "docs/cli.md compares kgb with Slurm and HTCondor" grep -q '^| task | kgb | Slurm | HTCondor |' "$KGB_ROOT/docs/cli.md"

# --- the config file: KGB_CONFIG_DIR/config here (lib.sh sets KGB_CONFIG_DIR)
mkdir -p "$KGB_CONFIG_DIR"
cfg=$KGB_CONFIG_DIR/config
printf '# kgb settings\nendpoint = tcp://127.0.0.1:1\nformat = json\nuser = "ada"\n' >"$cfg"
env -u KGB_CLI_ENDPOINT "$KGB_BIN/kgb" config --json >"$TEST_DIR/c1.json" || die "kgb config failed"
assert_eq "$(python3 -c 'import json,sys; d={s["key"]: (s["value"], s["source"]) for s in json.load(open(sys.argv[1]))["settings"]}; print(d["endpoint"], d["format"], d["user"], d["width"][1])' "$TEST_DIR/c1.json")" \
	"('tcp://127.0.0.1:1', 'file') ('json', 'file') ('ada', 'file') default" "config: the file's values, marked as from the file"
KGB_CLI_ENDPOINT=tcp://127.0.0.1:2 "$KGB_BIN/kgb" config --json >"$TEST_DIR/c2.json" || die "kgb config failed"
assert_eq "$(python3 -c 'import json,sys; d={s["key"]: (s["value"], s["source"]) for s in json.load(open(sys.argv[1]))["settings"]}; print(*d["endpoint"])' "$TEST_DIR/c2.json")" \
	"tcp://127.0.0.1:2 environment" "config: the environment wins over the file"
KGB_CLI_ENDPOINT=tcp://127.0.0.1:2 "$KGB_BIN/kgb" config --json --coordinator tcp://127.0.0.1:3 >"$TEST_DIR/c3.json"
assert_eq "$(python3 -c 'import json,sys; d={s["key"]: (s["value"], s["source"]) for s in json.load(open(sys.argv[1]))["settings"]}; print(*d["endpoint"])' "$TEST_DIR/c3.json")" \
	"tcp://127.0.0.1:3 option" "config: the command line wins over both"
# format = json: a command with --json prints JSON unasked (kgb ops works offline)
"$KGB_BIN/kgb" ops >"$TEST_DIR/ops.json" || die "kgb ops (format = json) failed"
check "config format = json: kgb ops prints JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TEST_DIR/ops.json"
KGB_FORMAT=table "$KGB_BIN/kgb" ops >"$TEST_DIR/ops.txt" || die "kgb ops (KGB_FORMAT=table) failed"
check "KGB_FORMAT=table wins over the file's format" grep -q '^NAME ' "$TEST_DIR/ops.txt"
"$KGB_BIN/kgb" ops --csv >"$TEST_DIR/ops.csv" || die "kgb ops --csv failed"
check "--csv wins over the file's format" grep -q '^name,' "$TEST_DIR/ops.csv"
printf 'endpont = tcp://x:1\n' >"$cfg"
test_must_fail "$KGB_BIN/kgb" config 2>"$TEST_DIR/e"
check "config: a mistyped key is named with its file, line and the key meant" \
	grep -qF "$cfg:1: unknown key 'endpont'; did you mean 'endpoint'?" "$TEST_DIR/e"
printf 'format = yaml\n' >"$cfg"
test_must_fail "$KGB_BIN/kgb" ops 2>"$TEST_DIR/e"
check "config: a bad format is named" grep -q "'yaml' is not table, json or csv" "$TEST_DIR/e"
rm -f "$cfg"
XDG_CONFIG_HOME=$TEST_DIR/xdg env -u KGB_CONFIG_DIR "$KGB_BIN/kgb" config >"$TEST_DIR/c4.txt"
check "config: without KGB_CONFIG_DIR the file is under XDG_CONFIG_HOME" grep -q "config file: $TEST_DIR/xdg/kgb/config" "$TEST_DIR/c4.txt"

# --- did you mean
test_must_fail kgb reslts 2>"$TEST_DIR/e"
check "an unknown command gets the one meant" grep -q "unknown command 'reslts'; did you mean 'results'?" "$TEST_DIR/e"
test_must_fail kgb results 7 --jsno 2>"$TEST_DIR/e"
check "an unknown option gets the one meant" grep -q "unknown option '--jsno'; did you mean '--json'?" "$TEST_DIR/e"
test_must_fail kgb --timout 3 status 2>"$TEST_DIR/e"
check "an unknown global option gets the one meant" grep -q "did you mean '--timeout'?" "$TEST_DIR/e"

test_done
