/* The validator: turns the raw bytes a kernel left in its buffers into a verdict
 * (see validate.h for the order of precedence). Everything here is pure host code,
 * shared by every backend and by the catalog self-test. */
#include "validate.h"

#include <math.h>
#include <string.h>

static const char *const verdict_names[KGB_V__COUNT] = {
	[KGB_V_UNSPECIFIED] = "unspecified",
	[KGB_V_PASS] = "pass",
	[KGB_V_COMPILE_ERROR] = "compile_error",
	[KGB_V_LAUNCH_ERROR] = "launch_error",
	[KGB_V_CRASH] = "crash",
	[KGB_V_TIMEOUT] = "timeout",
	[KGB_V_WRONG_RESULT] = "wrong_result",
	[KGB_V_UNWRITTEN_OUTPUT] = "unwritten_output",
	[KGB_V_OUT_OF_BOUNDS_WRITE] = "out_of_bounds_write",
	[KGB_V_INPUT_MODIFIED] = "input_modified",
	[KGB_V_NONDETERMINISTIC] = "nondeterministic",
	[KGB_V_ILLEGAL_ADDRESS] = "illegal_address",
	[KGB_V_RESOURCE_ERROR] = "resource_error",
	[KGB_V_PLAN_ERROR] = "plan_error",
	[KGB_V_NOT_RUN] = "not_run",
	[KGB_V_INFRA_ERROR] = "infra_error",
	[KGB_V_UNSUPPORTED] = "unsupported",
	[KGB_V_HOST_COMPUTE] = "host_compute",
	[KGB_V_NO_LAUNCH] = "no_launch",
	[KGB_V_HOST_SYNC] = "host_sync",
	[KGB_V_FOREIGN_POINTER] = "foreign_pointer",
	[KGB_V_IMPORT_ERROR] = "import_error",
	[KGB_V_OVERFIT] = "overfit",
	[KGB_V_STALE_RESULT] = "stale_result",
};

/* Name of verdict v ("pass", "wrong_result", ...); "unknown" outside the enum. */
const char *kgb_verdict_name(int v)
{
	if (v < 0 || v >= KGB_V__COUNT || !verdict_names[v])
		return "unknown";
	return verdict_names[v];
}

/* Verdict code for a name, or -1. */
int kgb_verdict_parse(const char *s)
{
	if (!s)
		return -1;
	for (int v = 0; v < KGB_V__COUNT; v++)
		if (verdict_names[v] && strcmp(s, verdict_names[v]) == 0)
			return v;
	return -1;
}

/* Store every storage element of vals into bytes (t->storage elements of t->dtype;
 * complex elements take two values each, real then imaginary). */
void kgb_tensor_pack(const kgb_tensor_t *t, const double *vals, void *bytes)
{
	size_t n = t->storage * (size_t)kgb_dtype_lanes(t->dtype);
	for (size_t i = 0; i < n; i++)
		kgb_dtype_store(t->dtype, bytes, i, vals[i]);
}

/* Load every storage element of bytes into vals as doubles (complex: two each). */
void kgb_tensor_unpack(const kgb_tensor_t *t, const void *bytes, double *vals)
{
	size_t n = t->storage * (size_t)kgb_dtype_lanes(t->dtype);
	for (size_t i = 0; i < n; i++)
		vals[i] = kgb_dtype_load(t->dtype, bytes, i);
}

/* ---- helpers ---- */

static bool elem_is_pattern(const uint8_t *bytes, size_t off, size_t es, uint8_t pat)
{
	const uint8_t *p = bytes + off * es;
	for (size_t i = 0; i < es; i++)
		if (p[i] != pat)
			return false;
	return true;
}

static void fmt_index(const kgb_tensor_t *t, const int64_t *idx, char *buf, size_t n)
{
	size_t l = 0;
	int w;
	buf[0] = '\0';
	w = snprintf(buf, n, "(");
	l = (size_t)w;
	for (int d = 0; d < t->ndim && l < n; d++) {
		w = snprintf(buf + l, n - l, "%s%lld", d ? "," : "", (long long)idx[d]);
		if (w < 0)
			return;
		l += (size_t)w;
	}
	if (l < n)
		snprintf(buf + l, n - l, ")");
}

static size_t flat_of(const kgb_tensor_t *t, const int64_t *idx)
{
	size_t f = 0;
	for (int d = 0; d < t->ndim; d++)
		f = f * (size_t)t->shape[d] + (size_t)idx[d];
	return f;
}

/* A mask of the storage elements reachable through t's view (caller frees). */
static uint8_t *view_mask(const kgb_tensor_t *t)
{
	uint8_t *m = kgb_xcalloc(t->storage ? t->storage : 1, 1);
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	if (t->numel == 0)
		return m;
	do
		m[kgb_tensor_offset(t, idx)] = 1;
	while (kgb_index_next(t, idx));
	return m;
}

/* Storage gaps (elements outside the view) of output tensor t must still hold what
 * was there before the run: the poison pattern (OUT) or the uploaded bytes (INOUT;
 * `expect` then points at them). Returns true if a gap was written. */
static bool gaps_written(const kgb_tensor_t *t, const uint8_t *bytes, int poison, const uint8_t *expect,
                         const char *run, char *msg, size_t msglen)
{
	size_t es = kgb_dtype_size(t->dtype);
	uint8_t *m;
	bool bad = false;
	if (t->storage == t->numel)
		return false;  /* dense: no gaps (a view of storage > numel always has some) */
	if (!expect && poison < 0)
		return false;
	m = view_mask(t);
	for (size_t i = 0; i < t->storage && !bad; i++) {
		if (m[i])
			continue;
		if (expect ? memcmp(bytes + i * es, expect + i * es, es) != 0
		           : !elem_is_pattern(bytes, i, es, (uint8_t)poison)) {
			snprintf(msg, msglen, "%s%s: storage element %zu lies between the view's elements "
			         "(strides) and was written",
			         run, t->name, i);
			bad = true;
		}
	}
	free(m);
	return bad;
}

/* See validate.h. The binade's spacing is 2^(e - (p - 1)) for a value in [2^e, 2^(e+1)),
 * p the precision in bits (implicit bit included); below the smallest normal the
 * spacing stays that of the subnormals. */
double kgb_dtype_step(kgb_dtype_t dt, double r)
{
	int p, emin, e;
	switch (dt) {
	case KGB_DT_F16: p = 11; emin = -14; break;
	case KGB_DT_BF16: p = 8; emin = -126; break;
	case KGB_DT_F32: p = 24; emin = -126; break;
	case KGB_DT_F64: p = 53; emin = -1022; break;
	default: return 0;
	}
	if (!isfinite(r))
		return 0;
	if (r == 0)
		e = emin;
	else {
		frexp(fabs(r), &e);   /* |r| = m * 2^e, m in [0.5, 1): r's binade is 2^(e-1) */
		e = e - 1 < emin ? emin : e - 1;
	}
	return ldexp(1.0, e - (p - 1));
}

/* See validate.h. */
double kgb_validate_elem_tol(const kgb_case_t *c, kgb_dtype_t dt, double r, double atol)
{
	if (c->rtol == 0 && c->atol_rel == 0)
		return 0;
	return fmax(atol + c->rtol * fabs(r), fmax(1.0, c->tol_steps) * kgb_dtype_step(dt, r));
}

typedef struct cmp_acc {
	double max_abs, max_rel;
	size_t nfail;
} cmp_acc_t;

static size_t compare_tensor_complex(const kgb_case_t *c, const kgb_hostbufs_t *ref, int ti,
                                     const double *got, const char *run, cmp_acc_t *acc, char *msg,
                                     size_t msglen);

/* Whether an element's error d (against a reference of magnitude refmag) is within tol;
 * the largest absolute and relative errors so far kept in acc. */
static inline bool within_tol(cmp_acc_t *acc, double d, double tol, double refmag, double atol)
{
	double rel = d == 0 ? 0 : d / fmax(refmag, atol > 0 ? atol : 1e-300);
	if (d > acc->max_abs)
		acc->max_abs = d;
	if (rel > acc->max_rel)
		acc->max_rel = rel;
	return d <= tol;
}

/* A tensor compared: its nfail failing elements counted in acc and, when more than
 * one, the count after the first one's description in msg. Returns nfail. */
static size_t count_failures(const kgb_tensor_t *t, size_t nfail, cmp_acc_t *acc, char *msg, size_t msglen)
{
	if (nfail > 1) {
		size_t l = strlen(msg);
		if (l < msglen)
			snprintf(msg + l, msglen - l, "; %zu of %zu elements wrong", nfail, t->numel);
	}
	acc->nfail += nfail;
	return nfail;
}

/* |re + i im|: the plain formula where it cannot overflow or underflow (libm's hypot
 * costs several times more, and the validator calls this twice per element). */
static inline double modulus(double re, double im)
{
	double a = fabs(re), b = fabs(im);
	if (a < 1e150 && b < 1e150 && (a > 1e-150 || b > 1e-150 || (a == 0 && b == 0)))
		return sqrt(a * a + b * b);
	return hypot(re, im);
}

/* Compare the view of tensor ti (values in got, storage doubles) with the reference.
 * Returns the number of failing elements; the first is described in msg. */
static size_t compare_tensor(const kgb_case_t *c, const kgb_hostbufs_t *ref, int ti, const double *got,
                             const char *run, cmp_acc_t *acc, char *msg, size_t msglen)
{
	const kgb_tensor_t *t = &c->t[ti];
	const double *rv = ref->v[ti];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double maxref = 0, atol, rtol = c->rtol;
	bool exact = c->rtol == 0 && c->atol_rel == 0;
	size_t nfail = 0;
	double *rr;
	size_t k = 0;
	if (t->numel == 0)
		return 0;
	if (kgb_dtype_is_complex(t->dtype))
		return compare_tensor_complex(c, ref, ti, got, run, acc, msg, msglen);
	/* the reference rounded to the output dtype, in view order (computed once) */
	rr = kgb_xmalloc(t->numel * sizeof *rr);
	do {
		double r = kgb_dtype_round(t->dtype, rv[kgb_tensor_offset(t, idx)]);
		rr[k++] = r;
		if (isfinite(r) && fabs(r) > maxref)
			maxref = fabs(r);
	} while (kgb_index_next(t, idx));
	atol = exact ? 0 : fmax(c->atol_rel * maxref, 1e-30);
	memset(idx, 0, sizeof idx);
	k = 0;
	do {
		size_t off = kgb_tensor_offset(t, idx);
		double r = rr[k++], g = got[off];
		double d = 0, tol = kgb_validate_elem_tol(c, t->dtype, r, atol);
		bool ok;
		if (isnan(r))
			ok = isnan(g);
		else if (isnan(g))
			ok = false;
		else if (isinf(r) || isinf(g))
			ok = g == r;
		else {
			d = fabs(g - r);
			ok = within_tol(acc, d, tol, fabs(r), atol);
		}
		if (!ok) {
			if (nfail == 0) {
				char ib[96];
				fmt_index(t, idx, ib, sizeof ib);
				if (exact)
					snprintf(msg, msglen, "%s%s[%zu] %s = %.9g, expected %.9g (exact compare)", run,
					         t->name, flat_of(t, idx), ib, g, r);
				else
					snprintf(msg, msglen, "%s%s[%zu] %s = %.9g, expected %.9g, |err| %.3g > tol %.3g "
					         "(atol %.3g + rtol %.3g*|ref|, at least %g %s step%s)",
					         run, t->name, flat_of(t, idx), ib, g, r, d, tol, atol, rtol,
					         fmax(1.0, c->tol_steps), kgb_dtype_name(t->dtype), c->tol_steps > 1 ? "s" : "");
			}
			nfail++;
		}
	} while (kgb_index_next(t, idx));
	free(rr);
	return count_failures(t, nfail, acc, msg, msglen);
}

/* Complex outputs: an element passes when the modulus of its error, |out - ref| over
 * both components, is within atol + rtol * |ref| (|ref| its modulus), with atol =
 * atol_rel * the largest modulus of the tensor. Judging the modulus rather than each
 * component keeps the bar the same whatever the element's phase: a component that is
 * near zero only because of the phase gets no tighter a bound than the other. A NaN in
 * either component passes only where the reference has a NaN in that component;
 * infinite components must match exactly. */
static size_t compare_tensor_complex(const kgb_case_t *c, const kgb_hostbufs_t *ref, int ti,
                                     const double *got, const char *run, cmp_acc_t *acc, char *msg,
                                     size_t msglen)
{
	const kgb_tensor_t *t = &c->t[ti];
	const double *rv = ref->v[ti];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double maxref = 0, atol, rtol = c->rtol;
	size_t nfail = 0, k = 0;
	double *rr = kgb_xmalloc(2 * t->numel * sizeof *rr);
	do {
		size_t o = 2 * kgb_tensor_offset(t, idx);
		double re = kgb_dtype_round(t->dtype, rv[o]), im = kgb_dtype_round(t->dtype, rv[o + 1]);
		double mod = modulus(re, im);
		rr[k++] = re;
		rr[k++] = im;
		if (isfinite(mod) && mod > maxref)
			maxref = mod;
	} while (kgb_index_next(t, idx));
	atol = fmax(c->atol_rel * maxref, 1e-30);
	memset(idx, 0, sizeof idx);
	k = 0;
	do {
		size_t o = 2 * kgb_tensor_offset(t, idx);
		double rre = rr[k], rim = rr[k + 1], gre = got[o], gim = got[o + 1];
		double d = 0, mod = modulus(rre, rim), tol = atol + rtol * mod;
		bool ok;
		k += 2;
		if (isnan(rre) || isnan(rim) || isnan(gre) || isnan(gim))
			ok = isnan(rre) == isnan(gre) && isnan(rim) == isnan(gim) &&
			     (isnan(rre) || gre == rre || fabs(gre - rre) <= tol) &&
			     (isnan(rim) || gim == rim || fabs(gim - rim) <= tol);
		else if (isinf(rre) || isinf(rim) || isinf(gre) || isinf(gim))
			ok = gre == rre && gim == rim;
		else {
			d = modulus(gre - rre, gim - rim);
			ok = within_tol(acc, d, tol, mod, atol);
		}
		if (!ok) {
			if (nfail == 0) {
				char ib[96];
				fmt_index(t, idx, ib, sizeof ib);
				snprintf(msg, msglen, "%s%s[%zu] %s = (%.9g%+.9gi), expected (%.9g%+.9gi), "
				         "|err| %.3g > tol %.3g (atol %.3g + rtol %.3g*|ref|)",
				         run, t->name, flat_of(t, idx), ib, gre, gim, rre, rim, d, tol, atol, rtol);
			}
			nfail++;
		}
	} while (kgb_index_next(t, idx));
	free(rr);
	return count_failures(t, nfail, acc, msg, msglen);
}

/* Run the operator's own check (random operators) on one set of outputs. */
static int run_check(const kgb_case_t *c, const kgb_hostbufs_t *ref, double *const got[KGB_MAX_TENSORS],
                     cmp_acc_t *acc, char *msg, size_t msglen)
{
	kgb_hostbufs_t outs;
	double ma = 0, mr = 0;
	int v;
	memset(&outs, 0, sizeof outs);
	outs.n = c->ntensors;
	for (int i = 0; i < c->ntensors; i++)
		outs.v[i] = got[i] ? got[i] : ref->v[i];
	v = c->op->check(c, ref, &outs, &ma, &mr, msg, msglen);
	acc->max_abs = fmax(acc->max_abs, ma);
	acc->max_rel = fmax(acc->max_rel, mr);
	return v;
}

/* Element off of bytes still holds what was there before the run: the element of
 * `before` when given, else the byte pattern pat (never, when pat < 0). */
static bool elem_unchanged(const uint8_t *bytes, size_t off, size_t es, const uint8_t *before, int pat)
{
	if (before)
		return memcmp(bytes + off * es, before + off * es, es) == 0;
	return pat >= 0 && elem_is_pattern(bytes, off, es, (uint8_t)pat);
}

/* Unwritten elements of OUT tensor t: the poison of run 1 (b1 or p1) still there after
 * run 1 and (if run 2) the poison of run 2 after run 2. An element whose correct value
 * has the poison's bit pattern (an integer -1 against 0xFF), or is NaN where the poison
 * is a NaN, is not counted: the value compare judges it. */
static size_t count_unwritten(const kgb_tensor_t *t, const double *refv, const uint8_t *r1, const uint8_t *b1,
                              int p1, const uint8_t *r2, const uint8_t *b2, int p2, char *msg, size_t msglen)
{
	size_t es = kgb_dtype_size(t->dtype), n = 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 }, first[KGB_MAX_DIMS] = { 0 };
	uint8_t rb[16];
	bool two = r2 && (b2 || p2 >= 0);
	if (t->numel == 0 || (!b1 && p1 < 0))
		return 0;
	do {
		size_t off = kgb_tensor_offset(t, idx);
		if (elem_unchanged(r1, off, es, b1, p1) && (!two || elem_unchanged(r2, off, es, b2, p2))) {
			/* a NaN poison over a NaN reference: a written NaN may have the poison's
			 * very bits (fmax of two NaNs returns one of them), so "unwritten" cannot
			 * be told from "written NaN"; the value compare accepts NaN for NaN */
			if (kgb_dtype_is_float(t->dtype) && !kgb_dtype_is_complex(t->dtype) && isnan(refv[off]) &&
			    isnan(kgb_dtype_load(t->dtype, r1, off)))
				continue;
			/* complex: both components of the reference element */
			for (int l = 0; l < kgb_dtype_lanes(t->dtype); l++)
				kgb_dtype_store(t->dtype, rb, (size_t)l, refv[off * (size_t)kgb_dtype_lanes(t->dtype) + (size_t)l]);
			if (es <= sizeof rb && (b1 ? memcmp(rb, b1 + off * es, es) == 0 : elem_is_pattern(rb, 0, es, (uint8_t)p1)) &&
			    (!two || (b2 ? memcmp(rb, b2 + off * es, es) == 0 : elem_is_pattern(rb, 0, es, (uint8_t)p2))))
				continue;
			if (n == 0)
				memcpy(first, idx, sizeof first);
			n++;
		}
	} while (kgb_index_next(t, idx));
	if (n) {
		char ib[96];
		fmt_index(t, first, ib, sizeof ib);
		snprintf(msg, msglen, "%s: %zu of %zu elements never written (still the poison pattern), "
		         "first %s[%zu] %s", t->name, n, t->numel, t->name, flat_of(t, first), ib);
	}
	return n;
}

/* ---- the validator ---- */

/* Judge one case from the raw buffers of one or two runs (see validate.h). */
void kgb_validate(const kgb_validate_in_t *in, kgb_validate_out_t *out)
{
	const kgb_case_t *c = in->c;
	double *got1[KGB_MAX_TENSORS] = { 0 }, *got2[KGB_MAX_TENSORS] = { 0 };
	cmp_acc_t acc1 = { 0 }, acc2 = { 0 };
	char msg[sizeof out->message];
	memset(out, 0, sizeof *out);
	out->verdict = KGB_V_PASS;
	msg[0] = '\0';
	/* 1. guard bands and storage gaps */
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		if (in->guard_broken[i]) {
			out->verdict = KGB_V_OUT_OF_BOUNDS_WRITE;
			snprintf(out->message, sizeof out->message,
			         "%s: a guard byte around the buffer changed (write out of bounds)", t->name);
			goto out;
		}
		if (t->role == KGB_ROLE_IN || !in->run1[i])
			continue;
		if (gaps_written(t, in->run1[i], in->poison1,
		                 t->role == KGB_ROLE_INOUT ? in->uploaded[i] : in->before1[i], "", out->message,
		                 sizeof out->message) ||
		    (in->run2[i] && gaps_written(t, in->run2[i], in->poison2,
		                                 t->role == KGB_ROLE_INOUT ? in->uploaded[i] : in->before2[i], "run 2: ",
		                                 out->message, sizeof out->message))) {
			out->verdict = KGB_V_OUT_OF_BOUNDS_WRITE;
			goto out;
		}
	}
	/* 2. inputs unchanged */
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		size_t es = kgb_dtype_size(t->dtype);
		const uint8_t *runs[2] = { in->run1[i], in->run2[i] };
		if (t->role != KGB_ROLE_IN || !in->uploaded[i])
			continue;
		for (int r = 0; r < 2; r++) {
			const uint8_t *b = runs[r], *u = in->uploaded[i];
			if (!b || memcmp(b, u, t->storage * es) == 0)
				continue;
			for (size_t k = 0; k < t->storage; k++) {
				if (memcmp(b + k * es, u + k * es, es) != 0) {
					snprintf(out->message, sizeof out->message,
					         "%sinput %s changed at storage element %zu: %.9g -> %.9g", r ? "run 2: " : "",
					         t->name, k, kgb_dtype_load(t->dtype, u, k * (size_t)kgb_dtype_lanes(t->dtype)),
					         kgb_dtype_load(t->dtype, b, k * (size_t)kgb_dtype_lanes(t->dtype)));
					break;
				}
			}
			out->verdict = KGB_V_INPUT_MODIFIED;
			goto out;
		}
	}
	/* 3. unwritten outputs */
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		if (t->role != KGB_ROLE_OUT || !in->run1[i])
			continue;
		if (count_unwritten(t, in->ref->v[i], in->run1[i], in->before1[i], in->poison1, in->run2[i], in->before2[i],
		                    in->poison2, out->message, sizeof out->message)) {
			out->verdict = KGB_V_UNWRITTEN_OUTPUT;
			goto out;
		}
	}
	/* 4. values of run 1, then 5. run 2 against the same reference */
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		if (t->role == KGB_ROLE_IN)
			continue;
		if (in->run1[i]) {
			got1[i] = kgb_xmalloc((t->storage ? t->storage : 1) * (size_t)kgb_dtype_lanes(t->dtype) *
			                      sizeof(double));
			kgb_tensor_unpack(t, in->run1[i], got1[i]);
		}
		if (in->run2[i]) {
			got2[i] = kgb_xmalloc((t->storage ? t->storage : 1) * (size_t)kgb_dtype_lanes(t->dtype) *
			                      sizeof(double));
			kgb_tensor_unpack(t, in->run2[i], got2[i]);
		}
	}
	if (c->op->check) {
		int v = run_check(c, in->ref, got1, &acc1, msg, sizeof msg);
		out->max_abs_err = acc1.max_abs;
		out->max_rel_err = acc1.max_rel;
		if (v != KGB_V_PASS) {
			out->verdict = v;
			kgb_strlcpy(out->message, msg, sizeof out->message);
			goto out;
		}
		for (int i = 0; i < c->ntensors; i++) {
			if (got2[i]) {
				v = run_check(c, in->ref, got2, &acc2, msg, sizeof msg);
				if (v != KGB_V_PASS) {
					out->verdict = KGB_V_NONDETERMINISTIC;
					snprintf(out->message, sizeof out->message, "run 2: %.240s", msg);
				}
				break;
			}
		}
		goto out;
	}
	for (int i = 0; i < c->ntensors; i++) {
		if (!got1[i])
			continue;
		if (compare_tensor(c, in->ref, i, got1[i], "", &acc1, msg, sizeof msg) && out->verdict == KGB_V_PASS) {
			out->verdict = KGB_V_WRONG_RESULT;
			kgb_strlcpy(out->message, msg, sizeof out->message);
		}
	}
	out->max_abs_err = acc1.max_abs;
	out->max_rel_err = acc1.max_rel;
	if (out->verdict != KGB_V_PASS)
		goto out;
	for (int i = 0; i < c->ntensors; i++) {
		if (!got2[i])
			continue;
		if (compare_tensor(c, in->ref, i, got2[i], "run 2 disagrees with run 1: ", &acc2, msg, sizeof msg)) {
			out->verdict = KGB_V_NONDETERMINISTIC;
			kgb_strlcpy(out->message, msg, sizeof out->message);
			break;
		}
	}
out:
	for (int i = 0; i < KGB_MAX_TENSORS; i++) {
		free(got1[i]);
		free(got2[i]);
	}
}

/* Judge one output buffer alone (see validate.h). inputs may be NULL when the op has
 * no INOUT tensor with storage gaps. */
int kgb_validate_output(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *inputs,
                        int tensor, const void *bytes, int poison, double *max_abs, double *max_rel,
                        char *msg, size_t msglen)
{
	return kgb_validate_output_before(c, ref, inputs, tensor, bytes, NULL, poison, true, max_abs, max_rel, msg,
	                                  msglen);
}

/* See validate.h. */
int kgb_validate_output_before(const kgb_case_t *c, const kgb_hostbufs_t *ref, const kgb_hostbufs_t *inputs,
                               int tensor, const void *bytes, const void *before, int poison, bool unwritten,
                               double *max_abs, double *max_rel, char *msg, size_t msglen)
{
	const kgb_tensor_t *t;
	double *got;
	cmp_acc_t acc = { 0 };
	int v = KGB_V_PASS;
	uint8_t *expect = NULL;
	KGB_ASSERT(tensor >= 0 && tensor < c->ntensors);
	t = &c->t[tensor];
	if (msglen)
		msg[0] = '\0';
	if (max_abs)
		*max_abs = 0;
	if (max_rel)
		*max_rel = 0;
	if (t->role == KGB_ROLE_INOUT && inputs && inputs->v[tensor]) {
		expect = kgb_xmalloc((t->storage ? t->storage : 1) * kgb_dtype_size(t->dtype));
		kgb_tensor_pack(t, inputs->v[tensor], expect);
	}
	if (gaps_written(t, bytes, t->role == KGB_ROLE_OUT ? poison : -1,
	                 expect ? expect : t->role == KGB_ROLE_OUT ? before : NULL, "", msg, msglen)) {
		free(expect);
		return KGB_V_OUT_OF_BOUNDS_WRITE;
	}
	free(expect);
	if (t->role == KGB_ROLE_OUT && unwritten &&
	    count_unwritten(t, ref->v[tensor], bytes, before, poison, NULL, NULL, -1, msg, msglen))
		return KGB_V_UNWRITTEN_OUTPUT;
	got = kgb_xmalloc((t->storage ? t->storage : 1) * (size_t)kgb_dtype_lanes(t->dtype) * sizeof(double));
	kgb_tensor_unpack(t, bytes, got);
	if (c->op->check) {
		double *gv[KGB_MAX_TENSORS] = { 0 };
		gv[tensor] = got;
		v = run_check(c, ref, gv, &acc, msg, msglen);
	} else if (compare_tensor(c, ref, tensor, got, "", &acc, msg, msglen)) {
		v = KGB_V_WRONG_RESULT;
	}
	free(got);
	if (max_abs)
		*max_abs = acc.max_abs;
	if (max_rel)
		*max_rel = acc.max_rel;
	return v;
}
