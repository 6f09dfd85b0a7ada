/* Standalone job files: parsing, defaults, and errors that name file, field, value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "catalog.h"
#include "jobfile.h"
#include "test_worker.h"

static const char plan_json[] =
	"{\"kernels\": [{\"entry\": \"k\", \"lang\": \"opencl\", \"source\": \"k.cl\", "
	"\"grid\": [\"cdiv(out.numel, 64)\"], \"block\": [\"64\"], "
	"\"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"out\"}, {\"scalar\": \"out.numel\"}]}]}";

static const char good_cl[] =
	"__kernel void k(__global const T_self *self, __global T_out *out, int n)\n"
	"{ int i = get_global_id(0); if (i < n) { float x = LOAD_self(self, i); "
	"STORE_out(out, i, x / (1.0f + exp(-x))); } }\n";

TEST(worker_jobfile_defaults_and_sources)
{
	kgb_test_write_file("k.cl", good_cl);
	kgb_test_write_file("plan.json", plan_json);
	const char *path = kgb_test_write_file("job.json", "{\"op\": \"silu\", \"plan\": \"plan.json\"}");
	kgb_jobfile_t jf;
	char err[512] = "";
	ASSERT_OK(kgb_jobfile_load(path, &jf, err, sizeof err), err);
	ASSERT_EQ_STR(jf.job->op, "silu");
	ASSERT_EQ_INT(jf.job->n_cases, kgb_op_case_count(kgb_catalog_find("silu")));
	ASSERT_EQ_INT(jf.job->cases[1], 1);
	ASSERT_EQ_U64(jf.job->seed, 1);
	ASSERT_TRUE(jf.job->timing);
	ASSERT_EQ_INT(jf.job->time_limit_ms, 60000);
	ASSERT_EQ_INT(jf.job->timing_budget_ms, 500);
	ASSERT_EQ_STR(jf.backend, "opencl");
	ASSERT_EQ_INT(jf.device, 0);
	ASSERT_EQ_INT(jf.job->n_sources, 1);
	ASSERT_EQ_STR(jf.job->sources[0]->name, "k.cl");
	ASSERT_EQ_INT(jf.job->sources[0]->content.len, strlen(good_cl));
	kgb_jobfile_release(&jf);

	/* inline plan, inline source, explicit cases */
	char text[4096];
	snprintf(text, sizeof text, "{\"op\": \"silu\", \"cases\": [2, 0], \"seed\": 9, \"timing\": false, "
	         "\"plan\": %s, \"sources\": {\"k.cl\": {\"inline\": \"__kernel void k() {}\"}}}", plan_json);
	path = kgb_test_write_file("job2.json", text);
	ASSERT_OK(kgb_jobfile_load(path, &jf, err, sizeof err), err);
	ASSERT_EQ_INT(jf.job->n_cases, 2);
	ASSERT_EQ_INT(jf.job->cases[0], 2);
	ASSERT_EQ_U64(jf.job->seed, 9);
	ASSERT_FALSE(jf.job->timing);
	ASSERT_EQ_STR((const char *)jf.job->sources[0]->content.data, "__kernel void k() {}");
	kgb_jobfile_release(&jf);
}

static void expect_error(const char *name, const char *text, const char *a, const char *b)
{
	const char *path = kgb_test_write_file(name, text);
	kgb_jobfile_t jf;
	char err[512] = "";
	if (kgb_jobfile_load(path, &jf, err, sizeof err) == 0)
		FAIL("%s was accepted", text);
	ASSERT_CONTAINS(err, name);
	ASSERT_CONTAINS(err, a);
	if (b)
		ASSERT_CONTAINS(err, b);
}

TEST(worker_jobfile_errors)
{
	kgb_test_write_file("k.cl", good_cl);
	kgb_test_write_file("plan.json", plan_json);
	expect_error("e1.json", "{\"op\": \"no_such\", \"plan\": \"plan.json\"}", "op", "no_such");
	expect_error("e2.json", "{\"op\": \"silu\", \"cases\": [0, 100000], \"plan\": \"plan.json\"}", "cases[1]", "100000");
	expect_error("e3.json", "{\"op\": \"silu\", \"plan\": \"missing.json\"}", "plan", "missing.json");
	expect_error("e4.json", "{\"op\": \"silu\", \"plan\": \"plan.json\", \"colour\": 1}", "colour", NULL);
	expect_error("e5.json", "{\"op\": \"silu\", \"plan\": \"plan.json\", \"seed\": -3}", "seed", "-3");
	expect_error("e6.json", "{\"op\": \"silu\", \"plan\": \"plan.json\", \"sources\": {\"k.cl\": \"nope.cl\"}}",
	             "sources.k.cl", "nope.cl");
	expect_error("e7.json", "{\"op\": \"silu\", \"plan\": \"plan.json\",", "e7.json:", NULL);
	expect_error("e8.json", "{\"op\": \"silu\", \"plan\": \"plan.json\", \"cases\": \"some\"}", "cases", "some");
}

/* `kgb-worker run` end to end: JSON on stdout, exit 0 when every case passed. */
TEST(worker_run_command)
{
	kgb_test_write_file("k.cl", good_cl);
	kgb_test_write_file("plan.json", plan_json);
	const char *path = kgb_test_write_file("job.json", "{\"op\": \"silu\", \"cases\": [0, 9], \"plan\": \"plan.json\"}");
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "KGB_LOG_LEVEL=error '%s' run '%s' --json", tw_worker_bin(), path);
	FILE *p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL);
	char out[65536];
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	int st = pclose(p);
	ASSERT_EQ_INT(WEXITSTATUS(st), 0);
	ASSERT_CONTAINS(out, "\"op\":\"silu\"");
	ASSERT_CONTAINS(out, "\"passed\":2");
	ASSERT_CONTAINS(out, "\"verdict\":\"pass\"");
	ASSERT_CONTAINS(out, "\"label\":\"dtype=bf16");

	/* a failing kernel: exit 1 */
	kgb_test_write_file("k.cl", "__kernel void k(__global const T_self *self, __global T_out *out, int n) { }\n");
	p = popen(cmd, "r");
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	st = pclose(p);
	ASSERT_EQ_INT(WEXITSTATUS(st), 1);
	ASSERT_CONTAINS(out, "unwritten_output");
}
