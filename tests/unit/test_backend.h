/* Fixtures shared by the device backend tests against test doubles
 * (test_backend_hip.c, test_backend_ze.c): launch arguments, a compile with an expected
 * result, buffers and views, the vector add, the faults, and an executor job of two
 * add cases through the worker's executor child. */
#ifndef KGB_TEST_BACKEND_H
#define KGB_TEST_BACKEND_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "backend.h"
#include "catalog.h"
#include "executor.h"
#include "validate.h"
#include "test_worker.h"
#include "test_case.h"

static inline kgb_larg_t tb_buf_arg(kgb_dbuf_t *b)
{
	kgb_larg_t a = { .kind = KGB_LARG_BUF, .buf = b };
	return a;
}

static inline kgb_larg_t tb_u32_arg(uint32_t v)
{
	kgb_larg_t a = { .kind = KGB_LARG_SCALAR, .size = 4 };
	memcpy(a.bytes, &v, 4);
	return a;
}

/* The end of a test: the buffer d and the module m (either may be NULL) freed, the
 * context closed. */
static inline void tb_done(const kgb_backend_t *be, void *ctx, kgb_dbuf_t *d, kgb_module_t *m)
{
	if (d)
		be->free(ctx, d);
	if (m)
		be->module_free(ctx, m);
	be->close(ctx);
}

/* Compile req on be; the result must be want (the module exists exactly when it is
 * KGB_BE_OK). Returns the module or NULL. */
static inline kgb_module_t *tb_compile(const kgb_backend_t *be, void *ctx, const kgb_compile_req_t *req, int want)
{
	kgb_module_t *m = NULL;
	char log[1024] = "";
	int rc = be->compile(ctx, req, &m, log, sizeof log);
	if (rc != want)
		FAIL("compile %s: rc %d, expected %d: %s", req->entry, rc, want, be->last_error(ctx));
	ASSERT_TRUE((m != NULL) == (want == KGB_BE_OK));
	return m;
}

/* A view of n bytes at offset g of a parent of n + 2g: the parent filled with outer,
 * the view written with byte i = i * mul + add, then [off, off + len) of the view
 * filled with fill; the parent read back must show exactly that. *parent and *view
 * stay allocated for the caller's range checks. */
static inline void tb_view_round_trip(const kgb_backend_t *be, void *ctx, size_t g, size_t n, uint8_t outer,
                                      unsigned mul, unsigned add, size_t off, size_t len, uint8_t fill,
                                      kgb_dbuf_t **parent, kgb_dbuf_t **view)
{
	*parent = *view = NULL;
	ASSERT_EQ_INT(be->alloc(ctx, n + 2 * g, parent), 0);
	ASSERT_EQ_INT(be->view(ctx, *parent, g, n, view), 0);
	ASSERT_EQ_INT(be->fill(ctx, *parent, 0, outer, n + 2 * g), 0);
	uint8_t *src = malloc(n), *back = malloc(n + 2 * g);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * mul + add);
	ASSERT_EQ_INT(be->write(ctx, *view, 0, src, n), 0);
	ASSERT_EQ_INT(be->fill(ctx, *view, off, fill, len), 0);
	ASSERT_EQ_INT(be->read(ctx, *parent, 0, back, n + 2 * g), 0);
	for (size_t i = 0; i < g; i++) {
		ASSERT_EQ_INT(back[i], outer);
		ASSERT_EQ_INT(back[g + n + i], outer);
	}
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ_INT(back[g + i], i >= off && i < off + len ? fill : src[i]);
	free(src);
	free(back);
}

/* c = a + b over n floats through m (add_f32(a, b, c, n)), block work-items a group:
 * a and b as the caller filled them, c filled with 0xff first; one timed run whose
 * time must be positive and under 5 s, then c read back and checked. */
typedef struct tb_vadd {
	float *a, *b, *c;          /* host copies, n each */
	kgb_dbuf_t *d[3];          /* a, b, c on the device */
	kgb_larg_t args[4];
	kgb_launch_t L;            /* the launch, for more runs */
	int n;
} tb_vadd_t;

/* Host buffers of n floats for a, b and c; the caller fills a and b. */
static inline void tb_vadd_init(tb_vadd_t *v, int n)
{
	memset(v, 0, sizeof *v);
	v->n = n;
	v->a = malloc((size_t)n * 4);
	v->b = malloc((size_t)n * 4);
	v->c = malloc((size_t)n * 4);
}

static inline void tb_vadd_run(tb_vadd_t *v, const kgb_backend_t *be, void *ctx, kgb_module_t *m, unsigned block)
{
	size_t bytes = (size_t)v->n * 4;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ_INT(be->alloc(ctx, bytes, &v->d[i]), 0);
	ASSERT_EQ_INT(be->write(ctx, v->d[0], 0, v->a, bytes), 0);
	ASSERT_EQ_INT(be->write(ctx, v->d[1], 0, v->b, bytes), 0);
	ASSERT_EQ_INT(be->fill(ctx, v->d[2], 0, 0xff, bytes), 0);
	v->args[0] = tb_buf_arg(v->d[0]);
	v->args[1] = tb_buf_arg(v->d[1]);
	v->args[2] = tb_buf_arg(v->d[2]);
	v->args[3] = tb_u32_arg((uint32_t)v->n);
	kgb_launch_t L = { .mod = m, .grid = { (v->n + block - 1) / block, 1, 1 }, .block = { block, 1, 1 },
		               .args = v->args, .nargs = 4 };
	v->L = L;
	double ns = -1;
	ASSERT_OK(be->run(ctx, &v->L, 1, 5000, &ns), be->last_error(ctx));
	ASSERT_TRUE(ns > 0 && ns < 5e9);
	ASSERT_EQ_INT(be->read(ctx, v->d[2], 0, v->c, bytes), 0);
	for (int i = 0; i < v->n; i++)
		if (v->c[i] != v->a[i] + v->b[i])
			FAIL("c[%d] = %g, expected %g", i, v->c[i], v->a[i] + v->b[i]);
}

/* Frees the device buffers, the module, the context and the host copies. */
static inline void tb_vadd_done(tb_vadd_t *v, const kgb_backend_t *be, void *ctx, kgb_module_t *m)
{
	for (int i = 0; i < 3; i++)
		be->free(ctx, v->d[i]);
	be->module_free(ctx, m);
	be->close(ctx);
	free(v->a);
	free(v->b);
	free(v->c);
}

/* L faults: the run says KGB_BE_FAULT with msg, and the context is dead for an
 * allocation of bytes after it. */
static inline void tb_expect_fault(const kgb_backend_t *be, void *ctx, const kgb_launch_t *L, const char *msg,
                                   size_t bytes)
{
	ASSERT_EQ_INT(be->run(ctx, L, 1, 5000, NULL), KGB_BE_FAULT);
	ASSERT_CONTAINS(be->last_error(ctx), msg);
	kgb_dbuf_t *d = NULL;
	ASSERT_EQ_INT(be->alloc(ctx, bytes, &d), KGB_BE_FAULT);
}

/* fill_u32(buf, value, n) of m with n past a buffer of elems elements (grid groups of
 * 128) is a fault; then the module and the context go. */
static inline void tb_expect_oob_fault(const kgb_backend_t *be, void *ctx, kgb_module_t *m, size_t elems,
                                       uint32_t value, uint32_t n, unsigned grid)
{
	kgb_dbuf_t *d;
	ASSERT_EQ_INT(be->alloc(ctx, elems * 4, &d), 0);
	kgb_larg_t args[3] = { tb_buf_arg(d), tb_u32_arg(value), tb_u32_arg(n) };
	kgb_launch_t L = { .mod = m, .grid = { grid, 1, 1 }, .block = { 128, 1, 1 }, .args = args, .nargs = 3 };
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 5000, NULL), KGB_BE_FAULT);
	tb_done(be, ctx, d, m);
}

/* A directory sub of the test's scratch directory holding links named names[0..n) to
 * the test double lib, put on LD_LIBRARY_PATH (which the executor child keeps): the
 * double answers to the vendor runtime's own names. */
static inline void tb_double_as(const char *sub, const char *lib, const char *const *names, size_t n)
{
	char dir[PATH_MAX], link[PATH_MAX + 64], abs[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%s", kgb_test_tmpdir(), sub);
	ASSERT_EQ_INT(mkdir(dir, 0755), 0);
	ASSERT_TRUE(realpath(kgb_test_double(lib), abs) != NULL);
	for (size_t i = 0; i < n; i++) {
		snprintf(link, sizeof link, "%s/%s", dir, names[i]);
		ASSERT_EQ_INT(symlink(abs, link), 0);
	}
	setenv("LD_LIBRARY_PATH", dir, 1);
}

/* A case of op "add" with f32 tensors of 65536 elements, other of the same shape, and
 * the given alpha (the first such). The doubles' add_f32 computes self + other, which is
 * the reference only when alpha is 1. */
static inline bool tb_is_add_case(const kgb_case_t *c, const void *alpha)
{
	const kgb_tensor_t *out = kgb_case_tensor(c, "out"), *other = kgb_case_tensor(c, "other");
	return out->dtype == KGB_DT_F32 && out->numel == 65536 && other->numel == 65536 &&
	       kgb_case_pfloat(c, "alpha", 1.0) == *(const double *)alpha;
}

static inline uint32_t tb_add_case(double alpha)
{
	uint32_t i;
	if (tc_find("add", tb_is_add_case, &alpha, &i, 1) != 1)
		FAIL("op add has no f32 [65536] case with alpha %g", alpha);
	return i;
}

/* A job of two add cases (alpha 1, then 0.5) for add_f32 in the source file name
 * (content src) under plan_json, with a timing budget of 3 s (the doubles' copies and
 * cache flushes run on the host: the sampler needs the time). */
static inline Kgb__JobAssign *tb_add_job(const char *plan_json, const char *name, const char *src)
{
	uint32_t cases[2] = { tb_add_case(1.0), tb_add_case(0.5) };
	Kgb__JobAssign *a = tw_unary_job("add", "add_f32", src, cases, 2);
	free(a->plan_json);
	a->plan_json = strdup(plan_json);
	free(a->sources[0]->name);
	a->sources[0]->name = strdup(name);
	a->timing_budget_ms = 3000;
	return a;
}

/* Run a (tb_add_job) through the executor child on device 0 of backend: two cases
 * back, the first passing and timed by the backend's own method (10 samples or more, a
 * positive median),
 * the second a wrong result (alpha 0.5 is not what the kernel computes). */
static inline Kgb__JobResult *tb_run_add_job(const char *backend, Kgb__JobAssign *a, bool *needs_health)
{
	char err[512] = "";
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), backend, 0, a, needs_health, err, sizeof err);
	if (!r)
		FAIL("kgb_exec_job_sync: %s", err);
	if (r->infra)
		FAIL("infra error: %s", r->log);
	ASSERT_EQ_INT(r->n_cases, 2);
	Kgb__CaseResult *ok = r->cases[0], *bad = r->cases[1];
	if ((int)ok->verdict != KGB_V_PASS)
		FAIL("case %u: %s (%s)\n%s", ok->case_index, kgb_verdict_name((int)ok->verdict), ok->message, r->log);
	ASSERT_TRUE(ok->timed && ok->timing);
	if (ok->timing->samples < 10 || !(ok->timing->median_ns > 0))
		FAIL("timing: %u samples, median %g ns, message %s\n%s", ok->timing->samples, ok->timing->median_ns,
		     ok->message, r->log);
	ASSERT_EQ_STR(ok->timing->method, backend);
	ASSERT_EQ_INT((int)bad->verdict, KGB_V_WRONG_RESULT);
	return r;
}

#endif
