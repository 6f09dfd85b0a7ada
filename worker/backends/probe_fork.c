/* Device discovery in a forked child (see probe_fork.h). */
#include "probe_fork.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define PROBE_MAX_DEVICES 32
#define PROBE_WAIT_MS 30000

typedef struct probe_msg {
	int32_t count;
	char why[512];
	kgb_device_info_t dev[PROBE_MAX_DEVICES];
} probe_msg_t;

/* Fork, run fn in the child, read its answer. */
int kgb_probe_forked(const char *label, kgb_probe_fn fn, kgb_device_info_t *out, int max, char *why,
                     size_t whylen)
{
	int fds[2];
	if (why && whylen)
		why[0] = 0;
	if (max <= 0)
		return 0;
	if (pipe(fds) != 0) {
		snprintf(why, whylen, "%s probe: pipe: %s", label, strerror(errno));
		return 0;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "%s probe: fork: %s", label, strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		close(fds[0]);
		static probe_msg_t m;
		memset(&m, 0, sizeof m);
		int n = fn(m.dev, KGB_MIN(max, PROBE_MAX_DEVICES), m.why, sizeof m.why);
		m.count = n < 0 ? 0 : KGB_MIN(n, PROBE_MAX_DEVICES);
		(void)kgb_write_all(fds[1], &m, sizeof m);
		_exit(0);
	}
	close(fds[1]);
	probe_msg_t *m = kgb_xcalloc(1, sizeof *m);
	size_t got = 0;
	double t0 = kgb_now_ms();
	while (got < sizeof *m && kgb_now_ms() - t0 < PROBE_WAIT_MS) {
		struct pollfd pf = { .fd = fds[0], .events = POLLIN };
		int pr = poll(&pf, 1, 200);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		ssize_t r = read(fds[0], (char *)m + got, sizeof *m - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fds[0]);
	if (got < sizeof *m)
		kill(pid, SIGKILL);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int n = 0;
	if (got < sizeof *m) {
		if (WIFSIGNALED(st))
			snprintf(why, whylen, "%s probe: the probing child died by signal %d", label, WTERMSIG(st));
		else
			snprintf(why, whylen, "%s probe: the probing child did not answer", label);
	} else if (m->count <= 0) {
		m->why[sizeof m->why - 1] = 0;
		snprintf(why, whylen, "%s", m->why[0] ? m->why : "no devices");
	} else {
		n = KGB_MIN(m->count, max);
		memcpy(out, m->dev, (size_t)n * sizeof *out);
	}
	free(m);
	return n;
}
