/* Asynchronous libpq driver: see db.h. */
#include "db.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

typedef struct qitem {
	struct qitem *next;
	char *sql;
	int n;
	char **vals;
	int flags;
	bool simple;
	kgb_db_cb cb;
	void *arg;
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
	int open_handles;
	db_state_t st;
	int backoff_ms;
	bool ever_connected;
	qitem_t *head, *tail;
	qitem_t *inflight;
	PGresult *last;        /* result of the in-flight statement so far */
	char *error;           /* first error of the in-flight statement */
	size_t npending;
	kgb_db_connect_cb on_connect;
	void *on_connect_arg;
};

static void start_connect(kgb_db_t *db);
static void pump(kgb_db_t *db);
static void on_poll(uv_poll_t *h, int status, int events);

static void item_free(qitem_t *q)
{
	if (!q)
		return;
	for (int i = 0; i < q->n; i++)
		free(q->vals[i]);
	free(q->vals);
	free(q->sql);
	free(q);
}

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

static void clear_inflight_state(kgb_db_t *db)
{
	if (db->last) {
		PQclear(db->last);
		db->last = NULL;
	}
	free(db->error);
	db->error = NULL;
}

static void on_timer(uv_timer_t *t)
{
	kgb_db_t *db = t->data;
	if (db->st == DB_WAIT)
		start_connect(db);
}

/* The connection broke (or never came up): fail or requeue the in-flight statement,
 * and try again after the backoff. */
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
	clear_inflight_state(db);
	db->st = DB_WAIT;
	qitem_t *q = db->inflight;
	db->inflight = NULL;
	if (q) {
		if (q->flags & KGB_DB_RETRY) {
			q->next = db->head;
			db->head = q;
			if (!db->tail)
				db->tail = q;
		} else {
			db->npending--;
			if (q->cb)
				q->cb(NULL, "connection to the database lost while the statement was in flight",
				      q->arg);
			item_free(q);
		}
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
	default: {
		char *m = trim_msg(PQerrorMessage(db->conn));
		lost(db, m);
		free(m);
		break;
	}
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

static void complete(kgb_db_t *db)
{
	qitem_t *q = db->inflight;
	db->inflight = NULL;
	db->npending--;
	PGresult *res = db->last;
	db->last = NULL;
	char *err = db->error;
	db->error = NULL;
	if (!err && !res)
		err = kgb_xstrdup("no result");
	if (q->cb)
		q->cb(res, err, q->arg);
	else if (err)
		log_error("db: statement failed: %s", err);
	if (res)
		PQclear(res);
	free(err);
	item_free(q);
}

static void read_results(kgb_db_t *db)
{
	while (db->inflight && db->conn) {
		if (PQisBusy(db->conn))
			return;
		PGresult *r = PQgetResult(db->conn);
		if (!r) {
			complete(db);
			break;
		}
		ExecStatusType st = PQresultStatus(r);
		if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && st != PGRES_EMPTY_QUERY) {
			if (!db->error)
				db->error = trim_msg(PQresultErrorMessage(r));
		}
		if (db->last)
			PQclear(db->last);
		db->last = r;
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
			char *m = trim_msg(PQerrorMessage(db->conn));
			lost(db, m);
			free(m);
			return;
		}
		if (r == 0)
			watch(db, UV_READABLE);
	}
	if (events & UV_READABLE) {
		if (!PQconsumeInput(db->conn) || PQstatus(db->conn) == CONNECTION_BAD) {
			char *m = trim_msg(PQerrorMessage(db->conn));
			lost(db, m);
			free(m);
			return;
		}
		read_results(db);
	}
	pump(db);
}

/* Send the next queued statement if the connection is idle. */
static void pump(kgb_db_t *db)
{
	while (db->st == DB_READY && !db->inflight && db->head) {
		qitem_t *q = db->head;
		db->head = q->next;
		if (!db->head)
			db->tail = NULL;
		q->next = NULL;
		db->inflight = q;
		int ok;
		if (q->simple)
			ok = PQsendQuery(db->conn, q->sql);
		else
			ok = PQsendQueryParams(db->conn, q->sql, q->n, NULL, (const char *const *)q->vals, NULL,
			                       NULL, 0);
		if (!ok) {
			if (PQstatus(db->conn) == CONNECTION_BAD) {
				char *m = trim_msg(PQerrorMessage(db->conn));
				lost(db, m);
				free(m);
				return;
			}
			db->error = trim_msg(PQerrorMessage(db->conn));
			complete(db);
			continue;
		}
		int r = PQflush(db->conn);
		if (r < 0) {
			char *m = trim_msg(PQerrorMessage(db->conn));
			lost(db, m);
			free(m);
			return;
		}
		watch(db, r == 1 ? (UV_READABLE | UV_WRITABLE) : UV_READABLE);
	}
}

static void enqueue(kgb_db_t *db, qitem_t *q)
{
	if (db->tail)
		db->tail->next = q;
	else
		db->head = q;
	db->tail = q;
	db->npending++;
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
	uv_timer_init(loop, &db->timer);
	db->timer.data = db;
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
	for (int i = 0; i < nparams; i++)
		q->vals[i] = values[i] ? kgb_xstrdup(values[i]) : NULL;
	q->flags = flags;
	q->cb = cb;
	q->arg = arg;
	enqueue(db, q);
}

void kgb_db_exec(kgb_db_t *db, int flags, kgb_db_cb cb, void *arg, const char *sql)
{
	qitem_t *q = kgb_xcalloc(1, sizeof *q);
	q->sql = kgb_xstrdup(sql);
	q->simple = true;
	q->flags = flags;
	q->cb = cb;
	q->arg = arg;
	enqueue(db, q);
}

size_t kgb_db_pending(const kgb_db_t *db)
{
	return db->npending;
}

bool kgb_db_connected(const kgb_db_t *db)
{
	return db->st == DB_READY;
}

static void timer_closed(uv_handle_t *h)
{
	kgb_db_t *db = h->data;
	free(db->conninfo);
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
	clear_inflight_state(db);
	if (db->conn) {
		PQfinish(db->conn);
		db->conn = NULL;
	}
	item_free(db->inflight);
	db->inflight = NULL;
	while (db->head) {
		qitem_t *q = db->head;
		db->head = q->next;
		item_free(q);
	}
	db->tail = NULL;
	uv_timer_stop(&db->timer);
	uv_close((uv_handle_t *)&db->timer, timer_closed);
}
