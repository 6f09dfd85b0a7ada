/* vLLM normalisation, rotation and logits operators: fused_add_rms_norm,
 * fused_qk_norm_rope, hadacore_transform and apply_repetition_penalties_cuda (the
 * Python name of the in-place apply_repetition_penalties_ kernel). Semantics of vLLM
 * 0.13 (csrc/layernorm_kernels.cu, csrc/fused_qknorm_rope_kernel.cu,
 * csrc/quantization/hadamard/hadacore, csrc/sampler.cu). All four work in place. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"
#include "vllm_common.h"

#define B kgb_vllm_buf
#define TT kgb_vllm_t

/* ---- fused_add_rms_norm ---- */

static int farn_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t T = kgb_case_pint(c, "num_tokens", 7), H = kgb_case_pint(c, "hidden", 768);
	int64_t pad = kgb_case_pint(c, "row_pad", 0), sh[2] = { T, H };
	kgb_tensor_t *x;
	(void)err;
	(void)errlen;
	x = kgb_case_add_tensor(c, "input", KGB_ROLE_INOUT, dt, 2, sh);
	if (pad) {
		/* rows of a wider buffer (vLLM takes input with any row stride) */
		x->stride[0] = H + pad;
		kgb_tensor_finish(x);
	}
	kgb_case_add_tensor(c, "residual", KGB_ROLE_INOUT, dt, 2, sh);
	kgb_case_add_tensor(c, "weight", KGB_ROLE_IN, dt, 1, &H);
	kgb_case_add_scalar(c, "epsilon", KGB_DT_F32, kgb_case_pfloat(c, "epsilon", 1e-6));
	kgb_case_set_sym(c, "num_tokens", T);
	kgb_case_set_sym(c, "hidden", H);
	kgb_case_set_sym(c, "input_stride", H + pad);
	c->reduce_len = (double)H;
	kgb_case_default_tol(c);
	if (dt != KGB_DT_F32)
		c->atol_rel = c->rtol * 0.1;   /* normalised output, as rms_norm */
	c->timed = c->grid == 3;   /* the last grid */
	return 0;
}

static int farn_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = TT(c, "input");
	kgb_dtype_t dt = x->dtype;
	int64_t T = x->shape[0], H = x->shape[1], xs = x->stride[0];
	double *xv = B(c, b, "input"), *rv = B(c, b, "residual"), *w = B(c, b, "weight");
	double eps = (double)(float)kgb_vllm_scalar(c, "epsilon");
	for (int64_t t = 0; t < T; t++) {
		double ss = 0, r;
		for (int64_t j = 0; j < H; j++) {
			/* residual = input + residual, stored in the element type; the norm reads
			 * the stored sum */
			double z = kgb_dtype_round(dt, xv[t * xs + j] + rv[t * H + j]);
			rv[t * H + j] = z;
			ss += z * z;
		}
		r = 1.0 / sqrt(ss / (double)H + eps);
		for (int64_t j = 0; j < H; j++)
			xv[t * xs + j] = kgb_dtype_round(dt, rv[t * H + j] * r) * w[j];
	}
	return 0;
}

static const kgb_op_t op_fused_add_rms_norm = {
	.name = "fused_add_rms_norm",
	.source = "vllm",
	.category = "norm",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "in place, per row t: z = input[t] + residual[t] rounded to the element type; residual[t] "
	           "= z; input[t] = round(z / sqrt(mean(z^2) + epsilon)) * weight (the normalised value is "
	           "rounded to the element type before the weight, as vLLM); input may have a row stride "
	           "larger than hidden (input_stride)",
	.signature = "input:inout residual:inout weight:in epsilon:f32",
	.grids = {
		{ { { "dtype", "f16 f32" }, { "num_tokens", "7" }, { "hidden", "768" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "num_tokens", "7 19" },
		    { "hidden", "8 768 769 770 2048 5120 5125" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "num_tokens", "19" }, { "hidden", "768 5125" }, { "row_pad", "64" } } },
		{ { { "dtype", "bf16" }, { "num_tokens", "16" }, { "hidden", "4096 8192" } } },
	},
	.setup = farn_setup,
	.ref = farn_ref,
	.inplace = true,
	.declared_cases = 225,
	.deviation = "2 smoke cases, then 42 contiguous (dtype x num_tokens 7, 19 x hidden 8 to 5125, "
	             "odd and even tails), 6 with strided input rows and 2 timed (16 x 4096, 16 x 8192); "
	             "the public 83- and 4096-token sizes repeat the same rows (a 33M-element case costs the "
	             "reference and the validator far more than it tells)",
	.smoke_grids = 1,
};

/* ---- fused_qk_norm_rope ---- */

static int fqk_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_BF16);
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t T, nq, nk, nv, D, maxp = 256, sh[2];
	kgb_tensor_t *t;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5 || cfg->dims[4] % 2)
		return kgb_err(err, errlen, "op %s case %u: cfg must be [num_tokens,heads_q,heads_k,heads_v,head_dim] "
		               "with an even head_dim", c->op->name, c->index);
	T = cfg->dims[0]; nq = cfg->dims[1]; nk = cfg->dims[2]; nv = cfg->dims[3]; D = cfg->dims[4];
	sh[0] = T; sh[1] = (nq + nk + nv) * D;
	kgb_case_add_tensor(c, "qkv", KGB_ROLE_INOUT, dt, 2, sh);
	kgb_case_add_tensor(c, "q_weight", KGB_ROLE_IN, dt, 1, &D);
	kgb_case_add_tensor(c, "k_weight", KGB_ROLE_IN, dt, 1, &D);
	sh[0] = maxp; sh[1] = D;
	kgb_case_add_tensor(c, "cos_sin_cache", KGB_ROLE_IN, dt, 2, sh);
	t = kgb_case_add_tensor(c, "position_ids", KGB_ROLE_IN, KGB_DT_I64, 1, &T);
	kgb_aten_gen(t, KGB_GEN_INT, 0, (double)(maxp - 1));
	kgb_case_add_scalar(c, "num_heads_q", KGB_DT_I64, (double)nq);
	kgb_case_add_scalar(c, "num_heads_k", KGB_DT_I64, (double)nk);
	kgb_case_add_scalar(c, "num_heads_v", KGB_DT_I64, (double)nv);
	kgb_case_add_scalar(c, "head_dim", KGB_DT_I64, (double)D);
	kgb_case_add_scalar(c, "eps", KGB_DT_F32, kgb_case_pfloat(c, "eps", 1e-6));
	kgb_case_add_scalar(c, "is_neox", KGB_DT_I32, (double)kgb_case_pint(c, "is_neox", 1));
	kgb_case_set_sym(c, "num_tokens", T);
	c->reduce_len = (double)D;
	kgb_case_default_tol(c);
	c->atol_rel = c->rtol * 0.5;   /* normalised, then rotated: cancellation in the rotation */
	c->timed = c->grid == 2;   /* the last grid */
	return 0;
}

/* cos_sin_cache[p] = [cos(p * f_i) for i < D/2, sin(p * f_i) for i < D/2], f_i =
 * 10000^(-2i/D), as vLLM's RotaryEmbedding builds it (rounded to the element type). */
static void fqk_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *t = TT(c, "cos_sin_cache");
	int64_t P = t->shape[0], D = t->shape[1], h = D / 2;
	double *v = B(c, b, "cos_sin_cache");
	(void)rng;
	for (int64_t p = 0; p < P; p++)
		for (int64_t i = 0; i < h; i++) {
			double f = (double)p * pow(10000.0, -2.0 * (double)i / (double)D);
			v[p * D + i] = cos(f);
			v[p * D + h + i] = sin(f);
		}
}

static int fqk_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *q = TT(c, "qkv");
	int64_t T = q->shape[0], W = q->shape[1], D = (int64_t)kgb_vllm_scalar(c, "head_dim"), h = D / 2;
	int64_t nq = (int64_t)kgb_vllm_scalar(c, "num_heads_q"), nk = (int64_t)kgb_vllm_scalar(c, "num_heads_k");
	int64_t P = TT(c, "cos_sin_cache")->shape[0];
	double *x = B(c, b, "qkv"), *pos = B(c, b, "position_ids"), *cs = B(c, b, "cos_sin_cache");
	double eps = kgb_vllm_scalar(c, "eps"), *y = kgb_xmalloc((size_t)D * sizeof *y);
	int neox = kgb_vllm_scalar(c, "is_neox") != 0;
	for (int64_t t = 0; t < T; t++) {
		int64_t p = (int64_t)pos[t];
		if (p < 0 || p >= P) {
			free(y);
			return -1;
		}
		for (int64_t hd = 0; hd < nq + nk; hd++) {
			double *v = x + t * W + hd * D, ss = 0, r;
			const double *w = B(c, b, hd < nq ? "q_weight" : "k_weight");
			for (int64_t i = 0; i < D; i++)
				ss += v[i] * v[i];
			r = 1.0 / sqrt(ss / (double)D + eps);
			for (int64_t i = 0; i < D; i++)
				y[i] = v[i] * r * w[i];
			for (int64_t i = 0; i < h; i++) {
				double co = cs[p * D + i], si = cs[p * D + h + i];
				int64_t a = neox ? i : 2 * i, bb = neox ? i + h : 2 * i + 1;
				v[a] = y[a] * co - y[bb] * si;
				v[bb] = y[bb] * co + y[a] * si;
			}
		}
	}
	free(y);
	return 0;
}

static const kgb_op_t op_fused_qk_norm_rope = {
	.name = "fused_qk_norm_rope",
	.source = "vllm",
	.category = "norm",
	.dtypes = "bf16 f16",
	.datasets = KGB_DS_VLLM,
	.summary = "in place on qkv [num_tokens, (heads_q + heads_k + heads_v) * head_dim]: every q head "
	           "(and k head) y = x / sqrt(mean(x^2) + eps) * q_weight (k_weight), then rotated with "
	           "c = cos_sin_cache[position_ids[t], i], s = cos_sin_cache[.., head_dim/2 + i], i < "
	           "head_dim/2, pairs (i, i + head_dim/2) when is_neox else (2i, 2i+1): (a, b) -> (a c - b s, "
	           "b c + a s); computed in f32, stored once; v heads untouched",
	.signature = "qkv:inout num_heads_q:i64 num_heads_k:i64 num_heads_v:i64 head_dim:i64 eps:f32 "
	             "q_weight:in k_weight:in cos_sin_cache:in is_neox:i32 position_ids:in(i64)",
	.grids = {
		{ { { "dtype", "bf16" }, { "cfg", "[3,4,2,2,64]" }, { "is_neox", "1" } } },
		{ { { "cfg", "[1,16,4,4,64] [7,16,4,4,128] [33,32,8,8,128] [64,8,2,2,256] [64,16,16,16,64]" },
		    { "dtype", "bf16 f16" }, { "is_neox", "0 1" }, { "eps", "1e-6 1e-5" } } },
		{ { { "dtype", "bf16" }, { "cfg", "[32,32,8,8,128]" }, { "is_neox", "1" } } },
	},
	.setup = fqk_setup,
	.ref = fqk_ref,
	.inplace = true,
	.gen_inputs = fqk_gen,
	.declared_cases = 120,
	.deviation = "1 smoke case, then 40 = 5 head layouts x dtype x is_neox x eps and one timed "
	             "case; the public grid repeats the same layouts over more token counts",
	.smoke_grids = 1,
};

/* ---- hadacore_transform ---- */

static int had_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_BF16);
	int64_t n = kgb_case_pint(c, "dim", 16), rows = kgb_case_pint(c, "rows", 8), sh[2] = { rows, n };
	int k = 0, stages;
	if (n < 2 || (n & (n - 1)) || n > 32768)
		return kgb_err(err, errlen, "op %s case %u: dim %lld must be a power of two up to 32768",
		               c->op->name, c->index, (long long)n);
	while ((1 << k) < n)
		k++;
	kgb_case_add_tensor(c, "x", KGB_ROLE_INOUT, dt, 2, sh);
	kgb_case_add_scalar(c, "inplace", KGB_DT_I32, 1);
	kgb_case_set_sym(c, "dim", n);
	kgb_case_set_sym(c, "rows", rows);
	c->reduce_len = (double)n;
	kgb_case_default_tol(c);
	/* the kernel works in 16-point stages on tensor cores and rounds to the element
	 * type between stages: one rounding per stage */
	stages = (k + 3) / 4;
	c->rtol *= stages;
	c->atol_rel = c->rtol;
	c->timed = rows * n >= 1 << 18;
	return 0;
}

static int had_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *t = TT(c, "x");
	int64_t rows = t->shape[0], n = t->shape[1];
	double *x = B(c, b, "x"), sc = 1.0 / sqrt((double)n);
	for (int64_t r = 0; r < rows; r++) {
		double *v = x + r * n;
		for (int64_t len = 1; len < n; len <<= 1)
			for (int64_t i = 0; i < n; i += 2 * len)
				for (int64_t j = i; j < i + len; j++) {
					double a = v[j], d = v[j + len];
					v[j] = a + d;
					v[j + len] = a - d;
				}
		for (int64_t i = 0; i < n; i++)
			v[i] *= sc;
	}
	return 0;
}

static const kgb_op_t op_hadacore_transform = {
	.name = "hadacore_transform",
	.source = "vllm",
	.category = "transform",
	.dtypes = "bf16 f16",
	.datasets = KGB_DS_VLLM,
	.summary = "in place (inplace = true), every row of x [rows, dim], dim = 2^k <= 32768: x = H x / "
	           "sqrt(dim) with H the Sylvester Hadamard matrix (H[i, j] = (-1)^popcount(i & j)); "
	           "tolerance: one rounding of the element type per 16-point stage",
	.signature = "x:inout inplace:i32",
	.grids = {
		{ { { "dtype", "bf16" }, { "dim", "16 128" }, { "rows", "4" } } },
		{ { { "dim", "16 32 64 128 512 2048 8192 32768" }, { "dtype", "bf16 f16" }, { "rows", "8" } } },
	},
	.setup = had_setup,
	.ref = had_ref,
	.inplace = true,
	.declared_cases = 16,
	.deviation = "2 smoke cases, then the 16 of dim x dtype",
	.smoke_grids = 1,
};

/* ---- apply_repetition_penalties_cuda ---- */

static int arp_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const kgb_pval_t *sp = kgb_case_param(c, "shape");
	kgb_tensor_t *t;
	if (!sp || sp->kind != KGB_PV_SHAPE || sp->ndim != 2)
		return kgb_err(err, errlen, "op %s case %u: shape must be [num_seqs,vocab_size]", c->op->name, c->index);
	t = kgb_case_add_tensor(c, "logits", KGB_ROLE_INOUT, dt, 2, sp->dims);
	kgb_aten_gen(t, KGB_GEN_NORMAL, 0, 2);
	t = kgb_case_add_tensor(c, "prompt_mask", KGB_ROLE_IN, KGB_DT_BOOL, 2, sp->dims);
	kgb_aten_gen(t, KGB_GEN_BOOL, 0.2, 0);
	t = kgb_case_add_tensor(c, "output_mask", KGB_ROLE_IN, KGB_DT_BOOL, 2, sp->dims);
	kgb_aten_gen(t, KGB_GEN_BOOL, 0.2, 0);
	t = kgb_case_add_tensor(c, "repetition_penalties", KGB_ROLE_IN, KGB_DT_F32, 1, sp->dims);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, 1.01, 2.0);
	kgb_case_set_sym(c, "num_seqs", sp->dims[0]);
	kgb_case_set_sym(c, "vocab_size", sp->dims[1]);
	kgb_case_default_tol(c);
	c->timed = c->grid == 1 && sp->dims[0] * sp->dims[1] >= 1 << 18;
	return 0;
}

static int arp_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *t = TT(c, "logits");
	int64_t S = t->shape[0], V = t->shape[1];
	double *x = B(c, b, "logits"), *pm = B(c, b, "prompt_mask"), *om = B(c, b, "output_mask");
	double *pen = B(c, b, "repetition_penalties");
	for (int64_t s = 0; s < S; s++)
		for (int64_t v = 0; v < V; v++) {
			double *l = &x[s * V + v];
			float f = (float)*l, p = (float)pen[s];
			if (pm[s * V + v] == 0 && om[s * V + v] == 0)
				continue;
			*l = (double)(f > 0 ? f / p : f * p);
		}
	return 0;
}

static const kgb_op_t op_apply_repetition_penalties = {
	.name = "apply_repetition_penalties_cuda",
	.source = "vllm",
	.category = "sampling",
	.dtypes = "f32 f16 bf16",
	.datasets = KGB_DS_VLLM,
	.summary = "in place (vLLM's apply_repetition_penalties_): where prompt_mask[s, v] or "
	           "output_mask[s, v], logits[s, v] = logits / repetition_penalties[s] if logits > 0 "
	           "else logits * repetition_penalties[s] (in f32); other logits unchanged",
	.signature = "logits:inout prompt_mask:in(bool) output_mask:in(bool) repetition_penalties:in(f32)",
	.grids = {
		{ { { "dtype", "f32" }, { "shape", "[3,1000]" } } },
		{ { { "dtype", "f32" }, { "shape", "[1,1000] [3,1000] [32,1000] [1,32000] [3,32000] [8,32000] "
		                                 "[1,128256] [2,151936] [64,4096] [3,50257]" } } },
		{ { { "dtype", "f16 bf16" }, { "shape", "[3,1000] [8,32000]" } } },
	},
	.setup = arp_setup,
	.ref = arp_ref,
	.inplace = true,
	.declared_cases = 10,
	.deviation = "1 smoke case, the 10 f32 shapes (num_seqs, vocab) of the public count, and 4 "
	             "f16/bf16 cases (the kernel is generic over the logits type)",
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_norm[] = {
	&op_fused_add_rms_norm, &op_fused_qk_norm_rope, &op_hadacore_transform, &op_apply_repetition_penalties,
	NULL,
};
