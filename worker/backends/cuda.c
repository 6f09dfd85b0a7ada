/* Placeholder until the CUDA backend lands: reports no devices. */
#include <stdio.h>
#include "backend.h"

static int cuda_probe(kgb_device_info_t *out, int max, char *why, size_t whylen)
{
	(void)out;
	(void)max;
	snprintf(why, whylen, "CUDA backend not built");
	return 0;
}

const kgb_backend_t kgb_backend_cuda = {
	.name = "cuda",
	.probe = cuda_probe,
};
