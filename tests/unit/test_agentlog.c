/* Tests for cli/agentlog.c: token usage from Claude Code's stream-json (a session that
 * ended: its result's usage; a killed one: its messages de-duplicated by id, retries
 * summed; several sessions summed) and OpenCode's step events, against sums computed
 * by hand; stray lines reported with file and line; malformed usage refused naming
 * the file, line, field and value. And common/devcases.c: the dev cases of kgb verify. */
#include <string.h>

#include "../../cli/agentlog.h"
#include "catalog.h"
#include "devcases.h"
#include "test.h"

/* u has these counts of input, output, cache write and cache read tokens */
#define ASSERT_USAGE(u, in, out, cw, cr)                                                                 \
	do {                                                                                               \
		ASSERT_NEAR((u).input, (in), 0);                                                               \
		ASSERT_NEAR((u).output, (out), 0);                                                             \
		ASSERT_NEAR((u).cache_write, (cw), 0);                                                         \
		ASSERT_NEAR((u).cache_read, (cr), 0);                                                          \
	} while (0)

static void parse_ok(const char *text, kgb_agentlog_kind_t kind, kgb_agentlog_t *lg)
{
	char err[512];
	if (kgb_agentlog_parse("run.jsonl", text, strlen(text), kind, lg, err, sizeof err) != 0)
		FAIL("parse failed: %s", err);
}

/* One session that ran to its result: the result's usage, not the messages' sum. */
TEST(agentlog_claude_result)
{
	const char *log =
		"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_a\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_b\",\"usage\":{\"input_tokens\":20,\"output_tokens\":7}}}\n"
		"{\"type\":\"result\",\"subtype\":\"success\",\"usage\":{\"input_tokens\":31,\"output_tokens\":13,"
		"\"cache_creation_input_tokens\":400,\"cache_read_input_tokens\":5000}}\n";
	kgb_agentlog_t lg;
	parse_ok(log, KGB_AGENTLOG_CLAUDE, &lg);
	ASSERT_USAGE(lg.usage, 31, 13, 400, 5000);
	ASSERT_FALSE(lg.usage.has_reasoning);
	ASSERT_NEAR(kgb_usage_total(&lg.usage), 5444, 0);
	ASSERT_EQ_INT(lg.sessions, 1);
	ASSERT_EQ_INT(lg.ended, 1);
	ASSERT_EQ_INT(lg.skipped, 0);
	ASSERT_EQ_INT(lg.nversions, 0);
	kgb_agentlog_release(&lg);
}

/* A killed session (no result) after which the harness started the agent again (a
 * second session that ended). The first: msg_a streamed over three events (one per
 * content block; its output count grows), msg_b twice, msg_c the API's retry of the
 * call msg_b answered (a new id, billed again), a stray line of other output.
 *   session 1: msg_a (100 in, 30 out, 1000 cw, 0 cr)
 *            + msg_b (150 in, 12 out, 0 cw, 1000 cr)
 *            + msg_c (150 in, 14 out, 0 cw, 1000 cr)  = 400 in, 56 out, 1000 cw, 2000 cr
 *   session 2: result (70 in, 9 out, 5 cw, 600 cr)
 *   total:                                              470 in, 65 out, 1005 cw, 2600 cr */
TEST(agentlog_claude_killed_dedup_retries)
{
	const char *log =
		"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_a\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1,"
		"\"cache_creation_input_tokens\":1000,\"cache_read_input_tokens\":0}}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_a\",\"usage\":{\"input_tokens\":100,\"output_tokens\":30,"
		"\"cache_creation_input_tokens\":1000,\"cache_read_input_tokens\":0}}}\n"
		"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\"}]}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_a\",\"usage\":{\"input_tokens\":100,\"output_tokens\":30,"
		"\"cache_creation_input_tokens\":1000,\"cache_read_input_tokens\":0}}}\n"
		"Traceback (most recent call last): the agent's stray output\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_b\",\"usage\":{\"input_tokens\":150,\"output_tokens\":12,"
		"\"cache_read_input_tokens\":1000}}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_b\",\"usage\":{\"input_tokens\":150,\"output_tokens\":12,"
		"\"cache_read_input_tokens\":1000}}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_c\",\"usage\":{\"input_tokens\":150,\"output_tokens\":14,"
		"\"cache_read_input_tokens\":1000}}}\n"
		"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s2\"}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_d\",\"usage\":{\"input_tokens\":70,\"output_tokens\":9}}}\n"
		"{\"type\":\"result\",\"subtype\":\"success\",\"usage\":{\"input_tokens\":70,\"output_tokens\":9,"
		"\"cache_creation_input_tokens\":5,\"cache_read_input_tokens\":600}}\n";
	kgb_agentlog_t lg;
	parse_ok(log, KGB_AGENTLOG_CLAUDE, &lg);
	ASSERT_USAGE(lg.usage, 470, 65, 1005, 2600);
	ASSERT_NEAR(kgb_usage_total(&lg.usage), 4140, 0);
	ASSERT_EQ_INT(lg.sessions, 2);
	ASSERT_EQ_INT(lg.ended, 1);
	ASSERT_EQ_INT(lg.messages, 3);
	ASSERT_EQ_INT(lg.skipped, 1);
	ASSERT_CONTAINS(lg.notes[0], "run.jsonl:6: not a JSON event, skipped: Traceback");
	kgb_agentlog_release(&lg);
}

/* OpenCode: every step_finish's part.tokens summed (a part repeated counted once);
 *   step 1: 1200 in, 80 out, 16 reasoning, 0 cache read, 900 cache write
 *   step 2:  300 in, 40 out,  4 reasoning, 900 cache read, 0 cache write
 *   step 3:   50 in, 10 out,  0 reasoning, 1200 cache read, 20 cache write
 *   total:  1550 in, 130 out, 20 reasoning, 2100 cache read, 920 cache write: 4700
 *           tokens (reasoning apart) */
TEST(agentlog_opencode_steps)
{
	const char *log =
		"{\"type\":\"step_start\",\"part\":{\"id\":\"prt_1\"}}\n"
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"prt_2\",\"type\":\"step-finish\",\"tokens\":{\"input\":1200,"
		"\"output\":80,\"reasoning\":16,\"cache\":{\"read\":0,\"write\":900}}}}\n"
		"{\"type\":\"text\",\"part\":{\"id\":\"prt_3\",\"text\":\"hello\"}}\n"
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"prt_4\",\"tokens\":{\"input\":300,\"output\":40,\"reasoning\":4,"
		"\"cache\":{\"read\":900,\"write\":0}}}}\n"
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"prt_4\",\"tokens\":{\"input\":300,\"output\":40,\"reasoning\":4,"
		"\"cache\":{\"read\":900,\"write\":0}}}}\n"
		"\n"
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"prt_6\",\"tokens\":{\"input\":50,\"output\":10,"
		"\"cache\":{\"read\":1200,\"write\":20}}}}\n";
	kgb_agentlog_t lg;
	parse_ok(log, KGB_AGENTLOG_OPENCODE, &lg);
	ASSERT_USAGE(lg.usage, 1550, 130, 920, 2100);
	ASSERT_NEAR(lg.usage.reasoning, 20, 0);
	ASSERT_TRUE(lg.usage.has_reasoning);
	ASSERT_NEAR(kgb_usage_total(&lg.usage), 4700, 0);
	ASSERT_EQ_INT(lg.messages, 3);
	ASSERT_EQ_INT(lg.skipped, 0);
	kgb_agentlog_release(&lg);
}

/* Versions: each kgb verify answer the agent read ends one, with the tokens since the
 * previous answer. Claude Code, one session that ended:
 *   msg_a (100 in, 10 out), then the answer of campaign 7 (failed, after a note line)
 *   msg_b (200 in, 20 out, streamed twice), then the answer of campaign 9 (passed, as
 *   a text block)
 *   msg_c (50 in, 5 out), then the result (400 in, 40 out): the 50 + 5 the messages do
 *   not account for go to the tokens after the last answer: 100 in, 10 out. */
TEST(agentlog_claude_versions)
{
	const char *log =
		"{\"type\":\"system\",\"subtype\":\"init\"}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_a\",\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\","
		"\"input\":{\"command\":\"kgb verify --json floor/\"}}],\"usage\":{\"input_tokens\":100,\"output_tokens\":10}}}\n"
		"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":"
		"\"kgb verify: a note\\n{\\\"passed\\\": false, \\\"campaign_id\\\": 7, \\\"dev_cases\\\": [0, 1]}\"}]}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_b\",\"usage\":{\"input_tokens\":200,\"output_tokens\":20}}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_b\",\"usage\":{\"input_tokens\":200,\"output_tokens\":20}}}\n"
		"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"text\","
		"\"text\":\"{\\\"passed\\\": true, \\\"campaign_id\\\": 9, \\\"dev_cases\\\": [0]}\"}]}]}}\n"
		"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_c\",\"usage\":{\"input_tokens\":50,\"output_tokens\":5}}}\n"
		"{\"type\":\"result\",\"usage\":{\"input_tokens\":400,\"output_tokens\":40}}\n";
	kgb_agentlog_t lg;
	parse_ok(log, KGB_AGENTLOG_CLAUDE, &lg);
	ASSERT_EQ_INT(lg.nversions, 2);
	ASSERT_EQ_U64(lg.versions[0].campaign_id, 7);
	ASSERT_FALSE(lg.versions[0].passed);
	ASSERT_USAGE(lg.versions[0].usage, 100, 10, 0, 0);
	ASSERT_EQ_U64(lg.versions[1].campaign_id, 9);
	ASSERT_TRUE(lg.versions[1].passed);
	ASSERT_USAGE(lg.versions[1].usage, 200, 20, 0, 0);
	ASSERT_USAGE(lg.after, 100, 10, 0, 0);
	ASSERT_USAGE(lg.usage, 400, 40, 0, 0);
	kgb_agentlog_release(&lg);
}

/* OpenCode: the step that ran the verify (its tool part comes before its step_finish)
 * belongs to the version: step 1 (10 in, 1 out) and step 2 (20 in, 2 out) make version
 * 0 (campaign 3), step 3 (40 in, 4 out) is after it. */
TEST(agentlog_opencode_versions)
{
	const char *log =
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"p1\",\"tokens\":{\"input\":10,\"output\":1}}}\n"
		"{\"type\":\"tool_use\",\"part\":{\"tool\":\"bash\",\"state\":{\"status\":\"completed\","
		"\"input\":{\"command\":\"kgb verify --json x.py\"},"
		"\"output\":\"{\\\"passed\\\": true, \\\"campaign_id\\\": 3, \\\"dev_cases\\\": [0]}\"}}}\n"
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"p2\",\"tokens\":{\"input\":20,\"output\":2}}}\n"
		"{\"type\":\"step_finish\",\"part\":{\"id\":\"p3\",\"tokens\":{\"input\":40,\"output\":4}}}\n";
	kgb_agentlog_t lg;
	parse_ok(log, KGB_AGENTLOG_OPENCODE, &lg);
	ASSERT_EQ_INT(lg.nversions, 1);
	ASSERT_EQ_U64(lg.versions[0].campaign_id, 3);
	ASSERT_TRUE(lg.versions[0].passed);
	ASSERT_USAGE(lg.versions[0].usage, 30, 3, 0, 0);
	ASSERT_USAGE(lg.after, 40, 4, 0, 0);
	kgb_agentlog_release(&lg);
}

/* Malformed usage of a counted event: an error naming file, line, field and value. */
TEST(agentlog_bad_usage)
{
	char err[512] = "";
	kgb_agentlog_t lg;
	const char *cc = "{\"type\":\"system\",\"subtype\":\"init\"}\n"
	                 "{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":\"many\"}}}\n";
	ASSERT_EQ_INT(kgb_agentlog_parse("cc_output.jsonl", cc, strlen(cc), KGB_AGENTLOG_CLAUDE, &lg, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "cc_output.jsonl:2: message.usage.input_tokens: expected a token count");
	ASSERT_CONTAINS(err, "\"many\"");
	const char *oc = "{\"type\":\"step_finish\",\"part\":{\"tokens\":{\"input\":1,\"cache\":{\"read\":-3}}}}\n";
	ASSERT_EQ_INT(kgb_agentlog_parse("oc_output.json", oc, strlen(oc), KGB_AGENTLOG_OPENCODE, &lg, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "oc_output.json:1: part.tokens.cache.read: expected a token count");
	ASSERT_CONTAINS(err, "-3");
	const char *oc2 = "{\"type\":\"step_finish\",\"part\":{}}\n";
	ASSERT_EQ_INT(kgb_agentlog_parse("oc_output.json", oc2, strlen(oc2), KGB_AGENTLOG_OPENCODE, &lg, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "oc_output.json:1: part.tokens: expected an object");
}

/* The dev cases: ascending, distinct, in range, the smoke cases first, at most
 * KGB_DEV_MAX; the same on every call. */
TEST(dev_cases)
{
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		uint32_t idx[KGB_DEV_MAX], again[KGB_DEV_MAX];
		uint32_t n = kgb_op_case_count(op), smoke = kgb_op_smoke_case_count(op);
		size_t m = kgb_dev_cases(op, idx);
		ASSERT_TRUE(m >= 1 && m <= KGB_DEV_MAX);
		ASSERT_TRUE(m <= n);
		for (size_t k = 0; k < m; k++) {
			ASSERT_TRUE(idx[k] < n);
			if (k > 0)
				ASSERT_TRUE(idx[k] > idx[k - 1]);
			if (k < smoke && k < KGB_DEV_SMOKE_MAX)
				ASSERT_EQ_INT(idx[k], k);
		}
		if (n > KGB_DEV_MAX)
			ASSERT_TRUE(m < n);
		ASSERT_EQ_INT(kgb_dev_cases(op, again), m);
		ASSERT_TRUE(memcmp(idx, again, m * sizeof *idx) == 0);
	}
	/* add: its smoke cases, then two neighbours at each of four strata's midpoints */
	const kgb_op_t *add = kgb_catalog_find("add");
	uint32_t idx[KGB_DEV_MAX];
	uint32_t n = kgb_op_case_count(add), s = kgb_op_smoke_case_count(add);
	if (s > KGB_DEV_SMOKE_MAX)
		s = KGB_DEV_SMOKE_MAX;
	uint32_t r = n - s;
	size_t m = kgb_dev_cases(add, idx);
	ASSERT_EQ_INT(m, s + KGB_DEV_GRID_SAMPLE);
	for (uint32_t j = 0; j < 4; j++) {
		ASSERT_EQ_INT(idx[s + 2 * j], s + r * (2 * j + 1) / 8);
		ASSERT_EQ_INT(idx[s + 2 * j + 1], s + r * (2 * j + 1) / 8 + 1);
	}
}
