/* Tests for common/stats.c. */
#include <math.h>

#include "stats.h"
#include "test.h"

TEST(stats_known_samples)
{
	double v[] = {5, 1, 4, 2, 3}; /* unsorted on purpose */
	kgb_stats_t s;
	kgb_stats_compute(v, 5, &s);
	ASSERT_EQ_INT(s.n, 5);
	ASSERT_NEAR(s.median, 3, 1e-12);
	ASSERT_NEAR(s.min, 1, 0);
	ASSERT_NEAR(s.max, 5, 0);
	ASSERT_NEAR(s.mean, 3, 1e-12);
	ASSERT_NEAR(s.stdev, sqrt(2.5), 1e-12);     /* sample stdev */
	ASSERT_NEAR(s.p10, 1.4, 1e-12);             /* 1 + 0.4 * (2 - 1) */
	ASSERT_NEAR(s.p90, 4.6, 1e-12);
	ASSERT_NEAR(s.rse, sqrt(2.5) / sqrt(5.0) / 3.0, 1e-12);
	ASSERT_NEAR(v[0], 5, 0);                    /* input untouched */

	double even[] = {10, 20, 30, 40};
	kgb_stats_compute(even, 4, &s);
	ASSERT_NEAR(s.median, 25, 1e-12);
	ASSERT_NEAR(s.p10, 13, 1e-12);

	double one[] = {7};
	kgb_stats_compute(one, 1, &s);
	ASSERT_NEAR(s.median, 7, 0);
	ASSERT_NEAR(s.stdev, 0, 0);
	ASSERT_NEAR(s.p90, 7, 0);

	kgb_stats_compute(NULL, 0, &s);
	ASSERT_EQ_INT(s.n, 0);
	ASSERT_NEAR(s.median, 0, 0);
}

TEST(stats_large_offset_variance)
{
	/* values around 1e9 differing by 1: a naive sum of squares loses this */
	double v[1000];
	for (int i = 0; i < 1000; i++)
		v[i] = 1e9 + (i % 2);
	kgb_stats_t s;
	kgb_stats_compute(v, 1000, &s);
	ASSERT_NEAR(s.stdev, sqrt(0.25 * 1000.0 / 999.0), 1e-6);
}

TEST(stats_sampler_stops_on_rse)
{
	kgb_sampler_t s;
	kgb_sampler_init(&s, 10, 1000, 0.005, 1e12);
	/* constant samples: rse is 0 but at least min_samples are needed */
	for (int i = 0; i < 9; i++) {
		kgb_sampler_add(&s, 100.0, 100.0);
		ASSERT_FALSE(kgb_sampler_done(&s));
	}
	kgb_sampler_add(&s, 100.0, 100.0);
	ASSERT_TRUE(kgb_sampler_done(&s));
	kgb_sampler_release(&s);

	/* noisy samples (alternating 50 / 150: rse = 0.5 / sqrt(n)) need n > 10000 for 0.5%;
	 * max_samples caps it */
	kgb_sampler_init(&s, 10, 500, 0.005, 1e12);
	int n = 0;
	while (!kgb_sampler_done(&s)) {
		kgb_sampler_add(&s, n % 2 ? 50.0 : 150.0, 1.0);
		n++;
		ASSERT_TRUE(n <= 500);
	}
	ASSERT_EQ_INT(n, 500);
	kgb_sampler_release(&s);
}

TEST(stats_sampler_stops_on_budget)
{
	kgb_sampler_t s;
	kgb_sampler_init(&s, 10, 0, 0.005, 1000.0);
	int n = 0;
	while (!kgb_sampler_done(&s)) {
		kgb_sampler_add(&s, n % 2 ? 50.0 : 150.0, 300.0);
		n++;
		ASSERT_TRUE(n < 100);
	}
	ASSERT_EQ_INT(n, 4); /* 4 * 300 >= 1000 */
	ASSERT_EQ_INT(s.n, 4);
	kgb_sampler_release(&s);
}

TEST(stats_geomean)
{
	double v[] = {1, 4, 16};
	ASSERT_NEAR(kgb_geomean(v, 3), 4.0, 1e-12);
	double w[] = {2, 0, -1, 8};
	ASSERT_NEAR(kgb_geomean(w, 4), 4.0, 1e-12);
	ASSERT_NEAR(kgb_geomean(w + 1, 2), 0.0, 0);
}

TEST(stats_sampler_min_time)
{
	kgb_sampler_t s;
	/* constant samples meet the rse target at 10, but 2000 ns of wall time is required:
	 * at 100 ns a sample that is 20 samples */
	kgb_sampler_init(&s, 10, 1000, 0.005, 1e12);
	kgb_sampler_set_min_time(&s, 2000.0);
	int n = 0;
	while (!kgb_sampler_done(&s)) {
		kgb_sampler_add(&s, 100.0, 100.0);
		n++;
		ASSERT_TRUE(n <= 1000);
	}
	ASSERT_EQ_INT(n, 20);
	kgb_sampler_release(&s);
	/* the budget still wins over the minimum time */
	kgb_sampler_init(&s, 10, 0, 0.005, 1000.0);
	kgb_sampler_set_min_time(&s, 5000.0);
	n = 0;
	while (!kgb_sampler_done(&s)) {
		kgb_sampler_add(&s, 100.0, 100.0);
		n++;
		ASSERT_TRUE(n <= 1000);
	}
	ASSERT_EQ_INT(n, 10);
	kgb_sampler_release(&s);
}
