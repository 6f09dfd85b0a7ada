/* Device discovery in a throw-away child process.
 *
 * Vendor runtimes (HIP, Level Zero, OpenCL platforms such as PoCL) start threads and open device files when first
 * initialised; the worker daemon must not carry that state, since it forks sandboxed
 * compile children and must stay small. A backend's probe therefore runs its real
 * discovery in a forked child, which sends the device list back over a pipe and exits.
 * The daemon never initialises the runtime itself. */
#ifndef KGB_PROBE_FORK_H
#define KGB_PROBE_FORK_H

#include <stddef.h>
#include "backend.h"

/* The discovery function run in the child: fill up to max devices, return the count,
 * or 0 with the reason in why. */
typedef int (*kgb_probe_fn)(kgb_device_info_t *out, int max, char *why, size_t whylen);

/* Run fn in a forked child (at most 30 s) and copy its devices into out. label names
 * the backend in messages ("hip probe: the probing child did not answer"). Returns
 * the device count, or 0 with why filled; never fails otherwise. */
int kgb_probe_forked(const char *label, kgb_probe_fn fn, kgb_device_info_t *out, int max, char *why,
                     size_t whylen);

#endif
