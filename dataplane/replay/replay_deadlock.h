/* PFC deadlocks found as they form (replay_deadlock.c, docs/replay.md "PFC deadlock"): checked
 * on a grid of virtual time, every hold / 8, at the points that follow a PFC frame sent or a
 * watchdog's action, or a cycle seen; and at the end of the run. */
#ifndef RSW_REPLAY_DEADLOCK_H
#define RSW_REPLAY_DEADLOCK_H

#include <stdint.h>

#include "replay_engine.h"

/* Before the run: the grid's first point. */
void rp_deadlock_start(struct replay *r);
/* The grid point at (r->dl_next_ns), no wake-up at or after it run yet; armed: a PFC frame was
 * sent or a watchdog acted since the last point (in a part: in any part). Unless armed or a
 * cycle was seen at the last check, the points up to upto see what this one sees and are passed;
 * else the period's queue-depth samples (sample), then a check that reports each cycle held for
 * the hold time once (result, event log) and marks the end of those no longer found. In a part,
 * every part calls it alike. Returns 0, -1 out of memory. */
int rp_deadlock_at(struct replay *r, uint64_t at, int armed, uint64_t upto, int sample);
/* The whole zone in one process: the grid points up to t, before the wake-ups of t. */
void rp_deadlock_grid(struct replay *r, uint64_t t);
/* The check at the end of the run (end: its cut, or its last frame), after every line of the
 * run's wake-ups. Returns 0, -1 out of memory. */
int rp_deadlock_end(struct replay *r, uint64_t end);
void rp_deadlock_free(struct replay *r);
/* A PFC frame was sent or a watchdog acted: the next grid point checks. */
static inline void rp_deadlock_arm(struct replay *r)
{
	r->dl_armed = 1;
}

#endif
