#include <string.h>

#include <rte_fib.h>
#include <rte_lpm6.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include "../pkt/drop_reason.h"
#include "../pkt/rewrite.h"
#include "ars.h"
#include "ingress.h"

static inline uint32_t dst4(const struct rsw_pkt_meta *m)
{
	return (uint32_t)m->dst_ip[0] << 24 | (uint32_t)m->dst_ip[1] << 16 |
	       (uint32_t)m->dst_ip[2] << 8 | m->dst_ip[3];
}

/* The IPv4 main table's answers for n addresses: by exact match of its longest lengths where
 * the table keeps them apart (compact tables), the rest through rte_fib. */
static inline void fib4_lookup(const struct rsw_fib *f, const uint32_t *ip, uint64_t *nh,
			       unsigned n)
{
	if (!f->long4.slot) {
		rte_fib_lookup_bulk(f->fib4, (uint32_t *)(uintptr_t)ip, nh, n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t v = rsw_long4_find(&f->long4, ip[i]);
		if (v != RSW_LONG4_EMPTY)
			nh[i] = v;
		else
			rte_fib_lookup_bulk(f->fib4, (uint32_t *)(uintptr_t)&ip[i], &nh[i], 1);
	}
}

static inline int lookup_main(const struct rsw_fib *f, const struct rsw_pkt_meta *m, uint32_t *val)
{
	if (m->l3 == RSW_L3_IPV4) {
		if (f->fib4) {
			uint32_t ip = dst4(m);
			uint64_t nh;
			fib4_lookup(f, &ip, &nh, 1);
			if (nh != RSW_FIB4_MISS) {
				*val = (uint32_t)nh;
				return 0;
			}
		}
		*val = f->default4;
		return f->has_default4 ? 0 : -1;
	}
	if (f->lpm6 && rte_lpm6_lookup(f->lpm6, m->dst_ip, val) == 0)
		return 0;
	*val = f->default6;
	return f->has_default6 ? 0 : -1;
}

static inline int lookup_policy(const struct rsw_fib_port *p, const struct rsw_pkt_meta *m,
				uint32_t *val)
{
	uint64_t nh;
	if (m->l3 == RSW_L3_IPV4) {
		struct rte_rib_node *n = rte_rib_lookup(p->pbr4, dst4(m));
		if (!n || rte_rib_get_nh(n, &nh) < 0)
			return -1;
	} else {
		struct rte_rib6_node *n = rte_rib6_lookup(p->pbr6, m->dst_ip);
		if (!n || rte_rib6_get_nh(n, &nh) < 0)
			return -1;
	}
	*val = (uint32_t)nh;
	return 0;
}

int rsw_ingress_policy_route(const struct rsw_fib *fib, const struct rsw_pkt_meta *m)
{
	uint32_t val;
	const struct rsw_fib_port *port = &fib->ports[m->in_port];
	return port->pbr4 && lookup_policy(port, m, &val) == 0;
}

static inline int is_multicast_ip(const struct rsw_pkt_meta *m)
{
	return m->l3 == RSW_L3_IPV4 ? (m->dst_ip[0] & 0xF0) == 0xE0 : m->dst_ip[0] == 0xFF;
}

static int is_local(const struct rsw_fib *f, const struct rsw_pkt_meta *m)
{
	if (m->l3 == RSW_L3_IPV4) {
		uint32_t ip = dst4(m);
		for (uint32_t i = 0; i < f->n_local4; i++)
			if (f->local4[i] == ip)
				return 1;
		return 0;
	}
	for (uint32_t i = 0; i < f->n_local6; i++)
		if (!memcmp(f->local6[i], m->dst_ip, 16))
			return 1;
	return 0;
}

/* The TC of the classifier's first rule that matches m, or -1. */
static inline int classify_rule(const struct rsw_fib *fib, const struct rsw_pkt_meta *m)
{
	if (!((fib->cls_dscp >> (m->dscp & 63)) & 1)) /* no rule matches its DSCP */
		return -1;
	for (uint32_t i = 0; i < fib->n_cls; i++) {
		const struct rsw_classifier_rule *r = &fib->cls[i];
		if (((m->dscp ^ r->dscp) & r->dscp_mask) ||
		    (r->in_port >= 0 && r->in_port != m->in_port) || m->frame_len < r->len_lo ||
		    m->frame_len > r->len_hi)
			continue;
		if (r->roce_only && (!(m->flags & RSW_META_F_ROCE) ||
				     ((m->bth_opcode ^ r->opcode) & r->opcode_mask) ||
				     m->bth_dest_qp < r->qp_lo || m->bth_dest_qp > r->qp_hi))
			continue;
		return r->tc;
	}
	return -1;
}

/* The classifier, when a rule matches, overrides the DSCP map. */
static inline uint8_t classify_tc(const struct rsw_fib *fib, const struct rsw_pkt_meta *m)
{
	int tc = classify_rule(fib, m);
	return tc >= 0 ? (uint8_t)tc : fib->ports[m->in_port].dscp_to_tc[m->dscp];
}

void rsw_classify(const struct rsw_fib *fib, struct rsw_pkt_meta *m)
{
	/* the PG follows the TC */
	m->tc = classify_tc(fib, m);
	m->pg = fib->ports[m->in_port].tc_to_pg[m->tc & 7];
}

/* Everything before the main table's answer. Returns -1 when m is decided (dropped, or not a
 * data frame), 0 when *val holds the route (policy route, IPv6, default), 1 when the IPv4 main
 * table must be asked (in bulk by rsw_ingress_burst). */
static inline int ingress_checks(const struct rsw_fib *fib, const uint8_t *frame,
				 struct rsw_pkt_meta *m, uint32_t *val)
{
	if (m->drop || m->l2_kind != RSW_L2_DATA)
		return -1;
	if (!fib || m->in_port >= fib->n_ports) {
		m->drop = RSW_DROP_NO_TABLES;
		return -1;
	}
	const struct rsw_fib_port *port = &fib->ports[m->in_port];
	if (!port->up) {
		m->drop = RSW_DROP_INGRESS_PORT_DOWN;
		return -1;
	}
	/* QoS classification happens for every packet: the TM accounts drops per PG too. */
	rsw_classify(fib, m);
	if (frame[6] & 1) {
		m->drop = RSW_DROP_SMAC_MULTICAST;
		return -1;
	}
	if (fib->dmac_check ? memcmp(frame, port->mac, 6) && memcmp(frame, fib->router_mac, 6)
			    : (frame[0] & 1)) {
		m->drop = RSW_DROP_DMAC_NOT_ROUTER;
		return -1;
	}
	if (is_multicast_ip(m)) {
		m->drop = RSW_DROP_IP_MULTICAST;
		return -1;
	}
	if ((m->l3 == RSW_L3_IPV4 ? fib->n_local4 : fib->n_local6) && is_local(fib, m)) {
		m->drop = RSW_DROP_TO_SWITCH;
		return -1;
	}
	if (m->ttl <= 1) {
		m->drop = RSW_DROP_TTL_EXPIRED;
		return -1;
	}
	if (port->pbr4 && lookup_policy(port, m, val) == 0)
		return 0;
	if (m->l3 == RSW_L3_IPV4 && fib->fib4)
		return 1;
	if (lookup_main(fib, m, val) != 0) {
		m->drop = m->l3 == RSW_L3_IPV4 ? RSW_DROP_LPM4_MISS : RSW_DROP_LPM6_MISS;
		return -1;
	}
	return 0;
}

/* The IPv4 main table's answer nh, or its default route: 0 with *val, or -1 (dropped). */
static inline int lpm4_answer(const struct rsw_fib *fib, struct rsw_pkt_meta *m, uint64_t nh,
			      uint32_t *val)
{
	if (nh != RSW_FIB4_MISS) {
		*val = (uint32_t)nh;
		return 0;
	}
	if (fib->has_default4) {
		*val = fib->default4;
		return 0;
	}
	m->drop = RSW_DROP_LPM4_MISS;
	return -1;
}

/* From the route's value to the next hop: blackhole, ECMP group (hash, buckets), neighbour. */
static inline void ingress_route(const struct rsw_fib *fib, const uint8_t *frame,
				 struct rsw_pkt_meta *m, uint32_t val, struct rsw_ingress_ctx *ctx)
{
	uint32_t kind = val >> RSW_LPM_KIND_SHIFT, idx = val & RSW_LPM_INDEX_MASK;
	if (kind == RSW_LPM_BLACKHOLE) {
		m->drop = RSW_DROP_BLACKHOLE_ROUTE;
		return;
	}
	if (kind == RSW_LPM_GROUP) {
		const struct rsw_fib_group *g = &fib->groups[idx];
		m->via_group = 1;
		m->group = idx;
		if (g->n_active == 0) {
			if (g->ars)
				rsw_ars_count_drop(g->ars);
			m->drop = RSW_DROP_ECMP_GROUP_EMPTY;
			return;
		}
		m->hash = rsw_hash_packet(&fib->policies[g->policy], frame, m, ctx ? &ctx->rnd : NULL);
		if (g->resilient && g->bucket_slot) {
			m->bucket = rsw_fastmod(m->hash, g->bucket_m, g->n_buckets);
			m->member = g->bucket_slot[m->bucket];
			idx = g->slot_nh[m->member];
		} else {
			m->bucket = rsw_fastmod(m->hash, g->active_m, g->n_active);
			m->member = g->active_slot[m->bucket];
			idx = g->active_nh[m->bucket];
		}
		if (g->ars) /* adaptive routing may move the flow off its static member */
			idx = rsw_ars_member(fib->ars, g->ars, m, idx, ctx ? ctx->now_ns : 0,
					     ctx ? ctx->ars_why : NULL, ctx && ctx->ars_dry);
	}
	m->nexthop = idx;
	const struct rsw_fib_nh *nh = &fib->nh[idx];
	if (!nh->resolved) {
		m->drop = RSW_DROP_NEIGHBOR_MISS;
		return;
	}
	if (!fib->ports[nh->port].up) {
		m->drop = RSW_DROP_EGRESS_PORT_DOWN;
		return;
	}
	m->egress_port = nh->port;
}

static inline void ingress_one(const struct rsw_fib *fib, const uint8_t *frame,
			       struct rsw_pkt_meta *m, struct rsw_ingress_ctx *ctx)
{
	uint32_t val;
	int r = ingress_checks(fib, frame, m, &val);
	if (r < 0)
		return;
	if (r == 1) {
		uint32_t ip = dst4(m);
		uint64_t nh;
		fib4_lookup(fib, &ip, &nh, 1);
		if (lpm4_answer(fib, m, nh, &val) != 0)
			return;
	}
	ingress_route(fib, frame, m, val, ctx);
}

static inline void ingress_burst(const struct rsw_fib *fib, const uint8_t *const frame[],
				 struct rsw_pkt_meta meta[], const uint16_t idx[], unsigned n,
				 struct rsw_ingress_ctx *ctx)
{
	uint32_t val[RSW_INGRESS_BURST_MAX], ip[RSW_INGRESS_BURST_MAX];
	uint64_t nh[RSW_INGRESS_BURST_MAX];
	int8_t step[RSW_INGRESS_BURST_MAX];
	unsigned n4 = 0;
	for (unsigned k = 0; k < n; k++) {
		struct rsw_pkt_meta *m = &meta[idx[k]];
		step[k] = (int8_t)ingress_checks(fib, frame[idx[k]], m, &val[k]);
		if (step[k] == 1)
			ip[n4++] = dst4(m);
	}
	/* one call for the burst: DIR-24-8's per-call set-up is paid once */
	if (n4)
		fib4_lookup(fib, ip, nh, n4);
	n4 = 0;
	for (unsigned k = 0; k < n; k++) {
		struct rsw_pkt_meta *m = &meta[idx[k]];
		if (step[k] < 0 || (step[k] == 1 && lpm4_answer(fib, m, nh[n4++], &val[k]) != 0))
			continue;
		ingress_route(fib, frame[idx[k]], m, val[k], ctx);
	}
}

/* The flow cache's key of m, when the thread keeps a cache and the tables can be cached. Its
 * class: the TC of the classifier's rule that matches, else the DSCP (with RSW_FC_KEY_DSCP),
 * which with the ingress port in the key decides the port's map; so a hit does not read the
 * port's map, which a switch of many ports holds in a line of its own per port. */
static inline int flow_key(const struct rsw_fib *fib, const uint8_t *frame,
			   const struct rsw_pkt_meta *m, const struct rsw_ingress_ctx *ctx,
			   struct rsw_fc_key *k)
{
	if (!ctx || !ctx->cache || !fib || m->drop || m->l2_kind != RSW_L2_DATA)
		return 0;
	int tc = classify_rule(fib, m);
	unsigned cls = tc >= 0 ? (unsigned)tc : RSW_FC_KEY_DSCP | (m->dscp & 63);
	return rsw_flow_key(fib, frame, m, cls, k);
}

void rsw_ingress(const struct rsw_fib *fib, const uint8_t *frame, struct rsw_pkt_meta *m,
		 struct rsw_ingress_ctx *ctx)
{
	struct rsw_fc_key k;
	int keyed = flow_key(fib, frame, m, ctx, &k);
	if (keyed) {
		uint32_t slot = rsw_fc_slot(ctx->cache, &k);
		ctx->cache->last_slot = slot;
		if (rsw_flow_cache_find_in(ctx->cache, slot, &k, m))
			return;
	}
	ingress_one(fib, frame, m, ctx);
	if (keyed)
		rsw_flow_cache_put(ctx->cache, fib, &k, m);
}

void rsw_ingress_burst(const struct rsw_fib *fib, const uint8_t *const frame[],
		       struct rsw_pkt_meta meta[], const uint16_t idx[], unsigned n,
		       struct rsw_ingress_ctx *ctx)
{
	if (!ctx || !ctx->cache || !fib || (fib->cache_key & RSW_FC_KEY_OFF)) {
		ingress_burst(fib, frame, meta, idx, n, ctx);
		return;
	}
	/* the flows the cache holds are decided; the others go through the tables, then in */
	struct rsw_fc_key key[RSW_INGRESS_BURST_MAX];
	uint16_t miss[RSW_INGRESS_BURST_MAX], miss_key[RSW_INGRESS_BURST_MAX];
	unsigned n_miss = 0, n_keyed = 0;
	for (unsigned k = 0; k < n; k++) {
		struct rsw_pkt_meta *m = &meta[idx[k]];
		if (!flow_key(fib, frame[idx[k]], m, ctx, &key[n_keyed])) {
			miss_key[n_miss] = UINT16_MAX;
			miss[n_miss++] = idx[k];
			continue;
		}
		if (rsw_flow_cache_find(ctx->cache, &key[n_keyed], m))
			continue;
		miss_key[n_miss] = (uint16_t)n_keyed++;
		miss[n_miss++] = idx[k];
	}
	if (!n_miss)
		return;
	ingress_burst(fib, frame, meta, miss, n_miss, ctx);
	for (unsigned k = 0; k < n_miss; k++)
		if (miss_key[k] != UINT16_MAX)
			rsw_flow_cache_put(ctx->cache, fib, &key[miss_key[k]], &meta[miss[k]]);
}

void rsw_egress_rewrite(const struct rsw_fib *fib, uint8_t *frame, struct rsw_pkt_meta *m)
{
	const struct rsw_fib_nh *nh = &fib->nh[m->nexthop];
	rsw_rewrite_ttl(frame, m);
	rsw_rewrite_mac(frame, nh->dmac, nh->smac);
}
