/* kgb submit FILE: validate a campaign manifest and hand it to the coordinator. */
#include <string.h>

#include "cli.h"
#include "client.h"
#include "manifest.h"
#include "output.h"
#include "util.h"

int kgb_cli_submit_manifest(kgb_cli_global_t *g, const char *cmd, const struct kgb_manifest *m, const char *origin,
                            bool wait_plat, uint64_t *id, uint32_t *jobs)
{
	Kgb__Envelope *reply = NULL;
	double keep = g->timeout_s;
	if (!g->timeout_given)
		g->timeout_s = KGB_CLI_SUBMIT_TIMEOUT_S;
	char *mjson = kgb_manifest_to_json(m);
	KGB_ASSERT(mjson != NULL);

	Kgb__SubmitRequest req = KGB__SUBMIT_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	req.manifest_json = mjson;
	req.origin = (char *)origin;
	req.wait_for_platforms = wait_plat;
	req.owner = (char *)kgb_cli_user();
	env.body_case = KGB__ENVELOPE__BODY_SUBMIT;
	env.submit = &req;
	int rc = kgb_cli_request(g, cmd, &env, KGB__ENVELOPE__BODY_SUBMIT_REPLY, &reply);
	g->timeout_s = keep;
	free(mjson);
	if (rc != 0)
		return rc;
	const Kgb__SubmitReply *sr = reply->submit_reply;
	if (!sr || !sr->ok) {
		fprintf(stderr, "kgb %s: coordinator refused %s: %s\n", cmd, origin,
		        sr && sr->error && *sr->error ? sr->error : "(no reason given)");
		kgb_wire_free(reply);
		return KGB_CLI_EXIT_REFUSED;
	}
	for (size_t i = 0; i < sr->n_notes; i++)
		fprintf(stderr, "kgb %s: %s\n", cmd, sr->notes[i]);
	*id = sr->campaign_id;
	*jobs = sr->jobs;
	kgb_wire_free(reply);
	return 0;
}

/* kgb submit FILE [--watch] [--json]. */
int kgb_cli_cmd_submit(int argc, char **argv, kgb_cli_global_t *g)
{
	bool watch = false, json = false, outside = false, wait_plat = false;
	double interval = 1.0;
	const kgb_cli_opt_t opts[] = {
		{ "watch", 'w', KGB_CLI_OPT_FLAG, &watch, NULL, "then follow the campaign like `kgb status --watch`" },
		{ "interval", 0, KGB_CLI_OPT_DOUBLE, &interval, "S", "seconds between updates with --watch (default 1)" },
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the campaign id and job count as JSON" },
		{ "allow-outside-sources", 0, KGB_CLI_OPT_FLAG, &outside, NULL,
		  "let plan and source files resolve outside the manifest's directory" },
		{ "wait-for-platforms", 0, KGB_CLI_OPT_FLAG, &wait_plat, NULL,
		  "queue for named platforms no worker has offered yet (else they are refused as typos)" },
	};
	const kgb_cli_spec_t spec = {
		.name = "submit",
		.usage = "FILE [--watch] [--json] [--allow-outside-sources] [--wait-for-platforms]",
		.summary = "Validate a campaign manifest (plans and sources are read relative to the\n"
		           "manifest's directory and must lie under it, URLs are fetched), then submit\n"
		           "it to the coordinator and print the campaign id. Nothing is sent when the\n"
		           "manifest is invalid.",
		KGB_CLI_OPTS(opts),
		.min_pos = 1,
		.max_pos = 1,
	};
	char *pos[1];
	int npos = 0;
	char err[1024];
	kgb_manifest_t *m = NULL;
	int rc;

	rc = kgb_cli_parse_args(&spec, argc, argv, g, pos, &npos, NULL, 0);
	if (rc >= 0)
		return rc;
	if (interval <= 0) {
		fprintf(stderr, "kgb submit: option --interval: must be greater than 0\n");
		return KGB_CLI_EXIT_USAGE;
	}
	if (kgb_cli_load_manifest(pos[0], outside ? KGB_MANIFEST_ALLOW_OUTSIDE : 0, &m, err, sizeof err) < 0) {
		fprintf(stderr, "kgb submit: %s\n", err);
		rc = KGB_CLI_EXIT_USAGE;
		goto out;
	}
	uint64_t cid = 0;
	uint32_t njobs = 0;
	rc = kgb_cli_submit_manifest(g, "submit", m, pos[0], wait_plat, &cid, &njobs);
	if (rc != 0)
		goto out;
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "campaign_id", json_integer((json_int_t)cid));
		json_object_set_new(j, "jobs", json_integer(njobs));
		json_object_set_new(j, "name", json_string(m->name ? m->name : ""));
		json_object_set_new(j, "candidates", json_integer((json_int_t)m->ncandidates));
		kgb_cli_json_print(stdout, j);
	} else {
		printf("campaign %llu submitted: %u jobs\n", (unsigned long long)cid, njobs);
	}
	fflush(stdout);
	if (watch) {
		if (!g->timeout_given)
			g->timeout_s = KGB_CLI_DEFAULT_TIMEOUT_S;
		rc = kgb_cli_status_watch(g, cid, interval);
	}
out:
	kgb_manifest_destroy(&m);
	return rc;
}
