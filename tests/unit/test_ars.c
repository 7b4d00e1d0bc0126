/* ARS in the ECMP stage (docs/ars.md), through the config compiler and rsw_ingress: the quality
 * bands against hand-computed EWMAs, flowlets that stay within the idle time and move after it,
 * per-packet spraying to the least loaded member, fixed assignment, down members, and the
 * flowlet table when full. Ports: Ethernet0 (0, hosts), Ethernet8/16/24 (1..3, the group). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/cli/eal_quiet.h"
#include "dataplane/config/config.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/tables/ars.h"
#include "dataplane/tables/ars_stats.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/tables/switch.h"

static char err[4096];

/* Load thresholds 0..8000 bytes (band = avg * 8 / 8000 = avg / 1000), EWMA exponent 1
 * (avg = (avg + x) / 2), quality from the load band only; 10 us sampling; idle time 50 us. */
static struct rsw_switch *ars_switch(const char *mode, unsigned max_flows, const char *e24)
{
	char path[] = "/tmp/test_ars_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f,
		"DEVICE_METADATA:\n  localhost: {hostname: t, mac: \"02:00:00:00:01:00\"}\n"
		"PORT:\n  Ethernet0: {speed: 100000}\n  Ethernet8: {speed: 100000}\n"
		"  Ethernet16: {speed: 100000}\n  Ethernet24: {speed: 100000, admin_status: %s}\n"
		"NEIGH:\n"
		"  \"Ethernet8|10.255.0.1\": {neigh: \"02:00:00:00:10:01\"}\n"
		"  \"Ethernet16|10.255.0.3\": {neigh: \"02:00:00:00:10:03\"}\n"
		"  \"Ethernet24|10.255.0.5\": {neigh: \"02:00:00:00:10:05\"}\n"
		"ARS_PROFILE:\n  p: {sampling_interval: 10, past_load_min_value: 0,\n"
		"      past_load_max_value: 8000, past_load_weight: 1, future_load_weight: 1,\n"
		"      port_load_weight: 100, port_queue_weight: 0, random_seed: 7}\n"
		"ARS_OBJECT:\n  a: {assign_mode: %s, flowlet_idle_time: 50, max_flows: %u,\n"
		"      match_l4_dst_port: 4791}\n"
		"NEXTHOP_GROUP:\n  up: {nexthop: \"10.255.0.1,10.255.0.3,10.255.0.5\", "
		"ars_object: a}\n"
		"STATIC_ROUTE:\n  \"10.9.0.0/16\": {nexthop_group: up}\n",
		e24, mode, max_flows);
	fclose(f);
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	assert_non_null(sw);
	if (rsw_config_apply(sw, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	unlink(path);
	return sw;
}

/* The egress port of a RoCEv2 packet (UDP sport, dport) entering Ethernet0 at t_us. */
static int send_at(struct rsw_switch *sw, uint16_t sport, uint16_t dport, uint64_t t_us,
		   struct rsw_pkt_meta *out)
{
	uint8_t fr[64] = {0x02, 0, 0, 0, 0x01, 0x00, 0x02, 0, 0, 0, 0x20, 0x01, 0x08, 0x00};
	uint8_t *ip = fr + 14, *udp = ip + 20;
	ip[0] = 0x45;
	ip[3] = 50; /* total length: 20 + 8 + 12 (BTH) + 10 */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, (uint8_t[]){10, 1, 0, 1}, 4);
	memcpy(ip + 16, (uint8_t[]){10, 9, 0, 1}, 4);
	udp[0] = (uint8_t)(sport >> 8), udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8), udp[3] = (uint8_t)dport;
	udp[5] = 30;
	uint32_t sum = 0;
	for (unsigned i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = ~((sum & 0xFFFF) + (sum >> 16)) & 0xFFFF;
	ip[10] = (uint8_t)(sum >> 8), ip[11] = (uint8_t)sum;
	struct rsw_pkt_meta m;
	assert_int_equal(rsw_parse(fr, 64, &m), 0);
	m.in_port = 0;
	struct rsw_ingress_ctx ctx = {.rnd = 1, .now_ns = t_us * 1000};
	rsw_ingress(rsw_switch_fib(sw), fr, &m, &ctx);
	assert_int_equal(m.drop, 0);
	if (out)
		*out = m;
	return m.egress_port;
}

/* Bytes each of ports 1..3 has sent (monotonic), nothing queued, sampled at t_us. */
static void sample(struct rsw_switch *sw, uint64_t t_us, uint64_t p1, uint64_t p2, uint64_t p3)
{
	struct rsw_ars_sample s[4] = {{0}, {p1, 0}, {p2, 0}, {p3, 0}};
	rsw_ars_sample(rsw_switch_fib(sw)->ars, t_us * 1000, s);
}

static const struct rsw_ars_stats *stats(struct rsw_switch *sw)
{
	return &rsw_switch_fib(sw)->groups[0].ars->st;
}

static unsigned band(struct rsw_switch *sw, unsigned port)
{
	return rsw_switch_fib(sw)->ars->port[port].band;
}

/* The two samples every test starts from: at 10 us ports 1..3 sent 8000, 4000, 0 bytes:
 * averages (0 + x) / 2 = 4000, 2000, 0, bands 4, 2, 0: port 3 is the best. */
static void first_samples(struct rsw_switch *sw)
{
	sample(sw, 0, 0, 0, 0); /* the baseline */
	sample(sw, 10, 8000, 4000, 0);
	assert_int_equal(rsw_switch_fib(sw)->ars->port[1].load_avg, 4000);
	assert_int_equal(band(sw, 1), 4);
	assert_int_equal(band(sw, 2), 2);
	assert_int_equal(band(sw, 3), 0);
}

/* At 30 us (two intervals since 10 us) port 3 sent 16000 bytes (8000 an interval), the others
 * nothing: port 1 4000 -> 2000 -> 1000 (band 1), port 2 2000 -> 1000 -> 500 (band 0), port 3
 * 0 -> 4000 -> 6000 (band 6): port 2 is the best. */
static void second_sample(struct rsw_switch *sw)
{
	sample(sw, 30, 8000, 4000, 16000);
	const struct rsw_ars_port *p = rsw_switch_fib(sw)->ars->port;
	assert_int_equal(p[1].load_avg, 1000);
	assert_int_equal(p[2].load_avg, 500);
	assert_int_equal(p[3].load_avg, 6000);
	assert_int_equal(band(sw, 1), 1);
	assert_int_equal(band(sw, 2), 0);
	assert_int_equal(band(sw, 3), 6);
}

static void bands_and_weights(void **state)
{
	(void)state;
	/* 8 equal steps between the thresholds */
	assert_int_equal(rsw_ars_band(0, 0, 8000), 0);
	assert_int_equal(rsw_ars_band(999, 0, 8000), 0);
	assert_int_equal(rsw_ars_band(1000, 0, 8000), 1);
	assert_int_equal(rsw_ars_band(7999, 0, 8000), 7);
	assert_int_equal(rsw_ars_band(1u << 30, 0, 8000), 7);
	assert_int_equal(rsw_ars_band(3000, 2000, 4000), 4); /* (3000-2000)*8/2000 */
	/* avg = (avg * (2^e - 1) + x) / 2^e: e = 2, 1000 then x = 5000: (3000 + 5000) / 4 */
	assert_int_equal(rsw_ars_ewma(1000, 5000, 2), 2000);
	assert_int_equal(rsw_ars_ewma(1000, 5000, 0), 5000);
	struct rsw_ars_profile p = {.load_weight = 50, .queue_weight = 50};
	assert_int_equal(rsw_ars_combine(&p, 6, 2), 4);   /* (300 + 100) / 100 */
	p.load_weight = 25, p.queue_weight = 75;
	assert_int_equal(rsw_ars_combine(&p, 7, 0), 1);   /* 175 / 100 */
	struct rsw_switch *sw = ars_switch("per_flowlet_quality", 64, "up");
	first_samples(sw);
	second_sample(sw);
	/* at 70 us, four intervals since 30 us: port 1 sent 40000 more (10000 an interval):
	 * 1000 -> 5500 -> 7750 -> 8875 -> 9437, band 7 */
	sample(sw, 70, 48000, 4000, 16000);
	assert_int_equal(rsw_switch_fib(sw)->ars->port[1].load_avg, 9437);
	assert_int_equal(band(sw, 1), 7);
	rsw_switch_free(sw);
}

static void flowlet_stays_then_moves(void **state)
{
	(void)state;
	struct rsw_switch *sw = ars_switch("per_flowlet_quality", 64, "up");
	first_samples(sw);
	assert_int_equal(send_at(sw, 1000, 4791, 11, NULL), 3); /* new flowlet: the best */
	assert_int_equal(send_at(sw, 1000, 4791, 20, NULL), 3);
	second_sample(sw); /* now port 2 is the best, port 3 the worst */
	/* 20 us after its last packet (< 50 us idle time): the flow stays */
	assert_int_equal(send_at(sw, 1000, 4791, 40, NULL), 3);
	assert_int_equal(stats(sw)->nexthop_reassignments, 0);
	/* 60 us of silence (> 50 us): its next packet moves to the best member */
	assert_int_equal(send_at(sw, 1000, 4791, 100, NULL), 2);
	assert_int_equal(stats(sw)->nexthop_reassignments, 1);
	assert_int_equal(stats(sw)->port_reassignments, 1);
	assert_int_equal(stats(sw)->packets, 4);
	/* not UDP/4791: the static hash choice, not counted */
	struct rsw_pkt_meta m;
	send_at(sw, 1000, 5000, 101, &m);
	const struct rsw_fib *f = rsw_switch_fib(sw);
	const struct rsw_fib_group *g = &f->groups[0];
	assert_int_equal(m.egress_port, f->nh[g->slot_nh[g->bucket_slot[m.bucket]]].port);
	assert_int_equal(stats(sw)->packets, 4);
	rsw_switch_free(sw);
}

static void per_packet_sprays_to_least_loaded(void **state)
{
	(void)state;
	struct rsw_switch *sw = ars_switch("per_packet_quality", 64, "up");
	/* before any sample every band is 0: packets spread over the three (seeded ties) */
	unsigned seen[4] = {0};
	for (unsigned i = 0; i < 300; i++)
		seen[send_at(sw, 1000, 4791, i, NULL)]++;
	assert_true(seen[1] > 50 && seen[2] > 50 && seen[3] > 50);
	/* the same seed decides the same way: a fresh switch repeats the first 50 choices */
	struct rsw_switch *again = ars_switch("per_packet_quality", 64, "up");
	struct rsw_switch *twin = ars_switch("per_packet_quality", 64, "up");
	for (unsigned i = 0; i < 50; i++)
		assert_int_equal(send_at(again, 1000, 4791, i, NULL),
				 send_at(twin, 1000, 4791, i, NULL));
	rsw_switch_free(twin);
	rsw_switch_free(again);
	first_samples(sw); /* port 3 least loaded: every packet of every flow goes there */
	for (unsigned i = 0; i < 50; i++)
		assert_int_equal(send_at(sw, (uint16_t)(2000 + i % 5), 4791, 2000 + i, NULL), 3);
	second_sample(sw); /* now port 2: the next packet already goes there, no idle time */
	assert_int_equal(send_at(sw, 2000, 4791, 2100, NULL), 2);
	assert_int_equal(send_at(sw, 2000, 4791, 2100, NULL), 2);
	rsw_switch_free(sw);
}

static void fixed_never_moves(void **state)
{
	(void)state;
	struct rsw_switch *sw = ars_switch("fixed", 64, "up");
	first_samples(sw);
	assert_int_equal(send_at(sw, 1000, 4791, 11, NULL), 3);
	second_sample(sw);
	assert_int_equal(send_at(sw, 1000, 4791, 500, NULL), 3); /* long idle: still there */
	assert_int_equal(stats(sw)->nexthop_reassignments, 0);
	rsw_switch_free(sw);
}

static void down_member_never_chosen(void **state)
{
	(void)state;
	/* Ethernet24 down: port 3 would be the best (band 0) but is no member any more */
	struct rsw_switch *sw = ars_switch("per_packet_quality", 64, "down");
	first_samples(sw);
	for (unsigned i = 0; i < 200; i++)
		assert_int_not_equal(send_at(sw, (uint16_t)(3000 + i), 4791, 20 + i, NULL), 3);
	rsw_switch_free(sw);
	/* a flowlet on a member whose port goes down moves at once, within its idle time */
	sw = ars_switch("per_flowlet_quality", 64, "up");
	first_samples(sw);
	assert_int_equal(send_at(sw, 1000, 4791, 11, NULL), 3);
	struct rsw_txn *t = rsw_txn_new();
	struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_PORT};
	w.u.port = sw->state->ports[3];
	w.u.port.admin_up = 0;
	assert_int_equal(rsw_txn_add(t, &w), 0);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), 0);
	rsw_txn_free(t);
	rsw_switch_reap(sw);
	/* the averages came along: port 2 (band 2) is better than port 1 (band 4) */
	assert_int_equal(send_at(sw, 1000, 4791, 12, NULL), 2);
	assert_int_equal(stats(sw)->nexthop_reassignments, 1);
	rsw_switch_free(sw);
}

static void table_full_takes_the_static_member(void **state)
{
	(void)state;
	struct rsw_switch *sw = ars_switch("per_flowlet_quality", 1, "up"); /* one entry */
	first_samples(sw);
	struct rsw_pkt_meta a, b;
	assert_int_equal(send_at(sw, 1000, 4791, 11, &a), 3);
	/* another flow while the first is active: the entry is held, the static member */
	send_at(sw, 1001, 4791, 12, &b);
	assert_int_not_equal(a.hash, b.hash);
	const struct rsw_fib *f = rsw_switch_fib(sw);
	const struct rsw_fib_group *g = &f->groups[0];
	assert_int_equal(b.egress_port, f->nh[g->slot_nh[g->bucket_slot[b.bucket]]].port);
	assert_int_equal(stats(sw)->table_full, 1);
	/* once the first has been idle past 50 us, the second takes the entry: the best member */
	assert_int_equal(send_at(sw, 1001, 4791, 100, NULL), 3);
	assert_int_equal(stats(sw)->table_full, 1);
	rsw_switch_free(sw);
}

/* The counters as `show ars`, the metrics page and summary.json get them: after the flowlet
 * test's packets (4 decided, moved once to another port) and one packet with no member. */
static void counters_as_reported(void **state)
{
	(void)state;
	struct rsw_switch *sw = ars_switch("per_flowlet_quality", 64, "up");
	first_samples(sw);
	send_at(sw, 1000, 4791, 11, NULL);
	send_at(sw, 1000, 4791, 20, NULL);
	second_sample(sw);
	send_at(sw, 1000, 4791, 40, NULL);
	send_at(sw, 1000, 4791, 100, NULL);
	rsw_ars_count_drop(rsw_switch_fib(sw)->groups[0].ars);
	json_t *a = rsw_ars_groups_json(rsw_switch_fib(sw));
	assert_int_equal(json_array_size(a), 1);
	json_t *g = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(g, "group")), "up");
	assert_string_equal(json_string_value(json_object_get(g, "object")), "a");
	assert_string_equal(json_string_value(json_object_get(g, "mode")), "per_flowlet_quality");
	static const struct {
		const char *key;
		long long v;
	} want[] = {
		{"flowlet_idle_time", 50}, {"max_flows", 64}, {"RSW_ARS_PACKETS", 4},
		{"SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS", 1},
		{"SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS", 1},
		{"SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS", 1}, {"RSW_ARS_FLOWLET_TABLE_FULL", 0},
	};
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(json_integer_value(json_object_get(g, want[i].key)), want[i].v);
	json_decref(a);
	rsw_switch_free(sw);
}

int main(void)
{
	if (rsw_eal_init_quiet("test_ars") < 0)
		return 1;
	rsw_fib_compact_ipv4(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bands_and_weights),
		cmocka_unit_test(flowlet_stays_then_moves),
		cmocka_unit_test(per_packet_sprays_to_least_loaded),
		cmocka_unit_test(fixed_never_moves),
		cmocka_unit_test(down_member_never_chosen),
		cmocka_unit_test(table_full_takes_the_static_member),
		cmocka_unit_test(counters_as_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
