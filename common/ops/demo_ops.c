/* The twelve operators of the demo campaign (dataset "demo"), each also a member of
 * its source dataset. The demo's grids are small subsets of the public cases so that
 * the CPU demo runs in minutes; the 1-3 largest cases of each are timed.
 *
 * The eight ATen operators among them (add, silu, sum, softmax, index_select, clone,
 * cumsum, gt) also carry their full grids for the aten dataset: the demo grids come
 * first and form the operator's smoke subset (kgb_op_t.smoke_grids; a manifest with
 * "cases": "smoke" runs only those, as the demo does), the full grids follow. A smoke
 * case is set up and computed exactly as before the full grids existed; the others
 * go through the *_full_* functions, which take any rank, dim and layout.
 *
 * Tensor and scalar names are part of the contract with candidate kernels (launch
 * plans name them): do not rename them. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "aten_common.h"
#include "catalog.h"
#include "ops.h"

#define DEMO_DEVIATION "demo subset: a few small cases of the public grid so the CPU demo stays fast"
/* The deviation note of an operator with a smoke subset and full grids. */
#define FULL_DEVIATION(REST) "the demo's grids come first (the smoke subset, \"cases\": \"smoke\"); " REST

/* The fields every demo operator has: its source and dataset (with the demo's), name,
 * category, listed dtypes, setup and reference. */
#define DEMO_OP(src, ds, nm, cat, dts, setupf, reff)                                                   \
	.name = nm, .source = src, .category = cat, .dtypes = dts, .datasets = ds | KGB_DS_DEMO, .setup = setupf, \
	.ref = reff

/* Parameter lists of the full grids (0-d, 1-element, odd, 5-d, large). */
#define F_FLOATS "f16 bf16 f32"
#define F_SHAPES "[] [1] [7] [1000] [33,65] [3,1,17] [2,3,4,5,6] [256,1024] [1024,1024]"
#define F_SHAPES_ND "[33,65] [3,1,17] [2,3,4,5,6] [256,1024] [1024,1024]"
#define F_SHAPES_LAY "[33,65] [2,3,4,5,6] [1024,1024]"

/* ---- setup helpers ---- */

static int param_dtype(const kgb_case_t *c, const char *name, kgb_dtype_t *dt, char *err, size_t errlen)
{
	const char *s = kgb_case_pstr(c, name, NULL);
	if (!s)
		return kgb_err(err, errlen, "op %s case %u: no parameter '%s'", c->op->name, c->index, name);
	if (kgb_dtype_parse(s, dt) != 0)
		return kgb_err(err, errlen, "op %s case %u: parameter '%s': unknown dtype '%s'", c->op->name,
		               c->index, name, s);
	return 0;
}

static const kgb_pval_t *param_shape(const kgb_case_t *c, const char *name, int ndim, char *err,
                                     size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, name);
	if (!p || p->kind != KGB_PV_SHAPE) {
		kgb_err(err, errlen, "op %s case %u: parameter '%s' must be a shape", c->op->name, c->index, name);
		return NULL;
	}
	if (ndim >= 0 && p->ndim != ndim) {
		kgb_err(err, errlen, "op %s case %u: parameter '%s' = %s must have %d dims", c->op->name,
		        c->index, name, p->s, ndim);
		return NULL;
	}
	return p;
}

/* The dtype and shape parameters of a smoke case ("dtype" and `shape`, ndim dims or any
 * when ndim < 0); NULL with err when one is missing or malformed. */
static const kgb_pval_t *smoke_params(const kgb_case_t *c, const char *shape, int ndim, kgb_dtype_t *dt, char *err,
                                      size_t errlen)
{
	return param_dtype(c, "dtype", dt, err, errlen) ? NULL : param_shape(c, shape, ndim, err, errlen);
}

/* The input "self" of a smoke case, of its "dtype" and "shape" (ndim dims, any when
 * ndim < 0); *sp gets the shape. NULL with err when one is missing or malformed. */
static kgb_tensor_t *smoke_self(kgb_case_t *c, int ndim, kgb_dtype_t *dt, const kgb_pval_t **sp, char *err,
                                size_t errlen)
{
	if (!(*sp = smoke_params(c, "shape", ndim, dt, err, errlen)))
		return NULL;
	return kgb_case_add_tensor(c, "self", KGB_ROLE_IN, *dt, (*sp)->ndim, (*sp)->dims);
}

#define T(c, name) (kgb_case_tensor((c), (name)))
#define TI(c, name) (kgb_case_tensor_index((c), (name)))
/* element with flat (row-major) index i of tensor `name` in b */
#define EL(c, b, name, i) ((b)->v[TI(c, name)][kgb_tensor_flat_offset(T(c, name), (i))])

/* The values of a contiguous tensor (the reference loops index them directly). */
static double *dense(const kgb_case_t *c, kgb_hostbufs_t *b, const char *name)
{
	int i = TI(c, name);
	const kgb_tensor_t *t;
	int64_t st = 1;
	KGB_ASSERT_MSG(i >= 0, "op %s: no tensor %s", c->op->name, name);
	t = &c->t[i];
	for (int d = t->ndim - 1; d >= 0; d--) {
		KGB_ASSERT_MSG(t->shape[d] <= 1 || t->stride[d] == st, "op %s: tensor %s is not contiguous",
		               c->op->name, name);
		st *= t->shape[d];
	}
	return b->v[i];
}

static double scalar_value(const kgb_case_t *c, const char *name)
{
	for (int i = 0; i < c->nscalars; i++)
		if (strcmp(c->s[i].name, name) == 0)
			return c->s[i].value;
	KGB_ASSERT_MSG(0, "op %s: no scalar %s", c->op->name, name);
	return 0;
}

/* ---- helpers of the full grids ---- */

/* True for a case of the operator's smoke subset (its demo grids). */
static bool is_smoke(const kgb_case_t *c)
{
	return c->grid < c->op->smoke_grids;
}

/* The case's integer parameter "dim" checked against an nd-d shape (a 0-d tensor has
 * one valid dim, 0 or -1, as in PyTorch); *w gets the wrapped dim. */
static int param_dim(const kgb_case_t *c, int nd, int64_t *dim, int *w, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "dim");
	int n = nd > 0 ? nd : 1;
	if (!p || p->kind != KGB_PV_INT)
		return kgb_err(err, errlen, "op %s case %u: parameter 'dim' must be an integer, not '%s'",
		               c->op->name, c->index, p ? p->s : "(none)");
	if (p->i < -n || p->i >= n)
		return kgb_err(err, errlen, "op %s case %u: parameter 'dim' = %lld is out of range for a %d-d shape",
		               c->op->name, c->index, (long long)p->i, nd);
	*dim = p->i;
	*w = kgb_aten_wrap_dim(p->i, nd);
	return 0;
}

/* Symbols of an operation along dim w of an nd-d shape: dim (as the grid writes it,
 * negative counts from the end), outer (product of the dims before w), len (the size
 * of dim w), inner (product of the dims after it), rows = outer * inner (the number of
 * lines) and cols = len. For a contiguous tensor the element j of line (o, i) is at
 * (o * len + j) * inner + i. */
static void line_syms(kgb_case_t *c, int64_t dim, int nd, const int64_t *dims, int w)
{
	int64_t outer = 1, inner = 1, len = nd ? dims[w] : 1;
	for (int d = 0; d < w && d < nd; d++)
		outer *= dims[d];
	for (int d = w + 1; d < nd; d++)
		inner *= dims[d];
	KGB_SYMS(c, "dim outer len inner rows cols", dim, outer, len, inner, outer * inner, len);
}

/* The shape of `other` for a broadcast mode against self's nd-d shape: "full" (self's
 * shape), "t0d" (0-d), "last" ([last dim of self]), "col" (self's shape with the last
 * dim 1). Returns other's ndim (bd filled), or -1 with err. */
static int bcast_shape(const kgb_case_t *c, const char *mode, int nd, const int64_t *dims, int64_t *bd,
                       char *err, size_t errlen)
{
	memcpy(bd, dims, KGB_MAX_DIMS * sizeof *bd);
	if (strcmp(mode, "full") == 0)
		return nd;
	if (strcmp(mode, "t0d") == 0)
		return 0;
	if (strcmp(mode, "last") == 0 && nd >= 1) {
		bd[0] = dims[nd - 1];
		return 1;
	}
	if (strcmp(mode, "col") == 0 && nd >= 1) {
		bd[nd - 1] = 1;
		return nd;
	}
	return kgb_err(err, errlen, "op %s case %u: parameter 'other': '%s' does not fit a %d-d self (full, t0d, last, col)",
	               c->op->name, c->index, mode, nd);
}

/* ---- add ---- */

/* Full grids: self (any layout) + alpha * other, other broadcast from the right (full,
 * t0d, last, col); int64 with integer inputs and alpha truncated, exact. */
static int add_full_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *mode = kgb_case_pstr(c, "other", "full"), *layout = kgb_case_pstr(c, "layout", NULL);
	int64_t dims[KGB_MAX_DIMS], bd[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims), bnd;
	bool isf = kgb_dtype_is_float(dt);
	double alpha = kgb_case_pfloat(c, "alpha", 1.0);
	kgb_tensor_t *a, *b;

	if ((bnd = bcast_shape(c, mode, nd, dims, bd, err, errlen)) < 0)
		return -1;
	if (!(a = kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, layout, err, errlen)))
		return -1;
	if (!(b = kgb_aten_tensor(c, "other", KGB_ROLE_IN, dt, bnd, bd, strcmp(mode, "full") == 0 ? layout : NULL,
	                          err, errlen)))
		return -1;
	if (!isf) {
		kgb_aten_gen(a, KGB_GEN_INT, -1000, 1000);
		kgb_aten_gen(b, KGB_GEN_INT, -1000, 1000);
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	kgb_case_add_scalar(c, "alpha", isf ? KGB_DT_F32 : KGB_DT_I64, isf ? alpha : trunc(alpha));
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int add_full_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int ia = TI(c, "self"), ib = TI(c, "other"), io = TI(c, "out");
	const kgb_tensor_t *o = &c->t[io];
	double alpha = scalar_value(c, "alpha");
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	do {
		double x = b->v[ia][kgb_tensor_offset(&c->t[ia], idx)];
		double y = b->v[ib][kgb_aten_bcast_off(&c->t[ib], o->ndim, idx)];
		b->v[io][kgb_tensor_offset(o, idx)] = x + alpha * y;
	} while (kgb_index_next(o, idx));
	return 0;
}

static int add_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	const char *bc = kgb_case_pstr(c, "other", "full");
	kgb_tensor_t *self;
	int64_t oshape[1];
	if (!is_smoke(c))
		return add_full_setup(c, err, errlen);
	if (!(self = smoke_self(c, -1, &dt, &sp, err, errlen)))
		return -1;
	if (sp->ndim < 1)
		return kgb_err(err, errlen, "op add case %u: shape %s must have at least 1 dim", c->index, sp->s);
	if (strcmp(bc, "full") == 0) {
		kgb_case_add_tensor(c, "other", KGB_ROLE_IN, dt, sp->ndim, sp->dims);
	} else if (strcmp(bc, "last") == 0) {
		oshape[0] = sp->dims[sp->ndim - 1];
		kgb_case_add_tensor(c, "other", KGB_ROLE_IN, dt, 1, oshape);
	} else if (strcmp(bc, "one") == 0) {
		oshape[0] = 1;
		kgb_case_add_tensor(c, "other", KGB_ROLE_IN, dt, 1, oshape);
	} else {
		return kgb_err(err, errlen, "op add case %u: parameter 'other': unknown broadcast '%s' (full, last, one)",
		               c->index, bc);
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, sp->ndim, sp->dims);
	kgb_case_add_scalar(c, "alpha", KGB_DT_F32, kgb_case_pfloat(c, "alpha", 1.0));
	c->timed = self->numel >= 65536 && kgb_case_pfloat(c, "alpha", 1.0) == 1.0;
	return 0;
}

static int add_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	size_t n = T(c, "out")->numel, on = T(c, "other")->numel;
	double alpha = scalar_value(c, "alpha");
	double *out, *x, *y;
	if (!is_smoke(c))
		return add_full_ref(c, b);
	out = dense(c, b, "out");
	x = dense(c, b, "self");
	y = dense(c, b, "other");
	for (size_t i = 0; i < n; i++)
		out[i] = x[i] + alpha * y[i % on];
	return 0;
}

static const kgb_op_t op_add = {
	DEMO_OP("aten", KGB_DS_ATEN, "add", "elementwise-binary", "bf16 f16 f32 i64", add_setup, add_ref),
	.summary = "out = self + alpha * other, other broadcast against self from the right: self's "
	           "shape (other=full, with self's layout), 0-d (t0d: the Scalar overload as ATen wraps it), "
	           "[self's last dim] (last), [1] (one), or self's shape with the last dim 1 (col); self may "
	           "be transposed or strided; int64: exact, alpha truncated to an integer (i64 scalar)",
	.signature = "self:in other:in out:out alpha:f32|i64",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[1024] [33,65] [4,8,16]" },
		              { "other", "full last one" }, { "alpha", "0.5" } } },
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[65536]" }, { "other", "full" },
		              { "alpha", "1 0.5" } } },
		{ .params = { { "shape", F_SHAPES }, { "dtype", F_FLOATS " i64" }, { "other", "full t0d" },
		              { "alpha", "1 -2.5 3.5" } } },
		{ .params = { { "shape", F_SHAPES_ND }, { "dtype", F_FLOATS " i64" }, { "other", "last col" },
		              { "alpha", "1 -2.5 3.5" } } },
		{ .params = { { "shape", F_SHAPES_LAY }, { "dtype", F_FLOATS " i64" }, { "other", "full" },
		              { "alpha", "1 -2.5 3.5" }, { "layout", "transposed strided" } } },
	},
	.declared_cases = 650,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32/int64 x same-shape, 0-d, "
	                                "row and column broadcasts x alpha {1, -2.5, 3.5} x layouts; "
	                                "fewer cases than the public 650, which repeat shapes; the "
	                                "Scalar overload is the 0-d other"),
	.smoke_grids = 2,
	.heldout = "shape",
};

/* ---- silu ---- */

/* Full grids: any rank, self contiguous, transposed or strided; out contiguous. */
static int unary_full_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	if (!kgb_aten_input(c, "self", dt, nd, dims, err, errlen))
		return -1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int unary_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (!is_smoke(c))
		return unary_full_setup(c, err, errlen);
	if (!(t = smoke_self(c, -1, &dt, &sp, err, errlen)))
		return -1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, sp->ndim, sp->dims);
	c->timed = t->numel >= 131072;
	return 0;
}

static int silu_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	size_t n = T(c, "out")->numel;
	double *out, *in;
	if (!is_smoke(c)) {
		for (size_t i = 0; i < n; i++) {
			double x = EL(c, b, "self", i);
			EL(c, b, "out", i) = x / (1.0 + exp(-x));
		}
		return 0;
	}
	out = dense(c, b, "out");
	in = dense(c, b, "self");
	for (size_t i = 0; i < n; i++)
		out[i] = in[i] / (1.0 + exp(-in[i]));
	return 0;
}

static const kgb_op_t op_silu = {
	DEMO_OP("aten", KGB_DS_ATEN, "silu", "elementwise-unary", "bf16 f16 f32", unary_setup, silu_ref),
	.summary = "out = self / (1 + exp(-self)) elementwise; self may be transposed or strided, out is "
	           "contiguous",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[1024] [33,65] [4,8,16] [131072]" } } },
		{ .params = { { "shape", F_SHAPES " [16,64,4096]" }, { "dtype", F_FLOATS },
		              { "layout", "contig" } } },
		{ .params = { { "shape", F_SHAPES_LAY }, { "dtype", F_FLOATS },
		              { "layout", "transposed strided" } } },
	},
	.declared_cases = 36,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32, contiguous, transposed and "
	                            "strided"),
	.smoke_grids = 1,
};

/* ---- row-wise ops over [rows, cols] (sum, softmax, cumsum) ---- */

/* self [rows, cols] -> out [rows] (reduce) or [rows, cols]; symbols rows, cols, dim, and
 * for a reduction dim_mask and reduce_len. */
static int rowwise_setup(kgb_case_t *c, bool reduce, size_t timed_numel, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (!(t = smoke_self(c, 2, &dt, &sp, err, errlen)))
		return -1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, reduce ? 1 : 2, sp->dims);
	KGB_SYMS(c, "rows cols dim", sp->dims[0], sp->dims[1], -1);
	if (reduce) {
		/* as the full grids name them: one plan serves both */
		kgb_case_set_sym(c, "dim_mask", 2);
		kgb_case_set_sym(c, "reduce_len", sp->dims[1]);
	}
	c->reduce_len = (double)sp->dims[1];
	c->timed = t->numel >= timed_numel;
	return 0;
}

/* The reference of a rowwise_setup case: row(x, o, cols) for every row of self, o at
 * row r of out (sum's out [rows] has one element a row). */
static int rowwise_ref(const kgb_case_t *c, kgb_hostbufs_t *b, void (*row)(const double *x, double *o, size_t cols))
{
	const kgb_tensor_t *x = T(c, "self");
	double *xv = dense(c, b, "self"), *ov = dense(c, b, "out");
	size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1], ostep = T(c, "out")->ndim == 2 ? cols : 1;
	for (size_t r = 0; r < rows; r++)
		row(xv + r * cols, ov + r * ostep, cols);
	return 0;
}

/* Full grids of sum: over one dim (an integer, negative from the end) or every dim
 * ("all"), keepdim 0/1, any rank and layout. iparam[0] = mask of the reduced dims,
 * iparam[1] = keepdim. */
static int sum_full_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const kgb_pval_t *dp = kgb_case_param(c, "dim");
	bool keep = kgb_case_pint(c, "keepdim", 0) != 0;
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS], dim = 0;
	int nd = kgb_aten_shape(c, "shape", dims), ond = 0, w = 0;
	unsigned mask;
	double rlen = 1;
	kgb_tensor_t *o;

	if (dp && dp->kind == KGB_PV_STR && strcmp(dp->s, "all") == 0) {
		mask = nd ? (1u << nd) - 1 : 0;
	} else {
		if (param_dim(c, nd, &dim, &w, err, errlen) != 0)
			return -1;
		mask = nd ? 1u << w : 0;
		kgb_case_set_sym(c, "dim", dim);
	}
	if (!kgb_aten_input(c, "self", dt, nd, dims, err, errlen))
		return -1;
	ond = kgb_aten_reduced_shape(nd, dims, mask, keep, od, &rlen);
	o = kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, ond, od);
	c->iparam[0] = mask;
	c->iparam[1] = keep;
	KGB_SYMS(c, "dim_mask keepdim reduce_len rows cols", mask, keep, (int64_t)rlen, (int64_t)o->numel,
	         (int64_t)rlen);
	kgb_aten_finish(c, rlen, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int sum_full_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int ix = TI(c, "self"), io = TI(c, "out");
	const kgb_tensor_t *x = &c->t[ix], *o = &c->t[io];
	unsigned mask = (unsigned)c->iparam[0];
	bool keep = c->iparam[1] != 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 }, oidx[KGB_MAX_DIMS] = { 0 };
	do {
		b->v[io][kgb_tensor_offset(o, oidx)] = 0;
	} while (kgb_index_next(o, oidx));
	do {
		int k = 0;
		for (int d = 0; d < x->ndim; d++) {
			if (!(mask & (1u << d)))
				oidx[k++] = idx[d];
			else if (keep)
				oidx[k++] = 0;
		}
		b->v[io][kgb_tensor_offset(o, oidx)] += b->v[ix][kgb_tensor_offset(x, idx)];
	} while (kgb_index_next(x, idx));
	return 0;
}

static int sum_setup(kgb_case_t *c, char *err, size_t errlen)
{
	if (!is_smoke(c))
		return sum_full_setup(c, err, errlen);
	return rowwise_setup(c, true, 1 << 20, err, errlen);
}

static void sum_row(const double *x, double *o, size_t cols)
{
	double s = 0;
	for (size_t j = 0; j < cols; j++)
		s += x[j];
	o[0] = s;
}

static int sum_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	if (!is_smoke(c))
		return sum_full_ref(c, b);
	return rowwise_ref(c, b, sum_row);
}

static const kgb_op_t op_sum = {
	DEMO_OP("aten", KGB_DS_ATEN, "sum", "reduction", "bf16 f16 f32", sum_setup, sum_ref),
	.summary = "out = the sum of self over dim (an integer, negative counts from the end) or over every "
	           "dim (dim = 'all'; use the dim_mask symbol), keepdim keeping the reduced dims as size 1; "
	           "0-d to 5-d self in any layout, out contiguous. Smoke cases: self is [rows, cols], "
	           "out[r] = sum over j of self[r, j] (dim = -1)",
	.signature = "self:in out:out dim:param keepdim:param",
	.grids = {
		{ .params = { { "dtype", "f32" },
		              { "shape", "[1,1000] [33,65] [128,1024] [7,4096] [100,1] [256,4096]" } } },
		{ .params = { { "shape", "[33,65] [7,1000] [1000,7] [3,2,17] [2,3,4,5,6] [1024,1024]" },
		              { "dtype", F_FLOATS }, { "dim", "-1 0" }, { "keepdim", "0 1" } } },
		{ .params = { { "shape", "[3,2,17] [2,3,4,5,6] [16,64,256]" }, { "dtype", F_FLOATS },
		              { "dim", "1" }, { "keepdim", "0 1" } } },
		{ .params = { { "shape", "[] [1] [7] [1000] [4096] [33,65] [2,3,4,5,6]" }, { "dtype", F_FLOATS },
		              { "dim", "all" }, { "keepdim", "0" } } },
		{ .params = { { "shape", "[33,65] [1024,1024]" }, { "dtype", F_FLOATS }, { "dim", "-1 0" },
		              { "keepdim", "0" }, { "layout", "transposed strided" } } },
	},
	.declared_cases = 45,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32 x the first, a middle, the "
	                            "last or every dim x keepdim x layouts (full reductions stop at 4096 "
	                            "elements, where an fp16 sum of the inputs stays finite)"),
	.smoke_grids = 1,
};

/* Full grids of softmax and cumsum: along `dim` (an integer, negative from the end) of
 * a 0-d to 5-d self in any layout; out contiguous, self's shape. Symbols: line_syms.
 * cumsum of integers gives int64 (as PyTorch promotes it). iparam[0] = the wrapped dim. */
static int line_full_setup(kgb_case_t *c, bool scan, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], dim;
	int nd = kgb_aten_shape(c, "shape", dims), w;
	bool isf = kgb_dtype_is_float(dt);
	kgb_tensor_t *x;

	if (param_dim(c, nd, &dim, &w, err, errlen) != 0)
		return -1;
	if (!(x = kgb_aten_input(c, "self", dt, nd, dims, err, errlen)))
		return -1;
	if (!scan)
		kgb_aten_gen(x, KGB_GEN_UNIFORM, -4, 4);
	else if (isf)
		kgb_aten_gen(x, KGB_GEN_UNIFORM, -0.5, 1); /* mean 0.25: 65536 terms stay in fp16's range */
	else
		kgb_aten_gen(x, KGB_GEN_INT, -100, 100);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, scan && !isf ? KGB_DT_I64 : dt, nd, dims);
	c->iparam[0] = w;
	line_syms(c, dim, nd, dims, w);
	/* a scan is timed from 65536 elements: its largest cases are smaller */
	/* fp16 softmax outputs of long rows lie in fp16's subnormal range, where the
	 * relative bar is below one step: the validator's one-step rule covers them */
	kgb_aten_finish(c, nd ? (double)dims[w] : 1, scan ? (size_t)1 << 16 : KGB_ATEN_TIMED_NUMEL);
	return 0;
}

/* Softmax (scan false) or inclusive prefix sum (scan true) along dim iparam[0]. */
static int line_full_ref(const kgb_case_t *c, kgb_hostbufs_t *b, bool scan)
{
	int ix = TI(c, "self"), io = TI(c, "out"), dim = (int)c->iparam[0];
	const kgb_tensor_t *x = &c->t[ix], *o = &c->t[io];
	int64_t n = x->ndim ? x->shape[dim] : 1;
	int64_t sx = x->ndim ? x->stride[dim] : 0, so = o->ndim ? o->stride[dim] : 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	do {
		const double *xp = b->v[ix] + kgb_tensor_offset(x, idx);
		double *op = b->v[io] + kgb_tensor_offset(o, idx);
		double s = 0;
		if (!scan) {
			kgb_aten_softmax_line(xp, sx, op, so, n);
			continue;
		}
		for (int64_t j = 0; j < n; j++) {
			s += xp[j * sx];
			op[j * so] = s;
		}
	} while (kgb_aten_line_next(x, x->ndim ? dim : -1, idx));
	return 0;
}

static int softmax_setup(kgb_case_t *c, char *err, size_t errlen)
{
	if (!is_smoke(c))
		return line_full_setup(c, false, err, errlen);
	if (rowwise_setup(c, false, 80000, err, errlen) != 0)
		return -1;
	kgb_case_default_tol(c);
	return 0;
}

static void softmax_row(const double *x, double *o, size_t cols)
{
	double m = -INFINITY, s = 0;
	for (size_t j = 0; j < cols; j++)
		m = fmax(m, x[j]);
	for (size_t j = 0; j < cols; j++)
		s += exp(x[j] - m);
	for (size_t j = 0; j < cols; j++)
		o[j] = exp(x[j] - m) / s;
}

static int softmax_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	if (!is_smoke(c))
		return line_full_ref(c, b, false);
	return rowwise_ref(c, b, softmax_row);
}

static const kgb_op_t op_softmax = {
	DEMO_OP("aten", KGB_DS_ATEN, "softmax", "softmax", "bf16 f16 f32", softmax_setup, softmax_ref),
	.summary = "out = exp(self - max) / sum(exp(self - max)) along dim (an integer, negative counts "
	           "from the end); 0-d to 5-d self in any layout (full grids: inputs from [-4, 4)), out "
	           "contiguous; symbols outer, len, inner, rows = outer * inner, cols = len. Smoke cases: "
	           "self is [rows, cols], dim = -1",
	.signature = "self:in out:out dim:param",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[4,128] [33,65] [16,1024] [2,40000]" } } },
		{ .params = { { "shape", "[33,65] [5,1000] [7,4096] [1024,1024] [4,40000] [2,3,4,5,6]" },
		              { "dtype", F_FLOATS }, { "dim", "-1 0" } } },
		{ .params = { { "shape", "[3,5,17] [2,3,4,5,6] [64,128,33]" }, { "dtype", F_FLOATS },
		              { "dim", "1 2" } } },
		{ .params = { { "shape", "[] [1] [7] [1000] [65536]" }, { "dtype", F_FLOATS }, { "dim", "0" } } },
		{ .params = { { "shape", "[33,65] [1024,1024]" }, { "dtype", F_FLOATS }, { "dim", "-1 0" },
		              { "layout", "transposed strided" } } },
	},
	.declared_cases = 36,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32 x the last, first and middle "
	                            "dims x layouts"),
	.smoke_grids = 1,
};

static int cumsum_setup(kgb_case_t *c, char *err, size_t errlen)
{
	if (!is_smoke(c)) {
		if (line_full_setup(c, true, err, errlen) != 0)
			return -1;
		/* a scan in fp16/bf16 on a GPU adds in the output dtype: PyTorch's CUDA cumsum
		 * sums chunks of a line as a tree and carries each chunk's prefix to the next
		 * in the output dtype, so an element holds the roundings of a tree level per
		 * doubling of the line and of the carries before it (on the H200, up to 4
		 * fp16 and 6 bf16 steps at n = 4096): two roundings per doubling of the line */
		const kgb_tensor_t *self = &c->t[TI(c, "self")];
		int64_t n = self->ndim ? self->shape[c->iparam[0]] : 1;
		int lg = 1;
		while (((int64_t)1 << lg) < n && lg < 62)
			lg++;
		kgb_aten_half_intermediates(c, 2 * lg);
		return 0;
	}
	return rowwise_setup(c, false, 1 << 18, err, errlen);
}

static void cumsum_row(const double *x, double *o, size_t cols)
{
	double s = 0;
	for (size_t j = 0; j < cols; j++) {
		s += x[j];
		o[j] = s;
	}
}

static int cumsum_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	if (!is_smoke(c))
		return line_full_ref(c, b, true);
	return rowwise_ref(c, b, cumsum_row);
}

static const kgb_op_t op_cumsum = {
	DEMO_OP("aten", KGB_DS_ATEN, "cumsum", "scan", "bf16 f16 f32 i16 i32", cumsum_setup, cumsum_ref),
	.summary = "out = the inclusive prefix sum of self along dim (an integer, negative counts from the "
	           "end); 0-d to 5-d self in any layout, out contiguous; int16/int32 inputs give an int64 "
	           "out (exact); symbols outer, len, inner, rows = outer * inner, cols = len. Smoke cases: "
	           "self is [rows, cols], out[r, j] = sum over i <= j of self[r, i] (dim = -1)",
	.signature = "self:in out:out dim:param",
	.grids = {
		{ .params = { { "dtype", "f32" }, { "shape", "[1,1000] [33,65] [16,1] [64,4096]" } } },
		{ .params = { { "shape", "[] [1] [1000] [65536]" }, { "dtype", F_FLOATS }, { "dim", "0" } } },
		{ .params = { { "shape", "[33,65] [16,1] [3,5,17] [2,3,4,5,6] [64,4096]" }, { "dtype", F_FLOATS },
		              { "dim", "-1 0" } } },
		{ .params = { { "shape", "[3,5,17] [2,3,4,5,6]" }, { "dtype", F_FLOATS }, { "dim", "1" } } },
		{ .params = { { "shape", "[7] [33,65] [2,3,4,5,6]" }, { "dtype", "i16 i32" }, { "dim", "-1 0" } } },
		{ .params = { { "shape", "[33,65] [64,4096]" }, { "dtype", F_FLOATS }, { "dim", "-1 0" },
		              { "layout", "transposed strided" } } },
	},
	.declared_cases = 25,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32 (inputs from [-0.5, 1)) and "
	                            "int16/int32 (int64 out) x the last, first and middle dims x layouts"),
	.smoke_grids = 1,
};

/* ---- index_select ---- */

/* Full grids: self 1-d to 5-d in any layout, index (i64, n values in [0, size of dim))
 * along dim; out is self's shape with n along dim. Symbols: dim (as written), n, rows
 * (self's size along dim), cols (product of the dims after dim), outer (before it),
 * as in the smoke cases where dim = 0 of a 2-d self. iparam[0] = the wrapped dim. */
static int index_select_full_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS], n = kgb_case_pint(c, "n", 1), dim, outer = 1, inner = 1;
	int nd = kgb_aten_shape(c, "shape", dims), w;
	kgb_tensor_t *idx, *o;

	if (nd < 1)
		return kgb_err(err, errlen, "op index_select case %u: self must have at least 1 dim", c->index);
	if (param_dim(c, nd, &dim, &w, err, errlen) != 0)
		return -1;
	if (n < 1 || dims[w] < 1)
		return kgb_err(err, errlen, "op index_select case %u: n = %lld and the size of dim %lld must be >= 1",
		               c->index, (long long)n, (long long)dim);
	if (!kgb_aten_input(c, "self", dt, nd, dims, err, errlen))
		return -1;
	idx = kgb_case_add_tensor(c, "index", KGB_ROLE_IN, KGB_DT_I64, 1, &n);
	kgb_aten_gen(idx, KGB_GEN_INT, 0, (double)(dims[w] - 1));
	memcpy(od, dims, sizeof od);
	od[w] = n;
	o = kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, od);
	for (int d = 0; d < nd; d++) {
		if (d < w)
			outer *= dims[d];
		else if (d > w)
			inner *= dims[d];
	}
	c->iparam[0] = w;
	KGB_SYMS(c, "dim rows cols outer", dim, dims[w], inner, outer);
	kgb_aten_finish(c, 1, SIZE_MAX);
	c->timed = o->numel >= 65536 && !kgb_case_param(c, "layout");
	return 0;
}

static int index_select_full_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int ix = TI(c, "self"), ii = TI(c, "index"), io = TI(c, "out"), w = (int)c->iparam[0];
	const kgb_tensor_t *x = &c->t[ix], *o = &c->t[io];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, sidx[KGB_MAX_DIMS];
	do {
		double r = b->v[ii][kgb_tensor_offset(&c->t[ii], &idx[w])];
		if (!(r >= 0 && r < (double)x->shape[w]))
			return -1;
		memcpy(sidx, idx, sizeof sidx);
		sidx[w] = (int64_t)r;
		b->v[io][kgb_tensor_offset(o, idx)] = b->v[ix][kgb_tensor_offset(x, sidx)];
	} while (kgb_index_next(o, idx));
	return 0;
}

static int index_select_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	int64_t n = kgb_case_pint(c, "n", 1), ishape[1], oshape[2];
	kgb_tensor_t *idx;
	if (!is_smoke(c))
		return index_select_full_setup(c, err, errlen);
	if (!smoke_self(c, 2, &dt, &sp, err, errlen))
		return -1;
	if (n < 1 || sp->dims[0] < 1)
		return kgb_err(err, errlen, "op index_select case %u: n = %lld and rows = %lld must be >= 1",
		               c->index, (long long)n, (long long)sp->dims[0]);
	ishape[0] = n;
	idx = kgb_case_add_tensor(c, "index", KGB_ROLE_IN, KGB_DT_I64, 1, ishape);
	idx->gen = KGB_GEN_INT;
	idx->lo = 0;
	idx->hi = (double)(sp->dims[0] - 1);
	oshape[0] = n;
	oshape[1] = sp->dims[1];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, oshape);
	KGB_SYMS(c, "rows cols dim", sp->dims[0], sp->dims[1], 0);
	c->timed = n * sp->dims[1] >= 65536;
	return 0;
}

static int index_select_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	if (!is_smoke(c))
		return index_select_full_ref(c, b);
	const kgb_tensor_t *x = T(c, "self");
	size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1], n = T(c, "index")->numel;
	for (size_t j = 0; j < n; j++) {
		double r = EL(c, b, "index", j);
		if (!(r >= 0 && r < (double)rows))
			return -1;
		for (size_t k = 0; k < cols; k++)
			EL(c, b, "out", j * cols + k) = EL(c, b, "self", (size_t)r * cols + k);
	}
	return 0;
}

static const kgb_op_t op_index_select = {
	DEMO_OP("aten", KGB_DS_ATEN, "index_select", "indexing-scatter-gather",
	        "bf16 f16 f32", index_select_setup, index_select_ref),
	.summary = "out = self with the slices along dim (an integer, negative counts from the end) picked "
	           "by index: out[..., j, ...] = self[..., index[j], ...]; index is i64 with n values in "
	           "[0, rows) (rows = self's size along dim; repeats allowed); 1-d to 5-d self in any layout, "
	           "out contiguous. Smoke cases: dim = 0 of a 2-d self, out[j, :] = self[index[j], :]",
	.signature = "self:in dim:param index:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32" }, { "shape", "[7,3] [100,64] [1000,128]" }, { "n", "5 512" } } },
		{ .params = { { "shape", "[7,3] [100,64] [1000,128] [3,5,17] [2,3,4,5,6]" }, { "dtype", F_FLOATS },
		              { "dim", "0 -1" }, { "n", "1 512" } } },
		{ .params = { { "shape", "[1] [1000]" }, { "dtype", F_FLOATS }, { "dim", "0" }, { "n", "1 512" } } },
		{ .params = { { "shape", "[3,5,17] [2,3,4,5,6]" }, { "dtype", F_FLOATS }, { "dim", "1" },
		              { "n", "5" } } },
		{ .params = { { "shape", "[100,64] [1000,128]" }, { "dtype", F_FLOATS }, { "dim", "0 1" },
		              { "n", "37" }, { "layout", "transposed strided" } } },
	},
	.declared_cases = 18,
	.deviation = FULL_DEVIATION("then 1-d to 5-d shapes x bf16/f16/f32 x the first, a middle and "
	                            "the last dim x 1 to 512 indices x layouts; a 0-d self is left out "
	                            "(its index_select is a copy)"),
	.smoke_grids = 1,
};

/* ---- clone ---- */

/* Full grids: 0-d to 5-d self of any dtype and layout, out contiguous; symbols rows
 * (product of all dims but the last) and cols (the last), as in the smoke cases. Exact. */
static int clone_full_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], rows = 1;
	int nd = kgb_aten_shape(c, "shape", dims);
	kgb_tensor_t *x;
	if (!(x = kgb_aten_input(c, "self", dt, nd, dims, err, errlen)))
		return -1;
	if (!kgb_dtype_is_float(dt))
		kgb_aten_gen(x, KGB_GEN_INT, -100000, 100000);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	for (int d = 0; d + 1 < nd; d++)
		rows *= dims[d];
	kgb_case_set_sym(c, "rows", rows);
	kgb_case_set_sym(c, "cols", nd ? dims[nd - 1] : 1);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	c->rtol = 0;     /* a copy: exact */
	c->atol_rel = 0;
	return 0;
}

static int clone_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	const char *layout = kgb_case_pstr(c, "layout", "contig");
	kgb_tensor_t *t;
	if (!is_smoke(c))
		return clone_full_setup(c, err, errlen);
	if (!(t = smoke_self(c, 2, &dt, &sp, err, errlen)))
		return -1;
	if (kgb_tensor_layout(t, layout) != 0)
		return kgb_err(err, errlen, "op clone case %u: parameter 'layout': unknown layout '%s'", c->index,
		               layout);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, sp->dims);
	kgb_case_set_sym(c, "rows", sp->dims[0]);
	kgb_case_set_sym(c, "cols", sp->dims[1]);
	c->timed = t->numel >= 262144 && dt == KGB_DT_F32;
	return 0;
}

static int clone_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	size_t n = T(c, "out")->numel;
	for (size_t i = 0; i < n; i++)
		EL(c, b, "out", i) = EL(c, b, "self", i);
	return 0;
}

static const kgb_op_t op_clone = {
	DEMO_OP("aten", KGB_DS_ATEN, "clone", "copy-view-layout", "bf16 f16 f32 i32 i64", clone_setup, clone_ref),
	.summary = "out = a contiguous copy of self (0-d to 5-d; self may be transposed or strided: the "
	           "element at multi-index i of self is at sum over d of i[d]*self.stride<d>); exact in "
	           "the full grids. Smoke cases: 2-d, element (i, j) at i*self.stride0 + j*self.stride1",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[33,65] [64,1] [512,512]" },
		              { "layout", "contig transposed strided" } } },
		{ .params = { { "shape", "[] [1] [7] [1000] [33,65] [3,1,17] [2,3,4,5,6] [1024,1024]" },
		              { "dtype", F_FLOATS " i32 i64" }, { "layout", "contig" } } },
		{ .params = { { "shape", "[33,65] [64,1] [2,3,4,5,6] [1024,1024]" }, { "dtype", F_FLOATS " i32 i64" },
		              { "layout", "transposed strided" } } },
	},
	.declared_cases = 36,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32/int32/int64 x contiguous, "
	                            "transposed and strided inputs; exact compare"),
	.smoke_grids = 1,
};

/* ---- gt ---- */

/* The scalar of gt's Scalar overload (exact in every float dtype). */
#define GT_SCALAR 0.25

/* Full grids: other broadcast as for add (full, t0d, last, col) or a Python scalar
 * (other = "scalar": the f32 scalar `other` = 0.25); self in any layout. */
static int gt_full_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *mode = kgb_case_pstr(c, "other", "full"), *layout = kgb_case_pstr(c, "layout", NULL);
	int64_t dims[KGB_MAX_DIMS], bd[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims), bnd;
	kgb_tensor_t *a;

	if (!(a = kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, layout, err, errlen)))
		return -1;
	if (strcmp(mode, "scalar") == 0) {
		kgb_aten_gen(a, KGB_GEN_UNIFORM, -1, 1);
		kgb_case_add_scalar(c, "other", KGB_DT_F32, GT_SCALAR);
	} else {
		if ((bnd = bcast_shape(c, mode, nd, dims, bd, err, errlen)) < 0)
			return -1;
		if (!kgb_aten_tensor(c, "other", KGB_ROLE_IN, dt, bnd, bd, strcmp(mode, "full") == 0 ? layout : NULL,
		                     err, errlen))
			return -1;
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_BOOL, nd, dims);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

/* Full grids: ties (about 10% of the positions) and both outcomes. Same shapes: other
 * from self as in the smoke cases; broadcast other: self from other; scalar: self is
 * uniform on [-1, 1) with some elements set to the scalar. */
static void gt_full_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	int ia = TI(c, "self"), ib = TI(c, "other");
	const kgb_tensor_t *a = &c->t[ia];
	bool same = strcmp(kgb_case_pstr(c, "other", "full"), "full") == 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	do {
		double u = kgb_rng_uniform(rng), d = 2.0 * kgb_rng_uniform(rng) - 1.0;
		double *s = &b->v[ia][kgb_tensor_offset(a, idx)];
		if (ib < 0) {
			if (u < 0.1)
				*s = GT_SCALAR;
		} else if (same) {
			b->v[ib][kgb_tensor_offset(&c->t[ib], idx)] = u < 0.1 ? *s : *s + 0.5 * d;
		} else {
			double y = b->v[ib][kgb_aten_bcast_off(&c->t[ib], a->ndim, idx)];
			*s = u < 0.1 ? y : y + 0.5 * d;
		}
	} while (kgb_index_next(a, idx));
}

static int gt_full_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int ia = TI(c, "self"), ib = TI(c, "other"), io = TI(c, "out");
	const kgb_tensor_t *o = &c->t[io];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	do {
		double x = b->v[ia][kgb_tensor_offset(&c->t[ia], idx)];
		double y = ib >= 0 ? b->v[ib][kgb_aten_bcast_off(&c->t[ib], o->ndim, idx)] : scalar_value(c, "other");
		b->v[io][kgb_tensor_offset(o, idx)] = x > y ? 1.0 : 0.0;
	} while (kgb_index_next(o, idx));
	return 0;
}

static int gt_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (!is_smoke(c))
		return gt_full_setup(c, err, errlen);
	if (!(t = smoke_self(c, -1, &dt, &sp, err, errlen)))
		return -1;
	kgb_case_add_tensor(c, "other", KGB_ROLE_IN, dt, sp->ndim, sp->dims);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_BOOL, sp->ndim, sp->dims);
	c->timed = t->numel >= 65536;
	return 0;
}

/* other = self in about 10% of the positions (ties must give false), elsewhere self
 * plus a small offset of either sign, so that about half the answers are true. */
static void gt_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	size_t n = T(c, "self")->numel;
	if (!is_smoke(c)) {
		gt_full_gen(c, rng, b);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double u = kgb_rng_uniform(rng), d = 2.0 * kgb_rng_uniform(rng) - 1.0;
		double s = EL(c, b, "self", i);
		EL(c, b, "other", i) = u < 0.1 ? s : s + 0.5 * d;
	}
}

static int gt_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	if (!is_smoke(c))
		return gt_full_ref(c, b);
	double *xv = dense(c, b, "self"), *ov = dense(c, b, "out"), *yv = dense(c, b, "other");
	size_t n = T(c, "out")->numel;
	for (size_t i = 0; i < n; i++)
		ov[i] = xv[i] > yv[i] ? 1.0 : 0.0;
	return 0;
}

static const kgb_op_t op_gt = {
	DEMO_OP("aten", KGB_DS_ATEN, "gt", "elementwise-binary", "bf16 f16 f32", gt_setup, gt_ref),
	.summary = "out = self > other (bool, one byte per element); other is a tensor broadcast against "
	           "self from the right (full: self's shape and layout; t0d: 0-d; last: [self's last dim]; "
	           "col: self's shape with the last dim 1) or, for other = scalar, the f32 scalar `other` "
	           "(0.25); self may be transposed or strided; about 10% ties, which give false. Smoke "
	           "cases: same shapes, contiguous",
	.signature = "self:in other:in|scalar out:out(bool)",
	.optional = "other",   /* has.other: 0 for the cases whose other is a scalar */
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[1024] [33,65] [4,8,16] [65536]" } } },
		{ .params = { { "shape", F_SHAPES }, { "dtype", F_FLOATS }, { "other", "full t0d scalar" } } },
		{ .params = { { "shape", F_SHAPES_ND }, { "dtype", F_FLOATS }, { "other", "last col" } } },
		{ .params = { { "shape", F_SHAPES_LAY }, { "dtype", F_FLOATS }, { "other", "full" },
		              { "layout", "transposed strided" } } },
	},
	.gen_inputs = gt_gen,
	.declared_cases = 36,
	.deviation = FULL_DEVIATION("then 0-d to 5-d shapes x bf16/f16/f32 x same-shape, 0-d, row and "
	                            "column broadcasts and a Python scalar x layouts"),
	.smoke_grids = 1,
};

/* ---- rms_norm (vllm) ---- */

static int rms_norm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (!(sp = smoke_params(c, "shape", 2, &dt, err, errlen)))
		return -1;
	t = kgb_case_add_tensor(c, "input", KGB_ROLE_IN, dt, 2, sp->dims);
	kgb_case_add_tensor(c, "weight", KGB_ROLE_IN, dt, 1, &sp->dims[1]);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, sp->dims);
	kgb_case_add_scalar(c, "epsilon", KGB_DT_F32, kgb_case_pfloat(c, "epsilon", 1e-6));
	kgb_case_set_sym(c, "tokens", sp->dims[0]);
	kgb_case_set_sym(c, "hidden", sp->dims[1]);
	c->reduce_len = (double)sp->dims[1];
	kgb_case_default_tol(c);
	/* the output is normalised: its error does not grow with hidden the way a sum's
	 * does, so the absolute term stays at one tenth of rtol (f32 keeps the sqrt
	 * scaling for the float accumulation of the mean of squares) */
	if (dt != KGB_DT_F32)
		c->atol_rel = c->rtol * 0.1;
	c->timed = t->numel >= 1 << 20;
	return 0;
}

static int rms_norm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	double *xv = dense(c, b, "input"), *ov = dense(c, b, "out"), *wv = dense(c, b, "weight");
	const kgb_tensor_t *x = T(c, "input");
	size_t tokens = (size_t)x->shape[0], hidden = (size_t)x->shape[1];
	double eps = scalar_value(c, "epsilon");
	for (size_t t = 0; t < tokens; t++) {
		double ms = 0, r;
		for (size_t j = 0; j < hidden; j++) {
			double v = xv[t * hidden + j];
			ms += v * v;
		}
		r = 1.0 / sqrt(ms / (double)hidden + eps);
		for (size_t j = 0; j < hidden; j++)
			ov[t * hidden + j] = xv[t * hidden + j] * r * wv[j];
	}
	return 0;
}

static const kgb_op_t op_rms_norm = {
	DEMO_OP("vllm", KGB_DS_VLLM, "rms_norm", "norm", "bf16 f16 f32", rms_norm_setup, rms_norm_ref),
	.summary = "out[t, :] = input[t, :] / sqrt(mean(input[t, :]^2) + epsilon) * weight",
	.signature = "input:in weight:in out:out epsilon:f32",
	.grids = {
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[1,128] [7,1000] [33,4096]" },
		              { "epsilon", "1e-6" } } },
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[256,4096]" }, { "epsilon", "1e-6" } } },
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[7,8] [7,768] [7,769] [33,770] [33,5120] [33,5125] "
		                                                      "[83,8192]" },
		              { "epsilon", "1e-6 1e-5" } } },
	},
	.declared_cases = 60,
	.deviation = FULL_DEVIATION("then 42 = dtype x 7 shapes (hidden 8 to 8192, odd and even tails) x "
	                            "epsilon; the public 4096-token rows repeat the 256-token path"),
	.smoke_grids = 2,
};

/* ---- rotary_embedding (vllm, neox style) ---- */

static int rotary_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *cfg;
	int64_t max_pos = kgb_case_pint(c, "max_pos", 512), sh[2];
	int64_t tokens, nh, nkv, hs, rot, neox = kgb_case_pint(c, "is_neox", 1);
	const char *cdt = kgb_case_pstr(c, "cache_dtype", "f32");
	kgb_tensor_t *pos, *q;
	if (!(cfg = smoke_params(c, "cfg", 4, &dt, err, errlen)))
		return -1;
	tokens = cfg->dims[0];
	nh = cfg->dims[1];
	nkv = cfg->dims[2];
	hs = cfg->dims[3];
	rot = kgb_case_pint(c, "rot_dim", 0);
	if (rot == 0)
		rot = hs;
	if (hs < 2 || hs % 2 || max_pos < 1 || rot % 2 || rot > hs)
		return kgb_err(err, errlen, "op rotary_embedding case %u: cfg %s: head_size and rot_dim must be even, "
		               "rot_dim <= head_size", c->index, cfg->s);
	sh[0] = tokens;
	pos = kgb_case_add_tensor(c, "positions", KGB_ROLE_IN, KGB_DT_I64, 1, sh);
	pos->gen = KGB_GEN_INT;
	pos->lo = 0;
	pos->hi = (double)(max_pos - 1);
	sh[1] = nh * hs;
	q = kgb_case_add_tensor(c, "query", KGB_ROLE_INOUT, dt, 2, sh);
	sh[1] = nkv * hs;
	kgb_case_add_tensor(c, "key", KGB_ROLE_INOUT, dt, 2, sh);
	sh[0] = max_pos;
	sh[1] = rot;
	/* vLLM keeps the cache in the query's dtype; the demo's smoke cases use f32 */
	kgb_case_add_tensor(c, "cos_sin_cache", KGB_ROLE_IN, strcmp(cdt, "same") == 0 ? dt : KGB_DT_F32, 2, sh);
	KGB_SYMS(c, "tokens num_heads num_kv_heads head_size rot_dim max_pos is_neox", tokens, nh, nkv, hs, rot,
	         max_pos, neox);
	c->iparam[0] = neox;
	c->timed = q->numel >= 1 << 18 || c->grid == 2;
	return 0;
}

/* The cache holds real cos/sin values of pos * base^(-2i/rot_dim), as vLLM builds it. */
static void rotary_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *t = T(c, "cos_sin_cache");
	size_t max_pos = (size_t)t->shape[0], rot = (size_t)t->shape[1], half = rot / 2;
	(void)rng;
	for (size_t p = 0; p < max_pos; p++) {
		for (size_t i = 0; i < half; i++) {
			double f = (double)p * pow(10000.0, -2.0 * (double)i / (double)rot);
			EL(c, b, "cos_sin_cache", p * rot + i) = cos(f);
			EL(c, b, "cos_sin_cache", p * rot + half + i) = sin(f);
		}
	}
}

/* Rotate the first rot elements of every head: neox pairs (i, i + rot/2), GPT-J pairs
 * (2i, 2i + 1), with c = cache[pos, i], s = cache[pos, rot/2 + i]. */
static void rotate(double *x, const double *cache, size_t tok, size_t heads, size_t hs, size_t rot, size_t pos,
                   bool neox)
{
	size_t half = rot / 2, row = heads * hs;
	const double *cs = cache + pos * rot, *sn = cs + half;
	for (size_t h = 0; h < heads; h++) {
		double *v = x + tok * row + h * hs;
		for (size_t i = 0; i < half; i++) {
			size_t ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
			double a = v[ia], b = v[ib];
			v[ia] = a * cs[i] - b * sn[i];
			v[ib] = b * cs[i] + a * sn[i];
		}
	}
}

static int rotary_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *q = T(c, "query"), *k = T(c, "key"), *cs = T(c, "cos_sin_cache");
	kgb_value_t hsv;
	size_t tokens = (size_t)q->shape[0], rot = (size_t)cs->shape[1], hs;
	double *pv = dense(c, b, "positions"), *qv = dense(c, b, "query"), *kv = dense(c, b, "key");
	const double *cv = dense(c, b, "cos_sin_cache");
	if (!kgb_symtab_get(c->sym, "head_size", &hsv))
		return -1;
	hs = (size_t)hsv.i;
	for (size_t t = 0; t < tokens; t++) {
		double p = pv[t];
		if (!(p >= 0 && p < (double)cs->shape[0]))
			return -1;
		rotate(qv, cv, t, (size_t)q->shape[1] / hs, hs, rot, (size_t)p, c->iparam[0] != 0);
		rotate(kv, cv, t, (size_t)k->shape[1] / hs, hs, rot, (size_t)p, c->iparam[0] != 0);
	}
	return 0;
}

static const kgb_op_t op_rotary = {
	DEMO_OP("vllm", KGB_DS_VLLM, "rotary_embedding", "positional-embedding",
	        "bf16 f16 f32", rotary_setup, rotary_ref),
	.summary = "in place: for each token t and head, the first rot_dim elements x of the head are "
	           "rotated with c = cos_sin_cache[positions[t], :rot_dim/2], s = cos_sin_cache[positions[t], "
	           "rot_dim/2:]: pairs (a, b) = (x[i], x[i + rot_dim/2]) when is_neox, (x[2i], x[2i+1]) "
	           "otherwise, a' = a*c - b*s, b' = b*c + a*s (query and key); the cache has the query's "
	           "dtype as in vLLM (f32 in the smoke cases, which are neox with rot_dim = head_size)",
	.signature = "positions:in query:inout key:inout cos_sin_cache:in",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "cfg", "[4,2,1,64] [17,8,2,128] [64,32,8,128]" },
		              { "max_pos", "512" } } },
		{ .params = { { "dtype", "f16 bf16 f32" }, { "cfg", "[11,8,8,64] [55,8,2,128] [5,4,4,256]" },
		              { "is_neox", "1 0" }, { "rot_dim", "0 32" }, { "cache_dtype", "same" },
		              { "max_pos", "1024" } } },
		{ .params = { { "dtype", "bf16" }, { "cfg", "[48,32,8,128]" }, { "is_neox", "1 0" },
		              { "cache_dtype", "same" }, { "max_pos", "4096" } } },
	},
	.inplace = true,
	.gen_inputs = rotary_gen,
	.declared_cases = 360,
	.deviation = FULL_DEVIATION("then 36 = dtype x 3 head layouts x is_neox (neox, GPT-J) x rot_dim "
	                            "(head_size, 32) with the cache in the query's dtype as vLLM keeps it, "
	                            "and 2 timed cases; the public grid repeats these over more batch "
	                            "and sequence sizes"),
	.smoke_grids = 1,
};

/* ---- cublasSgemm_v2 ---- */

/* A column-major matrix of `rows` x `cols` with leading dimension ld, as a tensor:
 * shape [cols, rows], strides [ld, 1], storage ld * cols (what cuBLAS may touch). */
static kgb_tensor_t *colmajor(kgb_case_t *c, const char *name, kgb_role_t role, int64_t rows, int64_t cols,
                              int64_t ld)
{
	int64_t sh[2] = { cols, rows };
	kgb_tensor_t *t = kgb_case_add_tensor(c, name, role, KGB_DT_F32, 2, sh);
	t->stride[0] = ld;
	t->stride[1] = 1;
	kgb_tensor_finish(t);
	t->storage = (size_t)(ld * cols);
	return t;
}

static int sgemm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *mnk;
	const char *ta = kgb_case_pstr(c, "transa", "N"), *tb = kgb_case_pstr(c, "transb", "N");
	int64_t m, n, k, pad = kgb_case_pint(c, "pad", 0), lda, ldb, ldc;
	bool tra, trb;
	if (!(mnk = param_shape(c, "mnk", 3, err, errlen)))
		return -1;
	if ((strcmp(ta, "N") && strcmp(ta, "T")) || (strcmp(tb, "N") && strcmp(tb, "T")))
		return kgb_err(err, errlen, "op cublasSgemm_v2 case %u: transa/transb must be N or T, not '%s'/'%s'",
		               c->index, ta, tb);
	m = mnk->dims[0];
	n = mnk->dims[1];
	k = mnk->dims[2];
	tra = ta[0] == 'T';
	trb = tb[0] == 'T';
	lda = (tra ? k : m) + pad;
	ldb = (trb ? n : k) + pad;
	ldc = m + pad;
	colmajor(c, "A", KGB_ROLE_IN, tra ? k : m, tra ? m : k, lda);
	colmajor(c, "B", KGB_ROLE_IN, trb ? n : k, trb ? k : n, ldb);
	colmajor(c, "C", KGB_ROLE_INOUT, m, n, ldc);
	kgb_case_add_scalar(c, "alpha", KGB_DT_F32, kgb_case_pfloat(c, "alpha", 1.0));
	kgb_case_add_scalar(c, "beta", KGB_DT_F32, kgb_case_pfloat(c, "beta", 0.0));
	KGB_SYMS(c, "m n k lda ldb ldc transa transb", m, n, k, lda, ldb, ldc, tra, trb);
	c->reduce_len = (double)k;
	c->timed = m * n * k >= 256 * 256 * 256;
	return 0;
}

static int sgemm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	kgb_value_t m, n, k, lda, ldb, ldc, ta, tb;
	if (!kgb_symtab_get(c->sym, "m", &m) || !kgb_symtab_get(c->sym, "n", &n) ||
	    !kgb_symtab_get(c->sym, "k", &k) || !kgb_symtab_get(c->sym, "lda", &lda) ||
	    !kgb_symtab_get(c->sym, "ldb", &ldb) || !kgb_symtab_get(c->sym, "ldc", &ldc) ||
	    !kgb_symtab_get(c->sym, "transa", &ta) || !kgb_symtab_get(c->sym, "transb", &tb))
		return -1;
	cblas_dgemm(CblasColMajor, ta.i ? CblasTrans : CblasNoTrans, tb.i ? CblasTrans : CblasNoTrans,
	            (int)m.i, (int)n.i, (int)k.i, scalar_value(c, "alpha"), b->v[TI(c, "A")], (int)lda.i,
	            b->v[TI(c, "B")], (int)ldb.i, scalar_value(c, "beta"), b->v[TI(c, "C")], (int)ldc.i);
	return 0;
}

static const kgb_op_t op_sgemm = {
	DEMO_OP("cublas", KGB_DS_CUBLAS, "cublasSgemm_v2", "blas3-gemm", "f32", sgemm_setup, sgemm_ref),
	.summary = "C = alpha * op(A) * op(B) + beta * C, column-major as cuBLAS; op(X) = X or X^T "
	           "(transa, transb: 0 = N, 1 = T); A is lda x ka, B is ldb x kb, C is ldc x n",
	.signature = "A:in B:in C:inout alpha:f32 beta:f32",
	.grids = {
		{ .params = { { "transa", "N T" }, { "transb", "N T" }, { "mnk", "[64,48,32] [33,17,65]" },
		              { "alpha", "1.5" }, { "beta", "0.5" }, { "pad", "0" } } },
		{ .params = { { "transa", "N T" }, { "transb", "N" }, { "mnk", "[37,29,41]" },
		              { "alpha", "1" }, { "beta", "0" }, { "pad", "3" } } },
		{ .params = { { "transa", "N" }, { "transb", "N" }, { "mnk", "[256,256,256]" },
		              { "alpha", "1" }, { "beta", "0 0.5" }, { "pad", "0" } } },
	},
	.inplace = true,
	.declared_cases = 352,
	.deviation = DEMO_DEVIATION,
};

/* ---- cublasSaxpy_v2 ---- */

static int saxpy_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t n = kgb_case_pint(c, "n", 0), incx = kgb_case_pint(c, "incx", 1), incy = kgb_case_pint(c, "incy", 1);
	kgb_tensor_t *x, *y;
	if (n < 1 || incx < 1 || incy < 1)
		return kgb_err(err, errlen, "op cublasSaxpy_v2 case %u: n = %lld, incx = %lld, incy = %lld must be >= 1",
		               c->index, (long long)n, (long long)incx, (long long)incy);
	x = kgb_case_add_tensor(c, "x", KGB_ROLE_IN, KGB_DT_F32, 1, &n);
	x->stride[0] = incx;
	kgb_tensor_finish(x);
	y = kgb_case_add_tensor(c, "y", KGB_ROLE_INOUT, KGB_DT_F32, 1, &n);
	y->stride[0] = incy;
	kgb_tensor_finish(y);
	kgb_case_add_scalar(c, "alpha", KGB_DT_F32, kgb_case_pfloat(c, "alpha", 1.0));
	c->timed = n >= 1 << 20;
	return 0;
}

static int saxpy_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	size_t n = T(c, "x")->numel;
	double alpha = scalar_value(c, "alpha");
	for (size_t i = 0; i < n; i++)
		EL(c, b, "y", i) += alpha * EL(c, b, "x", i);
	return 0;
}

static const kgb_op_t op_saxpy = {
	DEMO_OP("cublas", KGB_DS_CUBLAS, "cublasSaxpy_v2", "blas1-axpy", "f32", saxpy_setup, saxpy_ref),
	.summary = "y[i*incy] = alpha * x[i*incx] + y[i*incy] for i < n; elements between the strides "
	           "of y must be left untouched",
	.signature = "x:in y:inout alpha:f32",
	.grids = {
		{ .params = { { "n", "1000 65536" }, { "incx", "1 2" }, { "incy", "1 2" }, { "alpha", "2.5" } } },
		{ .params = { { "n", "1048576" }, { "incx", "1" }, { "incy", "1" }, { "alpha", "-0.75" } } },
	},
	.inplace = true,
	.declared_cases = 648,
	.deviation = DEMO_DEVIATION,
};

const kgb_op_t *const kgb_ops_demo[] = {
	&op_add, &op_silu, &op_sum, &op_softmax, &op_index_select, &op_clone, &op_cumsum, &op_gt,
	&op_rms_norm, &op_rotary, &op_sgemm, &op_saxpy, NULL,
};
