/* Replay's agenda: the wake-ups of numbered entities, each entity in it at most once, popped in
 * (time, entity id) order: equal times pop by entity, a key that does not depend on the order in
 * which they were scheduled, nor on where an entity runs, so a run is the same whatever its
 * event history or partitioning (docs/replay.md, "Determinism"). Rescheduling an entity moves
 * its one entry; cancelling removes it: the agenda holds only live wake-ups.
 *
 * Most wake-ups of a switch model fall within a few microseconds of now (a frame's arrival
 * after its wire time and the link's delay, a port free again after one frame), so they go on a
 * wheel of one slot per nanosecond over [now, now + RSW_WHEEL_NS), found through a two-level
 * bitmap; a slot's wake-ups all have one time, and are kept unordered until that time comes.
 * Then they become the tie group, their entity ids copied out and sorted once (wake-ups
 * scheduled for that same time join it), popped from the front. Nothing costs more as more
 * wake-ups are held: a tie group is sorted for its size, and a wake-up joining one pays a
 * search and a move. Wake-ups further ahead (timers, slow links, a capture's next frame after
 * a gap) wait in a 4-ary heap of (time, id) pairs and move onto the wheel as now comes within
 * its reach. */
#ifndef RSW_EVENT_HEAP_H
#define RSW_EVENT_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct rsw_wake {
	uint64_t t;
	uint32_t id;
};

#define RSW_WHEEL_BITS 12
#define RSW_WHEEL_NS (1u << RSW_WHEEL_BITS)

/* An entity's place: on the wheel (its time and where it is in its slot), in the tie group or
 * in the far heap. Four to a cache line. */
struct rsw_event_node {
	uint64_t t;
	uint32_t pos; /* RSW_EVENT_NONE, RSW_EVENT_WHEEL, RSW_EVENT_TIE, or index in far */
	uint32_t at;  /* on the wheel: its index in its slot's ids */
};

/* A wheel slot's wake-ups: entity ids in an array, in no order. */
struct rsw_event_slot {
	uint32_t *id;
	uint32_t n, cap;
};

struct rsw_event_heap {
	struct rsw_event_node *node; /* by entity */
	struct rsw_event_slot *slot; /* RSW_WHEEL_NS of them */
	uint64_t used[RSW_WHEEL_NS / 64]; /* slots that are not empty */
	uint64_t used_words;              /* words of used that are not zero */
	uint64_t now;                /* the wheel covers [now, now + RSW_WHEEL_NS) */
	uint32_t n_wheel;            /* on the wheel's slots */
	uint32_t *tie;               /* the wake-ups due at now: ids in tie[tie_head, n_tie), */
	uint32_t tie_head, n_tie;    /* sorted */
	struct rsw_wake *far;        /* wake-ups at or after now + RSW_WHEEL_NS (4-ary heap) */
	uint32_t n_far;
	uint32_t n_ids;
	int failed; /* a slot could not grow: a wake-up may be lost, the run must stop */
};

#define RSW_EVENT_NONE UINT32_MAX
#define RSW_EVENT_WHEEL (UINT32_MAX - 1)
#define RSW_EVENT_TIE (UINT32_MAX - 2)

int rsw_event_heap_init(struct rsw_event_heap *q, uint32_t n_ids);
void rsw_event_heap_free(struct rsw_event_heap *q);
/* Entity id wakes at t (replacing any other wake-up of it). Returns 0, or -1 when a wheel slot
 * could not grow (no memory): the agenda is then failed (q->failed) and the run must stop. */
int rsw_event_at(struct rsw_event_heap *q, uint32_t id, uint64_t t);
/* Entity id no longer wakes. */
void rsw_event_cancel(struct rsw_event_heap *q, uint32_t id);
/* The next wake-up, removed; 0 if none is left (or the agenda failed). */
int rsw_event_pop(struct rsw_event_heap *q, struct rsw_wake *out);
/* Time of the next wake-up, or UINT64_MAX (also once the agenda failed). */
uint64_t rsw_event_peek(const struct rsw_event_heap *q);
/* The wake-ups after the next one popped that are due at the same time (the tie group's rest),
 * *n of them, in the order they will pop: a look ahead that costs nothing to find. */
static inline const uint32_t *rsw_event_ties(const struct rsw_event_heap *q, uint32_t *n)
{
	*n = q->n_tie - q->tie_head;
	return q->tie + q->tie_head;
}
/* Wake-ups held. */
static inline uint32_t rsw_event_count(const struct rsw_event_heap *q)
{
	return q->n_wheel + (q->n_tie - q->tie_head) + q->n_far;
}

#endif
