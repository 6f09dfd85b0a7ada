/* Shared helpers for the ATen operator families: parameters, tensors, broadcasting and
 * the double-precision special functions several references need. */
#include <string.h>
#include <math.h>
#include "aten_common.h"

/* Returns the dtype named by parameter `param` of the case, or dflt. */
kgb_dtype_t kgb_aten_dtype(const kgb_case_t *c, const char *param, kgb_dtype_t dflt)
{
	const char *s = kgb_case_pstr(c, param, NULL);
	kgb_dtype_t dt;

	if (!s)
		return dflt;
	KGB_ASSERT_MSG(kgb_dtype_parse(s, &dt) == 0, "op %s: parameter %s: bad dtype '%s'",
	               c->op->name, param, s);
	return dt;
}

/* Copies shape parameter `param` into dims and returns its number of dimensions. */
int kgb_aten_shape(const kgb_case_t *c, const char *param, int64_t *dims)
{
	const kgb_pval_t *pv = kgb_case_param(c, param);

	KGB_ASSERT_MSG(pv && pv->kind == KGB_PV_SHAPE, "op %s: no shape parameter '%s'",
	               c->op->name, param);
	for (int d = 0; d < pv->ndim; d++)
		dims[d] = pv->dims[d];
	return pv->ndim;
}

/* Adds a tensor with the given layout; NULL and err on a layout that does not fit. */
kgb_tensor_t *kgb_aten_tensor(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt,
                              int ndim, const int64_t *dims, const char *layout, char *err,
                              size_t errlen)
{
	kgb_tensor_t *t = kgb_case_add_tensor(c, name, role, dt, ndim, dims);

	if (layout && strcmp(layout, "contig") != 0) {
		if (kgb_tensor_layout(t, layout) != 0) {
			kgb_err(err, errlen, "op %s: tensor %s: layout '%s' does not fit a %d-d shape",
			        c->op->name, name, layout, ndim);
			return NULL;
		}
	}
	return t;
}

/* Sets the generator of t. */
void kgb_aten_gen(kgb_tensor_t *t, kgb_gen_t gen, double lo, double hi)
{
	t->gen = gen;
	t->lo = lo;
	t->hi = hi;
}

/* True when the case's value of grid parameter p is the first one its list names. */
static bool param_is_first(const kgb_case_t *c, int p)
{
	const char *list = c->op->grids[c->grid].params[p].values;
	const char *v = c->pv[p]->s;
	size_t n = strlen(v);

	while (*list == ' ')
		list++;
	return strncmp(list, v, n) == 0 && (list[n] == ' ' || list[n] == '\0');
}

/* Sets reduce_len, the default tolerance and the timed flag: a case is timed when some
 * tensor has at least timed_numel elements and every grid parameter other than the
 * shapes, the dtype and shape selectors ("cfg", "view") takes the first value of its
 * list (a few timed cases per op). */
void kgb_aten_finish(kgb_case_t *c, double reduce_len, size_t timed_numel)
{
	const kgb_grid_spec_t *gs = &c->op->grids[c->grid];
	size_t big = 0;
	bool first = true;

	kgb_dtype_t odt = KGB_DT_F32;

	for (int i = 0; i < c->ntensors; i++) {
		if (c->t[i].role != KGB_ROLE_IN) {
			odt = c->t[i].dtype;
			break;
		}
	}
	/* An fp32-accumulating kernel's error grows with the reduction length, but for
	 * fp16/bf16 outputs the final rounding dominates: scaling their tolerance with
	 * sqrt(n) would let zeros pass long reductions. Cap the length used for the
	 * tolerance (16 for half types, 4096 for fp32: rtol <= 6.4e-4). */
	if (reduce_len < 1)
		reduce_len = 1;
	if (odt == KGB_DT_F16 || odt == KGB_DT_BF16)
		reduce_len = KGB_MIN(reduce_len, 16.0);
	else
		reduce_len = KGB_MIN(reduce_len, 4096.0);
	c->reduce_len = reduce_len;
	kgb_case_default_tol(c);
	for (int i = 0; i < c->ntensors; i++)
		big = KGB_MAX(big, c->t[i].numel);
	for (int p = 0; p < KGB_MAX_PARAMS && gs->params[p].name; p++) {
		const char *pn = gs->params[p].name;
		if (c->pv[p]->kind == KGB_PV_SHAPE || strcmp(pn, "dtype") == 0 || strcmp(pn, "cfg") == 0 ||
		    strcmp(pn, "view") == 0)
			continue;     /* shape selectors: the size rule decides */
		if (!param_is_first(c, p))
			first = false;
	}
	c->timed = big >= timed_numel && first;
}

/* Returns d wrapped into [0, ndim) (ndim 0 is treated as 1). */
int kgb_aten_wrap_dim(int64_t d, int ndim)
{
	int n = ndim > 0 ? ndim : 1;

	if (d < 0)
		d += n;
	KGB_ASSERT_MSG(d >= 0 && d < n, "dim %lld out of range for %d-d", (long long)d, ndim);
	return (int)d;
}

/* Returns the product of dims (1 for 0-d). */
size_t kgb_aten_numel(int ndim, const int64_t *dims)
{
	size_t n = 1;

	for (int d = 0; d < ndim; d++)
		n *= (size_t)dims[d];
	return n;
}

/* Offset of the element of `in` broadcast to index idx of an ondim-d tensor. */
size_t kgb_aten_bcast_off(const kgb_tensor_t *in, int ondim, const int64_t *idx)
{
	size_t off = 0;
	int lead = ondim - in->ndim;

	KGB_ASSERT(lead >= 0);
	for (int d = 0; d < in->ndim; d++) {
		if (in->shape[d] != 1)
			off += (size_t)(idx[d + lead] * in->stride[d]);
	}
	return off;
}

/* Advance idx to the next line of t along dim (row-major over the other dims). */
bool kgb_aten_line_next(const kgb_tensor_t *t, int dim, int64_t *idx)
{
	for (int d = t->ndim - 1; d >= 0; d--) {
		if (d == dim)
			continue;
		if (++idx[d] < t->shape[d])
			return true;
		idx[d] = 0;
	}
	return false;
}

static const char *const out_names[16] = {
	"out0", "out1", "out2", "out3", "out4", "out5", "out6", "out7",
	"out8", "out9", "out10", "out11", "out12", "out13", "out14", "out15",
};
static const char *const in_names[16] = {
	"in0", "in1", "in2", "in3", "in4", "in5", "in6", "in7",
	"in8", "in9", "in10", "in11", "in12", "in13", "in14", "in15",
};

/* Returns the static name stem+i for stem "out" or "in", i < 16. */
const char *kgb_aten_name(const char *stem, int i)
{
	KGB_ASSERT(i >= 0 && i < 16);
	return strcmp(stem, "out") == 0 ? out_names[i] : in_names[i];
}

/* Python floor division of doubles (a // b). */
double kgb_aten_floordiv(double a, double b)
{
	return floor(a / b);
}

/* Digamma for x > 0 (reflection for x < 0): recurrence up to 10, then asymptotic. */
double kgb_aten_digamma(double x)
{
	double acc = 0, x2, s;

	if (x <= 0 && floor(x) == x)
		return NAN;
	if (x < 0)
		return kgb_aten_digamma(1 - x) - M_PI / tan(M_PI * x);
	while (x < 10) {
		acc -= 1 / x;
		x += 1;
	}
	x2 = 1 / (x * x);
	s = x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 * (1.0 / 252 - x2 * (1.0 / 240 - x2 * (1.0 / 132)))));
	return acc + log(x) - 0.5 / x - s;
}

/* Hurwitz zeta(s, x) for s > 1, x > 0 by Euler-Maclaurin summation. */
static double hurwitz_zeta(double s, double x)
{
	static const double b2k[] = { 1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
	                              -691.0 / 2730, 7.0 / 6 };
	const int N = 12;
	double sum = 0, a, fact = 1, poch, term;

	for (int k = 0; k < N; k++)
		sum += pow(x + k, -s);
	a = x + N;
	sum += pow(a, 1 - s) / (s - 1) + 0.5 * pow(a, -s);
	poch = s;                         /* s (s+1) ... (s+2j-2) */
	for (int j = 1; j <= 7; j++) {
		fact *= (double)(2 * j - 1) * (2 * j); /* (2j)! */
		term = b2k[j - 1] / fact * poch * pow(a, -s - 2 * j + 1);
		sum += term;
		poch *= (s + 2 * j - 1) * (s + 2 * j);
	}
	return sum;
}

/* polygamma(n, x) for n >= 0 and x > 0. */
double kgb_aten_polygamma(int n, double x)
{
	double f = 1;

	if (n == 0)
		return kgb_aten_digamma(x);
	for (int k = 2; k <= n; k++)
		f *= k;
	return ((n + 1) % 2 == 0 ? 1 : -1) * f * hurwitz_zeta(n + 1, x);
}

/* Modified Bessel function of the first kind, order 0 (power series). */
double kgb_aten_i0(double x)
{
	double q = x * x / 4, term = 1, sum = 1;

	for (int k = 1; k < 500; k++) {
		term *= q / ((double)k * k);
		sum += term;
		if (term < sum * 1e-18)
			break;
	}
	return sum;
}

/* log(1 + exp(x)) without overflow. */
double kgb_aten_softplus(double x)
{
	return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* 1 / (1 + exp(-x)). */
double kgb_aten_sigmoid(double x)
{
	if (x >= 0)
		return 1 / (1 + exp(-x));
	double e = exp(x);
	return e / (1 + e);
}

/* Seeds r from the case index, the input tensors' values and a stream id. */
void kgb_aten_ref_rng(const kgb_case_t *c, const kgb_hostbufs_t *b, uint64_t stream, kgb_rng_t *r)
{
	uint64_t h = kgb_hash64(c->op->name, strlen(c->op->name), c->index * 0x9E3779B97F4A7C15ull + stream);

	for (int i = 0; i < c->ntensors && i < b->n; i++) {
		if (c->t[i].role == KGB_ROLE_OUT || !b->v[i])
			continue;
		h = kgb_hash64(b->v[i], c->t[i].storage * sizeof(double), h);
	}
	kgb_rng_seed(r, h);
}

/* See aten_common.h. The bound stays well below the 5% cap for k <= 8 in bf16, so
 * zeros and constants still fail. */
void kgb_aten_half_intermediates(kgb_case_t *c, int k)
{
	kgb_dtype_t odt = KGB_DT_F32;
	double u;

	for (int i = 0; i < c->ntensors; i++) {
		if (c->t[i].role != KGB_ROLE_IN) {
			odt = c->t[i].dtype;
			break;
		}
	}
	if (odt == KGB_DT_F16)
		u = ldexp(1.0, -11);
	else if (odt == KGB_DT_BF16)
		u = ldexp(1.0, -8);
	else
		return;
	c->atol_rel = KGB_MIN(KGB_MAX(c->atol_rel, k * u), 0.05);
	/* k roundings of terms the size of the element itself: k half steps of its own */
	c->tol_steps = KGB_MAX(c->tol_steps, k / 2.0);
}

kgb_tensor_t *kgb_aten_input(kgb_case_t *c, const char *name, kgb_dtype_t dt, int ndim, const int64_t *dims,
                             char *err, size_t errlen)
{
	return kgb_aten_tensor(c, name, KGB_ROLE_IN, dt, ndim, dims, kgb_case_pstr(c, "layout", NULL), err, errlen);
}

int kgb_aten_reduced_shape(int nd, const int64_t *dims, unsigned mask, bool keep, int64_t *od, double *rlen)
{
	int ond = 0;
	*rlen = 1;
	for (int d = 0; d < nd; d++) {
		if (mask & (1u << d)) {
			*rlen *= (double)dims[d];
			if (keep)
				od[ond++] = 1;
		} else {
			od[ond++] = dims[d];
		}
	}
	return ond;
}

void kgb_aten_softmax_line(const double *x, int64_t sx, double *o, int64_t so, int64_t n)
{
	double m = -INFINITY, s = 0;
	for (int64_t j = 0; j < n; j++)
		m = fmax(m, x[j * sx]);
	for (int64_t j = 0; j < n; j++)
		s += exp(x[j * sx] - m);
	for (int64_t j = 0; j < n; j++)
		o[j * so] = exp(x[j * sx] - m) / s;
}
