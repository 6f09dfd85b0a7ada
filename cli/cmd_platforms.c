/* kgb platforms: the platforms jobs are matched on, with their devices and queues. */
#include "cli.h"
#include "client.h"
#include "output.h"
#include "util.h"

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

static json_t *platforms_json(const Kgb__PlatformsReply *pr)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < pr->n_platforms; i++) {
		const Kgb__PlatformInfo *p = pr->platforms[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(p->name ? p->name : ""));
		json_object_set_new(o, "backend", json_string(p->backend ? p->backend : ""));
		json_object_set_new(o, "device_name", json_string(p->device_name ? p->device_name : ""));
		json_object_set_new(o, "arch", json_string(p->arch ? p->arch : ""));
		json_object_set_new(o, "devices", json_integer(p->devices));
		json_object_set_new(o, "live_devices", json_integer(p->live_devices));
		json_object_set_new(o, "queued_jobs", json_integer(p->queued_jobs));
		json_object_set_new(o, "running_jobs", json_integer(p->running_jobs));
		json_array_append_new(arr, o);
	}
	json_t *root = json_object();
	json_object_set_new(root, "platforms", arr);
	return root;
}

/* kgb platforms [--json]. */
int kgb_cli_cmd_platforms(int argc, char **argv, kgb_cli_global_t *g)
{
	bool json = false;
	const kgb_cli_opt_t opts[] = {
		{ "json", 0, KGB_CLI_OPT_FLAG, &json, NULL, "print the platforms as JSON" },
	};
	const kgb_cli_spec_t spec = {
		.name = "platforms",
		.usage = "[--json]",
		.summary = "List the platforms (backend:device) the coordinator has seen: backend,\n"
		           "device name, architecture, devices (live / known), queued and running jobs.",
		.opts = opts,
		.nopts = KGB_ARRAY_LEN(opts),
	};
	char *pos[1];
	int npos = 0;
	Kgb__Envelope *reply = NULL;

	int rc = kgb_cli_parse_cmd(&spec, argc, argv, g, pos, &npos);
	if (rc != 0)
		return rc == KGB_CLI_HELP ? KGB_CLI_OK : KGB_CLI_EXIT_USAGE;
	Kgb__PlatformsRequest req = KGB__PLATFORMS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_PLATFORMS;
	env.platforms = &req;
	rc = kgb_cli_request(g, "platforms", &env, KGB__ENVELOPE__BODY_PLATFORMS_REPLY, &reply);
	if (rc != 0)
		return rc;
	const Kgb__PlatformsReply *pr = reply->platforms_reply;
	if (json) {
		kgb_cli_json_print(stdout, platforms_json(pr));
	} else if (pr->n_platforms == 0) {
		printf("no platforms (start a kgb-worker)\n");
	} else {
		static const char *const hdr[] = { "PLATFORM", "BACKEND", "DEVICE", "ARCH", "DEVICES",
			                               "QUEUED", "RUNNING" };
		kgb_cli_table_t *t = kgb_cli_table_new(7, hdr, "llllrrr");
		for (size_t i = 0; i < pr->n_platforms; i++) {
			const Kgb__PlatformInfo *p = pr->platforms[i];
			kgb_cli_table_cell(t, "%s", str_or(p->name, "?"));
			kgb_cli_table_cell(t, "%s", str_or(p->backend, "-"));
			kgb_cli_table_cell(t, "%s", str_or(p->device_name, "-"));
			kgb_cli_table_cell(t, "%s", str_or(p->arch, "-"));
			kgb_cli_table_cell(t, "%u/%u live", p->live_devices, p->devices);
			kgb_cli_table_cell(t, "%u", p->queued_jobs);
			kgb_cli_table_cell(t, "%u", p->running_jobs);
		}
		kgb_cli_table_print(t, stdout);
		kgb_cli_table_destroy(&t);
	}
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}
