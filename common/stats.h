/* Timing statistics and the adaptive stopping rule. */
#ifndef KGB_STATS_H
#define KGB_STATS_H

#include <stddef.h>
#include <stdbool.h>

typedef struct kgb_stats {
	double median, min, max, p10, p90, mean, stdev;
	double rse;      /* relative standard error of the mean: stdev / sqrt(n) / mean */
	size_t n;
} kgb_stats_t;

/* Compute the statistics of samples[0..n) (not modified; n may be 0 -> all zeros).
 * Percentiles use linear interpolation between order statistics. */
void kgb_stats_compute(const double *samples, size_t n, kgb_stats_t *out);

/* Adaptive sampling: call kgb_sampler_add after each sample; kgb_sampler_done says
 * whether to stop: at least min_samples and rse < target_rse, or the time budget
 * (sum of elapsed wall ns passed in) spent, or max_samples reached. */
typedef struct kgb_sampler {
	double *v;
	size_t n, cap;
	size_t min_samples, max_samples;
	double target_rse;
	double budget_ns, spent_ns;
	double min_ns;   /* wall time to spend at least before the rse rule may stop */
} kgb_sampler_t;
void kgb_sampler_init(kgb_sampler_t *s, size_t min_samples, size_t max_samples, double target_rse,
                      double budget_ns);
void kgb_sampler_add(kgb_sampler_t *s, double sample_ns, double wall_ns);
/* Samples taken even when the time budget is spent earlier. */
#define KGB_SAMPLER_FLOOR 3

/* Also require min_ns of wall time before the rse rule may stop sampling (nvbench's
 * minimum time: a few noisy early samples can meet the rse target by chance). The
 * budget and max_samples still stop it. Default 0. */
void kgb_sampler_set_min_time(kgb_sampler_t *s, double min_ns);
bool kgb_sampler_done(const kgb_sampler_t *s);
void kgb_sampler_release(kgb_sampler_t *s);

/* Geometric mean of positive values (non-positive ones skipped); 0 if none. */
double kgb_geomean(const double *v, size_t n);

#endif
