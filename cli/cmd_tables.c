/* kgb tables ID...: the benchmark's tables over campaigns (docs/tables.md). The
 * coordinator sends one JSON document, every figure computed by the store's table
 * functions (migration 0009a); this file only lays it out: text, JSON, CSV per table,
 * or a self-contained HTML page. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "results.h"
#include "util.h"

/* The tables --csv can write, as named in the document. */
static const char *const csv_tables[] = {"summary", "pass_at_k", "matched", "cross_chip", "lost", "operator_rows"};

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* "1.23x [1.10-1.37]" from the row's speedup, speedup_low and speedup_high; "-". */
static const char *speedup_text(json_t *row, char *buf, size_t n)
{
	double s = num(row, "speedup"), lo = num(row, "speedup_low"), hi = num(row, "speedup_high");
	if (!(s > 0)) {
		kgb_strlcpy(buf, "-", n);
		return buf;
	}
	char a[32], b[32], c[32];
	kgb_cli_fmt_speedup(s, a, sizeof a);
	if (!(lo > 0) || !(hi > 0) || lo == hi) {
		kgb_strlcpy(buf, a, n);
		return buf;
	}
	kgb_cli_fmt_speedup(lo, b, sizeof b);
	kgb_cli_fmt_speedup(hi, c, sizeof c);
	b[strlen(b) - 1] = c[strlen(c) - 1] = '\0';
	snprintf(buf, n, "%s [%s-%s]", a, b, c);
	return buf;
}

static const char *pct(double x, char *buf, size_t n)
{
	if (!isfinite(x))
		kgb_strlcpy(buf, "-", n);
	else
		snprintf(buf, n, "%.1f%%", 100 * x);
	return buf;
}

/* The provenance in one line per item, each starting with prefix. */
static void print_provenance(FILE *f, const char *prefix, json_t *doc)
{
	fprintf(f, "%skgb %s, catalog %s; operator set %s (%zu operators)\n", prefix, str(doc, "kgb_version"),
	        str(doc, "catalog_version"), str(doc, "set"), json_array_size(json_object_get(doc, "operators")));
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(doc, "campaigns"), i, c) {
		const char *seed = str(c, "seed");
		fprintf(f, "%scampaign %lld %s (%s), baseline %s, seed %s%s\n", prefix,
		        (long long)json_integer_value(json_object_get(c, "id")), str(c, "name"), str(c, "state"),
		        *str(c, "baseline") ? str(c, "baseline") : "native timings",
		        *seed ? seed : "secret until the campaign ends",
		        json_is_true(json_object_get(c, "partial")) ? "; partial: a case selection, not the benchmark's "
		                                                      "accuracy"
		                                                    : "");
	}
	json_array_foreach(json_object_get(doc, "platforms"), i, c) {
		fprintf(f, "%splatform %s: %s", prefix, str(c, "name"), str(c, "device_name"));
		size_t k;
		json_t *d;
		json_array_foreach(json_object_get(c, "devices"), k, d)
			fprintf(f, "%s%s driver %s", k ? "; " : " (", str(d, "arch"), str(d, "driver_version"));
		fprintf(f, "%s\n", json_array_size(json_object_get(c, "devices")) ? ")" : "");
	}
}

/* The summary's 'all' rows (every figure), then its per-source rows (the main ones). */
static void print_summary(json_t *doc)
{
	static const char *const hdr[] = {"METHOD", "PLATFORM", "PASSED", "ACC", "RAW", "SPEEDUP", "F0.8", "F1.0",
	                                  "F1.5",   "TOK/OK",   "-CACHE", "GEN"};
	static const char *const shdr[] = {"METHOD", "PLATFORM", "SOURCE", "PASSED", "ACC", "RAW", "SPEEDUP", "F1.0",
	                                   "TOK/OK"};
	kgb_cli_table_t *t = kgb_cli_table_new(12, hdr, "ssrrDADrDDDD");
	kgb_cli_table_t *st = kgb_cli_table_new(9, shdr, "sslrrDArD");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(doc, "summary"), i, r) {
		char b[8][64];
		bool all = strcmp(str(r, "source"), "all") == 0;
		kgb_cli_table_t *x = all ? t : st;
		kgb_cli_table_cell(x, "%s", str(r, "method"));
		kgb_cli_table_cell(x, "%s", str(r, "platform"));
		if (!all)
			kgb_cli_table_cell(x, "%s", str(r, "source"));
		kgb_cli_table_cell(x, "%.0f/%.0f", num(r, "passed"), num(r, "operators"));
		kgb_cli_table_cell(x, "%s", pct(num(r, "accuracy"), b[0], 64));
		kgb_cli_table_cell(x, "%s", pct(num(r, "accuracy_raw"), b[1], 64));
		kgb_cli_table_cell(x, "%s", speedup_text(r, b[2], 64));
		if (all)
			kgb_cli_table_cell(x, "%s", pct(num(r, "fast_0_8"), b[3], 64));
		kgb_cli_table_cell(x, "%s", pct(num(r, "fast_1_0"), b[4], 64));
		if (all)
			kgb_cli_table_cell(x, "%s", pct(num(r, "fast_1_5"), b[5], 64));
		kgb_cli_table_cell(x, "%s", kgb_cli_fmt_tokens(num(r, "tokens_per_success"), b[6], 64));
		if (!all)
			continue;
		kgb_cli_table_cell(x, "%s", kgb_cli_fmt_tokens(num(r, "tokens_per_success_no_cache_read"), b[7], 64));
		kgb_cli_table_cell(x, "%s", kgb_cli_fmt_duration(num(r, "gen_seconds"), b[0], 64));
	}
	kgb_cli_table_print(t, stdout);
	printf("\nper operator source:\n");
	kgb_cli_table_print(st, stdout);
	kgb_cli_table_destroy(&t);
	kgb_cli_table_destroy(&st);
}

static void print_pass_at_k(json_t *doc)
{
	static const char *const hdr[] = {"METHOD", "PLATFORM", "K", "PASS@K (ROUNDS)", "PASS@K (UNBIASED)"};
	kgb_cli_table_t *t = kgb_cli_table_new(5, hdr, "ssrrr");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(doc, "pass_at_k"), i, r) {
		char a[32], b[32];
		kgb_cli_table_cell(t, "%s", str(r, "method"));
		kgb_cli_table_cell(t, "%s", str(r, "platform"));
		kgb_cli_table_cell(t, "%.0f", num(r, "k"));
		kgb_cli_table_cell(t, "%s", pct(num(r, "pass_at_k_rounds"), a, sizeof a));
		kgb_cli_table_cell(t, "%s", pct(num(r, "pass_at_k_unbiased"), b, sizeof b));
	}
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
}

static void print_matched(json_t *doc)
{
	static const char *const hdr[] = {"PLATFORM", "METHOD", "OPERATORS", "SPEEDUP"};
	kgb_cli_table_t *t = kgb_cli_table_new(4, hdr, "ssrA");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(doc, "matched"), i, r) {
		char a[64];
		kgb_cli_table_cell(t, "%s", str(r, "platform"));
		kgb_cli_table_cell(t, "%s", str(r, "method"));
		kgb_cli_table_cell(t, "%.0f", num(r, "operators"));
		kgb_cli_table_cell(t, "%s", speedup_text(r, a, sizeof a));
	}
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
}

static void print_cross_chip(json_t *doc)
{
	static const char *const hdr[] = {"METHOD", "PLATFORM", "ACCURACY", "DROP", "SPEEDUP", "LOST"};
	kgb_cli_table_t *t = kgb_cli_table_new(6, hdr, "sarrAr");
	size_t i;
	json_t *r;
	const char *ref = str(doc, "reference");
	json_array_foreach(json_object_get(doc, "cross_chip"), i, r) {
		char a[32], b[64];
		bool is_ref = strcmp(str(r, "platform"), ref) == 0;
		kgb_cli_table_cell(t, "%s", str(r, "method"));
		kgb_cli_table_cell(t, "%s%s", str(r, "platform"), is_ref ? " (reference)" : "");
		kgb_cli_table_cell(t, "%s", pct(num(r, "accuracy"), a, sizeof a));
		double drop = num(r, "drop_points");
		if (is_ref || !isfinite(drop))
			kgb_cli_table_cell(t, "-");
		else if (fabs(drop) < 0.05)
			kgb_cli_table_cell(t, "0.0 pp");
		else
			kgb_cli_table_cell(t, "%+.1f pp", -drop);
		kgb_cli_table_cell(t, "%s", speedup_text(r, b, sizeof b));
		kgb_cli_table_cell(t, "%.0f", num(r, "lost"));
	}
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
	if (!json_array_size(json_object_get(doc, "lost")))
		return;
	static const char *const lh[] = {"METHOD", "OPERATOR", "PLATFORM", "FIRST FAILING CASE", "VERDICT", "PARAMETERS"};
	t = kgb_cli_table_new(6, lh, "lllrll");
	json_array_foreach(json_object_get(doc, "lost"), i, r) {
		kgb_cli_table_cell(t, "%s", str(r, "method"));
		kgb_cli_table_cell(t, "%s", str(r, "op"));
		kgb_cli_table_cell(t, "%s", str(r, "platform"));
		if (json_is_integer(json_object_get(r, "case_index")))
			kgb_cli_table_cell(t, "%lld", (long long)json_integer_value(json_object_get(r, "case_index")));
		else
			kgb_cli_table_cell(t, "-");
		kgb_cli_table_cell(t, "%s", *str(r, "verdict") ? str(r, "verdict") : "not run there");
		kgb_cli_table_cell(t, "%s", str(r, "label"));
	}
	printf("\noperators passing on %s and failing elsewhere, with the first failing case of the candidate that "
	       "passed:\n",
	       ref);
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
}

/* One table of the document as CSV, its provenance first as '#' lines. Columns are the
 * keys of the table's rows, in the store's order. */
static void print_csv(json_t *doc, const char *name)
{
	print_provenance(stdout, "# ", doc);
	json_t *rows = json_object_get(doc, name);
	json_t *first = json_array_get(rows, 0);
	if (!first)
		return;
	size_t nc = json_object_size(first), i, k;
	const char **cells = kgb_xcalloc(nc, sizeof *cells);
	char(*buf)[48] = kgb_xcalloc(nc, sizeof *buf);
	const char *key;
	json_t *v, *r;
	k = 0;
	json_object_foreach(first, key, v)
		cells[k++] = key;
	kgb_cli_csv_row(stdout, cells, (int)nc);
	json_array_foreach(rows, i, r) {
		k = 0;
		json_object_foreach(first, key, v) {
			json_t *x = json_object_get(r, key);
			if (json_is_string(x))
				cells[k] = json_string_value(x);
			else if (json_is_number(x))
				cells[k] = kgb_cli_fmt_num(json_number_value(x), buf[k], sizeof buf[k]);
			else if (json_is_boolean(x))
				cells[k] = json_is_true(x) ? "true" : "false";
			else
				cells[k] = "";
			k++;
		}
		kgb_cli_csv_row(stdout, cells, (int)nc);
	}
	free(buf);
	free(cells);
}

/* ---- HTML ---- */

static void h(FILE *f, const char *s)
{
	kgb_cli_html_esc(f, s);
}

/* A cell of the methods x platforms matrix: accuracy, speedup with its interval, the
 * drop from the reference. */
static void matrix_cell(FILE *f, json_t *r, bool is_ref)
{
	char a[32], b[64];
	char colour[8];
	double acc = num(r, "accuracy");
	kgb_cli_heat_colour(isfinite(acc) ? acc : 0, colour);
	fprintf(f, "<td style=\"background:%s\" data-accuracy=\"%.6f\">%s<br>", colour, acc, pct(acc, a, sizeof a));
	h(f, speedup_text(r, b, sizeof b));
	if (!is_ref && isfinite(num(r, "drop_points")))
		fprintf(f, "<br>drop %.1f pp", num(r, "drop_points"));
	fputs("</td>", f);
}

static int write_html(json_t *doc, const char *path)
{
	char *tmp = kgb_xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "kgb tables: --html %s: %s\n", path, strerror(errno));
		free(tmp);
		return KGB_CLI_EXIT_USAGE;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kgb tables</title><style>"
	      "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0 1.5em}"
	      "td,th{border:1px solid #999;padding:.25em .5em;text-align:right;font-size:90%}"
	      "th{background:#eee}td.l,th.l{text-align:left}pre{font-size:85%}</style></head><body>\n"
	      "<h1>kgb tables</h1>\n<pre id=\"provenance\">",
	      f);
	char *prov = NULL;
	size_t plen = 0;
	FILE *pf = open_memstream(&prov, &plen);
	print_provenance(pf, "", doc);
	fclose(pf);
	h(f, prov);
	free(prov);
	fputs("</pre>\n", f);

	/* methods x platforms */
	json_t *plats = json_object_get(doc, "platforms");
	const char *ref = str(doc, "reference");
	json_t *cells = json_object_get(doc, *ref ? "cross_chip" : "summary");
	fprintf(f, "<h2>Methods x platforms</h2>\n<p>accuracy, speedup [2-sigma interval]%s%s</p>\n"
	           "<table id=\"matrix\"><tr><th class=\"l\">method</th>",
	        *ref ? ", drop from the reference " : "", ref);
	size_t i, k;
	json_t *p, *r;
	json_array_foreach(plats, i, p) {
		fputs("<th>", f);
		h(f, str(p, "name"));
		fputs(strcmp(str(p, "name"), ref) == 0 ? " (reference)</th>" : "</th>", f);
	}
	fputs("</tr>\n", f);
	const char *last = NULL;
	json_array_foreach(cells, i, r) {
		if (!*ref && strcmp(str(r, "source"), "all") != 0)
			continue;
		if (last && strcmp(last, str(r, "method")) == 0)
			continue;
		last = str(r, "method");
		fputs("<tr><th class=\"l\">", f);
		h(f, last);
		fputs("</th>", f);
		json_array_foreach(plats, k, p) {
			json_t *hit = NULL, *c;
			size_t j;
			json_array_foreach(cells, j, c)
				if (!hit && strcmp(str(c, "method"), last) == 0 && strcmp(str(c, "platform"), str(p, "name")) == 0 &&
				    (*ref || strcmp(str(c, "source"), "all") == 0))
					hit = c;
			if (hit)
				matrix_cell(f, hit, strcmp(str(p, "name"), ref) == 0);
			else
				fputs("<td>-</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);

	/* methods x operators, one heatmap per platform */
	json_t *ops = json_object_get(doc, "operators");
	json_array_foreach(plats, i, p) {
		const char *pn = str(p, "name");
		fputs("<h2>Methods x operators on ", f);
		h(f, pn);
		fputs("</h2>\n<table class=\"heatmap\" data-platform=\"", f);
		h(f, pn);
		fputs("\"><tr><th class=\"l\">method</th>", f);
		json_array_foreach(ops, k, r) {
			fputs("<th>", f);
			h(f, str(r, "op"));
			fputs("</th>", f);
		}
		fputs("</tr>\n", f);
		last = NULL;
		json_t *orow = json_object_get(doc, "operator_rows");
		json_array_foreach(orow, k, r) {
			if (strcmp(str(r, "platform"), pn) != 0)
				continue;
			if (!last || strcmp(last, str(r, "method")) != 0) {
				fputs(last ? "</tr>\n<tr><th class=\"l\">" : "<tr><th class=\"l\">", f);
				last = str(r, "method");
				h(f, last);
				fputs("</th>", f);
			}
			bool att = json_is_true(json_object_get(r, "attempted")), ok = json_is_true(json_object_get(r, "passed"));
			char colour[8], b[64];
			kgb_cli_heat_colour(ok ? 1 : 0, colour);
			fprintf(f, "<td style=\"background:%s\" data-op=\"%s\" data-passed=\"%s\">", att ? colour : "#dddddd",
			        str(r, "op"), ok ? "true" : "false");
			/* the outcome in words: the speedup where it passed with one, else "pass",
			 * "fail", or "no candidate" (the method has none for the operator) */
			const char *sp = ok ? speedup_text(r, b, sizeof b) : "";
			h(f, ok ? (strcmp(sp, "-") == 0 ? "pass" : sp) : att ? "fail" : "no candidate");
			fputs("</td>", f);
		}
		fputs(last ? "</tr>\n</table>\n" : "</table>\n", f);
	}
	fputs("</body></html>\n", f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "kgb tables: --html %s: %s\n", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return KGB_CLI_EXIT_USAGE;
	}
	free(tmp);
	return KGB_CLI_OK;
}

int kgb_cli_cmd_tables(int argc, char **argv, kgb_cli_global_t *g)
{
	bool json = false;
	const char *set = NULL, *reference = NULL, *csv = NULL, *html = NULL;
	const kgb_cli_opt_t opts[] = {
		{"set", 0, KGB_CLI_OPT_STRING, &set, "SET",
		 "the operators counted: campaigns (default: the campaigns' own), ms (210), mc (110 ATen), aten, vllm, "
		 "cublas, nocublas, demo, all"},
		{"reference", 0, KGB_CLI_OPT_STRING, &reference, "PLATFORM",
		 "the cross-chip table against PLATFORM: each platform's drop and the operators lost"},
		{"json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print every table and the provenance as one JSON object"},
		{"csv", 0, KGB_CLI_OPT_STRING, &csv, "TABLE",
		 "print one table as CSV (summary, pass_at_k, matched, cross_chip, lost, operator_rows), the "
		 "provenance first as '#' lines"},
		{"html", 0, KGB_CLI_OPT_STRING, &html, "FILE",
		 "write the methods x platforms matrix and the methods x operators heatmaps to FILE"},
	};
	const kgb_cli_spec_t spec = {
		.name = "tables",
		.usage = "ID... [--set SET] [--reference PLATFORM] [--json | --csv TABLE | --html FILE]",
		.summary = "The benchmark's tables over one or more campaigns (docs/tables.md): per method,\n"
		           "platform and operator source, accuracy (clean and raw), speedup with its\n"
		           "interval, fast_p, tokens and tokens per success, generation time; Pass@K over\n"
		           "rounds and the unbiased pass@k over samples; the matched-subset speedup; with\n"
		           "--reference, the cross-chip table and the operators lost per platform.",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 64,
	};
	char *pos[64];
	int npos = 0;
	uint64_t ids[64];
	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, ids, (int)KGB_ARRAY_LEN(ids));
	if (rc >= 0)
		return rc;
	if ((json != 0) + (csv != NULL) + (html != NULL) > 1) {
		fprintf(stderr, "kgb tables: --json, --csv and --html cannot be combined\n");
		return KGB_CLI_EXIT_USAGE;
	}
	if (csv) {
		size_t k = 0;
		while (k < KGB_ARRAY_LEN(csv_tables) && strcmp(csv, csv_tables[k]) != 0)
			k++;
		if (k == KGB_ARRAY_LEN(csv_tables)) {
			fprintf(stderr, "kgb tables: --csv %s: no such table (summary, pass_at_k, matched, cross_chip, lost, "
			                "operator_rows)\n",
			        csv);
			return KGB_CLI_EXIT_USAGE;
		}
		if ((strcmp(csv, "cross_chip") == 0 || strcmp(csv, "lost") == 0) && !reference) {
			fprintf(stderr, "kgb tables: --csv %s needs --reference PLATFORM\n", csv);
			return KGB_CLI_EXIT_USAGE;
		}
	}

	Kgb__TablesRequest req = KGB__TABLES_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	req.n_campaign_ids = (size_t)npos;
	req.campaign_ids = ids;
	req.set = (char *)(set ? set : "");
	req.reference = (char *)(reference ? reference : "");
	env.body_case = KGB__ENVELOPE__BODY_TABLES;
	env.tables = &req;
	Kgb__Envelope *reply = NULL;
	rc = kgb_cli_request(g, "tables", &env, KGB__ENVELOPE__BODY_TABLES_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__TablesReply *tr = reply->tables_reply;
	json_t *doc = NULL;
	json_error_t je;
	if (!tr || !tr->ok) {
		fprintf(stderr, "kgb tables: %s\n", tr && tr->error && *tr->error ? tr->error : "refused (no reason given)");
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	doc = json_loads(tr->json ? tr->json : "", 0, &je);
	if (!doc) {
		fprintf(stderr, "kgb tables: the coordinator's tables do not parse: %s\n", je.text);
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	if (json) {
		kgb_cli_json_print(stdout, json_incref(doc));
	} else if (csv) {
		print_csv(doc, csv);
	} else if (html) {
		rc = write_html(doc, html);
		if (rc == 0)
			fprintf(stderr, "kgb tables: written to %s\n", html);
	} else {
		print_provenance(stdout, "", doc);
		printf("\nACC: operators with a candidate passing every case (held-out too) and no cheat verdict, over N;\n"
		       "RAW: cheat verdicts counted as passes, held-out cases ignored; SPEEDUP: geometric mean over\n"
		       "passed operators [2-sigma interval]; Fp: passed and speedup > p, over N; TOK/OK: tokens per\n"
		       "operator passed, -CACHE: without cache reads; GEN: generation time\n\n");
		print_summary(doc);
		printf("\nPass@K (rounds): share of operators first passing in rounds 0..K-1 (KernelGenBench);\n"
		       "pass@k (unbiased): 1 - C(n-c,k)/C(n,k) over round 0's n samples, c of them passing\n");
		print_pass_at_k(doc);
		printf("\nmatched subset: operators every compared method passed\n");
		print_matched(doc);
		if (reference) {
			printf("\ncross-chip, reference %s:\n", reference);
			print_cross_chip(doc);
		}
	}
out:
	json_decref(doc);
	kgb_wire_free(reply);
	return rc;
}
