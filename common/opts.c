/* One option table for getopt_long and the help text; see opts.h. */
#include "opts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* getopt_long's val of the long options: above every short option's letter */
#define LONG_BASE 256

void kgb_opts_init(kgb_opts_t *p, const kgb_opt_t *opts, size_t n, int argc, char **argv)
{
	memset(p, 0, sizeof *p);
	p->opts = opts;
	p->n = n;
	p->argc = argc;
	p->argv = argv;
	p->opt = -1;
	p->longopts = kgb_xcalloc(n + 1, sizeof *p->longopts);
	/* "-": non-options come back in order (as option 1), ":": a missing value is ':' */
	p->shortopts = kgb_xmalloc(2 * n + 3);
	char *s = p->shortopts;
	*s++ = '-';
	*s++ = ':';
	for (size_t i = 0; i < n; i++) {
		p->longopts[i] = (struct option){ opts[i].name, opts[i].has_arg ? required_argument : no_argument, NULL,
			                              LONG_BASE + (int)i };
		if (opts[i].short_name) {
			*s++ = opts[i].short_name;
			if (opts[i].has_arg)
				*s++ = ':';
		}
	}
	*s = '\0';
	optind = 0; /* glibc: start afresh (a parse before may have stopped halfway) */
	opterr = 0;
}

void kgb_opts_free(kgb_opts_t *p)
{
	free(p->longopts);
	free(p->shortopts);
	p->longopts = NULL;
	p->shortopts = NULL;
}

static int short_index(const kgb_opts_t *p, int c)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->opts[i].short_name && p->opts[i].short_name == c)
			return (int)i;
	return -1;
}

/* The long name in p->arg ("--name=VALUE"), and its length. */
static const char *long_name(const kgb_opts_t *p, size_t *len)
{
	const char *name = p->arg + 2;
	const char *eq = strchr(name, '=');
	*len = eq ? (size_t)(eq - name) : strlen(name);
	return name;
}

/* The option p->arg names, if it is spelt out whole (getopt_long takes abbreviations). */
static int whole(const kgb_opts_t *p, int idx)
{
	if (idx < 0 || strncmp(p->arg, "--", 2) != 0)
		return idx;
	size_t len;
	const char *name = long_name(p, &len);
	return strlen(p->opts[idx].name) == len && strncmp(p->opts[idx].name, name, len) == 0 ? idx : -1;
}

int kgb_opts_next(kgb_opts_t *p)
{
	p->opt = -1;
	p->val = p->arg = NULL;
	if (p->options_over) {
		if (p->next >= p->argc)
			return KGB_OPTS_END;
		p->val = p->arg = p->argv[p->next++];
		return KGB_OPTS_POSITIONAL;
	}
	/* the argument getopt_long reads: it never stops halfway through one, as a short
	 * flag followed by more letters ends the parse */
	int at = optind ? optind : 1;
	int c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, NULL);
	if (c == -1) {
		p->options_over = true;
		p->next = optind;
		return kgb_opts_next(p);
	}
	p->arg = p->argv[at];
	if (c == 1) {
		p->val = optarg;
		return KGB_OPTS_POSITIONAL;
	}
	if (c == '?' || c == ':') {
		int idx = optopt >= LONG_BASE ? optopt - LONG_BASE : optopt ? short_index(p, optopt) : -1;
		p->opt = whole(p, idx);
		if (p->opt < 0)
			return KGB_OPTS_UNKNOWN;
		if (c == ':')
			return KGB_OPTS_NO_VALUE;
		p->val = strchr(p->arg, '=') + 1; /* a long flag with "=VALUE" */
		return KGB_OPTS_FLAG_VALUE;
	}
	p->opt = whole(p, c >= LONG_BASE ? c - LONG_BASE : short_index(p, c));
	if (p->opt < 0)
		return KGB_OPTS_UNKNOWN;
	if (!p->opts[p->opt].has_arg && c < LONG_BASE && optind == at) {
		/* "-jx": more letters after a short flag */
		p->val = p->arg + 2;
		return KGB_OPTS_FLAG_VALUE;
	}
	p->val = optarg;
	return p->opt;
}

const char *kgb_opts_unknown_name(const kgb_opts_t *p, size_t *len)
{
	if (!p->arg || strncmp(p->arg, "--", 2) != 0)
		return NULL;
	return long_name(p, len);
}

int kgb_opts_error(const kgb_opts_t *p, int rc, char *err, size_t errlen)
{
	const kgb_opt_t *o = p->opt >= 0 ? &p->opts[p->opt] : NULL;
	size_t len;
	const char *name;
	switch (rc) {
	case KGB_OPTS_NO_VALUE:
		return kgb_err(err, errlen, "option --%s needs a value (%s)", o->name, o->arg_name ? o->arg_name : "VALUE");
	case KGB_OPTS_FLAG_VALUE:
		return kgb_err(err, errlen, "option --%s takes no value (got '%s')", o->name, p->val);
	default:
		if ((name = kgb_opts_unknown_name(p, &len)))
			return kgb_err(err, errlen, "unknown option '--%.*s'", (int)len, name);
		return kgb_err(err, errlen, "unknown option '-%c'", p->arg && p->arg[0] ? p->arg[1] : '?');
	}
}

/* Write text, which starts at column at, breaking lines before column wrap (0: never)
 * and indenting the lines after by indent. */
static void put_wrapped(FILE *f, const char *text, int at, int indent, int wrap)
{
	bool line_empty = true;
	for (const char *w = text + strspn(text, " "); *w; w += strspn(w, " ")) {
		int len = (int)strcspn(w, " ");
		if (!line_empty && wrap > 0 && at + 1 + len > wrap) {
			fprintf(f, "\n%*s", indent, "");
			at = indent;
			line_empty = true;
		}
		if (!line_empty) {
			fputc(' ', f);
			at++;
		}
		fwrite(w, 1, (size_t)len, f);
		at += len;
		w += len;
		line_empty = false;
	}
}

void kgb_opts_help(FILE *f, const kgb_opt_t *opts, size_t n, int width, int wrap)
{
	for (size_t i = 0; i < n; i++) {
		const kgb_opt_t *o = &opts[i];
		char sh[8] = "";
		if (o->short_name)
			snprintf(sh, sizeof sh, "-%c, ", o->short_name);
		char *left = kgb_xasprintf("%s--%s%s%s", sh, o->name, o->has_arg ? " " : "",
		                           o->has_arg ? (o->arg_name ? o->arg_name : "VALUE") : "");
		char *env = o->env ? kgb_xasprintf(" [%s]", o->env) : NULL;
		char *dflt = o->dflt ? kgb_xasprintf(" (default %s)", o->dflt) : NULL;
		char *text = kgb_xasprintf("%s%s%s", o->help ? o->help : "", env ? env : "", dflt ? dflt : "");
		int at = fprintf(f, "  %-*s ", width, left);
		if (wrap > 0)
			put_wrapped(f, text, at, 2 + width + 1, wrap);
		else
			fputs(text, f);
		fputc('\n', f);
		free(text);
		free(dflt);
		free(env);
		free(left);
	}
}
