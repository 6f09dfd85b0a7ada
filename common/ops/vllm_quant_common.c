/* Shared helpers of the vLLM quantisation families: the quantisers and the interval
 * judge (see vllm_quant_common.h). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "validate.h"
#include "vllm_quant_common.h"

/* See vllm_quant_common.h. */
double kgb_vq_quant(kgb_dtype_t dt, double p, double zp)
{
	double m;
	if (isnan(p))
		return p;
	switch (dt) {
	case KGB_DT_I8:
		/* round to an int32 first (saturating), add the zero point, saturate to int8 */
		p = nearbyint(p);
		p = p > 2147483647.0 ? 2147483647.0 : p < -2147483648.0 ? -2147483648.0 : p;
		p += zp;
		return p > 127 ? 127 : p < -128 ? -128 : p;
	case KGB_DT_F8E4M3:
	case KGB_DT_F8E5M2:
		m = dt == KGB_DT_F8E4M3 ? KGB_F8E4M3_MAX : KGB_F8E5M2_MAX;
		p = p > m ? m : p < -m ? -m : p;
		return kgb_dtype_round(dt, p);
	default:
		return kgb_dtype_round(dt, p);
	}
}

/* See vllm_quant_common.h. */
void kgb_vq_judge_init(kgb_vq_judge_t *j, char *msg, size_t msglen)
{
	memset(j, 0, sizeof *j);
	j->verdict = KGB_V_PASS;
	j->msg = msg;
	j->msglen = msglen;
	if (msglen)
		msg[0] = '\0';
}

static void fail(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, const char *fmt,
                 double a, double b)
{
	if (j->nfail++ == 0) {
		char what[96];
		snprintf(what, sizeof what, fmt, a, b);
		snprintf(j->msg, j->msglen, "%s[%zu] = %.9g, expected %s", t->name, flat, got, what);
		j->verdict = KGB_V_WRONG_RESULT;
	}
}

static void track(kgb_vq_judge_t *j, double got, double ref)
{
	double d = fabs(got - ref);
	if (!isfinite(d))
		return;
	j->max_abs = fmax(j->max_abs, d);
	if (ref != 0)
		j->max_rel = fmax(j->max_rel, d / fabs(ref));
}

/* See vllm_quant_common.h. */
void kgb_vq_elem(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, double lo,
                 double hi, double zp)
{
	double a = kgb_vq_quant(t->dtype, lo, zp), b = kgb_vq_quant(t->dtype, hi, zp);
	if (a > b) {
		double s = a;
		a = b;
		b = s;
	}
	track(j, got, got < a ? a : got > b ? b : got);
	if (!(got >= a && got <= b)) {
		if (a == b)
			fail(j, t, flat, got, "%.9g%.0s", a, 0);
		else
			fail(j, t, flat, got, "%.9g or %.9g (value at a rounding tie)", a, b);
	}
}

/* See vllm_quant_common.h. */
void kgb_vq_range(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, double lo,
                  double hi)
{
	track(j, got, got < lo ? lo : got > hi ? hi : got);
	if (!(got >= lo && got <= hi))
		fail(j, t, flat, got, "a value in [%.9g, %.9g]", lo, hi);
}

/* See vllm_quant_common.h. */
void kgb_vq_close(kgb_vq_judge_t *j, const kgb_tensor_t *t, size_t flat, double got, double ref,
                  double rtol)
{
	double tol = rtol * fabs(ref);
	track(j, got, ref);
	if (!(fabs(got - ref) <= tol))
		fail(j, t, flat, got, "%.9g (rtol %.3g)", ref, rtol);
}

/* See vllm_quant_common.h. */
int kgb_vq_judge_done(kgb_vq_judge_t *j, double *max_abs, double *max_rel)
{
	*max_abs = j->max_abs;
	*max_rel = j->max_rel;
	if (j->nfail > 1) {
		size_t l = strlen(j->msg);
		if (l < j->msglen)
			snprintf(j->msg + l, j->msglen - l, "; %zu elements wrong", j->nfail);
	}
	return j->verdict;
}

/* See vllm_quant_common.h. */
const kgb_tensor_t *kgb_vq_t(const kgb_case_t *c, const char *name)
{
	const kgb_tensor_t *t = kgb_case_tensor(c, name);
	KGB_ASSERT_MSG(t != NULL, "op %s: no tensor %s", c->op->name, name);
	return t;
}

/* See vllm_quant_common.h. */
void kgb_vq_default_tol_skip(kgb_case_t *c, const char *skip)
{
	kgb_tensor_t *t = kgb_case_tensor(c, skip);
	kgb_role_t role;
	KGB_ASSERT_MSG(t != NULL, "op %s: no tensor %s", c->op->name, skip);
	role = t->role;
	t->role = KGB_ROLE_IN;
	kgb_case_default_tol(c);
	t->role = role;
}

/* See vllm_quant_common.h. */
double *kgb_vq_v(const kgb_case_t *c, const kgb_hostbufs_t *b, const char *name)
{
	int i = kgb_case_tensor_index(c, name);
	return i < 0 ? NULL : b->v[i];
}

/* See vllm_quant_common.h. */
double kgb_vq_scalar(const kgb_case_t *c, const char *name)
{
	for (int i = 0; i < c->nscalars; i++)
		if (strcmp(c->s[i].name, name) == 0)
			return c->s[i].value;
	return 0;
}

/* See vllm_quant_common.h. */
kgb_tensor_t *kgb_vq_add2(kgb_case_t *c, const char *name, kgb_role_t role, kgb_dtype_t dt, int64_t rows,
                          int64_t cols)
{
	int64_t sh[2] = { rows, cols };
	return kgb_case_add_tensor(c, name, role, dt, cols < 0 ? 1 : 2, sh);
}

/* See vllm_quant_common.h. */
kgb_tensor_t *kgb_vq_words(kgb_tensor_t *t)
{
	t->gen = KGB_GEN_INT;
	t->lo = -2147483648.0;
	t->hi = 2147483647.0;
	return t;
}

/* See vllm_quant_common.h. */
kgb_tensor_t *kgb_vq_uniform(kgb_tensor_t *t, double lo, double hi)
{
	t->gen = KGB_GEN_UNIFORM;
	t->lo = lo;
	t->hi = hi;
	return t;
}

/* See vllm_quant_common.h. */
int kgb_vq_marlin_mkn(const kgb_case_t *c, int64_t mkn[3], int64_t *bits, char *err, size_t errlen)
{
	const kgb_pval_t *p = kgb_case_param(c, "mkn");
	*bits = kgb_case_pint(c, "bits", 4);
	if (!p || p->kind != KGB_PV_SHAPE || p->ndim != 3 || (*bits != 4 && *bits != 8))
		return kgb_err(err, errlen, "op %s case %u: mkn must be [M,K,N] and bits 4 or 8", c->op->name,
		               c->index);
	memcpy(mkn, p->dims, 3 * sizeof *mkn);
	return 0;
}

/* See vllm_quant_common.h. */
void kgb_vq_marlin_out(kgb_case_t *c, int64_t bits, int64_t M, int64_t N, int64_t K, double reduce_len)
{
	kgb_case_add_scalar(c, "num_bits", KGB_DT_I64, (double)bits);
	kgb_case_add_scalar(c, "size_m", KGB_DT_I64, (double)M);
	kgb_case_add_scalar(c, "size_n", KGB_DT_I64, (double)N);
	kgb_case_add_scalar(c, "size_k", KGB_DT_I64, (double)K);
	kgb_vq_add2(c, "out", KGB_ROLE_OUT, KGB_DT_F16, M, N);
	c->reduce_len = reduce_len;
	kgb_vq_default_tol_skip(c, "workspace"); /* out's fp16 tolerance */
}

/* See vllm_quant_common.h. */
void kgb_vq_matmul(const double *a, const double *w, double *out, size_t M, size_t K, size_t N)
{
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0, a, (int)K, w, (int)N, 0.0,
	            out, (int)N);
}

/* See vllm_quant_common.h. */
kgb_dtype_t kgb_vq_pdtype(const kgb_case_t *c, const char *param, kgb_dtype_t dflt)
{
	const char *s = kgb_case_pstr(c, param, NULL);
	kgb_dtype_t dt;
	if (!s)
		return dflt;
	KGB_ASSERT_MSG(kgb_dtype_parse(s, &dt) == 0, "op %s: parameter %s: bad dtype '%s'", c->op->name,
	               param, s);
	return dt;
}

/* See vllm_quant_common.h. */
bool kgb_vq_pis(const kgb_case_t *c, const char *param, const char *v)
{
	return strcmp(kgb_case_pstr(c, param, ""), v) == 0;
}
