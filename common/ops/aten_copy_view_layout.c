/* ATen copy, view and layout operators. View-like operators (as_strided, expand,
 * narrow, select, t, reshape, unsqueeze, unsafe_split, ...) are defined by what a
 * kernel must produce: the view MATERIALISED as a new contiguous tensor (PyTorch would
 * return a view sharing self's storage; kgb has no aliasing between buffers, so the
 * observable result is the view's values in row-major order). clone is a demo
 * operator.
 *
 * Every operator here is a gather: out[o] = convert(src[map(o)]). Each defines its
 * setup and a map function; one reference walks every output. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"

/* Fill sidx (the source multi-index) for output `oi` at index o; return the index of
 * the source tensor. */
typedef int (*map_fn)(const kgb_case_t *c, int oi, const int64_t *o, int64_t *sidx);

typedef struct view_def {
	kgb_op_t op;
	map_fn map;
	int nin;            /* number of input tensors (outputs follow them) */
} view_def_t;

_Static_assert(offsetof(view_def_t, op) == 0, "op must be the first member");

static double convert(kgb_dtype_t to, double v)
{
	if (to == KGB_DT_BOOL)
		return v != 0;
	if (!kgb_dtype_is_float(to))
		return trunc(v);
	return v;
}

static int ref_view(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const view_def_t *d = KGB_ATEN_DEF(view_def_t, c);

	for (int oi = 0; oi < c->ntensors; oi++) {
		const kgb_tensor_t *o = &c->t[oi];
		int64_t idx[KGB_MAX_DIMS] = { 0 }, sidx[KGB_MAX_DIMS];
		if (o->role == KGB_ROLE_IN)
			continue;
		if (o->numel == 0)
			continue;
		do {
			memset(sidx, 0, sizeof sidx);
			int si = d->map(c, oi, idx, sidx);
			double v;
			if (si < 0) {
				v = c->fparam[7];         /* a constant (select_backward-like fills) */
			} else if (c->iparam[7] == 1 && si == 0) {
				/* as_strided: sidx[0] is a raw storage offset */
				v = b->v[si][(size_t)sidx[0]];
			} else {
				v = b->v[si][kgb_tensor_offset(&c->t[si], sidx)];
			}
			b->v[oi][kgb_tensor_offset(o, idx)] = convert(o->dtype, v);
		} while (kgb_index_next(o, idx));
	}
	return 0;
}

static kgb_tensor_t *add_in(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int nd,
                            const int64_t *dims, char *err, size_t errlen)
{
	kgb_tensor_t *t = kgb_aten_tensor(c, name, role, dt, nd, dims, kgb_case_pstr(c, "layout", NULL), err,
	                                  errlen);
	if (t && !kgb_dtype_is_float(dt) && dt != KGB_DT_BOOL)
		kgb_aten_gen(t, KGB_GEN_INT, dt == KGB_DT_I16 ? -30000 : -1000000, dt == KGB_DT_I16 ? 30000 : 1000000);
	return t;
}

/* ---- identity-shaped maps ---- */

static int map_same(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	(void)oi;
	memcpy(s, o, sizeof(int64_t) * (size_t)KGB_MAX(c->t[0].ndim, 1));
	return 0;
}

/* out[o] = self[0, ..., 0] (item, _local_scalar_dense: self has one element). */
static int map_first(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	(void)c, (void)oi, (void)o, (void)s;
	return 0;
}

/* out (of shape self.shape) from self or a broadcast (expand / copy_ from src). */
static int map_bcast(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	const kgb_tensor_t *src = &c->t[c->iparam[0]];
	int lead = c->t[oi].ndim - src->ndim;
	for (int d = 0; d < src->ndim; d++)
		s[d] = src->shape[d] == 1 ? 0 : o[d + lead];
	return (int)c->iparam[0];
}

/* ---- item / _local_scalar_dense ---- */

static int setup_item(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);

	if (kgb_aten_numel(nd, dims) != 1)
		return kgb_err(err, errlen, "op %s: shape must have one element", c->op->name);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 0, dims);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	c->timed = nd == 0;     /* a latency benchmark: nothing here is large */
	return 0;
}

/* ---- _to_copy / to / contiguous ---- */

static int setup_convert(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	kgb_dtype_t odt = kgb_aten_dtype(c, "out_dtype", dt);
	int64_t dims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	kgb_tensor_t *x = add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen);

	if (!x)
		return -1;
	if (kgb_dtype_is_float(dt) && !kgb_dtype_is_float(odt))
		kgb_aten_gen(x, KGB_GEN_UNIFORM, -100, 100);   /* conversions truncate toward zero */
	else if (!kgb_dtype_is_float(dt))
		kgb_aten_gen(x, KGB_GEN_INT, -1000, 1000);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, odt, nd, dims);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

/* ---- copy_ ---- */

static int setup_copy_(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *sdn = kgb_case_pstr(c, "src_dtype", "same");
	const char *mode = kgb_case_pstr(c, "src", "same");
	kgb_dtype_t sdt = dt;
	int64_t dims[KGB_MAX_DIMS], sd[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims), snd = nd;
	kgb_tensor_t *s;

	if (strcmp(sdn, "same") != 0 && kgb_dtype_parse(sdn, &sdt) != 0)
		return kgb_err(err, errlen, "op copy_: parameter src_dtype: bad dtype '%s'", sdn);
	if (!add_in(c, "self", KGB_ROLE_INOUT, dt, nd, dims, err, errlen))
		return -1;
	memcpy(sd, dims, sizeof sd);
	if (strcmp(mode, "row") == 0) {
		snd = 1;
		sd[0] = dims[nd - 1];
	}
	s = kgb_case_add_tensor(c, "src", KGB_ROLE_IN, sdt, snd, sd);
	if (kgb_dtype_is_float(sdt) && !kgb_dtype_is_float(dt))
		kgb_aten_gen(s, KGB_GEN_UNIFORM, -100, 100);
	else if (!kgb_dtype_is_float(sdt) && sdt != KGB_DT_BOOL)
		kgb_aten_gen(s, KGB_GEN_INT, -1000, 1000);
	c->iparam[0] = 1;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_copy_(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	return map_bcast(c, oi, o, s);
}

/* ---- expand / expand_as ---- */

static const struct {
	int nd, ond;
	int64_t in[5], out[5];
} expand_cfg[] = {
	{ 1, 1, { 1 }, { 5 } },
	{ 2, 2, { 3, 1 }, { 3, 4 } },
	{ 2, 2, { 1, 65 }, { 33, 65 } },
	{ 0, 2, { 0 }, { 2, 3 } },
	{ 1, 2, { 7 }, { 4, 7 } },
	{ 3, 3, { 2, 1, 4 }, { 2, 3, 4 } },
	{ 3, 3, { 1, 1, 1 }, { 2, 3, 4 } },
	{ 2, 2, { 1024, 1 }, { 1024, 1024 } },
	{ 2, 2, { 1, 1024 }, { 1024, 1024 } },
	{ 5, 5, { 2, 1, 4, 1, 6 }, { 2, 3, 4, 5, 6 } },
	{ 1, 3, { 3 }, { 2, 2, 3 } },
};

static int setup_expand(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "cfg", 0);

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(expand_cfg))
		return kgb_err(err, errlen, "op %s: parameter cfg: no configuration %lld", c->op->name, (long long)k);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, expand_cfg[k].nd, expand_cfg[k].in, err, errlen))
		return -1;
	if (strcmp(c->op->name, "expand_as") == 0)
		kgb_case_add_tensor(c, "other", KGB_ROLE_IN, dt, expand_cfg[k].ond, expand_cfg[k].out);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, expand_cfg[k].ond, expand_cfg[k].out);
	c->iparam[0] = 0;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

/* ---- as_strided ---- */

static const struct {
	int64_t storage;
	int nd;
	int64_t size[5], stride[5], offset;
} strided_cfg[] = {
	{ 64, 2, { 8, 8 }, { 8, 1 }, 0 },
	{ 64, 2, { 8, 8 }, { 1, 8 }, 0 },
	{ 100, 1, { 10 }, { 11 }, 0 },
	{ 1000, 2, { 5, 200 }, { 200, 1 }, 0 },
	{ 4096, 2, { 31, 64 }, { 64, 1 }, 64 },
	{ 30, 2, { 28, 3 }, { 1, 1 }, 0 },
	{ 16, 3, { 4, 4, 3 }, { 0, 4, 1 }, 0 },
	{ 1048576, 2, { 1024, 1024 }, { 1, 1024 }, 0 },
	{ 1048576, 2, { 512, 1024 }, { 2048, 1 }, 1024 },
	{ 1440, 5, { 2, 3, 4, 5, 6 }, { 720, 240, 60, 12, 2 }, 1 },
	{ 7, 0, { 0 }, { 0 }, 3 },
	{ 1, 1, { 1 }, { 1 }, 0 },
	{ 999, 2, { 7, 11 }, { 13, 3 }, 5 },
};

static int setup_as_strided(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "view", 0);
	char name[32];

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(strided_cfg))
		return kgb_err(err, errlen, "op as_strided: parameter view: no configuration %lld", (long long)k);
	kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, 1, &strided_cfg[k].storage);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, strided_cfg[k].nd, strided_cfg[k].size);
	for (int d = 0; d < strided_cfg[k].nd; d++) {
		snprintf(name, sizeof name, "view_size%d", d);
		kgb_case_set_sym(c, name, strided_cfg[k].size[d]);
		snprintf(name, sizeof name, "view_stride%d", d);
		kgb_case_set_sym(c, name, strided_cfg[k].stride[d]);
	}
	kgb_case_set_sym(c, "storage_offset", strided_cfg[k].offset);
	c->iparam[0] = k;
	c->iparam[7] = 1;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_as_strided(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int64_t k = c->iparam[0], off = strided_cfg[k].offset;
	(void)oi;
	for (int d = 0; d < strided_cfg[k].nd; d++)
		off += o[d] * strided_cfg[k].stride[d];
	s[0] = off;
	return 0;
}

/* ---- cat / stack ---- */

static const struct {
	int n, nd, dim;
	int64_t shapes[4][5];
} cat_cfg[] = {
	{ 2, 2, 0, { { 3, 5 }, { 4, 5 } } },
	{ 3, 2, 1, { { 3, 5 }, { 3, 7 }, { 3, 1 } } },
	{ 4, 3, 1, { { 2, 3, 4 }, { 2, 5, 4 }, { 2, 1, 4 }, { 2, 2, 4 } } },
	{ 2, 2, 0, { { 1024, 512 }, { 1024, 512 } } },
	{ 2, 2, 1, { { 1024, 256 }, { 1024, 768 } } },
	{ 3, 1, 0, { { 7 }, { 13 }, { 1 } } },
	{ 2, 5, 4, { { 2, 3, 4, 5, 6 }, { 2, 3, 4, 5, 1 } } },
	{ 3, 2, 0, { { 33, 65 }, { 1, 65 }, { 33, 65 } } },
};

static int setup_cat(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "cfg", 0), od[5];
	int dim;

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(cat_cfg))
		return kgb_err(err, errlen, "op cat: parameter cfg: no configuration %lld", (long long)k);
	dim = cat_cfg[k].dim;
	memcpy(od, cat_cfg[k].shapes[0], sizeof od);
	od[dim] = 0;
	for (int i = 0; i < cat_cfg[k].n; i++) {
		if (!add_in(c, kgb_aten_name("in", i), KGB_ROLE_IN, dt, cat_cfg[k].nd, cat_cfg[k].shapes[i], err,
		            errlen))
			return -1;
		od[dim] += cat_cfg[k].shapes[i][dim];
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, cat_cfg[k].nd, od);
	kgb_case_set_sym(c, "dim", dim);
	kgb_case_set_sym(c, "n", cat_cfg[k].n);
	c->iparam[0] = dim;
	c->iparam[1] = cat_cfg[k].n;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_cat(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int dim = (int)c->iparam[0];
	int64_t p = o[dim];
	int i = 0;

	memcpy(s, o, sizeof(int64_t) * (size_t)c->t[oi].ndim);
	while (p >= c->t[i].shape[dim]) {
		p -= c->t[i].shape[dim];
		i++;
	}
	s[dim] = p;
	return i;
}

static int setup_stack(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int n = (int)kgb_case_pint(c, "n", 2);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd + 1);

	for (int i = 0; i < n; i++)
		if (!add_in(c, kgb_aten_name("in", i), KGB_ROLE_IN, dt, nd, dims, err, errlen))
			return -1;
	for (int d = 0, k = 0; d <= nd; d++)
		od[d] = d == dim ? n : dims[k++];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd + 1, od);
	kgb_case_set_sym(c, "dim", dim);
	kgb_case_set_sym(c, "n", n);
	c->iparam[0] = dim;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL / 2);
	return 0;
}

static int map_stack(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int dim = (int)c->iparam[0];
	for (int d = 0, k = 0; d < c->t[oi].ndim; d++)
		if (d != dim)
			s[k++] = o[d];
	return (int)o[dim];
}

/* ---- im2col ---- */

static const struct {
	int nd;
	int64_t in[4];
	int kh, kw, dh, dw, ph, pw, sh, sw;
} im2col_cfg[] = {
	{ 4, { 1, 1, 5, 5 }, 3, 3, 1, 1, 0, 0, 1, 1 },
	{ 4, { 2, 3, 8, 8 }, 3, 3, 1, 1, 1, 1, 1, 1 },
	{ 4, { 2, 3, 9, 7 }, 2, 3, 1, 2, 1, 0, 2, 1 },
	{ 4, { 1, 16, 32, 32 }, 3, 3, 1, 1, 1, 1, 2, 2 },
	{ 4, { 2, 32, 56, 56 }, 3, 3, 1, 1, 1, 1, 1, 1 },
	{ 3, { 3, 8, 8 }, 2, 2, 1, 1, 0, 0, 2, 2 },
	{ 4, { 1, 4, 17, 13 }, 5, 3, 2, 1, 2, 1, 1, 3 },
	{ 4, { 8, 64, 14, 14 }, 1, 1, 1, 1, 0, 0, 1, 1 },
};

static int setup_im2col(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "cfg", 0), od[3];
	int64_t N, C, H, W, oh, ow;
	int b;

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(im2col_cfg))
		return kgb_err(err, errlen, "op im2col: parameter cfg: no configuration %lld", (long long)k);
	b = im2col_cfg[k].nd == 4;
	N = b ? im2col_cfg[k].in[0] : 1;
	C = im2col_cfg[k].in[b];
	H = im2col_cfg[k].in[b + 1];
	W = im2col_cfg[k].in[b + 2];
	oh = (H + 2 * im2col_cfg[k].ph - im2col_cfg[k].dh * (im2col_cfg[k].kh - 1) - 1) / im2col_cfg[k].sh + 1;
	ow = (W + 2 * im2col_cfg[k].pw - im2col_cfg[k].dw * (im2col_cfg[k].kw - 1) - 1) / im2col_cfg[k].sw + 1;
	if (!add_in(c, "self", KGB_ROLE_IN, dt, im2col_cfg[k].nd, im2col_cfg[k].in, err, errlen))
		return -1;
	od[0] = N;
	od[b ? 1 : 0] = C * im2col_cfg[k].kh * im2col_cfg[k].kw;
	od[b ? 2 : 1] = oh * ow;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, b ? 3 : 2, od);
	kgb_case_set_sym(c, "kh", im2col_cfg[k].kh);
	kgb_case_set_sym(c, "kw", im2col_cfg[k].kw);
	kgb_case_set_sym(c, "dh", im2col_cfg[k].dh);
	kgb_case_set_sym(c, "dw", im2col_cfg[k].dw);
	kgb_case_set_sym(c, "ph", im2col_cfg[k].ph);
	kgb_case_set_sym(c, "pw", im2col_cfg[k].pw);
	kgb_case_set_sym(c, "sh", im2col_cfg[k].sh);
	kgb_case_set_sym(c, "sw", im2col_cfg[k].sw);
	kgb_case_set_sym(c, "OH", oh);
	kgb_case_set_sym(c, "OW", ow);
	c->iparam[0] = k;
	c->iparam[1] = ow;
	c->fparam[7] = 0;        /* padding reads zero */
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_im2col(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int64_t k = c->iparam[0], ow = c->iparam[1];
	int b = c->t[oi].ndim == 3;
	int64_t row = o[b], l = o[b + 1];
	int kh = im2col_cfg[k].kh, kw = im2col_cfg[k].kw;
	int64_t ch = row / (kh * kw), ki = (row / kw) % kh, kj = row % kw;
	int64_t y = (l / ow) * im2col_cfg[k].sh - im2col_cfg[k].ph + ki * im2col_cfg[k].dh;
	int64_t x = (l % ow) * im2col_cfg[k].sw - im2col_cfg[k].pw + kj * im2col_cfg[k].dw;
	const kgb_tensor_t *in = &c->t[0];

	if (y < 0 || x < 0 || y >= in->shape[b + 1] || x >= in->shape[b + 2])
		return -1;
	if (b)
		s[0] = o[0];
	s[b] = ch;
	s[b + 1] = y;
	s[b + 2] = x;
	return 0;
}

/* ---- narrow / select / t / unsqueeze / reshape ---- */

static int setup_narrow(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd);
	const char *w = kgb_case_pstr(c, "range", "mid");
	int64_t n = dims[dim], start, len;

	if (strcmp(w, "head") == 0)
		start = 0, len = (n + 1) / 2;
	else if (strcmp(w, "tail") == 0)
		start = n / 3, len = n - n / 3;
	else
		start = n / 4, len = KGB_MAX(1, n / 2);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	memcpy(od, dims, sizeof od);
	od[dim] = len;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, od);
	kgb_case_add_scalar(c, "start", KGB_DT_I64, (double)start);
	kgb_case_add_scalar(c, "length", KGB_DT_I64, (double)len);
	kgb_case_set_sym(c, "dim", dim);
	c->iparam[0] = dim;
	c->iparam[1] = start;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_narrow(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	memcpy(s, o, sizeof(int64_t) * (size_t)c->t[oi].ndim);
	s[c->iparam[0]] += c->iparam[1];
	return 0;
}

static int setup_select(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd);
	int64_t index = kgb_case_pint(c, "index", 0), widx = index < 0 ? index + dims[dim] : index;

	if (widx < 0 || widx >= dims[dim])
		return kgb_err(err, errlen, "op select: index %lld out of range for size %lld", (long long)index,
		               (long long)dims[dim]);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	for (int d = 0, k = 0; d < nd; d++)
		if (d != dim)
			od[k++] = dims[d];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd - 1, od);
	kgb_case_add_scalar(c, "index", KGB_DT_I64, (double)index);
	kgb_case_set_sym(c, "dim", dim);
	c->iparam[0] = dim;
	c->iparam[1] = widx;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_select(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int dim = (int)c->iparam[0];
	(void)oi;
	for (int d = 0, k = 0; d < c->t[0].ndim; d++)
		s[d] = d == dim ? c->iparam[1] : o[k++];
	return 0;
}

static int setup_t(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);

	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	memcpy(od, dims, sizeof od);
	if (nd == 2) {
		od[0] = dims[1];
		od[1] = dims[0];
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, od);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_t(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	(void)oi;
	if (c->t[0].ndim == 2) {
		s[0] = o[1];
		s[1] = o[0];
	} else if (c->t[0].ndim == 1) {
		s[0] = o[0];
	}
	return 0;
}

static int setup_unsqueeze(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd + 1);

	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	for (int d = 0, k = 0; d <= nd; d++)
		od[d] = d == dim ? 1 : dims[k++];
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd + 1, od);
	kgb_case_set_sym(c, "dim", dim);
	c->iparam[0] = dim;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_unsqueeze(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int dim = (int)c->iparam[0];
	for (int d = 0, k = 0; d < c->t[oi].ndim; d++)
		if (d != dim)
			s[k++] = o[d];
	return 0;
}

static const struct {
	int nd, ond;
	int64_t in[5], out[5];
} reshape_cfg[] = {
	{ 2, 1, { 33, 65 }, { 2145 } },
	{ 1, 2, { 1000 }, { 8, 125 } },
	{ 2, 3, { 6, 20 }, { 2, 3, 20 } },
	{ 3, 2, { 2, 3, 4 }, { 4, 6 } },
	{ 0, 1, { 0 }, { 1 } },
	{ 1, 0, { 1 }, { 0 } },
	{ 5, 2, { 2, 3, 4, 5, 6 }, { 24, 30 } },
	{ 2, 2, { 1024, 1024 }, { 512, 2048 } },
	{ 2, 3, { 256, 4096 }, { 64, 16, 1024 } },
	{ 2, 2, { 7, 9 }, { 9, 7 } },
	{ 3, 5, { 4, 6, 10 }, { 2, 2, 3, 2, 10 } },
	{ 2, 1, { 512, 1024 }, { 524288 } },
	{ 2, 2, { 5, 13 }, { 13, 5 } },
	{ 3, 2, { 3, 5, 7 }, { 15, 7 } },
};

static int setup_reshape(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t k = kgb_case_pint(c, "cfg", 0);

	if (k < 0 || k >= (int64_t)KGB_ARRAY_LEN(reshape_cfg))
		return kgb_err(err, errlen, "op reshape: parameter cfg: no configuration %lld", (long long)k);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, reshape_cfg[k].nd, reshape_cfg[k].in, err, errlen))
		return -1;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, reshape_cfg[k].ond, reshape_cfg[k].out);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_reshape(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	const kgb_tensor_t *ot = &c->t[oi], *in = &c->t[0];
	size_t flat = 0;

	for (int d = 0; d < ot->ndim; d++)
		flat = flat * (size_t)ot->shape[d] + (size_t)o[d];
	for (int d = in->ndim - 1; d >= 0; d--) {
		s[d] = (int64_t)(flat % (size_t)in->shape[d]);
		flat /= (size_t)in->shape[d];
	}
	return 0;
}

/* ---- rot90 ---- */

static int setup_rot90(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims);
	const char *ds = kgb_case_pstr(c, "dims", "d01");
	int64_t k = kgb_case_pint(c, "k", 1);
	int d0, d1;

	if (strlen(ds) != 3 || ds[0] != 'd')
		return kgb_err(err, errlen, "op rot90: parameter dims: bad value '%s'", ds);
	d0 = ds[1] - '0';
	d1 = ds[2] - '0';
	if (d0 >= nd || d1 >= nd || d0 == d1)
		return kgb_err(err, errlen, "op rot90: dims %s do not fit a %d-d shape", ds, nd);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	k = ((k % 4) + 4) % 4;
	memcpy(od, dims, sizeof od);
	if (k % 2) {
		od[d0] = dims[d1];
		od[d1] = dims[d0];
	}
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, od);
	kgb_case_add_scalar(c, "k", KGB_DT_I64, (double)kgb_case_pint(c, "k", 1));
	kgb_case_set_sym(c, "dim0", d0);
	kgb_case_set_sym(c, "dim1", d1);
	c->iparam[0] = k;
	c->iparam[1] = d0;
	c->iparam[2] = d1;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL / 2);
	return 0;
}

static int map_rot90(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int64_t k = c->iparam[0];
	int d0 = (int)c->iparam[1], d1 = (int)c->iparam[2];
	const kgb_tensor_t *x = &c->t[0];

	memcpy(s, o, sizeof(int64_t) * (size_t)c->t[oi].ndim);
	switch (k) {
	case 1:   /* transpose(flip(x, d1)): out[i, j] = x[j, n1 - 1 - i] */
		s[d0] = o[d1];
		s[d1] = x->shape[d1] - 1 - o[d0];
		break;
	case 2:
		s[d0] = x->shape[d0] - 1 - o[d0];
		s[d1] = x->shape[d1] - 1 - o[d1];
		break;
	case 3:   /* transpose(flip(x, d0)): out[i, j] = x[n0 - 1 - j, i] */
		s[d0] = x->shape[d0] - 1 - o[d1];
		s[d1] = o[d0];
		break;
	default:
		break;
	}
	return 0;
}

/* ---- unsafe_split / unsafe_split_with_sizes ---- */

static int setup_split(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t dims[KGB_MAX_DIMS], od[KGB_MAX_DIMS], sizes[11];
	int nd = kgb_aten_shape(c, "shape", dims);
	int dim = kgb_aten_wrap_dim(kgb_case_pint(c, "dim", 0), nd);
	int64_t n = dims[dim], split = 0;
	int nparts = 0;
	bool with_sizes = strcmp(c->op->name, "unsafe_split_with_sizes") == 0;

	if (!with_sizes) {
		int64_t parts = kgb_case_pint(c, "parts", 2);
		split = (n + parts - 1) / parts;
		for (int64_t p = 0; p < n; p += split)
			sizes[nparts++] = KGB_MIN(split, n - p);
		kgb_case_add_scalar(c, "split_size", KGB_DT_I64, (double)split);
	} else {
		const char *pat = kgb_case_pstr(c, "sizes", "even");
		if (strcmp(pat, "uneven") == 0 && n >= 2) {
			sizes[nparts++] = 1;
			sizes[nparts++] = n - 1;
		} else if (strcmp(pat, "three") == 0 && n >= 3) {
			sizes[nparts++] = n / 2;
			sizes[nparts++] = n / 3;
			sizes[nparts++] = n - n / 2 - n / 3;
		} else {
			sizes[nparts++] = n / 2;
			sizes[nparts++] = n - n / 2;
		}
	}
	if (nparts > 11)
		return kgb_err(err, errlen, "op %s: %d parts is more than 11", c->op->name, nparts);
	if (!add_in(c, "self", KGB_ROLE_IN, dt, nd, dims, err, errlen))
		return -1;
	for (int i = 0; i < nparts; i++) {
		char sym[16];
		memcpy(od, dims, sizeof od);
		od[dim] = sizes[i];
		kgb_case_add_tensor(c, kgb_aten_name("out", i), KGB_ROLE_OUT, dt, nd, od);
		snprintf(sym, sizeof sym, "size%d", i);
		kgb_case_set_sym(c, sym, sizes[i]);
	}
	kgb_case_set_sym(c, "dim", dim);
	kgb_case_set_sym(c, "nparts", nparts);
	c->iparam[0] = dim;
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int map_split(const kgb_case_t *c, int oi, const int64_t *o, int64_t *s)
{
	int dim = (int)c->iparam[0];
	int64_t off = 0;

	for (int i = 1; i < oi; i++)
		off += c->t[i].shape[dim];
	memcpy(s, o, sizeof(int64_t) * (size_t)c->t[oi].ndim);
	s[dim] += off;
	return 0;
}

/* ---- affine_grid_generator ---- */

static int setup_affine(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	int64_t sz[KGB_MAX_DIMS], th[3], od[5];
	int nd = kgb_aten_shape(c, "size", sz);
	bool ac = kgb_case_pint(c, "align_corners", 0) != 0;
	int sd = nd - 2;     /* spatial dims: 2 or 3 */
	kgb_tensor_t *t;

	if (sd != 2 && sd != 3)
		return kgb_err(err, errlen, "op affine_grid_generator: size must be 4-d or 5-d");
	th[0] = sz[0];
	th[1] = sd;
	th[2] = sd + 1;
	t = kgb_case_add_tensor(c, "theta", KGB_ROLE_IN, dt, 3, th);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, -1, 1);
	od[0] = sz[0];
	for (int d = 0; d < sd; d++)
		od[1 + d] = sz[2 + d];
	od[1 + sd] = sd;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, sd + 2, od);
	kgb_case_set_sym(c, "align_corners", ac);
	c->iparam[0] = ac;
	c->iparam[1] = sd;
	kgb_aten_finish(c, 3, KGB_ATEN_TIMED_NUMEL / 2);
	/* ATen builds the base grid in the output dtype, then multiplies: the rounded
	 * coordinates (one rounding, up to 1 in magnitude) weigh on terms as large as the
	 * output; near-zero outputs of large grids would fail the relative bar */
	kgb_aten_half_intermediates(c, 2);
	return 0;
}

/* The base grid coordinate of index i of n along an axis. */
static double base_coord(int64_t i, int64_t n, bool ac)
{
	if (n <= 1)
		return 0;
	if (ac)
		return -1 + 2.0 * (double)i / (double)(n - 1);
	return (2.0 * (double)i + 1) / (double)n - 1;
}

static int ref_affine(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *th = &c->t[0], *o = &c->t[1];
	bool ac = c->iparam[0] != 0;
	int sd = (int)c->iparam[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 }, ti[3];

	do {
		/* base = (x_w, y_h[, z_d], 1); out[..., r] = sum_k theta[n, r, k] * base[k] */
		double base[4];
		int r = (int)idx[sd + 1];
		for (int a = 0; a < sd; a++) {
			int d = sd - a;     /* x is the last spatial dim */
			base[a] = base_coord(idx[d], o->shape[d], ac);
		}
		base[sd] = 1;
		double acc = 0;
		ti[0] = idx[0];
		ti[1] = r;
		for (int k = 0; k <= sd; k++) {
			ti[2] = k;
			acc += b->v[0][kgb_tensor_offset(th, ti)] * base[k];
		}
		b->v[1][kgb_tensor_offset(o, idx)] = acc;
	} while (kgb_index_next(o, idx));
	return 0;
}

/* ---- the operators ---- */

#define VIEW(NAME, MAP, SETUP, DT, SIG, DECL, SUMMARY, DEV, INPL, ...)                                        \
	static const view_def_t def_##NAME = {                                                                \
		.op = {                                                                                       \
			KGB_ATEN_OP(#NAME, "copy-view-layout", DT, SIG, SETUP, ref_view, DECL, SUMMARY, DEV), \
			.grids = { __VA_ARGS__ },                                                             \
			.inplace = INPL,                                                                      \
		},                                                                                            \
		.map = MAP,                                                                                   \
	}

#define F3 KGB_ATEN_FLOAT_DTYPES
#define MAT "materialised as a new contiguous tensor"

VIEW(_local_scalar_dense, map_first, setup_item, F3 " i32 i64", "self:in out:out(0-d)", 8,
     "out (0-d) = the value of self's single element (the device side of Tensor.item())",
     "adds 0-d and [1,1,1] inputs", false,
     { { { "shape", "[] [1] [1,1,1]" }, { "dtype", F3 " i32 i64" } } });
VIEW(item, map_first, setup_item, F3 " i16 i32 i64", "self:in out:out(0-d)", 6,
     "out (0-d) = the value of self's single element", "adds [1] and [1,1,1] inputs", false,
     { { { "shape", "[] [1] [1,1,1]" }, { "dtype", F3 " i16 i32 i64" } } });
VIEW(_to_copy, map_same, setup_convert, F3 " f64", "self:in out:out(dtype)", 26,
     "out = self converted to out_dtype (round to nearest even between float types), as a new "
     "contiguous tensor; non-contiguous inputs too",
     "every pair of the four float dtypes on 0-d to 2-d shapes plus non-contiguous inputs", false,
     { { { "shape", "[] [7] [33,65] [1024,1024]" }, { "dtype", F3 " f64" }, { "out_dtype", "f16 bf16 f32 f64" } } },
     { { { "shape", "[33,65]" }, { "dtype", F3 }, { "out_dtype", "f32 f16" }, { "layout", "transposed strided" } } });
VIEW(to, map_same, setup_convert, F3 " i32", "self:in out:out(dtype)", 48,
     "out = self converted to out_dtype: between floats round to nearest even, float to int32 "
     "truncates toward zero (inputs in [-100, 100)), int32 to float rounds",
     "every pair of bf16/f16/f32/i32 plus non-contiguous inputs", false,
     { { { "shape", "[] [7] [33,65] [1024,1024]" }, { "dtype", F3 " i32" }, { "out_dtype", "bf16 f16 f32 i32" } } },
     { { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", "f32 f16" }, { "out_dtype", "f32 bf16" },
         { "layout", "transposed strided" } } });
VIEW(contiguous, map_same, setup_convert, F3 " i16 i32 i64", "self:in out:out", 30,
     "out = self's values in row-major order as a new contiguous tensor (self contiguous, transposed or "
     "strided)",
     "adds 5-d and every layout per dtype", false,
     { { { "shape", "[33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", F3 " i16 i32 i64" },
         { "layout", "transposed strided contig" } } });
VIEW(copy_, map_copy_, setup_copy_, "bf16 bool f16 f32 i16 i32", "self:inout src:in", 23,
     "in place: self[...] = src converted to self's dtype (float to int truncates, to bool is != 0), "
     "src of self's shape or broadcast (row); self may be strided (gaps untouched)",
     "adds dtype conversions, broadcast sources and strided destinations", true,
     { { { "shape", "[] [7] [33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", "bf16 bool f16 f32 i16 i32" },
         { "src_dtype", "same" }, { "src", "same" } } },
     { { { "shape", "[33,65]" }, { "dtype", "bf16 bool f16 f32 i16 i32" }, { "src_dtype", "f32 i32 bool" },
         { "src", "same" } } },
     { { { "shape", "[33,65] [1024,1024]" }, { "dtype", "f32 f16" }, { "src_dtype", "same" },
         { "src", "same row" }, { "layout", "transposed strided" } } });
VIEW(expand, map_bcast, setup_expand, F3, "self:in out:out sizes:param", 0,
     "out = self broadcast to the target sizes (size-1 dims repeated, new leading dims), " MAT,
     "the public benchmark has no test; kgb tests 11 broadcast patterns (0-d, new leading dims, 5-d, "
     "1024x1024)", false,
     { { { "cfg", "0 1 2 3 4 5 6 7 8 9 10" }, { "dtype", F3 } } });
VIEW(expand_as, map_bcast, setup_expand, F3, "self:in other:in out:out", 0,
     "out = self broadcast to other's shape (other's values are not read), " MAT,
     "the public benchmark has no test; same 11 patterns as expand", false,
     { { { "cfg", "0 1 2 3 4 5 6 7 8 9 10" }, { "dtype", F3 } } });
VIEW(as_strided, map_as_strided, setup_as_strided, F3, "self:in out:out size,stride,offset:param", 117,
     "out = the view of self's storage with the given size, stride and storage offset (overlapping, "
     "zero-stride, transposing and offset views), " MAT,
     "13 views (reshape, transpose, diagonal, sliding window, zero stride, offsets, 0-d, 5-d) x dtypes", false,
     { { { "view", "0 1 2 3 4 5 6 7 8 9 10 11 12" }, { "dtype", F3 } } });
VIEW(cat, map_cat, setup_cat, "f32", "in0..in3:in out:out dim:param", 3,
     "out = the inputs concatenated along dim (sizes along dim may differ, including 1)",
     "8 configurations (2-4 inputs, 1-d to 5-d, every dim) instead of 3, plus non-contiguous inputs", false,
     { { { "cfg", "0 1 2 3 4 5 6 7" }, { "dtype", "f32" } } },
     { { { "cfg", "0 2 7" }, { "dtype", "f32" }, { "layout", "transposed strided" } } });
VIEW(im2col, map_im2col, setup_im2col, F3, "self:in out:out kernel_size,dilation,padding,stride:param", 72,
     "out[n, c*kh*kw + i*kw + j, y*OW + x] = self[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw] (0 in the padding); "
     "batched [N,C,H,W] and unbatched [C,H,W]",
     "8 configurations of kernel, dilation, padding and stride (asymmetric ones included) x dtypes, plus "
     "non-contiguous inputs", false,
     { { { "cfg", "0 1 2 3 4 5 6 7" }, { "dtype", F3 } } },
     { { { "cfg", "1 2" }, { "dtype", F3 }, { "layout", "transposed strided" } } });
VIEW(narrow, map_narrow, setup_narrow, F3, "self:in out:out dim:param start:i64 length:i64", 18,
     "out = self[..., start : start + length, ...] along dim, " MAT,
     "head / middle / tail ranges on 1-d to 5-d inputs, every layout", false,
     { { { "shape", "[7] [33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", F3 }, { "dim", "0 -1" },
         { "range", "mid head tail" } } },
     { { { "shape", "[33,65]" }, { "dtype", F3 }, { "dim", "0 -1" }, { "range", "mid" },
         { "layout", "transposed strided" } } });
VIEW(select, map_select, setup_select, F3, "self:in out:out dim:param index:i64", 9,
     "out = self.select(dim, index) (the dim removed; negative index counts from the end), " MAT,
     "adds negative indices, 1-d (0-d result) to 5-d inputs and non-contiguous inputs", false,
     { { { "shape", "[7] [33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", F3 }, { "dim", "0 -1" },
         { "index", "0 -1 1" } } },
     { { { "shape", "[33,65]" }, { "dtype", F3 }, { "dim", "0 -1" }, { "index", "1" },
         { "layout", "transposed strided" } } });
VIEW(stack, map_stack, setup_stack, F3 " i16 i32", "in0..in4:in out:out dim:param", 60,
     "out = the n inputs (same shape) stacked along a new dim",
     "0-d to 4-d inputs, 2 and 5 inputs, first and last dims, every dtype", false,
     { { { "shape", "[] [7] [33,65] [2,3,4,5] [512,512]" }, { "dtype", F3 " i16 i32" }, { "n", "2 5" },
         { "dim", "0 -1" } } });
VIEW(t, map_t, setup_t, F3, "self:in out:out", 18,
     "out = self transposed (2-d: out[j, i] = self[i, j]; 0-d and 1-d: self), " MAT,
     "adds 0-d, 1-d, non-contiguous and 2048x1024 inputs", false,
     { { { "shape", "[] [7] [1,5] [33,65] [2048,1024]" }, { "dtype", F3 } } },
     { { { "shape", "[33,65] [1024,512]" }, { "dtype", F3 }, { "layout", "transposed strided" } } });
VIEW(unsqueeze, map_unsqueeze, setup_unsqueeze, F3, "self:in out:out dim:param", 69,
     "out = self with a new size-1 dim inserted at dim (negative dims count from the end of the result), "
     MAT " (from contiguous or strided self)",
     "0-d to 5-d inputs, first / last / middle dims, strided inputs", false,
     { { { "shape", "[] [7] [33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", F3 }, { "dim", "0 -1" } } },
     { { { "shape", "[33,65] [2,3,4,5,6] [1024,1024]" }, { "dtype", F3 }, { "dim", "1" } } },
     { { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", F3 }, { "dim", "1 -1" }, { "layout", "strided transposed" } } });
VIEW(reshape, map_reshape, setup_reshape, F3, "self:in out:out shape:param", 42,
     "out = self's values in row-major order with the new shape (a copy when self is not contiguous), "
     MAT,
     "14 shape pairs (0-d, 1-element, 5-d, splitting and merging dims) x dtypes, plus non-contiguous self", false,
     { { { "cfg", "0 1 2 3 4 5 6 7 8 9 10 11 12 13" }, { "dtype", F3 } } },
     { { { "cfg", "0 3 6 9" }, { "dtype", F3 }, { "layout", "transposed strided" } } });
VIEW(rot90, map_rot90, setup_rot90, F3, "self:in out:out k:i64 dims:param", 306,
     "out = self rotated by 90 degrees k times in the plane of dims (d0, d1), from d0 towards d1 (k "
     "taken modulo 4, negative k rotates the other way): k=1 is transpose(flip(self, d1))",
     "k in {-3, -1, 0, 1, 2, 3, 5} and every dims pair on 2-d to 5-d inputs", false,
     { { { "shape", "[2,3] [33,65] [1024,512]" }, { "dtype", F3 }, { "k", "1 -3 -1 0 2 3 5" }, { "dims", "d01 d10" } } },
     { { { "shape", "[2,3,4] [3,5,7] [2,3,4,5,6]" }, { "dtype", F3 }, { "k", "1 2 3 -1" }, { "dims", "d01 d12 d02 d21" } } },
     { { { "shape", "[33,65]" }, { "dtype", F3 }, { "k", "1 2" }, { "dims", "d01" }, { "layout", "transposed strided" } } });
VIEW(unsafe_split, map_split, setup_split, F3, "self:in out0..outN:out split_size:i64 dim:param", 162,
     "out_i = self[..., i*split : (i+1)*split, ...] along dim, each chunk " MAT " (the last may be "
     "shorter); split_size = ceil(size / parts)",
     "1 to 5 parts on 1-d to 4-d inputs along the first and last dims", false,
     { { { "shape", "[7] [33,65] [3,12,5] [2,3,8,10] [1024,1024] [64,4096]" }, { "dtype", F3 },
         { "dim", "0 -1" }, { "parts", "2 1 3 5" } } },
     { { { "shape", "[33,65]" }, { "dtype", F3 }, { "dim", "0 -1" }, { "parts", "3" },
         { "layout", "transposed strided" } } });
VIEW(unsafe_split_with_sizes, map_split, setup_split, F3, "self:in out0..outN:out split_sizes:param dim:param", 54,
     "out_i = consecutive chunks of self along dim with the given sizes (even halves, [1, n-1], or three "
     "parts), each " MAT,
     "three size patterns on 1-d to 4-d inputs along the first and last dims", false,
     { { { "shape", "[7] [33,65] [3,12,5] [2,3,8,10] [1024,1024] [64,4096]" }, { "dtype", F3 },
         { "dim", "0 -1" }, { "sizes", "even uneven three" } } });

static const kgb_op_t op_affine_grid_generator = {
	.name = "affine_grid_generator",
	.source = "aten",
	.category = "copy-view-layout",
	.dtypes = F3,
	.datasets = KGB_DS_ATEN,
	.summary = "out[n, (d,) h, w, :] = theta[n] @ (x_w, y_h, (z_d,) 1) with x, y, z the normalised "
	           "coordinates in [-1, 1] (align_corners: -1 + 2i/(n-1); else (2i+1)/n - 1); 2-d "
	           "(theta [N,2,3]) and 3-d (theta [N,3,4])",
	.signature = "theta:in size:param align_corners:param out:out",
	.grids = {
		{ { { "size", "[1,1,4,4] [2,3,7,9] [8,3,64,64] [4,1,256,256] [2,1,4,5,6] [1,1,32,32,32]" },
		    { "dtype", F3 }, { "align_corners", "0 1" } } },
	},
	.setup = setup_affine,
	.ref = ref_affine,
	.declared_cases = 72,
	.deviation = "adds the 3-d (volumetric) form; 6 sizes x align_corners x dtypes",
};

const kgb_op_t *const kgb_ops_aten_copy_view_layout[] = {
	&def__local_scalar_dense.op, &def__to_copy.op, &op_affine_grid_generator, &def_as_strided.op,
	&def_cat.op, &def_contiguous.op, &def_copy_.op, &def_expand.op, &def_expand_as.op, &def_im2col.op,
	&def_item.op, &def_narrow.op, &def_reshape.op, &def_rot90.op, &def_select.op, &def_stack.op,
	&def_t.op, &def_to.op, &def_unsafe_split.op, &def_unsafe_split_with_sizes.op, &def_unsqueeze.op,
	NULL,
};
