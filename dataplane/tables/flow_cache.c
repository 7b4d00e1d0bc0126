/* The per-flow cache of ingress decisions (flow_cache.h): direct-mapped, one 128-byte entry a
 * slot, the key compared word by word, an IPv4 flow's in the entry's first line. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../hash/hash_algo.h"
#include "flow_cache.h"

_Static_assert(sizeof(struct rsw_fc_key) % 8 == 0, "a key is whole words");
_Static_assert(RSW_FC_DECISION_LEN == 24, "the decisions are one block of struct rsw_pkt_meta");
_Static_assert(sizeof(struct rsw_fc_entry) == 128, "an entry is two cache lines");
_Static_assert(offsetof(struct rsw_fc_entry, decision) + RSW_FC_DECISION_LEN <= 64,
	       "a head-only key and the decisions are one line");
_Static_assert(RSW_FC_HEAD_WORDS == 5, "fib, port, MAC and ports, the IPv4 addresses");
_Static_assert(RSW_FC_UDF_MAX == 2, "rsw_flow_key reads each UDF word once");

/* n empty entries (fib 0: no tables have it, every slot misses), or NULL */
static struct rsw_fc_entry *entries_new(size_t n)
{
	struct rsw_fc_entry *e = aligned_alloc(64, n * sizeof(*e));
	if (e)
		memset(e, 0, n * sizeof(*e));
	return e;
}

struct rsw_flow_cache *rsw_flow_cache_new(unsigned entries)
{
	unsigned n = 1;
	while (n < entries)
		n <<= 1;
	struct rsw_flow_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->e = entries_new(n);
	if (!c->e) {
		free(c);
		return NULL;
	}
	c->mask = n - 1;
	c->max_mask = c->mask;
	return c;
}

void rsw_flow_cache_grow_upto(struct rsw_flow_cache *c, unsigned max_entries)
{
	uint32_t m = c->mask;
	while (((uint64_t)m + 1) * 2 <= max_entries && m < UINT32_MAX >> 1)
		m = m << 1 | 1;
	c->max_mask = m;
	c->window_looked = c->st.hits + c->st.misses;
	c->window_evicted = c->st.evictions;
}

/* At the end of a window of mask + 1 lookups: double when too many of them evicted; 1 when it
 * did. Without memory for twice the slots the cache stays as it is, and grows no more. */
static int review(struct rsw_flow_cache *c)
{
	uint64_t looked = c->st.hits + c->st.misses;
	if (looked - c->window_looked <= c->mask)
		return 0;
	uint64_t evicted = c->st.evictions - c->window_evicted;
	c->window_looked = looked;
	c->window_evicted = c->st.evictions;
	if (evicted * RSW_FC_GROW_EVICTING <= (uint64_t)c->mask + 1)
		return 0;
	struct rsw_fc_entry *e = entries_new(((size_t)c->mask + 1) * 2);
	if (!e) {
		c->max_mask = c->mask;
		return 0;
	}
	free(c->e);
	c->e = e;
	c->mask = c->mask << 1 | 1;
	c->last_slot = 0;
	c->st.grown++;
	return 1;
}

void rsw_flow_cache_free(struct rsw_flow_cache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

void rsw_flow_cache_stats(const struct rsw_flow_cache *c, struct rsw_flow_cache_stats *s)
{
	*s = c->st;
}

int rsw_flow_cache_wanted(void)
{
	const char *v = getenv("ROCESW_FLOW_CACHE");
	return !v || (strcmp(v, "off") && strcmp(v, "0"));
}

void rsw_flow_cache_recipe(struct rsw_fib *f)
{
	static _Atomic uint64_t next_id = 1;
	f->cache_id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
	f->cache_key = 0;
	f->n_cache_udf = 0;
	for (uint32_t p = 0; p < f->n_policies; p++) {
		const struct rsw_hash_policy *pol = &f->policies[p];
		if (pol->fields & (1u << RSW_HF_RDMA_BTH_OPCODE))
			f->cache_key |= RSW_FC_KEY_OPCODE;
		if (pol->fields & (1u << RSW_HF_RDMA_BTH_DEST_QP))
			f->cache_key |= RSW_FC_KEY_QP;
		if (pol->fields & (1u << RSW_HF_IPV6_FLOW_LABEL))
			f->cache_key |= RSW_FC_KEY_LABEL;
		for (unsigned i = 0; i < pol->n_udf; i++) {
			const struct rsw_udf *u = &pol->udf[i];
			if (f->n_cache_udf == RSW_FC_UDF_MAX) {
				f->cache_key |= RSW_FC_KEY_OFF; /* more UDFs than a key holds */
				return;
			}
			struct rsw_fc_udf *c = &f->cache_udf[f->n_cache_udf++];
			*c = (struct rsw_fc_udf){.offset = u->offset, .base = u->base,
						 .length = u->length,
						 .match_ip_protocol = u->match_ip_protocol,
						 .match_l4_dst_port = u->match_l4_dst_port};
			memcpy(&c->mask, u->mask, u->length);
		}
	}
	/* its masked bytes are below 2^24: dport_qp's top 24 bits are free */
	if (f->n_cache_udf == 1 && f->cache_udf[0].length <= 3)
		f->cache_key |= RSW_FC_KEY_UDF3;
}

void rsw_flow_cache_put(struct rsw_flow_cache *c, const struct rsw_fib *fib,
			const struct rsw_fc_key *k, const struct rsw_pkt_meta *m)
{
	if (m->via_group) {
		/* adaptive routing and RANDOM hashing decide per packet, not per flow */
		const struct rsw_fib_group *g = &fib->groups[m->group];
		if (g->ars || fib->policies[g->policy].algo == RSW_HASH_RANDOM) {
			c->st.uncached++;
			return;
		}
	}
	struct rsw_fc_entry *e = &c->e[rsw_fc_slot(c, k)];
	if (e->head[0]) /* (a dead table's entry counts too: it made room for this one) */
		c->st.evictions++;
	if (c->max_mask > c->mask && review(c))
		e = &c->e[rsw_fc_slot(c, k)]; /* its slot in the doubled cache */
	memcpy(e->head, k, sizeof(e->head));
	if (k->port & RSW_FC_LONG) /* a short key's second line is never read: not written either */
		memcpy(e->tail, (const uint64_t *)k + RSW_FC_HEAD_WORDS, sizeof(e->tail));
	memcpy(e->decision, (const uint8_t *)m + RSW_FC_DECISION_OFF, RSW_FC_DECISION_LEN);
	e->decision[RSW_FC_DROP_AT] = m->drop;
}
