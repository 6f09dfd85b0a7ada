#!/bin/sh
# Print the Debian/Ubuntu packages that hold the shared libraries FILE... load (ldd),
# one a line, sorted: what a slim runtime image must install for binaries copied from a
# build stage on the same base. Fails naming a library that ldd cannot find or that no
# package owns.
#   runtime-packages.sh /staging/usr/local/bin/kgb-worker ...
set -eu
[ $# -gt 0 ] || { echo "usage: runtime-packages.sh FILE..." >&2; exit 2; }
out=$(ldd "$@") || { echo "runtime-packages.sh: ldd failed on $*" >&2; exit 1; }
missing=$(printf '%s\n' "$out" | awk '/not found/ { print $1 }' | sort -u | tr '\n' ' ')
if [ -n "$missing" ]; then
	echo "runtime-packages.sh: ldd cannot find: $missing" >&2
	exit 1
fi
pkgs=
for lib in $(printf '%s\n' "$out" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u); do
	pkg=
	# a merged /usr: dpkg may know the library under /usr/lib or /lib, as a link or not
	for p in "$lib" "$(readlink -f "$lib")" "/usr$lib" "${lib#/usr}"; do
		pkg=$(dpkg-query -S "$p" 2>/dev/null | head -n1 | cut -d: -f1)
		[ -z "$pkg" ] || break
	done
	if [ -z "$pkg" ]; then
		echo "runtime-packages.sh: no package owns $lib" >&2
		exit 1
	fi
	pkgs="$pkgs$pkg
"
done
printf '%s' "$pkgs" | sort -u
