/* kgb rerun ID: a new campaign from a stored one (its failing candidates and cases,
 * one method, one operator, a case selection). */
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "client.h"
#include "output.h"
#include "util.h"

/* Failing case indices of (method, op) in campaign id, over every platform, into the
 * JSON array idx (ascending, no repeats). Returns 0 or an exit code. */
static int failing_cases(kgb_cli_global_t *g, uint64_t id, const char *method, const char *op, json_t *idx)
{
	Kgb__ShowRequest req = KGB__SHOW_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__Envelope *reply = NULL;
	req.campaign_id = id;
	req.op = (char *)op;
	req.method = (char *)method;
	req.platform = "";
	req.failing_only = true;
	env.body_case = KGB__ENVELOPE__BODY_SHOW;
	env.show = &req;
	int rc = kgb_cli_request(g, "rerun", &env, KGB__ENVELOPE__BODY_SHOW_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__ShowReply *sr = reply->show_reply;
	/* held-out cases (past the public ones) are not selectable: the new campaign draws
	 * its own */
	const kgb_op_t *cop = kgb_catalog_find(op);
	uint32_t max = 0, npublic = cop ? kgb_op_case_count(cop) : UINT32_MAX;
	for (size_t i = 0; i < sr->n_rows; i++)
		if (sr->rows[i]->case_index < npublic)
			max = KGB_MAX(max, sr->rows[i]->case_index + 1);
	bool *seen = kgb_xcalloc((size_t)max + 1, 1);
	for (size_t i = 0; i < sr->n_rows; i++)
		if (sr->rows[i]->case_index < npublic)
			seen[sr->rows[i]->case_index] = true;
	for (uint32_t k = 0; k < max; k++)
		if (seen[k])
			json_array_append_new(idx, json_integer(k));
	free(seen);
	kgb_wire_free(reply);
	return 0;
}

/* "1,4,7-9" -> [1,4,7,8,9]; NULL with err on bad input. */
static json_t *parse_indices(const char *s, char *err, size_t errlen)
{
	json_t *a = json_array();
	const char *p = s;
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi;
		if (end == p)
			goto bad;
		hi = lo;
		if (*end == '-') {
			const char *q = end + 1;
			hi = strtoul(q, &end, 10);
			if (end == q || hi < lo || hi - lo > 1000000)
				goto bad;
		}
		for (unsigned long k = lo; k <= hi; k++)
			json_array_append_new(a, json_integer((json_int_t)k));
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	if (json_array_size(a) > 0)
		return a;
bad:
	kgb_err(err, errlen, "--cases: '%s' is not a list of case indices such as 0,4,7-9", s);
	json_decref(a);
	return NULL;
}

/* "dtype=f16 layout=transposed,strided" -> {"dtype": "f16", "layout": ["transposed", "strided"]}. */
static json_t *parse_where(const char *s, char *err, size_t errlen)
{
	json_t *w = json_object();
	char *copy = kgb_xstrdup(s), *save = NULL;
	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok || !eq[1]) {
			kgb_err(err, errlen, "--where: '%s' is not PARAM=VALUE[,VALUE...]", tok);
			json_decref(w);
			free(copy);
			return NULL;
		}
		*eq = '\0';
		if (strchr(eq + 1, ',')) {
			json_t *vals = json_array();
			char *save2 = NULL;
			for (char *v = strtok_r(eq + 1, ",", &save2); v; v = strtok_r(NULL, ",", &save2))
				json_array_append_new(vals, json_string(v));
			json_object_set_new(w, tok, vals);
		} else {
			json_object_set_new(w, tok, json_string(eq + 1));
		}
	}
	free(copy);
	if (json_object_size(w) == 0) {
		kgb_err(err, errlen, "--where: empty");
		json_decref(w);
		return NULL;
	}
	return w;
}

/* kgb rerun ID [--failing] [--method M] [--op OP] [--cases LIST] [--where PARAMS]. */
int kgb_cli_cmd_rerun(int argc, char **argv, kgb_cli_global_t *g)
{
	bool failing = false, wait_plat = false, dry = false;
	const char *method = NULL, *op = NULL, *cases = NULL, *where = NULL, *name = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "failing", 'f', KGB_CLI_OPT_FLAG, &failing, NULL,
		  "only candidates that failed a case, and only the cases they failed" },
		{ "method", 'm', KGB_CLI_OPT_STRING, &method, "M", "only method M's candidates (and the baseline's)" },
		{ "op", 0, KGB_CLI_OPT_STRING, &op, "OP", "only operator OP's candidates" },
		{ "cases", 0, KGB_CLI_OPT_STRING, &cases, "LIST", "only these case indices (0,4,7-9)" },
		{ "where", 0, KGB_CLI_OPT_STRING, &where, "PARAMS",
		  "only cases with these parameters (\"dtype=f16 layout=transposed,strided\")" },
		{ "name", 0, KGB_CLI_OPT_STRING, &name, "NAME", "the new campaign's name (default NAME-rerun)" },
		{ "wait-for-platforms", 0, KGB_CLI_OPT_FLAG, &wait_plat, NULL, "as for kgb submit" },
		{ "dry-run", 'n', KGB_CLI_OPT_FLAG, &dry, NULL, "print the new manifest instead of submitting it" },
	};
	const kgb_cli_spec_t spec = {
		.name = "rerun",
		.usage = "ID [--failing] [--method M] [--op OP] [--cases LIST] [--where PARAMS] [--dry-run]",
		.summary = "Submit a new campaign made from campaign ID's stored manifest: all of it, or\n"
		           "with --failing only the candidates that failed, on the cases they failed;\n"
		           "--method, --op, --cases and --where narrow it further. A campaign that runs\n"
		           "a selection of cases is partial: it never counts as a benchmark result. The\n"
		           "new campaign records which campaign it re-runs and who submitted it.",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 1,
	};
	char *pos[1];
	int npos = 0;
	char err[512];
	uint64_t id = 0;
	char *mj = NULL, *origin = NULL, *out = NULL;
	json_t *m = NULL, *sel_idx = NULL, *sel_where = NULL;
	Kgb__Envelope *rreply = NULL, *reply = NULL;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, &id, 1);
	if (rc >= 0)
		return rc;
	if ((cases && !(sel_idx = parse_indices(cases, err, sizeof err))) ||
	    (where && !(sel_where = parse_where(where, err, sizeof err)))) {
		fprintf(stderr, "kgb rerun: %s\n", err);
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	if (failing && (cases || where)) {
		fprintf(stderr, "kgb rerun: --failing chooses the cases; it cannot be combined with --cases or --where\n");
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	rc = kgb_cli_fetch_manifest(g, "rerun", id, &mj, &origin);
	if (rc != 0)
		goto out;
	json_error_t je;
	m = json_loads(mj, 0, &je);
	if (!m) {
		fprintf(stderr, "kgb rerun: campaign %llu: the stored manifest is not JSON: %s\n", (unsigned long long)id,
		        je.text);
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	const char *baseline = json_string_value(json_object_get(m, "baseline"));
	const Kgb__ResultsReply *rr = NULL;
	if (failing) {
		Kgb__ResultsRequest req = KGB__RESULTS_REQUEST__INIT;
		Kgb__Envelope env = KGB__ENVELOPE__INIT;
		req.campaign_id = id;
		env.body_case = KGB__ENVELOPE__BODY_RESULTS;
		env.results = &req;
		rc = kgb_cli_request(g, "rerun", &env, KGB__ENVELOPE__BODY_RESULTS_REPLY, &rreply);
		if (rc != 0)
			goto out;
		rr = rreply->results_reply;
		if (!rr->ok) {
			fprintf(stderr, "kgb rerun: campaign %llu: %s\n", (unsigned long long)id, rr->error);
			rc = KGB_CLI_EXIT_REFUSED;
			goto out;
		}
	}
	/* filter the candidates; keep the operators and methods that still have one */
	json_t *ops = json_array(), *methods = json_object_get(m, "methods");
	size_t kept = 0, keep_methods = 0;
	for (size_t i = 0; i < json_array_size(methods);) {
		json_t *me = json_array_get(methods, i);
		const char *mname = json_string_value(json_object_get(me, "name"));
		json_t *cands = json_object_get(me, "candidates");
		bool is_base = baseline && mname && strcmp(mname, baseline) == 0;
		for (size_t k = 0; k < json_array_size(cands);) {
			json_t *cd = json_array_get(cands, k);
			const char *cop = json_string_value(json_object_get(cd, "operator"));
			bool keep = cop && mname && (!op || strcmp(cop, op) == 0) &&
			            (!method || strcmp(mname, method) == 0 || (is_base && !failing));
			if (keep && failing) {
				/* failed on some platform: a recorded case that is not a pass */
				bool failed = false;
				for (size_t r = 0; r < rr->n_rows && !failed; r++)
					failed = strcmp(rr->rows[r]->method, mname) == 0 && strcmp(rr->rows[r]->op, cop) == 0 &&
					         rr->rows[r]->cases_done > rr->rows[r]->cases_passed;
				keep = failed;
				if (keep) {
					json_t *idx = json_array();
					rc = failing_cases(g, id, mname, cop, idx);
					if (rc != 0) {
						json_decref(idx);
						json_decref(ops);
						goto out;
					}
					json_object_set_new(cd, "cases", idx);
				}
			} else if (keep && (sel_idx || sel_where)) {
				json_t *sel = json_object();
				if (sel_idx)
					json_object_set(sel, "indices", sel_idx);
				if (sel_where)
					json_object_set(sel, "where", sel_where);
				json_object_set_new(cd, "cases", sel);
			}
			if (!keep) {
				json_array_remove(cands, k);
				continue;
			}
			bool dup = false;
			for (size_t q = 0; q < json_array_size(ops) && !dup; q++)
				dup = strcmp(json_string_value(json_array_get(ops, q)), cop) == 0;
			if (!dup)
				json_array_append_new(ops, json_string(cop));
			kept++;
			k++;
		}
		if (json_array_size(cands) == 0) {
			json_array_remove(methods, i);
			continue;
		}
		keep_methods++;
		i++;
	}
	if (kept == 0) {
		fprintf(stderr, "kgb rerun: campaign %llu: no candidate %s%s%s%s%s%s\n", (unsigned long long)id,
		        failing ? "failed a case" : "matches", method ? " (method " : "", method ? method : "",
		        method ? ")" : "", op ? " for operator " : "", op ? op : "");
		json_decref(ops);
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	json_object_set_new(m, "operators", ops);
	if (baseline) {
		bool has = false;
		for (size_t i = 0; i < json_array_size(methods) && !has; i++)
			has = strcmp(json_string_value(json_object_get(json_array_get(methods, i), "name")), baseline) == 0;
		if (!has)
			json_object_del(m, "baseline");
	}
	char *newname = name ? kgb_xstrdup(name)
	                     : kgb_xasprintf("%s-rerun", json_string_value(json_object_get(m, "name")) ?: "campaign");
	json_object_set_new(m, "name", json_string(newname));
	free(newname);
	out = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (dry) {
		kgb_cli_json_print(stdout, json_incref(m));
		goto out;
	}
	if (!g->timeout_given)
		g->timeout_s = KGB_CLI_SUBMIT_TIMEOUT_S;
	char *morigin = kgb_xasprintf("campaign %llu (%s), re-run", (unsigned long long)id, origin);
	Kgb__SubmitRequest sreq = KGB__SUBMIT_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	sreq.manifest_json = out;
	sreq.origin = morigin;
	sreq.wait_for_platforms = wait_plat;
	sreq.owner = (char *)kgb_cli_user();
	sreq.parent_campaign_id = id;
	env.body_case = KGB__ENVELOPE__BODY_SUBMIT;
	env.submit = &sreq;
	rc = kgb_cli_request(g, "rerun", &env, KGB__ENVELOPE__BODY_SUBMIT_REPLY, &reply);
	free(morigin);
	if (rc != 0)
		goto out;
	const Kgb__SubmitReply *sr = reply->submit_reply;
	if (!sr->ok) {
		fprintf(stderr, "kgb rerun: coordinator refused the re-run of campaign %llu: %s\n", (unsigned long long)id,
		        sr->error && *sr->error ? sr->error : "(no reason given)");
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	printf("campaign %llu submitted: %u jobs (re-runs campaign %llu: %zu candidates of %zu methods%s)\n",
	       (unsigned long long)sr->campaign_id, sr->jobs, (unsigned long long)id, kept, keep_methods,
	       failing || cases || where ? ", partial" : "");
out:
	kgb_wire_free(reply);
	kgb_wire_free(rreply);
	json_decref(m);
	json_decref(sel_idx);
	json_decref(sel_where);
	free(out);
	free(mj);
	free(origin);
	return rc;
}
