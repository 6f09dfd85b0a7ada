/* The ZAP handler on the libuv loop: see zap.h. */
#include "zap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"
#include "util.h"
#include "zsock.h"

#define MAX_DOMAINS 4
#define MAX_FRAMES 10
#define BATCH 64
#define RECENT 32
/* the same key refused again from the same address is logged at most this often */
#define REFUSAL_LOG_MS 30000.0

typedef struct zdom {
	char *domain, *path;
	kgb_curve_allow_t *list;
} zdom_t;

typedef struct refusal {
	char domain[16];
	char addr[64];
	uint8_t key[KGB_CURVE_KEY_BYTES];
	double logged_ms;
	uint64_t quiet;           /* refusals not logged since */
	bool used;
} refusal_t;

struct kgb_zap {
	uv_loop_t *loop;
	kgb_zwatch_t w;
	zdom_t dom[MAX_DOMAINS];
	size_t ndom;
	uint64_t accepted, refused;
	refusal_t recent[RECENT];
	size_t rnext;
	char user[128];
	char text[128];
};

static zdom_t *find_domain(kgb_zap_t *z, const char *domain)
{
	for (size_t i = 0; i < z->ndom; i++)
		if (strcmp(z->dom[i].domain, domain) == 0)
			return &z->dom[i];
	return NULL;
}

/* True when this refusal should be logged now; *quiet gets the number suppressed
 * since the last line about the same key and address. */
static bool refusal_should_log(kgb_zap_t *z, const char *domain, const char *addr, const uint8_t *key,
                               size_t keylen, uint64_t *quiet)
{
	uint8_t k[KGB_CURVE_KEY_BYTES] = { 0 };
	double now = kgb_now_ms();
	memcpy(k, key, KGB_MIN(keylen, sizeof k));
	*quiet = 0;
	for (size_t i = 0; i < RECENT; i++) {
		refusal_t *r = &z->recent[i];
		if (!r->used || strcmp(r->domain, domain) != 0 || strcmp(r->addr, addr) != 0 ||
		    memcmp(r->key, k, sizeof k) != 0)
			continue;
		if (now - r->logged_ms < REFUSAL_LOG_MS) {
			r->quiet++;
			return false;
		}
		*quiet = r->quiet;
		r->quiet = 0;
		r->logged_ms = now;
		return true;
	}
	refusal_t *r = &z->recent[z->rnext];
	z->rnext = (z->rnext + 1) % RECENT;
	memset(r, 0, sizeof *r);
	r->used = true;
	kgb_strlcpy(r->domain, domain, sizeof r->domain);
	kgb_strlcpy(r->addr, addr, sizeof r->addr);
	memcpy(r->key, k, sizeof k);
	r->logged_ms = now;
	return true;
}

static void refuse(kgb_zap_t *z, kgb_zap_reply_t *r, const char *domain, const char *addr, const uint8_t *key,
                   size_t keylen, const char *why)
{
	char z85[KGB_CURVE_Z85_LEN + 1] = "-";
	uint64_t quiet = 0;
	z->refused++;
	if (key && keylen == KGB_CURVE_KEY_BYTES && !zmq_z85_encode(z85, key, keylen))
		kgb_strlcpy(z85, "-", sizeof z85);
	if (refusal_should_log(z, domain, addr, key ? key : (const uint8_t *)"", key ? keylen : 0, &quiet)) {
		if (quiet)
			log_warn("curve: refused %s client at %s, key %s: %s (%" PRIu64 " more refusals of it not logged)",
			         domain, addr, z85, why, quiet);
		else
			log_warn("curve: refused %s client at %s, key %s: %s", domain, addr, z85, why);
	}
	r->status = "400";
	snprintf(z->text, sizeof z->text, "%s", why);
	r->text = z->text;
	r->user = "";
}

/* See zap.h. */
void kgb_zap_decide(kgb_zap_t *z, const char *domain, const char *address, const char *mechanism,
                    const uint8_t *key, size_t keylen, kgb_zap_reply_t *r)
{
	zdom_t *d = find_domain(z, domain);
	if (!d) {
		refuse(z, r, domain[0] ? domain : "(no domain)", address, NULL, 0, "unknown ZAP domain");
		return;
	}
	if (strcmp(mechanism, "CURVE") != 0) {
		refuse(z, r, domain, address, NULL, 0, "the CURVE mechanism is required");
		return;
	}
	if (keylen != KGB_CURVE_KEY_BYTES) {
		refuse(z, r, domain, address, NULL, 0, "malformed CURVE credentials");
		return;
	}
	const kgb_curve_entry_t *e = kgb_curve_allow_find(d->list, key, keylen);
	if (!e) {
		char why[160];
		snprintf(why, sizeof why, "key not in the allowlist %s", d->path);
		refuse(z, r, domain, address, key, keylen, why);
		return;
	}
	z->accepted++;
	snprintf(z->user, sizeof z->user, "%s", e->name[0] ? e->name : e->z85);
	log_debug("curve: accepted %s client at %s, key %s (%s)", domain, address, e->z85,
	          e->name[0] ? e->name : "unnamed");
	r->status = "200";
	r->text = "OK";
	r->user = z->user;
	r->admin = e->admin;
}

/* A frame as a NUL-terminated string (truncated to buflen - 1). */
static const char *frame_str(zmq_msg_t *m, char *buf, size_t buflen)
{
	size_t n = KGB_MIN(zmq_msg_size(m), buflen - 1);
	memcpy(buf, zmq_msg_data(m), n);
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return buf;
}

/* Receive and answer one request. Returns 1 when one was handled, 0 when none was
 * pending. */
static int handle_one(void *arg)
{
	kgb_zap_t *z = arg;
	zmq_msg_t fr[MAX_FRAMES];
	int n = 0;
	for (;;) {
		zmq_msg_t m;
		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, z->w.sock, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			if (n == 0)
				return 0;
			break;
		}
		int more = zmq_msg_more(&m);
		if (n < MAX_FRAMES)
			fr[n++] = m;
		else
			zmq_msg_close(&m);
		if (!more)
			break;
	}
	char version[16] = "", domain[64] = "", address[64] = "", mech[32] = "";
	kgb_zap_reply_t r = { "500", "malformed ZAP request", "" };
	if (n >= 1)
		frame_str(&fr[0], version, sizeof version);
	if (n < 6) {
		log_warn("curve: malformed ZAP request (%d frames)", n);
	} else if (strcmp(version, "1.0") != 0) {
		log_warn("curve: ZAP request of version '%s' (want 1.0)", version);
		r.text = "unsupported ZAP version";
	} else {
		frame_str(&fr[2], domain, sizeof domain);
		frame_str(&fr[3], address, sizeof address);
		frame_str(&fr[5], mech, sizeof mech);
		const uint8_t *key = n >= 7 ? zmq_msg_data(&fr[6]) : NULL;
		size_t keylen = n >= 7 ? zmq_msg_size(&fr[6]) : 0;
		kgb_zap_decide(z, domain, address[0] ? address : "(unknown address)", mech, key, keylen, &r);
	}
	/* reply: version, request id, status code, status text, user id, metadata. The
	 * metadata carries the client's key as the property X-Key, which the sockets read
	 * off every message (zmq_msg_gets): the coordinator binds a worker's name and its
	 * leases to that key (docs/security.md). Encoding: ZMTP properties, a one-byte
	 * name length, the name, a four-byte big-endian value length, the value. */
	uint8_t meta[1 + 5 + 4 + KGB_CURVE_Z85_LEN + 1 + 6 + 4 + 5];
	size_t metalen = 0;
	char kz[KGB_CURVE_Z85_LEN + 1];
	if (strcmp(r.status, "200") == 0 && n >= 7 && zmq_msg_size(&fr[6]) == KGB_CURVE_KEY_BYTES &&
	    zmq_z85_encode(kz, zmq_msg_data(&fr[6]), KGB_CURVE_KEY_BYTES)) {
		meta[metalen++] = 5;
		memcpy(meta + metalen, "X-Key", 5);
		metalen += 5;
		uint32_t vl = KGB_CURVE_Z85_LEN;
		meta[metalen++] = (uint8_t)(vl >> 24);
		meta[metalen++] = (uint8_t)(vl >> 16);
		meta[metalen++] = (uint8_t)(vl >> 8);
		meta[metalen++] = (uint8_t)vl;
		memcpy(meta + metalen, kz, KGB_CURVE_Z85_LEN);
		metalen += KGB_CURVE_Z85_LEN;
		/* the key's role (docs/security.md, "Users and roles") as X-Role */
		const char *role = r.admin ? "admin" : "user";
		meta[metalen++] = 6;
		memcpy(meta + metalen, "X-Role", 6);
		metalen += 6;
		vl = (uint32_t)strlen(role);
		meta[metalen++] = 0;
		meta[metalen++] = 0;
		meta[metalen++] = 0;
		meta[metalen++] = (uint8_t)vl;
		memcpy(meta + metalen, role, vl);
		metalen += vl;
	}
	const void *rid = n >= 2 ? zmq_msg_data(&fr[1]) : "";
	size_t ridlen = n >= 2 ? zmq_msg_size(&fr[1]) : 0;
	if (zmq_send(z->w.sock, "1.0", 3, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(z->w.sock, rid, ridlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(z->w.sock, r.status, strlen(r.status), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(z->w.sock, r.text, strlen(r.text), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(z->w.sock, r.user, strlen(r.user), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(z->w.sock, meta, metalen, ZMQ_DONTWAIT) < 0)
		log_error("curve: cannot answer a ZAP request: %s", zmq_strerror(zmq_errno()));
	for (int i = 0; i < n; i++)
		zmq_msg_close(&fr[i]);
	return 1;
}

/* Load every domain's list into lists[]; on failure frees what it loaded. */
static int load_lists(kgb_zap_t *z, kgb_curve_allow_t **lists, char *err, size_t errlen)
{
	for (size_t i = 0; i < z->ndom; i++) {
		char e[512];
		if (kgb_curve_allow_load(z->dom[i].path, &lists[i], e, sizeof e) != 0) {
			kgb_err(err, errlen, "%s allowlist: %s", z->dom[i].domain, e);
			for (size_t k = 0; k < i; k++)
				kgb_curve_allow_destroy(&lists[k]);
			return -1;
		}
	}
	return 0;
}

static void free_domains(kgb_zap_t *z)
{
	for (size_t i = 0; i < z->ndom; i++) {
		kgb_curve_allow_destroy(&z->dom[i].list);
		free(z->dom[i].domain);
		free(z->dom[i].path);
	}
	z->ndom = 0;
}

static void zap_free(void *arg);

/* See zap.h. */
kgb_zap_t *kgb_zap_start(uv_loop_t *loop, void *zctx, const kgb_zap_domain_t *domains, size_t n, char *err,
                         size_t errlen)
{
	KGB_ASSERT(n <= MAX_DOMAINS);
	kgb_zap_t *z = kgb_xcalloc(1, sizeof *z);
	kgb_curve_allow_t *lists[MAX_DOMAINS] = { 0 };
	z->loop = loop;
	for (size_t i = 0; i < n; i++) {
		z->dom[i].domain = kgb_xstrdup(domains[i].domain);
		z->dom[i].path = kgb_xstrdup(domains[i].path);
	}
	z->ndom = n;
	if (load_lists(z, lists, err, errlen) != 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		z->dom[i].list = lists[i];
		log_info("curve: %s allowlist %s: %zu key(s)", z->dom[i].domain, z->dom[i].path, lists[i]->n);
	}
	if (!loop)
		return z; /* no socket: kgb_zap_decide only (tests) */
	z->w.sock = zmq_socket(zctx, ZMQ_REP);
	if (!z->w.sock) {
		kgb_err(err, errlen, "ZAP handler: socket: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	int zero = 0;
	zmq_setsockopt(z->w.sock, ZMQ_LINGER, &zero, sizeof zero);
	if (zmq_bind(z->w.sock, KGB_ZAP_ENDPOINT) != 0) {
		kgb_err(err, errlen, "ZAP handler: bind %s: %s", KGB_ZAP_ENDPOINT, zmq_strerror(zmq_errno()));
		zmq_close(z->w.sock);
		goto fail;
	}
	kgb_zwatch_start(&z->w, loop, z->w.sock, BATCH, handle_one, zap_free, z);
	return z;
fail:
	free_domains(z);
	free(z);
	return NULL;
}

/* See zap.h. */
int kgb_zap_reload(kgb_zap_t *z, char *err, size_t errlen)
{
	kgb_curve_allow_t *lists[MAX_DOMAINS] = { 0 };
	if (load_lists(z, lists, err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < z->ndom; i++) {
		size_t before = z->dom[i].list ? z->dom[i].list->n : 0;
		kgb_curve_allow_destroy(&z->dom[i].list);
		z->dom[i].list = lists[i];
		log_info("curve: %s allowlist %s reloaded: %zu key(s) (was %zu)", z->dom[i].domain, z->dom[i].path,
		         lists[i]->n, before);
	}
	/* a key added to a list must not stay muted by an old refusal */
	memset(z->recent, 0, sizeof z->recent);
	return 0;
}

/* See zap.h. */
void kgb_zap_counts(const kgb_zap_t *z, uint64_t *accepted, uint64_t *refused)
{
	*accepted = z->accepted;
	*refused = z->refused;
}

static void zap_free(void *arg)
{
	kgb_zap_t *z = arg;
	free_domains(z);
	free(z);
}

/* See zap.h. */
void kgb_zap_close(kgb_zap_t **pz)
{
	kgb_zap_t *z = *pz;
	if (!z)
		return;
	*pz = NULL;
	if (z->w.open_handles == 0) {
		zap_free(z); /* never attached to a loop */
		return;
	}
	kgb_zwatch_stop(&z->w);
}
