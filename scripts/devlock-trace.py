#!/usr/bin/env python3
"""How a device's time split between its executors' holds of the device lock.

  KGB_DEVLOCK_TRACE=FILE kgb-worker ...     (every executor appends its holds to FILE)
  python3 scripts/devlock-trace.py FILE [--json]

A line of FILE is "pid mode asked granted released" (mode SH or EX, CLOCK_MONOTONIC
ns), written by worker/devlock.c at the end of each hold. Over the span from the first
request to the last release this prints the share of time the device was held
exclusively (timing), held shared only (validation runs), and not held at all (every
executor busy on the CPU: inputs, references, comparisons, or no job), how long an
exclusive taker waited, and the gaps between consecutive exclusive holds, split into
those during which another exclusive taker was already waiting (handovers: the lock's
order) and those during which none was (dry spells: no timing ready).
"""
import json
import sys


def load(path):
    holds = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.split()
            if len(p) != 5 or p[1] not in ("SH", "EX"):
                sys.exit(f"{path}:{n}: not a hold line (pid mode asked granted released): {line.strip()!r}")
            try:
                pid, asked, granted, released = int(p[0]), int(p[2]), int(p[3]), int(p[4])
            except ValueError:
                sys.exit(f"{path}:{n}: a time is not an integer: {line.strip()!r}")
            if not asked <= granted <= released:
                sys.exit(f"{path}:{n}: times out of order (asked {asked}, granted {granted}, released {released})")
            holds.append((pid, p[1], asked, granted, released))
    if not holds:
        sys.exit(f"{path}: no holds")
    return holds


def union(intervals):
    """Merged [a, b) intervals, sorted."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(iv):
    return sum(b - a for a, b in iv)


def minus(iv, cut):
    """iv less cut (both merged and sorted)."""
    out, j = [], 0
    for a, b in iv:
        while j < len(cut) and cut[j][1] <= a:
            j += 1
        k, x = j, a
        while k < len(cut) and cut[k][0] < b:
            if cut[k][0] > x:
                out.append([x, cut[k][0]])
            x = max(x, cut[k][1])
            k += 1
        if x < b:
            out.append([x, b])
    return out


def pct(v, vs):
    if not vs:
        return 0.0
    s = sorted(vs)
    return s[min(len(s) - 1, int(v * len(s)))]


def summary(holds):
    t0 = min(h[2] for h in holds)
    t1 = max(h[4] for h in holds)
    span = t1 - t0
    ex = union([(h[3], h[4]) for h in holds if h[1] == "EX"])
    sh = minus(union([(h[3], h[4]) for h in holds if h[1] == "SH"]), ex)
    exs = sorted((h[3], h[4], h[2]) for h in holds if h[1] == "EX")
    gaps = [b[0] - a[1] for a, b in zip(exs, exs[1:])]
    # a gap is a handover when a later exclusive taker had asked before the hold ended
    # (how long it lasts is the lock's doing), a dry spell when none had (every
    # executor busy with validation or CPU work)
    first_ask = [0] * len(exs)   # the earliest request among the holds from i on
    for i in range(len(exs) - 1, -1, -1):
        first_ask[i] = min(exs[i][2], first_ask[i + 1]) if i + 1 < len(exs) else exs[i][2]
    handover = [b[0] - a[1] for i, (a, b) in enumerate(zip(exs, exs[1:])) if first_ask[i + 1] < a[1]]
    dry = [b[0] - a[1] for i, (a, b) in enumerate(zip(exs, exs[1:])) if first_ask[i + 1] >= a[1]]
    # a dry spell in two parts: until the next timing asks, then while it waits for
    # the shared holds in progress to end
    dry_idle = sum(first_ask[i + 1] - a[1] for i, (a, b) in enumerate(zip(exs, exs[1:])) if first_ask[i + 1] >= a[1])
    dry_drain = sum(b[0] - first_ask[i + 1] for i, (a, b) in enumerate(zip(exs, exs[1:])) if first_ask[i + 1] >= a[1])
    waits = [h[3] - h[2] for h in holds if h[1] == "EX"]
    shd = [h[4] - h[3] for h in holds if h[1] == "SH"]
    exd = [h[4] - h[3] for h in holds if h[1] == "EX"]
    # each executor's first hold: on a GPU, the opening of its device (context, BLAS
    # handle), a shared hold that timings wait behind
    first = {}
    for h in holds:
        if h[0] not in first or h[2] < first[h[0]][2]:
            first[h[0]] = h
    fd = [h[4] - h[3] for h in first.values()]
    ms = 1e6
    return {
        "span_s": span / 1e9,
        "executors": len({h[0] for h in holds}),
        "holds_ex": len(exd),
        "holds_sh": len(shd),
        "exclusive_pct": 100.0 * length(ex) / span if span else 0.0,
        "shared_only_pct": 100.0 * length(sh) / span if span else 0.0,
        "unheld_pct": 100.0 * (span - length(ex) - length(sh)) / span if span else 0.0,
        "ex_hold_ms_p50": pct(0.5, exd) / ms,
        "sh_hold_ms_p50": pct(0.5, shd) / ms,
        "sh_hold_ms_p90": pct(0.9, shd) / ms,
        "ex_wait_ms_p50": pct(0.5, waits) / ms,
        "ex_gap_ms_p50": pct(0.5, gaps) / ms,
        "ex_gap_ms_p90": pct(0.9, gaps) / ms,
        "ex_gap_s_sum": sum(g for g in gaps if g > 0) / 1e9,
        "handover_gaps": len(handover),
        "handover_gap_s_sum": sum(g for g in handover if g > 0) / 1e9,
        "dry_gaps": len(dry),
        "dry_gap_s_sum": sum(g for g in dry if g > 0) / 1e9,
        "dry_before_ask_s": dry_idle / 1e9,
        "dry_drain_s": dry_drain / 1e9,
        "first_hold_ms_p50": pct(0.5, fd) / ms,
        "first_hold_ms_p90": pct(0.9, fd) / ms,
        "first_hold_s_sum": sum(fd) / 1e9,
    }


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 1:
        sys.exit("usage: scripts/devlock-trace.py FILE [--json]")
    s = summary(load(args[0]))
    if "--json" in sys.argv:
        print(json.dumps(s, indent=1))
        return
    print("DEVLOCK span_s=%.1f executors=%d exclusive=%.1f%% shared_only=%.1f%% unheld=%.1f%%"
          % (s["span_s"], s["executors"], s["exclusive_pct"], s["shared_only_pct"], s["unheld_pct"]))
    print("DEVLOCK holds ex=%d (p50 %.1f ms) sh=%d (p50 %.1f ms, p90 %.1f ms); exclusive wait p50 %.1f ms; "
          "gaps between exclusive holds p50 %.2f ms p90 %.2f ms, %.1f s in all"
          % (s["holds_ex"], s["ex_hold_ms_p50"], s["holds_sh"], s["sh_hold_ms_p50"], s["sh_hold_ms_p90"],
             s["ex_wait_ms_p50"], s["ex_gap_ms_p50"], s["ex_gap_ms_p90"], s["ex_gap_s_sum"]))
    print("DEVLOCK gaps with a timing waiting %d (%.2f s in all), with none waiting %d (%.2f s in all: "
          "%.2f s until the next timing asked, %.2f s while it waited for shared holds to end)"
          % (s["handover_gaps"], s["handover_gap_s_sum"], s["dry_gaps"], s["dry_gap_s_sum"],
             s["dry_before_ask_s"], s["dry_drain_s"]))
    print("DEVLOCK each executor's first hold (on a GPU its device opening) p50 %.1f ms p90 %.1f ms, %.1f s in all"
          % (s["first_hold_ms_p50"], s["first_hold_ms_p90"], s["first_hold_s_sum"]))


if __name__ == "__main__":
    main()
