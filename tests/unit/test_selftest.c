/* The catalog self-test: for every operator and a sample of its cases, the validator
 * must accept the reference (and the reference moved within tolerance) and reject a
 * set of wrong answers (mutants). This checks the tolerances, the references and the
 * validator together: a tolerance so loose that zeros pass, or a reference that does
 * not agree with its own tolerance, fails here.
 *
 * The buffers are built the way the executor leaves them: outputs poisoned before
 * each run (KGB_POISON1, then KGB_POISON2), INOUT tensors uploaded with their inputs,
 * inputs uploaded and read back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "validate.h"

typedef enum {
	MUT_NONE = 0,        /* the reference itself */
	MUT_PERTURB,         /* every element moved by 0.5 * tol */
	MUT_ZEROS,
	MUT_CONST,
	MUT_COPY_INPUT,      /* the first input copied through (or an INOUT left as it was) */
	MUT_ONE_OFF,         /* one element off by a bit more than 10 * tol */
	MUT_HALF_UNWRITTEN,
	MUT_NAN,
	MUT_GAP_WRITE,       /* an element between the strides of a strided output written */
	MUT_INPUT_WRITE,     /* an input changed */
	MUT_RACE,            /* run 2 differs from run 1 */
	MUT__COUNT
} mutant_t;

static const char *const mut_names[MUT__COUNT] = {
	"reference", "perturbed", "zeros", "constant", "input-copied", "one-element-off",
	"half-unwritten", "nan", "gap-write", "input-modified", "race",
};

typedef struct st_ctx {
	const kgb_case_t *c;
	kgb_hostbufs_t in;       /* inputs (INOUT: before the op) */
	kgb_hostbufs_t ref;      /* inputs and reference outputs */
	kgb_rng_t rng;
	size_t accepted, rejected, skipped;
	size_t failures;
	char fail_text[8192];
} st_ctx_t;

static void note_failure(st_ctx_t *x, const char *fmt, const char *a, const char *b, const char *d)
{
	size_t l = strlen(x->fail_text);
	x->failures++;
	if (l + 400 < sizeof x->fail_text)
		snprintf(x->fail_text + l, sizeof x->fail_text - l, fmt, a, b, d);
}

/* The validator's per-tensor absolute tolerance term (validate.h). */
static double tensor_atol(const kgb_case_t *c, const kgb_tensor_t *t, const double *rv)
{
	double m = 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	if (c->rtol == 0 && c->atol_rel == 0)
		return 0;
	if (t->numel)
		do {
			double r = kgb_dtype_round(t->dtype, rv[kgb_tensor_offset(t, idx)]);
			if (isfinite(r))
				m = fmax(m, fabs(r));
		} while (kgb_index_next(t, idx));
	return fmax(c->atol_rel * m, 1e-30);
}

static size_t storage_bytes(const kgb_tensor_t *t)
{
	return (t->storage ? t->storage : 1) * kgb_dtype_size(t->dtype);
}

/* Build the bytes a run leaves in tensor i: OUT starts as poison, INOUT as its input,
 * then every view element not masked as unwritten gets vals. */
static uint8_t *make_run(const st_ctx_t *x, int i, const double *vals, const uint8_t *unwritten, uint8_t poison)
{
	const kgb_tensor_t *t = &x->c->t[i];
	uint8_t *b = malloc(storage_bytes(t));
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	ASSERT_TRUE(b != NULL);
	if (t->role == KGB_ROLE_OUT)
		memset(b, poison, storage_bytes(t));
	else
		kgb_tensor_pack(t, x->in.v[i], b);
	if (t->role == KGB_ROLE_IN || t->numel == 0)
		return b;
	do {
		size_t off = kgb_tensor_offset(t, idx);
		if (!unwritten || !unwritten[off])
			kgb_dtype_store(t->dtype, b, off, vals[off]);
	} while (kgb_index_next(t, idx));
	return b;
}

/* Mutate output tensor ti according to m and judge it. Returns the verdict, or -1 when
 * the mutant does not apply (or equals the reference: nothing to reject). */
static int judge(st_ctx_t *x, int ti, mutant_t m, char *msg, size_t msglen)
{
	const kgb_case_t *c = x->c;
	const kgb_tensor_t *t = &c->t[ti];
	size_t n = t->storage ? t->storage : 1;
	double *v = malloc(n * sizeof(double));
	uint8_t *unw = NULL;
	double atol = tensor_atol(c, t, x->ref.v[ti]);
	bool isf = kgb_dtype_is_float(t->dtype), exact = c->rtol == 0 && c->atol_rel == 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	size_t k = 0, pick = t->numel ? (size_t)(kgb_rng_next(&x->rng) % t->numel) : 0;
	kgb_validate_in_t in;
	kgb_validate_out_t out;
	uint8_t *up[KGB_MAX_TENSORS] = { 0 }, *r1[KGB_MAX_TENSORS] = { 0 }, *r2[KGB_MAX_TENSORS] = { 0 };
	int verdict = -1, first_in = -1;
	double mean = 0;
	ASSERT_TRUE(v != NULL);
	for (size_t i = 0; i < t->storage; i++)
		v[i] = kgb_dtype_round(t->dtype, x->ref.v[ti][i]);
	for (int i = 0; i < c->ntensors; i++)
		if (c->t[i].role == KGB_ROLE_IN && first_in < 0)
			first_in = i;
	if (t->numel == 0)
		goto out;
	if ((m == MUT_PERTURB || m == MUT_ONE_OFF || m == MUT_COPY_INPUT) && c->op->check)
		goto out;
	if (m == MUT_PERTURB && exact)
		goto out;
	if (m == MUT_NAN && !isf)
		goto out;
	if (m == MUT_GAP_WRITE && t->storage == t->numel)
		goto out;
	if (m == MUT_INPUT_WRITE && (first_in < 0 || c->t[first_in].numel == 0))
		goto out;
	if (m == MUT_COPY_INPUT && t->role == KGB_ROLE_OUT &&
	    (first_in < 0 || c->t[first_in].numel != t->numel))
		goto out;
	do {
		double r = v[kgb_tensor_offset(t, idx)];
		if (isfinite(r))
			mean += r / (double)t->numel;
	} while (kgb_index_next(t, idx));
	memset(idx, 0, sizeof idx);
	if (m == MUT_HALF_UNWRITTEN)
		unw = calloc(n, 1);
	do {
		size_t off = kgb_tensor_offset(t, idx);
		double r = v[off], tol = atol + c->rtol * fabs(r);
		double s = kgb_rng_uniform(&x->rng) < 0.5 ? -1.0 : 1.0;
		switch (m) {
		case MUT_PERTURB:
			if (isfinite(r))
				v[off] = kgb_dtype_round(t->dtype, r + s * 0.5 * tol);
			break;
		case MUT_ZEROS:
			v[off] = 0;
			break;
		case MUT_CONST:
			v[off] = t->dtype == KGB_DT_BOOL ? 1.0 : kgb_dtype_round(t->dtype, mean);
			break;
		case MUT_COPY_INPUT:
			v[off] = t->role == KGB_ROLE_OUT
			       ? kgb_dtype_round(t->dtype,
			                         x->in.v[first_in][kgb_tensor_flat_offset(&c->t[first_in], k)])
			       : x->in.v[ti][off];
			break;
		case MUT_ONE_OFF:
			if (k == pick) {
				double w;
				if (t->dtype == KGB_DT_BOOL)
					w = r != 0 ? 0 : 1;
				else if (!isf)
					w = r + 1;
				else {
					w = kgb_dtype_round(t->dtype, r + s * (10.0 * tol * 1.01));
					if (!(fabs(w - r) > tol))   /* tol below the dtype's resolution */
						w = kgb_dtype_round(t->dtype, r + s * (0.5 * fabs(r) + 1.0));
				}
				v[off] = w;
			}
			break;
		case MUT_HALF_UNWRITTEN:
			if (k < (t->numel + 1) / 2)
				unw[off] = 1;
			break;
		case MUT_NAN:
			if (k == pick)
				v[off] = isnan(r) ? 0.0 : NAN;
			break;
		default:
			break;
		}
		k++;
	} while (kgb_index_next(t, idx));
	/* a mutant that happens to equal the reference cannot be rejected */
	if (m == MUT_ZEROS || m == MUT_CONST || m == MUT_COPY_INPUT) {
		bool same = true;
		memset(idx, 0, sizeof idx);
		do {
			size_t off = kgb_tensor_offset(t, idx);
			if (v[off] != kgb_dtype_round(t->dtype, x->ref.v[ti][off]))
				same = false;
		} while (same && kgb_index_next(t, idx));
		if (same)
			goto out;
	}
	memset(&in, 0, sizeof in);
	in.c = c;
	in.ref = &x->ref;
	in.poison1 = KGB_POISON1;
	in.poison2 = KGB_POISON2;
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *u = &c->t[i];
		double *rv = malloc((u->storage ? u->storage : 1) * sizeof(double));
		ASSERT_TRUE(rv != NULL);
		for (size_t j = 0; j < u->storage; j++)
			rv[j] = kgb_dtype_round(u->dtype, x->ref.v[i][j]);
		up[i] = malloc(storage_bytes(u));
		ASSERT_TRUE(up[i] != NULL);
		if (u->role == KGB_ROLE_OUT)
			memset(up[i], KGB_POISON1, storage_bytes(u));
		else
			kgb_tensor_pack(u, x->in.v[i], up[i]);
		r1[i] = make_run(x, i, i == ti ? v : rv, i == ti ? unw : NULL, KGB_POISON1);
		r2[i] = make_run(x, i, i == ti ? v : rv, i == ti ? unw : NULL, KGB_POISON2);
		free(rv);
		in.uploaded[i] = up[i];
		in.run1[i] = r1[i];
		in.run2[i] = r2[i];
	}
	if (m == MUT_RACE) {
		/* run 1 is the reference; run 2 has one element off */
		size_t off = kgb_tensor_flat_offset(t, pick);
		double r = v[off], w, tol = atol + c->rtol * fabs(r);
		if (isf) {
			w = kgb_dtype_round(t->dtype, r + 10.1 * tol);
			if (!(fabs(w - r) > tol))
				w = kgb_dtype_round(t->dtype, r + 0.5 * fabs(r) + 1.0);
		} else {
			w = t->dtype == KGB_DT_BOOL ? (r != 0 ? 0 : 1) : r + 1;
		}
		kgb_dtype_store(t->dtype, r2[ti], off, w);
	}
	if (m == MUT_GAP_WRITE) {
		/* first storage element outside the view */
		uint8_t *mask = calloc(t->storage, 1);
		memset(idx, 0, sizeof idx);
		do
			mask[kgb_tensor_offset(t, idx)] = 1;
		while (kgb_index_next(t, idx));
		for (size_t j = 0; j < t->storage; j++) {
			if (!mask[j]) {
				kgb_dtype_store(t->dtype, r1[ti], j, 0.0);
				break;
			}
		}
		free(mask);
	}
	if (m == MUT_INPUT_WRITE) {
		const kgb_tensor_t *u = &c->t[first_in];
		size_t off = kgb_tensor_flat_offset(u, pick % u->numel);
		kgb_dtype_store(u->dtype, r1[first_in], off, kgb_dtype_load(u->dtype, r1[first_in], off) + 1.0);
	}
	kgb_validate(&in, &out);
	verdict = out.verdict;
	kgb_strlcpy(msg, out.message, msglen);
	/* the single-buffer entry point must agree on the outcome for run 1 (the input
	 * and race mutants involve other buffers / run 2 only) */
	if (m != MUT_INPUT_WRITE && m != MUT_RACE) {
		char m2[256];
		int v2 = kgb_validate_output(c, &x->ref, &x->in, ti, r1[ti], t->role == KGB_ROLE_OUT ? (int)KGB_POISON1 : -1,
		                             NULL, NULL, m2, sizeof m2);
		if ((v2 == KGB_V_PASS) != (verdict == KGB_V_PASS)) {
			snprintf(msg, msglen, "kgb_validate says %s but kgb_validate_output says %s (%.150s)",
			         kgb_verdict_name(verdict), kgb_verdict_name(v2), m2);
			verdict = -2;
		}
	}
	for (int i = 0; i < c->ntensors; i++) {
		free(up[i]);
		free(r1[i]);
		free(r2[i]);
	}
out:
	free(unw);
	free(v);
	return verdict;
}

static int expected_verdict(const kgb_case_t *c, int ti, mutant_t m)
{
	switch (m) {
	case MUT_NONE:
	case MUT_PERTURB: return KGB_V_PASS;
	case MUT_HALF_UNWRITTEN:
		return c->t[ti].role == KGB_ROLE_OUT ? KGB_V_UNWRITTEN_OUTPUT : KGB_V_WRONG_RESULT;
	case MUT_GAP_WRITE: return KGB_V_OUT_OF_BOUNDS_WRITE;
	case MUT_INPUT_WRITE: return KGB_V_INPUT_MODIFIED;
	case MUT_RACE: return KGB_V_NONDETERMINISTIC;
	default: return KGB_V_WRONG_RESULT;
	}
}

static void selftest_case(st_ctx_t *x, const kgb_op_t *op, uint32_t ci)
{
	kgb_case_t c;
	char err[512], msg[256], head[256];
	ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
	x->c = &c;
	ASSERT_OK(kgb_case_inputs(&c, 11 + ci, &x->in, err, sizeof err), err);
	ASSERT_OK(kgb_case_reference(&c, 11 + ci, &x->ref, err, sizeof err), err);
	kgb_rng_seed(&x->rng, 0x5e1f7e57ull ^ ci);
	snprintf(head, sizeof head, "%s case %u (%s)", op->name, ci, c.label);
	for (int ti = 0; ti < c.ntensors; ti++) {
		if (c.t[ti].role == KGB_ROLE_IN)
			continue;
		for (int m = 0; m < MUT__COUNT; m++) {
			int want = expected_verdict(&c, ti, (mutant_t)m);
			int got = judge(x, ti, (mutant_t)m, msg, sizeof msg);
			char what[96];
			if (got == -1) {
				x->skipped++;
				continue;
			}
			snprintf(what, sizeof what, "%s %s", c.t[ti].name, mut_names[m]);
			if (got == want) {
				if (want == KGB_V_PASS)
					x->accepted++;
				else
					x->rejected++;
			} else if (want == KGB_V_PASS) {
				note_failure(x, "  %s: %s was REJECTED: %s\n", head, what, msg);
			} else if (got == KGB_V_PASS) {
				note_failure(x, "  %s: mutant %s PASSED%s\n", head, what, "");
			} else {
				char wv[160];
				snprintf(wv, sizeof wv, "rejected as %s, expected %s: %.100s", kgb_verdict_name(got),
				         kgb_verdict_name(want), msg);
				note_failure(x, "  %s: mutant %s %s\n", head, what, wv);
			}
		}
	}
	kgb_hostbufs_release(&x->in);
	kgb_hostbufs_release(&x->ref);
	kgb_case_release(&c);
	x->c = NULL;
}

TEST(selftest_catalog_mutants)
{
	st_ctx_t *x = calloc(1, sizeof *x);
	size_t nops = kgb_catalog_count(), ncases = 0;
	ASSERT_TRUE(x != NULL);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	ASSERT_TRUE(nops >= 12);
	for (size_t i = 0; i < nops; i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		uint32_t n = kgb_op_case_count(op);
		uint32_t last = UINT32_MAX;
		if (n <= 12) {
			for (uint32_t ci = 0; ci < n; ci++, ncases++)
				selftest_case(x, op, ci);
			continue;
		}
		for (uint32_t k = 0; k < 8; k++) {
			uint32_t ci = (uint32_t)((uint64_t)k * (n - 1) / 7);
			if (ci == last)
				continue;
			last = ci;
			selftest_case(x, op, ci);
			ncases++;
		}
	}
	printf("selftest: %zu operators, %zu cases, %zu mutants rejected, %zu accepted\n", nops, ncases,
	       x->rejected, x->accepted);
	if (x->failures) {
		fprintf(stderr, "selftest: %zu failures:\n%s", x->failures, x->fail_text);
		FAIL("%zu self-test failures (listed above)", x->failures);
	}
	/* every case contributes at least the reference and some rejected mutants */
	ASSERT_TRUE(x->accepted >= ncases);
	ASSERT_TRUE(x->rejected >= 4 * ncases);
	free(x);
}
