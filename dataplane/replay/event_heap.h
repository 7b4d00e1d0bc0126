/* Replay's agenda: a binary min-heap of (time, sequence) wake-ups for numbered entities. Equal
 * times pop in scheduling order, which keeps runs deterministic. Rescheduling an entity makes its
 * older wake-ups stale; they are skipped when popped. */
#ifndef RSW_EVENT_HEAP_H
#define RSW_EVENT_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct rsw_wake {
	uint64_t t, seq;
	uint32_t id;
};

struct rsw_event_heap {
	struct rsw_wake *h;
	size_t n, cap;
	uint64_t seq;
	uint64_t *token;   /* by entity: sequence of its live wake-up, 0 = none */
	uint64_t *when;    /* by entity: time of its live wake-up */
	uint32_t n_ids;
};

int rsw_event_heap_init(struct rsw_event_heap *q, uint32_t n_ids);
void rsw_event_heap_free(struct rsw_event_heap *q);
/* Entity id wakes at t (replacing any earlier wake-up of it). Returns -1 when out of memory. */
int rsw_event_at(struct rsw_event_heap *q, uint32_t id, uint64_t t);
/* Entity id no longer wakes. */
static inline void rsw_event_cancel(struct rsw_event_heap *q, uint32_t id)
{
	q->token[id] = 0;
}
/* The next live wake-up, removed; 0 if none is left. */
int rsw_event_pop(struct rsw_event_heap *q, struct rsw_wake *out);
/* Time of the next live wake-up (stale ones are dropped), or UINT64_MAX. */
uint64_t rsw_event_peek(struct rsw_event_heap *q);

#endif
