/* kgb tables: the benchmark's tables over a selection of campaigns (docs/tables.md).
 * Every figure comes from the store's table functions (migration 0009a); this file
 * only makes the operator set from the catalog, selects from those functions into one
 * JSON document and adds its provenance (versions, campaigns, seeds, platforms). */
#include "coord.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "log.h"
#include "util.h"

typedef struct tables_ctx {
	kgb_coord_t *c;
	kgb_zpeer_t peer;
	uint64_t seq;
	char *ids;        /* "{1,2}": the campaigns, a bigint[] literal */
	char *set;        /* "campaigns" or a dataset name */
	char *reference;  /* "" or a platform name */
	char *opset;      /* the operator set, [{"op", "source"}] */
} tables_ctx_t;

static void ctx_free(tables_ctx_t *x)
{
	free(x->ids);
	free(x->set);
	free(x->reference);
	free(x->opset);
	free(x);
}

/* Reply and free x: json (ok) or error. */
static void finish(tables_ctx_t *x, const char *json, const char *error)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__TablesReply tr = KGB__TABLES_REPLY__INIT;
	tr.ok = error == NULL;
	tr.error = (char *)(error ? error : "");
	tr.json = (char *)(json ? json : "");
	env.seq = x->seq;
	env.body_case = KGB__ENVELOPE__BODY_TABLES_REPLY;
	env.tables_reply = &tr;
	if (error)
		log_info("cli peer=%s: tables %s: %s", kgb_zpeer_str(&x->peer), x->ids, error);
	if (x->c->csock && kgb_zsock_send(x->c->csock, &x->peer, &env) != 0)
		log_warn("cli peer=%s: TablesReply not delivered: %s", kgb_zpeer_str(&x->peer), strerror(errno));
	ctx_free(x);
}

static void tables_cb(PGresult *res, const char *err, void *arg)
{
	tables_ctx_t *x = arg;
	if (err) {
		finish(x, NULL, err);
		return;
	}
	json_error_t je;
	json_t *doc = json_loads(PQgetvalue(res, 0, 0), 0, &je);
	if (!doc) {
		finish(x, NULL, "the store's tables are not JSON");
		return;
	}
	/* a reference platform the campaigns never ran on is a typo */
	if (*x->reference) {
		bool known = false;
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(doc, "platforms"), i, p)
			known |= strcmp(json_string_value(json_object_get(p, "name")), x->reference) == 0;
		if (!known) {
			char msg[512];
			snprintf(msg, sizeof msg, "--reference %s: the campaigns ran on no such platform", x->reference);
			json_decref(doc);
			finish(x, NULL, msg);
			return;
		}
	}
	json_object_set_new(doc, "kgb_version", json_string(KGB_VERSION));
	json_object_set_new(doc, "catalog_version", json_string(kgb_catalog_version()));
	json_object_set_new(doc, "set", json_string(x->set));
	json_object_set_new(doc, "reference", *x->reference ? json_string(x->reference) : json_null());
	char *s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(doc);
	finish(x, s, NULL);
	free(s);
}

/* The tables and their provenance, one JSON object. Seeds are shown as kgb results
 * shows them: a secret seed only once its campaign has ended. */
static void tables_query(tables_ctx_t *x)
{
	const char *p[3] = {x->ids, x->opset, x->reference};
	kgb_db_query(
		x->c->db, KGB_DB_RETRY, tables_cb, x,
		"SELECT json_build_object("
		"'operators', (SELECT json_agg(x ORDER BY x->>'op') FROM jsonb_array_elements($2::jsonb) x), "
		"'campaigns', (SELECT json_agg(json_build_object('id', k.id, 'name', k.name, 'state', k.state, "
		"'baseline', k.baseline, 'partial', k.partial, 'seed_kind', k.seed_kind, 'seed', CASE WHEN k.seed_kind <> 'secret' "
		"OR k.state IN ('done', 'cancelled') THEN k.seed::text END, 'created_at', k.created_at, "
		"'finished_at', k.finished_at) ORDER BY k.id) FROM campaigns k WHERE k.id = ANY ($1::bigint[])), "
		"'platforms', (SELECT json_agg(json_build_object('name', p.name, 'backend', p.backend, 'device_name', "
		"p.device_name, 'arch', p.arch, 'devices', (SELECT json_agg(DISTINCT jsonb_build_object('name', d.name, "
		"'arch', d.arch, 'driver_version', d.driver_version, 'memory_bytes', d.memory_bytes, 'compute_units', "
		"d.compute_units, 'l2_bytes', d.l2_bytes)) FROM devices d WHERE d.platform_id = p.id)) ORDER BY p.name) "
		"FROM platforms p WHERE p.id IN (SELECT platform_id FROM jobs WHERE campaign_id = ANY ($1::bigint[]))), "
		"'summary', (SELECT json_agg(t) FROM kgb_table_summary($1::bigint[], $2::jsonb) t), "
		"'pass_at_k', (SELECT json_agg(t) FROM kgb_table_pass_at_k($1::bigint[], $2::jsonb) t), "
		"'matched', (SELECT json_agg(t) FROM kgb_table_matched($1::bigint[], $2::jsonb) t), "
		"'cross_chip', (SELECT json_agg(t) FROM kgb_table_cross_chip($1::bigint[], $2::jsonb, $3) t "
		"WHERE $3 <> ''), "
		"'lost', (SELECT json_agg(t) FROM kgb_table_lost($1::bigint[], $2::jsonb, $3) t WHERE $3 <> ''), "
		"'operator_rows', (SELECT json_agg(t) FROM kgb_table_ops($1::bigint[], $2::jsonb) t))::text",
		3, p);
}

static json_t *op_entry(const kgb_op_t *op)
{
	return json_pack("{s:s,s:s}", "op", op->name, "source", op->source ? op->source : "");
}

/* First query: which campaigns exist and their operators; then the operator set. */
static void ops_cb(PGresult *res, const char *err, void *arg)
{
	tables_ctx_t *x = arg;
	if (err) {
		finish(x, NULL, err);
		return;
	}
	char msg[256];
	if (!PQgetisnull(res, 0, 0)) {
		snprintf(msg, sizeof msg, "no campaign %s", PQgetvalue(res, 0, 0));
		finish(x, NULL, msg);
		return;
	}
	json_t *set = json_array();
	unsigned mask = 0;
	if (strcmp(x->set, "campaigns") == 0) {
		/* the campaigns' own operators, as text[] "{add,silu}" */
		json_error_t je;
		json_t *ops = json_loads(PQgetvalue(res, 0, 1), 0, &je);
		size_t i;
		json_t *o;
		json_array_foreach(ops, i, o) {
			const kgb_op_t *op = kgb_catalog_find(json_string_value(o));
			if (op)
				json_array_append_new(set, op_entry(op));
		}
		json_decref(ops);
	} else if (kgb_dataset_parse(x->set, &mask) == 0) {
		for (size_t i = 0; i < kgb_catalog_count(); i++)
			if (kgb_catalog_at(i)->datasets & mask)
				json_array_append_new(set, op_entry(kgb_catalog_at(i)));
	}
	if (json_array_size(set) == 0) {
		json_decref(set);
		snprintf(msg, sizeof msg, "--set %s: no operators (campaigns, ms, mc, aten, vllm, cublas, nocublas, demo, all)",
		         x->set);
		finish(x, NULL, msg);
		return;
	}
	x->opset = json_dumps(set, JSON_COMPACT);
	json_decref(set);
	tables_query(x);
}

void kgb_coord_on_tables(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	const Kgb__TablesRequest *q = env->tables;
	tables_ctx_t *x = kgb_xcalloc(1, sizeof *x);
	x->c = c;
	x->peer = *peer;
	x->seq = env->seq;
	kgb_sbuf_t b = {0};
	kgb_sbuf_addc(&b, '{');
	for (size_t i = 0; i < q->n_campaign_ids; i++) {
		if (i)
			kgb_sbuf_addc(&b, ',');
		kgb_sbuf_u64(&b, q->campaign_ids[i]);
	}
	kgb_sbuf_addc(&b, '}');
	x->ids = kgb_sbuf_take(&b);
	x->set = kgb_coord_utf8(q->set && *q->set ? q->set : "campaigns");
	x->reference = kgb_coord_utf8(q->reference);
	if (q->n_campaign_ids == 0) {
		finish(x, NULL, "no campaign named");
		return;
	}
	const char *p[1] = {x->ids};
	kgb_db_query(c->db, KGB_DB_RETRY, ops_cb, x,
	             "SELECT (SELECT min(i)::text FROM unnest($1::bigint[]) i WHERE i NOT IN (SELECT id FROM campaigns)), "
	             "(SELECT coalesce(json_agg(DISTINCT op), '[]')::text FROM candidates "
	             "WHERE campaign_id = ANY ($1::bigint[]))",
	             1, p);
}
