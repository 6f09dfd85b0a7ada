/* The coordinator's state and the functions its modules share (not a public API:
 * only coordinator/ includes this). One libuv loop owns everything here; nothing is
 * touched from another thread. See docs/scheduler.md for the job life cycle.
 *
 * Ownership: the kgb_coord_t owns platforms, campaigns (with their candidates),
 * workers (with their devices) and jobs. Asynchronous callbacks never hold pointers
 * to jobs or campaigns across a database round trip: they carry ids and look the
 * object up again, because it may have been finished or cancelled meanwhile.
 * Workers and platforms live until exit, so pointers to them are stable. */
#ifndef KGB_COORD_H
#define KGB_COORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "db.h"
#include "embedded.h"
#include "sched.h"
#include "sqltext.h"
#include "wire.h"
#include "zsock.h"

typedef struct kgb_coord_config {
	const char *worker_endpoint;
	const char *cli_endpoint;
	const char *database_url;   /* NULL: embedded store in data_dir */
	const char *data_dir;
	uint32_t lease_ms;
	uint32_t leader_lease_ms;   /* the active coordinator's lease in the store (leader.h) */
	uint32_t heartbeat_ms;
	uint32_t max_attempts;
	int64_t backoff_base_ms;
	int64_t backoff_cap_ms;
} kgb_coord_config_t;

struct kgb_cjob;

/* An intrusive FIFO of jobs (a job is in at most one list at a time). */
typedef struct kgb_jlist {
	struct kgb_cjob *head, *tail;
	size_t n;
	size_t npython;           /* of n: jobs of python candidates (a worker that does not
	                           * record them skips them) */
} kgb_jlist_t;

typedef struct kgb_cplat {
	int id;
	char *name, *backend, *device_name, *arch;
	struct kgb_cq **cqs;      /* campaign queues, sorted by priority then age */
	size_t ncqs, capcqs;
	uint64_t last_served;     /* campaign served last here (round robin) */
	bool retired;             /* kgb platform retire: "all" campaigns leave it out */
} kgb_cplat_t;

typedef struct kgb_ccand {
	uint64_t id;
	char *method, *op;
	uint32_t case_count;
	unsigned langs;           /* languages of its plan's kernels (langs.h); 0: none known */
} kgb_ccand_t;

typedef enum { KGB_CAMP_QUEUED = 0, KGB_CAMP_RUNNING, KGB_CAMP_DONE, KGB_CAMP_CANCELLED } kgb_camp_state_t;

typedef struct kgb_ccamp {
	uint64_t id;
	char *name;
	kgb_camp_state_t state;
	int priority;
	int64_t created_ms;
	uint64_t seed;
	bool seed_legacy;         /* seed is set A's, set B's by the old rule (migration 0007) */
	uint32_t shard_size, time_limit_ms, timing_budget_ms;
	bool timing;
	bool all_platforms;
	char **patterns;          /* platform names or fnmatch patterns */
	size_t npatterns;
	kgb_ccand_t *cands;       /* sorted by id */
	size_t ncands;
	size_t open_jobs;         /* jobs in memory (queued, delayed, running, settling) */
	bool finishing;           /* the UPDATE to done is in flight */
	bool held;                /* kgb hold: no assignment until kgb release */
} kgb_ccamp_t;

/* One campaign's queue of ready jobs on one platform. */
typedef struct kgb_cq {
	kgb_ccamp_t *camp;
	kgb_jlist_t jobs;
} kgb_cq_t;

typedef enum {
	KGB_JOB_QUEUED = 0,   /* in its campaign queue on its platform */
	KGB_JOB_DELAYED,      /* backing off: in the delayed list until not_before */
	KGB_JOB_ASSIGNING,    /* the UPDATE to running is in flight; holds a slot */
	KGB_JOB_RUNNING,      /* under a lease; in the running list */
	KGB_JOB_SETTLING,     /* a result, requeue or resync is in flight */
} kgb_job_state_t;

typedef struct kgb_cdev {
	uint32_t index;
	kgb_cplat_t *plat;
	uint32_t slots;
	uint32_t running;         /* jobs assigning or running on it */
	Kgb__Device *info;        /* copy of what the worker sent (owned) */
} kgb_cdev_t;

typedef struct kgb_cworker {
	uint64_t db_id;
	char wid[32];             /* "w-<db_id>" */
	char *name, *hostname, *version;
	kgb_zpeer_t peer;         /* the connection it registered on: the only one whose
	                           * heartbeats and results are taken (docs/security.md) */
	uint8_t session[32];      /* Register.session of the process now registered */
	size_t session_len;
	uint64_t gen;             /* bumped when another process registers under the name */
	double last_seen_ms;
	bool alive;
	kgb_cdev_t *devs;
	size_t ndevs;
	Kgb__DeviceLoad *load;    /* from the last heartbeat (docs/worker.md, "Sharing a device") */
	Kgb__JobPhases *load_ph;  /* load[i].phases points at load_ph[i] where the worker sent them */
	size_t nload;
	bool python;              /* records Python candidates (Register.python) */
	char *python_note;        /* its Python and versions, or why it does not */
	uint32_t results_refused; /* results refused as senseless since start (rcheck.h) */
	bool untrusted;           /* it sent one: no more jobs, no more of its results taken */
	bool drained;             /* kgb worker drain: no new jobs (its running ones finish) */
	bool native, native_known; /* Register.native: its provider's Python imports torch */
	char *native_note;
	bool draining;            /* it is stopping (WorkerDrain, Register.draining): no more jobs */
} kgb_cworker_t;

typedef struct kgb_cjob {
	uint64_t id;
	kgb_ccamp_t *camp;
	const kgb_ccand_t *cand;
	kgb_cplat_t *plat;
	uint32_t lo, hi;
	uint32_t attempts;
	kgb_job_state_t st;
	kgb_lease_t lease;        /* valid while RUNNING */
	uint64_t lease_gen;       /* holder's kgb_cworker_t.gen when granted; 0: not yet
	                           * known (loaded from the store after a restart) */
	kgb_cworker_t *worker;    /* holder, when known (slot accounting) */
	uint32_t dev;
	double not_before_ms;     /* DELAYED: monotonic ms */
	bool result_pending;      /* SETTLING: the holder's result is on its way to the store
	                           * (copies resent meanwhile are dropped; one ack answers them) */
	kgb_jlist_t *list;        /* the list it is in, or NULL */
	struct kgb_cjob *prev, *next;
} kgb_cjob_t;

/* What a JobAssign needs of its candidate, read from the store once per candidate and
 * kept while its campaign is in memory (up to KGB_COORD_CAND_CACHE_BYTES of plans and
 * sources; beyond that they are read with every assignment and not kept). */
struct json_t;
typedef struct kgb_ccache {
	uint64_t cand_id;
	char *plan_json;
	struct json_t *sources;   /* parsed: [{"name", "content"}, ...] */
	size_t bytes;
	bool kept;                /* in the cache (else the caller frees it) */
} kgb_ccache_t;
#define KGB_COORD_CAND_CACHE_BYTES ((size_t)256 << 20)

/* The one way the state layer (state.c) reaches the layers above it: it emits intents
 * through this table, which the worker protocol layer (wproto.c) provides and main.c
 * installs. The dependency runs one way, protocol -> state: message handlers call the
 * job state functions; state never calls into wproto.c, cproto.c or metrics.c
 * (docs/architecture.md, "Layers of the coordinator"; scripts/check-layers.sh). */
struct kgb_coord;
typedef struct kgb_coord_outbox {
	/* Send JobAssign for a job that just became running. */
	void (*assign)(struct kgb_coord *c, kgb_cjob_t *j, const kgb_ccache_t *cand);
	/* Tell worker w to stop the given jobs. */
	void (*cancel)(struct kgb_coord *c, kgb_cworker_t *w, const uint64_t *ids, size_t n);
	/* Free what the protocol layer keeps on c (results still gathering); called by
	 * kgb_coord_state_free, after the store was closed. May be NULL. */
	void (*release)(struct kgb_coord *c);
} kgb_coord_outbox_t;

/* Events the state counts for the layers above it (metrics.c reads them; the
 * protocol layer adds what it records through the state). Loop thread only. */
typedef struct kgb_coord_counters {
	uint64_t leases_expired;   /* job leases that expired (kgb_coord_tick) */
	uint64_t results_recorded; /* case results written to the store */
} kgb_coord_counters_t;

typedef struct kgb_coord {
	uv_loop_t *loop;
	const kgb_coord_outbox_t *out; /* set before the loop runs */
	kgb_coord_config_t cfg;
	void *zctx;
	kgb_zsock_t *wsock, *csock;
	kgb_db_t *db;
	struct kgb_leader *leader; /* one active coordinator per store (leader.h) */
	kgb_embedded_t *emb;
	bool ready, stopping;
	int exit_code;
	kgb_cplat_t **plats;
	size_t nplats;
	kgb_ccamp_t **camps;
	size_t ncamps;
	kgb_cworker_t **workers;
	size_t nworkers;
	kgb_cjob_t **jmap;        /* open addressing on job id */
	size_t jcap, jcount;
	kgb_jlist_t running, delayed;
	uv_timer_t tick, kick, drain;
	uv_idle_t drop_idle;      /* frees the queued jobs of cancelled campaigns in slices */
	struct kgb_cdrop *drops;  /* campaigns whose queued jobs are being freed */
	uv_signal_t sigint, sigterm;
	bool kick_armed;
	double last_flush_ms;
	size_t resends_dropped;   /* result copies dropped while the first was being stored */
	size_t last_logged_stmts; /* store counters logged at the last flush */
	kgb_ccache_t **ccache;    /* open addressing on candidate id */
	size_t cccap, cccount, ccbytes;
	struct kgb_abatch *abatch; /* assignments gathering into one statement, or NULL */
	struct kgb_rbatch *rbatch; /* results gathering into one statement (wproto.c), or NULL */
	size_t assign_stmts, result_stmts; /* multi-row statements so far */
	kgb_coord_counters_t counters;
} kgb_coord_t;

/* Admission control: no new assignment while this many statements wait for the
 * store (results are always taken; docs/scheduler.md, "Flow control"). */
#define KGB_COORD_DB_BACKLOG 8192

/* ---- state.c: memory model and scheduling ---- */
void kgb_coord_state_init(kgb_coord_t *c);
void kgb_coord_state_free(kgb_coord_t *c);
kgb_cjob_t *kgb_coord_job(kgb_coord_t *c, uint64_t id);
/* The first members of the context of a request from the CLI (cproto.c, oproto.c,
 * gproto.c): the coordinator, and the peer and sequence number its answer goes to. */
#define KGB_CREQ_MEMBERS                                                                               \
	kgb_coord_t *c;                                                                                    \
	kgb_zpeer_t peer;                                                                                  \
	uint64_t seq
typedef struct kgb_creq {
	KGB_CREQ_MEMBERS;
} kgb_creq_t;
/* A context of size bytes (a struct that starts with KGB_CREQ_MEMBERS), zeroed but for
 * those; free() frees it. */
void *kgb_creq_new(size_t size, kgb_coord_t *c, const kgb_zpeer_t *peer, uint64_t seq);

kgb_ccamp_t *kgb_coord_camp(kgb_coord_t *c, uint64_t id);
kgb_cplat_t *kgb_coord_plat(kgb_coord_t *c, int id);
kgb_cplat_t *kgb_coord_plat_by_name(kgb_coord_t *c, const char *name);
kgb_cworker_t *kgb_coord_worker(kgb_coord_t *c, uint64_t db_id);
kgb_cworker_t *kgb_coord_worker_by_wid(kgb_coord_t *c, const char *wid);
const kgb_ccand_t *kgb_coord_cand(const kgb_ccamp_t *camp, uint64_t id);
/* Add a platform known to the store; returns it (existing one if already known). */
kgb_cplat_t *kgb_coord_plat_add(kgb_coord_t *c, int id, const char *name, const char *backend,
                                const char *device_name, const char *arch);
/* Take ownership of camp (heap, with its candidates); registers it. */
void kgb_coord_camp_add(kgb_coord_t *c, kgb_ccamp_t *camp);
bool kgb_coord_camp_matches(const kgb_ccamp_t *camp, const char *platform);
/* True while the campaign waits for a platform it names (or any, for "all"). */
bool kgb_coord_camp_pending(kgb_coord_t *c, const kgb_ccamp_t *camp);
/* The kernel languages of an "all" campaign's candidates that no known platform runs
 * (langs.h bits; 0: every candidate has one): the campaign stays open for them. */
unsigned kgb_coord_camp_unplaced(const kgb_coord_t *c, const kgb_ccamp_t *camp);
/* Create a job in memory in the given store state; db state strings "queued",
 * "running". Ignores ids already known. */
kgb_cjob_t *kgb_coord_job_load(kgb_coord_t *c, uint64_t id, kgb_ccamp_t *camp, const kgb_ccand_t *cand,
                               kgb_cplat_t *plat, uint32_t lo, uint32_t hi, const char *state,
                               uint64_t epoch, uint32_t attempts, uint64_t worker_db_id, double delay_ms);
/* Drop a job from memory (its store row is final or gone). */
void kgb_coord_job_finish(kgb_coord_t *c, kgb_cjob_t *j);
/* Detach a job from its list and give back its slot; it is then SETTLING. */
void kgb_coord_job_settle(kgb_coord_t *c, kgb_cjob_t *j);
/* Detach a job from its list and make it SETTLING, keeping its slot: a result on its
 * way to the store still counts against the worker's credit until it is durable. */
void kgb_coord_job_settle_held(kgb_coord_t *c, kgb_cjob_t *j);
/* Put a job back in its queue (after delay_ms). */
void kgb_coord_job_requeue(kgb_coord_t *c, kgb_cjob_t *j, double delay_ms);
/* Re-read a job's row and make memory agree with it. */
void kgb_coord_job_resync(kgb_coord_t *c, kgb_cjob_t *j);
/* Give a running job back to the store's queue (or fail it after max_attempts):
 * the job becomes SETTLING; cb gets rows (state, attempts, backoff_ms), none if the
 * job was not running under its epoch any more. */
void kgb_coord_requeue(kgb_coord_t *c, kgb_cjob_t *j, const char *reason, kgb_db_cb cb, void *arg);
/* Count a job as held by w on device dev (slot accounting). */
void kgb_coord_job_hold(kgb_cjob_t *j, kgb_cworker_t *w, uint32_t dev);
/* Expand camp's candidates into jobs on plat (missing ones only). */
void kgb_coord_expand(kgb_coord_t *c, kgb_ccamp_t *camp, kgb_cplat_t *plat);
/* A new platform: expand every open campaign that targets it. */
void kgb_coord_platform_appeared(kgb_coord_t *c, kgb_cplat_t *plat);
/* Mark the campaign done in the store if nothing is left to run. */
void kgb_coord_camp_check_done(kgb_coord_t *c, kgb_ccamp_t *camp);
/* Remove a campaign and all its jobs from memory (after cancel). Running jobs are
 * added to cancel lists per worker and sent as CancelJobs; queued ones are freed in
 * slices on later loop turns. Returns jobs dropped; *ids (if ids is not NULL) gets
 * their ids (caller frees; kgb_coord_cancel_jobs takes them). */
size_t kgb_coord_camp_drop(kgb_coord_t *c, kgb_ccamp_t *camp, uint64_t **ids);
/* Mark the queued and running jobs of a cancelled campaign cancelled in the store:
 * the n ids (owned by the callee, may be NULL) in slices of KGB_COORD_CANCEL_SLICE
 * rows, one statement each with other statements in between, then one sweep of the
 * campaign for any the list missed. */
#define KGB_COORD_CANCEL_SLICE 1000
/* Queued jobs of a cancelled campaign freed per loop turn. */
#define KGB_COORD_DROP_SLICE 8192
void kgb_coord_cancel_jobs(kgb_coord_t *c, uint64_t campaign_id, uint64_t *ids, size_t n);
/* Drop a campaign's jobs on the given platforms from memory (their store rows are
 * already cancelled); running ones are cancelled on their workers. The campaign goes
 * on elsewhere, and is done when nothing is left. Returns jobs dropped. */
size_t kgb_coord_camp_drop_platforms(kgb_coord_t *c, kgb_ccamp_t *camp, const int *plat_ids, size_t nplat);
/* Ask for a scheduling pass on the next loop iteration. */
void kgb_coord_kick(kgb_coord_t *c);
/* The periodic pass: leases, backoff, lost workers. */
void kgb_coord_tick(kgb_coord_t *c);
/* Queued and running job counts on a platform (for PlatformsReply). */
void kgb_coord_plat_counts(kgb_coord_t *c, const kgb_cplat_t *p, uint32_t *queued, uint32_t *running);

/* The cached plan and sources of a candidate, or NULL. */
const kgb_ccache_t *kgb_coord_ccache(kgb_coord_t *c, uint64_t cand_id);
/* Free a kgb_ccache_t that is not kept. */
void kgb_coord_ccache_free(kgb_ccache_t *e);
/* The label of case i of op (cached per operator), or NULL. */
const char *kgb_coord_case_label(const char *op, uint32_t i);
/* Free the label cache (at exit). */
void kgb_coord_labels_free(void);

/* ---- load.c: migrations and loading state from the store ---- */
typedef void (*kgb_coord_done_fn)(kgb_coord_t *c, int rc);
/* Apply pending migrations under an advisory lock; done(c, 0 | -1). */
void kgb_coord_migrate(kgb_coord_t *c, kgb_coord_done_fn done);
/* Load platforms, open campaigns and their queued/running jobs (campaign_id 0: all;
 * else just that campaign, after a submit), then expand missing jobs. */
void kgb_coord_load(kgb_coord_t *c, uint64_t campaign_id, kgb_coord_done_fn done);
/* After a submit: as kgb_coord_load for the campaign, its jobs (ids first_job to
 * last_job) read in pages, one statement per loop turn. */
void kgb_coord_load_submitted(kgb_coord_t *c, uint64_t campaign_id, uint64_t first_job, uint64_t last_job,
                              kgb_coord_done_fn done);

/* ---- wproto.c: the worker socket ---- */
/* Free results still gathering (at exit, after the store was closed; the outbox's
 * release). */
void kgb_coord_rbatch_free(kgb_coord_t *c);
void kgb_coord_on_worker_msg(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data, size_t len,
                             bool layout_bad, void *arg);
/* The outbox the state layer sends through (JobAssign, CancelJobs). */
extern const kgb_coord_outbox_t kgb_wproto_outbox;
/* Reply with ErrorReply not_active (seq echoed): this coordinator does not serve now
 * (a standby, or still loading after taking over; leader.h). */
void kgb_coord_send_not_active(kgb_coord_t *c, kgb_zsock_t *zs, const kgb_zpeer_t *peer, uint64_t seq);
/* Reply with ErrorReply (seq echoed). */
void kgb_coord_send_error(kgb_zsock_t *zs, const kgb_zpeer_t *peer, uint64_t seq, const char *reason);
/* Refuse a message of a type the socket (named sock: "worker", "CLI") does not take:
 * logged (after log_prefix) and answered with ErrorReply. */
void kgb_coord_refuse_type(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const Kgb__Envelope *env, const char *sock,
                           const char *log_prefix);
/* How a socket's message handler speaks of it (kgb_coord_envelope_in). */
typedef struct kgb_coord_sockdesc {
	const char *pre, *post; /* a peer in the log: "<pre>peer=ID<post>" */
	const char *frames;     /* the frame layouts the socket takes, for the log */
	size_t max_frame;       /* the largest envelope it takes */
} kgb_coord_sockdesc_t;
/* The start of a socket's message handler: nothing while stopping; a message of other
 * frames than the socket takes, or a frame that does not decode to an envelope, is
 * logged and answered with ErrorReply; while this coordinator does not serve, the
 * answer is not_active. Returns the envelope to handle (the caller frees it) or NULL. */
Kgb__Envelope *kgb_coord_envelope_in(kgb_coord_t *c, kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data,
                                     size_t len, bool layout_bad, const kgb_coord_sockdesc_t *s);

/* ---- cproto.c: the CLI socket ---- */
void kgb_coord_on_cli_msg(kgb_zsock_t *zs, const kgb_zpeer_t *peer, const void *data, size_t len,
                          bool layout_bad, void *arg);

/* ---- oproto.c: operating the cluster on the CLI socket ---- */
/* Answer env if it is an AdminRequest (platform retire, worker drain and resume,
 * campaign hold and release) or a JobInfoRequest and return true; false for any other
 * body. env stays the caller's. */
bool kgb_coord_on_ops_msg(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env);

/* ---- gproto.c: kgb generate's messages on the CLI socket ---- */
/* Answer env if it is one of kgb generate's requests (GenOpen, GenRecord,
 * GenVerdicts) and return true; false for any other body. env stays the caller's. */
bool kgb_coord_on_gen_msg(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env);
/* ---- tables.c: kgb tables (docs/tables.md) ---- */
void kgb_coord_on_tables(kgb_coord_t *c, const kgb_zpeer_t *peer, Kgb__Envelope *env);

/* ---- helpers (state.c) ---- */
/* Platform name rule of docs/TEAM-NOTES.md: "<backend>:<slug of device name>". Caller frees. */
char *kgb_coord_platform_name(const char *backend, const char *device_name);

#endif
