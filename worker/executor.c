/* The executor child: one job, one device, every case validated and (when gated)
 * timed. Backend-agnostic: everything vendor-specific goes through kgb_backend_t.
 *
 * Per case: build the case, its two input sets (A from the job's seed, B from a seed
 * derived from it) and their CPU references, compile each kernel of the plan (modules
 * cached within the job by a hash of what was compiled), evaluate the plan's
 * expressions, allocate every tensor and scratch buffer with guard bands, and run:
 *   run 1  set A, outputs poisoned with a random per-element pattern P drawn per run
 *   run 2  set A, outputs poisoned with -P (every element sees both signs)
 *   run 3  set B, outputs not poisoned: they still hold run 2's result (stale data)
 * kgb_validate judges runs 1 and 2, run 3 is judged against set B's reference. Where a
 * kernel can keep state between launches (anything but OpenCL C 1.x) every run gets a
 * freshly loaded module. A passing timed case is then timed with the adaptive sampler,
 * every sample on inputs of its own; one sample picked at random and one more run
 * after the last, on inputs whose references were computed for them, are validated
 * too (stale_result; trusted jobs: set A, with set B and the last run validated).
 * docs/security.md explains the choices. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <limits.h>
#include <sys/random.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor.h"
#include "autotune.h"
#include "dump.h"
#include "guardpage.h"
#include "native_provider.h"
#include "catalog.h"
#include "plan.h"
#include "pycand.h"
#include "reccache.h"
#include "validate.h"
#include "stats.h"
#include "expr.h"
#include "log.h"
#include "native_blas.h"
#include "backends/backend_common.h"
#include "backends/blas.h"
#include "devlock.h"
#include "sizing.h"
#include "util.h"

#define LOG_MAX (64u << 10)
#define MSG_MAX 512

/* ---------------------------------------------------------------- records ---- */

static int emit(int fd, char kind, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = kgb_xmalloc(n + 5);
	uint32_t len = (uint32_t)(n + 1);
	buf[0] = (uint8_t)len;
	buf[1] = (uint8_t)(len >> 8);
	buf[2] = (uint8_t)(len >> 16);
	buf[3] = (uint8_t)(len >> 24);
	buf[4] = (uint8_t)kind;
	protobuf_c_message_pack(m, buf + 5);
	int rc = kgb_write_all(fd, buf, n + 5);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------ job context ---- */

typedef struct modent {
	char key[65];
	kgb_module_t *mod;
	int rc;                    /* KGB_BE_* of the compile */
	char *msg;                 /* failure message (heap), NULL on success */
} modent_t;

/* Where an executor's wall time goes (logged per job: how busy a device can be kept is
 * read from these, docs/worker.md). */
enum { PH_OPEN, PH_PREP, PH_WAIT, PH_SHARED, PH_COMPARE, PH_EXCL, PH_N };
/* What it goes to (docs/worker.md, "Where a case's time goes"): every moment of the job in
 * exactly one of these, whatever the lock phase (JobPhases.p_*). */
enum { PF_OTHER, PF_OPEN, PF_INPUTS, PF_REF, PF_COMPILE, PF_TRANSFER, PF_RUN, PF_VALIDATE, PF_TIMING,
       PF_PROVIDER, PF_RECORD, PF_WAIT, PF_N };

typedef struct xjob {
	const kgb_backend_t *be;
	bool trusted;              /* kgb_exec_job_trusted: the device runs the vendor library only */
	void *ctx;
	const Kgb__JobAssign *job;
	const kgb_op_t *op;
	kgb_plan_t *plan;
	const char **src;          /* per kernel: source text (owned by job) */
	size_t *srclen;
	modent_t *mods;
	size_t nmods, capmods;
	int out_fd;
	char *log;                 /* bounded job log */
	size_t loglen;
	double compile_ms, device_ns;
	double occupied_ns;        /* device time of everything timed by events: kernels, and a
	                            * batch's restores and cache flushes (docs/worker.md) */
	kgb_devlock_t lock;        /* the device's lock (KGB_DEVICE_LOCK); fd -1: none */
	bool lock_per_case;        /* GPU backends: held for each case's device work only */
	bool dead;                 /* the device context is lost */
	bool stateful;             /* a kernel may keep state across launches: fresh modules per run */
	bool fresh;                /* every timed sample on inputs of its own (not for trusted jobs) */
	bool scrub;                /* the backend's scrub_local before every timed sample */
	unsigned instance;         /* module instance (stateful OpenCL: -D KGB_MODULE_INSTANCE=) */
	uint64_t rng;              /* poison and sampling (never derived from the job) */
	kgb_nblas_t *nb;           /* native cuBLAS candidate: the library; the plan is one call */
	char method[192];          /* the timing method reported with every timed case */
	double ph_ms[PH_N];        /* wall time per phase (phase()), logged at the job's end */
	bool ph_done;              /* log_phases ran: JobResult.phases carries ph_ms */
	int ph;
	uint64_t ph_t0;
	double pf_ms[PF_N];        /* wall time per activity (prof()) */
	int pf;
	uint64_t pf_t0;
	uint64_t pf_cases;         /* cases run */
	uint64_t ref_hits0, ref_misses0;   /* the reference cache's counts when the job began */
	double npf_ms[PF_N];       /* a native provider's own figures (reader thread) */
	uint64_t npf_hits, npf_misses;
	double rec_startup_ms;     /* a Python candidate's recorder: start-up (JobPhases.r_startup_ms) */
	double rec_ms[KGB_PYREC_NSEC];   /* its cases' figures summed (kgb_pycand_out_t.sec, in ms) */
	double rec_wall_ms;        /* the recorder's wall time */
} xjob_t;

/* Switch the activity the job's time counts to; returns the one left, for the caller
 * to switch back to. */
static int prof(xjob_t *x, int c)
{
	uint64_t now = kgb_now_ns();
	int old = x->pf;
	x->pf_ms[old] += (double)(now - x->pf_t0) / 1e6;
	x->pf = c;
	x->pf_t0 = now;
	return old;
}

/* expr, its time counted to activity c (nested: the inner activity wins). */
#define PF(x, c, expr)                          \
	({                                          \
		int pf_old_ = prof((x), (c));           \
		__typeof__(expr) pf_rv_ = (expr);       \
		prof((x), pf_old_);                     \
		pf_rv_;                                 \
	})

/* splitmix64: the executor's private generator for poison patterns and the choice of
 * validated timed runs, seeded from the kernel's entropy pool per job. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void log_add(xjob_t *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_add(xjob_t *x, const char *fmt, ...)
{
	if (x->loglen >= LOG_MAX - 1)
		return;
	if (!x->log)
		x->log = kgb_xcalloc(1, LOG_MAX);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(x->log + x->loglen, LOG_MAX - x->loglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		x->loglen = KGB_MIN(x->loglen + (size_t)n, (size_t)LOG_MAX - 1);
}

static int be_verdict(int rc)
{
	switch (rc) {
	case KGB_BE_COMPILE: return KGB_V_COMPILE_ERROR;
	case KGB_BE_RESOURCE: return KGB_V_RESOURCE_ERROR;
	case KGB_BE_NOMEM: return KGB_V_RESOURCE_ERROR;
	case KGB_BE_FAULT: return KGB_V_ILLEGAL_ADDRESS;
	case KGB_BE_TIMEOUT: return KGB_V_TIMEOUT;
	case KGB_BE_UNSUPPORTED: return KGB_V_UNSUPPORTED;
	default: return KGB_V_LAUNCH_ERROR;
	}
}

static const char *be_err(const xjob_t *x)
{
	const char *e = x->be->last_error ? x->be->last_error(x->ctx) : NULL;
	return e && *e ? e : "(no message from the backend)";
}

/* The first few lines of a compiler log, for a one-line case message. */
static void log_head(const char *log, char *out, size_t outlen)
{
	size_t o = 0;
	int lines = 0;
	for (const char *p = log; *p && o + 1 < outlen && lines < 4; p++) {
		if (*p == '\n') {
			lines++;
			if (o > 0 && out[o - 1] != ' ' && o + 3 < outlen) {
				out[o++] = ' ';
				out[o++] = '|';
				out[o++] = ' ';
			}
			continue;
		}
		out[o++] = *p == '\t' ? ' ' : *p;
	}
	out[o] = 0;
}

static void hash_str(kgb_sha256_t *h, const char *s, size_t n)
{
	uint64_t len = n;
	kgb_sha256_update(h, &len, sizeof len);
	kgb_sha256_update(h, s, n);
}

/* Compile kernel ki of the plan for case c (its defines and options already
 * substituted) or reuse the job's earlier compile of the same inputs. Returns the
 * cache entry; entry->rc says whether it succeeded. */
static modent_t *get_module(xjob_t *x, size_t ki, const kgb_case_t *c, const char **dn, const char **dv,
                            size_t nd, const char *options, const kgb_plan_config_t *cfg)
{
	const kgb_plan_kernel_t *K = &x->plan->kernels[ki];
	const char *tnames[KGB_MAX_TENSORS];
	kgb_dtype_t tdt[KGB_MAX_TENSORS];
	/* A stateful OpenCL program is built with one more define, the module instance: a
	 * driver may share program-scope variables between programs built from identical
	 * inputs (PoCL does: it loads one shared object per distinct build), so a fresh
	 * instance must be a distinct build. */
	const char *dn2[dn ? nd + 1 : 1], *dv2[dn ? nd + 1 : 1];
	char inst[24];
	if (x->stateful && K->lang == KGB_LANG_OPENCL) {
		for (size_t i = 0; i < nd; i++) {
			dn2[i] = dn[i];
			dv2[i] = dv[i];
		}
		snprintf(inst, sizeof inst, "%u", x->instance);
		dn2[nd] = "KGB_MODULE_INSTANCE";
		dv2[nd] = inst;
		dn = dn2;
		dv = dv2;
		nd++;
	}
	for (int i = 0; i < c->ntensors; i++) {
		tnames[i] = c->t[i].name;
		tdt[i] = c->t[i].dtype;
	}

	kgb_sha256_t h;
	char key[65];
	kgb_sha256_init(&h);
	char lang[8];
	snprintf(lang, sizeof lang, "%d", (int)K->lang);
	hash_str(&h, lang, strlen(lang));
	hash_str(&h, K->entry, strlen(K->entry));
	hash_str(&h, K->source, strlen(K->source));
	hash_str(&h, x->src[ki], x->srclen[ki]);
	for (size_t i = 0; i < nd; i++) {
		hash_str(&h, dn[i], strlen(dn[i]));
		hash_str(&h, dv[i], strlen(dv[i]));
	}
	hash_str(&h, options ? options : "", options ? strlen(options) : 0);
	for (int i = 0; i < c->ntensors; i++) {
		hash_str(&h, tnames[i], strlen(tnames[i]));
		hash_str(&h, (const char *)&tdt[i], sizeof tdt[i]);
	}
	if (K->signature)
		hash_str(&h, K->signature, strlen(K->signature));
	/* the recording's binary of this configuration (an autotuned launch's), else of
	 * this kernel (a plain launch: its one configuration has none of its own) */
	bool own = cfg && cfg->prebuilt;
	const char *pb = own ? cfg->prebuilt : K->prebuilt, *pabi = own ? cfg->prebuilt_abi : K->prebuilt_abi;
	size_t pblen = own ? cfg->prebuilt_len : K->prebuilt_len;
	size_t pabilen = own ? cfg->prebuilt_abi_len : K->prebuilt_abi_len;
	if (pb) /* two cases' recordings may specialise one kernel differently */
		hash_str(&h, pb, pblen);
	if (cfg) {
		char nums[64];
		snprintf(nums, sizeof nums, "cfg %d %d %d", cfg->num_warps, cfg->num_stages, cfg->num_ctas);
		hash_str(&h, nums, strlen(nums));
		for (size_t i = 0; i < cfg->nconstants; i++) {
			hash_str(&h, cfg->constants[i].name, strlen(cfg->constants[i].name));
			hash_str(&h, cfg->constants[i].value, strlen(cfg->constants[i].value));
		}
	}
	kgb_sha256_final_hex(&h, key);

	for (size_t i = 0; i < x->nmods; i++)
		if (strcmp(x->mods[i].key, key) == 0)
			return &x->mods[i];

	if (x->nmods == x->capmods) {
		x->capmods = x->capmods ? 2 * x->capmods : 8;
		x->mods = kgb_xrealloc(x->mods, x->capmods * sizeof *x->mods);
	}
	modent_t *m = &x->mods[x->nmods++];
	memset(m, 0, sizeof *m);
	memcpy(m->key, key, sizeof key);

	kgb_compile_req_t req = {
		.lang = K->lang,
		.entry = K->entry,
		.source = x->src[ki],
		.source_len = x->srclen[ki],
		.name = K->source,
		.define_names = dn,
		.define_values = dv,
		.ndefines = nd,
		.options = options,
		.tensor_names = tnames,
		.tensor_dtypes = tdt,
		.ntensors = (size_t)c->ntensors,
		.config = cfg,
		.signature = K->signature,
		.prebuilt = pb,
		.prebuilt_len = pblen,
		.prebuilt_abi = pabi,
		.prebuilt_abi_len = pabilen,
	};
	char *clog = kgb_xcalloc(1, 16384);
	double t0 = kgb_now_ms();
	m->rc = PF(x, PF_COMPILE, x->be->compile(x->ctx, &req, &m->mod, clog, 16384));
	x->compile_ms += kgb_now_ms() - t0;
	if (m->rc != KGB_BE_OK) {
		char head[300];
		log_head(clog, head, sizeof head);
		m->msg = kgb_xasprintf("kernels[%zu] '%s' (%s): %s%s%s", ki, K->entry, K->source, be_err(x),
		                       head[0] ? ": " : "", head);
		log_add(x, "kernels[%zu] '%s' (%s): compile failed: %s\n%s\n", ki, K->entry, K->source,
		        be_err(x), clog);
		m->mod = NULL;
	} else if (clog[0]) {
		log_add(x, "kernels[%zu] '%s' (%s): compiler output:\n%s\n", ki, K->entry, K->source, clog);
	}
	free(clog);
	return m;
}

/* ------------------------------------------------------------- one case ---- */

typedef struct devbuf {
	kgb_dbuf_t *parent, *view;
	size_t bytes;              /* size of the view */
	size_t tail;               /* trailing guard band: KGB_GUARD_BYTES, padded so the parent
	                            * is a whole number of 4 KiB pages (no slack before a guard page) */
} devbuf_t;

/* Poison variants: run 1, run 2 (its negation), timed runs (NaNs and large values). */
enum { PZ_RUN1 = 0, PZ_RUN2, PZ_TIMED, PZ_N };

typedef struct xcase {
	kgb_case_t c;
	bool built, have_inputs, have_ref;
	kgb_hostbufs_t inputs, ref;
	devbuf_t t[KGB_MAX_TENSORS];
	devbuf_t *s;               /* scratch, plan->nscratch */
	uint8_t *up[KGB_MAX_TENSORS];   /* input set A as uploaded (IN and INOUT tensors) */
	uint8_t *up2[KGB_MAX_TENSORS];  /* input set B */
	uint8_t *pz[PZ_N][KGB_MAX_TENSORS];   /* OUT tensors: the poison of each variant */
	uint8_t sbyte[PZ_N];       /* scratch poison byte of each variant */
	bool have_inputs2, have_ref2;
	kgb_hostbufs_t inputs2, ref2;
	int set;                   /* input set in the device buffers: 0 = A, 1 = B, 2 = fresh (upf) */
	int chk;                   /* set 2: which validated sample's inputs (chk_in), -1: none */
	uint8_t *upf[KGB_MAX_TENSORS];  /* fresh inputs of a timed sample, as uploaded */
	kgb_hostbufs_t chk_in[2], chk_ref[2];  /* the validated timed samples' inputs and references */
	bool have_chk;
	size_t *cfg;               /* per kernel: the configuration its launch was built with */
	uint8_t *rb1[KGB_MAX_TENSORS], *rb2[KGB_MAX_TENSORS], *rb3[KGB_MAX_TENSORS];
	bool guard_broken[KGB_MAX_TENSORS];
	int scratch_broken;        /* index of a scratch buffer whose guard broke, or -1 */
	bool guard3[KGB_MAX_TENSORS];   /* run 3's own (run3_device) */
	int scratch3;
	uint8_t *host;             /* read-back staging, largest parent */
	size_t hostlen;
	kgb_launch_t *L;           /* per kernel */
	uint64_t skip;             /* bit ki: kernel ki's "when" is 0 on this case */
	kgb_launch_t *run;         /* the launches of the kernels that run (when skip != 0) */
	bool allocated;            /* alloc_all done: buffers can be bound */
	kgb_nblas_case_t *nbc;     /* native cuBLAS candidate: the routine and its arguments */
} xcase_t;

/* Outcome of a case step: verdict and message. */
typedef struct verdict {
	int v;
	char msg[MSG_MAX];
} verdict_t;

static int set_v(verdict_t *out, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_v(verdict_t *out, int v, const char *fmt, ...)
{
	va_list ap;
	out->v = v;
	va_start(ap, fmt);
	vsnprintf(out->msg, sizeof out->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* The limit of one device run: the job's time limit, whole, for every run. Time spent
 * compiling or staging before it never shortens a run (a busy machine must not turn a
 * correct kernel into a timeout); the parent retries a job whose limit runs out
 * outside any run (kgb_exec_deadline). */
static uint32_t run_timeout_ms(const xjob_t *x)
{
	return x->job->time_limit_ms;
}

/* Tell the parent a device run starts (1) or has ended (0). */
static void launch_window(xjob_t *x, int open)
{
	uint8_t rec[6] = {2, 0, 0, 0, KGB_EXEC_REC_LAUNCH, (uint8_t)open};
	if (x->out_fd >= 0 && kgb_write_all(x->out_fd, rec, sizeof rec) != 0)
		log_add(x, "cannot write a launch record: %s", strerror(errno));
}

/* ---- sharing a device (docs/worker.md, "Sharing a device") ----
 *
 * With more than one slot per device, several executors hold the same device. Each
 * takes the device's lock (worker/devlock.h, on KGB_DEVICE_LOCK, set by the worker)
 * for its device work. On a GPU the lock is taken per phase of a case: shared for the
 * validation runs (allocation, staging, runs 1-3, read-back), so several executors'
 * validation work overlaps, and exclusive for autotuning and timing, so nothing else
 * runs on the device while a case is timed; CPU work (inputs, references, compiles,
 * the comparison of outputs) holds no lock. On a CPU device the lock is exclusive for
 * the whole job, because compiling and computing references there would share the
 * cores being timed. */
/* Device work around a job rather than in a case (opening a pre-warmed executor's
 * context and BLAS handle, releasing a finished job's) waits on a GPU for a moment when
 * no timing runs or waits: it holds the lock shared, taken by trying only
 * (kgb_devlock_try_for), so that a context's creation or teardown (allocations, frees,
 * module loads, up to seconds) does not land inside another executor's timing. After
 * CHORE_WAIT_MS it goes ahead without the lock. */
#define CHORE_WAIT_MS 10000u

/* The host side of opening a device, done before the lock is asked for: the runtime
 * loaded and initialised when a context is to be made (cuInit: no context, nothing on
 * the device), and the BLAS library mapped when a handle is to be made. What is left
 * under the lock is the context and the handle themselves. A failure here is left for
 * the opening itself to report. */
static void open_prepare(const kgb_backend_t *be, bool ctx, bool blas)
{
	char e[512];
	if (ctx && be->prepare && be->prepare(e, sizeof e) != KGB_BE_OK)
		log_debug("%s: preparing the runtime: %s", be->name, e);
	if (blas && be->blas) {
		kgb_blas_t *b = NULL;
		bool unsupported;
		if (kgb_blas_load(be->blas, &b, &unsupported, e, sizeof e) == 0)
			kgb_blas_close(&b, true);   /* the library stays mapped (kgb_blas_close) */
	}
}

static bool lock_per_case_on(const kgb_backend_t *be)
{
	return !kgb_backend_on_host(be->name);
}

static void device_lock_open(xjob_t *x, const kgb_backend_t *be)
{
	const char *path = getenv("KGB_DEVICE_LOCK");
	char e[512];
	if (!path || !*path)
		return;
	if (kgb_devlock_open(&x->lock, path, e, sizeof e) != 0) {
		log_add(x, "%s; running without it\n", e);
		return;
	}
	x->lock_per_case = lock_per_case_on(be);
}

/* A blocking wait for the lock is not the job's time (KGB_EXEC_LAUNCH_WAIT). */
static void lock_waits(void *arg, bool waiting)
{
	launch_window(arg, waiting ? KGB_EXEC_LAUNCH_WAIT : 0);
}

static void phase(xjob_t *x, int p);

/* The lock for the whole job (a CPU device): after it, the job's work is "prepare". */
static void device_lock(xjob_t *x)
{
	phase(x, PH_WAIT);
	int o = prof(x, PF_WAIT);
	kgb_devlock_take(&x->lock, LOCK_EX, lock_waits, x);
	prof(x, o);
	phase(x, PH_PREP);
}

static void device_unlock(xjob_t *x)
{
	kgb_devlock_release(&x->lock);
}

/* Close the current phase and enter p. */
static void phase(xjob_t *x, int p)
{
	uint64_t now = kgb_now_ns();
	x->ph_ms[x->ph] += (double)(now - x->ph_t0) / 1e6;
	x->ph = p;
	x->ph_t0 = now;
}

/* The per-case phases of a GPU executor; no-ops where the lock is held for the job. */
static void case_lock(xjob_t *x, int mode)
{
	if (!x->lock_per_case)
		return;
	phase(x, PH_WAIT);
	int o = prof(x, PF_WAIT);
	kgb_devlock_take(&x->lock, mode, lock_waits, x);
	prof(x, o);
	phase(x, mode == LOCK_EX ? PH_EXCL : PH_SHARED);
}

static void case_unlock(xjob_t *x)
{
	if (!x->lock_per_case)
		return;
	device_unlock(x);
	phase(x, PH_COMPARE);
}

/* The job's phases, in its log. */
static void log_phases(xjob_t *x)
{
	phase(x, x->ph);   /* closes the phase in progress */
	x->ph_done = true;
	/* the same figures go in the result (emit_end: JobResult.phases) */
	log_add(x, "phases (ms): open %.0f, prepare %.0f, lock waits %.0f, shared %.0f, compare %.0f, exclusive %.0f; "
	        "device occupied %.0f\n",
	        x->ph_ms[PH_OPEN], x->ph_ms[PH_PREP], x->ph_ms[PH_WAIT], x->ph_ms[PH_SHARED], x->ph_ms[PH_COMPARE],
	        x->ph_ms[PH_EXCL], x->occupied_ns / 1e6);
}

/* Pack a scalar argument for dtype dt. Returns 0 or -1 with err. */
static int pack_scalar(kgb_dtype_t dt, kgb_value_t v, kgb_larg_t *a, char *err, size_t errlen)
{
	double d = kgb_value_as_double(v);
	a->kind = KGB_LARG_SCALAR;
	memset(a->bytes, 0, sizeof a->bytes);
	if (!kgb_dtype_is_float(dt)) {
		if (v.is_float && d != (double)(int64_t)d)
			return kgb_err(err, errlen, "value %g is not an integer (dtype %s)", d, kgb_dtype_name(dt));
		int64_t i = v.is_float ? (int64_t)d : v.i;
		int64_t lo = INT64_MIN, hi = INT64_MAX;
		switch (dt) {
		case KGB_DT_BOOL: lo = 0; hi = 1; break;
		case KGB_DT_I8: lo = INT8_MIN; hi = INT8_MAX; break;
		case KGB_DT_U8: lo = 0; hi = UINT8_MAX; break;
		case KGB_DT_I16: lo = INT16_MIN; hi = INT16_MAX; break;
		case KGB_DT_I32: lo = INT32_MIN; hi = UINT32_MAX; break; /* u32 travels as i32 */
		default: break;
		}
		if (i < lo || i > hi)
			return kgb_err(err, errlen, "value %lld out of range for %s", (long long)i, kgb_dtype_name(dt));
		a->size = kgb_dtype_size(dt);
		memcpy(a->bytes, &i, a->size); /* little-endian: the low bytes */
		return 0;
	}
	switch (dt) {
	case KGB_DT_F64: a->size = 8; memcpy(a->bytes, &d, 8); break;
	case KGB_DT_F32: { float f = (float)d; a->size = 4; memcpy(a->bytes, &f, 4); break; }
	case KGB_DT_F16: { uint16_t h = kgb_f32_to_f16((float)d); a->size = 2; memcpy(a->bytes, &h, 2); break; }
	case KGB_DT_BF16: { uint16_t h = kgb_f32_to_bf16((float)d); a->size = 2; memcpy(a->bytes, &h, 2); break; }
	default: return kgb_err(err, errlen, "unsupported scalar dtype %s", kgb_dtype_name(dt));
	}
	return 0;
}

static int eval_dim(const char *what, size_t ki, int d, const char *expr, const kgb_symtab_t *sym,
                    uint64_t *out, verdict_t *v)
{
	int64_t val;
	char e[256];
	if (kgb_expr_eval_int(expr, sym, &val, e, sizeof e) != 0)
		return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].%s[%d] '%s': %s", ki, what, d, expr, e);
	if (val < 1)
		return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].%s[%d] '%s' = %lld (must be >= 1)", ki, what, d,
		             expr, (long long)val);
	*out = (uint64_t)val;
	return 0;
}

/* Bind kernel ki's buffer arguments to the case's allocated views (no-op before
 * alloc_all). */
static void bind_buffers(xjob_t *x, xcase_t *xc, size_t ki)
{
	const kgb_plan_kernel_t *K = &x->plan->kernels[ki];
	if (!xc->allocated || (xc->skip >> ki & 1u))
		return;
	for (size_t a = 0; a < K->nargs; a++) {
		const kgb_plan_arg_t *A = &K->args[a];
		if (A->kind == KGB_ARG_TENSOR) {
			xc->L[ki].args[a].buf = xc->t[kgb_case_tensor_index(&xc->c, A->name)].view;
		} else if (A->kind == KGB_ARG_SCRATCH) {
			for (size_t si = 0; si < x->plan->nscratch; si++)
				if (strcmp(x->plan->scratch[si].name, A->name) == 0)
					xc->L[ki].args[a].buf = xc->s[si].view;
		}
	}
}

/* Bind the constants of configuration cfg as case symbols (integers, numbers, or
 * strings), after substituting their templates; subst gets the substituted
 * configuration (its constants heap strings, freed with free_config). */
static int bind_config(xjob_t *x, xcase_t *xc, size_t ki, size_t cfg, kgb_plan_config_t *subst, verdict_t *v)
{
	const kgb_plan_kernel_t *K = &x->plan->kernels[ki];
	const kgb_plan_config_t *C = &K->configs[cfg];
	char e[256];
	*subst = *C;
	subst->constants = kgb_xcalloc(C->nconstants + 1, sizeof *subst->constants);
	for (size_t i = 0; i < C->nconstants; i++) {
		subst->constants[i].name = C->constants[i].name;
		char *val = kgb_expr_subst(C->constants[i].value ? C->constants[i].value : "", xc->c.sym, e, sizeof e);
		if (!val)
			return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].configs[%zu].constants.%s '%s': %s", ki, cfg,
			             C->constants[i].name, C->constants[i].value, e);
		subst->constants[i].value = val;
		char *end;
		errno = 0;
		long long iv = strtoll(val, &end, 0);
		if (*val && !*end && errno == 0) {
			kgb_symtab_set_int(xc->c.sym, C->constants[i].name, iv);
			continue;
		}
		double dv = strtod(val, &end);
		if (*val && !*end)
			kgb_symtab_set_float(xc->c.sym, C->constants[i].name, dv);
		else
			kgb_symtab_set_str(xc->c.sym, C->constants[i].name, val);
	}
	return 0;
}

static void free_config(kgb_plan_config_t *subst)
{
	if (!subst->constants)
		return;
	for (size_t i = 0; i < subst->nconstants; i++)
		free(subst->constants[i].value);
	free(subst->constants);
	subst->constants = NULL;
}

/* Compile kernel ki (configuration cfg when it has configurations) and fill its
 * launch: module, sizes, scalar and local arguments, and the buffers when they are
 * allocated. Returns 0 or -1 with the verdict. */
static int prepare_kernel(xjob_t *x, xcase_t *xc, size_t ki, size_t cfg, verdict_t *v)
{
	const kgb_plan_kernel_t *K = &x->plan->kernels[ki];
	const kgb_plan_t *P = x->plan;
	const kgb_case_t *c = &xc->c;
	kgb_launch_t *L = &xc->L[ki];
	kgb_plan_config_t subst = { 0 };
	char e[256];
	int rc = 0;
	if (x->dead)
		return set_v(v, KGB_V_NOT_RUN, "the device context is lost");
	free(L->args);
	memset(L, 0, sizeof *L);
	if (x->nb) {
		/* native cuBLAS: the launch is the library routine (bound in alloc_all) */
		int nrc = xc->nbc ? KGB_BE_OK : kgb_nblas_case_new(x->nb, c, &xc->nbc, e, sizeof e);
		if (nrc != KGB_BE_OK)
			return set_v(v, be_verdict(nrc), "%s", e);
		L->call = kgb_nblas_call;
		L->call_arg = xc->nbc;
		return 0;
	}
	if (K->nconfigs && bind_config(x, xc, ki, cfg, &subst, v) != 0) {
		free_config(&subst);
		return -1;
	}

	const char **dn = kgb_xcalloc(K->ndefines + 1, sizeof *dn);
	char **dv = kgb_xcalloc(K->ndefines + 1, sizeof *dv);
	char *opts = NULL;
	for (size_t d = 0; d < K->ndefines && rc == 0; d++) {
		dn[d] = K->defines[d].name;
		dv[d] = kgb_expr_subst(K->defines[d].value ? K->defines[d].value : "", c->sym, e, sizeof e);
		if (!dv[d])
			rc = set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].defines.%s '%s': %s", ki, K->defines[d].name,
			           K->defines[d].value, e);
	}
	if (rc == 0 && K->options) {
		opts = kgb_expr_subst(K->options, c->sym, e, sizeof e);
		if (!opts)
			rc = set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].options '%s': %s", ki, K->options, e);
	}
	if (rc == 0) {
		modent_t *m = get_module(x, ki, c, dn, (const char **)dv, K->ndefines, opts,
		                         K->nconfigs ? &subst : NULL);
		if (m->rc != KGB_BE_OK)
			rc = set_v(v, be_verdict(m->rc), "%s", m->msg);
		L->mod = m->mod;
	}
	for (size_t d = 0; d < K->ndefines; d++)
		free(dv[d]);
	free(dn);
	free(dv);
	free(opts);
	free_config(&subst);
	if (rc)
		return rc;

	for (int d = 0; d < 3; d++)
		L->grid[d] = L->block[d] = 1;
	for (int d = 0; d < K->ngrid; d++)
		if (eval_dim("grid", ki, d, K->grid[d], c->sym, &L->grid[d], v))
			return -1;
	for (int d = 0; d < K->nblock; d++)
		if (eval_dim("block", ki, d, K->block[d], c->sym, &L->block[d], v))
			return -1;
	if (K->shared) {
		int64_t sh = 0;
		if (kgb_expr_eval_int(K->shared, c->sym, &sh, e, sizeof e) != 0 || sh < 0)
			return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].shared '%s': %s", ki, K->shared,
			             sh < 0 ? "negative" : e);
		L->shared_bytes = (size_t)sh;
	}
	L->nargs = K->nargs;
	L->args = kgb_xcalloc(K->nargs ? K->nargs : 1, sizeof *L->args);
	for (size_t a = 0; a < K->nargs; a++) {
		const kgb_plan_arg_t *A = &K->args[a];
		kgb_larg_t *la = &L->args[a];
		switch (A->kind) {
		case KGB_ARG_TENSOR:
			la->kind = KGB_LARG_BUF;
			if (kgb_case_tensor_index(c, A->name) < 0)
				return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].args[%zu]: case has no tensor '%s'", ki, a,
				             A->name);
			break;
		case KGB_ARG_SCRATCH: {
			la->kind = KGB_LARG_BUF;
			size_t si;
			for (si = 0; si < P->nscratch; si++)
				if (strcmp(P->scratch[si].name, A->name) == 0)
					break;
			if (si == P->nscratch)
				return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].args[%zu]: no scratch buffer '%s'", ki, a,
				             A->name);
			break;
		}
		case KGB_ARG_SCALAR: {
			kgb_value_t val;
			if (kgb_expr_eval(A->expr, c->sym, &val, e, sizeof e) != 0 ||
			    pack_scalar(A->dtype, val, la, e, sizeof e) != 0)
				return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].args[%zu] scalar '%s': %s", ki, a, A->expr, e);
			break;
		}
		case KGB_ARG_LOCAL: {
			int64_t bytes;
			if (kgb_expr_eval_int(A->expr, c->sym, &bytes, e, sizeof e) != 0)
				return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].args[%zu] local '%s': %s", ki, a, A->expr, e);
			if (bytes < 1)
				return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].args[%zu] local '%s' = %lld bytes "
				             "(must be >= 1)", ki, a, A->expr, (long long)bytes);
			la->kind = KGB_LARG_LOCAL;
			la->size = (size_t)bytes;
			break;
		}
		}
	}
	bind_buffers(x, xc, ki);
	return 0;
}

/* Compile every kernel that runs on the case (its "when" is not 0; first
 * configuration) and fill the launches. */
static int prepare_launches(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	char e[256], ovl[96];
	size_t nrun = 0;
	xc->L = kgb_xcalloc(x->plan->nkernels, sizeof *xc->L);
	for (size_t ki = 0; ki < x->plan->nkernels; ki++) {
		int r = kgb_plan_kernel_runs(&x->plan->kernels[ki], &xc->c, e, sizeof e);
		if (r < 0)
			return set_v(v, KGB_V_PLAN_ERROR, "kernels[%zu].when '%s': %s", ki, x->plan->kernels[ki].when, e);
		if (r == 0)
			xc->skip |= (uint64_t)1 << ki;
		else
			nrun++;
	}
	if (nrun == 0)
		return set_v(v, KGB_V_PLAN_ERROR, "no kernel of the plan runs on case %u (%s): every \"when\" is 0",
		             xc->c.index, kgb_case_overload(&xc->c, ovl, sizeof ovl) ? ovl : xc->c.label);
	if (xc->skip)
		xc->run = kgb_xcalloc(nrun, sizeof *xc->run);
	xc->cfg = kgb_xcalloc(x->plan->nkernels, sizeof *xc->cfg);
	for (size_t ki = 0; ki < x->plan->nkernels; ki++)
		if (!(xc->skip >> ki & 1u) && prepare_kernel(x, xc, ki, 0, v) != 0)
			return -1;
	return 0;
}

/* The device buffer of d: d->bytes (host_buffers sized it) between guard bands. */
static int alloc_guarded(xjob_t *x, devbuf_t *d)
{
	d->tail = KGB_GUARD_BYTES + ((4096u - d->bytes % 4096u) % 4096u);
	int rc = x->be->alloc(x->ctx, KGB_GUARD_BYTES + d->bytes + d->tail, &d->parent);
	if (rc == KGB_BE_OK)
		rc = x->be->view(x->ctx, d->parent, KGB_GUARD_BYTES, d->bytes, &d->view);
	return rc;
}

/* Fill n elements of dtype dt at p with poison variant `variant`: PZ_RUN1 random
 * finite values of large magnitude and random sign (integers: random values), PZ_RUN2
 * the negation of base (the PZ_RUN1 pattern; integers: its complement), PZ_TIMED a mix
 * of NaNs with random payloads and large values. Other element types get random bytes
 * (PZ_RUN2: the complement). */
static void poison_fill(kgb_dtype_t dt, uint8_t *p, size_t bytes, int variant, const uint8_t *base, uint64_t *rng)
{
	size_t es = kgb_dtype_size(dt);
	size_t n = es ? bytes / es : 0;
	unsigned ebits, mbits, elo, ehi;   /* float layout, exponent field range of the large values */
	switch (dt) {
	/* large against ordinary data, yet with an ulp well below 1, so that adding the
	 * old contents to a result of ordinary size changes the bits */
	case KGB_DT_F32: ebits = 8; mbits = 23; elo = 127 + 10; ehi = 127 + 20; break;
	case KGB_DT_F64: ebits = 11; mbits = 52; elo = 1023 + 10; ehi = 1023 + 40; break;
	case KGB_DT_F16: ebits = 5; mbits = 10; elo = 15 + 6; ehi = 15 + 9; break;
	case KGB_DT_BF16: ebits = 8; mbits = 7; elo = 127 + 6; ehi = 127 + 9; break;
	default: ebits = 0; mbits = 0; elo = ehi = 0; break;
	}
	if (ebits == 0 || es > 8) {
		for (size_t i = 0; i < bytes; i++)
			p[i] = variant == PZ_RUN2 ? (uint8_t)~base[i] : (uint8_t)rng_next(rng);
		return;
	}
	uint64_t sign = 1ull << (es * 8 - 1), emax = (1ull << ebits) - 1, mmask = (1ull << mbits) - 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t bits = 0, r = rng_next(rng);
		if (variant == PZ_RUN2) {
			memcpy(&bits, base + i * es, es);   /* little-endian */
			bits ^= sign;
		} else if (variant == PZ_TIMED && (r & 3) == 0) {
			uint64_t m = (r >> 8) & mmask;
			bits = ((r >> 2) & 1 ? sign : 0) | (emax << mbits) | m | (1ull << (mbits - 1));  /* quiet NaN */
		} else {
			uint64_t e = elo + (r >> 40) % (ehi - elo + 1);
			bits = (r & 1 ? sign : 0) | (e << mbits) | ((r >> 1) & mmask);
		}
		memcpy(p + i * es, &bits, es);
	}
}

static void free_guarded(xjob_t *x, devbuf_t *d)
{
	if (d->view)
		x->be->free(x->ctx, d->view);
	if (d->parent)
		x->be->free(x->ctx, d->parent);
	d->view = d->parent = NULL;
}

static size_t tensor_bytes(const kgb_tensor_t *t)
{
	return t->storage * kgb_dtype_size(t->dtype);
}

/* The host side of a case's buffers, before the device is taken: read-back buffers,
 * the poison patterns, the packed inputs of both sets, the scratch sizes. CPU work,
 * kept out of the device lock so that it overlaps another job's timing. */
static int host_buffers(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	const kgb_case_t *c = &xc->c;
	char e[256];
	size_t maxb = 0;
	for (int i = 0; i < c->ntensors; i++) {
		size_t b = tensor_bytes(&c->t[i]);
		xc->t[i].bytes = b ? b : 1;   /* an empty tensor still gets a (one-byte) view */
		maxb = KGB_MAX(maxb, xc->t[i].bytes);
		xc->rb1[i] = kgb_xmalloc(xc->t[i].bytes);
		xc->rb2[i] = kgb_xmalloc(xc->t[i].bytes);
		xc->rb3[i] = kgb_xmalloc(xc->t[i].bytes);
		if (c->t[i].role == KGB_ROLE_OUT) {
			for (int z = 0; z < PZ_N; z++) {
				xc->pz[z][i] = kgb_xmalloc(xc->t[i].bytes);
				poison_fill(c->t[i].dtype, xc->pz[z][i], xc->t[i].bytes, z, xc->pz[PZ_RUN1][i], &x->rng);
			}
		} else {
			xc->up[i] = kgb_xcalloc(1, xc->t[i].bytes);
			xc->up2[i] = kgb_xcalloc(1, xc->t[i].bytes);
			kgb_tensor_pack(&c->t[i], xc->inputs.v[i], xc->up[i]);
			kgb_tensor_pack(&c->t[i], xc->inputs2.v[i], xc->up2[i]);
		}
	}
	/* scratch: a byte never 0x00 or 0xFF (an empty or all-ones slot), run 2 its complement */
	for (int z = 0; z < PZ_N; z++)
		xc->sbyte[z] = (uint8_t)(1u + rng_next(&x->rng) % 254u);
	xc->sbyte[PZ_RUN2] = (uint8_t)~xc->sbyte[PZ_RUN1];
	xc->s = kgb_xcalloc(x->plan->nscratch ? x->plan->nscratch : 1, sizeof *xc->s);
	for (size_t si = 0; si < x->plan->nscratch; si++) {
		const kgb_plan_scratch_t *S = &x->plan->scratch[si];
		int64_t bytes;
		if (kgb_expr_eval_int(S->bytes, c->sym, &bytes, e, sizeof e) != 0)
			return set_v(v, KGB_V_PLAN_ERROR, "scratch[%zu] '%s' bytes '%s': %s", si, S->name, S->bytes, e);
		if (bytes < 0 || (uint64_t)bytes > ((uint64_t)1 << 40))
			return set_v(v, KGB_V_PLAN_ERROR, "scratch[%zu] '%s' bytes '%s' = %lld (out of range)", si,
			             S->name, S->bytes, (long long)bytes);
		xc->s[si].bytes = bytes ? (size_t)bytes : 1;
		maxb = KGB_MAX(maxb, xc->s[si].bytes);
	}
	xc->hostlen = maxb + 2 * KGB_GUARD_BYTES + 4096u;
	xc->host = kgb_xmalloc(xc->hostlen);
	return 0;
}

/* The device side: every buffer with its guard bands (host_buffers first). */
static int alloc_all(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	const kgb_case_t *c = &xc->c;
	char e[256];
	for (int i = 0; i < c->ntensors; i++) {
		size_t b = tensor_bytes(&c->t[i]);
		int rc = alloc_guarded(x, &xc->t[i]);
		if (rc == KGB_BE_FAULT)
			return set_v(v, KGB_V_ILLEGAL_ADDRESS, "allocating tensor '%s': %s", c->t[i].name, be_err(x));
		if (rc)
			return set_v(v, KGB_V_INFRA_ERROR, "allocating tensor '%s' (%zu bytes): %s", c->t[i].name, b,
			             be_err(x));
	}
	for (size_t si = 0; si < x->plan->nscratch; si++) {
		size_t bytes = xc->s[si].bytes;
		int rc = alloc_guarded(x, &xc->s[si]);
		if (rc)
			return set_v(v, be_verdict(rc == KGB_BE_ERR ? KGB_BE_NOMEM : rc),
			             "allocating scratch '%s' (%zu bytes): %s", x->plan->scratch[si].name, bytes, be_err(x));
	}

	xc->allocated = true;
	for (size_t ki = 0; ki < x->plan->nkernels; ki++)
		bind_buffers(x, xc, ki);
	if (xc->nbc) {
		kgb_dbuf_t *views[KGB_MAX_TENSORS];
		for (int i = 0; i < c->ntensors; i++)
			views[i] = xc->t[i].view;
		/* pointer arrays built from the offsets of both input sets, before any run */
		int rc = kgb_nblas_case_bind(xc->nbc, views, xc->up, xc->up2, &xc->set, e, sizeof e);
		if (rc != KGB_BE_OK)
			return set_v(v, rc == KGB_BE_FAULT ? KGB_V_ILLEGAL_ADDRESS : KGB_V_INFRA_ERROR, "%s", e);
	}
	return 0;
}

/* Map a failing backend call to a verdict, marking the context dead on a fault. */
static int be_fail(xjob_t *x, int rc, verdict_t *v, const char *what)
{
	if (rc == KGB_BE_FAULT || rc == KGB_BE_TIMEOUT)
		x->dead = true;
	return set_v(v, be_verdict(rc), "%s: %s", what, be_err(x));
}

/* The guard byte of tensor i (scratch: i + KGB_MAX_TENSORS). KGB_GUARD_BYTE for the
 * first tensor, a different byte for each of the others: a kernel that copies an
 * input's guard band into an output's guard band (an identity-like op reading and
 * writing one past the end) changes the output's guard bytes and is caught. None of
 * them is a poison byte or zero. */
static uint8_t guard_byte(size_t i)
{
	return (uint8_t)(KGB_GUARD_BYTE + 0x11u * (i % 14u));
}

/* The packed inputs of the set in the buffers (xc->set). */
static uint8_t **cur_up(xcase_t *xc)
{
	return xc->set == 0 ? xc->up : xc->set == 1 ? xc->up2 : xc->upf;
}

/* Fill guards and contents of every buffer for a run: inputs of the current set
 * (xc->set) as uploaded, outputs with poison variant pz (INOUT: their input values;
 * pz < 0: outputs keep what the previous run left), scratch with poison or zeros. */
static int stage(xjob_t *x, xcase_t *xc, int pz, bool guards, verdict_t *v)
{
	/* guards == false is the timing loop: IN tensors are known unchanged by then
	 * (the validated runs checked them), so only outputs and INOUT tensors are reset */
	const kgb_case_t *c = &xc->c;
	int rc;
	for (int i = 0; i < c->ntensors; i++) {
		devbuf_t *d = &xc->t[i];
		if (guards) {
			uint8_t g = guard_byte((size_t)i);
			if ((rc = x->be->fill(x->ctx, d->parent, 0, g, KGB_GUARD_BYTES)) ||
			    (rc = x->be->fill(x->ctx, d->parent, KGB_GUARD_BYTES + d->bytes, g, d->tail)))
				return be_fail(x, rc, v, "filling guard bands");
		}
		if (c->t[i].role == KGB_ROLE_OUT)
			rc = pz < 0 ? 0 : x->be->write(x->ctx, d->view, 0, xc->pz[pz][i], d->bytes);
		else if (guards || c->t[i].role == KGB_ROLE_INOUT)
			rc = x->be->write(x->ctx, d->view, 0, cur_up(xc)[i], d->bytes);
		else
			rc = 0;
		if (rc)
			return be_fail(x, rc, v, "uploading tensors");
	}
	uint8_t sb = xc->sbyte[pz < 0 ? PZ_TIMED : pz];
	for (size_t si = 0; si < x->plan->nscratch; si++) {
		devbuf_t *d = &xc->s[si];
		if (guards) {
			uint8_t g = guard_byte(KGB_MAX_TENSORS + si);
			if ((rc = x->be->fill(x->ctx, d->parent, 0, g, KGB_GUARD_BYTES)) ||
			    (rc = x->be->fill(x->ctx, d->parent, KGB_GUARD_BYTES + d->bytes, g, d->tail)))
				return be_fail(x, rc, v, "filling guard bands");
		}
		if ((rc = x->be->fill(x->ctx, d->view, 0, x->plan->scratch[si].zero ? 0 : sb, d->bytes)))
			return be_fail(x, rc, v, "filling scratch");
	}
	return 0;
}

/* Put input set `set` (0 = A, 1 = B, 2 = the fresh inputs in upf) into the IN and
 * INOUT buffers. */
static int use_set(xjob_t *x, xcase_t *xc, int set, verdict_t *v)
{
	xc->set = set;
	for (int i = 0; i < xc->c.ntensors; i++) {
		if (xc->c.t[i].role == KGB_ROLE_OUT)
			continue;
		int rc = x->be->write(x->ctx, xc->t[i].view, 0, cur_up(xc)[i], xc->t[i].bytes);
		if (rc)
			return be_fail(x, rc, v, "uploading inputs");
	}
	return 0;
}

/* Inputs no launch has seen into the IN and INOUT buffers: b's values packed (a
 * validated sample's, chk >= 0, or inputs drawn for this sample alone, chk -1). */
static int use_fresh(xjob_t *x, xcase_t *xc, const kgb_hostbufs_t *b, int chk, verdict_t *v)
{
	for (int i = 0; i < xc->c.ntensors; i++) {
		if (xc->c.t[i].role == KGB_ROLE_OUT)
			continue;
		if (!xc->upf[i])
			xc->upf[i] = kgb_xcalloc(1, xc->t[i].bytes);
		kgb_tensor_pack(&xc->c.t[i], b->v[i], xc->upf[i]);
	}
	xc->chk = chk;
	return use_set(x, xc, 2, v);
}

/* A timed sample's own inputs: generated from a seed of the job's private generator
 * (never derived from the job), so no earlier launch saw them. */
static int fresh_inputs(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	kgb_hostbufs_t b;
	char e[256];
	int rc = PF(x, PF_INPUTS, kgb_case_inputs(&xc->c, rng_next(&x->rng), &b, e, sizeof e));
	if (rc != 0)
		set_v(v, KGB_V_INFRA_ERROR, "inputs of a timed sample: %s", e);
	else
		rc = use_fresh(x, xc, &b, -1, v);
	kgb_hostbufs_release(&b);
	return rc;
}

static bool guards_ok(const uint8_t *p, size_t bytes, size_t tail, uint8_t g)
{
	for (size_t i = 0; i < KGB_GUARD_BYTES; i++)
		if (p[i] != g)
			return false;
	for (size_t i = 0; i < tail; i++)
		if (p[KGB_GUARD_BYTES + bytes + i] != g)
			return false;
	return true;
}

/* Read every tensor (and its guards) back into rb[], marking broken guards in
 * guard_broken[] and the first scratch buffer whose guard broke in *scratch_broken. */
static int read_back_into(xjob_t *x, xcase_t *xc, uint8_t **rb, bool *guard_broken, int *scratch_broken,
                          verdict_t *v)
{
	const kgb_case_t *c = &xc->c;
	for (int i = 0; i < c->ntensors; i++) {
		devbuf_t *d = &xc->t[i];
		int rc = x->be->read(x->ctx, d->parent, 0, xc->host, KGB_GUARD_BYTES + d->bytes + d->tail);
		if (rc)
			return be_fail(x, rc, v, "reading results");
		if (!guards_ok(xc->host, d->bytes, d->tail, guard_byte((size_t)i)))
			guard_broken[i] = true;
		memcpy(rb[i], xc->host + KGB_GUARD_BYTES, d->bytes);
	}
	for (size_t si = 0; si < x->plan->nscratch; si++) {
		devbuf_t *d = &xc->s[si];
		int rc = x->be->read(x->ctx, d->parent, 0, xc->host, KGB_GUARD_BYTES + d->bytes + d->tail);
		if (rc)
			return be_fail(x, rc, v, "reading scratch");
		if (!guards_ok(xc->host, d->bytes, d->tail, guard_byte(KGB_MAX_TENSORS + si)) && *scratch_broken < 0)
			*scratch_broken = (int)si;
	}
	return 0;
}

/* Runs 1 and 2 and the checked timed runs: into the case's own guard flags. */
static int read_back(xjob_t *x, xcase_t *xc, uint8_t **rb, verdict_t *v)
{
	return read_back_into(x, xc, rb, xc->guard_broken, &xc->scratch_broken, v);
}

/* The launches of one run of the case: all of xc->L, or those whose "when" holds
 * (shallow copies in xc->run: the argument arrays stay owned by xc->L). */
static const kgb_launch_t *case_launches(xjob_t *x, xcase_t *xc, size_t *n)
{
	*n = x->plan->nkernels;
	if (!xc->skip)
		return xc->L;
	size_t j = 0;
	for (size_t ki = 0; ki < x->plan->nkernels; ki++)
		if (!(xc->skip >> ki & 1u))
			xc->run[j++] = xc->L[ki];
	*n = j;
	return xc->run;
}

static int launch(xjob_t *x, xcase_t *xc, double *elapsed, verdict_t *v, const char *what)
{
	double el = 0;
	size_t n;
	const kgb_launch_t *L = case_launches(x, xc, &n);
	launch_window(x, 1);
	int rc = x->be->run(x->ctx, L, n, run_timeout_ms(x), &el);
	/* a run that timed out or faulted may still hold the device: the window stays
	 * open, so what follows (a release that blocks on the hung kernel) is still
	 * counted against the kernel */
	if (rc != KGB_BE_TIMEOUT && rc != KGB_BE_FAULT)
		launch_window(x, 0);
	if (rc)
		return be_fail(x, rc, v, what);
	x->device_ns += el;
	x->occupied_ns += el;
	if (elapsed)
		*elapsed = el;
	return 0;
}

static void fill_clocks(xjob_t *x, Kgb__Timing *tm)
{
	kgb_clock_info_t ci;
	if (x->be->clocks && x->be->clocks(x->ctx, &ci) == 0) {
		tm->sm_clock_mhz = ci.sm_clock_mhz;
		tm->temperature_c = ci.temperature_c;
		if (ci.throttled)
			tm->throttled = true;
	}
}

/* Judge the outputs of timed run `what` (read back now) against the reference of the
 * input set in the buffers: guards, inputs unchanged, every output. Returns 0 or -1
 * with the verdict. */
static int check_timed(xjob_t *x, xcase_t *xc, const char *what, verdict_t *v)
{
	const kgb_case_t *c = &xc->c;
	static const char *const sets[] = { "", " (input set B)", " (inputs of its own)" };
	const char *set = sets[xc->set];
	KGB_ASSERT(xc->set != 2 || xc->chk >= 0);
	const kgb_hostbufs_t *ref = xc->set == 0 ? &xc->ref : xc->set == 1 ? &xc->ref2 : &xc->chk_ref[xc->chk];
	const kgb_hostbufs_t *in = xc->set == 0 ? &xc->inputs : xc->set == 1 ? &xc->inputs2 : &xc->chk_in[xc->chk];
	for (int i = 0; i < c->ntensors; i++)
		xc->guard_broken[i] = false;
	if (read_back(x, xc, xc->rb1, v))
		return -1;
	for (int i = 0; i < c->ntensors; i++) {
		if (xc->guard_broken[i])
			return set_v(v, KGB_V_OUT_OF_BOUNDS_WRITE, "%s%s: guard band of '%s' overwritten", what, set,
			             c->t[i].name);
		if (c->t[i].role == KGB_ROLE_IN) {
			if (memcmp(xc->rb1[i], cur_up(xc)[i], xc->t[i].bytes) != 0)
				return set_v(v, KGB_V_INPUT_MODIFIED, "%s%s: input %s changed", what, set, c->t[i].name);
			continue;
		}
		double ma = 0, mr = 0;
		char m[256] = "";
		int vr = kgb_validate_output_before(c, ref, in, i, xc->rb1[i],
		                                    c->t[i].role == KGB_ROLE_OUT ? xc->pz[PZ_TIMED][i] : NULL, -1, true,
		                                    &ma, &mr, m, sizeof m);
		/* on inputs no earlier launch saw, an answer that passed runs 1 to 3 and is now
		 * wrong was kept from an earlier launch */
		if (vr != KGB_V_PASS && xc->set == 2)
			return set_v(v, KGB_V_STALE_RESULT, "%s%s: %s: %s (inputs no earlier launch saw: the answer "
			             "does not follow from them)", what, set, kgb_verdict_name(vr), m);
		if (vr != KGB_V_PASS)
			return set_v(v, KGB_V_WRONG_RESULT, "%s%s: %s: %s", what, set, kgb_verdict_name(vr), m);
	}
	return 0;
}

/* Every kernel of the case gets a freshly compiled (or loaded) module, so nothing a
 * kernel kept in module state (a program-scope or __device__ global) survives into the
 * next run. No-op for OpenCL C 1.x, which has no writable program-scope state. */
static int fresh_modules(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	if (!x->stateful || x->dead)
		return 0;
	x->instance++;
	for (size_t i = 0; i < x->nmods;) {
		bool used = false;
		for (size_t ki = 0; ki < x->plan->nkernels; ki++)
			if (x->mods[i].mod && xc->L[ki].mod == x->mods[i].mod)
				used = true;
		if (!used) {
			i++;
			continue;
		}
		x->be->module_free(x->ctx, x->mods[i].mod);
		free(x->mods[i].msg);
		x->mods[i] = x->mods[--x->nmods];
	}
	for (size_t ki = 0; ki < x->plan->nkernels; ki++) {
		xc->L[ki].mod = NULL;
		if (xc->skip >> ki & 1u)
			continue;   /* its "when" is 0 on this case */
		if (prepare_kernel(x, xc, ki, xc->cfg[ki], v) != 0)
			return -1;
	}
	return 0;
}

/* ---- timing ----
 *
 * The first samples (up to the two validated ones) run one at a time: restore,
 * flush, launch, wait. The rest go in batches (kgb_backend_t.run_samples) where the
 * backend has them: each sample's restore (device copies from pristine buffers kept
 * on the device), flush and launches are queued back to back and the host waits once,
 * so the device is not left idle between samples while the host stages the next. A
 * sample is the same device work either way, timed by the same events around its
 * launches. */

/* Samples a batch holds at most; KGB_TIMING_BATCH overrides (1: one at a time). */
#define TIMING_BATCH_MAX 256
/* The sampler (common/stats.h): at least TIMING_MIN_SAMPLES, at most
 * TIMING_MAX_SAMPLES, stopping once the relative standard error is under
 * TIMING_TARGET_RSE and TIMING_MIN_SHARE of the budget is spent, or the budget
 * (the job's timing_budget_ms, TIMING_BUDGET_MS when unset) is spent. The warm-up is
 * TIMING_WARMUP runs, fewer when they take over TIMING_WARMUP_SHARE of the budget. */
#define TIMING_MIN_SAMPLES 10
#define TIMING_MAX_SAMPLES 100000
#define TIMING_TARGET_RSE 0.005
#define TIMING_MIN_SHARE 0.2
#define TIMING_BUDGET_MS 500
#define TIMING_WARMUP 3
/* x->fresh batches: device memory for the input sets of one batch, at most */
#define TIMING_POOL_BYTES ((size_t)256 << 20)
#define TIMING_WARMUP_SHARE 0.1

typedef struct batch {
	kgb_prep_t *prep;          /* the restore steps of a sample */
	size_t nprep;
	kgb_dbuf_t *pristine[KGB_MAX_TENSORS];
	/* x->fresh: per IN and INOUT tensor, `slots` input sets back to back, generated
	 * before each batch; sample k of a batch copies set k (kgb_prep_t.stride) */
	kgb_dbuf_t *pool[KGB_MAX_TENSORS];
	size_t slots;
	double *ns;                /* a batch's sample times */
	size_t want;               /* the next batch's size: doubles up to max */
	size_t max;
	bool off;                  /* the backend has none, or pristine copies did not fit */
} batch_t;

/* KGB_TIMING_BATCH: the largest batch (1: one sample at a time), else dflt. */
static size_t batch_max(size_t dflt)
{
	const char *e = getenv("KGB_TIMING_BATCH");
	char *end;
	unsigned long n = e && *e ? strtoul(e, &end, 10) : 0;
	if (!e || !*e || *end || n == 0)
		return dflt;
	return KGB_MIN((size_t)n, (size_t)KGB_BE_MAX_BATCH);
}

/* The restore steps of a timed sample: OUT tensors get the timed poison and INOUT
 * tensors input set A back (copied from pristine device buffers), scratch its byte;
 * with x->fresh, IN and INOUT tensors get the sample's own inputs from the pool.
 * 0, or -1 when there is no room for the copies (the caller times one at a time). */
static int batch_prepare(xjob_t *x, xcase_t *xc, batch_t *b)
{
	const kgb_case_t *c = &xc->c;
	b->prep = kgb_xcalloc((size_t)c->ntensors + x->plan->nscratch + 1, sizeof *b->prep);
	if (x->fresh) {
		size_t in_bytes = 0;
		for (int i = 0; i < c->ntensors; i++)
			if (c->t[i].role != KGB_ROLE_OUT)
				in_bytes += xc->t[i].bytes;
		b->slots = KGB_MIN(b->max, TIMING_POOL_BYTES / KGB_MAX(in_bytes, (size_t)1));
		if (b->slots < 2)
			return -1;
		b->max = b->slots;
		b->want = KGB_MIN(b->want, b->max);
	}
	b->ns = kgb_xcalloc(b->max, sizeof *b->ns);
	for (int i = 0; i < c->ntensors; i++) {
		if (x->fresh && c->t[i].role != KGB_ROLE_OUT) {
			devbuf_t *d = &xc->t[i];
			if (x->be->alloc(x->ctx, b->slots * d->bytes, &b->pool[i]) != 0)
				return -1;
			b->prep[b->nprep++] = (kgb_prep_t){ .dst = d->view, .src = b->pool[i], .bytes = d->bytes,
				                                .stride = d->bytes };
			continue;
		}
		if (c->t[i].role == KGB_ROLE_IN || xc->t[i].bytes == 0)
			continue;
		devbuf_t *d = &xc->t[i];
		const uint8_t *src = c->t[i].role == KGB_ROLE_OUT ? xc->pz[PZ_TIMED][i] : xc->up[i];
		if (x->be->alloc(x->ctx, d->bytes, &b->pristine[i]) != 0 ||
		    x->be->write(x->ctx, b->pristine[i], 0, src, d->bytes) != 0)
			return -1;
		b->prep[b->nprep++] = (kgb_prep_t){ .dst = d->view, .src = b->pristine[i], .bytes = d->bytes };
	}
	for (size_t si = 0; si < x->plan->nscratch; si++) {
		devbuf_t *d = &xc->s[si];
		b->prep[b->nprep++] = (kgb_prep_t){ .dst = d->view, .bytes = d->bytes,
			                                .byte = x->plan->scratch[si].zero ? 0 : xc->sbyte[PZ_TIMED] };
	}
	return 0;
}

static void batch_release(xjob_t *x, batch_t *b)
{
	for (int i = 0; i < KGB_MAX_TENSORS; i++) {
		if (b->pristine[i] && !x->dead)
			x->be->free(x->ctx, b->pristine[i]);
		if (b->pool[i] && !x->dead)
			x->be->free(x->ctx, b->pool[i]);
	}
	free(b->prep);
	free(b->ns);
}

/* One batch of samples into the sampler. est_ns is the wall time of a sample so far.
 * Returns 0, 1 when batches are not available (nothing ran: time one at a time), or
 * -1 with the verdict. */
static int time_batch(xjob_t *x, xcase_t *xc, batch_t *b, kgb_sampler_t *s, double *est_ns, uint32_t *throttled,
                      verdict_t *v)
{
	size_t count = b->want;
	double limit_ns = (run_timeout_ms(x) ? run_timeout_ms(x) : 60000) * 1e6;
	if (*est_ns > 0) {
		/* the batch ends near the budget and well inside one run's time limit */
		double left = s->budget_ns - s->spent_ns;
		count = KGB_MIN(count, (size_t)KGB_MAX(1.0, left / *est_ns + 1));
		count = KGB_MIN(count, (size_t)KGB_MAX(1.0, 0.25 * limit_ns / *est_ns));
	}
	if (s->max_samples && s->max_samples - s->n < count)
		count = s->max_samples - s->n;
	/* the samples' own inputs, host work before the batch: not in a sample's events,
	 * but in the wall time the budget counts (time_case) */
	uint64_t g0 = kgb_now_ns();
	for (size_t k = 0; x->fresh && k < count; k++) {
		kgb_hostbufs_t in;
		char e[256];
		int rc = PF(x, PF_INPUTS, kgb_case_inputs(&xc->c, rng_next(&x->rng), &in, e, sizeof e));
		for (int i = 0; rc == 0 && i < xc->c.ntensors; i++) {
			if (!b->pool[i])
				continue;
			if (!xc->upf[i])
				xc->upf[i] = kgb_xcalloc(1, xc->t[i].bytes);
			kgb_tensor_pack(&xc->c.t[i], in.v[i], xc->upf[i]);
			if ((rc = x->be->write(x->ctx, b->pool[i], k * xc->t[i].bytes, xc->upf[i], xc->t[i].bytes)) != 0) {
				kgb_hostbufs_release(&in);
				return be_fail(x, rc, v, "uploading the inputs of a batch");
			}
		}
		kgb_hostbufs_release(&in);
		if (rc != 0)
			return set_v(v, KGB_V_INFRA_ERROR, "inputs of a timed sample: %s", e);
	}
	size_t n;
	const kgb_launch_t *L = case_launches(x, xc, &n);
	double busy = 0;
	uint64_t t0 = kgb_now_ns();
	double gen = (double)(t0 - g0);
	launch_window(x, 1);
	int rc = x->be->run_samples(x->ctx, b->prep, b->nprep, L, n, count, run_timeout_ms(x), b->ns, &busy, x->scrub);
	if (rc != KGB_BE_TIMEOUT && rc != KGB_BE_FAULT)
		launch_window(x, 0);
	if (rc == KGB_BE_UNSUPPORTED)
		return 1;
	if (rc)
		return be_fail(x, rc, v, "timed run (batch)");
	double wall = (double)(kgb_now_ns() - t0) + gen;
	*est_ns = wall / (double)count;
	size_t missed = 0;
	for (size_t k = 0; k < count; k++) {
		if (b->ns[k] < 0) { /* its gate timed out: host time may be inside (cuda_gate) */
			s->spent_ns += wall / (double)count;
			missed++;
			continue;
		}
		kgb_sampler_add(s, b->ns[k], wall / (double)count);
		x->device_ns += b->ns[k];
	}
	if (missed)
		log_add(x, "case %u: %zu of %zu timed samples dropped: the host took over the gate's time-out to queue them\n",
		        xc->c.index, missed, count);
	x->occupied_ns += busy;
	if (x->be->clocks) {
		kgb_clock_info_t ci;
		if (x->be->clocks(x->ctx, &ci) == 0 && ci.throttled)
			*throttled += (uint32_t)count;
	}
	b->want = KGB_MIN(2 * b->want, b->max);
	return 0;
}

/* What the timing of a case needs before it has the device to itself, done under the
 * shared lock so that the exclusive hold is the samples alone: a fresh module, input
 * set A and the timed poison staged with guards, the pristine copies of a batch.
 * Returns 0, or -1 with the verdict. */
static int time_setup(xjob_t *x, xcase_t *xc, batch_t *b, verdict_t *v)
{
	memset(b, 0, sizeof *b);
	b->max = batch_max(TIMING_BATCH_MAX);
	b->want = KGB_MIN((size_t)8, b->max);
	b->off = !x->be->run_samples || b->max <= 1;
	if (fresh_modules(x, xc, v) || use_set(x, xc, 0, v) || stage(x, xc, PZ_TIMED, true, v))
		return -1;
	if (!b->off && batch_prepare(x, xc, b) != 0) {
		/* no room for the pristine copies: one sample at a time */
		log_add(x, "timing one sample at a time: no device memory for the restore copies (or for the inputs of a batch)\n");
		b->off = true;
	}
	return 0;
}

/* Before a timed sample, outside its events: the cache flush. */
static int flush(xjob_t *x, verdict_t *v)
{
	int rc = x->be->flush_cache ? x->be->flush_cache(x->ctx) : KGB_BE_OK;
	if (rc == KGB_BE_OK)
		return 0;
	be_fail(x, rc, v, "cache flush");
	v->v = KGB_V_INFRA_ERROR;
	return -1;
}

/* Before a timed sample, outside its events: the backend's scrub of local memory. */
static int scrub_local(xjob_t *x, verdict_t *v)
{
	int rc = x->scrub ? x->be->scrub_local(x->ctx) : KGB_BE_OK;
	if (rc == KGB_BE_OK)
		return 0;
	if (rc == KGB_BE_UNSUPPORTED) { /* a step the runtime cannot run here (no HIPRTC) */
		log_add(x, "local memory not scrubbed: %s\n", x->be->last_error(x->ctx));
		x->scrub = false;
		return 0;
	}
	be_fail(x, rc, v, "local memory scrub");
	if (!x->dead)
		v->v = KGB_V_INFRA_ERROR;
	return -1;
}

/* The inputs and references of a timed case's two validated samples (x->fresh): seeds
 * of the job's private generator, references computed here and never cached (no other
 * job will draw the same seeds). Host work, before the device is taken for timing. */
static int timed_refs(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	char e[256];
	uint64_t t0 = kgb_now_ns();
	for (int k = 0; k < 2; k++) {
		uint64_t seed = rng_next(&x->rng);
		int rc = PF(x, PF_INPUTS, kgb_case_inputs(&xc->c, seed, &xc->chk_in[k], e, sizeof e));
		if (rc == 0)
			rc = PF(x, PF_REF, kgb_case_reference_once(&xc->c, seed, &xc->chk_ref[k], e, sizeof e));
		xc->have_chk = true;   /* both released with the case, also after a failure */
		if (rc != 0)
			return set_v(v, KGB_V_INFRA_ERROR, "reference of a validated timed sample: %s", e);
	}
	log_add(x, "case %u: inputs and references of 2 validated timed samples: %.1f ms\n", xc->c.index,
	        (double)(kgb_now_ns() - t0) / 1e6);
	return 0;
}

/* Time a case that passed, set up by time_setup (b). Fills tm and returns 0, or -1
 * with the verdict.
 *
 * With x->fresh (every job but a trusted one), every timed sample runs on inputs of its
 * own, generated on the host from a new seed before it and uploaded outside its events:
 * a kernel that answers from what an earlier launch left (program-scope or __device__
 * variables, local or shared memory, caches) returns that launch's answer, which is
 * wrong for these inputs, and a memo keyed by the inputs never hits. One of the first
 * TIMING_MIN_SAMPLES samples, drawn at random, and one more run after the last sample,
 * staged like any sample, run on inputs whose reference was computed before
 * (timed_refs) and are judged: a wrong answer there is `stale_result`. The kernel cannot
 * tell them from the others. Where the backend has scrub_local, local memory is
 * overwritten before every sample. Generating and uploading a sample's inputs counts
 * against the budget (validation does not): the device is held exclusively meanwhile,
 * so a case whose inputs take longer to make than its kernel to run gets fewer samples
 * (at least TIMING_MIN_SAMPLES) and a wider interval, instead of holding the device
 * from every other slot for minutes. */
static int time_case(xjob_t *x, xcase_t *xc, batch_t *b, Kgb__Timing *tm, verdict_t *v)
{
	double budget_ns = (x->job->timing_budget_ms ? x->job->timing_budget_ms : TIMING_BUDGET_MS) * 1e6;
	kgb_sampler_t s;
	int rc = -1;
	kgb_sampler_init(&s, TIMING_MIN_SAMPLES, TIMING_MAX_SAMPLES, TIMING_TARGET_RSE, budget_ns);
	/* spend at least a fifth of the budget sampling: ten samples of a microsecond
	 * kernel can meet the rse target by luck and leave a median that moves run to run */
	kgb_sampler_set_min_time(&s, TIMING_MIN_SHARE * budget_ns);
	/* two of the first TIMING_MIN_SAMPLES samples are validated, one of them on input
	 * set B; which ones is not predictable from the job. When the budget ends the
	 * sampling before the set-B sample, one more run on set B follows the last one. */
	int chk_b = (int)(rng_next(&x->rng) % TIMING_MIN_SAMPLES);
	int chk_a = (int)(rng_next(&x->rng) % (TIMING_MIN_SAMPLES - 1));
	if (chk_a >= chk_b)
		chk_a++;
	if (x->fresh)
		chk_b = -1;   /* every sample has inputs of its own: set B adds nothing */

	/* warm-up: a few runs, at most ~10% of the budget; the first cache flush (which
	 * allocates and faults in the flush buffer) happens here, outside the budget */
	if (x->be->flush_cache && x->be->flush_cache(x->ctx) != 0) {
		be_fail(x, KGB_BE_ERR, v, "cache flush");
		v->v = KGB_V_INFRA_ERROR;
		goto out;
	}
	uint64_t t0 = kgb_now_ns();
	for (int w = 0; w < TIMING_WARMUP; w++) {
		if (w > 0 && (double)(kgb_now_ns() - t0) > TIMING_WARMUP_SHARE * budget_ns)
			break;
		if (stage(x, xc, PZ_TIMED, false, v) || launch(x, xc, NULL, v, "timed run (warm-up)"))
			goto out;
	}
	fill_clocks(x, tm);
	uint32_t throttled = 0;
	uint64_t last = kgb_now_ns();
	bool last_checked = false, did_b = false;
	double est_ns = 0;
	int singles = KGB_MAX(chk_a, chk_b) + 1;
	for (int j = 0; !kgb_sampler_done(&s); j++) {
		if (j >= singles && !b->off) {
			int br = time_batch(x, xc, b, &s, &est_ns, &throttled, v);
			if (br < 0)
				goto out;
			if (br == 0) {
				last_checked = false;
				last = kgb_now_ns();
				continue;
			}
			b->off = true;
		}
		double el;
		/* the validation work of a sample does not count against the budget; making
		 * its own inputs does (time_case's comment says why) */
		if (x->fresh && (j == chk_a ? use_fresh(x, xc, &xc->chk_in[0], 0, v) : fresh_inputs(x, xc, v)))
			goto out;
		uint64_t extra0 = kgb_now_ns();
		if (j == chk_b && use_set(x, xc, 1, v))
			goto out;
		uint64_t extra = kgb_now_ns() - extra0;
		if (stage(x, xc, PZ_TIMED, false, v) || scrub_local(x, v))
			goto out;
		if (flush(x, v) || launch(x, xc, &el, v, "timed run"))
			goto out;
		last_checked = j == chk_a || j == chk_b;
		if (last_checked) {
			char what[48];
			snprintf(what, sizeof what, "timed run %d", j + 1);
			extra0 = kgb_now_ns();
			if (check_timed(x, xc, what, v) || (j == chk_b && use_set(x, xc, 0, v)))
				goto out;
			did_b = did_b || j == chk_b;
			extra += kgb_now_ns() - extra0;
		}
		if (x->be->clocks) {
			kgb_clock_info_t ci;
			if (x->be->clocks(x->ctx, &ci) == 0 && ci.throttled)
				throttled++;
		}
		uint64_t now = kgb_now_ns();
		est_ns = (double)(now - last - KGB_MIN(extra, now - last));
		kgb_sampler_add(&s, el, est_ns);
		last = now;
	}
	fill_clocks(x, tm);

	/* fresh inputs: one more run, staged like a sample, on the second validated set */
	if (x->fresh && (use_fresh(x, xc, &xc->chk_in[1], 1, v) || stage(x, xc, PZ_TIMED, false, v) ||
	                 scrub_local(x, v) || flush(x, v) ||
	                 launch(x, xc, NULL, v, "timed run (after the last)") ||
	                 check_timed(x, xc, "timed run (after the last)", v)))
		goto out;
	/* the output of the last timed run is judged like any other */
	if (!x->fresh && !last_checked && check_timed(x, xc, "timed run (last)", v))
		goto out;
	if (!x->fresh && !did_b && (use_set(x, xc, 1, v) || stage(x, xc, PZ_TIMED, false, v) ||
	               launch(x, xc, NULL, v, "timed run (after the last)") ||
	               check_timed(x, xc, "timed run (after the last)", v)))
		goto out;

	kgb_stats_t st;
	kgb_stats_compute(s.v, s.n, &st);
	tm->median_ns = st.median;
	tm->min_ns = st.min;
	tm->p10_ns = st.p10;
	tm->p90_ns = st.p90;
	tm->mean_ns = st.mean;
	tm->stdev_ns = st.stdev;
	tm->samples = (uint32_t)st.n;
	tm->rse = st.rse;
	tm->throttled_samples = throttled;
	if (throttled)
		tm->throttled = true;
	rc = 0;
out:
	kgb_sampler_release(&s);
	return rc;
}

/* ---- autotuning over a kernel's plan configurations (worker/autotune.h) ---- */

typedef struct tune {
	xjob_t *x;
	xcase_t *xc;
	size_t ki;
	verdict_t first;           /* the first failing configuration's verdict */
	bool failed;
} tune_t;

static int tune_prepare(void *arg, size_t cfg)
{
	tune_t *t = arg;
	verdict_t v;
	if (prepare_kernel(t->x, t->xc, t->ki, cfg, &v) == 0)
		return 0;
	if (!t->failed) {
		t->first = v;
		t->failed = true;
	}
	return KGB_BE_ERR;
}

static int tune_sample(void *arg, double *ns)
{
	tune_t *t = arg;
	verdict_t v;
	int frc;
	if (t->x->dead)
		return KGB_BE_FAULT;
	if (stage(t->x, t->xc, PZ_RUN1, false, &v) != 0 ||
	    (t->x->be->flush_cache && (frc = t->x->be->flush_cache(t->x->ctx)) != 0) ||
	    launch(t->x, t->xc, ns, &v, "autotune run") != 0) {
		if (!t->failed) {
			t->first = v;
			t->failed = true;
		}
		return KGB_BE_ERR;
	}
	return 0;
}

/* Pick the fastest configuration of every kernel that has more than one (one kernel
 * at a time, the others at their current choice), leaving the launches built for the
 * winners. note gets "kernels[0]: configs[2]" parts. Returns 0 or -1 with the verdict
 * (no configuration of some kernel ran, or the context died). */
/* Whether a kernel of the plan has configurations to choose from. */
static bool plan_tunes(const xjob_t *x)
{
	for (size_t ki = 0; ki < x->plan->nkernels; ki++)
		if (x->plan->kernels[ki].nconfigs >= 2)
			return true;
	return false;
}

static int autotune(xjob_t *x, xcase_t *xc, char *note, size_t notelen, verdict_t *v)
{
	size_t used = 0;
	note[0] = 0;
	if (stage(x, xc, PZ_RUN1, true, v) != 0)
		return -1;
	for (size_t ki = 0; ki < x->plan->nkernels; ki++) {
		const kgb_plan_kernel_t *K = &x->plan->kernels[ki];
		if (K->nconfigs < 2 || (xc->skip >> ki & 1u))
			continue;
		tune_t t = { .x = x, .xc = xc, .ki = ki };
		kgb_autotune_ops_t ops = { .prepare = tune_prepare, .sample = tune_sample };
		kgb_autotune_result_t res;
		kgb_autotune_pick(&ops, &t, K->nconfigs, 3, &res);
		if (x->dead)
			return set_v(v, t.failed ? t.first.v : KGB_V_ILLEGAL_ADDRESS, "autotune, kernels[%zu]: %s", ki,
			             t.failed ? t.first.msg : "the device context was lost");
		if (res.best < 0)
			return set_v(v, t.failed ? t.first.v : KGB_V_LAUNCH_ERROR, "no configuration of kernels[%zu] "
			             "ran (%zu tried); configs[%zu]: %s", ki, res.tried, res.first_failed,
			             t.failed ? t.first.msg : "failed");
		if (prepare_kernel(x, xc, ki, (size_t)res.best, v) != 0)
			return -1;
		xc->cfg[ki] = (size_t)res.best;
		log_add(x, "case %u: kernels[%zu] '%s': autotune picked configs[%ld] of %zu (median %.0f ns, %zu failed)\n",
		        xc->c.index, ki, K->entry, res.best, K->nconfigs, res.best_ns, res.failed);
		int n = snprintf(note + used, notelen - used, "%skernels[%zu]: configs[%ld]", used ? ", " : "autotune: ",
		                 ki, res.best);
		if (n > 0)
			used = KGB_MIN(used + (size_t)n, notelen - 1);
	}
	return 0;
}

static void xcase_release(xjob_t *x, xcase_t *xc)
{
	for (int i = 0; i < KGB_MAX_TENSORS; i++) {
		free_guarded(x, &xc->t[i]);
		free(xc->up[i]);
		free(xc->up2[i]);
		free(xc->upf[i]);
		for (int z = 0; z < PZ_N; z++)
			free(xc->pz[z][i]);
		free(xc->rb1[i]);
		free(xc->rb2[i]);
		free(xc->rb3[i]);
	}
	if (xc->s)
		for (size_t si = 0; si < x->plan->nscratch; si++)
			free_guarded(x, &xc->s[si]);
	free(xc->s);
	if (xc->L)
		for (size_t ki = 0; ki < x->plan->nkernels; ki++)
			free(xc->L[ki].args);
	free(xc->L);
	kgb_nblas_case_destroy(&xc->nbc);
	free(xc->run);
	free(xc->cfg);
	free(xc->host);
	if (xc->have_chk)
		for (int k = 0; k < 2; k++) {
			kgb_hostbufs_release(&xc->chk_in[k]);
			kgb_hostbufs_release(&xc->chk_ref[k]);
		}
	if (xc->have_inputs2)
		kgb_hostbufs_release(&xc->inputs2);
	if (xc->have_ref2)
		kgb_hostbufs_release(&xc->ref2);
	if (xc->have_inputs)
		kgb_hostbufs_release(&xc->inputs);
	if (xc->have_ref)
		kgb_hostbufs_release(&xc->ref);
	if (xc->built)
		kgb_case_release(&xc->c);
}

/* Run 3: input set B in a fresh module, the outputs not poisoned but still holding
 * run 2's result. A kernel that folds the old contents of its output into the
 * result, or that recognises poison and leaves anything else alone, returns set A's
 * answer here. The device part runs in the same shared hold as runs 1 and 2, reading
 * back into rb3 with its own guard flags (guard3, scratch3), so that a case takes the
 * lock once for its validated runs; run3_check judges it after runs 1 and 2 passed. */
static int run3_device(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	xc->set = 1;
	xc->scratch3 = -1;
	memset(xc->guard3, 0, sizeof xc->guard3);
	if (PF(x, PF_COMPILE, fresh_modules(x, xc, v)) || PF(x, PF_TRANSFER, stage(x, xc, -1, true, v)) ||
	    PF(x, PF_RUN, launch(x, xc, NULL, v, "run 3")) ||
	    PF(x, PF_TRANSFER, read_back_into(x, xc, xc->rb3, xc->guard3, &xc->scratch3, v)))
		return -1;
	return 0;
}

/* Returns 0 when every output of run 3 matches set B's reference, else -1 with the
 * verdict. */
static int run3_check(xjob_t *x, xcase_t *xc, verdict_t *v)
{
	const kgb_case_t *c = &xc->c;
	static const char what[] = "run 3 (input set B, output buffers not re-poisoned: still holding run 2's "
	                           "result)";
	for (int i = 0; i < c->ntensors; i++) {
		if (xc->guard3[i])
			return set_v(v, KGB_V_OUT_OF_BOUNDS_WRITE, "%s: %s: a guard byte around the buffer changed (write "
			             "out of bounds)", what, c->t[i].name);
		if (c->t[i].role == KGB_ROLE_IN) {
			if (memcmp(xc->rb3[i], xc->up2[i], xc->t[i].bytes) != 0)
				return set_v(v, KGB_V_INPUT_MODIFIED, "%s: input %s changed", what, c->t[i].name);
			continue;
		}
		char m[256] = "";
		int vr = kgb_validate_output_before(c, &xc->ref2, &xc->inputs2, i, xc->rb3[i],
		                                    c->t[i].role == KGB_ROLE_OUT ? xc->rb2[i] : NULL, -1, false, NULL,
		                                    NULL, m, sizeof m);
		if (vr != KGB_V_PASS)
			return set_v(v, vr, "%s: %s", what, m);
	}
	if (xc->scratch3 >= 0)
		return set_v(v, KGB_V_OUT_OF_BOUNDS_WRITE, "%s: guard band of scratch '%s' overwritten", what,
		             x->plan->scratch[xc->scratch3].name);
	return 0;
}

/* kgb-worker run --dump (dump.h): the case's buffers after runs 1 and 2. */
static void dump_case(xjob_t *x, const xcase_t *xc, const kgb_validate_out_t *vo)
{
	kgb_dump_case_t d;
	char e[512];
	memset(&d, 0, sizeof d);
	d.c = &xc->c;
	d.seed = x->job->seed;
	d.ref = &xc->ref;
	d.verdict = kgb_verdict_name(vo->verdict);
	d.message = vo->message;
	d.max_abs_err = vo->max_abs_err;
	d.max_rel_err = vo->max_rel_err;
	for (int i = 0; i < xc->c.ntensors; i++) {
		d.bytes[i] = xc->t[i].bytes;
		d.input[i] = xc->c.t[i].role != KGB_ROLE_OUT ? xc->up[i] : NULL;
		d.output[i] = xc->c.t[i].role != KGB_ROLE_IN ? xc->rb1[i] : NULL;
	}
	if (kgb_case_dump(getenv(KGB_DUMP_ENV), &d, e, sizeof e) != 0)
		log_add(x, "%s", e);
}

/* The verdict of a case's validated runs, read back into rb1, rb2 (runs 1 and 2) and
 * rb3 (run 3, whose device part returned rc3 with verdict v3): runs 1 and 2 judged
 * by kgb_validate, then run 3 by run3_check. 0 when they pass, else -1 with v. */
static int judge_runs(xjob_t *x, xcase_t *xc, Kgb__CaseResult *cr, int rc3, const verdict_t *v3, verdict_t *v)
{
	kgb_validate_in_t vin;
	kgb_validate_out_t vout;
	memset(&vin, 0, sizeof vin);
	memset(&vout, 0, sizeof vout);
	vin.c = &xc->c;
	vin.ref = &xc->ref;
	vin.poison1 = KGB_POISON1;
	vin.poison2 = KGB_POISON2;
	for (int i = 0; i < xc->c.ntensors; i++) {
		vin.uploaded[i] = xc->up[i];
		vin.before1[i] = xc->pz[PZ_RUN1][i];
		vin.before2[i] = xc->pz[PZ_RUN2][i];
		vin.run1[i] = xc->rb1[i];
		vin.run2[i] = xc->rb2[i];
		vin.guard_broken[i] = xc->guard_broken[i];
	}
	kgb_validate(&vin, &vout);
	if (getenv(KGB_DUMP_ENV))
		dump_case(x, xc, &vout);
	cr->max_abs_err = vout.max_abs_err;
	cr->max_rel_err = vout.max_rel_err;
	if (vout.verdict == KGB_V_PASS && xc->scratch_broken >= 0)
		return set_v(v, KGB_V_OUT_OF_BOUNDS_WRITE, "guard band of scratch '%s' overwritten",
		             x->plan->scratch[xc->scratch_broken].name);
	if (vout.verdict != KGB_V_PASS)
		return set_v(v, vout.verdict, "%s", vout.message);
	if (rc3 != 0) {
		*v = *v3;
		return -1;
	}
	return run3_check(x, xc, v);
}

/* The inputs and reference of (c, seed) through the reference cache, the time of a
 * miss's input generation counted as inputs, the rest as reference. */
static int case_refs(xjob_t *x, const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *ref, kgb_hostbufs_t *in, char *e,
                     size_t elen)
{
	uint64_t g0 = kgb_inputs_ns();
	int rc = PF(x, PF_REF, kgb_case_reference_inputs(c, seed, ref, in, e, elen));
	double gen = (double)(kgb_inputs_ns() - g0) / 1e6;
	gen = KGB_MIN(gen, x->pf_ms[PF_REF]);
	x->pf_ms[PF_REF] -= gen;
	x->pf_ms[PF_INPUTS] += gen;
	return rc;
}

/* A case built, with both input sets and their references (CPU work). 0, or -1 with
 * an infra_error verdict. */
static int case_prepare(xjob_t *x, xcase_t *xc, uint32_t idx, Kgb__CaseResult *cr, verdict_t *v)
{
	char e[256];
	if (kgb_case_build_keyed(x->op, idx, x->job->heldout_key, &xc->c, e, sizeof e) != 0)
		return set_v(v, KGB_V_INFRA_ERROR, "case %u of %s: %s", idx, x->op->name, e);
	xc->built = true;
	cr->timed = xc->c.timed && x->job->timing;
	x->pf_cases++;
	/* each set's inputs and reference from one lookup of the reference cache: a hit
	 * generates and computes nothing */
	if (case_refs(x, &xc->c, x->job->seed, &xc->ref, &xc->inputs, e, sizeof e) != 0)
		return set_v(v, KGB_V_INFRA_ERROR, "reference: %s", e);
	xc->have_inputs = xc->have_ref = true;
	/* input set B: the campaign's (a keyed hash of its seed, docs/security.md), or for
	 * a job file without one, a seed derived from set A's */
	uint64_t seed2 = x->job->seed_b ? x->job->seed_b : x->job->seed ^ 0xB5AD4ECEDA1CE2A9ull;
	if (case_refs(x, &xc->c, seed2, &xc->ref2, &xc->inputs2, e, sizeof e) != 0)
		return set_v(v, KGB_V_INFRA_ERROR, "reference (set B): %s", e);
	xc->have_inputs2 = true;
	xc->have_ref2 = true;
	return 0;
}

/* Run one case; fills cr (verdict, errors, timing into tm). */
static void run_case(xjob_t *x, uint32_t idx, Kgb__CaseResult *cr, Kgb__Timing *tm, verdict_t *v)
{
	xcase_t xc;
	batch_t b;
	memset(&xc, 0, sizeof xc);
	memset(&b, 0, sizeof b);
	xc.scratch_broken = -1;
	v->v = KGB_V_PASS;
	v->msg[0] = 0;
	phase(x, PH_PREP);
	if (case_prepare(x, &xc, idx, cr, v) != 0)
		goto out;
	if (PF(x, PF_COMPILE, prepare_launches(x, &xc, v)) || PF(x, PF_TRANSFER, host_buffers(x, &xc, v)))
		goto out;
	case_lock(x, LOCK_SH);
	if (PF(x, PF_TRANSFER, alloc_all(x, &xc, v)))
		goto out;
	/* timed cases run the fastest of the plan's configurations (validated and timed
	 * alike); other cases the first one. Choosing times them: the device alone. */
	char note[200] = "";
	if (cr->timed && plan_tunes(x)) {
		case_lock(x, LOCK_EX);
		int arc = PF(x, PF_TIMING, autotune(x, &xc, note, sizeof note, v));
		case_lock(x, LOCK_SH);
		if (arc != 0)
			goto out;
	}

	/* run 1 and run 2, same inputs, different poison, each in a fresh module */
	uint8_t **rb[2] = { xc.rb1, xc.rb2 };
	for (int r = 0; r < 2; r++) {
		if (PF(x, PF_COMPILE, fresh_modules(x, &xc, v)) ||
		    PF(x, PF_TRANSFER, stage(x, &xc, r ? PZ_RUN2 : PZ_RUN1, true, v)) ||
		    PF(x, PF_RUN, launch(x, &xc, NULL, v, r ? "run 2" : "run 1")) ||
		    PF(x, PF_TRANSFER, read_back(x, &xc, rb[r], v)))
			goto out;
	}
	/* run 3 and a timed case's setup in the same hold: one wait for the lock per case,
	 * not one behind every timing in progress for each step. Their verdicts count only
	 * once runs 1 and 2 are judged, as if they had run after. */
	verdict_t v3 = { .v = KGB_V_PASS }, vts = { .v = KGB_V_PASS };
	int rc3 = run3_device(x, &xc, &v3);
	int rcts = rc3 == 0 && cr->timed ? PF(x, PF_TIMING, time_setup(x, &xc, &b, &vts)) : 0;
	/* comparing outputs is CPU work: the device is free meanwhile */
	case_unlock(x);
	if (PF(x, PF_VALIDATE, judge_runs(x, &xc, cr, rc3, &v3, v)) != 0)
		goto out;
	set_v(v, KGB_V_PASS, "%s", note);
	if (!cr->timed)
		goto out;
	if (rcts != 0) {
		*v = vts;
		goto out;
	}
	if (x->fresh && timed_refs(x, &xc, v) != 0)
		goto out;
	case_lock(x, LOCK_EX);
	if (PF(x, PF_TIMING, time_case(x, &xc, &b, tm, v)) == 0)
		cr->timing = tm;
out:
	/* freeing is no device work for others to wait on, unless a kernel of this case
	 * still holds the device (a fault or a hang): then the lock is kept until the
	 * release returns */
	if (!x->dead)
		case_unlock(x);
	batch_release(x, &b);
	xcase_release(x, &xc);
	case_unlock(x);
}

static void emit_case(xjob_t *x, uint32_t idx, int verdict, const char *msg, Kgb__CaseResult *tmpl)
{
	Kgb__CaseResult cr = KGB__CASE_RESULT__INIT;
	if (tmpl)
		cr = *tmpl;
	cr.case_index = idx;
	cr.verdict = (Kgb__Verdict)verdict;
	cr.message = (char *)(msg ? msg : "");
	if (emit(x->out_fd, KGB_EXEC_REC_CASE, &cr.base) != 0) {
		/* the parent is gone: nobody will read the rest */
		log_error("job=%llu cannot write to the worker: %s", (unsigned long long)x->job->job_id,
		          strerror(errno));
		_exit(KGB_EXEC_EXIT_INFRA);
	}
}

static void emit_end(xjob_t *x, int infra)
{
	Kgb__JobResult r = KGB__JOB_RESULT__INIT;
	r.job_id = x->job->job_id;
	r.epoch = x->job->epoch;
	r.log = x->log ? x->log : (char *)"";
	r.compile_ms = x->compile_ms;
	r.device_ms = x->device_ns / 1e6;
	r.occupied_ms = x->occupied_ns / 1e6;
	r.infra = (Kgb__Verdict)infra;
	Kgb__JobPhases ph = KGB__JOB_PHASES__INIT;
	if (x->ph_done) {
		ph.open_ms = x->ph_ms[PH_OPEN];
		ph.prepare_ms = x->ph_ms[PH_PREP];
		ph.lock_wait_ms = x->ph_ms[PH_WAIT];
		ph.shared_ms = x->ph_ms[PH_SHARED];
		ph.compare_ms = x->ph_ms[PH_COMPARE];
		ph.exclusive_ms = x->ph_ms[PH_EXCL];
	}
	/* the profile, whatever kind of job (docs/worker.md, "Where a case's time goes") */
	prof(x, x->pf);
	ph.p_open_ms = x->pf_ms[PF_OPEN];
	ph.p_inputs_ms = x->pf_ms[PF_INPUTS];
	ph.p_reference_ms = x->pf_ms[PF_REF];
	ph.p_compile_ms = x->pf_ms[PF_COMPILE];
	ph.p_transfer_ms = x->pf_ms[PF_TRANSFER];
	ph.p_run_ms = x->pf_ms[PF_RUN];
	ph.p_validate_ms = x->pf_ms[PF_VALIDATE];
	ph.p_timing_ms = x->pf_ms[PF_TIMING];
	ph.p_provider_ms = x->pf_ms[PF_PROVIDER];
	ph.p_record_ms = x->pf_ms[PF_RECORD];
	ph.p_lock_wait_ms = x->pf_ms[PF_WAIT];
	ph.p_other_ms = x->pf_ms[PF_OTHER];
	ph.p_cases = x->pf_cases;
	/* where the recording went (docs/python-candidates.md, "Where a recording's time goes") */
	if (x->rec_wall_ms > 0) {
		const double *r = x->rec_ms;
		ph.r_startup_ms = x->rec_startup_ms;
		ph.r_lock_ms = r[KGB_PYREC_S_LOCK];
		ph.r_context_ms = r[KGB_PYREC_S_CONTEXT];
		ph.r_import_ms = r[KGB_PYREC_S_IMPORT];
		ph.r_inputs_ms = r[KGB_PYREC_S_INPUTS];
		ph.r_call_ms = r[KGB_PYREC_S_CALL];
		ph.r_keep_ms = r[KGB_PYREC_S_KEEP];
		ph.r_compile_ms = r[KGB_PYREC_S_COMPILE];
		double known = ph.r_startup_ms;
		for (size_t k = 0; k < KGB_PYREC_S_TOTAL; k++)
			known += r[k];
		ph.r_other_ms = KGB_MAX(x->rec_wall_ms - known, 0.0);
	}
	uint64_t hits = 0, misses = 0;
	kgb_ref_cache_counts(&hits, &misses);
	ph.ref_cache_hits = hits - x->ref_hits0 + x->npf_hits;
	ph.ref_cache_misses = misses - x->ref_misses0 + x->npf_misses;
	r.phases = &ph;
	emit(x->out_fd, KGB_EXEC_REC_END, &r.base);
}

/* Every case of the job gets the same verdict (plan-level failure). */
static void all_cases(xjob_t *x, size_t from, int verdict, const char *msg)
{
	for (size_t i = from; i < x->job->n_cases; i++)
		emit_case(x, x->job->cases[i], verdict, msg, NULL);
}

/* Check the plan against the backend and the job's sources. Returns 0 or -1 with
 * every case reported. */
static int check_plan(xjob_t *x)
{
	char msg[MSG_MAX];
	x->src = kgb_xcalloc(x->plan->nkernels + 1, sizeof *x->src);
	x->srclen = kgb_xcalloc(x->plan->nkernels + 1, sizeof *x->srclen);
	if (x->plan->nkernels == 0) {
		all_cases(x, 0, KGB_V_PLAN_ERROR, "the plan has no kernels");
		return -1;
	}
	for (size_t ki = 0; ki < x->plan->nkernels; ki++) {
		const kgb_plan_kernel_t *K = &x->plan->kernels[ki];
		if (!(x->be->langs & (1u << K->lang))) {
			snprintf(msg, sizeof msg, "kernels[%zu] '%s': the %s backend does not run %s kernels", ki,
			         K->entry, x->be->name, kgb_lang_name(K->lang));
			all_cases(x, 0, KGB_V_UNSUPPORTED, msg);
			return -1;
		}
		for (size_t s = 0; s < x->job->n_sources; s++)
			if (strcmp(x->job->sources[s]->name, K->source) == 0) {
				x->src[ki] = (const char *)x->job->sources[s]->content.data;
				x->srclen[ki] = x->job->sources[s]->content.len;
			}
		if (!x->src[ki]) {
			snprintf(msg, sizeof msg, "kernels[%zu].source: the job has no source named '%s'", ki, K->source);
			all_cases(x, 0, KGB_V_PLAN_ERROR, msg);
			return -1;
		}
	}
	return 0;
}

/* true when some kernel of the plan can keep state in its module across launches: a
 * program-scope global (OpenCL C 2.0 and later) or a __device__ variable (CUDA, HIP,
 * PTX, cubin, SPIR-V). OpenCL C 1.x allows only __constant program-scope data, and
 * Triton has no mutable module-scope variables. */
static bool plan_stateful(const kgb_plan_t *P)
{
	for (size_t ki = 0; ki < P->nkernels; ki++) {
		const kgb_plan_kernel_t *K = &P->kernels[ki];
		if (K->lang == KGB_LANG_TRITON)
			continue;  /* no mutable module-scope state in the language; the worker compiles it */
		if (K->lang != KGB_LANG_OPENCL)
			return true;
		const char *std = K->options ? strstr(K->options, "-cl-std=") : NULL;
		if (std && strncmp(std + 8, "CL1.", 4) != 0)
			return true;
	}
	return false;
}

/* ------------------------------------------------------- python candidates ---- */

/* The poison generator of a job: unpredictable unless KGB_POISON_SEED fixes it. */
static void seed_poison(xjob_t *x)
{
	const char *ps = getenv("KGB_POISON_SEED");
	if (ps && *ps)
		x->rng = strtoull(ps, NULL, 0);
	else if (getrandom(&x->rng, sizeof x->rng, 0) != (ssize_t)sizeof x->rng)
		x->rng = kgb_now_ns() ^ ((uint64_t)getpid() << 32);
}

/* ---- python candidates on a backend that does not run Triton kernels ----
 *
 * The recorded plans of a job replayed through Triton's interpreter on the CPU
 * (worker/pyrec/kgb_replay.py), untimed: for each case kgb's own input sets, poison,
 * scratch bytes and guard bands (host_buffers, as for any plan), the three validated
 * runs of run_case (run 1 with poison P, run 2 with -P, run 3 on input set B with the
 * outputs as run 2 left them), and kgb's validator on what comes back (judge_runs). One
 * sandboxed replayer per group of cases, each case in its own child. */

/* Bytes of inputs and outputs one replayer is given at most (more cases: another one). */
#define REPLAY_CHUNK_BYTES ((size_t)256 << 20)

typedef struct rcase {
	size_t i;                  /* the job's case */
	xcase_t xc;
	kgb_plan_t *plan;          /* borrowed from the recording */
	verdict_t v;
	Kgb__CaseResult cr;
	bool ready;                /* prepared: in the replayer's request */
} rcase_t;

/* Append n bytes to the blob; returns their offset. */
static size_t blob_add(uint8_t **blob, size_t *len, size_t *cap, const void *p, size_t n)
{
	if (*len + n > *cap) {
		*cap = KGB_MAX(*cap * 2, *len + n + 4096);
		*blob = kgb_xrealloc(*blob, *cap);
	}
	if (n)
		memcpy(*blob + *len, p, n);
	*len += n;
	return *len - n;
}

/* The replayer's request for case r: buffers (tensors, then scratch) and the three runs. */
static json_t *replay_request(rcase_t *r, const char *plan_json, uint8_t **blob, size_t *len, size_t *cap)
{
	xcase_t *xc = &r->xc;
	const kgb_case_t *c = &xc->c;
	json_t *o = json_object(), *bufs = json_array(), *runs = json_array();
	json_error_t je;
	json_object_set_new(o, "plan", json_loads(plan_json, 0, &je));
	json_object_set_new(o, "guard_bytes", json_integer(KGB_GUARD_BYTES));
	for (int t = 0; t < c->ntensors; t++) {
		json_t *b = json_object();
		json_object_set_new(b, "name", json_string(c->t[t].name));
		json_object_set_new(b, "kind", json_string("tensor"));
		json_object_set_new(b, "bytes", json_integer((json_int_t)xc->t[t].bytes));
		json_object_set_new(b, "guard", json_integer(guard_byte((size_t)t)));
		json_array_append_new(bufs, b);
		xc->t[t].tail = KGB_GUARD_BYTES;
	}
	for (size_t si = 0; si < r->plan->nscratch; si++) {
		json_t *b = json_object();
		json_object_set_new(b, "name", json_string(r->plan->scratch[si].name));
		json_object_set_new(b, "kind", json_string("scratch"));
		json_object_set_new(b, "bytes", json_integer((json_int_t)xc->s[si].bytes));
		json_object_set_new(b, "guard", json_integer(guard_byte(KGB_MAX_TENSORS + si)));
		json_array_append_new(bufs, b);
		xc->s[si].tail = KGB_GUARD_BYTES;
	}
	/* run 1: set A, poison P; run 2: set A, -P; run 3: set B, the outputs as run 2 left them */
	static const int pzs[3] = { PZ_RUN1, PZ_RUN2, PZ_TIMED };
	for (int run = 0; run < 3; run++) {
		json_t *load = json_object();
		for (int t = 0; t < c->ntensors; t++) {
			const uint8_t *p = c->t[t].role == KGB_ROLE_OUT ? (run < 2 ? xc->pz[pzs[run]][t] : NULL)
			                                                : run < 2 ? xc->up[t] : xc->up2[t];
			if (!p)
				continue;
			size_t off = blob_add(blob, len, cap, p, xc->t[t].bytes);
			json_object_set_new(load, c->t[t].name, json_pack("[I, I]", (json_int_t)off, (json_int_t)xc->t[t].bytes));
		}
		for (size_t si = 0; si < r->plan->nscratch; si++)
			json_object_set_new(load, r->plan->scratch[si].name,
			                    json_pack("{s:i}", "fill", r->plan->scratch[si].zero ? 0 : xc->sbyte[pzs[run]]));
		json_t *rj = json_object();
		json_object_set_new(rj, "load", load);
		json_array_append_new(runs, rj);
	}
	json_object_set_new(o, "buffers", bufs);
	json_object_set_new(o, "runs", runs);
	return o;
}

/* Read what run `run` of case k left in every buffer into rb (tensors) and the guard
 * flags. -1 with v when a file is missing or of the wrong size. */
static int replay_read(const kgb_sandbox_result_t *sr, size_t k, int run, rcase_t *r, uint8_t **rb, bool *gb,
                       int *scratch_broken, verdict_t *v)
{
	xcase_t *xc = &r->xc;
	size_t nt = (size_t)xc->c.ntensors;
	for (size_t b = 0; b < nt + r->plan->nscratch; b++) {
		char name[64];
		size_t len = 0;
		devbuf_t *d = b < nt ? &xc->t[b] : &xc->s[b - nt];
		snprintf(name, sizeof name, "%zu/r%d.%zu", k, run, b);
		uint8_t *p = (uint8_t *)kgb_sandbox_read(sr, name, &len);
		if (!p || len != 2 * KGB_GUARD_BYTES + d->bytes) {
			free(p);
			return set_v(v, KGB_V_INFRA_ERROR, "the replay left no buffer %s of %zu bytes", name,
			             2 * KGB_GUARD_BYTES + d->bytes);
		}
		bool ok = guards_ok(p, d->bytes, KGB_GUARD_BYTES, guard_byte(b < nt ? b : KGB_MAX_TENSORS + b - nt));
		if (b < nt) {
			gb[b] |= !ok;
			memcpy(rb[b], p + KGB_GUARD_BYTES, d->bytes);
		} else if (!ok && *scratch_broken < 0) {
			*scratch_broken = (int)(b - nt);
		}
		free(p);
	}
	return 0;
}

/* Replay and judge the cases rc[0..n) (prepared), in one replayer. */
static void replay_group(xjob_t *x, const char *python, const char *replayer, const char *module, const char *src,
                         size_t srclen, rcase_t *rc, size_t n, const char *const *plan_json)
{
	uint8_t *blob = NULL;
	size_t len = 0, cap = 0;
	char e[512];
	json_t *req = json_object(), *srcs = json_object(), *cases = json_array();
	json_object_set_new(srcs, module, json_stringn(src, srclen));
	json_object_set_new(req, "sources", srcs);
	json_object_set_new(req, "parallel", json_integer(kgb_helper_jobs()));
	json_object_set_new(req, "timeout_s", json_real(kgb_be_env_u32("KGB_PYREC_WALL_MS", 180000) / 1000.0));
	for (size_t k = 0; k < n; k++)
		json_array_append_new(cases, replay_request(&rc[k], plan_json[k], &blob, &len, &cap));
	json_object_set_new(req, "cases", cases);
	char *header = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	kgb_sandbox_result_t sr;
	double t0 = kgb_now_ms();
	int rrc = kgb_pycand_replay_run(python, replayer, header, blob, len, n, &sr, e, sizeof e);
	log_add(x, "python candidate '%s': %zu case(s) replayed through Triton's interpreter in %.0f ms\n", module, n,
	        kgb_now_ms() - t0);
	free(header);
	free(blob);
	if (rrc != 0) {
		log_add(x, "replay failed: %s\n", e);
		for (size_t k = 0; k < n; k++)
			set_v(&rc[k].v, rrc == -2 ? KGB_V_UNSUPPORTED : KGB_V_INFRA_ERROR, "%s", e);
		return;
	}
	size_t sl = 0;
	char *stext = kgb_sandbox_read(&sr, "batch.json", &sl);
	json_error_t je;
	json_t *st = stext ? json_loadb(stext, sl, 0, &je) : NULL;
	free(stext);
	for (size_t k = 0; k < n; k++) {
		rcase_t *r = &rc[k];
		xcase_t *xc = &r->xc;
		json_t *s = json_array_get(st, k);
		const char *err = json_string_value(json_object_get(s, "error"));
		int sig = (int)json_integer_value(json_object_get(s, "signal"));
		x->plan = r->plan;
		if (!s) {
			set_v(&r->v, KGB_V_INFRA_ERROR, "the replayer wrote no status for this case");
			continue;
		}
		if (json_is_true(json_object_get(s, "timed_out"))) {
			set_v(&r->v, KGB_V_TIMEOUT, "the replay through Triton's interpreter ran past %u ms",
			      kgb_be_env_u32("KGB_PYREC_WALL_MS", 180000));
			continue;
		}
		if (sig) {
			set_v(&r->v, KGB_V_CRASH, "the replay through Triton's interpreter died: signal %d (%s)", sig,
			      strsignal(sig));
			continue;
		}
		if (json_integer_value(json_object_get(s, "exit")) != 0) {
			set_v(&r->v, KGB_V_LAUNCH_ERROR, "the replay through Triton's interpreter failed: %s",
			      err ? err : "(no message)");
			continue;
		}
		xc->scratch3 = -1;
		if (replay_read(&sr, k, 0, r, xc->rb1, xc->guard_broken, &xc->scratch_broken, &r->v) ||
		    replay_read(&sr, k, 1, r, xc->rb2, xc->guard_broken, &xc->scratch_broken, &r->v) ||
		    replay_read(&sr, k, 2, r, xc->rb3, xc->guard3, &xc->scratch3, &r->v))
			continue;
		if (PF(x, PF_VALIDATE, judge_runs(x, xc, &r->cr, 0, NULL, &r->v)) == 0)
			set_v(&r->v, KGB_V_PASS, "validated with Triton's interpreter on the CPU (runs 1 to 3), untimed");
	}
	json_decref(st);
	kgb_sandbox_release(&sr);
}

/* Every case of outs[0..n) whose recording passed: its verdict in res[i] and its
 * errors in crs[i] (the others are left alone). */
static void python_replay_cpu(xjob_t *x, const char *python, const char *recorder, const char *module,
                              const char *src, size_t srclen, kgb_pycand_out_t *outs, size_t n, verdict_t *res,
                              Kgb__CaseResult *crs)
{
	char *replayer = kgb_pycand_find_replayer(recorder);
	rcase_t *rc = kgb_xcalloc(n ? n : 1, sizeof *rc);
	const char **pj = kgb_xcalloc(n ? n : 1, sizeof *pj);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (outs[i].verdict == KGB_V_PASS) {
			rc[m].i = i;
			rc[m].plan = outs[i].plan;
			rc[m].xc.scratch_broken = -1;
			rc[m].v.v = KGB_V_PASS;
			kgb__case_result__init(&rc[m].cr);
			pj[m++] = outs[i].plan_json;
		}
	for (size_t from = 0; from < m;) {
		/* a group: cases prepared until their bytes pass REPLAY_CHUNK_BYTES */
		size_t to = from, bytes = 0, ready = 0;
		rcase_t *grp = kgb_xcalloc(m - from, sizeof *grp);
		const char **gpj = kgb_xcalloc(m - from, sizeof *gpj);
		for (; to < m && (bytes < REPLAY_CHUNK_BYTES || to == from); to++) {
			rcase_t *r = &rc[to];
			x->plan = r->plan;
			if (!replayer) {
				set_v(&r->v, KGB_V_UNSUPPORTED, "the replayer kgb_replay.py is not next to the recorder %s", recorder);
				continue;
			}
			if (case_prepare(x, &r->xc, x->job->cases[r->i], &r->cr, &r->v) != 0 ||
			    PF(x, PF_TRANSFER, host_buffers(x, &r->xc, &r->v)) != 0)
				continue;
			for (int t = 0; t < r->xc.c.ntensors; t++)
				bytes += 3 * r->xc.t[t].bytes;
			r->ready = true;
			grp[ready] = *r;
			gpj[ready++] = pj[to];
		}
		if (ready)
			replay_group(x, python, replayer, module, src, srclen, grp, ready, gpj);
		for (size_t k = 0, g = 0; from + k < to; k++) {
			rcase_t *r = &rc[from + k];
			if (r->ready)
				*r = grp[g++];
			x->plan = r->plan;
			r->cr.timed = false;   /* the interpreter is no timing */
			res[r->i] = r->v;
			crs[r->i] = r->cr;
			xcase_release(x, &r->xc);
		}
		free(grp);
		free(gpj);
		from = to;
	}
	x->plan = NULL;
	free(pj);
	free(rc);
	free(replayer);
}

/* A deep copy of a passing or refused recording for case c (its plan parsed again). */
static void pycand_out_copy(const kgb_pycand_out_t *from, const kgb_case_t *c, kgb_pycand_out_t *to)
{
	char e[256];
	memset(to, 0, sizeof *to);
	to->verdict = from->verdict;
	memcpy(to->message, from->message, sizeof to->message);
	to->recording = from->recording ? kgb_xstrdup(from->recording) : NULL;
	to->plan_json = from->plan_json ? kgb_xstrdup(from->plan_json) : NULL;
	if (to->plan_json && (kgb_plan_parse(to->plan_json, strlen(to->plan_json), "recorded plan", &to->plan, e,
	                                     sizeof e) != 0 ||
	                      kgb_plan_check(to->plan, c->op, "recorded plan", e, sizeof e) != 0)) {
		kgb_plan_destroy(&to->plan);
		to->verdict = KGB_V_PLAN_ERROR;
		snprintf(to->message, sizeof to->message, "%s", e);
	}
}

/* kgb_pycand_record_batch through the recording cache (reccache.h): a request whose
 * recording is cached is not recorded again, and of identical requests in the job
 * only the first is recorded. The recorder is started only for what is left. */
static int record_cached(xjob_t *x, const char *module, const char *python, const char *recorder, char *const *reqs,
                         size_t n, const kgb_case_t *const *cp, int interpret, int device_index, uint64_t as_bytes,
                         const char *lockpath, kgb_pycand_out_t *recs, char *e, size_t elen)
{
	char stamp[65];
	kgb_reccache_stamp(python, recorder, interpret == 0, stamp);
	char(*keys)[65] = kgb_xcalloc(n ? n : 1, sizeof *keys);
	size_t *miss = kgb_xcalloc(n ? n : 1, sizeof *miss);   /* request -> its recording, or SIZE_MAX: cached */
	size_t *first = kgb_xcalloc(n ? n : 1, sizeof *first); /* recording -> its first request */
	char **mreq = kgb_xcalloc(n ? n : 1, sizeof *mreq);
	const kgb_case_t **mcp = kgb_xcalloc(n ? n : 1, sizeof *mcp);
	kgb_pycand_out_t *mrec = kgb_xcalloc(n ? n : 1, sizeof *mrec);
	size_t nm = 0, hits = 0, same = 0;
	for (size_t r = 0; r < n; r++) {
		kgb_reccache_key(stamp, reqs[r], keys[r]);
		miss[r] = SIZE_MAX;
		if (kgb_reccache_get(keys[r], cp[r], &recs[r]) == 0) {
			hits++;
			continue;
		}
		for (size_t q = 0; q < r && miss[r] == SIZE_MAX; q++)
			if (miss[q] != SIZE_MAX && strcmp(keys[q], keys[r]) == 0)
				miss[r] = miss[q];
		if (miss[r] != SIZE_MAX) {
			same++;
			continue;
		}
		first[nm] = r;
		mreq[nm] = reqs[r];
		mcp[nm] = cp[r];
		miss[r] = nm++;
	}
	int rc = 0;
	double t0 = kgb_now_ms();
	kgb_pycand_batch_info_t info = { 0 };
	if (nm)
		rc = kgb_pycand_record_batch(python, recorder, mreq, nm, mcp, interpret, device_index, as_bytes, lockpath,
		                             mrec, &info, e, elen);
	if (nm && rc == 0) {
		x->rec_wall_ms += kgb_now_ms() - t0;
		x->rec_startup_ms += info.startup_s * 1e3;
		for (size_t m = 0; m < nm; m++)
			for (size_t k = 0; k < KGB_PYREC_NSEC; k++)
				x->rec_ms[k] += mrec[m].sec[k] * 1e3;
	}
	log_add(x, "python candidate '%s': %zu case(s): %zu recording(s) from the cache, %zu the same as another "
	        "case's, %zu recorded in %.0f ms (%s%s)\n", module, n, hits, same, nm, kgb_now_ms() - t0,
	        !nm ? "no recorder started" : interpret == 0 ? "on the device" : "on the CPU, Triton's interpreter",
	        info.server ? ", by the worker's recorder server" : "");
	if (rc == 0) {
		for (size_t m = 0; m < nm; m++)
			kgb_reccache_put(keys[first[m]], &mrec[m]);
		for (size_t r = 0; r < n; r++) {
			if (miss[r] == SIZE_MAX)
				continue;
			if (first[miss[r]] == r)
				recs[r] = mrec[miss[r]];
			else
				pycand_out_copy(&mrec[miss[r]], cp[r], &recs[r]);
		}
		if (nm)
			kgb_reccache_prune();
	} else {
		for (size_t m = 0; m < nm; m++)
			kgb_pycand_out_release(&mrec[m]);
	}
	free(keys);
	free(miss);
	free(first);
	free(mreq);
	free(mcp);
	free(mrec);
	return rc;
}

/* A python candidate (docs/python-candidates.md): every case of the job is recorded
 * first, by one sandboxed recorder (each case in its own child, the wrapper called
 * once on tensors laid out as the case's), before the device is opened and outside
 * every timed region. A refusal is the case's verdict. A recording that passed is an
 * ordinary launch plan for that one case, replayed through the plan path: compiled
 * (modules are shared between cases that record the same kernels, and a plan equal to
 * the previous case's is reused as is), kgb's buffers, poison, validation and timer.
 * A backend that does not run Triton kernels still records (so every refusal gets its
 * verdict) and answers unsupported for the replay. Returns the executor's exit status. */
static int python_job(xjob_t *x, uint32_t index)
{
	const Kgb__JobAssign *job = x->job;
	const kgb_backend_t *be = x->be;
	char e[512];
	char *module = NULL, *python = NULL, *recorder = NULL, *steps_src = NULL;
	const char *src = NULL;
	size_t srclen = 0, steps_len = 0, n = job->n_cases;
	int status = KGB_EXEC_EXIT_OK;
	const char *pt = job->plan_json ? job->plan_json : "";
	if (kgb_plan_kind(pt, strlen(pt), "plan", &module, e, sizeof e) < 0 || !module) {
		all_cases(x, 0, KGB_V_PLAN_ERROR, e);
		emit_end(x, 0);
		return status;
	}
	for (size_t s = 0; s < job->n_sources; s++)
		if (strcmp(job->sources[s]->name, module) == 0) {
			src = (const char *)job->sources[s]->content.data;
			srclen = job->sources[s]->content.len;
		}
	kgb_case_t *cases = kgb_xcalloc(n ? n : 1, sizeof *cases);
	const kgb_case_t **cp = kgb_xcalloc(n ? n : 1, sizeof *cp);
	char **reqs = kgb_xcalloc(n ? n : 1, sizeof *reqs);
	kgb_pycand_out_t *outs = kgb_xcalloc(n ? n : 1, sizeof *outs);
	bool *built = kgb_xcalloc(n ? n : 1, sizeof *built);
	kgb_plan_t **plans = kgb_xcalloc(n ? n : 1, sizeof *plans);
	size_t nrec = 0;
	if (!src) {
		snprintf(e, sizeof e, "the job has no source named '%s' (the python candidate's module)", module);
		all_cases(x, 0, KGB_V_PLAN_ERROR, e);
		emit_end(x, 0);
		goto out;
	}
	python = kgb_pycand_find_python();
	recorder = kgb_pycand_find_recorder();
	if (!python || !recorder) {
		snprintf(e, sizeof e, "python candidates are not run by this worker: %s",
		         !python ? "no Python to record with (kgb-worker --python PATH)"
		                 : "the recorder kgb_record.py is not installed next to kgb-worker (pyrec/ or "
		                   "../libexec/kgb/pyrec/; make install or scripts/bundle.sh put it there)");
		all_cases(x, 0, KGB_V_UNSUPPORTED, e);
		emit_end(x, 0);
		goto out;
	}
	/* Triton binaries run where the backend runs Triton kernels: record there on the
	 * device; elsewhere record on the CPU through Triton's interpreter */
	bool replay = (be->langs & (1u << KGB_LANG_TRITON)) != 0;
	for (size_t i = 0; i < n; i++) {
		if (kgb_case_build_keyed(x->op, job->cases[i], job->heldout_key, &cases[i], e, sizeof e) != 0) {
			outs[i].verdict = KGB_V_INFRA_ERROR;
			snprintf(outs[i].message, sizeof outs[i].message, "case %u of %s: %.300s", job->cases[i], x->op->name, e);
			continue;
		}
		built[i] = true;
		char fn[128];
		cp[nrec] = &cases[i];
		reqs[nrec++] = kgb_pycand_request(&cases[i], src, srclen, module, kgb_pycand_function(&cases[i], fn, sizeof fn),
		                                  false, 0);
	}
	/* the recordings, in the order of the built cases */
	kgb_pycand_out_t *recs = kgb_xcalloc(nrec ? nrec : 1, sizeof *recs);
	const char *as = getenv("KGB_PYREC_AS_MB");
	uint64_t as_bytes = as && *as ? strtoull(as, NULL, 10) << 20 : replay ? 0 : (uint64_t)16384 << 20;
	/* The recording is set-up, not the job's device work: the executor holds no lock
	 * for it on a GPU, so the recordings of several slots run side by side and next to
	 * other slots' validation and timing. Where the recording launches the wrapper's
	 * kernels on the device, each case's recording child takes the lock shared, as a
	 * validated run does (behind any timing that waits at the gate, never inside one);
	 * where it runs Triton's interpreter on a GPU worker's CPU it takes none. A CPU
	 * device (OpenCL) holds the lock for the whole job, as for plans: the interpreter
	 * computes on the cores that other slots time on. */
	device_lock_open(x, be);
	if (!x->lock_per_case)
		device_lock(x);
	const char *lockpath = replay && x->lock_per_case && x->lock.fd >= 0 ? getenv("KGB_DEVICE_LOCK") : NULL;
	int rrc = PF(x, PF_RECORD, record_cached(x, module, python, recorder, reqs, nrec, cp, replay ? 0 : 1,
	                                         replay ? (int)index : -1, as_bytes, lockpath, recs, e, sizeof e));
	if (rrc != 0) {
		log_add(x, "recording failed: %s\n", e);
		all_cases(x, 0, rrc == -2 ? KGB_V_UNSUPPORTED : KGB_V_INFRA_ERROR, e);
		emit_end(x, rrc == -2 ? 0 : KGB_V_INFRA_ERROR);
		if (rrc != -2)
			status = KGB_EXEC_EXIT_INFRA;
		for (size_t r = 0; r < nrec; r++)
			kgb_pycand_out_release(&recs[r]);
		free(recs);
		goto out;
	}
	for (size_t i = 0, r = 0; i < n; i++)
		if (built[i])
			outs[i] = recs[r++];
	free(recs);

	/* without Triton on the device: the passing recordings through the interpreter */
	verdict_t *res = kgb_xcalloc(n ? n : 1, sizeof *res);
	Kgb__CaseResult *crs = kgb_xcalloc(n ? n : 1, sizeof *crs);
	if (!replay) {
		int o = prof(x, PF_RECORD);
		python_replay_cpu(x, python, recorder, module, src, srclen, outs, n, res, crs);
		prof(x, o);
	}

	bool opened = x->ctx != NULL;   /* a pre-warmed executor's context */
	const char *prev_json = NULL;
	for (size_t i = 0; i < n; i++) {
		kgb_pycand_out_t *o = &outs[i];
		if (o->verdict != KGB_V_PASS) {
			int v = o->verdict;
			log_add(x, "case %u: recording: %s: %s\n", job->cases[i], kgb_verdict_name(v), o->message);
			emit_case(x, job->cases[i], v, o->message, NULL);
			continue;
		}
		if (o->steps)
			log_add(x, "case %u: replayed host steps: %s\n", job->cases[i], o->steps);
		if (!replay) {
			emit_case(x, job->cases[i], res[i].v, res[i].msg, &crs[i]);
			continue;
		}
		/* kgb's own kernels for the wrapper's copies and fills, next to the recorder */
		bool steps = false;
		for (size_t ki = 0; ki < o->plan->nkernels; ki++)
			steps |= strcmp(o->plan->kernels[ki].source, KGB_PYCAND_STEPS) == 0;
		if (steps && !steps_src && !(steps_src = kgb_pycand_steps_source(recorder, &steps_len, e, sizeof e))) {
			emit_case(x, job->cases[i], KGB_V_INFRA_ERROR, e, NULL);
			continue;
		}
		if (x->dead) {
			snprintf(e, sizeof e, "not run: an earlier case left the device context unusable");
			emit_case(x, job->cases[i], KGB_V_NOT_RUN, e, NULL);
			continue;
		}
		/* the plan of this case: the previous one when the recording is the same */
		if (!prev_json || strcmp(prev_json, o->plan_json) != 0) {
			plans[i] = o->plan;
			o->plan = NULL;
			x->plan = plans[i];
			free(x->src);
			free(x->srclen);
			x->src = NULL;
			x->srclen = NULL;
			prev_json = o->plan_json;
			/* every kernel of a recording is the module's or one of kgb's steps
			 * (kgb_pycand_record checked the plan against the operator, and the
			 * backend runs Triton) */
			x->src = kgb_xcalloc(x->plan->nkernels + 1, sizeof *x->src);
			x->srclen = kgb_xcalloc(x->plan->nkernels + 1, sizeof *x->srclen);
			for (size_t ki = 0; ki < x->plan->nkernels; ki++) {
				bool own = strcmp(x->plan->kernels[ki].source, KGB_PYCAND_STEPS) == 0;
				x->src[ki] = own ? steps_src : src;
				x->srclen[ki] = own ? steps_len : srclen;
			}
			x->stateful = plan_stateful(x->plan);
		}
		if (!opened) {
			int rc = PF(x, PF_OPEN, be->open(index, &x->ctx, e, sizeof e));
			if (rc != KGB_BE_OK) {
				log_add(x, "opening %s device %u: %s\n", be->name, index, e);
				for (size_t j = i; j < n; j++)
					emit_case(x, job->cases[j], KGB_V_INFRA_ERROR, e, NULL);
				emit_end(x, KGB_V_INFRA_ERROR);
				status = KGB_EXEC_EXIT_INFRA;
				goto out;
			}
			opened = true;
		}
		Kgb__CaseResult cr = KGB__CASE_RESULT__INIT;
		Kgb__Timing tm = KGB__TIMING__INIT;
		verdict_t v;
		tm.method = (char *)be->name;
		run_case(x, job->cases[i], &cr, &tm, &v);
		if (v.v == KGB_V_PASS && o->steps) {
			/* the copies and fills kgb replayed for the wrapper were timed with it */
			size_t used = strlen(v.msg);
			snprintf(v.msg + used, sizeof v.msg - used, "%sreplayed host steps: %s", used ? "; " : "", o->steps);
		}
		emit_case(x, job->cases[i], v.v, v.msg, &cr);
		if (x->dead) {
			log_add(x, "case %u: %s: %s; the remaining cases were not run\n", job->cases[i],
			        kgb_verdict_name(v.v), v.msg);
			status = KGB_EXEC_EXIT_DEAD;
		}
	}
	free(res);
	free(crs);
	if (x->lock.wait_ms > 0)
		log_add(x, "waited %.0f ms in all for the device (another job held it)\n", x->lock.wait_ms);
	emit_end(x, 0);
out:
	x->plan = NULL;   /* owned by plans[] */
	for (size_t i = 0; i < n; i++) {
		kgb_plan_destroy(&plans[i]);
		kgb_pycand_out_release(&outs[i]);
		free(reqs[i]);
		if (built[i])
			kgb_case_release(&cases[i]);
	}
	free(plans);
	free(built);
	free(outs);
	free(reqs);
	free(cp);
	free(cases);
	free(python);
	free(recorder);
	free(steps_src);
	free(module);
	return status;
}

/* ---- native candidates of ATen and vLLM operators (native_provider.h) ---- */

static void native_wait(void *arg, uint32_t case_index)
{
	(void)case_index;
	launch_window(arg, KGB_EXEC_LAUNCH_WAIT);
}

static void native_start(void *arg, uint32_t case_index)
{
	(void)case_index;
	launch_window(arg, 0);   /* ends a wait for the device lock, if there was one */
	launch_window(arg, 1);
}

static void native_case(void *arg, const kgb_native_case_t *r)
{
	xjob_t *x = arg;
	Kgb__CaseResult cr = KGB__CASE_RESULT__INIT;
	Kgb__Timing tm = r->timing;
	launch_window(x, 0);
	/* the provider's own profile of the case (the main thread waits meanwhile) */
	x->pf_cases++;
	x->npf_ms[PF_INPUTS] += r->prof.inputs;
	x->npf_ms[PF_REF] += r->prof.reference;
	x->npf_ms[PF_TRANSFER] += r->prof.transfer;
	x->npf_ms[PF_RUN] += r->prof.run;
	x->npf_ms[PF_VALIDATE] += r->prof.validate;
	x->npf_ms[PF_TIMING] += r->prof.timing;
	x->npf_ms[PF_WAIT] += r->prof.wait;
	x->npf_hits += r->prof.hits;
	x->npf_misses += r->prof.misses;
	cr.max_abs_err = r->max_abs_err;
	cr.max_rel_err = r->max_rel_err;
	cr.timed = r->timed;
	if (r->has_timing) {
		cr.timing = &tm;
		x->device_ns += tm.mean_ns * tm.samples;
		/* batched samples: the provider's span of its batches (restores, flushes) */
		x->occupied_ns += KGB_MAX(r->occupied_ns, tm.mean_ns * tm.samples);
	}
	emit_case(x, r->case_index, r->verdict, r->message, &cr);
}

static void native_log(void *arg, const char *line)
{
	log_add(arg, "%s", line);
}

/* Run the job's cases with the operator's own library; every case is reported. */
static int run_native(xjob_t *x, uint32_t index)
{
	char dev[32], e[512];
	kgb_native_device(x->be->name, index, dev, sizeof dev);
	/* the device lock as for plans: on a GPU the provider takes it per case (around the
	 * validated runs and the timing, after the inputs and the reference); on a CPU the
	 * job holds it throughout, since the provider's own CPU work shares the cores */
	device_lock_open(x, x->be);
	const char *lock_path = NULL;
	if (x->lock.fd >= 0 && x->lock_per_case)
		lock_path = getenv("KGB_DEVICE_LOCK");
	else
		device_lock(x);
	kgb_native_job_t nj = {
		.op = x->op->name,
		.cases = x->job->cases,
		.ncases = x->job->n_cases,
		.seed = x->job->seed,
		.device = dev,
		.timing = x->job->timing,
		.budget_ms = x->job->timing_budget_ms,
		.case_limit_ms = x->job->time_limit_ms,
		.device_lock = lock_path,
		.on_wait = native_wait,
		.on_start = native_start,
		.on_case = native_case,
		.on_log = native_log,
		.arg = x,
	};
	int o = prof(x, PF_PROVIDER);
	if (kgb_native_run(&nj, e, sizeof e) != 0)
		log_error("job=%llu %s", (unsigned long long)x->job->job_id, e);
	prof(x, o);
	/* what the provider accounted for is moved out of its overhead */
	for (int c = 0; c < PF_N; c++) {
		double m = KGB_MIN(x->npf_ms[c], x->pf_ms[PF_PROVIDER]);
		x->pf_ms[PF_PROVIDER] -= m;
		x->pf_ms[c] += m;
	}
	emit_end(x, 0);
	return KGB_EXEC_EXIT_OK;
}

/* A job that ended cleanly has said everything: its output closes before the device is
 * released (modules, BLAS handle, context: up to a second or more on a GPU), so the
 * worker has the result and can give the slot its next job meanwhile
 * (kgb_exec_finished). The descriptor stays valid, on /dev/null, for the caller to close. */
static void output_done(int out_fd)
{
	struct stat st;
	/* only a pipe tells its reader anything by closing; a file (an in-process caller,
	 * a test) is read after the return */
	if (fstat(out_fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (nul < 0)
		return;   /* the output then ends when the process does */
	dup2(nul, out_fd);
	close(nul);
}

static bool env_off(const char *name)
{
	const char *e = getenv(name);
	return e && strcmp(e, "off") == 0;
}

/* Timed samples on inputs of their own and local memory scrubbed before each
 * (time_case), for every job that runs a candidate's code. KGB_FRESH_INPUTS=off and
 * KGB_LOCAL_SCRUB=off turn them off, to measure what they cost (docs/timing.md); the
 * job log says so. */
static void timed_inputs_policy(xjob_t *x)
{
	x->fresh = !x->trusted && !env_off("KGB_FRESH_INPUTS");
	x->scrub = x->fresh && x->be->scrub_local && !env_off("KGB_LOCAL_SCRUB");
	if (x->trusted)
		return;
	log_add(x, "timed samples: %s; local memory %s\n",
	        x->fresh ? "inputs of their own per sample, 2 validated" : "input set A (KGB_FRESH_INPUTS=off)",
	        x->scrub ? "scrubbed before each" : !x->be->scrub_local ? "not scrubbed (the backend has no scrub step)"
	        : !x->fresh ? "not scrubbed (KGB_FRESH_INPUTS=off)" : "not scrubbed (KGB_LOCAL_SCRUB=off)");
}

/* See executor.h. */
bool kgb_exec_job_trusted(const Kgb__JobAssign *job)
{
	const kgb_op_t *op = job->op ? kgb_catalog_find(job->op) : NULL;
	const char *pt = job->plan_json ? job->plan_json : "";
	char e[256];
	return op && kgb_plan_kind(pt, strlen(pt), "plan", NULL, e, sizeof e) == KGB_CAND_NATIVE && kgb_nblas_has_op(op);
}

/* See executor.h. */
int kgb_executor_run(const kgb_backend_t *be, uint32_t index, const Kgb__JobAssign *job, int out_fd)
{
	return kgb_executor_run_warm(be, index, job, out_fd, NULL);
}

/* See executor.h. */
int kgb_executor_run_warm(const kgb_backend_t *be, uint32_t index, const Kgb__JobAssign *job, int out_fd,
                          kgb_exec_warm_t *warm)
{
	xjob_t x;
	char e[512];
	int status = KGB_EXEC_EXIT_OK;
	kgb_nblas_t *warm_nb = NULL;
	memset(&x, 0, sizeof x);
	kgb_devlock_init(&x.lock);
	x.be = be;
	x.job = job;
	x.out_fd = out_fd;
	x.ph_t0 = kgb_now_ns();
	x.pf_t0 = x.ph_t0;
	kgb_ref_cache_counts(&x.ref_hits0, &x.ref_misses0);
	unsigned jobs_before = warm ? warm->jobs : 0;
	if (warm && warm->ctx) {
		x.ctx = warm->ctx;
		warm_nb = warm->nb;
		if (jobs_before)
			log_add(&x, "device context%s kept from the executor's previous job (executor pid %d, its job %u)\n",
			        warm_nb ? " and BLAS handle" : "", (int)getpid(), jobs_before + 1);
		else
			log_add(&x, "device context%s opened before the job arrived (%.0f ms; executor pid %d)\n",
			        warm_nb ? " and BLAS handle" : "", warm->open_ms, (int)getpid());
	}
	if (warm)
		memset(warm, 0, sizeof *warm);

	x.op = kgb_catalog_find(job->op);
	if (!x.op) {
		log_add(&x, "operator '%s' is not in this worker's catalog (version %s)\n", job->op,
		        kgb_catalog_version());
		emit_end(&x, KGB_V_INFRA_ERROR);
		status = KGB_EXEC_EXIT_INFRA;
		goto out;
	}
	/* sources are bytes on the wire; the plan parser and compilers want text */
	char *plan_text = job->plan_json ? job->plan_json : (char *)"";
	/* the candidate's kind: a launch plan, a python module, or the native library */
	int kind = kgb_plan_kind(plan_text, strlen(plan_text), "plan", NULL, e, sizeof e);
	if (kind < 0) {
		all_cases(&x, 0, KGB_V_PLAN_ERROR, e);
		emit_end(&x, 0);
		goto out;
	}
	bool nblas = kind == KGB_CAND_NATIVE && kgb_nblas_has_op(x.op);
	x.trusted = nblas;
	if (nblas && warm_nb) {
		x.nb = warm_nb;
		warm_nb = NULL;
	}
	kgb_nblas_close(&warm_nb, false);   /* a pre-warmed handle this job does not use */
	timed_inputs_policy(&x);
	if (kind == KGB_CAND_PYTHON) {
		seed_poison(&x);
		status = python_job(&x, index);
		goto out;
	}
	if (kind == KGB_CAND_NATIVE && !nblas && strcmp(x.op->source, "cublas") != 0) {
		/* ATen and vLLM: PyTorch or vLLM in a provider process (native_provider.h),
		 * which opens its own context: a pre-warmed one is given back first */
		if (x.ctx) {
			be->close(x.ctx);
			x.ctx = NULL;
		}
		status = run_native(&x, index);
		goto out;
	}
	if (nblas) {
		/* native cuBLAS: a plan of one launch that calls the routine (native_blas.h) */
		x.plan = kgb_xcalloc(1, sizeof *x.plan);
		x.plan->nkernels = 1;
		x.plan->kernels = kgb_xcalloc(1, sizeof *x.plan->kernels);
		x.plan->kernels[0].entry = kgb_xstrdup(x.op->name);
		x.plan->kernels[0].source = kgb_xstrdup("native");
		if (!be->blas) {
			snprintf(e, sizeof e, "native candidates of cuBLAS operators: the %s backend has no BLAS library "
			         "(cuBLAS runs on the cuda backend, hipBLAS on hip)", be->name);
			all_cases(&x, 0, KGB_V_UNSUPPORTED, e);
			emit_end(&x, 0);
			goto out;
		}
	} else if (kind != KGB_CAND_PLAN) {
		snprintf(e, sizeof e, "%s candidates are not run by this worker's %s backend",
		         kgb_cand_kind_name((kgb_cand_kind_t)kind), be->name);
		all_cases(&x, 0, KGB_V_UNSUPPORTED, e);
		emit_end(&x, 0);
		goto out;
	}
	if (!x.plan && kgb_plan_parse(plan_text, strlen(plan_text), "plan", &x.plan, e, sizeof e) != 0) {
		all_cases(&x, 0, KGB_V_PLAN_ERROR, e);
		emit_end(&x, 0);
		goto out;
	}
	if (!nblas && check_plan(&x) != 0) {
		emit_end(&x, 0);
		goto out;
	}
	x.stateful = !nblas && plan_stateful(x.plan);
	/* the poison of this job: unpredictable unless KGB_POISON_SEED (debugging) fixes it */
	const char *ps = getenv("KGB_POISON_SEED");
	if (ps && *ps)
		x.rng = strtoull(ps, NULL, 0);
	else if (getrandom(&x.rng, sizeof x.rng, 0) != (ssize_t)sizeof x.rng)
		x.rng = kgb_now_ns() ^ ((uint64_t)getpid() << 32);
	log_add(&x, "poison seed 0x%016llx; %s\n", (unsigned long long)x.rng,
	        x.stateful ? "a fresh module for every validated run (kernels may keep state)"
	                   : "modules reused (OpenCL C 1.x: no program-scope state)");
	device_lock_open(&x, be);
	/* opening here (no pre-warmed executor) is device work around the job: a chore */
	bool chore = x.lock_per_case && (!x.ctx || (nblas && !x.nb));
	if (chore) {
		open_prepare(be, !x.ctx, nblas && !x.nb);
		kgb_devlock_try_for(&x.lock, LOCK_SH, CHORE_WAIT_MS);
	}
	int rc = x.ctx ? KGB_BE_OK : PF(&x, PF_OPEN, be->open(index, &x.ctx, e, sizeof e));
	if (rc != KGB_BE_OK) {
		log_add(&x, "opening %s device %u: %s\n", be->name, index, e);
		log_error("job=%llu epoch=%llu device=%s:%u cannot open the device: %s",
		          (unsigned long long)job->job_id, (unsigned long long)job->epoch, be->name, index, e);
		emit_end(&x, KGB_V_INFRA_ERROR);
		status = KGB_EXEC_EXIT_INFRA;
		goto out;
	}
	snprintf(x.method, sizeof x.method, "%s", strcmp(be->name, "opencl") != 0 ? be->name : "opencl-profiling-events");
	if (nblas) {
		rc = x.nb ? KGB_BE_OK : PF(&x, PF_OPEN, kgb_nblas_open(be, x.ctx, &x.nb, e, sizeof e));
		if (rc != KGB_BE_OK) {
			log_add(&x, "native %s: %s\n", x.op->name, e);
			all_cases(&x, 0, rc == KGB_BE_UNSUPPORTED ? KGB_V_UNSUPPORTED : KGB_V_LAUNCH_ERROR, e);
			emit_end(&x, 0);
			goto out;
		}
		/* native timings are kept per library version: the method names it */
		snprintf(x.method, sizeof x.method, "%s+%s", be->name, kgb_nblas_version(x.nb));
		log_add(&x, "native %s through %s\n", x.op->name, kgb_nblas_version(x.nb));
	}
	if (chore)
		kgb_devlock_release(&x.lock);
	if (!x.lock_per_case)
		device_lock(&x);
	for (size_t i = 0; i < job->n_cases; i++) {
		Kgb__CaseResult cr = KGB__CASE_RESULT__INIT;
		Kgb__Timing tm = KGB__TIMING__INIT;
		verdict_t v;
		tm.method = x.method;
		run_case(&x, job->cases[i], &cr, &tm, &v);
		emit_case(&x, job->cases[i], v.v, v.msg, &cr);
		if (x.dead) {
			char m[MSG_MAX];
			snprintf(m, sizeof m, "not run: case %u left the device context unusable (%s)", job->cases[i],
			         kgb_verdict_name(v.v));
			all_cases(&x, i + 1, KGB_V_NOT_RUN, m);
			log_add(&x, "case %u: %s: %s; the remaining cases were not run\n", job->cases[i],
			        kgb_verdict_name(v.v), v.msg);
			status = KGB_EXEC_EXIT_DEAD;
			break;
		}
	}
	if (x.lock.wait_ms > 0)
		log_add(&x, "waited %.0f ms in all for the device (another job held it)\n", x.lock.wait_ms);
	log_phases(&x);
	emit_end(&x, 0);
out:;
	/* a trusted job that ended cleanly leaves the context and handle to the next */
	bool keep = warm && x.trusted && status == KGB_EXEC_EXIT_OK && !x.dead && x.ctx && x.nb &&
	            jobs_before + 1 < KGB_EXEC_REUSE_MAX;
	if (keep) {
		warm->ctx = x.ctx;
		warm->nb = x.nb;
		warm->jobs = jobs_before + 1;
		x.ctx = NULL;
		x.nb = NULL;
	}
	if (!keep && status == KGB_EXEC_EXIT_OK && !x.dead)
		output_done(out_fd);
	if (!keep && x.lock_per_case && !x.dead)
		kgb_devlock_try_for(&x.lock, LOCK_SH, CHORE_WAIT_MS);   /* for the release below */
	kgb_nblas_close(&warm_nb, false);
	kgb_nblas_close(&x.nb, x.dead);
	if (x.ctx) {
		for (size_t i = 0; i < x.nmods; i++)
			if (x.mods[i].mod && !x.dead)
				be->module_free(x.ctx, x.mods[i].mod);
		if (!x.dead)  /* a dead context may hang on release: the process exit cleans up */
			be->close(x.ctx);
	}
	kgb_devlock_close(&x.lock);
	for (size_t i = 0; i < x.nmods; i++)
		free(x.mods[i].msg);
	free(x.mods);
	free(x.src);
	free(x.srclen);
	free(x.log);
	kgb_plan_destroy(&x.plan);
	return status;
}

/* See executor.h. */
int kgb_executor_health(const kgb_backend_t *be, uint32_t index, char *err, size_t errlen)
{
	void *ctx = NULL;
	char e[512];
	if (be->open(index, &ctx, e, sizeof e) != KGB_BE_OK)
		return kgb_err(err, errlen, "opening %s device %u: %s", be->name, index, e);
	int rc = be->health ? be->health(ctx) : 0;
	if (rc != 0)
		kgb_err(err, errlen, "%s device %u failed its health check: %s", be->name, index,
		        be->last_error ? be->last_error(ctx) : "");
	be->close(ctx);
	return rc == 0 ? 0 : -1;
}

static int read_all(int fd, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = kgb_xmalloc(cap);
	for (;;) {
		if (n == cap) {
			if (cap >= KGB_EXEC_MAX_JOB) {
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap *= 2;
			buf = kgb_xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* See executor.h. */
int kgb_executor_main(int argc, char **argv)
{
	const char *backend = NULL;
	long device = -1;
	bool health = false, warm_mode = false, warm_blas = false;
	kgb_log_init("executor", NULL);
	/* die with the worker: a worker killed outright (SIGKILL, the OOM killer) must not
	 * leave its executor holding the device; already orphaned: stop now */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return KGB_EXEC_EXIT_INFRA;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
			backend = argv[++i];
		} else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
			char *end;
			device = strtol(argv[++i], &end, 10);
			if (*end || device < 0)
				device = -1;
		} else if (strcmp(argv[i], "--health") == 0) {
			health = true;
		} else if (strcmp(argv[i], "--warm") == 0) {
			warm_mode = true;
		} else if (strcmp(argv[i], "--blas") == 0) {
			warm_blas = true;
		} else {
			fprintf(stderr, "kgb-worker exec: unknown argument '%s'\n"
			        "usage: kgb-worker exec --backend NAME --device N [--health | --warm [--blas]] < job.pb\n"
			        "(internal: the worker starts this child itself)\n", argv[i]);
			return KGB_EXEC_EXIT_USAGE;
		}
	}
	if (!backend || device < 0) {
		fprintf(stderr, "kgb-worker exec: --backend and --device are required\n");
		return KGB_EXEC_EXIT_USAGE;
	}
	const kgb_backend_t *be = kgb_backend_find(backend);
	if (!be) {
		log_error("device=%s:%ld no backend named '%s' in this build", backend, device, backend);
		return KGB_EXEC_EXIT_INFRA;
	}
	if (health) {
		char err[512];
		if (kgb_executor_health(be, (uint32_t)device, err, sizeof err) != 0) {
			log_error("device=%s:%ld %s", backend, device, err);
			return KGB_EXEC_EXIT_UNHEALTHY;
		}
		return KGB_EXEC_EXIT_OK;
	}

	/* records go to the original stdout; anything a runtime prints goes to stderr */
	int out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (out_fd < 0 || dup2(2, 1) < 0) {
		log_error("device=%s:%ld cannot set up the record pipe: %s", backend, device, strerror(errno));
		return KGB_EXEC_EXIT_INFRA;
	}
	/* pre-warmed: the device (and its BLAS handle) first, then the job */
	kgb_exec_warm_t warm;
	memset(&warm, 0, sizeof warm);
	int job_fd = 0;
	if (warm_mode) {
		char e[512];
		uint64_t t0 = kgb_now_ns();
		kgb_devlock_t wl = KGB_DEVLOCK_NONE;
		const char *lp = getenv("KGB_DEVICE_LOCK");
		bool locked = lock_per_case_on(be) && lp && *lp;
		if (locked)
			open_prepare(be, true, warm_blas);
		if (locked && kgb_devlock_open(&wl, lp, e, sizeof e) == 0)
			kgb_devlock_try_for(&wl, LOCK_SH, CHORE_WAIT_MS);
		if (be->open((uint32_t)device, &warm.ctx, e, sizeof e) != KGB_BE_OK) {
			kgb_devlock_close(&wl);
			log_error("device=%s:%ld pre-warming: cannot open the device: %s", backend, device, e);
			return KGB_EXEC_EXIT_INFRA;
		}
		if (warm_blas && be->blas && kgb_nblas_open(be, warm.ctx, &warm.nb, e, sizeof e) != KGB_BE_OK)
			log_debug("device=%s:%ld pre-warming: no BLAS handle (%s); a job that needs one makes it", backend,
			          device, e);
		kgb_devlock_close(&wl);
		warm.open_ms = (double)(kgb_now_ns() - t0) / 1e6;
		job_fd = kgb_fd_recv(0);   /* what kgb_exec_assign sends */
		if (job_fd < 0) {
			/* the worker let this executor go unused (stopping, or the device needs a check) */
			kgb_nblas_close(&warm.nb, false);
			be->close(warm.ctx);
			return KGB_EXEC_EXIT_OK;
		}
	}
	/* a kernel's access to a guard page becomes its verdict (guardpage.h) */
	if (kgb_guard_install() != 0)
		log_warn("device=%s:%ld cannot install the guard-page fault handler: %s", backend, device, strerror(errno));
	int status;
	for (;;) {
		uint8_t *buf = NULL;
		size_t len = 0;
		int rrc = read_all(job_fd, &buf, &len);
		if (job_fd != 0)
			close(job_fd);
		if (rrc != 0) {
			log_error("device=%s:%ld reading the job from %s: %s", backend, device,
			          warm_mode ? "the worker" : "stdin", strerror(errno));
			return KGB_EXEC_EXIT_INFRA;
		}
		Kgb__JobAssign *job = kgb__job_assign__unpack(NULL, len, buf);
		free(buf);
		if (!job) {
			log_error("device=%s:%ld the job on stdin is not a valid JobAssign (%zu bytes)", backend, device, len);
			return KGB_EXEC_EXIT_INFRA;
		}
		log_debug("job=%llu epoch=%llu device=%s:%ld executor started, %zu case(s)",
		          (unsigned long long)job->job_id, (unsigned long long)job->epoch, backend, device, job->n_cases);
		status = kgb_executor_run_warm(be, (uint32_t)device, job, out_fd, warm_mode ? &warm : NULL);
		kgb__job_assign__free_unpacked(job, NULL);
		if (!warm.ctx)
			break;
		/* kept for another trusted job: say so, and wait for one (or for the end) */
		static const uint8_t ready[5] = { 1, 0, 0, 0, KGB_EXEC_REC_READY };
		if (kgb_write_all(out_fd, ready, sizeof ready) != 0 || (job_fd = kgb_fd_recv(0)) < 0) {
			kgb_nblas_close(&warm.nb, false);
			be->close(warm.ctx);
			warm.ctx = NULL;
			break;
		}
	}
	close(out_fd);
	/* a lost context can hang or crash in the runtime's exit handlers: leave now */
	if (status == KGB_EXEC_EXIT_DEAD)
		_exit(status);
	return status;
}
