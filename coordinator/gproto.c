/* The CLI socket's messages of `kgb generate` (docs/methods.md): open a run, record
 * its answered samples, rounds and candidate links, and read each sample back with
 * its verdicts. The tables are those of migration 0010 (docs/store.md). Every request
 * gets one reply with the request's seq. */
#include "coord.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "log.h"
#include "util.h"

typedef struct gen_ctx {
	KGB_CREQ_MEMBERS;
	uint64_t run_id;
	int32_t round;
	uint32_t max_failures;
	int pending;              /* record: statements still to answer */
	char *error;              /* record: the first statement's error */
	Kgb__GenVerdictsReply *vr;
	Kgb__GenOpenReply *orep;
} gen_ctx_t;

static void gsend(gen_ctx_t *x, Kgb__Envelope *env, const char *what)
{
	env->seq = x->seq;
	if (x->c->csock && kgb_zsock_send(x->c->csock, &x->peer, env) != 0)
		log_warn("cli peer=%s: %s not delivered", kgb_zpeer_str(&x->peer), what);
}

static char *dup_col(PGresult *res, int r, int col)
{
	return kgb_xstrdup(PQgetisnull(res, r, col) ? "" : PQgetvalue(res, r, col));
}

static int64_t i64_col(PGresult *res, int r, int col)
{
	return PQgetisnull(res, r, col) ? -1 : strtoll(PQgetvalue(res, r, col), NULL, 10);
}

static Kgb__GenUsage *usage_cols(PGresult *res, int r, int col)
{
	Kgb__GenUsage *u = kgb_xcalloc(1, sizeof *u);
	kgb__gen_usage__init(u);
	u->input = i64_col(res, r, col);
	u->output = i64_col(res, r, col + 1);
	u->cache_write = i64_col(res, r, col + 2);
	u->cache_read = i64_col(res, r, col + 3);
	u->reasoning = i64_col(res, r, col + 4);
	return u;
}

/* ---- open ---- */

static void free_rounds(Kgb__GenRound **r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i]);
	free(r);
}

/* The run's rounds from a JSON array [{"round": R, "campaign_id": ID}, ...]. */
static Kgb__GenRound **parse_rounds(const char *js, size_t *n)
{
	json_t *a = json_loads(js, 0, NULL);
	Kgb__GenRound **out = kgb_xcalloc(json_array_size(a) + 1, sizeof *out);
	*n = 0;
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		Kgb__GenRound *g = kgb_xcalloc(1, sizeof *g);
		kgb__gen_round__init(g);
		g->round = (uint32_t)json_integer_value(json_object_get(e, "round"));
		g->campaign_id = (uint64_t)json_integer_value(json_object_get(e, "campaign_id"));
		out[(*n)++] = g;
	}
	json_decref(a);
	return out;
}

static void open_cb(PGresult *res, const char *err, void *arg)
{
	gen_ctx_t *x = arg;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__GenOpenReply r = KGB__GEN_OPEN_REPLY__INIT;
	char msg[128];
	if (err) {
		r.error = (char *)err;
	} else if (PQntuples(res) != 1) {
		snprintf(msg, sizeof msg, "no generation run %" PRIu64, x->run_id);
		r.error = msg;
	} else {
		r.ok = true;
		r.run_id = kgb_coord_pq_u64(PQgetvalue(res, 0, 0));
		r.params_json = PQgetvalue(res, 0, 1);
		r.created = PQgetvalue(res, 0, 2)[0] == 't';
		r.rounds = parse_rounds(PQgetvalue(res, 0, 3), &r.n_rounds);
		r.method_usage = usage_cols(res, 0, 4);
		log_info("generate run=%" PRIu64 " %s", r.run_id, r.created ? "created" : "opened");
	}
	env.body_case = KGB__ENVELOPE__BODY_GEN_OPEN_REPLY;
	env.gen_open_reply = &r;
	gsend(x, &env, "GenOpenReply");
	free_rounds(r.rounds, r.n_rounds);
	free(r.method_usage);
	free(x);
}

/* The run's columns the open reply needs, from a relation r of gen_runs rows. A round
 * whose campaign was submitted but not recorded (the client was killed in between) is
 * found by the campaign's name, generate-run<ID>-round<R> (cmd_generate.c). */
#define OPEN_COLS                                                                                                 \
	"r.id, r.params::text, %s, "                                                                                    \
	"(SELECT coalesce(json_agg(json_build_object('round', x.round, 'campaign_id', x.cid) ORDER BY x.round), "      \
	"'[]')::text FROM (SELECT DISTINCT ON (round) round, cid FROM ("                                                 \
	"SELECT g.round, g.campaign_id AS cid, 0 AS pref FROM gen_rounds g "                                            \
	"WHERE g.run_id = r.id AND g.campaign_id IS NOT NULL UNION ALL "                                                \
	"SELECT substring(c.name FROM '-round([0-9]+)$')::int, c.id, 1 FROM campaigns c "                               \
	"WHERE c.name LIKE 'generate-run' || r.id || '-round%%') y ORDER BY round, pref, cid) x), "                    \
	"u.i, u.o, u.cw, u.cr, u.rs FROM %s CROSS JOIN LATERAL (SELECT coalesce(sum(s.input_tokens), 0) AS i, "      \
	"coalesce(sum(s.output_tokens), 0) AS o, coalesce(sum(s.cache_write_tokens), 0) AS cw, "                       \
	"coalesce(sum(s.cache_read_tokens), 0) AS cr, coalesce(sum(s.reasoning_tokens), 0) AS rs "                     \
	"FROM gen_samples s JOIN gen_runs m ON m.id = s.run_id WHERE m.method = r.method) u"

static void on_gen_open(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__GenOpenRequest *q = env->gen_open;
	gen_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->run_id = q->run_id;
	if (q->run_id) {
		char sql[1024];
		snprintf(sql, sizeof sql, "SELECT " OPEN_COLS " WHERE r.id = $1", "false", "gen_runs r");
		const char *p[1] = {kgb_coord_u64(q->run_id)};
		kgb_db_query(c->db, KGB_DB_RETRY, open_cb, x, sql, 1, p);
		return;
	}
	char *owner = kgb_coord_utf8(q->owner), *method = kgb_coord_utf8(q->method), *model = kgb_coord_utf8(q->model),
	     *url = kgb_coord_utf8(q->base_url);
	const char *p[7] = {q->run_key ? q->run_key : "", method, model, q->api ? q->api : "", url,
	                    q->params_json && *q->params_json ? q->params_json : "{}", owner};
	char sql[2048];
	/* made once per key: a second open of the same key (a re-run of the same command)
	 * finds the first's row */
	snprintf(sql, sizeof sql,
	         "WITH n AS (INSERT INTO gen_runs (run_key, method, model, api, base_url, params, owner) "
	         "VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) ON CONFLICT (run_key) DO NOTHING RETURNING *), "
	         "r AS (SELECT * FROM n UNION ALL SELECT * FROM gen_runs WHERE run_key = $1) "
	         "SELECT " OPEN_COLS " LIMIT 1",
	         "EXISTS (SELECT 1 FROM n)", "(SELECT * FROM r LIMIT 1) r");
	kgb_db_query(c->db, KGB_DB_RETRY, open_cb, x, sql, 7, p);
	free(owner);
	free(method);
	free(model);
	free(url);
}

/* ---- record ---- */

static void record_cb(PGresult *res, const char *err, void *arg)
{
	gen_ctx_t *x = arg;
	(void)res;
	if (err && !x->error)
		x->error = kgb_xstrdup(err);
	if (--x->pending > 0)
		return;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__GenRecordReply r = KGB__GEN_RECORD_REPLY__INIT;
	r.ok = x->error == NULL;
	r.error = x->error ? x->error : "";
	if (x->error)
		log_warn("generate run=%" PRIu64 ": record failed: %s", x->run_id, x->error);
	env.body_case = KGB__ENVELOPE__BODY_GEN_RECORD_REPLY;
	env.gen_record_reply = &r;
	gsend(x, &env, "GenRecordReply");
	free(x->error);
	free(x);
}

static json_t *jtext(const char *s)
{
	char *u = kgb_coord_utf8(s);
	json_t *j = json_string(u);
	free(u);
	return j;
}

static json_t *jcount(int64_t v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *samples_json(Kgb__GenRecordRequest *q)
{
	json_t *a = json_array();
	for (size_t i = 0; i < q->n_samples; i++) {
		const Kgb__GenSample *s = q->samples[i];
		const Kgb__GenUsage *u = s->usage;
		json_t *code = NULL;
		if (s->code_json && *s->code_json)
			code = json_loads(s->code_json, 0, NULL);
		json_t *req = json_loads(s->request_json && *s->request_json ? s->request_json : "{}", 0, NULL);
		json_t *o = json_object();
		json_object_set_new(o, "op", jtext(s->op));
		json_object_set_new(o, "round", json_integer(s->round));
		json_object_set_new(o, "sample", json_integer(s->sample));
		json_object_set_new(o, "prompt_hash", jtext(s->prompt_hash));
		json_object_set_new(o, "request", req ? req : json_object());
		json_object_set_new(o, "http_status", json_integer(s->http_status));
		json_object_set_new(o, "attempts", json_integer(s->attempts ? s->attempts : 1));
		json_object_set_new(o, "wall_s", json_real(s->wall_s));
		json_object_set_new(o, "input_tokens", jcount(u ? u->input : -1));
		json_object_set_new(o, "output_tokens", jcount(u ? u->output : -1));
		json_object_set_new(o, "cache_write_tokens", jcount(u ? u->cache_write : -1));
		json_object_set_new(o, "cache_read_tokens", jcount(u ? u->cache_read : -1));
		json_object_set_new(o, "reasoning_tokens", jcount(u ? u->reasoning : -1));
		json_object_set_new(o, "finish_reason", jtext(s->finish_reason));
		json_object_set_new(o, "content", jtext(s->content));
		json_object_set_new(o, "code", code ? code : json_null());
		json_object_set_new(o, "error", jtext(s->error));
		json_object_set_new(o, "cand_idx", s->cand_idx >= 0 ? json_integer(s->cand_idx) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

/* Queue sql with $1 = run and $2 = the JSON array a (taken). */
static void record_rows(gen_ctx_t *x, const char *run, json_t *a, const char *sql)
{
	char *js = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	const char *p[2] = {run, js};
	kgb_db_query(x->c->db, KGB_DB_RETRY, record_cb, x, sql, 2, p);
	free(js);
}

static void on_gen_record(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__GenRecordRequest *q = env->gen_record;
	gen_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->run_id = q->run_id;
	const char *run = kgb_coord_u64(q->run_id);
	/* one statement per part, queued together: one batch, so one transaction, in
	 * this order (a link sees the samples recorded before it) */
	x->pending = 1 + (q->n_samples > 0) + (q->n_rounds > 0) + (q->n_links > 0);
	if (q->n_samples) {
		/* an answer on record stays as it is: a replay of the journal changes nothing */
		record_rows(x, run, samples_json(q),
		             "INSERT INTO gen_samples (run_id, op, round, sample, prompt_hash, request, http_status, "
		             "attempts, wall_s, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, "
		             "reasoning_tokens, finish_reason, content, code, error, cand_idx) "
		             "SELECT $1::bigint, x.op, x.round, x.sample, x.prompt_hash, x.request, x.http_status, x.attempts, "
		             "x.wall_s, x.input_tokens, x.output_tokens, x.cache_write_tokens, x.cache_read_tokens, "
		             "x.reasoning_tokens, x.finish_reason, x.content, NULLIF(x.code, 'null'), x.error, x.cand_idx "
		             "FROM jsonb_to_recordset($2::jsonb) AS x(op text, round int, sample int, prompt_hash text, "
		             "request jsonb, http_status int, attempts int, wall_s float8, input_tokens bigint, "
		             "output_tokens bigint, cache_write_tokens bigint, cache_read_tokens bigint, "
		             "reasoning_tokens bigint, finish_reason text, content text, code jsonb, error text, "
		             "cand_idx int) "
		             "ON CONFLICT (run_id, op, round, sample) DO NOTHING");
	}
	if (q->n_rounds) {
		json_t *a = json_array();
		for (size_t i = 0; i < q->n_rounds; i++)
			json_array_append_new(a, json_pack("{s:i,s:I}", "round", (int)q->rounds[i]->round, "campaign_id",
			                                   (json_int_t)q->rounds[i]->campaign_id));
		record_rows(x, run, a,
		             "INSERT INTO gen_rounds (run_id, round, campaign_id) SELECT $1::bigint, x.round, x.campaign_id "
		             "FROM jsonb_to_recordset($2::jsonb) AS x(round int, campaign_id bigint) "
		             "ON CONFLICT (run_id, round) DO UPDATE SET campaign_id = EXCLUDED.campaign_id");
	}
	if (q->n_links) {
		json_t *a = json_array();
		for (size_t i = 0; i < q->n_links; i++) {
			const Kgb__GenLink *l = q->links[i];
			json_array_append_new(a, json_pack("{s:o,s:i,s:i,s:i}", "op", jtext(l->op), "round", (int)l->round,
			                                   "sample", (int)l->sample, "cand_idx", (int)l->cand_idx));
		}
		record_rows(x, run, a,
		             "UPDATE gen_samples t SET cand_idx = x.cand_idx "
		             "FROM jsonb_to_recordset($2::jsonb) AS x(op text, round int, sample int, cand_idx int) "
		             "WHERE t.run_id = $1::bigint AND t.op = x.op AND t.round = x.round AND t.sample = x.sample");
	}
	/* the last statement: the run must exist (a record for an unknown run is an error) */
	const char *p[1] = {run};
	kgb_db_query(c->db, KGB_DB_RETRY, record_cb, x, "SELECT 1 / count(*) FROM gen_runs WHERE id = $1", 1, p);
}

/* ---- verdicts ---- */

static void verdicts_reply(gen_ctx_t *x, const char *err)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__GenVerdictsReply *r = x->vr;
	if (err) {
		r->ok = false;
		r->error = kgb_xstrdup(err);
	}
	env.body_case = KGB__ENVELOPE__BODY_GEN_VERDICTS_REPLY;
	env.gen_verdicts_reply = r;
	gsend(x, &env, "GenVerdictsReply");
	/* every string and sub-message here is the ctx's own, from malloc */
	kgb__gen_verdicts_reply__free_unpacked(r, NULL);
	free(x);
}

/* The sample (op, round, sample) of the reply, or NULL. Samples are in order of
 * (round, op, sample), so a binary search finds it. */
static Kgb__GenVerdict *find_sample(Kgb__GenVerdictsReply *r, const char *op, uint32_t round, uint32_t sample)
{
	size_t lo = 0, hi = r->n_samples;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		Kgb__GenVerdict *v = r->samples[mid];
		int cmp = v->round != round ? (v->round < round ? -1 : 1) : strcmp(v->op, op);
		if (cmp == 0)
			cmp = v->sample == sample ? 0 : (v->sample < sample ? -1 : 1);
		if (cmp == 0)
			return v;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void failures_cb(PGresult *res, const char *err, void *arg)
{
	gen_ctx_t *x = arg;
	if (err) {
		verdicts_reply(x, err);
		return;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		const char *op = PQgetvalue(res, i, 0);
		Kgb__GenVerdict *v = find_sample(x->vr, op, (uint32_t)atoi(PQgetvalue(res, i, 1)),
		                                 (uint32_t)atoi(PQgetvalue(res, i, 2)));
		if (!v)
			continue;
		uint32_t ci = (uint32_t)atoi(PQgetvalue(res, i, 3));
		char label[512] = "";
		const kgb_op_t *cop = kgb_catalog_find(op);
		if (cop && ci < kgb_op_case_count(cop))
			kgb_case_label(cop, ci, label, sizeof label);
		v->failures = kgb_xrealloc(v->failures, (v->n_failures + 1) * sizeof *v->failures);
		v->failures[v->n_failures++] = kgb_xasprintf("case %u%s%s%s: %s%s%s", ci, label[0] ? " (" : "", label,
		                                             label[0] ? ")" : "", PQgetvalue(res, i, 4),
		                                             PQgetvalue(res, i, 5)[0] ? ": " : "", PQgetvalue(res, i, 5));
	}
	verdicts_reply(x, NULL);
}

static void samples_cb(PGresult *res, const char *err, void *arg)
{
	gen_ctx_t *x = arg;
	if (err) {
		verdicts_reply(x, err);
		return;
	}
	Kgb__GenVerdictsReply *r = x->vr;
	int n = PQntuples(res);
	r->samples = kgb_xcalloc((size_t)n + 1, sizeof *r->samples);
	for (int i = 0; i < n; i++) {
		Kgb__GenVerdict *v = kgb_xcalloc(1, sizeof *v);
		kgb__gen_verdict__init(v);
		v->op = dup_col(res, i, 0);
		v->round = (uint32_t)atoi(PQgetvalue(res, i, 1));
		v->sample = (uint32_t)atoi(PQgetvalue(res, i, 2));
		v->candidate_id = PQgetisnull(res, i, 3) ? 0 : kgb_coord_pq_u64(PQgetvalue(res, i, 3));
		v->cases_total = (uint32_t)atoi(PQgetvalue(res, i, 4));
		v->cases_done = (uint32_t)atoi(PQgetvalue(res, i, 5));
		v->cases_passed = (uint32_t)atoi(PQgetvalue(res, i, 6));
		v->open_jobs = (uint32_t)atoi(PQgetvalue(res, i, 7));
		v->passed = PQgetvalue(res, i, 8)[0] == 't';
		v->code_json = dup_col(res, i, 9);
		v->error = dup_col(res, i, 10);
		v->usage = usage_cols(res, i, 11);
		v->wall_s = kgb_coord_pq_f64(PQgetvalue(res, i, 16));
		v->attempts = (uint32_t)atoi(PQgetvalue(res, i, 17));
		v->http_status = (uint32_t)atoi(PQgetvalue(res, i, 18));
		r->samples[r->n_samples++] = v;
	}
	if (x->max_failures == 0) {
		verdicts_reply(x, NULL);
		return;
	}
	char lim[16];
	snprintf(lim, sizeof lim, "%u", x->max_failures);
	const char *p[3] = {kgb_coord_u64(x->run_id), kgb_coord_i64(x->round), lim};
	kgb_db_query(x->c->db, KGB_DB_RETRY, failures_cb, x,
	             "SELECT op, round, sample, case_index, verdict, message FROM ("
	             "SELECT s.op, s.round, s.sample, r.case_index, r.verdict, r.message, "
	             "row_number() OVER (PARTITION BY s.op, s.round, s.sample ORDER BY r.case_index, j.platform_id) AS k "
	             "FROM gen_samples s JOIN gen_rounds g ON g.run_id = s.run_id AND g.round = s.round "
	             "JOIN candidates c ON c.campaign_id = g.campaign_id AND c.idx = s.cand_idx "
	             "JOIN jobs j ON j.campaign_id = c.campaign_id AND j.candidate_id = c.id "
	             "JOIN results r ON r.job_id = j.id "
	             "WHERE s.run_id = $1 AND ($2::int < 0 OR s.round = $2::int) AND r.verdict <> 'pass') f "
	             "WHERE k <= $3::int ORDER BY round, op, sample, k",
	             3, p);
}

static void run_cb(PGresult *res, const char *err, void *arg)
{
	gen_ctx_t *x = arg;
	if (err || PQntuples(res) != 1) {
		char msg[128];
		snprintf(msg, sizeof msg, "no generation run %" PRIu64, x->run_id);
		verdicts_reply(x, err ? err : msg);
		return;
	}
	Kgb__GenVerdictsReply *r = x->vr;
	r->ok = true;
	r->method = dup_col(res, 0, 0);
	r->model = dup_col(res, 0, 1);
	r->api = dup_col(res, 0, 2);
	r->base_url = dup_col(res, 0, 3);
	r->rounds = parse_rounds(PQgetvalue(res, 0, 4), &r->n_rounds);
	const char *p[2] = {kgb_coord_u64(x->run_id), kgb_coord_i64(x->round)};
	/* the sort order is find_sample's: C collation for the operator names */
	kgb_db_query(x->c->db, KGB_DB_RETRY, samples_cb, x,
	             "SELECT s.op, s.round, s.sample, v.candidate_id, v.cases_total, v.cases_done, v.cases_passed, "
	             "v.open_jobs, v.passed, s.code::text, s.error, s.input_tokens, s.output_tokens, "
	             "s.cache_write_tokens, s.cache_read_tokens, s.reasoning_tokens, s.wall_s, s.attempts, "
	             "s.http_status "
	             "FROM gen_samples s JOIN gen_sample_verdicts v USING (run_id, op, round, sample) "
	             "WHERE s.run_id = $1 AND ($2::int < 0 OR s.round = $2::int) "
	             "ORDER BY s.round, s.op COLLATE \"C\", s.sample",
	             2, p);
}

static void on_gen_verdicts(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__GenVerdictsRequest *q = env->gen_verdicts;
	gen_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->run_id = q->run_id;
	x->round = q->round;
	x->max_failures = q->max_failures > 100 ? 100 : q->max_failures;
	x->vr = kgb_xcalloc(1, sizeof *x->vr);
	kgb__gen_verdicts_reply__init(x->vr);
	const char *p[1] = {kgb_coord_u64(q->run_id)};
	kgb_db_query(c->db, KGB_DB_RETRY, run_cb, x,
	             "SELECT r.method, r.model, r.api, r.base_url, "
	             "(SELECT coalesce(json_agg(json_build_object('round', g.round, 'campaign_id', g.campaign_id) "
	             "ORDER BY g.round), '[]')::text FROM gen_rounds g WHERE g.run_id = r.id AND g.campaign_id IS NOT NULL) "
	             "FROM gen_runs r WHERE r.id = $1",
	             1, p);
}

bool kgb_coord_on_gen_msg(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	switch (env->body_case) {
	case KGB__ENVELOPE__BODY_GEN_OPEN:
		on_gen_open(c, peer, env);
		return true;
	case KGB__ENVELOPE__BODY_GEN_RECORD:
		on_gen_record(c, peer, env);
		return true;
	case KGB__ENVELOPE__BODY_GEN_VERDICTS:
		on_gen_verdicts(c, peer, env);
		return true;
	default:
		return false;
	}
}
