/* The kgb command-line tool: shared declarations of the CLI's modules.
 *
 * One file per command (cmd_*.c), dispatched from the table in main.c. Every handler
 * gets its arguments with argv[0] = the command name, and returns the process exit
 * status: KGB_CLI_OK, KGB_CLI_EXIT_USAGE (bad usage or bad input),
 * KGB_CLI_EXIT_REFUSED (the coordinator answered with an error) or
 * KGB_CLI_EXIT_NOCOORD (no reply from the coordinator). */
#ifndef KGB_CLI_H
#define KGB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
	KGB_CLI_OK = 0,
	KGB_CLI_EXIT_USAGE = 1,
	KGB_CLI_EXIT_REFUSED = 2,
	KGB_CLI_EXIT_NOCOORD = 3,
	KGB_CLI_EXIT_STALLED = 4,   /* status --watch: the campaign cannot progress */
	KGB_CLI_EXIT_CANCELLED = 5, /* status --watch, verify: the campaign ended cancelled */
	KGB_CLI_EXIT_FAILED = 6,    /* verify: the candidate ran and some case did not pass */
	KGB_CLI_EXIT_WAIT = 7,      /* verify: --wait ran out before the campaign ended */
};

#define KGB_CLI_DEFAULT_ENDPOINT "tcp://127.0.0.1:7711"
#define KGB_CLI_DEFAULT_TIMEOUT_S 10.0
/* submit waits longer by default: the coordinator stores and expands the campaign in
 * one transaction before it answers */
#define KGB_CLI_SUBMIT_TIMEOUT_S 120.0

/* Options every command accepts (before or after the command name). */
typedef struct kgb_cli_global {
	const char *endpoint;     /* coordinator's CLI endpoint */
	double timeout_s;         /* how long to wait for one reply */
	bool timeout_given;       /* --timeout was on the command line */
} kgb_cli_global_t;

typedef int (*kgb_cli_cmd_fn)(int argc, char **argv, kgb_cli_global_t *g);

/* One row of the command table (main.c). */
typedef struct kgb_cli_command {
	const char *name;
	kgb_cli_cmd_fn fn;
	const char *help;
} kgb_cli_command_t;

/* The command table (main.c registers it), in the order kgb --help lists it; *n its
 * length. */
void kgb_cli_set_commands(const kgb_cli_command_t *cmds, size_t n);
const kgb_cli_command_t *kgb_cli_commands(size_t *n);

#define KGB_CLI_EXIT_TEXT                                                                                     \
	"exit status: 0 ok, 1 bad usage or input, 2 refused by the coordinator,\n"                                  \
	"3 no reply from the coordinator, 4 status --watch: the campaign cannot progress,\n"                        \
	"5 status --watch, verify: the campaign ended cancelled; verify: 6 a dev case did\n"                        \
	"not pass, 7 --wait ran out\n"

/* ---- conventions.c ---- */

/* Read the config file (see kgb config --help): each key sets its environment variable
 * unless that is set already (the environment wins). Returns 0, or -1 with err naming
 * the file, line and key. */
int kgb_cli_config_load(char *err, size_t errlen);
/* kgb help --man [COMMAND] (a man page in roff) or kgb help --markdown (the command
 * reference of docs/cli.md), from the command and option tables. */
int kgb_cli_help_generated(const char *what, const char *command);
int kgb_cli_cmd_completion(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_config(int argc, char **argv, kgb_cli_global_t *g);

int kgb_cli_cmd_submit(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_validate(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_status(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_results(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_report(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_workers(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_platforms(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_cancel(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_show(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_failures(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_ops(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_refs(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_keygen(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_drain(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_campaigns(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_show_manifest(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_job_file(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_rerun(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_compare(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_import(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_generate(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_verify(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_tables(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_job(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_hold(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_release(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_worker(int argc, char **argv, kgb_cli_global_t *g);
int kgb_cli_cmd_platform(int argc, char **argv, kgb_cli_global_t *g);

/* Read, parse and resolve the manifest at path (sources relative to its directory, URLs
 * through kgb_cli_fetch), entirely offline of the coordinator. Returns 0 and *out
 * (free with kgb_manifest_destroy), or -1 with err naming the file, field and value. */
struct kgb_manifest;
int kgb_cli_load_manifest(const char *path, unsigned flags, struct kgb_manifest **out, char *err, size_t errlen);

/* Send the resolved manifest m to the coordinator (origin: its name in messages) and
 * set *id and *jobs. The coordinator's refusal is printed as "kgb CMD: ...", its notes
 * too. Returns 0 or an exit code. */
int kgb_cli_submit_manifest(kgb_cli_global_t *g, const char *cmd, const struct kgb_manifest *m, const char *origin,
                            bool wait_plat, uint64_t *id, uint32_t *jobs);

/* The user campaigns are submitted as (their owner): $KGB_USER, else the login name
 * of the real user id, else $USER, else "unknown". Static string. */
const char *kgb_cli_user(void);

/* Fetch the manifest campaign id was stored with (JSON text, sources inline) into
 * *json and its origin (the file name it was submitted from) into *origin when not
 * NULL; the caller frees both. Errors are printed as "kgb CMD: ...". Returns 0 or an
 * exit code. */
int kgb_cli_fetch_manifest(kgb_cli_global_t *g, const char *cmd, uint64_t id, char **json, char **origin);

/* Used by submit --watch: watch campaign id (0: all) like `kgb status --watch`. */
int kgb_cli_status_watch(kgb_cli_global_t *g, uint64_t id, double interval_s);

/* ---- argument parsing (args.c) ---- */

typedef enum {
	KGB_CLI_OPT_FLAG = 0,   /* bool *: set to true */
	KGB_CLI_OPT_STRING,     /* const char **: points into argv */
	KGB_CLI_OPT_DOUBLE,     /* double *: a finite number >= 0 */
	KGB_CLI_OPT_UINT,       /* uint64_t *: a non-negative integer */
} kgb_cli_opt_kind_t;

typedef struct kgb_cli_opt {
	const char *name;       /* long name without the dashes: "watch" */
	char short_name;        /* 'w', or 0 for none */
	kgb_cli_opt_kind_t kind;
	void *value;
	const char *arg_name;   /* "S" in "--interval S" (help text only) */
	const char *help;
} kgb_cli_opt_t;

/* A spec's .opts and .nopts, from one array of options. */
#define KGB_CLI_OPTS(array) .opts = (array), .nopts = KGB_ARRAY_LEN(array)

typedef struct kgb_cli_spec {
	const char *name;       /* "status" */
	const char *usage;      /* "[ID] [--watch] [--interval S]" */
	const char *summary;    /* one paragraph for --help */
	const kgb_cli_opt_t *opts;
	size_t nopts;
	int min_pos, max_pos;   /* positional arguments allowed */
} kgb_cli_spec_t;

#define KGB_CLI_HELP 1      /* kgb_cli_parse: --help was given */

/* Parse argv[1..argc) against opts: "--name", "--name=value", "--name value", "-x",
 * "-x value"; options and positional arguments may be mixed; "--" ends the options.
 * Positional arguments are stored in pos[] (pointers into argv), their count in *npos.
 * Returns 0, KGB_CLI_HELP for -h/--help, or -1 with err naming the option and value. */
int kgb_cli_parse(int argc, char **argv, const kgb_cli_opt_t *opts, size_t nopts, char **pos,
                  int maxpos, int *npos, char *err, size_t errlen);

/* Parse a command's arguments against spec->opts plus the global options (which update
 * g). Prints the help (to stdout) for --help, or the error and a usage line (to stderr).
 * Returns 0 to go on, KGB_CLI_HELP when the help was printed (exit 0), or -1 (exit 1). */
int kgb_cli_parse_cmd(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g,
                      char **pos, int *npos);

/* Commands with --json get more options from kgb_cli_parse_cmd: --csv (where they have
 * none: the JSON document as CSV), --wide and -o/--format COL,COL (tables); every
 * command gets --coordinator and --timeout. Where the user gave no output option,
 * $KGB_FORMAT (json, csv or table; the config file's "format") picks the output. */

/* Called by kgb_cli_parse_cmd, when set, with the command's spec and its whole option
 * table (the added options included) instead of parsing: the command then returns as
 * after --help. kgb completion, kgb help --man and --markdown read the commands so. */
typedef void (*kgb_cli_describe_fn)(const kgb_cli_spec_t *spec, const kgb_cli_opt_t *all, size_t n, void *arg);
void kgb_cli_set_describe(kgb_cli_describe_fn fn, void *arg);

/* Print "usage: kgb NAME USAGE", the summary and the option list to f. */
void kgb_cli_print_help(FILE *f, const kgb_cli_spec_t *spec);

/* Parse a campaign id (a positive decimal integer). Returns 0 or -1 with err. */
int kgb_cli_parse_id(const char *s, uint64_t *id, char *err, size_t errlen);

/* A command's arguments through kgb_cli_parse_cmd, then its first nids positional
 * arguments, those given, as campaign IDs into ids[] (kgb_cli_parse_id); pos and npos
 * NULL for a command with none (spec->max_pos 0). Returns -1 to
 * go on, or the exit status the command returns now (its help printed: 0; a usage
 * error, said on stderr with the command's name). */
int kgb_cli_parse_args(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g, char **pos,
                       int *npos, uint64_t *ids, int nids);

/* A command whose one positional argument is a campaign ID (whatever spec's min_pos
 * and max_pos): its arguments and the ID into *id, as kgb_cli_parse_args. */
int kgb_cli_parse_id_cmd(const kgb_cli_spec_t *spec, int argc, char **argv, kgb_cli_global_t *g, uint64_t *id);

/* ---- URL fetches for manifests (fetch.c) ---- */

/* Limits for kgb_cli_fetch: total time per URL, bytes per URL. */
void kgb_cli_fetch_config(double timeout_s, size_t max_bytes);
/* A kgb_fetch_fn: GET url (http or https only; redirects followed up to 5 times)
 * into a NUL-terminated heap buffer (caller frees). Fails, with the URL and the reason
 * in err, on a transfer error, a timeout, an HTTP status other than 2xx, or a body
 * larger than the size limit. */
char *kgb_cli_fetch(const char *url, size_t *len, char *err, size_t errlen);

#endif
