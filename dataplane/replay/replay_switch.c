/* A switch in replay: frames arriving on its ports go through the live pipeline (parser, ingress
 * tables, traffic manager); each port sends when its shaper and scheduler let it; PFC frames it
 * owes its peers are sent between data frames. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pipeline/pipeline.h"
#include "dataplane/tm/tm.h"
#include "replay_deadlock.h"
#include "replay_engine.h"
#include "replay_node.h"
#include "replay_switch.h"

int rp_sw_tables(struct replay *r, unsigned s, const struct rsw_fib *fib)
{
	struct sw_node *n = &r->sw[s];
	const struct rsw_tm_config *tc = NULL;
	for (unsigned i = 0; !tc && i < r->n_tm_cfg; i++)
		if (rsw_tm_config_same(r->tm_cfg[i], &fib->tm))
			tc = r->tm_cfg[i];
	if (!tc) {
		struct rsw_tm_config **grown =
			realloc(r->tm_cfg, (r->n_tm_cfg + 1) * sizeof(*r->tm_cfg));
		struct rsw_tm_config *c = aligned_alloc(64, sizeof(*c));
		if (grown)
			r->tm_cfg = grown;
		if (!grown || !c) {
			free(c);
			return -1;
		}
		rsw_tm_config_copy(c, &fib->tm);
		r->tm_cfg[r->n_tm_cfg++] = c;
		tc = c;
	}
	n->fib = fib;
	n->tc = tc;
	return 0;
}

void rp_sw_tables_free(struct replay *r)
{
	for (unsigned i = 0; i < r->n_tm_cfg; i++)
		free(r->tm_cfg[i]);
	free(r->tm_cfg);
	r->tm_cfg = NULL;
	r->n_tm_cfg = 0;
}

static const char *port_name(const struct sw_node *n, uint16_t p)
{
	return n->fib->ports[p].name;
}

static void sw_event(struct replay *r, unsigned s, uint64_t t, const char *kind, uint16_t port,
		     json_t *fields)
{
	const struct sw_node *n = &r->sw[s];
	rp_event(r, t, kind, r->model->zone ? "switch" : NULL, n->name, port_name(n, port), fields);
}

/* An event of one field, as a run may log per packet (rp_log_fields). */
static void sw_event1(struct replay *r, unsigned s, uint64_t t, const char *kind, uint16_t port,
		      struct rp_field f)
{
	const struct sw_node *n = &r->sw[s];
	rp_log_fields(&r->log, t, kind, r->model->zone ? "switch" : NULL, n->name,
		      port_name(n, port), &f, 1);
}

static void drop(struct replay *r, unsigned s, unsigned reason, uint16_t port, uint64_t t,
		 struct rte_mbuf *m)
{
	struct sw_node *n = &r->sw[s];
	n->res->drops[reason]++;
	n->res->dropped++;
	r->res->dropped++;
	rp_frame_free(r, m);
	if (r->log.f)
		sw_event1(r, s, t, "drop", port,
			  (struct rp_field){.key = "reason", .s = rsw_drop_reason_name(reason)});
}

/* Watchdog lines from a switch's TM, which runs inside rp_sw_settle of the switch and time
 * there. */
void rp_sw_tm_log(void *arg, const char *line)
{
	struct replay *r = arg;
	if (!r->log.f)
		return;
	json_t *f = json_object();
	json_object_set_new(f, "message", json_string(line));
	rp_event(r, r->settle_t, "pfcwd", r->model->zone ? "switch" : NULL, r->sw[r->settle_sw].name,
		 NULL, f);
}

/* A packet the watchdog's drop action flushed from a storming queue of port, in the rp_sw_settle
 * running: a pfcwd_drop like those refused at admission, lossless if its PG is. */
void rp_sw_flushed(void *arg, uint16_t port, struct rte_mbuf *m)
{
	struct replay *r = arg;
	struct sw_node *n = &r->sw[r->settle_sw];
	const struct rsw_tm_tag *tg = rsw_tm_tag(m);
	if (n->tc->port[tg->in_port].pg[tg->pg].lossless)
		n->res->lossless_drops[RSW_DROP_PFCWD_DROP]++;
	drop(r, r->settle_sw, RSW_DROP_PFCWD_DROP, port, r->settle_t, m);
}

void rp_sw_lost(struct replay *r, unsigned s, uint16_t port, uint64_t t, uint32_t len)
{
	struct sw_node *n = &r->sw[s];
	n->port[port].rx_packets++;
	n->port[port].rx_bytes += len;
	n->res->received++;
	drop(r, s, RSW_DROP_NO_MBUF, port, t, NULL);
}

/* A frame arriving on port at t: the pipeline decides (pipeline.h), the switch counts, logs and
 * wakes the ports it touched. */
static inline void sw_arrive(struct replay *r, unsigned s, uint16_t port, uint64_t t,
			     struct rte_mbuf *mb, int entering)
{
	struct sw_node *n = &r->sw[s];
	struct rp_sw_port *ps = &n->port[port];
	uint32_t len = mb->pkt_len;
	ps->rx_packets++;
	ps->rx_bytes += len;
	n->res->received++;
	struct rsw_pkt_meta m;
	n->ictx.now_ns = t;
	struct rsw_pipeline p = {.fib = n->fib, .tm = n->tm, .tc = n->tc, .ictx = &n->ictx};
	uint8_t *frame = rte_pktmbuf_mtod(mb, uint8_t *);
	struct rsw_trace tr, *trp = NULL;
	if (unlikely(r->trace != NULL) && r->trace->match(r->trace->arg, frame, len))
		trp = &tr;
	struct rsw_verdict v = rsw_pipeline_frame(&p, port, frame, len, mb, &m, trp);
	if (trp)
		r->trace->write(r->trace->arg, t, n->name, port_name(n, port), n->fib, trp, &v);
	if (v.kind == RSW_VERDICT_MAC_CONTROL) {
		if (m.l2_kind == RSW_L2_PFC)
			n->res->port[port].pfc_rx_frames++;
		else
			n->res->port[port].pause_rx_frames++;
		rsw_tm_pause_rx(n->tm, n->tc, port, &m, t, t); /* arrivals are exact */
		if (r->log.f)
			rp_event_pfc(r, t, m.l2_kind == RSW_L2_PFC ? "pfc_rx" : "pause_rx",
				     r->model->zone ? "switch" : NULL, n->name, port_name(n, port),
				     m.l2_kind == RSW_L2_PFC ? m.pfc_class_enable : 0xFF, m.pfc_time);
		n->res->consumed++;
		r->res->consumed++;
		rp_frame_free(r, mb);
		rp_ports_add(&n->dirty_tx, port);   /* its queues paused or resumed */
		rp_ports_add(&n->dirty_ctrl, port); /* the watchdog watches them */
		return;
	}
	if (entering && v.stage != RSW_STAGE_PARSE) {
		/* a data frame the parser took: its flow enters the network */
		uint32_t fi = m.l3 != RSW_L3_NONE ? rp_flow_index(r, &m) : NO_FLOW;
		*frame_flow(r, mb) = fi;
		rp_flow_enter(r, fi, t, len);
	}
	if (v.kind != RSW_VERDICT_ENQUEUED) {
		/* no CPU here (pipeline.punt off): every frame not enqueued is a drop */
		if (v.lossless)
			n->res->lossless_drops[v.drop]++;
		drop(r, s, v.drop, v.stage == RSW_STAGE_TM ? v.port : port, t, mb);
		return;
	}
	rp_ports_add(&n->dirty_tx, v.port);
	if (r->read_ahead && n->ictx.cache) {
		const struct rsw_tm_tag *tg = rsw_tm_tag(mb);
		n->port[port].rx_hint = (struct rp_rx_hint){.fc_slot = n->ictx.cache->last_slot,
							    .nexthop = m.nexthop, .egress = v.port,
							    .queue = tg->queue, .pg = tg->pg};
		rp_flow_fc_seen(r, mb, n->ictx.cache->last_slot);
	}
	if (rsw_tm_pfc_may_act(n->tm, n->tc, port, rsw_tm_tag(mb)->pg))
		rp_ports_add(&n->dirty_ctrl, port); /* its PG grew past XOFF */
}

/* When port p can next send: its wire frees, or a pause ends. */
static uint64_t next_tx(const struct sw_node *n, uint16_t p, uint64_t t)
{
	/* a question, not a use: a port never used has nothing queued and stays unmade (a fault
	 * asks this of every port of the switch) */
	const struct rsw_tm_port *tp = rsw_tm_port_read(n->tm, p);
	uint64_t next = NEVER; /* the earliest a non-empty queue may send */
	/* nothing paused after latest_until_ns (the port's first line): the pauses' own line is
	 * read only while some pause may last */
	int paused = tp->pause.latest_until_ns > t;
	for (unsigned bits = rsw_tm_maybe_queued(n->tm, p); bits; bits &= bits - 1) {
		unsigned q = (unsigned)__builtin_ctz(bits);
		if (rsw_tm_queue_bytes(n->tm, p, q)) {
			uint64_t u = paused ? tp->pause.until_ns[q] : 0;
			uint64_t at = u > t ? u : t;
			next = at < next ? at : next;
		}
	}
	if (next == NEVER)
		return NEVER;
	uint64_t free_ns = rsw_shaper_free_ns(&tp->shaper);
	return free_ns > t ? free_ns : next;
}

static void sw_service(struct replay *r, unsigned s, uint16_t p, uint64_t t)
{
	struct sw_node *n = &r->sw[s];
	struct rte_mbuf *m;
	rp_ports_add(&n->dirty_tx, p);
	if (rsw_tm_dequeue(n->tm, n->tc, p, t, &m, 1) != 1) {
		rp_ports_add(&n->stalled, p); /* never spin on a port that cannot send now */
		return;
	}
	uint32_t len = m->pkt_len;
	if (n->capturing) { /* out[] is there only when some capture is kept */
		const struct rp_rest *x = rp_mbuf_rest(&r->mem, m);
		rp_write(&n->out[p], t, rte_pktmbuf_mtod(m, uint8_t *), m->data_len,
			 x ? x->rest : NULL, len);
	}
	if (r->log.f && rsw_tm_tag(m)->marked) {
		sw_event1(r, s, t, "ecn_mark", p,
			  (struct rp_field){.key = "queue", .u = rsw_tm_tag(m)->queue});
	}
	n->port[p].tx_packets++;
	n->port[p].tx_bytes += len;
	n->res->transmitted++;
	if (t > r->res->end_ns)
		r->res->end_ns = t;
	if (n->port[p].tx_link >= 0) {
		rp_link_send(r, n->port[p].tx_link, t, m);
		return;
	}
	const struct rsw_tm_port_cfg *pc = &n->tc->port[p];
	rp_flow_leave(r, *frame_flow(r, m),
		      t + rsw_frame_ns(len, pc->unshaped ? 0 : n->fib->ports[p].speed_mbps));
	r->res->left++;
	rp_frame_free(r, m);
}

/* Port p at t: the watchdog, and the PFC frame it owes its peer (XOFF, refresh or XON), which
 * starts as soon as the wire is free. */
static void control(struct replay *r, unsigned s, uint16_t p, uint64_t t)
{
	struct sw_node *n = &r->sw[s];
	struct rsw_tm_port *tp = rsw_tm_port_use(n->tm, p);
	uint8_t enable;
	uint16_t times[8];
	if (rsw_tm_watchdog(n->tm, n->tc, p, t)) {
		rp_ports_add(&n->dirty_tx, p);
		rp_deadlock_arm(r); /* a flush may have broken a cycle */
	}
	if (rsw_tm_pfc_due(n->tm, n->tc, p, t, &enable, times)) {
		uint8_t f[RSW_PFC_FRAME_LEN];
		unsigned len = rsw_pfc_build(f, n->fib->ports[p].mac, enable, times);
		uint64_t start = rsw_shaper_free_ns(&tp->shaper);
		if (start < t)
			start = t;
		rsw_shaper_send(&tp->shaper, t, len);
		if (n->capturing)
			rp_write(&n->out[p], start, f, len, NULL, len);
		if (r->log.f)
			rp_event_pfc(r, start, "pfc_tx", r->model->zone ? "switch" : NULL, n->name,
				     port_name(n, p), enable, times);
		n->res->port[p].pfc_tx_frames++;
		r->res->generated++;
		rp_deadlock_arm(r);
		if (n->port[p].tx_link >= 0) {
			struct rte_mbuf *m = rp_mbuf(&r->mem, f, len, len, NO_FLOW, 0);
			if (m)
				rp_link_send(r, n->port[p].tx_link, start, m);
			else
				rp_link_lost(r, n->port[p].tx_link, start, len);
		}
		rp_ports_add(&n->dirty_tx, p);
	}
	if (tp->xoff_pgs)
		rp_ports_add(&n->xoff_ports, p);
	else
		rp_ports_del(&n->xoff_ports, p);
	uint64_t next = rsw_tm_ctrl_next(n->tm, n->tc, p, t);
	uint32_t id = r->id_ctrl + s * RSW_MAX_PORTS + p;
	if (next == NEVER)
		rsw_event_cancel(&r->q, id);
	else
		rp_schedule(r, id, next > t ? next : t + 1);
}

/* After an event at switch s: PFC decisions for the ports whose PGs changed (and every port with
 * an XOFF in force, since the pool's shared use moves their XON point), then new wake-ups for
 * the ports whose queues, pauses or wire changed. */
void rp_sw_settle(struct replay *r, unsigned s, uint64_t t)
{
	struct sw_node *n = &r->sw[s];
	struct rp_ports ctrl = n->dirty_ctrl;
	rp_ports_union(&ctrl, &n->xoff_ports);
	r->settle_sw = s;
	r->settle_t = t;
	rp_ports_clear(&n->dirty_ctrl);
	/* each set in port order, from copies: what control adds to dirty_tx is in tx below */
	for (uint64_t a = ctrl.any; a; a &= a - 1) {
		unsigned i = (unsigned)__builtin_ctzll(a);
		for (uint64_t w = ctrl.w[i]; w; w &= w - 1)
			control(r, s, (uint16_t)(i * 64 + (unsigned)__builtin_ctzll(w)), t);
	}
	struct rp_ports tx = n->dirty_tx;
	rp_ports_clear(&n->dirty_tx);
	for (uint64_t a = tx.any; a; a &= a - 1) {
		unsigned i = (unsigned)__builtin_ctzll(a);
		for (uint64_t w = tx.w[i]; w; w &= w - 1) {
			unsigned p = i * 64 + (unsigned)__builtin_ctzll(w);
			uint64_t next = next_tx(n, (uint16_t)p, t);
			if (next == t && rp_ports_has(&n->stalled, p))
				next = t + 1;
			uint32_t id = r->id_port + s * RSW_MAX_PORTS + p;
			if (next == NEVER)
				rsw_event_cancel(&r->q, id);
			else
				rp_schedule(r, id, next);
		}
	}
	rp_ports_clear(&n->stalled);
}

/* Queue-depth samples of every non-empty queue of switch s at t (with log, else: is one
 * non-empty?). Each line is numbered by its queue's place in the zone (a zone's 1,024 switches
 * of 256 ports: 2^21 queues), so that the samples parts of a zone write merge in one run's
 * order (replay_part.h). */
static int sw_sample(struct replay *r, unsigned s, uint64_t t, int log)
{
	const struct sw_node *n = &r->sw[s];
	for (uint16_t p = 0; p < n->fib->n_ports; p++)
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			uint64_t b = rsw_tm_queue_bytes(n->tm, p, q);
			if (!b)
				continue;
			if (!log)
				return 1;
			json_t *f = json_object();
			json_object_set_new(f, "queue", json_integer(q));
			json_object_set_new(f, "bytes", json_integer((json_int_t)b));
			rp_log_number(&r->log, ((uint32_t)s * RSW_MAX_PORTS + p) * RSW_TM_QUEUES + q);
			sw_event(r, s, t, "queue_depth", p, f);
		}
	return 0;
}

/* ---- the engine's switch ops (replay_engine.h) ---- */

void rp_sw_rx(struct replay *r, unsigned s, uint16_t port, uint64_t t, struct rte_mbuf *m)
{
	sw_arrive(r, s, port, t, m, 0);
	rp_sw_settle(r, s, t);
}

void rp_sw_input(struct replay *r, unsigned s, uint16_t port, uint64_t t, struct rte_mbuf *m,
		 uint32_t len)
{
	if (m)
		sw_arrive(r, s, port, t, m, 1);
	else
		rp_sw_lost(r, s, port, t, len);
	rp_sw_settle(r, s, t);
}

void rp_sw_tx(struct replay *r, unsigned s, uint16_t port, uint64_t t)
{
	sw_service(r, s, port, t);
	rp_sw_settle(r, s, t);
}

void rp_sw_ctrl(struct replay *r, unsigned s, uint16_t port, uint64_t t)
{
	rp_ports_add(&r->sw[s].dirty_ctrl, port);
	rp_sw_settle(r, s, t);
}

/* The lines of a switch's node every event of it reads (ahead of its pointers). */
static void node_ahead(const struct sw_node *n)
{
	for (unsigned k = 0; k < offsetof(struct sw_node, name); k += 64)
		__builtin_prefetch((const char *)n + k);
}

/* What the TM's admission and sending read of the whole switch: its pools. */
static void tm_ahead(const struct sw_node *n)
{
	__builtin_prefetch(n->tm);
	__builtin_prefetch((const char *)n->tm + 64);
	__builtin_prefetch(n->fib);
}

void rp_sw_rx_ahead(const struct replay *r, unsigned s, uint16_t port, unsigned stage)
{
	const struct sw_node *n = &r->sw[s];
	if (stage == 2) {
		node_ahead(n);
		__builtin_prefetch(&n->port[port].rx_hint);
		return;
	}
	if (stage == 0) { /* from the tables' first line, asked for a stage ago: the classifier's
			   * first rule, the next hop whose MACs the frame is likely to get */
		if (!n->fib)
			return;
		if (n->fib->n_cls)
			__builtin_prefetch(n->fib->cls);
		if (n->port[port].rx_hint.egress != UINT16_MAX) /* (a prefetch never faults) */
			__builtin_prefetch((const char *)n->fib->nh +
					   (size_t)n->port[port].rx_hint.nexthop * sizeof(*n->fib->nh));
		return;
	}
	if (!n->fib || !n->tm)
		return;
	tm_ahead(n);
	__builtin_prefetch(rsw_tm_port_read(n->tm, port));
	/* where the port's last frame went: its flow's cache entry and egress queue */
	const struct rp_rx_hint *h = &n->port[port].rx_hint;
	if (h->egress == UINT16_MAX || !n->ictx.cache)
		return;
	rsw_flow_cache_prefetch(n->ictx.cache, h->fc_slot);
	rsw_tm_prefetch_at(n->tm, n->tc, h->egress, h->queue, port, h->pg);
	__builtin_prefetch(rsw_tm_port_read(n->tm, h->egress));
}

void rp_sw_tx_ahead(const struct replay *r, unsigned s, uint16_t port, unsigned stage)
{
	const struct sw_node *n = &r->sw[s];
	if (stage == 3) {
		node_ahead(n);
		return;
	}
	if (!n->fib || !n->tm)
		return;
	const struct rsw_tm_port *tp = rsw_tm_port_read(n->tm, port);
	if (stage == 2) {
		__builtin_prefetch(tp);
		__builtin_prefetch(&tp->sched);
		__builtin_prefetch(&n->port[port].tx_link);
		tm_ahead(n);
		return;
	}
	if (stage == 1) {
		if (n->port[port].tx_link >= 0)
			__builtin_prefetch(&r->link[n->port[port].tx_link]);
	}
}

void rp_sw_fold(struct replay *r, unsigned s)
{
	struct sw_node *n = &r->sw[s];
	for (uint16_t p = 0; p < n->fib->n_ports; p++) {
		struct rsw_replay_port_stats *ps = &n->res->port[p];
		ps->rx_packets += n->port[p].rx_packets;
		ps->rx_bytes += n->port[p].rx_bytes;
		ps->tx_packets += n->port[p].tx_packets;
		ps->tx_bytes += n->port[p].tx_bytes;
		n->port[p].rx_packets = n->port[p].rx_bytes = 0;
		n->port[p].tx_packets = n->port[p].tx_bytes = 0;
	}
}

void rp_sw_sample(struct replay *r, uint64_t from, uint64_t to, uint64_t step)
{
	/* nothing happens between wake-ups: every period start from `from` finds the same queues,
	 * and when all are empty there is nothing to write for any of them (looked at first only
	 * when there are several periods to skip) */
	unsigned s = 0;
	while (to > from && s < r->model->n_sw && !(rp_sw_here(r, s) && sw_sample(r, s, from, 0)))
		s++;
	if (s == r->model->n_sw)
		return;
	for (uint64_t t = from; t <= to; t += step) {
		rp_log_samples(&r->log, t);
		for (s = 0; s < r->model->n_sw; s++)
			if (rp_sw_here(r, s))
				sw_sample(r, s, t, 1);
	}
}
