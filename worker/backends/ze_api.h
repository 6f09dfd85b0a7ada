/* The Level Zero entry points the level-zero backend uses, resolved at run time with
 * dlsym from the loader (libze_loader.so.1).
 *
 * No Level Zero header is included: the worker builds without the SDK. The structs
 * below have the layout of the published ze_api.h (version 1.x): every descriptor
 * starts with its structure type and a pNext chain, enums are 32-bit, handles are
 * opaque pointers. Only the members the backend reads or writes are named; the
 * static assertions pin the offsets the header gives.
 *
 * One X-macro list: X(ret, name, args, required). It produces the struct of function
 * pointers and the table the loader walks; an entry with required = false may stay
 * NULL (the backend then uses an older way). */
#ifndef KGB_ZE_API_H
#define KGB_ZE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t ze_result_t;

/* The first members of every properties struct (filled by the driver) and of every
 * descriptor (read by it): the structure type and the extension chain. */
#define ZE_PROPS_HEAD                                                                              \
	uint32_t stype;                                                                                \
	void *pNext;
#define ZE_DESC_HEAD                                                                               \
	uint32_t stype;                                                                                \
	const void *pNext;
typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct _ze_context_handle_t *ze_context_handle_t;
typedef struct _ze_command_list_handle_t *ze_command_list_handle_t;
typedef struct _ze_module_handle_t *ze_module_handle_t;
typedef struct _ze_module_build_log_handle_t *ze_module_build_log_handle_t;
typedef struct _ze_kernel_handle_t *ze_kernel_handle_t;
typedef struct _ze_event_pool_handle_t *ze_event_pool_handle_t;
typedef struct _ze_event_handle_t *ze_event_handle_t;

#define ZE_RESULT_SUCCESS 0u
#define ZE_RESULT_NOT_READY 1u
#define ZE_RESULT_ERROR_DEVICE_LOST 0x70000001u
#define ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY 0x70000002u
#define ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY 0x70000003u
#define ZE_RESULT_ERROR_MODULE_BUILD_FAILURE 0x70000004u
#define ZE_RESULT_ERROR_MODULE_LINK_FAILURE 0x70000005u
#define ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET 0x70000006u
#define ZE_RESULT_ERROR_UNINITIALIZED 0x78000001u
#define ZE_RESULT_ERROR_UNSUPPORTED_VERSION 0x78000002u
#define ZE_RESULT_ERROR_UNSUPPORTED_FEATURE 0x78000003u
#define ZE_RESULT_ERROR_INVALID_ARGUMENT 0x78000004u
#define ZE_RESULT_ERROR_INVALID_NULL_HANDLE 0x78000005u
#define ZE_RESULT_ERROR_INVALID_NULL_POINTER 0x78000007u
#define ZE_RESULT_ERROR_INVALID_SIZE 0x78000008u
#define ZE_RESULT_ERROR_UNSUPPORTED_SIZE 0x78000009u
#define ZE_RESULT_ERROR_INVALID_NATIVE_BINARY 0x7800000fu
#define ZE_RESULT_ERROR_INVALID_KERNEL_NAME 0x78000011u
#define ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION 0x78000013u
#define ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION 0x78000014u
#define ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX 0x78000015u
#define ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE 0x78000016u
#define ZE_RESULT_ERROR_UNKNOWN 0x7ffffffeu

#define ZE_INIT_FLAG_GPU_ONLY 1u
#define ZE_DEVICE_TYPE_GPU 1u
#define ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE 2u

#define ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES 0x1u
#define ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES 0x3u
#define ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES 0x4u
#define ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES 0x7u
#define ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES 0x9u
#define ZE_STRUCTURE_TYPE_CONTEXT_DESC 0xdu
#define ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC 0xeu
#define ZE_STRUCTURE_TYPE_EVENT_POOL_DESC 0x10u
#define ZE_STRUCTURE_TYPE_EVENT_DESC 0x11u
#define ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC 0x15u
#define ZE_STRUCTURE_TYPE_MODULE_DESC 0x1bu
#define ZE_STRUCTURE_TYPE_KERNEL_DESC 0x1du
#define ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 0x00020006u

#define ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS 2u
#define ZE_COMMAND_QUEUE_PRIORITY_NORMAL 0u
#define ZE_MODULE_FORMAT_IL_SPIRV 0u
#define ZE_EVENT_POOL_FLAG_HOST_VISIBLE 1u
#define ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP 4u
#define ZE_EVENT_SCOPE_FLAG_HOST 4u

typedef struct ze_driver_properties {
	ZE_PROPS_HEAD
	uint8_t uuid[16];
	uint32_t driverVersion;
} ze_driver_properties_t;

typedef struct ze_device_properties {
	ZE_PROPS_HEAD
	uint32_t type;
	uint32_t vendorId, deviceId;
	uint32_t flags;
	uint32_t subdeviceId;
	uint32_t coreClockRate;
	uint64_t maxMemAllocSize;
	uint32_t maxHardwareContexts, maxCommandQueuePriority;
	uint32_t numThreadsPerEU, physicalEUSimdWidth, numEUsPerSubslice, numSubslicesPerSlice, numSlices;
	uint64_t timerResolution;    /* ns per tick (stype 1.0), ticks per second (1.2) */
	uint32_t timestampValidBits, kernelTimestampValidBits;
	uint8_t uuid[16];
	char name[256];
} ze_device_properties_t;

typedef struct ze_device_compute_properties {
	ZE_PROPS_HEAD
	uint32_t maxTotalGroupSize;
	uint32_t maxGroupSizeX, maxGroupSizeY, maxGroupSizeZ;
	uint32_t maxGroupCountX, maxGroupCountY, maxGroupCountZ;
	uint32_t maxSharedLocalMemory;
	uint32_t numSubGroupSizes;
	uint32_t subGroupSizes[8];
} ze_device_compute_properties_t;

typedef struct ze_device_memory_properties {
	ZE_PROPS_HEAD
	uint32_t flags, maxClockRate, maxBusWidth;
	uint64_t totalSize;
	char name[256];
} ze_device_memory_properties_t;

typedef struct ze_device_cache_properties {
	ZE_PROPS_HEAD
	uint32_t flags;
	size_t cacheSize;
} ze_device_cache_properties_t;

typedef struct ze_context_desc {
	ZE_DESC_HEAD
	uint32_t flags;
} ze_context_desc_t;

typedef struct ze_command_queue_desc {
	ZE_DESC_HEAD
	uint32_t ordinal, index, flags, mode, priority;
} ze_command_queue_desc_t;

typedef struct ze_device_mem_alloc_desc {
	ZE_DESC_HEAD
	uint32_t flags, ordinal;
} ze_device_mem_alloc_desc_t;

typedef struct ze_module_constants {
	uint32_t numConstants;
	const uint32_t *pConstantIds;
	const void **pConstantValues;
} ze_module_constants_t;

typedef struct ze_module_desc {
	ZE_DESC_HEAD
	uint32_t format;
	size_t inputSize;
	const uint8_t *pInputModule;
	const char *pBuildFlags;
	const ze_module_constants_t *pConstants;
} ze_module_desc_t;

typedef struct ze_kernel_desc {
	ZE_DESC_HEAD
	uint32_t flags;
	const char *pKernelName;
} ze_kernel_desc_t;

typedef struct ze_group_count {
	uint32_t groupCountX, groupCountY, groupCountZ;
} ze_group_count_t;

typedef struct ze_event_pool_desc {
	ZE_DESC_HEAD
	uint32_t flags, count;
} ze_event_pool_desc_t;

typedef struct ze_event_desc {
	ZE_DESC_HEAD
	uint32_t index, signal, wait;
} ze_event_desc_t;

typedef struct ze_kernel_timestamp_data {
	uint64_t kernelStart, kernelEnd;
} ze_kernel_timestamp_data_t;

typedef struct ze_kernel_timestamp_result {
	ze_kernel_timestamp_data_t global, context;
} ze_kernel_timestamp_result_t;

/* Offsets and sizes from ze_api.h 1.x (x86-64). */
_Static_assert(offsetof(ze_device_properties_t, maxMemAllocSize) == 40, "ze_device_properties_t");
_Static_assert(offsetof(ze_device_properties_t, timerResolution) == 80, "ze_device_properties_t");
_Static_assert(offsetof(ze_device_properties_t, name) == 112, "ze_device_properties_t");
_Static_assert(sizeof(ze_device_properties_t) == 368, "ze_device_properties_t");
_Static_assert(offsetof(ze_device_memory_properties_t, totalSize) == 32, "ze_device_memory_properties_t");
_Static_assert(offsetof(ze_device_cache_properties_t, cacheSize) == 24, "ze_device_cache_properties_t");
_Static_assert(offsetof(ze_device_compute_properties_t, maxSharedLocalMemory) == 44, "compute props");
_Static_assert(offsetof(ze_module_desc_t, pConstants) == 48, "ze_module_desc_t");
_Static_assert(sizeof(ze_command_queue_desc_t) == 40, "ze_command_queue_desc_t");
_Static_assert(sizeof(ze_event_desc_t) == 32, "ze_event_desc_t");

#define KGB_ZE_API(X)                                                                              \
	X(ze_result_t, zeInit, (uint32_t flags), true)                                                 \
	X(ze_result_t, zeDriverGet, (uint32_t *count, ze_driver_handle_t *drivers), true)              \
	X(ze_result_t, zeDriverGetProperties, (ze_driver_handle_t d, ze_driver_properties_t *p), true) \
	X(ze_result_t, zeDeviceGet, (ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *devs), \
	  true)                                                                                        \
	X(ze_result_t, zeDeviceGetProperties, (ze_device_handle_t d, ze_device_properties_t *p), true) \
	X(ze_result_t, zeDeviceGetComputeProperties,                                                   \
	  (ze_device_handle_t d, ze_device_compute_properties_t *p), true)                             \
	X(ze_result_t, zeDeviceGetMemoryProperties,                                                    \
	  (ze_device_handle_t d, uint32_t *count, ze_device_memory_properties_t *p), true)             \
	X(ze_result_t, zeDeviceGetCacheProperties,                                                     \
	  (ze_device_handle_t d, uint32_t *count, ze_device_cache_properties_t *p), true)              \
	X(ze_result_t, zeContextCreate,                                                                \
	  (ze_driver_handle_t d, const ze_context_desc_t *desc, ze_context_handle_t *ctx), true)       \
	X(ze_result_t, zeContextDestroy, (ze_context_handle_t ctx), true)                              \
	X(ze_result_t, zeCommandListCreateImmediate,                                                   \
	  (ze_context_handle_t ctx, ze_device_handle_t d, const ze_command_queue_desc_t *desc,         \
	   ze_command_list_handle_t *list),                                                            \
	  true)                                                                                        \
	X(ze_result_t, zeCommandListDestroy, (ze_command_list_handle_t list), true)                    \
	X(ze_result_t, zeCommandListHostSynchronize, (ze_command_list_handle_t list, uint64_t timeout), \
	  false)                                                                                       \
	X(ze_result_t, zeCommandListAppendMemoryCopy,                                                  \
	  (ze_command_list_handle_t list, void *dst, const void *src, size_t n,                        \
	   ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait),                         \
	  true)                                                                                        \
	X(ze_result_t, zeCommandListAppendMemoryFill,                                                  \
	  (ze_command_list_handle_t list, void *ptr, const void *pattern, size_t pattern_size,         \
	   size_t n, ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait),               \
	  true)                                                                                        \
	X(ze_result_t, zeCommandListAppendLaunchKernel,                                                \
	  (ze_command_list_handle_t list, ze_kernel_handle_t k, const ze_group_count_t *groups,        \
	   ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait),                         \
	  true)                                                                                        \
	X(ze_result_t, zeMemAllocDevice,                                                               \
	  (ze_context_handle_t ctx, const ze_device_mem_alloc_desc_t *desc, size_t n, size_t align,    \
	   ze_device_handle_t d, void **ptr),                                                          \
	  true)                                                                                        \
	X(ze_result_t, zeMemFree, (ze_context_handle_t ctx, void *ptr), true)                          \
	X(ze_result_t, zeModuleCreate,                                                                 \
	  (ze_context_handle_t ctx, ze_device_handle_t d, const ze_module_desc_t *desc,                \
	   ze_module_handle_t *mod, ze_module_build_log_handle_t *log),                                \
	  true)                                                                                        \
	X(ze_result_t, zeModuleDestroy, (ze_module_handle_t mod), true)                                \
	X(ze_result_t, zeModuleBuildLogGetString,                                                      \
	  (ze_module_build_log_handle_t log, size_t *size, char *text), true)                          \
	X(ze_result_t, zeModuleBuildLogDestroy, (ze_module_build_log_handle_t log), true)              \
	X(ze_result_t, zeKernelCreate,                                                                 \
	  (ze_module_handle_t mod, const ze_kernel_desc_t *desc, ze_kernel_handle_t *k), true)         \
	X(ze_result_t, zeKernelDestroy, (ze_kernel_handle_t k), true)                                  \
	X(ze_result_t, zeKernelSetGroupSize, (ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z), \
	  true)                                                                                        \
	X(ze_result_t, zeKernelSetArgumentValue,                                                       \
	  (ze_kernel_handle_t k, uint32_t index, size_t size, const void *value), true)                \
	X(ze_result_t, zeEventPoolCreate,                                                              \
	  (ze_context_handle_t ctx, const ze_event_pool_desc_t *desc, uint32_t ndev,                   \
	   ze_device_handle_t *devs, ze_event_pool_handle_t *pool),                                    \
	  true)                                                                                        \
	X(ze_result_t, zeEventPoolDestroy, (ze_event_pool_handle_t pool), true)                        \
	X(ze_result_t, zeEventCreate,                                                                  \
	  (ze_event_pool_handle_t pool, const ze_event_desc_t *desc, ze_event_handle_t *ev), true)     \
	X(ze_result_t, zeEventDestroy, (ze_event_handle_t ev), true)                                   \
	X(ze_result_t, zeEventHostSynchronize, (ze_event_handle_t ev, uint64_t timeout), true)         \
	X(ze_result_t, zeEventHostReset, (ze_event_handle_t ev), true)                                 \
	X(ze_result_t, zeEventQueryKernelTimestamp,                                                    \
	  (ze_event_handle_t ev, ze_kernel_timestamp_result_t *ts), true)

#define KGB_ZE_X_FIELD(ret, name, args, required) ret(*name) args;

typedef struct kgb_ze_api { KGB_ZE_API(KGB_ZE_X_FIELD) } kgb_ze_api_t;

typedef struct kgb_ze_sym {
	const char *name;
	bool required;
} kgb_ze_sym_t;

/* The table, in struct order (*n gets the length). */
const kgb_ze_sym_t *kgb_ze_syms(size_t *n);

/* Load the Level Zero loader once per process: KGB_ZE_LIBRARY when set, else
 * libze_loader.so.1, libze_loader.so. NULL with "no Level Zero loader (...)" in why
 * when absent. The table lives until the process exits. */
const kgb_ze_api_t *kgb_ze_loader(char *why, size_t whylen);

/* ze_result_t -> KGB_BE_*: device lost -> KGB_BE_FAULT, build failures and unknown
 * kernels -> KGB_BE_COMPILE, group sizes and argument sizes -> KGB_BE_RESOURCE, out
 * of memory -> KGB_BE_NOMEM, else KGB_BE_ERR. */
int kgb_ze_classify(ze_result_t r);
/* "ZE_RESULT_ERROR_DEVICE_LOST" etc.; "ZE_RESULT_0x..." for the rest (static). */
const char *kgb_ze_result_name(ze_result_t r);

/* Ticks of the device timer between two kernel timestamps, with wrap-around at
 * valid_bits bits (0 or 64: none), converted to nanoseconds. */
double kgb_ze_ticks_ns(uint64_t start, uint64_t end, uint32_t valid_bits, double ns_per_tick);

#endif
