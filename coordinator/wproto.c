/* The worker socket: Register, Heartbeat and JobResult in; RegisterAck,
 * HeartbeatAck, JobAssign, ResultAck, CancelJobs and ErrorReply out. */
#include "coord.h"
#include "leader.h"
#include "rcheck.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "log.h"
#include "util.h"
#include "validate.h"

static int send_env(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env, const char *what,
                    const char *wid)
{
	if (!c->wsock)
		return -1;
	if (kgb_zsock_send(c->wsock, peer, env) != 0) {
		int e = errno;
		log_warn("worker=%s peer=%s: %s not delivered: %s", wid ? wid : "-", kgb_zpeer_str(peer), what,
		         strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

static void unreachable_cb(PGresult *res, const char *err, void *arg)
{
	uint64_t *a = arg;
	kgb_coord_t *c = (kgb_coord_t *)(uintptr_t)a[0];
	kgb_cjob_t *j = kgb_coord_job(c, a[1]);
	free(a);
	if (!j || j->st != KGB_JOB_SETTLING)
		return;
	if (err || PQntuples(res) == 0) {
		kgb_coord_job_resync(c, j);
		return;
	}
	if (strcmp(PQgetvalue(res, 0, 0), "failed") == 0)
		kgb_coord_job_finish(c, j);
	else
		kgb_coord_job_requeue(c, j, 0);
}

static void send_error_reply(kgb_zsock_t *zs, const kgb_zpeer_t *peer, uint64_t seq, const char *reason,
                             bool not_active)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__ErrorReply er = KGB__ERROR_REPLY__INIT;
	er.reason = (char *)reason;
	er.not_active = not_active;
	env.seq = seq;
	env.body_case = KGB__ENVELOPE__BODY_ERROR;
	env.error = &er;
	if (kgb_zsock_send(zs, peer, &env) != 0)
		log_debug("peer=%s: ErrorReply not delivered: %s", kgb_zpeer_str(peer), strerror(errno));
}

void kgb_coord_send_error(kgb_zsock_t *zs, const kgb_zpeer_t *peer, uint64_t seq, const char *reason)
{
	send_error_reply(zs, peer, seq, reason, false);
}

void kgb_coord_send_not_active(kgb_coord_t *c, kgb_zsock_t *zs, const kgb_zpeer_t *peer, uint64_t seq)
{
	send_error_reply(zs, peer, seq, kgb_leader_not_active(c->leader), true);
}

void kgb_coord_refuse_type(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const Kgb__Envelope *env, const char *sock,
                           const char *log_prefix)
{
	char msg[128];
	snprintf(msg, sizeof msg, "message type %d is not accepted on the %s socket", (int)env->body_case, sock);
	log_warn("%speer=%s: %s", log_prefix, kgb_zpeer_str(peer), msg);
	kgb_coord_send_error(zs, peer, env->seq, msg);
}

Kgb__Envelope *kgb_coord_envelope_in(kgb_coord_t *c, kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data,
                                     size_t len, bool layout_bad, const kgb_coord_sockdesc_t *s)
{
	if (c->stopping)
		return NULL;
	if (layout_bad) {
		log_warn("%speer=%s%s: rejected message: expected frames %s", s->pre, kgb_zpeer_str(peer), s->post,
		         s->frames);
		kgb_coord_send_error(zs, peer, 0, "expected one envelope frame after the identity");
		return NULL;
	}
	char err[256];
	Kgb__Envelope *env = kgb_wire_unpack(data, len, s->max_frame, err, sizeof err);
	if (!env) {
		log_warn("%speer=%s%s: rejected frame of %zu bytes: %s", s->pre, kgb_zpeer_str(peer), s->post, len, err);
		kgb_coord_send_error(zs, peer, 0, err);
		return NULL;
	}
	if (!c->ready) {
		kgb_coord_send_not_active(c, zs, peer, env->seq);
		kgb_wire_free(env);
		return NULL;
	}
	return env;
}

/* ---- Register ---- */

typedef struct reg_ctx {
	kgb_coord_t *c;
	kgb_zpeer_t peer;
	Kgb__Envelope *env;    /* owned: the Register message */
	char *devs_json;       /* owned: the devices, for the store */
	bool same_session;     /* the store's record of the name has this Register's session */
} reg_ctx_t;

static void reg_ctx_free(reg_ctx_t *r)
{
	kgb_wire_free(r->env);
	free(r->devs_json);
	free(r);
}

static bool session_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen > 0 && alen == blen && memcmp(a, b, alen) == 0;
}

static void reply_register(kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq, bool ok, const char *wid,
                           const char *error)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__RegisterAck ack = KGB__REGISTER_ACK__INIT;
	ack.ok = ok;
	ack.worker_id = (char *)(wid ? wid : "");
	ack.heartbeat_ms = c->cfg.heartbeat_ms;
	ack.lease_ms = c->cfg.lease_ms;
	ack.error = (char *)(error ? error : "");
	env.seq = seq;
	env.body_case = KGB__ENVELOPE__BODY_REGISTER_ACK;
	env.register_ack = &ack;
	send_env(c, peer, &env, "RegisterAck", wid);
}

static Kgb__Device *device_copy(const Kgb__Device *d)
{
	size_t n = kgb__device__get_packed_size(d);
	uint8_t *buf = kgb_xmalloc(n ? n : 1);
	kgb__device__pack(d, buf);
	Kgb__Device *r = kgb__device__unpack(NULL, n, buf);
	free(buf);
	KGB_ASSERT(r != NULL);
	return r;
}

static char *device_platform(const Kgb__Device *d)
{
	if (d->platform && d->platform[0])
		return kgb_xstrdup(d->platform);
	return kgb_coord_platform_name(d->backend && d->backend[0] ? d->backend : "unknown", d->name ? d->name : "");
}

static void register_cb(PGresult *res, const char *err, void *arg)
{
	reg_ctx_t *r = arg;
	kgb_coord_t *c = r->c;
	Kgb__Register *reg = r->env->register_;
	if (err || PQntuples(res) == 0) {
		log_error("peer=%s name=%s: registration failed in the store: %s", kgb_zpeer_str(&r->peer),
		          reg->worker_name, err ? err : "no row");
		reply_register(c, &r->peer, r->env->seq, false, NULL, "the coordinator's store rejected the registration");
		goto out;
	}
	uint64_t db_id = kgb_coord_pq_u64(PQgetvalue(res, 0, 0));
	/* platforms (new ones expand the campaigns that target them) */
	kgb_cplat_t **fresh = NULL;
	size_t nfresh = 0;
	for (int i = 0; i < PQntuples(res); i++) {
		if (PQgetisnull(res, i, 1))
			continue;
		int pid = atoi(PQgetvalue(res, i, 1));
		bool known = kgb_coord_plat(c, pid) != NULL;
		kgb_cplat_t *p = kgb_coord_plat_add(c, pid, PQgetvalue(res, i, 2), PQgetvalue(res, i, 3),
		                                    PQgetvalue(res, i, 4), PQgetvalue(res, i, 5));
		if (p->retired) { /* kgb platform retire, undone by a worker that offers it */
			log_info("platform=%s no longer retired: worker %s registered it again", p->name, reg->worker_name);
			p->retired = false;
			known = false;
		}
		if (!known) {
			fresh = kgb_xrealloc(fresh, (nfresh + 1) * sizeof *fresh);
			fresh[nfresh++] = p;
		}
	}
	kgb_cworker_t *w = kgb_coord_worker(c, db_id);
	bool same;
	if (!w) {
		w = kgb_xcalloc(1, sizeof *w);
		w->db_id = db_id;
		w->gen = 1; /* lease_gen 0 stays "not known yet" */
		snprintf(w->wid, sizeof w->wid, "w-%" PRIu64, db_id);
		c->workers = kgb_xrealloc(c->workers, (c->nworkers + 1) * sizeof *c->workers);
		c->workers[c->nworkers++] = w;
		same = r->same_session; /* first sight since start: the store knows */
	} else {
		same = session_eq(w->session, w->session_len, reg->session.data, reg->session.len);
	}
	if (!same) {
		/* another process under this name: what the previous one held is not its */
		w->gen++;
		w->session_len = KGB_MIN(reg->session.len, sizeof w->session);
		memcpy(w->session, reg->session.data, w->session_len);
	}
	if (!kgb_zpeer_same(&w->peer, &r->peer) && w->peer.idlen)
		log_info("worker=%s now on connection %s (%s)%s", w->wid, kgb_zpeer_str(&r->peer),
		         kgb_zpeer_where(&r->peer), same ? "" : ", a new process");
	free(w->name);
	free(w->hostname);
	free(w->version);
	free(w->python_note);
	w->name = kgb_xstrdup(reg->worker_name);
	w->hostname = kgb_xstrdup(reg->hostname);
	w->version = kgb_xstrdup(reg->worker_version);
	w->python = reg->python;
	w->python_note = kgb_xstrdup(reg->python_note ? reg->python_note : "");
	free(w->native_note);
	w->native = reg->native;
	w->native_known = reg->native_known;
	w->native_note = kgb_xstrdup(reg->native_note ? reg->native_note : "");
	w->drained = PQgetvalue(res, 0, 6)[0] == 't'; /* kgb worker drain, kept in the store */
	w->peer = r->peer;
	w->alive = true;
	w->draining = reg->draining;
	w->last_seen_ms = kgb_now_ms();
	for (size_t i = 0; i < w->ndevs; i++)
		kgb__device__free_unpacked(w->devs[i].info, NULL);
	free(w->devs);
	w->ndevs = reg->n_devices;
	w->devs = kgb_xcalloc(w->ndevs ? w->ndevs : 1, sizeof *w->devs);
	for (size_t i = 0; i < reg->n_devices; i++) {
		Kgb__Device *d = reg->devices[i];
		char *pn = device_platform(d);
		kgb_cdev_t *cd = &w->devs[i];
		cd->index = d->index;
		cd->plat = kgb_coord_plat_by_name(c, pn);
		cd->slots = d->slots ? d->slots : 1;
		cd->info = device_copy(d);
		free(cd->info->platform);
		cd->info->platform = pn;
	}
	/* slots held by jobs this worker had before (re-registration) */
	for (size_t i = 0; i < c->jcap; i++) {
		kgb_cjob_t *j = c->jmap[i];
		if (j && j->worker == w) {
			for (size_t k = 0; k < w->ndevs; k++)
				if (w->devs[k].index == j->dev)
					w->devs[k].running++;
		}
	}
	/* jobs it still runs (after a coordinator restart or a reconnect) keep their
	 * lease, when this is the process that was given them: a new process under the
	 * same name (another session) cannot claim its predecessor's leases */
	size_t kept = 0;
	if (same) /* leases loaded from the store at start: this process's */
		for (size_t i = 0; i < c->jcap; i++) {
			kgb_cjob_t *j = c->jmap[i];
			if (j && j->lease.worker == w->db_id && j->lease_gen == 0)
				j->lease_gen = w->gen;
		}
	/* jobs it held whose leases ran out meanwhile wait two heartbeats before another
	 * worker may take them: this process may still hold their results, which it
	 * resends now */
	size_t held = 0;
	for (size_t i = 0; i < c->jcap && same; i++) {
		kgb_cjob_t *j = c->jmap[i];
		if (j && j->st == KGB_JOB_QUEUED && j->lease.worker == w->db_id && j->lease_gen == w->gen) {
			kgb_coord_job_requeue(c, j, 2.0 * c->cfg.heartbeat_ms);
			held++;
		}
	}
	for (size_t i = 0; i < reg->n_running && same; i++) {
		Kgb__RunningJob *rj = reg->running[i];
		kgb_cjob_t *j = kgb_coord_job(c, rj->job_id);
		if (j && j->st == KGB_JOB_RUNNING && (j->lease_gen == 0 || j->lease_gen == w->gen) &&
		    kgb_lease_renew(&j->lease, rj->epoch, w->db_id, kgb_now_ms(), c->cfg.lease_ms)) {
			j->lease_gen = w->gen;
			kgb_coord_job_hold(j, w, rj->device_index);
			kept++;
		}
	}
	/* jobs it held that it does not list are not running there any more (a new
	 * process under the same name): shorten their leases to two heartbeats, which
	 * leaves time for a result the worker still had to deliver, then they go back */
	size_t dropped = 0;
	double soon = kgb_now_ms() + 2.0 * c->cfg.heartbeat_ms;
	for (size_t i = 0; i < c->jcap; i++) {
		kgb_cjob_t *j = c->jmap[i];
		if (!j || j->st != KGB_JOB_RUNNING || (j->worker != w && j->lease.worker != w->db_id))
			continue;
		bool listed = false;
		for (size_t k = 0; k < reg->n_running && !listed && same; k++)
			listed = reg->running[k]->job_id == j->id && reg->running[k]->epoch == j->lease.epoch;
		if (listed || j->lease.deadline_ms <= soon)
			continue;
		j->lease.deadline_ms = soon;
		log_info("job=%" PRIu64 " worker=%s: not listed when the worker registered again; lease shortened", j->id,
		         w->wid);
		dropped++;
	}
	log_info("worker=%s name=%s host=%s registered from %s: %zu devices, %zu running jobs kept, %zu not listed, "
	         "%zu whose lease ran out held back for its results; python candidates: %s (%s)",
	         w->wid, w->name, w->hostname, kgb_zpeer_where(&r->peer), w->ndevs, kept, dropped, held,
	         w->python ? "recorded" : "not recorded", w->python_note[0] ? w->python_note : "no reason given");
	reply_register(c, &r->peer, r->env->seq, true, w->wid, NULL);
	for (size_t i = 0; i < nfresh; i++)
		kgb_coord_platform_appeared(c, fresh[i]);
	free(fresh);
	kgb_coord_kick(c);
out:
	reg_ctx_free(r);
}

/* Replace a string field of an unpacked message by its UTF-8-clean copy. The field's
 * default (protobuf_c_empty_string) is not ours to free; the copy is freed with the
 * message. */
static void clean_field(char **f)
{
	char *clean = kgb_coord_utf8(*f);
	if (*f && *f != protobuf_c_empty_string)
		free(*f);
	*f = clean;
}

/* The upsert of the worker, its platforms and devices; register_cb takes it on. */
static void store_register(reg_ctx_t *r)
{
	kgb_coord_t *c = r->c;
	Kgb__Register *reg = r->env->register_;
	char *hex = kgb_xmalloc(2 * reg->session.len + 3);
	strcpy(hex, "\\x");
	for (size_t i = 0; i < reg->session.len; i++)
		snprintf(hex + 2 + 2 * i, 3, "%02x", reg->session.data[i]);
	const char *p[8] = {reg->worker_name, reg->hostname ? reg->hostname : "", reg->worker_version ? reg->worker_version : "",
	                    kgb_coord_u64(reg->pid), r->devs_json, hex, r->peer.key, r->peer.addr};
	kgb_db_query(
		c->db, KGB_DB_RETRY, register_cb, r,
		"WITH w AS (INSERT INTO workers (name, hostname, version, pid, state, registered_at, last_seen, session, "
		"curve_key, address) "
		"VALUES ($1, $2, $3, $4, 'alive', now(), now(), $6::bytea, $7, $8) "
		"ON CONFLICT (name, hostname) DO UPDATE SET version = EXCLUDED.version, pid = EXCLUDED.pid, "
		"state = 'alive', registered_at = now(), last_seen = now(), session = EXCLUDED.session, "
		"curve_key = CASE WHEN workers.curve_key = '' THEN EXCLUDED.curve_key ELSE workers.curve_key END, "
		"address = EXCLUDED.address RETURNING id, drained), "
		"d AS (SELECT * FROM jsonb_to_recordset($5::jsonb) AS x(idx int, platform text, backend text, name text, "
		"arch text, memory_bytes bigint, driver_version text, compute_units int, l2_bytes bigint, slots int)), "
		"p AS (INSERT INTO platforms (name, backend, device_name, arch) "
		"SELECT DISTINCT ON (platform) platform, backend, name, arch FROM d ORDER BY platform "
		"ON CONFLICT (name) DO UPDATE SET last_seen = now(), retired_at = NULL "
		"RETURNING id, name, backend, device_name, arch), "
		"del AS (DELETE FROM devices WHERE worker_id = (SELECT id FROM w) AND idx NOT IN (SELECT idx FROM d)), "
		"ins AS (INSERT INTO devices (worker_id, idx, platform_id, backend, name, arch, memory_bytes, "
		"driver_version, compute_units, l2_bytes, slots) "
		"SELECT (SELECT id FROM w), d.idx, p.id, d.backend, d.name, d.arch, d.memory_bytes, d.driver_version, "
		"d.compute_units, d.l2_bytes, d.slots FROM d JOIN p ON p.name = d.platform "
		"ON CONFLICT (worker_id, idx) DO UPDATE SET platform_id = EXCLUDED.platform_id, backend = EXCLUDED.backend, "
		"name = EXCLUDED.name, arch = EXCLUDED.arch, memory_bytes = EXCLUDED.memory_bytes, "
		"driver_version = EXCLUDED.driver_version, compute_units = EXCLUDED.compute_units, "
		"l2_bytes = EXCLUDED.l2_bytes, slots = EXCLUDED.slots, updated_at = now()) "
		"SELECT w.id, p.id, p.name, p.backend, p.device_name, p.arch, w.drained FROM w LEFT JOIN p ON true",
		8, p);
	free(hex);
}

/* What the store knows of the name decides: a name bound to a CURVE key is taken only
 * by that key; the same session is the same process coming back. */
static void identity_cb(PGresult *res, const char *err, void *arg)
{
	reg_ctx_t *r = arg;
	kgb_coord_t *c = r->c;
	Kgb__Register *reg = r->env->register_;
	if (err) {
		log_error("peer=%s name=%s: registration failed in the store: %s", kgb_zpeer_str(&r->peer),
		          reg->worker_name, err);
		reply_register(c, &r->peer, r->env->seq, false, NULL, "the coordinator's store rejected the registration");
		reg_ctx_free(r);
		return;
	}
	if (PQntuples(res) == 1) {
		const char *key = PQgetvalue(res, 0, 1);
		if (key[0] && strcmp(key, r->peer.key) != 0) {
			char msg[400];
			snprintf(msg, sizeof msg,
			         "worker name '%s' on host '%s' is bound to CURVE key %s; this connection presents %s: "
			         "start this worker under another --name",
			         reg->worker_name, reg->hostname, key, r->peer.key[0] ? r->peer.key : "no key");
			log_warn("peer=%s (%s): registration refused: %s", kgb_zpeer_str(&r->peer), kgb_zpeer_where(&r->peer),
			         msg);
			reply_register(c, &r->peer, r->env->seq, false, NULL, msg);
			reg_ctx_free(r);
			return;
		}
		if (!PQgetisnull(res, 0, 0)) {
			size_t n = 0;
			unsigned char *sess = PQunescapeBytea((const unsigned char *)PQgetvalue(res, 0, 0), &n);
			r->same_session = sess && session_eq(sess, n, reg->session.data, reg->session.len);
			PQfreemem(sess);
		}
	}
	store_register(r);
}

static void on_register(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__Register *reg = env->register_;
	const char *want = kgb_catalog_version();
	if (!reg->catalog_version || strcmp(reg->catalog_version, want) != 0) {
		char msg[512];
		snprintf(msg, sizeof msg,
		         "catalog version mismatch: worker has '%s', coordinator has '%s'; run workers built "
		         "from the same kgb release as the coordinator",
		         reg->catalog_version ? reg->catalog_version : "", want);
		log_warn("peer=%s name=%s host=%s: registration refused: %s", kgb_zpeer_str(peer), reg->worker_name,
		         reg->hostname, msg);
		reply_register(c, peer, env->seq, false, NULL, msg);
		kgb_wire_free(env);
		return;
	}
	if (!reg->worker_name || !reg->worker_name[0]) {
		reply_register(c, peer, env->seq, false, NULL, "Register.worker_name is empty");
		kgb_wire_free(env);
		return;
	}
	/* the store only takes valid UTF-8: clean every string the worker sent */
	char **fields[] = {&reg->worker_name, &reg->hostname, &reg->worker_version, &reg->python_note,
	                   &reg->native_note};
	for (size_t i = 0; i < KGB_ARRAY_LEN(fields); i++)
		clean_field(fields[i]);
	for (size_t i = 0; i < reg->n_devices; i++) {
		Kgb__Device *d = reg->devices[i];
		char **df[] = {&d->backend, &d->name, &d->arch, &d->driver_version, &d->platform};
		for (size_t k = 0; k < KGB_ARRAY_LEN(df); k++)
			clean_field(df[k]);
	}
	if (reg->session.len == 0 || reg->session.len > 32) {
		char msg[128];
		snprintf(msg, sizeof msg, "Register.session has %zu bytes; 1 to 32 expected (worker too old?)",
		         reg->session.len);
		log_warn("peer=%s (%s) name=%s: registration refused: %s", kgb_zpeer_str(peer), kgb_zpeer_where(peer),
		         reg->worker_name, msg);
		reply_register(c, peer, env->seq, false, NULL, msg);
		kgb_wire_free(env);
		return;
	}
	json_t *devs = json_array();
	for (size_t i = 0; i < reg->n_devices; i++) {
		Kgb__Device *d = reg->devices[i];
		char *pn = device_platform(d);
		json_array_append_new(
			devs, json_pack("{s:i,s:s,s:s,s:s,s:s,s:I,s:s,s:i,s:I,s:i}", "idx", (int)d->index, "platform", pn,
		                    "backend", d->backend ? d->backend : "", "name", d->name ? d->name : "", "arch",
		                    d->arch ? d->arch : "", "memory_bytes", (json_int_t)d->memory_bytes, "driver_version",
		                    d->driver_version ? d->driver_version : "", "compute_units", (int)d->compute_units,
		                    "l2_bytes", (json_int_t)d->l2_bytes, "slots", (int)(d->slots ? d->slots : 1)));
		free(pn);
	}
	reg_ctx_t *r = kgb_xcalloc(1, sizeof *r);
	r->c = c;
	r->peer = *peer;
	r->env = env;
	r->devs_json = json_dumps(devs, JSON_COMPACT);
	json_decref(devs);
	/* first what the store knows of the name: its process (session) and its key */
	const char *p[2] = {reg->worker_name, reg->hostname ? reg->hostname : ""};
	kgb_db_query(c->db, KGB_DB_RETRY, identity_cb, r,
	             "SELECT session, curve_key, address FROM workers WHERE name = $1 AND hostname = $2", 2, p);
}

/* ---- Heartbeat ---- */

static uint64_t parse_wid(const char *wid)
{
	if (!wid || strncmp(wid, "w-", 2) != 0)
		return 0;
	char *end;
	uint64_t v = strtoull(wid + 2, &end, 10);
	return *end ? 0 : v;
}

static void on_heartbeat(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__Heartbeat *hb = env->heartbeat;
	Kgb__Envelope out = KGB__ENVELOPE__INIT;
	Kgb__HeartbeatAck ack = KGB__HEARTBEAT_ACK__INIT;
	out.seq = env->seq;
	out.body_case = KGB__ENVELOPE__BODY_HEARTBEAT_ACK;
	out.heartbeat_ack = &ack;
	kgb_cworker_t *w = kgb_coord_worker(c, parse_wid(hb->worker_id));
	if (!w || !kgb_zpeer_same(&w->peer, peer)) {
		if (!w)
			log_info("worker=%s peer=%s (%s): heartbeat from an unknown worker; asking it to register",
			         hb->worker_id, kgb_zpeer_str(peer), kgb_zpeer_where(peer));
		else
			log_warn("worker=%s: heartbeat refused: it came from connection %s (%s), not from the one the "
			         "worker registered on (%s); nothing renewed, asking the sender to register",
			         w->wid, kgb_zpeer_str(peer), kgb_zpeer_where(peer), kgb_zpeer_where(&w->peer));
		ack.known = false;
		send_env(c, peer, &out, "HeartbeatAck", hb->worker_id);
		return;
	}
	double now = kgb_now_ms();
	if (!w->alive)
		log_info("worker=%s is back", w->wid);
	w->alive = true;
	w->last_seen_ms = now;
	/* the devices' load, as the worker counts it: kept for `kgb workers` */
	size_t nl = KGB_MIN(hb->n_load, (size_t)64);
	w->load = kgb_xrealloc(w->load, (nl + 1) * sizeof *w->load);
	w->load_ph = kgb_xrealloc(w->load_ph, (nl + 1) * sizeof *w->load_ph);
	w->nload = nl;
	for (size_t i = 0; i < nl; i++) {
		kgb__device_load__init(&w->load[i]);
		w->load[i].device_index = hb->load[i]->device_index;
		w->load[i].device_ms = hb->load[i]->device_ms;
		w->load[i].active_ms = hb->load[i]->active_ms;
		w->load[i].window_busy = hb->load[i]->window_busy;
		w->load[i].nvml_util = hb->load[i]->nvml_util;
		w->load[i].occupied_ms = hb->load[i]->occupied_ms;
		w->load[i].window_occupied = hb->load[i]->window_occupied;
		w->load[i].nvml_ms = hb->load[i]->nvml_ms;
		w->load[i].window_nvml = hb->load[i]->window_nvml;
		w->load[i].jobs = hb->load[i]->jobs;
		const Kgb__JobPhases *p = hb->load[i]->phases;
		if (p) {
			kgb__job_phases__init(&w->load_ph[i]);
			kgb_phases_add(&w->load_ph[i], p);
			w->load[i].phases = &w->load_ph[i];
		}
	}
	uint64_t *cancel = kgb_xcalloc(hb->n_running + 1, sizeof *cancel);
	size_t ncancel = 0;
	for (size_t i = 0; i < hb->n_running; i++) {
		Kgb__RunningJob *rj = hb->running[i];
		kgb_cjob_t *j = kgb_coord_job(c, rj->job_id);
		if (j && j->st == KGB_JOB_RUNNING && j->lease_gen == w->gen &&
		    kgb_lease_renew(&j->lease, rj->epoch, w->db_id, now, c->cfg.lease_ms)) {
			kgb_coord_job_hold(j, w, rj->device_index);
			continue;
		}
		if (j && (j->st == KGB_JOB_ASSIGNING || j->st == KGB_JOB_SETTLING) && j->worker == w)
			continue;
		log_info("job=%" PRIu64 " worker=%s epoch %" PRIu64 " is not its lease any more; cancelling",
		         rj->job_id, w->wid, rj->epoch);
		cancel[ncancel++] = rj->job_id;
	}
	ack.known = true;
	ack.n_cancel_job_ids = ncancel;
	ack.cancel_job_ids = cancel;
	send_env(c, peer, &out, "HeartbeatAck", w->wid);
	free(cancel);
	kgb_coord_kick(c);
}

/* ---- JobResult ---- */

typedef struct res_ctx {
	kgb_coord_t *c;
	kgb_zpeer_t peer;
	uint64_t job_id, epoch, seq;
	char wid[32];
	bool infra;
	char *refused;         /* the result was refused as senseless (rcheck.h): why */
} res_ctx_t;

static void send_result_ack(kgb_coord_t *c, const kgb_zpeer_t *to, res_ctx_t *r, bool accepted, const char *reason,
                            bool register_again)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__ResultAck ack = KGB__RESULT_ACK__INIT;
	ack.job_id = r->job_id;
	ack.epoch = r->epoch;
	ack.accepted = accepted;
	ack.reason = (char *)(reason ? reason : "");
	ack.register_again = register_again;
	env.seq = r->seq;
	env.body_case = KGB__ENVELOPE__BODY_RESULT_ACK;
	env.result_ack = &ack;
	send_env(c, to, &env, "ResultAck", r->wid);
}

static void reply_result(kgb_coord_t *c, res_ctx_t *r, bool accepted, const char *reason)
{
	kgb_cworker_t *w = kgb_coord_worker(c, parse_wid(r->wid));
	/* to the connection the result came from, while it is still the worker's */
	send_result_ack(c, w && !kgb_zpeer_same(&w->peer, &r->peer) ? &w->peer : &r->peer, r, accepted, reason, false);
}

/* What the store said about one result of a batch (or err for all of them). */
static void result_outcome(kgb_coord_t *c, res_ctx_t *r, const char *err, const char *state, uint64_t cur_epoch,
                           bool updated, int inserted, bool same_worker)
{
	kgb_cjob_t *j = kgb_coord_job(c, r->job_id);
	if (err) {
		log_error("job=%" PRIu64 " worker=%s: storing the result failed: %s", r->job_id, r->wid, err);
		reply_result(c, r, false, "the coordinator could not store the result; it will be re-run");
		if (j && j->st == KGB_JOB_SETTLING)
			kgb_coord_job_resync(c, j);
		return;
	}
	char reason[256];
	if (updated) {
		log_debug("job=%" PRIu64 " worker=%s campaign=%" PRIu64 " done: %d case results recorded", r->job_id,
		          r->wid, j ? j->camp->id : 0, inserted);
		c->counters.results_recorded += (uint64_t)(inserted > 0 ? inserted : 0);
		reply_result(c, r, true, NULL);
		if (j)
			kgb_coord_job_finish(c, j);
	} else if (state && strcmp(state, "done") == 0 && cur_epoch == r->epoch && !same_worker) {
		/* recorded at this epoch, but from the holder: not this sender's to repeat */
		snprintf(reason, sizeof reason,
		         "result for job %" PRIu64 " epoch %" PRIu64 " refused: worker %s does not hold its lease", r->job_id,
		         r->epoch, r->wid);
		log_warn("job=%" PRIu64 " worker=%s: %s", r->job_id, r->wid, reason);
		reply_result(c, r, false, reason);
	} else if (state && strcmp(state, "done") == 0 && cur_epoch == r->epoch) {
		log_info("job=%" PRIu64 " worker=%s: duplicate result for epoch %" PRIu64 " ignored", r->job_id, r->wid,
		         r->epoch);
		reply_result(c, r, true, "duplicate: this result was already recorded");
	} else {
		if (!state)
			snprintf(reason, sizeof reason, "job %" PRIu64 " does not exist", r->job_id);
		else
			snprintf(reason, sizeof reason,
			         "stale: job %" PRIu64 " is %s at epoch %" PRIu64 ", this result is for epoch %" PRIu64,
			         r->job_id, state, cur_epoch, r->epoch);
		log_warn("job=%" PRIu64 " worker=%s: result rejected: %s", r->job_id, r->wid, reason);
		reply_result(c, r, false, reason);
		if (j && j->st == KGB_JOB_SETTLING)
			kgb_coord_job_resync(c, j);
	}
}

/* Results gather into one statement while it waits for the store (db.h,
 * kgb_db_defer): the jobs' columns and their cases' columns as array literals, one
 * element per result and per case. A job appears at most once in a statement (a
 * second result for it starts the next one), so each result's outcome is its own. */
enum { RJ_ID, RJ_EPOCH, RJ_WID, RJ_OK, RJ_COMPILE, RJ_DEVICE, RJ_WALL, RJ_LOG, RJ_N };
enum {
	RX_JOB, RX_CASE, RX_VERDICT, RX_ABS, RX_REL, RX_TIMED, RX_MEDIAN, RX_MIN, RX_P10, RX_P90, RX_MEAN, RX_STDEV,
	RX_SAMPLES, RX_RSE, RX_THROTTLED, RX_TSAMPLES, RX_SMCLK, RX_TEMP, RX_TMETHOD, RX_MESSAGE, RX_LABEL, RX_N
};

typedef struct kgb_rbatch {
	kgb_coord_t *c;
	const void *h;         /* the deferred statement, until built */
	res_ctx_t **v;
	size_t n, cap, ncases;
	kgb_sbuf_t jcol[RJ_N], xcol[RX_N];
	uint64_t *ids;         /* job ids in it (open addressing; 0 = free) */
	size_t idcap;
} kgb_rbatch_t;

static const char result_batch_sql[] =
	"WITH i AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bool[], $5::float8[], "
	"$6::float8[], $7::float8[], $8::text[]) "
	"AS i(id, epoch, wid, ok, compile_ms, device_ms, wall_ms, log)), "
	"j AS (SELECT jobs.id, jobs.state, jobs.epoch, jobs.worker_id IS NOT DISTINCT FROM i.wid AS same "
	"FROM i JOIN jobs ON jobs.id = i.id), "
	"u AS (UPDATE jobs SET state = 'done', finished_at = now(), compile_ms = i.compile_ms, "
	"device_ms = i.device_ms, wall_ms = i.wall_ms, log = i.log FROM i "
	"WHERE jobs.id = i.id AND jobs.epoch = i.epoch AND jobs.worker_id = i.wid AND i.ok "
	"AND jobs.state IN ('running', 'queued') "
	"RETURNING jobs.id, jobs.epoch, jobs.case_lo, jobs.case_hi, i.wid), "
	"x AS (SELECT * FROM unnest($9::bigint[], $10::bigint[], $11::text[], $12::float8[], $13::float8[], "
	"$14::bool[], $15::float8[], $16::float8[], $17::float8[], $18::float8[], $19::float8[], $20::float8[], "
	"$21::bigint[], $22::float8[], $23::bool[], $24::bigint[], $25::float8[], $26::float8[], $27::text[], "
	"$28::text[], $29::text[]) AS x(job, case_index, verdict, max_abs_err, max_rel_err, timed, median_ns, "
	"min_ns, p10_ns, p90_ns, mean_ns, stdev_ns, samples, rse, throttled, throttled_samples, sm_clock_mhz, "
	"temperature_c, timing_method, message, label)), "
	"r AS (INSERT INTO results (job_id, case_index, verdict, max_abs_err, max_rel_err, timed, median_ns, "
	"min_ns, p10_ns, p90_ns, mean_ns, stdev_ns, samples, rse, throttled, throttled_samples, sm_clock_mhz, "
	"temperature_c, timing_method, message, label, epoch, worker_id) "
	"SELECT u.id, x.case_index::int, x.verdict, x.max_abs_err, x.max_rel_err, x.timed, x.median_ns, x.min_ns, "
	"x.p10_ns, x.p90_ns, x.mean_ns, x.stdev_ns, LEAST(x.samples, 2147483647)::int, x.rse, x.throttled, "
	"LEAST(x.throttled_samples, 2147483647)::int, x.sm_clock_mhz, x.temperature_c, x.timing_method, "
	"x.message, x.label, u.epoch, u.wid "
	"FROM u JOIN x ON x.job = u.id AND x.case_index >= u.case_lo AND x.case_index < u.case_hi "
	"ON CONFLICT DO NOTHING RETURNING job_id), "
	"m AS (INSERT INTO results (job_id, case_index, verdict, message, epoch, worker_id) "
	"SELECT u.id, g, 'not_run', 'the worker reported no result for this case', u.epoch, u.wid "
	"FROM u, generate_series(u.case_lo, u.case_hi - 1) g "
	"WHERE NOT EXISTS (SELECT 1 FROM x WHERE x.job = u.id AND x.case_index = g) ON CONFLICT DO NOTHING) "
	/* rows of three kinds keyed by job id (unique in a statement), with no join
	 * between the CTEs: a generic plan guesses ten rows for each, and a nested loop
	 * over thousands would be quadratic */
	"SELECT 0, j.id, j.state, j.epoch, j.same FROM j "
	"UNION ALL SELECT 1, u.id, NULL, NULL, NULL FROM u "
	"UNION ALL SELECT 2, r.job_id, NULL, count(*), NULL FROM r GROUP BY r.job_id";

static size_t rb_slot(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

/* Add id to the batch's set; false if it is there already. */
static bool rb_add_id(kgb_rbatch_t *b, uint64_t id)
{
	if ((b->n + 1) * 2 > b->idcap) {
		size_t oldcap = b->idcap;
		uint64_t *old = b->ids;
		b->idcap = oldcap ? 2 * oldcap : 64;
		b->ids = kgb_xcalloc(b->idcap, sizeof *b->ids);
		for (size_t i = 0; i < oldcap; i++)
			if (old[i]) {
				size_t k = rb_slot(old[i], b->idcap);
				while (b->ids[k])
					k = (k + 1) & (b->idcap - 1);
				b->ids[k] = old[i];
			}
		free(old);
	}
	uint64_t key = id ? id : UINT64_MAX; /* 0 marks a free slot */
	size_t k = rb_slot(key, b->idcap);
	while (b->ids[k]) {
		if (b->ids[k] == key)
			return false;
		k = (k + 1) & (b->idcap - 1);
	}
	b->ids[k] = key;
	return true;
}

static void rb_free(kgb_rbatch_t *b, bool with_ctx)
{
	for (int k = 0; k < RJ_N; k++)
		free(b->jcol[k].s);
	for (int k = 0; k < RX_N; k++)
		free(b->xcol[k].s);
	if (with_ctx)
		for (size_t i = 0; i < b->n; i++)
			free(b->v[i]);
	free(b->v);
	free(b->ids);
	free(b);
}

void kgb_coord_rbatch_free(kgb_coord_t *c)
{
	if (c->rbatch) {
		rb_free(c->rbatch, true);
		c->rbatch = NULL;
	}
}

static void result_build(void *arg, kgb_db_stmt_t *out)
{
	kgb_rbatch_t *b = arg;
	kgb_coord_t *c = b->c;
	if (c->rbatch == b)
		c->rbatch = NULL;
	b->h = NULL;
	out->nparams = RJ_N + RX_N;
	out->values = kgb_xcalloc(RJ_N + RX_N, sizeof *out->values);
	for (int k = 0; k < RJ_N; k++) {
		kgb_sbuf_addc(&b->jcol[k], '}');
		out->values[k] = kgb_sbuf_take(&b->jcol[k]);
	}
	for (int k = 0; k < RX_N; k++) {
		if (b->ncases == 0)
			kgb_sbuf_addc(&b->xcol[k], '{');
		kgb_sbuf_addc(&b->xcol[k], '}');
		out->values[RJ_N + k] = kgb_sbuf_take(&b->xcol[k]);
	}
	c->result_stmts++;
	out->sql = result_batch_sql;
}

typedef struct rb_out {
	const char *state;     /* NULL: no such job */
	uint64_t epoch;
	bool same, updated;
	int inserted;
} rb_out_t;

/* The entry of job id in the batch (ids are unique in it), or -1. */
static long rb_index(const uint64_t *keys, const long *idx, size_t cap, uint64_t id)
{
	for (size_t k = rb_slot(id, cap); keys[k]; k = (k + 1) & (cap - 1))
		if (keys[k] == id)
			return idx[k];
	return -1;
}

static void result_cb(PGresult *res, const char *err, void *arg)
{
	kgb_rbatch_t *b = arg;
	kgb_coord_t *c = b->c;
	rb_out_t *o = kgb_xcalloc(b->n + 1, sizeof *o);
	if (!err) {
		size_t cap = 16;
		while (cap < 2 * b->n)
			cap *= 2;
		uint64_t *keys = kgb_xcalloc(cap, sizeof *keys);
		long *idx = kgb_xcalloc(cap, sizeof *idx);
		for (size_t i = 0; i < b->n; i++) {
			uint64_t key = b->v[i]->job_id ? b->v[i]->job_id : UINT64_MAX;
			size_t k = rb_slot(key, cap);
			while (keys[k])
				k = (k + 1) & (cap - 1);
			keys[k] = key;
			idx[k] = (long)i;
		}
		for (int r = 0; r < PQntuples(res); r++) {
			uint64_t id = kgb_coord_pq_u64(PQgetvalue(res, r, 1));
			long i = rb_index(keys, idx, cap, id ? id : UINT64_MAX);
			if (i < 0)
				continue;
			switch (atoi(PQgetvalue(res, r, 0))) {
			case 0:
				o[i].state = PQgetvalue(res, r, 2);
				o[i].epoch = kgb_coord_pq_u64(PQgetvalue(res, r, 3));
				o[i].same = PQgetvalue(res, r, 4)[0] == 't';
				break;
			case 1:
				o[i].updated = true;
				break;
			default:
				o[i].inserted = atoi(PQgetvalue(res, r, 3));
				break;
			}
		}
		free(keys);
		free(idx);
	}
	for (size_t i = 0; i < b->n; i++)
		result_outcome(c, b->v[i], err, o[i].state, o[i].epoch, o[i].updated, o[i].inserted, o[i].same);
	free(o);
	rb_free(b, true);
}

/* The batch the next result joins: the open one, unless it was built, something was
 * queued after it, or it holds this job already. */
static kgb_rbatch_t *rbatch_for(kgb_coord_t *c, uint64_t job_id)
{
	kgb_rbatch_t *b = c->rbatch;
	if (b && kgb_db_defer_open(c->db, b->h) && rb_add_id(b, job_id))
		return b;
	b = kgb_xcalloc(1, sizeof *b);
	b->c = c;
	for (int k = 0; k < RJ_N; k++)
		kgb_sbuf_addc(&b->jcol[k], '{');
	rb_add_id(b, job_id);
	c->rbatch = b;
	b->h = kgb_db_defer(c->db, KGB_DB_RETRY, result_build, result_cb, b);
	return b;
}

static void xsep(kgb_rbatch_t *b)
{
	for (int k = 0; k < RX_N; k++)
		kgb_sbuf_addc(&b->xcol[k], b->ncases ? ',' : '{');
}

static void xnull_or_f64(kgb_sbuf_t *s, bool have, double v)
{
	if (have)
		kgb_sbuf_f64(s, v);
	else
		kgb_sbuf_add(s, "NULL", 4);
}

static void infra_cb(PGresult *res, const char *err, void *arg)
{
	res_ctx_t *r = arg;
	kgb_coord_t *c = r->c;
	kgb_cjob_t *j = kgb_coord_job(c, r->job_id);
	char reason[256];
	if (err) {
		log_error("job=%" PRIu64 " worker=%s: requeue failed: %s", r->job_id, r->wid, err);
		reply_result(c, r, false, "the coordinator could not requeue the job");
		if (j && j->st == KGB_JOB_SETTLING)
			kgb_coord_job_resync(c, j);
	} else if (PQntuples(res) == 0) {
		snprintf(reason, sizeof reason, "stale: job %" PRIu64 " is not running under epoch %" PRIu64, r->job_id,
		         r->epoch);
		log_warn("job=%" PRIu64 " worker=%s: infra report rejected: %s", r->job_id, r->wid, reason);
		reply_result(c, r, false, reason);
		if (j && j->st == KGB_JOB_SETTLING)
			kgb_coord_job_resync(c, j);
	} else {
		const char *state = PQgetvalue(res, 0, 0);
		uint32_t attempts = (uint32_t)atoi(PQgetvalue(res, 0, 1));
		double delay = kgb_coord_pq_f64(PQgetvalue(res, 0, 2));
		if (strcmp(state, "failed") == 0) {
			snprintf(reason, sizeof reason, "%s: job failed after %u attempts",
			         r->refused ? "result refused" : "infrastructure error", attempts);
			log_warn("job=%" PRIu64 " worker=%s: %s", r->job_id, r->wid, reason);
			if (j)
				kgb_coord_job_finish(c, j);
		} else {
			snprintf(reason, sizeof reason, "%s: job requeued (attempt %u, backoff %.0f ms)",
			         r->refused ? "result refused" : "infrastructure error", attempts, delay);
			log_info("job=%" PRIu64 " worker=%s: %s", r->job_id, r->wid, reason);
			if (j) {
				j->attempts = attempts;
				kgb_coord_job_requeue(c, j, delay);
			}
		}
		reply_result(c, r, !r->refused, r->refused ? r->refused : reason);
	}
	free(r->refused);
	free(r);
}

/* A result that makes no sense (rcheck.h), or any result of a worker that sent one:
 * refused and logged with the worker's name; a job it runs goes back to the queue
 * for another worker, and it gets no more jobs. */
static void refuse_senseless(kgb_coord_t *c, kgb_cjob_t *j, kgb_cworker_t *w, res_ctx_t *r, const char *why,
                             bool running)
{
	w->results_refused++;
	w->untrusted = true;
	log_warn("job=%" PRIu64 " worker=%s name=%s: result refused: %s; the job goes to another worker and %s gets "
	         "no more jobs (%" PRIu32 " refused from it)",
	         r->job_id, w->wid, w->name, why, w->wid, w->results_refused);
	r->refused = kgb_xasprintf("result refused: %s", why);
	if (!running) {
		reply_result(c, r, false, r->refused);
		free(r->refused);
		free(r);
		return;
	}
	char *reason = kgb_xasprintf("result of worker %s (%s) refused: %s", w->wid, w->name, why);
	kgb_coord_requeue(c, j, reason, infra_cb, r);
	free(reason);
}

static void on_result(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__JobResult *jr = env->job_result;
	res_ctx_t *r = kgb_xcalloc(1, sizeof *r);
	r->c = c;
	r->peer = *peer;
	r->job_id = jr->job_id;
	r->epoch = jr->epoch;
	r->seq = env->seq;
	kgb_strlcpy(r->wid, jr->worker_id ? jr->worker_id : "", sizeof r->wid);
	kgb_cworker_t *w = kgb_coord_worker(c, parse_wid(jr->worker_id));
	/* a result is taken only from the connection its worker registered on: anyone
	 * else (a peer that never registered, another worker naming this one) is refused
	 * and logged. A genuine worker that reconnected is told to register again (same
	 * session: it keeps its leases) and then resends. */
	if (!w || !kgb_zpeer_same(&w->peer, peer)) {
		char reason[200];
		snprintf(reason, sizeof reason,
		         "result for job %" PRIu64 " refused: connection %s is not the one worker '%s' registered on; "
		         "register, then resend",
		         jr->job_id, kgb_zpeer_str(peer), r->wid);
		log_warn("job=%" PRIu64 " worker=%s: %s (from %s)", jr->job_id, r->wid, reason, kgb_zpeer_where(peer));
		send_result_ack(c, peer, r, false, reason, true);
		free(r);
		return;
	}
	w->last_seen_ms = kgb_now_ms();
	kgb_cjob_t *j = kgb_coord_job(c, jr->job_id);
	if (j && j->camp->state == KGB_CAMP_CANCELLED)
		j = NULL; /* a queued job of a cancelled campaign, not freed yet: not recordable */
	bool current = j && j->st == KGB_JOB_RUNNING && j->lease.epoch == jr->epoch;
	if (current && (j->lease.worker != w->db_id || j->lease_gen != w->gen)) {
		/* the job runs at this epoch, but under another worker's lease (or the lease of
		 * the process this name had before) */
		char reason[200];
		snprintf(reason, sizeof reason, "result for job %" PRIu64 " epoch %" PRIu64 " refused: worker %s does not "
		         "hold its lease", jr->job_id, jr->epoch, r->wid);
		log_warn("job=%" PRIu64 " worker=%s: %s (from %s; holder w-%" PRIu64 ")", jr->job_id, r->wid, reason,
		         kgb_zpeer_where(peer), j->lease.worker);
		reply_result(c, r, false, reason);
		free(r);
		return;
	}
	if (j && j->st == KGB_JOB_SETTLING && j->result_pending && j->lease.epoch == jr->epoch &&
	    j->worker == w && j->lease_gen == w->gen) {
		/* a copy resent while the first is on its way to the store: the ack of that
		 * one answers both, so this costs no statement */
		log_debug("job=%" PRIu64 " worker=%s: result resent while the first copy is being stored; dropped",
		          jr->job_id, r->wid);
		c->resends_dropped++;
		free(r);
		return;
	}
	if (jr->infra == KGB__VERDICT__VERDICT_INFRA_ERROR) {
		r->infra = true;
		if (!current) {
			char reason[200];
			snprintf(reason, sizeof reason, "stale: job %" PRIu64 " is not running under epoch %" PRIu64 " here",
			         jr->job_id, jr->epoch);
			log_warn("job=%" PRIu64 " worker=%s: infra report rejected: %s", r->job_id, r->wid, reason);
			reply_result(c, r, false, reason);
			free(r);
			return;
		}
		char *why = kgb_xasprintf("infra_error reported by worker %s: %.400s", r->wid,
		                          jr->log && jr->log[0] ? jr->log : "(no log)");
		kgb_coord_requeue(c, j, why, infra_cb, r);
		free(why);
		return;
	}
	/* the store records it only for the lease holder: while the job runs under this
	 * epoch, or when its lease ran out and nobody has taken it since (the same
	 * epoch, still queued, or being requeued: a late result is still the holder's; the
	 * store sees the requeue first and takes the result after it) */
	bool late = j &&
	            (j->st == KGB_JOB_QUEUED || j->st == KGB_JOB_DELAYED ||
	             (j->st == KGB_JOB_SETTLING && !j->result_pending)) && /* a requeue in flight */
	            j->lease.epoch == jr->epoch && j->lease.worker == w->db_id && j->lease_gen == w->gen;
	bool may_record = current || late;
	if (may_record) {
		char why[300] = "an earlier result of this worker was refused";
		kgb_rcheck_job_t rj = { .lo = j->lo, .hi = j->hi, .timing = j->camp->timing };
		if (w->untrusted || kgb_rcheck_result(jr, &rj, why, sizeof why) != 0) {
			refuse_senseless(c, j, w, r, why, current);
			return;
		}
	}
	if (current) {
		/* the slot stays taken until the result is durable (the worker's credit) */
		kgb_coord_job_settle_held(c, j);
		j->result_pending = true;
	}
	kgb_rbatch_t *b = rbatch_for(c, jr->job_id);
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->v = kgb_xrealloc(b->v, b->cap * sizeof *b->v);
	}
	if (b->n)
		for (int k = 0; k < RJ_N; k++)
			kgb_sbuf_addc(&b->jcol[k], ',');
	b->v[b->n++] = r;
	kgb_sbuf_u64(&b->jcol[RJ_ID], jr->job_id);
	kgb_sbuf_u64(&b->jcol[RJ_EPOCH], jr->epoch);
	kgb_sbuf_u64(&b->jcol[RJ_WID], w->db_id);
	kgb_sbuf_addc(&b->jcol[RJ_OK], may_record ? 't' : 'f');
	kgb_sbuf_f64(&b->jcol[RJ_COMPILE], jr->compile_ms);
	kgb_sbuf_f64(&b->jcol[RJ_DEVICE], jr->device_ms);
	kgb_sbuf_f64(&b->jcol[RJ_WALL], jr->wall_ms);
	/* bounded log text */
	char *logtxt = kgb_coord_utf8(jr->log);
	if (strlen(logtxt) > 65536) {
		size_t cut = 65536;
		while (cut > 0 && ((unsigned char)logtxt[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 sequence */
		logtxt[cut] = 0;
	}
	kgb_sbuf_arrtext(&b->jcol[RJ_LOG], logtxt);
	free(logtxt);
	if (!may_record)
		return; /* its cases are not written: the statement only reports the job's state */
	/* each case with its parameters from the coordinator's own catalog (the worker's
	 * is the same version), so a failure is named by shape, dtype, layout and mode */
	const char *op = j ? j->cand->op : NULL;
	for (size_t i = 0; i < jr->n_cases; i++) {
		Kgb__CaseResult *cr = jr->cases[i];
		const char *vn = kgb_verdict_name((int)cr->verdict);
		xsep(b);
		b->ncases++;
		kgb_sbuf_u64(&b->xcol[RX_JOB], jr->job_id);
		kgb_sbuf_u64(&b->xcol[RX_CASE], cr->case_index);
		kgb_sbuf_arrtext(&b->xcol[RX_VERDICT], vn ? vn : "unspecified");
		kgb_sbuf_f64(&b->xcol[RX_ABS], cr->max_abs_err);
		kgb_sbuf_f64(&b->xcol[RX_REL], cr->max_rel_err);
		kgb_sbuf_addc(&b->xcol[RX_TIMED], cr->timed ? 't' : 'f');
		if (cr->message && cr->message[0]) {
			char *msg = kgb_coord_utf8(cr->message);
			kgb_sbuf_arrtext(&b->xcol[RX_MESSAGE], msg);
			free(msg);
		} else {
			kgb_sbuf_add(&b->xcol[RX_MESSAGE], "\"\"", 2);
		}
		kgb_sbuf_arrtext(&b->xcol[RX_LABEL], kgb_coord_case_label(op, cr->case_index));
		Kgb__Timing *t = cr->timing;
		xnull_or_f64(&b->xcol[RX_MEDIAN], t, t ? t->median_ns : 0);
		xnull_or_f64(&b->xcol[RX_MIN], t, t ? t->min_ns : 0);
		xnull_or_f64(&b->xcol[RX_P10], t, t ? t->p10_ns : 0);
		xnull_or_f64(&b->xcol[RX_P90], t, t ? t->p90_ns : 0);
		xnull_or_f64(&b->xcol[RX_MEAN], t, t ? t->mean_ns : 0);
		xnull_or_f64(&b->xcol[RX_STDEV], t, t ? t->stdev_ns : 0);
		xnull_or_f64(&b->xcol[RX_RSE], t, t ? t->rse : 0);
		xnull_or_f64(&b->xcol[RX_SMCLK], t, t ? t->sm_clock_mhz : 0);
		xnull_or_f64(&b->xcol[RX_TEMP], t, t ? t->temperature_c : 0);
		if (t) {
			kgb_sbuf_u64(&b->xcol[RX_SAMPLES], t->samples);
			kgb_sbuf_addc(&b->xcol[RX_THROTTLED], t->throttled ? 't' : 'f');
			kgb_sbuf_u64(&b->xcol[RX_TSAMPLES], t->throttled_samples);
			char *tmeth = kgb_coord_utf8(t->method);
			kgb_sbuf_arrtext(&b->xcol[RX_TMETHOD], tmeth);
			free(tmeth);
		} else {
			kgb_sbuf_add(&b->xcol[RX_SAMPLES], "NULL", 4);
			kgb_sbuf_add(&b->xcol[RX_THROTTLED], "NULL", 4);
			kgb_sbuf_add(&b->xcol[RX_TSAMPLES], "NULL", 4);
			kgb_sbuf_add(&b->xcol[RX_TMETHOD], "NULL", 4);
		}
	}
}

/* ---- outgoing ---- */

static void oversize_cb(PGresult *res, const char *err, void *arg)
{
	uint64_t *a = arg;
	kgb_coord_t *c = (kgb_coord_t *)(uintptr_t)a[0];
	kgb_cjob_t *j = kgb_coord_job(c, a[1]);
	free(a);
	(void)res;
	if (!j || j->st != KGB_JOB_SETTLING)
		return;
	if (err) {
		log_error("job=%" PRIu64 ": recording the oversize candidate failed: %s", j->id, err);
		kgb_coord_job_resync(c, j);
		return;
	}
	kgb_coord_job_finish(c, j);
}

/* A job whose JobAssign would not fit a worker frame is the candidate's fault: every
 * case gets plan_error with the sizes, and no worker ever sees the frame (a frame
 * over the limit would cost the worker its connection). The manifest parser refuses
 * such candidates; this catches any that reach the store another way. */
static void fail_oversize(kgb_coord_t *c, kgb_cjob_t *j, size_t bytes)
{
	char *msg = kgb_xasprintf("the job's message would be %zu bytes (plan and sources of the candidate), over the "
	                          "%u-byte frame limit of the worker socket; candidates are limited to %u bytes",
	                          bytes, KGB_MAX_FRAME_WORKER, KGB_MAX_CANDIDATE_BYTES);
	log_error("job=%" PRIu64 " campaign=%" PRIu64 ": not sent: %s", j->id, j->camp->id, msg);
	uint64_t *a = kgb_xmalloc(2 * sizeof *a);
	a[0] = (uint64_t)(uintptr_t)c;
	a[1] = j->id;
	uint64_t epoch = j->lease.epoch;
	kgb_coord_job_settle(c, j);
	const char *p[3] = {kgb_coord_u64(j->id), kgb_coord_u64(epoch), msg};
	kgb_db_query(c->db, KGB_DB_RETRY, oversize_cb, a,
	             "WITH u AS (UPDATE jobs SET state = 'done', finished_at = now(), log = $3 "
	             "WHERE id = $1 AND epoch = $2 AND state = 'running' RETURNING id, epoch, case_lo, case_hi, worker_id) "
	             "INSERT INTO results (job_id, case_index, verdict, message, epoch, worker_id) "
	             "SELECT u.id, g, 'plan_error', $3, u.epoch, u.worker_id FROM u, generate_series(u.case_lo, u.case_hi - 1) g "
	             "ON CONFLICT DO NOTHING",
	             3, p);
	free(msg);
}

static void send_assign(kgb_coord_t *c, kgb_cjob_t *j, const kgb_ccache_t *cand)
{
	kgb_cworker_t *w = j->worker;
	if (!w || !w->alive) {
		log_warn("job=%" PRIu64 ": its worker became unreachable before JobAssign; requeued", j->id);
		uint64_t *a = kgb_xmalloc(2 * sizeof *a);
		a[0] = (uint64_t)(uintptr_t)c;
		a[1] = j->id;
		kgb_coord_requeue(c, j, "worker unreachable when the job was sent", unreachable_cb, a);
		return;
	}
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__JobAssign ja = KGB__JOB_ASSIGN__INIT;
	ja.job_id = j->id;
	ja.epoch = j->lease.epoch;
	ja.attempt = j->attempts;
	ja.device_index = j->dev;
	ja.op = j->cand->op;
	ja.n_cases = j->hi - j->lo;
	ja.cases = kgb_xcalloc(ja.n_cases + 1, sizeof *ja.cases);
	for (uint32_t i = 0; i < ja.n_cases; i++)
		ja.cases[i] = j->lo + i;
	if (j->camp->seed_legacy) {
		ja.seed = j->camp->seed; /* set B by the worker's old rule */
	} else {
		kgb_seeds_t sd = kgb_seeds_derive(j->camp->seed);
		ja.seed = sd.a;
		ja.seed_b = sd.b;
		ja.heldout_key = sd.heldout;
	}
	ja.plan_json = cand->plan_json;
	ja.time_limit_ms = j->camp->time_limit_ms;
	ja.timing_budget_ms = j->camp->timing_budget_ms;
	ja.candidate_id = j->cand->id;
	ja.method = j->cand->method;
	ja.campaign_id = j->camp->id;
	ja.timing = j->camp->timing;
	json_t *srcs = cand->sources;
	size_t ns = json_is_array(srcs) ? json_array_size(srcs) : 0;
	Kgb__SourceFile *sf = kgb_xcalloc(ns + 1, sizeof *sf);
	Kgb__SourceFile **sp = kgb_xcalloc(ns + 1, sizeof *sp);
	for (size_t i = 0; i < ns; i++) {
		json_t *o = json_array_get(srcs, i);
		kgb__source_file__init(&sf[i]);
		const char *name = json_string_value(json_object_get(o, "name"));
		json_t *content = json_object_get(o, "content");
		sf[i].name = (char *)(name ? name : "");
		sf[i].content.data = (uint8_t *)(json_string_value(content) ? json_string_value(content) : "");
		sf[i].content.len = json_string_value(content) ? json_string_length(content) : 0;
		sp[i] = &sf[i];
	}
	ja.n_sources = ns;
	ja.sources = sp;
	env.body_case = KGB__ENVELOPE__BODY_JOB_ASSIGN;
	env.job_assign = &ja;
	size_t bytes = kgb__envelope__get_packed_size(&env);
	if (bytes > KGB_MAX_FRAME_WORKER) {
		fail_oversize(c, j, bytes);
		goto out;
	}
	log_debug("job=%" PRIu64 " worker=%s campaign=%" PRIu64 " assigned: op=%s cases=[%u,%u) device=%u epoch=%" PRIu64
	         " attempt=%u",
	         j->id, w->wid, j->camp->id, j->cand->op, j->lo, j->hi, j->dev, ja.epoch, ja.attempt);
	if (send_env(c, &w->peer, &env, "JobAssign", w->wid) != 0 && errno == EHOSTUNREACH) {
		/* the peer is gone: stop scheduling on it until it is heard from again, and
		 * give the job back now rather than at lease expiry */
		log_warn("worker=%s is unreachable; marked not alive until it is heard from again", w->wid);
		w->alive = false;
		uint64_t *a = kgb_xmalloc(2 * sizeof *a);
		a[0] = (uint64_t)(uintptr_t)c;
		a[1] = j->id;
		kgb_coord_requeue(c, j, "worker unreachable when the job was sent", unreachable_cb, a);
	}
out:
	free(sf);
	free(sp);
	free(ja.cases);
}

static void send_cancel(kgb_coord_t *c, kgb_cworker_t *w, const uint64_t *ids, size_t n)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__CancelJobs cj = KGB__CANCEL_JOBS__INIT;
	cj.n_job_ids = n;
	cj.job_ids = (uint64_t *)ids;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL_JOBS;
	env.cancel_jobs = &cj;
	log_info("worker=%s: cancelling %zu running jobs", w->wid, n);
	send_env(c, &w->peer, &env, "CancelJobs", w->wid);
}

const kgb_coord_outbox_t kgb_wproto_outbox = {
	.assign = send_assign,
	.cancel = send_cancel,
	.release = kgb_coord_rbatch_free,
};

/* ---- WorkerDrain ---- */

/* A lease given back by a stopping worker: the job goes back to the queue at once,
 * without backoff, and the attempt it used is given back too (the job did not fail;
 * its worker stopped). $1 id, $2 epoch, $3 reason. */
static const char handback_sql[] =
	"UPDATE jobs SET state = 'queued', device_idx = NULL, not_before = NULL, "
	"attempts = GREATEST(attempts - 1, 0), last_error = $3 "
	"WHERE id = $1 AND epoch = $2 AND state = 'running' RETURNING attempts";

typedef struct drain_ctx {
	kgb_coord_t *c;
	kgb_zpeer_t peer;
	uint64_t seq;
	char wid[32];
	uint64_t *ids;     /* hand-backs settled, for the WorkerDrainAck */
	size_t nids;
	size_t pending;    /* statements not answered yet */
	bool leaving;      /* the worker exits: nobody to answer */
} drain_ctx_t;

typedef struct handback_arg {
	drain_ctx_t *d;
	uint64_t job_id;
} handback_arg_t;

/* Once every hand-back of the message is settled: one answer naming them all. */
static void drain_done(drain_ctx_t *d)
{
	if (d->pending > 0)
		return;
	if (d->nids > 0 && !d->leaving) {
		Kgb__Envelope out = KGB__ENVELOPE__INIT;
		Kgb__WorkerDrainAck ack = KGB__WORKER_DRAIN_ACK__INIT;
		ack.n_job_ids = d->nids;
		ack.job_ids = d->ids;
		out.seq = d->seq;
		out.body_case = KGB__ENVELOPE__BODY_WORKER_DRAIN_ACK;
		out.worker_drain_ack = &ack;
		send_env(d->c, &d->peer, &out, "WorkerDrainAck", d->wid);
	}
	free(d->ids);
	free(d);
}

static void handback_cb(PGresult *res, const char *err, void *arg)
{
	handback_arg_t *a = arg;
	drain_ctx_t *d = a->d;
	kgb_coord_t *c = d->c;
	kgb_cjob_t *j = kgb_coord_job(c, a->job_id);
	if (err) {
		/* not answered: the worker sends the hand-back again with its next heartbeat */
		log_error("job=%" PRIu64 " worker=%s: requeue of the handed-back lease failed: %s", a->job_id, d->wid, err);
		if (j && j->st == KGB_JOB_SETTLING)
			kgb_coord_job_resync(c, j);
	} else {
		d->ids[d->nids++] = a->job_id;
		if (PQntuples(res) == 0) {
			log_info("job=%" PRIu64 " worker=%s: handed-back lease was not running any more", a->job_id, d->wid);
			if (j && j->st == KGB_JOB_SETTLING)
				kgb_coord_job_resync(c, j);
		} else if (j && j->st == KGB_JOB_SETTLING) {
			j->attempts = (uint32_t)kgb_coord_pq_u64(PQgetvalue(res, 0, 0));
			log_info("job=%" PRIu64 " worker=%s campaign=%" PRIu64 ": lease handed back by the stopping worker; "
			         "requeued now (attempt not counted)",
			         j->id, d->wid, j->camp->id);
			kgb_coord_job_requeue(c, j, 0);
		}
	}
	free(a);
	d->pending--;
	drain_done(d);
}

static void on_drain(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	Kgb__WorkerDrain *dr = env->worker_drain;
	kgb_cworker_t *w = kgb_coord_worker(c, parse_wid(dr->worker_id));
	if (!w || !kgb_zpeer_same(&w->peer, peer)) {
		/* like a heartbeat from elsewhere: only the registered connection speaks for
		 * the worker; it registers (saying it drains) and sends this again */
		log_warn("worker=%s peer=%s (%s): WorkerDrain refused: not the connection the worker registered on",
		         dr->worker_id ? dr->worker_id : "-", kgb_zpeer_str(peer), kgb_zpeer_where(peer));
		kgb_coord_send_error(c->wsock, peer, env->seq, "WorkerDrain refused: register first");
		return;
	}
	w->last_seen_ms = kgb_now_ms();
	if (!w->draining)
		log_info("worker=%s name=%s is stopping: no more jobs for it; its running jobs get %" PRIu32
		         " ms, %zu lease(s) handed back now",
		         w->wid, w->name, dr->grace_ms, dr->n_handed_back);
	w->draining = true;
	drain_ctx_t *d = kgb_xcalloc(1, sizeof *d);
	d->c = c;
	d->peer = *peer;
	d->seq = env->seq;
	d->leaving = dr->leaving;
	kgb_strlcpy(d->wid, w->wid, sizeof d->wid);
	d->ids = kgb_xcalloc(dr->n_handed_back + 1, sizeof *d->ids);
	d->pending = 1; /* this function's own, so that no answer goes out before the loop ends */
	char reason[160];
	snprintf(reason, sizeof reason, "lease handed back by worker %s (%s): the worker stopped", w->wid, w->name);
	for (size_t i = 0; i < dr->n_handed_back; i++) {
		const Kgb__RunningJob *rj = dr->handed_back[i];
		kgb_cjob_t *j = kgb_coord_job(c, rj->job_id);
		if (j && j->st == KGB_JOB_SETTLING)
			continue; /* settling already (an earlier copy of this hand-back): answered later */
		if (!j || j->st != KGB_JOB_RUNNING || j->lease.epoch != rj->epoch || j->lease.worker != w->db_id ||
		    (j->lease_gen != w->gen && j->lease_gen != 0)) {
			d->ids[d->nids++] = rj->job_id; /* not its lease: nothing to give back */
			continue;
		}
		kgb_coord_job_settle(c, j);
		handback_arg_t *a = kgb_xcalloc(1, sizeof *a);
		a->d = d;
		a->job_id = j->id;
		d->pending++;
		const char *p[3] = {kgb_coord_u64(j->id), kgb_coord_u64(rj->epoch), reason};
		kgb_db_query(c->db, KGB_DB_RETRY, handback_cb, a, handback_sql, 3, p);
	}
	if (dr->leaving && w->alive) {
		w->alive = false;
		log_info("worker=%s name=%s stopped and left", w->wid, w->name);
		const char *p[1] = {kgb_coord_u64(w->db_id)};
		kgb_db_query(c->db, KGB_DB_RETRY, NULL, NULL, "UPDATE workers SET state = 'gone' WHERE id = $1", 1, p);
	}
	d->pending--;
	drain_done(d);
	kgb_coord_kick(c);
}

/* ---- dispatch ---- */

void kgb_coord_on_worker_msg(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data, size_t len,
                             bool layout_bad, void *arg)
{
	static const kgb_coord_sockdesc_t sock = { "", " on the worker socket", "[identity][envelope]",
		                                       KGB_MAX_FRAME_WORKER };
	kgb_coord_t *c = arg;
	Kgb__Envelope *env = kgb_coord_envelope_in(c, zs, peer, data, len, layout_bad, &sock);
	if (!env)
		return;
	switch (env->body_case) {
	case KGB__ENVELOPE__BODY_REGISTER:
		on_register(c, peer, env); /* takes env */
		return;
	case KGB__ENVELOPE__BODY_HEARTBEAT:
		on_heartbeat(c, peer, env);
		break;
	case KGB__ENVELOPE__BODY_JOB_RESULT:
		on_result(c, peer, env);
		break;
	case KGB__ENVELOPE__BODY_WORKER_DRAIN:
		on_drain(c, peer, env);
		break;
	default:
		kgb_coord_refuse_type(zs, peer, env, "worker", "");
		break;
	}
	kgb_wire_free(env);
}
