/* Standalone job files: JSON -> JobAssign (jobfile.h). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "jobfile.h"
#include "catalog.h"
#include "plan.h"
#include "util.h"

#define DEFAULT_TIME_LIMIT_MS 60000u
#define DEFAULT_TIMING_BUDGET_MS 500u

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Resolve a path relative to dir (absolute paths unchanged). Caller frees. */
static char *rel_path(const char *dir, const char *p)
{
	if (p[0] == '/' || !dir || !*dir)
		return kgb_xstrdup(p);
	return kgb_xasprintf("%s/%s", dir, p);
}

static char *dir_of(const char *path)
{
	char *tmp = kgb_xstrdup(path);
	char *d = kgb_xstrdup(dirname(tmp));
	free(tmp);
	return d;
}

static int get_uint(json_t *root, const char *key, uint64_t dflt, uint64_t max, uint64_t *out,
                    const char *origin, char *err, size_t errlen)
{
	json_t *v = json_object_get(root, key);
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v))
		return kgb_err(err, errlen, "%s: %s: expected a non-negative integer, got %s", origin, key,
		               json_type_name(v));
	json_int_t i = json_integer_value(v);
	if (i < 0 || (uint64_t)i > max)
		return kgb_err(err, errlen, "%s: %s: %lld is out of range (0..%llu)", origin, key, (long long)i,
		               (unsigned long long)max);
	*out = (uint64_t)i;
	return 0;
}

static void add_source(Kgb__JobAssign *job, const char *name, char *content, size_t len)
{
	Kgb__SourceFile *sf = kgb_xmalloc(sizeof *sf);
	kgb__source_file__init(sf);
	sf->name = kgb_xstrdup(name);
	sf->content.data = (uint8_t *)content;
	sf->content.len = len;
	job->sources = kgb_xrealloc(job->sources, (job->n_sources + 1) * sizeof *job->sources);
	job->sources[job->n_sources++] = sf;
}

static bool has_source(const Kgb__JobAssign *job, const char *name)
{
	for (size_t i = 0; i < job->n_sources; i++)
		if (strcmp(job->sources[i]->name, name) == 0)
			return true;
	return false;
}

/* See jobfile.h. */
int kgb_jobfile_parse(const char *json, size_t len, const char *origin, const char *dir, kgb_jobfile_t *out,
                      char *err, size_t errlen)
{
	static const char *const known[] = { "op", "cases", "seed", "seed_b", "heldout_key", "backend", "device", "timing",
	                                     "time_limit_ms", "timing_budget_ms", "plan", "sources",
	                                     "method", "comment" };
	json_error_t je;
	json_t *root = NULL;
	char *plan_dir = NULL, *plan_text = NULL, *plan_origin = NULL;
	kgb_plan_t *plan = NULL;
	char *module = NULL;
	int rc = -1;
	memset(out, 0, sizeof *out);
	Kgb__JobAssign *job = kgb_xmalloc(sizeof *job);
	kgb__job_assign__init(job);
	out->job = job;

	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		kgb_err(err, errlen, "%s:%d:%d: %s", origin, je.line, je.column, je.text);
		goto out;
	}
	if (!json_is_object(root)) {
		kgb_err(err, errlen, "%s: expected a JSON object at the top, got %s", origin, json_type_name(root));
		goto out;
	}
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val) {
		size_t i;
		for (i = 0; i < KGB_ARRAY_LEN(known); i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == KGB_ARRAY_LEN(known)) {
			kgb_err(err, errlen, "%s: unknown field '%s' (known: op cases seed seed_b heldout_key backend device timing "
			        "time_limit_ms timing_budget_ms plan sources)", origin, key);
			goto out;
		}
	}

	/* op */
	json_t *op_j = json_object_get(root, "op");
	if (!json_is_string(op_j)) {
		kgb_err(err, errlen, "%s: op: %s", origin, op_j ? "expected a string" : "missing (the operator name)");
		goto out;
	}
	const kgb_op_t *op = kgb_catalog_find(json_string_value(op_j));
	if (!op) {
		kgb_err(err, errlen, "%s: op: unknown operator '%s' (kgb-worker's catalog is version %s)", origin,
		        json_string_value(op_j), kgb_catalog_version());
		goto out;
	}
	job->op = kgb_xstrdup(op->name);

	/* held-out cases: with the key, indices past the public ones (catalog.h) */
	uint64_t u;
	if (json_object_get(root, "heldout_key")) {
		if (get_uint(root, "heldout_key", 1, UINT64_MAX >> 1, &u, origin, err, errlen))
			goto out;
		job->heldout_key = u;
	}
	/* cases */
	uint32_t ncases = kgb_op_case_count(op), nlist = ncases;
	if (job->heldout_key && kgb_op_has_heldout(op))
		nlist = kgb_heldout_index(op, ncases, 0);
	json_t *cases = json_object_get(root, "cases");
	/* "smoke": the operator's smoke subset (its leading grids), as in manifests */
	if (json_is_string(cases) && strcmp(json_string_value(cases), "smoke") == 0)
		ncases = kgb_op_smoke_case_count(op);
	if (!cases || (json_is_string(cases) && (strcmp(json_string_value(cases), "all") == 0 ||
	                                         strcmp(json_string_value(cases), "smoke") == 0))) {
		job->n_cases = ncases;
		job->cases = kgb_xcalloc(ncases ? ncases : 1, sizeof *job->cases);
		for (uint32_t i = 0; i < ncases; i++)
			job->cases[i] = i;
	} else if (json_is_array(cases)) {
		size_t n = json_array_size(cases);
		job->cases = kgb_xcalloc(n ? n : 1, sizeof *job->cases);
		for (size_t i = 0; i < n; i++) {
			json_t *c = json_array_get(cases, i);
			if (!json_is_integer(c)) {
				kgb_err(err, errlen, "%s: cases[%zu]: expected a case index, got %s", origin, i, json_type_name(c));
				goto out;
			}
			json_int_t ci = json_integer_value(c);
			if (ci < 0 || ci >= (json_int_t)nlist) {
				kgb_err(err, errlen, "%s: cases[%zu]: %lld is out of range (%s has %u cases, 0..%u%s)", origin, i,
				        (long long)ci, op->name, ncases, ncases ? ncases - 1 : 0,
				        nlist > ncases ? ", and held-out cases up to the public count x 65" : "");
				goto out;
			}
			job->cases[job->n_cases++] = (uint32_t)ci;
		}
		if (n == 0) {
			kgb_err(err, errlen, "%s: cases: the list is empty", origin);
			goto out;
		}
	} else {
		kgb_err(err, errlen, "%s: cases: expected \"all\" or a list of case indices, got %s", origin,
		        json_is_string(cases) ? json_string_value(cases) : json_type_name(cases));
		goto out;
	}

	if (get_uint(root, "seed", 1, UINT64_MAX >> 1, &u, origin, err, errlen))
		goto out;
	job->seed = u;
	if (json_object_get(root, "seed_b")) {
		if (get_uint(root, "seed_b", 1, UINT64_MAX >> 1, &u, origin, err, errlen))
			goto out;
		job->seed_b = u;
	}
	if (get_uint(root, "device", 0, 1024, &u, origin, err, errlen))
		goto out;
	out->device = (uint32_t)u;
	job->device_index = out->device;
	if (get_uint(root, "time_limit_ms", DEFAULT_TIME_LIMIT_MS, UINT32_MAX, &u, origin, err, errlen))
		goto out;
	job->time_limit_ms = (uint32_t)u;
	if (get_uint(root, "timing_budget_ms", DEFAULT_TIMING_BUDGET_MS, UINT32_MAX, &u, origin, err, errlen))
		goto out;
	job->timing_budget_ms = (uint32_t)u;
	json_t *t = json_object_get(root, "timing");
	if (t && !json_is_boolean(t)) {
		kgb_err(err, errlen, "%s: timing: expected true or false, got %s", origin, json_type_name(t));
		goto out;
	}
	job->timing = t ? json_is_true(t) : true;
	json_t *b = json_object_get(root, "backend");
	if (b && !json_is_string(b)) {
		kgb_err(err, errlen, "%s: backend: expected a string, got %s", origin, json_type_name(b));
		goto out;
	}
	snprintf(out->backend, sizeof out->backend, "%s", b ? json_string_value(b) : "opencl");
	json_t *m = json_object_get(root, "method");
	job->method = kgb_xstrdup(json_is_string(m) ? json_string_value(m) : "standalone");

	/* plan: a path (relative to the job file) or an inline object */
	json_t *pj = json_object_get(root, "plan");
	if (json_is_string(pj)) {
		char *pp = rel_path(dir, json_string_value(pj));
		size_t plen;
		char e2[256];
		plan_text = kgb_read_file(pp, &plen, e2, sizeof e2);
		if (!plan_text) {
			kgb_err(err, errlen, "%s: plan: cannot read '%s': %s", origin, pp, e2);
			free(pp);
			goto out;
		}
		plan_dir = dir_of(pp);
		plan_origin = pp;
	} else if (json_is_object(pj)) {
		plan_text = json_dumps(pj, JSON_COMPACT);
		plan_dir = kgb_xstrdup(dir ? dir : ".");
		plan_origin = kgb_xasprintf("%s: plan", origin);
	} else {
		kgb_err(err, errlen, "%s: plan: %s", origin,
		        pj ? "expected a file name or an inline plan object" : "missing (the launch plan)");
		goto out;
	}
	/* {"kind": "python", "module": "add.py"} or {"kind": "native"}: no launch plan */
	int kind = kgb_plan_kind(plan_text, strlen(plan_text), plan_origin, &module, err, errlen);
	if (kind < 0)
		goto out;
	if (kind == KGB_CAND_PLAN &&
	    kgb_plan_parse(plan_text, strlen(plan_text), plan_origin, &plan, err, errlen) != 0)
		goto out;
	job->plan_json = kgb_xstrdup(plan_text);

	/* sources named explicitly (paths relative to the job file, or inline text) */
	json_t *srcs = json_object_get(root, "sources");
	if (srcs && !json_is_object(srcs)) {
		kgb_err(err, errlen, "%s: sources: expected an object {name: path | {\"inline\": text}}, got %s",
		        origin, json_type_name(srcs));
		goto out;
	}
	json_object_foreach(srcs, key, val) {
		if (json_is_string(val)) {
			char *sp = rel_path(dir, json_string_value(val));
			size_t slen;
			char e2[256];
			char *text = kgb_read_file(sp, &slen, e2, sizeof e2);
			if (!text) {
				kgb_err(err, errlen, "%s: sources.%s: cannot read '%s': %s", origin, key, sp, e2);
				free(sp);
				goto out;
			}
			free(sp);
			add_source(job, key, text, slen);
		} else if (json_is_object(val) && json_is_string(json_object_get(val, "inline"))) {
			const char *text = json_string_value(json_object_get(val, "inline"));
			add_source(job, key, kgb_xstrdup(text), strlen(text));
		} else {
			kgb_err(err, errlen, "%s: sources.%s: expected a path or {\"inline\": \"...\"}, got %s", origin,
			        key, json_type_name(val));
			goto out;
		}
	}
	/* a python candidate's module, relative to the plan's directory unless named */
	if (module && !has_source(job, module)) {
		char *sp = rel_path(plan_dir, module);
		size_t slen;
		char e2[256];
		char *text = kgb_read_file(sp, &slen, e2, sizeof e2);
		if (!text) {
			kgb_err(err, errlen, "%s: module: cannot read '%s': %s (name it in \"sources\" to read it from "
			        "elsewhere)", plan_origin, sp, e2);
			free(sp);
			goto out;
		}
		free(sp);
		add_source(job, module, text, slen);
	}
	/* the rest: the kernels' source names, relative to the plan's directory */
	for (size_t k = 0; plan && k < plan->nkernels; k++) {
		const char *name = plan->kernels[k].source;
		if (has_source(job, name))
			continue;
		char *sp = rel_path(plan_dir, name);
		size_t slen;
		char e2[256];
		char *text = kgb_read_file(sp, &slen, e2, sizeof e2);
		if (!text) {
			kgb_err(err, errlen, "%s: kernels[%zu].source: cannot read '%s': %s (name it in \"sources\" "
			        "to read it from elsewhere)", plan_origin, k, sp, e2);
			free(sp);
			goto out;
		}
		free(sp);
		add_source(job, name, text, slen);
	}
	rc = 0;
out:
	if (rc != 0)
		kgb_jobfile_release(out);
	free(module);
	kgb_plan_destroy(&plan);
	json_decref(root);
	free(plan_dir);
	free(plan_text);
	free(plan_origin);
	return rc;
}

/* See jobfile.h. */
int kgb_jobfile_load(const char *path, kgb_jobfile_t *out, char *err, size_t errlen)
{
	size_t len;
	char e2[256];
	memset(out, 0, sizeof *out);
	char *text = kgb_read_file(path, &len, e2, sizeof e2);
	if (!text)
		return kgb_err(err, errlen, "%s: %s", path, e2);
	char *dir = dir_of(path);
	int rc = kgb_jobfile_parse(text, len, path, dir, out, err, errlen);
	free(dir);
	free(text);
	return rc;
}

/* See jobfile.h. */
void kgb_jobfile_release(kgb_jobfile_t *jf)
{
	if (jf->job)
		kgb__job_assign__free_unpacked(jf->job, NULL);
	jf->job = NULL;
}
