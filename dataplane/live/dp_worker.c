/* One worker: RX burst → parse → ingress tables → rewrite → egress queue of the chosen port;
 * then drains the egress queues of its own ports to TX. Burst-at-a-time like l3fwd; the tables
 * are read under RCU and a quiescent state is reported after every round. */
#include <rte_ethdev.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>

#include "dataplane/pkt/icrc.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/tables/ingress.h"
#include "dp_worker.h"

static struct rsw_dp *g_dp;

void rsw_dp_worker_bind(struct rsw_dp *dp)
{
	g_dp = dp;
}

static inline void drop(struct rsw_dp_counters *c, struct rte_mbuf *m, unsigned reason)
{
	c->drops[reason]++;
	rte_pktmbuf_free(m);
}

/* Hands pending packets to the port; what it does not take waits for the next round. */
static void tx_flush(struct rsw_dp_port *p, struct rsw_dp_counters *c, uint16_t port)
{
	if (p->n_pending == 0)
		return;
	uint16_t sent = rte_eth_tx_burst(p->port_id, 0, p->pending, p->n_pending);
	for (uint16_t i = 0; i < sent; i++)
		c->tx_bytes[port] += p->pending[i]->pkt_len;
	c->tx_pkts[port] += sent;
	for (uint16_t i = sent; i < p->n_pending; i++)
		p->pending[i - sent] = p->pending[i];
	p->n_pending = (uint16_t)(p->n_pending - sent);
}

/* Packets for a port this worker owns: straight to its TX buffer. */
static void to_own_port(struct rsw_dp_port *p, struct rsw_dp_counters *c, uint16_t port,
			struct rte_mbuf **pkts, unsigned n)
{
	const unsigned cap = RTE_DIM(p->pending);
	if (p->n_pending + n > cap)
		tx_flush(p, c, port);
	unsigned room = cap - p->n_pending, k = n < room ? n : room;
	for (unsigned j = 0; j < k; j++)
		p->pending[p->n_pending++] = pkts[j];
	for (unsigned j = k; j < n; j++)
		drop(c, pkts[j], RSW_DROP_TX_FULL);
}

static void rx_port(struct rsw_dp *dp, struct rsw_dp_worker *w, uint16_t in_port,
		    const struct rsw_fib *fib)
{
	struct rte_mbuf *pkts[RSW_DP_BURST];
	struct rte_mbuf *out[RSW_MAX_PORTS][RSW_DP_BURST];
	uint16_t n_out[RSW_MAX_PORTS];
	uint64_t out_mask = 0;
	struct rsw_dp_counters *c = w->cnt;

	uint16_t n = rte_eth_rx_burst(dp->ports[in_port].port_id, 0, pkts, RSW_DP_BURST);
	if (n == 0)
		return;
	c->rx_pkts[in_port] += n;

	/* Stage by stage over the burst, as l3fwd does: the table lookups of one stage are
	 * independent across packets, so their cache misses overlap instead of queueing. */
	struct rsw_pkt_meta meta[RSW_DP_BURST];
	uint16_t keep[RSW_DP_BURST], n_keep = 0;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];
		struct rsw_pkt_meta *m = &meta[i];
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		c->rx_bytes[in_port] += mb->pkt_len;
		if (mb->nb_segs > 1 && rte_pktmbuf_linearize(mb) < 0) {
			drop(c, mb, RSW_DROP_RX_MULTISEG);
			continue;
		}
		uint8_t *data = rte_pktmbuf_mtod(mb, uint8_t *);
		if (rsw_parse(data, mb->data_len, m)) {
			drop(c, mb, m->drop);
			continue;
		}
		if (m->l2_kind != RSW_L2_DATA) {
			/* MAC control frames end here; the traffic manager honours them */
			if (m->l2_kind == RSW_L2_PFC)
				c->pfc_rx[in_port]++;
			else
				c->pause_rx[in_port]++;
			rte_pktmbuf_free(mb);
			continue;
		}
		if (dp->verify_icrc && (m->flags & RSW_META_F_ROCE)) {
			if (rsw_icrc_check(data, m) == 1)
				c->icrc_ok[in_port]++;
			else
				c->icrc_bad[in_port]++;
		}
		m->in_port = in_port;
		keep[n_keep++] = i;
	}
	for (uint16_t k = 0; k < n_keep; k++) {
		uint16_t i = keep[k];
		rsw_ingress(fib, rte_pktmbuf_mtod(pkts[i], uint8_t *), &meta[i], &w->rnd);
	}
	for (uint16_t k = 0; k < n_keep; k++) {
		uint16_t i = keep[k];
		struct rte_mbuf *mb = pkts[i];
		struct rsw_pkt_meta *m = &meta[i];
		if (m->drop) {
			drop(c, mb, m->drop);
			continue;
		}
		rsw_egress_rewrite(fib, rte_pktmbuf_mtod(mb, uint8_t *), m);
		if (m->via_group && m->group < RSW_DP_COUNTED_GROUPS)
			c->ecmp[m->group][m->member]++;
		uint16_t e = m->egress_port;
		if (!(out_mask & (1ull << e))) {
			out_mask |= 1ull << e;
			n_out[e] = 0;
		}
		out[e][n_out[e]++] = mb;
	}
	while (out_mask) {
		unsigned e = (unsigned)__builtin_ctzll(out_mask);
		out_mask &= out_mask - 1;
		struct rsw_dp_port *p = &dp->ports[e];
		if (p->owner == w->index) {
			to_own_port(p, c, (uint16_t)e, out[e], n_out[e]);
			continue;
		}
		unsigned k = rte_ring_mp_enqueue_burst(p->txq, (void **)out[e], n_out[e], NULL);
		for (unsigned j = k; j < n_out[e]; j++)
			drop(c, out[e][j], RSW_DROP_TX_FULL);
	}
}

static void tx_port(struct rsw_dp *dp, struct rsw_dp_worker *w, uint16_t port)
{
	struct rsw_dp_port *p = &dp->ports[port];
	const unsigned cap = RTE_DIM(p->pending);
	if (p->n_pending < cap && !rte_ring_empty(p->txq))
		p->n_pending += (uint16_t)rte_ring_sc_dequeue_burst(
			p->txq, (void **)&p->pending[p->n_pending], cap - p->n_pending, NULL);
	tx_flush(p, w->cnt, port);
}

int rsw_dp_worker_main(void *arg)
{
	struct rsw_dp_worker *w = arg;
	struct rsw_dp *dp = g_dp;
	uint16_t mine[RSW_MAX_PORTS], n_mine = 0;

	for (uint16_t i = 0; i < dp->n_ports; i++)
		if (dp->ports[i].owner == w->index)
			mine[n_mine++] = i;
	rte_rcu_qsbr_thread_register(dp->qsbr, w->index);
	rte_rcu_qsbr_thread_online(dp->qsbr, w->index);
	while (!dp->stop) {
		const struct rsw_fib *fib = rsw_switch_fib(dp->sw);
		for (uint16_t i = 0; i < n_mine; i++)
			rx_port(dp, w, mine[i], fib);
		for (uint16_t i = 0; i < n_mine; i++)
			tx_port(dp, w, mine[i]);
		rte_rcu_qsbr_quiescent(dp->qsbr, w->index);
	}
	/* flush what the egress queues still hold while the ports can take it */
	for (int round = 0; round < 1000; round++) {
		unsigned left = 0;
		for (uint16_t i = 0; i < n_mine; i++) {
			tx_port(dp, w, mine[i]);
			left += dp->ports[mine[i]].n_pending + rte_ring_count(dp->ports[mine[i]].txq);
		}
		if (!left)
			break;
	}
	rte_rcu_qsbr_thread_offline(dp->qsbr, w->index);
	rte_rcu_qsbr_thread_unregister(dp->qsbr, w->index);
	return 0;
}
