/* The vendor entry points the CUDA backend uses, resolved at run time with dlsym.
 *
 * Nothing here includes a vendor header: the worker builds on machines with no CUDA
 * toolkit and starts on machines with no driver. The types are declared with the
 * layout of the published C API (opaque handles, int enums, 64-bit device pointers).
 *
 * Each table is one X-macro list. X(ret, name, args, "symbol", "fallback symbol")
 * produces both the struct of function pointers and the loop that fills it: the
 * loader tries the first symbol, then the fallback (versioned names such as
 * cuMemAlloc_v2 come first; "" means none). Every entry is required unless its list
 * is marked optional below. */
#ifndef KGB_CUDA_API_H
#define KGB_CUDA_API_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "dtype.h"

/* ---- CUDA driver API ---- */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_IMAGE 200
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_NO_BINARY_FOR_GPU 209
#define CUDA_ERROR_INVALID_PTX 218
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CUDA_ERROR_INVALID_SOURCE 300
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_ILLEGAL_ADDRESS 700
#define CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES 701
#define CUDA_ERROR_LAUNCH_TIMEOUT 702
#define CUDA_ERROR_ASSERT 710
#define CUDA_ERROR_HARDWARE_STACK_ERROR 714
#define CUDA_ERROR_ILLEGAL_INSTRUCTION 715
#define CUDA_ERROR_MISALIGNED_ADDRESS 716
#define CUDA_ERROR_INVALID_ADDRESS_SPACE 717
#define CUDA_ERROR_INVALID_PC 718
#define CUDA_ERROR_LAUNCH_FAILED 719
#define CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE 720
#define CUDA_ERROR_INVALID_CLUSTER_SIZE 912

#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK 8
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE 38
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT 9
#define CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED 14

#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DEFAULT 0x0

#define CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2
#define CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4

typedef struct CUlaunchAttribute {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int cooperative;
		struct { unsigned x, y, z; } cluster_dim;
	} value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
	unsigned grid_x, grid_y, grid_z;
	unsigned block_x, block_y, block_z;
	unsigned shared_bytes;
	CUstream stream;
	CUlaunchAttribute *attrs;
	unsigned nattrs;
} CUlaunchConfig;

/* Layout checks against the published ABI (CUlaunchAttribute is 72 bytes). */
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");
_Static_assert(offsetof(CUlaunchConfig, stream) == 32, "CUlaunchConfig layout");

#define KGB_CUDA_DRIVER_API(X)                                                                     \
	X(CUresult, cuInit, (unsigned flags), "cuInit", "")                                            \
	X(CUresult, cuDriverGetVersion, (int *v), "cuDriverGetVersion", "")                            \
	X(CUresult, cuGetErrorString, (CUresult e, const char **s), "cuGetErrorString", "")           \
	X(CUresult, cuGetErrorName, (CUresult e, const char **s), "cuGetErrorName", "")               \
	X(CUresult, cuDeviceGetCount, (int *n), "cuDeviceGetCount", "")                                \
	X(CUresult, cuDeviceGet, (CUdevice *d, int ordinal), "cuDeviceGet", "")                        \
	X(CUresult, cuDeviceGetName, (char *name, int len, CUdevice d), "cuDeviceGetName", "")         \
	X(CUresult, cuDeviceGetAttribute, (int *v, int attr, CUdevice d), "cuDeviceGetAttribute", "") \
	X(CUresult, cuDeviceTotalMem, (size_t *bytes, CUdevice d), "cuDeviceTotalMem_v2",             \
	  "cuDeviceTotalMem")                                                                          \
	X(CUresult, cuDeviceGetPCIBusId, (char *id, int len, CUdevice d), "cuDeviceGetPCIBusId", "")   \
	X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d), "cuDevicePrimaryCtxRetain",  \
	  "")                                                                                          \
	X(CUresult, cuDevicePrimaryCtxRelease, (CUdevice d), "cuDevicePrimaryCtxRelease_v2",           \
	  "cuDevicePrimaryCtxRelease")                                                                 \
	X(CUresult, cuCtxSetCurrent, (CUcontext c), "cuCtxSetCurrent", "")                             \
	X(CUresult, cuCtxSynchronize, (void), "cuCtxSynchronize", "")                                  \
	X(CUresult, cuCtxResetPersistingL2Cache, (void), "cuCtxResetPersistingL2Cache", "")            \
	X(CUresult, cuMemAlloc, (CUdeviceptr *p, size_t n), "cuMemAlloc_v2", "cuMemAlloc")             \
	X(CUresult, cuMemFree, (CUdeviceptr p), "cuMemFree_v2", "cuMemFree")                           \
	X(CUresult, cuMemGetInfo, (size_t *free_b, size_t *total), "cuMemGetInfo_v2", "cuMemGetInfo")  \
	X(CUresult, cuMemHostAlloc, (void **p, size_t n, unsigned flags), "cuMemHostAlloc", "")       \
	X(CUresult, cuMemFreeHost, (void *p), "cuMemFreeHost", "")                                     \
	X(CUresult, cuMemHostGetDevicePointer, (CUdeviceptr * d, void *p, unsigned flags),             \
	  "cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer")                                 \
	X(CUresult, cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t n), "cuMemcpyHtoD_v2",    \
	  "cuMemcpyHtoD")                                                                              \
	X(CUresult, cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t n), "cuMemcpyDtoH_v2",          \
	  "cuMemcpyDtoH")                                                                              \
	X(CUresult, cuMemsetD8, (CUdeviceptr p, unsigned char v, size_t n), "cuMemsetD8_v2",          \
	  "cuMemsetD8")                                                                                \
	X(CUresult, cuMemsetD8Async, (CUdeviceptr p, unsigned char v, size_t n, CUstream s),          \
	  "cuMemsetD8Async", "")                                                                       \
	X(CUresult, cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src, size_t n, CUstream s),      \
	  "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync")                                                 \
	X(CUresult, cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t n, CUstream s),            \
	  "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync")                                                 \
	X(CUresult, cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),      \
	  "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync")                                                 \
	X(CUresult, cuStreamCreate, (CUstream *s, unsigned flags), "cuStreamCreate", "")               \
	X(CUresult, cuStreamDestroy, (CUstream s), "cuStreamDestroy_v2", "cuStreamDestroy")            \
	X(CUresult, cuStreamQuery, (CUstream s), "cuStreamQuery", "")                                  \
	X(CUresult, cuStreamSynchronize, (CUstream s), "cuStreamSynchronize", "")                      \
	X(CUresult, cuEventCreate, (CUevent *e, unsigned flags), "cuEventCreate", "")                  \
	X(CUresult, cuEventDestroy, (CUevent e), "cuEventDestroy_v2", "cuEventDestroy")                \
	X(CUresult, cuEventRecord, (CUevent e, CUstream s), "cuEventRecord", "")                       \
	X(CUresult, cuEventQuery, (CUevent e), "cuEventQuery", "")                                     \
	X(CUresult, cuEventElapsedTime, (float *ms, CUevent a, CUevent b), "cuEventElapsedTime_v2",   \
	  "cuEventElapsedTime")                                                                        \
	X(CUresult, cuModuleLoadDataEx,                                                                \
	  (CUmodule * m, const void *image, unsigned nopts, int *opts, void **vals),                   \
	  "cuModuleLoadDataEx", "")                                                                    \
	X(CUresult, cuModuleUnload, (CUmodule m), "cuModuleUnload", "")                                \
	X(CUresult, cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name),              \
	  "cuModuleGetFunction", "")                                                                   \
	X(CUresult, cuModuleGetGlobal, (CUdeviceptr * p, size_t *bytes, CUmodule m, const char *name), \
	  "cuModuleGetGlobal_v2", "cuModuleGetGlobal")                                                 \
	X(CUresult, cuFuncGetAttribute, (int *v, int attr, CUfunction f), "cuFuncGetAttribute", "")    \
	X(CUresult, cuFuncSetAttribute, (CUfunction f, int attr, int v), "cuFuncSetAttribute", "")     \
	X(CUresult, cuLaunchKernel,                                                                    \
	  (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
	   unsigned shared, CUstream s, void **params, void **extra),                                  \
	  "cuLaunchKernel", "")                                                                        \
	X(CUresult, cuLaunchKernelEx,                                                                  \
	  (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra), "cuLaunchKernelEx",  \
	  "")

/* ---- NVML (optional: clocks, temperature, throttle reasons) ---- */

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
#define NVML_SUCCESS 0
#define NVML_CLOCK_SM 1
#define NVML_TEMPERATURE_GPU 0
/* Throttle ("clock event") reasons that mean the clock was held below what the load
 * asked for. Idle, application clock settings and sync boost are not throttling. */
#define KGB_NVML_THROTTLE_MASK                                                                     \
	(0x4ull /* sw power cap */ | 0x8ull /* hw slowdown */ | 0x20ull /* sw thermal */ |           \
	 0x40ull /* hw thermal */ | 0x80ull /* hw power brake */)

#define KGB_NVML_API(X)                                                                            \
	X(nvmlReturn_t, nvmlInit, (void), "nvmlInit_v2", "nvmlInit")                                   \
	X(nvmlReturn_t, nvmlShutdown, (void), "nvmlShutdown", "")                                      \
	X(nvmlReturn_t, nvmlDeviceGetHandleByPciBusId, (const char *bus, nvmlDevice_t *d),            \
	  "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId")                         \
	X(nvmlReturn_t, nvmlDeviceGetClockInfo, (nvmlDevice_t d, int type, unsigned *mhz),            \
	  "nvmlDeviceGetClockInfo", "")                                                                \
	X(nvmlReturn_t, nvmlDeviceGetTemperature, (nvmlDevice_t d, int sensor, unsigned *t),          \
	  "nvmlDeviceGetTemperature", "")                                                              \
	X(nvmlReturn_t, nvmlDeviceGetCurrentClocksThrottleReasons,                                     \
	  (nvmlDevice_t d, unsigned long long *reasons), "nvmlDeviceGetCurrentClocksEventReasons",    \
	  "nvmlDeviceGetCurrentClocksThrottleReasons")                                                 \
	X(nvmlReturn_t, nvmlSystemGetDriverVersion, (char *v, unsigned len),                           \
	  "nvmlSystemGetDriverVersion", "")

/* ---- NVRTC (CUDA C to PTX / cubin; runs without a GPU) ---- */

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
#define NVRTC_SUCCESS 0

#define KGB_NVRTC_API(X)                                                                           \
	X(nvrtcResult, nvrtcVersion, (int *major, int *minor), "nvrtcVersion", "")                     \
	X(const char *, nvrtcGetErrorString, (nvrtcResult r), "nvrtcGetErrorString", "")               \
	X(nvrtcResult, nvrtcCreateProgram,                                                             \
	  (nvrtcProgram * p, const char *src, const char *name, int nheaders, const char *const *hdrs, \
	   const char *const *include_names),                                                          \
	  "nvrtcCreateProgram", "")                                                                    \
	X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram * p), "nvrtcDestroyProgram", "")             \
	X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram p, int nopts, const char *const *opts),     \
	  "nvrtcCompileProgram", "")                                                                   \
	X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram p, size_t *n), "nvrtcGetProgramLogSize",  \
	  "")                                                                                          \
	X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram p, char *log), "nvrtcGetProgramLog", "")      \
	X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram p, size_t *n), "nvrtcGetPTXSize", "")            \
	X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram p, char *ptx), "nvrtcGetPTX", "")                    \
	X(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram p, size_t *n), "nvrtcGetCUBINSize", "")        \
	X(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram p, char *bin), "nvrtcGetCUBIN", "")

#define KGB_CUDA_X_FIELD(ret, name, args, sym, fallback) ret(*name) args;

typedef struct kgb_cuda_api { KGB_CUDA_DRIVER_API(KGB_CUDA_X_FIELD) } kgb_cuda_api_t;
typedef struct kgb_nvml_api { KGB_NVML_API(KGB_CUDA_X_FIELD) } kgb_nvml_api_t;
typedef struct kgb_nvrtc_api { KGB_NVRTC_API(KGB_CUDA_X_FIELD) } kgb_nvrtc_api_t;

/* One entry of a symbol table, for the loader and the unit tests. */
typedef struct kgb_cuda_sym {
	const char *field;     /* name of the struct member */
	const char *symbol;    /* first symbol tried */
	const char *fallback;  /* second, or "" */
	size_t offset;         /* offset of the member in the api struct */
} kgb_cuda_sym_t;

/* The symbol tables (static arrays; *n gets the length). */
const kgb_cuda_sym_t *kgb_cuda_driver_syms(size_t *n);
const kgb_cuda_sym_t *kgb_cuda_nvml_syms(size_t *n);
const kgb_cuda_sym_t *kgb_cuda_nvrtc_syms(size_t *n);

/* Resolve every symbol of table syms from the dlopen handle `lib` into the struct at
 * api. Returns 0, or -1 with the first missing symbol named in err. */
int kgb_cuda_resolve(void *lib, const kgb_cuda_sym_t *syms, size_t n, void *api, char *err,
                     size_t errlen);

/* Load the CUDA driver (libcuda.so.1) once per process; later calls return the same
 * table. Returns NULL with "no CUDA driver (libcuda.so.1: <dlerror>)" in why when
 * absent. The environment variable KGB_CUDA_DRIVER_LIB overrides the library name
 * (used by tests). The table lives until the process exits. */
const kgb_cuda_api_t *kgb_cuda_driver(char *why, size_t whylen);
/* NVRTC: tries KGB_CUDA_NVRTC_LIB, then libnvrtc.so.13, .so.12, .so. NULL with the reason. */
const kgb_nvrtc_api_t *kgb_cuda_nvrtc(char *why, size_t whylen);
/* NVML (libnvidia-ml.so.1), initialised. NULL with the reason. */
const kgb_nvml_api_t *kgb_cuda_nvml(char *why, size_t whylen);

/* Map a driver error to a KGB_BE_* code: faults that kill the context -> KGB_BE_FAULT,
 * resource limits -> KGB_BE_RESOURCE, bad images -> KGB_BE_COMPILE, out of memory ->
 * KGB_BE_NOMEM, the rest -> KGB_BE_ERR. */
int kgb_cuda_classify(CUresult r);

/* Compile CUDA C with NVRTC for sm_<arch> (e.g. 90) into a cubin (want_ptx false) or
 * PTX text. opts are extra NVRTC options (may be NULL / 0). *out is a heap buffer the
 * caller frees, *outlen its size (PTX includes the NUL). log gets the compiler log.
 * Returns 0, KGB_BE_COMPILE for a source error, or KGB_BE_ERR when NVRTC is missing. */
int kgb_cuda_nvrtc_compile(const char *src, const char *name, int arch, bool want_ptx,
                           const char *const *opts, int nopts, char **out, size_t *outlen,
                           char *log, size_t loglen);

/* ---- the Triton launch ABI (kernel.abi.json, written by worker/triton_compile.py) ---- */

#define KGB_CUDA_ABI_MAX_ARGS 64

typedef struct kgb_cuda_abi {
	char kernel_name[256];
	int nargs;                 /* the non-constexpr parameters, in launch order */
	struct {
		char name[64];
		char type[16];         /* "*fp32", "i32", ... */
	} args[KGB_CUDA_ABI_MAX_ARGS];
	int num_warps;             /* block = 32 * num_warps threads */
	int num_ctas;
	uint32_t shared;           /* dynamic shared memory bytes */
	uint32_t cluster[3];
	uint64_t gscratch_size, gscratch_align;  /* per program; 0 = pass NULL */
	uint64_t pscratch_size, pscratch_align;
	bool cooperative;
	char triton_version[32];
} kgb_cuda_abi_t;

/* Parse an ABI JSON text. origin names it in messages, which name the field and the
 * value ("kernel.abi.json: field 'shared': expected an integer, got \"x\""). Returns 0
 * or -1 with err filled. */
int kgb_cuda_abi_parse(const char *text, size_t len, const char *origin, kgb_cuda_abi_t *out,
                       char *err, size_t errlen);
/* Bytes of a Triton scalar type ("i32" 4, "fp64" 8), 0 for a pointer type, -1 unknown. */
int kgb_cuda_triton_type_size(const char *ty);

/* The text put in front of every CUDA C candidate: fp16/bf16 headers when a tensor
 * needs them, T_<name>, LOAD_<name>(p, i), STORE_<name>(p, i, v), KGB_DTYPE_<name>_<dt>,
 * then `#line 1 "<file>"`. Heap string; the caller frees. */
char *kgb_cuda_prelude(const char *const *names, const kgb_dtype_t *dtypes, size_t n,
                       const char *file);

/* Resolve "*@tensor" entries of a Triton signature to that tensor's pointer type in
 * this case ("*@x,i32" -> "*fp16,i32"). Heap string (caller frees), or NULL with err
 * naming the entry. */
char *kgb_cuda_triton_signature(const char *sig, const char *const *names, const kgb_dtype_t *dtypes,
                                size_t n, char *err, size_t errlen);

/* Compile req for sm_<arch> without a device, filling the compile cache (Triton and
 * CUDA C; PTX and cubin need nothing). Returns 0 or a KGB_BE_* code with err filled;
 * log gets the compiler's output. Lets a worker compile the next job while the
 * device runs the current one. */
struct kgb_compile_req;
int kgb_cuda_precompile(int arch, const struct kgb_compile_req *req, char *log, size_t loglen,
                        char *err, size_t errlen);

/* The compute capability of an open cuda context as an integer (90 for sm_90). */
int kgb_cuda_ctx_arch(void *ctx);

/* The names of the global variables (`__device__`, PTX `.global`) a module image
 * defines: from a cubin's symbol table (objects in its .nv.global sections) or, for
 * PTX text, from its module-scope .global declarations (not .extern ones). At most max
 * names of up to KGB_CUDA_NAME_MAX - 1 bytes (longer ones are skipped) go into names;
 * returns how many. A malformed image gives 0. */
#define KGB_CUDA_NAME_MAX 256
size_t kgb_cuda_global_names(const void *image, size_t len, char (*names)[KGB_CUDA_NAME_MAX], size_t max);
/* The PTX of the local memory scrub (kgb_backend_t.scrub_local): kgb_scrub_shared(u32
 * words, u32 salt) writes `words` words of dynamic shared memory in every block.
 * Static text. */
const char *kgb_cuda_scrub_ptx(void);
/* kgb_gate(u64 word, u32 token, u64 timeout_ns, u32 k): the timing gate (cuda.c). */
const char *kgb_cuda_gate_ptx(void);

#endif
