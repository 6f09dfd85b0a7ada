/* Operating the cluster (docs/cli.md, "Operating the cluster"): kgb platform retire,
 * kgb worker drain / resume, kgb hold / release, and kgb job (one job, or a campaign's
 * jobs). */
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "listing.h"
#include "util.h"

/* Send an AdminRequest and print its answer. */
static int admin(kgb_cli_global_t *g, const char *cmd, const char *action, const char *name, uint64_t id)
{
	Kgb__AdminRequest req = KGB__ADMIN_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__Envelope *reply = NULL;
	req.action = (char *)action;
	req.name = (char *)(name ? name : "");
	req.campaign_id = id;
	env.body_case = KGB__ENVELOPE__BODY_ADMIN;
	env.admin = &req;
	int rc = kgb_cli_request(g, cmd, &env, KGB__ENVELOPE__BODY_ADMIN_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__AdminReply *ar = reply->admin_reply;
	if (!ar->ok) {
		fprintf(stderr, "kgb %s: %s\n", cmd, kgb_cli_str_or(ar->error, "refused (no reason given)"));
		rc = KGB_CLI_EXIT_REFUSED;
	} else {
		printf("%s\n", kgb_cli_str_or(ar->message, "ok"));
	}
	kgb_wire_free(reply);
	return rc;
}

/* kgb platform retire NAME / kgb worker drain|resume NAME: SUBCOMMAND NAME (whatever
 * spec's min_pos and max_pos). */
static int named(int argc, char **argv, kgb_cli_global_t *g, const kgb_cli_spec_t *spec0, const char *const *subs,
                 const char *const *actions, size_t nsubs)
{
	kgb_cli_spec_t two = *spec0, *spec = &two;
	char *pos[2];
	int npos = 0;
	two.min_pos = two.max_pos = 2;
	int rc = kgb_cli_parse_args(spec, argc, argv, g, pos, &npos, NULL, 0);
	if (rc >= 0)
		return rc;
	for (size_t i = 0; i < nsubs; i++)
		if (strcmp(pos[0], subs[i]) == 0) {
			if (!pos[1][0]) {
				fprintf(stderr, "kgb %s %s: empty name\n", spec->name, subs[i]);
				return KGB_CLI_EXIT_USAGE;
			}
			char cmd[64];
			snprintf(cmd, sizeof cmd, "%s %s", spec->name, subs[i]);
			return admin(g, cmd, actions[i], pos[1], 0);
		}
	fprintf(stderr, "kgb %s: unknown subcommand '%s'\nusage: kgb %s %s\n", spec->name, pos[0], spec->name,
	        spec->usage);
	return KGB_CLI_EXIT_USAGE;
}

/* kgb platform retire NAME. */
int kgb_cli_cmd_platform(int argc, char **argv, kgb_cli_global_t *g)
{
	static const char *const subs[] = { "retire" }, *const actions[] = { "retire-platform" };
	const kgb_cli_spec_t spec = {
		.name = "platform",
		.usage = "retire NAME",
		.summary = "Retire a platform whose machines are gone: campaigns for every platform\n"
		           "(\"platforms\": \"all\") no longer get jobs for it, and their open jobs there\n"
		           "end as `kgb drain` ends them. A platform a live worker offers is not\n"
		           "retired. A retired platform comes back by itself when a worker registers\n"
		           "it again. Campaigns that name the platform are left as they are.",
	};
	return named(argc, argv, g, &spec, subs, actions, 1);
}

/* kgb worker drain|resume NAME. */
int kgb_cli_cmd_worker(int argc, char **argv, kgb_cli_global_t *g)
{
	static const char *const subs[] = { "drain", "resume" }, *const actions[] = { "drain-worker", "resume-worker" };
	const kgb_cli_spec_t spec = {
		.name = "worker",
		.usage = "drain|resume NAME",
		.summary = "Drain a worker (by its name or id, as `kgb workers` lists them): no new job\n"
		           "goes to it, and the jobs it runs finish (for maintenance of its machine).\n"
		           "The mark is kept in the store, across restarts of the worker and of the\n"
		           "coordinator. `resume` takes it back.",
	};
	return named(argc, argv, g, &spec, subs, actions, 2);
}

/* kgb hold ID / kgb release ID. */
static int hold(int argc, char **argv, kgb_cli_global_t *g, bool on)
{
	const kgb_cli_spec_t spec = {
		.name = on ? "hold" : "release",
		.usage = "ID",
		.summary = on ? "Hold a campaign: its queued jobs get no worker until `kgb release ID`;\n"
		                "its running jobs finish. `kgb status` shows it as held."
		              : "Release a held campaign: its queued jobs go to workers again.",
	};
	uint64_t id = 0;
	int rc = kgb_cli_parse_id_cmd(&spec, argc, argv, g, &id);
	if (rc >= 0)
		return rc;
	return admin(g, spec.name, spec.name, NULL, id);
}

int kgb_cli_cmd_hold(int argc, char **argv, kgb_cli_global_t *g)
{
	return hold(argc, argv, g, true);
}

int kgb_cli_cmd_release(int argc, char **argv, kgb_cli_global_t *g)
{
	return hold(argc, argv, g, false);
}

/* ---- kgb job ---- */

static const char *when(int64_t unix_s, char *buf, size_t n)
{
	return kgb_cli_fmt_local(unix_s, "%Y-%m-%d %H:%M:%S", buf, n);
}

static json_t *job_json(const Kgb__JobInfo *j)
{
	json_t *o = json_object();
	json_object_set_new(o, "job", json_integer((json_int_t)j->job_id));
	json_object_set_new(o, "campaign_id", json_integer((json_int_t)j->campaign_id));
	json_object_set_new(o, "campaign", json_string(kgb_cli_str_or(j->campaign, "")));
	json_object_set_new(o, "method", json_string(kgb_cli_str_or(j->method, "")));
	json_object_set_new(o, "op", json_string(kgb_cli_str_or(j->op, "")));
	json_object_set_new(o, "platform", json_string(kgb_cli_str_or(j->platform, "")));
	json_object_set_new(o, "case_lo", json_integer(j->case_lo));
	json_object_set_new(o, "case_hi", json_integer(j->case_hi));
	json_object_set_new(o, "state", json_string(kgb_cli_str_or(j->state, "")));
	json_object_set_new(o, "campaign_held", json_boolean(j->campaign_held));
	json_object_set_new(o, "attempts", json_integer(j->attempts));
	json_object_set_new(o, "epoch", json_integer((json_int_t)j->epoch));
	json_object_set_new(o, "worker", j->worker && *j->worker ? json_string(j->worker) : json_null());
	json_object_set_new(o, "device", j->device >= 0 ? json_integer(j->device) : json_null());
	json_object_set_new(o, "created_unix", json_integer(j->created_unix));
	json_object_set_new(o, "assigned_unix", j->assigned_unix > 0 ? json_integer(j->assigned_unix) : json_null());
	json_object_set_new(o, "finished_unix", j->finished_unix > 0 ? json_integer(j->finished_unix) : json_null());
	json_object_set_new(o, "wall_ms", j->wall_ms > 0 ? json_real(j->wall_ms) : json_null());
	json_object_set_new(o, "compile_ms", j->compile_ms > 0 ? json_real(j->compile_ms) : json_null());
	json_object_set_new(o, "device_ms", j->device_ms > 0 ? json_real(j->device_ms) : json_null());
	json_object_set_new(o, "cases_recorded", json_integer(j->cases_recorded));
	json_object_set_new(o, "verdicts", json_string(kgb_cli_str_or(j->verdicts, "")));
	json_object_set_new(o, "retry_in_s", json_real(j->retry_in_s));
	json_object_set_new(o, "last_error", json_string(kgb_cli_str_or(j->last_error, "")));
	json_object_set_new(o, "log", json_string(kgb_cli_str_or(j->log, "")));
	return o;
}

/* One job, key = value per line, as scontrol show job prints it. */
static void job_print(const Kgb__JobInfo *j)
{
	char t1[32], t2[32], t3[32], d[32];
	printf("job %llu\n", (unsigned long long)j->job_id);
	printf("  campaign   %llu (%s)%s\n", (unsigned long long)j->campaign_id, kgb_cli_str_or(j->campaign, "-"),
	       j->campaign_held ? ", held" : "");
	printf("  candidate  %s / %s\n", kgb_cli_str_or(j->method, "-"), kgb_cli_str_or(j->op, "-"));
	printf("  platform   %s\n", kgb_cli_str_or(j->platform, "-"));
	printf("  cases      %u-%u (%u)\n", j->case_lo, j->case_hi ? j->case_hi - 1 : 0,
	       j->case_hi > j->case_lo ? j->case_hi - j->case_lo : 0);
	printf("  state      %s%s\n", kgb_cli_str_or(j->state, "?"),
	       j->campaign_held && strcmp(kgb_cli_str_or(j->state, ""), "queued") == 0 ? " (campaign held)" : "");
	printf("  attempts   %u (epoch %llu)%s", j->attempts, (unsigned long long)j->epoch,
	       j->retry_in_s > 0 ? ", next try in " : "");
	if (j->retry_in_s > 0)
		printf("%s", kgb_cli_fmt_duration(j->retry_in_s, d, sizeof d));
	printf("\n");
	if (j->worker && *j->worker)
		printf("  worker     %s, device %d\n", j->worker, j->device);
	else
		printf("  worker     -\n");
	printf("  submitted  %s\n", when(j->created_unix, t1, sizeof t1));
	printf("  started    %s\n", when(j->assigned_unix, t2, sizeof t2));
	printf("  ended      %s\n", when(j->finished_unix, t3, sizeof t3));
	if (j->wall_ms > 0)
		printf("  duration   %s (compile %.0f ms, device %.1f ms)\n", kgb_cli_fmt_duration(j->wall_ms / 1000, d, sizeof d),
		       j->compile_ms, j->device_ms);
	printf("  results    %u case(s) recorded%s%s\n", j->cases_recorded, j->verdicts && *j->verdicts ? ": " : "",
	       kgb_cli_str_or(j->verdicts, ""));
	if (j->last_error && *j->last_error)
		printf("  last error %s\n", j->last_error);
	if (j->log && *j->log) {
		printf("  log:\n");
		const char *s = j->log;
		while (*s) {
			const char *nl = strchr(s, '\n');
			size_t n = nl ? (size_t)(nl - s) : strlen(s);
			printf("    %.*s\n", (int)n, s);
			s += n + (nl ? 1 : 0);
		}
	}
}

/* kgb job ID | kgb job --campaign ID [--state S] [--limit N] [--json]. */
int kgb_cli_cmd_job(int argc, char **argv, kgb_cli_global_t *g)
{
	bool json = false;
	uint64_t camp = 0, limit = 0;
	const char *state = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "campaign", 'c', KGB_CLI_OPT_UINT, &camp, "ID", "list the campaign's jobs, one line each" },
		{ "state", 's', KGB_CLI_OPT_STRING, &state, "S",
		  "with --campaign: only jobs in state S (queued, running, done, failed, cancelled)" },
		{ "limit", 'n', KGB_CLI_OPT_UINT, &limit, "N", "with --campaign: at most N jobs (default 1000)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print JSON" },
	};
	const kgb_cli_spec_t spec = {
		.name = "job",
		.usage = "ID [--json] | --campaign ID [--state S] [--limit N] [--json]",
		.summary = "One job: its campaign, candidate, platform and cases, state, attempts, the\n"
		           "worker and device that run or ran it, when it was submitted, started and\n"
		           "ended, how long it ran, its recorded verdicts, its last error and its log\n"
		           "(compile log and executor messages). With --campaign, the campaign's jobs\n"
		           "with their ids, one line each.",
		KGB_CLI_OPTS(opts),
		.min_pos = 0,
		.max_pos = 1,
	};
	static const char *const states[] = { "queued", "running", "done", "failed", "cancelled" };
	char *pos[1];
	int npos = 0;
	uint64_t id = 0;
	int rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, &id, 1);
	if (rc >= 0)
		return rc;
	if ((npos == 1) == (camp != 0)) {
		fprintf(stderr, "kgb job: give a job ID or --campaign ID (one of them)\nusage: kgb job %s\n", spec.usage);
		return KGB_CLI_EXIT_USAGE;
	}
	bool known = !state;
	for (size_t i = 0; state && i < KGB_ARRAY_LEN(states); i++)
		known |= strcmp(state, states[i]) == 0;
	if (!known || (state && !camp)) {
		fprintf(stderr, "kgb job: --state: %s\n",
		        camp ? "not one of queued, running, done, failed, cancelled" : "only with --campaign");
		return KGB_CLI_EXIT_USAGE;
	}
	Kgb__JobInfoRequest req = KGB__JOB_INFO_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__Envelope *reply = NULL;
	req.job_id = id;
	req.campaign_id = camp;
	req.state = (char *)(state ? state : "");
	req.limit = (uint32_t)KGB_MIN(limit, (uint64_t)UINT32_MAX);
	env.body_case = KGB__ENVELOPE__BODY_JOB_INFO;
	env.job_info = &req;
	rc = kgb_cli_request(g, "job", &env, KGB__ENVELOPE__BODY_JOB_INFO_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__JobInfoReply *jr = reply->job_info_reply;
	if (!jr->ok) {
		fprintf(stderr, "kgb job: %s\n", kgb_cli_str_or(jr->error, "refused (no reason given)"));
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < jr->n_jobs; i++)
			json_array_append_new(arr, job_json(jr->jobs[i]));
		if (id) {
			json_t *one = json_incref(json_array_get(arr, 0));
			json_decref(arr);
			arr = one;
		} else {
			json_t *o = json_object();
			json_object_set_new(o, "jobs", arr);
			json_object_set_new(o, "truncated", json_boolean(jr->truncated));
			arr = o;
		}
		kgb_cli_json_print(stdout, arr);
	} else if (id) {
		job_print(jr->jobs[0]);
	} else if (jr->n_jobs == 0) {
		printf("campaign %llu has no %s%sjobs\n", (unsigned long long)camp, state ? state : "", state ? " " : "");
	} else {
		static const char *const hdr[] = { "JOB", "METHOD", "OP", "PLATFORM", "CASES", "STATE", "ATTEMPTS",
			                               "WORKER" };
		kgb_cli_table_t *t = kgb_cli_table_new(8, hdr, "rlllrlrl");
		for (size_t i = 0; i < jr->n_jobs; i++) {
			const Kgb__JobInfo *j = jr->jobs[i];
			kgb_cli_table_cell(t, "%llu", (unsigned long long)j->job_id);
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(j->method, "-"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(j->op, "-"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(j->platform, "-"));
			kgb_cli_table_cell(t, "%u-%u", j->case_lo, j->case_hi ? j->case_hi - 1 : 0);
			kgb_cli_table_cell(t, "%s%s", kgb_cli_str_or(j->state, "?"),
			                   j->campaign_held && strcmp(kgb_cli_str_or(j->state, ""), "queued") == 0 ? " (held)"
			                                                                                          : "");
			kgb_cli_table_cell(t, "%u", j->attempts);
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(j->worker, "-"));
		}
		kgb_cli_table_print(t, stdout);
		kgb_cli_table_destroy(&t);
		if (jr->truncated)
			printf("(more jobs: --limit N shows more)\n");
		printf("`kgb job ID` shows one job with its log\n");
	}
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}
