/* Start-up against the store: schema migrations (under an advisory lock, one
 * transaction each) and loading the open state into memory. */
#include "coord.h"
#include "langs.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "log.h"
#include "migrations.h"
#include "util.h"

#define MIGRATION_LOCK "4242017001"

typedef struct mig_ctx {
	kgb_coord_t *c;
	kgb_coord_done_fn done;
	int *applied;      /* applied[i]: migration i is recorded */
	size_t next;
	int napplied;
} mig_ctx_t;

static void mig_finish(mig_ctx_t *m, int rc)
{
	kgb_coord_t *c = m->c;
	kgb_coord_done_fn done = m->done;
	free(m->applied);
	free(m);
	kgb_db_exec(c->db, KGB_DB_RETRY, NULL, NULL, "SELECT pg_advisory_unlock(" MIGRATION_LOCK ")");
	done(c, rc);
}

static void mig_next(mig_ctx_t *m);

static void mig_applied_cb(PGresult *res, const char *err, void *arg)
{
	(void)res;
	mig_ctx_t *m = arg;
	const kgb_migration_t *mg = &kgb_migrations[m->next];
	if (err) {
		log_error("store: migration %s failed: %s", mg->name, err);
		kgb_db_exec(m->c->db, 0, NULL, NULL, "ROLLBACK");
		mig_finish(m, -1);
		return;
	}
	log_info("store: applied migration %s", mg->name);
	m->napplied++;
	m->next++;
	mig_next(m);
}

static void mig_next(mig_ctx_t *m)
{
	while (m->next < kgb_migrations_count && m->applied[m->next])
		m->next++;
	if (m->next >= kgb_migrations_count) {
		if (m->napplied == 0)
			log_info("store: schema up to date (%zu migrations)", kgb_migrations_count);
		mig_finish(m, 0);
		return;
	}
	const kgb_migration_t *mg = &kgb_migrations[m->next];
	char *sql = kgb_xasprintf("BEGIN;\n%s\n;INSERT INTO schema_migrations (version, name) VALUES (%d, '%s');\nCOMMIT;",
	                          mg->sql, mg->version, mg->name);
	kgb_db_exec(m->c->db, 0, mig_applied_cb, m, sql);
	free(sql);
}

static void mig_list_cb(PGresult *res, const char *err, void *arg)
{
	mig_ctx_t *m = arg;
	if (err) {
		log_error("store: reading schema_migrations: %s", err);
		mig_finish(m, -1);
		return;
	}
	int maxknown = 0;
	for (size_t i = 0; i < kgb_migrations_count; i++)
		maxknown = KGB_MAX(maxknown, kgb_migrations[i].version);
	for (int r = 0; r < PQntuples(res); r++) {
		int v = atoi(PQgetvalue(res, r, 0));
		bool known = false;
		for (size_t i = 0; i < kgb_migrations_count; i++)
			if (kgb_migrations[i].version == v) {
				m->applied[i] = 1;
				known = true;
			}
		if (!known && v > maxknown)
			log_warn("store: schema has migration %d, newer than this coordinator knows (%d)", v, maxknown);
	}
	mig_next(m);
}

static void mig_lock_cb(PGresult *res, const char *err, void *arg)
{
	(void)res;
	mig_ctx_t *m = arg;
	if (err) {
		log_error("store: preparing migrations: %s", err);
		mig_finish(m, -1);
		return;
	}
	kgb_db_query(m->c->db, 0, mig_list_cb, m, "SELECT version FROM schema_migrations ORDER BY version", 0, NULL);
}

void kgb_coord_migrate(kgb_coord_t *c, kgb_coord_done_fn done)
{
	mig_ctx_t *m = kgb_xcalloc(1, sizeof *m);
	m->c = c;
	m->done = done;
	m->applied = kgb_xcalloc(kgb_migrations_count + 1, sizeof *m->applied);
	/* applied in the table's order (file names sorted); a lettered migration such as
	 * 0006a has version 601 (scripts/embed-migrations.sh), so versions are unique but
	 * not increasing */
	for (size_t i = 1; i < kgb_migrations_count; i++)
		for (size_t k = 0; k < i; k++)
			KGB_ASSERT_MSG(kgb_migrations[i].version != kgb_migrations[k].version, "migrations %s and %s share version %d",
			               kgb_migrations[k].name, kgb_migrations[i].name, kgb_migrations[i].version);
	kgb_db_exec(c->db, 0, mig_lock_cb, m,
	            "SELECT pg_advisory_lock(" MIGRATION_LOCK ");"
	            "CREATE TABLE IF NOT EXISTS schema_migrations ("
	            " version integer PRIMARY KEY, name text NOT NULL,"
	            " applied_at timestamptz NOT NULL DEFAULT now())");
}

/* ---- loading ---- */

/* A submitted campaign's jobs are read in pages of this many job ids (a primary-key
 * range each), one statement per loop turn, so a 250k-job campaign does not hold the
 * loop for one long callback; see docs/scheduler.md, "Large campaigns". */
#define LOAD_PAGE_IDS 5000

typedef struct load_ctx {
	kgb_coord_t *c;
	uint64_t camp_id;   /* 0: everything */
	kgb_coord_done_fn done;
	uint64_t first_job, last_job; /* the submit's job ids, loaded in pages; 0: one query */
	uint64_t next_job;  /* the next page starts here */
	size_t loaded;
	/* after a submit: the platforms its statement made jobs for (it made all of a
	 * platform's or none), which need no expansion pass */
	bool *has_jobs;
	size_t nhas;
	double t0_ms;
	size_t pages;
} load_ctx_t;

static const char *camp_param(load_ctx_t *l)
{
	return l->camp_id ? kgb_coord_u64(l->camp_id) : NULL;
}

static void load_ctx_free(load_ctx_t *l)
{
	free(l->has_jobs);
	free(l);
}

static void load_fail(load_ctx_t *l, const char *what, const char *err)
{
	log_error("store: loading %s: %s", what, err);
	kgb_coord_done_fn done = l->done;
	kgb_coord_t *c = l->c;
	load_ctx_free(l);
	if (done)
		done(c, -1);
}

static void cancel_resume_cb(PGresult *res, const char *err, void *arg)
{
	kgb_coord_t *c = arg;
	if (err) {
		log_error("store: looking for unfinished cancels: %s", err);
		return;
	}
	for (int r = 0; r < PQntuples(res); r++)
		kgb_coord_cancel_jobs(c, kgb_coord_pq_u64(PQgetvalue(res, r, 0)), NULL, 0);
}

/* The columns jobs_rows reads, then the query's FROM and WHERE. */
#define JOB_COLUMNS                                                                                    \
	"SELECT id, campaign_id, candidate_id, platform_id, case_lo, case_hi, state, epoch, attempts, "     \
	"COALESCE(worker_id, 0), " KGB_SQL_NOT_BEFORE_MS " "

/* Jobs rows (id, campaign_id, candidate_id, platform_id, case_lo, case_hi, state,
 * epoch, attempts, worker_id, delay ms) into memory. */
static void jobs_rows(load_ctx_t *l, PGresult *res)
{
	kgb_coord_t *c = l->c;
	if (l->nhas < c->nplats) {
		l->has_jobs = kgb_xrealloc(l->has_jobs, (c->nplats + 1) * sizeof *l->has_jobs);
		memset(l->has_jobs + l->nhas, 0, (c->nplats + 1 - l->nhas) * sizeof *l->has_jobs);
		l->nhas = c->nplats;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, r, 0));
		kgb_ccamp_t *camp = kgb_coord_camp(c, kgb_coord_pq_u64(PQgetvalue(res, r, 1)));
		if (!camp || camp->state == KGB_CAMP_CANCELLED)
			continue;
		const kgb_ccand_t *cand = kgb_coord_cand(camp, kgb_coord_pq_u64(PQgetvalue(res, r, 2)));
		kgb_cplat_t *plat = kgb_coord_plat(c, atoi(PQgetvalue(res, r, 3)));
		if (!cand || !plat) {
			log_warn("job=%" PRIu64 " refers to an unknown candidate or platform; skipped", id);
			continue;
		}
		for (size_t k = 0; l->camp_id && k < c->nplats && k < l->nhas; k++)
			if (c->plats[k] == plat)
				l->has_jobs[k] = true;
		if (kgb_coord_job_load(c, id, camp, cand, plat, (uint32_t)atoi(PQgetvalue(res, r, 4)),
		                       (uint32_t)atoi(PQgetvalue(res, r, 5)), PQgetvalue(res, r, 6),
		                       kgb_coord_pq_u64(PQgetvalue(res, r, 7)), (uint32_t)atoi(PQgetvalue(res, r, 8)),
		                       kgb_coord_pq_u64(PQgetvalue(res, r, 9)), kgb_coord_pq_f64(PQgetvalue(res, r, 10))))
			l->loaded++;
	}
}

static void jobs_finish(load_ctx_t *l)
{
	kgb_coord_t *c = l->c;
	if (l->camp_id == 0)
		log_info("store: %zu open campaigns, %zu queued or running jobs loaded", c->ncamps, l->loaded);
	else if (l->pages)
		log_info("campaign=%" PRIu64 " loaded: %zu jobs in memory, %zu pages in %.0f ms", l->camp_id, l->loaded,
		         l->pages, kgb_now_ms() - l->t0_ms);
	else
		log_info("campaign=%" PRIu64 " loaded: %zu jobs in memory", l->camp_id, l->loaded);
	/* jobs for platforms that appeared while nobody expanded them (and catch-up after
	 * a crash between the platform's insert and its expansion) */
	for (size_t i = 0; i < c->ncamps; i++) {
		kgb_ccamp_t *camp = c->camps[i];
		if (l->camp_id && camp->id != l->camp_id)
			continue;
		if (camp->state == KGB_CAMP_CANCELLED)
			continue;
		for (size_t k = 0; k < c->nplats; k++)
			if (!(k < l->nhas && l->has_jobs[k]) && kgb_coord_camp_matches(camp, c->plats[k]->name))
				kgb_coord_expand(c, camp, c->plats[k]);
	}
	kgb_coord_done_fn done = l->done;
	uint64_t only = l->camp_id;
	load_ctx_free(l);
	if (!only) /* cancels cut short by a stop: finish marking their jobs */
		kgb_db_query(c->db, KGB_DB_RETRY, cancel_resume_cb, c,
		             "SELECT DISTINCT j.campaign_id FROM jobs j JOIN campaigns k ON k.id = j.campaign_id "
		             "WHERE j.is_open AND k.state = 'cancelled'",
		             0, NULL);
	if (done)
		done(c, 0);
	for (size_t i = 0; i < c->ncamps; i++)
		if (!only || c->camps[i]->id == only)
			kgb_coord_camp_check_done(c, c->camps[i]);
	kgb_coord_kick(c);
}

static void jobs_cb(PGresult *res, const char *err, void *arg)
{
	load_ctx_t *l = arg;
	if (err) {
		load_fail(l, "jobs", err);
		return;
	}
	jobs_rows(l, res);
	jobs_finish(l);
}

static void jobs_page_query(load_ctx_t *l);

/* One page of a submitted campaign's jobs; the next page is queued from here, so the
 * loop serves everything else between pages. */
static void jobs_page_cb(PGresult *res, const char *err, void *arg)
{
	load_ctx_t *l = arg;
	if (err) {
		load_fail(l, "jobs", err);
		return;
	}
	l->pages++;
	jobs_rows(l, res);
	kgb_coord_kick(l->c); /* idle workers may take this page's jobs now */
	kgb_ccamp_t *camp = kgb_coord_camp(l->c, l->camp_id);
	/* a campaign cancelled meanwhile: its cancel swept the store for what memory did
	 * not hold, so the pages left have nothing to load */
	if (!camp || camp->state == KGB_CAMP_CANCELLED || l->next_job > l->last_job) {
		jobs_finish(l);
		return;
	}
	jobs_page_query(l);
}

static void jobs_page_query(load_ctx_t *l)
{
	uint64_t lo = l->next_job;
	uint64_t hi = lo + LOAD_PAGE_IDS - 1 < l->last_job ? lo + LOAD_PAGE_IDS - 1 : l->last_job;
	l->next_job = hi + 1;
	char los[24], his[24];
	snprintf(los, sizeof los, "%" PRIu64, lo);
	snprintf(his, sizeof his, "%" PRIu64, hi);
	const char *p[3] = {camp_param(l), los, his};
	kgb_db_query(l->c->db, KGB_DB_RETRY, jobs_page_cb, l,
	             JOB_COLUMNS "FROM jobs WHERE id BETWEEN $2::bigint AND $3::bigint AND campaign_id = $1::bigint "
	             "AND is_open ORDER BY id",
	             3, p);
}

static void cands_cb(PGresult *res, const char *err, void *arg)
{
	load_ctx_t *l = arg;
	kgb_coord_t *c = l->c;
	if (err) {
		load_fail(l, "candidates", err);
		return;
	}
	int n = PQntuples(res);
	for (int r = 0; r < n; r++) {
		kgb_ccamp_t *camp = kgb_coord_camp(c, kgb_coord_pq_u64(PQgetvalue(res, r, 1)));
		if (!camp)
			continue;
		uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, r, 0));
		if (camp->ncands && camp->cands[camp->ncands - 1].id >= id)
			continue; /* already loaded */
		camp->cands = kgb_xrealloc(camp->cands, (camp->ncands + 1) * sizeof *camp->cands);
		kgb_ccand_t *cd = &camp->cands[camp->ncands++];
		cd->id = id;
		cd->method = kgb_xstrdup(PQgetvalue(res, r, 2));
		cd->op = kgb_xstrdup(PQgetvalue(res, r, 3));
		cd->case_count = (uint32_t)atoi(PQgetvalue(res, r, 4));
		cd->langs = kgb_coord_langs_parse(PQgetvalue(res, r, 5));
		const kgb_op_t *op = kgb_catalog_find(cd->op);
		if (!op)
			log_warn("campaign=%" PRIu64 " candidate %" PRIu64 ": operator '%s' is not in this catalog",
			         camp->id, id, cd->op);
	}
	if (l->camp_id && l->first_job && l->last_job >= l->first_job) {
		l->next_job = l->first_job;
		l->t0_ms = kgb_now_ms();
		jobs_page_query(l);
		return;
	}
	const char *p[1] = {camp_param(l)};
	kgb_db_query(c->db, KGB_DB_RETRY, jobs_cb, l,
	             JOB_COLUMNS "FROM jobs WHERE is_open AND ($1::bigint IS NULL OR campaign_id = $1) ORDER BY id",
	             1, p);
}

static void camps_cb(PGresult *res, const char *err, void *arg)
{
	load_ctx_t *l = arg;
	kgb_coord_t *c = l->c;
	if (err) {
		load_fail(l, "campaigns", err);
		return;
	}
	for (int r = 0; r < PQntuples(res); r++) {
		uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, r, 0));
		if (kgb_coord_camp(c, id))
			continue;
		kgb_ccamp_t *camp = kgb_xcalloc(1, sizeof *camp);
		camp->id = id;
		camp->name = kgb_xstrdup(PQgetvalue(res, r, 1));
		camp->state = strcmp(PQgetvalue(res, r, 2), "running") == 0 ? KGB_CAMP_RUNNING : KGB_CAMP_QUEUED;
		camp->priority = atoi(PQgetvalue(res, r, 3));
		camp->created_ms = (int64_t)kgb_coord_pq_f64(PQgetvalue(res, r, 4));
		camp->seed = kgb_coord_pq_u64(PQgetvalue(res, r, 5));
		camp->seed_legacy = strcmp(PQgetvalue(res, r, 11), "legacy") == 0;
		camp->shard_size = (uint32_t)atoi(PQgetvalue(res, r, 6));
		camp->time_limit_ms = (uint32_t)atoi(PQgetvalue(res, r, 7));
		camp->timing_budget_ms = (uint32_t)atoi(PQgetvalue(res, r, 8));
		camp->timing = PQgetvalue(res, r, 9)[0] == 't';
		camp->held = PQgetvalue(res, r, 12)[0] == 't';
		if (PQgetisnull(res, r, 10)) {
			camp->all_platforms = true;
		} else {
			json_error_t je;
			json_t *a = json_loads(PQgetvalue(res, r, 10), 0, &je);
			size_t i;
			json_t *v;
			json_array_foreach(a, i, v)
			{
				if (!json_is_string(v))
					continue;
				camp->patterns = kgb_xrealloc(camp->patterns, (camp->npatterns + 1) * sizeof *camp->patterns);
				camp->patterns[camp->npatterns++] = kgb_xstrdup(json_string_value(v));
			}
			json_decref(a);
			if (camp->npatterns == 0)
				camp->all_platforms = true;
		}
		kgb_coord_camp_add(c, camp);
	}
	const char *p[1] = {camp_param(l)};
	kgb_db_query(c->db, KGB_DB_RETRY, cands_cb, l,
	             "SELECT c.id, c.campaign_id, c.method, c.op, c.case_count, "
	             "concat_ws(',', CASE WHEN c.plan->>'kind' = 'python' THEN 'python' END, "
	             "(SELECT string_agg(DISTINCT k->>'lang', ',') FROM jsonb_array_elements("
	             "CASE WHEN jsonb_typeof(c.plan->'kernels') = 'array' THEN c.plan->'kernels' ELSE '[]' END) k)) "
	             "FROM candidates c "
	             "JOIN campaigns k ON k.id = c.campaign_id "
	             "WHERE k.state IN ('queued', 'running') AND ($1::bigint IS NULL OR k.id = $1) "
	             "ORDER BY c.campaign_id, c.id",
	             1, p);
}

static void plats_cb(PGresult *res, const char *err, void *arg)
{
	load_ctx_t *l = arg;
	kgb_coord_t *c = l->c;
	if (err) {
		load_fail(l, "platforms", err);
		return;
	}
	for (int r = 0; r < PQntuples(res); r++)
		kgb_coord_plat_add(c, atoi(PQgetvalue(res, r, 0)), PQgetvalue(res, r, 1), PQgetvalue(res, r, 2),
		                   PQgetvalue(res, r, 3), PQgetvalue(res, r, 4))
			->retired = PQgetvalue(res, r, 5)[0] == 't';
	const char *p[1] = {camp_param(l)};
	kgb_db_query(c->db, KGB_DB_RETRY, camps_cb, l,
	             "SELECT id, name, state, priority, EXTRACT(EPOCH FROM created_at) * 1000, seed, shard_size, "
	             "time_limit_ms, timing_budget_ms, timing, platforms::text, seed_kind, held "
	             "FROM campaigns WHERE state IN ('queued', 'running') AND ($1::bigint IS NULL OR id = $1) "
	             "ORDER BY id",
	             1, p);
}

void kgb_coord_load(kgb_coord_t *c, uint64_t campaign_id, kgb_coord_done_fn done)
{
	kgb_coord_load_submitted(c, campaign_id, 0, 0, done);
}

void kgb_coord_load_submitted(kgb_coord_t *c, uint64_t campaign_id, uint64_t first_job, uint64_t last_job,
                              kgb_coord_done_fn done)
{
	load_ctx_t *l = kgb_xcalloc(1, sizeof *l);
	l->c = c;
	l->camp_id = campaign_id;
	l->done = done;
	l->first_job = campaign_id ? first_job : 0;
	l->last_job = campaign_id ? last_job : 0;
	kgb_db_query(c->db, KGB_DB_RETRY, plats_cb, l,
	             "SELECT id, name, backend, device_name, arch, retired_at IS NOT NULL FROM platforms ORDER BY id", 0,
	             NULL);
}
