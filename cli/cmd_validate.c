/* kgb validate FILE: check a campaign manifest offline. */
#include <libgen.h>
#include <string.h>

#include "cli.h"
#include "manifest.h"
#include "pymod_check.h"
#include "triton_check.h"
#include "util.h"
#include "wire.h"

/* Load and resolve a manifest; see cli.h. */
int kgb_cli_load_manifest(const char *path, unsigned flags, kgb_manifest_t **out, char *err, size_t errlen)
{
	char rerr[512];
	size_t len = 0;
	kgb_manifest_t *m = NULL;
	char *dircopy = NULL;
	int rc = -1;

	*out = NULL;
	char *text = kgb_read_regular_file(path, KGB_MAX_FRAME_CLI, &len, rerr, sizeof rerr);
	if (!text) {
		kgb_err(err, errlen, "%s: cannot read the manifest: %s", path, rerr);
		goto out;
	}
	if (kgb_manifest_parse(text, len, path, false, &m, err, errlen) < 0)
		goto out;
	dircopy = kgb_xstrdup(path);
	if (kgb_manifest_resolve_ex(m, dirname(dircopy), kgb_cli_fetch, flags, err, errlen) < 0)
		goto out;
	*out = m;
	m = NULL;
	rc = 0;
out:
	kgb_manifest_destroy(&m);
	free(dircopy);
	free(text);
	return rc;
}

/* Operators a manifest covers: its list, or else the distinct operators of its
 * candidates. */
static size_t count_ops(const kgb_manifest_t *m)
{
	size_t n = 0;

	if (m->nops > 0)
		return m->nops;
	for (size_t i = 0; i < m->ncandidates; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(m->candidates[i].op, m->candidates[j].op) == 0;
		n += !seen;
	}
	return n;
}

/* kgb validate FILE. */
int kgb_cli_cmd_validate(int argc, char **argv, kgb_cli_global_t *g)
{
	bool outside = false, no_triton = false;
	const char *target = "cuda:90", *python = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "allow-outside-sources", 0, KGB_CLI_OPT_FLAG, &outside, NULL,
		  "let plan and source files resolve outside the manifest's directory" },
		{ "triton-target", 0, KGB_CLI_OPT_STRING, &target, "cuda:ARCH",
		  "compile Triton kernels for this target (default cuda:90)" },
		{ "triton-python", 0, KGB_CLI_OPT_STRING, &python, "PY",
		  "python with triton (default $KGB_TRITON_PYTHON or python3)" },
		{ "no-triton", 0, KGB_CLI_OPT_FLAG, &no_triton, NULL, "do not compile Triton kernels" },
	};
	const kgb_cli_spec_t spec0 = {
		.name = "validate",
		.usage = "FILE [--allow-outside-sources] [--triton-target cuda:ARCH] [--triton-python PY] [--no-triton]",
		.summary = "Check a campaign manifest the way `kgb submit` does (operators, plans,\n"
		           "sources, URLs) without contacting the coordinator. Where Python with Triton\n"
		           "is installed, every Triton kernel is also compiled for an explicit target (no\n"
		           "GPU needed), so a signature or configuration that cannot compile is refused.\n"
		           "Python + Triton modules are parsed (never imported) and must define the\n"
		           "function of every ATen overload their operator's cases call.",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 1,
	};
	char *pos[1];
	int npos = 0;
	char err[1024];
	kgb_manifest_t *m = NULL;

	int r = kgb_cli_parse_args(&spec0, argc, argv, g, pos, &npos, NULL, 0);
	if (r >= 0)
		return r;
	if (kgb_cli_load_manifest(pos[0], outside ? KGB_MANIFEST_ALLOW_OUTSIDE : 0, &m, err, sizeof err) < 0) {
		fprintf(stderr, "kgb validate: %s\n", err);
		return KGB_CLI_EXIT_USAGE;
	}
	const char *py = python ? python : getenv("KGB_TRITON_PYTHON");
	kgb_pymod_check_t pc;
	if (kgb_cli_pymod_check(m, py && *py ? py : "python3", &pc, err, sizeof err) != 0) {
		if (pc.errors[0])
			fprintf(stderr, "%s\n", pc.errors);
		fprintf(stderr, "kgb validate: %s\n", err);
		kgb_manifest_destroy(&m);
		return KGB_CLI_EXIT_USAGE;
	}
	kgb_triton_check_t tc;
	memset(&tc, 0, sizeof tc);
	if (!no_triton) {
		if (kgb_cli_triton_check(m, target, py && *py ? py : "python3", &tc, err, sizeof err) != 0) {
			fprintf(stderr, "kgb validate: %s\n", err);
			kgb_manifest_destroy(&m);
			return KGB_CLI_EXIT_USAGE;
		}
	}
	printf("ok: %zu candidates, %zu operators\n", m->ncandidates, count_ops(m));
	if (pc.modules)
		printf("python: %zu module(s) parse and define the function of every overload their cases call\n",
		       pc.modules);
	if (pc.notes[0])
		printf("%s\n", pc.notes);
	if (pc.unparsed)
		printf("note: %zu Python module(s) not parsed: %s (--triton-python PY names a python)\n", pc.unparsed,
		       pc.skipped);
	if (tc.kernels && tc.skipped[0])
		printf("note: %zu Triton kernel(s) not compiled: %s (--triton-python PY names a python with triton)\n",
		       tc.kernels, tc.skipped);
	else if (tc.kernels)
		printf("triton: %zu kernel(s) compile for %s (%zu compiles, Triton %s)\n", tc.kernels, target, tc.compiled,
		       tc.version);
	kgb_manifest_destroy(&m);
	return KGB_CLI_OK;
}
