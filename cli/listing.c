/* See listing.h. */
#include <stdio.h>

#include "listing.h"
#include "util.h"

int kgb_cli_listing_fetch(const kgb_cli_listing_t *L, int argc, char **argv, kgb_cli_global_t *g,
                          Kgb__Envelope *env, bool *json, Kgb__Envelope **reply)
{
	*json = false;
	*reply = NULL;
	const kgb_cli_opt_t opts[] = {
		{ "json", 0, KGB_CLI_OPT_FLAG, json, NULL, L->json_help },
	};
	const kgb_cli_spec_t spec = {
		.name = L->name,
		.usage = "[--json]",
		.summary = L->summary,
		KGB_CLI_OPTS(opts),
	};
	int rc = kgb_cli_parse_args(&spec, argc, argv, g, NULL, NULL, NULL, 0);
	if (rc >= 0)
		return rc;
	env->body_case = L->request;
	return kgb_cli_request(g, L->name, env, L->reply, reply);
}

json_t *kgb_cli_listing_json(const char *key, json_t *arr)
{
	json_t *root = json_object();
	json_object_set_new(root, key, arr);
	return root;
}

void kgb_cli_listing_table(kgb_cli_table_t *t)
{
	kgb_cli_table_print(t, stdout);
	kgb_cli_table_destroy(&t);
}

const char *kgb_cli_str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}
