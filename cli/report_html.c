/* kgb report ID --html FILE: the campaign's report as one self-contained HTML page.
 *
 * The page needs nothing but itself: the style sheet is inline, the charts are inline
 * SVG, there is no script and no external reference (fonts, images, links), so it can
 * be mailed, archived or opened on a machine without network. It holds
 *   - the summary per method and platform (the figures of `kgb report`);
 *   - one heatmap per method: operators down, platforms across, each cell coloured by
 *     the share of cases that passed (red 0%, yellow 50%, green 100%) and labelled
 *     with the cases passed and the speedup against the baseline;
 *   - the distribution of per-operator speedups of every method (solved operators
 *     only), on a logarithmic axis, with the quartiles and the geometric mean;
 *   - the failing cases, grouped by identical verdict and message with a count, each
 *     group with its cases' parameters (the case labels), fetched from the
 *     coordinator operator by operator (the kgb show request). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "results.h"
#include "util.h"
#include "validate.h"

/* Cases listed (by their parameters) per group of identical failures; the rest are
 * counted. */
#define MAX_GROUP_CASES 200
/* Characters of a failure message kept in the page. */
#define MAX_MESSAGE 600

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Write s with &, <, >, " and ' escaped; at most max bytes of s (0: all), then "...". */
static void put_esc(FILE *f, const char *s, size_t max)
{
	size_t n = 0;
	for (; s && *s; s++, n++) {
		if (max && n >= max) {
			fputs("...", f);
			return;
		}
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

/* See results.h. */
void kgb_cli_html_esc(FILE *f, const char *s)
{
	put_esc(f, s, 0);
}

/* The heatmap colour of a pass share in [0, 1]: red, yellow, green, linearly in RGB
 * between the three. Exact at the ends, so a test can find fully-passing and
 * fully-failing cells by colour (docs/report.md). */
void kgb_cli_heat_colour(double share, char out[8])
{
	static const int stops[3][3] = { { 0xd7, 0x30, 0x27 }, { 0xfe, 0xe0, 0x8b }, { 0x1a, 0x98, 0x50 } };
	if (!(share >= 0))
		share = 0;
	if (share > 1)
		share = 1;
	int lo = share < 0.5 ? 0 : 1;
	double t = share < 0.5 ? share * 2 : (share - 0.5) * 2;
	int rgb[3];
	for (int i = 0; i < 3; i++)
		rgb[i] = (int)lround(stops[lo][i] + t * (stops[lo + 1][i] - stops[lo][i]));
	snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* Distinct strings of rows (by field), in order of first appearance. Caller frees the
 * array (not the strings, which point into the rows). */
static size_t distinct(Kgb__ResultRow *const *rows, size_t n, int field, const char ***out)
{
	const char **v = kgb_xcalloc(n + 1, sizeof *v);
	size_t nv = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = field == 0 ? rows[i]->method : field == 1 ? rows[i]->op : rows[i]->platform;
		s = s ? s : "";
		size_t k;
		for (k = 0; k < nv && strcmp(v[k], s) != 0; k++)
			;
		if (k == nv)
			v[nv++] = s;
	}
	*out = v;
	return nv;
}

static const Kgb__ResultRow *find_row(Kgb__ResultRow *const *rows, size_t n, const char *method,
                                      const char *op, const char *platform)
{
	for (size_t i = 0; i < n; i++)
		if (same(rows[i]->method, method) && same(rows[i]->op, op) && same(rows[i]->platform, platform))
			return rows[i];
	return NULL;
}

static const char *verdict_of(const Kgb__ResultRow *r)
{
	if (r->verdict == KGB__VERDICT__VERDICT_UNSPECIFIED)
		return "pending";
	return kgb_verdict_name((int)r->verdict);
}

static const char STYLE[] =
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:15px}"
    "table{border-collapse:collapse;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}td.num{text-align:right}"
    "td.msg{font-family:monospace;white-space:pre-wrap;max-width:60em}"
    ".legend span{display:inline-block;padding:2px 10px;margin-right:4px}"
    "svg text{font-family:sans-serif}";

/* A heatmap cell whose every failing case is unsupported (no torch, no NVRTC, ...). */
#define UNSUPPORTED_COLOUR "#b8c4dc"

static void write_summary(FILE *f, const kgb_cli_summary_t *s, size_t ns)
{
	char b1[32], b2[32], b3[64], b4[32];
	fputs("<h2>Summary</h2>\n<table id=\"summary\"><tr><th>method</th><th>platform</th>"
	      "<th>solved</th><th>fast_1</th><th>ties</th><th>geomean speedup [2-sigma interval]</th>"
	      "<th>tokens</th></tr>\n", f);
	for (size_t i = 0; i < ns; i++) {
		fputs("<tr><td>", f);
		put_esc(f, s[i].method, 0);
		fputs(s[i].is_baseline ? " (baseline)" : "", f);
		fputs("</td><td>", f);
		put_esc(f, s[i].platform, 0);
		fprintf(f, "</td><td class=\"num\">%u/%u (%s)</td><td class=\"num\">%s</td><td class=\"num\">%u</td>"
		           "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
		        s[i].solved, s[i].ops, kgb_cli_fmt_pct(s[i].solved, s[i].ops, b1, sizeof b1),
		        kgb_cli_fmt_pct(s[i].fast1, s[i].ops, b2, sizeof b2), s[i].ties,
		        kgb_cli_fmt_speedup_ci(s[i].geomean, kgb_cli_sigma(s[i].geomean_rse, s[i].floor), s[i].tie, b3,
		                               sizeof b3),
		        kgb_cli_fmt_tokens(s[i].tokens, b4, sizeof b4));
	}
	fputs("</table>\n", f);
	for (size_t i = 0; i < ns; i++) {
		if (!s[i].unsupported)
			continue;
		fprintf(f, "<p class=\"unsupported\">unsupported: %u operator(s) of ", s[i].unsupported);
		put_esc(f, s[i].method, 0);
		fputs(" on ", f);
		put_esc(f, s[i].platform, 0);
		fputs(" did not run: the worker's environment cannot run the candidate's kind (an infrastructure "
		      "failure, not the kernel's: left out of accuracy)</p>\n", f);
	}
}

/* One SVG heatmap per method: operators x platforms, coloured by pass share. */
static void write_heatmaps(FILE *f, Kgb__ResultRow *const *rows, size_t n)
{
	const char **methods, **ops, **plats;
	size_t nm = distinct(rows, n, 0, &methods);
	size_t no = distinct(rows, n, 1, &ops);
	size_t np = distinct(rows, n, 2, &plats);
	const int cw = 150, ch = 34;
	/* room for the longest operator name on the left and the longest platform name
	 * rotated by 30 degrees above (about 6.5 pixels a character at 11-12 px): labels
	 * are never cut */
	size_t lop = 0, lpl = 0;
	for (size_t o = 0; o < no; o++)
		lop = KGB_MAX(lop, kgb_cli_text_width(ops[o]));
	for (size_t p = 0; p < np; p++)
		lpl = KGB_MAX(lpl, kgb_cli_text_width(plats[p]));
	const int left = KGB_MAX(190, 24 + (int)(7.2 * (double)lop));
	const int top = KGB_MAX(120, 24 + (int)(3.4 * (double)lpl));
	const int spill = (int)(5.8 * (double)lpl);
	char col[8], b[80];

	fputs("<h2>Operators x platforms</h2>\n<p class=\"legend\">Share of cases passed: ", f);
	for (int i = 0; i <= 4; i++) {
		kgb_cli_heat_colour(i / 4.0, col);
		fprintf(f, "<span style=\"background:%s\">%d%%</span>", col, i * 25);
	}
	fputs("<span style=\"background:#e0e0e0\">no result</span><span style=\"background:" UNSUPPORTED_COLOUR
	      "\">unsupported: the worker's environment cannot run the candidate's kind (not counted)</span></p>\n",
	      f);
	for (size_t m = 0; m < nm; m++) {
		int w = KGB_MAX(left + (int)np * cw + 10, left + (int)(np - 1) * cw + 8 + spill + 10);
		int h = top + (int)no * ch + 10;
		fputs("<h3>", f);
		put_esc(f, methods[m], 0);
		fprintf(f, "</h3>\n<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		           "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		        w, h, w, h);
		for (size_t p = 0; p < np; p++) {
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" transform=\"rotate(-30 %d %d)\">",
			        left + (int)p * cw + 8, top - 8, left + (int)p * cw + 8, top - 8);
			put_esc(f, plats[p], 0);
			fputs("</text>\n", f);
		}
		for (size_t o = 0; o < no; o++) {
			int y = top + (int)o * ch;
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">", left - 8, y + ch / 2 + 4);
			put_esc(f, ops[o], 0);
			fputs("</text>\n", f);
			for (size_t p = 0; p < np; p++) {
				const Kgb__ResultRow *r = find_row(rows, n, methods[m], ops[o], plats[p]);
				int x = left + (int)p * cw;
				if (r && r->verdict == KGB__VERDICT__VERDICT_UNSUPPORTED)
					strcpy(col, UNSUPPORTED_COLOUR); /* the environment's failure, not the kernel's */
				else if (r && r->cases_done > 0)
					kgb_cli_heat_colour((double)r->cases_passed / r->cases_done, col);
				else
					strcpy(col, "#e0e0e0");
				fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#fff\" "
				           "stroke-width=\"2\"><title>",
				        x, y, cw, ch, col);
				put_esc(f, ops[o], 0);
				fputs(" on ", f);
				put_esc(f, plats[p], 0);
				if (r)
					fprintf(f, ": %s, %u/%u cases passed", verdict_of(r), r->cases_passed, r->cases_total);
				fputs("</title></rect>\n", f);
				if (!r)
					continue;
				/* the cases passed, then the verdict on a second line: for an operator whose
				 * every case passed, its speedup with the interval (and "tie") instead */
				bool sp = r->verdict == KGB__VERDICT__VERDICT_PASS && r->speedup > 0 && isfinite(r->speedup);
				fprintf(f, "<text class=\"cell\" x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%u/%u",
				        x + cw / 2, y + ch / 2 - 3, r->cases_passed, r->cases_total);
				fprintf(f, "<tspan class=\"verdict\" x=\"%d\" dy=\"13\" font-size=\"10\">%s</tspan>", x + cw / 2,
				        sp ? kgb_cli_fmt_speedup_ci(r->speedup, kgb_cli_sigma(r->speedup_rse, r->noise_floor), r->tie, b,
				                                    sizeof b)
				           : verdict_of(r));
				fputs("</text>\n", f);
			}
		}
		fputs("</svg>\n", f);
	}
	free(methods);
	free(ops);
	free(plats);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Value at quantile q of sorted v (linear interpolation). */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/* One row per method: a dot per solved operator's speedup on a log2 axis, a box from
 * the first to the third quartile, the median and the geometric mean. */
static void write_distributions(FILE *f, Kgb__ResultRow *const *rows, size_t n)
{
	const char **methods;
	size_t nm = distinct(rows, n, 0, &methods);
	double *v = kgb_xcalloc(n + 1, sizeof *v);
	double lo = 0.5, hi = 2.0;
	const int left = 190, width = 600, rowh = 44, top = 20;

	for (size_t i = 0; i < n; i++) {
		double s = rows[i]->speedup;
		if (rows[i]->verdict != KGB__VERDICT__VERDICT_PASS || !(s > 0) || !isfinite(s) || rows[i]->is_baseline)
			continue;
		lo = fmin(lo, s);
		hi = fmax(hi, s);
	}
	double l2lo = floor(log2(lo)), l2hi = ceil(log2(hi));
	if (l2hi - l2lo > 16) {          /* keep the axis readable: clamp to 2^-8 .. 2^8 */
		l2lo = fmax(l2lo, -8);
		l2hi = fmin(l2hi, 8);
	}
#define XPOS(s) (left + (int)lround((fmin(fmax(log2(s), l2lo), l2hi) - l2lo) / (l2hi - l2lo) * width))

	fputs("<h2>Speedup distribution per method</h2>\n<p>Each dot is one solved operator's "
	      "geometric-mean speedup against the baseline (operators with a failing case have no "
	      "speedup); the box spans the quartiles, the dark bar is the median, the diamond the "
	      "geometric mean; the dashed line is 1x.</p>\n",
	      f);
	int h = top + (int)nm * rowh + 40, w = left + width + 40;
	fprintf(f, "<svg class=\"speedups\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	           "viewBox=\"0 0 %d %d\">\n",
	        w, h, w, h);
	for (double e = l2lo; e <= l2hi; e += 1) {
		int x = XPOS(exp2(e));
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
		           "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%gx</text>\n",
		        x, top, x, top + (int)nm * rowh, x, top + (int)nm * rowh + 16, exp2(e));
	}
	int x1 = XPOS(1.0);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n", x1,
	        top - 6, x1, top + (int)nm * rowh);
	for (size_t m = 0; m < nm; m++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			const Kgb__ResultRow *r = rows[i];
			if (same(r->method, methods[m]) && r->verdict == KGB__VERDICT__VERDICT_PASS && r->speedup > 0 &&
			    isfinite(r->speedup))
				v[k++] = r->speedup;
		}
		int yc = top + (int)m * rowh + rowh / 2;
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">", left - 10, yc + 4);
		put_esc(f, methods[m], 40);
		fprintf(f, " (%zu)</text>\n", k);
		if (k == 0)
			continue;
		qsort(v, k, sizeof *v, cmp_double);
		double q1 = quantile(v, k, 0.25), med = quantile(v, k, 0.5), q3 = quantile(v, k, 0.75), ls = 0;
		for (size_t i = 0; i < k; i++)
			ls += log(v[i]);
		double gm = exp(ls / (double)k);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#c6dbef\" stroke=\"#4a78a8\"/>\n",
		        XPOS(q1), yc - 12, XPOS(q3) - XPOS(q1) + 1, 24);
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#08306b\" stroke-width=\"3\"/>\n",
		        XPOS(med), yc - 12, XPOS(med), yc + 12);
		for (size_t i = 0; i < k; i++)
			fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"#2171b5\" fill-opacity=\"0.7\">"
			           "<title>%.3gx</title></circle>\n",
			        XPOS(v[i]), yc + (int)(i % 5) * 3 - 6, v[i]);
		int gx = XPOS(gm);
		fprintf(f, "<path d=\"M%d %d l6 6 l-6 6 l-6 -6 z\" fill=\"#e6550d\"><title>geometric mean %.3gx</title>"
		           "</path>\n",
		        gx, yc - 6, gm);
	}
	fputs("</svg>\n", f);
#undef XPOS
	free(v);
	free(methods);
}

/* Every solved operator's speedup with its interval, the noise floor in it, and the
 * call: faster, slower or tie. */
static void write_speedups(FILE *f, const Kgb__ResultsReply *rr)
{
	char b[80];
	fputs("<h2>Speedups and ties</h2>\n<p>Each solved operator's geometric-mean speedup against the baseline "
	      "with its 2-sigma interval, which holds the spread within jobs and the platform's noise floor (the "
	      "spread between independent runs, measured by A/A campaigns). A speedup is called faster or slower "
	      "only when its interval excludes 1; otherwise it is a tie.</p>\n<ul id=\"floors\">\n",
	      f);
	for (size_t i = 0; i < rr->n_noise_floors; i++) {
		const Kgb__NoiseFloor *x = rr->noise_floors[i];
		fputs("<li>noise floor on ", f);
		put_esc(f, x->platform, 0);
		fprintf(f, ": %.1f%% per operator, %.1f%% per case (99%% upper bounds, from A/A campaign(s) ", 100 * x->op_floor,
		        100 * x->case_floor);
		put_esc(f, x->campaigns, 0);
		fprintf(f, ": %u operators, %u cases)%s</li>\n", x->ops, x->cases,
		        x->own ? "; the campaign's own measurement" : "");
	}
	if (rr->n_noise_floors == 0)
		fputs("<li>no noise floor measured on these platforms: the intervals hold the spread within jobs only "
		      "(scripts/aa-check.sh measures it)</li>\n",
		      f);
	fputs("</ul>\n", f);
	const char *plats[64];
	unsigned ties[64], total[64];
	size_t np = kgb_cli_aa_share(rr, plats, ties, total, 64);
	for (size_t k = 0; k < np; k++) {
		fputs("<p class=\"aa\">A/A check on ", f);
		put_esc(f, plats[k], 0);
		fputs(": ", f);
		put_esc(f, rr->aa_method, 0);
		fprintf(f, " against its baseline: %u of %u operators tie (%.1f%%)</p>\n", ties[k], total[k],
		        100.0 * ties[k] / total[k]);
	}
	fputs("<table id=\"speedups\"><tr><th>method</th><th>operator</th><th>platform</th>"
	      "<th>speedup [2-sigma interval]</th><th>noise floor</th><th>call</th></tr>\n",
	      f);
	for (size_t i = 0; i < rr->n_rows; i++) {
		const Kgb__ResultRow *r = rr->rows[i];
		if (r->verdict != KGB__VERDICT__VERDICT_PASS || !(r->speedup > 0) || !isfinite(r->speedup) || r->is_baseline)
			continue;
		fputs("<tr><td>", f);
		put_esc(f, r->method, 0);
		fputs("</td><td>", f);
		put_esc(f, r->op, 0);
		fputs("</td><td>", f);
		put_esc(f, r->platform, 0);
		fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%.1f%%</td><td>%s</td></tr>\n",
		        kgb_cli_fmt_speedup_ci(r->speedup, kgb_cli_sigma(r->speedup_rse, r->noise_floor), false, b, sizeof b),
		        100 * r->noise_floor, r->tie ? "tie" : r->speedup > 1 ? "faster" : "slower");
	}
	fputs("</table>\n", f);
}

/* The failing cases of every operator that has any (one kgb show request each),
 * grouped by identical verdict and message: one row per group with its count, where
 * it came from, and the parameters of its cases (up to MAX_GROUP_CASES of them). */
static int write_failing(FILE *f, kgb_cli_global_t *g, uint64_t id, const char *baseline,
                         Kgb__ResultRow *const *rows, size_t n)
{
	kgb_cli_fail_groups_t fg;
	int rc = kgb_cli_fail_groups(g, "report", id, baseline, NULL, NULL, rows, n, &fg);
	if (rc != 0) {
		kgb_cli_fail_groups_free(&fg);
		return rc;
	}
	fprintf(f, "<h2>Failing cases</h2>\n<p>%zu failing cases, %zu distinct messages, most frequent first.</p>\n",
	        fg.cases, fg.n);
	fputs("<table id=\"failing\"><tr><th>cases</th><th>verdict</th><th>methods</th><th>operators</th>"
	      "<th>platforms</th><th>parameters</th><th>message</th></tr>\n",
	      f);
	for (size_t i = 0; i < fg.n; i++) {
		const kgb_cli_fail_group_t *x = &fg.g[i];
		json_t *lists[3] = { x->methods, x->ops, x->platforms }, *v;
		size_t k;
		fprintf(f, "<tr><td class=\"num count\">%zu</td><td class=\"verdict\">", x->count);
		put_esc(f, x->verdict, 0);
		for (int l = 0; l < 3; l++) {
			fputs("</td><td>", f);
			json_array_foreach(lists[l], k, v) {
				if (k)
					fputs(", ", f);
				put_esc(f, json_string_value(v), 0);
			}
		}
		fprintf(f, "</td><td><details><summary>%zu case%s</summary>", x->count, x->count == 1 ? "" : "s");
		json_array_foreach(x->cases, k, v) {
			if (k == MAX_GROUP_CASES) {
				fprintf(f, "<div>and %zu more (kgb failures %llu --json lists them)</div>", x->count - k,
				        (unsigned long long)id);
				break;
			}
			fputs("<div class=\"case\">", f);
			put_esc(f, json_string_value(json_object_get(v, "method")), 0);
			fputc(' ', f);
			put_esc(f, json_string_value(json_object_get(v, "op")), 0);
			fputc(' ', f);
			put_esc(f, json_string_value(json_object_get(v, "platform")), 0);
			fprintf(f, " case %lld: ", (long long)json_integer_value(json_object_get(v, "case")));
			put_esc(f, json_string_value(json_object_get(v, "label")), 0);
			fputs("</div>", f);
		}
		fputs("</details></td><td class=\"msg\">", f);
		put_esc(f, x->message, MAX_MESSAGE);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (fg.n == 0)
		fputs("<p>No failing case.</p>\n", f);
	kgb_cli_fail_groups_free(&fg);
	return 0;
}

/* See results.h. */
int kgb_cli_report_html(kgb_cli_global_t *g, uint64_t id, const Kgb__ResultsReply *rr,
                        const kgb_cli_summary_t *sum, size_t ns, const char *path)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		fprintf(stderr, "kgb report: --html %s: path too long\n", path);
		return KGB_CLI_EXIT_USAGE;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "kgb report: --html %s: cannot create: %s\n", path, strerror(errno));
		return KGB_CLI_EXIT_USAGE;
	}
	const char *name = rr->campaign_name ? rr->campaign_name : "";
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
	fprintf(f, "kgb campaign %llu ", (unsigned long long)id);
	put_esc(f, name, 0);
	fprintf(f, "</title>\n<style>%s</style>\n</head><body>\n<h1>Campaign %llu ", STYLE, (unsigned long long)id);
	put_esc(f, name, 0);
	fputs("</h1>\n<p>Baseline: ", f);
	put_esc(f, rr->baseline && *rr->baseline ? rr->baseline : "none", 0);
	fprintf(f, "; %zu result rows (method x operator x platform).</p>\n<p>", rr->n_rows);
	{
		char sb[128];
		put_esc(f, kgb_cli_seed_text(rr->seed, rr->seed_state, sb, sizeof sb), 0);
	}
	fputs(".</p>\n", f);
	write_summary(f, sum, ns);
	write_heatmaps(f, rr->rows, rr->n_rows);
	write_speedups(f, rr);
	write_distributions(f, rr->rows, rr->n_rows);
	int rc = write_failing(f, g, id, rr->baseline ? rr->baseline : "", rr->rows, rr->n_rows);
	fputs("</body></html>\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		fprintf(stderr, "kgb report: --html %s: write failed: %s\n", path, strerror(errno));
		unlink(tmp);
		return KGB_CLI_EXIT_USAGE;
	}
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	if (rename(tmp, path) != 0) {
		fprintf(stderr, "kgb report: --html %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return KGB_CLI_EXIT_USAGE;
	}
	return KGB_CLI_OK;
}
