"""ctypes declarations of libkgb's C API (include/kgb.h). Internal to the package."""
import ctypes
import ctypes.util
import os

ABI = 1
MAX_DIMS = 8


class OpInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("source", ctypes.c_char_p),
        ("category", ctypes.c_char_p),
        ("dtypes", ctypes.c_char_p),
        ("summary", ctypes.c_char_p),
        ("signature", ctypes.c_char_p),
        ("deviation", ctypes.c_char_p),
        ("datasets", ctypes.c_uint32),
        ("cases", ctypes.c_uint32),
        ("smoke_cases", ctypes.c_uint32),
        ("inplace", ctypes.c_int32),
    ]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("role", ctypes.c_int32),
        ("elem_size", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("stride", ctypes.c_int64 * MAX_DIMS),
        ("storage_offset", ctypes.c_int64),
        ("storage", ctypes.c_int64),
        ("numel", ctypes.c_int64),
    ]


class VerdictInfo(ctypes.Structure):
    _fields_ = [
        ("verdict", ctypes.c_int32),
        ("name", ctypes.c_char * 32),
        ("max_abs_err", ctypes.c_double),
        ("max_rel_err", ctypes.c_double),
        ("message", ctypes.c_char * 256),
    ]


class StatsInfo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in
                ("median", "min", "max", "p10", "p90", "mean", "stdev", "rse")] + [("n", ctypes.c_uint64)]


def _candidates():
    env = os.environ.get("KGB_LIBRARY")
    if env:
        return [env]
    out = []
    # a source checkout: python/kgb/ -> build/lib/libkgb.so
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(os.path.join(here, "..", "..", "build", "lib", "libkgb.so"))
    found = ctypes.util.find_library("kgb")
    if found:
        out.append(found)
    out.append("libkgb.so")  # LD_LIBRARY_PATH, the loader's cache
    return out


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append("%s: no such file" % path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("kgb: cannot load libkgb.so (set KGB_LIBRARY to its path, or `make install`): "
                      + "; ".join(errors))


def _declare(lib):
    c = ctypes
    P = c.c_void_p
    sig = {
        "kgb_lib_abi": (c.c_int, []),
        "kgb_lib_version": (c.c_char_p, []),
        "kgb_lib_catalog_version": (c.c_char_p, []),
        "kgb_lib_op_count": (c.c_int, []),
        "kgb_lib_op_find": (c.c_int, [c.c_char_p]),
        "kgb_lib_op_info": (c.c_int, [c.c_int, c.POINTER(OpInfo)]),
        "kgb_lib_dataset_mask": (c.c_int, [c.c_char_p, c.POINTER(c.c_uint32)]),
        "kgb_lib_verdict_name": (c.c_char_p, [c.c_int]),
        "kgb_lib_case_new": (P, [c.c_int, c.c_uint32, c.c_uint64, c.c_char_p, c.c_size_t]),
        "kgb_lib_case_new_keyed": (P, [c.c_int, c.c_uint32, c.c_uint64, c.c_uint64, c.c_char_p, c.c_size_t]),
        "kgb_lib_heldout_index": (c.c_uint32, [c.c_int, c.c_uint32, c.c_uint32]),
        "kgb_lib_case_destroy": (None, [c.POINTER(P)]),
        "kgb_lib_case_label": (c.c_char_p, [P]),
        "kgb_lib_case_timed": (c.c_int, [P]),
        "kgb_lib_case_tolerance": (None, [P, c.POINTER(c.c_double), c.POINTER(c.c_double)]),
        "kgb_lib_case_param_count": (c.c_int, [P]),
        "kgb_lib_case_param_name": (c.c_char_p, [P, c.c_int]),
        "kgb_lib_case_param_value": (c.c_char_p, [P, c.c_int]),
        "kgb_lib_case_scalar_count": (c.c_int, [P]),
        "kgb_lib_case_scalar": (c.c_int, [P, c.c_int, c.POINTER(c.c_char_p), c.POINTER(c.c_char_p),
                                          c.POINTER(c.c_double)]),
        "kgb_lib_case_symbol_count": (c.c_int, [P]),
        "kgb_lib_case_symbol": (c.c_int, [P, c.c_int, c.POINTER(c.c_char_p), c.POINTER(c.c_double),
                                          c.POINTER(c.c_char_p)]),
        "kgb_lib_case_tensor_count": (c.c_int, [P]),
        "kgb_lib_case_tensor": (c.c_int, [P, c.c_int, c.POINTER(TensorInfo)]),
        "kgb_lib_case_input": (P, [P, c.c_int, c.POINTER(c.c_size_t), c.c_char_p, c.c_size_t]),
        "kgb_lib_case_reference": (P, [P, c.c_int, c.POINTER(c.c_size_t), c.c_char_p, c.c_size_t]),
        "kgb_lib_case_validate": (c.c_int, [P, c.POINTER(P), c.c_int, c.POINTER(VerdictInfo)]),
        "kgb_lib_sampler_new": (P, [c.c_double]),
        "kgb_lib_sampler_add": (None, [P, c.c_double, c.c_double]),
        "kgb_lib_sampler_done": (c.c_int, [P]),
        "kgb_lib_sampler_stats": (None, [P, c.POINTER(StatsInfo)]),
        "kgb_lib_sampler_destroy": (None, [c.POINTER(P)]),
        "kgb_lib_ref_cache_counts": (None, [c.POINTER(c.c_uint64), c.POINTER(c.c_uint64)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    abi = lib.kgb_lib_abi()
    if abi != ABI:
        raise ImportError("kgb: libkgb.so has ABI %d, this package speaks ABI %d" % (abi, ABI))
    return lib


lib = _declare(_load())
