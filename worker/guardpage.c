/* Guard pages around host-memory buffers (see guardpage.h). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "guardpage.h"
#include "executor.h"

#define MAX_GUARDED 1024

/* One live mapping: [lo, hi) is all of it, [rw_lo, rw_hi) its accessible middle.
 * Written with atomic stores (lo last on insert, first on removal) so that the
 * signal handler, which only reads, never sees a half-written entry as live. */
typedef struct zone {
	uintptr_t lo, hi, rw_lo, rw_hi;
} zone_t;

static zone_t zones[MAX_GUARDED];

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* See guardpage.h. */
void *kgb_guard_map(size_t bytes, size_t align)
{
	size_t pg = page_size();
	size_t zone = round_up(KGB_GUARD_PAGE_ZONE, pg);
	size_t rw = round_up(bytes ? bytes : 1, pg);
	if (align == 0 || (align & (align - 1)) != 0 || rw > SIZE_MAX - 2 * zone) {
		errno = EINVAL;
		return NULL;
	}
	int slot = -1;
	for (int i = 0; i < MAX_GUARDED; i++)
		if (__atomic_load_n(&zones[i].lo, __ATOMIC_ACQUIRE) == 0) {
			slot = i;
			break;
		}
	if (slot < 0) {
		errno = ENOSPC;
		return NULL;
	}
	uint8_t *base = mmap(NULL, rw + 2 * zone, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mprotect(base + zone, rw, PROT_READ | PROT_WRITE) != 0) {
		int e = errno;
		munmap(base, rw + 2 * zone);
		errno = e;
		return NULL;
	}
	zone_t *z = &zones[slot];
	__atomic_store_n(&z->hi, (uintptr_t)(base + rw + 2 * zone), __ATOMIC_RELAXED);
	__atomic_store_n(&z->rw_lo, (uintptr_t)(base + zone), __ATOMIC_RELAXED);
	__atomic_store_n(&z->rw_hi, (uintptr_t)(base + zone + rw), __ATOMIC_RELAXED);
	__atomic_store_n(&z->lo, (uintptr_t)base, __ATOMIC_RELEASE);
	/* the end of the buffer against the trailing zone */
	uintptr_t p = (uintptr_t)(base + zone + rw) - (bytes ? bytes : 1);
	p &= ~(uintptr_t)(align - 1);
	return (void *)p;
}

/* See guardpage.h. */
void kgb_guard_unmap(void *p, size_t bytes, size_t align)
{
	(void)bytes;
	(void)align;
	if (!p)
		return;
	uintptr_t a = (uintptr_t)p;
	for (int i = 0; i < MAX_GUARDED; i++) {
		zone_t *z = &zones[i];
		uintptr_t lo = __atomic_load_n(&z->lo, __ATOMIC_ACQUIRE);
		if (lo == 0 || a < z->rw_lo || a >= z->rw_hi)
			continue;
		size_t len = z->hi - lo;
		__atomic_store_n(&z->lo, 0, __ATOMIC_RELEASE);
		munmap((void *)lo, len);
		return;
	}
}

/* See guardpage.h. */
int kgb_guard_hit(uintptr_t addr)
{
	for (int i = 0; i < MAX_GUARDED; i++) {
		uintptr_t lo = __atomic_load_n(&zones[i].lo, __ATOMIC_ACQUIRE);
		if (lo == 0 || addr < lo || addr >= zones[i].hi)
			continue;
		if (addr >= zones[i].rw_lo && addr < zones[i].rw_hi)
			return 0;
		return 1;
	}
	return 0;
}

static void say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));
	(void)r;
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	if (si && kgb_guard_hit((uintptr_t)si->si_addr)) {
		bool wrote = true;  /* where the CPU does not say, a guard-page fault counts as a write */
#if defined(__x86_64__) && defined(REG_ERR)
		const ucontext_t *uc = ucv;
		if (uc)
			wrote = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;  /* page-fault error code: W bit */
#else
		(void)ucv;
#endif
		say(wrote ? "executor: the kernel wrote into a guard page beyond a buffer's guard band\n"
		          : "executor: the kernel read from a guard page beyond a buffer's guard band\n");
		_exit(wrote ? KGB_EXEC_EXIT_OOB_WRITE : KGB_EXEC_EXIT_OOB_READ);
	}
	/* not ours: the default action on return (the instruction faults again) */
	signal(sig, SIG_DFL);
}

/* See guardpage.h. */
int kgb_guard_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGBUS, &sa, NULL) != 0)
		return -1;
	return 0;
}
