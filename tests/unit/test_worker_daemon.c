/* The worker daemon against a fake coordinator: a ZeroMQ ROUTER in the test process
 * speaking kgb.proto to a real kgb-worker process. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "catalog.h"
#include "validate.h"
#include "wire.h"
#include "util.h"
#include "test_worker.h"

typedef struct fake {
	tw_coord_t c;
	bool acked;          /* a Register was acknowledged: later ones are too, */
	bool want_register;  /* unless the test waits for one to answer it itself */
} fake_t;

static void send_ack(fake_t *f, bool ok, const char *error);

static void fake_start(fake_t *f, const char *extra_arg)
{
	memset(f, 0, sizeof f[0]);
	tw_coord_bind(&f->c);
	char *const argv[] = { "kgb-worker", "daemon", "--coordinator", f->c.ep, "--name", "tw", "--backend",
		                   "opencl", "--grace-ms", "3000", (char *)extra_arg, NULL };
	tw_coord_spawn(&f->c, "1", argv);   /* one slot whatever the machine's size */
}

static void fake_stop(fake_t *f)
{
	if (f->c.pid > 0) {
		kill(f->c.pid, SIGKILL);
		waitpid(f->c.pid, NULL, 0);
	}
	tw_coord_close(&f->c);
}

/* Receive the next envelope (any body), at most timeout_ms. NULL on timeout. */
static Kgb__Envelope *fake_recv(fake_t *f, int timeout_ms)
{
	Kgb__Envelope *env = tw_coord_recv(&f->c, timeout_ms);
	if (!env)
		return NULL;
	/* a worker registers again once its Python probe has answered; the coordinator
	 * acknowledges every Register, so does this one after the first */
	if (f->acked && !f->want_register && env->body_case == KGB__ENVELOPE__BODY_REGISTER)
		send_ack(f, true, NULL);
	return env;
}

/* Receive until an envelope with body `want` arrives (others are dropped, heartbeats
 * counted into *hb when not NULL). */
static Kgb__Envelope *fake_expect(fake_t *f, int want, int timeout_ms, int *hb)
{
	double end = kgb_now_ms() + timeout_ms;
	f->want_register = want == KGB__ENVELOPE__BODY_REGISTER;
	while (kgb_now_ms() < end) {
		Kgb__Envelope *e = fake_recv(f, (int)(end - kgb_now_ms()) + 1);
		if (!e)
			break;
		if ((int)e->body_case == want) {
			f->want_register = false;
			return e;
		}
		if (e->body_case == KGB__ENVELOPE__BODY_HEARTBEAT && hb)
			(*hb)++;
		kgb_wire_free(e);
	}
	FAIL("no message with body %d from the worker in %d ms", want, timeout_ms);
}

static void fake_send(fake_t *f, Kgb__Envelope *env)
{
	tw_coord_send(&f->c, env);
}

static void send_ack(fake_t *f, bool ok, const char *error)
{
	/* a heartbeat of 50 ms, short: even a fast job overlaps a heartbeat */
	tw_coord_ack(&f->c, ok, "w-1", 50, error);
	f->acked |= ok;
}

static void send_job(fake_t *f, Kgb__JobAssign *a)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_JOB_ASSIGN;
	env.job_assign = a;
	fake_send(f, &env);
}

static void ack_result(fake_t *f, uint64_t job_id, uint64_t epoch)
{
	tw_coord_ack_result(&f->c, job_id, epoch);
}

static int wait_exit(pid_t pid, int timeout_ms)
{
	double end = kgb_now_ms() + timeout_ms;
	int st;
	while (kgb_now_ms() < end) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(20000);
	}
	return -1;
}

/* The worker exits with status within 10 s (sent SIGTERM first when term); it is
 * reaped then. */
static void fake_exits(fake_t *f, bool term, int status)
{
	if (term)
		kill(f->c.pid, SIGTERM);
	ASSERT_EQ_INT(wait_exit(f->c.pid, 10000), status);
	f->c.pid = 0;
}

/* A worker started and registered (its first Register acknowledged). */
static void fake_start_registered(fake_t *f)
{
	fake_start(f, NULL);
	kgb_wire_free(fake_expect(f, KGB__ENVELOPE__BODY_REGISTER, 15000, NULL));
	send_ack(f, true, NULL);
}

#define GOOD_SILU                                                                                      \
	"__kernel void k(__global const T_self *self, __global T_out *out, int n)\n"                     \
	"{ int i = get_global_id(0); if (i < n) { float x = LOAD_self(self, i); "                         \
	"STORE_out(out, i, x / (1.0f + exp(-x))); } }\n"
#define HANG_SILU                                                                                      \
	"__kernel void k(__global const T_self *self, __global T_out *out, int n)\n"                     \
	"{ int i = get_global_id(0); while (n > 0) { if (i < 0) break; out[0] = self[0]; } }\n"

/* Job 7: silu whose kernel never ends, cases 0 and 9, with the time limit given. */
static Kgb__JobAssign *hang_job(uint32_t time_limit_ms)
{
	uint32_t cases[] = { 0, 9 };
	Kgb__JobAssign *a = tw_unary_job("silu", "k", HANG_SILU, cases, 2);
	a->time_limit_ms = time_limit_ms;
	return a;
}

/* Job id: silu that passes, cases 0 and 9. */
static Kgb__JobAssign *good_job(uint64_t id)
{
	uint32_t cases[] = { 0, 9 };
	Kgb__JobAssign *a = tw_unary_job("silu", "k", GOOD_SILU, cases, 2);
	a->job_id = id;
	return a;
}

TEST(worker_daemon_job_round_trip)
{
	fake_t f;
	fake_start(&f, NULL);
	Kgb__Envelope *e = fake_expect(&f, KGB__ENVELOPE__BODY_REGISTER, 15000, NULL);
	Kgb__Register *reg = e->register_;
	ASSERT_EQ_STR(reg->worker_name, "tw");
	ASSERT_EQ_STR(reg->catalog_version, kgb_catalog_version());
	ASSERT_EQ_INT(reg->pid, f.c.pid);
	ASSERT_TRUE(reg->n_devices >= 1);
	ASSERT_EQ_STR(reg->devices[0]->backend, "opencl");
	ASSERT_TRUE(strncmp(reg->devices[0]->platform, "opencl:", 7) == 0);
	ASSERT_EQ_INT(reg->devices[0]->slots, 1);
	ASSERT_EQ_INT(reg->n_running, 0);
	kgb_wire_free(e);

	/* garbage is dropped with a log line; the worker stays up */
	zmq_send(f.c.sock, f.c.id, f.c.idlen, ZMQ_SNDMORE);
	zmq_send(f.c.sock, "\x01garbage", 8, 0);
	send_ack(&f, true, NULL);

	Kgb__JobAssign *a = good_job(7);
	send_job(&f, a);

	/* while it runs, heartbeats list it; then the result, resent until acknowledged */
	int hb = 0;
	bool listed = false;
	Kgb__Envelope *res = NULL;
	double end = kgb_now_ms() + 30000;
	while (!res && kgb_now_ms() < end) {
		e = fake_recv(&f, 1000);
		if (!e)
			continue;
		if (e->body_case == KGB__ENVELOPE__BODY_HEARTBEAT) {
			hb++;
			ASSERT_EQ_STR(e->heartbeat->worker_id, "w-1");
			for (size_t i = 0; i < e->heartbeat->n_running; i++)
				if (e->heartbeat->running[i]->job_id == 7 && e->heartbeat->running[i]->epoch == 3)
					listed = true;
			kgb_wire_free(e);
		} else if (e->body_case == KGB__ENVELOPE__BODY_JOB_RESULT) {
			res = e;
		} else {
			kgb_wire_free(e);
		}
	}
	if (!res)
		FAIL("no JobResult in 30 s (%d heartbeats)", hb);
	Kgb__JobResult *r = res->job_result;
	ASSERT_EQ_U64(r->job_id, 7);
	ASSERT_EQ_U64(r->epoch, 3);
	ASSERT_EQ_STR(r->worker_id, "w-1");
	ASSERT_EQ_INT(r->infra, 0);
	ASSERT_EQ_INT(r->n_cases, 2);
	for (size_t i = 0; i < 2; i++) {
		if (r->cases[i]->verdict != KGB__VERDICT__VERDICT_PASS)
			FAIL("case %u: %s: %s", r->cases[i]->case_index, kgb_verdict_name(r->cases[i]->verdict),
			     r->cases[i]->message);
	}
	ASSERT_TRUE(hb >= 1 || listed);
	kgb_wire_free(res);

	/* no ack: the same result comes again */
	e = fake_expect(&f, KGB__ENVELOPE__BODY_JOB_RESULT, 5000, NULL);
	ASSERT_EQ_U64(e->job_result->job_id, 7);
	kgb_wire_free(e);
	ack_result(&f, 7, 3);

	/* acknowledged: after a resend that may have crossed the ack, only heartbeats
	 * (no more results) for a second */
	double cross = kgb_now_ms() + 150;
	while (kgb_now_ms() < cross)
		if ((e = fake_recv(&f, 50)))
			kgb_wire_free(e);
	double quiet = kgb_now_ms() + 1200;
	while (kgb_now_ms() < quiet) {
		e = fake_recv(&f, 300);
		if (!e)
			continue;
		ASSERT_NE_INT(e->body_case, KGB__ENVELOPE__BODY_JOB_RESULT);
		kgb_wire_free(e);
	}

	/* a coordinator that forgot us: register again */
	Kgb__Envelope he = KGB__ENVELOPE__INIT;
	Kgb__HeartbeatAck ha = KGB__HEARTBEAT_ACK__INIT;
	ha.known = false;
	he.body_case = KGB__ENVELOPE__BODY_HEARTBEAT_ACK;
	he.heartbeat_ack = &ha;
	fake_send(&f, &he);
	e = fake_expect(&f, KGB__ENVELOPE__BODY_REGISTER, 5000, NULL);
	kgb_wire_free(e);
	send_ack(&f, true, NULL);

	/* SIGTERM: clean exit */
	fake_exits(&f, true, 0);
	kgb__job_assign__free_unpacked(a, NULL);
	fake_stop(&f);
}

TEST(worker_daemon_refused_registration_exits)
{
	fake_t f;
	fake_start(&f, NULL);
	Kgb__Envelope *e = fake_expect(&f, KGB__ENVELOPE__BODY_REGISTER, 15000, NULL);
	kgb_wire_free(e);
	send_ack(&f, false, "catalog version mismatch");
	fake_exits(&f, false, 1);
	fake_stop(&f);
}

TEST(worker_daemon_timeout_cancel_and_recovery)
{
	fake_t f;
	fake_start_registered(&f);
	Kgb__Envelope *e;

	/* job 7 hangs past its limit -> timeout, then a health check, then job 8 runs */
	Kgb__JobAssign *hang = hang_job(1500);
	send_job(&f, hang);
	Kgb__JobAssign *good = good_job(8);
	send_job(&f, good);

	bool got7 = false, got8 = false;
	double end = kgb_now_ms() + 40000;
	while (!(got7 && got8) && kgb_now_ms() < end) {
		e = fake_recv(&f, 1000);
		if (!e)
			continue;
		if (e->body_case == KGB__ENVELOPE__BODY_JOB_RESULT) {
			Kgb__JobResult *r = e->job_result;
			ASSERT_EQ_INT(r->n_cases, 2);
			if (r->job_id == 7 && !got7) {
				ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_TIMEOUT);
				ASSERT_EQ_INT(r->cases[1]->verdict, KGB_V_NOT_RUN);
				got7 = true;
				ASSERT_FALSE(got8); /* job 8 waits for the device's health check */
			} else if (r->job_id == 8 && !got8) {
				ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_PASS);
				got8 = true;
			}
			ack_result(&f, r->job_id, r->epoch);
		}
		kgb_wire_free(e);
	}
	ASSERT_TRUE(got7);
	ASSERT_TRUE(got8);

	/* job 9 hangs and is cancelled: nothing is reported, the worker goes on */
	hang->job_id = 9;
	hang->time_limit_ms = 60000;
	send_job(&f, hang);
	int hb = 0;
	bool seen = false;
	end = kgb_now_ms() + 10000;
	while (!seen && kgb_now_ms() < end) {
		e = fake_recv(&f, 500);
		if (e && e->body_case == KGB__ENVELOPE__BODY_HEARTBEAT)
			for (size_t i = 0; i < e->heartbeat->n_running; i++)
				seen |= e->heartbeat->running[i]->job_id == 9;
		if (e)
			kgb_wire_free(e);
	}
	ASSERT_TRUE(seen);
	Kgb__Envelope ce = KGB__ENVELOPE__INIT;
	Kgb__CancelJobs cj = KGB__CANCEL_JOBS__INIT;
	uint64_t ids[] = { 9 };
	cj.n_job_ids = 1;
	cj.job_ids = ids;
	ce.body_case = KGB__ENVELOPE__BODY_CANCEL_JOBS;
	ce.cancel_jobs = &cj;
	fake_send(&f, &ce);
	/* heartbeats already on the way may still list it */
	end = kgb_now_ms() + 500;
	while (kgb_now_ms() < end)
		if ((e = fake_recv(&f, 100)))
			kgb_wire_free(e);
	end = kgb_now_ms() + 1500;
	while (kgb_now_ms() < end) {
		e = fake_recv(&f, 300);
		if (!e)
			continue;
		ASSERT_NE_INT(e->body_case, KGB__ENVELOPE__BODY_JOB_RESULT);
		if (e->body_case == KGB__ENVELOPE__BODY_HEARTBEAT) {
			hb++;
			for (size_t i = 0; i < e->heartbeat->n_running; i++)
				ASSERT_NE_INT(e->heartbeat->running[i]->job_id, 9);
		}
		kgb_wire_free(e);
	}
	ASSERT_TRUE(hb >= 2);
	fake_exits(&f, true, 0);
	kgb__job_assign__free_unpacked(hang, NULL);
	kgb__job_assign__free_unpacked(good, NULL);
	fake_stop(&f);
}

/* The pid of a child of parent whose command line holds arg, or 0 (polls /proc for up
 * to timeout_ms). */
static pid_t child_with_arg(pid_t parent, const char *arg, int timeout_ms)
{
	double end = kgb_now_ms() + timeout_ms;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)parent, (int)parent);
	while (kgb_now_ms() < end) {
		FILE *f = fopen(path, "r");
		int pid;
		while (f && fscanf(f, "%d", &pid) == 1) {
			char cp[64], cmd[512];
			snprintf(cp, sizeof cp, "/proc/%d/cmdline", pid);
			FILE *c = fopen(cp, "r");
			size_t n = c ? fread(cmd, 1, sizeof cmd - 1, c) : 0;
			if (c)
				fclose(c);
			for (size_t i = 0; i < n; i++)
				if (cmd[i] == 0)
					cmd[i] = ' ';
			cmd[n] = 0;
			if (strstr(cmd, arg)) {
				fclose(f);
				return pid;
			}
		}
		if (f)
			fclose(f);
		usleep(500);
	}
	return 0;
}

/* A device health check killed from outside (an operator, the OOM killer) says nothing
 * about the device: the check runs again and the device stays in service, as a job's
 * executor killed so is an infrastructure error that is retried. */
TEST(worker_daemon_health_check_killed_outside)
{
	fake_t f;
	fake_start_registered(&f);
	Kgb__Envelope *e;

	Kgb__JobAssign *hang = hang_job(1500);
	/* a job that times out sends the device to a health check; kill that check (a few
	 * tries: a fast check may end before it is found) */
	bool killed = false;
	for (uint64_t id = 20; id < 23 && !killed; id++) {
		hang->job_id = id;
		send_job(&f, hang);
		double end = kgb_now_ms() + 30000;
		bool got = false;
		while (!got && kgb_now_ms() < end) {
			e = fake_recv(&f, 1000);
			if (e && e->body_case == KGB__ENVELOPE__BODY_JOB_RESULT && e->job_result->job_id == id) {
				got = true;
				pid_t hc = child_with_arg(f.c.pid, "--health", 3000);
				if (hc > 0 && kill(hc, SIGKILL) == 0)
					killed = true;
				ack_result(&f, e->job_result->job_id, e->job_result->epoch);
			}
			if (e)
				kgb_wire_free(e);
		}
		ASSERT_TRUE(got);
	}
	ASSERT_TRUE(killed);

	/* the device is checked again and takes the next job */
	Kgb__JobAssign *good = good_job(30);
	send_job(&f, good);
	bool got = false;
	double end = kgb_now_ms() + 40000;
	while (!got && kgb_now_ms() < end) {
		e = fake_recv(&f, 1000);
		if (!e)
			continue;
		if (e->body_case == KGB__ENVELOPE__BODY_REGISTER)
			ASSERT_EQ_INT(e->register_->n_devices, 1); /* the device is still offered */
		if (e->body_case == KGB__ENVELOPE__BODY_JOB_RESULT && e->job_result->job_id == 30) {
			Kgb__JobResult *r = e->job_result;
			ASSERT_NE_INT(r->infra, KGB__VERDICT__VERDICT_INFRA_ERROR);
			ASSERT_EQ_INT(r->n_cases, 2);
			ASSERT_EQ_INT(r->cases[0]->verdict, KGB_V_PASS);
			got = true;
			ack_result(&f, r->job_id, r->epoch);
		}
		kgb_wire_free(e);
	}
	ASSERT_TRUE(got);
	fake_exits(&f, true, 0);
	kgb__job_assign__free_unpacked(hang, NULL);
	kgb__job_assign__free_unpacked(good, NULL);
	fake_stop(&f);
}

static bool handed_back(const Kgb__WorkerDrain *d, uint64_t job_id)
{
	for (size_t i = 0; i < d->n_handed_back; i++)
		if (d->handed_back[i]->job_id == job_id)
			return true;
	return false;
}

/* SIGTERM with a job running past the grace (3 s), one queued behind it and one assigned
 * after the signal: the worker says at once that it drains, hands the queued and the
 * late one back, then the running one when the grace is over, repeats the hand-back
 * until it is answered, sends no result, says it leaves and exits 0. */
TEST(worker_daemon_stop_hands_back_leases)
{
	fake_t f;
	fake_start_registered(&f);
	Kgb__Envelope *e;
	Kgb__JobAssign *a = hang_job(60000);
	send_job(&f, a); /* job 7: runs (one slot) */
	a->job_id = 8;
	send_job(&f, a); /* job 8: waits for the slot */
	bool running = false;
	double until = kgb_now_ms() + 30000;
	while (!running && kgb_now_ms() < until) {
		e = fake_expect(&f, KGB__ENVELOPE__BODY_HEARTBEAT, 10000, NULL);
		running = e->heartbeat->n_running == 2;
		kgb_wire_free(e);
	}
	ASSERT_TRUE(running);
	kill(f.c.pid, SIGTERM);

	e = fake_expect(&f, KGB__ENVELOPE__BODY_WORKER_DRAIN, 5000, NULL);
	ASSERT_EQ_STR(e->worker_drain->worker_id, "w-1");
	ASSERT_TRUE(handed_back(e->worker_drain, 8));
	ASSERT_FALSE(e->worker_drain->leaving);
	ASSERT_TRUE(e->worker_drain->grace_ms > 0);
	kgb_wire_free(e);
	a->job_id = 10;
	send_job(&f, a); /* assigned while it stops: handed back too */

	/* unanswered: the hand-back comes again until job 7's grace is over */
	bool got7 = false, got10 = false;
	int drains = 0;
	double end = kgb_now_ms() + 20000;
	while (!(got7 && got10) && kgb_now_ms() < end) {
		e = fake_recv(&f, 500);
		if (!e)
			continue;
		ASSERT_NE_INT(e->body_case, KGB__ENVELOPE__BODY_JOB_RESULT);
		if (e->body_case == KGB__ENVELOPE__BODY_WORKER_DRAIN) {
			drains++;
			ASSERT_TRUE(handed_back(e->worker_drain, 8));
			got7 |= handed_back(e->worker_drain, 7);
			got10 |= handed_back(e->worker_drain, 10);
		}
		kgb_wire_free(e);
	}
	ASSERT_TRUE(got7);
	ASSERT_TRUE(got10);
	ASSERT_TRUE(drains >= 2);

	/* answered: it leaves */
	uint64_t ids[] = { 7, 8, 10 };
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__WorkerDrainAck ack = KGB__WORKER_DRAIN_ACK__INIT;
	ack.job_ids = ids;
	ack.n_job_ids = 3;
	env.body_case = KGB__ENVELOPE__BODY_WORKER_DRAIN_ACK;
	env.worker_drain_ack = &ack;
	fake_send(&f, &env);
	bool leaving = false;
	while (!leaving) {
		e = fake_expect(&f, KGB__ENVELOPE__BODY_WORKER_DRAIN, 10000, NULL);
		leaving = e->worker_drain->leaving;
		if (leaving)
			ASSERT_EQ_INT(e->worker_drain->n_handed_back, 0);
		kgb_wire_free(e);
	}
	fake_exits(&f, false, 0);
	kgb__job_assign__free_unpacked(a, NULL);
	fake_stop(&f);
}
