/* Framing for the wire protocol: one kgb.Envelope per ZeroMQ frame. */
#ifndef KGB_WIRE_H
#define KGB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "proto/kgb.pb-c.h"

#define KGB_PROTOCOL_VERSION 1u
#define KGB_MAX_FRAME_WORKER (16u << 20)   /* worker socket: job results */
#define KGB_MAX_FRAME_CLI (256u << 20)     /* CLI socket: manifests with sources */
/* One candidate's plan and sources together. Every JobAssign carries them, so the
 * limit sits well under KGB_MAX_FRAME_WORKER; the manifest parser (CLI and
 * coordinator) refuses a candidate over it, and the coordinator never sends a
 * JobAssign over KGB_MAX_FRAME_WORKER (docs/security.md). */
#define KGB_MAX_CANDIDATE_BYTES (8u << 20)

/* Every envelope this process packs from now on carries id as its cluster_id
 * (the coordinator's, once its store is open); NULL: none. */
void kgb_wire_set_cluster_id(const char *id);

/* Serialise env (its version field is set to KGB_PROTOCOL_VERSION) into a heap
 * buffer; caller frees. */
uint8_t *kgb_wire_pack(Kgb__Envelope *env, size_t *len);
/* Decode a frame. Rejects frames larger than max, undecodable bytes, a version other
 * than KGB_PROTOCOL_VERSION, and an empty body, with the reason in err. Returns the
 * envelope (free with kgb_wire_free) or NULL. */
Kgb__Envelope *kgb_wire_unpack(const void *data, size_t len, size_t max, char *err, size_t errlen);
void kgb_wire_free(Kgb__Envelope *env);

/* Send env as one frame on a ZeroMQ socket, preceded by the routing identity frame
 * when identity != NULL (ROUTER sockets). flags: ZMQ_DONTWAIT etc. Returns 0 or -1
 * with errno from zmq. */
int kgb_wire_send(void *sock, const void *identity, size_t idlen, Kgb__Envelope *env, int flags);

/* On a ROUTER socket: wait at most timeout_ms for a frame, keep the peer's routing id
 * (id, idcap bytes; *idlen its length) and decode the envelope (max bytes at most).
 * NULL on a timeout (err empty) or a failure (the reason in err). */
Kgb__Envelope *kgb_wire_recv_routed(void *sock, int timeout_ms, uint8_t *id, size_t idcap, size_t *idlen, size_t max,
                                    char *err, size_t errlen);
/* Send the ResultAck of (job_id, epoch), accepted or not, to the peer id. */
int kgb_wire_send_result_ack(void *sock, const void *id, size_t idlen, uint64_t job_id, uint64_t epoch, bool accepted);

/* Add every figure of from to to (JobPhases: sums over jobs). */
void kgb_phases_add(Kgb__JobPhases *to, const Kgb__JobPhases *from);
/* The profile of p (docs/worker.md, "Where a case's time goes") as one line,
 * "profile (ms): inputs 12, reference 30, ...; cases 8, ref cache 6 hit / 2 miss";
 * empty when p holds none. */
void kgb_phases_profile(const Kgb__JobPhases *p, char *out, size_t outlen);

#endif
