/* GPU utilisation from NVML, for the worker's device load (Heartbeat.load).
 *
 * libnvidia-ml is opened with dlopen on first use, as the CUDA driver is: a worker
 * without it (no NVIDIA driver, or another vendor) reports -1. NVML counts devices in
 * PCI order, as the CUDA backend does (it sets CUDA_DEVICE_ORDER=PCI_BUS_ID), so device
 * index i of the cuda backend is NVML index i unless CUDA_VISIBLE_DEVICES hides some;
 * then the figure is not reported. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

typedef struct {
	unsigned int gpu, memory;
} nvml_util_t;

static int state;  /* 0 untried, 1 loaded, -1 unavailable */
static int (*p_init)(void);
static int (*p_handle)(unsigned int, void **);
static int (*p_util)(void *, nvml_util_t *);

static bool load(void)
{
	if (state)
		return state > 0;
	state = -1;
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	if (vis && *vis)
		return false;
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	*(void **)&p_init = dlsym(h, "nvmlInit_v2");
	*(void **)&p_handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&p_util = dlsym(h, "nvmlDeviceGetUtilizationRates");
	if (!p_init || !p_handle || !p_util || p_init() != 0) {
		dlclose(h);
		return false;
	}
	state = 1;
	return true;
}

double kgb_nvml_util(const char *backend, uint32_t index)
{
	if (strcmp(backend, "cuda") != 0 || !load())
		return -1;
	void *dev = NULL;
	nvml_util_t u;
	if (p_handle(index, &dev) != 0 || p_util(dev, &u) != 0)
		return -1;
	return (double)u.gpu;
}
