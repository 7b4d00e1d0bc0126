/* Trace records from the pipeline's decisions (pipeline_trace.h). Each is written from the
 * packet's metadata right after the stage that decided it, so it says what that stage did. */
#include <string.h>

#include "dataplane/pkt/drop_reason.h"
#include "pipeline_trace.h"

void rsw_pipeline_trace_parse(struct rsw_trace *tr, const struct rsw_pkt_meta *m, unsigned rc)
{
	tr->parsed = *m;
	rsw_trace_add(tr, RSW_TR_PARSE, RSW_STAGE_PARSE)->drop = (uint8_t)rc;
}

/* Did the packet reach the route lookup: not stopped by the port, MAC, IP or TTL checks. */
static int routed(unsigned drop)
{
	switch (drop) {
	case RSW_DROP_NONE:
	case RSW_DROP_LPM4_MISS:
	case RSW_DROP_LPM6_MISS:
	case RSW_DROP_BLACKHOLE_ROUTE:
	case RSW_DROP_ECMP_GROUP_EMPTY:
	case RSW_DROP_NEIGHBOR_MISS:
	case RSW_DROP_EGRESS_PORT_DOWN:
		return 1;
	default:
		return 0;
	}
}

static void trace_ecmp(struct rsw_trace *tr, const struct rsw_fib *fib, const uint8_t *frame,
		       const struct rsw_pkt_meta *m)
{
	const struct rsw_fib_group *g = &fib->groups[m->group];
	struct rsw_trace_rec *r = rsw_trace_add(tr, RSW_TR_ECMP, RSW_STAGE_INGRESS);
	r->u.ecmp.group = m->group;
	r->u.ecmp.hash = m->hash;
	r->u.ecmp.bucket = m->bucket;
	r->u.ecmp.member = m->member;
	r->u.ecmp.static_member = g->resilient && g->bucket_slot ? g->bucket_slot[m->bucket]
								 : g->active_slot[m->bucket];
	/* the same key function the hash stage fed (rsw_hash_packet) */
	tr->key_len = (uint16_t)rsw_hash_key(&fib->policies[g->policy], frame, m, tr->key);
	/* the ARS step recorded its decision in tr->ars (rsw_ingress_ctx.ars_why) */
	if (g->ars && tr->ars.recorded)
		rsw_trace_add(tr, RSW_TR_ARS, RSW_STAGE_INGRESS);
}

void rsw_pipeline_trace_ingress(struct rsw_trace *tr, const struct rsw_fib *fib,
				const uint8_t *frame, const struct rsw_pkt_meta *m)
{
	if (m->drop == RSW_DROP_NO_TABLES || m->drop == RSW_DROP_INGRESS_PORT_DOWN)
		return;
	struct rsw_trace_rec *r = rsw_trace_add(tr, RSW_TR_CLASSIFY, RSW_STAGE_INGRESS);
	r->u.classify.tc = m->tc;
	r->u.classify.pg = m->pg;
	if (!routed(m->drop))
		return;
	r = rsw_trace_add(tr, RSW_TR_ROUTE, RSW_STAGE_INGRESS);
	r->u.route.table = rsw_ingress_policy_route(fib, m) ? RSW_TR_TABLE_POLICY
							      : RSW_TR_TABLE_MAIN;
	if (m->drop == RSW_DROP_LPM4_MISS || m->drop == RSW_DROP_LPM6_MISS)
		return;
	r->u.route.target = m->via_group ? RSW_TR_TGT_GROUP
			    : m->drop == RSW_DROP_BLACKHOLE_ROUTE ? RSW_TR_TGT_BLACKHOLE
								  : RSW_TR_TGT_NEXTHOP;
	r->u.route.index = m->via_group ? m->group : m->nexthop;
	if (m->via_group && m->drop != RSW_DROP_ECMP_GROUP_EMPTY)
		trace_ecmp(tr, fib, frame, m);
	if (!m->drop || m->drop == RSW_DROP_NEIGHBOR_MISS || m->drop == RSW_DROP_EGRESS_PORT_DOWN) {
		r = rsw_trace_add(tr, RSW_TR_NEXTHOP, RSW_STAGE_INGRESS);
		r->u.nexthop.nexthop = m->nexthop;
		r->u.nexthop.port = fib->nh[m->nexthop].port;
	}
}

void rsw_pipeline_trace_rewrite(struct rsw_trace *tr, const struct rsw_pkt_meta *m)
{
	rsw_trace_add(tr, RSW_TR_REWRITE, RSW_STAGE_INGRESS)->u.rewrite.ttl = m->ttl;
}

void rsw_pipeline_trace_verdict(struct rsw_trace *tr, const struct rsw_verdict *v)
{
	static const uint8_t kind[] = {
		[RSW_VERDICT_DROP] = RSW_TR_DROP,
		[RSW_VERDICT_ENQUEUED] = RSW_TR_TM,
		[RSW_VERDICT_MAC_CONTROL] = RSW_TR_MAC_CONTROL,
		[RSW_VERDICT_PUNT] = RSW_TR_PUNT,
	};
	struct rsw_trace_rec *r = rsw_trace_add(tr, kind[v->kind], v->stage);
	r->drop = v->drop;
	r->lossless = v->lossless;
	r->u.tm.port = v->port;
	r->u.tm.queue = v->queue;
}
