/* kgb cancel ID: cancel a campaign's remaining jobs. */
#include "cli.h"
#include "client.h"
#include "util.h"

/* kgb cancel ID. */
int kgb_cli_cmd_cancel(int argc, char **argv, kgb_cli_global_t *g)
{
	const kgb_cli_spec_t spec = {
		.name = "cancel",
		.usage = "ID",
		.summary = "Cancel a campaign: its queued jobs are dropped and its running jobs are\n"
		           "stopped on the workers. Results already recorded are kept.",
		.min_pos = 1,
		.max_pos = 1,
	};
	char *pos[1];
	int npos = 0;
	char err[256];
	uint64_t id = 0;
	Kgb__Envelope *reply = NULL;

	int rc = kgb_cli_parse_cmd(&spec, argc, argv, g, pos, &npos);
	if (rc != 0)
		return rc == KGB_CLI_HELP ? KGB_CLI_OK : KGB_CLI_EXIT_USAGE;
	if (kgb_cli_parse_id(pos[0], &id, err, sizeof err) < 0) {
		fprintf(stderr, "kgb cancel: %s\n", err);
		return KGB_CLI_EXIT_USAGE;
	}
	Kgb__CancelRequest req = KGB__CANCEL_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	req.campaign_id = id;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL;
	env.cancel = &req;
	rc = kgb_cli_request(g, "cancel", &env, KGB__ENVELOPE__BODY_CANCEL_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__CancelReply *cr = reply->cancel_reply;
	if (!cr->ok) {
		fprintf(stderr, "kgb cancel: campaign %llu: %s\n", (unsigned long long)id,
		        cr->error && *cr->error ? cr->error : "refused (no reason given)");
		rc = KGB_CLI_EXIT_REFUSED;
	} else {
		printf("campaign %llu cancelled: %u jobs cancelled\n", (unsigned long long)id, cr->jobs_cancelled);
	}
	kgb_wire_free(reply);
	return rc;
}
