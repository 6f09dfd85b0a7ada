/* The CLI socket's operations on the cluster (docs/cli.md, "Operating the cluster"):
 * retire a platform, drain and resume a worker, hold and release a campaign, and the
 * view of one job (or of a campaign's jobs). Every request gets one reply with the
 * request's seq. */
#include "coord.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

typedef struct ops_ctx {
	KGB_CREQ_MEMBERS;
	uint64_t id;              /* campaign (hold, release) or job */
	int plat_id;              /* retire */
	bool on;                  /* hold / drain (true) or release / resume (false) */
	char *msg;                /* the answer's message once the store agreed */
} ops_ctx_t;

static void octx_free(ops_ctx_t *x)
{
	free(x->msg);
	free(x);
}

static void osend(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, Kgb__Envelope *env, const char *what)
{
	env->seq = seq;
	if (c->csock && kgb_zsock_send(c->csock, peer, env) != 0)
		log_warn("cli peer=%s: %s not delivered", kgb_zpeer_str(peer), what);
}

static void admin_reply(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, const char *error, const char *msg,
                        uint32_t jobs)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__AdminReply ar = KGB__ADMIN_REPLY__INIT;
	ar.ok = error == NULL;
	ar.error = (char *)(error ? error : "");
	ar.message = (char *)(msg ? msg : "");
	ar.jobs = jobs;
	env.body_case = KGB__ENVELOPE__BODY_ADMIN_REPLY;
	env.admin_reply = &ar;
	osend(c, peer, seq, &env, "AdminReply");
}

/* The answer to a request whose store statement changed one row (or none). */
static void flag_cb(PGresult *res, const char *err, void *arg)
{
	ops_ctx_t *x = arg;
	if (err)
		admin_reply(x->c, &x->peer, x->seq, err, NULL, 0);
	else
		admin_reply(x->c, &x->peer, x->seq, NULL, x->msg, (uint32_t)atoi(PQcmdTuples(res)));
	octx_free(x);
}

/* ---- hold, release ---- */

static void on_hold(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, uint64_t id, bool hold)
{
	kgb_ccamp_t *camp = kgb_coord_camp(c, id);
	char msg[300];
	if (!camp || (camp->state != KGB_CAMP_QUEUED && camp->state != KGB_CAMP_RUNNING)) {
		snprintf(msg, sizeof msg, "campaign %" PRIu64 " is not open (no such campaign, or it is done or cancelled)",
		         id);
		admin_reply(c, peer, seq, msg, NULL, 0);
		return;
	}
	ops_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, seq);
	if (camp->held == hold)
		x->msg = kgb_xasprintf("campaign %" PRIu64 " is already %s", id, hold ? "held" : "released");
	else if (hold)
		x->msg = kgb_xasprintf("campaign %" PRIu64 " held: its queued jobs get no worker until `kgb release %" PRIu64
		                       "`; running ones finish",
		                       id, id);
	else
		x->msg = kgb_xasprintf("campaign %" PRIu64 " released: its queued jobs go to workers again", id);
	/* memory first: no assignment from now on (the store agrees below, and a restart
	 * reads it back) */
	camp->held = hold;
	log_info("campaign=%" PRIu64 " %s by %s", id, hold ? "held" : "released", peer->user[0] ? peer->user : "cli");
	if (!hold)
		kgb_coord_kick(c);
	const char *p[2] = {kgb_coord_u64(id), hold ? "true" : "false"};
	kgb_db_query(c->db, KGB_DB_RETRY, flag_cb, x, "UPDATE campaigns SET held = $2::boolean WHERE id = $1", 2, p);
}

/* ---- worker drain, resume ---- */

static void on_drain_worker(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, const char *name, bool drain)
{
	json_t *ids = json_array();
	uint32_t running = 0;
	char known[600] = "";
	for (size_t i = 0; i < c->nworkers; i++) {
		kgb_cworker_t *w = c->workers[i];
		size_t k = strlen(known);
		snprintf(known + k, sizeof known - k, "%s%s", k ? ", " : "", w->name);
		if (strcmp(w->name, name) != 0 && strcmp(w->wid, name) != 0)
			continue;
		w->drained = drain;
		for (size_t d = 0; d < w->ndevs; d++)
			running += w->devs[d].running;
		json_array_append_new(ids, json_integer((json_int_t)w->db_id));
	}
	size_t n = json_array_size(ids);
	if (n == 0) {
		char msg[800];
		snprintf(msg, sizeof msg, "no worker named '%s' (known: %s)", name, known[0] ? known : "none");
		admin_reply(c, peer, seq, msg, NULL, 0);
		json_decref(ids);
		return;
	}
	ops_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, seq);
	if (drain)
		x->msg = kgb_xasprintf("worker %s drained: no new job goes to it; %u running job(s) finish there. "
		                       "`kgb worker resume %s` takes it back",
		                       name, running, name);
	else
		x->msg = kgb_xasprintf("worker %s resumed: it takes jobs again", name);
	log_info("worker name=%s %s (%zu worker(s)) by %s", name, drain ? "drained" : "resumed", n,
	         peer->user[0] ? peer->user : "cli");
	if (!drain)
		kgb_coord_kick(c);
	char *js = json_dumps(ids, JSON_COMPACT);
	json_decref(ids);
	const char *p[2] = {js, drain ? "true" : "false"};
	kgb_db_query(c->db, KGB_DB_RETRY, flag_cb, x,
	             "UPDATE workers SET drained = $2::boolean "
	             "WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb))",
	             2, p);
	free(js);
}

/* ---- platform retire ---- */

/* Rows: campaign id, jobs ended; memory follows the store. */
static void retire_cb(PGresult *res, const char *err, void *arg)
{
	ops_ctx_t *x = arg;
	kgb_coord_t *c = x->c;
	if (err) {
		admin_reply(c, &x->peer, x->seq, err, NULL, 0);
		octx_free(x);
		return;
	}
	uint32_t jobs = 0;
	for (int r = 0; r < PQntuples(res); r++) {
		kgb_ccamp_t *camp = kgb_coord_camp(c, kgb_coord_pq_u64(PQgetvalue(res, r, 0)));
		jobs += (uint32_t)atoi(PQgetvalue(res, r, 1));
		if (camp)
			kgb_coord_camp_drop_platforms(c, camp, &x->plat_id, 1);
	}
	char *msg = kgb_xasprintf("%s; %u open job(s) of %d campaign(s) for every platform ended there", x->msg, jobs,
	                          PQntuples(res));
	admin_reply(c, &x->peer, x->seq, NULL, msg, jobs);
	log_info("%s", msg);
	free(msg);
	octx_free(x);
}

static void on_retire(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, const char *name)
{
	kgb_cplat_t *p = kgb_coord_plat_by_name(c, name);
	char msg[800];
	if (!p) {
		char known[600] = "";
		for (size_t i = 0; i < c->nplats; i++) {
			size_t k = strlen(known);
			snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "", c->plats[i]->name);
		}
		snprintf(msg, sizeof msg, "unknown platform '%s' (known: %s)", name, known[0] ? known : "none");
		admin_reply(c, peer, seq, msg, NULL, 0);
		return;
	}
	/* a platform a live worker offers is not gone */
	char live[400] = "";
	for (size_t i = 0; i < c->nworkers; i++) {
		const kgb_cworker_t *w = c->workers[i];
		bool on = false;
		for (size_t k = 0; k < w->ndevs && !on; k++)
			on = w->devs[k].plat == p;
		if (w->alive && on) {
			size_t k = strlen(live);
			snprintf(live + k, sizeof live - k, "%s%s", k ? ", " : "", w->name);
		}
	}
	if (live[0]) {
		snprintf(msg, sizeof msg,
		         "platform %s has live worker(s) (%s): stop them first (a worker that registers it brings a "
		         "retired platform back); `kgb worker drain NAME` lets their running jobs finish",
		         name, live);
		admin_reply(c, peer, seq, msg, NULL, 0);
		return;
	}
	ops_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, seq);
	x->plat_id = p->id;
	x->msg = kgb_xasprintf("platform %s retired%s: campaigns for every platform leave it out until a worker "
	                       "registers it again",
	                       name, p->retired ? " (it already was)" : "");
	p->retired = true;
	/* the open jobs of "all" campaigns there end as a drain ends them */
	json_t *ids = json_array();
	for (size_t i = 0; i < c->ncamps; i++) {
		const kgb_ccamp_t *camp = c->camps[i];
		if (camp->all_platforms && (camp->state == KGB_CAMP_QUEUED || camp->state == KGB_CAMP_RUNNING))
			json_array_append_new(ids, json_integer((json_int_t)camp->id));
	}
	char *js = json_dumps(ids, JSON_COMPACT);
	json_decref(ids);
	const char *pp[2] = {kgb_coord_i64(p->id), js};
	kgb_db_query(c->db, KGB_DB_RETRY, retire_cb, x,
	             "WITH r AS (UPDATE platforms SET retired_at = COALESCE(retired_at, now()) WHERE id = $1::int), "
	             "j AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL "
	             "WHERE is_open AND platform_id = $1::int "
	             "AND campaign_id IN (SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb)) "
	             "RETURNING campaign_id) "
	             "SELECT campaign_id, count(*) FROM j GROUP BY campaign_id ORDER BY campaign_id",
	             2, pp);
	free(js);
}

/* ---- kgb job ---- */

static void job_info_cb(PGresult *res, const char *err, void *arg)
{
	ops_ctx_t *x = arg;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__JobInfoReply jr = KGB__JOB_INFO_REPLY__INIT;
	int n = err ? 0 : PQntuples(res);
	Kgb__JobInfo *ji = kgb_xcalloc((size_t)n + 1, sizeof *ji);
	Kgb__JobInfo **jp = kgb_xcalloc((size_t)n + 1, sizeof *jp);
	char msg[80];
	jr.ok = !err;
	jr.error = (char *)(err ? err : "");
	if (!err && n == 0 && x->on) {
		snprintf(msg, sizeof msg, "no job %" PRIu64, x->id);
		jr.ok = false;
		jr.error = msg;
	}
	for (int r = 0; r < n; r++) {
		Kgb__JobInfo *j = &ji[r];
		kgb__job_info__init(j);
		int k = 0;
#define COL() PQgetvalue(res, r, k++)
		j->job_id = kgb_coord_pq_u64(COL());
		j->campaign_id = kgb_coord_pq_u64(COL());
		j->campaign = COL();
		j->method = COL();
		j->op = COL();
		j->platform = COL();
		j->case_lo = (uint32_t)atoi(COL());
		j->case_hi = (uint32_t)atoi(COL());
		j->state = COL();
		j->attempts = (uint32_t)atoi(COL());
		j->epoch = kgb_coord_pq_u64(COL());
		j->worker = COL();
		j->device = atoi(COL());
		j->created_unix = (int64_t)kgb_coord_pq_f64(COL());
		j->assigned_unix = (int64_t)kgb_coord_pq_f64(COL());
		j->finished_unix = (int64_t)kgb_coord_pq_f64(COL());
		j->wall_ms = kgb_coord_pq_f64(COL());
		j->compile_ms = kgb_coord_pq_f64(COL());
		j->device_ms = kgb_coord_pq_f64(COL());
		j->last_error = COL();
		j->log = COL();
		j->verdicts = COL();
		j->cases_recorded = (uint32_t)atoi(COL());
		j->retry_in_s = kgb_coord_pq_f64(COL());
		j->campaign_held = COL()[0] == 't';
#undef COL
		jp[r] = j;
	}
	/* a campaign's list asks for one more row than it shows */
	size_t shown = (size_t)n;
	if (!x->on && x->plat_id > 0 && shown > (size_t)x->plat_id) {
		shown = (size_t)x->plat_id;
		jr.truncated = true;
	}
	jr.n_jobs = shown;
	jr.jobs = jp;
	env.body_case = KGB__ENVELOPE__BODY_JOB_INFO_REPLY;
	env.job_info_reply = &jr;
	osend(x->c, &x->peer, x->seq, &env, "JobInfoReply");
	free(jp);
	free(ji);
	octx_free(x);
}

static void on_job_info(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, const Kgb__JobInfoRequest *q)
{
	ops_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, seq);
	x->on = q->job_id != 0;   /* one job, with its log */
	x->id = q->job_id ? q->job_id : q->campaign_id;
	x->plat_id = (int)(q->limit ? KGB_MIN(q->limit, 100000u) : 1000u); /* rows shown */
	char lim[16];
	snprintf(lim, sizeof lim, "%d", x->plat_id + 1);
	const char *p[5] = {kgb_coord_u64(q->job_id), kgb_coord_u64(q->campaign_id),
	                    q->state && q->state[0] ? q->state : NULL, lim, x->on ? "true" : "false"};
	kgb_db_query(c->db, KGB_DB_RETRY, job_info_cb, x,
	             "SELECT j.id, j.campaign_id, k.name, c.method, c.op, p.name, j.case_lo, j.case_hi, j.state, "
	             "j.attempts, j.epoch, "
	             /* the holder, else the worker its recorded cases came from */
	             "COALESCE(w.name, (SELECT w2.name FROM results r JOIN workers w2 ON w2.id = r.worker_id "
	             "WHERE r.job_id = j.id LIMIT 1), ''), COALESCE(j.device_idx, -1), "
	             "EXTRACT(EPOCH FROM j.created_at)::float8, COALESCE(EXTRACT(EPOCH FROM j.assigned_at)::float8, 0), "
	             "COALESCE(EXTRACT(EPOCH FROM j.finished_at)::float8, 0), COALESCE(j.wall_ms, 0), "
	             "COALESCE(j.compile_ms, 0), COALESCE(j.device_ms, 0), COALESCE(j.last_error, ''), "
	             "CASE WHEN $5::boolean THEN COALESCE(j.log, '') ELSE '' END, "
	             "COALESCE((SELECT string_agg(v.verdict || ' ' || v.n, ', ' ORDER BY v.n DESC, v.verdict) "
	             "FROM (SELECT verdict, count(*) AS n FROM results WHERE job_id = j.id GROUP BY verdict) v), ''), "
	             "(SELECT count(*) FROM results WHERE job_id = j.id), "
	             "GREATEST(0, COALESCE(EXTRACT(EPOCH FROM (j.not_before - now())), 0))::float8, k.held "
	             "FROM jobs j JOIN campaigns k ON k.id = j.campaign_id JOIN candidates c ON c.id = j.candidate_id "
	             "JOIN platforms p ON p.id = j.platform_id LEFT JOIN workers w ON w.id = j.worker_id "
	             "WHERE CASE WHEN $1::bigint <> 0 THEN j.id = $1::bigint "
	             "ELSE j.campaign_id = $2::bigint AND ($3::text IS NULL OR j.state = $3::text) END "
	             "ORDER BY j.id LIMIT $4::int",
	             5, p);
}

/* ---- dispatch ---- */

/* See coord.h. */
bool kgb_coord_on_ops_msg(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	if (env->body_case == KGB__ENVELOPE__BODY_JOB_INFO) {
		on_job_info(c, peer, env->seq, env->job_info);
		return true;
	}
	if (env->body_case != KGB__ENVELOPE__BODY_ADMIN)
		return false;
	const Kgb__AdminRequest *q = env->admin;
	const char *a = q->action ? q->action : "";
	const char *name = q->name ? q->name : "";
	bool camp_op = strcmp(a, "hold") == 0 || strcmp(a, "release") == 0;
	/* the cluster's platforms and workers are an admin's (a campaign's hold, its
	 * owner's too: cproto.c checks the owner before this is called) */
	if (!camp_op && peer->authenticated && !peer->admin) {
		char msg[300];
		snprintf(msg, sizeof msg, "user '%s' may not %s: an admin's operation (role=admin on its key's line of the "
		                          "CLI allowlist)", peer->user, a);
		log_warn("cli peer=%s user=%s: %s refused: not an admin", kgb_zpeer_str(peer), peer->user, a);
		admin_reply(c, peer, env->seq, msg, NULL, 0);
		return true;
	}
	if (camp_op)
		on_hold(c, peer, env->seq, q->campaign_id, strcmp(a, "hold") == 0);
	else if (!name[0])
		admin_reply(c, peer, env->seq, "AdminRequest.name is empty", NULL, 0);
	else if (strcmp(a, "retire-platform") == 0)
		on_retire(c, peer, env->seq, name);
	else if (strcmp(a, "drain-worker") == 0 || strcmp(a, "resume-worker") == 0)
		on_drain_worker(c, peer, env->seq, name, strcmp(a, "drain-worker") == 0);
	else {
		char msg[200];
		snprintf(msg, sizeof msg, "unknown action '%.64s' (retire-platform, drain-worker, resume-worker, hold, "
		                          "release)", a);
		admin_reply(c, peer, env->seq, msg, NULL, 0);
	}
	return true;
}
