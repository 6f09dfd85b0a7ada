"""A recorded plan (worker/pyrec/kgb_record.py's plan.json) replayed on the CPU
through Triton's interpreter, on fresh buffers: the plan's launches in order, every
tensor and scratch buffer allocated from the plan and the case's layouts alone, the
outputs and scratch poisoned first, as kgb's executor does. For tests that check a
plan, not the recording, gives the operator's result.

    import replay                      # tests/pycand/ on sys.path
    outs = replay.replay(plan, {"add.py": module_text}, {"self": x, "out": out_layout})

`tensors` maps each tensor name of the plan to a torch tensor: an input's values and
layout, or an output's layout (its values are not read). Returns {name: tensor} for
every tensor of the plan, in its layout, holding what the launches left there.
Triton must be in interpreter mode (TRITON_INTERPRET=1 before it is imported)."""
import os
import sys
import tempfile

PYREC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "pyrec")
sys.path.insert(0, PYREC)
import kgb_replay  # noqa: E402  (the worker's replayer: kernels found and launched as it does)


def _number(s):
    return kgb_replay.number(s)


def _span_bytes(t):
    if t.numel() == 0:
        return 0
    return (t.storage_offset() + 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))) * t.element_size()


def replay(plan, sources, tensors, poison=0x5A, seed=0):
    import torch
    gen = torch.Generator().manual_seed(seed)
    bufs = {}
    for name, t in tensors.items():
        b = torch.full((_span_bytes(t),), poison, dtype=torch.uint8)
        # an input's values in its own layout (outputs keep the poison)
        view = torch.as_strided(b.view(t.dtype) if b.numel() else b, t.shape, t.stride(), t.storage_offset())
        if t.numel():
            view.copy_(t)
        bufs[name] = b
    for s in plan.get("scratch", []):
        n = int(_number(s["bytes"]))
        bufs[s["name"]] = (torch.zeros(n, dtype=torch.uint8) if s.get("zero")
                           else torch.randint(1, 255, (n,), dtype=torch.uint8, generator=gen))
    # the replayer's launches on these buffers (no guard bands: g = 0); its modules are
    # written to the working directory and kept by source name, so each replay starts
    # afresh in a directory of its own; kgb's step kernels come from beside it
    kgb_replay._MODULES.clear()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            held = {name: (b, b.numel(), 0) for name, b in bufs.items()}
            for ki, k in enumerate(plan["kernels"]):
                kgb_replay.launch(ki, k, held, 0, sources)
        finally:
            os.chdir(cwd)
            kgb_replay._MODULES.clear()
    return {name: torch.as_strided(bufs[name].view(t.dtype) if bufs[name].numel() else bufs[name],
                                   t.shape, t.stride(), t.storage_offset())
            for name, t in tensors.items()}
