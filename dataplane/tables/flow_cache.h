/* The ingress decision cached per flow, as Open vSwitch's exact-match cache (EMC) keeps its
 * megaflow lookups: keyed on exactly the header fields the ingress tables read (ingress port,
 * destination MAC, the source MAC's group bit, addresses, protocol, ports, TTL > 1, and where a
 * hash policy reads them the BTH opcode and destination QP, the flow label and the UDF bytes),
 * with the classifier's traffic class standing for what it reads (DSCP, BTH opcode and QP,
 * length: two rules and a map, cheaper than a key that grows with them) where a rule may match,
 * else the DSCP the port's map reads, and on the identity
 * of the compiled tables, so a commit (which publishes new tables) makes every entry miss.
 * An entry holds what rsw_ingress decided (drop reason, TC, PG, egress port, next hop, group,
 * hash, bucket, member). A decision that is not a function of the key is never kept: RANDOM
 * hashing and ARS groups (flowlets, port quality, random modes) decide per packet.
 * One cache per thread (a live worker, a replay run), never shared between threads. */
#ifndef RSW_FLOW_CACHE_H
#define RSW_FLOW_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../pkt/pkt_meta.h"
#include "fib.h"

/* Optional key fields, by what the tables read (rsw_fib.cache_key). */
#define RSW_FC_KEY_OPCODE 0x02 /* a hash policy reads the BTH opcode */
#define RSW_FC_KEY_QP 0x04     /* a hash policy reads the BTH destination QP */
#define RSW_FC_KEY_LABEL 0x08  /* a hash policy reads the IPv6 flow label */
#define RSW_FC_KEY_UDF3 0x10   /* one UDF, of at most 3 bytes: kept in dport_qp's top bits */
#define RSW_FC_KEY_OFF 0x80    /* the tables read more than a key holds: nothing is cached */

/* Words, so that a key is compared and hashed word by word. The first RSW_FC_HEAD_WORDS are
 * all an IPv4 key without flow label or UDF has (the others zero): they share the entry's first
 * cache line with the decisions, and only a long key (RSW_FC_LONG) hashes, compares and reads the
 * rest, in the entry's second line. */
struct rsw_fc_key {
	uint64_t fib;  /* rsw_fib.cache_id of the tables: never 0 */
	uint64_t port; /* in_port, l3, flags, class (TC or DSCP), IP protocol, TTL > 1, source-MAC
			* bit, long, opcode */
	uint64_t dmac_sport;
	uint64_t dport_qp; /* L4 destination port, BTH destination QP << 16, a short UDF << 40 */
	uint64_t ip;     /* IPv4: source | destination << 32; IPv6: the source's first 8 bytes */
	uint64_t ip6[3]; /* IPv6: the destination's first 8 bytes, both addresses' last 8 */
	uint64_t label;
	uint64_t udf[RSW_FC_UDF_MAX]; /* each UDF's bytes, masked */
};

#define RSW_FC_KEY_WORDS (sizeof(struct rsw_fc_key) / 8)
#define RSW_FC_HEAD_WORDS (offsetof(struct rsw_fc_key, ip6) / 8)
#define RSW_FC_LONG (4ull << 48) /* in port: IPv6, or a flow label or UDF bytes not zero */
/* the ingress decisions of struct rsw_pkt_meta, egress_port to bucket, copied as one block; the
 * drop reason is kept in its unused byte */
#define RSW_FC_DECISION_OFF offsetof(struct rsw_pkt_meta, egress_port)
#define RSW_FC_DECISION_LEN (offsetof(struct rsw_pkt_meta, bucket) + 4 - RSW_FC_DECISION_OFF)
#define RSW_FC_DROP_AT (offsetof(struct rsw_pkt_meta, reserved) - RSW_FC_DECISION_OFF)

/* A hit on a head-only key reads the first line alone. */
struct rsw_fc_entry {
	uint64_t head[RSW_FC_HEAD_WORDS];
	uint8_t decision[RSW_FC_DECISION_LEN];
	uint64_t tail[RSW_FC_KEY_WORDS - RSW_FC_HEAD_WORDS] __attribute__((aligned(64)));
} __attribute__((aligned(64)));

/* Lookups that hit, missed, and decisions not kept (RANDOM, ARS); decisions kept in place of
 * another flow's; times the cache doubled. */
struct rsw_flow_cache_stats {
	uint64_t hits, misses, uncached;
	uint64_t evictions, grown;
};

/* Direct-mapped: a flow has one slot, a newer flow of the same slot replaces it. */
struct rsw_flow_cache {
	uint32_t mask;
	uint32_t last_slot; /* of the last frame looked up alone (rsw_ingress): where its flow's
			     * next frame is likely to be looked up (replay reads ahead by it) */
	struct rsw_flow_cache_stats st;
	struct rsw_fc_entry *e;
	/* a growing cache (rsw_flow_cache_grow_upto): its largest mask (mask: fixed), and the
	 * lookups and evictions when its current window of mask + 1 lookups began */
	uint32_t max_mask;
	uint64_t window_looked, window_evicted;
};

/* A cache of entries slots (rounded up to a power of two), or NULL (no memory). */
struct rsw_flow_cache *rsw_flow_cache_new(unsigned entries);
/* From now on the cache doubles, up to max_entries slots (rounded down to a power of two),
 * whenever more than one lookup in RSW_FC_GROW_EVICTING of a window as long as it has slots
 * put a decision in place of another flow's: flows that outnumber its slots, or share them,
 * keep evicting each other. A doubled cache starts empty (its decisions are taken again), so
 * nothing it answers changes. Replay keeps one cache for every switch of a zone, whose
 * (switch, flow) pairs grow with the zone and its traffic; a live worker's stays fixed. */
void rsw_flow_cache_grow_upto(struct rsw_flow_cache *c, unsigned max_entries);
#define RSW_FC_GROW_EVICTING 16
void rsw_flow_cache_free(struct rsw_flow_cache *c);
void rsw_flow_cache_stats(const struct rsw_flow_cache *c, struct rsw_flow_cache_stats *s);

/* Whether front ends keep a cache: the environment's ROCESW_FLOW_CACHE=off (or 0) turns it
 * off (to compare, or to rule it out); anything else or unset keeps it on. */
int rsw_flow_cache_wanted(void);

/* At table build: a process-wide unique identity and the key recipe of fib. */
void rsw_flow_cache_recipe(struct rsw_fib *fib);

/* Keep the decisions rsw_ingress made for m under k, unless they depend on more than k. */
void rsw_flow_cache_put(struct rsw_flow_cache *c, const struct rsw_fib *fib,
			const struct rsw_fc_key *k, const struct rsw_pkt_meta *m);

/* What a UDF feeds the hash (hash_key.c's put_udf): its bytes masked when its match holds and
 * they lie inside the frame, else zeros. */
static inline uint64_t rsw_fc_udf_bytes(const struct rsw_fc_udf *u, const uint8_t *frame,
					const struct rsw_pkt_meta *m)
{
	if (u->match_ip_protocol >= 0 &&
	    (m->l3 == RSW_L3_NONE || m->ip_proto != u->match_ip_protocol))
		return 0;
	if (u->match_l4_dst_port >= 0 &&
	    (!(m->flags & (RSW_META_F_UDP | RSW_META_F_TCP)) || m->dport != u->match_l4_dst_port))
		return 0;
	uint32_t base = 0;
	if (u->base != RSW_UDF_L2) {
		if (m->l3 == RSW_L3_NONE ||
		    (u->base == RSW_UDF_L4 && (m->flags & RSW_META_F_FRAG_LATER)))
			return 0;
		base = u->base == RSW_UDF_L3 ? m->l3_off : m->l4_off;
	}
	uint32_t at = base + u->offset;
	if (at + u->length > m->frame_len)
		return 0;
	uint64_t v = 0;
	if (at + 8 <= m->frame_len)
		memcpy(&v, frame + at, 8);
	else
		memcpy(&v, frame + at, u->length);
	return v & u->mask;
}

/* Key of a parsed data frame m (in_port set) on fib's tables, whose classifier gives it traffic
 * class tc (0 for a port the tables do not have). 0 when fib caches nothing. */
/* The class in a key (rsw_flow_key's cls): a traffic class, or the DSCP with this bit. */
#define RSW_FC_KEY_DSCP 0x40

static inline int rsw_flow_key(const struct rsw_fib *fib, const uint8_t *frame,
			       const struct rsw_pkt_meta *m, unsigned cls, struct rsw_fc_key *k)
{
	unsigned r = fib->cache_key;
	if (r & RSW_FC_KEY_OFF)
		return 0;
	k->fib = fib->cache_id;
	/* what the checks read: the port, TTL > 1, the source MAC's group bit; the hash the L3
	 * kind, the flags (L4 present, later fragment), the protocol; the classifier's answer */
	k->port = (uint64_t)m->in_port | (uint64_t)m->l3 << 16 | (uint64_t)m->flags << 24 |
		  (uint64_t)cls << 32 | (uint64_t)m->ip_proto << 40 |
		  (uint64_t)((m->ttl > 1) | (frame[6] & 1) << 1) << 48 |
		  (uint64_t)(r & RSW_FC_KEY_OPCODE ? m->bth_opcode : 0) << 56;
	uint64_t dmac = 0;
	memcpy(&dmac, frame, 6);
	k->dmac_sport = dmac | (uint64_t)m->sport << 48;
	k->dport_qp = (uint64_t)m->dport | (uint64_t)(r & RSW_FC_KEY_QP ? m->bth_dest_qp : 0) << 16;
	k->label = r & RSW_FC_KEY_LABEL ? m->flow_label : 0;
	k->udf[0] = k->udf[1] = 0;
	if (r & RSW_FC_KEY_UDF3) /* a BTH destination QP's 3 bytes, say: the key stays short */
		k->dport_qp |= rsw_fc_udf_bytes(&fib->cache_udf[0], frame, m) << 40;
	else
		for (unsigned i = 0; i < fib->n_cache_udf; i++)
			k->udf[i] = rsw_fc_udf_bytes(&fib->cache_udf[i], frame, m);
	uint64_t src[2], dst[2], rest = k->label | k->udf[0] | k->udf[1];
	memcpy(src, m->src_ip, 16);
	memcpy(dst, m->dst_ip, 16);
	if (m->l3 == RSW_L3_IPV6) { /* always long */
		k->ip = src[0];
		k->ip6[0] = dst[0];
		k->ip6[1] = src[1];
		k->ip6[2] = dst[1];
		rest = 1;
	} else { /* IPv4 in the first 4 bytes of each, the rest zero (or no address at all) */
		k->ip = (uint32_t)src[0] | (uint64_t)(uint32_t)dst[0] << 32;
		k->ip6[0] = k->ip6[1] = k->ip6[2] = 0;
	}
	k->port |= rest ? RSW_FC_LONG : 0;
	return 1;
}

static inline uint32_t rsw_fc_slot(const struct rsw_flow_cache *c, const struct rsw_fc_key *k)
{
	const uint64_t *w = (const uint64_t *)k;
	uint32_t h = 0;
#pragma GCC unroll 8 /* fixed words: no loop to count, per packet */
	for (unsigned i = 0; i < RSW_FC_HEAD_WORDS; i++)
		h = (uint32_t)__builtin_ia32_crc32di(h, w[i]); /* SSE4.2: one instruction a word */
	if (k->port & RSW_FC_LONG) {
#pragma GCC unroll 8
		for (unsigned i = RSW_FC_HEAD_WORDS; i < RSW_FC_KEY_WORDS; i++)
			h = (uint32_t)__builtin_ia32_crc32di(h, w[i]);
	}
	return h & c->mask;
}

/* 1 with m's ingress decisions filled in when k is cached in slot (rsw_fc_slot), else 0. */
static inline int rsw_flow_cache_find_in(struct rsw_flow_cache *c, uint32_t slot,
					 const struct rsw_fc_key *k, struct rsw_pkt_meta *m)
{
	const struct rsw_fc_entry *e = &c->e[slot];
	const uint64_t *y = (const uint64_t *)k;
	uint64_t d = 0;
#pragma GCC unroll 8
	for (unsigned i = 0; i < RSW_FC_HEAD_WORDS; i++)
		d |= e->head[i] ^ y[i];
	/* the same head, long bit included: the tail is read only if both are long */
	if (!d && (k->port & RSW_FC_LONG)) {
#pragma GCC unroll 8
		for (unsigned i = RSW_FC_HEAD_WORDS; i < RSW_FC_KEY_WORDS; i++)
			d |= e->tail[i - RSW_FC_HEAD_WORDS] ^ y[i];
	}
	if (d) {
		c->st.misses++;
		return 0;
	}
	c->st.hits++;
	memcpy((uint8_t *)m + RSW_FC_DECISION_OFF, e->decision, RSW_FC_DECISION_LEN);
	m->drop = m->reserved;
	m->reserved = 0;
	return 1;
}

/* The line of slot's entry a lookup reads first (a head-only key's only one). */
static inline void rsw_flow_cache_prefetch(const struct rsw_flow_cache *c, uint32_t slot)
{
	__builtin_prefetch(&c->e[slot & c->mask]);
}

/* 1 with m's ingress decisions filled in when k is cached, else 0. */
static inline int rsw_flow_cache_find(struct rsw_flow_cache *c, const struct rsw_fc_key *k,
				      struct rsw_pkt_meta *m)
{
	return rsw_flow_cache_find_in(c, rsw_fc_slot(c, k), k, m);
}

#endif
