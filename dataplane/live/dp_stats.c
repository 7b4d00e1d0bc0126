#include <jansson.h>
#include <string.h>

#include <rte_ethdev.h>

#include "dataplane/tables/ars_stats.h"
#include "dp_stats.h"

void rsw_dp_stats_sum(const struct rsw_dp *dp, struct rsw_dp_totals *t, uint64_t queued)
{
	memset(t, 0, sizeof(*t));
	for (unsigned w = 0; w < dp->n_workers; w++) {
		const uint64_t *src = (const uint64_t *)dp->workers[w].cnt;
		uint64_t *dst = (uint64_t *)&t->c;
		for (size_t i = 0; i < sizeof(t->c) / sizeof(uint64_t); i++)
			dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	}
	for (unsigned p = 0; p < dp->n_ports; p++) {
		t->received += t->c.rx_pkts[p];
		t->transmitted += t->c.tx_pkts[p];
		t->consumed += t->c.pfc_rx[p] + t->c.pause_rx[p] + t->c.punted[p];
	}
	/* packets the watchdog flushed out of queues left the TM, not a worker */
	uint64_t flushed_lossless;
	t->c.drops[RSW_DROP_PFCWD_DROP] += rsw_dp_stats_tm_flushed(dp, &flushed_lossless);
	t->c.lossless_drops[RSW_DROP_PFCWD_DROP] += flushed_lossless;
	for (unsigned r = 1; r < RSW_DROP_COUNT; r++)
		t->dropped += t->c.drops[r];
	t->queued = queued;
}

uint64_t rsw_dp_queued(const struct rsw_dp *dp)
{
	uint64_t n = dp->tm ? rsw_tm_queued(dp->tm) : 0;
	for (unsigned p = 0; p < dp->n_ports; p++)
		n += __atomic_load_n(&dp->ports[p].n_pending, __ATOMIC_RELAXED);
	return n;
}

void rsw_dp_stats_print_rates(const struct rsw_dp *dp, const struct rsw_dp_totals *now,
			      const struct rsw_dp_totals *prev, double s, FILE *f)
{
	const struct rsw_state *st = dp->sw->state;
	for (unsigned p = 0; p < dp->n_ports; p++)
		fprintf(f, "%-12s rx %10.0f pps  tx %10.0f pps\n", st->ports[p].name,
			(double)(now->c.rx_pkts[p] - prev->c.rx_pkts[p]) / s,
			(double)(now->c.tx_pkts[p] - prev->c.tx_pkts[p]) / s);
	fflush(f);
}

static uint64_t missed(const struct rsw_dp *dp, unsigned p)
{
	struct rte_eth_stats es;
	if (dp->ports[p].kind != RSW_DP_PORT_ETH)
		return 0; /* an in-memory link or nothing: no device to ask */
	return rte_eth_stats_get(dp->ports[p].port_id, &es) == 0 ? es.imissed : 0;
}

void rsw_dp_stats_print_final(const struct rsw_dp *dp, const struct rsw_dp_totals *t, FILE *f)
{
	const struct rsw_state *st = dp->sw->state;
	const struct rsw_fib *fib = rsw_switch_fib(dp->sw);

	fprintf(f, "%-12s %-8s %12s %14s %12s %14s\n", "port", "role", "rx_packets", "rx_bytes",
		"tx_packets", "tx_bytes");
	for (unsigned p = 0; p < dp->n_ports; p++)
		fprintf(f, "%-12s %-8s %12lu %14lu %12lu %14lu\n", st->ports[p].name,
			rsw_port_role_name(st->ports[p].role), (unsigned long)t->c.rx_pkts[p],
			(unsigned long)t->c.rx_bytes[p], (unsigned long)t->c.tx_pkts[p],
			(unsigned long)t->c.tx_bytes[p]);
	for (uint32_t g = 0; g < fib->n_groups && g < RSW_DP_COUNTED_GROUPS; g++) {
		const struct rsw_fib_group *fg = &fib->groups[g];
		fprintf(f, "ECMP group %s (%s):\n", fg->name, fib->policy_names[fg->policy]);
		for (unsigned k = 0; k < fg->n_active; k++) {
			char ip[64];
			const struct rsw_fib_nh *nh = &fib->nh[fg->active_nh[k]];
			fprintf(f, "  member %-3u %-16s %-12s %12lu packets\n", fg->active_slot[k],
				rsw_ip_str(&nh->ip, ip, sizeof(ip)), fib->ports[nh->port].name,
				(unsigned long)t->c.ecmp[g][fg->active_slot[k]]);
		}
		uint64_t v[RSW_ARS_STATS];
		if (!rsw_ars_stats_get(fg, v))
			fprintf(f, "  ARS %s: %lu packets, %lu next-hop and %lu port reassignments, "
				"%lu drops, %lu flowlet table full\n", rsw_ars_mode_name(fg->ars->cfg.mode),
				(unsigned long)v[0], (unsigned long)v[1], (unsigned long)v[2],
				(unsigned long)v[3], (unsigned long)v[4]);
	}
	if (dp->tm)
		rsw_dp_stats_tm_print(dp, t, f, rsw_clock_now(&dp->clock));
	for (unsigned r = 1; r < RSW_DROP_COUNT; r++)
		if (t->c.drops[r])
			fprintf(f, "drop %-24s %12lu%s\n", rsw_drop_reason_name(r),
				(unsigned long)t->c.drops[r],
				!t->c.lossless_drops[r] ? ""
				: rsw_tm_lossless_drop_allowed(r) ? " (lossless among them)"
								  : " (LOSSLESS among them: a defect)");
	fprintf(f, "received %lu = transmitted %lu + dropped %lu + consumed %lu + queued %lu: %s\n",
		(unsigned long)t->received, (unsigned long)t->transmitted, (unsigned long)t->dropped,
		(unsigned long)t->consumed, (unsigned long)t->queued,
		t->received == t->transmitted + t->dropped + t->consumed + t->queued ? "holds"
										      : "VIOLATED");
}

/* What each worker received and sent for this switch: with several RX queues per port (--rxq)
 * the workers' shares of a port's traffic. */
static json_t *workers_json(const struct rsw_dp *dp)
{
	json_t *a = json_array();
	for (unsigned w = 0; w < dp->n_workers; w++) {
		const struct rsw_dp_counters *c = dp->workers[w].cnt;
		uint64_t rx = 0, tx = 0;
		for (unsigned p = 0; p < dp->n_ports; p++) {
			rx += __atomic_load_n(&c->rx_pkts[p], __ATOMIC_RELAXED);
			tx += __atomic_load_n(&c->tx_pkts[p], __ATOMIC_RELAXED);
		}
		json_array_append_new(a, json_pack("{s:I, s:I, s:I}", "worker", (json_int_t)w,
						   "rx_packets", (json_int_t)rx, "tx_packets",
						   (json_int_t)tx));
	}
	return a;
}

json_t *rsw_dp_stats_json(const struct rsw_dp *dp, const struct rsw_dp_totals *t)
{
	const struct rsw_state *st = dp->sw->state;
	const struct rsw_fib *fib = rsw_switch_fib(dp->sw);
	json_t *root = json_object(), *ports = json_array(), *drops = json_object();
	json_t *groups = json_array();

	for (unsigned p = 0; p < dp->n_ports; p++) {
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(st->ports[p].name));
		json_object_set_new(o, "role", json_string(rsw_port_role_name(st->ports[p].role)));
		json_object_set_new(o, "rx_packets", json_integer((json_int_t)t->c.rx_pkts[p]));
		json_object_set_new(o, "rx_bytes", json_integer((json_int_t)t->c.rx_bytes[p]));
		json_object_set_new(o, "tx_packets", json_integer((json_int_t)t->c.tx_pkts[p]));
		json_object_set_new(o, "tx_bytes", json_integer((json_int_t)t->c.tx_bytes[p]));
		json_object_set_new(o, "pfc_rx_frames", json_integer((json_int_t)t->c.pfc_rx[p]));
		json_object_set_new(o, "pause_rx_frames", json_integer((json_int_t)t->c.pause_rx[p]));
		json_object_set_new(o, "port_rx_missed", json_integer((json_int_t)missed(dp, p)));
		json_object_set_new(o, "icrc_ok", json_integer((json_int_t)t->c.icrc_ok[p]));
		json_object_set_new(o, "icrc_bad", json_integer((json_int_t)t->c.icrc_bad[p]));
		json_object_set_new(o, "punted_frames", json_integer((json_int_t)t->c.punted[p]));
		json_object_set_new(o, "control_tx_frames", json_integer((json_int_t)t->c.ctl_tx[p]));
		json_object_set_new(o, "control_tx_failed", json_integer((json_int_t)t->c.ctl_tx_failed[p]));
		json_object_set_new(o, "rx_queues", json_integer(dp->ports[p].n_rxq ? dp->ports[p].n_rxq : 1));
		json_object_set_new(o, "pause_lost", json_integer((json_int_t)t->c.pause_lost[p]));
		if (dp->tm)
			rsw_dp_stats_tm_json(dp, t, p, o, rsw_clock_now(&dp->clock));
		json_array_append_new(ports, o);
	}
	for (unsigned r = 1; r < RSW_DROP_COUNT; r++)
		json_object_set_new(drops, rsw_drop_reason_name(r), json_integer((json_int_t)t->c.drops[r]));
	for (uint32_t g = 0; g < fib->n_groups && g < RSW_DP_COUNTED_GROUPS; g++) {
		const struct rsw_fib_group *fg = &fib->groups[g];
		json_t *o = json_object(), *mem = json_array();
		json_object_set_new(o, "name", json_string(fg->name));
		json_object_set_new(o, "hash_policy", json_string(fib->policy_names[fg->policy]));
		for (unsigned k = 0; k < fg->n_active; k++) {
			char ip[64];
			const struct rsw_fib_nh *nh = &fib->nh[fg->active_nh[k]];
			json_t *m = json_object();
			json_object_set_new(m, "member", json_integer(fg->active_slot[k]));
			json_object_set_new(m, "nexthop", json_string(rsw_ip_str(&nh->ip, ip, sizeof(ip))));
			json_object_set_new(m, "port", json_string(fib->ports[nh->port].name));
			json_object_set_new(m, "packets",
					    json_integer((json_int_t)t->c.ecmp[g][fg->active_slot[k]]));
			json_array_append_new(mem, m);
		}
		json_object_set_new(o, "members", mem);
		json_t *ars = rsw_ars_group_json(fg);
		if (ars)
			json_object_set_new(o, "ars", ars);
		json_array_append_new(groups, o);
	}
	json_t *cons = json_object();
	json_object_set_new(cons, "received", json_integer((json_int_t)t->received));
	json_object_set_new(cons, "transmitted", json_integer((json_int_t)t->transmitted));
	json_object_set_new(cons, "dropped", json_integer((json_int_t)t->dropped));
	json_object_set_new(cons, "consumed", json_integer((json_int_t)t->consumed));
	json_object_set_new(cons, "queued", json_integer((json_int_t)t->queued));
	json_object_set_new(cons, "holds", json_boolean(t->received == t->transmitted + t->dropped +
									  t->consumed + t->queued));
	json_t *ll = json_object();
	int ll_holds = 1;
	for (unsigned r = 1; r < RSW_DROP_COUNT; r++) {
		if (!t->c.lossless_drops[r])
			continue;
		json_object_set_new(ll, rsw_drop_reason_name(r),
				    json_integer((json_int_t)t->c.lossless_drops[r]));
		ll_holds &= rsw_tm_lossless_drop_allowed(r);
	}
	json_object_set_new(cons, "lossless_drops", ll);
	json_object_set_new(cons, "lossless_holds", json_boolean(ll_holds));
	json_object_set_new(root, "ports", ports);
	json_object_set_new(root, "drops", drops);
	json_object_set_new(root, "ecmp_groups", groups);
	json_object_set_new(root, "workers", workers_json(dp));
	json_object_set_new(root, "conservation", cons);
	return root;
}

