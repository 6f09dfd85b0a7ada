/* cuBLAS level 2: gemv (single, batched with pointer arrays, strided-batched, _64),
 * ger / geru / gerc, symv, sbmv, syr2, tbmv, trsv. Semantics, layouts and the case
 * grids: docs/operators.md, "cuBLAS". References in double (complex double). One setup
 * per family (gemv; the rank-2 updates ger and syr2; the symmetric products symv and
 * sbmv; the triangular tbmv and trsv); the layout of A (general, triangle, band) and the
 * element type are the row's, in the table at the end. */
#include <math.h>
#include <string.h>

#include "cublas_common.h"
#include "ops.h"
#include "util.h"

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

/* The parameters of a level-2 case. l2_parse reads the modes and sizes in `want` (n
 * and incx always), with the increments non-zero, and positive unless neg. */
enum { P_TRANS = 1, P_TRANS_C = 2, P_UPLO = 4, P_DIAG = 8, P_M = 16, P_K = 32, P_INCY = 64 };

typedef struct l2 {
	kgb_dtype_t dt;
	int tr, uplo, diag;
	int64_t m, n, k, pad, incx, incy;
} l2_t;

static int l2_parse(const kgb_case_t *c, unsigned want, bool neg, l2_t *a, char *err, size_t errlen)
{
	int bad = 0;
	bool cx;
	*a = (l2_t){ .dt = cb_dtype(c), .pad = kgb_case_pint(c, "pad", 0), .k = kgb_case_pint(c, "k", 0) };
	cx = (want & P_TRANS_C) && kgb_dtype_is_complex(a->dt);
	if (((want & P_UPLO) && (a->uplo = cb_uplo(c, err, errlen)) < 0) ||
	    ((want & P_TRANS) && (a->tr = cb_trans(c, "trans", cx, err, errlen)) < 0) ||
	    ((want & P_DIAG) && (a->diag = cb_diag(c, err, errlen)) < 0) ||
	    ((want & P_M) && dim_param(c, "m", &a->m, err, errlen)) || dim_param(c, "n", &a->n, err, errlen))
		return -1;
	if ((want & P_K) && a->k < 0)
		return kgb_err(err, errlen, "op %s case %u: k = %lld must be >= 0", c->op->name, c->index,
		               (long long)a->k);
	a->incx = inc_param(c, "incx", neg, err, errlen, &bad);
	if (want & P_INCY)
		a->incy = inc_param(c, "incy", neg, err, errlen, &bad);
	return bad ? -1 : 0;
}

/* A of a symmetric or triangular routine, n x n or its band in (k + 1) x n, and the
 * symbols n, k (band) and lda. */
static void l2_square(kgb_case_t *c, const l2_t *a, bool band)
{
	int64_t rows = band ? a->k + 1 : a->n;
	cb_matrix(c, "A", KGB_ROLE_IN, a->dt, rows, a->n, rows + a->pad, 0, 0);
	kgb_case_set_sym(c, "n", a->n);
	if (band)
		kgb_case_set_sym(c, "k", a->k);
	kgb_case_set_sym(c, "lda", rows + a->pad);
}

/* y := alpha * s + beta * y (beta = 0: y not read). */
static double complex axpby(double complex alpha, double complex s, double complex beta, double complex y)
{
	return alpha * s + (beta == 0 ? 0 : beta * y);
}

/* ---- gemv ---- */

static int gemv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	bool single = CB_DEF(c)->batch == CB_SINGLE;
	int64_t nb, lx, ly, lda;
	l2_t a;
	if (l2_parse(c, P_TRANS | P_TRANS_C | P_M | P_INCY, single, &a, err, errlen) ||
	    (nb = cb_batch_param(c, err, errlen)) < 0)
		return -1;
	lx = a.tr ? a.m : a.n;
	ly = a.tr ? a.n : a.m;
	lda = a.m + a.pad;
	cb_matrix(c, "A", KGB_ROLE_IN, a.dt, a.m, a.n, lda, nb, lda * a.n + (a.pad ? 5 : 0));
	cb_vector(c, "x", KGB_ROLE_IN, a.dt, lx, a.incx, nb, vstride(lx, a.incx));
	cb_vector(c, "y", KGB_ROLE_INOUT, a.dt, ly, a.incy, nb, vstride(ly, a.incy));
	cb_batch_setup(c, nb, "A x y");
	cb_alpha_beta(c, true);
	KGB_SYMS(c, "m n lda incx incy trans", a.m, a.n, lda, a.incx, a.incy, a.tr);
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

/* ---- the rank-2 updates: ger / geru / gerc (A m x n), syr2 (the uplo triangle of A n x n) ---- */

static int r2_setup(kgb_case_t *c, char *err, size_t errlen)
{
	bool tri = CB_DEF(c)->layout == CB_TRIANGLE;
	l2_t a;
	if (l2_parse(c, (tri ? P_UPLO : P_M) | P_INCY, true, &a, err, errlen))
		return -1;
	if (tri)
		a.m = a.n;
	cb_vector(c, "x", KGB_ROLE_IN, a.dt, a.m, a.incx, 0, 0);
	cb_vector(c, "y", KGB_ROLE_IN, a.dt, a.n, a.incy, 0, 0);
	cb_matrix(c, "A", KGB_ROLE_INOUT, a.dt, a.m, a.n, a.m + a.pad, 0, 0);
	cb_alpha_beta(c, false);
	if (!tri)
		kgb_case_set_sym(c, "m", a.m);
	KGB_SYMS(c, "n lda incx incy", a.n, a.m + a.pad, a.incx, a.incy);
	if (tri)
		kgb_case_set_sym(c, "uplo", a.uplo);
	cb_finish(c, tri ? 3 : 2);
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

/* ---- the symmetric products: symv (A n x n, its uplo triangle), sbmv (its band) ---- */

/* Element (i, j) of the symmetric matrix whose uplo triangle A holds. */
static double complex sym_at(const cb_mat_t *A, int uplo, int64_t i, int64_t j)
{
	bool stored = uplo ? i <= j : i >= j;
	return stored ? cb_m(A, i, j) : cb_m(A, j, i);
}

/* Band matrices (sbmv, tbmv): one of n columns and k off-diagonals is stored in a
 * (k + 1) x n array:
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

static int sv_setup(kgb_case_t *c, char *err, size_t errlen)
{
	bool band = CB_DEF(c)->layout == CB_BAND;
	l2_t a;
	if (l2_parse(c, P_UPLO | P_INCY | (band ? P_K : 0), true, &a, err, errlen))
		return -1;
	l2_square(c, &a, band);
	cb_vector(c, "x", KGB_ROLE_IN, a.dt, a.n, a.incx, 0, 0);
	cb_vector(c, "y", KGB_ROLE_INOUT, a.dt, a.n, a.incy, 0, 0);
	cb_alpha_beta(c, true);
	KGB_SYMS(c, "incx incy uplo", a.incx, a.incy, a.uplo);
	cb_finish(c, band ? (double)(2 * a.k + 1) : (double)a.n);
	return 0;
}

/* y := alpha * A * x + beta * y, A's elements from its triangle or band. */
static int sv_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	bool band = CB_DEF(c)->layout == CB_BAND;
	int64_t n = cb_sym(c, "n"), k = band ? cb_sym(c, "k") : n;
	int uplo = (int)cb_sym(c, "uplo");
	double complex alpha = cb_scalar(c, "alpha", "alpha_im"), beta = cb_scalar(c, "beta", "beta_im");
	cb_mat_t A = cb_mat(c, b, "A", 0);
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0), y = cb_vec(c, b, "y", n, "incy", 0);
	for (int64_t i = 0; i < n; i++) {
		double complex s = 0;
		for (int64_t j = KGB_MAX(0, i - k); j <= KGB_MIN(n - 1, i + k); j++) {
			double complex a = !band                     ? sym_at(&A, uplo, i, j)
			                   : band_has(uplo, k, i, j) ? band_at(&A, uplo, k, i, j)
			                                             : band_at(&A, uplo, k, j, i);
			s += a * cb_v(&x, j);
		}
		cb_vset(&y, i, axpby(alpha, s, beta, cb_v(&y, i)));
	}
	return 0;
}

/* ---- the triangular routines: tbmv (band, x = op(A) x), trsv (solve op(A) x = b) ---- */

static int tri_setup(kgb_case_t *c, char *err, size_t errlen)
{
	bool band = CB_DEF(c)->layout == CB_BAND;
	l2_t a;
	if (l2_parse(c, P_UPLO | P_TRANS | P_DIAG | (band ? P_K : 0), true, &a, err, errlen))
		return -1;
	l2_square(c, &a, band);
	cb_vector(c, "x", KGB_ROLE_INOUT, a.dt, a.n, a.incx, 0, 0);
	KGB_SYMS(c, "incx uplo trans diag", a.incx, a.uplo, a.tr, a.diag);
	cb_finish(c, band ? (double)(a.k + 1) : (double)a.n);
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

/* ---- the table ---- */

/* Every level-2 routine works in place, on grids trimmed like the public ones. */
#define L2(cat, setupf, reff, gen) \
	.category = cat, .setup = setupf, .ref = reff, .gen_inputs = gen, .inplace = true, .deviation = CB_TRIM
#define GEMV_FAM L2("blas2-gemv", gemv_setup, gemv_ref, cb_gen)
#define KP(v) { "k", v },

#define GEMV_SUMMARY                                                                                  \
	"y = alpha * op(A) * x + beta * y, A m x n column-major, op = N, T or C; x and y with increments " \
	"incx and incy (negative: walked backwards); beta = 0: y not read (it holds NaN)"
#define GEMV_ITEMS GEMV_SUMMARY " for every item, at the offsets of the arrays"
#define GEMV_BATCH GEMV_SUMMARY " for every item of the batch"
#define SIG1 "A:in x:in y:inout trans alpha beta"
#define BSIG "A:in x:in y:inout Aarray:in xarray:in yarray:in trans alpha beta batch"
#define SSIG "A:in x:in y:inout strideA stridex stridey trans alpha beta batch"

/* Single gemv: the middle grid's incy and pad lists are the row's. */
#define GEMV1_GRIDS(dtn, trs, incy2, pad2)                                                              \
	{ .params = { { "dtype", dtn }, { "trans", "N" }, { "m", "7" }, { "n", "5" }, { "incx", "1" },     \
	              { "incy", "1" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },        \
	{ .params = { { "dtype", dtn }, { "trans", trs }, { "m", "1 37" }, { "n", "29" }, { "incx", "1 -2" }, \
	              { "incy", incy2 }, { "pad", pad2 }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },     \
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

static const cb_op_t op_cgemv = CB_OP(GEMV_FAM, "cublasCgemv_v2", c64, CB_1, 1152, SIG1, GEMV_SUMMARY,
                                      GEMV1_GRIDS("c64", "N T C", "1 3 -1", "0 2"));
static const cb_op_t op_dgemv = CB_OP(GEMV_FAM, "cublasDgemv_v2", f64, CB_1, 30, SIG1, GEMV_SUMMARY,
                                      GEMV1_GRIDS("f64", "N T", "3", "2"));
static const cb_op_t op_cgemv_b64 =
	CB_OP(GEMV_FAM, "cublasCgemvBatched_64", c64, CB_B64, 90, BSIG,
	      GEMV_SUMMARY " for every item i, A, x, y of item i at elements Aarray[i], xarray[i], yarray[i]; "
	                   "64-bit integer arguments",
	      GEMVB_GRIDS("c64", "N T C"));
static const cb_op_t op_dgemv_b = CB_OP(GEMV_FAM, "cublasDgemvBatched", f64, CB_B, 90, BSIG, GEMV_ITEMS,
                                        GEMVB_GRIDS("f64", "N T"));
static const cb_op_t op_sgemv_b = CB_OP(GEMV_FAM, "cublasSgemvBatched", f32, CB_B, 11664, BSIG, GEMV_ITEMS,
                                        GEMVB_GRIDS("f32", "N T"));
static const cb_op_t op_zgemv_b = CB_OP(GEMV_FAM, "cublasZgemvBatched", c128, CB_B, 90, BSIG, GEMV_ITEMS,
                                        GEMVB_GRIDS("c128", "N T C"));
static const cb_op_t op_cgemv_sb =
	CB_OP(GEMV_FAM, "cublasCgemvStridedBatched", c64, CB_S, 432, SSIG,
	      GEMV_BATCH " (strideA/x/y elements apart)", GEMVB_GRIDS("c64", "N T C"));
static const cb_op_t op_dgemv_sb = CB_OP(GEMV_FAM, "cublasDgemvStridedBatched", f64, CB_S, 432, SSIG, GEMV_BATCH,
                                         GEMVB_GRIDS("f64", "N T"));
static const cb_op_t op_sgemv_sb = CB_OP(GEMV_FAM, "cublasSgemvStridedBatched", f32, CB_S, 432, SSIG, GEMV_BATCH,
                                         GEMVB_GRIDS("f32", "N T"));
static const cb_op_t op_zgemv_sb = CB_OP(GEMV_FAM, "cublasZgemvStridedBatched", c128, CB_S, 432, SSIG,
                                         GEMV_BATCH, GEMVB_GRIDS("c128", "N T C"));

#define GER_GRIDS(dtn)                                                                                  \
	{ .params = { { "dtype", dtn }, { "m", "7" }, { "n", "5" }, { "incx", "1" }, { "incy", "1" },     \
	              { "pad", "1" }, { "alpha", "1.5" } } },                                             \
	{ .params = { { "dtype", dtn }, { "m", "1 37" }, { "n", "1 29" }, { "incx", "1 2 -1" },            \
	              { "incy", "1 -3" }, { "pad", "0 2" }, { "alpha", "1.5" } } },                         \
	{ .params = { { "dtype", dtn }, { "m", "256" }, { "n", "256" }, { "incx", "1" }, { "incy", "1" }, \
	              { "pad", "0" }, { "alpha", "1 -0.5" } } }
#define GER_SIG "x:in y:in A:inout alpha"

static const cb_op_t op_sger = CB_OP(L2("blas2-ger", r2_setup, ger_ref, NULL), "cublasSger_v2", f32, CB_1, 7128,
	GER_SIG, "A = alpha * x * y^T + A, A m x n column-major, x and y with increments (negative: backwards)",
	GER_GRIDS("f32"));
static const cb_op_t op_cgeru = CB_OP(L2("blas2-geru", r2_setup, ger_ref, NULL), "cublasCgeru_v2", c64, CB_1, 60,
	GER_SIG, "A = alpha * x * y^T + A (no conjugation), A m x n column-major, increments may be negative",
	GER_GRIDS("c64"));
static const cb_op_t op_zgerc = CB_OP(L2("blas2-gerc", r2_setup, ger_ref, NULL), "cublasZgerc_v2", c128, CB_CONJ,
	60, GER_SIG, "A = alpha * x * y^H + A (y conjugated), A m x n column-major, increments may be negative",
	GER_GRIDS("c128"));

/* symv and sbmv: k1..k3, the band's grid parameters (empty for symv). */
#define SV_GRIDS(dtn, big, incy2, k1, k2, k3)                                                           \
	{ .params = { { "dtype", dtn }, { "uplo", "U" }, { "n", "7" }, k1 { "incx", "1" }, { "incy", "1" }, \
	              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },                         \
	{ .params = { { "dtype", dtn }, { "uplo", "L U" }, { "n", "1 37" }, k2 { "incx", "1 -2" },        \
	              { "incy", incy2 }, { "pad", "2" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },     \
	{ .params = { { "dtype", dtn }, { "uplo", "L U" }, { "n", big }, k3 { "incx", "1" },             \
	              { "incy", "1" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } }

static const cb_op_t op_csymv = CB_OP(L2("blas2-symv", sv_setup, sv_ref, cb_gen), "cublasCsymv_v2", c64, CB_1, 60,
	"A:in x:in y:inout uplo alpha beta",
	"y = alpha * A * x + beta * y, A n x n symmetric (not Hermitian), only its uplo "
	"triangle read; increments may be negative; beta = 0: y not read",
	SV_GRIDS("c64", "512", "1 3", , , ));
static const cb_op_t op_dsbmv = CB_OP(L2("blas2-sbmv", sv_setup, sv_ref, cb_gen), "cublasDsbmv_v2", f64, CB_BND,
	60, "A:in x:in y:inout uplo k alpha beta",
	"y = alpha * A * x + beta * y, A n x n symmetric band with k off-diagonals, stored "
	"as its uplo band in a (k+1) x n array (lda >= k+1); beta = 0: y not read",
	SV_GRIDS("f64", "16384", "1", KP("2"), KP("0 3"), KP("16")));
static const cb_op_t op_dsyr2 = CB_OP(L2("blas2-syr2", r2_setup, syr2_ref, NULL), "cublasDsyr2_v2", f64, CB_TRI, 60,
	"x:in y:in A:inout uplo alpha",
	"A = alpha * (x * y^T + y * x^T) + A on the uplo triangle of A only (the other "
	"triangle is left as it is); increments may be negative",
	{ .params = { { "dtype", "f64" }, { "uplo", "U" }, { "n", "7" }, { "incx", "1" }, { "incy", "1" },
	              { "pad", "1" }, { "alpha", "1.5" } } },
	{ .params = { { "dtype", "f64" }, { "uplo", "L U" }, { "n", "1 37" }, { "incx", "1 -2" },
	              { "incy", "1 3" }, { "pad", "0 2" }, { "alpha", "1.5" } } },
	{ .params = { { "dtype", "f64" }, { "uplo", "L U" }, { "n", "256" }, { "incx", "1" },
	              { "incy", "1" }, { "pad", "0" }, { "alpha", "1" } } });

/* tbmv and trsv: k1..k3 as for SV_GRIDS. */
#define TRI_GRIDS(dtn, big, k1, k2, k3)                                                                 \
	{ .params = { { "dtype", dtn }, { "uplo", "U" }, { "trans", "N" }, { "diag", "N" }, { "n", "7" }, \
	              k1 { "incx", "1" }, { "pad", "1" } } },                                            \
	{ .params = { { "dtype", dtn }, { "uplo", "L U" }, { "trans", "N T" }, { "diag", "N U" },         \
	              { "n", "1 37" }, k2 { "incx", "1 -2" }, { "pad", "0 2" } } },                       \
	{ .params = { { "dtype", dtn }, { "uplo", "L U" }, { "trans", "N" }, { "diag", "N" },            \
	              { "n", big }, k3 { "incx", "1" }, { "pad", "0" } } }

static const cb_op_t op_stbmv = CB_OP(L2("blas2-tbmv", tri_setup, tbmv_ref, NULL), "cublasStbmv_v2", f32, CB_BND,
	192, "A:in x:inout uplo trans diag k",
	"x = op(A) * x, A n x n triangular band (uplo) with k off-diagonals in a (k+1) x n "
	"array; op = N or T; diag U: unit diagonal, not read; x in place, increment incx",
	TRI_GRIDS("f32", "8192", KP("2"), KP("0 3"), KP("32")));
static const cb_op_t op_strsv = CB_OP(L2("blas2-trsv", tri_setup, trsv_ref, trsv_gen), "cublasStrsv_v2", f32,
	CB_TRI, 96, "A:in x:inout uplo trans diag",
	"solve op(A) * x = b in place of x (b on entry), A n x n triangular (uplo), only that "
	"triangle read; op = N or T; diag U: unit diagonal, not read; increment incx",
	TRI_GRIDS("f32", "512", , , ));

const kgb_op_t *const kgb_ops_cublas_blas2[] = {
	&op_cgemv.op, &op_dgemv.op, &op_cgemv_b64.op, &op_dgemv_b.op, &op_sgemv_b.op, &op_zgemv_b.op,
	&op_cgemv_sb.op, &op_dgemv_sb.op, &op_sgemv_sb.op, &op_zgemv_sb.op, &op_sger.op, &op_cgeru.op,
	&op_zgerc.op, &op_csymv.op, &op_dsbmv.op, &op_dsyr2.op, &op_stbmv.op, &op_strsv.op, NULL,
};
