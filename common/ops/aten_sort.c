/* ATen sort: values and int64 indices along dim, ascending or descending, stable or
 * not. Ties (frequent in fp16, bf16 and small integer ranges) make the indices of an
 * unstable sort ambiguous, so the operator has its own check: the values must equal
 * the sorted input exactly, the indices of each line must be a permutation with
 * self[indices] == values, and a stable sort must keep tied elements in input order. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include "aten_common.h"
#include "validate.h"

static int setup_sort(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", -1), nd);
	kgb_tensor_t *x = kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, kgb_case_pstr(c, "layout", NULL),
	                                  err, errlen);

	if (!x)
		return -1;
	if (!kgb_dtype_is_float(dt))
		kgb_aten_gen(x, KGB_GEN_INT, -50, 50);        /* many ties */
	else
		kgb_aten_gen(x, KGB_GEN_NORMAL, 0, 3);
	kgb_case_add_tensor(c, "values", KGB_ROLE_OUT, dt, nd, dims);
	kgb_case_add_tensor(c, "indices", KGB_ROLE_OUT, KGB_DT_I64, nd, dims);
	c->iparam[0] = nd ? dim : -1;
	c->iparam[1] = kgb_case_pint(c, "descending", 0);
	c->iparam[2] = kgb_case_pint(c, "stable", 0);
	kgb_case_add_scalar(c, "descending", KGB_DT_I64, (double)c->iparam[1]);
	kgb_case_add_scalar(c, "stable", KGB_DT_I64, (double)c->iparam[2]);
	kgb_case_set_sym(c, "dim", dim);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL / 2);
	c->rtol = 0;            /* values are a permutation of the inputs: exact */
	c->atol_rel = 0;
	return 0;
}

typedef struct { double v; int64_t i; } sort_el_t;

static int cmp_asc(const void *a, const void *b)
{
	const sort_el_t *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_desc(const void *a, const void *b)
{
	const sort_el_t *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The stable sort of every line (ties in input order). */
static int ref_sort(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *v = &c->t[1], *ix = &c->t[2];
	int dim = (int)c->iparam[0];
	int64_t n = dim >= 0 ? x->shape[dim] : 1;
	sort_el_t *e = kgb_xmalloc((size_t)n * sizeof *e);
	int64_t idx[KGB_MAX_DIMS] = { 0 }, k[KGB_MAX_DIMS];

	do {
		memcpy(k, idx, sizeof k);
		for (int64_t j = 0; j < n; j++) {
			if (dim >= 0)
				k[dim] = j;
			e[j].v = b->v[0][kgb_tensor_offset(x, k)];
			e[j].i = j;
		}
		qsort(e, (size_t)n, sizeof *e, c->iparam[1] ? cmp_desc : cmp_asc);
		for (int64_t j = 0; j < n; j++) {
			if (dim >= 0)
				k[dim] = j;
			b->v[1][kgb_tensor_offset(v, k)] = e[j].v;
			b->v[2][kgb_tensor_offset(ix, k)] = (double)e[j].i;
		}
	} while (kgb_aten_line_next(x, dim, idx));
	free(e);
	return 0;
}

static int check_sort(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out,
                      double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = &c->t[0], *v = &c->t[1], *ix = &c->t[2];
	int dim = (int)c->iparam[0];
	int64_t n = dim >= 0 ? x->shape[dim] : 1;
	uint8_t *seen = kgb_xcalloc((size_t)n, 1);
	int64_t idx[KGB_MAX_DIMS] = { 0 }, k[KGB_MAX_DIMS];
	int verdict = KGB_V_PASS;

	*max_abs = *max_rel = 0;
	do {
		memset(seen, 0, (size_t)n);
		memcpy(k, idx, sizeof k);
		for (int64_t j = 0; j < n && verdict == KGB_V_PASS; j++) {
			size_t vo, io;
			double got, want, gi;
			if (dim >= 0)
				k[dim] = j;
			vo = kgb_tensor_offset(v, k);
			io = kgb_tensor_offset(ix, k);
			got = out->v[1][vo];
			want = ref->v[1][vo];
			gi = out->v[2][io];
			if (!(got == want)) {
				*max_abs = fmax(*max_abs, isnan(got) ? INFINITY : fabs(got - want));
				snprintf(msg, msglen, "values[%zu] = %.9g, expected %.9g", vo, got, want);
				verdict = KGB_V_WRONG_RESULT;
				break;
			}
			if (!(gi >= 0 && gi < (double)n && gi == floor(gi)) || seen[(size_t)gi]) {
				snprintf(msg, msglen, "indices[%zu] = %.9g: not a permutation of 0..%lld", io, gi,
				         (long long)n - 1);
				verdict = KGB_V_WRONG_RESULT;
				break;
			}
			seen[(size_t)gi] = 1;
			{
				int64_t s[KGB_MAX_DIMS];
				memcpy(s, k, sizeof s);
				if (dim >= 0)
					s[dim] = (int64_t)gi;
				if (ref->v[0][kgb_tensor_offset(x, s)] != got) {
					snprintf(msg, msglen, "indices[%zu] = %lld points at %.9g, not values[%zu] = %.9g", io,
					         (long long)gi, ref->v[0][kgb_tensor_offset(x, s)], vo, got);
					verdict = KGB_V_WRONG_RESULT;
					break;
				}
			}
			if (c->iparam[2] && j > 0) {
				int64_t p[KGB_MAX_DIMS];
				memcpy(p, k, sizeof p);
				if (dim >= 0)
					p[dim] = j - 1;
				if (out->v[1][kgb_tensor_offset(v, p)] == got && out->v[2][kgb_tensor_offset(ix, p)] > gi) {
					snprintf(msg, msglen, "stable sort: tied elements out of input order at indices[%zu]", io);
					verdict = KGB_V_WRONG_RESULT;
					break;
				}
			}
		}
	} while (verdict == KGB_V_PASS && kgb_aten_line_next(x, dim, idx));
	free(seen);
	if (verdict == KGB_V_PASS && msglen)
		msg[0] = '\0';
	return verdict;
}

static const kgb_op_t op_sort = {
	.name = "sort",
	.source = "aten",
	.category = "sort",
	.dtypes = "bf16 f16 f32 i16 i32",
	.datasets = KGB_DS_ATEN,
	.summary = "values = self sorted along dim (ascending or descending), indices (int64) = the position "
	           "in self of each value; stable keeps tied elements in input order; unstable may order ties "
	           "freely (checked: exact values, per-line permutation, self[indices] == values); floats "
	           "N(0, 9), integers in [-50, 50] (ties)",
	.signature = "self:in dim:param descending:i64 stable:i64 values:out indices:out(i64)",
	.grids = {
		{ { { "shape", "[7] [1000] [33,65] [3,5,17] [2,3,4,5,6] [1024,1024] [16,65536]" },
		    { "dtype", "bf16 f16 f32 i16 i32" }, { "dim", "-1 0" }, { "descending", "0 1" },
		    { "stable", "0 1" } } },
		{ { { "shape", "[] [1]" }, { "dtype", "f32 i32" }, { "dim", "0" }, { "descending", "0 1" },
		    { "stable", "0" } } },
		{ { { "shape", "[33,65]" }, { "dtype", "f32 i32" }, { "dim", "-1 0" }, { "descending", "0 1" },
		    { "stable", "1" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_sort,
	.ref = ref_sort,
	.check = check_sort,
	.declared_cases = 320,
	.deviation = "adds dim 0, stable, 0-d to 5-d and non-contiguous inputs; the check accepts any valid "
	             "order of ties for unstable sorts",
};

const kgb_op_t *const kgb_ops_aten_sort[] = { &op_sort, NULL };
