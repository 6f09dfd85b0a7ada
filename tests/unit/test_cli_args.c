/* Tests for cli/args.c: option tables, values, positional arguments, ids. */
#include <stdlib.h>
#include <string.h>

#include "../../cli/cli.h"
#include "test.h"

typedef struct opts {
	bool watch, json;
	double interval;
	const char *platform;
	uint64_t n;
} opts_t;

static int parse(opts_t *o, char **pos, int *npos, char *err, size_t errlen, int argc, char **argv)
{
	const kgb_cli_opt_t table[] = {
		{ "watch", 'w', KGB_CLI_OPT_FLAG, &o->watch, NULL, "" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &o->json, NULL, "" },
		{ "interval", 'i', KGB_CLI_OPT_DOUBLE, &o->interval, "S", "" },
		{ "platform", 'p', KGB_CLI_OPT_STRING, &o->platform, "P", "" },
		{ "count", 'n', KGB_CLI_OPT_UINT, &o->n, "N", "" },
	};
	memset(o, 0, sizeof *o);
	return kgb_cli_parse(argc, argv, table, 5, pos, 2, npos, err, errlen);
}

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(...) parse(&o, pos, &npos, err, sizeof err, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

TEST(cli_args_mixed)
{
	opts_t o;
	char *pos[2];
	int npos;
	char err[256] = "";

	ASSERT_EQ_INT(PARSE("status", "7", "--watch", "--interval", "0.5", "-p", "cuda:h200"), 0);
	ASSERT_EQ_INT(npos, 1);
	ASSERT_EQ_STR(pos[0], "7");
	ASSERT_TRUE(o.watch);
	ASSERT_FALSE(o.json);
	ASSERT_NEAR(o.interval, 0.5, 0);
	ASSERT_EQ_STR(o.platform, "cuda:h200");

	ASSERT_EQ_INT(PARSE("x", "--interval=2", "-n3", "--platform=opencl:cpu", "-w", "a", "b"), 0);
	ASSERT_EQ_INT(npos, 2);
	ASSERT_EQ_STR(pos[1], "b");
	ASSERT_NEAR(o.interval, 2, 0);
	ASSERT_EQ_U64(o.n, 3);
	ASSERT_EQ_STR(o.platform, "opencl:cpu");
	ASSERT_TRUE(o.watch);

	/* "--" ends the options: a file named like an option */
	ASSERT_EQ_INT(PARSE("submit", "--", "--json"), 0);
	ASSERT_EQ_INT(npos, 1);
	ASSERT_EQ_STR(pos[0], "--json");
	ASSERT_FALSE(o.json);
	/* a lone dash is positional */
	ASSERT_EQ_INT(PARSE("submit", "-"), 0);
	ASSERT_EQ_STR(pos[0], "-");
}

TEST(cli_args_help)
{
	opts_t o;
	char *pos[2];
	int npos;
	char err[256] = "";
	ASSERT_EQ_INT(PARSE("status", "--help"), KGB_CLI_HELP);
	ASSERT_EQ_INT(PARSE("status", "1", "-h"), KGB_CLI_HELP);
}

TEST(cli_args_errors)
{
	opts_t o;
	char *pos[2];
	int npos;
	char err[256] = "";

	ASSERT_EQ_INT(PARSE("status", "--bogus"), -1);
	ASSERT_EQ_STR(err, "unknown option '--bogus'");
	ASSERT_EQ_INT(PARSE("status", "-z"), -1);
	ASSERT_EQ_STR(err, "unknown option '-z'");
	ASSERT_EQ_INT(PARSE("status", "--interval"), -1);
	ASSERT_CONTAINS(err, "--interval needs a value");
	ASSERT_EQ_INT(PARSE("status", "--interval", "fast"), -1);
	ASSERT_EQ_STR(err, "option --interval: 'fast' is not a non-negative number");
	ASSERT_EQ_INT(PARSE("status", "--interval=-1"), -1);
	ASSERT_CONTAINS(err, "'-1'");
	ASSERT_EQ_INT(PARSE("status", "--interval=inf"), -1);
	ASSERT_EQ_INT(PARSE("status", "-n", "-3"), -1);
	ASSERT_CONTAINS(err, "--count: '-3' is not a non-negative integer");
	ASSERT_EQ_INT(PARSE("status", "-n", "3x"), -1);
	ASSERT_EQ_INT(PARSE("status", "--watch=yes"), -1);
	ASSERT_CONTAINS(err, "takes no value");
	ASSERT_EQ_INT(PARSE("status", "--platform="), -1);
	ASSERT_CONTAINS(err, "empty value");
	ASSERT_EQ_INT(PARSE("status", "a", "b", "c"), -1);
	ASSERT_EQ_STR(err, "unexpected argument 'c'");
}

TEST(cli_args_parse_id)
{
	uint64_t id = 0;
	char err[128];
	ASSERT_EQ_INT(kgb_cli_parse_id("7", &id, err, sizeof err), 0);
	ASSERT_EQ_U64(id, 7);
	ASSERT_EQ_INT(kgb_cli_parse_id("18446744073709551615", &id, err, sizeof err), 0);
	ASSERT_EQ_U64(id, UINT64_MAX);
	ASSERT_EQ_INT(kgb_cli_parse_id("18446744073709551616", &id, err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_cli_parse_id("0", &id, err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_cli_parse_id("-4", &id, err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_cli_parse_id(" 4", &id, err, sizeof err), -1);
	ASSERT_EQ_INT(kgb_cli_parse_id("4a", &id, err, sizeof err), -1);
	ASSERT_EQ_STR(err, "campaign id '4a' is not a positive integer");
	ASSERT_EQ_INT(kgb_cli_parse_id("", &id, err, sizeof err), -1);
}

TEST(cli_args_parse_cmd_globals)
{
	bool json = false;
	const kgb_cli_opt_t opts[] = { { "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "as JSON" } };
	const kgb_cli_spec_t spec = { .name = "workers", .usage = "[--json]", .opts = opts, .nopts = 1,
		                          .min_pos = 0, .max_pos = 0 };
	kgb_cli_global_t g = { .endpoint = "tcp://127.0.0.1:7711", .timeout_s = 10 };
	char *pos[1];
	int npos = -1;
	char *argv[] = { "workers", "--coordinator", "ipc:///run/kgb.sock", "--json", "--timeout=2.5", NULL };

	ASSERT_EQ_INT(kgb_cli_parse_cmd(&spec, 5, argv, &g, pos, &npos), 0);
	ASSERT_TRUE(json);
	ASSERT_EQ_INT(npos, 0);
	ASSERT_EQ_STR(g.endpoint, "ipc:///run/kgb.sock");
	ASSERT_NEAR(g.timeout_s, 2.5, 0);
	ASSERT_TRUE(g.timeout_given);
	/* without --timeout the timeout is left alone and not marked as given */
	kgb_cli_global_t g2 = { .endpoint = "tcp://127.0.0.1:7711", .timeout_s = 10 };
	char *plain[] = { "workers", NULL };
	ASSERT_EQ_INT(kgb_cli_parse_cmd(&spec, 1, plain, &g2, pos, &npos), 0);
	ASSERT_NEAR(g2.timeout_s, 10, 0);
	ASSERT_FALSE(g2.timeout_given);

	/* a zero timeout and a missing positional argument are usage errors; the old
	 * timeout is kept */
	char *bad[] = { "workers", "--timeout", "0", NULL };
	ASSERT_EQ_INT(kgb_cli_parse_cmd(&spec, 3, bad, &g, pos, &npos), -1);
	ASSERT_NEAR(g.timeout_s, 2.5, 0);
	const kgb_cli_spec_t need = { .name = "cancel", .usage = "ID", .min_pos = 1, .max_pos = 1 };
	char *none[] = { "cancel", NULL };
	ASSERT_EQ_INT(kgb_cli_parse_cmd(&need, 1, none, &g, pos, &npos), -1);
}
