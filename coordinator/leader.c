/* One active coordinator per store: see leader.h and migration 0013. */
#include "leader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "coord.h"
#include "log.h"
#include "util.h"

struct kgb_leader {
	kgb_coord_t *c;
	kgb_leader_cbs_t cbs;
	kgb_db_t *db;            /* its own connection: renewals never wait behind writes */
	uv_timer_t timer;
	char name[256];          /* this coordinator in the leader row */
	char app[64];            /* application_name of this process's sessions */
	uint32_t lease_ms;
	bool force;
	bool active, over, releasing, inflight, told_standby, suspended;
	uint64_t epoch;
	double last_renew_ms;    /* when the last renewal that succeeded was sent */
	char holder[256], wep[256], cep[256]; /* the active one, as a standby last read it */
};

static char not_active_buf[900];

static void on_timer(uv_timer_t *t);

/* The term ended: stop, and tell the coordinator once. */
static void term_over(kgb_leader_t *l, const char *why)
{
	if (l->over)
		return;
	l->over = true;
	l->active = false;
	uv_timer_stop(&l->timer);
	log_error("leader: %s: stepping down (this process writes nothing more)", why);
	l->cbs.lost(l->c, why);
}

/* A write of the main connection the store's fence refused. */
static void on_db_error(kgb_db_t *db, const char *err, void *arg)
{
	(void)db;
	kgb_leader_t *l = arg;
	if (l->active && strstr(err, "kgb fenced"))
		term_over(l, "the store refused a write: another coordinator took over");
}

static void take_cb(PGresult *res, const char *err, void *arg)
{
	kgb_leader_t *l = arg;
	l->inflight = false;
	if (l->over || l->releasing)
		return;
	if (err || PQntuples(res) != 1) {
		log_warn("leader: trying to take the lead: %s", err ? err : "no row");
		return;
	}
	uint64_t epoch = kgb_coord_pq_u64(PQgetvalue(res, 0, 0));
	bool taken = PQgetvalue(res, 0, 4)[0] == 't';
	if (!taken) {
		if (!l->told_standby && l->cbs.standby)
			l->cbs.standby(l->c);
		l->told_standby = true;
		if (strcmp(l->holder, PQgetvalue(res, 0, 1)) != 0)
			log_info("leader: standby; the active coordinator is %s (workers %s, cli %s, leader epoch %" PRIu64
			         ")",
			         PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3), epoch);
		kgb_strlcpy(l->holder, PQgetvalue(res, 0, 1), sizeof l->holder);
		kgb_strlcpy(l->wep, PQgetvalue(res, 0, 2), sizeof l->wep);
		kgb_strlcpy(l->cep, PQgetvalue(res, 0, 3), sizeof l->cep);
		return;
	}
	l->active = true;
	l->epoch = epoch;
	l->last_renew_ms = kgb_now_ms();
	log_info("leader: this coordinator is active now (leader epoch %" PRIu64 "%s%s)", epoch,
	         l->holder[0] ? ", after " : "", l->holder);
	/* from now on the main connection writes under this epoch, on every connection */
	char *sql = kgb_xasprintf("SET application_name = '%s'; SELECT set_config('kgb.epoch', '%" PRIu64 "', false)",
	                          l->app, epoch);
	kgb_db_set_session(l->c->db, sql);
	free(sql);
	uv_timer_start(&l->timer, on_timer, l->lease_ms / 3, l->lease_ms / 3);
	l->cbs.active(l->c, epoch);
}

static void renew_cb(PGresult *res, const char *err, void *arg)
{
	double *sent = arg;
	kgb_leader_t *l = *(kgb_leader_t **)(sent + 1);
	double at = sent[0];
	free(sent);
	l->inflight = false;
	if (l->over || l->releasing)
		return;
	if (err) {
		log_warn("leader: renewing the lead (epoch %" PRIu64 "): %s", l->epoch, err);
		return;
	}
	if (PQntuples(res) == 0) {
		char why[160];
		snprintf(why, sizeof why, "the store's leader epoch is not %" PRIu64 " any more", l->epoch);
		term_over(l, why);
		return;
	}
	if (at - l->last_renew_ms > l->lease_ms)
		log_warn("leader: the lead was renewed %.0f ms after the previous renewal, over the lease of %u ms",
		         at - l->last_renew_ms, l->lease_ms);
	l->last_renew_ms = at;
	if (l->suspended) {
		l->suspended = false;
		log_info("leader: the lead is renewed (epoch %" PRIu64 "): serving again", l->epoch);
		l->cbs.serving(l->c, true);
	}
}

static void on_timer(uv_timer_t *t)
{
	kgb_leader_t *l = t->data;
	if (l->over || l->releasing)
		return;
	if (l->active && !l->suspended && kgb_now_ms() - l->last_renew_ms > l->lease_ms) {
		l->suspended = true;
		log_warn("leader: the lead was not renewed for %.0f ms, over its lease of %u ms: not serving until it is "
		         "(a standby may have taken over)",
		         kgb_now_ms() - l->last_renew_ms, l->lease_ms);
		l->cbs.serving(l->c, false);
	}
	if (l->inflight)
		return;
	l->inflight = true;
	char lease[16];
	snprintf(lease, sizeof lease, "%u", l->lease_ms);
	if (!l->active) {
		const kgb_coord_t *c = l->c;
		const char *p[6] = {l->name, l->app, c->cfg.worker_endpoint, c->cfg.cli_endpoint, lease,
		                    l->force ? "true" : "false"};
		kgb_db_query(l->db, 0, take_cb, l,
		             "SELECT epoch, holder, worker_endpoint, cli_endpoint, taken "
		             "FROM kgb_leader_take($1, $2, $3, $4, $5::int, $6::boolean)",
		             6, p);
		return;
	}
	double *sent = kgb_xmalloc(sizeof(double) + sizeof(kgb_leader_t *));
	sent[0] = kgb_now_ms();
	*(kgb_leader_t **)(sent + 1) = l;
	const char *p[3] = {kgb_coord_u64(l->epoch), lease, l->app};
	kgb_db_query(l->db, 0, renew_cb, sent,
	             "UPDATE coord_leader SET lease_until = clock_timestamp() + $2::int * interval '1 millisecond' "
	             "WHERE epoch = $1::bigint AND app = $3 RETURNING epoch",
	             3, p);
}

kgb_leader_t *kgb_leader_start(kgb_coord_t *c, const char *conninfo, const char *name, uint32_t lease_ms, bool force,
                               const kgb_leader_cbs_t *cbs)
{
	kgb_leader_t *l = kgb_xcalloc(1, sizeof *l);
	l->c = c;
	l->cbs = *cbs;
	l->lease_ms = lease_ms;
	l->force = force;
	kgb_strlcpy(l->name, name, sizeof l->name);
	uint32_t r = 0;
	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		r = (uint32_t)kgb_wall_ms();
	/* unique per process: a takeover ends exactly this process's sessions */
	snprintf(l->app, sizeof l->app, "kgb-coordinator-%d-%08x", (int)getpid(), r);
	char *sql = kgb_xasprintf("SET application_name = '%s'", l->app);
	kgb_db_set_session(c->db, sql);
	l->db = kgb_db_new(c->loop, conninfo, NULL, NULL);
	kgb_db_set_session(l->db, sql);
	free(sql);
	kgb_db_on_error(c->db, on_db_error, l);
	uv_timer_init(c->loop, &l->timer);
	l->timer.data = l;
	uint64_t poll = KGB_MAX(lease_ms / 6, 50u);
	uv_timer_start(&l->timer, on_timer, 0, poll);
	log_info("leader: taking part as '%s' (lease %u ms%s)", l->name, lease_ms,
	         force ? ", embedded store: the lead is taken at once" : "");
	return l;
}

static void release_cb(PGresult *res, const char *err, void *arg)
{
	kgb_leader_t *l = arg;
	l->inflight = false;
	if (err)
		log_warn("leader: handing the lead back: %s (a standby takes over when the lease runs out)", err);
	else if (PQntuples(res) > 0)
		log_info("leader: lead handed back (epoch %" PRIu64 ")", l->epoch);
}

void kgb_leader_release(kgb_leader_t *l)
{
	if (!l || l->releasing)
		return;
	l->releasing = true;
	uv_timer_stop(&l->timer);
	if (!l->active || l->over)
		return;
	l->active = false;
	l->inflight = true;
	const char *p[2] = {kgb_coord_u64(l->epoch), l->app};
	kgb_db_query(l->db, 0, release_cb, l,
	             "UPDATE coord_leader SET lease_until = '-infinity' WHERE epoch = $1::bigint AND app = $2 "
	             "RETURNING epoch",
	             2, p);
}

bool kgb_leader_released(const kgb_leader_t *l)
{
	return !l || kgb_db_pending(l->db) == 0 || !kgb_db_connected(l->db);
}

static void timer_closed(uv_handle_t *h)
{
	free(h->data);
}

void kgb_leader_close(kgb_leader_t **pl)
{
	kgb_leader_t *l = *pl;
	if (!l)
		return;
	*pl = NULL;
	if (l->c->db)
		kgb_db_on_error(l->c->db, NULL, NULL);
	kgb_db_close(&l->db);
	uv_timer_stop(&l->timer);
	uv_close((uv_handle_t *)&l->timer, timer_closed);
}

const char *kgb_leader_not_active(const kgb_leader_t *l)
{
	if (l && l->suspended)
		snprintf(not_active_buf, sizeof not_active_buf,
		         "this coordinator could not renew its lead (leader epoch %" PRIu64 ") in the store; another one "
		         "may have taken over",
		         l->epoch);
	else if (l && l->active)
		snprintf(not_active_buf, sizeof not_active_buf,
		         "this coordinator took over (leader epoch %" PRIu64 ") and is still loading its state; try again "
		         "shortly",
		         l->epoch);
	else if (l && l->holder[0])
		snprintf(not_active_buf, sizeof not_active_buf,
		         "this coordinator is a standby, not active; the active one is %s (workers %s, cli %s)", l->holder,
		         l->wep, l->cep);
	else
		snprintf(not_active_buf, sizeof not_active_buf, "this coordinator is not active (starting, or a standby)");
	return not_active_buf;
}
