/* ATen backward operators: gradients of activations (log_sigmoid, mish, softplus,
 * rrelu_with_noise), of smooth_l1_loss, and the scatter-shaped backwards of select,
 * reflection_pad1d and upsample_nearest2d. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

enum { B_LOGSIG, B_MISH, B_SOFTPLUS, B_RRELU };

typedef kgb_aten_kind_def_t bw_def_t;

/* grad_output, self (, noise) -> grad_input, all of one shape. */
static int setup_act_bw(kgb_case_t *c, char *err, size_t errlen)
{
	const bw_def_t *d = KGB_ATEN_DEF(bw_def_t, c);
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	const char *layout = kgb_case_pstr(c, "layout", NULL);
	kgb_tensor_t *x;

	if (!kgb_aten_tensor(c, "grad_output", KGB_ROLE_IN, dt, nd, dims, layout, err, errlen))
		return -1;
	x = kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, layout, err, errlen);
	if (!x)
		return -1;
	kgb_aten_gen(x, KGB_GEN_UNIFORM, -6, 6);
	if (d->kind == B_SOFTPLUS) {
		c->fparam[0] = kgb_case_add_scalar(c, "beta", KGB_DT_F32, kgb_case_pfloat(c, "beta", 1))->value;
		c->fparam[1] = kgb_case_add_scalar(c, "threshold", KGB_DT_F32, kgb_case_pfloat(c, "threshold", 20))->value;
		/* inputs cross the threshold when beta * x can exceed it */
		kgb_aten_gen(x, KGB_GEN_UNIFORM, -6, KGB_MAX(6, 1.5 * c->fparam[1] / c->fparam[0]));
	}
	if (d->kind == B_RRELU) {
		kgb_case_add_tensor(c, "noise", KGB_ROLE_IN, dt, nd, dims);
		c->fparam[0] = kgb_case_add_scalar(c, "lower", KGB_DT_F32, 0.125)->value;
		c->fparam[1] = kgb_case_add_scalar(c, "upper", KGB_DT_F32, 1.0 / 3)->value;
		c->iparam[0] = kgb_case_pint(c, "training", 1);
		kgb_case_add_scalar(c, "training", KGB_DT_I64, (double)c->iparam[0]);
		kgb_case_add_scalar(c, "self_is_result", KGB_DT_I64, 0);
	}
	kgb_case_add_tensor(c, "grad_input", KGB_ROLE_OUT, dt, nd, dims);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

/* rrelu noise as the forward pass leaves it: 1 where self >= 0, U[lower, upper) else. */
static void gen_act_bw(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const bw_def_t *d = KGB_ATEN_DEF(bw_def_t, c);
	const kgb_tensor_t *x = &c->t[1], *n = &c->t[2];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	if (d->kind != B_RRELU)
		return;
	do {
		double v = b->v[1][kgb_tensor_offset(x, idx)];
		b->v[2][kgb_tensor_offset(n, idx)] =
			v >= 0 ? 1 : c->fparam[0] + (c->fparam[1] - c->fparam[0]) * kgb_rng_uniform(rng);
	} while (kgb_index_next(x, idx));
}

static int ref_act_bw(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const bw_def_t *d = KGB_ATEN_DEF(bw_def_t, c);
	int oi = c->ntensors - 1;
	const kgb_tensor_t *o = &c->t[oi];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		double g = b->v[0][kgb_tensor_offset(&c->t[0], idx)];
		double x = b->v[1][kgb_tensor_offset(&c->t[1], idx)], r = 0;
		switch (d->kind) {
		case B_LOGSIG:
			r = g * kgb_aten_sigmoid(-x);
			break;
		case B_MISH: {
			double t = tanh(kgb_aten_softplus(x));
			r = g * (t + x * kgb_aten_sigmoid(x) * (1 - t * t));
			break;
		}
		case B_SOFTPLUS: {
			double bx = x * c->fparam[0];
			r = bx > c->fparam[1] ? g : g * kgb_aten_sigmoid(bx);
			break;
		}
		case B_RRELU:
			if (c->iparam[0] && c->fparam[1] - c->fparam[0] > 1e-6)
				r = g * b->v[2][kgb_tensor_offset(&c->t[2], idx)];
			else
				r = x > 0 ? g : g * (c->fparam[0] + c->fparam[1]) / 2;
			break;
		}
		b->v[oi][kgb_tensor_offset(o, idx)] = r;
	} while (kgb_index_next(o, idx));
	return 0;
}

#define BW_SHAPES "[] [7] [1000] [33,65] [2,3,4,5,6] [1024,1024]"

#define ACT_BW(NAME, KIND, SIG, DECL, SUMMARY, DEV, ...)                                                           \
	static const bw_def_t def_##NAME = {                                                                       \
		.op = {                                                                                            \
			KGB_ATEN_OP(#NAME, "backward", KGB_ATEN_FLOAT_DTYPES, SIG, setup_act_bw, ref_act_bw, DECL, \
			            SUMMARY, DEV),                                                                 \
			.grids = { __VA_ARGS__ },                                                                  \
			.gen_inputs = gen_act_bw,                                                                  \
		},                                                                                                 \
		.kind = KIND,                                                                                      \
	}

ACT_BW(log_sigmoid_backward, B_LOGSIG, "grad_output:in self:in grad_input:out", 18,
       "grad_input = grad_output * sigmoid(-self) (the derivative of log(sigmoid(x))); self from [-6, 6)",
       "the forward's `buffer` argument is not passed (the CUDA kernel ignores it too); adds 0-d, 5-d and "
       "non-contiguous inputs",
       { { { "shape", BW_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES } } },
       { { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "layout", "transposed strided" } } });
ACT_BW(mish_backward, B_MISH, "grad_output:in self:in grad_input:out", 9,
       "grad_input = grad_output * (t + self * sigmoid(self) * (1 - t^2)), t = tanh(softplus(self))",
       "adds 0-d, 5-d and non-contiguous inputs",
       { { { "shape", BW_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES } } },
       { { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "layout", "transposed strided" } } });
ACT_BW(softplus_backward, B_SOFTPLUS, "grad_output:in self:in beta:f32 threshold:f32 grad_input:out", 108,
       "grad_input = grad_output where beta * self > threshold, else grad_output * sigmoid(beta * self); "
       "inputs reach past the threshold",
       "beta {1, 0.5, 2} x threshold {20, 1} on kgb's shapes",
       { { { "shape", BW_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "beta", "1 0.5 2" },
           { "threshold", "20 1" } } });
ACT_BW(rrelu_with_noise_backward, B_RRELU,
       "grad_output:in self:in noise:in lower:f32 upper:f32 training:i64 self_is_result:i64 grad_input:out", 36,
       "training (upper - lower > 1e-6): grad_input = grad_output * noise (noise as the forward left it: 1 "
       "for self >= 0, in [lower, upper) below); eval: grad_output where self > 0, else grad_output * "
       "(lower + upper) / 2; lower = 1/8, upper = 1/3",
       "both training and eval modes on kgb's shapes",
       { { { "shape", BW_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "training", "1 0" } } });

/* ---- smooth_l1_loss_backward ---- */

static int setup_sl1_bw(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *red = kgb_case_pstr(c, "reduction", "none");
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int r = strcmp(red, "mean") == 0 ? 1 : strcmp(red, "sum") == 0 ? 2 : 0;

	(void)err, (void)errlen;
	kgb_case_add_tensor(c, "grad_output", KGB_ROLE_IN, dt, r ? 0 : nd, dims);
	kgb_aten_gen(kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims), KGB_GEN_UNIFORM, -1.5, 1.5);
	kgb_aten_gen(kgb_case_add_tensor(c, "target", KGB_ROLE_IN, dt, nd, dims), KGB_GEN_UNIFORM, -1.5, 1.5);
	kgb_case_add_tensor(c, "grad_input", KGB_ROLE_OUT, dt, nd, dims);
	c->fparam[0] = kgb_case_add_scalar(c, "beta", KGB_DT_F32, kgb_case_pfloat(c, "beta", 1))->value;
	kgb_case_add_scalar(c, "reduction", KGB_DT_I64, r);
	c->iparam[0] = r;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	/* CUDA's kernel does its arithmetic in fp16/bf16: 1/numel, self - target, norm * x,
	 * times grad_output, over beta, each rounded. Where the mean over a million
	 * elements lands in fp16's subnormals, the rounding of norm * x is then multiplied
	 * by grad_output / beta (up to 3): on the H200 up to three subnormal steps off.
	 * Eight roundings: four steps. */
	kgb_aten_half_intermediates(c, 8);
	return 0;
}

static int ref_sl1_bw(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *g = &c->t[0], *x = &c->t[1], *t = &c->t[2], *o = &c->t[3];
	double beta = c->fparam[0], n = c->iparam[0] == 1 ? (double)x->numel : 1;
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		double gv = b->v[0][c->iparam[0] ? 0 : kgb_tensor_offset(g, idx)];
		double dd = b->v[1][kgb_tensor_offset(x, idx)] - b->v[2][kgb_tensor_offset(t, idx)];
		double dl = fabs(dd) < beta ? dd / beta : (dd > 0 ? 1 : dd < 0 ? -1 : 0);
		b->v[3][kgb_tensor_offset(o, idx)] = gv * dl / n;
	} while (kgb_index_next(o, idx));
	return 0;
}

static const kgb_op_t op_smooth_l1_loss_backward = {
	.name = "smooth_l1_loss_backward",
	.source = "aten",
	.category = "backward",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "grad_input = grad_output * ((x - t) / beta where |x - t| < beta, else sign(x - t)), divided "
	           "by numel for reduction mean; grad_output is elementwise for reduction none, 0-d otherwise",
	.signature = "grad_output:in self:in target:in reduction:i64 beta:f32 grad_input:out",
	.grids = {
		{ { { "shape", "[] [7] [1000] [33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "reduction", "none mean sum" }, { "beta", "1 0.5 2" } } },
	},
	.setup = setup_sl1_bw,
	.ref = ref_sl1_bw,
	.declared_cases = 162,
	.deviation = "same size as the public grid (shapes x reductions x beta x dtypes) on kgb's shape list",
};

/* ---- select_backward ---- */

static int setup_select_bw(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], gd[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd);
	int64_t index = kgb_case_pint(c, "index", 0), w = index < 0 ? index + dims[dim] : index;

	if (w < 0 || w >= dims[dim])
		return kgb_err(err, errlen, "op select_backward: index %lld out of range", (long long)index);
	for (int d = 0, k = 0; d < nd; d++)
		if (d != dim)
			gd[k++] = dims[d];
	kgb_case_add_tensor(c, "grad_output", KGB_ROLE_IN, dt, nd - 1, gd);
	kgb_case_add_tensor(c, "grad_input", KGB_ROLE_OUT, dt, nd, dims);
	kgb_case_add_scalar(c, "dim", KGB_DT_I64, dim);
	kgb_case_add_scalar(c, "index", KGB_DT_I64, (double)index);
	c->iparam[0] = dim;
	c->iparam[1] = w;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_select_bw(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *g = &c->t[0], *o = &c->t[1];
	int dim = (int)c->iparam[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, gi[KGB_MAX_DIMS];

	do {
		double v = 0;
		if (idx[dim] == c->iparam[1]) {
			for (int d = 0, k = 0; d < o->ndim; d++)
				if (d != dim)
					gi[k++] = idx[d];
			v = b->v[0][kgb_tensor_offset(g, gi)];
		}
		b->v[1][kgb_tensor_offset(o, idx)] = v;
	} while (kgb_index_next(o, idx));
	return 0;
}

static const kgb_op_t op_select_backward = {
	.name = "select_backward",
	.source = "aten",
	.category = "backward",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "grad_input (input_sizes) = zeros except grad_input.select(dim, index) = grad_output "
	           "(every element written; negative index counts from the end)",
	.signature = "grad_output:in input_sizes:param dim:i64 index:i64 grad_input:out",
	.grids = {
		{ { { "shape", "[7,3] [33,65] [3,5,17] [2,3,4,5,6] [1024,1024] [64,128,64]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0 -1 1" }, { "index", "0 -1" } } },
	},
	.setup = setup_select_bw,
	.ref = ref_select_bw,
	.declared_cases = 108,
	.deviation = "same grid size as the public test (shapes x dims x indices x dtypes) on kgb's shapes",
};

/* ---- reflection_pad1d_backward ---- */

static int setup_rpad_bw(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], gd[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int64_t pl = kgb_case_pint(c, "pad_left", 1), pr = kgb_case_pint(c, "pad_right", 1);
	int64_t w = dims[nd - 1];

	if (pl >= w || pr >= w)
		return kgb_err(err, errlen, "op reflection_pad1d_backward: padding (%lld, %lld) must be below width %lld",
		               (long long)pl, (long long)pr, (long long)w);
	memcpy(gd, dims, sizeof gd);
	gd[nd - 1] = w + pl + pr;
	kgb_case_add_tensor(c, "grad_output", KGB_ROLE_IN, dt, nd, gd);
	kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims);
	kgb_case_add_tensor(c, "grad_input", KGB_ROLE_OUT, dt, nd, dims);
	kgb_case_set_sym(c, "pad_left", pl);
	kgb_case_set_sym(c, "pad_right", pr);
	c->iparam[0] = pl;
	kgb_aten_finish(c, 3, KGB_ATEN_TIMED_NUMEL / 2);
	return 0;
}

static int ref_rpad_bw(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *g = &c->t[0], *o = &c->t[2];
	int nd = o->ndim;
	int64_t w = o->shape[nd - 1], pl = c->iparam[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		b->v[2][kgb_tensor_offset(o, idx)] = 0;
	} while (kgb_index_next(o, idx));
	memset(idx, 0, sizeof idx);
	do {
		int64_t j = idx[nd - 1], s = j - pl, oi[KGB_MAX_DIMS];
		if (s < 0)
			s = -s;
		else if (s >= w)
			s = 2 * (w - 1) - s;
		memcpy(oi, idx, sizeof oi);
		oi[nd - 1] = s;
		b->v[2][kgb_tensor_offset(o, oi)] += b->v[0][kgb_tensor_offset(g, idx)];
	} while (kgb_index_next(g, idx));
	return 0;
}

static const kgb_op_t op_reflection_pad1d_backward = {
	.name = "reflection_pad1d_backward",
	.source = "aten",
	.category = "backward",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "grad_input[.., w] = sum of grad_output[.., j] over the padded positions j that reflect "
	           "onto w (j - pad_left, reflected at both edges without repeating the edge); [N,C,W] and [C,W]",
	.signature = "grad_output:in self:in padding:param grad_input:out",
	.grids = {
		{ { { "shape", "[3,8] [2,3,8] [4,16,100] [8,64,1024] [1,1,7]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "pad_left", "1 3 0" }, { "pad_right", "1 5" } } },
	},
	.setup = setup_rpad_bw,
	.ref = ref_rpad_bw,
	.declared_cases = 54,
	.deviation = "asymmetric paddings (including 0 on one side) on batched and unbatched inputs",
};

/* ---- upsample_nearest2d_backward ---- */

static int setup_up_bw(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t in[KGB_MAX_DIMS], osz[KGB_MAX_DIMS], gd[4];
	int nd = kgb_aten_shape(c, "input_size", in), ond = kgb_aten_shape(c, "output_size", osz);

	if (nd != 4 || ond != 2)
		return kgb_err(err, errlen, "op upsample_nearest2d_backward: input_size must be 4-d, output_size 2-d");
	gd[0] = in[0];
	gd[1] = in[1];
	gd[2] = osz[0];
	gd[3] = osz[1];
	kgb_case_add_tensor(c, "grad_output", KGB_ROLE_IN, dt, 4, gd);
	kgb_case_add_tensor(c, "grad_input", KGB_ROLE_OUT, dt, 4, in);
	kgb_aten_finish(c, (double)((osz[0] + in[2] - 1) / in[2] * ((osz[1] + in[3] - 1) / in[3])),
	                KGB_ATEN_TIMED_NUMEL / 2);
	return 0;
}

static int ref_up_bw(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *g = &c->t[0], *o = &c->t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, oi[4];
	double sh = (double)o->shape[2] / (double)g->shape[2], sw = (double)o->shape[3] / (double)g->shape[3];

	do {
		b->v[1][kgb_tensor_offset(o, idx)] = 0;
	} while (kgb_index_next(o, idx));
	memset(idx, 0, sizeof idx);
	do {
		/* nearest: src = min(floor(dst * in / out), in - 1), scale as fp32 like ATen */
		int64_t h = (int64_t)floorf((float)idx[2] * (float)sh), w = (int64_t)floorf((float)idx[3] * (float)sw);
		oi[0] = idx[0];
		oi[1] = idx[1];
		oi[2] = KGB_MIN(h, o->shape[2] - 1);
		oi[3] = KGB_MIN(w, o->shape[3] - 1);
		b->v[1][kgb_tensor_offset(o, oi)] += b->v[0][kgb_tensor_offset(g, idx)];
	} while (kgb_index_next(g, idx));
	return 0;
}

static const kgb_op_t op_upsample_nearest2d_backward = {
	.name = "upsample_nearest2d_backward",
	.source = "aten",
	.category = "backward",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "grad_input[n, c, h, w] = sum of grad_output[n, c, oh, ow] over the output pixels whose "
	           "nearest source is (h, w): src = min(floor(dst * (in / out)), in - 1) with the scale in fp32 "
	           "(no explicit scales); integer and fractional up- and down-sampling",
	.signature = "grad_output:in output_size:param input_size:param grad_input:out",
	.grids = {
		{ { { "input_size", "[1,1,4,4] [2,3,7,9] [4,16,32,32] [8,32,64,64]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "output_size", "[8,8] [13,20] [5,3]" } } },
	},
	.setup = setup_up_bw,
	.ref = ref_up_bw,
	.declared_cases = 36,
	.deviation = "fractional scales and downsampling added to the integer upsampling of the public test",
};

const kgb_op_t *const kgb_ops_aten_backward[] = {
	&def_log_sigmoid_backward.op, &def_mish_backward.op, &op_reflection_pad1d_backward,
	&def_rrelu_with_noise_backward.op, &op_select_backward, &op_smooth_l1_loss_backward,
	&def_softplus_backward.op, &op_upsample_nearest2d_backward, NULL,
};
