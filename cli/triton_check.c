/* kgb validate: compile a manifest's Triton kernels for an explicit target.
 *
 * Triton compiles ahead of time for a named target without a GPU, so a signature that
 * does not match the kernel ("*float32", a wrong argument count), a missing constexpr
 * or a num_warps that is not a power of two can be refused when the manifest is
 * validated instead of when a worker first runs it. The CLI runs the worker's own
 * helper (worker/triton_compile.py) in a child with a clean environment, exactly the
 * request the CUDA backend sends (backends/cuda.c): per kernel, the distinct requests
 * (resolved signature, constants, configuration) over the cases the manifest runs
 * (its smoke subset when it says "cases": "smoke"), the first case of each standing
 * for the rest, at most MAX_VARIANTS per kernel. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "expr.h"
#include "manifest.h"
#include "plan.h"
#include "triton_check.h"
#include "util.h"

#define MAX_VARIANTS 8          /* compiles per kernel */
#define MAX_SCAN_CASES 4096     /* cases looked at per operator for distinct variants */
#define COMPILE_TIMEOUT_S 180

/* "*@NAME[:hint]": a pointer to the Triton type of the case's tensor NAME, hint kept. */
static int resolve_pointer(FILE *f, const char *item, size_t l, const char *name, size_t nl, void *arg, char *err,
                           size_t errlen)
{
	const kgb_case_t *c = arg;
	int i;
	for (i = 0; i < c->ntensors; i++)
		if (strlen(c->t[i].name) == nl && strncmp(c->t[i].name, name, nl) == 0)
			break;
	if (i == c->ntensors || !kgb_dtype_triton(c->t[i].dtype))
		return kgb_err(err, errlen, "signature: '%.*s': %s", (int)l, item,
		               i == c->ntensors ? "the operator has no such tensor" : "its dtype has no Triton type");
	fprintf(f, "*%s", kgb_dtype_triton(c->t[i].dtype));
	fwrite(name + nl, 1, (size_t)(item + l - (name + nl)), f);
	return 0;
}

/* "*@self,*@out,i32" with the case's dtypes -> "*fp16,*fp16,i32" (the rule of the
 * CUDA backend). Heap string or NULL with err. */
static char *resolve_signature(const char *sig, const kgb_case_t *c, char *err, size_t errlen)
{
	return kgb_triton_signature_map(sig, resolve_pointer, (void *)c, err, errlen);
}

/* The compile request of kernel k, configuration cfg (or none) on case c. Heap JSON
 * text (sorted keys, so equal requests are equal strings) or NULL with err. */
static char *request_of(const kgb_plan_kernel_t *k, const kgb_plan_config_t *cfg, const kgb_source_t *src,
                        const kgb_case_t *c, int arch, char *err, size_t errlen)
{
	char *sig = resolve_signature(k->signature, c, err, errlen);
	if (!sig)
		return NULL;
	json_t *r = json_object(), *consts = json_object();
	char *text = NULL;
	json_object_set_new(r, "source", json_stringn(src->content, src->len));
	json_object_set_new(r, "entry", json_string(k->entry));
	json_object_set_new(r, "signature", json_string(sig));
	json_object_set_new(r, "constants", consts);
	for (size_t i = 0; i < k->ndefines; i++) {
		char *v = kgb_expr_subst(k->defines[i].value, c->sym, err, errlen);
		if (!v)
			goto out;
		json_object_set_new(consts, k->defines[i].name, kgb_triton_constant_json(v));
		free(v);
	}
	int nw = 4, ns = 3, nc = 1;
	if (cfg) {
		for (size_t i = 0; i < cfg->nconstants; i++) {
			char *v = kgb_expr_subst(cfg->constants[i].value, c->sym, err, errlen);
			if (!v)
				goto out;
			json_object_set_new(consts, cfg->constants[i].name, kgb_triton_constant_json(v));
			free(v);
		}
		nw = cfg->num_warps > 0 ? cfg->num_warps : nw;
		ns = cfg->num_stages > 0 ? cfg->num_stages : ns;
		nc = cfg->num_ctas > 0 ? cfg->num_ctas : nc;
	}
	json_object_set_new(r, "num_warps", json_integer(nw));
	json_object_set_new(r, "num_stages", json_integer(ns));
	json_object_set_new(r, "num_ctas", json_integer(nc));
	json_t *tgt = json_object();
	json_object_set_new(tgt, "backend", json_string("cuda"));
	json_object_set_new(tgt, "arch", json_integer(arch));
	json_object_set_new(tgt, "warp_size", json_integer(32));
	json_object_set_new(r, "target", tgt);
	text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
out:
	free(sig);
	json_decref(r);
	return text;
}

/* See triton_check.h. */
int kgb_cli_run_child(const char *const argv[], const char *in_path, const char *out_path, const char *err_path,
                      const char *cwd, int timeout_s)
{
	char pydir[PATH_MAX], pathv[PATH_MAX + 64], ppv[PATH_MAX + 16];
	kgb_strlcpy(pydir, argv[0], sizeof pydir);
	char *s = strrchr(pydir, '/');
	if (s)
		*s = 0;
	snprintf(pathv, sizeof pathv, "PATH=%s:/usr/local/bin:/usr/bin:/bin", pydir);
	const char *pp = getenv("KGB_TRITON_PYTHONPATH");
	if (!pp || !*pp)
		pp = getenv("PYTHONPATH");
	snprintf(ppv, sizeof ppv, "PYTHONPATH=%s", pp ? pp : "");
	char *envp[] = { pathv, ppv, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "HOME=/nonexistent", NULL };
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open(in_path, O_RDONLY), out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		    er = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in < 0 || er < 0 || out < 0)
			_exit(126);
		dup2(in, 0);
		dup2(out, 1);
		dup2(er, 2);
		if (chdir(cwd) != 0)
			_exit(126);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	int st = 0;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > timeout_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 124;
		}
		usleep(20000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Run python helper OUTDIR with stdin from reqfile, stderr to errfile. */
static int run_helper(const char *python, const char *helper, const char *outdir, const char *reqfile,
                      const char *errfile)
{
	const char *argv[] = { python, helper, outdir, NULL };
	return kgb_cli_run_child(argv, reqfile, "/dev/null", errfile, outdir, COMPILE_TIMEOUT_S);
}

/* The last non-empty line of a file (Triton's message), at most n bytes. */
static void last_line(const char *path, char *out, size_t n)
{
	size_t len = 0;
	char e[128];
	char *t = kgb_read_file(path, &len, e, sizeof e);
	out[0] = 0;
	if (!t)
		return;
	while (len && (t[len - 1] == '\n' || t[len - 1] == ' '))
		t[--len] = 0;
	char *nl = strrchr(t, '\n');
	kgb_strlcpy(out, nl ? nl + 1 : t, n);
	free(t);
}

static char *find_helper(void)
{
	return kgb_find_near_exe("KGB_TRITON_HELPER", kgb_triton_helper_rel, KGB_TRITON_HELPER_NREL);
}

/* python, when it exists and imports triton (version into ver). */
static char *find_python(const char *want, char *ver, size_t verlen, char *why, size_t whylen)
{
	char *py = kgb_find_program(want);
	if (!py) {
		kgb_err(why, whylen, "%s not found on PATH", want);
		return NULL;
	}
	char cmd[PATH_MAX + 128];
	snprintf(cmd, sizeof cmd, "'%s' -c 'import triton; print(triton.__version__)' 2>/dev/null", py);
	FILE *p = strchr(py, '\'') ? NULL : popen(cmd, "r");
	ver[0] = 0;
	if (p) {
		if (!fgets(ver, (int)verlen, p))
			ver[0] = 0;
		int st = pclose(p);
		ver[strcspn(ver, "\n")] = 0;
		if (st == 0 && ver[0])
			return py;
	}
	kgb_err(why, whylen, "%s cannot import triton", py);
	free(py);
	return NULL;
}

typedef struct variant {
	char *req;
	uint32_t case_index;
	char label[192];
	char sig[256];
	int cfg;
} variant_t;

/* Variants of kernel k of a candidate: distinct requests over the operator's cases. */
static int collect(const kgb_candidate_t *cand, const kgb_op_t *op, bool smoke, const kgb_plan_kernel_t *k,
                   size_t ki, const kgb_source_t *src, int arch, variant_t *v, size_t *nv, char *err, size_t errlen)
{
	uint32_t n = smoke ? kgb_op_smoke_case_count(op) : kgb_op_case_count(op);
	if (n > MAX_SCAN_CASES)
		n = MAX_SCAN_CASES;
	size_t ncfg = k->nconfigs ? k->nconfigs : 1;
	*nv = 0;
	for (uint32_t ci = 0; ci < n && *nv < MAX_VARIANTS; ci++) {
		kgb_case_t c;
		char e[512];
		if (kgb_case_build(op, ci, &c, e, sizeof e) != 0)
			continue;
		int runs = kgb_plan_kernel_runs(k, &c, e, sizeof e);
		for (size_t g = 0; runs == 1 && g < ncfg && *nv < MAX_VARIANTS; g++) {
			char *req = request_of(k, k->nconfigs ? &k->configs[g] : NULL, src, &c, arch, e, sizeof e);
			if (!req) {
				kgb_err(err, errlen, "%s: kernels[%zu] (%s), case %u (%s): %s", cand->origin, ki, k->entry, ci,
				        c.label, e);
				kgb_case_release(&c);
				return -1;
			}
			bool seen = false;
			for (size_t j = 0; j < *nv && !seen; j++)
				seen = strcmp(v[j].req, req) == 0;
			if (seen) {
				free(req);
				continue;
			}
			variant_t *x = &v[(*nv)++];
			x->req = req;
			x->case_index = ci;
			x->cfg = k->nconfigs ? (int)g : -1;
			kgb_strlcpy(x->label, c.label, sizeof x->label);
			json_t *rj = json_loads(req, 0, NULL);
			kgb_strlcpy(x->sig, rj ? json_string_value(json_object_get(rj, "signature")) : "?", sizeof x->sig);
			json_decref(rj);
		}
		kgb_case_release(&c);
	}
	return 0;
}

/* See triton_check.h. */
int kgb_cli_triton_check(const kgb_manifest_t *m, const char *target, const char *python_name,
                         kgb_triton_check_t *res, char *err, size_t errlen)
{
	char *python = NULL, *helper = NULL, tmp[] = "/tmp/kgb-validate-XXXXXX";
	bool have_tmp = false;
	int rc = -1;
	memset(res, 0, sizeof *res);

	if (strncmp(target, "cuda:", 5) != 0 || !target[5] || strspn(target + 5, "0123456789") != strlen(target + 5)) {
		kgb_err(err, errlen, "--triton-target: '%s' is not cuda:ARCH (e.g. cuda:90 for sm_90)", target);
		return -1;
	}
	int arch = atoi(target + 5);
	/* any Triton kernel at all? */
	for (size_t i = 0; i < m->ncandidates; i++) {
		kgb_plan_t *p = NULL;
		char e[512];
		const kgb_candidate_t *cd = &m->candidates[i];
		if (!cd->plan_json || kgb_plan_parse(cd->plan_json, strlen(cd->plan_json), cd->origin, &p, e, sizeof e))
			continue;
		for (size_t k = 0; k < p->nkernels; k++)
			res->kernels += p->kernels[k].lang == KGB_LANG_TRITON;
		kgb_plan_destroy(&p);
	}
	if (res->kernels == 0)
		return 0;
	python = find_python(python_name, res->version, sizeof res->version, res->skipped, sizeof res->skipped);
	if (!python)
		return 0;
	helper = find_helper();
	if (!helper) {
		kgb_strlcpy(res->skipped, "the Triton helper triton_compile.py was not found (set KGB_TRITON_HELPER)",
		            sizeof res->skipped);
		rc = 0;
		goto out;
	}
	if (!mkdtemp(tmp)) {
		kgb_err(err, errlen, "cannot create a scratch directory: %s", strerror(errno));
		goto out;
	}
	have_tmp = true;
	for (size_t i = 0; i < m->ncandidates; i++) {
		const kgb_candidate_t *cd = &m->candidates[i];
		const kgb_op_t *op = kgb_catalog_find(cd->op);
		kgb_plan_t *p = NULL;
		char e[1024];
		if (!op || !cd->plan_json || kgb_plan_parse(cd->plan_json, strlen(cd->plan_json), cd->origin, &p, e, sizeof e))
			continue;
		for (size_t ki = 0; ki < p->nkernels; ki++) {
			const kgb_plan_kernel_t *k = &p->kernels[ki];
			if (k->lang != KGB_LANG_TRITON)
				continue;
			if (!k->signature || !*k->signature) {
				kgb_err(err, errlen, "%s: kernels[%zu] (%s): a Triton kernel needs a signature (\"*fp32,*fp32,i32\" "
				        "or \"*@x,*@out,i32\": the types of its run-time parameters)", cd->origin, ki, k->entry);
				kgb_plan_destroy(&p);
				goto out;
			}
			const kgb_source_t *src = NULL;
			for (size_t s = 0; s < cd->nsources; s++)
				if (strcmp(cd->sources[s].name, k->source) == 0 && cd->sources[s].content)
					src = &cd->sources[s];
			if (!src)
				continue; /* the manifest check reports missing sources */
			variant_t v[MAX_VARIANTS];
			size_t nv = 0;
			int crc = collect(cd, op, m->smoke, k, ki, src, arch, v, &nv, err, errlen);
			for (size_t j = 0; crc == 0 && j < nv; j++) {
				char reqf[64], errf[64];
				snprintf(reqf, sizeof reqf, "%s/request.json", tmp);
				snprintf(errf, sizeof errf, "%s/stderr.txt", tmp);
				if (kgb_write_file_atomic(reqf, v[j].req, strlen(v[j].req)) != 0) {
					kgb_err(err, errlen, "cannot write %s: %s", reqf, strerror(errno));
					crc = -1;
					break;
				}
				int st = run_helper(python, helper, tmp, reqf, errf);
				char msg[600];
				last_line(errf, msg, sizeof msg);
				res->compiled++;
				if (st == 0)
					continue;
				char cfg[48] = "";
				if (v[j].cfg >= 0)
					snprintf(cfg, sizeof cfg, ", configs[%d]", v[j].cfg);
				if (st == 3) {
					snprintf(res->skipped, sizeof res->skipped, "the helper says Triton is missing: %s", msg);
					crc = 1;
				} else {
					kgb_err(err, errlen, "%s: kernels[%zu] (%s%s) does not compile for %s with signature \"%s\" "
					        "(case %u: %s): %s", cd->origin, ki, k->entry, cfg, target, v[j].sig,
					        v[j].case_index, v[j].label,
					        st == 124 ? "the compile took too long" : msg[0] ? msg : "no message");
					crc = -1;
				}
				break;
			}
			for (size_t j = 0; j < nv; j++)
				free(v[j].req);
			if (crc != 0) {
				kgb_plan_destroy(&p);
				rc = crc > 0 ? 0 : -1;
				goto out;
			}
		}
		kgb_plan_destroy(&p);
	}
	rc = 0;
out:
	if (have_tmp) {
		char path[128];
		static const char *const names[] = { "request.json", "stderr.txt", "kernel.cubin", "kernel.abi.json" };
		for (size_t i = 0; i < KGB_ARRAY_LEN(names); i++) {
			snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
			unlink(path);
		}
		rmdir(tmp);
	}
	free(python);
	free(helper);
	return rc;
}
