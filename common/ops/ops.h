/* The operator families of the catalog. Each file common/ops/<family>.c defines its
 * operators as static const kgb_op_t and exports one NULL-terminated table
 *   const kgb_op_t *const kgb_ops_<family>[];
 * which is declared here and listed in registry.c (docs/adding-an-operator.md). */
#ifndef KGB_OPS_H
#define KGB_OPS_H

#include "catalog.h"

extern const kgb_op_t *const kgb_ops_demo[];
extern const kgb_op_t *const kgb_ops_aten_elementwise_unary[];
extern const kgb_op_t *const kgb_ops_aten_elementwise_binary[];
extern const kgb_op_t *const kgb_ops_aten_reduction[];
extern const kgb_op_t *const kgb_ops_aten_softmax[];
extern const kgb_op_t *const kgb_ops_aten_scan[];
extern const kgb_op_t *const kgb_ops_aten_creation_fill[];
extern const kgb_op_t *const kgb_ops_aten_copy_view_layout[];
extern const kgb_op_t *const kgb_ops_aten_loss[];
extern const kgb_op_t *const kgb_ops_aten_backward[];
extern const kgb_op_t *const kgb_ops_aten_gemm[];
extern const kgb_op_t *const kgb_ops_aten_indexing[];
extern const kgb_op_t *const kgb_ops_aten_sort[];
extern const kgb_op_t *const kgb_ops_aten_random[];
extern const kgb_op_t *const kgb_ops_vllm_cache[];
extern const kgb_op_t *const kgb_ops_vllm_moe[];
extern const kgb_op_t *const kgb_ops_vllm_norm[];
extern const kgb_op_t *const kgb_ops_vllm_attention[];
extern const kgb_op_t *const kgb_ops_vllm_quant[];
extern const kgb_op_t *const kgb_ops_vllm_quant_gemm[];
extern const kgb_op_t *const kgb_ops_vllm_quant_gptq[];
extern const kgb_op_t *const kgb_ops_vllm_quant_ggml[];
extern const kgb_op_t *const kgb_ops_vllm_quant_marlin[];
extern const kgb_op_t *const kgb_ops_vllm_quant_marlin24[];
extern const kgb_op_t *const kgb_ops_vllm_quant_allspark[];
extern const kgb_op_t *const kgb_ops_cublas_blas1[];
extern const kgb_op_t *const kgb_ops_cublas_blas2[];
extern const kgb_op_t *const kgb_ops_cublas_blas3[];

/* Set the case's integer symbols named in `names` (space-separated) to the values
 * after it, in order. */
#define KGB_SYMS(c, names, ...)                                                                       \
	kgb_ops_set_syms(c, names, (const int64_t[]){ __VA_ARGS__ },                                   \
	                 sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
void kgb_ops_set_syms(kgb_case_t *c, const char *names, const int64_t *v, size_t n);

/* Shuffle v[0..n-1] in place (Fisher-Yates from the top, one draw per position: the
 * input rules' permutations). */
void kgb_ops_shuffle(kgb_rng_t *rng, double *v, size_t n);

/* Every family table, in catalog order, terminated by NULL (registry.c). */
extern const kgb_op_t *const *const kgb_op_families[];

#endif
