/* Argument parsing for the kgb commands: one small option table per command. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util.h"

static const kgb_cli_opt_t *find_long(const kgb_cli_opt_t *opts, size_t nopts, const char *name,
                                      size_t namelen)
{
	for (size_t i = 0; i < nopts; i++)
		if (strlen(opts[i].name) == namelen && strncmp(opts[i].name, name, namelen) == 0)
			return &opts[i];
	return NULL;
}

static const kgb_cli_opt_t *find_short(const kgb_cli_opt_t *opts, size_t nopts, char c)
{
	for (size_t i = 0; i < nopts; i++)
		if (opts[i].short_name && opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

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

/* Parse argv against an option table; see cli.h. */
int kgb_cli_parse(int argc, char **argv, const kgb_cli_opt_t *opts, size_t nopts, char **pos,
                  int maxpos, int *npos, char *err, size_t errlen)
{
	bool only_pos = false;

	*npos = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		const kgb_cli_opt_t *o = NULL;
		const char *inline_val = NULL;

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			if (*npos >= maxpos)
				return kgb_err(err, errlen, "unexpected argument '%s'", a);
			pos[(*npos)++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = true;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return KGB_CLI_HELP;
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t namelen = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(opts, nopts, name, namelen);
			if (!o)
				return kgb_err(err, errlen, "unknown option '--%.*s'", (int)namelen, name);
			if (eq)
				inline_val = eq + 1;
		} else {
			o = find_short(opts, nopts, a[1]);
			if (!o)
				return kgb_err(err, errlen, "unknown option '-%c'", a[1]);
			if (a[2])
				inline_val = a + 2;
		}
		if (o->kind == KGB_CLI_OPT_FLAG) {
			if (inline_val)
				return kgb_err(err, errlen, "option --%s takes no value (got '%s')", o->name,
				               inline_val);
			*(bool *)o->value = true;
			continue;
		}
		if (!inline_val) {
			if (i + 1 >= argc)
				return kgb_err(err, errlen, "option --%s needs a value (%s)", o->name,
				               o->arg_name ? o->arg_name : "VALUE");
			inline_val = argv[++i];
		}
		if (set_value(o, inline_val, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Print a command's help; see cli.h. */
void kgb_cli_print_help(FILE *f, const kgb_cli_spec_t *spec)
{
	fprintf(f, "usage: kgb %s%s%s\n\n", spec->name, spec->usage && *spec->usage ? " " : "",
	        spec->usage ? spec->usage : "");
	if (spec->summary)
		fprintf(f, "%s\n", spec->summary);
	fprintf(f, "\noptions:\n");
	for (size_t i = 0; i < spec->nopts; i++) {
		const kgb_cli_opt_t *o = &spec->opts[i];
		char sh[8] = "";
		if (o->short_name)
			snprintf(sh, sizeof sh, "-%c, ", o->short_name);
		char *left = kgb_xasprintf("%s--%s%s%s", sh, o->name, o->kind == KGB_CLI_OPT_FLAG ? "" : " ",
		                           o->kind == KGB_CLI_OPT_FLAG ? "" : (o->arg_name ? o->arg_name : "VALUE"));
		fprintf(f, "  %-26s %s\n", left, o->help ? o->help : "");
		free(left);
	}
	fprintf(f, "  %-26s %s\n", "--coordinator ENDPOINT",
	        "coordinator's CLI endpoint, or several, comma-separated: the active one is followed (default $KGB_CLI_ENDPOINT or " KGB_CLI_DEFAULT_ENDPOINT ")");
	fprintf(f, "  %-26s %s\n", "--timeout SECONDS", "how long to wait for the coordinator (default 10, submit 120)");
	fprintf(f, "  %-26s %s\n", "-h, --help", "show this help");
}

#define MAX_CMD_OPTS 48

/* Parse a command line with the global options added; see cli.h. */
int kgb_cli_parse_cmd(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g,
                      char **pos, int *npos)
{
	kgb_cli_opt_t all[MAX_CMD_OPTS];
	size_t n = 0;
	char err[256];
	double timeout = -1;
	int maxpos = spec->max_pos;

	KGB_ASSERT(spec->nopts + 2 <= MAX_CMD_OPTS);
	for (size_t i = 0; i < spec->nopts; i++)
		all[n++] = spec->opts[i];
	all[n++] = (kgb_cli_opt_t){ "coordinator", 0, KGB_CLI_OPT_STRING, &g->endpoint, "ENDPOINT", NULL };
	all[n++] = (kgb_cli_opt_t){ "timeout", 0, KGB_CLI_OPT_DOUBLE, &timeout, "SECONDS", NULL };

	int rc = kgb_cli_parse(argc, argv, all, n, pos, maxpos, npos, err, sizeof err);
	if (rc == KGB_CLI_HELP) {
		kgb_cli_print_help(stdout, spec);
		return KGB_CLI_HELP;
	}
	if (rc == 0 && timeout == 0)
		rc = kgb_err(err, sizeof err, "option --timeout: must be greater than 0");
	if (rc == 0 && *npos < spec->min_pos)
		rc = kgb_err(err, sizeof err, "missing argument");
	if (rc < 0) {
		fprintf(stderr, "kgb %s: %s\nusage: kgb %s %s\n(see kgb %s --help)\n", spec->name, err,
		        spec->name, spec->usage ? spec->usage : "", spec->name);
		return -1;
	}
	if (timeout > 0) {
		g->timeout_s = timeout;
		g->timeout_given = true;
	}
	return 0;
}

/* Parse a campaign id; see cli.h. */
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
