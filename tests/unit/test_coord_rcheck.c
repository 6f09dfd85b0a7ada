/* Results checked for sense (coordinator/rcheck.c): each malformed result of issue
 * 33 refused with a reason naming the case and the field, and a genuine one taken. */
#include <math.h>
#include <string.h>

#include "../../coordinator/rcheck.h"
#include "test.h"

typedef struct {
	Kgb__JobResult jr;
	Kgb__CaseResult c[4], *cp[4];
	Kgb__Timing t[4];
} res_t;

/* cases [lo, lo+n) all pass; timed with a 5 us median when timed */
static void mk(res_t *r, uint32_t lo, size_t n, bool timed)
{
	memset(r, 0, sizeof *r);
	kgb__job_result__init(&r->jr);
	for (size_t i = 0; i < n; i++) {
		kgb__case_result__init(&r->c[i]);
		r->c[i].case_index = lo + (uint32_t)i;
		r->c[i].verdict = KGB__VERDICT__VERDICT_PASS;
		if (timed) {
			kgb__timing__init(&r->t[i]);
			r->t[i].median_ns = r->t[i].mean_ns = 5000;
			r->t[i].min_ns = 4000;
			r->t[i].p10_ns = 4500;
			r->t[i].p90_ns = 6000;
			r->t[i].samples = 20;
			r->c[i].timed = true;
			r->c[i].timing = &r->t[i];
		}
		r->cp[i] = &r->c[i];
	}
	r->jr.n_cases = n;
	r->jr.cases = r->cp;
}

static int check(res_t *r, uint32_t lo, uint32_t hi, bool timing, char *why)
{
	kgb_rcheck_job_t j = { .lo = lo, .hi = hi, .timing = timing };
	why[0] = 0;
	return kgb_rcheck_result(&r->jr, &j, why, 300);
}

TEST(coord_rcheck_genuine_results_pass)
{
	res_t r;
	char why[300];
	mk(&r, 8, 4, false);
	ASSERT_EQ_INT(check(&r, 8, 12, false, why), 0);
	mk(&r, 8, 4, true);
	ASSERT_EQ_INT(check(&r, 8, 12, true, why), 0);
	/* a partial result (the rest becomes not_run) and a failing verdict are fine */
	mk(&r, 8, 2, false);
	r.c[1].verdict = KGB__VERDICT__VERDICT_WRONG_RESULT;
	ASSERT_EQ_INT(check(&r, 8, 12, false, why), 0);
}

TEST(coord_rcheck_verdicts)
{
	res_t r;
	char why[300];
	mk(&r, 0, 2, false);
	r.c[1].verdict = (Kgb__Verdict)999;
	ASSERT_EQ_INT(check(&r, 0, 2, false, why), -1);
	ASSERT_CONTAINS(why, "case 1: verdict 999");
	r.c[1].verdict = KGB__VERDICT__VERDICT_UNSPECIFIED;
	ASSERT_EQ_INT(check(&r, 0, 2, false, why), -1);
	ASSERT_CONTAINS(why, "verdict 0 (unspecified)");
	r.c[1].verdict = KGB__VERDICT__VERDICT_OVERFIT; /* the coordinator's own */
	ASSERT_EQ_INT(check(&r, 0, 2, false, why), -1);
	r.c[1].verdict = (Kgb__Verdict)23; /* a hole in the enum */
	ASSERT_EQ_INT(check(&r, 0, 2, false, why), -1);
}

TEST(coord_rcheck_cases)
{
	res_t r;
	char why[300];
	/* the same case twice: pass, then wrong_result */
	mk(&r, 4, 2, false);
	r.c[1].case_index = 4;
	r.c[1].verdict = KGB__VERDICT__VERDICT_WRONG_RESULT;
	ASSERT_EQ_INT(check(&r, 4, 8, false, why), -1);
	ASSERT_CONTAINS(why, "case 4: reported twice");
	/* a case outside the shard, alone or among genuine ones */
	mk(&r, 100, 1, false);
	ASSERT_EQ_INT(check(&r, 4, 8, false, why), -1);
	ASSERT_CONTAINS(why, "case 100: outside the job's shard [4, 8)");
	mk(&r, 3, 2, false);
	ASSERT_EQ_INT(check(&r, 4, 8, false, why), -1);
	ASSERT_CONTAINS(why, "case 3: outside");
	mk(&r, 8, 1, false);
	ASSERT_EQ_INT(check(&r, 4, 8, false, why), -1);
}

TEST(coord_rcheck_timings)
{
	res_t r;
	char why[300];
	/* timed in a campaign that does not time */
	mk(&r, 0, 1, true);
	r.t[0].median_ns = r.t[0].min_ns = r.t[0].mean_ns = 1e-300;
	ASSERT_EQ_INT(check(&r, 0, 1, false, why), -1);
	ASSERT_CONTAINS(why, "the campaign does not time");
	r.c[0].timed = false; /* a timing without the flag, likewise */
	ASSERT_EQ_INT(check(&r, 0, 1, false, why), -1);
	/* below the launch floor, where the campaign times */
	mk(&r, 0, 1, true);
	r.t[0].median_ns = 1e-300;
	r.t[0].min_ns = 1e-301;
	ASSERT_EQ_INT(check(&r, 0, 1, true, why), -1);
	ASSERT_CONTAINS(why, "timing.median_ns 1e-300 is below the launch floor");
	const double badv[] = { NAN, INFINITY, -5000, 0 };
	for (size_t i = 0; i < 4; i++) {
		mk(&r, 0, 1, true);
		r.t[0].median_ns = badv[i];
		ASSERT_EQ_INT(check(&r, 0, 1, true, why), -1);
		ASSERT_CONTAINS(why, "timing.median_ns");
	}
	mk(&r, 0, 1, true);
	r.t[0].stdev_ns = -1;
	ASSERT_EQ_INT(check(&r, 0, 1, true, why), -1);
	ASSERT_CONTAINS(why, "stdev_ns -1 is negative");
	mk(&r, 0, 1, true);
	r.t[0].min_ns = 9000;
	ASSERT_EQ_INT(check(&r, 0, 1, true, why), -1);
	ASSERT_CONTAINS(why, "above its median");
	mk(&r, 0, 1, true);
	r.t[0].samples = 0;
	ASSERT_EQ_INT(check(&r, 0, 1, true, why), -1);
	/* an explicit floor */
	mk(&r, 0, 1, true);
	kgb_rcheck_job_t j = { .lo = 0, .hi = 1, .timing = true, .floor_ns = 4500 };
	ASSERT_EQ_INT(kgb_rcheck_result(&r.jr, &j, why, sizeof why), -1);
	ASSERT_CONTAINS(why, "min_ns 4000");
}
