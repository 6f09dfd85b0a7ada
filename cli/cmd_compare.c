/* kgb compare: per operator, how verdicts and speedups changed between two campaigns
 * (or two methods of one campaign). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "results.h"
#include "util.h"
#include "validate.h"

static const char *verdict_text(const Kgb__ResultRow *r)
{
	if (!r)
		return "-";
	if (r->verdict == KGB__VERDICT__VERDICT_UNSPECIFIED)
		return r->cancelled ? "cancelled" : "pending";
	return kgb_verdict_name((int)r->verdict);
}

static bool is_pass(const Kgb__ResultRow *r)
{
	return r && r->verdict == KGB__VERDICT__VERDICT_PASS;
}

/* What changed from a to b: "fixed", "broken", "faster", "slower", "same" (within the
 * noise: the ratio's 2-sigma interval includes 1), "new", "gone", "" (both fail).
 * *sigma: the standard deviation of the log ratio. Between two campaigns the ratio is
 * made of four timings (two baselines, two candidates), each pair's run-to-run spread
 * being the noise floor: both floors count. Between two methods of one campaign the
 * baseline's timing cancels and the two candidates' timings are one pair: one floor. */
static const char *change(const Kgb__ResultRow *a, const Kgb__ResultRow *b, bool one_campaign, double *ratio,
                          double *sigma)
{
	*ratio = 0;
	*sigma = 0;
	if (!a)
		return "new";
	if (!b)
		return "gone";
	if (!is_pass(a) && is_pass(b))
		return "fixed";
	if (is_pass(a) && !is_pass(b))
		return "broken";
	if (!is_pass(a))
		return "";
	if (!(a->speedup > 0) || !(b->speedup > 0))
		return "same";
	*ratio = b->speedup / a->speedup;
	double fa = a->noise_floor, fb = b->noise_floor;
	double floor2 = one_campaign ? fmax(fa, fb) * fmax(fa, fb) : fa * fa + fb * fb;
	double se = sqrt(a->speedup_rse * a->speedup_rse + b->speedup_rse * b->speedup_rse + floor2);
	*sigma = se;
	if (fabs(log(*ratio)) <= 2 * se)
		return "same";
	return *ratio > 1 ? "faster" : "slower";
}

typedef struct key {
	const char *method, *op, *platform;
	const Kgb__ResultRow *a, *b;
} key_t_;

static bool eq(const char *x, const char *y)
{
	return strcmp(x ? x : "", y ? y : "") == 0;
}

/* kgb compare ID1 ID2 [--method M] | kgb compare ID --methods A,B. */
int kgb_cli_cmd_compare(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *method = NULL, *methods = NULL, *platform = NULL, *baseline = NULL;
	bool json = false, changed = false;
	const kgb_cli_opt_t opts[] = {
		{ "method", 'm', KGB_CLI_OPT_STRING, &method, "M", "two campaigns: only method M" },
		{ "methods", 0, KGB_CLI_OPT_STRING, &methods, "A,B", "one campaign: method A against method B" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P", "only platform P" },
		{ "changed", 0, KGB_CLI_OPT_FLAG, &changed, NULL, "only the rows whose verdict or speedup changed" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the rows as JSON" },
		{ "baseline", 0, KGB_CLI_OPT_STRING, &baseline, "METHOD",
		  "speedups of both sides against METHOD, or native (the stored native timings)" },
	};
	const kgb_cli_spec_t spec = {
		.name = "compare",
		.usage = "ID1 ID2 [--method M] | ID --methods A,B  [--platform P] [--changed] [--json] [--baseline METHOD]",
		.summary = "Per operator and platform, the verdict and speedup before and after: from\n"
		           "campaign ID1 to ID2 (each method against itself), or from method A to method\n"
		           "B in one campaign. CHANGE is fixed, broken, faster, slower, or same when the\n"
		           "speedup ratio's 2-sigma interval includes 1: the interval holds the spread\n"
		           "within jobs and the platforms' noise floor (run-to-run; docs/timing.md).",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 2,
	};
	char *pos[2];
	int npos = 0;
	uint64_t ids[2] = { 0, 0 };
	Kgb__Envelope *r1 = NULL, *r2 = NULL;
	char *ma = NULL, *mb = NULL;
	key_t_ *keys = NULL;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, ids, 2);
	if (rc >= 0)
		return rc;
	uint64_t id1 = ids[0], id2 = ids[1];
	if ((npos == 2) == (methods != NULL)) {
		fprintf(stderr, "kgb compare: give two campaigns (ID1 ID2), or one campaign and --methods A,B\n");
		return KGB_CLI_EXIT_USAGE;
	}
	if (methods) {
		const char *comma = strchr(methods, ',');
		if (!comma || comma == methods || !comma[1] || strchr(comma + 1, ',')) {
			fprintf(stderr, "kgb compare: --methods: '%s' is not two method names A,B\n", methods);
			return KGB_CLI_EXIT_USAGE;
		}
		ma = kgb_xasprintf("%.*s", (int)(comma - methods), methods);
		mb = kgb_xstrdup(comma + 1);
	}
	rc = kgb_cli_results_request(g, "compare", id1, baseline, &r1);
	if (rc == 0 && id2)
		rc = kgb_cli_results_request(g, "compare", id2, baseline, &r2);
	if (rc != 0)
		goto out;
	const Kgb__ResultsReply *a = r1->results_reply, *b = r2 ? r2->results_reply : a;
	keys = kgb_xcalloc(a->n_rows + b->n_rows + 1, sizeof *keys);
	size_t nk = 0;
	/* side 0: rows of A (campaign 1, or method A); side 1: rows of B */
	for (int side = 0; side < 2; side++) {
		const Kgb__ResultsReply *rr = side ? b : a;
		for (size_t i = 0; i < rr->n_rows; i++) {
			const Kgb__ResultRow *r = rr->rows[i];
			if (platform && !eq(r->platform, platform))
				continue;
			if (methods && !eq(r->method, side ? mb : ma))
				continue;
			if (!methods && method && !eq(r->method, method))
				continue;
			const char *km = methods ? "" : r->method;
			size_t k;
			for (k = 0; k < nk; k++)
				if (eq(keys[k].method, km) && eq(keys[k].op, r->op) && eq(keys[k].platform, r->platform))
					break;
			if (k == nk) {
				keys[nk].method = km;
				keys[nk].op = r->op;
				keys[nk].platform = r->platform;
				nk++;
			}
			if (side)
				keys[k].b = r;
			else
				keys[k].a = r;
		}
	}
	if (nk == 0) {
		fprintf(stderr, "kgb compare: no results to compare%s%s\n", methods ? " for methods " : "",
		        methods ? methods : "");
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	static const char *const hdr[] = { "METHOD", "OPERATOR", "PLATFORM", "BEFORE", "AFTER", "SPEEDUP BEFORE",
		                               "SPEEDUP AFTER", "RATIO", "CHANGE" };
	int skip = methods ? 1 : 0; /* one campaign, two methods: no METHOD column */
	kgb_cli_table_t *t = kgb_cli_table_new(9 - skip, hdr + skip, methods ? "lsllAArl" : "slsllAArl");
	json_t *arr = json_array();
	unsigned counts[6] = { 0 };
	static const char *const kinds[] = { "fixed", "broken", "faster", "slower", "same", "other" };
	for (size_t k = 0; k < nk; k++) {
		double ratio, sigma;
		const char *ch = change(keys[k].a, keys[k].b, methods != NULL, &ratio, &sigma);
		int kind = 5;
		for (int q = 0; q < 5; q++)
			if (strcmp(ch, kinds[q]) == 0)
				kind = q;
		counts[kind]++;
		if (changed && (kind == 4 || !*ch))
			continue;
		char s1[64], s2[64];
		const Kgb__ResultRow *x = keys[k].a, *y = keys[k].b;
		char s3[64];
		kgb_cli_fmt_speedup_ci(x ? x->speedup : 0, x ? kgb_cli_sigma(x->speedup_rse, x->noise_floor) : 0,
		                       x && x->tie, s1, sizeof s1);
		kgb_cli_fmt_speedup_ci(y ? y->speedup : 0, y ? kgb_cli_sigma(y->speedup_rse, y->noise_floor) : 0,
		                       y && y->tie, s2, sizeof s2);
		kgb_cli_fmt_speedup_ci(ratio, sigma, false, s3, sizeof s3);
		if (json) {
			json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "op", keys[k].op, "platform", keys[k].platform, "before",
			                      verdict_text(x), "after", verdict_text(y), "change", ch);
			if (!methods)
				json_object_set_new(o, "method", json_string(keys[k].method));
			json_object_set_new(o, "speedup_before", x && x->speedup > 0 ? json_real(x->speedup) : json_null());
			json_object_set_new(o, "speedup_after", y && y->speedup > 0 ? json_real(y->speedup) : json_null());
			json_object_set_new(o, "ratio", ratio > 0 ? json_real(ratio) : json_null());
			if (ratio > 0) {
				json_object_set_new(o, "ratio_low", json_real(ratio * exp(-2 * sigma)));
				json_object_set_new(o, "ratio_high", json_real(ratio * exp(2 * sigma)));
				json_object_set_new(o, "noise_floor_before", json_real(x->noise_floor));
				json_object_set_new(o, "noise_floor_after", json_real(y->noise_floor));
			}
			json_array_append_new(arr, o);
			continue;
		}
		if (!methods)
			kgb_cli_table_cell(t, "%s", keys[k].method);
		kgb_cli_table_cell(t, "%s", keys[k].op);
		kgb_cli_table_cell(t, "%s", keys[k].platform);
		kgb_cli_table_cell(t, "%s", verdict_text(x));
		kgb_cli_table_cell(t, "%s", verdict_text(y));
		kgb_cli_table_cell(t, "%s", s1);
		kgb_cli_table_cell(t, "%s", s2);
		kgb_cli_table_cell(t, "%s", s3);
		kgb_cli_table_cell(t, "%s", *ch ? ch : "-");
	}
	if (json) {
		json_t *root = json_object();
		json_object_set_new(root, "before", methods ? json_string(ma) : json_integer((json_int_t)id1));
		json_object_set_new(root, "after", methods ? json_string(mb) : json_integer((json_int_t)id2));
		json_object_set_new(root, "rows", arr);
		kgb_cli_json_print(stdout, root);
	} else {
		json_decref(arr);
		if (methods)
			printf("campaign %llu: method %s (before) against %s (after)\n", (unsigned long long)id1, ma, mb);
		else
			printf("campaign %llu (before) against campaign %llu (after)\n", (unsigned long long)id1,
			       (unsigned long long)id2);
		printf("intervals: 2 sigma, the spread within jobs and the noise floor (%s)\n",
		       methods ? "one floor: the baseline's timing cancels" : "both campaigns' floors: four timings");
		kgb_cli_print_floors(stdout, methods ? "" : "before: ", a->noise_floors, a->n_noise_floors, a->rows,
		                     a->n_rows);
		if (!methods)
			kgb_cli_print_floors(stdout, "after: ", b->noise_floors, b->n_noise_floors, b->rows, b->n_rows);
		if (kgb_cli_table_rows(t) > 0)
			kgb_cli_table_print(t, stdout);
		printf("%u fixed, %u broken, %u faster, %u slower, %u same within the noise\n", counts[0], counts[1],
		       counts[2], counts[3], counts[4]);
	}
	kgb_cli_table_destroy(&t);
out:
	free(keys);
	free(ma);
	free(mb);
	kgb_wire_free(r1);
	kgb_wire_free(r2);
	return rc;
}
