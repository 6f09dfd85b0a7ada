/* vLLM attention and state-space operators: paged attention over the paged KV cache
 * (paged_attention_v1, and v2 with its per-partition statistics), merging two partial
 * attention results by their log-sum-exp (merge_attn_states), the sparse-attention
 * index builder of MInference (convert_vertical_slash_indexes) and the Mamba selective
 * scan (selective_scan_fwd). Semantics of vLLM 0.13 (csrc/attention,
 * csrc/mamba/mamba_ssm/selective_scan_fwd.cu).
 *
 * Paged caches use vLLM's layouts: key_cache [num_blocks, num_kv_heads, head_size / x,
 * block_size, x] with x = 16 / element size, value_cache [num_blocks, num_kv_heads,
 * head_size, block_size]; fp8 caches are u8 bytes of e4m3 values, read as
 * fp8_value * k_scale (v_scale). */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "aten_common.h"
#include "ops.h"
#include "vllm_common.h"

#define B kgb_vllm_buf
#define TT kgb_vllm_t
#define PARTITION 512

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* ---- paged_attention_v1 / v2 ---- */

/* Sequence s's length: fixed per case (num_seqs sequences, the first max_seq_len long). */
static int64_t pa_len(int64_t s, int64_t max_len)
{
	static const int64_t div[] = { 1, 2, 7, 3, 5, 11, 4 };
	int64_t l = max_len / div[s % 7] + (s % 7 ? 3 * s : 0);
	return l < 1 ? 1 : (l > max_len ? max_len : l);
}

static int pa_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int v2 = strcmp(c->op->name, "paged_attention_v2") == 0;
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int fp8 = strncmp(kgb_case_pstr(c, "kv_cache_dtype", "auto"), "fp8", 3) == 0;
	kgb_dtype_t cdt = fp8 ? KGB_DT_U8 : dt;
	const kgb_pval_t *hp = kgb_case_param(c, "heads");
	int64_t S = kgb_case_pint(c, "num_seqs", 3), D = kgb_case_pint(c, "head_size", 64);
	int64_t BS = kgb_case_pint(c, "block_size", 16), L = kgb_case_pint(c, "max_seq_len", 200);
	int64_t H, KH, x = kgb_vllm_key_x(cdt), nb = 0, maxb = cdiv(L, BS), sh[5], one = 1, P = cdiv(L, PARTITION);
	kgb_tensor_t *t;
	if (!hp || hp->kind != KGB_PV_SHAPE || hp->ndim != 2 || hp->dims[0] % hp->dims[1] || D % x)
		return kgb_err(err, errlen, "op %s case %u: heads must be [num_heads,num_kv_heads] with num_kv_heads "
		               "dividing num_heads, head_size a multiple of %lld", c->op->name, c->index, (long long)x);
	H = hp->dims[0];
	KH = hp->dims[1];
	for (int64_t s = 0; s < S; s++)
		nb += cdiv(pa_len(s, L), BS);
	nb += 3;                               /* a few blocks no sequence uses */
	sh[0] = S; sh[1] = H; sh[2] = D;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 3, sh);
	if (v2) {
		sh[2] = P;
		t = kgb_case_add_tensor(c, "exp_sums", KGB_ROLE_INOUT, KGB_DT_F32, 3, sh);
		kgb_aten_gen(t, KGB_GEN_ZERO, 0, 0);
		t = kgb_case_add_tensor(c, "max_logits", KGB_ROLE_INOUT, KGB_DT_F32, 3, sh);
		kgb_aten_gen(t, KGB_GEN_ZERO, 0, 0);
		sh[3] = D;
		t = kgb_case_add_tensor(c, "tmp_out", KGB_ROLE_INOUT, dt, 4, sh);
		kgb_aten_gen(t, KGB_GEN_ZERO, 0, 0);
		sh[2] = D;
	}
	kgb_case_add_tensor(c, "query", KGB_ROLE_IN, dt, 3, sh);
	sh[0] = nb; sh[1] = KH; sh[2] = D / x; sh[3] = BS; sh[4] = x;
	t = kgb_case_add_tensor(c, "key_cache", KGB_ROLE_IN, cdt, 5, sh);
	sh[2] = D; sh[3] = BS;
	kgb_case_add_tensor(c, "value_cache", KGB_ROLE_IN, cdt, 4, sh);
	sh[0] = S; sh[1] = maxb;
	t = kgb_case_add_tensor(c, "block_tables", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	t = kgb_case_add_tensor(c, "seq_lens", KGB_ROLE_IN, KGB_DT_I32, 1, &S);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	t = kgb_case_add_tensor(c, "alibi_slopes", KGB_ROLE_IN, KGB_DT_F32, 1, &H);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, -0.1, 0);
	t = kgb_case_add_tensor(c, "k_scale", KGB_ROLE_IN, KGB_DT_F32, 1, &one);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, 0.05, 0.1);
	t = kgb_case_add_tensor(c, "v_scale", KGB_ROLE_IN, KGB_DT_F32, 1, &one);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, 0.05, 0.1);
	kgb_case_add_scalar(c, "num_kv_heads", KGB_DT_I64, (double)KH);
	kgb_case_add_scalar(c, "scale", KGB_DT_F32, 1.0 / sqrt((double)D));
	kgb_case_add_scalar(c, "block_size", KGB_DT_I64, (double)BS);
	kgb_case_add_scalar(c, "max_seq_len", KGB_DT_I64, (double)L);
	kgb_case_add_scalar(c, "use_alibi", KGB_DT_I32, (double)kgb_case_pint(c, "alibi", 0));
	KGB_SYMS(c, "num_seqs num_heads head_size x max_num_blocks_per_seq max_num_partitions partition_size", S, H,
	         D, x, maxb, P, PARTITION);
	c->reduce_len = (double)L;
	kgb_case_default_tol(c);
	c->timed = c->grid == (v2 ? 1 : 2);
	return 0;
}

static void pa_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *bt = TT(c, "block_tables"), *kc = TT(c, "key_cache");
	int64_t S = bt->shape[0], maxb = bt->shape[1], nb = kc->shape[0], used = 0;
	int64_t L = (int64_t)kgb_vllm_scalar(c, "max_seq_len"), BS = (int64_t)kgb_vllm_scalar(c, "block_size");
	int64_t *p = kgb_xmalloc((size_t)nb * sizeof *p);
	double *btv = B(c, b, "block_tables"), *sl = B(c, b, "seq_lens");
	kgb_vllm_perm(rng, p, nb);
	for (int64_t s = 0; s < S; s++) {
		int64_t n = cdiv(pa_len(s, L), BS);
		sl[s] = (double)pa_len(s, L);
		/* the blocks a sequence uses are distinct; unused entries point anywhere valid */
		for (int64_t j = 0; j < maxb; j++)
			btv[s * maxb + j] = (double)(j < n ? p[used + j] : p[kgb_vllm_randint(rng, 0, nb - 1)]);
		used += n;
	}
	if (kc->dtype == KGB_DT_U8) {
		/* fp8 bytes of moderate magnitude (|v| < 16), no NaN codes */
		for (int k = 0; k < 2; k++) {
			const kgb_tensor_t *t = TT(c, k ? "value_cache" : "key_cache");
			double *v = B(c, b, t->name);
			for (size_t i = 0; i < t->numel; i++)
				v[i] = (double)((unsigned)kgb_vllm_randint(rng, 0, 0x5f) | (kgb_rng_next(rng) & 1 ? 0x80u : 0));
		}
	}
	free(p);
}

static double pa_cache(const kgb_case_t *c, const double *v, size_t o, double scale, int fp8)
{
	(void)c;
	return fp8 ? (double)((float)kgb_vllm_fp8_decode(0, (unsigned)v[o]) * (float)scale) : v[o];
}

static int pa_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int v2 = strcmp(c->op->name, "paged_attention_v2") == 0;
	const kgb_tensor_t *q = TT(c, "query"), *kc = TT(c, "key_cache"), *bt = TT(c, "block_tables");
	int64_t S = q->shape[0], H = q->shape[1], D = q->shape[2], KH = kc->shape[1], BS = kc->shape[3];
	int64_t x = kc->shape[4], maxb = bt->shape[1], nb = kc->shape[0];
	int64_t P = v2 ? TT(c, "exp_sums")->shape[2] : 0, L = (int64_t)kgb_vllm_scalar(c, "max_seq_len");
	int fp8 = kc->dtype == KGB_DT_U8, alibi = kgb_vllm_scalar(c, "use_alibi") != 0;
	double *qv = B(c, b, "query"), *kcv = B(c, b, "key_cache"), *vcv = B(c, b, "value_cache");
	double *btv = B(c, b, "block_tables"), *sl = B(c, b, "seq_lens"), *al = B(c, b, "alibi_slopes");
	double ks = B(c, b, "k_scale")[0], vs = B(c, b, "v_scale")[0], sc = kgb_vllm_scalar(c, "scale");
	double *out = B(c, b, "out"), *logit = kgb_xmalloc((size_t)L * sizeof *logit);
	kgb_dtype_t dt = q->dtype;
	for (int64_t s = 0; s < S; s++) {
		int64_t n = (int64_t)sl[s];
		if (n < 1 || n > L || cdiv(n, BS) > maxb)
			goto bad;
		for (int64_t h = 0; h < H; h++) {
			int64_t kh = h / (H / KH);
			double mx = -INFINITY;
			for (int64_t j = 0; j < n; j++) {
				int64_t blk = (int64_t)btv[s * maxb + j / BS], off = j % BS;
				double dot = 0;
				if (blk < 0 || blk >= nb)
					goto bad;
				for (int64_t d = 0; d < D; d++) {
					size_t ko = (size_t)((((blk * KH + kh) * (D / x) + d / x) * BS + off) * x + d % x);
					dot += qv[(s * H + h) * D + d] * pa_cache(c, kcv, ko, ks, fp8);
				}
				logit[j] = sc * dot + (alibi ? al[h] * (double)(j - n + 1) : 0);
				mx = fmax(mx, logit[j]);
			}
			/* v1: one softmax over the sequence; v2: the same per partition of 512
			 * tokens, kept in exp_sums / max_logits / tmp_out, then merged */
			for (int64_t p0 = 0, pi = 0; p0 < n; p0 += (v2 ? PARTITION : n), pi++) {
				int64_t p1 = v2 ? (p0 + PARTITION < n ? p0 + PARTITION : n) : n;
				double pmx = -INFINITY, sum = 0;
				for (int64_t j = p0; j < p1; j++)
					pmx = fmax(pmx, logit[j]);
				for (int64_t j = p0; j < p1; j++)
					sum += exp(logit[j] - pmx);
				if (v2) {
					size_t so = (size_t)((s * H + h) * P + pi);
					if (pi >= P)
						goto bad;
					B(c, b, "exp_sums")[so] = sum;
					B(c, b, "max_logits")[so] = pmx;
					for (int64_t d = 0; d < D; d++) {
						double acc = 0;
						for (int64_t j = p0; j < p1; j++) {
							int64_t blk = (int64_t)btv[s * maxb + j / BS], off = j % BS;
							size_t vo = (size_t)(((blk * KH + kh) * D + d) * BS + off);
							acc += exp(logit[j] - pmx) / sum * pa_cache(c, vcv, vo, vs, fp8);
						}
						B(c, b, "tmp_out")[so * (size_t)D + (size_t)d] = acc;
					}
				}
			}
			{
				double tot = 0;
				for (int64_t j = 0; j < n; j++)
					tot += exp(logit[j] - mx);
				for (int64_t d = 0; d < D; d++) {
					double acc = 0;
					for (int64_t j = 0; j < n; j++) {
						int64_t blk = (int64_t)btv[s * maxb + j / BS], off = j % BS;
						size_t vo = (size_t)(((blk * KH + kh) * D + d) * BS + off);
						acc += exp(logit[j] - mx) * pa_cache(c, vcv, vo, vs, fp8);
					}
					out[(s * H + h) * D + d] = acc / tot;
				}
			}
		}
	}
	(void)dt;
	free(logit);
	return 0;
bad:
	free(logit);
	return -1;
}

#define PA_SUMMARY \
	"for sequence s (length seq_lens[s]) and head h (kv head h / (num_heads / num_kv_heads)): " \
	"logit_j = scale * <query[s, h], K_j> (+ alibi_slopes[h] * (j - len + 1) when use_alibi) over " \
	"tokens j, K_j[d] = key_cache[blk, kvh, d / x, j % block_size, d % x], blk = block_tables[s, " \
	"j / block_size]; out[s, h] = softmax(logit) . V_j with V_j[d] = value_cache[blk, kvh, d, " \
	"j % block_size]; kv_cache_dtype fp8: caches are u8 e4m3 bytes times k_scale / v_scale; " \
	"tp_rank and the block-sparse parameters are 0"

static const kgb_op_t op_paged_attention_v1 = {
	.name = "paged_attention_v1",
	.source = "vllm",
	.category = "attention",
	.dtypes = "bf16 f16 u8(fp8)",
	.datasets = KGB_DS_VLLM,
	.summary = PA_SUMMARY,
	.signature = "out:out query:in key_cache:in value_cache:in num_kv_heads:i64 scale:f32 block_tables:in(i32) "
	             "seq_lens:in(i32) block_size:i64 max_seq_len:i64 alibi_slopes:in(f32, used when use_alibi) "
	             "kv_cache_dtype:str k_scale:in(f32[1]) v_scale:in(f32[1])",
	.grids = {
		{ { { "dtype", "f16" }, { "heads", "[4,2]" }, { "head_size", "64" }, { "max_seq_len", "40" } } },
		{ { { "dtype", "f16 bf16" }, { "kv_cache_dtype", "auto fp8" }, { "heads", "[8,8] [16,2]" },
		    { "head_size", "64 80 128 256" }, { "block_size", "16 32" }, { "alibi", "0 1" } } },
		{ { { "dtype", "bf16" }, { "heads", "[32,8]" }, { "head_size", "128" }, { "num_seqs", "4" },
		    { "max_seq_len", "512" } } },
	},
	.setup = pa_setup,
	.ref = pa_ref,
	.gen_inputs = pa_gen,
	.declared_cases = 960,
	.deviation = "1 smoke case, then 128 = dtype x kv_cache_dtype x heads (MHA 8/8, GQA 16/2) x "
	             "head_size (64, 80, 128, 256) x block_size x alibi over 3 sequences of up to 200 "
	             "tokens, and one timed case; the public grid adds f32, more head sizes and 40- and "
	             "64-head shapes over 4096-token sequences, which repeat these kernel paths at a "
	             "reference cost of minutes per case",
	.smoke_grids = 1,
};

static const kgb_op_t op_paged_attention_v2 = {
	.name = "paged_attention_v2",
	.source = "vllm",
	.category = "attention",
	.dtypes = "bf16 f16 u8(fp8)",
	.datasets = KGB_DS_VLLM,
	.summary = PA_SUMMARY "; v2 splits each sequence into partitions of 512 tokens: for partition p < "
	           "ceil(len / 512), max_logits[s, h, p] = the partition's largest logit, exp_sums[s, h, p] = "
	           "sum exp(logit - max), tmp_out[s, h, p] = the partition's softmax-weighted V; entries of "
	           "later partitions are left as they were",
	.signature = "out:out exp_sums:inout(f32) max_logits:inout(f32) tmp_out:inout query:in key_cache:in "
	             "value_cache:in num_kv_heads:i64 scale:f32 block_tables:in(i32) seq_lens:in(i32) "
	             "block_size:i64 max_seq_len:i64 alibi_slopes:in(f32) kv_cache_dtype:str "
	             "k_scale:in(f32[1]) v_scale:in(f32[1])",
	.grids = {
		{ { { "dtype", "bf16" }, { "kv_cache_dtype", "auto fp8" }, { "heads", "[8,2]" },
		    { "head_size", "64 128" }, { "alibi", "0 1" }, { "num_seqs", "2" },
		    { "max_seq_len", "1030" } } },
		{ { { "dtype", "bf16" }, { "heads", "[16,2]" }, { "head_size", "128" }, { "num_seqs", "4" },
		    { "max_seq_len", "2048" } } },
	},
	.setup = pa_setup,
	.ref = pa_ref,
	.gen_inputs = pa_gen,
	.declared_cases = 8,
	.deviation = "the 8 of kv_cache_dtype x head_size x alibi over 2 sequences of up to 1030 tokens "
	             "(three partitions) and one timed case; the per-partition statistics are compared "
	             "too (they are outputs of the signature, and the reduction reads them); the "
	             "partition buffers start at zero",
};

/* ---- merge_attn_states ---- */

static int mas_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t T = kgb_case_pint(c, "num_tokens", 17), H = kgb_case_pint(c, "num_heads", 8);
	int64_t D = kgb_case_pint(c, "head_size", 128), sh[3] = { T, H, D }, ls[2] = { H, T };
	kgb_tensor_t *t;
	(void)err;
	(void)errlen;
	kgb_case_add_tensor(c, "output", KGB_ROLE_OUT, dt, 3, sh);
	kgb_case_add_tensor(c, "output_lse", KGB_ROLE_OUT, KGB_DT_F32, 2, ls);
	kgb_case_add_tensor(c, "prefix_output", KGB_ROLE_IN, dt, 3, sh);
	t = kgb_case_add_tensor(c, "prefix_lse", KGB_ROLE_IN, KGB_DT_F32, 2, ls);
	kgb_aten_gen(t, KGB_GEN_NORMAL, 2, 3);
	kgb_case_add_tensor(c, "suffix_output", KGB_ROLE_IN, dt, 3, sh);
	t = kgb_case_add_tensor(c, "suffix_lse", KGB_ROLE_IN, KGB_DT_F32, 2, ls);
	kgb_aten_gen(t, KGB_GEN_NORMAL, 2, 3);
	KGB_SYMS(c, "num_tokens num_heads head_size", T, H, D);
	kgb_case_default_tol(c);
	c->timed = c->grid == 2;
	return 0;
}

/* About 5% of prefix_lse is +inf (an empty prefix), which the kernel treats as -inf. */
static void mas_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	double *p = B(c, b, "prefix_lse");
	for (size_t i = 0; i < TT(c, "prefix_lse")->numel; i++)
		if (kgb_rng_uniform(rng) < 0.05)
			p[i] = INFINITY;
}

static int mas_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *o = TT(c, "output");
	int64_t T = o->shape[0], H = o->shape[1], D = o->shape[2];
	double *out = B(c, b, "output"), *ol = B(c, b, "output_lse"), *po = B(c, b, "prefix_output");
	double *pl = B(c, b, "prefix_lse"), *so = B(c, b, "suffix_output"), *sl = B(c, b, "suffix_lse");
	for (int64_t t = 0; t < T; t++)
		for (int64_t h = 0; h < H; h++) {
			double p = pl[h * T + t], s = sl[h * T + t], m, pe, se, tot;
			if (isinf(p))
				p = -INFINITY;
			if (isinf(s))
				s = -INFINITY;
			m = fmax(p, s);
			pe = exp(p - m);
			se = exp(s - m);
			tot = pe + se;
			for (int64_t d = 0; d < D; d++) {
				size_t k = (size_t)((t * H + h) * D + d);
				out[k] = po[k] * (pe / tot) + so[k] * (se / tot);
			}
			ol[h * T + t] = log(tot) + m;
		}
	return 0;
}

static const kgb_op_t op_merge_attn_states = {
	.name = "merge_attn_states",
	.source = "vllm",
	.category = "attention",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "per token t and head h, with p = prefix_lse[h, t] (+inf read as -inf), s = "
	           "suffix_lse[h, t], m = max(p, s), a = exp(p - m), b = exp(s - m): output[t, h, :] = "
	           "(a * prefix_output[t, h, :] + b * suffix_output[t, h, :]) / (a + b); output_lse[h, t] = "
	           "log(a + b) + m (f32); lse tensors are [num_heads, num_tokens]",
	.signature = "output:out output_lse:out(f32) prefix_output:in prefix_lse:in(f32) suffix_output:in "
	             "suffix_lse:in(f32)",
	.grids = {
		{ { { "dtype", "f16" }, { "num_tokens", "5" }, { "num_heads", "2" }, { "head_size", "64" } } },
		{ { { "dtype", "f32 f16 bf16" }, { "num_tokens", "1 17 256 613" }, { "num_heads", "2" },
		    { "head_size", "64 128" } } },
		{ { { "dtype", "bf16" }, { "num_tokens", "128" }, { "num_heads", "16" }, { "head_size", "128" } } },
	},
	.setup = mas_setup,
	.ref = mas_ref,
	.gen_inputs = mas_gen,
	.declared_cases = 18,
	.deviation = "1 smoke case, 24 = dtype x num_tokens (1 to 613) x head_size (64, 128) and one "
	             "timed case; optional output_lse always given; 5% of prefix_lse is +inf",
	.smoke_grids = 1,
};

/* ---- convert_vertical_slash_indexes ---- */

static int cvs_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t Bn, H, ctx, nv, ns, M = 64, N = 64, rows, sh[4];
	kgb_tensor_t *t;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5 || cfg->dims[3] > cfg->dims[2] ||
	    cfg->dims[4] > cfg->dims[2])
		return kgb_err(err, errlen, "op %s case %u: cfg must be [batch,heads,context,nnz_v,nnz_s] with "
		               "nnz at most context", c->op->name, c->index);
	Bn = cfg->dims[0]; H = cfg->dims[1]; ctx = cfg->dims[2]; nv = cfg->dims[3]; ns = cfg->dims[4];
	rows = cdiv(ctx, M);
	sh[0] = Bn; sh[1] = H; sh[2] = rows;
	for (int k = 0; k < 4; k++) {
		static const char *const names[] = { "block_count", "block_offset", "column_count", "column_index" };
		sh[3] = k == 1 ? ns : nv;
		t = kgb_case_add_tensor(c, names[k], KGB_ROLE_INOUT, KGB_DT_I32, k % 2 ? 4 : 3, sh);
		kgb_aten_gen(t, KGB_GEN_ZERO, 0, 0);
	}
	t = kgb_case_add_tensor(c, "q_seqlens", KGB_ROLE_IN, KGB_DT_I32, 1, &Bn);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	t = kgb_case_add_tensor(c, "kv_seqlens", KGB_ROLE_IN, KGB_DT_I32, 1, &Bn);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	sh[2] = nv;
	t = kgb_case_add_tensor(c, "vertical_indexes", KGB_ROLE_IN, KGB_DT_I32, 3, sh);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	sh[2] = ns;
	t = kgb_case_add_tensor(c, "slash_indexes", KGB_ROLE_IN, KGB_DT_I32, 3, sh);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	kgb_case_add_scalar(c, "context_size", KGB_DT_I64, (double)ctx);
	kgb_case_add_scalar(c, "block_size_M", KGB_DT_I64, (double)M);
	kgb_case_add_scalar(c, "block_size_N", KGB_DT_I64, (double)N);
	kgb_case_add_scalar(c, "causal", KGB_DT_I32, (double)kgb_case_pint(c, "causal", 1));
	kgb_case_set_sym(c, "num_rows", rows);
	kgb_case_default_tol(c);
	c->timed = c->grid == 2;
	return 0;
}

/* q_seqlens[b] = context - 13 b (at least 1), kv_seqlens[b] = context; per (batch, head):
 * nnz_v distinct vertical columns ascending, nnz_s distinct slash offsets descending,
 * all below kv_seqlen. */
static void cvs_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *vt = TT(c, "vertical_indexes"), *st = TT(c, "slash_indexes");
	int64_t Bn = vt->shape[0], H = vt->shape[1], nv = vt->shape[2], ns = st->shape[2];
	int64_t ctx = (int64_t)kgb_vllm_scalar(c, "context_size");
	int64_t *p = kgb_xmalloc((size_t)(ctx > 0 ? ctx : 1) * sizeof *p);
	double *q = B(c, b, "q_seqlens"), *kv = B(c, b, "kv_seqlens"), *v = B(c, b, "vertical_indexes");
	double *s = B(c, b, "slash_indexes");
	uint8_t *mark = kgb_xmalloc((size_t)(ctx > 0 ? ctx : 1));
	size_t nmark = (size_t)(ctx > 0 ? ctx : 1);
	for (int64_t i = 0; i < Bn; i++) {
		q[i] = (double)(ctx - 13 * i > 0 ? ctx - 13 * i : 1);
		kv[i] = (double)ctx;
	}
	for (int64_t i = 0; i < Bn * H; i++) {
		int64_t k = 0;
		kgb_vllm_perm(rng, p, ctx);
		memset(mark, 0, nmark);
		for (int64_t j = 0; j < nv; j++)
			mark[p[j]] = 1;
		for (int64_t j = 0; j < ctx; j++)
			if (mark[j])
				v[i * nv + k++] = (double)j;
		/* slashes: offsets from the diagonal, near ones more likely (0 always present) */
		kgb_vllm_perm(rng, p, ctx);
		memset(mark, 0, nmark);
		mark[0] = 1;
		for (int64_t j = 0, n = 1; n < ns && j < ctx; j++)
			if (!mark[p[j]]) {
				mark[p[j]] = 1;
				n++;
			}
		k = 0;
		for (int64_t j = ctx - 1; j >= 0; j--)
			if (mark[j])
				s[i * ns + k++] = (double)j;
	}
	free(p);
	free(mark);
}

/* One row block (batch b, head h, row m): the column list and the block list. Follows
 * vLLM's merge of the sorted vertical and slash index lists: slashes become diagonal
 * bands; bands closer than one block merge; verticals that fall before the current band
 * become single columns. Returns -1 if an output row would overflow (a catalog bug). */
static int cvs_row(const double *vi, int64_t nv, const double *si, int64_t ns, int64_t q, int64_t kv, int64_t m,
                   int64_t M, int64_t N, int causal, double *blk_off, int64_t *nblk, double *col, int64_t *ncol)
{
	int64_t start = m * M, end = start + M, shift = causal ? kv - q : kv;
	int64_t next_v = 0, next_s = 0, vcur, scur, lo, hi, bc = 0, cc = 0;
	int have_slash = 1, slashes_done = 0;

#define SAVE_RANGE(a, z) do {                                                         \
		int64_t r0 = (a), r1 = (z) > kv ? kv : (z);                                   \
		for (int64_t ii = r0; r0 < kv && ii < r1; ii += N) {                          \
			if (bc >= ns)                                                             \
				return -1;                                                            \
			blk_off[bc++] = (double)ii;                                               \
		}                                                                             \
	} while (0)

	vcur = (int64_t)vi[next_v++];
	scur = (int64_t)si[next_s++];
	/* skip slashes that lie entirely right of this row block */
	while (scur >= end + shift && next_s < ns)
		scur = (int64_t)si[next_s++];
	if (scur > end + shift)
		have_slash = 0;
	scur = shift + end - scur > M ? shift + end - scur : M;
	lo = scur - M;
	hi = scur;
	if (!have_slash) {
		lo = causal ? shift + end : kv;
		hi = lo + N;
	}
	for (;;) {
		if (vcur < hi) {
			if (vcur < lo) {
				if (cc >= nv)
					return -1;
				col[cc++] = (double)vcur;
			}
			vcur = next_v < nv ? (int64_t)vi[next_v++] : end + N + shift;
			continue;
		}
		if (next_s < ns && (causal || (int64_t)si[next_s] >= start)) {
			int64_t d = shift + end - (int64_t)si[next_s++];
			scur = d > M ? d : M;
		} else if (next_v == nv || (vcur > lo && causal)) {
			if (next_v == nv && !causal && vcur < kv) {
				if (cc >= nv)
					return -1;
				col[cc++] = (double)vcur;
			}
			SAVE_RANGE(lo, hi);
			break;
		} else {
			if (!causal)
				SAVE_RANGE(lo, hi);
			lo = causal ? shift + end : kv;
			hi = lo + N;
			slashes_done = 1;
		}
		if (!slashes_done) {
			if (scur > hi + M) {
				SAVE_RANGE(lo, hi);
				lo = scur - M;
				hi = scur;
			} else if (scur > hi) {
				hi += M;
			}
		}
	}
#undef SAVE_RANGE
	*nblk = bc;
	*ncol = cc;
	return 0;
}

static int cvs_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *bc = TT(c, "block_count");
	int64_t Bn = bc->shape[0], H = bc->shape[1], rows = bc->shape[2];
	int64_t nv = TT(c, "vertical_indexes")->shape[2], ns = TT(c, "slash_indexes")->shape[2];
	int64_t M = (int64_t)kgb_vllm_scalar(c, "block_size_M"), N = (int64_t)kgb_vllm_scalar(c, "block_size_N");
	int causal = kgb_vllm_scalar(c, "causal") != 0;
	double *q = B(c, b, "q_seqlens"), *kv = B(c, b, "kv_seqlens");
	for (int64_t i = 0; i < Bn; i++)
		for (int64_t h = 0; h < H; h++)
			for (int64_t m = 0; m < rows; m++) {
				int64_t row = (i * H + h) * rows + m, nblk, ncol;
				if (m * M >= (int64_t)q[i])
					continue;       /* rows past the query: left as they were */
				if (cvs_row(B(c, b, "vertical_indexes") + (i * H + h) * nv, nv,
				            B(c, b, "slash_indexes") + (i * H + h) * ns, ns, (int64_t)q[i], (int64_t)kv[i], m, M,
				            N, causal, B(c, b, "block_offset") + row * ns, &nblk,
				            B(c, b, "column_index") + row * nv, &ncol))
					return -1;
				B(c, b, "block_count")[row] = (double)nblk;
				B(c, b, "column_count")[row] = (double)ncol;
			}
	return 0;
}

static const kgb_op_t op_convert_vertical_slash_indexes = {
	.name = "convert_vertical_slash_indexes",
	.source = "vllm",
	.category = "attention",
	.dtypes = "i32",
	.datasets = KGB_DS_VLLM,
	.summary = "MInference sparse layout: for every (batch, head) and row block m (block_size_M = 64 "
	           "query rows, m * 64 < q_seqlens[b]), merge the ascending vertical_indexes and the "
	           "descending slash_indexes (diagonal offsets) into block_offset[.., m, :block_count] (starts "
	           "of block_size_N = 64 key blocks covering the slash bands, merged when closer than a "
	           "block) and column_index[.., m, :column_count] (vertical columns outside the bands); "
	           "causal: bands relative to kv_seqlen - q_seqlen; entries past the counts and rows past the "
	           "query are left as they were (zero)",
	.signature = "block_count:inout(i32) block_offset:inout(i32) column_count:inout(i32) column_index:inout(i32) "
	             "q_seqlens:in(i32) kv_seqlens:in(i32) vertical_indexes:in(i32) slash_indexes:in(i32) "
	             "context_size:i64 block_size_M:i64 block_size_N:i64 causal:i32",
	.grids = {
		{ { { "cfg", "[1,1,200,8,8]" }, { "causal", "1" } } },
		{ { { "cfg", "[1,2,256,16,16] [2,4,500,32,16] [1,2,1024,64,64] [3,2,777,40,24] [2,1,2048,100,50] "
		             "[1,4,130,130,10]" },
		    { "causal", "1 0" } } },
		{ { { "cfg", "[1,8,4096,256,128]" }, { "causal", "1" } } },
	},
	.setup = cvs_setup,
	.ref = cvs_ref,
	.gen_inputs = cvs_gen,
	.declared_cases = 13,
	.deviation = "1 smoke case, 12 = 6 shapes (batch, heads, context, nnz_v, nnz_s) x causal and one "
	             "timed case: 13 as public; the outputs are INOUT starting at zero, as vLLM's wrapper "
	             "allocates them",
	.smoke_grids = 1,
};

/* ---- selective_scan_fwd ---- */

static int ssf_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t Bn, Dm, L, N, G, sh[4];
	kgb_tensor_t *t;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5 || cfg->dims[1] % cfg->dims[4])
		return kgb_err(err, errlen, "op %s case %u: cfg must be [batch,dim,seqlen,dstate,n_groups] with "
		               "n_groups dividing dim", c->op->name, c->index);
	Bn = cfg->dims[0]; Dm = cfg->dims[1]; L = cfg->dims[2]; N = cfg->dims[3]; G = cfg->dims[4];
	sh[0] = Bn; sh[1] = Dm; sh[2] = L;
	kgb_case_add_tensor(c, "u", KGB_ROLE_IN, dt, 3, sh);
	/* time steps >= 0, as vLLM's test draws them (0.5 * rand): a negative step without
	 * softplus makes exp(dt * A) > 1 and the state overflows fp32 over the sequence */
	t = kgb_case_add_tensor(c, "delta", KGB_ROLE_INOUT, dt, 3, sh);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, 0.0, 0.5);
	sh[0] = Dm; sh[1] = N;
	t = kgb_case_add_tensor(c, "A", KGB_ROLE_IN, KGB_DT_F32, 2, sh);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, -2.0, -0.1);
	sh[0] = Bn; sh[1] = G; sh[2] = N; sh[3] = L;
	kgb_case_add_tensor(c, "B", KGB_ROLE_IN, dt, 4, sh);
	kgb_case_add_tensor(c, "C", KGB_ROLE_IN, dt, 4, sh);
	kgb_case_add_tensor(c, "D", KGB_ROLE_IN, KGB_DT_F32, 1, &Dm);
	sh[0] = Bn; sh[1] = Dm; sh[2] = L;
	kgb_case_add_tensor(c, "z", KGB_ROLE_INOUT, dt, 3, sh);
	t = kgb_case_add_tensor(c, "delta_bias", KGB_ROLE_IN, KGB_DT_F32, 1, &Dm);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, 0.0, 0.5);
	t = kgb_case_add_tensor(c, "has_initial_state", KGB_ROLE_IN, KGB_DT_BOOL, 1, &Bn);
	kgb_aten_gen(t, KGB_GEN_BOOL, 0.5, 0);
	sh[0] = Bn; sh[1] = Dm; sh[2] = N;
	t = kgb_case_add_tensor(c, "ssm_states", KGB_ROLE_INOUT, KGB_DT_F32, 3, sh);
	kgb_aten_gen(t, KGB_GEN_NORMAL, 0, 0.5);
	kgb_case_add_scalar(c, "delta_softplus", KGB_DT_I32, (double)kgb_case_pint(c, "delta_softplus", 1));
	KGB_SYMS(c, "batch dim seqlen dstate n_groups", Bn, Dm, L, N, G);
	c->reduce_len = (double)(N * (L < 64 ? L : 64));
	kgb_case_default_tol(c);
	c->timed = c->grid == 2;
	return 0;
}

static int ssf_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *u = TT(c, "u"), *bt = TT(c, "B");
	int64_t Bn = u->shape[0], Dm = u->shape[1], L = u->shape[2], G = bt->shape[1], N = bt->shape[2];
	double *uv = B(c, b, "u"), *dv = B(c, b, "delta"), *A = B(c, b, "A"), *Bv = B(c, b, "B"), *Cv = B(c, b, "C");
	double *Dv = B(c, b, "D"), *zv = B(c, b, "z"), *db = B(c, b, "delta_bias"), *hi = B(c, b, "has_initial_state");
	double *st = B(c, b, "ssm_states"), *x = kgb_xmalloc((size_t)N * sizeof *x);
	int sp = kgb_vllm_scalar(c, "delta_softplus") != 0;
	for (int64_t i = 0; i < Bn; i++)
		for (int64_t d = 0; d < Dm; d++) {
			int64_t g = d / (Dm / G);
			double *s = st + (i * Dm + d) * N;
			for (int64_t n = 0; n < N; n++)
				x[n] = hi[i] != 0 ? s[n] : 0;
			for (int64_t t = 0; t < L; t++) {
				size_t k = (size_t)((i * Dm + d) * L + t);
				double dt = dv[k] + db[d], y = 0, uu = uv[k], zz = zv[k];
				if (sp && dt <= 20)
					dt = log1p(exp(dt));
				for (int64_t n = 0; n < N; n++) {
					size_t bo = (size_t)(((i * G + g) * N + n) * L + t);
					x[n] = exp(dt * A[d * N + n]) * x[n] + dt * Bv[bo] * uu;
					y += x[n] * Cv[bo];
				}
				y += Dv[d] * uu;
				dv[k] = y;                              /* out is written over delta */
				zv[k] = y * zz / (1 + exp(-zz));       /* out_z = out * silu(z), over z */
			}
			for (int64_t n = 0; n < N; n++)
				s[n] = x[n];
		}
	free(x);
	return 0;
}

static const kgb_op_t op_selective_scan_fwd = {
	.name = "selective_scan_fwd",
	.source = "vllm",
	.category = "ssm-scan",
	.dtypes = "f32 f16 bf16",
	.datasets = KGB_DS_VLLM,
	.summary = "Mamba scan per (batch b, channel d), group g = d / (dim / n_groups): state x[n] = "
	           "ssm_states[b, d, n] if has_initial_state[b] else 0; for t: dt = delta + delta_bias[d] "
	           "(softplus when delta_softplus and dt <= 20), x[n] = exp(dt A[d, n]) x[n] + dt B[b, g, n, t] "
	           "u[b, d, t], y = sum_n x[n] C[b, g, n, t] + D[d] u[b, d, t]; y is written over delta and "
	           "y * silu(z) over z; the final x into ssm_states[b, d, :]. Fixed-length batch: "
	           "query_start_loc, cache_indices and the prefix-caching arguments are None",
	.signature = "u:in delta:inout(out) A:in(f32) B:in C:in D:in(f32) z:inout(out_z) delta_bias:in(f32) "
	             "delta_softplus:i32 has_initial_state:in(bool) ssm_states:inout(f32)",
	.grids = {
		{ { { "dtype", "f32" }, { "cfg", "[1,4,16,4,1]" }, { "delta_softplus", "1" } } },
		{ { { "dtype", "f32 f16 bf16" }, { "cfg", "[2,8,64,16,1] [1,16,256,16,2] [2,4,1024,8,1] "
		                                          "[3,6,100,16,3]" },
		    { "delta_softplus", "0 1" } } },
		{ { { "dtype", "bf16" }, { "cfg", "[2,64,1024,16,1]" }, { "delta_softplus", "1" } } },
	},
	.setup = ssf_setup,
	.ref = ssf_ref,
	.inplace = true,
	.declared_cases = 160,
	.deviation = "1 smoke case, 24 = dtype x 4 shapes (batch, dim, seqlen, dstate, n_groups) x "
	             "delta_softplus and one timed case; z, D and delta_bias always given, fixed-length "
	             "batches only (no query_start_loc / cache_indices); the public grid crosses more "
	             "optional-argument combinations over longer sequences",
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_attention[] = {
	&op_paged_attention_v1, &op_paged_attention_v2, &op_merge_attn_states,
	&op_convert_vertical_slash_indexes, &op_selective_scan_fwd, NULL,
};
