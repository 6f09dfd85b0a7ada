#!/usr/bin/env python3
"""kgb's Triton compile helper.

The worker runs this in a sandboxed child (no network, clean environment, a private
working directory). It reads one JSON request on stdin:

    {"source": "<python text>", "entry": "add_kernel",
     "signature": "*fp32,*fp32,*fp32,i32",      # the non-constexpr parameters, in order
     "constants": {"BLOCK": 1024},               # constexpr parameters
     "num_warps": 4, "num_stages": 3, "num_ctas": 1,
     "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}

compiles it for that explicit target with triton.compile (no GPU is needed), and
writes into the output directory (argv[1], default ".") the binary `kernel.cubin` and
`kernel.abi.json`, the launch ABI the C side reads instead of Triton's internals:

    {"abi": 1, "kernel_name": ..., "args": [{"name", "type"}...],   # launch order
     "num_warps", "num_ctas", "shared", "cluster_dims": [x, y, z],
     "global_scratch_size", "global_scratch_align",
     "profile_scratch_size", "profile_scratch_align",
     "cooperative": bool, "triton_version": ..., "target": {...}}

Pointer parameters are compiled with 16-byte divisibility (kgb allocates every
buffer at that alignment); an integer type written "i32:16" promises divisibility by
16 as well. Exit status: 0 done, 1 the kernel does not compile (message on stderr),
2 a malformed request, 3 Triton is missing. `--version` prints Triton's version.
"""

import importlib.util
import json
import os
import sys
import traceback

TYPES = {
    "i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
    "fp8e4nv", "fp8e5", "fp16", "bf16", "fp32", "fp64",
}


class RequestError(Exception):
    pass


def parse_signature(sig):
    """'*fp32,i32:16' -> [('*fp32', False), ('i32', True)]."""
    if isinstance(sig, list):
        items = [str(s) for s in sig]
    elif isinstance(sig, str):
        items = [s.strip() for s in sig.split(",") if s.strip()]
    else:
        raise RequestError("signature: expected a string like \"*fp32,i32\", got %r" % (sig,))
    out = []
    for it in items:
        div16 = False
        if ":" in it:
            it, hint = it.split(":", 1)
            if hint.strip() != "16":
                raise RequestError("signature: hint ':%s' unsupported (only ':16')" % hint)
            div16 = True
        ty = it.strip()
        base = ty[1:] if ty.startswith("*") else ty
        if base not in TYPES:
            raise RequestError("signature: unknown type '%s' (known: %s)" % (ty, " ".join(sorted(TYPES))))
        out.append((ty, div16 or ty.startswith("*")))
    return out


def constant_value(name, v):
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, str):
        s = v.strip()
        if s in ("True", "true"):
            return True
        if s in ("False", "false"):
            return False
        try:
            return int(s, 0)
        except ValueError:
            pass
        try:
            return float(s)
        except ValueError:
            pass
    raise RequestError("constants.%s: expected a number or a boolean, got %r" % (name, v))


def load_kernel(source, entry, workdir):
    path = os.path.join(workdir, "kgb_candidate_kernel.py")
    with open(path, "w") as f:
        f.write(source)
    # the module's top-level code runs here: from now on it may open nothing outside the
    # sandbox (pyrec/kgb_confine.py beside this helper; docs/security.md)
    pyrec = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyrec")
    if not os.path.isfile(os.path.join(pyrec, "kgb_confine.py")):
        raise RequestError("pyrec/kgb_confine.py is missing beside the Triton helper (%s)" % pyrec)
    sys.path.insert(0, pyrec)
    import kgb_confine
    kgb_confine.install([workdir])
    spec = importlib.util.spec_from_file_location("kgb_candidate_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kgb_candidate_kernel"] = mod
    spec.loader.exec_module(mod)
    fn = getattr(mod, entry, None)
    if fn is None:
        raise RequestError("entry: the source defines no '%s'" % entry)
    # @triton.autotune and @triton.heuristics wrap the kernel: the JIT function is
    # their .fn (the plan's configuration supplies what they would choose)
    while not hasattr(fn, "params") and hasattr(fn, "fn"):
        fn = fn.fn
    if not hasattr(fn, "arg_names") or not hasattr(fn, "params"):
        raise RequestError("entry: '%s' is not a @triton.jit function" % entry)
    return fn


def build_source(req, workdir):
    """The ASTSource and the launch-order argument list for a request (shared with the
    timing benchmark, which must compile exactly the same kernel)."""
    from triton.compiler import ASTSource

    for k in ("source", "entry"):
        if not isinstance(req.get(k), str) or not req.get(k):
            raise RequestError("%s: expected a non-empty string" % k)
    fn = load_kernel(req["source"], req["entry"], workdir)
    sig = parse_signature(req.get("signature", ""))
    consts_in = req.get("constants") or {}
    if not isinstance(consts_in, dict):
        raise RequestError("constants: expected an object")
    consts = {k: constant_value(k, v) for k, v in consts_in.items()}
    names = list(fn.arg_names)
    for k in consts:
        if k not in names:
            raise RequestError("constants.%s: the kernel has no such parameter (it has %s)" % (k, ", ".join(names)))
    runtime = [p for p in fn.params if not p.is_constexpr and p.name not in consts]
    missing = [p.name for p in fn.params if p.is_constexpr and p.name not in consts]
    if missing:
        raise RequestError("constants: no value for constexpr parameter(s) %s" % ", ".join(missing))
    if len(runtime) != len(sig):
        raise RequestError("signature: %d types given, but the kernel has %d run-time parameters (%s)"
                           % (len(sig), len(runtime), ", ".join(p.name for p in runtime)))
    signature, attrs, args = {}, {}, []
    it = iter(sig)
    for i, name in enumerate(names):
        if name in consts:
            signature[name] = "constexpr"
            continue
        ty, div16 = next(it)
        signature[name] = ty
        if div16:
            attrs[(i,)] = [["tt.divisibility", 16]]
        args.append({"name": name, "type": ty})
    src = ASTSource(fn, signature=signature, constexprs=consts, attrs=attrs)
    return src, args


def options_of(req):
    opts = {}
    for k, dflt in (("num_warps", 4), ("num_stages", 3), ("num_ctas", 1)):
        v = req.get(k, dflt)
        if v is None:
            v = dflt
        if not isinstance(v, int) or isinstance(v, bool) or v < 1 or v > 64:
            raise RequestError("%s: expected an integer 1..64, got %r" % (k, v))
        opts[k] = v
    if opts["num_warps"] & (opts["num_warps"] - 1):
        raise RequestError("num_warps: must be a power of two, got %d" % opts["num_warps"])
    return opts


def target_of(req):
    from triton.backends.compiler import GPUTarget

    t = req.get("target") or {}
    if not isinstance(t, dict):
        raise RequestError("target: expected an object")
    backend = t.get("backend", "cuda")
    arch = t.get("arch", 90)
    ws = t.get("warp_size", 32)
    if backend != "cuda":
        raise RequestError("target.backend: only 'cuda' is supported, got %r" % (backend,))
    if not isinstance(arch, int) or arch < 50:
        raise RequestError("target.arch: expected an integer such as 90, got %r" % (arch,))
    return GPUTarget(backend, arch, ws)


def meta(md, key, dflt):
    if hasattr(md, key):
        return getattr(md, key)
    if isinstance(md, dict):
        return md.get(key, dflt)
    return dflt


def abi_of(compiled, args, target):
    import triton

    md = compiled.metadata
    num_ctas = int(meta(md, "num_ctas", 1))
    cluster = meta(md, "cluster_dims", None)
    if not cluster:
        cluster = (num_ctas, 1, 1)
    cluster = [int(c) for c in list(cluster)[:3]] + [1] * (3 - len(list(cluster)[:3]))
    return {
        "abi": 1,
        "kernel_name": str(meta(md, "name", "")),
        "args": args,
        "num_warps": int(meta(md, "num_warps", 4)),
        "num_ctas": num_ctas,
        "shared": int(meta(md, "shared", 0)),
        "cluster_dims": cluster,
        "global_scratch_size": int(meta(md, "global_scratch_size", 0) or 0),
        "global_scratch_align": int(meta(md, "global_scratch_align", 1) or 1),
        "profile_scratch_size": int(meta(md, "profile_scratch_size", 0) or 0),
        "profile_scratch_align": int(meta(md, "profile_scratch_align", 1) or 1),
        "cooperative": bool(meta(md, "launch_cooperative_grid", False)),
        "launch_pdl": bool(meta(md, "launch_pdl", False)),
        "tmem_size": int(meta(md, "tmem_size", 0) or 0),
        "triton_version": triton.__version__,
        "target": {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size},
    }


def compile_request(req, workdir):
    """Compile; returns (cubin bytes, abi dict)."""
    import triton

    src, args = build_source(req, workdir)
    target = target_of(req)
    compiled = triton.compile(src, target=target, options=options_of(req))
    cubin = compiled.asm.get("cubin")
    if not cubin:
        raise RuntimeError("triton produced no cubin")
    return cubin, abi_of(compiled, args, target)


def main(argv):
    if len(argv) > 1 and argv[1] == "--version":
        try:
            import triton
        except Exception as e:  # noqa: BLE001
            print("triton missing: %s" % e, file=sys.stderr)
            return 3
        print(triton.__version__)
        return 0
    outdir = argv[1] if len(argv) > 1 else "."
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(os.path.abspath(outdir), ".triton-cache"))
    os.environ.setdefault("TRITON_HOME", os.path.abspath(outdir))
    # no line tables: they embed the private directory's path, which would make every
    # compile of the same kernel a different binary
    os.environ.setdefault("TRITON_DISABLE_LINE_INFO", "1")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        req = json.loads(sys.stdin.read())
        if not isinstance(req, dict):
            raise RequestError("request: expected a JSON object")
    except (ValueError, RequestError) as e:
        print("triton_compile: bad request: %s" % e, file=sys.stderr)
        return 2
    try:
        import triton  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print("triton_compile: cannot import triton: %s" % e, file=sys.stderr)
        return 3
    try:
        cubin, abi = compile_request(req, outdir)
    except RequestError as e:
        print("triton_compile: %s" % e, file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - any failure of the candidate's code is a compile error
        if type(e).__name__ == "CompilationError":
            print("triton_compile: %s" % e, file=sys.stderr)  # already points into the source
        else:
            tb = traceback.format_exc(limit=-3)
            print("triton_compile: %s: %s\n%s" % (type(e).__name__, e, tb), file=sys.stderr)
        return 1
    with open(os.path.join(outdir, "kernel.cubin"), "wb") as f:
        f.write(cubin)
    with open(os.path.join(outdir, "kernel.abi.json"), "w") as f:
        json.dump(abi, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
