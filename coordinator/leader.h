/* One active coordinator per store (docs/scheduler.md, "Standby coordinator").
 *
 * Every coordinator takes part through the store's coord_leader row (migration 0013)
 * on a connection of its own, so that a backlog of writes never delays a renewal. A
 * standby tries to take the lead every lease/6 and does once the holder's lease has
 * run out (its name coming back after a restart, or an embedded store: at once); the
 * active one renews every lease/3. The main connection writes under the leader epoch
 * (the session setting kgb.epoch, checked by the store's fence trigger): a renewal
 * that finds the epoch moved on, or a write the fence refuses, ends the coordinator's
 * term, and it steps down. */
#ifndef KGB_COORD_LEADER_H
#define KGB_COORD_LEADER_H

#include <stdbool.h>
#include <stdint.h>

struct kgb_coord;
typedef struct kgb_leader kgb_leader_t;

typedef struct kgb_leader_cbs {
	/* This coordinator holds the lead now (epoch), its main connection writes under
	 * it: load the state and serve. */
	void (*active)(struct kgb_coord *c, uint64_t epoch);
	/* Its term is over (why): it must write nothing more and step down. */
	void (*lost)(struct kgb_coord *c, const char *why);
	/* Another coordinator holds the lead (said once, at the first try that finds so). */
	void (*standby)(struct kgb_coord *c);
	/* on false: the lead could not be renewed for a whole lease (the store is out of
	 * reach, or this process was paused), so a standby may hold it already: serve
	 * nothing until it is renewed (on true) or the term is over (lost). */
	void (*serving)(struct kgb_coord *c, bool on);
} kgb_leader_cbs_t;

/* Start taking part on c's loop with a connection of its own to conninfo; name is
 * this coordinator's in the leader row (host and endpoint), force takes the lead at
 * once (embedded store). */
kgb_leader_t *kgb_leader_start(struct kgb_coord *c, const char *conninfo, const char *name, uint32_t lease_ms,
                               bool force, const kgb_leader_cbs_t *cbs);
/* Stop renewing; when this coordinator holds the lead, hand it back in the store so
 * that a standby takes over at once. */
void kgb_leader_release(kgb_leader_t *l);
/* True once kgb_leader_release has nothing left in flight. */
bool kgb_leader_released(const kgb_leader_t *l);
/* Close the connection and timer (l is freed by the loop). */
void kgb_leader_close(kgb_leader_t **l);
/* Why this coordinator does not serve requests now (a standby, naming the active one
 * when it is known; active but still loading; or active but its lead not renewed for
 * a whole lease): the text of ErrorReply.reason with not_active. Static buffer. */
const char *kgb_leader_not_active(const kgb_leader_t *l);

#endif
