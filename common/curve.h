/* CurveZMQ for kgb's two sockets (docs/security.md): key files, allowlists, the
 * client side of the handshake and a monitor that reports a refused key.
 *
 * Keys are 32-byte Curve25519 keys written as 40 Z85 characters. A key file holds one
 * key: its first line that is neither blank nor a '#' comment (the rest of that line
 * is ignored). `kgb keygen` writes PREFIX.key (secret, mode 0600) and PREFIX.pub.
 *
 * An allowlist has one public key per line, optionally followed by a name:
 *     # workers of rack 12
 *     tHxO%5nXsW3)2[hmNIm%ko-KWRfnWigD[Gx+s]Dx  gpu-node-01
 * In the CLI's list the name is the user's, and a last word "role=admin" (or
 * "role=user", the default) gives its role (docs/security.md, "Users and roles"):
 *     Qz...%2x  alice  role=admin
 * A line whose first character (after blanks) is '#' is a comment ('#' is a Z85
 * digit, but the largest: no key starts with it); after the key, a '#' that starts a
 * word begins a trailing comment. */
#ifndef KGB_CURVE_H
#define KGB_CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KGB_CURVE_Z85_LEN 40      /* characters of a Z85 key */
#define KGB_CURVE_KEY_BYTES 32    /* bytes of a decoded key */

/* The first line of the secret key files `kgb keygen` writes; an allowlist that
 * contains it is refused (a secret key must never be listed). */
#define KGB_CURVE_SECRET_MARK "# kgb CURVE secret key"

/* True when s[0..len) is a well-formed Z85 key (40 characters of the Z85 alphabet). */
bool kgb_curve_key_valid(const char *s, size_t len);

/* Read the key file at path into out (NUL-terminated Z85). For a secret key
 * (secret = true) a warning is logged when the file is readable by group or others.
 * Returns 0, or -1 with err naming the file and what is wrong. */
int kgb_curve_key_load(const char *path, bool secret, char out[KGB_CURVE_Z85_LEN + 1], char *err,
                       size_t errlen);

/* The public key of a Z85 secret key. Returns 0 or -1 with err. */
int kgb_curve_public_of(const char *secret, char out[KGB_CURVE_Z85_LEN + 1], char *err, size_t errlen);

typedef struct kgb_curve_entry {
	uint8_t key[KGB_CURVE_KEY_BYTES];
	char z85[KGB_CURVE_Z85_LEN + 1];
	char *name;               /* "" when the line names no one (owned) */
	bool admin;               /* "role=admin" ended the name */
	int line;
} kgb_curve_entry_t;

typedef struct kgb_curve_allow {
	char *path;               /* where it was read from, for log lines (owned) */
	kgb_curve_entry_t *v;
	size_t n;
} kgb_curve_allow_t;

/* Parse allowlist text (what is described at the top of this file); path names the
 * file in errors. A malformed line or a key listed twice is an error
 * ("workers.allow:3: 'abc' is not a CURVE public key ..."). Returns 0 and *out (free
 * with kgb_curve_allow_destroy), or -1 with err. An empty list is valid: it admits
 * no one. */
int kgb_curve_allow_parse(const char *text, const char *path, kgb_curve_allow_t **out, char *err,
                          size_t errlen);
/* Read and parse the allowlist file at path; as kgb_curve_allow_parse. */
int kgb_curve_allow_load(const char *path, kgb_curve_allow_t **out, char *err, size_t errlen);
/* The entry of a decoded 32-byte public key, or NULL when it is not listed. */
const kgb_curve_entry_t *kgb_curve_allow_find(const kgb_curve_allow_t *a, const uint8_t *key, size_t keylen);
void kgb_curve_allow_destroy(kgb_curve_allow_t **a);

/* True when a ZeroMQ endpoint can only be reached from this machine: ipc://, inproc://,
 * tcp:// on 127.0.0.0/8, ::1 or localhost. */
bool kgb_curve_endpoint_is_local(const char *endpoint);

/* The client side (worker and CLI): the coordinator's public key and a key pair. */
typedef struct kgb_curve_client {
	bool on;
	char server[KGB_CURVE_Z85_LEN + 1];
	char pub[KGB_CURVE_Z85_LEN + 1];
	char secret[KGB_CURVE_Z85_LEN + 1];
} kgb_curve_client_t;

/* Fill cc from the environment: KGB_CURVE_SERVER_KEY (Z85) or
 * KGB_CURVE_SERVER_KEY_FILE turns CURVE on and then needs KGB_CURVE_SECRET_KEY_FILE;
 * KGB_CURVE_PUBLIC_KEY_FILE is optional (the public key is derived from the secret
 * one, and must agree with it when given). Neither server variable set: cc->on is
 * false and 0 is returned. Returns -1 with err naming the variable on bad values. */
int kgb_curve_client_from_env(kgb_curve_client_t *cc, char *err, size_t errlen);
/* Set ZMQ_CURVE_SERVERKEY, _PUBLICKEY and _SECRETKEY on sock (before zmq_connect).
 * Returns 0 or -1 with err. */
int kgb_curve_client_apply(const kgb_curve_client_t *cc, void *sock, char *err, size_t errlen);

/* A monitor of sock's handshakes (a PAIR socket in zctx); start it before
 * zmq_connect so no event is missed. Returns the monitor (free with
 * kgb_curve_monitor_destroy) or NULL with err. */
void *kgb_curve_monitor_new(void *zctx, void *sock, char *err, size_t errlen);
/* What a failed handshake said (kgb_curve_monitor_poll's *why). */
enum {
	KGB_CURVE_FAIL_NONE = 0,
	KGB_CURVE_FAIL_MECHANISM,  /* the peer speaks another security mechanism (CURVE
	                            * against none): one side has no CURVE configured */
	KGB_CURVE_FAIL_CRYPTO,     /* a CURVE message did not decrypt: a wrong server key */
	KGB_CURVE_FAIL_OTHER,      /* no detail: the peer hung up mid-handshake (after a
	                            * wrong server key; also a peer that stopped) */
};
/* Read the monitor's pending events without blocking (it monitors a socket with or
 * without CURVE). Returns the outcome of the latest handshake among them: its ZAP
 * status code (such as 400) when our key was refused, -1 when it failed otherwise
 * (*why, may be NULL, says how), 0 when it succeeded or no handshake ended. *ok (may
 * be NULL) is set to true when a handshake succeeded. */
int kgb_curve_monitor_poll(void *mon, bool *ok, int *why);
/* Stop monitoring sock and close the monitor; sets *mon to NULL. */
void kgb_curve_monitor_destroy(void **mon, void *sock);

#endif
