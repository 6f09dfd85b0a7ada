#!/bin/bash
# Batches of timing samples in the native provider (python/kgb/providers/run.py,
# sample_loop): driven here by a stand-in for the device's batch runner, with kgb's
# own stopping rule (kgb.Sampler from libkgb.so). Batches start at 8 and double up to
# the cap, are cut to what the budget has left, every sample the sampler took came
# from a batch (none invented, the ones past its end dropped), the occupied time is
# the batches' sum, and a cap of 1 (KGB_TIMING_BATCH=1) runs one sample at a time.
. "$(dirname "$0")/lib.sh"

use_kgb_package

out=$(python3 - <<'PY' 2>&1
import kgb
from kgb.providers.run import sample_loop, batch_cap
import os

def runner(sample_ns, wall_ns, busy_ns, log):
    def run_batch(n):
        log.append(n)
        return [sample_ns + (i % 3) for i in range(n)], float(wall_ns * n), float(busy_ns * n)
    return run_batch

# a 20 us kernel whose sample costs 100 us of wall time, 50 ms budget
s, log = kgb.Sampler(50e6), []
occ, sizes = sample_loop(s, 50e6, runner(20000, 100000, 60000, log), 256)
st, first = s.stats(), list(sizes)
assert sizes == log, (sizes, log)
assert sizes[:4] == [8, 16, 32, 64], sizes
assert max(sizes) <= 256, sizes
assert int(st["n"]) <= sum(sizes), (st["n"], sizes)
assert int(st["n"]) > sum(sizes[:-1]), (st["n"], sizes)      # the last batch was needed
assert abs(occ - 60000 * sum(sizes)) < 1e-3, occ
assert 20000 <= st["min"] <= st["median"] <= 20002, st
# the budget cuts a batch: at 5 ms a sample, a 50 ms budget allows 10 samples
s, log = kgb.Sampler(50e6), []
_, sizes = sample_loop(s, 50e6, runner(20000, 5000000, 5000000, log), 256)
assert sizes[0] == 8 and all(n <= 2 for n in sizes[1:]), sizes
# cap 1: one sample at a time
s, log = kgb.Sampler(5e6), []
_, sizes = sample_loop(s, 5e6, runner(20000, 100000, 60000, log), 1)
assert set(sizes) == {1} and len(sizes) == int(s.stats()["n"]), sizes
os.environ["KGB_TIMING_BATCH"] = "1"
assert batch_cap() == 1
os.environ["KGB_TIMING_BATCH"] = "32"
assert batch_cap() == 32
os.environ["KGB_TIMING_BATCH"] = "x"
assert batch_cap() == 256
print("batches ok", int(st["n"]), "samples in batches of", first)
PY
)
case "$out" in
	"batches ok"*) ok "sample_loop: $out" ;;
	*) printf '%s\n' "$out" >&2; fail "sample_loop" ;;
esac
test_done
