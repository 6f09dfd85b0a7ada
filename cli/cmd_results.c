/* kgb results ID / kgb report ID: per-operator verdicts and the benchmark's metrics. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "results.h"
#include "util.h"
#include "validate.h"

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Summarise rows per method and platform; see results.h. */
size_t kgb_cli_summarize(Kgb__ResultRow *const *rows, size_t n, const char *platform,
                         kgb_cli_summary_t **out)
{
	kgb_cli_summary_t *s = NULL;
	size_t ns = 0;
	double *logsum = NULL;

	*out = NULL;
	if (n == 0)
		return 0;
	s = kgb_xcalloc(n, sizeof *s);
	logsum = kgb_xcalloc(n, sizeof *logsum);
	for (size_t i = 0; i < n; i++) {
		const Kgb__ResultRow *r = rows[i];
		if (platform && !same(r->platform, platform))
			continue;
		size_t k;
		for (k = 0; k < ns; k++)
			if (same(s[k].method, r->method) && same(s[k].platform, r->platform))
				break;
		if (k == ns) {
			s[ns].method = r->method ? r->method : "";
			s[ns].platform = r->platform ? r->platform : "";
			ns++;
		}
		kgb_cli_summary_t *m = &s[k];
		m->is_baseline |= r->is_baseline;
		m->tokens += r->tokens > 0 ? r->tokens : 0;
		m->gen_seconds += r->gen_seconds > 0 ? r->gen_seconds : 0;
		/* several candidates of one operator (samples, rounds: docs/tables.md): the
		 * operator counts once, solved by its first passing row */
		bool seen = false, solved = false;
		for (size_t j = 0; j < i; j++)
			if (same(rows[j]->method, r->method) && same(rows[j]->platform, r->platform) &&
			    same(rows[j]->op, r->op)) {
				seen = true;
				solved |= rows[j]->verdict == KGB__VERDICT__VERDICT_PASS;
			}
		m->attempted += !seen;
		if (r->verdict != KGB__VERDICT__VERDICT_PASS || solved)
			continue;
		m->solved++;
		if (isfinite(r->speedup) && r->speedup > 0) {
			m->timed++;
			logsum[k] += log(r->speedup);
			m->rse2 += r->speedup_rse * r->speedup_rse;
			m->floor = fmax(m->floor, r->noise_floor);
			if (r->speedup > 1.0)
				m->fast1++;
			if (r->tie)
				m->ties++;
		}
	}
	for (size_t k = 0; k < ns; k++) {
		s[k].geomean = s[k].timed ? exp(logsum[k] / s[k].timed) : 0;
		/* the standard error of the mean log speedup over the operators */
		s[k].geomean_rse = s[k].timed ? sqrt(s[k].rse2) / s[k].timed : 0;
		s[k].tie = s[k].geomean > 0 &&
		           fabs(log(s[k].geomean)) <= 2 * kgb_cli_sigma(s[k].geomean_rse, s[k].floor);
		/* the campaign's operators on this platform: distinct ops over every method */
		unsigned ops = 0;
		for (size_t i = 0; i < n; i++) {
			if (!same(rows[i]->platform, s[k].platform))
				continue;
			bool dup = false;
			for (size_t j = 0; j < i && !dup; j++)
				dup = same(rows[j]->platform, s[k].platform) && same(rows[j]->op, rows[i]->op);
			ops += !dup;
		}
		/* the method's operators whose every row is unsupported: out of accuracy */
		unsigned unsup = 0;
		for (size_t i = 0; i < n; i++) {
			const Kgb__ResultRow *r = rows[i];
			if (!same(r->platform, s[k].platform) || !same(r->method, s[k].method))
				continue;
			bool first = true, all = true;
			for (size_t j = 0; j < n && (first || all); j++) {
				if (!same(rows[j]->platform, r->platform) || !same(rows[j]->method, r->method) ||
				    !same(rows[j]->op, r->op))
					continue;
				first &= j >= i;
				all &= rows[j]->verdict == KGB__VERDICT__VERDICT_UNSUPPORTED;
			}
			unsup += first && all;
		}
		s[k].unsupported = unsup;
		s[k].ops = ops - KGB_MIN(ops, unsup);
	}
	free(logsum);
	if (ns == 0) {
		free(s);
		return 0;
	}
	*out = s;
	return ns;
}

static const char *verdict_of(const Kgb__ResultRow *r)
{
	if (r->verdict == KGB__VERDICT__VERDICT_UNSPECIFIED)
		return r->cancelled ? "cancelled" : "pending";
	return kgb_verdict_name((int)r->verdict);
}

/* The speedup with its two-standard-error interval: "1.42x [1.38-1.46]", and " tie"
 * when the interval includes 1; "-" without one. */
const char *kgb_cli_fmt_speedup_ci(double speedup, double rse, bool tie, char *buf, size_t n)
{
	char s[32], lo[32], hi[32];
	if (!(speedup > 0) || !isfinite(speedup)) {
		kgb_strlcpy(buf, "-", n);
		return buf;
	}
	kgb_cli_fmt_speedup(speedup, s, sizeof s);
	if (!(rse > 0)) {
		snprintf(buf, n, "%s%s", s, tie ? " tie" : "");
		return buf;
	}
	kgb_cli_fmt_speedup(speedup * exp(-2 * rse), lo, sizeof lo);
	kgb_cli_fmt_speedup(speedup * exp(2 * rse), hi, sizeof hi);
	/* "1.38x" -> "1.38" inside the brackets */
	lo[strlen(lo) - 1] = '\0';
	hi[strlen(hi) - 1] = '\0';
	snprintf(buf, n, "%s [%s-%s]%s", s, lo, hi, tie ? " tie" : "");
	return buf;
}

/* See results.h. */
double kgb_cli_sigma(double rse, double floor)
{
	return sqrt(rse * rse + floor * floor);
}

/* See results.h. */
void kgb_cli_speedup_json(json_t *o, double speedup, double rse, double floor, bool tie)
{
	double sg = kgb_cli_sigma(rse, floor);
	json_object_set_new(o, "speedup_rse", json_real(rse));
	json_object_set_new(o, "noise_floor", json_real(floor));
	json_object_set_new(o, "speedup_low", json_real(speedup * exp(-2 * sg)));
	json_object_set_new(o, "speedup_high", json_real(speedup * exp(2 * sg)));
	json_object_set_new(o, "tie", json_boolean(tie));
}

/* See results.h. */
void kgb_cli_print_floors(FILE *f, const char *prefix, Kgb__NoiseFloor *const *nf, size_t n,
                          Kgb__ResultRow *const *rows, size_t nrows)
{
	for (size_t i = 0; i < n; i++) {
		const Kgb__NoiseFloor *x = nf[i];
		char when[32] = "?";
		time_t t = (time_t)x->measured_unix;
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
		fprintf(f, "%snoise floor on %s: %.1f%% per operator, %.1f%% per case\n", prefix, x->platform,
		        100 * x->op_floor, 100 * x->case_floor);
		fprintf(f, "%s  99%% upper bounds of the run-to-run spread, from A/A campaign%s %s: %u operators, %u cases\n",
		        prefix, strchr(x->campaigns, ',') ? "s" : "", x->campaigns, x->ops, x->cases);
		fprintf(f, "%s  measured %s%s\n", prefix, when,
		        x->own ? "; its own measurement: no other A/A campaign on this platform yet" : "");
	}
	for (size_t i = 0; i < nrows; i++) {
		bool seen = false;
		for (size_t k = 0; k < n && !seen; k++)
			seen = same(nf[k]->platform, rows[i]->platform);
		for (size_t j = 0; j < i && !seen; j++)
			seen = same(rows[j]->platform, rows[i]->platform);
		if (!seen)
			fprintf(f, "%sno noise floor measured on %s:\n%s  intervals hold the spread within jobs only "
			           "(scripts/aa-check.sh measures it)\n",
			        prefix, str_or(rows[i]->platform, "?"), prefix);
	}
}

/* See results.h. */
size_t kgb_cli_aa_share(const Kgb__ResultsReply *rr, const char **plats, unsigned *ties, unsigned *total,
                        size_t max)
{
	size_t np = 0;
	if (!rr->aa_method || !*rr->aa_method)
		return 0;
	for (size_t i = 0; i < rr->n_rows; i++) {
		const Kgb__ResultRow *r = rr->rows[i];
		if (!same(r->method, rr->aa_method) || r->verdict != KGB__VERDICT__VERDICT_PASS || !(r->speedup > 0))
			continue;
		size_t k;
		for (k = 0; k < np && !same(plats[k], r->platform); k++)
			;
		if (k == np) {
			if (np == max)
				continue;
			plats[np] = str_or(r->platform, "?");
			ties[np] = total[np] = 0;
			np++;
		}
		total[k]++;
		ties[k] += r->tie;
	}
	return np;
}

static void print_aa(FILE *f, const Kgb__ResultsReply *rr)
{
	const char *plats[64];
	unsigned ties[64], total[64];
	size_t np = kgb_cli_aa_share(rr, plats, ties, total, 64);
	for (size_t k = 0; k < np; k++)
		fprintf(f, "A/A check on %s: %s against %s: %u of %u operators tie (%.1f%%)\n", plats[k], rr->aa_method,
		       str_or(rr->baseline, "?"), ties[k], total[k], 100.0 * ties[k] / total[k]);
}

static void print_rows_table(Kgb__ResultRow *const *rows, size_t n, const char *platform)
{
	static const char *const hdr[] = { "METHOD", "OPERATOR", "PLATFORM", "VERDICT", "CASES",
		                               "SPEEDUP", "TIME", "TOKENS", "FIRST FAILURE" };
	kgb_cli_table_t *t = kgb_cli_table_new(9, hdr, "slslrArDw");
	char b1[64], b2[32], b3[32];

	for (size_t i = 0; i < n; i++) {
		const Kgb__ResultRow *r = rows[i];
		if (platform && !same(r->platform, platform))
			continue;
		if (r->round || r->sample)
			kgb_cli_table_cell(t, "%s r%u s%u%s", str_or(r->method, "?"), r->round, r->sample,
			                   r->is_baseline ? " (baseline)" : "");
		else
			kgb_cli_table_cell(t, "%s%s", str_or(r->method, "?"), r->is_baseline ? " (baseline)" : "");
		kgb_cli_table_cell(t, "%s", str_or(r->op, "?"));
		kgb_cli_table_cell(t, "%s", str_or(r->platform, "?"));
		kgb_cli_table_cell(t, "%s", verdict_of(r));
		if (r->cases_done < r->cases_total)
			kgb_cli_table_cell(t, "%u/%u (%u run)", r->cases_passed, r->cases_total, r->cases_done);
		else
			kgb_cli_table_cell(t, "%u/%u", r->cases_passed, r->cases_total);
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_speedup_ci(r->speedup, kgb_cli_sigma(r->speedup_rse, r->noise_floor),
		                                                   r->tie, b1, sizeof b1));
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_ns(r->median_ns, b2, sizeof b2));
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_tokens(r->tokens, b3, sizeof b3));
		/* wrapped to the table's width when printed; `kgb failures ID` has it whole */
		kgb_cli_table_cell(t, "%s", r->first_failure ? r->first_failure : "");
	}
	if (kgb_cli_table_rows(t) == 0)
		printf("no results%s%s\n", platform ? " on platform " : "", platform ? platform : "");
	else
		kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
}

static void print_summary_table(const kgb_cli_summary_t *s, size_t ns)
{
	static const char *const hdr[] = { "METHOD", "PLATFORM", "SOLVED", "FAST_1", "TIES", "GEOMEAN",
		                               "TOKENS", "TOKENS/SOLVED", "GEN TIME" };
	kgb_cli_table_t *t = kgb_cli_table_new(9, hdr, "ssrrrArDD");
	char b1[32], b2[32], b3[64], b4[32], b5[32], b6[32];

	for (size_t i = 0; i < ns; i++) {
		kgb_cli_table_cell(t, "%s%s", s[i].method, s[i].is_baseline ? " (baseline)" : "");
		kgb_cli_table_cell(t, "%s", s[i].platform);
		kgb_cli_table_cell(t, "%u/%u (%s)", s[i].solved, s[i].ops,
		                   kgb_cli_fmt_pct(s[i].solved, s[i].ops, b1, sizeof b1));
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_pct(s[i].fast1, s[i].ops, b2, sizeof b2));
		kgb_cli_table_cell(t, "%u", s[i].ties);
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_speedup_ci(s[i].geomean, kgb_cli_sigma(s[i].geomean_rse, s[i].floor),
		                                                   s[i].tie, b3, sizeof b3));
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_tokens(s[i].tokens, b4, sizeof b4));
		kgb_cli_table_cell(t, "%s", s[i].solved ? kgb_cli_fmt_tokens(s[i].tokens / s[i].solved, b5, sizeof b5) : "-");
		kgb_cli_table_cell(t, "%s", kgb_cli_fmt_duration(s[i].gen_seconds, b6, sizeof b6));
	}
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
}

static json_t *summary_json(const kgb_cli_summary_t *s, size_t ns)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < ns; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "method", json_string(s[i].method));
		json_object_set_new(o, "platform", json_string(s[i].platform));
		json_object_set_new(o, "is_baseline", json_boolean(s[i].is_baseline));
		json_object_set_new(o, "operators", json_integer(s[i].ops));
		json_object_set_new(o, "attempted", json_integer(s[i].attempted));
		json_object_set_new(o, "unsupported", json_integer(s[i].unsupported));
		json_object_set_new(o, "solved", json_integer(s[i].solved));
		json_object_set_new(o, "fast_1", json_real(s[i].ops ? (double)s[i].fast1 / s[i].ops : 0));
		json_object_set_new(o, "geomean_speedup", s[i].timed ? json_real(s[i].geomean) : json_null());
		json_object_set_new(o, "geomean_speedup_rse", s[i].timed ? json_real(s[i].geomean_rse) : json_null());
		json_object_set_new(o, "noise_floor", json_real(s[i].floor));
		json_object_set_new(o, "geomean_tie", json_boolean(s[i].tie));
		json_object_set_new(o, "ties", json_integer(s[i].ties));
		json_object_set_new(o, "tokens", json_real(s[i].tokens));
		json_object_set_new(o, "tokens_per_solved",
		                    s[i].solved ? json_real(s[i].tokens / s[i].solved) : json_null());
		json_object_set_new(o, "gen_seconds", json_real(s[i].gen_seconds));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *rows_json(Kgb__ResultRow *const *rows, size_t n, const char *platform)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		const Kgb__ResultRow *r = rows[i];
		if (platform && !same(r->platform, platform))
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "method", json_string(r->method ? r->method : ""));
		json_object_set_new(o, "op", json_string(r->op ? r->op : ""));
		json_object_set_new(o, "platform", json_string(r->platform ? r->platform : ""));
		json_object_set_new(o, "round", json_integer(r->round));
		json_object_set_new(o, "sample", json_integer(r->sample));
		json_object_set_new(o, "verdict", json_string(verdict_of(r)));
		json_object_set_new(o, "cases_total", json_integer(r->cases_total));
		json_object_set_new(o, "cases_passed", json_integer(r->cases_passed));
		json_object_set_new(o, "cases_done", json_integer(r->cases_done));
		json_object_set_new(o, "timed_cases", json_integer(r->timed_cases));
		json_object_set_new(o, "speedup", r->speedup > 0 && isfinite(r->speedup) ? json_real(r->speedup) : json_null());
		if (r->speedup > 0 && isfinite(r->speedup))
			kgb_cli_speedup_json(o, r->speedup, r->speedup_rse, r->noise_floor, r->tie);
		json_object_set_new(o, "median_ns", r->median_ns > 0 && isfinite(r->median_ns) ? json_real(r->median_ns) : json_null());
		json_object_set_new(o, "tokens", json_real(r->tokens));
		json_object_set_new(o, "gen_seconds", json_real(r->gen_seconds));
		json_object_set_new(o, "is_baseline", json_boolean(r->is_baseline));
		json_object_set_new(o, "first_failure", json_string(r->first_failure ? r->first_failure : ""));
		json_array_append_new(arr, o);
	}
	return arr;
}

static void print_rows_csv(Kgb__ResultRow *const *rows, size_t n, const char *platform)
{
	static const char *const hdr[] = { "method", "op", "platform", "verdict", "cases_passed",
		                               "cases_total", "cases_done", "timed_cases", "speedup",
		                               "median_ns", "tokens", "gen_seconds", "is_baseline",
		                               "first_failure", "speedup_rse", "tie", "noise_floor" };
	kgb_cli_csv_row(stdout, hdr, 17);
	for (size_t i = 0; i < n; i++) {
		const Kgb__ResultRow *r = rows[i];
		char f[12][40];
		if (platform && !same(r->platform, platform))
			continue;
		bool sp = r->speedup > 0 && isfinite(r->speedup);
		snprintf(f[0], 40, "%u", r->cases_passed);
		snprintf(f[1], 40, "%u", r->cases_total);
		snprintf(f[2], 40, "%u", r->cases_done);
		snprintf(f[3], 40, "%u", r->timed_cases);
		kgb_cli_fmt_num(sp ? r->speedup : NAN, f[4], 40);
		kgb_cli_fmt_num(r->median_ns > 0 ? r->median_ns : NAN, f[5], 40);
		kgb_cli_fmt_num(r->tokens, f[6], 40);
		kgb_cli_fmt_num(r->gen_seconds, f[7], 40);
		snprintf(f[8], 40, "%s", r->is_baseline ? "true" : "false");
		kgb_cli_fmt_num(sp ? r->speedup_rse : NAN, f[9], 40);
		snprintf(f[10], 40, "%s", sp ? (r->tie ? "true" : "false") : "");
		kgb_cli_fmt_num(sp ? r->noise_floor : NAN, f[11], 40);
		const char *cells[17] = { r->method, r->op, r->platform, verdict_of(r), f[0], f[1], f[2],
			                      f[3], f[4], f[5], f[6], f[7], f[8], r->first_failure, f[9], f[10], f[11] };
		kgb_cli_csv_row(stdout, cells, 17);
	}
}

static void print_summary_csv(const kgb_cli_summary_t *s, size_t ns)
{
	static const char *const hdr[] = { "method", "platform", "is_baseline", "operators", "attempted",
		                               "solved", "fast_1", "geomean_speedup", "tokens",
		                               "tokens_per_solved", "gen_seconds", "geomean_speedup_rse", "ties",
		                               "noise_floor", "geomean_tie" };
	kgb_cli_csv_row(stdout, hdr, 15);
	for (size_t i = 0; i < ns; i++) {
		char f[12][40];
		snprintf(f[0], 40, "%u", s[i].ops);
		snprintf(f[1], 40, "%u", s[i].attempted);
		snprintf(f[2], 40, "%u", s[i].solved);
		kgb_cli_fmt_num(s[i].ops ? (double)s[i].fast1 / s[i].ops : 0.0, f[3], 40);
		kgb_cli_fmt_num(s[i].timed ? s[i].geomean : NAN, f[4], 40);
		kgb_cli_fmt_num(s[i].tokens, f[5], 40);
		kgb_cli_fmt_num(s[i].solved ? s[i].tokens / s[i].solved : NAN, f[6], 40);
		kgb_cli_fmt_num(s[i].gen_seconds, f[7], 40);
		kgb_cli_fmt_num(s[i].timed ? s[i].geomean_rse : NAN, f[8], 40);
		snprintf(f[9], 40, "%u", s[i].ties);
		kgb_cli_fmt_num(s[i].floor, f[10], 40);
		snprintf(f[11], 40, "%s", s[i].timed ? (s[i].tie ? "true" : "false") : "");
		const char *cells[15] = { s[i].method, s[i].platform, s[i].is_baseline ? "true" : "false",
			                      f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11] };
		kgb_cli_csv_row(stdout, cells, 15);
	}
}

/* See results.h. */
int kgb_cli_results_request(kgb_cli_global_t *g, const char *cmd, uint64_t id, const char *baseline,
                            Kgb__Envelope **reply)
{
	Kgb__ResultsRequest req = KGB__RESULTS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	req.campaign_id = id;
	req.baseline = (char *)(baseline ? baseline : "");
	env.body_case = KGB__ENVELOPE__BODY_RESULTS;
	env.results = &req;
	int rc = kgb_cli_request(g, cmd, &env, KGB__ENVELOPE__BODY_RESULTS_REPLY, reply);
	if (rc != 0)
		return rc;
	const Kgb__ResultsReply *rr = (*reply)->results_reply;
	if (!rr || !rr->ok) {
		fprintf(stderr, "kgb %s: campaign %llu: %s\n", cmd, (unsigned long long)id,
		        rr ? str_or(rr->error, "refused (no reason given)") : "empty reply");
		kgb_wire_free(*reply);
		*reply = NULL;
		return KGB_CLI_EXIT_REFUSED;
	}
	return 0;
}

static int run(int argc, char **argv, kgb_cli_global_t *g, bool report)
{
	bool json = false, csv = false;
	const char *platform = NULL, *html = NULL, *baseline = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print rows and summary as one JSON object" },
		{ "csv", 0, KGB_CLI_OPT_FLAG, &csv, NULL,
		  report ? "print the summary as CSV" : "print the rows as CSV" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P", "only this platform" },
		{ "html", 0, KGB_CLI_OPT_STRING, &html, "FILE",
		  "write a self-contained HTML report (heatmap, speedups, failing cases) to FILE" },
		{ "baseline", 0, KGB_CLI_OPT_STRING, &baseline, "METHOD",
		  "speedups against METHOD, or native (the stored native timings), from the stored timings" },
	};
	const kgb_cli_spec_t spec = {
		.name = report ? "report" : "results",
		.usage = report ? "ID [--json | --csv | --html FILE] [--platform P] [--baseline METHOD]"
		                : "ID [--json | --csv] [--platform P] [--baseline METHOD]",
		.summary = report
		    ? "The benchmark's metrics for a campaign, per method and platform: operators\n"
		      "solved / total, fast_1 (share of operators solved and faster than the\n"
		      "baseline), geometric-mean speedup over solved operators, tokens, tokens per\n"
		      "solved operator, generation time; then the verdict of every operator."
		    : "The verdict of every method on every operator and platform: cases passed,\n"
		      "speedup against the baseline, kernel time, tokens, first failure; then the\n"
		      "summary per method (see kgb report).",
		KGB_CLI_OPTS(opts),
	};
	uint64_t id = 0;
	Kgb__Envelope *reply = NULL;
	kgb_cli_summary_t *sum = NULL;

	int rc = kgb_cli_parse_id_cmd(&spec, argc, argv, g, &id);
	if (rc >= 0)
		return rc;
	if (html && !report) {
		fprintf(stderr, "kgb %s: --html is an option of kgb report\n", spec.name);
		return KGB_CLI_EXIT_USAGE;
	}
	if (html && (json || csv || platform)) {
		fprintf(stderr, "kgb report: --html covers every platform and cannot be combined with --json, "
		                "--csv or --platform\n");
		return KGB_CLI_EXIT_USAGE;
	}
	if (json && csv) {
		fprintf(stderr, "kgb %s: --json and --csv cannot be combined\n", spec.name);
		return KGB_CLI_EXIT_USAGE;
	}

	rc = kgb_cli_results_request(g, spec.name, id, baseline, &reply);
	if (rc != 0)
		return rc;
	const Kgb__ResultsReply *rr = reply->results_reply;
	if (kgb_cli_name_missing(spec.name, "platform", platform, rr->rows, rr->n_rows, 2)) {
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	size_t ns = kgb_cli_summarize(rr->rows, rr->n_rows, platform, &sum);
	if (html) {
		rc = kgb_cli_report_html(g, id, rr, sum, ns, html);
		if (rc == 0)
			fprintf(stderr, "kgb report: campaign %llu written to %s\n", (unsigned long long)id, html);
		goto out;
	}
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "campaign_id", json_integer((json_int_t)id));
		json_object_set_new(j, "name", json_string(rr->campaign_name ? rr->campaign_name : ""));
		json_object_set_new(j, "baseline", json_string(rr->baseline ? rr->baseline : ""));
		json_object_set_new(j, "partial", json_boolean(rr->partial));
		json_object_set_new(j, "seed", strcmp(str_or(rr->seed_state, "secret"), "secret") == 0
		                                       ? json_null() : json_integer((json_int_t)rr->seed));
		json_object_set_new(j, "seed_state", json_string(str_or(rr->seed_state, "")));
		if (platform)
			json_object_set_new(j, "platform", json_string(platform));
		json_t *fl = json_array();
		for (size_t i = 0; i < rr->n_noise_floors; i++) {
			const Kgb__NoiseFloor *x = rr->noise_floors[i];
			json_array_append_new(fl, json_pack("{s:s,s:f,s:f,s:i,s:i,s:I,s:s,s:b}", "platform", x->platform,
			                                    "op_floor", x->op_floor, "case_floor", x->case_floor, "ops",
			                                    (int)x->ops, "cases", (int)x->cases, "measured_unix",
			                                    (json_int_t)x->measured_unix, "campaigns", x->campaigns, "own",
			                                    x->own));
		}
		json_object_set_new(j, "noise_floors", fl);
		if (rr->aa_method && *rr->aa_method) {
			const char *plats[64];
			unsigned ties[64], total[64];
			size_t np = kgb_cli_aa_share(rr, plats, ties, total, 64);
			json_t *aa = json_array();
			for (size_t k = 0; k < np; k++)
				json_array_append_new(aa, json_pack("{s:s,s:s,s:i,s:i}", "platform", plats[k], "method",
				                                    rr->aa_method, "ties", (int)ties[k], "operators",
				                                    (int)total[k]));
			json_object_set_new(j, "aa", aa);
		}
		if (report) {
			json_object_set_new(j, "summary", summary_json(sum, ns));
			json_object_set_new(j, "rows", rows_json(rr->rows, rr->n_rows, platform));
		} else {
			json_object_set_new(j, "rows", rows_json(rr->rows, rr->n_rows, platform));
			json_object_set_new(j, "summary", summary_json(sum, ns));
		}
		kgb_cli_json_print(stdout, j);
		goto out;
	}
	if (csv) {
		if (report)
			print_summary_csv(sum, ns);
		else
			print_rows_csv(rr->rows, rr->n_rows, platform);
		goto out;
	}
	char *pretext = NULL;
	size_t prelen = 0;
	FILE *pre = open_memstream(&pretext, &prelen);
	fprintf(pre, "campaign %llu %s%s%s\n", (unsigned long long)id, str_or(rr->campaign_name, ""),
	             rr->baseline && *rr->baseline ? ", baseline: " : "", str_or(rr->baseline, ""));
	{
		char sb[128];
		fprintf(pre, "%s\n", kgb_cli_seed_text(rr->seed, rr->seed_state, sb, sizeof sb));
	}
	if (rr->partial)
		fprintf(pre, "partial campaign: it runs a selection of cases, so its figures are not the benchmark's\n"
		             "accuracy (solved means every selected case passed)\n");
	{
		size_t ncanc = 0;
		for (size_t i = 0; i < rr->n_rows; i++)
			ncanc += rr->rows[i]->cancelled;
		if (ncanc)
			fprintf(pre, "incomplete: %zu of %zu rows were cancelled before every case ran; their solved and speedup\n"
			             "  figures cover only the cases that ran\n",
			             ncanc, rr->n_rows);
	}
	for (size_t i = 0; i < ns; i++)
		if (sum[i].unsupported)
			fprintf(pre, "unsupported: %u operator(s) of %s on %s did not run: the worker's environment cannot run the\n"
			             "  candidate's kind (an infrastructure failure, not the kernel's: left out of accuracy)\n",
			             sum[i].unsupported, sum[i].method, sum[i].platform);
	fprintf(pre, "speedups: geometric mean over the timed cases, [2-sigma interval]; tie: the interval includes 1\n"
	             "  (the interval holds the spread within jobs and the platform's noise floor)\n");
	kgb_cli_print_floors(pre, "", rr->noise_floors, rr->n_noise_floors, rr->rows, rr->n_rows);
	print_aa(pre, rr);
	fclose(pre);
	kgb_cli_print_wrapped(stdout, pretext);
	free(pretext);
	printf("\n");
	if (report && ns > 0) {
		print_summary_table(sum, ns);
		printf("\n");
	}
	print_rows_table(rr->rows, rr->n_rows, platform);
	if (!report && ns > 0) {
		printf("\n");
		print_summary_table(sum, ns);
	}
out:
	free(sum);
	if (reply)
		kgb_wire_free(reply);
	return rc;
}

/* kgb results ID [--json | --csv] [--platform P]. */
int kgb_cli_cmd_results(int argc, char **argv, kgb_cli_global_t *g)
{
	return run(argc, argv, g, false);
}

/* kgb report ID: the summary first. */
int kgb_cli_cmd_report(int argc, char **argv, kgb_cli_global_t *g)
{
	return run(argc, argv, g, true);
}
