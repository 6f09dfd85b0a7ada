/* Native cuBLAS candidates ({"kind": "native"} on a cuBLAS-dataset operator) through
 * the executor, on the HIP backend with its test doubles: the fake HIP runtime
 * (tests/doubles/fake_hip.c) and the fake hipBLAS (tests/doubles/fake_hipblas.c),
 * which computes each routine from its BLAS definition with hipBLAS's enum values.
 * A case passes kgb's validator only when the worker called the routine with the
 * case's modes, sizes, leading dimensions, increments, strides and pointer arrays;
 * the mutants (a swapped transpose, negative increments walked forwards) must fail.
 * No GPU is involved: docs/native.md says what runs where. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "test_worker.h"
#include "backend.h"
#include "catalog.h"
#include "executor.h"
#include "native_blas.h"
#include "backends/blas.h"
#include "stats.h"
#include "validate.h"

static void use_doubles(void)
{
	setenv("KGB_HIP_LIBRARY", kgb_test_double("libfakehip.so"), 1);
	setenv("KGB_HIPRTC_LIBRARY", kgb_test_double("libfakehip.so"), 1);
	setenv("KGB_HIPBLAS_LIBRARY", kgb_test_double("libfakehipblas.so"), 1);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	setenv("KGB_POISON_SEED", "0x5eed", 1);
}

/* A native job for op over cases[0..n) (all cases when cases is NULL). */
static Kgb__JobAssign *native_job(const char *op, const uint32_t *cases, size_t n, bool timing)
{
	Kgb__JobAssign *a = tw_native_job(9, op, cases, n, 60000);
	a->timing_budget_ms = 5;
	a->timing = timing;
	return a;
}

typedef struct run {
	Kgb__CaseResult *cr[4096];
	size_t n;
	Kgb__JobResult *end;
	int status;
} run_t;

/* Run job a in-process on backend be, decoding the executor's records. */
static void run_native(const kgb_backend_t *be, Kgb__JobAssign *a, run_t *r)
{
	FILE *f = tw_records_file();
	memset(r, 0, sizeof *r);
	r->status = kgb_executor_run(be, 0, a, fileno(f));
	r->n = tw_read_records(fileno(f), r->cr, 4096, &r->end, false);
	fclose(f);
}

static void run_free(run_t *r)
{
	for (size_t i = 0; i < r->n; i++)
		kgb__case_result__free_unpacked(r->cr[i], NULL);
	if (r->end)
		kgb__job_result__free_unpacked(r->end, NULL);
}

static long fake_calls(void)
{
	void *h = dlopen(kgb_test_double("libfakehipblas.so"), RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return -1;
	long (*f)(void) = (long (*)(void))dlsym(h, "kgb_fake_hipblas_calls");
	long n = f ? f() : -1;
	dlclose(h);
	return n;
}

/* Every case of op passes through hipBLAS (the double); returns the case count. */
static size_t expect_all_pass(const char *op, bool timing)
{
	Kgb__JobAssign *a = native_job(op, NULL, 0, timing);
	run_t r;
	long before = fake_calls();
	run_native(&kgb_backend_hip, a, &r);
	ASSERT_EQ_INT(r.status, KGB_EXEC_EXIT_OK);
	ASSERT_EQ_INT(r.n, a->n_cases);
	ASSERT_TRUE(r.end != NULL);
	for (size_t i = 0; i < r.n; i++)
		if (r.cr[i]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("%s case %u: %s: %s", op, r.cr[i]->case_index, kgb_verdict_name(r.cr[i]->verdict),
			     r.cr[i]->message);
	/* three validated runs per case at least, every one a call of the routine */
	ASSERT_TRUE(fake_calls() - before >= 3 * (long)r.n);
	ASSERT_CONTAINS(r.end->log, "through hipblas");
	size_t n = r.n;
	run_free(&r);
	kgb__job_assign__free_unpacked(a, NULL);
	return n;
}

TEST(nblas_table_is_the_cublas_dataset)
{
	size_t n = 0;
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		bool cublas = (op->datasets & KGB_DS_CUBLAS) != 0;
		if (cublas != kgb_nblas_has_op(op))
			FAIL("%s: in the cublas dataset %d, in the native table %d", op->name, cublas, kgb_nblas_has_op(op));
		n += cublas;
	}
	ASSERT_EQ_INT(n, 50);
	ASSERT_EQ_INT(kgb_nblas_nops(), 50);
	for (size_t i = 0; i < kgb_nblas_nops(); i++)
		ASSERT_TRUE(kgb_catalog_find(kgb_nblas_op_name(i)) != NULL);
}

/* Every routine of the table exists under the name the worker looks up: in the fake
 * hipBLAS, and in the machine's cuBLAS where one is installed (the CUDA toolkit ships
 * it; no GPU is needed to look symbols up). */
TEST(nblas_every_routine_resolves)
{
	char missing[2048];
	setenv("KGB_HIPBLAS_LIBRARY", kgb_test_double("libfakehipblas.so"), 1);
	int n = kgb_nblas_missing("hipblas", missing, sizeof missing);
	if (n != 0)
		FAIL("fake hipBLAS: %d missing: %s", n, missing);
	n = kgb_nblas_missing("cublas", missing, sizeof missing);
	if (n < 0) {
		fprintf(stderr, "note: no cuBLAS on this machine, only the hipBLAS names were checked: %s\n", missing);
		return;
	}
	if (n != 0)
		FAIL("cuBLAS: %d missing: %s", n, missing);
	/* the version recorded with the results is the library's own (cublasGetProperty) */
	kgb_blas_t *b = NULL;
	bool unsupported;
	ASSERT_OK(kgb_blas_load("cublas", &b, &unsupported, missing, sizeof missing), missing);
	ASSERT_TRUE(strncmp(b->version, "cublas 1", 8) == 0);
	ASSERT_TRUE(strchr(b->version + 8, '.') != NULL);
	kgb_blas_close(&b, true);
	ASSERT_TRUE(b == NULL);
}

/* Case 0 (the smoke case) of every one of the 50 operators: every routine's mapping
 * runs at least once. */
TEST(nblas_hip_every_op_first_case)
{
	use_doubles();
	uint32_t c0 = 0;
	for (size_t i = 0; i < kgb_nblas_nops(); i++) {
		const char *op = kgb_nblas_op_name(i);
		Kgb__JobAssign *a = native_job(op, &c0, 1, false);
		run_t r;
		run_native(&kgb_backend_hip, a, &r);
		ASSERT_EQ_INT(r.n, 1);
		if (r.cr[0]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("%s case 0: %s: %s", op, kgb_verdict_name(r.cr[0]->verdict), r.cr[0]->message);
		run_free(&r);
		kgb__job_assign__free_unpacked(a, NULL);
	}
}

/* Every case: level 1 (complex, a device result, negative increments) and the timed
 * path (event pair per sample, method naming the library). */
TEST(nblas_hip_blas1_all_cases)
{
	use_doubles();
	size_t n = expect_all_pass("cublasZdotc_v2", false) + expect_all_pass("cublasDasum_v2", false) +
	           expect_all_pass("cublasZswap_v2", false);
	ASSERT_TRUE(n >= 50);
	uint32_t cases[] = { 0, 19 };  /* 19: the timed large case */
	Kgb__JobAssign *a = native_job("cublasDaxpy_v2", cases, 2, true);
	run_t r;
	run_native(&kgb_backend_hip, a, &r);
	ASSERT_EQ_INT(r.n, 2);
	for (size_t i = 0; i < r.n; i++)
		ASSERT_EQ_INT(r.cr[i]->verdict, KGB__VERDICT__VERDICT_PASS);
	ASSERT_TRUE(r.cr[1]->timing != NULL);
	ASSERT_TRUE(r.cr[1]->timing->samples >= KGB_SAMPLER_FLOOR);
	ASSERT_TRUE(r.cr[1]->timing->median_ns > 0);
	ASSERT_CONTAINS(r.cr[1]->timing->method, "hip+hipblas");
	run_free(&r);
	kgb__job_assign__free_unpacked(a, NULL);
}

/* Every case of each operator of `ops` (NULL-terminated) passes. */
static void expect_ops(const char *const *ops)
{
	use_doubles();
	for (size_t i = 0; ops[i]; i++)
		ASSERT_EQ_INT(expect_all_pass(ops[i], false), kgb_op_case_count(kgb_catalog_find(ops[i])));
}

/* Level 2: gemv (complex, C mode), its batched _64 (pointer arrays) and strided forms,
 * ger with conjugation, a band routine and a triangular solve with every uplo /
 * trans / diag. */
TEST(nblas_hip_blas2_gemv)
{
	static const char *const ops[] = { "cublasCgemv_v2", "cublasZgerc_v2", NULL };
	expect_ops(ops);
}

TEST(nblas_hip_blas2_batched)
{
	static const char *const ops[] = { "cublasCgemvBatched_64", "cublasSgemvStridedBatched", NULL };
	expect_ops(ops);
}

TEST(nblas_hip_blas2_band_triangular)
{
	static const char *const ops[] = { "cublasDsbmv_v2", "cublasStrsv_v2", NULL };
	expect_ops(ops);
}

/* Level 3: Ex (f16, bf16, i8 inputs), half batched (pointer arrays), complex strided
 * _64, syrk and syrkEx, symm, trsm (every side / uplo / trans / diag) and its batched
 * complex form, geam, dgmm. */
TEST(nblas_hip_blas3_gemm)
{
	static const char *const ops[] = { "cublasSgemmEx", "cublasHgemmBatched", NULL };
	expect_ops(ops);
}

TEST(nblas_hip_blas3_gemm_complex)
{
	static const char *const ops[] = { "cublasCgemmStridedBatched_64", "cublasCsymm_v2", NULL };
	expect_ops(ops);
}

TEST(nblas_hip_blas3_syrk_trsm)
{
	static const char *const ops[] = { "cublasSsyrk_v2", "cublasCsyrkEx", "cublasStrsm_v2", NULL };
	expect_ops(ops);
}

TEST(nblas_hip_blas3_other)
{
	static const char *const ops[] = { "cublasZtrsmBatched", "cublasSgeam", "cublasSdgmm", NULL };
	expect_ops(ops);
}

/* A wrong mapping is caught: with N and T swapped at the library boundary every case
 * whose transposes make a difference fails, and some fail as wrong results (the
 * others as the library's refusal of a leading dimension too small). */
TEST(nblas_hip_mutant_transpose_caught)
{
	use_doubles();
	setenv("KGB_FAKE_HIPBLAS_MUTATE", "trans", 1);
	Kgb__JobAssign *a = native_job("cublasDgemmStridedBatched", NULL, 0, false);
	run_t r;
	run_native(&kgb_backend_hip, a, &r);
	size_t wrong = 0, pass = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (r.cr[i]->verdict == KGB__VERDICT__VERDICT_PASS)
			pass++;
		else if (r.cr[i]->verdict == KGB__VERDICT__VERDICT_WRONG_RESULT)
			wrong++;
	}
	ASSERT_EQ_INT(r.n, a->n_cases);
	ASSERT_EQ_INT(pass, 0);
	ASSERT_TRUE(wrong > 0);
	run_free(&r);
	kgb__job_assign__free_unpacked(a, NULL);
}

/* Negative increments walked forwards: exactly the cases where that changes which
 * elements meet (one increment negative, n > 1) fail, as wrong results. */
TEST(nblas_hip_mutant_increment_caught)
{
	use_doubles();
	setenv("KGB_FAKE_HIPBLAS_MUTATE", "inc", 1);
	Kgb__JobAssign *a = native_job("cublasDaxpy_v2", NULL, 0, false);
	run_t r;
	run_native(&kgb_backend_hip, a, &r);
	ASSERT_EQ_INT(r.n, a->n_cases);
	size_t neg = 0;
	for (size_t i = 0; i < r.n; i++) {
		kgb_case_t c;
		char e[256];
		ASSERT_OK(kgb_case_build(kgb_catalog_find("cublasDaxpy_v2"), r.cr[i]->case_index, &c, e, sizeof e), e);
		kgb_value_t ix, iy, n;
		ASSERT_TRUE(kgb_symtab_get(c.sym, "incx", &ix) && kgb_symtab_get(c.sym, "incy", &iy) &&
		            kgb_symtab_get(c.sym, "n", &n));
		/* with one element, or both vectors walked backwards (the same pairs of
		 * elements), the direction of the walk makes no difference to axpy */
		bool has_neg = ((ix.i < 0) != (iy.i < 0)) && n.i > 1;
		kgb_case_release(&c);
		if (has_neg) {
			neg++;
			ASSERT_EQ_INT(r.cr[i]->verdict, KGB__VERDICT__VERDICT_WRONG_RESULT);
		} else {
			ASSERT_EQ_INT(r.cr[i]->verdict, KGB__VERDICT__VERDICT_PASS);
		}
	}
	ASSERT_EQ_INT(neg, 4);   /* n 1000 with incx -2 (incy 1, 2) or incy -1 (incx 1, 3) */
	run_free(&r);
	kgb__job_assign__free_unpacked(a, NULL);
}

/* Without a BLAS library: unsupported, naming what was looked for. */
TEST(nblas_unsupported_without_library)
{
	use_doubles();
	setenv("KGB_HIPBLAS_LIBRARY", "/nonexistent/libhipblas-missing.so", 1);
	uint32_t c0 = 0;
	Kgb__JobAssign *a = native_job("cublasSgemm_v2", &c0, 1, false);
	run_t r;
	run_native(&kgb_backend_hip, a, &r);
	ASSERT_EQ_INT(r.n, 1);
	ASSERT_EQ_INT(r.cr[0]->verdict, KGB__VERDICT__VERDICT_UNSUPPORTED);
	ASSERT_CONTAINS(r.cr[0]->message, "libhipblas-missing.so");
	ASSERT_CONTAINS(r.cr[0]->message, "libhipblas.so");
	run_free(&r);
	/* a backend that has no BLAS library at all (OpenCL): unsupported before any
	 * device is opened */
	run_native(&kgb_backend_opencl, a, &r);
	ASSERT_EQ_INT(r.n, 1);
	ASSERT_EQ_INT(r.cr[0]->verdict, KGB__VERDICT__VERDICT_UNSUPPORTED);
	ASSERT_CONTAINS(r.cr[0]->message, "opencl backend has no BLAS library");
	run_free(&r);
	kgb__job_assign__free_unpacked(a, NULL);
}

/* Through the executor child the worker spawns (its cleaned environment keeps the
 * library overrides), as `kgb-worker run` and the daemon run it. */
TEST(nblas_hip_through_executor_child)
{
	use_doubles();
	uint32_t cases[] = { 0, 1, 2 };
	Kgb__JobAssign *a = native_job("cublasSgemm_v2", cases, 3, false);
	char err[512];
	bool nh = false;
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), "hip", 0, a, &nh, err, sizeof err);
	if (!r)
		FAIL("kgb_exec_job_sync: %s", err);
	ASSERT_EQ_INT(r->n_cases, 3);
	for (size_t i = 0; i < r->n_cases; i++)
		if (r->cases[i]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("case %u: %s: %s", r->cases[i]->case_index, kgb_verdict_name(r->cases[i]->verdict),
			     r->cases[i]->message);
	ASSERT_CONTAINS(r->log, "through hipblas");
	ASSERT_FALSE(nh);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}
