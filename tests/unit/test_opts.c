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
#define INIT(p, ...) kgb_opts_init(&(p), table, KGB_TEST_NOPTS, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))
#define KGB_TEST_NOPTS (sizeof table / sizeof table[0])

/* The one result of parsing a single option argument (or two: "--name value"). */
static int first(kgb_opts_t *p, char *err, size_t errlen)
{
	int k = kgb_opts_next(p);
	if (k < 0 && k != KGB_OPTS_END && k != KGB_OPTS_POSITIONAL)
		kgb_opts_error(p, k, err, errlen);
	return k;
}

TEST(opts_long_and_short)
{
	kgb_opts_t p;
	char err[128] = "";

	INIT(p, "--lease-ms", "7", "--lease-ms=8", "-l", "9", "-l10", "--json", "-j", "--name=", "--", "--json");
	ASSERT_EQ_INT(kgb_opts_next(&p), LEASE);
	ASSERT_EQ_STR(p.val, "7");
	ASSERT_EQ_INT(kgb_opts_next(&p), LEASE);
	ASSERT_EQ_STR(p.val, "8");
	ASSERT_EQ_STR(p.arg, "--lease-ms=8");
	ASSERT_EQ_INT(kgb_opts_next(&p), LEASE);
	ASSERT_EQ_STR(p.val, "9");
	ASSERT_EQ_INT(kgb_opts_next(&p), LEASE);
	ASSERT_EQ_STR(p.val, "10");
	ASSERT_EQ_INT(kgb_opts_next(&p), JSON);
	ASSERT_TRUE(p.val == NULL);
	ASSERT_EQ_INT(kgb_opts_next(&p), JSON);
	ASSERT_EQ_INT(kgb_opts_next(&p), NAME);
	ASSERT_EQ_STR(p.val, "");
	/* "--" ends the options: what follows is positional, even "--json" */
	ASSERT_EQ_INT(kgb_opts_next(&p), KGB_OPTS_POSITIONAL);
	ASSERT_EQ_STR(p.val, "--json");
	ASSERT_EQ_INT(kgb_opts_next(&p), KGB_OPTS_END);
	kgb_opts_free(&p);

	/* positional arguments come back in order, between the options; a lone "-" is one,
	 * and a value may start with a dash */
	INIT(p, "a", "--name", "-x", "-", "b");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_POSITIONAL);
	ASSERT_EQ_STR(p.val, "a");
	ASSERT_EQ_INT(kgb_opts_next(&p), NAME);
	ASSERT_EQ_STR(p.val, "-x");
	ASSERT_EQ_INT(kgb_opts_next(&p), KGB_OPTS_POSITIONAL);
	ASSERT_EQ_STR(p.val, "-");
	ASSERT_EQ_INT(kgb_opts_next(&p), KGB_OPTS_POSITIONAL);
	ASSERT_EQ_STR(p.val, "b");
	ASSERT_EQ_INT(kgb_opts_next(&p), KGB_OPTS_END);
	kgb_opts_free(&p);
}

TEST(opts_errors)
{
	kgb_opts_t p;
	char err[128] = "";

	/* a missing value names the option and the value's name */
	INIT(p, "--json", "--lease-ms");
	ASSERT_EQ_INT(kgb_opts_next(&p), JSON);
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_NO_VALUE);
	ASSERT_EQ_STR(err, "option --lease-ms needs a value (MS)");
	kgb_opts_free(&p);
	INIT(p, "-l");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_NO_VALUE);
	ASSERT_EQ_STR(err, "option --lease-ms needs a value (MS)");
	kgb_opts_free(&p);
	INIT(p, "--name");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_NO_VALUE);
	ASSERT_EQ_STR(err, "option --name needs a value (VALUE)");
	kgb_opts_free(&p);

	/* an unknown option is named as given, long or short */
	INIT(p, "--bogus=3");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_UNKNOWN);
	ASSERT_EQ_STR(err, "unknown option '--bogus'");
	ASSERT_EQ_STR(p.arg, "--bogus=3");
	kgb_opts_free(&p);
	INIT(p, "-z");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_UNKNOWN);
	ASSERT_EQ_STR(err, "unknown option '-z'");
	kgb_opts_free(&p);
	/* no abbreviations (getopt_long's own would take "--lea" for --lease-ms) */
	INIT(p, "--lea", "3");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_UNKNOWN);
	ASSERT_EQ_STR(err, "unknown option '--lea'");
	kgb_opts_free(&p);
	INIT(p, "--js=1");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_UNKNOWN);
	kgb_opts_free(&p);

	/* a flag given a value */
	INIT(p, "--json=yes");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_FLAG_VALUE);
	ASSERT_EQ_STR(err, "option --json takes no value (got 'yes')");
	kgb_opts_free(&p);
	INIT(p, "-jh");
	ASSERT_EQ_INT(first(&p, err, sizeof err), KGB_OPTS_FLAG_VALUE);
	ASSERT_EQ_STR(err, "option --json takes no value (got 'h')");
	kgb_opts_free(&p);

	/* a parse that stopped halfway does not leak into the next one */
	INIT(p, "-j");
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
