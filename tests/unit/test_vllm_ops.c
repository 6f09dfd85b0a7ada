/* The vLLM operator families: the fp8 codec, references against values worked out
 * by hand, and the invariant checks (they must accept every valid answer, including
 * reorderings the reference does not produce, and reject wrong ones). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "validate.h"
#include "ops/vllm_common.h"

TEST(vllm_fp8_codec_known_values)
{
	/* e4m3fn: 1.0 = 0 0111 000, 448 = 0 1111 110, smallest subnormal 2^-9 = 0x01 */
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, 1.0f), 0x38);
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, -2.0f), 0xc0);
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, 448.0f), 0x7e);
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, 1e6f), 0x7e);          /* saturates */
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, -1e6f), 0xfe);
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, ldexpf(1, -9)), 0x01);
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, 1.0625f), 0x38);      /* tie: 1 + 1/16 -> even (1.0) */
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(0, 1.1875f), 0x3a);      /* tie: 1 + 3/16 -> 1.25 */
	ASSERT_TRUE(isnan(kgb_vllm_fp8_decode(0, 0x7f)));
	ASSERT_TRUE(isnan(kgb_vllm_fp8_decode(0, 0xff)));
	ASSERT_NEAR(kgb_vllm_fp8_decode(0, 0x7e), 448.0, 0);
	ASSERT_NEAR(kgb_vllm_fp8_decode(0, 0x01), ldexp(1, -9), 0);
	/* e5m2: 1.0 = 0 01111 00, largest finite 57344 = 0x7b, 0x7c = inf */
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(1, 1.0f), 0x3c);
	ASSERT_EQ_INT(kgb_vllm_fp8_encode(1, 1e9f), 0x7b);
	ASSERT_TRUE(isinf(kgb_vllm_fp8_decode(1, 0x7c)));
	ASSERT_NEAR(kgb_vllm_fp8_decode(1, 0x7b), 57344.0, 0);
	/* every finite byte decodes and encodes back to itself (-0 aside) */
	for (unsigned e5 = 0; e5 < 2; e5++)
		for (unsigned b = 0; b < 256; b++) {
			double v = kgb_vllm_fp8_decode((int)e5, b);
			if (!isfinite(v) || b == 0x80)
				continue;
			ASSERT_EQ_INT(kgb_vllm_fp8_encode((int)e5, (float)v), b);
		}
}

/* Case `ci` of op with inputs (seed) and reference. */
static void build(const char *name, uint32_t ci, kgb_case_t *c, kgb_hostbufs_t *ref)
{
	char err[256];
	const kgb_op_t *op = kgb_catalog_find(name);
	ASSERT_TRUE(op != NULL);
	ASSERT_OK(kgb_case_build(op, ci, c, err, sizeof err), err);
	setenv("KGB_REF_CACHE_MB", "0", 1);
	ASSERT_OK(kgb_case_reference(c, 3, ref, err, sizeof err), err);
}

/* A copy of the reference's buffers that a check may be handed as the device's. */
static void copy_bufs(const kgb_case_t *c, const kgb_hostbufs_t *from, kgb_hostbufs_t *to)
{
	memset(to, 0, sizeof *to);
	to->n = c->ntensors;
	for (int i = 0; i < c->ntensors; i++) {
		size_t n = c->t[i].storage ? c->t[i].storage : 1;
		to->v[i] = malloc(n * sizeof(double));
		ASSERT_TRUE(to->v[i] != NULL);
		memcpy(to->v[i], from->v[i], c->t[i].storage * sizeof(double));
	}
}

static int run_check(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out, char *msg)
{
	double ma, mr;
	return c->op->check(c, ref, out, &ma, &mr, msg, 256);
}

TEST(vllm_moe_align_check_accepts_any_order_in_a_segment)
{
	kgb_case_t c;
	kgb_hostbufs_t ref, out;
	char msg[256];
	int si, ei, np;
	double *s, t;
	int64_t first = -1, last = -1, e0;
	/* a case with many tokens per expert: 256 tokens x topk 16 over 64 experts */
	const kgb_op_t *op = kgb_catalog_find("moe_align_block_size");
	uint32_t ci;
	for (ci = 0; ci < kgb_op_case_count(op); ci++) {
		char err[256];
		ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
		if (strcmp(c.label, "num_tokens=256 topk=16 num_experts=64 block_size=16") == 0)
			break;
		kgb_case_release(&c);
	}
	ASSERT_TRUE(ci < kgb_op_case_count(op));
	kgb_case_release(&c);
	build("moe_align_block_size", ci, &c, &ref);
	si = kgb_case_tensor_index(&c, "sorted_token_ids");
	ei = kgb_case_tensor_index(&c, "experts_ids");
	np = kgb_case_tensor_index(&c, "num_tokens_post_pad");
	ASSERT_EQ_INT(run_check(&c, &ref, &ref, msg), KGB_V_PASS);
	/* reverse the tokens of the first expert's segment: still valid */
	copy_bufs(&c, &ref, &out);
	s = out.v[si];
	e0 = (int64_t)out.v[ei][0];
	for (int64_t j = 0; j < (int64_t)c.t[si].numel && s[j] != (double)c.t[0].numel; j++) {
		if (j / 16 >= 1 && (int64_t)out.v[ei][j / 16] != e0)
			break;
		if (first < 0)
			first = j;
		last = j;
	}
	ASSERT_TRUE(last > first);
	for (int64_t a = first, b = last; a < b; a++, b--) {
		t = s[a];
		s[a] = s[b];
		s[b] = t;
	}
	ASSERT_EQ_INT(run_check(&c, &ref, &out, msg), KGB_V_PASS);
	/* a token moved into the next expert's segment: wrong */
	{
		int64_t seg2 = ((last / 16) + 1) * 16;
		t = s[first];
		s[first] = s[seg2];
		s[seg2] = t;
		ASSERT_EQ_INT(run_check(&c, &ref, &out, msg), KGB_V_WRONG_RESULT);
		ASSERT_CONTAINS(msg, "sorted_token_ids");
		s[seg2] = s[first];
		s[first] = t;
	}
	/* a wrong padded total */
	out.v[np][0] += 16;
	ASSERT_EQ_INT(run_check(&c, &ref, &out, msg), KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(msg, "num_tokens_post_pad");
	kgb_hostbufs_release(&out);
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

TEST(vllm_grouped_topk_check_accepts_permuted_selection)
{
	kgb_case_t c;
	kgb_hostbufs_t ref, out;
	char msg[256];
	int vi, ii;
	int64_t k;
	build("grouped_topk", 1, &c, &ref);        /* [1,256,8,4,8], f32 */
	vi = kgb_case_tensor_index(&c, "topk_values");
	ii = kgb_case_tensor_index(&c, "topk_indices");
	k = c.t[ii].shape[1];
	copy_bufs(&c, &ref, &out);
	for (int64_t j = 0; j < k / 2; j++) {      /* reverse the order of token 0's picks */
		double t = out.v[ii][j], w = out.v[vi][j];
		out.v[ii][j] = out.v[ii][k - 1 - j];
		out.v[vi][j] = out.v[vi][k - 1 - j];
		out.v[ii][k - 1 - j] = t;
		out.v[vi][k - 1 - j] = w;
	}
	ASSERT_EQ_INT(run_check(&c, &ref, &out, msg), KGB_V_PASS);
	/* a repeated expert */
	out.v[ii][1] = out.v[ii][0];
	ASSERT_EQ_INT(run_check(&c, &ref, &out, msg), KGB_V_WRONG_RESULT);
	kgb_hostbufs_release(&out);
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

/* Biased score of expert e of token t (as the check computes it). */
static double gtk_biased(const kgb_case_t *c, const kgb_hostbufs_t *b, int64_t t, int64_t e)
{
	int si = kgb_case_tensor_index(c, "scores"), bi = kgb_case_tensor_index(c, "bias");
	int64_t E = c->t[si].shape[1];
	double x = b->v[si][t * E + e], sg = x;
	if (kgb_vllm_scalar(c, "scoring_func") == 1)
		sg = (double)(float)(1.0 / (1.0 + exp(-x)));
	return (double)((float)sg + (float)b->v[bi][e]);
}

/* Cases 52 (seed 1) and 97 (seeds 1-5) have two groups within the check's tolerance at
 * the topk_group threshold: the reference's pick inside one of them must pass, and
 * swapping one pick for a lower expert of the same group must still fail. */
TEST(vllm_grouped_topk_check_near_tied_groups)
{
	static const struct { uint32_t ci; uint64_t seed; } runs[] = {
		{52, 1}, {97, 1}, {97, 2}, {97, 3}, {97, 4}, {97, 5},
	};
	const kgb_op_t *op = kgb_catalog_find("grouped_topk");
	setenv("KGB_REF_CACHE_MB", "0", 1);
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		kgb_case_t c;
		kgb_hostbufs_t ref, out;
		char err[256], msg[256];
		int ii;
		int64_t k, E, per, T, e0, low = -1;
		ASSERT_OK(kgb_case_build(op, runs[r].ci, &c, err, sizeof err), err);
		ASSERT_OK(kgb_case_reference(&c, runs[r].seed, &ref, err, sizeof err), err);
		if (run_check(&c, &ref, &ref, msg) != KGB_V_PASS)
			FAIL("case %u seed %llu: the reference fails its own check: %s", runs[r].ci,
			     (unsigned long long)runs[r].seed, msg);
		ii = kgb_case_tensor_index(&c, "topk_indices");
		T = c.t[ii].shape[0];
		k = c.t[ii].shape[1];
		E = c.t[kgb_case_tensor_index(&c, "scores")].shape[1];
		per = E / (int64_t)kgb_vllm_scalar(&c, "n_group");
		/* the last token: swap its first pick for the lowest unchosen expert of its group */
		copy_bufs(&c, &ref, &out);
		e0 = (int64_t)out.v[ii][(T - 1) * k];
		for (int64_t e = e0 / per * per; e < (e0 / per + 1) * per; e++) {
			bool chosen = false;
			for (int64_t j = 0; j < k; j++)
				chosen |= (int64_t)out.v[ii][(T - 1) * k + j] == e;
			if (!chosen && (low < 0 || gtk_biased(&c, &ref, T - 1, e) < gtk_biased(&c, &ref, T - 1, low)))
				low = e;
		}
		ASSERT_TRUE(low >= 0);
		ASSERT_TRUE(gtk_biased(&c, &ref, T - 1, low) < gtk_biased(&c, &ref, T - 1, e0));
		out.v[ii][(T - 1) * k] = (double)low;
		ASSERT_EQ_INT(run_check(&c, &ref, &out, msg), KGB_V_WRONG_RESULT);
		ASSERT_CONTAINS(msg, "not among the top");
		kgb_hostbufs_release(&out);
		kgb_hostbufs_release(&ref);
		kgb_case_release(&c);
	}
}

TEST(vllm_reshape_and_cache_places_tokens)
{
	kgb_case_t c;
	kgb_hostbufs_t ref;
	int ki, kci, vci, smi;
	int64_t H, D, BS, x;
	build("reshape_and_cache", 0, &c, &ref);   /* f16, auto, 7 tokens */
	ki = kgb_case_tensor_index(&c, "key");
	kci = kgb_case_tensor_index(&c, "key_cache");
	vci = kgb_case_tensor_index(&c, "value_cache");
	smi = kgb_case_tensor_index(&c, "slot_mapping");
	H = c.t[ki].shape[1];
	D = c.t[ki].shape[2];
	BS = c.t[kci].shape[3];
	x = c.t[kci].shape[4];
	ASSERT_EQ_INT(x, 8);
	ASSERT_EQ_INT(ref.v[smi][c.t[smi].numel - 1], -1);     /* the padding token */
	for (int64_t t = 0; t + 1 < c.t[ki].shape[0]; t++) {
		int64_t slot = (int64_t)ref.v[smi][t], blk = slot / BS, off = slot % BS;
		int64_t h = t % H, d = (t * 7) % D;
		double kv = ref.v[ki][(t * H + h) * D + d];
		double got = ref.v[kci][(((blk * H + h) * (D / x) + d / x) * BS + off) * x + d % x];
		ASSERT_NEAR(got, kv, 0);
		ASSERT_NEAR(ref.v[vci][((blk * H + h) * D + d) * BS + off],
		            ref.v[kgb_case_tensor_index(&c, "value")][(t * H + h) * D + d], 0);
	}
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

TEST(vllm_hadacore_small_transform)
{
	kgb_case_t c;
	kgb_hostbufs_t in, ref;
	char err[256];
	int xi;
	build("hadacore_transform", 0, &c, &ref);  /* bf16, dim 16, 4 rows */
	ASSERT_OK(kgb_case_inputs(&c, 3, &in, err, sizeof err), err);
	xi = kgb_case_tensor_index(&c, "x");
	/* row 0, output 0 is the sum of the row / 4; output 1 alternates signs */
	{
		double s0 = 0, s1 = 0;
		for (int j = 0; j < 16; j++) {
			s0 += in.v[xi][j];
			s1 += (j % 2 ? -1 : 1) * in.v[xi][j];
		}
		ASSERT_NEAR(ref.v[xi][0], s0 / 4, 1e-12);
		ASSERT_NEAR(ref.v[xi][1], s1 / 4, 1e-12);
	}
	kgb_hostbufs_release(&in);
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

TEST(vllm_merge_attn_states_inf_prefix)
{
	kgb_case_t c;
	kgb_hostbufs_t ref;
	int oi, li, pl, so, sl;
	int64_t T, H, D;
	size_t ninf = 0;
	build("merge_attn_states", 20, &c, &ref);  /* 613 tokens: some prefix_lse are +inf */
	oi = kgb_case_tensor_index(&c, "output");
	li = kgb_case_tensor_index(&c, "output_lse");
	pl = kgb_case_tensor_index(&c, "prefix_lse");
	so = kgb_case_tensor_index(&c, "suffix_output");
	sl = kgb_case_tensor_index(&c, "suffix_lse");
	T = c.t[oi].shape[0];
	H = c.t[oi].shape[1];
	D = c.t[oi].shape[2];
	for (int64_t h = 0; h < H; h++)
		for (int64_t t = 0; t < T; t++) {
			if (!isinf(ref.v[pl][h * T + t]))
				continue;
			ninf++;
			/* an empty prefix: the suffix alone */
			ASSERT_NEAR(ref.v[li][h * T + t], ref.v[sl][h * T + t], 1e-12);
			ASSERT_NEAR(ref.v[oi][(t * H + h) * D], ref.v[so][(t * H + h) * D], 1e-12);
		}
	ASSERT_TRUE(ninf > 0);
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

TEST(vllm_dataset_lists_the_operators)
{
	static const char *const names[] = {
		"apply_repetition_penalties_cuda", "batched_moe_align_block_size", "concat_and_cache_mla",
		"convert_vertical_slash_indexes", "copy_blocks", "copy_blocks_mla", "cp_gather_cache",
		"cp_gather_indexer_k_quant_cache", "fused_add_rms_norm", "fused_qk_norm_rope",
		"gather_and_maybe_dequant_cache", "grouped_topk", "hadacore_transform", "merge_attn_states",
		"moe_align_block_size", "moe_lora_align_block_size", "moe_sum", "paged_attention_v1",
		"paged_attention_v2", "reshape_and_cache", "reshape_and_cache_flash", "selective_scan_fwd",
		"shuffle_rows", "swap_blocks", "topk_softmax", "rms_norm", "rotary_embedding",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const kgb_op_t *op = kgb_catalog_find(names[i]);
		ASSERT_TRUE(op != NULL);
		ASSERT_TRUE(op->datasets & KGB_DS_VLLM);
		ASSERT_EQ_STR(op->source, "vllm");
		ASSERT_TRUE(kgb_op_case_count(op) > 0);
		ASSERT_TRUE(kgb_op_smoke_case_count(op) <= kgb_op_case_count(op));
	}
}
