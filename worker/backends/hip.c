/* The HIP backend (AMD ROCm; docs/backends.md): the HIP runtime loaded with dlopen,
 * modules from HIPRTC (HIP C++ compiled for the device's --offload-arch) or ready code
 * objects (lang "hsaco"), launches on the executor's own non-blocking stream between
 * one pair of events, L2 flushing between timing samples, and a health check.
 *
 * It has run only against the test double tests/doubles/fake_hip.c, never on AMD
 * hardware; the layouts and codes it relies on are those of the published headers.
 *
 * Ownership: open() returns a hip_ctx_t that owns the stream, the events and the
 * flush buffer; close() frees them. Buffers and modules belong to the caller until
 * free() / module_free(). A view shares its parent's memory and frees only itself.
 * After a fault the context is dead (every call says so); after a timeout a kernel
 * is still running, so nothing touches the device again and close() frees only host
 * memory: the executor process exits and the driver reclaims the rest. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "backend_common.h"
#include "compile.h"
#include "dtype.h"
#include "hip_api.h"
#include "log.h"
#include "probe_fork.h"
#include "srcscan.h"
#include "util.h"

#define HIP_MAX_ARGS 128

/* ---- symbol tables and loading ---- */

#define KGB_HIP_X_SYM(ret, name, args, sym, fallback, required) { #name, sym, fallback, required },

static const kgb_hip_sym_t runtime_syms[] = { KGB_HIP_API(KGB_HIP_X_SYM) };
static const kgb_hip_sym_t rtc_syms[] = { KGB_HIPRTC_API(KGB_HIP_X_SYM) };

_Static_assert(sizeof(kgb_hip_api_t) == KGB_ARRAY_LEN(runtime_syms) * sizeof(void (*)(void)),
               "the HIP table holds only function pointers");
_Static_assert(sizeof(kgb_hiprtc_api_t) == KGB_ARRAY_LEN(rtc_syms) * sizeof(void (*)(void)),
               "the HIPRTC table holds only function pointers");

/* The HIP runtime table, in struct order. */
const kgb_hip_sym_t *kgb_hip_runtime_syms(size_t *n)
{
	*n = KGB_ARRAY_LEN(runtime_syms);
	return runtime_syms;
}

/* The HIPRTC table, in struct order. */
const kgb_hip_sym_t *kgb_hip_rtc_syms(size_t *n)
{
	*n = KGB_ARRAY_LEN(rtc_syms);
	return rtc_syms;
}

/* Fill the i-th function pointer of api from lib for every entry. */
int kgb_hip_resolve(void *lib, const kgb_hip_sym_t *syms, size_t n, void *api, char *err,
                    size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(lib, syms[i].symbol);
		if (!p && syms[i].fallback[0])
			p = dlsym(lib, syms[i].fallback);
		if (!p && syms[i].required)
			return kgb_err(err, errlen, "symbol %s missing%s%s%s", syms[i].symbol,
			               syms[i].fallback[0] ? " (and " : "", syms[i].fallback,
			               syms[i].fallback[0] ? ")" : "");
		memcpy((char *)api + i * sizeof(void (*)(void)), &p, sizeof p);
	}
	return 0;
}

/* dlopen the override (if set) then each default name; the first that loads wins.
 * On failure why lists what was tried and the first loader error. */
static void *open_first(const char *env, const char *const *names, size_t nnames, const char **used,
                        char *why, size_t whylen)
{
	char tried[512], first[384];
	void *h = kgb_be_dlopen_first(getenv(env), names, nnames, used, tried, sizeof tried, first, sizeof first);
	if (!h)
		snprintf(why, whylen, "tried %.330s: %.330s", tried, first);
	return h;
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	bool tried, ok;
	void *lib;
	const char *path;
	kgb_hip_api_t api;
	char why[768];
} rt;

/* Load the HIP runtime (once). */
const kgb_hip_api_t *kgb_hip_runtime(char *why, size_t whylen)
{
	static const char *const names[] = { "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so" };
	pthread_mutex_lock(&load_lock);
	if (!rt.tried) {
		rt.tried = true;
		char e[700];
		rt.lib = open_first("KGB_HIP_LIBRARY", names, KGB_ARRAY_LEN(names), &rt.path, e, sizeof e);
		if (!rt.lib) {
			snprintf(rt.why, sizeof rt.why, "no HIP runtime (%.700s)", e);
		} else if (kgb_hip_resolve(rt.lib, runtime_syms, KGB_ARRAY_LEN(runtime_syms), &rt.api, e,
		                           sizeof e) < 0) {
			snprintf(rt.why, sizeof rt.why, "HIP runtime %s unusable: %s", rt.path, e);
		} else if (!rt.api.hipGetDevicePropertiesR0600 && !rt.api.hipGetDevicePropertiesR0000) {
			snprintf(rt.why, sizeof rt.why, "HIP runtime %s unusable: no hipGetDeviceProperties",
			         rt.path);
		} else {
			rt.ok = true;
		}
	}
	pthread_mutex_unlock(&load_lock);
	return kgb_be_loaded(rt.ok, &rt.api, rt.why, why, whylen);
}

static struct {
	bool tried, ok;
	kgb_hiprtc_api_t api;
	char why[768];
} rtc;

/* Load HIPRTC (once). */
const kgb_hiprtc_api_t *kgb_hip_rtc(char *why, size_t whylen)
{
	static const char *const names[] = { "libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so" };
	char e[700] = "";
	pthread_mutex_lock(&load_lock);
	if (!rtc.tried) {
		rtc.tried = true;
		const char *used = NULL;
		void *h = open_first("KGB_HIPRTC_LIBRARY", names, KGB_ARRAY_LEN(names), &used, e, sizeof e);
		char re[256] = "";
		if (h && kgb_hip_resolve(h, rtc_syms, KGB_ARRAY_LEN(rtc_syms), &rtc.api, re, sizeof re) == 0) {
			rtc.ok = true;
		} else if (h) {
			snprintf(rtc.why, sizeof rtc.why, "HIPRTC %s unusable: %s", used, re);
		} else {
			pthread_mutex_unlock(&load_lock);
			bool have_rt = kgb_hip_runtime(NULL, 0) != NULL;
			pthread_mutex_lock(&load_lock);
			/* ROCm 5 kept HIPRTC inside the runtime library */
			if (have_rt && kgb_hip_resolve(rt.lib, rtc_syms, KGB_ARRAY_LEN(rtc_syms), &rtc.api, re,
			                               sizeof re) == 0)
				rtc.ok = true;
			else
				snprintf(rtc.why, sizeof rtc.why, "no HIPRTC (%s)", e);
		}
	}
	pthread_mutex_unlock(&load_lock);
	return kgb_be_loaded(rtc.ok, &rtc.api, rtc.why, why, whylen);
}

/* HIP error -> KGB_BE_* code. */
int kgb_hip_classify(hipError_t e)
{
	switch (e) {
	case hipSuccess:
		return KGB_BE_OK;
	case hipErrorIllegalAddress:
	case hipErrorLaunchFailure:
	case hipErrorAssert:
	case hipErrorLaunchTimeOut:
	case hipErrorPriorLaunchFailure:
		return KGB_BE_FAULT;
	case hipErrorLaunchOutOfResources:
	case hipErrorInvalidConfiguration:
	case hipErrorCooperativeLaunchTooLarge:
		return KGB_BE_RESOURCE;
	case hipErrorInvalidImage:
	case hipErrorNoBinaryForGpu:
	case hipErrorInvalidKernelFile:
	case hipErrorInvalidSource:
	case hipErrorSharedObjectInitFailed:
	case hipErrorNotFound:
	case hipErrorInvalidDeviceFunction:
		return KGB_BE_COMPILE;
	case hipErrorOutOfMemory:
		return KGB_BE_NOMEM;
	default:
		return KGB_BE_ERR;
	}
}

/* "gfx942:sramecc+:xnack-" -> "gfx942". */
void kgb_hip_arch_base(const char *gcn, char *out, size_t outlen)
{
	size_t n = strcspn(gcn, ":");
	snprintf(out, outlen, "%.*s", (int)n, gcn);
}

static const char *hip_errstr(const kgb_hip_api_t *h, hipError_t e)
{
	static __thread char buf[320];
	const char *name = h ? h->hipGetErrorName(e) : NULL;
	const char *s = h ? h->hipGetErrorString(e) : NULL;
	snprintf(buf, sizeof buf, "%s (%d): %s", name ? name : "hipError", e, s ? s : "unknown error");
	return buf;
}

/* What the backend reads from hipDeviceProp_t, whichever layout the runtime has. */
typedef struct hip_facts {
	char name[256];
	char gcn_arch[256];
	uint64_t mem;
	uint64_t shared_per_block;
	int max_threads;
	int cus;
	int l2;
} hip_facts_t;

/* The facts from either layout of the device properties (the same field names). */
#define FACTS_FROM(f, p)                                                                           \
	do {                                                                                           \
		memcpy((f)->name, (p)->name, sizeof (f)->name);                                            \
		memcpy((f)->gcn_arch, (p)->gcnArchName, sizeof (f)->gcn_arch);                            \
		(f)->mem = (p)->totalGlobalMem;                                                            \
		(f)->shared_per_block = (p)->sharedMemPerBlock;                                            \
		(f)->max_threads = (p)->maxThreadsPerBlock;                                                \
		(f)->cus = (p)->multiProcessorCount;                                                       \
		(f)->l2 = (p)->l2CacheSize;                                                                \
	} while (0)

static hipError_t get_facts(const kgb_hip_api_t *h, int dev, hip_facts_t *f)
{
	kgb_hip_props_buf_t *b = kgb_xcalloc(1, sizeof *b);
	hipError_t e;
	memset(f, 0, sizeof *f);
	if (h->hipGetDevicePropertiesR0600) {
		e = h->hipGetDevicePropertiesR0600(b, dev);
		const kgb_hip_props_r0600_t *p = &b->r0600;
		if (e == hipSuccess)
			FACTS_FROM(f, p);
	} else {
		e = h->hipGetDevicePropertiesR0000(b, dev);
		const kgb_hip_props_r0000_t *p = &b->r0000;
		if (e == hipSuccess)
			FACTS_FROM(f, p);
	}
	f->name[sizeof f->name - 1] = 0;
	f->gcn_arch[sizeof f->gcn_arch - 1] = 0;
	free(b);
	return e;
}

/* ---- probe (in a forked child, see probe_fork.h) ---- */

static int probe_child(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	const kgb_hip_api_t *h = kgb_hip_runtime(why, whylen);
	if (!h)
		return 0;
	hipError_t e = h->hipInit(0);
	int n = 0, drv = 0;
	if (e == hipSuccess)
		e = h->hipGetDeviceCount(&n);
	if (e == hipErrorNoDevice || (e == hipSuccess && n == 0)) {
		snprintf(why, whylen, "the HIP runtime (%s) reports no devices", rt.path);
		return 0;
	}
	if (e != hipSuccess) {
		snprintf(why, whylen, "HIP runtime %s: %s", rt.path, hip_errstr(h, e));
		return 0;
	}
	h->hipDriverGetVersion(&drv);
	int count = 0;
	for (int i = 0; i < n && count < max; i++) {
		hip_facts_t f;
		if ((e = get_facts(h, i, &f)) != hipSuccess) {
			log_warn("hip: device %d: hipGetDeviceProperties: %s", i, hip_errstr(h, e));
			continue;
		}
		kgb_device_info_t *d = &out[count++];
		memset(d, 0, sizeof *d);
		snprintf(d->backend, sizeof d->backend, "hip");
		kgb_strlcpy(d->name, f.name, sizeof d->name);
		kgb_hip_arch_base(f.gcn_arch, d->arch, sizeof d->arch);
		/* HIP encodes the driver version as major * 10^7 + minor * 10^5 + patch */
		snprintf(d->driver_version, sizeof d->driver_version, "HIP %d.%d.%d", drv / 10000000,
		         (drv / 100000) % 100, drv % 100000);
		d->memory_bytes = f.mem;
		d->l2_bytes = f.l2 > 0 ? (uint64_t)f.l2 : 0;
		d->compute_units = f.cus > 0 ? (uint32_t)f.cus : 0;
		d->index = (uint32_t)i;
		d->caps = KGB_CAP_FP16 | KGB_CAP_FP64 | KGB_CAP_L2_FLUSH;
	}
	if (count == 0)
		snprintf(why, whylen, "the HIP runtime lists %d device(s) but none could be queried", n);
	return count;
}

static int hip_probe(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	/* a missing runtime is said without forking */
	if (!kgb_hip_runtime(why, whylen))
		return 0;
	return kgb_probe_forked("hip", probe_child, out, max, why, whylen);
}

/* ---- context ---- */

struct kgb_module {
	hipModule_t mod;
	hipFunction_t fn;
	char entry[256];
};

typedef struct hip_ctx {
	kgb_be_ctx_t base;           /* first: the shared state (backend_common.h) */
	const kgb_hip_api_t *h;
	int dev;
	hipStream_t stream;
	hip_facts_t f;
	char arch[64];
	void *flush_buf;
	size_t flush_bytes;
	uint8_t flush_val;
	kgb_module_t *scrub;          /* scrub_local's kernel, compiled on first use */
	uint32_t scrub_iter;
} hip_ctx_t;

#define set_err(c, ...) kgb_be_set_err(&(c)->base, __VA_ARGS__)

/* A failed runtime call: message with the call and the runtime's text; marks the
 * context dead on faults. */
static int hip_fail(hip_ctx_t *c, const char *what, hipError_t e)
{
	return kgb_be_fail(&c->base, kgb_hip_classify(e), what, hip_errstr(c->h, e));
}

#define HIP_CHECK(c, call) KGB_BE_CHECK(hip_fail, hipSuccess, c, call)

static const kgb_be_vendor_t hip_vendor;

static void hip_close(void *ctx);

/* The runtime, loaded and initialised (a no-op the second time); NULL with err set. */
static const kgb_hip_api_t *hip_runtime_init(char *err, size_t errlen)
{
	char why[768];
	const kgb_hip_api_t *h = kgb_hip_runtime(why, sizeof why);
	if (!h)
		return kgb_err(err, errlen, "%s", why), NULL;
	hipError_t e = h->hipInit(0);
	if (e != hipSuccess && e != hipErrorNoDevice)
		return kgb_err(err, errlen, "hip: %s", hip_errstr(h, e)), NULL;
	return h;
}

static int hip_prepare(char *err, size_t errlen)
{
	return hip_runtime_init(err, errlen) ? KGB_BE_OK : KGB_BE_ERR;
}

static int hip_open(uint32_t index, void **out, char *err, size_t errlen)
{
	*out = NULL;
	/* (the runtime initialised already when the executor prepared it) */
	const kgb_hip_api_t *h = hip_runtime_init(err, errlen);
	if (!h)
		return KGB_BE_ERR;
	int n = 0;
	hipError_t e = h->hipGetDeviceCount(&n);
	if (e != hipSuccess && e != hipErrorNoDevice)
		return kgb_err(err, errlen, "hip: %s", hip_errstr(h, e)), KGB_BE_ERR;
	if ((int)index >= n)
		return kgb_err(err, errlen, "hip device %u not found (%d device(s))", index, n), KGB_BE_ERR;
	hip_ctx_t *c = kgb_be_ctx_new(sizeof *c, &hip_vendor);
	c->h = h;
	c->dev = (int)index;
	if ((e = h->hipSetDevice(c->dev)) != hipSuccess || (e = get_facts(h, c->dev, &c->f)) != hipSuccess) {
		kgb_err(err, errlen, "hip device %u: %s", index, hip_errstr(h, e));
		free(c);
		return KGB_BE_ERR;
	}
	if ((e = h->hipStreamCreateWithFlags(&c->stream, hipStreamNonBlocking)) != hipSuccess) {
		kgb_err(err, errlen, "hip device %u: stream and events: %s", index, hip_errstr(h, e));
		hip_close(c);
		return KGB_BE_ERR;
	}
	if (kgb_be_ev_open(&c->base) != KGB_BE_OK) {
		kgb_err(err, errlen, "hip device %u: stream and events: %s", index, c->base.err);
		hip_close(c);
		return KGB_BE_ERR;
	}
	kgb_hip_arch_base(c->f.gcn_arch, c->arch, sizeof c->arch);
	if (c->f.max_threads <= 0)
		c->f.max_threads = 1024;
	if (c->f.shared_per_block == 0)
		c->f.shared_per_block = 64u << 10;
	*out = c;
	return KGB_BE_OK;
}

static void hip_module_free(void *ctx, kgb_module_t *m);

static void hip_close(void *ctx)
{
	hip_ctx_t *c = ctx;
	if (!c)
		return;
	const kgb_hip_api_t *h = c->h;
	kgb_be_pool_drain(&c->base);
	kgb_be_ev_close(&c->base);
	hip_module_free(c, c->scrub);
	if (!c->base.hung) {
		/* after a fault these calls fail harmlessly */
		if (c->flush_buf)
			h->hipFree(c->flush_buf);
		if (c->stream)
			h->hipStreamDestroy(c->stream);
	}
	free(c);
}

/* ---- memory: copies and fills go on the executor's stream and are waited for
 * there, so they are ordered with the launches (nothing uses the legacy null stream) ---- */

static hip_ctx_t *hipc(kgb_be_ctx_t *base)
{
	return (hip_ctx_t *)base;
}

static void *dptr(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

static int hip_mem_alloc(kgb_be_ctx_t *base, size_t bytes, uint64_t *addr)
{
	hip_ctx_t *c = hipc(base);
	void *p = NULL;
	HIP_CHECK(c, c->h->hipMalloc(&p, bytes));
	*addr = (uintptr_t)p;
	return KGB_BE_OK;
}

static void hip_mem_free(kgb_be_ctx_t *base, uint64_t addr)
{
	hipc(base)->h->hipFree(dptr(addr));
}

static int hip_copy_in(kgb_be_ctx_t *base, uint64_t dst, const void *src, size_t n)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipMemcpyHtoDAsync(dptr(dst), (void *)src, n, c->stream));
	HIP_CHECK(c, c->h->hipStreamSynchronize(c->stream));
	return KGB_BE_OK;
}

static int hip_copy_out(kgb_be_ctx_t *base, void *dst, uint64_t src, size_t n)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipMemcpyDtoHAsync(dst, dptr(src), n, c->stream));
	HIP_CHECK(c, c->h->hipStreamSynchronize(c->stream));
	return KGB_BE_OK;
}

static int hip_memset(kgb_be_ctx_t *base, uint64_t dst, uint8_t byte, size_t n)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipMemsetD8Async(dptr(dst), byte, n, c->stream));
	HIP_CHECK(c, c->h->hipStreamSynchronize(c->stream));
	return KGB_BE_OK;
}

/* ---- compile ---- */


/* The HIP prelude (docs/backends.md). */
char *kgb_hip_prelude(const kgb_compile_req_t *req)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	KGB_ASSERT(f != NULL);
	fputs("#include <hip/hip_runtime.h>\n", f);
	if (kgb_be_has_dtype(req->tensor_dtypes, req->ntensors, KGB_DT_F16))
		fputs("#include <hip/hip_fp16.h>\n", f);
	if (kgb_be_has_dtype(req->tensor_dtypes, req->ntensors, KGB_DT_BF16))
		fputs("#include <hip/hip_bf16.h>\n", f);
	fputs("#define KGB_HIP 1\n", f);
	kgb_be_cxx_tensors(f, req->tensor_names, req->tensor_dtypes, req->ntensors, "__hip_bfloat16", req->name,
	                   "candidate.hip");
	fclose(f);
	return buf;
}

/* Options a candidate may pass to HIPRTC: code generation only, nothing that names a
 * file or loads a plugin. */
static bool hiprtc_opt_ok(const char *o)
{
	static const char *const prefixes[] = { "-O", "-D", "-U", "-ffast-math", "-fno-fast-math",
		                                    "-ffp-contract=", "-std=", "--std=", "-munsafe-fp-atomics",
		                                    "-fgpu-flush-denormals-to-zero", "-mcumode", "-mno-cumode",
		                                    "-mwavefrontsize64", "-mno-wavefrontsize64",
		                                    "--gpu-max-threads-per-block=", "-Wno-" };
	if (strpbrk(o, "/\\"))
		return false;
	for (size_t i = 0; i < KGB_ARRAY_LEN(prefixes); i++)
		if (strncmp(o, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}





typedef struct rtc_job {
	const kgb_hiprtc_api_t *r;
	const char *src;
	const char *name;
	const char *const *opts;
	int nopts;
} rtc_job_t;

/* In the sandboxed child: compile, leave kernel.hsaco and compile.log. Exit 0 ok,
 * 1 compile error, 2 tool failure. */
static int rtc_child(void *arg, const char *dir)
{
	rtc_job_t *j = arg;
	const kgb_hiprtc_api_t *r = j->r;
	hiprtcProgram prog = NULL;
	char path[700];
	int rc = 2;
	char *log = NULL;
	hiprtcResult res = r->hiprtcCreateProgram(&prog, j->src, j->name, 0, NULL, NULL);
	if (res != HIPRTC_SUCCESS) {
		log = kgb_xasprintf("hiprtcCreateProgram: %s", r->hiprtcGetErrorString(res));
		goto out;
	}
	res = r->hiprtcCompileProgram(prog, j->nopts, j->opts);
	size_t ln = 0;
	if (r->hiprtcGetProgramLogSize(prog, &ln) == HIPRTC_SUCCESS && ln > 0) {
		log = kgb_xcalloc(1, ln + 1);
		if (r->hiprtcGetProgramLog(prog, log) != HIPRTC_SUCCESS)
			log[0] = 0;
	}
	if (res != HIPRTC_SUCCESS) {
		if (!log || !log[0]) {
			free(log);
			log = kgb_xasprintf("hiprtcCompileProgram: %s", r->hiprtcGetErrorString(res));
		}
		rc = 1;
		goto out;
	}
	size_t n = 0;
	if (r->hiprtcGetCodeSize(prog, &n) != HIPRTC_SUCCESS || n == 0) {
		free(log);
		log = kgb_xstrdup("hiprtc: no code object produced");
		goto out;
	}
	char *code = kgb_xmalloc(n);
	if (r->hiprtcGetCode(prog, code) != HIPRTC_SUCCESS) {
		free(code);
		goto out;
	}
	snprintf(path, sizeof path, "%s/kernel.hsaco", dir);
	rc = kgb_write_file_atomic(path, code, n) == 0 ? 0 : 2;
	free(code);
out:
	if (prog)
		r->hiprtcDestroyProgram(&prog);
	snprintf(path, sizeof path, "%s/compile.log", dir);
	kgb_write_file_atomic(path, log ? log : "", log ? strlen(log) : 0);
	free(log);
	return rc;
}

/* The environment HIPRTC may need inside the sandbox (where ROCm and its device
 * libraries live). Heap array of heap strings, NULL-terminated. */
static char **rtc_env(void)
{
	static const char *const keep[] = { "ROCM_PATH", "HIP_PATH", "HIP_DEVICE_LIB_PATH", "HIP_CLANG_PATH",
		                                "LLVM_PATH", "LD_LIBRARY_PATH", "TMPDIR", "HOME" };
	char **env = kgb_xcalloc(KGB_ARRAY_LEN(keep) + 1, sizeof *env);
	size_t n = 0;
	for (size_t i = 0; i < KGB_ARRAY_LEN(keep); i++) {
		const char *v = getenv(keep[i]);
		if (v)
			env[n++] = kgb_xasprintf("%s=%s", keep[i], v);
	}
	return env;
}

/* HIP C++ -> code object, through the compile cache and a sandboxed HIPRTC child. */
static int compile_hip_c(hip_ctx_t *c, const kgb_compile_req_t *req, char **bin, size_t *binlen,
                         char *log, size_t loglen)
{
	char why[768];
	char **uopts = NULL, **env = NULL;
	const char **opts = NULL;
	char *text = NULL, *arch_opt = NULL;
	int nu = 0, nopts = 0, rc = KGB_BE_ERR;
	*bin = NULL;
	*binlen = 0;

	const kgb_hiprtc_api_t *r = kgb_hip_rtc(why, sizeof why);
	if (!r) {
		rc = set_err(c, KGB_BE_UNSUPPORTED, "HIP C++ needs HIPRTC: %s", why);
		kgb_be_copy_log(log, loglen, c->base.err);
		return rc;
	}
	int vmaj = 0, vmin = 0;
	r->hiprtcVersion(&vmaj, &vmin);
	/* the source may read no file but itself and the toolkit's headers (srcscan.h) */
	if (kgb_src_check(req->source, req->source_len, KGB_LANG_HIP, req->name, why, sizeof why) != 0) {
		rc = set_err(c, KGB_BE_COMPILE, "%s", why);
		kgb_be_copy_log(log, loglen, c->base.err);
		return rc;
	}

	nu = kgb_be_split_opts(req->options, &uopts);
	opts = kgb_xcalloc((size_t)nu + req->ndefines + 4, sizeof *opts);
	arch_opt = kgb_xasprintf("--offload-arch=%s", c->f.gcn_arch[0] ? c->f.gcn_arch : c->arch);
	opts[nopts++] = arch_opt;
	opts[nopts++] = "-O3";
	char **defs = kgb_xcalloc(req->ndefines + 1, sizeof *defs);
	for (size_t i = 0; i < req->ndefines; i++) {
		const char *v = req->define_values[i] ? req->define_values[i] : "";
		if (!kgb_be_is_ident(req->define_names[i])) {
			rc = set_err(c, KGB_BE_COMPILE, "%s: define name '%s' is not an identifier",
			             req->name ? req->name : "kernel", req->define_names[i]);
			kgb_be_copy_log(log, loglen, c->base.err);
			goto out_defs;
		}
		defs[i] = kgb_xasprintf("-D%s=%s", req->define_names[i], v);
		opts[nopts++] = defs[i];
	}
	for (int i = 0; i < nu; i++) {
		if (!hiprtc_opt_ok(uopts[i])) {
			rc = set_err(c, KGB_BE_COMPILE, "%s: option '%s' not allowed for HIP candidates",
			             req->name ? req->name : "kernel", uopts[i]);
			kgb_be_copy_log(log, loglen, c->base.err);
			goto out_defs;
		}
		opts[nopts++] = uopts[i];
	}

	text = kgb_be_prelude_join(kgb_hip_prelude(req), req->source, req->source_len);

	char key[65];
	kgb_ckey_t k;
	kgb_be_ckey_begin(&k, "hip", text, req->entry, (const char *const *)opts, nopts);
	kgb_ckey_add_int(&k, "hiprtc_major", vmaj);
	kgb_ckey_add_int(&k, "hiprtc_minor", vmin);
	kgb_ckey_add_str(&k, "runtime", rt.path ? rt.path : "");
	kgb_ckey_final(&k, key);

	env = rtc_env();
	rtc_job_t job = { r, text, req->name ? req->name : "candidate.hip", opts, nopts };
	kgb_sandbox_opts_t so = { .wall_ms = kgb_be_env_u32("KGB_HIP_COMPILE_TIMEOUT_MS", 60000),
		                      .as_bytes = (uint64_t)kgb_be_env_u32("KGB_HIP_COMPILE_AS_MB", 16384) << 20,
		                      .no_network = true,
		                      .env = (const char *const *)env };
	kgb_be_rtc_t rj = { .key = key, .artifact = "kernel.hsaco", .tool = "HIPRTC", .lang = "HIP", .so = &so,
		                .child = rtc_child, .arg = &job };
	rc = kgb_be_rtc_run(&c->base, &rj, bin, binlen, log, loglen);
out_defs:
	for (size_t i = 0; i < req->ndefines; i++)
		free(defs[i]);
	free(defs);
	if (env)
		for (char **e = env; *e; e++)
			free(*e);
	free(env);
	free(opts);
	free(arch_opt);
	kgb_be_free_opts(uopts, nu);
	free(text);
	return rc;
}

static int load_module(hip_ctx_t *c, const void *image, const char *entry, kgb_module_t *m, char *log,
                       size_t loglen)
{
	hipError_t e = c->h->hipModuleLoadData(&m->mod, image);
	if (e != hipSuccess) {
		m->mod = NULL;
		int code = hip_fail(c, "hipModuleLoadData", e);
		if (code != KGB_BE_FAULT)
			code = e == hipErrorOutOfMemory ? KGB_BE_NOMEM : KGB_BE_COMPILE;
		set_err(c, code, "loading the code object for %s (%s): %s", c->f.gcn_arch, entry, hip_errstr(c->h, e));
		kgb_be_copy_log(log, loglen, c->base.err);
		return code;
	}
	e = c->h->hipModuleGetFunction(&m->fn, m->mod, entry);
	if (e != hipSuccess) {
		int code = hip_fail(c, "hipModuleGetFunction", e);
		if (code != KGB_BE_FAULT)
			code = KGB_BE_COMPILE;
		set_err(c, code, "the code object has no kernel '%s' (declare it extern \"C\" __global__): %s",
		        entry, hip_errstr(c->h, e));
		kgb_be_copy_log(log, loglen, c->base.err);
		return code;
	}
	snprintf(m->entry, sizeof m->entry, "%s", entry);
	return KGB_BE_OK;
}

static int hip_compile(void *ctx, const kgb_compile_req_t *req, kgb_module_t **out, char *log, size_t loglen)
{
	hip_ctx_t *c = ctx;
	char *bin = NULL;
	size_t binlen = 0;
	int rc = kgb_be_compile_begin(&c->base, out, log, loglen);
	if (rc)
		return rc;
	kgb_module_t *m = kgb_xcalloc(1, sizeof *m);
	switch (req->lang) {
	case KGB_LANG_HIP:
		rc = compile_hip_c(c, req, &bin, &binlen, log, loglen);
		if (rc == KGB_BE_OK)
			rc = load_module(c, bin, req->entry, m, log, loglen);
		break;
	case KGB_LANG_HSACO:
		if (req->source_len < 4) {
			rc = set_err(c, KGB_BE_COMPILE, "%s: %zu bytes is not a code object", req->name ? req->name : "kernel",
			             req->source_len);
			break;
		}
		/* the runtime reads the image through a pointer with no length: give it a
		 * private copy so it cannot read past the job's buffer */
		bin = kgb_xmalloc(req->source_len + 1);
		memcpy(bin, req->source, req->source_len);
		bin[req->source_len] = 0;
		rc = load_module(c, bin, req->entry, m, log, loglen);
		break;
	default:
		rc = set_err(c, KGB_BE_UNSUPPORTED, "the hip backend does not run %s kernels", kgb_lang_name(req->lang));
		break;
	}
	free(bin);
	if (rc != KGB_BE_OK) {
		if (m->mod && !c->base.dead)
			c->h->hipModuleUnload(m->mod);
		free(m);
		return rc;
	}
	*out = m;
	return KGB_BE_OK;
}

static void hip_module_free(void *ctx, kgb_module_t *m)
{
	hip_ctx_t *c = ctx;
	if (!m)
		return;
	if (m->mod && !c->base.hung)
		c->h->hipModuleUnload(m->mod);
	free(m);
}

/* ---- launch ---- */

/* 1 when the stream has finished everything queued, 0 while it runs. */
static int hip_query(kgb_be_ctx_t *base)
{
	hip_ctx_t *c = hipc(base);
	hipError_t e = c->h->hipStreamQuery(c->stream);
	if (e == hipSuccess)
		return 1;
	return e == hipErrorNotReady ? 0 : hip_fail(c, "kernel execution", e);
}

static int hip_launch(kgb_be_ctx_t *base, const kgb_launch_t *L, size_t li)
{
	hip_ctx_t *c = hipc(base);
	kgb_module_t *m = L->mod;
	unsigned grid[3], block[3];
	void *params[HIP_MAX_ARGS];
	uint64_t store[HIP_MAX_ARGS];

	if (!m)
		return set_err(c, KGB_BE_ERR, "launch %zu: no module", li);
	if (L->grid[0] == 0)
		return KGB_BE_OK; /* an empty grid: nothing to run (empty tensors) */
	for (int d = 0; d < 3; d++) {
		uint64_t g = L->grid[d] ? L->grid[d] : 1, b = L->block[d] ? L->block[d] : 1;
		if (g > 0x7fffffffull || b > 1024)
			return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): grid[%d] = %llu, block[%d] = %llu exceed "
			               "the device limits (2^31-1, 1024)", li, m->entry, d, (unsigned long long)g, d,
			               (unsigned long long)b);
		grid[d] = (unsigned)g;
		block[d] = (unsigned)b;
	}
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	if (threads > (uint64_t)c->f.max_threads)
		return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): block of %llu threads exceeds the device's %d",
		               li, m->entry, (unsigned long long)threads, c->f.max_threads);
	if (L->shared_bytes > c->f.shared_per_block)
		return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): %zu bytes of dynamic shared memory exceed "
		               "the device's %llu per block", li, m->entry, L->shared_bytes,
		               (unsigned long long)c->f.shared_per_block);
	if (L->nargs > HIP_MAX_ARGS)
		return set_err(c, KGB_BE_ERR, "launch %zu: %zu arguments (at most %d)", li, L->nargs, HIP_MAX_ARGS);
	for (size_t i = 0; i < L->nargs; i++) {
		int rc = kgb_be_kernel_arg(&c->base, &L->args[i], li, i, "HIP", &store[i]);
		if (rc)
			return rc;
		params[i] = &store[i];
	}
	hipError_t e = c->h->hipModuleLaunchKernel(m->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
	                                           (unsigned)L->shared_bytes, c->stream, params, NULL);
	if (e != hipSuccess) {
		int code = hip_fail(c, "hipModuleLaunchKernel", e);
		return set_err(c, code, "launch %zu (%s, grid %u,%u,%u block %u,%u,%u shared %zu): %s", li, m->entry,
		               grid[0], grid[1], grid[2], block[0], block[1], block[2], L->shared_bytes,
		               hip_errstr(c->h, e));
	}
	return KGB_BE_OK;
}

/* ---- timing events (backend_common.h: the kgb_be_ev_* functions use them) ---- */

static int hip_ev_create(kgb_be_ctx_t *base, void **ev)
{
	hip_ctx_t *c = hipc(base);
	hipEvent_t e = NULL;
	hipError_t r = c->h->hipEventCreateWithFlags(&e, hipEventDefault);
	*ev = e;
	return r == hipSuccess ? KGB_BE_OK : hip_fail(c, "hipEventCreateWithFlags", r);
}

static int hip_ev_record(kgb_be_ctx_t *base, void *ev)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipEventRecord((hipEvent_t)ev, c->stream));
	return KGB_BE_OK;
}

static int hip_ev_ms(kgb_be_ctx_t *base, void *a, void *b, float *ms)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipEventElapsedTime(ms, (hipEvent_t)a, (hipEvent_t)b));
	return KGB_BE_OK;
}

static void hip_ev_destroy(kgb_be_ctx_t *base, void *ev)
{
	hipc(base)->h->hipEventDestroy((hipEvent_t)ev);
}

/* ---- batches of timing samples (kgb_be_run_samples) ---- */

static int hip_copy_async(kgb_be_ctx_t *base, uint64_t dst, uint64_t src, size_t n)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipMemcpyDtoDAsync(dptr(dst), dptr(src), n, c->stream));
	return KGB_BE_OK;
}

static int hip_fill_async(kgb_be_ctx_t *base, uint64_t dst, uint8_t byte, size_t n)
{
	hip_ctx_t *c = hipc(base);
	HIP_CHECK(c, c->h->hipMemsetD8Async(dptr(dst), byte, n, c->stream));
	return KGB_BE_OK;
}

static int hip_flush_cache(void *ctx);

static int hip_flush(kgb_be_ctx_t *base)
{
	return hip_flush_cache(hipc(base));
}

/* Write a buffer larger than the last-level cache (allocated once) between samples.
 * CDNA3 (gfx94x) has a 256 MiB Infinity Cache behind the L2, so it gets 512 MiB;
 * KGB_HIP_FLUSH_MB overrides. Ordered before the next launch on the stream. */
static int hip_flush_cache(void *ctx)
{
	hip_ctx_t *c = ctx;
	int rc = kgb_be_usable(&c->base);
	if (rc)
		return rc;
	if (!c->flush_buf) {
		size_t want = 2 * (size_t)(c->f.l2 > 0 ? c->f.l2 : 8 << 20);
		if (want < ((size_t)8 << 20))
			want = (size_t)8 << 20;
		if (strncmp(c->arch, "gfx94", 5) == 0 && want < ((size_t)512 << 20))
			want = (size_t)512 << 20;
		uint32_t mb = kgb_be_env_u32("KGB_HIP_FLUSH_MB", 0);
		if (mb)
			want = (size_t)mb << 20;
		if (c->f.mem && want > c->f.mem / 8)
			want = (size_t)(c->f.mem / 8);
		HIP_CHECK(c, c->h->hipMalloc(&c->flush_buf, want));
		c->flush_bytes = want;
	}
	c->flush_val++;
	HIP_CHECK(c, c->h->hipMemsetD8Async(c->flush_buf, c->flush_val, c->flush_bytes, c->stream));
	return KGB_BE_OK;
}

static const char health_src[] =
	"extern \"C\" __global__ void kgb_health(unsigned *out, unsigned n)\n"
	"{\n"
	"\tunsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\tout[i] = i * 2654435761u + 12345u;\n"
	"}\n";

/* The health kernel through HIPRTC; without HIPRTC a memory round trip only. */
static int hip_health(void *ctx)
{
	kgb_compile_req_t req = { .lang = KGB_LANG_HIP, .entry = "kgb_health", .source = health_src,
		                      .source_len = sizeof health_src - 1, .name = "health.hip" };
	return kgb_be_health(&kgb_backend_hip, ctx, kgb_hip_rtc(NULL, 0) ? &req : NULL);
}

/* ---- scrub_local: shared memory ----
 *
 * LDS (shared memory) keeps what a workgroup left there for the next workgroup on the
 * compute unit: before every timed sample (outside its events) kgb_scrub_shared
 * writes the largest dynamic shared memory a block may have, two blocks per compute
 * unit. Compiled through HIPRTC on first use (the compile cache keeps it); without
 * HIPRTC there is no scrub (KGB_BE_UNSUPPORTED: the executor logs it and goes on).
 * Module globals are not put back on HIP. */
static const char scrub_src[] =
	"extern \"C\" __global__ void kgb_scrub_shared(unsigned words, unsigned salt)\n"
	"{\n"
	"\textern __shared__ unsigned kgb_scrub_smem[];\n"
	"\tvolatile unsigned *s = kgb_scrub_smem;\n"
	"\tunsigned v = salt ^ (blockIdx.x * 0x9E3779B1u);\n"
	"\tfor (unsigned i = threadIdx.x; i < words; i += blockDim.x)\n"
	"\t\ts[i] = v ^ i;\n"
	"}\n";

static int hip_scrub(kgb_be_ctx_t *base)
{
	hip_ctx_t *c = hipc(base);
	if (!c->scrub) {
		char log[2048];
		kgb_compile_req_t req = { .lang = KGB_LANG_HIP, .entry = "kgb_scrub_shared", .source = scrub_src,
			                      .source_len = sizeof scrub_src - 1, .name = "scrub.hip" };
		if (!kgb_hip_rtc(NULL, 0))
			return set_err(c, KGB_BE_UNSUPPORTED, "no HIPRTC to compile the shared memory scrub");
		int rc = hip_compile(c, &req, &c->scrub, log, sizeof log);
		if (rc)
			return rc;
	}
	unsigned bytes = (unsigned)KGB_MIN(c->f.shared_per_block, (uint64_t)UINT32_MAX) & ~63u;
	unsigned words = bytes / 4, salt = ++c->scrub_iter * 0x9E3779B9u;
	void *params[2] = { &words, &salt };
	unsigned blocks = 2u * (unsigned)KGB_MAX(c->f.cus, 1);
	HIP_CHECK(c, c->h->hipModuleLaunchKernel(c->scrub->fn, blocks, 1, 1, 256, 1, 1, bytes, c->stream, params, NULL));
	return KGB_BE_OK;
}

/* The executor's stream, for library handles (docs/native.md). */
static void *hip_stream(void *ctx)
{
	return ((hip_ctx_t *)ctx)->stream;
}

static const kgb_be_vendor_t hip_vendor = {
	.lost = "the HIP context was lost by an earlier fault",
	.alloc_call = "hipMalloc",
	.mem_alloc = hip_mem_alloc,
	.mem_free = hip_mem_free,
	.copy_in = hip_copy_in,
	.copy_out = hip_copy_out,
	.fill = hip_memset,
	.run_begin = kgb_be_ev_run_begin,
	.launch = hip_launch,
	.run_end = kgb_be_ev_run_end,
	.elapsed = kgb_be_ev_elapsed,
	.query = hip_query,
	.copy_async = hip_copy_async,
	.fill_async = hip_fill_async,
	.flush = hip_flush,
	.mark = kgb_be_ev_mark,
	.between = kgb_be_ev_between,
	.scrub = hip_scrub,
	.ev_create = hip_ev_create,
	.ev_record = hip_ev_record,
	.ev_ms = hip_ev_ms,
	.ev_destroy = hip_ev_destroy,
};

const kgb_backend_t kgb_backend_hip = {
	.name = "hip",
	.langs = (1u << KGB_LANG_HIP) | (1u << KGB_LANG_HSACO),
	.probe = hip_probe,
	.open = hip_open,
	.prepare = hip_prepare,
	.close = hip_close,
	KGB_BE_SHARED_ENTRIES,
	.compile = hip_compile,
	.module_free = hip_module_free,
	.flush_cache = hip_flush_cache,
	.scrub_local = kgb_be_scrub_local,
	.clocks = NULL,
	.health = hip_health,
	.visible_env = "HIP_VISIBLE_DEVICES",
	.blas = "hipblas",
	.stream = hip_stream,
};
