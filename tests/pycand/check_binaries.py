"""The binaries a recording keeps on a GPU (kgb_record.keep_binaries, docs/python-
candidates.md "On a GPU"), checked on the CPU with stand-ins for Triton's compiled
kernels: a launch whose compiled run-time parameters are the plan's keeps its binary
and an ABI in triton_compile.py's format; a launch where Triton made an argument a
constant (an int equal to 1), one with another type, an autotuned one whose
configurations were not compiled, one that Triton did not compile and one without a
cubin keep none; of an autotuned launch whose configurations were compiled, each
configuration the plan keeps and whose parameters are the plan's keeps its binary as
k<i>.c<j>; no stand-in is left in the recording.

    check_binaries.py OUTDIR      # prints one line per check; exits 1 when one fails"""
import json
import os
import sys
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "pyrec"))
import kgb_record  # noqa: E402

Target = namedtuple("Target", "backend arch warp_size")
Meta = namedtuple("Meta", "name num_warps num_ctas shared target")


class Src:
    def __init__(self, signature):
        self.signature = signature


class Kernel:
    def __init__(self, signature, cubin=b"\x7fELF-stand-in"):
        self.src = Src(signature)
        self.asm = {"cubin": cubin}
        self.metadata = Meta("add_kernel", 8, 1, 1024, Target("cuda", 90, 32))


def launch(args, kernel=None, **extra):
    L = {"kernel": "add_kernel", "args": [{"name": n, "type": t} for n, t in args]}
    if kernel is not None:
        L["_compiled"] = kernel
    L.update(extra)
    return L


PTRS = [("x", "*fp32"), ("y", "*fp32"), ("out", "*fp32")]
SIG = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}
rec = {"launches": [
    launch(PTRS + [("n", "i32")], Kernel(SIG)),                                   # 0: kept
    launch(PTRS + [("n", "i32")], Kernel(dict(SIG, n="constexpr"))),              # 1: n == 1
    launch(PTRS + [("n", "i64")], Kernel(SIG)),                                   # 2: another type
    launch(PTRS + [("n", "i32")], Kernel(SIG), configs=[{"constants": {}}]),      # 3: autotuned
    launch(PTRS + [("n", "i32")]),                                                # 4: not compiled
    launch(PTRS + [("n", "i32"), ("flag", "i1")], Kernel(dict(SIG, flag="u1"))),  # 5: a bool, u1 for Triton
    launch(PTRS + [("n", "i32")], Kernel(SIG, cubin=None)),                       # 6: no cubin
    # 7: autotuned, every configuration compiled (warm_configs): the plan keeps the
    # configurations launching the recorded grid (0 and 2, its c0 and c1); 2 made n a
    # constant, so only c0 is kept
    launch(PTRS + [("n", "i32")], grid=[3, 1, 1],
           configs=[{"constants": {}, "grid": [3, 1, 1]}, {"constants": {}, "grid": [6, 1, 1]},
                    {"constants": {}, "grid": [3, 1, 1]}],
           _compiled_configs=[Kernel(SIG, cubin=b"\x7fELF-c0"), Kernel(SIG), Kernel(dict(SIG, n="constexpr"))]),
]}
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
kgb_record._load_helper()
kgb_record.keep_binaries(rec, out)
failed = 0


def check(ok, what):
    global failed
    print(("ok " if ok else "FAIL ") + what)
    failed += not ok


kept = sorted(f for f in os.listdir(out) if ".jit." in f)
check(kept == ["k0.jit.abi.json", "k0.jit.cubin", "k7.c0.jit.abi.json", "k7.c0.jit.cubin"],
      "a binary kept for launch 0 and configuration 0 of launch 7 only: %s" % kept)
with open(os.path.join(out, "k7.c0.jit.cubin"), "rb") as f:
    check(f.read() == b"\x7fELF-c0", "launch 7's c0 is its first configuration's binary")
with open(os.path.join(out, "k0.jit.abi.json")) as f:
    abi = json.load(f)
check([a["name"] for a in abi["args"]] == ["x", "y", "out", "n"] and abi["shared"] == 1024 and
      abi["num_warps"] == 8 and abi["target"]["arch"] == 90 and abi["kernel_name"] == "add_kernel",
      "the ABI names the run-time parameters, shared memory, warps and target: %s" % abi["args"])
with open(os.path.join(out, "k0.jit.cubin"), "rb") as f:
    check(f.read() == b"\x7fELF-stand-in", "the binary is Triton's, byte for byte")
check(all("_compiled" not in L and "_compiled_configs" not in L for L in rec["launches"]),
      "no compiled kernel left in the recording")
json.dumps(rec)
sys.exit(1 if failed else 0)
