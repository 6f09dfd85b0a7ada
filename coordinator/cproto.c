/* The CLI socket: submit, status, results, workers, platforms, cancel. Every request
 * gets exactly one reply with the request's seq; errors go back in the reply's error
 * field (or an ErrorReply for frames that cannot be read). */
#include "coord.h"
#include "langs.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "log.h"
#include "manifest.h"
#include "util.h"
#include "validate.h"

typedef struct cli_ctx {
	KGB_CREQ_MEMBERS;
	uint64_t campaign_id;
	char *name, *baseline;   /* results, show: from the first query (baseline NULL: native timings) */
	char *aa_method;         /* results: an A/A campaign's replicate method, else NULL */
	char *req_baseline;      /* results, show: the baseline asked for ("": the campaign's) */
	double t_req;            /* cancel: when the request arrived (monotonic ms) */
	bool partial;
	uint64_t seed;           /* results, show: the campaign seed (0 while secret) */
	const char *seed_state;  /* results, show: "fixed", "secret", "revealed" (static) */
	char *platform;          /* cancel, show: --platform */
	bool drain;              /* cancel: --drain */
	char *op, *method;       /* show */
	bool failing;            /* show: --failing */
	bool with_log;           /* show: the jobs' logs too (kgb verify) */
	char **notes;            /* submit: why jobs will wait (SubmitReply.notes) */
	size_t nnotes;
} cli_ctx_t;

static void ctx_free(cli_ctx_t *x)
{
	free(x->name);
	free(x->baseline);
	free(x->aa_method);
	free(x->req_baseline);
	free(x->op);
	free(x->method);
	free(x->platform);
	for (size_t i = 0; i < x->nnotes; i++)
		free(x->notes[i]);
	free(x->notes);
	free(x);
}

static void reply(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env, const char *what)
{
	if (!c->csock)
		return;
	if (kgb_zsock_send(c->csock, peer, env) != 0)
		log_warn("cli peer=%s: %s not delivered: %s", kgb_zpeer_str(peer), what, strerror(errno));
}

/* ---- submit ---- */

static void submit_reply_notes(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, bool ok, uint64_t id,
                               uint32_t jobs, const char *error, char **notes, size_t nnotes)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__SubmitReply sr = KGB__SUBMIT_REPLY__INIT;
	sr.notes = notes;
	sr.n_notes = nnotes;
	sr.ok = ok;
	sr.campaign_id = id;
	sr.jobs = jobs;
	sr.error = (char *)(error ? error : "");
	env.seq = seq;
	env.body_case = KGB__ENVELOPE__BODY_SUBMIT_REPLY;
	env.submit_reply = &sr;
	reply(c, peer, &env, "SubmitReply");
}

static void submit_reply(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, bool ok, uint64_t id,
                         uint32_t jobs, const char *error)
{
	submit_reply_notes(c, peer, seq, ok, id, jobs, error, NULL, 0);
}

/* Why the python candidates' jobs on p will wait, or NULL when a live worker of p
 * records Python candidates: "python: no live worker of P can record Python
 * candidates (worker w1: torch not importable by ...)"; native (docs/native.md): why
 * their cases on p will be unsupported, or NULL when a live worker of p imports torch
 * or has not said (caller frees). */
static char *kind_wait_note(kgb_coord_t *c, const kgb_cplat_t *p, bool native)
{
	kgb_sbuf_t why = {0};
	for (size_t i = 0; i < c->nworkers; i++) {
		const kgb_cworker_t *w = c->workers[i];
		bool on = false;
		for (size_t k = 0; k < w->ndevs && !on; k++)
			on = w->devs[k].plat == p;
		if (!w->alive || !on)
			continue;
		if (native ? w->native || !w->native_known : w->python) {
			free(why.s);
			return NULL;
		}
		const char *note = native ? w->native_note : w->python_note;
		char *one = kgb_xasprintf("%sworker %s: %s", why.len ? "; " : "", w->name,
		                          note && *note ? note : "no reason given");
		kgb_sbuf_add(&why, one, strlen(one));
		free(one);
	}
	if (native && !why.len)
		return NULL; /* no live worker: the jobs wait, as status says */
	char *note = native ? kgb_xasprintf("native: no live worker of %s can run native candidates (%s); their cases "
	                                    "will be recorded unsupported, left out of accuracy as the environment's "
	                                    "failure, unless a worker with torch takes them",
	                                    p->name, why.s)
	                    : kgb_xasprintf("python: no live worker of %s can record Python candidates (%s); their jobs "
	                                    "wait for one that can",
	                                    p->name, why.len ? why.s : "no live worker of it");
	free(why.s);
	return note;
}

static char *python_wait_note(kgb_coord_t *c, const kgb_cplat_t *p)
{
	return kind_wait_note(c, p, false);
}

static void submit_loaded(kgb_coord_t *c, int rc)
{
	(void)c;
	(void)rc;
}

static void submit_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	kgb_coord_t *c = x->c;
	if (err || PQntuples(res) != 1) {
		char msg[600];
		snprintf(msg, sizeof msg, "the store rejected the campaign: %s", err ? err : "no row");
		log_error("cli peer=%s: submit failed: %s", kgb_zpeer_str(&x->peer), msg);
		submit_reply(c, &x->peer, x->seq, false, 0, 0, msg);
		ctx_free(x);
		return;
	}
	uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, 0, 0));
	uint32_t jobs = (uint32_t)atoi(PQgetvalue(res, 0, 1));
	/* the jobs' ids: the submit statement made them, in one range */
	uint64_t first = PQgetisnull(res, 0, 2) ? 0 : kgb_coord_pq_u64(PQgetvalue(res, 0, 2));
	uint64_t last = PQgetisnull(res, 0, 3) ? 0 : kgb_coord_pq_u64(PQgetvalue(res, 0, 3));
	log_info("campaign=%" PRIu64 " submitted: %u jobs", id, jobs);
	submit_reply_notes(c, &x->peer, x->seq, true, id, jobs, NULL, x->notes, x->nnotes);
	kgb_coord_load_submitted(c, id, first, last, submit_loaded);
	ctx_free(x);
}

static bool is_all(const kgb_manifest_t *m)
{
	if (m->nplatforms == 0)
		return true;
	for (size_t i = 0; i < m->nplatforms; i++)
		if (strcmp(m->platforms[i], "all") == 0 || strcmp(m->platforms[i], "*") == 0)
			return true;
	return false;
}

static bool pattern_match(const kgb_manifest_t *m, const char *platform)
{
	kgb_ccamp_t tmp = {0};
	tmp.all_platforms = is_all(m);
	tmp.patterns = m->platforms;
	tmp.npatterns = m->nplatforms;
	return kgb_coord_camp_matches(&tmp, platform);
}

static void on_submit(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__SubmitRequest *rq = env->submit;
	char *origin_clean = kgb_coord_utf8(rq->origin && rq->origin[0] ? rq->origin : "manifest");
	const char *origin = origin_clean;
	const char *mj = rq->manifest_json ? rq->manifest_json : "";
	char err[1024];
	kgb_manifest_t *m = NULL;
	json_t *cands = NULL, *plats = NULL;
	char *cj = NULL, *pj = NULL;
	size_t *left_out = NULL;  /* per known platform: candidates "all" leaves out */
	bool *py_on = NULL;       /* per known platform: a python candidate has jobs there */
	bool *nat_on = NULL;      /* per known platform: a native candidate has jobs there */
	if (kgb_manifest_parse(mj, strlen(mj), origin, true, &m, err, sizeof err) != 0) {
		log_info("cli peer=%s: manifest %s rejected: %s", kgb_zpeer_str(peer), origin, err);
		submit_reply(c, peer, env->seq, false, 0, 0, err);
		goto out;
	}
	/* a platform named in the manifest that no worker has offered is a typo until
	 * the user says it is a platform to wait for */
	for (size_t i = 0; !is_all(m) && !rq->wait_for_platforms && i < m->nplatforms; i++) {
		bool any = false;
		for (size_t p = 0; p < c->nplats && !any; p++)
			any = strcmp(m->platforms[i], c->plats[p]->name) == 0 || fnmatch(m->platforms[i], c->plats[p]->name, 0) == 0;
		if (any)
			continue;
		char known[600] = "";
		for (size_t p = 0; p < c->nplats; p++) {
			size_t k = strlen(known);
			snprintf(known + k, sizeof known - k, "%s%s", p ? ", " : "", c->plats[p]->name);
		}
		snprintf(err, sizeof err,
		         "%s: platforms[%zu]: '%s' matches no platform any worker has offered (known: %s); check the "
		         "name, or submit with --wait-for-platforms to queue for a platform that has not joined yet",
		         origin, i, m->platforms[i], known[0] ? known : "none yet");
		log_info("cli peer=%s: manifest %s rejected: %s", kgb_zpeer_str(peer), origin, err);
		submit_reply(c, peer, env->seq, false, 0, 0, err);
		goto out;
	}
	/* the campaign seed: the manifest's (public), else a secret one that no client sees
	 * before the campaign ends (docs/security.md, "Foreknowledge") */
	uint64_t seed = m->seed_fixed ? m->seed : kgb_seed_secret();
	uint64_t hkey = kgb_seeds_derive(seed).heldout;
	cands = json_array();
	left_out = kgb_xcalloc(c->nplats + 1, sizeof *left_out);
	py_on = kgb_xcalloc(c->nplats + 1, sizeof *py_on);
	nat_on = kgb_xcalloc(c->nplats + 1, sizeof *nat_on);
	size_t njobs = 0, nunplaced = 0;
	unsigned unplaced = 0;   /* "all": languages of candidates no known platform runs */
	for (size_t i = 0; i < m->ncandidates; i++) {
		kgb_candidate_t *cd = &m->candidates[i];
		const kgb_op_t *op = kgb_catalog_find(cd->op);
		if (!op) {
			snprintf(err, sizeof err, "%s: op: unknown operator '%s'", cd->origin ? cd->origin : origin, cd->op);
			submit_reply(c, peer, env->seq, false, 0, 0, err);
			goto out;
		}
		/* stored with the candidate: later platforms and a restarted coordinator expand
		 * from candidates.case_count (or its shards, for a case selection), so the smoke
		 * choice holds for them too */
		uint32_t ncases = m->smoke ? kgb_op_smoke_case_count(op) : kgb_op_case_count(op);
		json_t *srcs = json_array();
		for (size_t s = 0; s < cd->nsources; s++) {
			json_t *content = json_stringn(cd->sources[s].content ? cd->sources[s].content : "",
			                               cd->sources[s].content ? cd->sources[s].len : 0);
			if (!content) {
				snprintf(err, sizeof err, "%s: sources: '%s' is not valid UTF-8 text",
				         cd->origin ? cd->origin : origin, cd->sources[s].name);
				json_decref(srcs);
				submit_reply(c, peer, env->seq, false, 0, 0, err);
				goto out;
			}
			json_array_append_new(srcs, json_pack("{s:s,s:o}", "name", cd->sources[s].name, "content", content));
		}
		json_error_t je;
		json_t *plan = json_loads(cd->plan_json ? cd->plan_json : "null", JSON_DECODE_ANY, &je);
		if (!plan) {
			snprintf(err, sizeof err, "%s: plan: not valid JSON: %s", cd->origin ? cd->origin : origin, je.text);
			json_decref(srcs);
			submit_reply(c, peer, env->seq, false, 0, 0, err);
			goto out;
		}
		json_t *sel_idx = json_null(), *sel_shards = json_null();
		if (cd->cases_json) {
			uint32_t *sel = NULL;
			size_t nsel = 0;
			if (kgb_manifest_select_cases(cd, m->smoke, &sel, &nsel, err, sizeof err) != 0) {
				json_decref(plan);
				json_decref(srcs);
				submit_reply(c, peer, env->seq, false, 0, 0, err);
				goto out;
			}
			sel_idx = json_array();
			sel_shards = json_array();
			uint32_t shard = m->shard_size ? m->shard_size : 32;
			for (size_t k = 0; k < nsel;) {
				/* a shard: a run of consecutive selected cases, at most shard_size long */
				size_t e = k + 1;
				while (e < nsel && sel[e] == sel[e - 1] + 1 && e - k < shard)
					e++;
				json_array_append_new(sel_shards, json_pack("[i,i]", (int)sel[k], (int)sel[e - 1] + 1));
				for (size_t q = k; q < e; q++)
					json_array_append_new(sel_idx, json_integer(sel[q]));
				k = e;
			}
			ncases = (uint32_t)nsel;
			free(sel);
		}
		/* held-out cases: one shard of m->heldout resizings of a public case of the
		 * candidate's, drawn with the campaign's held-out key; shards are then explicit */
		json_t *heldout_lo = json_null();
		const char *kind = json_string_value(json_object_get(plan, "kind"));
		bool native = kind && strcmp(kind, "native") == 0;
		if (m->heldout > 0 && kgb_op_has_heldout(op) && !native) {
			uint32_t shard = m->shard_size ? m->shard_size : 32, nall = kgb_op_case_count(op);
			uint64_t words[2] = {hkey, i};
			uint64_t pick = kgb_hash64(words, sizeof words, 0x686f6c64);
			uint32_t base;
			if (json_is_array(sel_idx))
				base = (uint32_t)json_integer_value(json_array_get(sel_idx, pick % json_array_size(sel_idx)));
			else {
				base = (uint32_t)(pick % ncases);
				json_decref(sel_shards);
				sel_shards = json_array();
				for (uint32_t s = 0; s < kgb_sched_shard_count(ncases, shard); s++) {
					uint32_t lo, hi;
					kgb_sched_shard_range(ncases, shard, s, &lo, &hi);
					json_array_append_new(sel_shards, json_pack("[i,i]", (int)lo, (int)hi));
				}
			}
			uint32_t lo = kgb_heldout_index(op, base, 0);
			json_array_append_new(sel_shards, json_pack("[i,i]", (int)lo, (int)(lo + m->heldout)));
			json_decref(heldout_lo);
			heldout_lo = json_integer(nall);
		}
		unsigned langs = kgb_coord_plan_langs(plan); /* before json_pack takes the plan */
		/* the platforms the candidate's jobs go to now: the statement makes its jobs
		 * (platforms x shards) from these, case_count and shards */
		json_t *cplats = json_array();
		json_t *cj1 = json_pack("{s:i,s:s,s:s,s:i,s:o,s:o,s:f,s:f,s:s,s:O,s:O,s:o,s:o}", "idx", (int)i, "method",
		                        cd->method, "op", cd->op, "case_count", (int)ncases, "plan", plan, "sources", srcs,
		                        "tokens", cd->tokens, "gen_seconds", cd->gen_seconds, "origin",
		                        cd->origin ? cd->origin : "", "cases", sel_idx, "shards", sel_shards, "plats",
		                        cplats, "heldout_lo", heldout_lo);
		/* samples and rounds (migration 0009): usage kinds absent stay NULL (unknown) */
		json_t *usage = json_object();
		for (int k = 0; k < KGB_USAGE_N; k++)
			if (cd->usage[k] >= 0)
				json_object_set_new(usage, kgb_usage_keys[k], json_integer(cd->usage[k]));
		json_object_set_new(cj1, "round", json_integer(cd->round));
		json_object_set_new(cj1, "sample", json_integer(cd->sample));
		json_object_set_new(cj1, "model", json_string(cd->model ? cd->model : ""));
		json_object_set_new(cj1, "usage", usage);
		json_array_append_new(cands, cj1);
		for (size_t p = 0; p < c->nplats; p++) {
			if (!pattern_match(m, c->plats[p]->name) || (is_all(m) && c->plats[p]->retired))
				continue;
			/* "all": only the platforms that can run the candidate's languages (langs.h) */
			if (is_all(m) && !kgb_coord_platform_runs(c->plats[p]->backend, langs)) {
				left_out[p]++;
				continue;
			}
			json_array_append_new(cplats, json_integer(c->plats[p]->id));
			py_on[p] |= (langs & KGB_COORD_LANG_PYTHON) != 0;
			nat_on[p] |= native;
			njobs += json_is_array(sel_shards) ? json_array_size(sel_shards)
			                                   : kgb_sched_shard_count(ncases, m->shard_size ? m->shard_size : 32);
		}
		bool placed = !is_all(m);
		for (size_t p = 0; p < c->nplats && !placed; p++)
			placed = !c->plats[p]->retired && kgb_coord_platform_runs(c->plats[p]->backend, langs);
		if (!placed) {
			unplaced |= langs & ~KGB_COORD_LANG_PYTHON;
			nunplaced++;
		}
		json_decref(sel_idx);
		json_decref(sel_shards);
	}
	if (is_all(m)) {
		plats = json_null();
	} else {
		plats = json_array();
		for (size_t i = 0; i < m->nplatforms; i++)
			json_array_append_new(plats, json_string(m->platforms[i]));
	}
	cj = json_dumps(cands, JSON_COMPACT);
	pj = json_dumps(plats, JSON_COMPACT | JSON_ENCODE_ANY);
	cli_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	for (size_t p = 0; p < c->nplats; p++) {
		for (int k = 0; k < 2; k++) {
			char *note = (k ? nat_on[p] : py_on[p]) ? kind_wait_note(c, c->plats[p], k) : NULL;
			if (!note)
				continue;
			log_info("cli peer=%s: submit %s: %s", kgb_zpeer_str(peer), origin, note);
			x->notes = kgb_xrealloc(x->notes, (x->nnotes + 1) * sizeof *x->notes);
			x->notes[x->nnotes++] = note;
		}
	}
	if (nunplaced && c->nplats) {
		char ln[128];
		char *note = kgb_xasprintf("%zu candidate(s) in %s: no platform that runs them has joined yet; the campaign "
		                           "stays open until a worker of one registers",
		                           nunplaced, kgb_coord_langs_names(unplaced, ln, sizeof ln));
		log_info("cli peer=%s: submit %s: %s", kgb_zpeer_str(peer), origin, note);
		x->notes = kgb_xrealloc(x->notes, (x->nnotes + 1) * sizeof *x->notes);
		x->notes[x->nnotes++] = note;
	}
	char prio[16], shard[16], tl[16], tb[16];
	/* the owner: the user the transport authenticated (CURVE key, ipc peer), else what
	 * the client declares (docs/security.md, "Users and roles") */
	char *owner = kgb_coord_utf8(peer->authenticated ? peer->user : rq->owner);
	/* a declared owner: no terminal escapes into listings, and
	 * bounded (KGB_NAME_MAX bytes, cut on a character boundary) */
	for (unsigned char *o = (unsigned char *)owner; *o; o++) {
		if (*o == 0xC2 && o[1] >= 0x80 && o[1] <= 0x9F) {
			o[0] = o[1] = '?'; /* a C1 control: both its bytes */
			o++;
		} else if (*o < 0x20 || *o == 0x7F) {
			*o = '?';
		}
	}
	for (size_t cut = KGB_NAME_MAX; strlen(owner) > KGB_NAME_MAX; cut--)
		if (((unsigned char)owner[cut] & 0xC0) != 0x80)
			owner[cut] = 0;
	snprintf(prio, sizeof prio, "%d", rq->interactive ? KGB_SCHED_PRIORITY_INTERACTIVE : m->priority);
	snprintf(shard, sizeof shard, "%u", m->shard_size ? m->shard_size : 32);
	snprintf(tl, sizeof tl, "%u", m->time_limit_ms);
	snprintf(tb, sizeof tb, "%u", m->timing_budget_ms);
	char seedbuf[24];
	snprintf(seedbuf, sizeof seedbuf, "%" PRIu64, seed);
	char heldout[16];
	snprintf(heldout, sizeof heldout, "%u", m->heldout);
	const char *p[17] = {m->name ? m->name : origin,
	                     prio,
	                     seedbuf,
	                     shard,
	                     tl,
	                     tb,
	                     m->timing ? "true" : "false",
	                     m->baseline,
	                     is_all(m) ? NULL : pj,
	                     origin,
	                     mj,
	                     cj,
	                     owner,
	                     kgb_manifest_is_partial(m) ? "true" : "false",
	                     rq->parent_campaign_id ? kgb_coord_u64(rq->parent_campaign_id) : NULL,
	                     m->seed_fixed ? "fixed" : "secret",
	                     heldout};
	for (size_t p = 0; p < c->nplats; p++)
		if (left_out[p])
			log_info("cli peer=%s: submit %s platform=%s: %zu candidate(s) left out: backend %s cannot run their "
			         "kernel languages",
			         kgb_zpeer_str(peer), origin, c->plats[p]->name, left_out[p], c->plats[p]->backend);
	log_info("cli peer=%s: submit %s: %zu candidates, %zu jobs on %zu known platforms", kgb_zpeer_str(peer), origin,
	         m->ncandidates, njobs, c->nplats);
	/* one statement, so one transaction: campaign, candidates and jobs together. The
	 * jobs are generated in the store: per candidate (its element of $12, at index
	 * idx) one series over platforms x shards, the shards being its case selection's
	 * or [s * shard_size, min((s + 1) * shard_size, case_count)) as
	 * kgb_sched_shard_range makes them. The candidates come out of their insert in
	 * order and each series in order, so the job ids run in candidate, platform, shard
	 * order with no sort. Their references are checked once for the statement
	 * (migration 0006a). */
	kgb_db_query(c->db, 0, submit_cb, x,
	             "WITH k AS (INSERT INTO campaigns (name, priority, seed, shard_size, time_limit_ms, "
	             "timing_budget_ms, timing, baseline, platforms, origin, manifest, owner, partial, parent_id, seed_kind, "
	             "heldout) "
	             "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb, $13, $14, "
	             "(SELECT id FROM campaigns WHERE id = $15::bigint), $16, $17::int) RETURNING id), "
	             "x AS (SELECT * FROM jsonb_to_recordset($12::jsonb) AS x(idx int, method text, op text, "
	             "case_count int, plan jsonb, sources jsonb, tokens float8, gen_seconds float8, origin text, "
	             "cases jsonb, shards jsonb, heldout_lo int, round int, sample int, model text, usage jsonb)), "
	             "c AS (INSERT INTO candidates (campaign_id, idx, method, op, case_count, plan, sources, tokens, "
	             "gen_seconds, origin, cases, shards, heldout_lo, round, sample, model, input_tokens, output_tokens, "
	             "cache_write_tokens, cache_read_tokens, reasoning_tokens) "
	             "SELECT k.id, x.idx, x.method, x.op, x.case_count, "
	             "x.plan, x.sources, x.tokens, x.gen_seconds, x.origin, NULLIF(x.cases, 'null'), "
	             "NULLIF(x.shards, 'null'), x.heldout_lo, x.round, x.sample, x.model, (x.usage->>'input')::bigint, "
	             "(x.usage->>'output')::bigint, (x.usage->>'cache_write')::bigint, "
	             "(x.usage->>'cache_read')::bigint, (x.usage->>'reasoning')::bigint "
	             "FROM k, x RETURNING id, idx, op, case_count, shards), "
	             "j AS (INSERT INTO jobs (campaign_id, candidate_id, platform_id, op, case_lo, case_hi) "
	             "SELECT k.id, c.id, (n.plats->>(g / n.ns))::int, c.op, "
	             "CASE WHEN c.shards IS NULL THEN (g % n.ns) * $4::int ELSE (c.shards->(g % n.ns)->>0)::int END, "
	             "CASE WHEN c.shards IS NULL THEN LEAST((g % n.ns + 1) * $4::int, c.case_count) "
	             "ELSE (c.shards->(g % n.ns)->>1)::int END "
	             "FROM k, c "
	             "CROSS JOIN LATERAL (SELECT $12::jsonb->c.idx->'plats' AS plats, "
	             "CASE WHEN c.shards IS NULL THEN (c.case_count + $4::int - 1) / $4::int "
	             "ELSE jsonb_array_length(c.shards) END AS ns OFFSET 0) n "
	             "CROSS JOIN LATERAL generate_series(0, jsonb_array_length(n.plats) * n.ns - 1) g "
	             "RETURNING id) "
	             "SELECT (SELECT id FROM k), count(*), min(id), max(id) FROM j",
	             17, p);
	free(owner);
out:
	free(left_out);
	free(py_on);
	free(nat_on);
	free(cj);
	free(pj);
	json_decref(cands);
	json_decref(plats);
	kgb_manifest_destroy(&m);
	free(origin_clean);
}

/* ---- status ---- */

/* True if a live worker offers platform p. */
static bool plat_live(kgb_coord_t *c, const kgb_cplat_t *p)
{
	for (size_t w = 0; w < c->nworkers; w++)
		if (c->workers[w]->alive)
			for (size_t k = 0; k < c->workers[w]->ndevs; k++)
				if (c->workers[w]->devs[k].plat == p)
					return true;
	return false;
}

static bool camp_has_python(const kgb_ccamp_t *camp)
{
	for (size_t i = 0; camp && i < camp->ncands; i++)
		if (camp->cands[i].langs & KGB_COORD_LANG_PYTHON)
			return true;
	return false;
}

/* A platform a campaign names (or "all") that no worker has offered yet: shown with no
 * jobs, its name bare, this in its waiting note; the campaign stays open for it. */
#define NO_WORKER_YET "no worker yet: the campaign stays open for it"

/* "no live worker for platform P since 2026-01-02 03:04:05 UTC" (caller frees). */
static char *no_worker_reason(const char *platform, int64_t last_unix)
{
	if (last_unix <= 0)
		return kgb_xasprintf("no live worker for platform %s (none has been seen)", platform);
	time_t t = (time_t)last_unix;
	struct tm tm;
	char when[64];
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return kgb_xasprintf("no live worker for platform %s since %s", platform, when);
}

static void status_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	kgb_coord_t *c = x->c;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__StatusReply sr = KGB__STATUS_REPLY__INIT;
	env.seq = x->seq;
	env.body_case = KGB__ENVELOPE__BODY_STATUS_REPLY;
	env.status_reply = &sr;
	int n = err ? 0 : PQntuples(res);
	Kgb__CampaignStatus *cs = kgb_xcalloc((size_t)n + 1, sizeof *cs);
	Kgb__CampaignStatus **csp = kgb_xcalloc((size_t)n + 1, sizeof *csp);
	Kgb__PlatformProgress *pp = kgb_xcalloc((size_t)n + 1, sizeof *pp);
	/* pending platform names, per campaign: at most npatterns + 1 each */
	size_t npend_cap = 0;
	for (size_t i = 0; i < c->ncamps; i++)
		npend_cap += c->camps[i]->npatterns + 1;
	Kgb__PlatformProgress *pend = kgb_xcalloc(npend_cap + 1, sizeof *pend);
	size_t npend = 0;
	Kgb__PlatformProgress ***lists = kgb_xcalloc((size_t)n + 1, sizeof *lists);
	size_t ncs = 0;
	/* labels of pending platforms, reasons per platform row and per campaign */
	char **names = kgb_xcalloc(3 * (size_t)n + npend_cap + 1, sizeof *names);
	size_t nnames = 0;
	if (err) {
		sr.error = (char *)err;
	} else if (n == 0 && x->campaign_id) {
		static char msg[64];
		snprintf(msg, sizeof msg, "no campaign %" PRIu64, x->campaign_id);
		sr.error = msg;
	}
	for (int r = 0; r < n; r++) {
		uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, r, 0));
		Kgb__CampaignStatus *cur = ncs ? csp[ncs - 1] : NULL;
		if (!cur || cur->id != id) {
			cur = &cs[ncs];
			kgb__campaign_status__init(cur);
			cur->id = id;
			cur->name = PQgetvalue(res, r, 1);
			cur->state = PQgetvalue(res, r, 2);
			cur->created_unix = (int64_t)kgb_coord_pq_u64(PQgetvalue(res, r, 3));
			cur->owner = PQgetvalue(res, r, 12);
			cur->started_unix = (int64_t)kgb_coord_pq_u64(PQgetvalue(res, r, 13));
			cur->finished_unix = (int64_t)kgb_coord_pq_u64(PQgetvalue(res, r, 14));
			cur->partial = PQgetvalue(res, r, 15)[0] == 't';
			cur->parent_campaign_id = kgb_coord_pq_u64(PQgetvalue(res, r, 16));
			cur->held = kgb_coord_camp(c, id) && kgb_coord_camp(c, id)->held;
			lists[ncs] = kgb_xcalloc((size_t)n + 8 + npend_cap, sizeof **lists);
			cur->platforms = lists[ncs];
			csp[ncs++] = cur;
			/* named platforms nobody has yet: shown with no jobs */
			kgb_ccamp_t *camp = kgb_coord_camp(c, id);
			if (camp) {
				for (size_t k = 0; k < camp->npatterns; k++) {
					bool any = false;
					for (size_t q = 0; q < c->nplats && !any; q++)
						any = kgb_coord_plat(c, c->plats[q]->id) &&
						      (strcmp(camp->patterns[k], c->plats[q]->name) == 0);
					if (!any && !strpbrk(camp->patterns[k], "*?[")) {
						Kgb__PlatformProgress *e = &pend[npend++];
						kgb__platform_progress__init(e);
						e->platform = camp->patterns[k];
						e->waiting = (char *)NO_WORKER_YET;
						cur->platforms[cur->n_platforms++] = e;
					}
				}
				if (camp->all_platforms && c->nplats == 0) {
					Kgb__PlatformProgress *e = &pend[npend++];
					kgb__platform_progress__init(e);
					e->platform = "all";
					e->waiting = (char *)NO_WORKER_YET;
					cur->platforms[cur->n_platforms++] = e;
				} else if (camp->all_platforms && camp->state <= KGB_CAMP_RUNNING) {
					unsigned u = kgb_coord_camp_unplaced(c, camp);
					char ln[128];
					if (u) {
						Kgb__PlatformProgress *e = &pend[npend++];
						kgb__platform_progress__init(e);
						e->platform = "all";
						names[nnames] = kgb_xasprintf("no platform that runs %s has joined yet: the campaign "
						                              "stays open for one",
						                              kgb_coord_langs_names(u, ln, sizeof ln));
						e->waiting = names[nnames++];
						cur->platforms[cur->n_platforms++] = e;
					}
				}
			}
		}
		if (PQgetisnull(res, r, 4))
			continue;
		Kgb__PlatformProgress *e = &pp[r];
		kgb__platform_progress__init(e);
		e->platform = PQgetvalue(res, r, 4);
		e->queued = (uint32_t)atoi(PQgetvalue(res, r, 5));
		e->running = (uint32_t)atoi(PQgetvalue(res, r, 6));
		e->done = (uint32_t)atoi(PQgetvalue(res, r, 7));
		e->failed = (uint32_t)atoi(PQgetvalue(res, r, 8));
		e->cancelled = (uint32_t)atoi(PQgetvalue(res, r, 9));
		e->total = (uint32_t)atoi(PQgetvalue(res, r, 10));
		e->kernel_failed = (uint32_t)atoi(PQgetvalue(res, r, 11));
		e->unsupported = (uint32_t)atoi(PQgetvalue(res, r, 19));
		e->last_worker_unix = (int64_t)kgb_coord_pq_u64(PQgetvalue(res, r, 18));
		kgb_cplat_t *plat = kgb_coord_plat(c, atoi(PQgetvalue(res, r, 17)));
		e->live = plat && plat_live(c, plat);
		if (e->queued > 0 && !e->live) {
			names[nnames] = no_worker_reason(e->platform, e->last_worker_unix);
			e->waiting = names[nnames++];
		} else if (e->queued > 0 && plat && camp_has_python(kgb_coord_camp(c, id)) &&
		           (names[nnames] = python_wait_note(c, plat)) != NULL) {
			e->waiting = names[nnames++]; /* live, but none of its workers records them */
		}
		cur->platforms[cur->n_platforms++] = e;
	}
	/* a campaign that cannot progress: open jobs, none running, and no live worker
	 * for any platform its queued jobs wait on (named platforms not joined yet are
	 * waited for, not stalled on) */
	for (size_t i = 0; i < ncs; i++) {
		Kgb__CampaignStatus *cur = csp[i];
		if (strcmp(cur->state, "queued") != 0 && strcmp(cur->state, "running") != 0)
			continue;
		uint32_t queued = 0, running = 0, stuck = 0;
		bool awaited = false;
		for (size_t k = 0; k < cur->n_platforms; k++) {
			Kgb__PlatformProgress *e = cur->platforms[k];
			awaited |= e->total == 0; /* "(no worker yet)" rows */
			queued += e->queued;
			running += e->running;
			stuck += e->queued > 0 && !e->live;
		}
		if (queued == 0 || running > 0 || awaited)
			continue;
		bool all_stuck = true;
		size_t len = 0;
		for (size_t k = 0; k < cur->n_platforms; k++)
			if (cur->platforms[k]->queued > 0 && cur->platforms[k]->live)
				all_stuck = false;
		if (!all_stuck || !stuck)
			continue;
		for (size_t k = 0; k < cur->n_platforms; k++)
			if (cur->platforms[k]->waiting && cur->platforms[k]->waiting[0])
				len += strlen(cur->platforms[k]->waiting) + 2;
		char *why = kgb_xcalloc(len + 1, 1);
		for (size_t k = 0; k < cur->n_platforms; k++) {
			const char *w = cur->platforms[k]->waiting;
			if (w && w[0]) {
				if (why[0])
					strcat(why, "; ");
				strcat(why, w);
			}
		}
		names[nnames++] = why;
		cur->stalled = true;
		cur->stalled_reason = why;
	}
	sr.n_campaigns = ncs;
	sr.campaigns = csp;
	reply(c, &x->peer, &env, "StatusReply");
	for (size_t i = 0; i < ncs; i++)
		free(lists[i]);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(lists);
	free(pend);
	free(pp);
	free(csp);
	free(cs);
	ctx_free(x);
}

static void on_status(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	cli_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->campaign_id = env->status->campaign_id;
	const char *p[1] = {kgb_coord_u64(x->campaign_id)};
	kgb_db_query(c->db, KGB_DB_RETRY, status_cb, x,
	             "SELECT k.id, k.name, k.state, EXTRACT(EPOCH FROM k.created_at)::bigint, p.name, "
	             "count(j.id) FILTER (WHERE j.state = 'queued'), count(j.id) FILTER (WHERE j.state = 'running'), "
	             "count(j.id) FILTER (WHERE j.state = 'done'), count(j.id) FILTER (WHERE j.state = 'failed'), "
	             "count(j.id) FILTER (WHERE j.state = 'cancelled'), count(j.id), "
	             /* 11: done jobs with a case whose kernel failed (verdicts of migration 0003) */
	             "count(j.id) FILTER (WHERE j.state = 'done' AND EXISTS (SELECT 1 FROM results r "
	             "WHERE r.job_id = j.id AND kgb_kernel_failure(r.verdict))), "
	             "k.owner, COALESCE(EXTRACT(EPOCH FROM k.started_at)::bigint, 0), "
	             "COALESCE(EXTRACT(EPOCH FROM k.finished_at)::bigint, 0), k.partial, COALESCE(k.parent_id, 0), "
	             /* 17, 18: the platform's id and when a worker offering it was last seen */
	             "p.id, COALESCE((SELECT EXTRACT(EPOCH FROM max(w.last_seen))::bigint FROM devices d "
	             "JOIN workers w ON w.id = d.worker_id WHERE d.platform_id = p.id), 0), "
	             /* 19: done jobs without a kernel failure whose environment could not run a case */
	             "count(j.id) FILTER (WHERE j.state = 'done' AND EXISTS (SELECT 1 FROM results r "
	             "WHERE r.job_id = j.id AND r.verdict = 'unsupported') AND NOT EXISTS (SELECT 1 FROM results r "
	             "WHERE r.job_id = j.id AND kgb_kernel_failure(r.verdict))) "
	             "FROM campaigns k LEFT JOIN jobs j ON j.campaign_id = k.id "
	             "LEFT JOIN platforms p ON p.id = j.platform_id "
	             "WHERE ($1::bigint = 0 OR k.id = $1) GROUP BY k.id, p.id, p.name ORDER BY k.id, p.name",
	             1, p);
}

/* ---- results ---- */

static void results_reply_error(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, const char *error)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__ResultsReply rr = KGB__RESULTS_REPLY__INIT;
	rr.ok = false;
	rr.error = (char *)error;
	env.seq = seq;
	env.body_case = KGB__ENVELOPE__BODY_RESULTS_REPLY;
	env.results_reply = &rr;
	reply(c, peer, &env, "ResultsReply");
}

/* A speedup's two-standard-error interval includes 1 (rse: the standard error of the
 * log speedup within its jobs, floor: the platform's noise floor between jobs); the
 * rule of the store's views (migration 0008). */
static bool speedup_tie(double speedup, double rse, double floor)
{
	return speedup > 0 && fabs(log(speedup)) <= 2 * sqrt(rse * rse + floor * floor);
}

/* The noise floor columns every results and show row ends with, from col on: op_floor,
 * case_floor, ops, cases, measured (epoch s), campaigns, own (kgb_noise_floor,
 * migration 0008; NULL: the platform has none). Platforms are collected once each into
 * nf[0..*n) (pointing into res); platform is the row's platform name. */
#define NOISE_FLOOR_SQL                                                                                          \
	"nf.op_floor, nf.case_floor, nf.ops, nf.cases, EXTRACT(EPOCH FROM nf.measured_at)::bigint, nf.campaigns, "   \
	"nf.own"
static void collect_floor(PGresult *res, int r, int col, const char *platform, Kgb__NoiseFloor *nf, size_t *n)
{
	if (PQgetisnull(res, r, col))
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(nf[i].platform, platform) == 0)
			return;
	Kgb__NoiseFloor *f = &nf[(*n)++];
	kgb__noise_floor__init(f);
	f->platform = (char *)platform;
	f->op_floor = kgb_coord_pq_f64(PQgetvalue(res, r, col));
	f->case_floor = kgb_coord_pq_f64(PQgetvalue(res, r, col + 1));
	f->ops = (uint32_t)atoi(PQgetvalue(res, r, col + 2));
	f->cases = (uint32_t)atoi(PQgetvalue(res, r, col + 3));
	f->measured_unix = atoll(PQgetvalue(res, r, col + 4));
	f->campaigns = PQgetvalue(res, r, col + 5);
	f->own = PQgetvalue(res, r, col + 6)[0] == 't';
}

static double floor_col(PGresult *res, int r, int col)
{
	return PQgetisnull(res, r, col) ? 0 : kgb_coord_pq_f64(PQgetvalue(res, r, col));
}

static Kgb__NoiseFloor **floor_ptrs(Kgb__NoiseFloor *nf, size_t n)
{
	Kgb__NoiseFloor **p = kgb_xcalloc(n + 1, sizeof *p);
	for (size_t i = 0; i < n; i++)
		p[i] = &nf[i];
	return p;
}

static void results_rows_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	kgb_coord_t *c = x->c;
	if (err) {
		results_reply_error(c, &x->peer, x->seq, err);
		ctx_free(x);
		return;
	}
	int n = PQntuples(res);
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__ResultsReply rr = KGB__RESULTS_REPLY__INIT;
	Kgb__ResultRow *rows = kgb_xcalloc((size_t)n + 1, sizeof *rows);
	Kgb__ResultRow **rp = kgb_xcalloc((size_t)n + 1, sizeof *rp);
	Kgb__NoiseFloor *nf = kgb_xcalloc((size_t)n + 1, sizeof *nf);
	size_t nnf = 0;
	for (int r = 0; r < n; r++) {
		Kgb__ResultRow *row = &rows[r];
		kgb__result_row__init(row);
		row->method = PQgetvalue(res, r, 0);
		row->op = PQgetvalue(res, r, 1);
		row->platform = PQgetvalue(res, r, 2);
		row->cases_total = (uint32_t)atoi(PQgetvalue(res, r, 3));
		row->cases_passed = (uint32_t)atoi(PQgetvalue(res, r, 4));
		row->cases_done = (uint32_t)atoi(PQgetvalue(res, r, 5));
		row->timed_cases = (uint32_t)atoi(PQgetvalue(res, r, 6));
		row->speedup = kgb_coord_pq_f64(PQgetvalue(res, r, 7));
		row->tokens = kgb_coord_pq_f64(PQgetvalue(res, r, 8));
		row->gen_seconds = kgb_coord_pq_f64(PQgetvalue(res, r, 9));
		int v = PQgetisnull(res, r, 10) ? 0 : kgb_verdict_parse(PQgetvalue(res, r, 10));
		row->verdict = (Kgb__Verdict)(v < 0 ? 0 : v);
		row->first_failure = PQgetvalue(res, r, 11);
		row->is_baseline = PQgetvalue(res, r, 12)[0] == 't';
		row->median_ns = kgb_coord_pq_f64(PQgetvalue(res, r, 13));
		row->speedup_rse = kgb_coord_pq_f64(PQgetvalue(res, r, 14));
		row->noise_floor = floor_col(res, r, 16);
		row->tie = speedup_tie(row->speedup, row->speedup_rse, row->noise_floor);
		collect_floor(res, r, 16, row->platform, nf, &nnf);
		/* cases left unrun because their jobs were cancelled: not pending */
		row->cancelled = PQgetvalue(res, r, 15)[0] == 't' && row->cases_done < row->cases_total;
		row->round = (uint32_t)atoi(PQgetvalue(res, r, 23));
		row->sample = (uint32_t)atoi(PQgetvalue(res, r, 24));
		rp[r] = row;
	}
	rr.ok = true;
	rr.error = "";
	rr.campaign_name = x->name;
	rr.baseline = x->baseline ? x->baseline : "native";
	rr.partial = x->partial;
	rr.seed = x->seed;
	rr.seed_state = (char *)x->seed_state;
	rr.n_rows = (size_t)n;
	rr.rows = rp;
	rr.n_noise_floors = nnf;
	rr.noise_floors = floor_ptrs(nf, nnf);
	rr.aa_method = x->aa_method ? x->aa_method : "";
	env.seq = x->seq;
	env.body_case = KGB__ENVELOPE__BODY_RESULTS_REPLY;
	env.results_reply = &rr;
	reply(c, &x->peer, &env, "ResultsReply");
	free(rr.noise_floors);
	free(nf);
	free(rows);
	free(rp);
	ctx_free(x);
}

/* The results of one campaign ($1) and the baseline timing of each (operator,
 * platform, case): the first passing timed candidate of method $2, or, when $2 is
 * NULL, the stored native timings of the platform (docs/native.md), from this
 * campaign or any earlier one. The results and show queries both start with these, so
 * a speedup is computed one way whichever baseline is asked for. */
#define RESULTS_AND_BASE_CTE                                                                                    \
	"res AS (SELECT j.candidate_id, j.platform_id, r.case_index, r.verdict, r.timed, r.median_ns, r.message, "   \
	"COALESCE(r.rse, 0) AS rse, r.label, r.worker_id FROM jobs j JOIN results r ON r.job_id = j.id "             \
	"WHERE j.campaign_id = $1), "                                                                                \
	"base AS ((SELECT DISTINCT ON (c.op, res.platform_id, res.case_index) c.op, res.platform_id, "              \
	"res.case_index, res.median_ns, res.rse FROM res JOIN candidates c ON c.id = res.candidate_id "              \
	"WHERE c.method = $2::text AND res.verdict = 'pass' "                                                        \
	"AND res.timed AND res.median_ns > 0 ORDER BY c.op, res.platform_id, res.case_index, c.id) "                 \
	"UNION ALL SELECT nb.op, nb.platform_id, nb.case_index, nb.median_ns, COALESCE(nb.rse, 0) "                  \
	"FROM kgb_native_baseline nb WHERE $2::text IS NULL "                                                        \
	"AND nb.op IN (SELECT op FROM candidates WHERE campaign_id = $1)) "

/* Whether candidate c is the baseline itself: the baseline method's candidates, or with
 * native timings as the baseline, the native candidates. */
#define IS_BASELINE_SQL "COALESCE(c.method = $2::text, $2::text IS NULL AND c.plan->>'kind' = 'native')"

/* Whether res's case is one of the candidate c0's held-out cases (migration 0007). */
#define HELDOUT_SQL "COALESCE(res.case_index >= c0.heldout_lo, false)"

static void results_query(cli_ctx_t *x)
{
	const char *p[2] = {kgb_coord_u64(x->campaign_id), x->baseline};
	kgb_db_query(
		x->c->db, KGB_DB_RETRY, results_rows_cb, x,
		"WITH jp AS (SELECT candidate_id, platform_id, bool_or(state = 'cancelled') AS cancelled FROM jobs "
		"WHERE campaign_id = $1 GROUP BY candidate_id, platform_id), " RESULTS_AND_BASE_CTE ", "
		"cp AS (SELECT jp.candidate_id, jp.platform_id, count(res.case_index) FILTER (WHERE NOT " HELDOUT_SQL ") "
		"AS done, count(*) FILTER (WHERE res.verdict = 'pass' AND NOT " HELDOUT_SQL ") AS passed, "
		/* the first failing case's verdict, unsupported (the environment's, not the
		 * kernel's) only when no case failed otherwise */
		"(array_agg(res.verdict ORDER BY res.verdict = 'unsupported', res.case_index) FILTER (WHERE res.verdict <> "
		"'pass' AND NOT " HELDOUT_SQL "))[1] AS first_verdict, "
		"(array_agg(res.message ORDER BY res.verdict = 'unsupported', res.case_index) FILTER (WHERE res.verdict <> "
		"'pass' AND NOT " HELDOUT_SQL "))[1] AS first_message, "
		/* held-out cases (docs/security.md, "Foreknowledge"): failing one after every
		 * public case passed makes the candidate overfit */
		"count(*) FILTER (WHERE res.verdict <> 'pass' AND " HELDOUT_SQL ") AS heldout_failed, "
		"(array_agg(res.message ORDER BY res.case_index) FILTER (WHERE res.verdict <> 'pass' AND " HELDOUT_SQL
		"))[1] AS heldout_message, "
		"count(b.median_ns) AS timed_pairs, "
		"exp(avg(ln(b.median_ns / res.median_ns)) FILTER (WHERE b.median_ns IS NOT NULL)) AS speedup, "
		/* the standard error of the mean log speedup, from both timings' rse */
		"sqrt(sum(res.rse ^ 2 + b.rse ^ 2) FILTER (WHERE b.median_ns IS NOT NULL)) "
		"/ NULLIF(count(b.median_ns), 0) AS speedup_rse, "
		"exp(avg(ln(res.median_ns)) FILTER (WHERE res.timed AND res.verdict = 'pass' AND res.median_ns > 0 "
		"AND NOT " HELDOUT_SQL ")) AS gm_median "
		"FROM jp JOIN candidates c0 ON c0.id = jp.candidate_id "
		"LEFT JOIN res ON res.candidate_id = jp.candidate_id AND res.platform_id = jp.platform_id "
		"LEFT JOIN base b ON b.op = c0.op AND b.platform_id = jp.platform_id AND b.case_index = res.case_index "
		"AND res.verdict = 'pass' AND res.timed AND res.median_ns > 0 AND NOT " HELDOUT_SQL " "
		"GROUP BY jp.candidate_id, jp.platform_id) "
		"SELECT c.method, c.op, p.name, c.case_count, cp.passed, cp.done, cp.timed_pairs, "
		/* a speedup only for a candidate that passes every case: a fast wrong
		 * kernel has no speedup */
		"CASE WHEN cp.passed = c.case_count AND cp.heldout_failed = 0 THEN COALESCE(cp.speedup, 0) ELSE 0 END, "
		"c.tokens, c.gen_seconds, "
		"CASE WHEN cp.passed = c.case_count AND cp.heldout_failed > 0 THEN 'overfit' "
		"WHEN cp.passed = c.case_count THEN 'pass' ELSE cp.first_verdict END, "
		"CASE WHEN cp.passed = c.case_count AND cp.heldout_failed > 0 THEN 'a held-out case: ' || "
		"COALESCE(cp.heldout_message, '') ELSE COALESCE(cp.first_message, '') END, " IS_BASELINE_SQL ", "
		"COALESCE(cp.gm_median, 0), "
		"CASE WHEN cp.passed = c.case_count AND cp.heldout_failed = 0 THEN COALESCE(cp.speedup_rse, 0) ELSE 0 END, "
		"jp.cancelled, "
		NOISE_FLOOR_SQL ", c.round, c.sample "
		"FROM cp JOIN jp USING (candidate_id, platform_id) JOIN candidates c ON c.id = cp.candidate_id "
		"JOIN platforms p ON p.id = cp.platform_id "
		"LEFT JOIN LATERAL kgb_noise_floor(p.id, $1::bigint) nf ON true "
		"ORDER BY c.method, c.op, p.name, c.id",
		2, p);
}

/* The campaign of a results or show request, and the baseline its speedups are
 * against: x->req_baseline as asked ("" the campaign's own: its manifest's baseline
 * method, else the stored native timings; "native" those timings; else a method of the
 * campaign). Sets x->name, x->partial, and x->baseline (the method, NULL for native
 * timings). Returns false with err set for a missing campaign or an unknown method. */
static bool resolve_baseline(cli_ctx_t *x, PGresult *res, const char *qerr, char *err, size_t n)
{
	if (qerr) {
		kgb_strlcpy(err, qerr, n);
		return false;
	}
	if (PQntuples(res) == 0) {
		snprintf(err, n, "no campaign %" PRIu64, x->campaign_id);
		return false;
	}
	const char *want = x->req_baseline ? x->req_baseline : "";
	bool is_method = PQgetvalue(res, 0, 4)[0] == 't';
	x->name = kgb_xstrdup(PQgetvalue(res, 0, 0));
	x->partial = PQgetvalue(res, 0, 2)[0] == 't';
	x->aa_method = PQgetisnull(res, 0, 5) ? NULL : kgb_xstrdup(PQgetvalue(res, 0, 5));
	/* a secret seed stays in the store until the campaign ends (docs/security.md) */
	const char *kind = PQgetvalue(res, 0, 7);
	bool ended = PQgetvalue(res, 0, 8)[0] == 't';
	x->seed_state = strcmp(kind, "secret") != 0 ? "fixed" : ended ? "revealed" : "secret";
	x->seed = strcmp(x->seed_state, "secret") == 0 ? 0 : kgb_coord_pq_u64(PQgetvalue(res, 0, 6));
	if (!*want)
		x->baseline = PQgetisnull(res, 0, 1) ? NULL : kgb_xstrdup(PQgetvalue(res, 0, 1));
	else if (is_method)
		x->baseline = kgb_xstrdup(want);
	else if (strcmp(want, "native") != 0) {
		snprintf(err, n, "--baseline %s: campaign %" PRIu64 " has no method '%s' (its methods: %s; or native, "
		         "the stored native timings)", want, x->campaign_id, want, PQgetvalue(res, 0, 3));
		return false;
	}
	return true;
}

/* The first query of results and show: the campaign, its methods, and whether the
 * requested baseline names one of them. */
static void campaign_query(cli_ctx_t *x, kgb_db_cb cb)
{
	const char *p[2] = {kgb_coord_u64(x->campaign_id), x->req_baseline ? x->req_baseline : ""};
	kgb_db_query(x->c->db, KGB_DB_RETRY, cb, x,
	             "SELECT name, baseline, partial, "
	             "COALESCE((SELECT string_agg(DISTINCT method, ', ' ORDER BY method) FROM candidates "
	             "WHERE campaign_id = $1), ''), "
	             "EXISTS (SELECT 1 FROM candidates WHERE campaign_id = $1 AND method = $2), "
	             "kgb_aa_method(campaigns), "
	             "seed, seed_kind, state IN ('done', 'cancelled') "
	             "FROM campaigns WHERE id = $1",
	             2, p);
}

static void results_camp_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	char msg[512];
	if (!resolve_baseline(x, res, err, msg, sizeof msg)) {
		results_reply_error(x->c, &x->peer, x->seq, msg);
		ctx_free(x);
		return;
	}
	results_query(x);
}

static void on_results(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	cli_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->campaign_id = env->results->campaign_id;
	x->req_baseline = kgb_xstrdup(env->results->baseline ? env->results->baseline : "");
	campaign_query(x, results_camp_cb);
}

/* ---- workers, platforms (from memory) ---- */

static void on_workers(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__Envelope out = KGB__ENVELOPE__INIT;
	Kgb__WorkersReply wr = KGB__WORKERS_REPLY__INIT;
	Kgb__WorkerInfo *wi = kgb_xcalloc(c->nworkers + 1, sizeof *wi);
	Kgb__WorkerInfo **wp = kgb_xcalloc(c->nworkers + 1, sizeof *wp);
	Kgb__Device ***dl = kgb_xcalloc(c->nworkers + 1, sizeof *dl);
	Kgb__DeviceLoad ***ll = kgb_xcalloc(c->nworkers + 1, sizeof *ll);
	double now = kgb_now_ms();
	for (size_t i = 0; i < c->nworkers; i++) {
		kgb_cworker_t *w = c->workers[i];
		kgb__worker_info__init(&wi[i]);
		wi[i].worker_id = w->wid;
		wi[i].name = w->name;
		wi[i].hostname = w->hostname;
		wi[i].version = w->version;
		wi[i].alive = w->alive;
		wi[i].last_seen_ms_ago = (int64_t)(now - w->last_seen_ms);
		wi[i].python = w->python;
		wi[i].python_note = w->python_note ? w->python_note : "";
		wi[i].results_refused = w->results_refused;
		wi[i].untrusted = w->untrusted;
		wi[i].drained = w->drained;
		wi[i].native = w->native;
		wi[i].native_note = w->native_note ? w->native_note : "";
		dl[i] = kgb_xcalloc(w->ndevs + 1, sizeof **dl);
		uint32_t running = 0;
		for (size_t k = 0; k < w->ndevs; k++) {
			dl[i][k] = w->devs[k].info;
			running += w->devs[k].running;
		}
		wi[i].n_devices = w->ndevs;
		wi[i].devices = dl[i];
		wi[i].running_jobs = running;
		ll[i] = kgb_xcalloc(w->nload + 1, sizeof **ll);
		for (size_t k = 0; k < w->nload; k++)
			ll[i][k] = &w->load[k];
		wi[i].n_load = w->nload;
		wi[i].load = ll[i];
		wp[i] = &wi[i];
	}
	wr.n_workers = c->nworkers;
	wr.workers = wp;
	out.seq = env->seq;
	out.body_case = KGB__ENVELOPE__BODY_WORKERS_REPLY;
	out.workers_reply = &wr;
	reply(c, peer, &out, "WorkersReply");
	for (size_t i = 0; i < c->nworkers; i++) {
		free(dl[i]);
		free(ll[i]);
	}
	free(dl);
	free(ll);
	free(wp);
	free(wi);
}

static void on_platforms(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__Envelope out = KGB__ENVELOPE__INIT;
	Kgb__PlatformsReply pr = KGB__PLATFORMS_REPLY__INIT;
	Kgb__PlatformInfo *pi = kgb_xcalloc(c->nplats + 1, sizeof *pi);
	Kgb__PlatformInfo **pp = kgb_xcalloc(c->nplats + 1, sizeof *pp);
	for (size_t i = 0; i < c->nplats; i++) {
		kgb_cplat_t *p = c->plats[i];
		kgb__platform_info__init(&pi[i]);
		pi[i].name = p->name;
		pi[i].backend = p->backend;
		pi[i].device_name = p->device_name;
		pi[i].arch = p->arch;
		pi[i].retired = p->retired;
		for (size_t w = 0; w < c->nworkers; w++)
			for (size_t k = 0; k < c->workers[w]->ndevs; k++)
				if (c->workers[w]->devs[k].plat == p) {
					pi[i].devices++;
					if (c->workers[w]->alive)
						pi[i].live_devices++;
				}
		kgb_coord_plat_counts(c, p, &pi[i].queued_jobs, &pi[i].running_jobs);
		pp[i] = &pi[i];
	}
	pr.n_platforms = c->nplats;
	pr.platforms = pp;
	out.seq = env->seq;
	out.body_case = KGB__ENVELOPE__BODY_PLATFORMS_REPLY;
	out.platforms_reply = &pr;
	reply(c, peer, &out, "PlatformsReply");
	free(pp);
	free(pi);
}

/* ---- cancel ---- */

static void cancel_reply(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, bool ok, uint32_t n,
                         const char *error)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__CancelReply cr = KGB__CANCEL_REPLY__INIT;
	cr.ok = ok;
	cr.jobs_cancelled = n;
	cr.error = (char *)(error ? error : "");
	env.seq = seq;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL_REPLY;
	env.cancel_reply = &cr;
	reply(c, peer, &env, "CancelReply");
}

static void cancel_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	kgb_coord_t *c = x->c;
	if (err || PQntuples(res) != 1) {
		cancel_reply(c, &x->peer, x->seq, false, 0, err ? err : "no row");
		ctx_free(x);
		return;
	}
	int camps = atoi(PQgetvalue(res, 0, 0));
	if (camps == 0) {
		char msg[160];
		if (PQgetisnull(res, 0, 1))
			snprintf(msg, sizeof msg, "no campaign %" PRIu64, x->campaign_id);
		else
			snprintf(msg, sizeof msg, "campaign %" PRIu64 " is already %s", x->campaign_id, PQgetvalue(res, 0, 1));
		cancel_reply(c, &x->peer, x->seq, false, 0, msg);
		ctx_free(x);
		return;
	}
	/* the campaign row says cancelled (nothing of it is assigned or recorded from now
	 * on): answer now, and mark its jobs in the store in slices (docs/scheduler.md,
	 * "Cancel") */
	double t0 = kgb_now_ms();
	kgb_ccamp_t *camp = kgb_coord_camp(c, x->campaign_id);
	uint64_t *ids = NULL;
	size_t jobs = camp ? kgb_coord_camp_drop(c, camp, &ids) : 0;
	cancel_reply(c, &x->peer, x->seq, true, (uint32_t)jobs, NULL);
	log_info("campaign=%" PRIu64 " cancelled: %zu open jobs dropped in %.1f ms, answered %.1f ms after the "
	         "request", x->campaign_id, jobs, kgb_now_ms() - t0, kgb_now_ms() - x->t_req);
	kgb_coord_cancel_jobs(c, x->campaign_id, ids, jobs);
	ctx_free(x);
}

/* Cancel or drain: the jobs of some platforms end, the campaign goes on (and is done
 * when nothing is left). Rows: platform id, platform name, jobs cancelled; then the
 * campaign's state in every row (none: no open campaign of that id). */
static void cancel_plats_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	kgb_coord_t *c = x->c;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__CancelReply cr = KGB__CANCEL_REPLY__INIT;
	int n = err ? 0 : PQntuples(res);
	char **names = kgb_xcalloc((size_t)n + 1, sizeof *names);
	int *ids = kgb_xcalloc((size_t)n + 1, sizeof *ids);
	char msg[300];
	cr.ok = true;
	cr.error = "";
	if (err) {
		cr.ok = false;
		cr.error = (char *)err;
	}
	for (int r = 0; r < n; r++) {
		ids[r] = atoi(PQgetvalue(res, r, 0));
		names[r] = PQgetvalue(res, r, 1);
		cr.jobs_cancelled += (uint32_t)atoi(PQgetvalue(res, r, 2));
	}
	cr.n_platforms = (size_t)n;
	cr.platforms = names;
	kgb_ccamp_t *camp = kgb_coord_camp(c, x->campaign_id);
	if (!err && n > 0 && camp)
		kgb_coord_camp_drop_platforms(c, camp, ids, (size_t)n);
	if (!err && n == 0) {
		cr.ok = false;
		if (x->drain)
			snprintf(msg, sizeof msg, "campaign %" PRIu64 " has no jobs waiting on a platform without a live worker",
			         x->campaign_id);
		else
			snprintf(msg, sizeof msg, "campaign %" PRIu64 " has no open jobs on platform %s", x->campaign_id,
			         x->platform);
		cr.error = msg;
	}
	cr.campaign_state = camp ? (camp->open_jobs == 0 ? "done" : "running") : "";
	log_info("campaign=%" PRIu64 " %s: %u jobs cancelled on %d platforms", x->campaign_id,
	         x->drain ? "drained" : "platform cancelled", cr.jobs_cancelled, n);
	env.seq = x->seq;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL_REPLY;
	env.cancel_reply = &cr;
	reply(c, &x->peer, &env, "CancelReply");
	free(names);
	free(ids);
	ctx_free(x);
}

static void cancel_platforms(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env, cli_ctx_t *x)
{
	kgb_ccamp_t *camp = kgb_coord_camp(c, x->campaign_id);
	char msg[700];
	if (!camp || (camp->state != KGB_CAMP_QUEUED && camp->state != KGB_CAMP_RUNNING)) {
		snprintf(msg, sizeof msg, "campaign %" PRIu64 " is not open (no such campaign, or it is done or cancelled)",
		         x->campaign_id);
		cancel_reply(c, peer, env->seq, false, 0, msg);
		ctx_free(x);
		return;
	}
	json_t *ids = json_array();
	if (x->drain) {
		for (size_t i = 0; i < c->nplats; i++)
			if (!plat_live(c, c->plats[i]))
				json_array_append_new(ids, json_integer(c->plats[i]->id));
	} else {
		kgb_cplat_t *p = kgb_coord_plat_by_name(c, x->platform);
		if (!p) {
			char known[500] = "";
			for (size_t i = 0; i < c->nplats; i++) {
				size_t k = strlen(known);
				snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "", c->plats[i]->name);
			}
			snprintf(msg, sizeof msg, "--platform: unknown platform '%s' (known: %s)", x->platform,
			         known[0] ? known : "none");
			cancel_reply(c, peer, env->seq, false, 0, msg);
			json_decref(ids);
			ctx_free(x);
			return;
		}
		json_array_append_new(ids, json_integer(p->id));
	}
	char *js = json_dumps(ids, JSON_COMPACT);
	json_decref(ids);
	const char *p[2] = {kgb_coord_u64(x->campaign_id), js};
	kgb_db_query(c->db, KGB_DB_RETRY, cancel_plats_cb, x,
	             "WITH j AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL "
	             "WHERE campaign_id = $1 AND is_open "
	             "AND platform_id IN (SELECT value::int FROM jsonb_array_elements_text($2::jsonb)) "
	             "RETURNING platform_id) "
	             "SELECT p.id, p.name, count(*) FROM j JOIN platforms p ON p.id = j.platform_id "
	             "GROUP BY p.id, p.name ORDER BY p.name",
	             2, p);
	free(js);
}

static void on_cancel(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	cli_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->campaign_id = env->cancel->campaign_id;
	x->t_req = kgb_now_ms();
	if (env->cancel->drain || (env->cancel->platform && env->cancel->platform[0])) {
		x->drain = env->cancel->drain;
		x->platform = kgb_xstrdup(env->cancel->platform ? env->cancel->platform : "");
		cancel_platforms(c, peer, env, x);
		return;
	}
	const char *p[1] = {kgb_coord_u64(x->campaign_id)};
	kgb_db_query(c->db, KGB_DB_RETRY, cancel_cb, x,
	             "WITH k AS (UPDATE campaigns SET state = 'cancelled', finished_at = now() "
	             "WHERE id = $1 AND state IN ('queued', 'running') RETURNING id) "
	             "SELECT (SELECT count(*) FROM k), (SELECT state FROM campaigns WHERE id = $1)",
	             1, p);
}

/* ---- show: the cases of one operator (views of migration 0003) ---- */

static void show_reply(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, Kgb__ShowReply *sr)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = KGB__ENVELOPE__BODY_SHOW_REPLY;
	env.show_reply = sr;
	reply(c, peer, &env, "ShowReply");
}

static void show_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	Kgb__ShowReply sr = KGB__SHOW_REPLY__INIT;
	sr.baseline = x->baseline ? x->baseline : "native";
	sr.seed = x->seed;
	sr.seed_state = (char *)(x->seed_state ? x->seed_state : "");
	if (err) {
		sr.error = (char *)err;
		show_reply(x->c, &x->peer, x->seq, &sr);
		ctx_free(x);
		return;
	}
	int n = PQntuples(res);
	Kgb__CaseRow *rows = kgb_xcalloc((size_t)n + 1, sizeof *rows);
	Kgb__CaseRow **rp = kgb_xcalloc((size_t)n + 1, sizeof *rp);
	Kgb__NoiseFloor *nf = kgb_xcalloc((size_t)n + 1, sizeof *nf);
	size_t nnf = 0;
	for (int i = 0; i < n; i++) {
		Kgb__CaseRow *r = &rows[i];
		kgb__case_row__init(r);
		r->method = PQgetvalue(res, i, 0);
		r->platform = PQgetvalue(res, i, 1);
		r->case_index = (uint32_t)atoi(PQgetvalue(res, i, 2));
		r->label = PQgetvalue(res, i, 3);
		r->verdict = PQgetvalue(res, i, 4);
		r->message = PQgetvalue(res, i, 5);
		r->timed = PQgetvalue(res, i, 6)[0] == 't';
		r->median_ns = PQgetisnull(res, i, 7) ? 0 : kgb_coord_pq_f64(PQgetvalue(res, i, 7));
		r->rse = PQgetisnull(res, i, 8) ? 0 : kgb_coord_pq_f64(PQgetvalue(res, i, 8));
		r->speedup = PQgetisnull(res, i, 9) ? 0 : kgb_coord_pq_f64(PQgetvalue(res, i, 9));
		r->speedup_rse = PQgetisnull(res, i, 10) ? 0 : kgb_coord_pq_f64(PQgetvalue(res, i, 10));
		r->noise_floor = floor_col(res, i, 13);
		r->tie = speedup_tie(r->speedup, r->speedup_rse, r->noise_floor);
		r->worker = PQgetvalue(res, i, 11);
		collect_floor(res, i, 12, r->platform, nf, &nnf);
		rp[i] = r;
	}
	if (n > 0 && x->with_log && !PQgetisnull(res, 0, 19))
		sr.log = PQgetvalue(res, 0, 19);
	sr.n_rows = (size_t)n;
	sr.rows = rp;
	sr.n_noise_floors = nnf;
	sr.noise_floors = floor_ptrs(nf, nnf);
	if (n == 0)
		sr.error = "no results for this campaign and operator (yet)";
	show_reply(x->c, &x->peer, x->seq, &sr);
	free(sr.noise_floors);
	free(nf);
	free(rows);
	free(rp);
	ctx_free(x);
}

/* The cases of one operator, each with its speedup against the baseline timing of the
 * same case (the results query's per-case terms); none for the baseline itself. */
static void show_camp_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	char msg[512];
	if (!resolve_baseline(x, res, err, msg, sizeof msg)) {
		Kgb__ShowReply sr = KGB__SHOW_REPLY__INIT;
		sr.error = msg;
		show_reply(x->c, &x->peer, x->seq, &sr);
		ctx_free(x);
		return;
	}
	const char *p[7] = {kgb_coord_u64(x->campaign_id), x->baseline, x->op, x->method ? x->method : "",
	                    x->platform ? x->platform : "", x->failing ? "true" : "false", x->with_log ? "true" : "false"};
	kgb_db_query(x->c->db, KGB_DB_RETRY, show_cb, x,
	             "WITH " RESULTS_AND_BASE_CTE
	             "SELECT c.method, p.name, res.case_index, COALESCE(res.label, ''), res.verdict, res.message, "
	             "res.timed, res.median_ns, res.rse, b.median_ns / res.median_ns, sqrt(res.rse ^ 2 + b.rse ^ 2), "
	             "COALESCE(w.name, ''), " NOISE_FLOOR_SQL ", "
	             /* with_log: one text for the reply (an InitPlan, computed once), the
	              * last 4 KiB of each job's log */
	             "CASE WHEN $7::bool THEN (SELECT string_agg(format('== job %s (%s, %s, cases %s-%s)', j.id, "
	             "jc.method, jp.name, j.case_lo, j.case_hi - 1) || E'\\n' || right(j.log, 4096), E'\\n' ORDER BY j.id) "
	             "FROM jobs j JOIN candidates jc ON jc.id = j.candidate_id JOIN platforms jp ON jp.id = j.platform_id "
	             "WHERE j.campaign_id = $1::bigint AND jc.op = $3 AND ($4 = '' OR jc.method = $4) "
	             "AND ($5 = '' OR jp.name = $5) AND COALESCE(j.log, '') <> '') END "
	             "FROM res JOIN candidates c ON c.id = res.candidate_id JOIN platforms p ON p.id = res.platform_id "
	             "LEFT JOIN workers w ON w.id = res.worker_id "
	             "LEFT JOIN LATERAL kgb_noise_floor(p.id, $1::bigint) nf ON true "
	             "LEFT JOIN base b ON b.op = c.op AND b.platform_id = res.platform_id "
	             "AND b.case_index = res.case_index AND res.verdict = 'pass' AND res.timed AND res.median_ns > 0 "
	             "AND NOT " IS_BASELINE_SQL " "
	             "WHERE c.op = $3 AND ($4 = '' OR c.method = $4) "
	             "AND ($5 = '' OR p.name = $5) AND (NOT $6::bool OR res.verdict <> 'pass') "
	             "ORDER BY c.method, p.name, res.case_index",
	             7, p);
}

static void on_show(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__ShowRequest *q = env->show;
	if (!q->op || !kgb_catalog_find(q->op)) {
		Kgb__ShowReply sr = KGB__SHOW_REPLY__INIT;
		char msg[200];
		snprintf(msg, sizeof msg, "unknown operator '%s' (kgb ops lists them)", q->op ? q->op : "");
		sr.error = msg;
		show_reply(c, peer, env->seq, &sr);
		return;
	}
	cli_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->campaign_id = q->campaign_id;
	x->req_baseline = kgb_xstrdup(q->baseline ? q->baseline : "");
	x->op = kgb_xstrdup(q->op);
	x->method = kgb_xstrdup(q->method ? q->method : "");
	x->platform = kgb_xstrdup(q->platform ? q->platform : "");
	x->failing = q->failing_only;
	x->with_log = q->with_log;
	campaign_query(x, show_camp_cb);
}

/* ---- show-manifest ---- */

static void manifest_cb(PGresult *res, const char *err, void *arg)
{
	cli_ctx_t *x = arg;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__ManifestReply mr = KGB__MANIFEST_REPLY__INIT;
	char msg[64];
	if (err) {
		mr.error = (char *)err;
	} else if (PQntuples(res) == 0) {
		snprintf(msg, sizeof msg, "no campaign %" PRIu64, x->campaign_id);
		mr.error = msg;
	} else {
		mr.manifest_json = PQgetvalue(res, 0, 0);
		mr.origin = PQgetvalue(res, 0, 1);
	}
	env.seq = x->seq;
	env.body_case = KGB__ENVELOPE__BODY_MANIFEST_REPLY;
	env.manifest_reply = &mr;
	reply(x->c, &x->peer, &env, "ManifestReply");
	ctx_free(x);
}

static void on_manifest(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	cli_ctx_t *x = kgb_creq_new(sizeof *x, c, peer, env->seq);
	x->campaign_id = env->manifest->campaign_id;
	const char *p[1] = {kgb_coord_u64(x->campaign_id)};
	kgb_db_query(c->db, KGB_DB_RETRY, manifest_cb, x, "SELECT manifest::text, origin FROM campaigns WHERE id = $1",
	             1, p);
}

/* ---- who may touch a campaign (docs/security.md, "Users and roles") ---- */

static void dispatch(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env);

/* The campaign a request acts on that is not the client's to act on unless it owns it
 * or is an admin: cancel and drain name it, rerun names its source. 0: none. */
static uint64_t campaign_acted_on(const Kgb__Envelope *env)
{
	if (env->body_case == KGB__ENVELOPE__BODY_CANCEL)
		return env->cancel->campaign_id;
	if (env->body_case == KGB__ENVELOPE__BODY_SUBMIT)
		return env->submit->parent_campaign_id;
	if (env->body_case == KGB__ENVELOPE__BODY_ADMIN) /* hold, release */
		return env->admin->campaign_id;
	return 0;
}

typedef struct authz {
	kgb_coord_t *c;
	kgb_zpeer_t peer;
	Kgb__Envelope *env;    /* owned: the request, handled once the owner is known */
	uint64_t campaign_id;
} authz_t;

static void authz_refuse(authz_t *a, const char *why)
{
	Kgb__Envelope out = KGB__ENVELOPE__INIT;
	out.seq = a->env->seq;
	if (a->env->body_case == KGB__ENVELOPE__BODY_CANCEL) {
		Kgb__CancelReply cr = KGB__CANCEL_REPLY__INIT;
		cr.error = (char *)why;
		out.body_case = KGB__ENVELOPE__BODY_CANCEL_REPLY;
		out.cancel_reply = &cr;
		reply(a->c, &a->peer, &out, "CancelReply");
	} else if (a->env->body_case == KGB__ENVELOPE__BODY_ADMIN) {
		Kgb__AdminReply ar = KGB__ADMIN_REPLY__INIT;
		ar.error = (char *)why;
		out.body_case = KGB__ENVELOPE__BODY_ADMIN_REPLY;
		out.admin_reply = &ar;
		reply(a->c, &a->peer, &out, "AdminReply");
	} else {
		Kgb__SubmitReply sr = KGB__SUBMIT_REPLY__INIT;
		sr.error = (char *)why;
		out.body_case = KGB__ENVELOPE__BODY_SUBMIT_REPLY;
		out.submit_reply = &sr;
		reply(a->c, &a->peer, &out, "SubmitReply");
	}
}

static void authz_cb(PGresult *res, const char *err, void *arg)
{
	authz_t *a = arg;
	const char *what = a->env->body_case == KGB__ENVELOPE__BODY_SUBMIT  ? "rerun"
	                   : a->env->body_case == KGB__ENVELOPE__BODY_ADMIN ? a->env->admin->action
	                   : a->env->cancel->drain                         ? "drain"
	                                                                   : "cancel";
	char why[512];
	if (err) {
		snprintf(why, sizeof why, "the coordinator could not read campaign %" PRIu64 "'s owner: %s", a->campaign_id,
		         err);
		authz_refuse(a, why);
	} else if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), a->peer.user) != 0) {
		snprintf(why, sizeof why,
		         "campaign %" PRIu64 " belongs to '%.64s': user '%s' may %s only its own campaigns (an admin may "
		         "%s any: role=admin on its key's line of the CLI allowlist, or the coordinator's own user on an "
		         "ipc:// endpoint)",
		         a->campaign_id, PQgetvalue(res, 0, 0), a->peer.user, what, what);
		log_warn("cli peer=%s user=%s: %s refused: %s", kgb_zpeer_str(&a->peer), a->peer.user, what, why);
		authz_refuse(a, why);
	} else {
		dispatch(a->c, &a->peer, a->env); /* its own campaign, or none of that id: the handler says so */
	}
	kgb_wire_free(a->env);
	free(a);
}

/* ---- dispatch ---- */

void kgb_coord_on_cli_msg(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data, size_t len, bool layout_bad,
                          void *arg)
{
	static const kgb_coord_sockdesc_t sock = { "cli ", "", "[identity][envelope] or [identity][][envelope]",
		                                       KGB_MAX_FRAME_CLI };
	kgb_coord_t *c = arg;
	Kgb__Envelope *env = kgb_coord_envelope_in(c, zs, peer, data, len, layout_bad, &sock);
	if (!env)
		return;
	uint64_t acted_on = campaign_acted_on(env);
	if (acted_on && peer->authenticated && !peer->admin) {
		authz_t *a = kgb_xcalloc(1, sizeof *a);
		a->c = c;
		a->peer = *peer;
		a->env = env;
		a->campaign_id = acted_on;
		const char *p[1] = {kgb_coord_u64(acted_on)};
		kgb_db_query(c->db, KGB_DB_RETRY, authz_cb, a, "SELECT owner FROM campaigns WHERE id = $1", 1, p);
		return;
	}
	dispatch(c, peer, env);
	kgb_wire_free(env);
}

static void dispatch(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	static const struct {
		Kgb__Envelope__BodyCase body;
		void (*on)(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env);
	} handlers[] = {
		{ KGB__ENVELOPE__BODY_SUBMIT, on_submit },       { KGB__ENVELOPE__BODY_STATUS, on_status },
		{ KGB__ENVELOPE__BODY_RESULTS, on_results },     { KGB__ENVELOPE__BODY_WORKERS, on_workers },
		{ KGB__ENVELOPE__BODY_PLATFORMS, on_platforms }, { KGB__ENVELOPE__BODY_CANCEL, on_cancel },
		{ KGB__ENVELOPE__BODY_SHOW, on_show },           { KGB__ENVELOPE__BODY_MANIFEST, on_manifest },
		{ KGB__ENVELOPE__BODY_TABLES, kgb_coord_on_tables },
	};
	for (size_t i = 0; i < KGB_ARRAY_LEN(handlers); i++)
		if (handlers[i].body == env->body_case) {
			handlers[i].on(c, peer, env);
			return;
		}
	if (!kgb_coord_on_gen_msg(c, peer, env) && !kgb_coord_on_ops_msg(c, peer, env))
		kgb_coord_refuse_type(c->csock, peer, env, "CLI", "cli ");
}
