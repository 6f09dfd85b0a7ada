/* Helpers shared by the cuBLAS operator families (see cublas_common.h). */
#include "cublas_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "util.h"

static int mode(const kgb_case_t *c, const char *param, const char *const *names, int n, char *err,
                size_t errlen)
{
	const char *s = kgb_case_pstr(c, param, NULL);
	if (!s)
		return kgb_err(err, errlen, "op %s case %u: the grid has no parameter '%s'", c->op->name, c->index,
		               param);
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return kgb_err(err, errlen, "op %s case %u: %s = '%s' is not one of %s%s%s%s%s", c->op->name, c->index,
	               param, s, names[0], n > 1 ? " " : "", n > 1 ? names[1] : "", n > 2 ? " " : "",
	               n > 2 ? names[2] : "");
}

/* "N" 0, "T" 1, "C" 2 (C only where allow_c: complex routines that take it). */
int cb_trans(const kgb_case_t *c, const char *param, bool allow_c, char *err, size_t errlen)
{
	static const char *const names[] = { "N", "T", "C" };
	return mode(c, param, names, allow_c ? 3 : 2, err, errlen);
}

/* "L" 0 (CUBLAS_FILL_MODE_LOWER), "U" 1. */
int cb_uplo(const kgb_case_t *c, char *err, size_t errlen)
{
	static const char *const names[] = { "L", "U" };
	return mode(c, "uplo", names, 2, err, errlen);
}

/* "L" 0 (CUBLAS_SIDE_LEFT), "R" 1. */
int cb_side(const kgb_case_t *c, char *err, size_t errlen)
{
	static const char *const names[] = { "L", "R" };
	return mode(c, "side", names, 2, err, errlen);
}

/* "N" 0 (CUBLAS_DIAG_NON_UNIT), "U" 1. */
int cb_diag(const kgb_case_t *c, char *err, size_t errlen)
{
	static const char *const names[] = { "N", "U" };
	return mode(c, "diag", names, 2, err, errlen);
}

/* Grid parameter "dtype" when present, else the operator's element type. */
kgb_dtype_t cb_dtype(const kgb_case_t *c)
{
	const char *s = kgb_case_pstr(c, "dtype", NULL);
	kgb_dtype_t dt;
	if (!s)
		return CB_DEF(c)->dt;
	KGB_ASSERT_MSG(kgb_dtype_parse(s, &dt) == 0, "op %s: dtype '%s'", c->op->name, s);
	return dt;
}

/* sbatch, rounded up for a pointer-array routine so that every item starts on a
 * CB_PTR_ALIGN-byte boundary (see the header). */
static int64_t ptr_stride(const kgb_case_t *c, kgb_dtype_t dt, int64_t sbatch)
{
	int64_t q = CB_PTR_ALIGN / (int64_t)kgb_dtype_size(dt);
	if (CB_DEF(c)->batch != CB_BATCHED || q <= 1)
		return sbatch;
	return (sbatch + q - 1) / q * q;
}

/* Column-major matrix (see the header). */
kgb_tensor_t *cb_matrix(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int64_t rows,
                        int64_t cols, int64_t ld, int64_t nbatch, int64_t sbatch)
{
	kgb_tensor_t *t;
	KGB_ASSERT_MSG(ld >= KGB_MAX(rows, 1), "op %s %s: ld %lld < rows %lld", c->op->name, name,
	               (long long)ld, (long long)rows);
	if (nbatch == 0) {
		int64_t sh[2] = { cols, rows };
		t = kgb_case_add_tensor(c, name, role, dt, 2, sh);
		t->stride[0] = ld;
		t->stride[1] = 1;
		kgb_tensor_finish(t);
		t->storage = (size_t)(ld * cols);
	} else {
		int64_t sh[3] = { nbatch, cols, rows };
		sbatch = ptr_stride(c, dt, sbatch);
		KGB_ASSERT_MSG(sbatch >= ld * cols, "op %s %s: batch stride %lld < %lld", c->op->name, name,
		               (long long)sbatch, (long long)(ld * cols));
		t = kgb_case_add_tensor(c, name, role, dt, 3, sh);
		t->stride[0] = sbatch;
		t->stride[1] = ld;
		t->stride[2] = 1;
		kgb_tensor_finish(t);
		t->storage = (size_t)(sbatch * nbatch);
	}
	return t;
}

/* Vector of increment inc (see the header). */
kgb_tensor_t *cb_vector(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int64_t n,
                        int64_t inc, int64_t nbatch, int64_t sbatch)
{
	kgb_tensor_t *t;
	int64_t a = inc < 0 ? -inc : inc;
	KGB_ASSERT_MSG(a >= 1, "op %s %s: increment 0", c->op->name, name);
	if (nbatch == 0) {
		t = kgb_case_add_tensor(c, name, role, dt, 1, &n);
		t->stride[0] = a;
	} else {
		int64_t sh[2] = { nbatch, n };
		sbatch = ptr_stride(c, dt, sbatch);
		KGB_ASSERT_MSG(sbatch >= (n - 1) * a + 1, "op %s %s: batch stride %lld too small", c->op->name, name,
		               (long long)sbatch);
		t = kgb_case_add_tensor(c, name, role, dt, 2, sh);
		t->stride[0] = sbatch;
		t->stride[1] = a;
	}
	kgb_tensor_finish(t);
	return t;
}

/* int64 [nbatch] offsets, filled by cb_gen. */
void cb_ptr_array(kgb_case_t *c, const char *name, int64_t nbatch)
{
	kgb_tensor_t *t = kgb_case_add_tensor(c, name, KGB_ROLE_IN, KGB_DT_I64, 1, &nbatch);
	t->gen = KGB_GEN_ZERO;
}

/* The pointer array or batch-stride symbol of batched tensor `name`. */
void cb_batch_extras(kgb_case_t *c, const char *name, const char *arr, const char *ssym)
{
	kgb_tensor_t *t = kgb_case_tensor(c, name);
	KGB_ASSERT(t != NULL && t->ndim >= 2);
	if (CB_DEF(c)->batch == CB_BATCHED)
		cb_ptr_array(c, arr, t->shape[0]);
	else if (CB_DEF(c)->batch == CB_STRIDED)
		kgb_case_set_sym(c, ssym, t->stride[0]);
}

/* Batch count parameter (see the header). */
int64_t cb_batch_param(const kgb_case_t *c, char *err, size_t errlen)
{
	int64_t nb;
	if (CB_DEF(c)->batch == CB_SINGLE)
		return 0;
	nb = kgb_case_pint(c, "batch", 0);
	if (nb < 1)
		return kgb_err(err, errlen, "op %s case %u: batch must be >= 1", c->op->name, c->index);
	return nb;
}

/* The batch symbol and tensors (see the header). */
void cb_batch_setup(kgb_case_t *c, int64_t nb, const char *names)
{
	static const char *const tab[][3] = {
		{ "A", "Aarray", "strideA" }, { "B", "Barray", "strideB" }, { "C", "Carray", "strideC" },
		{ "x", "xarray", "stridex" }, { "y", "yarray", "stridey" },
	};
	if (CB_DEF(c)->batch == CB_SINGLE)
		return;
	kgb_case_set_sym(c, "batch", nb);
	for (const char *p = names; *p; p++)
		for (size_t i = 0; i < KGB_ARRAY_LEN(tab); i++)
			if (*p == tab[i][0][0])
				cb_batch_extras(c, tab[i][0], tab[i][1], tab[i][2]);
}

/* Scalars travel in the component type of the case's dtype (f16 for H routines). */
void cb_add_scalar(kgb_case_t *c, const char *name, const char *name_im, double re, double im)
{
	kgb_dtype_t dt = cb_dtype(c);
	kgb_dtype_t st = kgb_dtype_component(dt);
	kgb_case_add_scalar(c, name, st, re);
	if (kgb_dtype_is_complex(dt))
		kgb_case_add_scalar(c, name_im, st, im);
}

/* alpha and beta (see the header). */
void cb_alpha_beta(kgb_case_t *c, bool with_beta)
{
	double a = kgb_case_pfloat(c, "alpha", 1.0), b = kgb_case_pfloat(c, "beta", 0.0);
	cb_add_scalar(c, "alpha", "alpha_im", a, a != 0 ? 0.5 : 0);
	if (with_beta)
		cb_add_scalar(c, "beta", "beta_im", b, b != 0 ? -0.25 : 0);
}

static double scalar_or(const kgb_case_t *c, const char *name, double dflt)
{
	for (int i = 0; i < c->nscalars; i++)
		if (strcmp(c->s[i].name, name) == 0)
			return c->s[i].value;
	return dflt;
}

/* Scalar value as a complex number (0 imaginary part for real routines). */
double complex cb_scalar(const kgb_case_t *c, const char *name, const char *name_im)
{
	double re = scalar_or(c, name, NAN);
	KGB_ASSERT_MSG(!isnan(re), "op %s: no scalar %s", c->op->name, name);
	return CMPLX(re, name_im ? scalar_or(c, name_im, 0.0) : 0.0);
}

/* Integer symbol (aborts if missing). */
int64_t cb_sym(const kgb_case_t *c, const char *name)
{
	kgb_value_t v;
	KGB_ASSERT_MSG(kgb_symtab_get(c->sym, name, &v), "op %s: no symbol %s", c->op->name, name);
	return v.is_float ? (int64_t)v.f : v.i;
}

/* Batch count: the first dimension of the first batched tensor, else 1. */
int64_t cb_nbatch(const kgb_case_t *c)
{
	kgb_value_t v;
	if (CB_DEF(c)->batch == CB_SINGLE)
		return 1;
	if (kgb_symtab_get(c->sym, "batch", &v))
		return v.i;
	return 1;
}

static size_t batch_base(const kgb_case_t *c, const kgb_hostbufs_t *b, const kgb_tensor_t *t, int batched_ndim,
                         int64_t bi)
{
	char an[64];
	int ai;
	if (t->ndim != batched_ndim)
		return 0;
	if (CB_DEF(c)->batch == CB_STRIDED)
		return (size_t)(bi * t->stride[0]);
	snprintf(an, sizeof an, "%sarray", t->name);
	ai = kgb_case_tensor_index(c, an);
	KGB_ASSERT_MSG(ai >= 0, "op %s: no pointer array %s", c->op->name, an);
	return (size_t)b->v[ai][bi];
}

/* Tensor `name` of the case, its values in b, whether it is complex, and where batch
 * item bi starts (batched_ndim: its rank when batched). */
static const kgb_tensor_t *item(const kgb_case_t *c, kgb_hostbufs_t *b, const char *name, int batched_ndim,
                                int64_t bi, double **v, bool *cx, size_t *base)
{
	int ti = kgb_case_tensor_index(c, name);
	KGB_ASSERT_MSG(ti >= 0, "op %s: no tensor %s", c->op->name, name);
	*v = b->v[ti];
	*cx = kgb_dtype_is_complex(c->t[ti].dtype);
	*base = batch_base(c, b, &c->t[ti], batched_ndim, bi);
	return &c->t[ti];
}

/* Batch item bi of matrix `name`. */
cb_mat_t cb_mat(const kgb_case_t *c, kgb_hostbufs_t *b, const char *name, int64_t bi)
{
	cb_mat_t m;
	const kgb_tensor_t *t = item(c, b, name, 3, bi, &m.v, &m.cx, &m.base);
	m.ld = t->ndim == 3 ? t->stride[1] : t->stride[0];
	return m;
}

/* Batch item bi of vector `name`. */
cb_vec_t cb_vec(const kgb_case_t *c, kgb_hostbufs_t *b, const char *name, int64_t n, const char *incsym,
                int64_t bi)
{
	cb_vec_t x;
	item(c, b, name, 2, bi, &x.v, &x.cx, &x.base);
	x.inc = cb_sym(c, incsym);
	x.n = n;
	return x;
}

static void nan_fill(const kgb_tensor_t *t, double *v)
{
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	size_t L = (size_t)kgb_dtype_lanes(t->dtype);
	if (t->numel == 0)
		return;
	do {
		size_t o = kgb_tensor_offset(t, idx) * L;
		for (size_t l = 0; l < L; l++)
			v[o + l] = NAN;
	} while (kgb_index_next(t, idx));
}

/* Pointer arrays and the NaN output for beta = 0 (see the header). */
void cb_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	size_t shift = 0;
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		size_t l = strlen(t->name), nb = t->numel;
		char base[64];
		const kgb_tensor_t *mt;
		double *perm;
		if (t->dtype != KGB_DT_I64 || l <= 5 || strcmp(t->name + l - 5, "array") != 0)
			continue;
		snprintf(base, sizeof base, "%.*s", (int)(l - 5), t->name);
		mt = kgb_case_tensor(c, base);
		KGB_ASSERT_MSG(mt != NULL, "op %s: %s has no matrix", c->op->name, t->name);
		perm = kgb_xmalloc((nb ? nb : 1) * sizeof *perm);
		for (size_t k = 0; k < nb; k++)
			perm[k] = (double)k;
		kgb_ops_shuffle(rng, perm, nb);
		/* item perm[j] lives in slot perm[(j + shift) % nb]: a shift of 1, 2, 3...
		 * for the first, second, third array of the case, so (with 4 or more
		 * items) every array moves every item and no two arrays agree, and a kernel
		 * that assumes the strided layout, or one array's order for all, fails */
		shift++;
		for (size_t j = 0; j < nb; j++)
			b->v[i][(size_t)perm[j]] = (double)((int64_t)perm[(j + shift) % nb] * mt->stride[0]);
		free(perm);
	}
	if (!isnan(scalar_or(c, "beta", NAN)) && scalar_or(c, "beta", 1) == 0 && scalar_or(c, "beta_im", 0) == 0) {
		for (int i = 0; i < c->ntensors; i++) {
			const kgb_tensor_t *t = &c->t[i];
			if (t->role == KGB_ROLE_INOUT && (strcmp(t->name, "C") == 0 || strcmp(t->name, "y") == 0))
				nan_fill(t, b->v[i]);
		}
	}
}

/* Tolerance, timing flag and the common symbols (see the header). */
void cb_finish(kgb_case_t *c, double reduce_len)
{
	int ngrids = 0;
	while (ngrids < KGB_MAX_GRIDS && c->op->grids[ngrids].params[0].name)
		ngrids++;
	c->reduce_len = reduce_len > 1 ? reduce_len : 1;
	c->timed = c->grid == ngrids - 1;
	kgb_case_default_tol(c);
	/* H routines compute in fp16 (CUBLAS_COMPUTE_16F): every partial sum is rounded
	 * to fp16, so the error grows with the reduction at fp16's unit roundoff
	 * (2^-11 ~ 4.9e-4) times sqrt(k) for random data; allow twice that, capped at 5%
	 * of the largest output so constants and zeros still fail. */
	if (strncmp(c->op->name, "cublasH", 7) == 0) {
		c->rtol = 2e-3;
		c->atol_rel = KGB_MIN(0.05, 1e-3 * sqrt(c->reduce_len));
	}
	kgb_case_set_sym(c, "int64", CB_DEF(c)->i64 ? 1 : 0);
	if (CB_DEF(c)->batch == CB_SINGLE)
		kgb_case_set_sym(c, "batch", 1);
}
