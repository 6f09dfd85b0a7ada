/* The worker daemon: one ZeroMQ DEALER connection to the coordinator, one executor
 * child per busy device slot, results held until acknowledged (docs/worker.md). */
#ifndef KGB_DAEMON_H
#define KGB_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include "backend.h"

/* Pre-warmed executors (docs/worker.md): AUTO is on for every backend but opencl,
 * whose device is the CPU that the jobs time on. */
typedef enum { KGB_PREWARM_AUTO = 0, KGB_PREWARM_ON, KGB_PREWARM_OFF } kgb_prewarm_t;

typedef struct kgb_worker_opts {
	const char *endpoint;       /* coordinator's worker endpoint */
	const char *name;           /* worker name; NULL: hostname-pid */
	const char *platform;       /* override of every device's platform name, or NULL */
	const char *backend;        /* serve only this backend, or NULL for all */
	uint32_t slots;             /* jobs at once per device; 0: from the machine (sizing.h) */
	uint32_t grace_ms;          /* on SIGTERM: how long running jobs may finish */
	uint32_t health_timeout_ms; /* limit of one health check */
	const char *exe;            /* executor binary; NULL: /proc/self/exe */
	kgb_prewarm_t prewarm;      /* executors started before their jobs */
} kgb_worker_opts_t;

/* One device the worker serves. */
typedef struct kgb_worker_dev {
	kgb_device_info_t info;
	const kgb_backend_t *be;
	char platform[192];
} kgb_worker_dev_t;

/* The platform name of a device (docs/TEAM-NOTES.md "Platform names"):
 * "<backend>:<slug of the device name>". */
void kgb_worker_platform_name(const char *backend, const char *device_name, char *out, size_t outlen);

/* Probe every compiled-in backend (or only `backend` when not NULL). Fills *devs
 * (caller frees) and *n; logs, for each backend with no device, why. Returns the
 * number of devices. */
size_t kgb_worker_probe(const char *backend, const char *platform_override, kgb_worker_dev_t **devs,
                        size_t *n);

/* Run the daemon until SIGTERM/SIGINT (returns 0) or a fatal error such as a refused
 * registration (returns 1, reason logged). */
int kgb_worker_daemon(const kgb_worker_opts_t *o);

#endif
