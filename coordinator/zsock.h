/* ZeroMQ ROUTER sockets driven by the libuv loop.
 *
 * ZMQ_FD is edge-triggered and only says "look at ZMQ_EVENTS": a uv_poll on it wakes
 * the loop, a uv_prepare starts a uv_idle (so the loop does not block) while
 * ZMQ_EVENTS shows pending input, and a uv_check drains a bounded batch of messages
 * per loop iteration. Messages are [identity][envelope] or, from REQ clients,
 * [identity][empty][envelope]; replies copy that shape. */
#ifndef KGB_COORD_ZSOCK_H
#define KGB_COORD_ZSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "wire.h"

#define KGB_ZSOCK_MAX_ID 255

/* Any ZeroMQ socket on the loop, as described above (the ROUTER sockets below and the
 * ZAP handler use it): embedded in its owner. From the check phase, one(arg) is called
 * while it returns 1 (it handled a message), at most batch times per iteration, until
 * kgb_zwatch_stop; closed(arg) runs once the last handle has closed. */
typedef struct kgb_zwatch {
	void *sock;
	uv_poll_t poll;
	uv_prepare_t prepare;
	uv_check_t check;
	uv_idle_t idle;
	int open_handles;            /* 0: not started, or every handle closed */
	bool closing;
	int batch;
	int (*one)(void *arg);
	void (*closed)(void *arg);
	void *arg;
} kgb_zwatch_t;

void kgb_zwatch_start(kgb_zwatch_t *w, uv_loop_t *loop, void *sock, int batch, int (*one)(void *arg),
                      void (*closed)(void *arg), void *arg);
/* Close the handles and the socket; closed(arg) follows from the loop. */
void kgb_zwatch_stop(kgb_zwatch_t *w);

typedef struct kgb_zsock kgb_zsock_t;

/* The peer a message came from: its routing identity (one per connection: the ROUTER
 * assigns a new one when a peer connects again), whether it used a REQ-style empty
 * delimiter frame, the connection's remote address and, with CURVE, the client's
 * public key as the ZAP handler accepted it (Z85; empty without CURVE). Copied by
 * value. */
typedef struct kgb_zpeer {
	uint8_t id[KGB_ZSOCK_MAX_ID];
	size_t idlen;
	bool delim;
	char addr[64];
	char key[48];
	/* who the client is, where the transport says (docs/security.md, "Users and
	 * roles"): with CURVE the user of its key and the key's role; on an ipc://
	 * endpoint without CURVE the peer process's user (SO_PEERCRED), admin when it is
	 * root or the coordinator's own user. authenticated false: only what the client
	 * declares is known (TCP without CURVE). */
	bool authenticated;
	bool admin;
	char user[64];
} kgb_zpeer_t;

/* One message: data/len is the envelope frame (not yet decoded). nframes_bad is true
 * when the message had an unexpected frame layout (data is then the last frame). */
typedef void (*kgb_zsock_msg_cb)(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data,
                                 size_t len, bool layout_bad, void *arg);

/* Create a ROUTER socket in zctx bound to endpoint (ZMQ_ROUTER_MANDATORY on), and
 * attach it to loop. name is used in log lines ("workers", "cli"). Returns NULL with
 * err filled on failure. */
kgb_zsock_t *kgb_zsock_bind(uv_loop_t *loop, void *zctx, const char *endpoint, const char *name,
                            kgb_zsock_msg_cb cb, void *arg, char *err, size_t errlen);
/* Like kgb_zsock_bind; when curve_secret (a Z85 secret key) is not NULL the socket is
 * a CURVE server (ZMQ_CURVE_SERVER, ZMQ_CURVE_SECRETKEY) whose ZAP domain is name,
 * so the ZAP handler (zap.h), which must be bound first, applies that domain's
 * allowlist. */
kgb_zsock_t *kgb_zsock_bind_curve(uv_loop_t *loop, void *zctx, const char *endpoint, const char *name,
                                  const char *curve_secret, kgb_zsock_msg_cb cb, void *arg, char *err,
                                  size_t errlen);
/* Send env to peer (never blocks). Returns 0, or -1 with errno (EHOSTUNREACH: the
 * peer is gone; EAGAIN: it is at its high-water mark). */
int kgb_zsock_send(kgb_zsock_t *zs, const kgb_zpeer_t *peer, Kgb__Envelope *env);
/* Printable form of a peer identity (hex), for logs. Static buffer. */
const char *kgb_zpeer_str(const kgb_zpeer_t *peer);
/* "address A key K" of a peer, for logs ("-" where unknown). One of four static
 * buffers used in turn. */
const char *kgb_zpeer_where(const kgb_zpeer_t *peer);
/* True when a and b are the same connection (same routing identity). */
bool kgb_zpeer_same(const kgb_zpeer_t *a, const kgb_zpeer_t *b);
const char *kgb_zsock_name(const kgb_zsock_t *zs);
/* Stop receiving, close the socket (linger 0) and the handles; frees *zs once the
 * loop has closed them. */
void kgb_zsock_close(kgb_zsock_t **zs);

#endif
