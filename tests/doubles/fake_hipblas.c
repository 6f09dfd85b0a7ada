/* TEST DOUBLE: a fake hipBLAS for the unit tests (libfakehipblas.so).
 *
 * There is no AMD GPU (and no ROCm) on the machines that build kgb, so native cuBLAS
 * candidates on the HIP backend are tested against this stand-in, next to the fake
 * HIP runtime (fake_hip.c), whose "device" memory is host memory. The worker loads it
 * through KGB_HIPBLAS_LIBRARY. It exports the hipBLAS entry points that
 * worker/native_blas.c resolves, with hipBLAS's enum values, and computes each routine
 * with a plain textbook loop in double (complex double) precision, run synchronously
 * at the call. It is written from the BLAS definitions, not from kgb's references, so
 * that a routine called with the wrong modes, leading dimensions, increments or
 * pointers gives a result kgb's validator rejects.
 *
 * What it checks, as the library would (status HIPBLAS_STATUS_*): a mode that is not
 * a hipBLAS enum value (a cuBLAS value passed through unmapped is INVALID_ENUM),
 * leading dimensions smaller than the rows, zero increments, negative sizes; and what
 * a library on a GPU would make fail: a call on the null stream (kgb must bind its
 * own), scalars (alpha, beta) given in device pointer mode, results (dot, asum)
 * written in host pointer mode.
 *
 * Environment: KGB_FAKE_HIPBLAS_MUTATE=trans swaps N and T in every transpose it
 * receives, =inc walks every negative increment forwards: deliberately wrong
 * mappings, for tests that the validator catches them. kgb_fake_hipblas_calls()
 * (exported) counts the routine calls. This is not a BLAS implementation for any
 * other use: it is slow and says nothing about hipBLAS's numerics. */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef double complex cx;
typedef int64_t ix_t;

enum {
	ST_OK = 0, ST_NOT_INITIALIZED = 1, ST_ALLOC_FAILED = 2, ST_INVALID_VALUE = 3, ST_NOT_SUPPORTED = 7,
	ST_HANDLE_NULL = 9, ST_INVALID_ENUM = 10,
};
enum { OP_N = 111, OP_T = 112, OP_C = 113, FILL_UPPER = 121, FILL_LOWER = 122, DIAG_NON_UNIT = 131,
       DIAG_UNIT = 132, SIDE_LEFT = 141, SIDE_RIGHT = 142 };
enum { PM_HOST = 0, PM_DEVICE = 1 };

/* element types */
typedef enum { TS, TD, TC, TZ, TH, TB, TI8 } ty_t;

typedef struct handle {
	unsigned magic;
	void *stream;
	int pointer_mode;
} handle_t;

#define MAGIC 0x6b67624cu

static long calls;

EXPORT long kgb_fake_hipblas_calls(void)
{
	return calls;
}

/* ---- element access ---- */

static float h2f(uint16_t h)
{
	uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, b;
	if (e == 0) {
		float v = ldexpf((float)m, -24);
		return s ? -v : v;
	}
	if (e == 31)
		b = s | 0x7f800000u | (m << 13);
	else
		b = s | ((e + 112) << 23) | (m << 13);
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static uint16_t f2h(float f)
{
	/* round to nearest even through the float's bits (normal range; enough here) */
	uint32_t b;
	memcpy(&b, &f, 4);
	uint32_t s = (b >> 16) & 0x8000u;
	int e = (int)((b >> 23) & 255) - 127 + 15;
	uint32_t m = b & 0x7fffffu;
	if (((b >> 23) & 255) == 255)
		return (uint16_t)(s | 0x7c00u | (m ? 0x200u : 0));
	if (e >= 31)
		return (uint16_t)(s | 0x7c00u);
	if (e <= 0) {
		float a = fabsf(f);
		uint32_t q = (uint32_t)lrintf(a * 16777216.0f);
		return (uint16_t)(s | q);
	}
	uint32_t r = (uint32_t)e << 10 | m >> 13, rem = m & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (r & 1)))
		r++;
	return (uint16_t)(s | r);
}

static cx ld(ty_t t, const void *p, ix_t i)
{
	switch (t) {
	case TS: return ((const float *)p)[i];
	case TD: return ((const double *)p)[i];
	case TC: return CMPLX(((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
	case TZ: return CMPLX(((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
	case TH: return h2f(((const uint16_t *)p)[i]);
	case TB: { uint32_t b = (uint32_t)((const uint16_t *)p)[i] << 16; float f; memcpy(&f, &b, 4); return f; }
	case TI8: return ((const int8_t *)p)[i];
	}
	return 0;
}

static void st(ty_t t, void *p, ix_t i, cx v)
{
	switch (t) {
	case TS: ((float *)p)[i] = (float)creal(v); break;
	case TD: ((double *)p)[i] = creal(v); break;
	case TC: ((float *)p)[2 * i] = (float)creal(v); ((float *)p)[2 * i + 1] = (float)cimag(v); break;
	case TZ: ((double *)p)[2 * i] = creal(v); ((double *)p)[2 * i + 1] = cimag(v); break;
	case TH: ((uint16_t *)p)[i] = f2h((float)creal(v)); break;
	default: break;
	}
}

/* ---- argument checks ---- */

static int mutate_trans(void)
{
	const char *m = getenv("KGB_FAKE_HIPBLAS_MUTATE");
	return m && strcmp(m, "trans") == 0;
}

static int mutate_inc(void)
{
	const char *m = getenv("KGB_FAKE_HIPBLAS_MUTATE");
	return m && strcmp(m, "inc") == 0;
}

/* Every routine starts here: a live handle bound to a stream; scalars on the host
 * (want_host) or results on the device (!want_host). */
static int begin(void *hv, int want_host)
{
	handle_t *h = hv;
	if (!h)
		return ST_HANDLE_NULL;
	if (h->magic != MAGIC || !h->stream)
		return ST_NOT_INITIALIZED;
	if (h->pointer_mode != (want_host ? PM_HOST : PM_DEVICE))
		return ST_INVALID_VALUE;
	calls++;
	return ST_OK;
}

/* op value -> 0 (N), 1 (T), 2 (C), or -1 */
static int op_of(int op)
{
	int r = op == OP_N ? 0 : op == OP_T ? 1 : op == OP_C ? 2 : -1;
	if (r >= 0 && r < 2 && mutate_trans())
		r = 1 - r;
	return r;
}

static int fill_of(int f)
{
	return f == FILL_UPPER ? 1 : f == FILL_LOWER ? 0 : -1;
}

static int diag_of(int d)
{
	return d == DIAG_UNIT ? 1 : d == DIAG_NON_UNIT ? 0 : -1;
}

static int side_of(int s)
{
	return s == SIDE_RIGHT ? 1 : s == SIDE_LEFT ? 0 : -1;
}

static ix_t max1(ix_t v)
{
	return v > 1 ? v : 1;
}

/* storage index of logical element i of a vector of n with increment inc */
static ix_t vi(ix_t n, ix_t inc, ix_t i)
{
	if (inc < 0 && mutate_inc())
		inc = -inc;
	return inc > 0 ? i * inc : (n - 1 - i) * -inc;
}

/* op(A)(i, j) of a column-major matrix */
static cx opa(ty_t t, const void *A, ix_t lda, int op, ix_t i, ix_t j)
{
	if (op == 0)
		return ld(t, A, i + j * lda);
	cx v = ld(t, A, j + i * lda);
	return op == 2 ? conj(v) : v;
}

/* ---- level 1 ---- */

static int copy_g(ty_t t, void *h, ix_t n, const void *x, ix_t incx, void *y, ix_t incy, int swap)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (n < 0 || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	for (ix_t i = 0; i < n; i++) {
		cx a = ld(t, x, vi(n, incx, i));
		if (swap)
			st(t, (void *)x, vi(n, incx, i), ld(t, y, vi(n, incy, i)));
		st(t, y, vi(n, incy, i), a);
	}
	return ST_OK;
}

static int dot_g(ty_t t, void *h, ix_t n, const void *x, ix_t incx, const void *y, ix_t incy, void *r, int cj)
{
	int s = begin(h, 0);
	if (s)
		return s;
	if (n < 0 || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	cx acc = 0;
	for (ix_t i = 0; i < n; i++) {
		cx a = ld(t, x, vi(n, incx, i));
		acc += (cj ? conj(a) : a) * ld(t, y, vi(n, incy, i));
	}
	st(t, r, 0, acc);
	return ST_OK;
}

static int axpy_g(ty_t t, void *h, ix_t n, const void *al, const void *x, ix_t incx, void *y, ix_t incy)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (n < 0 || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0);
	for (ix_t i = 0; i < n; i++)
		st(t, y, vi(n, incy, i), ld(t, y, vi(n, incy, i)) + a * ld(t, x, vi(n, incx, i)));
	return ST_OK;
}

/* ---- level 2 ---- */

static int gemv_g(ty_t t, void *h, int op, ix_t m, ix_t n, const void *al, const void *A, ix_t lda, const void *x, ix_t incx,
                  const void *be, void *y, ix_t incy, int check)
{
	int s = check ? begin(h, 1) : 0, o = op_of(op);
	if (s)
		return s;
	if (o < 0)
		return ST_INVALID_ENUM;
	if (m < 0 || n < 0 || lda < max1(m) || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	ix_t lx = o ? m : n, ly = o ? n : m;
	cx a = ld(t, al, 0), b = ld(t, be, 0);
	for (ix_t i = 0; i < ly; i++) {
		cx acc = 0;
		for (ix_t j = 0; j < lx; j++)
			acc += opa(t, A, lda, o, i, j) * ld(t, x, vi(lx, incx, j));
		ix_t yi = vi(ly, incy, i);
		st(t, y, yi, a * acc + (b == 0 ? 0 : b * ld(t, y, yi)));
	}
	return ST_OK;
}

static int gemv_batched(ty_t t, void *h, int op, ix_t m, ix_t n, const void *al, const void *const *A, ix_t lda,
                        const void *const *x, ix_t incx, const void *be, void *const *y, ix_t incy, ix_t nb)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (nb < 0)
		return ST_INVALID_VALUE;
	for (ix_t b = 0; b < nb && !s; b++)
		s = gemv_g(t, h, op, m, n, al, A[b], lda, x[b], incx, be, y[b], incy, 0);
	return s;
}

static size_t esz(ty_t t)
{
	return t == TS ? 4 : t == TD ? 8 : t == TC ? 8 : t == TZ ? 16 : t == TI8 ? 1 : 2;
}

static int gemv_strided(ty_t t, void *h, int op, ix_t m, ix_t n, const void *al, const void *A, ix_t lda, ix_t sa,
                        const void *x, ix_t incx, ix_t sx, const void *be, void *y, ix_t incy, ix_t sy, ix_t nb)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (nb < 0)
		return ST_INVALID_VALUE;
	size_t e = esz(t);
	for (ix_t b = 0; b < nb && !s; b++)
		s = gemv_g(t, h, op, m, n, al, (const char *)A + b * sa * e, lda, (const char *)x + b * sx * e, incx, be,
		           (char *)y + b * sy * e, incy, 0);
	return s;
}

static int ger_g(ty_t t, void *h, ix_t m, ix_t n, const void *al, const void *x, ix_t incx, const void *y, ix_t incy, void *A,
                 ix_t lda, int cj)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (m < 0 || n < 0 || lda < max1(m) || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0);
	for (ix_t j = 0; j < n; j++) {
		cx yj = ld(t, y, vi(n, incy, j));
		if (cj)
			yj = conj(yj);
		for (ix_t i = 0; i < m; i++)
			st(t, A, i + j * lda, ld(t, A, i + j * lda) + a * ld(t, x, vi(m, incx, i)) * yj);
	}
	return ST_OK;
}

/* element (i, j) of the symmetric matrix whose `up` triangle A holds */
static cx sym(ty_t t, const void *A, ix_t lda, int up, ix_t i, ix_t j)
{
	int stored = up ? i <= j : i >= j;
	return stored ? ld(t, A, i + j * lda) : ld(t, A, j + i * lda);
}

static int symv_g(ty_t t, void *h, int uplo, ix_t n, const void *al, const void *A, ix_t lda, const void *x, ix_t incx,
                  const void *be, void *y, ix_t incy)
{
	int s = begin(h, 1), up = fill_of(uplo);
	if (s)
		return s;
	if (up < 0)
		return ST_INVALID_ENUM;
	if (n < 0 || lda < max1(n) || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0), b = ld(t, be, 0);
	for (ix_t i = 0; i < n; i++) {
		cx acc = 0;
		for (ix_t j = 0; j < n; j++)
			acc += sym(t, A, lda, up, i, j) * ld(t, x, vi(n, incx, j));
		ix_t yi = vi(n, incy, i);
		st(t, y, yi, a * acc + (b == 0 ? 0 : b * ld(t, y, yi)));
	}
	return ST_OK;
}

/* a(i, j) of an n x n band matrix with k off-diagonals in band storage (its `up`
 * triangle), or 0 outside the band */
static cx band(ty_t t, const void *A, ix_t lda, int up, ix_t k, ix_t i, ix_t j)
{
	if (up ? (i > j || j - i > k) : (i < j || i - j > k))
		return 0;
	return ld(t, A, (up ? k + i - j : i - j) + j * lda);
}

static int sbmv_g(ty_t t, void *h, int uplo, ix_t n, ix_t k, const void *al, const void *A, ix_t lda, const void *x, ix_t incx,
                  const void *be, void *y, ix_t incy)
{
	int s = begin(h, 1), up = fill_of(uplo);
	if (s)
		return s;
	if (up < 0)
		return ST_INVALID_ENUM;
	if (n < 0 || k < 0 || lda < k + 1 || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0), b = ld(t, be, 0);
	for (ix_t i = 0; i < n; i++) {
		cx acc = 0;
		for (ix_t j = i > k ? i - k : 0; j < n && j <= i + k; j++) {
			cx v = (up ? i <= j : i >= j) ? band(t, A, lda, up, k, i, j) : band(t, A, lda, up, k, j, i);
			acc += v * ld(t, x, vi(n, incx, j));
		}
		ix_t yi = vi(n, incy, i);
		st(t, y, yi, a * acc + (b == 0 ? 0 : b * ld(t, y, yi)));
	}
	return ST_OK;
}

static int syr2_g(ty_t t, void *h, int uplo, ix_t n, const void *al, const void *x, ix_t incx, const void *y, ix_t incy,
                  void *A, ix_t lda)
{
	int s = begin(h, 1), up = fill_of(uplo);
	if (s)
		return s;
	if (up < 0)
		return ST_INVALID_ENUM;
	if (n < 0 || lda < max1(n) || incx == 0 || incy == 0)
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0);
	for (ix_t j = 0; j < n; j++)
		for (ix_t i = 0; i < n; i++) {
			if (up ? i > j : i < j)
				continue;
			cx xi = ld(t, x, vi(n, incx, i)), xj = ld(t, x, vi(n, incx, j));
			cx yi = ld(t, y, vi(n, incy, i)), yj = ld(t, y, vi(n, incy, j));
			st(t, A, i + j * lda, ld(t, A, i + j * lda) + a * (xi * yj + yi * xj));
		}
	return ST_OK;
}

/* T(i, j) = op(A)(i, j) of a triangular A (its `up` triangle; unit diagonal when
 * unit), band storage with k off-diagonals when k >= 0, else full storage */
static cx tri(ty_t t, const void *A, ix_t lda, int up, int o, int unit, ix_t k, ix_t i, ix_t j)
{
	ix_t r = o ? j : i, q = o ? i : j;
	if (r == q && unit)
		return 1;
	if (up ? r > q : r < q)
		return 0;
	cx v = k >= 0 ? band(t, A, lda, up, k, r, q) : ld(t, A, r + q * lda);
	return o == 2 ? conj(v) : v;
}

static int tbmv_g(ty_t t, void *h, int uplo, int op, int diag, ix_t n, ix_t k, const void *A, ix_t lda, void *x, ix_t incx)
{
	int s = begin(h, 1), up = fill_of(uplo), o = op_of(op), u = diag_of(diag);
	if (s)
		return s;
	if (up < 0 || o < 0 || u < 0)
		return ST_INVALID_ENUM;
	if (n < 0 || k < 0 || lda < k + 1 || incx == 0)
		return ST_INVALID_VALUE;
	cx *in = malloc((size_t)max1(n) * sizeof *in);
	if (!in)
		return ST_ALLOC_FAILED;
	for (ix_t i = 0; i < n; i++)
		in[i] = ld(t, x, vi(n, incx, i));
	for (ix_t i = 0; i < n; i++) {
		cx acc = 0;
		for (ix_t j = i > k ? i - k : 0; j < n && j <= i + k; j++)
			acc += tri(t, A, lda, up, o, u, k, i, j) * in[j];
		st(t, x, vi(n, incx, i), acc);
	}
	free(in);
	return ST_OK;
}

/* solve T x = b in place (x holds b), T = op(A) n x n, by substitution */
static void tsolve(ty_t t, const void *A, ix_t lda, int up, int o, int u, ix_t n, cx *x)
{
	int lower = (up == 0) != (o != 0);
	for (ix_t s = 0; s < n; s++) {
		ix_t i = lower ? s : n - 1 - s;
		cx acc = x[i];
		for (ix_t j = 0; j < n; j++)
			if (lower ? j < i : j > i)
				acc -= tri(t, A, lda, up, o, u, -1, i, j) * x[j];
		x[i] = acc / tri(t, A, lda, up, o, u, -1, i, i);
	}
}

static int trsv_g(ty_t t, void *h, int uplo, int op, int diag, ix_t n, const void *A, ix_t lda, void *x, ix_t incx)
{
	int s = begin(h, 1), up = fill_of(uplo), o = op_of(op), u = diag_of(diag);
	if (s)
		return s;
	if (up < 0 || o < 0 || u < 0)
		return ST_INVALID_ENUM;
	if (n < 0 || lda < max1(n) || incx == 0)
		return ST_INVALID_VALUE;
	cx *v = malloc((size_t)max1(n) * sizeof *v);
	if (!v)
		return ST_ALLOC_FAILED;
	for (ix_t i = 0; i < n; i++)
		v[i] = ld(t, x, vi(n, incx, i));
	tsolve(t, A, lda, up, o, u, n, v);
	for (ix_t i = 0; i < n; i++)
		st(t, x, vi(n, incx, i), v[i]);
	free(v);
	return ST_OK;
}

/* ---- level 3 ---- */

/* C = alpha op(A) op(B) + beta C; A, B of type tab, C and the scalars of type tc;
 * fp16 C accumulates in double here and is rounded once (the double is no model of
 * fp16 accumulation: kgb's fp16 tolerance admits both) */
static int gemm_g(ty_t tab, ty_t tc, ty_t tsc, void *h, int opa_, int opb_, ix_t m, ix_t n, ix_t k, const void *al,
                  const void *A, ix_t lda, const void *B, ix_t ldb, const void *be, void *C, ix_t ldc, int check)
{
	int s = check ? begin(h, 1) : 0, oa = op_of(opa_), ob = op_of(opb_);
	if (s)
		return s;
	if (oa < 0 || ob < 0)
		return ST_INVALID_ENUM;
	if (m < 0 || n < 0 || k < 0 || lda < max1(oa ? k : m) || ldb < max1(ob ? n : k) || ldc < max1(m))
		return ST_INVALID_VALUE;
	cx a = ld(tsc, al, 0), b = ld(tsc, be, 0);
	for (ix_t j = 0; j < n; j++)
		for (ix_t i = 0; i < m; i++) {
			cx acc = 0;
			for (ix_t p = 0; p < k; p++)
				acc += opa(tab, A, lda, oa, i, p) * opa(tab, B, ldb, ob, p, j);
			st(tc, C, i + j * ldc, a * acc + (b == 0 ? 0 : b * ld(tc, C, i + j * ldc)));
		}
	return ST_OK;
}

static int gemm_batched(ty_t t, void *h, int oa, int ob, ix_t m, ix_t n, ix_t k, const void *al, const void *const *A,
                        ix_t lda, const void *const *B, ix_t ldb, const void *be, void *const *C, ix_t ldc, ix_t nb)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (nb < 0)
		return ST_INVALID_VALUE;
	for (ix_t i = 0; i < nb && !s; i++)
		s = gemm_g(t, t, t, h, oa, ob, m, n, k, al, A[i], lda, B[i], ldb, be, C[i], ldc, 0);
	return s;
}

static int gemm_strided(ty_t t, void *h, int oa, int ob, ix_t m, ix_t n, ix_t k, const void *al, const void *A, ix_t lda, ix_t sa,
                        const void *B, ix_t ldb, ix_t sb, const void *be, void *C, ix_t ldc, ix_t sc, ix_t nb)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (nb < 0)
		return ST_INVALID_VALUE;
	size_t e = esz(t);
	for (ix_t i = 0; i < nb && !s; i++)
		s = gemm_g(t, t, t, h, oa, ob, m, n, k, al, (const char *)A + i * sa * e, lda, (const char *)B + i * sb * e,
		           ldb, be, (char *)C + i * sc * e, ldc, 0);
	return s;
}

static int symm_g(ty_t t, void *h, int side, int uplo, ix_t m, ix_t n, const void *al, const void *A, ix_t lda,
                  const void *B, ix_t ldb, const void *be, void *C, ix_t ldc)
{
	int s = begin(h, 1), sd = side_of(side), up = fill_of(uplo);
	if (s)
		return s;
	if (sd < 0 || up < 0)
		return ST_INVALID_ENUM;
	if (m < 0 || n < 0 || lda < max1(sd ? n : m) || ldb < max1(m) || ldc < max1(m))
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0), b = ld(t, be, 0);
	for (ix_t j = 0; j < n; j++)
		for (ix_t i = 0; i < m; i++) {
			cx acc = 0;
			if (sd == 0)
				for (ix_t p = 0; p < m; p++)
					acc += sym(t, A, lda, up, i, p) * ld(t, B, p + j * ldb);
			else
				for (ix_t p = 0; p < n; p++)
					acc += ld(t, B, i + p * ldb) * sym(t, A, lda, up, p, j);
			st(t, C, i + j * ldc, a * acc + (b == 0 ? 0 : b * ld(t, C, i + j * ldc)));
		}
	return ST_OK;
}

static int syrk_g(ty_t t, void *h, int uplo, int op, ix_t n, ix_t k, const void *al, const void *A, ix_t lda,
                  const void *be, void *C, ix_t ldc)
{
	int s = begin(h, 1), up = fill_of(uplo), o = op_of(op);
	if (s)
		return s;
	if (up < 0 || o < 0 || o == 2)
		return ST_INVALID_ENUM;
	if (n < 0 || k < 0 || lda < max1(o ? k : n) || ldc < max1(n))
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0), b = ld(t, be, 0);
	for (ix_t j = 0; j < n; j++)
		for (ix_t i = 0; i < n; i++) {
			if (up ? i > j : i < j)
				continue;
			cx acc = 0;
			for (ix_t p = 0; p < k; p++)
				acc += opa(t, A, lda, o, i, p) * opa(t, A, lda, o, j, p);
			st(t, C, i + j * ldc, a * acc + (b == 0 ? 0 : b * ld(t, C, i + j * ldc)));
		}
	return ST_OK;
}

static int trsm_g(ty_t t, void *h, int side, int uplo, int op, int diag, ix_t m, ix_t n, const void *al, const void *A,
                  ix_t lda, void *B, ix_t ldb, int check)
{
	int s = check ? begin(h, 1) : 0, sd = side_of(side), up = fill_of(uplo), o = op_of(op), u = diag_of(diag);
	if (s)
		return s;
	if (sd < 0 || up < 0 || o < 0 || u < 0)
		return ST_INVALID_ENUM;
	if (m < 0 || n < 0 || lda < max1(sd ? n : m) || ldb < max1(m))
		return ST_INVALID_VALUE;
	cx a = ld(t, al, 0);
	ix_t dim = sd ? n : m;
	cx *v = malloc((size_t)max1(dim) * sizeof *v);
	if (!v)
		return ST_ALLOC_FAILED;
	if (sd == 0) {
		/* op(A) X = alpha B, column by column */
		for (ix_t j = 0; j < n; j++) {
			for (ix_t i = 0; i < m; i++)
				v[i] = a * ld(t, B, i + j * ldb);
			tsolve(t, A, lda, up, o, u, m, v);
			for (ix_t i = 0; i < m; i++)
				st(t, B, i + j * ldb, v[i]);
		}
	} else {
		/* X op(A) = alpha B, i.e. op(A)^T x^T = alpha b^T for every row: a solve with
		 * the transposed operator, which for op = C is the conjugate (not transposed)
		 * matrix: done by hand below */
		for (ix_t i = 0; i < m; i++) {
			for (ix_t j = 0; j < n; j++)
				v[j] = a * ld(t, B, i + j * ldb);
			/* solve sum_p x[p] T(p, j) = v[j] for x, T = op(A) */
			int lower = (up == 0) != (o != 0);
			for (ix_t s2 = 0; s2 < n; s2++) {
				ix_t j = lower ? n - 1 - s2 : s2;
				cx acc = v[j];
				for (ix_t p = 0; p < n; p++)
					if (lower ? p > j : p < j)
						acc -= v[p] * tri(t, A, lda, up, o, u, -1, p, j);
				v[j] = acc / tri(t, A, lda, up, o, u, -1, j, j);
			}
			for (ix_t j = 0; j < n; j++)
				st(t, B, i + j * ldb, v[j]);
		}
	}
	free(v);
	return ST_OK;
}

/* ---- the exported entry points ---- */

EXPORT int hipblasCreate(void **out)
{
	if (!out)
		return ST_INVALID_VALUE;
	handle_t *h = calloc(1, sizeof *h);
	if (!h)
		return ST_ALLOC_FAILED;
	h->magic = MAGIC;
	h->pointer_mode = PM_HOST;
	*out = h;
	return ST_OK;
}

EXPORT int hipblasDestroy(void *hv)
{
	handle_t *h = hv;
	if (!h || h->magic != MAGIC)
		return ST_HANDLE_NULL;
	h->magic = 0;
	free(h);
	return ST_OK;
}

EXPORT int hipblasSetStream(void *hv, void *stream)
{
	handle_t *h = hv;
	if (!h || h->magic != MAGIC)
		return ST_HANDLE_NULL;
	h->stream = stream;
	return ST_OK;
}

EXPORT int hipblasSetPointerMode(void *hv, int mode)
{
	handle_t *h = hv;
	if (!h || h->magic != MAGIC)
		return ST_HANDLE_NULL;
	if (mode != PM_HOST && mode != PM_DEVICE)
		return ST_INVALID_ENUM;
	h->pointer_mode = mode;
	return ST_OK;
}

EXPORT const char *hipblasStatusToString(int s)
{
	switch (s) {
	case ST_OK: return "HIPBLAS_STATUS_SUCCESS";
	case ST_NOT_INITIALIZED: return "HIPBLAS_STATUS_NOT_INITIALIZED";
	case ST_ALLOC_FAILED: return "HIPBLAS_STATUS_ALLOC_FAILED";
	case ST_INVALID_VALUE: return "HIPBLAS_STATUS_INVALID_VALUE";
	case ST_NOT_SUPPORTED: return "HIPBLAS_STATUS_NOT_SUPPORTED";
	case ST_HANDLE_NULL: return "HIPBLAS_STATUS_HANDLE_IS_NULLPTR";
	case ST_INVALID_ENUM: return "HIPBLAS_STATUS_INVALID_ENUM";
	default: return "HIPBLAS_STATUS_UNKNOWN";
	}
}

/* level 1 */
EXPORT int hipblasCcopy(void *h, int n, const void *x, int incx, void *y, int incy) { return copy_g(TC, h, n, x, incx, y, incy, 0); }
EXPORT int hipblasDcopy(void *h, int n, const void *x, int incx, void *y, int incy) { return copy_g(TD, h, n, x, incx, y, incy, 0); }
EXPORT int hipblasZswap(void *h, int n, void *x, int incx, void *y, int incy) { return copy_g(TZ, h, n, x, incx, y, incy, 1); }
EXPORT int hipblasCdotu(void *h, int n, const void *x, int incx, const void *y, int incy, void *r) { return dot_g(TC, h, n, x, incx, y, incy, r, 0); }
EXPORT int hipblasSdot(void *h, int n, const void *x, int incx, const void *y, int incy, void *r) { return dot_g(TS, h, n, x, incx, y, incy, r, 0); }
EXPORT int hipblasZdotc(void *h, int n, const void *x, int incx, const void *y, int incy, void *r) { return dot_g(TZ, h, n, x, incx, y, incy, r, 1); }
EXPORT int hipblasDaxpy(void *h, int n, const void *al, const void *x, int incx, void *y, int incy) { return axpy_g(TD, h, n, al, x, incx, y, incy); }
EXPORT int hipblasSaxpy(void *h, int n, const void *al, const void *x, int incx, void *y, int incy) { return axpy_g(TS, h, n, al, x, incx, y, incy); }

EXPORT int hipblasDasum(void *h, int n, const void *x, int incx, void *r)
{
	int s = begin(h, 0);
	if (s)
		return s;
	if (n < 0 || incx <= 0)
		return ST_INVALID_VALUE;
	double acc = 0;
	for (ix_t i = 0; i < n; i++)
		acc += fabs(creal(ld(TD, x, i * incx)));
	*(double *)r = acc;
	return ST_OK;
}

EXPORT int hipblasSscal(void *h, int n, const void *al, void *x, int incx)
{
	int s = begin(h, 1);
	if (s)
		return s;
	if (n < 0 || incx <= 0)
		return ST_INVALID_VALUE;
	cx a = ld(TS, al, 0);
	for (ix_t i = 0; i < n; i++)
		st(TS, x, i * incx, a * ld(TS, x, i * incx));
	return ST_OK;
}

/* level 2 */
#define GEMV(NAME, T)                                                                                     \
	EXPORT int NAME(void *h, int op, int m, int n, const void *al, const void *A, int lda, const void *x,    \
	                int incx, const void *be, void *y, int incy)                                          \
	{                                                                                                     \
		int s = begin(h, 1);                                                                              \
		return s ? s : gemv_g(T, h, op, m, n, al, A, lda, x, incx, be, y, incy, 0);                      \
	}
GEMV(hipblasCgemv, TC)
GEMV(hipblasDgemv, TD)

#define GEMVB(NAME, T, IT)                                                                                \
	EXPORT int NAME(void *h, int op, IT m, IT n, const void *al, const void *const *A, IT lda,             \
	                const void *const *x, IT incx, const void *be, void *const *y, IT incy, IT nb)        \
	{                                                                                                     \
		return gemv_batched(T, h, op, m, n, al, A, lda, x, incx, be, y, incy, nb);                       \
	}
GEMVB(hipblasCgemvBatched_64, TC, int64_t)
GEMVB(hipblasDgemvBatched, TD, int)
GEMVB(hipblasSgemvBatched, TS, int)
GEMVB(hipblasZgemvBatched, TZ, int)

#define GEMVSB(NAME, T)                                                                                   \
	EXPORT int NAME(void *h, int op, int m, int n, const void *al, const void *A, int lda, int64_t sa,       \
	                const void *x, int incx, int64_t sx, const void *be, void *y, int incy, int64_t sy,   \
	                int nb)                                                                               \
	{                                                                                                     \
		return gemv_strided(T, h, op, m, n, al, A, lda, sa, x, incx, sx, be, y, incy, sy, nb);           \
	}
GEMVSB(hipblasCgemvStridedBatched, TC)
GEMVSB(hipblasDgemvStridedBatched, TD)
GEMVSB(hipblasSgemvStridedBatched, TS)
GEMVSB(hipblasZgemvStridedBatched, TZ)

EXPORT int hipblasSger(void *h, int m, int n, const void *al, const void *x, int incx, const void *y, int incy, void *A, int lda) { return ger_g(TS, h, m, n, al, x, incx, y, incy, A, lda, 0); }
EXPORT int hipblasCgeru(void *h, int m, int n, const void *al, const void *x, int incx, const void *y, int incy, void *A, int lda) { return ger_g(TC, h, m, n, al, x, incx, y, incy, A, lda, 0); }
EXPORT int hipblasZgerc(void *h, int m, int n, const void *al, const void *x, int incx, const void *y, int incy, void *A, int lda) { return ger_g(TZ, h, m, n, al, x, incx, y, incy, A, lda, 1); }
EXPORT int hipblasCsymv(void *h, int uplo, int n, const void *al, const void *A, int lda, const void *x, int incx, const void *be, void *y, int incy) { return symv_g(TC, h, uplo, n, al, A, lda, x, incx, be, y, incy); }
EXPORT int hipblasDsbmv(void *h, int uplo, int n, int k, const void *al, const void *A, int lda, const void *x, int incx, const void *be, void *y, int incy) { return sbmv_g(TD, h, uplo, n, k, al, A, lda, x, incx, be, y, incy); }
EXPORT int hipblasDsyr2(void *h, int uplo, int n, const void *al, const void *x, int incx, const void *y, int incy, void *A, int lda) { return syr2_g(TD, h, uplo, n, al, x, incx, y, incy, A, lda); }
EXPORT int hipblasStbmv(void *h, int uplo, int op, int diag, int n, int k, const void *A, int lda, void *x, int incx) { return tbmv_g(TS, h, uplo, op, diag, n, k, A, lda, x, incx); }
EXPORT int hipblasStrsv(void *h, int uplo, int op, int diag, int n, const void *A, int lda, void *x, int incx) { return trsv_g(TS, h, uplo, op, diag, n, A, lda, x, incx); }

/* level 3 */
#define GEMM(NAME, T)                                                                                     \
	EXPORT int NAME(void *h, int oa, int ob, int m, int n, int k, const void *al, const void *A, int lda,    \
	                const void *B, int ldb, const void *be, void *C, int ldc)                             \
	{                                                                                                     \
		int s = begin(h, 1);                                                                              \
		return s ? s : gemm_g(T, T, T, h, oa, ob, m, n, k, al, A, lda, B, ldb, be, C, ldc, 0);           \
	}
GEMM(hipblasCgemm, TC)
GEMM(hipblasSgemm, TS)

#define GEMMB(NAME, T, IT)                                                                                \
	EXPORT int NAME(void *h, int oa, int ob, IT m, IT n, IT k, const void *al, const void *const *A, IT lda, \
	                const void *const *B, IT ldb, const void *be, void *const *C, IT ldc, IT nb)          \
	{                                                                                                     \
		return gemm_batched(T, h, oa, ob, m, n, k, al, A, lda, B, ldb, be, C, ldc, nb);                  \
	}
GEMMB(hipblasDgemmBatched, TD, int)
GEMMB(hipblasHgemmBatched, TH, int)
GEMMB(hipblasSgemmBatched_64, TS, int64_t)
GEMMB(hipblasZgemmBatched, TZ, int)

#define GEMMSB(NAME, T, IT)                                                                               \
	EXPORT int NAME(void *h, int oa, int ob, IT m, IT n, IT k, const void *al, const void *A, IT lda,        \
	                int64_t sa, const void *B, IT ldb, int64_t sb, const void *be, void *C, IT ldc,       \
	                int64_t sc, IT nb)                                                                    \
	{                                                                                                     \
		return gemm_strided(T, h, oa, ob, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, nb);      \
	}
GEMMSB(hipblasCgemmStridedBatched, TC, int)
GEMMSB(hipblasCgemmStridedBatched_64, TC, int64_t)
GEMMSB(hipblasDgemmStridedBatched, TD, int)
GEMMSB(hipblasDgemmStridedBatched_64, TD, int64_t)
GEMMSB(hipblasHgemmStridedBatched, TH, int)
GEMMSB(hipblasSgemmStridedBatched, TS, int)
GEMMSB(hipblasZgemmStridedBatched, TZ, int)

/* hipDataType values: R_32F 0, R_16F 2, R_8I 3, R_16BF 14; compute 32F = 2 */
static int hip_type(int dt, ty_t *out)
{
	switch (dt) {
	case 0: *out = TS; return 0;
	case 2: *out = TH; return 0;
	case 3: *out = TI8; return 0;
	case 14: *out = TB; return 0;
	default: return -1;
	}
}

EXPORT int hipblasGemmEx_v2(void *h, int oa, int ob, int m, int n, int k, const void *al, const void *A, int at,
                            int lda, const void *B, int bt, int ldb, const void *be, void *C, int ct, int ldc,
                            int compute, int algo)
{
	ty_t ta, tb;
	int s = begin(h, 1);
	if (s)
		return s;
	if (hip_type(at, &ta) || hip_type(bt, &tb) || ta != tb || ct != 0 || compute != 2 || algo != 160)
		return ST_NOT_SUPPORTED;
	return gemm_g(ta, TS, TS, h, oa, ob, m, n, k, al, A, lda, B, ldb, be, C, ldc, 0);
}

EXPORT int hipblasCsymm(void *h, int side, int uplo, int m, int n, const void *al, const void *A, int lda, const void *B, int ldb, const void *be, void *C, int ldc) { return symm_g(TC, h, side, uplo, m, n, al, A, lda, B, ldb, be, C, ldc); }
EXPORT int hipblasSsyrk(void *h, int uplo, int op, int n, int k, const void *al, const void *A, int lda, const void *be, void *C, int ldc) { return syrk_g(TS, h, uplo, op, n, k, al, A, lda, be, C, ldc); }
EXPORT int hipblasCsyrk(void *h, int uplo, int op, int n, int k, const void *al, const void *A, int lda, const void *be, void *C, int ldc) { return syrk_g(TC, h, uplo, op, n, k, al, A, lda, be, C, ldc); }

EXPORT int hipblasStrsm(void *h, int side, int uplo, int op, int diag, int m, int n, const void *al, const void *A, int lda, void *B, int ldb)
{
	int s = begin(h, 1);
	return s ? s : trsm_g(TS, h, side, uplo, op, diag, m, n, al, A, lda, B, ldb, 0);
}

#define TRSMB(NAME, T)                                                                                    \
	EXPORT int NAME(void *h, int side, int uplo, int op, int diag, int m, int n, const void *al,             \
	                const void *const *A, int lda, void *const *B, int ldb, int nb)                       \
	{                                                                                                     \
		int s = begin(h, 1);                                                                              \
		if (s)                                                                                            \
			return s;                                                                                     \
		if (nb < 0)                                                                                       \
			return ST_INVALID_VALUE;                                                                      \
		for (int i = 0; i < nb && !s; i++)                                                                \
			s = trsm_g(T, h, side, uplo, op, diag, m, n, al, A[i], lda, B[i], ldb, 0);                   \
		return s;                                                                                         \
	}
TRSMB(hipblasDtrsmBatched, TD)
TRSMB(hipblasZtrsmBatched, TZ)

EXPORT int hipblasSgeam(void *h, int opa_, int opb_, int m, int n, const void *al, const void *A, int lda,
                        const void *be, const void *B, int ldb, void *C, int ldc)
{
	int s = begin(h, 1), oa = op_of(opa_), ob = op_of(opb_);
	if (s)
		return s;
	if (oa < 0 || ob < 0)
		return ST_INVALID_ENUM;
	if (m < 0 || n < 0 || lda < max1(oa ? n : m) || ldb < max1(ob ? n : m) || ldc < max1(m))
		return ST_INVALID_VALUE;
	cx a = ld(TS, al, 0), b = ld(TS, be, 0);
	for (ix_t j = 0; j < n; j++)
		for (ix_t i = 0; i < m; i++)
			st(TS, C, i + j * ldc, a * opa(TS, A, lda, oa, i, j) + b * opa(TS, B, ldb, ob, i, j));
	return ST_OK;
}

EXPORT int hipblasSdgmm(void *h, int side, int m, int n, const void *A, int lda, const void *x, int incx, void *C,
                        int ldc)
{
	int s = begin(h, 1), sd = side_of(side);
	if (s)
		return s;
	if (sd < 0)
		return ST_INVALID_ENUM;
	if (m < 0 || n < 0 || lda < max1(m) || ldc < max1(m))
		return ST_INVALID_VALUE;
	for (ix_t j = 0; j < n; j++)
		for (ix_t i = 0; i < m; i++)
			st(TS, C, i + j * ldc, ld(TS, A, i + j * lda) * ld(TS, x, (sd ? j : i) * incx));
	return ST_OK;
}
