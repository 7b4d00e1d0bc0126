#include <stdlib.h>
#include <string.h>

#include "route_index.h"

/* FNV-1a over the key, then a multiply-xorshift finish so low bits spread. */
static uint64_t key_hash(const struct rsw_route *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const uint8_t head[6] = {(uint8_t)r->in_port, (uint8_t)(r->in_port >> 8),
				 (uint8_t)(r->in_port >> 24), r->prefix.ip.family, r->prefix.len, 0};
	unsigned n = r->prefix.ip.family == 4 ? 4 : 16;
	for (unsigned i = 0; i < sizeof(head); i++)
		h = (h ^ head[i]) * 0x100000001b3ull;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ r->prefix.ip.a[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t probes;

/* (once an operation, relaxed: roceswd may build states in several threads) */
static void count(uint64_t n)
{
	__atomic_fetch_add(&probes, n, __ATOMIC_RELAXED);
}

uint64_t rsw_route_index_probes(void)
{
	return __atomic_load_n(&probes, __ATOMIC_RELAXED);
}

static int same_key(const struct rsw_route *a, const struct rsw_route *b)
{
	return a->in_port == b->in_port && a->prefix.len == b->prefix.len &&
	       rsw_ip_eq(&a->prefix.ip, &b->prefix.ip);
}

long rsw_route_index_find(const struct rsw_route_index *ix, const struct rsw_route *routes,
			  const struct rsw_route *r)
{
	if (!ix->mask)
		return -1;
	uint64_t n = 1;
	for (size_t i = key_hash(r) & ix->mask;; i = (i + 1) & ix->mask, n++) {
		uint32_t s = ix->slot[i];
		if (!s || same_key(&routes[s - 1], r)) {
			count(n);
			return s ? (long)s - 1 : -1;
		}
	}
}

static void place(struct rsw_route_index *ix, const struct rsw_route *routes, size_t pos)
{
	size_t i = key_hash(&routes[pos]) & ix->mask;
	uint64_t n = 1;
	for (; ix->slot[i]; n++)
		i = (i + 1) & ix->mask;
	ix->slot[i] = (uint32_t)pos + 1;
	count(n);
}

int rsw_route_index_add(struct rsw_route_index *ix, const struct rsw_route *routes, size_t n,
			size_t pos)
{
	if (n >= UINT32_MAX)
		return -1;
	/* at most half full, so probes stay short */
	if (2 * n > ix->mask) {
		size_t size = ix->mask ? 2 * (ix->mask + 1) : 64;
		while (2 * n > size - 1)
			size *= 2;
		uint32_t *slot = calloc(size, sizeof(*slot));
		if (!slot)
			return -1;
		free(ix->slot);
		ix->slot = slot;
		ix->mask = size - 1;
		for (size_t p = 0; p < n; p++)
			place(ix, routes, p);
		return 0;
	}
	place(ix, routes, pos);
	return 0;
}

/* The slot holding position pos + 1. */
static size_t slot_of(const struct rsw_route_index *ix, const struct rsw_route *routes, size_t pos)
{
	size_t i = key_hash(&routes[pos]) & ix->mask;
	uint64_t n = 1;
	for (; ix->slot[i] != pos + 1; n++)
		i = (i + 1) & ix->mask;
	count(n);
	return i;
}

void rsw_route_index_remove(struct rsw_route_index *ix, const struct rsw_route *routes,
			    size_t pos, size_t last)
{
	/* backward-shift deletion: later entries of the probe run move up into the hole */
	size_t hole = slot_of(ix, routes, pos);
	ix->slot[hole] = 0;
	uint64_t n = 0;
	for (size_t i = (hole + 1) & ix->mask; ix->slot[i]; i = (i + 1) & ix->mask, n++) {
		size_t home = key_hash(&routes[ix->slot[i] - 1]) & ix->mask;
		/* the entry may move to the hole unless its home lies cyclically in (hole, i] */
		if (((i - home) & ix->mask) >= ((i - hole) & ix->mask)) {
			ix->slot[hole] = ix->slot[i];
			ix->slot[i] = 0;
			hole = i;
		}
	}
	count(n);
	if (last != pos)
		ix->slot[slot_of(ix, routes, last)] = (uint32_t)pos + 1;
}

int rsw_route_index_copy(struct rsw_route_index *dst, const struct rsw_route_index *src)
{
	dst->mask = src->mask;
	dst->slot = NULL;
	if (!src->mask)
		return 0;
	dst->slot = malloc((src->mask + 1) * sizeof(*dst->slot));
	if (!dst->slot) {
		dst->mask = 0;
		return -1;
	}
	memcpy(dst->slot, src->slot, (src->mask + 1) * sizeof(*dst->slot));
	return 0;
}

void rsw_route_index_free(struct rsw_route_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->mask = 0;
}
