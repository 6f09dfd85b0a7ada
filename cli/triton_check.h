/* kgb validate: compile a manifest's Triton kernels for an explicit target
 * (triton_check.c). */
#ifndef KGB_CLI_TRITON_CHECK_H
#define KGB_CLI_TRITON_CHECK_H

#include <stddef.h>

struct kgb_manifest;

typedef struct kgb_triton_check {
	size_t kernels;         /* Triton kernels in the manifest's plans */
	size_t compiled;        /* compiles run (distinct signature and configuration) */
	char version[64];       /* Triton's version, when found */
	char skipped[1024];     /* non-empty: not checked, and why (no python with triton) */
} kgb_triton_check_t;

/* Compile every Triton kernel of m's (resolved) candidates for target ("cuda:90")
 * with python_name's Triton (a path or a name on PATH). Returns 0 when every compile
 * succeeded or none could run (res->skipped says why), or -1 with err naming the
 * candidate, kernel, configuration, signature, case and Triton's message. */
int kgb_cli_triton_check(const struct kgb_manifest *m, const char *target, const char *python_name,
                         kgb_triton_check_t *res, char *err, size_t errlen);

/* Run argv (argv[0] a path to a Python) in cwd with stdin, stdout and stderr from and
 * to the named files, in a clean environment (PATH of the interpreter's directory and
 * the system's, PYTHONPATH from KGB_TRITON_PYTHONPATH or PYTHONPATH, no HOME), killed
 * after timeout_s. Returns the exit status, 124 on timeout, 128+signal, -1 if it could
 * not start. */
int kgb_cli_run_child(const char *const argv[], const char *in_path, const char *out_path, const char *err_path,
                      const char *cwd, int timeout_s);

#endif
