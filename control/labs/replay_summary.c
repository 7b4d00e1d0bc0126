#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/tables/ars_stats.h"
#include "dataplane/tables/table_types.h"
#include "dataplane/tm/shaper.h"
#include "dataplane/tm/tm.h"
#include "replay_summary.h"

#define J(v) json_integer((json_int_t)(v))

/* A queue's watchdog counters with SONiC's names (rsw_pfcwd_stat_names) and its PFC_WD_STATUS
 * at the end, once the watchdog did something there: as `show pfcwd stats` lists only those. */
static void pfcwd_json(json_t *x, const struct rsw_tm *tm, uint16_t p, unsigned q)
{
	uint64_t wd[RSW_PFCWD_STATS];
	rsw_tm_pfcwd_stats(tm, p, q, wd);
	if (!wd[RSW_PFCWD_STAT_DETECTED] && !wd[RSW_PFCWD_STAT_TX_DROPPED])
		return;
	for (unsigned i = 0; i < RSW_PFCWD_STATS; i++)
		json_object_set_new(x, rsw_pfcwd_stat_names[i], J(wd[i]));
	int storm = rsw_tm_port_read(tm, p)->cold->wd[q].storm;
	json_object_set_new(x, "PFC_WD_STATUS", json_string(storm ? "stormed" : "operational"));
}

/* SAI's names of a port's PFC counters, per priority: written once, not formatted per port */
#define PFC_NAMES(i) {"SAI_PORT_STAT_PFC_" #i "_TX_PKTS", "SAI_PORT_STAT_PFC_" #i "_RX_PKTS"}
static const char *const pfc_names[8][2] = {PFC_NAMES(0), PFC_NAMES(1), PFC_NAMES(2),
					    PFC_NAMES(3), PFC_NAMES(4), PFC_NAMES(5),
					    PFC_NAMES(6), PFC_NAMES(7)};

/* Every port of the zone (9,216 at 208 switches): keys set unchecked, each a literal in ASCII. */
#define SET json_object_set_new_nocheck
static json_t *ports_json(const struct rsw_fib *fib, const struct rsw_replay_switch_result *r)
{
	json_t *ports = json_array();
	for (uint16_t p = 0; p < fib->n_ports; p++) {
		const struct rsw_replay_port_stats *s = &r->port[p];
		const struct rsw_tm_port *tp = rsw_tm_port_read(r->tm, p);
		json_t *o = json_object(), *queues = json_array(), *pfc = json_object();
		SET(o, "name", json_string(fib->ports[p].name));
		SET(o, "speed", J(fib->tm.port[p].unshaped ? 0 : fib->ports[p].speed_mbps));
		SET(o, "rx_packets", J(s->rx_packets));
		SET(o, "rx_bytes", J(s->rx_bytes));
		SET(o, "tx_packets", J(s->tx_packets));
		SET(o, "tx_bytes", J(s->tx_bytes));
		for (unsigned i = 0; i < 8; i++) {
			SET(pfc, pfc_names[i][0], J(tp->cold->gen[i].tx_frames));
			SET(pfc, pfc_names[i][1], J(tp->pause.rx_frames[i]));
		}
		SET(o, "pfc", pfc);
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			json_t *x = json_object();
			SET(x, "queue", json_integer(q));
			if (fib->tm.pools.n_pools)
				SET(x, "pool", json_string(fib->tm.pools.name[fib->tm.port[p].queue[q].pool]));
			SET(x, "packets", J(tp->q[q].packets));
			SET(x, "max_depth_bytes", J(tp->q[q].use.peak));
			SET(x, "ecn_marked_packets", J(tp->cold->qd[q].ecn_marked_packets));
			SET(x, "dropped_packets", J(tp->cold->qd[q].dropped_packets));
			pfcwd_json(x, r->tm, p, q);
			json_array_append_new(queues, x);
		}
		SET(o, "queues", queues);
		json_array_append_new(ports, o);
	}
	return ports;
}
#undef SET

/* Each buffer pool with the most shared bytes it held: which pool a queue's or PG's bytes were
 * charged to is seen here, not only in the config. */
static json_t *pools_json(const struct rsw_fib *fib, const struct rsw_replay_switch_result *r)
{
	json_t *pools = json_array();
	for (unsigned i = 0; i < fib->tm.pools.n_pools; i++) {
		const struct rsw_buf_pool_cfg *pc = &fib->tm.pools.pool[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(fib->tm.pools.name[i]));
		json_object_set_new(o, "type", json_string(pc->type == RSW_POOL_INGRESS ? "ingress"
										: "egress"));
		json_object_set_new(o, "size", J(pc->size));
		json_object_set_new(o, "peak_bytes", J(r->tm->pool_peak[i]));
		if (pc->xoff) /* a shared headroom pool (docs/tm.md, "Buffer conventions") */
			json_object_set_new(o, "xoff", J(pc->xoff));
		json_array_append_new(pools, o);
	}
	return pools;
}

static json_t *drops_json(const uint64_t *drops)
{
	json_t *o = json_object();
	for (unsigned d = 1; d < RSW_DROP_COUNT; d++)
		if (drops[d])
			json_object_set_new(o, rsw_drop_reason_name(d), J(drops[d]));
	return o;
}

/* Lossless drops by reason, and whether the lossless invariant holds (rsw_tm_lossless_drop_allowed:
 * only headroom overflows and the watchdog's drop action). */
static void lossless_json(json_t *c, const uint64_t *lossless)
{
	int holds = 1;
	for (unsigned d = 1; d < RSW_DROP_COUNT; d++)
		if (lossless[d] && !rsw_tm_lossless_drop_allowed(d))
			holds = 0;
	json_object_set_new(c, "lossless_drops", drops_json(lossless));
	json_object_set_new(c, "lossless_holds", json_boolean(holds));
}

/* A switch's own check: received = transmitted + dropped + consumed + queued. */
static json_t *switch_conservation(const struct rsw_replay_switch_result *r)
{
	json_t *c = json_object();
	lossless_json(c, r->lossless_drops);
	json_object_set_new(c, "received", J(r->received));
	json_object_set_new(c, "transmitted", J(r->transmitted));
	json_object_set_new(c, "dropped", J(r->dropped));
	json_object_set_new(c, "consumed", J(r->consumed));
	json_object_set_new(c, "queued", J(r->queued));
	json_object_set_new(c, "holds", json_boolean(r->received == r->transmitted + r->dropped +
									 r->consumed + r->queued));
	return c;
}

static const char *end_name(const struct rsw_zone *z, const struct rsw_topo_end *e, char *buf,
			    size_t len);

/* The link directions the flow's frames were put on, in the order first used. */
static json_t *path_json(const struct rsw_zone *z, const struct rsw_replay_flow *f)
{
	json_t *path = json_array();
	for (uint32_t i = 0; z && i < f->n_hop; i++) {
		const struct rsw_topo_link *l = &z->link[f->hop[i].dir / 2];
		const struct rsw_topo_end *from = f->hop[i].dir % 2 ? &l->b : &l->a,
					    *to = f->hop[i].dir % 2 ? &l->a : &l->b;
		char a[128], b[128];
		json_array_append_new(path, json_pack("{s:s, s:s, s:o, s:o}", "from",
						      end_name(z, from, a, sizeof(a)), "to",
						      end_name(z, to, b, sizeof(b)), "packets",
						      J(f->hop[i].packets), "bytes", J(f->hop[i].bytes)));
	}
	return path;
}

static json_t *flows_json(const struct rsw_zone *z, const struct rsw_replay_result *r)
{
	json_t *flows = json_array();
	for (size_t i = 0; i < r->n_flows; i++) {
		const struct rsw_flow_key *k = &r->flow_key[i];
		const struct rsw_replay_flow *f = &r->flow[i];
		struct rsw_ip a = {.family = k->l3 == 2 ? 6 : 4}, b = a;
		char sa[64], sb[64];
		memcpy(a.a, k->src, 16);
		memcpy(b.a, k->dst, 16);
		json_t *o = json_object();
		json_object_set_new(o, "src", json_string(rsw_ip_str(&a, sa, sizeof(sa))));
		json_object_set_new(o, "dst", json_string(rsw_ip_str(&b, sb, sizeof(sb))));
		json_object_set_new(o, "protocol", json_integer(k->proto));
		json_object_set_new(o, "sport", json_integer(k->sport));
		json_object_set_new(o, "dport", json_integer(k->dport));
		json_object_set_new(o, "dest_qp", json_integer(k->qp));
		json_object_set_new(o, "packets_in", J(f->packets_in));
		json_object_set_new(o, "packets_out", J(f->packets_out));
		json_object_set_new(o, "bytes_in", J(f->bytes_in));
		json_object_set_new(o, "start_ns", J(f->first_in_ns));
		json_object_set_new(o, "done_ns", f->packets_out ? J(f->done_ns) : json_null());
		json_object_set_new(o, "completion_ns", f->packets_out == f->packets_in
								? J(f->done_ns - f->first_in_ns)
								: json_null());
		if (z)
			json_object_set_new(o, "path", path_json(z, f));
		json_array_append_new(flows, o);
	}
	return flows;
}

/* From the first flow's start to the last flow's end, if every flow completed. */
static json_t *collective_json(const struct rsw_replay_result *r)
{
	uint64_t start = UINT64_MAX, done = 0;
	for (size_t i = 0; i < r->n_flows; i++) {
		const struct rsw_replay_flow *f = &r->flow[i];
		if (f->packets_out != f->packets_in)
			return json_null();
		if (f->first_in_ns < start)
			start = f->first_in_ns;
		if (f->done_ns > done)
			done = f->done_ns;
	}
	return r->n_flows ? J(done - start) : json_null();
}

static const char *end_name(const struct rsw_zone *z, const struct rsw_topo_end *e, char *buf,
			    size_t n)
{
	if (e->sw == RSW_TOPO_HOST)
		snprintf(buf, n, "%s", z->host[e->idx].name);
	else
		snprintf(buf, n, "%s|%s", z->sw[e->sw].name,
			 rsw_switch_fib(z->sw[e->sw].sw)->ports[e->idx].name);
	return buf;
}

/* Frames and bytes an end sent onto its link. */
static void end_tx(const struct rsw_replay_result *r, const struct rsw_topo_end *e,
		   uint64_t *frames, uint64_t *bytes)
{
	if (e->sw == RSW_TOPO_HOST) {
		*frames = r->host[e->idx].tx_packets;
		*bytes = r->host[e->idx].tx_bytes;
		return;
	}
	const struct rsw_replay_port_stats *ps = &r->sw[e->sw].port[e->idx];
	*frames = ps->tx_packets + ps->pfc_tx_frames;
	*bytes = ps->tx_bytes + ps->pfc_tx_frames * RSW_PFC_FRAME_LEN;
}

static json_t *links_json(const struct rsw_zone *z, const struct rsw_replay_result *r)
{
	json_t *links = json_array();
	double span = r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) : 0;
	for (unsigned i = 0; i < z->n_link; i++) {
		const struct rsw_topo_link *l = &z->link[i];
		const struct rsw_topo_end *from[2] = {&l->a, &l->b}, *to[2] = {&l->b, &l->a};
		json_t *o = json_object(), *dirs = json_array();
		char a[128], b[128];
		json_object_set_new(o, "a", json_string(end_name(z, &l->a, a, sizeof(a))));
		json_object_set_new(o, "b", json_string(end_name(z, &l->b, b, sizeof(b))));
		json_object_set_new(o, "speed", json_integer(l->speed_mbps));
		json_object_set_new(o, "length_m", json_integer(z->link_length_m[i]));
		json_object_set_new(o, "delay_ns", J(l->delay_ns));
		for (unsigned d = 0; d < 2; d++) {
			uint64_t frames, bytes;
			end_tx(r, from[d], &frames, &bytes);
			json_t *x = json_object();
			json_object_set_new(x, "from", json_string(end_name(z, from[d], a, sizeof(a))));
			json_object_set_new(x, "to", json_string(end_name(z, to[d], b, sizeof(b))));
			json_object_set_new(x, "frames", J(frames));
			json_object_set_new(x, "bytes", J(bytes));
			if (r->link_lost) /* with --fail: frames put on it while it was down */
				json_object_set_new(x, "lost_link_down", J(r->link_lost[2 * i + d]));
			/* wire bits (frame + FCS, preamble, gap) over the run's window at the link
			 * speed; end_ns is when the last frame started to leave, so the window adds
			 * the largest frame's wire time: the link's busy time all lies inside it and
			 * utilization cannot pass 1 */
			double bits = (double)(bytes + frames * RSW_WIRE_OVERHEAD) * 8;
			double win = span + rsw_replay_last_frame_ns(l->speed_mbps);
			json_object_set_new(x, "utilization",
					    json_real(l->speed_mbps ? bits / (win * l->speed_mbps / 1e3) : 0));
			json_array_append_new(dirs, x);
		}
		json_object_set_new(o, "directions", dirs);
		json_array_append_new(links, o);
	}
	return links;
}

static json_t *hosts_json(const struct rsw_zone *z, const struct rsw_replay_result *r,
			  int closed_loop)
{
	json_t *hosts = json_array();
	for (unsigned h = 0; h < z->n_host; h++) {
		const struct rsw_replay_host_result *x = &r->host[h];
		json_t *o = json_object(), *paused = json_array();
		json_object_set_new(o, "name", json_string(z->host[h].name));
		json_object_set_new(o, "tx_packets", J(x->tx_packets));
		json_object_set_new(o, "tx_bytes", J(x->tx_bytes));
		json_object_set_new(o, "rx_packets", J(x->rx_packets));
		json_object_set_new(o, "rx_bytes", J(x->rx_bytes));
		json_object_set_new(o, "pfc_rx_frames", J(x->pfc_rx_frames));
		json_object_set_new(o, "delayed_packets", J(x->delayed_packets));
		json_object_set_new(o, "max_delay_ns", J(x->max_delay_ns));
		json_object_set_new(o, "total_delay_ns", J(x->total_delay_ns));
		for (unsigned p = 0; p < 8; p++)
			json_array_append_new(paused, J(x->paused_ns[p]));
		json_object_set_new(o, "paused_ns", paused);
		json_object_set_new(o, "unsent", J(x->unsent));
		if (closed_loop)
			json_object_set_new(o, "injected_drops", J(x->injected_drops));
		json_array_append_new(hosts, o);
	}
	return hosts;
}

/* NCCL's figures (nccl-tests doc/PERFORMANCE.md): algbw = size / time, busbw = algbw x the
 * pattern's factor; in GB/s (1e9 bytes per second), as nccl-tests prints them. */
static void coll_bw(const struct rsw_coll *c, const struct rsw_coll_result *cr, double *alg,
		    double *bus)
{
	uint64_t t = cr->done_ns - cr->start_ns;
	*alg = cr->complete && t ? (double)cr->bytes / (double)t : 0;
	*bus = *alg * rsw_coll_busbw_factor(c->pattern, c->n_ranks);
}

static void append(char *out, size_t len, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *out, size_t len, size_t *o, const char *fmt, ...)
{
	va_list ap;
	if (*o >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(out + *o, len - *o, fmt, ap);
	va_end(ap);
	*o += n > 0 ? (size_t)n : 0;
}

/* Why a closed-loop collective did not complete, in words (summary.json's incomplete_reason,
 * the text output): the QPs that exhausted their retries, else the --until cut, else a stall. */
static void coll_reason(const struct rsw_zone *z, const struct rsw_coll *c,
			const struct rsw_coll_result *cr, uint64_t cut_ns, char *out, size_t len)
{
	uint64_t err = 0;
	size_t o = 0;
	for (uint64_t i = 0; i < cr->n_qps; i++)
		err += cr->qp[i].error != 0;
	if (err) {
		append(out, len, &o, "retries exhausted: %lu QP%s gave up after %u timeouts in a "
		       "row without progress (retry %u):", (unsigned long)err, err > 1 ? "s" : "",
		       c->retry_cnt + 1, c->retry_cnt);
		unsigned shown = 0;
		for (uint64_t i = 0; i < cr->n_qps && shown < 4; i++) {
			const struct rsw_coll_qp_stats *q = &cr->qp[i];
			if (!q->error)
				continue;
			append(out, len, &o, "%s %s → %s QP %u at %.3f us", shown++ ? "," : "",
			       z->host[q->host].name, z->host[q->peer].name, q->q,
			       (double)q->error_ns / 1e3);
		}
		if (err > shown)
			append(out, len, &o, " and %lu more", (unsigned long)(err - shown));
		append(out, len, &o, "; ");
	} else if (cut_ns) {
		append(out, len, &o, "stopped by --until at %.3f us; ", (double)cut_ns / 1e3);
	} else {
		append(out, len, &o, "stalled: no QP gave up and nothing was left to happen; ");
	}
	append(out, len, &o, "%lu of %lu transfers arrived", (unsigned long)cr->arrived,
	       (unsigned long)cr->transfers);
}

/* Reordering is reported when the run asked about it (ooo= given) or a switch uses ARS: a
 * run with neither prints what it always did. */
static int ooo_shown(const struct rsw_zone *z, const struct rsw_coll *c)
{
	for (unsigned s = 0; !c->ooo_set && s < z->n_sw; s++)
		if (rsw_switch_fib(z->sw[s].sw)->ars)
			return 1;
	return c->ooo_set;
}

/* The receivers' mode: "nak", "accept" (every rank), or the accepting hosts. */
static json_t *ooo_mode_json(const struct rsw_zone *z, const struct rsw_coll *c)
{
	unsigned n = 0;
	json_t *a = json_array();
	for (unsigned i = 0; i < c->n_ranks; i++)
		if (c->ooo_accept[c->rank_host[i]]) {
			n++;
			json_array_append_new(a, json_string(z->host[c->rank_host[i]].name));
		}
	if (n && n < c->n_ranks)
		return a;
	json_decref(a);
	return json_string(n ? "accept" : "nak");
}

/* The QPs' reordering summed (packets) or at its worst (distance, buffer): max[0..3] as
 * struct rsw_coll_qp_stats orders them. */
static void ooo_totals(const struct rsw_coll_result *cr, uint64_t v[4])
{
	v[0] = v[1] = v[2] = v[3] = 0;
	for (uint64_t i = 0; i < cr->n_qps; i++) {
		const struct rsw_coll_qp_stats *q = &cr->qp[i];
		v[0] += q->reorder.ooo_packets;
		v[1] = q->reorder.ooo_max_distance > v[1] ? q->reorder.ooo_max_distance : v[1];
		v[2] = q->reorder.reorder_max_packets > v[2] ? q->reorder.reorder_max_packets : v[2];
		v[3] = q->reorder.reorder_max_bytes > v[3] ? q->reorder.reorder_max_bytes : v[3];
	}
}

static const char *const ooo_keys[4] = {"ooo_packets", "ooo_max_distance",
					"reorder_max_packets", "reorder_max_bytes"};

/* A QP's counters in summary.json's order. */
static const struct {
	const char *key;
	size_t off;
} qp_counters[] = {
	{"data_packets", offsetof(struct rsw_coll_qp_stats, data_packets)},
	{"data_bytes", offsetof(struct rsw_coll_qp_stats, data_bytes)},
	{"retransmitted", offsetof(struct rsw_coll_qp_stats, retransmitted)},
	{"timeouts", offsetof(struct rsw_coll_qp_stats, timeouts)},
	{"acks_rx", offsetof(struct rsw_coll_qp_stats, acks_rx)},
	{"naks_rx", offsetof(struct rsw_coll_qp_stats, naks_rx)},
	{"acks_tx", offsetof(struct rsw_coll_qp_stats, acks_tx)},
	{"naks_tx", offsetof(struct rsw_coll_qp_stats, naks_tx)},
	{"cts_rx", offsetof(struct rsw_coll_qp_stats, cts_rx)},
	{"cts_tx", offsetof(struct rsw_coll_qp_stats, cts_tx)},
	{"cnps_rx", offsetof(struct rsw_coll_qp_stats, cnps_rx)},
	{"cnps_tx", offsetof(struct rsw_coll_qp_stats, cnps_tx)},
	{"rate_cuts", offsetof(struct rsw_coll_qp_stats, rate_cuts)},
	{"min_rate_mbps", offsetof(struct rsw_coll_qp_stats, min_rate_mbps)},
};

/* One QP's counters (its reordering too when ooo). */
static json_t *qp_json(const struct rsw_zone *z, const struct rsw_coll_qp_stats *q, int ooo)
{
	json_t *e = json_object();
	json_object_set_new(e, "host", json_string(z->host[q->host].name));
	json_object_set_new(e, "peer", json_string(z->host[q->peer].name));
	json_object_set_new(e, "qp", J(q->q));
	for (size_t k = 0; k < sizeof(qp_counters) / sizeof(qp_counters[0]); k++)
		json_object_set_new(e, qp_counters[k].key,
				    J(*(const uint64_t *)((const char *)q + qp_counters[k].off)));
	if (ooo) {
		const uint64_t v[4] = {q->reorder.ooo_packets, q->reorder.ooo_max_distance,
				       q->reorder.reorder_max_packets, q->reorder.reorder_max_bytes};
		for (unsigned k = 0; k < 4; k++)
			json_object_set_new(e, ooo_keys[k], J(v[k]));
	}
	json_object_set_new(e, "error", json_boolean(q->error));
	return e;
}

static json_t *coll_json(const struct rsw_zone *z, const struct rsw_coll *c,
			 const struct rsw_coll_result *cr, uint64_t cut_ns)
{
	int ooo = ooo_shown(z, c);
	json_t *o = json_object(), *ranks = json_array(), *steps = json_array(), *qps = json_array();
	json_t *in_error = json_array();
	json_object_set_new(o, "pattern", json_string(rsw_coll_pattern_name(c->pattern)));
	for (unsigned i = 0; i < c->n_ranks; i++)
		json_array_append_new(ranks, json_string(z->host[c->rank_host[i]].name));
	json_object_set_new(o, "ranks", ranks);
	json_object_set_new(o, "size_bytes", J(cr->bytes));
	json_object_set_new(o, "chunk_bytes", J(c->chunk));
	json_object_set_new(o, "qps_per_connection", J(c->qps));
	json_object_set_new(o, "split", json_string(c->split ? "even" : "rr"));
	json_object_set_new(o, "cts_window", J(c->cts_window));
	json_object_set_new(o, "rto_ns", J(c->rto_ns));
	json_object_set_new(o, "complete", json_boolean(cr->complete));
	json_object_set_new(o, "transfers", J(cr->transfers));
	json_object_set_new(o, "transfers_arrived", J(cr->arrived));
	if (!cr->complete) {
		char why[512];
		coll_reason(z, c, cr, cut_ns, why, sizeof(why));
		json_object_set_new(o, "incomplete_reason", json_string(why));
	}
	json_object_set_new(o, "start_ns", J(cr->start_ns));
	json_object_set_new(o, "done_ns", cr->complete ? J(cr->done_ns) : json_null());
	json_object_set_new(o, "time_ns", cr->complete ? J(cr->done_ns - cr->start_ns)
						       : json_null());
	double alg, bus;
	coll_bw(c, cr, &alg, &bus);
	json_object_set_new(o, "algbw_GBps", cr->complete ? json_real(alg) : json_null());
	json_object_set_new(o, "busbw_GBps", cr->complete ? json_real(bus) : json_null());
	json_object_set_new(o, "busbw_factor",
			    json_real(rsw_coll_busbw_factor(c->pattern, c->n_ranks)));
	for (unsigned s = 0; s < cr->n_steps; s++)
		json_array_append_new(steps, cr->step_done_ns[s] ? J(cr->step_done_ns[s])
								 : json_null());
	json_object_set_new(o, "step_done_ns", steps);
	uint64_t tot[4] = {0};
	for (uint64_t i = 0; i < cr->n_qps; i++) {
		const struct rsw_coll_qp_stats *q = &cr->qp[i];
		json_t *e = qp_json(z, q, ooo);
		if (q->error) {
			json_object_set_new(e, "error_ns", J(q->error_ns));
			json_object_set_new(e, "unacked_psn", J(q->unacked_psn));
			json_object_set_new(e, "sent_psn", J(q->sent_psn));
			json_array_append(in_error, e);
		}
		json_array_append_new(qps, e);
		tot[0] += q->retransmitted;
		tot[1] += q->timeouts;
		tot[2] += q->cnps_rx;
		tot[3] += q->rate_cuts;
	}
	json_object_set_new(o, "retransmitted", J(tot[0]));
	json_object_set_new(o, "timeouts", J(tot[1]));
	json_object_set_new(o, "cnps", J(tot[2]));
	json_object_set_new(o, "rate_cuts", J(tot[3]));
	json_object_set_new(o, "injected_drops", J(cr->injected_drops));
	if (ooo) {
		uint64_t v[4];
		ooo_totals(cr, v);
		json_object_set_new(o, "ooo", ooo_mode_json(z, c));
		for (unsigned k = 0; k < 4; k++)
			json_object_set_new(o, ooo_keys[k], J(v[k]));
	}
	if (!cr->complete)
		json_object_set_new(o, "qps_in_error", in_error);
	else
		json_decref(in_error);
	json_object_set_new(o, "qps", qps);
	return o;
}

static void coll_print(FILE *f, const struct rsw_zone *z, const struct rsw_coll *c,
		       const struct rsw_coll_result *cr, uint64_t cut_ns)
{
	for (unsigned s = 0; s < cr->n_steps; s++)
		if (cr->step_done_ns[s])
			fprintf(f, "step %-3u done at %.3f us\n", s, (double)cr->step_done_ns[s] / 1e3);
	uint64_t rt = 0, to = 0, naks = 0, cnps = 0, cuts = 0;
	for (uint64_t i = 0; i < cr->n_qps; i++) {
		rt += cr->qp[i].retransmitted;
		to += cr->qp[i].timeouts;
		naks += cr->qp[i].naks_rx;
		cnps += cr->qp[i].cnps_rx;
		cuts += cr->qp[i].rate_cuts;
	}
	double alg, bus;
	coll_bw(c, cr, &alg, &bus);
	if (cr->complete)
		fprintf(f, "collective %s over %u ranks, %lu bytes: %.3f us, algbw %.2f GB/s, busbw "
			"%.2f GB/s\n", rsw_coll_pattern_name(c->pattern), c->n_ranks,
			(unsigned long)cr->bytes, (double)(cr->done_ns - cr->start_ns) / 1e3, alg,
			bus);
	else {
		char why[512];
		coll_reason(z, c, cr, cut_ns, why, sizeof(why));
		fprintf(f, "collective %s over %u ranks: NOT complete: %s\n",
			rsw_coll_pattern_name(c->pattern), c->n_ranks, why);
	}
	fprintf(f, "transport: %lu packets retransmitted, %lu timeouts, %lu NAKs, %lu CNPs, %lu rate "
		"cuts, %lu injected drops\n", (unsigned long)rt, (unsigned long)to,
		(unsigned long)naks, (unsigned long)cnps, (unsigned long)cuts,
		(unsigned long)cr->injected_drops);
	if (ooo_shown(z, c)) {
		uint64_t v[4];
		ooo_totals(cr, v);
		fprintf(f, "reordering: %lu out-of-order packets, max PSN distance %lu, reorder "
			"buffer %lu packets / %lu bytes\n", (unsigned long)v[0], (unsigned long)v[1],
			(unsigned long)v[2], (unsigned long)v[3]);
	}
}

/* Flows some of whose packets had not left the zone (or a direct input's switch) at the end. */
static uint64_t incomplete_flows(const struct rsw_replay_result *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->n_flows; i++)
		n += r->flow[i].packets_out < r->flow[i].packets_in;
	return n;
}

void rsw_replay_cut_print(FILE *f, const struct rsw_replay_result *r, unsigned n_host)
{
	if (!r->cut_ns)
		return;
	uint64_t unsent = 0;
	for (unsigned h = 0; r->host && h < n_host; h++)
		unsent += r->host[h].unsent;
	fprintf(f, "stopped by --until at %.9f s with events still due: %lu frames queued, %lu in "
		"flight, %lu captured frames not yet sent by hosts; %lu of %zu flows incomplete\n",
		(double)r->cut_ns / 1e9, (unsigned long)r->queued, (unsigned long)r->in_flight,
		(unsigned long)unsent, (unsigned long)incomplete_flows(r), r->n_flows);
}

json_t *rsw_replay_summary_json(const struct rsw_zone *z, int zone,
				const struct rsw_replay_result *r, const struct rsw_coll *coll)
{
	json_t *root = json_object();
	json_object_set_new(root, "start_ns", J(r->start_ns));
	json_object_set_new(root, "end_ns", J(r->end_ns));
	json_object_set_new(root, "collective_ns", collective_json(r));
	json_object_set_new(root, "deadlock_hold_ns", J(r->deadlock_hold_ns));
	json_object_set_new(root, "queue_sample_ns", J(r->queue_sample_ns));
	json_object_set_new(root, "deadlocks", rsw_replay_deadlocks_json(z, r));
	if (r->cut_ns) { /* only then: a run that ended by itself has none of these */
		json_object_set_new(root, "cut_by_until_ns", J(r->cut_ns));
		json_object_set_new(root, "incomplete_flows", J(incomplete_flows(r)));
	}
	if (!zone) {
		const struct rsw_fib *fib = rsw_switch_fib(z->sw[0].sw);
		json_object_set_new(root, "ports", ports_json(fib, &r->sw[0]));
		json_object_set_new(root, "pools", pools_json(fib, &r->sw[0]));
		json_object_set_new(root, "drops", drops_json(r->sw[0].drops));
		json_object_set_new(root, "flows", flows_json(NULL, r));
		json_object_set_new(root, "conservation", switch_conservation(&r->sw[0]));
		json_t *ars = rsw_ars_groups_json(fib);
		if (ars) /* only then: a summary without ARS stays as it was */
			json_object_set_new(root, "ars", ars);
		return root;
	}
	json_t *sws = json_array();
	uint64_t drops[64] = {0}, lossless[64] = {0};
	for (unsigned s = 0; s < z->n_sw; s++) {
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(z->sw[s].name));
		json_object_set_new(o, "ports", ports_json(rsw_switch_fib(z->sw[s].sw), &r->sw[s]));
		json_object_set_new(o, "pools", pools_json(rsw_switch_fib(z->sw[s].sw), &r->sw[s]));
		json_object_set_new(o, "drops", drops_json(r->sw[s].drops));
		json_object_set_new(o, "conservation", switch_conservation(&r->sw[s]));
		json_t *ars = rsw_ars_groups_json(rsw_switch_fib(z->sw[s].sw));
		if (ars)
			json_object_set_new(o, "ars", ars);
		json_array_append_new(sws, o);
		for (unsigned d = 0; d < 64; d++) {
			drops[d] += r->sw[s].drops[d];
			lossless[d] += r->sw[s].lossless_drops[d];
		}
	}
	json_object_set_new(root, "zone", json_string(z->name));
	json_object_set_new(root, "switches", sws);
	json_object_set_new(root, "hosts", hosts_json(z, r, coll != NULL));
	json_object_set_new(root, "links", links_json(z, r));
	json_object_set_new(root, "drops", drops_json(drops));
	json_object_set_new(root, "flows", flows_json(z, r));
	if (coll && r->coll)
		json_object_set_new(root, "collective", coll_json(z, coll, r->coll, r->cut_ns));
	json_t *c = json_object();
	lossless_json(c, lossless);
	json_object_set_new(c, "entered", J(r->entered));
	json_object_set_new(c, "generated", J(r->generated));
	json_object_set_new(c, "delivered", J(r->delivered));
	json_object_set_new(c, "left", J(r->left));
	json_object_set_new(c, "consumed", J(r->consumed));
	json_object_set_new(c, "dropped", J(r->dropped));
	json_object_set_new(c, "queued", J(r->queued));
	json_object_set_new(c, "in_flight", J(r->in_flight));
	json_object_set_new(c, "holds", json_boolean(r->entered + r->generated ==
						       r->delivered + r->left + r->consumed +
							       r->dropped + r->queued + r->in_flight));
	json_object_set_new(root, "conservation", c);
	return root;
}

static void print_ports(FILE *f, const char *sw, const struct rsw_fib *fib,
			const struct rsw_replay_switch_result *r)
{
	for (uint16_t p = 0; p < fib->n_ports; p++) {
		const struct rsw_replay_port_stats *s = &r->port[p];
		uint64_t peak = 0;
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
			if (rsw_tm_port_read(r->tm, p)->q[q].use.peak > peak)
				peak = rsw_tm_port_read(r->tm, p)->q[q].use.peak;
		char name[96];
		snprintf(name, sizeof(name), "%s%s%s", sw ? sw : "", sw ? "|" : "", fib->ports[p].name);
		fprintf(f, "%-24s %10lu %12lu %10lu %12lu %8lu %8lu %12lu\n", name,
			(unsigned long)s->rx_packets, (unsigned long)s->rx_bytes,
			(unsigned long)s->tx_packets, (unsigned long)s->tx_bytes,
			(unsigned long)s->pfc_rx_frames, (unsigned long)s->pfc_tx_frames,
			(unsigned long)peak);
	}
}

/* A line per ARS group: what its adaptive choice did (docs/ars.md, Counters). */
static void print_ars(FILE *f, const char *sw, const struct rsw_fib *fib)
{
	for (uint32_t g = 0; fib->ars && g < fib->n_groups; g++) {
		uint64_t v[RSW_ARS_STATS];
		if (rsw_ars_stats_get(&fib->groups[g], v))
			continue;
		fprintf(f, "ars %s%s%s %s: %lu packets, %lu next-hop and %lu port reassignments, "
			"%lu drops, %lu flowlet table full\n", sw ? sw : "", sw ? "|" : "",
			fib->groups[g].name, rsw_ars_mode_name(fib->groups[g].ars->cfg.mode),
			(unsigned long)v[0], (unsigned long)v[1], (unsigned long)v[2],
			(unsigned long)v[3], (unsigned long)v[4]);
	}
}

void rsw_replay_summary_print(FILE *f, const struct rsw_zone *z, int zone,
			      const struct rsw_replay_result *r, const struct rsw_coll *coll)
{
	fprintf(f, "%-24s %10s %12s %10s %12s %8s %8s %12s\n", "port", "rx_packets", "rx_bytes",
		"tx_packets", "tx_bytes", "pfc_rx", "pfc_tx", "max_queue_B");
	uint64_t drops[64] = {0}, lossless[64] = {0};
	for (unsigned s = 0; s < z->n_sw; s++) {
		print_ports(f, zone ? z->sw[s].name : NULL, rsw_switch_fib(z->sw[s].sw), &r->sw[s]);
		for (unsigned d = 0; d < 64; d++) {
			drops[d] += r->sw[s].drops[d];
			lossless[d] += r->sw[s].lossless_drops[d];
		}
	}
	for (unsigned s = 0; s < z->n_sw; s++)
		print_ars(f, zone ? z->sw[s].name : NULL, rsw_switch_fib(z->sw[s].sw));
	for (unsigned h = 0; h < z->n_host; h++) {
		const struct rsw_replay_host_result *x = &r->host[h];
		fprintf(f, "host %-19s sent %lu (%lu late, max %.3f us), received %lu, PFC received "
			"%lu\n", z->host[h].name, (unsigned long)x->tx_packets,
			(unsigned long)x->delayed_packets, (double)x->max_delay_ns / 1e3,
			(unsigned long)x->rx_packets, (unsigned long)x->pfc_rx_frames);
	}
	for (unsigned d = 1; d < RSW_DROP_COUNT; d++)
		if (drops[d])
			fprintf(f, "drop %-24s %10lu%s\n", rsw_drop_reason_name(d), (unsigned long)drops[d],
				!lossless[d] ? ""
				: rsw_tm_lossless_drop_allowed(d) ? " (lossless among them)"
								  : " (LOSSLESS among them: a defect)");
	json_t *c = collective_json(r);
	if (json_is_integer(c))
		fprintf(f, "all flows done in %.3f us\n", (double)json_integer_value(c) / 1e3);
	json_decref(c);
	if (coll && r->coll)
		coll_print(f, z, coll, r->coll, r->cut_ns);
	if (!zone) {
		const struct rsw_replay_switch_result *s = &r->sw[0];
		fprintf(f, "last departure %.9f s; received %lu = transmitted %lu + dropped %lu + "
			"consumed %lu + queued %lu\n", (double)r->end_ns / 1e9,
			(unsigned long)s->received, (unsigned long)s->transmitted,
			(unsigned long)s->dropped, (unsigned long)s->consumed, (unsigned long)s->queued);
		return;
	}
	fprintf(f, "last departure %.9f s; entered %lu + PFC generated %lu = delivered %lu + left "
		"%lu + consumed %lu + dropped %lu + queued %lu + in flight %lu\n",
		(double)r->end_ns / 1e9, (unsigned long)r->entered, (unsigned long)r->generated,
		(unsigned long)r->delivered, (unsigned long)r->left, (unsigned long)r->consumed,
		(unsigned long)r->dropped, (unsigned long)r->queued, (unsigned long)r->in_flight);
}
