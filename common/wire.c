/* Framing: one serialized kgb.Envelope per ZeroMQ frame. */
#include "wire.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "util.h"

/* Pack env (setting its version) into a heap buffer the caller frees. */
static char *cluster_id;

void kgb_wire_set_cluster_id(const char *id)
{
	free(cluster_id);
	cluster_id = id ? kgb_xstrdup(id) : NULL;
}

uint8_t *kgb_wire_pack(Kgb__Envelope *env, size_t *len)
{
	KGB_ASSERT(env && len);
	env->version = KGB_PROTOCOL_VERSION;
	/* the envelope may be the caller's or an unpacked one: lend it the id for packing */
	char *own = env->cluster_id;
	bool lend = cluster_id && (!own || !*own);
	if (lend)
		env->cluster_id = cluster_id;
	size_t n = kgb__envelope__get_packed_size(env);
	uint8_t *buf = kgb_xmalloc(n ? n : 1);
	size_t w = kgb__envelope__pack(env, buf);
	KGB_ASSERT_MSG(w == n, "packed %zu of %zu bytes", w, n);
	if (lend)
		env->cluster_id = own;
	*len = n;
	return buf;
}

/* protobuf-c keeps fields numbered 0 as "unknown" although no valid encoder writes
 * them (and it refuses them when re-reading its own output). Such a frame is
 * malformed: find one anywhere in the message tree. */
static bool has_field_zero(const ProtobufCMessage *m, int depth)
{
	if (!m || depth > 32)
		return depth > 32;
	for (unsigned i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return true;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (unsigned f = 0; f < d->n_fields; f++) {
		const ProtobufCFieldDescriptor *fd = &d->fields[f];
		if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		const char *base = (const char *)m;
		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + fd->quantifier_offset);
			ProtobufCMessage *const *arr = *(ProtobufCMessage *const *const *)(base + fd->offset);
			for (size_t k = 0; k < n; k++)
				if (has_field_zero(arr[k], depth + 1))
					return true;
			continue;
		}
		if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
			continue;
		if (has_field_zero(*(ProtobufCMessage *const *)(base + fd->offset), depth + 1))
			return true;
	}
	return false;
}

/* Decode and check a frame; see wire.h. */
Kgb__Envelope *kgb_wire_unpack(const void *data, size_t len, size_t max, char *err, size_t errlen)
{
	if (len > max) {
		kgb_err(err, errlen, "frame of %zu bytes exceeds the limit of %zu bytes", len, max);
		return NULL;
	}
	if (len == 0 || !data) {
		kgb_err(err, errlen, "empty frame");
		return NULL;
	}
	Kgb__Envelope *env = kgb__envelope__unpack(NULL, len, data);
	if (!env) {
		kgb_err(err, errlen, "undecodable frame of %zu bytes (not a kgb.Envelope)", len);
		return NULL;
	}
	if (has_field_zero(&env->base, 0)) {
		kgb_err(err, errlen, "malformed frame of %zu bytes (field number 0)", len);
		goto bad;
	}
	if (env->version != KGB_PROTOCOL_VERSION) {
		kgb_err(err, errlen, "protocol version %u, expected %u", env->version, KGB_PROTOCOL_VERSION);
		goto bad;
	}
	if (env->body_case == KGB__ENVELOPE__BODY__NOT_SET) {
		kgb_err(err, errlen, "envelope (seq %llu) has an empty or unknown body",
		        (unsigned long long)env->seq);
		goto bad;
	}
	return env;
bad:
	kgb__envelope__free_unpacked(env, NULL);
	return NULL;
}

/* Free an envelope returned by kgb_wire_unpack; NULL is fine. */
void kgb_wire_free(Kgb__Envelope *env)
{
	if (env)
		kgb__envelope__free_unpacked(env, NULL);
}

static void free_buf(void *data, void *hint)
{
	(void)hint;
	free(data);
}

/* Send [identity,] envelope. The body buffer is handed to zmq without a copy. */
int kgb_wire_send(void *sock, const void *identity, size_t idlen, Kgb__Envelope *env, int flags)
{
	size_t len;
	uint8_t *buf = kgb_wire_pack(env, &len);
	zmq_msg_t msg;
	if (zmq_msg_init_data(&msg, buf, len, free_buf, NULL) != 0) {
		int e = errno;
		free(buf);
		errno = e;
		return -1;
	}
	if (identity) {
		if (zmq_send(sock, identity, idlen, flags | ZMQ_SNDMORE) < 0) {
			int e = errno;
			zmq_msg_close(&msg);
			errno = e;
			return -1;
		}
	}
	if (zmq_msg_send(&msg, sock, flags) < 0) {
		int e = errno;
		zmq_msg_close(&msg);
		errno = e;
		return -1;
	}
	return 0;
}

Kgb__Envelope *kgb_wire_recv_routed(void *sock, int timeout_ms, uint8_t *id, size_t idcap, size_t *idlen, size_t max,
                                    char *err, size_t errlen)
{
	err[0] = 0;
	zmq_pollitem_t it = { .socket = sock, .events = ZMQ_POLLIN };
	if (zmq_poll(&it, 1, timeout_ms) <= 0)
		return NULL;
	int n = zmq_recv(sock, id, idcap, 0);
	if (n < 0) {
		snprintf(err, errlen, "recv id: %s", zmq_strerror(errno));
		return NULL;
	}
	*idlen = (size_t)n;
	zmq_msg_t m;
	zmq_msg_init(&m);
	if (zmq_msg_recv(&m, sock, 0) < 0) {
		snprintf(err, errlen, "recv body: %s", zmq_strerror(errno));
		zmq_msg_close(&m);
		return NULL;
	}
	char why[256];
	Kgb__Envelope *env = kgb_wire_unpack(zmq_msg_data(&m), zmq_msg_size(&m), max, why, sizeof why);
	zmq_msg_close(&m);
	if (!env)
		snprintf(err, errlen, "an undecodable frame: %s", why);
	return env;
}

int kgb_wire_send_result_ack(void *sock, const void *id, size_t idlen, uint64_t job_id, uint64_t epoch, bool accepted)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	Kgb__ResultAck ra = KGB__RESULT_ACK__INIT;
	ra.job_id = job_id;
	ra.epoch = epoch;
	ra.accepted = accepted;
	env.body_case = KGB__ENVELOPE__BODY_RESULT_ACK;
	env.result_ack = &ra;
	return kgb_wire_send(sock, id, idlen, &env, 0);
}

/* See wire.h. */
void kgb_phases_add(Kgb__JobPhases *to, const Kgb__JobPhases *from)
{
	const ProtobufCMessageDescriptor *d = &kgb__job_phases__descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *t = (char *)to + f->offset;
		const char *s = (const char *)from + f->offset;
		if (f->type == PROTOBUF_C_TYPE_DOUBLE)
			*(double *)t += *(const double *)s;
		else if (f->type == PROTOBUF_C_TYPE_UINT64)
			*(uint64_t *)t += *(const uint64_t *)s;
	}
}

/* See wire.h. */
void kgb_phases_profile(const Kgb__JobPhases *p, char *out, size_t outlen)
{
	const ProtobufCMessageDescriptor *d = &kgb__job_phases__descriptor;
	size_t o = 0;
	bool any = false;
	out[0] = 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		size_t nl = strlen(f->name);
		/* the p_*_ms fields, by their names without the prefix and unit */
		if (f->type != PROTOBUF_C_TYPE_DOUBLE || strncmp(f->name, "p_", 2) != 0 || nl < 6 ||
		    f->id == 305)   /* p_result_ms: the worker's, not a job's */
			continue;
		double v = *(const double *)((const char *)p + f->offset);
		any = any || v > 0;
		int n = snprintf(out + o, outlen - o, "%s%.*s %.0f", o ? ", " : "profile (ms): ", (int)(nl - 5), f->name + 2, v);
		if (n < 0 || (size_t)n >= outlen - o)
			return;
		o += (size_t)n;
	}
	if (!any && !p->p_cases) {
		out[0] = 0;
		return;
	}
	int n = snprintf(out + o, outlen - o, "; cases %llu, ref cache %llu hit / %llu miss",
	                 (unsigned long long)p->p_cases, (unsigned long long)p->ref_cache_hits,
	                 (unsigned long long)p->ref_cache_misses);
	if (n < 0 || (size_t)n >= outlen - o)
		return;
	o += (size_t)n;
	/* the recording's own breakdown (the r_*_ms fields), when a recorder ran */
	if (p->p_record_ms <= 0 || p->r_startup_ms + p->r_call_ms + p->r_other_ms <= 0)
		return;
	bool first = true;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		size_t nl = strlen(f->name);
		if (f->type != PROTOBUF_C_TYPE_DOUBLE || strncmp(f->name, "r_", 2) != 0 || nl < 6)
			continue;
		double v = *(const double *)((const char *)p + f->offset);
		n = snprintf(out + o, outlen - o, "%s%.*s %.0f", first ? "; recording (ms): " : ", ", (int)(nl - 5),
		             f->name + 2, v);
		if (n < 0 || (size_t)n >= outlen - o)
			return;
		o += (size_t)n;
		first = false;
	}
}
