/* libkgb: the kgb operator catalog as a shared library.
 *
 * It gives another program (a native-library provider, a Python test, a notebook) the
 * same things the kgb worker uses, from the same code: the operators and their case
 * grids, the concrete tensors of a case (sizes, strides in elements, storage), the
 * seeded inputs, the CPU reference, the validator and the timing sampler's stopping
 * rule. Link with -lkgb; every public name starts with kgb_lib_ / KGB_LIB_.
 *
 * Typical use (error checks left out):
 *
 *     int op = kgb_lib_op_find("add");
 *     kgb_lib_case_t *c = kgb_lib_case_new(op, 17, 1, err, sizeof err);
 *     for each tensor i: kgb_lib_case_tensor(c, i, &ti);
 *         IN/INOUT: copy kgb_lib_case_input(c, i, &n) to the device (n bytes, the whole
 *                   storage; element j of the view is at sum(idx[d] * stride[d]) +
 *                   storage_offset)
 *         OUT:      fill a buffer of ti.storage elements with a poison byte (0xFF)
 *     run the operator, read every OUT/INOUT buffer back (and the inputs, if the
 *     input-unchanged rule should be checked), then
 *     kgb_lib_case_validate(c, bytes, 0xFF, &v);   v.verdict == KGB_LIB_PASS?
 *     kgb_lib_case_destroy(&c);
 *
 * Thread safety: the catalog functions may be called from any thread; one case handle
 * must not be used by two threads at once. Strings returned are static or owned by the
 * case handle (valid until kgb_lib_case_destroy). */
#ifndef KGB_LIB_H
#define KGB_LIB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct below or a function's meaning changes; bindings check it. */
#define KGB_LIB_ABI 1
#define KGB_LIB_MAX_DIMS 8

/* Verdicts (the numbers of kgb.Verdict in the wire protocol). */
enum {
	KGB_LIB_PASS = 1,
	KGB_LIB_WRONG_RESULT = 6,
	KGB_LIB_UNWRITTEN_OUTPUT = 7,
	KGB_LIB_OUT_OF_BOUNDS_WRITE = 8,
	KGB_LIB_INPUT_MODIFIED = 9,
};

/* Tensor roles. */
enum { KGB_LIB_IN = 0, KGB_LIB_OUT = 1, KGB_LIB_INOUT = 2 };

/* Dataset bits of kgb_lib_op_info_t.datasets. */
enum { KGB_LIB_DS_ATEN = 1, KGB_LIB_DS_VLLM = 2, KGB_LIB_DS_CUBLAS = 4, KGB_LIB_DS_DEMO = 8 };

typedef struct kgb_lib_op_info {
	const char *name;        /* "add", "rms_norm", ... (static strings) */
	const char *source;      /* "aten", "vllm", "cublas" */
	const char *category;
	const char *dtypes;      /* "bf16 f16 f32" */
	const char *summary;     /* the semantics a kernel must implement, one line */
	const char *signature;   /* "self:in other:in out:out alpha:f32" */
	const char *deviation;   /* why kgb's cases differ from the public ones, or NULL */
	uint32_t datasets;       /* KGB_LIB_DS_* bits */
	uint32_t cases;          /* number of cases (indices 0..cases-1) */
	uint32_t smoke_cases;    /* the smoke subset: indices 0..smoke_cases-1 */
	int32_t inplace;         /* 1 if some tensor is INOUT */
} kgb_lib_op_info_t;

typedef struct kgb_lib_tensor_info {
	const char *name;        /* "self", "out", ... */
	const char *dtype;       /* "bool" "i8" "u8" "i16" "i32" "i64" "f16" "bf16" "f32" "f64" */
	int32_t role;            /* KGB_LIB_IN, _OUT, _INOUT */
	int32_t elem_size;       /* bytes per element */
	int32_t ndim;            /* 0 for a 0-d tensor */
	int32_t reserved;
	int64_t shape[KGB_LIB_MAX_DIMS];
	int64_t stride[KGB_LIB_MAX_DIMS];  /* in elements */
	int64_t storage_offset;  /* in elements: where element (0,..,0) lies in the buffer */
	int64_t storage;         /* elements in the buffer (>= the view's reach) */
	int64_t numel;           /* elements of the view (1 for 0-d) */
} kgb_lib_tensor_info_t;

typedef struct kgb_lib_verdict {
	int32_t verdict;         /* KGB_LIB_PASS, ... (other kgb.Verdict numbers possible) */
	char name[32];           /* "pass", "wrong_result", ... */
	double max_abs_err, max_rel_err;
	char message[256];       /* the first failing element, "" on pass */
} kgb_lib_verdict_t;

typedef struct kgb_lib_stats {
	double median, min, max, p10, p90, mean, stdev, rse;
	uint64_t n;
} kgb_lib_stats_t;

/* ---- library and catalog ---- */

int kgb_lib_abi(void);                      /* KGB_LIB_ABI of the built library */
const char *kgb_lib_version(void);          /* kgb's version, "0.1.0" */
const char *kgb_lib_catalog_version(void);  /* the catalog hash workers and coordinator share */
int kgb_lib_op_count(void);
/* This process's reference cache lookups so far (docs/references.md): entries found
 * valid, and lookups that computed the reference. */
void kgb_lib_ref_cache_counts(uint64_t *hits, uint64_t *misses);
int kgb_lib_op_find(const char *name);      /* index of the operator, or -1 */
int kgb_lib_op_info(int op, kgb_lib_op_info_t *out);  /* 0, or -1 if op is out of range */
/* "aten" (= "mc"), "vllm", "cublas", "nocublas", "ms", "demo", "all" -> KGB_LIB_DS_* bits.
 * Returns 0, or -1 for an unknown name. */
int kgb_lib_dataset_mask(const char *name, uint32_t *mask);
/* The name of a verdict number ("pass", ...; "unknown" outside the list). */
const char *kgb_lib_verdict_name(int verdict);

/* ---- cases ---- */

typedef struct kgb_lib_case kgb_lib_case_t;

/* Build case `index` of operator `op` for input seed `seed` (its inputs, the same values
 * the worker uploads for that seed, are generated on first use). NULL on failure with
 * err filled. */
kgb_lib_case_t *kgb_lib_case_new(int op, uint32_t index, uint64_t seed, char *err, size_t errlen);
/* kgb_lib_case_new that also builds held-out cases (indices past the public ones, from
 * kgb_lib_heldout_index) with a campaign's held-out key (0: none, as kgb_lib_case_new). */
kgb_lib_case_t *kgb_lib_case_new_keyed(int op, uint32_t index, uint64_t seed, uint64_t heldout_key, char *err,
                                       size_t errlen);
/* The index of held-out case h (below 64) of public case base of operator op, or 0 when
 * the operator has no held-out cases. */
uint32_t kgb_lib_heldout_index(int op, uint32_t base, uint32_t h);
/* Free the case and everything it returned; sets *c to NULL (NULL or *c NULL: no-op). */
void kgb_lib_case_destroy(kgb_lib_case_t **c);

const char *kgb_lib_case_label(const kgb_lib_case_t *c);  /* "dtype=f16 shape=[33,65] alpha=2" */
int kgb_lib_case_timed(const kgb_lib_case_t *c);          /* 1: a performance-timed case */
/* The tolerance: |out - ref| <= atol_rel * max|ref| + rtol * |ref| (0, 0: exact). */
void kgb_lib_case_tolerance(const kgb_lib_case_t *c, double *rtol, double *atol_rel);

/* Grid parameters of the case, as written in the catalog ("f16", "[33,65]", "2"). */
int kgb_lib_case_param_count(const kgb_lib_case_t *c);
const char *kgb_lib_case_param_name(const kgb_lib_case_t *c, int i);   /* NULL out of range */
const char *kgb_lib_case_param_value(const kgb_lib_case_t *c, int i);

/* Scalar arguments (alpha, eps, ...): name, the dtype kernels receive it as, value. */
int kgb_lib_case_scalar_count(const kgb_lib_case_t *c);
int kgb_lib_case_scalar(const kgb_lib_case_t *c, int i, const char **name, const char **dtype, double *value);

/* The case's symbols (what launch plans see: "self.size0", "dim", "M", ...; see
 * docs/TEAM-NOTES.md). Returns 0 and sets *name and one of *value (numbers, as double)
 * or *str (string symbols; *str NULL for numbers), or -1 out of range. */
int kgb_lib_case_symbol_count(const kgb_lib_case_t *c);
int kgb_lib_case_symbol(const kgb_lib_case_t *c, int i, const char **name, double *value, const char **str);

int kgb_lib_case_tensor_count(const kgb_lib_case_t *c);
int kgb_lib_case_tensor(const kgb_lib_case_t *c, int i, kgb_lib_tensor_info_t *out);  /* 0 or -1 */
/* The bytes of tensor i as kgb uploads them: the whole storage (storage * elem_size
 * bytes, native byte order); zeros for OUT tensors. Owned by c; NULL with err filled
 * for a bad i or a failure. */
const void *kgb_lib_case_input(kgb_lib_case_t *c, int i, size_t *nbytes, char *err, size_t errlen);
/* The CPU reference of OUT/INOUT tensor i in the same layout (computed on first use,
 * through kgb's reference cache). NULL with err filled on failure. Owned by c. */
const void *kgb_lib_case_reference(kgb_lib_case_t *c, int i, size_t *nbytes, char *err, size_t errlen);

/* Judge one run with kgb's validator. bytes[i] (for i < tensor count): tensor i's whole
 * storage as read back after the run, or NULL to skip it. Every OUT and INOUT tensor
 * must be given; an IN tensor that is given is checked to be unchanged. poison: the
 * byte every OUT buffer was filled with before the run (0..255); OUT elements still
 * holding it are "unwritten_output", and storage between a strided view's elements
 * must still hold it. Returns 0 (verdict in *out), or -1 for a bad argument (out's
 * message says which). */
int kgb_lib_case_validate(kgb_lib_case_t *c, const void *const *bytes, int poison, kgb_lib_verdict_t *out);

/* ---- timing: the worker's sampling rule ---- */

typedef struct kgb_lib_sampler kgb_lib_sampler_t;

/* The worker's rule for a per-case time budget (ns of wall time): at least 10 samples
 * and 20% of the budget, then stop once the relative standard error of the mean is
 * below 0.5%, or when the budget or 100000 samples are spent. */
kgb_lib_sampler_t *kgb_lib_sampler_new(double budget_ns);  /* destroy with kgb_lib_sampler_destroy */
/* Add one sample (the kernel's time, ns) and the wall time it cost (ns). */
void kgb_lib_sampler_add(kgb_lib_sampler_t *s, double sample_ns, double wall_ns);
int kgb_lib_sampler_done(const kgb_lib_sampler_t *s);     /* 1: stop sampling */
void kgb_lib_sampler_stats(const kgb_lib_sampler_t *s, kgb_lib_stats_t *out);
void kgb_lib_sampler_destroy(kgb_lib_sampler_t **s);   /* sets *s to NULL */

#ifdef __cplusplus
}
#endif

#endif
