/* ATen matrix products: mm, bmm, matmul (every rank combination, batch broadcast) and
 * linear. References gather each matrix into a dense row-major double buffer and call
 * OpenBLAS cblas_dgemm, so the oracle is exact to double precision and fast. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

/* Matrix product of tensors ia (A: [..., M, K] or [K]) and ib (B: [..., K, N] or [K];
 * bt: B is stored as [N, K], the linear weight) into io, plus bias ibias ([N]) if >= 0.
 * Batch dims broadcast. */
static void matmul_ref(const kgb_case_t *c, kgb_hostbufs_t *b, int ia, int ib, int io, bool bt, int ibias)
{
	const kgb_tensor_t *A = &c->t[ia], *B = &c->t[ib], *O = &c->t[io];
	bool av = A->ndim == 1, bv = B->ndim == 1;
	int64_t M = av ? 1 : A->shape[A->ndim - 2], K = A->shape[A->ndim - 1];
	int64_t N = bv ? 1 : (bt ? B->shape[B->ndim - 2] : B->shape[B->ndim - 1]);
	int nbo = O->ndim - (av ? 0 : 1) - (bv ? 0 : 1);
	int nba = av ? 0 : A->ndim - 2, nbb = (bv || bt) ? 0 : B->ndim - 2;
	kgb_tensor_t batch = { 0 };
	int64_t bidx[KGB_MAX_DIMS] = { 0 };
	double *ma = kgb_xmalloc((size_t)(M * K) * sizeof *ma), *mb = kgb_xmalloc((size_t)(K * N) * sizeof *mb);
	double *mo = kgb_xmalloc((size_t)(M * N) * sizeof *mo);

	batch.ndim = nbo;
	for (int d = 0; d < nbo; d++)
		batch.shape[d] = O->shape[d];
	do {
		size_t aoff = 0, boff = 0;
		int64_t oi[KGB_MAX_DIMS];
		for (int d = 0; d < nba; d++)
			if (A->shape[d] != 1)
				aoff += (size_t)(bidx[d + nbo - nba] * A->stride[d]);
		for (int d = 0; d < nbb; d++)
			if (B->shape[d] != 1)
				boff += (size_t)(bidx[d + nbo - nbb] * B->stride[d]);
		for (int64_t m = 0; m < M; m++)
			for (int64_t k = 0; k < K; k++)
				ma[m * K + k] = b->v[ia][aoff + (size_t)((av ? 0 : m * A->stride[A->ndim - 2]) +
				                                         k * A->stride[A->ndim - 1])];
		for (int64_t k = 0; k < K; k++)
			for (int64_t n = 0; n < N; n++) {
				size_t o;
				if (bv)
					o = (size_t)(k * B->stride[0]);
				else if (bt)
					o = (size_t)(n * B->stride[0] + k * B->stride[1]);
				else
					o = (size_t)(k * B->stride[B->ndim - 2] + n * B->stride[B->ndim - 1]);
				mb[k * N + n] = b->v[ib][boff + o];
			}
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0, ma, (int)K, mb,
		            (int)N, 0.0, mo, (int)N);
		memcpy(oi, bidx, sizeof oi);
		for (int64_t m = 0; m < M; m++)
			for (int64_t n = 0; n < N; n++) {
				int p = nbo;
				double v = mo[m * N + n];
				if (!av)
					oi[p++] = m;
				if (!bv)
					oi[p++] = n;
				if (ibias >= 0)
					v += b->v[ibias][(size_t)(n * c->t[ibias].stride[0])];
				b->v[io][kgb_tensor_offset(O, oi)] = v;
			}
	} while (kgb_index_next(&batch, bidx));
	free(ma);
	free(mb);
	free(mo);
}

static int ref_mat(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int bias = (int)c->iparam[0];
	matmul_ref(c, b, 0, 1, c->ntensors - 1, c->iparam[1] != 0, bias);
	return 0;
}

/* Layout codes: "nn" both contiguous, "tn" A stored transposed, "nt" B stored
 * transposed, "tt" both. */
static int add_mat(kgb_case_t *c, const char *name, kgb_dtype_t dt, int nd, const int64_t *dims, bool trans,
                   char *err, size_t errlen)
{
	kgb_tensor_t *t = kgb_aten_tensor(c, name, KGB_ROLE_IN, dt, nd, dims, trans && nd >= 2 ? "transposed" : NULL,
	                                  err, errlen);
	if (!t)
		return -1;
	kgb_aten_gen(t, KGB_GEN_UNIFORM, -1, 1);
	return 0;
}

static int setup_mm(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *lay = kgb_case_pstr(c, "layout", "nn");
	int64_t s[KGB_MAX_DIMS], a[3], bb[3], o[3];
	int n = kgb_aten_shape(c, "mnk", s);
	bool batched = n == 4;
	int64_t B = batched ? s[0] : 1, M = s[n - 3], N = s[n - 2], K = s[n - 1];
	int k = 0;

	if (batched) {
		a[k] = bb[k] = o[k] = B;
		k++;
	}
	a[k] = M, a[k + 1] = K;
	bb[k] = K, bb[k + 1] = N;
	o[k] = M, o[k + 1] = N;
	if (add_mat(c, "self", dt, k + 2, a, lay[0] == 't', err, errlen) ||
	    add_mat(c, "mat2", dt, k + 2, bb, lay[1] == 't', err, errlen))
		return -1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, k + 2, o);
	kgb_case_set_sym(c, "B", B);
	kgb_case_set_sym(c, "M", M);
	kgb_case_set_sym(c, "N", N);
	kgb_case_set_sym(c, "K", K);
	c->iparam[0] = -1;
	kgb_aten_finish(c, (double)K, KGB_ATEN_TIMED_NUMEL / 4);
	return 0;
}

/* matmul: pairs of shapes covering every rank rule of torch.matmul. */
static const struct {
	int na, nb;
	int64_t a[4], b[4];
} matmul_cfg[] = {
	{ 1, 1, { 65 }, { 65 } },                    /* dot: 0-d */
	{ 2, 1, { 33, 65 }, { 65 } },                /* matrix-vector */
	{ 1, 2, { 65 }, { 65, 17 } },                /* vector-matrix */
	{ 2, 2, { 33, 65 }, { 65, 17 } },
	{ 3, 2, { 4, 33, 65 }, { 65, 17 } },         /* batch x matrix */
	{ 2, 3, { 33, 65 }, { 4, 65, 17 } },         /* matrix x batch */
	{ 3, 3, { 4, 33, 65 }, { 4, 65, 17 } },
	{ 4, 3, { 2, 1, 7, 9 }, { 3, 9, 5 } },       /* broadcast batch dims */
	{ 3, 1, { 4, 33, 65 }, { 65 } },             /* batch x vector */
	{ 1, 3, { 65 }, { 4, 65, 17 } },             /* vector x batch */
	{ 2, 2, { 1024, 1024 }, { 1024, 1024 } },
	{ 3, 3, { 16, 256, 128 }, { 16, 128, 256 } },
};

static int setup_matmul(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "cfg", 0), o[KGB_MAX_DIMS];
	bool ta = strcmp(kgb_case_pstr(c, "layout", "nn"), "tt") == 0;
	int na, nb, nbo, p = 0;

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(matmul_cfg))
		return kgb_err(err, errlen, "op matmul: parameter cfg: no configuration %lld", (long long)k);
	na = matmul_cfg[k].na;
	nb = matmul_cfg[k].nb;
	if (add_mat(c, "self", dt, na, matmul_cfg[k].a, ta, err, errlen) ||
	    add_mat(c, "other", dt, nb, matmul_cfg[k].b, ta, err, errlen))
		return -1;
	nbo = KGB_MAX(na > 1 ? na - 2 : 0, nb > 1 ? nb - 2 : 0);
	for (int d = 0; d < nbo; d++) {
		int da = d - (nbo - (na - 2)), db = d - (nbo - (nb - 2));
		int64_t sa = na > 2 && da >= 0 ? matmul_cfg[k].a[da] : 1;
		int64_t sb = nb > 2 && db >= 0 ? matmul_cfg[k].b[db] : 1;
		o[p++] = KGB_MAX(sa, sb);
	}
	if (na > 1)
		o[p++] = matmul_cfg[k].a[na - 2];
	if (nb > 1)
		o[p++] = matmul_cfg[k].b[nb - 1];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, p, o);
	c->iparam[0] = -1;
	kgb_aten_finish(c, (double)matmul_cfg[k].a[na - 1], KGB_ATEN_TIMED_NUMEL / 4);
	return 0;
}

static int setup_linear(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], w[2], o[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int64_t N = kgb_case_pint(c, "out_features", 16), K = dims[nd - 1];
	bool bias = kgb_case_pint(c, "bias", 1) != 0;
	bool tw = strcmp(kgb_case_pstr(c, "layout", "nn"), "nt") == 0;

	if (add_mat(c, "input", dt, nd, dims, false, err, errlen))
		return -1;
	w[0] = N;
	w[1] = K;
	if (add_mat(c, "weight", dt, 2, w, tw, err, errlen))
		return -1;
	c->iparam[0] = -1;
	if (bias) {
		kgb_aten_gen(kgb_case_add_tensor(c, "bias", KGB_ROLE_IN, dt, 1, &N), KGB_GEN_UNIFORM, -1, 1);
		c->iparam[0] = 2;
	}
	memcpy(o, dims, sizeof o);
	o[nd - 1] = N;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, o);
	c->iparam[1] = 1;
	kgb_case_set_sym(c, "K", K);
	kgb_case_set_sym(c, "N", N);
	kgb_case_set_sym(c, "M", (int64_t)(kgb_aten_numel(nd, dims) / (size_t)K));
	kgb_aten_finish(c, (double)K, KGB_ATEN_TIMED_NUMEL / 4);
	return 0;
}

#define F3 KGB_ATEN_FLOAT_DTYPES

static const kgb_op_t op_mm = {
	.name = "mm",
	.source = "aten",
	.category = "gemm",
	.dtypes = F3,
	.datasets = KGB_DS_ATEN,
	.summary = "out[M, N] = self[M, K] @ mat2[K, N], accumulated at least in fp32; self and/or mat2 may be "
	           "stored transposed (layout tn / nt / tt); inputs from [-1, 1)",
	.signature = "self:in mat2:in out:out",
	.grids = {
		{ { { "mnk", "[1,1,1] [7,13,5] [33,65,17] [128,256,64] [1024,1024,1024] [2048,512,1024]" },
		    { "dtype", F3 }, { "layout", "nn" } } },
		{ { { "mnk", "[33,65,17] [512,512,512]" }, { "dtype", F3 }, { "layout", "tn nt tt" } } },
	},
	.setup = setup_mm,
	.ref = ref_mat,
	.declared_cases = 18,
	.deviation = "adds odd and degenerate sizes and transposed operands",
};

static const kgb_op_t op_bmm = {
	.name = "bmm",
	.source = "aten",
	.category = "gemm",
	.dtypes = F3,
	.datasets = KGB_DS_ATEN,
	.summary = "out[b] = self[b] @ mat2[b] for every batch b ([B,M,K] @ [B,K,N]); operands may be stored "
	           "transposed in their last two dims",
	.signature = "self:in mat2:in out:out",
	.grids = {
		{ { { "mnk", "[1,1,1,1] [4,7,13,5] [3,33,65,17] [16,128,128,64] [8,512,512,256]" },
		    { "dtype", F3 }, { "layout", "nn" } } },
		{ { { "mnk", "[3,33,65,17] [16,128,128,64]" }, { "dtype", F3 }, { "layout", "tn nt" } } },
	},
	.setup = setup_mm,
	.ref = ref_mat,
	.declared_cases = 9,
	.deviation = "the public bmm test is broken; kgb tests batched products with odd and transposed operands",
};

static const kgb_op_t op_matmul = {
	.name = "matmul",
	.source = "aten",
	.category = "gemm",
	.dtypes = F3,
	.datasets = KGB_DS_ATEN,
	.summary = "torch.matmul: 1-d x 1-d dot (0-d), matrix-vector, vector-matrix, matrix, batched with "
	           "broadcast batch dims (a 1-d operand gets a dim prepended / appended, then removed)",
	.signature = "self:in other:in out:out",
	.grids = {
		{ { { "cfg", "0 1 2 3 4 5 6 7 8 9 10 11" }, { "dtype", F3 }, { "layout", "nn" } } },
		{ { { "cfg", "3 6 7" }, { "dtype", F3 }, { "layout", "tt" } } },
	},
	.setup = setup_matmul,
	.ref = ref_mat,
	.declared_cases = 5184,
	.deviation = "the public cases come through baddbmm's test with the definitions duplicated (72 unique, "
	             "5184 declared); kgb tests matmul itself on 12 rank/broadcast configurations x dtypes",
};

static const kgb_op_t op_linear = {
	.name = "linear",
	.source = "aten",
	.category = "gemm",
	.dtypes = F3,
	.datasets = KGB_DS_ATEN,
	.summary = "out[..., N] = input[..., K] @ weight[N, K]^T (+ bias[N]); input 1-d to 4-d; weight may be "
	           "stored transposed (layout nt)",
	.signature = "input:in weight:in bias:in? out:out",
	.grids = {
		{ { { "overload", "default" }, { "shape", "[65] [7,33] [33,65] [4,16,128] [2,3,5,64] [1024,1024]" }, { "dtype", F3 },
		    { "out_features", "17 256" }, { "bias", "1 0" }, { "layout", "nn" } } },
		{ { { "overload", "default" }, { "shape", "[33,65] [4,16,128]" }, { "dtype", F3 }, { "out_features", "17" }, { "bias", "1" },
		    { "layout", "nt" } } },
	},
	.setup = setup_linear,
	.ref = ref_mat,
	.declared_cases = 5184,
	.deviation = "the public cases come through baddbmm's test with duplicated definitions; kgb tests linear "
	             "itself (with and without bias, 1-d to 4-d inputs, transposed weight)",
	.optional = "bias",
};

const kgb_op_t *const kgb_ops_aten_gemm[] = { &op_bmm, &op_linear, &op_matmul, &op_mm, NULL };
