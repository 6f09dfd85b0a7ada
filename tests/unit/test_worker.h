/* Helpers shared by the worker's unit tests (test_worker_*.c). */
#ifndef KGB_TEST_WORKER_H
#define KGB_TEST_WORKER_H

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "proto/kgb.pb-c.h"

/* The kgb-worker binary built next to this kgb-unit (build/rel/bin or build/san/bin);
 * KGB_WORKER_BIN overrides. Fails the test when it is missing. Static string. */
static inline const char *tw_worker_bin(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("KGB_WORKER_BIN");
	if (env && *env)
		return env;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		FAIL("readlink /proc/self/exe failed");
	self[n] = 0;
	snprintf(path, sizeof path, "%s/kgb-worker", dirname(self));
	if (access(path, X_OK) != 0)
		FAIL("%s not found: build it first (make)", path);
	return path;
}

/* A JobAssign for op with one OpenCL kernel `entry` taking (self, out, out.numel),
 * in source text src, on cases[0..n). Allocated so that
 * kgb__job_assign__free_unpacked frees it. */
static inline Kgb__JobAssign *tw_unary_job(const char *op, const char *entry, const char *src,
                                           const uint32_t *cases, size_t n)
{
	Kgb__JobAssign *a = malloc(sizeof *a);
	kgb__job_assign__init(a);
	a->job_id = 7;
	a->epoch = 3;
	a->op = strdup(op);
	a->cases = malloc(n * sizeof *a->cases);
	memcpy(a->cases, cases, n * sizeof *a->cases);
	a->n_cases = n;
	a->seed = 11;
	a->time_limit_ms = 20000;
	a->timing_budget_ms = 50;
	a->timing = true;
	char plan[1024];
	snprintf(plan, sizeof plan,
	         "{\"kernels\": [{\"entry\": \"%s\", \"lang\": \"opencl\", \"source\": \"k.cl\", "
	         "\"grid\": [\"cdiv(out.numel, 64)\"], \"block\": [\"64\"], "
	         "\"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"out\"}, {\"scalar\": \"out.numel\"}]}]}",
	         entry);
	a->plan_json = strdup(plan);
	a->sources = malloc(sizeof *a->sources);
	a->sources[0] = malloc(sizeof **a->sources);
	kgb__source_file__init(a->sources[0]);
	a->sources[0]->name = strdup("k.cl");
	a->sources[0]->content.data = (uint8_t *)strdup(src);
	a->sources[0]->content.len = strlen(src);
	a->n_sources = 1;
	return a;
}

#endif
