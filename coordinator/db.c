/* Asynchronous libpq driver with batched, pipelined writes: see db.h. */
#include "db.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

/* A batch closes at this many statements or parameter bytes; what arrives while it is
 * in flight forms the next one. */
#define BATCH_MAX_STMTS 1024
#define BATCH_MAX_BYTES (8u << 20)
/* Named prepared statements per connection (one per distinct SQL text); beyond this,
 * statements are parsed each time. */
#define PSTMT_CAP 512
#define PSTMT_MAX 256

typedef struct pstmt {
	char *sql;
	char name[16];
	bool prepared; /* a Parse was sent and has not failed */
} pstmt_t;

typedef struct qitem {
	struct qitem *next;
	char *sql;
	int n;
	char **vals;
	size_t bytes;
	int flags;
	bool simple;
	bool solo;             /* replayed alone after its batch failed */
	kgb_db_cb cb;
	void *arg;
	kgb_db_build_fn build; /* deferred: makes sql and vals when its batch is formed */
	pstmt_t *ps;           /* prepared statement it executes, or NULL */
	bool parse_pending;    /* the Parse for ps went with this item: its result comes first */
	PGresult *res;         /* last result so far */
	char *err;             /* first error so far */
} qitem_t;

typedef enum { DB_CONNECTING = 0, DB_READY, DB_WAIT, DB_CLOSED } db_state_t;

struct kgb_db {
	uv_loop_t *loop;
	char *conninfo;
	PGconn *conn;
	uv_poll_t *poll;       /* one per socket; freed in its close callback */
	int poll_fd;
	int poll_events;
	uv_timer_t timer;
	uv_prepare_t check;    /* before the loop waits for I/O: sends deferred statements */
	int open_handles;      /* timer and check, until closed */
	db_state_t st;
	int backoff_ms;
	bool ever_connected;
	qitem_t *head, *tail;  /* waiting */
	qitem_t *bhead, *btail; /* in flight: one simple statement, or one pipelined batch */
	qitem_t *cur;          /* batch item whose results are being read; NULL: the Sync's */
	size_t nbatch;
	bool pipelined;        /* the in-flight unit is a pipeline batch */
	bool batch_failed;     /* a statement of the batch failed: the batch rolled back */
	bool in_callbacks;     /* completing a batch: pump once at the end */
	size_t npending;
	pstmt_t *ps;           /* PSTMT_CAP slots, open addressing on the SQL text */
	size_t nps, nps_named;
	kgb_db_stats_t stats;
	kgb_db_connect_cb on_connect;
	void *on_connect_arg;
	char *session_sql;     /* run first on every connection (kgb_db_set_session) */
	bool session_bad;      /* it failed on this connection: drop it */
	kgb_db_error_cb on_error;
	void *on_error_arg;
};

static void start_connect(kgb_db_t *db);
static void pump(kgb_db_t *db);
static void session_first(kgb_db_t *db);
static void build_head(kgb_db_t *db);
static void on_poll(uv_poll_t *h, int status, int events);

static void item_reset(qitem_t *q)
{
	if (q->res) {
		PQclear(q->res);
		q->res = NULL;
	}
	free(q->err);
	q->err = NULL;
	q->ps = NULL;
	q->parse_pending = false;
}

static void item_free(qitem_t *q)
{
	if (!q)
		return;
	item_reset(q);
	for (int i = 0; i < q->n; i++)
		free(q->vals[i]);
	free(q->vals);
	free(q->sql);
	free(q);
}

/* ---- prepared statements ---- */

static uint64_t text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void pstmt_forget_all(kgb_db_t *db)
{
	for (size_t i = 0; i < PSTMT_CAP; i++) {
		free(db->ps[i].sql);
		db->ps[i].sql = NULL;
		db->ps[i].prepared = false;
	}
	db->nps = 0;
}

/* The statement slot for sql on this connection, or NULL when the table is full. */
static pstmt_t *pstmt_get(kgb_db_t *db, const char *sql)
{
	size_t i = (size_t)(text_hash(sql) & (PSTMT_CAP - 1));
	while (db->ps[i].sql) {
		if (strcmp(db->ps[i].sql, sql) == 0)
			return &db->ps[i];
		i = (i + 1) & (PSTMT_CAP - 1);
	}
	if (db->nps >= PSTMT_MAX)
		return NULL;
	db->ps[i].sql = kgb_xstrdup(sql);
	/* names are never reused within a connection */
	snprintf(db->ps[i].name, sizeof db->ps[i].name, "kgb%zu", db->nps_named++);
	db->ps[i].prepared = false;
	db->nps++;
	return &db->ps[i];
}

/* ---- socket ---- */

static void poll_closed(uv_handle_t *h)
{
	free(h);
}

static void drop_poll(kgb_db_t *db)
{
	if (db->poll) {
		uv_close((uv_handle_t *)db->poll, poll_closed);
		db->poll = NULL;
	}
	db->poll_fd = -1;
	db->poll_events = 0;
}

/* Watch the connection's current socket for events (re-creating the poll handle
 * when libpq changed the socket). */
static void watch(kgb_db_t *db, int events)
{
	int fd = db->conn ? PQsocket(db->conn) : -1;
	if (fd < 0) {
		drop_poll(db);
		return;
	}
	if (db->poll && db->poll_fd != fd)
		drop_poll(db);
	if (!db->poll) {
		db->poll = kgb_xcalloc(1, sizeof *db->poll);
		if (uv_poll_init(db->loop, db->poll, fd) != 0) {
			free(db->poll);
			db->poll = NULL;
			log_error("db: uv_poll_init failed on fd %d", fd);
			return;
		}
		db->poll->data = db;
		db->poll_fd = fd;
		db->poll_events = 0;
	}
	if (events != db->poll_events) {
		uv_poll_start(db->poll, events, on_poll);
		db->poll_events = events;
	}
}

static void on_timer(uv_timer_t *t)
{
	kgb_db_t *db = t->data;
	if (db->st == DB_WAIT)
		start_connect(db);
}

/* Take the in-flight unit off the connection, as a list in order. */
static qitem_t *take_batch(kgb_db_t *db)
{
	qitem_t *b = db->bhead;
	db->bhead = db->btail = db->cur = NULL;
	db->nbatch = 0;
	db->pipelined = false;
	db->batch_failed = false;
	return b;
}

/* Put a list of items back at the front of the queue, in order. */
static void requeue_front(kgb_db_t *db, qitem_t *first, qitem_t *last)
{
	if (!first)
		return;
	last->next = db->head;
	db->head = first;
	if (!db->tail)
		db->tail = last;
}

/* The connection broke (or never came up): requeue or fail what was in flight, and
 * try again after the backoff. Nothing of an unfinished batch committed (its
 * transaction ends with the Sync), unless the commit itself raced the break: the
 * statements queued with KGB_DB_RETRY are safe to run twice. */
static void lost(kgb_db_t *db, const char *why)
{
	if (db->st == DB_CLOSED)
		return;
	if (db->st == DB_READY)
		log_warn("db: connection lost: %s; reconnecting in %d ms", why, db->backoff_ms);
	else
		log_warn("db: cannot connect: %s; retrying in %d ms", why, db->backoff_ms);
	drop_poll(db);
	if (db->conn) {
		PQfinish(db->conn);
		db->conn = NULL;
	}
	pstmt_forget_all(db);
	db->st = DB_WAIT;
	qitem_t *b = take_batch(db);
	qitem_t *rfirst = NULL, *rlast = NULL, *failed = NULL, **ftail = &failed;
	while (b) {
		qitem_t *q = b;
		b = b->next;
		q->next = NULL;
		item_reset(q);
		if (q->flags & KGB_DB_RETRY) {
			if (rlast)
				rlast->next = q;
			else
				rfirst = q;
			rlast = q;
		} else {
			*ftail = q;
			ftail = &q->next;
		}
	}
	requeue_front(db, rfirst, rlast);
	while (failed) {
		qitem_t *q = failed;
		failed = q->next;
		db->npending--;
		if (q->cb)
			q->cb(NULL, "connection to the database lost while the statement was in flight", q->arg);
		item_free(q);
	}
	uv_timer_start(&db->timer, on_timer, (uint64_t)db->backoff_ms, 0);
	db->backoff_ms = KGB_MIN(db->backoff_ms * 2, 5000);
}

static char *trim_msg(const char *m)
{
	char *s = kgb_xstrdup(m ? m : "unknown error");
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
	/* one log line: libpq messages span lines */
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' || s[i] == '\t')
			s[i] = ' ';
	return s;
}

static void lost_conn(kgb_db_t *db)
{
	char *m = trim_msg(db->conn ? PQerrorMessage(db->conn) : "no connection");
	lost(db, m);
	free(m);
}

static void on_notice(void *arg, const char *msg)
{
	(void)arg;
	log_debug("db: %.*s", (int)strcspn(msg, "\n"), msg);
}

static void connected(kgb_db_t *db)
{
	bool re = db->ever_connected;
	db->st = DB_READY;
	db->ever_connected = true;
	db->backoff_ms = 100;
	PQsetnonblocking(db->conn, 1);
	PQsetNoticeProcessor(db->conn, on_notice, NULL);
	if (re)
		log_info("db: reconnected");
	watch(db, UV_READABLE);
	session_first(db);
	if (db->on_connect)
		db->on_connect(db, re, db->on_connect_arg);
	pump(db);
}

static void connect_step(kgb_db_t *db)
{
	PostgresPollingStatusType ps = PQconnectPoll(db->conn);
	switch (ps) {
	case PGRES_POLLING_READING:
		watch(db, UV_READABLE);
		break;
	case PGRES_POLLING_WRITING:
		watch(db, UV_WRITABLE);
		break;
	case PGRES_POLLING_OK:
		connected(db);
		break;
	default:
		lost_conn(db);
		break;
	}
}

static void start_connect(kgb_db_t *db)
{
	db->st = DB_CONNECTING;
	db->conn = PQconnectStart(db->conninfo);
	if (!db->conn || PQstatus(db->conn) == CONNECTION_BAD) {
		char *m = trim_msg(db->conn ? PQerrorMessage(db->conn) : "out of memory");
		lost(db, m);
		free(m);
		return;
	}
	/* as the libpq manual says: behave as if the last poll returned WRITING */
	watch(db, UV_WRITABLE);
}

/* Hand each item of a finished unit its outcome, in order (the unit's work is
 * committed: this is the moment to acknowledge what it wrote). */
static void complete_list(kgb_db_t *db, qitem_t *b)
{
	db->in_callbacks = true;
	while (b) {
		qitem_t *q = b;
		b = b->next;
		db->npending--;
		PGresult *res = q->res;
		q->res = NULL;
		if (!q->err && !res)
			q->err = kgb_xstrdup("no result");
		if (q->err && db->on_error)
			db->on_error(db, q->err, db->on_error_arg);
		if (q->cb)
			q->cb(q->err ? NULL : res, q->err, q->arg);
		else if (q->err)
			log_error("db: statement failed: %s", q->err);
		if (res)
			PQclear(res);
		item_free(q);
		if (db->st == DB_CLOSED)
			break;
	}
	/* what is left if a callback closed the db */
	while (b) {
		qitem_t *q = b;
		b = b->next;
		item_free(q);
	}
	db->in_callbacks = false;
}

/* The Sync of a batch came back: it committed, or (a statement failed) it rolled
 * back as a whole. A failed batch of several statements is replayed one statement
 * per transaction, so one bad statement fails alone. */
static void batch_done(kgb_db_t *db)
{
	bool failed = db->batch_failed;
	size_t n = db->nbatch;
	qitem_t *last = db->btail;
	qitem_t *b = take_batch(db);
	if (PQexitPipelineMode(db->conn) != 1)
		log_warn("db: leaving pipeline mode: %.200s", PQerrorMessage(db->conn));
	if (failed && n > 1) {
		db->stats.replays++;
		/* the rollback may or may not have kept the statements parsed in it: parse
		 * afresh under new names */
		pstmt_forget_all(db);
		log_warn("db: a batch of %zu statements rolled back on an error; replaying them one by one", n);
		for (qitem_t *q = b; q; q = q->next) {
			item_reset(q);
			q->solo = true;
		}
		requeue_front(db, b, last);
		return;
	}
	db->stats.batches++;
	db->stats.statements += n;
	if (n > db->stats.max_batch)
		db->stats.max_batch = n;
	complete_list(db, b);
}

static void note_result(kgb_db_t *db, qitem_t *q, PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);
	if (q->parse_pending) {
		/* the Parse of the item's prepared statement */
		if (st != PGRES_COMMAND_OK) {
			q->ps->prepared = false;
			if (st != PGRES_PIPELINE_ABORTED && !q->err)
				q->err = trim_msg(PQresultErrorMessage(r));
		}
		if (st == PGRES_FATAL_ERROR)
			db->batch_failed = true;
		PQclear(r);
		return;
	}
	if (st == PGRES_PIPELINE_ABORTED) {
		if (!q->err)
			q->err = kgb_xstrdup("rolled back with its batch");
		PQclear(r);
		return;
	}
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && st != PGRES_EMPTY_QUERY) {
		if (!q->err || strcmp(q->err, "rolled back with its batch") == 0) {
			free(q->err);
			q->err = trim_msg(PQresultErrorMessage(r));
		}
		db->batch_failed = true;
	}
	if (q->res)
		PQclear(q->res);
	q->res = r;
}

static void read_results(kgb_db_t *db)
{
	while (db->bhead && db->conn && db->st == DB_READY) {
		if (PQisBusy(db->conn))
			return;
		PGresult *r = PQgetResult(db->conn);
		if (!db->pipelined) {
			qitem_t *q = db->bhead;
			if (!r) {
				take_batch(db);
				complete_list(db, q);
				return;
			}
			ExecStatusType st = PQresultStatus(r);
			if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && st != PGRES_EMPTY_QUERY && !q->err)
				q->err = trim_msg(PQresultErrorMessage(r));
			if (q->res)
				PQclear(q->res);
			q->res = r;
			continue;
		}
		if (db->cur) {
			if (!r) {
				/* the end of one command's results */
				if (db->cur->parse_pending)
					db->cur->parse_pending = false;
				else
					db->cur = db->cur->next;
				continue;
			}
			note_result(db, db->cur, r);
			continue;
		}
		/* every statement answered: the Sync's result */
		if (!r)
			return;
		ExecStatusType st = PQresultStatus(r);
		PQclear(r);
		if (st == PGRES_PIPELINE_SYNC) {
			batch_done(db);
			return;
		}
		log_warn("db: unexpected %s where the end of a batch was due", PQresStatus(st));
	}
	PGnotify *n;
	while (db->conn && (n = PQnotifies(db->conn)) != NULL)
		PQfreemem(n);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	kgb_db_t *db = h->data;
	if (h != db->poll)
		return;
	if (db->st == DB_CONNECTING) {
		connect_step(db);
		return;
	}
	if (db->st != DB_READY)
		return;
	if (status < 0) {
		lost(db, uv_strerror(status));
		return;
	}
	if (events & UV_WRITABLE) {
		int r = PQflush(db->conn);
		if (r < 0) {
			lost_conn(db);
			return;
		}
		if (r == 0)
			watch(db, UV_READABLE);
	}
	if (events & UV_READABLE) {
		if (!PQconsumeInput(db->conn) || PQstatus(db->conn) == CONNECTION_BAD) {
			lost_conn(db);
			return;
		}
		read_results(db);
	}
	pump(db);
}

static qitem_t *pop(kgb_db_t *db)
{
	qitem_t *q = db->head;
	db->head = q->next;
	if (!db->head)
		db->tail = NULL;
	q->next = NULL;
	if (db->btail)
		db->btail->next = q;
	else
		db->bhead = q;
	db->btail = q;
	db->nbatch++;
	return q;
}

static bool send_one(kgb_db_t *db, qitem_t *q)
{
	const char *const *vals = (const char *const *)q->vals;
	q->ps = pstmt_get(db, q->sql);
	if (!q->ps)
		return PQsendQueryParams(db->conn, q->sql, q->n, NULL, vals, NULL, NULL, 0) == 1;
	if (!q->ps->prepared) {
		if (PQsendPrepare(db->conn, q->ps->name, q->sql, q->n, NULL) != 1)
			return false;
		q->ps->prepared = true;
		q->parse_pending = true;
	}
	return PQsendQueryPrepared(db->conn, q->ps->name, q->n, vals, NULL, NULL, 0) == 1;
}

/* Send the next unit if the connection is idle: a simple-protocol command alone, or
 * a batch of the parameterised statements waiting (all of them, up to the limits)
 * in pipeline mode, closed by one Sync: one round trip and one transaction, so one
 * WAL flush at its commit. */
static void pump(kgb_db_t *db)
{
	if (db->st != DB_READY || db->bhead || !db->head || db->in_callbacks)
		return;
	if (db->session_bad) {
		db->session_bad = false;
		lost(db, "the session's set-up failed");
		return;
	}
	if (db->head->simple) {
		qitem_t *q = pop(db);
		db->pipelined = false;
		if (!PQsendQuery(db->conn, q->sql)) {
			if (PQstatus(db->conn) == CONNECTION_BAD) {
				lost_conn(db);
				return;
			}
			q->err = trim_msg(PQerrorMessage(db->conn));
			take_batch(db);
			complete_list(db, q);
			pump(db);
			return;
		}
	} else {
		if (PQenterPipelineMode(db->conn) != 1) {
			lost_conn(db);
			return;
		}
		db->pipelined = true;
		size_t bytes = 0;
		bool solo = db->head->solo;
		while (db->head && !db->head->simple && db->nbatch < (solo ? 1u : BATCH_MAX_STMTS) &&
		       (build_head(db), true) &&
		       (db->nbatch == 0 || (!db->head->solo && bytes + db->head->bytes <= BATCH_MAX_BYTES))) {
			qitem_t *q = pop(db);
			bytes += q->bytes;
			if (!send_one(db, q)) {
				/* libpq refuses only on a broken connection or a programming error */
				lost_conn(db);
				return;
			}
		}
		db->cur = db->bhead;
		if (PQpipelineSync(db->conn) != 1) {
			lost_conn(db);
			return;
		}
	}
	int r = PQflush(db->conn);
	if (r < 0) {
		lost_conn(db);
		return;
	}
	watch(db, r == 1 ? (UV_READABLE | UV_WRITABLE) : UV_READABLE);
}

/* Make the statement of a deferred item at the head of the queue. */
static void build_head(kgb_db_t *db)
{
	qitem_t *q = db->head;
	if (!q || !q->build)
		return;
	kgb_db_build_fn build = q->build;
	q->build = NULL;
	kgb_db_stmt_t st = {NULL, 0, NULL};
	build(q->arg, &st);
	KGB_ASSERT(st.sql != NULL);
	q->sql = kgb_xstrdup(st.sql);
	q->n = st.nparams;
	free(q->vals);
	q->vals = st.values ? st.values : kgb_xcalloc(1, sizeof *q->vals);
	q->bytes = strlen(q->sql);
	for (int i = 0; i < q->n; i++)
		q->bytes += q->vals[i] ? strlen(q->vals[i]) : 0;
}

/* Put q at the queue's tail (not sent yet). */
static void queue_append(kgb_db_t *db, qitem_t *q)
{
	if (db->tail)
		db->tail->next = q;
	else
		db->head = q;
	db->tail = q;
	db->npending++;
}

static void enqueue(kgb_db_t *db, qitem_t *q)
{
	queue_append(db, q);
	pump(db);
}

kgb_db_t *kgb_db_new(uv_loop_t *loop, const char *conninfo, kgb_db_connect_cb on_connect, void *arg)
{
	kgb_db_t *db = kgb_xcalloc(1, sizeof *db);
	db->loop = loop;
	db->conninfo = kgb_xstrdup(conninfo);
	db->poll_fd = -1;
	db->backoff_ms = 100;
	db->on_connect = on_connect;
	db->on_connect_arg = arg;
	db->ps = kgb_xcalloc(PSTMT_CAP, sizeof *db->ps);
	uv_timer_init(loop, &db->timer);
	db->timer.data = db;
	uv_prepare_init(loop, &db->check);
	db->check.data = db;
	db->open_handles = 2;
	start_connect(db);
	return db;
}

void kgb_db_query(kgb_db_t *db, int flags, kgb_db_cb cb, void *arg, const char *sql, int nparams,
                  const char *const *values)
{
	qitem_t *q = kgb_xcalloc(1, sizeof *q);
	q->sql = kgb_xstrdup(sql);
	q->n = nparams;
	q->vals = kgb_xcalloc((size_t)(nparams > 0 ? nparams : 1), sizeof *q->vals);
	q->bytes = strlen(sql);
	for (int i = 0; i < nparams; i++) {
		q->vals[i] = values[i] ? kgb_xstrdup(values[i]) : NULL;
		q->bytes += values[i] ? strlen(values[i]) : 0;
	}
	q->flags = flags;
	q->cb = cb;
	q->arg = arg;
	enqueue(db, q);
}

/* Before the loop waits for I/O: whatever joined the deferred statements since goes
 * out now if the connection is idle (else with the next batch). */
static void on_check(uv_prepare_t *h)
{
	kgb_db_t *db = h->data;
	uv_prepare_stop(h);
	pump(db);
}

const void *kgb_db_defer(kgb_db_t *db, int flags, kgb_db_build_fn build, kgb_db_cb cb, void *arg)
{
	qitem_t *q = kgb_xcalloc(1, sizeof *q);
	q->build = build;
	q->flags = flags;
	q->cb = cb;
	q->arg = arg;
	/* not pumped now: what the rest of this loop turn adds joins it; the prepare
	 * handle (or a statement queued after it) sends it, before the loop next waits */
	queue_append(db, q);
	if (db->st != DB_CLOSED)
		uv_prepare_start(&db->check, on_check);
	return q;
}

bool kgb_db_defer_open(const kgb_db_t *db, const void *h)
{
	const qitem_t *q = h;
	return q && db->tail == q && q->build != NULL;
}

void kgb_db_exec(kgb_db_t *db, int flags, kgb_db_cb cb, void *arg, const char *sql)
{
	qitem_t *q = kgb_xcalloc(1, sizeof *q);
	q->sql = kgb_xstrdup(sql);
	q->simple = true;
	q->bytes = strlen(sql);
	q->flags = flags;
	q->cb = cb;
	q->arg = arg;
	enqueue(db, q);
}

static void session_cb(PGresult *res, const char *err, void *arg)
{
	(void)res;
	kgb_db_t *db = arg;
	if (err && db->st == DB_READY) {
		/* nothing goes out on a session that does not say what it must: connect again */
		log_error("db: setting up the session failed: %s", err);
		db->session_bad = true;
	}
}

/* Put the session's set-up command at the front of the queue (it goes out alone, as
 * a simple command, before anything queued after the connection came up). */
static void session_first(kgb_db_t *db)
{
	if (!db->session_sql)
		return;
	qitem_t *q = kgb_xcalloc(1, sizeof *q);
	q->sql = kgb_xstrdup(db->session_sql);
	q->simple = true;
	q->bytes = strlen(q->sql);
	q->cb = session_cb;
	q->arg = db;
	requeue_front(db, q, q);
	db->npending++;
}

void kgb_db_set_session(kgb_db_t *db, const char *sql)
{
	free(db->session_sql);
	db->session_sql = sql ? kgb_xstrdup(sql) : NULL;
	if (db->st == DB_READY) {
		session_first(db);
		pump(db);
	}
}

void kgb_db_on_error(kgb_db_t *db, kgb_db_error_cb cb, void *arg)
{
	db->on_error = cb;
	db->on_error_arg = arg;
}

size_t kgb_db_pending(const kgb_db_t *db)
{
	return db->npending;
}

bool kgb_db_connected(const kgb_db_t *db)
{
	return db->st == DB_READY;
}

void kgb_db_stats(const kgb_db_t *db, kgb_db_stats_t *out)
{
	*out = db->stats;
}

static void timer_closed(uv_handle_t *h)
{
	kgb_db_t *db = h->data;
	if (--db->open_handles > 0)
		return;
	free(db->conninfo);
	free(db->session_sql);
	free(db->ps);
	free(db);
}

void kgb_db_close(kgb_db_t **pdb)
{
	kgb_db_t *db = *pdb;
	if (!db)
		return;
	*pdb = NULL;
	db->st = DB_CLOSED;
	drop_poll(db);
	if (db->conn) {
		PQfinish(db->conn);
		db->conn = NULL;
	}
	pstmt_forget_all(db);
	for (qitem_t *b = take_batch(db); b;) {
		qitem_t *q = b;
		b = b->next;
		item_free(q);
	}
	while (db->head) {
		qitem_t *q = db->head;
		db->head = q->next;
		item_free(q);
	}
	db->tail = NULL;
	uv_timer_stop(&db->timer);
	uv_close((uv_handle_t *)&db->timer, timer_closed);
	uv_prepare_stop(&db->check);
	uv_close((uv_handle_t *)&db->check, timer_closed);
}
