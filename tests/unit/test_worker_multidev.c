/* Several devices in one worker (docs/multi-gpu.md), against the HIP test double
 * (tests/doubles/fake_hip.c) with two fake devices: a real kgb-worker daemon talks to
 * a fake coordinator (a ZeroMQ ROUTER in the test process). The double's trace file
 * (KGB_FAKE_HIP_TRACE) says what every executor child saw: which device it opened,
 * how many it could see, its HIP_VISIBLE_DEVICES, and when it started and ended. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "catalog.h"
#include "executor.h"
#include "validate.h"
#include "wire.h"
#include "util.h"
#include "test_worker.h"
#include "test_case.h"

/* ---- the double and its trace ---- */

/* The environment of this process (and so of the daemon and its children): the HIP
 * backend on the double with ndev devices, a trace file in the test's directory, and
 * kernels of kernel_us microseconds. visible: the worker's own HIP_VISIBLE_DEVICES
 * (NULL: unset). Returns the trace path (static). */
static const char *md_env(int ndev, long kernel_us, const char *visible)
{
	static char trace[PATH_MAX];
	char v[32];
	const char *lib = kgb_test_double("libfakehip.so");
	setenv("KGB_HIP_LIBRARY", lib, 1);
	setenv("KGB_HIPRTC_LIBRARY", lib, 1);
	snprintf(v, sizeof v, "%d", ndev);
	setenv("KGB_FAKE_HIP_DEVICES", v, 1);
	snprintf(v, sizeof v, "%ld", kernel_us);
	setenv("KGB_FAKE_HIP_KERNEL_US", v, 1);
	snprintf(trace, sizeof trace, "%s/hip-trace.txt", kgb_test_tmpdir());
	unlink(trace);
	setenv("KGB_FAKE_HIP_TRACE", trace, 1);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_EXEC_VISIBILITY");
	if (visible)
		setenv("HIP_VISIBLE_DEVICES", visible, 1);
	else
		unsetenv("HIP_VISIBLE_DEVICES");
	return trace;
}

typedef struct tev {
	char kind[16];     /* open, launch, exit */
	int pid, phys, ordinal, count;
	char visible[64];
	char kernel[64];
	double t;
} tev_t;

/* Read the trace: up to max events into ev, returns how many. */
static size_t md_trace(const char *path, tev_t *ev, size_t max)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	char line[512];
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof line, f)) {
		tev_t *e = &ev[n];
		memset(e, 0, sizeof *e);
		e->ordinal = e->count = -1;
		if (sscanf(line, "%15s", e->kind) != 1)
			continue;
		for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
			if (strncmp(tok, "pid=", 4) == 0)
				e->pid = atoi(tok + 4);
			else if (strncmp(tok, "phys=", 5) == 0)
				e->phys = atoi(tok + 5);
			else if (strncmp(tok, "ordinal=", 8) == 0)
				e->ordinal = atoi(tok + 8);
			else if (strncmp(tok, "count=", 6) == 0)
				e->count = atoi(tok + 6);
			else if (strncmp(tok, "visible=", 8) == 0)
				kgb_strlcpy(e->visible, tok + 8, sizeof e->visible);
			else if (strncmp(tok, "kernel=", 7) == 0)
				kgb_strlcpy(e->kernel, tok + 7, sizeof e->kernel);
			else if (strncmp(tok, "t=", 2) == 0)
				e->t = atof(tok + 2);
		}
		n++;
	}
	fclose(f);
	return n;
}

/* The event of kind (and kernel, when not NULL) of process pid, or NULL. */
static const tev_t *md_find(const tev_t *ev, size_t n, const char *kind, int pid, const char *kernel)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev[i].kind, kind) == 0 && ev[i].pid == pid && (!kernel || strcmp(ev[i].kernel, kernel) == 0))
			return &ev[i];
	return NULL;
}

/* ---- a fake coordinator ---- */

typedef struct md {
	tw_coord_t c;
	bool acked;   /* the first Register was acknowledged: later ones are too */
} md_t;

static void md_ack_register(md_t *f);

/* Start the worker against the fake coordinator; prewarm is its --prewarm value,
 * slots its --slots. */
static void md_start_slots(md_t *f, const char *prewarm, const char *slots)
{
	memset(f, 0, sizeof *f);
	tw_coord_bind(&f->c);
	char *const argv[] = { "kgb-worker", "daemon", "--coordinator", f->c.ep, "--name", "md", "--backend", "hip",
		                   "--grace-ms", "3000", "--prewarm", (char *)prewarm, "--slots", (char *)slots, NULL };
	tw_coord_spawn(&f->c, NULL, argv);
}

static void md_start_prewarm(md_t *f, const char *prewarm)
{
	md_start_slots(f, prewarm, "1");
}

/* These tests count the executors of jobs: none started ahead (see
 * worker_multidev_prewarmed_executors for those). */
static void md_start(md_t *f)
{
	md_start_prewarm(f, "off");
}

/* md_start, then the Register of ndev devices checked and acknowledged. */
static void md_up(md_t *f, size_t ndev);

static void md_stop(md_t *f)
{
	if (f->c.pid > 0) {
		kill(f->c.pid, SIGTERM);
		double end = kgb_now_ms() + 10000;
		int st;
		while (kgb_now_ms() < end && waitpid(f->c.pid, &st, WNOHANG) == 0)
			usleep(20000);
		if (waitpid(f->c.pid, &st, WNOHANG) == 0) {
			kill(f->c.pid, SIGKILL);
			waitpid(f->c.pid, NULL, 0);
		}
	}
	tw_coord_close(&f->c);
}

static Kgb__Envelope *md_recv(md_t *f, int timeout_ms)
{
	Kgb__Envelope *env = tw_coord_recv(&f->c, timeout_ms < 1 ? 1 : timeout_ms);
	if (!env)
		return NULL;
	/* a worker registers again once its Python probe has answered; the coordinator
	 * acknowledges every Register, so does this one after the first */
	if (f->acked && env->body_case == KGB__ENVELOPE__BODY_REGISTER)
		md_ack_register(f);
	return env;
}

static void md_send(md_t *f, Kgb__Envelope *env)
{
	tw_coord_send(&f->c, env);
}

static void md_ack_register(md_t *f)
{
	tw_coord_ack(&f->c, true, "w-md", 200, NULL);
}

/* Wait for the Register, check it lists ndev hip devices, acknowledge it. Returns the
 * envelope (free with kgb_wire_free). */
static Kgb__Envelope *md_register(md_t *f, size_t ndev)
{
	Kgb__Envelope *e = NULL;
	double end = kgb_now_ms() + 15000;
	while (!e && kgb_now_ms() < end) {
		e = md_recv(f, (int)(end - kgb_now_ms()));
		if (e && e->body_case != KGB__ENVELOPE__BODY_REGISTER) {
			kgb_wire_free(e);
			e = NULL;
		}
	}
	if (!e)
		FAIL("no Register from the worker in 15 s");
	if (e->register_->n_devices != ndev)
		FAIL("the worker registered %zu device(s), expected %zu", e->register_->n_devices, ndev);
	md_ack_register(f);
	f->acked = true;
	return e;
}

static void md_ack(md_t *f, const Kgb__JobResult *r)
{
	tw_coord_ack_result(&f->c, r->job_id, r->epoch);
}

/* ---- jobs ---- */

/* Cases of op "add": f32, dense, no broadcasting, alpha 1 (what the double's add_f32
 * computes). Fills n of them into out, repeating them when there are fewer. */
static bool is_dense_add(const kgb_case_t *c, const void *arg)
{
	(void)arg;
	const kgb_tensor_t *o = kgb_case_tensor(c, "out"), *other = kgb_case_tensor(c, "other"),
	                   *self = kgb_case_tensor(c, "self");
	bool dense = o->storage == o->numel && other->storage == o->numel && self->storage == o->numel;
	return o->dtype == KGB_DT_F32 && other->dtype == KGB_DT_F32 && self->dtype == KGB_DT_F32 && dense &&
	       other->numel == o->numel && self->numel == o->numel && o->numel >= 1024 &&
	       kgb_case_pfloat(c, "alpha", 1.0) == 1.0;
}

static void add_cases(uint32_t *out, size_t n)
{
	size_t k = tc_find("add", is_dense_add, NULL, out, n);
	if (k == 0)
		FAIL("op add has no dense f32 case with alpha 1");
	for (size_t i = k; i < n; i++)
		out[i] = out[i % k]; /* a case may come twice in a job */
}

#define ADD_SRC                                                                                        \
	"extern \"C\" __global__ void add_f32(const float *a, const float *b, float *c, int n)\n"        \
	"{\n\tint i = blockIdx.x * BLOCK + threadIdx.x;\n"                                                 \
	"\tif (i < n) STORE_c(c, i, LOAD_a(a, i) + LOAD_b(b, i));\n}\n"
#define HANG_SRC                                                                                       \
	"extern \"C\" __global__ void hang(const float *a, const float *b, float *c, int n)\n"           \
	"{\n\twhile (n > 0) { }\n}\n"

/* A HIP job of op add for device dev: the add_f32 kernel, or the double's hanging
 * kernel. ncases cases, no timing. Free with kgb__job_assign__free_unpacked. */
static Kgb__JobAssign *md_job(uint64_t id, uint32_t dev, bool hang, size_t ncases, uint32_t limit_ms)
{
	uint32_t cases[4];
	KGB_ASSERT(ncases <= 4);
	add_cases(cases, ncases);
	Kgb__JobAssign *a = tw_unary_job("add", hang ? "hang" : "add_f32", hang ? HANG_SRC : ADD_SRC, cases, ncases);
	a->job_id = id;
	a->epoch = 1;
	a->device_index = dev;
	a->timing = false;
	a->time_limit_ms = limit_ms;
	free(a->plan_json);
	a->plan_json = kgb_xasprintf(
		"{\"kernels\": [{\"entry\": \"%s\", \"lang\": \"hip\", \"source\": \"add.hip\", "
		"\"defines\": {\"BLOCK\": \"256\"}, \"grid\": [\"cdiv(out.numel, 256)\"], \"block\": [\"256\"], "
		"\"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"}, "
		"{\"scalar\": \"out.numel\"}]}]}",
		hang ? "hang" : "add_f32");
	free(a->sources[0]->name);
	a->sources[0]->name = strdup("add.hip");
	return a;
}

static void md_assign(md_t *f, Kgb__JobAssign *a)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_JOB_ASSIGN;
	env.job_assign = a;
	md_send(f, &env);
}

typedef struct got {
	uint64_t job_id;
	double at_ms;
	Kgb__Envelope *env;
} got_t;

static void md_up(md_t *f, size_t ndev)
{
	md_start(f);
	kgb_wire_free(md_register(f, ndev));
}

/* Collect the results of n distinct jobs (acknowledging each), at most timeout_ms.
 * got[i] in arrival order. */
static void md_results(md_t *f, got_t *got, size_t n, int timeout_ms)
{
	size_t k = 0;
	double end = kgb_now_ms() + timeout_ms;
	while (k < n && kgb_now_ms() < end) {
		Kgb__Envelope *e = md_recv(f, (int)(end - kgb_now_ms()));
		if (!e)
			continue;
		if (e->body_case != KGB__ENVELOPE__BODY_JOB_RESULT) {
			kgb_wire_free(e);
			continue;
		}
		bool dup = false;
		for (size_t i = 0; i < k; i++)
			dup |= got[i].job_id == e->job_result->job_id;
		md_ack(f, e->job_result);
		if (dup) {
			kgb_wire_free(e);
			continue;
		}
		got[k].job_id = e->job_result->job_id;
		got[k].at_ms = kgb_now_ms();
		got[k].env = e;
		k++;
	}
	if (k < n)
		FAIL("%zu of %zu results in %d ms", k, n, timeout_ms);
}

/* The end of a test: the results' envelopes and the jobs freed, the worker stopped. */
static void md_finish(md_t *f, got_t *got, size_t ngot, Kgb__JobAssign *const *jobs, size_t njobs)
{
	for (size_t i = 0; i < ngot; i++)
		kgb_wire_free(got[i].env);
	for (size_t i = 0; i < njobs; i++)
		kgb__job_assign__free_unpacked(jobs[i], NULL);
	md_stop(f);
}

static void expect_pass(const Kgb__JobResult *r);

/* Assign a and expect its result, a pass, within 30 s. */
static void md_expect_pass(md_t *f, Kgb__JobAssign *a)
{
	md_assign(f, a);
	got_t g;
	md_results(f, &g, 1, 30000);
	expect_pass(g.env->job_result);
	kgb_wire_free(g.env);
}

/* The worker up on one device (md_up); jobs id and id + 1 (two cases each) in
 * a[0..2); a[0] assigned and its result collected in got[0]. */
static void md_first_of_two(md_t *f, uint64_t id, Kgb__JobAssign **a, got_t *got)
{
	md_up(f, 1);
	a[0] = md_job(id, 0, false, 2, 30000);
	a[1] = md_job(id + 1, 0, false, 2, 30000);
	md_assign(f, a[0]);
	md_results(f, got, 1, 40000);
}

static const Kgb__JobResult *md_result_of(got_t *got, size_t n, uint64_t id, double *at)
{
	for (size_t i = 0; i < n; i++)
		if (got[i].job_id == id) {
			if (at)
				*at = got[i].at_ms;
			return got[i].env->job_result;
		}
	FAIL("no result for job %llu", (unsigned long long)id);
}

static void expect_pass(const Kgb__JobResult *r)
{
	if (r->infra)
		FAIL("job %llu: infra error: %s", (unsigned long long)r->job_id, r->log);
	ASSERT_TRUE(r->n_cases >= 1);
	for (size_t i = 0; i < r->n_cases; i++)
		if (r->cases[i]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("job %llu case %u: %s: %s\n%s", (unsigned long long)r->job_id, r->cases[i]->case_index,
			     kgb_verdict_name((int)r->cases[i]->verdict), r->cases[i]->message, r->log);
}

/* Every executor child (every "open" in the trace) saw exactly one device, ordinal 0,
 * with HIP_VISIBLE_DEVICES naming the physical device it got. Returns a bit mask of
 * the physical devices opened. */
static unsigned expect_isolated(const tev_t *ev, size_t n)
{
	unsigned seen = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ev[i].kind, "open") != 0)
			continue;
		char want[16];
		snprintf(want, sizeof want, "%d", ev[i].phys);
		if (ev[i].count != 1 || ev[i].ordinal != 0 || strcmp(ev[i].visible, want) != 0)
			FAIL("executor pid %d saw %d device(s), opened ordinal %d = device %d with HIP_VISIBLE_DEVICES=%s",
			     ev[i].pid, ev[i].count, ev[i].ordinal, ev[i].phys, ev[i].visible);
		seen |= 1u << ev[i].phys;
	}
	return seen;
}

/* ---- tests ---- */

TEST(worker_multidev_visibility_values)
{
	char v[64];
	/* no inherited list: the index itself */
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_cuda, 3, NULL, v, sizeof v), 1);
	ASSERT_EQ_STR(v, "3");
	ASSERT_EQ_STR(kgb_backend_cuda.visible_env, "CUDA_VISIBLE_DEVICES");
	ASSERT_EQ_STR(kgb_backend_cuda.order_env, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
	ASSERT_EQ_STR(kgb_backend_hip.visible_env, "HIP_VISIBLE_DEVICES");
	ASSERT_EQ_STR(kgb_backend_level_zero.visible_env, "ZE_AFFINITY_MASK");
	/* the worker is limited to a list: the index-th entry, spaces trimmed */
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_cuda, 1, "GPU-aaaa, GPU-bbbb ,GPU-cccc", v, sizeof v), 1);
	ASSERT_EQ_STR(v, "GPU-bbbb");
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_hip, 0, "2,3", v, sizeof v), 1);
	ASSERT_EQ_STR(v, "2");
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_level_zero, 2, "0.0,0.1,1", v, sizeof v), 1);
	ASSERT_EQ_STR(v, "1");
	/* no such entry, or an empty one */
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_hip, 2, "2,3", v, sizeof v), -1);
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_hip, 1, "2,,3", v, sizeof v), -1);
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_hip, 0, "", v, sizeof v), -1);
	/* OpenCL has no such variable; the switch turns it off */
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_opencl, 1, NULL, v, sizeof v), 0);
	setenv("KGB_EXEC_VISIBILITY", "off", 1);
	ASSERT_EQ_INT(kgb_exec_visibility(&kgb_backend_cuda, 1, NULL, v, sizeof v), 0);
	unsetenv("KGB_EXEC_VISIBILITY");
}

TEST(worker_multidev_double_honours_visible_devices)
{
	/* the double itself: HIP_VISIBLE_DEVICES reorders and hides devices */
	md_env(3, 0, "2,0");
	kgb_device_info_t d[8];
	char why[512] = "";
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 8, why, sizeof why), 2);
	ASSERT_EQ_STR(d[0].name, "AMD Instinct MI210 (kgb test double 2)");
	ASSERT_EQ_STR(d[1].name, "AMD Instinct MI210 (kgb test double 0)");
	/* the list ends at the first entry that names no device */
	setenv("HIP_VISIBLE_DEVICES", "1,7,0", 1);
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 8, why, sizeof why), 1);
	ASSERT_EQ_STR(d[0].name, "AMD Instinct MI210 (kgb test double 1)");
	setenv("HIP_VISIBLE_DEVICES", "", 1);
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 8, why, sizeof why), 0);
}

TEST(worker_multidev_executor_sees_only_its_device)
{
	/* one executor child per call, on device 1 of 2 */
	const char *trace = md_env(2, 0, NULL);
	Kgb__JobAssign *a = md_job(1, 1, false, 1, 20000);
	char err[512] = "";
	bool nh = true;
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), "hip", 1, a, &nh, err, sizeof err);
	if (!r)
		FAIL("kgb_exec_job_sync: %s", err);
	expect_pass(r);
	ASSERT_FALSE(nh);
	kgb__job_result__free_unpacked(r, NULL);
	tev_t ev[64];
	size_t n = md_trace(trace, ev, 64);
	ASSERT_EQ_INT(expect_isolated(ev, n), 1u << 1);

	/* with visibility off, the child sees both and opens ordinal 1 */
	unlink(trace);
	setenv("KGB_EXEC_VISIBILITY", "off", 1);
	r = kgb_exec_job_sync(tw_worker_bin(), "hip", 1, a, &nh, err, sizeof err);
	if (!r)
		FAIL("kgb_exec_job_sync: %s", err);
	expect_pass(r);
	kgb__job_result__free_unpacked(r, NULL);
	n = md_trace(trace, ev, 64);
	bool opened = false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev[i].kind, "open") == 0) {
			ASSERT_EQ_INT(ev[i].count, 2);
			ASSERT_EQ_INT(ev[i].ordinal, 1);
			ASSERT_EQ_INT(ev[i].phys, 1);
			ASSERT_EQ_STR(ev[i].visible, "-");
			opened = true;
		}
	ASSERT_TRUE(opened);
	unsetenv("KGB_EXEC_VISIBILITY");
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(worker_multidev_registers_each_device)
{
	md_env(2, 0, NULL);
	md_t f;
	md_start(&f);
	Kgb__Envelope *e = md_register(&f, 2);
	Kgb__Register *reg = e->register_;
	for (uint32_t i = 0; i < 2; i++) {
		char want[64];
		snprintf(want, sizeof want, "AMD Instinct MI210 (kgb test double %u)", i);
		ASSERT_EQ_INT(reg->devices[i]->index, i);
		ASSERT_EQ_STR(reg->devices[i]->backend, "hip");
		ASSERT_EQ_STR(reg->devices[i]->name, want);
		ASSERT_EQ_INT(reg->devices[i]->slots, 1);
		ASSERT_TRUE(strncmp(reg->devices[i]->platform, "hip:", 4) == 0);
	}
	kgb_wire_free(e);
	md_stop(&f);
}

TEST(worker_multidev_jobs_run_concurrently)
{
	/* every kernel launch takes 100 ms: a job is several hundred ms of "device" time */
	const char *trace = md_env(2, 100000, NULL);
	md_t f;
	md_up(&f, 2);
	Kgb__JobAssign *a0 = md_job(10, 0, false, 2, 30000), *a1 = md_job(11, 1, false, 2, 30000);
	double t0 = kgb_now_ms();
	md_assign(&f, a0);
	md_assign(&f, a1);
	got_t got[2];
	md_results(&f, got, 2, 40000);
	double wall = kgb_now_ms() - t0;
	expect_pass(md_result_of(got, 2, 10, NULL));
	expect_pass(md_result_of(got, 2, 11, NULL));

	/* the two executors: one per device, each saw only its own (their exits may come
	 * after the results: an executor releases its device after its output) */
	tev_t ev[128];
	size_t n = 0;
	const tev_t *open[2] = { NULL, NULL }, *end[2] = { NULL, NULL };
	for (double until = kgb_now_ms() + 10000;; usleep(20000)) {
		n = md_trace(trace, ev, 128);
		open[0] = open[1] = end[0] = end[1] = NULL;
		for (size_t i = 0; i < n; i++)
			if (strcmp(ev[i].kind, "open") == 0) {
				ASSERT_TRUE(open[ev[i].phys] == NULL); /* one executor per device */
				open[ev[i].phys] = &ev[i];
				end[ev[i].phys] = md_find(ev, n, "exit", ev[i].pid, NULL);
			}
		if ((end[0] && end[1]) || kgb_now_ms() > until)
			break;
	}
	ASSERT_EQ_INT(expect_isolated(ev, n), 3u);
	for (int d = 0; d < 2; d++) {
		if (!open[d] || !end[d])
			FAIL("device %d: no complete executor lifetime in the trace", d);
		ASSERT_TRUE(end[d]->t - open[d]->t >= 200); /* at least two 100 ms launches */
	}
	/* their lifetimes overlap by most of a job: they ran at the same time */
	double overlap = KGB_MIN(end[0]->t, end[1]->t) - KGB_MAX(open[0]->t, open[1]->t);
	double shorter = KGB_MIN(end[0]->t - open[0]->t, end[1]->t - open[1]->t);
	if (overlap < 0.5 * shorter)
		FAIL("executor lifetimes overlap by %.0f ms of %.0f ms: the devices did not work at once", overlap,
		     shorter);
	/* and the batch took about one job's time, not two */
	double sum = (end[0]->t - open[0]->t) + (end[1]->t - open[1]->t);
	ASSERT_TRUE(wall < sum + 2000);
	Kgb__JobAssign *jobs[] = { a0, a1 };
	md_finish(&f, got, 2, jobs, 2);
}

TEST(worker_multidev_hang_on_one_device_spares_the_other)
{
	const char *trace = md_env(2, 0, NULL);
	md_t f;
	md_up(&f, 2);
	const uint32_t limit = 8000;
	Kgb__JobAssign *hang = md_job(20, 0, true, 2, limit);
	Kgb__JobAssign *good = md_job(21, 1, false, 1, 30000);
	Kgb__JobAssign *next = md_job(22, 1, false, 1, 30000);
	double t0 = kgb_now_ms();
	md_assign(&f, hang);
	md_assign(&f, good);
	md_assign(&f, next);
	got_t got[3];
	md_results(&f, got, 3, 40000);
	double at_hang = 0, at_good = 0, at_next = 0;
	const Kgb__JobResult *rh = md_result_of(got, 3, 20, &at_hang);
	expect_pass(md_result_of(got, 3, 21, &at_good));
	expect_pass(md_result_of(got, 3, 22, &at_next));
	/* device 1's jobs (both, one after the other) are done long before device 0's
	 * time limit; device 0's job ends at its limit, as a timeout */
	if (at_next - t0 > limit / 2.0)
		FAIL("device 1's jobs took %.0f ms while device 0 hung (limit %u ms)", at_next - t0, limit);
	ASSERT_TRUE(at_good < at_hang && at_next < at_hang);
	ASSERT_TRUE(at_hang - t0 >= limit * 0.9);
	ASSERT_EQ_INT(rh->n_cases, 2);
	ASSERT_EQ_INT((int)rh->cases[0]->verdict, KGB_V_TIMEOUT);
	ASSERT_EQ_INT((int)rh->cases[1]->verdict, KGB_V_NOT_RUN);

	/* the health check runs on device 0 only */
	tev_t ev[128];
	size_t n = 0;
	bool checked0 = false;
	double end = kgb_now_ms() + 10000;
	while (!checked0 && kgb_now_ms() < end) {
		n = md_trace(trace, ev, 128);
		for (size_t i = 0; i < n; i++)
			checked0 |= strcmp(ev[i].kind, "launch") == 0 && strcmp(ev[i].kernel, "kgb_health") == 0 &&
			            ev[i].phys == 0;
		if (!checked0)
			usleep(100000);
	}
	ASSERT_TRUE(checked0);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ev[i].kind, "launch") != 0)
			continue;
		if (strcmp(ev[i].kernel, "kgb_health") == 0 && ev[i].phys != 0)
			FAIL("a health check ran on device %d, whose executors never failed", ev[i].phys);
		if (strcmp(ev[i].kernel, "hang") == 0)
			ASSERT_EQ_INT(ev[i].phys, 0);
		if (strcmp(ev[i].kernel, "add_f32") == 0)
			ASSERT_EQ_INT(ev[i].phys, 1);
	}
	ASSERT_EQ_INT(expect_isolated(ev, n), 3u);

	/* device 0 is healthy again and takes jobs */
	Kgb__JobAssign *after = md_job(23, 0, false, 1, 30000);
	md_expect_pass(&f, after);
	Kgb__JobAssign *jobs[] = { hang, good, next, after };
	md_finish(&f, got, 3, jobs, 4);
}

TEST(worker_multidev_inherited_visible_list)
{
	/* a worker limited to devices "1,0" of 2: its device 0 is the double's device 1,
	 * and that is what the executor of device 0 gets */
	const char *trace = md_env(2, 0, "1,0");
	md_t f;
	md_start(&f);
	Kgb__Envelope *e = md_register(&f, 2);
	ASSERT_EQ_STR(e->register_->devices[0]->name, "AMD Instinct MI210 (kgb test double 1)");
	ASSERT_EQ_STR(e->register_->devices[1]->name, "AMD Instinct MI210 (kgb test double 0)");
	kgb_wire_free(e);
	Kgb__JobAssign *a = md_job(30, 0, false, 1, 30000);
	md_expect_pass(&f, a);
	tev_t ev[64];
	size_t n = md_trace(trace, ev, 64);
	ASSERT_EQ_INT(expect_isolated(ev, n), 1u << 1);
	kgb__job_assign__free_unpacked(a, NULL);
	md_stop(&f);
}

TEST(worker_multidev_prewarmed_executors)
{
	/* a GPU backend (the HIP double) pre-warms by default: before any job, an executor
	 * per device opens its device, seeing that device only; the jobs then run in
	 * those executors */
	const char *trace = md_env(2, 0, NULL);
	char ltrace[PATH_MAX];
	snprintf(ltrace, sizeof ltrace, "%s/devlock-trace.txt", kgb_test_tmpdir());
	unlink(ltrace);
	setenv("KGB_DEVLOCK_TRACE", ltrace, 1);
	setenv("KGB_FAKE_HIP_TRACE_INIT", "1", 1);
	md_t f;
	md_start_prewarm(&f, "auto");
	unsetenv("KGB_DEVLOCK_TRACE");
	unsetenv("KGB_FAKE_HIP_TRACE_INIT");
	kgb_wire_free(md_register(&f, 2));
	tev_t ev[128];
	size_t n = 0;
	unsigned opened = 0;
	double end = kgb_now_ms() + 20000;
	while (opened != 3u && kgb_now_ms() < end) {
		n = md_trace(trace, ev, 128);
		opened = expect_isolated(ev, n);
		if (opened != 3u)
			usleep(50000);
	}
	ASSERT_EQ_INT(opened, 3u);
	/* the executors that opened a device before any job */
	int before[8];
	size_t nbefore = 0;
	for (size_t i = 0; i < n && nbefore < 8; i++)
		if (strcmp(ev[i].kind, "open") == 0)
			before[nbefore++] = ev[i].pid;
	Kgb__JobAssign *a0 = md_job(40, 0, false, 2, 30000), *a1 = md_job(41, 1, false, 2, 30000);
	md_assign(&f, a0);
	md_assign(&f, a1);
	got_t got[2];
	md_results(&f, got, 2, 40000);
	const Kgb__JobResult *r0 = md_result_of(got, 2, 40, NULL), *r1 = md_result_of(got, 2, 41, NULL);
	expect_pass(r0);
	expect_pass(r1);
	ASSERT_TRUE(strstr(r0->log, "opened before the job arrived") != NULL);
	ASSERT_TRUE(strstr(r1->log, "opened before the job arrived") != NULL);
	/* every launch of the jobs' kernels came from an executor opened before the jobs,
	 * on the device of the job */
	n = md_trace(trace, ev, 128);
	size_t launches = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ev[i].kind, "launch") != 0 || strcmp(ev[i].kernel, "add_f32") != 0)
			continue;
		bool known = false;
		for (size_t k = 0; k < nbefore; k++)
			known |= before[k] == ev[i].pid;
		if (!known)
			FAIL("kernel launched by executor pid %d, which was not pre-warmed", ev[i].pid);
		launches++;
	}
	ASSERT_TRUE(launches >= 2);
	ASSERT_EQ_INT(expect_isolated(ev, n), 3u);
	/* the host side of the opening (hipInit) came before the device lock was asked for:
	 * each pre-warmed executor's first hipInit precedes its first hold's request */
	for (size_t k = 0; k < nbefore; k++) {
		const tev_t *init = md_find(ev, n, "init", before[k], NULL);
		if (!init)
			FAIL("pre-warmed executor pid %d: no hipInit in the double's trace", before[k]);
		FILE *lf = fopen(ltrace, "r");
		ASSERT_TRUE(lf != NULL);
		char line[256], mode[8];
		long pid;
		unsigned long long asked, granted, released, first = 0;
		while (fgets(line, sizeof line, lf))
			if (sscanf(line, "%ld %7s %llu %llu %llu", &pid, mode, &asked, &granted, &released) == 5 &&
			    pid == before[k] && (first == 0 || asked < first))
				first = asked;
		fclose(lf);
		if (first == 0)
			FAIL("pre-warmed executor pid %d: no hold of the device lock in %s", before[k], ltrace);
		if (init->t * 1e6 > (double)first + 1000)   /* the trace's 1 µs resolution */
			FAIL("pre-warmed executor pid %d: hipInit at %.3f ms, after it asked for the device lock at %.3f ms",
			     before[k], init->t, (double)first / 1e6);
	}
	Kgb__JobAssign *jobs[] = { a0, a1 };
	md_finish(&f, got, 2, jobs, 2);
}

/* An executor that has reported its whole job closes its output before it releases the
 * device: the worker sends the result then, and the slot takes the next job while the
 * first executor is still releasing (the double makes that take 1.5 s). */
TEST(worker_multidev_result_before_release)
{
	const char *trace = md_env(1, 0, NULL);
	setenv("KGB_FAKE_HIP_RELEASE_MS", "1500", 1);
	md_t f;
	Kgb__JobAssign *a[2];
	got_t got[2];
	md_first_of_two(&f, 50, a, got);
	double at0 = got[0].at_ms;
	md_assign(&f, a[1]);
	md_results(&f, got + 1, 1, 40000);
	unsetenv("KGB_FAKE_HIP_RELEASE_MS");
	expect_pass(md_result_of(got, 2, 50, NULL));
	expect_pass(md_result_of(got, 2, 51, NULL));
	/* both executors' lifetimes, once both have exited */
	tev_t ev[128];
	size_t n = 0;
	const tev_t *open[2] = { NULL, NULL }, *end[2] = { NULL, NULL };
	double until = kgb_now_ms() + 20000;
	for (;;) {
		n = md_trace(trace, ev, 128);
		size_t k = 0;
		for (size_t i = 0; i < n && k < 2; i++)
			if (strcmp(ev[i].kind, "open") == 0) {
				open[k] = &ev[i];
				end[k++] = md_find(ev, n, "exit", ev[i].pid, NULL);
			}
		if ((k == 2 && end[0] && end[1]) || kgb_now_ms() > until)
			break;
		usleep(50000);
	}
	if (!open[0] || !open[1] || !end[0] || !end[1])
		FAIL("expected two executors that opened the device and exited (%zu trace lines)", n);
	/* the first job's result came while its executor was releasing the device ... */
	if (end[0]->t - at0 < 1000)
		FAIL("job 50's result came %.0f ms before its executor exited: it waited for the release", end[0]->t - at0);
	/* ... and the second job's executor opened the device before the first exited */
	if (open[1]->t >= end[0]->t)
		FAIL("job 51's executor opened the device %.0f ms after job 50's exited: the slot waited",
		     open[1]->t - end[0]->t);
	md_finish(&f, got, 2, a, 2);
}

/* An executor that dies badly after its job's result (here: aborts while releasing the
 * device) leaves the result as it was, and the device is checked: a health-check
 * process opens it. */
TEST(worker_multidev_bad_exit_after_result_checks_device)
{
	const char *trace = md_env(1, 0, NULL);
	char flag[PATH_MAX];
	snprintf(flag, sizeof flag, "%s/abort-once", kgb_test_tmpdir());
	FILE *ff = fopen(flag, "w");
	ASSERT_TRUE(ff != NULL);
	fclose(ff);
	setenv("KGB_FAKE_HIP_RELEASE_ABORT", flag, 1);
	setenv("KGB_FAKE_HIP_RELEASE_MS", "300", 1);
	md_t f;
	Kgb__JobAssign *a[2];
	got_t got[2];
	md_first_of_two(&f, 60, a, got);
	expect_pass(md_result_of(got, 1, 60, NULL));
	/* the first executor has aborted once the flag is gone */
	double until = kgb_now_ms() + 10000;
	while (access(flag, F_OK) == 0 && kgb_now_ms() < until)
		usleep(20000);
	ASSERT_TRUE(access(flag, F_OK) != 0);
	md_assign(&f, a[1]);
	md_results(&f, got + 1, 1, 40000);
	unsetenv("KGB_FAKE_HIP_RELEASE_ABORT");
	unsetenv("KGB_FAKE_HIP_RELEASE_MS");
	expect_pass(md_result_of(got, 2, 61, NULL));
	/* three processes open the device: the two jobs' executors and a health check
	 * (which runs its own probe, not the jobs' kernel), before job 61 or after it,
	 * depending on whether the worker had reaped the aborted executor when job 61
	 * came */
	tev_t ev[128];
	size_t n = 0, opens = 0, jobs = 0;
	for (double until = kgb_now_ms() + 15000; opens < 3 && kgb_now_ms() < until; usleep(50000)) {
		n = md_trace(trace, ev, 128);
		opens = jobs = 0;
		for (size_t i = 0; i < n; i++)
			if (strcmp(ev[i].kind, "open") == 0) {
				opens++;
				if (md_find(ev, n, "launch", ev[i].pid, "add_f32"))
					jobs++;
			}
	}
	ASSERT_EQ_INT(opens, 3);
	ASSERT_EQ_INT(jobs, 2);
	md_finish(&f, got, 2, a, 2);
}

/* A native job of an operator the BLAS library computes (here hipBLAS's double) runs no
 * candidate's code: its executor keeps its device for the next such job instead of
 * exiting. A candidate's job never gets that executor: it gets a fresh one. */
static Kgb__JobAssign *md_native_job(uint64_t id)
{
	static const uint32_t cases[] = { 0, 1 };
	return tw_native_job(id, "cublasSaxpy_v2", cases, 2, 30000);
}

/* The executor pid a job's log names, after `what` ("opened before" or "kept from"). */
static int md_log_pid(const Kgb__JobResult *r, const char *what)
{
	const char *p = strstr(r->log, what);
	const char *q = p ? strstr(p, "executor pid ") : NULL;
	if (!q)
		FAIL("job %llu: the log does not say \"%s ... executor pid\":\n%s", (unsigned long long)r->job_id, what,
		     r->log);
	return atoi(q + strlen("executor pid "));
}

TEST(worker_multidev_trusted_jobs_keep_executor)
{
	md_env(1, 0, NULL);
	setenv("KGB_HIPBLAS_LIBRARY", kgb_test_double("libfakehipblas.so"), 1);
	md_t f;
	md_start_prewarm(&f, "auto");
	kgb_wire_free(md_register(&f, 1));
	Kgb__JobAssign *n1 = md_native_job(80), *n2 = md_native_job(81), *p = md_job(82, 0, false, 2, 30000),
	               *p2 = md_job(84, 0, false, 2, 30000), *n3 = md_native_job(83);
	enum { N = 5 };
	Kgb__JobAssign *order[N] = { n1, n2, p, p2, n3 };
	got_t got[N];
	for (int i = 0; i < N; i++) {
		md_assign(&f, order[i]);
		md_results(&f, got + i, 1, 40000);
		expect_pass(got[i].env->job_result);
	}
	unsetenv("KGB_HIPBLAS_LIBRARY");
	const Kgb__JobResult *r1 = got[0].env->job_result, *r2 = got[1].env->job_result, *rp = got[2].env->job_result,
	                     *rp2 = got[3].env->job_result, *r3 = got[4].env->job_result;
	int pid = md_log_pid(r1, "opened before the job arrived");
	ASSERT_EQ_INT(md_log_pid(r2, "kept from the executor's previous job"), pid);
	ASSERT_TRUE(strstr(r2->log, "its job 2") != NULL);
	/* the candidate's job: a fresh executor, not the one that ran the native jobs; it
	 * was pre-warmed after a trusted job, with a BLAS handle, and the one pre-warmed
	 * after the candidate's job started (for the next candidate) made none */
	int ppid = md_log_pid(rp, "opened before the job arrived");
	ASSERT_TRUE(ppid != pid);
	ASSERT_CONTAINS(rp->log, "device context and BLAS handle opened before the job arrived");
	ASSERT_CONTAINS(rp2->log, "device context opened before the job arrived");
	ASSERT_TRUE(md_log_pid(rp2, "opened before the job arrived") != ppid);
	ASSERT_EQ_INT(md_log_pid(r3, "kept from the executor's previous job"), pid);
	ASSERT_TRUE(strstr(r3->log, "its job 3") != NULL);
	md_finish(&f, got, N, order, N);
}

/* ---- python candidates ---- */

/* The Python the recorder runs with ($KGB_PYREC_PYTHON, else build/venv's), an absolute
 * path in path, or false (the caller skips, saying why). */
static bool md_python(char *path, size_t n)
{
	const char *env = getenv("KGB_PYREC_PYTHON"), *src = getenv("KGB_SOURCE_DIR");
	char cwd[PATH_MAX / 2] = ".";
	if (env && *env)
		snprintf(path, n, "%s", env);
	else if (src && *src == '/')
		snprintf(path, n, "%s/build/venv/bin/python", src);
	else
		snprintf(path, n, "%s/%s/build/venv/bin/python", getcwd(cwd, sizeof cwd) ? cwd : ".",
		         src && *src ? src : ".");
	return access(path, X_OK) == 0;
}

/* md_python, saying the test is skipped when there is none; with one, the
 * environment of one device (md_env). */
static bool md_python_env(char *path, size_t n)
{
	if (!md_python(path, n)) {
		printf("    skipped: no Python with torch and triton at %s (set KGB_PYREC_PYTHON)\n", path);
		return false;
	}
	md_env(1, 0, NULL);
	return true;
}

/* A dense f32 case of silu with few elements (the interpreter is slow). */
static bool is_small_silu(const kgb_case_t *c, const void *arg)
{
	(void)arg;
	const kgb_tensor_t *o = kgb_case_tensor(c, "out"), *s = kgb_case_tensor(c, "self");
	return o->dtype == KGB_DT_F32 && s->dtype == KGB_DT_F32 && s->storage == s->numel && o->storage == o->numel &&
	       o->numel <= 4096;
}

static uint32_t md_silu_case(void)
{
	uint32_t i;
	if (tc_find("silu", is_small_silu, NULL, &i, 1) != 1)
		FAIL("op silu has no small dense f32 case");
	return i;
}

/* A python candidate's job: module silu.py (text src), the same case ncases times. */
static Kgb__JobAssign *md_python_jobn(uint64_t id, const char *src, size_t ncases)
{
	uint32_t c[4];
	KGB_ASSERT(ncases <= 4);
	for (size_t i = 0; i < ncases; i++)
		c[i] = md_silu_case();
	Kgb__JobAssign *a = tw_unary_job("silu", "silu", src, c, ncases);
	a->job_id = id;
	a->epoch = 1;
	a->device_index = 0;
	a->timing = false;
	a->time_limit_ms = 60000;
	free(a->plan_json);
	a->plan_json = strdup("{\"kind\": \"python\", \"module\": \"silu.py\"}");
	free(a->sources[0]->name);
	a->sources[0]->name = strdup("silu.py");
	return a;
}

static Kgb__JobAssign *md_python_job(uint64_t id, const char *src)
{
	return md_python_jobn(id, src, 1);
}

/* Recording is no device work for the executor: on a GPU worker with two slots, two
 * python jobs record side by side (the wrappers' calls overlap in time), and no
 * exclusive hold of the device lock covers any part of either call. */
TEST(worker_multidev_python_recordings_overlap)
{
	char py[PATH_MAX];
	if (!md_python_env(py, sizeof py))
		return;
	char ltrace[PATH_MAX], calls[PATH_MAX];
	snprintf(ltrace, sizeof ltrace, "%s/devlock-py.txt", kgb_test_tmpdir());
	snprintf(calls, sizeof calls, "%s/wrapper-calls.txt", kgb_test_tmpdir());
	unlink(ltrace);
	unlink(calls);
	/* the wrapper notes when its call starts and ends (monotonic ns, the lock trace's
	 * clock) and waits, 30 s at most, until the other job's wrapper has started too:
	 * recordings that take turns never meet, whatever the machine's speed. It launches
	 * nothing (no_launch: no replay follows, which keeps the test short). */
	char *src = kgb_xasprintf(
		"import os\nimport time\nimport torch\nimport triton\nimport triton.language as tl\n\n"
		"CALLS = '%s'\n\n\n"
		"@triton.jit\ndef silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
		"    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
		"    mask = offs < n\n"
		"    x = tl.load(x_ptr + offs, mask=mask)\n"
		"    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)\n\n\n"
		"def note(what):\n"
		"    with open(CALLS, 'a') as f:\n"
		"        f.write('%%s %%d\\n' %% (what, time.monotonic_ns()))\n\n\n"
		"def silu(self):\n"
		"    note('S')\n"
		"    end = time.monotonic() + 30\n"
		"    while time.monotonic() < end and open(CALLS).read().count('S') < 2:\n"
		"        time.sleep(0.05)\n"
		"    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)\n"
		"    note('E')\n"
		"    return out\n",
		calls);
	setenv("KGB_DEVLOCK_TRACE", ltrace, 1);
	bool set_py = !getenv("KGB_PYREC_PYTHON");
	if (set_py)
		setenv("KGB_PYREC_PYTHON", py, 1);
	md_t f;
	md_start_slots(&f, "off", "2");
	unsetenv("KGB_DEVLOCK_TRACE");
	if (set_py)
		unsetenv("KGB_PYREC_PYTHON");
	kgb_wire_free(md_register(&f, 1));
	Kgb__JobAssign *a = md_python_job(60, src), *b = md_python_job(61, src);
	md_assign(&f, a);
	md_assign(&f, b);
	got_t got[2];
	md_results(&f, got, 2, 120000);
	for (int i = 0; i < 2; i++) {
		const Kgb__JobResult *r = got[i].env->job_result;
		ASSERT_EQ_INT((int)r->n_cases, 1);
		ASSERT_CONTAINS(r->log, "1 recorded in");
		if (r->infra || r->cases[0]->verdict != KGB__VERDICT__VERDICT_NO_LAUNCH)
			FAIL("job %llu: %s: %s\n%s", (unsigned long long)r->job_id,
			     kgb_verdict_name((int)r->cases[0]->verdict), r->cases[0]->message, r->log);
	}
	/* both wrapper calls, and they overlap: both started before either ended */
	FILE *cf = fopen(calls, "r");
	if (!cf)
		FAIL("the wrappers left no %s", calls);
	unsigned long long s[2] = { 0, 0 }, e[2] = { 0, 0 }, t;
	char what[4];
	int ns = 0, ne = 0;
	while (fscanf(cf, "%3s %llu", what, &t) == 2) {
		if (what[0] == 'S' && ns < 2)
			s[ns++] = t;
		else if (what[0] == 'E' && ne < 2)
			e[ne++] = t;
	}
	fclose(cf);
	ASSERT_EQ_INT(ns, 2);
	ASSERT_EQ_INT(ne, 2);
	if (KGB_MIN(e[0], e[1]) <= KGB_MAX(s[0], s[1]))
		FAIL("the two recordings did not overlap: one ended at %llu ns, before the other started at %llu ns",
		     KGB_MIN(e[0], e[1]), KGB_MAX(s[0], s[1]));
	/* no exclusive hold of the lock from the first call's start to the last one's end */
	unsigned long long from = KGB_MIN(s[0], s[1]), to = KGB_MAX(e[0], e[1]);
	FILE *lf = fopen(ltrace, "r");
	char line[256], mode[8];
	long pid;
	unsigned long long asked, granted, released;
	while (lf && fgets(line, sizeof line, lf))
		if (sscanf(line, "%ld %7s %llu %llu %llu", &pid, mode, &asked, &granted, &released) == 5 &&
		    strcmp(mode, "EX") == 0 && granted < to && released > from)
			FAIL("pid %ld held the device lock exclusively from %llu to %llu ns, while recordings ran (%llu to %llu)",
			     pid, granted, released, from, to);
	if (lf)
		fclose(lf);
	free(src);
	Kgb__JobAssign *jobs[] = { a, b };
	md_finish(&f, got, 2, jobs, 2);
}

/* Run a python job in an executor of the HIP double (no Triton there: recorded in the
 * interpreter); every case must be no_launch. Returns the job's log (caller frees). */
static char *md_python_run(const char *src, size_t ncases)
{
	Kgb__JobAssign *a = md_python_jobn(70, src, ncases);
	char err[512] = "";
	bool nh = false;
	Kgb__JobResult *r = kgb_exec_job_sync(tw_worker_bin(), "hip", 0, a, &nh, err, sizeof err);
	if (!r)
		FAIL("kgb_exec_job_sync: %s", err);
	ASSERT_EQ_INT((int)r->n_cases, (int)ncases);
	for (size_t i = 0; i < ncases; i++)
		if (r->cases[i]->verdict != KGB__VERDICT__VERDICT_NO_LAUNCH)
			FAIL("case %zu: %s: %s\n%s", i, kgb_verdict_name((int)r->cases[i]->verdict), r->cases[i]->message,
			     r->log);
	char *log = kgb_xstrdup(r->log);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
	return log;
}

/* A module's recording is made once per argument signature: the same case twice in a
 * job is recorded once, a later job of the same module records nothing (the recorder
 * is not started), and a changed module records again (damaged entries, the bound:
 * pycand_reccache_entries). */
TEST(worker_multidev_python_recording_cache)
{
	char py[PATH_MAX];
	if (!md_python_env(py, sizeof py))
		return;
	char cache[PATH_MAX];
	snprintf(cache, sizeof cache, "%s/reccache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", cache, 1);
	bool set_py = !getenv("KGB_PYREC_PYTHON");
	if (set_py)
		setenv("KGB_PYREC_PYTHON", py, 1);
	/* refused recordings are kept as plans are (pycand_reccache_entries), and need no
	 * replay: the test stays short */
	const char *src = "import torch\n\n\ndef silu(self):\n"
	                  "    return torch.empty(self.shape, dtype=self.dtype, device=self.device)\n";
	char *log = md_python_run(src, 2);
	ASSERT_CONTAINS(log, "2 case(s): 0 recording(s) from the cache, 1 the same as another case's, 1 recorded in");
	free(log);
	log = md_python_run(src, 2);
	ASSERT_CONTAINS(log, "2 case(s): 2 recording(s) from the cache, 0 the same as another case's, 0 recorded in");
	ASSERT_CONTAINS(log, "no recorder started");
	free(log);
	char *changed = kgb_xasprintf("%s\n# the same kernels, another module text\n", src);
	log = md_python_run(changed, 1);
	ASSERT_CONTAINS(log, "1 case(s): 0 recording(s) from the cache, 0 the same as another case's, 1 recorded in");
	free(log);
	if (set_py)
		unsetenv("KGB_PYREC_PYTHON");
	free(changed);
}
