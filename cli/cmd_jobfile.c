/* kgb job-file ID OPERATOR: one candidate's cases of a finished campaign as a job file
 * for `kgb-worker run` (worker/jobfile.c), to reproduce them on one's own machine with
 * the campaign's inputs: its plan and sources inline, its seeds (revealed once the
 * campaign has ended), its limits and the backend of the platform they ran on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "manifest.h"
#include "output.h"
#include "results.h"
#include "util.h"

/* The candidate of method (NULL: the only one) for op in the stored manifest. */
static const kgb_candidate_t *find_candidate(const kgb_manifest_t *m, const char *op, const char *method,
                                             char *err, size_t errlen)
{
	const kgb_candidate_t *found = NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->ncandidates; i++) {
		const kgb_candidate_t *c = &m->candidates[i];
		if (strcmp(c->op, op) != 0 || (method && strcmp(c->method, method) != 0))
			continue;
		if (!found)
			found = c;
		n++;
	}
	if (!found) {
		kgb_err(err, errlen, "no candidate for operator %s%s%s", op, method ? " of method " : "", method ? method : "");
		return NULL;
	}
	if (n > 1 && !method) {
		kgb_err(err, errlen, "%zu candidates for operator %s: name one with --method (the first is %s's)", n, op,
		        found->method);
		return NULL;
	}
	return found;
}

/* Parse "3,7,12" into idx (at most max). Returns the count, or -1 with err. */
static int parse_cases(const char *s, uint32_t *idx, int max, char *err, size_t errlen)
{
	int n = 0;
	for (const char *p = s; *p;) {
		char *end = NULL;
		errno = 0;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || errno || v > UINT32_MAX || (*end && *end != ',') || n == max)
			return kgb_err(err, errlen, "--case: expected case numbers separated by commas (at most %d), got '%s'",
			               max, s);
		idx[n++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	}
	return n;
}

#define MAX_CASES 4096

/* kgb job-file ID OPERATOR [--method M] [--platform P] [--case N,...] [-o FILE]. */
int kgb_cli_cmd_job_file(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *method = NULL, *platform = NULL, *cases = NULL, *outpath = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "method", 'm', KGB_CLI_OPT_STRING, &method, "M", "the method's candidate (needed when several)" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P",
		  "the platform whose cases and backend to take (needed when several)" },
		{ "case", 'c', KGB_CLI_OPT_STRING, &cases, "N[,N...]", "these cases (default: every case that did not pass)" },
		{ "output", 'o', KGB_CLI_OPT_STRING, &outpath, "FILE", "write the job file here (default: stdout)" },
	};
	const kgb_cli_spec_t spec = {
		.name = "job-file",
		.usage = "ID OPERATOR [--method M] [--platform P] [--case N,...] [-o FILE]",
		.summary = "One candidate's cases of an ended campaign as a job file for\n"
		           "`kgb-worker run FILE [--case N] [--dump DIR]`: the plan and sources inline,\n"
		           "the campaign's seeds (secret ones are revealed when it ends), its time\n"
		           "limit and timing budget, and the backend of the platform the cases ran on.\n"
		           "By default the cases that did not pass there.",
		KGB_CLI_OPTS(opts),
		.min_pos = 2,
		.max_pos = 2,
	};
	char *pos[2];
	int npos = 0;
	char err[512];
	uint64_t id = 0;
	Kgb__Envelope *reply = NULL;
	char *mj = NULL, *origin = NULL;
	kgb_manifest_t *m = NULL;
	json_t *job = NULL;
	static uint32_t idx[MAX_CASES];
	int nidx = 0;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, &id, 1);
	if (rc >= 0)
		return rc;
	if (cases && (nidx = parse_cases(cases, idx, MAX_CASES, err, sizeof err)) < 0) {
		fprintf(stderr, "kgb job-file: %s\n", err);
		return KGB_CLI_EXIT_USAGE;
	}
	/* the cases as stored: their platform, verdicts and the campaign's seed */
	rc = kgb_cli_show_request(g, "job-file", id, pos[1], method, platform, false, NULL, &reply);
	if (rc != 0)
		return rc;
	const Kgb__ShowReply *sr = reply->show_reply;
	rc = KGB_CLI_EXIT_REFUSED;
	if (sr->n_rows == 0) {
		fprintf(stderr, "kgb job-file: campaign %llu, operator %s: %s\n", (unsigned long long)id, pos[1],
		        sr->error && *sr->error ? sr->error : "no results");
		goto out;
	}
	if (!sr->seed_state || strcmp(sr->seed_state, "secret") == 0 || !*sr->seed_state) {
		fprintf(stderr, "kgb job-file: campaign %llu: %s: its inputs cannot be reproduced before it ends (kgb "
		        "cancel it, or wait)\n", (unsigned long long)id,
		        sr->seed_state && *sr->seed_state ? "the input seed is secret until the campaign ends"
		                                          : "the coordinator reports no input seed");
		goto out;
	}
	const char *plat = platform, *meth = method;
	for (size_t i = 0; i < sr->n_rows; i++) {
		const Kgb__CaseRow *r = sr->rows[i];
		if ((plat && strcmp(plat, r->platform) != 0) || (meth && strcmp(meth, r->method) != 0)) {
			fprintf(stderr, "kgb job-file: campaign %llu, operator %s: results on %s (%s) and %s (%s): name one with "
			        "--%s\n", (unsigned long long)id, pos[1], plat, meth, r->platform, r->method,
			        plat && strcmp(plat, r->platform) != 0 ? "platform" : "method");
			rc = KGB_CLI_EXIT_USAGE;
			goto out;
		}
		plat = r->platform;
		meth = r->method;
		if (!cases && strcmp(r->verdict, "pass") != 0 && nidx < MAX_CASES)
			idx[nidx++] = r->case_index;
	}
	if (nidx == 0) {
		fprintf(stderr, "kgb job-file: campaign %llu, operator %s: every case passed on %s (name cases with "
		        "--case)\n", (unsigned long long)id, pos[1], plat);
		goto out;
	}
	rc = kgb_cli_fetch_manifest(g, "job-file", id, &mj, &origin);
	if (rc != 0)
		goto out;
	rc = KGB_CLI_EXIT_REFUSED;
	if (kgb_manifest_parse(mj, strlen(mj), "stored manifest", true, &m, err, sizeof err) < 0) {
		fprintf(stderr, "kgb job-file: campaign %llu: %s\n", (unsigned long long)id, err);
		goto out;
	}
	const kgb_candidate_t *c = find_candidate(m, pos[1], meth, err, sizeof err);
	if (!c) {
		fprintf(stderr, "kgb job-file: campaign %llu: %s\n", (unsigned long long)id, err);
		goto out;
	}
	json_error_t je;
	json_t *plan = json_loads(c->plan_json, 0, &je);
	json_t *srcs = json_object();
	for (size_t i = 0; i < c->nsources; i++) {
		if (memchr(c->sources[i].content, 0, c->sources[i].len)) {
			fprintf(stderr, "kgb job-file: campaign %llu: source %s is binary; a job file holds text only\n",
			        (unsigned long long)id, c->sources[i].name);
			json_decref(plan);
			json_decref(srcs);
			goto out;
		}
		json_object_set_new(srcs, c->sources[i].name,
		                    json_pack("{s:s%}", "inline", c->sources[i].content, c->sources[i].len));
	}
	json_t *ca = json_array();
	for (int i = 0; i < nidx; i++)
		json_array_append_new(ca, json_integer(idx[i]));
	kgb_seeds_t sd = kgb_seeds_derive(sr->seed);
	const char *colon = strchr(plat, ':');
	char backend[64];
	snprintf(backend, sizeof backend, "%.*s", colon ? (int)(colon - plat) : (int)strlen(plat), plat);
	char comment[512];
	snprintf(comment, sizeof comment, "campaign %llu, method %s, platform %s (kgb job-file)", (unsigned long long)id,
	         meth, plat);
	job = json_pack("{s:s,s:s,s:s,s:o,s:I,s:I,s:I,s:s,s:i,s:b,s:I,s:I,s:o,s:o}", "comment", comment, "op", c->op,
	                "method", meth, "cases", ca, "seed", (json_int_t)sd.a, "seed_b", (json_int_t)sd.b, "heldout_key",
	                (json_int_t)sd.heldout, "backend", backend, "device", 0, "timing", m->timing, "time_limit_ms",
	                (json_int_t)m->time_limit_ms, "timing_budget_ms", (json_int_t)m->timing_budget_ms, "plan",
	                plan ? plan : json_null(), "sources", srcs);
	char *text = json_dumps(job, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	if (!outpath) {
		printf("%s\n", text);
		rc = KGB_CLI_OK;
	} else if (kgb_write_file_atomic(outpath, text, strlen(text)) < 0) {
		fprintf(stderr, "kgb job-file: %s: %s\n", outpath, strerror(errno));
	} else {
		fprintf(stderr, "kgb job-file: %s: %d case(s) of %s (%s on %s); run: kgb-worker run %s --case %u\n", outpath,
		        nidx, c->op, meth, plat, outpath, idx[0]);
		rc = KGB_CLI_OK;
	}
	free(text);
out:
	json_decref(job);
	kgb_manifest_destroy(&m);
	free(mj);
	free(origin);
	kgb_wire_free(reply);
	return rc;
}
