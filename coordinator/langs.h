/* Which kernel languages a platform can run, for the expansion of campaigns that
 * target every platform ("platforms": "all"): a platform whose backend cannot run a
 * candidate's languages is not one of that candidate's platforms. */
#ifndef KGB_COORD_LANGS_H
#define KGB_COORD_LANGS_H

/* Python + Triton candidates (a plan of kind "python"): not a kernel language of a
 * backend but of a worker, offered by the workers whose Python can record them
 * (Register.python); a bit of its own above the kernel languages. */
#define KGB_COORD_LANG_PYTHON (1u << 31)

/* The languages (bit 1u << kgb_lang_t) the worker backend named `backend` runs: the
 * same sets as the worker backends' `langs` (tests/unit/test_coord_langs.c holds them
 * equal). 0 for a backend this coordinator does not know (then nothing is filtered). */
unsigned kgb_coord_backend_langs(const char *backend);

/* The languages of a comma-separated list of names ("cuda,triton", "python"); unknown
 * names are ignored. */
unsigned kgb_coord_langs_parse(const char *csv);

/* The languages of a plan's kernels ("kernels"[i]."lang"), KGB_COORD_LANG_PYTHON for a
 * python candidate; 0 for a plan without kernels. */
struct json_t;
unsigned kgb_coord_plan_langs(const struct json_t *plan);

/* Whether a campaign that targets every platform sends a candidate of languages
 * `langs` to a platform of backend `backend`: yes unless the backend is known and
 * cannot run one of them (python is every backend's: its workers say whether they
 * record it). */
int kgb_coord_platform_runs(const char *backend, unsigned langs);

/* The kernel languages of langs by name, comma-separated ("cuda,triton"), into buf. */
#include <stddef.h>
char *kgb_coord_langs_names(unsigned langs, char *buf, size_t n);

#endif
