/* GPTQ weight layout operators of vLLM (docs/formats-gptq-awq-marlin.md).
 *
 * gptq_shuffle rewrites a GPTQ weight in place into the layout of the exllama kernels:
 * first, when a permutation is given (act-order), the rows are gathered into
 * sequential order; then, for 4-bit weights, the nibbles of every int32 are
 * interleaved. The result is integer data and compares exactly. */
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

const kgb_op_t *const kgb_ops_vllm_quant_gptq[] = {
	&op_gptq_shuffle,
	NULL,
};
