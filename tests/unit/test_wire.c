/* Tests for common/wire.c: round trips of the protocol's messages, and rejection of
 * bad frames (version, size, garbage, empty body). */
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "test.h"
#include "util.h"
#include "wire.h"

/* pack, unpack, and return the decoded envelope (caller frees) */
static Kgb__Envelope *round_trip(Kgb__Envelope *env)
{
	size_t len;
	uint8_t *buf = kgb_wire_pack(env, &len);
	char err[256];
	Kgb__Envelope *back = kgb_wire_unpack(buf, len, KGB_MAX_FRAME_CLI, err, sizeof err);
	free(buf);
	if (!back)
		FAIL("unpack of a packed envelope failed: %s", err);
	if (back->body_case != env->body_case)
		FAIL("body case %d came back as %d", env->body_case, back->body_case);
	if (back->seq != env->seq)
		FAIL("seq %llu came back as %llu", (unsigned long long)env->seq, (unsigned long long)back->seq);
	if (back->version != KGB_PROTOCOL_VERSION)
		FAIL("version %u", back->version);
	return back;
}

TEST(wire_round_trip_worker_messages)
{
	Kgb__Device dev = KGB__DEVICE__INIT;
	dev.index = 2;
	dev.backend = "opencl";
	dev.name = "pthread-cpu";
	dev.platform = "opencl:pthread-cpu";
	dev.memory_bytes = 1ull << 36;
	Kgb__Device *devs[] = {&dev};
	Kgb__Register reg = KGB__REGISTER__INIT;
	reg.worker_name = "w1";
	reg.catalog_version = "abc";
	reg.pid = 4242;
	reg.n_devices = 1;
	reg.devices = devs;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.seq = 77;
	env.body_case = KGB__ENVELOPE__BODY_REGISTER;
	env.register_ = &reg;
	Kgb__Envelope *b = round_trip(&env);
	ASSERT_EQ_STR(b->register_->worker_name, "w1");
	ASSERT_EQ_INT(b->register_->pid, 4242);
	ASSERT_EQ_INT(b->register_->n_devices, 1);
	ASSERT_EQ_STR(b->register_->devices[0]->platform, "opencl:pthread-cpu");
	ASSERT_EQ_U64(b->register_->devices[0]->memory_bytes, 1ull << 36);
	ASSERT_EQ_INT(b->register_->devices[0]->index, 2);
	kgb_wire_free(b);

	Kgb__RegisterAck ack = KGB__REGISTER_ACK__INIT;
	ack.ok = 1;
	ack.worker_id = "w-3";
	ack.heartbeat_ms = 1000;
	ack.lease_ms = 5000;
	env.body_case = KGB__ENVELOPE__BODY_REGISTER_ACK;
	env.register_ack = &ack;
	b = round_trip(&env);
	ASSERT_EQ_STR(b->register_ack->worker_id, "w-3");
	ASSERT_EQ_INT(b->register_ack->lease_ms, 5000);
	kgb_wire_free(b);

	Kgb__RunningJob rj = KGB__RUNNING_JOB__INIT;
	rj.job_id = 9;
	rj.epoch = 3;
	Kgb__RunningJob *rjs[] = {&rj};
	Kgb__Heartbeat hb = KGB__HEARTBEAT__INIT;
	hb.worker_id = "w-3";
	hb.n_running = 1;
	hb.running = rjs;
	env.body_case = KGB__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->heartbeat->n_running, 1);
	ASSERT_EQ_U64(b->heartbeat->running[0]->epoch, 3);
	kgb_wire_free(b);

	uint64_t cancel[] = {5, 6};
	Kgb__HeartbeatAck hba = KGB__HEARTBEAT_ACK__INIT;
	hba.known = 1;
	hba.n_cancel_job_ids = 2;
	hba.cancel_job_ids = cancel;
	env.body_case = KGB__ENVELOPE__BODY_HEARTBEAT_ACK;
	env.heartbeat_ack = &hba;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->heartbeat_ack->n_cancel_job_ids, 2);
	ASSERT_EQ_U64(b->heartbeat_ack->cancel_job_ids[1], 6);
	kgb_wire_free(b);

	uint32_t cases[] = {0, 1, 7};
	uint8_t bin[] = {0, 1, 2, 0xff};
	Kgb__SourceFile sf = KGB__SOURCE_FILE__INIT;
	sf.name = "k.cubin";
	sf.content.data = bin;
	sf.content.len = sizeof bin;
	Kgb__SourceFile *sfs[] = {&sf};
	Kgb__JobAssign ja = KGB__JOB_ASSIGN__INIT;
	ja.job_id = 123456789012ull;
	ja.op = "add";
	ja.n_cases = 3;
	ja.cases = cases;
	ja.plan_json = "{\"kernels\":[]}";
	ja.n_sources = 1;
	ja.sources = sfs;
	ja.timing = 1;
	env.body_case = KGB__ENVELOPE__BODY_JOB_ASSIGN;
	env.job_assign = &ja;
	b = round_trip(&env);
	ASSERT_EQ_U64(b->job_assign->job_id, 123456789012ull);
	ASSERT_EQ_INT(b->job_assign->cases[2], 7);
	ASSERT_EQ_INT(b->job_assign->sources[0]->content.len, 4);
	ASSERT_EQ_INT(b->job_assign->sources[0]->content.data[3], 0xff);
	ASSERT_TRUE(b->job_assign->timing);
	kgb_wire_free(b);

	Kgb__Timing tm = KGB__TIMING__INIT;
	tm.median_ns = 1234.5;
	tm.samples = 10;
	tm.method = "cl-profiling-events";
	Kgb__CaseResult cr = KGB__CASE_RESULT__INIT;
	cr.case_index = 4;
	cr.verdict = KGB__VERDICT__VERDICT_WRONG_RESULT;
	cr.max_abs_err = 0.25;
	cr.timing = &tm;
	cr.message = "out[3] = 1, expected 2";
	Kgb__CaseResult *crs[] = {&cr};
	Kgb__JobResult jr = KGB__JOB_RESULT__INIT;
	jr.job_id = 1;
	jr.n_cases = 1;
	jr.cases = crs;
	jr.log = "compiled";
	env.body_case = KGB__ENVELOPE__BODY_JOB_RESULT;
	env.job_result = &jr;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->job_result->cases[0]->verdict, KGB__VERDICT__VERDICT_WRONG_RESULT);
	ASSERT_NEAR(b->job_result->cases[0]->timing->median_ns, 1234.5, 0);
	ASSERT_EQ_STR(b->job_result->cases[0]->timing->method, "cl-profiling-events");
	ASSERT_EQ_STR(b->job_result->cases[0]->message, "out[3] = 1, expected 2");
	kgb_wire_free(b);

	Kgb__ResultAck ra = KGB__RESULT_ACK__INIT;
	ra.job_id = 1;
	ra.accepted = 1;
	env.body_case = KGB__ENVELOPE__BODY_RESULT_ACK;
	env.result_ack = &ra;
	b = round_trip(&env);
	ASSERT_TRUE(b->result_ack->accepted);
	kgb_wire_free(b);

	Kgb__CancelJobs cj = KGB__CANCEL_JOBS__INIT;
	cj.n_job_ids = 2;
	cj.job_ids = cancel;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL_JOBS;
	env.cancel_jobs = &cj;
	b = round_trip(&env);
	ASSERT_EQ_U64(b->cancel_jobs->job_ids[0], 5);
	kgb_wire_free(b);

	Kgb__ErrorReply er = KGB__ERROR_REPLY__INIT;
	er.reason = "bad";
	env.body_case = KGB__ENVELOPE__BODY_ERROR;
	env.error = &er;
	b = round_trip(&env);
	ASSERT_EQ_STR(b->error->reason, "bad");
	kgb_wire_free(b);
}

TEST(wire_round_trip_cli_messages)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.seq = 5;
	Kgb__Envelope *b;

	Kgb__SubmitRequest sr = KGB__SUBMIT_REQUEST__INIT;
	sr.manifest_json = "{\"name\":\"demo\"}";
	sr.origin = "demo.json";
	env.body_case = KGB__ENVELOPE__BODY_SUBMIT;
	env.submit = &sr;
	b = round_trip(&env);
	ASSERT_EQ_STR(b->submit->origin, "demo.json");
	kgb_wire_free(b);

	Kgb__SubmitReply srp = KGB__SUBMIT_REPLY__INIT;
	srp.ok = 1;
	srp.campaign_id = 8;
	srp.jobs = 96;
	env.body_case = KGB__ENVELOPE__BODY_SUBMIT_REPLY;
	env.submit_reply = &srp;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->submit_reply->jobs, 96);
	kgb_wire_free(b);

	Kgb__StatusRequest st = KGB__STATUS_REQUEST__INIT;
	env.body_case = KGB__ENVELOPE__BODY_STATUS;
	env.status = &st; /* all fields default: still a present body */
	b = round_trip(&env);
	ASSERT_EQ_U64(b->status->campaign_id, 0);
	kgb_wire_free(b);

	Kgb__PlatformProgress pp = KGB__PLATFORM_PROGRESS__INIT;
	pp.platform = "cuda:nvidia-h200";
	pp.done = 3;
	pp.total = 10;
	Kgb__PlatformProgress *pps[] = {&pp};
	Kgb__CampaignStatus cs = KGB__CAMPAIGN_STATUS__INIT;
	cs.id = 8;
	cs.name = "demo";
	cs.state = "running";
	cs.created_unix = -1;
	cs.n_platforms = 1;
	cs.platforms = pps;
	Kgb__CampaignStatus *css[] = {&cs};
	Kgb__StatusReply str = KGB__STATUS_REPLY__INIT;
	str.n_campaigns = 1;
	str.campaigns = css;
	env.body_case = KGB__ENVELOPE__BODY_STATUS_REPLY;
	env.status_reply = &str;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->status_reply->campaigns[0]->created_unix, -1);
	ASSERT_EQ_INT(b->status_reply->campaigns[0]->platforms[0]->total, 10);
	kgb_wire_free(b);

	Kgb__ResultsRequest rr = KGB__RESULTS_REQUEST__INIT;
	rr.campaign_id = 8;
	env.body_case = KGB__ENVELOPE__BODY_RESULTS;
	env.results = &rr;
	b = round_trip(&env);
	ASSERT_EQ_U64(b->results->campaign_id, 8);
	kgb_wire_free(b);

	Kgb__ResultRow row = KGB__RESULT_ROW__INIT;
	row.method = "baseline";
	row.op = "add";
	row.speedup = 1.75;
	row.verdict = KGB__VERDICT__VERDICT_PASS;
	Kgb__ResultRow *rows[] = {&row};
	Kgb__ResultsReply rrp = KGB__RESULTS_REPLY__INIT;
	rrp.ok = 1;
	rrp.n_rows = 1;
	rrp.rows = rows;
	env.body_case = KGB__ENVELOPE__BODY_RESULTS_REPLY;
	env.results_reply = &rrp;
	b = round_trip(&env);
	ASSERT_NEAR(b->results_reply->rows[0]->speedup, 1.75, 0);
	ASSERT_EQ_STR(b->results_reply->rows[0]->op, "add");
	kgb_wire_free(b);

	Kgb__WorkersRequest wr = KGB__WORKERS_REQUEST__INIT;
	env.body_case = KGB__ENVELOPE__BODY_WORKERS;
	env.workers = &wr;
	b = round_trip(&env);
	kgb_wire_free(b);

	Kgb__WorkerInfo wi = KGB__WORKER_INFO__INIT;
	wi.worker_id = "w-1";
	wi.alive = 1;
	wi.last_seen_ms_ago = 250;
	Kgb__WorkerInfo *wis[] = {&wi};
	Kgb__WorkersReply wrp = KGB__WORKERS_REPLY__INIT;
	wrp.n_workers = 1;
	wrp.workers = wis;
	env.body_case = KGB__ENVELOPE__BODY_WORKERS_REPLY;
	env.workers_reply = &wrp;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->workers_reply->workers[0]->last_seen_ms_ago, 250);
	kgb_wire_free(b);

	Kgb__PlatformsRequest pr = KGB__PLATFORMS_REQUEST__INIT;
	env.body_case = KGB__ENVELOPE__BODY_PLATFORMS;
	env.platforms = &pr;
	b = round_trip(&env);
	kgb_wire_free(b);

	Kgb__PlatformInfo pi = KGB__PLATFORM_INFO__INIT;
	pi.name = "opencl:x";
	pi.live_devices = 2;
	Kgb__PlatformInfo *pis[] = {&pi};
	Kgb__PlatformsReply prp = KGB__PLATFORMS_REPLY__INIT;
	prp.n_platforms = 1;
	prp.platforms = pis;
	env.body_case = KGB__ENVELOPE__BODY_PLATFORMS_REPLY;
	env.platforms_reply = &prp;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->platforms_reply->platforms[0]->live_devices, 2);
	kgb_wire_free(b);

	Kgb__CancelRequest cr = KGB__CANCEL_REQUEST__INIT;
	cr.campaign_id = 3;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL;
	env.cancel = &cr;
	b = round_trip(&env);
	ASSERT_EQ_U64(b->cancel->campaign_id, 3);
	kgb_wire_free(b);

	Kgb__CancelReply crp = KGB__CANCEL_REPLY__INIT;
	crp.ok = 1;
	crp.jobs_cancelled = 12;
	env.body_case = KGB__ENVELOPE__BODY_CANCEL_REPLY;
	env.cancel_reply = &crp;
	b = round_trip(&env);
	ASSERT_EQ_INT(b->cancel_reply->jobs_cancelled, 12);
	kgb_wire_free(b);
}

TEST(wire_rejects_bad_frames)
{
	char err[256];
	Kgb__ErrorReply er = KGB__ERROR_REPLY__INIT;
	er.reason = "x";
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_ERROR;
	env.error = &er;

	/* version mismatch: pack, then rewrite the version by hand-packing */
	size_t len;
	uint8_t *buf;
	env.version = 2;
	len = kgb__envelope__get_packed_size(&env);
	buf = malloc(len);
	kgb__envelope__pack(&env, buf);
	ASSERT_TRUE(kgb_wire_unpack(buf, len, KGB_MAX_FRAME_CLI, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "protocol version 2, expected 1");
	free(buf);
	/* no version at all (an old or foreign peer) */
	env.version = 0;
	len = kgb__envelope__get_packed_size(&env);
	buf = malloc(len);
	kgb__envelope__pack(&env, buf);
	ASSERT_TRUE(kgb_wire_unpack(buf, len, KGB_MAX_FRAME_CLI, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "protocol version 0");
	free(buf);

	/* oversize */
	buf = kgb_wire_pack(&env, &len);
	ASSERT_TRUE(kgb_wire_unpack(buf, len, len - 1, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "exceeds the limit");
	Kgb__Envelope *ok = kgb_wire_unpack(buf, len, len, err, sizeof err);
	ASSERT_TRUE(ok != NULL);
	kgb_wire_free(ok);
	free(buf);

	/* empty body */
	Kgb__Envelope empty = KGB__ENVELOPE__INIT;
	empty.seq = 9;
	buf = kgb_wire_pack(&empty, &len);
	ASSERT_TRUE(kgb_wire_unpack(buf, len, KGB_MAX_FRAME_CLI, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "empty or unknown body");
	free(buf);
	ASSERT_TRUE(kgb_wire_unpack("", 0, KGB_MAX_FRAME_CLI, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "empty frame");

	/* garbage: a truncated varint, an invalid wire type */
	const uint8_t g1[] = {0x08, 0xff};
	ASSERT_TRUE(kgb_wire_unpack(g1, sizeof g1, KGB_MAX_FRAME_CLI, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "undecodable");
	const uint8_t g2[] = {0x0f, 0x01, 0x02};
	ASSERT_TRUE(kgb_wire_unpack(g2, sizeof g2, KGB_MAX_FRAME_CLI, err, sizeof err) == NULL);
	/* random bytes never crash and are almost always rejected */
	kgb_rng_t r;
	kgb_rng_seed(&r, 99);
	uint8_t rnd[64];
	for (int i = 0; i < 2000; i++) {
		size_t n = 1 + kgb_rng_next(&r) % sizeof rnd;
		for (size_t k = 0; k < n; k++)
			rnd[k] = (uint8_t)kgb_rng_next(&r);
		Kgb__Envelope *e = kgb_wire_unpack(rnd, n, KGB_MAX_FRAME_CLI, err, sizeof err);
		if (e) {
			ASSERT_EQ_INT(e->version, KGB_PROTOCOL_VERSION);
			ASSERT_TRUE(e->body_case != KGB__ENVELOPE__BODY__NOT_SET);
			kgb_wire_free(e);
		}
	}
}

TEST(wire_send_over_zmq)
{
	void *ctx = zmq_ctx_new();
	void *router = zmq_socket(ctx, ZMQ_ROUTER);
	void *dealer = zmq_socket(ctx, ZMQ_DEALER);
	ASSERT_EQ_INT(zmq_bind(router, "inproc://wire-test"), 0);
	ASSERT_EQ_INT(zmq_setsockopt(dealer, ZMQ_ROUTING_ID, "cli-1", 5), 0);
	ASSERT_EQ_INT(zmq_connect(dealer, "inproc://wire-test"), 0);

	Kgb__StatusRequest st = KGB__STATUS_REQUEST__INIT;
	st.campaign_id = 42;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.seq = 1001;
	env.body_case = KGB__ENVELOPE__BODY_STATUS;
	env.status = &st;
	ASSERT_EQ_INT(kgb_wire_send(dealer, NULL, 0, &env, 0), 0);

	char id[64], err[256];
	int idn = zmq_recv(router, id, sizeof id, 0);
	ASSERT_EQ_INT(idn, 5);
	ASSERT_TRUE(memcmp(id, "cli-1", 5) == 0);
	int more;
	size_t ml = sizeof more;
	zmq_getsockopt(router, ZMQ_RCVMORE, &more, &ml);
	ASSERT_TRUE(more);
	zmq_msg_t m;
	zmq_msg_init(&m);
	ASSERT_TRUE(zmq_msg_recv(&m, router, 0) > 0);
	Kgb__Envelope *got = kgb_wire_unpack(zmq_msg_data(&m), zmq_msg_size(&m), KGB_MAX_FRAME_CLI, err, sizeof err);
	zmq_msg_close(&m);
	ASSERT_TRUE(got != NULL);
	ASSERT_EQ_U64(got->seq, 1001);
	ASSERT_EQ_U64(got->status->campaign_id, 42);
	kgb_wire_free(got);

	/* reply through the ROUTER with the identity frame */
	Kgb__StatusReply rep = KGB__STATUS_REPLY__INIT;
	rep.error = "none";
	env.body_case = KGB__ENVELOPE__BODY_STATUS_REPLY;
	env.status_reply = &rep;
	ASSERT_EQ_INT(kgb_wire_send(router, id, (size_t)idn, &env, 0), 0);
	zmq_msg_init(&m);
	ASSERT_TRUE(zmq_msg_recv(&m, dealer, 0) > 0);
	got = kgb_wire_unpack(zmq_msg_data(&m), zmq_msg_size(&m), KGB_MAX_FRAME_CLI, err, sizeof err);
	zmq_msg_close(&m);
	ASSERT_TRUE(got != NULL);
	ASSERT_EQ_STR(got->status_reply->error, "none");
	kgb_wire_free(got);

	zmq_close(dealer);
	zmq_close(router);
	zmq_ctx_term(ctx);
}

/* The job's profile line: the p_*_ms fields by name, the cases and the reference
 * cache, then the recording's breakdown (r_*_ms) only where a recorder ran. */
TEST(wire_phases_profile_line)
{
	Kgb__JobPhases p = KGB__JOB_PHASES__INIT;
	char out[600];
	kgb_phases_profile(&p, out, sizeof out);
	ASSERT_EQ_STR(out, "");
	p.p_inputs_ms = 12;
	p.p_cases = 3;
	p.ref_cache_hits = 2;
	p.ref_cache_misses = 1;
	kgb_phases_profile(&p, out, sizeof out);
	ASSERT_CONTAINS(out, "profile (ms): open 0, inputs 12,");
	ASSERT_CONTAINS(out, "; cases 3, ref cache 2 hit / 1 miss");
	ASSERT_TRUE(strstr(out, "recording") == NULL);
	p.p_record_ms = 900;
	p.r_startup_ms = 400;
	p.r_call_ms = 300;
	p.r_other_ms = 200;
	kgb_phases_profile(&p, out, sizeof out);
	ASSERT_CONTAINS(out, "; cases 3, ref cache 2 hit / 1 miss; recording (ms): startup 400, lock 0, context 0, "
	                     "import 0, inputs 0, call 300, keep 0, compile 0, other 200");
	/* a short buffer is cut, never overrun */
	char small[40];
	kgb_phases_profile(&p, small, sizeof small);
	ASSERT_TRUE(strlen(small) < sizeof small);
}
