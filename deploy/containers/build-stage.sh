#!/bin/sh
# The build stage of every kgb image (deploy/containers/*.Containerfile), run in the
# repository root on a Debian or Ubuntu base: install the build packages, build the
# release binaries, install them under DEST with PREFIX /usr/local, and write
# DEST/usr/local/share/kgb/runtime-packages: the packages holding the shared libraries
# the binaries load, which the runtime stage installs (the same base, so the same names).
# The vendor runtimes (CUDA, HIP, Level Zero, OpenCL ICDs) are opened with dlopen at run
# time: one build serves every image, and the build needs none of them.
set -eu
dest=${1:?usage: build-stage.sh DEST}
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends build-essential pkg-config python3 \
	protobuf-c-compiler libprotobuf-c-dev libzmq3-dev libsodium-dev libuv1-dev \
	libcurl4-openssl-dev libpq-dev libjansson-dev libopenblas-dev libmicrohttpd-dev \
	ocl-icd-opencl-dev opencl-headers
make -j"$(nproc)" install DESTDIR="$dest" PREFIX=/usr/local
install -d "$dest/usr/local/share/kgb"
sh deploy/containers/runtime-packages.sh "$dest"/usr/local/bin/* "$dest/usr/local/lib/libkgb.so" \
	>"$dest/usr/local/share/kgb/runtime-packages"
echo "build-stage.sh: runtime packages: $(tr '\n' ' ' <"$dest/usr/local/share/kgb/runtime-packages")"
