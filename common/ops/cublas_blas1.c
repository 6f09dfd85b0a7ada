/* cuBLAS level 1: copy, dot / dotu / dotc, asum, axpy, scal, swap. Vectors have
 * increments; where BLAS allows a negative one (copy, dot, axpy, swap) the vector is
 * walked backwards (cublas_common.h). Grids: docs/operators.md, "cuBLAS". */
#include <math.h>
#include <string.h>

#include "cublas_common.h"
#include "ops.h"
#include "util.h"

#define TRIM "grid trimmed to the increments, edges and one large size (docs/operators.md)"

enum { L1_COPY, L1_DOT, L1_ASUM, L1_AXPY, L1_SCAL, L1_SWAP };

/* The routine of an operator, from its category ("blas1-dot" ...). */
static int kind(const kgb_case_t *c)
{
	const char *k = c->op->category + 6;
	if (strcmp(k, "copy") == 0)
		return L1_COPY;
	if (strncmp(k, "dot", 3) == 0)
		return L1_DOT;
	if (strcmp(k, "asum") == 0)
		return L1_ASUM;
	if (strcmp(k, "axpy") == 0)
		return L1_AXPY;
	if (strcmp(k, "scal") == 0)
		return L1_SCAL;
	return L1_SWAP;
}

static int l1_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = cb_dtype(c);
	int kd = kind(c);
	bool has_y = kd != L1_ASUM && kd != L1_SCAL;
	int64_t n = kgb_case_pint(c, "n", 0), incx = kgb_case_pint(c, "incx", 1), incy = kgb_case_pint(c, "incy", 1);
	if (n < 1)
		return kgb_err(err, errlen, "op %s case %u: n = %lld must be >= 1", c->op->name, c->index, (long long)n);
	/* asum and scal do nothing for incx <= 0 in BLAS: only positive increments */
	if (incx == 0 || (incx < 0 && !has_y) || (has_y && incy == 0))
		return kgb_err(err, errlen, "op %s case %u: incx = %lld, incy = %lld not allowed here", c->op->name,
		               c->index, (long long)incx, (long long)incy);
	cb_vector(c, "x", kd == L1_SCAL || kd == L1_SWAP ? KGB_ROLE_INOUT : KGB_ROLE_IN, dt, n, incx, 0, 0);
	if (has_y)
		cb_vector(c, "y",
		          kd == L1_COPY ? KGB_ROLE_OUT : kd == L1_DOT ? KGB_ROLE_IN : KGB_ROLE_INOUT, dt, n, incy, 0,
		          0);
	if (kd == L1_DOT || kd == L1_ASUM) {
		kgb_dtype_t rt = kd == L1_ASUM ? kgb_dtype_component(dt) : dt;
		kgb_case_add_tensor(c, "result", KGB_ROLE_OUT, rt, 0, NULL);
	}
	if (kd == L1_AXPY || kd == L1_SCAL)
		cb_alpha_beta(c, false);
	kgb_case_set_sym(c, "n", n);
	kgb_case_set_sym(c, "incx", incx);
	kgb_case_set_sym(c, "incy", has_y ? incy : 1);
	cb_finish(c, kd == L1_DOT || kd == L1_ASUM ? (double)n : 2);
	return 0;
}

static int l1_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int kd = kind(c);
	int64_t n = cb_sym(c, "n");
	cb_vec_t x = cb_vec(c, b, "x", n, "incx", 0), y = { 0 };
	int ri = kgb_case_tensor_index(c, "result");
	if (kd != L1_ASUM && kd != L1_SCAL)
		y = cb_vec(c, b, "y", n, "incy", 0);
	switch (kd) {
	case L1_COPY:
		for (int64_t i = 0; i < n; i++)
			cb_vset(&y, i, cb_v(&x, i));
		break;
	case L1_DOT: {
		double complex s = 0;
		for (int64_t i = 0; i < n; i++)
			s += (CB_DEF(c)->conj ? conj(cb_v(&x, i)) : cb_v(&x, i)) * cb_v(&y, i);
		cb_st(b->v[ri], x.cx, 0, s);
		break;
	}
	case L1_ASUM: {
		/* BLAS asum: |re| + |im| per element (the absolute value for real types) */
		double s = 0;
		for (int64_t i = 0; i < n; i++)
			s += fabs(creal(cb_v(&x, i))) + fabs(cimag(cb_v(&x, i)));
		b->v[ri][0] = s;
		break;
	}
	case L1_AXPY: {
		double complex alpha = cb_scalar(c, "alpha", "alpha_im");
		for (int64_t i = 0; i < n; i++)
			cb_vset(&y, i, cb_v(&y, i) + alpha * cb_v(&x, i));
		break;
	}
	case L1_SCAL: {
		double complex alpha = cb_scalar(c, "alpha", "alpha_im");
		for (int64_t i = 0; i < n; i++)
			cb_vset(&x, i, alpha * cb_v(&x, i));
		break;
	}
	case L1_SWAP:
		for (int64_t i = 0; i < n; i++) {
			double complex t = cb_v(&x, i);
			cb_vset(&x, i, cb_v(&y, i));
			cb_vset(&y, i, t);
		}
		break;
	}
	return 0;
}

/* The family: every level-1 routine shares l1_setup and l1_ref (kind() tells them
 * apart by the category). */
#define L1(cat, inpl, dev) .category = cat, .setup = l1_setup, .ref = l1_ref, .inplace = inpl, .deviation = dev

/* The three grids of a routine: small, the increments and edges (n values nmid, incx
 * values xmid), and the large size big; y1..y3 are the incy parameters of the routines
 * with two vectors (negative increments allowed), empty for the others; then any
 * further parameters (alpha). */
#define L1_GRIDS(dtn, big, nmid, xmid, y1, y2, y3, ...)                                                 \
	{ .params = { { "dtype", dtn }, { "n", "10" }, { "incx", "1" }, y1 __VA_ARGS__ } },              \
	{ .params = { { "dtype", dtn }, { "n", nmid }, { "incx", xmid }, y2 __VA_ARGS__ } },              \
	{ .params = { { "dtype", dtn }, { "n", big }, { "incx", "1" }, y3 __VA_ARGS__ } }
#define INCY(v) { "incy", v },
#define XY_GRIDS(dtn, big, ...) L1_GRIDS(dtn, big, "1 1000", "1 3 -2", INCY("2"), INCY("1 2 -1"), INCY("1"), __VA_ARGS__)
#define X_GRIDS(dtn, big, ...) L1_GRIDS(dtn, big, "1 1000 4099", "1 2 5", , , , __VA_ARGS__)

static const cb_op_t op_ccopy = CB_OP(L1("blas1-copy", false, TRIM), "cublasCcopy_v2", c64, CB_1, 99, "x:in y:out",
      "y[i] = x[i] for i < n, x and y with increments incx, incy (negative: walked backwards); "
      "elements of y between the strides are left untouched",
      XY_GRIDS("c64", "65536"));
static const cb_op_t op_dcopy = CB_OP(L1("blas1-copy", false, TRIM), "cublasDcopy_v2", f64, CB_1, 63, "x:in y:out",
      "y[i] = x[i] for i < n, increments incx, incy (negative: walked backwards)", XY_GRIDS("f64", "131072"));
static const cb_op_t op_cdotu = CB_OP(L1("blas1-dotu", false, TRIM), "cublasCdotu_v2", c64, CB_1, 99,
      "x:in y:in result:out",
      "result = sum_i x[i] * y[i] (no conjugation), increments may be negative; result is a 0-d "
      "c64 tensor (device pointer mode)",
      XY_GRIDS("c64", "262144"));
static const cb_op_t op_sdot = CB_OP(L1("blas1-dot", false, TRIM), "cublasSdot_v2", f32, CB_1, 99,
      "x:in y:in result:out", "result = sum_i x[i] * y[i], increments may be negative; result is a 0-d f32 tensor",
      XY_GRIDS("f32", "262144"));
static const cb_op_t op_zdotc = CB_OP(L1("blas1-dotc", false, TRIM), "cublasZdotc_v2", c128, CB_CONJ, 60,
      "x:in y:in result:out",
      "result = sum_i conj(x[i]) * y[i], increments may be negative; result is a 0-d c128 tensor",
      XY_GRIDS("c128", "262144"));
static const cb_op_t op_dasum = CB_OP(L1("blas1-asum", false, NULL), "cublasDasum_v2", f64, CB_1, 18,
      "x:in result:out", "result = sum_i |x[i]|, increment incx >= 1; result is a 0-d f64 tensor", X_GRIDS("f64", "262144"));
static const cb_op_t op_daxpy = CB_OP(L1("blas1-axpy", true, TRIM), "cublasDaxpy_v2", f64, CB_1, 144,
      "x:in y:inout alpha",
      "y[i] = alpha * x[i] + y[i], increments may be negative; elements between the strides of y "
      "are left untouched",
      XY_GRIDS("f64", "131072", { "alpha", "-0.75" }));
static const cb_op_t op_sscal = CB_OP(L1("blas1-scal", true, TRIM), "cublasSscal_v2", f32, CB_1, 216,
      "x:inout alpha", "x[i] = alpha * x[i], increment incx >= 1, in place",
      X_GRIDS("f32", "131072", { "alpha", "2.5 -0.5" }));
static const cb_op_t op_zswap = CB_OP(L1("blas1-swap", true, TRIM), "cublasZswap_v2", c128, CB_1, 36,
      "x:inout y:inout", "exchange x[i] and y[i] for i < n, increments may be negative, both in place",
      XY_GRIDS("c128", "65536"));

const kgb_op_t *const kgb_ops_cublas_blas1[] = {
	&op_ccopy.op, &op_dcopy.op, &op_cdotu.op, &op_sdot.op, &op_zdotc.op, &op_dasum.op, &op_daxpy.op,
	&op_sscal.op, &op_zswap.op, NULL,
};
