/* ZeroMQ ROUTER sockets on the libuv loop: see zsock.h. */
#include "zsock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "log.h"
#include "util.h"

static void peer_identity(kgb_zpeer_t *peer, zmq_msg_t *m);

#define BATCH 256
#define MAX_FRAMES 8

/* A monitor of one ROUTER socket: connections accepted, handshakes refused, peers
 * gone. ZeroMQ's (v1) monitor names neither the peer nor the connection in a
 * handshake event, so the address is taken with getpeername() when the connection is
 * accepted and given to the first refusal that a disconnect then closes. */
#define MON_FDS 64
typedef struct zmon {
	kgb_zwatch_t w;
	char name[32];
	struct {
		int fd;              /* -1: free */
		char addr[64];
	} conn[MON_FDS];
	uint32_t pending[MON_FDS]; /* refusals not yet matched with a disconnect (event | value) */
	int npending;
	uint64_t refused;
	/* a peer that retries (ZeroMQ reconnects every 100 ms by default) is logged once per
	 * MON_QUIET_NS for the same reason and host; the next line counts what was held back */
	char last_host[64];
	uint32_t last_value;
	uint64_t last_ns;
	uint64_t held;
} zmon_t;
#define MON_QUIET_NS (10ull * 1000000000ull)

struct kgb_zsock {
	uv_loop_t *loop;
	char name[32];
	kgb_zwatch_t w;
	kgb_zsock_msg_cb cb;
	void *arg;
	zmon_t *mon;
};

/* ---- the loop side (zsock.h, kgb_zwatch_t) ---- */

static bool has_input(kgb_zwatch_t *w)
{
	int ev = 0;
	size_t sz = sizeof ev;
	if (zmq_getsockopt(w->sock, ZMQ_EVENTS, &ev, &sz) != 0)
		return false;
	return (ev & ZMQ_POLLIN) != 0;
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)status;
	(void)events;
	/* only wakes the loop: the check handle reads the messages */
}

static void on_idle(uv_idle_t *h)
{
	(void)h;
}

static void on_prepare(uv_prepare_t *h)
{
	kgb_zwatch_t *w = h->data;
	if (w->closing)
		return;
	if (has_input(w))
		uv_idle_start(&w->idle, on_idle);
	else
		uv_idle_stop(&w->idle);
}

static void on_check(uv_check_t *h)
{
	kgb_zwatch_t *w = h->data;
	for (int i = 0; i < w->batch && !w->closing; i++)
		if (!w->one(w->arg))
			break;
}

void kgb_zwatch_start(kgb_zwatch_t *w, uv_loop_t *loop, void *sock, int batch, int (*one)(void *arg),
                      void (*closed)(void *arg), void *arg)
{
	int fd;
	size_t sz = sizeof fd;
	w->sock = sock;
	w->batch = batch;
	w->one = one;
	w->closed = closed;
	w->arg = arg;
	zmq_getsockopt(sock, ZMQ_FD, &fd, &sz);
	uv_poll_init(loop, &w->poll, fd);
	uv_prepare_init(loop, &w->prepare);
	uv_check_init(loop, &w->check);
	uv_idle_init(loop, &w->idle);
	w->poll.data = w->prepare.data = w->check.data = w->idle.data = w;
	uv_poll_start(&w->poll, UV_READABLE, on_poll);
	uv_prepare_start(&w->prepare, on_prepare);
	uv_check_start(&w->check, on_check);
	w->open_handles = 4;
}

static void handle_closed(uv_handle_t *h)
{
	kgb_zwatch_t *w = h->data;
	if (--w->open_handles == 0)
		w->closed(w->arg);
}

void kgb_zwatch_stop(kgb_zwatch_t *w)
{
	w->closing = true;
	uv_close((uv_handle_t *)&w->poll, handle_closed);
	uv_close((uv_handle_t *)&w->prepare, handle_closed);
	uv_close((uv_handle_t *)&w->check, handle_closed);
	uv_close((uv_handle_t *)&w->idle, handle_closed);
	zmq_close(w->sock);
	w->sock = NULL;
}

/* ---- ROUTER sockets ---- */

/* Receive one whole message (all its frames). Returns 1 when one was read, 0 when
 * none is pending. */
static int recv_one(void *arg)
{
	kgb_zsock_t *zs = arg;
	zmq_msg_t fr[MAX_FRAMES];
	int n = 0, extra = 0;
	for (;;) {
		zmq_msg_t m;
		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, zs->w.sock, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			if (n == 0)
				return 0;
			break; /* cannot happen mid-message; treat what we have */
		}
		int more = zmq_msg_more(&m);
		if (n < MAX_FRAMES)
			fr[n++] = m;
		else {
			zmq_msg_close(&m);
			extra++;
		}
		if (!more)
			break;
	}
	kgb_zpeer_t peer = {0};
	size_t idlen = zmq_msg_size(&fr[0]);
	peer.idlen = KGB_MIN(idlen, (size_t)KGB_ZSOCK_MAX_ID);
	memcpy(peer.id, zmq_msg_data(&fr[0]), peer.idlen);
	bool bad = false;
	int body = n - 1;
	if (n == 3 && zmq_msg_size(&fr[1]) == 0)
		peer.delim = true;
	else if (n != 2)
		bad = true;
	if (extra)
		bad = true;
	/* connection metadata: on every frame of a message; read from the last */
	const char *pa = zmq_msg_gets(&fr[n - 1], "Peer-Address");
	const char *uid = zmq_msg_gets(&fr[n - 1], "X-Key"); /* zap.c */
	kgb_strlcpy(peer.addr, pa ? pa : "", sizeof peer.addr);
	kgb_strlcpy(peer.key, uid ? uid : "", sizeof peer.key);
	peer_identity(&peer, &fr[n - 1]);
	if (body >= 1)
		zs->cb(zs, &peer, zmq_msg_data(&fr[body]), zmq_msg_size(&fr[body]), bad, zs->arg);
	else
		zs->cb(zs, &peer, "", 0, true, zs->arg);
	for (int i = 0; i < n; i++)
		zmq_msg_close(&fr[i]);
	return 1;
}

/* The user behind a message, where the transport tells: see kgb_zpeer_t. */
static void peer_identity(kgb_zpeer_t *peer, zmq_msg_t *m)
{
	if (peer->key[0]) {
		const char *u = zmq_msg_gets(m, "User-Id");
		const char *r = zmq_msg_gets(m, "X-Role");
		kgb_strlcpy(peer->user, u && *u ? u : peer->key, sizeof peer->user);
		peer->admin = r && strcmp(r, "admin") == 0;
		peer->authenticated = true;
		return;
	}
	int fd = zmq_msg_get(m, ZMQ_SRCFD);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	struct ucred cr;
	socklen_t cl = sizeof cr;
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family != AF_UNIX ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0)
		return;
	char buf[1024];
	struct passwd pw, *pp = NULL;
	if (getpwuid_r(cr.uid, &pw, buf, sizeof buf, &pp) == 0 && pp)
		kgb_strlcpy(peer->user, pp->pw_name, sizeof peer->user);
	else
		snprintf(peer->user, sizeof peer->user, "uid-%u", (unsigned)cr.uid);
	peer->admin = cr.uid == 0 || cr.uid == geteuid();
	peer->authenticated = true;
}

/* Why a handshake was refused, in words. */
static const char *refusal_reason(uint16_t event, uint32_t value)
{
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
		return "authentication refused (the ZAP handler's log line names the key)";
	if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
		return "handshake failed (no detail: the connection closed or timed out)";
	switch (value) {
	case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
		return "security mechanism mismatch (the peer does not use CURVE, or this socket does not)";
	case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
		return "cryptographic error (the peer has the wrong server key)";
	case ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE:
		return "key exchange failed";
	case ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND:
	case ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE:
		return "unexpected ZMTP command (not a ZeroMQ peer, or a different protocol)";
	default:
		return value >= ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED && value < ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED
		           ? "the ZAP handler's reply was unusable"
		           : "malformed ZMTP handshake";
	}
}

/* "ip:port" of a peer (IPv4 or IPv6), as the message peers' addresses are shown. */
static void sa_str(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
		port = ntohs(a->sin_port);
		snprintf(out, outlen, "%s:%u", ip, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
		port = ntohs(a->sin6_port);
		snprintf(out, outlen, "[%s]:%u", ip, port);
	} else {
		snprintf(out, outlen, "(local socket)");
	}
}

static void mon_log(zmon_t *m, uint32_t value, uint16_t event, const char *addr)
{
	m->refused++;
	/* the host without the port: a retrying peer comes from a new port each time */
	char host[64];
	kgb_strlcpy(host, addr && *addr ? addr : "-", sizeof host);
	char *colon = strrchr(host, ':');
	if (colon && colon != host)
		*colon = '\0';
	uint64_t now = kgb_now_ns();
	uint32_t key = value ^ ((uint32_t)event << 16);
	if (m->last_ns && now - m->last_ns < MON_QUIET_NS && key == m->last_value && strcmp(host, m->last_host) == 0) {
		m->held++;
		return;
	}
	char held[96] = "";
	if (m->held)
		snprintf(held, sizeof held, "; %llu like the previous one not logged", (unsigned long long)m->held);
	log_warn("%s socket: refused handshake from address %s: %s (protocol code 0x%08x; %llu refused so far%s)",
	         m->name, addr && *addr ? addr : "- (closed before its address could be read)",
	         refusal_reason(event, value), value, (unsigned long long)m->refused, held);
	kgb_strlcpy(m->last_host, host, sizeof m->last_host);
	m->last_value = key;
	m->last_ns = now;
	m->held = 0;
}

/* One monitor event: [u16 event, u32 value][endpoint]. Returns 1 when one was read. */
static int mon_one(void *arg)
{
	zmon_t *m = arg;
	zmq_msg_t fr[2];
	zmq_msg_init(&fr[0]);
	zmq_msg_init(&fr[1]);
	int rc = 0;
	if (zmq_msg_recv(&fr[0], m->w.sock, ZMQ_DONTWAIT) < 0)
		goto out;
	rc = 1;
	if (!zmq_msg_more(&fr[0]) || zmq_msg_recv(&fr[1], m->w.sock, 0) < 0 || zmq_msg_size(&fr[0]) < 6)
		goto out;
	const uint8_t *d = zmq_msg_data(&fr[0]);
	uint16_t event;
	uint32_t value;
	memcpy(&event, d, 2);
	memcpy(&value, d + 2, 4);
	if (event == ZMQ_EVENT_ACCEPTED) {
		int slot = -1;
		for (int i = 0; i < MON_FDS; i++)
			if (m->conn[i].fd == (int)value || (slot < 0 && m->conn[i].fd < 0))
				slot = i;
		if (slot < 0)
			slot = (int)(value % MON_FDS);
		m->conn[slot].fd = (int)value;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		m->conn[slot].addr[0] = '\0';
		if (getpeername((int)value, (struct sockaddr *)&ss, &sl) == 0)
			sa_str(&ss, m->conn[slot].addr, sizeof m->conn[slot].addr);
	} else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
	           event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
		if (m->npending == MON_FDS) {
			mon_log(m, m->pending[0] & 0xffffffffu, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, NULL);
			memmove(m->pending, m->pending + 1, (MON_FDS - 1) * sizeof *m->pending);
			m->npending--;
		}
		/* protocol failures keep their ZMTP code (0x1.../0x2...); the other two kinds
		 * are marked with codes ZeroMQ does not use */
		m->pending[m->npending++] = event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ? value
		                            : event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH   ? 0xA0000000u
		                                                                         : 0xB0000000u;
	} else if (event == ZMQ_EVENT_DISCONNECTED) {
		const char *addr = NULL;
		int slot = -1;
		for (int i = 0; i < MON_FDS; i++)
			if (m->conn[i].fd == (int)value)
				slot = i;
		if (slot >= 0)
			addr = m->conn[slot].addr;
		if (m->npending > 0) {
			uint32_t p = m->pending[0];
			uint16_t ev = p == 0xA0000000u   ? ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
			              : p == 0xB0000000u ? ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
			                                 : ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
			mon_log(m, ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ? p : 0, ev, addr);
			memmove(m->pending, m->pending + 1, (size_t)(m->npending - 1) * sizeof *m->pending);
			m->npending--;
		}
		if (slot >= 0)
			m->conn[slot].fd = -1;
	}
out:
	zmq_msg_close(&fr[0]);
	zmq_msg_close(&fr[1]);
	return rc;
}

/* Start the monitor of zs (events delivered over an inproc PAIR socket watched by the
 * loop). Failure only costs the refusal log lines, and says so. */
static void mon_start(kgb_zsock_t *zs, void *zctx)
{
	static unsigned seq;
	char ep[96];
	snprintf(ep, sizeof ep, "inproc://kgb-monitor-%s-%u", zs->name, seq++);
	int events = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
	             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
	if (zmq_socket_monitor(zs->w.sock, ep, events) != 0) {
		log_warn("%s socket: no monitor (%s): refused handshakes will not be logged", zs->name,
		         zmq_strerror(zmq_errno()));
		return;
	}
	void *pair = zmq_socket(zctx, ZMQ_PAIR);
	int zero = 0;
	if (!pair || zmq_setsockopt(pair, ZMQ_LINGER, &zero, sizeof zero) != 0 || zmq_connect(pair, ep) != 0) {
		log_warn("%s socket: no monitor (%s): refused handshakes will not be logged", zs->name,
		         zmq_strerror(zmq_errno()));
		if (pair)
			zmq_close(pair);
		zmq_socket_monitor(zs->w.sock, NULL, 0);
		return;
	}
	zmon_t *m = kgb_xcalloc(1, sizeof *m);
	kgb_strlcpy(m->name, zs->name, sizeof m->name);
	for (int i = 0; i < MON_FDS; i++)
		m->conn[i].fd = -1;
	kgb_zwatch_start(&m->w, zs->loop, pair, BATCH, mon_one, free, m);
	zs->mon = m;
}

kgb_zsock_t *kgb_zsock_bind(uv_loop_t *loop, void *zctx, const char *endpoint, const char *name,
                            kgb_zsock_msg_cb cb, void *arg, char *err, size_t errlen)
{
	return kgb_zsock_bind_curve(loop, zctx, endpoint, name, NULL, cb, arg, err, errlen);
}

kgb_zsock_t *kgb_zsock_bind_curve(uv_loop_t *loop, void *zctx, const char *endpoint, const char *name,
                                  const char *curve_secret, kgb_zsock_msg_cb cb, void *arg, char *err,
                                  size_t errlen)
{
	kgb_zsock_t *zs = kgb_xcalloc(1, sizeof *zs);
	zs->loop = loop;
	zs->cb = cb;
	zs->arg = arg;
	kgb_strlcpy(zs->name, name, sizeof zs->name);
	zs->w.sock = zmq_socket(zctx, ZMQ_ROUTER);
	if (!zs->w.sock) {
		kgb_err(err, errlen, "%s socket: %s", name, zmq_strerror(zmq_errno()));
		free(zs);
		return NULL;
	}
	int one = 1, zero = 0, hwm = 100000;
	zmq_setsockopt(zs->w.sock, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
	zmq_setsockopt(zs->w.sock, ZMQ_LINGER, &zero, sizeof zero);
	zmq_setsockopt(zs->w.sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
	zmq_setsockopt(zs->w.sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
	if (curve_secret &&
	    (zmq_setsockopt(zs->w.sock, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
	     zmq_setsockopt(zs->w.sock, ZMQ_CURVE_SECRETKEY, curve_secret, strlen(curve_secret)) != 0 ||
	     zmq_setsockopt(zs->w.sock, ZMQ_ZAP_DOMAIN, name, strlen(name)) != 0)) {
		kgb_err(err, errlen, "%s socket: CURVE: %s", name, zmq_strerror(zmq_errno()));
		zmq_close(zs->w.sock);
		free(zs);
		return NULL;
	}
	if (zmq_bind(zs->w.sock, endpoint) != 0) {
		kgb_err(err, errlen, "%s socket: bind %s: %s", name, endpoint, zmq_strerror(zmq_errno()));
		zmq_close(zs->w.sock);
		free(zs);
		return NULL;
	}
	kgb_zwatch_start(&zs->w, loop, zs->w.sock, BATCH, recv_one, free, zs);
	mon_start(zs, zctx);
	return zs;
}

int kgb_zsock_send(kgb_zsock_t *zs, const kgb_zpeer_t *peer, Kgb__Envelope *env)
{
	if (zs->w.closing) {
		errno = ENOTSOCK;
		return -1;
	}
	size_t len = 0;
	uint8_t *buf = kgb_wire_pack(env, &len);
	int rc = -1;
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	if (zmq_send(zs->w.sock, peer->id, peer->idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
		goto out;
	if (peer->delim && zmq_send(zs->w.sock, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
		goto out;
	if (zmq_send(zs->w.sock, buf, len, ZMQ_DONTWAIT) < 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		errno = zmq_errno();
	free(buf);
	return rc;
}

const char *kgb_zpeer_str(const kgb_zpeer_t *peer)
{
	static char s[2 * 32 + 4];
	size_t n = KGB_MIN(peer->idlen, (size_t)32);
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", peer->id[i]);
	s[2 * n] = 0;
	if (n == 0)
		strcpy(s, "-");
	return s;
}

const char *kgb_zpeer_where(const kgb_zpeer_t *peer)
{
	/* a few buffers in turn: one log line may name two peers */
	static char s[4][160];
	static unsigned next;
	char *b = s[next++ % 4];
	snprintf(b, sizeof s[0], "address %s key %s", peer->addr[0] ? peer->addr : "-", peer->key[0] ? peer->key : "-");
	return b;
}

bool kgb_zpeer_same(const kgb_zpeer_t *a, const kgb_zpeer_t *b)
{
	return a->idlen > 0 && a->idlen == b->idlen && memcmp(a->id, b->id, a->idlen) == 0;
}

const char *kgb_zsock_name(const kgb_zsock_t *zs)
{
	return zs->name;
}

void kgb_zsock_close(kgb_zsock_t **pzs)
{
	kgb_zsock_t *zs = *pzs;
	if (!zs)
		return;
	*pzs = NULL;
	if (zs->mon) {
		zmq_socket_monitor(zs->w.sock, NULL, 0);
		kgb_zwatch_stop(&zs->mon->w);
		zs->mon = NULL;
	}
	kgb_zwatch_stop(&zs->w);
}
