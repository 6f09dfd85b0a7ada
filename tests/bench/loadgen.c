/* kgb-loadgen: simulated workers against a real coordinator (docs/scheduler.md,
 * "Measured"). Each simulated worker is a real ZeroMQ DEALER speaking kgb's protocol:
 * it registers one device on PLATFORM with SLOTS slots, heartbeats the jobs it holds,
 * answers every JobAssign with a JobResult ("pass" for every case) after DELAY ms (or a
 * time drawn uniformly from DELAY * [1 - F, 1 + F] with --delay-spread F), and
 * resends a result that is not acknowledged as the worker daemon does: after a wait
 * drawn between half and all of RESEND ms, doubling up to 30 s.
 * It stops when JOBS results have been acknowledged or after TIMEOUT seconds, and prints
 * one JSON object: workers, jobs and case rows acknowledged, wall seconds from the first
 * assignment, jobs/s and rows/s (and jobs/s over the middle half of the run alone),
 * latency from the result's sending to its acknowledgement (p50, p99, max, in ms),
 * latency from JobAssign to the acknowledgement of the durable result (p50, p99, the
 * DELAY included), re-sends, refusals.
 * Built by scripts/bench-scale.sh (not part of `make`).
 *
 *   kgb-loadgen --endpoint EP --workers N --jobs J [--platform P] [--slots S]
 *               [--delay-ms D] [--delay-spread F] [--resend-ms R] [--timeout-s T]
 *               [--name PREFIX]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zmq.h>

#include "catalog.h"
#include "util.h"
#include "wire.h"

typedef struct pend {
	uint64_t job, epoch;
	uint32_t *cases;
	size_t ncases;
	double assigned_ms, due_ms, sent_ms, next_ms, backoff_ms;
	bool sent;
	struct pend *next;
} pend_t;

typedef struct sim {
	void *sock;
	char name[64], wid[32];
	uint8_t session[16];
	bool registered;
	double reg_sent_ms, last_hb_ms;
	uint32_t hb_ms;
	pend_t *jobs;
	size_t njobs;
} sim_t;

static struct {
	const char *endpoint, *platform, *prefix;
	int workers, slots;
	uint64_t want;
	double delay_ms, spread, resend_ms, timeout_s;
} opt = {NULL, "sim:bench", "sim", 10, 1, 1000, 0, 0, 2000, 300};

static uint64_t acked, rows, resends, refused, assigned;
static double first_assign_ms, last_ack_ms;
static double *lat, *lat_assign, *ack_at;
static size_t nlat, caplat;

static void send_env(sim_t *s, Kgb__Envelope *env)
{
	size_t n;
	uint8_t *buf = kgb_wire_pack(env, &n);
	if (zmq_send(s->sock, buf, n, ZMQ_DONTWAIT) < 0 && zmq_errno() != EAGAIN)
		fprintf(stderr, "loadgen: %s: send: %s\n", s->name, zmq_strerror(zmq_errno()));
	free(buf);
}

/* The jobs s holds (only those whose result is not sent yet, when unsent) as
 * RunningJob entries *rj and the pointer array *rp (both heap, for the caller to
 * free). Returns their number. */
static size_t running_list(const sim_t *s, bool unsent, Kgb__RunningJob **rj, Kgb__RunningJob ***rp)
{
	*rj = kgb_xcalloc(s->njobs + 1, sizeof **rj);
	*rp = kgb_xcalloc(s->njobs + 1, sizeof **rp);
	size_t k = 0;
	for (pend_t *p = s->jobs; p; p = p->next) {
		if (unsent && p->sent)
			continue;
		kgb__running_job__init(&(*rj)[k]);
		(*rj)[k].job_id = p->job;
		(*rj)[k].epoch = p->epoch;
		(*rp)[k] = &(*rj)[k];
		k++;
	}
	return k;
}

static void do_register(sim_t *s, double now)
{
	Kgb__Register reg = KGB__REGISTER__INIT;
	Kgb__Device d = KGB__DEVICE__INIT;
	Kgb__Device *dp[1] = {&d};
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	char host[64];
	snprintf(host, sizeof host, "loadgen-%d", (int)getpid());
	d.backend = "sim";
	d.name = "bench";
	d.arch = "sim";
	d.platform = (char *)opt.platform;
	d.slots = (uint32_t)opt.slots;
	d.memory_bytes = 1ull << 30;
	reg.worker_name = s->name;
	reg.worker_version = (char *)KGB_VERSION;
	reg.catalog_version = (char *)kgb_catalog_version();
	reg.hostname = host;
	reg.pid = (uint32_t)getpid();
	reg.n_devices = 1;
	reg.devices = dp;
	reg.session.data = s->session;
	reg.session.len = sizeof s->session;
	/* jobs held (after a reconnect) */
	Kgb__RunningJob *rj, **rp;
	reg.n_running = running_list(s, false, &rj, &rp);
	reg.running = rp;
	env.body_case = KGB__ENVELOPE__BODY_REGISTER;
	env.register_ = &reg;
	send_env(s, &env);
	free(rj);
	free(rp);
	s->reg_sent_ms = now;
}

static void do_heartbeat(sim_t *s, double now)
{
	Kgb__Heartbeat hb = KGB__HEARTBEAT__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__RunningJob *rj, **rp;
	size_t k = running_list(s, true, &rj, &rp);
	hb.worker_id = s->wid;
	hb.n_running = k;
	hb.running = rp;
	env.body_case = KGB__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	send_env(s, &env);
	free(rj);
	free(rp);
	s->last_hb_ms = now;
}

static void send_result(sim_t *s, pend_t *p, double now)
{
	Kgb__JobResult jr = KGB__JOB_RESULT__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__CaseResult *cr = kgb_xcalloc(p->ncases + 1, sizeof *cr);
	Kgb__CaseResult **cp = kgb_xcalloc(p->ncases + 1, sizeof *cp);
	for (size_t i = 0; i < p->ncases; i++) {
		kgb__case_result__init(&cr[i]);
		cr[i].case_index = p->cases[i];
		cr[i].verdict = KGB__VERDICT__VERDICT_PASS;
		cp[i] = &cr[i];
	}
	jr.job_id = p->job;
	jr.epoch = p->epoch;
	jr.worker_id = s->wid;
	jr.n_cases = p->ncases;
	jr.cases = cp;
	env.body_case = KGB__ENVELOPE__BODY_JOB_RESULT;
	env.job_result = &jr;
	send_env(s, &env);
	free(cr);
	free(cp);
	if (p->sent)
		resends++;
	p->sent = true;
	p->sent_ms = now;
	/* the worker's pacing (worker/daemon.c): a wait drawn between half and all of the
	 * backoff, which doubles from RESEND ms up to 30 s */
	p->next_ms = now + p->backoff_ms * (0.5 + 0.5 * ((double)rand() / ((double)RAND_MAX + 1.0)));
}

static void drop(sim_t *s, uint64_t job)
{
	for (pend_t **pp = &s->jobs; *pp; pp = &(*pp)->next)
		if ((*pp)->job == job) {
			pend_t *p = *pp;
			*pp = p->next;
			free(p->cases);
			free(p);
			s->njobs--;
			return;
		}
}

static void on_msg(sim_t *s, const void *data, size_t len, double now)
{
	char err[256];
	Kgb__Envelope *env = kgb_wire_unpack(data, len, KGB_MAX_FRAME_WORKER, err, sizeof err);
	if (!env) {
		fprintf(stderr, "loadgen: %s: bad frame: %s\n", s->name, err);
		return;
	}
	switch (env->body_case) {
	case KGB__ENVELOPE__BODY_REGISTER_ACK:
		if (!env->register_ack->ok) {
			fprintf(stderr, "loadgen: %s: registration refused: %s\n", s->name, env->register_ack->error);
			exit(1);
		}
		kgb_strlcpy(s->wid, env->register_ack->worker_id, sizeof s->wid);
		s->hb_ms = env->register_ack->heartbeat_ms ? env->register_ack->heartbeat_ms : 1000;
		s->registered = true;
		for (pend_t *p = s->jobs; p; p = p->next)
			if (p->sent) {
				p->backoff_ms = opt.resend_ms;
				send_result(s, p, now);
			}
		break;
	case KGB__ENVELOPE__BODY_HEARTBEAT_ACK:
		if (!env->heartbeat_ack->known)
			s->registered = false;
		for (size_t i = 0; i < env->heartbeat_ack->n_cancel_job_ids; i++)
			drop(s, env->heartbeat_ack->cancel_job_ids[i]);
		break;
	case KGB__ENVELOPE__BODY_JOB_ASSIGN: {
		Kgb__JobAssign *a = env->job_assign;
		pend_t *p = kgb_xcalloc(1, sizeof *p);
		p->job = a->job_id;
		p->epoch = a->epoch;
		p->ncases = a->n_cases;
		p->cases = kgb_xmalloc((a->n_cases + 1) * sizeof *p->cases);
		memcpy(p->cases, a->cases, a->n_cases * sizeof *p->cases);
		p->assigned_ms = now;
		/* DELAY, or uniform in DELAY * [1 - SPREAD, 1 + SPREAD] */
		p->due_ms = now + opt.delay_ms * (1.0 + opt.spread * (2.0 * ((double)rand() / ((double)RAND_MAX + 1.0)) - 1.0));
		p->backoff_ms = opt.resend_ms;
		p->next = s->jobs;
		s->jobs = p;
		s->njobs++;
		assigned++;
		if (!first_assign_ms)
			first_assign_ms = now;
		break;
	}
	case KGB__ENVELOPE__BODY_RESULT_ACK: {
		Kgb__ResultAck *ack = env->result_ack;
		pend_t *p = NULL;
		for (pend_t *q = s->jobs; q; q = q->next)
			if (q->job == ack->job_id && q->epoch == ack->epoch)
				p = q;
		if (!p)
			break;
		if (ack->register_again) {
			s->registered = false;
			break;
		}
		if (ack->accepted) {
			acked++;
			rows += p->ncases;
			if (nlat == caplat) {
				caplat = caplat ? 2 * caplat : 4096;
				lat = kgb_xrealloc(lat, caplat * sizeof *lat);
				lat_assign = kgb_xrealloc(lat_assign, caplat * sizeof *lat_assign);
				ack_at = kgb_xrealloc(ack_at, caplat * sizeof *ack_at);
			}
			ack_at[nlat] = now;
			lat_assign[nlat] = now - p->assigned_ms;
			lat[nlat++] = now - p->due_ms;
			last_ack_ms = now;
		} else {
			refused++;
		}
		drop(s, p->job);
		break;
	}
	case KGB__ENVELOPE__BODY_CANCEL_JOBS:
		for (size_t i = 0; i < env->cancel_jobs->n_job_ids; i++)
			drop(s, env->cancel_jobs->job_ids[i]);
		break;
	default:
		break;
	}
	kgb_wire_free(env);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "loadgen: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--endpoint"))
			opt.endpoint = v;
		else if (!strcmp(a, "--workers"))
			opt.workers = atoi(v);
		else if (!strcmp(a, "--jobs"))
			opt.want = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--platform"))
			opt.platform = v;
		else if (!strcmp(a, "--slots"))
			opt.slots = atoi(v);
		else if (!strcmp(a, "--delay-ms"))
			opt.delay_ms = atof(v);
		else if (!strcmp(a, "--delay-spread"))
			opt.spread = atof(v);
		else if (!strcmp(a, "--resend-ms"))
			opt.resend_ms = atof(v);
		else if (!strcmp(a, "--timeout-s"))
			opt.timeout_s = atof(v);
		else if (!strcmp(a, "--name"))
			opt.prefix = v;
		else {
			fprintf(stderr, "loadgen: unknown option %s\n", a);
			return 2;
		}
		i++;
	}
	if (!opt.endpoint || opt.workers < 1 || opt.slots < 1) {
		fprintf(stderr, "usage: kgb-loadgen --endpoint EP --workers N --jobs J [--platform P] [--slots S] "
		                "[--delay-ms D] [--delay-spread F] [--resend-ms R] [--timeout-s T] [--name PREFIX]\n");
		return 2;
	}
	void *ctx = zmq_ctx_new();
	zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, opt.workers + 64);
	sim_t *sims = kgb_xcalloc((size_t)opt.workers, sizeof *sims);
	zmq_pollitem_t *items = kgb_xcalloc((size_t)opt.workers, sizeof *items);
	for (int i = 0; i < opt.workers; i++) {
		sim_t *s = &sims[i];
		snprintf(s->name, sizeof s->name, "%s-%d", opt.prefix, i);
		if (getrandom(s->session, sizeof s->session, 0) != (ssize_t)sizeof s->session)
			return 1;
		s->sock = zmq_socket(ctx, ZMQ_DEALER);
		int linger = 0, hwm = 0;
		zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
		zmq_setsockopt(s->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
		zmq_setsockopt(s->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
		if (zmq_connect(s->sock, opt.endpoint) != 0) {
			fprintf(stderr, "loadgen: connect %s: %s\n", opt.endpoint, zmq_strerror(zmq_errno()));
			return 1;
		}
		items[i].socket = s->sock;
		items[i].events = ZMQ_POLLIN;
	}
	double t0 = kgb_now_ms();
	uint8_t *buf = kgb_xmalloc(KGB_MAX_FRAME_WORKER + 1);
	while (acked < opt.want && kgb_now_ms() - t0 < opt.timeout_s * 1000) {
		int n = zmq_poll(items, opt.workers, 2);
		double now = kgb_now_ms();
		for (int i = 0; n > 0 && i < opt.workers; i++) {
			if (!(items[i].revents & ZMQ_POLLIN))
				continue;
			for (;;) {
				int r = zmq_recv(sims[i].sock, buf, KGB_MAX_FRAME_WORKER, ZMQ_DONTWAIT);
				if (r < 0)
					break;
				on_msg(&sims[i], buf, (size_t)r, now);
			}
		}
		for (int i = 0; i < opt.workers; i++) {
			sim_t *s = &sims[i];
			if (!s->registered) {
				if (now - s->reg_sent_ms > 2000)
					do_register(s, now);
				continue;
			}
			if (now - s->last_hb_ms >= s->hb_ms)
				do_heartbeat(s, now);
			for (pend_t *p = s->jobs; p; p = p->next) {
				if (!p->sent && now >= p->due_ms)
					send_result(s, p, now);
				else if (p->sent && now >= p->next_ms) {
					p->backoff_ms = p->backoff_ms * 2 > 30000 ? 30000 : p->backoff_ms * 2;
					send_result(s, p, now);
				}
			}
		}
	}
	double wall = (last_ack_ms > first_assign_ms ? last_ack_ms - first_assign_ms : 0) / 1000.0;
	/* steady state: the acknowledgements of the middle half of the run (no ramp-up of
	 * the first assignments, no tail of the last workers' jobs) */
	size_t mid = 0;
	double w0 = first_assign_ms + 0.25 * wall * 1000, w1 = first_assign_ms + 0.75 * wall * 1000;
	for (size_t i = 0; i < nlat; i++)
		mid += ack_at[i] >= w0 && ack_at[i] < w1;
	double steady = wall > 0 ? mid / (0.5 * wall) : 0;
	/* the simulated workers' own CPU: they share the machine with the coordinator */
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
	                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
	qsort(lat, nlat, sizeof *lat, cmp_d);
	double p50 = nlat ? lat[nlat / 2] : 0, p99 = nlat ? lat[(size_t)(nlat * 0.99)] : 0,
	       mx = nlat ? lat[nlat - 1] : 0;
	qsort(lat_assign, nlat, sizeof *lat_assign, cmp_d);
	double a50 = nlat ? lat_assign[nlat / 2] : 0, a99 = nlat ? lat_assign[(size_t)(nlat * 0.99)] : 0;
	printf("{\"workers\": %d, \"slots\": %d, \"delay_ms\": %.0f, \"delay_spread\": %.2f, \"jobs_acked\": %" PRIu64 ", \"rows\": %" PRIu64
	       ", \"assigned\": %" PRIu64 ", \"wall_s\": %.3f, \"jobs_per_s\": %.1f, \"steady_jobs_per_s\": %.1f, \"rows_per_s\": %.1f, "
	       "\"latency_ms\": {\"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f}, "
	       "\"assign_to_durable_ms\": {\"p50\": %.1f, \"p99\": %.1f}, \"resends\": %" PRIu64
	       ", \"refused\": %" PRIu64 ", \"loadgen_cpu_ms\": %.0f, \"complete\": %s}\n",
	       opt.workers, opt.slots, opt.delay_ms, opt.spread, acked, rows, assigned, wall, wall > 0 ? acked / wall : 0, steady,
	       wall > 0 ? rows / wall : 0, p50, p99, mx, a50, a99, resends, refused, cpu_ms, acked >= opt.want ? "true" : "false");
	for (int i = 0; i < opt.workers; i++)
		zmq_close(sims[i].sock);
	zmq_ctx_term(ctx);
	free(buf);
	return acked >= opt.want ? 0 : 1;
}
