/* Unit tests of the validator (common/validate.c) on hand-built buffers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "test.h"
#include "validate.h"

/* A test operator: self:in [n], out:out [n] of `dtype`, optionally strided; and
 * y:inout [n] with stride 2 when layout=inout. */
static int vt_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt;
	int64_t n = 8;
	const char *layout = kgb_case_pstr(c, "layout", "contig");
	if (kgb_dtype_parse(kgb_case_pstr(c, "dtype", "f32"), &dt) != 0)
		return kgb_err(err, errlen, "bad dtype");
	kgb_case_add_tensor(c, "self", KGB_ROLE_IN, dt, 1, &n);
	if (strcmp(layout, "inout") == 0) {
		kgb_tensor_t *y = kgb_case_add_tensor(c, "y", KGB_ROLE_INOUT, dt, 1, &n);
		y->stride[0] = 2;
		kgb_tensor_finish(y);
	} else {
		kgb_tensor_t *o = kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, 1, &n);
		if (kgb_tensor_layout(o, layout) != 0)
			return kgb_err(err, errlen, "bad layout");
	}
	c->rtol = kgb_case_pfloat(c, "rtol", -1);
	c->atol_rel = kgb_case_pfloat(c, "atol_rel", -1);
	return 0;
}

static int vt_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	(void)c;
	(void)b;
	return 0;
}

/* case 0: f32 contig, 1: f32 strided, 2: i32 contig, 3: f16 contig, 4: f32 inout,
 * 5: f32 with rtol 1e-3 and atol_rel 0.01 */
static const kgb_op_t vt_op = {
	.name = "validate_test_op",
	.source = "test",
	.signature = "self:in out:out",
	.grids = {
		{ .params = { { "dtype", "f32" }, { "layout", "contig strided" } } },
		{ .params = { { "dtype", "i32 f16" }, { "layout", "contig" } } },
		{ .params = { { "dtype", "f32" }, { "layout", "inout" } } },
		{ .params = { { "dtype", "f32" }, { "layout", "contig" }, { "rtol", "1e-3" }, { "atol_rel", "0.01" } } },
	},
	.setup = vt_setup,
	.ref = vt_ref,
};

typedef struct vt {
	kgb_case_t c;
	kgb_hostbufs_t ref;
	uint8_t *up[2], *r1[2], *r2[2];
	kgb_validate_in_t in;
	kgb_validate_out_t out;
} vt_t;

static size_t nbytes(const kgb_tensor_t *t)
{
	return t->storage * kgb_dtype_size(t->dtype);
}

/* Build case ci with ref values out[i] = vals[i] (self[i] = i + 1), and buffers of
 * two correct runs. */
static void vt_init(vt_t *v, uint32_t ci, const double *vals)
{
	char err[256];
	memset(v, 0, sizeof *v);
	ASSERT_OK(kgb_case_build(&vt_op, ci, &v->c, err, sizeof err), err);
	ASSERT_EQ_INT(v->c.ntensors, 2);
	v->ref.n = 2;
	for (int i = 0; i < 2; i++) {
		const kgb_tensor_t *t = &v->c.t[i];
		int64_t idx[KGB_MAX_DIMS] = { 0 };
		size_t k = 0;
		v->ref.v[i] = calloc(t->storage, sizeof(double));
		v->up[i] = malloc(nbytes(t));
		v->r1[i] = malloc(nbytes(t));
		v->r2[i] = malloc(nbytes(t));
		for (size_t j = 0; j < t->storage; j++)
			v->ref.v[i][j] = t->role == KGB_ROLE_IN ? (double)(j + 1) : -3.0;
		if (t->role == KGB_ROLE_OUT)
			memset(v->up[i], KGB_POISON1, nbytes(t));
		else
			kgb_tensor_pack(t, v->ref.v[i], v->up[i]);  /* INOUT: gaps hold -3 */
		memcpy(v->r1[i], v->up[i], nbytes(t));
		memcpy(v->r2[i], v->up[i], nbytes(t));
		if (t->role == KGB_ROLE_OUT)
			memset(v->r2[i], KGB_POISON2, nbytes(t));
		if (t->role != KGB_ROLE_IN) {
			do {
				size_t off = kgb_tensor_offset(t, idx);
				v->ref.v[i][off] = vals[k++];
				kgb_dtype_store(t->dtype, v->r1[i], off, vals[k - 1]);
				kgb_dtype_store(t->dtype, v->r2[i], off, vals[k - 1]);
			} while (kgb_index_next(t, idx));
		}
		v->in.uploaded[i] = v->up[i];
		v->in.run1[i] = v->r1[i];
		v->in.run2[i] = v->r2[i];
	}
	v->in.c = &v->c;
	v->in.ref = &v->ref;
	v->in.poison1 = KGB_POISON1;
	v->in.poison2 = KGB_POISON2;
}

static void vt_free(vt_t *v)
{
	for (int i = 0; i < 2; i++) {
		free(v->up[i]);
		free(v->r1[i]);
		free(v->r2[i]);
	}
	kgb_hostbufs_release(&v->ref);
	kgb_case_release(&v->c);
}

static int vt_run(vt_t *v)
{
	kgb_validate(&v->in, &v->out);
	return v->out.verdict;
}

static const double vals8[8] = { 1.5, -2.25, 3, 0.125, 7, -1, 2, 0.5 };

TEST(validate_verdict_names)
{
	ASSERT_EQ_STR(kgb_verdict_name(KGB_V_PASS), "pass");
	ASSERT_EQ_STR(kgb_verdict_name(KGB_V_OUT_OF_BOUNDS_WRITE), "out_of_bounds_write");
	ASSERT_EQ_STR(kgb_verdict_name(KGB_V_STALE_RESULT), "stale_result");
	for (int i = 0; i < KGB_V__COUNT; i++)   /* numbers not (yet) given a name read "unknown" */
		if (strcmp(kgb_verdict_name(i), "unknown") != 0)
			ASSERT_EQ_INT(kgb_verdict_parse(kgb_verdict_name(i)), i);
	ASSERT_EQ_INT(kgb_verdict_parse("nonsense"), -1);
	ASSERT_EQ_STR(kgb_verdict_name(999), "unknown");
}

TEST(validate_correct_run_passes)
{
	vt_t v;
	vt_init(&v, 0, vals8);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	ASSERT_NEAR(v.out.max_abs_err, 0, 0);
	vt_free(&v);
}

TEST(validate_guard_and_input)
{
	vt_t v;
	vt_init(&v, 0, vals8);
	v.in.guard_broken[1] = true;
	ASSERT_EQ_INT(vt_run(&v), KGB_V_OUT_OF_BOUNDS_WRITE);
	ASSERT_CONTAINS(v.out.message, "out");
	v.in.guard_broken[1] = false;
	kgb_dtype_store(KGB_DT_F32, v.r2[0], 5, 42.0);   /* input changed in run 2 */
	ASSERT_EQ_INT(vt_run(&v), KGB_V_INPUT_MODIFIED);
	ASSERT_CONTAINS(v.out.message, "self");
	ASSERT_CONTAINS(v.out.message, "element 5");
	vt_free(&v);
}

TEST(validate_unwritten_needs_both_poisons)
{
	vt_t v;
	vt_init(&v, 0, vals8);
	memset(v.r1[1] + 3 * 4, KGB_POISON1, 4);
	memset(v.r2[1] + 3 * 4, KGB_POISON2, 4);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_UNWRITTEN_OUTPUT);
	ASSERT_CONTAINS(v.out.message, "out[3]");
	/* written in run 2 (so run 1's poison is a NaN result, not a missing write) */
	kgb_dtype_store(KGB_DT_F32, v.r2[1], 3, vals8[3]);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
	vt_free(&v);
}

TEST(validate_integer_minus_one_is_not_poison)
{
	/* i32: -1 is the bit pattern of poison 0xFF; the second poison tells them apart */
	vt_t v;
	double w = 0;
	char msg[256];
	vt_init(&v, 2, vals8);
	ASSERT_EQ_INT(v.c.t[1].dtype, KGB_DT_I32);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	ASSERT_EQ_INT(kgb_validate_output(&v.c, &v.ref, NULL, 1, v.r1[1], KGB_POISON1, &w, NULL, msg, sizeof msg),
	              KGB_V_PASS);
	kgb_dtype_store(KGB_DT_I32, v.r2[1], 0, 2.0);     /* integers compare exactly */
	ASSERT_EQ_INT(vt_run(&v), KGB_V_NONDETERMINISTIC);
	vt_free(&v);
}

TEST(validate_wrong_message)
{
	vt_t v;
	vt_init(&v, 0, vals8);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 4, 7.5);
	kgb_dtype_store(KGB_DT_F32, v.r2[1], 4, 7.5);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
	ASSERT_CONTAINS(v.out.message, "out[4] (4) = 7.5, expected 7");
	ASSERT_CONTAINS(v.out.message, "tol");
	ASSERT_NEAR(v.out.max_abs_err, 0.5, 1e-12);
	vt_free(&v);
}

TEST(validate_nan_and_inf)
{
	double r[8];
	vt_t v;
	memcpy(r, vals8, sizeof r);
	r[2] = NAN;
	r[5] = INFINITY;
	vt_init(&v, 0, r);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);      /* NaN where the reference is NaN */
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 2, 1.0);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);   /* a number where NaN is expected */
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 2, NAN);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 5, -INFINITY);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 5, INFINITY);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 0, NAN);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);   /* NaN where a number is expected */
	ASSERT_CONTAINS(v.out.message, "out[0]");
	vt_free(&v);
}

TEST(validate_tolerance_boundary)
{
	/* case 5: rtol 1e-3, atol_rel 0.01 -> atol = 0.01 * max|ref| = 0.07 */
	vt_t v;
	double tol = 0.07 + 1e-3 * 2.0;   /* at element 6 (ref 2) */
	vt_init(&v, 5, vals8);
	ASSERT_NEAR(v.c.rtol, 1e-3, 0);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 6, 2.0 + 0.9 * tol);
	kgb_dtype_store(KGB_DT_F32, v.r2[1], 6, 2.0 + 0.9 * tol);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 6, 2.0 + 1.1 * tol);
	kgb_dtype_store(KGB_DT_F32, v.r2[1], 6, 2.0 + 1.1 * tol);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
	vt_free(&v);
}

TEST(validate_tiny_outputs_reject_zeros)
{
	/* outputs of order 1e-5 (softmax over many columns): zeros must not pass */
	double r[8], z[8] = { 0 };
	vt_t v;
	char msg[256];
	for (int i = 0; i < 8; i++)
		r[i] = 2.5e-5 * (1 + 0.1 * i);
	vt_init(&v, 0, r);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	for (int i = 0; i < 8; i++) {
		kgb_dtype_store(KGB_DT_F32, v.r1[1], (size_t)i, z[i]);
		kgb_dtype_store(KGB_DT_F32, v.r2[1], (size_t)i, z[i]);
	}
	ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
	ASSERT_EQ_INT(kgb_validate_output(&v.c, &v.ref, NULL, 1, v.r1[1], -1, NULL, NULL, msg, sizeof msg),
	              KGB_V_WRONG_RESULT);
	vt_free(&v);
}

TEST(validate_strided_gaps)
{
	/* case 1: out is strided (stride 2): the gaps must keep their poison */
	vt_t v;
	char msg[256];
	vt_init(&v, 1, vals8);
	ASSERT_EQ_INT(v.c.t[1].stride[0], 2);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	ASSERT_EQ_INT(kgb_validate_output(&v.c, &v.ref, NULL, 1, v.r1[1], KGB_POISON1, NULL, NULL, msg, sizeof msg),
	              KGB_V_PASS);
	kgb_dtype_store(KGB_DT_F32, v.r1[1], 3, 0.0);   /* storage element 3 is a gap */
	ASSERT_EQ_INT(vt_run(&v), KGB_V_OUT_OF_BOUNDS_WRITE);
	ASSERT_CONTAINS(v.out.message, "storage element 3");
	ASSERT_EQ_INT(kgb_validate_output(&v.c, &v.ref, NULL, 1, v.r1[1], KGB_POISON1, NULL, NULL, msg, sizeof msg),
	              KGB_V_OUT_OF_BOUNDS_WRITE);
	vt_free(&v);
}

TEST(validate_inout_gaps)
{
	/* case 4: y is INOUT with stride 2; its gaps hold the uploaded values */
	vt_t v;
	vt_init(&v, 4, vals8);
	ASSERT_EQ_INT(v.c.t[1].role, KGB_ROLE_INOUT);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	kgb_dtype_store(KGB_DT_F32, v.r2[1], 1, 5.0);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_OUT_OF_BOUNDS_WRITE);
	ASSERT_CONTAINS(v.out.message, "run 2");
	vt_free(&v);
}

TEST(validate_f16_rounding_of_reference)
{
	/* the reference (double) is rounded to f16 before the compare: the correctly
	 * rounded f16 value passes with zero error */
	double r[8];
	vt_t v;
	for (int i = 0; i < 8; i++)
		r[i] = 1.0 / 3.0 + i;
	vt_init(&v, 3, r);
	ASSERT_EQ_INT(v.c.t[1].dtype, KGB_DT_F16);
	ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
	ASSERT_NEAR(v.out.max_abs_err, 0, 0);
	vt_free(&v);
}

TEST(validate_pack_roundtrip)
{
	vt_t v;
	double back[8];
	uint8_t raw[16];
	vt_init(&v, 3, vals8);
	kgb_tensor_pack(&v.c.t[1], vals8, raw);
	kgb_tensor_unpack(&v.c.t[1], raw, back);
	for (int i = 0; i < 8; i++)
		ASSERT_NEAR(back[i], vals8[i], 0);   /* all exactly representable in f16 */
	vt_free(&v);
}

/* Outputs poisoned with per-element arrays (the executor's random poison): run 1 holds
 * b1, run 2 holds b2 = -b1 before the kernel; the kernel's values replace them. */
static void vt_poison_arrays(vt_t *v, float *b1, float *b2)
{
	const kgb_tensor_t *t = &v->c.t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	for (size_t j = 0; j < t->storage; j++) {
		b1[j] = (float)(1000.0 + 37.0 * (double)j);
		b2[j] = -b1[j];
	}
	memcpy(v->r1[1], b1, t->storage * 4);
	memcpy(v->r2[1], b2, t->storage * 4);
	do {
		size_t off = kgb_tensor_offset(t, idx);
		kgb_dtype_store(t->dtype, v->r1[1], off, v->ref.v[1][off]);
		kgb_dtype_store(t->dtype, v->r2[1], off, v->ref.v[1][off]);
	} while (kgb_index_next(t, idx));
	v->in.before1[1] = b1;
	v->in.before2[1] = b2;
}

TEST(validate_poison_arrays)
{
	vt_t v;
	float b1[16], b2[16];
	char msg[256];
	for (uint32_t ci = 0; ci < 2; ci++) {   /* contiguous, then strided (gaps keep the poison) */
		vt_init(&v, ci, vals8);
		ASSERT_TRUE(v.c.t[1].storage <= 16);
		vt_poison_arrays(&v, b1, b2);
		ASSERT_EQ_INT(vt_run(&v), KGB_V_PASS);
		size_t e = kgb_tensor_offset(&v.c.t[1], (int64_t[KGB_MAX_DIMS]){ 3 });
		/* element 3 left alone in both runs: unwritten */
		memcpy(v.r1[1] + e * 4, &b1[e], 4);
		memcpy(v.r2[1] + e * 4, &b2[e], 4);
		ASSERT_EQ_INT(vt_run(&v), KGB_V_UNWRITTEN_OUTPUT);
		ASSERT_CONTAINS(v.out.message, "out[3]");
		/* the old byte patterns mean nothing when the arrays are given */
		memset(v.r1[1] + e * 4, KGB_POISON1, 4);
		memset(v.r2[1] + e * 4, KGB_POISON2, 4);
		ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
		/* run 1's poison plus the right value (a kernel that folds the output in) */
		kgb_dtype_store(KGB_DT_F32, v.r1[1], e, (double)b1[e] + vals8[3]);
		kgb_dtype_store(KGB_DT_F32, v.r2[1], e, vals8[3]);
		ASSERT_EQ_INT(vt_run(&v), KGB_V_WRONG_RESULT);
		ASSERT_CONTAINS(v.out.message, "out[3]");
		/* alone: unwritten counted against `before` only when asked */
		memcpy(v.r1[1] + e * 4, &b1[e], 4);
		ASSERT_EQ_INT(kgb_validate_output_before(&v.c, &v.ref, NULL, 1, v.r1[1], b1, -1, true, NULL, NULL, msg,
		                                         sizeof msg), KGB_V_UNWRITTEN_OUTPUT);
		ASSERT_EQ_INT(kgb_validate_output_before(&v.c, &v.ref, NULL, 1, v.r1[1], b1, -1, false, NULL, NULL, msg,
		                                         sizeof msg), KGB_V_WRONG_RESULT);
		if (ci == 1) {
			/* a gap written: out of bounds, judged against the array */
			kgb_dtype_store(KGB_DT_F32, v.r1[1], e, vals8[3]);
			kgb_dtype_store(KGB_DT_F32, v.r1[1], 1, 5.0);
			ASSERT_EQ_INT(kgb_validate_output_before(&v.c, &v.ref, NULL, 1, v.r1[1], b1, -1, false, NULL, NULL,
			                                         msg, sizeof msg), KGB_V_OUT_OF_BOUNDS_WRITE);
		}
		vt_free(&v);
	}
}

TEST(validate_nan_result_with_nan_poison)
{
	/* f32 poison 0xFF.. is a NaN: where the correct value is NaN too (fmax of two
	 * NaNs), a written NaN may carry exactly the poison's bits, and is not unwritten */
	vt_t v;
	double w = 0;
	char msg[256];
	vt_init(&v, 0, vals8);
	v.ref.v[1][3] = NAN;
	memset(v.r1[1] + 3 * 4, 0xFF, 4);
	ASSERT_EQ_INT(kgb_validate_output(&v.c, &v.ref, NULL, 1, v.r1[1], 0xFF, &w, NULL, msg, sizeof msg),
	              KGB_V_PASS);
	/* where the correct value is a number, the poison's bits still mean never written */
	memset(v.r1[1] + 4 * 4, 0xFF, 4);
	ASSERT_EQ_INT(kgb_validate_output(&v.c, &v.ref, NULL, 1, v.r1[1], 0xFF, &w, NULL, msg, sizeof msg),
	              KGB_V_UNWRITTEN_OUTPUT);
	ASSERT_CONTAINS(msg, "out[4]");
	vt_free(&v);
}
