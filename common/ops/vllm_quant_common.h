/* Shared helpers for the vLLM quantisation families (common/ops/vllm_quant*.c).
 *
 * Quantised outputs (int8, fp8) are judged by an interval rule instead of the
 * elementwise tolerance: for every element the operator's check computes, from the
 * inputs and from the scales the kernel itself reported, the interval [lo, hi] in
 * which the value before rounding must lie (the exact value widened by the error that
 * fp32 arithmetic may legitimately add), and accepts the stored code q only when
 * Q(lo) <= q <= Q(hi), Q being the quantiser (round to nearest even, then saturate).
 * Q is monotone, so away from a rounding boundary lo and hi give the same code and the
 * compare is exact; only an element whose value lies within the widening of a tie may
 * take either neighbour. docs/formats-fp8-int8.md explains the rule. */
#ifndef KGB_VLLM_QUANT_COMMON_H
#define KGB_VLLM_QUANT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "catalog.h"

/* Relative widening for a value that fp32 computes with a couple of roundings
 * (x * (1/s) against x / s): 2^-21, a few fp32 ulps. */
#define KGB_VQ_DELTA_F32 0x1p-21

/* Quantise p: int8 = round half even, add zero point zp, saturate to [-128, 127];
 * fp8 = clamp to the largest finite value, then round to nearest even. */
double kgb_vq_quant(kgb_dtype_t dt, double p, double zp);

/* Accumulates the verdict of a check: the first failure's message is kept. */
typedef struct kgb_vq_judge {
	int verdict;               /* KGB_V_PASS until something fails */
	size_t nfail;
	char *msg;
	size_t msglen;
	double max_abs, max_rel;
} kgb_vq_judge_t;

void kgb_vq_judge_init(kgb_vq_judge_t *j, char *msg, size_t msglen);
/* Judge element `flat` of quantised tensor t: got must lie in [Q(lo), Q(hi)]. */
void kgb_vq_elem(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, double lo,
                 double hi, double zp);
/* Judge a float element against an expected interval [lo, hi] (scales). */
void kgb_vq_range(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, double lo,
                  double hi);
/* Judge a float element: |got - ref| <= rtol * |ref| (NaN never passes). */
void kgb_vq_close(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, double ref,
                  double rtol);
/* Finish: the verdict, with max errors copied out and the count appended. */
int kgb_vq_judge_done(kgb_vq_judge_t *j, double *max_abs, double *max_rel);

/* The case's tensor `name` (aborts when missing: a catalog bug). */
const kgb_tensor_t *kgb_vq_t(const kgb_case_t *c, const char *name);
/* Values (storage order) of tensor `name` in b, or NULL when the case has no such tensor. */
double *kgb_vq_v(const kgb_case_t *c, const kgb_hostbufs_t *b, const char *name);
/* The case's scalar `name` (0 when missing). */
double kgb_vq_scalar(const kgb_case_t *c, const char *name);

/* kgb_case_default_tol judged as if tensor `skip` (an integer output, e.g. Marlin's
 * workspace, listed before the result) were an input: otherwise its integer dtype
 * would make the whole case an exact compare. */
void kgb_vq_default_tol_skip(kgb_case_t *c, const char *skip);

/* Grid parameter `param` as a dtype, or dflt when the case has none (aborts on a bad
 * name: a catalog bug). */
kgb_dtype_t kgb_vq_pdtype(const kgb_case_t *c, const char *param, kgb_dtype_t dflt);
/* Whether grid parameter `param` is the string v. */
bool kgb_vq_pis(const kgb_case_t *c, const char *param, const char *v);

/* Add tensor `name` [rows, cols] (cols < 0: the 1-d [rows]) to the case. */
kgb_tensor_t *kgb_vq_add2(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int64_t rows,
                          int64_t cols);
/* t's values: int32 words of any bit pattern (every word a valid run of packed codes). */
kgb_tensor_t *kgb_vq_words(kgb_tensor_t *t);
/* t's values: uniform on [lo, hi). */
kgb_tensor_t *kgb_vq_uniform(kgb_tensor_t *t, double lo, double hi);

/* out [M, N] = a [M, K] @ w [K, N], row-major, in double. */
void kgb_vq_matmul(const double *a, const double *w, double *out, size_t M, size_t K, size_t N);

/* ---- Marlin GEMMs (gptq_marlin_gemm, gptq_marlin_24_gemm) ---- */

/* The fields they share: vLLM quantized GEMMs with a workspace that must stay zero (so
 * in place) and one smoke grid. */
#define KGB_VQ_MARLIN_GEMM(setupf, reff, genf)                                                          \
	.source = "vllm", .category = "quantized-gemm", .datasets = KGB_DS_VLLM, .setup = setupf, .ref = reff, \
	.gen_inputs = genf, .inplace = true, .smoke_grids = 1
/* Grid parameters mkn, a shape [M, K, N], and bits (4 or 8, default 4) into mkn[] and
 * *bits; -1 with err when either is off. */
int kgb_vq_marlin_mkn(const kgb_case_t *c, int64_t mkn[3], int64_t *bits, char *err, size_t errlen);
/* The scalars num_bits, size_m, size_n, size_k, the output out [M, N] fp16, the case's
 * reduce_len and the fp16 tolerance of out (kgb_vq_default_tol_skip of "workspace"). */
void kgb_vq_marlin_out(kgb_case_t *c, int64_t bits, int64_t M, int64_t N, int64_t K, double reduce_len);

/* Round a double to float and back (the fp32 arithmetic the kernels do). */
static inline double kgb_vq_f32(double v)
{
	return (double)(float)v;
}

/* ---- Marlin 2:4 sparse weights (gptq_marlin_24_gemm, docs/formats-gptq-awq-marlin.md) ----
 * A dense weight of codes q [K, N] (row k, column n; the code `bias` = 2^(bits-1) is a
 * zero weight) with at most two non-zero codes in every group of four rows k = 4g..4g+3
 * of a column becomes b_q_weight [K/32, N*bits/2] words and b_meta [K/32, 2N] int16. */

/* Index into the flat b_meta of the metadata element of column n, element c
 * (c = 0 .. K/16 - 1: the nibbles of groups 4c .. 4c+3) of a weight with N columns. */
size_t kgb_m24_meta_offset(size_t n, size_t c, size_t N);
/* Pack as vLLM's marlin_24_quantize does (K a multiple of 32, N of 64). Returns -1 when
 * a group has three or four non-zero codes. */
int kgb_m24_pack(const uint32_t *q, size_t K, size_t N, int bits, uint32_t *words, int16_t *meta);
/* Unpack into w [K, N]: q - bias at the two kept rows of every group, 0 elsewhere.
 * Returns -1 on a metadata nibble that does not name two rows i0 < i1. */
int kgb_m24_unpack(const uint32_t *words, const int16_t *meta, size_t K, size_t N, int bits, int32_t *w);

/* ---- AllSpark N32K16 order (allspark_w8a16_gemm, same page) ----
 * Byte offset in b_qweight ([N32, K] bytes) of weight element (k, n), and the index in
 * b_scales / b_qzeros ([1, N32]) of column n's scale and zero point. */
size_t kgb_allspark_w_offset(size_t k, size_t n, size_t K);
size_t kgb_allspark_s_offset(size_t n);

#endif
