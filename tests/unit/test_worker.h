/* Helpers shared by the worker's unit tests (test_worker_*.c). */
#ifndef KGB_TEST_WORKER_H
#define KGB_TEST_WORKER_H

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "test.h"
#include "catalog.h"
#include "executor.h"
#include "wire.h"
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

/* Job id of the native candidate (the vendor library) for op over cases[0..n) (every
 * case of op when cases is NULL): epoch 1, seed 5, limit_ms a case, not timed. */
static inline Kgb__JobAssign *tw_native_job(uint64_t id, const char *op, const uint32_t *cases, size_t n,
                                            uint32_t limit_ms)
{
	const kgb_op_t *o = kgb_catalog_find(op);
	if (!o)
		FAIL("operator %s not in the catalog", op);
	Kgb__JobAssign *a = calloc(1, sizeof *a);
	kgb__job_assign__init(a);
	a->job_id = id;
	a->epoch = 1;
	a->op = strdup(op);
	if (!cases)
		n = kgb_op_case_count(o);
	a->cases = calloc(n ? n : 1, sizeof *a->cases);
	for (size_t i = 0; i < n; i++)
		a->cases[i] = cases ? cases[i] : (uint32_t)i;
	a->n_cases = n;
	a->seed = 5;
	a->time_limit_ms = limit_ms;
	a->plan_json = strdup("{\"kind\": \"native\"}");
	return a;
}

/* A file for the executor's records (records in the test's directory), empty and
 * open for reading and writing. */
static inline FILE *tw_records_file(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/records", kgb_test_tmpdir());
	FILE *f = fopen(path, "w+");
	ASSERT_TRUE(f != NULL);
	return f;
}

/* Decode the executor's records from fd (rewound): up to max case results in cases,
 * the end record in *end (NULL when none). strict: a record other than those and a
 * device run's window fails the test. Returns the number of cases. */
static inline size_t tw_read_records(int fd, Kgb__CaseResult **cases, size_t max, Kgb__JobResult **end, bool strict)
{
	size_t n = 0;
	lseek(fd, 0, SEEK_SET);
	*end = NULL;
	for (;;) {
		uint8_t h[5];
		if (read(fd, h, 5) != 5)
			break;
		uint32_t len = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
		uint8_t *buf = malloc(len);
		if (read(fd, buf, len - 1) != (ssize_t)(len - 1))
			FAIL("short record");
		if (h[4] == KGB_EXEC_REC_CASE && n < max)
			cases[n++] = kgb__case_result__unpack(NULL, len - 1, buf);
		else if (h[4] == KGB_EXEC_REC_END)
			*end = kgb__job_result__unpack(NULL, len - 1, buf);
		else if (strict && !(h[4] == KGB_EXEC_REC_LAUNCH && len == 2))
			FAIL("unexpected record kind %c", h[4]);
		free(buf);
	}
	return n;
}

/* A fake coordinator: a ZeroMQ ROUTER in the test process, bound to a free local
 * port, and the kgb-worker daemon it serves. The first member of the tests' own fake
 * coordinators. */
typedef struct tw_coord {
	void *ctx, *sock;
	char ep[256];
	uint8_t id[256];     /* the worker's routing id, from its last frame */
	size_t idlen;
	pid_t pid;           /* the daemon; 0 once the test has reaped it */
} tw_coord_t;

/* Zero c and bind its socket. */
static inline void tw_coord_bind(tw_coord_t *c)
{
	memset(c, 0, sizeof *c);
	c->ctx = zmq_ctx_new();
	c->sock = zmq_socket(c->ctx, ZMQ_ROUTER);
	int linger = 0;
	zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
	if (zmq_bind(c->sock, "tcp://127.0.0.1:*") != 0)
		FAIL("bind: %s", zmq_strerror(errno));
	size_t n = sizeof c->ep;
	zmq_getsockopt(c->sock, ZMQ_LAST_ENDPOINT, c->ep, &n);
}

/* Start the daemon: the kgb-worker binary with argv (argv[0] included), logging at
 * KGB_TEST_WORKER_LOG (default error), with KGB_WORKER_SLOTS=slots unless NULL. */
static inline void tw_coord_spawn(tw_coord_t *c, const char *slots, char *const argv[])
{
	const char *bin = tw_worker_bin();
	c->pid = fork();
	if (c->pid == 0) {
		setenv("KGB_LOG_LEVEL", getenv("KGB_TEST_WORKER_LOG") ? getenv("KGB_TEST_WORKER_LOG") : "error", 1);
		if (slots)
			setenv("KGB_WORKER_SLOTS", slots, 1);
		execv(bin, argv);
		_exit(127);
	}
}

static inline void tw_coord_close(tw_coord_t *c)
{
	zmq_close(c->sock);
	zmq_ctx_term(c->ctx);
}

/* The next envelope from the worker (any body), at most timeout_ms; NULL on timeout.
 * Keeps the worker's routing id for tw_coord_send. */
static inline Kgb__Envelope *tw_coord_recv(tw_coord_t *c, int timeout_ms)
{
	char err[512];
	Kgb__Envelope *env = kgb_wire_recv_routed(c->sock, timeout_ms, c->id, sizeof c->id, &c->idlen,
	                                          KGB_MAX_FRAME_WORKER, err, sizeof err);
	if (!env && err[0])
		FAIL("from the worker: %s", err);
	return env;
}

static inline void tw_coord_send(tw_coord_t *c, Kgb__Envelope *env)
{
	if (kgb_wire_send(c->sock, c->id, c->idlen, env, 0) != 0)
		FAIL("send: %s", zmq_strerror(errno));
}

/* Accept the result of (job_id, epoch). */
static inline void tw_coord_ack_result(tw_coord_t *c, uint64_t job_id, uint64_t epoch)
{
	if (kgb_wire_send_result_ack(c->sock, c->id, c->idlen, job_id, epoch, true) != 0)
		FAIL("send: %s", zmq_strerror(errno));
}

/* Answer a Register: ok (else error), the worker id and heartbeat given, a lease of 1 s. */
static inline void tw_coord_ack(tw_coord_t *c, bool ok, const char *worker_id, uint32_t heartbeat_ms,
                                const char *error)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__RegisterAck ack = KGB__REGISTER_ACK__INIT;
	ack.ok = ok;
	ack.worker_id = (char *)worker_id;
	ack.heartbeat_ms = heartbeat_ms;
	ack.lease_ms = 1000;
	ack.error = (char *)(error ? error : "");
	env.body_case = KGB__ENVELOPE__BODY_REGISTER_ACK;
	env.register_ack = &ack;
	tw_coord_send(c, &env);
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
