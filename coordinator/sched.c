/* Pure scheduling rules; see sched.h and docs/scheduler.md. */
#include "sched.h"

#include <stdlib.h>

#include "util.h"

uint32_t kgb_sched_shard_count(uint32_t case_count, uint32_t shard_size)
{
	if (shard_size == 0)
		shard_size = 1;
	return (uint32_t)(((uint64_t)case_count + shard_size - 1) / shard_size);
}

void kgb_sched_shard_range(uint32_t case_count, uint32_t shard_size, uint32_t i, uint32_t *lo,
                           uint32_t *hi)
{
	if (shard_size == 0)
		shard_size = 1;
	KGB_ASSERT_MSG(i < kgb_sched_shard_count(case_count, shard_size), "shard %u of %u cases / %u", i,
	               case_count, shard_size);
	uint64_t l = (uint64_t)i * shard_size;
	uint64_t h = l + shard_size;
	*lo = (uint32_t)l;
	*hi = (uint32_t)(h > case_count ? case_count : h);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const kgb_pick_entry_t *a = pa, *b = pb;
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->created_ms != b->created_ms)
		return a->created_ms < b->created_ms ? -1 : 1;
	if (a->campaign_id != b->campaign_id)
		return a->campaign_id < b->campaign_id ? -1 : 1;
	return 0;
}

void kgb_sched_sort(kgb_pick_entry_t *e, size_t n)
{
	if (n > 1)
		qsort(e, n, sizeof *e, entry_cmp);
}

int kgb_sched_pick(const kgb_pick_entry_t *e, size_t n, uint64_t last_id)
{
	/* the first ready entry gives the highest priority that can run */
	size_t first = n;
	for (size_t i = 0; i < n; i++)
		if (e[i].ready > 0) {
			first = i;
			break;
		}
	if (first == n)
		return -1;
	int prio = e[first].priority;
	size_t end = first;
	while (end < n && e[end].priority == prio)
		end++;
	/* position of the campaign served last within this priority group */
	size_t start = first;
	for (size_t i = first; i < end; i++)
		if (e[i].campaign_id == last_id) {
			start = i + 1;
			break;
		}
	size_t span = end - first;
	for (size_t k = 0; k < span; k++) {
		size_t i = first + ((start - first + k) % span);
		if (e[i].ready > 0)
			return (int)i;
	}
	return (int)first;
}

int64_t kgb_sched_backoff_ms(uint32_t attempts, int64_t base_ms, int64_t cap_ms)
{
	if (attempts < 1)
		attempts = 1;
	int64_t d = base_ms;
	for (uint32_t i = 1; i < attempts && d < cap_ms; i++)
		d *= 2;
	return d > cap_ms ? cap_ms : d;
}

void kgb_lease_grant(kgb_lease_t *l, uint64_t epoch, uint64_t worker, double now_ms, double lease_ms)
{
	l->epoch = epoch;
	l->worker = worker;
	l->deadline_ms = now_ms + lease_ms;
}

bool kgb_lease_renew(kgb_lease_t *l, uint64_t epoch, uint64_t worker, double now_ms, double lease_ms)
{
	if (epoch != l->epoch)
		return false;
	if (l->worker == 0 || l->worker != worker)
		return false;
	l->deadline_ms = now_ms + lease_ms;
	return true;
}

bool kgb_lease_expired(const kgb_lease_t *l, double now_ms)
{
	return now_ms >= l->deadline_ms;
}

bool kgb_sched_worker_lost(double last_seen_ms, double now_ms, double lease_ms)
{
	return now_ms - last_seen_ms > 3.0 * lease_ms;
}
