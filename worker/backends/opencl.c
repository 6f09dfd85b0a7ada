/* The OpenCL backend (PoCL on CPUs, and any chip with an OpenCL driver).
 *
 * libOpenCL is loaded with dlopen at first use; every entry point we call is named once
 * in CL_FUNCS, which produces both the table of function pointers and the dlsym loop.
 * A missing library or symbol means zero devices, with the reason, never an error.
 *
 * One context per executor child: a context, a device, one in-order profiling queue.
 * Buffers are plain cl_mem objects; views (for guard bands) are sub-buffers. A hung
 * kernel cannot be stopped through OpenCL: run() gives up after its timeout and the
 * worker kills the executor process. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include <CL/cl.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

#include "backend.h"
#define KGB_BE_OWN_DBUF 1 /* buffers are cl_mem objects, views sub-buffers */
#include "backend_common.h"
#include "probe_fork.h"
#include "prelude.h"
#include "srcscan.h"
#include "guardpage.h"
#include "util.h"
#include "log.h"

#define CL_FUNCS(X)                                                             \
	X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) \
	X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue)              \
	X(clReleaseCommandQueue) X(clCreateBuffer) X(clCreateSubBuffer)             \
	X(clReleaseMemObject) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer)        \
	X(clEnqueueFillBuffer) X(clCreateProgramWithSource) X(clBuildProgram)       \
	X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel)              \
	X(clReleaseKernel) X(clSetKernelArg) X(clEnqueueNDRangeKernel)              \
	X(clWaitForEvents) X(clGetEventInfo) X(clGetEventProfilingInfo)             \
	X(clReleaseEvent) X(clFlush) X(clFinish)

static struct {
	bool tried, ok;
	void *lib;
	char why[256];
#define X(f) __typeof__(f) *f;
	CL_FUNCS(X)
#undef X
} cl;

#define MAX_CL_DEVICES 64

typedef struct clctx {
	kgb_be_ctx_t base;           /* first: the shared state (backend_common.h) */
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	size_t align_bytes;          /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes */
	uint64_t cache_bytes;
	uint64_t mem_bytes;
	cl_mem flush;                /* buffer written between timing samples */
	size_t flush_bytes;
	uint32_t flush_iter;
	bool guard_pages;            /* buffers in host memory between inaccessible pages */
	cl_program scrub_prog;       /* scrub_local: a kernel writing all local memory */
	cl_kernel scrub;
	size_t scrub_bytes;          /* local memory it writes per work-group */
	size_t scrub_groups;
	uint32_t scrub_iter;
} clctx_t;

struct kgb_dbuf {
	cl_mem mem;
	size_t bytes;
	void *host;                  /* guard-page mapping (guardpage.h) or NULL */
};

struct kgb_module {
	cl_program prog;
	cl_kernel kern;
};

static const char *cl_err_name(cl_int e)
{
	switch (e) {
#define E(c) case c: return #c;
	E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
	E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
	E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_BUILD_PROGRAM_FAILURE)
	E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
	E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE)
	E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE)
	E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BUILD_OPTIONS)
	E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
	E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
	E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
	E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
	E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
	E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE)
	E(CL_INVALID_PROPERTY) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
	E(CL_LINK_PROGRAM_FAILURE)
#undef E
	default: return "CL_UNKNOWN_ERROR";
	}
}

#define set_err(c, ...) kgb_be_set_err(&(c)->base, __VA_ARGS__)

/* OpenCL keeps its own buffer and run entry points; the shared state gives it the last
 * error and the health check. */
static const kgb_be_vendor_t ocl_vendor = {
	.lost = "the OpenCL context was lost by an earlier fault",
};

/* Load libOpenCL once per process. Returns true if every entry point resolved. */
static bool cl_load(void)
{
	if (cl.tried)
		return cl.ok;
	cl.tried = true;
	const char *env = getenv("KGB_OPENCL_LIBRARY");
	const char *paths[] = { env, "libOpenCL.so.1", "libOpenCL.so" };
	char tried[200] = "";
	for (size_t i = 0; i < KGB_ARRAY_LEN(paths) && !cl.lib; i++) {
		if (!paths[i] || !*paths[i])
			continue;
		cl.lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!cl.lib) {
			size_t l = strlen(tried);
			snprintf(tried + l, sizeof tried - l, "%s%s", l ? ", " : "", paths[i]);
		}
	}
	if (!cl.lib) {
		snprintf(cl.why, sizeof cl.why, "no OpenCL library (tried %s): %s", tried, dlerror());
		return false;
	}
#define X(f)                                                                    \
	cl.f = (__typeof__(f) *)dlsym(cl.lib, #f);                                  \
	if (!cl.f) {                                                                \
		snprintf(cl.why, sizeof cl.why, "OpenCL library lacks %s", #f);        \
		return false;                                                           \
	}
	CL_FUNCS(X)
#undef X
	cl.ok = true;
	return true;
}

/* Every device of every platform, in platform order: this order defines the index. */
static int cl_devices(cl_device_id *out, int max, char *why, size_t whylen)
{
	cl_platform_id plats[16];
	cl_uint nplat = 0;
	cl_int e = cl.clGetPlatformIDs(KGB_ARRAY_LEN(plats), plats, &nplat);
	if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && nplat == 0)) {
		snprintf(why, whylen, "no OpenCL platform installed (ICD loader found no driver)");
		return 0;
	}
	if (e != CL_SUCCESS) {
		snprintf(why, whylen, "clGetPlatformIDs: %s (%d)", cl_err_name(e), e);
		return 0;
	}
	int n = 0;
	for (cl_uint p = 0; p < nplat && p < KGB_ARRAY_LEN(plats) && n < max; p++) {
		cl_uint nd = 0;
		e = cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, (cl_uint)(max - n), out + n, &nd);
		if (e == CL_SUCCESS)
			n += (int)KGB_MIN(nd, (cl_uint)(max - n));
	}
	if (n == 0)
		snprintf(why, whylen, "%u OpenCL platform(s) but no device", nplat);
	return n;
}

static void dev_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
	buf[0] = 0;
	if (cl.clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS)
		buf[0] = 0;
	buf[len - 1] = 0;
}

static uint64_t dev_u64(cl_device_id d, cl_device_info what)
{
	cl_ulong v = 0;
	cl.clGetDeviceInfo(d, what, sizeof v, &v, NULL);
	return v;
}

static uint32_t dev_u32(cl_device_id d, cl_device_info what)
{
	cl_uint v = 0;
	cl.clGetDeviceInfo(d, what, sizeof v, &v, NULL);
	return v;
}

static int probe_child(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = 0;
	if (!cl_load()) {
		snprintf(why, whylen, "%s", cl.why);
		return 0;
	}
	cl_device_id devs[MAX_CL_DEVICES];
	int n = cl_devices(devs, KGB_MIN(max, MAX_CL_DEVICES), why, whylen);
	for (int i = 0; i < n; i++) {
		kgb_device_info_t *d = &out[i];
		memset(d, 0, sizeof *d);
		snprintf(d->backend, sizeof d->backend, "opencl");
		dev_str(devs[i], CL_DEVICE_NAME, d->name, sizeof d->name);
		dev_str(devs[i], CL_DRIVER_VERSION, d->driver_version, sizeof d->driver_version);
		/* PoCL names its target in the device version ("... HSTR: pthread-x86_64-..."). */
		char ver[256];
		dev_str(devs[i], CL_DEVICE_VERSION, ver, sizeof ver);
		const char *h = strstr(ver, "HSTR: ");
		snprintf(d->arch, sizeof d->arch, "%.*s", (int)sizeof d->arch - 1, h ? h + 6 : ver);
		d->memory_bytes = dev_u64(devs[i], CL_DEVICE_GLOBAL_MEM_SIZE);
		d->l2_bytes = dev_u64(devs[i], CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
		d->compute_units = dev_u32(devs[i], CL_DEVICE_MAX_COMPUTE_UNITS);
		d->index = (uint32_t)i;
		d->caps = KGB_CAP_L2_FLUSH;
		if (dev_u64(devs[i], CL_DEVICE_DOUBLE_FP_CONFIG) != 0)
			d->caps |= KGB_CAP_FP64;
		char ext[4096];
		dev_str(devs[i], CL_DEVICE_EXTENSIONS, ext, sizeof ext);
		if (strstr(ext, "cl_khr_fp16"))
			d->caps |= KGB_CAP_FP16;
	}
	return n;
}

/* Devices are listed in a forked child, as for HIP and Level Zero: the OpenCL
 * platform (PoCL's pthread driver and its threads, a GPU vendor's runtime) is never
 * initialised in the worker daemon itself, only in the executors. */
static int ocl_probe(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = 0;
	if (!cl_load()) { /* a missing loader is said without forking */
		snprintf(why, whylen, "%s", cl.why);
		return 0;
	}
	return kgb_probe_forked("opencl", probe_child, out, max, why, whylen);
}

static int ocl_open(uint32_t index, void **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!cl_load())
		return kgb_err(err, errlen, "%s", cl.why), KGB_BE_ERR;
	cl_device_id devs[MAX_CL_DEVICES];
	char why[256] = "";
	int n = cl_devices(devs, MAX_CL_DEVICES, why, sizeof why);
	if ((int)index >= n)
		return kgb_err(err, errlen, "opencl device %u not found (%d device(s)%s%s)", index, n,
		               why[0] ? ": " : "", why), KGB_BE_ERR;
	clctx_t *c = kgb_be_ctx_new(sizeof *c, &ocl_vendor);
	c->dev = devs[index];
	cl_int e;
	c->ctx = cl.clCreateContext(NULL, 1, &c->dev, NULL, NULL, &e);
	if (!c->ctx) {
		kgb_err(err, errlen, "clCreateContext: %s (%d)", cl_err_name(e), e);
		free(c);
		return KGB_BE_ERR;
	}
	c->q = cl.clCreateCommandQueue(c->ctx, c->dev, CL_QUEUE_PROFILING_ENABLE, &e);
	if (!c->q) {
		kgb_err(err, errlen, "clCreateCommandQueue: %s (%d)", cl_err_name(e), e);
		cl.clReleaseContext(c->ctx);
		free(c);
		return KGB_BE_ERR;
	}
	c->align_bytes = dev_u32(c->dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
	if (c->align_bytes == 0)
		c->align_bytes = 128;
	c->cache_bytes = dev_u64(c->dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
	c->mem_bytes = dev_u64(c->dev, CL_DEVICE_GLOBAL_MEM_SIZE);
	/* a CPU device runs kernels on host memory: give every buffer inaccessible pages
	 * on both sides (docs/security.md); KGB_GUARD_PAGES=off turns it off */
	cl_device_type dt = 0;
	const char *gp = getenv("KGB_GUARD_PAGES");
	c->guard_pages = cl.clGetDeviceInfo(c->dev, CL_DEVICE_TYPE, sizeof dt, &dt, NULL) == CL_SUCCESS &&
	                 (dt & CL_DEVICE_TYPE_CPU) && !(gp && strcmp(gp, "off") == 0);
	*out = c;
	return KGB_BE_OK;
}

static void ocl_close(void *ctx)
{
	clctx_t *c = ctx;
	if (!c)
		return;
	if (c->flush)
		cl.clReleaseMemObject(c->flush);
	if (c->scrub)
		cl.clReleaseKernel(c->scrub);
	if (c->scrub_prog)
		cl.clReleaseProgram(c->scrub_prog);
	cl.clReleaseCommandQueue(c->q);
	cl.clReleaseContext(c->ctx);
	free(c);
}


static int mem_code(cl_int e)
{
	if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY ||
	    e == CL_INVALID_BUFFER_SIZE || e == CL_OUT_OF_RESOURCES)
		return KGB_BE_NOMEM;
	return KGB_BE_ERR;
}

static int ocl_alloc(void *ctx, size_t bytes, kgb_dbuf_t **out)
{
	clctx_t *c = ctx;
	cl_int e;
	*out = NULL;
	void *host = NULL;
	if (c->guard_pages && !(host = kgb_guard_map(bytes ? bytes : 1, KGB_MAX(c->align_bytes, (size_t)64))))
		return set_err(c, KGB_BE_NOMEM, "guard-page mapping of %zu bytes: %s", bytes, strerror(errno));
	cl_mem m = cl.clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_USE_HOST_PTR : 0), bytes ? bytes : 1,
	                             host, &e);
	if (!m) {
		kgb_guard_unmap(host, bytes ? bytes : 1, KGB_MAX(c->align_bytes, (size_t)64));
		return set_err(c, mem_code(e), "clCreateBuffer(%zu bytes): %s (%d)", bytes, cl_err_name(e), e);
	}
	kgb_dbuf_t *b = kgb_xcalloc(1, sizeof *b);
	b->mem = m;
	b->bytes = bytes;
	b->host = host;
	*out = b;
	return KGB_BE_OK;
}

static void ocl_free(void *ctx, kgb_dbuf_t *b)
{
	clctx_t *c = ctx;
	if (!b)
		return;
	cl.clReleaseMemObject(b->mem);
	if (b->host) {
		cl.clFinish(c->q);  /* nothing may still use the memory when it is unmapped */
		kgb_guard_unmap(b->host, b->bytes ? b->bytes : 1, KGB_MAX(c->align_bytes, (size_t)64));
	}
	free(b);
}

static int ocl_view(void *ctx, kgb_dbuf_t *parent, size_t offset, size_t bytes, kgb_dbuf_t **out)
{
	clctx_t *c = ctx;
	*out = NULL;
	if (offset % c->align_bytes != 0)
		return set_err(c, KGB_BE_ERR, "sub-buffer offset %zu is not a multiple of the device's "
		               "base address alignment (%zu bytes)", offset, c->align_bytes);
	if (bytes == 0 || offset + bytes > parent->bytes)
		return set_err(c, KGB_BE_ERR, "sub-buffer [%zu, +%zu) outside its %zu-byte parent",
		               offset, bytes, parent->bytes);
	cl_buffer_region r = { .origin = offset, .size = bytes };
	cl_int e;
	cl_mem m = cl.clCreateSubBuffer(parent->mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
	if (!m)
		return set_err(c, mem_code(e), "clCreateSubBuffer: %s (%d)", cl_err_name(e), e);
	kgb_dbuf_t *b = kgb_xcalloc(1, sizeof *b);
	b->mem = m;
	b->bytes = bytes;
	*out = b;
	return KGB_BE_OK;
}

/* A blocking copy of n bytes between host and b at off, either way. */
static int ocl_copy(clctx_t *c, kgb_dbuf_t *b, size_t off, void *host, size_t n, bool to_device)
{
	if (n == 0)
		return KGB_BE_OK;
	cl_int e = to_device ? cl.clEnqueueWriteBuffer(c->q, b->mem, CL_TRUE, off, n, host, 0, NULL, NULL)
	                     : cl.clEnqueueReadBuffer(c->q, b->mem, CL_TRUE, off, n, host, 0, NULL, NULL);
	if (e != CL_SUCCESS)
		return set_err(c, KGB_BE_ERR, "%s: %s (%d)", to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer",
		               cl_err_name(e), e);
	return KGB_BE_OK;
}

static int ocl_write(void *ctx, kgb_dbuf_t *b, size_t off, const void *src, size_t n)
{
	return ocl_copy(ctx, b, off, (void *)src, n, true);
}

static int ocl_read(void *ctx, kgb_dbuf_t *b, size_t off, void *dst, size_t n)
{
	return ocl_copy(ctx, b, off, dst, n, false);
}

static int ocl_fill(void *ctx, kgb_dbuf_t *b, size_t off, uint8_t byte, size_t n)
{
	clctx_t *c = ctx;
	if (n == 0)
		return KGB_BE_OK;
	cl_int e = cl.clEnqueueFillBuffer(c->q, b->mem, &byte, 1, off, n, 0, NULL, NULL);
	if (e == CL_SUCCESS)
		e = cl.clFinish(c->q);
	if (e != CL_SUCCESS)
		return set_err(c, KGB_BE_ERR, "clEnqueueFillBuffer: %s (%d)", cl_err_name(e), e);
	return KGB_BE_OK;
}


static void copy_log(char *log, size_t loglen, const char *text)
{
	if (!log || !loglen)
		return;
	size_t n = strlen(text);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	if (n >= loglen) {
		static const char more[] = "\n[build log truncated]";
		size_t keep = loglen > sizeof more ? loglen - sizeof more : 0;
		memcpy(log, text, keep);
		snprintf(log + keep, loglen - keep, "%s", more);
	} else {
		memcpy(log, text, n);
		log[n] = 0;
	}
}

static void build_log(clctx_t *c, cl_program prog, char *log, size_t loglen)
{
	size_t n = 0;
	if (cl.clGetProgramBuildInfo(prog, c->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0) {
		copy_log(log, loglen, "");
		return;
	}
	char *s = kgb_xmalloc(n + 1);
	if (cl.clGetProgramBuildInfo(prog, c->dev, CL_PROGRAM_BUILD_LOG, n, s, NULL) != CL_SUCCESS)
		n = 0;
	s[n] = 0;
	copy_log(log, loglen, s);
	free(s);
}

static int ocl_compile(void *ctx, const kgb_compile_req_t *req, kgb_module_t **out, char *log, size_t loglen)
{
	clctx_t *c = ctx;
	int rc = KGB_BE_OK;
	char *prelude = NULL, *opts = NULL, *text = NULL;
	size_t optlen = 0;
	FILE *of = NULL;
	cl_program prog = NULL;
	*out = NULL;
	if (log && loglen)
		log[0] = 0;

	if (req->lang != KGB_LANG_OPENCL) {
		rc = set_err(c, KGB_BE_UNSUPPORTED, "the opencl backend does not run %s kernels",
		             kgb_lang_name(req->lang));
		goto out;
	}
	/* the source may read no file but itself, the options name none (srcscan.h) */
	char serr[512];
	if (kgb_src_check(req->source, req->source_len, KGB_LANG_OPENCL, req->name, serr, sizeof serr) != 0 ||
	    kgb_src_check_ocl_options(req->options, serr, sizeof serr) != 0) {
		copy_log(log, loglen, serr);
		rc = set_err(c, KGB_BE_COMPILE, "%s", serr);
		goto out;
	}
	of = open_memstream(&opts, &optlen);
	KGB_ASSERT(of != NULL);
	/* OpenCL C 1.2 unless the plan's options choose the language version */
	bool own_std = req->options && strstr(req->options, "-cl-std=") != NULL;
	if (!own_std)
		fputs("-cl-std=CL1.2", of);
	for (size_t i = 0; i < req->ndefines; i++) {
		const char *v = req->define_values[i] ? req->define_values[i] : "";
		if (!kgb_be_is_ident(req->define_names[i])) {
			fclose(of);
			of = NULL;
			rc = set_err(c, KGB_BE_COMPILE, "define name '%s' is not an identifier", req->define_names[i]);
			goto out;
		}
		if (strpbrk(v, " \t\n\r\"'\\")) {
			fclose(of);
			of = NULL;
			rc = set_err(c, KGB_BE_COMPILE, "define %s: value '%s' contains whitespace or quotes "
			             "(not passable as a build option)", req->define_names[i], v);
			goto out;
		}
		fprintf(of, "%s-D %s=%s", own_std && i == 0 ? "" : " ", req->define_names[i], v);
	}
	if (req->options && *req->options)
		fprintf(of, "%s%s", own_std && req->ndefines == 0 ? "" : " ", req->options);
	fclose(of);
	of = NULL;

	prelude = kgb_prelude_opencl(req->tensor_names, req->tensor_dtypes, req->ntensors, req->name);
	size_t plen = strlen(prelude);
	text = kgb_xmalloc(plen + req->source_len + 2);
	memcpy(text, prelude, plen);
	memcpy(text + plen, req->source, req->source_len);
	text[plen + req->source_len] = '\n';
	text[plen + req->source_len + 1] = 0;

	const char *srcs[1] = { text };
	cl_int e;
	prog = cl.clCreateProgramWithSource(c->ctx, 1, srcs, NULL, &e);
	if (!prog) {
		rc = set_err(c, KGB_BE_ERR, "clCreateProgramWithSource: %s (%d)", cl_err_name(e), e);
		goto out;
	}
	e = cl.clBuildProgram(prog, 1, &c->dev, opts, NULL, NULL);
	build_log(c, prog, log, loglen);
	if (e != CL_SUCCESS) {
		rc = (e == CL_BUILD_PROGRAM_FAILURE || e == CL_INVALID_BUILD_OPTIONS ||
		      e == CL_COMPILE_PROGRAM_FAILURE) ? KGB_BE_COMPILE : KGB_BE_ERR;
		set_err(c, rc, "clBuildProgram (%s): %s (%d)", opts, cl_err_name(e), e);
		goto out;
	}
	cl_kernel k = cl.clCreateKernel(prog, req->entry, &e);
	if (!k) {
		rc = (e == CL_INVALID_KERNEL_NAME || e == CL_INVALID_KERNEL_DEFINITION) ? KGB_BE_COMPILE : KGB_BE_ERR;
		set_err(c, rc, "clCreateKernel('%s'): %s (%d)%s", req->entry, cl_err_name(e), e,
		        e == CL_INVALID_KERNEL_NAME ? ": the source has no __kernel of that name" : "");
		goto out;
	}
	kgb_module_t *m = kgb_xcalloc(1, sizeof *m);
	m->prog = prog;
	m->kern = k;
	prog = NULL;
	*out = m;
out:
	if (prog)
		cl.clReleaseProgram(prog);
	free(prelude);
	free(opts);
	free(text);
	return rc;
}

static void ocl_module_free(void *ctx, kgb_module_t *m)
{
	(void)ctx;
	if (!m)
		return;
	cl.clReleaseKernel(m->kern);
	cl.clReleaseProgram(m->prog);
	free(m);
}

static int launch_code(cl_int e)
{
	switch (e) {
	case CL_INVALID_WORK_GROUP_SIZE:
	case CL_INVALID_WORK_ITEM_SIZE:
	case CL_OUT_OF_RESOURCES:
	case CL_MEM_OBJECT_ALLOCATION_FAILURE:
	case CL_INVALID_GLOBAL_WORK_SIZE:
		return KGB_BE_RESOURCE;
	default:
		return KGB_BE_ERR;
	}
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

/* Wait until ev completes or timeout_ms passes (0: no limit). Returns its final
 * execution status (CL_COMPLETE or a negative error), or 1 on timeout. */
static cl_int wait_event(cl_event ev, uint32_t timeout_ms)
{
	if (timeout_ms == 0) {
		cl_int e = cl.clWaitForEvents(1, &ev);
		if (e != CL_SUCCESS && e != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
			return e;
	}
	uint64_t deadline = kgb_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	long us = 10;
	for (;;) {
		cl_int st = CL_QUEUED;
		cl_int e = cl.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
		if (e != CL_SUCCESS)
			return e;
		if (st <= CL_COMPLETE)  /* CL_COMPLETE is 0; errors are negative */
			return st;
		if (timeout_ms && kgb_now_ns() > deadline)
			return 1;
		sleep_us(us);
		us = KGB_MIN(us * 2, 1000);
	}
}

static int ocl_run(void *ctx, const kgb_launch_t *launches, size_t n, uint32_t timeout_ms, double *elapsed_ns)
{
	clctx_t *c = ctx;
	int rc = KGB_BE_OK;
	cl_event *evs = kgb_xcalloc(n ? n : 1, sizeof *evs);
	size_t nev = 0;
	cl_int e;

	for (size_t li = 0; li < n; li++) {
		const kgb_launch_t *L = &launches[li];
		cl_kernel k = L->mod->kern;
		for (size_t a = 0; a < L->nargs; a++) {
			const kgb_larg_t *A = &L->args[a];
			switch (A->kind) {
			case KGB_LARG_BUF: {
				cl_mem m = A->buf ? A->buf->mem : NULL;
				e = cl.clSetKernelArg(k, (cl_uint)a, sizeof m, &m);
				break;
			}
			case KGB_LARG_SCALAR:
				e = cl.clSetKernelArg(k, (cl_uint)a, A->size, A->bytes);
				break;
			case KGB_LARG_LOCAL:
				e = cl.clSetKernelArg(k, (cl_uint)a, A->size, NULL);
				break;
			default:
				KGB_ASSERT_MSG(0, "bad launch argument kind %d", (int)A->kind);
			}
			if (e != CL_SUCCESS) {
				rc = set_err(c, e == CL_INVALID_ARG_SIZE && A->kind == KGB_LARG_LOCAL ? KGB_BE_RESOURCE
				             : KGB_BE_ERR, "kernel %zu: clSetKernelArg(%zu): %s (%d)", li, a,
				             cl_err_name(e), e);
				goto out;
			}
		}
		size_t global[3], local[3];
		cl_uint dims = 1;
		for (int d = 0; d < 3; d++) {
			uint64_t g = L->grid[d] ? L->grid[d] : 1, b = L->block[d] ? L->block[d] : 1;
			if (g > SIZE_MAX / b) {
				rc = set_err(c, KGB_BE_RESOURCE, "kernel %zu: global size %llu x %llu overflows", li,
				             (unsigned long long)g, (unsigned long long)b);
				goto out;
			}
			global[d] = (size_t)(g * b);
			local[d] = (size_t)b;
			if (g != 1 || b != 1)
				dims = (cl_uint)d + 1;
		}
		e = cl.clEnqueueNDRangeKernel(c->q, k, dims, NULL, global, local, 0, NULL, &evs[nev]);
		if (e != CL_SUCCESS) {
			rc = set_err(c, launch_code(e), "kernel %zu: clEnqueueNDRangeKernel(global %zu,%zu,%zu "
			             "local %zu,%zu,%zu): %s (%d)", li, global[0], global[1], global[2], local[0],
			             local[1], local[2], cl_err_name(e), e);
			goto out;
		}
		nev++;
	}
	cl.clFlush(c->q);
	if (nev) {
		e = wait_event(evs[nev - 1], timeout_ms);
		if (e == 1) {
			rc = set_err(c, KGB_BE_TIMEOUT, "kernels still running after %u ms", timeout_ms);
			goto out_leak; /* the queue is wedged: do not touch the events again */
		}
		for (size_t i = 0; i < nev && e == CL_COMPLETE; i++) {
			cl_int st = CL_COMPLETE;
			cl.clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
			if (st < 0)
				e = st;
		}
		if (e != CL_COMPLETE) {
			rc = set_err(c, e == CL_OUT_OF_RESOURCES ? KGB_BE_RESOURCE : KGB_BE_ERR,
			             "kernel execution failed: %s (%d)", cl_err_name(e), e);
			goto out;
		}
		if (elapsed_ns) {
			cl_ulong t0 = 0, t1 = 0;
			cl_int e0 = cl.clGetEventProfilingInfo(evs[0], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
			cl_int e1 = cl.clGetEventProfilingInfo(evs[nev - 1], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
			if (e0 != CL_SUCCESS || e1 != CL_SUCCESS) {
				rc = set_err(c, KGB_BE_ERR, "clGetEventProfilingInfo: %s",
				             cl_err_name(e0 != CL_SUCCESS ? e0 : e1));
				goto out;
			}
			*elapsed_ns = t1 >= t0 ? (double)(t1 - t0) : 0.0;
		}
	} else if (elapsed_ns) {
		*elapsed_ns = 0;
	}
out:
	if (rc != KGB_BE_OK && nev)
		cl.clFinish(c->q);
	for (size_t i = 0; i < nev; i++)
		cl.clReleaseEvent(evs[i]);
out_leak:
	free(evs);
	return rc;
}

static int ocl_flush_cache(void *ctx)
{
	clctx_t *c = ctx;
	if (!c->flush) {
		size_t want = (size_t)KGB_MAX(2 * c->cache_bytes, (uint64_t)8 << 20);
		if (c->mem_bytes && want > c->mem_bytes / 8)
			want = (size_t)(c->mem_bytes / 8);
		cl_int e;
		c->flush = cl.clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, want, NULL, &e);
		if (!c->flush)
			return set_err(c, mem_code(e), "cache flush buffer (%zu bytes): %s", want, cl_err_name(e));
		c->flush_bytes = want;
	}
	/* a wide pattern: runtimes fill it a word at a time, not a byte at a time */
	uint32_t pat[16];
	c->flush_iter++;
	for (int i = 0; i < 16; i++)
		pat[i] = c->flush_iter * 2654435761u + (uint32_t)i;
	cl_int e = cl.clEnqueueFillBuffer(c->q, c->flush, pat, sizeof pat, 0, c->flush_bytes & ~(sizeof pat - 1),
	                                  0, NULL, NULL);
	if (e == CL_SUCCESS)
		e = cl.clFinish(c->q);
	if (e != CL_SUCCESS)
		return set_err(c, KGB_BE_ERR, "cache flush: %s (%d)", cl_err_name(e), e);
	return KGB_BE_OK;
}

/* Local memory is the device's to reuse: PoCL's CPU driver gives each of its threads
 * one region for the local memory of every work-group it runs, never cleared, so a
 * kernel could find its own earlier results there. The scrub is a kernel with one
 * local argument as large as the device allows, launched with several work-groups per
 * compute unit, every work-item writing a stride of it with a value that changes per
 * scrub. */
static const char scrub_src[] =
	"__kernel void kgb_scrub(__local uint *l, uint n, uint salt)\n"
	"{ for (uint i = get_local_id(0); i < n; i += get_local_size(0)) l[i] = salt ^ (i * 2654435761u);\n"
	"  barrier(CLK_LOCAL_MEM_FENCE); }\n";
#define SCRUB_LOCAL_SIZE 64
#define SCRUB_GROUPS_PER_CU 4

static int ocl_scrub_local(void *ctx)
{
	clctx_t *c = ctx;
	cl_int e;
	if (!c->scrub) {
		const char *srcs[1] = { scrub_src };
		c->scrub_prog = cl.clCreateProgramWithSource(c->ctx, 1, srcs, NULL, &e);
		if (!c->scrub_prog)
			return set_err(c, KGB_BE_ERR, "local memory scrub: clCreateProgramWithSource: %s", cl_err_name(e));
		if ((e = cl.clBuildProgram(c->scrub_prog, 1, &c->dev, "-cl-std=CL1.2", NULL, NULL)) != CL_SUCCESS)
			return set_err(c, KGB_BE_ERR, "local memory scrub: clBuildProgram: %s", cl_err_name(e));
		c->scrub = cl.clCreateKernel(c->scrub_prog, "kgb_scrub", &e);
		if (!c->scrub)
			return set_err(c, KGB_BE_ERR, "local memory scrub: clCreateKernel: %s", cl_err_name(e));
		c->scrub_bytes = (size_t)dev_u64(c->dev, CL_DEVICE_LOCAL_MEM_SIZE) & ~(size_t)63;
		c->scrub_groups = (size_t)KGB_MAX(dev_u32(c->dev, CL_DEVICE_MAX_COMPUTE_UNITS), 1u) * SCRUB_GROUPS_PER_CU;
	}
	size_t local = SCRUB_LOCAL_SIZE, global = SCRUB_LOCAL_SIZE * c->scrub_groups;
	uint32_t salt = ++c->scrub_iter * 0x9E3779B9u;
	/* the largest local argument the runtime takes (some keep a little for themselves) */
	for (;;) {
		if (c->scrub_bytes < 64)
			return set_err(c, KGB_BE_ERR, "local memory scrub: no local argument size accepted");
		cl_uint words = (cl_uint)(c->scrub_bytes / 4);
		e = cl.clSetKernelArg(c->scrub, 0, c->scrub_bytes, NULL);
		if (e == CL_SUCCESS)
			e = cl.clSetKernelArg(c->scrub, 1, sizeof words, &words);
		if (e == CL_SUCCESS)
			e = cl.clSetKernelArg(c->scrub, 2, sizeof salt, &salt);
		if (e == CL_SUCCESS)
			e = cl.clEnqueueNDRangeKernel(c->q, c->scrub, 1, NULL, &global, &local, 0, NULL, NULL);
		if (e == CL_SUCCESS)
			e = cl.clFinish(c->q);
		if (e == CL_SUCCESS)
			return KGB_BE_OK;
		if (e != CL_INVALID_ARG_SIZE && e != CL_OUT_OF_RESOURCES && e != CL_INVALID_WORK_GROUP_SIZE)
			return set_err(c, KGB_BE_ERR, "local memory scrub (%zu bytes): %s (%d)", c->scrub_bytes,
			               cl_err_name(e), e);
		c->scrub_bytes = (c->scrub_bytes / 2) & ~(size_t)63;
	}
}

static const char health_src[] =
	"__kernel void kgb_health(__global uint *out, uint n)\n"
	"{ uint i = get_global_id(0); if (i < n) out[i] = i * 2654435761u + 12345u; }\n";

static int ocl_health(void *ctx)
{
	kgb_compile_req_t req = { .lang = KGB_LANG_OPENCL, .entry = "kgb_health", .source = health_src,
	                          .source_len = sizeof health_src - 1, .name = "health.cl" };
	return kgb_be_health(&kgb_backend_opencl, ctx, &req);
}

const kgb_backend_t kgb_backend_opencl = {
	.name = "opencl",
	.langs = 1u << KGB_LANG_OPENCL,
	.probe = ocl_probe,
	.open = ocl_open,
	.close = ocl_close,
	.last_error = kgb_be_last_error,
	.alloc = ocl_alloc,
	.free = ocl_free,
	.view = ocl_view,
	.write = ocl_write,
	.read = ocl_read,
	.fill = ocl_fill,
	.compile = ocl_compile,
	.module_free = ocl_module_free,
	.run = ocl_run,
	.flush_cache = ocl_flush_cache,
	.clocks = NULL,
	.health = ocl_health,
	.scrub_local = ocl_scrub_local,
};
