/* The CUDA backend (docs/cuda-backend.md): the CUDA driver API loaded with dlopen,
 * modules from NVRTC (CUDA C), PTX, cubin and the Triton helper, launches on the
 * executor's own stream with one event pair around them, L2 flushing between timing
 * samples, NVML clocks, and a health check through an embedded PTX kernel.
 *
 * Every copy and fill goes on the executor's own (non-blocking) stream and is waited
 * for there, so it is ordered with the launches; nothing uses the legacy default
 * stream, whose ordering with a non-blocking stream is not guaranteed.
 *
 * Ownership: open() returns a cuda_ctx_t that owns the stream, the events, the L2
 * flush buffer and the Triton scratch buffers; close() frees them and releases the
 * primary context. Buffers and modules are owned by the caller until free() /
 * module_free(). A view shares its parent's memory and frees only itself. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "backend_common.h"
#include "compile.h"
#include "cuda_api.h"
#include "dtype.h"
#include "log.h"
#include "plan.h"
#include "probe_fork.h"
#include "srcscan.h"
#include "util.h"

#define CUDA_DEFAULT_SHARED (48u * 1024u)

struct kgb_module {
	CUmodule mod;
	CUfunction fn;
	kgb_lang_t lang;
	bool triton;
	kgb_cuda_abi_t abi;           /* Triton only */
	int max_threads;              /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
	int static_shared;
	int num_regs;
	unsigned dyn_shared_set;      /* MAX_DYNAMIC_SHARED_SIZE_BYTES already set to this */
	char entry[256];
	/* its global variables and a copy of each as loaded, put back by every scrub */
	struct { CUdeviceptr addr, saved; size_t bytes; } *globals;
	size_t nglobals;
};

typedef struct cuda_ctx {
	kgb_be_ctx_t base;             /* first: the shared state (backend_common.h) */
	const kgb_cuda_api_t *cu;
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	uint32_t index;
	int arch;                      /* 90 for sm_90 */
	int max_threads;
	int max_shared_optin;
	int sm_count;
	size_t l2_bytes;
	CUdeviceptr flush_buf;
	size_t flush_bytes;
	uint8_t flush_val;
	CUdeviceptr gscratch, pscratch;  /* Triton's appended scratch buffers */
	size_t gscratch_cap, pscratch_cap;
	const kgb_nvml_api_t *nvml;
	nvmlDevice_t nvdev;
	/* scrub_local: the shared memory scrub kernel (loaded on first use) and the live
	 * modules that have global variables */
	CUmodule scrub_mod;
	CUfunction scrub_fn;
	unsigned scrub_bytes;
	uint32_t scrub_iter;
	kgb_module_t **live;
	size_t nlive;
	/* the timing gate (cuda_gate): its kernel, and host memory mapped for the device:
	 * word 0 the token released last, word 2 + k sample k's time-outs */
	CUmodule gate_mod;
	CUfunction gate_fn;
	volatile uint32_t *gate_word;
	CUdeviceptr gate_dev;
	uint32_t gate_token;
	uint64_t gate_timeout_ns;      /* 0: no gate (KGB_CUDA_GATE_MS=0) */
} cuda_ctx_t;

static const char *cu_errstr(const kgb_cuda_api_t *cu, CUresult r)
{
	const char *name = NULL, *s = NULL;
	static __thread char buf[256];
	if (cu) {
		cu->cuGetErrorName(r, &name);
		cu->cuGetErrorString(r, &s);
	}
	snprintf(buf, sizeof buf, "%s (%d): %s", name ? name : "CUDA_ERROR", r, s ? s : "unknown error");
	return buf;
}

#define set_err(c, ...) kgb_be_set_err(&(c)->base, __VA_ARGS__)

/* Record a failed driver call: message with the call and the driver's text; marks the
 * context dead on faults. */
static int cu_fail(cuda_ctx_t *c, const char *what, CUresult r)
{
	return kgb_be_fail(&c->base, kgb_cuda_classify(r), what, cu_errstr(c->cu, r));
}

#define CU_CHECK(c, call) KGB_BE_CHECK(cu_fail, CUDA_SUCCESS, c, call)

static cuda_ctx_t *cudac(kgb_be_ctx_t *base)
{
	return (cuda_ctx_t *)base;
}

static const kgb_be_vendor_t cuda_vendor;

/* ---- probe (in a forked child, see probe_fork.h: the worker daemon must never
 * initialise CUDA, or its executor children could not use it) ---- */

/* The devices as the driver reports them (run in the probing child). */
static int probe_devices(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	int count = 0;
	const kgb_cuda_api_t *cu = kgb_cuda_driver(why, whylen);
	if (!cu)
		return 0;
	CUresult r = cu->cuInit(0);
	if (r != CUDA_SUCCESS) {
		snprintf(why, whylen, "cuInit: %s", cu_errstr(cu, r));
		return 0;
	}
	int n = 0, drv = 0;
	cu->cuDeviceGetCount(&n);
	cu->cuDriverGetVersion(&drv);
	char nvdrv[40] = "";
	char nwhy[256];
	const kgb_nvml_api_t *nv = kgb_cuda_nvml(nwhy, sizeof nwhy);
	if (nv)
		nv->nvmlSystemGetDriverVersion(nvdrv, sizeof nvdrv);
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		kgb_device_info_t *d = &out[count];
		CUdevice dev;
		if (cu->cuDeviceGet(&dev, i) != CUDA_SUCCESS)
			continue;
		memset(d, 0, sizeof *d);
		snprintf(d->backend, sizeof d->backend, "cuda");
		cu->cuDeviceGetName(d->name, (int)sizeof d->name - 1, dev);
		int maj = 0, min = 0, sms = 0, l2 = 0;
		cu->cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
		cu->cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
		cu->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
		cu->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
		snprintf(d->arch, sizeof d->arch, "sm_%d%d", maj, min);
		size_t mem = 0;
		cu->cuDeviceTotalMem(&mem, dev);
		d->memory_bytes = mem;
		d->l2_bytes = (uint64_t)l2;
		d->compute_units = (uint32_t)sms;
		d->index = (uint32_t)i;
		if (nvdrv[0])
			snprintf(d->driver_version, sizeof d->driver_version, "%s (CUDA %d.%d)", nvdrv,
			         drv / 1000, (drv % 1000) / 10);
		else
			snprintf(d->driver_version, sizeof d->driver_version, "CUDA %d.%d", drv / 1000,
			         (drv % 1000) / 10);
		d->caps = KGB_CAP_FP16 | KGB_CAP_FP64 | KGB_CAP_L2_FLUSH | (nv ? KGB_CAP_CLOCKS : 0);
		count++;
	}
	if (count == 0)
		snprintf(why, whylen, "the CUDA driver reports no devices");
	return count;
}

static int cuda_probe(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	/* number the devices by PCI bus id here and in every executor child (which
	 * inherits the variable), so that index N names the same GPU in both; a value
	 * the user set is kept (docs/multi-gpu.md) */
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
	/* A missing driver is said without forking. */
	if (!kgb_cuda_driver(why, whylen))
		return 0;
	return kgb_probe_forked("cuda", probe_devices, out, max, why, whylen);
}

/* ---- context ---- */

static void cuda_close(void *ctx);

/* The driver, loaded and initialised (a no-op the second time); NULL with err set. */
static const kgb_cuda_api_t *cuda_driver_init(char *err, size_t errlen)
{
	char why[512];
	const kgb_cuda_api_t *cu = kgb_cuda_driver(why, sizeof why);
	if (!cu)
		return kgb_err(err, errlen, "%s", why), NULL;
	CUresult r = cu->cuInit(0);
	if (r != CUDA_SUCCESS)
		return kgb_err(err, errlen, "cuInit: %s", cu_errstr(cu, r)), NULL;
	return cu;
}

static int cuda_prepare(char *err, size_t errlen)
{
	return cuda_driver_init(err, errlen) ? KGB_BE_OK : KGB_BE_ERR;
}

static int cuda_open(uint32_t index, void **out, char *err, size_t errlen)
{
	*out = NULL;
	/* (the driver initialised already when the executor prepared it) */
	const kgb_cuda_api_t *cu = cuda_driver_init(err, errlen);
	if (!cu)
		return KGB_BE_ERR;
	cuda_ctx_t *c = kgb_be_ctx_new(sizeof *c, &cuda_vendor);
	c->cu = cu;
	c->index = index;
	CUresult r;
	if ((r = cu->cuDeviceGet(&c->dev, (int)index)) != CUDA_SUCCESS ||
	    (r = cu->cuDevicePrimaryCtxRetain(&c->ctx, c->dev)) != CUDA_SUCCESS) {
		kgb_err(err, errlen, "cuda device %u: %s", index, cu_errstr(cu, r));
		free(c);
		return KGB_BE_ERR;
	}
	if ((r = cu->cuCtxSetCurrent(c->ctx)) != CUDA_SUCCESS ||
	    (r = cu->cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
		kgb_err(err, errlen, "cuda device %u: context set-up: %s", index, cu_errstr(cu, r));
		cuda_close(c);
		return KGB_BE_ERR;
	}
	if (kgb_be_ev_open(&c->base) != KGB_BE_OK) {
		kgb_err(err, errlen, "cuda device %u: context set-up: %s", index, c->base.err);
		cuda_close(c);
		return KGB_BE_ERR;
	}
	int maj = 0, min = 0, l2 = 0;
	cu->cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev);
	cu->cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev);
	cu->cuDeviceGetAttribute(&c->max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, c->dev);
	cu->cuDeviceGetAttribute(&c->max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
	                         c->dev);
	cu->cuDeviceGetAttribute(&c->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev);
	cu->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, c->dev);
	c->arch = maj * 10 + min;
	c->l2_bytes = (size_t)l2;
	c->gate_timeout_ns = (uint64_t)kgb_be_env_u32("KGB_CUDA_GATE_MS", 20) * 1000000u;
	char nwhy[256];
	c->nvml = kgb_cuda_nvml(nwhy, sizeof nwhy);
	if (c->nvml) {
		char bus[64];
		if (cu->cuDeviceGetPCIBusId(bus, sizeof bus, c->dev) != CUDA_SUCCESS ||
		    c->nvml->nvmlDeviceGetHandleByPciBusId(bus, &c->nvdev) != NVML_SUCCESS)
			c->nvml = NULL;
	} else {
		log_debug("cuda: %s; clocks not recorded", nwhy);
	}
	*out = c;
	return KGB_BE_OK;
}

static void cuda_close(void *ctx)
{
	cuda_ctx_t *c = ctx;
	if (!c)
		return;
	const kgb_cuda_api_t *cu = c->cu;
	kgb_be_pool_drain(&c->base);
	kgb_be_ev_close(&c->base);
	if (!c->base.hung) {
		/* a dead context refuses these calls; they are harmless then */
		if (c->flush_buf)
			cu->cuMemFree(c->flush_buf);
		if (c->gscratch)
			cu->cuMemFree(c->gscratch);
		if (c->pscratch)
			cu->cuMemFree(c->pscratch);
		if (c->scrub_mod)
			cu->cuModuleUnload(c->scrub_mod);
		if (c->gate_mod)
			cu->cuModuleUnload(c->gate_mod);
		if (c->gate_word)
			cu->cuMemFreeHost((void *)c->gate_word);
		if (c->stream)
			cu->cuStreamDestroy(c->stream);
		if (c->ctx) {
			cu->cuCtxSetCurrent(NULL);
			cu->cuDevicePrimaryCtxRelease(c->dev);
		}
	}
	/* A hung kernel cannot be stopped from here: the executor process exits, and the
	 * driver tears the context down with it. */
	free(c->live);
	free(c);
}

/* ---- memory: every copy and fill goes on the executor's stream ----
 *
 * Uploads and fills are queued and not waited for: the work after them on the stream
 * (a run, a read) is ordered behind them, and the wait that ends a run or a read
 * reports their errors too. The source of an upload is pageable memory, which the
 * driver has copied out before cuMemcpyHtoDAsync returns, so the caller may reuse it
 * at once. Reads are waited for. A stream sync per upload and fill, as before, cost a
 * round trip to the device each, and several while other executors' contexts share
 * the device (docs/worker.md, "Sharing a device"). */

static int cuda_mem_alloc(kgb_be_ctx_t *base, size_t bytes, uint64_t *addr)
{
	cuda_ctx_t *c = cudac(base);
	CUdeviceptr p = 0;
	CU_CHECK(c, c->cu->cuMemAlloc(&p, bytes));
	*addr = p;
	return KGB_BE_OK;
}

static void cuda_mem_free(kgb_be_ctx_t *base, uint64_t addr)
{
	cudac(base)->cu->cuMemFree(addr);
}

static int cuda_copy_in(kgb_be_ctx_t *base, uint64_t dst, const void *src, size_t n)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuMemcpyHtoDAsync(dst, src, n, c->stream));
	return KGB_BE_OK;
}

static int cuda_copy_out(kgb_be_ctx_t *base, void *dst, uint64_t src, size_t n)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuMemcpyDtoHAsync(dst, src, n, c->stream));
	CU_CHECK(c, c->cu->cuStreamSynchronize(c->stream));
	return KGB_BE_OK;
}

static int cuda_memset(kgb_be_ctx_t *base, uint64_t dst, uint8_t byte, size_t n)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuMemsetD8Async(dst, byte, n, c->stream));
	return KGB_BE_OK;
}

/* ---- the Triton launch ABI ---- */

static int abi_int(json_t *o, const char *key, bool required, int64_t dflt, int64_t lo, int64_t hi,
                   int64_t *out, const char *origin, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		if (required)
			return kgb_err(err, errlen, "%s: field '%s' missing", origin, key);
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v)) {
		char *txt = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		kgb_err(err, errlen, "%s: field '%s': expected an integer, got %s", origin, key,
		        txt ? txt : "?");
		free(txt);
		return -1;
	}
	int64_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return kgb_err(err, errlen, "%s: field '%s': %lld outside [%lld, %lld]", origin, key,
		               (long long)x, (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

/* Size in bytes of a Triton scalar type, or 0 for a pointer ("*fp32"), -1 unknown. */
int kgb_cuda_triton_type_size(const char *ty)
{
	static const struct { const char *t; int n; } tab[] = {
		{ "i1", 1 },  { "u1", 1 },  { "i8", 1 },   { "u8", 1 },   { "i16", 2 },  { "u16", 2 },
		{ "i32", 4 }, { "u32", 4 }, { "i64", 8 },  { "u64", 8 },  { "fp16", 2 }, { "bf16", 2 },
		{ "fp32", 4 }, { "fp64", 8 },
	};
	if (ty[0] == '*')
		return 0;
	for (size_t i = 0; i < KGB_ARRAY_LEN(tab); i++)
		if (strcmp(ty, tab[i].t) == 0)
			return tab[i].n;
	return -1;
}

/* Parse kernel.abi.json (see worker/triton_compile.py). */
int kgb_cuda_abi_parse(const char *text, size_t len, const char *origin, kgb_cuda_abi_t *out,
                       char *err, size_t errlen)
{
	json_error_t je;
	int rc = -1;
	memset(out, 0, sizeof *out);
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root)
		return kgb_err(err, errlen, "%s: line %d: %s", origin, je.line, je.text);
	if (!json_is_object(root)) {
		kgb_err(err, errlen, "%s: expected a JSON object", origin);
		goto out;
	}
	int64_t v;
	if (abi_int(root, "abi", true, 0, 1, 1, &v, origin, err, errlen) < 0)
		goto out;
	json_t *name = json_object_get(root, "kernel_name");
	if (!json_is_string(name) || !json_string_length(name) ||
	    json_string_length(name) >= sizeof out->kernel_name) {
		kgb_err(err, errlen, "%s: field 'kernel_name': expected a non-empty string", origin);
		goto out;
	}
	kgb_strlcpy(out->kernel_name, json_string_value(name), sizeof out->kernel_name);
	json_t *args = json_object_get(root, "args");
	if (!json_is_array(args) || json_array_size(args) > KGB_CUDA_ABI_MAX_ARGS) {
		kgb_err(err, errlen, "%s: field 'args': expected an array of at most %d entries", origin,
		        KGB_CUDA_ABI_MAX_ARGS);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(args); i++) {
		json_t *a = json_array_get(args, i);
		json_t *an = json_object_get(a, "name"), *at = json_object_get(a, "type");
		if (!json_is_string(an) || !json_is_string(at)) {
			kgb_err(err, errlen, "%s: args[%zu]: expected {\"name\": string, \"type\": string}",
			        origin, i);
			goto out;
		}
		const char *ty = json_string_value(at);
		if (kgb_cuda_triton_type_size(ty) < 0 || strlen(ty) >= sizeof out->args[i].type) {
			kgb_err(err, errlen, "%s: args[%zu].type: unknown type '%s'", origin, i, ty);
			goto out;
		}
		kgb_strlcpy(out->args[i].name, json_string_value(an), sizeof out->args[i].name);
		kgb_strlcpy(out->args[i].type, ty, sizeof out->args[i].type);
	}
	out->nargs = (int)json_array_size(args);
	if (abi_int(root, "num_warps", true, 4, 1, 64, &v, origin, err, errlen) < 0)
		goto out;
	out->num_warps = (int)v;
	if (abi_int(root, "num_ctas", false, 1, 1, 16, &v, origin, err, errlen) < 0)
		goto out;
	out->num_ctas = (int)v;
	if (abi_int(root, "shared", true, 0, 0, 1 << 30, &v, origin, err, errlen) < 0)
		goto out;
	out->shared = (uint32_t)v;
	static const char *const sz[4] = { "global_scratch_size", "global_scratch_align",
		                               "profile_scratch_size", "profile_scratch_align" };
	int64_t s4[4];
	for (int i = 0; i < 4; i++)
		if (abi_int(root, sz[i], false, (i & 1) ? 1 : 0, 0, (int64_t)1 << 40, &s4[i], origin, err,
		            errlen) < 0)
			goto out;
	out->gscratch_size = (uint64_t)s4[0];
	out->gscratch_align = s4[1] ? (uint64_t)s4[1] : 1;
	out->pscratch_size = (uint64_t)s4[2];
	out->pscratch_align = s4[3] ? (uint64_t)s4[3] : 1;
	out->cluster[0] = (uint32_t)out->num_ctas;
	out->cluster[1] = out->cluster[2] = 1;
	json_t *cl = json_object_get(root, "cluster_dims");
	if (cl && !json_is_null(cl)) {
		if (!json_is_array(cl) || json_array_size(cl) != 3) {
			kgb_err(err, errlen, "%s: field 'cluster_dims': expected [x, y, z]", origin);
			goto out;
		}
		for (int i = 0; i < 3; i++) {
			json_t *e = json_array_get(cl, (size_t)i);
			if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 16) {
				kgb_err(err, errlen, "%s: cluster_dims[%d]: expected an integer 1..16", origin, i);
				goto out;
			}
			out->cluster[i] = (uint32_t)json_integer_value(e);
		}
	}
	json_t *coop = json_object_get(root, "cooperative");
	out->cooperative = json_is_true(coop);
	json_t *tv = json_object_get(root, "triton_version");
	if (json_is_string(tv))
		kgb_strlcpy(out->triton_version, json_string_value(tv), sizeof out->triton_version);
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* ---- compile ---- */


/* The text put in front of CUDA C candidates (docs/cuda-backend.md, "Prelude"). */
char *kgb_cuda_prelude(const char *const *names, const kgb_dtype_t *dtypes, size_t n,
                       const char *file)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	KGB_ASSERT(f != NULL);
	if (kgb_be_has_dtype(dtypes, n, KGB_DT_F16))
		fputs("#include <cuda_fp16.h>\n", f);
	if (kgb_be_has_dtype(dtypes, n, KGB_DT_BF16))
		fputs("#include <cuda_bf16.h>\n", f);
	fputs("#define KGB_CUDA 1\n", f);
	kgb_be_cxx_tensors(f, names, dtypes, n, NULL, file, "candidate.cu");
	fclose(f);
	return buf;
}


static char *find_cuda_include(void)
{
	const char *env = getenv("KGB_CUDA_INCLUDE");
	if (env && *env)
		return kgb_xstrdup(env);
	static const char *const cands[] = { "/usr/local/cuda/include",
		                                 "/usr/local/cuda/targets/x86_64-linux/include",
		                                 "/usr/include" };
	for (size_t i = 0; i < KGB_ARRAY_LEN(cands); i++) {
		char p[512];
		snprintf(p, sizeof p, "%s/cuda_fp16.h", cands[i]);
		if (access(p, R_OK) == 0)
			return kgb_xstrdup(cands[i]);
	}
	return NULL;
}

typedef struct nvrtc_job {
	const char *src;
	const char *name;
	int arch;
	const char *const *opts;
	int nopts;
} nvrtc_job_t;

/* In the sandboxed child: compile, leave kernel.cubin or compile.log. */
static int nvrtc_child(void *arg, const char *dir)
{
	nvrtc_job_t *j = arg;
	char *bin = NULL;
	size_t n = 0;
	char *log = kgb_xmalloc(65536);
	int rc = kgb_cuda_nvrtc_compile(j->src, j->name, j->arch, false, j->opts, j->nopts, &bin, &n,
	                                log, 65536);
	char path[700];
	snprintf(path, sizeof path, "%s/compile.log", dir);
	kgb_write_file_atomic(path, log, strlen(log));
	if (rc == KGB_BE_OK) {
		snprintf(path, sizeof path, "%s/kernel.cubin", dir);
		if (kgb_write_file_atomic(path, bin, n) != 0)
			rc = KGB_BE_ERR;
	}
	free(bin);
	free(log);
	return rc == KGB_BE_OK ? 0 : rc == KGB_BE_COMPILE ? 1 : 2;
}




/* Options a candidate may pass to NVRTC: a conservative allowlist (no file access). */
static bool nvrtc_opt_ok(const char *o)
{
	static const char *const ok[] = { "-use_fast_math", "--use_fast_math", "-lineinfo", "--fmad=true",
		                              "--fmad=false", "-ftz=true", "-ftz=false", "-prec-div=true",
		                              "-prec-div=false", "-prec-sqrt=true", "-prec-sqrt=false",
		                              "--extra-device-vectorization", "--kgb-arch-specific",
		                              "-restrict", "--restrict" };
	for (size_t i = 0; i < KGB_ARRAY_LEN(ok); i++)
		if (strcmp(o, ok[i]) == 0)
			return true;
	if (strncmp(o, "-D", 2) == 0 || strncmp(o, "--maxrregcount=", 15) == 0 ||
	    strncmp(o, "-maxrregcount=", 14) == 0 || strncmp(o, "--std=", 6) == 0 ||
	    strncmp(o, "-std=", 5) == 0)
		return !strpbrk(o, "/\\");
	return false;
}

static int load_module(cuda_ctx_t *c, const void *image, const char *entry, kgb_module_t *m,
                       char *log, size_t loglen)
{
	const kgb_cuda_api_t *cu = c->cu;
	char jit_err[8192] = "";
	/* CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 */
	int opts[2] = { 5, 6 };
	void *vals[2] = { jit_err, (void *)(uintptr_t)sizeof jit_err };
	CUresult r = cu->cuModuleLoadDataEx(&m->mod, image, 2, opts, vals);
	if (r != CUDA_SUCCESS) {
		int code = cu_fail(c, "cuModuleLoadDataEx", r);
		if (code != KGB_BE_FAULT && code != KGB_BE_NOMEM)
			code = KGB_BE_COMPILE;
		if (jit_err[0])
			kgb_be_copy_log(log, loglen, jit_err);
		else
			kgb_be_copy_log(log, loglen, c->base.err);
		set_err(c, code, "module load: %s%s%s", cu_errstr(cu, r), jit_err[0] ? ": " : "", jit_err);
		return code;
	}
	r = cu->cuModuleGetFunction(&m->fn, m->mod, entry);
	if (r != CUDA_SUCCESS) {
		set_err(c, KGB_BE_COMPILE, "entry '%s' not found in the module (%s)%s", entry,
		        cu_errstr(cu, r),
		        m->lang == KGB_LANG_CUDA ? "; declare the kernel extern \"C\" __global__" : "");
		kgb_be_copy_log(log, loglen, c->base.err);
		cu->cuModuleUnload(m->mod);
		m->mod = NULL;
		return KGB_BE_COMPILE;
	}
	cu->cuFuncGetAttribute(&m->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m->fn);
	cu->cuFuncGetAttribute(&m->static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, m->fn);
	cu->cuFuncGetAttribute(&m->num_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, m->fn);
	kgb_strlcpy(m->entry, entry, sizeof m->entry);
	return KGB_BE_OK;
}

static int compile_cuda_c(cuda_ctx_t *c, const kgb_compile_req_t *req, char **bin, size_t *binlen,
                          char *log, size_t loglen)
{
	char why[512];
	const kgb_nvrtc_api_t *rt = kgb_cuda_nvrtc(why, sizeof why);
	char **opts = NULL;
	int nopts = 0;
	char *text = NULL, *inc = NULL;
	int rc = KGB_BE_ERR;
	if (!rt) {
		kgb_be_copy_log(log, loglen, why);
		return set_err(c, KGB_BE_UNSUPPORTED, "CUDA C needs NVRTC: %s", why);
	}
	int vmaj = 0, vmin = 0;
	rt->nvrtcVersion(&vmaj, &vmin);
	/* the source may read no file but itself and the toolkit's headers (srcscan.h) */
	if (kgb_src_check(req->source, req->source_len, KGB_LANG_CUDA, req->name, why, sizeof why) != 0) {
		kgb_be_copy_log(log, loglen, why);
		return set_err(c, KGB_BE_COMPILE, "%s", why);
	}

	/* options: includes, defines, then the plan's own (allowlisted) */
	nopts = kgb_be_split_opts(req->options, &opts);
	for (int i = 0; i < nopts; i++)
		if (!nvrtc_opt_ok(opts[i])) {
			rc = set_err(c, KGB_BE_COMPILE, "%s: option '%s' not allowed for CUDA C candidates",
			             req->name ? req->name : "kernel", opts[i]);
			kgb_be_copy_log(log, loglen, c->base.err);
			goto out;
		}
	opts = kgb_xrealloc(opts, ((size_t)nopts + req->ndefines + 2) * sizeof *opts);
	for (size_t i = 0; i < req->ndefines; i++) {
		const char *v = req->define_values[i] ? req->define_values[i] : "";
		if (!kgb_be_is_ident(req->define_names[i])) {
			rc = set_err(c, KGB_BE_COMPILE, "define name '%s' is not an identifier",
			             req->define_names[i]);
			kgb_be_copy_log(log, loglen, c->base.err);
			goto out;
		}
		opts[nopts++] = kgb_xasprintf("-D%s=%s", req->define_names[i], v);
	}
	inc = find_cuda_include();
	if (inc)
		opts[nopts++] = kgb_xasprintf("-I%s", inc);

	text = kgb_be_prelude_join(kgb_cuda_prelude(req->tensor_names, req->tensor_dtypes, req->ntensors, req->name),
	                           req->source, req->source_len);

	char key[65];
	kgb_ckey_t k;
	kgb_be_ckey_begin(&k, "cuda", text, req->entry, (const char *const *)opts, nopts);
	kgb_ckey_add_int(&k, "target_sm", c->arch);
	kgb_ckey_add_int(&k, "nvrtc_major", vmaj);
	kgb_ckey_add_int(&k, "nvrtc_minor", vmin);
	kgb_ckey_final(&k, key);

	nvrtc_job_t job = { text, req->name ? req->name : "candidate.cu", c->arch,
		                (const char *const *)opts, nopts };
	kgb_sandbox_opts_t so = { .wall_ms = kgb_be_env_u32("KGB_CUDA_COMPILE_TIMEOUT_MS", 60000),
		                      .as_bytes = (uint64_t)kgb_be_env_u32("KGB_CUDA_COMPILE_AS_MB", 8192) << 20,
		                      .no_network = true };
	kgb_be_rtc_t rj = { .key = key, .artifact = "kernel.cubin", .tool = "NVRTC", .lang = "CUDA C", .so = &so,
		                .child = nvrtc_child, .arg = &job };
	rc = kgb_be_rtc_run(&c->base, &rj, bin, binlen, log, loglen);
out:
	kgb_be_free_opts(opts, nopts);
	free(text);
	free(inc);
	return rc;
}

/* Where the Triton helper lives: $KGB_TRITON_HELPER, next to the binary, in the
 * install's libexec, or in the source tree the binary was built from. */
static char *find_triton_helper(void)
{
	return kgb_find_near_exe("KGB_TRITON_HELPER", kgb_triton_helper_rel, KGB_TRITON_HELPER_NREL);
}

/* The environment of Triton children: nothing inherited but the paths Python needs. */
static char **triton_env(const char *python, const char *dir_hint)
{
	(void)dir_hint;
	char **env = kgb_xcalloc(8, sizeof *env);
	int n = 0;
	char pydir[PATH_MAX];
	kgb_strlcpy(pydir, python, sizeof pydir);
	char *s = strrchr(pydir, '/');
	if (s)
		*s = 0;
	env[n++] = kgb_xasprintf("PATH=%s:/usr/local/bin:/usr/bin:/bin", pydir);
	/* the executor's environment is cleaned too: KGB_TRITON_PYTHONPATH survives it */
	const char *pp = getenv("KGB_TRITON_PYTHONPATH");
	if (!pp || !*pp)
		pp = getenv("PYTHONPATH");
	if (pp && *pp)
		env[n++] = kgb_xasprintf("PYTHONPATH=%s", pp);
	env[n++] = kgb_xstrdup("LANG=C.UTF-8");
	env[n++] = kgb_xstrdup("PYTHONDONTWRITEBYTECODE=1");
	env[n++] = kgb_xstrdup("TRITON_DEFAULT_FP_FUSION=1");
	env[n++] = kgb_xstrdup("HOME=/nonexistent");
	env[n] = NULL;
	return env;
}

static void free_env(char **env)
{
	for (char **e = env; e && *e; e++)
		free(*e);
	free(env);
}

/* Triton's version and location through the interpreter (once per process): part of
 * every Triton cache key. */
static const char *triton_toolchain(const char *python, char *err, size_t errlen)
{
	static char version[512];
	static bool done;
	if (done)
		return version[0] ? version : NULL;
	done = true;
	char **env = triton_env(python, NULL);
	const char *argv[] = { python, "-c",
		                   "import importlib.metadata as m, importlib.util as u\n"
		                   "s = u.find_spec('triton')\n"
		                   "print(m.version('triton'), s.origin if s else '-')\n",
		                   NULL };
	kgb_sandbox_opts_t so = { .wall_ms = 30000, .env = (const char *const *)env };
	kgb_sandbox_result_t sr;
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, err, errlen) == 0) {
		if (sr.exit_code == 0 && sr.output_len > 0) {
			char *nl = strchr(sr.output, '\n');
			if (nl)
				*nl = 0;
			snprintf(version, sizeof version, "%s %s", sr.output, python);
		} else {
			kgb_err(err, errlen, "triton is not importable by %s: %.300s", python, sr.output);
		}
		kgb_sandbox_release(&sr);
	}
	free_env(env);
	return version[0] ? version : NULL;
}

typedef struct {
	const char *const *names;
	const kgb_dtype_t *dtypes;
	size_t n;
} sig_tensors_t;

static int sig_pointer(FILE *f, const char *item, size_t l, const char *nm, size_t nl, void *arg, char *err,
                       size_t errlen)
{
	const sig_tensors_t *t = arg;
	char name[64];
	size_t i;
	if (nl >= sizeof name)
		return kgb_err(err, errlen, "signature: tensor name in '%.*s' too long", (int)l, item);
	memcpy(name, nm, nl);
	name[nl] = 0;
	for (i = 0; i < t->n; i++)
		if (strcmp(t->names[i], name) == 0)
			break;
	if (i == t->n || !kgb_dtype_triton(t->dtypes[i]))
		return kgb_err(err, errlen, "signature: '*@%s': the case has no tensor '%s'", name, name);
	fprintf(f, "*%s", kgb_dtype_triton(t->dtypes[i]));
	return 0;
}

/* Resolve "*@name" in a Triton signature to a pointer to tensor name's element type
 * in this case, so one plan serves every dtype of an operator:
 * "*@self,*@out,i32" -> "*fp16,*fp16,i32". Heap string, or NULL with err. */
char *kgb_cuda_triton_signature(const char *sig, const char *const *names, const kgb_dtype_t *dtypes,
                                size_t n, char *err, size_t errlen)
{
	sig_tensors_t t = { names, dtypes, n };
	return kgb_triton_signature_map(sig, sig_pointer, &t, err, errlen);
}

/* A Triton kernel compiled beforehand: the binary and ABI Triton made for it in a Python
 * candidate's recording (docs/python-candidates.md, "On a GPU"). Used for this job
 * only, never put in the compile cache: it comes from the candidate's own process.
 * 1 when its run-time parameters are not the plan's signature, in order and type (the
 * launch passes the plan's arguments): the caller compiles the source instead. */
static int prebuilt_triton(cuda_ctx_t *c, const kgb_compile_req_t *req, char **bin, size_t *binlen,
                           kgb_cuda_abi_t *abi, char *log, size_t loglen)
{
	char e[512];
	if (kgb_cuda_abi_parse(req->prebuilt_abi, req->prebuilt_abi_len, "the recording's kernel.abi.json", abi, e,
	                       sizeof e) != 0) {
		set_err(c, KGB_BE_COMPILE, "%s: %s", req->name ? req->name : "kernel", e);
		kgb_be_copy_log(log, loglen, c->base.err);
		return KGB_BE_COMPILE;
	}
	/* the plan's signature as the helper would get it: "*@NAME" resolved, items trimmed */
	char *sig = req->signature ? kgb_cuda_triton_signature(req->signature, req->tensor_names, req->tensor_dtypes,
	                                                       req->ntensors, e, sizeof e)
	                           : NULL;
	if (!sig)
		return 1;
	char *save = NULL;
	bool same = true;
	int n = 0;
	for (char *t = strtok_r(sig, ",", &save); t && same; t = strtok_r(NULL, ",", &save), n++) {
		char *colon = strchr(t, ':'); /* "*fp32:16" */
		if (colon)
			*colon = 0;
		same = n < abi->nargs && strcmp(t, abi->args[n].type) == 0;
	}
	free(sig);
	if (!same || n != abi->nargs)
		return 1;
	*bin = kgb_xmalloc(req->prebuilt_len);
	memcpy(*bin, req->prebuilt, req->prebuilt_len);
	*binlen = req->prebuilt_len;
	return KGB_BE_OK;
}

static int compile_triton(cuda_ctx_t *c, const kgb_compile_req_t *req, char **bin, size_t *binlen,
                          kgb_cuda_abi_t *abi, char *log, size_t loglen)
{
	int rc = KGB_BE_ERR, lk = -1;
	char *python = NULL, *helper = NULL, *reqtext = NULL, *helper_src = NULL;
	char **env = NULL;
	json_t *r = NULL;
	kgb_sandbox_result_t sr = { 0 };
	char e[512];
	const char *py = getenv("KGB_TRITON_PYTHON");
	python = kgb_find_program(py && *py ? py : "python3");
	if (!python) {
		rc = set_err(c, KGB_BE_UNSUPPORTED, "Triton kernels need python3 with triton (not on PATH)");
		goto out;
	}
	helper = find_triton_helper();
	if (!helper) {
		rc = set_err(c, KGB_BE_UNSUPPORTED,
		             "the Triton helper triton_compile.py is not installed next to kgb-worker (beside it, "
		             "or ../libexec/kgb/; make install or scripts/bundle.sh put it there)");
		goto out;
	}
	const char *tool = triton_toolchain(python, e, sizeof e);
	if (!tool) {
		rc = set_err(c, KGB_BE_UNSUPPORTED, "%s", e);
		goto out;
	}
	if (!req->signature || !*req->signature) {
		rc = set_err(c, KGB_BE_COMPILE,
		             "%s: a Triton kernel needs a signature (\"*fp32,*fp32,i32\": the types of its "
		             "non-constexpr parameters)",
		             req->name ? req->name : "kernel");
		kgb_be_copy_log(log, loglen, c->base.err);
		goto out;
	}
	size_t hl = 0;
	helper_src = kgb_read_file(helper, &hl, e, sizeof e);
	if (!helper_src) {
		rc = set_err(c, KGB_BE_ERR, "%s", e);
		goto out;
	}

	r = json_object();
	json_object_set_new(r, "source", json_stringn(req->source, req->source_len));
	json_object_set_new(r, "entry", json_string(req->entry));
	char *sig = kgb_cuda_triton_signature(req->signature, req->tensor_names, req->tensor_dtypes,
	                                      req->ntensors, e, sizeof e);
	if (!sig) {
		rc = set_err(c, KGB_BE_COMPILE, "%s: %s", req->name ? req->name : "kernel", e);
		kgb_be_copy_log(log, loglen, c->base.err);
		goto out;
	}
	json_object_set_new(r, "signature", json_string(sig));
	free(sig);
	json_t *consts = json_object();
	for (size_t i = 0; i < req->ndefines; i++)
		json_object_set_new(consts, req->define_names[i], kgb_triton_constant_json(req->define_values[i]));
	int nw = 4, ns = 3, nc = 1;
	if (req->config) {
		for (size_t i = 0; i < req->config->nconstants; i++) {
			const char *v = req->config->constants[i].value;
			if (v && strchr(v, '{')) {
				rc = set_err(c, KGB_BE_COMPILE, "config constant %s: '%s' was not substituted",
				             req->config->constants[i].name, v);
				goto out;
			}
			json_object_set_new(consts, req->config->constants[i].name, kgb_triton_constant_json(v));
		}
		if (req->config->num_warps > 0)
			nw = req->config->num_warps;
		if (req->config->num_stages > 0)
			ns = req->config->num_stages;
		if (req->config->num_ctas > 0)
			nc = req->config->num_ctas;
	}
	json_object_set_new(r, "constants", consts);
	json_object_set_new(r, "num_warps", json_integer(nw));
	json_object_set_new(r, "num_stages", json_integer(ns));
	json_object_set_new(r, "num_ctas", json_integer(nc));
	json_t *tgt = json_object();
	json_object_set_new(tgt, "backend", json_string("cuda"));
	json_object_set_new(tgt, "arch", json_integer(c->arch));
	json_object_set_new(tgt, "warp_size", json_integer(32));
	json_object_set_new(r, "target", tgt);
	reqtext = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	KGB_ASSERT(reqtext != NULL);

	char key[65];
	kgb_ckey_t k;
	kgb_ckey_init(&k);
	kgb_ckey_add_str(&k, "lang", "triton");
	kgb_ckey_add_str(&k, "request", reqtext); /* source, constants, signature, target */
	kgb_ckey_add_str(&k, "toolchain", tool);
	kgb_ckey_add(&k, "helper", helper_src, hl);
	kgb_ckey_final(&k, key);

	size_t n = 0, an = 0;
again:;
	char *cbin = kgb_compile_cache_get(key, "kernel.cubin", &n);
	char *cabi = cbin ? kgb_compile_cache_get(key, "kernel.abi.json", &an) : NULL;
	if (cbin && cabi) {
		if (kgb_cuda_abi_parse(cabi, an, "kernel.abi.json (cached)", abi, e, sizeof e) == 0) {
			*bin = cbin;
			*binlen = n;
			free(cabi);
			rc = KGB_BE_OK;
			goto out;
		}
	}
	free(cbin);
	free(cabi);
	char *cerr = kgb_compile_cache_get(key, "error.log", &n);
	if (cerr) {
		kgb_be_copy_log(log, loglen, cerr);
		rc = set_err(c, KGB_BE_COMPILE, "Triton compile failed (cached): %.1500s", cerr);
		free(cerr);
		goto out;
	}
	/* a miss: compile holding the entry's lock, after looking once more */
	if (lk < 0 && (lk = kgb_compile_cache_lock(key)) >= 0)
		goto again;

	env = triton_env(python, NULL);
	const char *argv[] = { python, "-s", helper, ".", NULL };
	kgb_sandbox_opts_t so = { .wall_ms = kgb_be_env_u32("KGB_CUDA_COMPILE_TIMEOUT_MS", 120000),
		                      .as_bytes = (uint64_t)kgb_be_env_u32("KGB_CUDA_COMPILE_AS_MB", 16384) << 20,
		                      .nofile = 1024,
		                      .no_network = true,
		                      .env = (const char *const *)env,
		                      .stdin_data = reqtext,
		                      .stdin_len = strlen(reqtext) };
	if (kgb_sandbox_run(&so, argv, NULL, NULL, &sr, e, sizeof e) != 0) {
		rc = set_err(c, KGB_BE_ERR, "%s", e);
		goto out;
	}
	if (sr.timed_out) {
		rc = set_err(c, KGB_BE_COMPILE, "the Triton compile ran past its %u ms limit", so.wall_ms);
		kgb_be_copy_log(log, loglen, c->base.err);
	} else if (sr.exit_code == 0) {
		*bin = kgb_sandbox_read(&sr, "kernel.cubin", binlen);
		char *abitext = kgb_sandbox_read(&sr, "kernel.abi.json", &an);
		if (!*bin || !abitext) {
			rc = set_err(c, KGB_BE_ERR, "the Triton helper left no kernel.cubin / kernel.abi.json");
		} else if (kgb_cuda_abi_parse(abitext, an, "kernel.abi.json", abi, e, sizeof e) != 0) {
			rc = set_err(c, KGB_BE_ERR, "%s", e);
		} else {
			kgb_compile_cache_put(key, "kernel.cubin", *bin, *binlen);
			kgb_compile_cache_put(key, "kernel.abi.json", abitext, an);
			kgb_be_copy_log(log, loglen, sr.output);
			rc = KGB_BE_OK;
		}
		if (rc != KGB_BE_OK) {
			free(*bin);
			*bin = NULL;
		}
		free(abitext);
	} else if (sr.exit_code == 1 || sr.exit_code == 2) {
		/* 1: the kernel does not compile; 2: the request (signature, constants) is wrong.
		 * Both are the candidate's; both are deterministic. */
		kgb_be_copy_log(log, loglen, sr.output);
		kgb_compile_cache_put(key, "error.log", sr.output, sr.output_len);
		rc = set_err(c, KGB_BE_COMPILE, "%.1800s", sr.output);
	} else {
		rc = set_err(c, sr.signo ? KGB_BE_COMPILE : KGB_BE_ERR,
		             "the Triton helper ended with %s %d: %.1500s", sr.signo ? "signal" : "status",
		             sr.signo ? sr.signo : sr.exit_code, sr.output);
		kgb_be_copy_log(log, loglen, c->base.err);
	}
out:
	kgb_compile_cache_unlock(lk);
	kgb_sandbox_release(&sr);
	json_decref(r);
	free(reqtext);
	free(helper_src);
	free_env(env);
	free(python);
	free(helper);
	return rc;
}

/* Compile without a device (the compile cache is filled; nothing is loaded). For
 * compiling the next job ahead while the device runs the current one, and for tests. */
int kgb_cuda_precompile(int arch, const kgb_compile_req_t *req, char *log, size_t loglen, char *err,
                        size_t errlen)
{
	cuda_ctx_t *c = kgb_be_ctx_new(sizeof *c, &cuda_vendor);
	kgb_cuda_abi_t abi;
	char *bin = NULL;
	size_t binlen = 0;
	int rc;
	c->arch = arch;
	if (log && loglen)
		log[0] = 0;
	switch (req->lang) {
	case KGB_LANG_CUDA:
		rc = compile_cuda_c(c, req, &bin, &binlen, log, loglen);
		break;
	case KGB_LANG_TRITON:
		rc = compile_triton(c, req, &bin, &binlen, &abi, log, loglen);
		break;
	default:
		rc = KGB_BE_OK; /* ptx and cubin are loaded as given: nothing to do ahead */
		break;
	}
	if (rc != KGB_BE_OK)
		kgb_err(err, errlen, "%s", c->base.err);
	free(bin);
	free(c);
	return rc;
}

/* ---- module globals (docs/security.md, "Answers kept from an earlier launch") ----
 *
 * A kernel can keep answers in its module's global variables (`__device__` arrays)
 * from one launch to the next. Every global the image names (kgb_cuda_global_names) is
 * copied, as loaded, into a buffer of its own; each scrub (cuda_scrub, before every
 * timed sample) copies it back, so every sample starts from the module as it was
 * loaded, as a fresh load would, for a device-to-device copy of their size. Globals
 * the driver does not find by name (internal linkage) are not restored. */

#define CUDA_MAX_GLOBALS 64

static void drop_globals(cuda_ctx_t *c, kgb_module_t *m)
{
	for (size_t i = 0; i < c->nlive; i++)
		if (c->live[i] == m) {
			c->live[i] = c->live[--c->nlive];
			break;
		}
	for (size_t g = 0; g < m->nglobals && !c->base.hung; g++)
		c->cu->cuMemFree(m->globals[g].saved);
	free(m->globals);
	m->globals = NULL;
	m->nglobals = 0;
}

static int keep_globals(cuda_ctx_t *c, kgb_module_t *m, const void *image, size_t len)
{
	const kgb_cuda_api_t *cu = c->cu;
	char (*names)[KGB_CUDA_NAME_MAX] = kgb_xcalloc(CUDA_MAX_GLOBALS, sizeof *names);
	size_t n = kgb_cuda_global_names(image, len, names, CUDA_MAX_GLOBALS);
	int rc = KGB_BE_OK;
	for (size_t i = 0; i < n && rc == KGB_BE_OK; i++) {
		CUdeviceptr addr = 0, saved = 0;
		size_t bytes = 0;
		if (cu->cuModuleGetGlobal(&addr, &bytes, m->mod, names[i]) != CUDA_SUCCESS || bytes == 0)
			continue;
		CUresult r = cu->cuMemAlloc(&saved, bytes);
		if (r == CUDA_SUCCESS)
			r = cu->cuMemcpyDtoDAsync(saved, addr, bytes, c->stream);
		if (r != CUDA_SUCCESS) {
			if (saved)
				cu->cuMemFree(saved);
			rc = cu_fail(c, "copying a module global", r);
			break;
		}
		m->globals = kgb_xrealloc(m->globals, (m->nglobals + 1) * sizeof *m->globals);
		m->globals[m->nglobals].addr = addr;
		m->globals[m->nglobals].saved = saved;
		m->globals[m->nglobals++].bytes = bytes;
	}
	free(names);
	if (rc == KGB_BE_OK && m->nglobals) {
		c->live = kgb_xrealloc(c->live, (c->nlive + 1) * sizeof *c->live);
		c->live[c->nlive++] = m;
	}
	return rc;
}

static int cuda_compile(void *ctx, const kgb_compile_req_t *req, kgb_module_t **out, char *log,
                        size_t loglen)
{
	cuda_ctx_t *c = ctx;
	char *bin = NULL, *ptx = NULL;
	size_t binlen = 0;
	int rc = kgb_be_compile_begin(&c->base, out, log, loglen);
	if (rc)
		return rc;
	kgb_module_t *m = kgb_xcalloc(1, sizeof *m);
	m->lang = req->lang;
	const char *entry = req->entry;
	switch (req->lang) {
	case KGB_LANG_CUDA:
		rc = compile_cuda_c(c, req, &bin, &binlen, log, loglen);
		if (rc == KGB_BE_OK)
			rc = load_module(c, bin, entry, m, log, loglen);
		break;
	case KGB_LANG_PTX:
		/* the driver's JIT needs NUL-terminated text */
		ptx = kgb_xmalloc(req->source_len + 1);
		memcpy(ptx, req->source, req->source_len);
		ptx[req->source_len] = 0;
		rc = load_module(c, ptx, entry, m, log, loglen);
		break;
	case KGB_LANG_CUBIN:
		rc = load_module(c, req->source, entry, m, log, loglen);
		break;
	case KGB_LANG_TRITON:
		m->triton = true;
		rc = req->prebuilt ? prebuilt_triton(c, req, &bin, &binlen, &m->abi, log, loglen) : 1;
		if (rc == 1)
			rc = compile_triton(c, req, &bin, &binlen, &m->abi, log, loglen);
		if (rc == KGB_BE_OK)
			rc = load_module(c, bin, m->abi.kernel_name, m, log, loglen);
		if (rc == KGB_BE_OK) {
			int threads = 32 * m->abi.num_warps;
			if (m->max_threads > 0 && threads > m->max_threads)
				rc = set_err(c, KGB_BE_RESOURCE,
				             "num_warps=%d needs %d threads per block; the kernel allows %d (%d "
				             "registers per thread)",
				             m->abi.num_warps, threads, m->max_threads, m->num_regs);
		}
		break;
	default:
		rc = set_err(c, KGB_BE_UNSUPPORTED, "the cuda backend does not run %s kernels",
		             kgb_lang_name(req->lang));
		break;
	}
	if (rc == KGB_BE_OK) {
		const void *image = req->lang == KGB_LANG_PTX ? ptx : req->lang == KGB_LANG_CUBIN ? req->source : bin;
		size_t len = req->lang == KGB_LANG_PTX ? req->source_len : req->lang == KGB_LANG_CUBIN ? req->source_len
		                                                                                       : binlen;
		rc = keep_globals(c, m, image, len);
	}
	free(bin);
	free(ptx);
	if (rc != KGB_BE_OK) {
		drop_globals(c, m);
		if (m->mod && !c->base.dead)
			c->cu->cuModuleUnload(m->mod);
		free(m);
		return rc;
	}
	*out = m;
	return KGB_BE_OK;
}

static void cuda_module_free(void *ctx, kgb_module_t *m)
{
	cuda_ctx_t *c = ctx;
	if (!m)
		return;
	drop_globals(c, m);
	if (m->mod && !c->base.hung)
		c->cu->cuModuleUnload(m->mod);
	free(m);
}

/* ---- launch ---- */

static int ensure_scratch(cuda_ctx_t *c, CUdeviceptr *p, size_t *cap, uint64_t bytes, uint64_t align)
{
	uint64_t need = bytes + (align > 256 ? align : 0);
	if (*cap >= need)
		return KGB_BE_OK;
	if (*p)
		c->cu->cuMemFree(*p);
	*p = 0;
	*cap = 0;
	CU_CHECK(c, c->cu->cuMemAlloc(p, need));
	*cap = need;
	return KGB_BE_OK;
}

static CUdeviceptr aligned(CUdeviceptr p, uint64_t align)
{
	if (align <= 1)
		return p;
	return (p + align - 1) / align * align;
}

/* 1 when the stream has finished everything queued, 0 while it runs. */
static int cuda_query(kgb_be_ctx_t *base)
{
	cuda_ctx_t *c = cudac(base);
	CUresult r = c->cu->cuStreamQuery(c->stream);
	if (r == CUDA_SUCCESS)
		return 1;
	return r == CUDA_ERROR_NOT_READY ? 0 : cu_fail(c, "kernel execution", r);
}

static int cuda_launch(kgb_be_ctx_t *base, const kgb_launch_t *L, size_t li)
{
	cuda_ctx_t *c = cudac(base);
	const kgb_cuda_api_t *cu = c->cu;
	kgb_module_t *m = L->mod;
	unsigned block[3], grid[3];
	unsigned shared;
	void *params[KGB_CUDA_ABI_MAX_ARGS + 2];
	uint64_t store[KGB_CUDA_ABI_MAX_ARGS + 2];
	size_t np = 0;

	if (!m)
		return set_err(c, KGB_BE_ERR, "launch %zu: no module", li);
	for (int d = 0; d < 3; d++) {
		uint64_t g = L->grid[d] ? L->grid[d] : 1;
		if (L->grid[d] == 0 && d == 0)
			return KGB_BE_OK; /* an empty grid: nothing to run (empty tensors) */
		if (g > (d == 0 ? 0x7fffffffull : 65535ull))
			return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): grid[%d] = %llu exceeds the "
			               "device limit (%s)", li, m->entry, d, (unsigned long long)g,
			               d == 0 ? "2^31-1" : "65535");
		grid[d] = (unsigned)g;
	}
	if (L->nargs > KGB_CUDA_ABI_MAX_ARGS)
		return set_err(c, KGB_BE_ERR, "launch %zu: %zu arguments (at most %d)", li, L->nargs,
		               KGB_CUDA_ABI_MAX_ARGS);

	uint32_t cluster[3] = { L->cluster[0], L->cluster[1], L->cluster[2] };
	bool coop = false;
	if (m->triton) {
		const kgb_cuda_abi_t *a = &m->abi;
		if ((int)L->nargs != a->nargs)
			return set_err(c, KGB_BE_ERR, "launch %zu (%s): the Triton kernel takes %d arguments, "
			               "the plan passes %zu", li, m->entry, a->nargs, L->nargs);
		for (size_t i = 0; i < L->nargs; i++) {
			int sz = kgb_cuda_triton_type_size(a->args[i].type);
			const kgb_larg_t *A = &L->args[i];
			if (sz == 0 && A->kind != KGB_LARG_BUF)
				return set_err(c, KGB_BE_ERR, "launch %zu (%s): argument %zu (%s) is a pointer "
				               "(%s) but the plan passes a scalar", li, m->entry, i,
				               a->args[i].name, a->args[i].type);
			if (sz > 0 && (A->kind != KGB_LARG_SCALAR || (int)A->size != sz))
				return set_err(c, KGB_BE_ERR, "launch %zu (%s): argument %zu (%s) is %s (%d bytes) "
				               "but the plan passes %s of %zu bytes", li, m->entry, i,
				               a->args[i].name, a->args[i].type, sz,
				               A->kind == KGB_LARG_BUF ? "a buffer" : "a scalar", A->size);
		}
		block[0] = 32u * (unsigned)a->num_warps;
		block[1] = block[2] = 1;
		shared = a->shared;
		if (a->num_ctas > 1 || a->cluster[0] * a->cluster[1] * a->cluster[2] > 1) {
			for (int d = 0; d < 3; d++)
				cluster[d] = a->cluster[d];
		} else {
			cluster[0] = cluster[1] = cluster[2] = 0;
		}
		coop = a->cooperative;
	} else {
		for (int d = 0; d < 3; d++)
			block[d] = L->block[d] ? (unsigned)KGB_MIN(L->block[d], 1u << 20) : 1;
		shared = (unsigned)KGB_MIN(L->shared_bytes, (size_t)UINT_MAX);
	}
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	int lim = m->max_threads > 0 ? KGB_MIN(m->max_threads, c->max_threads) : c->max_threads;
	if (threads > (uint64_t)lim)
		return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): block of %llu threads exceeds the limit "
		               "of %d for this kernel (%d registers per thread)", li, m->entry,
		               (unsigned long long)threads, lim, m->num_regs);
	if ((uint64_t)shared + (uint64_t)m->static_shared > (uint64_t)c->max_shared_optin)
		return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): %u bytes of dynamic + %d of static "
		               "shared memory exceed the device's %d per block", li, m->entry, shared,
		               m->static_shared, c->max_shared_optin);
	if (shared > CUDA_DEFAULT_SHARED && m->dyn_shared_set < shared) {
		CUresult r = cu->cuFuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		                                    (int)shared);
		if (r != CUDA_SUCCESS) {
			cu_fail(c, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r);
			return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): %u bytes of dynamic shared memory "
			               "refused: %s", li, m->entry, shared, cu_errstr(cu, r));
		}
		m->dyn_shared_set = shared;
	}

	for (size_t i = 0; i < L->nargs; i++) {
		int rc = kgb_be_kernel_arg(&c->base, &L->args[i], li, i, "CUDA", &store[np]);
		if (rc)
			return rc;
		params[np] = &store[np];
		np++;
	}
	if (m->triton) {
		uint64_t nprog = (uint64_t)grid[0] * grid[1] * grid[2] * (uint64_t)m->abi.num_ctas;
		CUdeviceptr gs = 0, ps = 0;
		if (m->abi.gscratch_size) {
			int rc = ensure_scratch(c, &c->gscratch, &c->gscratch_cap, nprog * m->abi.gscratch_size,
			                        m->abi.gscratch_align);
			if (rc)
				return rc;
			gs = aligned(c->gscratch, m->abi.gscratch_align);
		}
		if (m->abi.pscratch_size) {
			int rc = ensure_scratch(c, &c->pscratch, &c->pscratch_cap, nprog * m->abi.pscratch_size,
			                        m->abi.pscratch_align);
			if (rc)
				return rc;
			ps = aligned(c->pscratch, m->abi.pscratch_align);
		}
		memcpy(&store[np], &gs, sizeof gs);
		params[np] = &store[np];
		np++;
		memcpy(&store[np], &ps, sizeof ps);
		params[np] = &store[np];
		np++;
	}

	CUresult r;
	bool ex = cluster[0] * (cluster[1] ? cluster[1] : 1) * (cluster[2] ? cluster[2] : 1) > 1 || coop;
	if (ex) {
		CUlaunchAttribute attrs[2];
		unsigned na = 0;
		memset(attrs, 0, sizeof attrs);
		unsigned cx = cluster[0] ? cluster[0] : 1, cy = cluster[1] ? cluster[1] : 1,
		         cz = cluster[2] ? cluster[2] : 1;
		if (cx * cy * cz > 1) {
			attrs[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
			attrs[na].value.cluster_dim.x = cx;
			attrs[na].value.cluster_dim.y = cy;
			attrs[na].value.cluster_dim.z = cz;
			na++;
		}
		if (coop) {
			attrs[na].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
			attrs[na].value.cooperative = 1;
			na++;
		}
		CUlaunchConfig cfg = { 0 };
		/* Triton's grid counts programs; each program is a cluster of num_ctas CTAs.
		 * A plan's own cluster launch gives the grid in blocks already. */
		unsigned mx = m->triton ? cx : 1, my = m->triton ? cy : 1, mz = m->triton ? cz : 1;
		cfg.grid_x = grid[0] * mx;
		cfg.grid_y = grid[1] * my;
		cfg.grid_z = grid[2] * mz;
		cfg.block_x = block[0];
		cfg.block_y = block[1];
		cfg.block_z = block[2];
		cfg.shared_bytes = shared;
		cfg.stream = c->stream;
		cfg.attrs = attrs;
		cfg.nattrs = na;
		r = cu->cuLaunchKernelEx(&cfg, m->fn, params, NULL);
	} else {
		r = cu->cuLaunchKernel(m->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
		                       c->stream, params, NULL);
	}
	if (r != CUDA_SUCCESS) {
		int code = cu_fail(c, ex ? "cuLaunchKernelEx" : "cuLaunchKernel", r);
		return set_err(c, code, "launch %zu (%s, grid %u,%u,%u block %u,%u,%u shared %u): %s", li,
		               m->entry, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
		               cu_errstr(cu, r));
	}
	return KGB_BE_OK;
}

/* ---- timing events (backend_common.h: the kgb_be_ev_* functions use them) ---- */

static int cuda_ev_create(kgb_be_ctx_t *base, void **ev)
{
	cuda_ctx_t *c = cudac(base);
	CUevent e = NULL;
	CUresult r = c->cu->cuEventCreate(&e, CU_EVENT_DEFAULT);
	*ev = e;
	return r == CUDA_SUCCESS ? KGB_BE_OK : cu_fail(c, "cuEventCreate", r);
}

static int cuda_ev_record(kgb_be_ctx_t *base, void *ev)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuEventRecord((CUevent)ev, c->stream));
	return KGB_BE_OK;
}

static int cuda_ev_ms(kgb_be_ctx_t *base, void *a, void *b, float *ms)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuEventElapsedTime(ms, (CUevent)a, (CUevent)b));
	return KGB_BE_OK;
}

static void cuda_ev_destroy(kgb_be_ctx_t *base, void *ev)
{
	cudac(base)->cu->cuEventDestroy((CUevent)ev);
}

/* ---- batches of timing samples (kgb_be_run_samples) ---- */

static int cuda_copy_async(kgb_be_ctx_t *base, uint64_t dst, uint64_t src, size_t n)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuMemcpyDtoDAsync(dst, src, n, c->stream));
	return KGB_BE_OK;
}

static int cuda_fill_async(kgb_be_ctx_t *base, uint64_t dst, uint8_t byte, size_t n)
{
	cuda_ctx_t *c = cudac(base);
	CU_CHECK(c, c->cu->cuMemsetD8Async(dst, byte, n, c->stream));
	return KGB_BE_OK;
}

static int cuda_flush_cache(void *ctx);

static int cuda_flush(kgb_be_ctx_t *base)
{
	return cuda_flush_cache(cudac(base));
}

/* Write a buffer of twice the L2 size (allocated once) so no line of the kernel's data
 * stays cached, and drop persisting lines. Ordered before the next launch on the
 * executor's stream; nothing waits here. */
static int cuda_flush_cache(void *ctx)
{
	cuda_ctx_t *c = ctx;
	const kgb_cuda_api_t *cu = c->cu;
	int rc = kgb_be_usable(&c->base);
	if (rc)
		return rc;
	if (!c->flush_buf) {
		size_t want = 2 * (c->l2_bytes ? c->l2_bytes : (size_t)64 << 20);
		uint32_t mb = kgb_be_env_u32("KGB_CUDA_FLUSH_MB", 0); /* a larger flush, for experiments */
		if (mb && ((size_t)mb << 20) > want)
			want = (size_t)mb << 20;
		if (want < ((size_t)8 << 20))
			want = (size_t)8 << 20;
		CU_CHECK(c, cu->cuMemAlloc(&c->flush_buf, want));
		c->flush_bytes = want;
	}
	c->flush_val++;
	CU_CHECK(c, cu->cuMemsetD8Async(c->flush_buf, c->flush_val, c->flush_bytes, c->stream));
	CUresult r = cu->cuCtxResetPersistingL2Cache();
	if (r != CUDA_SUCCESS && kgb_cuda_classify(r) == KGB_BE_FAULT)
		return cu_fail(c, "cuCtxResetPersistingL2Cache", r);
	return KGB_BE_OK;
}

static int cuda_clocks(void *ctx, kgb_clock_info_t *out)
{
	cuda_ctx_t *c = ctx;
	memset(out, 0, sizeof *out);
	if (!c->nvml)
		return set_err(c, KGB_BE_UNSUPPORTED, "NVML not available");
	unsigned mhz = 0, t = 0;
	unsigned long long reasons = 0;
	if (c->nvml->nvmlDeviceGetClockInfo(c->nvdev, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS)
		return set_err(c, KGB_BE_ERR, "nvmlDeviceGetClockInfo failed");
	c->nvml->nvmlDeviceGetTemperature(c->nvdev, NVML_TEMPERATURE_GPU, &t);
	c->nvml->nvmlDeviceGetCurrentClocksThrottleReasons(c->nvdev, &reasons);
	out->sm_clock_mhz = mhz;
	out->temperature_c = t;
	out->throttled = (reasons & KGB_NVML_THROTTLE_MASK) != 0;
	return KGB_BE_OK;
}

/* out[i] = i * 2654435761 + 12345 (mod 2^32) for i < n */
static const char health_ptx[] =
	".version 6.0\n"
	".target sm_50\n"
	".address_size 64\n"
	".visible .entry kgb_health(.param .u64 out, .param .u32 n)\n"
	"{\n"
	"  .reg .pred %p<2>;\n"
	"  .reg .b32 %r<8>;\n"
	"  .reg .b64 %rd<5>;\n"
	"  ld.param.u64 %rd1, [out];\n"
	"  ld.param.u32 %r1, [n];\n"
	"  mov.u32 %r2, %ctaid.x;\n"
	"  mov.u32 %r3, %ntid.x;\n"
	"  mov.u32 %r4, %tid.x;\n"
	"  mad.lo.u32 %r5, %r2, %r3, %r4;\n"
	"  setp.ge.u32 %p1, %r5, %r1;\n"
	"  @%p1 bra DONE;\n"
	"  mul.lo.u32 %r6, %r5, 0x9E3779B1;\n"
	"  add.u32 %r6, %r6, 12345;\n"
	"  cvta.to.global.u64 %rd2, %rd1;\n"
	"  mul.wide.u32 %rd3, %r5, 4;\n"
	"  add.u64 %rd4, %rd2, %rd3;\n"
	"  st.global.u32 [%rd4], %r6;\n"
	"DONE:\n"
	"  ret;\n"
	"}\n";

static int cuda_health(void *ctx)
{
	kgb_compile_req_t req = { .lang = KGB_LANG_PTX, .entry = "kgb_health", .source = health_ptx,
		                      .source_len = sizeof health_ptx - 1, .name = "health.ptx" };
	return kgb_be_health(&kgb_backend_cuda, ctx, &req);
}

/* ---- scrub_local: shared memory and module globals ----
 *
 * Shared memory keeps what a block left there for the next block of the SM, of any
 * kernel: a kernel could find its own earlier answers there. Before every timed sample
 * (outside its events) the module globals are put back (keep_globals) and
 * kgb_scrub_shared writes the largest dynamic shared memory a block may have, two
 * blocks per SM with 100% of the unified L1 given to shared memory, so that every SM
 * the block scheduler places one on is overwritten (on a device shared with other
 * processes an SM busy with their work may get none). Queued on the executor's
 * stream, not waited for. */
static int cuda_scrub(kgb_be_ctx_t *base)
{
	cuda_ctx_t *c = cudac(base);
	const kgb_cuda_api_t *cu = c->cu;
	for (size_t i = 0; i < c->nlive; i++)
		for (size_t g = 0; g < c->live[i]->nglobals; g++)
			CU_CHECK(c, cu->cuMemcpyDtoDAsync(c->live[i]->globals[g].addr, c->live[i]->globals[g].saved,
			                                  c->live[i]->globals[g].bytes, c->stream));
	if (!c->scrub_fn) {
		CUresult r = cu->cuModuleLoadDataEx(&c->scrub_mod, kgb_cuda_scrub_ptx(), 0, NULL, NULL);
		if (r == CUDA_SUCCESS)
			r = cu->cuModuleGetFunction(&c->scrub_fn, c->scrub_mod, "kgb_scrub_shared");
		if (r != CUDA_SUCCESS)
			return cu_fail(c, "shared memory scrub: loading kgb_scrub_shared", r);
		unsigned bytes = (unsigned)KGB_MAX(c->max_shared_optin, (int)CUDA_DEFAULT_SHARED) & ~63u;
		cu->cuFuncSetAttribute(c->scrub_fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100);
		/* the opt-in above 48 KiB; a device that refuses it gets the default size */
		if (cu->cuFuncSetAttribute(c->scrub_fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes) !=
		    CUDA_SUCCESS)
			bytes = CUDA_DEFAULT_SHARED;
		c->scrub_bytes = bytes;
	}
	unsigned words = c->scrub_bytes / 4, salt = ++c->scrub_iter * 0x9E3779B9u;
	void *params[2] = { &words, &salt };
	unsigned blocks = 2u * (unsigned)KGB_MAX(c->sm_count, 1);
	CU_CHECK(c, cu->cuLaunchKernel(c->scrub_fn, blocks, 1, 1, 1024, 1, 1, c->scrub_bytes, c->stream, params, NULL));
	return KGB_BE_OK;
}

/* ---- the timing gate ----
 *
 * Before a timed sample's first event the stream runs kgb_gate, one thread that spins
 * until the host writes the gate's token into mapped host memory (cuda_release, once
 * the sample's launches and its last event are queued) or KGB_CUDA_GATE_MS (20 ms)
 * pass. Without it, a device that has caught up with the host runs the first event as
 * soon as it is queued, and the sample's time then holds the host's time to queue the
 * launches: a library call's own set-up (several microseconds for a cuBLAS routine), or
 * a host slowed by the other slots' work. With it the events see the device's time
 * only. The device waits for the host once per sample, while the sample's restore and
 * flush (queued before the gate) run. A gate that times out (the host stalled longer)
 * lets the sample run as before and marks it (gate_missed): the executor drops it. */
static int cuda_gate(kgb_be_ctx_t *base, size_t k)
{
	cuda_ctx_t *c = cudac(base);
	const kgb_cuda_api_t *cu = c->cu;
	if (c->gate_timeout_ns == 0)
		return KGB_BE_OK;
	if (!c->gate_fn) {
		void *host = NULL;
		CUresult r = cu->cuModuleLoadDataEx(&c->gate_mod, kgb_cuda_gate_ptx(), 0, NULL, NULL);
		if (r == CUDA_SUCCESS)
			r = cu->cuModuleGetFunction(&c->gate_fn, c->gate_mod, "kgb_gate");
		if (r != CUDA_SUCCESS)
			return cu_fail(c, "timing gate: loading kgb_gate", r);
		size_t bytes = (2 + KGB_BE_MAX_BATCH + 1) * sizeof(uint32_t);
		CU_CHECK(c, cu->cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP));
		memset(host, 0, bytes);
		c->gate_word = host;
		CU_CHECK(c, cu->cuMemHostGetDevicePointer(&c->gate_dev, host, 0));
	}
	c->gate_word[2 + k] = 0;
	uint32_t token = ++c->gate_token;
	unsigned kk = (unsigned)k;
	void *params[4] = { &c->gate_dev, &token, &c->gate_timeout_ns, &kk };
	CU_CHECK(c, cu->cuLaunchKernel(c->gate_fn, 1, 1, 1, 1, 1, 1, 0, c->stream, params, NULL));
	return KGB_BE_OK;
}

static void cuda_release(kgb_be_ctx_t *base)
{
	cuda_ctx_t *c = cudac(base);
	if (c->gate_word)
		__atomic_store_n(&c->gate_word[0], c->gate_token, __ATOMIC_SEQ_CST);
}

static bool cuda_gate_missed(kgb_be_ctx_t *base, size_t k)
{
	cuda_ctx_t *c = cudac(base);
	return c->gate_word && c->gate_word[2 + k] != 0;
}

static const kgb_be_vendor_t cuda_vendor = {
	.lost = "the CUDA context was lost by an earlier fault",
	.alloc_call = "cuMemAlloc",
	.mem_alloc = cuda_mem_alloc,
	.mem_free = cuda_mem_free,
	.copy_in = cuda_copy_in,
	.copy_out = cuda_copy_out,
	.fill = cuda_memset,
	.run_begin = kgb_be_ev_run_begin,
	.launch = cuda_launch,
	.run_end = kgb_be_ev_run_end,
	.elapsed = kgb_be_ev_elapsed,
	.query = cuda_query,
	.copy_async = cuda_copy_async,
	.fill_async = cuda_fill_async,
	.flush = cuda_flush,
	.mark = kgb_be_ev_mark,
	.between = kgb_be_ev_between,
	.scrub = cuda_scrub,
	.gate = cuda_gate,
	.release = cuda_release,
	.gate_missed = cuda_gate_missed,
	.ev_create = cuda_ev_create,
	.ev_record = cuda_ev_record,
	.ev_ms = cuda_ev_ms,
	.ev_destroy = cuda_ev_destroy,
};

/* Device facts for the executor and the autotuner (not part of backend.h). */
int kgb_cuda_ctx_arch(void *ctx)
{
	return ((cuda_ctx_t *)ctx)->arch;
}

/* The executor's stream, for library handles (docs/native.md). */
static void *cuda_stream(void *ctx)
{
	return ((cuda_ctx_t *)ctx)->stream;
}

const kgb_backend_t kgb_backend_cuda = {
	.name = "cuda",
	.langs = (1u << KGB_LANG_CUDA) | (1u << KGB_LANG_TRITON) | (1u << KGB_LANG_PTX) |
	         (1u << KGB_LANG_CUBIN),
	.probe = cuda_probe,
	.open = cuda_open,
	.prepare = cuda_prepare,
	.close = cuda_close,
	KGB_BE_SHARED_ENTRIES,
	.compile = cuda_compile,
	.module_free = cuda_module_free,
	.flush_cache = cuda_flush_cache,
	.scrub_local = kgb_be_scrub_local,
	.clocks = cuda_clocks,
	.health = cuda_health,
	.visible_env = "CUDA_VISIBLE_DEVICES",
	.order_env = "CUDA_DEVICE_ORDER=PCI_BUS_ID",
	.blas = "cublas",
	.stream = cuda_stream,
};
