/* The compiled-in backends, in the order the worker probes them. */
#include <string.h>
#include "backend.h"

static const kgb_backend_t *const backends[] = {
	&kgb_backend_cuda,
	&kgb_backend_hip,
	&kgb_backend_level_zero,
	&kgb_backend_opencl,
};

const kgb_backend_t *const *kgb_backends(size_t *n)
{
	*n = sizeof backends / sizeof backends[0];
	return backends;
}

const kgb_backend_t *kgb_backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}
