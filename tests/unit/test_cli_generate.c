/* Tests for kgb generate's pure parts: the code taken out of a model's answer
 * (cli/genprompt.c), template rendering, and the APIs' answers and Retry-After
 * (cli/llm.c). The HTTP exchange itself is tested end to end by
 * tests/integration/test_generate.sh against the model API double. */
#include <stdlib.h>
#include <string.h>

#include "../../cli/genprompt.h"
#include "../../cli/llm.h"
#include "test.h"
#include "util.h"

static const char *file_of(json_t *code, const char *name)
{
	return json_string_value(json_object_get(json_object_get(code, "files"), name));
}

TEST(cli_generate_extract_plan_named_blocks)
{
	char err[256];
	const char *ans = "Here it is.\n\n```json\n{\"kernels\": [{\"entry\": \"k\", \"lang\": \"opencl\", "
	                  "\"source\": \"k.cl\"}]}\n```\n\nSome words.\n```c\nint unrelated;\n```\n"
	                  "```opencl k.cl\n__kernel void k() {}\n```\n";
	json_t *code = kgb_gen_extract(KGB_GEN_OPENCL, ans, err, sizeof err);
	if (!code)
		FAIL("%s", err);
	ASSERT_CONTAINS(file_of(code, "plan.json"), "\"entry\": \"k\"");
	ASSERT_EQ_STR(file_of(code, "k.cl"), "__kernel void k() {}\n");
	json_decref(code);
}

TEST(cli_generate_extract_name_on_line_before)
{
	char err[256];
	const char *ans = "```json\n{\"kernels\": [{\"source\": \"a.cl\"}, {\"source\": \"b.cl\"}]}\n```\n"
	                  "**b.cl**:\n~~~\nB\n~~~\n`a.cl`\n```\nA\n```\n";
	json_t *code = kgb_gen_extract(KGB_GEN_OPENCL, ans, err, sizeof err);
	if (!code)
		FAIL("%s", err);
	ASSERT_EQ_STR(file_of(code, "a.cl"), "A\n");
	ASSERT_EQ_STR(file_of(code, "b.cl"), "B\n");
	json_decref(code);
}

TEST(cli_generate_extract_lone_block_and_truncated)
{
	char err[256];
	/* one source, one unnamed code block; the answer ends inside it */
	const char *ans = "```json\n{\"kernels\": [{\"source\": \"x.cl\"}]}\n```\n```opencl\n__kernel void x() {";
	json_t *code = kgb_gen_extract(KGB_GEN_OPENCL, ans, err, sizeof err);
	if (!code)
		FAIL("%s", err);
	ASSERT_EQ_STR(file_of(code, "x.cl"), "__kernel void x() {");
	json_decref(code);
}

TEST(cli_generate_extract_errors)
{
	char err[256];
	ASSERT_TRUE(kgb_gen_extract(KGB_GEN_OPENCL, "No code, sorry.", err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "no fenced code block");
	ASSERT_TRUE(kgb_gen_extract(KGB_GEN_OPENCL, "```json\n{\"kernels\": [\n```\n", err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "no ```json block holding a launch plan");
	const char *two = "```json\n{\"kernels\": [{\"source\": \"a.cl\"}, {\"source\": \"b.cl\"}]}\n```\n"
	                  "```opencl a.cl\nA\n```\n";
	ASSERT_TRUE(kgb_gen_extract(KGB_GEN_OPENCL, two, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "'b.cl'");
	ASSERT_TRUE(kgb_gen_extract(KGB_GEN_PYTHON, "```cpp\nint x;\n```\n", err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "no ```python block");
}

TEST(cli_generate_extract_python_last_block)
{
	char err[256];
	const char *ans = "```python\nfirst = 1\n```\nBetter:\n```python\nimport triton\n```\nUse it: ```x```\n";
	json_t *code = kgb_gen_extract(KGB_GEN_PYTHON, ans, err, sizeof err);
	if (!code)
		FAIL("%s", err);
	ASSERT_EQ_STR(file_of(code, "module.py"), "import triton\n");
	char *back = kgb_gen_files_text(KGB_GEN_PYTHON, code);
	ASSERT_EQ_STR(back, "```python\nimport triton\n```\n");
	free(back);
	json_decref(code);
}

TEST(cli_generate_render)
{
	char err[256];
	const char *vars[] = {"op", "add", "empty", NULL, NULL};
	char *s = kgb_gen_render("op={{op}} e=[{{empty}}] {{ lone", "t.txt", vars, err, sizeof err);
	ASSERT_EQ_STR(s, "op=add e=[] {{ lone");
	free(s);
	ASSERT_TRUE(kgb_gen_render("{{nope}}", "my.txt", vars, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "my.txt: unknown template variable {{nope}}");
}

TEST(cli_generate_parse_answers)
{
	char err[256];
	kgb_llm_answer_t a = {0};
	const char *oa = "{\"choices\": [{\"message\": {\"content\": \"hi\"}, \"finish_reason\": \"length\"}], "
	                 "\"usage\": {\"prompt_tokens\": 100, \"completion_tokens\": 20, "
	                 "\"prompt_tokens_details\": {\"cached_tokens\": 30}, "
	                 "\"completion_tokens_details\": {\"reasoning_tokens\": 5}}}";
	ASSERT_OK(kgb_llm_parse_answer(KGB_LLM_OPENAI, oa, strlen(oa), &a, err, sizeof err), err);
	ASSERT_EQ_STR(a.content, "hi");
	ASSERT_EQ_STR(a.finish_reason, "length");
	ASSERT_EQ_INT(a.usage[KGB_LLM_IN], 70);
	ASSERT_EQ_INT(a.usage[KGB_LLM_OUT], 20);
	ASSERT_EQ_INT(a.usage[KGB_LLM_CACHE_R], 30);
	ASSERT_EQ_INT(a.usage[KGB_LLM_CACHE_W], -1);
	ASSERT_EQ_INT(a.usage[KGB_LLM_REASON], 5);
	free(a.content);
	free(a.finish_reason);
	memset(&a, 0, sizeof a);
	const char *an = "{\"content\": [{\"type\": \"thinking\", \"thinking\": \"x\"}, {\"type\": \"text\", \"text\": "
	                 "\"a\"}, {\"type\": \"text\", \"text\": \"b\"}], \"stop_reason\": \"end_turn\", \"usage\": "
	                 "{\"input_tokens\": 9, \"output_tokens\": 8, \"cache_creation_input_tokens\": 7, "
	                 "\"cache_read_input_tokens\": 6}}";
	ASSERT_OK(kgb_llm_parse_answer(KGB_LLM_ANTHROPIC, an, strlen(an), &a, err, sizeof err), err);
	ASSERT_EQ_STR(a.content, "ab");
	ASSERT_EQ_INT(a.usage[KGB_LLM_IN], 9);
	ASSERT_EQ_INT(a.usage[KGB_LLM_CACHE_W], 7);
	ASSERT_EQ_INT(a.usage[KGB_LLM_CACHE_R], 6);
	ASSERT_EQ_INT(a.usage[KGB_LLM_REASON], -1);
	free(a.content);
	free(a.finish_reason);
	memset(&a, 0, sizeof a);
	ASSERT_TRUE(kgb_llm_parse_answer(KGB_LLM_OPENAI, "{\"choices\": [", 13, &a, err, sizeof err) != 0);
	ASSERT_CONTAINS(err, "not a JSON object");
	ASSERT_TRUE(kgb_llm_parse_answer(KGB_LLM_ANTHROPIC, "{}", 2, &a, err, sizeof err) != 0);
	ASSERT_CONTAINS(err, "no \"content\" array");
}

TEST(cli_generate_retry_after)
{
	ASSERT_NEAR(kgb_llm_retry_after(" 3\r\n"), 3.0, 1e-9);
	ASSERT_NEAR(kgb_llm_retry_after("0.5"), 0.5, 1e-9);
	ASSERT_NEAR(kgb_llm_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0, 1e-9); /* past: now */
	ASSERT_TRUE(kgb_llm_retry_after("soon") < 0);
}

TEST(cli_generate_request_body)
{
	kgb_llm_config_t c = {.api = KGB_LLM_ANTHROPIC, .model = "m", .temperature = 0.5, .max_tokens = 100};
	char *b = kgb_llm_request_body(&c, "sys", "hello");
	ASSERT_CONTAINS(b, "\"system\":\"sys\"");
	ASSERT_CONTAINS(b, "\"max_tokens\":100");
	free(b);
	c.api = KGB_LLM_OPENAI;
	b = kgb_llm_request_body(&c, "sys", "hello");
	ASSERT_CONTAINS(b, "{\"role\":\"system\",\"content\":\"sys\"}");
	free(b);
	b = kgb_llm_request_params(&c);
	ASSERT_EQ_STR(b, "{\"api\":\"openai\",\"max_tokens\":100,\"model\":\"m\",\"temperature\":0.5}");
	free(b);
}
