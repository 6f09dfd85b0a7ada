/* kgb platforms: the platforms jobs are matched on, with their devices and queues. */
#include "listing.h"

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
		json_object_set_new(o, "retired", json_boolean(p->retired));
		json_object_set_new(o, "queued_jobs", json_integer(p->queued_jobs));
		json_object_set_new(o, "running_jobs", json_integer(p->running_jobs));
		json_array_append_new(arr, o);
	}
	return kgb_cli_listing_json("platforms", arr);
}

/* kgb platforms [--json]. */
int kgb_cli_cmd_platforms(int argc, char **argv, kgb_cli_global_t *g)
{
	static const kgb_cli_listing_t listing = {
		.name = "platforms",
		.summary = "List the platforms (backend:device) the coordinator has seen: backend,\n"
		           "device name, architecture, devices (live / known), queued and running jobs.",
		.json_help = "print the platforms as JSON",
		.request = KGB__ENVELOPE__BODY_PLATFORMS,
		.reply = KGB__ENVELOPE__BODY_PLATFORMS_REPLY,
	};
	Kgb__PlatformsRequest req = KGB__PLATFORMS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT, *reply = NULL;
	bool json;
	env.platforms = &req;
	int rc = kgb_cli_listing_fetch(&listing, argc, argv, g, &env, &json, &reply);
	if (rc != KGB_CLI_OK || !reply)
		return rc;
	const Kgb__PlatformsReply *pr = reply->platforms_reply;
	if (json) {
		kgb_cli_json_print(stdout, platforms_json(pr));
	} else if (pr->n_platforms == 0) {
		printf("no platforms (start a kgb-worker)\n");
	} else {
		static const char *const hdr[] = { "PLATFORM", "BACKEND", "DEVICE", "ARCH", "DEVICES",
			                               "QUEUED", "RUNNING" };
		kgb_cli_table_t *t = kgb_cli_table_new(7, hdr, "ldddrrr");
		for (size_t i = 0; i < pr->n_platforms; i++) {
			const Kgb__PlatformInfo *p = pr->platforms[i];
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(p->name, "?"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(p->backend, "-"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(p->device_name, "-"));
			kgb_cli_table_cell(t, "%s", kgb_cli_str_or(p->arch, "-"));
			kgb_cli_table_cell(t, "%u/%u live", p->live_devices, p->devices);
			kgb_cli_table_cell(t, "%u", p->queued_jobs);
			kgb_cli_table_cell(t, "%u", p->running_jobs);
		}
		kgb_cli_listing_table(t);
		for (size_t i = 0; i < pr->n_platforms; i++)
			if (pr->platforms[i]->retired)
				printf("%s: retired: campaigns for every platform leave it out until a worker registers it "
				       "again\n",
				       kgb_cli_str_or(pr->platforms[i]->name, "?"));
	}
	kgb_wire_free(reply);
	return KGB_CLI_OK;
}
