/* Results checked for sense before they are stored: see rcheck.h. */
#include "rcheck.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "util.h"
#include "validate.h"

/* A verdict a worker may report for a case: a named one, neither unspecified nor
 * the coordinator's own (overfit is judged over a candidate's cases). */
static bool case_verdict_ok(int v)
{
	return v != KGB_V_UNSPECIFIED && v != KGB_V_OVERFIT && kgb_verdict_parse(kgb_verdict_name(v)) == v;
}

static int bad(char *why, size_t n, uint32_t ci, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(char *why, size_t n, uint32_t ci, const char *fmt, ...)
{
	int k = snprintf(why, n, "case %" PRIu32 ": ", ci);
	if (k >= 0 && (size_t)k < n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why + k, n - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A duration: finite and at least lo. */
static bool dur_ok(double v, double lo)
{
	return isfinite(v) && v >= lo;
}

static int check_timing(const Kgb__Timing *t, uint32_t ci, double floor_ns, char *why, size_t n)
{
	const struct {
		const char *name;
		double v;
		double lo;
	} f[] = {
		{ "median_ns", t->median_ns, floor_ns }, { "min_ns", t->min_ns, floor_ns },
		{ "mean_ns", t->mean_ns, floor_ns },     { "p10_ns", t->p10_ns, 0 },
		{ "p90_ns", t->p90_ns, 0 },             { "stdev_ns", t->stdev_ns, 0 },
		{ "rse", t->rse, 0 },                   { "sm_clock_mhz", t->sm_clock_mhz, 0 },
		{ "temperature_c", t->temperature_c, -300 },
	};
	for (size_t i = 0; i < KGB_ARRAY_LEN(f); i++)
		if (!dur_ok(f[i].v, f[i].lo))
			return bad(why, n, ci, "timing.%s %g is %s", f[i].name, f[i].v,
			           !isfinite(f[i].v) ? "not finite"
			           : f[i].lo > 0      ? "below the launch floor"
			                              : "negative");
	if (t->min_ns > t->median_ns)
		return bad(why, n, ci, "timing.min_ns %g is above its median %g", t->min_ns, t->median_ns);
	if (t->samples == 0)
		return bad(why, n, ci, "timing with no samples");
	if (t->throttled_samples > t->samples)
		return bad(why, n, ci, "timing.throttled_samples %" PRIu32 " is more than its %" PRIu32 " samples",
		           t->throttled_samples, t->samples);
	return 0;
}

int kgb_rcheck_result(const Kgb__JobResult *jr, const kgb_rcheck_job_t *job, char *why, size_t whylen)
{
	double floor_ns = job->floor_ns > 0 ? job->floor_ns : KGB_RCHECK_FLOOR_NS;
	uint32_t span = job->hi > job->lo ? job->hi - job->lo : 0;
	uint8_t *seen = kgb_xcalloc(span + 1, 1);
	int rc = 0;
	for (size_t i = 0; i < jr->n_cases && rc == 0; i++) {
		const Kgb__CaseResult *cr = jr->cases[i];
		uint32_t ci = cr->case_index;
		int v = (int)cr->verdict;
		if (!case_verdict_ok(v))
			rc = bad(why, whylen, ci, "verdict %d (%s) is not a case verdict", v,
			         kgb_verdict_parse(kgb_verdict_name(v)) == v ? kgb_verdict_name(v) : "outside the enum");
		else if (ci < job->lo || ci >= job->hi)
			rc = bad(why, whylen, ci, "outside the job's shard [%" PRIu32 ", %" PRIu32 ")", job->lo, job->hi);
		else if (seen[ci - job->lo]++)
			rc = bad(why, whylen, ci, "reported twice (verdict %s the second time)", kgb_verdict_name(v));
		else if ((cr->timed || cr->timing) && !job->timing)
			rc = bad(why, whylen, ci, "%s, but the campaign does not time", cr->timed ? "marked timed" : "has a timing");
		else if (cr->timing)
			rc = check_timing(cr->timing, ci, floor_ns, why, whylen);
	}
	free(seen);
	return rc;
}

void kgb_rcheck_metrics(FILE *f, const struct kgb_coord *c)
{
	fputs("# HELP kgb_results_refused_total Results from a lease holder refused as senseless (docs/security.md), "
	      "by worker name, since start.\n# TYPE kgb_results_refused_total counter\n",
	      f);
	for (size_t i = 0; i < c->nworkers; i++) {
		const kgb_cworker_t *w = c->workers[i];
		if (!w->name)
			continue;
		fputs("kgb_results_refused_total{worker=\"", f);
		kgb_metrics_label(f, w->name);
		fprintf(f, "\"} %" PRIu32 "\n", w->results_refused);
	}
}
