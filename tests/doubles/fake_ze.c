/* TEST DOUBLE: a fake Level Zero loader for the unit tests (libfakeze.so).
 *
 * There is no Intel GPU on the machines that build kgb, so the level-zero backend is
 * tested against this stand-in, loaded through KGB_ZE_LIBRARY, the way the OpenCL ICD
 * loader is tested with a stub driver. It implements the entry points the backend
 * resolves with host memory as device memory and host functions as kernels, run
 * synchronously when a launch is appended:
 *
 *   devices      KGB_FAKE_ZE_DEVICES GPUs (default 1) plus one CPU device that a GPU
 *                backend must skip
 *   modules      SPIR-V: the magic word is checked and the OpEntryPoint names are read
 *                from the instruction stream; build flags containing
 *                "-fake-build-error" fail the build with a build log
 *   kernels      fill_u32(u32 *out, u32 v, u32 n) writes v + (specialization constant
 *                7, default 0), add_f32(const float *a, const float *b, float *c,
 *                i32 n), kgb_health(u32 *out, u32 n), fault() (the device is lost),
 *                hang() (the command list never completes)
 *   bounds       kernel accesses outside the live allocations lose the device, as a
 *                page fault does on hardware
 *   timestamps   the host clock in ticks of a 19.2 MHz timer, 32 valid bits
 *   KGB_FAKE_ZE_NO_LIST_SYNC=1: zeCommandListHostSynchronize answers
 *                ZE_RESULT_ERROR_UNSUPPORTED_FEATURE (a driver older than 1.6)
 *
 * This is not a Level Zero implementation: nothing here says anything about real
 * hardware. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/backends/ze_api.h"
#include "fake_common.h"

#define TICK_HZ 19200000.0
#define MAX_ARGS 16

struct _ze_driver_handle_t { int id; };
struct _ze_device_handle_t { int id; uint32_t type; };
struct _ze_context_handle_t { int live; };
struct _ze_command_list_handle_t { int hung; };
struct _ze_event_handle_t {
	int signalled;
	int pending;                 /* behind a hung kernel: never signals */
	uint64_t start, end;         /* kernel timestamps (ticks) */
};
struct _ze_event_pool_handle_t {
	uint32_t count, flags;
	struct _ze_event_handle_t *ev;
};
struct _ze_module_build_log_handle_t { char *text; };

typedef enum { K_FILL_U32 = 1, K_ADD_F32, K_HEALTH, K_FAULT, K_HANG } kind_t;

struct _ze_module_handle_t {
	char names[8][64];
	int nnames;
	uint32_t spec7;
};

struct _ze_kernel_handle_t {
	kind_t kind;
	struct _ze_module_handle_t *mod;
	uint64_t args[MAX_ARGS];
	uint32_t gx, gy, gz;
};

static struct _ze_driver_handle_t driver = { 1 };
static struct _ze_device_handle_t devices[9];
static int initialised;
static int lost;                 /* the device was lost: every call fails */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t ticks(void)
{
	return (uint64_t)(now_ns() * TICK_HZ / 1e9) & 0xffffffffull;
}

static int ngpus(void)
{
	const char *v = getenv("KGB_FAKE_ZE_DEVICES");
	int n = v && *v ? atoi(v) : 1;
	return n < 0 ? 0 : n > 8 ? 8 : n;
}

static void sleep_ns(uint64_t ns)
{
	if (ns > 10000000000ull) {
		fprintf(stderr, "fake_ze: a wait of %llu ns on work that never completes\n", (unsigned long long)ns);
		_exit(99);
	}
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	nanosleep(&ts, NULL);
}

EXPORT ze_result_t zeInit(uint32_t flags)
{
	(void)flags;
	int n = ngpus();
	for (int i = 0; i < n; i++)
		devices[i] = (struct _ze_device_handle_t){ i, ZE_DEVICE_TYPE_GPU };
	devices[n] = (struct _ze_device_handle_t){ n, 2 /* ZE_DEVICE_TYPE_CPU */ };
	initialised = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDriverGet(uint32_t *count, ze_driver_handle_t *drivers)
{
	if (!initialised)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (drivers && *count >= 1)
		drivers[0] = &driver;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDriverGetProperties(ze_driver_handle_t d, ze_driver_properties_t *p)
{
	(void)d;
	p->driverVersion = (1u << 24) | (3u << 16) | 25143u;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGet(ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *devs)
{
	(void)d;
	uint32_t n = (uint32_t)ngpus() + 1;
	/* the CPU device comes first, so a backend that does not filter would pick it */
	if (devs && *count >= 1) {
		devs[0] = &devices[n - 1];
		for (uint32_t i = 1; i < n && i < *count; i++)
			devs[i] = &devices[i - 1];
	}
	*count = n;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t *p)
{
	uint32_t stype = p->stype;
	void *next = p->pNext;
	memset(p, 0, sizeof *p);
	p->stype = stype;
	p->pNext = next;
	p->type = d->type;
	p->vendorId = 0x8086;
	p->deviceId = d->type == ZE_DEVICE_TYPE_GPU ? 0x0bda : 0x0000;
	p->coreClockRate = 1550;
	p->maxMemAllocSize = (uint64_t)24 << 30;
	p->numThreadsPerEU = 8;
	p->physicalEUSimdWidth = 16;
	p->numEUsPerSubslice = 8;
	p->numSubslicesPerSlice = 56;
	p->numSlices = 1;
	p->timerResolution = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? (uint64_t)TICK_HZ : 52;
	p->timestampValidBits = 36;
	p->kernelTimestampValidBits = 32;
	if (d->type == ZE_DEVICE_TYPE_GPU)
		snprintf(p->name, sizeof p->name, "Intel(R) Data Center GPU Max 1100 (kgb test double %d)", d->id);
	else
		snprintf(p->name, sizeof p->name, "Fake CPU device (kgb test double)");
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t d, ze_device_compute_properties_t *p)
{
	(void)d;
	p->maxTotalGroupSize = 1024;
	p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
	p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
	p->maxSharedLocalMemory = 128u << 10;
	p->numSubGroupSizes = 2;
	p->subGroupSizes[0] = 16;
	p->subGroupSizes[1] = 32;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t d, uint32_t *count,
                                               ze_device_memory_properties_t *p)
{
	(void)d;
	/* two HBM stacks */
	for (uint32_t i = 0; p && i < *count && i < 2; i++) {
		p[i].totalSize = (uint64_t)24 << 30;
		snprintf(p[i].name, sizeof p[i].name, "HBM");
	}
	*count = 2;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGetCacheProperties(ze_device_handle_t d, uint32_t *count,
                                              ze_device_cache_properties_t *p)
{
	(void)d;
	if (p && *count >= 1)
		p[0].cacheSize = (size_t)108 << 20;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeContextCreate(ze_driver_handle_t d, const ze_context_desc_t *desc, ze_context_handle_t *ctx)
{
	(void)d;
	if (desc->stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	*ctx = own(calloc(1, sizeof **ctx));
	(*ctx)->live = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeContextDestroy(ze_context_handle_t ctx)
{
	disown(ctx);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListCreateImmediate(ze_context_handle_t ctx, ze_device_handle_t d,
                                                const ze_command_queue_desc_t *desc, ze_command_list_handle_t *l)
{
	(void)ctx;
	if (d->type != ZE_DEVICE_TYPE_GPU || desc->stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	*l = own(calloc(1, sizeof **l));
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListDestroy(ze_command_list_handle_t l)
{
	disown(l);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListHostSynchronize(ze_command_list_handle_t l, uint64_t timeout)
{
	const char *v = getenv("KGB_FAKE_ZE_NO_LIST_SYNC");
	if (v && *v == '1')
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (lost)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	if (l->hung) {
		sleep_ns(timeout);
		return ZE_RESULT_NOT_READY;
	}
	return ZE_RESULT_SUCCESS;
}

/* Common to every append: 0 = run it now, 1 = it queues behind a hang, else an error. */
static ze_result_t gate(ze_command_list_handle_t l, ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait);
/* The start of an append: return at once unless it runs now (queued: success). */
#define GATE(l, signal, nwait, wait)                                                               \
	do {                                                                                           \
		ze_result_t g_ = gate(l, signal, nwait, wait);                                             \
		if (g_)                                                                                    \
			return g_ == 1 ? ZE_RESULT_SUCCESS : g_;                                               \
	} while (0)

static ze_result_t gate(ze_command_list_handle_t l, ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait)
{
	if (lost)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	int blocked = l->hung;
	for (uint32_t i = 0; i < nwait; i++)
		blocked |= !wait[i]->signalled;
	if (blocked && signal)
		signal->pending = 1;
	return blocked ? 1 : 0;
}

static void signal_ev(ze_event_handle_t e, uint64_t start, uint64_t end)
{
	if (!e)
		return;
	e->signalled = 1;
	e->start = start;
	e->end = end;
}

EXPORT ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t l, void *dst, const void *src, size_t n,
                                                 ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait)
{
	GATE(l, signal, nwait, wait);
	if (!inside(dst, n) && !inside(src, n))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	memcpy(dst, src, n);
	uint64_t t = ticks();
	signal_ev(signal, t, t);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t l, void *ptr, const void *pattern,
                                                 size_t pattern_size, size_t n, ze_event_handle_t signal,
                                                 uint32_t nwait, ze_event_handle_t *wait)
{
	GATE(l, signal, nwait, wait);
	if (pattern_size == 0 || (pattern_size & (pattern_size - 1)) || n % pattern_size || !inside(ptr, n))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (pattern_size == 1)
		memset(ptr, *(const uint8_t *)pattern, n);
	else
		for (size_t i = 0; i < n; i += pattern_size)
			memcpy((char *)ptr + i, pattern, pattern_size);
	uint64_t t = ticks();
	signal_ev(signal, t, t);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeMemAllocDevice(ze_context_handle_t ctx, const ze_device_mem_alloc_desc_t *desc, size_t n,
                                    size_t align, ze_device_handle_t d, void **ptr)
{
	(void)ctx;
	(void)d;
	if (lost)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	if (desc->stype != ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC || (align & (align - 1)))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (n > ((size_t)24 << 30))
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	if (!(*ptr = dev_alloc(n, align ? align : 64)))
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeMemFree(ze_context_handle_t ctx, void *ptr)
{
	(void)ctx;
	return dev_free(ptr) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

static ze_module_build_log_handle_t make_log(const char *text)
{
	ze_module_build_log_handle_t l = calloc(1, sizeof *l);
	l->text = strdup(text);
	return l;
}

EXPORT ze_result_t zeModuleCreate(ze_context_handle_t ctx, ze_device_handle_t d, const ze_module_desc_t *desc,
                                  ze_module_handle_t *mod, ze_module_build_log_handle_t *log)
{
	(void)ctx;
	(void)d;
	if (log)
		*log = NULL;
	if (lost)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	const uint8_t *in = desc->pInputModule;
	size_t n = desc->inputSize;
	uint32_t magic = 0;
	if (n >= 4)
		memcpy(&magic, in, 4);
	if (n < 20 || n % 4 || magic != 0x07230203u) {
		if (log)
			*log = make_log("fake_ze: input is not SPIR-V (bad magic or size)");
		return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
	}
	if (desc->pBuildFlags && strstr(desc->pBuildFlags, "-fake-build-error")) {
		if (log)
			*log = make_log("fake_ze: error: build failure requested by -fake-build-error");
		return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
	}
	struct _ze_module_handle_t *m = own(calloc(1, sizeof *m));
	size_t nw = n / 4;
	for (size_t w = 5; w < nw;) {
		uint32_t word;
		memcpy(&word, in + 4 * w, 4);
		uint32_t wc = word >> 16, op = word & 0xffff;
		if (wc == 0 || w + wc > nw) {
			disown(m);
			if (log)
				*log = make_log("fake_ze: malformed SPIR-V instruction stream");
			return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
		}
		if (op == 15 /* OpEntryPoint */ && wc > 3 && m->nnames < 8) {
			const char *name = (const char *)(in + 4 * (w + 3));
			size_t maxlen = 4 * (wc - 3);
			snprintf(m->names[m->nnames++], sizeof m->names[0], "%.*s", (int)strnlen(name, maxlen), name);
		}
		w += wc;
	}
	if (desc->pConstants)
		for (uint32_t i = 0; i < desc->pConstants->numConstants; i++)
			if (desc->pConstants->pConstantIds[i] == 7)
				m->spec7 = *(const uint32_t *)desc->pConstants->pConstantValues[i];
	*mod = m;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeModuleDestroy(ze_module_handle_t m)
{
	disown(m);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t l, size_t *size, char *text)
{
	size_t need = strlen(l->text) + 1;
	if (!text) {
		*size = need;
		return ZE_RESULT_SUCCESS;
	}
	if (*size < need)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	memcpy(text, l->text, need);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t l)
{
	free(l->text);
	free(l);
	return ZE_RESULT_SUCCESS;
}

static const struct { const char *name; kind_t kind; } builtins[] = {
	{ "fill_u32", K_FILL_U32 }, { "add_f32", K_ADD_F32 }, { "kgb_health", K_HEALTH },
	{ "fault", K_FAULT },       { "hang", K_HANG },
};

EXPORT ze_result_t zeKernelCreate(ze_module_handle_t m, const ze_kernel_desc_t *desc, ze_kernel_handle_t *k)
{
	for (int i = 0; i < m->nnames; i++) {
		if (strcmp(m->names[i], desc->pKernelName) != 0)
			continue;
		for (size_t j = 0; j < sizeof builtins / sizeof builtins[0]; j++)
			if (strcmp(builtins[j].name, desc->pKernelName) == 0) {
				struct _ze_kernel_handle_t *kk = own(calloc(1, sizeof *kk));
				kk->kind = builtins[j].kind;
				kk->mod = m;
				kk->gx = kk->gy = kk->gz = 1;
				*k = kk;
				return ZE_RESULT_SUCCESS;
			}
	}
	return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
}

EXPORT ze_result_t zeKernelDestroy(ze_kernel_handle_t k)
{
	disown(k);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z)
{
	if (x == 0 || y == 0 || z == 0 || (uint64_t)x * y * z > 1024)
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	k->gx = x;
	k->gy = y;
	k->gz = z;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t index, size_t size, const void *value)
{
	if (index >= MAX_ARGS)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
	if (size > 8 && value)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
	k->args[index] = 0;
	if (value)
		memcpy(&k->args[index], value, size);
	return ZE_RESULT_SUCCESS;
}

static void *arg_ptr(ze_kernel_handle_t k, int i)
{
	void *p;
	memcpy(&p, &k->args[i], sizeof p);
	return p;
}

EXPORT ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                                   const ze_group_count_t *groups, ze_event_handle_t signal,
                                                   uint32_t nwait, ze_event_handle_t *wait)
{
	GATE(l, signal, nwait, wait);
	uint64_t items = (uint64_t)groups->groupCountX * k->gx;
	uint64_t t0 = ticks();
	switch (k->kind) {
	case K_FILL_U32: {
		uint32_t *out = arg_ptr(k, 0);
		uint32_t v = (uint32_t)k->args[1] + k->mod->spec7, n = (uint32_t)k->args[2];
		for (uint64_t i = 0; i < items && i < n; i++) {
			if (!inside(out + i, 4)) {
				lost = 1;
				return ZE_RESULT_SUCCESS;
			}
			out[i] = v;
		}
		break;
	}
	case K_ADD_F32: {
		const float *a = arg_ptr(k, 0), *b = arg_ptr(k, 1);
		float *c = arg_ptr(k, 2);
		int32_t n = (int32_t)k->args[3];
		for (uint64_t i = 0; i < items && (int64_t)i < n; i++) {
			if (!inside(a + i, 4) || !inside(b + i, 4) || !inside(c + i, 4)) {
				lost = 1;
				return ZE_RESULT_SUCCESS;
			}
			c[i] = a[i] + b[i];
		}
		break;
	}
	case K_HEALTH: {
		uint32_t *out = arg_ptr(k, 0);
		uint32_t n = (uint32_t)k->args[1];
		for (uint64_t i = 0; i < items && i < n; i++) {
			if (!inside(out + i, 4)) {
				lost = 1;
				return ZE_RESULT_SUCCESS;
			}
			out[i] = (uint32_t)i * 2654435761u + 12345u;
		}
		break;
	}
	case K_FAULT:
		lost = 1;
		return ZE_RESULT_SUCCESS; /* the error shows when the host waits */
	case K_HANG:
		l->hung = 1;
		if (signal)
			signal->pending = 1;
		return ZE_RESULT_SUCCESS;
	}
	uint64_t t1 = ticks();
	if (t1 == t0)
		t1 = (t0 + 1) & 0xffffffffull; /* a kernel takes at least one tick */
	signal_ev(signal, t0, t1);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeEventPoolCreate(ze_context_handle_t ctx, const ze_event_pool_desc_t *desc, uint32_t ndev,
                                     ze_device_handle_t *devs, ze_event_pool_handle_t *pool)
{
	(void)ctx;
	(void)ndev;
	(void)devs;
	if (desc->stype != ZE_STRUCTURE_TYPE_EVENT_POOL_DESC || desc->count == 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	struct _ze_event_pool_handle_t *p = own(calloc(1, sizeof *p));
	p->count = desc->count;
	p->flags = desc->flags;
	p->ev = calloc(desc->count, sizeof *p->ev);
	*pool = p;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t p)
{
	free(p->ev);
	disown(p);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeEventCreate(ze_event_pool_handle_t p, const ze_event_desc_t *desc, ze_event_handle_t *ev)
{
	if (desc->stype != ZE_STRUCTURE_TYPE_EVENT_DESC || desc->index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	*ev = &p->ev[desc->index];
	memset(*ev, 0, sizeof **ev);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeEventDestroy(ze_event_handle_t ev)
{
	(void)ev;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeEventHostSynchronize(ze_event_handle_t ev, uint64_t timeout)
{
	if (ev->signalled)
		return ZE_RESULT_SUCCESS;
	if (lost)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	sleep_ns(timeout);
	return ZE_RESULT_NOT_READY;
}

EXPORT ze_result_t zeEventHostReset(ze_event_handle_t ev)
{
	if (lost)
		return ZE_RESULT_ERROR_DEVICE_LOST;
	memset(ev, 0, sizeof *ev);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeEventQueryKernelTimestamp(ze_event_handle_t ev, ze_kernel_timestamp_result_t *ts)
{
	if (!ev->signalled)
		return ZE_RESULT_NOT_READY;
	ts->global.kernelStart = ts->context.kernelStart = ev->start;
	ts->global.kernelEnd = ts->context.kernelEnd = ev->end;
	return ZE_RESULT_SUCCESS;
}
