#!/bin/sh
# scripts/check-layers.sh's own test (`make check-layers` runs it after the check): on
# copies of coordinator/*.c with one call added, it must fail and name the call, for a
# circle inside one layer (wproto.c and cproto.c calling each other) and for a call from
# the state up into the protocol; the tree as it is must pass.
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect DESC WANT: the check on $tmp/c fails and its message holds WANT
expect() {
	if KGB_LAYERS_DIR="$tmp/c" sh scripts/check-layers.sh >"$tmp/out" 2>&1; then
		echo "check_layers_test: FAIL: $1: the check passed"
		fails=$((fails + 1))
	elif ! grep -qF -- "$2" "$tmp/out"; then
		echo "check_layers_test: FAIL: $1: the message lacks '$2':"
		sed 's/^/    /' "$tmp/out"
		fails=$((fails + 1))
	else
		echo "check_layers_test: ok: $1"
	fi
}

# fresh COPY: coordinator/*.c into $tmp/c
fresh() { rm -rf "$tmp/c" && mkdir "$tmp/c" && cp coordinator/*.c "$tmp/c/"; }

fresh
# cproto.c refuses a message type through wproto.c's helper; wproto.c calls nothing of cproto.c
grep -q 'kgb_coord_refuse_type(' "$tmp/c/cproto.c" && ! grep -q 'kgb_coord_on_cli_msg(' "$tmp/c/wproto.c" ||
	{ echo "check_layers_test: cproto.c or wproto.c changed: update this test"; exit 1; }
printf 'void kgb_layers_probe(void) { kgb_coord_on_cli_msg(NULL, NULL, NULL, 0, false, NULL); }\n' >>"$tmp/c/wproto.c"
expect "a circle inside the protocol layer (wproto.c -> cproto.c -> wproto.c)" "wproto.c:$(wc -l <"$tmp/c/wproto.c"): kgb_coord_on_cli_msg   -> $tmp/c/cproto.c (calls: 1)"

fresh
printf 'void kgb_layers_probe(kgb_coord_t *c) { kgb_coord_rbatch_free(c); }\n' >>"$tmp/c/state.c"
expect "the state calling up into the protocol (state.c -> wproto.c)" "state.c:$(wc -l <"$tmp/c/state.c"): kgb_coord_rbatch_free   <- kgb_coord_rbatch_free ($tmp/c/wproto.c, a layer above)"

if ! sh scripts/check-layers.sh >"$tmp/out" 2>&1; then
	echo "check_layers_test: FAIL: the tree as it is:"
	cat "$tmp/out"
	fails=$((fails + 1))
fi
[ $fails -eq 0 ] || exit 1
echo "check_layers_test: the check finds a circle and an upward call"
