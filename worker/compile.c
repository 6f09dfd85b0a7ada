/* Sandboxed compile children and the on-disk compile cache (see compile.h). */
#include "compile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"

#define OUTPUT_MAX (64u * 1024u)

#if defined(__SANITIZE_ADDRESS__)
#define KGB_ASAN 1
#else
#define KGB_ASAN 0
#endif

static void set_limit(int res, uint64_t v)
{
	struct rlimit rl = { (rlim_t)v, (rlim_t)v };
	struct rlimit cur;
	if (getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && rl.rlim_max > cur.rlim_max)
		rl.rlim_cur = rl.rlim_max = cur.rlim_max;
	(void)setrlimit(res, &rl);
}

/* Address space already mapped by this process. A child forked from a process that
 * holds a GPU context inherits the driver's large virtual reservations, so an
 * in-process compiler's limit is counted on top of them (exec resets the mappings). */
static uint64_t mapped_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Runs in the child after fork: isolate, limit, then exec or call fn. Never returns. */
static _Noreturn void child_main(const kgb_sandbox_opts_t *o, const char *const *argv,
                                 kgb_sandbox_fn fn, void *arg, const char *dir, int in_fd,
                                 int out_fd)
{
	setpgid(0, 0);
	if (o->no_network) {
		bool ok = unshare(CLONE_NEWNET) == 0;
		if (!ok)
			ok = unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
		if (ok) {
			char mark[600];
			snprintf(mark, sizeof mark, "%s/.kgb-netns", dir);
			int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0)
				close(fd);
		}
	}
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(126);
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
	if (chdir(dir) != 0)
		_exit(126);
	uint32_t cpu = o->cpu_s ? o->cpu_s : (o->wall_ms ? o->wall_ms : 120000) / 1000 + 1;
	set_limit(RLIMIT_CORE, 0);
	set_limit(RLIMIT_CPU, cpu);
	set_limit(RLIMIT_NOFILE, o->nofile ? o->nofile : 256);
	/* an AddressSanitizer build reserves terabytes of shadow memory: an address-space
	 * limit would only break its own in-process children (exec'd ones are not
	 * instrumented and keep the limit) */
	if (o->as_bytes && (argv || !KGB_ASAN))
		set_limit(RLIMIT_AS, argv ? o->as_bytes : mapped_bytes() + o->as_bytes);
	static char *const empty_env[] = { NULL };
	if (argv) {
		execve(argv[0], (char *const *)argv, o->env ? (char *const *)o->env : empty_env);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	clearenv();
	for (const char *const *e = o->env; e && *e; e++)
		putenv((char *)*e);
	int rc = fn(arg, dir);
	fflush(stdout);
	fflush(stderr);
	_exit(rc & 0xff);
}

/* Fork the sandboxed child, feed stdin, collect output, enforce the wall limit. */
int kgb_sandbox_run(const kgb_sandbox_opts_t *opts, const char *const *argv, kgb_sandbox_fn fn,
                    void *arg, kgb_sandbox_result_t *res, char *err, size_t errlen)
{
	int inpair[2] = { -1, -1 }, outp[2] = { -1, -1 };
	int rc = -1;
	memset(res, 0, sizeof *res);
	res->exit_code = -1;
	KGB_ASSERT(argv || fn);
	if (argv)
		KGB_ASSERT_MSG(argv[0][0] == '/', "sandbox argv[0] must be absolute: %s", argv[0]);

	const char *base = getenv("TMPDIR");
	snprintf(res->dir, sizeof res->dir, "%s/kgb-compile.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(res->dir)) {
		kgb_err(err, errlen, "compile sandbox: mkdtemp %s: %s", res->dir, strerror(errno));
		res->dir[0] = 0;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, inpair) != 0 ||
	    pipe2(outp, O_CLOEXEC) != 0) {
		kgb_err(err, errlen, "compile sandbox: pipe: %s", strerror(errno));
		goto out;
	}
	/* the child's environment names the reference cache, which kgb_confine.py keeps
	 * out of a candidate's reach even where it lies under a directory the candidate
	 * may read (the temporary directory): docs/security.md, "What a candidate can read" */
	size_t nenv = 0;
	for (const char *const *e = opts->env; e && *e; e++)
		nenv++;
	const char **env2 = kgb_xcalloc(nenv + 2, sizeof *env2);
	char *root = kgb_ref_cache_root(), *deny = kgb_xasprintf("KGB_CONFINE_DENY=%s", root);
	free(root);
	for (size_t i = 0; i < nenv; i++)
		env2[i] = opts->env[i];
	env2[nenv] = deny;
	kgb_sandbox_opts_t o2 = *opts;
	o2.env = env2;
	double t0 = kgb_now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		kgb_err(err, errlen, "compile sandbox: fork: %s", strerror(errno));
		free(env2);
		free(deny);
		goto out;
	}
	if (pid == 0)
		child_main(&o2, argv, fn, arg, res->dir, inpair[1], outp[1]);
	free(env2);
	free(deny);
	setpgid(pid, pid); /* both sides set it, so the kill below never misses the group */
	close(inpair[1]);
	inpair[1] = -1;
	close(outp[1]);
	outp[1] = -1;

	const char *in = opts->stdin_data;
	size_t inleft = in ? opts->stdin_len : 0;
	if (!inleft)
		shutdown(inpair[0], SHUT_WR);
	fcntl(inpair[0], F_SETFL, O_NONBLOCK);
	size_t cap = 4096, len = 0;
	char *buf = kgb_xmalloc(cap);
	uint32_t wall = opts->wall_ms ? opts->wall_ms : 120000;
	bool out_open = true, exited = false;
	int status = 0;
	while (out_open || !exited) {
		double left = wall - (kgb_now_ms() - t0);
		if (left <= 0) {
			res->timed_out = true;
			break;
		}
		struct pollfd pf[2];
		int np = 0;
		if (out_open)
			pf[np++] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
		if (inleft)
			pf[np++] = (struct pollfd){ .fd = inpair[0], .events = POLLOUT };
		int to = left > 50 ? 50 : (int)left + 1;
		if (np)
			(void)poll(pf, (nfds_t)np, to);
		else
			usleep((useconds_t)to * 1000);
		for (int i = 0; i < np; i++) {
			if (pf[i].fd == outp[0] && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				char tmp[4096];
				ssize_t r = read(outp[0], tmp, sizeof tmp);
				if (r > 0) {
					size_t keep = len + (size_t)r > OUTPUT_MAX ? OUTPUT_MAX - len : (size_t)r;
					if (len + keep + 1 > cap) {
						cap = len + keep + 1 + 4096;
						buf = kgb_xrealloc(buf, cap);
					}
					memcpy(buf + len, tmp, keep);
					len += keep;
				} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
					out_open = false;
				}
			}
			if (pf[i].fd == inpair[0] && (pf[i].revents & (POLLOUT | POLLHUP | POLLERR))) {
				ssize_t w = send(inpair[0], in, inleft, MSG_NOSIGNAL | MSG_DONTWAIT);
				if (w > 0) {
					in += w;
					inleft -= (size_t)w;
				} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
					inleft = 0; /* the child closed its stdin: it gets no more */
				}
				if (!inleft)
					shutdown(inpair[0], SHUT_WR);
			}
		}
		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				exited = true;
		}
		/* a child that exited but left a grandchild holding the pipe: stop reading
		 * after the group is killed below */
		if (exited && out_open && kgb_now_ms() - t0 > wall)
			break;
	}
	kill(-pid, SIGKILL); /* stragglers of the group (and the child on timeout) */
	if (!exited) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	res->wall_ms = kgb_now_ms() - t0;
	if (WIFEXITED(status) && !res->timed_out) {
		res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signo = WTERMSIG(status);
		res->exit_code = -1;
	}
	buf[len] = 0;
	res->output = buf;
	res->output_len = len;
	char mark[600];
	snprintf(mark, sizeof mark, "%s/.kgb-netns", res->dir);
	res->net_isolated = access(mark, F_OK) == 0;
	rc = 0;
out:
	if (inpair[0] >= 0)
		close(inpair[0]);
	if (inpair[1] >= 0)
		close(inpair[1]);
	if (outp[0] >= 0)
		close(outp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (rc != 0 && res->dir[0]) {
		kgb_rmtree(res->dir);
		res->dir[0] = 0;
	}
	return rc;
}

/* Remove the child's directory and free its output. */
void kgb_sandbox_release(kgb_sandbox_result_t *res)
{
	if (res->dir[0])
		kgb_rmtree(res->dir);
	res->dir[0] = 0;
	free(res->output);
	res->output = NULL;
	res->output_len = 0;
}

/* A file the child wrote. */
char *kgb_sandbox_read(const kgb_sandbox_result_t *res, const char *name, size_t *len)
{
	char path[1024];
	char e[64];
	snprintf(path, sizeof path, "%s/%s", res->dir, name);
	return kgb_read_file(path, len, e, sizeof e);
}

/* ---- keys ---- */

void kgb_ckey_init(kgb_ckey_t *k)
{
	kgb_sha256_init(&k->sha);
	kgb_sha256_update(&k->sha, "kgb-compile-key-v1", 18);
}

/* Field name, presence byte, 8-byte length, bytes. */
void kgb_ckey_add(kgb_ckey_t *k, const char *field, const void *data, size_t len)
{
	uint8_t hdr[9];
	size_t fl = strlen(field);
	uint64_t l = data ? (uint64_t)len : 0;
	kgb_sha256_update(&k->sha, field, fl + 1);
	hdr[0] = data ? 1 : 0;
	for (int i = 0; i < 8; i++)
		hdr[1 + i] = (uint8_t)(l >> (8 * i));
	kgb_sha256_update(&k->sha, hdr, sizeof hdr);
	if (data && len)
		kgb_sha256_update(&k->sha, data, len);
}

void kgb_ckey_add_str(kgb_ckey_t *k, const char *field, const char *s)
{
	kgb_ckey_add(k, field, s, s ? strlen(s) : 0);
}

void kgb_ckey_add_int(kgb_ckey_t *k, const char *field, int64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%lld", (long long)v);
	kgb_ckey_add_str(k, field, b);
}

void kgb_ckey_final(kgb_ckey_t *k, char hex[65])
{
	kgb_sha256_final_hex(&k->sha, hex);
}

/* ---- cache ---- */

static char cache_dir[1024];
static int cache_state; /* 0 unknown, 1 usable, -1 unusable */

/* $KGB_CACHE_DIR/compile (created). */
const char *kgb_compile_cache_dir(void)
{
	const char *env = getenv("KGB_CACHE_DIR");
	char want[1024];
	if (env && *env) {
		snprintf(want, sizeof want, "%s/compile", env);
	} else {
		const char *home = getenv("HOME");
		if (!home || !*home)
			return NULL;
		snprintf(want, sizeof want, "%s/.cache/kgb/compile", home);
	}
	if (cache_state != 0 && strcmp(want, cache_dir) == 0)
		return cache_state > 0 ? cache_dir : NULL;
	kgb_strlcpy(cache_dir, want, sizeof cache_dir);
	cache_state = kgb_mkdirs(cache_dir, 0700) == 0 ? 1 : -1;
	return cache_state > 0 ? cache_dir : NULL;
}

static bool key_ok(const char *key)
{
	size_t n = strlen(key);
	if (n == 0 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f')))
			return false;
	return true;
}

static bool name_ok(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/');
}

char *kgb_compile_cache_get(const char *key, const char *name, size_t *len)
{
	const char *d = kgb_compile_cache_dir();
	if (!d || !key_ok(key) || !name_ok(name))
		return NULL;
	char path[1400], e[64];
	snprintf(path, sizeof path, "%s/%s/%s", d, key, name);
	return kgb_read_file(path, len, e, sizeof e);
}

int kgb_compile_cache_lock(const char *key)
{
	const char *d = kgb_compile_cache_dir();
	if (!d || !key_ok(key))
		return -1;
	char path[1400];
	snprintf(path, sizeof path, "%s/%s", d, key);
	if (kgb_mkdirs(path, 0700) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s/.lock", d, key);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

void kgb_compile_cache_unlock(int fd)
{
	if (fd >= 0)
		close(fd);   /* releases the flock */
}

int kgb_compile_cache_put(const char *key, const char *name, const void *data, size_t len)
{
	const char *d = kgb_compile_cache_dir();
	if (!d || !key_ok(key) || !name_ok(name))
		return -1;
	char path[1400];
	snprintf(path, sizeof path, "%s/%s", d, key);
	if (kgb_mkdirs(path, 0700) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s/%s", d, key, name);
	return kgb_write_file_atomic(path, data, len);
}

