/* The per-flow cache of ingress decisions (flow_cache.h): direct-mapped, one 128-byte entry a
 * slot, the key compared word by word. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash_crc.h>

#include "../hash/hash_algo.h"
#include "fib.h"
#include "flow_cache.h"

#define KEY_WORDS (sizeof(struct rsw_fc_key) / 8)
/* the ingress decisions of struct rsw_pkt_meta, egress_port to bucket, copied as one block */
#define DECISION_OFF offsetof(struct rsw_pkt_meta, egress_port)
#define DECISION_LEN (offsetof(struct rsw_pkt_meta, bucket) + 4 - DECISION_OFF)

struct rsw_flow_entry {
	struct rsw_fc_key key;
	uint8_t decision[DECISION_LEN];
	uint8_t drop;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct rsw_fc_key) % 8 == 0, "a key is whole words");
_Static_assert(DECISION_LEN == 24, "the decisions are one block of struct rsw_pkt_meta");
_Static_assert(sizeof(struct rsw_flow_entry) == 128, "an entry is two cache lines");

struct rsw_flow_cache {
	uint32_t mask;
	struct rsw_flow_cache_stats st;
	struct rsw_flow_entry *e;
};

struct rsw_flow_cache *rsw_flow_cache_new(unsigned entries)
{
	unsigned n = 1;
	while (n < entries)
		n <<= 1;
	struct rsw_flow_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->e = aligned_alloc(64, n * sizeof(*c->e));
	if (!c->e) {
		free(c);
		return NULL;
	}
	memset(c->e, 0, n * sizeof(*c->e)); /* fib 0: no tables have it, every slot misses */
	c->mask = n - 1;
	return c;
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
	unsigned udf_bytes = 0;
	for (uint32_t p = 0; p < f->n_policies; p++) {
		const struct rsw_hash_policy *pol = &f->policies[p];
		if (pol->fields & (1u << RSW_HF_RDMA_BTH_OPCODE))
			f->cache_key |= RSW_FC_KEY_OPCODE;
		if (pol->fields & (1u << RSW_HF_RDMA_BTH_DEST_QP))
			f->cache_key |= RSW_FC_KEY_QP;
		if (pol->fields & (1u << RSW_HF_IPV6_FLOW_LABEL))
			f->cache_key |= RSW_FC_KEY_LABEL;
		if (!pol->n_udf)
			continue;
		for (unsigned u = 0; u < pol->n_udf; u++)
			udf_bytes += pol->udf[u].length;
		if (f->n_cache_udf == RSW_FC_UDF_POL_MAX || udf_bytes > RSW_FC_UDF_BYTES)
			f->cache_key |= RSW_FC_KEY_OFF;
		else
			f->cache_udf_pol[f->n_cache_udf++] = (uint16_t)p;
	}
}

int rsw_flow_key(const struct rsw_fib *fib, const uint8_t *frame, const struct rsw_pkt_meta *m,
		 unsigned tc, struct rsw_fc_key *k)
{
	unsigned r = fib->cache_key;
	if (r & RSW_FC_KEY_OFF)
		return 0;
	k->fib = fib->cache_id;
	/* what the checks read: the port, TTL > 1, the source MAC's group bit; the hash the L3
	 * kind, the flags (L4 present, later fragment), the protocol; the classifier's answer */
	k->port = (uint64_t)m->in_port | (uint64_t)m->l3 << 16 | (uint64_t)m->flags << 24 |
		  (uint64_t)tc << 32 | (uint64_t)m->ip_proto << 40 |
		  (uint64_t)((m->ttl > 1) | (frame[6] & 1) << 1) << 48 |
		  (uint64_t)(r & RSW_FC_KEY_OPCODE ? m->bth_opcode : 0) << 56;
	uint64_t dmac = 0;
	memcpy(&dmac, frame, 6);
	k->dmac_sport = dmac | (uint64_t)m->sport << 48;
	k->dport_qp = (uint64_t)m->dport | (uint64_t)(r & RSW_FC_KEY_QP ? m->bth_dest_qp : 0)
							  << 16;
	k->label = r & RSW_FC_KEY_LABEL ? m->flow_label : 0;
	memcpy(k->src, m->src_ip, 16);
	memcpy(k->dst, m->dst_ip, 16);
	memset(k->udf, 0, sizeof(k->udf));
	uint8_t *u = (uint8_t *)k->udf;
	for (unsigned i = 0; i < fib->n_cache_udf; i++)
		u += rsw_hash_udf_bytes(&fib->policies[fib->cache_udf_pol[i]], frame, m, u);
	return 1;
}

static inline uint32_t slot_of(const struct rsw_flow_cache *c, const struct rsw_fc_key *k)
{
	const uint64_t *w = (const uint64_t *)k;
	uint32_t h = 0;
	for (unsigned i = 0; i < KEY_WORDS; i++)
		h = rte_hash_crc_8byte(w[i], h); /* SSE4.2's crc32: one instruction a word */
	return h & c->mask;
}

static inline int same_key(const struct rsw_fc_key *a, const struct rsw_fc_key *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	uint64_t d = 0;
	for (unsigned i = 0; i < KEY_WORDS; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

int rsw_flow_cache_find(struct rsw_flow_cache *c, const struct rsw_fc_key *k,
			struct rsw_pkt_meta *m)
{
	const struct rsw_flow_entry *e = &c->e[slot_of(c, k)];
	if (!same_key(&e->key, k)) {
		c->st.misses++;
		return 0;
	}
	c->st.hits++;
	memcpy((uint8_t *)m + DECISION_OFF, e->decision, DECISION_LEN);
	m->drop = e->drop;
	return 1;
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
	struct rsw_flow_entry *e = &c->e[slot_of(c, k)];
	e->key = *k;
	memcpy(e->decision, (const uint8_t *)m + DECISION_OFF, DECISION_LEN);
	e->drop = m->drop;
}
