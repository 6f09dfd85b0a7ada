/* GPTQ weight layout operators of vLLM (docs/formats-gptq-awq-marlin.md).
 *
 * gptq_shuffle rewrites a GPTQ weight in place into the layout of the exllama kernels:
 * first, when a permutation is given (act-order), the rows are gathered into
 * sequential order; then, for 4-bit weights, the nibbles of every int32 are
 * interleaved. The result is integer data and compares exactly. */
#include <math.h>
#include <string.h>

#include "ops.h"
#include "util.h"
#include "vllm_quant_common.h"

static uint32_t u32(double v)
{
	return (uint32_t)(int32_t)v;
}

static double i32(uint32_t v)
{
	return (double)(int32_t)v;
}

static int gshuf_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "kn");
	int64_t bits = kgb_case_pint(c, "bit", 4), K, N, sh[2], pk;
	bool perm = strcmp(kgb_case_pstr(c, "perm", "none"), "act_order") == 0;
	kgb_tensor_t *t;
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 2 || (bits != 4 && bits != 8)) {
		kgb_err(err, errlen, "op %s case %u: kn must be [K,N] and bit 4 or 8", c->op->name, c->index);
		return -1;
	}
	K = p->dims[0];
	N = p->dims[1];
	if (K % (32 / bits) || N % 2) {
		kgb_err(err, errlen, "op %s case %u: K must be a multiple of %lld and N even", c->op->name,
		        c->index, (long long)(32 / bits));
		return -1;
	}
	sh[0] = K * bits / 32;
	sh[1] = N;
	t = kgb_case_add_tensor(c, "q_weight", KGB_ROLE_INOUT, KGB_DT_I32, 2, sh);
	t->gen = KGB_GEN_INT;
	t->lo = -2147483648.0;
	t->hi = 2147483647.0;
	pk = perm ? K : 0;
	t = kgb_case_add_tensor(c, "q_perm", KGB_ROLE_IN, KGB_DT_I32, 1, &pk);
	t->gen = KGB_GEN_PERM;
	kgb_case_add_scalar(c, "bit", KGB_DT_I64, (double)bits);
	kgb_case_set_sym(c, "K", K);
	kgb_case_set_sym(c, "N", N);
	c->reduce_len = 1;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = K * N >= (int64_t)1 << 23;
	return 0;
}

static int gshuf_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *w = kgb_vq_t(c, "q_weight"), *pt = kgb_vq_t(c, "q_perm");
	int bits = (int)kgb_vq_scalar(c, "bit"), per = 32 / bits;
	size_t P = (size_t)w->shape[0], N = (size_t)w->shape[1], K = P * (size_t)per;
	uint32_t mask = bits == 4 ? 0xfu : 0xffu;
	double *wv = kgb_vq_v(c, b, "q_weight"), *pv = kgb_vq_v(c, b, "q_perm");
	uint32_t *src = kgb_xmalloc(P * N * sizeof *src);
	for (size_t i = 0; i < P * N; i++)
		src[i] = u32(wv[i]);
	for (size_t r = 0; pt->numel && r < P; r++)
		for (size_t n = 0; n < N; n++) {
			uint32_t dst = 0;
			for (int i = 0; i < per; i++) {
				double s = pv[r * (size_t)per + (size_t)i];
				size_t row;
				if (s < 0 || s >= (double)K) {
					free(src);
					return -1;
				}
				row = (size_t)s;
				dst |= ((src[(row / (size_t)per) * N + n] >> (bits * (int)(row % (size_t)per))) & mask)
				       << (bits * i);
			}
			wv[r * N + n] = i32(dst);
		}
	if (bits == 4)
		for (size_t i = 0; i < P * N; i++) {
			uint32_t qa = u32(wv[i]), qb = 0;
			for (int k = 0; k < 4; k++) {
				qb |= ((qa >> (8 * k)) & 0xf) << (4 * k);
				qb |= ((qa >> (8 * k + 4)) & 0xf) << (4 * k + 16);
			}
			wv[i] = i32(qb);
		}
	free(src);
	return 0;
}

static const kgb_op_t op_gptq_shuffle = {
	.name = "gptq_shuffle",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "in place on q_weight [K*bit/32, N] (GPTQ: 32/bit weights of consecutive rows per int32, "
	           "row 32/bit*p + j in bits bit*j..): if q_perm [K] is not empty, new row r = old row "
	           "q_perm[r]; then for bit 4 each int32's nibbles q0..q7 become q0 q2 q4 q6 q1 q3 q5 q7 "
	           "(lowest first: even nibbles in the low half-word); bit 8 keeps the bytes",
	.signature = "q_weight:inout(i32) q_perm:in(i32, empty or [K]) bit:i64",
	.grids = {
		{ .params = { { "bit", "4 8" }, { "perm", "none act_order" }, { "kn", "[128,64]" } } },
		{ .params = { { "bit", "4 8" }, { "perm", "none act_order" }, { "kn", "[1024,512] [2048,4096]" } } },
	},
	.setup = gshuf_setup,
	.ref = gshuf_ref,
	.inplace = true,
	.declared_cases = 6,
	.deviation = "bit 4/8 x with/without act-order permutation x 3 shapes (12); 2- and 3-bit "
	             "weights are not covered yet",
	.smoke_grids = 1,
};

/* ======================================================================
 * gptq_gemm
 * ====================================================================== */

static int gg_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "mnk");
	int64_t bits = kgb_case_pint(c, "bit", 4), G = kgb_case_pint(c, "group_size", 128), M, N, K, sh[2], gk;
	bool exl = strcmp(kgb_case_pstr(c, "exllama", "no"), "yes") == 0;
	kgb_tensor_t *t;
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3 || (bits != 4 && bits != 8)) {
		kgb_err(err, errlen, "op %s case %u: mnk must be [M,N,K] and bit 4 or 8", c->op->name, c->index);
		return -1;
	}
	M = p->dims[0];
	N = p->dims[1];
	K = p->dims[2];
	if (K % G || G % 32 || N % (32 / bits)) {
		kgb_err(err, errlen, "op %s case %u: K must be a multiple of group_size (a multiple of 32), N of %lld",
		        c->op->name, c->index, (long long)(32 / bits));
		return -1;
	}
	sh[0] = M;
	sh[1] = K;
	kgb_case_add_tensor(c, "a", KGB_ROLE_IN, KGB_DT_F16, 2, sh);
	sh[0] = K * bits / 32;
	sh[1] = N;
	t = kgb_case_add_tensor(c, "b_q_weight", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	t->gen = KGB_GEN_INT;
	t->lo = -2147483648.0;
	t->hi = 2147483647.0;
	sh[0] = K / G;
	sh[1] = N * bits / 32;
	t = kgb_case_add_tensor(c, "b_gptq_qzeros", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	t->gen = KGB_GEN_INT;
	t->lo = -2147483648.0;
	t->hi = 2147483647.0;
	sh[1] = N;
	t = kgb_case_add_tensor(c, "b_gptq_scales", KGB_ROLE_IN, KGB_DT_F16, 2, sh);
	t->gen = KGB_GEN_UNIFORM;
	t->lo = 0.002;
	t->hi = 0.01;
	gk = exl ? 0 : K;
	kgb_case_add_tensor(c, "b_g_idx", KGB_ROLE_IN, KGB_DT_I32, 1, &gk)->gen = KGB_GEN_ZERO; /* gg_gen */
	kgb_case_add_scalar(c, "use_exllama", KGB_DT_I32, exl);
	kgb_case_add_scalar(c, "use_v2_format", KGB_DT_I32,
	                    strcmp(kgb_case_pstr(c, "format", "v1"), "v2") == 0);
	kgb_case_add_scalar(c, "bit", KGB_DT_I64, (double)bits);
	sh[0] = M;
	sh[1] = N;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_F16, 2, sh);
	KGB_SYMS(c, "M N K group_size", M, N, K, G);
	c->reduce_len = (double)K;
	kgb_case_default_tol(c);
	/* vLLM's kernels accumulate in fp16 (half2 fma, fp16 atomic adds per 128 rows of
	 * K): the absolute term grows like sqrt(K) fp16 roundings of the partial sums */
	c->atol_rel = fmin(0.05, 5e-4 * sqrt((double)K));
	c->timed = M * N * K >= (int64_t)1 << 27;
	return 0;
}

/* b_g_idx: row k's group. sequential: k / G; act_order: the groups of a random
 * permutation of the rows (each group still has G rows). */
static void gg_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *gt = kgb_vq_t(c, "b_g_idx");
	double *gv = kgb_vq_v(c, b, "b_g_idx");
	size_t K = gt->numel, G = (size_t)kgb_case_pint(c, "group_size", 128);
	for (size_t k = 0; k < K; k++)
		gv[k] = (double)(k / G);
	if (strcmp(kgb_case_pstr(c, "g_idx", "seq"), "act_order") == 0)
		kgb_ops_shuffle(rng, gv, K);
}

static int gg_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *a = kgb_vq_t(c, "a"), *o = kgb_vq_t(c, "out"), *gt = kgb_vq_t(c, "b_g_idx");
	const kgb_tensor_t *st = kgb_vq_t(c, "b_gptq_scales");
	size_t M = (size_t)o->shape[0], N = (size_t)o->shape[1], K = (size_t)a->shape[1];
	size_t G = K / (size_t)st->shape[0];
	int bits = (int)kgb_vq_scalar(c, "bit"), per = 32 / bits;
	bool exl = kgb_vq_scalar(c, "use_exllama") != 0, v2 = kgb_vq_scalar(c, "use_v2_format") != 0;
	uint32_t mask = bits == 4 ? 0xfu : 0xffu;
	double *qw = kgb_vq_v(c, b, "b_q_weight"), *qz = kgb_vq_v(c, b, "b_gptq_qzeros");
	double *sv = kgb_vq_v(c, b, "b_gptq_scales"), *gv = kgb_vq_v(c, b, "b_g_idx");
	double *av = kgb_vq_v(c, b, "a"), *ov = kgb_vq_v(c, b, "out");
	double *w = kgb_xmalloc(K * N * sizeof *w);
	for (size_t k = 0; k < K; k++) {
		size_t g = gt->numel ? (size_t)gv[k] : k / G;
		int j = (int)(k % (size_t)per), pos = j;
		if (g >= K / G) {
			free(w);
			return -1;
		}
		if (exl && bits == 4)   /* gptq_shuffle's nibble order */
			pos = j % 2 ? 4 + j / 2 : j / 2;
		for (size_t n = 0; n < N; n++) {
			double q = (double)((u32(qw[(k / (size_t)per) * N + n]) >> (bits * pos)) & mask);
			double z = (double)((u32(qz[g * (N / (size_t)per) + n / (size_t)per]) >>
			                     (bits * (int)(n % (size_t)per))) & mask);
			if (!v2)
				z += 1;
			w[k * N + n] = kgb_dtype_round(KGB_DT_F16, (q - z) * sv[g * N + n]);
		}
	}
	kgb_vq_matmul(av, w, ov, M, K, N);
	free(w);
	return 0;
}

static const kgb_op_t op_gptq_gemm = {
	.name = "gptq_gemm",
	.source = "vllm",
	.category = "quantized-gemm",
	.dtypes = "f16 i32",
	.datasets = KGB_DS_VLLM,
	.summary = "out[M, N] = a[M, K] @ W, W[k, n] = fp16((q[k, n] - z[g, n]) * scales[g, n]), g = "
	           "b_g_idx[k] (or k / group_size when b_g_idx is empty); q packed along K (b_q_weight [K*bit/32, "
	           "N]), in gptq_shuffle's layout when use_exllama (no permutation), plain otherwise; z packed "
	           "along N in b_gptq_qzeros [K/G, N*bit/32], stored as z - 1 unless use_v2_format; bit 4 or 8",
	.signature = "a:in(f16) b_q_weight:in(i32) b_gptq_qzeros:in(i32) b_gptq_scales:in(f16) b_g_idx:in(i32) "
	             "use_exllama:i32 use_v2_format:i32 bit:i64 out:out(f16)",
	.grids = {
		{ .params = { { "bit", "4" }, { "exllama", "no yes" }, { "g_idx", "seq" }, { "format", "v1" },
		              { "group_size", "128" }, { "mnk", "[1,256,256]" } } },
		{ .params = { { "bit", "4 8" }, { "exllama", "no" }, { "g_idx", "seq act_order" },
		              { "format", "v1 v2" }, { "group_size", "128" }, { "mnk", "[7,256,512]" } } },
		{ .params = { { "bit", "4 8" }, { "exllama", "yes" }, { "g_idx", "seq" }, { "format", "v1" },
		              { "group_size", "64 128" }, { "mnk", "[7,256,512] [64,2048,2048]" } } },
	},
	.setup = gg_setup,
	.ref = gg_ref,
	.gen_inputs = gg_gen,
	.declared_cases = 4,
	.deviation = "bit 4/8 x plain layout with sequential or act-order g_idx x v1/v2 zero points, and the "
	             "exllama layout (shuffled, sequential groups) x group 64/128 x 2 shapes (18); 2- and "
	             "3-bit weights are not covered",
	.smoke_grids = 1,
};

/* ======================================================================
 * marlin_int4_fp8_preprocess
 * ====================================================================== */

static int m48_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "kn");
	bool awq = strcmp(kgb_case_pstr(c, "format", "gptq"), "awq") == 0;
	bool inplace = strcmp(kgb_case_pstr(c, "inplace", "no"), "yes") == 0;
	int64_t K, N, sh[2];
	kgb_tensor_t *t;
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 2 || p->dims[0] % 128 || p->dims[1] % 32) {
		kgb_err(err, errlen, "op %s case %u: kn must be [K,N], K a multiple of 128, N of 32", c->op->name,
		        c->index);
		return -1;
	}
	K = p->dims[0];
	N = p->dims[1];
	sh[0] = awq ? K : K / 8;   /* AWQ packs along N, GPTQ along K */
	sh[1] = awq ? N / 8 : N;
	t = kgb_case_add_tensor(c, "qweight", inplace ? KGB_ROLE_INOUT : KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	t->gen = KGB_GEN_INT;
	t->lo = -2147483648.0;
	t->hi = 2147483647.0;
	if (awq) {
		int64_t zs[2] = { K / 128, N / 8 };
		t = kgb_case_add_tensor(c, "qzeros", KGB_ROLE_IN, KGB_DT_I32, 2, zs);
		t->gen = KGB_GEN_INT;
		t->lo = -2147483648.0;
		t->hi = 2147483647.0;
	}
	kgb_case_add_scalar(c, "inplace", KGB_DT_I32, inplace);
	if (!inplace)
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_I32, 2, sh);
	kgb_case_set_sym(c, "K", K);
	kgb_case_set_sym(c, "N", N);
	c->reduce_len = 1;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = K * N >= (int64_t)1 << 23 && !inplace;
	return 0;
}

static int m48_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *w = kgb_vq_t(c, "qweight"), *zt = kgb_case_tensor(c, "qzeros");
	double *wv = kgb_vq_v(c, b, "qweight"), *zv = kgb_vq_v(c, b, "qzeros");
	double *ov = kgb_vq_v(c, b, "out") ? kgb_vq_v(c, b, "out") : wv;
	size_t cols = (size_t)w->shape[1], rows = (size_t)w->shape[0];
	size_t G = zt ? rows / (size_t)zt->shape[0] : 1;
	for (size_t r = 0; r < rows; r++)
		for (size_t n = 0; n < cols; n++) {
			uint32_t v = u32(wv[r * cols + n]), z = zv ? u32(zv[(r / G) * cols + n]) : 0x88888888u, o = 0;
			for (int i = 0; i < 8; i++) {
				uint32_t q = (v >> (4 * i)) & 0xf, zz = (z >> (4 * i)) & 0xf;
				o |= (q >= zz ? q - zz : 15 - q) << (4 * i);
			}
			ov[r * cols + n] = i32(o);
		}
	return 0;
}

static const kgb_op_t op_marlin_int4_fp8_preprocess = {
	.name = "marlin_int4_fp8_preprocess",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "re-encodes every 4-bit weight q of qweight (8 per int32) for Marlin's int4 x fp8 path: "
	           "with zero point z (8 for GPTQ, no qzeros; AWQ: the nibble at the same position of "
	           "qzeros [K/G, N/8], group G = K / qzeros rows) q becomes q - z if q >= z, else 15 - q; "
	           "into out, or in place when inplace",
	.signature = "qweight:in|inout(i32) qzeros:in(i32, AWQ) inplace:i32 out:out(i32, not in place)",
	.grids = {
		{ .params = { { "format", "gptq awq" }, { "inplace", "no yes" }, { "kn", "[128,256]" } } },
		{ .params = { { "format", "gptq awq" }, { "inplace", "no yes" }, { "kn", "[4096,4096]" } } },
	},
	.setup = m48_setup,
	.ref = m48_ref,
	.inplace = true, /* qweight is INOUT in the inplace cases */
	.declared_cases = 8,
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_quant_gptq[] = {
	&op_gptq_shuffle,
	&op_gptq_gemm,
	&op_marlin_int4_fp8_preprocess,
	NULL,
};
