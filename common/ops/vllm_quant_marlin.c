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

/* Repack one expert into out (K * N / pf words): tiles of 16 x 64 (32 x 32 for 8-bit
 * activations), tile (kt, nt) at (kt * n_tiles + nt) * tile words; inside a tile,
 * "thread" t of "warp" w (4 x 32) gathers the 8 values its tensor-core fragment needs
 * and packs them in the order the kernel unpacks them. */
static void repack(const mw_t *m, bool a8, double *out)
{
	static const int tc_off[4] = { 0, 1, 8, 9 };
	static const int p4[8] = { 0, 2, 4, 6, 1, 3, 5, 7 }, p4a8[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	static const int p8[4] = { 0, 2, 1, 3 };
	size_t pf = 32 / (size_t)m->bits, TK = a8 ? 32 : 16, TN = a8 ? 32 : 64;
	size_t k_tiles = m->K / TK, n_tiles = m->N / TN, tile = TK * TN / pf;
	for (size_t kt = 0; kt < k_tiles; kt++)
		for (size_t nt = 0; nt < n_tiles; nt++) {
			size_t base = (kt * n_tiles + nt) * tile;
			for (int w = 0; w < 4; w++)
				for (int t = 0; t < 32; t++) {
					int tc_col = t / 4, tc_row = (t % 4) * (a8 ? 4 : 2);
					size_t cur_n = (size_t)((a8 ? w / 2 : w) * 16 + tc_col);
					uint32_t vals[8], r1 = 0, r2 = 0;
					for (int i = 0; i < 4; i++) {
						size_t r0, rr1, c0, c1;
						if (a8) {
							r0 = (size_t)(tc_row + i);
							rr1 = r0 + 16;
							c0 = c1 = cur_n + (size_t)(8 * (w % 2));
						} else {
							r0 = rr1 = (size_t)(tc_row + tc_off[i]);
							c0 = cur_n;
							c1 = cur_n + 8;
						}
						vals[i] = mw_at(m, kt * TK + r0, nt * TN + c0);
						vals[4 + i] = mw_at(m, kt * TK + rr1, nt * TN + c1);
					}
					if (m->bits == 4) {
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
	t = kgb_case_add_tensor(c, "b_q_weight", KGB_ROLE_IN, KGB_DT_I32, 3, sh);
	t->gen = KGB_GEN_INT;
	t->lo = -2147483648.0;
	t->hi = 2147483647.0;
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
		for (size_t k = K; k > 1; k--) {
			size_t j = (size_t)(kgb_rng_next(rng) % k);
			double tmp = q[k - 1];
			q[k - 1] = q[j];
			q[j] = tmp;
		}
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
		{ .params = { { "bits", "4 8" }, { "perm", "none" }, { "a8", "no" }, { "ekn", "[1,64,64]" } } },
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

const kgb_op_t *const kgb_ops_vllm_quant_marlin[] = {
	&op_gptq_marlin_moe_repack,
	&op_awq_marlin_moe_repack,
	NULL,
};
