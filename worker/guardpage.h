/* Inaccessible pages around host-memory buffers, and the fault handler that turns a
 * kernel's access into one of them into a verdict.
 *
 * On devices whose buffers are host memory (OpenCL on a CPU through PoCL) a buffer is
 * placed inside its own mapping, with KGB_GUARD_PAGE_ZONE bytes of PROT_NONE memory on
 * both sides and its end against the trailing zone. A kernel that reads or writes
 * past the executor's software guard bands (KGB_GUARD_BYTES) lands in a zone and the
 * processor faults at once, before it can touch any other buffer. The handler that
 * kgb_guard_install sets for SIGSEGV and SIGBUS looks the faulting address up; inside
 * a zone it ends the executor with KGB_EXEC_EXIT_OOB_WRITE or KGB_EXEC_EXIT_OOB_READ
 * (executor.h), which the worker turns into the verdict of the case in progress.
 * Any other fault keeps the default action (the crash verdict). */
#ifndef KGB_GUARDPAGE_H
#define KGB_GUARDPAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Bytes of inaccessible address space on each side of a guarded buffer (address space
 * only: nothing is committed). A stray access farther than this from the buffer may
 * land in another mapping and is not attributed. */
#define KGB_GUARD_PAGE_ZONE (1u << 20)

/* Map `bytes` (> 0) of read-write memory between two inaccessible zones, the end of
 * the returned range exactly at the start of the trailing zone when bytes is a
 * multiple of the page size (else the start is aligned down to `align`, a power of
 * two). Registers the zones with the fault handler. Returns NULL with errno set when
 * the mapping fails or the registry is full. */
void *kgb_guard_map(size_t bytes, size_t align);

/* Unmap a range returned by kgb_guard_map (same bytes and align) and forget its
 * zones. p NULL is a no-op. */
void kgb_guard_unmap(void *p, size_t bytes, size_t align);

/* 1 if addr lies in the zone of a live guarded mapping, 0 otherwise (async-signal-safe). */
int kgb_guard_hit(uintptr_t addr);

/* Set the SIGSEGV/SIGBUS handler described above (executor child only). */
int kgb_guard_install(void);

#endif
