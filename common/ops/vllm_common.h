/* Shared helpers for the vLLM operator families (common/ops/vllm_*.c): tensor access
 * by name, integer draws for index inputs, and the two 8-bit float formats of vLLM's
 * fp8 KV caches, held in uint8 tensors (one byte per element).
 *
 * fp8 formats (OCP FP8, as CUDA's __nv_fp8 types):
 *   e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; 0x7f and
 *           0xff are NaN; largest finite 448; subnormal step 2^-9.
 *   e5m2:   sign, 5 exponent bits (bias 15), 2 mantissa bits; IEEE-like infinities
 *           (0x7c) and NaNs; largest finite 57344; subnormal step 2^-16.
 * Encoding rounds to nearest even and saturates to the largest finite value (CUDA's
 * __NV_SATFINITE, which is how vLLM writes its caches). */
#ifndef KGB_VLLM_COMMON_H
#define KGB_VLLM_COMMON_H

#include <stdint.h>
#include "catalog.h"

/* The values of tensor `name` (storage order). Aborts if the case has no such tensor. */
double *kgb_vllm_buf(const kgb_case_t *c, const kgb_hostbufs_t *b, const char *name);
const kgb_tensor_t *kgb_vllm_t(const kgb_case_t *c, const char *name);
/* The value of scalar `name` (aborts if missing). */
double kgb_vllm_scalar(const kgb_case_t *c, const char *name);

/* A uniform integer on [lo, hi]. */
int64_t kgb_vllm_randint(kgb_rng_t *r, int64_t lo, int64_t hi);
/* a[0..n) = a random permutation of 0..n-1. */
void kgb_vllm_perm(kgb_rng_t *r, int64_t *a, int64_t n);

/* fp8 <-> float. kv_fp8 names a format: "fp8" and "fp8_e4m3" are e4m3fn, "fp8_e5m2" is
 * e5m2 (vLLM's kv_cache_dtype strings). */
double kgb_vllm_fp8_decode(int e5m2, unsigned byte);
unsigned kgb_vllm_fp8_encode(int e5m2, float v);

/* vLLM's paged key-cache packing factor: 16 bytes / element size. */
int64_t kgb_vllm_key_x(kgb_dtype_t cache_dt);

/* A check (kgb_op_t.check) for operators whose outputs mix floats and integers: float
 * outputs within the case's tolerance (atol = atol_rel * max|ref| of the tensor, plus
 * rtol * |ref|, the reference rounded to the dtype; NaN only where the reference is
 * NaN), integer and bool outputs exact. The generic rule applies the case tolerance to
 * integer outputs too, which a float tolerance would turn into an off-by-one pass. */
int kgb_vllm_check_mixed(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out,
                         double *max_abs, double *max_rel, char *msg, size_t msglen);

#endif
