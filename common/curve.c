/* CurveZMQ key files, allowlists, client set-up and handshake monitor: see curve.h. */
#include "curve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "log.h"
#include "util.h"

static const char z85_alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Decode a Z85 key of exactly KGB_CURVE_Z85_LEN characters into out. */
static bool decode_key(const char *s, size_t len, uint8_t out[KGB_CURVE_KEY_BYTES])
{
	char buf[KGB_CURVE_Z85_LEN + 1];
	if (len != KGB_CURVE_Z85_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == 0 || !strchr(z85_alphabet, s[i]))
			return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	return zmq_z85_decode(out, buf) != NULL;
}

/* See curve.h. */
bool kgb_curve_key_valid(const char *s, size_t len)
{
	uint8_t k[KGB_CURVE_KEY_BYTES];
	return s && decode_key(s, len, k);
}

/* A token for an error message: at most 48 characters, non-printable bytes as '?'. */
static const char *shown(const char *s, size_t len, char *buf, size_t buflen)
{
	size_t n = KGB_MIN(len, buflen - 4);
	for (size_t i = 0; i < n; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (n < len)
		memcpy(buf + n, "...", 4);
	else
		buf[n] = 0;
	return buf;
}

/* See curve.h. */
int kgb_curve_key_load(const char *path, bool secret, char out[KGB_CURVE_Z85_LEN + 1], char *err, size_t errlen)
{
	size_t len = 0;
	char rerr[512];
	char *text = kgb_read_file(path, &len, rerr, sizeof rerr);
	int rc = -1;
	if (!text)
		return kgb_err(err, errlen, "%s key file: %s", secret ? "secret" : "public", rerr);
	if (strlen(text) != len) {
		kgb_err(err, errlen, "%s: not a key file (it contains NUL bytes)", path);
		goto out;
	}
	const char *p = text;
	int line = 0;
	while (*p) {
		line++;
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		size_t i = 0;
		while (i < ll && is_blank(p[i]))
			i++;
		size_t t = i;
		while (t < ll && !is_blank(p[t]))
			t++;
		bool valid = kgb_curve_key_valid(p + i, t - i);
		if (i < ll && p[i] != '#') {
			char b[64];
			if (!valid) {
				kgb_err(err, errlen, "%s:%d: '%s' is not a CURVE key (40 Z85 characters, as kgb keygen writes)",
				        path, line, shown(p + i, t - i, b, sizeof b));
				goto out;
			}
			memcpy(out, p + i, KGB_CURVE_Z85_LEN);
			out[KGB_CURVE_Z85_LEN] = 0;
			rc = 0;
			goto out;
		}
		p = eol ? eol + 1 : p + ll;
	}
	kgb_err(err, errlen, "%s: no key in the file (expected one line of 40 Z85 characters)", path);
out:
	if (rc == 0 && secret) {
		struct stat st;
		if (stat(path, &st) == 0 && (st.st_mode & 077))
			log_warn("%s: the secret key file is readable by others (mode %03o): chmod 600 it", path,
			         (unsigned)(st.st_mode & 0777));
	}
	if (len)
		memset(text, 0, len);
	free(text);
	return rc;
}

/* See curve.h. */
int kgb_curve_public_of(const char *secret, char out[KGB_CURVE_Z85_LEN + 1], char *err, size_t errlen)
{
	if (!secret || !kgb_curve_key_valid(secret, strlen(secret)))
		return kgb_err(err, errlen, "not a Z85 secret key");
	if (zmq_curve_public(out, secret) != 0)
		return kgb_err(err, errlen, "cannot derive the public key: %s", zmq_strerror(zmq_errno()));
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const kgb_curve_entry_t *x = a, *y = b;
	int c = memcmp(x->key, y->key, KGB_CURVE_KEY_BYTES);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* See curve.h. */
void kgb_curve_allow_destroy(kgb_curve_allow_t **pa)
{
	kgb_curve_allow_t *a = pa ? *pa : NULL;
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].name);
	free(a->v);
	free(a->path);
	free(a);
	*pa = NULL;
}

/* See curve.h. */
int kgb_curve_allow_parse(const char *text, const char *path, kgb_curve_allow_t **out, char *err, size_t errlen)
{
	kgb_curve_allow_t *a = kgb_xcalloc(1, sizeof *a);
	size_t cap = 0;
	int line = 0;
	const char *p = text;
	a->path = kgb_xstrdup(path ? path : "(allowlist)");
	*out = NULL;
	if (strncmp(text, KGB_CURVE_SECRET_MARK, strlen(KGB_CURVE_SECRET_MARK)) == 0) {
		kgb_err(err, errlen, "%s is a secret key file: an allowlist takes public keys (the PREFIX.pub files)",
		        a->path);
		goto fail;
	}
	while (*p) {
		line++;
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);
		size_t i = 0, t;
		while (i < ll && is_blank(p[i]))
			i++;
		for (t = i; t < ll && !is_blank(p[t]); t++)
			;
		bool valid = kgb_curve_key_valid(p + i, t - i);
		if (i == ll || p[i] == '#')
			goto next;
		if (!valid) {
			char b[64];
			kgb_err(err, errlen,
			        "%s:%d: '%s' is not a CURVE public key (40 Z85 characters, as kgb keygen writes to "
			        "PREFIX.pub)",
			        a->path, line, shown(p + i, t - i, b, sizeof b));
			goto fail;
		}
		if (a->n == cap) {
			cap = cap ? cap * 2 : 16;
			a->v = kgb_xrealloc(a->v, cap * sizeof *a->v);
		}
		kgb_curve_entry_t *e = &a->v[a->n++];
		memset(e, 0, sizeof *e);
		decode_key(p + i, t - i, e->key);
		memcpy(e->z85, p + i, KGB_CURVE_Z85_LEN);
		e->line = line;
		/* the name: what follows, up to a '#' that starts a word */
		size_t ns = t, ne;
		while (ns < ll && is_blank(p[ns]))
			ns++;
		for (ne = ns; ne < ll; ne++)
			if (p[ne] == '#' && (ne == ns || is_blank(p[ne - 1])))
				break;
		while (ne > ns && is_blank(p[ne - 1]))
			ne--;
		/* a last word role=ROLE is the role, not part of the name */
		size_t ws = ne;
		while (ws > ns && !is_blank(p[ws - 1]))
			ws--;
		if (ne - ws > 5 && memcmp(p + ws, "role=", 5) == 0) {
			char b[64];
			if (ne - ws == 10 && memcmp(p + ws, "role=admin", 10) == 0)
				e->admin = true;
			else if (!(ne - ws == 9 && memcmp(p + ws, "role=user", 9) == 0)) {
				kgb_err(err, errlen, "%s:%d: '%s' is not a role (role=user or role=admin)", a->path, line,
				        shown(p + ws, ne - ws, b, sizeof b));
				goto fail;
			}
			ne = ws;
			while (ne > ns && is_blank(p[ne - 1]))
				ne--;
		}
		e->name = kgb_xmalloc(ne - ns + 1);
		memcpy(e->name, p + ns, ne - ns);
		e->name[ne - ns] = 0;
		for (char *c = e->name; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	next:
		p = eol ? eol + 1 : p + ll;
	}
	if (a->n)
		qsort(a->v, a->n, sizeof *a->v, entry_cmp);
	for (size_t k = 1; k < a->n; k++)
		if (memcmp(a->v[k].key, a->v[k - 1].key, KGB_CURVE_KEY_BYTES) == 0) {
			kgb_err(err, errlen, "%s:%d: key %s is already listed on line %d", a->path, a->v[k].line,
			        a->v[k].z85, a->v[k - 1].line);
			goto fail;
		}
	*out = a;
	return 0;
fail:
	kgb_curve_allow_destroy(&a);
	return -1;
}

/* See curve.h. */
int kgb_curve_allow_load(const char *path, kgb_curve_allow_t **out, char *err, size_t errlen)
{
	size_t len = 0;
	char rerr[512];
	*out = NULL;
	char *text = kgb_read_file(path, &len, rerr, sizeof rerr);
	if (!text)
		return kgb_err(err, errlen, "allowlist: %s", rerr);
	int rc;
	if (strlen(text) != len)
		rc = kgb_err(err, errlen, "%s: not an allowlist (it contains NUL bytes)", path);
	else
		rc = kgb_curve_allow_parse(text, path, out, err, errlen);
	free(text);
	return rc;
}

static int key_cmp(const void *k, const void *e)
{
	return memcmp(k, ((const kgb_curve_entry_t *)e)->key, KGB_CURVE_KEY_BYTES);
}

/* See curve.h. */
const kgb_curve_entry_t *kgb_curve_allow_find(const kgb_curve_allow_t *a, const uint8_t *key, size_t keylen)
{
	if (!a || !key || keylen != KGB_CURVE_KEY_BYTES || a->n == 0)
		return NULL;
	return bsearch(key, a->v, a->n, sizeof *a->v, key_cmp);
}

/* See curve.h. */
bool kgb_curve_endpoint_is_local(const char *ep)
{
	if (!ep)
		return false;
	if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0)
		return true;
	if (strncmp(ep, "tcp://", 6) != 0)
		return false;
	const char *h = ep + 6;
	const char *colon = strrchr(h, ':');
	size_t hl = colon ? (size_t)(colon - h) : strlen(h);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 9 && strncmp(h, "localhost", 9) == 0)
		return true;
	if (hl == 3 && strncmp(h, "::1", 3) == 0)
		return true;
	if (hl == 2 && strncmp(h, "lo", 2) == 0)
		return true;
	if (hl > 4 && strncmp(h, "127.", 4) == 0) {
		for (size_t i = 4; i < hl; i++)
			if (!((h[i] >= '0' && h[i] <= '9') || h[i] == '.'))
				return false;
		return true;
	}
	return false;
}

/* See curve.h. */
int kgb_curve_client_from_env(kgb_curve_client_t *cc, char *err, size_t errlen)
{
	const char *sk = getenv("KGB_CURVE_SERVER_KEY");
	const char *skf = getenv("KGB_CURVE_SERVER_KEY_FILE");
	const char *sec = getenv("KGB_CURVE_SECRET_KEY_FILE");
	const char *pubf = getenv("KGB_CURVE_PUBLIC_KEY_FILE");
	char e2[512];
	memset(cc, 0, sizeof *cc);
	if (sk && !*sk)
		sk = NULL;
	if (skf && !*skf)
		skf = NULL;
	if (!sk && !skf)
		return 0;
	if (sk && skf)
		return kgb_err(err, errlen, "KGB_CURVE_SERVER_KEY and KGB_CURVE_SERVER_KEY_FILE are both set: set one");
	if (sk) {
		if (!kgb_curve_key_valid(sk, strlen(sk))) {
			char b[64];
			return kgb_err(err, errlen,
			               "KGB_CURVE_SERVER_KEY: '%s' is not a CURVE public key (40 Z85 characters: the "
			               "coordinator's PREFIX.pub)",
			               shown(sk, strlen(sk), b, sizeof b));
		}
		kgb_strlcpy(cc->server, sk, sizeof cc->server);
	} else if (kgb_curve_key_load(skf, false, cc->server, e2, sizeof e2) != 0) {
		return kgb_err(err, errlen, "KGB_CURVE_SERVER_KEY_FILE: %s", e2);
	}
	if (!sec || !*sec)
		return kgb_err(err, errlen,
		               "CURVE is configured (KGB_CURVE_SERVER_KEY%s) but KGB_CURVE_SECRET_KEY_FILE is not set: "
		               "this side needs a key pair of its own (kgb keygen)",
		               sk ? "" : "_FILE");
	if (kgb_curve_key_load(sec, true, cc->secret, e2, sizeof e2) != 0)
		return kgb_err(err, errlen, "KGB_CURVE_SECRET_KEY_FILE: %s", e2);
	if (kgb_curve_public_of(cc->secret, cc->pub, e2, sizeof e2) != 0)
		return kgb_err(err, errlen, "KGB_CURVE_SECRET_KEY_FILE %s: %s", sec, e2);
	if (pubf && *pubf) {
		char given[KGB_CURVE_Z85_LEN + 1];
		if (kgb_curve_key_load(pubf, false, given, e2, sizeof e2) != 0)
			return kgb_err(err, errlen, "KGB_CURVE_PUBLIC_KEY_FILE: %s", e2);
		if (strcmp(given, cc->pub) != 0)
			return kgb_err(err, errlen,
			               "KGB_CURVE_PUBLIC_KEY_FILE %s holds %s, which is not the public key of the secret "
			               "key in %s (%s)",
			               pubf, given, sec, cc->pub);
	}
	cc->on = true;
	return 0;
}

/* See curve.h. */
int kgb_curve_client_apply(const kgb_curve_client_t *cc, void *sock, char *err, size_t errlen)
{
	if (!cc->on)
		return 0;
	if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, cc->server, KGB_CURVE_Z85_LEN) != 0 ||
	    zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, cc->pub, KGB_CURVE_Z85_LEN) != 0 ||
	    zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, cc->secret, KGB_CURVE_Z85_LEN) != 0)
		return kgb_err(err, errlen, "cannot set the CURVE keys on the socket: %s%s", zmq_strerror(zmq_errno()),
		               zmq_has("curve") ? "" : " (this libzmq was built without CURVE)");
	return 0;
}

/* See curve.h. */
void *kgb_curve_monitor_new(void *zctx, void *sock, char *err, size_t errlen)
{
	char ep[64];
	int linger = 0;
	snprintf(ep, sizeof ep, "inproc://kgb-curve-monitor-%p", sock);
	if (zmq_socket_monitor(sock, ep,
	                       ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0) {
		kgb_err(err, errlen, "cannot monitor the socket: %s", zmq_strerror(zmq_errno()));
		return NULL;
	}
	void *mon = zmq_socket(zctx, ZMQ_PAIR);
	if (!mon) {
		kgb_err(err, errlen, "cannot create the monitor socket: %s", zmq_strerror(zmq_errno()));
		zmq_socket_monitor(sock, NULL, 0);
		return NULL;
	}
	zmq_setsockopt(mon, ZMQ_LINGER, &linger, sizeof linger);
	if (zmq_connect(mon, ep) != 0) {
		kgb_err(err, errlen, "cannot connect the monitor socket: %s", zmq_strerror(zmq_errno()));
		zmq_close(mon);
		zmq_socket_monitor(sock, NULL, 0);
		return NULL;
	}
	return mon;
}

/* See curve.h. */
int kgb_curve_monitor_poll(void *mon, bool *ok, int *why)
{
	int result = 0;
	if (why)
		*why = KGB_CURVE_FAIL_NONE;
	for (;;) {
		zmq_msg_t m;
		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			break;
		}
		uint16_t ev = 0;
		uint32_t val = 0;
		if (zmq_msg_size(&m) >= 6) {
			memcpy(&ev, zmq_msg_data(&m), 2);
			memcpy(&val, (const uint8_t *)zmq_msg_data(&m) + 2, 4);
		}
		/* the rest of the event (the endpoint frame) */
		while (zmq_msg_more(&m)) {
			zmq_msg_close(&m);
			zmq_msg_init(&m);
			if (zmq_msg_recv(&m, mon, ZMQ_DONTWAIT) < 0)
				break;
		}
		zmq_msg_close(&m);
		/* events in order: the result is the outcome of the latest handshake */
		if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
			result = val ? (int)val : 400;
		} else if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
			result = -1;
			if (why)
				*why = ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL           ? KGB_CURVE_FAIL_OTHER
				       : val == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH ? KGB_CURVE_FAIL_MECHANISM
				       : val == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC      ? KGB_CURVE_FAIL_CRYPTO
				                                                           : KGB_CURVE_FAIL_OTHER;
		} else if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
			result = 0;
			if (why)
				*why = KGB_CURVE_FAIL_NONE;
			if (ok)
				*ok = true;
		}
	}
	return result;
}

/* See curve.h. */
void kgb_curve_monitor_destroy(void **mon, void *sock)
{
	if (!mon || !*mon)
		return;
	if (sock)
		zmq_socket_monitor(sock, NULL, 0);
	zmq_close(*mon);
	*mon = NULL;
}
