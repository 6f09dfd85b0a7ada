/* vLLM quantised GEMMs with plain layouts: CUTLASS scaled_mm (int8 / fp8 with
 * per-tensor, per-token and per-channel scales), its asymmetric (zero point) variant,
 * and AWQ's 4-bit GEMM (docs/formats-fp8-int8.md, docs/formats-gptq-awq-marlin.md).
 *
 * The outputs are fp16 / bf16 and judged by the elementwise tolerance of the output
 * dtype over a reduction of length K; the references multiply in double with OpenBLAS
 * after the weights have been dequantised exactly as the kernels do. */
#include <math.h>
#include <string.h>

#include "ops.h"
#include "util.h"
#include "vllm_quant_common.h"

/* M, N, K from the shape parameter "mnk" = [M,N,K]. */
static int mnk(const kgb_case_t *c, int64_t *M, int64_t *N, int64_t *K, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "mnk");
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3) {
		kgb_err(err, errlen, "op %s case %u: parameter mnk must be [M,N,K]", c->op->name, c->index);
		return -1;
	}
	*M = p->dims[0];
	*N = p->dims[1];
	*K = p->dims[2];
	return 0;
}

static void gen_set(kgb_tensor_t *t, kgb_gen_t g, double lo, double hi)
{
	t->gen = g;
	t->lo = lo;
	t->hi = hi;
}

/* acc[M, N] = A[M, K] (row-major) x B where B[k, n] is at b[k * bs0 + n * bs1]. */
static double *matmul(const double *a, const double *b, size_t M, size_t N, size_t K, size_t bs0,
                      size_t bs1)
{
	double *bd = kgb_xmalloc(K * N * sizeof *bd), *acc = kgb_xmalloc(M * N * sizeof *acc);
	for (size_t k = 0; k < K; k++)
		for (size_t n = 0; n < N; n++)
			bd[k * N + n] = b[k * bs0 + n * bs1];
	kgb_vq_matmul(a, bd, acc, M, K, N);
	free(bd);
	return acc;
}

/* ======================================================================
 * cutlass_scaled_mm and cutlass_scaled_mm_azp
 * ====================================================================== */

static int smm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t M, N, K, sh[2], sa[2], sb[2];
	kgb_dtype_t in = kgb_vq_pdtype(c, "in_dtype", KGB_DT_I8), odt = kgb_vq_pdtype(c, "out_dtype", KGB_DT_BF16);
	bool azp_op = strcmp(c->op->name, "cutlass_scaled_mm_azp") == 0;
	bool per_token = kgb_vq_pis(c, "scales", "token") || kgb_vq_pis(c, "scales", "both") || kgb_vq_pis(c, "azp", "token");
	bool per_channel = kgb_vq_pis(c, "scales", "channel") || kgb_vq_pis(c, "scales", "both");
	kgb_tensor_t *t;
	if (mnk(c, &M, &N, &K, err, errlen))
		return -1;
	sh[0] = M;
	sh[1] = N;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, odt, 2, sh);
	sh[1] = K;
	t = kgb_case_add_tensor(c, "a", KGB_ROLE_IN, in, 2, sh);
	if (in == KGB_DT_I8)
		gen_set(t, KGB_GEN_INT, -32, 32);
	sh[0] = K;
	sh[1] = N;
	t = kgb_case_add_tensor(c, "b", KGB_ROLE_IN, in, 2, sh);
	kgb_tensor_layout(t, "transposed"); /* column-major [K, N]: element (k, n) at n * K + k */
	if (in == KGB_DT_I8)
		gen_set(t, KGB_GEN_INT, -32, 32);
	sa[0] = per_token ? M : 1;
	sa[1] = 1;
	sb[0] = per_channel ? N : 1;
	sb[1] = 1;
	gen_set(kgb_case_add_tensor(c, "a_scales", KGB_ROLE_IN, KGB_DT_F32, 2, sa), KGB_GEN_UNIFORM, 0.005, 0.02);
	gen_set(kgb_case_add_tensor(c, "b_scales", KGB_ROLE_IN, KGB_DT_F32, 2, sb), KGB_GEN_UNIFORM, 0.005, 0.02);
	if (azp_op) {
		t = kgb_case_add_tensor(c, "azp_adj", KGB_ROLE_IN, KGB_DT_I32, 1, &N); /* filled by smm_gen */
		gen_set(t, KGB_GEN_ZERO, 0, 0);
		if (kgb_vq_pis(c, "azp", "token"))
			gen_set(kgb_case_add_tensor(c, "azp", KGB_ROLE_IN, KGB_DT_I32, 1, &M), KGB_GEN_INT, -20, 20);
	}
	if (kgb_vq_pis(c, "bias", "yes"))
		kgb_case_add_tensor(c, "bias", KGB_ROLE_IN, odt, 1, &N);
	KGB_SYMS(c, "M N K", M, N, K);
	c->reduce_len = (double)K;
	kgb_case_default_tol(c);
	c->timed = M * N * K >= (int64_t)1 << 28;
	return 0;
}

/* The zero-point adjustment the caller precomputes: column sums of b, times the
 * per-tensor zero point (drawn here in [-20, 20]) when there is no per-token azp. */
static void smm_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *bt = kgb_vq_t(c, "b");
	double *adj = kgb_vq_v(c, b, "azp_adj"), *bv = kgb_vq_v(c, b, "b");
	size_t K = (size_t)bt->shape[0], N = (size_t)bt->shape[1];
	double z = kgb_vq_v(c, b, "azp") ? 1.0 : (double)((int64_t)(kgb_rng_next(rng) % 41) - 20);
	if (!adj)
		return;
	if (z == 0)
		z = 7;
	for (size_t n = 0; n < N; n++) {
		double s = 0;
		for (size_t k = 0; k < K; k++)
			s += bv[n * K + k];
		adj[n] = z * s;
	}
}

static int smm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *o = kgb_vq_t(c, "out"), *at = kgb_vq_t(c, "a"), *sa = kgb_vq_t(c, "a_scales");
	const kgb_tensor_t *sb = kgb_vq_t(c, "b_scales");
	size_t M = (size_t)o->shape[0], N = (size_t)o->shape[1], K = (size_t)at->shape[1];
	double *acc = matmul(kgb_vq_v(c, b, "a"), kgb_vq_v(c, b, "b"), M, N, K, 1, K);
	double *sav = kgb_vq_v(c, b, "a_scales"), *sbv = kgb_vq_v(c, b, "b_scales");
	double *adj = kgb_vq_v(c, b, "azp_adj"), *azp = kgb_vq_v(c, b, "azp"), *bias = kgb_vq_v(c, b, "bias");
	double *ov = kgb_vq_v(c, b, "out");
	for (size_t m = 0; m < M; m++)
		for (size_t n = 0; n < N; n++) {
			double d = acc[m * N + n];
			if (adj)
				d -= (azp ? azp[m] : 1.0) * adj[n];
			d *= sav[sa->numel > 1 ? m : 0] * sbv[sb->numel > 1 ? n : 0];
			ov[m * N + n] = d + (bias ? bias[n] : 0.0);
		}
	free(acc);
	return 0;
}

#define SMM_MNK "[1,256,128] [33,256,512] [512,1024,2048]"

static const kgb_op_t op_cutlass_scaled_mm = {
	.name = "cutlass_scaled_mm",
	.source = "vllm",
	.category = "quantized-gemm",
	.dtypes = "i8 f8e4m3 -> bf16 f16",
	.datasets = KGB_DS_VLLM,
	.summary = "out[m, n] = a_scales[m or 0] * b_scales[n or 0] * sum_k a[m, k] * b[k, n] (+ bias[n]); "
	           "a [M, K] row-major, b [K, N] column-major (element (k, n) at n * K + k), both int8 "
	           "(int32 accumulation) or fp8 e4m3fn; a_scales [M or 1, 1] (per-token or per-tensor), "
	           "b_scales [N or 1, 1] (per-channel or per-tensor), f32; out and bias bf16 or f16",
	.signature = "out:out a:in b:in(column-major) a_scales:in(f32) b_scales:in(f32) bias:in(optional)",
	.grids = {
		{ .params = { { "in_dtype", "i8 f8e4m3" }, { "out_dtype", "bf16" }, { "scales", "tensor both" },
		              { "bias", "no" }, { "mnk", "[1,256,128] [16,128,256]" } } },
		{ .params = { { "in_dtype", "i8 f8e4m3" }, { "out_dtype", "bf16 f16" },
		              { "scales", "tensor token channel both" }, { "bias", "no" }, { "mnk", SMM_MNK } } },
		{ .params = { { "in_dtype", "i8 f8e4m3" }, { "out_dtype", "bf16 f16" }, { "scales", "both" },
		              { "bias", "yes" }, { "mnk", "[33,256,512]" } } },
	},
	.setup = smm_setup,
	.ref = smm_ref,
	.declared_cases = 32,
	.deviation = "int8/fp8 x bf16/f16 x 4 scale granularities x 3 shapes (48), plus 4 cases with bias",
	.smoke_grids = 1,
};

static const kgb_op_t op_cutlass_scaled_mm_azp = {
	.name = "cutlass_scaled_mm_azp",
	.source = "vllm",
	.category = "quantized-gemm",
	.dtypes = "i8 -> bf16 f16",
	.datasets = KGB_DS_VLLM,
	.summary = "asymmetric int8 activations: out[m, n] = a_scales * b_scales * (sum_k a[m, k] b[k, n] - "
	           "azp[m] * azp_adj[n]) + bias[n] with a per-token zero point azp [M] (azp_adj [N] = column "
	           "sums of b), or, without azp, out = a_scales * b_scales * (acc - azp_adj[n]) + bias where "
	           "azp_adj already holds zero point times column sums; layouts and scales as "
	           "cutlass_scaled_mm; azp and azp_adj int32",
	.signature = "out:out a:in(i8) b:in(i8, column-major) a_scales:in b_scales:in azp_adj:in(i32) "
	             "azp:in(i32, per-token) bias:in(optional)",
	.grids = {
		{ .params = { { "in_dtype", "i8" }, { "out_dtype", "bf16" }, { "scales", "tensor" },
		              { "azp", "tensor token" }, { "bias", "yes" }, { "mnk", "[1,256,128]" } } },
		{ .params = { { "in_dtype", "i8" }, { "out_dtype", "bf16 f16" }, { "scales", "tensor" },
		              { "azp", "tensor token" }, { "bias", "no yes" },
		              { "mnk", "[33,256,512] [512,1024,2048]" } } },
	},
	.setup = smm_setup,
	.ref = smm_ref,
	.gen_inputs = smm_gen,
	.declared_cases = 8,
	.deviation = "bf16/f16 x per-tensor/per-token zero point x bias or not x 2 shapes (16): the "
	             "public count leaves out either the bias or the zero-point granularity",
	.smoke_grids = 1,
};

/* ======================================================================
 * awq_gemm
 * ====================================================================== */

/* AWQ packs 8 columns per int32: logical column i of a word sits in nibble
 * awq_nibble[i] (bits 4 * awq_nibble[i] .. +3). */
static const int awq_nibble[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };

static unsigned nib(double word, int j)
{
	uint32_t w = (uint32_t)(int32_t)word;
	return (w >> (4 * j)) & 0xf;
}

static int awq_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t M, N, K, G = kgb_case_pint(c, "group_size", 128), sh[2];
	kgb_tensor_t *t;
	if (mnk(c, &M, &N, &K, err, errlen))
		return -1;
	if (N % 64 || K % G || G % 32) {
		kgb_err(err, errlen, "op %s case %u: N must be a multiple of 64, K of group_size, group_size of 32",
		        c->op->name, c->index);
		return -1;
	}
	sh[0] = M;
	sh[1] = K;
	kgb_case_add_tensor(c, "input", KGB_ROLE_IN, KGB_DT_F16, 2, sh);
	sh[0] = K;
	sh[1] = N / 8;
	gen_set(kgb_case_add_tensor(c, "qweight", KGB_ROLE_IN, KGB_DT_I32, 2, sh), KGB_GEN_INT, -2147483648.0,
	        2147483647.0);
	sh[0] = K / G;
	sh[1] = N;
	t = kgb_case_add_tensor(c, "scales", KGB_ROLE_IN, KGB_DT_F16, 2, sh);
	gen_set(t, KGB_GEN_UNIFORM, 0.002, 0.01);
	sh[1] = N / 8;
	gen_set(kgb_case_add_tensor(c, "qzeros", KGB_ROLE_IN, KGB_DT_I32, 2, sh), KGB_GEN_INT, -2147483648.0,
	        2147483647.0);
	kgb_case_add_scalar(c, "split_k_iters", KGB_DT_I32, 8);
	sh[0] = M;
	sh[1] = N;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, KGB_DT_F16, 2, sh);
	KGB_SYMS(c, "M N K group_size", M, N, K, G);
	c->reduce_len = (double)K;
	kgb_case_default_tol(c);
	c->timed = M * N * K >= (int64_t)1 << 27;
	return 0;
}

static int awq_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *o = kgb_vq_t(c, "out"), *x = kgb_vq_t(c, "input"), *s = kgb_vq_t(c, "scales");
	size_t M = (size_t)o->shape[0], N = (size_t)o->shape[1], K = (size_t)x->shape[1];
	size_t G = K / (size_t)s->shape[0];
	double *qw = kgb_vq_v(c, b, "qweight"), *qz = kgb_vq_v(c, b, "qzeros"), *sv = kgb_vq_v(c, b, "scales");
	double *w = kgb_xmalloc(K * N * sizeof *w), *acc;
	for (size_t k = 0; k < K; k++)
		for (size_t n = 0; n < N; n++) {
			size_t g = k / G;
			double q = nib(qw[k * (N / 8) + n / 8], awq_nibble[n % 8]);
			double z = nib(qz[g * (N / 8) + n / 8], awq_nibble[n % 8]);
			/* (q - z) is exact in fp16; the product is rounded to fp16 (fma.rn.f16x2) */
			w[k * N + n] = kgb_dtype_round(KGB_DT_F16, (q - z) * sv[g * N + n]);
		}
	acc = matmul(kgb_vq_v(c, b, "input"), w, M, N, K, N, 1);
	memcpy(kgb_vq_v(c, b, "out"), acc, M * N * sizeof *acc);
	free(w);
	free(acc);
	return 0;
}

static const kgb_op_t op_awq_gemm = {
	.name = "awq_gemm",
	.source = "vllm",
	.category = "quantized-gemm",
	.dtypes = "f16 i32",
	.datasets = KGB_DS_VLLM,
	.summary = "out[M, N] = input[M, K] @ W, W[k, n] = fp16((q[k, n] - z[k / G, n]) * scales[k / G, n]); "
	           "q and z are 4-bit, 8 per int32 along N (qweight [K, N/8], qzeros [K/G, N/8]) in AWQ's "
	           "order: column 8j + i of word j is nibble {0,4,1,5,2,6,3,7}[i]; scales [K/G, N] fp16; "
	           "split_k_iters is a tuning hint (vLLM sums its split-K partial products)",
	.signature = "input:in(f16) qweight:in(i32) scales:in(f16) qzeros:in(i32) split_k_iters:i32 out:out(f16)",
	.grids = {
		{ .params = { { "group_size", "64 128" }, { "mnk", "[1,256,128] [16,512,256]" } } },
		{ .params = { { "group_size", "64 128" }, { "mnk", "[33,1024,512] [64,2048,2048]" } } },
	},
	.setup = awq_setup,
	.ref = awq_ref,
	.declared_cases = 8,
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_quant_gemm[] = {
	&op_cutlass_scaled_mm,
	&op_cutlass_scaled_mm_azp,
	&op_awq_gemm,
	NULL,
};
