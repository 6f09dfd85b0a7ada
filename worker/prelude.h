/* The OpenCL prelude: text the worker puts in front of every OpenCL candidate source
 * (docs/TEAM-NOTES.md, "OpenCL prelude"; docs/worker.md). */
#ifndef KGB_PRELUDE_H
#define KGB_PRELUDE_H

#include <stddef.h>
#include "dtype.h"

/* Build the prelude for a case whose tensors are names[0..n) with dtypes[0..n):
 * bf16 helpers, T_<name>, LOAD_<name>(p, i), STORE_<name>(p, i, v) and
 * KGB_DTYPE_<name>_<dtype> for every tensor, ending with a `#line 1 "<file>"` so the
 * compiler's messages point into the candidate's own file (file may be NULL).
 * Returns a heap string the caller frees. */
char *kgb_prelude_opencl(const char *const *names, const kgb_dtype_t *dtypes, size_t n, const char *file);

#endif
