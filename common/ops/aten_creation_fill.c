/* ATen creation and fill operators: arange, full, zeros, ones_like, fill_, zero_,
 * empty_strided, ... The worker allocates every tensor, so what a kernel of these
 * operators computes is the values it writes: every element of the output's view,
 * and nothing in the gaps of a strided output (the validator checks both). */
#include <math.h>
#include <string.h>
#include "aten_common.h"

enum {
	C_FULL,            /* out(size) = value */
	C_ZEROS,           /* out(size) = 0 */
	C_ONES_LIKE,       /* out(self.shape) = 1 */
	C_ZEROS_LIKE,      /* out(self.shape) = 0 */
	C_NEW_ONES,        /* out(size) = 1, dtype of self */
	C_FILL,            /* self = value (INOUT) */
	C_ZERO,            /* self = 0 (INOUT) */
	C_EMPTY_STRIDED,   /* out(size, stride) = value */
	C_NEW_EMPTY,       /* out(size, stride) = value, dtype of self */
	C_SCALAR_TENSOR,   /* out() = value */
};

typedef kgb_aten_kind_def_t cre_def_t;

static int setup_create(kgb_case_t *c, char *err, size_t errlen)
{
	const cre_def_t *d = KGB_ATEN_DEF(cre_def_t, c);
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *layout = kgb_case_pstr(c, "layout", NULL);
	int64_t dims[KGB_MAX_DIMS] = { 0 }, sd[KGB_MAX_DIMS];
	int nd = d->kind == C_SCALAR_TENSOR ? 0 : kgb_aten_shape(c, "shape", dims);
	double value = kgb_case_pfloat(c, "value", 0);
	kgb_tensor_t *t;
	int vt = -1;

	if (!kgb_dtype_is_float(dt))
		value = dt == KGB_DT_BOOL ? (value != 0) : trunc(value);
	switch (d->kind) {
	case C_ONES_LIKE:
	case C_ZEROS_LIKE:
		if (!kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, layout, err, errlen))
			return -1;
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
		value = d->kind == C_ONES_LIKE;
		break;
	case C_NEW_ONES:
	case C_NEW_EMPTY: {
		int snd = kgb_aten_shape(c, "self_shape", sd);
		kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, snd, sd);
		if (d->kind == C_NEW_ONES)
			value = 1;
		if (!kgb_aten_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims, layout, err, errlen))
			return -1;
		break;
	}
	case C_FILL:
	case C_ZERO:
		t = kgb_aten_tensor(c, "self", KGB_ROLE_INOUT, dt, nd, dims, layout, err, errlen);
		if (!t)
			return -1;
		if (d->kind == C_ZERO)
			value = 0;
		if (strcmp(kgb_case_pstr(c, KGB_OVERLOAD_PARAM, "Scalar"), "Tensor") == 0) {
			kgb_tensor_t *v = kgb_case_add_tensor(c, "value", KGB_ROLE_IN, dt, 0, dims);
			if (!kgb_dtype_is_float(dt) && dt != KGB_DT_BOOL)
				kgb_aten_gen(v, KGB_GEN_INT, -100, 100);
			vt = 1;
		}
		break;
	default:
		if (!kgb_aten_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims, layout, err, errlen))
			return -1;
		if (d->kind == C_ZEROS)
			value = 0;
		break;
	}
	if (d->kind == C_FULL || d->kind == C_EMPTY_STRIDED || d->kind == C_NEW_EMPTY ||
	    d->kind == C_SCALAR_TENSOR || (d->kind == C_FILL && vt < 0))
		kgb_case_add_scalar(c, "value", kgb_dtype_is_float(dt) ? KGB_DT_F64 : KGB_DT_I64, value);
	c->iparam[0] = vt;
	c->iparam[1] = kgb_case_tensor_index(c, d->kind == C_FILL || d->kind == C_ZERO ? "self" : "out");
	c->fparam[0] = kgb_dtype_round(dt, value);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_create(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int ti = (int)c->iparam[1];
	const kgb_tensor_t *o = &c->t[ti];
	double v = c->iparam[0] >= 0 ? b->v[c->iparam[0]][0] : c->fparam[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		b->v[ti][kgb_tensor_offset(o, idx)] = v;
	} while (kgb_index_next(o, idx));
	return 0;
}

#define ALL_DT "bf16 bool f16 f32 f64 i16 i32 i64"
#define C_SHAPES "[] [1] [7] [33,65] [2,3,4,5,6] [1024,1024]"

#define CREATE(NAME, KIND, DT, SIG, INPL, DECL, SUMMARY, DEV, ...)                                                  \
	static const cre_def_t def_##NAME = {                                                                       \
		.op = {                                                                                             \
			KGB_ATEN_OP(#NAME, "creation-fill", DT, SIG, setup_create, ref_create, DECL, SUMMARY, DEV), \
			.grids = { __VA_ARGS__ },                                                                   \
			.inplace = INPL,                                                                            \
		},                                                                                                  \
		.kind = KIND,                                                                                       \
	}

CREATE(full, C_FULL, ALL_DT, "out:out value:scalar", false, 144,
       "out = a new tensor of `shape` filled with value (rounded to the dtype: truncated for integers, "
       "value != 0 for bool)",
       NULL,
       { { { "shape", C_SHAPES }, { "dtype", ALL_DT }, { "value", "-3.5 1 7.25" } } });
CREATE(zeros, C_ZEROS, ALL_DT, "out:out", false, 48,
       "out = a new tensor of `shape` filled with zeros (every element written)", NULL,
       { { { "shape", C_SHAPES }, { "dtype", ALL_DT } } });
CREATE(ones_like, C_ONES_LIKE, KGB_ATEN_FLOAT_DTYPES, "self:in out:out", false, 18,
       "out = ones of self's shape and dtype, contiguous (self's values are not read)",
       "adds non-contiguous self (the output stays contiguous)",
       { { { "shape", C_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES } } },
       { { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
           { "layout", "transposed strided" } } });
CREATE(zeros_like, C_ZEROS_LIKE, KGB_ATEN_FLOAT_DTYPES, "self:in out:out", false, 18,
       "out = zeros of self's shape and dtype, contiguous (self's values are not read)",
       "adds non-contiguous self (the output stays contiguous)",
       { { { "shape", C_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES } } },
       { { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
           { "layout", "transposed strided" } } });
CREATE(new_ones, C_NEW_ONES, KGB_ATEN_FLOAT_DTYPES, "self:in out:out", false, 48,
       "out = ones of the given shape with self's dtype (self's values and shape are not used)", NULL,
       { { { "shape", "[] [1] [7] [33,65] [2,3,4,5,6] [1024,1024] [3,1000] [16,64,1024]" },
           { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "self_shape", "[5] [3,4]" } } });
CREATE(fill_, C_FILL, "bool " KGB_ATEN_FLOAT_DTYPES " i32 i64",
       "self:inout value:scalar(.Scalar)|in(0-d, .Tensor)", true, 0,
       "in place: every element of self's view = value: .Scalar (a Python scalar, converted to self's dtype "
       "as PyTorch does: truncated for integers, value != 0 for bool) or .Tensor (a 0-d tensor of self's "
       "dtype whose value the kernel must read); strided views leave their gaps untouched",
       "the public benchmark has no test; kgb tests scalar and 0-d tensor values, every dtype and "
       "non-contiguous destinations",
       { { { "shape", C_SHAPES }, { "dtype", "bool " KGB_ATEN_FLOAT_DTYPES " i32 i64" },
           { "value", "-3.5" }, { "overload", "Scalar Tensor" } } },
       { { { "shape", "[33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES " i32" },
           { "value", "2.75" }, { "overload", "Scalar Tensor" }, { "layout", "transposed strided" } } });
CREATE(zero_, C_ZERO, "bf16 f16 f32 i16 i32 i64", "self:inout", true, 36,
       "in place: every element of self's view = 0; strided views leave their gaps untouched",
       "adds non-contiguous destinations",
       { { { "shape", C_SHAPES }, { "dtype", "bf16 f16 f32 i16 i32 i64" } } },
       { { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", "bf16 f16 f32 i16 i32 i64" },
           { "layout", "transposed strided" } } });
CREATE(empty_strided, C_EMPTY_STRIDED, KGB_ATEN_FLOAT_DTYPES, "out:out(size, stride) value:scalar", false, 90,
       "empty_strided(size, stride) then fill with value: the worker allocates the (size, stride) "
       "buffer; the kernel must write value to every element of the view and leave the gaps between "
       "strided elements untouched",
       "torch.empty_strided leaves the contents undefined, so nothing but the layout is observable; kgb "
       "makes the layout checkable by requiring every viewed element to be initialised (and no gap written)",
       { { { "shape", "[] [1] [7] [33,65] [3,1,17] [2,3,4,5,6] [256,1024] [1024,1024] [17,1000] [4,8,16,32]" },
           { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "layout", "contig transposed strided" },
           { "value", "-1.25" } } });
CREATE(new_empty_strided, C_NEW_EMPTY, KGB_ATEN_FLOAT_DTYPES, "self:in out:out(size, stride) value:scalar",
       false, 81,
       "new_empty_strided(size, stride) with self's dtype, then fill with value: every element of the "
       "view written, gaps untouched (self's values are not used)",
       "as for empty_strided: the undefined contents are replaced by a fill so that the layout is checkable",
       { { { "shape", "[] [7] [33,65] [3,1,17] [2,3,4,5,6] [256,1024] [1024,1024] [17,1000] [4,8,16,32]" },
           { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "layout", "contig transposed strided" },
           { "value", "-1.25" }, { "self_shape", "[3,4]" } } });
CREATE(scalar_tensor, C_SCALAR_TENSOR, KGB_ATEN_FLOAT_DTYPES, "out:out(0-d) value:scalar", false, 48,
       "out = a 0-d tensor holding value (rounded to the dtype)", NULL,
       { { { "value", "0.5 -1 3.140625 1e-3 -65000 1 2 -0.25 100 7.75 -3.5 0.1 1000 -42 12.5 8" },
           { "dtype", KGB_ATEN_FLOAT_DTYPES } } });

/* ---- arange ---- */

static int setup_arange(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	double start = kgb_case_pfloat(c, "start", 0), end = kgb_case_pfloat(c, "end", 10);
	double step = kgb_case_pfloat(c, "step", 1);
	int64_t n;
	bool isf = kgb_dtype_is_float(dt);
	kgb_dtype_t sdt = isf ? KGB_DT_F64 : KGB_DT_I64;

	if (step == 0 || (end - start) / step <= 0)
		return kgb_err(err, errlen, "op arange: empty range start=%g end=%g step=%g", start, end, step);
	n = (int64_t)ceil((end - start) / step);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 1, &n);
	kgb_case_add_scalar(c, "start", sdt, start);
	kgb_case_add_scalar(c, "end", sdt, end);
	kgb_case_add_scalar(c, "step", sdt, step);
	c->fparam[0] = start;
	c->fparam[1] = step;
	kgb_case_set_sym(c, "N", n);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_arange(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *o = &c->t[0];

	for (int64_t i = 0; i < o->shape[0]; i++)
		b->v[0][(size_t)(i * o->stride[0])] = c->fparam[0] + (double)i * c->fparam[1];
	return 0;
}

static const kgb_op_t op_arange = {
	.name = "arange",
	.source = "aten",
	.category = "creation-fill",
	.dtypes = "bf16 f16 f32 i16 i32 i64",
	.datasets = KGB_DS_ATEN,
	.summary = "out[i] = start + i * step for i < ceil((end - start) / step); float outputs computed at "
	           "least in fp32 (fp16 arithmetic is not enough for 65000 / 0.25), integer outputs exact",
	.signature = "start:scalar end:scalar step:scalar out:out",
	.grids = {
		{ { { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "start", "0 -7 3.5" }, { "end", "10 1000 65000" },
		    { "step", "1 0.5 3 0.25" } } },
		{ { { "dtype", "i16 i32 i64" }, { "start", "0 -7 3" }, { "end", "10 1000 30000" },
		    { "step", "1 3 7" } } },
		{ { { "dtype", "f32 i32 i64" }, { "start", "0 -3000000" }, { "end", "4000000" }, { "step", "1 5" } } },
	},
	.setup = setup_arange,
	.ref = ref_arange,
	.declared_cases = 756,
	.deviation = "a sound Cartesian grid of start x end x step per dtype family (int steps for integer "
	             "dtypes, fp16-representable ranges) instead of the public 756, which repeat sizes",
};

const kgb_op_t *const kgb_ops_aten_creation_fill[] = {
	&op_arange, &def_empty_strided.op, &def_fill_.op, &def_full.op, &def_new_empty_strided.op,
	&def_new_ones.op, &def_ones_like.op, &def_scalar_tensor.op, &def_zero_.op, &def_zeros.op,
	&def_zeros_like.op, NULL,
};
