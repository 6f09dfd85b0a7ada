/* Tests for common/opts.c: the one option table behind getopt_long and --help. */
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "test.h"

static const kgb_opt_t table[] = {
	{ "lease-ms", 'l', true, "MS", "job lease", "KGB_LEASE_MS", "5000" },
	{ "json", 'j', false, NULL, "as JSON" },
	{ "name", 0, true, NULL, "worker name" },
	{ "help", 'h', false, NULL, "show this help" },
};
enum { LEASE, JSON, NAME, HELP };

#define ARGV(...) ((char *[]){ "cmd", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "cmd", __VA_ARGS__ }) / sizeof(char *)))
#define ARGS(...) ARGC(__VA_ARGS__), ARGV(__VA_ARGS__)
#define INIT(p, ...) kgb_opts_init(&(p), table, KGB_TEST_NOPTS, ARGS(__VA_ARGS__))
#define KGB_TEST_NOPTS (sizeof table / sizeof table[0])

/* What kgb_opts_next returns, one call after the other, and the value it gives. */
typedef struct step {
	int k;
	const char *val; /* NULL: none */
} step_t;

static void expect_steps(int argc, char **argv, const step_t *want, size_t n)
{
	kgb_opts_t p;
	kgb_opts_init(&p, table, KGB_TEST_NOPTS, argc, argv);
	for (size_t i = 0; i < n; i++) {
		ASSERT_EQ_INT(kgb_opts_next(&p), want[i].k);
		if (want[i].val)
			ASSERT_EQ_STR(p.val, want[i].val);
		else
			ASSERT_TRUE(p.val == NULL);
	}
	kgb_opts_free(&p);
}

#define STEPS(...) (const step_t[]){ __VA_ARGS__ }, sizeof((const step_t[]){ __VA_ARGS__ }) / sizeof(step_t)

TEST(opts_long_and_short)
{
	/* "--opt value", "--opt=value", "-o value", "-ovalue"; flags long and short; an empty
	 * value; "--" ends the options: what follows is positional, even "--json" */
	expect_steps(ARGS("--lease-ms", "7", "--lease-ms=8", "-l", "9", "-l10", "--json", "-j", "--name=", "--", "--json"),
	             STEPS({ LEASE, "7" }, { LEASE, "8" }, { LEASE, "9" }, { LEASE, "10" }, { JSON, NULL }, { JSON, NULL },
	                   { NAME, "" }, { KGB_OPTS_POSITIONAL, "--json" }, { KGB_OPTS_END, NULL }));
	/* positional arguments come back in order, between the options; a lone "-" is one,
	 * and a value may start with a dash */
	expect_steps(ARGS("a", "--name", "-x", "-", "b"),
	             STEPS({ KGB_OPTS_POSITIONAL, "a" }, { NAME, "-x" }, { KGB_OPTS_POSITIONAL, "-" },
	                   { KGB_OPTS_POSITIONAL, "b" }, { KGB_OPTS_END, NULL }));
	/* the argument as given, for messages */
	kgb_opts_t p;
	INIT(p, "--lease-ms=8");
	ASSERT_EQ_INT(kgb_opts_next(&p), LEASE);
	ASSERT_EQ_STR(p.arg, "--lease-ms=8");
	kgb_opts_free(&p);
}

TEST(opts_errors)
{
	/* each command line ends in its error: a missing value names the option and the
	 * value's name, an unknown option is named as given, long or short (no
	 * abbreviations: getopt_long's own would take "--lea" for --lease-ms), a flag given
	 * a value names both */
	static const struct {
		const char *args[3];
		int rc;
		const char *err;
	} cases[] = {
		{ { "--json", "--lease-ms" }, KGB_OPTS_NO_VALUE, "option --lease-ms needs a value (MS)" },
		{ { "-l" }, KGB_OPTS_NO_VALUE, "option --lease-ms needs a value (MS)" },
		{ { "--name" }, KGB_OPTS_NO_VALUE, "option --name needs a value (VALUE)" },
		{ { "--bogus=3" }, KGB_OPTS_UNKNOWN, "unknown option '--bogus'" },
		{ { "-z" }, KGB_OPTS_UNKNOWN, "unknown option '-z'" },
		{ { "--lea", "3" }, KGB_OPTS_UNKNOWN, "unknown option '--lea'" },
		{ { "--js=1" }, KGB_OPTS_UNKNOWN, "unknown option '--js'" },
		{ { "--json=yes" }, KGB_OPTS_FLAG_VALUE, "option --json takes no value (got 'yes')" },
		{ { "-jh" }, KGB_OPTS_FLAG_VALUE, "option --json takes no value (got 'h')" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *argv[5] = { "cmd" };
		int argc = 1;
		for (int a = 0; a < 3 && cases[i].args[a]; a++)
			argv[argc++] = (char *)cases[i].args[a];
		kgb_opts_t p;
		char err[128] = "";
		int k;
		kgb_opts_init(&p, table, KGB_TEST_NOPTS, argc, argv);
		while ((k = kgb_opts_next(&p)) >= 0)
			;
		ASSERT_EQ_INT(k, cases[i].rc);
		ASSERT_EQ_INT(kgb_opts_error(&p, k, err, sizeof err), -1);
		ASSERT_EQ_STR(err, cases[i].err);
		kgb_opts_free(&p);
	}
}

TEST(opts_fresh_parse)
{
	/* a parse that stopped halfway does not leak into the next one */
	kgb_opts_t p;
	INIT(p, "-j", "-j");
	ASSERT_EQ_INT(kgb_opts_next(&p), JSON);
	kgb_opts_free(&p);
	INIT(p, "--help");
	ASSERT_EQ_INT(kgb_opts_next(&p), HELP);
	ASSERT_EQ_INT(kgb_opts_next(&p), KGB_OPTS_END);
	kgb_opts_free(&p);
}

TEST(opts_help_from_table)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	kgb_opts_help(f, table, KGB_TEST_NOPTS, 20, 0);
	fclose(f);
	ASSERT_EQ_STR(buf, "  -l, --lease-ms MS    job lease [KGB_LEASE_MS] (default 5000)\n"
	                   "  -j, --json           as JSON\n"
	                   "  --name VALUE         worker name\n"
	                   "  -h, --help           show this help\n");
	free(buf);
}

TEST(opts_help_wrapped)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	/* broken between words before column 40, the lines after under the first */
	kgb_opts_help(f, table, 1, 16, 40);
	fclose(f);
	ASSERT_EQ_STR(buf, "  -l, --lease-ms MS job lease\n"
	                   "                   [KGB_LEASE_MS]\n"
	                   "                   (default 5000)\n");
	free(buf);
}
