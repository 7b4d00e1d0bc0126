/* DPDK telemetry commands under /rocesw/ (read with dpdk-telemetry.py): the same counters as
 * `rocesw show counters`, with the same names. Callbacks run on DPDK's telemetry thread: they
 * hold the switch's lock while they read the tables, so a commit cannot free what they read. */
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "dp_stats.h"
#include "dp_telemetry.h"

static const struct rsw_dp_zone *g_z;

/* The switch a parameter names and what follows it: one switch takes the parameter as is; a
 * zone's parameters start with SWITCH, then '|' and the rest (a port: "rtsw1|Ethernet0", the
 * zone's notation). NULL if no such switch. */
static struct rsw_dp *switch_of(const char **params)
{
	if (!g_z->model)
		return g_z->dp[0];
	const char *p = *params ? *params : "";
	const char *bar = strchr(p, '|');
	size_t n = bar ? (size_t)(bar - p) : strlen(p);
	for (unsigned s = 0; s < g_z->n_sw; s++)
		if (strlen(g_z->dp[s]->name) == n && !strncmp(g_z->dp[s]->name, p, n)) {
			*params = bar ? bar + 1 : "";
			return g_z->dp[s];
		}
	return NULL;
}

/* A zone's answers say which switch they are about (its parameter named it). */
static void start_dict(struct rte_tel_data *d, const struct rsw_dp *dp)
{
	rte_tel_data_start_dict(d);
	if (g_z->model)
		rte_tel_data_add_dict_string(d, "switch", dp->name);
}

static int port_of(const struct rsw_dp *dp, const char *params)
{
	if (!params || !*params)
		return -1;
	return rsw_state_port_index(dp->sw->state, params);
}

static void totals(struct rsw_dp *dp, struct rsw_dp_totals *t)
{
	rsw_dp_stats_sum(dp, t, rsw_dp_queued(dp));
}

static int cb_switches(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (unsigned s = 0; s < g_z->n_sw; s++)
		rte_tel_data_add_array_string(d, g_z->dp[s]->name ? g_z->dp[s]->name
								 : g_z->dp[s]->sw->state->sw.hostname);
	return 0;
}

static int cb_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (unsigned s = 0; s < g_z->n_sw; s++) {
		struct rsw_dp *dp = g_z->dp[s];
		if (g_z->model && params && *params && strcmp(params, dp->name))
			continue;
		pthread_mutex_lock(&dp->sw->lock);
		for (unsigned p = 0; p < dp->n_ports; p++) {
			char name[2 * RSW_NAME_MAX + 2];
			snprintf(name, sizeof(name), "%s%s%s", dp->name ? dp->name : "",
				 dp->name ? "|" : "", dp->sw->state->ports[p].name);
			rte_tel_data_add_array_string(d, name);
		}
		pthread_mutex_unlock(&dp->sw->lock);
	}
	return 0;
}

static int cb_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	struct rsw_dp *dp = switch_of(&params);
	if (!dp || (g_z->model && params && *params))
		return -1;
	struct rsw_dp_totals t;
	pthread_mutex_lock(&dp->sw->lock);
	totals(dp, &t);
	pthread_mutex_unlock(&dp->sw->lock);
	start_dict(d, dp);
	rte_tel_data_add_dict_u64(d, "received", t.received);
	rte_tel_data_add_dict_u64(d, "transmitted", t.transmitted);
	rte_tel_data_add_dict_u64(d, "dropped", t.dropped);
	rte_tel_data_add_dict_u64(d, "consumed", t.consumed);
	rte_tel_data_add_dict_u64(d, "queued", t.queued);
	for (unsigned r = 1; r < RSW_DROP_COUNT; r++)
		if (t.c.drops[r]) {
			char k[64];
			snprintf(k, sizeof(k), "drop_%s", rsw_drop_reason_name(r));
			rte_tel_data_add_dict_u64(d, k, t.c.drops[r]);
		}
	return 0;
}

/* /rocesw/port_stats,NAME: the port's counters and its SAI PFC counters. */
static int cb_port_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	struct rsw_dp *dp = switch_of(&params);
	if (!dp)
		return -1;
	struct rsw_dp_totals t;
	pthread_mutex_lock(&dp->sw->lock);
	int p = port_of(dp, params);
	if (p >= 0)
		totals(dp, &t);
	pthread_mutex_unlock(&dp->sw->lock);
	if (p < 0)
		return -1;
	struct rsw_tm_port_stats ps;
	rsw_tm_port_stats(dp->tm, (uint16_t)p, rsw_clock_now(&dp->clock), &ps);
	start_dict(d, dp);
	rte_tel_data_add_dict_u64(d, "rx_packets", t.c.rx_pkts[p]);
	rte_tel_data_add_dict_u64(d, "rx_bytes", t.c.rx_bytes[p]);
	rte_tel_data_add_dict_u64(d, "tx_packets", t.c.tx_pkts[p]);
	rte_tel_data_add_dict_u64(d, "tx_bytes", t.c.tx_bytes[p]);
	rte_tel_data_add_dict_u64(d, "pfc_rx_frames", t.c.pfc_rx[p]);
	rte_tel_data_add_dict_u64(d, "pause_rx_frames", t.c.pause_rx[p]);
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++) {
		char k[64];
		snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_RX_PKTS", i);
		rte_tel_data_add_dict_u64(d, k, ps.pfc_rx[i]);
		snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_TX_PKTS", i);
		rte_tel_data_add_dict_u64(d, k, ps.pfc_tx[i]);
	}
	return 0;
}

/* /rocesw/queue_stats,NAME,Q: one queue's SAI counters. */
static int cb_queue_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	struct rsw_dp *dp = switch_of(&params);
	if (!dp)
		return -1;
	char name[RSW_NAME_MAX];
	const char *comma = params ? strchr(params, ',') : NULL;
	if (!comma || (size_t)(comma - params) >= sizeof(name))
		return -1;
	memcpy(name, params, (size_t)(comma - params));
	name[comma - params] = 0;
	char *end;
	unsigned long q = strtoul(comma + 1, &end, 10);
	pthread_mutex_lock(&dp->sw->lock);
	int p = port_of(dp, name);
	pthread_mutex_unlock(&dp->sw->lock);
	if (p < 0 || *end || end == comma + 1 || q >= RSW_TM_QUEUES)
		return -1;
	struct rsw_tm_port_stats ps;
	rsw_tm_port_stats(dp->tm, (uint16_t)p, rsw_clock_now(&dp->clock), &ps);
	const struct rsw_tm_queue_stats *s = &ps.qs[q];
	start_dict(d, dp);
	rte_tel_data_add_dict_u64(d, "SAI_QUEUE_STAT_PACKETS", s->packets);
	rte_tel_data_add_dict_u64(d, "SAI_QUEUE_STAT_BYTES", s->bytes);
	rte_tel_data_add_dict_u64(d, "SAI_QUEUE_STAT_DROPPED_PACKETS", s->dropped_packets);
	rte_tel_data_add_dict_u64(d, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", s->ecn_marked_packets);
	rte_tel_data_add_dict_u64(d, "SAI_QUEUE_STAT_WATERMARK_BYTES", ps.q_peak[q]);
	rte_tel_data_add_dict_u64(d, "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", ps.wd_detected[q]);
	rte_tel_data_add_dict_u64(d, "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", ps.wd_restored[q]);
	return 0;
}

/* Help texts stay under RTE_TEL_MAX_STRING_LEN (128): a longer one fails the registration, and
 * the command answers null. */
void rsw_dp_telemetry_register(const struct rsw_dp_zone *z)
{
	g_z = z;
	rte_telemetry_register_cmd("/rocesw/switches", cb_switches,
				   "Returns the switch names (one, or a zone's). No parameters");
	rte_telemetry_register_cmd("/rocesw/ports", cb_ports,
				   "Returns the port names (SWITCH|PORT in a zone). Parameters: "
				   "none, or a zone's switch");
	rte_telemetry_register_cmd("/rocesw/counters", cb_counters,
				   "Returns received, transmitted, dropped (and by reason), consumed, "
				   "queued. Parameters: none, or a zone's switch");
	rte_telemetry_register_cmd("/rocesw/port_stats", cb_port_stats,
				   "Returns a port's packet and PFC counters. Parameters: port name "
				   "(SWITCH|PORT in a zone)");
	rte_telemetry_register_cmd("/rocesw/queue_stats", cb_queue_stats,
				   "Returns a queue's SAI counters. Parameters: port name,queue "
				   "(SWITCH|PORT,queue in a zone)");
}
