#!/bin/sh
# Build kgb here and gather what a GPU machine needs to run it into .bundle/:
# kgb-worker, kgb-coordinator, kgb, libkgb.so, kgb-cuda-bench (tests/bench/cuda_timing.c),
# the Triton helper, the recorder of Python candidates (pyrec/), the kgb Python package
# (python/), every shared library the binaries link that is not part of the C
# runtime (ldd), so they run on a machine that lacks libzmq, libprotobuf-c, libjansson,
# libopenblas, libuv, libpq, ..., and this machine's PostgreSQL server (initdb, postgres,
# pg_ctl, pg_dump, pg_restore, the two server modules initdb needs, the share directory and the server's own
# libraries) as pg.tar.xz, for the embedded store (scripts/gpu-campaign.sh).
# The vendor runtimes (libcuda, libnvrtc, libnvidia-ml) are never copied: the worker
# dlopens the machine's own.
#
#   scripts/bundle.sh [DIR]        (default .bundle; git ignores it)
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-.bundle}
JOBS=$(nproc 2>/dev/null || echo 2)
O=build/rel/obj

make -j"$JOBS" build/rel/bin/kgb-worker build/rel/bin/kgb-coordinator build/rel/bin/kgb build/rel/lib/libkgb.so
# the bench links every worker object but the daemon's main()
WORKER_OBJS=$(for f in worker/*.c worker/backends/*.c; do
	[ "$f" = worker/main.c ] || echo "$O/${f%.c}.o"
done | tr '\n' ' ')
make -j"$JOBS" $WORKER_OBJS build/rel/libkgbcommon.a

rm -rf "$DIR"
mkdir -p "$DIR/lib"
cp build/rel/bin/kgb-worker build/rel/bin/kgb-coordinator build/rel/bin/kgb build/rel/lib/libkgb.so "$DIR/"
cc -Icommon -Iworker -Ibuild/gen -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread \
	-o "$DIR/kgb-cuda-bench" tests/bench/cuda_timing.c $WORKER_OBJS build/rel/libkgbcommon.a \
	-lzmq -ljansson -lprotobuf-c -lsodium -lopenblas -lm -ldl
# what the worker finds next to its binary (docs/deploy.md): the Triton helper, the
# recorder of Python candidates with the PyTorch provider it loads, the kgb package
cp worker/triton_compile.py "$DIR/"
mkdir -p "$DIR/pyrec" "$DIR/python/kgb/providers"
cp worker/pyrec/*.py python/kgb/providers/torch_aten.py "$DIR/pyrec/"
cp python/kgb/*.py "$DIR/python/kgb/"
cp python/kgb/providers/*.py "$DIR/python/kgb/providers/"

# shared libraries: everything ldd resolves except the C runtime and the loader
for bin in "$DIR/kgb-worker" "$DIR/kgb-cuda-bench" "$DIR/kgb-coordinator" "$DIR/kgb" "$DIR/libkgb.so"; do
	ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*) ;;
	# the machine's own C++ runtime is newer and backward compatible
	libstdc++.so.*|libgcc_s.so.*) ;;
	*) cp -L "$lib" "$DIR/lib/" ;;
	esac
done
# PostgreSQL, laid out as Debian has it (its binaries find share/ relative to bin/)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
if [ -n "$PGBIN" ] && [ -x "$PGBIN/postgres" ]; then
	V=$(basename "$(dirname "$PGBIN")")
	T=$(mktemp -d)
	mkdir -p "$T/usr/lib/postgresql/$V/bin" "$T/usr/lib/postgresql/$V/lib" "$T/usr/share/postgresql" "$T/lib"
	cp "$PGBIN/initdb" "$PGBIN/postgres" "$PGBIN/pg_ctl" "$T/usr/lib/postgresql/$V/bin/"
	# pg_dump too, when the client is installed: a GPU run's store comes back as a dump
	# (scripts/gpu-campaign.sh --dump) to be merged into another (docs/tables.md)
	[ -x "$PGBIN/pg_dump" ] && cp "$PGBIN/pg_dump" "$T/usr/lib/postgresql/$V/bin/"
	# and pg_restore: the second call of a proof split in two restores the first's dump
	# (scripts/gpu-python-proof.sh --phase python)
	[ -x "$PGBIN/pg_restore" ] && cp "$PGBIN/pg_restore" "$T/usr/lib/postgresql/$V/bin/"
	cp "/usr/lib/postgresql/$V/lib/plpgsql.so" "/usr/lib/postgresql/$V/lib/dict_snowball.so" \
		"$T/usr/lib/postgresql/$V/lib/"
	cp -r "/usr/share/postgresql/$V" "$T/usr/share/postgresql/"
	for b in "$T/usr/lib/postgresql/$V/bin/"*; do
		ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
	done | sort -u | while read -r lib; do
		case "$(basename "$lib")" in
		libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
		*) cp -L "$lib" "$T/lib/" ;;
		esac
	done
	echo "$V" >"$T/VERSION"
	tar -C "$T" -cJf "$DIR/pg.tar.xz" .
	rm -rf "$T"
fi
echo "bundle: $DIR: $(ls "$DIR/lib" | tr '\n' ' ')"
# the libraries travel compressed (a device run carries at most 64 MiB); the GPU
# scripts unpack them (scripts/gpu-env.sh)
tar -C "$DIR" -cJf "$DIR/lib.tar.xz" lib
rm -rf "$DIR/lib"
echo "bundle: $DIR ($(du -sh "$DIR" | cut -f1))"
