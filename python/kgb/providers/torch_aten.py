"""The PyTorch provider for kgb's ATen operators: each operator of the catalog (dataset
aten) mapped to the `torch.ops.aten` overload it names, with the case's tensors, scalars
and parameters as the overload's arguments.

    from kgb.providers import torch_aten
    case = kgb.Case("add", 17, seed=1)
    results = torch_aten.run(case)            # {"out": tensor}
    verdict = case.validate(results)

run() takes kgb's inputs (case.inputs("torch", device)), calls the overload and returns
a dict tensor name -> result for every OUT and INOUT tensor of the case."""
import torch

aten = torch.ops.aten

_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def _num(v):
    """A Python int for integer-valued scalars, else float."""
    return int(v) if float(v).is_integer() else float(v)


def _int_or_float(case, name):
    """Scalar `name` as the overload should receive it: an int when kgb passes it as an
    integer type (the i64 scalars of integer cases), else a float."""
    v = case.scalars[name]
    return int(v) if case.scalar_dtypes[name].startswith(("i", "u")) else float(v)


def _pint(case, name, default=None):
    v = case.params.get(name)
    return default if v is None else int(v)


def _dims_of_mask(case, ndim):
    mask = case.symbols["dim_mask"]
    return [d for d in range(ndim) if mask >> d & 1]


def _scalar_tensor(case, x, name):
    """A Python scalar argument wrapped as a 0-d tensor of x's dtype (for overloads
    without a Scalar form)."""
    return torch.tensor(case.scalars[name], dtype=x.dtype, device=x.device)


def _other(case, x, args, scalar_as_tensor=False):
    """`other` of a binary operator: the tensor, or the Python scalar in mode scalar."""
    if "other" in args:
        return args["other"], True
    if scalar_as_tensor:
        return _scalar_tensor(case, x, "other"), True
    return _int_or_float(case, "other"), False


def _binary(name):
    def f(case, a):
        x = a["self"]
        o, is_t = _other(case, x, a)
        ovl = getattr(aten, name)
        return {"out": (ovl.Tensor if is_t else ovl.Scalar)(x, o)}
    return f


def _alpha(case, x):
    return _int_or_float(case, "alpha") if not x.is_floating_point() else float(case.scalars["alpha"])


def _addsub(name):
    def f(case, a):
        x = a["self"]
        o, is_t = _other(case, x, a)
        ovl = getattr(aten, name)
        return {"out": (ovl.Tensor if is_t else ovl.Scalar)(x, o, alpha=_alpha(case, x))}
    return f


def _add_(case, a):
    x = a["self"]
    o, is_t = _other(case, x, a)
    (aten.add_.Tensor if is_t else aten.add_.Scalar)(x, o, alpha=_alpha(case, x))
    return {"self": x}


def _div(case, a, inplace=False):
    x = a["self"]
    o, is_t = _other(case, x, a)
    mode = case.params["rounding_mode"]
    ovl = aten.div_ if inplace else aten.div
    if mode == "true":
        r = (ovl.Tensor if is_t else ovl.Scalar)(x, o)
    else:
        r = (ovl.Tensor_mode if is_t else ovl.Scalar_mode)(x, o, rounding_mode=mode)
    return {"self": x} if inplace else {"out": r}


def _fn_tensor_other(name):
    """Binary operators with no Scalar overload: the scalar becomes a 0-d tensor."""
    def f(case, a):
        x = a["self"]
        key = "values" if name == "heaviside" and "values" in a else "other"
        o = a[key] if key in a else _scalar_tensor(case, x, "other")
        return {"out": getattr(aten, name).default(x, o)}
    return f


def _unary(name):
    return lambda case, a: {"out": getattr(aten, name).default(a["self"])}


def _reduce_dims(case, x):
    d = case.params.get("dim")
    if d is None:
        return [x.dim() - 1] if x.dim() else []
    if d == "all":
        return list(range(x.dim()))
    return [int(d)]


def _sum(case, a):
    x = a["self"]
    return {"out": aten.sum.dim_IntList(x, _reduce_dims(case, x), bool(_pint(case, "keepdim", 0)))}


def _dim(case, default=-1):
    return _pint(case, "dim", default)


def _amin_mean(name):
    def f(case, a):
        x = a["self"]
        dims = _dims_of_mask(case, x.dim())
        k = bool(_pint(case, "keepdim", 0))
        if name == "amin":
            return {"out": aten.amin.default(x, dims, k)}
        return {"out": aten.mean.dim(x, dims, k)}
    return f


def _argmax(case, a):
    x = a["self"]
    k = bool(_pint(case, "keepdim", 0))
    if case.params["dim"] == "all":
        return {"out": aten.argmax.default(x, None, k)}
    return {"out": aten.argmax.default(x, _dims_of_mask(case, x.dim())[0], k)}


def _pow(case, a):
    mode = case.params["mode"]
    if mode == "scalar":
        return {"out": aten.pow.Tensor_Scalar(a["self"], _num(case.scalars["other"]))}
    if mode == "rscalar":
        return {"out": aten.pow.Scalar(_num(case.scalars["self"]), a["other"])}
    return {"out": aten.pow.Tensor_Tensor(a["self"], a["other"])}


def _masked_fill_(case, a):
    x = a["self"]
    if "value" in a:
        aten.masked_fill_.Tensor(x, a["mask"], a["value"])
    else:
        aten.masked_fill_.Scalar(x, a["mask"], case.scalars["value"])
    return {"self": x}


def _fill_(case, a):
    x = a["self"]
    if "value" in a:
        aten.fill_.Tensor(x, a["value"])
    else:
        aten.fill_.Scalar(x, case.scalars["value"])
    return {"self": x}


def _resolve_neg(case, a):
    return {"out": aten.resolve_neg.default(a["self"]._neg_view())}


def _resolve_conj(case, a):
    x = a["self"]
    # a complex view needs (re, im) adjacent: kgb's strided layout spaces them out, so
    # those cases go through a contiguous copy of the same values
    z = torch.view_as_complex(x if x.stride(-1) == 1 else x.contiguous())
    r = aten.resolve_conj.default(z.conj())
    return {"out": torch.view_as_real(r)}


# where factory operators (arange, full, zeros, empty_strided, scalar_tensor) create
# their result: they have no input to take it from (set_device; None: torch's default)
_DEVICE = None


def set_device(device):
    """The device factory operators create their results on (the provider's device)."""
    global _DEVICE
    _DEVICE = device


def _torch_dtype(name):
    """torch's dtype of a kgb dtype name (kgb.torch_dtype; the recorder of Python
    candidates, which has no libkgb, gives its own)."""
    import kgb
    return kgb.torch_dtype(name)


def _arange(case, a):
    dt = case.tensor("out").dtype
    s, e, st = (case.scalars[k] for k in ("start", "end", "step"))
    if dt in ("f16", "bf16", "f32", "f64"):
        s, e, st = float(s), float(e), float(st)
    else:
        s, e, st = _num(s), _num(e), _num(st)
    return {"out": aten.arange.start_step(s, e, st, dtype=_torch_dtype(dt), device=_DEVICE)}


def _empty_strided(case, a):
    t = case.tensor("out")
    r = aten.empty_strided.default(list(t.shape), list(t.stride), dtype=_torch_dtype(t.dtype), device=_DEVICE)
    return {"out": aten.fill_.Scalar(r, case.scalars["value"])}


def _new_empty_strided(case, a):
    t = case.tensor("out")
    r = aten.new_empty_strided.default(a["self"], list(t.shape), list(t.stride))
    return {"out": aten.fill_.Scalar(r, case.scalars["value"])}


def _creation(name):
    def f(case, a):
        t = case.tensor("out")
        dt = _torch_dtype(t.dtype)
        if name == "full":
            return {"out": aten.full.default(list(t.shape), case.scalars["value"], dtype=dt, device=_DEVICE)}
        if name == "zeros":
            return {"out": aten.zeros.default(list(t.shape), dtype=dt, device=_DEVICE)}
        if name == "scalar_tensor":
            return {"out": aten.scalar_tensor.default(case.scalars["value"], dtype=dt, device=_DEVICE)}
        if name == "new_ones":
            return {"out": aten.new_ones.default(a["self"], list(t.shape))}
        raise KeyError(name)
    return f


def _item(name):
    def f(case, a):
        x = a["self"]
        v = getattr(aten, name).default(x)
        return {"out": torch.tensor(v, dtype=x.dtype)}
    return f


def _convert(name):
    def f(case, a):
        dt = _torch_dtype(case.tensor("out").dtype)
        if name == "_to_copy":
            return {"out": aten._to_copy.default(a["self"], dtype=dt)}
        return {"out": aten.to.dtype(a["self"], dt)}
    return f


def _inputs_named(a, prefix):
    out, i = [], 0
    while "%s%d" % (prefix, i) in a:
        out.append(a["%s%d" % (prefix, i)])
        i += 1
    return out


def _outputs_named(case, prefix):
    return [t.name for t in case.tensors if t.role == "out" and t.name.startswith(prefix)]


def _as_strided(case, a):
    y = case.symbols
    nd = len(case.tensor("out").shape)
    size = [y["view_size%d" % d] for d in range(nd)]
    stride = [y["view_stride%d" % d] for d in range(nd)]
    return {"out": aten.as_strided.default(a["self"], size, stride, y["storage_offset"])}


def _im2col(case, a):
    y = case.symbols
    return {"out": aten.im2col.default(a["self"], [y["kh"], y["kw"]], [y["dh"], y["dw"]], [y["ph"], y["pw"]],
                                       [y["sh"], y["sw"]])}


def _split(case, a):
    names = _outputs_named(case, "out")
    dim = _dim(case, 0)
    if case.op.name == "unsafe_split":
        parts = aten.unsafe_split.Tensor(a["self"], int(case.scalars["split_size"]), dim)
    else:
        sizes = [case.tensor(n).shape[dim] for n in names]
        parts = aten.unsafe_split_with_sizes.default(a["self"], sizes, dim)
    if len(parts) != len(names):
        raise RuntimeError("torch gave %d parts, kgb expects %d" % (len(parts), len(names)))
    return dict(zip(names, parts))


def _indices(case, a):
    idx = _inputs_named(a, "in")
    return ([None] if case.symbols.get("first") else []) + idx


def _index_put(name):
    def f(case, a):
        x = a["self"]
        acc = bool(int(case.scalars["accumulate"]))
        if name == "_index_put_impl_":
            aten._index_put_impl_.default(x, _indices(case, a), a["values"], acc, bool(case.scalars["unsafe"]))
        else:
            aten.index_put_.default(x, _indices(case, a), a["values"], acc)
        return {"self": x}
    return f


def _scatter(case, a):
    # the case's ATen overload (scatter.src, .value, .reduce, .value_reduce); reduce is
    # a scalar: 1 add, 2 multiply
    ovl = str(case.params.get("overload", "src")).rsplit(".", 1)[-1]
    dim = _dim(case, 0)
    red = {1: "add", 2: "multiply"}.get(int(case.scalars.get("reduce", 0)))
    if ovl == "src":
        r = aten.scatter.src(a["self"], dim, a["index"], a["src"])
    elif ovl == "value":
        r = aten.scatter.value(a["self"], dim, a["index"], case.scalars["value"])
    elif ovl == "reduce":
        r = aten.scatter.reduce(a["self"], dim, a["index"], a["src"], reduce=red)
    else:
        r = aten.scatter.value_reduce(a["self"], dim, a["index"], case.scalars["value"], reduce=red)
    return {"out": r}


def _sort(case, a):
    v, i = aten.sort.stable(a["self"], stable=bool(int(case.scalars["stable"])), dim=_dim(case),
                            descending=bool(int(case.scalars["descending"])))
    return {"values": v, "indices": i}


def _bernoulli(case, a):
    if case.params.get("mode") == "scalar":
        return {"out": aten.bernoulli.p(a["self"], case.scalars["p"])}
    return {"out": aten.bernoulli.default(a["self"])}


def _rrelu_with_noise(case, a):
    s = case.scalars
    noise = a["noise"]
    out = aten.rrelu_with_noise.default(a["self"], noise, s["lower"], s["upper"], bool(int(s["training"])))
    return {"out": out, "noise": noise}


def _log_sigmoid_backward(case, a):
    buf = aten.log_sigmoid_forward.default(a["self"])[1]
    return {"grad_input": aten.log_sigmoid_backward.default(a["grad_output"], a["self"], buf)}


def _reduction(case):
    return _REDUCTION[case.params["reduction"]]


def _bce(case, a):
    return {"out": aten.binary_cross_entropy_with_logits.default(a["self"], a["target"], a.get("weight"),
                                                                 a.get("pos_weight"), _reduction(case))}


def _linear(case, a):
    return {"out": aten.linear.default(a["input"], a["weight"], a.get("bias"))}


OPS = {
    "add": _addsub("add"),
    "sub": _addsub("sub"),
    "rsub": _addsub("rsub"),
    "add_": _add_,
    "div": _div,
    "div_": lambda c, a: _div(c, a, inplace=True),
    "mul": _binary("mul"),
    "eq": _binary("eq"),
    "le": _binary("le"),
    "gt": _binary("gt"),
    "floor_divide": lambda c, a: {"out": (aten.floor_divide.default(a["self"], a["other"]) if "other" in a else
                                          aten.floor_divide.Scalar(a["self"], _other(c, a["self"], a)[0]))},
    "fmax": _fn_tensor_other("fmax"),
    "heaviside": _fn_tensor_other("heaviside"),
    "logaddexp2": _fn_tensor_other("logaddexp2"),
    "pow": _pow,
    "prelu": lambda c, a: {"out": aten.prelu.default(a["self"], a["weight"])},
    "masked_fill_": _masked_fill_,
    "silu": _unary("silu"),
    "acosh": _unary("acosh"),
    "asin": _unary("asin"),
    "bitwise_not": _unary("bitwise_not"),
    "cos": _unary("cos"),
    "cosh": _unary("cosh"),
    "erfc": _unary("erfc"),
    "floor": _unary("floor"),
    "hardsigmoid": _unary("hardsigmoid"),
    "i0": _unary("i0"),
    "log10": _unary("log10"),
    "mish": _unary("mish"),
    "neg": _unary("neg"),
    "rsqrt": _unary("rsqrt"),
    "sgn": _unary("sgn"),
    "sin": _unary("sin"),
    "special_entr": _unary("special_entr"),
    "square": _unary("square"),
    "clone": _unary("clone"),
    "contiguous": _unary("contiguous"),
    "t": _unary("t"),
    "ones_like": _unary("ones_like"),
    "zeros_like": _unary("zeros_like"),
    "logit": lambda c, a: {"out": aten.logit.default(a["self"], c.scalars["eps"] if c.scalars["eps"] >= 0 else None)},
    "polygamma": lambda c, a: {"out": aten.polygamma.default(int(c.scalars["n"]), a["self"])},
    "resolve_neg": _resolve_neg,
    "resolve_conj": _resolve_conj,
    "sum": _sum,
    "amin": _amin_mean("amin"),
    "mean": _amin_mean("mean"),
    "argmax": _argmax,
    "softmax": lambda c, a: {"out": aten.softmax.int(a["self"], _dim(c))},
    "_softmax": lambda c, a: {"out": aten._softmax.default(a["self"], _dim(c), bool(_pint(c, "half_to_float")))},
    "cumsum": lambda c, a: {"out": aten.cumsum.default(a["self"], _dim(c))},
    "index_select": lambda c, a: {"out": aten.index_select.default(a["self"], _dim(c, 0), a["index"])},
    "pairwise_distance": lambda c, a: {"out": aten.pairwise_distance.default(
        a["x1"], a["x2"], c.scalars["p"], c.scalars["eps"], bool(_pint(c, "keepdim", 0)))},
    "renorm": lambda c, a: {"out": aten.renorm.default(a["self"], c.scalars["p"], _dim(c), c.scalars["maxnorm"])},
    "diff": lambda c, a: {"out": aten.diff.default(a["self"], _pint(c, "n"), _dim(c), a.get("prepend"),
                                                   a.get("append"))},
    "arange": _arange,
    "empty_strided": _empty_strided,
    "new_empty_strided": _new_empty_strided,
    "fill_": _fill_,
    "full": _creation("full"),
    "zeros": _creation("zeros"),
    "scalar_tensor": _creation("scalar_tensor"),
    "new_ones": _creation("new_ones"),
    "zero_": lambda c, a: {"self": aten.zero_.default(a["self"])},
    "_local_scalar_dense": _item("_local_scalar_dense"),
    "item": _item("item"),
    "_to_copy": _convert("_to_copy"),
    "to": _convert("to"),
    "affine_grid_generator": lambda c, a: {"out": aten.affine_grid_generator.default(
        a["theta"], list(c.tensor("out").shape[:1]) + [1] + list(c.tensor("out").shape[1:-1]),
        bool(_pint(c, "align_corners")))},
    "as_strided": _as_strided,
    "cat": lambda c, a: {"out": aten.cat.default(_inputs_named(a, "in"), c.symbols["dim"])},
    "stack": lambda c, a: {"out": aten.stack.default(_inputs_named(a, "in"), _dim(c))},
    "copy_": lambda c, a: {"self": aten.copy_.default(a["self"], a["src"])},
    "expand": lambda c, a: {"out": aten.expand.default(a["self"], list(c.tensor("out").shape))},
    "expand_as": lambda c, a: {"out": aten.expand_as.default(a["self"], a["other"])},
    "im2col": _im2col,
    "narrow": lambda c, a: {"out": aten.narrow.default(a["self"], _dim(c), int(c.scalars["start"]),
                                                       int(c.scalars["length"]))},
    "reshape": lambda c, a: {"out": aten.reshape.default(a["self"], list(c.tensor("out").shape))},
    "rot90": lambda c, a: {"out": aten.rot90.default(a["self"], int(c.scalars["k"]),
                                                     [c.symbols["dim0"], c.symbols["dim1"]])},
    "select": lambda c, a: {"out": aten.select.int(a["self"], _dim(c), int(c.scalars["index"]))},
    "unsafe_split": _split,
    "unsafe_split_with_sizes": _split,
    "unsqueeze": lambda c, a: {"out": aten.unsqueeze.default(a["self"], _dim(c))},
    "binary_cross_entropy_with_logits": _bce,
    "huber_loss": lambda c, a: {"out": aten.huber_loss.default(a["self"], a["target"], _reduction(c),
                                                               c.scalars["delta"])},
    "margin_ranking_loss": lambda c, a: {"out": aten.margin_ranking_loss.default(
        a["input1"], a["input2"], a["target"], c.scalars["margin"], _reduction(c))},
    "soft_margin_loss": lambda c, a: {"out": aten.soft_margin_loss.default(a["self"], a["target"], _reduction(c))},
    "log_sigmoid_backward": _log_sigmoid_backward,
    "mish_backward": lambda c, a: {"grad_input": aten.mish_backward.default(a["grad_output"], a["self"])},
    "reflection_pad1d_backward": lambda c, a: {"grad_input": aten.reflection_pad1d_backward.default(
        a["grad_output"], a["self"], [_pint(c, "pad_left"), _pint(c, "pad_right")])},
    "rrelu_with_noise_backward": lambda c, a: {"grad_input": aten.rrelu_with_noise_backward.default(
        a["grad_output"], a["self"], a["noise"], c.scalars["lower"], c.scalars["upper"],
        bool(int(c.scalars["training"])), bool(int(c.scalars["self_is_result"])))},
    "select_backward": lambda c, a: {"grad_input": aten.select_backward.default(
        a["grad_output"], list(c.tensor("grad_input").shape), int(c.scalars["dim"]), int(c.scalars["index"]))},
    "smooth_l1_loss_backward": lambda c, a: {"grad_input": aten.smooth_l1_loss_backward.default(
        a["grad_output"], a["self"], a["target"], int(c.scalars["reduction"]), c.scalars["beta"])},
    "softplus_backward": lambda c, a: {"grad_input": aten.softplus_backward.default(
        a["grad_output"], a["self"], c.scalars["beta"], c.scalars["threshold"])},
    "upsample_nearest2d_backward": lambda c, a: {"grad_input": aten.upsample_nearest2d_backward.default(
        a["grad_output"], list(c.tensor("grad_output").shape[2:]), list(c.tensor("grad_input").shape), None, None)},
    "bmm": lambda c, a: {"out": aten.bmm.default(a["self"], a["mat2"])},
    "mm": lambda c, a: {"out": aten.mm.default(a["self"], a["mat2"])},
    "matmul": lambda c, a: {"out": aten.matmul.default(a["self"], a["other"])},
    "linear": _linear,
    "_index_put_impl_": _index_put("_index_put_impl_"),
    "index_put_": _index_put("index_put_"),
    "index": lambda c, a: {"out": aten.index.Tensor(a["self"], _indices(c, a))},
    "embedding": lambda c, a: {"out": aten.embedding.default(a["weight"], a["indices"])},
    "gather": lambda c, a: {"out": aten.gather.default(a["self"], _dim(c, 0), a["index"])},
    "scatter": _scatter,
    "sort": _sort,
    "bernoulli": _bernoulli,
    "poisson": lambda c, a: {"out": aten.poisson.default(a["self"])},
    "exponential_": lambda c, a: {"self": aten.exponential_.default(a["self"], c.scalars["lambd"])},
    "rrelu_with_noise": _rrelu_with_noise,
}


def supports(op_name):
    return op_name in OPS


def run(case, inputs=None, device=None):
    """Run case's operator through torch.ops.aten on kgb's inputs (case.inputs("torch",
    device) unless given). Returns {tensor name: result} for every OUT/INOUT tensor."""
    fn = OPS.get(case.op.name)
    if fn is None:
        raise KeyError("no PyTorch mapping for operator %s" % case.op.name)
    if inputs is None:
        inputs = case.inputs("torch", device)
    if device is not None:
        set_device(device)
    with torch.no_grad():
        return fn(case, inputs)


# ---- the overload's arguments without running it ----------------------------------
# The recorder of Python candidates (worker/pyrec/kgb_record.py) calls a
# KernelGenBench wrapper exactly as torch would call the ATen overload: it takes the
# call this provider's mapping makes for the case (overload_call) rather than a second
# mapping of its own.

class _Captured(Exception):
    def __init__(self, overload, args, kwargs):
        Exception.__init__(self, str(overload))
        self.overload, self.args, self.kwargs = overload, args, kwargs


class Computed:
    """What overload_call gives the mapping for an ATen call it makes before the
    operator's own (log_sigmoid_backward's buffer from log_sigmoid_forward): not run,
    so an argument holding one cannot be passed to a wrapper."""

    def __init__(self, name):
        self.name = name

    def __getitem__(self, i):
        return self

    def __repr__(self):
        return "<result of aten.%s>" % self.name


class _CapturePacket:
    def __init__(self, name, target):
        self._name, self._target = name, target

    def __getattr__(self, ovl):
        real = getattr(getattr(torch.ops.aten, self._name), ovl)
        name, target = self._name, self._target

        def call(*args, **kwargs):
            if name == target:
                raise _Captured(real, args, kwargs)
            return Computed("%s.%s" % (name, ovl))
        return call


class _CaptureAten:
    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        return _CapturePacket(name, self._target)


def _same(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return a is b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return False
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _as_schema_type(arg, v):
    """v as the dispatcher hands an argument of arg's type to a Python kernel: an int
    given for int[N] becomes N copies, ints for float become floats, a device name a
    torch.device, tuples lists."""
    ty = str(arg.type)
    if isinstance(v, tuple):
        v = list(v)
    if "List[int]" in ty and isinstance(v, int) and not isinstance(v, bool):
        return [v] * (getattr(arg, "N", None) or 1)
    if ty in ("float", "Optional[float]") and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    if ty in ("bool", "Optional[bool]") and isinstance(v, int) and not isinstance(v, bool):
        return bool(v)
    if ty in ("Device", "Optional[Device]") and isinstance(v, str):
        return torch.device(v)
    return v


def normalise(overload, args, kwargs):
    """(args, kwargs) of a call of overload as torch's dispatcher hands them to a Python
    kernel: every argument the schema has, positional where the schema lets it be
    (trailing ones equal to their default left out), keyword-only ones by name (those
    equal to their default left out). Raises TypeError for a call the schema rejects."""
    schema = overload._schema
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        raise TypeError("%s takes %d positional argument(s), given %d" % (schema.name, len(positional), len(args)))
    given = {a.name: v for a, v in zip(positional, args)}
    names = {a.name for a in schema.arguments}
    for k, v in kwargs.items():
        if k not in names or k in given:
            raise TypeError("%s: unexpected or repeated argument '%s'" % (schema.name, k))
        given[k] = v
    vals = []
    for a in schema.arguments:
        if a.name in given:
            v = _as_schema_type(a, given[a.name])
            vals.append((a, v, a.has_default_value() and _same(v, a.default_value)))
        elif a.has_default_value():
            vals.append((a, a.default_value, True))
        else:
            raise TypeError("%s: argument '%s' missing" % (schema.name, a.name))
    pos = [x for x in vals if not x[0].kwarg_only]
    while pos and pos[-1][2]:
        pos.pop()
    out_kwargs = {a.name: v for a, v, d in vals if a.kwarg_only and not d}
    return [v for _, v, _ in pos], out_kwargs


def wrapper_name(overload):
    """The function a KernelGenBench module defines for an ATen overload, as its
    harness registers them: the operator's name for the overload `default`
    (aten._softmax.default: `_softmax`), else the operator's and the overload's joined
    by an underscore (aten.add.Tensor: `add_Tensor`, aten.add_.Scalar: `add__Scalar`).
    The one rule kgb names wrappers by (worker/pyrec/kgb_record.py)."""
    op = overload._schema.name.split("::", 1)[-1]
    name = overload._overloadname
    return op if name == "default" else "%s_%s" % (op, name)


def overload_call(case, inputs, device=None):
    """The call of torch.ops.aten that run(case, inputs) makes for the case's operator,
    without making it: (overload, args, kwargs), normalised as torch's dispatcher hands
    them to a Python kernel (normalise). inputs: the case's input tensors by name (any
    values: nothing is computed); device: where factory operators would create their
    result. ATen calls the mapping makes before the operator's own are not run either:
    their results are Computed placeholders. Raises KeyError for an operator without a
    mapping."""
    global aten
    fn = OPS.get(case.op.name)
    if fn is None:
        raise KeyError("no PyTorch mapping for operator %s" % case.op.name)
    if device is not None:
        set_device(device)
    real = aten
    aten = _CaptureAten(case.op.name)
    try:
        with torch.no_grad():
            fn(case, inputs)
    except _Captured as c:
        args, kwargs = normalise(c.overload, c.args, c.kwargs)
        return c.overload, args, kwargs
    finally:
        aten = real
    raise KeyError("the mapping of %s made no call of aten.%s" % (case.op.name, case.op.name))
