/* The list of operator families. The catalog walks it once at start-up; the order
 * here is the catalog's order (kgb_catalog_at). Adding a family: declare its table in
 * ops.h and add it below. */
#include "ops.h"

#include <string.h>

#include "util.h"

const kgb_op_t *const *const kgb_op_families[] = {
	kgb_ops_demo,
	kgb_ops_aten_elementwise_unary,
	kgb_ops_aten_elementwise_binary,
	kgb_ops_aten_reduction,
	kgb_ops_aten_softmax,
	kgb_ops_aten_scan,
	kgb_ops_aten_creation_fill,
	kgb_ops_aten_copy_view_layout,
	kgb_ops_aten_loss,
	kgb_ops_aten_backward,
	kgb_ops_aten_gemm,
	kgb_ops_aten_indexing,
	kgb_ops_aten_sort,
	kgb_ops_aten_random,
	kgb_ops_vllm_cache,
	kgb_ops_vllm_moe,
	kgb_ops_vllm_norm,
	kgb_ops_vllm_attention,
	kgb_ops_vllm_quant,
	kgb_ops_vllm_quant_gemm,
	kgb_ops_vllm_quant_gptq,
	kgb_ops_vllm_quant_ggml,
	kgb_ops_vllm_quant_marlin,
	kgb_ops_vllm_quant_marlin24,
	kgb_ops_vllm_quant_allspark,
	kgb_ops_cublas_blas1,
	kgb_ops_cublas_blas2,
	kgb_ops_cublas_blas3,
	NULL,
};

/* See ops.h. */
void kgb_ops_shuffle(kgb_rng_t *rng, double *v, size_t n)
{
	for (size_t k = n; k > 1; k--) {
		size_t j = (size_t)(kgb_rng_next(rng) % k);
		double t = v[k - 1];
		v[k - 1] = v[j];
		v[j] = t;
	}
}

/* See ops.h. */
void kgb_ops_set_syms(kgb_case_t *c, const char *names, const int64_t *v, size_t n)
{
	char name[32];
	size_t i = 0;
	for (const char *p = names; *p; i++) {
		size_t len = strcspn(p, " ");
		KGB_ASSERT_MSG(i < n && len < sizeof name, "op %s: symbols '%s'", c->op->name, names);
		memcpy(name, p, len);
		name[len] = '\0';
		kgb_case_set_sym(c, name, v[i]);
		p += len + (p[len] == ' ');
	}
	KGB_ASSERT_MSG(i == n, "op %s: %zu values for the symbols '%s'", c->op->name, n, names);
}
