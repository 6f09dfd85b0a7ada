/* The executor-facing glue every device backend shares (docs/backends.md, "Writing a
 * backend"): the context state (fault, hang, last error), buffers and views as device
 * addresses, range checks, copies and fills, the bounded wait for queued work, the run
 * loop around the vendor's launches, the health check, and the small text helpers the
 * compile steps use. A backend file keeps only its vendor calls: it fills one
 * kgb_be_vendor_t and points its kgb_backend_t entries at the kgb_be_* functions.
 *
 * A vendor context embeds kgb_be_ctx_t as its FIRST member, so the `void *ctx` the
 * executor passes is both. Vendor calls report a failure through kgb_be_fail(), which
 * marks the context dead on a fault; after a fault or a hang every shared entry point
 * refuses to touch the device (kgb_be_usable). */
#ifndef KGB_BACKEND_COMMON_H
#define KGB_BACKEND_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "compile.h"

#define KGB_BE_ERRLEN 2048

typedef struct kgb_be_ctx kgb_be_ctx_t;

/* What a backend's runtime does differently. Every function returns KGB_BE_OK or a
 * KGB_BE_* code with the message set (kgb_be_fail / kgb_be_set_err). A backend that
 * keeps its own buffer and run entry points (OpenCL) fills only `lost`. */
typedef struct kgb_be_vendor {
	const char *lost;        /* said after a fault: "the CUDA context was lost by an earlier fault" */
	const char *alloc_call;  /* the allocation call, named when device memory runs out */
	/* Device memory, addressed as 64-bit device pointers. */
	int (*mem_alloc)(kgb_be_ctx_t *c, size_t bytes, uint64_t *addr);
	void (*mem_free)(kgb_be_ctx_t *c, uint64_t addr);
	int (*copy_in)(kgb_be_ctx_t *c, uint64_t dst, const void *src, size_t n);
	int (*copy_out)(kgb_be_ctx_t *c, void *dst, uint64_t src, size_t n);
	int (*fill)(kgb_be_ctx_t *c, uint64_t dst, uint8_t byte, size_t n);
	/* One run: run_begin (n launches, timed when the caller wants the elapsed time),
	 * launch for each in order (an empty grid queues nothing), run_end (may be NULL),
	 * the wait, then elapsed (only when timed). */
	int (*run_begin)(kgb_be_ctx_t *c, size_t n, bool timed);
	int (*launch)(kgb_be_ctx_t *c, const kgb_launch_t *L, size_t index);
	int (*run_end)(kgb_be_ctx_t *c, bool timed);
	int (*elapsed)(kgb_be_ctx_t *c, double *ns);
	/* Waiting for queued work, one of the two: query polls (1 = done, 0 = still
	 * running, < 0 = failed), and kgb_be_wait spins then sleeps around it; wait blocks
	 * at most timeout_ms (1 = done, 0 = not done in time, < 0 = failed). */
	int (*query)(kgb_be_ctx_t *c);
	int (*wait)(kgb_be_ctx_t *c, uint32_t timeout_ms);
	/* Batches of timing samples (kgb_be_run_samples); a vendor without all five
	 * leaves them NULL and the executor times one sample at a time. All are queued
	 * on the executor's stream and return at once: a device-to-device copy, a fill,
	 * the cache flush between samples, an event recorded as mark k (the vendor keeps
	 * as many as asked for, created on first use), and the time between marks a and b
	 * once both have completed. */
	int (*copy_async)(kgb_be_ctx_t *c, uint64_t dst, uint64_t src, size_t n);
	int (*fill_async)(kgb_be_ctx_t *c, uint64_t dst, uint8_t byte, size_t n);
	int (*flush)(kgb_be_ctx_t *c);
	int (*mark)(kgb_be_ctx_t *c, size_t k);
	int (*between)(kgb_be_ctx_t *c, size_t a, size_t b, double *ns);
	/* Queue the scrub of local (shared) memory, and of module globals where the vendor
	 * restores them (kgb_backend_t.scrub_local), on the executor's stream; NULL: none. */
	int (*scrub)(kgb_be_ctx_t *c);
	/* The gate before a timed sample's first event; NULL: none. gate(c, k) queues a
	 * wait that holds the stream until release(c) (the host, once the sample's launches
	 * and its last event are queued) or a time-out, so that what the host spends queueing
	 * the launches (a library call's own set-up, a host slowed by other work) is never
	 * inside the sample's events. gate_missed(c, k), after the wait: sample k's gate
	 * timed out and its events may hold host time. k < KGB_BE_MAX_BATCH is a sample of a
	 * batch, KGB_BE_MAX_BATCH a run timed on its own. */
	int (*gate)(kgb_be_ctx_t *c, size_t k);
	void (*release)(kgb_be_ctx_t *c);
	bool (*gate_missed)(kgb_be_ctx_t *c, size_t k);
	/* Timing events, for a runtime that records them on a stream (CUDA, HIP): create
	 * one, record one on the executor's stream, the milliseconds between two that have
	 * completed, destroy one. With them the kgb_be_ev_* functions serve as run_begin,
	 * run_end, elapsed, mark and between, over the events kgb_be_ctx_t keeps. */
	int (*ev_create)(kgb_be_ctx_t *c, void **ev);
	int (*ev_record)(kgb_be_ctx_t *c, void *ev);
	int (*ev_ms)(kgb_be_ctx_t *c, void *a, void *b, float *ms);
	void (*ev_destroy)(kgb_be_ctx_t *c, void *ev);
} kgb_be_vendor_t;

/* Freed buffers kept for reuse by an allocation of the same size (kgb_be_alloc): a
 * job's cases allocate and free the same few sizes over and over, and a device free
 * waits for the device (cuMemFree, hipFree), a round trip each. At most
 * KGB_BE_POOL_MAX buffers and KGB_BE_POOL_BYTES bytes are kept; kgb_be_pool_drain
 * frees them (a backend's close, before its context goes). */
#define KGB_BE_POOL_MAX 64
#define KGB_BE_POOL_BYTES ((size_t)256 << 20)

struct kgb_be_ctx {
	const kgb_be_vendor_t *v;
	bool dead;                  /* a fault killed the context */
	bool hung;                  /* a kernel did not finish in time: nothing touches the device */
	struct { uint64_t addr; size_t bytes; } pool[KGB_BE_POOL_MAX];
	size_t npool, pool_bytes;
	void *ev[2];                /* a timed run's start and end events (the ev_* hooks) */
	void **marks;               /* a batch of samples' events, made on first use */
	size_t nmarks;
	char err[KGB_BE_ERRLEN];
};

/* A backend whose buffers are not device addresses (OpenCL's cl_mem) defines
 * KGB_BE_OWN_DBUF and its own struct kgb_dbuf, and does not use the buffer functions. */
#ifndef KGB_BE_OWN_DBUF
struct kgb_dbuf {
	uint64_t addr;              /* device address */
	size_t bytes;
	bool owned;                 /* false for a view: its parent owns the memory */
};
#endif

/* The kgb_backend_t entries a device-address backend takes from here, in its table:
 * { .name = "...", ..., KGB_BE_SHARED_ENTRIES, .compile = ..., ... }. */
#define KGB_BE_SHARED_ENTRIES                                                                      \
	.last_error = kgb_be_last_error, .alloc = kgb_be_alloc, .free = kgb_be_free, .view = kgb_be_view, \
	.write = kgb_be_write, .read = kgb_be_read, .fill = kgb_be_fill, .run = kgb_be_run, .addr = kgb_be_addr,   \
	.run_samples = kgb_be_run_samples

/* Return fail(c, "call", result) from the calling function when a vendor call does not
 * give ok: the body of each backend's CHECK macro. */
#define KGB_BE_CHECK(fail, ok, c, call)                                                            \
	do {                                                                                           \
		__typeof__(call) kgb__r = (call);                                                          \
		if (kgb__r != (ok))                                                                        \
			return fail((c), #call, kgb__r);                                                       \
	} while (0)

/* ---- context state ---- */
void kgb_be_ctx_init(kgb_be_ctx_t *c, const kgb_be_vendor_t *v);
/* A zeroed vendor context of size bytes (its kgb_be_ctx_t first), initialised for v. */
void *kgb_be_ctx_new(size_t size, const kgb_be_vendor_t *v);
int kgb_be_set_err(kgb_be_ctx_t *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A failed vendor call: "what: text", code from the vendor's classification; a fault
 * marks the context dead. Returns code. */
int kgb_be_fail(kgb_be_ctx_t *c, int code, const char *what, const char *text);
/* Free the buffers kept for reuse (a no-op on a hung context, which nothing touches). */
void kgb_be_pool_drain(kgb_be_ctx_t *c);
/* KGB_BE_OK, or the fault / timeout that makes the context unusable (message set). */
int kgb_be_usable(kgb_be_ctx_t *c);
/* Wait for everything queued, at most timeout_ms; a timeout marks the context hung. */
int kgb_be_wait(kgb_be_ctx_t *c, uint32_t timeout_ms);

/* ---- kgb_backend_t entry points ---- */
const char *kgb_be_last_error(void *ctx);
int kgb_be_alloc(void *ctx, size_t bytes, kgb_dbuf_t **out);
void kgb_be_free(void *ctx, kgb_dbuf_t *b);
int kgb_be_view(void *ctx, kgb_dbuf_t *parent, size_t offset, size_t bytes, kgb_dbuf_t **out);
int kgb_be_write(void *ctx, kgb_dbuf_t *b, size_t off, const void *src, size_t n);
int kgb_be_read(void *ctx, kgb_dbuf_t *b, size_t off, void *dst, size_t n);
int kgb_be_fill(void *ctx, kgb_dbuf_t *b, size_t off, uint8_t byte, size_t n);
int kgb_be_run(void *ctx, const kgb_launch_t *launches, size_t n, uint32_t timeout_ms, double *elapsed_ns);
/* kgb_backend_t.run_samples over the vendor's batch hooks (KGB_BE_UNSUPPORTED when it
 * has none); at most KGB_BE_MAX_BATCH samples. */
int kgb_be_run_samples(void *ctx, const kgb_prep_t *prep, size_t nprep, const kgb_launch_t *launches, size_t n,
                       size_t count, uint32_t timeout_ms, double *sample_ns, double *busy_ns, bool scrub);
/* kgb_backend_t.scrub_local over the vendor's scrub hook (set it only where the vendor
 * has one): queued, not waited for; the next run or sample comes after it. */
int kgb_be_scrub_local(void *ctx);
/* ---- timing events (the vendor's ev_* hooks) ---- */
/* Create the run's two events; a failure leaves the message set. */
int kgb_be_ev_open(kgb_be_ctx_t *c);
/* Destroy every event (not on a hung context, which nothing touches) and free the
 * marks' array. */
void kgb_be_ev_close(kgb_be_ctx_t *c);
int kgb_be_ev_run_begin(kgb_be_ctx_t *c, size_t n, bool timed);
int kgb_be_ev_run_end(kgb_be_ctx_t *c, bool timed);
int kgb_be_ev_elapsed(kgb_be_ctx_t *c, double *ns);
int kgb_be_ev_mark(kgb_be_ctx_t *c, size_t k);
int kgb_be_ev_between(kgb_be_ctx_t *c, size_t a, size_t b, double *ns);

/* The first steps of a compile entry point: *out NULL, the log emptied, and
 * KGB_BE_OK, or why the context cannot compile (message set). */
int kgb_be_compile_begin(kgb_be_ctx_t *c, kgb_module_t **out, char *log, size_t loglen);

/* A launch argument as the (at most) 8 bytes a CUDA-style kernel parameter points at:
 * a buffer's device address (0 for none) or a scalar's bytes; OpenCL local memory is
 * refused, naming lang ("CUDA") as the kernels that take dynamic shared memory
 * instead. li and i (the launch, the argument) are for the message. */
int kgb_be_kernel_arg(kgb_be_ctx_t *c, const kgb_larg_t *A, size_t li, size_t i, const char *lang, uint64_t *store);

/* The compile-cache key's common part for a C/C++ runtime compiler: lang, the full
 * source text, the entry and every option, in that order. */
void kgb_be_ckey_begin(kgb_ckey_t *k, const char *lang, const char *text, const char *entry,
                       const char *const *opts, int nopts);

/* The device address of a buffer or view. */
uint64_t kgb_be_addr(void *ctx, kgb_dbuf_t *b);
/* The health check through be's own entry points: req compiles kgb_health(uint *out,
 * uint n), which must set out[i] = i * 2654435761 + 12345 (mod 2^32); the check runs it
 * over 65536 elements and compares. req NULL: a memory round trip of that pattern only. */
int kgb_be_health(const kgb_backend_t *be, void *ctx, const kgb_compile_req_t *req);

/* The first library that dlopen loads of over (when set and not empty) and then
 * names[0..n) (NULL or empty ones skipped); *used gets its name. NULL when none does:
 * tried lists the names, ", " between them, and first the first loader error. */
void *kgb_be_dlopen_first(const char *over, const char *const *names, size_t n, const char **used, char *tried,
                          size_t triedlen, char *first, size_t firstlen);

/* The end of a library load done once: api when ok, else NULL with msg (why it
 * failed) copied to why (when given). */
const void *kgb_be_loaded(bool ok, const void *api, const char *msg, char *why, size_t whylen);

/* ---- compile helpers ---- */

/* A runtime compiler (NVRTC, HIPRTC) run through the compile cache in a sandboxed
 * child (worker/compile.h). */
typedef struct kgb_be_rtc {
	const char *key;             /* the compile-cache key of source, options and compiler */
	const char *artifact;        /* the file the child leaves ("kernel.cubin") */
	const char *tool;            /* for messages: "NVRTC" */
	const char *lang;            /* for messages: "CUDA C" */
	const kgb_sandbox_opts_t *so;
	/* In the child: leave artifact and compile.log in dir; exit 0 (compiled), 1 (the
	 * source does not compile) or anything else (the tool failed). */
	kgb_sandbox_fn child;
	void *arg;
} kgb_be_rtc_t;

/* The cached binary or the cached compile error, else a run of the child (the result
 * and a compile error are cached). *bin (heap) and log get the output. */
int kgb_be_rtc_run(kgb_be_ctx_t *c, const kgb_be_rtc_t *j, char **bin, size_t *binlen, char *log, size_t loglen);
/* prelude + source + a newline, NUL-terminated (heap); frees prelude. */
char *kgb_be_prelude_join(char *prelude, const char *source, size_t source_len);
bool kgb_be_is_ident(const char *s);
void kgb_be_copy_log(char *log, size_t loglen, const char *text);
/* Split options on white space into a heap array of heap strings; returns the count. */
int kgb_be_split_opts(const char *s, char ***out);
void kgb_be_free_opts(char **v, int n);
/* A positive integer from the environment, dflt when unset or malformed. */
uint32_t kgb_be_env_u32(const char *name, uint32_t dflt);
/* The per-tensor part of a C/C++ prelude (CUDA, HIP): T_name, KGB_DTYPE_name_dt,
 * LOAD_name, STORE_name for every tensor whose name is an identifier; bf16 tensors get
 * bf16_type. Then `#line 1 "file"` (dflt_file when file is NULL or unfit). */
void kgb_be_cxx_tensors(FILE *f, const char *const *names, const kgb_dtype_t *dtypes, size_t n,
                        const char *bf16_type, const char *file, const char *dflt_file);
/* Whether any of the n dtypes is dt. */
bool kgb_be_has_dtype(const kgb_dtype_t *dtypes, size_t n, kgb_dtype_t dt);

#endif
