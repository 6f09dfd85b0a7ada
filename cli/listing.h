/* The shape the listing commands share (kgb platforms, kgb workers): one --json flag,
 * one request to the coordinator, then the reply as JSON or as a table. */
#ifndef KGB_CLI_LISTING_H
#define KGB_CLI_LISTING_H

#include <stdbool.h>
#include <jansson.h>

#include "cli.h"
#include "client.h"
#include "output.h"

typedef struct kgb_cli_listing {
	const char *name;                  /* the command, "platforms" */
	const char *summary;               /* its --help text */
	const char *json_help;             /* what --json prints */
	Kgb__Envelope__BodyCase request;   /* env's body, set by the caller */
	Kgb__Envelope__BodyCase reply;     /* the body the reply must have */
} kgb_cli_listing_t;

/* Parse the command line (only --json), send env (its body member set by the caller)
 * and wait for the reply. Returns KGB_CLI_OK with *reply set, or with *reply NULL
 * after --help; otherwise a CLI exit code. */
int kgb_cli_listing_fetch(const kgb_cli_listing_t *L, int argc, char **argv, kgb_cli_global_t *g,
                          Kgb__Envelope *env, bool *json, Kgb__Envelope **reply);

/* {"<key>": arr}: the JSON document of a listing. */
json_t *kgb_cli_listing_json(const char *key, json_t *arr);

/* Print and destroy the table. */
void kgb_cli_listing_table(kgb_cli_table_t *t);

/* s, or dflt when s is NULL or empty. */
const char *kgb_cli_str_or(const char *s, const char *dflt);

#endif
