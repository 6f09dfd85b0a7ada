/* The embedded default store: a private PostgreSQL cluster started by the
 * coordinator when no database URL is configured (docs/store.md, "Embedded").
 *
 * Start-up runs initdb on first use (trust auth, superuser kgb, UTF8, no TCP: only
 * a Unix socket in a private directory), starts the server as a child, waits until
 * it accepts connections and creates the database kgb. As root the cluster lives in
 * /var/lib/kgb/pg-<12 hex of sha256(real data dir)> owned by the postgres user (the
 * path is recorded in <datadir>/pg.location); otherwise in <datadir>/pg. These calls
 * block: they run before the event loop starts and after it ends. */
#ifndef KGB_COORD_EMBEDDED_H
#define KGB_COORD_EMBEDDED_H

#include <stddef.h>
#include <sys/types.h>

typedef struct kgb_embedded kgb_embedded_t;

/* Start (initialising if needed) the cluster for datadir. On success *out is the
 * running cluster (stop it with kgb_embedded_stop) and conninfo holds the libpq
 * connection string of database kgb. Returns 0 or -1 with err filled. */
int kgb_embedded_start(const char *datadir, kgb_embedded_t **out, char *conninfo, size_t conninfo_len,
                       char *err, size_t errlen);
/* The server's process id (0 if not running). */
pid_t kgb_embedded_pid(const kgb_embedded_t *e);
/* Non-blocking check: returns 0 while the server runs, -1 once it has exited (the
 * reason is logged once). */
int kgb_embedded_check(kgb_embedded_t *e);
/* Fast shutdown (SIGINT), wait for the server to exit, free *e and set it to NULL. */
void kgb_embedded_stop(kgb_embedded_t **e);

#endif
