/* The worker daemon (daemon.h, docs/worker.md).
 *
 * One thread, one zmq_poll loop over the DEALER socket, a self-pipe for signals and
 * the stdout pipes of the executor children. State:
 *   devices  healthy / needs a health check / unhealthy; running children per device
 *   jobs     QUEUED (assigned, waiting for a slot) -> RUNNING (child alive) -> DONE
 *            (result packed, resent with paced, jittered backoff until a ResultAck)
 * Timers (registration retry, heartbeat, result resend, job deadlines, health-check
 * deadlines, shutdown grace) are checked on every turn; the poll waits at most 50 ms. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon.h"
#include "executor.h"
#include "nvml.h"
#include "native_provider.h"
#include "pycand.h"
#include "catalog.h"
#include "cluster.h"
#include "curve.h"
#include "validate.h"
#include "wire.h"
#include "log.h"
#include "sdnotify.h"
#include "sizing.h"
#include "util.h"

#define POLL_MS 50
#define REGISTER_RETRY_MS 3000.0
#define REGISTER_RETRY_MAX_MS 30000.0
#define DEFAULT_HEARTBEAT_MS 1000u
#define DEFAULT_TIME_LIMIT_MS 120000u
/* an executor still releasing its device this long after its job's result is killed,
 * and the device checked before its next job */
#define DYING_MAX_MS 60000.0
/* An unacknowledged result is resent after RESULT_RESEND_MIN_MS (or two heartbeat
 * periods if longer), then after twice that, and so on up to RESULT_RESEND_MAX_MS,
 * each wait drawn at random between half and all of it (docs/scheduler.md, "Flow
 * control"): an overloaded coordinator is not fed copies, and a thousand workers do
 * not resend in step. */
#define RESULT_RESEND_MIN_MS 2000.0
#define RESULT_RESEND_MAX_MS 30000.0

/* See daemon.h. */
void kgb_worker_platform_name(const char *backend, const char *device_name, char *out, size_t outlen)
{
	size_t o = (size_t)snprintf(out, outlen, "%s:", backend);
	bool dash = false;
	if (o >= outlen)
		return;
	for (const char *p = device_name; *p && o + 1 < outlen; p++) {
		unsigned char ch = (unsigned char)tolower((unsigned char)*p);
		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
			if (dash && out[o - 1] != ':')
				out[o++] = '-';
			if (o + 1 >= outlen)
				break;
			out[o++] = (char)ch;
			dash = false;
		} else {
			dash = true;
		}
	}
	out[o] = 0;
}

/* See daemon.h. */
size_t kgb_worker_probe(const char *backend, const char *platform_override, kgb_worker_dev_t **devs, size_t *n)
{
	size_t nb;
	const kgb_backend_t *const *bes = kgb_backends(&nb);
	*devs = NULL;
	*n = 0;
	for (size_t b = 0; b < nb; b++) {
		if (backend && strcmp(backend, bes[b]->name) != 0)
			continue;
		kgb_device_info_t info[64];
		char why[512] = "";
		if (bes[b]->order_env) {
			/* the probe and the executor children number devices the same way */
			char name[64];
			const char *eq = strchr(bes[b]->order_env, '=');
			KGB_ASSERT(eq != NULL);
			snprintf(name, sizeof name, "%.*s", (int)(eq - bes[b]->order_env), bes[b]->order_env);
			setenv(name, eq + 1, 0);
		}
		int k = bes[b]->probe ? bes[b]->probe(info, 64, why, sizeof why) : 0;
		if (k <= 0) {
			log_info("backend=%s no devices: %s", bes[b]->name, why[0] ? why : "(no reason given)");
			continue;
		}
		*devs = kgb_xrealloc(*devs, (*n + (size_t)k) * sizeof **devs);
		for (int i = 0; i < k; i++) {
			kgb_worker_dev_t *d = &(*devs)[(*n)++];
			memset(d, 0, sizeof *d);
			d->info = info[i];
			d->info.index = (uint32_t)i;
			d->be = bes[b];
			if (platform_override)
				snprintf(d->platform, sizeof d->platform, "%s", platform_override);
			else
				kgb_worker_platform_name(bes[b]->name, info[i].name, d->platform, sizeof d->platform);
			log_info("backend=%s device=%zu found %s (platform %s, %.1f GiB)", bes[b]->name, *n - 1,
			         info[i].name, d->platform, info[i].memory_bytes / 1073741824.0);
			char vis[256];
			if (kgb_exec_visibility(bes[b], (uint32_t)i, bes[b]->visible_env ? getenv(bes[b]->visible_env) : NULL,
			                        vis, sizeof vis) > 0)
				log_info("backend=%s device=%zu its executors run with %s=%s", bes[b]->name, *n - 1,
				         bes[b]->visible_env, vis);
		}
	}
	return *n;
}


typedef enum { J_QUEUED = 0, J_RUNNING, J_DONE } jstate_t;

typedef struct wjob {
	Kgb__JobAssign *a;         /* owned (free_unpacked) */
	jstate_t st;
	kgb_exec_child_t *ch;
	double start_ms;
	uint32_t limit_ms;        /* per kernel run and, outside runs, for the job (kgb_exec_deadline) */
	uint8_t *frame;            /* DONE: packed Envelope carrying the JobResult */
	size_t framelen;
	double last_sent_ms;
	double done_ms;            /* DONE: when the executor's result was complete */
	double next_send_ms;       /* DONE: when to resend if no ResultAck came */
	double resend_backoff_ms;  /* the wait before the next resend (doubles, jittered) */
	unsigned sends;
	struct wjob *next;
} wjob_t;

typedef enum { D_OK = 0, D_NEEDS_CHECK, D_CHECKING, D_UNHEALTHY } dstate_t;

typedef struct wdev {
	kgb_worker_dev_t d;
	uint32_t running;
	/* load (Heartbeat.load): kernel time (and all event-timed device work) of finished
	 * jobs over the time it had work; NVML's utilisation over the same time */
	double device_ms, occupied_ms, nvml_ms, active_ms, last_tick_ms;
	bool had_work, has_nvml;
	double snap_device_ms, snap_occupied_ms, snap_nvml_ms, snap_active_ms, snap_ms;  /* the window's start */
	double window_busy, window_occupied, window_nvml;
	Kgb__JobPhases ph;         /* the finished jobs' phases, summed; has_ph: any reported */
	bool has_ph;
	uint64_t jobs_done;
	dstate_t st;
	kgb_exec_child_t *health;
	double health_deadline_ms;
	double health_retry_ms;    /* a check killed from outside: the next not before then */
	double health_backoff_ms;
	/* pre-warmed executors: device open, waiting for a job (slots - running, at least 1) */
	kgb_exec_child_t **warm;
	uint32_t nwarm;
	/* executors that kept their device after a trusted job (kgb_exec_reusable): for
	 * trusted jobs only, at most slots of them */
	kgb_exec_child_t **used;
	uint32_t nused;
	double warm_retry_ms;      /* after one ended early: no new one before then */
	bool last_trusted;         /* the last job started here was trusted: new pre-warmed
	                            * executors make the BLAS handle too (KGB_EXEC_WARM_BLAS);
	                            * a candidate's job has no use for one */
	/* executors whose job finished (kgb_exec_finished) and that still release the
	 * device: reaped here, outside the slots */
	struct wdying {
		kgb_exec_child_t *ch;
		uint64_t job_id;
		double since_ms;
		bool killed;
	} *dying;
	uint32_t ndying, capdying;
} wdev_t;

typedef struct worker {
	const kgb_worker_opts_t *o;
	void *zctx, *sock;
	/* the coordinator endpoints (the active one and its standbys): connected to one at
	 * a time, the next tried when this one does not answer or is not active */
	char **eps;
	size_t nep, cur;
	const char *ep;           /* eps[cur] */
	double try_since_ms;      /* connected to ep since (or since its last answer) */
	wdev_t *devs;
	size_t ndevs;
	wjob_t *jobs;
	char name[192], hostname[128], worker_id[128];
	bool registered;
	uint8_t session[16];      /* random per process: sent in every Register */
	uint64_t rng;             /* jitter of result resends */
	double reg_sent_ms, reg_next_ms, reg_backoff_ms;
	uint32_t hb_ms, lease_ms;
	double last_hb_ms;
	uint64_t seq;
	bool stopping;
	double stop_deadline_ms, stop_started_ms;
	/* leases given back while stopping, until the coordinator answers (WorkerDrain) */
	Kgb__RunningJob *handback;
	size_t nhandback, caphandback;
	bool drain_due;           /* a WorkerDrain should go out on the next turn */
	double drain_sent_ms;
	int exit_code;
	bool quit;
	kgb_curve_client_t curve; /* CURVE keys from the environment (docs/security.md) */
	void *mon;                /* handshake monitor (with CURVE or without) */
	double auth_logged_ms;    /* last "refused our key" line */
	bool auth_ok;             /* the last handshake succeeded */
	int hs_status, hs_why;    /* the last handshake's failure (kgb_curve_monitor_poll),
	                           * 0 once one succeeds: what the silence reports say */
	double redial_ms;         /* after a failed handshake: connect again then (0: no) */
	double redial_backoff_ms;
	/* silence of the coordinator, for the operator (see check_silence) */
	double last_rx_ms;        /* last frame from the coordinator (or start) */
	bool send_failing;        /* the last send found no connection */
	double silent_log_ms;     /* next "no word from the coordinator" line (0: none logged) */
	double silent_every_ms;
	/* Python candidates: offered once the probe (python_probe) says this worker's
	 * Python can record them; sent in every Register */
	bool python;
	bool python_known;        /* the probe has answered (until then: not offered) */
	bool python_told;         /* the last Register sent carried the probe's answer */
	char python_note[512];
	bool native;              /* native candidates: its provider's Python imports torch */
	char native_note[512];
} worker_t;

/* The probe of the recorder's Python, in a thread of its own at start so that the
 * registration does not wait for torch to import (docs/python-candidates.md). */
#define PYTHON_PROBE_MS 120000
static struct {
	atomic_bool done;
	bool ok, native_ok;
	char note[512], native_note[512];
} probe_state;

/* The recorder servers (worker/pycand.h, docs/python-candidates.md "The recorder
 * server"): a private directory named in KGB_PYREC_SERVER for the executors, and one
 * server per recording mode the devices need (bit 0: on the device, bit 1: Triton's
 * interpreter), each run by a thread of its own once the probe says Python can record.
 * KGB_PYREC_SERVER=off runs none (every batch starts a recorder of its own). */
static struct {
	char dir[512];
	unsigned modes;
} pyrec_server;

static void *pyrec_server_thread(void *arg)
{
	int interpret = (int)(intptr_t)arg;
	char sock[256], err[512];
	if (!kgb_pycand_server_socket(interpret, sock, sizeof sock))
		return NULL;
	for (int failures = 0; failures < 5;) {
		char *python = kgb_pycand_find_python(), *recorder = kgb_pycand_find_recorder();
		if (!python || !recorder) {
			free(python);
			free(recorder);
			return NULL;
		}
		log_info("recorder server (%s): starting on %s", interpret ? "interpreter" : "device", sock);
		double t0 = kgb_now_ms();
		int rc = kgb_pycand_server_run(python, recorder, interpret, sock, err, sizeof err);
		free(python);
		free(recorder);
		log_warn("recorder server (%s): %s; batches start recorders of their own meanwhile",
		         interpret ? "interpreter" : "device", err);
		if (rc == -2)
			return NULL;
		/* a server that lived a while failed once; one that keeps failing is given up */
		failures = kgb_now_ms() - t0 > 60000 ? 1 : failures + 1;
		sleep(5);
	}
	log_warn("recorder server (%s): given up after 5 failures", interpret ? "interpreter" : "device");
	return NULL;
}

static void pyrec_server_start(void)
{
	for (int mode = 0; mode < 2; mode++) {
		if (!(pyrec_server.modes & (1u << mode)))
			continue;
		pthread_t pt;
		if (pthread_create(&pt, NULL, pyrec_server_thread, (void *)(intptr_t)mode) == 0)
			pthread_detach(pt);
	}
}

static void *python_probe(void *arg)
{
	(void)arg;
	probe_state.native_ok =
		kgb_native_probe(PYTHON_PROBE_MS, probe_state.native_note, sizeof probe_state.native_note);
	probe_state.ok = kgb_pycand_probe(PYTHON_PROBE_MS, probe_state.note, sizeof probe_state.note);
	atomic_store(&probe_state.done, true);
	if (probe_state.ok)
		pyrec_server_start();
	return NULL;
}

/* Take the probe's answer once it is in and log it; once registered without it
 * (the Register went out before the answer), register again so that the coordinator
 * hears it. */
static void python_probe_check(worker_t *w)
{
	if (!w->python_known && atomic_load(&probe_state.done)) {
		w->python_known = true;
		w->python = probe_state.ok;
		kgb_strlcpy(w->python_note, probe_state.note, sizeof w->python_note);
		w->native = probe_state.native_ok;
		kgb_strlcpy(w->native_note, probe_state.native_note, sizeof w->native_note);
		if (!w->native)
			log_warn("worker=%s native candidates: their cases will be unsupported here: %s", w->name,
			         w->native_note);
		if (w->python)
			log_info("worker=%s python candidates: offered, recorded with %s", w->name, w->python_note);
		else
			log_warn("worker=%s python candidates: NOT offered: %s", w->name, w->python_note);
	}
	if (w->registered && w->python_known && !w->python_told) {
		w->registered = false;
		w->reg_next_ms = 0;
		w->reg_sent_ms = 0;
	}
}

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_signal;

static void next_coordinator(worker_t *w, const char *why);

static void on_signal(int sig)
{
	int e = errno;
	got_signal = sig;
	if (sig_pipe[1] >= 0) {
		char b = (char)sig;
		ssize_t r = write(sig_pipe[1], &b, 1);
		(void)r;
	}
	errno = e;
}

#define JFMT "job=%" PRIu64 " epoch=%" PRIu64 " device=%u"
#define JARGS(j) (j)->a->job_id, (j)->a->epoch, (j)->a->device_index

/* ---- sending ---- */

static int send_env(worker_t *w, Kgb__Envelope *env, const char *what)
{
	env->seq = ++w->seq;
	if (kgb_wire_send(w->sock, NULL, 0, env, ZMQ_DONTWAIT) != 0) {
		log_debug("cannot send %s now: %s", what, zmq_strerror(errno));
		w->send_failing = true;
		return -1;
	}
	w->send_failing = false;
	return 0;
}

static Kgb__RunningJob **running_list(worker_t *w, size_t *n)
{
	size_t k = 0;
	for (wjob_t *j = w->jobs; j; j = j->next)
		if (j->st != J_DONE)
			k++;
	Kgb__RunningJob **v = kgb_xcalloc(k + 1, sizeof *v);
	k = 0;
	for (wjob_t *j = w->jobs; j; j = j->next) {
		if (j->st == J_DONE)
			continue;
		Kgb__RunningJob *r = kgb_xmalloc(sizeof *r);
		kgb__running_job__init(r);
		r->job_id = j->a->job_id;
		r->epoch = j->a->epoch;
		r->device_index = j->a->device_index;
		v[k++] = r;
	}
	*n = k;
	return v;
}

static void free_running(Kgb__RunningJob **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int send_register(worker_t *w)
{
	int rc;
	Kgb__Register reg = KGB__REGISTER__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__Device *devs = kgb_xcalloc(w->ndevs + 1, sizeof *devs);
	Kgb__Device **dp = kgb_xcalloc(w->ndevs + 1, sizeof *dp);
	size_t nd = 0;
	for (size_t i = 0; i < w->ndevs; i++) {
		if (w->devs[i].st == D_UNHEALTHY)
			continue; /* an unhealthy device is not offered */
		Kgb__Device *d = &devs[nd];
		const kgb_device_info_t *in = &w->devs[i].d.info;
		kgb__device__init(d);
		d->index = (uint32_t)i;
		d->backend = (char *)in->backend;
		d->name = (char *)in->name;
		d->arch = (char *)in->arch;
		d->memory_bytes = in->memory_bytes;
		d->driver_version = (char *)in->driver_version;
		d->platform = w->devs[i].d.platform;
		d->compute_units = in->compute_units;
		d->l2_bytes = in->l2_bytes;
		d->slots = w->o->slots;
		dp[nd++] = d;
	}
	reg.worker_name = w->name;
	reg.worker_version = (char *)KGB_VERSION;
	reg.catalog_version = (char *)kgb_catalog_version();
	reg.hostname = w->hostname;
	reg.pid = (uint32_t)getpid();
	reg.n_devices = nd;
	reg.devices = dp;
	reg.running = running_list(w, &reg.n_running);
	reg.session.data = w->session;
	reg.session.len = sizeof w->session;
	reg.python = w->python;
	reg.native = w->native;
	reg.native_known = w->python_known && w->native_note[0];
	reg.native_note = w->native_note;
	reg.draining = w->stopping;
	w->python_told = w->python_known;
	reg.python_note = w->python_known ? w->python_note : "its Python is still being probed";
	env.body_case = KGB__ENVELOPE__BODY_REGISTER;
	env.register_ = &reg;
	rc = send_env(w, &env, "Register");
	if (rc == 0) {
		log_info("worker=%s registering with %s: %zu device(s), %zu job(s) held", w->name, w->ep, nd,
		         reg.n_running);
		w->reg_sent_ms = kgb_now_ms();
	}
	free_running(reg.running, reg.n_running);
	free(dp);
	free(devs);
	return rc;
}

/* Bring every device's load up to now: the time since the last tick counts as active
 * when the device had a job queued or running then; then note whether it has one now.
 * Called on every job state change and heartbeat. */
static void load_tick(worker_t *w)
{
	double now = kgb_now_ms();
	for (size_t i = 0; i < w->ndevs; i++) {
		wdev_t *d = &w->devs[i];
		if (d->had_work && d->last_tick_ms > 0) {
			d->active_ms += now - d->last_tick_ms;
			/* NVML averages over its own sample period (up to a second): the figure
			 * read now stands for the time since the last tick */
			double u = kgb_nvml_util(d->d.be->name, (uint32_t)i);
			if (u >= 0) {
				d->has_nvml = true;
				d->nvml_ms += u / 100.0 * (now - d->last_tick_ms);
			}
		}
		d->last_tick_ms = now;
		d->had_work = false;
		for (wjob_t *j = w->jobs; j; j = j->next)
			if (j->st != J_DONE && j->a->device_index == i)
				d->had_work = true;
		if (d->snap_ms == 0) {
			d->snap_ms = now;
			d->window_busy = d->window_occupied = d->window_nvml = -1;
		} else if (now - d->snap_ms >= 60000) {
			double act = d->active_ms - d->snap_active_ms;
			d->window_busy = act > 0 ? (d->device_ms - d->snap_device_ms) / act : -1;
			d->window_occupied = act > 0 ? (d->occupied_ms - d->snap_occupied_ms) / act : -1;
			d->window_nvml = act > 0 && d->has_nvml ? (d->nvml_ms - d->snap_nvml_ms) / act : -1;
			d->snap_device_ms = d->device_ms;
			d->snap_occupied_ms = d->occupied_ms;
			d->snap_nvml_ms = d->nvml_ms;
			d->snap_active_ms = d->active_ms;
			d->snap_ms = now;
		}
	}
}

static Kgb__DeviceLoad **load_list(worker_t *w, size_t *n)
{
	load_tick(w);
	Kgb__DeviceLoad **l = kgb_xcalloc(w->ndevs + 1, sizeof *l);
	for (size_t i = 0; i < w->ndevs; i++) {
		const wdev_t *d = &w->devs[i];
		l[i] = kgb_xmalloc(sizeof **l);
		kgb__device_load__init(l[i]);
		l[i]->device_index = (uint32_t)i;
		l[i]->device_ms = d->device_ms;
		l[i]->active_ms = d->active_ms;
		/* before a whole window has passed: the figure so far */
		l[i]->window_busy = d->window_busy >= 0 ? d->window_busy
		                    : d->active_ms > 0  ? d->device_ms / d->active_ms
		                                        : -1;
		l[i]->occupied_ms = d->occupied_ms;
		l[i]->window_occupied = d->window_occupied >= 0 ? d->window_occupied
		                        : d->active_ms > 0      ? d->occupied_ms / d->active_ms
		                                                : -1;
		l[i]->nvml_ms = d->nvml_ms;
		l[i]->window_nvml = !d->has_nvml            ? -1
		                    : d->window_nvml >= 0   ? d->window_nvml
		                    : d->active_ms > 0      ? d->nvml_ms / d->active_ms
		                                            : -1;
		l[i]->nvml_util = kgb_nvml_util(d->d.be->name, (uint32_t)i);
		l[i]->jobs = d->jobs_done;
		l[i]->phases = d->has_ph ? (Kgb__JobPhases *)&d->ph : NULL;   /* the worker's own, not freed */
	}
	*n = w->ndevs;
	return l;
}

static void send_heartbeat(worker_t *w)
{
	Kgb__Heartbeat hb = KGB__HEARTBEAT__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	hb.worker_id = w->worker_id;
	hb.running = running_list(w, &hb.n_running);
	hb.load = load_list(w, &hb.n_load);
	env.body_case = KGB__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	send_env(w, &env, "Heartbeat");
	free_running(hb.running, hb.n_running);
	for (size_t i = 0; i < hb.n_load; i++)
		free(hb.load[i]);
	free(hb.load);
	w->last_hb_ms = kgb_now_ms();
}

/* Tell the coordinator this worker stops: no more jobs for it, and the leases in
 * w->handback are given back (docs/worker.md, "Stopping"). */
static void send_drain(worker_t *w, bool leaving)
{
	Kgb__WorkerDrain dr = KGB__WORKER_DRAIN__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__RunningJob **v = kgb_xcalloc(w->nhandback + 1, sizeof *v);
	for (size_t i = 0; i < w->nhandback; i++)
		v[i] = &w->handback[i];
	double left = w->stop_deadline_ms - kgb_now_ms();
	dr.worker_id = w->worker_id;
	dr.handed_back = v;
	dr.n_handed_back = w->nhandback;
	dr.grace_ms = left > 0 ? (uint32_t)left : 0;
	dr.leaving = leaving;
	env.body_case = KGB__ENVELOPE__BODY_WORKER_DRAIN;
	env.worker_drain = &dr;
	if (send_env(w, &env, "WorkerDrain") == 0) {
		w->drain_due = false;
		w->drain_sent_ms = kgb_now_ms();
	}
	free(v);
}

/* Uniform in [0, 1): xorshift64 seeded from the session id (jitter needs no more). */
static double jitter(worker_t *w)
{
	if (!w->rng)
		for (size_t i = 0; i < sizeof w->session; i++)
			w->rng = (w->rng << 8 | (w->rng >> 56)) ^ w->session[i] ^ 0x9e3779b97f4a7c15ull;
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (double)(w->rng >> 11) / 9007199254740992.0;
}

static void send_result(worker_t *w, wjob_t *j)
{
	if (!w->registered)
		return;
	if (zmq_send(w->sock, j->frame, j->framelen, ZMQ_DONTWAIT) < 0) {
		log_debug(JFMT " cannot send the result now: %s", JARGS(j), zmq_strerror(errno));
		return;
	}
	j->last_sent_ms = kgb_now_ms();
	double base = KGB_MAX(RESULT_RESEND_MIN_MS, 2.0 * w->hb_ms);
	j->resend_backoff_ms =
		j->resend_backoff_ms <= 0 ? base : KGB_MIN(2.0 * j->resend_backoff_ms, RESULT_RESEND_MAX_MS);
	j->next_send_ms = j->last_sent_ms + j->resend_backoff_ms * (0.5 + 0.5 * jitter(w));
	if (j->sends++ > 0)
		log_info(JFMT " result resent (no acknowledgement yet, attempt %u, next in %.1f s at most)", JARGS(j),
		         j->sends, j->resend_backoff_ms / 1000.0);
}

/* ---- jobs ---- */

static void job_free(wjob_t *j)
{
	if (j->ch)
		kgb_exec_destroy(&j->ch);
	if (j->a)
		kgb__job_assign__free_unpacked(j->a, NULL);
	free(j->frame);
	free(j);
}

static void job_unlink(worker_t *w, wjob_t *j)
{
	for (wjob_t **pp = &w->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			return;
		}
}

static wjob_t *job_find(worker_t *w, uint64_t id)
{
	for (wjob_t *j = w->jobs; j; j = j->next)
		if (j->a->job_id == id)
			return j;
	return NULL;
}

/* Add a finished job's phases to its device's sums (DeviceLoad.phases). */
static void phases_add(wdev_t *d, const Kgb__JobPhases *p)
{
	if (!d->has_ph) {
		kgb__job_phases__init(&d->ph);
		d->has_ph = true;
	}
	kgb_phases_add(&d->ph, p);
}

/* Turn r into the job's pending result (ownership of r moves here) and send it. */
static void job_done(worker_t *w, wjob_t *j, Kgb__JobResult *r)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	kgb_exec_set_str(&r->worker_id, w->worker_id);
	r->job_id = j->a->job_id;
	r->epoch = j->a->epoch;
	env.body_case = KGB__ENVELOPE__BODY_JOB_RESULT;
	env.job_result = r;
	env.seq = ++w->seq;
	j->frame = kgb_wire_pack(&env, &j->framelen);
	size_t passed = 0;
	for (size_t i = 0; i < r->n_cases; i++)
		if (r->cases[i]->verdict == KGB__VERDICT__VERDICT_PASS)
			passed++;
	if (r->infra == KGB__VERDICT__VERDICT_INFRA_ERROR)
		log_warn(JFMT " infra error (the coordinator will retry): %.300s", JARGS(j), r->log ? r->log : "");
	else {
		/* the executor's phases (docs/worker.md, "Where an executor's time goes") */
		char ph[200] = "", pf[600] = "";
		const Kgb__JobPhases *p = r->phases;
		if (p && p->open_ms + p->prepare_ms + p->lock_wait_ms + p->shared_ms + p->compare_ms + p->exclusive_ms > 0)
			snprintf(ph, sizeof ph, "; phases (ms): open %.0f, prepare %.0f, lock waits %.0f, shared %.0f, compare "
			         "%.0f, exclusive %.0f", p->open_ms, p->prepare_ms, p->lock_wait_ms, p->shared_ms, p->compare_ms,
			         p->exclusive_ms);
		/* and what it went to (docs/worker.md, "Where a case's time goes") */
		if (p)
			kgb_phases_profile(p, pf + 2, sizeof pf - 2);
		if (pf[2])
			memcpy(pf, "; ", 2);
		log_info(JFMT " done: op=%s %zu/%zu cases passed, compile %.0f ms, device %.1f ms, occupied %.1f ms, wall %.0f "
		         "ms%s%s", JARGS(j), j->a->op ? j->a->op : "?", passed, r->n_cases, r->compile_ms, r->device_ms,
		         r->occupied_ms, r->wall_ms, ph, pf[2] ? pf : "");
	}
	if (j->a->device_index < w->ndevs) {
		load_tick(w);
		w->devs[j->a->device_index].device_ms += r->device_ms;
		/* an executor that does not report it (a native provider's job) counts kernels */
		w->devs[j->a->device_index].occupied_ms += KGB_MAX(r->occupied_ms, r->device_ms);
		w->devs[j->a->device_index].jobs_done++;
		if (r->phases && r->infra != KGB__VERDICT__VERDICT_INFRA_ERROR)
			phases_add(&w->devs[j->a->device_index], r->phases);
	}
	kgb__job_result__free_unpacked(r, NULL);
	if (j->ch)
		kgb_exec_destroy(&j->ch);
	j->st = J_DONE;
	j->done_ms = kgb_now_ms();
	load_tick(w);
	send_result(w, j);
}

/* Report a job that cannot be run here as an infra error (the coordinator retries). */
static void job_refuse(worker_t *w, wjob_t *j, const char *why)
{
	Kgb__JobResult *r = kgb_exec_result_new(j->a->job_id, j->a->epoch);
	r->infra = KGB__VERDICT__VERDICT_INFRA_ERROR;
	kgb_exec_set_str(&r->log, why);
	job_done(w, j, r);
}

/* Give a job's lease back to the coordinator (the worker stops and will not finish
 * it): its executor, if any, is killed, and the job is forgotten here; the coordinator
 * requeues it when the next WorkerDrain names it. */
static void job_hand_back(worker_t *w, wjob_t *j, const char *why)
{
	log_info(JFMT " lease handed back: %s", JARGS(j), why);
	if (j->st == J_RUNNING) {
		kgb_exec_kill(j->ch, KGB_EXEC_KILL_SHUTDOWN);
		kgb_exec_reap(j->ch, true);
		w->devs[j->a->device_index].running--;
	}
	if (w->nhandback == w->caphandback) {
		w->caphandback = w->caphandback ? 2 * w->caphandback : 8;
		w->handback = kgb_xrealloc(w->handback, w->caphandback * sizeof *w->handback);
	}
	Kgb__RunningJob *r = &w->handback[w->nhandback++];
	kgb__running_job__init(r);
	r->job_id = j->a->job_id;
	r->epoch = j->a->epoch;
	r->device_index = j->a->device_index;
	w->drain_due = true;
	job_unlink(w, j);
	job_free(j);
	load_tick(w);
}

static void job_start(worker_t *w, wdev_t *d, wjob_t *j)
{
	char err[512];
	bool warm = false, reused = false;
	d->last_trusted = kgb_exec_job_trusted(j->a);
	/* a trusted job takes an executor that kept its device after one */
	while (d->nused > 0 && !warm && d->last_trusted) {
		kgb_exec_child_t *c = d->used[--d->nused];
		if (kgb_exec_assign(c, j->a, err, sizeof err) == 0) {
			j->ch = c;
			warm = reused = true;
		} else {
			log_warn(JFMT " %s; taking another executor", JARGS(j), err);
			kgb_exec_destroy(&c);
		}
	}
	/* a job that no kept executor may take, with none pre-warmed: one kept executor
	 * gives its device back, so that idle contexts do not add up beside new ones */
	if (!warm && d->nwarm == 0 && d->nused > 0)
		kgb_exec_destroy(&d->used[--d->nused]);
	/* a pre-warmed executor if one waits (its device already open), else a new one */
	while (d->nwarm > 0 && !warm) {
		kgb_exec_child_t *c = d->warm[--d->nwarm];
		if (kgb_exec_assign(c, j->a, err, sizeof err) == 0) {
			j->ch = c;
			warm = true;
		} else {
			log_warn(JFMT " %s; starting another executor", JARGS(j), err);
			kgb_exec_destroy(&c);
		}
	}
	if (!warm &&
	    kgb_exec_spawn(w->o->exe, KGB_EXEC_JOB, d->d.be->name, d->d.info.index, j->a, &j->ch, err, sizeof err) != 0) {
		log_error(JFMT " %s", JARGS(j), err);
		job_refuse(w, j, err);
		return;
	}
	j->limit_ms = j->a->time_limit_ms ? j->a->time_limit_ms : DEFAULT_TIME_LIMIT_MS;
	j->st = J_RUNNING;
	j->start_ms = kgb_now_ms();
	d->running++;
	log_info(JFMT " started: op %s, %zu case(s), executor pid %d%s", JARGS(j), j->a->op, j->a->n_cases,
	         (int)kgb_exec_pid(j->ch), reused ? " (kept from a previous job)" : warm ? " (pre-warmed)" : "");
}

/* A running job's child has been reaped, or has said all it will (kgb_exec_finished):
 * the result goes out, and a child still alive is kept for another trusted job or
 * reaped later (dying_tend). */
static void job_finish(worker_t *w, wjob_t *j)
{
	wdev_t *d = &w->devs[j->a->device_index];
	KGB_ASSERT(d->running > 0);
	d->running--;
	Kgb__JobResult *r = kgb_exec_result(j->ch, j->a);
	bool reaped = kgb_exec_reap(j->ch, false);
	if (reaped && kgb_exec_needs_health(j->ch) && d->st == D_OK) {
		log_warn(JFMT " the executor ended badly (status %d): health check before the next job", JARGS(j),
		         kgb_exec_status(j->ch));
		d->st = D_NEEDS_CHECK;
	}
	if (!r) { /* cancelled */
		job_unlink(w, j);
		job_free(j);
		return;
	}
	if (!reaped && kgb_exec_reusable(j->ch) && d->st == D_OK && !w->stopping && d->nused < w->o->slots) {
		/* it kept its device for another trusted job */
		kgb_exec_rearm(j->ch);
		d->used[d->nused++] = j->ch;
		j->ch = NULL;
	} else if (!reaped) {
		/* it said all it will and now releases the device: the slot is free, the
		 * process is reaped by dying_tend */
		if (d->ndying == d->capdying) {
			d->capdying = d->capdying ? d->capdying * 2 : 8;
			d->dying = kgb_xrealloc(d->dying, d->capdying * sizeof *d->dying);
		}
		d->dying[d->ndying++] = (struct wdying){ .ch = j->ch, .job_id = j->a->job_id, .since_ms = kgb_now_ms() };
		j->ch = NULL;
	}
	job_done(w, j, r);
}

static void on_assign(worker_t *w, Kgb__JobAssign *a)
{
	wjob_t *old = job_find(w, a->job_id);
	if (old && old->a->epoch == a->epoch) {
		log_debug("job=%" PRIu64 " epoch=%" PRIu64 " assigned again; already held", a->job_id, a->epoch);
		if (old->st == J_DONE)
			send_result(w, old);
		kgb__job_assign__free_unpacked(a, NULL);
		return;
	}
	if (old) {
		log_info("job=%" PRIu64 " epoch=%" PRIu64 " replaces epoch %" PRIu64 " held here", a->job_id, a->epoch,
		         old->a->epoch);
		if (old->st == J_RUNNING) {
			kgb_exec_kill(old->ch, KGB_EXEC_KILL_CANCEL);
			kgb_exec_reap(old->ch, true);
			w->devs[old->a->device_index].running--;
		}
		job_unlink(w, old);
		job_free(old);
	}
	load_tick(w);  /* the time before this job: active only if there was work */
	wjob_t *j = kgb_xcalloc(1, sizeof *j);
	j->a = a;
	j->next = NULL;
	/* append: jobs start in the order they were assigned */
	wjob_t **pp = &w->jobs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	load_tick(w);
	if (a->device_index >= w->ndevs) {
		char why[320];
		snprintf(why, sizeof why, "no device %u on worker %s (%zu devices)", a->device_index, w->name, w->ndevs);
		log_warn("job=%" PRIu64 " epoch=%" PRIu64 " %s", a->job_id, a->epoch, why);
		job_refuse(w, j, why);
		return;
	}
	if (w->stopping) {
		job_hand_back(w, j, "assigned while the worker stops");
		return;
	}
	if (w->devs[a->device_index].st == D_UNHEALTHY) {
		job_refuse(w, j, "the device failed its health check");
		return;
	}
	log_info(JFMT " assigned: op %s, %zu case(s), attempt %u", JARGS(j), a->op, a->n_cases, a->attempt);
}

static void cancel_job(worker_t *w, uint64_t id)
{
	wjob_t *j = job_find(w, id);
	if (!j)
		return;
	log_info(JFMT " cancelled by the coordinator", JARGS(j));
	if (j->st == J_RUNNING) {
		kgb_exec_kill(j->ch, KGB_EXEC_KILL_CANCEL);
		kgb_exec_reap(j->ch, true);
		w->devs[j->a->device_index].running--;
	}
	job_unlink(w, j);
	job_free(j);
}

/* ---- messages from the coordinator ---- */

static void on_message(worker_t *w, const void *data, size_t len)
{
	char err[256];
	Kgb__Envelope *env = kgb_wire_unpack(data, len, KGB_MAX_FRAME_WORKER, err, sizeof err);
	double now = kgb_now_ms();
	if (w->silent_log_ms > 0)
		log_info("worker=%s the coordinator at %s answers again after %.0f s of silence", w->name, w->ep,
		         (now - w->last_rx_ms) / 1000);
	w->last_rx_ms = now;
	w->silent_log_ms = 0;
	if (!env) {
		log_warn("dropped a frame from the coordinator (%zu bytes): %s", len, err);
		return;
	}
	switch (env->body_case) {
	case KGB__ENVELOPE__BODY_REGISTER_ACK: {
		Kgb__RegisterAck *ack = env->register_ack;
		char cerr[1024];
		if (kgb_cluster_check(w->ep, env->cluster_id, cerr, sizeof cerr) != 0) {
			log_error("worker=%s %s", w->name, cerr);
			w->exit_code = 2;
			w->quit = true;
			break;
		}
		if (!ack->ok) {
			log_error("worker=%s registration refused by the coordinator: %s", w->name,
			          ack->error && *ack->error ? ack->error : "(no reason given)");
			w->exit_code = 1;
			w->quit = true;
			break;
		}
		kgb_strlcpy(w->worker_id, ack->worker_id ? ack->worker_id : "", sizeof w->worker_id);
		w->hb_ms = ack->heartbeat_ms ? ack->heartbeat_ms : DEFAULT_HEARTBEAT_MS;
		w->lease_ms = ack->lease_ms;
		if (!w->registered) {
			log_info("worker=%s registered as %s with cluster %s (heartbeat %u ms, lease %u ms)", w->name,
			         w->worker_id, env->cluster_id && *env->cluster_id ? env->cluster_id : "(not given)", w->hb_ms,
			         w->lease_ms);
			/* systemd's Type=notify: ready once the coordinator knows us */
			char st[256];
			snprintf(st, sizeof st, "%sSTATUS=registered as %.100s", w->stopping ? "" : "READY=1\n", w->worker_id);
			if (kgb_sd_notify(st) < 0)
				log_warn("worker=%s cannot tell the service manager we are ready (NOTIFY_SOCKET=%s): %s", w->name,
				         getenv("NOTIFY_SOCKET"), strerror(errno));
		}
		w->registered = true;
		w->try_since_ms = kgb_now_ms();
		w->reg_backoff_ms = REGISTER_RETRY_MS;
		w->last_hb_ms = kgb_now_ms();
		if (w->stopping)
			w->drain_due = true;
		for (wjob_t *j = w->jobs; j; j = j->next)
			if (j->st == J_DONE) {
				j->resend_backoff_ms = 0; /* a fresh start with this registration */
				send_result(w, j);
			}
		break;
	}
	case KGB__ENVELOPE__BODY_HEARTBEAT_ACK: {
		Kgb__HeartbeatAck *ack = env->heartbeat_ack;
		if (!ack->known && w->registered) {
			log_warn("worker=%s the coordinator does not know this worker (restarted?): registering again",
			         w->worker_id);
			w->registered = false;
			w->reg_backoff_ms = REGISTER_RETRY_MS;
			w->reg_next_ms = 0;
			w->reg_sent_ms = 0;
		}
		for (size_t i = 0; i < ack->n_cancel_job_ids; i++)
			cancel_job(w, ack->cancel_job_ids[i]);
		break;
	}
	case KGB__ENVELOPE__BODY_JOB_ASSIGN: {
		Kgb__JobAssign *a = env->job_assign;
		env->job_assign = NULL;
		env->body_case = KGB__ENVELOPE__BODY__NOT_SET; /* the job now belongs to us */
		on_assign(w, a);
		break;
	}
	case KGB__ENVELOPE__BODY_RESULT_ACK: {
		Kgb__ResultAck *ack = env->result_ack;
		wjob_t *j = job_find(w, ack->job_id);
		if (j && j->st == J_DONE && j->a->epoch == ack->epoch && ack->register_again) {
			/* the coordinator did not take it from this connection (we reconnected):
			 * register again under the same session; the result is resent after */
			log_warn(JFMT " result not taken from this connection: %s; registering again", JARGS(j),
			         ack->reason ? ack->reason : "");
			if (w->registered) {
				w->registered = false;
				w->reg_backoff_ms = REGISTER_RETRY_MS;
				w->reg_next_ms = 0;
				w->reg_sent_ms = 0;
			}
		} else if (j && j->st == J_DONE && j->a->epoch == ack->epoch) {
			/* the result's way out: sent, stored by the coordinator, acknowledged */
			if (j->a->device_index < w->ndevs && w->devs[j->a->device_index].has_ph)
				w->devs[j->a->device_index].ph.p_result_ms += kgb_now_ms() - j->done_ms;
			if (ack->accepted)
				log_debug(JFMT " result acknowledged", JARGS(j));
			else
				log_warn(JFMT " result not accepted: %s", JARGS(j), ack->reason ? ack->reason : "");
			job_unlink(w, j);
			job_free(j);
		}
		break;
	}
	case KGB__ENVELOPE__BODY_WORKER_DRAIN_ACK: {
		const Kgb__WorkerDrainAck *ack = env->worker_drain_ack;
		for (size_t i = 0; i < ack->n_job_ids; i++)
			for (size_t k = 0; k < w->nhandback; k++)
				if (w->handback[k].job_id == ack->job_ids[i]) {
					log_debug("job=%" PRIu64 " hand-back acknowledged", ack->job_ids[i]);
					w->handback[k] = w->handback[--w->nhandback];
					break;
				}
		break;
	}
	case KGB__ENVELOPE__BODY_CANCEL_JOBS:
		for (size_t i = 0; i < env->cancel_jobs->n_job_ids; i++)
			cancel_job(w, env->cancel_jobs->job_ids[i]);
		break;
	case KGB__ENVELOPE__BODY_ERROR:
		if (env->error->not_active) {
			char why[700];
			snprintf(why, sizeof why, "the coordinator at %s is not active (%.500s)", w->ep,
			         env->error->reason ? env->error->reason : "");
			if (w->nep < 2)
				log_info("worker=%s %s; registering again shortly", w->name, why);
			next_coordinator(w, why);
			break;
		}
		log_warn("the coordinator reports an error: %s", env->error->reason ? env->error->reason : "");
		break;
	default:
		log_warn("dropped a frame from the coordinator: unexpected message (body %d)", (int)env->body_case);
		break;
	}
	kgb_wire_free(env);
}

static void drain_socket(worker_t *w)
{
	for (;;) {
		zmq_msg_t m;
		zmq_msg_init(&m);
		int r = zmq_msg_recv(&m, w->sock, ZMQ_DONTWAIT);
		if (r < 0) {
			zmq_msg_close(&m);
			if (errno != EAGAIN && errno != EINTR)
				log_warn("receiving from the coordinator: %s", zmq_strerror(errno));
			return;
		}
		/* a message is one envelope frame; tolerate an empty delimiter before it and
		 * drop anything with more parts */
		bool more = zmq_msg_more(&m);
		if (zmq_msg_size(&m) == 0 && more) {
			zmq_msg_close(&m);
			zmq_msg_init(&m);
			if (zmq_msg_recv(&m, w->sock, ZMQ_DONTWAIT) < 0) {
				zmq_msg_close(&m);
				continue;
			}
			more = zmq_msg_more(&m);
		}
		if (more) {
			size_t parts = 1;
			while (more) {
				zmq_msg_close(&m);
				zmq_msg_init(&m);
				if (zmq_msg_recv(&m, w->sock, ZMQ_DONTWAIT) < 0)
					break;
				more = zmq_msg_more(&m);
				parts++;
			}
			zmq_msg_close(&m);
			log_warn("dropped a message from the coordinator: %zu frames, expected one envelope", parts + 1);
			continue;
		}
		on_message(w, zmq_msg_data(&m), zmq_msg_size(&m));
		zmq_msg_close(&m);
		if (w->quit)
			return;
	}
}

/* ---- devices ---- */

/* ---- pre-warmed executors (docs/worker.md, "Pre-warmed executors") ---- */

#define WARM_RETRY_MS 10000.0

static bool prewarm_on(const worker_t *w, const wdev_t *d)
{
	if (w->o->prewarm == KGB_PREWARM_AUTO)
		return !kgb_backend_on_host(d->d.be->name);
	return w->o->prewarm == KGB_PREWARM_ON;
}

static void warm_drop(wdev_t *d)
{
	while (d->nwarm > 0)
		kgb_exec_destroy(&d->warm[--d->nwarm]);
	while (d->nused > 0)
		kgb_exec_destroy(&d->used[--d->nused]);
}

/* Reap the executors that release their device after their job (kgb_exec_finished):
 * an exit status that asks for it still sends the device to a health check, and one
 * that takes longer than DYING_MAX_MS is killed, and the device checked too. */
static void dying_tend(wdev_t *d, size_t di, double now)
{
	for (uint32_t i = 0; i < d->ndying;) {
		struct wdying *y = &d->dying[i];
		if (!kgb_exec_reap(y->ch, false)) {
			if (now - y->since_ms > DYING_MAX_MS && !y->killed) {
				log_warn("job=%" PRIu64 " device=%zu executor pid %d still releasing the device %.0f s after "
				         "its result: killing it",
				         y->job_id, di, (int)kgb_exec_pid(y->ch), (now - y->since_ms) / 1000);
				kgb_exec_kill(y->ch, KGB_EXEC_KILL_TIMEOUT);
				y->killed = true;
			}
			i++;
			continue;
		}
		log_info("job=%" PRIu64 " device=%zu executor pid %d exited %.0f ms after its result (status %d)", y->job_id,
		         di, (int)kgb_exec_pid(y->ch), now - y->since_ms, kgb_exec_status(y->ch));
		if (kgb_exec_needs_health(y->ch) && d->st == D_OK) {
			log_warn("job=%" PRIu64 " device=%zu the executor ended badly after its result (status %d): health "
			         "check before the next job",
			         y->job_id, di, kgb_exec_status(y->ch));
			d->st = D_NEEDS_CHECK;
		}
		kgb_exec_destroy(&y->ch);
		d->dying[i] = d->dying[--d->ndying];
	}
}

static void dying_drop(wdev_t *d)
{
	for (uint32_t i = 0; i < d->ndying; i++)
		kgb_exec_destroy(&d->dying[i].ch);
	d->ndying = 0;
	free(d->dying);
	d->dying = NULL;
	d->capdying = 0;
}

/* Let go of pre-warmed executors that ended early (backing off before the next), and
 * keep one waiting for every free slot, and one at least: with more jobs queued than
 * slots, the next job gets an executor that opened its device while the others ran. */
static void warm_tend(worker_t *w, size_t di, double now)
{
	wdev_t *d = &w->devs[di];
	char err[512];
	for (uint32_t i = 0; i < d->nwarm;) {
		if (!kgb_exec_reap(d->warm[i], false)) {
			i++;
			continue;
		}
		log_warn("device=%zu pre-warmed executor pid %d ended before it had a job (status %d): jobs start cold, "
		         "next pre-warming in %.0f s",
		         di, (int)kgb_exec_pid(d->warm[i]), kgb_exec_status(d->warm[i]), WARM_RETRY_MS / 1000);
		kgb_exec_destroy(&d->warm[i]);
		d->warm[i] = d->warm[--d->nwarm];
		d->warm_retry_ms = now + WARM_RETRY_MS;
	}
	for (uint32_t i = 0; i < d->nused;) {
		if (!kgb_exec_reap(d->used[i], false)) {
			i++;
			continue;
		}
		log_warn("device=%zu executor pid %d, kept after a trusted job, ended while it waited (status %d)", di,
		         (int)kgb_exec_pid(d->used[i]), kgb_exec_status(d->used[i]));
		if (kgb_exec_needs_health(d->used[i]) && d->st == D_OK)
			d->st = D_NEEDS_CHECK;
		kgb_exec_destroy(&d->used[i]);
		d->used[i] = d->used[--d->nused];
	}
	/* executors kept after trusted jobs stand in for pre-warmed ones, for those jobs */
	uint32_t busy = d->running + d->nused;
	uint32_t want = busy < w->o->slots ? w->o->slots - busy : 1;
	while (d->nwarm < want && now >= d->warm_retry_ms) {
		kgb_exec_child_t *c = NULL;
		kgb_exec_mode_t mode = d->last_trusted ? KGB_EXEC_WARM_BLAS : KGB_EXEC_WARM;
		if (kgb_exec_spawn(w->o->exe, mode, d->d.be->name, d->d.info.index, NULL, &c, err, sizeof err) != 0) {
			log_warn("device=%zu cannot pre-warm an executor: %s; next try in %.0f s", di, err, WARM_RETRY_MS / 1000);
			d->warm_retry_ms = now + WARM_RETRY_MS;
			break;
		}
		d->warm[d->nwarm++] = c;
		log_info("device=%zu pre-warming executor pid %d", di, (int)kgb_exec_pid(c));
	}
}

static void device_tick(worker_t *w, size_t di, double now)
{
	wdev_t *d = &w->devs[di];
	char err[512];
	/* a device to be checked, or a worker stopping, keeps no executor waiting */
	if (d->st != D_OK || w->stopping)
		warm_drop(d);
	dying_tend(d, di, now);
	if (d->st == D_NEEDS_CHECK && d->running == 0 && d->ndying == 0 && now >= d->health_retry_ms) {
		if (kgb_exec_spawn(w->o->exe, KGB_EXEC_HEALTH, d->d.be->name, d->d.info.index, NULL, &d->health, err,
		                   sizeof err) != 0) {
			log_error("device=%zu health check cannot start: %s", di, err);
			d->st = D_UNHEALTHY;
			return;
		}
		d->st = D_CHECKING;
		d->health_deadline_ms = now + w->o->health_timeout_ms;
		log_info("device=%zu health check started (pid %d)", di, (int)kgb_exec_pid(d->health));
	}
	if (d->st == D_CHECKING) {
		if (now > d->health_deadline_ms)
			kgb_exec_kill(d->health, KGB_EXEC_KILL_TIMEOUT);
		if (kgb_exec_fd(d->health) >= 0)
			kgb_exec_pump(d->health, err, sizeof err);
		if (kgb_exec_fd(d->health) < 0 && kgb_exec_reap(d->health, false)) {
			int st = kgb_exec_status(d->health);
			int outside = kgb_exec_killed_outside(d->health);
			kgb_exec_destroy(&d->health);
			if (st == 0) {
				log_info("device=%zu healthy again", di);
				d->st = D_OK;
				d->health_backoff_ms = 0;
			} else if (outside) {
				/* as for a job's executor: an infrastructure failure, not the device's;
				 * the check is run again (after 1 s, doubling up to a minute) */
				d->health_backoff_ms = d->health_backoff_ms > 0 ? KGB_MIN(2 * d->health_backoff_ms, 60000.0)
				                                                : 1000.0;
				d->health_retry_ms = now + d->health_backoff_ms;
				d->st = D_NEEDS_CHECK;
				log_warn("device=%zu health check killed from outside by signal %d (the worker did not send it): "
				         "not the device's fault; checking again in %.0f s",
				         di, outside, d->health_backoff_ms / 1000);
			} else {
				log_error("device=%zu failed its health check (status %d): no more jobs on it", di, st);
				d->st = D_UNHEALTHY;
				/* queued jobs of the device go back to the coordinator; the
				 * registration no longer offers it */
				for (wjob_t *j = w->jobs; j; j = j->next)
					if (j->st == J_QUEUED && j->a->device_index == di)
						job_refuse(w, j, "the device failed its health check");
				if (w->registered) {
					w->registered = false; /* re-register without the device */
					w->reg_next_ms = 0;
					w->reg_sent_ms = 0;
				}
			}
		}
	}
	if (d->st != D_OK || w->stopping)
		return;
	for (wjob_t *j = w->jobs; j && d->running < w->o->slots; j = j->next)
		if (j->st == J_QUEUED && j->a->device_index == di)
			job_start(w, d, j);
	if (prewarm_on(w, d))
		warm_tend(w, di, now);
}

/* ---- the loop ---- */

/* With several coordinator endpoints (docs/scheduler.md, "Standby coordinator"): one
 * that does not answer a registration in FAILOVER_MS, or a registered one silent for
 * three heartbeats, or one that says it is not active, gives way to the next in the
 * list; after a round through all of them, a short pause. Jobs and held results stay:
 * the next registration lists them, and the coordinator that took over keeps their
 * leases. */
#define RECONNECT_MAX_MS 5000 /* ZeroMQ's reconnect backoff, at most (check_silence) */
#define FAILOVER_MS 3000.0
#define FAILOVER_ROUND_MS 500.0

/* The DEALER socket to w->ep (with CURVE when configured). Returns 0, or -1 with err. */
static int open_socket(worker_t *w, char *err, size_t errlen)
{
	w->sock = zmq_socket(w->zctx, ZMQ_DEALER);
	if (!w->sock) {
		kgb_err(err, errlen, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	int linger = 1000, hwm = 10000, immediate = 1;
	zmq_setsockopt(w->sock, ZMQ_LINGER, &linger, sizeof linger);
	/* queue nothing for a coordinator that is not connected: heartbeats and results
	 * are resent on timers anyway, and a backlog would arrive as a burst */
	zmq_setsockopt(w->sock, ZMQ_IMMEDIATE, &immediate, sizeof immediate);
	zmq_setsockopt(w->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
	int reconnect_max = RECONNECT_MAX_MS;  /* exponential reconnect backoff, capped */
	zmq_setsockopt(w->sock, ZMQ_RECONNECT_IVL_MAX, &reconnect_max, sizeof reconnect_max);
	int64_t maxmsg = KGB_MAX_FRAME_WORKER;
	zmq_setsockopt(w->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
	/* the handshake monitor, with CURVE or without: a refused handshake is said */
	if (kgb_curve_client_apply(&w->curve, w->sock, err, errlen) != 0 ||
	    !(w->mon = kgb_curve_monitor_new(w->zctx, w->sock, err, errlen)))
		return -1;
	if (zmq_connect(w->sock, w->ep) != 0) {
		kgb_err(err, errlen, "cannot connect to '%s': %s", w->ep, zmq_strerror(zmq_errno()));
		return -1;
	}
	return 0;
}

static void close_socket(worker_t *w)
{
	kgb_curve_monitor_destroy(&w->mon, w->sock);
	if (w->sock)
		zmq_close(w->sock);
	w->sock = NULL;
}

static void next_coordinator(worker_t *w, const char *why)
{
	double now = kgb_now_ms();
	if (w->nep < 2) {
		/* the only one: ask again soon, without growing the backoff */
		w->registered = false;
		w->reg_next_ms = now + FAILOVER_ROUND_MS;
		w->reg_sent_ms = 0;
		return;
	}
	/* a fresh socket: nothing queued for the one left goes to the next */
	int linger = 0;
	zmq_setsockopt(w->sock, ZMQ_LINGER, &linger, sizeof linger);
	close_socket(w);
	w->cur = (w->cur + 1) % w->nep;
	w->ep = w->eps[w->cur];
	log_warn("worker=%s %s; trying the coordinator at %s", w->name, why, w->ep);
	char err[512];
	if (open_socket(w, err, sizeof err) != 0) {
		log_error("worker=%s %s", w->name, err);
		w->quit = true;
		w->exit_code = 1;
		return;
	}
	w->auth_ok = false;
	w->hs_status = w->hs_why = 0;
	w->redial_ms = 0;
	w->registered = false;
	w->reg_sent_ms = 0;
	w->reg_backoff_ms = REGISTER_RETRY_MS;
	w->reg_next_ms = w->cur == 0 ? now + FAILOVER_ROUND_MS : now;
	w->try_since_ms = now;
	w->last_rx_ms = now;
	w->silent_log_ms = 0;
}

static void check_failover(worker_t *w, double now)
{
	char why[300];
	if (w->nep < 2 || w->stopping)
		return;
	if (!w->registered && now - w->try_since_ms >= FAILOVER_MS) {
		snprintf(why, sizeof why, "no registration with the coordinator at %s in %.0f s", w->ep,
		         (now - w->try_since_ms) / 1000);
		next_coordinator(w, why);
	} else if (w->registered && now - w->last_rx_ms >= KGB_MAX(FAILOVER_MS, 3.0 * w->hb_ms)) {
		snprintf(why, sizeof why, "no word from the coordinator at %s for %.0f s", w->ep,
		         (now - w->last_rx_ms) / 1000);
		next_coordinator(w, why);
	}
}

/* A coordinator that says nothing (none listening at the endpoint, or one that stopped
 * answering) is reported within SILENT_FIRST_MS, then at growing intervals (doubling
 * up to SILENT_MAX_MS) while it lasts, and once more when it answers again. ZeroMQ
 * keeps reconnecting meanwhile, with its own backoff up to RECONNECT_MAX_MS. */
static void log_handshake_failure(worker_t *w, double now);
#define SILENT_FIRST_MS 3000.0
#define SILENT_MAX_MS 60000.0
static void check_silence(worker_t *w, double now)
{
	/* registered: heartbeats are answered every hb_ms; allow three */
	double quiet = w->registered ? KGB_MAX(SILENT_FIRST_MS, 3.0 * w->hb_ms) : SILENT_FIRST_MS;
	if (w->stopping || now - w->last_rx_ms < quiet || now < w->silent_log_ms)
		return;
	w->silent_every_ms = w->silent_log_ms == 0 ? SILENT_FIRST_MS * 2 : KGB_MIN(w->silent_every_ms * 2, SILENT_MAX_MS);
	w->silent_log_ms = now + w->silent_every_ms;
	if (w->hs_status != 0) /* connected, and the handshake refused: say why, every time */
		log_handshake_failure(w, now);
	else if (w->send_failing)
		log_warn("worker=%s cannot reach the coordinator at %s for %.0f s: no connection (is kgb-coordinator "
		         "running there, and does it bind that address? it binds 127.0.0.1 unless KGB_WORKER_ENDPOINT "
		         "says otherwise); reconnecting with backoff up to %d s, next report in %.0f s",
		         w->name, w->ep, (now - w->last_rx_ms) / 1000, RECONNECT_MAX_MS / 1000,
		         w->silent_every_ms / 1000);
	else
		log_warn("worker=%s no answer from the coordinator at %s for %.0f s (connected, but %s); still trying, next "
		         "report in %.0f s",
		         w->name, w->ep, (now - w->last_rx_ms) / 1000,
		         w->registered ? "heartbeats are not answered" : "registration is not answered",
		         w->silent_every_ms / 1000);
}

static void tick(worker_t *w)
{
	double now = kgb_now_ms();
	char err[256];
	check_failover(w, now);
	check_silence(w, now);
	python_probe_check(w);
	/* registration: retry with backoff until acknowledged */
	if (!w->registered && now >= w->reg_next_ms) {
		if (w->reg_sent_ms > 0 && now - w->reg_sent_ms >= REGISTER_RETRY_MS)
			log_warn("worker=%s no answer from the coordinator at %s in %.0f s; registering again", w->name,
			         w->ep, (now - w->reg_sent_ms) / 1000);
		if (send_register(w) == 0) {
			w->reg_next_ms = now + w->reg_backoff_ms;
			w->reg_backoff_ms = KGB_MIN(w->reg_backoff_ms * 2, REGISTER_RETRY_MAX_MS);
		} else {
			w->reg_next_ms = now + 200; /* not connected yet */
		}
	}
	if (w->registered && now - w->last_hb_ms >= w->hb_ms) {
		send_heartbeat(w);
		if (w->stopping && w->nhandback > 0 && now - w->drain_sent_ms >= w->hb_ms)
			w->drain_due = true; /* not answered yet: again */
	}
	if (w->registered && w->drain_due)
		send_drain(w, false);
	/* unacknowledged results, each on its own paced timer: one copy at a time */
	for (wjob_t *j = w->jobs; w->registered && j; j = j->next)
		if (j->st == J_DONE && now >= j->next_send_ms)
			send_result(w, j);
	/* running jobs: output, end, deadline */
	for (wjob_t *j = w->jobs, *next; j; j = next) {
		next = j->next;
		if (j->st != J_RUNNING)
			continue;
		if (kgb_exec_fd(j->ch) >= 0 && kgb_exec_pump(j->ch, err, sizeof err) < 0)
			log_error(JFMT " %s", JARGS(j), err);
		kgb_exec_kill_t why = kgb_exec_deadline(j->ch, now, j->limit_ms);
		if (why == KGB_EXEC_KILL_TIMEOUT) {
			log_warn(JFMT " a kernel run exceeded the time limit of %u ms: killing the executor", JARGS(j),
			         j->limit_ms);
			kgb_exec_kill(j->ch, why);
		} else if (why == KGB_EXEC_KILL_SETUP) {
			log_warn(JFMT " time limit of %u ms ran out outside any kernel run (compile or staging on a busy "
			         "worker): killing the executor; the job is retried",
			         JARGS(j), j->limit_ms);
			kgb_exec_kill(j->ch, why);
		}
		if ((kgb_exec_fd(j->ch) < 0 && kgb_exec_reap(j->ch, false)) || kgb_exec_finished(j->ch, j->a))
			job_finish(w, j);
		else if (w->stopping && now >= w->stop_deadline_ms)
			job_hand_back(w, j, "the shutdown grace is over: executor killed");
	}
	for (size_t i = 0; i < w->ndevs; i++)
		device_tick(w, i, now);
}

static void begin_stop(worker_t *w, int sig)
{
	if (w->stopping) {
		log_warn("signal %d again: stopping now", sig);
		w->stop_deadline_ms = 0;
		return;
	}
	w->stopping = true;
	w->drain_due = true;
	kgb_sd_notify("STOPPING=1\nSTATUS=stopping: running jobs finish or hand their leases back");
	w->stop_started_ms = kgb_now_ms();
	w->stop_deadline_ms = w->stop_started_ms + w->o->grace_ms;
	log_info("worker=%s stopping (signal %d): no new jobs, %u ms for the running ones, then their leases go "
	         "back to the coordinator",
	         w->name, sig, w->o->grace_ms);
	for (wjob_t *j = w->jobs, *next; j; j = next) {
		next = j->next;
		if (j->st == J_QUEUED)
			job_hand_back(w, j, "not started, and the worker stops");
	}
}

/* True when the worker may exit: nothing runs and every result was acknowledged (or
 * the grace period, extended by two heartbeats for the last acks, is over). */
static bool stop_done(worker_t *w)
{
	bool running = false, pending = false;
	for (wjob_t *j = w->jobs; j; j = j->next) {
		if (j->st == J_RUNNING)
			running = true;
		if (j->st == J_DONE)
			pending = true;
	}
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i].st == D_CHECKING)
			running = true;
	if (w->nhandback > 0)
		pending = true;
	if (running)
		return false;
	if (!pending)
		return true;
	return kgb_now_ms() > KGB_MAX(w->stop_deadline_ms, w->stop_started_ms) + 2.0 * w->hb_ms + 1000;
}

static int setup_signals(void)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* A failed handshake (our key refused, a wrong server key, CURVE on one side only) ends the
 * connection for good in ZeroMQ, so connect again after a backoff (2 s doubling to
 * 30 s): a key added to the allowlist later (SIGHUP) lets the worker in. Logs the
 * failure at most every 30 s while it goes on. */
#define REDIAL_FIRST_MS 2000.0
#define REDIAL_MAX_MS 30000.0
/* The refusal of the last handshake, with how long the coordinator has been silent. */
static void log_handshake_failure(worker_t *w, double now)
{
	char silent[64] = "";
	if (now - w->last_rx_ms >= SILENT_FIRST_MS)
		snprintf(silent, sizeof silent, " (no word from it for %.0f s)", (now - w->last_rx_ms) / 1000);
	w->auth_logged_ms = now;
	if (w->hs_status > 0)
		log_error("worker=%s coordinator refused our key%s (coordinator %s, CURVE public key %s, status %d): its "
		          "KGB_CURVE_WORKERS_FILE must list it (then SIGHUP it); trying again in %.0f s",
		          w->name, silent, w->ep, w->curve.pub, w->hs_status, w->redial_backoff_ms / 1000.0);
	else if (w->hs_why == KGB_CURVE_FAIL_MECHANISM && !w->curve.on)
		log_error("worker=%s coordinator at %s refused our handshake%s: it requires CURVE and this worker has no "
		          "key (KGB_CURVE_SERVER_KEY_FILE: the coordinator's public key, KGB_CURVE_SECRET_KEY_FILE: "
		          "this worker's, from kgb keygen; docs/security.md); trying again in %.0f s",
		          w->name, w->ep, silent, w->redial_backoff_ms / 1000.0);
	else if (w->hs_why == KGB_CURVE_FAIL_MECHANISM)
		log_error("worker=%s coordinator at %s refused our CURVE handshake%s: it runs without CURVE (unset "
		          "KGB_CURVE_SERVER_KEY_FILE, or start it with a CURVE key); trying again in %.0f s",
		          w->name, w->ep, silent, w->redial_backoff_ms / 1000.0);
	else if (!w->curve.on)
		log_error("worker=%s handshake with %s failed%s (a coordinator with CURVE needs KGB_CURVE_SERVER_KEY_FILE "
		          "and KGB_CURVE_SECRET_KEY_FILE here; or a dropped connection); trying again in %.0f s",
		          w->name, w->ep, silent, w->redial_backoff_ms / 1000.0);
	else
		log_error("worker=%s CURVE handshake with %s failed%s (a KGB_CURVE_SERVER_KEY that is not the "
		          "coordinator's public key, a coordinator without CURVE, or a dropped connection); trying again "
		          "in %.0f s",
		          w->name, w->ep, silent, w->redial_backoff_ms / 1000.0);
}

static void check_handshakes(worker_t *w)
{
	bool ok = false;
	int why = KGB_CURVE_FAIL_NONE;
	int st = kgb_curve_monitor_poll(w->mon, &ok, &why);
	double now = kgb_now_ms();
	if (st == 0) {
		if (ok && !w->auth_ok && w->auth_logged_ms > 0)
			log_info("worker=%s the coordinator accepted our %s", w->name, w->curve.on ? "key" : "handshake");
		if (ok) {
			/* in (again), possibly by libzmq's own reconnect: no redial */
			w->hs_status = w->hs_why = 0;
			w->auth_ok = true;
			w->redial_backoff_ms = 0;
			w->redial_ms = 0;
		}
		if (w->redial_ms > 0 && now >= w->redial_ms) {
			w->redial_ms = 0;
			zmq_disconnect(w->sock, w->ep); /* may be gone already */
			if (zmq_connect(w->sock, w->ep) != 0)
				log_error("worker=%s cannot connect to '%s': %s", w->name, w->ep,
				          zmq_strerror(zmq_errno()));
		}
		return;
	}
	w->auth_ok = false;
	w->hs_status = st;
	w->hs_why = why;
	w->redial_backoff_ms = w->redial_backoff_ms > 0 ? KGB_MIN(w->redial_backoff_ms * 2, REDIAL_MAX_MS)
	                                                : REDIAL_FIRST_MS;
	w->redial_ms = now + w->redial_backoff_ms;
	if (w->auth_logged_ms > 0 && now - w->auth_logged_ms < 30000)
		return;
	log_handshake_failure(w, now);
}

/* Slots and helpers from the machine (worker/sizing.h) where the options leave them
 * open: o->slots 0 becomes the default for the usable CPUs and these devices, and the
 * executors get KGB_PYREC_JOBS unless the environment names it. `how` says what was
 * chosen and from what, for the start line. */
static void size_slots(kgb_worker_opts_t *o, const kgb_worker_dev_t *devs, size_t nd, char *how, size_t howlen)
{
	uint32_t cpus = kgb_usable_cpus();
	bool host = nd > 0;   /* every device times on the host's cores */
	for (size_t i = 0; i < nd; i++)
		host = host && kgb_backend_on_host(devs[i].be->name);
	bool auto_slots = o->slots == 0;
	if (auto_slots)
		o->slots = kgb_default_slots(cpus, nd, host);
	const char *given = getenv("KGB_PYREC_JOBS");
	uint32_t helpers = kgb_default_helpers(cpus, nd, o->slots, host);
	if (given && *given) {
		helpers = kgb_helper_jobs();
	} else {
		char v[16];
		snprintf(v, sizeof v, "%u", helpers);
		setenv("KGB_PYREC_JOBS", v, 1);
	}
	snprintf(how, howlen, "%s, %u usable CPU(s); %u helper process(es) per executor%s",
	         auto_slots ? "sized from the machine" : "as given", cpus, helpers,
	         given && *given ? " (KGB_PYREC_JOBS)" : "");
}

/* See daemon.h. */
int kgb_worker_daemon(const kgb_worker_opts_t *given)
{
	worker_t w;
	kgb_worker_dev_t *devs = NULL;
	size_t nd = 0;
	kgb_worker_opts_t opts = *given;   /* slots 0: sized below, from the machine */
	const kgb_worker_opts_t *o = &opts;
	memset(&w, 0, sizeof w);
	w.o = o;
	w.nep = kgb_endpoint_list(o->endpoint, &w.eps);
	w.ep = w.eps[0];
	if (getrandom(w.session, sizeof w.session, 0) != (ssize_t)sizeof w.session) {
		log_error("worker: cannot draw a session id: %s", strerror(errno));
		kgb_endpoint_list_free(w.eps, w.nep);
		return 1;
	}
	w.hb_ms = DEFAULT_HEARTBEAT_MS;
	w.reg_backoff_ms = REGISTER_RETRY_MS;
	w.last_rx_ms = w.try_since_ms = kgb_now_ms();
	gethostname(w.hostname, sizeof w.hostname - 1);
	if (o->name)
		kgb_strlcpy(w.name, o->name, sizeof w.name);
	else
		snprintf(w.name, sizeof w.name, "%.120s-%d", w.hostname, (int)getpid());
	if (setup_signals() != 0) {
		log_error("cannot set up signal handling: %s", strerror(errno));
		kgb_endpoint_list_free(w.eps, w.nep);
		return 1;
	}
	kgb_worker_probe(o->backend, o->platform, &devs, &nd);
	if (nd == 0)
		log_warn("worker=%s found no device: it registers with none and will get no jobs", w.name);
	w.ndevs = nd;
	char sizing[160];
	size_slots(&opts, devs, nd, sizing, sizeof sizing);
	w.devs = kgb_xcalloc(nd + 1, sizeof *w.devs);
	for (size_t i = 0; i < nd; i++) {
		w.devs[i].d = devs[i];
		w.devs[i].warm = kgb_xcalloc(o->slots, sizeof *w.devs[i].warm);
		w.devs[i].used = kgb_xcalloc(o->slots, sizeof *w.devs[i].used);
		/* before any job, as if the last were trusted: a BLAS handle ready costs a
		 * candidate's job nothing but the pre-warm's time */
		w.devs[i].last_trusted = w.devs[i].d.be->blas != NULL;
	}
	free(devs);

	w.zctx = zmq_ctx_new();
	char cerr[1024];
	if (kgb_curve_client_from_env(&w.curve, cerr, sizeof cerr) != 0 || open_socket(&w, cerr, sizeof cerr) != 0) {
		log_error("worker=%s %s", w.name, cerr);
		close_socket(&w);
		zmq_ctx_term(w.zctx);
		free(w.devs);
		kgb_endpoint_list_free(w.eps, w.nep);
		return 1;
	}
	/* the socket has its copy; with several endpoints the next socket needs it too */
	if (w.nep == 1)
		memset(w.curve.secret, 0, sizeof w.curve.secret);
	if (w.curve.on)
		log_info("worker=%s CURVE on: our public key %s, coordinator's %s", w.name, w.curve.pub, w.curve.server);
	log_info("worker=%s version %s catalog %s: %zu device(s), %u slot(s) each (%s), coordinator %s", w.name,
	         KGB_VERSION, kgb_catalog_version(), w.ndevs, o->slots, sizing, o->endpoint);
	if (w.nep > 1)
		log_info("worker=%s %zu coordinator endpoints: the one that is active is followed", w.name, w.nep);
	if (nd > 0) {
		/* the recorder servers' directory, named for the executors before any thread
		 * or executor starts */
		const char *ps = getenv("KGB_PYREC_SERVER");
		if (!ps || strcmp(ps, "off") != 0) {
			for (size_t i = 0; i < w.ndevs; i++)
				pyrec_server.modes |= (w.devs[i].d.be->langs & (1u << KGB_LANG_TRITON)) ? 1u : 2u;
			const char *base = getenv("TMPDIR");
			snprintf(pyrec_server.dir, sizeof pyrec_server.dir, "%s/kgb-pyrec.XXXXXX", base && *base ? base : "/tmp");
			if (!mkdtemp(pyrec_server.dir)) {
				log_warn("worker=%s recorder server: mkdtemp %s: %s", w.name, pyrec_server.dir, strerror(errno));
				pyrec_server.dir[0] = 0;
				unsetenv("KGB_PYREC_SERVER");
			} else {
				setenv("KGB_PYREC_SERVER", pyrec_server.dir, 1);
			}
		} else {
			unsetenv("KGB_PYREC_SERVER");
		}
		pthread_t pt;
		if (pthread_create(&pt, NULL, python_probe, NULL) == 0) {
			pthread_detach(pt);
		} else {
			w.python_known = true;
			snprintf(w.python_note, sizeof w.python_note, "cannot start the probe of its Python");
			log_warn("worker=%s python candidates: NOT offered: %s", w.name, w.python_note);
		}
	} else {
		w.python_known = true;
		snprintf(w.python_note, sizeof w.python_note, "no device");
	}

	zmq_pollitem_t *items = NULL;
	size_t cap = 0;
	while (!w.quit) {
		if (got_signal) {
			char buf[16];
			while (read(sig_pipe[0], buf, sizeof buf) > 0)
				;
			int sig = got_signal;
			got_signal = 0;
			begin_stop(&w, sig);
		}
		tick(&w);
		if (w.quit || (w.stopping && stop_done(&w)))
			break;
		size_t need = 2 + w.ndevs;
		for (wjob_t *j = w.jobs; j; j = j->next)
			need++;
		if (need > cap) {
			cap = need * 2;
			items = kgb_xrealloc(items, cap * sizeof *items);
		}
		size_t n = 0;
		items[n++] = (zmq_pollitem_t){ .socket = w.sock, .events = ZMQ_POLLIN };
		items[n++] = (zmq_pollitem_t){ .fd = sig_pipe[0], .events = ZMQ_POLLIN };
		for (wjob_t *j = w.jobs; j; j = j->next)
			if (j->st == J_RUNNING && kgb_exec_fd(j->ch) >= 0)
				items[n++] = (zmq_pollitem_t){ .fd = kgb_exec_fd(j->ch), .events = ZMQ_POLLIN };
		for (size_t i = 0; i < w.ndevs; i++)
			if (w.devs[i].health && kgb_exec_fd(w.devs[i].health) >= 0)
				items[n++] = (zmq_pollitem_t){ .fd = kgb_exec_fd(w.devs[i].health), .events = ZMQ_POLLIN };
		int r = zmq_poll(items, (int)n, POLL_MS);
		if (r < 0 && errno != EINTR) {
			log_error("zmq_poll: %s", zmq_strerror(errno));
			break;
		}
		drain_socket(&w);
		if (w.mon)
			check_handshakes(&w);
	}
	free(items);
	if (w.stopping && w.registered)
		send_drain(&w, true); /* gone: the coordinator counts it out now, not after its lease */
	if (w.nhandback > 0)
		log_warn("worker=%s exiting with %zu hand-back(s) unanswered; those jobs wait for their leases to expire",
		         w.name, w.nhandback);
	free(w.handback);

	/* whatever still runs is killed; unacknowledged results are lost with the
	 * process, and the coordinator re-runs those jobs when their leases expire */
	size_t lost = 0;
	while (w.jobs) {
		wjob_t *j = w.jobs;
		if (j->st == J_DONE)
			lost++;
		if (j->st == J_RUNNING)
			w.devs[j->a->device_index].running--;
		w.jobs = j->next;
		job_free(j);
	}
	if (lost)
		log_warn("worker=%s exiting with %zu unacknowledged result(s); the coordinator will re-run them", w.name,
		         lost);
	for (size_t i = 0; i < w.ndevs; i++) {
		if (w.devs[i].health)
			kgb_exec_destroy(&w.devs[i].health);
		warm_drop(&w.devs[i]);
		free(w.devs[i].warm);
		free(w.devs[i].used);
		dying_drop(&w.devs[i]);
	}
	free(w.devs);
	close_socket(&w);
	memset(&w.curve, 0, sizeof w.curve);
	zmq_ctx_term(w.zctx);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
	/* the recorder servers end with this process (they watch their parent) */
	if (pyrec_server.dir[0])
		kgb_rmtree(pyrec_server.dir);
	log_info("worker=%s stopped", w.name);
	kgb_endpoint_list_free(w.eps, w.nep);
	return w.exit_code;
}
