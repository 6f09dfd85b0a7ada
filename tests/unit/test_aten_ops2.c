/* Spot checks of the ATen random operators (bernoulli, poisson, exponential_,
 * rrelu_with_noise): elements whose value is determined are checked by hand, samplers
 * with the wrong distribution are rejected, and for every third small case the
 * operator's own check accepts the reference and rejects zeros, a constant and a NaN
 * (the catalog self-test samples only a few cases of each operator). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "validate.h"

/* ---- helpers ---- */

typedef struct built {
	kgb_case_t c;
	kgb_hostbufs_t in, ref;
} built_t;

static void build(built_t *b, const char *op, uint32_t ci, uint64_t seed)
{
	char err[512];
	const kgb_op_t *o = kgb_catalog_find(op);

	if (!o)
		FAIL("operator %s is not in the catalog", op);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	ASSERT_OK(kgb_case_build(o, ci, &b->c, err, sizeof err), err);
	ASSERT_OK(kgb_case_inputs(&b->c, seed, &b->in, err, sizeof err), err);
	ASSERT_OK(kgb_case_reference(&b->c, seed, &b->ref, err, sizeof err), err);
}

static void unbuild(built_t *b)
{
	kgb_hostbufs_release(&b->in);
	kgb_hostbufs_release(&b->ref);
	kgb_case_release(&b->c);
}

/* The first case of op whose label contains every space-separated word of `want`. */
static uint32_t find_case(const char *op, const char *want)
{
	const kgb_op_t *o = kgb_catalog_find(op);
	uint32_t n;

	if (!o)
		FAIL("operator %s is not in the catalog", op);
	n = kgb_op_case_count(o);
	for (uint32_t i = 0; i < n; i++) {
		kgb_case_t c;
		char err[256], words[256], *save = NULL, *w;
		bool ok = true;
		if (kgb_case_build(o, i, &c, err, sizeof err) != 0)
			continue;
		snprintf(words, sizeof words, "%s", want);
		for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			char pat[96];
			snprintf(pat, sizeof pat, "%s", w);
			/* match whole "name=value" tokens */
			const char *p = c.label;
			bool hit = false;
			size_t l = strlen(pat);
			while ((p = strstr(p, pat)) != NULL) {
				if ((p == c.label || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0')) {
					hit = true;
					break;
				}
				p++;
			}
			ok = ok && hit;
		}
		kgb_case_release(&c);
		if (ok)
			return i;
	}
	FAIL("op %s: no case matches '%s'", op, want);
}

/* Verdict of kgb_validate_output for tensor ti holding `vals` (storage doubles). */
static int judge_vals(const built_t *b, int ti, const double *vals, char *msg, size_t msglen)
{
	const kgb_tensor_t *t = &b->c.t[ti];
	size_t nb = (t->storage ? t->storage : 1) * kgb_dtype_size(t->dtype);
	uint8_t *bytes = malloc(nb);
	int v;

	ASSERT_TRUE(bytes != NULL);
	if (t->role == KGB_ROLE_INOUT)
		kgb_tensor_pack(t, b->in.v[ti], bytes);   /* gaps keep the uploaded values */
	else
		memset(bytes, 0, nb);
	{
		int64_t idx[KGB_MAX_DIMS] = { 0 };
		if (t->numel)
			do {
				size_t off = kgb_tensor_offset(t, idx);
				kgb_dtype_store(t->dtype, bytes, off, vals[off]);
			} while (kgb_index_next(t, idx));
	}
	v = kgb_validate_output(&b->c, &b->ref, &b->in, ti, bytes, -1, NULL, NULL, msg, msglen);
	free(bytes);
	return v;
}

/* Value of tensor `name` at row-major flat index k. */
static double at(const built_t *b, const kgb_hostbufs_t *h, const char *name, size_t k)
{
	int i = kgb_case_tensor_index(&b->c, name);
	ASSERT_TRUE(i >= 0);
	return h->v[i][kgb_tensor_flat_offset(&b->c.t[i], k)];
}

static int tix(const built_t *b, const char *name)
{
	int i = kgb_case_tensor_index(&b->c, name);
	ASSERT_TRUE(i >= 0);
	return i;
}

/* For every case of op (or every `step`-th; skip_big: but those with more than 2^16
 * elements, which the self-test samples): the reference passes its check, and
 * zeros, a constant and one NaN are rejected for every output (where they differ
 * from the reference). Returns the number of rejected mutants. */
static size_t sweep_check(const char *op, uint32_t step, bool skip_big)
{
	const kgb_op_t *o = kgb_catalog_find(op);
	uint32_t n;
	size_t rejected = 0;

	ASSERT_TRUE(o != NULL);
	n = kgb_op_case_count(o);
	for (uint32_t ci = 0; ci < n; ci += step) {
		built_t b;
		char msg[256];
		if (skip_big) {
			kgb_case_t c;
			char err[256];
			size_t big = 0;
			ASSERT_OK(kgb_case_build(o, ci, &c, err, sizeof err), err);
			for (int ti = 0; ti < c.ntensors; ti++)
				big = KGB_MAX(big, c.t[ti].numel);
			kgb_case_release(&c);
			if (big > ((size_t)1 << 16))
				continue;
		}
		build(&b, op, ci, 3 + ci);
		for (int ti = 0; ti < b.c.ntensors; ti++) {
			const kgb_tensor_t *t = &b.c.t[ti];
			double *m = NULL, mean = 0;
			int64_t idx[KGB_MAX_DIMS] = { 0 };
			int v;
			if (t->role == KGB_ROLE_IN || t->numel == 0)
				continue;
			v = judge_vals(&b, ti, b.ref.v[ti], msg, sizeof msg);
			if (v != KGB_V_PASS)
				FAIL("%s case %u (%s): the reference of %s is rejected: %s", op, ci, b.c.label, t->name, msg);
			m = malloc(t->storage * sizeof *m);
			ASSERT_TRUE(m != NULL);
			do
				mean += kgb_dtype_round(t->dtype, b.ref.v[ti][kgb_tensor_offset(t, idx)]) / (double)t->numel;
			while (kgb_index_next(t, idx));
			for (int kind = 0; kind < 3; kind++) {
				bool same = true;
				memcpy(m, b.ref.v[ti], t->storage * sizeof *m);
				memset(idx, 0, sizeof idx);
				do {
					size_t off = kgb_tensor_offset(t, idx);
					double r = kgb_dtype_round(t->dtype, b.ref.v[ti][off]);
					if (kind == 0)
						m[off] = 0;
					else if (kind == 1)
						m[off] = kgb_dtype_is_float(t->dtype) ? mean : floor(mean);
					m[off] = kgb_dtype_round(t->dtype, m[off]);
					same = same && m[off] == r;
				} while (kgb_index_next(t, idx));
				if (kind == 2) {
					if (!kgb_dtype_is_float(t->dtype))
						continue;
					m[kgb_tensor_flat_offset(t, t->numel / 2)] = NAN;
					same = false;
				}
				if (same)
					continue;
				v = judge_vals(&b, ti, m, msg, sizeof msg);
				if (v == KGB_V_PASS)
					FAIL("%s case %u (%s): %s mutant of %s passed", op, ci, b.c.label,
					     kind == 0 ? "zeros" : kind == 1 ? "constant" : "nan", t->name);
				rejected++;
			}
			free(m);
		}
		unbuild(&b);
	}
	return rejected;
}

/* ---- random ---- */

TEST(aten2_random_checks_every_case)
{
	static const char *const ops[] = { "bernoulli", "poisson", "exponential_", "rrelu_with_noise" };
	for (size_t i = 0; i < 4; i++) {
		size_t r = sweep_check(ops[i], 3, true);
		ASSERT_TRUE(r > 0);
		printf("%s: %zu mutants rejected\n", ops[i], r);
	}
}

TEST(aten2_bernoulli_determined_and_wrong_p)
{
	built_t b;
	char msg[256];
	int o;
	double *m;

	/* small tensors: every p is 0 or 1, so the output is determined */
	build(&b, "bernoulli", find_case("bernoulli", "shape=[7] dtype=f32 mode=tensor"), 5);
	o = tix(&b, "out");
	for (size_t k = 0; k < 7; k++) {
		double p = at(&b, &b.in, "self", k);
		ASSERT_TRUE(p == 0 || p == 1);
		ASSERT_EQ_INT(at(&b, &b.ref, "out", k), p);
	}
	m = malloc(b.c.t[o].storage * sizeof *m);
	for (size_t k = 0; k < 7; k++)
		m[k] = 1 - at(&b, &b.in, "self", k);
	ASSERT_EQ_INT(judge_vals(&b, o, m, msg, sizeof msg), KGB_V_WRONG_RESULT);
	free(m);
	unbuild(&b);
	/* p = 0.1: a sampler using p = 0.5 is rejected */
	build(&b, "bernoulli", find_case("bernoulli", "shape=[33,65] dtype=f32 mode=scalar p=0.1"), 5);
	o = tix(&b, "out");
	m = malloc(b.c.t[o].storage * sizeof *m);
	for (size_t k = 0; k < b.c.t[o].numel; k++)
		m[k] = (k * 2654435761u) % 7 < 3 ? 1 : 0;   /* 3/7 ones */
	ASSERT_EQ_INT(judge_vals(&b, o, m, msg, sizeof msg), KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(msg, "ones");
	free(m);
	unbuild(&b);
}

TEST(aten2_poisson_rounded_rate_rejected)
{
	built_t b;
	char msg[256];
	int o;
	double *m;

	build(&b, "poisson", find_case("poisson", "shape=[256,1024] dtype=f32 rate=mixed"), 9);
	o = tix(&b, "out");
	m = malloc(b.c.t[o].storage * sizeof *m);
	for (size_t k = 0; k < b.c.t[o].numel; k++) {
		double lam = at(&b, &b.in, "self", k);
		m[k] = floor(lam + 0.5);   /* right mean, no dispersion */
		if (lam == 0)
			ASSERT_EQ_INT(at(&b, &b.ref, "out", k), 0);
	}
	ASSERT_EQ_INT(judge_vals(&b, o, m, msg, sizeof msg), KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(msg, "dispersion");
	free(m);
	unbuild(&b);
}

TEST(aten2_exponential_wrong_rate_rejected)
{
	built_t b;
	char msg[256];
	double *m;
	kgb_rng_t r;

	build(&b, "exponential_", find_case("exponential_", "shape=[1000] dtype=bf16 lambd=0.5"), 2);
	m = malloc(b.c.t[0].storage * sizeof *m);
	kgb_rng_seed(&r, 77);
	for (size_t k = 0; k < 1000; k++)
		m[k] = -log1p(-kgb_rng_uniform(&r)) / 0.5;   /* a correct sampler: passes */
	ASSERT_EQ_INT(judge_vals(&b, 0, m, msg, sizeof msg), KGB_V_PASS);
	for (size_t k = 0; k < 1000; k++)
		m[k] = 1.0 + kgb_rng_uniform(&r) * 2;        /* mean 2 = 1/lambd, wrong shape */
	ASSERT_EQ_INT(judge_vals(&b, 0, m, msg, sizeof msg), KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(msg, "KS distance");
	for (size_t k = 0; k < 1000; k++)
		m[k] = -log1p(-kgb_rng_uniform(&r));         /* lambd ignored (rate 1) */
	ASSERT_EQ_INT(judge_vals(&b, 0, m, msg, sizeof msg), KGB_V_WRONG_RESULT);
	free(m);
	unbuild(&b);
}

TEST(aten2_rrelu_eval_and_fixed_slope)
{
	built_t b;
	char msg[256];
	int o, nz;
	double *m;

	build(&b, "rrelu_with_noise", find_case("rrelu_with_noise", "shape=[1000] dtype=f32 bounds=default training=0"), 4);
	for (size_t k = 0; k < 1000; k++) {
		double x = at(&b, &b.in, "self", k);
		double want = x > 0 ? x : x * (0.125 + 1.0 / 3) / 2;
		ASSERT_NEAR(at(&b, &b.ref, "out", k), want, 1e-7);
		ASSERT_EQ_INT(at(&b, &b.ref, "noise", k) == at(&b, &b.in, "noise", k), 1);
	}
	unbuild(&b);
	/* training with the fixed mean slope: noise consistent with out, but not uniform */
	build(&b, "rrelu_with_noise", find_case("rrelu_with_noise", "shape=[33,65] dtype=f32 bounds=default training=1"), 4);
	o = tix(&b, "out");
	nz = tix(&b, "noise");
	m = malloc(b.c.t[nz].storage * sizeof *m);
	for (size_t k = 0; k < b.c.t[nz].numel; k++) {
		double x = at(&b, &b.in, "self", k);
		double a = x > 0 ? 1 : (float)((0.125f + 1.0f / 3) / 2);
		m[k] = a;
		b.ref.v[o][k] = (float)(x * a);   /* out consistent with this noise */
	}
	ASSERT_EQ_INT(judge_vals(&b, nz, m, msg, sizeof msg), KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(msg, "KS distance");
	free(m);
	unbuild(&b);
}
