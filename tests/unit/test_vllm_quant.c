/* The vLLM quantisation operators: hand-computed references and the tie-interval judge
 * (common/ops/vllm_quant*.c). The catalog self-test covers the whole-tensor mutants; the
 * tests here cover what it leaves to an operator's own check: one code off, a wrong
 * rounding mode, a tie taking either neighbour, a wrong scale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "test_case.h"
#include "validate.h"
#include "ops/vllm_quant_common.h"

typedef struct vq {
	const kgb_op_t *op;
	kgb_case_t c;
	kgb_hostbufs_t b;   /* inputs, then the reference */
	kgb_hostbufs_t got; /* a copy of b the test edits as the "kernel's" outputs */
} vq_t;

/* A zeroed *s holding the case of op labelled label and its inputs. */
static void vq_open(vq_t *s, const char *op, const char *label)
{
	memset(s, 0, sizeof *s);
	s->op = tc_open(op, label, &s->c, &s->b);
}

static double *vq_buf(vq_t *s, kgb_hostbufs_t *b, const char *tensor)
{
	return tc_buf(s->op, &s->c, b, tensor);
}

/* Run the reference and copy it as the outputs to judge. */
static void vq_ref(vq_t *s)
{
	ASSERT_EQ_INT(s->op->ref(&s->c, &s->b), 0);
	s->got.n = s->b.n;
	for (int i = 0; i < s->b.n; i++) {
		size_t n = s->c.t[i].storage ? s->c.t[i].storage : 1;
		s->got.v[i] = malloc(n * sizeof(double));
		ASSERT_TRUE(s->got.v[i] != NULL);
		memcpy(s->got.v[i], s->b.v[i], n * sizeof(double));
	}
}

/* The case of op labelled label with words 0x76543210 and 0xfedcba98 first in its
 * tensor name, then the reference run; returns that tensor. */
static double *vq_two_words(vq_t *s, const char *op, const char *label, const char *name)
{
	vq_open(s, op, label);
	double *w = vq_buf(s, &s->b, name);
	w[0] = (double)0x76543210;
	w[1] = (double)(int32_t)0xfedcba98u;
	vq_ref(s);
	return w;
}

/* The packed 2:4 weight (words, K / 32 * N * 2 of them) and its metadata (meta,
 * K / 16 * N) as gptq_marlin_24_gemm's b_q_weight and b_meta; returns b_scales. */
static double *vq_m24_weight(vq_t *s, const uint32_t *words, const int16_t *meta, size_t K, size_t N)
{
	double *bw = vq_buf(s, &s->b, "b_q_weight"), *bm = vq_buf(s, &s->b, "b_meta");
	for (size_t i = 0; i < K / 32 * N * 2; i++)
		bw[i] = (double)(int32_t)words[i];
	for (size_t i = 0; i < K / 16 * N; i++)
		bm[i] = meta[i];
	return vq_buf(s, &s->b, "b_scales");
}

static int vq_judge(vq_t *s, char *msg, size_t msglen)
{
	double ma, mr;
	return s->op->check(&s->c, &s->b, &s->got, &ma, &mr, msg, msglen);
}

static void vq_close(vq_t *s)
{
	kgb_hostbufs_release(&s->got);
	kgb_hostbufs_release(&s->b);
	kgb_case_release(&s->c);
}

TEST(vllm_quant_interval_rule)
{
	kgb_tensor_t t = { .name = "q", .dtype = KGB_DT_I8 };
	char msg[256];
	kgb_vq_judge_t j;
	double ma, mr;
	/* 2.5 exactly: round half even gives 2, and a value a hair above gives 3: both pass */
	kgb_vq_judge_init(&j, msg, sizeof msg);
	kgb_vq_elem(&j, &t, 0, 2, 2.5 - 1e-6, 2.5 + 1e-6, 0);
	kgb_vq_elem(&j, &t, 1, 3, 2.5 - 1e-6, 2.5 + 1e-6, 0);
	ASSERT_EQ_INT(kgb_vq_judge_done(&j, &ma, &mr), KGB_V_PASS);
	/* 2.4 is not near a tie: only 2 */
	kgb_vq_judge_init(&j, msg, sizeof msg);
	kgb_vq_elem(&j, &t, 0, 3, 2.4 - 1e-6, 2.4 + 1e-6, 0);
	ASSERT_EQ_INT(kgb_vq_judge_done(&j, &ma, &mr), KGB_V_WRONG_RESULT);
	ASSERT_TRUE(strstr(msg, "q[0] = 3, expected 2") != NULL);
	/* saturation and the zero point */
	ASSERT_NEAR(kgb_vq_quant(KGB_DT_I8, 300.7, 0), 127, 0);
	ASSERT_NEAR(kgb_vq_quant(KGB_DT_I8, -3.5, -126), -128, 0);
	ASSERT_NEAR(kgb_vq_quant(KGB_DT_I8, 1e12, -200), 127, 0); /* int32 saturates, no wrap */
	ASSERT_NEAR(kgb_vq_quant(KGB_DT_F8E4M3, 1000, 0), 448, 0);
	ASSERT_NEAR(kgb_vq_quant(KGB_DT_F8E4M3, -0.3, 0), -0.3125, 0);
	/* NaN never passes */
	t.dtype = KGB_DT_F8E4M3;
	kgb_vq_judge_init(&j, msg, sizeof msg);
	kgb_vq_elem(&j, &t, 0, NAN, 1.0, 1.0, 0);
	ASSERT_EQ_INT(kgb_vq_judge_done(&j, &ma, &mr), KGB_V_WRONG_RESULT);
}

TEST(vllm_quant_int8_static_by_hand)
{
	vq_t s;
	char msg[256];
	double *x, *sc, *o;
	vq_open(&s, "scaled_int8_quant", "mode=static dtype=f32 shape=[1,17]");
	x = vq_buf(&s, &s.b, "input");
	sc = vq_buf(&s, &s.b, "scale");
	sc[0] = 0.5;
	x[0] = 1.25;   /* 2.5 -> 2 (half even) */
	x[1] = 1.75;   /* 3.5 -> 4 */
	x[2] = -0.74;  /* -1.48 -> -1 */
	x[3] = 100;    /* 200 -> 127 */
	x[4] = -100;   /* -200 -> -128 */
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	ASSERT_NEAR(o[0], 2, 0);
	ASSERT_NEAR(o[1], 4, 0);
	ASSERT_NEAR(o[2], -1, 0);
	ASSERT_NEAR(o[3], 127, 0);
	ASSERT_NEAR(o[4], -128, 0);
	ASSERT_EQ_INT(vq_judge(&s, msg, sizeof msg), KGB_V_PASS);
	/* at the exact tie the other neighbour passes too */
	vq_buf(&s, &s.got, "out")[0] = 3;
	ASSERT_EQ_INT(vq_judge(&s, msg, sizeof msg), KGB_V_PASS);
	/* one code off elsewhere fails, naming the element */
	vq_buf(&s, &s.got, "out")[2] = -2;
	ASSERT_EQ_INT(vq_judge(&s, msg, sizeof msg), KGB_V_WRONG_RESULT);
	ASSERT_TRUE(strstr(msg, "out[2]") != NULL);
	vq_close(&s);
}

/* Truncation instead of round-to-nearest fails on a realistic case. */
TEST(vllm_quant_rejects_truncation_and_bad_scale)
{
	static const char *const cases[][2] = {
		{ "scaled_int8_quant", "mode=dynamic dtype=bf16 shape=[7,1025]" },
		{ "scaled_int8_quant", "mode=dynamic_azp dtype=f32 shape=[7,1025]" },
		{ "scaled_fp8_quant", "mode=per_token dtype=bf16 shape=[7,1025]" },
		{ "rms_norm_dynamic_per_token_quant", "qdtype=i8 dtype=bf16 shape=[7,1025] scale_ub=no" },
		{ "rms_norm_dynamic_per_token_quant", "qdtype=f8e4m3 dtype=bf16 shape=[7,1025] scale_ub=no" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		vq_t s;
		char msg[256];
		const kgb_tensor_t *o;
		double *g, *r, *gs;
		size_t changed = 0;
		vq_open(&s, cases[k][0], cases[k][1]);
		vq_ref(&s);
		ASSERT_EQ_INT(vq_judge(&s, msg, sizeof msg), KGB_V_PASS);
		o = kgb_case_tensor(&s.c, "out");
		g = vq_buf(&s, &s.got, "out");
		r = vq_buf(&s, &s.b, "out");
		/* a "truncating" kernel: every code moved one step toward zero where the
		 * reference rounded away from it (about half of them) */
		for (size_t i = 0; i < o->numel; i++) {
			double step = o->dtype == KGB_DT_I8 ? 1 : fabs(r[i]) * 0x1p-4;
			if (r[i] != 0 && ((size_t)i % 2 == 0)) {
				g[i] = kgb_dtype_round(o->dtype, r[i] - copysign(step, r[i]));
				changed++;
			}
		}
		ASSERT_TRUE(changed > 100);
		ASSERT_EQ_INT(vq_judge(&s, msg, sizeof msg), KGB_V_WRONG_RESULT);
		memcpy(g, r, o->storage * sizeof(double));
		/* a scale 1% off */
		gs = vq_buf(&s, &s.got, kgb_case_tensor(&s.c, "scales") ? "scales" : "scale");
		gs[0] *= 1.01;
		ASSERT_EQ_INT(vq_judge(&s, msg, sizeof msg), KGB_V_WRONG_RESULT);
		vq_close(&s);
	}
}

TEST(vllm_quant_gptq_shuffle_by_hand)
{
	vq_t s;
	double *w, *p;
	/* 4-bit, no permutation: nibbles 0..7 = 0x0..0x7 -> 0x75316420 */
	w = vq_two_words(&s, "gptq_shuffle", "bit=4 perm=none kn=[128,64]", "q_weight");
	ASSERT_EQ_U64((uint32_t)(int32_t)w[0], 0x75316420u);
	ASSERT_EQ_U64((uint32_t)(int32_t)w[1], 0xfdb9eca8u);
	vq_close(&s);
	/* 8-bit with act order: new row r = old row perm[r]; bytes stay in place */
	vq_open(&s, "gptq_shuffle", "bit=8 perm=act_order kn=[128,64]");
	w = vq_buf(&s, &s.b, "q_weight");
	p = vq_buf(&s, &s.b, "q_perm");
	for (int r = 0; r < 128; r++)
		p[r] = 127 - r;                       /* reverse the rows */
	w[0] = (double)0x03020100;                 /* rows 0..3 of column 0 */
	w[31 * 64] = (double)0x0d0c0b0a;           /* rows 124..127 of column 0 */
	vq_ref(&s);
	ASSERT_EQ_U64((uint32_t)(int32_t)w[0], 0x0a0b0c0du);
	ASSERT_EQ_U64((uint32_t)(int32_t)w[31 * 64], 0x00010203u);
	vq_close(&s);
}

TEST(vllm_quant_awq_nibble_order)
{
	vq_t s;
	double *qw, *qz, *sc, *x, *o;
	vq_open(&s, "awq_gemm", "group_size=64 mnk=[1,256,128]");
	qw = vq_buf(&s, &s.b, "qweight");
	qz = vq_buf(&s, &s.b, "qzeros");
	sc = vq_buf(&s, &s.b, "scales");
	x = vq_buf(&s, &s.b, "input");
	/* input = e_0 picks row 0 of the dequantised weight */
	for (int k = 0; k < 128; k++)
		x[k] = k == 0;
	/* row 0, columns 0..7: nibbles 0..7 hold 0..7, zero point 1, scale 0.5 */
	qw[0] = (double)0x76543210;
	qz[0] = (double)0x11111111;
	for (int n = 0; n < 8; n++)
		sc[n] = 0.5;
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	/* column i reads nibble {0,4,1,5,2,6,3,7}[i]: (nibble - 1) * 0.5 */
	ASSERT_NEAR(o[0], -0.5, 0);
	ASSERT_NEAR(o[1], 1.5, 0);
	ASSERT_NEAR(o[2], 0.0, 0);
	ASSERT_NEAR(o[3], 2.0, 0);
	ASSERT_NEAR(o[7], 3.0, 0);
	vq_close(&s);
}

/* Write a little-endian fp16 into two byte values. */
static void put_half(double *b, float v)
{
	uint16_t h = kgb_f32_to_f16(v);
	b[0] = h & 0xff;
	b[1] = h >> 8;
}

TEST(vllm_quant_ggml_blocks_by_hand)
{
	vq_t s;
	double *w, *o;
	/* q5_0: d = 0.5; qh bit j is the 5th bit of element j; low nibbles of byte j are
	 * element j, high nibbles element j + 16 */
	vq_open(&s, "ggml_dequantize", "type=q5_0 dtype=f16 mn=[4,256]");
	w = vq_buf(&s, &s.b, "W");
	put_half(w, 0.5f);
	w[2] = 0x01; w[3] = 0x00; w[4] = 0x01; w[5] = 0x80; /* bits 0, 16 and 31 */
	w[6] = 0x3f;                                        /* element 0: 0xf, element 16: 0x3 */
	w[7] = 0x00;
	w[21] = 0xf0;                                       /* element 15: 0, element 31: 0xf */
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	ASSERT_NEAR(o[0], 0.5 * (0x1f - 16), 0);   /* 7.5 */
	ASSERT_NEAR(o[16], 0.5 * (0x13 - 16), 0);  /* 1.5 */
	ASSERT_NEAR(o[1], 0.5 * (0 - 16), 0);      /* -8 */
	ASSERT_NEAR(o[15], -8, 0);
	ASSERT_NEAR(o[31], 0.5 * (0x1f - 16), 0);
	vq_close(&s);
	/* q4_1: d = 0.25, m = -1: element = d * q + m */
	vq_open(&s, "ggml_dequantize", "type=q4_1 dtype=f16 mn=[4,256]");
	w = vq_buf(&s, &s.b, "W");
	put_half(w, 0.25f);
	put_half(w + 2, -1.0f);
	w[4] = 0xa3;                                        /* element 0: 3, element 16: 10 */
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	ASSERT_NEAR(o[0], -0.25, 0);
	ASSERT_NEAR(o[16], 1.5, 0);
	vq_close(&s);
}

TEST(vllm_quant_ggml_q8_1_activations)
{
	vq_t s;
	double *w, *x, *o;
	/* one q8_0 block of weights = 1 (d = 1, q = 1); x block with max 127 * 0.01:
	 * q8 = round(x / 0.01), d8 = fp16(0.01): out = d8 * sum(q8) */
	vq_open(&s, "ggml_mul_mat_vec_a8", "type=q8_0 dtype=f16 bnk=[1,64,256]");
	w = vq_buf(&s, &s.b, "W");
	x = vq_buf(&s, &s.b, "X");
	put_half(w, 1.0f);
	for (int j = 0; j < 32; j++)
		w[2 + j] = 1;
	for (int k = 0; k < 256; k++)
		x[k] = 0;
	x[0] = 1.27;
	x[1] = 0.015;   /* 1.5 steps: roundf goes away from zero, to 2 */
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	{
		double d8 = kgb_f16_to_f32(kgb_f32_to_f16((float)(1.27 / 127.0)));
		double q1 = round((double)(float)(0.015 / (double)(float)(1.27 / 127.0)));
		ASSERT_NEAR(o[0], d8 * (127 + q1), 1e-12);
	}
	vq_close(&s);
}

/* The routing ggml_moe_a8 gets is moe_align_block_size's layout, and the two MoE
 * operators agree when routed the same way. */
TEST(vllm_quant_ggml_moe_routing)
{
	vq_t s, v;
	double *sv, *ev, *np, *tk;
	size_t n, T = 16, top = 2;
	int seen[32] = { 0 };
	memset(&v, 0, sizeof v);
	vq_open(&s, "ggml_moe_a8", "type=q5_1 dtype=f16 moe=[16,4,2] rk=[128,256]");
	sv = vq_buf(&s, &s.b, "sorted_token_ids");
	ev = vq_buf(&s, &s.b, "expert_ids");
	np = vq_buf(&s, &s.b, "num_tokens_post_padded");
	n = (size_t)np[0];
	ASSERT_TRUE(n % 4 == 0 && n >= T * top);
	for (size_t i = 0; i < n; i++) {
		if (sv[i] == (double)(T * top))
			continue;
		ASSERT_TRUE(sv[i] >= 0 && sv[i] < (double)(T * top));
		seen[(int)sv[i]]++;
		if (i % 4)
			ASSERT_NEAR(ev[i / 4], ev[(i - 1) / 4], 0);
	}
	for (size_t f = 0; f < T * top; f++)
		ASSERT_EQ_INT(seen[f], 1);
	/* the vec operator with the same routing, weights and activations gives the same rows */
	vq_open(&v, "ggml_moe_a8_vec", "type=q5_1 dtype=f16 moe=[4,4,2] rk=[128,256]");
	tk = vq_buf(&v, &v.b, "topk_ids");
	memcpy(vq_buf(&v, &v.b, "W"), vq_buf(&s, &s.b, "W"),
	       kgb_case_tensor(&s.c, "W")->storage * sizeof(double));
	memcpy(vq_buf(&v, &v.b, "X"), vq_buf(&s, &s.b, "X"), 4 * 256 * sizeof(double));
	for (size_t i = 0; i < n; i++)
		if (sv[i] < 8)   /* the first 4 tokens' (token, k) pairs */
			tk[(size_t)sv[i]] = ev[i / 4];
	vq_ref(&s);
	vq_ref(&v);
	for (size_t k = 0; k < 8 * 128; k++)
		ASSERT_NEAR(vq_buf(&v, &v.b, "out")[k], vq_buf(&s, &s.b, "out")[k], 1e-12);
	vq_close(&s);
	vq_close(&v);
}

/* gptq_gemm on the plain layout and on the exllama (shuffled) layout of the same
 * weights gives the same product; a v1 zero point is the stored value plus one. */
TEST(vllm_quant_gptq_gemm_layouts_agree)
{
	vq_t p, e;
	static const char *const names[] = { "a", "b_gptq_qzeros", "b_gptq_scales" };
	double *wp, *we, *o;
	size_t nw;
	memset(&p, 0, sizeof p);
	memset(&e, 0, sizeof e);
	vq_open(&p, "gptq_gemm", "bit=4 exllama=no g_idx=seq format=v1 group_size=128 mnk=[1,256,256]");
	vq_open(&e, "gptq_gemm", "bit=4 exllama=yes g_idx=seq format=v1 group_size=128 mnk=[1,256,256]");
	for (size_t i = 0; i < 3; i++)
		memcpy(vq_buf(&e, &e.b, names[i]), vq_buf(&p, &p.b, names[i]),
		       kgb_case_tensor(&p.c, names[i])->storage * sizeof(double));
	wp = vq_buf(&p, &p.b, "b_q_weight");
	we = vq_buf(&e, &e.b, "b_q_weight");
	nw = kgb_case_tensor(&p.c, "b_q_weight")->storage;
	for (size_t i = 0; i < nw; i++) {
		uint32_t q = (uint32_t)(int32_t)wp[i], r = 0;
		for (int j = 0; j < 8; j++)
			r |= ((q >> (4 * j)) & 0xf) << (4 * (j % 2 ? 4 + j / 2 : j / 2));
		we[i] = (double)(int32_t)r;
	}
	vq_ref(&p);
	vq_ref(&e);
	for (size_t k = 0; k < 256; k++)
		ASSERT_NEAR(vq_buf(&e, &e.b, "out")[k], vq_buf(&p, &p.b, "out")[k], 1e-12);
	vq_close(&p);
	vq_close(&e);
	/* by hand: a = e_0, row 0 column 0 quant 9, stored zero 3 (v1: 4), scale 0.25 */
	memset(&p, 0, sizeof p);
	vq_open(&p, "gptq_gemm", "bit=4 exllama=no g_idx=seq format=v1 group_size=128 mnk=[1,256,256]");
	for (size_t k = 0; k < 256; k++)
		vq_buf(&p, &p.b, "a")[k] = k == 0;
	vq_buf(&p, &p.b, "b_q_weight")[0] = 9;
	vq_buf(&p, &p.b, "b_gptq_qzeros")[0] = 3;
	vq_buf(&p, &p.b, "b_gptq_scales")[0] = 0.25;
	vq_ref(&p);
	o = vq_buf(&p, &p.b, "out");
	ASSERT_NEAR(o[0], (9 - 4) * 0.25, 0);
	vq_close(&p);
}

TEST(vllm_quant_pack_scale_fp8_by_hand)
{
	vq_t s;
	double *v, *o;
	static const double e05[8] = { -4, -3.5, -3, -2.5, -2, -1.5, -1, -0.5 };
	vq_open(&s, "cutlass_pack_scale_fp8", "shape=[1,4]");
	v = vq_buf(&s, &s.b, "scales");
	v[0] = 0.5;
	v[1] = 96;
	v[2] = 2.5;
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	for (int j = 0; j < 8; j++)
		ASSERT_NEAR(o[j], e05[j], 0);
	/* 96: -768, -672, -576, -480 saturate; -384; -288; -192; -96 */
	ASSERT_NEAR(o[8 + 3], -448, 0);
	ASSERT_NEAR(o[8 + 4], -384, 0);
	ASSERT_NEAR(o[8 + 5], -288, 0);
	ASSERT_NEAR(o[8 + 6], -192, 0);
	ASSERT_NEAR(o[8 + 7], -96, 0);
	/* 2.5: -12.5 is a tie between 12 and 13 (even mantissa: 12); -17.5 rounds to -18 */
	ASSERT_NEAR(o[16 + 3], -12, 0);
	ASSERT_NEAR(o[16 + 1], -18, 0);
	ASSERT_NEAR(o[16 + 5], -7.5, 0);
	vq_close(&s);
}

TEST(vllm_quant_marlin_int4_fp8_preprocess_by_hand)
{
	vq_t s;
	double *w;
	/* GPTQ (zero point 8): q >= 8 -> q - 8, q < 8 -> 15 - q; in place */
	w = vq_two_words(&s, "marlin_int4_fp8_preprocess", "format=gptq inplace=yes kn=[128,256]", "qweight");
	ASSERT_EQ_U64((uint32_t)(int32_t)w[0], 0x89abcdefu);
	ASSERT_EQ_U64((uint32_t)(int32_t)w[1], 0x76543210u);
	vq_close(&s);
	/* AWQ: the zero point is the nibble of qzeros at the same position */
	vq_open(&s, "marlin_int4_fp8_preprocess", "format=awq inplace=no kn=[128,256]");
	vq_buf(&s, &s.b, "qweight")[0] = (double)0x76543210;
	vq_buf(&s, &s.b, "qzeros")[0] = (double)0x33333333;
	vq_ref(&s);
	ASSERT_EQ_U64((uint32_t)(int32_t)vq_buf(&s, &s.b, "out")[0], 0x43210defu);
	vq_close(&s);
}

/* Marlin repack: the first words of a tile by hand, the AWQ and GPTQ layouts of the
 * same logical weight repack to the same words, and a repack is a permutation of the
 * weight's values. */
TEST(vllm_quant_marlin_repack)
{
	vq_t g, a;
	double *gw, *aw, *go;
	size_t K = 64, N = 64, counts_in[16] = { 0 }, counts_out[16] = { 0 };
	static const int awq4[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	memset(&g, 0, sizeof g);
	memset(&a, 0, sizeof a);
	vq_open(&g, "gptq_marlin_moe_repack", "bits=4 perm=none a8=no ekn=[1,64,64]");
	vq_open(&a, "awq_marlin_moe_repack", "bits=4 a8=no ekn=[1,64,64]");
	gw = vq_buf(&g, &g.b, "b_q_weight");
	aw = vq_buf(&a, &a.b, "b_q_weight");
	memset(gw, 0, K / 8 * N * sizeof(double));
	memset(aw, 0, K * N / 8 * sizeof(double));
	for (size_t k = 0; k < K; k++)
		for (size_t n = 0; n < N; n++) {
			uint32_t v = (uint32_t)((k + 3 * n) % 16);
			uint32_t gword = (uint32_t)(int32_t)gw[(k / 8) * N + n];
			uint32_t aword = (uint32_t)(int32_t)aw[k * (N / 8) + n / 8];
			gword |= v << (4 * (k % 8));
			aword |= v << (4 * awq4[n % 8]);
			gw[(k / 8) * N + n] = (double)(int32_t)gword;
			aw[k * (N / 8) + n / 8] = (double)(int32_t)aword;
			counts_in[v]++;
		}
	vq_ref(&g);
	vq_ref(&a);
	go = vq_buf(&g, &g.b, "out");
	/* thread 0 of warp 0: rows 0, 1, 8, 9 of columns 0 and 8, nibbles in the order
	 * (r0,c0) (r8,c0) (r0,c8) (r8,c8) (r1,c0) (r9,c0) (r1,c8) (r9,c8) */
	{
		static const int rk[8] = { 0, 8, 0, 8, 1, 9, 1, 9 }, cn[8] = { 0, 0, 8, 8, 0, 0, 8, 8 };
		uint32_t want = 0;
		for (int i = 0; i < 8; i++)
			want |= (uint32_t)((rk[i] + 3 * cn[i]) % 16) << (4 * i);
		ASSERT_EQ_U64((uint32_t)(int32_t)go[0], want);
		/* warp 1, thread 0 (word 1): the same rows of columns 16 and 24 */
		want = 0;
		for (int i = 0; i < 8; i++)
			want |= (uint32_t)((rk[i] + 3 * (cn[i] + 16)) % 16) << (4 * i);
		ASSERT_EQ_U64((uint32_t)(int32_t)go[1], want);
	}
	for (size_t i = 0; i < K * N / 8; i++) {
		uint32_t w = (uint32_t)(int32_t)go[i];
		ASSERT_NEAR(go[i], vq_buf(&a, &a.b, "out")[i], 0);
		for (int j = 0; j < 8; j++)
			counts_out[(w >> (4 * j)) & 0xf]++;
	}
	for (int v = 0; v < 16; v++)
		ASSERT_EQ_INT((int)counts_out[v], (int)counts_in[v]);
	vq_close(&g);
	vq_close(&a);
}

/* gptq_marlin_gemm reads the layout gptq_marlin_moe_repack writes: a GPTQ weight,
 * repacked, multiplied with grouped scales stored in Marlin's permuted order, gives
 * the product computed directly from the GPTQ weight. */
TEST(vllm_quant_gptq_marlin_gemm_reads_repack)
{
	vq_t r, g;
	size_t K = 256, N = 256;
	double *gw, *mw, *sc, *a, *o, logical[2 * 256];
	memset(&r, 0, sizeof r);
	memset(&g, 0, sizeof g);
	vq_open(&r, "gptq_marlin_moe_repack", "bits=4 perm=none a8=no ekn=[1,256,256]");
	vq_open(&g, "gptq_marlin_gemm", "bits=4 group_size=128 mkn=[1,256,256]");
	vq_ref(&r);
	gw = vq_buf(&r, &r.b, "b_q_weight");
	mw = vq_buf(&g, &g.b, "b_q_weight");
	memcpy(mw, vq_buf(&r, &r.b, "out"), K * N / 8 * sizeof(double));
	/* scales: logical s[g][n]; stored row-block of 64: stored[j] = logical[(j % 8) * 8 + j / 8] */
	sc = vq_buf(&g, &g.b, "b_scales");
	for (size_t i = 0; i < 2 * N; i++)
		logical[i] = kgb_dtype_round(KGB_DT_F16, 0.001 * (double)(1 + (i * 7) % 13));
	for (size_t blk = 0; blk < 2 * N / 64; blk++)
		for (size_t j = 0; j < 64; j++)
			sc[blk * 64 + j] = logical[blk * 64 + (j % 8) * 8 + j / 8];
	a = vq_buf(&g, &g.b, "a");
	vq_ref(&g);
	o = vq_buf(&g, &g.b, "out");
	for (size_t n = 0; n < N; n++) {
		double want = 0;
		for (size_t k = 0; k < K; k++) {
			uint32_t q = ((uint32_t)(int32_t)gw[(k / 8) * N + n] >> (4 * (k % 8))) & 0xf;
			want += a[k] * kgb_dtype_round(KGB_DT_F16, ((double)q - 8) * logical[(k / 128) * N + n]);
		}
		ASSERT_NEAR(o[n], want, 1e-9 * (1 + fabs(want)));
	}
	vq_close(&r);
	vq_close(&g);
}

/* The Marlin GEMMs list the int32 workspace (an output) before out: their tolerance is
 * still out's fp16 one, not the exact compare of an integer first output. */
TEST(vllm_quant_marlin_tolerance_is_outs)
{
	static const char *const cases[][2] = {
		{ "gptq_marlin_gemm", "bits=4 group_size=128 mkn=[1,256,256]" },
		{ "gptq_marlin_24_gemm", "bits=8 group_size=128 mkn=[1,128,512]" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		vq_t g;
		memset(&g, 0, sizeof g);
		vq_open(&g, cases[i][0], cases[i][1]);
		ASSERT_TRUE(g.c.rtol > 0);
		ASSERT_TRUE(g.c.atol_rel > 0);
		/* one fp16 step at 1.0 (2^-10) is within the bar */
		ASSERT_TRUE(kgb_validate_elem_tol(&g.c, KGB_DT_F16, 1.0, 0) >= 0x1p-10);
		vq_close(&g);
	}
}

/* A dense 2:4 weight of codes (bias = zero) for the Marlin 2:4 tests: in every group of
 * four rows of a column, 0, 1 or 2 non-zero codes at pseudo-random rows. */
static void m24_dense(uint32_t *q, size_t K, size_t N, int bits, uint32_t seed)
{
	uint32_t bias = 1u << (bits - 1), x = seed;
	for (size_t g = 0; g < K / 4; g++)
		for (size_t n = 0; n < N; n++) {
			int keep, r0, r1;
			x = x * 1664525u + 1013904223u;
			keep = (int)((x >> 28) % 3);
			r0 = (int)((x >> 8) % 4);
			r1 = (r0 + 1 + (int)((x >> 12) % 3)) % 4;
			for (int i = 0; i < 4; i++) {
				uint32_t v = bias;
				if ((keep >= 1 && i == r0) || (keep == 2 && i == r1)) {
					v = (x >> (16 + i)) & ((1u << bits) - 1);
					if (v == bias)
						v = bias - 1;
				}
				q[(4 * g + (size_t)i) * N + n] = v;
			}
		}
}

/* Marlin 2:4: packing then unpacking gives the weight back (4 and 8 bits), the
 * metadata order is a permutation, and a group with three non-zeros is refused. */
TEST(vllm_quant_marlin24_pack_round_trip)
{
	size_t K = 64, N = 128;
	uint32_t *q = malloc(K * N * sizeof *q), *words = malloc(K * N * sizeof *words);
	int16_t *meta = malloc(K / 16 * N * sizeof *meta);
	int32_t *w = malloc(K * N * sizeof *w);
	unsigned char *seen = calloc(K / 16 * N, 1);
	ASSERT_TRUE(q && words && meta && w && seen);
	for (size_t n = 0; n < N; n++)
		for (size_t c = 0; c < K / 16; c++) {
			size_t o = kgb_m24_meta_offset(n, c, N);
			ASSERT_TRUE(o < K / 16 * N);
			ASSERT_EQ_INT(seen[o], 0);
			seen[o] = 1;
		}
	for (int bits = 4; bits <= 8; bits += 4) {
		size_t nwords = K / 32 * N * 16 * (size_t)bits / 32;
		m24_dense(q, K, N, bits, 7u + (uint32_t)bits);
		ASSERT_EQ_INT(kgb_m24_pack(q, K, N, bits, words, meta), 0);
		ASSERT_EQ_INT(kgb_m24_unpack(words, meta, K, N, bits, w), 0);
		for (size_t i = 0; i < K * N; i++)
			ASSERT_EQ_INT(w[i], (int32_t)q[i] - (1 << (bits - 1)));
		/* the words hold the K/2 x N kept codes and nothing else: changing one code
		 * of the dense weight changes exactly one word */
		{
			uint32_t *w2 = malloc(nwords * sizeof *w2);
			size_t diff = 0, k;
			ASSERT_TRUE(w2 != NULL);
			for (k = 0; q[k * N + 5] == (1u << (bits - 1)); k++)
				;
			q[k * N + 5] ^= 1;
			if (q[k * N + 5] == (1u << (bits - 1)))
				q[k * N + 5] ^= 3;
			ASSERT_EQ_INT(kgb_m24_pack(q, K, N, bits, w2, meta), 0);
			for (size_t i = 0; i < nwords; i++)
				diff += w2[i] != words[i];
			ASSERT_EQ_INT((int)diff, 1);
			free(w2);
		}
	}
	/* three non-zero codes in rows 0..2 of column 0 */
	for (size_t i = 0; i < K * N; i++)
		q[i] = 8;
	q[0] = q[N] = q[2 * N] = 1;
	ASSERT_EQ_INT(kgb_m24_pack(q, K, N, 4, words, meta), -1);
	/* a metadata nibble with i0 >= i1 is refused by the unpacker */
	q[2 * N] = 8;
	ASSERT_EQ_INT(kgb_m24_pack(q, K, N, 4, words, meta), 0);
	meta[0] = (int16_t)0x1111;
	ASSERT_EQ_INT(kgb_m24_unpack(words, meta, K, N, 4, w), -1);
	free(q);
	free(words);
	free(meta);
	free(w);
	free(seen);
}

/* Marlin 2:4 by hand: an all-zero weight but for W(1, 0) = 3 and W(2, 0) = 5 (4-bit,
 * bias 8). Group 0 of column 0 keeps rows 1 and 2: nibble 0x9; every other group is
 * empty and encoded 0xe (rows 2 and 3), so metadata element (0, 0) is 0xeee9 and sits
 * first. The compressed rows 0 and 1 of column 0 hold 11 and 13; word 0 reads stored
 * positions 0, 128, 4, 132, 16, 144, 20, 148 of the first run, i.e. (row, column)
 * (0,0) (8,0) (0,4) (8,4) (1,0) (9,0) (1,4) (9,4): nibbles 0xb and 0xd at 0 and 4. */
TEST(vllm_quant_marlin24_by_hand)
{
	size_t K = 128, N = 512;
	uint32_t *q = malloc(K * N * sizeof *q), *words = malloc(K / 32 * N * 2 * sizeof *words);
	int16_t *meta = malloc(K / 16 * N * sizeof *meta);
	vq_t s;
	double *a, *o, *sc;
	ASSERT_TRUE(q && words && meta);
	ASSERT_EQ_U64(kgb_m24_meta_offset(0, 0, N), 0);
	ASSERT_EQ_U64(kgb_m24_meta_offset(4, 0, N), 1);  /* row 1 of the 2 x 2 swizzle */
	ASSERT_EQ_U64(kgb_m24_meta_offset(0, 1, N), 2);
	ASSERT_EQ_U64(kgb_m24_meta_offset(1, 0, N), 4);
	ASSERT_EQ_U64(kgb_m24_meta_offset(8, 0, N), 8);
	ASSERT_EQ_U64(kgb_m24_meta_offset(2, 0, N), 64);
	ASSERT_EQ_U64(kgb_m24_meta_offset(0, 2, N), 2 * N);
	for (size_t i = 0; i < K * N; i++)
		q[i] = 8;
	q[1 * N + 0] = 11;
	q[2 * N + 0] = 13;
	ASSERT_EQ_INT(kgb_m24_pack(q, K, N, 4, words, meta), 0);
	ASSERT_EQ_U64((uint16_t)meta[0], 0xeee9);
	ASSERT_EQ_U64((uint16_t)meta[1], 0xeeee);
	ASSERT_EQ_U64(words[0], 0x888d888bu);
	ASSERT_EQ_U64(words[1], 0x88888888u);

	/* the operator's reference on the same words: out[0] = s0 * (3 a1 + 5 a2), 0 elsewhere */
	vq_open(&s, "gptq_marlin_24_gemm", "bits=4 group_size=-1 mkn=[1,128,512]");
	sc = vq_m24_weight(&s, words, meta, K, N);
	sc[0] = 0.5;
	a = vq_buf(&s, &s.b, "a");
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	ASSERT_NEAR(o[0], 0.5 * (3 * a[1] + 5 * a[2]), 1e-12);
	for (size_t n = 1; n < N; n++)
		ASSERT_NEAR(o[n], 0, 0);
	vq_close(&s);

	/* grouped scales: stored position j of a row of 64 holds column (j/8)*8 + {0,4,1,5,2,6,3,7}[j%8];
	 * W(1, 0) = fp16(3 * s) with s at stored position 0, W(130, 4) with group 1's column 4,
	 * stored at position 1 of its row */
	vq_open(&s, "gptq_marlin_24_gemm", "bits=4 group_size=128 mkn=[1,1024,2048]");
	K = 1024;
	N = 2048;
	free(q);
	free(words);
	free(meta);
	q = malloc(K * N * sizeof *q);
	words = malloc(K / 32 * N * 2 * sizeof *words);
	meta = malloc(K / 16 * N * sizeof *meta);
	ASSERT_TRUE(q && words && meta);
	for (size_t i = 0; i < K * N; i++)
		q[i] = 8;
	q[1 * N + 0] = 11;
	q[130 * N + 4] = 13; /* group 1 */
	ASSERT_EQ_INT(kgb_m24_pack(q, K, N, 4, words, meta), 0);
	sc = vq_m24_weight(&s, words, meta, K, N);
	sc[0] = kgb_dtype_round(KGB_DT_F16, 0.1);     /* group 0, column 0 */
	sc[N + 1] = kgb_dtype_round(KGB_DT_F16, 0.3); /* group 1, column 4 (stored position 1) */
	a = vq_buf(&s, &s.b, "a");
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	ASSERT_NEAR(o[0], a[1] * kgb_dtype_round(KGB_DT_F16, 3 * kgb_dtype_round(KGB_DT_F16, 0.1)), 1e-12);
	ASSERT_NEAR(o[4], a[130] * kgb_dtype_round(KGB_DT_F16, 5 * kgb_dtype_round(KGB_DT_F16, 0.3)), 1e-12);
	ASSERT_NEAR(o[1], 0, 0);
	vq_close(&s);
	free(q);
	free(words);
	free(meta);
}

/* AllSpark's N32K16 order: a permutation of the [N32, K] bytes and of every 32 scales,
 * hand-checked positions, and the reference on a weight with two non-zero entries. */
TEST(vllm_quant_allspark_layout)
{
	size_t K = 48, N32 = 96;
	unsigned char *seen = calloc(N32 * K, 1);
	vq_t s;
	double *w, *sc, *zp, *a, *o;
	const kgb_tensor_t *bt;
	ASSERT_TRUE(seen != NULL);
	for (size_t n = 0; n < N32; n++)
		for (size_t k = 0; k < K; k++) {
			size_t off = kgb_allspark_w_offset(k, n, K);
			ASSERT_TRUE(off < N32 * K);
			ASSERT_EQ_INT(seen[off], 0);
			seen[off] = 1;
		}
	memset(seen, 0, N32);
	for (size_t n = 0; n < N32; n++) {
		size_t off = kgb_allspark_s_offset(n);
		ASSERT_TRUE(off / 32 == n / 32);
		ASSERT_EQ_INT(seen[off], 0);
		seen[off] = 1;
	}
	free(seen);
	/* within a 32 x 16 block: row n % 8 (+ 8 per 32 columns), bytes in the order
	 * k0 k1 k8 k9 for n, then n + 8, n + 16, n + 24, then k2 k3 k10 k11 ... */
	ASSERT_EQ_U64(kgb_allspark_w_offset(0, 0, K), 0);
	ASSERT_EQ_U64(kgb_allspark_w_offset(1, 0, K), 1);
	ASSERT_EQ_U64(kgb_allspark_w_offset(8, 0, K), 2);
	ASSERT_EQ_U64(kgb_allspark_w_offset(9, 0, K), 3);
	ASSERT_EQ_U64(kgb_allspark_w_offset(0, 8, K), 4);
	ASSERT_EQ_U64(kgb_allspark_w_offset(0, 16, K), 8);
	ASSERT_EQ_U64(kgb_allspark_w_offset(0, 24, K), 12);
	ASSERT_EQ_U64(kgb_allspark_w_offset(2, 0, K), 16);
	ASSERT_EQ_U64(kgb_allspark_w_offset(16, 0, K), 64);
	ASSERT_EQ_U64(kgb_allspark_w_offset(0, 1, K), 4 * K);
	ASSERT_EQ_U64(kgb_allspark_w_offset(0, 32, K), 8 * 4 * K);
	ASSERT_EQ_U64(kgb_allspark_s_offset(1), 4);
	ASSERT_EQ_U64(kgb_allspark_s_offset(8), 1);
	ASSERT_EQ_U64(kgb_allspark_s_offset(33), 36);

	/* N = 272 (N32 = 288), K = 1072, bf16 with zero points: W(1, 0) = (131 - 128 - 2) * 0.25,
	 * W(17, 9) = (100 - 128 - 5) * 0.125, the rest of columns 0 and 9 codes 128 + z (zero),
	 * every other column scale 0 */
	vq_open(&s, "allspark_w8a16_gemm", "dtype=bf16 zp=yes mnk=[13,272,1072]");
	bt = kgb_vq_t(&s.c, "b_qweight");
	ASSERT_EQ_INT((int)bt->shape[0], 288);
	K = 1072;
	w = vq_buf(&s, &s.b, "b_qweight");
	sc = vq_buf(&s, &s.b, "b_scales");
	zp = vq_buf(&s, &s.b, "b_qzeros");
	for (size_t i = 0; i < 288 * K; i++)
		w[i] = 128;
	for (size_t i = 0; i < 288; i++)
		sc[i] = zp[i] = 0;
	for (size_t k = 0; k < K; k++) { /* 128 + z: a zero weight in columns 0 and 9 */
		w[kgb_allspark_w_offset(k, 0, K)] = 130;
		w[kgb_allspark_w_offset(k, 9, K)] = 133;
	}
	w[kgb_allspark_w_offset(1, 0, K)] = 131;
	w[kgb_allspark_w_offset(17, 9, K)] = 100;
	sc[kgb_allspark_s_offset(0)] = 0.25;
	zp[kgb_allspark_s_offset(0)] = 2;
	sc[kgb_allspark_s_offset(9)] = 0.125;
	zp[kgb_allspark_s_offset(9)] = 5;
	a = vq_buf(&s, &s.b, "a");
	vq_ref(&s);
	o = vq_buf(&s, &s.b, "out");
	for (size_t m = 0; m < 13; m++) {
		ASSERT_NEAR(o[m * 272 + 0], a[m * K + 1] * 0.25, 1e-12);
		ASSERT_NEAR(o[m * 272 + 9], a[m * K + 17] * -4.125, 1e-12);
		ASSERT_NEAR(o[m * 272 + 8], 0, 0);
	}
	vq_close(&s);
}
