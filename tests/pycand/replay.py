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
import importlib.util
import os
import sys
import tempfile

STEPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "pyrec", "kgb_steps.py")

TYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64", "i8": "int8",
         "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "i1": "int8",
         "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}


def sources_with_steps(sources):
    """sources plus kgb's own step kernels under the name plans give them."""
    with open(STEPS) as f:
        return dict(sources, **{"kgb_steps.py": f.read()})


def _load(name, text, cache, tmp):
    if name not in cache:
        path = os.path.join(tmp, "m%d_%s" % (len(cache), os.path.basename(name)))
        with open(path, "w") as f:
            f.write(text)
        spec = importlib.util.spec_from_file_location("kgb_replay_%d" % len(cache), path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        cache[name] = mod
    return cache[name]


def _number(s):
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    raise ValueError("not a number: %r" % (s,))


def _span_bytes(t):
    if t.numel() == 0:
        return 0
    return (t.storage_offset() + 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))) * t.element_size()


def replay(plan, sources, tensors, poison=0x5A, seed=0):
    import torch
    sources = sources_with_steps(sources)
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
    cache = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in plan["kernels"]:
            fn = getattr(_load(k["source"], sources[k["source"]], cache, tmp), k["entry"])
            sig = k["signature"].split(",")
            args = []
            for a, ty in zip(k["args"], sig):
                if "tensor" in a or "scratch" in a:
                    b = bufs[a.get("tensor") or a.get("scratch")]
                    args.append(b.view(getattr(torch, TYPES[ty[1:]])))
                else:
                    args.append(_number(a["scalar"]))
            cfg = k["configs"][0]
            consts = {c: _number(v) for c, v in cfg["constants"].items()}
            grid = tuple(int(_number(g)) for g in k["grid"])
            fn[grid](*args, **consts, num_warps=cfg.get("num_warps", 4))
    return {name: torch.as_strided(bufs[name].view(t.dtype) if bufs[name].numel() else bufs[name],
                                   t.shape, t.stride(), t.storage_offset())
            for name, t in tensors.items()}
