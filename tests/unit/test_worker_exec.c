/* The executor end to end on the OpenCL backend (PoCL on the CPU): each planted defect
 * gets its own verdict. The jobs run in a real executor child (kgb-worker exec). */
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "backend.h"
#include "executor.h"
#include "util.h"
#include "validate.h"
#include "test_worker.h"

/* silu cases: 0 = f32 [1024], 3 = f32 [131072] (timed), 9 = bf16 [33,65] */
static const uint32_t silu_cases[] = { 0, 3, 9 };

#define SILU_BODY "float x = LOAD_self(self, i); STORE_out(out, i, x / (1.0f + exp(-x)));"
#define KSIG "__kernel void k(__global T_self *self, __global T_out *out, int n)\n"

static bool have_opencl(void)
{
	kgb_device_info_t d[4];
	char why[256];
	if (kgb_backend_opencl.probe(d, 4, why, sizeof why) > 0)
		return true;
	fprintf(stderr, "    (no OpenCL device: %s)\n", why);
	return false;
}

static Kgb__JobResult *run_job(Kgb__JobAssign *a, bool *needs_health)
{
	char err[512] = "";
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), "opencl", 0, a, needs_health, err, sizeof err);
	if (!r)
		FAIL("kgb_exec_job_sync: %s", err);
	ASSERT_EQ_INT(r->n_cases, a->n_cases);
	for (size_t i = 0; i < r->n_cases; i++)
		ASSERT_EQ_INT(r->cases[i]->case_index, a->cases[i]);
	return r;
}

/* Run src on the silu cases and require every case to get verdict v (message
 * containing msg when not NULL). */
static void expect_all(const char *src, int v, const char *msg)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	Kgb__JobAssign *a = tw_unary_job("silu", "k", src, silu_cases, 3);
	Kgb__JobResult *r = run_job(a, NULL);
	for (size_t i = 0; i < r->n_cases; i++) {
		if ((int)r->cases[i]->verdict != v)
			FAIL("case %u: verdict %s (%s), expected %s", r->cases[i]->case_index,
			     kgb_verdict_name(r->cases[i]->verdict), r->cases[i]->message, kgb_verdict_name(v));
		if (msg)
			ASSERT_CONTAINS(r->cases[i]->message, msg);
	}
	ASSERT_EQ_INT(r->infra, 0);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_pass_and_timing)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	Kgb__JobAssign *a = tw_unary_job("silu", "k", KSIG "{ int i = get_global_id(0); if (i < n) { " SILU_BODY " } }",
	                                 silu_cases, 3);
	bool needs_health = true;
	Kgb__JobResult *r = run_job(a, &needs_health);
	ASSERT_FALSE(needs_health);
	for (size_t i = 0; i < r->n_cases; i++) {
		Kgb__CaseResult *c = r->cases[i];
		if (c->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("case %u: %s: %s", c->case_index, kgb_verdict_name(c->verdict), c->message);
		ASSERT_TRUE(c->max_abs_err < 1e-3);
	}
	/* case 3 is timed: real statistics from profiling events */
	Kgb__CaseResult *t = r->cases[1];
	ASSERT_TRUE(t->timed);
	ASSERT_TRUE(t->timing != NULL);
	ASSERT_TRUE(t->timing->samples >= 1);
	ASSERT_TRUE(t->timing->median_ns > 0);
	ASSERT_TRUE(t->timing->min_ns <= t->timing->median_ns);
	ASSERT_TRUE(t->timing->p10_ns <= t->timing->p90_ns);
	ASSERT_EQ_STR(t->timing->method, "opencl-profiling-events");
	ASSERT_TRUE(r->cases[0]->timing == NULL);
	ASSERT_TRUE(r->compile_ms > 0);
	ASSERT_TRUE(r->device_ms > 0);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_out_of_bounds)
{
	/* writes one element past the end (a value that is not the guard pattern) */
	expect_all(KSIG "{ int i = get_global_id(0); if (i < n) { " SILU_BODY " } if (i == 0) STORE_out(out, n, 3.0f); }",
	           KGB_V_OUT_OF_BOUNDS_WRITE, "guard");
}

TEST(worker_exec_out_of_bounds_copy_of_guard)
{
	/* copies self[n] (self's guard band) to out[n]: caught because every buffer's
	 * guard band has its own byte */
	expect_all(KSIG "{ int i = get_global_id(0); if (i < n) { " SILU_BODY " } if (i == 0) out[n] = self[n]; }",
	           KGB_V_OUT_OF_BOUNDS_WRITE, NULL);
}

TEST(worker_exec_writes_half)
{
	expect_all(KSIG "{ int i = get_global_id(0); if (i < n / 2) { " SILU_BODY " } }", KGB_V_UNWRITTEN_OUTPUT, NULL);
}

TEST(worker_exec_modifies_input)
{
	expect_all(KSIG "{ int i = get_global_id(0); if (i < n) { " SILU_BODY " STORE_self(self, i, 0.0f); } }",
	           KGB_V_INPUT_MODIFIED, "self");
}

TEST(worker_exec_wrong_result)
{
	expect_all(KSIG "{ int i = get_global_id(0); if (i < n) STORE_out(out, i, LOAD_self(self, i)); }",
	           KGB_V_WRONG_RESULT, NULL);
}

TEST(worker_exec_compile_error)
{
	expect_all(KSIG "{ int i = get_global_id(0) oops; }", KGB_V_COMPILE_ERROR, "k.cl:");
}

TEST(worker_exec_missing_entry)
{
	expect_all("__kernel void other(__global float *p) { p[0] = 1; }", KGB_V_COMPILE_ERROR, "no __kernel");
}

TEST(worker_exec_bad_block_is_resource_error)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	Kgb__JobAssign *a = tw_unary_job("silu", "k", KSIG "{ int i = get_global_id(0); if (i < n) { " SILU_BODY " } }",
	                                 silu_cases, 1);
	/* a work-group far larger than any device allows */
	free(a->plan_json);
	a->plan_json = strdup("{\"kernels\": [{\"entry\": \"k\", \"lang\": \"opencl\", \"source\": \"k.cl\", "
	                      "\"grid\": [\"1\"], \"block\": [\"1048576\"], \"args\": [{\"tensor\": \"self\"}, "
	                      "{\"tensor\": \"out\"}, {\"scalar\": \"out.numel\"}]}]}");
	Kgb__JobResult *r = run_job(a, NULL);
	ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_RESOURCE_ERROR);
	ASSERT_CONTAINS(r->cases[0]->message, "CL_INVALID_WORK_GROUP_SIZE");
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_plan_error)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	Kgb__JobAssign *a = tw_unary_job("silu", "k", KSIG "{ }", silu_cases, 2);
	free(a->plan_json);
	a->plan_json = strdup("{\"kernels\": [{\"entry\": \"k\", \"lang\": \"opencl\", \"source\": \"k.cl\", "
	                      "\"grid\": [\"cdiv(out.numel, N_UNKNOWN)\"], \"block\": [\"64\"], \"args\": []}]}");
	Kgb__JobResult *r = run_job(a, NULL);
	for (size_t i = 0; i < r->n_cases; i++) {
		ASSERT_EQ_INT(r->cases[i]->verdict, KGB_V_PLAN_ERROR);
		ASSERT_CONTAINS(r->cases[i]->message, "N_UNKNOWN");
	}
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_unsupported_language)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	Kgb__JobAssign *a = tw_unary_job("silu", "k", "extern \"C\" __global__ void k() {}", silu_cases, 2);
	free(a->plan_json);
	a->plan_json = strdup("{\"kernels\": [{\"entry\": \"k\", \"lang\": \"cuda\", \"source\": \"k.cl\", "
	                      "\"grid\": [\"1\"], \"block\": [\"64\"], \"args\": []}]}");
	Kgb__JobResult *r = run_job(a, NULL);
	ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_UNSUPPORTED);
	ASSERT_EQ_INT(r->cases[1]->verdict, KGB_V_UNSUPPORTED);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_crash_then_not_run)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	/* a wild write far outside every buffer kills the executor with SIGSEGV */
	Kgb__JobAssign *a = tw_unary_job("silu", "k",
	                                 KSIG "{ int i = get_global_id(0); if (i < n) out[i + 400000000] = 1.0f; }",
	                                 silu_cases, 3);
	bool needs_health = false;
	Kgb__JobResult *r = run_job(a, &needs_health);
	ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_CRASH);
	ASSERT_CONTAINS(r->cases[0]->message, "SIGSEGV");
	ASSERT_EQ_INT(r->cases[1]->verdict, KGB_V_NOT_RUN);
	ASSERT_EQ_INT(r->cases[2]->verdict, KGB_V_NOT_RUN);
	ASSERT_TRUE(needs_health);
	ASSERT_EQ_INT(r->infra, 0);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
	/* and a fresh child finds the device healthy */
	char err[256] = "";
	ASSERT_OK(kgb_exec_health_sync(tw_worker_bin(), "opencl", 0, 30000, err, sizeof err), err);
}

TEST(worker_exec_timeout_then_not_run)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	Kgb__JobAssign *a = tw_unary_job("silu", "k",
	                                 KSIG "{ int i = get_global_id(0); while (n > 0) { if (i < 0) break; out[0] = self[0]; } }",
	                                 silu_cases, 3);
	a->time_limit_ms = 1500;
	bool needs_health = false;
	double t0 = kgb_now_ms();
	Kgb__JobResult *r = run_job(a, &needs_health);
	double took = kgb_now_ms() - t0;
	ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_TIMEOUT);
	ASSERT_EQ_INT(r->cases[1]->verdict, KGB_V_NOT_RUN);
	ASSERT_EQ_INT(r->cases[2]->verdict, KGB_V_NOT_RUN);
	ASSERT_TRUE(needs_health);
	/* the compile before the run is not counted: the bound is the run's limit plus
	 * whatever compiling took on this (possibly busy) machine */
	ASSERT_TRUE(took < 1500 + KGB_EXEC_KILL_GRACE_MS + 60000);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_unknown_op_is_infra)
{
	Kgb__JobAssign *a = tw_unary_job("no_such_op", "k", "", silu_cases, 2);
	char err[256] = "";
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), "opencl", 0, a, NULL, err, sizeof err);
	if (!r)
		FAIL("%s", err);
	ASSERT_EQ_INT(r->infra, KGB_V_INFRA_ERROR);
	ASSERT_EQ_INT(r->n_cases, 0);
	ASSERT_CONTAINS(r->log, "no_such_op");
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_exec_bad_device_is_infra)
{
	Kgb__JobAssign *a = tw_unary_job("silu", "k", KSIG "{ }", silu_cases, 1);
	char err[256] = "";
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), "opencl", 999, a, NULL, err, sizeof err);
	if (!r)
		FAIL("%s", err);
	ASSERT_EQ_INT(r->infra, KGB_V_INFRA_ERROR);
	ASSERT_CONTAINS(r->log, "999");
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

/* The watchdog judges hangs by device runs only: a job whose limit runs out while the
 * worker compiles or stages is retried (infra), never a kernel's timeout. */
TEST(worker_exec_watchdog_judges_runs_not_setup)
{
	const uint32_t lim = 1000;
	const double g = KGB_EXEC_KILL_GRACE_MS, A = KGB_EXEC_SETUP_ALLOWANCE_MS;
	/* inside the limit: nothing */
	ASSERT_EQ_INT(kgb_exec_watchdog(500, 0, false, 0, 0, lim), KGB_EXEC_KILL_NONE);
	ASSERT_EQ_INT(kgb_exec_watchdog(500, 0, true, 100, 0, lim), KGB_EXEC_KILL_NONE);
	/* a slow compile on a busy machine is not the kernel's: past the limit with no run
	 * open, nothing until the allowance is spent, then an infra retry */
	ASSERT_EQ_INT(kgb_exec_watchdog(lim + g + 1, 0, false, 0, 0, lim), KGB_EXEC_KILL_NONE);
	ASSERT_EQ_INT(kgb_exec_watchdog(lim + g + A + 1, 0, false, 0, 0, lim), KGB_EXEC_KILL_SETUP);
	/* a run that started late keeps its whole limit */
	ASSERT_EQ_INT(kgb_exec_watchdog(30000 + lim, 0, true, 30000, 0, lim), KGB_EXEC_KILL_NONE);
	ASSERT_EQ_INT(kgb_exec_watchdog(30000 + lim + g + 1, 0, true, 30000, 0, lim), KGB_EXEC_KILL_TIMEOUT);
	/* time inside runs does not count as set-up: many runs of a long job are fine */
	ASSERT_EQ_INT(kgb_exec_watchdog(lim + g + A + 5000, 0, false, 0, 10000, lim), KGB_EXEC_KILL_NONE);
	/* no limit: never */
	ASSERT_EQ_INT(kgb_exec_watchdog(1e9, 0, true, 0, 0, 0), KGB_EXEC_KILL_NONE);
}

/* Sharing a device: an executor whose device lock is held by another job waits for it
 * without starting any case, that wait counts neither as a run nor as set-up for the
 * watchdog, and once the lock is free the job runs and passes and its log says how
 * long it waited. */
TEST(worker_exec_waits_for_device_lock)
{
	if (!have_opencl())
		FAIL("this test needs an OpenCL device (PoCL)");
	char lock[1200], err[512] = "";
	/* the lock this process's executors share: take it first, as another slot would */
	ASSERT_TRUE(kgb_exec_lock_path("opencl", 0, lock, sizeof lock) == 0);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ_INT(flock(fd, LOCK_EX), 0);

	Kgb__JobAssign *a = tw_unary_job("silu", "k", KSIG "{ int i = get_global_id(0); if (i < n) { " SILU_BODY " } }",
	                                 silu_cases, 3);
	kgb_exec_child_t *ch = NULL;
	if (kgb_exec_spawn(tw_worker_bin(), KGB_EXEC_JOB, "opencl", 0, a, &ch, err, sizeof err) != 0)
		FAIL("kgb_exec_spawn: %s", err);
	/* pump its records for a while: it must come to wait, and start no case */
	double until = kgb_now_ms() + 20000;
	while (kgb_now_ms() < until) {
		struct pollfd p = { .fd = kgb_exec_fd(ch), .events = POLLIN };
		if (poll(&p, 1, 100) > 0 && kgb_exec_pump(ch, err, sizeof err) < 0)
			FAIL("pump: %s", err);
		if (kgb_exec_waiting(ch))
			break;
	}
	ASSERT_TRUE(kgb_exec_waiting(ch));
	ASSERT_EQ_INT(kgb_exec_cases_done(ch), 0);
	/* past the set-up allowance, the wait is still not the job's fault; past a whole
	 * job's limit plus the allowance, the device is not coming back: an infra retry */
	ASSERT_EQ_INT(kgb_exec_deadline(ch, kgb_now_ms() + KGB_EXEC_SETUP_ALLOWANCE_MS + 100, 100000),
	              KGB_EXEC_KILL_NONE);
	ASSERT_EQ_INT(kgb_exec_deadline(ch, kgb_now_ms() + 200000 + KGB_EXEC_KILL_GRACE_MS + KGB_EXEC_SETUP_ALLOWANCE_MS,
	                                100000),
	              KGB_EXEC_KILL_SETUP);
	usleep(300 * 1000);   /* a wait of at least this long, for the phases below */
	ASSERT_EQ_INT(flock(fd, LOCK_UN), 0);
	close(fd);
	Kgb__JobResult *r = kgb_exec_finish(ch, a);
	ch = NULL;
	ASSERT_EQ_INT(r->n_cases, 3);
	for (size_t i = 0; i < r->n_cases; i++)
		if (r->cases[i]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("case %u: %s: %s", r->cases[i]->case_index, kgb_verdict_name(r->cases[i]->verdict),
			     r->cases[i]->message);
	ASSERT_CONTAINS(r->log, "for the device (another job held it)");
	/* the job's phases count the same wait */
	double waited = -1, phased = -1;
	const char *w = strstr(r->log, "waited "), *ph = strstr(r->log, "lock waits ");
	ASSERT_TRUE(w && ph);
	ASSERT_EQ_INT(sscanf(w, "waited %lf", &waited), 1);
	ASSERT_EQ_INT(sscanf(ph, "lock waits %lf", &phased), 1);
	if (phased < 300 || fabs(waited - phased) > 1.0)
		FAIL("lock waits %.0f ms in the phases, %.0f ms waited", phased, waited);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}
