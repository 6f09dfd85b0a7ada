/* Operators with several ATen overloads or optional tensors: the overload parameter
 * and its symbols, plans whose kernels run "when" a condition holds, and the
 * validator's one-step rule. Uses the real catalog operators (sub, pow, linear, diff). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "plan.h"
#include "test.h"
#include "validate.h"

static int64_t sym_int(const kgb_case_t *c, const char *name)
{
	kgb_value_t v;
	if (!kgb_symtab_get(c->sym, name, &v))
		kgb_test_fail(__FILE__, __LINE__, "case %u of %s has no symbol %s", c->index, c->op->name, name);
	return v.is_float ? (int64_t)v.f : v.i;
}

/* Every case of every operator with an overload parameter: exactly one overload.NAME
 * is 1, it is the case's own, the label names it, and the counts add up. */
TEST(overload_symbols_every_case)
{
	size_t nops = 0;
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		const char *names[KGB_MAX_OVERLOADS];
		uint32_t counts[KGB_MAX_OVERLOADS], seen[KGB_MAX_OVERLOADS] = { 0 }, total = 0;
		int no = kgb_op_overloads(op, names, counts);
		if (no == 0)
			continue;
		nops++;
		for (int k = 0; k < no; k++)
			total += counts[k];
		ASSERT_EQ_INT(total, kgb_op_case_count(op));
		for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
			kgb_case_t c;
			char err[256], full[96], want[96];
			int ones = 0, own = -1;
			ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
			for (int k = 0; k < no; k++) {
				char sn[96];
				snprintf(sn, sizeof sn, "overload.%s", names[k]);
				if (sym_int(&c, sn)) {
					ones++;
					own = k;
				}
			}
			ASSERT_EQ_INT(ones, 1);
			seen[own]++;
			snprintf(want, sizeof want, "%s.%s", op->name, names[own]);
			ASSERT_EQ_STR(kgb_case_overload(&c, full, sizeof full), want);
			ASSERT_EQ_STR(kgb_symtab_get_str(c.sym, "overload"), names[own]);
			snprintf(want, sizeof want, "overload=%s.%s", op->name, names[own]);
			ASSERT_CONTAINS(c.label, want);
			kgb_case_release(&c);
		}
		for (int k = 0; k < no; k++)
			ASSERT_EQ_INT(seen[k], counts[k]);
	}
	ASSERT_TRUE(nops >= 19);
}

/* has.NAME follows the tensors the case really has. */
TEST(overload_optional_tensors)
{
	static const char *const ops[] = { "linear", "diff", "binary_cross_entropy_with_logits", "gt" };
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		const kgb_op_t *op = kgb_catalog_find(ops[i]);
		uint32_t with = 0, without = 0;
		ASSERT_TRUE(op != NULL && op->optional != NULL);
		for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
			kgb_case_t c;
			char err[256], list[64], *save = NULL;
			ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
			snprintf(list, sizeof list, "%s", op->optional);
			for (char *t = strtok_r(list, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
				char sn[80];
				snprintf(sn, sizeof sn, "has.%s", t);
				bool has = kgb_case_tensor_index(&c, t) >= 0;
				ASSERT_EQ_INT(sym_int(&c, sn), has);
				if (has)
					with++;
				else
					without++;
			}
			kgb_case_release(&c);
		}
		ASSERT_TRUE(with > 0 && without > 0);
	}
}

/* BCE on a 0-d input: 0-d weight and pos_weight (PyTorch rejects [1] ones). */
TEST(overload_bce_0d_weights)
{
	const kgb_op_t *op = kgb_catalog_find("binary_cross_entropy_with_logits");
	uint32_t n0 = 0;
	for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
		kgb_case_t c;
		char err[256];
		ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
		if (kgb_case_tensor(&c, "self")->ndim == 0) {
			kgb_tensor_t *w = kgb_case_tensor(&c, "weight"), *pw = kgb_case_tensor(&c, "pos_weight");
			ASSERT_TRUE(!w || w->ndim == 0);
			ASSERT_TRUE(!pw || pw->ndim == 0);
			n0 += w || pw;
		}
		kgb_case_release(&c);
	}
	ASSERT_TRUE(n0 >= 3);
}

/* int64 tensor with a non-integral Python scalar: fp32 result, the scalar kept. */
TEST(overload_int64_scalar_promotion)
{
	static const char *const ops[] = { "mul", "div", "sub" };
	for (size_t i = 0; i < 3; i++) {
		const kgb_op_t *op = kgb_catalog_find(ops[i]);
		uint32_t n = 0;
		for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
			kgb_case_t c;
			char err[256];
			ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
			const char *o = kgb_case_pstr(&c, "overload", "");
			if (kgb_case_tensor(&c, "self")->dtype == KGB_DT_I64 && strncmp(o, "Scalar", 6) == 0) {
				kgb_value_t v;
				ASSERT_TRUE(kgb_symtab_get(c.sym, "other", &v));
				ASSERT_TRUE(v.is_float && v.f != trunc(v.f));
				ASSERT_EQ_INT(kgb_case_tensor(&c, "out")->dtype, KGB_DT_F32);
				n++;
			}
			kgb_case_release(&c);
		}
		ASSERT_TRUE(n > 0);
	}
}

static const char *kernel_json(const char *when, const char *args)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, 1024,
	         "{\"entry\": \"k\", \"lang\": \"opencl\", \"source\": \"k.cl\", %s%s%s \"grid\": [\"cdiv(out.numel, 64)\"], "
	         "\"block\": [64], \"args\": [%s]}",
	         when ? "\"when\": \"" : "", when ? when : "", when ? "\"," : "", args);
	return b;
}

static int check_plan(const char *op, const char *k1, const char *k2, char *err, size_t errlen)
{
	char json[2600];
	kgb_plan_t *p = NULL;
	int rc;
	snprintf(json, sizeof json, "{\"kernels\": [%s%s%s]}", k1, k2 ? ", " : "", k2 ? k2 : "");
	if (kgb_plan_parse(json, strlen(json), "t.plan.json", &p, err, errlen) != 0)
		return -2;
	rc = kgb_plan_check(p, kgb_catalog_find(op), "t.plan.json", err, errlen);
	kgb_plan_destroy(&p);
	return rc;
}

TEST(overload_plan_when_check)
{
	char err[512];
	const char *tens = "{\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"}";
	const char *scal = "{\"tensor\": \"self\"}, {\"scalar\": \"other\", \"type\": \"f32\"}, {\"tensor\": \"out\"}";
	/* one kernel per overload: passes */
	ASSERT_OK(check_plan("sub", kernel_json("overload.Tensor", tens), kernel_json("overload.Scalar", scal), err,
	                     sizeof err), err);
	/* without when, the scalar-other kernel fails on case 0 (a Tensor case) */
	ASSERT_EQ_INT(check_plan("sub", kernel_json(NULL, scal), NULL, err, sizeof err), -1);
	/* the tensor kernel on the Scalar overload: the error names the first such case */
	ASSERT_EQ_INT(check_plan("sub", kernel_json("overload.Scalar", tens), kernel_json("overload.Tensor", tens), err,
	                         sizeof err), -1);
	ASSERT_CONTAINS(err, "kernels[0].args[1].tensor");
	ASSERT_CONTAINS(err, "no tensor 'other'");
	ASSERT_CONTAINS(err, "overload=sub.Scalar");
	/* a misspelt overload is an unknown name */
	ASSERT_EQ_INT(check_plan("sub", kernel_json("overload.Sclar", scal), NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "kernels[0].when");
	ASSERT_CONTAINS(err, "unknown name 'overload.Sclar'");
	/* a kernel that never runs */
	ASSERT_EQ_INT(check_plan("sub", kernel_json("overload.Tensor", tens), kernel_json("overload.Tensor && 0", scal),
	                         err, sizeof err), -1);
	ASSERT_CONTAINS(err, "kernels[1].when");
	ASSERT_CONTAINS(err, "never runs");
	/* optional tensors */
	ASSERT_OK(check_plan("linear",
	                     kernel_json("has.bias", "{\"tensor\": \"input\"}, {\"tensor\": \"bias\"}, {\"tensor\": \"out\"}"),
	                     kernel_json("!has.bias", "{\"tensor\": \"input\"}, {\"tensor\": \"out\"}"), err, sizeof err),
	          err);
	/* parse errors name the key */
	ASSERT_EQ_INT(check_plan("sub", "{\"entry\": \"k\", \"lang\": \"opencl\", \"source\": \"k.cl\", \"when\": [1], "
	                                "\"grid\": [1], \"block\": [1], \"args\": []}", NULL, err, sizeof err), -2);
	ASSERT_CONTAINS(err, "kernels[0].when");
}

TEST(overload_kernel_runs)
{
	const kgb_op_t *op = kgb_catalog_find("pow");
	kgb_plan_kernel_t k;
	uint32_t yes = 0, no = 0;
	char err[256];
	memset(&k, 0, sizeof k);
	k.when = "overload.Tensor_Scalar || overload.Scalar";
	for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
		kgb_case_t c;
		ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
		int r = kgb_plan_kernel_runs(&k, &c, err, sizeof err);
		bool tt = strcmp(kgb_case_pstr(&c, "overload", ""), "Tensor_Tensor") == 0;
		ASSERT_EQ_INT(r, !tt);
		yes += r == 1;
		no += r == 0;
		kgb_case_release(&c);
	}
	ASSERT_TRUE(yes > 0 && no > 0);
	k.when = NULL;
	{
		kgb_case_t c;
		ASSERT_OK(kgb_case_build(op, 0, &c, err, sizeof err), err);
		ASSERT_EQ_INT(kgb_plan_kernel_runs(&k, &c, err, sizeof err), 1);
		k.when = "nope";
		ASSERT_EQ_INT(kgb_plan_kernel_runs(&k, &c, err, sizeof err), -1);
		ASSERT_CONTAINS(err, "unknown name 'nope'");
		kgb_case_release(&c);
	}
}

/* One step of each dtype's grid, normal and subnormal. */
TEST(tolerance_dtype_step)
{
	ASSERT_EQ_U64((uint64_t)(kgb_dtype_step(KGB_DT_F16, 1.0) * 1024), 1);          /* 2^-10 */
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_F16, 1.5), ldexp(1, -10), 0);
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_F16, -3.0), ldexp(1, -9), 0);
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_F16, 2.5e-5), ldexp(1, -24), 0);             /* subnormal */
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_F16, 0), ldexp(1, -24), 0);
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_BF16, 1.0), ldexp(1, -7), 0);
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_F32, 1.0), ldexp(1, -23), 0);
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_F32, 1e-40), ldexp(1, -149), 0);
	ASSERT_NEAR(kgb_dtype_step(KGB_DT_I32, 5), 0, 0);
	/* one step above and below any fp16 value is representable: the step is exact */
	for (double r = 1.0 / 3; r < 1000; r *= 1.7) {
		double q = kgb_dtype_round(KGB_DT_F16, r), s = kgb_dtype_step(KGB_DT_F16, q);
		ASSERT_NEAR(kgb_dtype_round(KGB_DT_F16, q + s), q + s, 0);
		ASSERT_TRUE(kgb_dtype_round(KGB_DT_F16, q + 0.4 * s) == q);
	}
}

/* The element bound is max(atol + rtol |r|, one step); exact cases stay exact. */
TEST(tolerance_one_step_rule)
{
	kgb_case_t c;
	memset(&c, 0, sizeof c);
	c.rtol = 1e-3;
	c.atol_rel = 1e-4;
	/* fp16 subnormal: the relative bar (atol 1e-9) is below one step (6e-8) */
	ASSERT_NEAR(kgb_validate_elem_tol(&c, KGB_DT_F16, 2.5e-5, 1e-9), ldexp(1, -24), 0);
	/* a normal value: the relative bar dominates */
	ASSERT_NEAR(kgb_validate_elem_tol(&c, KGB_DT_F16, 10.0, 1e-3), 1e-3 + 1e-2, 1e-15);
	/* integer dtypes add no step; exact cases (rtol = atol_rel = 0) allow nothing */
	ASSERT_NEAR(kgb_validate_elem_tol(&c, KGB_DT_I64, 10.0, 1e-3), 1e-3 + 1e-2, 1e-15);
	c.rtol = c.atol_rel = 0;
	ASSERT_NEAR(kgb_validate_elem_tol(&c, KGB_DT_F16, 10.0, 0), 0, 0);
}
