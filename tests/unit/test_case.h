/* Cases of the catalog picked by label, for the operator spot checks
 * (test_aten_ops.c, test_vllm_quant.c). */
#ifndef KGB_TEST_CASE_H
#define KGB_TEST_CASE_H

#include <string.h>

#include "catalog.h"
#include "test.h"

/* Build the case of op labelled label, with its inputs in *b. Operators with ATen
 * overloads label their cases "overload=NAME ..." first; label may leave that out.
 * Fails the test when there is no such case. Returns the operator. */
static inline const kgb_op_t *tc_open(const char *op, const char *label, kgb_case_t *c, kgb_hostbufs_t *b)
{
	char err[256];
	const kgb_op_t *o = kgb_catalog_find(op);
	if (!o)
		FAIL("operator %s is not in the catalog", op);
	uint32_t n = kgb_op_case_count(o);
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_OK(kgb_case_build(o, i, c, err, sizeof err), err);
		const char *rest = c->label;
		if (strncmp(rest, "overload=", 9) == 0 && strchr(rest, ' '))
			rest = strchr(rest, ' ') + 1;
		if (strcmp(c->label, label) == 0 || strcmp(rest, label) == 0) {
			ASSERT_OK(kgb_case_inputs(c, 1, b, err, sizeof err), err);
			return o;
		}
		kgb_case_release(c);
	}
	FAIL("operator %s has no case labelled '%s'", op, label);
}

/* The first cases of op (in index order, at most max) for which match(case, arg)
 * holds, into out; returns how many. */
static inline size_t tc_find(const char *op, bool (*match)(const kgb_case_t *c, const void *arg), const void *arg,
                             uint32_t *out, size_t max)
{
	const kgb_op_t *o = kgb_catalog_find(op);
	ASSERT_TRUE(o != NULL);
	size_t k = 0;
	for (uint32_t i = 0; i < kgb_op_case_count(o) && k < max; i++) {
		kgb_case_t c;
		char err[256];
		ASSERT_OK(kgb_case_build(o, i, &c, err, sizeof err), err);
		if (match(&c, arg))
			out[k++] = i;
		kgb_case_release(&c);
	}
	return k;
}

/* The buffer of tensor in b (the case's inputs, or a copy of them). */
static inline double *tc_buf(const kgb_op_t *op, const kgb_case_t *c, const kgb_hostbufs_t *b, const char *tensor)
{
	int i = kgb_case_tensor_index(c, tensor);
	if (i < 0)
		FAIL("operator %s: no tensor %s", op->name, tensor);
	return b->v[i];
}

#endif
