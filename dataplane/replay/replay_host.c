/* A host in replay: its capture is what its application posted, at the captured times. By
 * default the NIC honours PFC: a frame of a paused priority waits (frames of other priorities
 * pass it), and the host's capture records when each frame really left. With hosts ignoring PFC
 * every frame leaves at its captured time. A frame's priority is the PG its switch classifies it
 * into, the bit the switch's PFC frames carry. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/parse.h"
#include "dataplane/tables/ingress.h"
#include "replay_int.h"

/* Priority (0-7), or HOST_CTRL_PRIO for MAC control frames, and flow of a frame. */
static unsigned classify(struct replay *r, const struct host_node *hn, const uint8_t *data,
			 uint32_t len, uint32_t *flow)
{
	struct rsw_pkt_meta m;
	*flow = NO_FLOW;
	if (rsw_parse(data, len, &m))
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

/* A frame leaves host h at t (its capture records it); lost: it never reaches the far end (a
 * closed-loop test's injected drop), counted as dropped. */
static void send_frame(struct replay *r, struct host_node *hn, uint64_t t, const uint8_t *data,
		       uint32_t len, uint32_t flow, int lost, int roce_sparse)
{
	rp_write(&hn->out, t, data, len);
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
	struct rte_mbuf *m = rp_mbuf(r, data, len, flow, roce_sparse);
	if (m)
		rp_link_send(r, hn->tx_link, t, m);
	else
		rp_link_lost(r, hn->tx_link, t, len);
}

uint32_t host_flow(struct replay *r, unsigned h, const uint8_t *data, uint32_t len)
{
	uint32_t flow;
	classify(r, &r->host[h], data, len, &flow);
	return flow;
}

void host_send(struct replay *r, unsigned h, uint64_t t, const uint8_t *data, uint32_t len,
	       uint32_t flow, int lost, int roce_sparse)
{
	send_frame(r, &r->host[h], t, data, len, flow, lost, roce_sparse);
}

/* Frames captured at or before t join their priority's queue. */
static void pull(struct replay *r, struct host_node *hn, uint64_t t)
{
	while (hn->has_in && !hn->in.eof && hn->in.t <= t) {
		struct pending *p = malloc(sizeof(*p) + hn->in.len);
		if (!p) {
			r->oom = 1;
			return;
		}
		p->next = NULL;
		p->t_cap = hn->in.t;
		p->order = hn->n_read++;
		p->len = hn->in.len;
		memcpy(p->data, hn->in.data, p->len);
		unsigned prio = classify(r, hn, p->data, p->len, &p->flow);
		if (hn->tail[prio])
			hn->tail[prio]->next = p;
		else
			hn->head[prio] = p;
		hn->tail[prio] = p;
		hn->n_pending++;
		rp_cap_next(r, &hn->in);
	}
}

static void wake_ignoring_pfc(struct replay *r, unsigned h, uint64_t t)
{
	struct host_node *hn = &r->host[h];
	while (!hn->in.eof && hn->in.t <= t) {
		uint32_t flow;
		classify(r, hn, hn->in.data, hn->in.len, &flow);
		send_frame(r, hn, t, hn->in.data, hn->in.len, flow, 0, 0);
		rp_cap_next(r, &hn->in);
	}
	if (!hn->in.eof)
		rp_schedule(r, r->id_host + h, hn->in.t);
}

void host_wake(struct replay *r, unsigned h, uint64_t t)
{
	struct host_node *hn = &r->host[h];
	if (r->loop) {
		loop_wake(r, h, t);
		return;
	}
	if (r->model->hosts_ignore_pfc) {
		wake_ignoring_pfc(r, h, t);
		return;
	}
	pull(r, hn, t);
	uint64_t free_ns = rsw_shaper_free_ns(&hn->shaper);
	if (free_ns > t) {
		rp_schedule(r, r->id_host + h, free_ns);
		return;
	}
	/* the oldest frame among the priorities not paused */
	uint8_t paused = rsw_pause_mask(&hn->pause, t);
	int best = -1;
	for (unsigned prio = 0; prio <= HOST_CTRL_PRIO; prio++) {
		const struct pending *p = hn->head[prio];
		if (!p || (prio < 8 && (paused & (1u << prio))))
			continue;
		if (best < 0 || p->order < hn->head[best]->order)
			best = (int)prio;
	}
	if (best >= 0) {
		struct pending *p = hn->head[best];
		hn->head[best] = p->next;
		if (!p->next)
			hn->tail[best] = NULL;
		hn->n_pending--;
		if (t > p->t_cap) {
			uint64_t d = t - p->t_cap;
			hn->res->delayed_packets++;
			hn->res->total_delay_ns += d;
			if (d > hn->res->max_delay_ns)
				hn->res->max_delay_ns = d;
		}
		rsw_shaper_send(&hn->shaper, t, p->len);
		send_frame(r, hn, t, p->data, p->len, p->flow, 0, 0);
		free(p);
		rp_schedule(r, r->id_host + h, rsw_shaper_free_ns(&hn->shaper));
		return;
	}
	/* nothing may go now: wake when a pause ends or the next frame is captured */
	uint64_t next = hn->has_in && !hn->in.eof ? hn->in.t : NEVER;
	for (unsigned prio = 0; prio < 8; prio++)
		if (hn->head[prio] && hn->pause.until_ns[prio] < next)
			next = hn->pause.until_ns[prio];
	if (next == NEVER)
		rsw_event_cancel(&r->q, r->id_host + h);
	else
		rp_schedule(r, r->id_host + h, next);
}

void host_rx(struct replay *r, unsigned h, uint64_t t, struct rte_mbuf *mb)
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
		if (r->events)
			rp_event_pfc(r, t, m.l2_kind == RSW_L2_PFC ? "pfc_rx" : "pause_rx", "host",
				     hn->name, NULL, m.l2_kind == RSW_L2_PFC ? m.pfc_class_enable : 0xFF,
				     m.pfc_time);
		if (!r->model->hosts_ignore_pfc || r->loop)
			host_wake(r, h, t);
	} else {
		hn->res->rx_packets++;
		hn->res->rx_bytes += len;
		rp_flow_leave(r, *frame_flow(r, mb), t);
		if (r->loop && !bad)
			loop_rx(r, h, t, rte_pktmbuf_mtod(mb, uint8_t *), &m);
	}
	rte_pktmbuf_free(mb);
}

void host_finish(struct replay *r, unsigned h, uint64_t end_ns)
{
	struct host_node *hn = &r->host[h];
	for (unsigned prio = 0; prio < 8; prio++)
		hn->res->paused_ns[prio] = rsw_pause_total_ns(&hn->pause, prio, end_ns);
	hn->res->unsent += hn->n_pending;
}

void host_free_pending(struct host_node *hn)
{
	for (unsigned prio = 0; prio <= HOST_CTRL_PRIO; prio++)
		while (hn->head[prio]) {
			struct pending *p = hn->head[prio];
			hn->head[prio] = p->next;
			free(p);
		}
}
