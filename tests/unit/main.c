/* kgb-unit: runs every registered TEST in its own child process.
 *
 *   kgb-unit [--list] [--no-fork] [--jobs N] [--shard K/N] [FILTER]
 *
 * FILTER keeps the tests whose name contains it; --shard K/N every N-th of those from
 * the K-th; --jobs runs N at a time (each one's output is held back and printed only
 * if it fails, so parallel tests do not mix their lines). Each test gets a timeout
 * (KGB_TEST_TIMEOUT seconds, default 60) and a fresh temporary directory; its process
 * group is killed when it times out. One line per test (ok / FAIL / TIMEOUT, the wall
 * time and the CPU time of its child), then a summary; the exit status is 1 if any test failed. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

static kgb_test_t *tests;
static size_t ntests;
static char tmpdir[4096];

/* Called by the TEST constructors. */
void kgb_test_register(kgb_test_t *t)
{
	t->next = tests;
	tests = t;
	ntests++;
}

/* Print the failure and end the child. */
_Noreturn void kgb_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stdout);
	fflush(stderr);
	exit(1);
}

/* The running test's scratch directory. */
const char *kgb_test_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof tmpdir, "%s/kgb-unit.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir))
			kgb_test_fail(__FILE__, __LINE__, "mkdtemp %s: %s", tmpdir, strerror(errno));
	}
	return tmpdir;
}

/* Write a file into the scratch directory. */
const char *kgb_test_write_file(const char *name, const char *text)
{
	static char path[4096 + 256];
	snprintf(path, sizeof path, "%s/%s", kgb_test_tmpdir(), name);
	FILE *f = fopen(path, "w");
	if (!f)
		kgb_test_fail(__FILE__, __LINE__, "open %s: %s", path, strerror(errno));
	size_t n = strlen(text);
	if (fwrite(text, 1, n, f) != n || fclose(f) != 0)
		kgb_test_fail(__FILE__, __LINE__, "write %s: %s", path, strerror(errno));
	return path;
}

/* A test double next to kgb-unit. */
const char *kgb_test_double(const char *name)
{
	static char path[4096 + 64];
	const char *dir = getenv("KGB_TEST_DOUBLES_DIR");
	if (dir && *dir) {
		snprintf(path, sizeof path, "%s/%s", dir, name);
	} else {
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			kgb_test_fail(__FILE__, __LINE__, "readlink /proc/self/exe failed");
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(path, sizeof path, "%s/../lib/%s", exe, name);
	}
	if (access(path, R_OK) != 0)
		kgb_test_fail(__FILE__, __LINE__, "test double %s missing (make builds it with kgb-unit)", path);
	return path;
}

/* A parse that had to fail. */
void kgb_test_refused(int rc, bool out_null, const char *what, const char *err, const char *const *wants)
{
	if (rc == 0)
		kgb_test_fail(__FILE__, __LINE__, "parse of %s succeeded", what);
	if (!out_null)
		kgb_test_fail(__FILE__, __LINE__, "a failed parse of %s left an output", what);
	for (; *wants; wants++)
		if (!strstr(err, *wants))
			kgb_test_fail(__FILE__, __LINE__, "error '%s' does not contain '%s'", err, *wants);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_test(const void *a, const void *b)
{
	const kgb_test_t *x = *(const kgb_test_t *const *)a, *y = *(const kgb_test_t *const *)b;
	int c = strcmp(x->file, y->file);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

enum { RES_OK, RES_FAIL, RES_TIMEOUT };

/* In the forked child: run t alone in a fresh exec of this binary whose leak checker
 * does not scan TLS (KGB_TEST_LSAN_NO_TLS, test.h). Sanitizer options are read once,
 * at start, so a fork cannot change them. Does not return. */
static _Noreturn void exec_without_tls_scan(const kgb_test_t *t)
{
	const char *old = getenv("LSAN_OPTIONS");
	char opts[4096];
	int n = snprintf(opts, sizeof opts, "%s%suse_tls=0", old && *old ? old : "", old && *old ? ":" : "");
	if (n < 0 || (size_t)n >= sizeof opts || setenv("LSAN_OPTIONS", opts, 1) != 0) {
		fprintf(stderr, "    %s: LSAN_OPTIONS too long to extend\n", t->name);
		_exit(1);
	}
	char *args[] = {"kgb-unit", "--run-one", (char *)t->name, NULL};
	execv("/proc/self/exe", args);
	fprintf(stderr, "    %s: exec /proc/self/exe: %s\n", t->name, strerror(errno));
	_exit(1);
}

/* A test running in a child: its process (group), when it started, its deadline and
 * its scratch directory. */
typedef struct slot {
	const kgb_test_t *t;
	pid_t pid;
	double start_ms, deadline_ms;
	char dir[sizeof tmpdir];
	char log[sizeof tmpdir + 8]; /* with --jobs above 1: the child's output, else "" */
	double cpu_ms;               /* user + system CPU of the child and what it waited for */
} slot_t;

/* The running tests, for on_signal. */
static slot_t *running;
static int nrunning;

/* Make s's fresh tmpdir and start t in a forked child (in its own process group).
 * With capture, the child's stdout and stderr go to s->log (printed by the runner if
 * the test fails, so the output of tests running side by side does not mix).
 * Returns 0, or RES_FAIL with why set (nothing left running). With nofork, runs t in
 * this process and returns RES_OK. */
static int start_one(slot_t *s, const kgb_test_t *t, bool nofork, bool capture, char *why, size_t whylen)
{
	const char *base = getenv("TMPDIR");
	s->t = t;
	s->pid = 0;
	s->start_ms = now_ms();
	snprintf(tmpdir, sizeof tmpdir, "%s/kgb-unit.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		snprintf(why, whylen, "mkdtemp: %s", strerror(errno));
		tmpdir[0] = '\0';
		return RES_FAIL;
	}
	memcpy(s->dir, tmpdir, sizeof s->dir);
	s->log[0] = '\0';
	if (capture && !nofork)
		snprintf(s->log, sizeof s->log, "%s.log", s->dir);
	if (nofork) {
		t->fn();
		kgb_rmtree(tmpdir);
		tmpdir[0] = '\0';
		return RES_OK;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		kgb_rmtree(tmpdir);
		tmpdir[0] = '\0';
		return RES_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		/* the test gets the signal dispositions it always had, not the runner's */
		nrunning = 0;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (s->log[0]) {
			FILE *f = fopen(s->log, "w");
			if (!f || dup2(fileno(f), 1) < 0 || dup2(fileno(f), 2) < 0) {
				fprintf(stderr, "    %s: cannot write %s: %s\n", t->name, s->log, strerror(errno));
				_exit(1);
			}
			fclose(f);
		}
		if (t->flags & KGB_TEST_LSAN_NO_TLS)
			exec_without_tls_scan(t);
		t->fn();
		fflush(stdout);
		fflush(stderr);
		exit(0);
	}
	setpgid(pid, pid);
	/* the next test gets a directory of its own; this one is s->dir */
	tmpdir[0] = '\0';
	s->pid = pid;
	return RES_OK;
}

/* Reap s's child if it ended, or kill it past its deadline. Returns -1 while it still
 * runs, else RES_* with why set, and the test's scratch directory and helpers are
 * gone. */
static int poll_one(slot_t *s, int timeout_s, char *why, size_t whylen)
{
	int status = 0, res = RES_OK;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	pid_t w = wait4(s->pid, &status, WNOHANG, &ru);
	if (w == 0) {
		if (now_ms() <= s->deadline_ms)
			return -1;
		kill(-s->pid, SIGKILL);
		kill(s->pid, SIGKILL);
		wait4(s->pid, &status, 0, &ru);
		snprintf(why, whylen, "no result after %d s", timeout_s);
		res = RES_TIMEOUT;
		goto out;
	}
	if (w < 0) {
		if (errno == EINTR)
			return -1;
		snprintf(why, whylen, "waitpid: %s", strerror(errno));
		res = RES_FAIL;
		goto out;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
		res = RES_FAIL;
	} else if (WEXITSTATUS(status) != 0) {
		snprintf(why, whylen, "exit status %d", WEXITSTATUS(status));
		res = RES_FAIL;
	}
	/* helpers the test left behind die with it */
	kill(-s->pid, SIGKILL);
out:
	s->cpu_ms = 1e3 * (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	            1e-3 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	kgb_rmtree(s->dir);
	s->pid = 0;
	s->t = NULL;
	return res;
}

/* One line for a finished test (after its captured output if it failed): its wall
 * and, where it ran in a child, CPU milliseconds; counts failures. Removes the
 * captured output. */
static void report(const kgb_test_t *t, const char *log, int r, double ms, double cpu_ms, const char *why,
                   int *failed)
{
	if (log && log[0]) {
		FILE *f = r == RES_OK ? NULL : fopen(log, "r");
		char buf[4096];
		size_t k;
		while (f && (k = fread(buf, 1, sizeof buf, f)) > 0)
			fwrite(buf, 1, k, stdout);
		if (f)
			fclose(f);
		unlink(log);
	}
	if (r == RES_OK)
		printf("ok      %-40s %8.1f ms %8.1f ms cpu\n", t->name, ms, cpu_ms);
	else {
		(*failed)++;
		printf("%-7s %-40s %8.1f ms %8.1f ms cpu  %s (%s:%d)\n", r == RES_TIMEOUT ? "TIMEOUT" : "FAIL", t->name,
		       ms, cpu_ms, why, t->file, t->line);
	}
	fflush(stdout);
}

/* SIGINT, SIGTERM, SIGHUP: the tests running (and their helpers) end with the runner,
 * so that stopping a run leaves nothing behind. */
static void on_signal(int sig)
{
	for (int k = 0; k < nrunning; k++)
		if (running[k].pid > 0)
			kill(-running[k].pid, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Run the n tests of v, up to jobs at a time, each in its own child with its own
 * scratch directory and timeout. Returns the number that failed. */
static int run_all(kgb_test_t **v, size_t n, int jobs, int timeout_s, bool nofork)
{
	slot_t *slots = calloc((size_t)jobs, sizeof *slots);
	if (!slots) {
		fprintf(stderr, "kgb-unit: out of memory\n");
		return (int)n;
	}
	running = slots;
	nrunning = jobs;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	int failed = 0, busy = 0;
	size_t next = 0;
	long nap_ns = 50 * 1000;
	while (next < n || busy > 0) {
		for (int k = 0; k < jobs && next < n; k++) {
			if (slots[k].pid)
				continue;
			char why[256] = "";
			const kgb_test_t *t = v[next++];
			int r = start_one(&slots[k], t, nofork, jobs > 1, why, sizeof why);
			if (r != RES_OK || nofork) {
				report(t, slots[k].log, r, now_ms() - slots[k].start_ms, 0, why, &failed);
				continue;
			}
			slots[k].deadline_ms = slots[k].start_ms + timeout_s * 1000.0;
			busy++;
			nap_ns = 50 * 1000;
		}
		bool reaped = false;
		for (int k = 0; k < jobs; k++) {
			if (!slots[k].pid)
				continue;
			char why[256] = "";
			const kgb_test_t *t = slots[k].t;
			double start = slots[k].start_ms;
			int r = poll_one(&slots[k], timeout_s, why, sizeof why);
			if (r < 0)
				continue;
			report(t, slots[k].log, r, now_ms() - start, slots[k].cpu_ms, why, &failed);
			busy--;
			reaped = true;
		}
		if (reaped || busy == 0)
			continue;
		/* back off from 50 us to 10 ms: short tests report quickly, long ones cost
		 * little CPU */
		struct timespec ts = {0, nap_ns};
		nanosleep(&ts, NULL);
		if (nap_ns < 10 * 1000 * 1000)
			nap_ns *= 2;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	nrunning = 0;
	free(slots);
	return failed;
}

int main(int argc, char **argv)
{
	bool list = false, nofork = false;
	const char *filter = NULL;
	long jobs = 1, shard_k = 1, shard_n = 1;
	/* internal (exec_without_tls_scan): run the test of that exact name in this process,
	 * reporting nothing but its failure */
	if (argc == 3 && strcmp(argv[1], "--run-one") == 0) {
		for (kgb_test_t *t = tests; t; t = t->next)
			if (strcmp(t->name, argv[2]) == 0) {
				char why[256];
				slot_t s;
				return start_one(&s, t, true, false, why, sizeof why) == RES_OK ? 0 : 1;
			}
		fprintf(stderr, "%s: --run-one: no test '%s'\n", argv[0], argv[2]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list") == 0)
			list = true;
		else if (strcmp(argv[i], "--no-fork") == 0)
			nofork = true;
		else if (strcmp(argv[i], "--jobs") == 0 || strcmp(argv[i], "-j") == 0) {
			char *end = NULL;
			jobs = i + 1 < argc ? strtol(argv[++i], &end, 10) : 0;
			if (!end || *end || jobs < 1 || jobs > 256) {
				fprintf(stderr, "%s: --jobs: expected a count in 1..256, got '%s'\n", argv[0],
				        i < argc ? argv[i] : "");
				return 2;
			}
		} else if (strcmp(argv[i], "--shard") == 0) {
			char *end = NULL, *mid = NULL;
			if (i + 1 < argc) {
				shard_k = strtol(argv[++i], &mid, 10);
				if (*mid == '/')
					shard_n = strtol(mid + 1, &end, 10);
			}
			if (!end || *end || shard_n < 1 || shard_n > 1024 || shard_k < 1 || shard_k > shard_n) {
				fprintf(stderr, "%s: --shard: expected K/N with 1 <= K <= N <= 1024, got '%s'\n", argv[0],
				        i < argc ? argv[i] : "");
				return 2;
			}
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: %s [--list] [--no-fork] [--jobs N] [--shard K/N] [FILTER]\n"
			       "Runs every unit test whose name contains FILTER, each in its own process,\n"
			       "N at a time with --jobs (default 1). --shard K/N keeps every N-th test from\n"
			       "the K-th (in file and line order), so N runners share the suite.\n"
			       "KGB_TEST_TIMEOUT sets the per-test timeout in seconds (default 60).\n",
			       argv[0]);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: unknown option '%s' (try --help)\n", argv[0], argv[i]);
			return 2;
		} else if (filter) {
			fprintf(stderr, "%s: only one filter may be given ('%s', then '%s')\n", argv[0], filter,
			        argv[i]);
			return 2;
		} else
			filter = argv[i];
	}
	int timeout_s = 60;
	const char *ts = getenv("KGB_TEST_TIMEOUT");
	if (ts && *ts) {
		char *end;
		long v = strtol(ts, &end, 10);
		if (*end || v <= 0 || v > 86400) {
			fprintf(stderr, "%s: KGB_TEST_TIMEOUT: expected seconds in 1..86400, got '%s'\n", argv[0], ts);
			return 2;
		}
		timeout_s = (int)v;
	}

	kgb_test_t **all = calloc(ntests ? ntests : 1, sizeof *all);
	if (!all)
		return 2;
	size_t n = 0;
	for (kgb_test_t *t = tests; t; t = t->next)
		all[n++] = t;
	qsort(all, n, sizeof *all, cmp_test);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(all[i]->name, all[j]->name) == 0) {
				fprintf(stderr, "%s: duplicate test name '%s' (%s:%d and %s:%d)\n", argv[0], all[i]->name,
				        all[i]->file, all[i]->line, all[j]->file, all[j]->line);
				free(all);
				return 2;
			}

	size_t run = 0;
	for (size_t i = 0, seen = 0; i < n; i++) {
		kgb_test_t *t = all[i];
		if (filter && !strstr(t->name, filter))
			continue;
		if ((long)(seen++ % (size_t)shard_n) != shard_k - 1)
			continue;
		if (list)
			printf("%s\t%s:%d\n", t->name, t->file, t->line);
		else
			all[run++] = t;
	}
	double t0 = now_ms();
	int failed = list ? 0 : run_all(all, run, nofork ? 1 : (int)jobs, timeout_s, nofork);
	free(all);
	if (list)
		return 0;
	printf("%zu test%s, %zu passed, %d failed (%.0f ms)\n", run, run == 1 ? "" : "s", run - (size_t)failed,
	       failed, now_ms() - t0);
	if (run == 0 && filter) {
		fprintf(stderr, "%s: no test matches '%s'\n", argv[0], filter);
		return 1;
	}
	return failed ? 1 : 0;
}
