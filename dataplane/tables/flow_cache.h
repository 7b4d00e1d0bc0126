/* The ingress decision cached per flow, as Open vSwitch's exact-match cache (EMC) keeps its
 * megaflow lookups: keyed on exactly the header fields the ingress tables read (ingress port,
 * destination MAC, the source MAC's group bit, addresses, protocol, ports, TTL > 1, and where a
 * hash policy reads them the BTH opcode and destination QP, the flow label and the UDF bytes),
 * with the classifier's traffic class standing for what it reads (DSCP, BTH opcode and QP,
 * length: two rules and a map, cheaper than a key that grows with them), and on the identity of the compiled tables, so a commit (which publishes new tables)
 * makes every entry miss. An entry holds what rsw_ingress decided (drop reason, TC, PG, egress
 * port, next hop, group, hash, bucket, member). A decision that is not a function of the key is
 * never kept: RANDOM hashing and ARS groups (flowlets, port quality) decide per packet.
 * One cache per thread (a live worker, a replay run), never shared between threads. */
#ifndef RSW_FLOW_CACHE_H
#define RSW_FLOW_CACHE_H

#include <stdint.h>

#include "../pkt/pkt_meta.h"

struct rsw_fib;

/* Optional key fields, by what the tables read (rsw_fib.cache_key). */
#define RSW_FC_KEY_OPCODE 0x02 /* a hash policy reads the BTH opcode */
#define RSW_FC_KEY_QP 0x04     /* a hash policy reads the BTH destination QP */
#define RSW_FC_KEY_LABEL 0x08  /* a hash policy reads the IPv6 flow label */
#define RSW_FC_KEY_OFF 0x80    /* the tables read more than a key holds: nothing is cached */

#define RSW_FC_UDF_BYTES 16 /* the hash policies' UDF bytes a key holds, all policies together */

/* Words, so that a key is compared and hashed word by word. */
struct rsw_fc_key {
	uint64_t fib;     /* rsw_fib.cache_id of the tables: never 0 */
	uint64_t port;    /* in_port, l3, flags, TC, IP protocol, TTL > 1, source-MAC bit, opcode */
	uint64_t dmac_sport;
	uint64_t dport_qp;
	uint64_t label;
	uint64_t src[2], dst[2];
	uint64_t udf[RSW_FC_UDF_BYTES / 8];
};

struct rsw_flow_cache;

/* A cache of entries slots (rounded up to a power of two), or NULL (no memory). */
struct rsw_flow_cache *rsw_flow_cache_new(unsigned entries);
void rsw_flow_cache_free(struct rsw_flow_cache *c);

/* Lookups that hit, missed, and decisions not kept (RANDOM, ARS, or tables not cacheable). */
struct rsw_flow_cache_stats {
	uint64_t hits, misses, uncached;
};
void rsw_flow_cache_stats(const struct rsw_flow_cache *c, struct rsw_flow_cache_stats *s);

/* Whether front ends keep a cache: the environment's ROCESW_FLOW_CACHE=off turns it off (to
 * compare, or to rule it out), anything else or unset keeps it on. */
int rsw_flow_cache_wanted(void);

/* At table build: a process-wide unique identity and the key recipe of fib. */
void rsw_flow_cache_recipe(struct rsw_fib *fib);

/* Key of a parsed data frame m (in_port set) on fib's tables, whose classifier gives it traffic
 * class tc (0 for a port the tables do not have). 0 when fib caches nothing. */
int rsw_flow_key(const struct rsw_fib *fib, const uint8_t *frame, const struct rsw_pkt_meta *m,
		 unsigned tc, struct rsw_fc_key *k);

/* 1 with m's ingress decisions filled in when k is cached, else 0. */
int rsw_flow_cache_find(struct rsw_flow_cache *c, const struct rsw_fc_key *k,
			struct rsw_pkt_meta *m);

/* Keep the decisions rsw_ingress made for m under k, unless they depend on more than k. */
void rsw_flow_cache_put(struct rsw_flow_cache *c, const struct rsw_fib *fib,
			const struct rsw_fc_key *k, const struct rsw_pkt_meta *m);

#endif
