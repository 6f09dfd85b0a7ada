#!/usr/bin/env python3
"""Writes the launch plans of the operators with ATen overloads (examples/aten/<op>.plan.json).

The plans are regular: one kernel entry per argument set, chosen per case with "when"
(docs/candidate-format.md), each passing sizes and strides of six dims per tensor. Run
from anywhere: python3 examples/aten/gen_overload_plans.py."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def dims(t, present=True):
    """ndim, six sizes and six strides of tensor t (zeros / ones for an absent one)."""
    if not present:
        return [{"scalar": "0"}] + [{"scalar": "1"}] * 6 + [{"scalar": "0"}] * 6
    return ([{"scalar": "%s.ndim" % t}] + [{"scalar": "%s.size%d" % (t, d)} for d in range(6)] +
            [{"scalar": "%s.stride%d" % (t, d)} for d in range(6)])


def sizes_strides(t):
    return [{"scalar": "%s.size%d" % (t, d)} for d in range(6)] + \
           [{"scalar": "%s.stride%d" % (t, d)} for d in range(6)]


def kernel(entry, source, when, defines, grid, block, args):
    k = {"entry": entry, "lang": "opencl", "source": source}
    if when:
        k["when"] = when
    if defines:
        k["defines"] = defines
    k["grid"] = grid
    k["block"] = block
    k["args"] = args
    return k


# ---- elementwise binary: op -> (OP, inplace, alpha, {argument set (A_T, B_T): overloads}, rounding)
BINARY = {
    "sub": ("OP_SUB", False, True, {(1, 1): ["Tensor"], (1, 0): ["Scalar"]}, False),
    "rsub": ("OP_RSUB", False, True, {(1, 1): ["Tensor"], (1, 0): ["Scalar"]}, False),
    "add_": ("OP_ADD", True, True, {(1, 1): ["Tensor"], (1, 0): ["Scalar"]}, False),
    "mul": ("OP_MUL", False, False, {(1, 1): ["Tensor"], (1, 0): ["Scalar"]}, False),
    "div": ("OP_DIV", False, False, {(1, 1): ["Tensor", "Tensor_mode"], (1, 0): ["Scalar", "Scalar_mode"]}, True),
    "div_": ("OP_DIV", True, False, {(1, 1): ["Tensor", "Tensor_mode"], (1, 0): ["Scalar", "Scalar_mode"]}, True),
    "eq": ("OP_EQ", False, False, {(1, 1): ["Tensor"], (1, 0): ["Scalar"]}, False),
    "le": ("OP_LE", False, False, {(1, 1): ["Tensor"], (1, 0): ["Scalar"]}, False),
    "fmax": ("OP_FMAX", False, False, {(1, 1): ["default"]}, False),
    "floor_divide": ("OP_FLOORDIV", False, False, {(1, 1): ["default"], (1, 0): ["Scalar"]}, False),
    "heaviside": ("OP_HEAVISIDE", False, False, {(1, 1): ["default"]}, False),
    "logaddexp2": ("OP_LOGADDEXP2", False, False, {(1, 1): ["default"]}, False),
    "pow": ("OP_POW", False, False, {(1, 1): ["Tensor_Tensor"], (1, 0): ["Tensor_Scalar"], (0, 1): ["Scalar"]}, False),
}


def binary_plan(op):
    code, inplace, alpha, sets, rounding = BINARY[op]
    res = "self" if inplace else "out"
    kernels = []
    for (a_t, b_t), ovls in sets.items():
        args = [{"tensor": "self"} if a_t else {"scalar": "self", "type": "f32"},
                {"tensor": "other"} if b_t else {"scalar": "other", "type": "f32"}]
        if not inplace:
            args.append({"tensor": "out"})
        args.append({"scalar": "alpha" if alpha else "1.0", "type": "f32"})
        args += [{"scalar": "%s.numel" % res}] + dims(res)[:1] + sizes_strides(res)
        args += dims("self", a_t) + dims("other", b_t)
        defines = {"OP": code, "A_T": str(a_t), "B_T": str(b_t), "INPLACE": "1" if inplace else "0"}
        if rounding:
            defines["RM"] = "RM_{rounding_mode}"
        when = " || ".join("overload.%s" % o for o in ovls)
        kernels.append(kernel("bin_k", "ovl_binary.cl", when, defines,
                              ["cdiv(%s.numel, 8 * 128)" % res], ["128"], args))
    return {"kernels": kernels}


def sizes(t):
    return [{"scalar": "%s.size%d" % (t, d)} for d in range(6)]


def strides(t):
    return [{"scalar": "%s.stride%d" % (t, d)} for d in range(6)]


def along_dim(t, what):
    """t's size or stride along the case's dim (the symbol dim, wrapped)."""
    e = "%s.%s5" % (t, what)
    for d in range(4, -1, -1):
        e = "(dim == %d ? %s.%s%d : %s)" % (d, t, what, d, e)
    return e


def fill_plan(masked):
    res = []
    for v_t, ovl in ((0, "Scalar"), (1, "Tensor")):
        args = [{"tensor": "self"}]
        if masked:
            args.append({"tensor": "mask"})
        args.append({"tensor": "value"} if v_t else {"scalar": "value", "type": "f32"})
        args += [{"scalar": "self.numel"}, {"scalar": "self.ndim"}] + sizes("self") + strides("self")
        if masked:
            args += dims("mask")
        res.append(kernel("fill_k", "ovl_fill.cl", "overload." + ovl,
                          {"MASKED": "1" if masked else "0", "V_T": str(v_t)},
                          ["cdiv(self.numel, 8 * 128)"], ["128"], args))
    return {"kernels": res}


def scatter_plan():
    copy = kernel("scatter_copy_k", "ovl_scatter.cl", None, None, ["cdiv(out.numel, 8 * 128)"], ["128"],
                  [{"tensor": "self"}, {"tensor": "out"}, {"scalar": "out.numel"}] + sizes("out") +
                  strides("self") + strides("out"))
    lines = "index.numel / %s" % along_dim("index", "size")
    res = [copy]
    for v_t, ovls in ((0, ["src", "reduce"]), (1, ["value", "value_reduce"])):
        args = [{"tensor": "index"}, {"scalar": "value", "type": "f32"} if v_t else {"tensor": "src"},
                {"tensor": "out"}, {"scalar": lines}, {"scalar": "dim"}, {"scalar": "reduce"}]
        args += sizes("index") + strides("index")
        args += [{"scalar": "0"}] * 6 if v_t else strides("src")
        args += strides("out")
        res.append(kernel("scatter_k", "ovl_scatter.cl", " || ".join("overload." + o for o in ovls),
                          {"V_T": str(v_t)}, ["cdiv(%s, 64)" % lines], ["64"], args))
    return {"kernels": res}


def diff_plan():
    res = []
    for pre in (0, 1):
        for app in (0, 1):
            args = [{"tensor": "self"}]
            if pre:
                args += [{"tensor": "prepend"}, {"scalar": along_dim("prepend", "size")}] + strides("prepend")
            if app:
                args += [{"tensor": "append"}] + strides("append")
            args += [{"tensor": "out"}, {"scalar": "out.numel"}, {"scalar": "n"}, {"scalar": "dim"}]
            args += sizes("out") + strides("out") + sizes("self") + strides("self")
            when = "%shas.prepend && %shas.append" % ("" if pre else "!", "" if app else "!")
            res.append(kernel("diff_k", "ovl_diff.cl", when, {"HAS_PRE": str(pre), "HAS_APP": str(app)},
                              ["cdiv(out.numel, 128)"], ["128"], args))
    return {"kernels": res}


def bce_plan():
    res = []
    for red in (0, 1):
        for w in (0, 1):
            for pw in (0, 1):
                args = [{"tensor": "self"}, {"tensor": "target"}]
                if w:
                    args += [{"tensor": "weight"}, {"scalar": "weight.stride0"}]
                if pw:
                    args += [{"tensor": "pos_weight"}, {"scalar": "pos_weight.stride0"}]
                args += [{"tensor": "out"}, {"scalar": "self.numel"}, {"scalar": "self.ndim - 1"}]
                if red:
                    args.append({"scalar": "reduction"})
                args += sizes("self") + strides("self") + strides("target")
                if not red:
                    args += strides("out")
                when = "reduction %s 0 && %shas.weight && %shas.pos_weight" % (
                    "!=" if red else "==", "" if w else "!", "" if pw else "!")
                defines = {"HAS_W": str(w), "HAS_PW": str(pw)}
                if red:
                    res.append(kernel("bce_reduce_k", "ovl_bce.cl", when, defines, ["1"], ["256"], args))
                else:
                    res.append(kernel("bce_none_k", "ovl_bce.cl", when, defines,
                                      ["cdiv(self.numel, 8 * 128)"], ["128"], args))
    return {"kernels": res}


def linear_plan():
    res = []
    for b in (0, 1):
        args = [{"tensor": "input"}, {"tensor": "weight"}] + ([{"tensor": "bias"}] if b else [])
        args += [{"tensor": "out"}, {"scalar": "M"}, {"scalar": "N"}, {"scalar": "K"},
                 {"scalar": "weight.stride0"}, {"scalar": "weight.stride1"}]
        res.append(kernel("linear_k", "ovl_linear.cl", "has.bias" if b else "!has.bias", {"HAS_BIAS": str(b)},
                          ["cdiv(M * N, 64)"], ["64"], args))
    return {"kernels": res}


def write(op, plan):
    with open(os.path.join(HERE, op + ".plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
        f.write("\n")


def main():
    for op in BINARY:
        write(op, binary_plan(op))
    write("fill_", fill_plan(False))
    write("masked_fill_", fill_plan(True))
    write("scatter", scatter_plan())
    write("diff", diff_plan())
    write("binary_cross_entropy_with_logits", bce_plan())
    write("linear", linear_plan())


if __name__ == "__main__":
    main()
