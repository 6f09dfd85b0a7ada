/* kgb failures ID: every failing case of a campaign, over every operator, grouped by
 * identical verdict and message with a count (also `kgb show ID --failing`, and the
 * HTML report's failing-case table). The cases come from the kgb show request, one
 * per operator that has a failing case. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "results.h"
#include "util.h"

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static void add_distinct(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) if (strcmp(json_string_value(v), s) == 0) return;
	json_array_append_new(arr, json_string(s));
}

static int by_count(const void *a, const void *b)
{
	const kgb_cli_fail_group_t *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : (x->order > y->order) - (x->order < y->order);
}

/* The names of field (0 method, 1 op, 2 platform) the rows have, for "did you mean". */
static size_t row_names(Kgb__ResultRow *const *rows, size_t n, int field, const char **out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = field == 0 ? rows[i]->method : field == 1 ? rows[i]->op : rows[i]->platform;
		size_t j = 0;
		while (j < k && !same(out[j], s))
			j++;
		if (j == k && k < max && s && *s)
			out[k++] = s;
	}
	return k;
}

/* See results.h. */
bool kgb_cli_name_missing(const char *cmd, const char *what, const char *name, Kgb__ResultRow *const *rows,
                          size_t n, int field)
{
	if (!name)
		return false;
	const char *names[256];
	size_t k = row_names(rows, n, field, names, KGB_ARRAY_LEN(names));
	for (size_t i = 0; i < k; i++)
		if (strcmp(names[i], name) == 0)
			return false;
	const char *near = kgb_cli_suggest(name, names, k);
	fprintf(stderr, "kgb %s: no %s '%s' in this campaign", cmd, what, name);
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fprintf(stderr, " (it has:");
	for (size_t i = 0; i < k && i < 12; i++)
		fprintf(stderr, " %s", names[i]);
	fprintf(stderr, "%s)\n", k > 12 ? " ..." : "");
	return true;
}

/* See results.h. */
int kgb_cli_fail_groups(kgb_cli_global_t *g, const char *cmd, uint64_t id, const char *baseline,
                        const char *method, const char *platform, Kgb__ResultRow *const *rows, size_t n,
                        kgb_cli_fail_groups_t *out)
{
	const char *ops[4096];
	size_t no = row_names(rows, n, 1, ops, KGB_ARRAY_LEN(ops));
	int rc = 0;

	memset(out, 0, sizeof *out);
	for (size_t o = 0; o < no && rc == 0; o++) {
		bool any = false;
		for (size_t i = 0; i < n && !any; i++)
			any = same(rows[i]->op, ops[o]) && rows[i]->cases_passed < rows[i]->cases_done &&
			      (!method || same(rows[i]->method, method)) && (!platform || same(rows[i]->platform, platform));
		if (!any)
			continue;
		Kgb__Envelope *reply = NULL;
		rc = kgb_cli_show_request(g, cmd, id, ops[o], method, platform, true, baseline, &reply);
		if (rc != 0)
			break;
		const Kgb__ShowReply *sr = reply->show_reply;
		for (size_t i = 0; i < sr->n_rows; i++) {
			const Kgb__CaseRow *c = sr->rows[i];
			if (strcmp(c->verdict, "pass") == 0)
				continue;
			size_t k = 0;
			while (k < out->n && !(same(out->g[k].verdict, c->verdict) && same(out->g[k].message, c->message)))
				k++;
			if (k == out->n) {
				out->g = kgb_xrealloc(out->g, (out->n + 1) * sizeof *out->g);
				kgb_cli_fail_group_t *ng = &out->g[out->n++];
				memset(ng, 0, sizeof *ng);
				ng->verdict = kgb_xstrdup(c->verdict);
				ng->message = kgb_xstrdup(c->message);
				ng->methods = json_array();
				ng->ops = json_array();
				ng->platforms = json_array();
				ng->cases = json_array();
				ng->order = k;
			}
			kgb_cli_fail_group_t *gr = &out->g[k];
			gr->count++;
			out->cases++;
			add_distinct(gr->methods, c->method);
			add_distinct(gr->ops, ops[o]);
			add_distinct(gr->platforms, c->platform);
			json_array_append_new(gr->cases, json_pack("{s:s,s:s,s:s,s:i,s:s}", "method", c->method, "op", ops[o],
			                                           "platform", c->platform, "case", (int)c->case_index,
			                                           "label", c->label));
		}
		kgb_wire_free(reply);
	}
	if (out->n > 1)
		qsort(out->g, out->n, sizeof *out->g, by_count);
	return rc;
}

/* See results.h. */
void kgb_cli_fail_groups_free(kgb_cli_fail_groups_t *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->g[i].verdict);
		free(f->g[i].message);
		json_decref(f->g[i].methods);
		json_decref(f->g[i].ops);
		json_decref(f->g[i].platforms);
		json_decref(f->g[i].cases);
	}
	free(f->g);
	memset(f, 0, sizeof *f);
}

/* "a, b, c" of a JSON array of strings, at most max of them ("and N more"). */
static char *joined(json_t *arr, size_t max)
{
	char *s = kgb_xstrdup("");
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		if (i == max) {
			char *t = kgb_xasprintf("%s, and %zu more", s, json_array_size(arr) - max);
			free(s);
			return t;
		}
		char *t = kgb_xasprintf("%s%s%s", s, i ? ", " : "", json_string_value(v));
		free(s);
		s = t;
	}
	return s;
}

/* See results.h. */
int kgb_cli_failures(kgb_cli_global_t *g, const char *cmd, uint64_t id, const char *method, const char *platform,
                     const char *op, const char *baseline, bool json)
{
	Kgb__Envelope *reply = NULL;
	int rc = kgb_cli_results_request(g, cmd, id, baseline, &reply);
	if (rc != 0)
		return rc;
	const Kgb__ResultsReply *rr = reply->results_reply;
	if (kgb_cli_name_missing(cmd, "platform", platform, rr->rows, rr->n_rows, 2) ||
	    kgb_cli_name_missing(cmd, "method", method, rr->rows, rr->n_rows, 0) ||
	    kgb_cli_name_missing(cmd, "operator", op, rr->rows, rr->n_rows, 1)) {
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_USAGE;
	}
	/* one operator: only its rows */
	Kgb__ResultRow **rows = kgb_xcalloc(rr->n_rows + 1, sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < rr->n_rows; i++)
		if (!op || same(rr->rows[i]->op, op))
			rows[n++] = rr->rows[i];
	kgb_cli_fail_groups_t fg;
	rc = kgb_cli_fail_groups(g, cmd, id, baseline, method, platform, rows, n, &fg);
	free(rows);
	if (rc != 0) {
		kgb_cli_fail_groups_free(&fg);
		kgb_wire_free(reply);
		return rc;
	}
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < fg.n; i++) {
			const kgb_cli_fail_group_t *x = &fg.g[i];
			json_array_append_new(arr, json_pack("{s:I,s:s,s:s,s:O,s:O,s:O,s:O}", "count", (json_int_t)x->count,
			                                     "verdict", x->verdict, "message", x->message, "methods",
			                                     x->methods, "operators", x->ops, "platforms", x->platforms,
			                                     "cases", x->cases));
		}
		kgb_cli_json_print(stdout, json_pack("{s:I,s:I,s:o}", "campaign_id", (json_int_t)id, "failing_cases",
		                                     (json_int_t)fg.cases, "groups", arr));
	} else if (fg.n == 0) {
		printf("campaign %llu: no failing case%s\n", (unsigned long long)id,
		       method || platform || op ? " (of the selection)" : "");
	} else {
		printf("campaign %llu %s: %zu failing cases, %zu distinct messages, most frequent first\n"
		       "(kgb show %llu OPERATOR --failing lists each case with its parameters)\n",
		       (unsigned long long)id, rr->campaign_name ? rr->campaign_name : "", fg.cases, fg.n,
		       (unsigned long long)id);
		for (size_t i = 0; i < fg.n; i++) {
			const kgb_cli_fail_group_t *x = &fg.g[i];
			char *m = joined(x->methods, 6), *o = joined(x->ops, 8), *p = joined(x->platforms, 6);
			json_t *c0 = json_array_get(x->cases, 0);
			printf("\n%zu x %s\n  methods: %s\n  operators: %s\n  platforms: %s\n  first: %s %s %s case %lld %s\n",
			       x->count, x->verdict, m, o, p, json_string_value(json_object_get(c0, "method")),
			       json_string_value(json_object_get(c0, "op")), json_string_value(json_object_get(c0, "platform")),
			       (long long)json_integer_value(json_object_get(c0, "case")),
			       json_string_value(json_object_get(c0, "label")));
			/* the message whole, indented */
			printf("  message:\n");
			const char *s = x->message && *x->message ? x->message : "(none)";
			while (*s) {
				size_t len = strcspn(s, "\n");
				printf("    %.*s\n", (int)len, s);
				s += len + (s[len] == '\n');
			}
			free(m);
			free(o);
			free(p);
		}
	}
	kgb_cli_fail_groups_free(&fg);
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}

/* kgb failures ID [--method M] [--platform P] [--op OP] [--json] [--baseline METHOD]. */
int kgb_cli_cmd_failures(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *method = NULL, *platform = NULL, *op = NULL, *baseline = NULL;
	bool json = false;
	const kgb_cli_opt_t opts[] = {
		{ "method", 'm', KGB_CLI_OPT_STRING, &method, "M", "only this method" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P", "only this platform" },
		{ "op", 0, KGB_CLI_OPT_STRING, &op, "OPERATOR", "only this operator" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "the groups, each with its cases, as one JSON object" },
		{ "baseline", 0, KGB_CLI_OPT_STRING, &baseline, "METHOD", "as kgb show --baseline" },
	};
	const kgb_cli_spec_t spec = {
		.name = "failures",
		.usage = "ID [--method M] [--platform P] [--op OPERATOR] [--json | --csv]",
		.summary = "Every failing case of a campaign, over all its operators, grouped by identical\n"
		           "verdict and message with a count, most frequent first: the methods, operators\n"
		           "and platforms each message came from, the first case's parameters, and the\n"
		           "message whole. Same as kgb show ID --failing without an operator.",
		KGB_CLI_OPTS(opts),
	};
	uint64_t id = 0;
	int rc = kgb_cli_parse_id_cmd(&spec, argc, argv, g, &id);
	if (rc >= 0)
		return rc;
	return kgb_cli_failures(g, "failures", id, method, platform, op, baseline, json);
}
