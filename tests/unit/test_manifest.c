/* Tests for common/manifest.c: parse, resolve from files and URLs, serialise and
 * parse again in the coordinator's form, and bad inputs (the message names the file,
 * the JSON path and the value). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "manifest.h"
#include "plan.h"
#include "test.h"
#include "util.h"
#include "wire.h"

#define ADD_PLAN                                                                                   \
	"{\"kernels\":[{\"entry\":\"add_f32\",\"lang\":\"opencl\",\"source\":\"add.cl\","                \
	"\"grid\":[\"cdiv(out.numel,256)\"],\"block\":[256],\"args\":[{\"tensor\":\"self\"},"           \
	"{\"tensor\":\"other\"},{\"tensor\":\"out\"},{\"scalar\":\"out.numel\"},"                        \
	"{\"scalar\":\"alpha\",\"type\":\"f32\"}]}]}"
#define SILU_PLAN                                                                                  \
	"{\"kernels\":[{\"entry\":\"silu\",\"lang\":\"opencl\",\"source\":\"silu.cl\","                  \
	"\"grid\":[\"cdiv(out.numel,64)\"],\"block\":[64],\"args\":[{\"tensor\":\"self\"},"             \
	"{\"tensor\":\"out\"},{\"scalar\":\"out.numel\"}]}]}"

static kgb_manifest_t *parse_ok(const char *json, bool resolved)
{
	kgb_manifest_t *m = NULL;
	char err[1024];
	if (kgb_manifest_parse(json, strlen(json), "demo.json", resolved, &m, err, sizeof err) != 0)
		FAIL("parse failed: %s", err);
	return m;
}

/* parse must fail with a message containing every NULL-terminated want */
static void parse_bad_l(bool resolved, const char *json, const char *const *wants)
{
	kgb_manifest_t *m = NULL;
	char err[1024] = "";
	int rc = kgb_manifest_parse(json, strlen(json), "demo.json", resolved, &m, err, sizeof err);
	if (rc == 0)
		kgb_manifest_destroy(&m);
	kgb_test_refused(rc, m == NULL, json, err, wants);
}
#define parse_bad(resolved, json, ...) parse_bad_l(resolved, json, (const char *const[]){ __VA_ARGS__ })

static const kgb_candidate_t *find_cand(const kgb_manifest_t *m, const char *method, const char *op)
{
	for (size_t i = 0; i < m->ncandidates; i++)
		if (!strcmp(m->candidates[i].method, method) && !strcmp(m->candidates[i].op, op))
			return &m->candidates[i];
	FAIL("no candidate %s/%s", method, op);
}

static const kgb_source_t *find_src(const kgb_candidate_t *c, const char *name)
{
	for (size_t i = 0; i < c->nsources; i++)
		if (!strcmp(c->sources[i].name, name))
			return &c->sources[i];
	FAIL("candidate %s has no source %s", c->origin, name);
}

static int fetch_calls;
static char *fake_fetch(const char *url, size_t *len, char *err, size_t errlen)
{
	fetch_calls++;
	const char *body = NULL;
	if (!strcmp(url, "http://h/p/silu.plan.json"))
		body = SILU_PLAN;
	else if (!strcmp(url, "http://h/p/silu.cl"))
		body = "__kernel void silu() {}";
	if (!body) {
		kgb_err(err, errlen, "HTTP 404");
		return NULL;
	}
	*len = strlen(body);
	return kgb_xstrdup(body);
}

TEST(manifest_resolve_files_urls_and_round_trip)
{
	char err[1024];
	kgb_test_write_file("add.plan.json", ADD_PLAN);
	kgb_test_write_file("add.cl", "__kernel void add_f32() {}\n");
	/* a binary source: bytes that are not UTF-8 and include NUL */
	const char *json =
		"{ \"name\": \"demo\", \"operators\": [\"add\", \"silu\"], \"platforms\": [\"opencl:cpu\"],\n"
		"  \"seed\": 1234, \"shard_size\": 16, \"time_limit_ms\": 60000, \"timing_budget_ms\": 200,\n"
		"  \"timing\": false, \"priority\": 3, \"baseline\": \"baseline\",\n"
		"  \"methods\": [\n"
		"   { \"name\": \"baseline\", \"description\": \"naive kernels\", \"candidates\": [\n"
		"     { \"operator\": \"add\", \"plan\": \"add.plan.json\", \"tokens\": 0, \"gen_seconds\": 0 },\n"
		"     { \"operator\": \"silu\", \"plan\": {\"url\": \"http://h/p/silu.plan.json\"}, \"tokens\": 12.5 } ] },\n"
		"   { \"name\": \"agent\", \"candidates\": [\n"
		"     { \"operator\": \"silu\", \"plan\": " SILU_PLAN ", \"tokens\": 900, \"gen_seconds\": 3.5,\n"
		"       \"sources\": { \"silu.cl\": {\"inline\": \"__kernel void silu() { /* inline */ }\"},\n"
		"                      \"extra.bin\": {\"base64\": \"AAH/fw==\"} } } ] } ] }";
	kgb_manifest_t *m = parse_ok(json, false);
	ASSERT_EQ_STR(m->name, "demo");
	ASSERT_EQ_INT(m->nops, 2);
	ASSERT_EQ_INT(m->nplatforms, 1);
	ASSERT_EQ_U64(m->seed, 1234);
	ASSERT_EQ_INT(m->shard_size, 16);
	ASSERT_EQ_INT(m->time_limit_ms, 60000);
	ASSERT_EQ_INT(m->timing_budget_ms, 200);
	ASSERT_FALSE(m->timing);
	ASSERT_EQ_INT(m->priority, 3);
	ASSERT_EQ_STR(m->baseline, "baseline");
	ASSERT_EQ_INT(m->nmethods, 2);
	ASSERT_EQ_STR(m->methods[0].description, "naive kernels");
	ASSERT_EQ_INT(m->ncandidates, 3);
	const kgb_candidate_t *c = find_cand(m, "baseline", "add");
	ASSERT_TRUE(c->plan_json == NULL);
	ASSERT_EQ_STR(c->plan_file, "add.plan.json");
	ASSERT_CONTAINS(c->origin, "demo.json: methods[0].candidates[0]");
	c = find_cand(m, "agent", "silu");
	ASSERT_TRUE(c->plan_json != NULL);
	ASSERT_NEAR(c->tokens, 900, 0);
	ASSERT_NEAR(c->gen_seconds, 3.5, 0);
	const kgb_source_t *bin = find_src(c, "extra.bin");
	ASSERT_EQ_INT(bin->len, 4);
	ASSERT_TRUE(memcmp(bin->content, "\x00\x01\xff\x7f", 4) == 0);

	fetch_calls = 0;
	ASSERT_OK(kgb_manifest_resolve(m, kgb_test_tmpdir(), fake_fetch, err, sizeof err), err);
	ASSERT_EQ_INT(fetch_calls, 2); /* the plan, then its default source next to it */
	c = find_cand(m, "baseline", "add");
	ASSERT_TRUE(c->plan_json != NULL);
	ASSERT_EQ_STR(find_src(c, "add.cl")->content, "__kernel void add_f32() {}\n");
	c = find_cand(m, "baseline", "silu");
	ASSERT_EQ_STR(find_src(c, "silu.cl")->content, "__kernel void silu() {}");

	/* the resolved form parses again with require_resolved and keeps everything */
	char *out = kgb_manifest_to_json(m);
	ASSERT_CONTAINS(out, "\"base64\":\"AAH/fw==\"");
	ASSERT_FALSE(strstr(out, "add.plan.json") != NULL);
	kgb_manifest_t *m2 = parse_ok(out, true);
	ASSERT_EQ_INT(m2->ncandidates, 3);
	ASSERT_EQ_STR(m2->baseline, "baseline");
	ASSERT_EQ_U64(m2->seed, 1234);
	ASSERT_FALSE(m2->timing);
	ASSERT_EQ_INT(m2->priority, 3);
	ASSERT_EQ_STR(m2->platforms[0], "opencl:cpu");
	for (size_t i = 0; i < m->ncandidates; i++) {
		const kgb_candidate_t *a = &m->candidates[i];
		const kgb_candidate_t *b = find_cand(m2, a->method, a->op);
		ASSERT_EQ_INT(b->nsources, a->nsources);
		for (size_t s = 0; s < a->nsources; s++) {
			const kgb_source_t *sb = find_src(b, a->sources[s].name);
			ASSERT_EQ_INT(sb->len, a->sources[s].len);
			ASSERT_TRUE(memcmp(sb->content, a->sources[s].content, sb->len) == 0);
		}
		ASSERT_NEAR(b->tokens, a->tokens, 0);
	}
	/* serialising the re-parsed manifest gives the same text */
	char *out2 = kgb_manifest_to_json(m2);
	ASSERT_EQ_STR(out2, out);
	free(out);
	free(out2);
	kgb_manifest_destroy(&m);
	kgb_manifest_destroy(&m2);
	ASSERT_TRUE(m == NULL);
}

TEST(manifest_dataset_and_defaults)
{
	kgb_manifest_t *m = parse_ok("{\"name\":\"d\",\"operators\":{\"dataset\":\"demo\"},\"methods\":[{\"name\":\"b\","
	                             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"p.json\"}]}]}",
	                             false);
	ASSERT_EQ_STR(m->dataset, "demo");
	ASSERT_TRUE(m->nops >= 2);
	bool has_add = false, has_silu = false;
	for (size_t i = 0; i < m->nops; i++) {
		has_add |= !strcmp(m->ops[i], "add");
		has_silu |= !strcmp(m->ops[i], "silu");
	}
	ASSERT_TRUE(has_add && has_silu);
	ASSERT_EQ_INT(m->nplatforms, 0);
	ASSERT_EQ_INT(m->shard_size, 32);
	ASSERT_EQ_INT(m->time_limit_ms, 120000);
	ASSERT_EQ_INT(m->timing_budget_ms, 500);
	ASSERT_TRUE(m->timing);
	ASSERT_EQ_INT(m->priority, 0);
	ASSERT_TRUE(m->baseline == NULL);
	/* resolving a missing plan file names the candidate and the file */
	char err[1024];
	ASSERT_EQ_INT(kgb_manifest_resolve(m, kgb_test_tmpdir(), NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "demo.json: methods[0].candidates[0].plan");
	ASSERT_CONTAINS(err, "p.json");
	kgb_manifest_destroy(&m);
}

TEST(manifest_resolve_errors)
{
	char err[1024];
	kgb_test_write_file("bad.plan.json", "{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\",\"source\":\"k.cl\","
	                                     "\"grid\":[1],\"block\":[1],\"args\":[{\"tensor\":\"nope\"}]}]}");
	kgb_test_write_file("broken.plan.json", "{\"kernels\": [");
	kgb_manifest_t *m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	                             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"bad.plan.json\"}]}]}",
	                             false);
	ASSERT_EQ_INT(kgb_manifest_resolve(m, kgb_test_tmpdir(), NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "methods[0].candidates[0].plan (bad.plan.json)");
	ASSERT_CONTAINS(err, "kernels[0].args[0].tensor");
	ASSERT_CONTAINS(err, "'nope'");
	kgb_manifest_destroy(&m);

	m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"broken.plan.json\"}]}]}",
	             false);
	ASSERT_EQ_INT(kgb_manifest_resolve(m, kgb_test_tmpdir(), NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "broken.plan.json");
	ASSERT_CONTAINS(err, "line 1");
	kgb_manifest_destroy(&m);

	/* plan found, but its kernel source file is missing */
	kgb_test_write_file("add.plan.json", ADD_PLAN);
	m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"add.plan.json\"}]}]}",
	             false);
	ASSERT_EQ_INT(kgb_manifest_resolve(m, kgb_test_tmpdir(), NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "methods[0].candidates[0].sources.add.cl");
	ASSERT_CONTAINS(err, "No such file");
	kgb_manifest_destroy(&m);

	/* URL that fails, and URL with no fetch function */
	m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	             "\"candidates\":[{\"operator\":\"add\",\"plan\":{\"url\":\"http://h/missing.json\"}}]}]}",
	             false);
	ASSERT_EQ_INT(kgb_manifest_resolve(m, kgb_test_tmpdir(), fake_fetch, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "http://h/missing.json: HTTP 404");
	ASSERT_EQ_INT(kgb_manifest_resolve(m, kgb_test_tmpdir(), NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "no URL support");
	kgb_manifest_destroy(&m);
}

#define HEAD "{\"name\":\"d\",\"operators\":[\"add\",\"silu\"],"
#define ONE_METHOD(cands) "\"methods\":[{\"name\":\"b\",\"candidates\":[" cands "]}]}"
#define CAND_ADD "{\"operator\":\"add\",\"plan\":\"a.json\"}"

/* A binary source's base64 (libsodium's codec, standard alphabet, padded): RFC 4648's
 * vectors decode to their bytes, with no padding, one and two padding characters, and
 * whitespace between groups; bytes that are not UTF-8 are written back as the same
 * text (UTF-8 goes back inline); bad text is refused at the character that makes it
 * bad. */
#define B64_CAND(text)                                                                             \
	ONE_METHOD("{\"operator\":\"add\",\"plan\":" ADD_PLAN ",\"sources\":{\"add.cl\":{\"inline\":\"k\"},"  \
	           "\"k.bin\":{\"base64\":\"" text "\"}}}")

TEST(manifest_base64_vectors_and_bad_text)
{
	static const struct {
		const char *bytes, *text;
		size_t n;
	} v[] = {{"f", "Zg==", 1},           {"fo", "Zm8=", 2},          {"foo", "Zm9v", 3},
	         {"foob", "Zm9vYg==", 4},    {"fooba", "Zm9vYmE=", 5},   {"foobar", "Zm9vYmFy", 6},
	         {"\xff", "/w==", 1},        {"\xff\xfe", "//4=", 2},    {"\xff\xfe\xfd", "//79", 3},
	         {"\xff\xfe\x00\x7f", "//4Afw==", 4}, {"\x00\xff\x10\x80\xc0", "AP8QgMA=", 5}};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char json[1024], want[64];
		snprintf(json, sizeof json, HEAD B64_CAND("%s"), v[i].text);
		kgb_manifest_t *m = parse_ok(json, false);
		const kgb_source_t *src = find_src(&m->candidates[0], "k.bin");
		ASSERT_EQ_INT(src->len, v[i].n);
		ASSERT_TRUE(memcmp(src->content, v[i].bytes, v[i].n) == 0);
		if ((unsigned char)v[i].bytes[0] >= 0x80 || v[i].bytes[0] == 0) {
			char *out = kgb_manifest_to_json(m);
			snprintf(want, sizeof want, "\"k.bin\":{\"base64\":\"%s\"}", v[i].text);
			ASSERT_CONTAINS(out, want);
			free(out);
		}
		kgb_manifest_destroy(&m);
	}
	/* whitespace between groups is ignored */
	kgb_manifest_t *m = parse_ok(HEAD B64_CAND("Zm9v\\nYmFy \\tZm8="), false);
	const kgb_source_t *src = find_src(&m->candidates[0], "k.bin");
	ASSERT_EQ_INT(src->len, 8);
	ASSERT_TRUE(memcmp(src->content, "foobarfo", 8) == 0);
	kgb_manifest_destroy(&m);

	const char *where = "methods[0].candidates[0].sources.k.bin.base64: invalid base64 at character";
	parse_bad(false, HEAD B64_CAND("Zm9v!mFy"), where, "character 5", NULL);      /* not of the alphabet */
	parse_bad(false, HEAD B64_CAND("Zm9vYg"), where, NULL);                      /* padding missing */
	parse_bad(false, HEAD B64_CAND("Zg="), where, NULL);                         /* padding cut short */
	parse_bad(false, HEAD B64_CAND("Zg==Zg=="), where, "character 5", NULL);    /* data after the padding */
	parse_bad(false, HEAD B64_CAND("Zm9vY"), where, NULL);                       /* a group of one */
	parse_bad(false, HEAD B64_CAND("Zm9vYmFy-_"), where, "character 9", NULL);  /* the URL alphabet */
}

TEST(manifest_parse_bad)
{
	parse_bad(false, "{", "demo.json: line 1", NULL);
	parse_bad(false, "[]", "demo.json: expected a manifest object", NULL);
	parse_bad(false, "{\"operators\":[\"add\"]}", "demo.json: name: missing", NULL);
	parse_bad(false, "{\"name\":\"\",\"operators\":[\"add\"]}", "demo.json: name: expected a non-empty string, got \"\"",
	          NULL);
	parse_bad(false, HEAD "\"colour\":1," ONE_METHOD(CAND_ADD), "demo.json: colour: unknown key", NULL);
	parse_bad(false, "{\"name\":\"d\",\"operators\":[\"addd\"]," ONE_METHOD(CAND_ADD),
	          "demo.json: operators[0]: unknown operator 'addd'", NULL);
	parse_bad(false, "{\"name\":\"d\",\"operators\":[\"add\",\"add\"]," ONE_METHOD(CAND_ADD),
	          "operators[1]: operator 'add' is listed twice", NULL);
	parse_bad(false, "{\"name\":\"d\",\"operators\":{\"dataset\":\"everything\"}," ONE_METHOD(CAND_ADD),
	          "operators.dataset: unknown dataset 'everything'", NULL);
	parse_bad(false, "{\"name\":\"d\",\"operators\":[]," ONE_METHOD(CAND_ADD), "operators: expected a non-empty list",
	          NULL);
	parse_bad(false, HEAD "\"platforms\":\"some\"," ONE_METHOD(CAND_ADD), "platforms: expected \"all\"", "\"some\"",
	          NULL);
	parse_bad(false, HEAD "\"platforms\":[\"a b\"]," ONE_METHOD(CAND_ADD), "platforms[0]: 'a b' is not a platform",
	          NULL);
	parse_bad(false, HEAD "\"shard_size\":0," ONE_METHOD(CAND_ADD), "shard_size: 0 is out of range 1..4096", NULL);
	parse_bad(false, HEAD "\"shard_size\":5000," ONE_METHOD(CAND_ADD), "shard_size: 5000 is out of range", NULL);
	parse_bad(false, HEAD "\"shard_size\":\"8\"," ONE_METHOD(CAND_ADD), "shard_size: expected an integer, got \"8\"",
	          NULL);
	parse_bad(false, HEAD "\"seed\":-1," ONE_METHOD(CAND_ADD), "seed: -1 is out of range", NULL);
	parse_bad(false, HEAD "\"heldout\":65," ONE_METHOD(CAND_ADD), "heldout: 65 is out of range 0..64", NULL);
	parse_bad(false, HEAD "\"heldout\":\"few\"," ONE_METHOD(CAND_ADD), "heldout: expected an integer", NULL);
	parse_bad(false, HEAD "\"timing\":1," ONE_METHOD(CAND_ADD), "timing: expected true or false, got 1", NULL);
	parse_bad(false, HEAD "\"baseline\":\"ref\"," ONE_METHOD(CAND_ADD), "baseline: 'ref' is not one of the manifest's methods",
	          NULL);
	parse_bad(false, HEAD "\"methods\":[]}", "methods: expected a non-empty list", NULL);
	parse_bad(false, HEAD ONE_METHOD(""), "methods: no method has any candidate", NULL);
	parse_bad(false, HEAD "\"methods\":[{\"name\":\"b\",\"candidates\":[" CAND_ADD "]},{\"name\":\"b\",\"candidates\":[]}]}",
	          "methods[1].name: method 'b' is defined twice", NULL);
	parse_bad(false, HEAD "\"methods\":[{\"name\":\"a b\",\"candidates\":[]}]}", "methods[0].name: 'a b' is not a valid",
	          NULL);
	parse_bad(false, HEAD "\"methods\":[{\"name\":\"b\",\"cands\":[]}]}", "methods[0].cands: unknown key", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"addd\",\"plan\":\"a.json\"}"),
	          "demo.json: methods[0].candidates[0].operator: unknown operator 'addd'", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"sum\",\"plan\":\"a.json\"}"),
	          "methods[0].candidates[0].operator: operator 'sum' is not one of the campaign's operators", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_ADD "," CAND_ADD),
	          "methods[0].candidates[1].operator: method 'b' already has a candidate for 'add'", "candidates[0]", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\"}"), "methods[0].candidates[0].plan: missing", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":7}"), "methods[0].candidates[0].plan", "got 7",
	          NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":{\"url\":\"ftp://x\"}}"),
	          "methods[0].candidates[0].plan.url", "ftp://x", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"tokens\":-1}"),
	          "methods[0].candidates[0].tokens: expected a number >= 0, got -1", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"colour\":\"x\"}"),
	          "methods[0].candidates[0].colour: unknown key", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"sources\":{\"k.cl\":{\"base64\":\"@@@@\"}}}"),
	          "methods[0].candidates[0].sources.k.cl.base64: invalid base64 at character 1", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"sources\":{\"k.cl\":{\"text\":\"x\"}}}"),
	          "sources.k.cl.text: unknown source kind 'text'", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"sources\":{\"../k.cl\":\"k.cl\"}}"),
	          "sources.../k.cl: '../k.cl' is not a plain", NULL);
	/* an inline plan is checked against its operator at parse time */
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"silu\",\"plan\":" ADD_PLAN "}"),
	          "demo.json: methods[0].candidates[0].plan: kernels[0].args[1].tensor", "no tensor 'other'", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":{\"kernels\":[{\"entry\":\"k\",\"lang\":\"opencl\","
	                                 "\"source\":\"k.cl\",\"grid\":[1],\"block\":[1],\"args\":[{\"scalar\":\"N\","
	                                 "\"type\":\"i33\"}]}]}}"),
	          "methods[0].candidates[0].plan: kernels[0].args[0].type: unknown scalar type 'i33'", NULL);
	/* the coordinator's form requires everything inline */
	parse_bad(true, HEAD ONE_METHOD(CAND_ADD), "methods[0].candidates[0].plan: expected an inline plan", NULL);
	parse_bad(true, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":" ADD_PLAN "}"),
	          "methods[0].candidates[0].sources: kernel 0's source 'add.cl' is not included", NULL);
	parse_bad(true, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":" ADD_PLAN ",\"sources\":{\"add.cl\":\"add.cl\"}}"),
	          "sources.add.cl: expected an inline source", NULL);
}

/* "cases": "all" (the default) or "smoke"; serialised, and read back in the
 * coordinator's form. */
TEST(manifest_cases_smoke_or_all)
{
	kgb_manifest_t *m = parse_ok(HEAD ONE_METHOD(CAND_ADD), false);
	ASSERT_FALSE(m->smoke);
	kgb_manifest_destroy(&m);
	m = parse_ok(HEAD "\"cases\":\"all\"," ONE_METHOD(CAND_ADD), false);
	ASSERT_FALSE(m->smoke);
	kgb_manifest_destroy(&m);

	/* inline plan and source: the serialised form parses as the coordinator's */
	m = parse_ok(HEAD "\"cases\":\"smoke\"," ONE_METHOD("{\"operator\":\"add\",\"plan\":" ADD_PLAN
	                                                    ",\"sources\":{\"add.cl\":{\"inline\":\"k\"}}}"),
	             false);
	ASSERT_TRUE(m->smoke);
	char *out = kgb_manifest_to_json(m);
	ASSERT_CONTAINS(out, "\"cases\":\"smoke\"");
	kgb_manifest_t *m2 = parse_ok(out, true);
	ASSERT_TRUE(m2->smoke);
	kgb_manifest_destroy(&m2);
	free(out);
	m->smoke = false;
	out = kgb_manifest_to_json(m);
	ASSERT_CONTAINS(out, "\"cases\":\"all\"");
	m2 = parse_ok(out, true);
	ASSERT_FALSE(m2->smoke);
	kgb_manifest_destroy(&m2);
	free(out);
	kgb_manifest_destroy(&m);

	parse_bad(false, HEAD "\"cases\":\"some\"," ONE_METHOD(CAND_ADD),
	          "demo.json: cases: expected \"all\" or \"smoke\", got \"some\"", NULL);
	parse_bad(false, HEAD "\"cases\":\"Smoke\"," ONE_METHOD(CAND_ADD), "demo.json: cases:", "\"Smoke\"", NULL);
	parse_bad(false, HEAD "\"cases\":1," ONE_METHOD(CAND_ADD), "demo.json: cases: expected \"all\" or \"smoke\", got 1",
	          NULL);
	parse_bad(false, HEAD "\"cases\":[\"smoke\"]," ONE_METHOD(CAND_ADD), "cases:", "got [\"smoke\"]", NULL);
}

/* A manifest may name only regular files under its own directory, and a candidate must
 * fit a job: "../", absolute paths and symbolic links pointing out are refused (unless
 * the user allows it), a FIFO or a device is refused without reading it, and a
 * candidate over KGB_MAX_CANDIDATE_BYTES is refused on both sides. */
TEST(manifest_files_inside_and_bounded)
{
	char err[1024], path[4200];
	const char *dir = kgb_test_tmpdir();
	snprintf(path, sizeof path, "%s/sub", dir);
	ASSERT_EQ_INT(mkdir(path, 0755), 0);
	kgb_test_write_file("add.plan.json", ADD_PLAN);
	kgb_test_write_file("outside.cl", "__kernel void add_f32() {}\n");
	snprintf(path, sizeof path, "%s/sub/add.plan.json", dir);
	char *plan = kgb_read_file(kgb_test_write_file("x", ADD_PLAN), NULL, err, sizeof err);
	ASSERT_TRUE(plan != NULL);
	FILE *f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	fputs(plan, f);
	fclose(f);
	free(plan);
	char sub[4200];
	snprintf(sub, sizeof sub, "%s/sub", dir);
	const char *cases[][2] = {
		{"../outside.cl", "outside the manifest's directory"},
		{"/etc/hostname", "outside the manifest's directory"},
		{"link.cl", "outside the manifest's directory"},   /* symlink to ../outside.cl */
		{"zero.cl", "outside the manifest's directory"},   /* symlink to /dev/zero */
		{"fifo.cl", "not a regular file (a FIFO)"},
	};
	snprintf(path, sizeof path, "%s/sub/link.cl", dir);
	ASSERT_EQ_INT(symlink("../outside.cl", path), 0);
	snprintf(path, sizeof path, "%s/sub/zero.cl", dir);
	ASSERT_EQ_INT(symlink("/dev/zero", path), 0);
	snprintf(path, sizeof path, "%s/sub/fifo.cl", dir);
	ASSERT_EQ_INT(mkfifo(path, 0644), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char json[600];
		snprintf(json, sizeof json,
		         "{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\",\"candidates\":[{\"operator\":"
		         "\"add\",\"plan\":\"add.plan.json\",\"sources\":{\"add.cl\":\"%s\"}}]}]}",
		         cases[i][0]);
		kgb_manifest_t *m = parse_ok(json, false);
		ASSERT_EQ_INT(kgb_manifest_resolve(m, sub, NULL, err, sizeof err), -1);
		ASSERT_CONTAINS(err, "methods[0].candidates[0].sources.add.cl");
		ASSERT_CONTAINS(err, cases[i][1]);
		kgb_manifest_destroy(&m);
	}
	/* the user may allow files outside; special files stay refused even then */
	kgb_manifest_t *m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	                             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"add.plan.json\","
	                             "\"sources\":{\"add.cl\":\"../outside.cl\"}}]}]}",
	                             false);
	ASSERT_OK(kgb_manifest_resolve_ex(m, sub, NULL, KGB_MANIFEST_ALLOW_OUTSIDE, err, sizeof err), err);
	kgb_manifest_destroy(&m);
	m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"add.plan.json\","
	             "\"sources\":{\"add.cl\":\"zero.cl\"}}]}]}",
	             false);
	ASSERT_EQ_INT(kgb_manifest_resolve_ex(m, sub, NULL, KGB_MANIFEST_ALLOW_OUTSIDE, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "not a regular file (a character device)");
	kgb_manifest_destroy(&m);

	/* a candidate over the limit: a big file, and a big inline source */
	snprintf(path, sizeof path, "%s/sub/big.cl", dir);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ_INT(ftruncate(fileno(f), (off_t)KGB_MAX_CANDIDATE_BYTES + 1), 0);
	fclose(f);
	m = parse_ok("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	             "\"candidates\":[{\"operator\":\"add\",\"plan\":\"add.plan.json\","
	             "\"sources\":{\"add.cl\":\"big.cl\"}}]}]}",
	             false);
	ASSERT_EQ_INT(kgb_manifest_resolve(m, sub, NULL, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "over the limit of");
	kgb_manifest_destroy(&m);
	size_t n = KGB_MAX_CANDIDATE_BYTES + 16;
	char *big = malloc(n + 512);
	ASSERT_TRUE(big != NULL);
	int k = snprintf(big, 512, "{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\","
	                           "\"candidates\":[{\"operator\":\"add\",\"plan\":%s,"
	                           "\"sources\":{\"add.cl\":{\"inline\":\"",
	                 ADD_PLAN);
	memset(big + k, 'x', n);
	strcpy(big + k + n, "\"}}}]}]}");
	kgb_manifest_t *mm = NULL;
	/* the coordinator's form (everything inline) is checked when parsed */
	int rc = kgb_manifest_parse(big, strlen(big), "big.json", true, &mm, err, sizeof err);
	ASSERT_EQ_INT(rc, -1);
	ASSERT_CONTAINS(err, "big.json: methods[0].candidates[0]: plan and sources are");
	ASSERT_CONTAINS(err, "over the limit of");
	free(big);
}

/* Case selections: indices, parameter values, both; the serialised form keeps them; bad
 * ones are refused naming the field and the value. */
TEST(manifest_case_selection)
{
	kgb_manifest_t *m = parse_ok(HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":[5,1,5]}"),
	                             false);
	ASSERT_TRUE(kgb_manifest_is_partial(m));
	uint32_t *idx = NULL;
	size_t n = 0;
	char err[512];
	ASSERT_EQ_INT(kgb_manifest_select_cases(&m->candidates[0], false, &idx, &n, err, sizeof err), 0);
	ASSERT_EQ_INT((int)n, 2); /* sorted, repeats once */
	ASSERT_EQ_INT((int)idx[0], 1);
	ASSERT_EQ_INT((int)idx[1], 5);
	free(idx);
	kgb_manifest_destroy(&m);

	/* where: every selected case has the value, and every case with it is selected */
	m = parse_ok(HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":{\"where\":{\"dtype\":"
	                             "[\"f16\",\"bf16\"]}}}"),
	             false);
	ASSERT_EQ_INT(kgb_manifest_select_cases(&m->candidates[0], true, &idx, &n, err, sizeof err), 0);
	const kgb_op_t *op = kgb_catalog_find("add");
	uint32_t count = kgb_op_smoke_case_count(op), want = 0;
	for (uint32_t k = 0; k < count; k++) {
		kgb_case_t kc;
		ASSERT_EQ_INT(kgb_case_build(op, k, &kc, err, sizeof err), 0);
		bool half = strstr(kc.label, "dtype=f16") || strstr(kc.label, "dtype=bf16");
		bool in = false;
		for (size_t i = 0; i < n; i++)
			in |= idx[i] == k;
		ASSERT_TRUE(half == in);
		want += half;
		kgb_case_release(&kc);
	}
	ASSERT_EQ_INT((int)n, (int)want);
	ASSERT_TRUE(n > 0 && n < count);
	free(idx);
	kgb_manifest_destroy(&m);

	/* null: the cases without the parameter (a contiguous layout is left out of labels) */
	m = parse_ok(HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":" ADD_PLAN ",\"sources\":{\"add.cl\":{\"inline\":"
	                             "\"k\"}},\"cases\":{\"where\":{\"layout\":null,\"other\":[\"col\",null]}}}"),
	             false);
	ASSERT_EQ_INT(kgb_manifest_select_cases(&m->candidates[0], false, &idx, &n, err, sizeof err), 0);
	want = 0;
	count = kgb_op_case_count(op);
	for (uint32_t k = 0; k < count; k++) {
		kgb_case_t kc;
		ASSERT_EQ_INT(kgb_case_build(op, k, &kc, err, sizeof err), 0);
		bool keep = !strstr(kc.label, "layout=") && (!strstr(kc.label, "other=") || strstr(kc.label, "other=col"));
		bool in = false;
		for (size_t i = 0; i < n; i++)
			in |= idx[i] == k;
		ASSERT_TRUE(keep == in);
		want += keep;
		kgb_case_release(&kc);
	}
	ASSERT_EQ_INT((int)n, (int)want);
	ASSERT_TRUE(n > 0 && n < count);
	free(idx);
	kgb_manifest_destroy(&m);

	/* no selection: every case, not partial */
	m = parse_ok(HEAD ONE_METHOD(CAND_ADD), false);
	ASSERT_FALSE(kgb_manifest_is_partial(m));
	ASSERT_EQ_INT(kgb_manifest_select_cases(&m->candidates[0], false, &idx, &n, err, sizeof err), 0);
	ASSERT_EQ_INT((int)n, (int)kgb_op_case_count(op));
	free(idx);
	kgb_manifest_destroy(&m);

	/* the resolved form carries the selection to the coordinator */
	m = parse_ok(HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":" ADD_PLAN ",\"sources\":{\"add.cl\":{\"inline\":"
	                             "\"k\"}},\"cases\":{\"indices\":[0,1,2],\"where\":{\"dtype\":\"f32\"}}}"),
	             false);
	char *out = kgb_manifest_to_json(m);
	ASSERT_CONTAINS(out, "\"cases\":{\"indices\":[0,1,2],\"where\":{\"dtype\":\"f32\"}}");
	kgb_manifest_t *m2 = parse_ok(out, true);
	ASSERT_TRUE(kgb_manifest_is_partial(m2));
	kgb_manifest_destroy(&m2);
	free(out);
	kgb_manifest_destroy(&m);

	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":[100000]}"),
	          "methods[0].candidates[0].cases: case index 100000 is out of range: 'add' has", NULL);
	parse_bad(false, HEAD "\"cases\":\"smoke\"," ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":[30]}"),
	          "case index 30 is out of range", "in its smoke subset", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":[-1]}"),
	          "cases[0]: expected a case index (an integer >= 0), got -1", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":{\"where\":{\"dtyp\":\"f32\"}}}"),
	          "cases.where.dtyp: no case of 'add' has a parameter 'dtyp' (parameters: ", "dtype", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":{\"where\":{\"dtype\":\"f99\"}}}"),
	          "selects no case of 'add'", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":{\"only\":[1]}}"),
	          "cases", "only", NULL);
	parse_bad(false, HEAD ONE_METHOD("{\"operator\":\"add\",\"plan\":\"a.json\",\"cases\":\"smoke\"}"),
	          "cases: expected a list of case indices", NULL);
}

/* Candidate kinds: "native": true on a method makes one native candidate per operator;
 * a python candidate carries its module as a source; both survive serialisation and
 * the coordinator's strict parse, and misuse is refused by name. */
TEST(manifest_candidate_kinds)
{
	char err[1024];
	const char *dir = kgb_test_tmpdir();
	kgb_test_write_file("add.py", "import triton\n");
	const char *json = "{\"name\":\"k\",\"operators\":[\"add\",\"silu\"],\"methods\":["
	                   "{\"name\":\"torch\",\"native\":true},"
	                   "{\"name\":\"py\",\"candidates\":[{\"operator\":\"add\",\"kind\":\"python\",\"module\":\"add.py\"},"
	                   "{\"operator\":\"silu\",\"kind\":\"python\",\"module\":{\"inline\":\"x = 1\\n\"}}]}],"
	                   "\"baseline\":\"torch\"}";
	kgb_manifest_t *m = parse_ok(json, false);
	ASSERT_EQ_INT(m->ncandidates, 4);
	const kgb_candidate_t *c = find_cand(m, "torch", "silu");
	ASSERT_EQ_INT(kgb_plan_kind(c->plan_json, strlen(c->plan_json), "t", NULL, err, sizeof err), KGB_CAND_NATIVE);
	ASSERT_EQ_INT(c->nsources, 0);
	ASSERT_EQ_INT(kgb_manifest_resolve(m, dir, NULL, err, sizeof err), 0);
	c = find_cand(m, "py", "add");
	char *module = NULL;
	ASSERT_EQ_INT(kgb_plan_kind(c->plan_json, strlen(c->plan_json), "t", &module, err, sizeof err), KGB_CAND_PYTHON);
	ASSERT_EQ_STR(module, "add.py");
	free(module);
	ASSERT_EQ_STR(find_src(c, "add.py")->content, "import triton\n");
	ASSERT_EQ_STR(find_src(find_cand(m, "py", "silu"), "module.py")->content, "x = 1\n");
	/* the coordinator's form parses again to the same kinds */
	char *text = kgb_manifest_to_json(m);
	kgb_manifest_t *m2 = parse_ok(text, true);
	free(text);
	ASSERT_EQ_INT(m2->ncandidates, 4);
	c = find_cand(m2, "py", "add");
	ASSERT_EQ_INT(kgb_plan_kind(c->plan_json, strlen(c->plan_json), "t", NULL, err, sizeof err), KGB_CAND_PYTHON);
	ASSERT_EQ_STR(find_src(c, "add.py")->content, "import triton\n");
	c = find_cand(m2, "torch", "add");
	ASSERT_EQ_INT(kgb_plan_kind(c->plan_json, strlen(c->plan_json), "t", NULL, err, sizeof err), KGB_CAND_NATIVE);
	kgb_manifest_destroy(&m2);
	kgb_manifest_destroy(&m);

#define ONE(cand) "{\"name\":\"k\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"a\",\"candidates\":[" cand "]}]}"
	parse_bad(false, ONE("{\"operator\":\"add\",\"kind\":\"cuda\"}"), "methods[0].candidates[0].kind",
	          "unknown candidate kind 'cuda'", NULL);
	parse_bad(false, ONE("{\"operator\":\"add\",\"kind\":\"python\"}"), "candidates[0].module", "missing", NULL);
	parse_bad(false, ONE("{\"operator\":\"add\",\"kind\":\"native\",\"plan\":{}}"), "candidates[0].plan",
	          "has no plan", NULL);
	parse_bad(false, ONE("{\"operator\":\"add\",\"kind\":\"native\",\"sources\":{\"a.cl\":\"a.cl\"}}"),
	          "candidates[0].sources", "native candidate", NULL);
	parse_bad(false, ONE("{\"operator\":\"add\",\"module\":\"add.py\"}"), "candidates[0].kind",
	          "of kind \"python\"", NULL);
	parse_bad(true, ONE("{\"operator\":\"add\",\"plan\":{\"kind\":\"python\",\"module\":\"a.py\"},\"sources\":{}}"),
	          "module: 'a.py' is not one of the candidate's sources", NULL);
	parse_bad(true, ONE("{\"operator\":\"add\",\"plan\":{\"kind\":\"native\",\"x\":1}}"), "x: unknown key", NULL);
	parse_bad(false, "{\"name\":\"k\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"t\",\"native\":true,"
	                 "\"candidates\":[]}]}",
	          "methods[0].native", "has no candidates", NULL);
#undef ONE
}

/* "aa": true: the coordinator's parse adds the baseline's candidates again as method
 * "<baseline>-aa" (sources copied); the serialised form carries only the flag, so a
 * round trip does not double it; bad values and a missing baseline are refused. */
TEST(manifest_aa_replicate)
{
	const char *cand = "{\"operator\":\"add\",\"plan\":" ADD_PLAN ",\"sources\":{\"add.cl\":{\"inline\":\"k\"}}}";
	char *json = kgb_xasprintf(HEAD "\"aa\":true,\"baseline\":\"b\"," ONE_METHOD("%s"), cand);
	kgb_manifest_t *m = parse_ok(json, false);
	ASSERT_TRUE(m->aa);
	ASSERT_EQ_INT((int)m->ncandidates, 1); /* the user's form: no replicate yet */
	char *out = kgb_manifest_to_json(m);
	ASSERT_CONTAINS(out, "\"aa\":true");
	kgb_manifest_t *c = parse_ok(out, true);
	ASSERT_EQ_INT((int)c->ncandidates, 2);
	ASSERT_EQ_INT((int)c->nmethods, 2);
	ASSERT_EQ_STR(c->methods[1].name, "b-aa");
	const kgb_candidate_t *a = find_cand(c, "b", "add"), *r = find_cand(c, "b-aa", "add");
	ASSERT_EQ_STR(r->plan_json, a->plan_json);
	ASSERT_TRUE(r->sources != a->sources && r->nsources == 1);
	ASSERT_EQ_STR(find_src(r, "add.cl")->content, "k");
	/* the coordinator's form serialised again: one "b-aa" made at the next parse */
	char *out2 = kgb_manifest_to_json(c);
	ASSERT_TRUE(strstr(out2, "b-aa") == NULL);
	kgb_manifest_t *c2 = parse_ok(out2, true);
	ASSERT_EQ_INT((int)c2->ncandidates, 2);
	kgb_manifest_destroy(&c2);
	free(out2);
	kgb_manifest_destroy(&c);
	free(out);
	kgb_manifest_destroy(&m);
	free(json);

	parse_bad(false, HEAD "\"aa\":\"yes\",\"baseline\":\"b\"," ONE_METHOD(CAND_ADD),
	          "demo.json: aa: expected true or false, got \"yes\"", NULL);
	parse_bad(false, HEAD "\"aa\":true," ONE_METHOD(CAND_ADD), "demo.json: aa: an A/A check times the baseline twice",
	          NULL);
	parse_bad(false,
	          HEAD "\"aa\":true,\"baseline\":\"b\",\"methods\":[{\"name\":\"b\",\"candidates\":[" CAND_ADD
	               "]},{\"name\":\"b-aa\",\"candidates\":[" CAND_ADD "]}]}",
	          "demo.json: aa: the A/A replicate is named 'b-aa', which methods[1] already is", NULL);
	/* false: nothing added, nothing serialised */
	m = parse_ok(HEAD "\"aa\":false,\"baseline\":\"b\"," ONE_METHOD(CAND_ADD), false);
	ASSERT_FALSE(m->aa);
	kgb_manifest_destroy(&m);
}

/* Samples and rounds: several candidates of one method for one operator, told apart by
 * (round, sample), with model and usage by kind; tokens from usage when not given; the
 * coordinator's form carries them; bad values name the candidate and the field. */
TEST(manifest_samples_rounds_usage)
{
#define CAND_S(extra) "{\"operator\":\"add\",\"plan\":" ADD_PLAN ",\"sources\":{\"add.cl\":{\"inline\":\"k\"}}" extra "}"
	const char *json = HEAD ONE_METHOD(
		CAND_S("") "," CAND_S(",\"sample\":1,\"model\":\"m-large\",\"usage\":{\"input\":1200,\"output\":300,"
		                    "\"cache_read\":5000,\"reasoning\":120}") ","
		CAND_S(",\"round\":2,\"sample\":1,\"tokens\":99,\"usage\":{\"cache_write\":7}"));
	kgb_manifest_t *m = parse_ok(json, false);
	ASSERT_EQ_INT((int)m->ncandidates, 3);
	const kgb_candidate_t *a = &m->candidates[0], *b = &m->candidates[1], *c = &m->candidates[2];
	ASSERT_EQ_INT((int)a->round, 0);
	ASSERT_EQ_INT((int)a->sample, 0);
	ASSERT_TRUE(a->model == NULL);
	for (int k = 0; k < KGB_USAGE_N; k++)
		ASSERT_EQ_INT((int)a->usage[k], -1);
	ASSERT_NEAR(a->tokens, 0, 0);
	ASSERT_EQ_INT((int)b->sample, 1);
	ASSERT_EQ_STR(b->model, "m-large");
	ASSERT_EQ_INT((int)b->usage[KGB_USAGE_INPUT], 1200);
	ASSERT_EQ_INT((int)b->usage[KGB_USAGE_OUTPUT], 300);
	ASSERT_EQ_INT((int)b->usage[KGB_USAGE_CACHE_WRITE], -1);
	ASSERT_EQ_INT((int)b->usage[KGB_USAGE_CACHE_READ], 5000);
	ASSERT_EQ_INT((int)b->usage[KGB_USAGE_REASONING], 120);
	ASSERT_NEAR(b->tokens, 6500, 0); /* input + output + cache_read; reasoning not added */
	ASSERT_EQ_INT((int)c->round, 2);
	ASSERT_NEAR(c->tokens, 99, 0); /* "tokens" given wins */
	ASSERT_EQ_INT((int)c->usage[KGB_USAGE_CACHE_WRITE], 7);
	/* the coordinator's form: the same values back */
	char *out = kgb_manifest_to_json(m);
	kgb_manifest_t *r = parse_ok(out, true);
	ASSERT_EQ_INT((int)r->ncandidates, 3);
	for (size_t i = 0; i < 3; i++) {
		const kgb_candidate_t *x = &m->candidates[i], *y = &r->candidates[i];
		ASSERT_EQ_INT((int)y->round, (int)x->round);
		ASSERT_EQ_INT((int)y->sample, (int)x->sample);
		ASSERT_TRUE((x->model == NULL) == (y->model == NULL));
		ASSERT_NEAR(y->tokens, x->tokens, 0);
		for (int k = 0; k < KGB_USAGE_N; k++)
			ASSERT_EQ_INT((int)y->usage[k], (int)x->usage[k]);
	}
	ASSERT_EQ_STR(r->candidates[1].model, "m-large");
	char *out2 = kgb_manifest_to_json(r);
	ASSERT_EQ_STR(out2, out);
	free(out2);
	kgb_manifest_destroy(&r);
	free(out);
	kgb_manifest_destroy(&m);

	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"sample\":1") "," CAND_S(",\"sample\":1")),
	          "demo.json: methods[0].candidates[1].operator: method 'b' already has a candidate for 'add' in round 0, "
	          "sample 1 (demo.json: methods[0].candidates[0])", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"round\":-1")),
	          "demo.json: methods[0].candidates[0].round: expected an integer 0..2147483647, got -1", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"sample\":1.5")),
	          "demo.json: methods[0].candidates[0].sample: expected an integer 0..2147483647, got 1.5", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"round\":\"2\"")),
	          "methods[0].candidates[0].round: expected an integer", "got \"2\"", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"model\":7")),
	          "demo.json: methods[0].candidates[0].model: expected a model name (a string), got 7", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"usage\":12")), "demo.json: methods[0].candidates[0].usage: expected",
	          "got 12", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"usage\":{\"output\":-3}")),
	          "demo.json: methods[0].candidates[0].usage.output: expected a token count (an integer >= 0), got -3", NULL);
	parse_bad(false, HEAD ONE_METHOD(CAND_S(",\"usage\":{\"cached\":3}")),
	          "demo.json: methods[0].candidates[0].usage.cached: unknown kind of usage", NULL);
#undef CAND_S
}

/* No "seed": the coordinator draws a secret one, and the serialised manifest carries
 * none; a fixed seed (even 0) is kept, and marked fixed, through the round trip. */
TEST(manifest_seed_secret_by_default)
{
	static const char *const heads[] = {HEAD, HEAD "\"seed\":0,\"heldout\":3,"};
	char err[1024];
	kgb_test_write_file("add.plan.json", ADD_PLAN);
	kgb_test_write_file("add.cl", "__kernel void add_f32() {}\n");
	for (int fixed = 0; fixed < 2; fixed++) {
		char json[512];
		snprintf(json, sizeof json, "%s" ONE_METHOD("{\"operator\":\"add\",\"plan\":\"add.plan.json\"}"),
		         heads[fixed]);
		kgb_manifest_t *m = parse_ok(json, false);
		ASSERT_EQ_INT(m->seed_fixed, fixed);
		ASSERT_EQ_U64(m->seed, 0);
		ASSERT_EQ_INT(m->heldout, fixed ? 3 : KGB_HELDOUT_DEFAULT); /* on unless the manifest says */
		ASSERT_OK(kgb_manifest_resolve(m, kgb_test_tmpdir(), fake_fetch, err, sizeof err), err);
		char *out = kgb_manifest_to_json(m);
		ASSERT_EQ_INT(strstr(out, "\"seed\"") != NULL, fixed);
		kgb_manifest_t *m2 = parse_ok(out, true);
		ASSERT_EQ_INT(m2->seed_fixed, fixed);
		ASSERT_EQ_INT(m2->heldout, m->heldout);
		free(out);
		kgb_manifest_destroy(&m2);
		kgb_manifest_destroy(&m);
	}
}

/* The campaign seed's derived seeds: fixed for a seed, different from each other and
 * from the seed, and a secret seed differs from call to call. */
TEST(seeds_derive_keyed)
{
	kgb_seeds_t s1 = kgb_seeds_derive(1), s1b = kgb_seeds_derive(1), s2 = kgb_seeds_derive(2);
	ASSERT_EQ_U64(s1.a, s1b.a);
	ASSERT_EQ_U64(s1.b, s1b.b);
	ASSERT_TRUE(s1.a != 1 && s1.a != s1.b && s1.b != s1.heldout && s1.a != s2.a && s1.b != s2.b);
	ASSERT_TRUE(s1.b != (s1.a ^ 0xB5AD4ECEDA1CE2A9ull));
	ASSERT_TRUE(s1.a <= INT64_MAX && s1.b <= INT64_MAX);
	ASSERT_TRUE(kgb_seed_secret() != kgb_seed_secret());
}

/* Campaign and method names are bounded and hold no control characters (a terminal
 * escape would reach every listing); errors show them escaped. */
TEST(manifest_names_bounded_and_printable)
{
#define NAMED(name) "{\"name\":\"" name "\",\"operators\":[\"add\"]," ONE_METHOD(CAND_ADD)
	parse_bad(false, NAMED("evil\\u001b[2J"), "demo.json: name: 'evil\\x1b[2J': a control character", NULL);
	parse_bad(false, NAMED("two\\nlines"), "'two\\x0alines'", NULL);
	parse_bad(false, NAMED("c1\\u009b31m"), "'c1\\x9b31m'", NULL);
	char *big = kgb_xmalloc(1 << 20);
	memset(big, 'n', (1 << 20) - 1);
	big[(1 << 20) - 1] = 0;
	char *json = kgb_xasprintf("{\"name\":\"%s\",\"operators\":[\"add\"]," ONE_METHOD(CAND_ADD), big);
	parse_bad(false, json, "demo.json: name: 'nnnn", "...': longer than 256 bytes", NULL);
	free(json);
	json = kgb_xasprintf("{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"%.257s\","
	                     "\"candidates\":[" CAND_ADD "]}]}",
	                     big);
	parse_bad(false, json, "methods[0].name: 'nnn", "1 to 256 letters", NULL);
	free(json);
	json = kgb_xasprintf("{\"name\":\"%.256s\",\"operators\":[\"add\"]," ONE_METHOD(CAND_ADD), big);
	kgb_manifest_t *m = parse_ok(json, false);
	ASSERT_EQ_INT((int)strlen(m->name), 256);
	kgb_manifest_destroy(&m);
	free(json);
	parse_bad(false, "{\"name\":\"d\",\"operators\":[\"add\"],\"methods\":[{\"name\":\"b\\u001b]0;x\\u0007\","
	                 "\"candidates\":[" CAND_ADD "]}]}",
	          "methods[0].name: 'b\\x1b]0;x\\x07' is not a valid method name", NULL);
	free(big);
#undef NAMED
}
