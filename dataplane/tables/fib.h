/* The compiled tables the dataplane reads: immutable once published, replaced whole by a commit
 * (RCU). Lookups use DPDK's rte_fib (IPv4, DIR-24-8) / rte_lpm6. */
#ifndef RSW_FIB_H
#define RSW_FIB_H

#include <stdint.h>

#include "../hash/hash_policy.h"
#include "fastmod.h"
#include "table_types.h"

struct rte_fib;
struct rte_lpm6;
struct rte_rib;
struct rte_rib6;
struct rsw_state;
struct rsw_ars_group;
struct rsw_ars_switch;

/* LPM next-hop values: kind in the top bits, index below (rte_lpm6 keeps 21 bits). */
#define RSW_LPM_KIND_SHIFT 19
#define RSW_LPM_INDEX_MASK ((1u << RSW_LPM_KIND_SHIFT) - 1)
#define RSW_LPM_NEXTHOP 0u
#define RSW_LPM_GROUP 1u
#define RSW_LPM_BLACKHOLE 2u
/* what the IPv4 table answers for an address no route covers (above every value stored) */
#define RSW_FIB4_MISS (1u << 30)

struct rsw_fib_nh {
	uint16_t port;
	uint8_t resolved;
	uint8_t dmac[6];
	uint8_t smac[6];
	struct rsw_ip ip;
};

struct rsw_fib_group {
	uint64_t bucket_m;      /* rsw_fastmod constants for n_buckets and n_active */
	uint64_t active_m;
	uint32_t n_buckets;
	uint16_t n_active;
	uint8_t resilient;
	uint16_t policy;        /* index into fib->policies */
	/* resilient: bucket → member slot → next-hop index. One byte per bucket keeps a 4096-bucket
	 * table in 64 cache lines, which the packet copies of a burst do not evict. */
	uint8_t *bucket_slot;
	uint32_t slot_nh[RSW_ECMP_MAX_MEMBERS];
	uint32_t *active_nh;    /* non-resilient: hash % n_active → next-hop index */
	uint8_t *active_slot;
	uint16_t *active_port;  /* ... its egress port (what ARS weighs) */
	struct rsw_ars_group *ars; /* NULL: plain ECMP (docs/ars.md); mutable, carried by commits */
	char name[RSW_NAME_MAX];
};

struct rsw_fib_port {
	uint8_t up;
	uint8_t role;
	uint8_t pfc_enable;
	uint8_t mac[6];
	uint32_t speed_mbps;
	uint8_t dscp_to_tc[64];
	uint8_t tc_to_pg[8];
	/* Policy routes keyed on this ingress port (NULL if none). They are few, so a RIB tree:
	 * an rte_lpm costs 64 MB of tbl24 per table. */
	struct rte_rib *pbr4;
	struct rte_rib6 *pbr6;
	char name[RSW_NAME_MAX];
};

/* The IPv4 main table's routes of its RSW_LONG4_LENS longest prefix lengths by exact match,
 * beside the compact (RIB trie) table: probed longest length first, the first hit is the longest
 * match (every longer length is among those probed), and a miss falls back to the trie, which
 * holds every route. A zone's switches have one or two lengths (a CTSW a /32 per host, an RTSW
 * its hosts' /32s and a /16 for the rest), so their lookups never walk the trie. Open
 * addressing, linear probing, 8-byte slots: the masked address, and the route's value with its
 * length in the top byte; empty slots hold RSW_LONG4_EMPTY. */
#define RSW_LONG4_LENS 4
#define RSW_LONG4_EMPTY UINT32_MAX
struct rsw_long4_slot {
	uint32_t ip, len_val;
};
struct rsw_long4 {
	uint32_t mask;   /* slots - 1 (slots a power of two, at least twice the routes) */
	uint8_t n_len;   /* lengths held, longest first in len[] */
	uint8_t len[RSW_LONG4_LENS];
	struct rsw_long4_slot *slot;
};

static inline uint32_t rsw_long4_hash(uint32_t ip, unsigned len, uint32_t mask)
{
	return (uint32_t)(((uint64_t)(ip ^ len) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static inline uint32_t rsw_long4_netmask(unsigned len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* The value of the longest route to ip (host order) among the lengths held, or
 * RSW_LONG4_EMPTY (then the trie answers). */
static inline uint32_t rsw_long4_find(const struct rsw_long4 *h, uint32_t ip)
{
	for (unsigned k = 0; k < h->n_len; k++) {
		unsigned len = h->len[k];
		uint32_t key = ip & rsw_long4_netmask(len);
		for (uint32_t i = rsw_long4_hash(key, len, h->mask);; i = (i + 1) & h->mask) {
			const struct rsw_long4_slot *e = &h->slot[i];
			if (e->len_val == RSW_LONG4_EMPTY)
				break;
			if (e->ip == key && e->len_val >> 24 == len)
				return e->len_val & 0xFFFFFF;
		}
	}
	return RSW_LONG4_EMPTY;
}

/* One UDF of a hash policy as the flow cache reads it: its bytes masked, in a key word. */
#define RSW_FC_UDF_MAX 2
struct rsw_fc_udf {
	uint64_t mask;          /* the UDF's mask bytes in memory order, zero past its length */
	uint16_t offset;
	uint8_t base;           /* enum rsw_udf_base */
	uint8_t length;
	int32_t match_ip_protocol, match_l4_dst_port;
};

/* What a hop reads of a switch's tables comes first, in one line (the flow cache's view, the
 * checks' scalars, the arrays a hop indexes), followed by the traffic manager's settings, whose
 * own first line holds its pools: at zone scale every line of a switch is a cache miss when the
 * switch is visited again, and these were spread over five (the two lines side by side are
 * also what a CPU's adjacent-line prefetch brings in together). */
struct rsw_fib {
	/* the flow cache's view (flow_cache.h, set at build): an identity no other tables of the
	 * process share, the optional key fields, the hash policies' UDFs the key reads */
	uint64_t cache_id;
	uint8_t cache_key;
	uint8_t n_cache_udf;
	uint8_t dmac_check;
	uint8_t router_mac[6];
	uint16_t n_ports;
	uint32_t n_cls;
	/* bit d: some classifier rule matches DSCP d (the others go by the DSCP map without
	 * reading the rules) */
	uint64_t cls_dscp;
	/* classifier rules, highest priority first */
	struct rsw_classifier_rule *cls;
	struct rsw_fib_nh *nh;
	/* ARS: the profile and each port's quality (NULL when no group uses ARS) */
	struct rsw_ars_switch *ars;
	struct rte_fib *fib4;   /* NULL when there is no IPv4 route */
	/* the traffic manager's own settings (it reads nothing else of these tables): its pools
	 * in the next line */
	struct rsw_tm_config tm;
	/* what the tables read for a flow the cache does not hold (and the key, for a hash
	 * policy's UDFs) */
	uint64_t generation;
	struct rsw_fc_udf cache_udf[RSW_FC_UDF_MAX];
	struct rsw_long4 long4; /* compact tables: fib4's longest lengths (slot NULL: none) */
	struct rte_lpm6 *lpm6;  /* NULL when there is no IPv6 route */
	/* rte_lpm/rte_lpm6 take depths from 1: a /0 route is kept beside them */
	uint8_t has_default4, has_default6;
	uint32_t default4, default6;
	uint32_t n_nh, n_groups, n_policies;
	struct rsw_fib_group *groups;
	struct rsw_hash_policy *policies;
	char (*policy_names)[RSW_NAME_MAX];
	/* the switch's own addresses (INTERFACE): packets to them end at the switch */
	uint32_t n_local4, n_local6;
	uint32_t *local4;        /* host order */
	uint8_t (*local6)[16];
	struct rsw_fib_port ports[RSW_MAX_PORTS];
};
_Static_assert(__builtin_offsetof(struct rsw_fib, tm) == 64,
	       "a hop's fields of the tables in one line, the TM's pools in the next");

/* Compile a validated state. Returns NULL with a message in err on failure (e.g. no memory). */
struct rsw_fib *rsw_fib_build(const struct rsw_state *s, uint64_t generation, char *err,
			      unsigned errlen);
/* IPv4 main tables built from now on: 1 = a RIB trie sized to the routes (replay and the other
 * offline commands, where a zone compiles hundreds of switches), 0 = DIR-24-8 (the default:
 * the live dataplane's lookup in two memory reads, for 64 MiB per table). Same answers. */
void rsw_fib_compact_ipv4(int on);
/* From now on rsw_fib_free leaves DPDK's tables (LPM, RIB) to the process exit. */
void rsw_fib_process_exiting(void);
void rsw_fib_free(struct rsw_fib *fib);
/* Carry the mutable state (ARS: averages, same-named groups' flowlets and counters) from the
 * tables being replaced to the new ones, before they are published. */
void rsw_fib_carry(struct rsw_fib *next, const struct rsw_fib *prev);

#endif
