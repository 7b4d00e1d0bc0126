/* PFC deadlocks found as they form (replay_deadlock.c, docs/replay.md "PFC deadlock"): the
 * switches call it when they send a PFC frame or their watchdog acts, the run at its end. */
#ifndef RSW_REPLAY_DEADLOCK_H
#define RSW_REPLAY_DEADLOCK_H

#include <stdint.h>

#include "replay_engine.h"

/* Looks for a cycle of paused queues each waiting on the next, at t; reports each held for the
 * hold time once (result, event log) and marks the end of those no longer found. */
void rp_deadlock_check(struct replay *r, uint64_t t);
void rp_deadlock_free(struct replay *r);
/* A PFC frame was sent at t: a check, if the last one is older than an eighth of the hold time. */
static inline void rp_deadlock_poke(struct replay *r, uint64_t t)
{
	if (t >= r->dl_next_ns)
		rp_deadlock_check(r, t);
}

#endif
