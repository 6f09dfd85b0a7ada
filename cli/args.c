/* Argument parsing for the kgb commands: one small option table per command. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "output.h"
#include "util.h"

#define MAX_CMD_OPTS 48

static int set_value(const kgb_cli_opt_t *o, const char *v, char *err, size_t errlen)
{
	char *end = NULL;

	switch (o->kind) {
	case KGB_CLI_OPT_FLAG:
		*(bool *)o->value = true;
		return 0;
	case KGB_CLI_OPT_STRING:
		if (!*v)
			return kgb_err(err, errlen, "option --%s: empty value", o->name);
		*(const char **)o->value = v;
		return 0;
	case KGB_CLI_OPT_DOUBLE: {
		errno = 0;
		double d = strtod(v, &end);
		if (!*v || *end || errno || !isfinite(d) || d < 0)
			return kgb_err(err, errlen, "option --%s: '%s' is not a non-negative number",
			               o->name, v);
		*(double *)o->value = d;
		return 0;
	}
	case KGB_CLI_OPT_UINT: {
		errno = 0;
		if (!*v || *v == '-' || *v == '+')
			return kgb_err(err, errlen, "option --%s: '%s' is not a non-negative integer",
			               o->name, v);
		unsigned long long u = strtoull(v, &end, 10);
		if (*end || errno)
			return kgb_err(err, errlen, "option --%s: '%s' is not a non-negative integer",
			               o->name, v);
		*(uint64_t *)o->value = u;
		return 0;
	}
	}
	KGB_ASSERT_MSG(0, "option --%s: unknown kind %d", o->name, (int)o->kind);
	return -1;
}

/* opts as the shared option table (common/opts.h), -h/--help last. Returns the count. */
static size_t opt_table(const kgb_cli_opt_t *opts, size_t nopts, kgb_opt_t *table)
{
	KGB_ASSERT(nopts <= MAX_CMD_OPTS);
	for (size_t i = 0; i < nopts; i++)
		table[i] = (kgb_opt_t){ opts[i].name, opts[i].short_name, opts[i].kind != KGB_CLI_OPT_FLAG,
			                    opts[i].arg_name, opts[i].help };
	table[nopts] = (kgb_opt_t){ "help", 'h', false, NULL, "show this help" };
	return nopts + 1;
}

/* An unknown option's error, with the option meant where one is near. */
static int unknown_option(const kgb_opts_t *p, const kgb_cli_opt_t *opts, size_t nopts, char *err,
                          size_t errlen)
{
	size_t len;
	const char *name = kgb_opts_unknown_name(p, &len);
	if (!name)
		return kgb_opts_error(p, KGB_OPTS_UNKNOWN, err, errlen);
	const char *names[MAX_CMD_OPTS];
	size_t nn = 0;
	for (size_t k = 0; k < nopts && nn < KGB_ARRAY_LEN(names); k++)
		names[nn++] = opts[k].name;
	char *word = kgb_xasprintf("%.*s", (int)len, name);
	const char *near = kgb_cli_suggest(word, names, nn);
	free(word);
	if (near)
		return kgb_err(err, errlen, "unknown option '--%.*s'; did you mean '--%s'?", (int)len, name, near);
	return kgb_opts_error(p, KGB_OPTS_UNKNOWN, err, errlen);
}

/* Parse argv against an option table; see cli.h. */
int kgb_cli_parse(int argc, char **argv, const kgb_cli_opt_t *opts, size_t nopts, char **pos,
                  int maxpos, int *npos, char *err, size_t errlen)
{
	kgb_opt_t table[MAX_CMD_OPTS + 1];
	size_t n = opt_table(opts, nopts, table);
	kgb_opts_t p;
	int rc = 0;

	*npos = 0;
	kgb_opts_init(&p, table, n, argc, argv);
	for (int k; rc == 0 && (k = kgb_opts_next(&p)) != KGB_OPTS_END;) {
		if (k == KGB_OPTS_POSITIONAL) {
			if (*npos >= maxpos)
				rc = kgb_err(err, errlen, "unexpected argument '%s'", p.val);
			else
				pos[(*npos)++] = (char *)p.val;
		} else if (k == (int)nopts) {
			rc = KGB_CLI_HELP;
		} else if (k >= 0) {
			rc = set_value(&opts[k], p.val, err, errlen);
		} else if (k == KGB_OPTS_UNKNOWN) {
			rc = unknown_option(&p, opts, nopts, err, errlen);
		} else {
			rc = kgb_opts_error(&p, k, err, errlen);
		}
	}
	kgb_opts_free(&p);
	return rc;
}

/* The options every command that prints tables and JSON gets besides its own (see
 * cli.h): filled in by cmd_opts. */
typedef struct extra_opts {
	bool csv, wide;
	const char *columns;
	double timeout;
	int json_at, csv_at; /* the command's --json and --csv in the table, or -1 */
} extra_opts_t;

static int opt_index(const kgb_cli_opt_t *opts, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(opts[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* spec's options, then the output options where the command has --json (--csv where
 * it has none, --wide, -o/--format COLUMNS), then the global ones. Returns the count. */
static size_t cmd_opts(const kgb_cli_spec_t *spec, kgb_cli_global_t *g, extra_opts_t *x, kgb_cli_opt_t *all)
{
	size_t n = 0;
	KGB_ASSERT(spec->nopts + 6 <= MAX_CMD_OPTS);
	for (size_t i = 0; i < spec->nopts; i++)
		all[n++] = spec->opts[i];
	x->json_at = opt_index(spec->opts, spec->nopts, "json");
	x->csv_at = opt_index(spec->opts, spec->nopts, "csv");
	if (x->json_at >= 0 && spec->opts[x->json_at].kind == KGB_CLI_OPT_FLAG) {
		if (x->csv_at < 0)
			all[n++] = (kgb_cli_opt_t){ "csv", 0, KGB_CLI_OPT_FLAG, &x->csv, NULL,
				                        "what --json prints, as CSV (one line per row)" };
		all[n++] = (kgb_cli_opt_t){ "wide", 0, KGB_CLI_OPT_FLAG, &x->wide, NULL,
			                        "tables whole, whatever the terminal's width" };
		if (opt_index(spec->opts, spec->nopts, "format") < 0) {
			bool o_free = true;
			for (size_t i = 0; i < spec->nopts; i++)
				o_free &= spec->opts[i].short_name != 'o';
			all[n++] = (kgb_cli_opt_t){ "format", o_free ? 'o' : 0, KGB_CLI_OPT_STRING, &x->columns, "COL,COL",
				                        "only these columns of the tables, in this order" };
		}
	}
	all[n++] = (kgb_cli_opt_t){ "coordinator", 0, KGB_CLI_OPT_STRING, &g->endpoint, "ENDPOINT",
		                        "coordinator's CLI endpoint, or several, comma-separated: the active one is followed "
		                        "(default $KGB_CLI_ENDPOINT, the config file's endpoint, or " KGB_CLI_DEFAULT_ENDPOINT ")" };
	all[n++] = (kgb_cli_opt_t){ "timeout", 0, KGB_CLI_OPT_DOUBLE, &x->timeout, "SECONDS",
		                        "how long to wait for the coordinator (default 10, submit 120)" };
	return n;
}

static kgb_cli_describe_fn g_describe;
static void *g_describe_arg;

/* See cli.h. */
void kgb_cli_set_describe(kgb_cli_describe_fn fn, void *arg)
{
	g_describe = fn;
	g_describe_arg = arg;
}

/* Print a command's help; see cli.h. */
void kgb_cli_print_help(FILE *f, const kgb_cli_spec_t *spec)
{
	kgb_cli_opt_t all[MAX_CMD_OPTS];
	kgb_cli_global_t g = { 0 };
	extra_opts_t x = { 0 };
	size_t n = cmd_opts(spec, &g, &x, all);
	fprintf(f, "usage: kgb %s%s%s\n\n", spec->name, spec->usage && *spec->usage ? " " : "",
	        spec->usage ? spec->usage : "");
	if (spec->summary)
		fprintf(f, "%s\n", spec->summary);
	fprintf(f, "\noptions:\n");
	kgb_opt_t table[MAX_CMD_OPTS + 1];
	kgb_opts_help(f, table, opt_table(all, n, table), 26, 0);
}

/* The default output format ($KGB_FORMAT, or the config file's format) for a
 * command whose output options the user left alone. */
static void default_format(const kgb_cli_spec_t *spec, kgb_cli_opt_t *all, size_t n, extra_opts_t *x)
{
	const char *fmt = getenv("KGB_FORMAT");
	if (!fmt || !*fmt || strcmp(fmt, "table") == 0 || x->json_at < 0)
		return;
	static const char *const modes[] = { "json", "csv", "watch", "html" };
	for (size_t m = 0; m < KGB_ARRAY_LEN(modes); m++) {
		int k = opt_index(all, n, modes[m]);
		if (k >= 0 && (all[k].kind == KGB_CLI_OPT_FLAG ? *(bool *)all[k].value : *(const char **)all[k].value != NULL))
			return;
	}
	if (x->wide || x->columns)
		return;
	if (strcmp(fmt, "json") == 0) {
		*(bool *)spec->opts[x->json_at].value = true;
	} else if (strcmp(fmt, "csv") == 0) {
		int k = opt_index(all, n, "csv");
		if (k >= 0 && all[k].kind == KGB_CLI_OPT_FLAG)
			*(bool *)all[k].value = true;
	}
}

/* Parse a command line with the global options added; see cli.h. */
int kgb_cli_parse_cmd(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g,
                      char **pos, int *npos)
{
	kgb_cli_opt_t all[MAX_CMD_OPTS];
	extra_opts_t x = { .timeout = -1 };
	char err[256];
	int maxpos = spec->max_pos;
	size_t n = cmd_opts(spec, g, &x, all);

	if (g_describe) {
		g_describe(spec, all, n, g_describe_arg);
		return KGB_CLI_HELP;
	}
	int rc = kgb_cli_parse(argc, argv, all, n, pos, maxpos, npos, err, sizeof err);
	if (rc == KGB_CLI_HELP) {
		kgb_cli_print_help(stdout, spec);
		return KGB_CLI_HELP;
	}
	if (rc == 0 && x.timeout == 0)
		rc = kgb_err(err, sizeof err, "option --timeout: must be greater than 0");
	if (rc == 0 && *npos < spec->min_pos)
		rc = kgb_err(err, sizeof err, "missing argument");
	if (rc < 0) {
		fprintf(stderr, "kgb %s: %s\nusage: kgb %s %s\n(see kgb %s --help)\n", spec->name, err,
		        spec->name, spec->usage ? spec->usage : "", spec->name);
		return -1;
	}
	if (x.timeout > 0) {
		g->timeout_s = x.timeout;
		g->timeout_given = true;
	}
	default_format(spec, all, n, &x);
	if (x.csv) {
		/* the command builds its JSON document; the printer writes it as CSV */
		*(bool *)spec->opts[x.json_at].value = true;
		kgb_cli_output_csv(true);
	}
	kgb_cli_table_options(x.wide, x.columns);
	return 0;
}

/* Parse a command's arguments and its campaign IDs; see cli.h. */
int kgb_cli_parse_args(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g, char **pos,
                       int *npos, uint64_t *ids, int nids)
{
	char err[256];
	int none;
	KGB_ASSERT(pos || spec->max_pos == 0);
	if (!npos) /* a command without positional arguments */
		npos = &none;
	int rc = kgb_cli_parse_cmd(spec, argc, argv, g, pos, npos);
	if (rc != 0)
		return rc == KGB_CLI_HELP ? KGB_CLI_OK : KGB_CLI_EXIT_USAGE;
	for (int i = 0; i < nids && i < *npos; i++)
		if (kgb_cli_parse_id(pos[i], &ids[i], err, sizeof err) < 0) {
			fprintf(stderr, "kgb %s: %s\n", spec->name, err);
			return KGB_CLI_EXIT_USAGE;
		}
	return -1;
}

/* Parse a campaign id; see cli.h. */
int kgb_cli_parse_id_cmd(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g, uint64_t *id)
{
	kgb_cli_spec_t one = *spec;
	char *pos[1];
	int npos = 0;
	one.min_pos = one.max_pos = 1; /* the ID */
	return kgb_cli_parse_args(&one, argc, argv, g, pos, &npos, id, 1);
}

int kgb_cli_parse_id(const char *s, uint64_t *id, char *err, size_t errlen)
{
	char *end = NULL;

	errno = 0;
	if (!s || !*s || *s < '0' || *s > '9')
		return kgb_err(err, errlen, "campaign id '%s' is not a positive integer", s ? s : "");
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v == 0)
		return kgb_err(err, errlen, "campaign id '%s' is not a positive integer", s);
	*id = v;
	return 0;
}
