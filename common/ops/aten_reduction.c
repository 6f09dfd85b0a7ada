/* ATen reductions: amin, argmax, mean (sum is a demo operator), pairwise_distance and
 * renorm. Reduced dimensions are named in the grid: "all", "last", "first", "second",
 * "fl" (first and last). */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

enum { K_AMIN, K_ARGMAX, K_MEAN };

typedef kgb_aten_kind_def_t red_def_t;

/* Bit mask of the reduced dimensions for spec on an ndim-d tensor (0-d: bit 0). */
static unsigned dims_mask(const char *spec, int ndim, char *err, size_t errlen, const char *op)
{
	if (ndim == 0 || strcmp(spec, "all") == 0)
		return ndim == 0 ? 1u : (1u << ndim) - 1;
	if (strcmp(spec, "last") == 0)
		return 1u << (ndim - 1);
	if (strcmp(spec, "first") == 0)
		return 1u;
	if (strcmp(spec, "second") == 0 && ndim >= 2)
		return 2u;
	if (strcmp(spec, "fl") == 0)
		return 1u | (1u << (ndim - 1));
	kgb_err(err, errlen, "op %s: parameter dim: value '%s' does not fit a %d-d shape", op, spec, ndim);
	return 0;
}

/* Output index of input index idx: reduced dims dropped (or 0 with keepdim). */
static void out_index(const int64_t *idx, int ndim, unsigned mask, bool keep, int64_t *oidx)
{
	int k = 0;

	for (int d = 0; d < ndim; d++) {
		if (mask & (1u << d)) {
			if (keep)
				oidx[k++] = 0;
		} else {
			oidx[k++] = idx[d];
		}
	}
}

static int setup_reduce(kgb_case_t *c, char *err, size_t errlen)
{
	const red_def_t *r = KGB_ATEN_DEF(red_def_t, c);
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *spec = kgb_case_pstr(c, "dim", "all");
	bool keep = kgb_case_pint(c, "keepdim", 0) != 0;
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims), ond = 0;
	unsigned mask = dims_mask(spec, nd, err, errlen, c->op->name);
	double rlen = 1;
	kgb_tensor_t *x;

	if (!mask)
		return -1;
	x = kgb_aten_input(c, "self", dt, nd, dims, err, errlen);
	if (!x)
		return -1;
	if (r->kind == K_ARGMAX)
		kgb_aten_gen(x, KGB_GEN_UNIFORM, -2, 2);
	else if (r->kind == K_AMIN)
		kgb_aten_gen(x, KGB_GEN_NORMAL, 0.3, 1.0); /* minima spread out even in bf16 */
	ond = kgb_aten_reduced_shape(nd, dims, mask, keep, od, &rlen);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, r->kind == K_ARGMAX ? KGB_DT_I64 : dt, ond, od);
	c->iparam[0] = mask;
	c->iparam[1] = keep;
	c->iparam[2] = (nd == 0 || strcmp(spec, "all") == 0) ? -1 : __builtin_ctz(mask);
	kgb_case_set_sym(c, "dim_mask", mask);
	kgb_case_set_sym(c, "keepdim", keep);
	kgb_case_set_sym(c, "reduce_len", (int64_t)rlen);
	if (__builtin_popcount(mask) == 1 && nd > 0 && strcmp(spec, "all") != 0)
		kgb_case_set_sym(c, "dim", __builtin_ctz(mask));
	else
		kgb_case_set_sym(c, "dim", -1);
	kgb_aten_finish(c, r->kind == K_MEAN ? rlen : 1, KGB_ATEN_TIMED_NUMEL);
	if (r->kind == K_AMIN) {
		c->rtol = 0;         /* the minimum is one of the inputs: exact */
		c->atol_rel = 0;
	}
	return 0;
}

static int ref_reduce(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const red_def_t *r = KGB_ATEN_DEF(red_def_t, c);
	const kgb_tensor_t *x = &c->t[0], *o = &c->t[1];
	unsigned mask = (unsigned)c->iparam[0];
	bool keep = c->iparam[1] != 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 }, oidx[KGB_MAX_DIMS] = { 0 };
	double *best = NULL, *cnt = NULL;
	size_t flat = 0;

	if (r->kind == K_ARGMAX)
		best = kgb_xmalloc(o->storage * sizeof *best);
	if (r->kind == K_MEAN)
		cnt = kgb_xcalloc(o->storage, sizeof *cnt);
	memset(oidx, 0, sizeof oidx);
	do {
		size_t oo = kgb_tensor_offset(o, oidx);
		b->v[1][oo] = r->kind == K_AMIN ? INFINITY : 0;
		if (best)
			best[oo] = -INFINITY;
	} while (kgb_index_next(o, oidx));
	do {
		double v = b->v[0][kgb_tensor_offset(x, idx)];
		size_t oo;
		out_index(idx, x->ndim, x->ndim ? mask : 0, keep, oidx);
		oo = kgb_tensor_offset(o, oidx);
		switch (r->kind) {
		case K_AMIN:
			if (v < b->v[1][oo])
				b->v[1][oo] = v;
			break;
		case K_ARGMAX: {
			/* index along the reduced dim (or the flat index for dim=None) */
			int64_t pos = c->iparam[2] >= 0 ? idx[c->iparam[2]] : (int64_t)flat;
			if (v > best[oo]) {      /* strict: the first maximum wins */
				best[oo] = v;
				b->v[1][oo] = (double)pos;
			}
			break;
		}
		case K_MEAN:
			b->v[1][oo] += v;
			cnt[oo] += 1;
			break;
		}
		flat++;
	} while (kgb_index_next(x, idx));
	if (cnt) {
		memset(oidx, 0, sizeof oidx);
		do {
			size_t oo = kgb_tensor_offset(o, oidx);
			b->v[1][oo] /= cnt[oo];
		} while (kgb_index_next(o, oidx));
	}
	free(best);
	free(cnt);
	return 0;
}

#define R_SHAPES_ND "[33,65] [3,2,17] [2,3,4,5,6] [7,1000] [1000,7] [256,1024] [1024,1024]"
#define R_SHAPES_LOW "[] [1] [7] [1000] [65536]"
#define R_SHAPES_LAY "[33,65] [2,3,4,5,6] [1024,1024]"

#define RED_OP(NAME, KIND, DIMS, SUMMARY, SIG, DECL, DEV)                                                                    \
	static const red_def_t def_##NAME = {                                                                                \
		.op = {                                                                                                      \
			KGB_ATEN_OP(#NAME, "reduction", KGB_ATEN_FLOAT_DTYPES, SIG, setup_reduce, ref_reduce, DECL, SUMMARY, \
			            DEV),                                                                                    \
			.grids = {                                                                                           \
				{ { { "shape", R_SHAPES_ND }, { "dtype", KGB_ATEN_FLOAT_DTYPES },                            \
				    { "dim", DIMS }, { "keepdim", "0 1" } } },                                               \
				{ { { "shape", R_SHAPES_LOW }, { "dtype", KGB_ATEN_FLOAT_DTYPES },                           \
				    { "dim", "all" }, { "keepdim", "0 1" } } },                                              \
				{ { { "shape", R_SHAPES_LAY }, { "dtype", KGB_ATEN_FLOAT_DTYPES },                           \
				    { "dim", "last first" }, { "keepdim", "0" },                                             \
				    { "layout", "transposed strided" } } },                                                  \
			},                                                                                                   \
		},                                                                                                           \
		.kind = KIND,                                                                                                \
	}

RED_OP(amin, K_AMIN, "last first second fl all",
       "out = the minimum of self over the dims of `dim` (last, first, second, first+last, or all), "
       "keepdim keeps them as size 1; exact (the result is one of the inputs); inputs N(0.3, 1)",
       "self:in out:out dim:param keepdim:param", 468,
       "kgb's shapes (0-d to 5-d, odd, skinny and wide) x 5 dim sets x keepdim x layouts; the public 468 "
       "repeat shapes per dim list");
RED_OP(argmax, K_ARGMAX, "last first second all",
       "out (int64) = the index of the maximum of self along dim (or of the flattened tensor for "
       "dim=None, 'all'), the FIRST index when several elements tie (as PyTorch documents); inputs "
       "from [-2, 2) so that fp16/bf16 ties occur; exact",
       "self:in out:out(i64) dim:param keepdim:param", 126,
       "adds dim=None, keepdim, 0-d and 5-d shapes, non-contiguous inputs; ties must resolve to the first index");
RED_OP(mean, K_MEAN, "last first second fl all",
       "out = the arithmetic mean of self over the dims of `dim`; tolerance scaled by the reduction length",
       "self:in out:out dim:param keepdim:param", 45,
       "kgb's reduction grid (5 dim sets, keepdim, layouts) instead of the public 45 cases");

/* ---- pairwise_distance ---- */

/* out[i] = (sum_j |x1[i,j] - x2[i,j] + eps|^p)^(1/p) over the last dim. */
static int setup_pdist(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	bool keep = kgb_case_pint(c, "keepdim", 0) != 0;
	const char *x2m = kgb_case_pstr(c, "x2", "same");
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS], d2[1];
	int nd = kgb_aten_shape(c, "shape", dims), ond = nd;
	double p = kgb_case_pfloat(c, "p", 2);

	(void)err, (void)errlen;
	kgb_case_add_tensor(c, "x1", KGB_ROLE_IN, dt, nd, dims);
	if (strcmp(x2m, "row") == 0) {
		d2[0] = dims[nd - 1];
		kgb_case_add_tensor(c, "x2", KGB_ROLE_IN, dt, 1, d2);
	} else {
		kgb_case_add_tensor(c, "x2", KGB_ROLE_IN, dt, nd, dims);
	}
	memcpy(od, dims, sizeof od);
	if (keep)
		od[nd - 1] = 1;
	else
		ond = nd - 1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, ond, od);
	kgb_case_add_scalar(c, "p", KGB_DT_F32, p);
	kgb_case_add_scalar(c, "eps", KGB_DT_F32, 1e-6);
	c->fparam[0] = p;
	c->fparam[1] = c->s[1].value;
	c->iparam[0] = keep;
	kgb_aten_finish(c, (double)dims[nd - 1], KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_pdist(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x1 = &c->t[0], *x2 = &c->t[1], *o = &c->t[2];
	double p = c->fparam[0], eps = c->fparam[1];
	int nd = x1->ndim;
	int64_t n = x1->shape[nd - 1];
	int64_t oidx[KGB_MAX_DIMS] = { 0 }, idx[KGB_MAX_DIMS] = { 0 };

	do {
		double acc = 0;
		for (int d = 0; d < nd - 1; d++)
			idx[d] = oidx[d];
		for (int64_t j = 0; j < n; j++) {
			idx[nd - 1] = j;
			double diff = b->v[0][kgb_tensor_offset(x1, idx)] -
			              b->v[1][kgb_aten_bcast_off(x2, nd, idx)] + eps;
			acc += pow(fabs(diff), p);
		}
		b->v[2][kgb_tensor_offset(o, oidx)] = pow(acc, 1 / p);
	} while (kgb_index_next(o, oidx));
	return 0;
}

static const kgb_op_t op_pairwise_distance = {
	.name = "pairwise_distance",
	.source = "aten",
	.category = "reduction",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = (sum over the last dim of |x1 - x2 + eps|^p)^(1/p), eps = 1e-6, p in {1, 2, 3}; x2 "
	           "of x1's shape or one row broadcast; keepdim keeps the last dim as 1",
	.signature = "x1:in x2:in p:f32 eps:f32 out:out keepdim:param",
	.grids = {
		{ { { "shape", "[7] [1,128] [33,65] [3,5,17] [1024,256] [4096,512]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "p", "2 1 3" }, { "keepdim", "0 1" }, { "x2", "same" } } },
		{ { { "shape", "[33,65] [1024,256]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "p", "2 1" },
		    { "keepdim", "0" }, { "x2", "row" } } },
	},
	.setup = setup_pdist,
	.ref = ref_pdist,
	.declared_cases = 117,
	.deviation = "adds 1-d and 3-d inputs and a broadcast x2; p limited to 1, 2, 3",
};

/* ---- renorm ---- */

/* Slices along dim whose p-norm exceeds maxnorm are scaled by maxnorm / (norm + 1e-7).
 * maxnorm is set from the expected norm of a slice, and the slices are scaled by
 * different factors (input rule), so that some are renormalised and some are not. */
static int setup_renorm(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd);
	double p = kgb_case_pfloat(c, "p", 2), m = 1, maxnorm;
	kgb_tensor_t *x;

	x = kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, kgb_case_pstr(c, "layout", NULL), err,
	                    errlen);
	if (!x)
		return -1;
	kgb_aten_gen(x, KGB_GEN_UNIFORM, -1, 1);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	for (int d = 0; d < nd; d++)
		if (d != dim)
			m *= (double)dims[d];
	maxnorm = 0.8 * pow(m, 1 / p) * pow(p + 1, -1 / p);
	kgb_case_add_scalar(c, "p", KGB_DT_F32, p);
	kgb_case_add_scalar(c, "maxnorm", KGB_DT_F32, maxnorm);
	kgb_case_set_sym(c, "dim", dim);
	c->iparam[0] = dim;
	c->fparam[0] = c->s[0].value;
	c->fparam[1] = c->s[1].value;
	kgb_aten_finish(c, m, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static void gen_renorm(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	static const double f[4] = { 0.35, 0.7, 1.4, 2.8 };
	const kgb_tensor_t *x = &c->t[0];
	int dim = (int)c->iparam[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	(void)rng;
	do {
		b->v[0][kgb_tensor_offset(x, idx)] *= f[idx[dim] % 4];
	} while (kgb_index_next(x, idx));
}

static int ref_renorm(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *o = &c->t[1];
	int dim = (int)c->iparam[0];
	double p = c->fparam[0], maxnorm = c->fparam[1];
	int64_t n = x->shape[dim];
	double *acc = kgb_xcalloc((size_t)n, sizeof *acc);
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		acc[idx[dim]] += pow(fabs(b->v[0][kgb_tensor_offset(x, idx)]), p);
	} while (kgb_index_next(x, idx));
	for (int64_t i = 0; i < n; i++) {
		double norm = pow(acc[i], 1 / p);
		acc[i] = norm > maxnorm ? maxnorm / (norm + 1e-7) : 1;
	}
	memset(idx, 0, sizeof idx);
	do {
		b->v[1][kgb_tensor_offset(o, idx)] = b->v[0][kgb_tensor_offset(x, idx)] * acc[idx[dim]];
	} while (kgb_index_next(x, idx));
	free(acc);
	return 0;
}

static const kgb_op_t op_renorm = {
	.name = "renorm",
	.source = "aten",
	.category = "reduction",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = self with every slice along dim (self.select(dim, i)) whose p-norm exceeds maxnorm "
	           "scaled by maxnorm / (norm + 1e-7), other slices unchanged; slices are scaled by 0.35..2.8 "
	           "in turn and maxnorm is 0.8x the expected norm, so both branches occur",
	.signature = "self:in p:f32 dim:param maxnorm:f32 out:out",
	.grids = {
		{ { { "shape", "[2,7] [33,65] [64,4096] [1024,1024]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "p", "2 1 3" }, { "dim", "0 -1" } } },
		{ { { "shape", "[3,5,17] [2,3,4,5,6] [16,64,256]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "p", "2 1 3" }, { "dim", "0 -1 1" } } },
		{ { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "p", "2" },
		    { "dim", "0 -1" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_renorm,
	.ref = ref_renorm,
	.declared_cases = 144,
	.deviation = "maxnorm derived from the slice size so that both clipped and unclipped slices occur; "
	             "adds 5-d and non-contiguous inputs",
	.gen_inputs = gen_renorm,
};

const kgb_op_t *const kgb_ops_aten_reduction[] = {
	&def_amin.op, &def_argmax.op, &def_mean.op, &op_pairwise_distance, &op_renorm, NULL,
};
