#!/bin/sh
# The coordinator's layers (docs/architecture.md, "Layers of the coordinator"): a file
# may call the functions of its own layer and of those below it, never of a layer
# above. Prints every upward call as FILE:LINE: FUNCTION (defined in FILE) and exits 1;
# exits 0 when there is none. `make check-layers` runs it, and so does `make test`.
#
# Layers, bottom first. A coordinator/*.c named in no layer counts as part of the
# protocol layer (it may call the state; the state may not call it): name it here.
set -eu
cd "$(dirname "$0")/.."

LAYERS='sqltext db sched langs zsock zap embedded
state
load leader
wproto cproto rcheck tables gproto oproto
metrics
main'
PROTOCOL_LAYER=4

# defs FILE: the functions FILE defines for other files (not static)
defs() {
	grep -hoE '^[a-z_][a-z0-9_ ]*[ *]+kgb_[a-z0-9_]+\(' "coordinator/$1.c" |
		grep -v '^static' | sed -E 's/.*[ *](kgb_[a-z0-9_]+)\($/\1/' || true
}

# layer_of NAME: the layer's number (1 = bottom)
layer_of() {
	n=$(printf '%s\n' "$LAYERS" | grep -nwE "$1" | head -n1 | cut -d: -f1)
	echo "${n:-$PROTOCOL_LAYER}"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in coordinator/*.c; do
	name=$(basename "$f" .c)
	l=$(layer_of "$name")
	[ "$l" != "$PROTOCOL_LAYER" ] || printf '%s\n' "$LAYERS" | grep -qw "$name" ||
		echo "check-layers: coordinator/$name.c is in no layer of scripts/check-layers.sh: taken as protocol" >&2
	defs "$name" | sed "s/\$/ $l $name/" >>"$tmp/defs"
done

bad=0
for f in coordinator/*.c; do
	name=$(basename "$f" .c)
	l=$(layer_of "$name")
	# the functions of the layers above this file's
	awk -v l="$l" '$2 > l { print $1 " " $3 }' "$tmp/defs" >"$tmp/above"
	[ -s "$tmp/above" ] || continue
	while read -r fn where; do
		grep -nE "\b$fn[[:space:]]*\(" "$f" | sed "s#^#$f:#; s#\$#   <- $fn (coordinator/$where.c, a layer above)#" >>"$tmp/bad" || true
	done <"$tmp/above"
done
if [ -s "$tmp/bad" ]; then
	echo "check-layers: calls from a layer of the coordinator into one above it:" >&2
	cat "$tmp/bad" >&2
	exit 1
fi
echo "check-layers: coordinator/ calls only downwards ($(printf '%s\n' "$LAYERS" | tr '\n' '<' | sed 's/<$//; s/</ < /g'))"
