/* Python + Triton candidates (docs/python-candidates.md).
 *
 * A python candidate is a KernelGenBench-format module: @triton.jit kernels and a
 * wrapper per overload. The worker never times that Python. For each case it runs the
 * recorder (worker/pyrec/kgb_record.py) in a sandboxed child, which calls the wrapper
 * once on tensors laid out exactly as the case's and records every Triton launch, every
 * allocation and the returned output; the recorder turns the recording into a launch
 * plan of the ordinary kind (literal grids and scalars, kgb's tensors, scratch for the
 * wrapper's intermediates). The plan is parsed and checked here against the operator;
 * the CUDA backend then compiles and replays it with kgb's buffers, poison, stream and
 * timer like any Triton plan. A wrapper that computes on the host, launches nothing,
 * reads device data, points a launch outside every known buffer, or does not import
 * gets its own verdict instead of a plan. */
#ifndef KGB_PYCAND_H
#define KGB_PYCAND_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "plan.h"

typedef struct kgb_pycand_out {
	int verdict;            /* KGB_V_PASS (a plan was made), a refusal, or another KGB_V_* */
	char message[512];      /* why, for anything but KGB_V_PASS */
	char *recording;        /* recording.json as written by the recorder (owned), or NULL */
	char *plan_json;        /* the plan's JSON (owned), only with KGB_V_PASS */
	kgb_plan_t *plan;       /* plan_json parsed and checked against the case's operator */
} kgb_pycand_out_t;

/* The recorder's request for case c: the module's text (saved as source_name in the
 * child's private directory), the wrapper to call, the case's input tensors in order
 * as positional arguments (kgb's dtype, sizes and strides), its scalars as keyword
 * arguments, and its outputs. compile_arch > 0 also compiles every launch for
 * cuda:sm_<arch> (the binaries land next to the recording). Returns JSON text (caller
 * frees). */
char *kgb_pycand_request(const kgb_case_t *c, const char *source, size_t len, const char *source_name,
                         const char *function, bool allow_sync, int compile_arch);

/* Where the recorder lives: $KGB_PYREC, next to the binary, in libexec, or in the
 * source tree. NULL when not found. Caller frees. */
char *kgb_pycand_find_recorder(void);

/* Run the recorder (python: an absolute path) on request in a sandboxed child (private
 * directory, clean environment, no network where possible, rlimits, wall limit), then
 * read its verdict and, on a pass, parse and check its plan against c's operator.
 * Returns 0 with *out filled (whatever the verdict), or -1 with err when the recorder
 * could not run at all (missing torch/Triton, a crash of the interpreter: not the
 * candidate's fault). Release out with kgb_pycand_out_release. */
int kgb_pycand_record(const char *python, const char *recorder, const char *request, const kgb_case_t *c,
                      kgb_pycand_out_t *out, char *err, size_t errlen);
void kgb_pycand_out_release(kgb_pycand_out_t *o);

#endif
