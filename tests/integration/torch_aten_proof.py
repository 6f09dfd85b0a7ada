"""Proof of kgb's definitions against PyTorch on the CPU, for one dataset:

  aten  every case of every ATen operator run through torch.ops.aten
        (kgb.providers.torch_aten); deviations in tests/integration/torch_aten_deviations.txt
  vllm  every case of every vLLM operator that has a PyTorch composite
        (kgb.providers.vllm_ops.COMPOSITES: the computation vLLM's own tests use as
        reference); deviations in tests/integration/torch_vllm_deviations.txt. Operators
        without a composite are listed and not run.

Each case runs on kgb's inputs and is judged by kgb's validator (vllm: with the OUT
buffers poisoned, as the native provider does, so an unwritten element fails). A case
that fails must be covered by an entry of the deviations file; anything else is a
disagreement, which is a bug in kgb's definition or in the composite until shown
otherwise.

usage: torch_aten_proof.py [--dataset aten|vllm] [--ops a,b] [--max-elems N] [--seed S]
                           [--profile] [--deviations FILE] [--device cpu|cuda:N]
                           [--heldout N [--heldout-key K]]
  --max-elems N  skip cases whose tensors hold more than N elements in all (0: run every
                 case; default $KGB_TORCH_PROOF_MAX_ELEMS or 0); vllm runs each operator's
                 case 0 (its smoke case) whatever its size, so that none goes unchecked
  --profile      also time kgb's reference apart from the validator
  --device D     run PyTorch on D (default cpu); on a GPU the deviations of kind cpu do
                 not apply, and the listing names every failing case with its message
  --heldout N    instead of the public cases, held-out cases (docs/security.md,
                 "Foreknowledge"): N of each of eight public cases spread over the grid,
                 drawn with --heldout-key (default 1), for every operator that has them;
                 a deviation's case= selector then names the public case resized
Exit status: 0 when every failing case is an expected deviation, 1 otherwise."""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import kgb  # noqa: E402
from kgb.providers import torch_aten, vllm_ops  # noqa: E402
import torch  # noqa: E402


class Deviation:
    def __init__(self, path, lineno, op, selector, kind, reason):
        self.where = "%s:%d" % (os.path.basename(path), lineno)
        self.selector = selector
        self.op, self.kind, self.reason = op, kind, reason
        self.match = {}
        for item in selector.split():
            if item == "*":
                continue
            if "=" not in item:
                raise SystemExit("%s: selector item %r is not key=value or key!=value" % (self.where, item))
            k, v = item.split("=", 1)
            self.match[k] = v
        self.used = 0

    def covers(self, case):
        if case.op.name != self.op:
            return False
        for k, v in self.match.items():
            if k == "case":
                lo, _, hi = v.partition("-")
                if not int(lo) <= case.index <= int(hi or lo):
                    return False
            elif k.endswith("!"):
                if case.params.get(k[:-1]) == v:
                    return False
            elif case.params.get(k) != v:
                return False
        return True


def load_deviations(path):
    devs = []
    kinds = ("cpu", "pending", "unsupported")
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 4 or not all(parts):
                raise SystemExit("%s:%d: want 'op | selector | kind | reason', got %r" % (path, n, line))
            if parts[2] not in kinds:
                raise SystemExit("%s:%d: kind %r is not one of %s" % (path, n, parts[2], ", ".join(kinds)))
            if kgb.lib.kgb_lib_op_find(parts[0].encode()) < 0:
                raise SystemExit("%s:%d: no operator %r in the catalog" % (path, n, parts[0]))
            devs.append(Deviation(path, n, *parts))
    return devs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", choices=("aten", "vllm"), default="aten")
    ap.add_argument("--ops", default="")
    ap.add_argument("--max-elems", type=int, default=int(os.environ.get("KGB_TORCH_PROOF_MAX_ELEMS", "0")))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--deviations", default="")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--heldout", type=int, default=0)
    ap.add_argument("--heldout-key", type=int, default=1)
    args = ap.parse_args()
    devs = load_deviations(args.deviations or os.path.join(HERE, "torch_%s_deviations.txt" % args.dataset))
    dev = None if args.device == "cpu" else torch.device(args.device)
    if dev is not None:
        devs = [d for d in devs if d.kind != "cpu"]
        torch_aten.set_device(dev)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    want = set(filter(None, args.ops.split(",")))
    ops = [o for o in kgb.operators(args.dataset) if not want or o.name in want]
    if want - {o.name for o in ops}:
        raise SystemExit("no %s operator named %s" % (args.dataset, ", ".join(sorted(want - {o.name for o in ops}))))
    poison = kgb.POISON
    if args.dataset == "aten":
        missing = [o.name for o in ops if not torch_aten.supports(o.name)]
        if missing:
            print("FAIL no PyTorch mapping for %s" % ", ".join(missing))
            return 1
        runner = lambda o: torch_aten.run  # noqa: E731
    else:
        poison = 0xFF
        uncovered = [o.name for o in ops if o.name not in vllm_ops.COMPOSITES]
        if uncovered:
            print("not run (no composite): %s" % ", ".join(uncovered))
        ops = [o for o in ops if o.name in vllm_ops.COMPOSITES]

        def runner(o):
            fn = vllm_ops.COMPOSITES[o.name]

            def run(c, a):
                r = fn(c, a)
                outs = [t.name for t in c.tensors if t.role != "in"]
                missing = [n for n in outs if n not in r]
                if missing:
                    raise RuntimeError("the composite returned no %s" % ", ".join(missing))
                return {n: r[n] for n in outs}
            return run
    print("torch %s, kgb %s (catalog %s), %d %s operators, seed %d, %s%s" % (
        torch.__version__, kgb.version(), kgb.catalog_version(), len(ops), args.dataset, args.seed,
        "every case" if args.max_elems <= 0 else "cases of at most %d elements" % args.max_elems,
        "; held-out cases, %d of 8 public cases each, key %d" % (args.heldout, args.heldout_key)
        if args.heldout > 0 else ""))
    t_all = time.time()
    tm = {"case+inputs": 0.0, "torch": 0.0, "reference": 0.0, "validate": 0.0}
    tot = {"run": 0, "pass": 0, "expected": 0, "unexpected": 0, "skipped": 0}
    unexpected = []
    for o in ops:
        run = runner(o)
        st = {"run": 0, "pass": 0, "expected": 0, "unexpected": 0, "skipped": 0}
        todo = range(o.cases)
        if args.heldout > 0:
            bases = sorted({b * o.cases // 8 for b in range(8)})
            todo = [o.heldout_index(b, h) for b in bases for h in range(args.heldout)]
            todo = [i for i in todo if i > 0]
        for i in todo:
            t0 = time.time()
            try:
                c = kgb.Case(o, i, args.seed, heldout_key=args.heldout_key if args.heldout > 0 else 0)
            except kgb.KgbError as e:
                st["run"] += 1
                st["unexpected"] += 1
                unexpected.append("%s case %d: %s" % (o.name, i, e))
                continue
            if args.heldout > 0:
                c.index = int(c.label.split()[1][3:])  # "heldout=H of=BASE ...": deviations name BASE
            if args.max_elems > 0 and sum(t.storage for t in c.tensors) > args.max_elems and \
                    not (i == 0 and args.dataset == "vllm"):
                st["skipped"] += 1
                c.close()
                continue
            st["run"] += 1
            why = None
            try:
                a = c.inputs("torch", device=dev)
                t1 = time.time()
                tm["case+inputs"] += t1 - t0
                with torch.no_grad():
                    r = run(c, a)
                    if dev is not None:
                        torch.cuda.synchronize(dev)
                        r = {k: v.cpu() for k, v in r.items()}
                t2 = time.time()
                tm["torch"] += t2 - t1
                if args.profile:
                    c.raw_reference(next(t.name for t in c.tensors if t.role != "in"))
                t3 = time.time()
                tm["reference"] += t3 - t2
                v = c.validate(r, poison=poison)
                tm["validate"] += time.time() - t3
                if not v.ok:
                    why = "%s: %s" % (v.name, v.message)
            except Exception as e:  # the provider or PyTorch refused the case
                why = "error: %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:200])
            if why is None:
                st["pass"] += 1
            else:
                d = next((d for d in devs if d.covers(c)), None)
                if d:
                    d.used += 1
                    st["expected"] += 1
                else:
                    st["unexpected"] += 1
                    unexpected.append("%s case %d (%s): %s" % (o.name, i, c.label, why))
            c.close()
        for k in tot:
            tot[k] += st[k]
        print("%-4s %-34s %4d run %4d pass %4d expected %3d unexpected %4d skipped" % (
            "ok" if st["unexpected"] == 0 else "FAIL", o.name, st["run"], st["pass"], st["expected"],
            st["unexpected"], st["skipped"]), flush=True)
    wall = time.time() - t_all
    for u in unexpected:
        print("  disagreement: " + u)
    for d in devs if args.heldout <= 0 else []:
        if d.used == 0 and (not want or d.op in want):
            print("  note: %s (%s %s) matched no failing case: drop it once the full grid confirms" % (
                d.where, d.op, d.selector))
    print("cases: %d run, %d pass, %d expected deviations, %d disagreements, %d skipped (size cap)" % (
        tot["run"], tot["pass"], tot["expected"], tot["unexpected"], tot["skipped"]))
    print("time: %.1f s wall; %s" % (wall, ", ".join("%s %.1f s" % kv for kv in tm.items() if kv[1] > 0)))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
