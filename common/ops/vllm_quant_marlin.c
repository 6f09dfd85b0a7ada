/* Marlin weight repacking for mixture-of-experts layers (docs/formats-gptq-awq-marlin.md):
 * gptq_marlin_moe_repack and awq_marlin_moe_repack rewrite each expert's packed 4- or
 * 8-bit weight into the tile order that Marlin's tensor-core kernels read. The result
 * is integer data and compares exactly. */
#include <string.h>

#include "ops.h"
#include "util.h"
#include "vllm_quant_common.h"

static uint32_t u32(double v)
{
	return (uint32_t)(int32_t)v;
}

static bool unpack_words(const double *words)
{
	return words != NULL;
}

typedef struct {
	const double *w;    /* one expert's packed weight */
	const double *perm; /* GPTQ act-order permutation of K, or NULL */
	bool awq;
	int bits;
	size_t K, N;
} mw_t;

/* Logical weight (k, n) of one expert. GPTQ packs 32/bits rows per int32 along K
 * (row k at bits (k % pf) * bits of word [k / pf][n]); with a permutation, row k reads
 * source row perm[k]. AWQ packs along N in its interleaved order. */
static uint32_t mw_at(const mw_t *m, size_t k, size_t n)
{
	static const int awq4[8] = { 0, 4, 1, 5, 2, 6, 3, 7 }, awq8[4] = { 0, 2, 1, 3 };
	size_t pf = 32 / (size_t)m->bits;
	uint32_t mask = (1u << m->bits) - 1;
	if (m->awq) {
		int pos = m->bits == 4 ? awq4[n % pf] : awq8[n % pf];
		return (u32(m->w[k * (m->N / pf) + n / pf]) >> (pos * m->bits)) & mask;
	}
	if (m->perm)
		k = (size_t)m->perm[k];
	return (u32(m->w[(k / pf) * m->N + n]) >> ((int)(k % pf) * m->bits)) & mask;
}

/* Walk Marlin's tile order for a K x N weight: tiles of 16 x 64 (32 x 32 for 8-bit
 * activations), tile (kt, nt) at (kt * n_tiles + nt) * tile words; inside a tile,
 * "thread" t of "warp" w (4 x 32) gathers the 8 values its tensor-core fragment needs
 * and packs them in the order the kernel unpacks them. With unpack false, the words of
 * out are formed from the logical weight m; with unpack true, the logical weight q
 * [K * N] is recovered from the Marlin words in `words` (the inverse map). */
static void marlin_walk(const mw_t *m, size_t K, size_t N, int bits, bool a8, double *out,
                        const double *words, uint32_t *q)
{
	static const int tc_off[4] = { 0, 1, 8, 9 };
	static const int p4[8] = { 0, 2, 4, 6, 1, 3, 5, 7 }, p4a8[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	static const int p8[4] = { 0, 2, 1, 3 };
	size_t pf = 32 / (size_t)bits, TK = a8 ? 32 : 16, TN = a8 ? 32 : 64;
	size_t k_tiles = K / TK, n_tiles = N / TN, tile = TK * TN / pf;
	uint32_t mask = (1u << bits) - 1;
	for (size_t kt = 0; kt < k_tiles; kt++)
		for (size_t nt = 0; nt < n_tiles; nt++) {
			size_t base = (kt * n_tiles + nt) * tile;
			for (int w = 0; w < 4; w++)
				for (int t = 0; t < 32; t++) {
					int tc_col = t / 4, tc_row = (t % 4) * (a8 ? 4 : 2);
					size_t cur_n = (size_t)((a8 ? w / 2 : w) * 16 + tc_col);
					size_t kk[8], nn[8];
					uint32_t vals[8], r1 = 0, r2 = 0;
					for (int i = 0; i < 4; i++) {
						if (a8) {
							kk[i] = kt * TK + (size_t)(tc_row + i);
							kk[4 + i] = kk[i] + 16;
							nn[i] = nn[4 + i] = nt * TN + cur_n + (size_t)(8 * (w % 2));
						} else {
							kk[i] = kk[4 + i] = kt * TK + (size_t)(tc_row + tc_off[i]);
							nn[i] = nt * TN + cur_n;
							nn[4 + i] = nn[i] + 8;
						}
					}
					if (unpack_words(words)) {
						/* inverse: read the word(s) and scatter the values */
						if (bits == 4) {
							uint32_t wd = u32(words[base + (size_t)(t * 4 + w)]);
							for (int i = 0; i < 8; i++)
								vals[a8 ? p4a8[i] : p4[i]] = (wd >> (4 * i)) & mask;
						} else {
							uint32_t w1 = u32(words[base + (size_t)(t * 8 + w * 2)]);
							uint32_t w2 = u32(words[base + (size_t)(t * 8 + w * 2 + 1)]);
							for (int i = 0; i < 4; i++) {
								int ii = a8 ? i : p8[i];
								vals[ii] = (w1 >> (8 * i)) & mask;
								vals[4 + ii] = (w2 >> (8 * i)) & mask;
							}
						}
						for (int i = 0; i < 8; i++)
							q[kk[i] * N + nn[i]] = vals[i];
						continue;
					}
					for (int i = 0; i < 8; i++)
						vals[i] = mw_at(m, kk[i], nn[i]);
					if (bits == 4) {
						for (int i = 0; i < 8; i++)
							r1 |= vals[a8 ? p4a8[i] : p4[i]] << (4 * i);
						out[base + (size_t)(t * 4 + w)] = (double)(int32_t)r1;
					} else {
						for (int i = 0; i < 4; i++) {
							int ii = a8 ? i : p8[i];
							r1 |= vals[ii] << (8 * i);
							r2 |= vals[4 + ii] << (8 * i);
						}
						out[base + (size_t)(t * 8 + w * 2)] = (double)(int32_t)r1;
						out[base + (size_t)(t * 8 + w * 2 + 1)] = (double)(int32_t)r2;
					}
				}
		}
}

/* Repack one expert into out (K * N / pf words). */
static void repack(const mw_t *m, bool a8, double *out)
{
	marlin_walk(m, m->K, m->N, m->bits, a8, out, NULL, NULL);
}

static int rp_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "ekn");
	bool awq = strcmp(c->op->name, "awq_marlin_moe_repack") == 0;
	bool a8 = strcmp(kgb_case_pstr(c, "a8", "no"), "yes") == 0;
	bool perm = strcmp(kgb_case_pstr(c, "perm", "none"), "act_order") == 0;
	int64_t bits = kgb_case_pint(c, "bits", 4), E, K, N, pf, sh[3];
	kgb_tensor_t *t;
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3 || (bits != 4 && bits != 8)) {
		kgb_err(err, errlen, "op %s case %u: ekn must be [experts, K, N] and bits 4 or 8", c->op->name,
		        c->index);
		return -1;
	}
	E = p->dims[0];
	K = p->dims[1];
	N = p->dims[2];
	pf = 32 / bits;
	if (K % (a8 ? 32 : 16) || N % 64 || (perm && (a8 || awq))) {
		kgb_err(err, errlen, "op %s case %u: K must be a multiple of %d, N of 64; act order only for GPTQ "
		        "without 8-bit activations", c->op->name, c->index, a8 ? 32 : 16);
		return -1;
	}
	sh[0] = E;
	sh[1] = awq ? K : K / pf;
	sh[2] = awq ? N / pf : N;
	kgb_vq_words(kgb_case_add_tensor(c, "b_q_weight", KGB_ROLE_IN, KGB_DT_I32, 3, sh));
	sh[1] = perm ? K : 0;
	t = kgb_case_add_tensor(c, "perm", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	t->gen = KGB_GEN_ZERO; /* rp_gen: one permutation per expert */
	kgb_case_add_scalar(c, "size_k", KGB_DT_I64, (double)K);
	kgb_case_add_scalar(c, "size_n", KGB_DT_I64, (double)N);
	kgb_case_add_scalar(c, "num_bits", KGB_DT_I64, (double)bits);
	kgb_case_add_scalar(c, "is_a_8bit", KGB_DT_I32, a8);
	sh[1] = K / 16;
	sh[2] = N * 16 / pf;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_I32, 3, sh);
	kgb_case_set_sym(c, "experts", E);
	c->reduce_len = 1;
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = E * K * N >= (int64_t)1 << 24 && !perm && !a8;
	return 0;
}

static void rp_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *pt = kgb_vq_t(c, "perm");
	double *pv = kgb_vq_v(c, b, "perm");
	size_t E = (size_t)pt->shape[0], K = (size_t)pt->shape[1];
	for (size_t e = 0; e < E; e++) {
		double *q = pv + e * K;
		for (size_t k = 0; k < K; k++)
			q[k] = (double)k;
		kgb_ops_shuffle(rng, q, K);
	}
}

static int rp_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *w = kgb_vq_t(c, "b_q_weight"), *pt = kgb_vq_t(c, "perm"), *o = kgb_vq_t(c, "out");
	size_t E = (size_t)w->shape[0], wst = (size_t)(w->shape[1] * w->shape[2]);
	size_t ost = (size_t)(o->shape[1] * o->shape[2]);
	mw_t m = {
		.awq = strcmp(c->op->name, "awq_marlin_moe_repack") == 0,
		.bits = (int)kgb_vq_scalar(c, "num_bits"),
		.K = (size_t)kgb_vq_scalar(c, "size_k"),
		.N = (size_t)kgb_vq_scalar(c, "size_n"),
	};
	double *wv = kgb_vq_v(c, b, "b_q_weight"), *pv = kgb_vq_v(c, b, "perm"), *ov = kgb_vq_v(c, b, "out");
	for (size_t i = 0; pt->shape[1] && i < pt->numel; i++)
		if (pv[i] < 0 || pv[i] >= (double)m.K)
			return -1;
	for (size_t e = 0; e < E; e++) {
		m.w = wv + e * wst;
		m.perm = pt->shape[1] ? pv + e * m.K : NULL;
		repack(&m, kgb_vq_scalar(c, "is_a_8bit") != 0, ov + e * ost);
	}
	return 0;
}

static const kgb_op_t op_gptq_marlin_moe_repack = {
	.name = "gptq_marlin_moe_repack",
	.source = "vllm",
	.category = "moe",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "per expert e: out[e] [K/16, N*bits/2] = Marlin's tile order of the GPTQ weight b_q_weight[e] "
	           "[K*bits/32, N] (rows optionally gathered by the act-order perm[e] [K]); tiles of 16 x 64 "
	           "(32 x 32 with is_a_8bit), see docs/formats-gptq-awq-marlin.md for the order inside a tile",
	.signature = "b_q_weight:in(i32) perm:in(i32, [E,K] or [E,0]) size_k:i64 size_n:i64 num_bits:i64 "
	             "is_a_8bit:i32 out:out(i32)",
	.grids = {
		{ .params = { { "bits", "4 8" }, { "perm", "none" }, { "a8", "no" }, { "ekn", "[1,64,64] [1,256,256]" } } },
		{ .params = { { "bits", "4 8" }, { "perm", "none act_order" }, { "a8", "no" },
		              { "ekn", "[4,128,256] [8,1024,2048]" } } },
		{ .params = { { "bits", "4 8" }, { "perm", "none" }, { "a8", "yes" }, { "ekn", "[4,128,256]" } } },
	},
	.setup = rp_setup,
	.ref = rp_ref,
	.gen_inputs = rp_gen,
	.declared_cases = 10,
	.deviation = "bits 4/8 x with/without act order x 2 shapes, 8-bit-activation layout, smoke (12)",
	.smoke_grids = 1,
};

static const kgb_op_t op_awq_marlin_moe_repack = {
	.name = "awq_marlin_moe_repack",
	.source = "vllm",
	.category = "moe",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "per expert e: out[e] [K/16, N*bits/2] = Marlin's tile order of the AWQ weight b_q_weight[e] "
	           "[K, N*bits/32] (packed along N in AWQ's interleaved order); perm is [E, 0] and unused; tiles "
	           "as gptq_marlin_moe_repack",
	.signature = "b_q_weight:in(i32) perm:in(i32, [E,0]) size_k:i64 size_n:i64 num_bits:i64 is_a_8bit:i32 "
	             "out:out(i32)",
	.grids = {
		{ .params = { { "bits", "4 8" }, { "a8", "no" }, { "ekn", "[1,64,64]" } } },
		{ .params = { { "bits", "4 8" }, { "a8", "no yes" }, { "ekn", "[4,128,256] [8,1024,2048]" } } },
	},
	.setup = rp_setup,
	.ref = rp_ref,
	.declared_cases = 10,
	.smoke_grids = 1,
};

/* ======================================================================
 * gptq_marlin_gemm
 * ====================================================================== */

static int mg_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t d[3], bits, G = kgb_case_pint(c, "group_size", 128), M, K, N, pf, z = 0;
	if (kgb_vq_marlin_mkn(c, d, &bits, err, errlen))
		return -1;
	M = d[0];
	K = d[1];
	N = d[2];
	pf = 32 / bits;
	if (G < 0)
		G = K;
	if (K % 16 || N % 64 || K % G || (G != K && G % 64)) {
		kgb_err(err, errlen, "op %s case %u: K must be a multiple of 16 and of group_size, N of 64",
		        c->op->name, c->index);
		return -1;
	}
	kgb_vq_add2(c, "a", KGB_ROLE_IN, KGB_DT_F16, M, K);
	/* every int32 pattern is a valid Marlin tile word */
	kgb_vq_words(kgb_vq_add2(c, "b_q_weight", KGB_ROLE_IN, KGB_DT_I32, K / 16, N * 16 / pf));
	kgb_vq_uniform(kgb_vq_add2(c, "b_scales", KGB_ROLE_IN, KGB_DT_F16, K / G, N), 0.002, 0.02);
	kgb_case_add_tensor(c, "b_zeros", KGB_ROLE_IN, KGB_DT_I32, 1, &z);
	/* mg_gen: g_idx = k / group_size, perm the identity */
	kgb_vq_add2(c, "g_idx", KGB_ROLE_IN, KGB_DT_I32, G < K ? K : 0, -1)->gen = KGB_GEN_ZERO;
	kgb_vq_add2(c, "perm", KGB_ROLE_IN, KGB_DT_I32, G < K ? K : 0, -1)->gen = KGB_GEN_ZERO;
	kgb_vq_add2(c, "workspace", KGB_ROLE_INOUT, KGB_DT_I32, N, -1)->gen = KGB_GEN_ZERO;
	kgb_vq_marlin_out(c, bits, M, N, K, (double)K);
	kgb_case_set_sym(c, "group_size", G);
	c->timed = M * K * N >= (int64_t)1 << 27;
	return 0;
}

static void mg_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *gt = kgb_vq_t(c, "g_idx");
	double *gv = kgb_vq_v(c, b, "g_idx"), *pv = kgb_vq_v(c, b, "perm");
	size_t G = (size_t)kgb_case_pint(c, "group_size", 128);
	(void)rng;
	for (size_t k = 0; k < gt->numel; k++) {
		gv[k] = (double)(k / G);
		pv[k] = (double)k;
	}
}

/* Marlin's scale layouts: grouped scales are stored with each row of 64 permuted by
 * scale_perm, per-channel scales with each row of 32 permuted by scale_perm_single;
 * stored[r * w + j] = logical[r * w + perm[j]]. */
static void scale_perms(int *grouped, int *single)
{
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			grouped[i * 8 + j] = i + 8 * j;
	for (int i = 0; i < 4; i++) {
		static const int off[8] = { 0, 1, 8, 9, 16, 17, 24, 25 };
		for (int j = 0; j < 8; j++)
			single[i * 8 + j] = 2 * i + off[j];
	}
}

static int mg_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *a = kgb_vq_t(c, "a"), *st = kgb_vq_t(c, "b_scales"), *o = kgb_vq_t(c, "out");
	size_t M = (size_t)a->shape[0], K = (size_t)a->shape[1], N = (size_t)o->shape[1];
	size_t G = K / (size_t)st->shape[0], width = G < K ? 64 : 32;
	int bits = (int)kgb_vq_scalar(c, "num_bits"), grouped[64], single[32];
	const int *sp = G < K ? grouped : single;
	double *sv = kgb_vq_v(c, b, "b_scales"), *w = kgb_xmalloc(K * N * sizeof *w);
	double *logical = kgb_xmalloc(st->numel * sizeof *logical);
	uint32_t *q = kgb_xmalloc(K * N * sizeof *q);
	double bias = bits == 4 ? 8 : 128;
	scale_perms(grouped, single);
	for (size_t r = 0; r < st->numel / width; r++)
		for (size_t j = 0; j < width; j++)
			logical[r * width + (size_t)sp[j]] = sv[r * width + j];
	marlin_walk(NULL, K, N, bits, false, NULL, kgb_vq_v(c, b, "b_q_weight"), q);
	for (size_t k = 0; k < K; k++)
		for (size_t n = 0; n < N; n++)
			w[k * N + n] = kgb_dtype_round(KGB_DT_F16, ((double)q[k * N + n] - bias) * logical[(k / G) * N + n]);
	kgb_vq_matmul(kgb_vq_v(c, b, "a"), w, kgb_vq_v(c, b, "out"), M, K, N);
	free(w);
	free(logical);
	free(q);
	return 0;
}

static const kgb_op_t op_gptq_marlin_gemm = {
	.name = "gptq_marlin_gemm",
	.dtypes = "f16 i32",
	KGB_VQ_MARLIN_GEMM(mg_setup, mg_ref, mg_gen),
	.declared_cases = 8,
	.deviation = "the public 8 shapes (uint4b8, group 128, identity act order) plus uint8b128 and "
	             "per-channel scales (12); b_q_type is passed as num_bits; zero points, act order with a "
	             "real permutation, bias and fp8 activations are not covered",
	.summary = "out[M, N] = a[M, K] @ W, W[k, n] = fp16((q[k, n] - bias) * s[k / G, n]) for the weight "
	           "types uint4b8 (num_bits 4, bias 8) and uint8b128 (8, 128); q in Marlin's tile layout "
	           "(b_q_weight [K/16, N*16/pf], as gptq_marlin_moe_repack writes one expert), s in Marlin's "
	           "permuted scale layout (b_scales [K/G, N]); g_idx = k / G and perm = identity when grouped, "
	           "both empty per channel; workspace [N] int32 zeros that must stay zero",
	.signature = "a:in(f16) b_q_weight:in(i32) b_scales:in(f16) b_zeros:in(i32, empty) g_idx:in(i32) "
	             "perm:in(i32) workspace:inout(i32) num_bits:i64 size_m:i64 size_n:i64 size_k:i64 out:out(f16)",
	.grids = {
		{ .params = { { "bits", "4" }, { "group_size", "128" }, { "mkn", "[1,256,256] [32,256,256]" } } },
		{ .params = { { "bits", "4" }, { "group_size", "128" },
		              { "mkn", "[64,256,512] [128,512,256] [128,1024,512] [256,1024,512] [512,1024,512] "
		                       "[1024,2048,1024]" } } },
		{ .params = { { "bits", "4 8" }, { "group_size", "-1 128" }, { "mkn", "[16,512,256]" } } },
	},
};

const kgb_op_t *const kgb_ops_vllm_quant_marlin[] = {
	&op_gptq_marlin_moe_repack,
	&op_awq_marlin_moe_repack,
	&op_gptq_marlin_gemm,
	NULL,
};
