/* GGML / GGUF block formats as vLLM's gguf kernels use them (docs/formats-ggml.md):
 * ggml_dequantize, and the products with activations quantised on the fly to q8_1
 * (ggml_mul_mat_vec_a8 for a few vectors, ggml_mul_mat_a8 for a batch).
 *
 * Covered block types: Q4_0 (2), Q4_1 (3), Q5_0 (6), Q5_1 (7), Q8_0 (8). A weight row
 * of n values is n / 32 blocks, stored back to back as raw bytes (little-endian). */
#include <math.h>
#include <string.h>

#include "ops.h"
#include "util.h"
#include "vllm_quant_common.h"

#define QK 32

typedef struct {
	const char *name;
	int id;          /* GGMLQuantizationType */
	int bytes;       /* per block of 32 */
	bool has_min;    /* d and m (Q4_1, Q5_1) */
	int bits;        /* 4, 5, 8 */
} gtype_t;

static const gtype_t gtypes[] = {
	{ "q4_0", 2, 18, false, 4 }, { "q4_1", 3, 20, true, 4 }, { "q5_0", 6, 22, false, 5 },
	{ "q5_1", 7, 24, true, 5 },  { "q8_0", 8, 34, false, 8 },
};

static const gtype_t *gtype(const kgb_case_t *c)
{
	const char *s = kgb_case_pstr(c, "type", "q4_0");
	for (size_t i = 0; i < KGB_ARRAY_LEN(gtypes); i++)
		if (strcmp(gtypes[i].name, s) == 0)
			return &gtypes[i];
	KGB_ASSERT_MSG(0, "op %s: unknown ggml type '%s'", c->op->name, s);
}

static unsigned byte(const double *b, size_t i)
{
	return (unsigned)b[i] & 0xffu;
}

static double half_at(const double *b, size_t i)
{
	return (double)kgb_f16_to_f32((uint16_t)(byte(b, i) | byte(b, i + 1) << 8));
}

/* Decode one block at blk into 32 values: v[j] = d * q[j] - offset (Q4_0: q - 8,
 * Q5_0: q - 16, Q8_0: signed q) or d * q[j] + m (Q4_1, Q5_1). Also returns the raw
 * quants (as the dot products use them), d and m. */
static void decode_block(const gtype_t *g, const double *blk, double *v, int *q, double *d, double *m)
{
	size_t qs = 2;
	uint32_t qh = 0;
	*d = half_at(blk, 0);
	*m = 0;
	if (g->has_min) {
		*m = half_at(blk, 2);
		qs = 4;
	}
	if (g->bits == 5) {
		qh = byte(blk, qs) | byte(blk, qs + 1) << 8 | byte(blk, qs + 2) << 16 | (uint32_t)byte(blk, qs + 3) << 24;
		qs += 4;
	}
	for (int j = 0; j < QK; j++) {
		int raw;
		if (g->bits == 8) {
			raw = (int8_t)byte(blk, qs + (size_t)j);
		} else {
			unsigned b = byte(blk, qs + (size_t)(j % 16));
			raw = (int)(j < 16 ? b & 0xf : b >> 4);
			if (g->bits == 5)
				raw |= (int)((qh >> j) & 1) << 4;
		}
		q[j] = raw;
		if (g->has_min)
			v[j] = *d * raw + *m;
		else
			v[j] = *d * (raw - (g->bits == 4 ? 8 : g->bits == 5 ? 16 : 0));
	}
}

/* Fill W with valid blocks: random quants, d of magnitude [0.002, 0.02) with a random
 * sign, m in [-0.1, 0.1) (a raw random half could be a NaN or huge). */
static void fill_blocks(const gtype_t *g, kgb_rng_t *rng, double *w, size_t nblocks)
{
	for (size_t b = 0; b < nblocks; b++) {
		double *blk = w + b * (size_t)g->bytes;
		double d = (0.002 + 0.018 * kgb_rng_uniform(rng)) * (kgb_rng_next(rng) & 1 ? -1 : 1);
		uint16_t h = kgb_f32_to_f16((float)d);
		for (int i = 0; i < g->bytes; i++)
			blk[i] = (double)(kgb_rng_next(rng) & 0xff);
		blk[0] = h & 0xff;
		blk[1] = h >> 8;
		if (g->has_min) {
			h = kgb_f32_to_f16((float)(0.2 * kgb_rng_uniform(rng) - 0.1));
			blk[2] = h & 0xff;
			blk[3] = h >> 8;
		}
	}
}

/* ======================================================================
 * ggml_dequantize
 * ====================================================================== */

static int deq_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const gtype_t *g = gtype(c);
	const kgb_pval_t *p = kgb_case_param(c, "mn");
	kgb_dtype_t dt;
	int64_t sh[2];
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 2 || p->dims[1] % QK) {
		kgb_err(err, errlen, "op %s case %u: mn must be [m, n] with n a multiple of 32", c->op->name, c->index);
		return -1;
	}
	sh[0] = p->dims[0];
	sh[1] = p->dims[1] / QK * g->bytes;
	kgb_case_add_tensor(c, "W", KGB_ROLE_IN, KGB_DT_U8, 2, sh);
	kgb_case_add_scalar(c, "type", KGB_DT_I64, g->id);
	kgb_case_add_scalar(c, "m", KGB_DT_I64, (double)p->dims[0]);
	kgb_case_add_scalar(c, "n", KGB_DT_I64, (double)p->dims[1]);
	if (kgb_dtype_parse(kgb_case_pstr(c, "dtype", "f16"), &dt) != 0) {
		kgb_err(err, errlen, "op %s case %u: bad dtype", c->op->name, c->index);
		return -1;
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, p->dims);
	c->reduce_len = 1;
	kgb_case_default_tol(c);
	c->timed = p->dims[0] * p->dims[1] >= (int64_t)1 << 20 && dt == KGB_DT_F16;
	return 0;
}

static void w_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *w = kgb_vq_t(c, "W");
	const gtype_t *g = gtype(c);
	fill_blocks(g, rng, kgb_vq_v(c, b, "W"), w->numel / (size_t)g->bytes);
}

static int deq_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const gtype_t *g = gtype(c);
	const kgb_tensor_t *o = kgb_vq_t(c, "out");
	double *w = kgb_vq_v(c, b, "W"), *ov = kgb_vq_v(c, b, "out");
	size_t nb = o->numel / QK;
	for (size_t i = 0; i < nb; i++) {
		int q[QK];
		double d, m;
		decode_block(g, w + i * (size_t)g->bytes, ov + i * QK, q, &d, &m);
	}
	return 0;
}

#define GG_TYPES "q4_0 q4_1 q5_0 q5_1 q8_0"

static const kgb_op_t op_ggml_dequantize = {
	.name = "ggml_dequantize",
	.source = "vllm",
	.category = "quantization-format",
	.dtypes = "u8 -> f16 bf16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "out[m, n] = the GGUF blocks of W [m, n/32 * block bytes] decoded: per block of 32 a fp16 "
	           "scale d (and for q4_1/q5_1 a fp16 min m), then the quants; q4_0: d * (q - 8), q4_1: d * q + "
	           "m, q5_0: d * (q - 16), q5_1: d * q + m (5th bit from a 32-bit mask), q8_0: d * int8 q. "
	           "type is the GGML type id (2, 3, 6, 7, 8)",
	.signature = "W:in(u8) type:i64 m:i64 n:i64 out:out(f16|bf16|f32)",
	.grids = {
		{ .params = { { "type", GG_TYPES }, { "dtype", "f16" }, { "mn", "[4,256]" } } },
		{ .params = { { "type", GG_TYPES }, { "dtype", "f16 bf16 f32" }, { "mn", "[64,1024] [256,4096]" } } },
	},
	.setup = deq_setup,
	.ref = deq_ref,
	.gen_inputs = w_gen,
	.declared_cases = 8,
	.deviation = "5 legacy block types x f16/bf16/f32 x 2 shapes plus 5 small smoke cases (35); the "
	             "K-quants (Q2_K..Q6_K) and the IQ types are not covered yet",
	.smoke_grids = 1,
};

/* ======================================================================
 * ggml_mul_mat_vec_a8 and ggml_mul_mat_a8
 * ====================================================================== */

static int mm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const gtype_t *g = gtype(c);
	const kgb_pval_t *p = kgb_case_param(c, "bnk");
	kgb_dtype_t dt = KGB_DT_F16;
	int64_t sh[2];
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3 || p->dims[2] % QK) {
		kgb_err(err, errlen, "op %s case %u: bnk must be [batch, rows, cols] with cols a multiple of 32",
		        c->op->name, c->index);
		return -1;
	}
	kgb_dtype_parse(kgb_case_pstr(c, "dtype", "f16"), &dt);
	sh[0] = p->dims[1];
	sh[1] = p->dims[2] / QK * g->bytes;
	kgb_case_add_tensor(c, "W", KGB_ROLE_IN, KGB_DT_U8, 2, sh);
	sh[0] = p->dims[0];
	sh[1] = p->dims[2];
	kgb_case_add_tensor(c, "X", KGB_ROLE_IN, dt, 2, sh);
	kgb_case_add_scalar(c, "type", KGB_DT_I64, g->id);
	kgb_case_add_scalar(c, "row", KGB_DT_I64, (double)p->dims[1]);
	sh[1] = p->dims[1];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, sh);
	KGB_SYMS(c, "batch rows cols", p->dims[0], p->dims[1], p->dims[2]);
	c->reduce_len = (double)p->dims[2];
	kgb_case_default_tol(c);
	c->timed = p->dims[0] * p->dims[1] * p->dims[2] >= (int64_t)1 << 24;
	return 0;
}

/* The activations as the kernels see them: per block of 32, d = max|x| / 127 (fp32),
 * q = roundf(x / d) (ties away from zero), and the block's d and sum of x stored as
 * fp16. */
static void q8_1(const double *x, int *q, double *d16, double *s16)
{
	double amax = 0, sum = 0, d;
	for (int j = 0; j < QK; j++) {
		amax = fmax(amax, fabs(x[j]));
		sum = kgb_vq_f32(sum + x[j]);
	}
	d = kgb_vq_f32(amax / 127.0);
	for (int j = 0; j < QK; j++)
		q[j] = amax == 0 ? 0 : (int)round(kgb_vq_f32(x[j] / d));
	*d16 = (double)kgb_f16_to_f32(kgb_f32_to_f16((float)d));
	*s16 = (double)kgb_f16_to_f32(kgb_f32_to_f16((float)sum));
}

/* Activations of every row of X quantised to q8_1 (see q8_1). */
typedef struct {
	int *q;
	double *d, *s;
	size_t nb;
} xq_t;

static void xq_make(xq_t *a, const double *xv, size_t rows, size_t K)
{
	a->nb = K / QK;
	a->q = kgb_xmalloc(rows * K * sizeof *a->q);
	a->d = kgb_xmalloc(rows * a->nb * sizeof *a->d);
	a->s = kgb_xmalloc(rows * a->nb * sizeof *a->s);
	for (size_t v = 0; v < rows; v++)
		for (size_t i = 0; i < a->nb; i++)
			q8_1(xv + v * K + i * QK, a->q + v * K + i * QK, &a->d[v * a->nb + i], &a->s[v * a->nb + i]);
}

static void xq_free(xq_t *a)
{
	free(a->q);
	free(a->d);
	free(a->s);
}

/* One weight row decoded: raw quants, and each block's d and m. */
typedef struct {
	int *q;
	double *d, *m;
} wrow_t;

static void wrow_decode(const gtype_t *g, const double *wrow, size_t nb, wrow_t *o)
{
	for (size_t i = 0; i < nb; i++) {
		double wv[QK];
		decode_block(g, wrow + i * (size_t)g->bytes, wv, o->q + i * QK, &o->d[i], &o->m[i]);
	}
}

/* One output: a decoded weight row against activation row v. */
static double wrow_dot(const gtype_t *g, const wrow_t *w, const xq_t *a, size_t v)
{
	double acc = 0;
	for (size_t i = 0; i < a->nb; i++) {
		double dot = 0, d8 = a->d[v * a->nb + i], s8 = a->s[v * a->nb + i], d = w->d[i];
		const int *x = a->q + (v * a->nb + i) * QK, *q = w->q + i * QK;
		for (int j = 0; j < QK; j++)
			dot += (double)q[j] * x[j];
		if (g->has_min)
			acc += d * d8 * dot + w->m[i] * s8;
		else if (g->bits == 8)
			acc += d * d8 * dot;
		else
			acc += d * (d8 * dot - (g->bits == 4 ? 8.0 : 16.0) * s8);
	}
	return acc;
}

static void wrow_alloc(wrow_t *w, size_t nb)
{
	w->q = kgb_xmalloc(nb * QK * sizeof *w->q);
	w->d = kgb_xmalloc(nb * sizeof *w->d);
	w->m = kgb_xmalloc(nb * sizeof *w->m);
}

static void wrow_free(wrow_t *w)
{
	free(w->q);
	free(w->d);
	free(w->m);
}

/* One output: weight row `wrow` (raw bytes) against activation row v. */
static double row_dot(const gtype_t *g, const double *wrow, const xq_t *a, size_t v)
{
	wrow_t w;
	double r;
	wrow_alloc(&w, a->nb);
	wrow_decode(g, wrow, a->nb, &w);
	r = wrow_dot(g, &w, a, v);
	wrow_free(&w);
	return r;
}

static int mm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const gtype_t *g = gtype(c);
	const kgb_tensor_t *x = kgb_vq_t(c, "X"), *o = kgb_vq_t(c, "out");
	size_t B = (size_t)x->shape[0], K = (size_t)x->shape[1], R = (size_t)o->shape[1];
	double *w = kgb_vq_v(c, b, "W"), *ov = kgb_vq_v(c, b, "out");
	xq_t a;
	wrow_t wr;
	xq_make(&a, kgb_vq_v(c, b, "X"), B, K);
	wrow_alloc(&wr, a.nb);
	for (size_t r = 0; r < R; r++) {
		wrow_decode(g, w + r * a.nb * (size_t)g->bytes, a.nb, &wr);
		for (size_t v = 0; v < B; v++)
			ov[v * R + r] = wrow_dot(g, &wr, &a, v);
	}
	wrow_free(&wr);
	xq_free(&a);
	return 0;
}

#define GG_SUMMARY \
	"out[b, r] = sum over the 32-blocks i of row r of W (GGUF, as ggml_dequantize) of the block's dot " \
	"product with X[b] quantised to q8_1: per block d8 = max|x| / 127, q8 = roundf(x / d8) (ties away " \
	"from zero), d8 and s8 = sum(x) kept as fp16; q4_0: d*(d8*sum(q*q8) - 8*s8), q5_0: d*(d8*sum(q*q8) " \
	"- 16*s8), q4_1/q5_1: d*d8*sum(q*q8) + m*s8, q8_0: d*d8*sum(q*q8) (q the raw unsigned quants, " \
	"signed for q8_0); out has X's dtype"

/* ggml_mul_mat_vec_a8 and ggml_mul_mat_a8 differ only by their batch sizes (vLLM's
 * MMVQ and MMQ paths): one setup, reference and input generator. */
#define GG_MM_OP(NAME, WHAT, DEV, ...)                                                              \
	static const kgb_op_t op_##NAME = {                                                         \
		.name = #NAME, .source = "vllm", .category = "quantized-gemm",                           \
		.dtypes = "u8 f16 bf16 f32", .datasets = KGB_DS_VLLM,                                   \
		.summary = GG_SUMMARY WHAT,                                                              \
		.signature = "W:in(u8) X:in type:i64 row:i64 out:out",                                   \
		.grids = { __VA_ARGS__ },                                                                \
		.setup = mm_setup, .ref = mm_ref, .gen_inputs = w_gen,                                   \
		.declared_cases = 13,                                                                    \
		.deviation = "the 5 legacy block types only (K-quants and IQ types left out): 5 types x " \
		             "3 dtypes plus " DEV,                                                       \
		.smoke_grids = 1,                                                                        \
	}

GG_MM_OP(ggml_mul_mat_vec_a8, "; a few vectors (batch 1..8)", "batched and smoke cases (23)",
         { .params = { { "type", "q4_0 q8_0" }, { "dtype", "f16" }, { "bnk", "[1,64,256]" } } },
         { .params = { { "type", GG_TYPES }, { "dtype", "f16 bf16 f32" }, { "bnk", "[1,256,512]" } } },
         { .params = { { "type", "q4_0 q5_1 q8_0" }, { "dtype", "f16" }, { "bnk", "[4,512,1024] [8,4096,4096]" } } });

GG_MM_OP(ggml_mul_mat_a8, "; a batch of tokens (the MMQ path)", "a large batch and smoke cases (20)",
         { .params = { { "type", "q4_0 q8_0" }, { "dtype", "f16" }, { "bnk", "[16,64,256]" } } },
         { .params = { { "type", GG_TYPES }, { "dtype", "f16 bf16 f32" }, { "bnk", "[33,256,512]" } } },
         { .params = { { "type", "q4_0 q5_1 q8_0" }, { "dtype", "f16" }, { "bnk", "[128,2048,2048]" } } });

/* ======================================================================
 * ggml_moe_a8_vec and ggml_moe_a8 (mixture of experts)
 * ====================================================================== */

/* The row tile of vLLM's GGUF MoE kernels for the legacy types on CUDA
 * (ggml_moe_get_block_size): sorted_token_ids is padded per expert to a multiple. */
#define MOE_BLOCK 4

static int moe_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const gtype_t *g = gtype(c);
	const kgb_pval_t *mp = kgb_case_param(c, "moe"), *rp = kgb_case_param(c, "rk");
	bool vec = strcmp(c->op->name, "ggml_moe_a8_vec") == 0;
	kgb_dtype_t dt = KGB_DT_F16;
	int64_t T, E, top, R, K, sh[3], n;
	kgb_tensor_t *t;
	if (!mp || mp->ndim != 3 || !rp || rp->ndim != 2 || rp->dims[1] % QK) {
		kgb_err(err, errlen, "op %s case %u: moe must be [tokens, experts, top_k] and rk [rows, cols] "
		        "with cols a multiple of 32", c->op->name, c->index);
		return -1;
	}
	kgb_dtype_parse(kgb_case_pstr(c, "dtype", "f16"), &dt);
	T = mp->dims[0];
	E = mp->dims[1];
	top = mp->dims[2];
	R = rp->dims[0];
	K = rp->dims[1];
	sh[0] = T;
	sh[1] = K;
	kgb_case_add_tensor(c, "X", KGB_ROLE_IN, dt, 2, sh);
	sh[0] = E;
	sh[1] = R;
	sh[2] = K / QK * g->bytes;
	kgb_case_add_tensor(c, "W", KGB_ROLE_IN, KGB_DT_U8, 3, sh);
	if (vec) {
		sh[0] = T;
		sh[1] = top;
		t = kgb_case_add_tensor(c, "topk_ids", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
		t->gen = KGB_GEN_INT;
		t->lo = 0;
		t->hi = (double)(E - 1);
		kgb_case_add_scalar(c, "top_k", KGB_DT_I64, (double)top);
		kgb_case_add_scalar(c, "type", KGB_DT_I64, g->id);
		kgb_case_add_scalar(c, "row", KGB_DT_I64, (double)R);
		kgb_case_add_scalar(c, "tokens", KGB_DT_I64, (double)T);
	} else {
		/* room for every (token, k) plus a partial block per expert */
		n = T * top + E * (MOE_BLOCK - 1);
		n = (n + MOE_BLOCK - 1) / MOE_BLOCK * MOE_BLOCK;
		kgb_case_add_tensor(c, "sorted_token_ids", KGB_ROLE_IN, KGB_DT_I32, 1, &n)->gen = KGB_GEN_ZERO;
		n /= MOE_BLOCK;
		kgb_case_add_tensor(c, "expert_ids", KGB_ROLE_IN, KGB_DT_I32, 1, &n)->gen = KGB_GEN_ZERO;
		n = 1;
		kgb_case_add_tensor(c, "num_tokens_post_padded", KGB_ROLE_IN, KGB_DT_I32, 1, &n)->gen = KGB_GEN_ZERO;
		kgb_case_add_scalar(c, "type", KGB_DT_I64, g->id);
		kgb_case_add_scalar(c, "row", KGB_DT_I64, (double)R);
		kgb_case_add_scalar(c, "top_k", KGB_DT_I64, (double)top);
		kgb_case_add_scalar(c, "tokens", KGB_DT_I64, (double)T);
		kgb_case_set_sym(c, "block_size", MOE_BLOCK);
	}
	sh[0] = T * top;
	sh[1] = R;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, sh);
	kgb_case_set_sym(c, "experts", E);
	kgb_case_set_sym(c, "cols", K);
	c->reduce_len = (double)K;
	kgb_case_default_tol(c);
	c->timed = T * top * R * K >= (int64_t)1 << 24;
	return 0;
}

/* Weights as w_gen; for ggml_moe_a8 also the routing as vLLM's moe_align_block_size
 * lays it out: random top-k experts per token (distinct), the flat ids t * top_k + j
 * grouped by expert, each expert's run padded with tokens * top_k to a multiple of
 * the block size, one expert id per block, and the padded length. */
static void moe_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *st = kgb_case_tensor(c, "sorted_token_ids"), *x = kgb_vq_t(c, "X");
	const kgb_tensor_t *w = kgb_vq_t(c, "W");
	size_t T = (size_t)x->shape[0], E = (size_t)w->shape[0], top = (size_t)kgb_vq_scalar(c, "top_k");
	double *sv, *ev;
	int *ids;
	size_t pos = 0;
	w_gen(c, rng, b);
	if (!st)
		return;
	sv = kgb_vq_v(c, b, "sorted_token_ids");
	ev = kgb_vq_v(c, b, "expert_ids");
	ids = kgb_xmalloc(T * top * sizeof *ids);
	for (size_t t = 0; t < T; t++)
		for (size_t j = 0; j < top; j++) {
			int e;
			bool dup;
			do {
				e = (int)(kgb_rng_next(rng) % E);
				dup = false;
				for (size_t i = 0; i < j; i++)
					dup |= ids[t * top + i] == e;
			} while (dup);
			ids[t * top + j] = e;
		}
	for (size_t i = 0; i < st->numel; i++)
		sv[i] = (double)(T * top);
	for (size_t i = 0; i < st->numel / MOE_BLOCK; i++)
		ev[i] = 0;
	for (size_t e = 0; e < E; e++) {
		size_t start = pos;
		for (size_t f = 0; f < T * top; f++)
			if ((size_t)ids[f] == e)
				sv[pos++] = (double)f;
		if (pos == start)
			continue;
		pos = (pos + MOE_BLOCK - 1) / MOE_BLOCK * MOE_BLOCK;
		for (size_t k = start / MOE_BLOCK; k < pos / MOE_BLOCK; k++)
			ev[k] = (double)e;
	}
	kgb_vq_v(c, b, "num_tokens_post_padded")[0] = (double)pos;
	free(ids);
}

static int moe_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const gtype_t *g = gtype(c);
	const kgb_tensor_t *x = kgb_vq_t(c, "X"), *w = kgb_vq_t(c, "W"), *o = kgb_vq_t(c, "out");
	size_t T = (size_t)x->shape[0], K = (size_t)x->shape[1], E = (size_t)w->shape[0];
	size_t R = (size_t)o->shape[1], top = (size_t)kgb_vq_scalar(c, "top_k");
	size_t wst = (size_t)w->shape[1] * (size_t)w->shape[2];
	double *wv = kgb_vq_v(c, b, "W"), *ov = kgb_vq_v(c, b, "out"), *tk = kgb_vq_v(c, b, "topk_ids");
	double *sv = kgb_vq_v(c, b, "sorted_token_ids"), *ev = kgb_vq_v(c, b, "expert_ids");
	xq_t a;
	xq_make(&a, kgb_vq_v(c, b, "X"), T, K);
	if (tk) {
		for (size_t f = 0; f < T * top; f++) {
			size_t e = (size_t)tk[f];
			if (tk[f] < 0 || e >= E)
				goto bad;
			for (size_t r = 0; r < R; r++)
				ov[f * R + r] = row_dot(g, wv + e * wst + r * a.nb * (size_t)g->bytes, &a, f / top);
		}
	} else {
		size_t n = (size_t)kgb_vq_v(c, b, "num_tokens_post_padded")[0];
		for (size_t i = 0; i < n; i++) {
			size_t f = (size_t)sv[i], e = (size_t)ev[i / MOE_BLOCK];
			if (f >= T * top)
				continue;
			if (e >= E)
				goto bad;
			for (size_t r = 0; r < R; r++)
				ov[f * R + r] = row_dot(g, wv + e * wst + r * a.nb * (size_t)g->bytes, &a, f / top);
		}
	}
	xq_free(&a);
	return 0;
bad:
	xq_free(&a);
	return -1;
}

/* ggml_moe_a8_vec and ggml_moe_a8: the same grids' shape over other routings (top-k
 * ids, or moe_align_block_size's layout), one setup, reference and generator. */
#define GG_MOE_OP(NAME, SUMMARY, SIG, ...)                                                                \
	static const kgb_op_t op_##NAME = {                                                               \
		.name = #NAME, .source = "vllm", .category = "moe", .dtypes = "u8 f16 bf16 f32 i32",           \
		.datasets = KGB_DS_VLLM,                                                                      \
		.summary = SUMMARY,                                                                           \
		.signature = SIG,                                                                             \
		.grids = { __VA_ARGS__ },                                                                     \
		.setup = moe_setup, .ref = moe_ref, .gen_inputs = moe_gen,                                    \
		.declared_cases = 7,                                                                          \
		.deviation = "5 legacy block types x f16 plus 4 bf16/f32 cases and a smoke case (10); K-quants " \
		             "and IQ types left out",                                                         \
		.smoke_grids = 1,                                                                             \
	}

GG_MOE_OP(ggml_moe_a8_vec,
          "out[t * top_k + j, r] = row r of expert topk_ids[t, j]'s GGUF weight W [experts, rows, "
          "cols/32 * block bytes] times X[t] quantised to q8_1, as ggml_mul_mat_vec_a8 "
          "(docs/formats-ggml.md); out [tokens * top_k, rows] in X's dtype",
          "X:in W:in(u8) topk_ids:in(i32) top_k:i64 type:i64 row:i64 tokens:i64 out:out",
          { .params = { { "type", "q4_0" }, { "dtype", "f16" }, { "moe", "[2,4,2]" }, { "rk", "[64,256]" } } },
          { .params = { { "type", GG_TYPES }, { "dtype", "f16" }, { "moe", "[4,4,2]" }, { "rk", "[128,256]" } } },
          { .params = { { "type", "q4_0 q8_0" }, { "dtype", "bf16 f32" }, { "moe", "[8,16,4]" },
                        { "rk", "[512,1024]" } } });

GG_MOE_OP(ggml_moe_a8,
          "for every i < num_tokens_post_padded[0] with f = sorted_token_ids[i] < tokens * top_k: "
          "out[f, r] = row r of expert expert_ids[i / 4]'s GGUF weight times X[f / top_k] quantised "
          "to q8_1 (as ggml_mul_mat_a8); the routing is moe_align_block_size's layout with blocks of "
          "4 (symbol block_size), padding entries hold tokens * top_k; out [tokens * top_k, rows]",
          "X:in W:in(u8) sorted_token_ids:in(i32) expert_ids:in(i32) num_tokens_post_padded:in(i32) "
          "type:i64 row:i64 top_k:i64 tokens:i64 out:out",
          { .params = { { "type", "q4_0" }, { "dtype", "f16" }, { "moe", "[4,4,2]" }, { "rk", "[64,256]" } } },
          { .params = { { "type", GG_TYPES }, { "dtype", "f16" }, { "moe", "[16,4,2]" }, { "rk", "[128,256]" } } },
          { .params = { { "type", "q4_0 q8_0" }, { "dtype", "bf16 f32" }, { "moe", "[64,16,4]" },
                        { "rk", "[256,1024]" } } });

const kgb_op_t *const kgb_ops_vllm_quant_ggml[] = {
	&op_ggml_dequantize,
	&op_ggml_mul_mat_vec_a8,
	&op_ggml_mul_mat_a8,
	&op_ggml_moe_a8_vec,
	&op_ggml_moe_a8,
	NULL,
};
