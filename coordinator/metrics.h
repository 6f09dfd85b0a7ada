/* Prometheus metrics of the coordinator, served over HTTP by libmicrohttpd
 * (docs/metrics.md).
 *
 * Threads: libmicrohttpd answers requests on its own thread; everything else here runs
 * on the coordinator's libuv loop. Once a second the loop renders the whole
 * exposition text from its own state (jobs, workers, counters) into a fresh buffer
 * and swaps it in under a mutex; the HTTP thread only copies the current buffer under
 * the same mutex. The HTTP thread never touches the coordinator's state, so the
 * loop's single-thread rule (coord.h) holds. */
#ifndef KGB_COORD_METRICS_H
#define KGB_COORD_METRICS_H

#include <stddef.h>
#include <stdio.h>

struct kgb_coord;

/* Parse endpoint ("HOST:PORT", HOST an IPv4 address or "localhost"; port 0 picks a
 * free one), start the HTTP server and the once-a-second snapshot timer on c's
 * loop. Logs the address it serves. Returns 0, or -1 with err naming the value. */
int kgb_metrics_start(struct kgb_coord *c, const char *endpoint, char *err, size_t errlen);
/* Stop the HTTP server (joins its thread) and the timer; safe when not started. */
void kgb_metrics_stop(void);

/* The counters (leases expired, results recorded) are the state's
 * (kgb_coord_t.counters): metrics read the coordinator, nothing calls into them. */

#endif
