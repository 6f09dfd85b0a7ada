/* The cuBLAS operators and the complex dtypes: complex values through dtype, the
 * validator's modulus compare, the conventions of the cuBLAS catalog (pointer arrays,
 * beta = 0 over NaN, negative increments), and the BLAS-specific self-test mutants:
 * a result written transposed and a result that ignores beta must be rejected. The
 * generic mutants run on these operators in test_selftest.c. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "validate.h"

static void no_cache(void)
{
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	setenv("KGB_REF_CACHE_MB", "0", 1);
}

static const kgb_op_t *find_op(const char *name)
{
	const kgb_op_t *op = kgb_catalog_find(name);
	if (!op)
		FAIL("operator %s is not in the catalog", name);
	return op;
}

/* True when label has `tok` ("beta=0", or several: "n=1000 incx=-2") as whole words. */
static bool has_words(const char *label, const char *tok)
{
	size_t l = strlen(tok);
	for (const char *p = strstr(label, tok); p; p = strstr(p + 1, tok))
		if ((p == label || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0'))
			return true;
	return false;
}

/* The first case of op whose label has every entry of `want` (NULL-ended). */
static uint32_t find_case(const kgb_op_t *op, const char *const *want)
{
	for (uint32_t i = 0; i < kgb_op_case_count(op); i++) {
		kgb_case_t c;
		char err[256];
		bool ok = true;
		ASSERT_OK(kgb_case_build(op, i, &c, err, sizeof err), err);
		for (int k = 0; want[k]; k++)
			if (!has_words(c.label, want[k]))
				ok = false;
		kgb_case_release(&c);
		if (ok)
			return i;
	}
	FAIL("%s has no case labelled %s ...", op->name, want[0]);
}

/* The bytes a correct run leaves in output tensor ti, with `vals` (storage doubles)
 * in its view: OUT gaps hold the poison, INOUT gaps what was uploaded. */
static uint8_t *result_bytes(const kgb_case_t *c, int ti, const kgb_hostbufs_t *in, const double *vals)
{
	const kgb_tensor_t *t = &c->t[ti];
	size_t L = (size_t)kgb_dtype_lanes(t->dtype), nb = (t->storage ? t->storage : 1) * kgb_dtype_size(t->dtype);
	uint8_t *b = malloc(nb);
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	ASSERT_TRUE(b != NULL);
	if (t->role == KGB_ROLE_OUT)
		memset(b, KGB_POISON1, nb);
	else
		kgb_tensor_pack(t, in->v[ti], b);
	do {
		size_t o = kgb_tensor_offset(t, idx) * L;
		for (size_t l = 0; l < L; l++)
			kgb_dtype_store(t->dtype, b, o + l, vals[o + l]);
	} while (kgb_index_next(t, idx));
	return b;
}

TEST(dtype_complex)
{
	kgb_dtype_t t;
	float f[4];
	double d[2];
	ASSERT_EQ_INT(kgb_dtype_parse("complex64", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_C64);
	ASSERT_EQ_INT(kgb_dtype_parse("torch.complex128", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_C128);
	ASSERT_EQ_STR(kgb_dtype_name(KGB_DT_C64), "c64");
	ASSERT_EQ_INT(kgb_dtype_size(KGB_DT_C64), 8);
	ASSERT_EQ_INT(kgb_dtype_size(KGB_DT_C128), 16);
	ASSERT_EQ_INT(kgb_dtype_lanes(KGB_DT_C64), 2);
	ASSERT_EQ_INT(kgb_dtype_lanes(KGB_DT_F64), 1);
	ASSERT_TRUE(kgb_dtype_is_complex(KGB_DT_C128));
	ASSERT_FALSE(kgb_dtype_is_complex(KGB_DT_F64));
	ASSERT_FALSE(kgb_dtype_is_float(KGB_DT_C64));
	ASSERT_EQ_INT(kgb_dtype_component(KGB_DT_C64), KGB_DT_F32);
	ASSERT_EQ_INT(kgb_dtype_component(KGB_DT_C128), KGB_DT_F64);
	ASSERT_EQ_STR(kgb_dtype_cuda_type(KGB_DT_C64), "float2");
	/* components: element 1 of a c64 buffer is components 2 (re) and 3 (im) */
	kgb_dtype_store(KGB_DT_C64, f, 2, 0.1);
	kgb_dtype_store(KGB_DT_C64, f, 3, -2.5);
	ASSERT_NEAR(f[2], 0.1f, 0);
	ASSERT_NEAR(kgb_dtype_load(KGB_DT_C64, f, 3), -2.5, 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_C64, 0.1), (double)0.1f, 0);
	kgb_dtype_store(KGB_DT_C128, d, 1, 0.1);
	ASSERT_NEAR(d[1], 0.1, 0);
}

/* Complex tensors through generation: both components drawn, rounded to the
 * component type, gaps filled, the host buffer two doubles per element. */
TEST(cublas_complex_inputs)
{
	const kgb_op_t *op = find_op("cublasCgemm_v2");
	kgb_case_t c;
	kgb_hostbufs_t b;
	char err[256];
	const char *want[] = { "pad=3", "beta=0.5", NULL };
	const kgb_tensor_t *A;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double sre = 0, sim = 0, nim_nonzero = 0;
	ASSERT_OK(kgb_case_build(op, find_case(op, want), &c, err, sizeof err), err);
	ASSERT_OK(kgb_case_inputs(&c, 7, &b, err, sizeof err), err);
	A = kgb_case_tensor(&c, "A");
	ASSERT_TRUE(A->dtype == KGB_DT_C64);
	ASSERT_TRUE(A->storage > A->numel);   /* lda > rows: gaps */
	do {
		size_t o = 2 * kgb_tensor_offset(A, idx);
		sre += b.v[0][o];
		sim += b.v[0][o + 1];
		nim_nonzero += b.v[0][o + 1] != 0;
		ASSERT_NEAR(b.v[0][o + 1], (double)(float)b.v[0][o + 1], 0);
	} while (kgb_index_next(A, idx));
	ASSERT_TRUE(fabs(sre) / (double)A->numel > 0.1);   /* a non-zero mean, per part */
	ASSERT_TRUE(fabs(sim) / (double)A->numel > 0.1);
	ASSERT_TRUE(nim_nonzero > 0.9 * (double)A->numel);
	/* the padding rows (element m of column 0 and on) hold the gap filler */
	ASSERT_NEAR(b.v[0][2 * (size_t)A->shape[1]], -3.0, 0);
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);
}

/* The validator judges a complex element by the modulus of its error: an error of
 * 0.9 tol passes in every direction, one of 1.1 tol fails in every direction, and one
 * within tol in each component but over it in modulus fails. */
TEST(validate_complex_modulus)
{
	const kgb_op_t *op = find_op("cublasCcopy_v2");
	kgb_case_t c;
	kgb_hostbufs_t ref;
	char err[256], msg[256];
	int yi;
	const kgb_tensor_t *y;
	uint8_t *bytes;
	double atol, maxmod = 0, r0, i0, tol;
	int checked = 0;
	no_cache();
	ASSERT_OK(kgb_case_build(op, 0, &c, err, sizeof err), err);
	ASSERT_OK(kgb_case_reference(&c, 3, &ref, err, sizeof err), err);
	yi = kgb_case_tensor_index(&c, "y");
	y = &c.t[yi];
	for (size_t e = 0; e < y->numel; e++) {
		size_t o = 2 * kgb_tensor_flat_offset(y, e);
		maxmod = fmax(maxmod, cabs(CMPLX((float)ref.v[yi][o], (float)ref.v[yi][o + 1])));
	}
	atol = c.atol_rel * maxmod;
	r0 = (float)ref.v[yi][0];
	i0 = (float)ref.v[yi][1];
	tol = atol + c.rtol * cabs(CMPLX(r0, i0));
	ASSERT_TRUE(tol > 0);
	for (int dir = 0; dir < 8; dir++) {
		double ph = dir * M_PI / 4;
		for (int over = 0; over < 2; over++) {
			double mag = (over ? 1.1 : 0.9) * tol;
			int v;
			bytes = result_bytes(&c, yi, &ref, ref.v[yi]);
			/* double precision error on a float element: compute the component in
			 * double and check the float it rounds to still has the intended error */
			((float *)bytes)[0] = (float)(r0 + mag * cos(ph));
			((float *)bytes)[1] = (float)(i0 + mag * sin(ph));
			{
				double er = ((float *)bytes)[0] - r0, ei = ((float *)bytes)[1] - i0;
				double m = sqrt(er * er + ei * ei);
				if (over ? m <= tol : m > tol) {
					free(bytes);   /* float rounding crossed the bound: not this check's case */
					continue;
				}
			}
			v = kgb_validate_output(&c, &ref, NULL, yi, bytes, KGB_POISON1, NULL, NULL, msg, sizeof msg);
			if (over)
				ASSERT_EQ_INT(v, KGB_V_WRONG_RESULT);
			else
				ASSERT_EQ_INT(v, KGB_V_PASS);
			checked++;
			free(bytes);
		}
	}
	ASSERT_TRUE(checked >= 12);
	/* each component off by 0.8 tol: modulus 1.13 tol */
	bytes = result_bytes(&c, yi, &ref, ref.v[yi]);
	((float *)bytes)[0] = (float)(r0 + 0.8 * tol);
	((float *)bytes)[1] = (float)(i0 + 0.8 * tol);
	ASSERT_EQ_INT(kgb_validate_output(&c, &ref, NULL, yi, bytes, KGB_POISON1, NULL, NULL, msg, sizeof msg),
	              KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(msg, "expected (");
	/* a NaN imaginary part fails */
	free(bytes);
	bytes = result_bytes(&c, yi, &ref, ref.v[yi]);
	((float *)bytes)[1] = NAN;
	ASSERT_EQ_INT(kgb_validate_output(&c, &ref, NULL, yi, bytes, KGB_POISON1, NULL, NULL, msg, sizeof msg),
	              KGB_V_WRONG_RESULT);
	free(bytes);
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

TEST(cublas_catalog)
{
	unsigned mask;
	size_t n = 0, complex_ops = 0;
	ASSERT_EQ_INT(kgb_dataset_parse("cublas", &mask), 0);
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		kgb_case_t c;
		char err[256];
		if (!(op->datasets & mask))
			continue;
		n++;
		ASSERT_EQ_STR(op->source, "cublas");
		ASSERT_TRUE(strncmp(op->name, "cublas", 6) == 0);
		/* trimmed, never inflated */
		if (kgb_op_case_count(op) > (uint32_t)op->declared_cases)
			FAIL("%s: %u cases, more than the %d declared", op->name, kgb_op_case_count(op), op->declared_cases);
		ASSERT_TRUE(kgb_op_smoke_case_count(op) <= 12);
		ASSERT_TRUE(kgb_op_timed_count(op) >= 1);
		ASSERT_OK(kgb_case_build(op, kgb_op_case_count(op) - 1, &c, err, sizeof err), err);
		/* labels name the dtype and the layout/mode parameters */
		if (strstr(op->name, "Sgemm_v2") == NULL && strstr(op->name, "Saxpy") == NULL)
			ASSERT_CONTAINS(c.label, "dtype=");
		for (int t = 0; t < c.ntensors; t++)
			if (kgb_dtype_is_complex(c.t[t].dtype)) {
				complex_ops++;
				break;
			}
		kgb_case_release(&c);
	}
	ASSERT_EQ_INT(n, 50);
	ASSERT_EQ_INT(complex_ops, 20);   /* the complex64/complex128 rows of the list */
}

/* Pointer arrays: every array a permutation of its tensor's slots, no item in the
 * slot the strided layout would give it, and no two arrays in the same order. */
TEST(cublas_pointer_arrays)
{
	const char *ops[] = { "cublasDgemmBatched", "cublasZgemvBatched", "cublasDtrsmBatched" };
	no_cache();
	for (size_t k = 0; k < 3; k++) {
		const kgb_op_t *op = find_op(ops[k]);
		kgb_case_t c;
		kgb_hostbufs_t b;
		char err[256];
		int arr[3], na = 0;
		ASSERT_OK(kgb_case_build(op, 0, &c, err, sizeof err), err);
		ASSERT_OK(kgb_case_inputs(&c, 5, &b, err, sizeof err), err);
		for (int i = 0; i < c.ntensors; i++)
			if (strstr(c.t[i].name, "array"))
				arr[na++] = i;
		ASSERT_TRUE(na >= 2);
		for (int a = 0; a < na; a++) {
			const kgb_tensor_t *t = &c.t[arr[a]];
			char base[32];
			const kgb_tensor_t *m;
			uint8_t seen[64] = { 0 };
			snprintf(base, sizeof base, "%.*s", (int)(strlen(t->name) - 5), t->name);
			m = kgb_case_tensor(&c, base);
			ASSERT_TRUE(m != NULL && t->dtype == KGB_DT_I64 && t->numel >= 4 && t->numel <= 64);
			for (size_t i = 0; i < t->numel; i++) {
				double off = b.v[arr[a]][i];
				size_t slot = (size_t)(off / (double)m->stride[0]);
				ASSERT_NEAR(fmod(off, (double)m->stride[0]), 0, 0);
				ASSERT_TRUE(slot < t->numel && !seen[slot]);
				ASSERT_TRUE(slot != i);
				seen[slot] = 1;
			}
			for (int q = 0; q < a; q++)
				ASSERT_TRUE(memcmp(b.v[arr[a]], b.v[arr[q]], t->numel * sizeof(double)) != 0);
		}
		kgb_hostbufs_release(&b);
		kgb_case_release(&c);
	}
}

/* In every case of every pointer-array routine, the items sit a multiple of 16 bytes
 * apart (cuBLAS's documented alignment for *Batched calls; its fp16 gemm faults with a
 * misaligned address on the H200 without it). */
TEST(cublas_pointer_array_items_aligned)
{
	size_t nops = 0;
	no_cache();
	for (size_t o = 0; o < kgb_catalog_count(); o++) {
		const kgb_op_t *op = kgb_catalog_at(o);
		if (strcmp(op->source, "cublas") != 0)
			continue;
		bool arrays = false;
		for (uint32_t i = 0; i < kgb_op_case_count(op); i++) {
			kgb_case_t c;
			char err[256];
			ASSERT_OK(kgb_case_build(op, i, &c, err, sizeof err), err);
			for (int a = 0; a < c.ntensors; a++) {
				const kgb_tensor_t *t = &c.t[a];
				size_t l = strlen(t->name);
				if (l <= 5 || strcmp(t->name + l - 5, "array") != 0)
					continue;
				char base[32];
				snprintf(base, sizeof base, "%.*s", (int)(l - 5), t->name);
				const kgb_tensor_t *m = kgb_case_tensor(&c, base);
				ASSERT_TRUE(m != NULL);
				size_t bytes = (size_t)m->stride[0] * kgb_dtype_size(m->dtype);
				if (bytes % 16 != 0)
					FAIL("%s case %u (%s): items of %s are %zu bytes apart, not a multiple of 16", op->name, i,
					     c.label, base, bytes);
				arrays = true;
			}
			kgb_case_release(&c);
		}
		nops += arrays;
	}
	ASSERT_TRUE(nops >= 10);
}

/* beta = 0: C is uploaded as NaN, and the reference is finite everywhere. */
TEST(cublas_beta_zero_over_nan)
{
	const char *ops[] = { "cublasCgemm_v2", "cublasDgemvStridedBatched", "cublasHgemmBatched" };
	const char *want[] = { "beta=0", NULL };
	no_cache();
	for (size_t k = 0; k < 3; k++) {
		const kgb_op_t *op = find_op(ops[k]);
		kgb_case_t c;
		kgb_hostbufs_t in, ref;
		char err[256];
		const kgb_tensor_t *t;
		int ti;
		int64_t idx[KGB_MAX_DIMS] = { 0 };
		size_t L;
		ASSERT_OK(kgb_case_build(op, find_case(op, want), &c, err, sizeof err), err);
		ti = kgb_case_tensor_index(&c, kgb_case_tensor(&c, "C") ? "C" : "y");
		t = &c.t[ti];
		L = (size_t)kgb_dtype_lanes(t->dtype);
		ASSERT_OK(kgb_case_inputs(&c, 9, &in, err, sizeof err), err);
		ASSERT_OK(kgb_case_reference(&c, 9, &ref, err, sizeof err), err);
		do {
			size_t o = kgb_tensor_offset(t, idx) * L;
			ASSERT_TRUE(isnan(in.v[ti][o]));
			ASSERT_TRUE(isfinite(ref.v[ti][o]));
		} while (kgb_index_next(t, idx));
		kgb_hostbufs_release(&in);
		kgb_hostbufs_release(&ref);
		kgb_case_release(&c);
	}
}

/* Negative increments walk the vector backwards: copy with incx = -2 reverses x. */
TEST(cublas_negative_increment)
{
	const kgb_op_t *op = find_op("cublasDcopy_v2");
	const char *want[] = { "n=1000 incx=-2 incy=1", NULL };
	kgb_case_t c;
	kgb_hostbufs_t ref;
	char err[256];
	int xi, yi;
	no_cache();
	ASSERT_OK(kgb_case_build(op, find_case(op, want), &c, err, sizeof err), err);
	ASSERT_OK(kgb_case_reference(&c, 2, &ref, err, sizeof err), err);
	xi = kgb_case_tensor_index(&c, "x");
	yi = kgb_case_tensor_index(&c, "y");
	ASSERT_EQ_INT(c.t[xi].stride[0], 2);
	for (int i = 0; i < 1000; i++)
		ASSERT_NEAR(ref.v[yi][i], ref.v[xi][(999 - i) * 2], 0);
	kgb_hostbufs_release(&ref);
	kgb_case_release(&c);
}

/* ---- BLAS mutants ---- */

static int judge_bytes(const kgb_case_t *c, int ti, const kgb_hostbufs_t *in, const kgb_hostbufs_t *ref,
                       const uint8_t *bytes, char *msg, size_t msglen)
{
	return kgb_validate_output(c, ref, in, ti, bytes, c->t[ti].role == KGB_ROLE_OUT ? (int)KGB_POISON1 : -1,
	                           NULL, NULL, msg, msglen);
}

/* The result written in row-major order: for every matrix (last two dims: [cols,
 * rows] column-major), element (i, j) gets R(f / cols, f % cols) with f = j*rows + i,
 * which is the transpose for square results. NULL when it equals the reference. */
static double *transposed(const kgb_tensor_t *t, const double *rv)
{
	size_t L = (size_t)kgb_dtype_lanes(t->dtype), nstore = t->storage * L;
	int64_t rows = t->shape[t->ndim - 1], cols = t->shape[t->ndim - 2];
	int64_t nmat = t->ndim == 3 ? t->shape[0] : 1, sb = t->ndim == 3 ? t->stride[0] : 0;
	int64_t ld = t->stride[t->ndim - 2];
	double *w = malloc(nstore * sizeof *w);
	bool differs = false;
	ASSERT_TRUE(w != NULL);
	memcpy(w, rv, nstore * sizeof *w);
	for (int64_t b = 0; b < nmat; b++)
		for (int64_t j = 0; j < cols; j++)
			for (int64_t i = 0; i < rows; i++) {
				int64_t f = j * rows + i, si = f / cols, sj = f % cols;
				size_t dst = (size_t)(b * sb + j * ld + i) * L;
				for (size_t l = 0; l < L; l++) {
					/* R(si, sj): row si of column sj */
					w[dst + l] = rv[(size_t)(b * sb + sj * ld + si) * L + l];
					if (!(w[dst + l] == rv[dst + l] || (isnan(w[dst + l]) && isnan(rv[dst + l]))))
						differs = true;
				}
			}
	if (!differs) {
		free(w);
		return NULL;
	}
	return w;
}

/* For every cuBLAS operator and up to 6 of its cases (not the large ones): the
 * reference passes; the result written transposed (matrix outputs) and the result
 * computed with beta = 0 (operators with a non-zero beta) are rejected as
 * wrong_result. */
TEST(selftest_blas_mutants)
{
	unsigned mask;
	size_t ncases = 0, ntrans = 0, nbeta = 0;
	no_cache();
	ASSERT_EQ_INT(kgb_dataset_parse("cublas", &mask), 0);
	for (size_t oi = 0; oi < kgb_catalog_count(); oi++) {
		const kgb_op_t *op = kgb_catalog_at(oi);
		uint32_t n;
		if (!(op->datasets & mask))
			continue;
		n = kgb_op_case_count(op);
		for (uint32_t k = 0; k < 6; k++) {
			uint32_t ci = (uint32_t)((uint64_t)k * (n - 1) / 5);
			kgb_case_t c;
			kgb_hostbufs_t in, ref;
			char err[256], msg[256];
			bool large = false;
			int bs = -1;
			if (k && ci == (uint32_t)((uint64_t)(k - 1) * (n - 1) / 5))
				continue;
			ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
			for (int t = 0; t < c.ntensors; t++)
				large |= c.t[t].storage > (1u << 16);
			if (large) {
				kgb_case_release(&c);
				continue;
			}
			ncases++;
			ASSERT_OK(kgb_case_inputs(&c, 21 + ci, &in, err, sizeof err), err);
			ASSERT_OK(kgb_case_reference(&c, 21 + ci, &ref, err, sizeof err), err);
			for (int s = 0; s < c.nscalars; s++)
				if (strcmp(c.s[s].name, "beta") == 0)
					bs = s;
			for (int ti = 0; ti < c.ntensors; ti++) {
				const kgb_tensor_t *t = &c.t[ti];
				uint8_t *bytes;
				double *w;
				int v;
				if (t->role == KGB_ROLE_IN || t->numel == 0)
					continue;
				bytes = result_bytes(&c, ti, &in, ref.v[ti]);
				v = judge_bytes(&c, ti, &in, &ref, bytes, msg, sizeof msg);
				if (v != KGB_V_PASS)
					FAIL("%s case %u (%s): the reference is rejected: %s", op->name, ci, c.label, msg);
				free(bytes);
				/* transposed */
				if (t->ndim >= 2 && (w = transposed(t, ref.v[ti])) != NULL) {
					bytes = result_bytes(&c, ti, &in, w);
					v = judge_bytes(&c, ti, &in, &ref, bytes, msg, sizeof msg);
					if (v != KGB_V_WRONG_RESULT)
						FAIL("%s case %u (%s) %s: transposed result judged %s", op->name, ci, c.label, t->name,
						     kgb_verdict_name(v));
					ntrans++;
					free(bytes);
					free(w);
				}
			}
			/* beta ignored: the reference of the same inputs with beta = 0 */
			if (bs >= 0 && c.s[bs].value != 0) {   /* beta_im is 0 exactly when beta is */
				kgb_case_t cc = c;
				kgb_hostbufs_t nb;
				int ti = kgb_case_tensor_index(&c, kgb_case_tensor(&c, "C") ? "C" : "y");
				cc.s[bs].value = 0;
				for (int s = 0; s < cc.nscalars; s++)
					if (strcmp(cc.s[s].name, "beta_im") == 0)
						cc.s[s].value = 0;
				ASSERT_OK(kgb_case_inputs(&c, 21 + ci, &nb, err, sizeof err), err);
				ASSERT_EQ_INT(op->ref(&cc, &nb), 0);
				{
					uint8_t *bytes = result_bytes(&c, ti, &in, nb.v[ti]);
					int v = judge_bytes(&c, ti, &in, &ref, bytes, msg, sizeof msg);
					if (v != KGB_V_WRONG_RESULT)
						FAIL("%s case %u (%s): result ignoring beta judged %s", op->name, ci, c.label,
						     kgb_verdict_name(v));
					free(bytes);
				}
				nbeta++;
				kgb_hostbufs_release(&nb);
			}
			kgb_hostbufs_release(&in);
			kgb_hostbufs_release(&ref);
			kgb_case_release(&c);
		}
	}
	printf("selftest_blas_mutants: %zu cases, %zu transposed and %zu beta-ignoring results rejected\n", ncases,
	       ntrans, nbeta);
	ASSERT_TRUE(ncases >= 150);
	ASSERT_TRUE(ntrans >= 100);
	ASSERT_TRUE(nbeta >= 40);
}
