# Sourced by the GPU scripts: unpack what scripts/bundle.sh packed, once.
#   B: the bundle directory. Sets KGB_BUNDLE_LIB; with the store (gpu_store), also
#   KGB_PG_BINDIR and the server's library path.
if [ ! -d "$B/lib" ] && [ -f "$B/lib.tar.xz" ]; then
	tar -C "$B" -xJf "$B/lib.tar.xz" || { echo "gpu-env: cannot unpack $B/lib.tar.xz" >&2; exit 2; }
fi
export KGB_BUNDLE_LIB="$B/lib"

# The embedded store's server, unpacked where the unprivileged user it runs as can
# read it (PostgreSQL refuses root; without a 'postgres' user the coordinator runs it
# as 'nobody').
gpu_store() {
	PGROOT=${KGB_GPU_PGROOT:-/tmp/kgb-pg}
	if [ ! -x "$PGROOT/usr/lib/postgresql/$(cat "$PGROOT/VERSION" 2>/dev/null)/bin/postgres" ]; then
		[ -f "$B/pg.tar.xz" ] || { echo "gpu-env: no $B/pg.tar.xz (scripts/bundle.sh packs it)" >&2; return 1; }
		mkdir -p "$PGROOT" && tar -C "$PGROOT" -xJf "$B/pg.tar.xz" || return 1
		chmod -R a+rX "$PGROOT"
	fi
	export KGB_PG_BINDIR="$PGROOT/usr/lib/postgresql/$(cat "$PGROOT/VERSION")/bin"
	export KGB_PG_LIB="$PGROOT/lib"
}
