#!/bin/sh
# The kgb command's reference, generated from its own help text (the command and option
# tables of cli/):
#   scripts/cli-docs.sh [KGB]           rewrite the generated section of docs/cli.md
#   scripts/cli-docs.sh --check [KGB]   exit 1 when docs/cli.md's section differs
#   scripts/cli-docs.sh --man [KGB] DIR write DIR/kgb.1 and DIR/kgb-COMMAND.1 per command
# KGB defaults to build/rel/bin/kgb. The section lies between the BEGIN and END markers
# of docs/cli.md; `kgb help --markdown` prints it.
set -eu
cd "$(dirname "$0")/.."
mode=write
case "${1:-}" in
--check) mode=check; shift ;;
--man) mode=man; shift ;;
esac
kgb=${1:-build/rel/bin/kgb}
[ -x "$kgb" ] || { echo "cli-docs.sh: $kgb: not an executable (make first)" >&2; exit 1; }
if [ "$mode" = man ]; then
	dir=${2:-man}
	mkdir -p "$dir"
	"$kgb" help --man >"$dir/kgb.1"
	for c in $("$kgb" --help | awk '/^commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}'); do
		"$kgb" help --man "$c" >"$dir/kgb-$c.1"
	done
	echo "cli-docs.sh: man pages written to $dir/"
	exit 0
fi
doc=docs/cli.md
begin='<!-- BEGIN kgb help --markdown -->'
end='<!-- END kgb help --markdown -->'
grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || { echo "cli-docs.sh: $doc: no BEGIN/END markers" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.md"' EXIT
"$kgb" help --markdown >"$tmp.md"
awk -v b="$begin" -v e="$end" -v gen="$tmp.md" '
	$0 == b {print; while ((getline l < gen) > 0) print l; skip = 1; next}
	$0 == e {skip = 0}
	!skip {print}' "$doc" >"$tmp"
if [ "$mode" = check ]; then
	if ! cmp -s "$tmp" "$doc"; then
		diff -u "$doc" "$tmp" | head -40 >&2
		echo "cli-docs.sh: $doc is out of date with kgb's help text: run scripts/cli-docs.sh" >&2
		exit 1
	fi
	exit 0
fi
cp "$tmp" "$doc"
