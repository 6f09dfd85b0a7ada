/* cuBLAS level 3: gemm (single, batched with pointer arrays, strided-batched, _64,
 * Ex, fp16), symm, syrk (and syrkEx), trsm (single and batched), geam, dgmm.
 * Semantics, layouts and the case grids: docs/operators.md, "cuBLAS". References in
 * double (complex double) precision, the products through OpenBLAS. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "cublas_common.h"
#include "ops.h"
#include "util.h"

static const enum CBLAS_TRANSPOSE cbtr[3] = { CblasNoTrans, CblasTrans, CblasConjTrans };

/* op(X)(i, j) of a stored matrix for trans 0/1/2. */
static inline double complex opm(const cb_mat_t *x, int tr, int64_t i, int64_t j)
{
	if (tr == 0)
		return cb_m(x, i, j);
	return tr == 1 ? cb_m(x, j, i) : conj(cb_m(x, j, i));
}

/* C := alpha * op(A) op(B) + beta * C on one batch item (beta = 0: C not read). */
static void gemm_item(const cb_mat_t *A, int ta, const cb_mat_t *B, int tb, const cb_mat_t *C, int64_t m,
                      int64_t n, int64_t k, double complex alpha, double complex beta)
{
	if (beta == 0)
		for (int64_t j = 0; j < n; j++)
			for (int64_t i = 0; i < m; i++)
				cb_mset(C, i, j, 0);
	if (C->cx) {
		cblas_zgemm(CblasColMajor, cbtr[ta], cbtr[tb], (int)m, (int)n, (int)k, &alpha, A->v + 2 * A->base,
		            (int)A->ld, B->v + 2 * B->base, (int)B->ld, &beta, C->v + 2 * C->base, (int)C->ld);
	} else {
		cblas_dgemm(CblasColMajor, cbtr[ta], cbtr[tb], (int)m, (int)n, (int)k, creal(alpha), A->v + A->base,
		            (int)A->ld, B->v + B->base, (int)B->ld, creal(beta), C->v + C->base, (int)C->ld);
	}
}

/* Batch stride of a matrix of ld * cols elements: with padding, a gap between the
 * items too (it must be left untouched). */
static int64_t bstride(int64_t ld, int64_t cols, int64_t pad)
{
	return ld * cols + (pad ? 5 : 0);
}

static void batch_setup(kgb_case_t *c, int64_t nb, const char *const *names, const char *const *arrs,
                        const char *const *ssyms, int n)
{
	if (CB_DEF(c)->batch == CB_SINGLE)
		return;
	kgb_case_set_sym(c, "batch", nb);
	for (int i = 0; i < n; i++)
		cb_batch_extras(c, names[i], arrs[i], ssyms[i]);
}

static int shape3(const kgb_case_t *c, const char *param, int64_t *a, int64_t *b, int64_t *d, char *err,
                  size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, param);
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3 || p->dims[0] < 1 || p->dims[1] < 1 || p->dims[2] < 1)
		return kgb_err(err, errlen, "op %s case %u: parameter %s must be a shape [a,b,c] of positive sizes",
		               c->op->name, c->index, param);
	*a = p->dims[0];
	*b = p->dims[1];
	*d = p->dims[2];
	return 0;
}

static int shape2(const kgb_case_t *c, const char *param, int64_t *a, int64_t *b, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, param);
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 2 || p->dims[0] < 1 || p->dims[1] < 1)
		return kgb_err(err, errlen, "op %s case %u: parameter %s must be a shape [a,b] of positive sizes",
		               c->op->name, c->index, param);
	*a = p->dims[0];
	*b = p->dims[1];
	return 0;
}

/* The imaginary parts of complex alpha and beta: fixed per real part so that grids
 * stay small, and non-zero whenever the real part is. */
static double alpha_im(double a)
{
	return a != 0 ? 0.5 : 0;
}

static double beta_im(double b)
{
	return b != 0 ? -0.25 : 0;
}

static void add_alpha_beta(kgb_case_t *c, bool with_beta)
{
	double a = kgb_case_pfloat(c, "alpha", 1.0), b = kgb_case_pfloat(c, "beta", 0.0);
	cb_add_scalar(c, "alpha", "alpha_im", a, alpha_im(a));
	if (with_beta)
		cb_add_scalar(c, "beta", "beta_im", b, beta_im(b));
}

/* ---- gemm ---- */

static int gemm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	static const char *const names[] = { "A", "B", "C" }, *const arrs[] = { "Aarray", "Barray", "Carray" },
	                         *const ss[] = { "strideA", "strideB", "strideC" };
	kgb_dtype_t dt = cb_dtype(c), abt = dt;
	const char *abs = kgb_case_pstr(c, "abtype", NULL);
	bool cx = kgb_dtype_is_complex(dt);
	int ta, tb;
	int64_t m = 0, n = 0, k = 0, pad = kgb_case_pint(c, "pad", 0), nb = 0, ra, ca, rb, cbb, lda, ldb, ldc;
	if ((ta = cb_trans(c, "transa", cx, err, errlen)) < 0 || (tb = cb_trans(c, "transb", cx, err, errlen)) < 0)
		return -1;
	if (shape3(c, "mnk", &m, &n, &k, err, errlen) != 0)
		return -1;
	if (abs && kgb_dtype_parse(abs, &abt) != 0)
		return kgb_err(err, errlen, "op %s case %u: abtype '%s' is not a dtype", c->op->name, c->index, abs);
	if (CB_DEF(c)->batch != CB_SINGLE) {
		nb = kgb_case_pint(c, "batch", 0);
		if (nb < 1)
			return kgb_err(err, errlen, "op %s case %u: batch must be >= 1", c->op->name, c->index);
	}
	ra = ta ? k : m;
	ca = ta ? m : k;
	rb = tb ? n : k;
	cbb = tb ? k : n;
	lda = ra + pad;
	ldb = rb + pad;
	ldc = m + pad;
	cb_matrix(c, "A", KGB_ROLE_IN, abt, ra, ca, lda, nb, bstride(lda, ca, pad));
	cb_matrix(c, "B", KGB_ROLE_IN, abt, rb, cbb, ldb, nb, bstride(ldb, cbb, pad));
	cb_matrix(c, "C", KGB_ROLE_INOUT, dt, m, n, ldc, nb, bstride(ldc, n, pad));
	batch_setup(c, nb, names, arrs, ss, 3);
	add_alpha_beta(c, true);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "k", k);
	kgb_case_set_sym(c, "lda", lda);
	kgb_case_set_sym(c, "ldb", ldb);
	kgb_case_set_sym(c, "ldc", ldc);
	kgb_case_set_sym(c, "transa", ta);
	kgb_case_set_sym(c, "transb", tb);
	cb_finish(c, (double)k);
	return 0;
}

static int gemm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n"), k = cb_sym(c, "k");
	int ta = (int)cb_sym(c, "transa"), tb = (int)cb_sym(c, "transb");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	for (int64_t bi = 0; bi < cb_nbatch(c); bi++) {
		cb_mat_t A = cb_mat(c, b, "A", bi), B = cb_mat(c, b, "B", bi), C = cb_mat(c, b, "C", bi);
		if (A.cx != C.cx)
			return -1;
		gemm_item(&A, ta, &B, tb, &C, m, n, k, alpha, beta);
	}
	return 0;
}

#define GEMM_SUMMARY(what)                                                                             \
	"C = alpha * op(A) * op(B) + beta * C" what ", column-major; op = N, T or C (conjugate transpose); " \
	"beta = 0: C is not read (it holds NaN)"
#define GEMM_SIG(extra) "A:in B:in C:inout " extra "alpha beta"

#define GEMM_OP(var, nm, dty, dts, bmode, is64, cat_summary, sig, ncases, dev, ...)                    \
	static const cb_op_t var = {                                                                   \
		.op = {                                                                                \
			.name = nm,                                                                    \
			.source = "cublas",                                                            \
			.category = "blas3-gemm",                                                      \
			.dtypes = dts,                                                                 \
			.datasets = KGB_DS_CUBLAS,                                                     \
			.summary = cat_summary,                                                        \
			.signature = sig,                                                              \
			.grids = { __VA_ARGS__ },                                                      \
			.setup = gemm_setup,                                                           \
			.ref = gemm_ref,                                                               \
			.inplace = true,                                                               \
			.declared_cases = ncases,                                                      \
			.deviation = dev,                                                              \
			.gen_inputs = cb_gen,                                                          \
			.smoke_grids = 1,                                                              \
		},                                                                                     \
		.dt = dty,                                                                             \
		.batch = bmode,                                                                        \
		.i64 = is64,                                                                           \
	}

#define TRIM "grid trimmed to the modes, edges and one large size (docs/operators.md)"

GEMM_OP(op_cgemm, "cublasCgemm_v2", KGB_DT_C64, "c64", CB_SINGLE, false, GEMM_SUMMARY(""), GEMM_SIG(""),
        1683, TRIM,
        { .params = { { "dtype", "c64" }, { "transa", "N" }, { "transb", "C" }, { "mnk", "[8,6,5]" },
                      { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },
        { .params = { { "dtype", "c64" }, { "transa", "N T C" }, { "transb", "N T C" },
                      { "mnk", "[37,29,41] [1,33,17] [33,17,1]" }, { "pad", "0 3" }, { "alpha", "1.5" },
                      { "beta", "0 0.5" } } },
        { .params = { { "dtype", "c64" }, { "transa", "N" }, { "transb", "N" }, { "mnk", "[24,24,24]" },
                      { "pad", "0" }, { "alpha", "0 -1" }, { "beta", "1" } } },
        { .params = { { "dtype", "c64" }, { "transa", "N" }, { "transb", "N" }, { "mnk", "[192,192,192]" },
                      { "pad", "0" }, { "alpha", "1" }, { "beta", "0 0.5" } } });

#define SB_GRIDS(dtn, trs, big)                                                                         \
	{ .params = { { "dtype", dtn }, { "transa", "N" }, { "transb", "T" }, { "mnk", "[8,6,5]" },       \
	              { "batch", "4" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },     \
	{ .params = { { "dtype", dtn }, { "transa", trs }, { "transb", trs },                           \
	              { "mnk", "[17,23,19] [32,1,16]" }, { "batch", "5" }, { "pad", "0 2" },            \
	              { "alpha", "1.5" }, { "beta", "0 0.5" } } },                                        \
	{ .params = { { "dtype", dtn }, { "transa", "N" }, { "transb", "N" }, { "mnk", big },           \
	              { "batch", "16" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0 0.5" } } }

GEMM_OP(op_cgemm_sb, "cublasCgemmStridedBatched", KGB_DT_C64, "c64", CB_STRIDED, false,
        GEMM_SUMMARY(" for every item of the batch (items strideA/B/C elements apart)"),
        GEMM_SIG("strideA strideB strideC batch "), 120, TRIM, SB_GRIDS("c64", "N T C", "[48,48,48]"));
GEMM_OP(op_cgemm_sb64, "cublasCgemmStridedBatched_64", KGB_DT_C64, "c64", CB_STRIDED, true,
        GEMM_SUMMARY(" for every item of the batch; 64-bit integer arguments"),
        GEMM_SIG("strideA strideB strideC batch "), 120, TRIM, SB_GRIDS("c64", "N T C", "[48,48,48]"));
GEMM_OP(op_dgemm_b, "cublasDgemmBatched", KGB_DT_F64, "f64", CB_BATCHED, false,
        GEMM_SUMMARY(" for every item i, A/B/C of item i at element Aarray[i]/Barray[i]/Carray[i]"),
        GEMM_SIG("Aarray:in Barray:in Carray:in batch "), 180, TRIM, SB_GRIDS("f64", "N T", "[64,64,64]"));
GEMM_OP(op_dgemm_sb, "cublasDgemmStridedBatched", KGB_DT_F64, "f64", CB_STRIDED, false,
        GEMM_SUMMARY(" for every item of the batch"), GEMM_SIG("strideA strideB strideC batch "), 864, TRIM,
        SB_GRIDS("f64", "N T", "[64,64,64]"));
GEMM_OP(op_dgemm_sb64, "cublasDgemmStridedBatched_64", KGB_DT_F64, "f64", CB_STRIDED, true,
        GEMM_SUMMARY(" for every item of the batch; 64-bit integer arguments"),
        GEMM_SIG("strideA strideB strideC batch "), 180, TRIM, SB_GRIDS("f64", "N T", "[64,64,64]"));
GEMM_OP(op_hgemm_b, "cublasHgemmBatched", KGB_DT_F16, "f16", CB_BATCHED, false,
        GEMM_SUMMARY(" in fp16 (fp16 inputs, scalars, output and compute), items at the offsets of the arrays"),
        GEMM_SIG("Aarray:in Barray:in Carray:in batch "), 180, TRIM, SB_GRIDS("f16", "N T", "[64,64,64]"));
GEMM_OP(op_hgemm_sb, "cublasHgemmStridedBatched", KGB_DT_F16, "f16", CB_STRIDED, false,
        GEMM_SUMMARY(" in fp16 (fp16 inputs, scalars, output and compute) for every item of the batch"),
        GEMM_SIG("strideA strideB strideC batch "), 864, TRIM, SB_GRIDS("f16", "N T", "[64,64,64]"));
GEMM_OP(op_sgemm_b64, "cublasSgemmBatched_64", KGB_DT_F32, "f32", CB_BATCHED, true,
        GEMM_SUMMARY(" for every item, at the offsets of the arrays; 64-bit integer arguments"),
        GEMM_SIG("Aarray:in Barray:in Carray:in batch "), 180, TRIM, SB_GRIDS("f32", "N T", "[64,64,64]"));
GEMM_OP(op_sgemm_sb, "cublasSgemmStridedBatched", KGB_DT_F32, "f32", CB_STRIDED, false,
        GEMM_SUMMARY(" for every item of the batch"), GEMM_SIG("strideA strideB strideC batch "), 864, TRIM,
        SB_GRIDS("f32", "N T", "[64,64,64]"));
GEMM_OP(op_zgemm_b, "cublasZgemmBatched", KGB_DT_C128, "c128", CB_BATCHED, false,
        GEMM_SUMMARY(" for every item, at the offsets of the arrays"),
        GEMM_SIG("Aarray:in Barray:in Carray:in batch "), 180, TRIM, SB_GRIDS("c128", "N T C", "[48,48,48]"));
GEMM_OP(op_zgemm_sb, "cublasZgemmStridedBatched", KGB_DT_C128, "c128", CB_STRIDED, false,
        GEMM_SUMMARY(" for every item of the batch"), GEMM_SIG("strideA strideB strideC batch "), 768, TRIM,
        SB_GRIDS("c128", "N T C", "[48,48,48]"));
GEMM_OP(op_sgemm_ex, "cublasSgemmEx", KGB_DT_F32, "f32 f16 bf16 i8",  CB_SINGLE, false,
        GEMM_SUMMARY(" with A and B of type abtype (f32, f16, bf16 or i8), C f32, computed in fp32"),
        GEMM_SIG("abtype "), 108, TRIM,
        { .params = { { "dtype", "f32" }, { "abtype", "f16" }, { "transa", "N" }, { "transb", "T" },
                      { "mnk", "[8,6,5]" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
        { .params = { { "dtype", "f32" }, { "abtype", "f32 f16 bf16 i8" }, { "transa", "N T" },
                      { "transb", "N T" }, { "mnk", "[37,29,41] [1,33,17]" }, { "pad", "3" },
                      { "alpha", "1.5" }, { "beta", "0 0.5" } } },
        { .params = { { "dtype", "f32" }, { "abtype", "f16 bf16" }, { "transa", "N" }, { "transb", "N" },
                      { "mnk", "[256,256,256]" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0" } } });

/* ---- symm ---- */

/* The full symmetric matrix of A's `uplo` triangle, dim x dim, column-major. */
static double complex *sym_full(const cb_mat_t *A, int uplo, int64_t dim)
{
	double complex *f = kgb_xmalloc((size_t)(dim * dim) * sizeof *f);
	for (int64_t j = 0; j < dim; j++)
		for (int64_t i = 0; i < dim; i++) {
			bool stored = uplo ? i <= j : i >= j;
			f[j * dim + i] = stored ? cb_m(A, i, j) : cb_m(A, j, i);
		}
	return f;
}

static int symm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int side, uplo;
	int64_t m = 0, n = 0, pad = kgb_case_pint(c, "pad", 0), dim;
	if ((side = cb_side(c, err, errlen)) < 0 || (uplo = cb_uplo(c, err, errlen)) < 0 ||
	    shape2(c, "mn", &m, &n, err, errlen) != 0)
		return -1;
	dim = side ? n : m;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, dim, dim, dim + pad, 0, 0);
	cb_matrix(c, "B", KGB_ROLE_IN, dt, m, n, m + pad, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_INOUT, dt, m, n, m + pad, 0, 0);
	add_alpha_beta(c, true);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", dim + pad);
	kgb_case_set_sym(c, "ldb", m + pad);
	kgb_case_set_sym(c, "ldc", m + pad);
	kgb_case_set_sym(c, "side", side);
	kgb_case_set_sym(c, "uplo", uplo);
	cb_finish(c, (double)dim);
	return 0;
}

static int symm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n");
	int side = (int)cb_sym(c, "side"), uplo = (int)cb_sym(c, "uplo");
	int64_t dim = side ? n : m;
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	cb_mat_t A = cb_mat(c, b, "A", 0), B = cb_mat(c, b, "B", 0), C = cb_mat(c, b, "C", 0);
	double complex *f = sym_full(&A, uplo, dim), *bb = kgb_xmalloc((size_t)(m * n) * sizeof *bb),
	               *p = kgb_xmalloc((size_t)(m * n) * sizeof *p);
	const double complex one = 1, zero = 0;
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++)
			bb[j * m + i] = cb_m(&B, i, j);
	if (side == 0)
		cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)m, &one, f, (int)m, bb,
		            (int)m, &zero, p, (int)m);
	else
		cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)n, &one, bb, (int)m, f,
		            (int)n, &zero, p, (int)m);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++)
			cb_mset(&C, i, j, alpha * p[j * m + i] + (beta == 0 ? 0 : beta * cb_m(&C, i, j)));
	free(f);
	free(bb);
	free(p);
	return 0;
}

static const cb_op_t op_csymm = {
	.op = {
		.name = "cublasCsymm_v2",
		.source = "cublas",
		.category = "blas3-symm",
		.dtypes = "c64",
		.datasets = KGB_DS_CUBLAS,
		.summary = "C = alpha * A * B + beta * C (side L, A m x m) or alpha * B * A + beta * C (side R, "
		           "A n x n); A symmetric (not Hermitian), only its uplo triangle is read",
		.signature = "A:in B:in C:inout side uplo alpha beta",
		.grids = {
			{ .params = { { "dtype", "c64" }, { "side", "L" }, { "uplo", "U" }, { "mn", "[7,5]" },
			              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
			{ .params = { { "dtype", "c64" }, { "side", "L R" }, { "uplo", "L U" },
			              { "mn", "[33,17] [1,20] [20,1]" }, { "pad", "0 2" }, { "alpha", "1.5" },
			              { "beta", "0 0.5" } } },
			{ .params = { { "dtype", "c64" }, { "side", "L R" }, { "uplo", "U" }, { "mn", "[256,192]" },
			              { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } },
		},
		.setup = symm_setup,
		.ref = symm_ref,
		.inplace = true,
		.declared_cases = 60,
		.deviation = NULL,
		.gen_inputs = cb_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_C64,
};

/* ---- syrk ---- */

static int syrk_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c), at = dt;
	const char *as = kgb_case_pstr(c, "atype", NULL);
	int tr, uplo;
	int64_t n = 0, k = 0, pad = kgb_case_pint(c, "pad", 0);
	if ((tr = cb_trans(c, "trans", false, err, errlen)) < 0 || (uplo = cb_uplo(c, err, errlen)) < 0 ||
	    shape2(c, "nk", &n, &k, err, errlen) != 0)
		return -1;
	if (as && kgb_dtype_parse(as, &at) != 0)
		return kgb_err(err, errlen, "op %s case %u: atype '%s' is not a dtype", c->op->name, c->index, as);
	cb_matrix(c, "A", KGB_ROLE_IN, at, tr ? k : n, tr ? n : k, (tr ? k : n) + pad, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_INOUT, dt, n, n, n + pad, 0, 0);
	add_alpha_beta(c, true);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "k", k);
	kgb_case_set_sym(c, "lda", (tr ? k : n) + pad);
	kgb_case_set_sym(c, "ldc", n + pad);
	kgb_case_set_sym(c, "trans", tr);
	kgb_case_set_sym(c, "uplo", uplo);
	cb_finish(c, (double)k);
	return 0;
}

static int syrk_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n"), k = cb_sym(c, "k");
	int tr = (int)cb_sym(c, "trans"), uplo = (int)cb_sym(c, "uplo");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	cb_mat_t A = cb_mat(c, b, "A", 0), C = cb_mat(c, b, "C", 0);
	double complex *a = kgb_xmalloc((size_t)(n * k) * sizeof *a), *p = kgb_xmalloc((size_t)(n * n) * sizeof *p);
	const double complex one = 1, zero = 0;
	/* a = op(A), n x k; p = a * a^T (transpose, not conjugate: syrk is symmetric) */
	for (int64_t j = 0; j < k; j++)
		for (int64_t i = 0; i < n; i++)
			a[j * n + i] = tr ? cb_m(&A, j, i) : cb_m(&A, i, j);
	cblas_zgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)k, &one, a, (int)n, a, (int)n, &zero,
	            p, (int)n);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < n; i++)
			if (uplo ? i <= j : i >= j)
				cb_mset(&C, i, j, alpha * p[j * n + i] + (beta == 0 ? 0 : beta * cb_m(&C, i, j)));
	free(a);
	free(p);
	return 0;
}

#define SYRK_SUMMARY                                                                                \
	"C = alpha * op(A) * op(A)^T + beta * C on the uplo triangle of C only (the other triangle is " \
	"left as it is); op(A) = A (n x k, trans N) or A^T (A k x n, trans T); beta = 0: C not read"

static const cb_op_t op_ssyrk = {
	.op = {
		.name = "cublasSsyrk_v2",
		.source = "cublas",
		.category = "blas3-syrk",
		.dtypes = "f32",
		.datasets = KGB_DS_CUBLAS,
		.summary = SYRK_SUMMARY,
		.signature = "A:in C:inout uplo trans alpha beta",
		.grids = {
			{ .params = { { "dtype", "f32" }, { "uplo", "U" }, { "trans", "N" }, { "nk", "[7,5]" },
			              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
			{ .params = { { "dtype", "f32" }, { "uplo", "L U" }, { "trans", "N T" },
			              { "nk", "[33,17] [1,20] [20,1]" }, { "pad", "0 2" }, { "alpha", "1.5" },
			              { "beta", "0 0.5" } } },
			{ .params = { { "dtype", "f32" }, { "uplo", "L U" }, { "trans", "N" }, { "nk", "[256,256]" },
			              { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } },
		},
		.setup = syrk_setup,
		.ref = syrk_ref,
		.inplace = true,
		.declared_cases = 60,
		.gen_inputs = cb_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F32,
};

static const cb_op_t op_csyrkex = {
	.op = {
		.name = "cublasCsyrkEx",
		.source = "cublas",
		.category = "blas3-syrk",
		.dtypes = "c64",
		.datasets = KGB_DS_CUBLAS,
		.summary = SYRK_SUMMARY "; A of type atype (c64: CUDA_C_32F), C c64, computed in fp32",
		.signature = "A:in C:inout uplo trans atype alpha beta",
		.grids = {
			{ .params = { { "dtype", "c64" }, { "atype", "c64" }, { "uplo", "U" }, { "trans", "N" },
			              { "nk", "[7,5]" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
			{ .params = { { "dtype", "c64" }, { "atype", "c64" }, { "uplo", "L U" }, { "trans", "N T" },
			              { "nk", "[33,17] [1,20] [20,1]" }, { "pad", "0 2" }, { "alpha", "1.5" },
			              { "beta", "0 0.5" } } },
			{ .params = { { "dtype", "c64" }, { "atype", "c64" }, { "uplo", "L U" }, { "trans", "T" },
			              { "nk", "[192,160]" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0" } } },
		},
		.setup = syrk_setup,
		.ref = syrk_ref,
		.inplace = true,
		.declared_cases = 13860,
		.deviation = "grid trimmed (docs/operators.md); A of type CUDA_C_8I (complex int8) is not "
		             "covered: kgb has no complex integer dtype",
		.gen_inputs = cb_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_C64,
};

/* ---- trsm ---- */

/* Make the triangle of every stored A (every slot of a batch) well conditioned: a
 * diagonal of magnitude in [1, 2) with a random sign, off-diagonal elements of the
 * triangle uniform in [-1, 1) / dim. The other triangle keeps its generated values,
 * which a correct kernel never reads. With a unit diagonal (diag = U) the stored
 * diagonal, which must not be read, gets magnitudes in [2.5, 3.5) instead. */
static void tri_condition(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b, const char *name, int uplo,
                          int64_t dim)
{
	double dlo = cb_sym(c, "diag") ? 2.5 : 1.0;
	int ti = kgb_case_tensor_index(c, name);
	const kgb_tensor_t *t = &c->t[ti];
	bool cx = kgb_dtype_is_complex(t->dtype);
	int64_t nslots = t->ndim == 3 ? t->shape[0] : 1, ld = t->ndim == 3 ? t->stride[1] : t->stride[0];
	for (int64_t s = 0; s < nslots; s++) {
		cb_mat_t A = { b->v[ti], cx, (size_t)(t->ndim == 3 ? s * t->stride[0] : 0), ld };
		for (int64_t j = 0; j < dim; j++)
			for (int64_t i = 0; i < dim; i++) {
				double re, im = 0;
				if (uplo ? i > j : i < j)
					continue;
				if (i == j) {
					re = (dlo + kgb_rng_uniform(rng)) * (kgb_rng_uniform(rng) < 0.5 ? -1 : 1);
					if (cx)
						im = 0.5 * (2 * kgb_rng_uniform(rng) - 1);
				} else {
					re = (2 * kgb_rng_uniform(rng) - 1) / (double)dim;
					if (cx)
						im = (2 * kgb_rng_uniform(rng) - 1) / (double)dim;
				}
				cb_mset(&A, i, j, CMPLX(re, im));
			}
	}
}

static int trsm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	static const char *const names[] = { "A", "B" }, *const arrs[] = { "Aarray", "Barray" },
	                         *const ss[] = { "strideA", "strideB" };
	kgb_dtype_t dt = cb_dtype(c);
	bool cx = kgb_dtype_is_complex(dt);
	int side, uplo, tr, diag;
	int64_t m = 0, n = 0, pad = kgb_case_pint(c, "pad", 0), dim, nb = 0;
	if ((side = cb_side(c, err, errlen)) < 0 || (uplo = cb_uplo(c, err, errlen)) < 0 ||
	    (tr = cb_trans(c, "trans", cx, err, errlen)) < 0 || (diag = cb_diag(c, err, errlen)) < 0 ||
	    shape2(c, "mn", &m, &n, err, errlen) != 0)
		return -1;
	if (CB_DEF(c)->batch != CB_SINGLE && (nb = kgb_case_pint(c, "batch", 0)) < 1)
		return kgb_err(err, errlen, "op %s case %u: batch must be >= 1", c->op->name, c->index);
	dim = side ? n : m;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, dim, dim, dim + pad, nb, bstride(dim + pad, dim, pad));
	cb_matrix(c, "B", KGB_ROLE_INOUT, dt, m, n, m + pad, nb, bstride(m + pad, n, pad));
	batch_setup(c, nb, names, arrs, ss, 2);
	add_alpha_beta(c, false);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", dim + pad);
	kgb_case_set_sym(c, "ldb", m + pad);
	kgb_case_set_sym(c, "side", side);
	kgb_case_set_sym(c, "uplo", uplo);
	kgb_case_set_sym(c, "trans", tr);
	kgb_case_set_sym(c, "diag", diag);
	cb_finish(c, (double)dim);
	return 0;
}

static void trsm_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	int side = (int)cb_sym(c, "side");
	cb_gen(c, rng, b);
	tri_condition(c, rng, b, "A", (int)cb_sym(c, "uplo"), side ? cb_sym(c, "n") : cb_sym(c, "m"));
}

/* Solve op(A) X = alpha B (side L) or X op(A) = alpha B (side R) in place of B for one
 * batch item, by substitution on T = op(A) (unit diagonal when diag = U). */
static void trsm_item(const cb_mat_t *A, const cb_mat_t *B, int side, int uplo, int tr, int diag, int64_t m,
                      int64_t n, double complex alpha)
{
	int64_t dim = side ? n : m;
	double complex *t = kgb_xmalloc((size_t)(dim * dim) * sizeof *t);
	bool lower;
	/* T(i, j) = op(A)(i, j), restricted to A's triangle */
	for (int64_t j = 0; j < dim; j++)
		for (int64_t i = 0; i < dim; i++) {
			int64_t si = tr ? j : i, sj = tr ? i : j;   /* element of A behind T(i, j) */
			bool in = uplo ? si <= sj : si >= sj;
			double complex v = in ? cb_m(A, si, sj) : 0;
			if (tr == 2)
				v = conj(v);
			if (i == j && diag)
				v = 1;
			t[j * dim + i] = v;
		}
	lower = (uplo == 0) != (tr != 0);
	if (side == 0) {
		/* each column x of X: T x = alpha b */
		for (int64_t col = 0; col < n; col++) {
			for (int64_t s = 0; s < m; s++) {
				int64_t i = lower ? s : m - 1 - s;
				double complex acc = alpha * cb_m(B, i, col);
				if (lower)
					for (int64_t p = 0; p < i; p++)
						acc -= t[p * dim + i] * cb_m(B, p, col);
				else
					for (int64_t p = i + 1; p < m; p++)
						acc -= t[p * dim + i] * cb_m(B, p, col);
				cb_mset(B, i, col, acc / t[i * dim + i]);
			}
		}
	} else {
		/* each row x of X: x T = alpha b, i.e. sum_p x[p] T(p, j) = alpha b[j] */
		for (int64_t row = 0; row < m; row++) {
			for (int64_t s = 0; s < n; s++) {
				int64_t j = lower ? n - 1 - s : s;
				double complex acc = alpha * cb_m(B, row, j);
				if (lower)
					for (int64_t p = j + 1; p < n; p++)
						acc -= cb_m(B, row, p) * t[j * dim + p];
				else
					for (int64_t p = 0; p < j; p++)
						acc -= cb_m(B, row, p) * t[j * dim + p];
				cb_mset(B, row, j, acc / t[j * dim + j]);
			}
		}
	}
	free(t);
}

static int trsm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n");
	int side = (int)cb_sym(c, "side"), uplo = (int)cb_sym(c, "uplo"), tr = (int)cb_sym(c, "trans"),
	    diag = (int)cb_sym(c, "diag");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im");
	for (int64_t bi = 0; bi < cb_nbatch(c); bi++) {
		cb_mat_t A = cb_mat(c, b, "A", bi), B = cb_mat(c, b, "B", bi);
		trsm_item(&A, &B, side, uplo, tr, diag, m, n, alpha);
	}
	return 0;
}

#define TRSM_SUMMARY                                                                                   \
	"solve op(A) X = alpha B (side L, A m x m) or X op(A) = alpha B (side R, A n x n) for X, which "   \
	"overwrites B; A triangular (uplo), only that triangle read, diag U: unit diagonal not read; "    \
	"op = N, T or C"

#define TRSM_GRIDS(dtn, trs, bigmn, ...)                                                              \
	{ .params = { { "dtype", dtn }, { "side", "L" }, { "uplo", "U" }, { "trans", "N" },              \
	              { "diag", "N" }, { "mn", "[7,5]" }, { "pad", "1" }, { "alpha", "1.5" }, ##__VA_ARGS__ } },  \
	{ .params = { { "dtype", dtn }, { "side", "L R" }, { "uplo", "L U" }, { "trans", trs },         \
	              { "diag", "N U" }, { "mn", "[19,13]" }, { "pad", "0 2" }, { "alpha", "1.5" }, ##__VA_ARGS__ } }, \
	{ .params = { { "dtype", dtn }, { "side", "L R" }, { "uplo", "L" }, { "trans", "N" },            \
	              { "diag", "N" }, { "mn", "[1,9] [9,1]" }, { "pad", "0" }, { "alpha", "-1" }, ##__VA_ARGS__ } }, \
	{ .params = { { "dtype", dtn }, { "side", "L" }, { "uplo", "U" }, { "trans", "N" },              \
	              { "diag", "N" }, { "mn", bigmn }, { "pad", "0" }, { "alpha", "1" }, ##__VA_ARGS__ } }

static const cb_op_t op_strsm = {
	.op = {
		.name = "cublasStrsm_v2",
		.source = "cublas",
		.category = "blas3-trsm",
		.dtypes = "f32",
		.datasets = KGB_DS_CUBLAS,
		.summary = TRSM_SUMMARY,
		.signature = "A:in B:inout side uplo trans diag alpha",
		.grids = { TRSM_GRIDS("f32", "N T", "[256,128]") },
		.setup = trsm_setup,
		.ref = trsm_ref,
		.inplace = true,
		.declared_cases = 96,
		.deviation = TRIM,
		.gen_inputs = trsm_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F32,
};

static const cb_op_t op_dtrsm_b = {
	.op = {
		.name = "cublasDtrsmBatched",
		.source = "cublas",
		.category = "blas3-trsm",
		.dtypes = "f64",
		.datasets = KGB_DS_CUBLAS,
		.summary = TRSM_SUMMARY " for every item i, A and B of item i at elements Aarray[i], Barray[i]",
		.signature = "A:in B:inout Aarray:in Barray:in side uplo trans diag alpha batch",
		.grids = { TRSM_GRIDS("f64", "N T", "[64,64]", { "batch", "4" }) },
		.setup = trsm_setup,
		.ref = trsm_ref,
		.inplace = true,
		.declared_cases = 108,
		.deviation = TRIM,
		.gen_inputs = trsm_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F64,
	.batch = CB_BATCHED,
};

static const cb_op_t op_ztrsm_b = {
	.op = {
		.name = "cublasZtrsmBatched",
		.source = "cublas",
		.category = "blas3-trsm",
		.dtypes = "c128",
		.datasets = KGB_DS_CUBLAS,
		.summary = TRSM_SUMMARY " for every item i, A and B of item i at elements Aarray[i], Barray[i]",
		.signature = "A:in B:inout Aarray:in Barray:in side uplo trans diag alpha batch",
		.grids = { TRSM_GRIDS("c128", "N T C", "[48,48]", { "batch", "4" }) },
		.setup = trsm_setup,
		.ref = trsm_ref,
		.inplace = true,
		.declared_cases = 108,
		.deviation = TRIM,
		.gen_inputs = trsm_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_C128,
	.batch = CB_BATCHED,
};

/* ---- geam ---- */

static int geam_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int ta, tb;
	int64_t m = 0, n = 0, pad = kgb_case_pint(c, "pad", 0);
	if ((ta = cb_trans(c, "transa", false, err, errlen)) < 0 || (tb = cb_trans(c, "transb", false, err, errlen)) < 0 ||
	    shape2(c, "mn", &m, &n, err, errlen) != 0)
		return -1;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, ta ? n : m, ta ? m : n, (ta ? n : m) + pad, 0, 0);
	cb_matrix(c, "B", KGB_ROLE_IN, dt, tb ? n : m, tb ? m : n, (tb ? n : m) + 2 * pad, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_OUT, dt, m, n, m + pad, 0, 0);
	add_alpha_beta(c, true);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", (ta ? n : m) + pad);
	kgb_case_set_sym(c, "ldb", (tb ? n : m) + 2 * pad);
	kgb_case_set_sym(c, "ldc", m + pad);
	kgb_case_set_sym(c, "transa", ta);
	kgb_case_set_sym(c, "transb", tb);
	cb_finish(c, 2);
	return 0;
}

static int geam_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n");
	int ta = (int)cb_sym(c, "transa"), tb = (int)cb_sym(c, "transb");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	cb_mat_t A = cb_mat(c, b, "A", 0), B = cb_mat(c, b, "B", 0), C = cb_mat(c, b, "C", 0);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++)
			cb_mset(&C, i, j, alpha * opm(&A, ta, i, j) + beta * opm(&B, tb, i, j));
	return 0;
}

static const cb_op_t op_sgeam = {
	.op = {
		.name = "cublasSgeam",
		.source = "cublas",
		.category = "blas3-geam",
		.dtypes = "f32",
		.datasets = KGB_DS_CUBLAS,
		.summary = "C = alpha * op(A) + beta * op(B), m x n, column-major; op = N or T",
		.signature = "A:in B:in C:out transa transb alpha beta",
		.grids = {
			{ .params = { { "dtype", "f32" }, { "transa", "N" }, { "transb", "T" }, { "mn", "[7,5]" },
			              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "-0.5" } } },
			{ .params = { { "dtype", "f32" }, { "transa", "N T" }, { "transb", "N T" },
			              { "mn", "[33,17] [1,40] [40,1]" }, { "pad", "0 3" }, { "alpha", "1.5" },
			              { "beta", "-0.5" } } },
			{ .params = { { "dtype", "f32" }, { "transa", "N T" }, { "transb", "N" }, { "mn", "[24,24]" },
			              { "pad", "0" }, { "alpha", "0 1" }, { "beta", "0 2" } } },
			{ .params = { { "dtype", "f32" }, { "transa", "N T" }, { "transb", "T" }, { "mn", "[256,256]" },
			              { "pad", "0" }, { "alpha", "1" }, { "beta", "1" } } },
		},
		.setup = geam_setup,
		.ref = geam_ref,
		.declared_cases = 108,
		.deviation = TRIM,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F32,
};

/* ---- dgmm ---- */

static int dgmm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int side;
	int64_t m = 0, n = 0, pad = kgb_case_pint(c, "pad", 0), incx = kgb_case_pint(c, "incx", 1);
	if ((side = cb_side(c, err, errlen)) < 0 || shape2(c, "mn", &m, &n, err, errlen) != 0)
		return -1;
	if (incx < 1)
		return kgb_err(err, errlen, "op %s case %u: incx = %lld must be >= 1", c->op->name, c->index,
		               (long long)incx);
	cb_matrix(c, "A", KGB_ROLE_IN, dt, m, n, m + pad, 0, 0);
	cb_vector(c, "x", KGB_ROLE_IN, dt, side ? n : m, incx, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_OUT, dt, m, n, m + pad, 0, 0);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", m + pad);
	kgb_case_set_sym(c, "ldc", m + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "side", side);
	cb_finish(c, 1);
	return 0;
}

static int dgmm_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n");
	int side = (int)cb_sym(c, "side");
	cb_mat_t A = cb_mat(c, b, "A", 0), C = cb_mat(c, b, "C", 0);
	cb_vec_t x = cb_vec(c, b, "x", side ? n : m, "incx", 0);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++)
			cb_mset(&C, i, j, cb_m(&A, i, j) * cb_v(&x, side ? j : i));
	return 0;
}

static const cb_op_t op_sdgmm = {
	.op = {
		.name = "cublasSdgmm",
		.source = "cublas",
		.category = "blas3-dgmm",
		.dtypes = "f32",
		.datasets = KGB_DS_CUBLAS,
		.summary = "C = A * diag(x) (side R, x of n elements) or diag(x) * A (side L, x of m elements), "
		           "x with increment incx",
		.signature = "A:in x:in C:out side",
		.grids = {
			{ .params = { { "dtype", "f32" }, { "side", "L R" }, { "mn", "[7,5]" }, { "incx", "1" },
			              { "pad", "1" } } },
			{ .params = { { "dtype", "f32" }, { "side", "L R" }, { "mn", "[33,17] [1,40]" }, { "incx", "1 3" },
			              { "pad", "2" } } },
			{ .params = { { "dtype", "f32" }, { "side", "L R" }, { "mn", "[256,256]" }, { "incx", "1" },
			              { "pad", "0" } } },
		},
		.setup = dgmm_setup,
		.ref = dgmm_ref,
		.declared_cases = 18,
		.deviation = NULL,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F32,
};

const kgb_op_t *const kgb_ops_cublas_blas3[] = {
	&op_cgemm.op, &op_cgemm_sb.op, &op_cgemm_sb64.op, &op_dgemm_b.op, &op_dgemm_sb.op, &op_dgemm_sb64.op,
	&op_hgemm_b.op, &op_hgemm_sb.op, &op_sgemm_b64.op, &op_sgemm_ex.op, &op_sgemm_sb.op, &op_zgemm_b.op,
	&op_zgemm_sb.op, &op_csymm.op, &op_ssyrk.op, &op_csyrkex.op, &op_strsm.op, &op_dtrsm_b.op, &op_ztrsm_b.op,
	&op_sgeam.op, &op_sdgmm.op, NULL,
};
