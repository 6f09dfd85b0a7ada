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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "test.h"
#include "validate.h"

typedef enum {
	MUT_NONE = 0,        /* the reference itself */
	MUT_PERTURB,         /* every element moved by 0.5 * tol */
	MUT_STEP,            /* every element one step of its dtype away (up or down) */
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
	"reference", "perturbed", "one-step", "zeros", "constant", "input-copied", "one-element-off",
	"half-unwritten", "nan", "gap-write", "input-modified", "race",
};

typedef struct st_ctx {
	const kgb_case_t *c;
	kgb_hostbufs_t in;       /* inputs (INOUT: before the op) */
	kgb_hostbufs_t ref;      /* inputs and reference outputs */
	uint8_t *up[KGB_MAX_TENSORS];    /* uploaded bytes (OUT: poison 1) */
	uint8_t *good1[KGB_MAX_TENSORS]; /* what a correct run leaves (OUT gaps: poison 1) */
	uint8_t *good2[KGB_MAX_TENSORS]; /* same, second run (poison 2) */
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

/* |re + i im| for the complex mutants (values here never come near overflow). */
static double cmod(double re, double im)
{
	return sqrt(re * re + im * im);
}

/* The validator's per-tensor absolute tolerance term (validate.h). */
static double tensor_atol(const kgb_case_t *c, const kgb_tensor_t *t, const double *rv)
{
	double m = 0;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	size_t L = (size_t)kgb_dtype_lanes(t->dtype);
	if (c->rtol == 0 && c->atol_rel == 0)
		return 0;
	if (t->numel)
		do {
			size_t o = kgb_tensor_offset(t, idx) * L;
			double r = kgb_dtype_round(t->dtype, rv[o]);
			if (L == 2)   /* complex: the modulus (validate.c) */
				r = cmod(r, kgb_dtype_round(t->dtype, rv[o + 1]));
			if (isfinite(r))
				m = fmax(m, fabs(r));
		} while (kgb_index_next(t, idx));
	return fmax(c->atol_rel * m, 1e-30);
}

static size_t storage_bytes(const kgb_tensor_t *t)
{
	return (t->storage ? t->storage : 1) * kgb_dtype_size(t->dtype);
}

static uint8_t *dup_bytes(const uint8_t *b, size_t n)
{
	uint8_t *d = malloc(n);
	ASSERT_TRUE(d != NULL);
	memcpy(d, b, n);
	return d;
}

/* Uploaded bytes and the bytes of a correct run, for every tensor of the case. */
static void prepare_case(st_ctx_t *x)
{
	const kgb_case_t *c = x->c;
	for (int i = 0; i < c->ntensors; i++) {
		const kgb_tensor_t *t = &c->t[i];
		size_t nb = storage_bytes(t);
		int64_t idx[KGB_MAX_DIMS] = { 0 };
		x->up[i] = malloc(nb);
		ASSERT_TRUE(x->up[i] != NULL);
		if (t->role == KGB_ROLE_OUT)
			memset(x->up[i], KGB_POISON1, nb);
		else
			kgb_tensor_pack(t, x->in.v[i], x->up[i]);
		x->good1[i] = dup_bytes(x->up[i], nb);
		x->good2[i] = dup_bytes(x->up[i], nb);
		if (t->role == KGB_ROLE_OUT)
			memset(x->good2[i], KGB_POISON2, nb);
		if (t->role == KGB_ROLE_IN || t->numel == 0)
			continue;
		do {
			size_t L = (size_t)kgb_dtype_lanes(t->dtype), off = kgb_tensor_offset(t, idx) * L;
			for (size_t l = 0; l < L; l++) {
				kgb_dtype_store(t->dtype, x->good1[i], off + l, x->ref.v[i][off + l]);
				kgb_dtype_store(t->dtype, x->good2[i], off + l, x->ref.v[i][off + l]);
			}
		} while (kgb_index_next(t, idx));
	}
}

static void release_case(st_ctx_t *x)
{
	for (int i = 0; i < KGB_MAX_TENSORS; i++) {
		free(x->up[i]);
		free(x->good1[i]);
		free(x->good2[i]);
		x->up[i] = x->good1[i] = x->good2[i] = NULL;
	}
}

/* A value clearly outside the tolerance of r (by 10 tol and a bit, or more when the
 * dtype cannot resolve that), for the element mutants. */
static double off_value(const kgb_tensor_t *t, double r, double tol, double s)
{
	double w;
	if (t->dtype == KGB_DT_BOOL)
		return r != 0 ? 0 : 1;
	if (!kgb_dtype_is_float(t->dtype) && !kgb_dtype_is_complex(t->dtype))
		return r + 1;
	w = kgb_dtype_round(t->dtype, r + s * (10.0 * tol * 1.01));
	if (!(fabs(w - r) > tol))
		w = kgb_dtype_round(t->dtype, r + s * (0.5 * fabs(r) + 1.0));
	/* a saturating dtype (fp8) can round the move away at its largest value: go the
	 * other way */
	if (!(fabs(w - r) > tol))
		w = kgb_dtype_round(t->dtype, r - s * (0.5 * fabs(r) + 1.0));
	return w;
}

/* Mutate output tensor ti according to m and judge it. Returns the verdict, or -1 when
 * the mutant does not apply (or equals the reference: nothing to reject). */
static int judge(st_ctx_t *x, int ti, mutant_t m, char *msg, size_t msglen)
{
	const kgb_case_t *c = x->c;
	const kgb_tensor_t *t = &c->t[ti];
	size_t nb = storage_bytes(t), es = kgb_dtype_size(t->dtype);
	double atol = tensor_atol(c, t, x->ref.v[ti]);
	bool isf = kgb_dtype_is_float(t->dtype) || kgb_dtype_is_complex(t->dtype);
	bool exact = c->rtol == 0 && c->atol_rel == 0;
	/* complex outputs: L = 2 values per element (real, imaginary); the element
	 * mutants move the real part, the tolerance is on the modulus (validate.c) */
	size_t L = (size_t)kgb_dtype_lanes(t->dtype);
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	size_t k = 0, pick = t->numel ? (size_t)(kgb_rng_next(&x->rng) % t->numel) : 0;
	size_t poff = kgb_tensor_flat_offset(t, pick);
	kgb_validate_in_t in;
	kgb_validate_out_t out;
	uint8_t *m1 = NULL, *m2 = NULL, *inmod = NULL;
	int verdict = -1, first_in = -1;
	double mean = 0, pr = 0, ptol = 0;
	size_t nfar = 0;
	for (int i = 0; i < c->ntensors; i++)
		if (c->t[i].role == KGB_ROLE_IN && first_in < 0)
			first_in = i;
	if (t->numel == 0)
		return -1;
	if ((m == MUT_PERTURB || m == MUT_ONE_OFF || m == MUT_COPY_INPUT || m == MUT_RACE) && c->op->check)
		return -1;
	if ((m == MUT_PERTURB || m == MUT_STEP) && exact)
		return -1;
	if (m == MUT_STEP && (!isf || c->op->check || L == 2))
		return -1;
	if (m == MUT_NAN && !isf)
		return -1;
	if (m == MUT_GAP_WRITE && t->storage == t->numel)
		return -1;
	if (m == MUT_INPUT_WRITE && (first_in < 0 || c->t[first_in].numel == 0))
		return -1;
	if (m == MUT_COPY_INPUT && t->role == KGB_ROLE_OUT &&
	    (first_in < 0 || c->t[first_in].numel != t->numel))
		return -1;
	pr = kgb_dtype_round(t->dtype, x->ref.v[ti][poff * L]);
	ptol = L == 2 ? atol + c->rtol * cmod(pr, kgb_dtype_round(t->dtype, x->ref.v[ti][poff * L + 1]))
	              : kgb_validate_elem_tol(c, t->dtype, pr, atol);
	if ((m == MUT_ONE_OFF || m == MUT_RACE || m == MUT_NAN) && !isfinite(pr))
		return -1;
	m1 = dup_bytes(x->good1[ti], nb);
	m2 = dup_bytes(x->good2[ti], nb);
	switch (m) {
	case MUT_NONE:
		break;
	case MUT_ONE_OFF:
		kgb_dtype_store(t->dtype, m1, poff * L, off_value(t, pr, ptol, 1.0));
		kgb_dtype_store(t->dtype, m2, poff * L, off_value(t, pr, ptol, 1.0));
		break;
	case MUT_RACE:
		kgb_dtype_store(t->dtype, m2, poff * L, off_value(t, pr, ptol, -1.0));
		break;
	case MUT_NAN:
		kgb_dtype_store(t->dtype, m1, poff * L, NAN);
		kgb_dtype_store(t->dtype, m2, poff * L, NAN);
		break;
	case MUT_GAP_WRITE: {
		uint8_t *mask = calloc(t->storage, 1);
		ASSERT_TRUE(mask != NULL);
		do
			mask[kgb_tensor_offset(t, idx)] = 1;
		while (kgb_index_next(t, idx));
		for (size_t j = 0; j < t->storage; j++) {
			if (!mask[j]) {
				m1[j * es] ^= 0x01;
				break;
			}
		}
		free(mask);
		break;
	}
	case MUT_INPUT_WRITE: {
		const kgb_tensor_t *u = &c->t[first_in];
		size_t off = kgb_tensor_flat_offset(u, pick % u->numel);
		inmod = dup_bytes(x->good1[first_in], storage_bytes(u));
		inmod[off * kgb_dtype_size(u->dtype)] ^= 0x01;   /* lowest byte: always a change */
		break;
	}
	default:
		/* whole-tensor mutants */
		double mean_im = 0;
		if (m == MUT_CONST) {
			do {
				size_t o = kgb_tensor_offset(t, idx) * L;
				double r = kgb_dtype_round(t->dtype, x->ref.v[ti][o]);
				if (isfinite(r))
					mean += r / (double)t->numel;
				if (L == 2 && isfinite(x->ref.v[ti][o + 1]))
					mean_im += kgb_dtype_round(t->dtype, x->ref.v[ti][o + 1]) / (double)t->numel;
			} while (kgb_index_next(t, idx));
			memset(idx, 0, sizeof idx);
		}
		do {
			size_t eoff = kgb_tensor_offset(t, idx);
			double ws[2] = { 0, 0 }, rs[2] = { 0, 0 }, tol, dist2 = 0;
			bool keep1 = false, keep2 = false, far, nanmis = false;
			for (size_t l = 0; l < L; l++)
				rs[l] = kgb_dtype_round(t->dtype, x->ref.v[ti][eoff * L + l]);
			tol = L == 2 ? atol + c->rtol * cmod(rs[0], rs[1]) : kgb_validate_elem_tol(c, t->dtype, rs[0], atol);
			for (size_t l = 0; l < L; l++) {
				size_t off = eoff * L + l;
				double r = rs[l], w = r;
				switch (m) {
				case MUT_PERTURB:
					if (isfinite(r))
						w = kgb_dtype_round(t->dtype,
						                    r + (kgb_rng_uniform(&x->rng) < 0.5 ? -0.5 : 0.5) * tol);
					break;
				case MUT_STEP:
					if (isfinite(r))
						w = r + (kgb_rng_uniform(&x->rng) < 0.5 ? -1.0 : 1.0) * kgb_dtype_step(t->dtype, r);
					break;
				case MUT_ZEROS:
					w = 0;
					break;
				case MUT_CONST:
					w = t->dtype == KGB_DT_BOOL ? 1.0 : l ? mean_im : mean;
					break;
				case MUT_COPY_INPUT:
					if (t->role != KGB_ROLE_OUT)
						w = x->in.v[ti][off];
					else if (l < (size_t)kgb_dtype_lanes(c->t[first_in].dtype))
						w = x->in.v[first_in][kgb_tensor_flat_offset(&c->t[first_in], k) *
						                      (size_t)kgb_dtype_lanes(c->t[first_in].dtype) + l];
					else
						w = 0;
					break;
				case MUT_HALF_UNWRITTEN:
					if (k < (t->numel + 1) / 2) {
						if (t->role == KGB_ROLE_OUT)
							keep1 = keep2 = true;     /* poison stays */
						else
							w = x->in.v[ti][off];     /* INOUT: left as uploaded */
					}
					break;
				default:
					break;
				}
				ws[l] = kgb_dtype_round(t->dtype, w);
			}
			for (size_t l = 0; l < L; l++) {
				if (isnan(rs[l]) != isnan(ws[l]))
					nanmis = true;
				else if (!isnan(rs[l]))
					dist2 += (ws[l] - rs[l]) * (ws[l] - rs[l]);
			}
			far = keep1 || nanmis || !(sqrt(dist2) <= tol);
			if (far)
				nfar++;
			if (keep1) {
				memset(m1 + eoff * es, KGB_POISON1, es);
				memset(m2 + eoff * es, KGB_POISON2, es);
			} else {
				for (size_t l = 0; l < L; l++) {
					kgb_dtype_store(t->dtype, m1, eoff * L + l, ws[l]);
					kgb_dtype_store(t->dtype, m2, eoff * L + l, ws[l]);
				}
			}
			k++;
		} while (kgb_index_next(t, idx));
		/* a mutant within tolerance of the reference everywhere is a right answer */
		if (m != MUT_PERTURB && m != MUT_STEP && nfar == 0)
			goto out;
		break;
	}
	memset(&in, 0, sizeof in);
	in.c = c;
	in.ref = &x->ref;
	in.poison1 = KGB_POISON1;
	in.poison2 = KGB_POISON2;
	for (int i = 0; i < c->ntensors; i++) {
		in.uploaded[i] = x->up[i];
		in.run1[i] = i == ti ? m1 : x->good1[i];
		in.run2[i] = i == ti ? m2 : x->good2[i];
	}
	if (inmod)
		in.run1[first_in] = inmod;
	kgb_validate(&in, &out);
	verdict = out.verdict;
	kgb_strlcpy(msg, out.message, msglen);
	/* the single-buffer entry point must agree on run 1 (checked on the mutants that
	 * exercise each of its rules; the input and race mutants involve other buffers) */
	if (m == MUT_NONE || m == MUT_ZEROS || m == MUT_ONE_OFF || m == MUT_HALF_UNWRITTEN || m == MUT_GAP_WRITE) {
		char mm[256];
		int v2 = kgb_validate_output(c, &x->ref, &x->in, ti, m1, t->role == KGB_ROLE_OUT ? (int)KGB_POISON1 : -1,
		                             NULL, NULL, mm, sizeof mm);
		if ((v2 == KGB_V_PASS) != (verdict == KGB_V_PASS)) {
			snprintf(msg, msglen, "kgb_validate says %s but kgb_validate_output says %s (%.150s)",
			         kgb_verdict_name(verdict), kgb_verdict_name(v2), mm);
			verdict = -2;
		}
	}
out:
	free(m1);
	free(m2);
	free(inmod);
	return verdict;
}

static int expected_verdict(const kgb_case_t *c, int ti, mutant_t m)
{
	switch (m) {
	case MUT_NONE:
	case MUT_PERTURB:
	case MUT_STEP: return KGB_V_PASS;
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
	prepare_case(x);
	kgb_rng_seed(&x->rng, 0x5e1f7e57ull ^ ci);
	snprintf(head, sizeof head, "%s case %u (%s)", op->name, ci, c.label);
	for (int ti = 0; ti < c.ntensors; ti++) {
		bool large = c.t[ti].numel > (1u << 16) && !getenv("KGB_SELFTEST_FULL");
		if (c.t[ti].role == KGB_ROLE_IN)
			continue;
		for (int m = 0; m < MUT__COUNT; m++) {
			int want, got;
			/* large outputs: the mutants that exercise the tolerance and the poison
			 * (the others only repeat what the small cases show), unless
			 * KGB_SELFTEST_FULL is set */
			if (large && m != MUT_NONE && m != MUT_PERTURB && m != MUT_STEP && m != MUT_ZEROS && m != MUT_ONE_OFF &&
			    m != MUT_HALF_UNWRITTEN)
				continue;
			want = expected_verdict(&c, ti, (mutant_t)m);
			got = judge(x, ti, (mutant_t)m, msg, sizeof msg);
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
	release_case(x);
	kgb_hostbufs_release(&x->in);
	kgb_hostbufs_release(&x->ref);
	kgb_case_release(&c);
	x->c = NULL;
}

static bool case_is_large(const kgb_op_t *op, uint32_t ci)
{
	kgb_case_t c;
	char err[256];
	bool large = false;
	if (kgb_case_build(op, ci, &c, err, sizeof err) != 0)
		return false;   /* selftest_case reports it */
	for (int i = 0; i < c.ntensors; i++)
		if (c.t[i].storage > (1u << 18))
			large = true;
	kgb_case_release(&c);
	return large;
}

/* Operators with ATen overloads: the first small case of every overload the spread
 * sample missed, so that each overload's argument set is checked. */
static size_t overload_cases(st_ctx_t *x, const kgb_op_t *op, const bool *done)
{
	const char *names[KGB_MAX_OVERLOADS];
	bool seen[KGB_MAX_OVERLOADS] = { false };
	int no = kgb_op_overloads(op, names, NULL), left = no;
	uint32_t n = kgb_op_case_count(op);
	size_t ran = 0;
	char err[256];
	for (uint32_t ci = 0; ci < n && left > 0; ci++) {
		kgb_case_t c;
		const char *o;
		int k;
		ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
		o = kgb_case_pstr(&c, KGB_OVERLOAD_PARAM, "");
		for (k = 0; k < no && strcmp(names[k], o) != 0; k++)
			;
		kgb_case_release(&c);
		ASSERT_TRUE(k < no);
		if (seen[k])
			continue;
		if (done[ci]) {
			seen[k] = true;
			left--;
			continue;
		}
		if (case_is_large(op, ci))
			continue;
		seen[k] = true;
		left--;
		selftest_case(x, op, ci);
		ran++;
	}
	return ran;
}

/* With KGB_SELFTEST_TIMES set: one line per operator with the wall time and the CPU
 * time (all threads) it took; on a loaded machine only the second means much. */
static void op_time(bool times, const kgb_op_t *op, const struct timespec t0[2])
{
	struct timespec t1[2];
	if (!times)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1[0]);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1[1]);
	printf("selftest time %-40s %8.3f s wall %8.3f s cpu\n", op->name,
	       (double)(t1[0].tv_sec - t0[0].tv_sec) + 1e-9 * (double)(t1[0].tv_nsec - t0[0].tv_nsec),
	       (double)(t1[1].tv_sec - t0[1].tv_sec) + 1e-9 * (double)(t1[1].tv_nsec - t0[1].tv_nsec));
}

/* Run the self-test over the operators i with i % nshards == shard (the catalog is
 * split so that each test stays within the runner's time limit). KGB_SELFTEST_OP=name
 * restricts it to one operator. */
static void run_shard(unsigned shard, unsigned nshards)
{
	st_ctx_t *x = calloc(1, sizeof *x);
	size_t nops = kgb_catalog_count(), ncases = 0, nrun = 0;
	const char *only = getenv("KGB_SELFTEST_OP");
	bool full = getenv("KGB_SELFTEST_FULL") != NULL, times = getenv("KGB_SELFTEST_TIMES") != NULL;
	ASSERT_TRUE(x != NULL);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	setenv("KGB_REF_CACHE_MB", "0", 1);   /* every reference is used once here */
	ASSERT_TRUE(nops >= 12);
	for (size_t i = 0; i < nops; i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		uint32_t n = kgb_op_case_count(op);
		uint32_t last = UINT32_MAX, nlarge;
		struct timespec t0[2];
		if (only ? strcmp(op->name, only) != 0 : i % nshards != shard)
			continue;
		nrun++;
		clock_gettime(CLOCK_MONOTONIC, &t0[0]);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0[1]);
		nlarge = 0;
		bool *done = calloc(n, sizeof *done);
		ASSERT_TRUE(done != NULL);
		if (n <= 12) {
			for (uint32_t ci = 0; ci < n; ci++) {
				if (!full && case_is_large(op, ci) && nlarge++)
					continue;
				selftest_case(x, op, ci);
				done[ci] = true;
				ncases++;
			}
			ncases += overload_cases(x, op, done);
			free(done);
			op_time(times, op, t0);
			continue;
		}
		/* 8 cases spread over the grids; at most one large one (the cost of a case
		 * is linear in its size, and one is enough to check the tolerance of long
		 * reductions), unless KGB_SELFTEST_FULL is set */
		for (uint32_t k = 0; k < 8; k++) {
			uint32_t ci = (uint32_t)((uint64_t)k * (n - 1) / 7);
			uint32_t end = k == 7 ? n : (uint32_t)((uint64_t)(k + 1) * (n - 1) / 7);
			for (; ci < end && ci != last; ci++) {
				if (!full && case_is_large(op, ci)) {
					if (nlarge)
						continue;
					nlarge++;
				}
				last = ci;
				selftest_case(x, op, ci);
				done[ci] = true;
				ncases++;
				break;
			}
		}
		ncases += overload_cases(x, op, done);
		free(done);
		op_time(times, op, t0);
	}
	printf("selftest (part %u of %u): %zu operators, %zu cases, %zu mutants rejected, %zu accepted\n",
	       shard + 1, nshards, nrun, ncases, x->rejected, x->accepted);
	if (x->failures) {
		fprintf(stderr, "selftest: %zu failures:\n%s", x->failures, x->fail_text);
		FAIL("%zu self-test failures (listed above)", x->failures);
	}
	/* every case contributes at least the reference and some rejected mutants */
	ASSERT_TRUE(x->accepted >= ncases);
	ASSERT_TRUE(x->rejected >= 3 * ncases);
	free(x);
}

#define SELFTEST_SHARDS 32
#define SELFTEST_PART(k) TEST(selftest_catalog_part##k) { run_shard(k, SELFTEST_SHARDS); }
SELFTEST_PART(0)
SELFTEST_PART(1)
SELFTEST_PART(2)
SELFTEST_PART(3)
SELFTEST_PART(4)
SELFTEST_PART(5)
SELFTEST_PART(6)
SELFTEST_PART(7)
SELFTEST_PART(8)
SELFTEST_PART(9)
SELFTEST_PART(10)
SELFTEST_PART(11)
SELFTEST_PART(12)
SELFTEST_PART(13)
SELFTEST_PART(14)
SELFTEST_PART(15)
SELFTEST_PART(16)
SELFTEST_PART(17)
SELFTEST_PART(18)
SELFTEST_PART(19)
SELFTEST_PART(20)
SELFTEST_PART(21)
SELFTEST_PART(22)
SELFTEST_PART(23)
SELFTEST_PART(24)
SELFTEST_PART(25)
SELFTEST_PART(26)
SELFTEST_PART(27)
SELFTEST_PART(28)
SELFTEST_PART(29)
SELFTEST_PART(30)
SELFTEST_PART(31)
