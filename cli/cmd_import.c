/* kgb import kernelgenbench DIR: a KernelGenBench run directory as a kgb manifest
 * (docs/kernelgenbench-layout.md). One method per run; one python candidate per
 * operator the run produced a module for and kgb's catalog knows; tokens and
 * generation seconds per operator where the run records them. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agentlog.h"
#include "catalog.h"
#include "cli.h"
#include "util.h"

#define IMPORT_MAX_FILE (64u << 20)

typedef struct imp_op {
	char op[128];              /* kgb's operator name */
	char path[PATH_MAX];       /* the module */
	double tokens;             /* -1: unknown */
	double seconds;            /* -1: unknown */
	kgb_usage_t usage;         /* from the agent's log, when has_usage */
	bool has_usage;
	kgb_agentlog_version_t *versions;  /* the verify answers in the agent's log */
	size_t nversions;
	kgb_usage_t after;         /* the log's tokens after the last answer */
	int round;                 /* LLM track with --rounds: the round it was generated in */
} imp_op_t;

typedef struct imp {
	imp_op_t *ops;
	size_t n, cap;
	char *skipped;             /* names not in the catalog, for one warning line */
	bool rounds;               /* --rounds: a candidate per operator and round */
} imp_t;

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (without . and ..), sorted. Returns the count or -1 with err. */
static int list_dir(const char *dir, char ***names, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d)
		return kgb_err(err, errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
	size_t n = 0, cap = 16;
	char **v = kgb_xcalloc(cap, sizeof *v);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap *= 2;
			v = kgb_xrealloc(v, cap * sizeof *v);
		}
		v[n++] = kgb_xstrdup(de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof *v, cmp_str);
	*names = v;
	return (int)n;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A JSON file, or NULL with err naming it (absent files are not errors when
 * optional: *absent is set instead). */
static json_t *load_json(const char *path, bool optional, bool *absent, char *err, size_t errlen)
{
	if (absent)
		*absent = false;
	if (optional && !is_file(path)) {
		if (absent)
			*absent = true;
		return NULL;
	}
	char e[256];
	size_t len = 0;
	char *text = kgb_read_regular_file(path, IMPORT_MAX_FILE, &len, e, sizeof e);
	if (!text) {
		kgb_err(err, errlen, "%s: cannot read: %s", path, e);
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(text);
	if (!j)
		kgb_err(err, errlen, "%s: not valid JSON: line %d: %s", path, je.line, je.text);
	return j;
}

/* kgb's operator for a KernelGenBench name: "aten::add", "aten__add", "vllm13__rms_norm",
 * "cublas::cublasSgemm_v2" or a bare name. Writes it into out. */
static void kgb_name(const char *kgb, char *out, size_t n)
{
	const char *p = strstr(kgb, "::");
	if (p) {
		p += 2;
	} else if ((p = strstr(kgb, "__")) && p > kgb) {
		/* a namespace prefix: letters and digits before the first "__" */
		bool ns = true;
		for (const char *q = kgb; q < p; q++)
			if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
				ns = false;
		p = ns ? p + 2 : kgb;
	} else {
		p = kgb;
	}
	snprintf(out, n, "%s", p);
}

static imp_op_t *find_op(imp_t *im, const char *op)
{
	for (size_t i = 0; i < im->n; i++)
		if (strcmp(im->ops[i].op, op) == 0)
			return &im->ops[i];
	return NULL;
}

/* Add (or replace) the module of operator kgb_op (a KernelGenBench name). NULL when
 * the catalog does not know it. */
static imp_op_t *add_op(imp_t *im, const char *kgbname, const char *path)
{
	char op[128];
	kgb_name(kgbname, op, sizeof op);
	if (!kgb_catalog_find(op)) {
		size_t l = im->skipped ? strlen(im->skipped) : 0;
		im->skipped = kgb_xrealloc(im->skipped, l + strlen(kgbname) + 3);
		snprintf(im->skipped + l, strlen(kgbname) + 3, "%s%s", l ? ", " : "", kgbname);
		return NULL;
	}
	imp_op_t *o = im->rounds ? NULL : find_op(im, op);
	if (!o) {
		if (im->n == im->cap) {
			im->cap = im->cap ? 2 * im->cap : 32;
			im->ops = kgb_xrealloc(im->ops, im->cap * sizeof *im->ops);
		}
		o = &im->ops[im->n++];
		memset(o, 0, sizeof *o);
		snprintf(o->op, sizeof o->op, "%s", op);
		o->tokens = -1;
		o->seconds = -1;
	}
	snprintf(o->path, sizeof o->path, "%s", path);
	return o;
}

/* A number field of obj: returns 1 and *v, 0 when absent or null, -1 with err when
 * present but not a number >= 0. */
static int num_field(json_t *obj, const char *key, const char *file, const char *where, double *v, char *err,
                     size_t errlen)
{
	json_t *x = json_object_get(obj, key);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x) || json_number_value(x) < 0) {
		char *t = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
		kgb_err(err, errlen, "%s: %s.%s: expected a number >= 0, got %.80s", file, where, key, t ? t : "?");
		free(t);
		return -1;
	}
	*v = json_number_value(x);
	return 1;
}

/* ---------------------------------------------------------------- agent track ---- */

/* The token usage of an agent's own log in workspaces/<name>/: Claude Code's
 * cc_output.jsonl or OpenCode's oc_output.json (agentlog.h). Returns 1 and *u, 0 when
 * there is no log, -1 with err (a malformed usage, naming the file and the line).
 * Lines that are not JSON (the agent's other output) are reported on stderr with
 * their file and line. */
static int log_usage(const char *ws, imp_op_t *o, char *err, size_t errlen)
{
	char p[2 * PATH_MAX];
	kgb_agentlog_kind_t kind = KGB_AGENTLOG_CLAUDE;
	snprintf(p, sizeof p, "%s/cc_output.jsonl", ws);
	if (!is_file(p)) {
		kind = KGB_AGENTLOG_OPENCODE;
		snprintf(p, sizeof p, "%s/oc_output.json", ws);
		if (!is_file(p))
			return 0;
	}
	kgb_agentlog_t lg;
	if (kgb_agentlog_read(p, kind, &lg, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < lg.skipped && i < KGB_AGENTLOG_NOTES; i++)
		fprintf(stderr, "kgb import: %s\n", lg.notes[i]);
	if (lg.skipped > KGB_AGENTLOG_NOTES)
		fprintf(stderr, "kgb import: %s: %u more lines that are not JSON events skipped\n", p,
		        lg.skipped - KGB_AGENTLOG_NOTES);
	o->usage = lg.usage;
	o->versions = lg.versions;   /* taken over */
	o->nversions = lg.nversions;
	o->after = lg.after;
	return 1;
}

/* The value of a top-level "KEY: value" line of a YAML file into out (unchanged when
 * the file or the line is absent). */
static void yaml_value(const char *path, const char *key, char *out, size_t n)
{
	if (!is_file(path))
		return;
	char e[128];
	size_t len, kl = strlen(key);
	char *y = kgb_read_regular_file(path, IMPORT_MAX_FILE, &len, e, sizeof e);
	for (char *line = y; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1;
			v += strspn(v, " \t\"'");
			size_t vl = strcspn(v, " \t\"'#\r");
			if (vl > 0 && vl < n) {
				memcpy(out, v, vl);
				out[vl] = 0;
			}
			break;
		}
		line = next;
	}
	free(y);
}

static int import_agent(const char *dir, imp_t *im, char *method, size_t mlen, char *err, size_t errlen)
{
	char kdir[PATH_MAX], p[PATH_MAX + 300];
	snprintf(kdir, sizeof kdir, "%s/kernels", dir);
	char **names = NULL;
	int n = list_dir(kdir, &names, err, errlen);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		if (l < 4 || strcmp(names[i] + l - 3, ".py") != 0)
			continue;
		names[i][l - 3] = 0;
		snprintf(p, sizeof p, "%s/%s.py", kdir, names[i]);
		imp_op_t *o = add_op(im, names[i], p);
		if (!o)
			continue;
		snprintf(p, sizeof p, "%s/workspaces/%s", dir, names[i]);
		int r = log_usage(p, o, err, errlen);
		if (r < 0) {
			free_list(names, n);
			return -1;
		}
		o->has_usage = r > 0;
		if (o->has_usage)
			o->tokens = kgb_usage_total(&o->usage);
	}
	free_list(names, n);

	/* progress.json: duration and the method's own token count per operator */
	snprintf(p, sizeof p, "%s/progress.json", dir);
	bool absent;
	json_t *pj = load_json(p, true, &absent, err, errlen);
	if (!pj && !absent)
		return -1;
	int rc = 0;
	if (pj) {
		json_t *ops = json_object_get(pj, "operators");
		if (ops && !json_is_object(ops)) {
			json_decref(pj);
			return kgb_err(err, errlen, "%s: operators: expected an object keyed by operator", p);
		}
		const char *key;
		json_t *e;
		json_object_foreach(ops, key, e) {
			char op[128], where[200];
			kgb_name(key, op, sizeof op);
			imp_op_t *o = find_op(im, op);
			if (!o)
				continue;
			if (!json_is_object(e)) {
				rc = kgb_err(err, errlen, "%s: operators.%s: expected an object", p, key);
				break;
			}
			snprintf(where, sizeof where, "operators.%s", key);
			double v;
			int r = num_field(e, "duration_seconds", p, where, &v, err, errlen);
			if (r < 0) {
				rc = -1;
				break;
			}
			if (r > 0)
				o->seconds = v;
			json_t *tu = json_object_get(e, "token_usage");
			if (tu && !json_is_null(tu)) {
				if (!json_is_object(tu)) {
					rc = kgb_err(err, errlen, "%s: %s.token_usage: expected an object", p, where);
					break;
				}
				snprintf(where, sizeof where, "operators.%s.token_usage", key);
				r = num_field(tu, "total", p, where, &v, err, errlen);
				if (r < 0) {
					rc = -1;
					break;
				}
				if (r > 0 && v > 0) {
					o->tokens = v;   /* the method's own count wins over the log's */
					o->has_usage = false;
				}
			}
		}
		json_decref(pj);
	}
	if (rc != 0)
		return rc;
	/* the method: config.yaml's "method:" line, else the directory's name */
	snprintf(p, sizeof p, "%s/config.yaml", dir);
	if (!*method)
		yaml_value(p, "method", method, mlen);
	return 0;
}

/* ------------------------------------------------------------------ LLM track ---- */

/* round_<k>/<ns>::<op>.py per round, each round's generation_summary.json, and
 * pass_at_k_results.json (the round each operator first passed in). The module kept
 * per operator is the one of its first passing round, else of its last round; the
 * tokens and seconds the summaries record (when they do) are summed over the rounds
 * up to that one. */
static int import_llm(const char *dir, imp_t *im, char *method, size_t mlen, char *err, size_t errlen)
{
	char p[PATH_MAX + 64];
	char **names = NULL;
	int n = list_dir(dir, &names, err, errlen);
	if (n < 0)
		return -1;
	int rc = 0;
	/* rounds in numeric order */
	int maxr = -1;
	for (int i = 0; i < n; i++) {
		int k;
		char tail;
		if (sscanf(names[i], "round_%d%c", &k, &tail) == 1 && k >= 0 && k < 100000 && k > maxr)
			maxr = k;
	}
	json_t *res = NULL;
	snprintf(p, sizeof p, "%s/pass_at_k_results.json", dir);
	bool absent;
	res = load_json(p, true, &absent, err, errlen);
	if (!res && !absent) {
		free_list(names, n);
		return -1;
	}
	json_t *details = json_object_get(res, "operator_details");
	if (res && details && !json_is_object(details)) {
		rc = kgb_err(err, errlen, "%s: operator_details: expected an object keyed by operator", p);
		goto out;
	}
	/* per round: the module files, then the summary's counts */
	for (int r = 0; r <= maxr && rc == 0; r++) {
		char rd[PATH_MAX];
		snprintf(rd, sizeof rd, "%s/round_%d", dir, r);
		if (!is_dir(rd))
			continue;
		char **files = NULL;
		int nf = list_dir(rd, &files, err, errlen);
		if (nf < 0) {
			rc = -1;
			break;
		}
		json_t *sum = NULL;
		snprintf(p, sizeof p, "%s/generation_summary.json", rd);
		sum = load_json(p, true, &absent, err, errlen);
		if (!sum && !absent) {
			free_list(files, nf);
			rc = -1;
			break;
		}
		json_t *results = json_object_get(sum, "results");
		if (sum && !json_is_array(results)) {
			json_decref(sum);
			free_list(files, nf);
			rc = kgb_err(err, errlen, "%s: results: expected a list", p);
			break;
		}
		for (int i = 0; i < nf && rc == 0; i++) {
			size_t l = strlen(files[i]);
			if (l < 4 || strcmp(files[i] + l - 3, ".py") != 0 || strncmp(files[i], "test_", 5) == 0)
				continue;
			files[i][l - 3] = 0;
			char fp[PATH_MAX + 160];
			snprintf(fp, sizeof fp, "%s/%s.py", rd, files[i]);
			/* an operator that passed earlier keeps its passing module (with --rounds
			 * every round's module is a candidate of its own) */
			json_t *d = json_object_get(details, files[i]);
			json_t *fpr = json_object_get(d, "first_pass_round");
			if (!im->rounds && json_is_integer(fpr) && json_integer_value(fpr) < r)
				continue;
			imp_op_t *o = add_op(im, files[i], fp);
			if (!o)
				continue;
			o->round = r;
			size_t j;
			json_t *e;
			json_array_foreach(results, j, e) {
				const char *opn = json_string_value(json_object_get(e, "operator"));
				if (!opn || strcmp(opn, files[i]) != 0)
					continue;
				char where[64];
				snprintf(where, sizeof where, "results[%zu]", j);
				double v;
				static const char *const tk[] = { "tokens", "total_tokens" };
				for (size_t t = 0; t < KGB_ARRAY_LEN(tk) && rc == 0; t++) {
					int q = num_field(e, tk[t], p, where, &v, err, errlen);
					if (q < 0)
						rc = -1;
					else if (q > 0)
						o->tokens = (o->tokens < 0 ? 0 : o->tokens) + v;
				}
				static const char *const sk[] = { "gen_seconds", "duration_seconds" };
				for (size_t t = 0; t < KGB_ARRAY_LEN(sk) && rc == 0; t++) {
					int q = num_field(e, sk[t], p, where, &v, err, errlen);
					if (q < 0)
						rc = -1;
					else if (q > 0)
						o->seconds = (o->seconds < 0 ? 0 : o->seconds) + v;
				}
			}
		}
		json_decref(sum);
		free_list(files, nf);
	}
	if (rc == 0 && !*method) {
		snprintf(p, sizeof p, "%s/args.json", dir);
		json_t *a = load_json(p, true, &absent, err, errlen);
		if (!a && !absent) {
			rc = -1;
			goto out;
		}
		const char *mn = json_string_value(json_object_get(a, "model_name"));
		if (mn && strlen(mn) + 5 < mlen)
			snprintf(method, mlen, "llm-%s", mn);
		json_decref(a);
	}
out:
	json_decref(res);
	free_list(names, n);
	return rc;
}

/* ------------------------------------------------------------------ the manifest ---- */

/* A method name from text: letters, digits and _ - . + kept, anything else '-'. */
static void clean_name(char *s)
{
	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-' || *p == '.' || *p == '+'))
			*p = '-';
}

static void imp_free(imp_t *im)
{
	for (size_t i = 0; i < im->n; i++)
		free(im->ops[i].versions);
	free(im->ops);
	free(im->skipped);
}

static int cmp_op(const void *a, const void *b)
{
	const imp_op_t *x = a, *y = b;
	int c = strcmp(x->op, y->op);
	return c ? c : (x->round > y->round) - (x->round < y->round);
}

/* A candidate's "usage" (the samples contract: docs/candidate-format.md). */
static json_t *usage_json(const kgb_usage_t *u)
{
	json_t *j = json_pack("{s:I,s:I,s:I,s:I}", "input", (json_int_t)llround(u->input), "output",
	                      (json_int_t)llround(u->output), "cache_write", (json_int_t)llround(u->cache_write),
	                      "cache_read", (json_int_t)llround(u->cache_read));
	if (u->has_reasoning)
		json_object_set_new(j, "reasoning", json_integer((json_int_t)llround(u->reasoning)));
	return j;
}

/* --versions: one candidate per kgb verify answer in the operator's agent log, as the
 * coordinator stored it (the verify campaign's manifest), with the round (the answer's
 * place, 0 the first) and the tokens spent since the previous answer; those after the
 * last answer go to the last version. Appends to cands; returns 0 or an exit code. */
static int add_versions(kgb_cli_global_t *g, const imp_op_t *o, const char *model, json_t *cands)
{
	for (size_t k = 0; k < o->nversions; k++) {
		char *mj = NULL;
		int rc = kgb_cli_fetch_manifest(g, "import", o->versions[k].campaign_id, &mj, NULL);
		if (rc != 0)
			return rc;
		json_error_t je;
		json_t *root = json_loads(mj, 0, &je);
		free(mj);
		json_t *c = json_array_get(json_object_get(json_array_get(json_object_get(root, "methods"), 0), "candidates"), 0);
		if (!json_is_object(c) || !json_is_string(json_object_get(c, "operator")) ||
		    strcmp(json_string_value(json_object_get(c, "operator")), o->op) != 0) {
			fprintf(stderr, "kgb import: %s: campaign %llu (version %zu in the agent's log) is not a kgb verify of %s\n",
			        o->op, o->versions[k].campaign_id, k, o->op);
			json_decref(root);
			return KGB_CLI_EXIT_USAGE;
		}
		c = json_deep_copy(c);
		json_decref(root);
		json_object_del(c, "cases");  /* the dev cases: scoring runs every case */
		kgb_usage_t u = o->versions[k].usage;
		if (k + 1 == o->nversions) {
			u.input += o->after.input;
			u.output += o->after.output;
			u.cache_write += o->after.cache_write;
			u.cache_read += o->after.cache_read;
			u.reasoning += o->after.reasoning;
		}
		json_object_set_new(c, "tokens", json_real(kgb_usage_total(&u)));
		json_object_set_new(c, "gen_seconds", json_real(0));
		json_object_set_new(c, "round", json_integer((json_int_t)k));
		json_object_set_new(c, "usage", usage_json(&u));
		if (model)
			json_object_set_new(c, "model", json_string(model));
		json_array_append_new(cands, c);
	}
	return 0;
}

int kgb_cli_cmd_import(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *outpath = NULL, *mname = NULL;
	bool versions = false, rounds = false;
	const kgb_cli_opt_t opts[] = {
		{ "output", 'o', KGB_CLI_OPT_STRING, &outpath, "FILE",
		  "write the manifest to FILE (module paths relative to it) instead of stdout (modules inline)" },
		{ "method", 0, KGB_CLI_OPT_STRING, &mname, "NAME",
		  "the method's name (default: config.yaml's method, the LLM's model, or the directory's name)" },
		{ "versions", 0, KGB_CLI_OPT_FLAG, &versions, NULL,
		  "agent track: one candidate per kgb verify answer in the agent's log, read from the coordinator" },
		{ "rounds", 0, KGB_CLI_OPT_FLAG, &rounds, NULL,
		  "LLM track: every round's module as a candidate of its own (\"round\": k), with that round's tokens "
		  "and seconds" },
	};
	const kgb_cli_spec_t spec0 = {
		.name = "import",
		.usage = "kernelgenbench DIR [-o FILE] [--method NAME] [--versions] [--rounds]",
		.summary = "Turn a KernelGenBench run directory (agent track: kernels/, workspaces/,\n"
		           "progress.json; LLM track: round_<k>/, pass_at_k_results.json) into a kgb\n"
		           "manifest: one method, one python candidate per operator kgb knows, with\n"
		           "tokens and generation seconds where the run records them.",
		KGB_CLI_OPTS(opts),
		.min_pos = 2,
		.max_pos = 2,
	};
	char *pos[2];
	int npos = 0;
	char err[1024];
	int r = kgb_cli_parse_args(&spec0, argc, argv, g, pos, &npos, NULL, 0);
	if (r >= 0)
		return r;
	if (strcmp(pos[0], "kernelgenbench") != 0) {
		fprintf(stderr, "kgb import: unknown format '%s' (known: kernelgenbench)\n", pos[0]);
		return KGB_CLI_EXIT_USAGE;
	}
	const char *dir = pos[1];
	char method[128] = "", model[128] = "";
	if (mname)
		snprintf(method, sizeof method, "%s", mname);
	imp_t im = { 0 };
	char p[PATH_MAX + 16];
	int rc;
	snprintf(p, sizeof p, "%s/kernels", dir);
	if (!is_dir(dir)) {
		fprintf(stderr, "kgb import: %s: not a directory\n", dir);
		return KGB_CLI_EXIT_USAGE;
	}
	bool agent = is_dir(p);
	if (agent && rounds) {
		fprintf(stderr, "kgb import: --rounds: %s is an agent-track run (kernels/), which has no rounds\n", dir);
		return KGB_CLI_EXIT_USAGE;
	}
	im.rounds = rounds;
	if (agent) {
		rc = import_agent(dir, &im, method, sizeof method, err, sizeof err);
		snprintf(p, sizeof p, "%s/config.yaml", dir);
		yaml_value(p, "model", model, sizeof model);
	} else {
		rc = import_llm(dir, &im, method, sizeof method, err, sizeof err);
		if (rc == 0 && im.n == 0 && !im.skipped)
			rc = kgb_err(err, sizeof err, "%s: neither kernels/ (agent track) nor round_<k>/<op>.py (LLM track)", dir);
	}
	json_t *m = NULL;
	char *outdir = NULL;
	if (rc != 0)
		goto fail;
	if (im.n == 0) {
		kgb_err(err, sizeof err, "%s: no module of an operator kgb knows%s%s", dir, im.skipped ? " (skipped: " : "",
		        im.skipped ? im.skipped : "");
		if (im.skipped)
			kgb_strlcpy(err + strlen(err), ")", sizeof err - strlen(err));
		goto fail;
	}
	if (!*method) {
		char rp[PATH_MAX];
		const char *base = realpath(dir, rp) ? strrchr(rp, '/') : NULL;
		snprintf(method, sizeof method, "%s", base && base[1] ? base + 1 : "kernelgenbench");
	}
	clean_name(method);
	qsort(im.ops, im.n, sizeof *im.ops, cmp_op);

	/* module paths relative to the manifest when they lie under its directory */
	if (outpath) {
		char tmp[PATH_MAX], rp[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s", outpath);
		char *slash = strrchr(tmp, '/');
		if (slash)
			*slash = 0;
		if (realpath(slash ? (tmp[0] ? tmp : "/") : ".", rp))
			outdir = kgb_xstrdup(rp);
	}
	m = json_object();
	json_object_set_new(m, "name", json_string(method));
	json_t *ops = json_array(), *cands = json_array();
	for (size_t i = 0; i < im.n; i++) {
		imp_op_t *o = &im.ops[i];
		if (i == 0 || strcmp(im.ops[i - 1].op, o->op) != 0)
			json_array_append_new(ops, json_string(o->op));
		if (versions && o->nversions > 0) {
			int vr = add_versions(g, o, model[0] ? model : NULL, cands);
			if (vr != 0) {
				json_decref(ops);
				json_decref(cands);
				json_decref(m);
				free(outdir);
				imp_free(&im);
				return vr;
			}
			continue;
		}
		json_t *c = json_object();
		json_object_set_new(c, "operator", json_string(o->op));
		if (im.rounds)
			json_object_set_new(c, "round", json_integer(o->round));
		json_object_set_new(c, "kind", json_string("python"));
		char rp[PATH_MAX];
		size_t ol = outdir ? strlen(outdir) : 0;
		if (outdir && realpath(o->path, rp) && strncmp(rp, outdir, ol) == 0 && rp[ol] == '/') {
			json_object_set_new(c, "module", json_string(rp + ol + 1));
		} else {
			char e[256];
			size_t len = 0;
			char *text = kgb_read_regular_file(o->path, IMPORT_MAX_FILE, &len, e, sizeof e);
			if (!text) {
				kgb_err(err, sizeof err, "%s: cannot read: %s", o->path, e);
				json_decref(c);
				json_decref(ops);
				json_decref(cands);
				goto fail;
			}
			json_t *inl = json_object();
			json_object_set_new(inl, "inline", json_stringn(text, len));
			json_object_set_new(c, "module", inl);
			free(text);
		}
		if (o->tokens >= 0)
			json_object_set_new(c, "tokens", json_real(o->tokens));
		if (o->seconds >= 0)
			json_object_set_new(c, "gen_seconds", json_real(o->seconds));
		if (o->has_usage)
			json_object_set_new(c, "usage", usage_json(&o->usage));
		if (model[0])
			json_object_set_new(c, "model", json_string(model));
		json_array_append_new(cands, c);
	}
	json_object_set_new(m, "operators", ops);
	json_t *meth = json_object(), *methods = json_array();
	json_object_set_new(meth, "name", json_string(method));
	json_object_set_new(meth, "description",
	                    json_string(agent ? "KernelGenBench run (agent track)" : "KernelGenBench run (LLM track)"));
	json_object_set_new(meth, "candidates", cands);
	json_array_append_new(methods, meth);
	json_object_set_new(m, "methods", methods);
	int jr = outpath ? json_dump_file(m, outpath, JSON_INDENT(1) | JSON_REAL_PRECISION(12))
	                 : json_dumpf(m, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
	if (jr != 0) {
		kgb_err(err, sizeof err, "%s: cannot write the manifest: %s", outpath ? outpath : "stdout", strerror(errno));
		goto fail;
	}
	if (!outpath)
		putchar('\n');
	fprintf(stderr, "kgb import: method %s: %zu python candidate(s)%s%s\n", method, im.n,
	        im.skipped ? "; not in kgb's catalog, skipped: " : "", im.skipped ? im.skipped : "");
	json_decref(m);
	free(outdir);
	imp_free(&im);
	return KGB_CLI_OK;
fail:
	fprintf(stderr, "kgb import: %s\n", err);
	json_decref(m);
	free(outdir);
	imp_free(&im);
	return KGB_CLI_EXIT_USAGE;
}
