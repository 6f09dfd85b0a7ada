/* The executor against a test double of a backend (host memory, a "Triton" silu whose
 * speed depends on its BLOCK constant): autotuning picks the fastest configuration,
 * binds its constants for the grid expressions, skips a configuration that does not
 * compile, and validates and times the winner. Runs kgb_executor_run in-process and
 * decodes its records from a file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "executor.h"
#include "util.h"
#include "validate.h"
#include "test_worker.h"

struct kgb_dbuf {
	uint8_t *p;
	size_t bytes;
	bool view;
};
struct kgb_module {
	long block;
	int warps;
};

static int compiles, runs_by_block[1025];

static int fk_open(uint32_t index, void **ctx, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*ctx = index == 0 ? (void *)&compiles : NULL;
	return index == 0 ? 0 : KGB_BE_ERR;
}
static void fk_close(void *ctx) { (void)ctx; }
static const char *fk_last_error(void *ctx) { (void)ctx; return "fake backend error"; }
static int fk_alloc(void *ctx, size_t bytes, kgb_dbuf_t **out)
{
	(void)ctx;
	*out = calloc(1, sizeof **out);
	(*out)->p = malloc(bytes);
	(*out)->bytes = bytes;
	return 0;
}
static void fk_free(void *ctx, kgb_dbuf_t *b)
{
	(void)ctx;
	if (b && !b->view)
		free(b->p);
	free(b);
}
static int fk_view(void *ctx, kgb_dbuf_t *parent, size_t off, size_t bytes, kgb_dbuf_t **out)
{
	(void)ctx;
	*out = calloc(1, sizeof **out);
	(*out)->p = parent->p + off;
	(*out)->bytes = bytes;
	(*out)->view = true;
	return 0;
}
static int fk_write(void *ctx, kgb_dbuf_t *b, size_t off, const void *src, size_t n)
{
	(void)ctx;
	memcpy(b->p + off, src, n);
	return 0;
}
static int fk_read(void *ctx, kgb_dbuf_t *b, size_t off, void *dst, size_t n)
{
	(void)ctx;
	memcpy(dst, b->p + off, n);
	return 0;
}
static int fk_fill(void *ctx, kgb_dbuf_t *b, size_t off, uint8_t byte, size_t n)
{
	(void)ctx;
	memset(b->p + off, byte, n);
	return 0;
}
static int fk_compile(void *ctx, const kgb_compile_req_t *req, kgb_module_t **out, char *log, size_t loglen)
{
	(void)ctx;
	compiles++;
	long block = -1;
	if (!req->config)
		return snprintf(log, loglen, "no config"), KGB_BE_COMPILE;
	for (size_t i = 0; i < req->config->nconstants; i++)
		if (strcmp(req->config->constants[i].name, "BLOCK") == 0)
			block = strtol(req->config->constants[i].value, NULL, 10);
	if (block < 1 || block > 1024 || (block & (block - 1)))
		return snprintf(log, loglen, "BLOCK=%ld must be a power of two", block), KGB_BE_COMPILE;
	*out = calloc(1, sizeof **out);
	(*out)->block = block;
	(*out)->warps = req->config->num_warps;
	log[0] = 0;
	return 0;
}
static void fk_module_free(void *ctx, kgb_module_t *m)
{
	(void)ctx;
	free(m);
}
/* silu over (self, out, n) in f32: program p handles [p*BLOCK, (p+1)*BLOCK); the
 * "time" is smallest for BLOCK = 256 */
static int fk_run(void *ctx, const kgb_launch_t *L, size_t n, uint32_t timeout_ms, double *elapsed)
{
	(void)ctx;
	(void)timeout_ms;
	double t = 0;
	for (size_t k = 0; k < n; k++) {
		const float *self = (const float *)L[k].args[0].buf->p;
		float *out = (float *)L[k].args[1].buf->p;
		int32_t cnt;
		memcpy(&cnt, L[k].args[2].bytes, 4);
		long block = L[k].mod->block;
		runs_by_block[block]++;
		for (uint64_t pid = 0; pid < L[k].grid[0]; pid++)
			for (long j = 0; j < block; j++) {
				long i = (long)pid * block + j;
				if (i < cnt)
					out[i] = self[i] / (1.0f + expf(-self[i]));
			}
		t += 1000.0 + 10.0 * fabs((double)block - 256.0);
	}
	if (elapsed)
		*elapsed = t;
	return 0;
}
static int fk_flush(void *ctx) { (void)ctx; return 0; }
static int fk_health(void *ctx) { (void)ctx; return 0; }

static const kgb_backend_t fake = {
	.name = "fake", .langs = 1u << KGB_LANG_TRITON, .open = fk_open, .close = fk_close,
	.last_error = fk_last_error, .alloc = fk_alloc, .free = fk_free, .view = fk_view, .write = fk_write,
	.read = fk_read, .fill = fk_fill, .compile = fk_compile, .module_free = fk_module_free, .run = fk_run,
	.flush_cache = fk_flush, .health = fk_health,
};

/* A silu job of cases[0..n) whose Triton kernel silu_kernel(self, out, out.numel),
 * with grid cdiv(out.numel, BLOCK), has the autotuning configs given (JSON array). */
static Kgb__JobAssign *silu_job(const uint32_t *cases, size_t n, const char *configs)
{
	Kgb__JobAssign *a = tw_unary_job("silu", "silu_kernel", "def silu_kernel(): pass\n", cases, n);
	free(a->plan_json);
	a->plan_json = kgb_xasprintf(
		"{\"kernels\": [{\"entry\": \"silu_kernel\", \"lang\": \"triton\", \"source\": \"k.cl\", "
		"\"grid\": [\"cdiv(out.numel, BLOCK)\"], "
		"\"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"out\"}, {\"scalar\": \"out.numel\"}], "
		"\"configs\": %s}]}", configs);
	return a;
}

TEST(worker_exec_autotune_picks_fastest_config)
{
	uint32_t cases[] = { 0, 3 }; /* silu f32 [1024] (not timed), f32 [131072] (timed) */
	Kgb__JobAssign *a = silu_job(cases, 2,
		"[{\"constants\": {\"BLOCK\": \"64\"}, \"num_warps\": 2}, "
		"{\"constants\": {\"BLOCK\": \"3\"}}, "
		"{\"constants\": {\"BLOCK\": \"{min(256, next_pow2(out.numel))}\"}, \"num_warps\": 4}, "
		"{\"constants\": {\"BLOCK\": \"1024\"}, \"num_warps\": 8}]");
	a->timing_budget_ms = 20;
	FILE *f = tw_records_file();
	int status = kgb_executor_run(&fake, 0, a, fileno(f));
	ASSERT_EQ_INT(status, KGB_EXEC_EXIT_OK);
	Kgb__CaseResult *cr[4];
	Kgb__JobResult *end;
	size_t n = tw_read_records(fileno(f), cr, 4, &end, true);
	fclose(f);
	ASSERT_EQ_INT(n, 2);
	ASSERT_TRUE(end != NULL);
	for (size_t i = 0; i < n; i++)
		if (cr[i]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("case %u: %s: %s", cr[i]->case_index, kgb_verdict_name(cr[i]->verdict), cr[i]->message);
	/* case 0 (not timed) ran configs[0] (BLOCK 64) only; case 3 tuned and chose
	 * configs[2], BLOCK = min(256, next_pow2(131072)) = 256 */
	ASSERT_EQ_STR(cr[0]->message, "");
	ASSERT_CONTAINS(cr[1]->message, "configs[2]");
	ASSERT_TRUE(cr[1]->timing != NULL);
	ASSERT_NEAR(cr[1]->timing->median_ns, 1000.0, 1e-9);
	ASSERT_CONTAINS(end->log, "autotune picked configs[2] of 4");
	ASSERT_CONTAINS(end->log, "1 failed");
	ASSERT_CONTAINS(end->log, "BLOCK=3 must be a power of two");
	ASSERT_TRUE(runs_by_block[256] >= 10 + 2); /* samples + the two validation runs */
	ASSERT_TRUE(runs_by_block[1024] >= 1);     /* it was tried */
	/* BLOCK 64 (compiled for case 0, reused for case 3: same key), 3 (fails), 256, 1024 */
	ASSERT_EQ_INT(compiles, 4);
	for (size_t i = 0; i < n; i++)
		kgb__case_result__free_unpacked(cr[i], NULL);
	kgb__job_result__free_unpacked(end, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_autotune_skips_failing_configs)
{
	uint32_t cases[] = { 3 };
	Kgb__JobAssign *a = silu_job(cases, 1,
		"[{\"constants\": {\"BLOCK\": \"64\"}}, {\"constants\": {\"BLOCK\": \"5\"}}, "
		"{\"constants\": {\"BLOCK\": \"7\"}}]");
	/* configs[0] compiles (the untuned path), the others do not: the tuner keeps 0 */
	FILE *f = tw_records_file();
	ASSERT_EQ_INT(kgb_executor_run(&fake, 0, a, fileno(f)), KGB_EXEC_EXIT_OK);
	Kgb__CaseResult *cr[2];
	Kgb__JobResult *end;
	ASSERT_EQ_INT(tw_read_records(fileno(f), cr, 2, &end, true), 1);
	fclose(f);
	ASSERT_EQ_INT(cr[0]->verdict, KGB_V_PASS);
	ASSERT_CONTAINS(cr[0]->message, "configs[0]");
	kgb__case_result__free_unpacked(cr[0], NULL);
	kgb__job_result__free_unpacked(end, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}
