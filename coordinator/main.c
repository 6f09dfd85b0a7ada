/* kgb-coordinator: the daemon that stores campaigns, splits them into jobs, leases
 * jobs to workers and records their results. See docs/scheduler.md and docs/store.md. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "coord.h"
#include "curve.h"
#include "leader.h"
#include "log.h"
#include "metrics.h"
#include "opts.h"
#include "sdnotify.h"
#include "util.h"
#include "zap.h"

typedef enum { OPT_STR = 0, OPT_U32 } opt_kind_t;

enum { O_WORKERS, O_CLI, O_DBURL, O_DATADIR, O_LEASE, O_LEADER_LEASE, O_HEARTBEAT, O_ATTEMPTS, O_BACKOFF, O_CURVE_SECRET, O_CURVE_WORKERS, O_CURVE_USERS, O_LOGLEVEL, O_METRICS,
       O_COUNT, O_HELP = O_COUNT, O_VERSION, O_ALL };

/* Every setting: flag, environment variable, default, help. One table gives the
 * parser, the environment overrides and --help (common/opts.h). */
static const kgb_opt_t opts[O_ALL] = {
	[O_WORKERS] = {"workers", 0, true, "ENDPOINT", "ZeroMQ endpoint the workers connect to", "KGB_WORKER_ENDPOINT",
	               "tcp://127.0.0.1:7710"},
	[O_CLI] = {"cli", 0, true, "ENDPOINT", "ZeroMQ endpoint the kgb command connects to", "KGB_CLI_ENDPOINT",
	           "tcp://127.0.0.1:7711"},
	[O_DBURL] = {"database-url", 0, true, "URL",
	             "PostgreSQL to use (libpq URL or key=value string); unset: a private embedded cluster",
	             "KGB_DATABASE_URL"},
	[O_DATADIR] = {"data-dir", 0, true, "DIR",
	               "data directory of the embedded store (default $HOME/.local/share/kgb, /var/lib/kgb as root)",
	               "KGB_DATA_DIR"},
	[O_LEASE] = {"lease-ms", 0, true, "MS", "job lease; renewed by every heartbeat", "KGB_LEASE_MS", "5000"},
	[O_LEADER_LEASE] = {"leader-lease-ms", 0, true, "MS",
	                    "lease of the active coordinator in the store; a standby takes over once it runs out "
	                    "(docs/scheduler.md, \"Standby coordinator\")", "KGB_LEADER_LEASE_MS", "3000"},
	[O_HEARTBEAT] = {"heartbeat-ms", 0, true, "MS", "heartbeat interval told to workers", "KGB_HEARTBEAT_MS", "1000"},
	[O_ATTEMPTS] = {"max-attempts", 0, true, "N", "infrastructure failures before a job is failed with infra_error",
	                "KGB_MAX_ATTEMPTS", "5"},
	[O_BACKOFF] = {"backoff-ms", 0, true, "MS",
	               "first retry delay after an infrastructure failure (doubles per attempt, at most 60 s)",
	               "KGB_BACKOFF_MS", "1000"},
	[O_CURVE_SECRET] = {"curve-secret", 0, true, "FILE",
	                    "CURVE secret key of the coordinator (kgb keygen); set: both sockets are CURVE servers "
	                    "and only allowlisted keys get in (docs/security.md)", "KGB_CURVE_SECRET_KEY_FILE"},
	[O_CURVE_WORKERS] = {"curve-workers", 0, true, "FILE",
	                     "allowlist of worker public keys (one Z85 key per line, then an optional name)",
	                     "KGB_CURVE_WORKERS_FILE"},
	[O_CURVE_USERS] = {"curve-users", 0, true, "FILE", "allowlist of user (kgb CLI) public keys",
	                   "KGB_CURVE_USERS_FILE"},
	[O_LOGLEVEL] = {"log-level", 0, true, "LEVEL", "error, warn, info or debug", "KGB_LOG_LEVEL", "info"},
	[O_METRICS] = {"metrics", 0, true, "HOST:PORT",
	               "serve Prometheus metrics at http://HOST:PORT/metrics (docs/metrics.md); unset: off",
	               "KGB_METRICS_ENDPOINT"},
	[O_HELP] = {"help", 'h', false, NULL, "show this help"},
	[O_VERSION] = {"version", 0, false, NULL, "show the version"},
};

/* The settings' values, and the range of the numeric ones. */
static struct {
	opt_kind_t kind;
	const char *sval;
	uint32_t uval;
	uint32_t min, max;
} vals[O_COUNT] = {
	[O_LEASE] = {OPT_U32, NULL, 0, 100, 3600000},
	[O_LEADER_LEASE] = {OPT_U32, NULL, 0, 300, 600000},
	[O_HEARTBEAT] = {OPT_U32, NULL, 0, 10, 600000},
	[O_ATTEMPTS] = {OPT_U32, NULL, 0, 1, 1000},
	[O_BACKOFF] = {OPT_U32, NULL, 0, 0, 600000},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kgb-coordinator [OPTIONS]\n\n"
	           "Runs the kgb coordinator: stores campaigns in PostgreSQL, splits them into jobs,\n"
	           "leases jobs to workers and records their results. Prints \"kgb-coordinator: ready\"\n"
	           "on stderr once the store is migrated, both sockets are bound and it is the active\n"
	           "coordinator of its store; \"kgb-coordinator: standby\" while another one is (it then\n"
	           "answers every request with not_active and takes over when that one's lease runs\n"
	           "out; it exits with status 3 when its term ends under it). SIGINT or SIGTERM\n"
	           "stops it cleanly (and the embedded store with it); SIGHUP reloads the CURVE\n"
	           "allowlists.\n\nOptions (environment variable in brackets):\n");
	kgb_opts_help(f, opts, O_ALL, 28, 80);
}

static int set_opt(int i, const char *v, const char *from)
{
	if (vals[i].kind == OPT_STR) {
		vals[i].sval = v;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n < vals[i].min || n > vals[i].max) {
		fprintf(stderr, "kgb-coordinator: %s: '%s' is not an integer in [%u, %u]\n", from, v, vals[i].min,
		        vals[i].max);
		return -1;
	}
	vals[i].uval = (uint32_t)n;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	for (int i = 0; i < O_COUNT; i++) {
		const char *e = getenv(opts[i].env);
		const char *v = (e && *e) ? e : opts[i].dflt;
		if (v && set_opt(i, v, (e && *e) ? opts[i].env : "default") != 0)
			return -1;
	}
	kgb_opts_t p;
	int rc = 0;
	kgb_opts_init(&p, opts, O_ALL, argc, argv);
	for (int k; rc == 0 && (k = kgb_opts_next(&p)) != KGB_OPTS_END;) {
		char err[256];
		if (k == O_HELP || k == O_VERSION) {
			if (k == O_HELP)
				usage(stdout);
			else
				printf("kgb-coordinator %s\n", KGB_VERSION);
			kgb_opts_free(&p);
			exit(0);
		}
		if (k >= 0) {
			rc = set_opt(k, p.val, p.arg); /* the option as given: "--lease-ms" or "--lease-ms=5" */
			continue;
		}
		rc = -1;
		size_t len;
		if (k == KGB_OPTS_POSITIONAL || (k == KGB_OPTS_UNKNOWN && !kgb_opts_unknown_name(&p, &len)))
			fprintf(stderr, "kgb-coordinator: unexpected argument '%s' (see --help)\n", p.arg);
		else if (k == KGB_OPTS_UNKNOWN)
			fprintf(stderr, "kgb-coordinator: unknown option '%s' (see --help)\n", p.arg);
		else if (kgb_opts_error(&p, k, err, sizeof err))
			fprintf(stderr, "kgb-coordinator: %s\n", err);
	}
	kgb_opts_free(&p);
	return rc;
}

/* ---- life cycle ---- */

static kgb_coord_t coord;

/* CURVE (docs/security.md): the secret key and the ZAP handler, when configured. */
static bool curve_on;
static char curve_secret[KGB_CURVE_Z85_LEN + 1];
static kgb_zap_t *zap;
static uv_signal_t sighup;

static const char *opt_val(int o)
{
	return vals[o].sval && vals[o].sval[0] ? vals[o].sval : NULL;
}

/* Check the CURVE settings before anything starts: the secret key must load and both
 * allowlists must parse. Without a secret key, warn once when a socket is reachable
 * from other machines. Returns 0 or -1 (reason printed). */
static int curve_configure(const char *wep, const char *cep)
{
	const char *sec = opt_val(O_CURVE_SECRET), *wl = opt_val(O_CURVE_WORKERS), *ul = opt_val(O_CURVE_USERS);
	char err[1024], pub[KGB_CURVE_Z85_LEN + 1];
	if (!sec) {
		if (wl || ul) {
			fprintf(stderr, "kgb-coordinator: %s is set but KGB_CURVE_SECRET_KEY_FILE (--curve-secret) is not: "
			                "without a secret key CURVE is off and the allowlist would not be enforced\n",
			        wl ? "KGB_CURVE_WORKERS_FILE (--curve-workers)" : "KGB_CURVE_USERS_FILE (--curve-users)");
			return -1;
		}
		if (!kgb_curve_endpoint_is_local(wep) || !kgb_curve_endpoint_is_local(cep)) {
			log_warn("CURVE IS OFF and a socket is reachable from other machines (workers %s, cli %s): the "
			         "sockets are unauthenticated and unencrypted",
			         wep, cep);
			log_warn("anyone who can reach them can submit and cancel campaigns, read every campaign and its "
			         "results, register as a worker and receive every candidate's sources, and read the "
			         "traffic; results are still taken only from the worker holding a job's lease");
			log_warn("for anything but loopback set KGB_CURVE_SECRET_KEY_FILE, KGB_CURVE_WORKERS_FILE and "
			         "KGB_CURVE_USERS_FILE (docs/security.md, deploy/)");
		} else {
			log_info("CURVE is off: the sockets listen on loopback only (workers %s, cli %s); any local user can "
			         "submit, cancel and read campaigns and register a worker (docs/security.md)",
			         wep, cep);
		}
		return 0;
	}
	if (!zmq_has("curve")) {
		fprintf(stderr, "kgb-coordinator: KGB_CURVE_SECRET_KEY_FILE is set but this libzmq has no CURVE support\n");
		return -1;
	}
	if (!wl || !ul) {
		fprintf(stderr, "kgb-coordinator: CURVE is on (KGB_CURVE_SECRET_KEY_FILE) but %s is not set: give both "
		                "allowlists (an empty file admits no one)\n",
		        !wl ? "KGB_CURVE_WORKERS_FILE (--curve-workers)" : "KGB_CURVE_USERS_FILE (--curve-users)");
		return -1;
	}
	if (kgb_curve_key_load(sec, true, curve_secret, err, sizeof err) != 0 ||
	    kgb_curve_public_of(curve_secret, pub, err, sizeof err) != 0) {
		fprintf(stderr, "kgb-coordinator: KGB_CURVE_SECRET_KEY_FILE: %s\n", err);
		return -1;
	}
	const char *lists[2] = { wl, ul };
	for (int i = 0; i < 2; i++) {
		kgb_curve_allow_t *a = NULL;
		if (kgb_curve_allow_load(lists[i], &a, err, sizeof err) != 0) {
			fprintf(stderr, "kgb-coordinator: %s: %s\n", i ? "KGB_CURVE_USERS_FILE" : "KGB_CURVE_WORKERS_FILE",
			        err);
			return -1;
		}
		kgb_curve_allow_destroy(&a);
	}
	curve_on = true;
	log_info("curve: on; the coordinator's public key is %s (KGB_CURVE_SERVER_KEY for workers and users)", pub);
	return 0;
}

static void on_sighup(uv_signal_t *s, int signum)
{
	(void)s;
	(void)signum;
	char err[1024];
	if (!zap) {
		log_info("SIGHUP: nothing to reload (CURVE is off)");
		return;
	}
	if (kgb_zap_reload(zap, err, sizeof err) != 0)
		log_error("SIGHUP: allowlists not reloaded, the old ones stay in force: %s", err);
}

static void handle_closed(uv_handle_t *h)
{
	(void)h;
}

static void close_rest(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, handle_closed);
}

static double drain_deadline;
static bool state_loaded; /* the open state is in memory (it serves once it is) */

static void on_drain(uv_timer_t *t)
{
	kgb_coord_t *c = t->data;
	if (c->db && kgb_db_pending(c->db) > 0 && kgb_now_ms() < drain_deadline && kgb_db_connected(c->db))
		return;
	if (c->db && kgb_db_pending(c->db) > 0)
		log_warn("shutdown: %zu store writes still pending; they are redone after the restart",
		         kgb_db_pending(c->db));
	kgb_db_close(&c->db);
	/* then the lead goes back, so that a standby takes over at once */
	kgb_leader_release(c->leader);
	if (!kgb_leader_released(c->leader) && kgb_now_ms() < drain_deadline + 2000)
		return;
	uv_timer_stop(t);
	kgb_leader_close(&c->leader);
	uv_walk(c->loop, close_rest, NULL);
}

static void shutdown_coord(kgb_coord_t *c, int code)
{
	if (c->stopping)
		return;
	c->stopping = true;
	c->exit_code = code;
	log_info("shutting down");
	kgb_sd_notify("STOPPING=1");
	kgb_zsock_close(&c->wsock);
	kgb_zsock_close(&c->csock);
	kgb_zap_close(&zap);
	kgb_metrics_stop();
	uv_timer_stop(&c->tick);
	uv_timer_stop(&c->kick);
	/* let the writes already queued (results, requeues) reach the store */
	drain_deadline = kgb_now_ms() + (state_loaded ? 5000 : 0);
	uv_timer_start(&c->drain, on_drain, 0, 50);
}

static void on_signal(uv_signal_t *s, int signum)
{
	kgb_coord_t *c = s->data;
	log_info("signal %d received", signum);
	shutdown_coord(c, 0);
}

static void on_tick(uv_timer_t *t)
{
	kgb_coord_t *c = t->data;
	if (c->emb && kgb_embedded_check(c->emb) != 0) {
		log_error("the embedded store stopped; the coordinator cannot go on without it");
		shutdown_coord(c, 1);
		return;
	}
	kgb_coord_tick(c);
}

static char cluster_id[64]; /* the store's (migration 0012) */

/* Bind both sockets: until the state is loaded (and while a standby), every request
 * is answered with not_active. Returns 0 or -1 (shutting down). */
static int bind_sockets(kgb_coord_t *c)
{
	char err[512];
	/* with CURVE, the ZAP handler was bound in main(), before these sockets */
	const char *sec = curve_on ? curve_secret : NULL;
	c->wsock = kgb_zsock_bind_curve(c->loop, c->zctx, c->cfg.worker_endpoint, "workers", sec,
	                                kgb_coord_on_worker_msg, c, err, sizeof err);
	if (c->wsock)
		c->csock = kgb_zsock_bind_curve(c->loop, c->zctx, c->cfg.cli_endpoint, "cli", sec, kgb_coord_on_cli_msg,
		                                c, err, sizeof err);
	if (!c->wsock || !c->csock) {
		log_error("%s", err);
		shutdown_coord(c, 1);
		return -1;
	}
	return 0;
}

static uint64_t leader_epoch; /* this coordinator's term, once it is active */

/* Readiness and status for systemd's Type=notify (docs/deploy.md): a standby is ready
 * too (it answers not_active), with a status that says which it is. */
static void tell_manager(const char *state)
{
	if (kgb_sd_notify(state) < 0)
		log_warn("cannot tell the service manager '%s' (NOTIFY_SOCKET=%s): %s", state, getenv("NOTIFY_SOCKET"),
		         strerror(errno));
}

static void loaded(kgb_coord_t *c, int rc)
{
	if (rc != 0) {
		shutdown_coord(c, 1);
		return;
	}
	c->ready = state_loaded = true;
	uv_timer_start(&c->tick, on_tick, 100, 100);
	log_info("listening: workers on %s, cli on %s%s; lease %u ms, heartbeat %u ms", c->cfg.worker_endpoint,
	         c->cfg.cli_endpoint, curve_on ? " (CURVE, allowlisted keys only)" : "", c->cfg.lease_ms,
	         c->cfg.heartbeat_ms);
	if (kgb_curve_endpoint_is_local(c->cfg.worker_endpoint))
		log_info("workers on other machines cannot connect: %s is loopback (the default); bind an address they "
		         "reach with KGB_WORKER_ENDPOINT (e.g. tcp://0.0.0.0:7710) and turn CURVE on (docs/deploy.md)",
		         c->cfg.worker_endpoint);
	fprintf(stderr, "kgb-coordinator: ready (cluster %s)\n", cluster_id);
	fflush(stderr);
	char st[96];
	snprintf(st, sizeof st, "READY=1\nSTATUS=active (leader epoch %" PRIu64 "), serving", leader_epoch);
	tell_manager(st);
}

/* ---- the lead (leader.h) ---- */

static void leader_active(kgb_coord_t *c, uint64_t epoch)
{
	leader_epoch = epoch;
	tell_manager("STATUS=active, loading the state from the store");
	kgb_coord_load(c, 0, loaded);
}

static void leader_lost(kgb_coord_t *c, const char *why)
{
	(void)why;
	/* what is still queued goes out and is refused by the store's fence (their
	 * callbacks free what they hold), as in any shutdown */
	shutdown_coord(c, 3);
}

static void leader_serving(kgb_coord_t *c, bool on)
{
	c->ready = on && state_loaded && !c->stopping;
	if (c->ready)
		kgb_coord_kick(c);
	tell_manager(on ? "STATUS=active, serving again: the lead is renewed"
	                : "STATUS=active, not serving: the lead could not be renewed in the store");
}

static void leader_standby(kgb_coord_t *c)
{
	(void)c;
	fprintf(stderr, "kgb-coordinator: standby (cluster %s)\n", cluster_id);
	fflush(stderr);
	tell_manager("READY=1\nSTATUS=standby: another coordinator is active; this one takes over when its lease "
	             "runs out");
}

static const kgb_leader_cbs_t leader_cbs = { leader_active, leader_lost, leader_standby, leader_serving };
static char leader_conninfo[PATH_MAX + 128];

/* The store's cluster id (migration 0012): in every message from now on. */
static void cluster_cb(PGresult *res, const char *err, void *arg)
{
	kgb_coord_t *c = arg;
	if (err || PQntuples(res) != 1) {
		log_error("store: reading the cluster id: %s", err ? err : "no row in table cluster");
		shutdown_coord(c, 1);
		return;
	}
	kgb_strlcpy(cluster_id, PQgetvalue(res, 0, 0), sizeof cluster_id);
	kgb_wire_set_cluster_id(cluster_id);
	log_info("cluster id %s (the store's; workers and the CLI check it: docs/security.md)", cluster_id);
	if (bind_sockets(c) != 0)
		return;
	/* this coordinator in the leader row: its host and worker endpoint (the same
	 * process restarted takes the lead back at once: the endpoint is its own) */
	char host[128] = "";
	gethostname(host, sizeof host - 1);
	char *name = kgb_xasprintf("%s %s", host, c->cfg.worker_endpoint);
	c->leader = kgb_leader_start(c, leader_conninfo, name, c->cfg.leader_lease_ms, c->emb != NULL, &leader_cbs);
	free(name);
}

static void migrated(kgb_coord_t *c, int rc)
{
	if (rc != 0) {
		shutdown_coord(c, 1);
		return;
	}
	kgb_db_query(c->db, 0, cluster_cb, c, "SELECT id FROM cluster", 0, NULL);
}

static void on_connect(kgb_db_t *db, bool reconnect, void *arg)
{
	(void)db;
	kgb_coord_t *c = arg;
	if (!reconnect)
		kgb_coord_migrate(c, migrated);
}

static char *default_data_dir(void)
{
	if (geteuid() == 0)
		return kgb_xstrdup("/var/lib/kgb");
	const char *home = getenv("HOME");
	if (!home || !*home)
		home = ".";
	return kgb_xasprintf("%s/.local/share/kgb", home);
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv) != 0)
		return 2;
	kgb_log_init("coordinator", vals[O_LOGLEVEL].sval);
	signal(SIGPIPE, SIG_IGN);
	if (curve_configure(vals[O_WORKERS].sval, vals[O_CLI].sval) != 0)
		return 2;
	kgb_coord_t *c = &coord;
	c->out = &kgb_wproto_outbox;
	char *datadir = vals[O_DATADIR].sval ? kgb_xstrdup(vals[O_DATADIR].sval) : default_data_dir();
	c->cfg.worker_endpoint = vals[O_WORKERS].sval;
	c->cfg.cli_endpoint = vals[O_CLI].sval;
	c->cfg.database_url = vals[O_DBURL].sval && vals[O_DBURL].sval[0] ? vals[O_DBURL].sval : NULL;
	c->cfg.data_dir = datadir;
	c->cfg.lease_ms = vals[O_LEASE].uval;
	c->cfg.leader_lease_ms = vals[O_LEADER_LEASE].uval;
	c->cfg.heartbeat_ms = vals[O_HEARTBEAT].uval;
	c->cfg.max_attempts = vals[O_ATTEMPTS].uval;
	c->cfg.backoff_base_ms = vals[O_BACKOFF].uval;
	c->cfg.backoff_cap_ms = 60000;
	if (c->cfg.heartbeat_ms >= c->cfg.lease_ms)
		log_warn("heartbeat (%u ms) is not shorter than the lease (%u ms): leases will expire between heartbeats",
		         c->cfg.heartbeat_ms, c->cfg.lease_ms);

	char conninfo[PATH_MAX + 128];
	if (c->cfg.database_url) {
		kgb_strlcpy(conninfo, c->cfg.database_url, sizeof conninfo);
		log_info("store: %s", "using KGB_DATABASE_URL");
	} else {
		char err[1024];
		if (kgb_embedded_start(datadir, &c->emb, conninfo, sizeof conninfo, err, sizeof err) != 0) {
			log_error("%s", err);
			fprintf(stderr, "kgb-coordinator: %s\n", err);
			free(datadir);
			return 1;
		}
	}

	c->loop = uv_default_loop();
	c->zctx = zmq_ctx_new();
	if (curve_on) {
		char err[1024];
		const kgb_zap_domain_t doms[2] = { { "workers", opt_val(O_CURVE_WORKERS) },
		                                   { "cli", opt_val(O_CURVE_USERS) } };
		zap = kgb_zap_start(c->loop, c->zctx, doms, 2, err, sizeof err);
		if (!zap) {
			log_error("%s", err);
			fprintf(stderr, "kgb-coordinator: %s\n", err);
			zmq_ctx_term(c->zctx);
			kgb_embedded_stop(&c->emb);
			free(datadir);
			return 1;
		}
	}
	kgb_coord_state_init(c);
	uv_timer_init(c->loop, &c->tick);
	uv_timer_init(c->loop, &c->drain);
	c->tick.data = c->drain.data = c;
	uv_signal_init(c->loop, &c->sigint);
	uv_signal_init(c->loop, &c->sigterm);
	c->sigint.data = c->sigterm.data = c;
	uv_signal_start(&c->sigint, on_signal, SIGINT);
	uv_signal_start(&c->sigterm, on_signal, SIGTERM);
	uv_signal_init(c->loop, &sighup);
	uv_signal_start(&sighup, on_sighup, SIGHUP);
	kgb_strlcpy(leader_conninfo, conninfo, sizeof leader_conninfo);
	c->db = kgb_db_new(c->loop, conninfo, on_connect, c);
	if (opt_val(O_METRICS)) {
		char err[512];
		if (kgb_metrics_start(c, opt_val(O_METRICS), err, sizeof err) != 0) {
			log_error("%s", err);
			fprintf(stderr, "kgb-coordinator: %s\n", err);
			shutdown_coord(c, 2);
		}
	}

	uv_run(c->loop, UV_RUN_DEFAULT);

	if (c->db)
		kgb_db_close(&c->db);
	kgb_leader_close(&c->leader);
	kgb_zap_close(&zap);
	kgb_metrics_stop();
	uv_walk(c->loop, close_rest, NULL);
	uv_run(c->loop, UV_RUN_DEFAULT);
	uv_loop_close(c->loop);
	zmq_ctx_term(c->zctx);
	kgb_coord_state_free(c);
	kgb_wire_set_cluster_id(NULL);
	kgb_embedded_stop(&c->emb);
	log_info("stopped (exit %d)", c->exit_code);
	free(datadir);
	return c->exit_code;
}
