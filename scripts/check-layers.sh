#!/bin/sh
# The coordinator's layers (docs/architecture.md, "Layers of the coordinator"): a file
# may call the functions of its own layer and of those below it, never of a layer
# above, and the calls between its files go one way: no file reaches back, directly or
# through others, into a file that calls it (not even within one layer). Prints every
# upward call as FILE:LINE: FUNCTION (defined in FILE), then every circle of files with
# the calls that close it, and exits 1; exits 0 when there is neither. `make
# check-layers` runs it, and so does `make test`. A call is a name followed by "(";
# taking a function's address (an outbox's member) is no call.
#
# Layers, bottom first. A coordinator/*.c named in no layer counts as part of the
# protocol layer (it may call the state; the state may not call it): name it here.
set -eu
cd "$(dirname "$0")/.."
DIR=${KGB_LAYERS_DIR:-coordinator} # another tree laid out the same way (the script's own test)

LAYERS='sqltext db sched langs zsock zap embedded
state
load leader
wproto cproto rcheck tables gproto oproto
metrics
main'
PROTOCOL_LAYER=4

# defs FILE: the functions FILE defines for other files (not static)
defs() {
	grep -hoE '^[a-z_][a-z0-9_ ]*[ *]+kgb_[a-z0-9_]+\(' "$DIR/$1.c" |
		grep -v '^static' | sed -E 's/.*[ *](kgb_[a-z0-9_]+)\($/\1/' || true
}

# layer_of NAME: the layer's number (1 = bottom)
layer_of() {
	n=$(printf '%s\n' "$LAYERS" | grep -nwE "$1" | head -n1 | cut -d: -f1)
	echo "${n:-$PROTOCOL_LAYER}"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/defs"
: >"$tmp/calls"
for f in "$DIR"/*.c; do
	name=$(basename "$f" .c)
	l=$(layer_of "$name")
	[ "$l" != "$PROTOCOL_LAYER" ] || printf '%s\n' "$LAYERS" | grep -qw "$name" ||
		echo "check-layers: $DIR/$name.c is in no layer of scripts/check-layers.sh: taken as protocol" >&2
	defs "$name" | sed "s/\$/ $l $name/" >>"$tmp/defs"
	# every kgb_ name this file calls: FILE LAYER LINE NAME
	grep -noE '\bkgb_[a-z0-9_]+[[:space:]]*\(' "$f" | sed -E "s/^([0-9]+):(kgb_[a-z0-9_]+).*/$name $l \\1 \\2/" \
		>>"$tmp/calls" || true
done

# the calls from one file into another: CALLER LAYER LINE FUNCTION CALLEE LAYER
awk 'NR == FNR { file[$1] = $3; layer[$1] = $2; next }
     ($4 in file) && file[$4] != $1 { print $1, $2, $3, $4, file[$4], layer[$4] }' \
	"$tmp/defs" "$tmp/calls" >"$tmp/edges"

bad=0
awk -v d="$DIR" '$6 > $2 { printf "%s/%s.c:%s: %s   <- %s (%s/%s.c, a layer above)\n", d, $1, $3, $4, $4, d, $5 }' \
	"$tmp/edges" >"$tmp/up"
if [ -s "$tmp/up" ]; then
	echo "check-layers: calls from a layer of the coordinator into one above it:" >&2
	cat "$tmp/up" >&2
	bad=1
fi

# circles: tsort names the files of each loop it finds; print the calls among them
awk '{ print $1, $5 }' "$tmp/edges" | sort -u >"$tmp/pairs"
if ! tsort "$tmp/pairs" >/dev/null 2>"$tmp/loop"; then
	sed -n 's/^tsort: \([a-z0-9_]*\)$/\1/p' "$tmp/loop" | sort -u >"$tmp/inloop"
	echo "check-layers: a circle of calls among the files of $DIR/ ($(tr '\n' ' ' <"$tmp/inloop" | sed 's/ $//')):" >&2
	# one line for each file calling another of them: its first such call, and how many
	awk -v d="$DIR" 'NR == FNR { in_loop[$1] = 1; next }
	     ($1 in in_loop) && ($5 in in_loop) { k = $1 " " $5; if (!(k in first)) { first[k] = $3 ": " $4; order[++n] = k } calls[k]++ }
	     END { for (i = 1; i <= n; i++) { k = order[i]; split(k, f, " ")
	               printf "%s/%s.c:%s   -> %s/%s.c (calls: %d)\n", d, f[1], first[k], d, f[2], calls[k] } }' \
		"$tmp/inloop" "$tmp/edges" >&2
	bad=1
fi
[ $bad -eq 0 ] || exit 1
echo "check-layers: $DIR/ calls only downwards and without circles ($(printf '%s\n' "$LAYERS" | tr '\n' '<' | sed 's/<$//; s/</ < /g'))"
