/* One worker: RX burst of each RX queue it polls → parse → ingress tables → rewrite → traffic
 * manager (admission into the VOQ of the egress port and traffic class); then, for each port it
 * owns (queue 0's worker), the TM's egress side: watchdog, PFC generation, scheduler and shaper,
 * TX. Burst-at-a-time like l3fwd; the tables are
 * read under RCU and a quiescent state is reported after every round. The ports a worker owns
 * may belong to several switches of a zone; each port is a DPDK device, an in-memory link to
 * another switch (dp_link.h) or nothing. */
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "dataplane/pipeline/pipeline.h"
#include "dataplane/tm/counter.h"
#include "dataplane/tm/pfc.h"
#include "dataplane/tm/tsan.h"
#include "dp_link.h"
#include "dp_neigh.h"
#include "dp_trace.h"
#include "dp_worker.h"

static inline void drop(struct rsw_dp_counters *c, struct rte_mbuf *m, unsigned reason)
{
	RSW_CNT_ADD(c->drops[reason], 1);
	rsw_mbuf_free(m);
}

/* Hands a frame to the main lcore (ARP, ND, to the switch's addresses): consumed here. */
static inline void punt(struct rsw_dp *dp, struct rsw_dp_counters *c, struct rte_mbuf *m,
			uint16_t in_port)
{
	m->port = in_port;
	RSW_TSAN_RELEASE(dp->neigh->punt); /* for rsw_dp_neigh_poll (tsan.h) */
	if (rte_ring_mp_enqueue(dp->neigh->punt, m) != 0)
		drop(c, m, RSW_DROP_PUNT_QUEUE_FULL);
	else
		RSW_CNT_ADD(c->punted[in_port], 1);
}

/* Frames to the port's far end: the device, the link, or nowhere. kind: data, the main lcore's
 * frames or PFC (a link keeps room for the last two). */
static inline uint16_t port_tx(struct rsw_dp_port *p, struct rte_mbuf **m, uint16_t n,
			       uint64_t now, enum rsw_dp_link_kind kind)
{
	switch (p->kind) {
	case RSW_DP_PORT_ETH:
		rsw_mbufs_out(m, n);
		return rte_eth_tx_burst(p->port_id, 0, m, n);
	case RSW_DP_PORT_LINK:
		return rsw_dp_link_tx(p->tx_link, m, n, now, kind);
	default:
		rsw_mbufs_out(m, n);
		rte_pktmbuf_free_bulk(m, n);
		return n;
	}
}

static inline uint16_t port_rx(struct rsw_dp_port *p, uint16_t queue, struct rte_mbuf **m,
			       uint64_t now)
{
	switch (p->kind) {
	case RSW_DP_PORT_ETH: {
		uint16_t n = rte_eth_rx_burst(p->port_id, queue, m, RSW_DP_BURST);
		rsw_mbufs_in(m, n);
		return n;
	}
	case RSW_DP_PORT_LINK:
		return rsw_dp_link_rx(p->rx_link, m, RSW_DP_BURST, now);
	default:
		return 0;
	}
}

/* Hands pending packets to the port; what it does not take waits for the next round. */
static void tx_flush(struct rsw_dp_port *p, struct rsw_dp_counters *c, uint16_t port,
		     uint64_t now)
{
	if (p->n_pending == 0)
		return;
	if (p->max_frame) {
		/* af_xdp copies a frame from another pool into one of its page-sized buffers
		 * without checking its length: a longer frame must not reach it */
		uint16_t k = 0;
		for (uint16_t i = 0; i < p->n_pending; i++) {
			if (p->pending[i]->pkt_len > p->max_frame)
				drop(c, p->pending[i], RSW_DROP_TX_TOO_BIG);
			else
				p->pending[k++] = p->pending[i];
		}
		RSW_CNT_SET(p->n_pending, k);
	}
	uint16_t sent = port_tx(p, p->pending, p->n_pending, now, RSW_DP_LINK_TX_DATA);
	uint64_t bytes = 0;
	for (uint16_t i = 0; i < sent; i++)
		bytes += p->pending[i]->pkt_len;
	RSW_CNT_ADD(c->tx_bytes[port], bytes);
	RSW_CNT_ADD(c->tx_pkts[port], sent);
	for (uint16_t i = sent; i < p->n_pending; i++)
		p->pending[i - sent] = p->pending[i];
	RSW_CNT_SET(p->n_pending, (uint16_t)(p->n_pending - sent));
}

/* A PFC or PAUSE frame received on in_port: the port's owner applies it to the port's pause
 * state (which only it touches); a frame another worker's RX queue got is handed to it. */
static void pause_rx(struct rsw_dp *dp, struct rsw_dp_worker *w, const struct rsw_fib *fib,
		     uint16_t in_port, const struct rsw_pkt_meta *m, uint64_t since, uint64_t now)
{
	struct rsw_dp_port *p = &dp->ports[in_port];
	if (!p->pause_in || p->owner == w->index) {
		rsw_tm_pause_rx(dp->tm, &fib->tm, in_port, m, since, now);
		return;
	}
	struct rsw_dp_pause_msg msg = {.since_ns = since, .now_ns = now, .l2_kind = m->l2_kind,
				       .class_enable = m->pfc_class_enable};
	memcpy(msg.time, m->pfc_time, sizeof(msg.time));
	if (rte_ring_mp_enqueue_elem(p->pause_in, &msg, sizeof(msg)) != 0)
		RSW_CNT_ADD(w->cnt->pause_lost[in_port], 1);
}

/* The owner applies the PFC/PAUSE frames other workers received on its port, in their order. */
static void pause_take(struct rsw_dp *dp, const struct rsw_fib *fib, uint16_t port)
{
	struct rsw_dp_pause_msg msg;
	while (rte_ring_sc_dequeue_elem(dp->ports[port].pause_in, &msg, sizeof(msg)) == 0) {
		struct rsw_pkt_meta m;
		memset(&m, 0, sizeof(m));
		m.l2_kind = msg.l2_kind;
		m.pfc_class_enable = msg.class_enable;
		memcpy(m.pfc_time, msg.time, sizeof(msg.time));
		rsw_tm_pause_rx(dp->tm, &fib->tm, port, &m, msg.since_ns, msg.now_ns);
	}
}

/* A burst while `trace add` has frames left (dp_trace.h): frame by frame through the same
 * pipeline, the next ones traced into the worker's buffer. Returns the bytes received. */
static uint64_t traced_burst(const struct rsw_pipeline *p, struct rsw_dp *dp,
			     struct rsw_dp_trace *t, uint16_t in_port, struct rte_mbuf **pkts,
			     uint16_t n, struct rsw_pkt_meta meta[], struct rsw_verdict v[],
			     uint64_t now)
{
	uint64_t bytes = 0;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];
		bytes += mb->pkt_len;
		if (mb->nb_segs > 1 && rte_pktmbuf_linearize(mb) < 0) {
			v[i] = (struct rsw_verdict){.kind = RSW_VERDICT_DROP, .stage = RSW_STAGE_RX,
						    .drop = RSW_DROP_RX_MULTISEG, .icrc = -1};
			continue;
		}
		uint8_t *data = rte_pktmbuf_mtod(mb, uint8_t *);
		struct rsw_trace *tr = rsw_dp_trace_slot(t, dp, in_port, data, mb->data_len, now);
		v[i] = rsw_pipeline_frame(p, in_port, data, mb->data_len, mb, &meta[i], tr);
		if (tr)
			rsw_dp_trace_done(t, &v[i]);
	}
	return bytes;
}

/* One RX burst through the pipeline (pipeline.h); the worker keeps the port's counters, the
 * CPU's frames (punt, neighbour solicitations) and the pause frames' hand-off to the port owner. */
static uint16_t rx_port(struct rsw_dp *dp, struct rsw_dp_worker *w, struct rsw_dp_trace *t,
			uint16_t in_port, uint16_t queue, const struct rsw_fib *fib, uint64_t now)
{
	struct rte_mbuf *pkts[RSW_DP_BURST];
	struct rsw_dp_counters *c = w->cnt;

	uint64_t since = dp->ports[in_port].rx_polled_ns[queue];
	dp->ports[in_port].rx_polled_ns[queue] = now;
	uint16_t n = port_rx(&dp->ports[in_port], queue, pkts, now);
	if (n == 0)
		return 0;
	RSW_CNT_ADD(c->rx_pkts[in_port], n);

	_Static_assert(RSW_DP_BURST <= RSW_INGRESS_BURST_MAX, "a burst fits rsw_pipeline_burst");
	struct rsw_pkt_meta meta[RSW_DP_BURST];
	struct rsw_verdict v[RSW_DP_BURST];
	w->ictx.now_ns = now;
	struct rsw_pipeline p = {.fib = fib, .tm = dp->tm, .ictx = &w->ictx,
				 .punt = dp->neigh != NULL, .verify_icrc = dp->verify_icrc};
	RSW_CNT_ADD(c->rx_bytes[in_port],
		    __builtin_expect(t->left != 0, 0)
			    ? traced_burst(&p, dp, t, in_port, pkts, n, meta, v, now)
			    : rsw_pipeline_burst(&p, in_port, pkts, n, meta, v));

	/* the enqueued mbufs are the TM's now: only their metadata is read here */
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];
		const struct rsw_pkt_meta *m = &meta[i];
		if (v[i].icrc >= 0)
			RSW_CNT_ADD(*(v[i].icrc ? &c->icrc_ok[in_port] : &c->icrc_bad[in_port]), 1);
		switch (v[i].kind) {
		case RSW_VERDICT_ENQUEUED:
			if (m->via_group && m->group < RSW_DP_COUNTED_GROUPS)
				RSW_CNT_ADD(c->ecmp[m->group][m->member], 1);
			break;
		case RSW_VERDICT_PUNT:
			punt(dp, c, mb, in_port);
			break;
		case RSW_VERDICT_MAC_CONTROL:
			/* the traffic manager honours them, on the port owner's thread */
			if (m->l2_kind == RSW_L2_PFC)
				RSW_CNT_ADD(c->pfc_rx[in_port], 1);
			else
				RSW_CNT_ADD(c->pause_rx[in_port], 1);
			if (fib && in_port < fib->n_ports)
				pause_rx(dp, w, fib, in_port, m, since, now);
			rsw_mbuf_free(mb);
			break;
		default:
			if (v[i].drop == RSW_DROP_NEIGHBOR_MISS && dp->neigh) {
				/* the main lcore solicits it (rate-limited); this packet is lost */
				struct rsw_dp_miss miss = {.ip = fib->nh[m->nexthop].ip};
				rte_ring_mp_enqueue_elem(dp->neigh->miss, &miss, sizeof(miss));
			}
			if (v[i].lossless)
				RSW_CNT_ADD(c->lossless_drops[v[i].drop], 1);
			drop(c, mb, v[i].drop);
		}
	}
	return n;
}

/* A PFC frame out of port, ahead of its data: MAC control does not wait behind it. */
static void send_pfc(struct rsw_dp *dp, struct rsw_dp_counters *c, const struct rsw_fib *fib,
		     uint16_t port, uint8_t enable, const uint16_t time[8], uint64_t now)
{
	struct rte_mbuf *m = rsw_mbuf_alloc(dp->pool);
	uint8_t *d = m ? (uint8_t *)rte_pktmbuf_append(m, RSW_PFC_FRAME_LEN) : NULL;
	if (!d) {
		RSW_CNT_ADD(c->pfc_tx_failed[port], 1);
		rsw_mbuf_free(m);
		return;
	}
	rsw_pfc_build(d, fib->ports[port].mac, enable, time);
	if (port_tx(&dp->ports[port], &m, 1, now, RSW_DP_LINK_TX_PFC) == 1) {
		RSW_CNT_ADD(c->pfc_tx_frames[port], 1);
		rsw_shaper_send(&rsw_tm_port_use(dp->tm, port)->shaper, now, RSW_PFC_FRAME_LEN);
	} else {
		RSW_CNT_ADD(c->pfc_tx_failed[port], 1);
		rsw_mbuf_free(m);
	}
}

/* An injected PFC storm: the pause state gets what a peer sending XOFF (0xFFFF quanta) for the
 * storm's priorities at twice the rate that keeps them paused would cause. */
static void inject_storm(struct rsw_dp *dp, struct rsw_dp_worker *w, uint16_t port,
			 const struct rsw_fib *fib, uint64_t now)
{
	struct rsw_dp_port *p = &dp->ports[port];
	uint8_t storm = __atomic_load_n(&p->storm, __ATOMIC_ACQUIRE);
	if (!storm) {
		p->storm_next_ns = 0; /* a later storm starts afresh */
		return;
	}
	if (now < p->storm_next_ns)
		return;
	struct rsw_pkt_meta m;
	memset(&m, 0, sizeof(m));
	m.l2_kind = RSW_L2_PFC;
	m.pfc_class_enable = storm;
	for (unsigned i = 0; i < 8; i++)
		m.pfc_time[i] = storm >> i & 1 ? 0xFFFF : 0;
	/* the peer sent it when it was due, however late this worker looks */
	rsw_tm_pause_rx(dp->tm, &fib->tm, port, &m, p->storm_next_ns ? p->storm_next_ns : now, now);
	RSW_CNT_ADD(w->cnt->pfc_injected[port], 1);
	uint32_t speed = fib->ports[port].speed_mbps ? fib->ports[port].speed_mbps : 100000;
	/* a storming peer keeps sending, and the watchdog wants PFC within its detection time:
	 * half a pause time alone is 16.8 s at 1 Mb/s, which hid a storm that long */
	uint64_t gap = rsw_pause_ns(0xFFFF, speed) / 2;
	p->storm_next_ns = now + (gap < RSW_DP_STORM_GAP_NS ? gap : RSW_DP_STORM_GAP_NS);
}

/* Frames the main lcore built for this port (ARP/ND answers and requests, ping replies), sent
 * like PFC frames: ahead of the queues, counted apart from forwarded traffic. */
static uint16_t send_ctl(struct rsw_dp *dp, struct rsw_dp_counters *c, uint16_t port, uint64_t now)
{
	struct rte_mbuf *m[8];
	unsigned n = rte_ring_sc_dequeue_burst(dp->neigh->inject[port], (void **)m, RTE_DIM(m),
					       NULL);
	if (!n)
		return 0;
	uint16_t sent = port_tx(&dp->ports[port], m, (uint16_t)n, now, RSW_DP_LINK_TX_CTL);
	RSW_CNT_ADD(c->ctl_tx[port], sent);
	RSW_CNT_ADD(c->ctl_tx_failed[port], n - sent);
	if (sent < n) {
		rsw_mbufs_out(&m[sent], n - sent);
		rte_pktmbuf_free_bulk(&m[sent], n - sent);
	}
	return sent;
}

/* Returns how many frames left the port (work done, for the worker's idle decision). */
static uint16_t tx_port(struct rsw_dp *dp, struct rsw_dp_worker *w, uint16_t port,
			const struct rsw_fib *fib, uint64_t now)
{
	struct rsw_dp_port *p = &dp->ports[port];
	const unsigned cap = RTE_DIM(p->pending);
	uint64_t before = w->cnt->tx_pkts[port];
	if (fib && port < fib->n_ports) {
		uint8_t enable;
		uint16_t time[8];
		if (p->pause_in)
			pause_take(dp, fib, port);
		inject_storm(dp, w, port, fib, now);
		rsw_tm_watchdog(dp->tm, &fib->tm, port, now);
		if (rsw_tm_pfc_due(dp->tm, &fib->tm, port, now, &enable, time))
			send_pfc(dp, w->cnt, fib, port, enable, time, now);
		if (p->n_pending < cap)
			RSW_CNT_SET(p->n_pending, (uint16_t)(p->n_pending +
				rsw_tm_dequeue(dp->tm, &fib->tm, port, now, &p->pending[p->n_pending],
					       cap - p->n_pending)));
	}
	tx_flush(p, w->cnt, port, now);
	uint16_t ctl = dp->neigh ? send_ctl(dp, w->cnt, port, now) : 0;
	return (uint16_t)(w->cnt->tx_pkts[port] - before + ctl);
}

/* What the worker still holds for one of its ports: in its queues, its pending buffer. */
static uint64_t held(struct rsw_dp *dp, uint16_t port)
{
	uint64_t left = dp->ports[port].n_pending;
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
		left += rsw_tm_queue_bytes(dp->tm, port, q);
	return left;
}

/* True if one of the worker's ports has a frame to send, or one on its way in over an
 * in-memory link: time will give it work, so it must not sleep. */
static int holding(const struct rsw_dp_lcore *lc)
{
	for (unsigned i = 0; i < lc->n_items; i++) {
		struct rsw_dp *dp = lc->items[i].dp;
		const struct rsw_dp_port *p = &dp->ports[lc->items[i].port];
		if (lc->items[i].tx && held(dp, lc->items[i].port))
			return 1;
		if (p->kind == RSW_DP_PORT_LINK && rsw_dp_link_in_flight(p->rx_link))
			return 1;
	}
	return 0;
}

/* The back-off between rounds that did nothing: pause, then sleep ever longer (up to the
 * maximum) while nothing is held. The kernel's timer slack (50 us by default) would stretch
 * every sleep: the worker asked for 1 ns of slack when it started. */
static void back_off(struct rsw_dp_lcore *lc, unsigned *idle, uint64_t *sleep_ns)
{
	if (++*idle < RSW_DP_IDLE_SPIN || !lc->idle_max_ns || holding(lc)) {
		rte_pause();
		return;
	}
	struct timespec ts = {0, (long)*sleep_ns}, t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nanosleep(&ts, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__atomic_store_n(&lc->sleeps, lc->sleeps + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&lc->slept_ns, lc->slept_ns + (uint64_t)((t1.tv_sec - t0.tv_sec) *
			 1000000000ll + t1.tv_nsec - t0.tv_nsec), __ATOMIC_RELAXED);
	*sleep_ns = *sleep_ns * 2 < lc->idle_max_ns ? *sleep_ns * 2 : lc->idle_max_ns;
}

int rsw_dp_worker_main(void *arg)
{
	struct rsw_dp_lcore *lc = arg;
	const unsigned wi = lc->index;

	unsigned idle = 0;
	uint64_t sleep_ns = RSW_DP_IDLE_MIN_NS;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	rte_rcu_qsbr_thread_register(lc->qsbr, wi);
	rte_rcu_qsbr_thread_online(lc->qsbr, wi);
	while (!__atomic_load_n(lc->stop, __ATOMIC_RELAXED)) {
		unsigned work = 0;
		for (unsigned i = 0; i < lc->n_items; i++) {
			struct rsw_dp *dp = lc->items[i].dp;
			work += rx_port(dp, &dp->workers[wi], lc->trace, lc->items[i].port,
					lc->items[i].queue, rsw_switch_fib(dp->sw),
					rsw_clock_now(&dp->clock));
		}
		for (unsigned i = 0; i < lc->n_items; i++) {
			struct rsw_dp *dp = lc->items[i].dp;
			if (!lc->items[i].tx)
				continue;
			work += tx_port(dp, &dp->workers[wi], lc->items[i].port,
					rsw_switch_fib(dp->sw), rsw_clock_now(&dp->clock));
		}
		rte_rcu_qsbr_quiescent(lc->qsbr, wi);
		rsw_dp_trace_poll(lc->trace);
		__atomic_store_n(&lc->rounds, lc->rounds + 1, __ATOMIC_RELAXED);
		if (work) {
			idle = 0;
			sleep_ns = RSW_DP_IDLE_MIN_NS;
		} else {
			back_off(lc, &idle, &sleep_ns);
		}
	}
	/* Drain what the queues hold, at the ports' speeds, for up to a second. What a paused
	 * queue or a refusing device keeps counts as queued. */
	uint64_t until = lc->n_items ? rsw_clock_now(&lc->items[0].dp->clock) + 1000000000ull : 0;
	for (;;) {
		uint64_t now = 0, left = 0;
		for (unsigned i = 0; i < lc->n_items; i++) {
			struct rsw_dp *dp = lc->items[i].dp;
			uint16_t port = lc->items[i].port;
			if (!lc->items[i].tx)
				continue;
			now = rsw_clock_now(&dp->clock);
			tx_port(dp, &dp->workers[wi], port, rsw_switch_fib(dp->sw), now);
			left += held(dp, port);
		}
		if (!left || now >= until)
			break;
		rte_rcu_qsbr_quiescent(lc->qsbr, wi);
	}
	rte_rcu_qsbr_thread_offline(lc->qsbr, wi);
	rte_rcu_qsbr_thread_unregister(lc->qsbr, wi);
	RSW_TSAN_RELEASE(lc); /* for rsw_dp_zone_wait */
	return 0;
}
