/* The benchmark's metrics over a campaign's result rows (kgb results / kgb report). */
#ifndef KGB_CLI_RESULTS_H
#define KGB_CLI_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include "wire.h"

/* One method on one platform. */
typedef struct kgb_cli_summary {
	const char *method;      /* points into the rows */
	const char *platform;    /* points into the rows */
	bool is_baseline;
	unsigned ops;            /* operators of the campaign on this platform (any method) */
	unsigned attempted;      /* operators this method has a row for */
	unsigned solved;         /* rows whose verdict is pass */
	unsigned fast1;          /* solved and speedup > 1 */
	unsigned timed;          /* solved rows with a speedup (> 0) */
	double geomean;          /* geometric mean speedup over those; 0 if none */
	double rse2;             /* sum of the squared rse of those speedups */
	double geomean_rse;      /* standard error of the mean log speedup */
	unsigned ties;           /* solved rows whose speedup interval includes 1 */
	double tokens;           /* sum over the method's rows */
	double gen_seconds;      /* sum over the method's rows */
} kgb_cli_summary_t;

/* Summarise rows per (method, platform), in order of first appearance; rows of other
 * platforms than `platform` are skipped when it is not NULL. fast_1 is fast1 / ops,
 * the share of all the campaign's operators (an operator a method has no candidate
 * for counts as unsolved). Returns the number of summaries and *out (caller frees;
 * NULL when 0). */
size_t kgb_cli_summarize(Kgb__ResultRow *const *rows, size_t n, const char *platform,
                         kgb_cli_summary_t **out);

/* "1.42x [1.38-1.46]" (the 2-sigma interval from rse, the standard error of the log
 * speedup) with " tie" appended when tie; "-" when speedup is not > 0. */
const char *kgb_cli_fmt_speedup_ci(double speedup, double rse, bool tie, char *buf, size_t n);

#endif
