/* How many jobs and helper processes a worker runs at once, from the machine it is on
 * (docs/worker.md, "Slots and helpers"): the CPUs it may use and the devices it serves.
 * --slots / KGB_WORKER_SLOTS and KGB_PYREC_JOBS override the defaults. */
#ifndef KGB_SIZING_H
#define KGB_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most slots a device gets by default (each executor holds a context and its
 * buffers on the device) and the most helper processes one executor starts. */
#define KGB_SLOTS_MAX 16u
#define KGB_HELPERS_MAX 8u

/* Whether the jobs of a backend's devices time on the host's own cores (opencl, PoCL's
 * CPU device): their executors hold the device lock for the whole job and are not
 * pre-warmed. */
bool kgb_backend_on_host(const char *backend);

/* CPUs this process may run on: the online count, narrowed by its affinity mask and by
 * the CPU quota of its cgroup and their ancestors (cgroup v2 cpu.max, v1
 * cpu.cfs_quota_us over cpu.cfs_period_us), a fractional quota rounded up. At least 1;
 * computed once. */
uint32_t kgb_usable_cpus(void);

/* The quota of a cgroup v2 cpu.max text ("QUOTA PERIOD" or "max PERIOD") in whole
 * CPUs, rounded up; 0 when there is none or the text is not one. */
uint32_t kgb_cpu_max_parse(const char *text);

/* The smallest quota, in whole CPUs, set on the cgroup `path` (under the hierarchy
 * mounted at `mount`) or one of its ancestors: cpu.max when v2, else cpu.cfs_quota_us
 * over cpu.cfs_period_us. 0: none. (kgb_usable_cpus's reading, for the tests.) */
uint32_t kgb__cgroup_quota(const char *mount, const char *path, bool v2);

/* Default slots per device, for `cpus` usable CPUs and `ndevs` devices: two CPUs left
 * to the worker process, the coordinator and the system, the rest shared by the devices
 * (one executor's host work, inputs, references, compiles and comparisons, keeps about
 * one CPU busy); at least 1, at most KGB_SLOTS_MAX. A device whose jobs hold the device
 * lock for their whole run (cpu_device: OpenCL, where the device is the CPU being
 * timed) gets at most 2: more would only wait for the lock. */
uint32_t kgb_default_slots(uint32_t cpus, size_t ndevs, bool cpu_device);

/* Default helper processes per executor (Python recording and replay children): the
 * CPUs shared by the executors that do host work at once (every slot of every device,
 * or one per device when cpu_device), at least 1, at most KGB_HELPERS_MAX. */
uint32_t kgb_default_helpers(uint32_t cpus, size_t ndevs, uint32_t slots, bool cpu_device);

/* The helper processes an executor starts: KGB_PYREC_JOBS (the worker sets it for its
 * executors from kgb_default_helpers unless it is given), else at most
 * KGB_HELPERS_MAX of the usable CPUs. */
uint32_t kgb_helper_jobs(void);

#endif
