/* The lock executors share a device by (docs/worker.md, "Sharing a device"): an flock
 * on the file the worker names in KGB_DEVICE_LOCK, taken shared (work that may overlap
 * other shared work: validation runs) or exclusive (work that must have the device to
 * itself: timing), behind a gate, the file path".gate", which every taker holds while
 * it waits for the lock: a shared taker exclusively, an exclusive taker shared. So
 * exclusive takers that wait together hold the gate together and shut out the shared
 * takers that come after them: they get the lock one after another, with no shared
 * holds between them, and the device goes from one timing to the next without idling
 * for validation work (the shared work runs when no timing waits). A shared taker that
 * already waits at the gate keeps its place. An exclusive taker waits at most for the
 * holds in progress and the takers already at the gate; a shared one waits while
 * exclusive takers keep coming, which ends in an executor's next case, since each
 * timing there follows shared work of its own. */
#ifndef KGB_DEVLOCK_H
#define KGB_DEVLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kgb_devlock {
	int fd;                    /* the lock, or -1: none (every call is a no-op) */
	int gate_fd;               /* the gate, or -1: waits without it */
	int held;                  /* 0, LOCK_SH or LOCK_EX */
	double wait_ms;            /* time spent waiting, in all */
	int trace_fd;              /* KGB_DEVLOCK_TRACE's file, or -1 */
	uint64_t t_req, t_acq;     /* the hold in progress: asked for, granted (ns) */
} kgb_devlock_t;

/* A lock that is not there (every call a no-op), before or instead of kgb_devlock_open:
 * kgb_devlock_t l = KGB_DEVLOCK_NONE; or kgb_devlock_init(&l). */
#define KGB_DEVLOCK_NONE ((kgb_devlock_t){.fd = -1, .gate_fd = -1, .trace_fd = -1})
static inline void kgb_devlock_init(kgb_devlock_t *l)
{
	*l = KGB_DEVLOCK_NONE;
}

/* Open the lock at path (and its gate), creating them. 0, or -1 with err (the lock is
 * then absent; a missing gate only loses the exclusive takers' precedence and is not an error). */
int kgb_devlock_open(kgb_devlock_t *l, const char *path, char *err, size_t errlen);
/* Hold the lock in mode LOCK_SH or LOCK_EX; a change of mode lets go first (flock's
 * conversion is not atomic either). on_wait(arg, true) is called before a wait that
 * blocks, on_wait(arg, false) after it (may be NULL). */
/* Where KGB_DEVLOCK_TRACE names a file, every hold is appended to it as a line
 * "pid mode asked granted released" (mode SH or EX, times in ns of CLOCK_MONOTONIC),
 * for scripts/devlock-trace.py: how the device's time split between exclusive holds,
 * shared holds only, and none. */
void kgb_devlock_take(kgb_devlock_t *l, int mode, void (*on_wait)(void *arg, bool waiting), void *arg);
/* Hold the lock in mode by trying every millisecond, never queueing at the gate (so
 * never ahead of a waiting taker), for at most timeout_ms. Returns true when held
 * (or when there is no lock), false when the time ran out. For device work that may
 * wait for a quiet moment: opening or releasing a context around the jobs. */
bool kgb_devlock_try_for(kgb_devlock_t *l, int mode, uint32_t timeout_ms);
void kgb_devlock_release(kgb_devlock_t *l);
void kgb_devlock_close(kgb_devlock_t *l);

#endif
