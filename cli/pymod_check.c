/* kgb validate: a Python + Triton candidate's module, parsed but never imported.
 *
 * The worker calls one function of a KernelGenBench module per case: for an ATen
 * operator the wrapper of the overload the case calls (`add_Tensor` for aten.add.Tensor,
 * the bare `silu` for silu.default; docs/python-candidates.md), for a vLLM or cuBLAS
 * operator the function named after the operator. A module with a syntax error, or
 * without one of those functions, fails every case it is sent; this check says so when
 * the manifest is validated. The module is parsed by Python's own `ast` in a child with
 * a clean environment (`-I`: no site, no user paths, nothing of the module is run), so
 * any python3 serves; without one the check is skipped and says why. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "manifest.h"
#include "plan.h"
#include "pymod_check.h"
#include "triton_check.h"
#include "util.h"

#define PARSE_TIMEOUT_S 60

/* Per ATen operator of the catalog: the overloads its cases call and the function each
 * needs (generated from the PyTorch provider's mapping; tests/pycand/check_mapping.py
 * checks it against the catalog). */
static const struct aten_wrapper {
	const char *op, *overload, *function;
} aten_wrappers[] = {
#define KGB_ATEN_WRAPPER(op, ovl, fn) { op, ovl, fn },
#include "aten_wrappers.inc"
#undef KGB_ATEN_WRAPPER
};

/* Per module file of argv (pairs: file, name for messages), one line: its top-level
 * names (functions, classes, assignments and imports, also under a top-level
 * if/try/with), or its syntax error. */
static const char parse_py[] =
	"import ast, sys\n"
	"def walk(body, names):\n"
	"    for n in body:\n"
	"        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):\n"
	"            names.add(n.name)\n"
	"        elif isinstance(n, ast.Assign):\n"
	"            for t in n.targets:\n"
	"                names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))\n"
	"        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):\n"
	"            names.add(n.target.id)\n"
	"        elif isinstance(n, (ast.Import, ast.ImportFrom)):\n"
	"            names.update((a.asname or a.name).split('.')[0] for a in n.names)\n"
	"        elif isinstance(n, (ast.If, ast.Try, ast.With)):\n"
	"            walk(n.body, names)\n"
	"            walk(getattr(n, 'orelse', []), names)\n"
	"            walk(getattr(n, 'finalbody', []), names)\n"
	"            for h in getattr(n, 'handlers', []):\n"
	"                walk(h.body, names)\n"
	"for path, name in zip(sys.argv[1::2], sys.argv[2::2]):\n"
	"    try:\n"
	"        tree = ast.parse(open(path, 'rb').read(), name)\n"
	"    except (SyntaxError, ValueError) as e:\n"
	"        print('syntax\\t%s\\t%s\\t%s' % (getattr(e, 'lineno', 0) or 0, getattr(e, 'offset', 0) or 0,\n"
	"              str(getattr(e, 'msg', e)).replace('\\n', ' ')))\n"
	"        continue\n"
	"    names = set()\n"
	"    walk(tree.body, names)\n"
	"    print('ok\\t' + ' '.join(sorted(names)))\n";

typedef struct pymod {
	const kgb_candidate_t *cd;
	char *module;              /* the module's source name */
	const kgb_source_t *src;
	char *line;                /* parse_py's line for it */
} pymod_t;

/* Run parse_py once over every module; each gets its line. */
static int parse_all(const char *python, pymod_t *mods, size_t n, char *err, size_t errlen)
{
	char dir[] = "/tmp/kgb-pymod.XXXXXX";
	char path[sizeof dir + 32];
	const char **argv = kgb_xcalloc(2 * n + 4, sizeof *argv);
	char **files = kgb_xcalloc(n, sizeof *files);
	char *text = NULL;
	int rc = -1;

	if (!mkdtemp(dir)) {
		free(argv);
		free(files);
		return kgb_err(err, errlen, "cannot make a temporary directory: %s", strerror(errno));
	}
	snprintf(path, sizeof path, "%s/parse.py", dir);
	argv[0] = python;
	argv[1] = "-I";
	argv[2] = kgb_xstrdup(path);
	if (kgb_write_file_atomic(path, parse_py, sizeof parse_py - 1) < 0) {
		kgb_err(err, errlen, "cannot write in %s: %s", dir, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		files[i] = kgb_xasprintf("%s/m%zu.py", dir, i);
		if (kgb_write_file_atomic(files[i], mods[i].src->content, mods[i].src->len) < 0) {
			kgb_err(err, errlen, "cannot write in %s: %s", dir, strerror(errno));
			goto out;
		}
		argv[3 + 2 * i] = files[i];
		argv[4 + 2 * i] = mods[i].module;
	}
	char res[sizeof dir + 16], errf[sizeof dir + 16];
	snprintf(res, sizeof res, "%s/out", dir);
	snprintf(errf, sizeof errf, "%s/err", dir);
	int st = kgb_cli_run_child(argv, "/dev/null", res, errf, dir, PARSE_TIMEOUT_S);
	size_t len = 0;
	char e[128];
	text = st == 0 ? kgb_read_file(res, &len, e, sizeof e) : NULL;
	char *p = text;
	for (size_t i = 0; p && i < n; i++) {
		char *nl = strchr(p, '\n');
		if (!nl || (strncmp(p, "ok\t", 3) != 0 && strncmp(p, "syntax\t", 7) != 0))
			break;
		*nl = 0;
		mods[i].line = kgb_xstrdup(p);
		p = nl + 1;
	}
	if (n && !mods[n - 1].line) {
		kgb_err(err, errlen, "%s could not parse the modules (exit status %d)", python, st);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++) {
		if (files[i])
			unlink(files[i]);
		free(files[i]);
	}
	unlink(path);
	snprintf(path, sizeof path, "%s/out", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/err", dir);
	unlink(path);
	rmdir(dir);
	free((char *)argv[2]);
	free(argv);
	free(files);
	free(text);
	return rc;
}

/* Is name among the space-separated names? */
static bool defines(const char *names, const char *name)
{
	size_t l = strlen(name);
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == l && strncmp(p, name, l) == 0)
			return true;
		p += n + (e != NULL);
	}
	return false;
}

/* The module's names that begin with the operator's (what it does define for it). */
static void own_names(const char *names, const char *op, char *buf, size_t n)
{
	size_t ol = strlen(op), used = 0;
	buf[0] = 0;
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ' ');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l >= ol && strncmp(p, op, ol) == 0 && (l == ol || p[ol] == '_') && used + l + 3 < n)
			used += (size_t)snprintf(buf + used, n - used, "%s%.*s", used ? ", " : "", (int)l, p);
		p += l + (e != NULL);
	}
}

/* Check one parsed module: 0, 1 (only a note: res->notes), -1 with err. */
static int check_module(pymod_t *pm, kgb_pymod_check_t *res, char *err, size_t errlen)
{
	const kgb_candidate_t *cd = pm->cd;
	const char *module = pm->module;
	char *line = pm->line;   /* split in place */
	if (strncmp(line, "syntax\t", 7) == 0) {
		char *f[3] = { line + 7, NULL, NULL };
		for (int i = 1; i < 3; i++) {
			f[i] = strchr(f[i - 1], '\t');
			if (f[i])
				*f[i]++ = 0;
		}
		return kgb_err(err, errlen, "%s: module %s: line %s, column %s: %s (Python's parser; nothing was run)",
		               cd->origin, module, f[0], f[1] ? f[1] : "0", f[2] ? f[2] : "syntax error");
	}
	const char *names = line + 3;
	const kgb_op_t *op = kgb_catalog_find(cd->op);
	char missing[1024] = "";
	size_t used = 0, nmiss = 0;
	bool aten = op && strcmp(op->source, "aten") == 0;
	for (size_t i = 0; aten && i < KGB_ARRAY_LEN(aten_wrappers); i++) {
		const struct aten_wrapper *w = &aten_wrappers[i];
		if (strcmp(w->op, cd->op) != 0 || defines(names, w->function))
			continue;
		nmiss++;
		if (used + 64 < sizeof missing)
			used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s (aten::%s)", used ? ", " : "",
			                         w->function, w->overload);
	}
	if (!aten && !defines(names, cd->op)) {
		nmiss++;
		snprintf(missing, sizeof missing, "%s (the function every %s case calls)", cd->op, cd->op);
	}
	if (nmiss == 0)
		return 0;
	char own[512];
	own_names(names, cd->op, own, sizeof own);
	char msg[2048];
	snprintf(msg, sizeof msg, "%s: module %s defines no %s; %s%s", cd->origin, module, missing,
	         own[0] ? "it defines " : "it defines nothing named after the operator", own);
	if (cd->cases_json) {
		/* a case selection may leave the missing overloads' cases out */
		size_t l = strlen(res->notes);
		snprintf(res->notes + l, sizeof res->notes - l, "%snote: %s (only a problem if the selected cases call it)",
		         l ? "\n" : "", msg);
		return 1;
	}
	return kgb_err(err, errlen, "%s", msg);
}

int kgb_cli_pymod_check(const kgb_manifest_t *m, const char *python_name, kgb_pymod_check_t *res, char *err,
                        size_t errlen)
{
	memset(res, 0, sizeof *res);
	pymod_t *mods = kgb_xcalloc(m->ncandidates + 1, sizeof *mods);
	size_t n = 0;
	int rc = 0;
	for (size_t i = 0; i < m->ncandidates; i++) {
		char sub[256], *module = NULL;
		const kgb_candidate_t *cd = &m->candidates[i];
		if (!cd->plan_json ||
		    kgb_plan_kind(cd->plan_json, strlen(cd->plan_json), cd->origin, &module, sub, sizeof sub) !=
		            KGB_CAND_PYTHON) {
			free(module);
			continue;
		}
		for (size_t j = 0; module && j < cd->nsources && !mods[n].src; j++)
			if (strcmp(cd->sources[j].name, module) == 0 && cd->sources[j].content)
				mods[n].src = &cd->sources[j];
		if (!mods[n].src) {
			free(module);   /* the manifest's own check names it */
			continue;
		}
		mods[n].cd = cd;
		mods[n++].module = module;
	}
	char *python = n ? kgb_find_program(python_name) : NULL;
	if (n && !python) {
		snprintf(res->skipped, sizeof res->skipped, "%s not found on PATH", python_name);
		res->unparsed = n;
	} else if (n && parse_all(python, mods, n, err, errlen) < 0) {
		rc = -1;
	} else {
		res->modules = n;
		for (size_t i = 0; i < n; i++) {
			char one[2048];
			if (check_module(&mods[i], res, one, sizeof one) < 0) {
				size_t l = strlen(res->errors);
				snprintf(res->errors + l, sizeof res->errors - l, "%s%s", l ? "\n" : "", one);
				res->refused++;
			}
		}
		if (res->refused) {
			kgb_err(err, errlen, "%zu of %zu Python module(s) refused", res->refused, n);
			rc = -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(mods[i].module);
		free(mods[i].line);
	}
	free(mods);
	free(python);
	return rc;
}
