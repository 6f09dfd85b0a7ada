/* The coordinator's in-memory state: job table, campaign queues per platform,
 * scheduling passes, leases and backoff. The store is the truth; this is the index
 * the scheduler works from, rebuilt from the store at start (load.c). */
#include "coord.h"
#include "langs.h"

#include <ctype.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "log.h"
#include "util.h"

/* ---- small helpers ---- */

char *kgb_coord_platform_name(const char *backend, const char *device_name)
{
	size_t n = strlen(device_name);
	char *slug = kgb_xmalloc(n + 1);
	size_t k = 0;
	bool dash = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)device_name[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z')) {
			if (dash && k > 0)
				slug[k++] = '-';
			dash = false;
			slug[k++] = (char)tolower(ch);
		} else {
			dash = true;
		}
	}
	slug[k] = 0;
	char *r = kgb_xasprintf("%s:%s", backend, k ? slug : "device");
	free(slug);
	return r;
}

static void cc_del(kgb_coord_t *c, uint64_t cand_id);

/* ---- lists ---- */

static size_t job_python(const kgb_cjob_t *j)
{
	return j->cand && (j->cand->langs & KGB_COORD_LANG_PYTHON) ? 1 : 0;
}

static void list_push(kgb_jlist_t *l, kgb_cjob_t *j)
{
	KGB_ASSERT(j->list == NULL);
	j->prev = l->tail;
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	l->n++;
	l->npython += job_python(j);
	j->list = l;
}

static void list_remove(kgb_cjob_t *j)
{
	kgb_jlist_t *l = j->list;
	if (!l)
		return;
	if (j->prev)
		j->prev->next = j->next;
	else
		l->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		l->tail = j->prev;
	l->n--;
	l->npython -= job_python(j);
	j->prev = j->next = NULL;
	j->list = NULL;
}

/* ---- job map ---- */

static size_t slot_of(uint64_t id, size_t cap)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

static void map_put(kgb_coord_t *c, kgb_cjob_t *j);

static void map_grow(kgb_coord_t *c)
{
	size_t oldcap = c->jcap;
	kgb_cjob_t **old = c->jmap;
	c->jcap = oldcap ? oldcap * 2 : 1024;
	c->jmap = kgb_xcalloc(c->jcap, sizeof *c->jmap);
	c->jcount = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			map_put(c, old[i]);
	free(old);
}

static void map_put(kgb_coord_t *c, kgb_cjob_t *j)
{
	if ((c->jcount + 1) * 2 > c->jcap)
		map_grow(c);
	size_t i = slot_of(j->id, c->jcap);
	while (c->jmap[i])
		i = (i + 1) & (c->jcap - 1);
	c->jmap[i] = j;
	c->jcount++;
}

kgb_cjob_t *kgb_coord_job(kgb_coord_t *c, uint64_t id)
{
	if (!c->jcap)
		return NULL;
	size_t i = slot_of(id, c->jcap);
	while (c->jmap[i]) {
		if (c->jmap[i]->id == id)
			return c->jmap[i];
		i = (i + 1) & (c->jcap - 1);
	}
	return NULL;
}

static void map_del(kgb_coord_t *c, uint64_t id)
{
	size_t mask = c->jcap - 1;
	size_t i = slot_of(id, c->jcap);
	while (c->jmap[i] && c->jmap[i]->id != id)
		i = (i + 1) & mask;
	if (!c->jmap[i])
		return;
	c->jmap[i] = NULL;
	c->jcount--;
	/* backward-shift the cluster after the hole */
	size_t k = (i + 1) & mask;
	while (c->jmap[k]) {
		kgb_cjob_t *m = c->jmap[k];
		size_t home = slot_of(m->id, c->jcap);
		bool move = (i <= k) ? (home <= i || home > k) : (home <= i && home > k);
		if (move) {
			c->jmap[i] = m;
			c->jmap[k] = NULL;
			i = k;
		}
		k = (k + 1) & mask;
	}
}

/* ---- lookups ---- */

/* The first element e of the array of pointers arr[0..n) for which cond (an expression
 * of e) holds, or NULL. */
#define FIND_FIRST(arr, n, e, cond)                                                                    \
	({                                                                                                 \
		__typeof__(*(arr)) found_ = NULL;                                                              \
		for (size_t i_ = 0; i_ < (n) && !found_; i_++) {                                               \
			__typeof__(*(arr)) e = (arr)[i_];                                                          \
			if (cond)                                                                                  \
				found_ = e;                                                                            \
		}                                                                                              \
		found_;                                                                                        \
	})

void *kgb_creq_new(size_t size, kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq)
{
	KGB_ASSERT(size >= sizeof(kgb_creq_t));
	kgb_creq_t *x = kgb_xcalloc(1, size);
	x->c = c;
	x->peer = *peer;
	x->seq = seq;
	return x;
}

kgb_ccamp_t *kgb_coord_camp(kgb_coord_t *c, uint64_t id)
{
	return FIND_FIRST(c->camps, c->ncamps, x, x->id == id);
}

kgb_cplat_t *kgb_coord_plat(kgb_coord_t *c, int id)
{
	return FIND_FIRST(c->plats, c->nplats, p, p->id == id);
}

kgb_cplat_t *kgb_coord_plat_by_name(kgb_coord_t *c, const char *name)
{
	return FIND_FIRST(c->plats, c->nplats, p, strcmp(p->name, name) == 0);
}

kgb_cworker_t *kgb_coord_worker(kgb_coord_t *c, uint64_t db_id)
{
	return FIND_FIRST(c->workers, c->nworkers, w, w->db_id == db_id);
}

kgb_cworker_t *kgb_coord_worker_by_wid(kgb_coord_t *c, const char *wid)
{
	return FIND_FIRST(c->workers, c->nworkers, w, strcmp(w->wid, wid) == 0);
}

const kgb_ccand_t *kgb_coord_cand(const kgb_ccamp_t *camp, uint64_t id)
{
	size_t lo = 0, hi = camp->ncands;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (camp->cands[mid].id == id)
			return &camp->cands[mid];
		if (camp->cands[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

kgb_cplat_t *kgb_coord_plat_add(kgb_coord_t *c, int id, const char *name, const char *backend,
                                const char *device_name, const char *arch)
{
	kgb_cplat_t *p = kgb_coord_plat(c, id);
	if (p)
		return p;
	p = kgb_xcalloc(1, sizeof *p);
	p->id = id;
	p->name = kgb_xstrdup(name);
	p->backend = kgb_xstrdup(backend ? backend : "");
	p->device_name = kgb_xstrdup(device_name ? device_name : "");
	p->arch = kgb_xstrdup(arch ? arch : "");
	c->plats = kgb_xrealloc(c->plats, (c->nplats + 1) * sizeof *c->plats);
	c->plats[c->nplats++] = p;
	return p;
}

void kgb_coord_camp_add(kgb_coord_t *c, kgb_ccamp_t *camp)
{
	c->camps = kgb_xrealloc(c->camps, (c->ncamps + 1) * sizeof *c->camps);
	c->camps[c->ncamps++] = camp;
}

bool kgb_coord_camp_matches(const kgb_ccamp_t *camp, const char *platform)
{
	if (camp->all_platforms)
		return true;
	for (size_t i = 0; i < camp->npatterns; i++)
		if (strcmp(camp->patterns[i], platform) == 0 || fnmatch(camp->patterns[i], platform, 0) == 0)
			return true;
	return false;
}

unsigned kgb_coord_camp_unplaced(const kgb_coord_t *c, const kgb_ccamp_t *camp)
{
	unsigned langs = 0;
	for (size_t i = 0; camp->all_platforms && i < camp->ncands; i++) {
		bool any = false;
		for (size_t k = 0; k < c->nplats && !any; k++)
			any = !c->plats[k]->retired && kgb_coord_platform_runs(c->plats[k]->backend, camp->cands[i].langs);
		if (!any)
			langs |= camp->cands[i].langs & ~KGB_COORD_LANG_PYTHON;
	}
	return langs;
}

bool kgb_coord_camp_pending(kgb_coord_t *c, const kgb_ccamp_t *camp)
{
	if (camp->all_platforms)
		return c->nplats == 0 || kgb_coord_camp_unplaced(c, camp) != 0;
	for (size_t i = 0; i < camp->npatterns; i++) {
		bool any = false;
		for (size_t k = 0; k < c->nplats && !any; k++)
			if (strcmp(camp->patterns[i], c->plats[k]->name) == 0 ||
			    fnmatch(camp->patterns[i], c->plats[k]->name, 0) == 0)
				any = true;
		if (!any)
			return true;
	}
	return false;
}

/* ---- campaign queues ---- */

static int cq_cmp(const kgb_cq_t *a, const kgb_cq_t *b)
{
	if (a->camp->priority != b->camp->priority)
		return a->camp->priority > b->camp->priority ? -1 : 1;
	if (a->camp->created_ms != b->camp->created_ms)
		return a->camp->created_ms < b->camp->created_ms ? -1 : 1;
	return a->camp->id < b->camp->id ? -1 : (a->camp->id > b->camp->id);
}

static kgb_cq_t *cq_get(kgb_cplat_t *p, kgb_ccamp_t *camp)
{
	for (size_t i = 0; i < p->ncqs; i++)
		if (p->cqs[i]->camp == camp)
			return p->cqs[i];
	kgb_cq_t *q = kgb_xcalloc(1, sizeof *q);
	q->camp = camp;
	if (p->ncqs == p->capcqs) {
		p->capcqs = p->capcqs ? p->capcqs * 2 : 8;
		p->cqs = kgb_xrealloc(p->cqs, p->capcqs * sizeof *p->cqs);
	}
	size_t at = p->ncqs;
	while (at > 0 && cq_cmp(q, p->cqs[at - 1]) < 0) {
		p->cqs[at] = p->cqs[at - 1];
		at--;
	}
	p->cqs[at] = q;
	p->ncqs++;
	return q;
}

static void cq_drop_camp(kgb_coord_t *c, kgb_ccamp_t *camp)
{
	for (size_t i = 0; i < c->nplats; i++) {
		kgb_cplat_t *p = c->plats[i];
		for (size_t k = 0; k < p->ncqs; k++)
			if (p->cqs[k]->camp == camp) {
				KGB_ASSERT(p->cqs[k]->jobs.n == 0);
				free(p->cqs[k]);
				memmove(&p->cqs[k], &p->cqs[k + 1], (p->ncqs - k - 1) * sizeof *p->cqs);
				p->ncqs--;
				break;
			}
	}
}

/* ---- jobs ---- */

void kgb_coord_job_hold(kgb_cjob_t *j, kgb_cworker_t *w, uint32_t dev)
{
	if (j->worker)
		return;
	j->worker = w;
	j->dev = dev;
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i].index == dev) {
			w->devs[i].running++;
			break;
		}
}

static void job_release(kgb_cjob_t *j)
{
	kgb_cworker_t *w = j->worker;
	if (!w)
		return;
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i].index == j->dev) {
			if (w->devs[i].running > 0)
				w->devs[i].running--;
			break;
		}
	j->worker = NULL;
}

static void job_enqueue(kgb_coord_t *c, kgb_cjob_t *j, double delay_ms)
{
	if (delay_ms > 0) {
		j->st = KGB_JOB_DELAYED;
		j->not_before_ms = kgb_now_ms() + delay_ms;
		list_push(&c->delayed, j);
	} else {
		j->st = KGB_JOB_QUEUED;
		list_push(&cq_get(j->plat, j->camp)->jobs, j);
		kgb_coord_kick(c);
	}
}

kgb_cjob_t *kgb_coord_job_load(kgb_coord_t *c, uint64_t id, kgb_ccamp_t *camp, const kgb_ccand_t *cand,
                               kgb_cplat_t *plat, uint32_t lo, uint32_t hi, const char *state,
                               uint64_t epoch, uint32_t attempts, uint64_t worker_db_id, double delay_ms)
{
	if (kgb_coord_job(c, id))
		return NULL;
	kgb_cjob_t *j = kgb_xcalloc(1, sizeof *j);
	j->id = id;
	j->camp = camp;
	j->cand = cand;
	j->plat = plat;
	j->lo = lo;
	j->hi = hi;
	j->attempts = attempts;
	map_put(c, j);
	camp->open_jobs++;
	if (strcmp(state, "running") == 0) {
		/* a fresh lease from now: the holder renews it or it expires */
		j->st = KGB_JOB_RUNNING;
		kgb_lease_grant(&j->lease, epoch, worker_db_id, kgb_now_ms(), c->cfg.lease_ms);
		kgb_cworker_t *w = worker_db_id ? kgb_coord_worker(c, worker_db_id) : NULL;
		(void)w; /* attached when the worker names the job in Register/Heartbeat */
		list_push(&c->running, j);
	} else {
		/* the last holder's epoch: its late result is still taken (docs/scheduler.md) */
		j->lease.epoch = epoch;
		j->lease.worker = worker_db_id;
		job_enqueue(c, j, delay_ms);
	}
	return j;
}

void kgb_coord_job_settle(kgb_coord_t *c, kgb_cjob_t *j)
{
	(void)c;
	list_remove(j);
	job_release(j);
	j->st = KGB_JOB_SETTLING;
}

void kgb_coord_job_settle_held(kgb_coord_t *c, kgb_cjob_t *j)
{
	(void)c;
	list_remove(j);
	j->st = KGB_JOB_SETTLING;
}

void kgb_coord_job_requeue(kgb_coord_t *c, kgb_cjob_t *j, double delay_ms)
{
	j->result_pending = false;
	list_remove(j);
	job_release(j);
	job_enqueue(c, j, delay_ms);
}

void kgb_coord_job_finish(kgb_coord_t *c, kgb_cjob_t *j)
{
	list_remove(j);
	job_release(j);
	map_del(c, j->id);
	kgb_ccamp_t *camp = j->camp;
	KGB_ASSERT(camp->open_jobs > 0);
	camp->open_jobs--;
	free(j);
	kgb_coord_camp_check_done(c, camp);
	kgb_coord_kick(c);
}

/* ---- resync ---- */

static void resync_cb(PGresult *res, const char *err, void *arg)
{
	uint64_t *a = arg;
	kgb_coord_t *c = (kgb_coord_t *)(uintptr_t)a[0];
	uint64_t id = a[1];
	free(a);
	kgb_cjob_t *j = kgb_coord_job(c, id);
	if (!j)
		return;
	if (err) {
		log_error("job=%" PRIu64 " resync failed: %s; retrying on the next lease check", id, err);
		/* put it under a short lease: the expiry path tries again */
		list_remove(j);
		j->st = KGB_JOB_RUNNING;
		kgb_lease_grant(&j->lease, j->lease.epoch, j->lease.worker, kgb_now_ms(), c->cfg.lease_ms);
		list_push(&c->running, j);
		return;
	}
	list_remove(j);
	job_release(j);
	if (PQntuples(res) == 0) {
		log_warn("job=%" PRIu64 " is gone from the store; dropped", id);
		kgb_coord_job_finish(c, j);
		return;
	}
	const char *state = PQgetvalue(res, 0, 0);
	uint64_t epoch = kgb_coord_pq_u64(PQgetvalue(res, 0, 1));
	j->attempts = (uint32_t)kgb_coord_pq_u64(PQgetvalue(res, 0, 2));
	uint64_t wdb = kgb_coord_pq_u64(PQgetvalue(res, 0, 3));
	double delay = kgb_coord_pq_f64(PQgetvalue(res, 0, 4));
	log_debug("job=%" PRIu64 " resync: store says %s epoch %" PRIu64, id, state, epoch);
	if (strcmp(state, "queued") == 0) {
		job_enqueue(c, j, delay);
	} else if (strcmp(state, "running") == 0) {
		j->st = KGB_JOB_RUNNING;
		kgb_lease_grant(&j->lease, epoch, wdb, kgb_now_ms(), c->cfg.lease_ms);
		list_push(&c->running, j);
	} else {
		kgb_coord_job_finish(c, j);
	}
}

void kgb_coord_job_resync(kgb_coord_t *c, kgb_cjob_t *j)
{
	j->result_pending = false;
	list_remove(j);
	job_release(j);
	j->st = KGB_JOB_SETTLING;
	uint64_t *a = kgb_xmalloc(2 * sizeof *a);
	a[0] = (uint64_t)(uintptr_t)c;
	a[1] = j->id;
	const char *p[1] = {kgb_coord_u64(j->id)};
	kgb_db_query(c->db, KGB_DB_RETRY, resync_cb, a,
	             "SELECT state, epoch, attempts, worker_id, " KGB_SQL_NOT_BEFORE_MS " FROM jobs WHERE id = $1",
	             1, p);
}

/* ---- expansion ---- */

typedef struct expand_arg {
	kgb_coord_t *c;
	uint64_t camp_id;
	int plat_id;
} expand_arg_t;

static void expand_cb(PGresult *res, const char *err, void *arg)
{
	expand_arg_t *a = arg;
	kgb_coord_t *c = a->c;
	kgb_ccamp_t *camp = kgb_coord_camp(c, a->camp_id);
	kgb_cplat_t *plat = kgb_coord_plat(c, a->plat_id);
	if (err) {
		log_error("campaign=%" PRIu64 " expansion on platform %d failed: %s", a->camp_id, a->plat_id, err);
		free(a);
		return;
	}
	int n = PQntuples(res);
	if (camp && plat && camp->state != KGB_CAMP_CANCELLED) {
		for (int r = 0; r < n; r++) {
			uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, r, 0));
			const kgb_ccand_t *cand = kgb_coord_cand(camp, kgb_coord_pq_u64(PQgetvalue(res, r, 1)));
			if (!cand)
				continue;
			kgb_coord_job_load(c, id, camp, cand, plat, (uint32_t)kgb_coord_pq_u64(PQgetvalue(res, r, 2)),
			                   (uint32_t)kgb_coord_pq_u64(PQgetvalue(res, r, 3)), "queued", 0, 0, 0, 0);
		}
		if (n > 0)
			log_info("campaign=%" PRIu64 " platform=%s: %d new jobs", camp->id, plat->name, n);
		camp->finishing = false;
		kgb_coord_camp_check_done(c, camp);
	}
	free(a);
}

/* The jobs of camp on a platform that joined after its submit. The store makes them as
 * the submit does (cproto.c): per candidate one series over its shards, from
 * candidates.case_count and campaigns.shard_size, or the candidate's own shards for a
 * case selection (migration 0005); the statement carries only the ids of the candidates
 * the platform can run (none when it runs them all). */
void kgb_coord_expand(kgb_coord_t *c, kgb_ccamp_t *camp, kgb_cplat_t *plat)
{
	kgb_sbuf_t ids = {0};
	size_t njobs = 0, nids = 0;
	size_t skipped = 0;
	if (camp->all_platforms && plat->retired) /* kgb platform retire */
		return;
	kgb_sbuf_addc(&ids, '{');
	for (size_t i = 0; i < camp->ncands; i++) {
		const kgb_ccand_t *cd = &camp->cands[i];
		/* "all" means every platform that can run the candidate's languages */
		if (camp->all_platforms && !kgb_coord_platform_runs(plat->backend, cd->langs)) {
			skipped++;
			continue;
		}
		if (nids++)
			kgb_sbuf_addc(&ids, ',');
		kgb_sbuf_u64(&ids, cd->id);
		/* a case selection's shard count may differ; this only says whether any */
		njobs += kgb_sched_shard_count(cd->case_count, camp->shard_size);
	}
	kgb_sbuf_addc(&ids, '}');
	if (skipped)
		log_info("campaign=%" PRIu64 " platform=%s: %zu candidate(s) left out: backend %s cannot run their "
		         "kernel languages",
		         camp->id, plat->name, skipped, plat->backend);
	if (njobs == 0) {
		free(ids.s);
		return;
	}
	expand_arg_t *a = kgb_xcalloc(1, sizeof *a);
	a->c = c;
	a->camp_id = camp->id;
	a->plat_id = plat->id;
	camp->finishing = true; /* not done while jobs may still appear */
	char *idv = kgb_sbuf_take(&ids);
	const char *p[3] = {kgb_coord_u64(camp->id), kgb_coord_i64(plat->id), skipped ? idv : NULL};
	kgb_db_query(c->db, KGB_DB_RETRY, expand_cb, a,
	             "INSERT INTO jobs (campaign_id, candidate_id, platform_id, op, case_lo, case_hi) "
	             "SELECT k.id, c.id, $2::int, c.op, "
	             "CASE WHEN c.shards IS NULL THEN g * k.shard_size ELSE (c.shards->g->>0)::int END, "
	             "CASE WHEN c.shards IS NULL THEN LEAST((g + 1) * k.shard_size, c.case_count) "
	             "ELSE (c.shards->g->>1)::int END "
	             "FROM campaigns k JOIN candidates c ON c.campaign_id = k.id "
	             "CROSS JOIN LATERAL generate_series(0, CASE WHEN c.shards IS NULL "
	             "THEN (c.case_count + k.shard_size - 1) / k.shard_size ELSE jsonb_array_length(c.shards) END - 1) g "
	             "WHERE k.id = $1::bigint AND ($3::bigint[] IS NULL OR c.id = ANY ($3::bigint[])) "
	             "ORDER BY c.id, g "
	             "ON CONFLICT (candidate_id, platform_id, case_lo) DO NOTHING "
	             "RETURNING id, candidate_id, case_lo, case_hi",
	             3, p);
	free(idv);
}

void kgb_coord_platform_appeared(kgb_coord_t *c, kgb_cplat_t *plat)
{
	log_info("platform=%s appeared (backend %s, device %s)", plat->name, plat->backend, plat->device_name);
	for (size_t i = 0; i < c->ncamps; i++) {
		kgb_ccamp_t *camp = c->camps[i];
		if ((camp->state == KGB_CAMP_QUEUED || camp->state == KGB_CAMP_RUNNING) &&
		    kgb_coord_camp_matches(camp, plat->name))
			kgb_coord_expand(c, camp, plat);
	}
}

/* ---- campaign completion ---- */

typedef struct done_arg {
	kgb_coord_t *c;
	uint64_t camp_id;
} done_arg_t;

static void camp_free(kgb_coord_t *c, kgb_ccamp_t *camp)
{
	for (size_t i = 0; i < camp->ncands; i++)
		cc_del(c, camp->cands[i].id);
	for (size_t i = 0; i < camp->ncands; i++) {
		free(camp->cands[i].method);
		free(camp->cands[i].op);
	}
	free(camp->cands);
	for (size_t i = 0; i < camp->npatterns; i++)
		free(camp->patterns[i]);
	free(camp->patterns);
	free(camp->name);
	free(camp);
}

/* Out of the campaign list and the platforms' queues (not freed). */
static void camp_unlist(kgb_coord_t *c, kgb_ccamp_t *camp)
{
	cq_drop_camp(c, camp);
	for (size_t i = 0; i < c->ncamps; i++)
		if (c->camps[i] == camp) {
			memmove(&c->camps[i], &c->camps[i + 1], (c->ncamps - i - 1) * sizeof *c->camps);
			c->ncamps--;
			break;
		}
}

static void camp_remove(kgb_coord_t *c, kgb_ccamp_t *camp)
{
	camp_unlist(c, camp);
	camp_free(c, camp);
}

static void done_cb(PGresult *res, const char *err, void *arg)
{
	done_arg_t *a = arg;
	kgb_coord_t *c = a->c;
	kgb_ccamp_t *camp = kgb_coord_camp(c, a->camp_id);
	if (err) {
		log_error("campaign=%" PRIu64 " marking done failed: %s", a->camp_id, err);
		if (camp)
			camp->finishing = false;
	} else if (camp) {
		camp->finishing = false;
		if (camp->open_jobs == 0 && PQntuples(res) > 0) {
			log_info("campaign=%" PRIu64 " done", camp->id);
			camp_remove(c, camp);
		}
	}
	free(a);
}

void kgb_coord_camp_check_done(kgb_coord_t *c, kgb_ccamp_t *camp)
{
	if (camp->open_jobs > 0 || camp->finishing || !c->ready)
		return;
	if (camp->state != KGB_CAMP_QUEUED && camp->state != KGB_CAMP_RUNNING)
		return;
	if (kgb_coord_camp_pending(c, camp))
		return;
	camp->finishing = true;
	done_arg_t *a = kgb_xcalloc(1, sizeof *a);
	a->c = c;
	a->camp_id = camp->id;
	const char *p[1] = {kgb_coord_u64(camp->id)};
	kgb_db_query(c->db, KGB_DB_RETRY, done_cb, a,
	             "UPDATE campaigns SET state = 'done', finished_at = now() "
	             "WHERE id = $1 AND state IN ('queued', 'running') "
	             "AND NOT EXISTS (SELECT 1 FROM jobs WHERE campaign_id = $1 AND is_open) "
	             "RETURNING id",
	             1, p);
}

typedef struct drop_ent {
	kgb_cworker_t *w;
	kgb_cjob_t *j;
} drop_ent_t;

static int drop_cmp(const void *a, const void *b)
{
	const drop_ent_t *x = a, *y = b;
	if (x->w != y->w)
		return (uintptr_t)x->w < (uintptr_t)y->w ? -1 : 1;
	return x->j->id < y->j->id ? -1 : x->j->id > y->j->id;
}

/* A cancelled campaign's queued jobs, freed a slice per loop turn. */
typedef struct kgb_cdrop {
	kgb_ccamp_t *camp;        /* out of c->camps; freed with the last slice */
	kgb_cjob_t **jobs;
	size_t n, pos;
	struct kgb_cdrop *next;
} kgb_cdrop_t;

static void drop_free(kgb_coord_t *c, kgb_cdrop_t *d)
{
	camp_free(c, d->camp);
	free(d->jobs);
	free(d);
}

static void on_drop_idle(uv_idle_t *h)
{
	kgb_coord_t *c = h->data;
	size_t budget = KGB_COORD_DROP_SLICE;
	while (c->drops && budget > 0) {
		kgb_cdrop_t *d = c->drops;
		while (d->pos < d->n && budget > 0) {
			kgb_cjob_t *j = d->jobs[d->pos++];
			map_del(c, j->id);
			free(j);
			budget--;
		}
		if (d->pos < d->n)
			break;
		c->drops = d->next;
		log_debug("campaign=%" PRIu64 ": %zu queued jobs freed", d->camp->id, d->n);
		drop_free(c, d);
	}
	if (!c->drops)
		uv_idle_stop(h);
}

size_t kgb_coord_camp_drop(kgb_coord_t *c, kgb_ccamp_t *camp, uint64_t **ids_out)
{
	/* one pass over the job map collects the campaign's jobs (linear in the map, not
	 * in jobs x map). The few that hold a slot or a list place (assigning, running,
	 * settling, delayed) are dropped now, running ones cancelled per worker. The
	 * queued ones, which may be hundreds of thousands, leave their queues at once
	 * (the queues are emptied whole) and are freed KGB_COORD_DROP_SLICE per loop turn;
	 * meanwhile they are found by id as queued jobs of a cancelled campaign, which
	 * nothing assigns or records. */
	drop_ent_t *v = kgb_xmalloc((c->jcount + 1) * sizeof *v);
	kgb_cjob_t **queued = kgb_xmalloc((c->jcount + 1) * sizeof *queued);
	uint64_t *all = ids_out ? kgb_xmalloc((c->jcount + 1) * sizeof *all) : NULL;
	size_t n = 0, nq = 0, nall = 0;
	for (size_t i = 0; i < c->jcap; i++) {
		kgb_cjob_t *j = c->jmap[i];
		if (!j || j->camp != camp)
			continue;
		if (all) /* read while the job is in cache */
			all[nall++] = j->id;
		if (j->st == KGB_JOB_QUEUED) {
			j->list = NULL; /* its queue is emptied below */
			j->prev = j->next = NULL;
			queued[nq++] = j;
			continue;
		}
		bool live = j->worker && (j->st == KGB_JOB_RUNNING || j->st == KGB_JOB_ASSIGNING);
		v[n++] = (drop_ent_t){live ? j->worker : NULL, j};
	}
	for (size_t i = 0; i < c->nplats; i++)
		for (size_t k = 0; k < c->plats[i]->ncqs; k++)
			if (c->plats[i]->cqs[k]->camp == camp)
				memset(&c->plats[i]->cqs[k]->jobs, 0, sizeof c->plats[i]->cqs[k]->jobs);
	qsort(v, n, sizeof *v, drop_cmp);
	uint64_t *ids = kgb_xmalloc((n + 1) * sizeof *ids);
	for (size_t i = 0; i < n;) {
		size_t k = i, m = 0;
		while (k < n && v[k].w == v[i].w) {
			ids[m++] = v[k].j->id;
			k++;
		}
		if (v[i].w)
			c->out->cancel(c, v[i].w, ids, m);
		i = k;
	}
	free(ids);
	for (size_t i = 0; i < n; i++) {
		kgb_cjob_t *victim = v[i].j;
		list_remove(victim);
		job_release(victim);
		map_del(c, victim->id);
		free(victim);
	}
	free(v);
	camp->open_jobs = 0;
	camp->state = KGB_CAMP_CANCELLED;
	/* out of the campaign list and the platforms' queues now; freed after its jobs */
	camp_unlist(c, camp);
	if (ids_out)
		*ids_out = all;
	kgb_cdrop_t *d = kgb_xcalloc(1, sizeof *d);
	d->camp = camp;
	d->jobs = queued;
	d->n = nq;
	kgb_cdrop_t **tail = (kgb_cdrop_t **)&c->drops;
	while (*tail)
		tail = &(*tail)->next;
	*tail = d;
	uv_idle_start(&c->drop_idle, on_drop_idle);
	kgb_coord_kick(c);
	return n + nq;
}

typedef struct cancel_arg {
	kgb_coord_t *c;
	uint64_t camp_id;
	uint64_t *ids;            /* the jobs it had in memory, marked a slice at a time */
	size_t n, pos, done;
	double t0;
} cancel_arg_t;

static void cancel_slice(cancel_arg_t *a);

static void cancel_slice_cb(PGresult *res, const char *err, void *arg)
{
	cancel_arg_t *a = arg;
	if (err || PQntuples(res) != 1) {
		log_error("campaign=%" PRIu64 " marking its jobs cancelled failed after %zu: %s; the next start "
		          "finishes it", a->camp_id, a->done, err ? err : "no row");
		free(a->ids);
		free(a);
		return;
	}
	a->done += (size_t)atol(PQgetvalue(res, 0, 0));
	bool last = a->pos > a->n; /* the sweep, after the slices */
	if (!last && !a->c->stopping) {
		cancel_slice(a);
		return;
	}
	if (last)
		log_info("campaign=%" PRIu64 " %zu jobs marked cancelled in the store in %.0f ms", a->camp_id, a->done,
		         kgb_now_ms() - a->t0);
	free(a->ids);
	free(a);
}

/* One slice: the next KGB_COORD_CANCEL_SLICE ids, looked up by primary key (a plan
 * that cannot turn into a scan, whatever the planner guesses for a prepared
 * statement). After the last slice, one sweep by campaign catches jobs memory did not
 * have (an expansion in flight at the cancel; a restart). */
static void cancel_slice(cancel_arg_t *a)
{
	const char *p[2] = {kgb_coord_u64(a->camp_id), NULL};
	if (a->pos >= a->n) {
		a->pos = a->n + 1;
		kgb_db_query(a->c->db, KGB_DB_RETRY, cancel_slice_cb, a,
		             "WITH u AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL "
		             "WHERE campaign_id = $1 AND is_open RETURNING 1) "
		             "SELECT count(*) FROM u",
		             1, p);
		return;
	}
	size_t end = KGB_MIN(a->n, a->pos + KGB_COORD_CANCEL_SLICE);
	size_t cap = 3 + 21 * (end - a->pos), len = 0;
	char *arr = kgb_xmalloc(cap);
	arr[len++] = '{';
	for (size_t i = a->pos; i < end; i++)
		len += (size_t)snprintf(arr + len, cap - len, "%s%" PRIu64, i > a->pos ? "," : "", a->ids[i]);
	arr[len++] = '}';
	arr[len] = 0;
	a->pos = end;
	p[1] = arr;
	kgb_db_query(a->c->db, KGB_DB_RETRY, cancel_slice_cb, a,
	             "WITH u AS (UPDATE jobs SET state = 'cancelled', finished_at = now(), worker_id = NULL "
	             "WHERE id = ANY ($2::bigint[]) AND campaign_id = $1 AND is_open "
	             "RETURNING 1) "
	             "SELECT count(*) FROM u",
	             2, p);
	free(arr);
}

void kgb_coord_cancel_jobs(kgb_coord_t *c, uint64_t campaign_id, uint64_t *ids, size_t n)
{
	cancel_arg_t *a = kgb_xcalloc(1, sizeof *a);
	a->c = c;
	a->camp_id = campaign_id;
	a->ids = ids;
	a->n = ids ? n : 0;
	a->t0 = kgb_now_ms();
	cancel_slice(a);
}

size_t kgb_coord_camp_drop_platforms(kgb_coord_t *c, kgb_ccamp_t *camp, const int *plat_ids, size_t nplat)
{
	kgb_cjob_t **v = kgb_xmalloc((c->jcount + 1) * sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < c->jcap; i++) {
		kgb_cjob_t *j = c->jmap[i];
		if (!j || j->camp != camp)
			continue;
		for (size_t k = 0; k < nplat; k++)
			if (j->plat->id == plat_ids[k]) {
				v[n++] = j;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		kgb_cjob_t *j = v[i];
		if (j->worker && (j->st == KGB_JOB_RUNNING || j->st == KGB_JOB_ASSIGNING))
			c->out->cancel(c, j->worker, &j->id, 1);
		kgb_coord_job_finish(c, j); /* the last one checks whether the campaign is done */
	}
	free(v);
	return n;
}

/* ---- candidate cache ---- */

static size_t cc_slot(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

const kgb_ccache_t *kgb_coord_ccache(kgb_coord_t *c, uint64_t cand_id)
{
	if (!c->cccap)
		return NULL;
	for (size_t i = cc_slot(cand_id, c->cccap); c->ccache[i]; i = (i + 1) & (c->cccap - 1))
		if (c->ccache[i]->cand_id == cand_id)
			return c->ccache[i];
	return NULL;
}

void kgb_coord_ccache_free(kgb_ccache_t *e)
{
	if (!e)
		return;
	free(e->plan_json);
	json_decref(e->sources);
	free(e);
}

static void cc_put(kgb_coord_t *c, kgb_ccache_t *e)
{
	if ((c->cccount + 1) * 2 > c->cccap) {
		size_t oldcap = c->cccap;
		kgb_ccache_t **old = c->ccache;
		c->cccap = oldcap ? oldcap * 2 : 256;
		c->ccache = kgb_xcalloc(c->cccap, sizeof *c->ccache);
		for (size_t i = 0; i < oldcap; i++)
			if (old[i]) {
				size_t k = cc_slot(old[i]->cand_id, c->cccap);
				while (c->ccache[k])
					k = (k + 1) & (c->cccap - 1);
				c->ccache[k] = old[i];
			}
		free(old);
	}
	size_t k = cc_slot(e->cand_id, c->cccap);
	while (c->ccache[k])
		k = (k + 1) & (c->cccap - 1);
	c->ccache[k] = e;
	c->cccount++;
	c->ccbytes += e->bytes;
	e->kept = true;
}

static void cc_del(kgb_coord_t *c, uint64_t cand_id)
{
	if (!c->cccap)
		return;
	size_t mask = c->cccap - 1, i = cc_slot(cand_id, c->cccap);
	while (c->ccache[i] && c->ccache[i]->cand_id != cand_id)
		i = (i + 1) & mask;
	if (!c->ccache[i])
		return;
	c->ccbytes -= c->ccache[i]->bytes;
	kgb_coord_ccache_free(c->ccache[i]);
	c->ccache[i] = NULL;
	c->cccount--;
	for (size_t k = (i + 1) & mask; c->ccache[k]; k = (k + 1) & mask) {
		size_t home = cc_slot(c->ccache[k]->cand_id, c->cccap);
		bool move = (i <= k) ? (home <= i || home > k) : (home <= i && home > k);
		if (move) {
			c->ccache[i] = c->ccache[k];
			c->ccache[k] = NULL;
			i = k;
		}
	}
}

/* An entry for a candidate from the store's text; kept when the budget allows. */
static kgb_ccache_t *cc_make(kgb_coord_t *c, uint64_t cand_id, const char *plan, const char *sources)
{
	kgb_ccache_t *e = kgb_xcalloc(1, sizeof *e);
	e->cand_id = cand_id;
	e->plan_json = kgb_xstrdup(plan ? plan : "");
	json_error_t je;
	e->sources = json_loads(sources ? sources : "[]", 0, &je);
	if (!e->sources)
		e->sources = json_array();
	e->bytes = strlen(e->plan_json) + (sources ? strlen(sources) : 0) + sizeof *e;
	if (!kgb_coord_ccache(c, cand_id) && c->ccbytes + e->bytes <= KGB_COORD_CAND_CACHE_BYTES)
		cc_put(c, e);
	return e;
}

/* Labels per operator: the catalog computes a case's label from its parameters; a
 * result names each of its cases, so the text is kept once made. */
typedef struct op_labels {
	char *op;
	const kgb_op_t *cat;
	char **labels;
	uint32_t n;
} op_labels_t;
#define LABEL_OPS 2048
static op_labels_t *labels_tab;

const char *kgb_coord_case_label(const char *op, uint32_t idx)
{
	if (!op || idx >= (1u << 22))
		return NULL;
	if (!labels_tab)
		labels_tab = kgb_xcalloc(LABEL_OPS, sizeof *labels_tab);
	uint64_t h = 1469598103934665603ull;
	for (const char *p = op; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	size_t i = (size_t)h & (LABEL_OPS - 1), probes = 0;
	while (labels_tab[i].op && strcmp(labels_tab[i].op, op) != 0) {
		i = (i + 1) & (LABEL_OPS - 1);
		if (++probes == LABEL_OPS)
			return NULL; /* full: not cached */
	}
	op_labels_t *t = &labels_tab[i];
	if (!t->op) {
		t->op = kgb_xstrdup(op);
		t->cat = kgb_catalog_find(op);
	}
	if (!t->cat)
		return NULL;
	if (idx >= kgb_op_case_count(t->cat)) /* a held-out case: its sizes come from the campaign's key */
		return kgb_op_has_heldout(t->cat) ? "held-out case (sizes from the campaign's key)" : NULL;
	if (idx >= t->n) {
		uint32_t n = KGB_MAX(idx + 1, t->n * 2);
		t->labels = kgb_xrealloc(t->labels, n * sizeof *t->labels);
		memset(t->labels + t->n, 0, (n - t->n) * sizeof *t->labels);
		t->n = n;
	}
	if (!t->labels[idx]) {
		char label[sizeof((kgb_case_t *)0)->label];
		if (kgb_case_label(t->cat, idx, label, sizeof label) != 0)
			return NULL;
		t->labels[idx] = kgb_xstrdup(label);
	}
	return t->labels[idx];
}

void kgb_coord_labels_free(void)
{
	if (!labels_tab)
		return;
	for (size_t i = 0; i < LABEL_OPS; i++) {
		for (uint32_t k = 0; k < labels_tab[i].n; k++)
			free(labels_tab[i].labels[k]);
		free(labels_tab[i].labels);
		free(labels_tab[i].op);
	}
	free(labels_tab);
	labels_tab = NULL;
}

/* ---- assignment ---- */

/* Assignments gather into one statement while it waits for the store (db.h,
 * kgb_db_defer): one UPDATE of every job picked meanwhile, one of their campaigns, and
 * the plan and sources of the candidates not cached yet. */
typedef struct assign_ent {
	uint64_t job_id;
	uint64_t worker_db_id;
	uint64_t gen;          /* the worker process's generation when the job was picked */
	uint32_t dev;
	uint64_t cand_id;
} assign_ent_t;

typedef struct kgb_abatch {
	kgb_coord_t *c;
	const void *h;         /* the deferred statement, until built */
	assign_ent_t *v;
	size_t n, cap;
} kgb_abatch_t;

static void assign_build(void *arg, kgb_db_stmt_t *out)
{
	kgb_abatch_t *b = arg;
	kgb_coord_t *c = b->c;
	if (c->abatch == b)
		c->abatch = NULL; /* built: the next assignment starts another statement */
	b->h = NULL;
	kgb_sbuf_t col[4] = {{0}};
	for (int k = 0; k < 4; k++)
		kgb_sbuf_addc(&col[k], '{');
	for (size_t i = 0; i < b->n; i++) {
		if (i)
			for (int k = 0; k < 4; k++)
				kgb_sbuf_addc(&col[k], ',');
		kgb_sbuf_u64(&col[0], b->v[i].job_id);
		kgb_sbuf_u64(&col[1], b->v[i].worker_db_id);
		kgb_sbuf_u64(&col[2], b->v[i].dev);
		/* the plan and sources come back only for candidates not cached */
		kgb_sbuf_addc(&col[3], kgb_coord_ccache(c, b->v[i].cand_id) ? '0' : '1');
	}
	out->nparams = 4;
	out->values = kgb_xcalloc(4, sizeof *out->values);
	for (int k = 0; k < 4; k++) {
		kgb_sbuf_addc(&col[k], '}');
		out->values[k] = kgb_sbuf_take(&col[k]);
	}
	c->assign_stmts++;
	out->sql = "WITH i AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::int[]) "
	           "WITH ORDINALITY AS i(id, wid, dev, need, ord)), "
	           "u AS (UPDATE jobs SET state = 'running', epoch = epoch + 1, attempts = attempts + 1, "
	           "worker_id = i.wid, device_idx = i.dev, assigned_at = now(), not_before = NULL "
	           "FROM i WHERE jobs.id = i.id AND jobs.state = 'queued' "
	           "RETURNING i.ord, jobs.epoch, jobs.attempts, jobs.candidate_id, jobs.campaign_id, i.need), "
	           "k AS (UPDATE campaigns SET state = 'running' "
	           "WHERE id IN (SELECT DISTINCT campaign_id FROM u) AND state = 'queued') "
	           "SELECT u.ord, u.epoch, u.attempts, c.plan::text, c.sources::text "
	           "FROM u LEFT JOIN candidates c ON u.need = 1 AND c.id = u.candidate_id";
}

static void assign_one(kgb_coord_t *c, const assign_ent_t *a, PGresult *res, int row, const char *err)
{
	kgb_cjob_t *j = kgb_coord_job(c, a->job_id);
	if (!j || j->st != KGB_JOB_ASSIGNING)
		return;
	if (err || row < 0) {
		if (err)
			log_error("job=%" PRIu64 " assign failed: %s", j->id, err);
		else
			log_info("job=%" PRIu64 " was not queued in the store any more; resyncing", j->id);
		kgb_coord_job_resync(c, j);
		return;
	}
	uint64_t epoch = kgb_coord_pq_u64(PQgetvalue(res, row, 1));
	j->attempts = (uint32_t)kgb_coord_pq_u64(PQgetvalue(res, row, 2));
	j->st = KGB_JOB_RUNNING;
	kgb_lease_grant(&j->lease, epoch, a->worker_db_id, kgb_now_ms(), c->cfg.lease_ms);
	j->lease_gen = a->gen;
	if (j->worker && j->worker->db_id == a->worker_db_id && j->worker->gen != a->gen) {
		/* a new process registered under the worker's name while the assignment was
		 * written: the JobAssign goes to its connection, so the lease is its */
		log_info("job=%" PRIu64 " worker=%s registered again as a new process while the job was assigned; "
		         "the job goes to the new process",
		         j->id, j->worker->wid);
		j->lease_gen = j->worker->gen;
	}
	list_push(&c->running, j);
	if (j->camp->state == KGB_CAMP_QUEUED)
		j->camp->state = KGB_CAMP_RUNNING;
	const kgb_ccache_t *cc = kgb_coord_ccache(c, j->cand->id);
	kgb_ccache_t *tmp = NULL;
	if (!cc) {
		if (PQgetisnull(res, row, 3)) {
			/* cached when the statement was built, dropped since (its campaign was
			 * freed and loaded again): read it back */
			log_warn("job=%" PRIu64 ": candidate %" PRIu64 " not cached any more; resyncing", j->id, j->cand->id);
			kgb_coord_job_resync(c, j); /* running without its JobAssign: its lease runs out */
			return;
		}
		tmp = cc_make(c, j->cand->id, PQgetvalue(res, row, 3), PQgetvalue(res, row, 4));
		cc = tmp;
		if (tmp->kept)
			tmp = NULL;
	}
	c->out->assign(c, j, cc);
	kgb_coord_ccache_free(tmp);
}

static void assign_cb(PGresult *res, const char *err, void *arg)
{
	kgb_abatch_t *b = arg;
	kgb_coord_t *c = b->c;
	int *rowof = kgb_xmalloc((b->n + 1) * sizeof *rowof);
	for (size_t i = 0; i < b->n; i++)
		rowof[i] = -1;
	if (!err)
		for (int r = 0; r < PQntuples(res); r++) {
			uint64_t ord = kgb_coord_pq_u64(PQgetvalue(res, r, 0));
			if (ord >= 1 && ord <= b->n)
				rowof[ord - 1] = r;
		}
	for (size_t i = 0; i < b->n; i++)
		assign_one(c, &b->v[i], res, rowof[i], err);
	free(rowof);
	free(b->v);
	free(b);
}

static void assign(kgb_coord_t *c, kgb_cjob_t *j, kgb_cworker_t *w, kgb_cdev_t *d)
{
	list_remove(j);
	j->st = KGB_JOB_ASSIGNING;
	kgb_coord_job_hold(j, w, d->index);
	kgb_abatch_t *b = c->abatch;
	if (!b || !kgb_db_defer_open(c->db, b->h)) {
		b = kgb_xcalloc(1, sizeof *b);
		b->c = c;
		c->abatch = b;
		b->h = kgb_db_defer(c->db, KGB_DB_RETRY, assign_build, assign_cb, b);
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 16;
		b->v = kgb_xrealloc(b->v, b->cap * sizeof *b->v);
	}
	b->v[b->n++] = (assign_ent_t){j->id, w->db_id, w->gen, d->index, j->cand->id};
}

/* The jobs of q that w can run: a worker that does not record Python candidates
 * leaves theirs to one that does. */
static size_t runnable(const kgb_cq_t *q, const kgb_cworker_t *w)
{
	if (q->camp->held) /* kgb hold */
		return 0;
	return w->python ? q->jobs.n : q->jobs.n - q->jobs.npython;
}

/* The first job of q that w can run (q has one: runnable > 0). */
static kgb_cjob_t *first_runnable(const kgb_cq_t *q, const kgb_cworker_t *w)
{
	kgb_cjob_t *j = q->jobs.head;
	while (j && !w->python && job_python(j))
		j = j->next;
	KGB_ASSERT(j != NULL);
	return j;
}

/* The campaign queue on p whose first job w can run runs next (fair share), or NULL. */
static kgb_cq_t *pick(kgb_cplat_t *p, const kgb_cworker_t *w)
{
	if (p->ncqs == 0)
		return NULL;
	kgb_pick_entry_t stackbuf[64];
	kgb_pick_entry_t *e = p->ncqs <= 64 ? stackbuf : kgb_xmalloc(p->ncqs * sizeof *e);
	for (size_t i = 0; i < p->ncqs; i++) {
		kgb_ccamp_t *camp = p->cqs[i]->camp;
		e[i].campaign_id = camp->id;
		e[i].priority = camp->priority;
		e[i].created_ms = camp->created_ms;
		e[i].ready = runnable(p->cqs[i], w);
	}
	int k = kgb_sched_pick(e, p->ncqs, p->last_served);
	if (e != stackbuf)
		free(e);
	if (k < 0)
		return NULL;
	p->last_served = p->cqs[k]->camp->id;
	return p->cqs[k];
}

static void dispatch(kgb_coord_t *c)
{
	if (!c->ready || c->stopping)
		return;
	double now = kgb_now_ms();
	for (size_t wi = 0; wi < c->nworkers; wi++) {
		kgb_cworker_t *w = c->workers[wi];
		/* only to workers heard from recently: one that missed its heartbeats is
		 * probably stopped, and a job sent there would just wait for its lease */
		if (!w->alive || w->untrusted || w->drained || w->draining ||
		    now - w->last_seen_ms > 3.0 * c->cfg.heartbeat_ms + 500)
			continue;
		for (size_t di = 0; di < w->ndevs; di++) {
			kgb_cdev_t *d = &w->devs[di];
			while (d->plat && d->running < d->slots) {
				/* the store is the bottleneck: let it drain before adding work */
				if (kgb_db_pending(c->db) >= KGB_COORD_DB_BACKLOG)
					return;
				kgb_cq_t *q = pick(d->plat, w);
				if (!q)
					break;
				assign(c, first_runnable(q, w), w, d);
			}
		}
	}
}

static void on_kick(uv_timer_t *t)
{
	kgb_coord_t *c = t->data;
	c->kick_armed = false;
	dispatch(c);
}

void kgb_coord_kick(kgb_coord_t *c)
{
	if (c->kick_armed || c->stopping)
		return;
	c->kick_armed = true;
	uv_timer_start(&c->kick, on_kick, 0, 0);
}

/* ---- leases ---- */

typedef struct requeue_arg {
	kgb_coord_t *c;
	uint64_t job_id;
} requeue_arg_t;

static void expire_cb(PGresult *res, const char *err, void *arg)
{
	requeue_arg_t *a = arg;
	kgb_coord_t *c = a->c;
	kgb_cjob_t *j = kgb_coord_job(c, a->job_id);
	free(a);
	if (!j || j->st != KGB_JOB_SETTLING)
		return;
	if (err || PQntuples(res) == 0) {
		if (err)
			log_error("job=%" PRIu64 " requeue after lease expiry failed: %s", j->id, err);
		kgb_coord_job_resync(c, j);
		return;
	}
	const char *state = PQgetvalue(res, 0, 0);
	j->attempts = (uint32_t)kgb_coord_pq_u64(PQgetvalue(res, 0, 1));
	double delay = kgb_coord_pq_f64(PQgetvalue(res, 0, 2));
	if (strcmp(state, "failed") == 0) {
		log_warn("job=%" PRIu64 " campaign=%" PRIu64 " failed after %u attempts (infra_error)", j->id,
		         j->camp->id, j->attempts);
		kgb_coord_job_finish(c, j);
	} else {
		log_info("job=%" PRIu64 " campaign=%" PRIu64 " requeued (attempt %u, backoff %.0f ms)", j->id,
		         j->camp->id, j->attempts, delay);
		kgb_coord_job_requeue(c, j, delay);
	}
}

/* SQL that gives a running job back to the queue, or fails it with infra_error
 * results for all its cases once it has used max_attempts. $1 id, $2 epoch,
 * $3 max attempts, $4 backoff ms, $5 reason, $6 worker id (may be NULL). */
const char kgb_coord_requeue_sql[] =
	"WITH u AS (UPDATE jobs SET "
	"state = CASE WHEN attempts >= $3 THEN 'failed' ELSE 'queued' END, "
	"device_idx = NULL, " /* worker_id stays: the last holder, whose late result is still taken */
	"not_before = CASE WHEN attempts >= $3 THEN NULL ELSE now() + make_interval(secs => $4::float8 / 1000) END, "
	"finished_at = CASE WHEN attempts >= $3 THEN now() END, last_error = $5 "
	"WHERE id = $1 AND epoch = $2 AND state = 'running' "
	"RETURNING id, state, epoch, attempts, case_lo, case_hi), "
	"r AS (INSERT INTO results (job_id, case_index, verdict, message, epoch, worker_id) "
	"SELECT u.id, g, 'infra_error', $5, u.epoch, $6::bigint FROM u, generate_series(u.case_lo, u.case_hi - 1) g "
	"WHERE u.state = 'failed' ON CONFLICT DO NOTHING) "
	"SELECT state, attempts, $4::float8 FROM u";

void kgb_coord_requeue(kgb_coord_t *c, kgb_cjob_t *j, const char *reason, kgb_db_cb cb, void *arg)
{
	uint64_t epoch = j->lease.epoch;
	uint64_t wdb = j->worker ? j->worker->db_id : j->lease.worker;
	int64_t backoff = kgb_sched_backoff_ms(j->attempts, c->cfg.backoff_base_ms, c->cfg.backoff_cap_ms);
	kgb_coord_job_settle(c, j);
	const char *p[6] = {kgb_coord_u64(j->id), kgb_coord_u64(epoch), kgb_coord_u64(c->cfg.max_attempts),
	                    kgb_coord_i64(backoff), reason, wdb ? kgb_coord_u64(wdb) : NULL};
	kgb_db_query(c->db, KGB_DB_RETRY, cb, arg, kgb_coord_requeue_sql, 6, p);
}

static void flush_last_seen(kgb_coord_t *c)
{
	json_t *ids = json_array();
	for (size_t i = 0; i < c->nworkers; i++)
		if (c->workers[i]->alive)
			json_array_append_new(ids, json_integer((json_int_t)c->workers[i]->db_id));
	if (json_array_size(ids) > 0) {
		char *js = json_dumps(ids, JSON_COMPACT);
		const char *p[1] = {js};
		kgb_db_query(c->db, KGB_DB_RETRY, NULL, NULL,
		             "UPDATE workers SET last_seen = now(), state = 'alive' "
		             "WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb))",
		             1, p);
		free(js);
	}
	json_decref(ids);
}

void kgb_coord_tick(kgb_coord_t *c)
{
	if (!c->ready || c->stopping)
		return;
	double now = kgb_now_ms();
	/* leases */
	kgb_cjob_t *j = c->running.head;
	while (j) {
		kgb_cjob_t *next = j->next;
		if (kgb_lease_expired(&j->lease, now)) {
			log_warn("job=%" PRIu64 " worker=%s campaign=%" PRIu64 " lease expired (epoch %" PRIu64 ")", j->id,
			         j->worker ? j->worker->wid : "-", j->camp->id, j->lease.epoch);
			c->counters.leases_expired++;
			requeue_arg_t *a = kgb_xcalloc(1, sizeof *a);
			a->c = c;
			a->job_id = j->id;
			kgb_coord_requeue(c, j, "lease expired: worker stopped renewing it", expire_cb, a);
		}
		j = next;
	}
	/* backoff over */
	j = c->delayed.head;
	while (j) {
		kgb_cjob_t *next = j->next;
		if (now >= j->not_before_ms)
			kgb_coord_job_requeue(c, j, 0);
		j = next;
	}
	/* lost workers */
	for (size_t i = 0; i < c->nworkers; i++) {
		kgb_cworker_t *w = c->workers[i];
		if (w->alive && kgb_sched_worker_lost(w->last_seen_ms, now, c->cfg.lease_ms)) {
			w->alive = false;
			log_warn("worker=%s name=%s lost (not seen for %.0f ms)", w->wid, w->name, now - w->last_seen_ms);
			const char *p[1] = {kgb_coord_u64(w->db_id)};
			kgb_db_query(c->db, KGB_DB_RETRY, NULL, NULL, "UPDATE workers SET state = 'lost' WHERE id = $1",
			             1, p);
		}
	}
	if (now - c->last_flush_ms > 10000) {
		c->last_flush_ms = now;
		flush_last_seen(c);
		kgb_db_stats_t st;
		kgb_db_stats(c->db, &st);
		if (st.statements >= c->last_logged_stmts + 1000) { /* busy: worth a line */
			c->last_logged_stmts = st.statements;
			log_info("store: %zu statements in %zu batches so far (%.1f per batch, largest %zu), %zu replays; "
			         "%zu resent results dropped while their first copy was being stored",
			         st.statements, st.batches, st.batches ? (double)st.statements / (double)st.batches : 0.0,
			         st.max_batch, st.replays, c->resends_dropped);
		}
	}
}

void kgb_coord_plat_counts(kgb_coord_t *c, const kgb_cplat_t *p, uint32_t *queued, uint32_t *running)
{
	*queued = *running = 0;
	for (size_t i = 0; i < c->jcap; i++) {
		kgb_cjob_t *j = c->jmap[i];
		if (!j || j->plat != p || j->camp->state == KGB_CAMP_CANCELLED)
			continue;
		if (j->st == KGB_JOB_QUEUED || j->st == KGB_JOB_DELAYED)
			(*queued)++;
		else if (j->st == KGB_JOB_RUNNING || j->st == KGB_JOB_ASSIGNING)
			(*running)++;
	}
}

/* ---- init / free ---- */

void kgb_coord_state_init(kgb_coord_t *c)
{
	uv_timer_init(c->loop, &c->kick);
	c->kick.data = c;
	uv_idle_init(c->loop, &c->drop_idle);
	c->drop_idle.data = c;
}

static void worker_free(kgb_cworker_t *w)
{
	for (size_t i = 0; i < w->ndevs; i++)
		if (w->devs[i].info)
			kgb__device__free_unpacked(w->devs[i].info, NULL);
	free(w->devs);
	free(w->load);
	free(w->load_ph);
	free(w->name);
	free(w->hostname);
	free(w->version);
	free(w->python_note);
	free(w->native_note);
	free(w);
}

void kgb_coord_state_free(kgb_coord_t *c)
{
	for (size_t i = 0; i < c->jcap; i++)
		free(c->jmap[i]); /* with the queued jobs of cancelled campaigns not freed yet */
	while (c->drops) {
		kgb_cdrop_t *d = c->drops;
		c->drops = d->next;
		drop_free(c, d);
	}
	free(c->jmap);
	c->jmap = NULL;
	c->jcap = c->jcount = 0;
	for (size_t i = 0; i < c->ncamps; i++)
		camp_free(c, c->camps[i]);
	free(c->camps);
	c->camps = NULL;
	c->ncamps = 0;
	for (size_t i = 0; i < c->nplats; i++) {
		kgb_cplat_t *p = c->plats[i];
		for (size_t k = 0; k < p->ncqs; k++)
			free(p->cqs[k]);
		free(p->cqs);
		free(p->name);
		free(p->backend);
		free(p->device_name);
		free(p->arch);
		free(p);
	}
	free(c->plats);
	c->plats = NULL;
	c->nplats = 0;
	for (size_t i = 0; i < c->cccap; i++)
		kgb_coord_ccache_free(c->ccache[i]);
	free(c->ccache);
	c->ccache = NULL;
	c->cccap = c->cccount = c->ccbytes = 0;
	if (c->abatch) { /* never built: the store was closed first */
		free(c->abatch->v);
		free(c->abatch);
		c->abatch = NULL;
	}
	if (c->out && c->out->release)
		c->out->release(c);
	kgb_coord_labels_free();
	for (size_t i = 0; i < c->nworkers; i++)
		worker_free(c->workers[i]);
	free(c->workers);
	c->workers = NULL;
	c->nworkers = 0;
}
