/* vLLM quantisation formats: fp8 and int8 quantisers, fp8 conversion, the fused
 * RMS-norm quantisers and permute_cols (docs/formats-fp8-int8.md).
 *
 * The references follow the fp32 arithmetic of vLLM 0.13's CUDA kernels step by step
 * (which value is rounded to float, to the input dtype, where a reciprocal is taken);
 * the checks judge quantised codes with the interval rule of vllm_quant_common.h, so a
 * kernel that orders its fp32 work differently is not failed at a rounding tie while a
 * wrong rounding mode, scale or saturation is. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "util.h"
#include "validate.h"
#include "vllm_quant_common.h"

#define F8_MAX KGB_F8E4M3_MAX
/* min_scaling_factor of the fp8 quantisers: 1 / (448 * 512) in fp32 */
#define F8_MIN_SCALE ((double)(1.0f / (448.0f * 512.0f)))
/* the int8 quantisers' floor: fp32 epsilon */
#define I8_MIN_SCALE 0x1p-23

/* The end of a quantiser's setup: symbols tokens and hidden, one reduction over a row,
 * the codes judged by the op's check (no tolerance), the large shapes timed. */
static void quant_finish(kgb_case_t *c, int64_t T, int64_t H)
{
	KGB_SYMS(c, "tokens hidden", T, H);
	c->reduce_len = (double)H;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = T * H >= (1 << 19);
}

/* [tokens, hidden] from the shape parameter "shape" (2-d). */
static int shape2(const kgb_case_t *c, int64_t *tokens, int64_t *hidden, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "shape");
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 2) {
		kgb_err(err, errlen, "op %s case %u: parameter shape must be [tokens, hidden]", c->op->name,
		        c->index);
		return -1;
	}
	*tokens = p->dims[0];
	*hidden = p->dims[1];
	return 0;
}

static double absmax(const double *v, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(v[i]));
	return m;
}

/* Per-element interval of x / s widened by d. */
static void div_interval(double x, double s, double d, double *lo, double *hi)
{
	double p = x / s;
	*lo = p - d * fabs(p);
	*hi = p + d * fabs(p);
}

/* ======================================================================
 * scaled_fp8_quant
 * ====================================================================== */

static int fp8q_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t T, H, sh[2], one = 1, col[2];
	kgb_dtype_t dt = kgb_vq_pdtype(c, "dtype", KGB_DT_F32);
	kgb_tensor_t *s;
	if (shape2(c, &T, &H, err, errlen))
		return -1;
	sh[0] = T;
	sh[1] = H;
	col[0] = T;
	col[1] = 1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_F8E4M3, 2, sh);
	kgb_case_add_tensor(c, "input", KGB_ROLE_IN, dt, 2, sh);
	if (kgb_vq_pis(c, "mode", "static")) {
		s = kgb_case_add_tensor(c, "scale", KGB_ROLE_IN, KGB_DT_F32, 1, &one);
		s->gen = KGB_GEN_UNIFORM; /* replaced by fp8q_gen */
	} else if (kgb_vq_pis(c, "mode", "dynamic")) {
		kgb_case_add_tensor(c, "scale", KGB_ROLE_OUT, KGB_DT_F32, 1, &one);
	} else {
		kgb_case_add_tensor(c, "scale", KGB_ROLE_OUT, KGB_DT_F32, 2, col);
		if (kgb_vq_pis(c, "mode", "per_token_ub"))
			kgb_case_add_tensor(c, "scale_ub", KGB_ROLE_IN, KGB_DT_F32, 1, &one);
	}
	quant_finish(c, T, H);
	return 0;
}

/* static: a scale that puts about a tenth of the values past 448 (saturation);
 * per_token_ub: an upper bound below most tokens' absmax. */
static void fp8q_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input");
	double *xv = kgb_vq_v(c, b, "input"), m = absmax(xv, x->numel);
	double *sv = kgb_vq_v(c, b, "scale"), *ub = kgb_vq_v(c, b, "scale_ub");
	(void)rng;
	if (kgb_vq_pis(c, "mode", "static"))
		sv[0] = m / 512.0;
	if (ub)
		ub[0] = 0.7 * m;
}

static int fp8q_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input");
	size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1];
	double *xv = kgb_vq_v(c, b, "input"), *ov = kgb_vq_v(c, b, "out"), *sv = kgb_vq_v(c, b, "scale");
	double *ub = kgb_vq_v(c, b, "scale_ub");
	if (kgb_vq_pis(c, "mode", "static") || kgb_vq_pis(c, "mode", "dynamic")) {
		double s = sv[0], inv;
		if (kgb_vq_pis(c, "mode", "dynamic"))
			s = sv[0] = kgb_vq_f32(absmax(xv, x->numel) / F8_MAX);
		inv = kgb_vq_f32(1.0 / s);
		for (size_t i = 0; i < T * H; i++)
			ov[i] = kgb_vq_quant(KGB_DT_F8E4M3, kgb_vq_f32(xv[i] * inv), 0);
		return 0;
	}
	for (size_t t = 0; t < T; t++) {
		double m = absmax(xv + t * H, H), s;
		if (ub)
			m = fmin(m, ub[0]);
		s = fmax(kgb_vq_f32(m / F8_MAX), F8_MIN_SCALE);
		sv[t] = s;
		for (size_t j = 0; j < H; j++)
			ov[t * H + j] = kgb_vq_quant(KGB_DT_F8E4M3, kgb_vq_f32(xv[t * H + j] / s), 0);
	}
	return 0;
}

static int fp8q_check(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                      double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input"), *o = kgb_vq_t(c, "out"), *st = kgb_vq_t(c, "scale");
	size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1];
	const double *xv = kgb_vq_v(c, in, "input"), *rs = kgb_vq_v(c, in, "scale");
	const double *gs = kgb_vq_v(c, out, "scale"), *go = kgb_vq_v(c, out, "out");
	bool per_token = st->numel == T && st->ndim == 2;
	kgb_vq_judge_t j;
	kgb_vq_judge_init(&j, msg, msglen);
	if (st->role == KGB_ROLE_OUT)
		for (size_t i = 0; i < st->numel; i++)
			kgb_vq_close(&j, st, i, gs[i], rs[i], 0x1p-22);
	for (size_t t = 0; t < T && j.verdict == KGB_V_PASS; t++) {
		double s = per_token ? gs[t] : gs[0];
		for (size_t k = 0; k < H; k++) {
			double lo, hi;
			div_interval(xv[t * H + k], s, KGB_VQ_DELTA_F32, &lo, &hi);
			kgb_vq_elem(&j, o, t * H + k, go[t * H + k], lo, hi, 0);
		}
	}
	return kgb_vq_judge_done(&j, max_abs, max_rel);
}

#define QSHAPES "[1,17] [1,1024] [7,1025] [7,1026] [7,5137] [7,8193] [64,1024] [128,8193]"

static const kgb_op_t op_scaled_fp8_quant = {
	.name = "scaled_fp8_quant",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "bf16 f16 f32 -> f8e4m3",
	.datasets = KGB_DS_VLLM,
	.summary = "fp8 e4m3fn quantisation of input [tokens, hidden]. mode static: out = fp8(clamp(input * "
	           "(1/scale[0]), +-448)) with scale an input [1]; dynamic: scale[0] = max|input| / 448 "
	           "(output), then as static; per_token(_ub): scale[t, 0] = max(min(max|input[t]|, "
	           "scale_ub[0]) / 448, 1/(448*512)), out = fp8(clamp(input / scale[t, 0])). fp8 rounds "
	           "to nearest even; codes are judged by the tie-interval rule",
	.signature = "out:out(f8e4m3) input:in scale:in|out(f32) scale_ub:in(f32, per_token_ub)",
	.grids = {
		{ .params = { { "mode", "static dynamic per_token" }, { "dtype", "f32 bf16" },
		              { "shape", "[1,17] [7,1025]" } } },
		{ .params = { { "mode", "static dynamic per_token per_token_ub" }, { "dtype", "bf16 f16 f32" },
		              { "shape", QSHAPES } } },
	},
	.setup = fp8q_setup,
	.ref = fp8q_ref,
	.check = fp8q_check,
	.gen_inputs = fp8q_gen,
	.declared_cases = 540,
	.deviation = "4 modes (static, dynamic per-tensor, dynamic per-token, per-token with scale_ub) x "
	             "bf16/f16/f32 x 8 shapes from the public hidden sizes; 4096 tokens cut to 64 and 128 and the "
	             "public grid's group shapes left out (vLLM 0.13's op has no group_shape)",
	.smoke_grids = 1,
};

/* ======================================================================
 * scaled_int8_quant
 * ====================================================================== */

static int i8q_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t T, H, sh[2], one = 1, col[2];
	kgb_dtype_t dt = kgb_vq_pdtype(c, "dtype", KGB_DT_F32);
	bool st = kgb_vq_pis(c, "mode", "static") || kgb_vq_pis(c, "mode", "static_azp");
	bool azp = kgb_vq_pis(c, "mode", "static_azp") || kgb_vq_pis(c, "mode", "dynamic_azp");
	kgb_tensor_t *t;
	if (shape2(c, &T, &H, err, errlen))
		return -1;
	sh[0] = col[0] = T;
	sh[1] = H;
	col[1] = 1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_I8, 2, sh);
	kgb_case_add_tensor(c, "input", KGB_ROLE_IN, dt, 2, sh);
	if (st) {
		kgb_case_add_tensor(c, "scale", KGB_ROLE_IN, KGB_DT_F32, 1, &one);
		if (azp) {
			t = kgb_case_add_tensor(c, "azp", KGB_ROLE_IN, KGB_DT_I32, 1, &one);
			t->gen = KGB_GEN_INT;
			t->lo = -40;
			t->hi = 40;
		}
	} else {
		kgb_case_add_tensor(c, "scale", KGB_ROLE_OUT, KGB_DT_F32, 2, col);
		if (azp)
			kgb_case_add_tensor(c, "azp", KGB_ROLE_OUT, KGB_DT_I32, 2, col);
	}
	quant_finish(c, T, H);
	return 0;
}

/* static scales put some values past the int8 range (saturation) */
static void i8q_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input"), *s = kgb_vq_t(c, "scale");
	double *xv = kgb_vq_v(c, b, "input");
	(void)rng;
	if (s->role == KGB_ROLE_IN)
		kgb_vq_v(c, b, "scale")[0] = absmax(xv, x->numel) / 150.0;
}

/* The fp32 steps of the dynamic asymmetric quantiser for one row: scale, zero point. */
static void i8_azp_params(const double *row, size_t H, double *s, double *zp)
{
	double mn = row[0], mx = row[0];
	for (size_t j = 1; j < H; j++) {
		mn = fmin(mn, row[j]);
		mx = fmax(mx, row[j]);
	}
	*s = kgb_vq_f32(kgb_vq_f32(mx - mn) / 255.0);
	*zp = nearbyint(kgb_vq_f32(-128.0 - kgb_vq_f32(mn / *s)));
}

static int i8q_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input"), *st = kgb_vq_t(c, "scale");
	size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1];
	double *xv = kgb_vq_v(c, b, "input"), *ov = kgb_vq_v(c, b, "out"), *sv = kgb_vq_v(c, b, "scale");
	double *zv = kgb_vq_v(c, b, "azp");
	for (size_t t = 0; t < T; t++) {
		const double *row = xv + t * H;
		double s, inv, zp = 0;
		if (st->role == KGB_ROLE_IN) {
			s = sv[0];
			if (zv) {
				zp = zv[0];
				inv = kgb_vq_f32(1.0 / s);
				for (size_t j = 0; j < H; j++)
					ov[t * H + j] = kgb_vq_quant(KGB_DT_I8, kgb_vq_f32(row[j] * inv), zp);
			} else {
				for (size_t j = 0; j < H; j++)
					ov[t * H + j] = kgb_vq_quant(KGB_DT_I8, kgb_vq_f32(row[j] / s), 0);
			}
			continue;
		}
		if (zv) {
			i8_azp_params(row, H, &s, &zp);
			zv[t] = zp;
			inv = kgb_vq_f32(1.0 / s);
		} else {
			double m = absmax(row, H);
			s = kgb_vq_f32(m / 127.0);
			inv = m == 0 ? 0 : kgb_vq_f32(127.0 / m);
		}
		sv[t] = s;
		for (size_t j = 0; j < H; j++)
			ov[t * H + j] = kgb_vq_quant(KGB_DT_I8, kgb_vq_f32(row[j] * inv), zp);
	}
	return 0;
}

static int i8q_check(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                     double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input"), *o = kgb_vq_t(c, "out"), *st = kgb_vq_t(c, "scale");
	const kgb_tensor_t *zt = kgb_case_tensor(c, "azp");
	size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1];
	const double *xv = kgb_vq_v(c, in, "input"), *rs = kgb_vq_v(c, in, "scale");
	const double *gs = kgb_vq_v(c, out, "scale"), *gz = kgb_vq_v(c, out, "azp"), *go = kgb_vq_v(c, out, "out");
	bool dyn = st->role == KGB_ROLE_OUT;
	kgb_vq_judge_t j;
	kgb_vq_judge_init(&j, msg, msglen);
	if (dyn) {
		for (size_t t = 0; t < T; t++)
			kgb_vq_close(&j, st, t, gs[t], rs[t], 0x1p-22);
		/* the zero point: -128 - min / scale rounded half even, either neighbour at a tie */
		for (size_t t = 0; zt && t < T && j.verdict == KGB_V_PASS; t++) {
			double mn = xv[t * H], p;
			for (size_t k = 1; k < H; k++)
				mn = fmin(mn, xv[t * H + k]);
			p = -128.0 - mn / gs[t];
			kgb_vq_range(&j, zt, t, gz[t], nearbyint(p - 0x1p-16 * fabs(p)), nearbyint(p + 0x1p-16 * fabs(p)));
		}
	}
	for (size_t t = 0; t < T && j.verdict == KGB_V_PASS; t++) {
		double s = dyn ? gs[t] : gs[0], zp = zt ? (dyn ? gz[t] : gz[0]) : 0;
		for (size_t k = 0; k < H; k++) {
			double lo, hi;
			div_interval(xv[t * H + k], s, KGB_VQ_DELTA_F32, &lo, &hi);
			kgb_vq_elem(&j, o, t * H + k, go[t * H + k], lo, hi, zp);
		}
	}
	return kgb_vq_judge_done(&j, max_abs, max_rel);
}

static const kgb_op_t op_scaled_int8_quant = {
	.name = "scaled_int8_quant",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "bf16 f16 f32 -> i8",
	.datasets = KGB_DS_VLLM,
	.summary = "int8 quantisation of input [tokens, hidden]. static: out = sat8(rn(input / scale[0])); "
	           "static_azp: out = sat8(rn(input * (1/scale[0])) + azp[0]); dynamic: scale[t, 0] = "
	           "max|input[t]| / 127, out = sat8(rn(input * (127 / max|input[t]|))); dynamic_azp: "
	           "scale[t, 0] = (max - min) / 255, azp[t, 0] = rn(-128 - min / scale), out = sat8(rn(input "
	           "/ scale) + azp). rn = round half to even; codes judged by the tie-interval rule",
	.signature = "out:out(i8) input:in scale:in|out(f32) azp:in|out(i32, *_azp modes)",
	.grids = {
		{ .params = { { "mode", "static static_azp dynamic dynamic_azp" }, { "dtype", "f32 bf16" },
		              { "shape", "[1,17] [7,1025]" } } },
		{ .params = { { "mode", "static static_azp dynamic dynamic_azp" }, { "dtype", "bf16 f16 f32" },
		              { "shape", QSHAPES } } },
	},
	.setup = i8q_setup,
	.ref = i8q_ref,
	.check = i8q_check,
	.gen_inputs = i8q_gen,
	.declared_cases = 120,
	.deviation = "4 modes x bf16/f16/f32 x 8 shapes from the public hidden sizes (4096 tokens cut to 64 and "
	             "128); the static scale is derived from the data (about 1/6 of the values saturate) "
	             "instead of the public 0.1 / 2.1, and the zero point is drawn in [-40, 40]",
	.smoke_grids = 1,
};

/* ======================================================================
 * convert_fp8
 * ====================================================================== */

static int cvt_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_vq_pdtype(c, "dtype", KGB_DT_F16);
	kgb_dtype_t f8 = kgb_vq_pis(c, "kv_dtype", "fp8_e5m2") ? KGB_DT_F8E5M2 : KGB_DT_F8E4M3;
	bool quant = kgb_vq_pis(c, "direction", "quant");
	int64_t T, H, sh[2];
	if (shape2(c, &T, &H, err, errlen))
		return -1;
	sh[0] = T;
	sh[1] = H;
	kgb_case_add_tensor(c, "dst", KGB_ROLE_OUT, quant ? f8 : dt, 2, sh);
	kgb_case_add_tensor(c, "src", KGB_ROLE_IN, quant ? dt : f8, 2, sh);
	kgb_case_add_scalar(c, "scale", KGB_DT_F32, kgb_case_pfloat(c, "scale", 1.0));
	c->reduce_len = 1;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = T * H >= (1 << 19) && kgb_case_pfloat(c, "scale", 1.0) == 1.0;
	return 0;
}

/* dequantisation reads fp8 codes: every finite code equally likely */
static void cvt_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *s = kgb_vq_t(c, "src");
	double *sv = kgb_vq_v(c, b, "src");
	if (s->dtype != KGB_DT_F8E4M3 && s->dtype != KGB_DT_F8E5M2)
		return;
	for (size_t i = 0; i < s->numel; i++) {
		double v;
		do {
			uint8_t code = (uint8_t)kgb_rng_next(rng);
			v = s->dtype == KGB_DT_F8E4M3 ? kgb_f8e4m3_to_f64(code) : kgb_f8e5m2_to_f64(code);
		} while (!isfinite(v));
		sv[i] = v;
	}
}

/* the value before the final rounding, as the kernel computes it in fp32 */
static double cvt_pre(const kgb_case_t *c, double x)
{
	double s = kgb_vq_scalar(c, "scale");
	if (kgb_vq_pis(c, "direction", "quant"))
		return kgb_vq_f32(x / s);
	return kgb_vq_f32(x * s); /* x is exact in fp16 (fp8 -> half), then times scale in fp32 */
}

static int cvt_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *d = kgb_vq_t(c, "dst");
	double *sv = kgb_vq_v(c, b, "src"), *dv = kgb_vq_v(c, b, "dst");
	for (size_t i = 0; i < d->numel; i++)
		dv[i] = kgb_vq_quant(d->dtype, cvt_pre(c, sv[i]), 0);
	return 0;
}

static int cvt_check(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                     double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *d = kgb_vq_t(c, "dst");
	const double *sv = kgb_vq_v(c, in, "src"), *gv = kgb_vq_v(c, out, "dst");
	kgb_vq_judge_t j;
	kgb_vq_judge_init(&j, msg, msglen);
	for (size_t i = 0; i < d->numel; i++) {
		double p = cvt_pre(c, sv[i]);
		kgb_vq_elem(&j, d, i, gv[i], p - KGB_VQ_DELTA_F32 * fabs(p), p + KGB_VQ_DELTA_F32 * fabs(p), 0);
	}
	return kgb_vq_judge_done(&j, max_abs, max_rel);
}

static const kgb_op_t op_convert_fp8 = {
	.name = "convert_fp8",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "bf16 f16 <-> f8e4m3 f8e5m2",
	.datasets = KGB_DS_VLLM,
	.summary = "KV-cache fp8 conversion convert_fp8(dst, src, scale, kv_dtype). direction quant: dst = "
	           "fp8(src / scale) (round to nearest even, saturating to the largest finite value); "
	           "dequant: dst = dtype(float(fp8 src) * scale). kv_dtype fp8_e4m3 or fp8_e5m2; fp8 "
	           "stored as one byte of its bit pattern",
	.signature = "dst:out src:in scale:f32 (kv_dtype as the symbol kv_dtype)",
	.grids = {
		{ .params = { { "direction", "quant dequant" }, { "kv_dtype", "fp8_e4m3 fp8_e5m2" },
		              { "dtype", "f16 bf16" }, { "shape", "[7,130] [512,2048]" },
		              { "scale", "1.0 0.37" } } },
	},
	.setup = cvt_setup,
	.ref = cvt_ref,
	.check = cvt_check,
	.gen_inputs = cvt_gen,
	.declared_cases = 32,
};

/* ======================================================================
 * rms_norm_dynamic_per_token_quant and rms_norm_per_block_quant
 * ====================================================================== */

/* The relative uncertainty of the fp32 rms (sum of squares reduced in some order, then
 * rsqrtf): 2^-16, far above the error of any fp32 reduction order over these rows. */
#define RMS_DELTA 0x1p-16

static int rmsq_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_vq_pdtype(c, "dtype", KGB_DT_F32), qdt = kgb_vq_pdtype(c, "qdtype", KGB_DT_I8);
	int64_t T, H, sh[2], one = 1, sc[2];
	bool block = strcmp(c->op->name, "rms_norm_per_block_quant") == 0;
	int64_t g = kgb_case_pint(c, "group_size", 0);
	kgb_tensor_t *w, *s;
	if (shape2(c, &T, &H, err, errlen))
		return -1;
	if (block && (g <= 0 || H % g != 0)) {
		kgb_err(err, errlen, "op %s case %u: hidden %lld is not a multiple of group_size %lld",
		        c->op->name, c->index, (long long)H, (long long)g);
		return -1;
	}
	sh[0] = T;
	sh[1] = H;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, qdt, 2, sh);
	kgb_case_add_tensor(c, "input", KGB_ROLE_IN, dt, 2, sh);
	w = kgb_case_add_tensor(c, "weight", KGB_ROLE_IN, dt, 1, &H);
	w->gen = KGB_GEN_NORMAL;
	w->lo = 1.0;
	w->hi = 0.1;
	sc[0] = T;
	sc[1] = block ? H / g : 1;
	s = kgb_case_add_tensor(c, "scales", KGB_ROLE_OUT, KGB_DT_F32, 2, sc);
	if (block && kgb_vq_pis(c, "scale_layout", "transposed"))
		kgb_tensor_layout(s, "transposed");
	kgb_case_add_scalar(c, "epsilon", KGB_DT_F32, 1e-6);
	if (kgb_vq_pis(c, "scale_ub", "yes"))
		kgb_case_add_tensor(c, "scale_ub", KGB_ROLE_IN, KGB_DT_F32, 1, &one);
	if (block) {
		kgb_case_add_scalar(c, "group_size", KGB_DT_I64, (double)g);
		kgb_case_add_scalar(c, "is_scale_transposed", KGB_DT_I32,
		                    kgb_vq_pis(c, "scale_layout", "transposed") ? 1 : 0);
	}
	quant_finish(c, T, H);
	/* timed: the large shapes; for the per-block op, only group 128 with row-major scales */
	c->timed = c->timed && (!block || (g == 128 && !kgb_vq_pis(c, "scale_layout", "transposed")));
	return 0;
}

static void rmsq_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	double *ub = kgb_vq_v(c, b, "scale_ub");
	(void)rng;
	/* the bound sits below the larger tokens' absmax of the normalised row (about 3 for
	 * these inputs), so some rows clamp and saturate */
	if (ub)
		ub[0] = 2.0;
}

/* The normalised value as the kernel forms it: x * rms rounded to the input dtype,
 * times the weight in that dtype (fp32 for f32 inputs). */
static double rmsq_norm(kgb_dtype_t dt, double x, double rms, double w)
{
	double a = kgb_dtype_round(dt, kgb_vq_f32(x * rms));
	return dt == KGB_DT_F32 ? kgb_vq_f32(a * w) : kgb_dtype_round(dt, a * w);
}

static double rmsq_rms(const double *row, size_t H, double eps)
{
	double ss = 0;
	for (size_t j = 0; j < H; j++)
		ss += row[j] * row[j];
	return kgb_vq_f32(1.0 / sqrt(kgb_vq_f32(kgb_vq_f32(ss) / (double)H + eps)));
}

static double rmsq_scale(kgb_dtype_t qdt, double amax, const double *ub)
{
	double qmax = qdt == KGB_DT_I8 ? 127.0 : F8_MAX;
	double floor = qdt == KGB_DT_I8 ? I8_MIN_SCALE : F8_MIN_SCALE;
	if (ub)
		amax = fmin(amax, ub[0]);
	return fmax(kgb_vq_f32(amax / qmax), floor);
}

/* Offset of scale (token t, group g) in the scales tensor. */
static size_t sc_off(const kgb_tensor_t *s, size_t t, size_t g)
{
	return t * (size_t)s->stride[0] + g * (size_t)s->stride[1];
}

static int rmsq_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input"), *o = kgb_vq_t(c, "out"), *st = kgb_vq_t(c, "scales");
	size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1], G = (size_t)st->shape[1], gs = H / G;
	double *xv = kgb_vq_v(c, b, "input"), *wv = kgb_vq_v(c, b, "weight"), *ov = kgb_vq_v(c, b, "out");
	double *sv = kgb_vq_v(c, b, "scales"), *ub = kgb_vq_v(c, b, "scale_ub");
	double eps = kgb_vq_scalar(c, "epsilon");
	double *n = kgb_xmalloc(H * sizeof *n);
	for (size_t t = 0; t < T; t++) {
		double rms = rmsq_rms(xv + t * H, H, eps);
		for (size_t k = 0; k < H; k++)
			n[k] = rmsq_norm(x->dtype, xv[t * H + k], rms, wv[k]);
		for (size_t g = 0; g < G; g++) {
			double s = rmsq_scale(o->dtype, absmax(n + g * gs, gs), ub);
			sv[sc_off(st, t, g)] = s;
			for (size_t k = g * gs; k < (g + 1) * gs; k++)
				ov[t * H + k] = o->dtype == KGB_DT_I8
				              ? kgb_vq_quant(KGB_DT_I8, kgb_vq_f32(n[k] * kgb_vq_f32(1.0 / s)), 0)
				              : kgb_vq_quant(o->dtype, kgb_vq_f32(n[k] / s), 0);
		}
	}
	free(n);
	return 0;
}

/* Each normalised value lies between its forms at rms * (1 -+ RMS_DELTA); the scale
 * between the scales of the smallest and largest possible absmax; a code must be the
 * quantisation of some value of its interval under the kernel's own scale. */
static int rmsq_check(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                      double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = kgb_vq_t(c, "input"), *o = kgb_vq_t(c, "out"), *st = kgb_vq_t(c, "scales");
	size_t T = (size_t)x->shape[0], H = (size_t)x->shape[1], G = (size_t)st->shape[1], gs = H / G;
	const double *xv = kgb_vq_v(c, in, "input"), *wv = kgb_vq_v(c, in, "weight");
	const double *ub = kgb_vq_v(c, in, "scale_ub");
	const double *gsv = kgb_vq_v(c, out, "scales"), *go = kgb_vq_v(c, out, "out");
	double eps = kgb_vq_scalar(c, "epsilon");
	double *nlo = kgb_xmalloc(H * sizeof *nlo), *nhi = kgb_xmalloc(H * sizeof *nhi);
	kgb_vq_judge_t j;
	kgb_vq_judge_init(&j, msg, msglen);
	for (size_t t = 0; t < T && j.verdict == KGB_V_PASS; t++) {
		double rms = rmsq_rms(xv + t * H, H, eps);
		for (size_t k = 0; k < H; k++) {
			double a = rmsq_norm(x->dtype, xv[t * H + k], rms * (1 - RMS_DELTA), wv[k]);
			double bb = rmsq_norm(x->dtype, xv[t * H + k], rms * (1 + RMS_DELTA), wv[k]);
			nlo[k] = fmin(a, bb);
			nhi[k] = fmax(a, bb);
		}
		for (size_t g = 0; g < G && j.verdict == KGB_V_PASS; g++) {
			double alo = 0, ahi = 0, s;
			for (size_t k = g * gs; k < (g + 1) * gs; k++) {
				double mlo = nlo[k] > 0 ? nlo[k] : nhi[k] < 0 ? -nhi[k] : 0;
				alo = fmax(alo, mlo);
				ahi = fmax(ahi, fmax(fabs(nlo[k]), fabs(nhi[k])));
			}
			kgb_vq_range(&j, st, sc_off(st, t, g), gsv[sc_off(st, t, g)],
			             rmsq_scale(o->dtype, alo, ub) * (1 - 0x1p-22),
			             rmsq_scale(o->dtype, ahi, ub) * (1 + 0x1p-22));
			s = gsv[sc_off(st, t, g)];
			for (size_t k = g * gs; k < (g + 1) * gs; k++) {
				double lo = nlo[k] / s, hi = nhi[k] / s;
				lo -= KGB_VQ_DELTA_F32 * fabs(lo);
				hi += KGB_VQ_DELTA_F32 * fabs(hi);
				kgb_vq_elem(&j, o, t * H + k, go[t * H + k], lo, hi, 0);
			}
		}
	}
	free(nlo);
	free(nhi);
	return kgb_vq_judge_done(&j, max_abs, max_rel);
}

static const kgb_op_t op_rms_norm_dynamic_per_token_quant = {
	.name = "rms_norm_dynamic_per_token_quant",
	.source = "vllm",
	.category = "norm",
	.dtypes = "bf16 f16 f32 -> i8 f8e4m3",
	.datasets = KGB_DS_VLLM,
	.summary = "n = dtype(dtype(input * rms) * weight), rms = rsqrt(mean(input^2) + epsilon) per token "
	           "(fp32); scales[t, 0] = max(min(max|n[t]|, scale_ub[0]) / qmax, floor) (qmax 127 for int8, "
	           "448 for fp8; floor fp32 epsilon for int8, 1/(448*512) for fp8); out = int8: "
	           "sat8(rn(n * (1/scale))), fp8: fp8(clamp(n / scale)). scale_ub only with fp8",
	.signature = "out:out(i8|f8e4m3) input:in weight:in scales:out(f32) epsilon:f32 "
	             "scale_ub:in(f32, optional)",
	.grids = {
		{ .params = { { "qdtype", "i8 f8e4m3" }, { "dtype", "bf16 f32" }, { "shape", "[1,64] [7,1025]" },
		              { "scale_ub", "no" } } },
		{ .params = { { "qdtype", "i8 f8e4m3" }, { "dtype", "bf16 f16 f32" },
		              { "shape", "[1,1] [1,128] [1,1027] [1,5120] [64,1024] [64,1029] [64,5137] [128,5137]" },
		              { "scale_ub", "no" } } },
		{ .params = { { "qdtype", "f8e4m3" }, { "dtype", "bf16 f16 f32" },
		              { "shape", "[1,1024] [64,1025] [128,5120]" }, { "scale_ub", "yes" } } },
	},
	.setup = rmsq_setup,
	.ref = rmsq_ref,
	.check = rmsq_check,
	.gen_inputs = rmsq_gen,
	.declared_cases = 48,
	.deviation = "int8/fp8 x bf16/f16/f32 x 8 shapes from the public token/hidden pairs (2048 and 4096 "
	             "tokens cut to 64 and 128) plus 9 fp8 cases with scale_ub; the residual variant is "
	             "left out (fused_add_rms_norm covers the residual add)",
	.smoke_grids = 1,
};

static const kgb_op_t op_rms_norm_per_block_quant = {
	.name = "rms_norm_per_block_quant",
	.source = "vllm",
	.category = "norm",
	.dtypes = "bf16 f16 f32 -> i8 f8e4m3",
	.datasets = KGB_DS_VLLM,
	.summary = "as rms_norm_dynamic_per_token_quant with one scale per group of group_size (64 or 128) "
	           "consecutive columns: scales[t, g] = max(max|n[t, g*gs:(g+1)*gs]| / qmax, floor); the "
	           "scales tensor [tokens, groups] is row-major, or column-major when "
	           "is_scale_transposed (element (t, g) at g * tokens + t)",
	.signature = "out:out(i8|f8e4m3) input:in weight:in scales:out(f32) epsilon:f32 group_size:i64 "
	             "is_scale_transposed:i32",
	.grids = {
		{ .params = { { "qdtype", "i8 f8e4m3" }, { "dtype", "bf16" }, { "shape", "[1,128] [7,1024]" },
		              { "group_size", "64 128" }, { "scale_layout", "rowmajor" } } },
		{ .params = { { "qdtype", "i8 f8e4m3" }, { "dtype", "bf16 f16 f32" },
		              { "shape", "[1,128] [33,1024] [128,5120]" }, { "group_size", "64 128" },
		              { "scale_layout", "rowmajor transposed" } } },
	},
	.setup = rmsq_setup,
	.ref = rmsq_ref,
	.check = rmsq_check,
	.declared_cases = 64,
	.deviation = "int8/fp8 x bf16/f16/f32 x 3 shapes x group 64/128 x both scale layouts (72); the "
	             "residual variant and TMA padding of the scales are left out",
	.smoke_grids = 1,
};

/* ======================================================================
 * permute_cols
 * ====================================================================== */

static int perm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_vq_pdtype(c, "dtype", KGB_DT_F16);
	int64_t T, H, sh[2];
	kgb_tensor_t *p;
	if (shape2(c, &T, &H, err, errlen))
		return -1;
	sh[0] = T;
	sh[1] = H;
	kgb_case_add_tensor(c, "A", KGB_ROLE_IN, dt, 2, sh);
	p = kgb_case_add_tensor(c, "perm", KGB_ROLE_IN, KGB_DT_I32, 1, &H);
	p->gen = KGB_GEN_PERM;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, sh);
	kgb_case_set_sym(c, "M", T);
	kgb_case_set_sym(c, "K", H);
	c->reduce_len = 1;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = T * H >= (1 << 19);
	return 0;
}

static int perm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *a = kgb_vq_t(c, "A");
	size_t M = (size_t)a->shape[0], K = (size_t)a->shape[1];
	double *av = kgb_vq_v(c, b, "A"), *pv = kgb_vq_v(c, b, "perm"), *ov = kgb_vq_v(c, b, "out");
	for (size_t k = 0; k < K; k++)
		if (pv[k] < 0 || pv[k] >= (double)K)
			return -1;
	for (size_t m = 0; m < M; m++)
		for (size_t k = 0; k < K; k++)
			ov[m * K + k] = av[m * K + (size_t)pv[k]];
	return 0;
}

static const kgb_op_t op_permute_cols = {
	.name = "permute_cols",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "bf16 f16",
	.datasets = KGB_DS_VLLM,
	.summary = "out[m, k] = A[m, perm[k]] (A [M, K] row-major, perm an int32 permutation of 0..K-1)",
	.signature = "A:in perm:in(i32) out:out",
	.grids = {
		{ .params = { { "dtype", "bf16 f16" }, { "shape", "[1,512] [16,64]" } } },
		{ .params = { { "dtype", "bf16 f16" }, { "shape", "[67,8192] [544,4096]" } } },
	},
	.setup = perm_setup,
	.ref = perm_ref,
	.declared_cases = 30,
	.deviation = "the public test has 3 shapes x bf16/f16 (6 cases); kgb adds one small shape (8)",
	.smoke_grids = 1,
};

/* ======================================================================
 * cutlass_pack_scale_fp8
 * ====================================================================== */

static int pack_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t T, H, n;
	if (shape2(c, &T, &H, err, errlen))
		return -1;
	kgb_case_add_tensor(c, "scales", KGB_ROLE_IN, KGB_DT_F8E4M3, 2, (int64_t[]){ T, H });
	n = T * H * 8;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_F8E4M3, 1, &n);
	kgb_case_set_sym(c, "numel", T * H);
	c->reduce_len = 1;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = T * H >= 2048;
	return 0;
}

/* a few large scales, so that the multiples saturate at -448 */
static void pack_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *t = kgb_vq_t(c, "scales");
	double *v = kgb_vq_v(c, b, "scales");
	for (size_t i = 0; i < t->numel; i += 7)
		v[i] = (kgb_rng_next(rng) & 1 ? 1 : -1) * (64 + 64 * kgb_rng_uniform(rng));
}

static int pack_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *t = kgb_vq_t(c, "scales");
	double *v = kgb_vq_v(c, b, "scales"), *o = kgb_vq_v(c, b, "out");
	for (size_t i = 0; i < t->numel; i++) {
		for (int j = 0; j < 7; j++)
			o[i * 8 + (size_t)j] = kgb_vq_quant(KGB_DT_F8E4M3, v[i] * -(8 - j), 0);
		o[i * 8 + 7] = -v[i];
	}
	return 0;
}

static const kgb_op_t op_cutlass_pack_scale_fp8 = {
	.name = "cutlass_pack_scale_fp8",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "f8e4m3",
	.datasets = KGB_DS_VLLM,
	.summary = "scales [rows, cols] fp8 e4m3fn -> out [rows * cols * 8] fp8: for scale s (row-major "
	           "order i), out[8i .. 8i+7] = fp8(-8s), fp8(-7s), ..., fp8(-2s), -s (round to nearest even, "
	           "saturating at +-448): the negative multiples the CUTLASS W4A8 mainloop looks up",
	.signature = "scales:in(f8e4m3) out:out(f8e4m3)",
	.grids = {
		{ .params = { { "shape", "[1,4] [4,4] [8,8] [16,16]" } } },
		{ .params = { { "shape", "[4,16] [32,8] [64,16] [128,32]" } } },
	},
	.setup = pack_setup,
	.ref = pack_ref,
	.gen_inputs = pack_gen,
	.declared_cases = 8,
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_quant[] = {
	&op_scaled_fp8_quant,
	&op_scaled_int8_quant,
	&op_convert_fp8,
	&op_rms_norm_dynamic_per_token_quant,
	&op_rms_norm_per_block_quant,
	&op_permute_cols,
	&op_cutlass_pack_scale_fp8,
	NULL,
};
