/* The recording cache of Python candidates (docs/python-candidates.md, "The recording
 * cache"): a case's recording, reused for every later case, in this job or a later one
 * on this worker, whose recorder request is the same.
 *
 * A request holds everything the recording depends on: the module's text, the wrapper,
 * every argument's shape, strides and dtype, the values of the arguments that are not
 * tensors (scalars are literal in a plan), the case's parameters, and the compile
 * target. Input values are not in it: the recorder fills inputs at random and a
 * wrapper that reads them is refused (host_sync), so two cases that differ only in
 * their values record the same plan. The key adds the recorder (its file and the
 * PyTorch provider's mapping it loads), the toolchain (torch's and Triton's version
 * files under the recording Python's prefix) and whether the recording ran on a device.
 *
 * Entries are files $KGB_CACHE_DIR/recordings/<key>.json (default
 * ~/.cache/kgb/recordings), written atomically; an entry that does not parse, or
 * whose plan no longer passes the plan checks, is removed and counts as a miss. The
 * directory is kept under KGB_PYREC_CACHE_MB (default 512) by removing the entries
 * used least recently (a hit touches its entry). Crashes, timeouts and infrastructure
 * errors are never stored. */
#ifndef KGB_RECCACHE_H
#define KGB_RECCACHE_H

#include "catalog.h"
#include "pycand.h"

/* What every key of this recorder, Python and mode shares (hex SHA-256 into stamp). */
void kgb_reccache_stamp(const char *python, const char *recorder, bool on_device, char stamp[65]);
/* The key of request under stamp. */
void kgb_reccache_key(const char *stamp, const char *request, char key[65]);
/* The entry of key, checked against case c, into *out (release it with
 * kgb_pycand_out_release): 0 on a hit, -1 on a miss. */
int kgb_reccache_get(const char *key, const kgb_case_t *c, kgb_pycand_out_t *out);
/* Store o under key (not a crash, timeout or infra_error). Failures are silent: a
 * failed store only costs a recording later. */
void kgb_reccache_put(const char *key, const kgb_pycand_out_t *o);
/* Remove the least recently used entries while the directory is over its bound. */
void kgb_reccache_prune(void);

#endif
