/* The vendor entry points the HIP backend uses, resolved at run time with dlsym.
 *
 * No ROCm header is included: the worker builds without the HIP SDK and starts on
 * machines without a driver. The handful of types are declared here with the layout
 * of the published C API (opaque handles, int error codes, device pointers as void *).
 *
 * Each table is one X-macro list: X(ret, name, args, "symbol", "fallback", required)
 * produces the struct of function pointers and the table the loader walks. The loader
 * tries the symbol, then the fallback ("" = none); an entry with required = false may
 * stay NULL. */
#ifndef KGB_HIP_API_H
#define KGB_HIP_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- HIP runtime ---- */

typedef int hipError_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef void *hipDeviceptr_t;

#define hipSuccess 0
#define hipErrorInvalidValue 1
#define hipErrorOutOfMemory 2
#define hipErrorNotInitialized 3
#define hipErrorInvalidConfiguration 9
#define hipErrorPriorLaunchFailure 53
#define hipErrorInvalidDeviceFunction 98
#define hipErrorNoDevice 100
#define hipErrorInvalidDevice 101
#define hipErrorInvalidImage 200
#define hipErrorNoBinaryForGpu 209
#define hipErrorInvalidKernelFile 218
#define hipErrorInvalidSource 300
#define hipErrorSharedObjectInitFailed 303
#define hipErrorNotFound 500
#define hipErrorNotReady 600
#define hipErrorIllegalAddress 700
#define hipErrorLaunchOutOfResources 701
#define hipErrorLaunchTimeOut 702
#define hipErrorAssert 710
#define hipErrorLaunchFailure 719
#define hipErrorCooperativeLaunchTooLarge 720
#define hipErrorNotSupported 801
#define hipErrorUnknown 999

#define hipStreamNonBlocking 0x1
#define hipEventDefault 0x0

/* hipDeviceProp_t changed layout in ROCm 6 ("R0600", symbol
 * hipGetDevicePropertiesR0600); ROCm 5 has the older one ("R0000", symbol
 * hipGetDeviceProperties). Only the fields up to gcnArchName are declared, in order;
 * the runtime writes the whole struct, so it is always passed inside
 * kgb_hip_props_buf_t, which is larger than either. */
typedef struct kgb_hip_props_r0600 {
	char name[256];
	char uuid[16];
	char luid[8];
	unsigned luid_node_mask;
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int regsPerBlock, warpSize;
	size_t memPitch;
	int maxThreadsPerBlock;
	int maxThreadsDim[3], maxGridSize[3];
	int clockRate;
	size_t totalConstMem;
	int major, minor;
	size_t textureAlignment, texturePitchAlignment;
	int deviceOverlap;
	int multiProcessorCount;
	int kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
	int tex1D, tex1DMipmap, tex1DLinear, tex2D[2], tex2DMipmap[2], tex2DLinear[3], tex2DGather[2];
	int tex3D[3], tex3DAlt[3], texCubemap, tex1DLayered[2], tex2DLayered[3], texCubemapLayered[2];
	int surf1D, surf2D[2], surf3D[3], surf1DLayered[2], surf2DLayered[3], surfCubemap;
	int surfCubemapLayered[2];
	size_t surfaceAlignment;
	int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver;
	int asyncEngineCount, unifiedAddressing, memoryClockRate, memoryBusWidth;
	int l2CacheSize;
	int persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported;
	int globalL1CacheSupported, localL1CacheSupported;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
	int hostNativeAtomicSupported, singleToDoublePrecisionPerfRatio, pageableMemoryAccess;
	int concurrentManagedAccess, computePreemptionSupported, canUseHostPointerForRegisteredMem;
	int cooperativeLaunch, cooperativeMultiDeviceLaunch;
	size_t sharedMemPerBlockOptin;
	int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost;
	int maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize;
	size_t reservedSharedMemPerBlock;
	int hostRegisterSupported, sparseHipArraySupported, hostRegisterReadOnlySupported;
	int timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
	unsigned gpuDirectRDMAFlushWritesOptions;
	int gpuDirectRDMAWritesOrdering;
	unsigned memoryPoolSupportedHandleTypes;
	int deferredMappingHipArraySupported, ipcEventSupported, clusterLaunch;
	int unifiedFunctionPointers;
	int reserved[63];
	int hipReserved[32];
	char gcnArchName[256];
} kgb_hip_props_r0600_t;

typedef struct kgb_hip_props_r0000 {
	char name[256];
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int regsPerBlock, warpSize, maxThreadsPerBlock;
	int maxThreadsDim[3], maxGridSize[3];
	int clockRate, memoryClockRate, memoryBusWidth;
	size_t totalConstMem;
	int major, minor;
	int multiProcessorCount;
	int l2CacheSize;
	int maxThreadsPerMultiProcessor, computeMode, clockInstructionRate;
	uint32_t arch_flags;         /* hipDeviceArch_t: 17 one-bit fields */
	int concurrentKernels, pciDomainID, pciBusID, pciDeviceID;
	size_t maxSharedMemoryPerMultiProcessor;
	int isMultiGpuBoard, canMapHostMemory, gcnArch;
	char gcnArchName[256];
} kgb_hip_props_r0000_t;

/* Offsets checked against the ROCm headers (5.x: hip_runtime_api.h; 6.x: the R0600
 * struct). */
_Static_assert(offsetof(kgb_hip_props_r0000_t, totalGlobalMem) == 256, "R0000 layout");
_Static_assert(offsetof(kgb_hip_props_r0000_t, maxThreadsPerBlock) == 280, "R0000 layout");
_Static_assert(offsetof(kgb_hip_props_r0000_t, multiProcessorCount) == 336, "R0000 layout");
_Static_assert(offsetof(kgb_hip_props_r0000_t, l2CacheSize) == 340, "R0000 layout");
_Static_assert(offsetof(kgb_hip_props_r0000_t, gcnArchName) == 396, "R0000 layout");
_Static_assert(offsetof(kgb_hip_props_r0600_t, totalGlobalMem) == 288, "R0600 layout");
_Static_assert(offsetof(kgb_hip_props_r0600_t, maxThreadsPerBlock) == 320, "R0600 layout");
_Static_assert(offsetof(kgb_hip_props_r0600_t, multiProcessorCount) == 388, "R0600 layout");
_Static_assert(offsetof(kgb_hip_props_r0600_t, l2CacheSize) == 616, "R0600 layout");
_Static_assert(offsetof(kgb_hip_props_r0600_t, gcnArchName) == 1160, "R0600 layout");

typedef union kgb_hip_props_buf {
	kgb_hip_props_r0600_t r0600;
	kgb_hip_props_r0000_t r0000;
	char bytes[8192];
} kgb_hip_props_buf_t;

#define KGB_HIP_API(X)                                                                             \
	X(hipError_t, hipInit, (unsigned flags), "hipInit", "", true)                                  \
	X(hipError_t, hipDriverGetVersion, (int *v), "hipDriverGetVersion", "", true)                  \
	X(hipError_t, hipRuntimeGetVersion, (int *v), "hipRuntimeGetVersion", "", false)               \
	X(const char *, hipGetErrorName, (hipError_t e), "hipGetErrorName", "", true)                  \
	X(const char *, hipGetErrorString, (hipError_t e), "hipGetErrorString", "", true)              \
	X(hipError_t, hipGetDeviceCount, (int *n), "hipGetDeviceCount", "", true)                      \
	X(hipError_t, hipGetDevicePropertiesR0600, (void *props, int dev),                             \
	  "hipGetDevicePropertiesR0600", "", false)                                                    \
	X(hipError_t, hipGetDevicePropertiesR0000, (void *props, int dev),                             \
	  "hipGetDevicePropertiesR0000", "hipGetDeviceProperties", false)                              \
	X(hipError_t, hipSetDevice, (int dev), "hipSetDevice", "", true)                               \
	X(hipError_t, hipStreamCreateWithFlags, (hipStream_t * s, unsigned flags),                    \
	  "hipStreamCreateWithFlags", "", true)                                                        \
	X(hipError_t, hipStreamDestroy, (hipStream_t s), "hipStreamDestroy", "", true)                 \
	X(hipError_t, hipStreamQuery, (hipStream_t s), "hipStreamQuery", "", true)                     \
	X(hipError_t, hipStreamSynchronize, (hipStream_t s), "hipStreamSynchronize", "", true)         \
	X(hipError_t, hipMalloc, (void **p, size_t n), "hipMalloc", "", true)                          \
	X(hipError_t, hipFree, (void *p), "hipFree", "", true)                                         \
	X(hipError_t, hipMemcpyHtoDAsync, (hipDeviceptr_t dst, void *src, size_t n, hipStream_t s),    \
	  "hipMemcpyHtoDAsync", "", true)                                                              \
	X(hipError_t, hipMemcpyDtoHAsync, (void *dst, hipDeviceptr_t src, size_t n, hipStream_t s),    \
	  "hipMemcpyDtoHAsync", "", true)                                                              \
	X(hipError_t, hipMemcpyDtoDAsync, (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n,           \
	  hipStream_t s), "hipMemcpyDtoDAsync", "", true)                                              \
	X(hipError_t, hipMemsetD8Async, (hipDeviceptr_t p, unsigned char v, size_t n, hipStream_t s),  \
	  "hipMemsetD8Async", "", true)                                                                \
	X(hipError_t, hipModuleLoadData, (hipModule_t * m, const void *image), "hipModuleLoadData",   \
	  "", true)                                                                                    \
	X(hipError_t, hipModuleUnload, (hipModule_t m), "hipModuleUnload", "", true)                   \
	X(hipError_t, hipModuleGetFunction, (hipFunction_t * f, hipModule_t m, const char *name),     \
	  "hipModuleGetFunction", "", true)                                                            \
	X(hipError_t, hipModuleLaunchKernel,                                                           \
	  (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,           \
	   unsigned bz, unsigned shared, hipStream_t s, void **params, void **extra),                  \
	  "hipModuleLaunchKernel", "", true)                                                           \
	X(hipError_t, hipEventCreateWithFlags, (hipEvent_t * e, unsigned flags),                       \
	  "hipEventCreateWithFlags", "", true)                                                         \
	X(hipError_t, hipEventDestroy, (hipEvent_t e), "hipEventDestroy", "", true)                    \
	X(hipError_t, hipEventRecord, (hipEvent_t e, hipStream_t s), "hipEventRecord", "", true)       \
	X(hipError_t, hipEventElapsedTime, (float *ms, hipEvent_t a, hipEvent_t b),                   \
	  "hipEventElapsedTime", "", true)

/* ---- HIPRTC (HIP C++ to a code object; runs without a GPU) ---- */

typedef int hiprtcResult;
typedef struct _hiprtcProgram *hiprtcProgram;
#define HIPRTC_SUCCESS 0

#define KGB_HIPRTC_API(X)                                                                          \
	X(hiprtcResult, hiprtcVersion, (int *major, int *minor), "hiprtcVersion", "", true)            \
	X(const char *, hiprtcGetErrorString, (hiprtcResult r), "hiprtcGetErrorString", "", true)      \
	X(hiprtcResult, hiprtcCreateProgram,                                                           \
	  (hiprtcProgram * p, const char *src, const char *name, int nheaders,                         \
	   const char *const *hdrs, const char *const *include_names),                                 \
	  "hiprtcCreateProgram", "", true)                                                             \
	X(hiprtcResult, hiprtcDestroyProgram, (hiprtcProgram * p), "hiprtcDestroyProgram", "", true)   \
	X(hiprtcResult, hiprtcCompileProgram, (hiprtcProgram p, int nopts, const char *const *opts),  \
	  "hiprtcCompileProgram", "", true)                                                            \
	X(hiprtcResult, hiprtcGetProgramLogSize, (hiprtcProgram p, size_t *n),                         \
	  "hiprtcGetProgramLogSize", "", true)                                                         \
	X(hiprtcResult, hiprtcGetProgramLog, (hiprtcProgram p, char *log), "hiprtcGetProgramLog", "",  \
	  true)                                                                                        \
	X(hiprtcResult, hiprtcGetCodeSize, (hiprtcProgram p, size_t *n), "hiprtcGetCodeSize", "",      \
	  true)                                                                                        \
	X(hiprtcResult, hiprtcGetCode, (hiprtcProgram p, char *code), "hiprtcGetCode", "", true)

#define KGB_HIP_X_FIELD(ret, name, args, sym, fallback, required) ret(*name) args;

typedef struct kgb_hip_api { KGB_HIP_API(KGB_HIP_X_FIELD) } kgb_hip_api_t;
typedef struct kgb_hiprtc_api { KGB_HIPRTC_API(KGB_HIP_X_FIELD) } kgb_hiprtc_api_t;

/* One entry of a symbol table (for the loader and the unit tests). */
typedef struct kgb_hip_sym {
	const char *field;
	const char *symbol;
	const char *fallback;
	bool required;
} kgb_hip_sym_t;

/* The tables, in struct order; *n gets the length. Entry i fills the i-th function
 * pointer of its struct. */
const kgb_hip_sym_t *kgb_hip_runtime_syms(size_t *n);
const kgb_hip_sym_t *kgb_hip_rtc_syms(size_t *n);

/* Resolve table syms from the dlopen handle lib into the struct of function pointers
 * at api. Returns 0, or -1 naming the first missing required symbol in err. */
int kgb_hip_resolve(void *lib, const kgb_hip_sym_t *syms, size_t n, void *api, char *err,
                    size_t errlen);

/* Load the HIP runtime once per process: KGB_HIP_LIBRARY when set, else
 * libamdhip64.so.6, .so.5, .so. NULL with "no HIP runtime (<name>: <dlerror>)" in why
 * when absent. The table lives until the process exits. */
const kgb_hip_api_t *kgb_hip_runtime(char *why, size_t whylen);
/* HIPRTC once per process: KGB_HIPRTC_LIBRARY, else libhiprtc.so.6, .so.5, .so, else
 * the HIP runtime library itself (ROCm 5 shipped HIPRTC inside it). NULL with the
 * reason. */
const kgb_hiprtc_api_t *kgb_hip_rtc(char *why, size_t whylen);

/* HIP error -> KGB_BE_*: faults that kill the context (illegal address, launch
 * failure, assert) -> KGB_BE_FAULT, launch limits -> KGB_BE_RESOURCE, bad code objects
 * and missing kernels -> KGB_BE_COMPILE, out of memory -> KGB_BE_NOMEM, else
 * KGB_BE_ERR. */
int kgb_hip_classify(hipError_t e);

/* The device's processor name without target features: "gfx942:sramecc+:xnack-" ->
 * "gfx942" into out. */
void kgb_hip_arch_base(const char *gcn_arch_name, char *out, size_t outlen);

/* The text put in front of every HIP candidate: fp16/bf16 headers when a tensor needs
 * them, T_<name>, LOAD_<name>(p, i), STORE_<name>(p, i, v), KGB_DTYPE_<name>_<dt>,
 * KGB_HIP, then `#line 1 "<file>"`. Heap string; the caller frees. */
struct kgb_compile_req;
char *kgb_hip_prelude(const struct kgb_compile_req *req);

#endif
