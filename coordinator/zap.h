/* The ZAP handler (ZeroMQ RFC 27) that authenticates CURVE clients against the
 * allowlists (docs/security.md).
 *
 * A REP socket bound at inproc://zeromq.zap.01 in the coordinator's ZeroMQ context,
 * polled by the libuv loop like the ROUTER sockets (zsock.h). It must be started
 * before the CURVE sockets bind: a CURVE server with no ZAP handler accepts every
 * client key. Each domain ("workers", "cli": the ZMQ_ZAP_DOMAIN of the two sockets)
 * has its own allowlist; a key not on its domain's list is refused with status 400
 * and the refusal is logged with the peer's address and key. */
#ifndef KGB_COORD_ZAP_H
#define KGB_COORD_ZAP_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "curve.h"

#define KGB_ZAP_ENDPOINT "inproc://zeromq.zap.01"

typedef struct kgb_zap kgb_zap_t;

/* One domain and the file of its allowlist. */
typedef struct kgb_zap_domain {
	const char *domain;       /* "workers" */
	const char *path;         /* allowlist file */
} kgb_zap_domain_t;

/* Load the allowlists of the n domains, bind the handler in zctx and attach it to
 * loop (loop NULL: no socket, only kgb_zap_decide and kgb_zap_reload work; for
 * tests). Returns the handler (close with kgb_zap_close) or NULL with err naming the
 * file or the socket. */
kgb_zap_t *kgb_zap_start(uv_loop_t *loop, void *zctx, const kgb_zap_domain_t *domains, size_t n, char *err,
                         size_t errlen);
/* Read every allowlist again; if any fails, all the old lists stay in force.
 * Returns 0 or -1 with err. */
int kgb_zap_reload(kgb_zap_t *z, char *err, size_t errlen);
/* Requests answered so far: accepted and refused. */
void kgb_zap_counts(const kgb_zap_t *z, uint64_t *accepted, uint64_t *refused);
/* Answer one ZAP request given as its frames (the protocol without the socket, for
 * tests and for the loop). Fills reply frames: status code ("200", "400", "500"),
 * status text and user id, which point into z or static strings and stay valid
 * until the next call. addr names the peer in log lines. */
typedef struct kgb_zap_reply {
	const char *status, *text, *user;
	bool admin;               /* the key's line says role=admin */
} kgb_zap_reply_t;
void kgb_zap_decide(kgb_zap_t *z, const char *domain, const char *address, const char *mechanism,
                    const uint8_t *key, size_t keylen, kgb_zap_reply_t *r);
/* Close the socket and the loop handles; frees *z once the loop has closed them. */
void kgb_zap_close(kgb_zap_t **z);

#endif
