#!/bin/sh
# Time the CPU references of every case of every operator of a dataset: once cold (an
# empty reference cache) and once warm (the cache the cold run filled), on all cores.
# Prints the machine, then for each run the wall seconds and the ten slowest operators.
#
#   scripts/bench-references.sh [--dataset NAME] [--jobs N] [--runs N]
#
# Environment: KGB_BIN (default build/rel/bin), KGB_REF_CACHE_MB (default here 32768,
# so that the warm run finds every reference; the workers' default is 2048).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KGB_BIN:-$root/build/rel/bin}
dataset=aten
jobs=$(nproc)
runs=1
while [ $# -gt 0 ]; do
	case $1 in
	--dataset) dataset=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "bench-references.sh: unknown argument '$1' (--dataset NAME, --jobs N, --runs N)" >&2; exit 1 ;;
	esac
done
[ -x "$bin/kgb" ] || { echo "bench-references.sh: $bin/kgb not found (run make)" >&2; exit 1; }

cache=$(mktemp -d "${TMPDIR:-/tmp}/kgb-refbench.XXXXXX")
trap 'rm -rf "$cache"' EXIT INT TERM
export KGB_CACHE_DIR="$cache"
export KGB_REF_CACHE_MB="${KGB_REF_CACHE_MB:-32768}"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) online cores ($cpu), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo "command: kgb refs --dataset $dataset --jobs $jobs (cache limit ${KGB_REF_CACHE_MB} MiB)"

i=1
while [ "$i" -le "$runs" ]; do
	rm -rf "$cache/ref"
	echo
	echo "== cold run $i (empty cache)"
	"$bin/kgb" refs --dataset "$dataset" --jobs "$jobs" --top 10
	echo
	echo "== warm run $i (cache filled by the cold run: $(du -sh "$cache" | cut -f1))"
	"$bin/kgb" refs --dataset "$dataset" --jobs "$jobs" --top 10
	i=$((i + 1))
done
