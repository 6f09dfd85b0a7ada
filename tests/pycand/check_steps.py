"""Host steps (docs/python-candidates.md, "Host steps"): the wrappers of
tests/pycand/host_steps.py recorded in one batch, then for each the verdict, the copy
and fill steps the recording names (source and destination layouts: a transposed, a
sliced and a broadcast source, a strided destination), and the plan replayed on fresh
buffers through Triton's interpreter (tests/pycand/replay.py) against torch.

    check_steps.py OUTDIR          # records into OUTDIR, prints one line per check

Exits 1 when a check fails. Runs on the CPU."""
import json
import os
import subprocess
import sys

os.environ["TRITON_INTERPRET"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REC = os.path.join(HERE, "..", "..", "worker", "pyrec", "kgb_record.py")
MODULE = os.path.join(HERE, "host_steps.py")


def t(shape, stride, dtype="f32"):
    return {"shape": shape, "stride": stride, "dtype": dtype}


TT = t([65, 33], [1, 65])             # transposed
C = t([33, 65], [65, 1])
OUT_T = dict(t([65, 33], [33, 1]), name="out")


def unary(fn, x, out):
    return {"function": fn, "args": [{"name": "self", "tensor": x}], "outputs": [dict(out, name="out")]}


# name: (request, verdict, steps [(kind, op, src (shape, stride, offset) | value, dst (shape, stride, offset))],
#        torch's result from the inputs)
CASES = {
    "contiguous": (unary("relu_contiguous", TT, OUT_T), "pass",
                   [("copy", "contiguous", ([65, 33], [1, 65], 0), ([65, 33], [33, 1], 0))],
                   lambda x: x["self"].relu()),
    "contiguous_noop": (unary("relu_contiguous", C, t([33, 65], [65, 1])), "pass", [],
                        lambda x: x["self"].relu()),
    "reshape": (unary("relu_reshape", TT, OUT_T), "pass",
                [("copy", "reshape", ([65, 33], [1, 65], 0), ([65, 33], [33, 1], 0))],
                lambda x: x["self"].relu()),
    "out_copy": (unary("relu_out", TT, t([65, 33], [1, 65])), "pass",
                 [("copy", "contiguous", ([65, 33], [1, 65], 0), ([65, 33], [33, 1], 0)),
                  ("copy", "copy_", ([65, 33], [33, 1], 0), ([65, 33], [1, 65], 0))],
                 lambda x: x["self"].relu()),
    "sliced": (unary("relu_sliced", C, t([33, 64], [64, 1])), "pass",
               [("copy", "contiguous", ([33, 64], [65, 1], 1), ([33, 64], [64, 1], 0))],
               lambda x: x["self"][:, 1:].relu()),
    "chain": (unary("relu_chain", TT, OUT_T), "pass",
              [("copy", "clone", ([65, 33], [1, 65], 0), ([65, 33], [1, 65], 0)),
               ("copy", "contiguous", ([65, 33], [1, 65], 0), ([65, 33], [33, 1], 0))],
              lambda x: x["self"].relu()),
    "permuted": (unary("relu_permuted", t([3, 4, 5, 6], [120, 30, 6, 1], "f16"), t([6, 4, 3, 5], [60, 15, 5, 1], "f16")),
                 "pass", [("copy", "contiguous", ([6, 4, 3, 5], [1, 30, 120, 6], 0), ([6, 4, 3, 5], [60, 15, 5, 1], 0))],
                 lambda x: x["self"].permute(3, 1, 0, 2).relu()),
    "expand": ({"function": "add_expand", "args": [{"name": "self", "tensor": C},
                                                   {"name": "other", "tensor": t([65], [1])}],
                "outputs": [dict(C, name="out")]}, "pass",
               [("copy", "contiguous", ([33, 65], [0, 1], 0), ([33, 65], [65, 1], 0))],
               lambda x: x["self"] + x["other"]),
    "zeros": (unary("rowsum_zeros", C, t([33], [1])), "pass", [("fill", "zeros", 0, ([33], [1], 0))],
              lambda x: x["self"].sum(1)),
    "fill": (unary("rowsum_fill", C, t([33], [1])), "pass",
             [("fill", "fill_", 0.0, ([33], [1], 0)), ("fill", "full", 0.5, ([33], [1], 0))],
             lambda x: x["self"].sum(1) + 0.5),
    "cast": (unary("relu_float", t([33, 65], [65, 1], "f16"), t([33, 65], [65, 1], "f16")), "host_compute",
             "converts f16 to f32", None),
    "arith": (unary("relu_plus_one", C, C), "host_compute", "Tensor.add", None),
    "reduce": (unary("relu_torch_sum", C, C), "host_compute", "torch.sum", None),
    "copy_only": (unary("relu_copy_only", TT, t([65, 33], [1, 65])), "no_launch", "launched no kernel", None),
}


def wide(plan):
    """plan with kgb's step launches in their 64-bit form (index scalars i64, WIDE)."""
    p = json.loads(json.dumps(plan))
    for k in p["kernels"]:
        if k["source"] != "kgb_steps.py":
            continue
        k["configs"][0]["constants"]["WIDE"] = "1"
        sig = k["signature"].split(",")
        for i, a in enumerate(k["args"]):
            if "scalar" in a and not (k["entry"] == "kgb_fill" and i == 1):  # not the fill's value
                a["type"] = sig[i] = "i64"
        k["signature"] = ",".join(sig)
    return p


def main(outdir):
    import torch
    import replay
    names = list(CASES)
    batch = [dict(CASES[n][0], module=MODULE, save_io=True) for n in names]
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "batch.json"), "w") as f:
        json.dump({"batch": batch, "interpret": True, "timeout_s": 300, "parallel": 2}, f)
    p = subprocess.run([sys.executable, "-s", REC, "batch.json", "."], cwd=outdir)
    if p.returncode != 0:
        print("FAIL: the recorder exited %d" % p.returncode)
        return 1
    module = open(MODULE).read()
    bad = 0
    for i, n in enumerate(names):
        req, verdict, want, ref = CASES[n]
        d = os.path.join(outdir, str(i))
        try:
            rec = json.load(open(os.path.join(d, "recording.json")))
        except OSError as e:
            print("FAIL %s: no recording (%s)" % (n, e))
            bad += 1
            continue
        if rec["verdict"] != verdict:
            print("FAIL %s: %s (%s), want %s" % (n, rec["verdict"], rec["message"], verdict))
            bad += 1
            continue
        if verdict != "pass":
            ok = want in rec["message"] and not os.path.exists(os.path.join(d, "plan.json"))
            print("%s %s: %s: %s" % ("ok" if ok else "FAIL", n, verdict, rec["message"]))
            bad += not ok
            continue
        steps = [L for L in rec["launches"] if "kgb_step" in L]
        got = []
        for L in steps:
            what = (L["src"]["shape"], L["src"]["stride"], L["src"]["offset"]) if "src" in L else L["value"]
            got.append((L["kgb_step"], L["op"], what, (L["dst"]["shape"], L["dst"]["stride"], L["dst"]["offset"])))
        if got != want:
            print("FAIL %s: steps %s, want %s" % (n, got, want))
            bad += 1
            continue
        plan = json.load(open(os.path.join(d, "plan.json")))
        io = torch.load(os.path.join(d, "io.pt"))
        layouts = dict(io["inputs"])
        for o, w in zip(io["outputs"], req["outputs"]):
            layouts[w["name"]] = torch.empty_strided(w["shape"], w["stride"], dtype=o.dtype)
        want_out = ref(io["inputs"])
        ok, err = True, 0.0
        # the plan as recorded, and with every step's index arithmetic 64-bit (as for
        # views past 2^31 elements): the same result
        for p in (plan, wide(plan)):
            got_out = replay.replay(p, {"host_steps.py": module}, layouts)["out"]
            e = (got_out.double() - want_out.double()).abs().max().item()
            err = max(err, e)
            ok = ok and got_out.stride() == layouts["out"].stride() and e <= 1e-3 * max(1.0, want_out.abs().max().item())
        kernels = [k["entry"] for k in plan["kernels"]]
        print("%s %s: pass, plan %s, replayed: max err %.3g; %s" % ("ok" if ok else "FAIL", n, kernels, err,
                                                                    "; ".join(rec["steps"]) or "no host steps"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
