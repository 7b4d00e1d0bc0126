#include <stdlib.h>
#include <string.h>

#include "resilient.h"

int rsw_rbt_alloc(struct rsw_rbt *t, uint32_t n_buckets)
{
	memset(t, 0, sizeof(*t));
	if (n_buckets == 0 || n_buckets > RSW_RBT_MAX_BUCKETS)
		return -1;
	t->bucket = calloc(n_buckets, sizeof(uint16_t));
	if (!t->bucket)
		return -1;
	t->n_buckets = n_buckets;
	return 0;
}

int rsw_rbt_init(struct rsw_rbt *t, uint32_t n_buckets, uint16_t n_active)
{
	uint16_t slots[RSW_ECMP_MAX_MEMBERS];
	if (n_active == 0 || n_active > RSW_ECMP_MAX_MEMBERS)
		return -1;
	for (unsigned s = 0; s < n_active; s++)
		slots[s] = (uint16_t)s;
	return rsw_rbt_init_slots(t, n_buckets, slots, n_active);
}

int rsw_rbt_copy(struct rsw_rbt *dst, const struct rsw_rbt *src)
{
	*dst = *src;
	dst->bucket = malloc(sizeof(uint16_t) * src->n_buckets);
	if (!dst->bucket)
		return -1;
	memcpy(dst->bucket, src->bucket, sizeof(uint16_t) * src->n_buckets);
	return 0;
}

void rsw_rbt_free(struct rsw_rbt *t)
{
	free(t->bucket);
	t->bucket = NULL;
}

unsigned rsw_rbt_n_active(const struct rsw_rbt *t)
{
	unsigned n = 0;
	for (unsigned s = 0; s < t->n_slots; s++)
		n += t->active[s];
	return n;
}

static void loads(const struct rsw_rbt *t, uint32_t *load)
{
	memset(load, 0, sizeof(uint32_t) * RSW_ECMP_MAX_MEMBERS);
	for (uint32_t b = 0; b < t->n_buckets; b++)
		load[t->bucket[b]]++;
}

uint32_t rsw_rbt_load(const struct rsw_rbt *t, uint16_t slot)
{
	uint32_t n = 0;
	for (uint32_t b = 0; b < t->n_buckets; b++)
		n += t->bucket[b] == slot;
	return n;
}

int rsw_rbt_remove(struct rsw_rbt *t, uint16_t slot)
{
	uint32_t load[RSW_ECMP_MAX_MEMBERS];

	if (slot >= t->n_slots || !t->active[slot])
		return -1;
	t->active[slot] = 0;
	if (rsw_rbt_n_active(t) == 0)
		return 0;
	loads(t, load);
	for (uint32_t b = 0; b < t->n_buckets; b++) {
		if (t->bucket[b] != slot)
			continue;
		unsigned best = RSW_ECMP_MAX_MEMBERS;
		for (unsigned s = 0; s < t->n_slots; s++)
			if (t->active[s] && (best == RSW_ECMP_MAX_MEMBERS || load[s] < load[best]))
				best = s;
		t->bucket[b] = (uint16_t)best;
		load[best]++;
	}
	return 0;
}

/* Visit order for stealing buckets: a stride coprime with n spreads the taken buckets over the
 * whole table, so no range of hash values moves as a block. */
static uint32_t steal_stride(uint32_t n)
{
	uint32_t st = (uint32_t)(n * 0.6180339887) | 1;
	for (;; st += 2) {
		uint32_t a = st % n, b = n;
		while (a) {
			uint32_t r = b % a;
			b = a;
			a = r;
		}
		if (b == 1 || n == 1)
			return n == 1 ? 1 : st % n;
	}
}

int rsw_rbt_add(struct rsw_rbt *t, uint16_t slot)
{
	uint32_t load[RSW_ECMP_MAX_MEMBERS];

	if (slot >= RSW_ECMP_MAX_MEMBERS || (slot < t->n_slots && t->active[slot]))
		return -1;
	unsigned was_empty = rsw_rbt_n_active(t) == 0;
	if (slot >= t->n_slots)
		t->n_slots = (uint16_t)(slot + 1);
	t->active[slot] = 1;
	if (was_empty) {
		for (uint32_t b = 0; b < t->n_buckets; b++)
			t->bucket[b] = slot;
		return 0;
	}
	loads(t, load);
	uint32_t target = t->n_buckets / rsw_rbt_n_active(t);
	uint32_t stride = steal_stride(t->n_buckets);
	/* Take, in spread order, buckets whose owner is among the most loaded: balance stays within
	 * one bucket and only the newcomer's share moves. */
	while (load[slot] < target) {
		uint32_t max = 0;
		for (unsigned s = 0; s < t->n_slots; s++)
			if (t->active[s] && s != slot && load[s] > max)
				max = load[s];
		uint32_t b = 0;
		for (uint32_t i = 0; i < t->n_buckets && load[slot] < target; i++) {
			uint16_t owner = t->bucket[b];
			if (owner != slot && load[owner] == max) {
				t->bucket[b] = slot;
				load[owner]--;
				load[slot]++;
				/* the next owner at max is another member: recompute */
				uint32_t nmax = 0;
				for (unsigned s = 0; s < t->n_slots; s++)
					if (t->active[s] && s != slot && load[s] > nmax)
						nmax = load[s];
				max = nmax;
			}
			b = (uint32_t)(((uint64_t)b + stride) % t->n_buckets);
		}
	}
	return 0;
}

int rsw_rbt_init_slots(struct rsw_rbt *t, uint32_t n_buckets, const uint16_t *slots, unsigned n)
{
	if (n == 0 || n > RSW_ECMP_MAX_MEMBERS || rsw_rbt_alloc(t, n_buckets) < 0)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		if (slots[i] >= RSW_ECMP_MAX_MEMBERS) {
			rsw_rbt_free(t);
			return -1;
		}
		t->active[slots[i]] = 1;
		if (slots[i] >= t->n_slots)
			t->n_slots = (uint16_t)(slots[i] + 1);
	}
	for (uint32_t b = 0; b < n_buckets; b++)
		t->bucket[b] = slots[b % n];
	return 0;
}
