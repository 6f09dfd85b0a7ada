#!/usr/bin/env python3
"""The per-case profile of a worker's jobs (docs/worker.md, "Where a case's time goes").

    python3 scripts/profile-campaign.py [--json] [--by-kind] [--kgb PATH] WORKER.LOG...

Reads the `done` lines of the worker logs (one per job: `op=NAME ... wall 900 ms;
profile (ms): open 1, inputs 12, ...; cases 8, ref cache 6 hit / 2 miss`), groups the
jobs by the dataset of their operator (its source in `kgb ops --json`: aten, cublas,
vllm, ...), or with --by-kind by the kind of candidate (python: the job recorded a
Python module; native: the PyTorch or library provider ran it; kernel: neither), and
prints, per group and for all, the jobs, cases, the jobs' wall time per case, the
milliseconds each activity took summed over the jobs and per case, and each
activity's share of the executors' time, and the reference cache's hits and misses.
Where Python candidates were recorded on a device, the recording's own breakdown
(`; recording (ms): startup ..., call ...`) follows, per case of the jobs that
report it (docs/python-candidates.md, "Where a recording's time goes")."""
import json
import os
import re
import subprocess
import sys

DONE = re.compile(r" done: op=(\S+) .*?profile \(ms\): ([^;]*); cases (\d+), ref cache (\d+) hit / (\d+) miss")
WALL = re.compile(r", wall (\d+) ms;")
REC = re.compile(r"; recording \(ms\): ([^;\n]*)")


def kind_of(ms):
    if ms.get("record", 0) > 0:
        return "python"
    return "native" if ms.get("provider", 0) > 0 else "kernel"


def sources(kgb):
    try:
        out = subprocess.run([kgb, "ops", "--json"], capture_output=True, text=True, check=True).stdout
        return {o["name"]: o.get("source", "?") for o in json.loads(out)["operators"]}
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError):
        return {}


def main(argv):
    as_json = "--json" in argv
    by_kind = "--by-kind" in argv
    argv = [a for a in argv if a not in ("--json", "--by-kind")]
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
                w = WALL.search(line)
                ms = {}
                for kv in fields.split(", "):
                    name, _, val = kv.rpartition(" ")
                    ms[name] = float(val)
                rm = {}
                r = REC.search(line)
                for kv in (r.group(1).split(", ") if r else []):
                    name, _, val = kv.rpartition(" ")
                    rm[name] = float(val)
                for key in (kind_of(ms) if by_kind else src.get(op, "?"), "all"):
                    g = groups.setdefault(key, {"jobs": 0, "cases": 0, "hits": 0, "misses": 0, "wall_ms": 0.0,
                                                "ms": {}, "rec_cases": 0, "rec_ms": {}})
                    g["jobs"] += 1
                    g["cases"] += int(cases)
                    g["hits"] += int(hits)
                    g["misses"] += int(misses)
                    g["wall_ms"] += float(w.group(1)) if w else 0.0
                    for name, v in ms.items():
                        g["ms"][name] = g["ms"].get(name, 0.0) + v
                    if rm:
                        g["rec_cases"] += int(cases)
                        for name, v in rm.items():
                            g["rec_ms"][name] = g["rec_ms"].get(name, 0.0) + v
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
        print("PROFILE %s=%s jobs=%d cases=%d wall_per_case_ms=%.0f executor_s=%.1f ref_cache=%d hit/%d miss"
              % ("kind" if by_kind else "dataset", key, g["jobs"], g["cases"], g["wall_ms"] / n, total / 1e3,
                 g["hits"], g["misses"]))
        for name, ms in sorted(g["ms"].items(), key=lambda kv: -kv[1]):
            print("  %-10s %10.1f s %9.2f ms/case %5.1f%%" % (name, ms / 1e3, ms / n, 100 * ms / total))
        if g["rec_ms"]:
            rt = sum(g["rec_ms"].values()) or 1.0
            rn = max(g["rec_cases"], 1)
            print("  recording, %d cases:" % g["rec_cases"])
            for name, ms in sorted(g["rec_ms"].items(), key=lambda kv: -kv[1]):
                print("    %-8s %10.1f s %9.2f ms/case %5.1f%%" % (name, ms / 1e3, ms / rn, 100 * ms / rt))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
