/* Tests for cli/client.c and the commands that talk to the coordinator, against a
 * fake coordinator: a real ZeroMQ ROUTER socket served by a thread, answering with
 * canned replies. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <zmq.h>

#include "../../cli/cli.h"
#include "manifest.h"
#include "../../cli/client.h"
#include "test.h"
#include "util.h"
#include "wire.h"

typedef enum {
	FAKE_NORMAL = 0,   /* answer every request */
	FAKE_STALE_FIRST,  /* send a reply with a wrong seq before the right one */
	FAKE_GARBAGE,      /* answer with bytes that are not an envelope */
	FAKE_ERROR,        /* answer with an ErrorReply */
	FAKE_WRONG_KIND,   /* answer with a reply of another kind */
	FAKE_SILENT,       /* read requests, never answer */
	FAKE_NOT_ACTIVE,   /* a standby: ErrorReply not_active to everything */
} fake_mode_t;

typedef struct fake {
	void *ctx, *sock;
	char endpoint[256];
	pthread_t thread;
	atomic_bool stop;
	fake_mode_t mode;
	int requests;                 /* requests received */
	int status_calls;
	Kgb__Envelope__BodyCase last_body;
	char last_origin[256];
	size_t last_manifest_len;
	char *last_manifest;          /* copy of the last SubmitRequest's JSON */
} fake_t;

/* Canned replies, built on the stack of the serving thread. */
static void answer(fake_t *f, const zmq_msg_t *id, const Kgb__Envelope *req)
{
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.seq = req->seq;

	Kgb__ErrorReply er = KGB__ERROR_REPLY__INIT;
	Kgb__StatusReply sr = KGB__STATUS_REPLY__INIT;
	Kgb__CampaignStatus cs = KGB__CAMPAIGN_STATUS__INIT;
	Kgb__CampaignStatus *csp[1] = { &cs };
	Kgb__PlatformProgress pp[2] = { KGB__PLATFORM_PROGRESS__INIT, KGB__PLATFORM_PROGRESS__INIT };
	Kgb__PlatformProgress *ppp[2] = { &pp[0], &pp[1] };
	Kgb__ResultsReply rr = KGB__RESULTS_REPLY__INIT;
	Kgb__ResultRow rows[3] = { KGB__RESULT_ROW__INIT, KGB__RESULT_ROW__INIT, KGB__RESULT_ROW__INIT };
	Kgb__ResultRow *rowp[3] = { &rows[0], &rows[1], &rows[2] };
	Kgb__WorkersReply wr = KGB__WORKERS_REPLY__INIT;
	Kgb__WorkerInfo wi = KGB__WORKER_INFO__INIT;
	Kgb__WorkerInfo *wip[1] = { &wi };
	Kgb__DeviceLoad load = KGB__DEVICE_LOAD__INIT;
	Kgb__JobPhases phases = KGB__JOB_PHASES__INIT;
	Kgb__DeviceLoad *loadp = &load;
	Kgb__Device dev[2] = { KGB__DEVICE__INIT, KGB__DEVICE__INIT };
	Kgb__Device *devp[2] = { &dev[0], &dev[1] };
	Kgb__PlatformsReply plr = KGB__PLATFORMS_REPLY__INIT;
	Kgb__PlatformInfo pi = KGB__PLATFORM_INFO__INIT;
	Kgb__PlatformInfo *pip[1] = { &pi };
	Kgb__CancelReply cr = KGB__CANCEL_REPLY__INIT;
	Kgb__SubmitReply subr = KGB__SUBMIT_REPLY__INIT;

	f->last_body = req->body_case;
	if (f->mode == FAKE_NOT_ACTIVE) {
		er.reason = "this coordinator is a standby, not active";
		er.not_active = true;
		env.body_case = KGB__ENVELOPE__BODY_ERROR;
		env.error = &er;
		goto send;
	}
	if (f->mode == FAKE_ERROR) {
		er.reason = "campaign 99 does not exist";
		env.body_case = KGB__ENVELOPE__BODY_ERROR;
		env.error = &er;
		goto send;
	}
	if (f->mode == FAKE_WRONG_KIND) {
		env.body_case = KGB__ENVELOPE__BODY_CANCEL_REPLY;
		env.cancel_reply = &cr;
		goto send;
	}
	switch (req->body_case) {
	case KGB__ENVELOPE__BODY_STATUS: {
		int call = f->status_calls++;
		cs.id = 7;
		cs.name = "demo";
		cs.state = call >= 2 ? "done" : "running";
		cs.owner = "alice";
		cs.created_unix = (int64_t)time(NULL) - 70;
		cs.started_unix = (int64_t)time(NULL) - 60;
		pp[0].platform = "opencl:cpu";
		pp[0].total = 10;
		pp[0].done = call >= 2 ? 9 : (uint32_t)(3 * call);
		pp[0].failed = call >= 2 ? 1 : 0;
		pp[0].running = call >= 2 ? 0 : 2;
		pp[0].queued = pp[0].total - pp[0].done - pp[0].failed - pp[0].running;
		pp[1].platform = "cuda:nvidia-h200";
		pp[1].total = 4;
		pp[1].done = 4;
		cs.n_platforms = 2;
		cs.platforms = ppp;
		sr.n_campaigns = req->status->campaign_id == 0 || req->status->campaign_id == 7 ? 1 : 0;
		sr.campaigns = csp;
		env.body_case = KGB__ENVELOPE__BODY_STATUS_REPLY;
		env.status_reply = &sr;
		break;
	}
	case KGB__ENVELOPE__BODY_RESULTS:
		rows[0].method = "llm";
		rows[0].op = "add";
		rows[0].platform = "opencl:cpu";
		rows[0].verdict = KGB__VERDICT__VERDICT_PASS;
		rows[0].cases_total = rows[0].cases_passed = rows[0].cases_done = 16;
		rows[0].speedup = 1.4249;
		rows[0].tokens = 12345;
		rows[0].gen_seconds = 30;
		rows[0].median_ns = 4561000;
		rows[1] = rows[0];
		rows[1].op = "softmax";
		rows[1].verdict = KGB__VERDICT__VERDICT_WRONG_RESULT;
		rows[1].cases_passed = 3;
		rows[1].speedup = 0;
		rows[1].first_failure = "case 3: out[17] = 0.5, expected \"1.25\"";
		rows[2] = rows[0];
		rows[2].method = "ref";
		rows[2].speedup = 1.0;
		rows[2].tokens = 0;
		rows[2].is_baseline = true;
		rr.ok = true;
		rr.campaign_name = "demo";
		rr.baseline = "ref";
		rr.n_rows = 3;
		rr.rows = rowp;
		env.body_case = KGB__ENVELOPE__BODY_RESULTS_REPLY;
		env.results_reply = &rr;
		break;
	case KGB__ENVELOPE__BODY_WORKERS:
		dev[0].backend = "opencl";
		dev[0].name = "pthread-cpu";
		dev[0].platform = "opencl:pthread-cpu";
		dev[1].backend = "cuda";
		dev[1].name = "NVIDIA H200";
		dev[1].platform = "cuda:nvidia-h200";
		dev[1].index = 1;
		wi.worker_id = "w-1";
		wi.name = "node1";
		wi.hostname = "node1.lab";
		wi.alive = true;
		wi.last_seen_ms_ago = 1500;
		wi.running_jobs = 3;
		wi.n_devices = 2;
		wi.devices = devp;
		/* the cuda device has reported its load; the opencl one has not */
		kgb__device_load__init(&load);
		load.device_index = 1;
		load.device_ms = 930;
		load.active_ms = 1000;
		load.window_busy = 0.93;
		load.nvml_util = 97;
		load.occupied_ms = 990;
		load.window_occupied = 0.99;
		load.nvml_ms = 960;
		load.window_nvml = 0.96;
		load.jobs = 12;
		phases.lock_wait_ms = 250;
		phases.exclusive_ms = 870;
		load.phases = &phases;
		wi.n_load = 1;
		wi.load = &loadp;
		wr.n_workers = 1;
		wr.workers = wip;
		env.body_case = KGB__ENVELOPE__BODY_WORKERS_REPLY;
		env.workers_reply = &wr;
		break;
	case KGB__ENVELOPE__BODY_PLATFORMS:
		pi.name = "cuda:nvidia-h200";
		pi.backend = "cuda";
		pi.device_name = "NVIDIA H200";
		pi.arch = "sm_90";
		pi.devices = 8;
		pi.live_devices = 7;
		pi.queued_jobs = 120;
		pi.running_jobs = 7;
		plr.n_platforms = 1;
		plr.platforms = pip;
		env.body_case = KGB__ENVELOPE__BODY_PLATFORMS_REPLY;
		env.platforms_reply = &plr;
		break;
	case KGB__ENVELOPE__BODY_CANCEL:
		cr.ok = req->cancel->campaign_id == 7;
		cr.jobs_cancelled = cr.ok ? 42 : 0;
		cr.error = cr.ok ? "" : "no such campaign";
		env.body_case = KGB__ENVELOPE__BODY_CANCEL_REPLY;
		env.cancel_reply = &cr;
		break;
	case KGB__ENVELOPE__BODY_SUBMIT:
		kgb_strlcpy(f->last_origin, req->submit->origin ? req->submit->origin : "", sizeof f->last_origin);
		f->last_manifest_len = req->submit->manifest_json ? strlen(req->submit->manifest_json) : 0;
		free(f->last_manifest);
		f->last_manifest = kgb_xstrdup(req->submit->manifest_json ? req->submit->manifest_json : "");
		subr.ok = true;
		subr.campaign_id = 7;
		subr.jobs = 168;
		env.body_case = KGB__ENVELOPE__BODY_SUBMIT_REPLY;
		env.submit_reply = &subr;
		break;
	default:
		er.reason = "unexpected request";
		env.body_case = KGB__ENVELOPE__BODY_ERROR;
		env.error = &er;
		break;
	}
send:
	if (f->mode == FAKE_STALE_FIRST) {
		uint64_t seq = env.seq;
		env.seq = seq - 1;
		kgb_wire_send(f->sock, zmq_msg_data((zmq_msg_t *)id), zmq_msg_size((zmq_msg_t *)id), &env, 0);
		env.seq = seq;
	}
	kgb_wire_send(f->sock, zmq_msg_data((zmq_msg_t *)id), zmq_msg_size((zmq_msg_t *)id), &env, 0);
}

static void *fake_main(void *arg)
{
	fake_t *f = arg;
	while (!atomic_load(&f->stop)) {
		zmq_pollitem_t it = { f->sock, 0, ZMQ_POLLIN, 0 };
		if (zmq_poll(&it, 1, 20) <= 0)
			continue;
		zmq_msg_t id, body;
		zmq_msg_init(&id);
		zmq_msg_init(&body);
		if (zmq_msg_recv(&id, f->sock, 0) < 0 || zmq_msg_recv(&body, f->sock, 0) < 0) {
			zmq_msg_close(&id);
			zmq_msg_close(&body);
			continue;
		}
		f->requests++;
		char err[256];
		Kgb__Envelope *req = kgb_wire_unpack(zmq_msg_data(&body), zmq_msg_size(&body), KGB_MAX_FRAME_CLI,
		                                     err, sizeof err);
		if (req && f->mode == FAKE_GARBAGE) {
			zmq_send(f->sock, zmq_msg_data(&id), zmq_msg_size(&id), ZMQ_SNDMORE);
			zmq_send(f->sock, "\xff\xff\xff garbage", 11, 0);
		} else if (req && f->mode != FAKE_SILENT) {
			answer(f, &id, req);
		}
		kgb_wire_free(req);
		zmq_msg_close(&id);
		zmq_msg_close(&body);
	}
	return NULL;
}

static fake_t *fake_start(fake_mode_t mode)
{
	fake_t *f = kgb_xcalloc(1, sizeof *f);
	size_t len = sizeof f->endpoint;
	int linger = 0;
	f->mode = mode;
	f->ctx = zmq_ctx_new();
	f->sock = zmq_socket(f->ctx, ZMQ_ROUTER);
	zmq_setsockopt(f->sock, ZMQ_LINGER, &linger, sizeof linger);
	if (zmq_bind(f->sock, "tcp://127.0.0.1:*") != 0)
		FAIL("bind: %s", zmq_strerror(zmq_errno()));
	zmq_getsockopt(f->sock, ZMQ_LAST_ENDPOINT, f->endpoint, &len);
	pthread_create(&f->thread, NULL, fake_main, f);
	return f;
}

static void fake_stop(fake_t *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	zmq_close(f->sock);
	zmq_ctx_term(f->ctx);
	free(f->last_manifest);
	free(f);
}

/* An endpoint nothing listens on: bind a port, then close it. */
static void dead_endpoint(char *buf, size_t n)
{
	void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_ROUTER);
	int linger = 0;
	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
	zmq_bind(s, "tcp://127.0.0.1:*");
	zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &n);
	zmq_close(s);
	zmq_ctx_term(ctx);
}

static int call_status(const char *endpoint, double timeout, Kgb__Envelope **reply, char *err, size_t errlen)
{
	kgb_cli_client_t *c = kgb_cli_client_new(endpoint, timeout, err, errlen);
	if (!c)
		FAIL("client_new: %s", err);
	Kgb__StatusRequest req = KGB__STATUS_REQUEST__INIT;
	Kgb__Envelope env = KGB__ENVELOPE__INIT;
	env.body_case = KGB__ENVELOPE__BODY_STATUS;
	env.status = &req;
	int rc = kgb_cli_client_call(c, &env, KGB__ENVELOPE__BODY_STATUS_REPLY, reply, err, errlen);
	kgb_cli_client_destroy(&c);
	return rc;
}

TEST(cli_client_roundtrip_and_stale_reply)
{
	char err[512] = "";
	Kgb__Envelope *reply = NULL;
	fake_t *f = fake_start(FAKE_NORMAL);
	ASSERT_OK(call_status(f->endpoint, 5, &reply, err, sizeof err), err);
	ASSERT_EQ_INT(reply->body_case, KGB__ENVELOPE__BODY_STATUS_REPLY);
	ASSERT_EQ_INT(reply->status_reply->n_campaigns, 1);
	ASSERT_EQ_STR(reply->status_reply->campaigns[0]->name, "demo");
	kgb_wire_free(reply);
	fake_stop(f);

	/* a reply to another request (wrong seq) is skipped, the right one taken */
	f = fake_start(FAKE_STALE_FIRST);
	ASSERT_OK(call_status(f->endpoint, 5, &reply, err, sizeof err), err);
	ASSERT_EQ_INT(reply->status_reply->campaigns[0]->id, 7);
	kgb_wire_free(reply);
	fake_stop(f);
}

TEST(cli_client_no_coordinator)
{
	char ep[256], err[512] = "";
	Kgb__Envelope *reply = NULL;
	dead_endpoint(ep, sizeof ep);
	double t0 = kgb_now_ms();
	ASSERT_EQ_INT(call_status(ep, 0.3, &reply, err, sizeof err), KGB_CLI_EXIT_NOCOORD);
	double took = kgb_now_ms() - t0;
	ASSERT_TRUE(reply == NULL);
	ASSERT_CONTAINS(err, "no reply from coordinator at ");
	ASSERT_CONTAINS(err, ep);
	ASSERT_CONTAINS(err, "is kgb-coordinator running?");
	ASSERT_TRUE(took >= 250 && took < 3000);

	/* a coordinator that reads but never answers is the same */
	fake_t *f = fake_start(FAKE_SILENT);
	ASSERT_EQ_INT(call_status(f->endpoint, 0.3, &reply, err, sizeof err), KGB_CLI_EXIT_NOCOORD);
	ASSERT_EQ_INT(f->requests, 1);
	fake_stop(f);
}

/* Several endpoints (docs/scheduler.md, "Standby coordinator"): a standby's not_active
 * and an endpoint nobody listens on give way to the next, the active one answers. */
TEST(cli_client_follows_the_active_coordinator)
{
	char err[512] = "", *eps;
	Kgb__Envelope *reply = NULL;
	fake_t *standby = fake_start(FAKE_NOT_ACTIVE), *active = fake_start(FAKE_NORMAL);
	void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_ROUTER);
	char dead[256];
	size_t len = sizeof dead;
	ASSERT_TRUE(zmq_bind(s, "tcp://127.0.0.1:*") == 0);
	zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, dead, &len);
	zmq_close(s); /* a port nobody listens on now */
	zmq_ctx_term(ctx);
	eps = kgb_xasprintf("%s, %s ,%s", standby->endpoint, dead, active->endpoint);
	ASSERT_OK(call_status(eps, 10, &reply, err, sizeof err), err);
	ASSERT_EQ_INT(reply->body_case, KGB__ENVELOPE__BODY_STATUS_REPLY);
	ASSERT_EQ_INT(standby->requests, 1);
	ASSERT_EQ_INT(active->requests, 1);
	kgb_wire_free(reply);
	free(eps);
	fake_stop(active);

	/* only a standby: it keeps saying so until the timeout, and the error says it */
	ASSERT_EQ_INT(call_status(standby->endpoint, 0.5, &reply, err, sizeof err), KGB_CLI_EXIT_NOCOORD);
	ASSERT_CONTAINS(err, "is not active: this coordinator is a standby");
	fake_stop(standby);
}

TEST(cli_client_refusals)
{
	char err[512] = "";
	Kgb__Envelope *reply = NULL;
	fake_t *f = fake_start(FAKE_ERROR);
	ASSERT_EQ_INT(call_status(f->endpoint, 5, &reply, err, sizeof err), KGB_CLI_EXIT_REFUSED);
	ASSERT_CONTAINS(err, "campaign 99 does not exist");
	fake_stop(f);

	f = fake_start(FAKE_GARBAGE);
	ASSERT_EQ_INT(call_status(f->endpoint, 5, &reply, err, sizeof err), KGB_CLI_EXIT_REFUSED);
	ASSERT_CONTAINS(err, "bad reply from coordinator");
	fake_stop(f);

	f = fake_start(FAKE_WRONG_KIND);
	ASSERT_EQ_INT(call_status(f->endpoint, 5, &reply, err, sizeof err), KGB_CLI_EXIT_REFUSED);
	ASSERT_CONTAINS(err, "answered with 'cancel_reply', expected 'status_reply'");
	ASSERT_TRUE(reply == NULL);
	fake_stop(f);

	ASSERT_TRUE(kgb_cli_client_new("nonsense://x", 1, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "nonsense://x");
}

/* ---- the commands, with stdout captured into a file ---- */

static int saved_fd[3] = { -1, -1, -1 };

static void capture_fd(int fd, const char *name)
{
	const char *path = kgb_test_write_file(name, "");
	saved_fd[fd] = dup(fd);
	int nfd = open(path, O_WRONLY | O_TRUNC);
	dup2(nfd, fd);
	close(nfd);
}

static char *restore_fd(int fd, const char *name)
{
	char path[4200], err[256];
	size_t len;
	dup2(saved_fd[fd], fd);
	close(saved_fd[fd]);
	snprintf(path, sizeof path, "%s/%s", kgb_test_tmpdir(), name);
	char *s = kgb_read_file(path, &len, err, sizeof err);
	if (!s)
		FAIL("%s", err);
	return s;
}

/* The last command's stderr (caller frees). */
static char *last_stderr;

static void capture_begin(void)
{
	fflush(stdout);
	fflush(stderr);
	capture_fd(STDOUT_FILENO, "stdout.txt");
	capture_fd(STDERR_FILENO, "stderr.txt");
}

/* Returns what was printed on stdout (caller frees); stderr goes to last_stderr. */
static char *capture_end(void)
{
	fflush(stdout);
	fflush(stderr);
	free(last_stderr);
	last_stderr = restore_fd(STDERR_FILENO, "stderr.txt");
	return restore_fd(STDOUT_FILENO, "stdout.txt");
}

#define RUN(out, rcvar, fn, ...)                                                   \
	do {                                                                           \
		char *argv_[] = { __VA_ARGS__, NULL };                                     \
		capture_begin();                                                           \
		rcvar = fn((int)KGB_ARRAY_LEN(argv_) - 1, argv_, &g);                      \
		out = capture_end();                                                       \
	} while (0)

TEST(cli_cmd_results_table_csv_json)
{
	fake_t *f = fake_start(FAKE_NORMAL);
	kgb_cli_global_t g = { .endpoint = f->endpoint, .timeout_s = 5 };
	char *out;
	int rc;

	RUN(out, rc, kgb_cli_cmd_results, "results", "7");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_EQ_INT(f->last_body, KGB__ENVELOPE__BODY_RESULTS);
	ASSERT_CONTAINS(out, "campaign 7 demo, baseline: ref");
	ASSERT_CONTAINS(out, "VERDICT");
	ASSERT_CONTAINS(out, "1.42x");
	ASSERT_CONTAINS(out, "12.3k");
	ASSERT_CONTAINS(out, "4.56ms");
	ASSERT_CONTAINS(out, "wrong_result");
	ASSERT_CONTAINS(out, "3/16");
	ASSERT_CONTAINS(out, "ref (baseline)");
	/* summary: llm solved 1 of the 2 operators, faster on it */
	ASSERT_CONTAINS(out, "1/2 (50%)");
	free(out);

	RUN(out, rc, kgb_cli_cmd_results, "results", "7", "--csv");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "method,op,platform,verdict,cases_passed,cases_total");
	ASSERT_CONTAINS(out, "llm,add,opencl:cpu,pass,16,16,16,0,1.4249,4561000,12345,30,false,,0,false,0\n");
	ASSERT_CONTAINS(out, ",\"case 3: out[17] = 0.5, expected \"\"1.25\"\"\",,,\n");
	free(out);

	RUN(out, rc, kgb_cli_cmd_report, "report", "7", "--json");
	ASSERT_EQ_INT(rc, 0);
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	ASSERT_TRUE(j != NULL);
	ASSERT_EQ_INT(json_array_size(json_object_get(j, "rows")), 3);
	json_t *s0 = json_array_get(json_object_get(j, "summary"), 0);
	ASSERT_EQ_STR(json_string_value(json_object_get(s0, "method")), "llm");
	ASSERT_EQ_INT(json_integer_value(json_object_get(s0, "solved")), 1);
	ASSERT_NEAR(json_real_value(json_object_get(s0, "fast_1")), 0.5, 1e-12);
	ASSERT_NEAR(json_real_value(json_object_get(s0, "geomean_speedup")), 1.4249, 1e-9);
	ASSERT_NEAR(json_real_value(json_object_get(s0, "tokens_per_solved")), 24690, 1e-9);
	/* report lists the summary first */
	ASSERT_TRUE(strstr(out, "\"summary\"") < strstr(out, "\"rows\""));
	json_decref(j);
	free(out);

	/* report: the summary table comes before the rows; results: after */
	RUN(out, rc, kgb_cli_cmd_report, "report", "7");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_TRUE(strstr(out, "GEOMEAN") && strstr(out, "VERDICT") && strstr(out, "GEOMEAN") < strstr(out, "VERDICT"));
	free(out);
	RUN(out, rc, kgb_cli_cmd_results, "results", "7");
	ASSERT_TRUE(strstr(out, "GEOMEAN") && strstr(out, "GEOMEAN") > strstr(out, "VERDICT"));
	free(out);
	RUN(out, rc, kgb_cli_cmd_report, "report", "7", "--csv");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "method,platform,is_baseline,operators,attempted,solved,fast_1,geomean_speedup,tokens,tokens_per_solved,gen_seconds,"
	                     "geomean_speedup_rse,ties,noise_floor,geomean_tie\n");
	ASSERT_CONTAINS(out, "llm,opencl:cpu,false,2,2,1,0.5,1.4249,24690,24690,60,0,0,0,false\n");
	ASSERT_CONTAINS(out, "ref,opencl:cpu,true,2,1,1,0,1,0,0,30,0,0,0,true\n");
	free(out);

	/* a platform the campaign does not have is refused, with the one meant */
	RUN(out, rc, kgb_cli_cmd_results, "results", "7", "--platform", "opencl:cpux");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	ASSERT_CONTAINS(last_stderr, "no platform 'opencl:cpux' in this campaign; did you mean 'opencl:cpu'?");
	free(out);

	RUN(out, rc, kgb_cli_cmd_results, "results", "seven");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	free(out);
	RUN(out, rc, kgb_cli_cmd_results, "results", "7", "--json", "--csv");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	free(out);
	RUN(out, rc, kgb_cli_cmd_results, "results", "--help");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "usage: kgb results ID");
	free(out);
	fake_stop(f);
}

TEST(cli_cmd_status_watch_plain)
{
	fake_t *f = fake_start(FAKE_NORMAL);
	kgb_cli_global_t g = { .endpoint = f->endpoint, .timeout_s = 5 };
	char *out;
	int rc;

	RUN(out, rc, kgb_cli_cmd_status, "status", "7");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "K-FAIL");
	ASSERT_CONTAINS(out, "campaign 7: owner alice, submitted ");
	/* 4 of 14 jobs ran in the 60 s since the start: the 10 open ones need 150 s more */
	ASSERT_CONTAINS(out, ", ETA 2m3");
	ASSERT_CONTAINS(out, "opencl:cpu");
	ASSERT_CONTAINS(out, "running");
	free(out);

	/* not a terminal: plain lines, only for what changed, until the state is done */
	f->status_calls = 0;
	RUN(out, rc, kgb_cli_cmd_status, "status", "7", "--watch", "--interval", "0.01");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_EQ_INT(f->status_calls, 3);
	ASSERT_CONTAINS(out, "campaign 7 opencl:cpu: queued 8 running 2 passed 0 kernel-failed 0 infra-failed 0 "
	                     "cancelled 0 total 10 (0%)\n");
	ASSERT_CONTAINS(out, "campaign 7 opencl:cpu: queued 5 running 2 passed 3 kernel-failed 0 infra-failed 0 "
	                     "cancelled 0 total 10 (30%)\n");
	ASSERT_CONTAINS(out, "campaign 7 opencl:cpu: queued 0 running 0 passed 9 kernel-failed 0 infra-failed 1 "
	                     "cancelled 0 total 10 (100%)\n");
	ASSERT_CONTAINS(out, "campaign 7 demo: done\n");
	/* the finished cuda platform is printed once */
	const char *cuda = strstr(out, "cuda:nvidia-h200");
	ASSERT_TRUE(cuda && !strstr(cuda + 1, "cuda:nvidia-h200"));
	ASSERT_EQ_INT(strstr(out, "\x1b[") == NULL, 1);
	free(out);

	RUN(out, rc, kgb_cli_cmd_status, "status", "8");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_REFUSED);
	free(out);
	RUN(out, rc, kgb_cli_cmd_status, "status", "--json");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "\"cancelled\": 0");
	free(out);
	fake_stop(f);
}

TEST(cli_cmd_workers_platforms_cancel)
{
	fake_t *f = fake_start(FAKE_NORMAL);
	kgb_cli_global_t g = { .endpoint = f->endpoint, .timeout_s = 5 };
	char *out;
	int rc;

	RUN(out, rc, kgb_cli_cmd_workers, "workers");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "node1.lab");
	ASSERT_CONTAINS(out, "1s ago");
	ASSERT_CONTAINS(out, "BUSY\n");
	ASSERT_CONTAINS(out, "opencl:pthread-cpu                     -\n");
	/* kernels, all event-timed work, NVML's mean over the same window */
	ASSERT_CONTAINS(out, "cuda:nvidia-h200    93% / 99% (NVML 96%)\n");
	ASSERT_CONTAINS(out, "1 workers, 1 alive");
	free(out);

	RUN(out, rc, kgb_cli_cmd_workers, "workers", "--json");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "\"platform\": \"cuda:nvidia-h200\"");
	ASSERT_CONTAINS(out, "\"occupied\": 0.99");
	ASSERT_CONTAINS(out, "\"nvml\": 0.96");
	/* the device's summed job phases */
	ASSERT_CONTAINS(out, "\"lock_wait_ms\": 250.0");
	ASSERT_CONTAINS(out, "\"exclusive_ms\": 870.0");
	free(out);

	RUN(out, rc, kgb_cli_cmd_platforms, "platforms");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "sm_90");
	ASSERT_CONTAINS(out, "7/8 live");
	free(out);

	RUN(out, rc, kgb_cli_cmd_cancel, "cancel", "7");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "campaign 7 cancelled: 42 jobs cancelled");
	free(out);
	RUN(out, rc, kgb_cli_cmd_cancel, "cancel", "9");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_REFUSED);
	free(out);
	RUN(out, rc, kgb_cli_cmd_cancel, "cancel");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	free(out);
	fake_stop(f);

	/* nobody listening: exit code 3 */
	char ep[256];
	dead_endpoint(ep, sizeof ep);
	g.endpoint = ep;
	g.timeout_s = 0.2;
	RUN(out, rc, kgb_cli_cmd_workers, "workers");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_NOCOORD);
	free(out);
}

/* A one-candidate manifest in tmpdir/camp/: m.json, add.plan.json, add.cl. */
static const char *write_campaign(const char *op)
{
	static char path[4200];
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/camp", kgb_test_tmpdir());
	kgb_mkdirs(dir, 0755);
	kgb_test_write_file("camp/add.cl",
	                    "__kernel void add1(__global const T_self *a, __global const T_other *b,\n"
	                    "                   __global T_out *o, float alpha, int n)\n"
	                    "{ int i = get_global_id(0); if (i < n) STORE_out(o, i, LOAD_self(a, i) + alpha * LOAD_other(b, i)); }\n");
	kgb_test_write_file("camp/add.plan.json",
	                    "{\"kernels\": [{\"entry\": \"add1\", \"lang\": \"opencl\", \"source\": \"add.cl\",\n"
	                    " \"grid\": [\"cdiv(out.numel, 64)\"], \"block\": [\"64\"],\n"
	                    " \"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"},\n"
	                    "          {\"scalar\": \"alpha\", \"type\": \"f32\"}, {\"scalar\": \"out.numel\"}]}]}\n");
	char *m = kgb_xasprintf("{\"name\": \"t\", \"operators\": [\"%s\"], \"baseline\": \"m\",\n"
	                        " \"methods\": [{\"name\": \"m\", \"candidates\": [\n"
	                        "   {\"operator\": \"%s\", \"plan\": \"add.plan.json\", \"tokens\": 1200}]}]}\n",
	                        op, op);
	snprintf(path, sizeof path, "%s", kgb_test_write_file("camp/m.json", m));
	free(m);
	return path;
}

TEST(cli_cmd_validate_and_submit)
{
	fake_t *f = fake_start(FAKE_NORMAL);
	kgb_cli_global_t g = { .endpoint = f->endpoint, .timeout_s = 5 };
	char *out, err[1024];
	int rc;
	char *path = kgb_xstrdup(write_campaign("add"));

	RUN(out, rc, kgb_cli_cmd_validate, "validate", path);
	if (rc != 0)
		FAIL("validate failed: %s", last_stderr);
	ASSERT_EQ_STR(out, "ok: 1 candidates, 1 operators\n");
	ASSERT_EQ_INT(f->requests, 0);
	free(out);

	RUN(out, rc, kgb_cli_cmd_submit, "submit", path);
	if (rc != 0)
		FAIL("submit failed: %s", last_stderr);
	ASSERT_EQ_STR(out, "campaign 7 submitted: 168 jobs\n");
	ASSERT_EQ_INT(f->last_body, KGB__ENVELOPE__BODY_SUBMIT);
	ASSERT_EQ_STR(f->last_origin, path);
	/* what was sent is self-contained: it parses in the coordinator's strict form and
	 * holds the kernel source */
	kgb_manifest_t *m = NULL;
	ASSERT_OK(kgb_manifest_parse(f->last_manifest, strlen(f->last_manifest), "sent", true, &m, err, sizeof err), err);
	ASSERT_EQ_INT(m->ncandidates, 1);
	ASSERT_EQ_INT(m->candidates[0].nsources, 1);
	ASSERT_CONTAINS(m->candidates[0].sources[0].content, "__kernel void add1");
	ASSERT_NEAR(m->candidates[0].tokens, 1200, 0);
	kgb_manifest_destroy(&m);
	free(out);

	RUN(out, rc, kgb_cli_cmd_submit, "submit", path, "--json");
	ASSERT_EQ_INT(rc, 0);
	ASSERT_CONTAINS(out, "\"campaign_id\": 7");
	ASSERT_CONTAINS(out, "\"jobs\": 168");
	free(out);
	free(path);
	fake_stop(f);
}

TEST(cli_cmd_submit_bad_manifest_sends_nothing)
{
	fake_t *f = fake_start(FAKE_NORMAL);
	kgb_cli_global_t g = { .endpoint = f->endpoint, .timeout_s = 5 };
	char *out;
	int rc;
	char *path = kgb_xstrdup(write_campaign("addd"));

	RUN(out, rc, kgb_cli_cmd_submit, "submit", path);
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	ASSERT_CONTAINS(last_stderr, path);
	ASSERT_CONTAINS(last_stderr, "addd");
	ASSERT_EQ_INT(f->requests, 0);
	free(out);

	RUN(out, rc, kgb_cli_cmd_validate, "validate", path);
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	ASSERT_CONTAINS(last_stderr, "unknown operator 'addd'");
	free(out);

	/* a plan file that is missing: the error names it */
	write_campaign("add");
	char planpath[4200];
	snprintf(planpath, sizeof planpath, "%s/camp/add.plan.json", kgb_test_tmpdir());
	remove(planpath);
	RUN(out, rc, kgb_cli_cmd_submit, "submit", path);
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	ASSERT_CONTAINS(last_stderr, "add.plan.json");
	ASSERT_EQ_INT(f->requests, 0);
	free(out);

	RUN(out, rc, kgb_cli_cmd_validate, "validate", "/nonexistent/m.json");
	ASSERT_EQ_INT(rc, KGB_CLI_EXIT_USAGE);
	ASSERT_CONTAINS(last_stderr, "/nonexistent/m.json");
	free(out);
	free(path);
	fake_stop(f);
}

TEST(cli_cmd_status_watch_terminal)
{
	fake_t *f = fake_start(FAKE_NORMAL);
	kgb_cli_global_t g = { .endpoint = f->endpoint, .timeout_s = 5 };
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	ASSERT_TRUE(master >= 0);
	ASSERT_EQ_INT(grantpt(master), 0);
	ASSERT_EQ_INT(unlockpt(master), 0);
	int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	ASSERT_TRUE(slave >= 0);

	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	dup2(slave, STDOUT_FILENO);
	char *argv[] = { "status", "7", "--watch", "--interval", "0.01", NULL };
	int rc = kgb_cli_cmd_status(5, argv, &g);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ASSERT_EQ_INT(rc, 0);
	ASSERT_EQ_INT(f->status_calls, 3);

	char buf[16384];
	size_t got = 0;
	fcntl(master, F_SETFL, O_NONBLOCK);
	for (;;) {
		ssize_t n = read(master, buf + got, sizeof buf - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(slave);
	close(master);
	/* a progress column, and the table redrawn in place: the cursor goes up over the
	 * previous table (a header and two platform rows) and clears to the end */
	ASSERT_CONTAINS(buf, "PROGRESS");
	ASSERT_CONTAINS(buf, "[####>>>.........] 30%"); /* 3 done, 2 running of 10 */
	ASSERT_CONTAINS(buf, "[##############!.] 100%");
	ASSERT_CONTAINS(buf, "cuda:nvidia-h200"); /* within 120 columns: not cut */
	ASSERT_CONTAINS(buf, "campaign 7: ETA ");
	ASSERT_CONTAINS(buf, "\x1b[4F\x1b[J"); /* and the ETA line */
	fake_stop(f);
}
