/* A host's NIC in replay, common to what runs on it (a capture player, replay_player.c, or a rank
 * of a collective, replay_coll.c): frames it sends leave on its link and in its capture; PFC and
 * PAUSE frames it receives pause its priorities, and wake it; data frames it receives are counted
 * and handed to what runs on it. A frame's priority is the PG its switch classifies it into, the
 * bit the switch's PFC frames carry. */
#include <stdlib.h>

#include "dataplane/hash/hash_policy.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_build.h"
#include "dataplane/tables/ingress.h"
#include "replay_engine.h"
#include "replay_host.h"
#include "replay_node.h"

/* The bytes of a frame anyone of the run reads: a RoCE frame's headers, as far past its L4
 * header as a UDF of any hash policy (which a scheduled table write may change mid-run) can
 * reach, and what its captures keep (read_to); any other frame whole (an IPv6 extension chain,
 * ARP, ND: not worth bounding). The switches read no payload and check no ICRC. */
static uint32_t rp_frame_head(const struct rsw_pkt_meta *m, uint32_t len, uint32_t read_to)
{
	if (!(m->flags & RSW_META_F_ROCE) || read_to >= len)
		return len;
	uint32_t head = (uint32_t)m->l4_off + RSW_UDF_OFFSET_MAX + RSW_UDF_MAX_LEN;
	head = head > m->payload_off ? head : m->payload_off;
	head = head > read_to ? head : read_to;
	return head < len ? head : len;
}

unsigned rp_host_classify(struct replay *r, const struct host_node *hn, const uint8_t *data,
			  uint32_t len, uint32_t *flow, uint32_t *head)
{
	struct rsw_pkt_meta m;
	*flow = NO_FLOW;
	int bad = rsw_parse(data, len, &m);
	if (head)
		/* a mapped capture's frame can leave what captures read where it lies */
		*head = !bad ? rp_frame_head(&m, len, hn->in.walk.map ? 0 : r->read_to) : len;
	if (bad)
		return 0;
	if (m.l2_kind != RSW_L2_DATA)
		return HOST_CTRL_PRIO;
	if (m.l3 != RSW_L3_NONE)
		*flow = rp_flow_index(r, &m);
	if (hn->att_sw < 0)
		return 0;
	m.in_port = hn->att_port;
	rsw_classify(r->sw[hn->att_sw].fib, &m);
	return m.pg & 7;
}

void rp_host_send_frame(struct replay *r, struct host_node *hn, uint64_t t, const uint8_t *data,
			const uint8_t *where, uint32_t len, uint32_t head, uint32_t flow, int lost,
			int roce_sparse)
{
	rp_write(&hn->out, t, data, len, NULL, len);
	hn->res->tx_packets++;
	hn->res->tx_bytes += len;
	r->res->entered++;
	rp_flow_enter(r, flow, t, len);
	if (t > r->res->end_ns)
		r->res->end_ns = t;
	if (lost) {
		r->res->dropped++;
		hn->res->injected_drops++;
		return;
	}
	if (hn->tx_link < 0)
		return; /* zone configs give every host a link */
	/* captures may read past what the switches read (head: a mapped capture's frames) */
	uint32_t whole = head < len && r->read_to > head ? (r->read_to < len ? r->read_to : len)
							   : head;
	struct rte_mbuf *m = NULL;
	if (whole > head && where && len <= RP_FRAME_MAX) {
		/* held whole while packet memory has the room it started with; past that, in part,
		 * its bytes past the headers left in the host's capture, where they already are */
		m = rp_mbuf_first_pool(&r->mem, data, len, whole, flow);
		if (!m && (m = rp_mbuf_ref(&r->mem, data, len, head, flow, &hn->in.walk,
					   where + head)))
			rp_cap_walk_hold(&hn->in.walk, where + head, len - head);
	} else {
		m = rp_mbuf(&r->mem, data, len, whole, flow, roce_sparse);
	}
	if (m)
		rp_link_send(r, hn->tx_link, t, m);
	else
		rp_link_lost(r, hn->tx_link, t, len);
}

uint32_t rp_host_flow(struct replay *r, unsigned h, const uint8_t *data, uint32_t len)
{
	uint32_t flow;
	rp_host_classify(r, &r->host[h], data, len, &flow, NULL);
	return flow;
}

_Static_assert(RP_BUILT_HEAD >= RSW_ROCE_HDR_MAX, "a built frame's headers are held whole");

void rp_host_send(struct replay *r, unsigned h, uint64_t t, const uint8_t *data, uint32_t len,
		  uint32_t flow, int lost, int roce_sparse)
{
	uint32_t head = r->read_to > RP_BUILT_HEAD ? r->read_to : RP_BUILT_HEAD;
	head = head < len ? head : len;
	rp_host_send_frame(r, &r->host[h], t, data, NULL, len, head, flow, lost, roce_sparse);
}

void rp_host_rx(struct replay *r, unsigned h, uint64_t t, struct rte_mbuf *mb)
{
	struct host_node *hn = &r->host[h];
	struct rsw_pkt_meta m;
	uint32_t len = mb->pkt_len;
	r->res->delivered++;
	int bad = rsw_parse(rte_pktmbuf_mtod(mb, uint8_t *), len, &m) != 0;
	if (!bad && m.l2_kind != RSW_L2_DATA) {
		hn->res->pfc_rx_frames++;
		rsw_pause_rx(&hn->pause, m.l2_kind == RSW_L2_PFC ? m.pfc_class_enable : 0xFF,
			     m.pfc_time, m.l2_kind != RSW_L2_PFC, t, hn->speed_mbps);
		if (r->log.f)
			rp_event_pfc(r, t, m.l2_kind == RSW_L2_PFC ? "pfc_rx" : "pause_rx", "host",
				     hn->name, NULL, m.l2_kind == RSW_L2_PFC ? m.pfc_class_enable : 0xFF,
				     m.pfc_time);
		if (!r->model->hosts_ignore_pfc || r->model->coll)
			r->host_ops->wake(r, h, t);
	} else {
		hn->res->rx_packets++;
		hn->res->rx_bytes += len;
		rp_flow_leave(r, *frame_flow(r, mb), t);
		if (r->host_ops->rx && !bad)
			r->host_ops->rx(r, h, t, rte_pktmbuf_mtod(mb, uint8_t *), &m);
	}
	rp_frame_free(r, mb);
}

void rp_host_lost(struct replay *r, unsigned h, uint64_t t)
{
	r->res->dropped++;
	if (r->log.f) {
		json_t *f = json_object();
		json_object_set_new(f, "reason", json_string(rsw_drop_reason_name(RSW_DROP_NO_MBUF)));
		rp_event(r, t, "drop", "host", r->host[h].name, NULL, f);
	}
}

void rp_host_finish(struct replay *r, unsigned h, uint64_t end_ns)
{
	struct host_node *hn = &r->host[h];
	for (unsigned prio = 0; prio < 8; prio++)
		hn->res->paused_ns[prio] = rsw_pause_total_ns(&hn->pause, prio, end_ns);
	hn->res->unsent += hn->n_pending;
}

void rp_host_free_pending(struct host_node *hn)
{
	for (unsigned prio = 0; prio <= HOST_CTRL_PRIO; prio++)
		while (hn->head[prio]) {
			struct pending *p = hn->head[prio];
			hn->head[prio] = p->next;
			free(p);
		}
	while (hn->spare) {
		struct pending *p = hn->spare;
		hn->spare = p->next;
		free(p);
	}
}
