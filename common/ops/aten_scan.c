/* ATen scans: diff (cumsum is a demo operator). */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

/* diff(self, n, dim, prepend, append): the n-th forward difference along dim of
 * cat(prepend, self, append). */
static int setup_diff(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *pa = kgb_case_pstr(c, "pa", "none");
	int64_t dims[KGB_MAX_DIMS], pd[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", -1), nd);
	int n = (int)kgb_case_pint(c, "n", 1);
	bool pre = strcmp(pa, "pre") == 0 || strcmp(pa, "both") == 0;
	bool app = strcmp(pa, "app") == 0 || strcmp(pa, "both") == 0;
	int64_t len = dims[dim] + (pre ? 2 : 0) + (app ? 3 : 0);

	if (len - n < 1)
		return kgb_err(err, errlen, "op diff: n = %d too large for length %lld", n, (long long)len);
	if (!kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, kgb_case_pstr(c, "layout", NULL), err,
	                     errlen))
		return -1;
	memcpy(pd, dims, sizeof pd);
	c->iparam[1] = c->iparam[2] = -1;
	if (pre) {
		pd[dim] = 2;
		kgb_case_add_tensor(c, "prepend", KGB_ROLE_IN, dt, nd, pd);
		c->iparam[1] = c->ntensors - 1;
	}
	if (app) {
		pd[dim] = 3;
		kgb_case_add_tensor(c, "append", KGB_ROLE_IN, dt, nd, pd);
		c->iparam[2] = c->ntensors - 1;
	}
	pd[dim] = len - n;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, pd);
	c->iparam[0] = dim;
	c->iparam[3] = n;
	kgb_case_set_sym(c, "dim", dim);
	kgb_aten_finish(c, n == 1 ? 1 : 2, KGB_ATEN_TIMED_NUMEL);
	/* ATen computes diff of order n as n first differences, each rounded to the
	 * dtype: the n - 1 intermediates cost two roundings each on the output */
	if (n > 1)
		kgb_aten_half_intermediates(c, 2 * (n - 1));
	return 0;
}

static int ref_diff(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *o = &c->t[c->ntensors - 1];
	int dim = (int)c->iparam[0], n = (int)c->iparam[3];
	int ip = (int)c->iparam[1], ia = (int)c->iparam[2];
	int64_t np = ip >= 0 ? c->t[ip].shape[dim] : 0, na = ia >= 0 ? c->t[ia].shape[dim] : 0;
	int64_t len = np + x->shape[dim] + na;
	double *line = kgb_xmalloc((size_t)len * sizeof *line);
	int64_t idx[KGB_MAX_DIMS] = { 0 }, j2[KGB_MAX_DIMS];

	do {
		memcpy(j2, idx, sizeof j2);
		for (int64_t j = 0; j < len; j++) {
			if (j < np) {
				j2[dim] = j;
				line[j] = b->v[ip][kgb_tensor_offset(&c->t[ip], j2)];
			} else if (j < np + x->shape[dim]) {
				j2[dim] = j - np;
				line[j] = b->v[0][kgb_tensor_offset(x, j2)];
			} else {
				j2[dim] = j - np - x->shape[dim];
				line[j] = b->v[ia][kgb_tensor_offset(&c->t[ia], j2)];
			}
		}
		for (int k = 0; k < n; k++)
			for (int64_t j = 0; j + 1 < len - k; j++)
				line[j] = line[j + 1] - line[j];
		for (int64_t j = 0; j < len - n; j++) {
			j2[dim] = j;
			b->v[c->ntensors - 1][kgb_tensor_offset(o, j2)] = line[j];
		}
	} while (kgb_aten_line_next(x, dim, idx));
	free(line);
	return 0;
}

static const kgb_op_t op_diff = {
	.name = "diff",
	.source = "aten",
	.category = "scan",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = the n-th forward difference (out[j] = x[j+1] - x[j], applied n times) along dim of "
	           "cat(prepend, self, append); prepend (2 along dim) and append (3 along dim) optional",
	.signature = "self:in prepend:in? append:in? n:param dim:param out:out",
	.grids = {
		{ { { "overload", "default" }, { "shape", "[7] [1000] [33,65] [3,5,17] [3,3,4,5,6] [1024,1024] [64,16384]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "n", "1 2" }, { "dim", "-1 0" }, { "pa", "none both" } } },
		{ { { "overload", "default" }, { "shape", "[1] [33,65]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "n", "1" }, { "dim", "0" },
		    { "pa", "pre app" } } },
		{ { { "overload", "default" }, { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "n", "1" },
		    { "dim", "-1 0" }, { "pa", "none" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_diff,
	.ref = ref_diff,
	.declared_cases = 39,
	.deviation = "adds n = 2, prepend/append, 5-d and non-contiguous inputs",
	.optional = "prepend append",
};

const kgb_op_t *const kgb_ops_aten_scan[] = { &op_diff, NULL };
