/* cuBLAS level 2: gemv (single, batched with pointer arrays, strided-batched, _64),
 * ger / geru / gerc, symv, sbmv, syr2, tbmv, trsv. Semantics, layouts and the case
 * grids: docs/operators.md, "cuBLAS". References in double (complex double). */
#include <math.h>
#include <string.h>

#include "cublas_common.h"
#include "ops.h"
#include "util.h"

#define TRIM "grid trimmed to the modes, edges and one large size (docs/operators.md)"

static int64_t inc_param(const kgb_case_t *c, const char *name, bool allow_neg, char *err, size_t errlen,
                         int *bad)
{
	int64_t v = kgb_case_pint(c, name, 1);
	if (v == 0 || (!allow_neg && v < 0)) {
		*bad = 1;
		kgb_err(err, errlen, "op %s case %u: %s = %lld must be %s", c->op->name, c->index, name, (long long)v,
		        allow_neg ? "non-zero" : ">= 1");
	}
	return v;
}

static int64_t iabs64(int64_t v)
{
	return v < 0 ? -v : v;
}

/* Batch stride of a vector of n elements, increment inc, with a gap of 3 elements. */
static int64_t vstride(int64_t n, int64_t inc)
{
	return (n - 1) * iabs64(inc) + 1 + 3;
}

static int dim_param(const kgb_case_t *c, const char *name, int64_t *v, char *err, size_t errlen)
{
	*v = kgb_case_pint(c, name, 0);
	if (*v < 1)
		return kgb_err(err, errlen, "op %s case %u: %s = %lld must be >= 1", c->op->name, c->index, name,
		               (long long)*v);
	return 0;
}

static void add_ab(kgb_case_t *c, bool with_beta)
{
	double a = kgb_case_pfloat(c, "alpha", 1.0), b = kgb_case_pfloat(c, "beta", 0.0);
	cb_add_scalar(c, "alpha", "alpha_im", a, a != 0 ? 0.5 : 0);
	if (with_beta)
		cb_add_scalar(c, "beta", "beta_im", b, b != 0 ? -0.25 : 0);
}

/* y := alpha * s + beta * y (beta = 0: y not read). */
static double complex axpby(double complex alpha, double complex s, double complex beta, double complex y)
{
	return alpha * s + (beta == 0 ? 0 : beta * y);
}

/* ---- gemv ---- */

static int gemv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	static const char *const names[] = { "A", "x", "y" }, *const arrs[] = { "Aarray", "xarray", "yarray" },
	                         *const ss[] = { "strideA", "stridex", "stridey" };
	kgb_dtype_t dt = cb_dtype(c);
	bool cx = kgb_dtype_is_complex(dt), single = CB_DEF(c)->batch == CB_SINGLE;
	int tr, bad = 0;
	int64_t m, n, pad = kgb_case_pint(c, "pad", 0), nb = 0, lx, ly, incx, incy;
	if ((tr = cb_trans(c, "trans", cx, err, errlen)) < 0 || dim_param(c, "m", &m, err, errlen) ||
	    dim_param(c, "n", &n, err, errlen))
		return -1;
	incx = inc_param(c, "incx", single, err, errlen, &bad);
	incy = inc_param(c, "incy", single, err, errlen, &bad);
	if (bad)
		return -1;
	if (!single && (nb = kgb_case_pint(c, "batch", 0)) < 1)
		return kgb_err(err, errlen, "op %s case %u: batch must be >= 1", c->op->name, c->index);
	lx = tr ? m : n;
	ly = tr ? n : m;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, m, n, m + pad, nb, (m + pad) * n + (pad ? 5 : 0));
	cb_vector(c, "x", KGB_ROLE_IN, dt, lx, incx, nb, vstride(lx, incx));
	cb_vector(c, "y", KGB_ROLE_INOUT, dt, ly, incy, nb, vstride(ly, incy));
	if (!single) {
		kgb_case_set_sym(c, "batch", nb);
		for (int i = 0; i < 3; i++)
			cb_batch_extras(c, names[i], arrs[i], ss[i]);
	}
	add_ab(c, true);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", m + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "incy", incy);
	kgb_case_set_sym(c, "trans", tr);
	cb_finish(c, (double)lx);
	return 0;
}

static int gemv_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n");
	int tr = (int)cb_sym(c, "trans");
	int64_t lx = tr ? m : n, ly = tr ? n : m;
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	for (int64_t bi = 0; bi < cb_nbatch(c); bi++) {
		cb_mat_t A = cb_mat(c, b, "A", bi);
		cb_vec_t x = cb_vec(c, b, "x", lx, "incx", bi), y = cb_vec(c, b, "y", ly, "incy", bi);
		for (int64_t i = 0; i < ly; i++) {
			double complex s = 0;
			for (int64_t j = 0; j < lx; j++) {
				double complex a = tr == 0 ? cb_m(&A, i, j) : cb_m(&A, j, i);
				s += (tr == 2 ? conj(a) : a) * cb_v(&x, j);
			}
			cb_vset(&y, i, axpby(alpha, s, beta, cb_v(&y, i)));
		}
	}
	return 0;
}

#define GEMV_SUMMARY                                                                                  \
	"y = alpha * op(A) * x + beta * y, A m x n column-major, op = N, T or C; x and y with increments " \
	"incx and incy (negative: walked backwards); beta = 0: y not read (it holds NaN)"

#define GEMV_OP(var, nm, dty, dts, bmode, is64, summ, sig, ncases, ...)                                 \
	static const cb_op_t var = {                                                                   \
		.op = {                                                                                \
			.name = nm,                                                                    \
			.source = "cublas",                                                            \
			.category = "blas2-gemv",                                                      \
			.dtypes = dts,                                                                 \
			.datasets = KGB_DS_CUBLAS,                                                     \
			.summary = summ,                                                               \
			.signature = sig,                                                              \
			.grids = { __VA_ARGS__ },                                                      \
			.setup = gemv_setup,                                                           \
			.ref = gemv_ref,                                                               \
			.inplace = true,                                                               \
			.declared_cases = ncases,                                                      \
			.deviation = TRIM,                                                             \
			.gen_inputs = cb_gen,                                                          \
			.smoke_grids = 1,                                                              \
		},                                                                                     \
		.dt = dty,                                                                             \
		.batch = bmode,                                                                        \
		.i64 = is64,                                                                           \
	}

#define GEMV1_GRIDS(dtn, trs)                                                                           \
	{ .params = { { "dtype", dtn }, { "trans", "N" }, { "m", "7" }, { "n", "5" }, { "incx", "1" },     \
	              { "incy", "1" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },        \
	{ .params = { { "dtype", dtn }, { "trans", trs }, { "m", "1 37" }, { "n", "29" }, { "incx", "1 -2" }, \
	              { "incy", "1 3 -1" }, { "pad", "0 2" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } }, \
	{ .params = { { "dtype", dtn }, { "trans", trs }, { "m", "512" }, { "n", "512" }, { "incx", "1" }, \
	              { "incy", "1" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } }

#define GEMVB_GRIDS(dtn, trs)                                                                           \
	{ .params = { { "dtype", dtn }, { "trans", "N" }, { "m", "7" }, { "n", "5" }, { "incx", "1" },     \
	              { "incy", "1" }, { "batch", "4" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } }, \
	{ .params = { { "dtype", dtn }, { "trans", trs }, { "m", "1 23" }, { "n", "19" }, { "incx", "1 2" }, \
	              { "incy", "1 3" }, { "batch", "5" }, { "pad", "2" }, { "alpha", "1.5" },            \
	              { "beta", "0 0.5" } } },                                                            \
	{ .params = { { "dtype", dtn }, { "trans", trs }, { "m", "128" }, { "n", "128" }, { "incx", "1" },  \
	              { "incy", "1" }, { "batch", "16" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } }

#define BSIG "A:in x:in y:inout Aarray:in xarray:in yarray:in trans alpha beta batch"
#define SSIG "A:in x:in y:inout strideA stridex stridey trans alpha beta batch"

GEMV_OP(op_cgemv, "cublasCgemv_v2", KGB_DT_C64, "c64", CB_SINGLE, false, GEMV_SUMMARY,
        "A:in x:in y:inout trans alpha beta", 1152, GEMV1_GRIDS("c64", "N T C"));
GEMV_OP(op_dgemv, "cublasDgemv_v2", KGB_DT_F64, "f64", CB_SINGLE, false, GEMV_SUMMARY,
        "A:in x:in y:inout trans alpha beta", 30,
        { .params = { { "dtype", "f64" }, { "trans", "N" }, { "m", "7" }, { "n", "5" }, { "incx", "1" },
                      { "incy", "1" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },
        { .params = { { "dtype", "f64" }, { "trans", "N T" }, { "m", "1 37" }, { "n", "29" },
                      { "incx", "1 -2" }, { "incy", "3" }, { "pad", "2" }, { "alpha", "1.5" },
                      { "beta", "0 0.5" } } },
        { .params = { { "dtype", "f64" }, { "trans", "N T" }, { "m", "512" }, { "n", "512" }, { "incx", "1" },
                      { "incy", "1" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } });
GEMV_OP(op_cgemv_b64, "cublasCgemvBatched_64", KGB_DT_C64, "c64", CB_BATCHED, true,
        GEMV_SUMMARY " for every item i, A, x, y of item i at elements Aarray[i], xarray[i], yarray[i]; "
        "64-bit integer arguments", BSIG, 90, GEMVB_GRIDS("c64", "N T C"));
GEMV_OP(op_dgemv_b, "cublasDgemvBatched", KGB_DT_F64, "f64", CB_BATCHED, false,
        GEMV_SUMMARY " for every item, at the offsets of the arrays", BSIG, 90, GEMVB_GRIDS("f64", "N T"));
GEMV_OP(op_sgemv_b, "cublasSgemvBatched", KGB_DT_F32, "f32", CB_BATCHED, false,
        GEMV_SUMMARY " for every item, at the offsets of the arrays", BSIG, 11664, GEMVB_GRIDS("f32", "N T"));
GEMV_OP(op_zgemv_b, "cublasZgemvBatched", KGB_DT_C128, "c128", CB_BATCHED, false,
        GEMV_SUMMARY " for every item, at the offsets of the arrays", BSIG, 90, GEMVB_GRIDS("c128", "N T C"));
GEMV_OP(op_cgemv_sb, "cublasCgemvStridedBatched", KGB_DT_C64, "c64", CB_STRIDED, false,
        GEMV_SUMMARY " for every item of the batch (strideA/x/y elements apart)", SSIG, 432,
        GEMVB_GRIDS("c64", "N T C"));
GEMV_OP(op_dgemv_sb, "cublasDgemvStridedBatched", KGB_DT_F64, "f64", CB_STRIDED, false,
        GEMV_SUMMARY " for every item of the batch", SSIG, 432, GEMVB_GRIDS("f64", "N T"));
GEMV_OP(op_sgemv_sb, "cublasSgemvStridedBatched", KGB_DT_F32, "f32", CB_STRIDED, false,
        GEMV_SUMMARY " for every item of the batch", SSIG, 432, GEMVB_GRIDS("f32", "N T"));
GEMV_OP(op_zgemv_sb, "cublasZgemvStridedBatched", KGB_DT_C128, "c128", CB_STRIDED, false,
        GEMV_SUMMARY " for every item of the batch", SSIG, 432, GEMVB_GRIDS("c128", "N T C"));

/* ---- ger / geru / gerc ---- */

static int ger_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int bad = 0;
	int64_t m, n, pad = kgb_case_pint(c, "pad", 0), incx, incy;
	if (dim_param(c, "m", &m, err, errlen) || dim_param(c, "n", &n, err, errlen))
		return -1;
	incx = inc_param(c, "incx", true, err, errlen, &bad);
	incy = inc_param(c, "incy", true, err, errlen, &bad);
	if (bad)
		return -1;
	cb_vector(c, "x", KGB_ROLE_IN, dt, m, incx, 0, 0);
	cb_vector(c, "y", KGB_ROLE_IN, dt, n, incy, 0, 0);
	cb_matrix(c, "A", KGB_ROLE_INOUT, dt, m, n, m + pad, 0, 0);
	add_ab(c, false);
	kgb_case_set_sym(c, "m", m);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", m + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "incy", incy);
	cb_finish(c, 2);
	return 0;
}

static int ger_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t m = cb_sym(c, "m"), n = cb_sym(c, "n");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", m, "incx", 0), y = cb_vec(c, b, "y", n, "incy", 0);
	for (int64_t j = 0; j < n; j++) {
		double complex yj = CB_DEF(c)->conj ? conj(cb_v(&y, j)) : cb_v(&y, j);
		for (int64_t i = 0; i < m; i++)
			cb_mset(&A, i, j, cb_m(&A, i, j) + alpha * cb_v(&x, i) * yj);
	}
	return 0;
}

#define GER_GRIDS(dtn)                                                                                  \
	{ .params = { { "dtype", dtn }, { "m", "7" }, { "n", "5" }, { "incx", "1" }, { "incy", "1" },     \
	              { "pad", "1" }, { "alpha", "1.5" } } },                                             \
	{ .params = { { "dtype", dtn }, { "m", "1 37" }, { "n", "1 29" }, { "incx", "1 2 -1" },            \
	              { "incy", "1 -3" }, { "pad", "0 2" }, { "alpha", "1.5" } } },                         \
	{ .params = { { "dtype", dtn }, { "m", "256" }, { "n", "256" }, { "incx", "1" }, { "incy", "1" }, \
	              { "pad", "0" }, { "alpha", "1 -0.5" } } }

#define GER_OP(var, nm, cat, dty, dts, cj, summ, ncases, dev)                                           \
	static const cb_op_t var = {                                                                   \
		.op = {                                                                                \
			.name = nm,                                                                    \
			.source = "cublas",                                                            \
			.category = cat,                                                               \
			.dtypes = dts,                                                                 \
			.datasets = KGB_DS_CUBLAS,                                                     \
			.summary = summ,                                                               \
			.signature = "x:in y:in A:inout alpha",                                        \
			.grids = { GER_GRIDS(dts) },                                                   \
			.setup = ger_setup,                                                            \
			.ref = ger_ref,                                                                \
			.inplace = true,                                                               \
			.declared_cases = ncases,                                                      \
			.deviation = dev,                                                              \
			.smoke_grids = 1,                                                              \
		},                                                                                     \
		.dt = dty,                                                                             \
		.conj = cj,                                                                            \
	}

GER_OP(op_sger, "cublasSger_v2", "blas2-ger", KGB_DT_F32, "f32", false,
       "A = alpha * x * y^T + A, A m x n column-major, x and y with increments (negative: backwards)", 7128,
       TRIM);
GER_OP(op_cgeru, "cublasCgeru_v2", "blas2-geru", KGB_DT_C64, "c64", false,
       "A = alpha * x * y^T + A (no conjugation), A m x n column-major, increments may be negative", 60, TRIM);
GER_OP(op_zgerc, "cublasZgerc_v2", "blas2-gerc", KGB_DT_C128, "c128", true,
       "A = alpha * x * y^H + A (y conjugated), A m x n column-major, increments may be negative", 60, TRIM);

/* ---- symv ---- */

/* Element (i, j) of the symmetric matrix whose uplo triangle A holds. */
static double complex sym_at(const cb_mat_t *A, int uplo, int64_t i, int64_t j)
{
	bool stored = uplo ? i <= j : i >= j;
	return stored ? cb_m(A, i, j) : cb_m(A, j, i);
}

static int symv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int uplo, bad = 0;
	int64_t n, pad = kgb_case_pint(c, "pad", 0), incx, incy;
	if ((uplo = cb_uplo(c, err, errlen)) < 0 || dim_param(c, "n", &n, err, errlen))
		return -1;
	incx = inc_param(c, "incx", true, err, errlen, &bad);
	incy = inc_param(c, "incy", true, err, errlen, &bad);
	if (bad)
		return -1;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, n, n, n + pad, 0, 0);
	cb_vector(c, "x", KGB_ROLE_IN, dt, n, incx, 0, 0);
	cb_vector(c, "y", KGB_ROLE_INOUT, dt, n, incy, 0, 0);
	add_ab(c, true);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", n + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "incy", incy);
	kgb_case_set_sym(c, "uplo", uplo);
	cb_finish(c, (double)n);
	return 0;
}

static int symv_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n");
	int uplo = (int)cb_sym(c, "uplo");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0), y = cb_vec(c, b, "y", n, "incy", 0);
	for (int64_t i = 0; i < n; i++) {
		double complex s = 0;
		for (int64_t j = 0; j < n; j++)
			s += sym_at(&A, uplo, i, j) * cb_v(&x, j);
		cb_vset(&y, i, axpby(alpha, s, beta, cb_v(&y, i)));
	}
	return 0;
}

static const cb_op_t op_csymv = {
	.op = {
		.name = "cublasCsymv_v2",
		.source = "cublas",
		.category = "blas2-symv",
		.dtypes = "c64",
		.datasets = KGB_DS_CUBLAS,
		.summary = "y = alpha * A * x + beta * y, A n x n symmetric (not Hermitian), only its uplo "
		           "triangle read; increments may be negative; beta = 0: y not read",
		.signature = "A:in x:in y:inout uplo alpha beta",
		.grids = {
			{ .params = { { "dtype", "c64" }, { "uplo", "U" }, { "n", "7" }, { "incx", "1" }, { "incy", "1" },
			              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
			{ .params = { { "dtype", "c64" }, { "uplo", "L U" }, { "n", "1 37" }, { "incx", "1 -2" },
			              { "incy", "1 3" }, { "pad", "2" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },
			{ .params = { { "dtype", "c64" }, { "uplo", "L U" }, { "n", "512" }, { "incx", "1" },
			              { "incy", "1" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } },
		},
		.setup = symv_setup,
		.ref = symv_ref,
		.inplace = true,
		.declared_cases = 60,
		.deviation = TRIM,
		.gen_inputs = cb_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_C64,
};

/* ---- band matrices (sbmv, tbmv) ----
 * A band matrix of n columns and k off-diagonals is stored in a (k + 1) x n array:
 * upper: a(i, j) at row k + i - j of column j, for max(0, j - k) <= i <= j;
 * lower: a(i, j) at row i - j of column j, for j <= i <= min(n - 1, j + k). */

static bool band_has(int uplo, int64_t k, int64_t i, int64_t j)
{
	return uplo ? (i <= j && j - i <= k) : (i >= j && i - j <= k);
}

static double complex band_at(const cb_mat_t *A, int uplo, int64_t k, int64_t i, int64_t j)
{
	return uplo ? cb_m(A, k + i - j, j) : cb_m(A, i - j, j);
}

static int sbmv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int uplo, bad = 0;
	int64_t n, k = kgb_case_pint(c, "k", 0), pad = kgb_case_pint(c, "pad", 0), incx, incy;
	if ((uplo = cb_uplo(c, err, errlen)) < 0 || dim_param(c, "n", &n, err, errlen))
		return -1;
	if (k < 0)
		return kgb_err(err, errlen, "op %s case %u: k = %lld must be >= 0", c->op->name, c->index, (long long)k);
	incx = inc_param(c, "incx", true, err, errlen, &bad);
	incy = inc_param(c, "incy", true, err, errlen, &bad);
	if (bad)
		return -1;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, k + 1, n, k + 1 + pad, 0, 0);
	cb_vector(c, "x", KGB_ROLE_IN, dt, n, incx, 0, 0);
	cb_vector(c, "y", KGB_ROLE_INOUT, dt, n, incy, 0, 0);
	add_ab(c, true);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "k", k);
	kgb_case_set_sym(c, "lda", k + 1 + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "incy", incy);
	kgb_case_set_sym(c, "uplo", uplo);
	cb_finish(c, (double)(2 * k + 1));
	return 0;
}

static int sbmv_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n"), k = cb_sym(c, "k");
	int uplo = (int)cb_sym(c, "uplo");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0), y = cb_vec(c, b, "y", n, "incy", 0);
	for (int64_t i = 0; i < n; i++) {
		double complex s = 0;
		for (int64_t j = KGB_MAX(0, i - k); j <= KGB_MIN(n - 1, i + k); j++) {
			double complex a = band_has(uplo, k, i, j) ? band_at(&A, uplo, k, i, j) : band_at(&A, uplo, k, j, i);
			s += a * cb_v(&x, j);
		}
		cb_vset(&y, i, axpby(alpha, s, beta, cb_v(&y, i)));
	}
	return 0;
}

static const cb_op_t op_dsbmv = {
	.op = {
		.name = "cublasDsbmv_v2",
		.source = "cublas",
		.category = "blas2-sbmv",
		.dtypes = "f64",
		.datasets = KGB_DS_CUBLAS,
		.summary = "y = alpha * A * x + beta * y, A n x n symmetric band with k off-diagonals, stored "
		           "as its uplo band in a (k+1) x n array (lda >= k+1); beta = 0: y not read",
		.signature = "A:in x:in y:inout uplo k alpha beta",
		.grids = {
			{ .params = { { "dtype", "f64" }, { "uplo", "U" }, { "n", "7" }, { "k", "2" }, { "incx", "1" },
			              { "incy", "1" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
			{ .params = { { "dtype", "f64" }, { "uplo", "L U" }, { "n", "1 37" }, { "k", "0 3" },
			              { "incx", "1 -2" }, { "incy", "1" }, { "pad", "2" }, { "alpha", "1.5" },
			              { "beta", "0 0.5" } } },
			{ .params = { { "dtype", "f64" }, { "uplo", "L U" }, { "n", "16384" }, { "k", "16" }, { "incx", "1" },
			              { "incy", "1" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } },
		},
		.setup = sbmv_setup,
		.ref = sbmv_ref,
		.inplace = true,
		.declared_cases = 60,
		.deviation = TRIM,
		.gen_inputs = cb_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F64,
};

/* ---- syr2 ---- */

static int syr2_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int uplo, bad = 0;
	int64_t n, pad = kgb_case_pint(c, "pad", 0), incx, incy;
	if ((uplo = cb_uplo(c, err, errlen)) < 0 || dim_param(c, "n", &n, err, errlen))
		return -1;
	incx = inc_param(c, "incx", true, err, errlen, &bad);
	incy = inc_param(c, "incy", true, err, errlen, &bad);
	if (bad)
		return -1;
	cb_vector(c, "x", KGB_ROLE_IN, dt, n, incx, 0, 0);
	cb_vector(c, "y", KGB_ROLE_IN, dt, n, incy, 0, 0);
	cb_matrix(c, "A", KGB_ROLE_INOUT, dt, n, n, n + pad, 0, 0);
	add_ab(c, false);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", n + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "incy", incy);
	kgb_case_set_sym(c, "uplo", uplo);
	cb_finish(c, 3);
	return 0;
}

static int syr2_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n");
	int uplo = (int)cb_sym(c, "uplo");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0), y = cb_vec(c, b, "y", n, "incy", 0);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < n; i++)
			if (uplo ? i <= j : i >= j)
				cb_mset(&A, i, j,
				        cb_m(&A, i, j) + alpha * (cb_v(&x, i) * cb_v(&y, j) + cb_v(&y, i) * cb_v(&x, j)));
	return 0;
}

static const cb_op_t op_dsyr2 = {
	.op = {
		.name = "cublasDsyr2_v2",
		.source = "cublas",
		.category = "blas2-syr2",
		.dtypes = "f64",
		.datasets = KGB_DS_CUBLAS,
		.summary = "A = alpha * (x * y^T + y * x^T) + A on the uplo triangle of A only (the other "
		           "triangle is left as it is); increments may be negative",
		.signature = "x:in y:in A:inout uplo alpha",
		.grids = {
			{ .params = { { "dtype", "f64" }, { "uplo", "U" }, { "n", "7" }, { "incx", "1" }, { "incy", "1" },
			              { "pad", "1" }, { "alpha", "1.5" } } },
			{ .params = { { "dtype", "f64" }, { "uplo", "L U" }, { "n", "1 37" }, { "incx", "1 -2" },
			              { "incy", "1 3" }, { "pad", "0 2" }, { "alpha", "1.5" } } },
			{ .params = { { "dtype", "f64" }, { "uplo", "L U" }, { "n", "256" }, { "incx", "1" },
			              { "incy", "1" }, { "pad", "0" }, { "alpha", "1" } } },
		},
		.setup = syr2_setup,
		.ref = syr2_ref,
		.inplace = true,
		.declared_cases = 60,
		.deviation = TRIM,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F64,
};

/* ---- tbmv ---- */

static int tbmv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int uplo, tr, diag, bad = 0;
	int64_t n, k = kgb_case_pint(c, "k", 0), pad = kgb_case_pint(c, "pad", 0), incx;
	if ((uplo = cb_uplo(c, err, errlen)) < 0 || (tr = cb_trans(c, "trans", false, err, errlen)) < 0 ||
	    (diag = cb_diag(c, err, errlen)) < 0 || dim_param(c, "n", &n, err, errlen))
		return -1;
	if (k < 0)
		return kgb_err(err, errlen, "op %s case %u: k = %lld must be >= 0", c->op->name, c->index, (long long)k);
	incx = inc_param(c, "incx", true, err, errlen, &bad);
	if (bad)
		return -1;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, k + 1, n, k + 1 + pad, 0, 0);
	cb_vector(c, "x", KGB_ROLE_INOUT, dt, n, incx, 0, 0);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "k", k);
	kgb_case_set_sym(c, "lda", k + 1 + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "uplo", uplo);
	kgb_case_set_sym(c, "trans", tr);
	kgb_case_set_sym(c, "diag", diag);
	cb_finish(c, (double)(k + 1));
	return 0;
}

static int tbmv_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n"), k = cb_sym(c, "k");
	int uplo = (int)cb_sym(c, "uplo"), tr = (int)cb_sym(c, "trans"), diag = (int)cb_sym(c, "diag");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0);
	double complex *in = kgb_xmalloc((size_t)n * sizeof *in);
	for (int64_t i = 0; i < n; i++)
		in[i] = cb_v(&x, i);
	for (int64_t i = 0; i < n; i++) {
		double complex s = 0;
		for (int64_t j = KGB_MAX(0, i - k); j <= KGB_MIN(n - 1, i + k); j++) {
			int64_t r = tr ? j : i, q = tr ? i : j;   /* op(A)(i, j) = a(r, q) */
			if (!band_has(uplo, k, r, q))
				continue;
			s += (r == q && diag ? 1.0 : band_at(&A, uplo, k, r, q)) * in[j];
		}
		cb_vset(&x, i, s);
	}
	free(in);
	return 0;
}

static const cb_op_t op_stbmv = {
	.op = {
		.name = "cublasStbmv_v2",
		.source = "cublas",
		.category = "blas2-tbmv",
		.dtypes = "f32",
		.datasets = KGB_DS_CUBLAS,
		.summary = "x = op(A) * x, A n x n triangular band (uplo) with k off-diagonals in a (k+1) x n "
		           "array; op = N or T; diag U: unit diagonal, not read; x in place, increment incx",
		.signature = "A:in x:inout uplo trans diag k",
		.grids = {
			{ .params = { { "dtype", "f32" }, { "uplo", "U" }, { "trans", "N" }, { "diag", "N" }, { "n", "7" },
			              { "k", "2" }, { "incx", "1" }, { "pad", "1" } } },
			{ .params = { { "dtype", "f32" }, { "uplo", "L U" }, { "trans", "N T" }, { "diag", "N U" },
			              { "n", "1 37" }, { "k", "0 3" }, { "incx", "1 -2" }, { "pad", "0 2" } } },
			{ .params = { { "dtype", "f32" }, { "uplo", "L U" }, { "trans", "N" }, { "diag", "N" },
			              { "n", "8192" }, { "k", "32" }, { "incx", "1" }, { "pad", "0" } } },
		},
		.setup = tbmv_setup,
		.ref = tbmv_ref,
		.inplace = true,
		.declared_cases = 192,
		.deviation = TRIM,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F32,
};

/* ---- trsv ---- */

static int trsv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int uplo, tr, diag, bad = 0;
	int64_t n, pad = kgb_case_pint(c, "pad", 0), incx;
	if ((uplo = cb_uplo(c, err, errlen)) < 0 || (tr = cb_trans(c, "trans", false, err, errlen)) < 0 ||
	    (diag = cb_diag(c, err, errlen)) < 0 || dim_param(c, "n", &n, err, errlen))
		return -1;
	incx = inc_param(c, "incx", true, err, errlen, &bad);
	if (bad)
		return -1;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, n, n, n + pad, 0, 0);
	cb_vector(c, "x", KGB_ROLE_INOUT, dt, n, incx, 0, 0);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "lda", n + pad);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "uplo", uplo);
	kgb_case_set_sym(c, "trans", tr);
	kgb_case_set_sym(c, "diag", diag);
	cb_finish(c, (double)n);
	return 0;
}

/* Well-conditioned triangle (see cublas_blas3.c, tri_condition): diagonal magnitude
 * in [1, 2) ([2.5, 3.5) when diag = U: it must not be read), off-diagonal elements of
 * the triangle in [-1, 1) / n. */
static void trsv_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n");
	double dlo = cb_sym(c, "diag") ? 2.5 : 1.0;
	int uplo = (int)cb_sym(c, "uplo");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < n; i++) {
			if (uplo ? i > j : i < j)
				continue;
			if (i == j)
				cb_mset(&A, i, j, (dlo + kgb_rng_uniform(rng)) * (kgb_rng_uniform(rng) < 0.5 ? -1 : 1));
			else
				cb_mset(&A, i, j, (2 * kgb_rng_uniform(rng) - 1) / (double)n);
		}
}

static int trsv_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = cb_sym(c, "n");
	int uplo = (int)cb_sym(c, "uplo"), tr = (int)cb_sym(c, "trans"), diag = (int)cb_sym(c, "diag");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0);
	bool lower = (uplo == 0) != (tr != 0);
	/* T = op(A): T(i, j) = a(tr ? j : i, tr ? i : j) */
	for (int64_t s = 0; s < n; s++) {
		int64_t i = lower ? s : n - 1 - s;
		double complex acc = cb_v(&x, i);
		int64_t lo = lower ? 0 : i + 1, hi = lower ? i : n;
		for (int64_t p = lo; p < hi; p++)
			acc -= (tr ? cb_m(&A, p, i) : cb_m(&A, i, p)) * cb_v(&x, p);
		cb_vset(&x, i, diag ? acc : acc / cb_m(&A, i, i));
	}
	return 0;
}

static const cb_op_t op_strsv = {
	.op = {
		.name = "cublasStrsv_v2",
		.source = "cublas",
		.category = "blas2-trsv",
		.dtypes = "f32",
		.datasets = KGB_DS_CUBLAS,
		.summary = "solve op(A) * x = b in place of x (b on entry), A n x n triangular (uplo), only that "
		           "triangle read; op = N or T; diag U: unit diagonal, not read; increment incx",
		.signature = "A:in x:inout uplo trans diag",
		.grids = {
			{ .params = { { "dtype", "f32" }, { "uplo", "U" }, { "trans", "N" }, { "diag", "N" }, { "n", "7" },
			              { "incx", "1" }, { "pad", "1" } } },
			{ .params = { { "dtype", "f32" }, { "uplo", "L U" }, { "trans", "N T" }, { "diag", "N U" },
			              { "n", "1 37" }, { "incx", "1 -2" }, { "pad", "0 2" } } },
			{ .params = { { "dtype", "f32" }, { "uplo", "L U" }, { "trans", "N" }, { "diag", "N" },
			              { "n", "512" }, { "incx", "1" }, { "pad", "0" } } },
		},
		.setup = trsv_setup,
		.ref = trsv_ref,
		.inplace = true,
		.declared_cases = 96,
		.deviation = TRIM,
		.gen_inputs = trsv_gen,
		.smoke_grids = 1,
	},
	.dt = KGB_DT_F32,
};

const kgb_op_t *const kgb_ops_cublas_blas2[] = {
	&op_cgemv.op, &op_dgemv.op, &op_cgemv_b64.op, &op_dgemv_b.op, &op_sgemv_b.op, &op_zgemv_b.op,
	&op_cgemv_sb.op, &op_dgemv_sb.op, &op_sgemv_sb.op, &op_zgemv_sb.op, &op_sger.op, &op_cgeru.op,
	&op_zgerc.op, &op_csymv.op, &op_dsbmv.op, &op_dsyr2.op, &op_stbmv.op, &op_strsv.op, NULL,
};
