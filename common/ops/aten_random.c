/* ATen random operators: bernoulli, poisson, exponential_ and rrelu_with_noise.
 *
 * A kernel's samples cannot equal the reference's, so these operators are judged by
 * op->check: hard rules first (the support of the distribution, elements whose value
 * is determined, consistency between outputs), then distribution tests whose total
 * false-failure rate is at most KGB_RANDOM_ALPHA (1e-6) per case for a correct sampler.
 * Every test uses a bound that holds for any sample size (Bernstein, Chernoff, the
 * Dvoretzky-Kiefer-Wolfowitz inequality), not a normal approximation, so the rate is
 * guaranteed for small tensors too; the one approximate test (the Poisson dispersion)
 * runs only on 1000 samples or more and uses a 6-sigma bar. Samples are compared with
 * the distribution rounded to the output dtype (the KS test uses each value's rounding
 * interval), so fp16/bf16 rounding is not mistaken for a wrong distribution.
 *
 * The reference is a valid sample drawn in double from a generator keyed by the case
 * and its inputs (kgb_aten_ref_rng): the self-test's "reference passes" and mutants
 * (zeros, a constant, NaN, half unwritten) exercise the checks. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aten_common.h"
#include "validate.h"

#define KGB_RANDOM_ALPHA 1e-6

/* ---- shared statistics ---- */

/* Precision (significand bits, implicit one included) of a float dtype. */
static int dt_prec(kgb_dtype_t dt)
{
	switch (dt) {
	case KGB_DT_F16: return 11;
	case KGB_DT_BF16: return 8;
	case KGB_DT_F64: return 53;
	default: return 24;
	}
}

/* Exponent of the smallest positive (subnormal) value of a float dtype. */
static int dt_min_exp(kgb_dtype_t dt)
{
	switch (dt) {
	case KGB_DT_F16: return -24;
	case KGB_DT_BF16: return -133;
	case KGB_DT_F64: return -1074;
	default: return -149;
	}
}

/* The interval [lo, hi] of reals that round to v (v >= 0) in dtype dt. */
static void round_interval(kgb_dtype_t dt, double v, double *lo, double *hi)
{
	int e, p = dt_prec(dt);
	double m, ulp, ulp_below, minsub = ldexp(1.0, dt_min_exp(dt));

	if (v <= 0) {
		*lo = 0;
		*hi = minsub / 2;
		return;
	}
	m = frexp(v, &e);                      /* v = m 2^e, m in [0.5, 1) */
	ulp = fmax(ldexp(1.0, e - p), minsub);
	ulp_below = (m == 0.5) ? fmax(ulp / 2, minsub) : ulp;
	*lo = v - ulp_below / 2;
	*hi = v + ulp / 2;
}

typedef double (*cdf_fn)(double x, double a, double b);

static double cdf_exponential(double x, double lambd, double unused)
{
	(void)unused;
	return x <= 0 ? 0 : -expm1(-lambd * x);
}

static double cdf_uniform(double x, double lo, double hi)
{
	if (x <= lo)
		return 0;
	return x >= hi ? 1 : (x - lo) / (hi - lo);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One step of the KS sweep: `cnt` samples equal to v after `below` smaller ones. */
static double ks_step(double d, double v, size_t below, size_t cnt, size_t n, kgb_dtype_t dt, cdf_fn F,
                      double a, double b)
{
	double lo, hi;

	round_interval(dt, v, &lo, &hi);
	d = fmax(d, fabs((double)below / (double)n - F(lo, a, b)));
	return fmax(d, fabs((double)(below + cnt) / (double)n - F(hi, a, b)));
}

/* Kolmogorov-Smirnov distance between the n samples s (all >= 0 and values of dtype
 * dt; s is reordered) and the distribution F rounded to dt. 16-bit dtypes count bit
 * patterns (the order of non-negative values), f32 radix-sorts its bit patterns. */
static double ks_distance(double *s, size_t n, kgb_dtype_t dt, cdf_fn F, double a, double b)
{
	double d = 0;
	size_t i = 0;

	if (dt == KGB_DT_F16 || dt == KGB_DT_BF16) {
		size_t *cnt = kgb_xcalloc(65536, sizeof *cnt), below = 0;
		for (size_t k = 0; k < n; k++)
			cnt[dt == KGB_DT_F16 ? kgb_f32_to_f16((float)s[k]) : kgb_f32_to_bf16((float)s[k])]++;
		for (uint32_t h = 0; h < 32768; h++) {
			if (!cnt[h])
				continue;
			double v = dt == KGB_DT_F16 ? kgb_f16_to_f32((uint16_t)h) : kgb_bf16_to_f32((uint16_t)h);
			d = ks_step(d, v, below, cnt[h], n, dt, F, a, b);
			below += cnt[h];
		}
		free(cnt);
		return d;
	}
	if (dt == KGB_DT_F32) {
		uint32_t *k1 = kgb_xmalloc(n * sizeof *k1), *k2 = kgb_xmalloc(n * sizeof *k2), *t;
		for (size_t k = 0; k < n; k++) {
			float f = (float)s[k];
			memcpy(&k1[k], &f, sizeof f);
		}
		for (int pass = 0; pass < 4; pass++) {
			size_t pos[257] = { 0 };
			int sh = 8 * pass;
			for (size_t k = 0; k < n; k++)
				pos[((k1[k] >> sh) & 0xFF) + 1]++;
			for (int q = 0; q < 256; q++)
				pos[q + 1] += pos[q];
			for (size_t k = 0; k < n; k++)
				k2[pos[(k1[k] >> sh) & 0xFF]++] = k1[k];
			t = k1;
			k1 = k2;
			k2 = t;
		}
		for (size_t k = 0; k < n; k++) {
			float f;
			memcpy(&f, &k1[k], sizeof f);
			s[k] = f;
		}
		free(k1);
		free(k2);
	} else {
		qsort(s, n, sizeof *s, cmp_double);
	}
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] == s[i])
			j++;
		d = ks_step(d, s[i], i, j - i, n, dt, F, a, b);
		i = j;
	}
	return d;
}

/* Kolmogorov-Smirnov distance between the n fp16/bf16 samples s (positive) and the
 * law of round(round(u) * (hi - lo) + lo), u ~ U(0, 1): the draw rounded to the dtype
 * before it is scaled (each of the dtype's values q in [0, 1] carries the length of
 * the reals that round to it), the scaling in fp32, the result rounded again. Both
 * laws are discrete on the dtype's values, so the CDFs are compared after each. */
static double ks_distance_rounded_draw(const double *s, size_t n, kgb_dtype_t dt, double lo, double hi)
{
	double *mass = kgb_xcalloc(65536, sizeof *mass), d = 0, cm = 0;
	size_t *cnt = kgb_xcalloc(65536, sizeof *cnt), ce = 0;
	bool f16 = dt == KGB_DT_F16;
	uint16_t one = f16 ? 0x3C00 : 0x3F80;

	for (uint32_t h = 0; h <= one; h++) {
		double q = f16 ? kgb_f16_to_f32((uint16_t)h) : kgb_bf16_to_f32((uint16_t)h), a, b;
		round_interval(dt, q, &a, &b);
		a = fmax(a, 0);
		b = fmin(b, 1);
		if (b <= a)
			continue;
		float r = (float)q * (float)(hi - lo) + (float)lo;
		mass[f16 ? kgb_f32_to_f16(r) : kgb_f32_to_bf16(r)] += b - a;
	}
	for (size_t k = 0; k < n; k++)
		cnt[f16 ? kgb_f32_to_f16((float)s[k]) : kgb_f32_to_bf16((float)s[k])]++;
	for (uint32_t h = 0; h < 32768; h++) {
		if (!cnt[h] && mass[h] == 0)
			continue;
		ce += cnt[h];
		cm += mass[h];
		d = fmax(d, fabs((double)ce / (double)n - cm));
	}
	free(mass);
	free(cnt);
	return d;
}

/* DKW: P(KS distance >= d) <= 2 exp(-2 n d^2) for any n. */
static double dkw_bound(size_t n, double d)
{
	return fmin(1.0, 2 * exp(-2.0 * (double)n * d * d));
}

/* Chernoff bound on P(S deviates from its mean mu as far as s) for S a sum of
 * independent Bernoulli or Poisson variables (one tail; same formula both sides). */
static double chernoff_count(double s, double mu)
{
	double lb;

	if (mu <= 0)
		return s <= 0 ? 1.0 : 0.0;
	if (s <= 0)
		return exp(-mu);
	lb = s - mu + s * log(mu / s);
	return fmin(1.0, exp(lb));
}

/* Chernoff bound for the mean of n Exp(lambd) samples (Gamma sum), one tail. */
static double chernoff_gamma(double mean, double lambd, size_t n)
{
	double r = mean * lambd;

	if (r <= 0)
		return 0;
	return fmin(1.0, exp(-(double)n * (r - 1 - log(r))));
}

/* Bernstein bound on P(|S - mu| >= t) for a sum of independent variables in [0, 1]
 * with total variance var. */
static double bernstein(double t, double var)
{
	t = fabs(t);
	if (t == 0)
		return 1.0;
	return fmin(1.0, 2 * exp(-t * t / (2 * (var + t / 3))));
}

static int fail(char *msg, size_t msglen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return KGB_V_WRONG_RESULT;
}

static void no_stats(double *max_abs, double *max_rel)
{
	if (max_abs)
		*max_abs = 0;
	if (max_rel)
		*max_rel = 0;
}

/* Poisson(lambda) sample: inversion for small lambda, PTRS (Hoermann 1993) above. */
static double sample_poisson(kgb_rng_t *r, double lam)
{
	if (lam <= 0)
		return 0;
	if (lam < 10) {
		double u = kgb_rng_uniform(r), p = exp(-lam), f = p;
		int k = 0;
		while (u > f && k < 1000) {
			k++;
			p *= lam / k;
			f += p;
		}
		return k;
	}
	{
		double slam = sqrt(lam), loglam = log(lam);
		double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
		double inva = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
		for (;;) {
			double u = kgb_rng_uniform(r) - 0.5, v = kgb_rng_uniform(r);
			double us = 0.5 - fabs(u), k = floor((2 * a / us + b) * u + lam + 0.43);
			if (us >= 0.07 && v <= vr)
				return k;
			if (k < 0 || (us < 0.013 && v > us))
				continue;
			if (log(v) + log(inva) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1))
				return k;
		}
	}
}

/* Common setup: "self" of shape/dtype/layout, generated by gen on [lo, hi]. */
static kgb_tensor_t *self_tensor(kgb_case_t *c, kgb_role_t role, int64_t *dims, int *nd, char *err,
                                 size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);

	*nd = kgb_aten_shape(c, "shape", dims);
	return kgb_aten_tensor(c, "self", role, dt, *nd, dims, kgb_case_pstr(c, "layout", NULL), err, errlen);
}

/* ---- bernoulli ---- */

/* Small tensors get probabilities of exactly 0 or 1 (their outputs are determined);
 * larger ones get 10% of them. */
#define BERN_SMALL 64

static int setup_bernoulli(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t dims[KGB_MAX_DIMS];
	int nd;
	kgb_tensor_t *x = self_tensor(c, KGB_ROLE_IN, dims, &nd, err, errlen);
	bool scalar = strcmp(kgb_case_pstr(c, "mode", "tensor"), "scalar") == 0;

	if (!x)
		return -1;
	kgb_aten_gen(x, KGB_GEN_UNIFORM, 0.02, 0.98);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, x->dtype, nd, dims);
	c->iparam[0] = scalar;
	if (scalar) {
		double p = kgb_case_pfloat(c, "p", 0.5);
		if (!(p > 0 && p < 1))
			return kgb_err(err, errlen, "op bernoulli: parameter p: %g is not in (0, 1)", p);
		kgb_case_add_scalar(c, "p", KGB_DT_F32, p);
	}
	kgb_case_set_sym(c, "scalar_p", scalar);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static void gen_bernoulli(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	if (c->iparam[0] || x->numel == 0)
		return;
	do {
		double u = kgb_rng_uniform(rng);
		if (x->numel < BERN_SMALL || u < 0.1)
			b->v[0][kgb_tensor_offset(x, idx)] = kgb_rng_uniform(rng) < 0.5 ? 0.0 : 1.0;
	} while (kgb_index_next(x, idx));
}

static double bern_p(const kgb_case_t *c, const kgb_hostbufs_t *in, const int64_t *idx)
{
	return c->iparam[0] ? c->s[0].value : in->v[0][kgb_tensor_offset(&c->t[0], idx)];
}

static int ref_bernoulli(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *o = &c->t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	kgb_rng_t r;

	if (o->numel == 0)
		return 0;
	kgb_aten_ref_rng(c, b, 1, &r);
	do
		b->v[1][kgb_tensor_offset(o, idx)] = kgb_rng_uniform(&r) < bern_p(c, b, idx) ? 1.0 : 0.0;
	while (kgb_index_next(o, idx));
	return 0;
}

/* Values in {0, 1}; p = 0 gives 0 and p = 1 gives 1; in each of 4 bins of p, the
 * count of ones is within the Bernstein bound of sum(p) at alpha / 4. */
static int check_bernoulli(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                           double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *o = &c->t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double s[4] = { 0 }, mu[4] = { 0 }, var[4] = { 0 };
	size_t flat = 0;

	no_stats(max_abs, max_rel);
	if (o->numel == 0)
		return KGB_V_PASS;
	do {
		double p = bern_p(c, in, idx), v = out->v[1][kgb_tensor_offset(o, idx)];
		int bin = p < 0.25 ? 0 : p < 0.5 ? 1 : p < 0.75 ? 2 : 3;
		if (!(v == 0 || v == 1))
			return fail(msg, msglen, "out[%zu] = %.9g is not 0 or 1", flat, v);
		if ((p == 0 && v != 0) || (p == 1 && v != 1))
			return fail(msg, msglen, "out[%zu] = %g but p = %g", flat, v, p);
		s[bin] += v;
		mu[bin] += p;
		var[bin] += p * (1 - p);
		flat++;
	} while (kgb_index_next(o, idx));
	for (int k = 0; k < 4; k++) {
		double pb = bernstein(s[k] - mu[k], var[k]);
		if (var[k] > 0 && pb < KGB_RANDOM_ALPHA / 4)
			return fail(msg, msglen, "p in [%.2f, %.2f): %.0f ones where sum(p) = %.1f (variance %.1f): "
			            "probability bound %.2g < %.2g", k * 0.25, (k + 1) * 0.25, s[k], mu[k], var[k], pb,
			            KGB_RANDOM_ALPHA / 4);
	}
	return KGB_V_PASS;
}

#define R_BIG "[1000] [33,65] [7,9,17] [3,4,5,6,7] [256,1024] [16,64,4096]"

static const kgb_op_t op_bernoulli = {
	.name = "bernoulli",
	.source = "aten",
	.category = "random",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out[i] = 1 with probability p, else 0, independently per element; p = self[i] "
	           "(bernoulli(self), self holds probabilities in [0, 1]) or the scalar p (bernoulli.p: "
	           "self gives only the shape); out has self's shape and dtype",
	.signature = "self:in p:f32? out:out",
	.grids = {
		{ { { "shape", "[] [1] [7] " R_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "mode", "tensor" } } },
		{ { { "shape", R_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "mode", "scalar" },
		    { "p", "0.5 0.1 0.9" } } },
		{ { { "shape", "[33,65] [3,4,5,6,7] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "mode", "tensor" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_bernoulli,
	.ref = ref_bernoulli,
	.check = check_bernoulli,
	.declared_cases = 90,
	.deviation = "statistical check (Bernstein bound per bin of p, false-failure rate <= 1e-6) instead of "
	             "the public mean-only tolerance; p = 0 and p = 1 elements must be exact",
	.gen_inputs = gen_bernoulli,
};

/* ---- poisson ---- */

static int setup_poisson(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t dims[KGB_MAX_DIMS];
	int nd;
	kgb_tensor_t *x = self_tensor(c, KGB_ROLE_IN, dims, &nd, err, errlen);
	const char *rate = kgb_case_pstr(c, "rate", "mixed");

	if (!x)
		return -1;
	if (strcmp(rate, "big") == 0)
		kgb_aten_gen(x, KGB_GEN_UNIFORM, 150, 250);
	else if (strcmp(rate, "mixed") == 0)
		kgb_aten_gen(x, KGB_GEN_UNIFORM, 0, 30);
	else
		return kgb_err(err, errlen, "op poisson: parameter rate: unknown value '%s'", rate);
	c->iparam[0] = strcmp(rate, "mixed") == 0;
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, x->dtype, nd, dims);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

/* "mixed" rates: 5% exactly 0 (their samples must be 0), some below 1. */
static void gen_poisson(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	if (!c->iparam[0] || x->numel == 0)
		return;
	do {
		double u = kgb_rng_uniform(rng);
		size_t off = kgb_tensor_offset(x, idx);
		if (u < 0.05)
			b->v[0][off] = 0;
		else if (u < 0.2)
			b->v[0][off] = kgb_rng_uniform(rng);
	} while (kgb_index_next(x, idx));
}

static int ref_poisson(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *o = &c->t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	kgb_rng_t r;

	if (o->numel == 0)
		return 0;
	kgb_aten_ref_rng(c, b, 2, &r);
	do
		b->v[1][kgb_tensor_offset(o, idx)] = sample_poisson(&r, b->v[0][kgb_tensor_offset(x, idx)]);
	while (kgb_index_next(o, idx));
	return 0;
}

/* Non-negative integers; rate 0 gives 0; the total is within the Chernoff bound of
 * sum(lambda) (alpha / 2); with 1000 or more positive rates, the dispersion
 * sum((x - lambda)^2 / lambda) (mean n, variance sum(2 + 1/lambda)) within 6 sigma. */
static int check_poisson(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                         double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = &c->t[0], *o = &c->t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double s = 0, mu = 0, disp = 0, dvar = 0, pb, z;
	size_t flat = 0, npos = 0;

	no_stats(max_abs, max_rel);
	if (o->numel == 0)
		return KGB_V_PASS;
	do {
		double lam = in->v[0][kgb_tensor_offset(x, idx)], v = out->v[1][kgb_tensor_offset(o, idx)];
		if (!(v >= 0 && isfinite(v) && v == floor(v)))
			return fail(msg, msglen, "out[%zu] = %.9g is not a non-negative integer", flat, v);
		if (lam == 0 && v != 0)
			return fail(msg, msglen, "out[%zu] = %g but its rate is 0", flat, v);
		s += v;
		mu += lam;
		if (lam > 0) {
			disp += (v - lam) * (v - lam) / lam;
			dvar += 2 + 1 / lam;
			npos++;
		}
		flat++;
	} while (kgb_index_next(o, idx));
	pb = chernoff_count(s, mu);
	if (pb < KGB_RANDOM_ALPHA / 2)
		return fail(msg, msglen, "sum of samples %.0f where sum(lambda) = %.1f: probability bound %.2g < %.2g",
		            s, mu, pb, KGB_RANDOM_ALPHA / 2);
	if (npos >= 1000) {
		z = (disp - (double)npos) / sqrt(dvar);
		if (fabs(z) > 6)
			return fail(msg, msglen, "dispersion sum((x-lambda)^2/lambda) = %.1f over %zu samples "
			            "(expected %zu): %.1f sigma", disp, npos, npos, z);
	}
	return KGB_V_PASS;
}

static const kgb_op_t op_poisson = {
	.name = "poisson",
	.source = "aten",
	.category = "random",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out[i] = a Poisson(self[i]) sample (self holds rates >= 0; rate 0 gives 0), "
	           "independently per element; out has self's shape and dtype",
	.signature = "self:in out:out",
	.grids = {
		{ { { "shape", R_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "rate", "mixed big" } } },
		{ { { "shape", "[] [1]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "rate", "big" } } },
		{ { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "rate", "mixed" },
		    { "layout", "transposed strided" } } },
	},
	.setup = setup_poisson,
	.ref = ref_poisson,
	.check = check_poisson,
	.declared_cases = 36,
	.deviation = "statistical check (Chernoff bound on the total, dispersion test; false-failure rate "
	             "<= 1e-6); rates of 0 must give 0; adds non-contiguous inputs",
	.gen_inputs = gen_poisson,
};

/* ---- exponential_ ---- */

static int setup_exponential(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t dims[KGB_MAX_DIMS];
	int nd;
	kgb_tensor_t *x = self_tensor(c, KGB_ROLE_INOUT, dims, &nd, err, errlen);
	double lambd = kgb_case_pfloat(c, "lambd", 1.0);

	if (!x)
		return -1;
	if (!(lambd > 0 && lambd <= 10))
		return kgb_err(err, errlen, "op exponential_: parameter lambd: %g is not in (0, 10]", lambd);
	/* the old contents are irrelevant; negative ones make unwritten elements visible */
	kgb_aten_gen(x, KGB_GEN_UNIFORM, -2, -1);
	kgb_case_add_scalar(c, "lambd", KGB_DT_F32, lambd);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_exponential(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double lambd = c->s[0].value;
	kgb_rng_t r;

	if (x->numel == 0)
		return 0;
	kgb_aten_ref_rng(c, b, 3, &r);
	do {
		double v;
		do
			v = kgb_dtype_round(x->dtype, -log1p(-kgb_rng_uniform(&r)) / lambd);
		while (v <= 0);                   /* a zero is outside the support */
		b->v[0][kgb_tensor_offset(x, idx)] = v;
	} while (kgb_index_next(x, idx));
	return 0;
}

/* Values finite and >= 0; zeros no more often than a sampler that maps the top of its
 * uniform range or an underflow to 0 would give (rate 2^-24 + P(X < half the smallest
 * subnormal)), Chernoff at alpha / 4; mean within the Gamma Chernoff bound (alpha / 4);
 * KS distance to Exp(lambd) rounded to the dtype within the DKW bound (alpha / 2). */
static int check_exponential(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                             double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = &c->t[0];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double lambd = c->s[0].value, sum = 0, *s, q, pb, d;
	size_t n = x->numel, k = 0, zeros = 0;
	int rc = KGB_V_PASS;

	(void)in;
	no_stats(max_abs, max_rel);
	if (n == 0)
		return KGB_V_PASS;
	s = kgb_xmalloc(n * sizeof *s);
	do {
		double v = out->v[0][kgb_tensor_offset(x, idx)];
		if (!(v >= 0 && isfinite(v))) {
			rc = fail(msg, msglen, "self[%zu] = %.9g is not a finite value >= 0", k, v);
			goto out;
		}
		zeros += v == 0;
		sum += v;
		s[k++] = v == 0 ? 0.0 : v;         /* -0 counts as 0 */
	} while (kgb_index_next(x, idx));
	q = ldexp(1.0, -24) + cdf_exponential(ldexp(1.0, dt_min_exp(x->dtype) - 1), lambd, 0);
	if (zeros && (pb = chernoff_count((double)zeros, q * (double)n)) < KGB_RANDOM_ALPHA / 4) {
		rc = fail(msg, msglen, "%zu of %zu values are 0 (expected at most about %.2g): probability "
		          "bound %.2g", zeros, n, q * (double)n, pb);
		goto out;
	}
	pb = chernoff_gamma(sum / (double)n, lambd, n);
	if (pb < KGB_RANDOM_ALPHA / 4) {
		rc = fail(msg, msglen, "mean %.6g, expected 1/lambd = %.6g over %zu values: probability bound %.2g",
		          sum / (double)n, 1 / lambd, n, pb);
		goto out;
	}
	d = ks_distance(s, n, x->dtype, cdf_exponential, lambd, 0);
	pb = dkw_bound(n, d);
	if (max_abs)
		*max_abs = d;
	if (pb < KGB_RANDOM_ALPHA / 2)
		rc = fail(msg, msglen, "KS distance %.4g to Exp(%g) over %zu values: probability bound %.2g",
		          d, lambd, n, pb);
out:
	free(s);
	return rc;
}

static const kgb_op_t op_exponential = {
	.name = "exponential_",
	.source = "aten",
	.category = "random",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "in place: every element of self (its old value ignored) becomes an independent "
	           "Exp(lambd) sample (density lambd exp(-lambd x), x > 0; mean 1/lambd)",
	.signature = "self:inout lambd:f32",
	.grids = {
		{ { { "shape", "[] [1] " R_BIG }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "lambd", "1 0.5 4" } } },
		{ { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "lambd", "1" },
		    { "layout", "transposed strided" } } },
	},
	.setup = setup_exponential,
	.ref = ref_exponential,
	.check = check_exponential,
	.inplace = true,
	.declared_cases = 0,
	.deviation = "the public suite has no test; kgb checks support, mean (Chernoff) and the whole "
	             "distribution (KS with the DKW bound), false-failure rate <= 1e-6",
};

/* ---- rrelu_with_noise ---- */

static int setup_rrelu(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t dims[KGB_MAX_DIMS];
	int nd;
	kgb_tensor_t *x = self_tensor(c, KGB_ROLE_IN, dims, &nd, err, errlen), *nz;
	const char *bounds = kgb_case_pstr(c, "bounds", "default");
	bool training = kgb_case_pint(c, "training", 1) != 0;
	double lo, hi;

	if (!x)
		return -1;
	if (strcmp(bounds, "default") == 0) {
		lo = 1.0 / 8;
		hi = 1.0 / 3;
	} else if (strcmp(bounds, "wide") == 0) {
		lo = 0.1;
		hi = 0.9;
	} else {
		return kgb_err(err, errlen, "op rrelu_with_noise: parameter bounds: unknown value '%s'", bounds);
	}
	kgb_aten_gen(x, KGB_GEN_UNIFORM, -1, 1);
	nz = kgb_case_add_tensor(c, "noise", KGB_ROLE_INOUT, x->dtype, nd, dims);
	kgb_aten_gen(nz, KGB_GEN_UNIFORM, -3, -2);  /* never a valid noise value */
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, x->dtype, nd, dims);
	kgb_case_add_scalar(c, "lower", KGB_DT_F32, lo);
	kgb_case_add_scalar(c, "upper", KGB_DT_F32, hi);
	kgb_case_add_scalar(c, "training", KGB_DT_I32, training);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_rrelu(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *nz = &c->t[1], *o = &c->t[2];
	double lo = c->s[0].value, hi = c->s[1].value;
	bool training = c->s[2].value != 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	kgb_rng_t r;

	if (x->numel == 0)
		return 0;
	kgb_aten_ref_rng(c, b, 4, &r);
	do {
		double v = b->v[0][kgb_tensor_offset(x, idx)];
		size_t on = kgb_tensor_offset(nz, idx), oo = kgb_tensor_offset(o, idx);
		if (!training) {
			b->v[2][oo] = v > 0 ? v : v * ((lo + hi) / 2);
		} else if (v <= 0) {
			double a = kgb_dtype_round(nz->dtype, lo + (hi - lo) * kgb_rng_uniform(&r));
			b->v[1][on] = a;
			b->v[2][oo] = v * a;
		} else {
			b->v[1][on] = 1;
			b->v[2][oo] = v;
		}
	} while (kgb_index_next(x, idx));
	return 0;
}

/* Training: x > 0 gives noise 1 and out = x exactly; x <= 0 gives noise in
 * [lower, upper] (within one ulp of the dtype) and out = x * noise (within 2 ulp and
 * the smallest subnormal);
 * the noise of the negative elements passes the DKW bound against U(lower, upper)
 * rounded to the dtype (alpha). Eval: noise unchanged, out = leaky_relu(x, (lower +
 * upper) / 2) within the default tolerance. */
static int check_rrelu(const kgb_case_t *c, const kgb_hostbufs_t *in, const kgb_hostbufs_t *out,
                       double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *x = &c->t[0], *nz = &c->t[1], *o = &c->t[2];
	double lo = c->s[0].value, hi = c->s[1].value, eps = ldexp(1.0, 1 - dt_prec(x->dtype));
	double tiny = ldexp(1.0, dt_min_exp(x->dtype));
	bool training = c->s[2].value != 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	size_t n = x->numel, k = 0, nneg = 0;
	double *s = NULL, maxref = 0;
	int rc = KGB_V_PASS;

	no_stats(max_abs, max_rel);
	if (n == 0)
		return KGB_V_PASS;
	if (!training) {
		do {
			double v = in->v[0][kgb_tensor_offset(x, idx)];
			maxref = fmax(maxref, fabs(v > 0 ? v : v * (lo + hi) / 2));
		} while (kgb_index_next(x, idx));
	} else {
		s = kgb_xmalloc(n * sizeof *s);
	}
	do {
		double v = in->v[0][kgb_tensor_offset(x, idx)];
		double a = out->v[1][kgb_tensor_offset(nz, idx)], y = out->v[2][kgb_tensor_offset(o, idx)];
		if (!training) {
			double want = v > 0 ? v : v * ((lo + hi) / 2), tol = c->atol_rel * maxref + c->rtol * fabs(want);
			double a0 = in->v[1][kgb_tensor_offset(nz, idx)];
			if (!(a == a0))
				rc = fail(msg, msglen, "noise[%zu] = %.9g changed (was %.9g) with training = false", k, a, a0);
			else if (!(fabs(y - want) <= tol))
				rc = fail(msg, msglen, "out[%zu] = %.9g, expected %.9g (tol %.3g)", k, y, want, tol);
		} else if (v > 0 || (v == 0 && a == 1)) {
			if (!(a == 1))
				rc = fail(msg, msglen, "noise[%zu] = %.9g for self = %.9g > 0 (must be 1)", k, a, v);
			else if (!(y == v))
				rc = fail(msg, msglen, "out[%zu] = %.9g for self = %.9g > 0 (must equal self)", k, y, v);
		} else {
			double slack = eps * hi;
			if (!(a >= lo - slack && a <= hi + slack))
				rc = fail(msg, msglen, "noise[%zu] = %.9g for self = %.9g <= 0 is outside [%g, %g]", k, a, v,
				          lo, hi);
			else if (!(fabs(y - v * a) <= 2 * eps * fabs(v * a) + tiny))
				rc = fail(msg, msglen, "out[%zu] = %.9g but self * noise = %.9g", k, y, v * a);
			else if (v < 0)
				s[nneg++] = a;
		}
		if (rc != KGB_V_PASS)
			goto out;
		k++;
	} while (kgb_index_next(x, idx));
	if (training && nneg > 0) {
		/* noise values below lower (rounding) count as lower for the KS test */
		double d = ks_distance(s, nneg, x->dtype, cdf_uniform, lo, hi), pb = dkw_bound(nneg, d);
		/* PyTorch's CUDA kernel rounds its uniform draw to fp16/bf16 before scaling it
		 * to [lower, upper]: a distribution that two million bf16 samples tell apart
		 * from rounded U(lower, upper) (KS 0.0023 on the H200). Either is faithful. */
		if (pb < KGB_RANDOM_ALPHA && (x->dtype == KGB_DT_F16 || x->dtype == KGB_DT_BF16)) {
			double d2 = ks_distance_rounded_draw(s, nneg, x->dtype, lo, hi);
			if (d2 < d)
				d = d2, pb = dkw_bound(nneg, d2);
		}
		if (max_abs)
			*max_abs = d;
		if (pb < KGB_RANDOM_ALPHA)
			rc = fail(msg, msglen, "noise of the %zu negative elements: KS distance %.4g to U(%g, %g) "
			          "(either drawn in fp32 or rounded to %s before scaling): probability bound %.2g", nneg, d,
			          lo, hi, kgb_dtype_name(x->dtype), pb);
	}
out:
	free(s);
	return rc;
}

static const kgb_op_t op_rrelu = {
	.name = "rrelu_with_noise",
	.source = "aten",
	.category = "random",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "training: for self[i] <= 0 draw a ~ U(lower, upper), noise[i] = a, out[i] = self[i] * a; "
	           "for self[i] > 0 noise[i] = 1, out[i] = self[i]. training = 0: out = self > 0 ? self : "
	           "self * (lower + upper) / 2 and noise is left unchanged",
	.signature = "self:in noise:inout out:out lower:f32 upper:f32 training:i32",
	.grids = {
		{ { { "shape", "[] [1] [1000] [33,65] [2,3,4,5,6] [256,1024] [16,64,4096]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "bounds", "default wide" }, { "training", "1 0" } } },
		{ { { "shape", "[33,65] [1024,1024]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "bounds", "default" },
		    { "training", "1" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_rrelu,
	.ref = ref_rrelu,
	.check = check_rrelu,
	.inplace = true,
	.declared_cases = 72,
	.deviation = "training mode checked statistically (noise consistent with out, KS/DKW test of the noise "
	             "against U(lower, upper), false-failure rate <= 1e-6); adds non-contiguous inputs",
};

const kgb_op_t *const kgb_ops_aten_random[] = {
	&op_bernoulli, &op_poisson, &op_exponential, &op_rrelu, NULL,
};
