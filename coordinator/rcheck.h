/* Results checked for sense before they are stored (docs/security.md, "What a
 * result must look like"). The lease holder's JobResult is refused whole when a case
 * result is not one a worker can produce: a verdict outside the enum, unspecified or
 * the coordinator's own (overfit); a case outside the job's shard or sent twice;
 * timings where the campaign does not time, or not positive and finite, or below the
 * launch floor. Pure functions over the decoded message; the coordinator (wproto.c)
 * logs the reason with the worker's name and gives the job to another worker. */
#ifndef KGB_COORD_RCHECK_H
#define KGB_COORD_RCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire.h"

/* No kernel launch on any device kgb drives completes, as measured by its timers, in
 * under this many nanoseconds (a GPU launch costs microseconds; batched CPU launches
 * through PoCL tens of microseconds): a median or minimum below it is not a
 * measurement. */
#define KGB_RCHECK_FLOOR_NS 100.0

typedef struct kgb_rcheck_job {
	uint32_t lo, hi;          /* the job's shard [lo, hi) */
	bool timing;              /* its campaign times */
	double floor_ns;          /* 0: KGB_RCHECK_FLOOR_NS */
} kgb_rcheck_job_t;

/* 0 if every case result of jr makes sense for job; else -1 with why naming the
 * case, the field and the value ("case 3: verdict 999 is not a verdict"). */
int kgb_rcheck_result(const Kgb__JobResult *jr, const kgb_rcheck_job_t *job, char *why, size_t whylen);

struct kgb_coord;
/* The refused-results counter of every worker known since start, as Prometheus
 * text (kgb_results_refused_total{worker="NAME"}). */
void kgb_rcheck_metrics(FILE *f, const struct kgb_coord *c);

#endif
