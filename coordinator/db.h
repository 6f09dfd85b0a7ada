/* Asynchronous PostgreSQL access for the coordinator's event loop.
 *
 * One connection, driven by libpq in non-blocking mode from a uv_poll on its socket,
 * and a FIFO of queries with callbacks. Parameterised statements go out in batches:
 * everything queued while the previous batch was in flight (up to 1024 statements or
 * 8 MiB) is sent in pipeline mode, each statement as a named prepared statement, and
 * closed by one Sync, so a batch is one round trip and one transaction with one WAL
 * flush at its commit. Callbacks run in queue order once the batch has committed:
 * whatever a callback acknowledges is durable. If a statement of a batch fails, the
 * whole batch rolls back and its statements are replayed one per transaction, so only
 * the failing one sees an error. Simple-protocol commands (kgb_db_exec) run alone,
 * outside any batch.
 *
 * When the server goes away the connection is re-established with exponential
 * backoff; queries queued meanwhile wait for it. A query that was in flight when the
 * connection broke is sent again if it was queued with KGB_DB_RETRY (the statement
 * must then be safe to run twice), else its callback gets an error. See
 * docs/store.md and docs/scheduler.md. */
#ifndef KGB_COORD_DB_H
#define KGB_COORD_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <postgresql/libpq-fe.h> /* Debian: pkg-config --cflags libpq */
#include <uv.h>

typedef struct kgb_db kgb_db_t;

/* Query callback. On success err is NULL and res is the statement's result
 * (PGRES_TUPLES_OK or PGRES_COMMAND_OK); on failure err is the server's or libpq's
 * message and res may be NULL. res belongs to the db and is freed after the callback
 * returns. The callback may queue further queries. */
typedef void (*kgb_db_cb)(PGresult *res, const char *err, void *arg);
/* Called every time a connection is established (first connect and reconnects),
 * before any queued query is sent. */
typedef void (*kgb_db_connect_cb)(kgb_db_t *db, bool reconnect, void *arg);

enum {
	KGB_DB_RETRY = 1 << 0, /* re-send after a reconnect if in flight when it broke */
};

/* Create a db handle for conninfo (a libpq connection string or URL) on loop and
 * start connecting. Destroy with kgb_db_close once the loop no longer needs it. */
kgb_db_t *kgb_db_new(uv_loop_t *loop, const char *conninfo, kgb_db_connect_cb on_connect, void *arg);
/* Queue a parameterised statement (text parameters, NULL = SQL NULL). sql and the
 * values are copied. cb may be NULL (errors are then logged). */
void kgb_db_query(kgb_db_t *db, int flags, kgb_db_cb cb, void *arg, const char *sql, int nparams,
                  const char *const *values);
/* A deferred statement: queued now, its text and parameters made by build(arg, out) only
 * when its batch is formed, so what the caller adds to arg meanwhile goes out in the
 * same statement (many jobs' results or assignments in one multi-row statement). build
 * sets out->sql (copied) and out->values: nparams strings (NULL = SQL NULL) in an array,
 * all from malloc, which the db takes. Returns a handle for kgb_db_defer_open. */
typedef struct kgb_db_stmt {
	const char *sql;
	int nparams;
	char **values;
} kgb_db_stmt_t;
typedef void (*kgb_db_build_fn)(void *arg, kgb_db_stmt_t *out);
const void *kgb_db_defer(kgb_db_t *db, int flags, kgb_db_build_fn build, kgb_db_cb cb, void *arg);
/* True while the deferred statement h is not built yet and is the last statement
 * queued: work added to it now keeps the order in which the store sees statements.
 * Call it only while build has not been called for h. */
bool kgb_db_defer_open(const kgb_db_t *db, const void *h);
/* Queue a simple-protocol command string: may hold several statements (e.g. one
 * migration wrapped in BEGIN/COMMIT). The callback gets the last result. */
void kgb_db_exec(kgb_db_t *db, int flags, kgb_db_cb cb, void *arg, const char *sql);
/* Queries waiting or in flight. */
size_t kgb_db_pending(const kgb_db_t *db);
/* Counters since start: batches committed, statements in them, the largest batch,
 * failed batches replayed one statement at a time. */
typedef struct kgb_db_stats {
	size_t batches, statements, max_batch, replays;
} kgb_db_stats_t;
void kgb_db_stats(const kgb_db_t *db, kgb_db_stats_t *out);
/* A simple-protocol command run first on every connection (now, when connected, and
 * after every reconnect), before any statement queued: what the coordinator's
 * session must say (its application_name, the leader epoch it writes under). sql is
 * copied; NULL: none. */
void kgb_db_set_session(kgb_db_t *db, const char *sql);
/* Called with the message of every statement that fails (besides its callback). */
typedef void (*kgb_db_error_cb)(kgb_db_t *db, const char *err, void *arg);
void kgb_db_on_error(kgb_db_t *db, kgb_db_error_cb cb, void *arg);
/* True while connected. */
bool kgb_db_connected(const kgb_db_t *db);
/* Drop every waiting query (their callbacks are not called), close the connection
 * and the handles, free the db once the loop has closed them. *db is set to NULL. */
void kgb_db_close(kgb_db_t **db);

#endif
