/* Tests for common/plan.c: parsing good plans, every class of bad input (the message
 * names the origin, the JSON path and the value), and the check against an operator. */
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "plan.h"
#include "test.h"

static const char *good_add =
	"{ \"kernels\": [ { \"entry\": \"add_f32\", \"lang\": \"opencl\", \"source\": \"add.cl\",\n"
	"    \"defines\": {\"BLOCK\": \"256\", \"OUT_T\": \"{out.dtype}\", \"ALPHA\": 0.5, \"N\": 7},\n"
	"    \"options\": \"-cl-fast-relaxed-math\",\n"
	"    \"grid\": [\"cdiv(out.numel, 256)\"], \"block\": [256],\n"
	"    \"shared\": \"0\",\n"
	"    \"args\": [ {\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"},\n"
	"              {\"scalar\": \"out.numel\", \"type\": \"i32\"}, {\"scalar\": \"alpha\", \"type\": \"f32\"},\n"
	"              {\"scratch\": \"partials\"}, {\"local\": \"256*4\"} ] } ],\n"
	"  \"scratch\": [ {\"name\": \"partials\", \"bytes\": \"cdiv(out.numel,256)*4\", \"zero\": true} ] }";

static kgb_plan_t *parse_ok(const char *json)
{
	kgb_plan_t *p = NULL;
	char err[512];
	if (kgb_plan_parse(json, strlen(json), "t.json", &p, err, sizeof err) != 0)
		FAIL("parse failed: %s", err);
	return p;
}

/* parsing must fail; the message must contain every one of the NULL-terminated wants */
static void parse_bad_l(const char *json, const char *const *wants)
{
	kgb_plan_t *p = NULL;
	char err[512] = "";
	int rc = kgb_plan_parse(json, strlen(json), "t.json", &p, err, sizeof err);
	if (rc == 0)
		kgb_plan_destroy(&p);
	kgb_test_refused(rc, p == NULL, json, err, wants);
}
#define parse_bad(json, ...) parse_bad_l(json, (const char *const[]){ __VA_ARGS__ })

/* one OpenCL kernel whose args are the JSON text args */
#define KA(args)                                                                                   \
	"{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[1],"     \
	"\"args\":[" args "]}]}"
#define K(extra)                                                                                   \
	"{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],"           \
	"\"block\":[64],\"args\":[{\"tensor\":\"out\"}]" extra "}]}"

TEST(plan_parse_good)
{
	kgb_plan_t *p = parse_ok(good_add);
	ASSERT_EQ_INT(p->nkernels, 1);
	kgb_plan_kernel_t *k = &p->kernels[0];
	ASSERT_EQ_STR(k->entry, "add_f32");
	ASSERT_EQ_INT(k->lang, KGB_LANG_OPENCL);
	ASSERT_EQ_STR(k->source, "add.cl");
	ASSERT_EQ_STR(k->options, "-cl-fast-relaxed-math");
	ASSERT_EQ_INT(k->ndefines, 4);
	ASSERT_EQ_STR(k->defines[1].name, "OUT_T");
	ASSERT_EQ_STR(k->defines[1].value, "{out.dtype}");
	ASSERT_EQ_STR(k->defines[2].value, "0.5");
	ASSERT_EQ_STR(k->defines[3].value, "7");
	ASSERT_EQ_INT(k->ngrid, 1);
	ASSERT_EQ_STR(k->grid[0], "cdiv(out.numel, 256)");
	ASSERT_EQ_INT(k->nblock, 1);
	ASSERT_EQ_STR(k->block[0], "256");
	ASSERT_EQ_STR(k->shared, "0");
	ASSERT_EQ_INT(k->nargs, 7);
	ASSERT_EQ_INT(k->args[0].kind, KGB_ARG_TENSOR);
	ASSERT_EQ_STR(k->args[2].name, "out");
	ASSERT_EQ_INT(k->args[3].kind, KGB_ARG_SCALAR);
	ASSERT_EQ_INT(k->args[3].dtype, KGB_DT_I32);
	ASSERT_EQ_INT(k->args[4].dtype, KGB_DT_F32);
	ASSERT_EQ_INT(k->args[5].kind, KGB_ARG_SCRATCH);
	ASSERT_EQ_INT(k->args[6].kind, KGB_ARG_LOCAL);
	ASSERT_EQ_STR(k->args[6].expr, "256*4");
	ASSERT_EQ_INT(p->nscratch, 1);
	ASSERT_TRUE(p->scratch[0].zero);
	kgb_plan_destroy(&p);
	ASSERT_TRUE(p == NULL);

	p = parse_ok("{\"kernels\":[{\"entry\":\"t\",\"lang\":\"triton\",\"source\":\"t.py\",\"grid\":[\"cdiv(out.numel,"
	             "BLOCK)\", 1],\"args\":[{\"tensor\":\"out\"},{\"scalar\":\"out.numel\"}],\"signature\":\"*fp32,i32\","
	             "\"configs\":[{\"constants\":{\"BLOCK\":1024},\"num_warps\":4,\"num_stages\":2},{\"num_warps\":8}]}]}");
	ASSERT_EQ_INT(p->kernels[0].lang, KGB_LANG_TRITON);
	ASSERT_EQ_INT(p->kernels[0].nblock, 0);
	ASSERT_EQ_INT(p->kernels[0].ngrid, 2);
	ASSERT_EQ_INT(p->kernels[0].nconfigs, 2);
	ASSERT_EQ_STR(p->kernels[0].configs[0].constants[0].value, "1024");
	ASSERT_EQ_INT(p->kernels[0].configs[0].num_stages, 2);
	ASSERT_EQ_INT(p->kernels[0].configs[1].num_warps, 8);
	ASSERT_EQ_INT(p->kernels[0].configs[1].num_ctas, 1);
	ASSERT_EQ_STR(p->kernels[0].signature, "*fp32,i32");
	kgb_plan_destroy(&p);
}

TEST(plan_lang_names)
{
	kgb_lang_t l;
	for (int i = 0; i < KGB_LANG__COUNT; i++) {
		ASSERT_EQ_INT(kgb_lang_parse(kgb_lang_name((kgb_lang_t)i), &l), 0);
		ASSERT_EQ_INT(l, i);
	}
	ASSERT_EQ_INT(kgb_lang_parse("fortran", &l), -1);
}

TEST(plan_parse_bad)
{
	parse_bad("{\"kernels\": [", "t.json: line 1", NULL);
	parse_bad("[]", "t.json", "expected a plan object", NULL);
	parse_bad("{}", "t.json: kernels: missing", NULL);
	parse_bad("{\"kernels\": []}", "kernels: expected a non-empty array", NULL);
	parse_bad("{\"kernels\": [], \"extra\": 1}", "t.json: extra: unknown key", NULL);
	parse_bad(K(",\"colour\":\"red\""), "t.json: kernels[0].colour: unknown key", NULL);
	parse_bad("{\"kernels\":[{\"lang\":\"opencl\"}]}", "kernels[0].entry: missing", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"cobol\",\"source\":\"k\"}]}", "kernels[0].lang",
	          "unknown language 'cobol'", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k k\",\"lang\":\"opencl\",\"source\":\"k\"}]}", "kernels[0].entry",
	          "'k k'", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"../k.cl\"}]}",
	          "kernels[0].source", "'../k.cl'", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"block\":[1],\"args\":[]}]}",
	          "kernels[0].grid: missing", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"args\":[]}]}",
	          "kernels[0].block: missing", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1,2,3,4],"
	          "\"block\":[1],\"args\":[]}]}",
	          "kernels[0].grid: expected 1 to 3 expressions, got 4", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[true],"
	          "\"block\":[1],\"args\":[]}]}",
	          "kernels[0].grid[0]", "got true", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[\" \"],"
	          "\"block\":[1],\"args\":[]}]}",
	          "kernels[0].grid[0]: empty expression", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"triton\",\"source\":\"k.py\",\"grid\":[1],"
	          "\"block\":[1],\"args\":[]}]}",
	          "kernels[0].block: not used by triton", NULL);
	parse_bad(K(",\"signature\":\"*fp32\""), "kernels[0].signature: only triton", NULL);
	parse_bad(K(",\"configs\":[{}]"), "kernels[0].configs: only triton", NULL);
	parse_bad(KA("{\"scalar\":\"N\",\"type\":\"i33\"}"),
	          "t.json: kernels[0].args[0].type: unknown scalar type 'i33'", NULL);
	parse_bad(KA("{\"scalar\":true}"),
	          "kernels[0].args[0].scalar", "got true", NULL);
	parse_bad(KA("{\"tensor\":3}"),
	          "kernels[0].args[0].tensor: expected a name, got 3", NULL);
	parse_bad(KA("{\"tensor\":\"out\",\"scalar\":\"1\"}"),
	          "kernels[0].args[0]", "both 'tensor' and 'scalar'", NULL);
	parse_bad(KA("{\"tensor\":\"out\",\"type\":\"f32\"}"),
	          "kernels[0].args[0].type: only scalar", NULL);
	parse_bad(KA("{\"buffer\":\"out\"}"),
	          "kernels[0].args[0].buffer: unknown key", NULL);
	parse_bad(K(",\"defines\":{\"A\":[1]}"), "kernels[0].defines.A", "got [1]", NULL);
	parse_bad(K(",\"defines\":{\"1A\":1}"), "kernels[0].defines.1A", "not an identifier", NULL);
	parse_bad(K(",\"defines\":[1]"), "kernels[0].defines: expected an object", NULL);
	parse_bad(K(",\"options\":7"), "kernels[0].options: expected a string, got 7", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"t\",\"lang\":\"triton\",\"source\":\"t.py\",\"grid\":[1],\"args\":[],"
	          "\"configs\":[{\"num_warps\":3}]}]}",
	          "kernels[0].configs[0].num_warps: 3 is not a power of two", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"t\",\"lang\":\"triton\",\"source\":\"t.py\",\"grid\":[1],\"args\":[],"
	          "\"configs\":[{\"num_warps\":64}]}]}",
	          "kernels[0].configs[0].num_warps: 64 is out of range", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"t\",\"lang\":\"triton\",\"source\":\"t.py\",\"grid\":[1],\"args\":[],"
	          "\"configs\":[{\"warps\":4}]}]}",
	          "kernels[0].configs[0].warps: unknown key", NULL);
	parse_bad(K("") "x", "t.json: line 1", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"entry\":\"j\"}]}", "t.json", "duplicate", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[1],"
	          "\"args\":[]}],\"scratch\":[{\"name\":\"s\",\"bytes\":4},{\"name\":\"s\",\"bytes\":8}]}",
	          "scratch[1].name: 's' is declared twice", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[1],"
	          "\"args\":[]}],\"scratch\":[{\"name\":\"s\"}]}",
	          "scratch[0].bytes: missing", NULL);
	parse_bad("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[1],"
	          "\"args\":[]}],\"scratch\":[{\"name\":\"s\",\"bytes\":4,\"zero\":1}]}",
	          "scratch[0].zero: expected true or false, got 1", NULL);
}

/* check against the catalog's "add" (self, other, out; scalar alpha) */
static void check_bad(const char *opname, const char *json, const char *want1, const char *want2)
{
	const kgb_op_t *op = kgb_catalog_find(opname);
	if (!op)
		FAIL("operator %s not in the catalog", opname);
	kgb_plan_t *p = parse_ok(json);
	char err[512] = "";
	int rc = kgb_plan_check(p, op, "t.json", err, sizeof err);
	kgb_plan_destroy(&p);
	if (rc == 0)
		FAIL("check of %s succeeded", json);
	ASSERT_CONTAINS(err, want1);
	if (want2)
		ASSERT_CONTAINS(err, want2);
}

TEST(plan_check_against_operator)
{
	const kgb_op_t *add = kgb_catalog_find("add");
	ASSERT_TRUE(add != NULL);
	kgb_plan_t *p = parse_ok(good_add);
	char err[512];
	ASSERT_OK(kgb_plan_check(p, add, "t.json", err, sizeof err), err);
	kgb_plan_destroy(&p);

	/* tensor "out" exists; "result" does not */
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"args\":[{\"tensor\":\"result\"}]}]}",
	          "t.json: kernels[0].args[0].tensor", "no tensor 'result' (it has: self, other, out)");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"args\":[{\"scratch\":\"tmp\"}]}]}",
	          "kernels[0].args[0].scratch", "'tmp' is not declared");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[\"cdiv(M, 4)\"],"
	          "\"block\":[64],\"args\":[]}]}",
	          "kernels[0].grid[0]", "\"cdiv(M, 4)\": unknown name 'M'");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[\"out.numel - out.numel\"],"
	          "\"block\":[64],\"args\":[]}]}",
	          "kernels[0].grid[0]", "= 0 on case 0, a grid size must be in 1..");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],"
	          "\"block\":[100000],\"args\":[]}]}",
	          "kernels[0].block[0]", "a block size must be in 1..4096");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"defines\":{\"T\":\"{self.type}\"},\"args\":[]}]}",
	          "kernels[0].defines.T", "unknown name 'self.type'");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"args\":[{\"scalar\":\"alpha\",\"type\":\"i32\"}]}]}",
	          "kernels[0].args[0].scalar", "not an integer but the type is i32");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"args\":[{\"local\":\"0\"}]}]}",
	          "kernels[0].args[0].local", "local memory bytes must be in 1..");
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"args\":[]}],\"scratch\":[{\"name\":\"s\",\"bytes\":\"-4\"}]}",
	          "scratch[0].bytes", "a scratch size must be in 0..");
	/* silu has no "other" */
	check_bad("silu",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\",\"grid\":[1],\"block\":[64],"
	          "\"args\":[{\"tensor\":\"self\"},{\"tensor\":\"other\"}]}]}",
	          "kernels[0].args[1].tensor", "operator 'silu' has no tensor 'other'");
}


/* Triton configurations bind their constants as symbols: a grid may use them. Every
 * configuration is checked, so one whose constant makes the grid invalid is named. */
TEST(plan_check_binds_config_constants)
{
	const kgb_op_t *add = kgb_catalog_find("add");
	ASSERT_TRUE(add != NULL);
	kgb_plan_t *p = parse_ok("{\"kernels\":[{\"entry\":\"k\",\"lang\":\"triton\",\"source\":\"k.py\","
	                         "\"grid\":[\"cdiv(out.numel, BLOCK)\"],\"args\":[{\"tensor\":\"out\"}],"
	                         "\"configs\":[{\"constants\":{\"BLOCK\":256},\"num_warps\":4},"
	                         "{\"constants\":{\"BLOCK\":1024},\"num_warps\":8}]}]}");
	char err[512];
	ASSERT_OK(kgb_plan_check(p, add, "t.json", err, sizeof err), err);
	kgb_plan_destroy(&p);
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"triton\",\"source\":\"k.py\","
	          "\"grid\":[\"cdiv(out.numel, BLOCK)\"],\"args\":[{\"tensor\":\"out\"}],"
	          "\"configs\":[{\"constants\":{\"BLOCK\":256}},{\"constants\":{\"BLOCK\":0}}]}]}",
	          "kernels[0].grid[0]", "division by zero");
	/* without configurations BLOCK is unknown */
	check_bad("add",
	          "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"triton\",\"source\":\"k.py\","
	          "\"grid\":[\"cdiv(out.numel, BLOCK)\"],\"args\":[{\"tensor\":\"out\"}]}]}",
	          "kernels[0].grid[0]", "unknown name 'BLOCK'");
}
