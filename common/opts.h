/* One table of options for a command line: getopt_long parses it and the help text is
 * printed from it, so an option and its help cannot drift apart. kgb, kgb-coordinator
 * and kgb-worker all parse through it.
 *
 *   static const kgb_opt_t opts[] = {
 *       { "lease-ms", 0, true, "MS", "job lease", "KGB_LEASE_MS", "5000" },
 *       { "help", 'h', false, NULL, "show this help" },
 *   };
 *   kgb_opts_t p;
 *   kgb_opts_init(&p, opts, 2, argc, argv);
 *   for (int k; (k = kgb_opts_next(&p)) != KGB_OPTS_END;) ...   (p.val: its value)
 *   kgb_opts_free(&p);
 *
 * Accepted: "--name", "--name=VALUE", "--name VALUE", "-x", "-x VALUE", "-xVALUE";
 * options and positional arguments mixed, in order; "--" ends the options; a lone "-"
 * is positional. A long name must be given whole (no abbreviations), a short flag alone
 * in its argument (no "-ab" for "-a -b"). */
#ifndef KGB_OPTS_H
#define KGB_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct kgb_opt {
	const char *name;     /* long name without the dashes: "lease-ms" */
	char short_name;      /* 'o', or 0 for none */
	bool has_arg;         /* takes a value */
	const char *arg_name; /* the value's name in the help ("MS"); NULL: "VALUE" */
	const char *help;     /* one line of help */
	const char *env;      /* the environment variable that sets it too, "[ENV]" in the help, or NULL */
	const char *dflt;     /* its default, "(default D)" in the help, or NULL */
} kgb_opt_t;

/* What kgb_opts_next found besides an option of the table (an index >= 0). */
enum {
	KGB_OPTS_END = -1,        /* the arguments are over */
	KGB_OPTS_POSITIONAL = -2, /* a positional argument: val */
	KGB_OPTS_UNKNOWN = -3,    /* an option not in the table: arg ("--bogus=1", "-z") */
	KGB_OPTS_NO_VALUE = -4,   /* opt takes a value and the arguments ended */
	KGB_OPTS_FLAG_VALUE = -5, /* opt takes no value and was given val ("--json=x", "-jx") */
};

struct option;

typedef struct kgb_opts {
	const kgb_opt_t *opts;
	size_t n;
	int argc;
	char **argv;          /* argv[0] is the command's name, not parsed */
	struct option *longopts;
	char *shortopts;
	bool options_over;    /* after "--": the rest is positional */
	int next;             /* argv index of the next argument, after "--" */
	/* what kgb_opts_next found */
	int opt;              /* its option's index in the table, or -1 */
	const char *val;      /* the option's value, or the positional argument */
	const char *arg;      /* the argument as given ("--lease-ms=5", "-z") */
} kgb_opts_t;

/* Parse argv[1..argc) against opts[0..n). Not reentrant (getopt_long's state is
 * global): one parse at a time. */
void kgb_opts_init(kgb_opts_t *p, const kgb_opt_t *opts, size_t n, int argc, char **argv);
/* The next argument: an option's index in the table (p->val its value, NULL for a flag)
 * or one of KGB_OPTS_*. Once it returned anything but an index or
 * KGB_OPTS_POSITIONAL, the parse is over. */
int kgb_opts_next(kgb_opts_t *p);
void kgb_opts_free(kgb_opts_t *p);

/* The error of a KGB_OPTS_UNKNOWN, _NO_VALUE or _FLAG_VALUE return as one phrase:
 * "unknown option '--bogus'", "unknown option '-z'", "option --lease-ms needs a value
 * (MS)", "option --json takes no value (got 'x')". Returns -1. */
int kgb_opts_error(const kgb_opts_t *p, int rc, char *err, size_t errlen);

/* The long name of an unknown long option, without "--" and any "=VALUE" (a pointer
 * into argv and its length), or NULL for an unknown short one. */
const char *kgb_opts_unknown_name(const kgb_opts_t *p, size_t *len);

/* The help of every option: "  -o, --name ARG   help [ENV] (default D)", the left part
 * padded to width; the rest on one line, or (wrap > 0) broken between words before
 * column wrap, the lines after it indented under the first. */
void kgb_opts_help(FILE *f, const kgb_opt_t *opts, size_t n, int width, int wrap);

#endif
