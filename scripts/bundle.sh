#!/bin/sh
# Build kgb here and gather what a GPU machine needs to run it into .bundle/:
# kgb-worker, kgb-cuda-bench (tests/bench/cuda_timing.c), the Triton helper, and every
# shared library the binaries link that is not part of the C runtime (ldd), so they
# run on a machine that lacks libzmq, libprotobuf-c, libjansson, libopenblas, ...
# The vendor runtimes (libcuda, libnvrtc, libnvidia-ml) are never copied: the worker
# dlopens the machine's own.
#
#   scripts/bundle.sh [DIR]        (default .bundle; git ignores it)
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-.bundle}
JOBS=$(nproc 2>/dev/null || echo 2)
O=build/rel/obj

# the worker alone: unrelated work in progress elsewhere must not block a GPU run
make -j"$JOBS" build/rel/bin/kgb-worker
# the bench links every worker object but the daemon's main()
WORKER_OBJS=$(for f in worker/*.c worker/backends/*.c; do
	[ "$f" = worker/main.c ] || echo "$O/${f%.c}.o"
done | tr '\n' ' ')
make -j"$JOBS" $WORKER_OBJS build/rel/libkgbcommon.a

rm -rf "$DIR"
mkdir -p "$DIR/lib"
cp build/rel/bin/kgb-worker "$DIR/"
cc -Icommon -Iworker -Ibuild/gen -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread \
	-o "$DIR/kgb-cuda-bench" tests/bench/cuda_timing.c $WORKER_OBJS build/rel/libkgbcommon.a \
	-lzmq -ljansson -lprotobuf-c -lopenblas -lm -ldl
cp worker/triton_compile.py "$DIR/"

# shared libraries: everything ldd resolves except the C runtime and the loader
for bin in "$DIR/kgb-worker" "$DIR/kgb-cuda-bench"; do
	ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libresolv.so.*) ;;
	# the machine's own C++ runtime is newer and backward compatible
	libstdc++.so.*|libgcc_s.so.*) ;;
	*) cp -L "$lib" "$DIR/lib/" ;;
	esac
done
echo "bundle: $DIR ($(du -sh "$DIR" | cut -f1)): $(ls "$DIR/lib" | tr '\n' ' ')"
