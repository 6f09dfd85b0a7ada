/* kgb validate: parse a manifest's Python + Triton modules and check they define the
 * functions their cases call (pymod_check.c). */
#ifndef KGB_CLI_PYMOD_CHECK_H
#define KGB_CLI_PYMOD_CHECK_H

#include <stddef.h>

struct kgb_manifest;

typedef struct kgb_pymod_check {
	size_t modules;         /* modules parsed */
	size_t unparsed;        /* python candidates not parsed (skipped says why) */
	char skipped[256];
	size_t refused;         /* modules with a syntax error or a missing function */
	char errors[8192];      /* one line per refused module */
	char notes[4096];       /* missing functions of candidates with a case selection */
} kgb_pymod_check_t;

/* Parse every python candidate's module of m (resolved) with python_name (a path or a
 * name on PATH; Python's ast, nothing imported) and check it defines the function of
 * every overload its operator's cases call. Returns 0 (res->notes may hold notes;
 * res->skipped says why nothing was parsed), or -1 with err saying how many modules
 * were refused and res->errors a line per module naming the candidate, the module and
 * the syntax error's line and column, or the functions missing. */
int kgb_cli_pymod_check(const struct kgb_manifest *m, const char *python_name, kgb_pymod_check_t *res, char *err,
                        size_t errlen);

#endif
