/* ATen losses: binary_cross_entropy_with_logits, huber_loss, margin_ranking_loss and
 * soft_margin_loss, with reduction none (elementwise), mean and sum (0-d output).
 * Sums are only tested on shapes whose sum fits fp16. */
#include <math.h>
#include <string.h>
#include "aten_common.h"

enum { L_BCE, L_HUBER, L_MARGIN, L_SOFT };
enum { RED_NONE = 0, RED_MEAN, RED_SUM };

typedef kgb_aten_kind_def_t loss_def_t;

/* iparam: 0 reduction, 1 weight index, 2 pos_weight index, 3 third input (y of margin)
 * fparam: 0 delta / margin */
static int setup_loss(kgb_case_t *c, char *err, size_t errlen)
{
	const loss_def_t *d = KGB_ATEN_DEF(loss_def_t, c);
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *red = kgb_case_pstr(c, "reduction", "none");
	int64_t dims[KGB_MAX_DIMS], wd[1];
	int nd = kgb_aten_shape(c, "shape", dims);
	const char *layout = kgb_case_pstr(c, "layout", NULL);
	kgb_tensor_t *a, *b;
	int r = strcmp(red, "mean") == 0 ? RED_MEAN : strcmp(red, "sum") == 0 ? RED_SUM : RED_NONE;

	c->iparam[1] = c->iparam[2] = c->iparam[3] = -1;
	c->iparam[0] = r;
	a = kgb_aten_tensor(c, d->kind == L_MARGIN ? "input1" : "self", KGB_ROLE_IN, dt, nd, dims, layout,
	                    err, errlen);
	if (!a)
		return -1;
	b = kgb_aten_tensor(c, d->kind == L_MARGIN ? "input2" : "target", KGB_ROLE_IN, dt, nd, dims, layout,
	                    err, errlen);
	if (!b)
		return -1;
	switch (d->kind) {
	case L_BCE:
		kgb_aten_gen(a, KGB_GEN_UNIFORM, -6, 6);
		kgb_aten_gen(b, KGB_GEN_UNIFORM, 0, 1);
		/* weight and pos_weight broadcast along the last dim; a 0-d self takes 0-d ones
		 * (a [1] weight would broadcast the loss to [1], which PyTorch rejects) */
		wd[0] = nd ? dims[nd - 1] : 1;
		if (kgb_case_pint(c, "weight", 0)) {
			kgb_aten_gen(kgb_case_add_tensor(c, "weight", KGB_ROLE_IN, dt, nd ? 1 : 0, wd), KGB_GEN_UNIFORM, 0.2, 2);
			c->iparam[1] = c->ntensors - 1;
		}
		if (kgb_case_pint(c, "pos_weight", 0)) {
			kgb_aten_gen(kgb_case_add_tensor(c, "pos_weight", KGB_ROLE_IN, dt, nd ? 1 : 0, wd), KGB_GEN_UNIFORM, 0.5, 3);
			c->iparam[2] = c->ntensors - 1;
		}
		break;
	case L_HUBER:
		c->fparam[0] = kgb_case_add_scalar(c, "delta", KGB_DT_F32, kgb_case_pfloat(c, "delta", 1))->value;
		break;
	case L_MARGIN:
		kgb_aten_gen(kgb_case_add_tensor(c, "target", KGB_ROLE_IN, dt, nd, dims), KGB_GEN_BOOL, 0.5, 0);
		c->iparam[3] = c->ntensors - 1;
		c->fparam[0] = kgb_case_add_scalar(c, "margin", KGB_DT_F32, kgb_case_pfloat(c, "margin", 0))->value;
		break;
	case L_SOFT:
		kgb_aten_gen(b, KGB_GEN_BOOL, 0.5, 0);
		break;
	}
	if (r == RED_NONE)
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	else
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 0, dims);
	kgb_case_set_sym(c, "reduction", r);
	kgb_aten_finish(c, r == RED_NONE ? 1 : (double)kgb_aten_numel(nd, dims), KGB_ATEN_TIMED_NUMEL);
	/* ATen's composite rounds (1 - t), (1 - t) x, log_sigmoid(x), the pos_weight
	 * factor (three steps), their product, the difference and the weight product to
	 * the dtype: eight roundings on terms as large as the largest loss, and the
	 * difference cancels where t is small and x negative */
	if (d->kind == L_BCE)
		kgb_aten_half_intermediates(c, 8);
	/* huber in fp16/bf16: CUDA's kernel does its arithmetic in the dtype, rounding
	 * |self - target|, z - delta/2 and delta * (z - delta/2) (on the H200, 4 of 162
	 * cases two fp16 steps off) */
	if (d->kind == L_HUBER)
		kgb_aten_half_intermediates(c, 3);
	return 0;
}

/* Targets of margin_ranking_loss and soft_margin_loss are -1 or 1. */
static void gen_loss(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const loss_def_t *d = KGB_ATEN_DEF(loss_def_t, c);
	int ti = d->kind == L_MARGIN ? (int)c->iparam[3] : d->kind == L_SOFT ? 1 : -1;
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	(void)rng;
	if (ti < 0)
		return;
	do {
		size_t off = kgb_tensor_offset(&c->t[ti], idx);
		b->v[ti][off] = b->v[ti][off] != 0 ? 1 : -1;
	} while (kgb_index_next(&c->t[ti], idx));
}

static int ref_loss(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const loss_def_t *d = KGB_ATEN_DEF(loss_def_t, c);
	const kgb_tensor_t *x = &c->t[0], *y = &c->t[1], *o = &c->t[c->ntensors - 1];
	int iw = (int)c->iparam[1], ipw = (int)c->iparam[2], i3 = (int)c->iparam[3];
	int r = (int)c->iparam[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double acc = 0, p = c->fparam[0];

	do {
		double a = b->v[0][kgb_tensor_offset(x, idx)], t = b->v[1][kgb_tensor_offset(y, idx)], l = 0;
		int64_t last = x->ndim ? idx[x->ndim - 1] : 0;
		switch (d->kind) {
		case L_BCE: {
			double w = iw >= 0 ? b->v[iw][c->t[iw].ndim ? (size_t)(last * c->t[iw].stride[0]) : 0] : 1;
			double pw = ipw >= 0 ? b->v[ipw][c->t[ipw].ndim ? (size_t)(last * c->t[ipw].stride[0]) : 0] : 1;
			/* -w [pw t log s(a) + (1 - t) log(1 - s(a))], log s(a) = -softplus(-a) */
			l = w * (pw * t * kgb_aten_softplus(-a) + (1 - t) * kgb_aten_softplus(a));
			break;
		}
		case L_HUBER: {
			double e = fabs(a - t);
			l = e < p ? 0.5 * e * e : p * (e - 0.5 * p);
			break;
		}
		case L_MARGIN: {
			double yy = b->v[i3][kgb_tensor_offset(&c->t[i3], idx)];
			l = fmax(0, -yy * (a - t) + p);
			break;
		}
		case L_SOFT:
			l = kgb_aten_softplus(-t * a);
			break;
		}
		if (r == RED_NONE)
			b->v[c->ntensors - 1][kgb_tensor_offset(o, idx)] = l;
		else
			acc += l;
	} while (kgb_index_next(x, idx));
	if (r != RED_NONE)
		b->v[c->ntensors - 1][0] = r == RED_MEAN ? acc / (double)x->numel : acc;
	return 0;
}

#define L_BIG "[7] [1000] [33,65] [3,5,17] [2,3,4,5,6] [256,1024] [1024,1024]"
#define L_SMALL "[] [7] [33,65] [2,3,4,5,6]"

#define LOSS(NAME, KIND, SIG, DECL, SUMMARY, DEV, ...)                                                                    \
	static const loss_def_t def_##NAME = {                                                                            \
		.op = {                                                                                                   \
			KGB_ATEN_OP(#NAME, "loss", KGB_ATEN_FLOAT_DTYPES, SIG, setup_loss, ref_loss, DECL, SUMMARY, DEV), \
			.grids = { __VA_ARGS__ },                                                                         \
			.gen_inputs = gen_loss,                                                                           \
			.optional = (KIND) == L_BCE ? "weight pos_weight" : NULL,                                         \
		},                                                                                                        \
		.kind = KIND,                                                                                             \
	}

#define RED_TEXT "; reduction none (elementwise), mean or sum (0-d)"
#define RED_DEV "reduction 'sum' only on shapes whose sum fits fp16; adds 0-d, 5-d and non-contiguous inputs"

LOSS(binary_cross_entropy_with_logits, L_BCE,
     "self:in target:in weight:in? pos_weight:in? out:out reduction:param", 216,
     "l = weight * (pos_weight * t * softplus(-x) + (1 - t) * softplus(x)) (= -w [pw t log s(x) + "
     "(1-t) log(1 - s(x))], computed stably); x from [-6, 6), t from [0, 1), weight and pos_weight "
     "optional, broadcast along the last dim" RED_TEXT,
     RED_DEV,
     { { { "overload", "default" }, { "shape", L_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none mean" },
         { "weight", "0 1" }, { "pos_weight", "0 1" } } },
     { { { "overload", "default" }, { "shape", L_SMALL }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "sum" },
         { "weight", "0 1" }, { "pos_weight", "0 1" } } },
     { { { "overload", "default" }, { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none" },
         { "weight", "1" }, { "pos_weight", "1" }, { "layout", "transposed strided" } } });
LOSS(huber_loss, L_HUBER, "self:in target:in delta:f32 out:out reduction:param", 162,
     "l = 0.5 (x - t)^2 where |x - t| < delta, else delta (|x - t| - delta / 2)" RED_TEXT,
     RED_DEV,
     { { { "shape", L_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none mean" },
         { "delta", "1 0.5 2.5" } } },
     { { { "shape", L_SMALL }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "sum" },
         { "delta", "1 0.5" } } },
     { { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none" },
         { "delta", "1" }, { "layout", "transposed strided" } } });
LOSS(margin_ranking_loss, L_MARGIN, "input1:in input2:in target:in margin:f32 out:out reduction:param", 81,
     "l = max(0, -y (x1 - x2) + margin), y in {-1, 1}" RED_TEXT, RED_DEV,
     { { { "shape", L_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none mean" },
         { "margin", "0 0.5 -0.25" } } },
     { { { "shape", L_SMALL }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "sum" },
         { "margin", "0.5" } } });
LOSS(soft_margin_loss, L_SOFT, "self:in target:in out:out reduction:param", 54,
     "l = log(1 + exp(-y x)), y in {-1, 1}" RED_TEXT, RED_DEV,
     { { { "shape", L_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none mean" } } },
     { { { "shape", L_SMALL }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "sum" } } },
     { { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "reduction", "none" },
         { "layout", "transposed strided" } } });

const kgb_op_t *const kgb_ops_aten_loss[] = {
	&def_binary_cross_entropy_with_logits.op, &def_huber_loss.op, &def_margin_ranking_loss.op,
	&def_soft_margin_loss.op, NULL,
};
