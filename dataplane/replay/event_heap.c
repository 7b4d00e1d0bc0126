#include <stdlib.h>

#include "event_heap.h"

static int before(const struct rsw_wake *a, const struct rsw_wake *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int rsw_event_heap_init(struct rsw_event_heap *q, uint32_t n_ids)
{
	*q = (struct rsw_event_heap){.n_ids = n_ids};
	q->token = calloc(n_ids ? n_ids : 1, sizeof(*q->token));
	q->when = calloc(n_ids ? n_ids : 1, sizeof(*q->when));
	return q->token && q->when ? 0 : -1;
}

void rsw_event_heap_free(struct rsw_event_heap *q)
{
	free(q->h);
	free(q->token);
	free(q->when);
	*q = (struct rsw_event_heap){0};
}

int rsw_event_at(struct rsw_event_heap *q, uint32_t id, uint64_t t)
{
	if (q->token[id] && q->when[id] == t)
		return 0; /* already due then */
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct rsw_wake *h = realloc(q->h, cap * sizeof(*h));
		if (!h)
			return -1;
		q->h = h;
		q->cap = cap;
	}
	struct rsw_wake w = {.t = t, .seq = ++q->seq, .id = id};
	q->token[id] = w.seq;
	q->when[id] = t;
	size_t i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(&w, &q->h[parent]))
			break;
		q->h[i] = q->h[parent];
		i = parent;
	}
	q->h[i] = w;
	return 0;
}

static void remove_top(struct rsw_event_heap *q)
{
	struct rsw_wake last = q->h[--q->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(&q->h[c + 1], &q->h[c]))
			c++;
		if (!before(&q->h[c], &last))
			break;
		q->h[i] = q->h[c];
		i = c;
	}
	if (q->n)
		q->h[i] = last;
}

static void drop_stale(struct rsw_event_heap *q)
{
	while (q->n && q->token[q->h[0].id] != q->h[0].seq)
		remove_top(q);
}

uint64_t rsw_event_peek(struct rsw_event_heap *q)
{
	drop_stale(q);
	return q->n ? q->h[0].t : UINT64_MAX;
}

int rsw_event_pop(struct rsw_event_heap *q, struct rsw_wake *out)
{
	drop_stale(q);
	if (!q->n)
		return 0;
	*out = q->h[0];
	q->token[out->id] = 0;
	remove_top(q);
	return 1;
}
