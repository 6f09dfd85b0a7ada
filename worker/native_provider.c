/* Native candidates of ATen and vLLM operators: the provider process and the reader of
 * its results (see native_provider.h). */
#include "native_provider.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend_common.h"
#include "compile.h"
#include "sizing.h"
#include "util.h"
#include "validate.h"

#if defined(__SANITIZE_ADDRESS__)
#define NATIVE_ASAN 1
#else
#define NATIVE_ASAN 0
#endif

#define LINE_MAX_BYTES (256u << 10)

void kgb_native_device(const char *backend, uint32_t index, char *out, size_t outlen)
{
	if (strcmp(backend, "cuda") == 0 || strcmp(backend, "hip") == 0)
		snprintf(out, outlen, "cuda:%u", index);   /* torch's ROCm build names HIP devices cuda too */
	else if (strcmp(backend, "level-zero") == 0)
		snprintf(out, outlen, "xpu:%u", index);
	else
		snprintf(out, outlen, "cpu");
}

char *kgb_native_find_python(void)
{
	const char *env = getenv("KGB_PYTHON");
	return kgb_find_program(env && *env ? env : "python3");
}

/* The directory holding the kgb package (kgb/providers/run.py): $KGB_PYTHONPATH, else
 * the source tree or the installed share directory relative to this binary. NULL: rely
 * on the interpreter's own path (`pip install ./python`). */
static char *find_package_dir(void)
{
	const char *env = getenv("KGB_PYTHONPATH");
	if (env && *env)
		return kgb_xstrdup(env);
	/* build/rel/bin, build/bin, a bundle (scripts/bundle.sh carries the package), a
	 * bundle directory at the root of a source tree, an installed prefix */
	static const char *const rel[] = { "../../../python/kgb/providers/run.py", "../../python/kgb/providers/run.py",
		                               "python/kgb/providers/run.py", "../python/kgb/providers/run.py",
		                               "../share/kgb/python/kgb/providers/run.py" };
	char *run = kgb_find_near_exe(NULL, rel, KGB_ARRAY_LEN(rel));
	if (run)
		run[strlen(run) - strlen("/kgb/providers/run.py")] = 0;
	return run;
}

/* libkgb.so for the package: $KGB_LIBRARY, else the one next to this binary (not from a
 * sanitizer build: an instrumented library does not load into an uninstrumented
 * Python), else NULL (the package's own search). */
static char *find_library(void)
{
	const char *env = getenv("KGB_LIBRARY");
	if (env && *env)
		return kgb_xstrdup(env);
	if (NATIVE_ASAN)
		return NULL;
	/* lib/ beside bin/ (a build tree, an installed prefix), or beside the binary (a bundle) */
	static const char *const rel[] = { "../lib/libkgb.so", "libkgb.so" };
	return kgb_find_near_exe(NULL, rel, KGB_ARRAY_LEN(rel));
}

/* The child's environment: what Python, torch and the device runtime need, nothing else. */
static char **provider_env(const char *python, const char *pkgdir, const char *lib)
{
	static const char *const pass[] = { "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
		                                "LD_LIBRARY_PATH", "KGB_CACHE_DIR", "KGB_REF_CACHE_MB",
		                                "OMP_NUM_THREADS", "TMPDIR" };
	char *libvar = lib ? kgb_xasprintf("KGB_LIBRARY=%s", lib) : NULL;
	/* the reference cache the worker uses (docs/references.md): without KGB_CACHE_DIR
	 * the child's HOME (kgb_python_env's /nonexistent) would name another one */
	char *cachevar = NULL;
	const char *cd = getenv("KGB_CACHE_DIR");
	if (!cd || !*cd) {
		char *root = kgb_ref_cache_root();
		size_t rl = strlen(root);
		if (root[0] == '/' && rl > 4 && strcmp(root + rl - 4, "/ref") == 0)
			cachevar = kgb_xasprintf("KGB_CACHE_DIR=%.*s", (int)(rl - 4), root);
		free(root);
	}
	const char *extra[2];
	size_t nextra = 0;
	if (libvar)
		extra[nextra++] = libvar;
	if (cachevar)
		extra[nextra++] = cachevar;
	char **env = kgb_python_env(python, pkgdir, pass, KGB_ARRAY_LEN(pass), extra, nextra);
	free(libvar);
	free(cachevar);
	return env;
}

/* ---- the reader: follows the results file while the child runs ---- */

typedef struct reader {
	const kgb_native_job_t *job;
	char path[PATH_MAX + 32];
	pthread_mutex_t mu;
	bool stop;                  /* the child has ended: drain and return */
	size_t next;                /* index into job->cases of the next case to report */
	bool started;               /* a "start" line for job->cases[next] was seen */
	char *all_verdict_msg;      /* an {"all": true} line: its message (owned) */
	int all_verdict;
	size_t bad_lines;
} reader_t;

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* The numbers keys[0..n) of o into *dst[0..n) (0 where missing). */
static void nums(json_t *o, const char *const *keys, double *const *dst, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*dst[i] = num(o, keys[i]);
}

static void report(reader_t *r, uint32_t idx, int verdict, const char *msg, json_t *line)
{
	kgb_native_case_t c;
	Kgb__Timing init = KGB__TIMING__INIT;
	memset(&c, 0, sizeof c);
	c.timing = init;
	c.case_index = idx;
	c.verdict = verdict;
	c.message = msg ? msg : "";
	if (line) {
		c.max_abs_err = num(line, "max_abs_err");
		c.max_rel_err = num(line, "max_rel_err");
		c.timed = json_is_true(json_object_get(line, "timed"));
		json_t *t = json_object_get(line, "timing");
		if (verdict == KGB_V_PASS && json_is_object(t)) {
			static const char *const keys[] = { "median_ns", "min_ns", "p10_ns", "p90_ns", "mean_ns",
				                                "stdev_ns" };
			double *const dst[] = { &c.timing.median_ns, &c.timing.min_ns, &c.timing.p10_ns,
				                    &c.timing.p90_ns, &c.timing.mean_ns, &c.timing.stdev_ns };
			c.has_timing = true;
			nums(t, keys, dst, 6);
			c.timing.samples = (uint32_t)num(t, "samples");
			c.timing.rse = num(t, "rse");
			c.occupied_ns = num(t, "occupied_ns");
			const char *m = json_string_value(json_object_get(t, "method"));
			c.timing.method = (char *)(m ? m : "native");
		}
		json_t *pf = json_object_get(line, "prof");
		if (json_is_object(pf)) {
			static const char *const keys[] = { "inputs", "reference", "transfer", "run", "validate",
				                                "timing", "wait" };
			double *const dst[] = { &c.prof.inputs, &c.prof.reference, &c.prof.transfer, &c.prof.run,
				                    &c.prof.validate, &c.prof.timing, &c.prof.wait };
			nums(pf, keys, dst, 7);
			c.prof.hits = (uint64_t)num(pf, "ref_hits");
			c.prof.misses = (uint64_t)num(pf, "ref_misses");
		}
	}
	r->job->on_case(r->job->arg, &c);
	r->next++;
	r->started = false;
}

/* One line of the results file. */
static void handle_line(reader_t *r, const char *text, size_t len)
{
	const kgb_native_job_t *job = r->job;
	json_error_t je;
	json_t *o = json_loadb(text, len, 0, &je);
	if (!json_is_object(o)) {
		r->bad_lines++;
		json_decref(o);
		return;
	}
	if (json_is_true(json_object_get(o, "all"))) {
		const char *v = json_string_value(json_object_get(o, "verdict"));
		const char *m = json_string_value(json_object_get(o, "message"));
		int vv = v ? kgb_verdict_parse(v) : -1;
		r->all_verdict = vv < 0 ? KGB_V_INFRA_ERROR : vv;
		free(r->all_verdict_msg);
		r->all_verdict_msg = kgb_xstrdup(m ? m : "native provider failed");
		if (job->on_log) {
			char *l = kgb_xasprintf("native provider: %s\n", r->all_verdict_msg);
			job->on_log(job->arg, l);
			free(l);
		}
		json_decref(o);
		return;
	}
	json_t *wt = json_object_get(o, "wait");
	if (json_is_integer(wt)) {
		if (r->next < job->ncases && (uint32_t)json_integer_value(wt) == job->cases[r->next] && job->on_wait)
			job->on_wait(job->arg, job->cases[r->next]);
		json_decref(o);
		return;
	}
	json_t *st = json_object_get(o, "start");
	if (json_is_integer(st)) {
		/* a case starts once per stretch of device work (each validated run, the timing) */
		if (r->next < job->ncases && (uint32_t)json_integer_value(st) == job->cases[r->next]) {
			r->started = true;
			if (job->on_start)
				job->on_start(job->arg, job->cases[r->next]);
		}
		json_decref(o);
		return;
	}
	json_t *ci = json_object_get(o, "case");
	if (!json_is_integer(ci) || r->next >= job->ncases || (uint32_t)json_integer_value(ci) != job->cases[r->next]) {
		r->bad_lines++;   /* out of order or unknown: the case gets a verdict at the end */
		json_decref(o);
		return;
	}
	const char *v = json_string_value(json_object_get(o, "verdict"));
	const char *m = json_string_value(json_object_get(o, "message"));
	int vv = v ? kgb_verdict_parse(v) : -1;
	char msg[600];
	if (vv < 0) {
		snprintf(msg, sizeof msg, "native provider: unknown verdict '%s'", v ? v : "(none)");
		vv = KGB_V_INFRA_ERROR;
		m = msg;
	}
	report(r, job->cases[r->next], vv, m, o);
	json_decref(o);
}

static void *reader_main(void *arg)
{
	reader_t *r = arg;
	int fd = -1;
	size_t cap = 1 << 16, len = 0;
	char *buf = kgb_xmalloc(cap);
	for (;;) {
		pthread_mutex_lock(&r->mu);
		bool stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (fd < 0)
			fd = open(r->path, O_RDONLY | O_CLOEXEC);
		bool got = false;
		while (fd >= 0) {
			if (len + 4096 > cap) {
				if (cap >= LINE_MAX_BYTES) {
					len = 0;    /* a line this long is garbage: drop it */
					r->bad_lines++;
				} else {
					cap *= 2;
					buf = kgb_xrealloc(buf, cap);
				}
			}
			ssize_t n = read(fd, buf + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got = true;
			len += (size_t)n;
			char *p = buf, *nl;
			while ((nl = memchr(p, '\n', len - (size_t)(p - buf))) != NULL) {
				handle_line(r, p, (size_t)(nl - p));
				p = nl + 1;
			}
			len -= (size_t)(p - buf);
			memmove(buf, p, len);
		}
		if (stop)
			break;   /* everything the child wrote was read after it ended */
		if (!got)
			usleep(20000);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* ---- the job ---- */

static char *request_json(const kgb_native_job_t *job, const char *results)
{
	json_t *r = json_object(), *cases = json_array();
	for (size_t i = 0; i < job->ncases; i++)
		json_array_append_new(cases, json_integer(job->cases[i]));
	json_object_set_new(r, "op", json_string(job->op));
	json_object_set_new(r, "cases", cases);
	json_object_set_new(r, "seed", json_integer((json_int_t)job->seed));
	json_object_set_new(r, "device", json_string(job->device));
	json_object_set_new(r, "timing", json_boolean(job->timing));
	json_object_set_new(r, "budget_ms", json_integer(job->budget_ms ? job->budget_ms : 500));
	json_object_set_new(r, "results", json_string(results));
	if (job->device_lock)
		json_object_set_new(r, "device_lock", json_string(job->device_lock));
	char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	KGB_ASSERT(text != NULL);
	json_decref(r);
	return text;
}

static void fail_rest(reader_t *r, int verdict, const char *msg)
{
	while (r->next < r->job->ncases)
		report(r, r->job->cases[r->next], verdict, msg, NULL);
}

static const char *tail_of(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	return n > max ? s + n - max : (s ? s : "");
}

/* See native_provider.h. */
bool kgb_native_probe(uint32_t wall_ms, char *note, size_t notelen)
{
	char *python = kgb_native_find_python();
	if (!python) {
		snprintf(note, notelen, "no Python found (%s); set KGB_PYTHON to one with torch",
		         getenv("KGB_PYTHON") && *getenv("KGB_PYTHON") ? getenv("KGB_PYTHON") : "python3 on PATH");
		return false;
	}
	char **env = provider_env(python, NULL, NULL);
	const char *argv[] = { python, "-s", "-c", "import torch; print('torch', torch.__version__)", NULL };
	kgb_sandbox_opts_t so = {
		.wall_ms = wall_ms,
		.nofile = 4096,
		.no_network = true,
		.env = (const char *const *)env,
	};
	kgb_sandbox_result_t sr;
	char se[512] = "";
	bool ok = false;
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, se, sizeof se) != 0) {
		snprintf(note, notelen, "the probe of %s did not run: %s", python, se);
	} else {
		/* its last line: torch's version, or the import's error */
		size_t ll;
		const char *line = kgb_last_line(sr.output, &ll);
		ok = !sr.timed_out && sr.exit_code == 0;
		if (sr.timed_out)
			snprintf(note, notelen, "torch did not import in %s within %u ms", python, wall_ms);
		else if (ok)
			snprintf(note, notelen, "%s with %.*s", python, (int)KGB_MIN(ll, 200), line);
		else
			snprintf(note, notelen, "torch does not import in %s (%.*s)", python, (int)KGB_MIN(ll, 300), line);
		kgb_sandbox_release(&sr);
	}
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	free(python);
	return ok;
}

int kgb_native_run(const kgb_native_job_t *job, char *err, size_t errlen)
{
	reader_t r;
	memset(&r, 0, sizeof r);
	r.job = job;
	char *python = kgb_native_find_python();
	if (!python) {
		kgb_err(err, errlen, "native provider: no Python found (%s%s); set KGB_PYTHON to one with torch",
		        getenv("KGB_PYTHON") && *getenv("KGB_PYTHON") ? "KGB_PYTHON=" : "python3 on PATH",
		        getenv("KGB_PYTHON") && *getenv("KGB_PYTHON") ? getenv("KGB_PYTHON") : "");
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
		return -1;
	}
	char *pkgdir = find_package_dir(), *lib = find_library();
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/kgb-native.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int rc = -1;
	char **env = NULL;
	char *req = NULL;
	if (!mkdtemp(dir)) {
		kgb_err(err, errlen, "native provider: mkdtemp %s: %s", dir, strerror(errno));
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
		goto out_free;
	}
	snprintf(r.path, sizeof r.path, "%s/results.jsonl", dir);
	int fd = open(r.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		kgb_err(err, errlen, "native provider: %s: %s", r.path, strerror(errno));
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
		goto out_dir;
	}
	close(fd);
	if (job->on_log) {
		char *l = kgb_xasprintf("native provider: %s -m kgb.providers.run (PYTHONPATH %s, KGB_LIBRARY %s), "
		                        "device %s, %zu case(s)\n", python, pkgdir ? pkgdir : "(interpreter's)",
		                        lib ? lib : "(package's search)", job->device, job->ncases);
		job->on_log(job->arg, l);
		free(l);
	}
	env = provider_env(python, pkgdir, lib);
	req = request_json(job, r.path);
	uint32_t per_case = job->case_limit_ms ? job->case_limit_ms : 120000;
	uint64_t wall = 120000 + (uint64_t)job->ncases * per_case;
	wall = kgb_be_env_u32("KGB_NATIVE_WALL_MS", (uint32_t)KGB_MIN(wall, (uint64_t)UINT32_MAX));
	uint64_t cpu = (wall / 1000 + 1) * (uint64_t)kgb_usable_cpus();
	const char *argv[] = { python, "-s", "-m", "kgb.providers.run", NULL };
	kgb_sandbox_opts_t so = {
		.wall_ms = (uint32_t)wall,
		.cpu_s = (uint32_t)KGB_MIN(cpu, (uint64_t)UINT32_MAX),
		.as_bytes = 0,        /* GPU runtimes reserve large address ranges */
		.nofile = 4096,
		.no_network = true,
		.env = (const char *const *)env,
		.stdin_data = req,
		.stdin_len = strlen(req),
	};
	pthread_t th;
	pthread_mutex_init(&r.mu, NULL);
	if (pthread_create(&th, NULL, reader_main, &r) != 0) {
		kgb_err(err, errlen, "native provider: cannot start the reader thread");
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
		pthread_mutex_destroy(&r.mu);
		goto out_dir;
	}
	kgb_sandbox_result_t sr;
	char se[512] = "";
	int src = kgb_sandbox_run(&so, argv, NULL, NULL, &sr, se, sizeof se);
	pthread_mutex_lock(&r.mu);
	r.stop = true;
	pthread_mutex_unlock(&r.mu);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&r.mu);

	char msg[1024];
	if (src != 0) {
		kgb_err(err, errlen, "native provider: %s", se);
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
		goto out_dir;
	}
	const char *o = tail_of(sr.output, 400);
	if (job->on_log && sr.output_len) {
		char *l = kgb_xasprintf("native provider output (last 400 bytes): %s\n", o);
		job->on_log(job->arg, l);
		free(l);
	}
	if (r.all_verdict_msg) {
		fail_rest(&r, r.all_verdict, r.all_verdict_msg);
		rc = 0;
	} else if (sr.timed_out) {
		snprintf(msg, sizeof msg, "native provider: ran past its wall limit of %llu ms", (unsigned long long)wall);
		fail_rest(&r, KGB_V_TIMEOUT, msg);
		rc = 0;
	} else if (sr.exit_code == 127 || sr.exit_code == 126) {
		kgb_err(err, errlen, "native provider: %s cannot start (exit %d): %s", python, sr.exit_code, o);
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
	} else if (sr.exit_code != 0 && r.next == 0 && !r.started) {
		/* it ended before its first case: the interpreter, the kgb package or libkgb */
		kgb_err(err, errlen, "native provider: %s -m kgb.providers.run failed before its first case (exit %d, "
		        "signal %d; KGB_PYTHONPATH, KGB_LIBRARY): %s", python, sr.exit_code, sr.signo, o);
		fail_rest(&r, KGB_V_INFRA_ERROR, err);
	} else if (r.next < job->ncases) {
		if (sr.signo)
			snprintf(msg, sizeof msg, "native provider: killed by signal %d during case %u: %s", sr.signo,
			         job->cases[r.next], o);
		else
			snprintf(msg, sizeof msg, "native provider: exited %d before case %u ended: %s", sr.exit_code,
			         job->cases[r.next], o);
		/* the case running when the process died crashed; the rest were never run */
		report(&r, job->cases[r.next], KGB_V_CRASH, msg, NULL);
		snprintf(msg, sizeof msg, "not run: the native provider died in an earlier case");
		fail_rest(&r, KGB_V_NOT_RUN, msg);
		rc = 0;
	} else {
		rc = 0;
	}
	if (r.bad_lines && job->on_log) {
		char *l = kgb_xasprintf("native provider: %zu line(s) of its results were not understood\n", r.bad_lines);
		job->on_log(job->arg, l);
		free(l);
	}
	kgb_sandbox_release(&sr);
out_dir:
	unlink(r.path);
	rmdir(dir);
out_free:
	free(r.all_verdict_msg);
	free(req);
	if (env) {
		for (char **e = env; *e; e++)
			free(*e);
		free(env);
	}
	free(pkgdir);
	free(lib);
	free(python);
	return rc;
}
