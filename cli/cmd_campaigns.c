/* kgb campaigns (a squeue/sacct-like list) and kgb show-manifest ID. */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "output.h"
#include "util.h"

/* The submitting user; see cli.h. */
const char *kgb_cli_user(void)
{
	const char *u = getenv("KGB_USER");
	if (u && *u)
		return u;
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name && *pw->pw_name)
		return pw->pw_name;
	u = getenv("USER");
	return u && *u ? u : "unknown";
}

static const char *fmt_when(int64_t unix_s, char *buf, size_t n)
{
	return kgb_cli_fmt_local(unix_s, "%m-%d %H:%M:%S", buf, n);
}

/* kgb campaigns [--user U | --mine] [--state S] [--json]. */
int kgb_cli_cmd_campaigns(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *user = NULL, *state = NULL;
	bool mine = false, json = false;
	const kgb_cli_opt_t opts[] = {
		{ "user", 'u', KGB_CLI_OPT_STRING, &user, "U", "only campaigns submitted by U" },
		{ "mine", 0, KGB_CLI_OPT_FLAG, &mine, NULL, "only my campaigns (see KGB_USER in docs/cli.md)" },
		{ "state", 's', KGB_CLI_OPT_STRING, &state, "S", "only campaigns in state S (queued, running, done, cancelled)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the list as JSON" },
	};
	const kgb_cli_spec_t spec = {
		.name = "campaigns",
		.usage = "[--user U | --mine] [--state S] [--json]",
		.summary = "Every campaign, oldest first: owner, state, when it was submitted, started\n"
		           "and ended, its jobs and how many ran (kernel failures counted apart), and\n"
		           "whether it is partial (a case selection) or a re-run of another.",
		KGB_CLI_OPTS(opts),
		.min_pos = 0,
		.max_pos = 0,
	};
	Kgb__Envelope *reply = NULL;

	int rc = kgb_cli_parse_args(&spec, argc, argv, g, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	if (state && strcmp(state, "queued") != 0 && strcmp(state, "running") != 0 && strcmp(state, "done") != 0 &&
	    strcmp(state, "cancelled") != 0) {
		fprintf(stderr, "kgb campaigns: --state: '%s' is not a campaign state (queued, running, done, cancelled)\n",
		        state);
		return KGB_CLI_EXIT_USAGE;
	}
	if (mine)
		user = kgb_cli_user();
	Kgb__StatusRequest req = KGB__STATUS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_STATUS;
	env.status = &req;
	rc = kgb_cli_request(g, "campaigns", &env, KGB__ENVELOPE__BODY_STATUS_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__StatusReply *sr = reply->status_reply;
	if (sr->error && *sr->error) {
		fprintf(stderr, "kgb campaigns: %s\n", sr->error);
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	static const char *const hdr[] = { "ID", "NAME", "OWNER", "STATE", "SUBMITTED", "STARTED", "ENDED",
		                               "JOBS", "RAN", "KERNEL-FAIL", "INFRA-FAIL", "CANCELLED", "NOTE" };
	kgb_cli_table_t *t = kgb_cli_table_new(13, hdr, "llllldlrDrDDw");
	json_t *arr = json_array();
	for (size_t i = 0; i < sr->n_campaigns; i++) {
		const Kgb__CampaignStatus *cs = sr->campaigns[i];
		if (user && strcmp(cs->owner ? cs->owner : "", user) != 0)
			continue;
		if (state && strcmp(cs->state ? cs->state : "", state) != 0)
			continue;
		uint32_t total = 0, ran = 0, kf = 0, inf = 0, canc = 0;
		for (size_t j = 0; j < cs->n_platforms; j++) {
			const Kgb__PlatformProgress *p = cs->platforms[j];
			total += p->total;
			ran += p->done + p->failed;
			kf += p->kernel_failed;
			inf += p->failed;
			canc += p->cancelled;
		}
		char note[96] = "";
		if (cs->partial)
			kgb_strlcpy(note, "partial", sizeof note);
		if (cs->parent_campaign_id) {
			size_t k = strlen(note);
			snprintf(note + k, sizeof note - k, "%srerun of %llu", k ? ", " : "",
			         (unsigned long long)cs->parent_campaign_id);
		}
		if (cs->stalled) {
			size_t k = strlen(note);
			snprintf(note + k, sizeof note - k, "%scannot progress", k ? ", " : "");
		}
		if (json) {
			json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:I,s:o,s:o,s:i,s:i,s:i,s:i,s:i,s:b,s:b}", "id",
			                      (json_int_t)cs->id, "name", cs->name ? cs->name : "", "owner",
			                      cs->owner ? cs->owner : "", "state", cs->state ? cs->state : "", "created_unix",
			                      (json_int_t)cs->created_unix, "started_unix",
			                      cs->started_unix > 0 ? json_integer(cs->started_unix) : json_null(),
			                      "finished_unix",
			                      cs->finished_unix > 0 ? json_integer(cs->finished_unix) : json_null(), "jobs",
			                      (int)total, "ran", (int)ran, "kernel_failed", (int)kf, "infra_failed", (int)inf,
			                      "cancelled", (int)canc, "partial", cs->partial, "stalled", cs->stalled);
			if (cs->parent_campaign_id)
				json_object_set_new(o, "rerun_of", json_integer((json_int_t)cs->parent_campaign_id));
			json_array_append_new(arr, o);
			continue;
		}
		char t1[32], t2[32], t3[32];
		kgb_cli_table_cell(t, "%llu", (unsigned long long)cs->id);
		kgb_cli_table_cell(t, "%s", cs->name && *cs->name ? cs->name : "-");
		kgb_cli_table_cell(t, "%s", cs->owner && *cs->owner ? cs->owner : "-");
		kgb_cli_table_cell(t, "%s", cs->state ? cs->state : "?");
		kgb_cli_table_cell(t, "%s", fmt_when(cs->created_unix, t1, sizeof t1));
		kgb_cli_table_cell(t, "%s", fmt_when(cs->started_unix, t2, sizeof t2));
		kgb_cli_table_cell(t, "%s", fmt_when(cs->finished_unix, t3, sizeof t3));
		kgb_cli_table_cell(t, "%u", total);
		kgb_cli_table_cell(t, "%u", ran);
		kgb_cli_table_cell(t, "%u", kf);
		kgb_cli_table_cell(t, "%u", inf);
		kgb_cli_table_cell(t, "%u", canc);
		kgb_cli_table_cell(t, "%s", note);
	}
	if (json) {
		json_t *root = json_object();
		json_object_set_new(root, "campaigns", arr);
		kgb_cli_json_print(stdout, root);
	} else {
		json_decref(arr);
		if (kgb_cli_table_rows(t) == 0)
			printf("no campaigns\n");
		else
			kgb_cli_table_print(t, stdout);
	}
	kgb_cli_table_destroy(&t);
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}

/* Fetch campaign id's stored manifest; see cli.h. */
int kgb_cli_fetch_manifest(kgb_cli_global_t *g, const char *cmd, uint64_t id, char **json, char **origin)
{
	Kgb__ManifestRequest req = KGB__MANIFEST_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__Envelope *reply = NULL;
	req.campaign_id = id;
	env.body_case = KGB__ENVELOPE__BODY_MANIFEST;
	env.manifest = &req;
	int rc = kgb_cli_request(g, cmd, &env, KGB__ENVELOPE__BODY_MANIFEST_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__ManifestReply *mr = reply->manifest_reply;
	if ((mr->error && *mr->error) || !mr->manifest_json || !*mr->manifest_json) {
		fprintf(stderr, "kgb %s: campaign %llu: %s\n", cmd, (unsigned long long)id,
		        mr->error && *mr->error ? mr->error : "no manifest stored");
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	*json = kgb_xstrdup(mr->manifest_json);
	if (origin)
		*origin = kgb_xstrdup(mr->origin ? mr->origin : "");
	kgb_wire_free(reply);
	return 0;
}

/* kgb show-manifest ID [--no-sources]. */
int kgb_cli_cmd_show_manifest(int argc, char **argv, kgb_cli_global_t *g)
{
	bool no_sources = false;
	const kgb_cli_opt_t opts[] = {
		{ "no-sources", 0, KGB_CLI_OPT_FLAG, &no_sources, NULL,
		  "leave out the kernel sources (each shown as its size)" },
	};
	const kgb_cli_spec_t spec = {
		.name = "show-manifest",
		.usage = "ID [--no-sources]",
		.summary = "Print the manifest campaign ID was submitted with, as the coordinator\n"
		           "stored it: every plan and kernel source inline. It can be submitted again\n"
		           "as it is (kgb rerun does that for you).",
		KGB_CLI_OPTS(opts),
	};
	uint64_t id = 0;
	char *mj = NULL;

	int rc = kgb_cli_parse_id_cmd(&spec, argc, argv, g, &id);
	if (rc >= 0)
		return rc;
	rc = kgb_cli_fetch_manifest(g, "show-manifest", id, &mj, NULL);
	if (rc != 0)
		return rc;
	json_error_t je;
	json_t *m = json_loads(mj, 0, &je);
	free(mj);
	if (!m) {
		fprintf(stderr, "kgb show-manifest: campaign %llu: the stored manifest is not JSON: %s\n",
		        (unsigned long long)id, je.text);
		return KGB_CLI_EXIT_REFUSED;
	}
	if (no_sources) {
		size_t i, k;
		json_t *me, *cd;
		json_array_foreach(json_object_get(m, "methods"), i, me)
		{
			json_array_foreach(json_object_get(me, "candidates"), k, cd)
			{
				const char *name;
				json_t *src;
				json_object_foreach(json_object_get(cd, "sources"), name, src)
				{
					json_t *in = json_object_get(src, "inline");
					size_t len = json_is_string(in) ? json_string_length(in) : 0;
					json_object_set_new(src, "inline", json_sprintf("(%zu bytes)", len));
				}
			}
		}
	}
	kgb_cli_json_print(stdout, m);
	return KGB_CLI_OK;
}
