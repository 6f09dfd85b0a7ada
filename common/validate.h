/* Verdicts and the validator shared by every backend (and the catalog self-test).
 *
 * The executor runs a case at least twice on the same inputs, each time after filling
 * every output (and scratch) buffer with poison: a random per-element pattern drawn for
 * each run (kgb_validate_in_t.before1/before2; docs/security.md), or the byte patterns
 * KGB_POISON1 and KGB_POISON2, with guard bands of KGB_GUARD_BYTES filled with KGB_GUARD_BYTE before
 * and after every buffer. It reads every tensor back after each run and hands the raw
 * bytes here. The validator decides, in this order of precedence:
 *   out_of_bounds_write  a guard byte changed (the executor reports it per tensor)
 *   input_modified       an IN tensor's bytes differ from what was uploaded
 *   unwritten_output     an output element still holds the poison after both runs
 *   wrong_result         |out - ref| > atol + rtol*|ref| anywhere, or NaN where the
 *                        reference is not NaN (and not-NaN where it is)
 *   nondeterministic     run 1 passed but run 2 (same inputs) did not agree with it
 * Some timed runs are validated again with the same rules, on inputs of their own
 * (stale_result when they fail; docs/security.md). */
#ifndef KGB_VALIDATE_H
#define KGB_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "catalog.h"

/* Same numbers as kgb.Verdict in proto/kgb.proto. */
typedef enum {
	KGB_V_UNSPECIFIED = 0,
	KGB_V_PASS = 1,
	KGB_V_COMPILE_ERROR = 2,
	KGB_V_LAUNCH_ERROR = 3,
	KGB_V_CRASH = 4,
	KGB_V_TIMEOUT = 5,
	KGB_V_WRONG_RESULT = 6,
	KGB_V_UNWRITTEN_OUTPUT = 7,
	KGB_V_OUT_OF_BOUNDS_WRITE = 8,
	KGB_V_INPUT_MODIFIED = 9,
	KGB_V_NONDETERMINISTIC = 10,
	KGB_V_ILLEGAL_ADDRESS = 11,
	KGB_V_RESOURCE_ERROR = 12,
	KGB_V_PLAN_ERROR = 13,
	KGB_V_NOT_RUN = 14,
	KGB_V_INFRA_ERROR = 15,
	KGB_V_UNSUPPORTED = 16,
	KGB_V_HOST_COMPUTE = 17,     /* python candidates (docs/python-candidates.md) */
	KGB_V_NO_LAUNCH = 18,
	KGB_V_HOST_SYNC = 19,
	KGB_V_FOREIGN_POINTER = 20,
	KGB_V_IMPORT_ERROR = 21,
	KGB_V_OVERFIT = 22,          /* a candidate's: every public case passed, a held-out case failed */
	/* a timed sample, validated on inputs no earlier launch saw, does not match their
	 * reference: an answer kept from an earlier launch (docs/security.md) */
	KGB_V_STALE_RESULT = 24,
	KGB_V__COUNT
} kgb_verdict_t;

/* "pass", "compile_error", ... ; kgb_verdict_parse returns -1 for unknown names. */
const char *kgb_verdict_name(int v);
int kgb_verdict_parse(const char *s);

#define KGB_POISON1 0xFFu      /* NaN for every float type, -1 for integers */
#define KGB_POISON2 0xA5u
#define KGB_GUARD_BYTE 0x5Au
#define KGB_GUARD_BYTES 4096u

/* Convert between the double values of a tensor's storage and its raw bytes. */
void kgb_tensor_pack(const kgb_tensor_t *t, const double *vals, void *bytes);
void kgb_tensor_unpack(const kgb_tensor_t *t, const void *bytes, double *vals);

typedef struct kgb_validate_in {
	const kgb_case_t *c;
	const kgb_hostbufs_t *ref;             /* inputs and reference outputs */
	const void *uploaded[KGB_MAX_TENSORS]; /* raw bytes uploaded before run 1 */
	const void *run1[KGB_MAX_TENSORS];     /* raw bytes read back after run 1 */
	const void *run2[KGB_MAX_TENSORS];     /* after run 2 (may be NULL: single run) */
	uint8_t poison1, poison2;
	/* OUT tensors: the bytes the buffer held before run 1 / run 2 (a per-element poison
	 * pattern). NULL: every byte was poison1 / poison2. */
	const void *before1[KGB_MAX_TENSORS], *before2[KGB_MAX_TENSORS];
	bool guard_broken[KGB_MAX_TENSORS];    /* the executor's guard band check */
} kgb_validate_in_t;

typedef struct kgb_validate_out {
	int verdict;                           /* KGB_V_* */
	double max_abs_err, max_rel_err;       /* over all outputs, run 1 */
	char message[256];                     /* "out[17] = 0.5, expected 1.25 (tol 1e-5)" */
} kgb_validate_out_t;

/* Judge one case. Never fails: the verdict says what happened. */
void kgb_validate(const kgb_validate_in_t *in, kgb_validate_out_t *out);

/* Compare one output buffer (raw bytes) against the reference only: used for the timed
 * run and by the catalog self-test. Returns a KGB_V_* verdict. poison: the byte the
 * buffer was filled with before the run (for unwritten detection), or -1 for none. */
int kgb_validate_output(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *inputs,
                        int tensor, const void *bytes, int poison, double *max_abs, double *max_rel,
                        char *msg, size_t msglen);

/* The same with the buffer's contents before the run given as bytes: before (NULL:
 * poison, a byte or -1) is what an OUT buffer held (its storage gaps must still hold
 * it); unwritten: count elements still equal to it as unwritten (false when before
 * is a legitimate earlier result, e.g. a buffer reused without poison). */
int kgb_validate_output_before(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *inputs,
                               int tensor, const void *bytes, const void *before, int poison, bool unwritten,
                               double *max_abs, double *max_rel, char *msg, size_t msglen);

/* The tolerance of one output element (docs/adding-an-operator.md, "Tolerance"):
 * element value g passes against the reference r (already rounded to dt) when
 * |g - r| <= kgb_validate_elem_tol(c, dt, r, atol), where atol = c->atol_rel * max|ref|
 * over the tensor. It is max(atol + rtol * |r|, one step of dt at r): a result one
 * rounding away from the rounded reference always passes. Exact cases (rtol and
 * atol_rel 0) and integer dtypes give 0. */
double kgb_validate_elem_tol(const kgb_case_t *c, kgb_dtype_t dt, double r, double atol);
/* One step of dt's floating-point grid at |r| (the spacing of the values of r's binade,
 * the smallest subnormal at 0); 0 for integer and bool dtypes. */
double kgb_dtype_step(kgb_dtype_t dt, double r);

#endif
