/* The operator catalog: every operator kgb evaluates is defined once, here, in C.
 *
 * An operator (kgb_op_t) has a name (as in the benchmark's operator list), a source
 * (aten, vllm, cublas), a category, datasets it belongs to, one or more case grids
 * (each the Cartesian product of parameter lists), a setup function that turns one
 * point of the grid into concrete tensors and scalars (kgb_case_t), and a CPU
 * reference computed in double precision.
 *
 * Case numbering: the grids are concatenated; within a grid the LAST parameter varies
 * fastest. A case index is stable for a given catalog version.
 *
 * Parameter lists are written as strings of space-separated values, parsed once:
 *   "f16 bf16 f32"            identifiers (dtype names, layout names, modes)
 *   "1 7 1024"                integers;  "0.5 -2.0 1e-3"  floats
 *   "[] [1] [33,65] [2,3,4,5,6]"   shapes (lists of integers; [] is 0-d)
 */
#ifndef KGB_CATALOG_H
#define KGB_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "dtype.h"
#include "expr.h"
#include "util.h"

#define KGB_MAX_DIMS 8
#define KGB_MAX_TENSORS 12
#define KGB_MAX_SCALARS 12
#define KGB_MAX_PARAMS 10
#define KGB_MAX_GRIDS 10
#define KGB_MAX_PVALS 64

typedef enum { KGB_ROLE_IN = 0, KGB_ROLE_OUT, KGB_ROLE_INOUT } kgb_role_t;

/* datasets (bit mask) */
enum {
	KGB_DS_ATEN = 1u << 0,   /* the 110 ATen operators; also named "mc" */
	KGB_DS_VLLM = 1u << 1,
	KGB_DS_CUBLAS = 1u << 2,
	KGB_DS_DEMO = 1u << 3,   /* the operators of the demo campaign */
};
#define KGB_DS_MC KGB_DS_ATEN
#define KGB_DS_NOCUBLAS (KGB_DS_ATEN | KGB_DS_VLLM)
#define KGB_DS_MS (KGB_DS_ATEN | KGB_DS_VLLM | KGB_DS_CUBLAS)

/* How input values are drawn (per tensor, set by setup; default KGB_GEN_UNIFORM on
 * [lo, hi) = [-1, 1) shifted by a per-seed non-zero mean and scaled by a per-seed
 * factor so that zeros or constants cannot pass). */
typedef enum {
	KGB_GEN_DEFAULT = 0,   /* uniform, random non-zero mean and scale per seed */
	KGB_GEN_UNIFORM,       /* uniform on [lo, hi) exactly */
	KGB_GEN_NORMAL,        /* N(lo, hi^2): lo = mean, hi = stdev */
	KGB_GEN_INT,           /* integers uniform on [lo, hi] inclusive */
	KGB_GEN_BOOL,          /* 0/1 with P(1) = lo (0.5 if lo == 0) */
	KGB_GEN_PERM,          /* a permutation of 0..numel-1 (unique indices) */
	KGB_GEN_ZERO,          /* all zeros (e.g. the destination of an in-place fill) */
} kgb_gen_t;

typedef enum { KGB_PV_INT = 0, KGB_PV_FLOAT, KGB_PV_STR, KGB_PV_SHAPE } kgb_pv_kind_t;

typedef struct kgb_pval {
	kgb_pv_kind_t kind;
	int64_t i;                 /* KGB_PV_INT (also set, truncated, for FLOAT) */
	double f;                  /* KGB_PV_FLOAT (also set for INT) */
	char s[32];                /* KGB_PV_STR; for every kind, the value as written */
	int ndim;                  /* KGB_PV_SHAPE */
	int64_t dims[KGB_MAX_DIMS];
} kgb_pval_t;

typedef struct kgb_tensor {
	const char *name;          /* static string */
	kgb_role_t role;
	kgb_dtype_t dtype;
	int ndim;
	int64_t shape[KGB_MAX_DIMS];
	int64_t stride[KGB_MAX_DIMS]; /* in elements */
	size_t numel;              /* product of shape (1 for 0-d) */
	size_t storage;            /* elements in the underlying buffer */
	kgb_gen_t gen;
	double lo, hi;             /* generator parameters */
} kgb_tensor_t;

typedef struct kgb_scalar {
	const char *name;          /* static string */
	kgb_dtype_t dtype;         /* how it is passed to kernels (f32, i32, i64, ...) */
	double value;
} kgb_scalar_t;

struct kgb_op;

typedef struct kgb_case {
	const struct kgb_op *op;
	uint32_t index;
	int grid;                          /* which grid the case came from */
	const kgb_pval_t *pv[KGB_MAX_PARAMS]; /* this case's value of each grid param */
	int ntensors;
	kgb_tensor_t t[KGB_MAX_TENSORS];
	int nscalars;
	kgb_scalar_t s[KGB_MAX_SCALARS];
	bool timed;                        /* performance-gated case */
	/* tolerance: |out - ref| <= atol + rtol * |ref|, with atol = atol_rel * max|ref|
	 * over the output (computed by the validator). Set by kgb_case_default_tol from
	 * the output dtype; setup may override after that. Exact compare: 0 and 0. */
	double rtol, atol_rel;
	/* the floor of the tolerance in steps of the output dtype at ref (0 or 1: one
	 * step; kgb_aten_half_intermediates raises it) */
	double tol_steps;
	double reduce_len;                 /* length of the reduction behind each output */
	bool allow_nan;                    /* NaN passes where the reference is NaN (always) */
	kgb_symtab_t *sym;                 /* symbols for plan expressions; owned */
	char label[192];                   /* "dtype=f16 shape=[33,65] alpha=2" */
	int64_t iparam[8];                 /* free slots for setup -> reference values */
	double fparam[8];
	bool heldout;                      /* a held-out case (kgb_case_build_keyed) */
	uint32_t heldout_base;             /* held-out: the public case it resizes */
	uint64_t heldout_key;              /* held-out: the campaign's key it was built with */
	kgb_pval_t hv[KGB_MAX_PARAMS];     /* held-out: its own values of the resized params */
} kgb_case_t;

/* Host-side buffers for one case: for each tensor, its values in double (storage
 * elements, strided layout) as generated / as computed by the reference. */
typedef struct kgb_hostbufs {
	int n;
	double *v[KGB_MAX_TENSORS];        /* owned; length t[i].storage */
} kgb_hostbufs_t;

typedef int (*kgb_setup_fn)(kgb_case_t *c, char *err, size_t errlen);
/* Compute outputs (role OUT/INOUT) into b->v from inputs. For INOUT tensors, b->v
 * holds the input values on entry and must hold the result on exit. Inputs are the
 * values after rounding to their dtype. Return 0 or -1. */
typedef int (*kgb_ref_fn)(const kgb_case_t *c, kgb_hostbufs_t *b);

/* Custom validation for operators whose result is not one exact answer (random
 * operators: distribution tests). Gets inputs and the device's outputs (as double);
 * returns a verdict code (KGB_V_* from validate.h) and fills msg. NULL: elementwise. */
typedef int (*kgb_check_fn)(const kgb_case_t *c, const kgb_hostbufs_t *inputs,
                            const kgb_hostbufs_t *outputs, double *max_abs, double *max_rel,
                            char *msg, size_t msglen);

/* Optional input rule run after the default generation (for example: make some of
 * `other` equal to `self` so that ties are tested, or fill a cos/sin table). rng is
 * seeded from (op, case index, seed), so the rule is deterministic. It may overwrite
 * the values of IN and INOUT tensors; the catalog rounds them to their dtypes again
 * afterwards. */
typedef void (*kgb_gen_fn)(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b);

typedef struct kgb_param_spec {
	const char *name;
	const char *values;        /* see the top of this file */
} kgb_param_spec_t;

typedef struct kgb_grid_spec {
	kgb_param_spec_t params[KGB_MAX_PARAMS];  /* terminated by {NULL, NULL} */
} kgb_grid_spec_t;

typedef struct kgb_op {
	const char *name;          /* "add", "rms_norm", "cublasSgemm_v2" */
	const char *source;        /* "aten", "vllm", "cublas" */
	const char *category;      /* as in the operator list */
	const char *dtypes;        /* "bf16 f16 f32" for listings */
	unsigned datasets;         /* KGB_DS_* mask */
	const char *summary;       /* one line: the semantics a kernel must implement */
	const char *signature;     /* "self:in other:in out:out alpha:f32" for docs/listing */
	kgb_grid_spec_t grids[KGB_MAX_GRIDS]; /* terminated by a grid with params[0].name NULL */
	kgb_setup_fn setup;
	kgb_ref_fn ref;
	kgb_check_fn check;        /* NULL: elementwise tolerance compare */
	bool inplace;              /* some tensor is INOUT: input-unchanged check skips it */
	int declared_cases;        /* the public benchmark's declared count (for docs) */
	const char *deviation;     /* why kgb's cases differ from the public ones, or NULL */
	kgb_gen_fn gen_inputs;     /* NULL: every tensor from its kgb_gen_t rule only */
	/* The number of LEADING grids that form the operator's smoke subset (a few small
	 * cases for quick campaigns such as the demo; manifests select it with
	 * "cases": "smoke"). 0: no separate subset, smoke = every case. Because grids are
	 * concatenated in order, the smoke cases are case indices 0..smoke count - 1. */
	int smoke_grids;
	/* Tensors that some cases have and others lack (ATen's optional arguments:
	 * "bias", "weight pos_weight"), space-separated. Every case of the operator gets
	 * the integer symbol has.NAME (1 when the case has the tensor, else 0), so one
	 * plan can pick its kernels with "when" (docs/candidate-format.md). NULL: none. */
	const char *optional;
	/* Held-out cases (docs/security.md, "Foreknowledge"): the grid parameters, shapes
	 * or integers, space-separated, that a held-out case gives sizes outside the public
	 * list; the operator's setup checks the new sizes as it checks every case. NULL: the
	 * generic rule picks them from the grids (kgb_op_heldout_params). */
	const char *heldout;
	/* Why the operator has no held-out cases although the generic rule would give it
	 * some (sizes fixed by a format, a relation between parameters its setup does not
	 * check): `kgb ops NAME` prints it. NULL: none. */
	const char *no_heldout;
} kgb_op_t;

/* ATen overloads. An operator whose cases call different ATen overloads (add.Tensor,
 * add.Scalar) has a grid parameter named "overload" whose values are the overload
 * names without the operator ("Tensor", "Scalar", "default" for the unnamed one).
 * Every case of such an operator gets the string symbol `overload` and, for every
 * overload the operator has, the integer symbol overload.NAME (1 for the case's own
 * overload, else 0); its label shows overload=<op>.<NAME>. */
#define KGB_OVERLOAD_PARAM "overload"
#define KGB_MAX_OVERLOADS 8

/* ---- catalog registry ---- */

/* All operators, in a stable order. Parses the parameter lists on first use; aborts
 * with a message naming the operator and the parameter if one is malformed (a bug
 * in the catalog, caught by the unit tests). */
size_t kgb_catalog_count(void);
const kgb_op_t *kgb_catalog_at(size_t i);
const kgb_op_t *kgb_catalog_find(const char *name);
/* A hash of every definition plus the catalog's revision number: workers and the
 * coordinator must agree on it. Static string. */
const char *kgb_catalog_version(void);
/* Dataset name -> mask: "aten" "mc" "vllm" "cublas" "nocublas" "ms" "demo" "all". */
int kgb_dataset_parse(const char *name, unsigned *mask);

uint32_t kgb_op_case_count(const kgb_op_t *op);
uint32_t kgb_op_timed_count(const kgb_op_t *op);   /* builds every case once; cached */
/* Number of cases of op's smoke subset: the cases of its first smoke_grids grids, or
 * every case when smoke_grids is 0. They are case indices 0..count-1. */
uint32_t kgb_op_smoke_case_count(const kgb_op_t *op);
/* The overloads of op (the values of its "overload" grid parameter, in order of first
 * appearance) into names[] (static strings owned by the catalog) and, if counts is
 * not NULL, the number of cases of each. Returns how many (0: the operator has no
 * overload parameter). */
int kgb_op_overloads(const kgb_op_t *op, const char *names[KGB_MAX_OVERLOADS], uint32_t *counts);

/* Build case `index` of op into *c (caller provides storage; release with
 * kgb_case_release). Returns 0 or -1 with err filled. */
int kgb_case_build(const kgb_op_t *op, uint32_t index, kgb_case_t *c, char *err, size_t errlen);
/* The label of case `index` of op ("dtype=f16 shape=[33,65] alpha=2", as
 * kgb_case_build sets it) without building the case: no setup, no allocation. Returns
 * 0, or -1 when index is out of range. */
int kgb_case_label(const kgb_op_t *op, uint32_t index, char *out, size_t outlen);
void kgb_case_release(kgb_case_t *c);

/* Held-out cases. Case index count + base * KGB_HELDOUT_MAX + h (h < KGB_HELDOUT_MAX)
 * of an operator with held-out parameters is its held-out case h of public case base:
 * base's parameters with those of kgb_op_heldout_params resized, each dimension or
 * integer of 2 or more grown by 1 to 16 (a dimension to an odd size) to a value that no
 * public case of the parameter has, drawn from (operator, base, h, key); a base with
 * nothing to resize, or whose setup refuses the new sizes, passes to the next case
 * that has some. The key is the campaign's (kgb_seeds_t.heldout): without it the sizes
 * cannot be foreseen. A held-out case is never timed: only its verdict counts. */
#define KGB_HELDOUT_MAX 64
/* Held-out cases per candidate when a manifest does not say (its "heldout"). */
#define KGB_HELDOUT_DEFAULT 2
bool kgb_op_has_heldout(const kgb_op_t *op);
/* The grid parameters op's held-out cases resize, space-separated (static storage),
 * or NULL when it has none. op->heldout when set; otherwise the generic rule: the
 * size-valued parameters by name and source, those a kernel of the operator must take
 * at any value (ATen and cuBLAS: the shape-valued `shape`, `self_shape`, `size`, `mnk`,
 * `mn`, `nk`; cuBLAS: the integers `m`, `n`; vLLM: the integer `num_tokens`), when
 * every value of the parameter in every grid is of its kind; none when op->no_heldout
 * is set. */
const char *kgb_op_heldout_params(const kgb_op_t *op);
/* Why op has no held-out cases (static string), or NULL when it has some. */
const char *kgb_op_no_heldout_reason(const kgb_op_t *op);
uint32_t kgb_heldout_index(const kgb_op_t *op, uint32_t base, uint32_t h);
/* kgb_case_build that also builds held-out indices, from key. Its label starts with
 * "heldout=H of=BASE". kgb_case_build refuses held-out indices. */
int kgb_case_build_keyed(const kgb_op_t *op, uint32_t index, uint64_t key, kgb_case_t *c, char *err,
                         size_t errlen);
/* The case's ATen overload, "sub.Scalar", into buf (NULL when its operator has no
 * overload parameter). Returns buf or NULL. */
const char *kgb_case_overload(const kgb_case_t *c, char *buf, size_t n);

/* ---- helpers for setup functions ---- */

/* The case's value of grid parameter `name` (NULL if the grid has no such param). */
const kgb_pval_t *kgb_case_param(const kgb_case_t *c, const char *name);
int64_t kgb_case_pint(const kgb_case_t *c, const char *name, int64_t dflt);
double kgb_case_pfloat(const kgb_case_t *c, const char *name, double dflt);
const char *kgb_case_pstr(const kgb_case_t *c, const char *name, const char *dflt);
/* Add a contiguous tensor. Returns it (never NULL; aborts past KGB_MAX_TENSORS). */
kgb_tensor_t *kgb_case_add_tensor(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt,
                                  int ndim, const int64_t *shape);
/* Re-stride a tensor: "contig", "transposed" (last two dims swapped in memory),
 * "strided" (every dim's stride padded: inner stride 2, a gap between rows). */
int kgb_tensor_layout(kgb_tensor_t *t, const char *layout);
void kgb_tensor_finish(kgb_tensor_t *t);           /* recompute numel/storage from shape/stride */
kgb_scalar_t *kgb_case_add_scalar(kgb_case_t *c, const char *name, kgb_dtype_t dt, double v);
void kgb_case_set_sym(kgb_case_t *c, const char *name, int64_t v);
kgb_tensor_t *kgb_case_tensor(const kgb_case_t *c, const char *name);
int kgb_case_tensor_index(const kgb_case_t *c, const char *name);
/* Default tolerance from the dtype of the first output, and reduce_len:
 * rtol f16 1e-3, bf16 1.6e-2, f32 1e-5 (f64 1e-9); atol_rel = rtol-scaled term growing
 * with sqrt(reduce_len), the length capped at 16 for f16/bf16 outputs and 4096 for f32
 * (c->reduce_len itself is left as it is), atol_rel at most 0.05; integers and bool
 * exact. */
void kgb_case_default_tol(kgb_case_t *c);

/* Offset (in elements) of multi-index idx in t. */
static inline size_t kgb_tensor_offset(const kgb_tensor_t *t, const int64_t *idx)
{
	size_t off = 0;
	for (int d = 0; d < t->ndim; d++)
		off += (size_t)(idx[d] * t->stride[d]);
	return off;
}
/* Offset (in elements) of the element with row-major flat index `flat` of t's view. */
size_t kgb_tensor_flat_offset(const kgb_tensor_t *t, size_t flat);
/* Iterate a multi-index over t's shape in row-major order: start with idx all zeros,
 * returns false after the last element. */
bool kgb_index_next(const kgb_tensor_t *t, int64_t *idx);

/* ---- inputs and references ---- */

/* Generate the inputs for (case, seed): for every tensor, values rounded to its dtype
 * (outputs get zeros, INOUT get inputs). Deterministic in (op, case index, seed,
 * tensor name). b is filled; release with kgb_hostbufs_release. */
int kgb_case_inputs(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen);
/* Compute (or load from the cache) the reference outputs for (case, seed): b gets
 * every tensor, inputs as generated and outputs as the reference computed them.
 * The cache (docs/references.md, "The reference cache") lives in $KGB_CACHE_DIR/ref
 * (default ~/.cache/kgb/ref), content-addressed by catalog version, operator, case,
 * seed and held-out key; it holds the inputs too; bounded in size (KGB_REF_CACHE_MB,
 * default KGB_REF_CACHE_MB_DEFAULT; 0 turns it off; least recently used removed
 * first). */
int kgb_case_reference(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen);
/* kgb_case_reference that also gives the inputs (as kgb_case_inputs would: outputs
 * zero, INOUT tensors their inputs) into *in (NULL: not wanted), from the same cache
 * entry: a hit generates nothing. On failure neither holds anything. */
int kgb_case_reference_inputs(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *ref, kgb_hostbufs_t *in, char *err,
                              size_t errlen);
/* kgb_case_reference without the cache, neither read nor written: for inputs drawn once
 * (a validated timed sample's, from a seed nobody will ask for again). */
int kgb_case_reference_once(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *b, char *err, size_t errlen);
#define KGB_REF_CACHE_MB_DEFAULT 4096
/* The cache's directory (caller frees): $KGB_CACHE_DIR/ref, else ~/.cache/kgb/ref. */
char *kgb_ref_cache_root(void);
/* The file of (c, seed)'s entry (caller frees); it may not exist. */
char *kgb_ref_cache_path(const kgb_case_t *c, uint64_t seed);
/* This process's lookups so far: entries found valid, and lookups that computed. */
void kgb_ref_cache_counts(uint64_t *hits, uint64_t *misses);
/* Nanoseconds this process spent generating inputs through the reference functions
 * (a miss's generation, kgb_case_reference_once's). */
uint64_t kgb_inputs_ns(void);
/* Remove least recently used entries until the cache is under its bound. */
void kgb_ref_cache_trim(void);
void kgb_hostbufs_release(kgb_hostbufs_t *b);

#endif
