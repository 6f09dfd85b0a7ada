/* TEST DOUBLE: a fake HIP runtime and HIPRTC for the unit tests (libfakehip.so).
 *
 * There is no AMD GPU on the machines that build kgb, so the HIP backend is tested
 * against this stand-in, the way the OpenCL ICD loader is tested with a stub driver.
 * The backend loads it through KGB_HIP_LIBRARY (and KGB_HIPRTC_LIBRARY). It
 * implements the entry points the backend resolves, with host memory as "device"
 * memory and host functions as "kernels", run synchronously at launch:
 *
 *   code object  "KGBFAKEHSACO <offload-arch>\n<kernel names...>"; loading one built
 *                for another arch fails with hipErrorNoBinaryForGpu
 *   kernels      fill_u32(u32 *out, u32 v, u32 n), add_f32(const float *a,
 *                const float *b, float *c, i32 n), kgb_health(u32 *out, u32 n),
 *                fault() (the stream fails with hipErrorIllegalAddress), hang() (the
 *                stream never completes: hipStreamQuery stays hipErrorNotReady),
 *                kgb_scrub_shared(u32 words, u32 salt) (the backend's scrub: writes
 *                nothing, the stream log below records it)
 *   stream log   every queued copy, fill, event record and launch, in order, as words
 *                ("copy fill event launch:NAME ..."), read and cleared with
 *                kgb_fake_hip_stream_log(1), so that a test sees what ran between a
 *                sample's events
 *   bounds       every kernel access is checked against the live allocations; an
 *                access outside them is hipErrorIllegalAddress, as on hardware
 *   HIPRTC       "compiles" a source by listing its `__global__ void NAME(`
 *                kernels; a source containing `#error` fails with a log; the
 *                options must include --offload-arch=; the log echoes the options
 *
 * Environment: KGB_FAKE_HIP_DEVICES (default 1; 0 = hipErrorNoDevice),
 * KGB_FAKE_HIP_ARCH (default "gfx90a:sramecc+:xnack-").
 *
 * Several devices (docs/multi-gpu.md): KGB_FAKE_HIP_DEVICES is the number of
 * "physical" devices; HIP_VISIBLE_DEVICES is honoured as ROCm does: a comma-separated
 * list of physical indices, read up to the first entry that is not one (unset: all,
 * empty: none); ordinal i is then the i-th listed device. Device names carry the
 * physical index ("... (kgb test double 1)"). KGB_FAKE_HIP_TRACE=FILE appends one
 * line per event, so that tests can see what each process saw:
 *     open pid=P ordinal=O phys=N count=C visible=V t=MS     (hipSetDevice)
 *     launch pid=P phys=N kernel=NAME t=MS                   (first launch of a kernel)
 *     exit pid=P phys=N t=MS                                 (normal process exit)
 *     init pid=P t=MS          (a process's first hipInit; only with KGB_FAKE_HIP_TRACE_INIT=1)
 * V is HIP_VISIBLE_DEVICES as the process saw it ("-" when unset) and MS is
 * CLOCK_MONOTONIC in milliseconds. KGB_FAKE_HIP_KERNEL_US makes every fill_u32 /
 * add_f32 launch take that long (as a kernel on a device would), so that tests can
 * see two devices work at once. KGB_FAKE_HIP_RELEASE_MS and KGB_FAKE_HIP_RELEASE_ABORT:
 * see hipStreamDestroy.
 *
 * Built twice: libfakehip.so looks like ROCm 6 (hipGetDevicePropertiesR0600, the R0600
 * layout); with -DFAKE_HIP_ROCM5, libfakehip5.so looks like ROCm 5 (only
 * hipGetDeviceProperties, the older layout), so both property paths are tested. This
 * is not a HIP implementation: nothing here says anything about real hardware. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/backends/hip_api.h"
#include "fake_common.h"

struct ihipStream_t {
	hipError_t sticky;           /* an asynchronous error, reported by query / sync */
	int hung;
};

struct ihipEvent_t {
	double t_ms;
	int recorded;
	int pending;                 /* recorded on a hung stream: never completes */
};

typedef enum { K_FILL_U32 = 1, K_ADD_F32, K_HEALTH, K_FAULT, K_HANG, K_SCRUB } kind_t;

/* The stream log (see the top of the file): bounded, the oldest words dropped. */
static char stream_log[16384];

static void log_word(const char *w, const char *name)
{
	size_t n = strlen(stream_log), add = strlen(w) + (name ? strlen(name) + 1 : 0) + 1;
	if (n + add >= sizeof stream_log) {
		memmove(stream_log, stream_log + sizeof stream_log / 2, n - sizeof stream_log / 2 + 1);
		n = strlen(stream_log);
	}
	snprintf(stream_log + n, sizeof stream_log - n, "%s%s%s%s", n ? " " : "", w, name ? ":" : "", name ? name : "");
}

/* The stream log so far; reset: clear it after the copy returned (static storage). */
EXPORT const char *kgb_fake_hip_stream_log(int reset)
{
	static char out[sizeof stream_log];
	memcpy(out, stream_log, sizeof out);
	if (reset)
		stream_log[0] = 0;
	return out;
}

struct ihipModuleSymbol_t {
	kind_t kind;
	char name[64];
};

struct ihipModule_t {
	struct ihipModuleSymbol_t fns[16];
	int nfns;
};

static int initialised;
static int current_device;
static hipError_t context_error;     /* a fault is sticky for the whole process */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int physical_devices(void)
{
	const char *v = getenv("KGB_FAKE_HIP_DEVICES");
	return v && *v ? atoi(v) : 1;
}

#define MAX_FAKE_DEVICES 64
static int visible_map[MAX_FAKE_DEVICES]; /* ordinal -> physical index */

/* Parse HIP_VISIBLE_DEVICES (on every call: tests change the environment between
 * calls): the number of ordinals this process sees, their devices in visible_map. */
static int ndevices(void)
{
	int phys = physical_devices(), nvisible = 0;
	const char *v = getenv("HIP_VISIBLE_DEVICES");
	if (!v) {
		for (int i = 0; i < phys && i < MAX_FAKE_DEVICES; i++)
			visible_map[nvisible++] = i;
		return nvisible;
	}
	while (*v && nvisible < MAX_FAKE_DEVICES) {
		char *end;
		long d = strtol(v, &end, 10);
		if (end == v || d < 0 || d >= phys || (*end && *end != ','))
			break; /* the list ends at the first entry that names no device */
		int dup = 0;
		for (int i = 0; i < nvisible; i++)
			dup |= visible_map[i] == (int)d;
		if (dup)
			break;
		visible_map[nvisible++] = (int)d;
		v = *end ? end + 1 : end;
	}
	return nvisible;
}

static int physical_of(int ordinal)
{
	return ordinal >= 0 && ordinal < ndevices() ? visible_map[ordinal] : -1;
}

/* ---- the trace (KGB_FAKE_HIP_TRACE) ---- */

static int traced_phys = -1;   /* the device this process set, for the exit line */
static unsigned traced_kinds;  /* kernels whose first launch was traced */

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	const char *path = getenv("KGB_FAKE_HIP_TRACE");
	if (!path || !*path)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	/* one write on an O_APPEND descriptor: lines of concurrent processes never mix */
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	close(fd);
}

__attribute__((destructor)) static void trace_exit(void)
{
	if (traced_phys >= 0)
		trace("exit pid=%d phys=%d t=%.3f", (int)getpid(), traced_phys, now_ms());
}

static void kernel_delay(void)
{
	const char *v = getenv("KGB_FAKE_HIP_KERNEL_US");
	long us = v && *v ? atol(v) : 0;
	if (us <= 0)
		return;
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static const char *arch(void)
{
	const char *v = getenv("KGB_FAKE_HIP_ARCH");
	return v && *v ? v : "gfx90a:sramecc+:xnack-";
}

EXPORT hipError_t hipInit(unsigned flags)
{
	if (flags != 0)
		return hipErrorInvalidValue;
	const char *ti = getenv("KGB_FAKE_HIP_TRACE_INIT");
	if (!initialised && ti && strcmp(ti, "1") == 0)
		trace("init pid=%d t=%.3f", (int)getpid(), now_ms());
	initialised = 1;
	return hipSuccess;
}

EXPORT hipError_t hipDriverGetVersion(int *v)
{
	*v = 60241134; /* 6.2.41134 */
	return hipSuccess;
}

EXPORT hipError_t hipRuntimeGetVersion(int *v)
{
	*v = 60241134;
	return hipSuccess;
}

EXPORT const char *hipGetErrorName(hipError_t e)
{
	switch (e) {
	case hipSuccess: return "hipSuccess";
	case hipErrorInvalidValue: return "hipErrorInvalidValue";
	case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
	case hipErrorNotInitialized: return "hipErrorNotInitialized";
	case hipErrorNoDevice: return "hipErrorNoDevice";
	case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
	case hipErrorInvalidImage: return "hipErrorInvalidImage";
	case hipErrorNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
	case hipErrorNotFound: return "hipErrorNotFound";
	case hipErrorNotReady: return "hipErrorNotReady";
	case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
	case hipErrorLaunchOutOfResources: return "hipErrorLaunchOutOfResources";
	case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
	default: return "hipErrorUnknown";
	}
}

EXPORT const char *hipGetErrorString(hipError_t e)
{
	switch (e) {
	case hipErrorIllegalAddress: return "an illegal memory access was encountered (test double)";
	case hipErrorNotReady: return "device not ready (test double)";
	default: return "error reported by the HIP test double";
	}
}

EXPORT hipError_t hipGetDeviceCount(int *n)
{
	if (!initialised)
		return hipErrorNotInitialized;
	*n = ndevices();
	return *n > 0 ? hipSuccess : hipErrorNoDevice;
}

static void fill_props(void *out, int dev)
{
	char name[64];
	snprintf(name, sizeof name, "AMD Instinct MI210 (kgb test double %d)", physical_of(dev));
	/* either layout of the properties: the same field names */
#define FILL_PROPS(p, mem_gib, cus, l2_mib)                                                        \
	do {                                                                                           \
		memset(p, 0, sizeof *p);                                                                   \
		snprintf(p->name, sizeof p->name, "%s", name);                                             \
		snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", arch());                            \
		p->totalGlobalMem = (size_t)(mem_gib) << 30;                                               \
		p->sharedMemPerBlock = 64 << 10;                                                           \
		p->maxThreadsPerBlock = 1024;                                                              \
		p->multiProcessorCount = (cus);                                                            \
		p->l2CacheSize = (l2_mib) << 20;                                                           \
	} while (0)
#ifdef FAKE_HIP_ROCM5
	kgb_hip_props_r0000_t *p = out;
	FILL_PROPS(p, 32, 52, 4);
#else
	kgb_hip_props_r0600_t *p = out;
	FILL_PROPS(p, 64, 104, 8);
#endif
#undef FILL_PROPS
}

#ifdef FAKE_HIP_ROCM5
EXPORT hipError_t hipGetDeviceProperties(void *props, int dev)
#else
EXPORT hipError_t hipGetDevicePropertiesR0600(void *props, int dev)
#endif
{
	if (!initialised)
		return hipErrorNotInitialized;
	if (dev < 0 || dev >= ndevices())
		return hipErrorInvalidDevice;
	fill_props(props, dev);
	return hipSuccess;
}

EXPORT hipError_t hipSetDevice(int dev)
{
	if (dev < 0 || dev >= ndevices())
		return hipErrorInvalidDevice;
	current_device = dev;
	traced_phys = physical_of(dev);
	const char *vis = getenv("HIP_VISIBLE_DEVICES");
	trace("open pid=%d ordinal=%d phys=%d count=%d visible=%s t=%.3f", (int)getpid(), dev, traced_phys,
	      ndevices(), vis ? (*vis ? vis : "(empty)") : "-", now_ms());
	return hipSuccess;
}

/* A new handle's result: made, or out of memory. */
static hipError_t made(const void *handle)
{
	return handle ? hipSuccess : hipErrorOutOfMemory;
}

EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags)
{
	(void)flags;
	return made(*s = own(calloc(1, sizeof **s)));
}

/* The end of a context's release (the backend destroys its stream last), made slow
 * or fatal for tests of a worker whose executor ends after its job's result:
 * KGB_FAKE_HIP_RELEASE_MS sleeps that long; KGB_FAKE_HIP_RELEASE_ABORT=FILE aborts the
 * process if FILE exists, removing it first (once). */
EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
	disown(s);
	const char *ms = getenv("KGB_FAKE_HIP_RELEASE_MS");
	if (ms && *ms)
		usleep((useconds_t)atol(ms) * 1000);
	const char *flag = getenv("KGB_FAKE_HIP_RELEASE_ABORT");
	if (flag && *flag && unlink(flag) == 0)
		abort();
	return hipSuccess;
}

EXPORT hipError_t hipStreamQuery(hipStream_t s)
{
	if (s->sticky)
		return s->sticky;
	return s->hung ? hipErrorNotReady : hipSuccess;
}

EXPORT hipError_t hipStreamSynchronize(hipStream_t s)
{
	if (s->sticky)
		return s->sticky;
	if (s->hung) {
		/* a real runtime would block for ever; the double ends the test instead */
		fprintf(stderr, "fake_hip: hipStreamSynchronize on a hung stream would never return\n");
		_exit(99);
	}
	return hipSuccess;
}

EXPORT hipError_t hipMalloc(void **p, size_t n)
{
	if (context_error)
		return context_error;
	if (n > ((size_t)1 << 34))
		return hipErrorOutOfMemory;
	if (!(*p = dev_alloc(n, 0)))
		return hipErrorOutOfMemory;
	return hipSuccess;
}

EXPORT hipError_t hipFree(void *p)
{
	return dev_free(p) || !p ? hipSuccess : hipErrorInvalidValue;
}

static hipError_t stream_ok(hipStream_t s)
{
	if (context_error)
		return context_error;
	if (s->sticky)
		return s->sticky;
	if (s->hung)
		return hipErrorNotReady; /* would queue behind the hung kernel */
	return hipSuccess;
}

/* Whether a copy or fill on s may run: the stream's error, or the device ranges of n
 * bytes at dev0 and (when not NULL) dev1 outside the allocations. */
static hipError_t xfer_ok(hipStream_t s, const void *dev0, const void *dev1, size_t n)
{
	hipError_t e = stream_ok(s);
	if (e)
		return e;
	return inside(dev0, n) && (!dev1 || inside(dev1, n)) ? hipSuccess : hipErrorInvalidValue;
}

EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t n, hipStream_t s)
{
	hipError_t e = xfer_ok(s, dst, NULL, n);
	if (!e)
		memcpy(dst, src, n);
	return e;
}

EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t n, hipStream_t s)
{
	hipError_t e = xfer_ok(s, src, NULL, n);
	if (!e)
		memcpy(dst, src, n);
	return e;
}

EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s)
{
	hipError_t e = xfer_ok(s, dst, src, n);
	if (e)
		return e;
	memmove(dst, src, n);
	log_word("copy", NULL);
	return hipSuccess;
}

EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t p, unsigned char v, size_t n, hipStream_t s)
{
	hipError_t e = xfer_ok(s, p, NULL, n);
	if (e)
		return e;
	memset(p, v, n);
	log_word("fill", NULL);
	return hipSuccess;
}

static const struct { const char *name; kind_t kind; } builtins[] = {
	{ "fill_u32", K_FILL_U32 }, { "add_f32", K_ADD_F32 }, { "kgb_health", K_HEALTH },
	{ "fault", K_FAULT },       { "hang", K_HANG },         { "kgb_scrub_shared", K_SCRUB },
};

#define MAGIC "KGBFAKEHSACO "

EXPORT hipError_t hipModuleLoadData(hipModule_t *m, const void *image)
{
	const char *s = image;
	if (context_error)
		return context_error;
	if (strncmp(s, MAGIC, strlen(MAGIC)) != 0)
		return hipErrorInvalidImage;
	s += strlen(MAGIC);
	size_t al = strcspn(s, "\n");
	if (al != strlen(arch()) || strncmp(s, arch(), al) != 0)
		return hipErrorNoBinaryForGpu;
	s += al;
	struct ihipModule_t *mod = own(calloc(1, sizeof *mod));
	if (!mod)
		return hipErrorOutOfMemory;
	while (*s && mod->nfns < 16) {
		s += strspn(s, " \n");
		size_t n = strcspn(s, " \n");
		if (n == 0)
			break;
		for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
			if (strlen(builtins[i].name) == n && strncmp(builtins[i].name, s, n) == 0) {
				mod->fns[mod->nfns].kind = builtins[i].kind;
				snprintf(mod->fns[mod->nfns].name, sizeof mod->fns[0].name, "%s", builtins[i].name);
				mod->nfns++;
			}
		s += n;
	}
	*m = mod;
	return hipSuccess;
}

EXPORT hipError_t hipModuleUnload(hipModule_t m)
{
	disown(m);
	return hipSuccess;
}

EXPORT hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name)
{
	for (int i = 0; i < m->nfns; i++)
		if (strcmp(m->fns[i].name, name) == 0) {
			*f = &m->fns[i];
			return hipSuccess;
		}
	return hipErrorNotFound;
}

static void fault(hipStream_t s)
{
	s->sticky = hipErrorIllegalAddress;
	context_error = hipErrorIllegalAddress;
}

EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, hipStream_t s,
                                        void **params, void **extra)
{
	(void)extra;
	hipError_t e = stream_ok(s);
	if (e && e != hipErrorNotReady)
		return e;
	if ((uint64_t)bx * by * bz > 1024 || bx == 0 || by == 0 || bz == 0 || gx == 0 || gy == 0 || gz == 0)
		return hipErrorInvalidConfiguration;
	if (shared > (64u << 10))
		return hipErrorLaunchOutOfResources;
	if (s->hung)
		return hipSuccess; /* queued behind the hung kernel; never runs */
	if (!(traced_kinds & (1u << f->kind))) {
		traced_kinds |= 1u << f->kind;
		trace("launch pid=%d phys=%d kernel=%s t=%.3f", (int)getpid(), physical_of(current_device), f->name,
		      now_ms());
	}
	log_word("launch", f->name);
	if (f->kind == K_FILL_U32 || f->kind == K_ADD_F32)
		kernel_delay();
	uint64_t threads = (uint64_t)gx * bx;
	switch (f->kind) {
	case K_FILL_U32: {
		uint32_t *out = *(uint32_t **)params[0];
		uint32_t v = *(uint32_t *)params[1], n = *(uint32_t *)params[2];
		for (uint64_t i = 0; i < threads && i < n; i++) {
			if (!inside(out + i, 4))
				return fault(s), hipSuccess;
			out[i] = v;
		}
		break;
	}
	case K_ADD_F32: {
		const float *a = *(float **)params[0], *b = *(float **)params[1];
		float *c = *(float **)params[2];
		int32_t n = *(int32_t *)params[3];
		for (uint64_t i = 0; i < threads && (int64_t)i < n; i++) {
			if (!inside(a + i, 4) || !inside(b + i, 4) || !inside(c + i, 4))
				return fault(s), hipSuccess;
			c[i] = a[i] + b[i];
		}
		break;
	}
	case K_HEALTH: {
		uint32_t *out = *(uint32_t **)params[0];
		uint32_t n = *(uint32_t *)params[1];
		for (uint64_t i = 0; i < threads && i < n; i++) {
			if (!inside(out + i, 4))
				return fault(s), hipSuccess;
			out[i] = (uint32_t)i * 2654435761u + 12345u;
		}
		break;
	}
	case K_FAULT:
		fault(s);
		break;
	case K_HANG:
		s->hung = 1;
		break;
	case K_SCRUB:
		if (params == NULL || *(uint32_t *)params[0] * 4ull > shared)
			return hipErrorInvalidValue; /* the words it writes must fit its shared memory */
		break;
	}
	return hipSuccess;
}

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
	(void)flags;
	return made(*e = own(calloc(1, sizeof **e)));
}

EXPORT hipError_t hipEventDestroy(hipEvent_t e)
{
	disown(e);
	return hipSuccess;
}

EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	if (s->sticky)
		return s->sticky;
	e->recorded = 1;
	e->pending = s->hung;
	e->t_ms = now_ms();
	log_word("event", NULL);
	return hipSuccess;
}

EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
	if (!a->recorded || !b->recorded)
		return hipErrorInvalidValue;
	if (a->pending || b->pending)
		return hipErrorNotReady;
	*ms = (float)(b->t_ms - a->t_ms);
	return hipSuccess;
}

/* ---- HIPRTC ---- */

#define HIPRTC_ERROR_INVALID_INPUT 3
#define HIPRTC_ERROR_INVALID_OPTION 5
#define HIPRTC_ERROR_COMPILATION 6

struct _hiprtcProgram {
	char *src;
	char name[128];
	char *log;
	char *code;
	size_t code_len;
};

EXPORT hiprtcResult hiprtcVersion(int *major, int *minor)
{
	*major = 6;
	*minor = 2;
	return HIPRTC_SUCCESS;
}

EXPORT const char *hiprtcGetErrorString(hiprtcResult r)
{
	switch (r) {
	case HIPRTC_SUCCESS: return "HIPRTC_SUCCESS";
	case HIPRTC_ERROR_INVALID_OPTION: return "HIPRTC_ERROR_INVALID_OPTION";
	case HIPRTC_ERROR_COMPILATION: return "HIPRTC_ERROR_COMPILATION";
	default: return "HIPRTC_ERROR (test double)";
	}
}

EXPORT hiprtcResult hiprtcCreateProgram(hiprtcProgram *p, const char *src, const char *name, int nheaders,
                                        const char *const *hdrs, const char *const *include_names)
{
	(void)hdrs;
	(void)include_names;
	if (!src || nheaders != 0)
		return HIPRTC_ERROR_INVALID_INPUT;
	struct _hiprtcProgram *g = calloc(1, sizeof *g);
	g->src = strdup(src);
	snprintf(g->name, sizeof g->name, "%s", name ? name : "default_program");
	*p = g;
	return HIPRTC_SUCCESS;
}

EXPORT hiprtcResult hiprtcDestroyProgram(hiprtcProgram *p)
{
	if (*p) {
		free((*p)->src);
		free((*p)->log);
		free((*p)->code);
		free(*p);
		*p = NULL;
	}
	return HIPRTC_SUCCESS;
}

EXPORT hiprtcResult hiprtcCompileProgram(hiprtcProgram p, int nopts, const char *const *opts)
{
	const char *target = NULL;
	size_t cap = 256;
	for (int i = 0; i < nopts; i++) {
		cap += strlen(opts[i]) + 1;
		if (strncmp(opts[i], "--offload-arch=", 15) == 0)
			target = opts[i] + 15;
	}
	free(p->log);
	p->log = calloc(1, cap + 256);
	if (!target) {
		snprintf(p->log, cap, "%s: error: no --offload-arch= option (test double)\n", p->name);
		return HIPRTC_ERROR_INVALID_OPTION;
	}
	const char *err = strstr(p->src, "#error");
	if (err) {
		/* count lines the way a preprocessor does, honouring #line */
		int line = 1;
		for (const char *c = p->src; c < err; c++) {
			if (c == p->src || c[-1] == '\n') {
				if (strncmp(c, "#line ", 6) == 0) {
					line = atoi(c + 6) - 1;
				}
			}
			line += *c == '\n';
		}
		size_t n = strcspn(err, "\n");
		snprintf(p->log, cap, "%s:%d: error: %.*s (test double)\n", p->name, line, (int)n, err);
		return HIPRTC_ERROR_COMPILATION;
	}
	strcat(p->log, "fake hiprtc options:");
	for (int i = 0; i < nopts; i++) {
		strcat(p->log, " ");
		strcat(p->log, opts[i]);
	}
	strcat(p->log, "\n");
	/* the code object lists every `__global__ void NAME(` of the source */
	size_t ccap = strlen(p->src) + 64 + strlen(target);
	p->code = calloc(1, ccap);
	snprintf(p->code, ccap, "%s%s\n", MAGIC, target);
	for (const char *c = p->src; (c = strstr(c, "__global__ void ")) != NULL;) {
		c += strlen("__global__ void ");
		size_t n = strcspn(c, " (");
		strncat(p->code, c, n);
		strcat(p->code, " ");
	}
	p->code_len = strlen(p->code) + 1;
	return HIPRTC_SUCCESS;
}

EXPORT hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram p, size_t *n)
{
	*n = p->log ? strlen(p->log) + 1 : 1;
	return HIPRTC_SUCCESS;
}

EXPORT hiprtcResult hiprtcGetProgramLog(hiprtcProgram p, char *log)
{
	strcpy(log, p->log ? p->log : "");
	return HIPRTC_SUCCESS;
}

EXPORT hiprtcResult hiprtcGetCodeSize(hiprtcProgram p, size_t *n)
{
	*n = p->code_len;
	return HIPRTC_SUCCESS;
}

EXPORT hiprtcResult hiprtcGetCode(hiprtcProgram p, char *code)
{
	if (!p->code)
		return HIPRTC_ERROR_INVALID_INPUT;
	memcpy(code, p->code, p->code_len);
	return HIPRTC_SUCCESS;
}
