/* See devlock.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "devlock.h"
#include "util.h"

int kgb_devlock_open(kgb_devlock_t *l, const char *path, char *err, size_t errlen)
{
	kgb_devlock_init(l);
	l->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (l->fd < 0) {
		snprintf(err, errlen, "device lock %s: %s", path, strerror(errno));
		return -1;
	}
	char gate[PATH_MAX];
	if ((size_t)snprintf(gate, sizeof gate, "%s.gate", path) < sizeof gate)
		l->gate_fd = open(gate, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	const char *trace = getenv("KGB_DEVLOCK_TRACE");
	if (trace && *trace)
		l->trace_fd = open(trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	return 0;
}

/* One line per hold, written at its end (one write: O_APPEND keeps lines whole). The
 * release time is read before the lock is let go, so that no later hold in the trace
 * starts before this one ends. */
static void trace_hold(const kgb_devlock_t *l, uint64_t released)
{
	char line[128];
	if (l->trace_fd < 0 || !l->held)
		return;
	int n = snprintf(line, sizeof line, "%ld %s %llu %llu %llu\n", (long)getpid(), l->held == LOCK_EX ? "EX" : "SH",
	                 (unsigned long long)l->t_req, (unsigned long long)l->t_acq, (unsigned long long)released);
	if (n > 0 && (size_t)n < sizeof line && write(l->trace_fd, line, (size_t)n) != n) {
		/* a trace is a diagnostic: a failed write loses a line, not the job */
	}
}

static void flock_wait(int fd, int op)
{
	while (flock(fd, op) != 0 && errno == EINTR)
		;
}

void kgb_devlock_take(kgb_devlock_t *l, int mode, void (*on_wait)(void *arg, bool waiting), void *arg)
{
	if (l->fd < 0 || l->held == mode)
		return;
	if (l->held) {
		uint64_t t = kgb_now_ns();
		flock(l->fd, LOCK_UN);
		trace_hold(l, t);
	}
	l->held = 0;
	l->t_req = kgb_now_ns();
	bool gate = l->gate_fd >= 0;
	/* the gate, held while the lock is waited for: exclusively by a shared taker,
	 * shared by an exclusive one (devlock.h) */
	int gmode = mode == LOCK_EX ? LOCK_SH : LOCK_EX;
	if ((gate && flock(l->gate_fd, gmode | LOCK_NB) != 0) || flock(l->fd, mode | LOCK_NB) != 0) {
		double t0 = kgb_now_ms();
		if (on_wait)
			on_wait(arg, true);
		if (gate)
			flock_wait(l->gate_fd, gmode);   /* a no-op when the try above got it */
		flock_wait(l->fd, mode);
		if (on_wait)
			on_wait(arg, false);
		l->wait_ms += kgb_now_ms() - t0;
	}
	if (gate)
		flock(l->gate_fd, LOCK_UN);
	l->held = mode;
	l->t_acq = kgb_now_ns();
}

bool kgb_devlock_try_for(kgb_devlock_t *l, int mode, uint32_t timeout_ms)
{
	if (l->fd < 0 || l->held == mode)
		return true;
	kgb_devlock_release(l);
	l->t_req = kgb_now_ns();
	uint64_t end = l->t_req + (uint64_t)timeout_ms * 1000000u;
	bool gate = l->gate_fd >= 0;
	int gmode = mode == LOCK_EX ? LOCK_SH : LOCK_EX;
	for (;;) {
		if (!gate || flock(l->gate_fd, gmode | LOCK_NB) == 0) {
			bool got = flock(l->fd, mode | LOCK_NB) == 0;
			if (gate)
				flock(l->gate_fd, LOCK_UN);
			if (got)
				break;
		}
		if (kgb_now_ns() >= end)
			return false;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	l->wait_ms += (double)(kgb_now_ns() - l->t_req) / 1e6;
	l->held = mode;
	l->t_acq = kgb_now_ns();
	return true;
}

void kgb_devlock_release(kgb_devlock_t *l)
{
	if (l->fd < 0 || !l->held)
		return;
	uint64_t t = kgb_now_ns();
	flock(l->fd, LOCK_UN);
	trace_hold(l, t);
	l->held = 0;
}

void kgb_devlock_close(kgb_devlock_t *l)
{
	kgb_devlock_release(l);
	if (l->fd >= 0)
		close(l->fd);
	if (l->gate_fd >= 0)
		close(l->gate_fd);
	if (l->trace_fd >= 0)
		close(l->trace_fd);
	kgb_devlock_init(l);
}
