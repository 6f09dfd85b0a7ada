/* kgb: the user command. One table of subcommands, git-style:
 *   kgb [--coordinator ENDPOINT] [--timeout SECONDS] COMMAND [ARGS]
 * Exit status: 0 ok, 1 bad usage or input, 2 the coordinator refused, 3 no coordinator. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "log.h"
#include "util.h"

typedef kgb_cli_command_t command_t;

static const command_t commands[] = {
	{ "submit", kgb_cli_cmd_submit, "validate a campaign manifest and submit it" },
	{ "validate", kgb_cli_cmd_validate, "check a manifest offline, without submitting it" },
	{ "status", kgb_cli_cmd_status, "progress of campaigns per platform (--watch to follow)" },
	{ "results", kgb_cli_cmd_results, "verdict, speedup and tokens per method and operator" },
	{ "report", kgb_cli_cmd_report, "the benchmark's metrics per method, then the results" },
	{ "workers", kgb_cli_cmd_workers, "workers, their devices and running jobs" },
	{ "platforms", kgb_cli_cmd_platforms, "platforms with live devices and queued jobs" },
	{ "show", kgb_cli_cmd_show, "every case of one operator: parameters, verdict, time, speedup" },
	{ "failures", kgb_cli_cmd_failures, "a campaign's failing cases, grouped by identical message with a count" },
	{ "cancel", kgb_cli_cmd_cancel, "cancel a campaign, or its jobs on one platform (--platform)" },
	{ "drain", kgb_cli_cmd_drain, "end a campaign's jobs that wait on platforms with no live worker" },
	{ "job", kgb_cli_cmd_job, "one job: worker, attempts, times, duration, verdicts, log (--campaign: its jobs)" },
	{ "hold", kgb_cli_cmd_hold, "hold a campaign: its queued jobs get no worker until release" },
	{ "release", kgb_cli_cmd_release, "release a held campaign" },
	{ "worker", kgb_cli_cmd_worker, "drain a worker (no new jobs, running ones finish) or resume it" },
	{ "platform", kgb_cli_cmd_platform, "retire a platform whose machines are gone" },
	{ "campaigns", kgb_cli_cmd_campaigns, "list campaigns: owner, state, times, progress (--user, --state)" },
	{ "show-manifest", kgb_cli_cmd_show_manifest, "print the manifest a campaign was submitted with" },
	{ "job-file", kgb_cli_cmd_job_file, "an ended campaign's cases of one candidate as a job file for kgb-worker run" },
	{ "rerun", kgb_cli_cmd_rerun, "a new campaign of a campaign's (failing) candidates and cases" },
	{ "tables", kgb_cli_cmd_tables, "the benchmark's tables over campaigns: accuracy, Pass@K, speedup, cross-chip" },
	{ "compare", kgb_cli_cmd_compare, "per operator verdict and speedup changes between two campaigns or methods" },
	{ "ops", kgb_cli_cmd_ops, "operators of the built-in catalog" },
	{ "refs", kgb_cli_cmd_refs, "compute and cache the CPU references, with timings" },
	{ "keygen", kgb_cli_cmd_keygen, "make a CURVE key pair for the coordinator, a worker or a user" },
	{ "import", kgb_cli_cmd_import, "a KernelGenBench run directory as a manifest" },
	{ "verify", kgb_cli_cmd_verify, "one candidate on the dev cases, ahead of batch jobs (for agents)" },
	{ "generate", kgb_cli_cmd_generate, "sample an LLM for kernels over rounds, each round a campaign" },
	{ "config", kgb_cli_cmd_config, "the CLI's settings (config file, environment) and where each came from" },
	{ "completion", kgb_cli_cmd_completion, "a bash or zsh completion script, generated from these tables" },
};


static void usage(FILE *f)
{
	fprintf(f, "usage: kgb [--coordinator ENDPOINT] [--timeout SECONDS] COMMAND [ARGS]\n\n"
	           "commands:\n");
	for (size_t i = 0; i < KGB_ARRAY_LEN(commands); i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nglobal options:\n"
	           "  --coordinator ENDPOINT  the coordinator's CLI endpoint, or several, comma-separated\n"
	           "                          (the active one is followed; default $KGB_CLI_ENDPOINT\n"
	           "                          or " KGB_CLI_DEFAULT_ENDPOINT ")\n"
	           "  --timeout SECONDS       how long to wait for a reply (default 10,\n"
	           "                          submit 120)\n"
	           "  --version               print the version\n"
	           "  -h, --help              this help; `kgb COMMAND --help` for a command\n"
	           "\nsettings: ~/.config/kgb/config, the environment, the options (kgb config)\n"
	           "\n" KGB_CLI_EXIT_TEXT);
}

static const command_t *find_command(const char *name)
{
	for (size_t i = 0; i < KGB_ARRAY_LEN(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* "kgb: unknown command 'x'; did you mean 'y'?" */
static int unknown_command(const char *name)
{
	const char *names[KGB_ARRAY_LEN(commands) + 1];
	for (size_t i = 0; i < KGB_ARRAY_LEN(commands); i++)
		names[i] = commands[i].name;
	names[KGB_ARRAY_LEN(commands)] = "help";
	const char *near = kgb_cli_suggest(name, names, KGB_ARRAY_LEN(names));
	if (near)
		fprintf(stderr, "kgb: unknown command '%s'; did you mean '%s'? (see kgb --help)\n", name, near);
	else
		fprintf(stderr, "kgb: unknown command '%s' (see kgb --help)\n", name);
	return KGB_CLI_EXIT_USAGE;
}

/* The settings the environment (or the config file through it) gives: the endpoint,
 * the reply timeout, the default output format. */
static int settings_from_env(kgb_cli_global_t *g)
{
	const char *env = getenv("KGB_CLI_ENDPOINT");
	g->endpoint = env && *env ? env : KGB_CLI_DEFAULT_ENDPOINT;
	const char *t = getenv("KGB_TIMEOUT");
	if (t && *t) {
		char *end = NULL;
		double d = strtod(t, &end);
		if (*end || !isfinite(d) || d <= 0) {
			fprintf(stderr, "kgb: KGB_TIMEOUT (or the config file's timeout): '%s' is not a positive number of "
			                "seconds\n", t);
			return -1;
		}
		g->timeout_s = d;
		g->timeout_given = true;
	}
	const char *f = getenv("KGB_FORMAT");
	if (f && *f && strcmp(f, "table") != 0 && strcmp(f, "json") != 0 && strcmp(f, "csv") != 0) {
		fprintf(stderr, "kgb: KGB_FORMAT (or the config file's format): '%s' is not table, json or csv\n", f);
		return -1;
	}
	return 0;
}

static int parse_timeout(const char *v, double *out)
{
	char *end = NULL;
	errno = 0;
	double d = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(d) || d <= 0) {
		fprintf(stderr, "kgb: --timeout: '%s' is not a positive number of seconds\n", v);
		return -1;
	}
	*out = d;
	return 0;
}

static void configure_fetch(void)
{
	const char *t = getenv("KGB_FETCH_TIMEOUT_S");
	const char *mb = getenv("KGB_FETCH_MAX_MB");
	double ts = t ? strtod(t, NULL) : 0;
	double m = mb ? strtod(mb, NULL) : 0;
	kgb_cli_fetch_config(ts > 0 ? ts : 0, m > 0 ? (size_t)(m * 1024 * 1024) : 0);
}

int main(int argc, char **argv)
{
	kgb_cli_global_t g = { .endpoint = NULL, .timeout_s = KGB_CLI_DEFAULT_TIMEOUT_S };
	char cerr[512];
	int i;

	kgb_cli_set_commands(commands, KGB_ARRAY_LEN(commands));
	if (kgb_cli_config_load(cerr, sizeof cerr) < 0) {
		fprintf(stderr, "kgb: %s\n", cerr);
		return KGB_CLI_EXIT_USAGE;
	}
	if (settings_from_env(&g) < 0)
		return KGB_CLI_EXIT_USAGE;
	kgb_log_init("kgb", getenv("KGB_LOG_LEVEL") ? NULL : "warn");
	configure_fetch();

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return KGB_CLI_OK;
		}
		if (strcmp(a, "--version") == 0) {
			printf("kgb %s\n", KGB_VERSION);
			return KGB_CLI_OK;
		}
		bool is_coord = strncmp(a, "--coordinator", 13) == 0 && (a[13] == '\0' || a[13] == '=');
		bool is_timeout = strncmp(a, "--timeout", 9) == 0 && (a[9] == '\0' || a[9] == '=');
		if (!is_coord && !is_timeout) {
			static const char *const gopts[] = { "--coordinator", "--timeout", "--version", "--help" };
			const char *near = kgb_cli_suggest(a, gopts, KGB_ARRAY_LEN(gopts));
			if (near)
				fprintf(stderr, "kgb: unknown option '%s'; did you mean '%s'?\n", a, near);
			else
				fprintf(stderr, "kgb: unknown option '%s'\n", a);
			usage(stderr);
			return KGB_CLI_EXIT_USAGE;
		}
		const char *eq = strchr(a, '=');
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(stderr, "kgb: option %s needs a value\n", a);
			return KGB_CLI_EXIT_USAGE;
		}
		if (is_coord) {
			if (!*val) {
				fprintf(stderr, "kgb: --coordinator: empty endpoint\n");
				return KGB_CLI_EXIT_USAGE;
			}
			g.endpoint = val;
		} else if (parse_timeout(val, &g.timeout_s) < 0) {
			return KGB_CLI_EXIT_USAGE;
		} else {
			g.timeout_given = true;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return KGB_CLI_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0) {
		if (i + 1 >= argc) {
			usage(stdout);
			return KGB_CLI_OK;
		}
		if (strcmp(argv[i + 1], "--man") == 0 || strcmp(argv[i + 1], "--markdown") == 0) {
			if (i + 3 < argc || (i + 2 < argc && argv[i + 1][2] == 'm' && argv[i + 1][3] == 'a' &&
			                     strcmp(argv[i + 1], "--markdown") == 0)) {
				fprintf(stderr, "usage: kgb help --man [COMMAND] | kgb help --markdown\n");
				return KGB_CLI_EXIT_USAGE;
			}
			return kgb_cli_help_generated(argv[i + 1], i + 2 < argc ? argv[i + 2] : NULL);
		}
		const command_t *c = find_command(argv[i + 1]);
		if (!c)
			return unknown_command(argv[i + 1]);
		char *hargv[] = { argv[i + 1], "--help", NULL };
		return c->fn(2, hargv, &g);
	}
	const command_t *c = find_command(argv[i]);
	if (!c)
		return unknown_command(argv[i]);
	return c->fn(argc - i, argv + i, &g);
}
