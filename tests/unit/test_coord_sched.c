/* Tests for the coordinator's pure scheduling rules (coordinator/sched.c) and its
 * in-memory job table (coordinator/state.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../coordinator/coord.h"
#include "../../coordinator/sched.h"
#include "test.h"
#include "util.h"

TEST(coord_shards_cover_every_case_once)
{
	const uint32_t counts[] = {0, 1, 3, 31, 32, 33, 64, 13123};
	const uint32_t sizes[] = {1, 7, 32, 4096};
	for (size_t a = 0; a < sizeof counts / sizeof counts[0]; a++)
		for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
			uint32_t n = counts[a], sz = sizes[b];
			uint32_t ns = kgb_sched_shard_count(n, sz);
			uint32_t next = 0;
			for (uint32_t i = 0; i < ns; i++) {
				uint32_t lo, hi;
				kgb_sched_shard_range(n, sz, i, &lo, &hi);
				ASSERT_EQ_INT(lo, next);      /* contiguous, in order */
				ASSERT_TRUE(hi > lo);         /* never empty */
				ASSERT_TRUE(hi - lo <= sz);   /* bounded */
				if (i + 1 < ns)
					ASSERT_EQ_INT(hi - lo, sz); /* only the last may be short */
				next = hi;
			}
			ASSERT_EQ_INT(next, n);
		}
}

TEST(coord_shards_examples)
{
	uint32_t lo, hi;
	ASSERT_EQ_INT(kgb_sched_shard_count(22, 16), 2);
	kgb_sched_shard_range(22, 16, 1, &lo, &hi);
	ASSERT_EQ_INT(lo, 16);
	ASSERT_EQ_INT(hi, 22);
	ASSERT_EQ_INT(kgb_sched_shard_count(0, 16), 0);
	ASSERT_EQ_INT(kgb_sched_shard_count(5, 0), 5); /* 0 behaves as 1 */
}

static kgb_pick_entry_t E(uint64_t id, int prio, int64_t created, size_t ready)
{
	kgb_pick_entry_t e = {id, prio, created, ready};
	return e;
}

TEST(coord_pick_priority_first)
{
	kgb_pick_entry_t e[3] = {E(1, 0, 100, 5), E(2, 5, 300, 5), E(3, 1, 50, 5)};
	kgb_sched_sort(e, 3);
	ASSERT_EQ_U64(e[0].campaign_id, 2);
	ASSERT_EQ_U64(e[1].campaign_id, 3);
	ASSERT_EQ_U64(e[2].campaign_id, 1);
	int k = kgb_sched_pick(e, 3, 0);
	ASSERT_EQ_U64(e[k].campaign_id, 2);
	/* the high-priority campaign has nothing ready: the next priority runs */
	e[0].ready = 0;
	k = kgb_sched_pick(e, 3, 2);
	ASSERT_EQ_U64(e[k].campaign_id, 3);
}

TEST(coord_pick_round_robin_among_equal_priority)
{
	kgb_pick_entry_t e[3] = {E(10, 0, 300, 9), E(11, 0, 100, 9), E(12, 0, 200, 9)};
	kgb_sched_sort(e, 3);
	/* age order: 11 (oldest), 12, 10 */
	uint64_t order[7];
	uint64_t last = 0;
	for (int i = 0; i < 7; i++) {
		int k = kgb_sched_pick(e, 3, last);
		ASSERT_TRUE(k >= 0);
		last = e[k].campaign_id;
		order[i] = last;
	}
	const uint64_t want[7] = {11, 12, 10, 11, 12, 10, 11};
	for (int i = 0; i < 7; i++)
		ASSERT_EQ_U64(order[i], want[i]);
	/* an empty queue is skipped without breaking the rotation */
	e[1].ready = 0; /* 12 */
	ASSERT_EQ_U64(e[kgb_sched_pick(e, 3, 11)].campaign_id, 10);
	ASSERT_EQ_U64(e[kgb_sched_pick(e, 3, 10)].campaign_id, 11);
	/* nothing ready anywhere */
	e[0].ready = e[1].ready = e[2].ready = 0;
	ASSERT_EQ_INT(kgb_sched_pick(e, 3, 0), -1);
	ASSERT_EQ_INT(kgb_sched_pick(e, 0, 0), -1);
}

TEST(coord_pick_round_robin_unknown_last)
{
	kgb_pick_entry_t e[2] = {E(1, 0, 1, 1), E(2, 0, 2, 1)};
	/* last served campaign gone (finished): start at the oldest */
	ASSERT_EQ_U64(e[kgb_sched_pick(e, 2, 99)].campaign_id, 1);
}

TEST(coord_backoff_doubles_and_caps)
{
	ASSERT_EQ_INT(kgb_sched_backoff_ms(1, 1000, 60000), 1000);
	ASSERT_EQ_INT(kgb_sched_backoff_ms(2, 1000, 60000), 2000);
	ASSERT_EQ_INT(kgb_sched_backoff_ms(3, 1000, 60000), 4000);
	ASSERT_EQ_INT(kgb_sched_backoff_ms(7, 1000, 60000), 60000);
	ASSERT_EQ_INT(kgb_sched_backoff_ms(200, 1000, 60000), 60000);
	ASSERT_EQ_INT(kgb_sched_backoff_ms(0, 250, 60000), 250);
}

TEST(coord_lease_renew_fencing)
{
	kgb_lease_t l;
	kgb_lease_grant(&l, 3, 7, 1000, 5000);
	ASSERT_FALSE(kgb_lease_expired(&l, 5999));
	ASSERT_TRUE(kgb_lease_expired(&l, 6000));
	/* the holder's heartbeat under the current epoch extends it */
	ASSERT_TRUE(kgb_lease_renew(&l, 3, 7, 5000, 5000));
	ASSERT_FALSE(kgb_lease_expired(&l, 9999));
	/* a stale epoch or another worker changes nothing */
	ASSERT_FALSE(kgb_lease_renew(&l, 2, 7, 9000, 5000));
	ASSERT_FALSE(kgb_lease_renew(&l, 3, 8, 9000, 5000));
	ASSERT_TRUE(kgb_lease_expired(&l, 10000));
	/* a lease whose holder is not known cannot be claimed by whoever names its epoch */
	kgb_lease_grant(&l, 4, 0, 0, 5000);
	ASSERT_FALSE(kgb_lease_renew(&l, 3, 9, 100, 5000));
	ASSERT_FALSE(kgb_lease_renew(&l, 4, 9, 100, 5000));
	ASSERT_EQ_U64(l.worker, 0);
	ASSERT_TRUE(kgb_lease_expired(&l, 5000));
}

TEST(coord_worker_lost_after_three_leases)
{
	ASSERT_FALSE(kgb_sched_worker_lost(0, 15000, 5000));
	ASSERT_TRUE(kgb_sched_worker_lost(0, 15001, 5000));
}

TEST(coord_platform_name_slug)
{
	char *n = kgb_coord_platform_name("opencl", "pthread-skylake-avx512-AMD EPYC 7B13");
	ASSERT_EQ_STR(n, "opencl:pthread-skylake-avx512-amd-epyc-7b13");
	free(n);
	n = kgb_coord_platform_name("cuda", "  NVIDIA H200 ");
	ASSERT_EQ_STR(n, "cuda:nvidia-h200");
	free(n);
	n = kgb_coord_platform_name("hip", "");
	ASSERT_EQ_STR(n, "hip:device");
	free(n);
}

/* A coordinator state on loop with no scheduling passes (only the tables are
 * exercised) and one platform, "opencl:x", which it returns. */
static kgb_cplat_t *cs_open(kgb_coord_t *c, uv_loop_t *loop)
{
	uv_loop_init(loop);
	memset(c, 0, sizeof *c);
	c->loop = loop;
	c->cfg.lease_ms = 5000;
	c->stopping = true;
	kgb_coord_state_init(c);
	return kgb_coord_plat_add(c, 1, "opencl:x", "opencl", "x", "");
}

/* Campaign id on every platform, with one candidate (cand_id, method "m", op add). */
static kgb_ccamp_t *cs_camp(kgb_coord_t *c, uint64_t id, uint64_t cand_id)
{
	kgb_ccamp_t *camp = kgb_xcalloc(1, sizeof *camp);
	camp->id = id;
	camp->name = kgb_xstrdup("t");
	camp->all_platforms = true;
	camp->cands = kgb_xcalloc(1, sizeof *camp->cands);
	camp->ncands = 1;
	camp->cands[0].id = cand_id;
	camp->cands[0].method = kgb_xstrdup("m");
	camp->cands[0].op = kgb_xstrdup("add");
	kgb_coord_camp_add(c, camp);
	return camp;
}

/* Free the state and close the loop, which must have nothing left. */
static void cs_close(kgb_coord_t *c, uv_loop_t *loop)
{
	kgb_coord_state_free(c);
	uv_close((uv_handle_t *)&c->kick, NULL);
	uv_close((uv_handle_t *)&c->drop_idle, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	ASSERT_EQ_INT(uv_loop_close(loop), 0);
}

TEST(coord_job_table_insert_find_delete)
{
	uv_loop_t loop;
	kgb_coord_t c;
	kgb_cplat_t *p = cs_open(&c, &loop);
	kgb_ccamp_t *camp = cs_camp(&c, 1, 5);
	const int N = 5000;
	for (int i = 1; i <= N; i++)
		ASSERT_TRUE(kgb_coord_job_load(&c, (uint64_t)i * 7, camp, &camp->cands[0], p, 0, 1,
		                               i % 3 ? "queued" : "running", 1, 0, 0, 0) != NULL);
	ASSERT_TRUE(kgb_coord_job_load(&c, 7, camp, &camp->cands[0], p, 0, 1, "queued", 0, 0, 0, 0) == NULL);
	ASSERT_EQ_INT(camp->open_jobs, N);
	uint32_t q, r;
	kgb_coord_plat_counts(&c, p, &q, &r);
	ASSERT_EQ_INT(q + r, N);
	ASSERT_EQ_INT(r, N / 3);
	ASSERT_EQ_INT(c.running.n, N / 3);
	/* delete every other job, then every remaining one must still be found */
	for (int i = 1; i <= N; i += 2)
		kgb_coord_job_finish(&c, kgb_coord_job(&c, (uint64_t)i * 7));
	for (int i = 1; i <= N; i++) {
		kgb_cjob_t *j = kgb_coord_job(&c, (uint64_t)i * 7);
		if (i % 2)
			ASSERT_TRUE(j == NULL);
		else {
			ASSERT_TRUE(j != NULL);
			ASSERT_EQ_U64(j->id, (uint64_t)i * 7);
		}
	}
	ASSERT_EQ_INT(camp->open_jobs, N / 2);
	ASSERT_TRUE(kgb_coord_camp_matches(camp, "anything"));
	cs_close(&c, &loop);
}

/* A cancelled campaign leaves the campaign list and its queues at once; its queued jobs
 * are freed over several loop turns, and meanwhile they are found only as jobs of a
 * cancelled campaign (not counted as queued). Another campaign is untouched. */
TEST(coord_camp_drop_sliced)
{
	uv_loop_t loop;
	kgb_coord_t c;
	kgb_cplat_t *p = cs_open(&c, &loop);
	kgb_ccamp_t *camps[2];
	for (int k = 0; k < 2; k++)
		camps[k] = cs_camp(&c, (uint64_t)k + 1, 5 + (uint64_t)k);
	const int N = 3 * KGB_COORD_DROP_SLICE + 17; /* several slices */
	for (int i = 1; i <= N; i++)
		ASSERT_TRUE(kgb_coord_job_load(&c, (uint64_t)i, camps[0], &camps[0]->cands[0], p, 0, 1,
		                               i % 100 ? "queued" : "running", 1, 0, 0, 0) != NULL);
	for (int i = 1; i <= 10; i++)
		ASSERT_TRUE(kgb_coord_job_load(&c, (uint64_t)(N + i), camps[1], &camps[1]->cands[0], p, 0, 1, "queued",
		                               0, 0, 0, 0) != NULL);
	uint64_t *ids = NULL;
	size_t n = kgb_coord_camp_drop(&c, camps[0], &ids);
	ASSERT_EQ_INT(n, N);
	ASSERT_TRUE(ids != NULL);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += ids[i];
	ASSERT_EQ_U64(sum, (uint64_t)N * (N + 1) / 2); /* every id once */
	free(ids);
	ASSERT_TRUE(kgb_coord_camp(&c, 1) == NULL);
	ASSERT_TRUE(kgb_coord_camp(&c, 2) != NULL);
	ASSERT_EQ_INT(c.running.n, 0);
	/* the running ones went at once, the queued ones are still being freed */
	ASSERT_TRUE(kgb_coord_job(&c, 100) == NULL);
	ASSERT_TRUE(kgb_coord_job(&c, (uint64_t)N) != NULL);
	uint32_t q, r;
	kgb_coord_plat_counts(&c, p, &q, &r);
	ASSERT_EQ_INT(q, 10);
	ASSERT_EQ_INT(r, 0);
	int turns = 0;
	while (c.drops && turns < 100) {
		uv_run(&loop, UV_RUN_NOWAIT);
		turns++;
	}
	ASSERT_TRUE(c.drops == NULL);
	ASSERT_TRUE(turns >= 3);
	for (int i = 1; i <= N; i++)
		ASSERT_TRUE(kgb_coord_job(&c, (uint64_t)i) == NULL);
	for (int i = 1; i <= 10; i++)
		ASSERT_TRUE(kgb_coord_job(&c, (uint64_t)(N + i)) != NULL);
	ASSERT_EQ_INT(c.jcount, 10);
	cs_close(&c, &loop);
}

TEST(coord_campaign_platform_patterns)
{
	kgb_ccamp_t camp;
	memset(&camp, 0, sizeof camp);
	char *pats[2] = {"cuda:*", "opencl:pthread-cpu"};
	camp.patterns = pats;
	camp.npatterns = 2;
	ASSERT_TRUE(kgb_coord_camp_matches(&camp, "cuda:nvidia-h200"));
	ASSERT_TRUE(kgb_coord_camp_matches(&camp, "opencl:pthread-cpu"));
	ASSERT_FALSE(kgb_coord_camp_matches(&camp, "opencl:other"));
	ASSERT_FALSE(kgb_coord_camp_matches(&camp, "hip:gfx942"));
}

static void expect_utf8(const char *in, const char *want)
{
	char *s = kgb_coord_utf8(in);
	ASSERT_EQ_STR(s, want);
	free(s);
}

TEST(coord_utf8_cleaning)
{
	expect_utf8("plain ascii", "plain ascii");
	expect_utf8("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac");   /* valid 2- and 3-byte sequences kept */
	expect_utf8("bad \xff byte, cut \xe2\x82", "bad ? byte, cut ??");
	expect_utf8("overlong \xc0\xaf surrogate \xed\xa0\x80", "overlong ?? surrogate ???");
	expect_utf8(NULL, "");
}

/* The array literals of the multi-row statements (results, assignments): text quoted
 * with '"' and '\' escaped, NULL as NULL, floats as PostgreSQL reads them. */
TEST(coord_array_literal_elements)
{
	kgb_sbuf_t b = {0};
	kgb_sbuf_addc(&b, '{');
	kgb_sbuf_arrtext(&b, "say \"hi\" \\ {a,b}");
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_arrtext(&b, NULL);
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_arrtext(&b, "");
	kgb_sbuf_addc(&b, '}');
	char *s = kgb_sbuf_take(&b);
	ASSERT_EQ_STR(s, "{\"say \\\"hi\\\" \\\\ {a,b}\",NULL,\"\"}");
	free(s);
	ASSERT_TRUE(b.s == NULL && b.len == 0);
	kgb_sbuf_f64(&b, NAN);
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_f64(&b, INFINITY);
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_f64(&b, -INFINITY);
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_f64(&b, 0.1);
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_u64(&b, 18446744073709551615ull);
	kgb_sbuf_addc(&b, ',');
	kgb_sbuf_u64(&b, 0);
	s = kgb_sbuf_take(&b);
	ASSERT_EQ_STR(s, "NaN,Infinity,-Infinity,0.10000000000000001,18446744073709551615,0");
	free(s);
	s = kgb_sbuf_take(&b); /* empty: "" */
	ASSERT_EQ_STR(s, "");
	free(s);
}
