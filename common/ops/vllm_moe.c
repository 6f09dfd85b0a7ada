/* vLLM mixture-of-experts operators: routing (topk_softmax, grouped_topk), token
 * alignment for the expert GEMMs (moe_align_block_size, batched_moe_align_block_size,
 * moe_lora_align_block_size), the weighted-output reduction (moe_sum) and row
 * permutation (shuffle_rows). Semantics of vLLM 0.13's csrc/moe kernels.
 *
 * Alignment checks. moe_align_block_size and moe_lora_align_block_size place the tokens
 * of each expert with atomic counters, so the order of the token indices inside one
 * expert's segment is free. Their check (align_check) accepts every valid answer and
 * nothing else: num_tokens_post_pad exact; for each expert e in order, its segment
 * starts at the sum of the earlier experts' padded counts, holds exactly the indices
 * i with topk_ids[i] == e (each once, any order) followed by the pad value numel up to
 * the next multiple of block_size; expert_ids names e for each of the segment's
 * blocks; everything after num_tokens_post_pad is the pad value, and expert_ids past
 * the last used block is 0 or -1 (kernels of vLLM releases differ there, and consumers
 * read only the first num_tokens_post_pad / block_size entries).
 *
 * grouped_topk's check accepts any order of the k selected experts and any choice among
 * tied candidates (see grouped_topk_check). topk_softmax is exact: vLLM breaks ties
 * toward the lower expert index and returns the experts in descending order. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "aten_common.h"
#include "validate.h"
#include "vllm_common.h"

#define B kgb_vllm_buf
#define TT kgb_vllm_t

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* Each row of topk_ids [M, topk]: topk distinct experts of E (as vLLM's tests draw). */
static void fill_topk_ids(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b, int64_t E)
{
	const kgb_tensor_t *t = TT(c, "topk_ids");
	int64_t M = t->shape[0], k = t->shape[1], *p = kgb_xmalloc((size_t)E * sizeof *p);
	double *v = B(c, b, "topk_ids");
	for (int64_t m = 0; m < M; m++) {
		kgb_vllm_perm(rng, p, E);
		for (int64_t j = 0; j < k; j++)
			v[m * k + j] = (double)p[j];
	}
	free(p);
}

/* The aligned layout for the tokens i < numel with keep(i) (NULL: all): writes sorted
 * ids (ascending inside a segment), expert ids and the padded total. Returns -1 if it
 * does not fit (a catalog bug). */
static int align_build(const double *ids, int64_t numel, int64_t E, int64_t bs, const int8_t *keep,
                       double *sorted, int64_t nsorted, double *eids, int64_t nblocks, double *npp,
                       double tail)
{
	int64_t *cnt = kgb_xcalloc((size_t)E, sizeof *cnt), pos = 0;
	for (int64_t i = 0; i < nsorted; i++)
		sorted[i] = (double)numel;
	for (int64_t i = 0; i < nblocks; i++)
		eids[i] = tail;
	for (int64_t i = 0; i < numel; i++)
		if (!keep || keep[i])
			cnt[(int64_t)ids[i]]++;
	for (int64_t e = 0; e < E; e++) {
		int64_t padded = cdiv(cnt[e], bs) * bs, k = 0;
		if (pos + padded > nsorted) {
			free(cnt);
			return -1;
		}
		for (int64_t i = 0; i < numel; i++)
			if ((!keep || keep[i]) && (int64_t)ids[i] == e)
				sorted[pos + k++] = (double)i;
		for (int64_t j = 0; j < padded / bs; j++)
			eids[pos / bs + j] = (double)e;
		pos += padded;
	}
	*npp = (double)pos;
	free(cnt);
	return 0;
}

/* Validate one aligned layout (see the top of the file). Returns 0 or -1 with msg. */
static int align_verify(const char *what, const double *ids, int64_t numel, int64_t E, int64_t bs,
                        const int8_t *keep, const double *sorted, int64_t nsorted, const double *eids,
                        int64_t nblocks, double npp_got, char *msg, size_t msglen)
{
	int64_t *cnt = kgb_xcalloc((size_t)E, sizeof *cnt), pos = 0;
	uint8_t *seen = kgb_xcalloc((size_t)numel + 1, 1);
	int rc = -1;
	for (int64_t i = 0; i < numel; i++)
		if (!keep || keep[i])
			cnt[(int64_t)ids[i]]++;
	for (int64_t e = 0; e < E; e++)
		pos += cdiv(cnt[e], bs) * bs;
	if (npp_got != (double)pos) {
		snprintf(msg, msglen, "%snum_tokens_post_pad = %.0f, expected %lld", what, npp_got, (long long)pos);
		goto out;
	}
	pos = 0;
	for (int64_t e = 0; e < E; e++) {
		int64_t padded = cdiv(cnt[e], bs) * bs;
		for (int64_t j = 0; j < padded; j++) {
			double s = sorted[pos + j];
			if (j < cnt[e]) {
				int64_t i = (int64_t)s;
				if (!(s >= 0 && s < (double)numel && s == floor(s)) || (int64_t)ids[i] != e ||
				    (keep && !keep[i]) || seen[i]) {
					snprintf(msg, msglen, "%ssorted_token_ids[%lld] = %.0f: not a new token of expert %lld "
					         "(its segment holds %lld tokens from %lld)", what, (long long)(pos + j), s,
					         (long long)e, (long long)cnt[e], (long long)pos);
					goto out;
				}
				seen[i] = 1;
			} else if (s != (double)numel) {
				snprintf(msg, msglen, "%ssorted_token_ids[%lld] = %.0f, expected the pad %lld (expert %lld "
				         "has %lld tokens from %lld)", what, (long long)(pos + j), s, (long long)numel,
				         (long long)e, (long long)cnt[e], (long long)pos);
				goto out;
			}
		}
		for (int64_t j = 0; j < padded / bs; j++) {
			if (eids[pos / bs + j] != (double)e) {
				snprintf(msg, msglen, "%sexpert_ids[%lld] = %.0f, expected %lld", what,
				         (long long)(pos / bs + j), eids[pos / bs + j], (long long)e);
				goto out;
			}
		}
		pos += padded;
	}
	for (int64_t j = pos; j < nsorted; j++) {
		if (sorted[j] != (double)numel) {
			snprintf(msg, msglen, "%ssorted_token_ids[%lld] = %.0f past num_tokens_post_pad %lld, expected "
			         "the pad %lld", what, (long long)j, sorted[j], (long long)pos, (long long)numel);
			goto out;
		}
	}
	for (int64_t j = pos / bs; j < nblocks; j++) {
		if (eids[j] != 0 && eids[j] != -1) {
			snprintf(msg, msglen, "%sexpert_ids[%lld] = %.0f past the last block %lld, expected 0 or -1",
			         what, (long long)j, eids[j], (long long)(pos / bs));
			goto out;
		}
	}
	rc = 0;
out:
	free(cnt);
	free(seen);
	return rc;
}

/* ---- moe_align_block_size ---- */

static int mab_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t M = kgb_case_pint(c, "num_tokens", 7), k = kgb_case_pint(c, "topk", 4);
	int64_t E = kgb_case_pint(c, "num_experts", 64), bs = kgb_case_pint(c, "block_size", 64);
	int64_t sh[2] = { M, k }, ns, nb, one = 1;
	kgb_tensor_t *t;
	if (k > E || E + 31 >= 1024 + 31)
		return kgb_err(err, errlen, "op %s case %u: topk %lld > num_experts %lld or too many experts",
		               c->op->name, c->index, (long long)k, (long long)E);
	t = kgb_case_add_tensor(c, "topk_ids", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	ns = M * k + E * (bs - 1);
	nb = cdiv(ns, bs);
	kgb_case_add_tensor(c, "sorted_token_ids", KGB_ROLE_OUT, KGB_DT_I32, 1, &ns);
	kgb_case_add_tensor(c, "experts_ids", KGB_ROLE_OUT, KGB_DT_I32, 1, &nb);
	kgb_case_add_tensor(c, "num_tokens_post_pad", KGB_ROLE_OUT, KGB_DT_I32, 1, &one);
	kgb_case_add_scalar(c, "num_experts", KGB_DT_I64, (double)E);
	kgb_case_add_scalar(c, "block_size", KGB_DT_I64, (double)bs);
	kgb_case_set_sym(c, "numel", M * k);
	kgb_case_set_sym(c, "max_num_tokens_padded", ns);
	kgb_case_set_sym(c, "max_num_m_blocks", nb);
	kgb_case_default_tol(c);
	c->timed = M * k >= 4096 * 8 && E == 256 && bs == 64;
	return 0;
}

static void mab_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	fill_topk_ids(c, rng, b, (int64_t)kgb_vllm_scalar(c, "num_experts"));
}

static int mab_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	return align_build(B(c, b, "topk_ids"), (int64_t)TT(c, "topk_ids")->numel,
	                   (int64_t)kgb_vllm_scalar(c, "num_experts"), (int64_t)kgb_vllm_scalar(c, "block_size"),
	                   NULL, B(c, b, "sorted_token_ids"), (int64_t)TT(c, "sorted_token_ids")->numel,
	                   B(c, b, "experts_ids"), (int64_t)TT(c, "experts_ids")->numel,
	                   B(c, b, "num_tokens_post_pad"), 0);
}

static int mab_check(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out,
                     double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	*max_abs = *max_rel = 0;
	if (align_verify("", B(c, ref, "topk_ids"), (int64_t)TT(c, "topk_ids")->numel,
	                 (int64_t)kgb_vllm_scalar(c, "num_experts"), (int64_t)kgb_vllm_scalar(c, "block_size"), NULL,
	                 B(c, out, "sorted_token_ids"), (int64_t)TT(c, "sorted_token_ids")->numel,
	                 B(c, out, "experts_ids"), (int64_t)TT(c, "experts_ids")->numel,
	                 B(c, out, "num_tokens_post_pad")[0], msg, msglen))
		return KGB_V_WRONG_RESULT;
	if (msglen)
		msg[0] = '\0';
	return KGB_V_PASS;
}

static const kgb_op_t op_moe_align_block_size = {
	.name = "moe_align_block_size",
	.source = "vllm",
	.category = "moe",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "group the flat indices i of topk_ids [M, topk] by expert: for expert e = 0.. in order, "
	           "a segment of ceil(count_e / block_size) * block_size entries of sorted_token_ids holding "
	           "the i with topk_ids[i] == e (any order) then the pad numel = M * topk; experts_ids[j] = "
	           "the expert of block j; num_tokens_post_pad[0] = total padded length; the rest of "
	           "sorted_token_ids is numel, of experts_ids 0 (or -1). sorted_token_ids has numel + "
	           "num_experts * (block_size - 1) entries. Checked by invariants (see vllm_moe.c)",
	.signature = "topk_ids:in(i32) num_experts:i64 block_size:i64 sorted_token_ids:out(i32) "
	             "experts_ids:out(i32) num_tokens_post_pad:out(i32[1])",
	.grids = {
		{ { { "num_tokens", "3" }, { "topk", "2" }, { "num_experts", "8" }, { "block_size", "4" } } },
		{ { { "num_tokens", "1 7 256 4096" }, { "topk", "1 4 16" }, { "num_experts", "64 160 256 257" },
		    { "block_size", "16 64 128" } } },
	},
	.setup = mab_setup,
	.ref = mab_ref,
	.check = mab_check,
	.gen_inputs = mab_gen,
	.declared_cases = 360,
	.deviation = "1 smoke case, then 144 = num_tokens (1, 7, 256, 4096) x topk (1, 4, 16) x "
	             "num_experts (64, 160, 256, 257) x block_size (16, 64, 128): the public grid crosses "
	             "more token counts and block sizes of the same kernel paths (the small-batch path below "
	             "1024 ids and 64 experts, the general path above)",
	.smoke_grids = 1,
};

/* ---- moe_lora_align_block_size ---- */

static int mla_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t M, k, E, bs, L, sh[2], ns, nb, n;
	kgb_tensor_t *t;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5 || cfg->dims[1] > cfg->dims[2])
		return kgb_err(err, errlen, "op %s case %u: cfg must be [num_tokens,topk,num_experts,block_size,"
		               "max_loras] with topk <= num_experts", c->op->name, c->index);
	M = cfg->dims[0]; k = cfg->dims[1]; E = cfg->dims[2]; bs = cfg->dims[3]; L = cfg->dims[4];
	sh[0] = M; sh[1] = k;
	t = kgb_case_add_tensor(c, "topk_ids", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	t = kgb_case_add_tensor(c, "token_lora_mapping", KGB_ROLE_IN, KGB_DT_I32, 1, &M);
	kgb_aten_gen(t, KGB_GEN_INT, -1, (double)(L - 1));
	ns = M * k + E * (bs - 1);
	nb = cdiv(ns, bs);
	n = L * ns;
	kgb_case_add_tensor(c, "sorted_token_ids", KGB_ROLE_OUT, KGB_DT_I32, 1, &n);
	n = L * nb;
	kgb_case_add_tensor(c, "expert_ids", KGB_ROLE_OUT, KGB_DT_I32, 1, &n);
	kgb_case_add_tensor(c, "num_tokens_post_pad", KGB_ROLE_OUT, KGB_DT_I32, 1, &L);
	t = kgb_case_add_tensor(c, "adapter_enabled", KGB_ROLE_IN, KGB_DT_I32, 1, &L);
	kgb_aten_gen(t, KGB_GEN_INT, 1, 1);
	t = kgb_case_add_tensor(c, "lora_ids", KGB_ROLE_IN, KGB_DT_I32, 1, &L);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	kgb_case_add_scalar(c, "num_experts", KGB_DT_I64, (double)E);
	kgb_case_add_scalar(c, "block_size", KGB_DT_I64, (double)bs);
	kgb_case_add_scalar(c, "max_loras", KGB_DT_I64, (double)L);
	kgb_case_add_scalar(c, "max_num_tokens_padded", KGB_DT_I64, (double)ns);
	kgb_case_add_scalar(c, "max_num_m_blocks", KGB_DT_I64, (double)nb);
	kgb_case_set_sym(c, "numel", M * k);
	kgb_case_default_tol(c);
	c->timed = M * k >= 4096 * 8;
	return 0;
}

static void mla_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	double *ids = B(c, b, "lora_ids"), *map = B(c, b, "token_lora_mapping");
	size_t L = TT(c, "lora_ids")->numel, M = TT(c, "token_lora_mapping")->numel;
	fill_topk_ids(c, rng, b, (int64_t)kgb_vllm_scalar(c, "num_experts"));
	for (size_t i = 0; i < L; i++)
		ids[i] = (double)i;
	/* every LoRA gets at least one token (the rest are drawn, -1 = none) */
	{
		int64_t *p = kgb_xmalloc(M * sizeof *p);
		kgb_vllm_perm(rng, p, (int64_t)M);
		for (size_t i = 0; i < L && i < M; i++)
			map[p[i]] = (double)i;
		free(p);
	}
}

/* keep[i] = the flat id i belongs to a token of LoRA l */
static void lora_keep(const kgb_case_t *c, const kgb_hostbufs_t *in, int64_t l, int8_t *keep)
{
	const kgb_tensor_t *t = TT(c, "topk_ids");
	const double *map = B(c, in, "token_lora_mapping");
	for (size_t i = 0; i < t->numel; i++)
		keep[i] = (int64_t)map[i / (size_t)t->shape[1]] == l;
}

static int mla_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t L = (int64_t)kgb_vllm_scalar(c, "max_loras"), ns = (int64_t)kgb_vllm_scalar(c, "max_num_tokens_padded");
	int64_t nb = (int64_t)kgb_vllm_scalar(c, "max_num_m_blocks"), numel = (int64_t)TT(c, "topk_ids")->numel;
	int8_t *keep = kgb_xmalloc((size_t)numel);
	int rc = 0;
	for (int64_t l = 0; l < L && rc == 0; l++) {
		lora_keep(c, b, l, keep);
		rc = align_build(B(c, b, "topk_ids"), numel, (int64_t)kgb_vllm_scalar(c, "num_experts"),
		                 (int64_t)kgb_vllm_scalar(c, "block_size"), keep, B(c, b, "sorted_token_ids") + l * ns,
		                 ns, B(c, b, "expert_ids") + l * nb, nb, B(c, b, "num_tokens_post_pad") + l, -1);
	}
	free(keep);
	return rc;
}

static int mla_check(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out,
                     double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	int64_t L = (int64_t)kgb_vllm_scalar(c, "max_loras"), ns = (int64_t)kgb_vllm_scalar(c, "max_num_tokens_padded");
	int64_t nb = (int64_t)kgb_vllm_scalar(c, "max_num_m_blocks"), numel = (int64_t)TT(c, "topk_ids")->numel;
	int8_t *keep = kgb_xmalloc((size_t)numel);
	int v = KGB_V_PASS;
	*max_abs = *max_rel = 0;
	for (int64_t l = 0; l < L && v == KGB_V_PASS; l++) {
		char what[32];
		snprintf(what, sizeof what, "lora %lld: ", (long long)l);
		lora_keep(c, ref, l, keep);
		if (align_verify(what, B(c, ref, "topk_ids"), numel, (int64_t)kgb_vllm_scalar(c, "num_experts"),
		                 (int64_t)kgb_vllm_scalar(c, "block_size"), keep, B(c, out, "sorted_token_ids") + l * ns,
		                 ns, B(c, out, "expert_ids") + l * nb, nb, B(c, out, "num_tokens_post_pad")[l], msg,
		                 msglen))
			v = KGB_V_WRONG_RESULT;
	}
	free(keep);
	if (v == KGB_V_PASS && msglen)
		msg[0] = '\0';
	return v;
}

static const kgb_op_t op_moe_lora_align_block_size = {
	.name = "moe_lora_align_block_size",
	.source = "vllm",
	.category = "moe",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "moe_align_block_size once per LoRA: for each slot s < max_loras with l = lora_ids[s] "
	           ">= 0 and adapter_enabled[l] != 0, row l of sorted_token_ids [max_loras, "
	           "max_num_tokens_padded], expert_ids [max_loras, max_num_m_blocks] and "
	           "num_tokens_post_pad[l] align only the ids i of tokens with token_lora_mapping[i / topk] "
	           "== l (mapping -1: no LoRA); pad value numel; unused expert_ids -1. Checked by "
	           "invariants per row (see vllm_moe.c)",
	.signature = "topk_ids:in(i32) token_lora_mapping:in(i32) num_experts:i64 block_size:i64 "
	             "max_loras:i64 max_num_tokens_padded:i64 max_num_m_blocks:i64 sorted_token_ids:out(i32) "
	             "expert_ids:out(i32) num_tokens_post_pad:out(i32) adapter_enabled:in(i32) lora_ids:in(i32)",
	.grids = {
		{ { { "cfg", "[5,2,8,4,2]" } } },
		{ { { "cfg", "[1,1,8,16,1] [7,2,16,16,2] [33,4,32,16,4] [64,6,64,32,4] [128,8,64,64,3] "
		             "[256,2,128,16,8] [100,4,256,64,2] [1024,8,64,16,4] [16,1,8,32,8] "
		             "[4096,8,64,64,4]" } } },
	},
	.setup = mla_setup,
	.ref = mla_ref,
	.check = mla_check,
	.gen_inputs = mla_gen,
	.declared_cases = 10,
	.deviation = "1 smoke case, then 10 shapes (num_tokens, topk, num_experts, block_size, max_loras); "
	             "every LoRA slot is enabled and lora_ids[s] = s (disabled slots leave their rows "
	             "untouched, which the poisoned outputs cannot express); the optional expert map is None",
	.smoke_grids = 1,
};

/* ---- batched_moe_align_block_size ---- */

static int bmab_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t Bn, maxt, bs, ns, nb, one = 1;
	kgb_tensor_t *t;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 3 || (cfg->dims[0] * cfg->dims[1]) % cfg->dims[2] ||
	    cfg->dims[1] % cfg->dims[2] || cfg->dims[0] > 1024)
		return kgb_err(err, errlen, "op %s case %u: cfg must be [num_batches,max_tokens_per_batch,block_size] "
		               "with max_tokens_per_batch a multiple of block_size", c->op->name, c->index);
	Bn = cfg->dims[0]; maxt = cfg->dims[1]; bs = cfg->dims[2];
	t = kgb_case_add_tensor(c, "expert_num_tokens", KGB_ROLE_IN, KGB_DT_I32, 1, &Bn);
	kgb_aten_gen(t, KGB_GEN_INT, 0, (double)maxt);
	ns = Bn * (maxt > bs ? maxt : bs);
	nb = ns / bs;
	kgb_case_add_tensor(c, "sorted_ids", KGB_ROLE_OUT, KGB_DT_I32, 1, &ns);
	kgb_case_add_tensor(c, "expert_ids", KGB_ROLE_OUT, KGB_DT_I32, 1, &nb);
	kgb_case_add_tensor(c, "num_tokens_post_pad", KGB_ROLE_OUT, KGB_DT_I32, 1, &one);
	kgb_case_add_scalar(c, "max_tokens_per_batch", KGB_DT_I64, (double)maxt);
	kgb_case_add_scalar(c, "block_size", KGB_DT_I64, (double)bs);
	kgb_case_set_sym(c, "num_batches", Bn);
	kgb_case_default_tol(c);
	c->timed = ns >= 1 << 16;
	return 0;
}

static int bmab_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t Bn = (int64_t)TT(c, "expert_num_tokens")->numel, maxt = (int64_t)kgb_vllm_scalar(c, "max_tokens_per_batch");
	int64_t bs = (int64_t)kgb_vllm_scalar(c, "block_size"), ns = (int64_t)TT(c, "sorted_ids")->numel;
	int64_t nb = (int64_t)TT(c, "expert_ids")->numel, pos = 0;
	double *n = B(c, b, "expert_num_tokens"), *s = B(c, b, "sorted_ids"), *e = B(c, b, "expert_ids");
	for (int64_t i = 0; i < ns; i++)
		s[i] = (double)(Bn * maxt);
	for (int64_t i = 0; i < nb; i++)
		e[i] = -1;
	for (int64_t q = 0; q < Bn; q++) {
		int64_t cnt = (int64_t)n[q], padded = cdiv(cnt, bs) * bs;
		if (pos + padded > ns)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			s[pos + i] = (double)(q * maxt + i);
		for (int64_t j = 0; j < padded / bs; j++)
			e[pos / bs + j] = (double)q;
		pos += padded;
	}
	B(c, b, "num_tokens_post_pad")[0] = (double)pos;
	return 0;
}

static const kgb_op_t op_batched_moe_align_block_size = {
	.name = "batched_moe_align_block_size",
	.source = "vllm",
	.category = "moe",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "tokens already batched per expert (expert q has expert_num_tokens[q] tokens at rows "
	           "q * max_tokens_per_batch + i): for q in order, a segment of ceil(n_q / block_size) * "
	           "block_size entries of sorted_ids holding q * max_tokens_per_batch + i (i < n_q, ascending) "
	           "then the sentinel num_batches * max_tokens_per_batch; expert_ids[j] = q for the segment's "
	           "blocks, -1 after the last; num_tokens_post_pad[0] = total; sorted_ids has num_batches * "
	           "max(block_size, max_tokens_per_batch) entries (the rest: sentinel)",
	.signature = "max_tokens_per_batch:i64 block_size:i64 expert_num_tokens:in(i32) sorted_ids:out(i32) "
	             "expert_ids:out(i32) num_tokens_post_pad:out(i32[1])",
	.grids = {
		{ { { "cfg", "[4,16,8]" } } },
		{ { { "cfg", "[8,16,16] [16,32,16] [32,64,32] [64,128,64] [8,512,16] [16,512,64] [32,256,32] "
		             "[64,64,64] [256,512,128]" } } },
	},
	.setup = bmab_setup,
	.ref = bmab_ref,
	.declared_cases = 9,
	.deviation = "1 smoke case, then 9 shapes (num_batches, max_tokens_per_batch, block_size) with "
	             "max_tokens_per_batch a multiple of block_size (otherwise the padded total can pass the "
	             "end of sorted_ids)",
	.smoke_grids = 1,
};

/* ---- moe_sum ---- */

static int msum_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t T = kgb_case_pint(c, "num_tokens", 7), k = kgb_case_pint(c, "topk", 2);
	int64_t H = kgb_case_pint(c, "hidden", 128), sh[3] = { T, k, H };
	(void)err;
	(void)errlen;
	kgb_case_add_tensor(c, "input", KGB_ROLE_IN, dt, 3, sh);
	sh[1] = H;
	kgb_case_add_tensor(c, "output", KGB_ROLE_OUT, dt, 2, sh);
	kgb_case_set_sym(c, "num_tokens", T);
	kgb_case_set_sym(c, "topk", k);
	kgb_case_set_sym(c, "hidden", H);
	c->reduce_len = (double)k;
	kgb_case_default_tol(c);
	/* topk 2..4 add in the element type, one rounding per term: allow that much */
	c->atol_rel = fmin(c->rtol * (double)k / 2, 0.03);
	c->timed = c->grid == 3;   /* the last grid */
	return 0;
}

static int msum_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *in = TT(c, "input");
	int64_t T = in->shape[0], k = in->shape[1], H = in->shape[2];
	double *x = B(c, b, "input"), *o = B(c, b, "output");
	for (int64_t t = 0; t < T; t++)
		for (int64_t h = 0; h < H; h++) {
			double s = 0;
			for (int64_t j = 0; j < k; j++)
				s += x[(t * k + j) * H + h];
			o[t * H + h] = s;
		}
	return 0;
}

static const kgb_op_t op_moe_sum = {
	.name = "moe_sum",
	.source = "vllm",
	.category = "moe",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "output[t, h] = sum over j < topk of input[t, j, h]; input [num_tokens, topk, hidden]; "
	           "vLLM adds topk 2..4 in the element type (tolerance allows one rounding per term)",
	.signature = "input:in output:out",
	.grids = {
		{ { { "dtype", "f16" }, { "num_tokens", "7" }, { "topk", "2" }, { "hidden", "128" } } },
		{ { { "dtype", "f16 bf16" }, { "num_tokens", "1 33 64 222" }, { "topk", "2 3 4 6" },
		    { "hidden", "128 511 1024" } } },
		{ { { "dtype", "f32" }, { "num_tokens", "33" }, { "topk", "2 6" }, { "hidden", "511" } } },
		{ { { "dtype", "bf16" }, { "num_tokens", "128" }, { "topk", "8" }, { "hidden", "1024" } } },
	},
	.setup = msum_setup,
	.ref = msum_ref,
	.declared_cases = 48,
	.deviation = "1 smoke case, the 96 of dtype (f16, bf16) x num_tokens x topk (2, 3, 4 and the "
	             "generic path 6) x hidden, 2 f32 cases and one timed case",
	.smoke_grids = 1,
};

/* ---- shuffle_rows ---- */

static int shr_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t N = kgb_case_pint(c, "num_tokens", 16), H = kgb_case_pint(c, "hidden", 128);
	int64_t M = N * kgb_case_pint(c, "topk", 1), sh[2] = { N, H };
	kgb_tensor_t *t;
	(void)err;
	(void)errlen;
	kgb_case_add_tensor(c, "input_tensor", KGB_ROLE_IN, dt, 2, sh);
	t = kgb_case_add_tensor(c, "dst2src_map", KGB_ROLE_IN, KGB_DT_I32, 1, &M);
	kgb_aten_gen(t, KGB_GEN_INT, 0, (double)(N - 1));
	sh[0] = M;
	kgb_case_add_tensor(c, "output_tensor", KGB_ROLE_OUT, dt, 2, sh);
	kgb_case_set_sym(c, "num_src_rows", N);
	kgb_case_set_sym(c, "num_dst_rows", M);
	kgb_case_set_sym(c, "hidden", H);
	kgb_case_default_tol(c);
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = c->grid == 2;   /* the last grid */
	return 0;
}

static int shr_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *o = TT(c, "output_tensor");
	int64_t M = o->shape[0], H = o->shape[1], N = TT(c, "input_tensor")->shape[0];
	double *x = B(c, b, "input_tensor"), *m = B(c, b, "dst2src_map"), *y = B(c, b, "output_tensor");
	for (int64_t i = 0; i < M; i++) {
		int64_t s = (int64_t)m[i];
		if (s < 0 || s >= N)
			return -1;
		memcpy(y + i * H, x + s * H, (size_t)H * sizeof *y);
	}
	return 0;
}

static const kgb_op_t op_shuffle_rows = {
	.name = "shuffle_rows",
	.source = "vllm",
	.category = "moe",
	.dtypes = "bf16 f16",
	.datasets = KGB_DS_VLLM,
	.summary = "output_tensor[i, :] = input_tensor[dst2src_map[i], :] for every destination row i "
	           "(rows may repeat: topk copies per token); exact copy",
	.signature = "input_tensor:in dst2src_map:in(i32) output_tensor:out",
	.grids = {
		{ { { "dtype", "f16" }, { "num_tokens", "16" }, { "hidden", "128" }, { "topk", "1" } } },
		{ { { "dtype", "f16 bf16" }, { "num_tokens", "1 16 64 128" }, { "hidden", "128 1024" },
		    { "topk", "1 2" } } },
		{ { { "dtype", "bf16" }, { "num_tokens", "128" }, { "hidden", "2048" }, { "topk", "2" } } },
	},
	.setup = shr_setup,
	.ref = shr_ref,
	.declared_cases = 48,
	.deviation = "1 smoke case, the 32 of dtype x num_tokens (1 to 128) x hidden (128, 1024) x "
	             "rows per token (1, 2), one timed case of 512K elements (the public grid goes to 2048 "
	             "tokens, the same gather at larger sizes)",
	.smoke_grids = 1,
};

/* ---- topk_softmax ---- */

static int tks_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t T = kgb_case_pint(c, "num_tokens", 7), E = kgb_case_pint(c, "num_experts", 8);
	int64_t k = kgb_case_pint(c, "topk", 2), sh[2] = { T, k };
	kgb_tensor_t *g;
	if (k > E)
		return kgb_err(err, errlen, "op %s case %u: topk > num_experts", c->op->name, c->index);
	kgb_case_add_tensor(c, "topk_weights", KGB_ROLE_OUT, KGB_DT_F32, 2, sh);
	kgb_case_add_tensor(c, "topk_indices", KGB_ROLE_OUT, KGB_DT_I32, 2, sh);
	kgb_case_add_tensor(c, "token_expert_indices", KGB_ROLE_OUT, KGB_DT_I32, 2, sh);
	sh[1] = E;
	g = kgb_case_add_tensor(c, "gating_output", KGB_ROLE_IN, dt, 2, sh);
	kgb_aten_gen(g, KGB_GEN_NORMAL, 0, 2);
	kgb_case_add_scalar(c, "renormalize", KGB_DT_I32, (double)kgb_case_pint(c, "renormalize", 0));
	kgb_case_set_sym(c, "num_tokens", T);
	kgb_case_set_sym(c, "num_experts", E);
	kgb_case_set_sym(c, "topk", k);
	c->reduce_len = (double)E;
	kgb_case_default_tol(c);
	c->timed = c->grid == 2;   /* the last grid */
	return 0;
}

static int tks_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *g = TT(c, "gating_output");
	int64_t T = g->shape[0], E = g->shape[1], k = TT(c, "topk_weights")->shape[1];
	double *x = B(c, b, "gating_output"), *w = B(c, b, "topk_weights"), *id = B(c, b, "topk_indices");
	double *src = B(c, b, "token_expert_indices"), *p = kgb_xmalloc((size_t)E * sizeof *p);
	uint8_t *used = kgb_xmalloc((size_t)E);
	int renorm = kgb_vllm_scalar(c, "renormalize") != 0;
	for (int64_t t = 0; t < T; t++) {
		double mx = -INFINITY, sum = 0, sel = 0;
		for (int64_t e = 0; e < E; e++)
			mx = fmax(mx, x[t * E + e]);
		for (int64_t e = 0; e < E; e++)
			sum += (p[e] = exp(x[t * E + e] - mx));
		memset(used, 0, (size_t)E);
		for (int64_t j = 0; j < k; j++) {
			int64_t best = -1;
			/* the largest probability; on a tie the lower expert index (vLLM's rule) */
			for (int64_t e = 0; e < E; e++)
				if (!used[e] && (best < 0 || x[t * E + e] > x[t * E + best]))
					best = e;
			used[best] = 1;
			w[t * k + j] = p[best] / sum;
			id[t * k + j] = (double)best;
			src[t * k + j] = (double)(j * T + t);
			sel += p[best] / sum;
		}
		if (renorm)
			for (int64_t j = 0; j < k; j++)
				w[t * k + j] /= sel;
	}
	free(p);
	free(used);
	return 0;
}

static const kgb_op_t op_topk_softmax = {
	.name = "topk_softmax",
	.source = "vllm",
	.category = "moe",
	.dtypes = "f32 f16 bf16 i32",
	.datasets = KGB_DS_VLLM,
	.summary = "per token t: p = softmax(gating_output[t, :]) in f32; the topk experts by descending p "
	           "(ties: lower index first): topk_indices[t, j] = expert, topk_weights[t, j] = p[expert] "
	           "(divided by the sum of the k selected when renormalize), token_expert_indices[t, j] = "
	           "j * num_tokens + t",
	.signature = "topk_weights:out(f32) topk_indices:out(i32) token_expert_indices:out(i32) "
	             "gating_output:in renormalize:i32",
	.grids = {
		{ { { "dtype", "f32" }, { "num_tokens", "7" }, { "num_experts", "8" }, { "topk", "2" },
		    { "renormalize", "0" } } },
		{ { { "num_tokens", "1 33 222" }, { "topk", "2 6" }, { "num_experts", "8 64 256" },
		    { "dtype", "f32 f16 bf16" }, { "renormalize", "0 1" } } },
		{ { { "dtype", "f32" }, { "num_tokens", "4096" }, { "num_experts", "128" }, { "topk", "8" },
		    { "renormalize", "1" } } },
	},
	.setup = tks_setup,
	.ref = tks_ref,
	.check = kgb_vllm_check_mixed,
	.declared_cases = 108,
	.deviation = "1 smoke case, the 108 of num_tokens x topk x num_experts x gating dtype x "
	             "renormalize, one timed case; the public 131072-token size is left to the timed case "
	             "of 4096 tokens",
	.smoke_grids = 1,
};

/* ---- grouped_topk ---- */

static int gtk_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t T, E, G, TG, k, sh[2];
	kgb_tensor_t *t;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5 || cfg->dims[1] % cfg->dims[2] ||
	    cfg->dims[3] > cfg->dims[2] || cfg->dims[4] > cfg->dims[3] * (cfg->dims[1] / cfg->dims[2]) ||
	    cfg->dims[1] / cfg->dims[2] < 2)
		return kgb_err(err, errlen, "op %s case %u: cfg must be [num_tokens,num_experts,n_group,topk_group,"
		               "topk], groups of >= 2 experts, topk within the selected groups", c->op->name, c->index);
	T = cfg->dims[0]; E = cfg->dims[1]; G = cfg->dims[2]; TG = cfg->dims[3]; k = cfg->dims[4];
	sh[0] = T; sh[1] = E;
	t = kgb_case_add_tensor(c, "scores", KGB_ROLE_IN, dt, 2, sh);
	kgb_aten_gen(t, KGB_GEN_NORMAL, 0, 1);
	t = kgb_case_add_tensor(c, "bias", KGB_ROLE_IN, dt, 1, &E);
	kgb_aten_gen(t, KGB_GEN_NORMAL, 0, 0.1);
	sh[1] = k;
	kgb_case_add_tensor(c, "topk_values", KGB_ROLE_OUT, KGB_DT_F32, 2, sh);
	kgb_case_add_tensor(c, "topk_indices", KGB_ROLE_OUT, KGB_DT_I32, 2, sh);
	kgb_case_add_scalar(c, "n_group", KGB_DT_I64, (double)G);
	kgb_case_add_scalar(c, "topk_group", KGB_DT_I64, (double)TG);
	kgb_case_add_scalar(c, "topk", KGB_DT_I64, (double)k);
	kgb_case_add_scalar(c, "renormalize", KGB_DT_I32, (double)kgb_case_pint(c, "renormalize", 1));
	kgb_case_add_scalar(c, "routed_scaling_factor", KGB_DT_F32, kgb_case_pfloat(c, "routed_scaling_factor", 1));
	kgb_case_add_scalar(c, "scoring_func", KGB_DT_I64, (double)kgb_case_pint(c, "scoring_func", 0));
	kgb_case_set_sym(c, "num_tokens", T);
	kgb_case_set_sym(c, "num_experts", E);
	c->reduce_len = (double)E;
	kgb_case_default_tol(c);
	c->timed = T >= 1024;   /* the last grid */
	return 0;
}

/* Scores after the scoring function (f32 as the kernel), and with the bias added. */
static void gtk_scores(const kgb_case_t *c, const kgb_hostbufs_t *in, int64_t t, double *s, double *sb)
{
	int64_t E = TT(c, "scores")->shape[1];
	const double *x = B(c, in, "scores") + t * E, *bias = B(c, in, "bias");
	int sig = kgb_vllm_scalar(c, "scoring_func") == 1;
	for (int64_t e = 0; e < E; e++) {
		s[e] = sig ? (double)(float)(1.0 / (1.0 + exp(-x[e]))) : x[e];
		sb[e] = (double)((float)s[e] + (float)bias[e]);
	}
}

/* Group score: the sum of the two largest biased scores of the group. */
static void gtk_groups(const double *sb, int64_t E, int64_t G, double *gs)
{
	int64_t per = E / G;
	for (int64_t g = 0; g < G; g++) {
		double a = -INFINITY, b2 = -INFINITY;
		for (int64_t i = 0; i < per; i++) {
			double v = sb[g * per + i];
			if (v > a) {
				b2 = a;
				a = v;
			} else if (v > b2) {
				b2 = v;
			}
		}
		gs[g] = a + b2;
	}
}

/* The n-th largest (1-based) of v[0..len) where ok[i]. */
static double nth_largest(const double *v, const uint8_t *ok, int64_t len, int64_t n)
{
	double *w = kgb_xmalloc((size_t)len * sizeof *w), r = -INFINITY;
	int64_t m = 0;
	for (int64_t i = 0; i < len; i++)
		if (!ok || ok[i])
			w[m++] = v[i];
	for (int64_t j = 0; j < n && j < m; j++) {
		int64_t best = j;
		for (int64_t i = j + 1; i < m; i++)
			if (w[i] > w[best])
				best = i;
		r = w[best];
		w[best] = w[j];
		w[j] = r;
	}
	free(w);
	return r;
}

static int gtk_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *sc = TT(c, "scores");
	int64_t T = sc->shape[0], E = sc->shape[1], G = (int64_t)kgb_vllm_scalar(c, "n_group");
	int64_t TG = (int64_t)kgb_vllm_scalar(c, "topk_group"), k = (int64_t)kgb_vllm_scalar(c, "topk"), per = E / G;
	double *s = kgb_xmalloc((size_t)E * sizeof *s), *sb = kgb_xmalloc((size_t)E * sizeof *sb);
	double *gs = kgb_xmalloc((size_t)G * sizeof *gs), *w = B(c, b, "topk_values"), *id = B(c, b, "topk_indices");
	uint8_t *gsel = kgb_xmalloc((size_t)G), *used = kgb_xmalloc((size_t)E);
	double scale = kgb_vllm_scalar(c, "routed_scaling_factor");
	int renorm = kgb_vllm_scalar(c, "renormalize") != 0;
	for (int64_t t = 0; t < T; t++) {
		double sum = 0;
		gtk_scores(c, b, t, s, sb);
		gtk_groups(sb, E, G, gs);
		memset(gsel, 0, (size_t)G);
		for (int64_t j = 0; j < TG; j++) {
			int64_t best = -1;
			for (int64_t g = 0; g < G; g++)
				if (!gsel[g] && (best < 0 || gs[g] > gs[best]))
					best = g;
			gsel[best] = 1;
		}
		memset(used, 0, (size_t)E);
		for (int64_t j = 0; j < k; j++) {
			int64_t best = -1;
			for (int64_t e = 0; e < E; e++)
				if (gsel[e / per] && !used[e] && (best < 0 || sb[e] > sb[best]))
					best = e;
			used[best] = 1;
			id[t * k + j] = (double)best;
			w[t * k + j] = s[best];
			sum += s[best];
		}
		for (int64_t j = 0; j < k; j++)
			w[t * k + j] = (renorm ? w[t * k + j] / sum : w[t * k + j]) * scale;
	}
	free(s);
	free(sb);
	free(gs);
	free(gsel);
	free(used);
	return 0;
}

/* Any valid selection passes: the k indices are distinct experts; their groups are
 * among the groups whose score reaches the topk_group-th largest (within a small
 * tolerance for the f32 sums), at most topk_group of them; every selected expert's
 * biased score reaches the k-th largest among the experts of those groups (same
 * tolerance); each value is the expert's score (renormalised over the selection,
 * times routed_scaling_factor) within the case's tolerance. Any order. */
/* Every token's picks must be k distinct experts, from at most topk_group groups that
 * are among the best topk_group (a group within the tolerance of the last one chosen
 * may stand in for it), and the top k of the groups chosen. The groups chosen are the
 * ones the answer uses, every group certainly among the best (above the tolerance),
 * and, when those are fewer than topk_group, the borderline groups whose best expert
 * is lowest: the bar each pick must reach comes from those groups only, never from a
 * borderline group the answer left out. */
static int gtk_check(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out,
                     double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *sc = TT(c, "scores");
	int64_t T = sc->shape[0], E = sc->shape[1], G = (int64_t)kgb_vllm_scalar(c, "n_group");
	int64_t TG = (int64_t)kgb_vllm_scalar(c, "topk_group"), k = (int64_t)kgb_vllm_scalar(c, "topk"), per = E / G;
	double *s = kgb_xmalloc((size_t)E * sizeof *s), *sb = kgb_xmalloc((size_t)E * sizeof *sb);
	double *gs = kgb_xmalloc((size_t)G * sizeof *gs), *gmax = kgb_xmalloc((size_t)G * sizeof *gmax), maxw = 0;
	const double *w = B(c, out, "topk_values"), *id = B(c, out, "topk_indices"), *rw = B(c, ref, "topk_values");
	uint8_t *gok = kgb_xmalloc((size_t)G), *eok = kgb_xmalloc((size_t)E), *used = kgb_xmalloc((size_t)E);
	uint8_t *gin = kgb_xmalloc((size_t)G);
	double scale = kgb_vllm_scalar(c, "routed_scaling_factor");
	int renorm = kgb_vllm_scalar(c, "renormalize") != 0, v = KGB_V_PASS;
	*max_abs = *max_rel = 0;
	for (int64_t i = 0; i < T * k; i++)
		maxw = fmax(maxw, fabs(rw[i]));
	for (int64_t t = 0; t < T && v == KGB_V_PASS; t++) {
		double gthr, ethr, sum = 0, eps;
		int64_t nin = 0, nused = 0;
		gtk_scores(c, ref, t, s, sb);
		gtk_groups(sb, E, G, gs);
		gthr = nth_largest(gs, NULL, G, TG);
		eps = 1e-5 * (fabs(gthr) + 1);
		for (int64_t g = 0; g < G; g++) {
			gok[g] = gs[g] >= gthr - eps;
			gin[g] = gs[g] > gthr + eps;     /* certainly chosen */
			gmax[g] = -INFINITY;
		}
		for (int64_t e = 0; e < E; e++) {
			eok[e] = gok[e / per];
			gmax[e / per] = fmax(gmax[e / per], sb[e]);
		}
		memset(used, 0, (size_t)E);
		for (int64_t j = 0; j < k; j++) {
			double x = id[t * k + j];
			int64_t e = (int64_t)x;
			if (!(x >= 0 && x < (double)E && x == floor(x)) || used[e] || !eok[e]) {
				snprintf(msg, msglen, "topk_indices[%lld, %lld] = %.0f: not a new expert of the best %lld groups",
				         (long long)t, (long long)j, x, (long long)TG);
				v = KGB_V_WRONG_RESULT;
				break;
			}
			used[e] = 1;
			if (gin[e / per] != 2)
				nused++;
			gin[e / per] = 2;                /* used by the answer */
		}
		if (v != KGB_V_PASS)
			break;
		for (int64_t g = 0; g < G; g++)
			nin += gin[g] != 0;
		if (nused > TG || nin > TG) {
			snprintf(msg, msglen, "token %lld: experts from %lld groups (with the best groups left out, %lld), "
			         "at most topk_group = %lld", (long long)t, (long long)nused, (long long)nin, (long long)TG);
			v = KGB_V_WRONG_RESULT;
			break;
		}
		while (nin < TG) {                       /* fill with the weakest borderline groups */
			int64_t best = -1;
			for (int64_t g = 0; g < G; g++)
				if (gok[g] && !gin[g] && (best < 0 || gmax[g] < gmax[best]))
					best = g;
			if (best < 0)
				break;
			gin[best] = 1;
			nin++;
		}
		for (int64_t e = 0; e < E; e++)
			eok[e] = gin[e / per] != 0;
		ethr = nth_largest(sb, eok, E, k);
		for (int64_t j = 0; j < k; j++) {
			int64_t e = (int64_t)id[t * k + j];
			if (sb[e] < ethr - 1e-5 * (fabs(ethr) + 1)) {
				snprintf(msg, msglen, "topk_indices[%lld, %lld] = %lld: not among the top %lld experts of the "
				         "groups chosen", (long long)t, (long long)j, (long long)e, (long long)k);
				v = KGB_V_WRONG_RESULT;
				break;
			}
			sum += s[e];
		}
		for (int64_t j = 0; j < k && v == KGB_V_PASS; j++) {
			int64_t e = (int64_t)id[t * k + j];
			double want = (double)(float)((renorm ? s[e] / sum : s[e]) * scale), got = w[t * k + j];
			double tol = c->atol_rel * maxw + c->rtol * fabs(want), d = fabs(got - want);
			*max_abs = fmax(*max_abs, isnan(got) ? INFINITY : d);
			if (!(d <= tol)) {
				snprintf(msg, msglen, "topk_values[%lld, %lld] = %.9g for expert %lld, expected %.9g (tol %.3g)",
				         (long long)t, (long long)j, got, (long long)e, want, tol);
				v = KGB_V_WRONG_RESULT;
			}
		}
	}
	free(s);
	free(sb);
	free(gs);
	free(gmax);
	free(gok);
	free(eok);
	free(used);
	free(gin);
	if (v == KGB_V_PASS && msglen)
		msg[0] = '\0';
	return v;
}

static const kgb_op_t op_grouped_topk = {
	.name = "grouped_topk",
	.source = "vllm",
	.category = "moe",
	.dtypes = "f32 f16 bf16 i32",
	.datasets = KGB_DS_VLLM,
	.summary = "DeepSeek-style routing per token: s = scores (scoring_func 0) or sigmoid(scores) "
	           "(1), in f32; b = s + bias; each of n_group groups of experts scores the sum of its two "
	           "largest b; keep the topk_group best groups; pick the topk experts of those groups by b; "
	           "topk_values = their s (divided by the sum of the k when renormalize) times "
	           "routed_scaling_factor, topk_indices = the experts. Any order; ties may go either way "
	           "(checked by invariants, see vllm_moe.c)",
	.signature = "scores:in n_group:i64 topk_group:i64 topk:i64 renormalize:i32 routed_scaling_factor:f32 "
	             "bias:in scoring_func:i64 topk_values:out(f32) topk_indices:out(i32)",
	.grids = {
		{ { { "dtype", "f32" }, { "cfg", "[3,16,4,2,4]" }, { "renormalize", "1" }, { "scoring_func", "0" },
		    { "routed_scaling_factor", "1" } } },
		{ { { "cfg", "[1,256,8,4,8] [33,256,8,4,8] [64,128,8,4,6] [7,64,4,2,4]" },
		    { "dtype", "f32 f16 bf16" }, { "renormalize", "0 1" }, { "scoring_func", "0 1" },
		    { "routed_scaling_factor", "1 2.5" } } },
		{ { { "dtype", "bf16" }, { "cfg", "[2048,256,8,4,8]" }, { "renormalize", "1" }, { "scoring_func", "1" },
		    { "routed_scaling_factor", "2.5" } } },
	},
	.setup = gtk_setup,
	.ref = gtk_ref,
	.check = gtk_check,
	.declared_cases = 288,
	.deviation = "1 smoke case, then 96 = 4 routing shapes (tokens, experts, n_group, topk_group, topk) "
	             "x dtype x renormalize x scoring_func (none, sigmoid) x scaling (1, 2.5), one timed "
	             "case; the public grid also crosses hidden sizes, which this kernel does not read",
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_moe[] = {
	&op_moe_align_block_size, &op_batched_moe_align_block_size, &op_moe_lora_align_block_size,
	&op_moe_sum, &op_shuffle_rows, &op_topk_softmax, &op_grouped_topk, NULL,
};
