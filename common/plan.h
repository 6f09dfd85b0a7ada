/* A candidate's launch plan (docs/candidate-format.md): kernels in order, each with
 * its source file and language, compile-time defines, grid and block sizes as
 * expressions over case symbols, and arguments. Parsed from JSON with jansson. */
#ifndef KGB_PLAN_H
#define KGB_PLAN_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "dtype.h"
#include "catalog.h"

typedef enum {
	KGB_LANG_OPENCL = 0,
	KGB_LANG_CUDA,      /* CUDA C through NVRTC */
	KGB_LANG_TRITON,
	KGB_LANG_PTX,
	KGB_LANG_CUBIN,
	KGB_LANG_HIP,
	KGB_LANG_SPIRV,
	KGB_LANG_HSACO,     /* AMD GPU code object (ELF), e.g. from hipcc or Triton's AMD backend */
	KGB_LANG__COUNT
} kgb_lang_t;
const char *kgb_lang_name(kgb_lang_t l);
int kgb_lang_parse(const char *s, kgb_lang_t *out);

typedef enum {
	KGB_ARG_TENSOR = 0,   /* a tensor of the operator's signature, by name */
	KGB_ARG_SCRATCH,      /* a scratch buffer declared in plan.scratch, by name */
	KGB_ARG_SCALAR,       /* an expression, passed by value as `dtype` */
	KGB_ARG_LOCAL,        /* OpenCL __local memory of `expr` bytes */
} kgb_arg_kind_t;

typedef struct kgb_plan_arg {
	kgb_arg_kind_t kind;
	char *name;           /* TENSOR / SCRATCH */
	char *expr;           /* SCALAR value, LOCAL bytes */
	kgb_dtype_t dtype;    /* SCALAR: i32 (default), i64, f32, f64, ... */
} kgb_plan_arg_t;

typedef struct kgb_plan_define {
	char *name;
	char *value;          /* template: "{expr}" parts are substituted (kgb_expr_subst) */
} kgb_plan_define_t;

typedef struct kgb_plan_config {    /* Triton autotune configuration */
	kgb_plan_define_t *constants;   /* constexpr values (templates) */
	size_t nconstants;
	int num_warps, num_stages, num_ctas;
	/* not from the plan's JSON: the binary and ABI text a Python candidate's recording
	 * left for this configuration (worker/pycand.c), else NULL */
	char *prebuilt, *prebuilt_abi;
	size_t prebuilt_len, prebuilt_abi_len;
} kgb_plan_config_t;

typedef struct kgb_plan_kernel {
	char *entry;          /* kernel function name */
	kgb_lang_t lang;
	char *source;         /* name of the source file (key in the candidate's sources) */
	char *options;        /* extra compiler options (template), may be NULL */
	kgb_plan_define_t *defines;
	size_t ndefines;
	char *grid[3];        /* number of blocks / work-groups per dimension (expressions) */
	int ngrid;
	char *block[3];       /* threads / work-items per block; NULL for Triton */
	int nblock;
	char *shared;         /* dynamic shared memory bytes (expression) or NULL */
	kgb_plan_arg_t *args;
	size_t nargs;
	kgb_plan_config_t *configs;  /* Triton: constants/num_warps to autotune over */
	size_t nconfigs;
	char *signature;      /* Triton: argument types, "*fp32,*fp32,i32" (optional) */
	char *when;           /* expression: the kernel runs on the cases where it is non-zero
	                       * (overload.Scalar, has.bias); NULL: on every case */
	/* not from the plan's JSON: the binary and ABI text a Python candidate's recording
	 * left for this kernel (worker/pycand.c), else NULL */
	char *prebuilt, *prebuilt_abi;
	size_t prebuilt_len, prebuilt_abi_len;
} kgb_plan_kernel_t;

typedef struct kgb_plan_scratch {
	char *name;
	char *bytes;          /* expression */
	bool zero;            /* zero-filled before each run (else poisoned) */
} kgb_plan_scratch_t;

typedef struct kgb_plan {
	kgb_plan_kernel_t *kernels;
	size_t nkernels;
	kgb_plan_scratch_t *scratch;
	size_t nscratch;
} kgb_plan_t;

/* Parse a plan from JSON text. origin names the file for messages. Errors name the
 * origin, the JSON path and the value: "add.json: kernels[0].args[2].scalar: expected
 * a string, got 3". Returns 0 and *out (free with kgb_plan_destroy) or -1. */
int kgb_plan_parse(const char *json, size_t len, const char *origin, kgb_plan_t **out, char *err,
                   size_t errlen);
void kgb_plan_destroy(kgb_plan_t **p);
/* Check the plan against an operator: tensor names exist in the operator's cases,
 * scratch names are declared, every expression parses and evaluates. A kernel without
 * "when" is checked on case 0; when some kernel has one, every "when" is evaluated on
 * every case and each kernel is checked on the first case it runs on (a kernel that
 * runs on no case is an error). Returns 0 or -1 with err filled. */
int kgb_plan_check(const kgb_plan_t *p, const kgb_op_t *op, const char *origin, char *err, size_t errlen);
/* Whether kernel k runs on case c: 1 yes, 0 no, -1 when its "when" does not evaluate
 * (err filled). */
int kgb_plan_kernel_runs(const kgb_plan_kernel_t *k, const kgb_case_t *c, char *err, size_t errlen);

/* Candidate kinds (docs/candidate-format.md, "Candidate kinds"). A candidate's "plan"
 * is its whole description of how to run: a launch plan ({"kernels": ...}), or an
 * object with a "kind" key for the two kinds that are not declarative plans:
 *   {"kind": "python", "module": "add.py"}: a KernelGenBench-format Python + Triton
 *     module (one of the candidate's sources), recorded per case and replayed as a plan;
 *   {"kind": "native"}: the native library of the operator (PyTorch for ATen, vLLM's
 *     kernels or their PyTorch composites for vLLM, cuBLAS/hipBLAS for cuBLAS), run by
 *     the worker under kgb's staging, poison, validation and timer. */
typedef enum kgb_cand_kind {
	KGB_CAND_PLAN = 0,
	KGB_CAND_PYTHON = 1,
	KGB_CAND_NATIVE = 2,
} kgb_cand_kind_t;

const char *kgb_cand_kind_name(kgb_cand_kind_t k);
/* The kind of a candidate from its plan JSON text. For python, *module (if given)
 * receives the module's source name (caller frees). A "kind" object with unknown keys
 * or values is an error naming origin, the key and the value. Returns the kind, or -1
 * with err filled; plain launch plans (no "kind" key) are KGB_CAND_PLAN without being
 * parsed further. */
int kgb_plan_kind(const char *json, size_t len, const char *origin, char **module, char *err, size_t errlen);

/* Writes the replacement of the Triton signature item "*@NAME[:hint]" (item, len) to f:
 * name (namelen bytes) is NAME, the hint (if any) follows it up to item + len. 0, or -1
 * with err. */
typedef int (*kgb_triton_ptr_fn)(FILE *f, const char *item, size_t len, const char *name, size_t namelen,
                                 void *arg, char *err, size_t errlen);

/* A Triton signature ("*@self, *@out,i32:16") with each "*@NAME" item rewritten by
 * ptr and every other item copied; items are trimmed of spaces and joined by ','. Heap
 * string, or NULL with err (ptr's). The CUDA backend and kgb validate resolve "*@NAME"
 * to the case's dtype of tensor NAME through it. */
char *kgb_triton_signature_map(const char *sig, kgb_triton_ptr_fn ptr, void *arg, char *err, size_t errlen);

/* A Triton constexpr value as the Triton helper takes it: an integer, a real, or text
 * (True/False; the helper rejects the rest clearly); NULL gives JSON null. */
json_t *kgb_triton_constant_json(const char *v);

#endif
