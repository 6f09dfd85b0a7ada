/* Python + Triton candidates: the recorder's request, its sandboxed run, and the
 * recording turned into a checked launch plan (see pycand.h). */
#include "pycand.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "dtype.h"
#include "util.h"
#include "validate.h"

static json_t *tensor_json(const kgb_tensor_t *t)
{
	json_t *o = json_object(), *shape = json_array(), *stride = json_array();
	for (int d = 0; d < t->ndim; d++) {
		json_array_append_new(shape, json_integer(t->shape[d]));
		json_array_append_new(stride, json_integer(t->stride[d]));
	}
	json_object_set_new(o, "shape", shape);
	json_object_set_new(o, "stride", stride);
	json_object_set_new(o, "dtype", json_string(kgb_dtype_name(t->dtype)));
	json_object_set_new(o, "offset", json_integer(0));
	return o;
}

char *kgb_pycand_request(const kgb_case_t *c, const char *source, size_t len, const char *source_name,
                         const char *function, bool allow_sync, int compile_arch)
{
	json_t *r = json_object(), *args = json_array(), *outs = json_array();
	json_object_set_new(r, "source", json_stringn(source, len));
	json_object_set_new(r, "source_name", json_string(source_name ? source_name : "candidate.py"));
	json_object_set_new(r, "function", json_string(function));
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		if (t->role == KGB_ROLE_IN || t->role == KGB_ROLE_INOUT) {
			json_t *a = json_object();
			json_object_set_new(a, "name", json_string(t->name));
			json_object_set_new(a, "tensor", tensor_json(t));
			json_array_append_new(args, a);
		}
		if (t->role == KGB_ROLE_OUT || t->role == KGB_ROLE_INOUT) {
			json_t *o = tensor_json(t);
			json_object_set_new(o, "name", json_string(t->name));
			json_array_append_new(outs, o);
		}
	}
	for (int i = 0; i < c->nscalars; i++) {
		const kgb_scalar_t *s = &c->s[i];
		json_t *a = json_object();
		json_object_set_new(a, "name", json_string(s->name));
		bool integral = kgb_dtype_name(s->dtype)[0] == 'i' || kgb_dtype_name(s->dtype)[0] == 'u';
		json_object_set_new(a, "value", integral ? json_integer((json_int_t)s->value) : json_real(s->value));
		json_object_set_new(a, "keyword", json_true());
		json_array_append_new(args, a);
	}
	json_object_set_new(r, "args", args);
	json_object_set_new(r, "outputs", outs);
	json_object_set_new(r, "allow_sync", json_boolean(allow_sync));
	if (compile_arch > 0) {
		json_t *tgt = json_object();
		json_object_set_new(tgt, "backend", json_string("cuda"));
		json_object_set_new(tgt, "arch", json_integer(compile_arch));
		json_object_set_new(tgt, "warp_size", json_integer(32));
		json_object_set_new(r, "compile", tgt);
	} else {
		json_object_set_new(r, "compile", json_null());
	}
	char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	KGB_ASSERT(text != NULL);
	json_decref(r);
	return text;
}

char *kgb_pycand_find_recorder(void)
{
	const char *env = getenv("KGB_PYREC");
	if (env && *env)
		return access(env, R_OK) == 0 ? kgb_xstrdup(env) : NULL;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	static const char *const rel[] = { "pyrec/kgb_record.py", "../libexec/kgb/pyrec/kgb_record.py",
		                               "../../../worker/pyrec/kgb_record.py",
		                               "../../worker/pyrec/kgb_record.py" };
	for (size_t i = 0; i < KGB_ARRAY_LEN(rel); i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/%s", exe, rel[i]);
		if (access(p, R_OK) == 0) {
			char *r = realpath(p, NULL);
			return r ? r : kgb_xstrdup(p);
		}
	}
	return NULL;
}

/* The child's environment: only what Python needs to find its packages. */
static char **recorder_env(const char *python)
{
	char **env = kgb_xcalloc(8, sizeof *env);
	int n = 0;
	char pydir[PATH_MAX];
	kgb_strlcpy(pydir, python, sizeof pydir);
	char *s = strrchr(pydir, '/');
	if (s)
		*s = 0;
	env[n++] = kgb_xasprintf("PATH=%s:/usr/local/bin:/usr/bin:/bin", pydir);
	const char *pp = getenv("KGB_TRITON_PYTHONPATH");
	if (pp && *pp)
		env[n++] = kgb_xasprintf("PYTHONPATH=%s", pp);
	env[n++] = kgb_xstrdup("LANG=C.UTF-8");
	env[n++] = kgb_xstrdup("PYTHONDONTWRITEBYTECODE=1");
	env[n++] = kgb_xstrdup("HOME=/nonexistent");
	env[n++] = kgb_xstrdup("TRITON_CACHE_DIR=.triton-cache");
	env[n] = NULL;
	return env;
}

static uint32_t env_u32(const char *name, uint32_t dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	return *end == 0 && v > 0 && v <= UINT32_MAX ? (uint32_t)v : dflt;
}

int kgb_pycand_record(const char *python, const char *recorder, const char *request, const kgb_case_t *c,
                      kgb_pycand_out_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	char **env = recorder_env(python);
	const char *argv[] = { python, "-s", recorder, "-", ".", NULL };
	kgb_sandbox_opts_t so = {
		.wall_ms = env_u32("KGB_PYREC_WALL_MS", 180000),
		.as_bytes = (uint64_t)env_u32("KGB_PYREC_AS_MB", 16384) << 20,
		.no_network = true,
		.env = (const char *const *)env,
		.stdin_data = request,
		.stdin_len = strlen(request),
	};
	kgb_sandbox_result_t sr = { 0 };
	int rc = -1;
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, err, errlen) != 0)
		goto out_env;
	if (sr.timed_out) {
		out->verdict = KGB_V_TIMEOUT;
		snprintf(out->message, sizeof out->message, "the recording ran past %u ms", so.wall_ms);
		rc = 0;
		goto out;
	}
	if (sr.exit_code != 0) {
		const char *o = sr.output ? sr.output : "";
		size_t ol = strlen(o);
		kgb_err(err, errlen, "the recorder %s (exit %d, signal %d): %.300s",
		        sr.exit_code == 3 ? "cannot import torch or triton" : "failed", sr.exit_code, sr.signo,
		        ol > 300 ? o + ol - 300 : o);
		goto out;
	}
	size_t len = 0;
	out->recording = kgb_sandbox_read(&sr, "recording.json", &len);
	if (!out->recording) {
		kgb_err(err, errlen, "the recorder wrote no recording.json");
		goto out;
	}
	json_error_t je;
	json_t *r = json_loadb(out->recording, len, 0, &je);
	const char *verdict = r ? json_string_value(json_object_get(r, "verdict")) : NULL;
	int v = verdict ? kgb_verdict_parse(verdict) : -1;
	if (v < 0) {
		kgb_err(err, errlen, "recording.json: verdict: '%s' is not a verdict", verdict ? verdict : "(none)");
		json_decref(r);
		goto out;
	}
	out->verdict = v;
	const char *msg = json_string_value(json_object_get(r, "message"));
	kgb_strlcpy(out->message, msg ? msg : "", sizeof out->message);
	json_decref(r);
	if (v == KGB_V_PASS) {
		out->plan_json = kgb_sandbox_read(&sr, "plan.json", &len);
		char pe[512];
		if (!out->plan_json) {
			out->verdict = KGB_V_PLAN_ERROR;
			snprintf(out->message, sizeof out->message, "the recorder passed but wrote no plan.json");
		} else if (kgb_plan_parse(out->plan_json, len, "recorded plan", &out->plan, pe, sizeof pe) != 0 ||
		           kgb_plan_check(out->plan, c->op, "recorded plan", pe, sizeof pe) != 0) {
			kgb_plan_destroy(&out->plan);
			out->verdict = KGB_V_PLAN_ERROR;
			snprintf(out->message, sizeof out->message, "%s", pe);
		}
	}
	rc = 0;
out:
	kgb_sandbox_release(&sr);
out_env:
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	return rc;
}

void kgb_pycand_out_release(kgb_pycand_out_t *o)
{
	if (!o)
		return;
	free(o->recording);
	free(o->plan_json);
	kgb_plan_destroy(&o->plan);
	memset(o, 0, sizeof *o);
}
