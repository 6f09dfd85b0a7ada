/* kgb generate: sample a model for kernels over rounds (docs/methods.md).
 *
 * A run is n samples per operator at one temperature, then rounds in which only the
 * operators no sample has solved are asked again (with reflection: the previous
 * answer and kgb's failure messages in the prompt). Each round is an ordinary campaign.
 *
 * Durability: every answer is appended to a journal file (fsync'd) before it is sent
 * to the coordinator, which keeps it in gen_samples; a run started again with the same
 * arguments (same run key) or with --resume RUN replays the journal, asks only the
 * samples not on record, and finds a round's campaign again (gen_rounds, or by its
 * name generate-run<ID>-round<R>) instead of submitting it twice. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "client.h"
#include "genprompt.h"
#include "llm.h"
#include "log.h"
#include "manifest.h"
#include "output.h"
#include "util.h"

#define MAX_FAILURES 5

static const char *const usage_keys[KGB_LLM_NUSAGE] = {"input", "output", "cache_write", "cache_read", "reasoning"};

typedef struct sample {
	char *op;
	uint32_t round, sample;
	json_t *code;             /* {"files": ...} or NULL */
	char *error;              /* why it has no candidate ("" when it has one) */
	int64_t usage[KGB_LLM_NUSAGE];
	double wall_s;
	uint32_t attempts, http_status;
	/* from the store's verdicts */
	uint64_t candidate_id;
	uint32_t cases_total, cases_done, cases_passed, open_jobs;
	bool passed;
	char **failures;
	size_t nfailures;
} sample_t;

typedef struct todo {
	const char *op;
	uint32_t sample;
	char *system, *user;
} todo_t;

typedef struct gen {
	kgb_cli_global_t *g;
	kgb_cli_client_t *cl;
	/* the run's definition (its params) */
	const char *method, *model, *api_name, *base_url, *platform, *cases;
	char **ops;
	size_t nops;
	uint32_t nsamples, rounds, max_tokens;
	double temperature;
	bool reflect, timing;
	kgb_gen_format_t format;
	kgb_gen_templates_t tm;
	/* operational */
	kgb_llm_config_t llm;
	uint64_t budget_tokens;
	double budget_usd, price[4];
	const char *state_dir;
	double poll_s;
	bool quiet;
	/* state */
	uint64_t run_id;
	json_t *params;
	sample_t *s;
	size_t ns, caps;
	uint64_t *round_campaign; /* per round; 0: not submitted */
	int64_t spent[KGB_LLM_NUSAGE]; /* the method's, over every run */
	FILE *journal;
	char *journal_path;
	todo_t *todo;
	size_t ntodo, next_todo;
	uint32_t cur_round;
	bool budget_hit;
	int fatal;                /* an exit code once recording failed */
} gen_t;

/* ---- samples in memory ---- */

static sample_t *find(gen_t *G, const char *op, uint32_t round, uint32_t sample)
{
	for (size_t i = 0; i < G->ns; i++)
		if (G->s[i].round == round && G->s[i].sample == sample && strcmp(G->s[i].op, op) == 0)
			return &G->s[i];
	return NULL;
}

static sample_t *add_sample(gen_t *G, const char *op, uint32_t round, uint32_t sample)
{
	sample_t *x = find(G, op, round, sample);
	if (x)
		return x;
	if (G->ns == G->caps) {
		G->caps = G->caps ? G->caps * 2 : 64;
		G->s = kgb_xrealloc(G->s, G->caps * sizeof *G->s);
	}
	x = &G->s[G->ns++];
	memset(x, 0, sizeof *x);
	x->op = kgb_xstrdup(op);
	x->round = round;
	x->sample = sample;
	x->error = kgb_xstrdup("");
	for (int k = 0; k < KGB_LLM_NUSAGE; k++)
		x->usage[k] = -1;
	return x;
}

static void clear_failures(sample_t *x)
{
	for (size_t i = 0; i < x->nfailures; i++)
		free(x->failures[i]);
	free(x->failures);
	x->failures = NULL;
	x->nfailures = 0;
}

static void free_samples(gen_t *G)
{
	for (size_t i = 0; i < G->ns; i++) {
		free(G->s[i].op);
		free(G->s[i].error);
		json_decref(G->s[i].code);
		clear_failures(&G->s[i]);
	}
	free(G->s);
}

/* True if some sample of op before round passed. */
static bool solved_before(gen_t *G, const char *op, uint32_t round)
{
	for (size_t i = 0; i < G->ns; i++)
		if (G->s[i].round < round && G->s[i].passed && strcmp(G->s[i].op, op) == 0)
			return true;
	return false;
}

/* ---- coordinator calls ---- */

static int call(gen_t *G, Kgb__Envelope *env, Kgb__Envelope__BodyCase expect, Kgb__Envelope **reply)
{
	char err[512];
	int rc = kgb_cli_client_call(G->cl, env, expect, reply, err, sizeof err);
	if (rc != 0)
		fprintf(stderr, "kgb generate: %s\n", err);
	return rc;
}

static Kgb__GenUsage *usage_msg(const int64_t *u, Kgb__GenUsage *m)
{
	kgb__gen_usage__init(m);
	m->input = u[0];
	m->output = u[1];
	m->cache_write = u[2];
	m->cache_read = u[3];
	m->reasoning = u[4];
	return m;
}

static void usage_from(const Kgb__GenUsage *m, int64_t *u)
{
	u[0] = m ? m->input : -1;
	u[1] = m ? m->output : -1;
	u[2] = m ? m->cache_write : -1;
	u[3] = m ? m->cache_read : -1;
	u[4] = m ? m->reasoning : -1;
}

/* Send rq (its run set here); what names its content in an error. */
static int send_record(gen_t *G, Kgb__GenRecordRequest *rq, const char *what)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL;
	rq->run_id = G->run_id;
	env.body_case = KGB__ENVELOPE__BODY_GEN_RECORD;
	env.gen_record = rq;
	int rc = call(G, &env, KGB__ENVELOPE__BODY_GEN_RECORD_REPLY, &reply);
	if (rc == 0 && !reply->gen_record_reply->ok) {
		fprintf(stderr, "kgb generate: run %llu: the coordinator did not record %s: %s\n",
		        (unsigned long long)G->run_id, what, reply->gen_record_reply->error);
		rc = KGB_CLI_EXIT_REFUSED;
	}
	kgb_wire_free(reply);
	return rc;
}

/* Record samples (json objects of the journal's form) with the coordinator. */
static int record_samples(gen_t *G, json_t **js, size_t n)
{
	Kgb__GenSample *sm = kgb_xcalloc(n ? n : 1, sizeof *sm);
	Kgb__GenSample **sp = kgb_xcalloc(n ? n : 1, sizeof *sp);
	Kgb__GenUsage *um = kgb_xcalloc(n ? n : 1, sizeof *um);
	char **texts = kgb_xcalloc(n ? 2 * n : 1, sizeof *texts);
	for (size_t i = 0; i < n; i++) {
		json_t *j = js[i];
		Kgb__GenSample *s = &sm[i];
		kgb__gen_sample__init(s);
		s->op = (char *)json_string_value(json_object_get(j, "op"));
		s->round = (uint32_t)json_integer_value(json_object_get(j, "round"));
		s->sample = (uint32_t)json_integer_value(json_object_get(j, "sample"));
		s->prompt_hash = (char *)json_string_value(json_object_get(j, "prompt_hash"));
		texts[2 * i] = json_dumps(json_object_get(j, "request"), JSON_COMPACT | JSON_SORT_KEYS);
		s->request_json = texts[2 * i];
		s->http_status = (uint32_t)json_integer_value(json_object_get(j, "http_status"));
		s->attempts = (uint32_t)json_integer_value(json_object_get(j, "attempts"));
		s->wall_s = json_number_value(json_object_get(j, "wall_s"));
		int64_t u[KGB_LLM_NUSAGE];
		json_t *ju = json_object_get(j, "usage");
		for (int k = 0; k < KGB_LLM_NUSAGE; k++) {
			json_t *v = json_object_get(ju, usage_keys[k]);
			u[k] = json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
		}
		s->usage = usage_msg(u, &um[i]);
		s->finish_reason = (char *)json_string_value(json_object_get(j, "finish_reason"));
		s->content = (char *)json_string_value(json_object_get(j, "content"));
		json_t *code = json_object_get(j, "code");
		texts[2 * i + 1] = json_is_object(code) ? json_dumps(code, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		s->code_json = texts[2 * i + 1] ? texts[2 * i + 1] : "";
		s->error = (char *)json_string_value(json_object_get(j, "error"));
		s->cand_idx = -1;
		if (!s->op || !s->prompt_hash || !s->finish_reason || !s->content || !s->error)
			s->op = NULL;
		sp[i] = s;
	}
	size_t good = 0;
	for (size_t i = 0; i < n; i++)
		if (sp[i]->op)
			sp[good++] = sp[i];
	Kgb__GenRecordRequest rq = KGB__GEN_RECORD_REQUEST__INIT;
	rq.samples = sp;
	rq.n_samples = good;
	int rc = send_record(G, &rq, "the samples");
	for (size_t i = 0; i < 2 * n; i++)
		free(texts[i]);
	free(texts);
	free(um);
	free(sp);
	free(sm);
	return rc;
}

static int record_round(gen_t *G, uint32_t round, uint64_t campaign)
{
	Kgb__GenRound gr = KGB__GEN_ROUND__INIT, *grp = &gr;
	Kgb__GenRecordRequest rq = KGB__GEN_RECORD_REQUEST__INIT;
	gr.round = round;
	gr.campaign_id = campaign;
	rq.rounds = &grp;
	rq.n_rounds = 1;
	return send_record(G, &rq, "the round's campaign");
}

static int record_links(gen_t *G, Kgb__GenLink **links, size_t n)
{
	Kgb__GenRecordRequest rq = KGB__GEN_RECORD_REQUEST__INIT;
	rq.links = links;
	rq.n_links = n;
	return send_record(G, &rq, "the samples' candidates");
}

/* Ask for the verdicts of round (-1: all) and fold them into G's samples. With
 * reply_out the reply is handed over instead of freed. */
static int load_verdicts(gen_t *G, int32_t round, Kgb__Envelope **reply_out)
{
	Kgb__GenVerdictsRequest rq = KGB__GEN_VERDICTS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL;
	rq.run_id = G->run_id;
	rq.round = round;
	rq.max_failures = MAX_FAILURES;
	env.body_case = KGB__ENVELOPE__BODY_GEN_VERDICTS;
	env.gen_verdicts = &rq;
	int rc = call(G, &env, KGB__ENVELOPE__BODY_GEN_VERDICTS_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__GenVerdictsReply *vr = reply->gen_verdicts_reply;
	if (!vr->ok) {
		fprintf(stderr, "kgb generate: run %llu: %s\n", (unsigned long long)G->run_id, vr->error);
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	for (size_t i = 0; i < vr->n_samples; i++) {
		const Kgb__GenVerdict *v = vr->samples[i];
		sample_t *x = add_sample(G, v->op, v->round, v->sample);
		if (!x->code && v->code_json && *v->code_json)
			x->code = json_loads(v->code_json, 0, NULL);
		free(x->error);
		x->error = kgb_xstrdup(v->error ? v->error : "");
		usage_from(v->usage, x->usage);
		x->wall_s = v->wall_s;
		x->attempts = v->attempts;
		x->http_status = v->http_status;
		x->candidate_id = v->candidate_id;
		x->cases_total = v->cases_total;
		x->cases_done = v->cases_done;
		x->cases_passed = v->cases_passed;
		x->open_jobs = v->open_jobs;
		x->passed = v->passed;
		clear_failures(x);
		x->failures = kgb_xcalloc(v->n_failures + 1, sizeof *x->failures);
		for (size_t k = 0; k < v->n_failures; k++)
			x->failures[x->nfailures++] = kgb_xstrdup(v->failures[k]);
	}
	if (reply_out)
		*reply_out = reply;
	else
		kgb_wire_free(reply);
	return 0;
}

/* ---- the journal ---- */

static int journal_open(gen_t *G)
{
	if (mkdir(G->state_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "kgb generate: --state-dir %s: %s\n", G->state_dir, strerror(errno));
		return KGB_CLI_EXIT_USAGE;
	}
	G->journal_path = kgb_xasprintf("%s/run-%llu.jsonl", G->state_dir, (unsigned long long)G->run_id);
	G->journal = fopen(G->journal_path, "a");
	if (!G->journal) {
		fprintf(stderr, "kgb generate: %s: %s\n", G->journal_path, strerror(errno));
		return KGB_CLI_EXIT_USAGE;
	}
	/* one process per run: two would ask the same samples */
	if (flock(fileno(G->journal), LOCK_EX | LOCK_NB) != 0) {
		fprintf(stderr, "kgb generate: run %llu: another kgb generate is at work on it (%s is locked)\n",
		        (unsigned long long)G->run_id, G->journal_path);
		return KGB_CLI_EXIT_USAGE;
	}
	/* answers from an earlier process that the store may not have: record them again
	 * (the store keeps the first copy of each) */
	FILE *f = fopen(G->journal_path, "r");
	if (f) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t len;
		json_t **batch = NULL;
		size_t nb = 0, total = 0, bad = 0;
		int rc = 0;
		while ((len = getline(&line, &cap, f)) > 0 && rc == 0) {
			json_t *j = json_loadb(line, (size_t)len, 0, NULL);
			if (!json_is_object(j)) {
				bad++; /* a line cut by a kill mid-write: that answer was never acknowledged */
				json_decref(j);
				continue;
			}
			batch = kgb_xrealloc(batch, (nb + 1) * sizeof *batch);
			batch[nb++] = j;
			if (nb == 32) {
				rc = record_samples(G, batch, nb);
				total += nb;
				while (nb)
					json_decref(batch[--nb]);
			}
		}
		if (rc == 0 && nb)
			rc = record_samples(G, batch, nb);
		total += nb;
		while (nb)
			json_decref(batch[--nb]);
		free(batch);
		free(line);
		fclose(f);
		if (rc != 0)
			return rc;
		if (!G->quiet && total)
			fprintf(stderr, "kgb generate: run %llu: %zu answers of the journal %s on record%s\n",
			        (unsigned long long)G->run_id, total, G->journal_path, bad ? " (a torn last line skipped)" : "");
	}
	return 0;
}

static int journal_append(gen_t *G, json_t *j)
{
	char *line = json_dumps(j, JSON_COMPACT);
	int rc = 0;
	if (fprintf(G->journal, "%s\n", line) < 0 || fflush(G->journal) != 0 || fsync(fileno(G->journal)) != 0) {
		fprintf(stderr, "kgb generate: %s: cannot write: %s\n", G->journal_path, strerror(errno));
		rc = KGB_CLI_EXIT_USAGE;
	}
	free(line);
	return rc;
}

/* ---- prompts ---- */

static const char *platform_text(gen_t *G, char *buf, size_t n)
{
	const char *p = G->platform;
	if (G->format == KGB_GEN_PYTHON)
		snprintf(buf, n, "%s; Triton kernels launched from a torch wrapper",
		         strcmp(p, "all") == 0 ? "any GPU kgb evaluates on" : p);
	else if (G->format == KGB_GEN_CUDA)
		snprintf(buf, n, "%s; CUDA kernels compiled with NVRTC for the device's architecture",
		         strcmp(p, "all") == 0 ? "NVIDIA GPUs" : p);
	else
		snprintf(buf, n, "%s; OpenCL C 1.2 kernels",
		         strcmp(p, "all") == 0 ? "any OpenCL device (a CPU through PoCL, or a GPU's OpenCL driver)" : p);
	return buf;
}

/* The reflection text for (op, round, sample): the previous round's answer of the same
 * sample (else of any sample) and why it failed. "" when there is none. */
static char *reflection(gen_t *G, const char *op, uint32_t round, uint32_t sample, char *err, size_t errlen)
{
	if (!G->reflect || round == 0)
		return kgb_xstrdup("");
	sample_t *prev = find(G, op, round - 1, sample);
	for (size_t i = 0; !prev && i < G->ns; i++)
		if (G->s[i].round == round - 1 && strcmp(G->s[i].op, op) == 0)
			prev = &G->s[i];
	if (!prev)
		return kgb_xstrdup("");
	char *fail = kgb_xstrdup("");
	if (prev->error[0]) {
		free(fail);
		fail = kgb_xasprintf("- %s", prev->error);
	}
	for (size_t i = 0; i < prev->nfailures; i++) {
		char *t = kgb_xasprintf("%s%s- %s", fail, fail[0] ? "\n" : "", prev->failures[i]);
		free(fail);
		fail = t;
	}
	if (!fail[0]) {
		free(fail);
		fail = kgb_xasprintf("- %u of %u cases passed", prev->cases_passed, prev->cases_total);
	}
	char *code = prev->code ? kgb_gen_files_text(G->format, prev->code) : kgb_xstrdup("(no code could be taken from it)\n");
	char rnd[16];
	snprintf(rnd, sizeof rnd, "%u", prev->round);
	const char *vars[] = {"op", op, "previous_round", rnd, "failures", fail, "previous", code, NULL};
	char *out = kgb_gen_render(G->tm.text[KGB_GEN_T_REFLECTION], G->tm.origin[KGB_GEN_T_REFLECTION], vars, err, errlen);
	free(fail);
	free(code);
	return out;
}

static int build_prompt(gen_t *G, const char *opname, uint32_t round, uint32_t sample, char **sys, char **user)
{
	char err[512];
	const kgb_op_t *op = kgb_catalog_find(opname);
	kgb_gen_opdesc_t d;
	*sys = *user = NULL;
	if (kgb_gen_describe_op(op, strcmp(G->cases, "smoke") == 0, &d, err, sizeof err) != 0) {
		fprintf(stderr, "kgb generate: operator %s: %s\n", opname, err);
		return KGB_CLI_EXIT_USAGE;
	}
	char plat[256];
	const char *lang = G->format == KGB_GEN_CUDA ? "cuda" : "opencl";
	const char *common[] = {"op", opname, "language", G->format == KGB_GEN_CUDA ? "CUDA C++" : "OpenCL C", "lang",
	                        lang, "ext", G->format == KGB_GEN_CUDA ? "cu" : "cl", "language_notes",
	                        kgb_gen_language_notes(G->format), NULL};
	char *fmt = kgb_gen_render(G->tm.text[KGB_GEN_T_FORMAT], G->tm.origin[KGB_GEN_T_FORMAT], common, err, sizeof err);
	char *refl = fmt ? reflection(G, opname, round, sample, err, sizeof err) : NULL;
	if (refl) {
		const char *vars[] = {"op", opname, "source", op->source ? op->source : "", "summary",
		                      op->summary ? op->summary : "", "signature", op->signature ? op->signature : "",
		                      "overloads", d.overloads, "tensors", d.tensors, "cases", d.cases, "platform",
		                      platform_text(G, plat, sizeof plat), "format", fmt, "reflection", refl, "model",
		                      G->model, NULL};
		*user = kgb_gen_render(G->tm.text[KGB_GEN_T_USER], G->tm.origin[KGB_GEN_T_USER], vars, err, sizeof err);
		if (*user)
			*sys = kgb_gen_render(G->tm.text[KGB_GEN_T_SYSTEM], G->tm.origin[KGB_GEN_T_SYSTEM], vars, err, sizeof err);
	}
	free(fmt);
	free(refl);
	kgb_gen_opdesc_release(&d);
	if (!*sys) {
		free(*user);
		*user = NULL;
		fprintf(stderr, "kgb generate: %s\n", err);
		return KGB_CLI_EXIT_USAGE;
	}
	return 0;
}

/* ---- candidates ---- */

/* The manifest candidate of a sample's code (without the sample fields). */
static json_t *candidate_json(gen_t *G, const char *op, json_t *code)
{
	json_t *files = json_object_get(code, "files");
	json_t *c = json_pack("{s:s}", "operator", op);
	if (G->format == KGB_GEN_PYTHON) {
		json_object_set_new(c, "kind", json_string("python"));
		json_object_set_new(c, "module", json_pack("{s:O}", "inline", json_object_get(files, "module.py")));
		return c;
	}
	json_t *plan = json_loads(json_string_value(json_object_get(files, "plan.json")), 0, NULL);
	json_object_set_new(c, "plan", plan ? plan : json_null());
	json_t *srcs = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(files, k, v)
	{
		if (strcmp(k, "plan.json") != 0)
			json_object_set_new(srcs, k, json_pack("{s:O}", "inline", v));
	}
	json_object_set_new(c, "sources", srcs);
	return c;
}

static json_t *manifest_json(gen_t *G, const char *name, json_t *ops, json_t *cands)
{
	json_t *m = json_pack("{s:s,s:O,s:b,s:s}", "name", name, "operators", ops, "timing", G->timing, "cases", G->cases);
	if (strcmp(G->platform, "all") == 0)
		json_object_set_new(m, "platforms", json_string("all"));
	else
		json_object_set_new(m, "platforms", json_pack("[s]", G->platform));
	json_object_set_new(m, "methods", json_pack("[{s:s,s:O}]", "name", G->method, "candidates", cands));
	return m;
}

/* Check one sample's candidate as kgb submit would (its plan against the operator).
 * Returns 0, or -1 with err. */
static int check_candidate(gen_t *G, const char *op, json_t *code, char *err, size_t errlen)
{
	json_t *ops = json_pack("[s]", op), *cands = json_array();
	json_array_append_new(cands, candidate_json(G, op, code));
	json_t *m = manifest_json(G, "check", ops, cands);
	char *text = json_dumps(m, JSON_COMPACT);
	kgb_manifest_t *mm = NULL;
	char e[1024];
	int rc = kgb_manifest_parse(text, strlen(text), "answer", false, &mm, e, sizeof e);
	if (rc != 0)
		kgb_err(err, errlen, "the candidate does not load: %s", e);
	kgb_manifest_destroy(&mm);
	free(text);
	json_decref(m);
	json_decref(ops);
	json_decref(cands);
	return rc;
}

/* ---- asking ---- */

static double cost_of(gen_t *G, const int64_t *u)
{
	double c = 0;
	for (int k = 0; k < 4; k++)
		c += (u[k] > 0 ? (double)u[k] : 0) * G->price[k] / 1e6;
	return c;
}

static int64_t tokens_of(const int64_t *u)
{
	int64_t t = 0;
	for (int k = 0; k < 4; k++)
		t += u[k] > 0 ? u[k] : 0;
	return t;
}

static bool budget_spent(gen_t *G)
{
	if (G->budget_tokens && (uint64_t)tokens_of(G->spent) >= G->budget_tokens)
		return true;
	return G->budget_usd > 0 && cost_of(G, G->spent) >= G->budget_usd;
}

static bool next_request(void *arg, const char **sys, const char **user, void **tag)
{
	gen_t *G = arg;
	if (G->fatal || G->next_todo >= G->ntodo)
		return false;
	if (budget_spent(G)) {
		G->budget_hit = true;
		return false;
	}
	todo_t *t = &G->todo[G->next_todo++];
	*sys = t->system;
	*user = t->user;
	*tag = t;
	return true;
}

static void on_answer(void *arg, void *tag, const kgb_llm_answer_t *a)
{
	gen_t *G = arg;
	todo_t *t = tag;
	char err[1200] = "", hash[65];
	char *msgs = kgb_xasprintf("%s\n%s", t->system, t->user);
	kgb_sha256_hex(msgs, strlen(msgs), hash);
	free(msgs);
	json_t *code = NULL;
	if (a->error)
		snprintf(err, sizeof err, "no answer after %u attempts: %s", a->attempts, a->error);
	else if ((code = kgb_gen_extract(G->format, a->content, err, sizeof err)) != NULL)
		/* a candidate that does not load keeps its code: the next round's reflection
		 * shows it with the error */
		check_candidate(G, t->op, code, err, sizeof err);
	char *params = kgb_llm_request_params(&G->llm);
	json_t *usage = json_object();
	for (int k = 0; k < KGB_LLM_NUSAGE; k++)
		if (a->usage[k] >= 0)
			json_object_set_new(usage, usage_keys[k], json_integer(a->usage[k]));
	json_t *j = json_pack("{s:s,s:i,s:i,s:s,s:o,s:i,s:i,s:f,s:o,s:s,s:s,s:o,s:s}", "op", t->op, "round",
	                      (int)G->cur_round, "sample", (int)t->sample, "prompt_hash", hash, "request",
	                      json_loads(params, 0, NULL), "http_status", (int)a->http_status, "attempts",
	                      (int)a->attempts, "wall_s", a->wall_s, "usage", usage, "finish_reason",
	                      a->finish_reason ? a->finish_reason : "", "content", a->content ? a->content : "", "code",
	                      code ? json_incref(code) : json_null(), "error", err);
	free(params);
	if (!j) {
		/* content that is not UTF-8: keep the answer's record, without its text */
		char *clean = kgb_xstrdup(err);
		j = json_pack("{s:s,s:i,s:i,s:s,s:{},s:i,s:i,s:f,s:o,s:s,s:s,s:n,s:s}", "op", t->op, "round",
		              (int)G->cur_round, "sample", (int)t->sample, "prompt_hash", hash, "request", "http_status",
		              (int)a->http_status, "attempts", (int)a->attempts, "wall_s", a->wall_s, "usage",
		              json_incref(usage), "finish_reason", "", "content", "", "code", "error",
		              clean[0] ? clean : "the answer is not UTF-8 text");
		free(clean);
		json_decref(code);
		code = NULL;
	}
	KGB_ASSERT(j != NULL);
	/* durable first, then on record, then counted */
	int rc = journal_append(G, j);
	if (rc == 0)
		rc = record_samples(G, &j, 1);
	if (rc != 0 && !G->fatal)
		G->fatal = rc;
	sample_t *x = add_sample(G, t->op, G->cur_round, t->sample);
	json_decref(x->code);
	x->code = code;
	free(x->error);
	x->error = kgb_xstrdup(err);
	for (int k = 0; k < KGB_LLM_NUSAGE; k++) {
		x->usage[k] = a->usage[k];
		if (a->usage[k] > 0)
			G->spent[k] += a->usage[k];
	}
	x->wall_s = a->wall_s;
	x->attempts = a->attempts;
	x->http_status = (uint32_t)a->http_status;
	if (!G->quiet)
		fprintf(stderr, "kgb generate: round %u %s sample %u: %s%s (%u attempt%s, %.1f s, %lld in, %lld out)\n",
		        G->cur_round, t->op, t->sample, err[0] ? "" : "candidate", err, a->attempts,
		        a->attempts == 1 ? "" : "s", a->wall_s, (long long)a->usage[0], (long long)a->usage[1]);
	json_decref(j);
}

static void free_todo(gen_t *G)
{
	for (size_t i = 0; i < G->ntodo; i++) {
		free(G->todo[i].system);
		free(G->todo[i].user);
	}
	free(G->todo);
	G->todo = NULL;
	G->ntodo = G->next_todo = 0;
}

/* ---- one round ---- */

static void round_name(gen_t *G, uint32_t r, char *buf, size_t n)
{
	snprintf(buf, n, "generate-run%llu-round%u", (unsigned long long)G->run_id, r);
}

/* Submit round r's candidates (the samples with code that loads), unless its campaign
 * is known. Sets G->round_campaign[r] (0 when no sample has a candidate). */
static int submit_round(gen_t *G, uint32_t r)
{
	if (G->round_campaign[r])
		return 0;
	json_t *ops = json_array(), *cands = json_array();
	Kgb__GenLink *lk = kgb_xcalloc(G->ns + 1, sizeof *lk);
	Kgb__GenLink **lp = kgb_xcalloc(G->ns + 1, sizeof *lp);
	size_t nl = 0;
	for (size_t o = 0; o < G->nops; o++) {
		bool any = false;
		for (uint32_t s = 0; s < G->nsamples; s++) {
			sample_t *x = find(G, G->ops[o], r, s);
			if (!x || !x->code || x->error[0])
				continue;
			json_t *c = candidate_json(G, x->op, x->code);
			json_t *u = json_object();
			for (int k = 0; k < KGB_LLM_NUSAGE; k++)
				if (x->usage[k] >= 0)
					json_object_set_new(u, usage_keys[k], json_integer(x->usage[k]));
			json_object_set_new(c, "round", json_integer(r));
			json_object_set_new(c, "sample", json_integer(s));
			json_object_set_new(c, "model", json_string(G->model));
			json_object_set_new(c, "usage", u);
			json_object_set_new(c, "tokens", json_integer(tokens_of(x->usage)));
			json_object_set_new(c, "gen_seconds", json_real(x->wall_s));
			kgb__gen_link__init(&lk[nl]);
			lk[nl].op = x->op;
			lk[nl].round = r;
			lk[nl].sample = s;
			lk[nl].cand_idx = (int32_t)json_array_size(cands);
			lp[nl] = &lk[nl];
			nl++;
			json_array_append_new(cands, c);
			any = true;
		}
		if (any)
			json_array_append_new(ops, json_string(G->ops[o]));
	}
	int rc = 0;
	if (nl == 0) {
		if (!G->quiet)
			fprintf(stderr, "kgb generate: round %u: no answer holds a candidate; nothing to evaluate\n", r);
		goto out;
	}
	/* the links first: a resumed run that finds the campaign by name has them */
	rc = record_links(G, lp, nl);
	if (rc != 0)
		goto out;
	char name[96], err[1024];
	round_name(G, r, name, sizeof name);
	json_t *m = manifest_json(G, name, ops, cands);
	char *text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	kgb_manifest_t *mm = NULL;
	if (kgb_manifest_parse(text, strlen(text), name, false, &mm, err, sizeof err) != 0) {
		fprintf(stderr, "kgb generate: round %u's manifest: %s\n", r, err);
		free(text);
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	free(text);
	uint64_t id = 0;
	uint32_t jobs = 0;
	rc = kgb_cli_submit_manifest(G->g, "generate", mm, name, strcmp(G->platform, "all") != 0, &id, &jobs);
	kgb_manifest_destroy(&mm);
	if (rc != 0)
		goto out;
	G->round_campaign[r] = id;
	if (!G->quiet)
		fprintf(stderr, "kgb generate: round %u: campaign %llu submitted: %zu candidates, %u jobs\n", r,
		        (unsigned long long)id, nl, jobs);
	rc = record_round(G, r, id);
out:
	free(lk);
	free(lp);
	json_decref(ops);
	json_decref(cands);
	return rc;
}

/* Wait until every candidate of round r has its verdicts. */
static int wait_round(gen_t *G, uint32_t r)
{
	uint32_t last_open = UINT32_MAX;
	for (;;) {
		int rc = load_verdicts(G, (int32_t)r, NULL);
		if (rc != 0)
			return rc;
		uint32_t open = 0, linked = 0, cands = 0;
		for (size_t i = 0; i < G->ns; i++)
			if (G->s[i].round == r && G->s[i].code && !G->s[i].error[0]) {
				linked++;
				if (G->s[i].candidate_id) {
					cands++;
					open += G->s[i].open_jobs;
				}
			}
		if (cands == linked && open == 0)
			return 0;
		if (!G->quiet && open != last_open)
			fprintf(stderr, "kgb generate: round %u: campaign %llu: %u jobs to go\n", r,
			        (unsigned long long)G->round_campaign[r], open);
		last_open = open;
		struct timespec ts = {(time_t)G->poll_s, (long)((G->poll_s - floor(G->poll_s)) * 1e9)};
		nanosleep(&ts, NULL);
	}
}

static int run_round(gen_t *G, uint32_t r, bool *stop)
{
	char err[256];
	G->cur_round = r;
	/* the operators no earlier round solved; round 0: every one */
	size_t asked = 0;
	for (size_t o = 0; o < G->nops; o++) {
		if (solved_before(G, G->ops[o], r))
			continue;
		asked++;
		for (uint32_t s = 0; s < G->nsamples; s++) {
			if (find(G, G->ops[o], r, s))
				continue;
			G->todo = kgb_xrealloc(G->todo, (G->ntodo + 1) * sizeof *G->todo);
			todo_t *t = &G->todo[G->ntodo++];
			t->op = G->ops[o];
			t->sample = s;
			int rc = build_prompt(G, G->ops[o], r, s, &t->system, &t->user);
			if (rc != 0) {
				G->ntodo--;
				return rc;
			}
		}
	}
	if (asked == 0) {
		*stop = true;
		return 0;
	}
	if (!G->quiet)
		fprintf(stderr, "kgb generate: run %llu round %u: %zu operators, %zu samples to ask\n",
		        (unsigned long long)G->run_id, r, asked, G->ntodo);
	if (G->ntodo && !G->round_campaign[r]) {
		if (kgb_llm_run(&G->llm, next_request, on_answer, G, err, sizeof err) != 0) {
			fprintf(stderr, "kgb generate: %s\n", err);
			return KGB_CLI_EXIT_USAGE;
		}
	}
	size_t left = G->ntodo - G->next_todo;
	free_todo(G);
	if (G->fatal)
		return G->fatal;
	if (G->budget_hit) {
		fprintf(stderr,
		        "kgb generate: run %llu: the budget is spent (%lld tokens%s); %zu samples of round %u not asked\n",
		        (unsigned long long)G->run_id, (long long)tokens_of(G->spent), G->budget_usd > 0 ? ", see --budget-usd" : "",
		        left, r);
		*stop = true;
	}
	int rc = submit_round(G, r);
	if (rc == 0 && G->round_campaign[r])
		rc = wait_round(G, r);
	return rc;
}

/* ---- status ---- */

static int print_status(gen_t *G, bool json)
{
	Kgb__Envelope *reply = NULL;
	int rc = load_verdicts(G, -1, &reply);
	if (rc != 0)
		return rc;
	const Kgb__GenVerdictsReply *vr = reply->gen_verdicts_reply;
	uint32_t nr = 0;
	for (size_t i = 0; i < G->ns; i++)
		nr = KGB_MAX(nr, G->s[i].round + 1);
	for (size_t i = 0; i < vr->n_rounds; i++)
		nr = KGB_MAX(nr, vr->rounds[i]->round + 1);
	json_t *rows = json_array();
	static const char *const th[] = {"ROUND", "CAMPAIGN", "OPS", "SAMPLES", "CANDIDATES", "PASSED", "OPS PASSED",
	                                 "SOLVED", "INPUT", "OUTPUT", "CACHE W", "CACHE R", "REASONING", "WALL S"};
	kgb_cli_table_t *t = kgb_cli_table_new(14, th, "rrrrrrrrrrrrrr");
	for (uint32_t r = 0; r < nr; r++) {
		uint64_t camp = 0;
		for (size_t i = 0; i < vr->n_rounds; i++)
			if (vr->rounds[i]->round == r)
				camp = vr->rounds[i]->campaign_id;
		uint32_t ops = 0, samples = 0, cands = 0, passed = 0, ops_passed = 0, solved = 0;
		int64_t u[KGB_LLM_NUSAGE] = {0};
		double wall = 0;
		/* operators: those asked in round r; solved: by round r, over all rounds */
		const char **seen = kgb_xcalloc(G->ns + 1, sizeof *seen);
		size_t nseen = 0;
		for (size_t i = 0; i < G->ns; i++) {
			sample_t *x = &G->s[i];
			if (x->round == r) {
				samples++;
				cands += x->candidate_id != 0;
				passed += x->passed;
				for (int k = 0; k < KGB_LLM_NUSAGE; k++)
					u[k] += x->usage[k] > 0 ? x->usage[k] : 0;
				wall += x->wall_s;
				size_t k = 0;
				while (k < nseen && strcmp(seen[k], x->op) != 0)
					k++;
				if (k == nseen) {
					seen[nseen++] = x->op;
					ops++;
					bool any = false;
					for (size_t q = 0; q < G->ns && !any; q++)
						any = G->s[q].round == r && G->s[q].passed && strcmp(G->s[q].op, x->op) == 0;
					ops_passed += any;
				}
			}
		}
		free(seen);
		const char **sol = kgb_xcalloc(G->ns + 1, sizeof *sol);
		for (size_t i = 0; i < G->ns; i++) {
			if (G->s[i].round > r || !G->s[i].passed)
				continue;
			size_t k = 0;
			while (k < solved && strcmp(sol[k], G->s[i].op) != 0)
				k++;
			if (k == solved)
				sol[solved++] = G->s[i].op;
		}
		free(sol);
		if (json) {
			json_t *o = json_pack("{s:i,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:f}", "round", (int)r, "campaign_id",
			                      (json_int_t)camp, "operators", (int)ops, "samples", (int)samples, "candidates",
			                      (int)cands, "samples_passed", (int)passed, "operators_passed", (int)ops_passed,
			                      "solved", (int)solved, "wall_s", wall);
			json_t *ju = json_object();
			for (int k = 0; k < KGB_LLM_NUSAGE; k++)
				json_object_set_new(ju, usage_keys[k], json_integer(u[k]));
			json_object_set_new(o, "usage", ju);
			json_array_append_new(rows, o);
		} else {
			kgb_cli_table_cell(t, "%u", r);
			if (camp)
				kgb_cli_table_cell(t, "%llu", (unsigned long long)camp);
			else
				kgb_cli_table_cell(t, "-");
			kgb_cli_table_cell(t, "%u", ops);
			kgb_cli_table_cell(t, "%u", samples);
			kgb_cli_table_cell(t, "%u", cands);
			kgb_cli_table_cell(t, "%u", passed);
			kgb_cli_table_cell(t, "%u", ops_passed);
			kgb_cli_table_cell(t, "%u", solved);
			for (int k = 0; k < KGB_LLM_NUSAGE; k++)
				kgb_cli_table_cell(t, "%lld", (long long)u[k]);
			kgb_cli_table_cell(t, "%.1f", wall);
		}
	}
	if (json) {
		json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:o}", "run_id", (json_int_t)G->run_id, "method", vr->method,
		                      "model", vr->model, "api", vr->api, "base_url", vr->base_url, "rounds", rows);
		kgb_cli_json_print(stdout, o);
	} else {
		json_decref(rows);
		printf("run %llu: method %s, model %s, %s API at %s\n", (unsigned long long)G->run_id, vr->method, vr->model,
		       vr->api, vr->base_url);
		kgb_cli_table_print(t, stdout);
		printf("(OPS: operators asked in the round; PASSED: samples whose candidate passed every case; SOLVED:\n"
		       "operators solved by this round; token columns as the API reported them)\n");
	}
	kgb_cli_table_destroy(&t);
	kgb_wire_free(reply);
	return 0;
}

/* ---- the run's definition ---- */

/* The base URL without credentials: no user:password@, no query. Caller frees. */
static char *url_without_key(const char *url)
{
	const char *sch = strstr(url, "://");
	const char *host = sch ? sch + 3 : url;
	const char *slash = strchr(host, '/');
	const char *at = strchr(host, '@');
	char *out;
	if (at && (!slash || at < slash))
		out = kgb_xasprintf("%.*s%s", (int)(host - url), url, at + 1);
	else
		out = kgb_xstrdup(url);
	char *q = strchr(out, '?');
	if (q)
		*q = '\0';
	return out;
}

static json_t *params_json(gen_t *G)
{
	json_t *ops = json_array();
	for (size_t i = 0; i < G->nops; i++)
		json_array_append_new(ops, json_string(G->ops[i]));
	json_t *tm = json_object();
	static const char *const tn[] = {"system", "user", "format", "reflection"};
	for (int i = 0; i < KGB_GEN_NT; i++)
		json_object_set_new(tm, tn[i], json_string(G->tm.text[i]));
	return json_pack("{s:s,s:s,s:s,s:s,s:o,s:i,s:f,s:i,s:b,s:i,s:s,s:s,s:s,s:b,s:o}", "method", G->method, "model",
	                 G->model, "api", G->api_name, "base_url", G->base_url, "operators", ops, "samples",
	                 (int)G->nsamples, "temperature", G->temperature, "rounds", (int)G->rounds, "reflect", G->reflect,
	                 "max_tokens", (int)G->max_tokens, "format", kgb_gen_format_name(G->format), "platform",
	                 G->platform, "cases", G->cases, "timing", G->timing, "templates", tm);
}

/* Take the run's definition from stored params (kgb generate --resume RUN). */
static int params_load(gen_t *G, json_t *p)
{
	static const char *const tn[] = {"system", "user", "format", "reflection"};
	const char *fmt = json_string_value(json_object_get(p, "format"));
	json_t *ops = json_object_get(p, "operators"), *tm = json_object_get(p, "templates");
	G->method = json_string_value(json_object_get(p, "method"));
	G->model = json_string_value(json_object_get(p, "model"));
	G->api_name = json_string_value(json_object_get(p, "api"));
	G->base_url = json_string_value(json_object_get(p, "base_url"));
	G->platform = json_string_value(json_object_get(p, "platform"));
	G->cases = json_string_value(json_object_get(p, "cases"));
	if (!G->method || !G->model || !G->api_name || !G->base_url || !G->platform || !G->cases || !fmt ||
	    kgb_gen_format_parse(fmt) < 0 || !json_is_array(ops) || !json_is_object(tm))
		return -1;
	G->format = (kgb_gen_format_t)kgb_gen_format_parse(fmt);
	G->nsamples = (uint32_t)json_integer_value(json_object_get(p, "samples"));
	G->temperature = json_number_value(json_object_get(p, "temperature"));
	G->rounds = (uint32_t)json_integer_value(json_object_get(p, "rounds"));
	G->reflect = json_is_true(json_object_get(p, "reflect"));
	G->timing = json_is_true(json_object_get(p, "timing"));
	G->max_tokens = (uint32_t)json_integer_value(json_object_get(p, "max_tokens"));
	G->nops = json_array_size(ops);
	G->ops = kgb_xcalloc(G->nops + 1, sizeof *G->ops);
	for (size_t i = 0; i < G->nops; i++)
		G->ops[i] = kgb_xstrdup(json_string_value(json_array_get(ops, i)) ?: "");
	for (int i = 0; i < KGB_GEN_NT; i++) {
		const char *t = json_string_value(json_object_get(tm, tn[i]));
		if (!t)
			return -1;
		G->tm.text[i] = kgb_xstrdup(t);
		G->tm.origin[i] = kgb_xasprintf("the run's %s template", tn[i]);
	}
	return 0;
}

/* Operators from "a,b,c" or a dataset name; each checked against the catalog. */
static int parse_ops(gen_t *G, const char *list, const char *dataset)
{
	if (dataset) {
		unsigned mask = 0;
		if (kgb_dataset_parse(dataset, &mask) != 0) {
			fprintf(stderr, "kgb generate: --dataset: unknown dataset '%s'\n", dataset);
			return -1;
		}
		for (size_t i = 0; i < kgb_catalog_count(); i++) {
			const kgb_op_t *op = kgb_catalog_at(i);
			if (op->datasets & mask) {
				G->ops = kgb_xrealloc(G->ops, (G->nops + 1) * sizeof *G->ops);
				G->ops[G->nops++] = kgb_xstrdup(op->name);
			}
		}
	}
	if (list) {
		char *copy = kgb_xstrdup(list), *save = NULL;
		for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
			if (!kgb_catalog_find(t)) {
				fprintf(stderr, "kgb generate: --ops: unknown operator '%s' (see kgb ops)\n", t);
				free(copy);
				return -1;
			}
			bool dup = false;
			for (size_t i = 0; i < G->nops && !dup; i++)
				dup = strcmp(G->ops[i], t) == 0;
			if (!dup) {
				G->ops = kgb_xrealloc(G->ops, (G->nops + 1) * sizeof *G->ops);
				G->ops[G->nops++] = kgb_xstrdup(t);
			}
		}
		free(copy);
	}
	if (G->nops == 0) {
		fprintf(stderr, "kgb generate: no operator: give --ops LIST or --dataset NAME\n");
		return -1;
	}
	return 0;
}

/* --config FILE: a JSON object whose keys are the long options' names (strings,
 * numbers, booleans). The command line wins over it; it wins over the environment. */
static int load_config(const char *path, json_t **out)
{
	char err[256];
	size_t len;
	char *text = kgb_read_regular_file(path, 1 << 20, &len, err, sizeof err);
	if (!text) {
		fprintf(stderr, "kgb generate: --config %s: %s\n", path, err);
		return -1;
	}
	json_error_t je;
	*out = json_loadb(text, len, 0, &je);
	free(text);
	if (!json_is_object(*out)) {
		fprintf(stderr, "kgb generate: --config %s: line %d: %s\n", path, je.line,
		        *out ? "expected a JSON object" : je.text);
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	static const char *const known[] = {"api", "base-url", "model", "method", "api-key-env", "ops", "dataset",
	                                    "samples", "temperature", "rounds", "reflect", "max-tokens", "format",
	                                    "platform", "cases", "no-timing", "templates", "concurrency", "timeout",
	                                    "max-attempts", "backoff", "budget-tokens", "budget-usd", "price",
	                                    "state-dir", "poll", NULL};
	const char *k;
	json_t *v;
	json_object_foreach(*out, k, v)
	{
		size_t i = 0;
		while (known[i] && strcmp(known[i], k) != 0)
			i++;
		if (!known[i]) {
			fprintf(stderr, "kgb generate: --config %s: unknown key '%s'%s\n", path, k,
			        strcmp(k, "api-key") == 0 || strcmp(k, "api_key") == 0
			            ? " (a key is never kept in a file kgb reads into a run: name its variable with api-key-env)"
			            : "");
			json_decref(*out);
			*out = NULL;
			return -1;
		}
	}
	return 0;
}

static const char *cfg_str(json_t *cfg, const char *key, const char *cur)
{
	if (cur)
		return cur;
	json_t *v = json_object_get(cfg, key);
	return json_string_value(v);
}

static int cfg_num(json_t *cfg, const char *key, double *cur, bool given)
{
	json_t *v = json_object_get(cfg, key);
	if (given || !v)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0) {
		fprintf(stderr, "kgb generate: --config: %s: expected a number >= 0\n", key);
		return -1;
	}
	*cur = json_number_value(v);
	return 0;
}

static const char *env_or(const char *cur, const char *var)
{
	const char *e = getenv(var);
	return cur ? cur : (e && *e ? e : NULL);
}

/* kgb generate ... */
int kgb_cli_cmd_generate(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *api = NULL, *base_url = NULL, *model = NULL, *method = NULL, *key_env = NULL, *ops = NULL,
	           *dataset = NULL, *format = NULL, *platform = NULL, *cases = NULL, *templates = NULL, *state = NULL,
	           *config = NULL, *dump = NULL, *price = NULL;
	double samples = -1, temperature = -1, rounds = -1, max_tokens = -1, concurrency = -1, timeout = -1,
	       attempts = -1, backoff = -1, budget_tokens = -1, budget_usd = -1, poll = -1;
	uint64_t resume = 0, status = 0;
	bool reflect = false, no_timing = false, json = false, quiet = false, dry = false;
	const kgb_cli_opt_t opts[] = {
		{"api", 0, KGB_CLI_OPT_STRING, &api, "API", "openai (chat completions) or anthropic (messages); $KGB_LLM_API"},
		{"base-url", 0, KGB_CLI_OPT_STRING, &base_url, "URL", "the API's base, e.g. https://api.openai.com/v1; $KGB_LLM_BASE_URL"},
		{"model", 0, KGB_CLI_OPT_STRING, &model, "NAME", "the model; $KGB_LLM_MODEL"},
		{"method", 0, KGB_CLI_OPT_STRING, &method, "NAME", "the method's name in campaigns (default llm-MODEL)"},
		{"api-key-env", 0, KGB_CLI_OPT_STRING, &key_env, "VAR",
		 "the variable holding the key (default KGB_LLM_API_KEY, then OPENAI_API_KEY or ANTHROPIC_API_KEY)"},
		{"ops", 0, KGB_CLI_OPT_STRING, &ops, "LIST", "operators, comma-separated"},
		{"dataset", 0, KGB_CLI_OPT_STRING, &dataset, "NAME", "every operator of a dataset (aten, ms, mc, demo, ...)"},
		{"samples", 'n', KGB_CLI_OPT_DOUBLE, &samples, "N", "samples per operator and round (default 1)"},
		{"temperature", 't', KGB_CLI_OPT_DOUBLE, &temperature, "T", "sampling temperature (default 0)"},
		{"rounds", 'r', KGB_CLI_OPT_DOUBLE, &rounds, "R", "rounds; each asks again the operators not solved yet (default 1)"},
		{"reflect", 0, KGB_CLI_OPT_FLAG, &reflect, NULL, "put the previous answer and its failures into the next round's prompt"},
		{"max-tokens", 0, KGB_CLI_OPT_DOUBLE, &max_tokens, "N", "the answer's token limit (default 16384)"},
		{"format", 0, KGB_CLI_OPT_STRING, &format, "F", "opencl, cuda (a launch plan and kernels) or python (default opencl)"},
		{"platform", 0, KGB_CLI_OPT_STRING, &platform, "P", "the platform the rounds run on (default all)"},
		{"cases", 0, KGB_CLI_OPT_STRING, &cases, "C", "all or smoke (each operator's smoke subset; default all)"},
		{"no-timing", 0, KGB_CLI_OPT_FLAG, &no_timing, NULL, "rounds check correctness only"},
		{"templates", 0, KGB_CLI_OPT_STRING, &templates, "DIR", "prompt templates that replace the built-in ones"},
		{"dump-templates", 0, KGB_CLI_OPT_STRING, &dump, "DIR", "write the built-in templates into DIR and exit"},
		{"config", 0, KGB_CLI_OPT_STRING, &config, "FILE", "options as a JSON object (keys: the long option names)"},
		{"concurrency", 'j', KGB_CLI_OPT_DOUBLE, &concurrency, "N", "requests in flight at once (default 4)"},
		{"request-timeout", 0, KGB_CLI_OPT_DOUBLE, &timeout, "S", "seconds per attempt (default 600)"},
		{"max-attempts", 0, KGB_CLI_OPT_DOUBLE, &attempts, "N", "attempts per sample on 429, 5xx, timeouts, bad bodies (default 6)"},
		{"backoff", 0, KGB_CLI_OPT_DOUBLE, &backoff, "S", "first retry's backoff, doubled per attempt up to 60 s (default 1)"},
		{"budget-tokens", 0, KGB_CLI_OPT_DOUBLE, &budget_tokens, "N", "stop asking once the method has spent N tokens"},
		{"budget-usd", 0, KGB_CLI_OPT_DOUBLE, &budget_usd, "X", "stop asking once the method has cost X at --price"},
		{"price", 0, KGB_CLI_OPT_STRING, &price, "IN,OUT,CW,CR", "prices per million input, output, cache-write, cache-read tokens"},
		{"state-dir", 0, KGB_CLI_OPT_STRING, &state, "DIR", "where the answer journal lives (default $KGB_CACHE_DIR/generate)"},
		{"poll", 0, KGB_CLI_OPT_DOUBLE, &poll, "S", "seconds between checks of a round's campaign (default 1)"},
		{"resume", 0, KGB_CLI_OPT_UINT, &resume, "RUN", "go on with run RUN as it was defined"},
		{"status", 0, KGB_CLI_OPT_UINT, &status, "RUN", "per round: operators, samples, passes, tokens; then exit"},
		{"json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "--status as JSON"},
		{"dry-run", 0, KGB_CLI_OPT_FLAG, &dry, NULL, "print the first prompt and the run's parameters; ask nothing"},
		{"quiet", 'q', KGB_CLI_OPT_FLAG, &quiet, NULL, "no progress lines"},
	};
	const kgb_cli_spec_t spec = {
		.name = "generate",
		.usage = "--ops LIST|--dataset NAME [--api API --base-url URL --model NAME] [-n N] [-t T] [-r R] [--reflect]\n"
		         "       [--format F] [--budget-tokens N] ... | --resume RUN | --status RUN",
		.summary = "Ask a model (an OpenAI-compatible or Anthropic API) for each operator's kernel, n\n"
		           "samples per round; each round is a campaign, and the next round asks again only the\n"
		           "operators no sample has solved, with --reflect showing the previous answer and its\n"
		           "failing cases. Every answer is on record (tokens, time, code, verdicts). Killed,\n"
		           "the same command, or --resume RUN, goes on without asking any answered sample again.\n"
		           "The key comes from the environment only. See docs/methods.md.",
		KGB_CLI_OPTS(opts),
		.min_pos = 0,
		.max_pos = 0,
	};
	gen_t G0, *G = &G0;
	json_t *cfg = NULL;
	char err[512];
	Kgb__Envelope *reply = NULL;
	int rc = kgb_cli_parse_args(&spec, argc, argv, g, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	memset(G, 0, sizeof *G);
	G->g = g;
	G->quiet = quiet;
	if (dump) {
		if (kgb_gen_templates_dump(dump, err, sizeof err) != 0) {
			fprintf(stderr, "kgb generate: --dump-templates: %s\n", err);
			return KGB_CLI_EXIT_USAGE;
		}
		printf("templates written to %s\n", dump);
		return KGB_CLI_OK;
	}
	G->cl = kgb_cli_client_new(g->endpoint, g->timeout_s, err, sizeof err);
	if (!G->cl) {
		fprintf(stderr, "kgb generate: %s\n", err);
		return KGB_CLI_EXIT_NOCOORD;
	}
	if (status) {
		G->run_id = status;
		rc = print_status(G, json);
		goto out;
	}
	if (config && load_config(config, &cfg) != 0) {
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	/* operational options: command line, config, defaults */
	if (cfg_num(cfg, "concurrency", &concurrency, concurrency >= 0) || cfg_num(cfg, "timeout", &timeout, timeout >= 0) ||
	    cfg_num(cfg, "max-attempts", &attempts, attempts >= 0) || cfg_num(cfg, "backoff", &backoff, backoff >= 0) ||
	    cfg_num(cfg, "budget-tokens", &budget_tokens, budget_tokens >= 0) ||
	    cfg_num(cfg, "budget-usd", &budget_usd, budget_usd >= 0) || cfg_num(cfg, "poll", &poll, poll >= 0) ||
	    cfg_num(cfg, "samples", &samples, samples >= 0) || cfg_num(cfg, "temperature", &temperature, temperature >= 0) ||
	    cfg_num(cfg, "rounds", &rounds, rounds >= 0) || cfg_num(cfg, "max-tokens", &max_tokens, max_tokens >= 0)) {
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	reflect = reflect || json_is_true(json_object_get(cfg, "reflect"));
	no_timing = no_timing || json_is_true(json_object_get(cfg, "no-timing"));
	price = cfg_str(cfg, "price", price);
	state = cfg_str(cfg, "state-dir", state);
	key_env = cfg_str(cfg, "api-key-env", key_env);
	G->llm.concurrency = concurrency >= 1 ? (uint32_t)concurrency : 4;
	G->llm.timeout_s = timeout > 0 ? timeout : 600;
	G->llm.max_attempts = attempts >= 1 ? (uint32_t)attempts : 6;
	G->llm.backoff_s = backoff >= 0 ? backoff : 1;
	G->llm.backoff_cap_s = 60;
	G->budget_tokens = budget_tokens > 0 ? (uint64_t)budget_tokens : 0;
	G->budget_usd = budget_usd > 0 ? budget_usd : 0;
	G->poll_s = poll > 0 ? poll : 1;
	if (price && sscanf(price, "%lf,%lf,%lf,%lf", &G->price[0], &G->price[1], &G->price[2], &G->price[3]) != 4) {
		fprintf(stderr, "kgb generate: --price: '%s' is not four prices IN,OUT,CACHE_WRITE,CACHE_READ\n", price);
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	if (G->budget_usd > 0 && !price) {
		fprintf(stderr, "kgb generate: --budget-usd needs --price\n");
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	char *cache_state = NULL;
	if (!state) {
		const char *cd = getenv("KGB_CACHE_DIR"), *home = getenv("HOME");
		cache_state = cd && *cd ? kgb_xasprintf("%s/generate", cd)
		                        : kgb_xasprintf("%s/.cache/kgb/generate", home && *home ? home : "/tmp");
		if (!cd || !*cd) {
			char *parent = kgb_xasprintf("%s/.cache", home && *home ? home : "/tmp");
			mkdir(parent, 0700);
			free(parent);
			parent = kgb_xasprintf("%s/.cache/kgb", home && *home ? home : "/tmp");
			mkdir(parent, 0700);
			free(parent);
		} else {
			mkdir(cd, 0700);
		}
		state = cache_state;
	}
	G->state_dir = state;

	Kgb__GenOpenRequest oq = KGB__GEN_OPEN_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	char *params_text = NULL, *method_buf = NULL, *clean_url = NULL;
	char key[65];
	if (resume) {
		oq.run_id = resume;
	} else {
		api = env_or(cfg_str(cfg, "api", api), "KGB_LLM_API");
		base_url = env_or(cfg_str(cfg, "base-url", base_url), "KGB_LLM_BASE_URL");
		model = env_or(cfg_str(cfg, "model", model), "KGB_LLM_MODEL");
		method = cfg_str(cfg, "method", method);
		format = cfg_str(cfg, "format", format);
		platform = cfg_str(cfg, "platform", platform);
		cases = cfg_str(cfg, "cases", cases);
		templates = cfg_str(cfg, "templates", templates);
		ops = cfg_str(cfg, "ops", ops);
		dataset = cfg_str(cfg, "dataset", dataset);
		const char *missing = !api ? "--api (or $KGB_LLM_API)" : !base_url ? "--base-url (or $KGB_LLM_BASE_URL)"
		                      : !model ? "--model (or $KGB_LLM_MODEL)" : NULL;
		if (missing) {
			fprintf(stderr, "kgb generate: missing %s\n", missing);
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		if (strcmp(api, "openai") != 0 && strcmp(api, "anthropic") != 0) {
			fprintf(stderr, "kgb generate: --api: '%s' is not openai or anthropic\n", api);
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		if (strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0) {
			fprintf(stderr, "kgb generate: --base-url: '%s' is not an http:// or https:// URL\n", base_url);
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		int f = kgb_gen_format_parse(format ? format : "opencl");
		if (f < 0) {
			fprintf(stderr, "kgb generate: --format: '%s' is not opencl, cuda or python\n", format);
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		G->format = (kgb_gen_format_t)f;
		if (cases && strcmp(cases, "all") != 0 && strcmp(cases, "smoke") != 0) {
			fprintf(stderr, "kgb generate: --cases: '%s' is not all or smoke\n", cases);
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		if (parse_ops(G, ops, dataset) != 0 ||
		    kgb_gen_templates_load(templates, G->format, &G->tm, err, sizeof err) != 0) {
			if (err[0] && !G->tm.text[0] && G->nops)
				fprintf(stderr, "kgb generate: --templates: %s\n", err);
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		if (samples == 0 || rounds == 0 || max_tokens == 0) {
			fprintf(stderr, "kgb generate: --samples, --rounds and --max-tokens must be at least 1\n");
			rc = KGB_CLI_EXIT_USAGE;
			goto out_state;
		}
		clean_url = url_without_key(base_url);
		if (!method) {
			method_buf = kgb_xasprintf("llm-%s", model);
			method = method_buf;
		}
		G->api_name = api;
		G->base_url = clean_url;
		G->model = model;
		G->method = method;
		G->platform = platform ? platform : "all";
		G->cases = cases ? cases : "all";
		G->nsamples = samples > 0 ? (uint32_t)samples : 1;
		G->rounds = rounds > 0 ? (uint32_t)rounds : 1;
		G->max_tokens = max_tokens > 0 ? (uint32_t)max_tokens : 16384;
		G->temperature = temperature >= 0 ? temperature : 0;
		G->reflect = reflect;
		G->timing = !no_timing;
		G->params = params_json(G);
		params_text = json_dumps(G->params, JSON_COMPACT | JSON_SORT_KEYS);
		kgb_sha256_hex(params_text, strlen(params_text), key);
		oq.run_key = key;
		oq.method = (char *)G->method;
		oq.model = (char *)G->model;
		oq.api = (char *)G->api_name;
		oq.base_url = clean_url;
		oq.params_json = params_text;
		oq.owner = (char *)kgb_cli_user();
		if (dry) {
			char *sys = NULL, *user = NULL;
			rc = build_prompt(G, G->ops[0], 0, 0, &sys, &user);
			if (rc == 0) {
				printf("run key %s\n--- system ---\n%s\n--- user (%s) ---\n%s\n", key, sys, G->ops[0], user);
				char *req = kgb_llm_request_params(&(kgb_llm_config_t){.api = strcmp(api, "anthropic") == 0,
				                                                       .model = model,
				                                                       .temperature = G->temperature,
				                                                       .max_tokens = G->max_tokens});
				printf("--- request ---\n%s\n", req);
				free(req);
			}
			free(sys);
			free(user);
			goto out_state;
		}
	}
	env.body_case = KGB__ENVELOPE__BODY_GEN_OPEN;
	env.gen_open = &oq;
	/* the run's key lives in oq until the call returns */
	rc = call(G, &env, KGB__ENVELOPE__BODY_GEN_OPEN_REPLY, &reply);
	if (rc != 0)
		goto out_state;
	const Kgb__GenOpenReply *orp = reply->gen_open_reply;
	if (!orp->ok) {
		fprintf(stderr, "kgb generate: %s\n", orp->error);
		rc = KGB_CLI_EXIT_REFUSED;
		goto out_state;
	}
	G->run_id = orp->run_id;
	if (resume) {
		json_decref(G->params);
		G->params = json_loads(orp->params_json, 0, NULL);
		if (!G->params || params_load(G, G->params) != 0) {
			fprintf(stderr, "kgb generate: run %llu: its stored parameters are not a run's\n",
			        (unsigned long long)resume);
			rc = KGB_CLI_EXIT_REFUSED;
			goto out_state;
		}
	}
	usage_from(orp->method_usage, G->spent);
	for (int k = 0; k < KGB_LLM_NUSAGE; k++)
		G->spent[k] = KGB_MAX(G->spent[k], 0);
	G->round_campaign = kgb_xcalloc(G->rounds + 1, sizeof *G->round_campaign);
	for (size_t i = 0; i < orp->n_rounds; i++)
		if (orp->rounds[i]->round < G->rounds)
			G->round_campaign[orp->rounds[i]->round] = orp->rounds[i]->campaign_id;
	printf("run %llu (%s): method %s, model %s, %zu operators, %u samples, %u rounds\n",
	       (unsigned long long)G->run_id, orp->created ? "new" : "resumed", G->method, G->model, G->nops, G->nsamples,
	       G->rounds);
	fflush(stdout);
	/* the key: from the environment only, never stored or shown */
	const char *kv = key_env ? key_env : getenv("KGB_LLM_API_KEY") ? "KGB_LLM_API_KEY"
	                                   : strcmp(G->api_name, "anthropic") == 0 ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
	G->llm.api = strcmp(G->api_name, "anthropic") == 0 ? KGB_LLM_ANTHROPIC : KGB_LLM_OPENAI;
	G->llm.base_url = base_url ? base_url : G->base_url; /* with its credentials, if any */
	G->llm.api_key = getenv(kv);
	G->llm.model = G->model;
	G->llm.temperature = G->temperature;
	G->llm.max_tokens = G->max_tokens;
	if (key_env && !G->llm.api_key) {
		fprintf(stderr, "kgb generate: --api-key-env: $%s is not set\n", key_env);
		rc = KGB_CLI_EXIT_USAGE;
		goto out_state;
	}
	rc = journal_open(G);
	if (rc == 0)
		rc = load_verdicts(G, -1, NULL);
	/* rounds submitted but not recorded (found by name) are recorded now */
	for (uint32_t r = 0; rc == 0 && r < G->rounds; r++) {
		if (G->round_campaign[r])
			rc = record_round(G, r, G->round_campaign[r]);
	}
	bool stop = false;
	for (uint32_t r = 0; rc == 0 && r < G->rounds && !stop; r++)
		rc = run_round(G, r, &stop);
	if (rc == 0)
		rc = print_status(G, false);
out_state:
	free(cache_state);
	free(params_text);
	free(method_buf);
	free(clean_url);
out:
	kgb_wire_free(reply);
	if (G->journal)
		fclose(G->journal);
	free(G->journal_path);
	free(G->round_campaign);
	free_todo(G);
	free_samples(G);
	for (size_t i = 0; i < G->nops; i++)
		free(G->ops[i]);
	free(G->ops);
	kgb_gen_templates_release(&G->tm);
	json_decref(G->params);
	json_decref(cfg);
	kgb_cli_client_destroy(&G->cl);
	return rc;
}
