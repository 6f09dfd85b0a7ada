/* kgb-multidev-bench: throughput of one worker daemon over K of its devices
 * (docs/multi-gpu.md). It plays the coordinator: binds a ZeroMQ ROUTER, starts
 * `kgb-worker daemon` against it, takes its registration, then feeds N copies of one
 * job, spread round-robin over devices 0..K-1, keeping two jobs held per device (one
 * running, one queued, so a device never waits for a round trip), and acknowledges
 * every result. Prints one JSON object: devices, jobs, wall seconds from the first
 * assignment to the last result, jobs per minute, jobs per device, verdict counts.
 * The coordinator's own scheduling is not part of the figure. Built by
 * scripts/bench-multidev.sh (not part of `make`).
 *
 *   kgb-multidev-bench JOBFILE [--devices K] [--jobs N] [--worker PATH]
 *   kgb-multidev-bench --fake-add-case
 *
 * JOBFILE is a standalone job file (docs/TEAM-NOTES.md "Job files"); its backend is
 * the one the daemon serves, its device is ignored. K defaults to every registered
 * device, N to 8 x K. The daemon inherits this process's environment.
 * --fake-add-case prints the index of a case of op add that the HIP test double's
 * add_f32 computes right (dense f32, alpha 1), for the smoke run on the double. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "catalog.h"
#include "jobfile.h"
#include "log.h"
#include "validate.h"
#include "wire.h"
#include "util.h"

#define HELD_PER_DEVICE 2
#define MAX_DEVICES 64

static int die(const char *fmt, const char *detail)
{
	fprintf(stderr, "kgb-multidev-bench: %s%s%s\n", fmt, detail ? ": " : "", detail ? detail : "");
	return 1;
}

static int fake_add_case(void)
{
	const kgb_op_t *op = kgb_catalog_find("add");
	if (!op)
		return die("the catalog has no op add", NULL);
	for (uint32_t i = 0; i < kgb_op_case_count(op); i++) {
		kgb_case_t c;
		char err[256];
		if (kgb_case_build(op, i, &c, err, sizeof err) != 0)
			return die("building a case of add", err);
		const kgb_tensor_t *o = kgb_case_tensor(&c, "out"), *a = kgb_case_tensor(&c, "self"),
		                   *b = kgb_case_tensor(&c, "other");
		bool hit = o->dtype == KGB_DT_F32 && a->dtype == KGB_DT_F32 && b->dtype == KGB_DT_F32 &&
		           o->storage == o->numel && a->storage == o->numel && b->storage == o->numel &&
		           a->numel == o->numel && b->numel == o->numel && o->numel >= 1024 &&
		           kgb_case_pfloat(&c, "alpha", 1.0) == 1.0;
		kgb_case_release(&c);
		if (hit) {
			printf("%u\n", i);
			return 0;
		}
	}
	return die("op add has no dense f32 case with alpha 1", NULL);
}

typedef struct bench {
	void *ctx, *sock;
	uint8_t id[256];
	size_t idlen;
} bench_t;

static Kgb__Envelope *recv_env(bench_t *b, int timeout_ms)
{
	char err[512];
	Kgb__Envelope *env = kgb_wire_recv_routed(b->sock, timeout_ms, b->id, sizeof b->id, &b->idlen,
	                                          KGB_MAX_FRAME_WORKER, err, sizeof err);
	if (!env && strncmp(err, "an undecodable", 14) == 0)
		fprintf(stderr, "kgb-multidev-bench: dropped %s\n", err);
	return env;
}

static int send_env(bench_t *b, Kgb__Envelope *env)
{
	return kgb_wire_send(b->sock, b->id, b->idlen, env, 0);
}

/* The coordinator acknowledges every Register (a worker registers again once its
 * Python probe has answered). */
static void send_register_ack(bench_t *b)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__RegisterAck ack = KGB__REGISTER_ACK__INIT;
	ack.ok = true;
	ack.worker_id = (char *)"bench";
	ack.heartbeat_ms = 1000;
	ack.lease_ms = 600000;
	ack.error = (char *)"";
	env.body_case = KGB__ENVELOPE__BODY_REGISTER_ACK;
	env.register_ack = &ack;
	send_env(b, &env);
}

/* Assign copy number seq of the job (packed in tmpl) to device dev. */
static int assign(bench_t *b, const uint8_t *tmpl, size_t tlen, uint64_t seq, uint32_t dev)
{
	Kgb__JobAssign *a = kgb__job_assign__unpack(NULL, tlen, tmpl);
	if (!a)
		return -1;
	a->job_id = seq;
	a->epoch = 1;
	a->attempt = 1;
	a->device_index = dev;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_JOB_ASSIGN;
	env.job_assign = a;
	int rc = send_env(b, &env);
	kgb__job_assign__free_unpacked(a, NULL);
	return rc;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *worker = "build/rel/bin/kgb-worker";
	long k_dev = 0, n_jobs = 0;
	int rc = 1;
	kgb_log_init("multidev-bench", NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fake-add-case") == 0)
			return fake_add_case();
		else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc)
			k_dev = atol(argv[++i]);
		else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
			n_jobs = atol(argv[++i]);
		else if (strcmp(argv[i], "--worker") == 0 && i + 1 < argc)
			worker = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			return die("usage: kgb-multidev-bench JOBFILE [--devices K] [--jobs N] [--worker PATH]", NULL);
	}
	if (!path)
		return die("usage: kgb-multidev-bench JOBFILE [--devices K] [--jobs N] [--worker PATH]", NULL);
	if (k_dev < 0 || k_dev > MAX_DEVICES || n_jobs < 0)
		return die("--devices must be 0..64 and --jobs >= 0", NULL);

	kgb_jobfile_t jf;
	char err[1024];
	if (kgb_jobfile_load(path, &jf, err, sizeof err) != 0)
		return die("job file", err);
	size_t tlen = kgb__job_assign__get_packed_size(jf.job);
	uint8_t *tmpl = kgb_xmalloc(tlen ? tlen : 1);
	kgb__job_assign__pack(jf.job, tmpl);

	bench_t b;
	memset(&b, 0, sizeof b);
	b.ctx = zmq_ctx_new();
	b.sock = zmq_socket(b.ctx, ZMQ_ROUTER);
	int linger = 0;
	zmq_setsockopt(b.sock, ZMQ_LINGER, &linger, sizeof linger);
	char ep[256];
	size_t epn = sizeof ep;
	if (zmq_bind(b.sock, "tcp://127.0.0.1:*") != 0 || zmq_getsockopt(b.sock, ZMQ_LAST_ENDPOINT, ep, &epn) != 0) {
		die("bind", zmq_strerror(errno));
		goto out_sock;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execl(worker, "kgb-worker", "daemon", "--coordinator", ep, "--name", "multidev-bench", "--backend",
		      jf.backend, "--grace-ms", "5000", (char *)NULL);
		fprintf(stderr, "kgb-multidev-bench: cannot run %s: %s\n", worker, strerror(errno));
		_exit(127);
	}

	/* registration */
	Kgb__Envelope *e = NULL;
	double end = kgb_now_ms() + 60000;
	while (!e && kgb_now_ms() < end) {
		e = recv_env(&b, 500);
		if (e && e->body_case != KGB__ENVELOPE__BODY_REGISTER) {
			kgb_wire_free(e);
			e = NULL;
		}
	}
	if (!e) {
		die("the worker did not register within 60 s", NULL);
		goto out_worker;
	}
	size_t ndev = e->register_->n_devices;
	char devname[128] = "";
	if (ndev > 0)
		kgb_strlcpy(devname, e->register_->devices[0]->name, sizeof devname);
	kgb_wire_free(e);
	if (ndev == 0) {
		die("the worker registered no device of backend", jf.backend);
		goto out_worker;
	}
	if (k_dev == 0 || (size_t)k_dev > ndev)
		k_dev = (long)KGB_MIN(ndev, (size_t)MAX_DEVICES);
	if (n_jobs == 0)
		n_jobs = 8 * k_dev;
	send_register_ack(&b);

	/* feed: HELD_PER_DEVICE jobs held per device, the next one as each result comes */
	uint64_t sent = 0, done = 0, infra = 0, passed = 0, cases = 0;
	uint64_t per_dev[MAX_DEVICES] = { 0 }, held[MAX_DEVICES] = { 0 };
	uint32_t *dev_of = kgb_xcalloc((size_t)n_jobs + 1, sizeof *dev_of);
	bool *got = kgb_xcalloc((size_t)n_jobs + 1, sizeof *got);
	double t0 = kgb_now_ms();
	for (int round = 0; round < HELD_PER_DEVICE; round++)
		for (long d = 0; d < k_dev && (long)sent < n_jobs; d++) {
			sent++;
			dev_of[sent] = (uint32_t)d;
			held[d]++;
			assign(&b, tmpl, tlen, sent, (uint32_t)d);
		}
	double limit_ms = 1000.0 * 60 * 60;
	while ((long)done < n_jobs && kgb_now_ms() - t0 < limit_ms) {
		e = recv_env(&b, 1000);
		if (!e)
			continue;
		if (e->body_case == KGB__ENVELOPE__BODY_REGISTER)
			send_register_ack(&b);
		if (e->body_case == KGB__ENVELOPE__BODY_JOB_RESULT) {
			Kgb__JobResult *r = e->job_result;
			kgb_wire_send_result_ack(b.sock, b.id, b.idlen, r->job_id, r->epoch, true);
			if (r->job_id >= 1 && r->job_id <= (uint64_t)n_jobs && !got[r->job_id]) {
				got[r->job_id] = true;
				uint32_t d = dev_of[r->job_id];
				done++;
				per_dev[d]++;
				held[d]--;
				if (r->infra)
					infra++;
				for (size_t i = 0; i < r->n_cases; i++) {
					cases++;
					passed += r->cases[i]->verdict == KGB__VERDICT__VERDICT_PASS;
				}
				if ((long)sent < n_jobs) {
					sent++;
					dev_of[sent] = d;
					held[d]++;
					assign(&b, tmpl, tlen, sent, d);
				}
			}
		}
		kgb_wire_free(e);
	}
	double wall_ms = kgb_now_ms() - t0;
	if ((long)done < n_jobs) {
		fprintf(stderr, "kgb-multidev-bench: only %llu of %ld results within the limit\n",
		        (unsigned long long)done, n_jobs);
	} else {
		json_t *pd = json_array();
		for (long d = 0; d < k_dev; d++)
			json_array_append_new(pd, json_integer((json_int_t)per_dev[d]));
		json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:i, s:f, s:f, s:o, s:i, s:i, s:i}", "backend", jf.backend,
		                      "device_name", devname, "devices_registered", (int)ndev, "devices", (int)k_dev,
		                      "jobs", (int)n_jobs, "wall_s", wall_ms / 1000.0, "jobs_per_min",
		                      wall_ms > 0 ? 60000.0 * (double)n_jobs / wall_ms : 0.0, "per_device", pd,
		                      "cases", (int)cases, "cases_passed", (int)passed, "infra_errors", (int)infra);
		char *s = json_dumps(o, JSON_COMPACT);
		printf("%s\n", s);
		free(s);
		json_decref(o);
		rc = 0;
	}
	free(dev_of);
	free(got);

out_worker:
	kill(pid, SIGTERM);
	{
		int st;
		double stop = kgb_now_ms() + 15000;
		while (waitpid(pid, &st, WNOHANG) == 0 && kgb_now_ms() < stop)
			usleep(20000);
		if (waitpid(pid, &st, WNOHANG) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
	}
out_sock:
	zmq_close(b.sock);
	zmq_ctx_term(b.ctx);
	free(tmpl);
	kgb_jobfile_release(&jf);
	return rc;
}
