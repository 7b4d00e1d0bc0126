/* Replay's agenda: an indexed 4-ary min-heap of wake-ups for numbered entities, each entity in it
 * at most once. Wake-ups are ordered by (time, entity id): equal times pop by entity, a key that
 * does not depend on the order in which they were scheduled, nor on where an entity runs, so a
 * run is the same whatever its event history or partitioning (docs/replay.md, "Determinism").
 * Rescheduling an entity moves its one entry; cancelling removes it: the heap holds only live
 * wake-ups, and its size is the number of entities waiting, not the number of reschedules. */
#ifndef RSW_EVENT_HEAP_H
#define RSW_EVENT_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct rsw_wake {
	uint64_t t;
	uint32_t id;
};

struct rsw_event_heap {
	struct rsw_wake *h;
	uint32_t n, cap;
	uint32_t *pos;     /* by entity: its index in h, or RSW_EVENT_NONE */
	uint32_t n_ids;
};

#define RSW_EVENT_NONE UINT32_MAX

int rsw_event_heap_init(struct rsw_event_heap *q, uint32_t n_ids);
void rsw_event_heap_free(struct rsw_event_heap *q);
/* Entity id wakes at t (replacing any other wake-up of it). Returns -1 when out of memory. */
int rsw_event_at(struct rsw_event_heap *q, uint32_t id, uint64_t t);
/* Entity id no longer wakes. */
void rsw_event_cancel(struct rsw_event_heap *q, uint32_t id);
/* The next wake-up, removed; 0 if none is left. */
int rsw_event_pop(struct rsw_event_heap *q, struct rsw_wake *out);
/* Time of the next wake-up, or UINT64_MAX. */
static inline uint64_t rsw_event_peek(const struct rsw_event_heap *q)
{
	return q->n ? q->h[0].t : UINT64_MAX;
}

#endif
