/* ZeroMQ ROUTER sockets on the libuv loop: see zsock.h. */
#include "zsock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"
#include "util.h"

#define BATCH 256
#define MAX_FRAMES 8

struct kgb_zsock {
	uv_loop_t *loop;
	char name[32];
	kgb_zwatch_t w;
	kgb_zsock_msg_cb cb;
	void *arg;
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
	if (body >= 1)
		zs->cb(zs, &peer, zmq_msg_data(&fr[body]), zmq_msg_size(&fr[body]), bad, zs->arg);
	else
		zs->cb(zs, &peer, "", 0, true, zs->arg);
	for (int i = 0; i < n; i++)
		zmq_msg_close(&fr[i]);
	return 1;
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
	kgb_zwatch_stop(&zs->w);
}
