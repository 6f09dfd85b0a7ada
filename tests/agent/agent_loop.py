#!/usr/bin/env python3
"""An agent's loop around `kgb verify`, as a coding agent would script it: apply the
next edit to the candidate, ask kgb for a verdict on the dev cases, read the JSON,
stop when every dev case passes or the edits run out.

    agent_loop.py CANDIDATE EDIT... [--kgb KGB] [--verify-args ARGS] [--transcript FILE]

CANDIDATE is the file the agent edits (a kernel source beside its plan, or a Python
module); each EDIT is the next version of it (here, canned: an agent would write it from
the previous answer's failures and log). The verify target is CANDIDATE's directory
when it holds a plan.json, else CANDIDATE itself. Every answer goes to the transcript,
one JSON object per line, with the exit status kgb gave. Exit status 0 when a version
passed, 1 when none did.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def verify(kgb, args, target):
    p = subprocess.run(kgb + ["verify", "--json"] + args + [target], capture_output=True, text=True)
    try:
        answer = json.loads(p.stdout)
    except ValueError:
        answer = {"passed": False, "error": "no JSON answer: " + p.stdout[-400:] + p.stderr[-400:]}
    answer["exit_status"] = p.returncode
    return answer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("candidate")
    ap.add_argument("edits", nargs="+")
    ap.add_argument("--kgb", default="kgb")
    ap.add_argument("--verify-args", default="", help="more options for kgb verify, e.g. --no-timing")
    ap.add_argument("--transcript", default="-")
    a = ap.parse_args()
    d = os.path.dirname(os.path.abspath(a.candidate))
    target = d if os.path.exists(os.path.join(d, "plan.json")) else a.candidate
    out = sys.stdout if a.transcript == "-" else open(a.transcript, "w")
    for n, edit in enumerate(a.edits, 1):
        shutil.copyfile(edit, a.candidate)
        answer = verify(a.kgb.split(), a.verify_args.split(), target)
        answer["attempt"] = n
        out.write(json.dumps(answer) + "\n")
        out.flush()
        if answer.get("passed"):
            return 0
        # what an agent reads before its next edit
        for f in answer.get("failures", [])[:5]:
            print("attempt %d: case %s [%s] %s: %s" % (n, f["case"], f["name"], f["verdict"], f["message"][:120]),
                  file=sys.stderr)
        if answer.get("error"):
            print("attempt %d: %s" % (n, answer["error"]), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
