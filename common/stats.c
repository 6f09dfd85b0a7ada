/* Timing statistics and the adaptive sampler. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Percentile q in [0, 1] of sorted[0..n) by linear interpolation between order
 * statistics (position q * (n - 1)). */
static double percentile(const double *sorted, size_t n, double q)
{
	double posn = q * (double)(n - 1);
	size_t lo = (size_t)floor(posn);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	double frac = posn - (double)lo;
	return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

/* Statistics of samples[0..n); see stats.h. stdev is the sample standard deviation
 * (n - 1 denominator; 0 for one sample). */
void kgb_stats_compute(const double *samples, size_t n, kgb_stats_t *out)
{
	memset(out, 0, sizeof *out);
	if (n == 0)
		return;
	double *s = kgb_xmalloc(n * sizeof *s);
	memcpy(s, samples, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	/* Welford's update keeps the variance accurate for large, close values */
	double mean = 0.0, m2 = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = s[i] - mean;
		mean += d / (double)(i + 1);
		m2 += d * (s[i] - mean);
	}
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = percentile(s, n, 0.5);
	out->p10 = percentile(s, n, 0.1);
	out->p90 = percentile(s, n, 0.9);
	out->mean = mean;
	out->stdev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
	out->rse = (n > 1 && mean != 0.0) ? out->stdev / sqrt((double)n) / fabs(mean) : 0.0;
	free(s);
}

/* Prepare a sampler; release with kgb_sampler_release. max_samples 0 means no cap
 * other than the budget; min_samples is raised to at least 1. */
void kgb_sampler_init(kgb_sampler_t *s, size_t min_samples, size_t max_samples, double target_rse,
                      double budget_ns)
{
	memset(s, 0, sizeof *s);
	s->min_samples = min_samples ? min_samples : 1;
	s->max_samples = max_samples;
	if (s->max_samples && s->max_samples < s->min_samples)
		s->max_samples = s->min_samples;
	s->target_rse = target_rse;
	s->budget_ns = budget_ns;
}

/* Record one measured sample and the wall time it cost. */
void kgb_sampler_add(kgb_sampler_t *s, double sample_ns, double wall_ns)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = kgb_xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = sample_ns;
	if (wall_ns > 0)
		s->spent_ns += wall_ns;
}

/* Running RSE of the samples so far (O(n), called once per sample: fine for the
 * sample counts timing uses). */
static double running_rse(const kgb_sampler_t *s)
{
	if (s->n < 2)
		return INFINITY;
	double mean = 0.0, m2 = 0.0;
	for (size_t i = 0; i < s->n; i++) {
		double d = s->v[i] - mean;
		mean += d / (double)(i + 1);
		m2 += d * (s->v[i] - mean);
	}
	if (mean == 0.0)
		return INFINITY;
	return sqrt(m2 / (double)(s->n - 1)) / sqrt((double)s->n) / fabs(mean);
}

/* Stop at max_samples, when the budget is spent (after at least one sample), or
 * with min_samples reached and the RSE under target. */
bool kgb_sampler_done(const kgb_sampler_t *s)
{
	if (s->max_samples && s->n >= s->max_samples)
		return true;
	/* the budget stops sampling only once there are KGB_SAMPLER_FLOOR samples: a
	 * busy machine (slow staging, cache flushes, validation) must not leave a timed
	 * case with one sample */
	if (s->n >= KGB_SAMPLER_FLOOR && s->budget_ns > 0 && s->spent_ns >= s->budget_ns)
		return true;
	if (s->n >= s->min_samples && s->spent_ns >= s->min_ns && running_rse(s) < s->target_rse)
		return true;
	return false;
}

/* See stats.h. */
void kgb_sampler_set_min_time(kgb_sampler_t *s, double min_ns)
{
	s->min_ns = min_ns > 0 ? min_ns : 0;
}

/* Free the samples. */
void kgb_sampler_release(kgb_sampler_t *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* Geometric mean of the positive values. */
double kgb_geomean(const double *v, size_t n)
{
	double acc = 0.0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > 0 && isfinite(v[i])) {
			acc += log(v[i]);
			k++;
		}
	return k ? exp(acc / (double)k) : 0.0;
}
