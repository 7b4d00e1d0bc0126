/* PFC deadlocks found as they form (replay_deadlock.c, docs/replay.md "PFC deadlock"): checked
 * on the engine's grid of virtual time (rp_engine_grid_at), at the points that follow a PFC
 * frame sent or a watchdog's action, or a cycle seen; and at the end of the run. */
#ifndef RSW_REPLAY_DEADLOCK_H
#define RSW_REPLAY_DEADLOCK_H

#include <stdint.h>

#include "replay_engine.h"

/* Looks for cycles of paused queues each waiting on the next at t, the zone as the wake-ups
 * before t left it (in a part: every part alike, exchanging what each reads); reports each held
 * for the hold time once (result, event log) and marks the end of those no longer found, which
 * r->dl_watching follows. Out of memory: r->oom. */
void rp_deadlock_check(struct replay *r, uint64_t t);
void rp_deadlock_free(struct replay *r);
/* A PFC frame was sent or a watchdog acted: the next grid point checks. */
static inline void rp_deadlock_arm(struct replay *r)
{
	r->dl_armed = 1;
}

#endif
