/* ATen _softmax: softmax along any dim, with the half_to_float variant (fp16 in,
 * fp32 out). softmax itself (dim -1 of 2-d inputs) is a demo operator. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

static int setup_softmax(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	bool h2f = kgb_case_pint(c, "half_to_float", 0) != 0;
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", -1), nd);
	kgb_tensor_t *x;

	if (h2f && dt != KGB_DT_F16)
		return kgb_err(err, errlen, "op _softmax: half_to_float needs dtype f16, not %s", kgb_dtype_name(dt));
	x = kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, kgb_case_pstr(c, "layout", NULL), err,
	                    errlen);
	if (!x)
		return -1;
	kgb_aten_gen(x, KGB_GEN_UNIFORM, -4, 4);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, h2f ? KGB_DT_F32 : dt, nd, dims);
	kgb_case_set_sym(c, "dim", dim);
	kgb_case_set_sym(c, "half_to_float", h2f);
	c->iparam[0] = dim;
	kgb_aten_finish(c, nd ? (double)dims[dim] : 1, KGB_ATEN_TIMED_NUMEL);
	if (h2f) {
		/* fp32 output of fp16 inputs: judge at fp32 precision */
		c->rtol = 1e-5 * sqrt(nd ? (double)dims[dim] : 1);
	}
	return 0;
}

static int ref_softmax(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *o = &c->t[1];
	int dim = (int)c->iparam[0];
	int64_t n = x->ndim ? x->shape[dim] : 1;
	int64_t sx = x->ndim ? x->stride[dim] : 0, so = o->ndim ? o->stride[dim] : 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		const double *xp = b->v[0] + kgb_tensor_offset(x, idx);
		double *op = b->v[1] + kgb_tensor_offset(o, idx);
		kgb_aten_softmax_line(xp, sx, op, so, n);
	} while (kgb_aten_line_next(x, x->ndim ? dim : -1, idx));
	return 0;
}

static const kgb_op_t op__softmax = {
	.name = "_softmax",
	.source = "aten",
	.category = "softmax",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = exp(self - max) / sum(exp(self - max)) along dim (any dim, 1-d to 5-d); "
	           "half_to_float: fp16 input, fp32 output; inputs from [-4, 4)",
	.signature = "self:in dim:param half_to_float:param out:out",
	.grids = {
		{ { { "shape", "[33,65] [5,1000] [7,4096] [1024,1024] [4,40000] [2,3,4,5,6] [64,128,33]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "-1 0 1" }, { "half_to_float", "0" } } },
		{ { { "shape", "[7] [1000] [65536]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0" },
		    { "half_to_float", "0" } } },
		{ { { "shape", "[33,65] [1024,1024] [4,40000]" }, { "dtype", "f16" }, { "dim", "-1 0" },
		    { "half_to_float", "1" } } },
		{ { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "-1 0" },
		    { "half_to_float", "0" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_softmax,
	.ref = ref_softmax,
	.declared_cases = 72,
	.deviation = "adds 1-d and 5-d inputs, softmax along the first and middle dims, non-contiguous "
	             "inputs and half_to_float",
};

const kgb_op_t *const kgb_ops_aten_softmax[] = { &op__softmax, NULL };
