/* The Level Zero backend (Intel GPUs; docs/backends.md): the loader (libze_loader.so.1)
 * opened with dlopen, GPU devices of every driver, modules from SPIR-V (lang
 * "spirv"), launches on one asynchronous immediate command list, each launch
 * signalling a kernel-timestamp event and waiting for the previous one (command lists
 * do not promise order by themselves), and a wait bounded by the run's time limit.
 *
 * It has run only against the test double tests/doubles/fake_ze.c, never on Intel
 * hardware; the layouts and codes it relies on are those of the published headers.
 *
 * Ownership: open() returns a ze_ctx_t owning the context, the command list, the
 * event pools and the flush buffer; close() destroys them. Buffers and modules belong
 * to the caller until free() / module_free(); a view shares its parent's memory. After
 * a device loss every call says so; after a timeout nothing touches the device again
 * and close() frees only host memory (the executor process exits). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_common.h"
#include "log.h"
#include "probe_fork.h"
#include "util.h"
#include "ze_api.h"

#define MAX_ZE_DEVICES 64
#define COPY_TIMEOUT_NS (120ull * 1000000000ull)   /* a copy or fill that takes longer is lost */

/* ---- loading ---- */

#define KGB_ZE_X_SYM(ret, name, args, required) { #name, required },
static const kgb_ze_sym_t ze_syms[] = { KGB_ZE_API(KGB_ZE_X_SYM) };
_Static_assert(sizeof(kgb_ze_api_t) == KGB_ARRAY_LEN(ze_syms) * sizeof(void (*)(void)),
               "the Level Zero table holds only function pointers");

/* The symbol table, in struct order. */
const kgb_ze_sym_t *kgb_ze_syms(size_t *n)
{
	*n = KGB_ARRAY_LEN(ze_syms);
	return ze_syms;
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool tried, ok;
	const char *path;
	kgb_ze_api_t api;
	char why[768];
} ld;

/* Load the loader (once); see ze_api.h. */
const kgb_ze_api_t *kgb_ze_loader(char *why, size_t whylen)
{
	static const char *const names[] = { "libze_loader.so.1", "libze_loader.so" };
	pthread_mutex_lock(&load_lock);
	if (!ld.tried) {
		ld.tried = true;
		char tried[512], first[384];
		void *h = kgb_be_dlopen_first(getenv("KGB_ZE_LIBRARY"), names, KGB_ARRAY_LEN(names), &ld.path, tried,
		                              sizeof tried, first, sizeof first);
		if (!h) {
			snprintf(ld.why, sizeof ld.why, "no Level Zero loader (tried %.360s: %.360s)", tried, first);
		} else {
			ld.ok = true;
			for (size_t i = 0; i < KGB_ARRAY_LEN(ze_syms); i++) {
				void *p = dlsym(h, ze_syms[i].name);
				if (!p && ze_syms[i].required) {
					snprintf(ld.why, sizeof ld.why, "Level Zero loader %s unusable: symbol %s missing",
					         ld.path, ze_syms[i].name);
					ld.ok = false;
					break;
				}
				memcpy((char *)&ld.api + i * sizeof(void (*)(void)), &p, sizeof p);
			}
		}
	}
	pthread_mutex_unlock(&load_lock);
	return kgb_be_loaded(ld.ok, &ld.api, ld.why, why, whylen);
}

/* ze_result_t -> KGB_BE_* code. */
int kgb_ze_classify(ze_result_t r)
{
	switch (r) {
	case ZE_RESULT_SUCCESS:
		return KGB_BE_OK;
	case ZE_RESULT_ERROR_DEVICE_LOST:
	case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
		return KGB_BE_FAULT;
	case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
	case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
	case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
	case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
		return KGB_BE_COMPILE;
	case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
	case ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION:
	case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE:
	case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
		return KGB_BE_RESOURCE;
	case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
	case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
		return KGB_BE_NOMEM;
	default:
		return KGB_BE_ERR;
	}
}

/* Name of a result code. */
const char *kgb_ze_result_name(ze_result_t r)
{
	switch (r) {
#define N(c) case c: return #c;
	N(ZE_RESULT_SUCCESS) N(ZE_RESULT_NOT_READY) N(ZE_RESULT_ERROR_DEVICE_LOST)
	N(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) N(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
	N(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) N(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
	N(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET) N(ZE_RESULT_ERROR_UNINITIALIZED)
	N(ZE_RESULT_ERROR_UNSUPPORTED_VERSION) N(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
	N(ZE_RESULT_ERROR_INVALID_ARGUMENT) N(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
	N(ZE_RESULT_ERROR_INVALID_NULL_POINTER) N(ZE_RESULT_ERROR_INVALID_SIZE)
	N(ZE_RESULT_ERROR_UNSUPPORTED_SIZE) N(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
	N(ZE_RESULT_ERROR_INVALID_KERNEL_NAME) N(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
	N(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION) N(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
	N(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE) N(ZE_RESULT_ERROR_UNKNOWN)
#undef N
	default: {
		static __thread char buf[32];
		snprintf(buf, sizeof buf, "ZE_RESULT_0x%08x", r);
		return buf;
	}
	}
}

/* Device timestamp difference in ns. */
double kgb_ze_ticks_ns(uint64_t start, uint64_t end, uint32_t valid_bits, double ns_per_tick)
{
	uint64_t d = end - start;
	if (valid_bits > 0 && valid_bits < 64)
		d &= (1ull << valid_bits) - 1;
	return (double)d * ns_per_tick;
}

/* Every GPU device of every driver, in driver order: this order is the index. */
static int gpu_devices(const kgb_ze_api_t *z, ze_driver_handle_t *drv, ze_device_handle_t *dev, int max,
                       char *why, size_t whylen)
{
	ze_result_t r = z->zeInit(ZE_INIT_FLAG_GPU_ONLY);
	if (r != ZE_RESULT_SUCCESS) {
		snprintf(why, whylen, "zeInit: %s (no Level Zero GPU driver installed?)", kgb_ze_result_name(r));
		return 0;
	}
	uint32_t nd = 0;
	if ((r = z->zeDriverGet(&nd, NULL)) != ZE_RESULT_SUCCESS || nd == 0) {
		snprintf(why, whylen, "the Level Zero loader (%s) found no driver%s%s", ld.path,
		         r ? ": " : "", r ? kgb_ze_result_name(r) : "");
		return 0;
	}
	ze_driver_handle_t drivers[16];
	nd = KGB_MIN(nd, 16u);
	if ((r = z->zeDriverGet(&nd, drivers)) != ZE_RESULT_SUCCESS) {
		snprintf(why, whylen, "zeDriverGet: %s", kgb_ze_result_name(r));
		return 0;
	}
	int n = 0;
	for (uint32_t i = 0; i < nd && n < max; i++) {
		uint32_t cnt = 0;
		if (z->zeDeviceGet(drivers[i], &cnt, NULL) != ZE_RESULT_SUCCESS || cnt == 0)
			continue;
		ze_device_handle_t devs[MAX_ZE_DEVICES];
		cnt = KGB_MIN(cnt, (uint32_t)MAX_ZE_DEVICES);
		if (z->zeDeviceGet(drivers[i], &cnt, devs) != ZE_RESULT_SUCCESS)
			continue;
		for (uint32_t j = 0; j < cnt && n < max; j++) {
			ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
			if (z->zeDeviceGetProperties(devs[j], &p) != ZE_RESULT_SUCCESS || p.type != ZE_DEVICE_TYPE_GPU)
				continue;
			drv[n] = drivers[i];
			dev[n] = devs[j];
			n++;
		}
	}
	if (n == 0)
		snprintf(why, whylen, "%u Level Zero driver(s) but no GPU device", nd);
	return n;
}

static uint64_t device_memory(const kgb_ze_api_t *z, ze_device_handle_t d)
{
	ze_device_memory_properties_t mp[8];
	uint32_t n = 8;
	for (uint32_t i = 0; i < n; i++)
		mp[i] = (ze_device_memory_properties_t){ .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES };
	if (z->zeDeviceGetMemoryProperties(d, &n, mp) != ZE_RESULT_SUCCESS)
		return 0;
	uint64_t total = 0;
	for (uint32_t i = 0; i < n && i < 8; i++)
		total += mp[i].totalSize;
	return total;
}

static uint64_t device_cache(const kgb_ze_api_t *z, ze_device_handle_t d)
{
	ze_device_cache_properties_t cp[4];
	uint32_t n = 4;
	for (uint32_t i = 0; i < n; i++)
		cp[i] = (ze_device_cache_properties_t){ .stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES };
	if (z->zeDeviceGetCacheProperties(d, &n, cp) != ZE_RESULT_SUCCESS || n == 0)
		return 0;
	uint64_t best = 0;
	for (uint32_t i = 0; i < n && i < 4; i++)
		best = KGB_MAX(best, (uint64_t)cp[i].cacheSize);
	return best;
}

static int probe_child(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	const kgb_ze_api_t *z = kgb_ze_loader(why, whylen);
	if (!z)
		return 0;
	ze_driver_handle_t drv[MAX_ZE_DEVICES];
	ze_device_handle_t dev[MAX_ZE_DEVICES];
	int n = gpu_devices(z, drv, dev, KGB_MIN(max, MAX_ZE_DEVICES), why, whylen);
	for (int i = 0; i < n; i++) {
		kgb_device_info_t *d = &out[i];
		ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
		ze_driver_properties_t dp = { .stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES };
		memset(d, 0, sizeof *d);
		z->zeDeviceGetProperties(dev[i], &p);
		p.name[sizeof p.name - 1] = 0;
		snprintf(d->backend, sizeof d->backend, "level-zero");
		kgb_strlcpy(d->name, p.name, sizeof d->name);
		/* the core API has no architecture name: the PCI device id names the chip */
		snprintf(d->arch, sizeof d->arch, "0x%04x", p.deviceId);
		if (z->zeDriverGetProperties(drv[i], &dp) == ZE_RESULT_SUCCESS)
			snprintf(d->driver_version, sizeof d->driver_version, "Level Zero driver %u.%u.%u",
			         dp.driverVersion >> 24, (dp.driverVersion >> 16) & 0xff, dp.driverVersion & 0xffff);
		d->memory_bytes = device_memory(z, dev[i]);
		d->l2_bytes = device_cache(z, dev[i]);
		d->compute_units = p.numSlices * p.numSubslicesPerSlice;
		d->index = (uint32_t)i;
		d->caps = KGB_CAP_FP16 | KGB_CAP_L2_FLUSH;
	}
	return n;
}

static int ze_probe(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	if (!kgb_ze_loader(why, whylen))
		return 0;
	return kgb_probe_forked("level-zero", probe_child, out, max, why, whylen);
}

/* ---- context ---- */

struct kgb_module {
	ze_module_handle_t mod;
	ze_kernel_handle_t kern;
	char entry[256];
};

typedef struct ze_ctx {
	kgb_be_ctx_t base;                /* first: the shared state (backend_common.h) */
	const kgb_ze_api_t *z;
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_command_list_handle_t list;
	ze_event_pool_handle_t sync_pool;
	ze_event_handle_t sync_ev;        /* signalled by copies and fills */
	ze_event_pool_handle_t ts_pool;   /* kernel-timestamp events, one per launch */
	ze_event_handle_t *ts_ev;
	uint32_t ts_cap;
	ze_device_compute_properties_t cp;
	double ns_per_tick;
	uint32_t ts_bits;
	uint64_t mem_bytes, cache_bytes;
	void *flush_buf;
	size_t flush_bytes;
	uint8_t flush_val;
	bool no_list_sync;                /* zeCommandListHostSynchronize absent or refused */
	size_t done;                      /* launches appended in this run */
	ze_event_handle_t prev;           /* the last one's event */
} ze_ctx_t;

#define set_err(c, ...) kgb_be_set_err(&(c)->base, __VA_ARGS__)

static int ze_fail(ze_ctx_t *c, const char *what, ze_result_t r)
{
	return kgb_be_fail(&c->base, kgb_ze_classify(r), what, kgb_ze_result_name(r));
}

#define ZE_CHECK(c, call) KGB_BE_CHECK(ze_fail, ZE_RESULT_SUCCESS, c, call)

static ze_ctx_t *zec(kgb_be_ctx_t *base)
{
	return (ze_ctx_t *)base;
}

static const kgb_be_vendor_t ze_vendor;

static void ze_close(void *ctx);

/* (Re)create the timestamp pool with room for n launches. */
static int ensure_ts_events(ze_ctx_t *c, uint32_t n)
{
	const kgb_ze_api_t *z = c->z;
	if (n <= c->ts_cap)
		return KGB_BE_OK;
	uint32_t cap = KGB_MAX(n, 2 * c->ts_cap);
	for (uint32_t i = 0; i < c->ts_cap; i++)
		z->zeEventDestroy(c->ts_ev[i]);
	if (c->ts_pool)
		z->zeEventPoolDestroy(c->ts_pool);
	c->ts_pool = NULL;
	c->ts_cap = 0;
	free(c->ts_ev);
	c->ts_ev = kgb_xcalloc(cap, sizeof *c->ts_ev);
	ze_event_pool_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
		                        .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
		                        .count = cap };
	ZE_CHECK(c, z->zeEventPoolCreate(c->ctx, &pd, 1, &c->dev, &c->ts_pool));
	for (uint32_t i = 0; i < cap; i++) {
		ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = i,
			                   .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST };
		ze_result_t r = z->zeEventCreate(c->ts_pool, &ed, &c->ts_ev[i]);
		if (r != ZE_RESULT_SUCCESS) {
			c->ts_cap = i;
			return ze_fail(c, "zeEventCreate", r);
		}
	}
	c->ts_cap = cap;
	return KGB_BE_OK;
}

static int ze_open(uint32_t index, void **out, char *err, size_t errlen)
{
	char why[768] = "";
	*out = NULL;
	const kgb_ze_api_t *z = kgb_ze_loader(why, sizeof why);
	if (!z)
		return kgb_err(err, errlen, "%s", why), KGB_BE_ERR;
	ze_driver_handle_t drv[MAX_ZE_DEVICES];
	ze_device_handle_t dev[MAX_ZE_DEVICES];
	int n = gpu_devices(z, drv, dev, MAX_ZE_DEVICES, why, sizeof why);
	if ((int)index >= n)
		return kgb_err(err, errlen, "level-zero device %u not found (%d device(s)%s%s)", index, n,
		               why[0] ? ": " : "", why), KGB_BE_ERR;
	ze_ctx_t *c = kgb_be_ctx_new(sizeof *c, &ze_vendor);
	c->z = z;
	c->drv = drv[index];
	c->dev = dev[index];
	ze_result_t r;
	ze_context_desc_t cd = { .stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC };
	ze_command_queue_desc_t qd = { .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .ordinal = 0,
		                           .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
		                           .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL };
	ze_event_pool_desc_t pd = { .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
		                        .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1 };
	ze_event_desc_t ed = { .stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
		                   .wait = ZE_EVENT_SCOPE_FLAG_HOST };
	const char *step = "zeContextCreate";
	if ((r = z->zeContextCreate(c->drv, &cd, &c->ctx)) != ZE_RESULT_SUCCESS)
		goto fail;
	step = "zeCommandListCreateImmediate";
	if ((r = z->zeCommandListCreateImmediate(c->ctx, c->dev, &qd, &c->list)) != ZE_RESULT_SUCCESS)
		goto fail;
	step = "zeEventPoolCreate";
	if ((r = z->zeEventPoolCreate(c->ctx, &pd, 1, &c->dev, &c->sync_pool)) != ZE_RESULT_SUCCESS)
		goto fail;
	step = "zeEventCreate";
	if ((r = z->zeEventCreate(c->sync_pool, &ed, &c->sync_ev)) != ZE_RESULT_SUCCESS)
		goto fail;
	c->cp = (ze_device_compute_properties_t){ .stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES };
	step = "zeDeviceGetComputeProperties";
	if ((r = z->zeDeviceGetComputeProperties(c->dev, &c->cp)) != ZE_RESULT_SUCCESS)
		goto fail;
	/* the 1.2 query gives the timer in ticks per second, exact; a driver that only
	 * knows 1.0 answers in ns per tick (small numbers), so the size tells them apart */
	ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 };
	step = "zeDeviceGetProperties";
	if ((r = z->zeDeviceGetProperties(c->dev, &p)) != ZE_RESULT_SUCCESS)
		goto fail;
	if (p.timerResolution > 100000)
		c->ns_per_tick = 1e9 / (double)p.timerResolution;
	else
		c->ns_per_tick = p.timerResolution ? (double)p.timerResolution : 1.0;
	c->ts_bits = p.kernelTimestampValidBits;
	c->mem_bytes = device_memory(z, c->dev);
	c->cache_bytes = device_cache(z, c->dev);
	c->no_list_sync = z->zeCommandListHostSynchronize == NULL;
	if (ensure_ts_events(c, 4) != KGB_BE_OK) {
		kgb_err(err, errlen, "level-zero device %u: %s", index, c->base.err);
		ze_close(c);
		return KGB_BE_ERR;
	}
	*out = c;
	return KGB_BE_OK;
fail:
	kgb_err(err, errlen, "level-zero device %u: %s: %s", index, step, kgb_ze_result_name(r));
	ze_close(c);
	return KGB_BE_ERR;
}

static void ze_close(void *ctx)
{
	ze_ctx_t *c = ctx;
	if (!c)
		return;
	const kgb_ze_api_t *z = c->z;
	kgb_be_pool_drain(&c->base);
	if (!c->base.hung) {
		if (c->flush_buf)
			z->zeMemFree(c->ctx, c->flush_buf);
		for (uint32_t i = 0; i < c->ts_cap; i++)
			z->zeEventDestroy(c->ts_ev[i]);
		if (c->ts_pool)
			z->zeEventPoolDestroy(c->ts_pool);
		if (c->sync_ev)
			z->zeEventDestroy(c->sync_ev);
		if (c->sync_pool)
			z->zeEventPoolDestroy(c->sync_pool);
		if (c->list)
			z->zeCommandListDestroy(c->list);
		if (c->ctx)
			z->zeContextDestroy(c->ctx);
	}
	free(c->ts_ev);
	free(c);
}

/* ---- memory: copies and fills signal sync_ev and are waited for ---- */

static void *dptr(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

static int ze_mem_alloc(kgb_be_ctx_t *base, size_t bytes, uint64_t *addr)
{
	ze_ctx_t *c = zec(base);
	ze_device_mem_alloc_desc_t d = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
	void *p = NULL;
	ze_result_t r = c->z->zeMemAllocDevice(c->ctx, &d, bytes, 4096, c->dev, &p);
	if (r != ZE_RESULT_SUCCESS)
		return ze_fail(c, "zeMemAllocDevice", r);
	*addr = (uintptr_t)p;
	return KGB_BE_OK;
}

static void ze_mem_free(kgb_be_ctx_t *base, uint64_t addr)
{
	ze_ctx_t *c = zec(base);
	c->z->zeMemFree(c->ctx, dptr(addr));
}

/* Wait for the copy or fill that signals sync_ev, then reset it. */
static int wait_sync(ze_ctx_t *c, const char *what)
{
	ze_result_t r = c->z->zeEventHostSynchronize(c->sync_ev, COPY_TIMEOUT_NS);
	if (r == ZE_RESULT_NOT_READY) {
		c->base.hung = true;
		return set_err(c, KGB_BE_TIMEOUT, "%s did not finish within %llu s", what,
		               (unsigned long long)(COPY_TIMEOUT_NS / 1000000000ull));
	}
	if (r != ZE_RESULT_SUCCESS)
		return ze_fail(c, what, r);
	ZE_CHECK(c, c->z->zeEventHostReset(c->sync_ev));
	return KGB_BE_OK;
}

static int ze_copy_in(kgb_be_ctx_t *base, uint64_t dst, const void *src, size_t n)
{
	ze_ctx_t *c = zec(base);
	ZE_CHECK(c, c->z->zeCommandListAppendMemoryCopy(c->list, dptr(dst), src, n, c->sync_ev, 0, NULL));
	return wait_sync(c, "copy to the device");
}

static int ze_copy_out(kgb_be_ctx_t *base, void *dst, uint64_t src, size_t n)
{
	ze_ctx_t *c = zec(base);
	ZE_CHECK(c, c->z->zeCommandListAppendMemoryCopy(c->list, dst, dptr(src), n, c->sync_ev, 0, NULL));
	return wait_sync(c, "copy from the device");
}

static int ze_memset(kgb_be_ctx_t *base, uint64_t dst, uint8_t byte, size_t n)
{
	ze_ctx_t *c = zec(base);
	ZE_CHECK(c, c->z->zeCommandListAppendMemoryFill(c->list, dptr(dst), &byte, 1, n, c->sync_ev, 0, NULL));
	return wait_sync(c, "fill");
}

/* ---- modules ---- */

static bool spirv_magic(const void *p, size_t n)
{
	if (n < 20 || n % 4 != 0)
		return false;
	uint32_t w;
	memcpy(&w, p, 4);
	return w == 0x07230203u || w == 0x03022307u;
}

/* Build flags go to the device compiler as one string: allow the characters options
 * are made of and nothing that could name a file. */
static bool build_flags_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(" -_=.,+", *s)))
			return false;
	return true;
}


static void build_log(ze_ctx_t *c, ze_module_build_log_handle_t bl, char *log, size_t loglen)
{
	if (!bl)
		return;
	size_t n = 0;
	if (c->z->zeModuleBuildLogGetString(bl, &n, NULL) == ZE_RESULT_SUCCESS && n > 0) {
		char *s = kgb_xcalloc(1, n + 1);
		if (c->z->zeModuleBuildLogGetString(bl, &n, s) == ZE_RESULT_SUCCESS)
			kgb_be_copy_log(log, loglen, s);
		free(s);
	}
	c->z->zeModuleBuildLogDestroy(bl);
}

/* SPIR-V modules; plan defines are specialization constants: "defines": {"3": "64"}
 * sets constant id 3 to 64. */
static int ze_compile(void *ctx, const kgb_compile_req_t *req, kgb_module_t **out, char *log, size_t loglen)
{
	ze_ctx_t *c = ctx;
	const char *name = req->name ? req->name : "kernel";
	uint32_t *ids = NULL;
	uint64_t *vals = NULL;
	const void **vptr = NULL;
	uint8_t *image = NULL;
	ze_module_build_log_handle_t bl = NULL;
	kgb_module_t *m = NULL;
	*out = NULL;
	if (log && loglen)
		log[0] = 0;
	int rc = kgb_be_usable(&c->base);
	if (rc)
		return rc;
	if (req->lang != KGB_LANG_SPIRV)
		return set_err(c, KGB_BE_UNSUPPORTED, "the level-zero backend does not run %s kernels (it loads "
		               "SPIR-V: compile OpenCL C or SYCL to SPIR-V first)", kgb_lang_name(req->lang));
	if (!spirv_magic(req->source, req->source_len)) {
		rc = set_err(c, KGB_BE_COMPILE, "%s: not a SPIR-V module (%zu bytes, no 0x07230203 magic word)",
		             name, req->source_len);
		kgb_be_copy_log(log, loglen, c->base.err);
		return rc;
	}
	if (req->options && !build_flags_ok(req->options)) {
		rc = set_err(c, KGB_BE_COMPILE, "%s: options '%s' contain characters not allowed in build flags",
		             name, req->options);
		kgb_be_copy_log(log, loglen, c->base.err);
		return rc;
	}
	ids = kgb_xcalloc(req->ndefines + 1, sizeof *ids);
	vals = kgb_xcalloc(req->ndefines + 1, sizeof *vals);
	vptr = kgb_xcalloc(req->ndefines + 1, sizeof *vptr);
	for (size_t i = 0; i < req->ndefines; i++) {
		const char *k = req->define_names[i], *v = req->define_values[i] ? req->define_values[i] : "";
		char *e1 = NULL, *e2 = NULL;
		errno = 0;
		unsigned long id = strtoul(k, &e1, 10);
		long long val = strtoll(v, &e2, 0);
		if (!*k || *e1 || id > UINT32_MAX || !*v || *e2 || errno) {
			rc = set_err(c, KGB_BE_COMPILE, "%s: define '%s' = '%s': SPIR-V defines are specialization "
			             "constants, a numeric id and an integer value", name, k, v);
			kgb_be_copy_log(log, loglen, c->base.err);
			goto out;
		}
		ids[i] = (uint32_t)id;
		vals[i] = (uint64_t)val; /* little-endian: a 32-bit constant reads the low half */
		vptr[i] = &vals[i];
	}
	/* a private, aligned copy: the driver reads it as 32-bit words */
	image = kgb_xmalloc(req->source_len);
	memcpy(image, req->source, req->source_len);
	ze_module_constants_t consts = { .numConstants = (uint32_t)req->ndefines, .pConstantIds = ids,
		                             .pConstantValues = vptr };
	ze_module_desc_t md = { .stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_IL_SPIRV,
		                    .inputSize = req->source_len, .pInputModule = image,
		                    .pBuildFlags = req->options ? req->options : "",
		                    .pConstants = req->ndefines ? &consts : NULL };
	m = kgb_xcalloc(1, sizeof *m);
	ze_result_t r = c->z->zeModuleCreate(c->ctx, c->dev, &md, &m->mod, &bl);
	build_log(c, bl, log, loglen);
	if (r != ZE_RESULT_SUCCESS) {
		m->mod = NULL;
		rc = ze_fail(c, "zeModuleCreate", r);
		if (rc != KGB_BE_FAULT && rc != KGB_BE_NOMEM)
			rc = KGB_BE_COMPILE;
		set_err(c, rc, "%s: zeModuleCreate: %s%s%.1500s", name, kgb_ze_result_name(r), log && log[0] ? ": " : "",
		        log ? log : "");
		goto out;
	}
	ze_kernel_desc_t kd = { .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = req->entry };
	r = c->z->zeKernelCreate(m->mod, &kd, &m->kern);
	if (r != ZE_RESULT_SUCCESS) {
		rc = ze_fail(c, "zeKernelCreate", r);
		if (rc != KGB_BE_FAULT)
			rc = KGB_BE_COMPILE;
		set_err(c, rc, "%s: the module has no kernel '%s': %s", name, req->entry, kgb_ze_result_name(r));
		kgb_be_copy_log(log, loglen, c->base.err);
		goto out;
	}
	snprintf(m->entry, sizeof m->entry, "%s", req->entry);
	*out = m;
	m = NULL;
	rc = KGB_BE_OK;
out:
	if (m) {
		if (m->mod)
			c->z->zeModuleDestroy(m->mod);
		free(m);
	}
	free(image);
	free(ids);
	free(vals);
	free(vptr);
	return rc;
}

static void ze_module_free(void *ctx, kgb_module_t *m)
{
	ze_ctx_t *c = ctx;
	if (!m)
		return;
	if (!c->base.hung) {
		if (m->kern)
			c->z->zeKernelDestroy(m->kern);
		if (m->mod)
			c->z->zeModuleDestroy(m->mod);
	}
	free(m);
}

/* ---- launch ---- */

/* Append one launch: it signals the next timestamp event and waits for the previous
 * launch's (an empty grid appends nothing). */
static int ze_launch(kgb_be_ctx_t *base, const kgb_launch_t *L, size_t li)
{
	ze_ctx_t *c = zec(base);
	const kgb_ze_api_t *z = c->z;
	kgb_module_t *m = L->mod;
	if (L->grid[0] == 0)
		return KGB_BE_OK;
	ze_event_handle_t signal = c->ts_ev[c->done], wait = c->prev;
	if (!m)
		return set_err(c, KGB_BE_ERR, "launch %zu: no module", li);
	uint32_t g[3], b[3];
	const uint32_t gmax[3] = { c->cp.maxGroupCountX, c->cp.maxGroupCountY, c->cp.maxGroupCountZ };
	const uint32_t bmax[3] = { c->cp.maxGroupSizeX, c->cp.maxGroupSizeY, c->cp.maxGroupSizeZ };
	for (int d = 0; d < 3; d++) {
		uint64_t gv = L->grid[d] ? L->grid[d] : 1, bv = L->block[d] ? L->block[d] : 1;
		if ((gmax[d] && gv > gmax[d]) || (bmax[d] && bv > bmax[d]) || gv > UINT32_MAX || bv > UINT32_MAX)
			return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): grid[%d] = %llu, block[%d] = %llu exceed the "
			               "device limits (%u groups, %u work-items)", li, m->entry, d, (unsigned long long)gv,
			               d, (unsigned long long)bv, gmax[d], bmax[d]);
		g[d] = (uint32_t)gv;
		b[d] = (uint32_t)bv;
	}
	uint64_t items = (uint64_t)b[0] * b[1] * b[2];
	if (c->cp.maxTotalGroupSize && items > c->cp.maxTotalGroupSize)
		return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): work-group of %llu items exceeds the device's %u",
		               li, m->entry, (unsigned long long)items, c->cp.maxTotalGroupSize);
	uint64_t local = 0;
	for (size_t a = 0; a < L->nargs; a++) {
		const kgb_larg_t *A = &L->args[a];
		ze_result_t r;
		switch (A->kind) {
		case KGB_LARG_BUF: {
			void *p = A->buf ? dptr(A->buf->addr) : NULL;
			r = z->zeKernelSetArgumentValue(m->kern, (uint32_t)a, sizeof p, &p);
			break;
		}
		case KGB_LARG_SCALAR:
			r = z->zeKernelSetArgumentValue(m->kern, (uint32_t)a, A->size, A->bytes);
			break;
		case KGB_LARG_LOCAL:
			local += A->size;
			r = z->zeKernelSetArgumentValue(m->kern, (uint32_t)a, A->size, NULL);
			break;
		default:
			KGB_ASSERT_MSG(0, "bad launch argument kind %d", (int)A->kind);
		}
		if (r != ZE_RESULT_SUCCESS) {
			int code = ze_fail(c, "zeKernelSetArgumentValue", r);
			return set_err(c, code, "launch %zu (%s): argument %zu (%zu bytes): %s", li, m->entry, a,
			               A->kind == KGB_LARG_BUF ? sizeof(void *) : A->size, kgb_ze_result_name(r));
		}
	}
	if (c->cp.maxSharedLocalMemory && local > c->cp.maxSharedLocalMemory)
		return set_err(c, KGB_BE_RESOURCE, "launch %zu (%s): %llu bytes of local memory exceed the device's %u",
		               li, m->entry, (unsigned long long)local, c->cp.maxSharedLocalMemory);
	ze_result_t r = z->zeKernelSetGroupSize(m->kern, b[0], b[1], b[2]);
	if (r != ZE_RESULT_SUCCESS) {
		int code = ze_fail(c, "zeKernelSetGroupSize", r);
		return set_err(c, code, "launch %zu (%s): work-group %u,%u,%u: %s", li, m->entry, b[0], b[1], b[2],
		               kgb_ze_result_name(r));
	}
	ze_group_count_t gc = { g[0], g[1], g[2] };
	r = z->zeCommandListAppendLaunchKernel(c->list, m->kern, &gc, signal, wait ? 1 : 0, wait ? &wait : NULL);
	if (r != ZE_RESULT_SUCCESS) {
		int code = ze_fail(c, "zeCommandListAppendLaunchKernel", r);
		return set_err(c, code, "launch %zu (%s, groups %u,%u,%u of %u,%u,%u): %s", li, m->entry, g[0], g[1],
		               g[2], b[0], b[1], b[2], kgb_ze_result_name(r));
	}
	c->prev = c->ts_ev[c->done++];
	return KGB_BE_OK;
}

/* Wait for everything appended, at most timeout_ms: the command list when the loader
 * can, else the last launch's event. 1 = done, 0 = still running. */
static int ze_wait(kgb_be_ctx_t *base, uint32_t timeout_ms)
{
	ze_ctx_t *c = zec(base);
	uint64_t ns = (uint64_t)timeout_ms * 1000000ull;
	ze_result_t r = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (!c->no_list_sync) {
		r = c->z->zeCommandListHostSynchronize(c->list, ns);
		if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
			c->no_list_sync = true;
	}
	if (c->no_list_sync)
		r = c->prev ? c->z->zeEventHostSynchronize(c->prev, ns) : ZE_RESULT_SUCCESS;
	if (r == ZE_RESULT_NOT_READY)
		return 0;
	return r == ZE_RESULT_SUCCESS ? 1 : ze_fail(c, "kernel execution", r);
}

/* Room for n timestamp events, all reset. */
static int ze_run_begin(kgb_be_ctx_t *base, size_t n, bool timed)
{
	ze_ctx_t *c = zec(base);
	int rc;
	(void)timed;
	c->done = 0;
	c->prev = NULL;
	if (n > UINT32_MAX / 2)
		return set_err(c, KGB_BE_ERR, "%zu launches in one run", n);
	if ((rc = ensure_ts_events(c, (uint32_t)n)) != KGB_BE_OK)
		return rc;
	for (size_t i = 0; i < n; i++)
		ZE_CHECK(c, c->z->zeEventHostReset(c->ts_ev[i]));
	return KGB_BE_OK;
}

/* From the start of the first launch to the end of the last, by the kernel timestamps. */
static int ze_elapsed(kgb_be_ctx_t *base, double *ns)
{
	ze_ctx_t *c = zec(base);
	*ns = 0;
	if (c->done) {
		ze_kernel_timestamp_result_t t0, t1;
		ZE_CHECK(c, c->z->zeEventQueryKernelTimestamp(c->ts_ev[0], &t0));
		ZE_CHECK(c, c->z->zeEventQueryKernelTimestamp(c->ts_ev[c->done - 1], &t1));
		*ns = kgb_ze_ticks_ns(t0.global.kernelStart, t1.global.kernelEnd, c->ts_bits, c->ns_per_tick);
	}
	return KGB_BE_OK;
}

/* Fill a buffer of twice the largest cache (at least 8 MiB, at most 1/8 of memory)
 * and wait for it, so no line of the kernel's data stays cached. */
static int ze_flush_cache(void *ctx)
{
	ze_ctx_t *c = ctx;
	int rc = kgb_be_usable(&c->base);
	if (rc)
		return rc;
	if (!c->flush_buf) {
		size_t want = (size_t)KGB_MAX(2 * c->cache_bytes, (uint64_t)8 << 20);
		if (c->mem_bytes && want > c->mem_bytes / 8)
			want = (size_t)(c->mem_bytes / 8);
		ze_device_mem_alloc_desc_t d = { .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC };
		ZE_CHECK(c, c->z->zeMemAllocDevice(c->ctx, &d, want, 4096, c->dev, &c->flush_buf));
		c->flush_bytes = want;
	}
	c->flush_val++;
	ZE_CHECK(c, c->z->zeCommandListAppendMemoryFill(c->list, c->flush_buf, &c->flush_val, 1, c->flush_bytes,
	                                                c->sync_ev, 0, NULL));
	return wait_sync(c, "cache flush");
}

/* kgb_health(__global uint *out, uint n): out[i] = i * 2654435761u + 12345u for
 * i < n. OpenCL C compiled to SPIR-V 1.0 (clang -target spirv64 -O2, llvm-spirv). */
static const unsigned char health_spv[] = {
	0x03, 0x02, 0x23, 0x07, 0x00, 0x00, 0x01, 0x00, 0x0e, 0x00, 0x06, 0x00,
	0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00, 0x02, 0x00,
	0x04, 0x00, 0x00, 0x00, 0x11, 0x00, 0x02, 0x00, 0x05, 0x00, 0x00, 0x00,
	0x11, 0x00, 0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x11, 0x00, 0x02, 0x00,
	0x0b, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x05, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x4f, 0x70, 0x65, 0x6e, 0x43, 0x4c, 0x2e, 0x73, 0x74, 0x64, 0x00, 0x00,
	0x0e, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x0f, 0x00, 0x07, 0x00, 0x06, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00,
	0x6b, 0x67, 0x62, 0x5f, 0x68, 0x65, 0x61, 0x6c, 0x74, 0x68, 0x00, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x03, 0x00, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x70, 0x8e, 0x01, 0x00, 0x05, 0x00, 0x0b, 0x00, 0x05, 0x00, 0x00, 0x00,
	0x5f, 0x5f, 0x73, 0x70, 0x69, 0x72, 0x76, 0x5f, 0x42, 0x75, 0x69, 0x6c,
	0x74, 0x49, 0x6e, 0x47, 0x6c, 0x6f, 0x62, 0x61, 0x6c, 0x49, 0x6e, 0x76,
	0x6f, 0x63, 0x61, 0x74, 0x69, 0x6f, 0x6e, 0x49, 0x64, 0x00, 0x00, 0x00,
	0x05, 0x00, 0x05, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x6b, 0x67, 0x62, 0x5f,
	0x68, 0x65, 0x61, 0x6c, 0x74, 0x68, 0x00, 0x00, 0x47, 0x00, 0x0d, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x29, 0x00, 0x00, 0x00, 0x5f, 0x5f, 0x73, 0x70,
	0x69, 0x72, 0x76, 0x5f, 0x42, 0x75, 0x69, 0x6c, 0x74, 0x49, 0x6e, 0x47,
	0x6c, 0x6f, 0x62, 0x61, 0x6c, 0x49, 0x6e, 0x76, 0x6f, 0x63, 0x61, 0x74,
	0x69, 0x6f, 0x6e, 0x49, 0x64, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x47, 0x00, 0x03, 0x00, 0x05, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00,
	0x47, 0x00, 0x04, 0x00, 0x05, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00,
	0x1c, 0x00, 0x00, 0x00, 0x47, 0x00, 0x07, 0x00, 0x0a, 0x00, 0x00, 0x00,
	0x29, 0x00, 0x00, 0x00, 0x6b, 0x67, 0x62, 0x5f, 0x68, 0x65, 0x61, 0x6c,
	0x74, 0x68, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x47, 0x00, 0x04, 0x00,
	0x0b, 0x00, 0x00, 0x00, 0x26, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	0x47, 0x00, 0x04, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00,
	0x04, 0x00, 0x00, 0x00, 0x47, 0x00, 0x04, 0x00, 0x1d, 0x00, 0x00, 0x00,
	0x26, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x47, 0x00, 0x04, 0x00,
	0x1d, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x15, 0x00, 0x04, 0x00, 0x02, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x15, 0x00, 0x04, 0x00, 0x07, 0x00, 0x00, 0x00,
	0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x04, 0x00,
	0x07, 0x00, 0x00, 0x00, 0x15, 0x00, 0x00, 0x00, 0xb1, 0x79, 0x37, 0x9e,
	0x2b, 0x00, 0x04, 0x00, 0x07, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00,
	0x39, 0x30, 0x00, 0x00, 0x2b, 0x00, 0x05, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x19, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	0x17, 0x00, 0x04, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x03, 0x00, 0x00, 0x00, 0x20, 0x00, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x13, 0x00, 0x02, 0x00,
	0x06, 0x00, 0x00, 0x00, 0x20, 0x00, 0x04, 0x00, 0x08, 0x00, 0x00, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x21, 0x00, 0x05, 0x00,
	0x09, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
	0x07, 0x00, 0x00, 0x00, 0x14, 0x00, 0x02, 0x00, 0x13, 0x00, 0x00, 0x00,
	0x3b, 0x00, 0x04, 0x00, 0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x36, 0x00, 0x05, 0x00, 0x06, 0x00, 0x00, 0x00,
	0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
	0x37, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00,
	0x37, 0x00, 0x03, 0x00, 0x07, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00,
	0xf8, 0x00, 0x02, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x3d, 0x00, 0x06, 0x00,
	0x03, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x51, 0x00, 0x05, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x71, 0x00, 0x04, 0x00, 0x07, 0x00, 0x00, 0x00,
	0x12, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0xb0, 0x00, 0x05, 0x00,
	0x13, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00,
	0x0c, 0x00, 0x00, 0x00, 0xfa, 0x00, 0x04, 0x00, 0x14, 0x00, 0x00, 0x00,
	0x0e, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0xf8, 0x00, 0x02, 0x00,
	0x0e, 0x00, 0x00, 0x00, 0x84, 0x00, 0x05, 0x00, 0x07, 0x00, 0x00, 0x00,
	0x16, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x15, 0x00, 0x00, 0x00,
	0x80, 0x00, 0x05, 0x00, 0x07, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
	0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0xc7, 0x00, 0x05, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x1a, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00,
	0x19, 0x00, 0x00, 0x00, 0x46, 0x00, 0x05, 0x00, 0x08, 0x00, 0x00, 0x00,
	0x1b, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x1a, 0x00, 0x00, 0x00,
	0x3e, 0x00, 0x05, 0x00, 0x1b, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0xf9, 0x00, 0x02, 0x00,
	0x0f, 0x00, 0x00, 0x00, 0xf8, 0x00, 0x02, 0x00, 0x0f, 0x00, 0x00, 0x00,
	0xfd, 0x00, 0x01, 0x00, 0x38, 0x00, 0x01, 0x00, 0x36, 0x00, 0x05, 0x00,
	0x06, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x09, 0x00, 0x00, 0x00, 0x37, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00,
	0x1d, 0x00, 0x00, 0x00, 0x37, 0x00, 0x03, 0x00, 0x07, 0x00, 0x00, 0x00,
	0x1e, 0x00, 0x00, 0x00, 0xf8, 0x00, 0x02, 0x00, 0x1f, 0x00, 0x00, 0x00,
	0x39, 0x00, 0x06, 0x00, 0x06, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
	0x0a, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00, 0x1e, 0x00, 0x00, 0x00,
	0xfd, 0x00, 0x01, 0x00, 0x38, 0x00, 0x01, 0x00,
};

static int ze_health(void *ctx)
{
	kgb_compile_req_t req = { .lang = KGB_LANG_SPIRV, .entry = "kgb_health", .source = (const char *)health_spv,
		                      .source_len = sizeof health_spv, .name = "health.spv" };
	return kgb_be_health(&kgb_backend_level_zero, ctx, &req);
}

static const kgb_be_vendor_t ze_vendor = {
	.lost = "the Level Zero device was lost by an earlier fault",
	.alloc_call = "zeMemAllocDevice",
	.mem_alloc = ze_mem_alloc,
	.mem_free = ze_mem_free,
	.copy_in = ze_copy_in,
	.copy_out = ze_copy_out,
	.fill = ze_memset,
	.run_begin = ze_run_begin,
	.launch = ze_launch,
	.elapsed = ze_elapsed,
	.wait = ze_wait,
};

const kgb_backend_t kgb_backend_level_zero = {
	.name = "level-zero",
	.langs = 1u << KGB_LANG_SPIRV,
	.probe = ze_probe,
	.open = ze_open,
	.close = ze_close,
	KGB_BE_SHARED_ENTRIES,
	.compile = ze_compile,
	.module_free = ze_module_free,
	.flush_cache = ze_flush_cache,
	.clocks = NULL,
	.health = ze_health,
	.visible_env = "ZE_AFFINITY_MASK",
};
