/* gptq_marlin_24_gemm: Marlin's GEMM with 2:4 structured-sparse GPTQ weights
 * (docs/formats-gptq-awq-marlin.md, "Marlin 2:4").
 *
 * The weight W [K, N] keeps at most two values in every group of four consecutive rows
 * of a column. The kept values (codes of uint4b8 or uint8b128) form a compressed matrix
 * of K/2 rows, stored in Marlin's tile order with the 2:4 variant of its permutation;
 * which two rows of each group they came from is in the int16 metadata, one nibble per
 * group, scattered in the interleaved order of the sparse tensor-core instructions.
 * The reference decodes both into a dense weight and multiplies in double. */
#include <string.h>

#include "ops.h"
#include "util.h"
#include "vllm_quant_common.h"

/* The compressed rows are cut into tile rows of 16; a tile row holds N/16 tiles of
 * 16 x 16 codes, tile-major, and every run of 1024 codes (four tiles) is permuted by
 * m24_perm: stored position x holds the code at position perm[x] of the run. Words
 * then take pf = 32/bits consecutive stored codes, the first in the lowest bits. */
static void m24_perm(int bits, int perm[1024])
{
	static const int il4[8] = { 0, 2, 4, 6, 1, 3, 5, 7 }, il8[4] = { 0, 2, 1, 3 };
	int base[1024], n = 0, w = bits == 4 ? 8 : 4;
	const int *il = bits == 4 ? il4 : il8;
	for (int i = 0; i < 32; i++) {
		int tile = i / 8, half = (i / 4) % 2, r = 2 * (i % 4), one[8], e = 0;
		/* rows r, r+1, r+8, r+9 of the tile, at column offset 0 then 4 */
		for (int blk = 0; blk < 2; blk++) {
			static const int dr[4] = { 0, 1, 8, 9 };
			for (int j = 0; j < 4; j++)
				one[e++] = 16 * (r + dr[j]) + 256 * tile + 8 * half + 4 * blk;
		}
		for (int j = 0; j < 4; j++)
			for (int q = 0; q < 8; q++)
				base[n++] = one[q] + j;
	}
	for (int x = 0; x < 1024; x++)
		perm[x] = base[(x / w) * w + il[x % w]];
}

/* Position in the compressed matrix [K/2, N] of the code at position x of tile row tr
 * once unpermuted. */
static void m24_pos(int tr, size_t o, size_t *kc, size_t *n)
{
	*kc = (size_t)tr * 16 + (o % 256) / 16;
	*n = (o / 256) * 16 + o % 16;
}

/* See vllm_quant_common.h. */
size_t kgb_m24_meta_offset(size_t n, size_t c, size_t N)
{
	size_t r = (n / 64) * 64 + (n % 2) * 2 + (n % 8) / 4 + ((n % 4) / 2) * 32 + ((n % 64) / 8) * 4;
	size_t col = c;
	if (r % 2 == 0 && c % 2 == 1) {
		r++;
		col--;
	} else if (r % 2 == 1 && c % 2 == 0) {
		r--;
		col++;
	}
	return (col / 2) * N * 2 + r * 2 + col % 2;
}

/* The metadata nibble of a group of four rows whose non-zero rows are the set bits of
 * mask (at most two): the two kept rows i0 < i1 as i0 | i1 << 2. With fewer than two
 * non-zeros, the rows the CUTLASS encoder picks to fill up. -1 for three or four. */
static int m24_nibble(unsigned mask)
{
	static const signed char nib[16] = {
		/* 0000 */ 0xe, /* 0001 */ 0x8, /* 0010 */ 0x9, /* 0011 */ 0x4,
		/* 0100 */ 0xe, /* 0101 */ 0x8, /* 0110 */ 0x9, /* 0111 */ -1,
		/* 1000 */ 0xe, /* 1001 */ 0xc, /* 1010 */ 0xd, /* 1011 */ -1,
		/* 1100 */ 0xe, /* 1101 */ -1,  /* 1110 */ -1,  /* 1111 */ -1,
	};
	return nib[mask & 0xf];
}

/* See vllm_quant_common.h. */
int kgb_m24_pack(const uint32_t *q, size_t K, size_t N, int bits, uint32_t *words, int16_t *meta)
{
	uint32_t bias = 1u << (bits - 1), mask = (1u << bits) - 1;
	size_t Kc = K / 2, pf = 32 / (size_t)bits, row = N * 16;
	uint32_t *comp = kgb_xmalloc(Kc * N * sizeof *comp);
	int perm[1024];
	for (size_t n = 0; n < N; n++)
		for (size_t c = 0; c < K / 16; c++) {
			uint32_t m16 = 0;
			for (int j = 0; j < 4; j++) {
				size_t g = 4 * c + (size_t)j;
				unsigned nz = 0;
				int nib;
				for (int i = 0; i < 4; i++)
					nz |= (unsigned)(q[(4 * g + (size_t)i) * N + n] != bias) << i;
				nib = m24_nibble(nz);
				if (nib < 0) {
					free(comp);
					return -1;
				}
				comp[(2 * g) * N + n] = q[(4 * g + (size_t)(nib & 3)) * N + n];
				comp[(2 * g + 1) * N + n] = q[(4 * g + (size_t)(nib >> 2)) * N + n];
				m16 |= (uint32_t)nib << (4 * j);
			}
			meta[kgb_m24_meta_offset(n, c, N)] = (int16_t)(uint16_t)m16;
		}
	m24_perm(bits, perm);
	memset(words, 0, Kc / 16 * row / pf * sizeof *words);
	for (size_t tr = 0; tr < Kc / 16; tr++)
		for (size_t x = 0; x < row; x++) {
			size_t kc, n;
			m24_pos((int)tr, (x / 1024) * 1024 + (size_t)perm[x % 1024], &kc, &n);
			words[tr * (row / pf) + x / pf] |= (comp[kc * N + n] & mask) << (bits * (int)(x % pf));
		}
	free(comp);
	return 0;
}

/* See vllm_quant_common.h. */
int kgb_m24_unpack(const uint32_t *words, const int16_t *meta, size_t K, size_t N, int bits, int32_t *w)
{
	int32_t bias = 1 << (bits - 1);
	uint32_t mask = (1u << bits) - 1;
	size_t Kc = K / 2, pf = 32 / (size_t)bits, row = N * 16;
	int32_t *comp = kgb_xmalloc(Kc * N * sizeof *comp);
	int perm[1024];
	m24_perm(bits, perm);
	for (size_t tr = 0; tr < Kc / 16; tr++)
		for (size_t x = 0; x < row; x++) {
			size_t kc, n;
			uint32_t word = words[tr * (row / pf) + x / pf];
			m24_pos((int)tr, (x / 1024) * 1024 + (size_t)perm[x % 1024], &kc, &n);
			comp[kc * N + n] = (int32_t)((word >> (bits * (int)(x % pf))) & mask) - bias;
		}
	memset(w, 0, K * N * sizeof *w);
	for (size_t n = 0; n < N; n++)
		for (size_t c = 0; c < K / 16; c++) {
			uint32_t m16 = (uint16_t)meta[kgb_m24_meta_offset(n, c, N)];
			for (int j = 0; j < 4; j++) {
				size_t g = 4 * c + (size_t)j;
				unsigned nib = (m16 >> (4 * j)) & 0xf, i0 = nib & 3, i1 = nib >> 2;
				if (i0 >= i1) {
					free(comp);
					return -1;
				}
				w[(4 * g + i0) * N + n] = comp[(2 * g) * N + n];
				w[(4 * g + i1) * N + n] = comp[(2 * g + 1) * N + n];
			}
		}
	free(comp);
	return 0;
}

/* Stored position j of a row of 64 grouped scales holds logical column m24_sperm[j]
 * of that row; per-channel scales are stored in order. */
static int m24_sperm(int j)
{
	static const int o[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	return (j / 8) * 8 + o[j % 8];
}

static int m24_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t d[3], bits, G = kgb_case_pint(c, "group_size", -1), M, K, N;
	if (kgb_vq_marlin_mkn(c, d, &bits, err, errlen))
		return -1;
	M = d[0];
	K = d[1];
	N = d[2];
	if (G < 0 || G > K)
		G = K;
	/* vLLM's launcher: K a multiple of 128 and N of 128 for M <= 16, else 64 and 256;
	 * groups of 128 rows (64 compressed rows) or one per column */
	if (M < 1 || K % (M <= 16 ? 128 : 64) || N % (M <= 16 ? 128 : 256) || (G != K && G != 128) || K % G) {
		kgb_err(err, errlen, "op %s case %u: need K %% %d == 0, N %% %d == 0 and group_size 128 dividing "
		        "K or -1", c->op->name, c->index, M <= 16 ? 128 : 64, M <= 16 ? 128 : 256);
		return -1;
	}
	kgb_vq_add2(c, "a", KGB_ROLE_IN, KGB_DT_F16, M, K);
	kgb_vq_words(kgb_vq_add2(c, "b_q_weight", KGB_ROLE_IN, KGB_DT_I32, K / 32, N * 16 * bits / 32));
	/* m24_gen: valid 2:4 nibbles */
	kgb_vq_add2(c, "b_meta", KGB_ROLE_IN, KGB_DT_I16, K / 32, 2 * N)->gen = KGB_GEN_ZERO;
	kgb_vq_uniform(kgb_vq_add2(c, "b_scales", KGB_ROLE_IN, KGB_DT_F16, K / G, N), 0.002, 0.02);
	kgb_vq_add2(c, "workspace", KGB_ROLE_INOUT, KGB_DT_I32, N / 128 * 64, -1)->gen = KGB_GEN_ZERO;
	kgb_vq_marlin_out(c, bits, M, N, K, (double)K / 2);
	kgb_case_set_sym(c, "group_size", G == K ? -1 : G);
	/* Blocks that share a column slice add their fp32 partial sums into the output in
	 * fp16, one after the other: up to one fp16 rounding per K tile (64 rows, 128 for
	 * M <= 16) on running sums no larger than the output's largest magnitude. */
	if (K / (M <= 16 ? 128 : 64) >= 2) {
		double k = (double)(K / (M <= 16 ? 128 : 64)) * 0x1p-11;
		if (c->atol_rel < k)
			c->atol_rel = k > 0.05 ? 0.05 : k;
	}
	c->timed = M * K * N >= (int64_t)1 << 28;
	return 0;
}

/* Every metadata nibble one of the six valid pairs i0 < i1. */
static void m24_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	static const unsigned pairs[6] = { 0x4, 0x8, 0xc, 0x9, 0xd, 0xe };
	const kgb_tensor_t *t = kgb_vq_t(c, "b_meta");
	double *v = kgb_vq_v(c, b, "b_meta");
	for (size_t i = 0; i < t->numel; i++) {
		uint32_t m = 0;
		for (int j = 0; j < 4; j++)
			m |= pairs[kgb_rng_next(rng) % 6] << (4 * j);
		v[i] = (double)(int16_t)(uint16_t)m;
	}
}

static int m24_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *a = kgb_vq_t(c, "a"), *wt = kgb_vq_t(c, "b_q_weight"), *mt = kgb_vq_t(c, "b_meta");
	const kgb_tensor_t *st = kgb_vq_t(c, "b_scales");
	size_t M = (size_t)a->shape[0], K = (size_t)a->shape[1], N = (size_t)st->shape[1];
	size_t groups = (size_t)st->shape[0], G = K / groups;
	int bits = (int)kgb_vq_scalar(c, "num_bits"), rc;
	double *wv = kgb_vq_v(c, b, "b_q_weight"), *mv = kgb_vq_v(c, b, "b_meta"), *sv = kgb_vq_v(c, b, "b_scales");
	double *ov = kgb_vq_v(c, b, "out"), *s = kgb_xmalloc(st->numel * sizeof *s), *w;
	uint32_t *words = kgb_xmalloc(wt->numel * sizeof *words);
	int16_t *meta = kgb_xmalloc(mt->numel * sizeof *meta);
	int32_t *q = kgb_xmalloc(K * N * sizeof *q);
	for (size_t i = 0; i < wt->numel; i++)
		words[i] = (uint32_t)(int32_t)wv[i];
	for (size_t i = 0; i < mt->numel; i++)
		meta[i] = (int16_t)mv[i];
	for (size_t i = 0; i < st->numel; i++)
		s[(i / 64) * 64 + (size_t)(groups > 1 ? m24_sperm((int)(i % 64)) : (int)(i % 64))] = sv[i];
	rc = kgb_m24_unpack(words, meta, K, N, bits, q);
	free(words);
	free(meta);
	if (rc) {
		free(q);
		free(s);
		return -1;
	}
	w = kgb_xmalloc(K * N * sizeof *w);
	/* grouped: the kernel scales every weight in fp16 before the product; per column:
	 * it multiplies the sum of a * (q - bias) by the scale afterwards */
	for (size_t k = 0; k < K; k++)
		for (size_t n = 0; n < N; n++)
			w[k * N + n] = groups > 1 ? kgb_dtype_round(KGB_DT_F16, q[k * N + n] * s[(k / G) * N + n])
			                          : (double)q[k * N + n];
	kgb_vq_matmul(kgb_vq_v(c, b, "a"), w, ov, M, K, N);
	if (groups == 1)
		for (size_t m = 0; m < M; m++)
			for (size_t n = 0; n < N; n++)
				ov[m * N + n] *= s[n];
	free(w);
	free(q);
	free(s);
	return 0;
}

static const kgb_op_t op_gptq_marlin_24_gemm = {
	KGB_VQ_MARLIN_GEMM(m24_setup, m24_ref, m24_gen),
	.name = "gptq_marlin_24_gemm",
	.dtypes = "f16 i32 i16",
	.grids = {
		{ .params = { { "bits", "4 8" }, { "group_size", "-1 128" }, { "mkn", "[1,128,512]" } } },
		{ .params = { { "bits", "4 8" }, { "group_size", "-1 128" },
		              { "mkn", "[1,1024,2048] [26,1664,2048] [257,1408,1024]" } } },
	},
	.summary = "out[M, N] = a[M, K] @ W with W 2:4 sparse along K: in every group of 4 rows of a column "
	           "two rows hold (q - bias) * s (uint4b8: bias 8, uint8b128: 128), the others 0; the K/2 "
	           "kept codes in Marlin's 2:4 tile order (b_q_weight [K/32, N*bits/2]), their row pairs in "
	           "the int16 metadata (b_meta [K/32, 2N], one nibble i0 | i1 << 2 per group, CUTLASS's "
	           "interleaved order), scales [K/128, N] with each row of 64 in Marlin's 2:4 order "
	           "(grouped: fp16 weights as the kernel forms them) or [1, N] in order (applied after the "
	           "sum); workspace [N/128*64] int32 zeros that must stay zero",
	.signature = "a:in(f16) b_q_weight:in(i32) b_meta:in(i16) b_scales:in(f16) workspace:inout(i32) "
	             "num_bits:i64 size_m:i64 size_n:i64 size_k:i64 out:out(f16)",
	.declared_cases = 7,
	.deviation = "the public grid (uint4b8 / uint8b128 x group -1 / 128 x 4 shapes, 16 cases) with N cut "
	             "from 18944 and 6656 to 2048 and 1024 for the CPU reference; b_q_type is passed as "
	             "num_bits",
};

const kgb_op_t *const kgb_ops_vllm_quant_marlin24[] = {
	&op_gptq_marlin_24_gemm,
	NULL,
};
