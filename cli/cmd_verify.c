/* kgb verify FILE: one candidate of one operator on one platform, run on the operator's
 * dev cases at interactive priority, answered as text or as JSON an agent can act on
 * (docs/agents.md). */
#include <dirent.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog.h"
#include "cli.h"
#include "client.h"
#include "devcases.h"
#include "manifest.h"
#include "output.h"
#include "results.h"
#include "util.h"
#include "validate.h"

/* the log excerpt of an answer: its last bytes */
#define VERIFY_LOG_MAX 8192

typedef struct verify {
	kgb_cli_global_t *g;
	const char *file;          /* the candidate as given */
	const char *op;
	const char *platform;
	const char *method;
	bool json;
	double t0_ms;
	uint64_t campaign;
	uint32_t dev[KGB_DEV_MAX];
	size_t ndev;
} verify_t;

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir/name into out[n]; -1 when it does not fit. */
static int path_join(char *out, size_t n, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	if (a + 1 + b + 1 > n)
		return -1;
	memcpy(out, dir, a);
	out[a] = '/';
	memcpy(out + a + 1, name, b + 1);
	return 0;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t l = strlen(s), k = strlen(suf);
	return l >= k && strcmp(s + l - k, suf) == 0;
}

/* The operator a file name names: its base name without ".py", ".plan.json" or
 * ".json", and without a KernelGenBench namespace ("aten__add", "aten::add"). NULL
 * when the catalog does not know it. */
static const char *op_from_name(const char *path, char *buf, size_t n)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	size_t l = strlen(tmp);
	while (l > 1 && tmp[l - 1] == '/')
		tmp[--l] = 0;
	const char *base = strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp;
	kgb_strlcpy(buf, base, n);
	static const char *const sufs[] = { ".plan.json", ".json", ".py" };
	for (size_t i = 0; i < KGB_ARRAY_LEN(sufs); i++)
		if (ends_with(buf, sufs[i])) {
			buf[strlen(buf) - strlen(sufs[i])] = 0;
			break;
		}
	const char *sep = strstr(buf, "::");
	if (sep)
		memmove(buf, sep + 2, strlen(sep + 2) + 1);
	else if ((sep = strstr(buf, "__")) && sep > buf && !kgb_catalog_find(buf))
		memmove(buf, sep + 2, strlen(sep + 2) + 1);
	return kgb_catalog_find(buf) ? buf : NULL;
}

/* The plan of a plan directory: DIR/plan.json, else its only *.plan.json. */
static int plan_in_dir(const char *dir, char *out, size_t n, char *err, size_t errlen)
{
	if (path_join(out, n, dir, "plan.json") < 0)
		return kgb_err(err, errlen, "%s: path too long", dir);
	struct stat st;
	if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	char **names = NULL;
	size_t found = 0;
	DIR *d = opendir(dir);
	if (!d)
		return kgb_err(err, errlen, "%s: cannot read the directory", dir);
	struct dirent *de;
	while ((de = readdir(d)))
		if (ends_with(de->d_name, ".plan.json")) {
			names = kgb_xrealloc(names, (found + 1) * sizeof *names);
			names[found++] = kgb_xstrdup(de->d_name);
		}
	closedir(d);
	int rc = 0;
	if (found == 1 && path_join(out, n, dir, names[0]) < 0)
		rc = kgb_err(err, errlen, "%s: path too long", dir);
	else if (found != 1)
		rc = kgb_err(err, errlen, "%s: %s", dir,
		             found ? "more than one *.plan.json: name the plan file" : "no plan.json or *.plan.json in it");
	for (size_t i = 0; i < found; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* The campaign's manifest, resolved: one method, one candidate (the module or plan at
 * v->file, read by absolute path) with the dev cases, on v->platform. */
static int build_manifest(verify_t *v, bool timing, kgb_manifest_t **out, char *err, size_t errlen)
{
	char abs[PATH_MAX], plan[PATH_MAX];
	if (!realpath(v->file, abs))
		return kgb_err(err, errlen, "%s: no such file or directory", v->file);
	json_t *cand = json_object();
	json_object_set_new(cand, "operator", json_string(v->op));
	if (is_dir(abs)) {
		if (plan_in_dir(abs, plan, sizeof plan, err, errlen) < 0) {
			json_decref(cand);
			return -1;
		}
		json_object_set_new(cand, "plan", json_string(plan));
	} else if (ends_with(abs, ".py")) {
		json_object_set_new(cand, "kind", json_string("python"));
		json_object_set_new(cand, "module", json_string(abs));
	} else {
		json_object_set_new(cand, "plan", json_string(abs));
	}
	json_t *cases = json_array();
	for (size_t i = 0; i < v->ndev; i++)
		json_array_append_new(cases, json_integer(v->dev[i]));
	json_object_set_new(cand, "cases", cases);
	/* a public seed and no held-out case: those are for scoring (docs/agents.md) */
	json_t *m = json_pack("{s:s+,s:[s],s:[s],s:b,s:I,s:i,s:[{s:s,s:s,s:[o]}]}", "name", "verify ", v->op,
	                      "operators", v->op, "platforms", v->platform, "timing", timing, "seed",
	                      (json_int_t)KGB_DEV_SEED, "heldout", 0, "methods", "name", v->method, "description",
	                      "kgb verify: dev cases", "candidates", cand);
	KGB_ASSERT(m != NULL);
	char *text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	kgb_manifest_t *mf = NULL;
	int rc = kgb_manifest_parse(text, strlen(text), v->file, false, &mf, err, errlen);
	free(text);
	if (rc == 0)
		rc = kgb_manifest_resolve_ex(mf, "/", kgb_cli_fetch, KGB_MANIFEST_ALLOW_OUTSIDE, err, errlen);
	if (rc != 0) {
		kgb_manifest_destroy(&mf);
		return -1;
	}
	*out = mf;
	return 0;
}

/* The only platform a live worker offers, when --platform is not given. */
static int pick_platform(kgb_cli_client_t *c, char *buf, size_t n, char *err, size_t errlen)
{
	Kgb__PlatformsRequest req = KGB__PLATFORMS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL;
	env.body_case = KGB__ENVELOPE__BODY_PLATFORMS;
	env.platforms = &req;
	int rc = kgb_cli_client_call(c, &env, KGB__ENVELOPE__BODY_PLATFORMS_REPLY, &reply, err, errlen);
	if (rc != 0)
		return rc;
	const Kgb__PlatformsReply *pr = reply->platforms_reply;
	size_t live = 0;
	char names[512] = "";
	for (size_t i = 0; i < pr->n_platforms; i++) {
		if (pr->platforms[i]->live_devices == 0)
			continue;
		if (live++ == 0)
			snprintf(buf, n, "%s", pr->platforms[i]->name);
		size_t l = strlen(names);
		snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", pr->platforms[i]->name);
	}
	kgb_wire_free(reply);
	if (live == 1)
		return 0;
	if (live == 0)
		kgb_err(err, errlen, "no live worker offers a platform: start one, or name the platform with --platform");
	else
		kgb_err(err, errlen, "several platforms are live (%s): name one with --platform", names);
	return KGB_CLI_EXIT_USAGE;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(fmod(ms, 1000) * 1e6) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Wait until the campaign has ended (0; *state its state), cannot progress
 * (KGB_CLI_EXIT_STALLED, reason in why), or wait_s ran out (KGB_CLI_EXIT_WAIT); or an
 * exit code with err. */
static int wait_done(verify_t *v, kgb_cli_client_t *c, double wait_s, char *state, size_t statelen, char *why,
                     size_t whylen, char *err, size_t errlen)
{
	double start = kgb_now_ms(), pause = 50;
	for (;;) {
		Kgb__StatusRequest req = KGB__STATUS_REQUEST__INIT;
		Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL;
		req.campaign_id = v->campaign;
		env.body_case = KGB__ENVELOPE__BODY_STATUS;
		env.status = &req;
		int rc = kgb_cli_client_call(c, &env, KGB__ENVELOPE__BODY_STATUS_REPLY, &reply, err, errlen);
		if (rc != 0)
			return rc;
		const Kgb__StatusReply *sr = reply->status_reply;
		if (!sr || sr->n_campaigns != 1) {
			kgb_err(err, errlen, "campaign %llu: %s", (unsigned long long)v->campaign,
			        sr && sr->error && *sr->error ? sr->error : "not found");
			kgb_wire_free(reply);
			return KGB_CLI_EXIT_REFUSED;
		}
		const Kgb__CampaignStatus *cs = sr->campaigns[0];
		const char *st = cs->state ? cs->state : "";
		if (strcmp(st, "done") == 0 || strcmp(st, "cancelled") == 0 || strcmp(st, "failed") == 0) {
			snprintf(state, statelen, "%s", st);
			kgb_wire_free(reply);
			return 0;
		}
		if (cs->stalled) {
			snprintf(why, whylen, "%s", cs->stalled_reason && *cs->stalled_reason ? cs->stalled_reason
			                                                                       : "no live worker can run its jobs");
			kgb_wire_free(reply);
			return KGB_CLI_EXIT_STALLED;
		}
		kgb_wire_free(reply);
		if (kgb_now_ms() - start > wait_s * 1000)
			return KGB_CLI_EXIT_WAIT;
		sleep_ms(pause);
		pause = pause < 400 ? pause * 2 : 500;
	}
}

/* Withhold every "seed 0x..." of a job log in place (the executor logs its poison
 * seed): an answer names no seed. */
static void withhold_seeds(char *s)
{
	static const char tag[] = "seed 0x", repl[] = "seed [withheld]";
	char *p = s;
	while ((p = strstr(p, tag))) {
		char *e = p + strlen(tag);
		while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f') || (*e >= 'A' && *e <= 'F'))
			e++;
		if ((size_t)(e - p) < strlen(repl)) {
			p = e;
			continue;
		}
		memcpy(p, repl, strlen(repl));
		memmove(p + strlen(repl), e, strlen(e) + 1);
		p += strlen(repl);
	}
}

/* The tail of a log, at most max bytes, starting at a line. */
static const char *log_tail(const char *log, size_t max)
{
	size_t l = strlen(log);
	if (l <= max)
		return log;
	const char *p = log + l - max;
	const char *nl = strchr(p, '\n');
	return nl && nl[1] ? nl + 1 : p;
}

static json_t *answer_base(const verify_t *v)
{
	json_t *a = json_object();
	json_object_set_new(a, "passed", json_false());
	json_object_set_new(a, "operator", json_string(v->op ? v->op : ""));
	json_object_set_new(a, "platform", json_string(v->platform ? v->platform : ""));
	json_object_set_new(a, "method", json_string(v->method));
	json_object_set_new(a, "candidate", json_string(v->file));
	if (v->campaign)
		json_object_set_new(a, "campaign_id", json_integer((json_int_t)v->campaign));
	json_t *dev = json_array();
	for (size_t i = 0; i < v->ndev; i++)
		json_array_append_new(dev, json_integer(v->dev[i]));
	json_object_set_new(a, "dev_cases", dev);
	return a;
}

static void answer_print(const verify_t *v, json_t *a)
{
	json_object_set_new(a, "seconds", json_real(round((kgb_now_ms() - v->t0_ms) / 10.0) / 100.0));
	if (v->json) {
		kgb_cli_json_print(stdout, json_incref(a));  /* it takes a reference */
		return;
	}
	const char *err = json_string_value(json_object_get(a, "error"));
	const char *state = json_string_value(json_object_get(a, "state"));
	if (err) {
		printf("%s: %s %s: not run: %s\n", v->file, v->op ? v->op : "?", v->platform ? v->platform : "?", err);
		return;
	}
	json_t *cases = json_object_get(a, "cases");
	printf("%s: %s on %s, campaign %lld: %s", v->file, v->op, v->platform,
	       (long long)json_integer_value(json_object_get(a, "campaign_id")),
	       json_is_true(json_object_get(a, "passed")) ? "PASSED" : "FAILED");
	if (cases)
		printf(" (%lld of %lld dev cases pass)", (long long)json_integer_value(json_object_get(cases, "passed")),
		       (long long)json_integer_value(json_object_get(cases, "total")));
	if (state && strcmp(state, "done") != 0)
		printf(", campaign %s%s%s", state, json_object_get(a, "reason") ? ": " : "",
		       json_object_get(a, "reason") ? json_string_value(json_object_get(a, "reason")) : "");
	printf("\n");
	json_t *sp = json_object_get(a, "speedup");
	if (json_is_object(sp)) {
		double s = json_real_value(json_object_get(sp, "value"));
		printf("speedup against %s: %.3gx [%.3g-%.3g]%s\n", json_string_value(json_object_get(sp, "baseline")), s,
		       json_real_value(json_object_get(sp, "low")), json_real_value(json_object_get(sp, "high")),
		       json_is_true(json_object_get(sp, "tie")) ? " tie" : "");
	} else if (json_object_get(a, "speedup_note")) {
		printf("speedup: %s\n", json_string_value(json_object_get(a, "speedup_note")));
	}
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(a, "failures"), i, f)
		printf("  case %lld [%s] %s: %s\n", (long long)json_integer_value(json_object_get(f, "case")),
		       json_string_value(json_object_get(f, "name")), json_string_value(json_object_get(f, "verdict")),
		       json_string_value(json_object_get(f, "message")));
	const char *log = json_string_value(json_object_get(a, "log"));
	if (!json_is_true(json_object_get(a, "passed")) && log && *log)
		printf("log (last part):\n%s\n", log_tail(log, 2048));
}

/* The campaign's answer: its result row and cases for the candidate. */
static int collect(verify_t *v, kgb_cli_client_t *c, json_t *a, char *err, size_t errlen)
{
	Kgb__ResultsRequest rq = KGB__RESULTS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL, *sreply = NULL;
	rq.campaign_id = v->campaign;
	rq.baseline = "";
	env.body_case = KGB__ENVELOPE__BODY_RESULTS;
	env.results = &rq;
	int rc = kgb_cli_client_call(c, &env, KGB__ENVELOPE__BODY_RESULTS_REPLY, &reply, err, errlen);
	if (rc != 0)
		return rc;
	const Kgb__ResultsReply *rr = reply->results_reply;
	const Kgb__ResultRow *row = NULL;
	for (size_t i = 0; rr && i < rr->n_rows && !row; i++)
		if (strcmp(rr->rows[i]->method, v->method) == 0 && strcmp(rr->rows[i]->op, v->op) == 0 &&
		    strcmp(rr->rows[i]->platform, v->platform) == 0)
			row = rr->rows[i];
	if (!row) {
		kgb_err(err, errlen, "campaign %llu has no result for %s on %s%s%s", (unsigned long long)v->campaign, v->op,
		        v->platform, rr && rr->error && *rr->error ? ": " : "", rr && rr->error ? rr->error : "");
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	bool passed = row->verdict == KGB__VERDICT__VERDICT_PASS && row->cases_passed == row->cases_total && row->cases_total > 0;
	json_object_set_new(a, "passed", json_boolean(passed));
	json_object_set_new(a, "verdict", json_string(kgb_verdict_name((int)row->verdict)));
	json_object_set_new(a, "cases", json_pack("{s:i,s:i,s:i}", "total", (int)row->cases_total, "passed",
	                                          (int)row->cases_passed, "failed",
	                                          (int)(row->cases_done - row->cases_passed)));
	if (row->speedup > 0) {
		double sg = kgb_cli_sigma(row->speedup_rse, row->noise_floor);
		json_t *sp = json_pack("{s:f,s:f,s:f,s:b,s:f,s:s,s:i}", "value", row->speedup, "low",
		                       row->speedup * exp(-2 * sg), "high", row->speedup * exp(2 * sg), "tie", row->tie,
		                       "rse", row->speedup_rse, "baseline",
		                       rr->baseline && *rr->baseline ? rr->baseline : "native", "timed_cases",
		                       (int)row->timed_cases);
		json_object_set_new(sp, "noise_floor", row->noise_floor > 0 ? json_real(row->noise_floor) : json_null());
		json_object_set_new(a, "speedup", sp);
	} else {
		json_object_set_new(a, "speedup", json_null());
		json_object_set_new(a, "speedup_note",
		                    json_string(!passed ? "none: not every dev case passed"
		                                        : row->timed_cases == 0 ? "none: no dev case is timed"
		                                                                : "none: no baseline timing of these cases on "
		                                                                  "this platform (stored native timings, "
		                                                                  "docs/native.md)"));
	}
	/* the cases, with the jobs' logs */
	Kgb__ShowRequest sq = KGB__SHOW_REQUEST__INIT;
	Kgb__Envelope senv = KGB__ENVELOPE__INIT;
	sq.campaign_id = v->campaign;
	sq.op = (char *)v->op;
	sq.method = (char *)v->method;
	sq.platform = (char *)v->platform;
	sq.baseline = "";
	sq.with_log = true;
	senv.body_case = KGB__ENVELOPE__BODY_SHOW;
	senv.show = &sq;
	rc = kgb_cli_client_call(c, &senv, KGB__ENVELOPE__BODY_SHOW_REPLY, &sreply, err, errlen);
	if (rc != 0) {
		kgb_wire_free(reply);
		return rc;
	}
	const Kgb__ShowReply *sr = sreply->show_reply;
	json_t *fails = json_array();
	for (size_t i = 0; i < sr->n_rows; i++) {
		const Kgb__CaseRow *r = sr->rows[i];
		if (strcmp(r->verdict, "pass") == 0)
			continue;
		json_array_append_new(fails, json_pack("{s:i,s:s,s:s,s:s}", "case", (int)r->case_index, "name", r->label,
		                                       "verdict", r->verdict, "message", r->message));
	}
	json_object_set_new(a, "failures", fails);
	char *log = kgb_xstrdup(sr->log ? log_tail(sr->log, VERIFY_LOG_MAX) : "");
	withhold_seeds(log);
	json_object_set_new(a, "log", json_string(log));
	free(log);
	kgb_wire_free(sreply);
	kgb_wire_free(reply);
	return passed ? KGB_CLI_OK : KGB_CLI_EXIT_FAILED;
}

/* kgb verify FILE [--op OP] [--platform P] [--json] [--method NAME] [--wait S] [--no-timing]. */
int kgb_cli_cmd_verify(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *op = NULL, *platform = NULL, *method = "agent";
	bool json = false, no_timing = false;
	double wait_s = 600;
	const kgb_cli_opt_t opts[] = {
		{ "op", 0, KGB_CLI_OPT_STRING, &op, "OP", "the operator (default: from the file's name, e.g. add.py)" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P",
		  "the platform (default: the only one a live worker offers)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "the answer as one JSON object (docs/agents.md)" },
		{ "method", 0, KGB_CLI_OPT_STRING, &method, "NAME", "the method's name in the campaign (default agent)" },
		{ "wait", 0, KGB_CLI_OPT_DOUBLE, &wait_s, "S", "give up waiting after S seconds (default 600; exit 7)" },
		{ "no-timing", 0, KGB_CLI_OPT_FLAG, &no_timing, NULL, "check correctness only, time nothing" },
	};
	const kgb_cli_spec_t spec = {
		.name = "verify",
		.usage = "FILE [--op OP] [--platform P] [--json] [--method NAME] [--wait S] [--no-timing]",
		.summary = "Run one candidate (a KernelGenBench-format Python module, FILE.py; a launch\n"
		           "plan, FILE.json; or a directory with plan.json and its sources) for one\n"
		           "operator on one platform, on the operator's dev cases, ahead of batch\n"
		           "campaigns' queued jobs, and answer: passed, the cases, each failing case's\n"
		           "parameters and message, the speedup with its interval, the log.\n"
		           "Exit status: 0 every dev case passed; 6 it ran and some case did not pass;\n"
		           "1 bad usage or a candidate refused before it ran (\"error\" says why);\n"
		           "2 refused by the coordinator; 3 no coordinator; 4 no live worker can run it;\n"
		           "5 its campaign was cancelled; 7 --wait ran out (the campaign goes on).",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 1,
	};
	char *pos[1];
	int npos = 0;
	char err[2048] = "", opbuf[256], platbuf[256], why[512] = "";
	verify_t v = { .g = g, .method = method, .t0_ms = kgb_now_ms() };
	kgb_manifest_t *m = NULL;
	kgb_cli_client_t *c = NULL;
	Kgb__Envelope *reply = NULL;
	char *mjson = NULL;
	json_t *a = NULL;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, NULL, 0);
	if (rc >= 0)
		return rc;
	v.file = pos[0];
	v.json = json;
	v.method = method;
	if (op && !kgb_catalog_find(op)) {
		fprintf(stderr, "kgb verify: --op: unknown operator '%s' (kgb ops lists them)\n", op);
		return KGB_CLI_EXIT_USAGE;
	}
	v.op = op ? op : op_from_name(v.file, opbuf, sizeof opbuf);
	if (!v.op) {
		fprintf(stderr, "kgb verify: %s: cannot tell the operator from the file's name: give --op\n", v.file);
		return KGB_CLI_EXIT_USAGE;
	}
	v.ndev = kgb_dev_cases(kgb_catalog_find(v.op), v.dev);
	c = kgb_cli_client_new(g->endpoint, g->timeout_s, err, sizeof err);
	if (!c) {
		fprintf(stderr, "kgb verify: %s\n", err);
		return KGB_CLI_EXIT_NOCOORD;
	}
	if (platform) {
		v.platform = platform;
	} else {
		rc = pick_platform(c, platbuf, sizeof platbuf, err, sizeof err);
		if (rc != 0) {
			fprintf(stderr, "kgb verify: %s\n", err);
			goto out;
		}
		v.platform = platbuf;
	}
	a = answer_base(&v);
	if (build_manifest(&v, !no_timing, &m, err, sizeof err) < 0) {
		/* the candidate did not get to run: an answer all the same */
		json_object_set_new(a, "state", json_string("refused"));
		json_object_set_new(a, "error", json_string(err));
		answer_print(&v, a);
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	mjson = kgb_manifest_to_json(m);
	Kgb__SubmitRequest req = KGB__SUBMIT_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	req.manifest_json = mjson;
	req.origin = (char *)v.file;
	req.owner = (char *)kgb_cli_user();
	req.interactive = true;
	env.body_case = KGB__ENVELOPE__BODY_SUBMIT;
	env.submit = &req;
	rc = kgb_cli_client_call(c, &env, KGB__ENVELOPE__BODY_SUBMIT_REPLY, &reply, err, sizeof err);
	if (rc != 0) {
		fprintf(stderr, "kgb verify: %s\n", err);
		goto out;
	}
	const Kgb__SubmitReply *sr = reply->submit_reply;
	if (!sr || !sr->ok) {
		json_object_set_new(a, "state", json_string("refused"));
		json_object_set_new(a, "error", json_string(sr && sr->error && *sr->error ? sr->error : "refused"));
		answer_print(&v, a);
		rc = KGB_CLI_EXIT_REFUSED;
		goto out;
	}
	v.campaign = sr->campaign_id;
	json_object_set_new(a, "campaign_id", json_integer((json_int_t)v.campaign));
	for (size_t i = 0; i < sr->n_notes; i++)
		fprintf(stderr, "kgb verify: %s\n", sr->notes[i]);
	char state[32] = "";
	rc = wait_done(&v, c, wait_s, state, sizeof state, why, sizeof why, err, sizeof err);
	if (rc == KGB_CLI_EXIT_STALLED || rc == KGB_CLI_EXIT_WAIT) {
		json_object_set_new(a, "state", json_string(rc == KGB_CLI_EXIT_STALLED ? "stalled" : "running"));
		json_object_set_new(a, "reason", json_string(rc == KGB_CLI_EXIT_STALLED ? why : "--wait ran out"));
		answer_print(&v, a);
		goto out;
	}
	if (rc != 0) {
		fprintf(stderr, "kgb verify: %s\n", err);
		goto out;
	}
	json_object_set_new(a, "state", json_string(state));
	rc = collect(&v, c, a, err, sizeof err);
	if (rc != KGB_CLI_OK && rc != KGB_CLI_EXIT_FAILED) {
		fprintf(stderr, "kgb verify: %s\n", err);
		goto out;
	}
	if (strcmp(state, "cancelled") == 0) {   /* someone cancelled it: what ran is below */
		json_object_set_new(a, "passed", json_false());
		rc = KGB_CLI_EXIT_CANCELLED;
	}
	answer_print(&v, a);
out:
	json_decref(a);
	kgb_wire_free(reply);
	free(mjson);
	kgb_manifest_destroy(&m);
	kgb_cli_client_destroy(&c);
	return rc;
}
