/* Shared helpers for the ATen operator families (common/ops/aten_*.c).
 *
 * Each family file defines its operators as structs whose FIRST member is the
 * kgb_op_t, followed by per-operator data (the scalar function of an elementwise op,
 * its input domain, ...). The generic setup and reference functions of the family get
 * that data back from c->op with KGB_ATEN_DEF. Everything here is used only by the
 * family files; the rest of kgb sees plain kgb_op_t. */
#ifndef KGB_ATEN_COMMON_H
#define KGB_ATEN_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#include "catalog.h"

/* The per-operator struct of type `type` whose first member `op` is c->op. */
#define KGB_ATEN_DEF(type, c) ((const type *)(const void *)(c)->op)

/* The per-operator struct of the families whose operators differ by a kind that their
 * shared setup and reference switch on (backward, creation-fill, loss, reduction). */
typedef struct kgb_aten_kind_def {
	kgb_op_t op;
	int kind;
} kgb_aten_kind_def_t;

_Static_assert(offsetof(kgb_aten_kind_def_t, op) == 0, "op must be the first member");

/* Shape parameters at or above this many elements are timed cases by default. */
#define KGB_ATEN_TIMED_NUMEL ((size_t)1 << 20)

/* Common parameter lists (one place, so the families agree). */
#define KGB_ATEN_FLOAT_DTYPES "f16 bf16 f32"

/* The kgb_op_t fields that every ATen family's row macro (ACT_BW, CREATE, VIEW, UNARY,
 * BINARY, PUT_OP, LOSS, RED_OP) fills: source "aten" and the ATen dataset, and its own
 * name, category, dtypes, signature, setup, reference, declared case count, summary
 * and deviation note. The grids and any other fields follow in the family's macro. */
#define KGB_ATEN_OP(NAME, CAT, DT, SIG, SETUP, REF, DECL, SUMMARY, DEV)                                \
	.name = NAME, .source = "aten", .category = CAT, .dtypes = DT, .datasets = KGB_DS_ATEN,          \
	.summary = SUMMARY, .signature = SIG, .setup = SETUP, .ref = REF, .declared_cases = DECL,        \
	.deviation = DEV

/* The case's dtype parameter `param` (a dtype name); dflt when the grid has none.
 * A malformed name is a catalog bug and aborts with the operator's name. */
kgb_dtype_t kgb_aten_dtype(const kgb_case_t *c, const char *param, kgb_dtype_t dflt);

/* Copy the shape parameter `param` into dims (KGB_MAX_DIMS entries); returns ndim.
 * Aborts if the grid has no such shape parameter (a catalog bug). */
int kgb_aten_shape(const kgb_case_t *c, const char *param, int64_t *dims);

/* Add a tensor and apply `layout` ("contig", "transposed", "strided"; NULL = contig).
 * Returns the tensor, or NULL with err filled when the layout does not fit. */
kgb_tensor_t *kgb_aten_tensor(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt,
                              int ndim, const int64_t *dims, const char *layout, char *err,
                              size_t errlen);

/* An input tensor in the layout the case's "layout" parameter names (contiguous
 * when it has none): kgb_aten_tensor with role KGB_ROLE_IN. */
kgb_tensor_t *kgb_aten_input(kgb_case_t *c, const char *name, kgb_dtype_t dt, int ndim, const int64_t *dims,
                             char *err, size_t errlen);

/* The shape of a reduction's output: the dims of `dims` whose bit in mask is clear,
 * plus a 1 for each reduced dim when keep. Fills od, returns its ndim; *rlen gets the
 * number of elements reduced into each output element. */
int kgb_aten_reduced_shape(int nd, const int64_t *dims, unsigned mask, bool keep, int64_t *od, double *rlen);

/* Softmax of the n values x[j * sx] into o[j * so] (max subtracted first). */
void kgb_aten_softmax_line(const double *x, int64_t sx, double *o, int64_t so, int64_t n);

/* Set a tensor's generator (KGB_GEN_UNIFORM on [lo, hi), KGB_GEN_INT on [lo, hi], ...). */
void kgb_aten_gen(kgb_tensor_t *t, kgb_gen_t gen, double lo, double hi);

/* Finish a setup: reduce_len, the default tolerance, and `timed` when some tensor of
 * the case has at least timed_numel elements and every non-shape, non-dtype grid
 * parameter takes the first value of its list. */
void kgb_aten_finish(kgb_case_t *c, double reduce_len, size_t timed_numel);
/* For fp16/bf16 outputs of an operator whose ATen algorithm rounds k intermediates to
 * the output dtype before the result (diff of order n > 1, the composite of
 * binary_cross_entropy_with_logits, affine_grid_generator's base grid): raise
 * atol_rel to k unit roundoffs of the dtype (2^-11, 2^-8), the error those roundings
 * leave on terms no larger than the output's largest magnitude, and the step floor to
 * k/2 steps of the dtype at the element (the same roundings on terms of the element's
 * own size, which atol_rel does not cover where the element is far below the largest).
 * Call after kgb_aten_finish; other dtypes are left alone. docs/operators.md,
 * "Tolerance". */
void kgb_aten_half_intermediates(kgb_case_t *c, int k);

/* Normalise a possibly negative dimension against ndim (0-d counts as 1). */
int kgb_aten_wrap_dim(int64_t d, int ndim);

size_t kgb_aten_numel(int ndim, const int64_t *dims);

/* Offset of the element of `in` that broadcasts to multi-index idx of a tensor with
 * ondim dimensions (dims aligned on the right, size-1 dims of `in` broadcast). */
size_t kgb_aten_bcast_off(const kgb_tensor_t *in, int ondim, const int64_t *idx);

/* Iterate over the lines of t along dim: idx starts all zeros (idx[dim] stays 0);
 * returns false after the last line. For 0-d t there is one line of length 1. */
bool kgb_aten_line_next(const kgb_tensor_t *t, int dim, int64_t *idx);

/* Value of tensor ti of b at multi-index idx. */
static inline double kgb_aten_at(const kgb_case_t *c, const kgb_hostbufs_t *b, int ti,
                                 const int64_t *idx)
{
	return b->v[ti][kgb_tensor_offset(&c->t[ti], idx)];
}

/* Static tensor names "out0".."out15" / "in0".."in15" for ops with a variable count. */
const char *kgb_aten_name(const char *stem, int i);

/* Python-style floor division (the quotient rounded toward minus infinity). */
double kgb_aten_floordiv(double a, double b);

/* Double-precision special functions used by several references. */
double kgb_aten_digamma(double x);
double kgb_aten_polygamma(int n, double x);   /* n >= 0, x > 0 */
double kgb_aten_i0(double x);
double kgb_aten_softplus(double x);
double kgb_aten_sigmoid(double x);

/* A deterministic generator for the references of random operators (so that the
 * reference is itself a valid sample), keyed by the case index, a hash of the input
 * tensors (which depend on the seed) and a stream id. */
void kgb_aten_ref_rng(const kgb_case_t *c, const kgb_hostbufs_t *b, uint64_t stream, kgb_rng_t *r);

#endif
