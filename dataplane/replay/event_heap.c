/* The wheel: slot t mod RSW_WHEEL_NS holds the wake-ups at t, their ids in an array in no order
 * (an entity's node says where), so taking a slot whole reads the array, not one node after
 * another: at zone scale each node is a cache miss, and a list's next is known only once its
 * node arrives. used[] marks the slots that are not empty and used_words the words of used[]
 * not zero, so the next slot from now is a few bit scans away. When its time comes, a slot's
 * ids become the tie group: a sorted array, popped from the front, the tie-break. The far heap
 * holds the rest, (time, id) pairs in a 4-ary heap. */
#include <stdlib.h>
#include <string.h>

#include "event_heap.h"

#define WHEEL_MASK (RSW_WHEEL_NS - 1)
#define FAR_ARITY 4

int rsw_event_heap_init(struct rsw_event_heap *q, uint32_t n_ids)
{
	*q = (struct rsw_event_heap){.n_ids = n_ids};
	if (n_ids >= RSW_EVENT_TIE)
		return -1;
	/* each entity is in the agenda at most once: the far heap is allocated whole, so that
	 * scheduling never fails (its pages are touched only as it grows) */
	size_t cap = n_ids ? n_ids : 1;
	q->node = malloc(cap * sizeof(*q->node));
	q->far = malloc(cap * sizeof(*q->far));
	q->tie = malloc(cap * sizeof(*q->tie));
	q->slot = calloc(RSW_WHEEL_NS, sizeof(*q->slot));
	if (!q->node || !q->far || !q->tie || !q->slot) {
		rsw_event_heap_free(q);
		return -1;
	}
	for (uint32_t i = 0; i < n_ids; i++)
		q->node[i].pos = RSW_EVENT_NONE;
	return 0;
}

void rsw_event_heap_free(struct rsw_event_heap *q)
{
	free(q->node);
	free(q->far);
	free(q->tie);
	for (uint32_t s = 0; q->slot && s < RSW_WHEEL_NS; s++)
		free(q->slot[s].id);
	free(q->slot);
	*q = (struct rsw_event_heap){0};
}

/* ---- the wheel ---- */

/* The first slot with a list at or after slot from, going round: -1 if none. */
static int next_slot(const struct rsw_event_heap *q, unsigned from)
{
	unsigned w = from / 64;
	uint64_t bits = q->used[w] & (~0ull << (from % 64));
	if (bits)
		return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
	uint64_t words = q->used_words & (w < 63 ? ~0ull << (w + 1) : 0); /* after w */
	if (!words)
		words = q->used_words & ((1ull << w) - 1); /* round to the words before w */
	if (words) {
		unsigned k = (unsigned)__builtin_ctzll(words);
		return (int)(k * 64 + (unsigned)__builtin_ctzll(q->used[k]));
	}
	bits = q->used[w] & ~(~0ull << (from % 64)); /* round to w's own first slots */
	return bits ? (int)(w * 64 + (unsigned)__builtin_ctzll(bits)) : -1;
}

static void slot_used(struct rsw_event_heap *q, unsigned s)
{
	q->used[s / 64] |= 1ull << (s % 64);
	q->used_words |= 1ull << (s / 64);
}

static void slot_unused(struct rsw_event_heap *q, unsigned s)
{
	q->used[s / 64] &= ~(1ull << (s % 64));
	if (!q->used[s / 64])
		q->used_words &= ~(1ull << (s / 64));
}

/* A full slot twice the room (it keeps it: a run's busiest nanoseconds come round again); -1
 * when there is no memory, and the agenda fails: the caller's run stops. */
static __attribute__((noinline)) int slot_grow(struct rsw_event_heap *q, struct rsw_event_slot *sl)
{
	uint32_t cap = sl->cap ? 2 * sl->cap : 8;
	uint32_t *grown = realloc(sl->id, cap * sizeof(*grown));
	if (!grown) {
		q->failed = 1;
		return -1;
	}
	sl->id = grown;
	sl->cap = cap;
	return 0;
}

static inline int slot_insert(struct rsw_event_heap *q, uint32_t id, uint64_t t)
{
	unsigned s = (unsigned)(t & WHEEL_MASK);
	struct rsw_event_slot *sl = &q->slot[s];
	if (__builtin_expect(sl->n == sl->cap, 0) && slot_grow(q, sl) < 0)
		return -1;
	if (!sl->n)
		slot_used(q, s);
	q->node[id] = (struct rsw_event_node){.t = t, .pos = RSW_EVENT_WHEEL, .at = sl->n};
	sl->id[sl->n++] = id;
	q->n_wheel++;
	return 0;
}

/* The slot's last id takes id's place. */
static void slot_remove(struct rsw_event_heap *q, uint32_t id)
{
	struct rsw_event_node *nd = &q->node[id];
	unsigned s = (unsigned)(nd->t & WHEEL_MASK);
	struct rsw_event_slot *sl = &q->slot[s];
	uint32_t last = sl->id[--sl->n];
	if (last != id) {
		sl->id[nd->at] = last;
		q->node[last].at = nd->at;
	}
	nd->pos = RSW_EVENT_NONE;
	q->n_wheel--;
	if (!sl->n)
		slot_unused(q, s);
}

/* ---- the tie group: the wake-ups due at now, a sorted array ---- */

/* Where id is, or would go, in the sorted ids a[lo, hi). */
static uint32_t ids_find(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t id)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where id is, or would go, in tie[tie_head, n_tie). */
static uint32_t tie_find(const struct rsw_event_heap *q, uint32_t id)
{
	return ids_find(q->tie, q->tie_head, q->n_tie, id);
}

static void tie_insert(struct rsw_event_heap *q, uint32_t id)
{
	q->node[id].pos = RSW_EVENT_TIE;
	if ((q->n_tie == q->tie_head || q->tie[q->n_tie - 1] < id) && q->n_tie < q->n_ids) {
		q->tie[q->n_tie++] = id; /* after the last */
		return;
	}
	uint32_t i = tie_find(q, id);
	if (i == q->tie_head && q->tie_head > 0) { /* before the first: the slot freed by pops */
		q->tie[--q->tie_head] = id;
		return;
	}
	if (q->n_tie == q->n_ids) { /* the popped front is the room left */
		memmove(q->tie, q->tie + q->tie_head, (q->n_tie - q->tie_head) * sizeof(*q->tie));
		i -= q->tie_head;
		q->n_tie -= q->tie_head;
		q->tie_head = 0;
	}
	memmove(q->tie + i + 1, q->tie + i, (q->n_tie - i) * sizeof(*q->tie));
	q->tie[i] = id;
	q->n_tie++;
}

static void tie_remove(struct rsw_event_heap *q, uint32_t id)
{
	uint32_t i = tie_find(q, id);
	q->node[id].pos = RSW_EVENT_NONE;
	memmove(q->tie + i, q->tie + i + 1, (q->n_tie - i - 1) * sizeof(*q->tie));
	if (--q->n_tie == q->tie_head)
		q->n_tie = q->tie_head = 0;
}

static uint32_t tie_pop(struct rsw_event_heap *q)
{
	uint32_t id = q->tie[q->tie_head++];
	q->node[id].pos = RSW_EVENT_NONE;
	if (q->tie_head == q->n_tie)
		q->n_tie = q->tie_head = 0;
	return id;
}

/* The slot due at now becomes the tie group (empty until then): its ids copied whole, then
 * sorted in place by binary insertion. A slot's wake-ups were mostly scheduled in id order, so
 * most ids stay where they are, after one comparison. */
static void tie_load(struct rsw_event_heap *q, unsigned s)
{
	struct rsw_event_slot *sl = &q->slot[s];
	uint32_t n = sl->n, *tie = q->tie;
	for (uint32_t i = 0; i < n; i++) { /* stores that do not wait for each other */
		tie[i] = sl->id[i];
		q->node[tie[i]].pos = RSW_EVENT_TIE;
	}
	sl->n = 0;
	slot_unused(q, s);
	q->n_wheel -= n;
	q->tie_head = 0;
	q->n_tie = n;
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = tie[i];
		if (tie[i - 1] < v)
			continue;
		uint32_t lo = ids_find(tie, 0, i - 1, v);
		memmove(tie + lo + 1, tie + lo, (i - lo) * sizeof(*tie));
		tie[lo] = v;
	}
}

/* A wake-up at t within the wheel's reach: in the tie group if that is due at t. */
static int wheel_insert(struct rsw_event_heap *q, uint32_t id, uint64_t t)
{
	if (q->n_tie && t == q->now) {
		q->node[id].t = t;
		tie_insert(q, id);
		return 0;
	}
	return slot_insert(q, id, t);
}

/* ---- the far heap ---- */

static inline int before(const struct rsw_wake *a, const struct rsw_wake *b)
{
	return a->t < b->t || (a->t == b->t && a->id < b->id);
}

static inline void far_place(struct rsw_event_heap *q, uint32_t i, struct rsw_wake w)
{
	q->far[i] = w;
	q->node[w.id].pos = i;
}

static void far_up(struct rsw_event_heap *q, uint32_t i, struct rsw_wake w)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / FAR_ARITY;
		if (!before(&w, &q->far[parent]))
			break;
		far_place(q, i, q->far[parent]);
		i = parent;
	}
	far_place(q, i, w);
}

static void far_down(struct rsw_event_heap *q, uint32_t i, struct rsw_wake w)
{
	for (;;) {
		uint32_t c = FAR_ARITY * i + 1, best = c;
		if (c >= q->n_far)
			break;
		uint32_t end = c + FAR_ARITY < q->n_far ? c + FAR_ARITY : q->n_far;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(&q->far[k], &q->far[best]))
				best = k;
		if (!before(&q->far[best], &w))
			break;
		far_place(q, i, q->far[best]);
		i = best;
	}
	far_place(q, i, w);
}

static void far_remove_at(struct rsw_event_heap *q, uint32_t i)
{
	q->node[q->far[i].id].pos = RSW_EVENT_NONE;
	struct rsw_wake last = q->far[--q->n_far];
	if (i == q->n_far)
		return;
	if (i > 0 && before(&last, &q->far[(i - 1) / FAR_ARITY]))
		far_up(q, i, last);
	else
		far_down(q, i, last);
}

static void far_insert(struct rsw_event_heap *q, uint64_t t, uint32_t id)
{
	far_up(q, q->n_far++, (struct rsw_wake){.t = t, .id = id});
}

/* ---- now ---- */

/* The wheel starts at t: far wake-ups within its reach move onto it (one a slot could not take
 * stays in the far heap, the agenda failed). */
static void advance(struct rsw_event_heap *q, uint64_t t)
{
	q->now = t;
	while (q->n_far && q->far[0].t - t < RSW_WHEEL_NS) {
		struct rsw_wake w = q->far[0];
		far_remove_at(q, 0);
		if (wheel_insert(q, w.id, w.t) < 0) {
			far_insert(q, w.t, w.id);
			return;
		}
	}
}

/* A wake-up before now (never in a replay, whose time only moves on): everything on the wheel
 * goes to the far heap, and the wheel starts again at t. */
static void rewind(struct rsw_event_heap *q, uint64_t t)
{
	for (int s; (s = next_slot(q, 0)) >= 0;) {
		uint32_t id = q->slot[s].id[q->slot[s].n - 1];
		uint64_t at = q->node[id].t;
		slot_remove(q, id);
		far_insert(q, at, id);
	}
	while (q->n_tie)
		far_insert(q, q->now, tie_pop(q));
	advance(q, t);
}

int rsw_event_at(struct rsw_event_heap *q, uint32_t id, uint64_t t)
{
	if (t < q->now)
		rewind(q, t);
	uint32_t pos = q->node[id].pos;
	int on_wheel = t - q->now < RSW_WHEEL_NS;
	if (pos == RSW_EVENT_WHEEL) {
		if (q->node[id].t == t)
			return 0;
		slot_remove(q, id);
	} else if (pos == RSW_EVENT_TIE) {
		if (t == q->now)
			return 0;
		tie_remove(q, id);
	} else if (pos != RSW_EVENT_NONE) {
		if (!on_wheel) {
			struct rsw_wake w = {.t = t, .id = id};
			if (before(&w, &q->far[pos]))
				far_up(q, pos, w);
			else
				far_down(q, pos, w);
			return 0;
		}
		far_remove_at(q, pos);
	}
	if (on_wheel)
		return wheel_insert(q, id, t);
	far_insert(q, t, id);
	return 0;
}

void rsw_event_cancel(struct rsw_event_heap *q, uint32_t id)
{
	uint32_t pos = q->node[id].pos;
	if (pos == RSW_EVENT_WHEEL)
		slot_remove(q, id);
	else if (pos == RSW_EVENT_TIE)
		tie_remove(q, id);
	else if (pos != RSW_EVENT_NONE)
		far_remove_at(q, pos);
}

/* The time of wheel slot s: the one in [now, now + RSW_WHEEL_NS) it stands for. */
static uint64_t slot_time(const struct rsw_event_heap *q, int s)
{
	return q->now + (((unsigned)s - (unsigned)q->now) & WHEEL_MASK);
}

uint64_t rsw_event_peek(const struct rsw_event_heap *q)
{
	if (q->failed)
		return UINT64_MAX;
	if (q->n_tie)
		return q->now;
	if (q->n_wheel) /* every wake-up on the wheel comes before every far one */
		return slot_time(q, next_slot(q, (unsigned)(q->now & WHEEL_MASK)));
	return q->n_far ? q->far[0].t : UINT64_MAX;
}

int rsw_event_pop(struct rsw_event_heap *q, struct rsw_wake *out)
{
	if (q->failed)
		return 0;
	if (!q->n_tie) {
		if (!q->n_wheel) {
			if (!q->n_far)
				return 0;
			advance(q, q->far[0].t);
			if (q->failed)
				return 0;
		}
		int s = next_slot(q, (unsigned)(q->now & WHEEL_MASK));
		uint64_t t = slot_time(q, s);
		if (t != q->now)
			advance(q, t); /* (a failure here leaves slot s as it was) */
		tie_load(q, (unsigned)s);
	}
	out->t = q->now;
	out->id = tie_pop(q);
	return 1;
}
