/* The stage order, once (pipeline.h). The frame and burst variants share every decision; the
 * burst one runs each stage over the whole burst before the next, as l3fwd does. */
#include <string.h>

#include <rte_prefetch.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/icrc.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/tables/ars.h"
#include "pipeline.h"
#include "pipeline_trace.h"

/* ARP, or an IPv6 neighbour-discovery message (router/neighbour solicitation, advertisement,
 * redirect: ICMPv6 types 133-137) right after the IPv6 header. */
static inline int is_arp_nd(const uint8_t *d, uint32_t len, const struct rsw_pkt_meta *m,
			    int parsed)
{
	if (!parsed)
		return len >= 14 && d[12] == 0x08 && d[13] == 0x06;
	return m->l3 == RSW_L3_IPV6 && m->ip_proto == 58 && m->l4_off + 1u < len &&
	       d[m->l4_off] >= 133 && d[m->l4_off] <= 137;
}

static inline const struct rsw_tm_config *pipe_tc(const struct rsw_pipeline *p)
{
	return p->tc ? p->tc : &p->fib->tm;
}

static inline struct rsw_verdict verdict(unsigned kind, unsigned stage, unsigned drop)
{
	return (struct rsw_verdict){.kind = (uint8_t)kind, .stage = (uint8_t)stage,
				    .drop = (uint8_t)drop, .icrc = -1};
}

/* Parse, ARP/ND, MAC control, ICRC: 1 when *v is decided, 0 when m goes on to the ingress. */
/* always inlined: a call per packet costs the burst as much as a stage */
static inline __attribute__((always_inline)) int
front(const struct rsw_pipeline *p, uint16_t in_port, const uint8_t *frame, uint32_t len,
      struct rsw_pkt_meta *m, struct rsw_verdict *v, struct rsw_trace *tr)
{
	unsigned rc = rsw_parse(frame, len, m);
	m->in_port = in_port;
	if (tr)
		rsw_pipeline_trace_parse(tr, m, rc);
	if (rc) {
		*v = p->punt && is_arp_nd(frame, len, m, 0)
			     ? verdict(RSW_VERDICT_PUNT, RSW_STAGE_PARSE, 0)
			     : verdict(RSW_VERDICT_DROP, RSW_STAGE_PARSE, rc);
		return 1;
	}
	if (p->punt && is_arp_nd(frame, len, m, 1)) {
		*v = verdict(RSW_VERDICT_PUNT, RSW_STAGE_PARSE, 0);
		return 1;
	}
	if (m->l2_kind != RSW_L2_DATA) {
		/* MAC control frames end here: the caller's traffic manager honours them */
		*v = verdict(RSW_VERDICT_MAC_CONTROL, RSW_STAGE_MAC_CONTROL, 0);
		return 1;
	}
	*v = verdict(RSW_VERDICT_ENQUEUED, RSW_STAGE_INGRESS, 0);
	if (p->verify_icrc && (m->flags & RSW_META_F_ROCE))
		v->icrc = (int8_t)(rsw_icrc_check(frame, m) == 1);
	return 0;
}

/* After the ingress tables: punt, drop, or rewrite for the VOQ of (egress port, TC). */
static inline __attribute__((always_inline)) void
decide(const struct rsw_pipeline *p, uint8_t *frame, struct rsw_pkt_meta *m,
       struct rsw_verdict *v, struct rsw_trace *tr)
{
	if (tr)
		rsw_pipeline_trace_ingress(tr, p->fib, frame, m);
	if (m->drop) {
		v->stage = RSW_STAGE_INGRESS;
		if (m->drop == RSW_DROP_TO_SWITCH && p->punt) {
			v->kind = RSW_VERDICT_PUNT;
		} else {
			v->kind = RSW_VERDICT_DROP;
			v->drop = m->drop;
		}
		return;
	}
	rsw_egress_rewrite(p->fib, frame, m);
	if (tr)
		rsw_pipeline_trace_rewrite(tr, m);
	v->kind = RSW_VERDICT_ENQUEUED;
	v->stage = RSW_STAGE_TM;
	v->port = m->egress_port;
	v->queue = m->tc & 7;
}

/* ARS's port quality sample (one thread claims each): bytes sent and queued, from the TM. */
static void ars_sample(const struct rsw_pipeline *p, uint64_t now)
{
	struct rsw_ars_sample s[RSW_MAX_PORTS];
	for (uint16_t port = 0; port < p->fib->n_ports; port++)
		rsw_tm_port_bytes(p->tm, port, &s[port].tx_bytes, &s[port].queue_bytes);
	rsw_ars_sample(p->fib->ars, now, s);
}

static inline void ars_sample_if_due(const struct rsw_pipeline *p)
{
	uint64_t now = p->ictx ? p->ictx->now_ns : 0;
	if (p->tm && p->fib && p->fib->ars && rsw_ars_sample_due(p->fib->ars, now))
		ars_sample(p, now);
}

/* A TM drop: lossless if the frame's ingress PG is (the invariant's count, docs/tm.md). */
static inline void tm_drop(const struct rsw_pipeline *p, const struct rsw_pkt_meta *m,
			   struct rsw_verdict *v, unsigned reason)
{
	v->kind = RSW_VERDICT_DROP;
	v->drop = (uint8_t)reason;
	v->lossless = (uint8_t)rsw_tm_lossless(pipe_tc(p), m);
}

struct rsw_verdict rsw_pipeline_frame(const struct rsw_pipeline *p, uint16_t in_port,
				      uint8_t *frame, uint32_t len, struct rte_mbuf *mb,
				      struct rsw_pkt_meta *m, struct rsw_trace *tr)
{
	struct rsw_verdict v;
	if (tr)
		rsw_trace_start(tr, in_port);
	if (front(p, in_port, frame, len, m, &v, tr))
		goto out;
	ars_sample_if_due(p);
	if (tr && p->ictx) /* the ARS step records its decision in the trace */
		p->ictx->ars_why = &tr->ars;
	rsw_ingress(p->fib, frame, m, p->ictx);
	if (tr && p->ictx)
		p->ictx->ars_why = NULL;
	decide(p, frame, m, &v, tr);
	if (v.kind != RSW_VERDICT_ENQUEUED || !p->tm || !mb) /* no buffer: the decision alone */
		goto out;
	const struct rsw_pkt_meta *mp = m;
	uint8_t why;
	if (rsw_tm_admit_bin(p->tm, pipe_tc(p), &mb, &mp, 1, &why) != 1)
		tm_drop(p, m, &v, why);
	else if (rsw_tm_enqueue_burst(p->tm, pipe_tc(p), v.port, v.queue, &mb, 1) != 1)
		tm_drop(p, m, &v, RSW_DROP_VOQ_FULL);
out:
	if (tr)
		rsw_pipeline_trace_verdict(tr, &v);
	return v;
}

uint64_t rsw_pipeline_burst(const struct rsw_pipeline *p, uint16_t in_port,
			    struct rte_mbuf **pkts, unsigned n, struct rsw_pkt_meta meta[],
			    struct rsw_verdict v[])
{
	uint64_t bytes = 0;
	const uint8_t *frame[RSW_INGRESS_BURST_MAX];
	uint16_t keep[RSW_INGRESS_BURST_MAX], n_keep = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		bytes += mb->pkt_len;
		if (mb->nb_segs > 1 && rte_pktmbuf_linearize(mb) < 0) {
			v[i] = verdict(RSW_VERDICT_DROP, RSW_STAGE_RX, RSW_DROP_RX_MULTISEG);
			continue;
		}
		uint8_t *data = rte_pktmbuf_mtod(mb, uint8_t *);
		frame[i] = data;
		if (!front(p, in_port, data, mb->data_len, &meta[i], &v[i], NULL))
			keep[n_keep++] = (uint16_t)i;
	}
	ars_sample_if_due(p);
	rsw_ingress_burst(p->fib, frame, meta, keep, n_keep, p->ictx);
	for (unsigned k = 0; k < n_keep; k++)
		if (!meta[keep[k]].drop)
			rsw_tm_prefetch(p->tm, pipe_tc(p), &meta[keep[k]]);

	/* routed packets binned by VOQ (egress port, queue): few distinct ones per burst. All come
	 * from this port, and the PG follows the TC, so a bin is one (PG, VOQ) for admission. */
	struct rte_mbuf *bin[RSW_INGRESS_BURST_MAX][RSW_INGRESS_BURST_MAX];
	const struct rsw_pkt_meta *bin_meta[RSW_INGRESS_BURST_MAX][RSW_INGRESS_BURST_MAX];
	uint16_t bin_idx[RSW_INGRESS_BURST_MAX][RSW_INGRESS_BURST_MAX];
	uint16_t bin_key[RSW_INGRESS_BURST_MAX], bin_n[RSW_INGRESS_BURST_MAX], n_bins = 0;
	for (unsigned k = 0; k < n_keep; k++) {
		uint16_t i = keep[k];
		decide(p, (uint8_t *)(uintptr_t)frame[i], &meta[i], &v[i], NULL);
		if (v[i].kind != RSW_VERDICT_ENQUEUED)
			continue;
		uint16_t key = (uint16_t)(v[i].port * RSW_TM_QUEUES + v[i].queue);
		unsigned b = 0;
		while (b < n_bins && bin_key[b] != key)
			b++;
		if (b == n_bins) {
			bin_key[n_bins] = key;
			bin_n[n_bins++] = 0;
		}
		bin_meta[b][bin_n[b]] = &meta[i];
		bin_idx[b][bin_n[b]] = i;
		bin[b][bin_n[b]++] = pkts[i];
	}
	for (unsigned b = 0; b < n_bins; b++) {
		uint16_t e = bin_key[b] / RSW_TM_QUEUES;
		uint8_t q = (uint8_t)(bin_key[b] % RSW_TM_QUEUES);
		uint8_t why[RSW_INGRESS_BURST_MAX];
		unsigned n_in = bin_n[b];
		if (rsw_tm_admit_bin(p->tm, pipe_tc(p), bin[b], bin_meta[b], n_in, why) != n_in) {
			unsigned k = 0;
			for (unsigned j = 0; j < n_in; j++) {
				if (why[j]) {
					tm_drop(p, bin_meta[b][j], &v[bin_idx[b][j]], why[j]);
				} else {
					bin_idx[b][k] = bin_idx[b][j];
					bin_meta[b][k] = bin_meta[b][j];
					bin[b][k++] = bin[b][j];
				}
			}
			n_in = k;
		}
		unsigned k = rsw_tm_enqueue_burst(p->tm, pipe_tc(p), e, q, bin[b], n_in);
		for (unsigned j = k; j < n_in; j++)
			tm_drop(p, bin_meta[b][j], &v[bin_idx[b][j]], RSW_DROP_VOQ_FULL);
	}
	return bytes;
}

const char *rsw_verdict_name(const struct rsw_verdict *v)
{
	switch (v->kind) {
	case RSW_VERDICT_ENQUEUED: return "enqueued";
	case RSW_VERDICT_MAC_CONTROL: return "mac_control";
	case RSW_VERDICT_PUNT: return "punt";
	default: return rsw_drop_reason_name(v->drop);
	}
}
