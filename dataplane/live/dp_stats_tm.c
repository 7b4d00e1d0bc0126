/* Traffic-manager counters of the live dataplane with SAI's names (REFERENCE §4), so that a lab
 * user can compare them with a hardware switch's: per port PFC frames and pause time per
 * priority, per queue packets/bytes/drops/ECN marks/watermark, per PG watermarks and XOFF/XON
 * transitions, per queue watchdog storms. */
#include <stdio.h>

#include "dp_stats.h"

static json_t *num(uint64_t v)
{
	return json_integer((json_int_t)v);
}

uint64_t rsw_dp_stats_tm_flushed(const struct rsw_dp *dp, uint64_t *lossless)
{
	uint64_t n = 0;
	*lossless = 0;
	if (!dp->tm)
		return 0;
	for (unsigned p = 0; p < dp->n_ports; p++)
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			const struct rsw_tm_queue_drops *s =
				&rsw_tm_port_read(dp->tm, p)->cold->qd[q];
			n += __atomic_load_n(&s->pfcwd_flushed, __ATOMIC_RELAXED);
			*lossless += __atomic_load_n(&s->pfcwd_flushed_lossless, __ATOMIC_RELAXED);
		}
	return n;
}

void rsw_dp_stats_tm_json(const struct rsw_dp *dp, const struct rsw_dp_totals *t, unsigned p,
			  json_t *port, uint64_t now_ns)
{
	struct rsw_tm_port_stats ps;
	rsw_tm_port_stats(dp->tm, (uint16_t)p, now_ns, &ps);
	json_t *pfc = json_object(), *queues = json_array(), *pgs = json_array();
	char k[64];
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++) {
		snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_RX_PKTS", i);
		json_object_set_new(pfc, k, num(ps.pfc_rx[i]));
		snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_TX_PKTS", i);
		json_object_set_new(pfc, k, num(ps.pfc_tx[i]));
		snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_RX_PAUSE_DURATION_US", i);
		json_object_set_new(pfc, k, num(ps.paused_ns[i] / 1000));
	}
	json_object_set_new(pfc, "pfc_tx_frames", num(t->c.pfc_tx_frames[p]));
	json_object_set_new(pfc, "pfc_tx_failed", num(t->c.pfc_tx_failed[p]));
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
		const struct rsw_tm_queue_stats *s = &ps.qs[q];
		json_t *o = json_object();
		json_object_set_new(o, "queue", json_integer(q));
		json_object_set_new(o, "SAI_QUEUE_STAT_PACKETS", num(s->packets));
		json_object_set_new(o, "SAI_QUEUE_STAT_BYTES", num(s->bytes));
		json_object_set_new(o, "SAI_QUEUE_STAT_DROPPED_PACKETS", num(s->dropped_packets));
		json_object_set_new(o, "SAI_QUEUE_STAT_DROPPED_BYTES", num(s->dropped_bytes));
		json_object_set_new(o, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
				    num(s->ecn_marked_packets));
		json_object_set_new(o, "SAI_QUEUE_STAT_WATERMARK_BYTES", num(ps.q_peak[q]));
		json_object_set_new(o, "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES", num(ps.q_bytes[q]));
		json_object_set_new(o, "paused", json_boolean(ps.paused >> q & 1));
		uint64_t wd[RSW_PFCWD_STATS];
		rsw_tm_pfcwd_stats(dp->tm, (uint16_t)p, q, wd);
		for (unsigned i = 0; i < RSW_PFCWD_STATS; i++)
			json_object_set_new(o, rsw_pfcwd_stat_names[i], num(wd[i]));
		json_array_append_new(queues, o);
	}
	for (unsigned g = 0; g < RSW_TM_PGS; g++) {
		json_t *o = json_object();
		json_object_set_new(o, "pg", json_integer(g));
		json_object_set_new(o, "SAI_INGRESS_PRIORITY_GROUP_STAT_WATERMARK_BYTES",
				    num(ps.pg_peak[g]));
		json_object_set_new(o, "SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS",
				    num(ps.pg_dropped[g]));
		json_object_set_new(o, "SAI_INGRESS_PRIORITY_GROUP_STAT_CURR_OCCUPANCY_BYTES",
				    num(ps.pg_bytes[g] + ps.pg_hdrm[g]));
		json_object_set_new(o, "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_CURR_OCCUPANCY_BYTES",
				    num(ps.pg_hdrm[g]));
		json_object_set_new(o, "curr_packets", num(ps.pg_pkts[g]));
		json_object_set_new(o, "xoff", json_boolean(ps.xoff_pgs >> g & 1));
		json_object_set_new(o, "xoff_transitions", num(ps.xoff[g]));
		json_object_set_new(o, "xon_transitions", num(ps.xon[g]));
		json_array_append_new(pgs, o);
	}
	json_object_set_new(port, "pfc", pfc);
	json_object_set_new(port, "queues", queues);
	json_object_set_new(port, "priority_groups", pgs);
}

void rsw_dp_stats_tm_print(const struct rsw_dp *dp, const struct rsw_dp_totals *t, FILE *f,
			   uint64_t now_ns)
{
	const struct rsw_fib *fib = rsw_switch_fib(dp->sw);
	for (unsigned p = 0; p < dp->n_ports; p++) {
		struct rsw_tm_port_stats ps;
		rsw_tm_port_stats(dp->tm, (uint16_t)p, now_ns, &ps);
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			const struct rsw_tm_queue_stats *s = &ps.qs[q];
			if (!s->packets && !s->dropped_packets && !s->pfcwd_flushed)
				continue;
			fprintf(f, "queue %-12s %u  tx %10lu pkts %12lu bytes  drop %8lu  ecn %8lu  "
				"watermark %10lu\n", fib->ports[p].name, q, (unsigned long)s->packets,
				(unsigned long)s->bytes, (unsigned long)s->dropped_packets,
				(unsigned long)s->ecn_marked_packets, (unsigned long)ps.q_peak[q]);
		}
		for (unsigned i = 0; i < RSW_PFC_PRIOS; i++)
			if (ps.pfc_tx[i] || ps.pfc_rx[i])
				fprintf(f, "pfc   %-12s %u  tx %8lu  rx %8lu  paused %10lu us  xoff %lu "
					"xon %lu\n", fib->ports[p].name, i,
					(unsigned long)ps.pfc_tx[i],
					(unsigned long)ps.pfc_rx[i],
					(unsigned long)(ps.paused_ns[i] / 1000),
					(unsigned long)ps.xoff[i],
					(unsigned long)ps.xon[i]);
	}
	(void)t;
}
