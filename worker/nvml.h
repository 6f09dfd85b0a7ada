/* NVML utilisation of a device (worker/nvml.c). */
#ifndef KGB_WORKER_NVML_H
#define KGB_WORKER_NVML_H

#include <stdbool.h>
#include <stdint.h>

/* Percent of the last sample period during which a kernel ran on device `index` of
 * `backend`, or -1 when NVML cannot say (not a cuda device, no libnvidia-ml, hidden
 * devices). */
double kgb_nvml_util(const char *backend, uint32_t index);

#endif
