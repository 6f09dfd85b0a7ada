/* allspark_w8a16_gemm: AllSpark's W8A16 GEMM on Ampere (docs/formats-gptq-awq-marlin.md,
 * "AllSpark").
 *
 * 8-bit weights (uint8b128: code q stands for q - 128) with one fp16 / bf16 scale and
 * optionally one zero point per output column, reordered by AllSpark's repack into its
 * "N32K16" order. The kernel forms every weight in the activation dtype as
 * ((q - 128) - z) * s, two roundings at most, and accumulates in fp32; the reference
 * forms the same weights and multiplies in double. */
#include <string.h>

#include "ops.h"
#include "util.h"
#include "vllm_quant_common.h"

/* See vllm_quant_common.h. */
size_t kgb_allspark_w_offset(size_t k, size_t n, size_t K)
{
	size_t row = (n / 32) * 8 + n % 8;
	size_t col = (k / 16) * 64 + ((k % 8) / 2) * 16 + ((n % 32) / 16) * 8 + ((n % 16) / 8) * 4 +
	             ((k % 16) / 8) * 2 + k % 2;
	return row * 4 * K + col;
}

/* See vllm_quant_common.h. */
size_t kgb_allspark_s_offset(size_t n)
{
	return (n / 32) * 32 + (n % 8) * 4 + (n % 32) / 8;
}

static int as_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "mnk");
	const char *ds = kgb_case_pstr(c, "dtype", "f16");
	bool zp = strcmp(kgb_case_pstr(c, "zp", "no"), "yes") == 0;
	kgb_dtype_t dt;
	int64_t M, N, K, N32, sh[2];
	kgb_tensor_t *t;
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3 || kgb_dtype_parse(ds, &dt) ||
	    (dt != KGB_DT_F16 && dt != KGB_DT_BF16)) {
		kgb_err(err, errlen, "op %s case %u: mnk must be [M,N,K] and dtype f16 or bf16", c->op->name,
		        c->index);
		return -1;
	}
	M = p->dims[0];
	N = p->dims[1];
	K = p->dims[2];
	if (M < 1 || N < 16 || K < 16 || N % 16 || K % 16) {
		kgb_err(err, errlen, "op %s case %u: N and K must be multiples of 16", c->op->name, c->index);
		return -1;
	}
	N32 = (N + 31) / 32 * 32;
	sh[0] = M;
	sh[1] = K;
	kgb_case_add_tensor(c, "a", KGB_ROLE_IN, dt, 2, sh);
	sh[0] = N32;
	sh[1] = K;
	t = kgb_case_add_tensor(c, "b_qweight", KGB_ROLE_IN, KGB_DT_U8, 2, sh);
	t->gen = KGB_GEN_INT; /* as_gen zeroes the padding columns N .. N32-1 */
	t->lo = 0;
	t->hi = 255;
	sh[0] = 1;
	sh[1] = N32;
	t = kgb_case_add_tensor(c, "b_scales", KGB_ROLE_IN, dt, 2, sh);
	t->gen = KGB_GEN_UNIFORM;
	t->lo = 0.002;
	t->hi = 0.02;
	if (zp) {
		t = kgb_case_add_tensor(c, "b_qzeros", KGB_ROLE_IN, dt, 2, sh);
		t->gen = KGB_GEN_INT; /* zero points relative to 128, as vLLM's quantiser makes them */
		t->lo = 0;
		t->hi = 127;
	}
	kgb_case_add_scalar(c, "n", KGB_DT_I64, (double)N);
	kgb_case_add_scalar(c, "group_size", KGB_DT_I64, -1);
	kgb_case_add_scalar(c, "sm_count", KGB_DT_I64, 108);
	kgb_case_add_scalar(c, "sm_version", KGB_DT_I64, 80);
	kgb_case_add_scalar(c, "CUBLAS_M_THRESHOLD", KGB_DT_I64, 1024);
	kgb_case_add_scalar(c, "has_zp", KGB_DT_I32, zp);
	kgb_case_add_scalar(c, "n32k16_reorder", KGB_DT_I32, 1);
	sh[0] = M;
	sh[1] = N;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 2, sh);
	KGB_SYMS(c, "M N K N32", M, N, K, N32);
	c->reduce_len = (double)K;
	kgb_case_default_tol(c);
	/* Below the cuBLAS threshold vLLM may split K into slices of at least 256 whose
	 * partial sums it rounds to the output dtype before adding them: one rounding per
	 * slice, on terms no larger than the output's largest magnitude. */
	if (K >= 512) {
		double u = dt == KGB_DT_F16 ? 0x1p-11 : 0x1p-8, k = (double)(K / 256) * u;
		if (c->atol_rel < k)
			c->atol_rel = k > 0.05 ? 0.05 : k;
	}
	c->timed = M * N * K >= (int64_t)1 << 24;
	return 0;
}

/* vLLM's repack leaves the padding columns of the weight, scales and zero points 0. */
static void as_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *w = kgb_vq_t(c, "b_qweight");
	size_t N32 = (size_t)w->shape[0], K = (size_t)w->shape[1], N = (size_t)kgb_vq_scalar(c, "n");
	double *wv = kgb_vq_v(c, b, "b_qweight"), *sv = kgb_vq_v(c, b, "b_scales"), *zv = kgb_vq_v(c, b, "b_qzeros");
	(void)rng;
	for (size_t n = N; n < N32; n++) {
		for (size_t k = 0; k < K; k++)
			wv[kgb_allspark_w_offset(k, n, K)] = 0;
		sv[kgb_allspark_s_offset(n)] = 0;
		if (zv)
			zv[kgb_allspark_s_offset(n)] = 0;
	}
}

static int as_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *a = kgb_vq_t(c, "a"), *o = kgb_vq_t(c, "out");
	size_t M = (size_t)a->shape[0], K = (size_t)a->shape[1], N = (size_t)o->shape[1];
	kgb_dtype_t dt = o->dtype;
	double *wv = kgb_vq_v(c, b, "b_qweight"), *sv = kgb_vq_v(c, b, "b_scales"), *zv = kgb_vq_v(c, b, "b_qzeros");
	double *w = kgb_xmalloc(K * N * sizeof *w);
	for (size_t n = 0; n < N; n++) {
		double s = sv[kgb_allspark_s_offset(n)], z = zv ? zv[kgb_allspark_s_offset(n)] : 0;
		for (size_t k = 0; k < K; k++) {
			double q = wv[kgb_allspark_w_offset(k, n, K)] - 128;
			w[k * N + n] = kgb_dtype_round(dt, kgb_dtype_round(dt, q - z) * s);
		}
	}
	kgb_vq_matmul(kgb_vq_v(c, b, "a"), w, kgb_vq_v(c, b, "out"), M, K, N);
	free(w);
	return 0;
}

static const kgb_op_t op_allspark_w8a16_gemm = {
	.name = "allspark_w8a16_gemm",
	.source = "vllm",
	.category = "quantized-gemm",
	.dtypes = "f16 bf16 u8",
	.datasets = KGB_DS_VLLM,
	.summary = "out[M, N] = a[M, K] @ W, W[k, n] = dt(dt((q[k, n] - 128) - z[n]) * s[n]) in the activation "
	           "dtype dt (f16 or bf16), z = 0 without has_zp; q uint8 in AllSpark's N32K16 order "
	           "(b_qweight [N32, K], N32 = N rounded up to 32: byte of (k, n) at row (n/32)*8 + n%8 of "
	           "4K bytes, column (k/16)*64 + (k%8/2)*16 + (n%32/16)*8 + (n%16/8)*4 + (k%16/8)*2 + k%2); "
	           "scales and zero points [1, N32] in the same order within each 32 columns (n at "
	           "(n%8)*4 + n%32/8); padding columns are 0; group_size -1 (per column) only; sm_count, "
	           "sm_version, CUBLAS_M_THRESHOLD and n32k16_reorder are launch hints",
	.signature = "a:in(f16|bf16) b_qweight:in(u8) b_scales:in b_qzeros:in(optional) n:i64 group_size:i64 "
	             "sm_count:i64 sm_version:i64 CUBLAS_M_THRESHOLD:i64 has_zp:i32 n32k16_reorder:i32 out:out",
	.grids = {
		{ .params = { { "dtype", "f16 bf16" }, { "zp", "no yes" }, { "mnk", "[1,64,128]" } } },
		{ .params = { { "dtype", "f16 bf16" }, { "zp", "no yes" },
		              { "mnk", "[13,272,1072] [26,592,208] [48,256,384] [67,208,1408] [257,208,176] "
		                       "[658,208,176] [1033,144,272]" } } },
	},
	.setup = as_setup,
	.ref = as_ref,
	.gen_inputs = as_gen,
	.declared_cases = 13,
	.deviation = "the public vLLM test's whole grid: 8 shapes x f16/bf16 x with/without zero point (32); "
	             "the declared 13 leave part of it out",
	.smoke_grids = 1,
	.optional = "b_qzeros",
};

const kgb_op_t *const kgb_ops_vllm_quant_allspark[] = {
	&op_allspark_w8a16_gemm,
	NULL,
};
