/* See reccache.h. */
#include "reccache.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend_common.h"
#include "compile.h"
#include "util.h"
#include "validate.h"

#define ENTRY_VERSION 1

/* $KGB_CACHE_DIR/recordings (or ~/.cache/kgb/recordings), created; NULL when unusable. */
static const char *cache_dir(char *buf, size_t n)
{
	const char *env = getenv("KGB_CACHE_DIR"), *home = getenv("HOME");
	if (env && *env)
		snprintf(buf, n, "%s/recordings", env);
	else if (home && *home)
		snprintf(buf, n, "%s/.cache/kgb/recordings", home);
	else
		return NULL;
	return kgb_mkdirs(buf, 0700) == 0 ? buf : NULL;
}

/* Add the contents of path (absent: the field says so) to the key. */
static void add_file(kgb_ckey_t *k, const char *field, const char *path)
{
	size_t len = 0;
	char e[64];
	char *t = kgb_read_file(path, &len, e, sizeof e);
	kgb_ckey_add_str(k, field, path);
	kgb_ckey_add(k, field, t, t ? len : 0);
	free(t);
}

/* Every file that globbing pattern under prefix finds, in order. */
static void add_glob(kgb_ckey_t *k, const char *prefix, const char *pattern)
{
	char pat[PATH_MAX];
	glob_t g;
	snprintf(pat, sizeof pat, "%s/%s", prefix, pattern);
	if (glob(pat, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_file(k, "toolchain", g.gl_pathv[i]);
	globfree(&g);
}

void kgb_reccache_stamp(const char *python, const char *recorder, bool on_device, char stamp[65])
{
	kgb_ckey_t k;
	kgb_ckey_init(&k);
	kgb_ckey_add_int(&k, "entry", ENTRY_VERSION);
	kgb_ckey_add_int(&k, "on_device", on_device);
	/* the recorder and the provider's mapping it loads (next to it, or in the tree) */
	char dir[PATH_MAX], p[PATH_MAX + 64];
	kgb_strlcpy(dir, recorder, sizeof dir);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		kgb_strlcpy(dir, ".", sizeof dir);
	add_file(&k, "recorder", recorder);
	snprintf(p, sizeof p, "%s/torch_aten.py", dir);
	add_file(&k, "provider", p);
	snprintf(p, sizeof p, "%s/../../python/kgb/providers/torch_aten.py", dir);
	add_file(&k, "provider", p);
	/* the toolchain: the Python, and torch's and Triton's version files under its
	 * prefix (a venv's or a system's site-packages) and on KGB_TRITON_PYTHONPATH */
	kgb_ckey_add_str(&k, "python", python);
	char prefix[PATH_MAX];
	kgb_strlcpy(prefix, python, sizeof prefix);
	for (int up = 0; up < 2; up++) {
		char *s = strrchr(prefix, '/');
		if (s)
			*s = 0;
	}
	static const char *const files[] = { "torch/version.py", "triton/__init__.py" };
	static const char *const sites[] = { "lib/python3*/site-packages", "lib/python3*/dist-packages",
		                                 "local/lib/python3*/dist-packages", "lib/python3/dist-packages" };
	for (size_t s = 0; s < KGB_ARRAY_LEN(sites); s++)
		for (size_t f = 0; f < KGB_ARRAY_LEN(files); f++) {
			snprintf(p, sizeof p, "%s/%s", sites[s], files[f]);
			add_glob(&k, prefix, p);
		}
	const char *pp = getenv("KGB_TRITON_PYTHONPATH");
	if (pp && *pp) {
		char *copy = kgb_xstrdup(pp), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			for (size_t f = 0; f < KGB_ARRAY_LEN(files); f++)
				add_glob(&k, d, files[f]);
		free(copy);
	}
	kgb_ckey_final(&k, stamp);
}

void kgb_reccache_key(const char *stamp, const char *request, char key[65])
{
	kgb_ckey_t k;
	kgb_ckey_init(&k);
	kgb_ckey_add_str(&k, "stamp", stamp);
	kgb_ckey_add_str(&k, "request", request);
	kgb_ckey_final(&k, key);
}

static bool entry_path(const char *key, char *path, size_t n)
{
	char dir[PATH_MAX];
	if (!cache_dir(dir, sizeof dir) || strlen(key) != 64 || strspn(key, "0123456789abcdef") != 64)
		return false;
	return (size_t)snprintf(path, n, "%s/%s.json", dir, key) < n;
}

int kgb_reccache_get(const char *key, const kgb_case_t *c, kgb_pycand_out_t *out)
{
	char path[PATH_MAX + 80], e[256];
	memset(out, 0, sizeof *out);
	if (!entry_path(key, path, sizeof path))
		return -1;
	size_t len = 0;
	char *text = kgb_read_file(path, &len, e, sizeof e);
	if (!text)
		return -1;
	json_error_t je;
	json_t *o = json_loadb(text, len, 0, &je);
	free(text);
	const char *verdict = json_string_value(json_object_get(o, "verdict"));
	const char *msg = json_string_value(json_object_get(o, "message"));
	const char *plan = json_string_value(json_object_get(o, "plan"));
	const char *rec = json_string_value(json_object_get(o, "recording"));
	int v = verdict ? kgb_verdict_parse(verdict) : -1;
	bool ok = json_integer_value(json_object_get(o, "version")) == ENTRY_VERSION && v >= 0 && msg &&
	          v != KGB_V_CRASH && v != KGB_V_TIMEOUT && v != KGB_V_INFRA_ERROR && (v != KGB_V_PASS || plan);
	if (ok) {
		out->verdict = v;
		kgb_strlcpy(out->message, msg, sizeof out->message);
		out->recording = rec ? kgb_xstrdup(rec) : NULL;
		if (v == KGB_V_PASS) {
			out->plan_json = kgb_xstrdup(plan);
			ok = kgb_plan_parse(plan, strlen(plan), "cached plan", &out->plan, e, sizeof e) == 0 &&
			     kgb_plan_check(out->plan, c->op, "cached plan", e, sizeof e) == 0;
		}
	}
	json_decref(o);
	if (!ok) {
		/* damaged, or from a kgb whose checks it no longer passes: gone, and a miss */
		kgb_pycand_out_release(out);
		unlink(path);
		return -1;
	}
	utimensat(AT_FDCWD, path, NULL, 0);   /* used now: the last to be pruned */
	return 0;
}

void kgb_reccache_put(const char *key, const kgb_pycand_out_t *o)
{
	char path[PATH_MAX + 80];
	if (o->verdict == KGB_V_CRASH || o->verdict == KGB_V_TIMEOUT || o->verdict == KGB_V_INFRA_ERROR ||
	    (o->verdict == KGB_V_PASS && !o->plan_json) || !entry_path(key, path, sizeof path))
		return;
	json_t *e = json_object();
	json_object_set_new(e, "version", json_integer(ENTRY_VERSION));
	json_object_set_new(e, "verdict", json_string(kgb_verdict_name(o->verdict)));
	json_object_set_new(e, "message", json_string(o->message));
	json_object_set_new(e, "plan", o->plan_json ? json_string(o->plan_json) : json_null());
	json_object_set_new(e, "recording", o->recording ? json_string(o->recording) : json_null());
	char *text = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	if (text)
		kgb_write_file_atomic(path, text, strlen(text));
	free(text);
}

typedef struct ent {
	char name[80];
	off_t size;
	struct timespec used;
} ent_t;

static int by_use(const void *a, const void *b)
{
	const ent_t *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return x->used.tv_nsec < y->used.tv_nsec ? -1 : x->used.tv_nsec > y->used.tv_nsec;
}

void kgb_reccache_prune(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	if (!cache_dir(dir, sizeof dir))
		return;
	uint64_t limit = (uint64_t)kgb_be_env_u32("KGB_PYREC_CACHE_MB", 512) << 20;
	DIR *d = opendir(dir);
	if (!d)
		return;
	ent_t *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;
		if (l < 6 || l >= sizeof v->name || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (n == cap)
			v = kgb_xrealloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v);
		kgb_strlcpy(v[n].name, de->d_name, sizeof v[n].name);
		v[n].size = st.st_size;
		v[n].used = st.st_mtim;
		total += (uint64_t)st.st_size;
		n++;
	}
	closedir(d);
	if (total > limit) {
		qsort(v, n, sizeof *v, by_use);
		for (size_t i = 0; i < n && total > limit - limit / 10; i++) {
			snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
			if (unlink(path) == 0)
				total -= (uint64_t)v[i].size;
		}
	}
	free(v);
}
