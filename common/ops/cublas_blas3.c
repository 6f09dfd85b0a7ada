/* cuBLAS level 3: gemm (single, batched with pointer arrays, strided-batched, _64,
 * Ex, fp16), symm, syrk (and syrkEx), trsm (single and batched), geam, dgmm.
 * Semantics, layouts and the case grids: docs/operators.md, "cuBLAS". References in
 * double (complex double) precision, the products through OpenBLAS. One setup per
 * family; the element type and the batch mode are the row's, in the table at the end. */
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

/* Parameter `param`, a shape of nd (2 or 3) positive sizes, into d. */
static int shape_param(const kgb_case_t *c, const char *param, int nd, int64_t *d, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, param);
	bool ok = p && p->kind == KGB_PV_SHAPE && p->ndim == nd;
	for (int i = 0; ok && i < nd; i++)
		ok = (d[i] = p->dims[i]) >= 1;
	if (!ok)
		return kgb_err(err, errlen, "op %s case %u: parameter %s must be a shape %s of positive sizes",
		               c->op->name, c->index, param, nd == 3 ? "[a,b,c]" : "[a,b]");
	return 0;
}

/* Grid parameter `param` (abtype, atype), when the case has it, into *dt. */
static int dtype_param(const kgb_case_t *c, const char *param, kgb_dtype_t *dt, char *err, size_t errlen)
{
	const char *s = kgb_case_pstr(c, param, NULL);
	if (s && kgb_dtype_parse(s, dt) != 0)
		return kgb_err(err, errlen, "op %s case %u: %s '%s' is not a dtype", c->op->name, c->index, param, s);
	return 0;
}

/* ---- gemm ---- */

static int gemm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c), abt = dt;
	bool cx = kgb_dtype_is_complex(dt);
	int ta, tb;
	int64_t d[3], pad = kgb_case_pint(c, "pad", 0), nb, m, n, k, ra, ca, rb, cbb;
	if ((ta = cb_trans(c, "transa", cx, err, errlen)) < 0 || (tb = cb_trans(c, "transb", cx, err, errlen)) < 0 ||
	    shape_param(c, "mnk", 3, d, err, errlen) || dtype_param(c, "abtype", &abt, err, errlen) ||
	    (nb = cb_batch_param(c, err, errlen)) < 0)
		return -1;
	m = d[0];
	n = d[1];
	k = d[2];
	ra = ta ? k : m;
	ca = ta ? m : k;
	rb = tb ? n : k;
	cbb = tb ? k : n;
	cb_matrix(c, "A", KGB_ROLE_IN, abt, ra, ca, ra + pad, nb, bstride(ra + pad, ca, pad));
	cb_matrix(c, "B", KGB_ROLE_IN, abt, rb, cbb, rb + pad, nb, bstride(rb + pad, cbb, pad));
	cb_matrix(c, "C", KGB_ROLE_INOUT, dt, m, n, m + pad, nb, bstride(m + pad, n, pad));
	cb_batch_setup(c, nb, "A B C");
	cb_alpha_beta(c, true);
	KGB_SYMS(c, "m n k lda ldb ldc transa transb", m, n, k, ra + pad, rb + pad, m + pad, ta, tb);
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
	int64_t d[2], pad = kgb_case_pint(c, "pad", 0), m, n, dim;
	if ((side = cb_side(c, err, errlen)) < 0 || (uplo = cb_uplo(c, err, errlen)) < 0 ||
	    shape_param(c, "mn", 2, d, err, errlen))
		return -1;
	m = d[0];
	n = d[1];
	dim = side ? n : m;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, dim, dim, dim + pad, 0, 0);
	cb_matrix(c, "B", KGB_ROLE_IN, dt, m, n, m + pad, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_INOUT, dt, m, n, m + pad, 0, 0);
	cb_alpha_beta(c, true);
	KGB_SYMS(c, "m n lda ldb ldc side uplo", m, n, dim + pad, m + pad, m + pad, side, uplo);
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

/* ---- syrk ---- */

static int syrk_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c), at = dt;
	int tr, uplo;
	int64_t d[2], pad = kgb_case_pint(c, "pad", 0), n, k, ra;
	if ((tr = cb_trans(c, "trans", false, err, errlen)) < 0 || (uplo = cb_uplo(c, err, errlen)) < 0 ||
	    shape_param(c, "nk", 2, d, err, errlen) || dtype_param(c, "atype", &at, err, errlen))
		return -1;
	n = d[0];
	k = d[1];
	ra = tr ? k : n;
	cb_matrix(c, "A", KGB_ROLE_IN, at, ra, tr ? n : k, ra + pad, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_INOUT, dt, n, n, n + pad, 0, 0);
	cb_alpha_beta(c, true);
	KGB_SYMS(c, "n k lda ldc trans uplo", n, k, ra + pad, n + pad, tr, uplo);
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
	kgb_dtype_t dt = cb_dtype(c);
	bool cx = kgb_dtype_is_complex(dt);
	int side, uplo, tr, diag;
	int64_t d[2], pad = kgb_case_pint(c, "pad", 0), m, n, dim, nb;
	if ((side = cb_side(c, err, errlen)) < 0 || (uplo = cb_uplo(c, err, errlen)) < 0 ||
	    (tr = cb_trans(c, "trans", cx, err, errlen)) < 0 || (diag = cb_diag(c, err, errlen)) < 0 ||
	    shape_param(c, "mn", 2, d, err, errlen) || (nb = cb_batch_param(c, err, errlen)) < 0)
		return -1;
	m = d[0];
	n = d[1];
	dim = side ? n : m;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, dim, dim, dim + pad, nb, bstride(dim + pad, dim, pad));
	cb_matrix(c, "B", KGB_ROLE_INOUT, dt, m, n, m + pad, nb, bstride(m + pad, n, pad));
	cb_batch_setup(c, nb, "A B");
	cb_alpha_beta(c, false);
	KGB_SYMS(c, "m n lda ldb side uplo trans diag", m, n, dim + pad, m + pad, side, uplo, tr, diag);
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

/* ---- geam ---- */

static int geam_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int ta, tb;
	int64_t d[2], pad = kgb_case_pint(c, "pad", 0), m, n, ra, rb;
	if ((ta = cb_trans(c, "transa", false, err, errlen)) < 0 || (tb = cb_trans(c, "transb", false, err, errlen)) < 0 ||
	    shape_param(c, "mn", 2, d, err, errlen))
		return -1;
	m = d[0];
	n = d[1];
	ra = ta ? n : m;
	rb = tb ? n : m;
	cb_matrix(c, "A", KGB_ROLE_IN, dt, ra, ta ? m : n, ra + pad, 0, 0);
	cb_matrix(c, "B", KGB_ROLE_IN, dt, rb, tb ? m : n, rb + 2 * pad, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_OUT, dt, m, n, m + pad, 0, 0);
	cb_alpha_beta(c, true);
	KGB_SYMS(c, "m n lda ldb ldc transa transb", m, n, ra + pad, rb + 2 * pad, m + pad, ta, tb);
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

/* ---- dgmm ---- */

static int dgmm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int side;
	int64_t d[2], pad = kgb_case_pint(c, "pad", 0), incx = kgb_case_pint(c, "incx", 1), m, n;
	if ((side = cb_side(c, err, errlen)) < 0 || shape_param(c, "mn", 2, d, err, errlen))
		return -1;
	if (incx < 1)
		return kgb_err(err, errlen, "op %s case %u: incx = %lld must be >= 1", c->op->name, c->index,
		               (long long)incx);
	m = d[0];
	n = d[1];
	cb_matrix(c, "A", KGB_ROLE_IN, dt, m, n, m + pad, 0, 0);
	cb_vector(c, "x", KGB_ROLE_IN, dt, side ? n : m, incx, 0, 0);
	cb_matrix(c, "C", KGB_ROLE_OUT, dt, m, n, m + pad, 0, 0);
	KGB_SYMS(c, "m n lda ldc incx side", m, n, m + pad, m + pad, incx, side);
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

/* ---- the table ---- */

#define L3(cat, setupf, reff, gen, inpl, dev) \
	.category = cat, .setup = setupf, .ref = reff, .gen_inputs = gen, .inplace = inpl, .deviation = dev
#define GEMM_FAM L3("blas3-gemm", gemm_setup, gemm_ref, cb_gen, true, CB_TRIM)
/* sgemmEx: f32 C, A and B of the grid's abtype */
#define CB_DT_f32ex KGB_DT_F32
#define CB_DTS_f32ex "f32 f16 bf16 i8"

#define GEMM_SUMMARY(what)                                                                             \
	"C = alpha * op(A) * op(B) + beta * C" what ", column-major; op = N, T or C (conjugate transpose); " \
	"beta = 0: C is not read (it holds NaN)"
#define GEMM_SIG(extra) "A:in B:in C:inout " extra "alpha beta"
#define GEMM_BSIG GEMM_SIG("Aarray:in Barray:in Carray:in batch ")
#define GEMM_SSIG GEMM_SIG("strideA strideB strideC batch ")
#define GEMM_XSIG GEMM_SIG("abtype ")

#define SB_GRIDS(dtn, trs, big)                                                                         \
	{ .params = { { "dtype", dtn }, { "transa", "N" }, { "transb", "T" }, { "mnk", "[8,6,5]" },       \
	              { "batch", "4" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },     \
	{ .params = { { "dtype", dtn }, { "transa", trs }, { "transb", trs },                           \
	              { "mnk", "[17,23,19] [32,1,16]" }, { "batch", "5" }, { "pad", "0 2" },            \
	              { "alpha", "1.5" }, { "beta", "0 0.5" } } },                                        \
	{ .params = { { "dtype", dtn }, { "transa", "N" }, { "transb", "N" }, { "mnk", big },           \
	              { "batch", "16" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0 0.5" } } }
#define SB_C(dtn) SB_GRIDS(dtn, "N T C", "[48,48,48]")
#define SB_R(dtn) SB_GRIDS(dtn, "N T", "[64,64,64]")

static const cb_op_t op_cgemm = CB_OP(GEMM_FAM, "cublasCgemm_v2", c64, CB_1, 1683, GEMM_SIG(""), GEMM_SUMMARY(""),
	{ .params = { { "dtype", "c64" }, { "transa", "N" }, { "transb", "C" }, { "mnk", "[8,6,5]" }, { "pad", "1" },
	              { "alpha", "1.5" }, { "beta", "0 0.5" } } },
	{ .params = { { "dtype", "c64" }, { "transa", "N T C" }, { "transb", "N T C" },
	              { "mnk", "[37,29,41] [1,33,17] [33,17,1]" }, { "pad", "0 3" }, { "alpha", "1.5" },
	              { "beta", "0 0.5" } } },
	{ .params = { { "dtype", "c64" }, { "transa", "N" }, { "transb", "N" }, { "mnk", "[24,24,24]" },
	              { "pad", "0" }, { "alpha", "0 -1" }, { "beta", "1" } } },
	{ .params = { { "dtype", "c64" }, { "transa", "N" }, { "transb", "N" }, { "mnk", "[192,192,192]" },
	              { "pad", "0" }, { "alpha", "1" }, { "beta", "0 0.5" } } });
static const cb_op_t op_cgemm_sb = CB_OP(GEMM_FAM, "cublasCgemmStridedBatched", c64, CB_S, 120, GEMM_SSIG,
	GEMM_SUMMARY(" for every item of the batch (items strideA/B/C elements apart)"), SB_C("c64"));
static const cb_op_t op_cgemm_sb64 = CB_OP(GEMM_FAM, "cublasCgemmStridedBatched_64", c64, CB_S64, 120, GEMM_SSIG,
	GEMM_SUMMARY(" for every item of the batch; 64-bit integer arguments"), SB_C("c64"));
static const cb_op_t op_dgemm_b = CB_OP(GEMM_FAM, "cublasDgemmBatched", f64, CB_B, 180, GEMM_BSIG,
	GEMM_SUMMARY(" for every item i, A/B/C of item i at element Aarray[i]/Barray[i]/Carray[i]"), SB_R("f64"));
static const cb_op_t op_dgemm_sb = CB_OP(GEMM_FAM, "cublasDgemmStridedBatched", f64, CB_S, 864, GEMM_SSIG,
	GEMM_SUMMARY(" for every item of the batch"), SB_R("f64"));
static const cb_op_t op_dgemm_sb64 = CB_OP(GEMM_FAM, "cublasDgemmStridedBatched_64", f64, CB_S64, 180, GEMM_SSIG,
	GEMM_SUMMARY(" for every item of the batch; 64-bit integer arguments"), SB_R("f64"));
static const cb_op_t op_hgemm_b = CB_OP(GEMM_FAM, "cublasHgemmBatched", f16, CB_B, 180, GEMM_BSIG,
	GEMM_SUMMARY(" in fp16 (fp16 inputs, scalars, output and compute), items at the offsets of the arrays"), SB_R("f16"));
static const cb_op_t op_hgemm_sb = CB_OP(GEMM_FAM, "cublasHgemmStridedBatched", f16, CB_S, 864, GEMM_SSIG,
	GEMM_SUMMARY(" in fp16 (fp16 inputs, scalars, output and compute) for every item of the batch"), SB_R("f16"));
static const cb_op_t op_sgemm_b64 = CB_OP(GEMM_FAM, "cublasSgemmBatched_64", f32, CB_B64, 180, GEMM_BSIG,
	GEMM_SUMMARY(" for every item, at the offsets of the arrays; 64-bit integer arguments"), SB_R("f32"));
static const cb_op_t op_sgemm_sb = CB_OP(GEMM_FAM, "cublasSgemmStridedBatched", f32, CB_S, 864, GEMM_SSIG,
	GEMM_SUMMARY(" for every item of the batch"), SB_R("f32"));
static const cb_op_t op_zgemm_b = CB_OP(GEMM_FAM, "cublasZgemmBatched", c128, CB_B, 180, GEMM_BSIG,
	GEMM_SUMMARY(" for every item, at the offsets of the arrays"), SB_C("c128"));
static const cb_op_t op_zgemm_sb = CB_OP(GEMM_FAM, "cublasZgemmStridedBatched", c128, CB_S, 768, GEMM_SSIG,
	GEMM_SUMMARY(" for every item of the batch"), SB_C("c128"));
static const cb_op_t op_sgemm_ex = CB_OP(GEMM_FAM, "cublasSgemmEx", f32ex, CB_1, 108, GEMM_XSIG,
	GEMM_SUMMARY(" with A and B of type abtype (f32, f16, bf16 or i8), C f32, computed in fp32"),
	{ .params = { { "dtype", "f32" }, { "abtype", "f16" }, { "transa", "N" }, { "transb", "T" },
	              { "mnk", "[8,6,5]" }, { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
	{ .params = { { "dtype", "f32" }, { "abtype", "f32 f16 bf16 i8" }, { "transa", "N T" }, { "transb", "N T" },
	              { "mnk", "[37,29,41] [1,33,17]" }, { "pad", "3" }, { "alpha", "1.5" }, { "beta", "0 0.5" } } },
	{ .params = { { "dtype", "f32" }, { "abtype", "f16 bf16" }, { "transa", "N" }, { "transb", "N" },
	              { "mnk", "[256,256,256]" }, { "pad", "0" }, { "alpha", "1" }, { "beta", "0" } } });

static const cb_op_t op_csymm = CB_OP(L3("blas3-symm", symm_setup, symm_ref, cb_gen, true, NULL), "cublasCsymm_v2",
	c64, CB_1, 60, "A:in B:in C:inout side uplo alpha beta",
	"C = alpha * A * B + beta * C (side L, A m x m) or alpha * B * A + beta * C (side R, "
	"A n x n); A symmetric (not Hermitian), only its uplo triangle is read",
	{ .params = { { "dtype", "c64" }, { "side", "L" }, { "uplo", "U" }, { "mn", "[7,5]" },
	              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },
	{ .params = { { "dtype", "c64" }, { "side", "L R" }, { "uplo", "L U" },
	              { "mn", "[33,17] [1,20] [20,1]" }, { "pad", "0 2" }, { "alpha", "1.5" },
	              { "beta", "0 0.5" } } },
	{ .params = { { "dtype", "c64" }, { "side", "L R" }, { "uplo", "U" }, { "mn", "[256,192]" },
	              { "pad", "0" }, { "alpha", "1" }, { "beta", "0.5" } } });

#define SYRK_SUMMARY                                                                                \
	"C = alpha * op(A) * op(A)^T + beta * C on the uplo triangle of C only (the other triangle is " \
	"left as it is); op(A) = A (n x k, trans N) or A^T (A k x n, trans T); beta = 0: C not read"
/* at: syrkEx's atype parameter (AT), empty for syrk; the large grid's trans, nk and beta. */
#define SYRK_GRIDS(dtn, at, tr3, nk3, beta3)                                                            \
	{ .params = { { "dtype", dtn }, at { "uplo", "U" }, { "trans", "N" }, { "nk", "[7,5]" },         \
	              { "pad", "1" }, { "alpha", "1.5" }, { "beta", "0.5" } } },                          \
	{ .params = { { "dtype", dtn }, at { "uplo", "L U" }, { "trans", "N T" },                       \
	              { "nk", "[33,17] [1,20] [20,1]" }, { "pad", "0 2" }, { "alpha", "1.5" },            \
	              { "beta", "0 0.5" } } },                                                            \
	{ .params = { { "dtype", dtn }, at { "uplo", "L U" }, { "trans", tr3 }, { "nk", nk3 },           \
	              { "pad", "0" }, { "alpha", "1" }, { "beta", beta3 } } }
#define AT(v) { "atype", v },

static const cb_op_t op_ssyrk = CB_OP(L3("blas3-syrk", syrk_setup, syrk_ref, cb_gen, true, NULL), "cublasSsyrk_v2",
	f32, CB_1, 60, "A:in C:inout uplo trans alpha beta", SYRK_SUMMARY,
	SYRK_GRIDS("f32", , "N", "[256,256]", "0.5"));
static const cb_op_t op_csyrkex = CB_OP(L3("blas3-syrk", syrk_setup, syrk_ref, cb_gen, true,
	"grid trimmed (docs/operators.md); A of type CUDA_C_8I (complex int8) is not covered: kgb has no "
	"complex integer dtype"), "cublasCsyrkEx", c64, CB_1, 13860, "A:in C:inout uplo trans atype alpha beta",
	SYRK_SUMMARY "; A of type atype (c64: CUDA_C_32F), C c64, computed in fp32",
	SYRK_GRIDS("c64", AT("c64"), "T", "[192,160]", "0"));

#define TRSM_FAM L3("blas3-trsm", trsm_setup, trsm_ref, trsm_gen, true, CB_TRIM)
#define TRSM_SUMMARY                                                                                   \
	"solve op(A) X = alpha B (side L, A m x m) or X op(A) = alpha B (side R, A n x n) for X, which "   \
	"overwrites B; A triangular (uplo), only that triangle read, diag U: unit diagonal not read; "    \
	"op = N, T or C"
#define TRSM_BSIG "A:in B:inout Aarray:in Barray:in side uplo trans diag alpha batch"
#define TRSM_ITEMS TRSM_SUMMARY " for every item i, A and B of item i at elements Aarray[i], Barray[i]"

#define TRSM_GRIDS(dtn, trs, bigmn, ...)                                                              \
	{ .params = { { "dtype", dtn }, { "side", "L" }, { "uplo", "U" }, { "trans", "N" },              \
	              { "diag", "N" }, { "mn", "[7,5]" }, { "pad", "1" }, { "alpha", "1.5" }, ##__VA_ARGS__ } },  \
	{ .params = { { "dtype", dtn }, { "side", "L R" }, { "uplo", "L U" }, { "trans", trs },         \
	              { "diag", "N U" }, { "mn", "[19,13]" }, { "pad", "0 2" }, { "alpha", "1.5" }, ##__VA_ARGS__ } }, \
	{ .params = { { "dtype", dtn }, { "side", "L R" }, { "uplo", "L" }, { "trans", "N" },            \
	              { "diag", "N" }, { "mn", "[1,9] [9,1]" }, { "pad", "0" }, { "alpha", "-1" }, ##__VA_ARGS__ } }, \
	{ .params = { { "dtype", dtn }, { "side", "L" }, { "uplo", "U" }, { "trans", "N" },              \
	              { "diag", "N" }, { "mn", bigmn }, { "pad", "0" }, { "alpha", "1" }, ##__VA_ARGS__ } }

static const cb_op_t op_strsm = CB_OP(TRSM_FAM, "cublasStrsm_v2", f32, CB_1, 96, "A:in B:inout side uplo trans diag alpha",
	TRSM_SUMMARY, TRSM_GRIDS("f32", "N T", "[256,128]"));
static const cb_op_t op_dtrsm_b = CB_OP(TRSM_FAM, "cublasDtrsmBatched", f64, CB_B, 108, TRSM_BSIG, TRSM_ITEMS,
	TRSM_GRIDS("f64", "N T", "[64,64]", { "batch", "4" }));
static const cb_op_t op_ztrsm_b = CB_OP(TRSM_FAM, "cublasZtrsmBatched", c128, CB_B, 108, TRSM_BSIG, TRSM_ITEMS,
	TRSM_GRIDS("c128", "N T C", "[48,48]", { "batch", "4" }));

static const cb_op_t op_sgeam = CB_OP(L3("blas3-geam", geam_setup, geam_ref, NULL, false, CB_TRIM), "cublasSgeam",
	f32, CB_1, 108, "A:in B:in C:out transa transb alpha beta",
	"C = alpha * op(A) + beta * op(B), m x n, column-major; op = N or T",
	{ .params = { { "dtype", "f32" }, { "transa", "N" }, { "transb", "T" }, { "mn", "[7,5]" }, { "pad", "1" },
	              { "alpha", "1.5" }, { "beta", "-0.5" } } },
	{ .params = { { "dtype", "f32" }, { "transa", "N T" }, { "transb", "N T" }, { "mn", "[33,17] [1,40] [40,1]" },
	              { "pad", "0 3" }, { "alpha", "1.5" }, { "beta", "-0.5" } } },
	{ .params = { { "dtype", "f32" }, { "transa", "N T" }, { "transb", "N" }, { "mn", "[24,24]" }, { "pad", "0" },
	              { "alpha", "0 1" }, { "beta", "0 2" } } },
	{ .params = { { "dtype", "f32" }, { "transa", "N T" }, { "transb", "T" }, { "mn", "[256,256]" },
	              { "pad", "0" }, { "alpha", "1" }, { "beta", "1" } } });

static const cb_op_t op_sdgmm = CB_OP(L3("blas3-dgmm", dgmm_setup, dgmm_ref, NULL, false, NULL), "cublasSdgmm",
	f32, CB_1, 18, "A:in x:in C:out side",
	"C = A * diag(x) (side R, x of n elements) or diag(x) * A (side L, x of m elements), "
	"x with increment incx",
	{ .params = { { "dtype", "f32" }, { "side", "L R" }, { "mn", "[7,5]" }, { "incx", "1" }, { "pad", "1" } } },
	{ .params = { { "dtype", "f32" }, { "side", "L R" }, { "mn", "[33,17] [1,40]" }, { "incx", "1 3" },
	              { "pad", "2" } } },
	{ .params = { { "dtype", "f32" }, { "side", "L R" }, { "mn", "[256,256]" }, { "incx", "1" },
	              { "pad", "0" } } });

const kgb_op_t *const kgb_ops_cublas_blas3[] = {
	&op_cgemm.op, &op_cgemm_sb.op, &op_cgemm_sb64.op, &op_dgemm_b.op, &op_dgemm_sb.op, &op_dgemm_sb64.op,
	&op_hgemm_b.op, &op_hgemm_sb.op, &op_sgemm_b64.op, &op_sgemm_ex.op, &op_sgemm_sb.op, &op_zgemm_b.op,
	&op_zgemm_sb.op, &op_csymm.op, &op_ssyrk.op, &op_csyrkex.op, &op_strsm.op, &op_dtrsm_b.op, &op_ztrsm_b.op,
	&op_sgeam.op, &op_sdgmm.op, NULL,
};
