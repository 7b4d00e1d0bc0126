/* Ingress match-action: port → QoS maps → L3 LPM (policy routes first) → ECMP (hash policy,
 * resilient buckets) → next hop. Reads only the compiled tables; decides, does not rewrite. */
#ifndef RSW_INGRESS_H
#define RSW_INGRESS_H

#include <stdint.h>

#include "../pkt/pkt_meta.h"
#include "ars.h"
#include "fib.h"
#include "flow_cache.h"

/* What the thread running the ingress brings to it: the state of the RANDOM hash algorithm,
 * and the time the packets arrive, on the front end's clock (replay's virtual time, the live
 * switch's rsw_clock), in ns: ARS's idle time and quality samples are measured on it. */
struct rsw_ingress_ctx {
	uint64_t rnd;
	uint64_t now_ns;
	/* explain: what the ARS step saw and decided (NULL: not recorded), and whether it may
	 * change the ARS state (ars_dry: an explain on live tables changes nothing) */
	struct rsw_ars_decision *ars_why;
	uint8_t ars_dry;
	struct rsw_flow_cache *cache; /* the thread's decisions per flow (flow_cache.h), or NULL */
};

/* m comes from rsw_parse with m->in_port set. Sets tc, pg, egress_port, nexthop, group, hash,
 * bucket, member, or m->drop. PFC/PAUSE frames are left to the caller (m->l2_kind). ctx may be
 * NULL (no RANDOM hash, ARS at time 0, no flow cache). With ctx->cache, a flow's decision comes
 * from the cache when the same tables decided it before: the same decision, fewer lookups. */
void rsw_ingress(const struct rsw_fib *fib, const uint8_t *frame, struct rsw_pkt_meta *m,
		 struct rsw_ingress_ctx *ctx);

/* rsw_ingress for packets frame[idx[k]] / meta[idx[k]], k < n (at most RSW_INGRESS_BURST_MAX),
 * of one fib: the same decisions in the same order, the IPv4 main table asked once for all. */
#define RSW_INGRESS_BURST_MAX 64
void rsw_ingress_burst(const struct rsw_fib *fib, const uint8_t *const frame[],
		       struct rsw_pkt_meta meta[], const uint16_t idx[], unsigned n,
		       struct rsw_ingress_ctx *ctx);

/* QoS classification of a parsed data packet entering m->in_port: the classifier rules, else
 * the port's DSCP-to-TC map, then the TC-to-PG map. Sets m->tc and m->pg. */
void rsw_classify(const struct rsw_fib *fib, struct rsw_pkt_meta *m);

/* 1 if a policy route of m->in_port answers m (the route step's first table), for traces. */
int rsw_ingress_policy_route(const struct rsw_fib *fib, const struct rsw_pkt_meta *m);

/* Egress rewrite for a forwarded packet: TTL / hop limit and MACs. Never touches the ICRC. */
void rsw_egress_rewrite(const struct rsw_fib *fib, uint8_t *frame, struct rsw_pkt_meta *m);

#endif
