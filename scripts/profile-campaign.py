#!/usr/bin/env python3
"""The per-case profile of a worker's jobs (docs/worker.md, "Where a case's time goes").

    python3 scripts/profile-campaign.py [--json] [--kgb PATH] WORKER.LOG...

Reads the `done` lines of the worker logs (one per job: `op=NAME ...; profile (ms):
open 1, inputs 12, ...; cases 8, ref cache 6 hit / 2 miss`), groups the jobs by the
dataset of their operator (its source in `kgb ops --json`: aten, cublas, vllm, ...)
and prints, per dataset and for all, the jobs, cases, the milliseconds each activity
took summed over the jobs and per case, and each activity's share of the executors'
time, and the reference cache's hits and misses."""
import json
import os
import re
import subprocess
import sys

DONE = re.compile(r" done: op=(\S+) .*?profile \(ms\): ([^;]*); cases (\d+), ref cache (\d+) hit / (\d+) miss")


def sources(kgb):
    try:
        out = subprocess.run([kgb, "ops", "--json"], capture_output=True, text=True, check=True).stdout
        return {o["name"]: o.get("source", "?") for o in json.loads(out)["operators"]}
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        return {}


def main(argv):
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    kgb = os.environ.get("KGB_BIN_DIR", os.path.join(os.path.dirname(__file__), "..", "build", "rel", "bin")) + "/kgb"
    if "--kgb" in argv:
        i = argv.index("--kgb")
        kgb = argv[i + 1]
        del argv[i:i + 2]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src = sources(kgb)
    groups = {}
    for path in argv:
        with open(path, errors="replace") as f:
            for line in f:
                m = DONE.search(line)
                if not m:
                    continue
                op, fields, cases, hits, misses = m.groups()
                for key in (src.get(op, "?"), "all"):
                    g = groups.setdefault(key, {"jobs": 0, "cases": 0, "hits": 0, "misses": 0, "ms": {}})
                    g["jobs"] += 1
                    g["cases"] += int(cases)
                    g["hits"] += int(hits)
                    g["misses"] += int(misses)
                    for kv in fields.split(", "):
                        name, _, val = kv.rpartition(" ")
                        g["ms"][name] = g["ms"].get(name, 0.0) + float(val)
    if as_json:
        print(json.dumps(groups, indent=1, sort_keys=True))
        return 0 if groups else 1
    if not groups:
        print("profile-campaign: no job with a profile in %s" % ", ".join(argv), file=sys.stderr)
        return 1
    for key in sorted(groups, key=lambda k: (k == "all", k)):
        g = groups[key]
        total = sum(g["ms"].values()) or 1.0
        n = max(g["cases"], 1)
        print("PROFILE dataset=%s jobs=%d cases=%d executor_s=%.1f ref_cache=%d hit/%d miss"
              % (key, g["jobs"], g["cases"], total / 1e3, g["hits"], g["misses"]))
        for name, ms in sorted(g["ms"].items(), key=lambda kv: -kv[1]):
            print("  %-10s %10.1f s %9.2f ms/case %5.1f%%" % (name, ms / 1e3, ms / n, 100 * ms / total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
