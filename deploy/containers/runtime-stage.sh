#!/bin/sh
# The runtime stage of every kgb image: install the packages the build stage listed
# (/usr/local/share/kgb/runtime-packages), tini (the images' PID 1: it passes SIGTERM on
# and reaps orphaned processes) and EXTRA... (a vendor's user-space runtime),
# create the user kgb (uid and gid 10001, groups video and render where the base has
# them: the GPU device nodes' usual groups) and a cache directory it owns.
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2046  # one package a line
apt-get install -y -qq --no-install-recommends ca-certificates tini \
	$(cat /usr/local/share/kgb/runtime-packages) "$@"
rm -rf /var/lib/apt/lists/*
ldconfig
groups=
for g in video render; do
	getent group "$g" >/dev/null && groups="${groups:+$groups,}$g"
done
groupadd --system --gid 10001 kgb
useradd --system --uid 10001 --gid kgb --create-home --home-dir /var/lib/kgb ${groups:+--groups "$groups"} kgb
install -d -o kgb -g kgb /var/cache/kgb
kgb-worker --version >/dev/null
