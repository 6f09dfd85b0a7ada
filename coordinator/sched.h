/* Pure scheduling logic of the coordinator: shard expansion, the fair-share pick
 * order, and lease bookkeeping (backoff, expiry). No I/O here, so the unit tests can
 * drive every rule directly; state.c and jobs.c apply these rules to live state. */
#ifndef KGB_COORD_SCHED_H
#define KGB_COORD_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- shards ---- */

/* Number of shards (jobs) an operator with case_count cases splits into with shards
 * of at most shard_size cases. 0 cases -> 0 shards. shard_size 0 is treated as 1. */
uint32_t kgb_sched_shard_count(uint32_t case_count, uint32_t shard_size);
/* Case range [*lo, *hi) of shard i (0 <= i < kgb_sched_shard_count). Shards are
 * contiguous, in order, all of shard_size cases except possibly the last. */
void kgb_sched_shard_range(uint32_t case_count, uint32_t shard_size, uint32_t i, uint32_t *lo,
                           uint32_t *hi);

/* ---- pick order ---- */

/* The priority of an interactive campaign (kgb verify, SubmitRequest.interactive):
 * above every priority a manifest may ask for (-1000000..1000000), so its jobs are
 * picked before any batch campaign's queued jobs. */
#define KGB_SCHED_PRIORITY_INTERACTIVE 2000000

/* One campaign's queue on one platform, as the picker sees it. */
typedef struct kgb_pick_entry {
	uint64_t campaign_id;
	int priority;          /* higher first */
	int64_t created_ms;    /* older first among equal priority */
	size_t ready;          /* jobs that may be assigned now */
} kgb_pick_entry_t;

/* Order entries by (priority desc, created asc, campaign id asc): the order
 * kgb_sched_pick expects. */
void kgb_sched_sort(kgb_pick_entry_t *e, size_t n);
/* Choose the campaign whose job runs next: the highest priority that has a ready job;
 * among the campaigns of that priority, round robin in age order, starting after
 * last_id (the campaign served last on this platform; 0 = none). Entries must be
 * sorted with kgb_sched_sort. Returns the index of the entry, or -1 if none is ready. */
int kgb_sched_pick(const kgb_pick_entry_t *e, size_t n, uint64_t last_id);

/* ---- leases ---- */

/* Delay before a job that failed for infrastructure reasons (attempts so far, >= 1)
 * may run again: base_ms * 2^(attempts-1), capped at cap_ms. */
int64_t kgb_sched_backoff_ms(uint32_t attempts, int64_t base_ms, int64_t cap_ms);

/* A lease: who holds a job under which epoch until when. */
typedef struct kgb_lease {
	uint64_t epoch;
	uint64_t worker;       /* holder's worker id (store id), 0 = none known */
	double deadline_ms;    /* monotonic ms */
} kgb_lease_t;

/* Start a lease for epoch held by worker. */
void kgb_lease_grant(kgb_lease_t *l, uint64_t epoch, uint64_t worker, double now_ms, double lease_ms);
/* A heartbeat from worker says it still runs the job under epoch: extend the lease
 * and return true when that is the current lease holder and epoch; a stale epoch or
 * another worker changes nothing and returns false. A lease with no known holder
 * (worker 0) is never renewed: nobody can claim it, it runs out and the job goes
 * back (a worker that names it is not trusted to be its holder). */
bool kgb_lease_renew(kgb_lease_t *l, uint64_t epoch, uint64_t worker, double now_ms, double lease_ms);
/* True when the lease ran out at now_ms. */
bool kgb_lease_expired(const kgb_lease_t *l, double now_ms);

/* True when a worker last seen at last_seen_ms counts as lost at now_ms (not seen for
 * three lease periods). */
bool kgb_sched_worker_lost(double last_seen_ms, double now_ms, double lease_ms);

#endif
