/* Tests for libkgb's public C API (include/kgb.h, common/api.c): the catalog through
 * it, inputs, the validator's verdicts on outputs built from the reference, and the
 * sampler. */
#include <stdlib.h>
#include <string.h>

#include "kgb.h"
#include "test.h"

static int find_tensor(const kgb_lib_case_t *c, const char *name, kgb_lib_tensor_info_t *ti)
{
	for (int i = 0; i < kgb_lib_case_tensor_count(c); i++) {
		if (kgb_lib_case_tensor(c, i, ti) == 0 && strcmp(ti->name, name) == 0)
			return i;
	}
	return -1;
}

TEST(api_catalog)
{
	kgb_lib_op_info_t oi;
	uint32_t mask = 0, aten_cases = 0;
	int n = kgb_lib_op_count(), naten = 0;
	ASSERT_EQ_INT(kgb_lib_abi(), KGB_LIB_ABI);
	ASSERT_TRUE(n > 100);
	ASSERT_EQ_INT(kgb_lib_op_info(n, &oi), -1);
	ASSERT_EQ_INT(kgb_lib_dataset_mask("aten", &mask), 0);
	ASSERT_EQ_INT(mask, KGB_LIB_DS_ATEN);
	ASSERT_EQ_INT(kgb_lib_dataset_mask("nope", &mask), -1);
	for (int i = 0; i < n; i++) {
		ASSERT_EQ_INT(kgb_lib_op_info(i, &oi), 0);
		ASSERT_EQ_INT(kgb_lib_op_find(oi.name), i);
		if (oi.datasets & KGB_LIB_DS_ATEN) {
			naten++;
			aten_cases += oi.cases;
		}
	}
	ASSERT_EQ_INT(naten, 110);
	ASSERT_TRUE(aten_cases > 10000);
	ASSERT_EQ_INT(kgb_lib_op_find("no_such_op"), -1);
	ASSERT_EQ_STR(kgb_lib_verdict_name(KGB_LIB_WRONG_RESULT), "wrong_result");
}

TEST(api_case_and_validate)
{
	char err[256];
	kgb_lib_tensor_info_t ts, to, tt;
	kgb_lib_verdict_t v;
	const void *bytes[16] = { 0 };
	size_t n_in = 0, n_ref = 0;
	int op = kgb_lib_op_find("add");
	kgb_lib_case_t *c;
	int is, io, it;
	unsigned char *out;
	ASSERT_TRUE(op >= 0);
	ASSERT_TRUE(kgb_lib_case_new(op, 1u << 30, 1, err, sizeof err) == NULL);
	ASSERT_TRUE(strstr(err, "does not exist") != NULL);
	/* a transposed self: strides are not row-major */
	c = kgb_lib_case_new(op, 358, 1, err, sizeof err);
	ASSERT_TRUE(c != NULL);
	ASSERT_TRUE(strstr(kgb_lib_case_label(c), "layout=transposed") != NULL);
	is = find_tensor(c, "self", &ts);
	io = find_tensor(c, "out", &to);
	it = find_tensor(c, "other", &tt);
	ASSERT_TRUE(is >= 0 && io >= 0 && it >= 0);
	ASSERT_EQ_INT(ts.ndim, 2);
	ASSERT_EQ_INT(ts.stride[0], 1);
	ASSERT_EQ_INT(ts.stride[1], ts.shape[0]);
	ASSERT_EQ_INT(ts.storage_offset, 0);
	ASSERT_EQ_INT(ts.role, KGB_LIB_IN);
	ASSERT_EQ_INT(to.role, KGB_LIB_OUT);
	ASSERT_EQ_STR(ts.dtype, "f16");
	ASSERT_EQ_INT(ts.elem_size, 2);
	ASSERT_TRUE(kgb_lib_case_param_count(c) >= 4);
	ASSERT_EQ_STR(kgb_lib_case_param_name(c, 0), "shape");
	ASSERT_EQ_STR(kgb_lib_case_param_value(c, 0), "[33,65]");
	ASSERT_TRUE(kgb_lib_case_param_name(c, 99) == NULL);
	ASSERT_TRUE(kgb_lib_case_input(c, is, &n_in, err, sizeof err) != NULL);
	ASSERT_EQ_INT(n_in, (size_t)ts.storage * 2);

	/* the reference itself passes */
	const void *ref = kgb_lib_case_reference(c, io, &n_ref, err, sizeof err);
	ASSERT_TRUE(ref != NULL);
	ASSERT_EQ_INT(n_ref, (size_t)to.storage * 2);
	out = malloc(n_ref);
	memcpy(out, ref, n_ref);
	bytes[io] = out;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 0xFF, &v), 0);
	ASSERT_EQ_INT(v.verdict, KGB_LIB_PASS);
	ASSERT_EQ_STR(v.name, "pass");

	/* one element off by a lot: wrong_result naming the element */
	out[2 * 5 + 1] ^= 0x40;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 0xFF, &v), 0);
	ASSERT_EQ_INT(v.verdict, KGB_LIB_WRONG_RESULT);
	ASSERT_TRUE(strstr(v.message, "out[5]") != NULL);

	/* an element left at the poison: unwritten_output */
	memcpy(out, ref, n_ref);
	out[0] = out[1] = 0xFF;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 0xFF, &v), 0);
	ASSERT_EQ_INT(v.verdict, KGB_LIB_UNWRITTEN_OUTPUT);

	/* an input handed back changed: input_modified */
	memcpy(out, ref, n_ref);
	unsigned char *self = malloc(n_in);
	memcpy(self, kgb_lib_case_input(c, is, NULL, err, sizeof err), n_in);
	bytes[is] = self;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 0xFF, &v), 0);
	ASSERT_EQ_INT(v.verdict, KGB_LIB_PASS);
	self[3] ^= 1;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 0xFF, &v), 0);
	ASSERT_EQ_INT(v.verdict, KGB_LIB_INPUT_MODIFIED);

	/* a missing output and a bad poison are argument errors */
	bytes[io] = NULL;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 0xFF, &v), -1);
	ASSERT_TRUE(strstr(v.message, "out") != NULL);
	bytes[io] = out;
	ASSERT_EQ_INT(kgb_lib_case_validate(c, bytes, 256, &v), -1);

	free(self);
	free(out);
	kgb_lib_case_destroy(&c);
	ASSERT_TRUE(c == NULL);
	kgb_lib_case_destroy(&c);
}

TEST(api_case_symbols_and_scalars)
{
	char err[256];
	const char *name, *dtype, *str;
	double value;
	int found = 0;
	kgb_lib_case_t *c = kgb_lib_case_new(kgb_lib_op_find("as_strided"), 1, 1, err, sizeof err);
	ASSERT_TRUE(c != NULL);
	for (int i = 0; i < kgb_lib_case_symbol_count(c); i++) {
		ASSERT_EQ_INT(kgb_lib_case_symbol(c, i, &name, &value, &str), 0);
		if (strcmp(name, "storage_offset") == 0)
			found++;
	}
	ASSERT_EQ_INT(found, 1);
	ASSERT_EQ_INT(kgb_lib_case_symbol(c, -1, &name, &value, &str), -1);
	kgb_lib_case_destroy(&c);
	c = kgb_lib_case_new(kgb_lib_op_find("add"), 0, 1, err, sizeof err);
	ASSERT_TRUE(c != NULL);
	ASSERT_EQ_INT(kgb_lib_case_scalar_count(c), 1);
	ASSERT_EQ_INT(kgb_lib_case_scalar(c, 0, &name, &dtype, &value), 0);
	ASSERT_EQ_STR(name, "alpha");
	ASSERT_NEAR(value, 0.5, 0);
	ASSERT_EQ_INT(kgb_lib_case_scalar(c, 1, &name, &dtype, &value), -1);
	kgb_lib_case_destroy(&c);
}

TEST(api_sampler_rule)
{
	kgb_lib_stats_t st;
	kgb_lib_sampler_t *s = kgb_lib_sampler_new(1e9);
	int n = 0;
	/* constant samples: the rse is 0, but the rule wants 10 samples and 20% of the budget */
	while (!kgb_lib_sampler_done(s) && n < 1000) {
		kgb_lib_sampler_add(s, 100.0, 1e7);
		n++;
	}
	ASSERT_EQ_INT(n, 20);
	kgb_lib_sampler_stats(s, &st);
	ASSERT_EQ_INT(st.n, 20);
	ASSERT_NEAR(st.median, 100.0, 0);
	kgb_lib_sampler_destroy(&s);
	ASSERT_TRUE(s == NULL);
}
