/* The native provider's process handling (worker/native_provider.h): the request, the
 * results followed case by case while the child runs, and the verdicts of the cases it
 * never reported. The child here is a test double: a shell script standing in for
 * `python -m kgb.providers.run` (KGB_PYTHON points at it) that writes the lines the real
 * provider writes, then crashes, exits or hangs as each test needs. The real provider
 * runs in tests/integration/test_native_torch.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "native_provider.h"
#include "test.h"
#include "util.h"
#include "validate.h"

typedef struct seen {
	int n, starts;
	uint32_t idx[8];
	int verdict[8];
	char msg[8][256];
	bool has_timing[8];
	double median[8];
	char method[8][64];
	char log[2048];
} seen_t;

static void on_start(void *arg, uint32_t case_index)
{
	(void)case_index;
	((seen_t *)arg)->starts++;
}

static void on_case(void *arg, const kgb_native_case_t *r)
{
	seen_t *s = arg;
	if (s->n >= 8)
		return;
	s->idx[s->n] = r->case_index;
	s->verdict[s->n] = r->verdict;
	kgb_strlcpy(s->msg[s->n], r->message, sizeof s->msg[0]);
	s->has_timing[s->n] = r->has_timing;
	s->median[s->n] = r->timing.median_ns;
	kgb_strlcpy(s->method[s->n], r->timing.method ? r->timing.method : "", sizeof s->method[0]);
	s->n++;
}

static void on_log(void *arg, const char *line)
{
	seen_t *s = arg;
	size_t n = strlen(s->log);
	snprintf(s->log + n, sizeof s->log - n, "%s", line);
}

/* The test double: a script that takes the results path from the request on stdin and
 * then runs body (sh), where $R is that path. */
static void fake_provider(const char *body)
{
	char *text = kgb_xasprintf("#!/bin/sh\n"
	                           "req=$(cat)\n"
	                           "R=$(printf '%%s' \"$req\" | sed 's/.*\"results\":\"\\([^\"]*\\)\".*/\\1/')\n"
	                           "%s\n",
	                           body);
	const char *path = kgb_test_write_file("fake_provider.sh", text);
	free(text);
	ASSERT_EQ_INT(chmod(path, 0755), 0);
	setenv("KGB_PYTHON", path, 1);
}

static int run_job(seen_t *s, const uint32_t *cases, size_t n)
{
	char err[512];
	kgb_native_job_t job = {
		.op = "add", .cases = cases, .ncases = n, .seed = 7, .device = "cpu", .timing = true,
		.budget_ms = 20, .case_limit_ms = 5000,
		.on_start = on_start, .on_case = on_case, .on_log = on_log, .arg = s,
	};
	memset(s, 0, sizeof *s);
	return kgb_native_run(&job, err, sizeof err);
}

TEST(native_device_names)
{
	char d[32];
	kgb_native_device("cuda", 1, d, sizeof d);
	ASSERT_EQ_STR(d, "cuda:1");
	kgb_native_device("hip", 0, d, sizeof d);
	ASSERT_EQ_STR(d, "cuda:0");
	kgb_native_device("level-zero", 2, d, sizeof d);
	ASSERT_EQ_STR(d, "xpu:2");
	kgb_native_device("opencl", 3, d, sizeof d);
	ASSERT_EQ_STR(d, "cpu");
}

TEST(native_results_in_order_with_timing)
{
	fake_provider("echo '{\"start\": 3}' >>\"$R\"\n"
	              "echo '{\"case\": 3, \"verdict\": \"pass\", \"message\": \"native torch 2.11.0 on cpu: x\", "
	              "\"timed\": true, \"timing\": {\"median_ns\": 1500.0, \"min_ns\": 1000, \"samples\": 12, "
	              "\"method\": \"monotonic-clock [torch 2.11.0]\"}}' >>\"$R\"\n"
	              "echo '{\"start\": 4}' >>\"$R\"\n"
	              "echo '{\"case\": 4, \"verdict\": \"wrong_result\", \"message\": \"run 1: out[2]\", "
	              "\"timed\": true}' >>\"$R\"\n");
	seen_t s;
	uint32_t cases[] = { 3, 4 };
	ASSERT_EQ_INT(run_job(&s, cases, 2), 0);
	ASSERT_EQ_INT(s.n, 2);
	ASSERT_EQ_INT(s.starts, 2);
	ASSERT_EQ_INT(s.idx[0], 3);
	ASSERT_EQ_INT(s.verdict[0], KGB_V_PASS);
	ASSERT_TRUE(s.has_timing[0]);
	ASSERT_TRUE(s.median[0] == 1500.0);
	ASSERT_EQ_STR(s.method[0], "monotonic-clock [torch 2.11.0]");
	ASSERT_EQ_INT(s.idx[1], 4);
	ASSERT_EQ_INT(s.verdict[1], KGB_V_WRONG_RESULT);
	ASSERT_FALSE(s.has_timing[1]);
	ASSERT_EQ_STR(s.msg[1], "run 1: out[2]");
}

TEST(native_crash_mid_case)
{
	fake_provider("echo '{\"start\": 0}' >>\"$R\"\n"
	              "echo '{\"case\": 0, \"verdict\": \"pass\", \"message\": \"ok\"}' >>\"$R\"\n"
	              "echo '{\"start\": 1}' >>\"$R\"\n"
	              "echo 'segfault in the library' >&2\n"
	              "kill -SEGV $$\n");
	seen_t s;
	uint32_t cases[] = { 0, 1, 2 };
	ASSERT_EQ_INT(run_job(&s, cases, 3), 0);
	ASSERT_EQ_INT(s.n, 3);
	ASSERT_EQ_INT(s.verdict[0], KGB_V_PASS);
	ASSERT_EQ_INT(s.verdict[1], KGB_V_CRASH);
	ASSERT_TRUE(strstr(s.msg[1], "signal 11") != NULL);
	ASSERT_TRUE(strstr(s.msg[1], "segfault in the library") != NULL);
	ASSERT_EQ_INT(s.verdict[2], KGB_V_NOT_RUN);
}

TEST(native_all_cases_unsupported)
{
	fake_provider("echo '{\"all\": true, \"verdict\": \"unsupported\", \"message\": \"native provider: torch "
	              "does not import\"}' >>\"$R\"\n");
	seen_t s;
	uint32_t cases[] = { 5, 6 };
	ASSERT_EQ_INT(run_job(&s, cases, 2), 0);
	ASSERT_EQ_INT(s.n, 2);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ_INT(s.verdict[i], KGB_V_UNSUPPORTED);
		ASSERT_EQ_STR(s.msg[i], "native provider: torch does not import");
	}
}

TEST(native_fails_before_first_case)
{
	fake_provider("echo \"No module named 'kgb'\" >&2\nexit 1\n");
	seen_t s;
	uint32_t cases[] = { 0, 1 };
	ASSERT_EQ_INT(run_job(&s, cases, 2), -1);
	ASSERT_EQ_INT(s.n, 2);
	ASSERT_EQ_INT(s.verdict[0], KGB_V_INFRA_ERROR);
	ASSERT_TRUE(strstr(s.msg[0], "before its first case") != NULL);
	ASSERT_TRUE(strstr(s.msg[1], "No module named 'kgb'") != NULL);
}

TEST(native_no_python)
{
	setenv("KGB_PYTHON", "/nonexistent/python3", 1);
	seen_t s;
	uint32_t cases[] = { 0 };
	ASSERT_EQ_INT(run_job(&s, cases, 1), -1);
	ASSERT_EQ_INT(s.n, 1);
	ASSERT_EQ_INT(s.verdict[0], KGB_V_INFRA_ERROR);
	ASSERT_TRUE(strstr(s.msg[0], "KGB_PYTHON=/nonexistent/python3") != NULL);
}

TEST(native_wall_limit)
{
	fake_provider("echo '{\"start\": 0}' >>\"$R\"\nexec sleep 30\n");
	setenv("KGB_NATIVE_WALL_MS", "1500", 1);
	seen_t s;
	uint32_t cases[] = { 0, 1 };
	ASSERT_EQ_INT(run_job(&s, cases, 2), 0);
	ASSERT_EQ_INT(s.n, 2);
	ASSERT_EQ_INT(s.verdict[0], KGB_V_TIMEOUT);
	ASSERT_EQ_INT(s.verdict[1], KGB_V_TIMEOUT);
	ASSERT_TRUE(strstr(s.msg[0], "1500 ms") != NULL);
}

/* Without KGB_CACHE_DIR the provider still shares the worker's reference cache
 * ($HOME/.cache/kgb): the child's own HOME is not the worker's, and it is told where the
 * cache is. With KGB_CACHE_DIR set, that directory. The double reports what it got. */
TEST(native_provider_gets_the_workers_cache_dir)
{
	fake_provider("echo '{\"start\": 0}' >>\"$R\"\n"
	              "echo \"{\\\"case\\\": 0, \\\"verdict\\\": \\\"pass\\\", \\\"message\\\": \\\"cache=$KGB_CACHE_DIR "
	              "home=$HOME\\\", \\\"timed\\\": false}\" >>\"$R\"\n");
	char *old = getenv("KGB_CACHE_DIR") ? kgb_xstrdup(getenv("KGB_CACHE_DIR")) : NULL;
	char *oldhome = getenv("HOME") ? kgb_xstrdup(getenv("HOME")) : NULL;
	seen_t s;
	uint32_t cases[] = { 0 };
	unsetenv("KGB_CACHE_DIR");
	setenv("HOME", "/tmp/kgb-home-of-the-worker", 1);
	ASSERT_EQ_INT(run_job(&s, cases, 1), 0);
	ASSERT_EQ_INT(s.n, 1);
	ASSERT_CONTAINS(s.msg[0], "cache=/tmp/kgb-home-of-the-worker/.cache/kgb home=/nonexistent");
	setenv("KGB_CACHE_DIR", "/tmp/kgb-cache-given", 1);
	ASSERT_EQ_INT(run_job(&s, cases, 1), 0);
	ASSERT_CONTAINS(s.msg[0], "cache=/tmp/kgb-cache-given home=");
	if (old)
		setenv("KGB_CACHE_DIR", old, 1);
	else
		unsetenv("KGB_CACHE_DIR");
	if (oldhome)
		setenv("HOME", oldhome, 1);
	free(old);
	free(oldhome);
}
