/* The parent side of the executor contract (executor.h): spawn the child, decode its
 * records, kill it, and turn how it ended into a complete JobResult.
 *
 * Ownership: a kgb_exec_child_t owns the CaseResult / JobResult messages decoded from
 * the child until kgb_exec_result moves them into the JobResult it returns. Every
 * message here is allocated with malloc so that kgb__job_result__free_unpacked frees
 * the whole tree, whether protobuf-c decoded it or we built it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "compile.h"
#include "executor.h"
#include "validate.h"
#include "log.h"
#include "util.h"

extern char **environ;

struct kgb_exec_child {
	pid_t pid;
	int fd;                        /* read end of the child's stdout; -1 after EOF */
	kgb_exec_mode_t mode;
	uint8_t *buf;
	size_t len, cap;
	Kgb__CaseResult **cases;
	size_t ncases, capcases;
	Kgb__JobResult *end;           /* the final record, or NULL */
	bool reaped;
	int status;                    /* exit code, or -signal */
	kgb_exec_kill_t killed;
	bool garbled;                  /* wrote a malformed record */
	bool saw_fault;                /* a case reported illegal_address or timeout */
	char garble_msg[200];
	double start_ms;
	bool in_launch;                /* inside a device run (KGB_EXEC_REC_LAUNCH) */
	double launch_ms;              /* when it started */
	double launch_total_ms;        /* time inside the runs (and device waits) that have ended */
	bool waiting;                  /* waiting for the device lock (payload 2) */
	double wait_ms;                /* since when */
	int job_sock;                  /* WARM: where its job goes (kgb_exec_assign), else -1 */
	bool ready;                    /* sent KGB_EXEC_REC_READY: waits for another trusted job */
};

/* Environment variables a vendor runtime (or the executor) may need; everything else,
 * database URLs and credentials in particular, stays out of the child. */
static bool env_keep(const char *kv)
{
	static const char *const exact[] = { "PATH", "HOME", "USER", "LANG", "TMPDIR", "LD_LIBRARY_PATH",
	                                     "XDG_CACHE_HOME", "ASAN_OPTIONS", "UBSAN_OPTIONS",
	                                     "LSAN_OPTIONS", "KGB_CACHE_DIR", "KGB_LOG_LEVEL",
	                                     "KGB_REF_CACHE_MB", "KGB_OPENCL_LIBRARY", "KGB_HIP_LIBRARY",
	                                     "KGB_HIPRTC_LIBRARY", "KGB_ZE_LIBRARY", "GPU_DEVICE_ORDINAL",
	                                     "KGB_CUBLAS_LIBRARY", "KGB_HIPBLAS_LIBRARY",
	                                     /* the native provider (worker/native_provider.h) */
	                                     "KGB_PYTHON", "KGB_PYTHONPATH", "KGB_LIBRARY", "KGB_NATIVE_WALL_MS",
	                                     "KGB_TIMING_BATCH", /* the largest batch of timed samples */
	                                     /* measuring what fresh inputs and the scrub cost (docs/timing.md) */
	                                     "KGB_FRESH_INPUTS", "KGB_LOCAL_SCRUB",
	                                     "KGB_DEVLOCK_TRACE", /* the device lock's holds (devlock.h) */
	                                     "KGB_EXEC_DUMP_DIR" /* kgb-worker run --dump */ };
	/* KGB_FAKE_: the knobs of the named test doubles (tests/doubles/), no secrets.
	 * ROCR_: ROCR_VISIBLE_DEVICES filters what HIP sees, in the probe and the child
	 * alike (docs/multi-gpu.md). */
	static const char *const prefix[] = { "LC_", "POCL_", "OCL_", "OPENCL_", "CUDA_", "NVIDIA_",
	                                      "HIP_", "ROCM_", "ROCR_", "HSA_", "ZE_", "TRITON_", "KGB_CUDA_",
	                                      "KGB_TRITON_", "KGB_FAKE_", "KGB_PYREC" };
	const char *eq = strchr(kv, '=');
	if (!eq)
		return false;
	size_t n = (size_t)(eq - kv);
	for (size_t i = 0; i < KGB_ARRAY_LEN(exact); i++)
		if (strlen(exact[i]) == n && strncmp(kv, exact[i], n) == 0)
			return true;
	for (size_t i = 0; i < KGB_ARRAY_LEN(prefix); i++)
		if (strncmp(kv, prefix[i], strlen(prefix[i])) == 0)
			return true;
	return false;
}

/* True when the "NAME=VALUE" string kv sets variable name. */
static bool env_is(const char *kv, const char *name)
{
	size_t n = strlen(name);
	return strncmp(kv, name, n) == 0 && kv[n] == '=';
}

/* See executor.h. */
int kgb_exec_visibility(const kgb_backend_t *be, uint32_t index, const char *inherited, char *value,
                        size_t valuelen)
{
	if (!be || !be->visible_env)
		return 0;
	const char *sw = getenv("KGB_EXEC_VISIBILITY");
	if (sw && (strcmp(sw, "off") == 0 || strcmp(sw, "0") == 0))
		return 0;
	if (!inherited) {
		snprintf(value, valuelen, "%u", index);
		return 1;
	}
	/* the worker itself is limited to a list: device N is the list's N-th entry */
	const char *p = inherited;
	for (uint32_t i = 0;; i++) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, ",");
		size_t t = n;
		while (t > 0 && (p[t - 1] == ' ' || p[t - 1] == '\t'))
			t--;
		if (i == index) {
			if (t == 0 || t >= valuelen)
				return -1;
			memcpy(value, p, t);
			value[t] = 0;
			return 1;
		}
		if (p[n] != ',')
			return -1;
		p += n + 1;
	}
}

/* This process's directory for device locks, made on first use and removed at exit
 * (with the files in it). NULL when none can be made: executors then share nothing. */
static char lockdir[256];
static void lock_dir_remove(void)
{
	DIR *d = opendir(lockdir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				char p[600];
				snprintf(p, sizeof p, "%s/%s", lockdir, e->d_name);
				unlink(p);
			}
		closedir(d);
	}
	rmdir(lockdir);
}

static const char *lock_dir(void)
{
	static int state;  /* 0 untried, 1 made, -1 failed */
	if (state == 0) {
		const char *tmp = getenv("TMPDIR");
		snprintf(lockdir, sizeof lockdir, "%s/kgb-worker-%ld-XXXXXX", tmp && *tmp ? tmp : "/tmp", (long)getpid());
		state = mkdtemp(lockdir) ? 1 : -1;
		if (state > 0)
			atexit(lock_dir_remove);
	}
	return state > 0 ? lockdir : NULL;
}

/* See executor.h. */
int kgb_exec_lock_path(const char *backend, uint32_t index, char *out, size_t outlen)
{
	const char *ldir = lock_dir();
	if (!ldir)
		return -1;
	snprintf(out, outlen, "%s/%s-%u.lock", ldir, backend, index);
	return 0;
}

/* The packed job in a memory file, read from its start. Returns the fd, or -1 with err. */
static int job_memfd(const Kgb__JobAssign *job, char *err, size_t errlen)
{
	size_t n = kgb__job_assign__get_packed_size(job);
	uint8_t *buf = kgb_xmalloc(n ? n : 1);
	kgb__job_assign__pack(job, buf);
	int fd = memfd_create("kgb-job", MFD_CLOEXEC);
	if (fd < 0) {
		free(buf);
		kgb_err(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if (kgb_write_all(fd, buf, n) != 0) {
		kgb_err(err, errlen, "writing the job for the executor: %s", strerror(errno));
		free(buf);
		close(fd);
		return -1;
	}
	free(buf);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* See executor.h. */
int kgb_exec_spawn(const char *exe, kgb_exec_mode_t mode, const char *backend, uint32_t index,
                   const Kgb__JobAssign *job, kgb_exec_child_t **out, char *err, size_t errlen)
{
	int in_fd = -1, pfd[2] = { -1, -1 }, sp[2] = { -1, -1 }, rc = -1;
	char **envp = NULL, *asan_env = NULL, *vis_env = NULL, *order_env = NULL, *lock_env = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	bool fa_init = false, attr_init = false;
	bool warm_blas = mode == KGB_EXEC_WARM_BLAS;
	if (warm_blas)
		mode = KGB_EXEC_WARM;
	*out = NULL;
	/* Resolve our own binary once: the link itself would name valgrind's launcher
	 * when the worker runs under valgrind, which answers readlink with the program. */
	static char self_exe[4096];
	if (!exe) {
		if (!self_exe[0]) {
			ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
			if (n > 0)
				self_exe[n] = '\0';
			else
				kgb_strlcpy(self_exe, "/proc/self/exe", sizeof self_exe);
		}
		exe = self_exe;
	}

	if (mode == KGB_EXEC_JOB) {
		KGB_ASSERT(job != NULL);
		if ((in_fd = job_memfd(job, err, errlen)) < 0)
			goto out;
	} else if (mode == KGB_EXEC_WARM) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
			kgb_err(err, errlen, "socketpair: %s", strerror(errno));
			goto out;
		}
		in_fd = sp[1];   /* the child's stdin; sp[0] stays here for kgb_exec_assign */
		sp[1] = -1;
	}
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		kgb_err(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}

	posix_spawn_file_actions_init(&fa);
	fa_init = true;
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);

	posix_spawnattr_init(&attr);
	attr_init = true;
	sigset_t none, deflt;
	sigemptyset(&none);
	sigemptyset(&deflt);
	sigaddset(&deflt, SIGPIPE);
	sigaddset(&deflt, SIGTERM);
	sigaddset(&deflt, SIGINT);
	sigaddset(&deflt, SIGCHLD);
	sigaddset(&deflt, SIGHUP);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

	/* device visibility: the child sees only its own device (docs/multi-gpu.md) */
	const kgb_backend_t *be = kgb_backend_find(backend);
	uint32_t child_index = index;
	if (be && be->visible_env) {
		char vis[256];
		int v = kgb_exec_visibility(be, index, getenv(be->visible_env), vis, sizeof vis);
		if (v > 0) {
			vis_env = kgb_xasprintf("%s=%s", be->visible_env, vis);
			child_index = 0;
		} else if (v < 0) {
			log_warn("device=%s:%u %s='%s' has no entry %u: the executor sees every device of the "
			         "list and opens device %u", backend, index, be->visible_env, getenv(be->visible_env),
			         index, index);
		}
	}
	if (be && be->order_env) {
		const char *eq = strchr(be->order_env, '=');
		KGB_ASSERT(eq != NULL);
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(eq - be->order_env), be->order_env);
		if (!getenv(name))
			order_env = kgb_xstrdup(be->order_env);
	}

	/* the device's lock, shared by the executors of this worker's device (its slots):
	 * a file in a directory private to this worker process, so a stopped or hung
	 * worker elsewhere on the machine can never hold another worker's device */
	char lockp[512];
	if (mode != KGB_EXEC_HEALTH && kgb_exec_lock_path(backend, index, lockp, sizeof lockp) == 0)
		lock_env = kgb_xasprintf("KGB_DEVICE_LOCK=%s", lockp);
	size_t nenv = 0;
	for (char **e = environ; e && *e; e++)
		nenv++;
	envp = kgb_xcalloc(nenv + 5, sizeof *envp);
	size_t k = 0;
	for (char **e = environ; e && *e; e++)
		if (env_keep(*e) && strncmp(*e, "ASAN_OPTIONS=", 13) != 0 &&
		    !(vis_env && env_is(*e, be->visible_env)))
			envp[k++] = *e;
	if (vis_env)
		envp[k++] = vis_env;
	if (lock_env)
		envp[k++] = lock_env;
	if (order_env)
		envp[k++] = order_env;
	/* In a sanitizer build, a candidate kernel's fault must end the child with the
	 * signal (a crash verdict naming it), not with the sanitizer's report and exit
	 * code; the sanitizer still checks the executor's own memory accesses. */
	const char *asan = getenv("ASAN_OPTIONS");
	asan_env = kgb_xasprintf("ASAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0",
	                         asan && *asan ? asan : "", asan && *asan ? ":" : "");
	envp[k++] = asan_env;

	char devs[16];
	snprintf(devs, sizeof devs, "%u", child_index);
	char *argv[] = { "kgb-worker", "exec", "--backend", (char *)backend, "--device", devs,
	                 mode == KGB_EXEC_HEALTH ? "--health" : mode == KGB_EXEC_WARM ? "--warm" : NULL,
	                 warm_blas ? "--blas" : NULL, NULL };
	pid_t pid;
	int e = posix_spawn(&pid, exe, &fa, &attr, argv, envp);
	if (e != 0) {
		kgb_err(err, errlen, "starting the executor (%s): %s", exe, strerror(e));
		goto out;
	}
	close(pfd[1]);
	pfd[1] = -1;
	fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);

	kgb_exec_child_t *ch = kgb_xcalloc(1, sizeof *ch);
	ch->pid = pid;
	ch->fd = pfd[0];
	ch->mode = mode;
	ch->start_ms = kgb_now_ms();
	ch->job_sock = sp[0];
	sp[0] = -1;
	pfd[0] = -1;
	*out = ch;
	rc = 0;
out:
	if (fa_init)
		posix_spawn_file_actions_destroy(&fa);
	if (attr_init)
		posix_spawnattr_destroy(&attr);
	free(envp);
	free(asan_env);
	free(vis_env);
	free(order_env);
	free(lock_env);
	if (in_fd >= 0)
		close(in_fd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (sp[0] >= 0)
		close(sp[0]);
	return rc;
}

/* See executor.h. */
int kgb_exec_assign(kgb_exec_child_t *ch, const Kgb__JobAssign *job, char *err, size_t errlen)
{
	if (ch->mode != KGB_EXEC_WARM || ch->job_sock < 0)
		return kgb_err(err, errlen, "executor pid %d is not waiting for a job", (int)ch->pid);
	if (kgb_exec_reap(ch, false))
		return kgb_err(err, errlen, "executor pid %d ended before its job (status %d)", (int)ch->pid, ch->status);
	int fd = job_memfd(job, err, errlen);
	if (fd < 0)
		return -1;
	int rc = kgb_fd_send(ch->job_sock, fd, MSG_DONTWAIT);
	int e = errno;
	close(fd);
	/* the socket stays open: an executor that keeps its context after a trusted job
	 * waits on it for the next (KGB_EXEC_REC_READY) */
	if (rc != 0)
		return kgb_err(err, errlen, "handing the job to executor pid %d: %s", (int)ch->pid, strerror(e));
	ch->mode = KGB_EXEC_JOB;
	ch->start_ms = kgb_now_ms();
	return 0;
}

/* See executor.h. */
int kgb_exec_fd(const kgb_exec_child_t *ch)
{
	return ch->fd;
}

/* See executor.h. */
pid_t kgb_exec_pid(const kgb_exec_child_t *ch)
{
	return ch->pid;
}

/* See executor.h. */
size_t kgb_exec_cases_done(const kgb_exec_child_t *ch)
{
	return ch->ncases;
}

/* See executor.h. */
int kgb_exec_status(const kgb_exec_child_t *ch)
{
	return ch->status;
}

static void garble(kgb_exec_child_t *ch, const char *msg)
{
	ch->garbled = true;
	snprintf(ch->garble_msg, sizeof ch->garble_msg, "%s", msg);
	if (!ch->reaped)
		kill(-ch->pid, SIGKILL);
}

/* Decode complete records at the front of the buffer. */
static int decode(kgb_exec_child_t *ch, char *err, size_t errlen)
{
	size_t off = 0;
	while (ch->len - off >= 4) {
		const uint8_t *p = ch->buf + off;
		uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		if (n == 0 || n > KGB_EXEC_MAX_RECORD) {
			kgb_err(err, errlen, "executor wrote a record of length %u", n);
			return -1;
		}
		if (ch->len - off - 4 < n)
			break;
		uint8_t kind = p[4];
		if (kind == KGB_EXEC_REC_CASE) {
			Kgb__CaseResult *cr = kgb__case_result__unpack(NULL, n - 1, p + 5);
			if (!cr) {
				kgb_err(err, errlen, "executor wrote an undecodable case record (%u bytes)", n - 1);
				return -1;
			}
			if (ch->ncases == ch->capcases) {
				ch->capcases = ch->capcases ? 2 * ch->capcases : 16;
				ch->cases = kgb_xrealloc(ch->cases, ch->capcases * sizeof *ch->cases);
			}
			ch->cases[ch->ncases++] = cr;
			if (cr->verdict == KGB__VERDICT__VERDICT_ILLEGAL_ADDRESS || cr->verdict == KGB__VERDICT__VERDICT_TIMEOUT)
				ch->saw_fault = true;
		} else if (kind == KGB_EXEC_REC_END) {
			Kgb__JobResult *r = kgb__job_result__unpack(NULL, n - 1, p + 5);
			if (!r) {
				kgb_err(err, errlen, "executor wrote an undecodable end record (%u bytes)", n - 1);
				return -1;
			}
			if (ch->end)
				kgb__job_result__free_unpacked(ch->end, NULL);
			ch->end = r;
		} else if (kind == KGB_EXEC_REC_READY && n == 1) {
			if (!ch->end) {
				kgb_err(err, errlen, "executor said it was ready for another job before it ended this one");
				return -1;
			}
			ch->ready = true;
		} else if (kind == KGB_EXEC_REC_LAUNCH && n == 2) {
			/* 1: a device run starts; 2: waiting for the device (another job holds
			 * it: neither the kernel's time nor set-up); 0: either has ended */
			double now = kgb_now_ms();
			if (ch->in_launch)
				ch->launch_total_ms += now - ch->launch_ms;
			if (ch->waiting)
				ch->launch_total_ms += now - ch->wait_ms;
			ch->in_launch = p[5] == 1;
			ch->waiting = p[5] == 2;
			ch->launch_ms = ch->wait_ms = now;
		} else {
			kgb_err(err, errlen, "executor wrote a record of unknown kind 0x%02x", kind);
			return -1;
		}
		off += 4 + n;
	}
	memmove(ch->buf, ch->buf + off, ch->len - off);
	ch->len -= off;
	return 0;
}

/* See executor.h. */
int kgb_exec_pump(kgb_exec_child_t *ch, char *err, size_t errlen)
{
	if (ch->fd < 0)
		return 1;
	for (;;) {
		if (ch->cap - ch->len < 65536) {
			ch->cap = ch->cap ? ch->cap * 2 : 131072;
			if (ch->cap > KGB_EXEC_MAX_RECORD + 65536u + 8u) {
				garble(ch, "executor output too large");
				return kgb_err(err, errlen, "executor output too large");
			}
			ch->buf = kgb_xrealloc(ch->buf, ch->cap);
		}
		ssize_t r = read(ch->fd, ch->buf + ch->len, ch->cap - ch->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0) {
			close(ch->fd);
			ch->fd = -1;
			if (ch->len && !ch->garbled)
				garble(ch, "executor output ended inside a record");
			return 1;
		}
		ch->len += (size_t)r;
		if (decode(ch, err, errlen) != 0) {
			garble(ch, err);
			close(ch->fd);
			ch->fd = -1;
			return -1;
		}
	}
}

/* See executor.h. */
bool kgb_exec_reap(kgb_exec_child_t *ch, bool wait)
{
	if (ch->reaped)
		return true;
	int st;
	pid_t r;
	do
		r = waitpid(ch->pid, &st, wait ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	ch->reaped = true;
	if (r < 0)
		ch->status = -SIGKILL;  /* reaped elsewhere: treat as killed */
	else if (WIFSIGNALED(st))
		ch->status = -WTERMSIG(st);
	else
		ch->status = WEXITSTATUS(st);
	/* whatever the child left in its process group goes with it */
	kill(-ch->pid, SIGKILL);
	return true;
}

/* See executor.h. */
bool kgb_exec_finished(const kgb_exec_child_t *ch, const Kgb__JobAssign *job)
{
	if (ch->reaped)
		return true;
	return (ch->fd < 0 || ch->ready) && ch->end && !ch->garbled && !ch->saw_fault &&
	       ch->killed == KGB_EXEC_KILL_NONE && ch->ncases == job->n_cases;
}

/* See executor.h. */
bool kgb_exec_reusable(kgb_exec_child_t *ch)
{
	return ch->ready && ch->job_sock >= 0 && ch->fd >= 0 && !ch->garbled && !kgb_exec_reap(ch, false);
}

/* See executor.h. */
void kgb_exec_rearm(kgb_exec_child_t *ch)
{
	for (size_t i = 0; i < ch->ncases; i++)
		if (ch->cases[i])
			kgb__case_result__free_unpacked(ch->cases[i], NULL);
	ch->ncases = 0;
	if (ch->end)
		kgb__job_result__free_unpacked(ch->end, NULL);
	ch->end = NULL;
	ch->ready = false;
	ch->saw_fault = false;
	ch->in_launch = ch->waiting = false;
	ch->launch_total_ms = 0;
	ch->mode = KGB_EXEC_WARM;
}

/* See executor.h. */
void kgb_exec_kill(kgb_exec_child_t *ch, kgb_exec_kill_t why)
{
	if (ch->killed == KGB_EXEC_KILL_NONE)
		ch->killed = why;
	if (!ch->reaped)
		kill(-ch->pid, SIGKILL);
}

/* See executor.h. */
kgb_exec_kill_t kgb_exec_watchdog(double now_ms, double start_ms, bool in_launch, double launch_ms,
                                  double launch_total_ms, uint32_t limit_ms)
{
	if (!limit_ms)
		return KGB_EXEC_KILL_NONE;
	double lim = (double)limit_ms + KGB_EXEC_KILL_GRACE_MS;
	if (in_launch && now_ms - launch_ms > lim)
		return KGB_EXEC_KILL_TIMEOUT;
	double outside = now_ms - start_ms - launch_total_ms - (in_launch ? now_ms - launch_ms : 0);
	return outside > lim + KGB_EXEC_SETUP_ALLOWANCE_MS ? KGB_EXEC_KILL_SETUP : KGB_EXEC_KILL_NONE;
}

/* See executor.h. */
kgb_exec_kill_t kgb_exec_deadline(const kgb_exec_child_t *ch, double now_ms, uint32_t limit_ms)
{
	if (ch->reaped || ch->killed != KGB_EXEC_KILL_NONE)
		return KGB_EXEC_KILL_NONE;
	/* waiting for the device is nobody's fault, up to a point: a wait longer than a
	 * whole job's limit plus the set-up allowance means the device is not coming
	 * back (another slot's executor stuck outside the watchdog's reach), and the job
	 * goes back as an infrastructure error */
	if (ch->waiting && limit_ms && now_ms - ch->wait_ms > (double)limit_ms + KGB_EXEC_KILL_GRACE_MS + KGB_EXEC_SETUP_ALLOWANCE_MS)
		return KGB_EXEC_KILL_SETUP;
	double excluded = ch->launch_total_ms + (ch->waiting ? now_ms - ch->wait_ms : 0);
	return kgb_exec_watchdog(now_ms, ch->start_ms, ch->in_launch, ch->launch_ms, excluded, limit_ms);
}

/* See executor.h. */
bool kgb_exec_needs_health(const kgb_exec_child_t *ch)
{
	if (ch->killed == KGB_EXEC_KILL_TIMEOUT || ch->garbled)
		return true;
	if (ch->status < 0 && ch->killed == KGB_EXEC_KILL_NONE)
		return true;
	return ch->status == KGB_EXEC_EXIT_DEAD || ch->status == KGB_EXEC_EXIT_OOB_WRITE ||
	       ch->status == KGB_EXEC_EXIT_OOB_READ || ch->saw_fault;
}

/* A signal that the kernel's own code cannot raise: an operator's kill, the OOM
 * killer, a session hang-up. The worker's own kills (time limit, cancel, shutdown) are
 * known by ch->killed; whatever else ends the child with one of these came from
 * outside, and says nothing about the kernel. */
static bool external_signal(int sig)
{
	return sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT ||
	       sig == SIGPIPE || sig == SIGUSR1 || sig == SIGUSR2;
}

/* See executor.h. */
int kgb_exec_killed_outside(const kgb_exec_child_t *ch)
{
	if (ch->garbled || ch->killed != KGB_EXEC_KILL_NONE || ch->status >= 0 || !external_signal(-ch->status))
		return 0;
	return -ch->status;
}

/* See executor.h. */
void kgb_exec_set_str(char **field, const char *value)
{
	if (*field && *field != protobuf_c_empty_string)
		free(*field);
	*field = kgb_xstrdup(value ? value : "");
}

/* See executor.h. */
Kgb__CaseResult *kgb_exec_case_new(uint32_t case_index, int verdict, const char *message)
{
	Kgb__CaseResult *cr = kgb_xmalloc(sizeof *cr);
	kgb__case_result__init(cr);
	cr->case_index = case_index;
	cr->verdict = (Kgb__Verdict)verdict;
	if (message && *message)
		cr->message = kgb_xstrdup(message);
	return cr;
}

/* See executor.h. */
Kgb__JobResult *kgb_exec_result_new(uint64_t job_id, uint64_t epoch)
{
	Kgb__JobResult *r = kgb_xmalloc(sizeof *r);
	kgb__job_result__init(r);
	r->job_id = job_id;
	r->epoch = epoch;
	return r;
}

/* See executor.h. */
void kgb_exec_result_add(Kgb__JobResult *r, Kgb__CaseResult *cr)
{
	r->cases = kgb_xrealloc(r->cases, (r->n_cases + 1) * sizeof *r->cases);
	r->cases[r->n_cases++] = cr;
}

static void log_append(Kgb__JobResult *r, const char *line)
{
	const char *old = r->log ? r->log : "";
	char *s = kgb_xasprintf("%s%s%s\n", old, *old && old[strlen(old) - 1] != '\n' ? "\n" : "", line);
	kgb_exec_set_str(&r->log, s);
	free(s);
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	case SIGTRAP: return "SIGTRAP";
	case SIGSYS: return "SIGSYS";
	case SIGXCPU: return "SIGXCPU";
	default: return "signal";
	}
}

/* See executor.h. */
Kgb__JobResult *kgb_exec_result(kgb_exec_child_t *ch, const Kgb__JobAssign *job)
{
	KGB_ASSERT(kgb_exec_finished(ch, job));
	if (ch->killed == KGB_EXEC_KILL_CANCEL)
		return NULL;
	Kgb__JobResult *r = ch->end;
	ch->end = NULL;
	if (!r)
		r = kgb_exec_result_new(job->job_id, job->epoch);
	r->job_id = job->job_id;
	r->epoch = job->epoch;
	r->wall_ms = kgb_now_ms() - ch->start_ms;

	/* keep only records for the job's cases, in order (a confused child is a crash) */
	size_t k = 0;
	for (; k < ch->ncases && k < job->n_cases; k++)
		if (ch->cases[k]->case_index != job->cases[k])
			break;
	if (k < ch->ncases && !ch->garbled) {
		ch->garbled = true;
		snprintf(ch->garble_msg, sizeof ch->garble_msg, "executor reported case %u where case %u was expected",
		         ch->cases[k]->case_index, k < job->n_cases ? job->cases[k] : 0);
	}
	char msg[400];
	bool infra = ch->killed == KGB_EXEC_KILL_SHUTDOWN || ch->killed == KGB_EXEC_KILL_SETUP;
	bool outside = kgb_exec_killed_outside(ch) != 0;
	if (outside)
		infra = true;
	if (k == 0 && ch->killed != KGB_EXEC_KILL_TIMEOUT && !ch->garbled &&
	    (ch->status == KGB_EXEC_EXIT_INFRA || ch->status == KGB_EXEC_EXIT_USAGE ||
	     r->infra == KGB__VERDICT__VERDICT_INFRA_ERROR))
		infra = true;
	if (infra) {
		/* a worker-side problem before any case ran (or the worker is stopping):
		 * the cases are void, the coordinator retries the job */
		r->infra = KGB__VERDICT__VERDICT_INFRA_ERROR;
		if (ch->killed == KGB_EXEC_KILL_SHUTDOWN)
			snprintf(msg, sizeof msg, "executor stopped: the worker is shutting down");
		else if (ch->killed == KGB_EXEC_KILL_SETUP)
			snprintf(msg, sizeof msg, "the job's time limit of %u ms ran out outside any kernel run (compiling, "
			         "references, staging: a busy worker), after %zu case(s); the job is retried",
			         job->time_limit_ms, k);
		else if (outside)
			snprintf(msg, sizeof msg, "executor killed from outside by %s (the worker did not send it, "
			         "and no kernel raises it: an operator or the OOM killer); %zu case(s) done are "
			         "dropped and the job is retried", sig_name(-ch->status), k);
		else
			snprintf(msg, sizeof msg, "executor failed before running any case (exit status %d)", ch->status);
		log_append(r, msg);
		for (size_t i = 0; i < r->n_cases; i++)
			kgb__case_result__free_unpacked(r->cases[i], NULL);
		free(r->cases);
		r->cases = NULL;
		r->n_cases = 0;
		return r;
	}

	for (size_t i = 0; i < k; i++) {
		kgb_exec_result_add(r, ch->cases[i]);
		ch->cases[i] = NULL;
	}
	if (k < job->n_cases) {
		int v;
		if (ch->killed == KGB_EXEC_KILL_TIMEOUT) {
			v = KGB_V_TIMEOUT;
			snprintf(msg, sizeof msg, "a kernel run of this case did not end within the time limit of %u ms; "
			         "the executor was killed", job->time_limit_ms);
		} else if (ch->garbled) {
			v = KGB_V_CRASH;
			snprintf(msg, sizeof msg, "executor killed: %s", ch->garble_msg);
		} else if (ch->status == KGB_EXEC_EXIT_OOB_WRITE) {
			v = KGB_V_OUT_OF_BOUNDS_WRITE;
			snprintf(msg, sizeof msg, "the kernel wrote into the inaccessible page beyond a buffer's %u-byte "
			         "guard band (a write far out of bounds); the executor stopped at the fault",
			         KGB_GUARD_BYTES);
		} else if (ch->status == KGB_EXEC_EXIT_OOB_READ) {
			v = KGB_V_ILLEGAL_ADDRESS;
			snprintf(msg, sizeof msg, "the kernel read from the inaccessible page beyond a buffer's %u-byte "
			         "guard band (a read far out of bounds); the executor stopped at the fault",
			         KGB_GUARD_BYTES);
		} else if (ch->status < 0) {
			v = KGB_V_CRASH;
			snprintf(msg, sizeof msg, "executor died with %s (%s) while this case ran", sig_name(-ch->status),
			         strsignal(-ch->status));
		} else {
			v = KGB_V_CRASH;
			snprintf(msg, sizeof msg, "executor exited with status %d before reporting this case", ch->status);
		}
		kgb_exec_result_add(r, kgb_exec_case_new(job->cases[k], v, msg));
		log_append(r, msg);
		char rest[200];
		snprintf(rest, sizeof rest, "not run: the executor ended during case %u (%s)", job->cases[k],
		         kgb_verdict_name(v));
		for (size_t i = k + 1; i < job->n_cases; i++)
			kgb_exec_result_add(r, kgb_exec_case_new(job->cases[i], KGB_V_NOT_RUN, rest));
	}
	return r;
}

/* See executor.h. */
void kgb_exec_destroy(kgb_exec_child_t **chp)
{
	kgb_exec_child_t *ch = *chp;
	if (!ch)
		return;
	if (!ch->reaped) {
		kill(-ch->pid, SIGKILL);
		kgb_exec_reap(ch, true);
	}
	if (ch->fd >= 0)
		close(ch->fd);
	if (ch->job_sock >= 0)
		close(ch->job_sock);
	for (size_t i = 0; i < ch->ncases; i++)
		if (ch->cases[i])
			kgb__case_result__free_unpacked(ch->cases[i], NULL);
	free(ch->cases);
	if (ch->end)
		kgb__job_result__free_unpacked(ch->end, NULL);
	free(ch->buf);
	free(ch);
	*chp = NULL;
}

/* How a collect loop decides to kill the child: a fixed deadline (deadline_ms > 0;
 * killed once with on_deadline) or the executor watchdog (kgb_exec_deadline over
 * limit_ms, when the deadline is 0). */
typedef struct collect_how {
	double deadline_ms;
	kgb_exec_kill_t on_deadline;
	uint32_t limit_ms;
} collect_how_t;

/* Pump the child's output until it ends, killing it as h decides, then reap it. */
static void collect_with(kgb_exec_child_t *ch, collect_how_t *h)
{
	char err[256];
	bool watchdog = h->deadline_ms <= 0;
	while (kgb_exec_fd(ch) >= 0) {
		double left = h->deadline_ms - kgb_now_ms();
		kgb_exec_kill_t why = watchdog ? kgb_exec_deadline(ch, kgb_now_ms(), h->limit_ms)
		                      : h->deadline_ms > 0 && left <= 0 ? h->on_deadline : KGB_EXEC_KILL_NONE;
		if (why != KGB_EXEC_KILL_NONE) {
			kgb_exec_kill(ch, why);
			h->deadline_ms = 0;  /* a deadline kills once: now just drain until EOF */
			continue;
		}
		struct pollfd p = { .fd = kgb_exec_fd(ch), .events = POLLIN };
		int t = watchdog ? (h->limit_ms ? 50 : 1000) : h->deadline_ms > 0 ? (int)KGB_MIN(left + 1, 1000.0) : 1000;
		int n = poll(&p, 1, t);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && kgb_exec_pump(ch, err, sizeof err) < 0)
			log_warn("executor pid=%d: %s", (int)kgb_exec_pid(ch), err);
	}
	kgb_exec_reap(ch, true);
}

/* Wait for the child's output to end (or the deadline), then reap it. */
static void collect_until(kgb_exec_child_t *ch, double deadline_ms, kgb_exec_kill_t on_deadline)
{
	collect_how_t h = { .deadline_ms = deadline_ms, .on_deadline = on_deadline };
	collect_with(ch, &h);
}

/* Wait for the child's output to end, killing it as the watchdog decides
 * (kgb_exec_deadline; limit_ms 0: never), then reap it. */
static void collect(kgb_exec_child_t *ch, uint32_t limit_ms)
{
	collect_how_t h = { .limit_ms = limit_ms };
	collect_with(ch, &h);
}

/* See executor.h. */
bool kgb_exec_waiting(const kgb_exec_child_t *ch)
{
	return ch->waiting;
}

Kgb__JobResult *kgb_exec_finish(kgb_exec_child_t *ch, const Kgb__JobAssign *job)
{
	collect(ch, job->time_limit_ms);
	Kgb__JobResult *r = kgb_exec_result(ch, job);
	kgb_exec_destroy(&ch);
	return r;
}

Kgb__JobResult *kgb_exec_job_sync(const char *exe, const char *backend, uint32_t index,
                                  const Kgb__JobAssign *job, bool *needs_health, char *err, size_t errlen)
{
	kgb_exec_child_t *ch;
	if (kgb_exec_spawn(exe, KGB_EXEC_JOB, backend, index, job, &ch, err, errlen) != 0)
		return NULL;
	collect(ch, job->time_limit_ms);
	Kgb__JobResult *r = kgb_exec_result(ch, job);
	if (needs_health)
		*needs_health = kgb_exec_needs_health(ch);
	kgb_exec_destroy(&ch);
	return r;
}

/* See executor.h. */
int kgb_exec_health_sync(const char *exe, const char *backend, uint32_t index, uint32_t timeout_ms,
                         char *err, size_t errlen)
{
	kgb_exec_child_t *ch;
	if (kgb_exec_spawn(exe, KGB_EXEC_HEALTH, backend, index, NULL, &ch, err, errlen) != 0)
		return -1;
	collect_until(ch, kgb_now_ms() + timeout_ms, KGB_EXEC_KILL_TIMEOUT);
	int rc = 0;
	if (ch->killed == KGB_EXEC_KILL_TIMEOUT)
		rc = kgb_err(err, errlen, "health check of %s device %u did not finish in %u ms", backend, index,
		             timeout_ms);
	else if (ch->status < 0)
		rc = kgb_err(err, errlen, "health check of %s device %u died with %s", backend, index,
		             sig_name(-ch->status));
	else if (ch->status != 0)
		rc = kgb_err(err, errlen, "health check of %s device %u failed (exit status %d)", backend, index,
		             ch->status);
	kgb_exec_destroy(&ch);
	return rc;
}
