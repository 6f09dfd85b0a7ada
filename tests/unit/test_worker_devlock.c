/* The device lock (worker/devlock.h) between real processes: shared holders overlap,
 * an exclusive taker waits for them, and the gate keeps a shared taker that comes after
 * a waiting exclusive one from overtaking it, and lets exclusive takers that wait
 * together go one after another before it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include "test.h"
#include "devlock.h"
#include "util.h"

static char lock_path[512];

static void open_lock(kgb_devlock_t *l)
{
	char err[256] = "";
	if (kgb_devlock_open(l, lock_path, err, sizeof err) != 0)
		FAIL("kgb_devlock_open: %s", err);
}

/* A test's set-up: the lock file in its directory opened as *a, and a pipe pp that
 * the takers report on (pp[1]); fixture_close() closes both. */
static void fixture_open(kgb_devlock_t *a, int pp[2])
{
	snprintf(lock_path, sizeof lock_path, "%s/dev.lock", kgb_test_tmpdir());
	ASSERT_EQ_INT(pipe(pp), 0);
	open_lock(a);
}

static void fixture_close(kgb_devlock_t *a, int pp[2])
{
	kgb_devlock_close(a);
	close(pp[0]);
	close(pp[1]);
}

/* A byte from fd within ms, or 0 when none came. */
static char read_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;
	if (poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 1)
		return c;
	return 0;
}

static int note_fd = -1;

static void note_wait(void *arg, bool waiting)
{
	if (waiting && write(note_fd, arg, 1) != 1)
		_exit(3);
}

/* A child that takes the lock in mode, says `tag` on the pipe once it holds it (and
 * `w` when it has to wait), holds it hold_ms, and exits. */
static pid_t taker(int fd, int mode, char tag, int hold_ms)
{
	pid_t p = fork();
	if (p != 0)
		return p;
	kgb_devlock_t l;
	char err[256];
	note_fd = fd;
	if (kgb_devlock_open(&l, lock_path, err, sizeof err) != 0)
		_exit(2);
	static char w = 'w';
	kgb_devlock_take(&l, mode, note_wait, &w);
	if (write(fd, &tag, 1) != 1)
		_exit(3);
	usleep((useconds_t)hold_ms * 1000);
	kgb_devlock_close(&l);
	_exit(0);
}

static void reap(pid_t p)
{
	int st = 0;
	ASSERT_EQ_INT(waitpid(p, &st, 0), p);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(worker_devlock_shared_overlaps_exclusive_waits)
{
	int pp[2];
	kgb_devlock_t a;
	fixture_open(&a, pp);
	kgb_devlock_take(&a, LOCK_SH, NULL, NULL);
	ASSERT_EQ_INT(a.held, LOCK_SH);
	/* another shared taker gets it at once */
	pid_t s = taker(pp[1], LOCK_SH, 'S', 0);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'S');
	reap(s);
	/* an exclusive one waits until the shared holder lets go */
	pid_t e = taker(pp[1], LOCK_EX, 'E', 0);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	ASSERT_EQ_INT(read_within(pp[0], 200), 0);
	kgb_devlock_release(&a);
	ASSERT_EQ_INT(a.held, 0);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'E');
	reap(e);
	fixture_close(&a, pp);
}

TEST(worker_devlock_turnstile_keeps_order)
{
	int pp[2];
	kgb_devlock_t a;
	fixture_open(&a, pp);
	kgb_devlock_take(&a, LOCK_SH, NULL, NULL);
	/* E waits for the exclusive lock behind our shared hold ... */
	pid_t e = taker(pp[1], LOCK_EX, 'E', 300);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	/* ... so S, a shared taker that comes later, waits too, though the lock is only
	 * held shared: without the turnstile it would join our hold at once */
	pid_t s = taker(pp[1], LOCK_SH, 'S', 0);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	ASSERT_EQ_INT(read_within(pp[0], 300), 0);
	kgb_devlock_release(&a);
	/* E first, then S once E has let go */
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'E');
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'S');
	reap(e);
	reap(s);
	fixture_close(&a, pp);
}

/* Exclusive takers waiting together share the gate: E and F, both waiting behind our
 * exclusive hold, get the lock one after the other (either first), and S, a shared
 * taker that came between them, only after both, though it came before F. */
TEST(worker_devlock_exclusive_takers_go_first)
{
	int pp[2];
	kgb_devlock_t a;
	fixture_open(&a, pp);
	kgb_devlock_take(&a, LOCK_EX, NULL, NULL);
	pid_t e = taker(pp[1], LOCK_EX, 'E', 150);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	pid_t s = taker(pp[1], LOCK_SH, 'S', 0);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	pid_t f = taker(pp[1], LOCK_EX, 'F', 150);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	ASSERT_EQ_INT(read_within(pp[0], 200), 0);
	kgb_devlock_release(&a);
	char first = read_within(pp[0], 5000), second = read_within(pp[0], 5000);
	ASSERT_TRUE((first == 'E' && second == 'F') || (first == 'F' && second == 'E'));
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'S');
	reap(e);
	reap(f);
	reap(s);
	fixture_close(&a, pp);
}

/* kgb_devlock_try_for never queues: it gives up after its time while the lock is held
 * exclusively, and does not slip past a waiting exclusive taker into a shared hold
 * that would admit it; once nobody holds or waits it gets the lock at once. */
TEST(worker_devlock_try_for_stays_behind)
{
	int pp[2];
	kgb_devlock_t a, t;
	fixture_open(&a, pp);
	open_lock(&t);
	kgb_devlock_take(&a, LOCK_EX, NULL, NULL);
	double t0 = kgb_now_ms();
	ASSERT_TRUE(!kgb_devlock_try_for(&t, LOCK_SH, 150));
	ASSERT_TRUE(kgb_now_ms() - t0 >= 150);
	ASSERT_EQ_INT(t.held, 0);
	/* down to shared, with E waiting for the exclusive lock behind it */
	kgb_devlock_take(&a, LOCK_SH, NULL, NULL);
	pid_t e = taker(pp[1], LOCK_EX, 'E', 200);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	ASSERT_TRUE(!kgb_devlock_try_for(&t, LOCK_SH, 150));
	kgb_devlock_release(&a);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'E');
	reap(e);
	ASSERT_TRUE(kgb_devlock_try_for(&t, LOCK_SH, 1000));
	ASSERT_EQ_INT(t.held, LOCK_SH);
	/* no lock at all: held at once */
	kgb_devlock_t none = KGB_DEVLOCK_NONE;
	ASSERT_TRUE(kgb_devlock_try_for(&none, LOCK_EX, 0));
	kgb_devlock_close(&t);
	fixture_close(&a, pp);
}

TEST(worker_devlock_mode_change_and_wait_time)
{
	int pp[2];
	kgb_devlock_t a;
	fixture_open(&a, pp);
	kgb_devlock_take(&a, LOCK_SH, NULL, NULL);
	kgb_devlock_take(&a, LOCK_EX, NULL, NULL);
	ASSERT_EQ_INT(a.held, LOCK_EX);
	ASSERT_TRUE(a.wait_ms == 0);
	/* held exclusively: even a shared taker waits */
	pid_t s = taker(pp[1], LOCK_SH, 'S', 200);
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'w');
	kgb_devlock_take(&a, LOCK_SH, NULL, NULL);   /* down to shared: S may join */
	ASSERT_EQ_INT(read_within(pp[0], 5000), 'S');
	/* up again: waits for S (200 ms), and counts the wait */
	kgb_devlock_take(&a, LOCK_EX, NULL, NULL);
	ASSERT_EQ_INT(a.held, LOCK_EX);
	ASSERT_TRUE(a.wait_ms > 0);
	reap(s);
	kgb_devlock_close(&a);
	ASSERT_EQ_INT(a.fd, -1);
	/* no lock at all: every call is a no-op */
	kgb_devlock_t none = KGB_DEVLOCK_NONE;
	kgb_devlock_take(&none, LOCK_EX, NULL, NULL);
	ASSERT_EQ_INT(none.held, 0);
	char err[256] = "";
	ASSERT_EQ_INT(kgb_devlock_open(&none, "/nonexistent/dir/dev.lock", err, sizeof err), -1);
	ASSERT_CONTAINS(err, "/nonexistent/dir/dev.lock");
	fixture_close(&a, pp);   /* a is closed already */
}

/* KGB_DEVLOCK_TRACE: a line per hold, at its end, with the mode it had and times in
 * order; a mode change ends one hold and starts the next. */
TEST(worker_devlock_trace_lines)
{
	char trace[600];
	snprintf(lock_path, sizeof lock_path, "%s/dev.lock", kgb_test_tmpdir());
	snprintf(trace, sizeof trace, "%s/dev.trace", kgb_test_tmpdir());
	unlink(trace);
	setenv("KGB_DEVLOCK_TRACE", trace, 1);
	kgb_devlock_t a;
	open_lock(&a);
	unsetenv("KGB_DEVLOCK_TRACE");
	kgb_devlock_take(&a, LOCK_SH, NULL, NULL);
	usleep(2000);
	kgb_devlock_take(&a, LOCK_EX, NULL, NULL);
	usleep(2000);
	kgb_devlock_release(&a);
	kgb_devlock_release(&a);   /* not held: no line */
	kgb_devlock_close(&a);
	FILE *f = fopen(trace, "r");
	ASSERT_TRUE(f != NULL);
	long pid[3];
	char mode[3][4];
	unsigned long long t[3][3];
	int n = 0;
	while (n < 3 && fscanf(f, "%ld %3s %llu %llu %llu", &pid[n], mode[n], &t[n][0], &t[n][1], &t[n][2]) == 5)
		n++;
	fclose(f);
	ASSERT_EQ_INT(n, 2);
	ASSERT_EQ_STR(mode[0], "SH");
	ASSERT_EQ_STR(mode[1], "EX");
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ_INT(pid[i], getpid());
		ASSERT_TRUE(t[i][0] <= t[i][1] && t[i][1] + 1000000 <= t[i][2]);   /* held >= 1 ms */
	}
	ASSERT_TRUE(t[0][2] <= t[1][0]);
}
