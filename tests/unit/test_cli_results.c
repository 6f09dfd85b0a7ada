/* Tests for the benchmark metrics of kgb results / kgb report (cli/cmd_results.c). */
#include <math.h>
#include <stdlib.h>

#include "../../cli/results.h"
#include "test.h"

static Kgb__ResultRow row(const char *method, const char *op, const char *platform, int verdict,
                          double speedup, double tokens, double gen_s)
{
	Kgb__ResultRow r = KGB__RESULT_ROW__INIT;
	r.method = (char *)method;
	r.op = (char *)op;
	r.platform = (char *)platform;
	r.verdict = (Kgb__Verdict)verdict;
	r.speedup = speedup;
	r.tokens = tokens;
	r.gen_seconds = gen_s;
	return r;
}

TEST(cli_results_summary_metrics)
{
	enum { PASS = KGB__VERDICT__VERDICT_PASS, WRONG = KGB__VERDICT__VERDICT_WRONG_RESULT };
	Kgb__ResultRow r[] = {
		row("llm", "add", "cpu", PASS, 2.0, 1000, 10),
		row("llm", "sum", "cpu", PASS, 0.5, 3000, 20),
		row("llm", "softmax", "cpu", WRONG, 4.0, 2000, 5),   /* fast but wrong: not counted */
		row("agent", "add", "cpu", PASS, 8.0, 500, 1),
		row("agent", "add", "gpu", PASS, 1.5, 500, 1),
		row("ref", "add", "cpu", PASS, 1.0, 0, 0),
		row("ref", "sum", "cpu", PASS, 1.0, 0, 0),
		row("ref", "softmax", "cpu", PASS, 1.0, 0, 0),
	};
	r[5].is_baseline = r[6].is_baseline = r[7].is_baseline = true;
	Kgb__ResultRow *p[8];
	for (int i = 0; i < 8; i++)
		p[i] = &r[i];

	kgb_cli_summary_t *s = NULL;
	size_t n = kgb_cli_summarize(p, 8, NULL, &s);
	ASSERT_EQ_INT(n, 4);
	/* first appearance order */
	ASSERT_EQ_STR(s[0].method, "llm");
	ASSERT_EQ_STR(s[1].method, "agent");
	ASSERT_EQ_STR(s[1].platform, "cpu");
	ASSERT_EQ_STR(s[2].platform, "gpu");
	ASSERT_EQ_STR(s[3].method, "ref");

	ASSERT_EQ_INT(s[0].ops, 3);
	ASSERT_EQ_INT(s[0].attempted, 3);
	ASSERT_EQ_INT(s[0].solved, 2);
	ASSERT_EQ_INT(s[0].fast1, 1);
	ASSERT_NEAR(s[0].geomean, 1.0, 1e-12);          /* sqrt(2 * 0.5) */
	ASSERT_NEAR(s[0].tokens, 6000, 0);
	ASSERT_NEAR(s[0].gen_seconds, 35, 0);
	ASSERT_FALSE(s[0].is_baseline);

	/* agent has one candidate of three operators on cpu: solved 1/3 */
	ASSERT_EQ_INT(s[1].ops, 3);
	ASSERT_EQ_INT(s[1].attempted, 1);
	ASSERT_EQ_INT(s[1].solved, 1);
	ASSERT_EQ_INT(s[1].fast1, 1);
	ASSERT_NEAR(s[1].geomean, 8.0, 1e-12);
	/* on gpu only "add" exists */
	ASSERT_EQ_INT(s[2].ops, 1);
	ASSERT_NEAR(s[2].geomean, 1.5, 1e-12);

	ASSERT_TRUE(s[3].is_baseline);
	ASSERT_EQ_INT(s[3].solved, 3);
	ASSERT_EQ_INT(s[3].fast1, 0);                   /* 1.0 is not faster */
	free(s);

	n = kgb_cli_summarize(p, 8, "gpu", &s);
	ASSERT_EQ_INT(n, 1);
	ASSERT_EQ_STR(s[0].method, "agent");
	free(s);
	n = kgb_cli_summarize(p, 8, "tpu", &s);
	ASSERT_EQ_INT(n, 0);
	ASSERT_TRUE(s == NULL);
}

TEST(cli_results_summary_untimed)
{
	/* solved without any timing (speedup 0, NaN): counted as solved, not in the mean */
	Kgb__ResultRow r[] = {
		row("m", "a", "cpu", KGB__VERDICT__VERDICT_PASS, 0, 10, 1),
		row("m", "b", "cpu", KGB__VERDICT__VERDICT_PASS, NAN, 10, 1),
		row("m", "c", "cpu", KGB__VERDICT__VERDICT_UNSPECIFIED, 3, 10, 1),
	};
	Kgb__ResultRow *p[3] = { &r[0], &r[1], &r[2] };
	kgb_cli_summary_t *s = NULL;
	ASSERT_EQ_INT(kgb_cli_summarize(p, 3, NULL, &s), 1);
	ASSERT_EQ_INT(s[0].solved, 2);
	ASSERT_EQ_INT(s[0].timed, 0);
	ASSERT_NEAR(s[0].geomean, 0, 0);
	ASSERT_EQ_INT(s[0].fast1, 0);
	free(s);
	ASSERT_EQ_INT(kgb_cli_summarize(p, 0, NULL, &s), 0);
}

/* Speedups with their 2-sigma interval; a tie when the interval includes 1. */
TEST(cli_results_speedup_interval)
{
	char b[64];
	ASSERT_EQ_STR(kgb_cli_fmt_speedup_ci(0, 0.1, false, b, sizeof b), "-");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup_ci(1.5, 0, false, b, sizeof b), "1.50x");
	/* 2 * 0.05 on the log scale: [1.5 e^-0.1, 1.5 e^0.1] = [1.36, 1.66] */
	ASSERT_EQ_STR(kgb_cli_fmt_speedup_ci(1.5, 0.05, false, b, sizeof b), "1.50x [1.36-1.66]");
	ASSERT_EQ_STR(kgb_cli_fmt_speedup_ci(1.05, 0.05, true, b, sizeof b), "1.05x [0.95-1.16] tie");

	/* ties are counted per method; the geomean's standard error shrinks with more operators */
	Kgb__ResultRow r[2];
	Kgb__ResultRow *rp[2] = { &r[0], &r[1] };
	for (int i = 0; i < 2; i++) {
		kgb__result_row__init(&r[i]);
		r[i].method = "m";
		r[i].platform = "p";
		r[i].verdict = KGB__VERDICT__VERDICT_PASS;
		r[i].speedup_rse = 0.1;
	}
	r[0].op = "add";
	r[0].speedup = 1.1;
	r[0].tie = true;
	r[1].op = "mul";
	r[1].speedup = 3.0;
	kgb_cli_summary_t *s = NULL;
	ASSERT_EQ_INT((int)kgb_cli_summarize(rp, 2, NULL, &s), 1);
	ASSERT_EQ_INT((int)s[0].ties, 1);
	ASSERT_TRUE(fabs(s[0].geomean_rse - sqrt(0.02) / 2) < 1e-12);
	/* geomean sqrt(3.3) = 1.82: beyond 2 * 0.071 within jobs */
	ASSERT_FALSE(s[0].tie);
	free(s);

	/* the platform's noise floor widens the geomean's interval, undivided by the
	 * operators (a slow moment moves them all): with a 0.35 floor, 2 sqrt(0.005 +
	 * 0.1225) = 0.714 > ln 1.82 = 0.599, a tie */
	r[0].noise_floor = r[1].noise_floor = 0.35;
	ASSERT_EQ_INT((int)kgb_cli_summarize(rp, 2, NULL, &s), 1);
	ASSERT_NEAR(s[0].floor, 0.35, 0);
	ASSERT_TRUE(s[0].tie);
	free(s);
	ASSERT_NEAR(kgb_cli_sigma(0.3, 0.4), 0.5, 1e-12);
}

TEST(cli_results_summary_samples)
{
	/* several candidates of one operator (samples, rounds): the operator counts once,
	 * solved by its first passing row, whose speedup is the operator's; every
	 * candidate's tokens count */
	enum { PASS = KGB__VERDICT__VERDICT_PASS, WRONG = KGB__VERDICT__VERDICT_WRONG_RESULT };
	Kgb__ResultRow r[] = {
		row("m", "add", "cpu", WRONG, 0, 100, 1),
		row("m", "add", "cpu", PASS, 2.0, 100, 1),
		row("m", "add", "cpu", PASS, 8.0, 100, 1),
		row("m", "sum", "cpu", WRONG, 0, 100, 1),
		row("m", "sum", "cpu", WRONG, 0, 100, 1),
	};
	Kgb__ResultRow *p[5] = { &r[0], &r[1], &r[2], &r[3], &r[4] };
	kgb_cli_summary_t *s = NULL;
	ASSERT_EQ_INT(kgb_cli_summarize(p, 5, NULL, &s), 1);
	ASSERT_EQ_INT(s[0].ops, 2);
	ASSERT_EQ_INT(s[0].attempted, 2);
	ASSERT_EQ_INT(s[0].solved, 1);
	ASSERT_EQ_INT(s[0].timed, 1);
	ASSERT_NEAR(s[0].geomean, 2.0, 1e-12);
	ASSERT_NEAR(s[0].tokens, 500, 0);
	free(s);
}
