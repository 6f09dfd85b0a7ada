/* Request/reply with the coordinator over ZeroMQ, for the kgb CLI.
 *
 * The client holds one DEALER socket connected to the coordinator's CLI endpoint (a
 * ROUTER). A request is one frame, a serialised kgb.Envelope with a fresh seq; the
 * reply is the envelope whose seq matches (replies to earlier, timed-out requests are
 * read and dropped). An empty delimiter frame before the envelope is tolerated. */
#ifndef KGB_CLI_CLIENT_H
#define KGB_CLI_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include "wire.h"

typedef struct kgb_cli_client kgb_cli_client_t;

/* Connect to endpoint ("tcp://host:port", "ipc://path"); replies are awaited for up
 * to timeout_s seconds each. Connecting does not wait for the coordinator (ZeroMQ
 * connects in the background). Returns the client (free with
 * kgb_cli_client_destroy) or NULL with err naming the endpoint. */
kgb_cli_client_t *kgb_cli_client_new(const char *endpoint, double timeout_s, char *err, size_t errlen);
void kgb_cli_client_destroy(kgb_cli_client_t **c);

/* Send req (its body set by the caller; version and seq are set here) and wait for
 * the reply with the same seq. The reply must carry body `expect` (or an ErrorReply).
 * Returns 0 and *reply (free with kgb_wire_free), or a CLI exit code with err set:
 *   KGB_CLI_EXIT_NOCOORD  no reply within the timeout ("no reply from coordinator at
 *                         tcp://...: is kgb-coordinator running?")
 *   KGB_CLI_EXIT_REFUSED  the coordinator sent an ErrorReply, a reply of another kind,
 *                         or a frame that does not decode. */
int kgb_cli_client_call(kgb_cli_client_t *c, Kgb__Envelope *req, Kgb__Envelope__BodyCase expect,
                        Kgb__Envelope **reply, char *err, size_t errlen);

/* One-shot helper: connect to g's endpoint, call, disconnect. On failure the error is
 * printed to stderr as "kgb CMD: ...". Returns 0 or the exit code. */
struct kgb_cli_global;
int kgb_cli_request(const struct kgb_cli_global *g, const char *cmd, Kgb__Envelope *req,
                    Kgb__Envelope__BodyCase expect, Kgb__Envelope **reply);

#endif
