/* The twelve operators of the demo campaign (dataset "demo"), each also a member of
 * its source dataset. Grids are small subsets of the public cases so that the CPU
 * demo runs in minutes; the 1-3 largest cases of each are timed.
 *
 * Tensor and scalar names are part of the contract with candidate kernels (launch
 * plans name them): do not rename them. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "catalog.h"
#include "ops.h"

#define DEMO_DEVIATION "demo subset: a few small cases of the public grid so the CPU demo stays fast"

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

/* ---- add ---- */

static int add_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	const char *bc = kgb_case_pstr(c, "other", "full");
	kgb_tensor_t *self;
	int64_t oshape[1];
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", -1, err, errlen)))
		return -1;
	if (sp->ndim < 1)
		return kgb_err(err, errlen, "op add case %u: shape %s must have at least 1 dim", c->index, sp->s);
	self = kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, sp->ndim, sp->dims);
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
	double *out = dense(c, b, "out"), *x = dense(c, b, "self"), *y = dense(c, b, "other");
	for (size_t i = 0; i < n; i++)
		out[i] = x[i] + alpha * y[i % on];
	return 0;
}

static const kgb_op_t op_add = {
	.name = "add",
	.source = "aten",
	.category = "elementwise-binary",
	.dtypes = "f16 f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out = self + alpha * other; other is self's shape, [1], or [self's last dim] "
	           "(trailing broadcast: other index = i % other.numel)",
	.signature = "self:in other:in out:out alpha:f32",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[1024] [33,65] [4,8,16]" },
		              { "other", "full last one" }, { "alpha", "0.5" } } },
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[65536]" }, { "other", "full" },
		              { "alpha", "1 0.5" } } },
	},
	.setup = add_setup,
	.ref = add_ref,
	.declared_cases = 650,
	.deviation = DEMO_DEVIATION,
};

/* ---- silu ---- */

static int unary_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", -1, err, errlen)))
		return -1;
	t = kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, sp->ndim, sp->dims);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, sp->ndim, sp->dims);
	c->timed = t->numel >= 131072;
	return 0;
}

static int silu_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	size_t n = T(c, "out")->numel;
	double *out = dense(c, b, "out"), *in = dense(c, b, "self");
	for (size_t i = 0; i < n; i++)
		out[i] = in[i] / (1.0 + exp(-in[i]));
	return 0;
}

static const kgb_op_t op_silu = {
	.name = "silu",
	.source = "aten",
	.category = "elementwise-unary",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out = self / (1 + exp(-self))",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[1024] [33,65] [4,8,16] [131072]" } } },
	},
	.setup = unary_setup,
	.ref = silu_ref,
	.declared_cases = 36,
	.deviation = DEMO_DEVIATION,
};

/* ---- row-wise ops over [rows, cols] (sum, softmax, cumsum) ---- */

/* self [rows, cols] -> out [rows] (reduce) or [rows, cols]; symbols rows, cols, dim. */
static int rowwise_setup(kgb_case_t *c, bool reduce, size_t timed_numel, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", 2, err, errlen)))
		return -1;
	t = kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, 2, sp->dims);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, reduce ? 1 : 2, sp->dims);
	kgb_case_set_sym(c, "rows", sp->dims[0]);
	kgb_case_set_sym(c, "cols", sp->dims[1]);
	kgb_case_set_sym(c, "dim", -1);
	c->reduce_len = (double)sp->dims[1];
	c->timed = t->numel >= timed_numel;
	return 0;
}

static int sum_setup(kgb_case_t *c, char *err, size_t errlen)
{
	return rowwise_setup(c, true, 1 << 20, err, errlen);
}

static int sum_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	double *xv = dense(c, b, "self"), *ov = dense(c, b, "out");
	const kgb_tensor_t *x = T(c, "self");
	size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
	for (size_t r = 0; r < rows; r++) {
		double s = 0;
		for (size_t j = 0; j < cols; j++)
			s += xv[r * cols + j];
		ov[r] = s;
	}
	return 0;
}

static const kgb_op_t op_sum = {
	.name = "sum",
	.source = "aten",
	.category = "reduction",
	.dtypes = "f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out[r] = sum over j of self[r, j] (dim = -1, self is [rows, cols])",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32" },
		              { "shape", "[1,1000] [33,65] [128,1024] [7,4096] [100,1] [256,4096]" } } },
	},
	.setup = sum_setup,
	.ref = sum_ref,
	.declared_cases = 45,
	.deviation = DEMO_DEVIATION,
};

static int softmax_setup(kgb_case_t *c, char *err, size_t errlen)
{
	return rowwise_setup(c, false, 80000, err, errlen);
}

static int softmax_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	double *xv = dense(c, b, "self"), *ov = dense(c, b, "out");
	const kgb_tensor_t *x = T(c, "self");
	size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
	for (size_t r = 0; r < rows; r++) {
		double m = -INFINITY, s = 0;
		for (size_t j = 0; j < cols; j++)
			m = fmax(m, xv[r * cols + j]);
		for (size_t j = 0; j < cols; j++)
			s += exp(xv[r * cols + j] - m);
		for (size_t j = 0; j < cols; j++)
			ov[r * cols + j] = exp(xv[r * cols + j] - m) / s;
	}
	return 0;
}

static const kgb_op_t op_softmax = {
	.name = "softmax",
	.source = "aten",
	.category = "softmax",
	.dtypes = "f16 f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out[r, :] = exp(self[r, :] - max) / sum(exp(self[r, :] - max)) (dim = -1)",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[4,128] [33,65] [16,1024] [2,40000]" } } },
	},
	.setup = softmax_setup,
	.ref = softmax_ref,
	.declared_cases = 36,
	.deviation = DEMO_DEVIATION,
};

static int cumsum_setup(kgb_case_t *c, char *err, size_t errlen)
{
	return rowwise_setup(c, false, 1 << 18, err, errlen);
}

static int cumsum_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	double *xv = dense(c, b, "self"), *ov = dense(c, b, "out");
	const kgb_tensor_t *x = T(c, "self");
	size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
	for (size_t r = 0; r < rows; r++) {
		double s = 0;
		for (size_t j = 0; j < cols; j++) {
			s += xv[r * cols + j];
			ov[r * cols + j] = s;
		}
	}
	return 0;
}

static const kgb_op_t op_cumsum = {
	.name = "cumsum",
	.source = "aten",
	.category = "scan",
	.dtypes = "f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out[r, j] = sum over i <= j of self[r, i] (inclusive scan, dim = -1)",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32" }, { "shape", "[1,1000] [33,65] [16,1] [64,4096]" } } },
	},
	.setup = cumsum_setup,
	.ref = cumsum_ref,
	.declared_cases = 25,
	.deviation = DEMO_DEVIATION,
};

/* ---- index_select ---- */

static int index_select_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	int64_t n = kgb_case_pint(c, "n", 1), ishape[1], oshape[2];
	kgb_tensor_t *idx;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", 2, err, errlen)))
		return -1;
	if (n < 1 || sp->dims[0] < 1)
		return kgb_err(err, errlen, "op index_select case %u: n = %lld and rows = %lld must be >= 1",
		               c->index, (long long)n, (long long)sp->dims[0]);
	kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, 2, sp->dims);
	ishape[0] = n;
	idx = kgb_case_add_tensor(c, "index", KGB_ROLE_IN, KGB_DT_I64, 1, ishape);
	idx->gen = KGB_GEN_INT;
	idx->lo = 0;
	idx->hi = (double)(sp->dims[0] - 1);
	oshape[0] = n;
	oshape[1] = sp->dims[1];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, oshape);
	kgb_case_set_sym(c, "rows", sp->dims[0]);
	kgb_case_set_sym(c, "cols", sp->dims[1]);
	kgb_case_set_sym(c, "dim", 0);
	c->timed = n * sp->dims[1] >= 65536;
	return 0;
}

static int index_select_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
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
	.name = "index_select",
	.source = "aten",
	.category = "indexing-scatter-gather",
	.dtypes = "f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out[j, :] = self[index[j], :] (dim = 0; index is i64 with values in [0, rows))",
	.signature = "self:in index:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32" }, { "shape", "[7,3] [100,64] [1000,128]" }, { "n", "5 512" } } },
	},
	.setup = index_select_setup,
	.ref = index_select_ref,
	.declared_cases = 18,
	.deviation = DEMO_DEVIATION,
};

/* ---- clone ---- */

static int clone_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	const char *layout = kgb_case_pstr(c, "layout", "contig");
	kgb_tensor_t *t;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", 2, err, errlen)))
		return -1;
	t = kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, 2, sp->dims);
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
	.name = "clone",
	.source = "aten",
	.category = "copy-view-layout",
	.dtypes = "f16 f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out = a contiguous copy of self (2-d; self may be transposed or strided: "
	           "element (i, j) of self is at i*self.stride0 + j*self.stride1)",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[33,65] [64,1] [512,512]" },
		              { "layout", "contig transposed strided" } } },
	},
	.setup = clone_setup,
	.ref = clone_ref,
	.declared_cases = 36,
	.deviation = DEMO_DEVIATION,
};

/* ---- gt ---- */

static int gt_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", -1, err, errlen)))
		return -1;
	t = kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, sp->ndim, sp->dims);
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
	for (size_t i = 0; i < n; i++) {
		double u = kgb_rng_uniform(rng), d = 2.0 * kgb_rng_uniform(rng) - 1.0;
		double s = EL(c, b, "self", i);
		EL(c, b, "other", i) = u < 0.1 ? s : s + 0.5 * d;
	}
}

static int gt_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	double *xv = dense(c, b, "self"), *ov = dense(c, b, "out"), *yv = dense(c, b, "other");
	size_t n = T(c, "out")->numel;
	for (size_t i = 0; i < n; i++)
		ov[i] = xv[i] > yv[i] ? 1.0 : 0.0;
	return 0;
}

static const kgb_op_t op_gt = {
	.name = "gt",
	.source = "aten",
	.category = "elementwise-binary",
	.dtypes = "f16 f32",
	.datasets = KGB_DS_ATEN | KGB_DS_DEMO,
	.summary = "out = self > other (bool, one byte per element; same shapes)",
	.signature = "self:in other:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "shape", "[1024] [33,65] [4,8,16] [65536]" } } },
	},
	.setup = gt_setup,
	.ref = gt_ref,
	.gen_inputs = gt_gen,
	.declared_cases = 36,
	.deviation = DEMO_DEVIATION,
};

/* ---- rms_norm (vllm) ---- */

static int rms_norm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *sp;
	kgb_tensor_t *t;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(sp = param_shape(c, "shape", 2, err, errlen)))
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
	.name = "rms_norm",
	.source = "vllm",
	.category = "norm",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM | KGB_DS_DEMO,
	.summary = "out[t, :] = input[t, :] / sqrt(mean(input[t, :]^2) + epsilon) * weight",
	.signature = "input:in weight:in out:out epsilon:f32",
	.grids = {
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[1,128] [7,1000] [33,4096]" },
		              { "epsilon", "1e-6" } } },
		{ .params = { { "dtype", "f32 f16 bf16" }, { "shape", "[256,4096]" }, { "epsilon", "1e-6" } } },
	},
	.setup = rms_norm_setup,
	.ref = rms_norm_ref,
	.declared_cases = 60,
	.deviation = DEMO_DEVIATION,
};

/* ---- rotary_embedding (vllm, neox style) ---- */

static int rotary_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	const kgb_pval_t *cfg;
	int64_t max_pos = kgb_case_pint(c, "max_pos", 512), sh[2];
	int64_t tokens, nh, nkv, hs;
	kgb_tensor_t *pos, *q;
	if (param_dtype(c, "dtype", &dt, err, errlen) || !(cfg = param_shape(c, "cfg", 4, err, errlen)))
		return -1;
	tokens = cfg->dims[0];
	nh = cfg->dims[1];
	nkv = cfg->dims[2];
	hs = cfg->dims[3];
	if (hs < 2 || hs % 2 || max_pos < 1)
		return kgb_err(err, errlen, "op rotary_embedding case %u: cfg %s: head_size must be even and >= 2",
		               c->index, cfg->s);
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
	sh[1] = hs;
	kgb_case_add_tensor(c, "cos_sin_cache", KGB_ROLE_IN, KGB_DT_F32, 2, sh);
	kgb_case_set_sym(c, "tokens", tokens);
	kgb_case_set_sym(c, "num_heads", nh);
	kgb_case_set_sym(c, "num_kv_heads", nkv);
	kgb_case_set_sym(c, "head_size", hs);
	kgb_case_set_sym(c, "rot_dim", hs);
	kgb_case_set_sym(c, "max_pos", max_pos);
	kgb_case_set_sym(c, "is_neox", 1);
	c->timed = q->numel >= 1 << 18;
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

static void rotate(double *x, const double *cache, size_t tok, size_t heads, size_t hs, size_t pos)
{
	size_t half = hs / 2, rot = hs, row = heads * hs;
	const double *cs = cache + pos * rot, *sn = cs + half;
	for (size_t h = 0; h < heads; h++) {
		double *x1 = x + tok * row + h * hs, *x2 = x1 + half;
		for (size_t i = 0; i < half; i++) {
			double a = x1[i], b = x2[i];
			x1[i] = a * cs[i] - b * sn[i];
			x2[i] = b * cs[i] + a * sn[i];
		}
	}
}

static int rotary_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *q = T(c, "query"), *k = T(c, "key"), *cs = T(c, "cos_sin_cache");
	size_t tokens = (size_t)q->shape[0], hs = (size_t)cs->shape[1];
	double *pv = dense(c, b, "positions"), *qv = dense(c, b, "query"), *kv = dense(c, b, "key");
	const double *cv = dense(c, b, "cos_sin_cache");
	for (size_t t = 0; t < tokens; t++) {
		double p = pv[t];
		if (!(p >= 0 && p < (double)cs->shape[0]))
			return -1;
		rotate(qv, cv, t, (size_t)q->shape[1] / hs, hs, (size_t)p);
		rotate(kv, cv, t, (size_t)k->shape[1] / hs, hs, (size_t)p);
	}
	return 0;
}

static const kgb_op_t op_rotary = {
	.name = "rotary_embedding",
	.source = "vllm",
	.category = "positional-embedding",
	.dtypes = "f16 f32",
	.datasets = KGB_DS_VLLM | KGB_DS_DEMO,
	.summary = "in place, neox style, rot_dim = head_size: for each token t and head, with "
	           "c = cos_sin_cache[positions[t], :rot_dim/2], s = cos_sin_cache[positions[t], rot_dim/2:], "
	           "x1 = x[:rot_dim/2], x2 = x[rot_dim/2:]: x1' = x1*c - x2*s, x2' = x2*c + x1*s (query and key)",
	.signature = "positions:in query:inout key:inout cos_sin_cache:in",
	.grids = {
		{ .params = { { "dtype", "f32 f16" }, { "cfg", "[4,2,1,64] [17,8,2,128] [64,32,8,128]" },
		              { "max_pos", "512" } } },
	},
	.setup = rotary_setup,
	.ref = rotary_ref,
	.inplace = true,
	.gen_inputs = rotary_gen,
	.declared_cases = 360,
	.deviation = DEMO_DEVIATION,
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
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "k", k);
	kgb_case_set_sym(c, "lda", lda);
	kgb_case_set_sym(c, "ldb", ldb);
	kgb_case_set_sym(c, "ldc", ldc);
	kgb_case_set_sym(c, "transa", tra);
	kgb_case_set_sym(c, "transb", trb);
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
	.name = "cublasSgemm_v2",
	.source = "cublas",
	.category = "blas3-gemm",
	.dtypes = "f32",
	.datasets = KGB_DS_CUBLAS | KGB_DS_DEMO,
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
	.setup = sgemm_setup,
	.ref = sgemm_ref,
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
	.name = "cublasSaxpy_v2",
	.source = "cublas",
	.category = "blas1-axpy",
	.dtypes = "f32",
	.datasets = KGB_DS_CUBLAS | KGB_DS_DEMO,
	.summary = "y[i*incy] = alpha * x[i*incx] + y[i*incy] for i < n; elements between the strides "
	           "of y must be left untouched",
	.signature = "x:in y:inout alpha:f32",
	.grids = {
		{ .params = { { "n", "1000 65536" }, { "incx", "1 2" }, { "incy", "1 2" }, { "alpha", "2.5" } } },
		{ .params = { { "n", "1048576" }, { "incx", "1" }, { "incy", "1" }, { "alpha", "-0.75" } } },
	},
	.setup = saxpy_setup,
	.ref = saxpy_ref,
	.inplace = true,
	.declared_cases = 648,
	.deviation = DEMO_DEVIATION,
};

const kgb_op_t *const kgb_ops_demo[] = {
	&op_add, &op_silu, &op_sum, &op_softmax, &op_index_select, &op_clone, &op_cumsum, &op_gt,
	&op_rms_norm, &op_rotary, &op_sgemm, &op_saxpy, NULL,
};
