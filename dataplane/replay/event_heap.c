/* A 4-ary heap: half the depth of a binary one, and a node's four children are 64 contiguous
 * bytes (16-byte entries), so a sift down reads about one cache line a level. */
#include <stdlib.h>

#include "event_heap.h"

static inline int before(const struct rsw_wake *a, const struct rsw_wake *b)
{
	return a->t < b->t || (a->t == b->t && a->id < b->id);
}

int rsw_event_heap_init(struct rsw_event_heap *q, uint32_t n_ids)
{
	*q = (struct rsw_event_heap){.n_ids = n_ids};
	q->pos = malloc((n_ids ? n_ids : 1) * sizeof(*q->pos));
	if (!q->pos)
		return -1;
	for (uint32_t i = 0; i < n_ids; i++)
		q->pos[i] = RSW_EVENT_NONE;
	return 0;
}

void rsw_event_heap_free(struct rsw_event_heap *q)
{
	free(q->h);
	free(q->pos);
	*q = (struct rsw_event_heap){0};
}

static inline void place(struct rsw_event_heap *q, uint32_t i, struct rsw_wake w)
{
	q->h[i] = w;
	q->pos[w.id] = i;
}

static void sift_up(struct rsw_event_heap *q, uint32_t i, struct rsw_wake w)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 4;
		if (!before(&w, &q->h[parent]))
			break;
		place(q, i, q->h[parent]);
		i = parent;
	}
	place(q, i, w);
}

static void sift_down(struct rsw_event_heap *q, uint32_t i, struct rsw_wake w)
{
	for (;;) {
		uint32_t c = 4 * i + 1, best = c;
		if (c >= q->n)
			break;
		uint32_t end = c + 4 < q->n ? c + 4 : q->n;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(&q->h[k], &q->h[best]))
				best = k;
		if (!before(&q->h[best], &w))
			break;
		place(q, i, q->h[best]);
		i = best;
	}
	place(q, i, w);
}

/* Entry i leaves the heap; the last entry takes its place. */
static void remove_at(struct rsw_event_heap *q, uint32_t i)
{
	q->pos[q->h[i].id] = RSW_EVENT_NONE;
	struct rsw_wake last = q->h[--q->n];
	if (i == q->n)
		return;
	if (i > 0 && before(&last, &q->h[(i - 1) / 4]))
		sift_up(q, i, last);
	else
		sift_down(q, i, last);
}

int rsw_event_at(struct rsw_event_heap *q, uint32_t id, uint64_t t)
{
	struct rsw_wake w = {.t = t, .id = id};
	uint32_t i = q->pos[id];
	if (i != RSW_EVENT_NONE) {
		uint64_t old = q->h[i].t;
		if (t < old)
			sift_up(q, i, w);
		else if (t > old)
			sift_down(q, i, w);
		return 0;
	}
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 256;
		struct rsw_wake *h = realloc(q->h, (size_t)cap * sizeof(*h));
		if (!h)
			return -1;
		q->h = h;
		q->cap = cap;
	}
	sift_up(q, q->n++, w);
	return 0;
}

void rsw_event_cancel(struct rsw_event_heap *q, uint32_t id)
{
	if (q->pos[id] != RSW_EVENT_NONE)
		remove_at(q, q->pos[id]);
}

int rsw_event_pop(struct rsw_event_heap *q, struct rsw_wake *out)
{
	if (!q->n)
		return 0;
	*out = q->h[0];
	remove_at(q, 0);
	return 1;
}
