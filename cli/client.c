/* Request/reply with the coordinator over a ZeroMQ DEALER socket. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "cli.h"
#include "client.h"
#include "cluster.h"
#include "curve.h"
#include "util.h"

struct kgb_cli_client {
	void *ctx;
	void *sock;
	char *endpoint;            /* the one connected: eps[cur] */
	char **eps;                /* every endpoint given (the active coordinator and its standbys) */
	size_t nep, cur;
	double timeout_s;
	uint64_t seq;
	kgb_curve_client_t curve;  /* from the environment (docs/security.md) */
	void *mon;                 /* handshake monitor (with CURVE or without) */
	bool handshake_failed;     /* a CURVE handshake failed other than by refusal */
	unsigned failures;         /* handshakes failed since the last that succeeded */
};

/* Handshakes that fail without detail, one after the other, before the client says
 * why instead of waiting out its timeout: ZeroMQ reconnects every 100 ms, and a
 * coordinator that is down fails no handshake (the connection is refused first). */
#define HANDSHAKE_FAILURES_MAX 3

/* A DEALER socket connected to c->endpoint (with CURVE when configured). Returns 0,
 * or -1 with err. */
static int open_socket(kgb_cli_client_t *c, char *err, size_t errlen)
{
	int linger = 0;
	int64_t maxmsg = (int64_t)KGB_MAX_FRAME_CLI;
	c->sock = zmq_socket(c->ctx, ZMQ_DEALER);
	if (!c->sock) {
		kgb_err(err, errlen, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
	zmq_setsockopt(c->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
	if (c->nep > 1) {
		/* a request goes only to a coordinator that is connected: one that is down
		 * gives way to the next in the list */
		int immediate = 1;
		zmq_setsockopt(c->sock, ZMQ_IMMEDIATE, &immediate, sizeof immediate);
	}
	if (kgb_curve_client_apply(&c->curve, c->sock, err, errlen) != 0)
		return -1;
	/* with CURVE or without: a handshake the coordinator refuses is said at once */
	if (!(c->mon = kgb_curve_monitor_new(c->ctx, c->sock, err, errlen)))
		return -1;
	if (zmq_connect(c->sock, c->endpoint) != 0) {
		kgb_err(err, errlen, "cannot connect to coordinator endpoint '%s': %s", c->endpoint,
		        zmq_strerror(zmq_errno()));
		return -1;
	}
	return 0;
}

static void close_socket(kgb_cli_client_t *c)
{
	kgb_curve_monitor_destroy(&c->mon, c->sock);
	if (c->sock)
		zmq_close(c->sock);
	c->sock = NULL;
	c->handshake_failed = false;
	c->failures = 0;
}

/* Connect a DEALER socket; see client.h. */
kgb_cli_client_t *kgb_cli_client_new(const char *endpoint, double timeout_s, char *err, size_t errlen)
{
	kgb_cli_client_t *c = kgb_xcalloc(1, sizeof *c);

	c->nep = kgb_endpoint_list(endpoint, &c->eps); /* "host:port" means tcp:// */
	c->endpoint = c->eps[0];
	c->timeout_s = timeout_s > 0 ? timeout_s : KGB_CLI_DEFAULT_TIMEOUT_S;
	/* a seq that differs between runs, so a late reply to another process's request
	 * could never be taken for ours */
	c->seq = ((uint64_t)getpid() << 32) ^ (uint64_t)kgb_wall_ms();
	c->ctx = zmq_ctx_new();
	if (!c->ctx) {
		kgb_err(err, errlen, "cannot create a ZeroMQ context: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (kgb_curve_client_from_env(&c->curve, err, errlen) != 0 || open_socket(c, err, errlen) != 0)
		goto fail;
	/* the socket has its copy; with several endpoints the next socket needs it too */
	if (c->nep == 1)
		memset(c->curve.secret, 0, sizeof c->curve.secret);
	return c;
fail:
	kgb_cli_client_destroy(&c);
	return NULL;
}

/* Close the socket and free the client; see client.h. */
void kgb_cli_client_destroy(kgb_cli_client_t **cp)
{
	kgb_cli_client_t *c = cp ? *cp : NULL;
	if (!c)
		return;
	close_socket(c);
	memset(&c->curve, 0, sizeof c->curve);
	if (c->ctx)
		zmq_ctx_term(c->ctx);
	kgb_endpoint_list_free(c->eps, c->nep);
	free(c);
	*cp = NULL;
}

static long remaining_ms(double deadline_ms)
{
	double r = deadline_ms - kgb_now_ms();
	return r > 0 ? (long)(r + 0.999) : 0;
}

static int no_reply(const kgb_cli_client_t *c, char *err, size_t errlen)
{
	if (c->curve.on)
		kgb_err(err, errlen,
		        "no reply from coordinator at %s within %gs: is kgb-coordinator running? CURVE is configured "
		        "(KGB_CURVE_SERVER_KEY): %s",
		        c->endpoint, c->timeout_s,
		        c->handshake_failed ? "the handshake failed; is the server key the coordinator's public key, "
		                              "and does the coordinator run with CURVE?"
		                            : "check that the server key is the coordinator's public key");
	else
		kgb_err(err, errlen, "no reply from coordinator at %s within %gs: is kgb-coordinator running?",
		        c->endpoint, c->timeout_s);
	return KGB_CLI_EXIT_NOCOORD;
}

/* Has the coordinator refused our key, or our handshake (no CURVE against one with
 * CURVE, a wrong server key)? Returns the exit code with err set, or 0. */
static int check_refused(kgb_cli_client_t *c, char *err, size_t errlen)
{
	if (!c->mon)
		return 0;
	bool ok = false;
	int why = KGB_CURVE_FAIL_NONE;
	int st = kgb_curve_monitor_poll(c->mon, &ok, &why);
	if (ok)
		c->failures = 0;
	if (st < 0) {
		c->handshake_failed = true;
		c->failures++;
		if (why == KGB_CURVE_FAIL_MECHANISM && !c->curve.on) {
			kgb_err(err, errlen,
			        "coordinator at %s refused our handshake: it requires CURVE and this client has no key "
			        "(set KGB_CURVE_SERVER_KEY_FILE to the coordinator's public key and "
			        "KGB_CURVE_SECRET_KEY_FILE to your own key from `kgb keygen`; docs/security.md)",
			        c->endpoint);
			return KGB_CLI_EXIT_REFUSED;
		}
		if (why == KGB_CURVE_FAIL_MECHANISM) {
			kgb_err(err, errlen,
			        "coordinator at %s refused our CURVE handshake: it runs without CURVE (unset "
			        "KGB_CURVE_SERVER_KEY and KGB_CURVE_SERVER_KEY_FILE, or start it with a CURVE key)",
			        c->endpoint);
			return KGB_CLI_EXIT_REFUSED;
		}
		if (why == KGB_CURVE_FAIL_CRYPTO || c->failures >= HANDSHAKE_FAILURES_MAX) {
			if (c->curve.on)
				kgb_err(err, errlen,
				        "CURVE handshake with %s failed %u time(s): the server key (KGB_CURVE_SERVER_KEY or "
				        "KGB_CURVE_SERVER_KEY_FILE, %s) is not the coordinator's public key (it logs its "
				        "key when it starts), or the coordinator runs without CURVE",
				        c->endpoint, c->failures, c->curve.server);
			else
				kgb_err(err, errlen,
				        "handshake with %s failed %u time(s): is it a kgb coordinator's CLI endpoint? One with "
				        "CURVE needs KGB_CURVE_SERVER_KEY_FILE and KGB_CURVE_SECRET_KEY_FILE (docs/security.md)",
				        c->endpoint, c->failures);
			return KGB_CLI_EXIT_REFUSED;
		}
	}
	if (st <= 0)
		return 0;
	kgb_err(err, errlen,
	        "coordinator at %s refused our key (CURVE public key %s, status %d): the coordinator's "
	        "KGB_CURVE_USERS_FILE must list it",
	        c->endpoint, c->curve.pub, st);
	return KGB_CLI_EXIT_REFUSED;
}

/* Receive one multipart message; keeps its last non-empty frame in *msg (initialised by
 * the caller). Returns 0 or -1 with errno from zmq. */
static int recv_message(void *sock, zmq_msg_t *msg)
{
	int more = 0;
	size_t more_len = sizeof more;

	do {
		zmq_msg_t part;
		zmq_msg_init(&part);
		if (zmq_msg_recv(&part, sock, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&part);
			return -1;
		}
		if (zmq_msg_size(&part) > 0) {
			zmq_msg_close(msg);
			zmq_msg_init(msg);
			zmq_msg_move(msg, &part);
		}
		zmq_msg_close(&part);
		zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &more_len);
	} while (more);
	return 0;
}

static const char *body_name(Kgb__Envelope__BodyCase b)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field(&kgb__envelope__descriptor, (unsigned)b);
	return f ? f->name : "none";
}

/* With several endpoints, how long one may take to connect before the next is tried. */
#define CONNECT_EACH_MS 1000.0

/* Why a try gave way to another (call_one's *again). */
enum { TRY_DONE = 0, TRY_UNCONNECTED, TRY_NOT_ACTIVE };

/* One try at the endpoint connected now, until deadline. *again: the request did not
 * reach a coordinator that serves (none connected, with several endpoints, or one
 * that is not active): another endpoint, or this one later, may take it. */
static int call_one(kgb_cli_client_t *c, Kgb__Envelope *req, Kgb__Envelope__BodyCase expect,
                    Kgb__Envelope **reply, char *err, size_t errlen, double deadline, int *again)
{
	size_t len = 0;
	uint8_t *buf;
	int rc = KGB_CLI_EXIT_NOCOORD;

	double start = kgb_now_ms();
	*again = TRY_DONE;
	*reply = NULL;
	req->seq = ++c->seq;
	buf = kgb_wire_pack(req, &len);
	KGB_ASSERT(buf != NULL);
	/* a DEALER with no connected peer may refuse to queue: wait for it up to the deadline */
	for (;;) {
		if (zmq_send(c->sock, buf, len, ZMQ_DONTWAIT) >= 0)
			break;
		if (zmq_errno() != EAGAIN && zmq_errno() != EINTR) {
			kgb_err(err, errlen, "cannot send to coordinator at %s: %s", c->endpoint,
			        zmq_strerror(zmq_errno()));
			goto out;
		}
		zmq_pollitem_t it = { c->sock, 0, ZMQ_POLLOUT, 0 };
		long ms = remaining_ms(deadline);
		if ((rc = check_refused(c, err, errlen)) != 0)
			goto out;
		rc = KGB_CLI_EXIT_NOCOORD;
		if (c->nep > 1 && kgb_now_ms() - start >= CONNECT_EACH_MS) {
			kgb_err(err, errlen, "no connection to the coordinator at %s in %.0f s: is kgb-coordinator running "
			        "there?", c->endpoint, CONNECT_EACH_MS / 1000);
			*again = TRY_UNCONNECTED;
			goto out;
		}
		if (ms <= 0) {
			rc = no_reply(c, err, errlen);
			goto out;
		}
		zmq_poll(&it, 1, KGB_MIN(ms, 100L));
	}
	for (;;) {
		zmq_pollitem_t it[2] = { { c->sock, 0, ZMQ_POLLIN, 0 }, { c->mon, 0, ZMQ_POLLIN, 0 } };
		long ms = remaining_ms(deadline);
		if ((rc = check_refused(c, err, errlen)) != 0)
			goto out;
		rc = KGB_CLI_EXIT_NOCOORD;
		if (ms <= 0) {
			rc = no_reply(c, err, errlen);
			goto out;
		}
		int n = zmq_poll(it, c->mon ? 2 : 1, ms);
		if (n < 0) {
			if (zmq_errno() == EINTR)
				continue;
			kgb_err(err, errlen, "polling the coordinator socket: %s", zmq_strerror(zmq_errno()));
			goto out;
		}
		if (n == 0 || !(it[0].revents & ZMQ_POLLIN))
			continue;
		zmq_msg_t msg;
		zmq_msg_init(&msg);
		if (recv_message(c->sock, &msg) < 0) {
			zmq_msg_close(&msg);
			continue;
		}
		char uerr[256];
		Kgb__Envelope *env = kgb_wire_unpack(zmq_msg_data(&msg), zmq_msg_size(&msg),
		                                     KGB_MAX_FRAME_CLI, uerr, sizeof uerr);
		zmq_msg_close(&msg);
		if (!env) {
			kgb_err(err, errlen, "bad reply from coordinator at %s: %s", c->endpoint, uerr);
			rc = KGB_CLI_EXIT_REFUSED;
			goto out;
		}
		if (env->seq != req->seq) {
			/* a late reply to an earlier request */
			kgb_wire_free(env);
			continue;
		}
		/* the coordinator this client means, not another store's on the same endpoint */
		if (kgb_cluster_check(c->endpoint, env->cluster_id, err, errlen) != 0) {
			kgb_wire_free(env);
			rc = KGB_CLI_EXIT_REFUSED;
			goto out;
		}
		if (env->body_case == KGB__ENVELOPE__BODY_ERROR && env->error && env->error->not_active) {
			kgb_err(err, errlen, "the coordinator at %s is not active: %s", c->endpoint,
			        env->error->reason ? env->error->reason : "");
			kgb_wire_free(env);
			rc = KGB_CLI_EXIT_NOCOORD;
			*again = TRY_NOT_ACTIVE;
			goto out;
		}
		if (env->body_case == KGB__ENVELOPE__BODY_ERROR) {
			kgb_err(err, errlen, "coordinator refused the request: %s",
			        env->error && env->error->reason && *env->error->reason ? env->error->reason
			                                                                : "(no reason given)");
			kgb_wire_free(env);
			rc = KGB_CLI_EXIT_REFUSED;
			goto out;
		}
		if (env->body_case != expect) {
			kgb_err(err, errlen, "coordinator at %s answered with '%s', expected '%s'", c->endpoint,
			        body_name(env->body_case), body_name(expect));
			kgb_wire_free(env);
			rc = KGB_CLI_EXIT_REFUSED;
			goto out;
		}
		*reply = env;
		rc = 0;
		goto out;
	}
out:
	free(buf);
	return rc;
}

/* Send a request and wait for its reply, following the active coordinator among the
 * endpoints given; see client.h. */
int kgb_cli_client_call(kgb_cli_client_t *c, Kgb__Envelope *req, Kgb__Envelope__BodyCase expect,
                        Kgb__Envelope **reply, char *err, size_t errlen)
{
	double deadline = kgb_now_ms() + c->timeout_s * 1000.0;
	char why[512] = ""; /* a standby's answer: it says more than a timeout after it */
	for (;;) {
		int again = TRY_DONE;
		int rc = call_one(c, req, expect, reply, err, errlen, deadline, &again);
		if (rc == KGB_CLI_EXIT_NOCOORD && again != TRY_NOT_ACTIVE && why[0])
			kgb_strlcpy(err, why, errlen);
		if (rc == 0 || again == TRY_DONE || kgb_now_ms() >= deadline)
			return rc;
		if (again == TRY_NOT_ACTIVE)
			kgb_strlcpy(why, err, sizeof why);
		if (c->nep > 1) {
			/* a fresh socket: nothing of this request may go to the one left */
			close_socket(c);
			c->cur = (c->cur + 1) % c->nep;
			c->endpoint = c->eps[c->cur];
			if (open_socket(c, err, errlen) != 0)
				return KGB_CLI_EXIT_USAGE;
		}
		/* after a round through all of them: a pause before the next */
		if (c->cur == 0)
			usleep((useconds_t)KGB_MIN(200000.0, KGB_MAX(0.0, deadline - kgb_now_ms()) * 1000.0));
	}
}

/* One request on a fresh connection; see client.h. */
int kgb_cli_request(const struct kgb_cli_global *g, const char *cmd, Kgb__Envelope *req,
                    Kgb__Envelope__BodyCase expect, Kgb__Envelope **reply)
{
	char err[512];
	kgb_cli_client_t *c = kgb_cli_client_new(g->endpoint, g->timeout_s, err, sizeof err);
	int rc;

	*reply = NULL;
	if (!c) {
		fprintf(stderr, "kgb %s: %s\n", cmd, err);
		return KGB_CLI_EXIT_USAGE;
	}
	rc = kgb_cli_client_call(c, req, expect, reply, err, sizeof err);
	if (rc != 0)
		fprintf(stderr, "kgb %s: %s\n", cmd, err);
	kgb_cli_client_destroy(&c);
	return rc;
}
