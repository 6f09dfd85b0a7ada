/* The dev cases of an operator; see devcases.h. */
#include "devcases.h"

size_t kgb_dev_cases(const kgb_op_t *op, uint32_t idx[KGB_DEV_MAX])
{
	uint32_t n = kgb_op_case_count(op);
	uint32_t s = kgb_op_smoke_case_count(op);
	size_t m = 0;

	if (s > KGB_DEV_SMOKE_MAX)
		s = KGB_DEV_SMOKE_MAX;
	if (s > n)
		s = n;
	for (uint32_t i = 0; i < s; i++)
		idx[m++] = i;
	uint64_t r = n - s;
	uint64_t k = r < KGB_DEV_GRID_SAMPLE ? r : KGB_DEV_GRID_SAMPLE;
	/* the midpoint of stratum j of k equal strata of [s, n): distinct since r >= k */
	for (uint64_t j = 0; j < k; j++)
		idx[m++] = s + (uint32_t)(r * (2 * j + 1) / (2 * k));
	return m;
}
