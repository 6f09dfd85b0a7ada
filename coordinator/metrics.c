/* Prometheus metrics over HTTP (libmicrohttpd); see metrics.h and docs/metrics.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "log.h"
#include "metrics.h"
#include "rcheck.h"
#include "util.h"

#define SNAPSHOT_MS 1000        /* the exposition text is rebuilt this often */
#define STORE_COUNT_MS 10000    /* jobs per state in the store: re-read this often */
#define RATE_WINDOW 10          /* results per second: over this many snapshots */
#define METHODS_MS 10000        /* the methods' table figures: re-read this often */
/* ... for the 20 newest campaigns open or ended within a day (the query's LIMIT) */

/* Store latency histogram buckets (seconds, upper bounds). */
static const double BUCKETS[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
#define NBUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])

/* Jobs per platform and state in the store, from the last count. */
typedef struct stored_count {
	char *platform, *state;
	uint64_t n;
} stored_count_t;

static struct {
	bool on;
	kgb_coord_t *c;
	struct MHD_Daemon *httpd;
	uv_timer_t timer;
	/* loop thread only */
	uint64_t results_hist[RATE_WINDOW + 1];
	unsigned ticks;
	double probe_started_ms;     /* 0: no probe in flight */
	double probe_last_s;
	uint64_t probe_buckets[NBUCKETS];
	uint64_t probe_count;
	double probe_sum_s;
	uint64_t probe_errors;
	bool counting;               /* the store count is in flight */
	double counted_ms;
	stored_count_t *stored;
	size_t nstored;
	bool summing;                /* the methods' figures are in flight */
	double summed_ms;
	char *methods;               /* their exposition lines, rendered when they came */
	/* shared with the HTTP thread, under mu */
	pthread_mutex_t mu;
	char *text;
	size_t text_len;
	uint64_t scrapes;
} M = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- the HTTP side (libmicrohttpd's thread) ---- */

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	(void)upload;
	(void)con_cls;
	const char *body;
	unsigned status = MHD_HTTP_OK;
	char *copy = NULL;
	size_t len = 0;
	if (*upload_size) {
		*upload_size = 0;   /* a body on a GET: ignore it */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		body = "only GET /metrics is served here\n";
	} else if (strcmp(url, "/metrics") != 0) {
		status = MHD_HTTP_NOT_FOUND;
		body = "not found: the metrics are at /metrics\n";
	} else {
		pthread_mutex_lock(&M.mu);
		M.scrapes++;
		if (M.text) {
			copy = kgb_xmalloc(M.text_len + 1);
			memcpy(copy, M.text, M.text_len + 1);
			len = M.text_len;
		}
		pthread_mutex_unlock(&M.mu);
		body = copy ? copy : "# no snapshot yet\n";
	}
	struct MHD_Response *r;
	if (copy)
		r = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void httpd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	size_t n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_warn("metrics http: %s", buf);
}

/* ---- the loop side ---- */

static void probe_cb(PGresult *res, const char *err, void *arg)
{
	(void)res;
	(void)arg;
	if (!M.on || M.probe_started_ms == 0)
		return;
	double s = (kgb_now_ms() - M.probe_started_ms) / 1000.0;
	M.probe_started_ms = 0;
	if (err) {
		M.probe_errors++;
		return;
	}
	M.probe_last_s = s;
	M.probe_count++;
	M.probe_sum_s += s;
	for (size_t i = 0; i < NBUCKETS; i++)
		if (s <= BUCKETS[i])
			M.probe_buckets[i]++;
}

static void free_stored(void)
{
	for (size_t i = 0; i < M.nstored; i++) {
		free(M.stored[i].platform);
		free(M.stored[i].state);
	}
	free(M.stored);
	M.stored = NULL;
	M.nstored = 0;
}

static void count_cb(PGresult *res, const char *err, void *arg)
{
	(void)arg;
	if (!M.on)
		return;
	M.counting = false;
	if (err) {
		log_warn("metrics: counting the store's jobs failed: %s", err);
		return;
	}
	free_stored();
	int n = PQntuples(res);
	M.stored = kgb_xcalloc((size_t)n + 1, sizeof *M.stored);
	for (int i = 0; i < n; i++) {
		M.stored[i].platform = kgb_xstrdup(PQgetvalue(res, i, 0));
		M.stored[i].state = kgb_xstrdup(PQgetvalue(res, i, 1));
		M.stored[i].n = kgb_coord_pq_u64(PQgetvalue(res, i, 2));
	}
	M.nstored = (size_t)n;
	M.counted_ms = kgb_now_ms();
}

/* The benchmark's overall figures per campaign, method and platform, from the same
 * table function as `kgb tables ID` (migration 0009a, the campaign's own operators,
 * the row over all sources): rendered once per read, kept until the next one. */
static const struct {
	const char *name, *help;
} METHOD_GAUGES[] = {
	{ "kgb_method_operators", "Operators of the campaign's set." },
	{ "kgb_method_operators_passed", "Operators with a candidate passing every case, held-out ones included, "
	                                 "with no cheat verdict (the clean accuracy's numerator)." },
	{ "kgb_method_accuracy", "Operators passed / operators of the set (clean)." },
	{ "kgb_method_speedup", "Geometric mean speedup over the passed operators with timings." },
	{ "kgb_method_speedup_low", "Lower end of the speedup's interval (noise floor included)." },
	{ "kgb_method_speedup_high", "Upper end of the speedup's interval (noise floor included)." },
	{ "kgb_method_fast_1", "Share of the set's operators passed and faster than the baseline (fast_1.0)." },
	{ "kgb_method_tokens", "Model tokens spent on the set (all kinds)." },
	{ "kgb_method_tokens_per_success", "Tokens spent / operators passed." },
};
#define NMETHOD_GAUGES (sizeof METHOD_GAUGES / sizeof METHOD_GAUGES[0])

static void methods_cb(PGresult *res, const char *err, void *arg)
{
	(void)arg;
	if (!M.on)
		return;
	M.summing = false;
	if (err) {
		log_warn("metrics: reading the methods' figures failed: %s", err);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	int n = PQntuples(res);
	for (size_t g = 0; g < NMETHOD_GAUGES; g++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", METHOD_GAUGES[g].name, METHOD_GAUGES[g].help,
		        METHOD_GAUGES[g].name);
		for (int i = 0; i < n; i++) {
			if (PQgetisnull(res, i, 3 + (int)g))
				continue; /* no figure (no timing, no tokens): no sample */
			fprintf(f, "%s{campaign=\"%s\",method=\"", METHOD_GAUGES[g].name, PQgetvalue(res, i, 0));
			kgb_metrics_label(f, PQgetvalue(res, i, 1));
			fputs("\",platform=\"", f);
			kgb_metrics_label(f, PQgetvalue(res, i, 2));
			fprintf(f, "\"} %.9g\n", kgb_coord_pq_f64(PQgetvalue(res, i, 3 + (int)g)));
		}
	}
	fclose(f);
	free(M.methods);
	M.methods = buf;
	M.summed_ms = kgb_now_ms();
}

static const char *const JOB_STATES[] = { "queued", "delayed", "assigning", "running", "settling" };

static void render(FILE *f)
{
	kgb_coord_t *c = M.c;

	fprintf(f, "# HELP kgb_build_info The coordinator's version.\n# TYPE kgb_build_info gauge\n"
	           "kgb_build_info{version=\"%s\"} 1\n",
	        KGB_VERSION);
	fprintf(f, "# HELP kgb_ready Whether the store is migrated and the sockets are bound.\n"
	           "# TYPE kgb_ready gauge\nkgb_ready %d\n",
	        c->ready ? 1 : 0);

	/* open jobs, from memory: exact and current */
	fputs("# HELP kgb_jobs Open jobs held by the coordinator, by platform and scheduling state.\n"
	      "# TYPE kgb_jobs gauge\n",
	      f);
	size_t ns = KGB_ARRAY_LEN(JOB_STATES);
	uint64_t *counts = kgb_xcalloc(c->nplats * ns + 1, sizeof *counts);
	for (size_t i = 0; i < c->jcap; i++) {
		const kgb_cjob_t *j = c->jmap ? c->jmap[i] : NULL;
		if (!j || !j->plat || (size_t)j->st >= ns)
			continue;
		for (size_t p = 0; p < c->nplats; p++)
			if (c->plats[p] == j->plat) {
				counts[p * ns + (size_t)j->st]++;
				break;
			}
	}
	for (size_t p = 0; p < c->nplats; p++)
		for (size_t s = 0; s < ns; s++) {
			fputs("kgb_jobs{platform=\"", f);
			kgb_metrics_label(f, c->plats[p]->name);
			fprintf(f, "\",state=\"%s\"} %" PRIu64 "\n", JOB_STATES[s], counts[p * ns + s]);
		}
	free(counts);

	/* every job in the store, by its stored state (refreshed every STORE_COUNT_MS) */
	fputs("# HELP kgb_jobs_stored Jobs in the store by platform and stored state (queued, running, done, "
	      "failed, cancelled); re-counted every 10 s.\n# TYPE kgb_jobs_stored gauge\n",
	      f);
	for (size_t i = 0; i < M.nstored; i++) {
		fputs("kgb_jobs_stored{platform=\"", f);
		kgb_metrics_label(f, M.stored[i].platform);
		fputs("\",state=\"", f);
		kgb_metrics_label(f, M.stored[i].state);
		fprintf(f, "\"} %" PRIu64 "\n", M.stored[i].n);
	}

	size_t camps[4] = { 0 };
	for (size_t i = 0; i < c->ncamps; i++)
		if ((size_t)c->camps[i]->state < 4)
			camps[c->camps[i]->state]++;
	fprintf(f, "# HELP kgb_campaigns Open campaigns held by the coordinator, by state.\n"
	           "# TYPE kgb_campaigns gauge\nkgb_campaigns{state=\"queued\"} %zu\nkgb_campaigns{state=\"running\"} %zu\n",
	        camps[KGB_CAMP_QUEUED], camps[KGB_CAMP_RUNNING]);

	/* workers and their devices */
	size_t alive = 0, lost = 0;
	for (size_t i = 0; i < c->nworkers; i++)
		c->workers[i]->alive ? alive++ : lost++;
	fprintf(f, "# HELP kgb_workers Workers known since start, by liveness (heartbeats within the lease).\n"
	           "# TYPE kgb_workers gauge\nkgb_workers{state=\"alive\"} %zu\nkgb_workers{state=\"lost\"} %zu\n",
	        alive, lost);
	kgb_rcheck_metrics(f, c);
	fputs("# HELP kgb_devices Devices of live workers, by platform.\n# TYPE kgb_devices gauge\n", f);
	for (size_t p = 0; p < c->nplats; p++) {
		size_t n = 0;
		for (size_t i = 0; i < c->nworkers; i++)
			for (size_t d = 0; c->workers[i]->alive && d < c->workers[i]->ndevs; d++)
				n += c->workers[i]->devs[d].plat == c->plats[p];
		fputs("kgb_devices{platform=\"", f);
		kgb_metrics_label(f, c->plats[p]->name);
		fprintf(f, "\"} %zu\n", n);
	}

	fprintf(f, "# HELP kgb_leases_expired_total Job leases that expired (the holder stopped renewing them).\n"
	           "# TYPE kgb_leases_expired_total counter\nkgb_leases_expired_total %" PRIu64 "\n",
	        c->counters.leases_expired);
	fprintf(f, "# HELP kgb_case_results_recorded_total Case results written to the store.\n"
	           "# TYPE kgb_case_results_recorded_total counter\nkgb_case_results_recorded_total %" PRIu64 "\n",
	        c->counters.results_recorded);
	unsigned w = M.ticks < RATE_WINDOW ? M.ticks : RATE_WINDOW;
	uint64_t then = M.results_hist[(M.ticks - w) % (RATE_WINDOW + 1)];
	fprintf(f, "# HELP kgb_case_results_per_second Case results recorded per second over the last %d s.\n"
	           "# TYPE kgb_case_results_per_second gauge\nkgb_case_results_per_second %.6g\n",
	        RATE_WINDOW, w ? (double)(c->counters.results_recorded - then) * 1000.0 / (w * SNAPSHOT_MS) : 0.0);

	/* the store */
	fputs("# HELP kgb_store_latency_seconds Round trip of a probe query (SELECT 1) through the coordinator's "
	      "store connection, queueing behind pending writes included; one probe a second.\n"
	      "# TYPE kgb_store_latency_seconds histogram\n",
	      f);
	for (size_t i = 0; i < NBUCKETS; i++)
		fprintf(f, "kgb_store_latency_seconds_bucket{le=\"%g\"} %" PRIu64 "\n", BUCKETS[i], M.probe_buckets[i]);
	fprintf(f, "kgb_store_latency_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\nkgb_store_latency_seconds_sum %.9g\n"
	           "kgb_store_latency_seconds_count %" PRIu64 "\n",
	        M.probe_count, M.probe_sum_s, M.probe_count);
	double inflight = M.probe_started_ms ? (kgb_now_ms() - M.probe_started_ms) / 1000.0 : 0;
	fprintf(f, "# HELP kgb_store_latency_last_seconds The last probe's round trip (or the age of a probe still "
	           "unanswered, when longer).\n# TYPE kgb_store_latency_last_seconds gauge\n"
	           "kgb_store_latency_last_seconds %.9g\n",
	        inflight > M.probe_last_s ? inflight : M.probe_last_s);
	fprintf(f, "# HELP kgb_store_probe_errors_total Probe queries that failed.\n"
	           "# TYPE kgb_store_probe_errors_total counter\nkgb_store_probe_errors_total %" PRIu64 "\n",
	        M.probe_errors);
	fprintf(f, "# HELP kgb_store_pending_queries Store statements queued or in flight.\n"
	           "# TYPE kgb_store_pending_queries gauge\nkgb_store_pending_queries %zu\n",
	        c->db ? kgb_db_pending(c->db) : 0);
	fprintf(f, "# HELP kgb_store_connected Whether the store connection is up.\n"
	           "# TYPE kgb_store_connected gauge\nkgb_store_connected %d\n",
	        c->db && kgb_db_connected(c->db) ? 1 : 0);
	if (M.methods)
		fputs(M.methods, f);
	uint64_t scrapes;
	pthread_mutex_lock(&M.mu);
	scrapes = M.scrapes;
	pthread_mutex_unlock(&M.mu);
	fprintf(f, "# HELP kgb_metrics_scrapes_total Requests for /metrics served.\n"
	           "# TYPE kgb_metrics_scrapes_total counter\nkgb_metrics_scrapes_total %" PRIu64 "\n",
	        scrapes);
}

static void on_timer(uv_timer_t *t)
{
	(void)t;
	kgb_coord_t *c = M.c;
	double now = kgb_now_ms();

	M.ticks++;
	M.results_hist[M.ticks % (RATE_WINDOW + 1)] = c->counters.results_recorded;
	if (c->db && c->ready && !c->stopping) {
		if (M.probe_started_ms == 0) {
			M.probe_started_ms = now;
			kgb_db_query(c->db, 0, probe_cb, NULL, "SELECT 1", 0, NULL);
		}
		if (!M.counting && now - M.counted_ms >= STORE_COUNT_MS) {
			M.counting = true;
			kgb_db_query(c->db, 0, count_cb, NULL,
			             "SELECT p.name, j.state, count(*) FROM jobs j JOIN platforms p ON p.id = j.platform_id "
			             "GROUP BY 1, 2 ORDER BY 1, 2",
			             0, NULL);
		}
		if (!M.summing && now - M.summed_ms >= METHODS_MS) {
			M.summing = true;
			kgb_db_query(c->db, 0, methods_cb, NULL,
			             "SELECT k.id, t.method, t.platform, t.operators, t.passed, t.accuracy, t.speedup, "
			             "t.speedup_low, t.speedup_high, t.fast_1_0, t.tokens, t.tokens_per_success "
			             "FROM (SELECT id FROM campaigns WHERE state IN ('queued', 'running') "
			             "OR finished_at > now() - interval '1 day' ORDER BY id DESC LIMIT 20"
			             ") k CROSS JOIN LATERAL kgb_table_summary(ARRAY[k.id], (SELECT coalesce(jsonb_agg(DISTINCT "
			             "jsonb_build_object('op', c.op, 'source', '')), '[]') FROM candidates c "
			             "WHERE c.campaign_id = k.id)) t WHERE t.source = 'all' ORDER BY k.id, t.method, t.platform",
			             0, NULL);
		}
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		log_warn("metrics: open_memstream: %s", strerror(errno));
		return;
	}
	render(f);
	fclose(f);
	pthread_mutex_lock(&M.mu);
	char *old = M.text;
	M.text = buf;
	M.text_len = len;
	pthread_mutex_unlock(&M.mu);
	free(old);
}

static int parse_endpoint(const char *ep, struct sockaddr_in *sa, char *err, size_t errlen)
{
	const char *colon = ep ? strrchr(ep, ':') : NULL;
	char host[64];
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	if (!colon || colon == ep || (size_t)(colon - ep) >= sizeof host) {
		snprintf(err, errlen, "KGB_METRICS_ENDPOINT: '%s' is not HOST:PORT (e.g. 127.0.0.1:9464)", ep ? ep : "");
		return -1;
	}
	memcpy(host, ep, (size_t)(colon - ep));
	host[colon - ep] = '\0';
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port > 65535) {
		snprintf(err, errlen, "KGB_METRICS_ENDPOINT: '%s': port '%s' is not a number in [0, 65535]", ep, colon + 1);
		return -1;
	}
	if (strcmp(host, "localhost") == 0)
		kgb_strlcpy(host, "127.0.0.1", sizeof host);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		snprintf(err, errlen, "KGB_METRICS_ENDPOINT: '%s': host '%s' is not an IPv4 address or localhost", ep,
		         host);
		return -1;
	}
	sa->sin_port = htons((uint16_t)port);
	return 0;
}

int kgb_metrics_start(kgb_coord_t *c, const char *endpoint, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	if (parse_endpoint(endpoint, &sa, err, errlen) != 0)
		return -1;
	M.httpd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, answer, NULL,
	                           MHD_OPTION_EXTERNAL_LOGGER, httpd_log, NULL, MHD_OPTION_SOCK_ADDR,
	                           (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
	                           MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!M.httpd) {
		snprintf(err, errlen, "KGB_METRICS_ENDPOINT: cannot serve HTTP on '%s' (address in use or not local?)",
		         endpoint);
		return -1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(M.httpd, MHD_DAEMON_INFO_BIND_PORT);
	unsigned port = di ? di->port : ntohs(sa.sin_port);
	char addr[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof addr);
	M.c = c;
	M.on = true;
	uv_timer_init(c->loop, &M.timer);
	on_timer(&M.timer);
	uv_timer_start(&M.timer, on_timer, SNAPSHOT_MS, SNAPSHOT_MS);
	log_info("metrics: Prometheus text served at http://%s:%u/metrics%s", addr, port,
	         sa.sin_addr.s_addr == htonl(INADDR_LOOPBACK) ? " (loopback only)" : "");
	return 0;
}

static void timer_closed(uv_handle_t *h)
{
	(void)h;
}

void kgb_metrics_stop(void)
{
	if (!M.on)
		return;
	M.on = false;
	MHD_stop_daemon(M.httpd);
	M.httpd = NULL;
	uv_timer_stop(&M.timer);
	if (!uv_is_closing((uv_handle_t *)&M.timer))
		uv_close((uv_handle_t *)&M.timer, timer_closed);
	free_stored();
	free(M.methods);
	M.methods = NULL;
	pthread_mutex_lock(&M.mu);
	free(M.text);
	M.text = NULL;
	pthread_mutex_unlock(&M.mu);
}
