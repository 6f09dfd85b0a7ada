/* Autotuning over a Triton kernel's configurations (plan "configs"): compile each,
 * time each briefly on the device, keep the fastest, all before the measured runs.
 *
 * The executor owns compiling and launching; it hands the tuner two callbacks:
 *   prepare(arg, i)  make configuration i current: compile it (the backend's compile
 *                    cache makes a repeat free), bind its constants as case symbols
 *                    for grid expressions, build its launches; 0 or a KGB_BE_* code
 *   sample(arg, &ns) flush caches and run the current launches once, timed
 * A configuration whose prepare or samples fail is skipped (its code kept for the
 * message when every one fails). */
#ifndef KGB_AUTOTUNE_H
#define KGB_AUTOTUNE_H

#include <stddef.h>

typedef struct kgb_autotune_ops {
	int (*prepare)(void *arg, size_t config);
	int (*sample)(void *arg, double *ns);
} kgb_autotune_ops_t;

typedef struct kgb_autotune_result {
	long best;            /* index of the fastest configuration, or -1 if none ran */
	double best_ns;       /* its median */
	int first_rc;         /* the first failure's code (0 if none failed) */
	size_t first_failed;  /* which configuration it was */
	size_t tried, failed;
} kgb_autotune_result_t;

/* Try every configuration: one warm-up run, then `samples` timed runs (median).
 * The last configuration prepared is not necessarily the best: call prepare(best)
 * again before measuring. Never fails; see out->best. */
void kgb_autotune_pick(const kgb_autotune_ops_t *ops, void *arg, size_t nconfigs, unsigned samples,
                       kgb_autotune_result_t *out);

#endif
