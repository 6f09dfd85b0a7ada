/* Shared helpers for the cuBLAS operator families (common/ops/cublas_blas*.c).
 *
 * Conventions (docs/operators.md, "cuBLAS"):
 * - Matrices are column-major as cuBLAS has them. A rows x cols matrix with leading
 *   dimension ld is a tensor of shape [cols, rows] with strides [ld, 1] and storage
 *   ld * cols; a batch of them is [batch, cols, rows] with strides [stride, ld, 1].
 * - Vectors of increment inc are 1-d tensors of stride |inc|; a negative increment
 *   (where BLAS allows one) walks the storage backwards: logical element i is storage
 *   element (n - 1 - i) * |inc|, as in the reference BLAS.
 * - Batched routines (pointer arrays) get, next to each batched tensor X, an int64
 *   tensor "Xarray" of [batch] element offsets: matrix i of the batch starts at element
 *   Xarray[i] of X's buffer. The offsets are a permutation of the slots, drawn per seed,
 *   different for every array, so a kernel that assumes the strided layout fails.
 * - Complex scalars are two scalars of the component type: "alpha" (real part) and
 *   "alpha_im" (imaginary part); fp16 routines take fp16 scalars.
 * - Mode symbols use cuBLAS's enum values: trans N=0 T=1 C=2, uplo lower=0 upper=1,
 *   side left=0 right=1, diag non-unit=0 unit=1. */
#ifndef KGB_CUBLAS_COMMON_H
#define KGB_CUBLAS_COMMON_H

#include <complex.h>
/* glibc's complex.h defines CMPLX for gcc only; clang (the fuzz build) has the builtin */
#if !defined(CMPLX) && defined(__clang__)
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#include <stdbool.h>
#include <stdint.h>
#include "catalog.h"

typedef enum { CB_SINGLE = 0, CB_BATCHED, CB_STRIDED } cb_batch_t;
/* Where a level-2 routine's matrix A lives: all of it (gemv, ger), the uplo triangle of
 * a full array (symv, syr2, trsv) or a band of k off-diagonals (sbmv, tbmv). */
typedef enum { CB_GENERAL = 0, CB_TRIANGLE, CB_BAND } cb_layout_t;

/* A cuBLAS operator: the catalog sees &x.op; the family's setup and reference get the
 * rest back with CB_DEF(c). */
typedef struct cb_op {
	kgb_op_t op;
	kgb_dtype_t dt;        /* element type of the vectors and matrices (C's for Ex) */
	cb_batch_t batch;
	bool i64;              /* the _64 variant: integer arguments are 64-bit */
	bool conj;             /* dotc / gerc: conjugate x (dotc) or y (gerc) */
	cb_layout_t layout;    /* level 2: A's storage */
} cb_op_t;

#define CB_DEF(c) ((const cb_op_t *)(const void *)(c)->op)

/* The operator tables. A family (gemv, gemm, ...) writes its fixed fields once, as a
 * macro of designated kgb_op_t initializers (category, setup, ref, gen_inputs,
 * inplace, deviation), and each of its S/D/C/Z, batched and _64 variants is one row:
 *   static const cb_op_t op_x = CB_OP(FAMILY, "cublasXname", c64, CB_1, declared cases, signature,
 *                                     summary, grids...);
 * The element type token t gives both .dt (CB_DT_t) and the listed dtypes (CB_DTS_t). The
 * variant is one of CB_1 (single), CB_B (pointer arrays), CB_S (strided batch), CB_B64,
 * CB_S64 (their _64 forms), CB_CONJ (dotc, gerc), CB_TRI and CB_BND (level-2 layouts).
 * Every cuBLAS operator is in the cublas dataset with one smoke grid. */
#define CB_DT_f16 KGB_DT_F16
#define CB_DT_f32 KGB_DT_F32
#define CB_DT_f64 KGB_DT_F64
#define CB_DT_c64 KGB_DT_C64
#define CB_DT_c128 KGB_DT_C128
#define CB_DTS_f16 "f16"
#define CB_DTS_f32 "f32"
#define CB_DTS_f64 "f64"
#define CB_DTS_c64 "c64"
#define CB_DTS_c128 "c128"
#define CB_1 .batch = CB_SINGLE
#define CB_B .batch = CB_BATCHED
#define CB_S .batch = CB_STRIDED
#define CB_B64 .batch = CB_BATCHED, .i64 = true
#define CB_S64 .batch = CB_STRIDED, .i64 = true
#define CB_CONJ .conj = true
#define CB_TRI .layout = CB_TRIANGLE
#define CB_BND .layout = CB_BAND
#define CB_OP(fam, nm, t, var, ncases, sig, summ, ...) \
	{ .op = { fam, .name = nm, .source = "cublas", .dtypes = CB_DTS_##t, .datasets = KGB_DS_CUBLAS, \
	          .summary = summ, .signature = sig, .declared_cases = ncases, .smoke_grids = 1, \
	          .grids = { __VA_ARGS__ } }, .dt = CB_DT_##t, var }
/* The deviation of the operators whose grids keep the modes, the edges and one large
 * size of the public ones. */
#define CB_TRIM "grid trimmed to the modes, edges and one large size (docs/operators.md)"

/* Parameter parsing. Each returns the mode (cuBLAS enum value), or -1 with err
 * naming the operator, case and value. */
int cb_trans(const kgb_case_t *c, const char *param, bool allow_c, char *err, size_t errlen);
int cb_uplo(const kgb_case_t *c, char *err, size_t errlen);
int cb_side(const kgb_case_t *c, char *err, size_t errlen);
int cb_diag(const kgb_case_t *c, char *err, size_t errlen);
/* The case's element dtype: grid parameter "dtype" when present (it labels the case),
 * else the operator's. */
kgb_dtype_t cb_dtype(const kgb_case_t *c);

/* A column-major rows x cols matrix with leading dimension ld (see the top). nbatch 0:
 * a 2-d tensor; else [nbatch, cols, rows] with batch stride sbatch (>= ld * cols),
 * rounded up for pointer-array routines to a multiple of CB_PTR_ALIGN bytes: cuBLAS
 * documents that the items of a *Batched call must be 16-byte aligned when its math mode
 * may use tensor cores (the fp16 ones do by default), since it cannot inspect the
 * pointers, which live in device memory. */
#define CB_PTR_ALIGN 16
kgb_tensor_t *cb_matrix(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int64_t rows,
                        int64_t cols, int64_t ld, int64_t nbatch, int64_t sbatch);
/* A vector of n elements and increment inc (stride |inc|); batched like cb_matrix. */
kgb_tensor_t *cb_vector(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int64_t n,
                        int64_t inc, int64_t nbatch, int64_t sbatch);
/* The int64 offset array of a batched routine (name: "Aarray", ...; static string). */
void cb_ptr_array(kgb_case_t *c, const char *name, int64_t nbatch);
/* Add the batch tensors of matrix/vector `name`: for CB_BATCHED its pointer array
 * `arr`, for CB_STRIDED the symbol `ssym` (its batch stride). */
void cb_batch_extras(kgb_case_t *c, const char *name, const char *arr, const char *ssym);
/* The batch count of a batched routine's case (grid parameter "batch"): 0 for a single
 * routine, -1 with err when below 1. */
int64_t cb_batch_param(const kgb_case_t *c, char *err, size_t errlen);
/* For a batched routine (nb > 0): the symbol "batch" and the batch tensors of the
 * matrices and vectors `names` (space-separated, of A B C x y). */
void cb_batch_setup(kgb_case_t *c, int64_t nb, const char *names);

/* The scalars alpha (grid parameter, default 1) and, with_beta, beta (default 0); complex
 * routines get the imaginary parts 0.5 and -0.25 where the real part is not 0 (fixed,
 * so that the grids stay small). */
void cb_alpha_beta(kgb_case_t *c, bool with_beta);
/* Add scalar `name` of the case's element type (and `name`_im for complex ones). */
void cb_add_scalar(kgb_case_t *c, const char *name, const char *name_im, double re, double im);
/* Its value (0 imaginary part for real routines). */
double complex cb_scalar(const kgb_case_t *c, const char *name, const char *name_im);

/* An integer symbol set by setup (aborts if missing: a catalog bug). */
int64_t cb_sym(const kgb_case_t *c, const char *name);

/* Element access on host buffers (complex when cx: two doubles per element). */
static inline double complex cb_ld(const double *v, bool cx, size_t off)
{
	return cx ? CMPLX(v[2 * off], v[2 * off + 1]) : v[off];
}

static inline void cb_st(double *v, bool cx, size_t off, double complex z)
{
	if (cx) {
		v[2 * off] = creal(z);
		v[2 * off + 1] = cimag(z);
	} else {
		v[off] = creal(z);
	}
}

/* A matrix of one batch item, ready for element access: element (i, j) is
 * v[base + j * ld + i]. */
typedef struct cb_mat {
	double *v;
	bool cx;
	size_t base;
	int64_t ld;
} cb_mat_t;

static inline double complex cb_m(const cb_mat_t *m, int64_t i, int64_t j)
{
	return cb_ld(m->v, m->cx, m->base + (size_t)(j * m->ld + i));
}

static inline void cb_mset(const cb_mat_t *m, int64_t i, int64_t j, double complex z)
{
	cb_st(m->v, m->cx, m->base + (size_t)(j * m->ld + i), z);
}

/* A vector of one batch item: logical element i (increment sign applied). */
typedef struct cb_vec {
	double *v;
	bool cx;
	size_t base;
	int64_t inc, n;
} cb_vec_t;

static inline size_t cb_voff(const cb_vec_t *x, int64_t i)
{
	return x->base + (size_t)(x->inc >= 0 ? i * x->inc : (x->n - 1 - i) * -x->inc);
}

static inline double complex cb_v(const cb_vec_t *x, int64_t i)
{
	return cb_ld(x->v, x->cx, cb_voff(x, i));
}

static inline void cb_vset(const cb_vec_t *x, int64_t i, double complex z)
{
	cb_st(x->v, x->cx, cb_voff(x, i), z);
}

/* Batch item `bi` of matrix `name` (the offset from its pointer array, its batch
 * stride, or 0). */
cb_mat_t cb_mat(const kgb_case_t *c, kgb_hostbufs_t *b, const char *name, int64_t bi);
/* Batch item `bi` of vector `name` with n elements and increment symbol `incsym`. */
cb_vec_t cb_vec(const kgb_case_t *c, kgb_hostbufs_t *b, const char *name, int64_t n, const char *incsym,
                int64_t bi);

/* The batch count of the case (1 for single routines). */
int64_t cb_nbatch(const kgb_case_t *c);

/* The common input rule: pointer arrays get a permutation of their slots, and when the
 * case's beta is 0 the view of the output that beta scales ("C" or "y") is filled with
 * NaN (cuBLAS does not read it then; a kernel that computes 0 * C fails). */
void cb_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b);

/* Finish a setup: reduce length, the default tolerance (then loosened for fp16
 * compute when the op is an H routine), the int64 symbol, and the timed flag: the
 * cases of the operator's last grid (its large size) are the timed ones. */
void cb_finish(kgb_case_t *c, double reduce_len);

#endif
