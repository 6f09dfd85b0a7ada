/* The autotuner picks the configuration with the lowest median and skips failures. */
#include "test.h"
#include "autotune.h"
#include "backend.h"

typedef struct fake {
	size_t cur;
	const double *ns;       /* per configuration */
	int fail_prepare;       /* configuration whose prepare fails, or -1 */
	int fail_sample;        /* configuration whose samples fail, or -1 */
	unsigned calls;
} fake_t;

static int fprep(void *arg, size_t i)
{
	fake_t *f = arg;
	f->cur = i;
	return (int)i == f->fail_prepare ? KGB_BE_COMPILE : 0;
}

static int fsample(void *arg, double *ns)
{
	fake_t *f = arg;
	f->calls++;
	if ((int)f->cur == f->fail_sample)
		return KGB_BE_RESOURCE;
	/* one outlier per configuration must not decide: the median does */
	*ns = f->calls % 5 == 0 ? 1.0 : f->ns[f->cur];
	return 0;
}

TEST(autotune_picks_fastest_median)
{
	double ns[] = { 30.0, 10.0, 20.0, 5.0 };
	fake_t f = { .ns = ns, .fail_prepare = -1, .fail_sample = 3 };
	kgb_autotune_ops_t ops = { fprep, fsample };
	kgb_autotune_result_t r;
	kgb_autotune_pick(&ops, &f, 4, 7, &r);
	ASSERT_EQ_INT(r.best, 1);
	ASSERT_NEAR(r.best_ns, 10.0, 1e-12);
	ASSERT_EQ_INT(r.tried, 4);
	ASSERT_EQ_INT(r.failed, 1);
	ASSERT_EQ_INT(r.first_failed, 3);
	ASSERT_EQ_INT(r.first_rc, KGB_BE_RESOURCE);

	fake_t g = { .ns = ns, .fail_prepare = 0, .fail_sample = -1 };
	kgb_autotune_pick(&ops, &g, 1, 3, &r);
	ASSERT_EQ_INT(r.best, -1);
	ASSERT_EQ_INT(r.first_rc, KGB_BE_COMPILE);
}
