/* Native candidates of ATen and vLLM operators (docs/native.md): the operator's own
 * library, PyTorch (torch.ops.aten) or vLLM (or its PyTorch composite), run by a
 * provider process, `python -m kgb.providers.run`, under kgb's inputs, poison,
 * validator and timing rule.
 *
 * The provider runs in a sandboxed child (kgb_sandbox_run: private directory, clean
 * environment, its own network namespace and process group, a wall limit). It appends
 * one JSON line per case to a results file outside that directory; a thread of the
 * caller follows the file while the child runs and hands every case to the caller as
 * soon as it ends, so results reach the worker case by case, and each case's run is a
 * "launch" for the worker's watchdog. Cases the provider never reported get a verdict
 * from how it ended (timeout, crash with its output, unsupported when torch does not
 * import, infra_error when Python cannot start). */
#ifndef KGB_NATIVE_PROVIDER_H
#define KGB_NATIVE_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/kgb.pb-c.h"

typedef struct kgb_native_case {
	uint32_t case_index;
	int verdict;                /* KGB_V_* */
	const char *message;
	double max_abs_err, max_rel_err;
	bool timed;                 /* the case is timed in this job */
	bool has_timing;            /* timing holds the measurement (a passing timed case) */
	Kgb__Timing timing;         /* method: "<timer> [<library>]" */
	double occupied_ns;         /* how long its timing kept the device busy (0: not given) */
	/* where the provider's time for the case went, in ms ("prof" in its line; 0: not
	 * given): inputs, reference, transfer (uploads and copies back), run (the library's
	 * calls of the validated runs), validate, timing, wait (for the device lock); and the
	 * reference cache's hits and misses in the case */
	struct {
		double inputs, reference, transfer, run, validate, timing, wait;
		uint64_t hits, misses;
	} prof;
} kgb_native_case_t;

typedef struct kgb_native_job {
	const char *op;             /* operator name (ATen or vLLM) */
	const uint32_t *cases;
	size_t ncases;
	uint64_t seed;
	const char *device;         /* "cpu", "cuda:0", ... as torch names it */
	bool timing;
	uint32_t budget_ms;         /* timing budget per case (0: 500) */
	uint32_t case_limit_ms;     /* the job's time limit, for the child's wall limit */
	/* the device's lock (KGB_DEVICE_LOCK), which the provider takes around each case's
	 * device work; NULL: none (one slot, or the caller holds it for the whole job) */
	const char *device_lock;
	/* called from the reader thread: a case waits for the device lock, a case starts
	 * (launch window opens), a case ended */
	void (*on_wait)(void *arg, uint32_t case_index);
	void (*on_start)(void *arg, uint32_t case_index);
	void (*on_case)(void *arg, const kgb_native_case_t *r);
	/* a line for the job log */
	void (*on_log)(void *arg, const char *line);
	void *arg;
} kgb_native_job_t;

/* The device string torch uses for device `index` of backend `backend` ("cuda" and
 * "hip": cuda:N; "level-zero": xpu:N; anything else, OpenCL included: cpu). */
void kgb_native_device(const char *backend, uint32_t index, char *out, size_t outlen);

/* The Python that runs the provider: $KGB_PYTHON, else python3 on $PATH; an absolute
 * path (caller frees), or NULL. */
char *kgb_native_find_python(void);

/* Can this worker run native candidates? Runs its provider's Python (kgb_native_find_
 * python) once, sandboxed with a wall limit of wall_ms, to import torch. Returns true
 * when it imports; note gets the Python with torch's version, or why not ("torch does
 * not import in PY: ..."): Register.native_note. */
bool kgb_native_probe(uint32_t wall_ms, char *note, size_t notelen);

/* Run the job: every case of job->cases is reported exactly once through on_case, in
 * order. Returns 0, or -1 when the provider could not be started at all (every case
 * then reported as infra_error with err's text). */
int kgb_native_run(const kgb_native_job_t *job, char *err, size_t errlen);

#endif
