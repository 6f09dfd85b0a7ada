/* Native cuBLAS candidates: one table from the 50 operators of the cuBLAS dataset to
 * their routine families, the case's arguments read from its symbols (the ones the
 * catalog sets for plans: docs/operators.md, "cuBLAS"), and one call per family,
 * written once against cuBLAS's argument order, which hipBLAS shares. See
 * native_blas.h and docs/native.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native_blas.h"
#include "backends/blas.h"
#include "dtype.h"
#include "util.h"

typedef enum {
	F_COPY, F_SWAP, F_DOT, F_ASUM, F_AXPY, F_SCAL,
	F_GEMV, F_GEMV_B, F_GEMV_SB, F_GER, F_SYMV, F_SBMV, F_SYR2, F_TBMV, F_TRSV,
	F_GEMM, F_GEMM_B, F_GEMM_SB, F_GEMM_EX, F_SYMM, F_SYRK, F_SYRK_EX, F_TRSM, F_TRSM_B, F_GEAM, F_DGMM,
} fam_t;

typedef struct entry {
	const char *name;            /* the operator, which is also cuBLAS's exported symbol */
	fam_t fam;
} entry_t;

static const entry_t table[] = {
	/* level 1 */
	{ "cublasCcopy_v2", F_COPY }, { "cublasDcopy_v2", F_COPY }, { "cublasCdotu_v2", F_DOT },
	{ "cublasSdot_v2", F_DOT }, { "cublasZdotc_v2", F_DOT }, { "cublasDasum_v2", F_ASUM },
	{ "cublasDaxpy_v2", F_AXPY }, { "cublasSaxpy_v2", F_AXPY }, { "cublasSscal_v2", F_SCAL },
	{ "cublasZswap_v2", F_SWAP },
	/* level 2 */
	{ "cublasCgemv_v2", F_GEMV }, { "cublasDgemv_v2", F_GEMV },
	{ "cublasCgemvBatched_64", F_GEMV_B }, { "cublasDgemvBatched", F_GEMV_B },
	{ "cublasSgemvBatched", F_GEMV_B }, { "cublasZgemvBatched", F_GEMV_B },
	{ "cublasCgemvStridedBatched", F_GEMV_SB }, { "cublasDgemvStridedBatched", F_GEMV_SB },
	{ "cublasSgemvStridedBatched", F_GEMV_SB }, { "cublasZgemvStridedBatched", F_GEMV_SB },
	{ "cublasSger_v2", F_GER }, { "cublasCgeru_v2", F_GER }, { "cublasZgerc_v2", F_GER },
	{ "cublasCsymv_v2", F_SYMV }, { "cublasDsbmv_v2", F_SBMV }, { "cublasDsyr2_v2", F_SYR2 },
	{ "cublasStbmv_v2", F_TBMV }, { "cublasStrsv_v2", F_TRSV },
	/* level 3 */
	{ "cublasCgemm_v2", F_GEMM }, { "cublasSgemm_v2", F_GEMM },
	{ "cublasCgemmStridedBatched", F_GEMM_SB }, { "cublasCgemmStridedBatched_64", F_GEMM_SB },
	{ "cublasDgemmStridedBatched", F_GEMM_SB }, { "cublasDgemmStridedBatched_64", F_GEMM_SB },
	{ "cublasHgemmStridedBatched", F_GEMM_SB }, { "cublasSgemmStridedBatched", F_GEMM_SB },
	{ "cublasZgemmStridedBatched", F_GEMM_SB },
	{ "cublasDgemmBatched", F_GEMM_B }, { "cublasHgemmBatched", F_GEMM_B },
	{ "cublasSgemmBatched_64", F_GEMM_B }, { "cublasZgemmBatched", F_GEMM_B },
	{ "cublasSgemmEx", F_GEMM_EX }, { "cublasCsymm_v2", F_SYMM }, { "cublasSsyrk_v2", F_SYRK },
	{ "cublasCsyrkEx", F_SYRK_EX }, { "cublasStrsm_v2", F_TRSM },
	{ "cublasDtrsmBatched", F_TRSM_B }, { "cublasZtrsmBatched", F_TRSM_B },
	{ "cublasSgeam", F_GEAM }, { "cublasSdgmm", F_DGMM },
};

static const entry_t *find_entry(const char *name)
{
	for (size_t i = 0; i < KGB_ARRAY_LEN(table); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

bool kgb_nblas_has_op(const kgb_op_t *op)
{
	return op && find_entry(op->name) != NULL;
}

size_t kgb_nblas_nops(void)
{
	return KGB_ARRAY_LEN(table);
}

const char *kgb_nblas_op_name(size_t i)
{
	return i < KGB_ARRAY_LEN(table) ? table[i].name : NULL;
}

/* ---- the job's library ---- */

struct kgb_nblas {
	const kgb_backend_t *be;
	void *ctx;
	kgb_blas_t *lib;
};

int kgb_nblas_open(const kgb_backend_t *be, void *ctx, kgb_nblas_t **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!be->blas || !be->stream || !be->addr) {
		kgb_err(err, errlen, "the %s backend has no BLAS library for native cuBLAS operators", be->name);
		return KGB_BE_UNSUPPORTED;
	}
	kgb_blas_t *lib = NULL;
	bool unsupported = false;
	char e[900];
	if (kgb_blas_open(be->blas, be->stream(ctx), &lib, &unsupported, e, sizeof e) != 0) {
		kgb_err(err, errlen, "%s backend: %s", be->name, e);
		return unsupported ? KGB_BE_UNSUPPORTED : KGB_BE_ERR;
	}
	kgb_nblas_t *nb = kgb_xcalloc(1, sizeof *nb);
	nb->be = be;
	nb->ctx = ctx;
	nb->lib = lib;
	*out = nb;
	return KGB_BE_OK;
}

void kgb_nblas_close(kgb_nblas_t **pnb, bool skip_device)
{
	kgb_nblas_t *nb = pnb ? *pnb : NULL;
	if (!nb)
		return;
	kgb_blas_close(&nb->lib, skip_device);
	free(nb);
	*pnb = NULL;
}

const char *kgb_nblas_version(const kgb_nblas_t *nb)
{
	return nb->lib->version;
}

/* ---- one case ---- */

enum { O_A, O_B, O_C, O_X, O_Y, O_R, O_N };
static const char *const oname[O_N] = { "A", "B", "C", "x", "y", "result" };
static const char *const aname[O_N] = { "Aarray", "Barray", "Carray", "xarray", "yarray", NULL };

struct kgb_nblas_case {
	kgb_nblas_t *nb;
	const kgb_case_t *c;
	const entry_t *e;
	fam_t fam;                   /* may differ from e->fam on hipBLAS (CsyrkEx -> Csyrk) */
	char routine[64];
	void *fn;
	bool i64, hip_ex;
	int64_t m, n, k, lda, ldb, ldc, incx, incy, sa, sb, sc, batch;
	int ta, tb, uplo, side, diag;          /* vendor values */
	int atype, btype, ctype;               /* Ex routines */
	uint8_t alpha[16], beta[16];
	int ti[O_N];                           /* tensor index of each operand, -1 if none */
	void *p[O_N];                          /* device addresses */
	kgb_dbuf_t *arr[2][O_N];               /* device pointer arrays per input set */
	void *pa[2][O_N];
	const int *set;
};

static int64_t sym_or(const kgb_case_t *c, const char *name, int64_t dflt)
{
	kgb_value_t v;
	if (!kgb_symtab_get(c->sym, name, &v))
		return dflt;
	return v.is_float ? (int64_t)v.f : v.i;
}

static double scalar_or(const kgb_case_t *c, const char *name, double dflt)
{
	for (int i = 0; i < c->nscalars; i++)
		if (strcmp(c->s[i].name, name) == 0)
			return c->s[i].value;
	return dflt;
}

/* A host scalar of element type dt: real part re, imaginary part im (complex). */
static void pack(kgb_dtype_t dt, double re, double im, uint8_t *out)
{
	memset(out, 0, 16);
	switch (dt) {
	case KGB_DT_F64: memcpy(out, &re, 8); break;
	case KGB_DT_F16: { uint16_t h = kgb_f32_to_f16((float)re); memcpy(out, &h, 2); break; }
	case KGB_DT_C64: { float f[2] = { (float)re, (float)im }; memcpy(out, f, 8); break; }
	case KGB_DT_C128: { double d[2] = { re, im }; memcpy(out, d, 16); break; }
	default: { float f = (float)re; memcpy(out, &f, 4); break; }
	}
}

/* The element type of the operand the routine writes: C, A for ger and syr2, y, B for
 * trsm, else x. */
static kgb_dtype_t result_type(const kgb_case_t *c, const int *ti, fam_t f)
{
	int o = ti[O_C] >= 0 ? O_C : f == F_GER || f == F_SYR2 ? O_A : ti[O_Y] >= 0 ? O_Y : ti[O_B] >= 0 ? O_B : O_X;
	return ti[o] >= 0 ? c->t[ti[o]].dtype : KGB_DT_F32;
}

static int ex_type(const kgb_blas_enums_t *en, kgb_dtype_t dt)
{
	switch (dt) {
	case KGB_DT_F16: return en->r16f;
	case KGB_DT_BF16: return en->r16bf;
	case KGB_DT_I8: return en->r8i;
	case KGB_DT_C64: return en->c32f;
	default: return en->r32f;
	}
}

/* The library's routine for entry e (name in out) and the family it is called as. */
static fam_t routine_of(const kgb_blas_t *lib, const entry_t *e, char *out, size_t outlen)
{
	bool hip = strcmp(lib->flavor, "hipblas") == 0;
	kgb_blas_vendor_name(lib, e->name, out, outlen);
	if (hip && e->fam == F_GEMM_EX) {
		/* hipBLAS has no SgemmEx: its GemmEx with a 32-bit float compute type is the
		 * same computation (hipBLAS 2 calls the hipDataType form GemmEx_v2) */
		snprintf(out, outlen, "hipblasGemmEx_v2");
		if (!kgb_blas_sym(lib, out))
			snprintf(out, outlen, "hipblasGemmEx");
	} else if (hip && e->fam == F_SYRK_EX) {
		/* hipBLAS has no CsyrkEx; with A of type c64 (every case) it is Csyrk */
		snprintf(out, outlen, "hipblasCsyrk");
		return F_SYRK;
	}
	return e->fam;
}

int kgb_nblas_missing(const char *flavor, char *missing, size_t len)
{
	kgb_blas_t *lib = NULL;
	bool unsupported;
	int n = 0;
	size_t used = 0;
	missing[0] = 0;
	if (kgb_blas_load(flavor, &lib, &unsupported, missing, len) != 0)
		return -1;
	for (size_t i = 0; i < KGB_ARRAY_LEN(table); i++) {
		char name[64];
		routine_of(lib, &table[i], name, sizeof name);
		if (kgb_blas_sym(lib, name))
			continue;
		n++;
		int w = snprintf(missing + used, len - used, "%s%s", used ? " " : "", name);
		if (w > 0)
			used = KGB_MIN(used + (size_t)w, len - 1);
	}
	kgb_blas_close(&lib, true);
	return n;
}

int kgb_nblas_case_new(kgb_nblas_t *nb, const kgb_case_t *c, kgb_nblas_case_t **out, char *err, size_t errlen)
{
	const entry_t *e = find_entry(c->op->name);
	const kgb_blas_enums_t *en = nb->lib->en;
	*out = NULL;
	if (!e) {
		kgb_err(err, errlen, "operator %s has no native BLAS routine", c->op->name);
		return KGB_BE_UNSUPPORTED;
	}
	kgb_nblas_case_t *nc = kgb_xcalloc(1, sizeof *nc);
	nc->nb = nb;
	nc->c = c;
	nc->e = e;
	nc->fam = e->fam;
	size_t ln = strlen(e->name);
	nc->i64 = ln > 3 && strcmp(e->name + ln - 3, "_64") == 0;
	nc->fam = routine_of(nb->lib, e, nc->routine, sizeof nc->routine);
	nc->hip_ex = e->fam == F_GEMM_EX && strcmp(nb->lib->flavor, "hipblas") == 0;
	nc->fn = kgb_blas_sym(nb->lib, nc->routine);
	if (!nc->fn) {
		kgb_err(err, errlen, "%s (%s) has no %s", nb->lib->version, nb->lib->path, nc->routine);
		free(nc);
		return KGB_BE_UNSUPPORTED;
	}
	for (int o = 0; o < O_N; o++)
		nc->ti[o] = kgb_case_tensor_index(c, oname[o]);

	/* sizes, modes and increments: the symbols the catalog sets; the demo's Saxpy
	 * sets none, its tensors say it all */
	int xi = nc->ti[O_X], yi = nc->ti[O_Y];
	nc->n = sym_or(c, "n", xi >= 0 ? (int64_t)c->t[xi].numel : 0);
	nc->m = sym_or(c, "m", 0);
	nc->k = sym_or(c, "k", 0);
	nc->lda = sym_or(c, "lda", 1);
	nc->ldb = sym_or(c, "ldb", 1);
	nc->ldc = sym_or(c, "ldc", 1);
	nc->incx = sym_or(c, "incx", xi >= 0 && c->t[xi].ndim == 1 ? c->t[xi].stride[0] : 1);
	nc->incy = sym_or(c, "incy", yi >= 0 && c->t[yi].ndim == 1 ? c->t[yi].stride[0] : 1);
	nc->batch = sym_or(c, "batch", 1);
	nc->sa = sym_or(c, "strideA", 0);
	nc->sb = sym_or(c, "strideB", sym_or(c, "stridex", 0));
	nc->sc = sym_or(c, "strideC", sym_or(c, "stridey", 0));
	int64_t tr = sym_or(c, "trans", sym_or(c, "transa", 0)), trb = sym_or(c, "transb", 0),
	        up = sym_or(c, "uplo", 0), sd = sym_or(c, "side", 0), dg = sym_or(c, "diag", 0);
	if (tr < 0 || tr > 2 || trb < 0 || trb > 2 || up < 0 || up > 1 || sd < 0 || sd > 1 || dg < 0 || dg > 1) {
		kgb_err(err, errlen, "op %s case %u: a mode symbol is out of range", c->op->name, c->index);
		free(nc);
		return KGB_BE_ERR;
	}
	nc->ta = en->op[tr];
	nc->tb = en->op[trb];
	nc->uplo = en->fill[up];
	nc->side = en->side[sd];
	nc->diag = en->diag[dg];

	/* the scalars travel in the type of what the routine writes (fp16 for H routines) */
	kgb_dtype_t et = result_type(c, nc->ti, e->fam);
	pack(et, scalar_or(c, "alpha", 0), scalar_or(c, "alpha_im", 0), nc->alpha);
	pack(et, scalar_or(c, "beta", 0), scalar_or(c, "beta_im", 0), nc->beta);
	if (nc->ti[O_A] >= 0)
		nc->atype = ex_type(en, c->t[nc->ti[O_A]].dtype);
	if (nc->ti[O_B] >= 0)
		nc->btype = ex_type(en, c->t[nc->ti[O_B]].dtype);
	if (nc->ti[O_C] >= 0)
		nc->ctype = ex_type(en, c->t[nc->ti[O_C]].dtype);
	*out = nc;
	return KGB_BE_OK;
}

static bool batched(fam_t f)
{
	return f == F_GEMV_B || f == F_GEMM_B || f == F_TRSM_B;
}

int kgb_nblas_case_bind(kgb_nblas_case_t *nc, kgb_dbuf_t *const *views, uint8_t *const *packed_a,
                        uint8_t *const *packed_b, const int *set, char *err, size_t errlen)
{
	const kgb_backend_t *be = nc->nb->be;
	void *ctx = nc->nb->ctx;
	const kgb_case_t *c = nc->c;
	kgb_blas_t *lib = nc->nb->lib;
	nc->set = set;
	for (int o = 0; o < O_N; o++)
		nc->p[o] = nc->ti[o] >= 0 ? (void *)(uintptr_t)be->addr(ctx, views[nc->ti[o]]) : NULL;
	for (int o = 0; batched(nc->fam) && o < O_N; o++) {
		int ai = aname[o] ? kgb_case_tensor_index(c, aname[o]) : -1;
		if (ai < 0 || nc->ti[o] < 0)
			continue;
		const kgb_tensor_t *t = &c->t[nc->ti[o]], *at = &c->t[ai];
		size_t es = kgb_dtype_size(t->dtype), nb = at->numel;
		if (at->dtype != KGB_DT_I64 || (int64_t)nb != nc->batch)
			return kgb_err(err, errlen, "op %s case %u: %s is not an i64 tensor of %lld offsets", c->op->name,
			               c->index, aname[o], (long long)nc->batch), KGB_BE_ERR;
		uint64_t *ptrs = kgb_xcalloc(nb ? nb : 1, sizeof *ptrs);
		for (int s = 0; s < 2; s++) {
			const uint8_t *src = s ? packed_b[ai] : packed_a[ai];
			for (size_t i = 0; i < nb; i++) {
				int64_t off;
				memcpy(&off, src + i * 8, 8);
				if (off < 0 || (uint64_t)off >= t->storage) {
					free(ptrs);
					return kgb_err(err, errlen, "op %s case %u: %s[%zu] = %lld is outside %s (%zu elements)",
					               c->op->name, c->index, aname[o], i, (long long)off, oname[o], t->storage),
					       KGB_BE_ERR;
				}
				ptrs[i] = (uint64_t)(uintptr_t)nc->p[o] + (uint64_t)off * es;
			}
			int rc = be->alloc(ctx, nb * sizeof *ptrs, &nc->arr[s][o]);
			if (rc == KGB_BE_OK)
				rc = be->write(ctx, nc->arr[s][o], 0, ptrs, nb * sizeof *ptrs);
			if (rc != KGB_BE_OK) {
				free(ptrs);
				return kgb_err(err, errlen, "the pointer array of %s: %s", oname[o], be->last_error(ctx)), rc;
			}
			nc->pa[s][o] = (void *)(uintptr_t)be->addr(ctx, nc->arr[s][o]);
		}
		free(ptrs);
	}
	/* dot and asum write their result to device memory; scalars come from the host */
	bool dev = nc->fam == F_DOT || nc->fam == F_ASUM;
	int st = lib->set_pointer_mode(lib->handle, dev ? lib->en->ptr_device : lib->en->ptr_host);
	if (st != 0)
		return kgb_err(err, errlen, "setting the pointer mode: %s", kgb_blas_status(lib, st)), KGB_BE_ERR;
	return KGB_BE_OK;
}

const char *kgb_nblas_case_routine(const kgb_nblas_case_t *nc)
{
	return nc->routine;
}

void kgb_nblas_case_destroy(kgb_nblas_case_t **pnc)
{
	kgb_nblas_case_t *nc = pnc ? *pnc : NULL;
	if (!nc)
		return;
	for (int s = 0; s < 2; s++)
		for (int o = 0; o < O_N; o++)
			if (nc->arr[s][o])
				nc->nb->be->free(nc->nb->ctx, nc->arr[s][o]);
	free(nc);
	*pnc = NULL;
}

/* ---- the call ---- */

typedef int st_t;
typedef void *H;
typedef const void *cp;
typedef void *vp;
typedef long long LL;

/* Call nc->fn as a function of type T(I), I = int64_t for the _64 routines, else int. */
#define CALL(T, ...) (nc->i64 ? ((T(int64_t))nc->fn)(__VA_ARGS__) : ((T(int))nc->fn)(__VA_ARGS__))

#define T_COPY(I) st_t (*)(H, I, cp, I, vp, I)
#define T_DOT(I) st_t (*)(H, I, cp, I, cp, I, vp)
#define T_ASUM(I) st_t (*)(H, I, cp, I, vp)
#define T_AXPY(I) st_t (*)(H, I, cp, cp, I, vp, I)
#define T_SCAL(I) st_t (*)(H, I, cp, vp, I)
#define T_GEMV(I) st_t (*)(H, int, I, I, cp, cp, I, cp, I, cp, vp, I)
#define T_GEMV_B(I) st_t (*)(H, int, I, I, cp, cp, I, cp, I, cp, cp, I, I)
#define T_GEMV_SB(I) st_t (*)(H, int, I, I, cp, cp, I, LL, cp, I, LL, cp, vp, I, LL, I)
#define T_GER(I) st_t (*)(H, I, I, cp, cp, I, cp, I, vp, I)
#define T_SYMV(I) st_t (*)(H, int, I, cp, cp, I, cp, I, cp, vp, I)
#define T_SBMV(I) st_t (*)(H, int, I, I, cp, cp, I, cp, I, cp, vp, I)
#define T_SYR2(I) st_t (*)(H, int, I, cp, cp, I, cp, I, vp, I)
#define T_TBMV(I) st_t (*)(H, int, int, int, I, I, cp, I, vp, I)
#define T_TRSV(I) st_t (*)(H, int, int, int, I, cp, I, vp, I)
#define T_GEMM(I) st_t (*)(H, int, int, I, I, I, cp, cp, I, cp, I, cp, vp, I)
#define T_GEMM_B(I) st_t (*)(H, int, int, I, I, I, cp, cp, I, cp, I, cp, cp, I, I)
#define T_GEMM_SB(I) st_t (*)(H, int, int, I, I, I, cp, cp, I, LL, cp, I, LL, cp, vp, I, LL, I)
#define T_SYMM(I) st_t (*)(H, int, int, I, I, cp, cp, I, cp, I, cp, vp, I)
#define T_SYRK(I) st_t (*)(H, int, int, I, I, cp, cp, I, cp, vp, I)
#define T_TRSM(I) st_t (*)(H, int, int, int, int, I, I, cp, cp, I, vp, I)
#define T_TRSM_B(I) st_t (*)(H, int, int, int, int, I, I, cp, cp, I, cp, I, I)
#define T_GEAM(I) st_t (*)(H, int, int, I, I, cp, cp, I, cp, cp, I, vp, I)
#define T_DGMM(I) st_t (*)(H, int, I, I, cp, I, cp, I, vp, I)

typedef st_t (*sgemm_ex_t)(H, int, int, int, int, int, cp, cp, int, int, cp, int, int, cp, vp, int, int);
typedef st_t (*gemm_ex_t)(H, int, int, int, int, int, cp, cp, int, int, cp, int, int, cp, vp, int, int, int, int);
typedef st_t (*syrk_ex_t)(H, int, int, int, int, cp, cp, int, int, cp, vp, int, int);

int kgb_nblas_call(void *arg, char *err, size_t errlen)
{
	kgb_nblas_case_t *nc = arg;
	H h = nc->nb->lib->handle;
	void *const *p = nc->p;
	void *const *pa = nc->pa[nc->set && *nc->set ? 1 : 0];
	cp al = nc->alpha, be = nc->beta;
	const kgb_blas_enums_t *en = nc->nb->lib->en;
	st_t st;
	switch (nc->fam) {
	case F_COPY:
	case F_SWAP:
		st = CALL(T_COPY, h, nc->n, p[O_X], nc->incx, p[O_Y], nc->incy);
		break;
	case F_DOT:
		st = CALL(T_DOT, h, nc->n, p[O_X], nc->incx, p[O_Y], nc->incy, p[O_R]);
		break;
	case F_ASUM:
		st = CALL(T_ASUM, h, nc->n, p[O_X], nc->incx, p[O_R]);
		break;
	case F_AXPY:
		st = CALL(T_AXPY, h, nc->n, al, p[O_X], nc->incx, p[O_Y], nc->incy);
		break;
	case F_SCAL:
		st = CALL(T_SCAL, h, nc->n, al, p[O_X], nc->incx);
		break;
	case F_GEMV:
		st = CALL(T_GEMV, h, nc->ta, nc->m, nc->n, al, p[O_A], nc->lda, p[O_X], nc->incx, be, p[O_Y], nc->incy);
		break;
	case F_GEMV_B:
		st = CALL(T_GEMV_B, h, nc->ta, nc->m, nc->n, al, pa[O_A], nc->lda, pa[O_X], nc->incx, be, pa[O_Y],
		          nc->incy, nc->batch);
		break;
	case F_GEMV_SB:
		st = CALL(T_GEMV_SB, h, nc->ta, nc->m, nc->n, al, p[O_A], nc->lda, nc->sa, p[O_X], nc->incx, nc->sb, be,
		          p[O_Y], nc->incy, nc->sc, nc->batch);
		break;
	case F_GER:
		st = CALL(T_GER, h, nc->m, nc->n, al, p[O_X], nc->incx, p[O_Y], nc->incy, p[O_A], nc->lda);
		break;
	case F_SYMV:
		st = CALL(T_SYMV, h, nc->uplo, nc->n, al, p[O_A], nc->lda, p[O_X], nc->incx, be, p[O_Y], nc->incy);
		break;
	case F_SBMV:
		st = CALL(T_SBMV, h, nc->uplo, nc->n, nc->k, al, p[O_A], nc->lda, p[O_X], nc->incx, be, p[O_Y],
		          nc->incy);
		break;
	case F_SYR2:
		st = CALL(T_SYR2, h, nc->uplo, nc->n, al, p[O_X], nc->incx, p[O_Y], nc->incy, p[O_A], nc->lda);
		break;
	case F_TBMV:
		st = CALL(T_TBMV, h, nc->uplo, nc->ta, nc->diag, nc->n, nc->k, p[O_A], nc->lda, p[O_X], nc->incx);
		break;
	case F_TRSV:
		st = CALL(T_TRSV, h, nc->uplo, nc->ta, nc->diag, nc->n, p[O_A], nc->lda, p[O_X], nc->incx);
		break;
	case F_GEMM:
		st = CALL(T_GEMM, h, nc->ta, nc->tb, nc->m, nc->n, nc->k, al, p[O_A], nc->lda, p[O_B], nc->ldb, be,
		          p[O_C], nc->ldc);
		break;
	case F_GEMM_B:
		st = CALL(T_GEMM_B, h, nc->ta, nc->tb, nc->m, nc->n, nc->k, al, pa[O_A], nc->lda, pa[O_B], nc->ldb, be,
		          pa[O_C], nc->ldc, nc->batch);
		break;
	case F_GEMM_SB:
		st = CALL(T_GEMM_SB, h, nc->ta, nc->tb, nc->m, nc->n, nc->k, al, p[O_A], nc->lda, nc->sa, p[O_B],
		          nc->ldb, nc->sb, be, p[O_C], nc->ldc, nc->sc, nc->batch);
		break;
	case F_GEMM_EX:
		if (nc->hip_ex)
			st = ((gemm_ex_t)nc->fn)(h, nc->ta, nc->tb, (int)nc->m, (int)nc->n, (int)nc->k, al, p[O_A],
			                         nc->atype, (int)nc->lda, p[O_B], nc->btype, (int)nc->ldb, be, p[O_C],
			                         nc->ctype, (int)nc->ldc, en->compute32f, en->gemm_default);
		else
			st = ((sgemm_ex_t)nc->fn)(h, nc->ta, nc->tb, (int)nc->m, (int)nc->n, (int)nc->k, al, p[O_A],
			                          nc->atype, (int)nc->lda, p[O_B], nc->btype, (int)nc->ldb, be, p[O_C],
			                          nc->ctype, (int)nc->ldc);
		break;
	case F_SYMM:
		st = CALL(T_SYMM, h, nc->side, nc->uplo, nc->m, nc->n, al, p[O_A], nc->lda, p[O_B], nc->ldb, be, p[O_C],
		          nc->ldc);
		break;
	case F_SYRK:
		st = CALL(T_SYRK, h, nc->uplo, nc->ta, nc->n, nc->k, al, p[O_A], nc->lda, be, p[O_C], nc->ldc);
		break;
	case F_SYRK_EX:
		st = ((syrk_ex_t)nc->fn)(h, nc->uplo, nc->ta, (int)nc->n, (int)nc->k, al, p[O_A], nc->atype,
		                         (int)nc->lda, be, p[O_C], nc->ctype, (int)nc->ldc);
		break;
	case F_TRSM:
		st = CALL(T_TRSM, h, nc->side, nc->uplo, nc->ta, nc->diag, nc->m, nc->n, al, p[O_A], nc->lda, p[O_B],
		          nc->ldb);
		break;
	case F_TRSM_B:
		st = CALL(T_TRSM_B, h, nc->side, nc->uplo, nc->ta, nc->diag, nc->m, nc->n, al, pa[O_A], nc->lda,
		          pa[O_B], nc->ldb, nc->batch);
		break;
	case F_GEAM:
		st = CALL(T_GEAM, h, nc->ta, nc->tb, nc->m, nc->n, al, p[O_A], nc->lda, be, p[O_B], nc->ldb, p[O_C],
		          nc->ldc);
		break;
	case F_DGMM:
		st = CALL(T_DGMM, h, nc->side, nc->m, nc->n, p[O_A], nc->lda, p[O_X], nc->incx, p[O_C], nc->ldc);
		break;
	default:
		return kgb_err(err, errlen, "%s: no call for its family", nc->routine), KGB_BE_ERR;
	}
	if (st != 0)
		return kgb_err(err, errlen, "%s: %s", nc->routine, kgb_blas_status(nc->nb->lib, st)), KGB_BE_ERR;
	return KGB_BE_OK;
}
