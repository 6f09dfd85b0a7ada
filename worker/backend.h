/* The backend interface: one const struct per vendor runtime (opencl, cuda, hip,
 * level-zero). The core (executor.c) never calls a vendor API directly.
 *
 * Lifecycle. probe() runs in the worker daemon at start-up and reports devices; it
 * must not leave a context behind that would break fork() (OpenCL/CUDA state is only
 * created in executor children). open() .. close() run inside one executor child
 * process, for one device. A backend whose vendor library is missing returns 0 devices
 * from probe() and says why in `why`; it is not an error.
 *
 * Errors: every call returns 0 or a negative KGB_BE_* code, with the vendor's message
 * text in the ctx's last-error buffer (kgb_backend_t.last_error). */
#ifndef KGB_BACKEND_H
#define KGB_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "plan.h"

#define KGB_BE_OK 0
#define KGB_BE_ERR -1            /* generic failure (launch_error) */
#define KGB_BE_COMPILE -2        /* compile_error */
#define KGB_BE_RESOURCE -3       /* too much shared/local memory, registers, block size */
#define KGB_BE_FAULT -4          /* illegal address / trap: the context is dead */
#define KGB_BE_TIMEOUT -5
#define KGB_BE_UNSUPPORTED -6    /* language not supported by this backend */
#define KGB_BE_NOMEM -7

/* The most samples one run_samples call takes. */
#define KGB_BE_MAX_BATCH 1024

typedef struct kgb_device_info {
	char backend[16];
	char name[128];
	char arch[64];
	char driver_version[64];
	uint64_t memory_bytes;
	uint64_t l2_bytes;
	uint32_t compute_units;
	uint32_t index;              /* index within this backend */
	unsigned caps;               /* KGB_CAP_* */
} kgb_device_info_t;

enum {
	KGB_CAP_FP16 = 1u << 0,
	KGB_CAP_FP64 = 1u << 1,
	KGB_CAP_L2_FLUSH = 1u << 2,
	KGB_CAP_CLOCKS = 1u << 3,     /* can read SM clock / temperature / throttling */
};

typedef struct kgb_dbuf kgb_dbuf_t;       /* a device buffer (backend-defined) */
typedef struct kgb_module kgb_module_t;   /* a compiled kernel, ready to launch */

typedef enum { KGB_LARG_BUF = 0, KGB_LARG_SCALAR, KGB_LARG_LOCAL } kgb_larg_kind_t;
typedef struct kgb_larg {
	kgb_larg_kind_t kind;
	kgb_dbuf_t *buf;             /* BUF (NULL means a null pointer) */
	uint8_t bytes[8];            /* SCALAR value, little-endian, `size` bytes */
	size_t size;                 /* SCALAR size; LOCAL bytes */
} kgb_larg_t;

typedef struct kgb_launch {
	kgb_module_t *mod;
	uint64_t grid[3];            /* blocks / work-groups */
	uint64_t block[3];           /* threads / work-items per block */
	size_t shared_bytes;         /* dynamic shared memory */
	kgb_larg_t *args;
	size_t nargs;
	uint32_t cluster[3];         /* 0 = no cluster */
	/* A library routine instead of a kernel (native candidates, docs/native.md): when
	 * call is set, mod, grid, block and args are ignored and the run calls
	 * call(call_arg, err, errlen) at this launch's place, between the same events. It
	 * queues its work on the backend's stream (a library handle bound to
	 * kgb_backend_t.stream) and returns 0, or a KGB_BE_* code with err filled. */
	int (*call)(void *call_arg, char *err, size_t errlen);
	void *call_arg;
} kgb_launch_t;

/* One device-side step that restores a buffer before each timed sample (a batch of
 * samples, run_samples): copy `bytes` of src into dst, from byte k * stride of src
 * for sample k of the batch (stride 0: the same bytes every sample; a stride gives
 * every sample inputs of its own from a pool), or, when src is NULL, fill dst's first
 * `bytes` with `byte`. Both are queued on the executor's stream. */
typedef struct kgb_prep {
	kgb_dbuf_t *dst;
	kgb_dbuf_t *src;
	uint8_t byte;
	size_t bytes;
	size_t stride;
} kgb_prep_t;

/* What the compile step needs to know about one kernel of a plan, after the case's
 * symbols have been substituted into defines and options. */
typedef struct kgb_compile_req {
	kgb_lang_t lang;
	const char *entry;
	const char *source;          /* NUL-terminated source text (or binary for cubin) */
	size_t source_len;
	const char *name;            /* source file name, for messages */
	const char **define_names;   /* -D name=value */
	const char **define_values;
	size_t ndefines;
	const char *options;         /* extra options or NULL */
	const char *const *tensor_names;   /* tensors of the case, for per-tensor helpers */
	const kgb_dtype_t *tensor_dtypes;
	size_t ntensors;
	const kgb_plan_config_t *config;   /* Triton: the configuration to compile */
	const char *signature;       /* Triton signature or NULL */
	/* Triton: the binary Triton compiled for this launch in the recording of a Python
	 * candidate, and its ABI text (kernel.abi.json's format): loaded as it is instead
	 * of compiling the source. NULL: compile. */
	const char *prebuilt;
	size_t prebuilt_len;
	const char *prebuilt_abi;
	size_t prebuilt_abi_len;
} kgb_compile_req_t;

typedef struct kgb_clock_info {
	double sm_clock_mhz;
	double temperature_c;
	bool throttled;
} kgb_clock_info_t;

typedef struct kgb_backend {
	const char *name;                     /* "opencl" */
	unsigned langs;                       /* bit (1u << kgb_lang_t) per language it runs */
	/* Fill up to max devices; return the count (0 if the runtime is absent, with the
	 * reason in why). */
	int (*probe)(kgb_device_info_t *out, int max, char *why, size_t whylen);
	/* Executor side. open() creates the context on device `index`. */
	int (*open)(uint32_t index, void **ctx, char *err, size_t errlen);
	/* Optional, executor side, before open(): the host's part of it (the runtime loaded
	 * and initialised, nothing created on a device), which open() then finds done; the
	 * executor calls it outside the device lock. KGB_BE_OK or an error open() would
	 * also meet. */
	int (*prepare)(char *err, size_t errlen);
	void (*close)(void *ctx);
	const char *(*last_error)(void *ctx);
	int (*alloc)(void *ctx, size_t bytes, kgb_dbuf_t **out);
	void (*free)(void *ctx, kgb_dbuf_t *b);
	/* Sub-range of a buffer (for guard bands): offset must be a multiple of
	 * KGB_GUARD_BYTES. The view is freed with free(); it must not outlive its parent. */
	int (*view)(void *ctx, kgb_dbuf_t *parent, size_t offset, size_t bytes, kgb_dbuf_t **out);
	int (*write)(void *ctx, kgb_dbuf_t *b, size_t off, const void *src, size_t n);
	int (*read)(void *ctx, kgb_dbuf_t *b, size_t off, void *dst, size_t n);
	int (*fill)(void *ctx, kgb_dbuf_t *b, size_t off, uint8_t byte, size_t n);
	/* Compile one kernel. log gets the compiler's output (bounded). */
	int (*compile)(void *ctx, const kgb_compile_req_t *req, kgb_module_t **out, char *log, size_t loglen);
	void (*module_free)(void *ctx, kgb_module_t *m);
	/* Run launches[0..n) in order on the executor's stream and wait for them, at most
	 * timeout_ms. If elapsed_ns != NULL, measure device time from the start of the
	 * first launch to the end of the last (events / profiling). */
	int (*run)(void *ctx, const kgb_launch_t *launches, size_t n, uint32_t timeout_ms, double *elapsed_ns);
	/* Queue `count` timing samples back to back and wait once, at most timeout_ms for
	 * the whole batch. A sample is what a timed run is when the executor drives it one
	 * at a time: the prep steps, scrub_local when scrub is true, flush_cache, then
	 * launches[0..n) between two events; sample_ns[k] gets sample k's launch time (its
	 * events). *busy_ns gets the device time from the start of the first sample's prep
	 * to the end of its last launch, everything the batch kept the device busy with.
	 * KGB_BE_UNSUPPORTED (nothing queued) where the runtime has no such path: the
	 * executor runs samples one by one. May be NULL. */
	int (*run_samples)(void *ctx, const kgb_prep_t *prep, size_t nprep, const kgb_launch_t *launches, size_t n,
	                   size_t count, uint32_t timeout_ms, double *sample_ns, double *busy_ns, bool scrub);
	/* Evict caches between timing samples (no-op where the device has none to flush). */
	int (*flush_cache)(void *ctx);
	/* Clocks and throttling, where exposed (may be NULL). */
	int (*clocks)(void *ctx, kgb_clock_info_t *out);
	/* A known-good kernel runs and gives the right answer. 0 = healthy. */
	int (*health)(void *ctx);
	/* Device visibility per executor (docs/multi-gpu.md). visible_env names the
	 * variable that limits the vendor runtime to a list of devices
	 * ("CUDA_VISIBLE_DEVICES"): the executor child of device N gets it set to N (or to
	 * the N-th entry of the worker's own value) and opens device 0, the only one it
	 * sees. NULL where the runtime has no such variable (OpenCL): the child opens
	 * device N among all. order_env, "NAME=VALUE" or NULL, is set (unless the user
	 * set NAME) in the worker before probe() and in every child, so that both number
	 * the devices the same way ("CUDA_DEVICE_ORDER=PCI_BUS_ID"). */
	const char *visible_env;
	const char *order_env;
	/* Native library calls (docs/native.md); NULL where the backend has none. blas
	 * names the BLAS library its runtime pairs with ("cublas", "hipblas"); stream
	 * returns the executor's stream (a CUstream / hipStream_t) that library handles are
	 * bound to; addr returns a buffer's (or view's) device address. */
	const char *blas;
	void *(*stream)(void *ctx);
	uint64_t (*addr)(void *ctx, kgb_dbuf_t *b);
	/* Overwrite the device's local (shared) memory, all of it on every compute unit
	 * where the runtime allows, and put the loaded modules' global variables back to
	 * their values at load where the backend can (CUDA), so that a launch finds nothing
	 * an earlier launch left there: queued before every timing sample, outside its
	 * events (docs/security.md). NULL where the backend has no such step. */
	int (*scrub_local)(void *ctx);
} kgb_backend_t;

/* Registry of compiled-in backends, in probe order. */
extern const kgb_backend_t kgb_backend_opencl;
extern const kgb_backend_t kgb_backend_cuda;
extern const kgb_backend_t kgb_backend_hip;
extern const kgb_backend_t kgb_backend_level_zero;
const kgb_backend_t *const *kgb_backends(size_t *n);
const kgb_backend_t *kgb_backend_find(const char *name);

#endif
