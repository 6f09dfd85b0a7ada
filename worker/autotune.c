/* Autotuning over configurations (see autotune.h). */
#include "autotune.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

void kgb_autotune_pick(const kgb_autotune_ops_t *ops, void *arg, size_t nconfigs, unsigned samples,
                       kgb_autotune_result_t *out)
{
	memset(out, 0, sizeof *out);
	out->best = -1;
	if (samples < 1)
		samples = 1;
	double *v = kgb_xcalloc(samples, sizeof *v);
	for (size_t i = 0; i < nconfigs; i++) {
		out->tried++;
		int rc = ops->prepare(arg, i);
		double warm;
		if (rc == 0)
			rc = ops->sample(arg, &warm);
		unsigned n = 0;
		while (rc == 0 && n < samples) {
			rc = ops->sample(arg, &v[n]);
			if (rc == 0)
				n++;
		}
		if (rc != 0) {
			if (!out->failed++) {
				out->first_rc = rc;
				out->first_failed = i;
			}
			continue;
		}
		kgb_stats_t st;
		kgb_stats_compute(v, n, &st);
		if (out->best < 0 || st.median < out->best_ns) {
			out->best = (long)i;
			out->best_ns = st.median;
		}
	}
	free(v);
}
