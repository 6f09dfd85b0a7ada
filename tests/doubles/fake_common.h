/* What the test doubles of device runtimes (fake_hip.c, fake_ze.c) keep alike: device
 * memory as host allocations, and the handles a real driver owns. One double includes
 * it once: the state below is that library's own. */
#ifndef KGB_FAKE_COMMON_H
#define KGB_FAKE_COMMON_H

#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct alloc {
	char *p;
	size_t n;
	struct alloc *next;
} alloc_t;

static alloc_t *allocs;

/* n bytes of "device memory" (align 0: malloc's), filled with 0xcd as device memory
 * starts as garbage; NULL when out of memory. */
static inline void *dev_alloc(size_t n, size_t align)
{
	alloc_t *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	if (align ? posix_memalign((void **)&a->p, align, n ? n : 1) != 0 : !(a->p = malloc(n ? n : 1))) {
		free(a);
		return NULL;
	}
	memset(a->p, 0xcd, n);
	a->n = n;
	a->next = allocs;
	allocs = a;
	return a->p;
}

/* Free an allocation of dev_alloc; 0 when p is not one. */
static inline int dev_free(void *p)
{
	for (alloc_t **pp = &allocs; *pp; pp = &(*pp)->next)
		if ((*pp)->p == p) {
			alloc_t *a = *pp;
			*pp = a->next;
			free(a->p);
			free(a);
			return 1;
		}
	return 0;
}

/* [p, p + n) lies inside one live allocation */
static inline int inside(const void *p, size_t n)
{
	const char *c = p;
	for (alloc_t *a = allocs; a; a = a->next)
		if (c >= a->p && c <= a->p + a->n && n <= (size_t)(a->p + a->n - c))
			return 1;
	return 0;
}

/* Every handle stays reachable from here until it is destroyed, as a real driver
 * owns its objects: a handle the caller abandons (after a hang) is not a leak. */
static void **owned;
static size_t nowned, capowned;

static inline void *own(void *p)
{
	if (!p)
		return NULL;
	if (nowned == capowned) {
		capowned = capowned ? 2 * capowned : 64;
		void **n = realloc(owned, capowned * sizeof *owned);
		if (!n)
			abort();
		owned = n;
	}
	owned[nowned++] = p;
	return p;
}

static inline void disown(void *p)
{
	for (size_t i = 0; i < nowned; i++)
		if (owned[i] == p) {
			owned[i] = owned[--nowned];
			break;
		}
	free(p);
}

#endif
