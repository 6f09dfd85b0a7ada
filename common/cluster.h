/* Which coordinator a client reached (docs/security.md, "Which coordinator"). Every
 * store gets a cluster id when it is initialised (migration 0012); the coordinator
 * puts it in every message it sends (Envelope.cluster_id). The CLI and the worker
 * check it: against KGB_CLUSTER_ID when set, else against the id pinned for the
 * endpoint at first use in KGB_CONFIG_DIR/clusters (default
 * $XDG_CONFIG_HOME/kgb or ~/.config/kgb; KGB_CLUSTER_PIN=0: no pinning). */
#ifndef KGB_CLUSTER_H
#define KGB_CLUSTER_H

#include <stddef.h>

/* 0 if got (the id a reply from endpoint carries; NULL or "" when it carries none) is
 * the one wanted; pins it at first use. -1 with err saying which id was wanted, from
 * where, and what to do. */
int kgb_cluster_check(const char *endpoint, const char *got, char *err, size_t errlen);

/* The pin file (caller frees), or NULL when pinning is off or no directory is known. */
char *kgb_cluster_pin_file(void);

#endif
