/* Helpers shared by the vLLM operator families (vllm_common.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "validate.h"
#include "vllm_common.h"

double *kgb_vllm_buf(const kgb_case_t *c, const kgb_hostbufs_t *b, const char *name)
{
	int i = kgb_case_tensor_index(c, name);
	KGB_ASSERT_MSG(i >= 0, "op %s: no tensor %s", c->op->name, name);
	return b->v[i];
}

const kgb_tensor_t *kgb_vllm_t(const kgb_case_t *c, const char *name)
{
	int i = kgb_case_tensor_index(c, name);
	KGB_ASSERT_MSG(i >= 0, "op %s: no tensor %s", c->op->name, name);
	return &c->t[i];
}

double kgb_vllm_scalar(const kgb_case_t *c, const char *name)
{
	for (int i = 0; i < c->nscalars; i++)
		if (strcmp(c->s[i].name, name) == 0)
			return c->s[i].value;
	KGB_ASSERT_MSG(0, "op %s: no scalar %s", c->op->name, name);
	return 0;
}

int64_t kgb_vllm_randint(kgb_rng_t *r, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (int64_t)(kgb_rng_next(r) % (uint64_t)(hi - lo + 1));
}

void kgb_vllm_perm(kgb_rng_t *r, int64_t *a, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		a[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = kgb_vllm_randint(r, 0, i), t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* Format parameters: exponent bias, mantissa bits, largest finite value. */
static void fp8_fmt(int e5m2, int *bias, int *mbits, double *maxf)
{
	*bias = e5m2 ? 15 : 7;
	*mbits = e5m2 ? 2 : 3;
	*maxf = e5m2 ? 57344.0 : 448.0;
}

double kgb_vllm_fp8_decode(int e5m2, unsigned byte)
{
	int bias, mbits, ebits;
	double maxf, v;
	unsigned s, e, m;
	fp8_fmt(e5m2, &bias, &mbits, &maxf);
	ebits = 7 - mbits;
	byte &= 0xffu;
	s = byte >> 7;
	e = (byte >> mbits) & ((1u << ebits) - 1);
	m = byte & ((1u << mbits) - 1);
	if (!e5m2 && e == 15 && m == 7)
		return NAN;
	if (e5m2 && e == 31)
		return m ? NAN : (s ? -INFINITY : INFINITY);
	if (e == 0)
		v = ldexp((double)m, 1 - bias - mbits);
	else
		v = ldexp((double)((1u << mbits) | m), (int)e - bias - mbits);
	return s ? -v : v;
}

unsigned kgb_vllm_fp8_encode(int e5m2, float f)
{
	int bias, mbits, e;
	double maxf, a, q;
	unsigned s, code;
	fp8_fmt(e5m2, &bias, &mbits, &maxf);
	if (isnan(f))
		return e5m2 ? 0x7fu : 0x7fu;
	s = signbit(f) ? 0x80u : 0;
	a = fabs((double)f);
	if (a > maxf)
		a = maxf;                       /* saturate (SATFINITE) */
	if (a < ldexp(1.0, 1 - bias)) {    /* subnormal range: fixed step */
		q = nearbyint(a / ldexp(1.0, 1 - bias - mbits));
		return s | (unsigned)q;        /* q == 2^mbits is the smallest normal */
	}
	e = ilogb(a);
	q = nearbyint(ldexp(a, mbits - e)); /* in [2^mbits, 2^(mbits+1)] */
	if (q >= (double)(1u << (mbits + 1))) {
		q /= 2;
		e++;
	}
	code = ((unsigned)(e + bias) << mbits) | ((unsigned)q - (1u << mbits));
	return s | code;
}

int64_t kgb_vllm_key_x(kgb_dtype_t cache_dt)
{
	return 16 / (int64_t)kgb_dtype_size(cache_dt);
}

int kgb_vllm_check_mixed(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *out,
                         double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	*max_abs = *max_rel = 0;
	for (int ti = 0; ti < c->ntensors; ti++) {
		const kgb_tensor_t *t = &c->t[ti];
		int64_t idx[KGB_MAX_DIMS] = { 0 };
		bool isf = kgb_dtype_is_float(t->dtype);
		double maxr = 0;
		if (t->role == KGB_ROLE_IN || t->numel == 0)
			continue;
		do {
			double r = kgb_dtype_round(t->dtype, ref->v[ti][kgb_tensor_offset(t, idx)]);
			if (isfinite(r))
				maxr = fmax(maxr, fabs(r));
		} while (kgb_index_next(t, idx));
		memset(idx, 0, sizeof idx);
		do {
			size_t o = kgb_tensor_offset(t, idx);
			double r = kgb_dtype_round(t->dtype, ref->v[ti][o]), g = out->v[ti][o];
			double tol = isf ? fmax(c->atol_rel * maxr, 1e-30) + c->rtol * fabs(r) : 0, d = fabs(g - r);
			bool ok = isnan(r) ? isnan(g) : (!isnan(g) && (isinf(r) || isinf(g) ? g == r : d <= tol));
			if (isf && isfinite(d)) {
				*max_abs = fmax(*max_abs, d);
				if (fabs(r) > 0)
					*max_rel = fmax(*max_rel, d / fabs(r));
			}
			if (!ok) {
				snprintf(msg, msglen, "%s[%zu] = %.9g, expected %.9g (%s)", t->name, o, g, r,
				         isf ? "tolerance" : "exact");
				return KGB_V_WRONG_RESULT;
			}
		} while (kgb_index_next(t, idx));
	}
	if (msglen)
		msg[0] = '\0';
	return KGB_V_PASS;
}
