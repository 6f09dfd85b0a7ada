/* The dev cases of an operator: the cases `kgb verify` runs for an agent while it
 * iterates (docs/agents.md, "The dev cases").
 *
 * An agent that sees the cases it is scored on can tune to them. kgb verify therefore
 * runs a fixed, public subset of the operator's cases, the same on every call and every
 * machine, derived from the catalog alone: the first KGB_DEV_SMOKE_MAX cases of the
 * smoke subset, then KGB_DEV_GRID_SAMPLE cases of the rest of the grid, two
 * neighbours at the midpoint of each of four equal strata. Final scoring runs every
 * case plus held-out cases drawn with the scoring campaign's secret key
 * (docs/security.md, "Foreknowledge"), which no dev run sees. */
#ifndef KGB_DEVCASES_H
#define KGB_DEVCASES_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

#define KGB_DEV_SMOKE_MAX 16
#define KGB_DEV_GRID_SAMPLE 8
#define KGB_DEV_MAX (KGB_DEV_SMOKE_MAX + KGB_DEV_GRID_SAMPLE)
/* The seed of every dev run: public and fixed, so the references of the dev cases are
 * computed once and every later verify finds them in the cache. A scoring campaign
 * draws a secret seed of its own. */
#define KGB_DEV_SEED 20261207

/* Write the dev case indices of op into idx[0..KGB_DEV_MAX), ascending and distinct,
 * and return how many there are (at least 1 for an operator with cases). With s the
 * smoke count capped at KGB_DEV_SMOKE_MAX and r = cases - s the rest of the grid:
 * cases 0..s-1, then, when r <= KGB_DEV_GRID_SAMPLE, every other case; else for each
 * stratum j = 0..3 of [s, cases), [s + floor(r j / 4), s + floor(r (j + 1) / 4)), the
 * cases a and a + 1 with a = s + floor(r (2j + 1) / 8), moved down to the stratum's
 * last two cases when a + 1 falls outside it. */
size_t kgb_dev_cases(const kgb_op_t *op, uint32_t idx[KGB_DEV_MAX]);

#endif
