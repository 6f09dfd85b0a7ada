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
#include <stdint.h>

#include "catalog.h"
#include "compile.h"
#include "plan.h"

/* Where a case's recording went, in seconds (recording.json's "seconds"; the executor
 * sums them into the job's r_*_ms figures): the device lock and the CUDA context before
 * the case, importing the module, making its inputs, the wrapper's call, keeping
 * Triton's binaries, compiling the launches, and the whole of the case's recording. */
enum { KGB_PYREC_S_LOCK, KGB_PYREC_S_CONTEXT, KGB_PYREC_S_IMPORT, KGB_PYREC_S_INPUTS, KGB_PYREC_S_CALL,
       KGB_PYREC_S_KEEP, KGB_PYREC_S_COMPILE, KGB_PYREC_S_TOTAL, KGB_PYREC_NSEC };

typedef struct kgb_pycand_out {
	int verdict;            /* KGB_V_PASS (a plan was made), a refusal, or another KGB_V_* */
	char message[512];      /* why, for anything but KGB_V_PASS */
	char *recording;        /* recording.json as written by the recorder (owned), or NULL */
	char *plan_json;        /* the plan's JSON (owned), only with KGB_V_PASS */
	kgb_plan_t *plan;       /* plan_json parsed and checked against the case's operator */
	char *steps;            /* the wrapper's copies and fills kgb replays, "; "-joined (owned), or NULL */
	double sec[KGB_PYREC_NSEC]; /* where its recording's time went (0 where not reported) */
} kgb_pycand_out_t;

/* The source name a recorded plan gives kgb's own kernels for a wrapper's copies and
 * fills on the host (worker/pyrec/kgb_steps.py, installed next to the recorder). */
#define KGB_PYCAND_STEPS "kgb_steps.py"

/* The recorder's request for case c: the module's text (saved as source_name in the
 * child's private directory), the wrapper to call (NULL: null, the recorder names it
 * from the case's overload; see kgb_pycand_function), the case's input tensors in order
 * as positional arguments (kgb's dtype, sizes and strides), its scalars as keyword
 * arguments, and its outputs. compile_arch > 0 also compiles every launch for
 * cuda:sm_<arch> (the binaries land next to the recording). Returns JSON text (caller
 * frees). */
char *kgb_pycand_request(const kgb_case_t *c, const char *source, size_t len, const char *source_name,
                         const char *function, bool allow_sync, int compile_arch);

/* Where the recorder lives: $KGB_PYREC, next to the binary, in libexec, or in the
 * source tree. NULL when not found. Caller frees. */
char *kgb_pycand_find_recorder(void);

/* The text of kgb's step kernels next to the recorder (a path as found by
 * kgb_pycand_find_recorder), or NULL with err. Caller frees. */
char *kgb_pycand_steps_source(const char *recorder, size_t *len, char *err, size_t errlen);

/* Run the recorder (python: an absolute path) on request in a sandboxed child (private
 * directory, clean environment, no network where possible, rlimits, wall limit), then
 * read its verdict and, on a pass, parse and check its plan against c's operator.
 * Returns 0 with *out filled (whatever the verdict), or -1 with err when the recorder
 * could not run at all (missing torch/Triton, a crash of the interpreter: not the
 * candidate's fault). Release out with kgb_pycand_out_release. */
int kgb_pycand_record(const char *python, const char *recorder, const char *request, const kgb_case_t *c,
                      kgb_pycand_out_t *out, char *err, size_t errlen);
void kgb_pycand_out_release(kgb_pycand_out_t *o);

/* The wrapper case c calls, for the request (kgb_pycand_request's function): for a
 * vLLM or cuBLAS operator the baseline wrapper's name, which is the operator's, written
 * into buf; NULL for an ATen operator, whose wrapper the recorder names after the
 * overload the case calls (<op>_<overload>, <op> for the overload "default", as
 * KernelGenBench registers them: torch_aten.wrapper_name), the one place that rule
 * lives. Returns buf or NULL. */
const char *kgb_pycand_function(const kgb_case_t *c, char *buf, size_t n);

/* Record n requests (each made by kgb_pycand_request for cases[i], all of one module)
 * in one sandboxed recorder: torch and Triton are imported once, every case is then
 * recorded in its own forked child with a fresh import of the module. interpret: 1
 * CPU tensors and Triton's interpreter (a backend that cannot run Triton binaries),
 * 0 the GPU, -1 the GPU when there is one; device_index >= 0: the GPU to record on
 * (torch's numbering). as_bytes: the batch's RLIMIT_AS (0: none;
 * a CUDA context reserves far more address space than it uses). device_lock: the
 * device lock's path (KGB_DEVICE_LOCK), which each case's child then holds shared,
 * the way a validation run does, from before it touches the device until its
 * recording is written (NULL: no lock; KGB_DEVLOCK_TRACE traces the holds). Fills outs[i] for
 * every case (release each with kgb_pycand_out_release): a case whose child died
 * gets KGB_V_CRASH, one without a readable recording KGB_V_INFRA_ERROR, with a
 * message. Returns 0, -2 with err when the recorder's Python lacks torch or
 * Triton, or -1 with err when the recorder did not run at all. info (may be NULL)
 * says how the batch was recorded. */
typedef struct kgb_pycand_batch_info {
	double startup_s;   /* the recorder's start-up before the batch (0 when unknown) */
	bool server;        /* recorded by the worker's recorder server (a fork, no import) */
} kgb_pycand_batch_info_t;
int kgb_pycand_record_batch(const char *python, const char *recorder, char *const *requests, size_t n,
                            const kgb_case_t *const *cases, int interpret, int device_index, uint64_t as_bytes,
                            const char *device_lock, kgb_pycand_out_t *outs, kgb_pycand_batch_info_t *info,
                            char *err, size_t errlen);

/* The recorder server (docs/python-candidates.md, "The recorder server"): one long-lived
 * recorder per mode (interpret 0: on the device, 1: Triton's interpreter) with torch
 * and Triton imported, which forks a child per batch instead of a new Python importing
 * them. The worker makes a private directory, names it in KGB_PYREC_SERVER for its
 * executors, and runs kgb_pycand_server_run in a thread per mode.
 *
 * kgb_pycand_server_socket: the server's socket path for a mode (into buf), or NULL
 * when the worker runs none (kgb_pycand_record_batch then starts a recorder itself,
 * as it does when the socket takes no connection).
 * kgb_pycand_server_run: run the server in the sandbox until it ends (when its parent,
 * the worker, ends, or when it fails). Returns 0 when it ran (err says how it ended), -2
 * when its Python lacks torch or Triton, -1 with err when it could not be started. */
const char *kgb_pycand_server_socket(int interpret, char *buf, size_t n);
int kgb_pycand_server_run(const char *python, const char *recorder, int interpret, const char *socket_path,
                          char *err, size_t errlen);

/* The replayer (kgb_replay.py) next to the recorder, or NULL. Caller frees. */
char *kgb_pycand_find_replayer(const char *recorder);

/* Run the replayer (docs/python-candidates.md, "In the executor") on ncases recorded
 * plans: header is its JSON request line, blob the bytes it points into. Sandboxed as
 * the recorder is. Returns 0 with *sr holding the replayer's directory (read its files
 * with kgb_sandbox_read, then kgb_sandbox_release it), -2 with err when its Python
 * lacks torch or Triton, -1 with err when it did not run or failed as a whole. */
int kgb_pycand_replay_run(const char *python, const char *replayer, const char *header, const void *blob,
                          size_t bloblen, size_t ncases, kgb_sandbox_result_t *sr, char *err, size_t errlen);

/* The Python that records: $KGB_PYREC_PYTHON (what `kgb-worker --python` sets for its
 * executors), else $KGB_TRITON_PYTHON, else python3 on PATH, as an absolute path
 * (caller frees), or NULL. */
char *kgb_pycand_find_python(void);

/* Can this worker record Python candidates? Runs `PYTHON -s RECORDER --probe` once, in
 * a sandboxed child with a wall limit of wall_ms (it imports torch and Triton and
 * loads the PyTorch provider). Returns true when it can; note gets the Python with its
 * torch and Triton versions, or why not (no Python, no recorder, torch not importable
 * by ..., the probe's time ran out). */
bool kgb_pycand_probe(uint32_t wall_ms, char *note, size_t notelen);

#endif
