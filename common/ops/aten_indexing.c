/* ATen indexing, scatter and gather: gather, scatter, embedding, index, index_put_ and
 * _index_put_impl_ (index_select is a demo operator). Index tensors are int64. Where
 * duplicate indices would make the result depend on write order (scatter without
 * reduce, index_put_ without accumulate), the input rule draws unique indices;
 * accumulating forms get duplicates on purpose. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

/* Draw m distinct values of [0, n) into out (partial Fisher-Yates). */
static void distinct(kgb_rng_t *rng, int64_t n, int64_t m, int64_t *out)
{
	int64_t *p;

	KGB_ASSERT_MSG(m <= n, "%lld distinct values of [0, %lld)", (long long)m, (long long)n);
	p = kgb_xmalloc((size_t)n * sizeof *p);
	for (int64_t i = 0; i < n; i++)
		p[i] = i;
	for (int64_t i = 0; i < m; i++) {
		int64_t j = i + (int64_t)(kgb_rng_next(rng) % (uint64_t)(n - i));
		int64_t t = p[i];
		p[i] = p[j];
		p[j] = t;
		out[i] = p[i];
	}
	free(p);
}

/* ---- gather / scatter ---- */

enum { SC_SRC, SC_VALUE, SC_ADD, SC_MUL };

static int setup_gs(kgb_case_t *c, char *err, size_t errlen)
{
	bool scatter = strcmp(c->op->name, "scatter") == 0;
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], id[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd);
	const char *ovl = kgb_case_pstr(c, KGB_OVERLOAD_PARAM, "src");
	const char *red = kgb_case_pstr(c, "reduce", "none");
	bool use_value = strcmp(ovl, "value") == 0 || strcmp(ovl, "value_reduce") == 0;
	int m = strcmp(red, "add") == 0 ? SC_ADD : strcmp(red, "multiply") == 0 ? SC_MUL : use_value ? SC_VALUE : SC_SRC;
	kgb_tensor_t *ix;

	if (!kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, kgb_case_pstr(c, "layout", NULL), err, errlen))
		return -1;
	/* index: self's shape with the other dims trimmed a little and dim halved (gather)
	 * or at most self's size (scatter) */
	for (int d = 0; d < nd; d++)
		id[d] = d == dim ? KGB_MAX(1, dims[d] / 2 + (scatter ? 0 : 3)) : KGB_MAX(1, dims[d] - (d % 2));
	ix = kgb_case_add_tensor(c, "index", KGB_ROLE_IN, KGB_DT_I64, nd, id);
	kgb_aten_gen(ix, KGB_GEN_INT, 0, (double)(dims[dim] - 1));
	c->iparam[0] = dim;
	c->iparam[1] = m;
	c->iparam[2] = use_value;
	if (scatter) {
		if (use_value) {
			/* a reducing value stays small under repeated multiplication */
			double v = m == SC_VALUE ? -2.5 : 1.5;
			c->fparam[0] = kgb_dtype_round(dt, kgb_case_add_scalar(c, "value", KGB_DT_F32, v)->value);
		} else {
			kgb_tensor_t *s = kgb_case_add_tensor(c, "src", KGB_ROLE_IN, dt, nd, id);
			if (m == SC_MUL)
				kgb_aten_gen(s, KGB_GEN_UNIFORM, 0.5, 1.5);
		}
		kgb_case_add_scalar(c, "reduce", KGB_DT_I64, m == SC_ADD ? 1 : m == SC_MUL ? 2 : 0);
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	} else {
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, id);
	}
	kgb_case_set_sym(c, "dim", dim);
	kgb_aten_finish(c, m == SC_ADD || m == SC_MUL ? 4 : 1, KGB_ATEN_TIMED_NUMEL / 2);
	/* a reducing scatter in fp16/bf16 accumulates in the output dtype, one rounding per
	 * contribution (PyTorch's CUDA kernel adds with half-precision atomics): up to a few
	 * per element here, as the index holds half a line of uniform draws */
	if (scatter && (m == SC_ADD || m == SC_MUL))
		kgb_aten_half_intermediates(c, 4);
	return 0;
}

/* scatter without reduce: indices distinct along dim within each line. */
static void gen_gs(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *ix = &c->t[1];
	int dim = (int)c->iparam[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, m = ix->shape[dim], *v;

	if (strcmp(c->op->name, "scatter") != 0 || c->iparam[1] == SC_ADD || c->iparam[1] == SC_MUL)
		return;
	v = kgb_xmalloc((size_t)m * sizeof *v);
	do {
		distinct(rng, x->shape[dim], m, v);
		for (int64_t j = 0; j < m; j++) {
			int64_t k[KGB_MAX_DIMS];
			memcpy(k, idx, sizeof k);
			k[dim] = j;
			b->v[1][kgb_tensor_offset(ix, k)] = (double)v[j];
		}
	} while (kgb_aten_line_next(ix, dim, idx));
	free(v);
}

static int ref_gs(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *ix = &c->t[1], *o = &c->t[c->ntensors - 1];
	int oi = c->ntensors - 1, dim = (int)c->iparam[0], m = (int)c->iparam[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, s[KGB_MAX_DIMS];

	if (strcmp(c->op->name, "gather") == 0) {
		do {
			memcpy(s, idx, sizeof s);
			s[dim] = (int64_t)b->v[1][kgb_tensor_offset(ix, idx)];
			b->v[oi][kgb_tensor_offset(o, idx)] = b->v[0][kgb_tensor_offset(x, s)];
		} while (kgb_index_next(o, idx));
		return 0;
	}
	do {
		b->v[oi][kgb_tensor_offset(o, idx)] = b->v[0][kgb_tensor_offset(x, idx)];
	} while (kgb_index_next(o, idx));
	memset(idx, 0, sizeof idx);
	do {
		double v = c->iparam[2] ? c->fparam[0] : b->v[2][kgb_tensor_offset(&c->t[2], idx)];
		size_t off;
		memcpy(s, idx, sizeof s);
		s[dim] = (int64_t)b->v[1][kgb_tensor_offset(ix, idx)];
		off = kgb_tensor_offset(o, s);
		if (m == SC_ADD)
			b->v[oi][off] += v;
		else if (m == SC_MUL)
			b->v[oi][off] *= v;
		else
			b->v[oi][off] = v;
	} while (kgb_index_next(ix, idx));
	return 0;
}

static const kgb_op_t op_gather = {
	.name = "gather",
	.source = "aten",
	.category = "indexing-scatter-gather",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out[i][j][k] = self[index[i][j][k]][j][k] along dim (index int64 in [0, self.size(dim)), "
	           "repeats allowed, index.size(d) <= self.size(d) elsewhere); out has index's shape",
	.signature = "self:in dim:param index:in(i64) out:out",
	.grids = {
		{ { { "shape", "[7] [33,65] [3,5,17] [2,3,4,5,6] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "dim", "0 -1" } } },
		{ { { "shape", "[33,65]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0 -1" },
		    { "layout", "transposed strided" } } },
	},
	.setup = setup_gs,
	.ref = ref_gs,
	.declared_cases = 27,
	.deviation = "adds 1-d, 5-d and non-contiguous self, index smaller than self in the other dims",
};

static const kgb_op_t op_scatter = {
	.name = "scatter",
	.source = "aten",
	.category = "indexing-scatter-gather",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = self with, along dim, out[index[i][j]][j] = src[i][j] (.src), = value (.value, -2.5), "
	           "+= or *= src[i][j] (.reduce, reduce 'add' or 'multiply') or += / *= value (.value_reduce, "
	           "1.5); without reduce the indices of each line are distinct (otherwise the result would "
	           "depend on write order), with reduce they repeat",
	.signature = "self:in dim:param index:in(i64) src:in(.src, .reduce)|value:scalar(.value, .value_reduce) "
	             "reduce:i64(0 none, 1 add, 2 multiply) out:out",
	.grids = {
		{ { { "overload", "src value" }, { "shape", "[7] [33,65] [3,5,17] [2,3,4,5,6] [1024,1024]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0 -1" } } },
		{ { { "overload", "reduce value_reduce" }, { "shape", "[7] [33,65] [3,5,17] [2,3,4,5,6] [1024,1024]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0 -1" }, { "reduce", "add multiply" } } },
		{ { { "overload", "src" }, { "shape", "[33,65]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0 -1" },
		    { "layout", "transposed strided" } } },
		{ { { "overload", "reduce" }, { "shape", "[33,65]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "dim", "0 -1" },
		    { "reduce", "add" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_gs,
	.ref = ref_gs,
	.declared_cases = 84,
	.deviation = "all four overloads (src, value, reduce and value_reduce with add / multiply) with indices "
	             "that make the result well defined",
	.gen_inputs = gen_gs,
};

/* ---- embedding ---- */

static int setup_embedding(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t V = kgb_case_pint(c, "num", 1000), D = kgb_case_pint(c, "dim", 128), w[2], id[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "indices", id);

	(void)err, (void)errlen;
	w[0] = V;
	w[1] = D;
	kgb_case_add_tensor(c, "weight", KGB_ROLE_IN, dt, 2, w);
	kgb_aten_gen(kgb_case_add_tensor(c, "indices", KGB_ROLE_IN, KGB_DT_I64, nd, id), KGB_GEN_INT, 0,
	             (double)(V - 1));
	id[nd] = D;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd + 1, id);
	kgb_case_set_sym(c, "V", V);
	kgb_case_set_sym(c, "D", D);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL / 2);
	c->timed = c->t[2].numel >= ((size_t)1 << 21);   /* the widest tables gathered in bulk */
	return 0;
}

static int ref_embedding(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *w = &c->t[0], *ix = &c->t[1], *o = &c->t[2];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, wi[2];

	do {
		wi[0] = (int64_t)b->v[1][kgb_tensor_offset(ix, idx)];
		wi[1] = idx[o->ndim - 1];
		b->v[2][kgb_tensor_offset(o, idx)] = b->v[0][kgb_tensor_offset(w, wi)];
	} while (kgb_index_next(o, idx));
	return 0;
}

static const kgb_op_t op_embedding = {
	.name = "embedding",
	.source = "aten",
	.category = "indexing-scatter-gather",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out[..., :] = weight[indices[...], :] (weight [V, D], indices int64 of any shape, repeats "
	           "allowed; padding_idx does not change the forward)",
	.signature = "weight:in indices:in(i64) out:out",
	.grids = {
		{ { { "num", "11 1000 4096" }, { "dim", "7 128 1024" }, { "indices", "[] [5] [4,33] [8,512]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES } } },
	},
	.setup = setup_embedding,
	.ref = ref_embedding,
	.declared_cases = 288,
	.deviation = "3 vocabulary sizes x 3 widths x 4 index shapes (0-d to 2-d) x dtypes; the public grid "
	             "repeats the same sizes",
};

/* ---- index / index_put_ / _index_put_impl_ ---- */

static const struct {
	int nd;
	int64_t self[5];
	int first, nidx;          /* indexed dims: first .. first + nidx - 1 */
	int ind;                  /* index tensors' ndim */
	int64_t ishape[2][2];     /* shape of each index tensor */
} index_cfg[] = {
	{ 1, { 100 }, 0, 1, 1, { { 7 } } },
	{ 2, { 33, 65 }, 0, 1, 1, { { 10 } } },
	{ 2, { 33, 65 }, 0, 2, 2, { { 5, 4 }, { 5, 4 } } },
	{ 2, { 33, 65 }, 1, 1, 1, { { 10 } } },
	{ 5, { 4, 3, 4, 5, 6 }, 0, 1, 1, { { 3 } } },
	{ 2, { 1024, 1024 }, 0, 1, 1, { { 512 } } },
	{ 3, { 8, 16, 32 }, 0, 2, 1, { { 4 }, { 4 } } },
	{ 3, { 8, 16, 32 }, 0, 2, 2, { { 4, 1 }, { 1, 3 } } },
};

/* Broadcast shape of the index tensors of cfg k into bs; returns its ndim. */
static int index_bshape(int64_t k, int64_t *bs)
{
	int n = index_cfg[k].ind;
	for (int d = 0; d < n; d++) {
		bs[d] = 1;
		for (int i = 0; i < index_cfg[k].nidx; i++)
			bs[d] = KGB_MAX(bs[d], index_cfg[k].ishape[i][d]);
	}
	return n;
}

/* The shape of self[indices]: dims before, the broadcast index shape, dims after. */
static int index_oshape(int64_t k, int64_t *os)
{
	int64_t bs[2];
	int nb = index_bshape(k, bs), p = 0, f = index_cfg[k].first, e = f + index_cfg[k].nidx;

	for (int d = 0; d < f; d++)
		os[p++] = index_cfg[k].self[d];
	for (int d = 0; d < nb; d++)
		os[p++] = bs[d];
	for (int d = e; d < index_cfg[k].nd; d++)
		os[p++] = index_cfg[k].self[d];
	return p;
}

static int setup_index(kgb_case_t *c, char *err, size_t errlen)
{
	bool put = strcmp(c->op->name, "index") != 0;
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "cfg", 0), os[KGB_MAX_DIMS];
	bool acc = kgb_case_pint(c, "accumulate", 0) != 0;
	int on;

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(index_cfg))
		return kgb_err(err, errlen, "op %s: parameter cfg: no configuration %lld", c->op->name, (long long)k);
	if (!kgb_aten_tensor(c, "self", put ? KGB_ROLE_INOUT : KGB_ROLE_IN, dt, index_cfg[k].nd, index_cfg[k].self,
	                     kgb_case_pstr(c, "layout", NULL), err, errlen))
		return -1;
	for (int i = 0; i < index_cfg[k].nidx; i++) {
		int d = index_cfg[k].first + i;
		kgb_aten_gen(kgb_case_add_tensor(c, kgb_aten_name("in", i), KGB_ROLE_IN, KGB_DT_I64, index_cfg[k].ind,
		                                 index_cfg[k].ishape[i]),
		             KGB_GEN_INT, 0, (double)(index_cfg[k].self[d] - 1));
	}
	on = index_oshape(k, os);
	if (put) {
		const char *vm = kgb_case_pstr(c, "values", "full");
		if (strcmp(vm, "row") == 0)
			kgb_case_add_tensor(c, "values", KGB_ROLE_IN, dt, 1, &os[on - 1]);
		else
			kgb_case_add_tensor(c, "values", KGB_ROLE_IN, dt, on, os);
		kgb_case_add_scalar(c, "accumulate", KGB_DT_I64, acc);
		if (strcmp(c->op->name, "_index_put_impl_") == 0)
			kgb_case_add_scalar(c, "unsafe", KGB_DT_I64, 0);
	} else {
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, on, os);
	}
	kgb_case_set_sym(c, "nidx", index_cfg[k].nidx);
	kgb_case_set_sym(c, "first", index_cfg[k].first);
	c->iparam[0] = k;
	c->iparam[1] = acc;
	c->iparam[2] = put;
	kgb_aten_finish(c, acc ? 4 : 1, KGB_ATEN_TIMED_NUMEL / 2);
	/* accumulate: the values that land on one element are added in the dtype, one
	 * rounding each, as scatter's reduce (on the H200, 1 of 60 cases three fp16 steps
	 * off) */
	if (put && acc)
		kgb_aten_half_intermediates(c, 4);
	return 0;
}

/* index_put_ without accumulate: the indexed positions are distinct. */
static void gen_index(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	int64_t k = c->iparam[0], bs[2], *v, span = 1;
	int nb = index_bshape(k, bs), n = index_cfg[k].nidx, f = index_cfg[k].first;
	size_t cnt;

	if (!c->iparam[2] || c->iparam[1])
		return;
	if (index_cfg[k].ishape[0][0] != bs[0] || (nb > 1 && index_cfg[k].ishape[0][1] != bs[1])) {
		/* broadcast index tensors: distinct values per tensor give distinct pairs */
		for (int i = 0; i < n; i++) {
			const kgb_tensor_t *t = &c->t[1 + i];
			v = kgb_xmalloc(t->numel * sizeof *v);
			distinct(rng, index_cfg[k].self[f + i], (int64_t)t->numel, v);
			for (size_t j = 0; j < t->numel; j++)
				b->v[1 + i][kgb_tensor_flat_offset(t, j)] = (double)v[j];
			free(v);
		}
		return;
	}
	for (int i = 0; i < n; i++)
		span *= index_cfg[k].self[f + i];
	cnt = c->t[1].numel;
	v = kgb_xmalloc(cnt * sizeof *v);
	distinct(rng, span, (int64_t)cnt, v);
	for (size_t j = 0; j < cnt; j++) {
		int64_t p = v[j];
		for (int i = n - 1; i >= 0; i--) {
			int64_t sz = index_cfg[k].self[f + i];
			b->v[1 + i][kgb_tensor_flat_offset(&c->t[1 + i], j)] = (double)(p % sz);
			p /= sz;
		}
	}
	free(v);
}

static int ref_index(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t k = c->iparam[0], os[KGB_MAX_DIMS], bs[2];
	int on = index_oshape(k, os), nb = index_bshape(k, bs), n = index_cfg[k].nidx, f = index_cfg[k].first;
	bool put = c->iparam[2] != 0, acc = c->iparam[1] != 0;
	const kgb_tensor_t *x = &c->t[0], *vt = put ? &c->t[1 + n] : NULL, *o = put ? NULL : &c->t[1 + n];
	kgb_tensor_t view = { 0 };
	int64_t idx[KGB_MAX_DIMS] = { 0 }, s[KGB_MAX_DIMS];

	view.ndim = on;
	memcpy(view.shape, os, sizeof os);
	do {
		int p = 0;
		for (int d = 0; d < f; d++)
			s[p++] = idx[d];
		for (int i = 0; i < n; i++)
			s[p++] = (int64_t)b->v[1 + i][kgb_aten_bcast_off(&c->t[1 + i], nb, idx + f)];
		for (int d = f + nb; d < on; d++)
			s[p++] = idx[d];
		if (!put) {
			b->v[1 + n][kgb_tensor_offset(o, idx)] = b->v[0][kgb_tensor_offset(x, s)];
		} else {
			double v = b->v[1 + n][kgb_aten_bcast_off(vt, on, idx)];
			size_t off = kgb_tensor_offset(x, s);
			b->v[0][off] = acc ? b->v[0][off] + v : v;
		}
	} while (kgb_index_next(&view, idx));
	return 0;
}

#define INDEX_SUMMARY                                                                          \
	"advanced indexing with int64 index tensors on consecutive dims (dim 0; dims 0 and 1, same or "  \
	"broadcast index shapes; dim 1 after a full slice): the indexed dims are replaced by the index "  \
	"tensors' broadcast shape"

static const kgb_op_t op_index = {
	.name = "index",
	.source = "aten",
	.category = "indexing-scatter-gather",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = self[indices] (" INDEX_SUMMARY "; repeats allowed)",
	.signature = "self:in in0..in1:in(i64) out:out",
	.grids = {
		{ { { "cfg", "0 1 2 3 4 5 6 7" }, { "dtype", KGB_ATEN_FLOAT_DTYPES } } },
		{ { { "cfg", "1 2" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "layout", "transposed strided" } } },
	},
	.setup = setup_index,
	.ref = ref_index,
	.declared_cases = 30,
	.deviation = "the public empty-indices case crashes PyTorch itself; kgb tests 8 index patterns (1 or 2 "
	             "index tensors, broadcast, after a slice, 5-d) x dtypes and non-contiguous self; bool masks "
	             "are not covered",
};

#define PUT_OP(NAME, DECL, DEV)                                                                                   \
	static const kgb_op_t op_##NAME = {                                                                       \
		KGB_ATEN_OP(#NAME, "indexing-scatter-gather", KGB_ATEN_FLOAT_DTYPES,                              \
		            "self:inout in0..in1:in(i64) values:in accumulate:i64", setup_index, ref_index, DECL, \
		            "in place: self[indices] = values, or += values with accumulate (" INDEX_SUMMARY      \
		            "); values of the indexed shape or one row broadcast; without accumulate the "        \
		            "indexed positions are distinct, with accumulate they repeat",                        \
		            DEV),                                                                                 \
		.grids = {                                                                                        \
			{ { { "cfg", "0 1 2 3 4 5 6 7" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },                     \
			    { "accumulate", "0 1" }, { "values", "full" } } },                                    \
			{ { { "cfg", "1 5" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "accumulate", "0 1" },        \
			    { "values", "row" } } },                                                              \
		},                                                                                                \
		.inplace = true,                                                                                  \
		.gen_inputs = gen_index,                                                                          \
	}

PUT_OP(index_put_, 44,
       "the public accumulation test is broken (UnboundLocalError); kgb tests both modes on 8 index "
       "patterns, with well-defined (distinct) positions when not accumulating");
PUT_OP(_index_put_impl_, 7,
       "same grid as index_put_ (unsafe = 0), instead of the public 7 cases");

const kgb_op_t *const kgb_ops_aten_indexing[] = {
	&op__index_put_impl_, &op_embedding, &op_gather, &op_index, &op_index_put_, &op_scatter, NULL,
};
