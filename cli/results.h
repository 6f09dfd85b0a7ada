/* The benchmark's metrics over a campaign's result rows (kgb results / kgb report). */
#ifndef KGB_CLI_RESULTS_H
#define KGB_CLI_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "wire.h"

/* One method on one platform. */
typedef struct kgb_cli_summary {
	const char *method;      /* points into the rows */
	const char *platform;    /* points into the rows */
	bool is_baseline;
	unsigned ops;            /* operators of the campaign on this platform (any method),
	                          * less those of `unsupported` */
	unsigned unsupported;    /* operators whose every row of the method is unsupported: the
	                          * worker's environment could not run the candidate's kind
	                          * (no torch, no NVRTC, ...), an infrastructure failure kept
	                          * out of accuracy */
	unsigned attempted;      /* operators this method has a row for */
	unsigned solved;         /* rows whose verdict is pass */
	unsigned fast1;          /* solved and speedup > 1 */
	unsigned timed;          /* solved rows with a speedup (> 0) */
	double geomean;          /* geometric mean speedup over those; 0 if none */
	double rse2;             /* sum of the squared rse of those speedups */
	double geomean_rse;      /* standard error of the mean log speedup within jobs */
	double floor;            /* the platform's operator noise floor (0: none): the
	                          * geomean's interval is 2 sqrt(geomean_rse^2 + floor^2)
	                          * wide on each side (the floor is not divided by the
	                          * operators: a slow moment moves them all) */
	bool tie;                /* the geomean's interval includes 1 */
	unsigned ties;           /* solved rows whose speedup interval includes 1 */
	double tokens;           /* sum over the method's rows */
	double gen_seconds;      /* sum over the method's rows */
} kgb_cli_summary_t;

/* Summarise rows per (method, platform), in order of first appearance; rows of other
 * platforms than `platform` are skipped when it is not NULL. fast_1 is fast1 / ops,
 * the share of all the campaign's operators (an operator a method has no candidate
 * for counts as unsolved; one whose candidates' environment could not run them,
 * verdict unsupported, is left out and counted in unsupported). Returns the number of summaries and *out (caller frees;
 * NULL when 0). */
size_t kgb_cli_summarize(Kgb__ResultRow *const *rows, size_t n, const char *platform,
                         kgb_cli_summary_t **out);

/* "1.42x [1.38-1.46]" (the 2-sigma interval from rse, the standard error of the log
 * speedup) with " tie" appended when tie; "-" when speedup is not > 0. */
const char *kgb_cli_fmt_speedup_ci(double speedup, double rse, bool tie, char *buf, size_t n);

/* The standard deviation of a log speedup: within-job rse and the noise floor. */
double kgb_cli_sigma(double rse, double floor);

/* A speedup's spread into o: "speedup_rse", "noise_floor", the 2-sigma interval
 * "speedup_low" and "speedup_high", and "tie". */
void kgb_cli_speedup_json(json_t *o, double speedup, double rse, double floor, bool tie);

/* One line per noise floor ("noise floor on P: 4.1% per operator, ...") and one per
 * platform of rows that has none, each starting with prefix. */
void kgb_cli_print_floors(FILE *f, const char *prefix, Kgb__NoiseFloor *const *nf, size_t n,
                          Kgb__ResultRow *const *rows, size_t nrows);

/* An A/A campaign: on each platform, how many of the replicate method's operators tie
 * with the baseline. Fills ties/total per platform of rows (index as in plats, up to
 * max); returns the number of platforms. */
size_t kgb_cli_aa_share(const Kgb__ResultsReply *rr, const char **plats, unsigned *ties, unsigned *total,
                        size_t max);

/* The heatmap colour ("#rrggbb") of a share of cases passed in [0, 1]: red at 0,
 * yellow at 0.5, green at 1 (report_html.c). */
void kgb_cli_heat_colour(double share, char out[8]);

/* Write s to f with &, <, >, " and ' escaped (HTML text and attribute values). */
void kgb_cli_html_esc(FILE *f, const char *s);

/* Write the campaign's report as one self-contained HTML file at path (written to
 * path.tmp, then renamed): summary, operator x platform heatmaps, speedup
 * distributions, and the failing cases with their parameters, which it asks the
 * coordinator for (one show request per operator with failures). Errors are printed
 * as "kgb report: --html PATH: ...". Returns a KGB_CLI_* exit code. */
struct kgb_cli_global;
int kgb_cli_report_html(struct kgb_cli_global *g, uint64_t id, const Kgb__ResultsReply *rr,
                        const kgb_cli_summary_t *sum, size_t ns, const char *path);

struct kgb_cli_global;
/* kgb show's request: campaign id's cases of op (method, platform and baseline NULL
 * for every one / the campaign's own; failing: only the cases that did not pass).
 * Returns 0 and *reply (kgb_wire_free it), or the CLI's exit status. */
int kgb_cli_show_request(struct kgb_cli_global *g, const char *cmd, uint64_t id, const char *op,
                         const char *method, const char *platform, bool failing, const char *baseline,
                         Kgb__Envelope **reply);

/* The ResultsRequest round trip: campaign id's result rows (baseline NULL: the
 * campaign's own). Returns 0 and *reply with an ok results_reply (kgb_wire_free it),
 * or the CLI's exit status after printing the refusal as "kgb CMD: ...". */
int kgb_cli_results_request(struct kgb_cli_global *g, const char *cmd, uint64_t id, const char *baseline,
                            Kgb__Envelope **reply);

/* Failing cases with one verdict and message. */
typedef struct kgb_cli_fail_group {
	char *verdict, *message;
	size_t count, order;           /* cases; rank of first appearance */
	json_t *methods, *ops, *platforms;   /* distinct names (JSON arrays of strings) */
	json_t *cases;                 /* [{"method","op","platform","case","label"}] */
} kgb_cli_fail_group_t;

typedef struct kgb_cli_fail_groups {
	kgb_cli_fail_group_t *g;       /* most cases first */
	size_t n, cases;
} kgb_cli_fail_groups_t;

/* The failing cases of every operator of rows with one (method, platform: NULL for
 * all), one kgb show request per operator, grouped by identical verdict and message.
 * Returns 0 or the CLI's exit status; free out with kgb_cli_fail_groups_free. */
int kgb_cli_fail_groups(struct kgb_cli_global *g, const char *cmd, uint64_t id, const char *baseline,
                        const char *method, const char *platform, Kgb__ResultRow *const *rows, size_t n,
                        kgb_cli_fail_groups_t *out);
void kgb_cli_fail_groups_free(kgb_cli_fail_groups_t *f);

/* kgb failures (and kgb show ID --failing): print the groups as text or JSON. */
int kgb_cli_failures(struct kgb_cli_global *g, const char *cmd, uint64_t id, const char *method,
                     const char *platform, const char *op, const char *baseline, bool json);

/* When name (a --platform, --method or --op value; field 2, 0, 1) is not among the
 * rows', print "kgb CMD: no WHAT 'name' in this campaign; did you mean ...?" with the
 * names it has, and return true. */
bool kgb_cli_name_missing(const char *cmd, const char *what, const char *name, Kgb__ResultRow *const *rows,
                          size_t n, int field);

#endif
