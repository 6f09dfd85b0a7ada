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
	if (r <= KGB_DEV_GRID_SAMPLE) {
		for (uint32_t i = s; i < n; i++)
			idx[m++] = i;
		return m;
	}
	/* two neighbours (which differ in the grid's fastest parameter, often the layout
	 * or dtype) at the midpoint of each of KGB_DEV_GRID_SAMPLE / 2 equal strata of
	 * [s, n), kept inside their stratum: one job each, since a job runs consecutive
	 * cases */
	uint64_t k = KGB_DEV_GRID_SAMPLE / 2;
	for (uint64_t j = 0; j < k; j++) {
		uint64_t mid = r * (2 * j + 1) / (2 * k), end = r * (j + 1) / k;
		uint64_t a = mid + 2 <= end ? mid : end - 2;
		idx[m++] = s + (uint32_t)a;
		idx[m++] = s + (uint32_t)a + 1;
	}
	return m;
}
