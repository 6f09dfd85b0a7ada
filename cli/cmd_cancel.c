/* kgb cancel ID [--platform P] and kgb drain ID: end a campaign's jobs. */
#include <string.h>

#include "cli.h"
#include "client.h"
#include "util.h"

/* Send the CancelRequest and print the outcome. */
static int cancel(kgb_cli_global_t *g, const char *cmd, uint64_t id, const char *platform, bool drain)
{
	Kgb__CancelRequest req = KGB__CANCEL_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__Envelope *reply = NULL;
	req.campaign_id = id;
	req.platform = (char *)(platform ? platform : "");
	req.drain = drain;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL;
	env.cancel = &req;
	int rc = kgb_cli_request(g, cmd, &env, KGB__ENVELOPE__BODY_CANCEL_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__CancelReply *cr = reply->cancel_reply;
	if (!cr->ok) {
		fprintf(stderr, "kgb %s: campaign %llu: %s\n", cmd, (unsigned long long)id,
		        cr->error && *cr->error ? cr->error : "refused (no reason given)");
		rc = KGB_CLI_EXIT_REFUSED;
	} else if (!platform && !drain) {
		printf("campaign %llu cancelled: %u jobs cancelled\n", (unsigned long long)id, cr->jobs_cancelled);
	} else {
		printf("campaign %llu: %u jobs cancelled on", (unsigned long long)id, cr->jobs_cancelled);
		for (size_t i = 0; i < cr->n_platforms; i++)
			printf("%s %s", i ? "," : "", cr->platforms[i]);
		if (cr->campaign_state && *cr->campaign_state)
			printf("; the campaign %s\n",
			       strcmp(cr->campaign_state, "done") == 0 ? "is done (results so far are kept)" : "goes on");
		else
			printf("\n");
	}
	kgb_wire_free(reply);
	return rc;
}

/* kgb cancel ID [--platform P]. */
int kgb_cli_cmd_cancel(int argc, char **argv, kgb_cli_global_t *g)
{
	const char *platform = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "platform", 'p', KGB_CLI_OPT_STRING, &platform, "P",
		  "only the jobs on platform P; the campaign goes on elsewhere and is done when nothing is left" },
	};
	const kgb_cli_spec_t spec = {
		.name = "cancel",
		.usage = "ID [--platform P]",
		.summary = "Cancel a campaign: its queued jobs are dropped and its running jobs are\n"
		           "stopped on the workers. Results already recorded are kept. With --platform,\n"
		           "only that platform's jobs end (they stay cancelled if a worker for it\n"
		           "returns), and the campaign is done when nothing else is left.",
		KGB_CLI_OPTS(opts),
	};
	uint64_t id = 0;
	int rc = kgb_cli_parse_id_cmd(&spec, argc, argv, g, &id);
	if (rc >= 0)
		return rc;
	if (platform && !*platform) {
		fprintf(stderr, "kgb cancel: --platform: empty platform name\n");
		return KGB_CLI_EXIT_USAGE;
	}
	return cancel(g, "cancel", id, platform, false);
}

/* kgb drain ID. */
int kgb_cli_cmd_drain(int argc, char **argv, kgb_cli_global_t *g)
{
	const kgb_cli_spec_t spec = {
		.name = "drain",
		.usage = "ID",
		.summary = "End a campaign's jobs that wait on platforms no live worker offers (for\n"
		           "\"platforms\": \"all\" campaigns whose worker has gone). Its other jobs go on,\n"
		           "and the campaign is done when nothing is left; recorded results are kept.",
	};
	uint64_t id = 0;

	int rc = kgb_cli_parse_id_cmd(&spec, argc, argv, g, &id);
	if (rc >= 0)
		return rc;
	return cancel(g, "drain", id, NULL, true);
}
