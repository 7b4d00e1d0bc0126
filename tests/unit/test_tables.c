/* Table-write API: transactions are atomic (also prepared and published in steps); resilient groups keep flows through member changes
 * made by config writes and by a port going down; policy routes override the LPM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/cli/eal_quiet.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/tables/switch.h"

static char err[1024];

static void port(struct rsw_txn *t, const char *name)
{
	struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_PORT};
	snprintf(w.u.port.name, RSW_NAME_MAX, "%s", name);
	w.u.port.admin_up = 1;
	w.u.port.speed_mbps = 400000;
	strcpy(w.u.port.dscp_to_tc_map, "AZURE");
	strcpy(w.u.port.tc_to_pg_map, "AZURE");
	assert_int_equal(rsw_txn_add(t, &w), 0);
}

static void neigh(struct rsw_txn *t, uint16_t p, const char *ip)
{
	struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_NEIGHBOR};
	w.u.neigh.port = p;
	assert_int_equal(rsw_ip_parse(ip, &w.u.neigh.ip), 0);
	w.u.neigh.mac[5] = (uint8_t)(p + 1);
	assert_int_equal(rsw_txn_add(t, &w), 0);
}

static void group(struct rsw_txn *t, unsigned n_members, unsigned skip)
{
	struct rsw_table_write *w = calloc(1, sizeof(*w));
	w->op = RSW_W_SET;
	w->table = RSW_T_NHG;
	strcpy(w->u.nhg.name, "up");
	strcpy(w->u.nhg.policy, RSW_DEFAULT_POLICY);
	w->u.nhg.n_buckets = 4096;
	w->u.nhg.resilient = 1;
	for (unsigned i = 0; i < n_members; i++) {
		char ip[32];
		if (i == skip)
			continue;
		snprintf(ip, sizeof(ip), "10.255.0.%u", 2 * i + 1);
		rsw_ip_parse(ip, &w->u.nhg.members[w->u.nhg.n_members++].ip);
	}
	assert_int_equal(rsw_txn_add(t, w), 0);
	free(w);
}

static void route(struct rsw_txn *t, const char *pfx, const char *grp, const char *nh, int in_port)
{
	struct rsw_table_write w = {.op = RSW_W_INSERT, .table = RSW_T_ROUTE};
	assert_int_equal(rsw_prefix_parse(pfx, &w.u.route.prefix), 0);
	w.u.route.in_port = in_port;
	if (grp) {
		w.u.route.target = RSW_TGT_GROUP;
		strcpy(w.u.route.group, grp);
	} else {
		w.u.route.target = RSW_TGT_NEXTHOP;
		rsw_ip_parse(nh, &w.u.route.nexthop);
	}
	snprintf(w.u.route.origin, RSW_ORIGIN_MAX, "test:%s", pfx);
	assert_int_equal(rsw_txn_add(t, &w), 0);
}

/* 8 uplink ports 0..7 each with one neighbour, a 4096-bucket group over them, 10/8 → group. */
static struct rsw_switch *eight_way(void)
{
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	assert_non_null(sw);
	struct rsw_txn *t = rsw_txn_new();
	for (unsigned i = 0; i < 9; i++) {
		char n[16];
		snprintf(n, sizeof(n), "Ethernet%u", i * 8);
		port(t, n);
	}
	for (unsigned i = 0; i < 8; i++) {
		char ip[32];
		snprintf(ip, sizeof(ip), "10.255.0.%u", 2 * i + 1);
		neigh(t, (uint16_t)i, ip);
	}
	group(t, 8, 99);
	route(t, "10.0.0.0/8", "up", NULL, -1);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), 0);
	rsw_txn_free(t);
	return sw;
}

static uint32_t *bucket_ports(const struct rsw_fib *f)
{
	const struct rsw_fib_group *g = &f->groups[0];
	uint32_t *out = malloc(g->n_buckets * sizeof(uint32_t));
	for (uint32_t b = 0; b < g->n_buckets; b++)
		out[b] = f->nh[g->slot_nh[g->bucket_slot[b]]].port;
	return out;
}

static void only_removed_members_buckets_move(const uint32_t *before, const uint32_t *after,
					      uint32_t gone_port)
{
	unsigned moved = 0;
	for (unsigned b = 0; b < 4096; b++) {
		if (before[b] == gone_port) {
			assert_int_not_equal(after[b], gone_port);
			moved++;
		} else {
			assert_int_equal(after[b], before[b]);
		}
	}
	assert_int_equal(moved, 512);
}

static void member_removed_by_config(void **state)
{
	(void)state;
	struct rsw_switch *sw = eight_way();
	uint32_t *before = bucket_ports(rsw_switch_fib(sw));
	struct rsw_txn *t = rsw_txn_new();
	group(t, 8, 3);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), 0);
	rsw_txn_free(t);
	uint32_t *after = bucket_ports(rsw_switch_fib(sw));
	only_removed_members_buckets_move(before, after, 3);
	free(before);
	free(after);
	rsw_switch_free(sw);
}

static void member_removed_by_port_down(void **state)
{
	(void)state;
	struct rsw_switch *sw = eight_way();
	uint32_t *before = bucket_ports(rsw_switch_fib(sw));
	struct rsw_txn *t = rsw_txn_new();
	struct rsw_table_write w = {.op = RSW_W_MODIFY, .table = RSW_T_PORT};
	w.u.port = sw->state->ports[6];
	w.u.port.admin_up = 0;
	rsw_txn_add(t, &w);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), 0);
	uint32_t *after = bucket_ports(rsw_switch_fib(sw));
	only_removed_members_buckets_move(before, after, 6);
	/* and back up: only buckets now moving to port 6 change */
	w.u.port.admin_up = 1;
	struct rsw_txn *t2 = rsw_txn_new();
	rsw_txn_add(t2, &w);
	assert_int_equal(rsw_switch_commit(sw, t2, err, sizeof(err)), 0);
	uint32_t *again = bucket_ports(rsw_switch_fib(sw));
	unsigned back = 0;
	for (unsigned b = 0; b < 4096; b++)
		if (again[b] != after[b]) {
			assert_int_equal(again[b], 6);
			back++;
		}
	assert_int_equal(back, 512);
	free(before);
	free(after);
	free(again);
	rsw_txn_free(t);
	rsw_txn_free(t2);
	rsw_switch_free(sw);
}

static void failed_transaction_changes_nothing(void **state)
{
	(void)state;
	struct rsw_switch *sw = eight_way();
	const struct rsw_fib *fib = rsw_switch_fib(sw);
	uint64_t gen = sw->generation;
	size_t routes = sw->state->n_routes;
	struct rsw_txn *t = rsw_txn_new();
	route(t, "10.9.0.0/16", NULL, "10.255.0.1", -1); /* fine on its own */
	route(t, "10.8.0.0/16", "no-such-group", NULL, -1);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "test:10.8.0.0/16"));
	assert_non_null(strstr(err, "no next-hop group named 'no-such-group'"));
	assert_ptr_equal(rsw_switch_fib(sw), fib);
	assert_int_equal(sw->generation, gen);
	assert_int_equal(sw->state->n_routes, routes);
	rsw_txn_free(t);
	/* a duplicate insert fails and also changes nothing */
	t = rsw_txn_new();
	route(t, "10.0.0.0/8", NULL, "10.255.0.1", -1);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already exists"));
	assert_ptr_equal(rsw_switch_fib(sw), fib);
	rsw_txn_free(t);
	/* every error at once: 60 routes to a missing group and a duplicate, each named, the
	 * first 50 listed in the order found (their origins hold no line) and "(11 more errors)" */
	t = rsw_txn_new();
	route(t, "10.0.0.0/8", NULL, "10.255.0.1", -1);
	for (unsigned i = 0; i < 60; i++) {
		char p[32];
		snprintf(p, sizeof(p), "10.%u.0.0/16", 100 + i);
		route(t, p, "missing", NULL, -1);
	}
	static char big[16384];
	assert_int_equal(rsw_switch_commit(sw, t, big, sizeof(big)), -1);
	unsigned lines = 0;
	for (const char *c = big; (c = strchr(c, '\n')); c++)
		lines++;
	assert_int_equal(lines, 50); /* 50 errors and the "more" line, one per line */
	assert_non_null(strstr(big, "test:10.0.0.0/8: "));
	assert_non_null(strstr(big, "already exists"));
	assert_non_null(strstr(big, "test:10.148.0.0/16: route 10.148.0.0/16: no next-hop group"));
	assert_null(strstr(big, "10.149.0.0/16"));
	assert_non_null(strstr(big, "\n(11 more errors)"));
	assert_ptr_equal(rsw_switch_fib(sw), fib);
	assert_int_equal(sw->generation, gen);
	rsw_txn_free(t);
	rsw_switch_free(sw);
}

static void lookup(const struct rsw_fib *f, uint16_t in_port, const char *dst, struct rsw_pkt_meta *m)
{
	static uint8_t frame[64];
	struct rsw_ip ip;
	memset(m, 0, sizeof(*m));
	memset(frame, 0, sizeof(frame));
	m->l3 = RSW_L3_IPV4;
	m->ttl = 64;
	m->in_port = in_port;
	rsw_ip_parse(dst, &ip);
	memcpy(m->dst_ip, ip.a, 4);
	rsw_ingress(f, frame, m, NULL);
}

static void policy_route_overrides(void **state)
{
	(void)state;
	struct rsw_switch *sw = eight_way();
	struct rsw_txn *t = rsw_txn_new();
	route(t, "10.3.0.0/16", NULL, "10.255.0.5", 8); /* pinned for ingress port 8 only */
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), 0);
	rsw_txn_free(t);
	/* dmac check: the test frame has a zero MAC, accept any unicast for this check */
	sw->fib->dmac_check = 0;
	struct rsw_pkt_meta m;
	for (unsigned i = 0; i < 64; i++) {
		char dst[32];
		snprintf(dst, sizeof(dst), "10.3.%u.%u", i, i * 3);
		lookup(rsw_switch_fib(sw), 8, dst, &m);
		assert_int_equal(m.drop, 0);
		assert_int_equal(m.egress_port, 2);
		assert_int_equal(m.via_group, 0);
	}
	lookup(rsw_switch_fib(sw), 7, "10.3.0.1", &m);
	assert_int_equal(m.via_group, 1);
	lookup(rsw_switch_fib(sw), 8, "11.0.0.1", &m);
	assert_int_equal(m.drop, RSW_DROP_LPM4_MISS);
	rsw_switch_free(sw);
}

/* Two switches changed together (a zone's reload): prepared tables are invisible until
 * published; an abort leaves the switch exactly as it was (same tables, generation, routes), and
 * the lock is free again afterwards (a commit after it goes through). */
static void prepare_abort_publish(void **state)
{
	(void)state;
	struct rsw_switch *a = eight_way(), *b = eight_way();
	const struct rsw_fib *fa = rsw_switch_fib(a), *fb = rsw_switch_fib(b);
	uint64_t ga = a->generation, gb = b->generation;
	struct rsw_txn *t = rsw_txn_new();
	route(t, "10.9.0.0/16", NULL, "10.255.0.1", -1);
	struct rsw_switch_prep pa, pb;
	assert_int_equal(rsw_switch_prepare(a, t, &pa, err, sizeof(err)), 0);
	assert_int_equal(rsw_switch_prepare(b, t, &pb, err, sizeof(err)), 0);
	assert_ptr_equal(rsw_switch_fib(a), fa); /* prepared, not visible */
	assert_int_equal(a->generation, ga);
	rsw_switch_abort(a, &pa);
	assert_ptr_equal(rsw_switch_fib(a), fa);
	assert_int_equal(a->generation, ga);
	assert_int_equal(a->state->n_routes, 1);
	rsw_switch_publish(b, &pb);
	rsw_switch_release(b, &pb);
	assert_ptr_not_equal(rsw_switch_fib(b), fb);
	assert_int_equal(b->generation, gb + 1);
	assert_int_equal(b->state->n_routes, 2);
	struct rsw_pkt_meta m;
	lookup(rsw_switch_fib(b), 8, "10.9.1.1", &m);
	assert_int_equal(m.via_group, 0);
	assert_int_equal(rsw_switch_commit(a, t, err, sizeof(err)), 0); /* a's lock is free */
	assert_int_equal(a->generation, ga + 1);
	/* a failing prepare changes nothing and leaves the lock free */
	struct rsw_txn *bad = rsw_txn_new();
	route(bad, "10.8.0.0/16", "no-such-group", NULL, -1);
	assert_int_equal(rsw_switch_prepare(a, bad, &pa, err, sizeof(err)), -1);
	assert_int_equal(a->generation, ga + 1);
	assert_int_equal(rsw_switch_commit(b, bad, err, sizeof(err)), -1);
	rsw_txn_free(bad);
	rsw_txn_free(t);
	rsw_switch_free(a);
	rsw_switch_free(b);
}

/* rsw_ingress_burst decides each packet as rsw_ingress does: a policy route for its ingress port
 * (to port 2), the group, an LPM miss and an expired TTL interleaved in one burst; the packets
 * the index list leaves out are not touched. */
static void burst_decides_as_one_by_one(void **state)
{
	(void)state;
	struct rsw_switch *sw = eight_way();
	struct rsw_txn *t = rsw_txn_new();
	route(t, "10.3.0.0/16", NULL, "10.255.0.5", 8);
	assert_int_equal(rsw_switch_commit(sw, t, err, sizeof(err)), 0);
	rsw_txn_free(t);
	sw->fib->dmac_check = 0;
	const struct rsw_fib *f = rsw_switch_fib(sw);
	enum { N = 40 };
	static uint8_t frames[N][64];
	const uint8_t *frame[N];
	struct rsw_pkt_meta meta[N], one[N];
	uint16_t idx[N];
	unsigned n = 0;
	for (unsigned i = 0; i < N; i++) {
		char dst[32];
		unsigned kind = i % 5;
		snprintf(dst, sizeof(dst), kind == 3 ? "11.0.%u.1" : kind == 0 ? "10.3.%u.7" : "10.%u.0.9",
			 i);
		lookup(f, kind == 0 ? 8 : 7, dst, &one[i]); /* one by one, for the group's choice */
		meta[i] = one[i];
		meta[i].drop = 0;
		meta[i].egress_port = 0;
		meta[i].nexthop = 0;
		meta[i].via_group = 0;
		meta[i].tc = meta[i].pg = 0;
		meta[i].hash = meta[i].bucket = meta[i].member = meta[i].group = 0;
		if (kind == 4)
			meta[i].ttl = one[i].ttl = 1;
		memset(frames[i], 0, sizeof(frames[i]));
		frame[i] = frames[i];
		if (i % 7 != 6)
			idx[n++] = (uint16_t)i;
	}
	rsw_ingress_burst(f, frame, meta, idx, n, NULL);
	for (unsigned i = 0; i < N; i++) {
		unsigned kind = i % 5;
		if (i % 7 == 6) { /* left out: as it was */
			assert_int_equal(meta[i].drop, 0);
			assert_int_equal(meta[i].via_group, 0);
			continue;
		}
		if (kind == 0) {
			assert_int_equal(meta[i].drop, 0);
			assert_int_equal(meta[i].egress_port, 2);
			assert_int_equal(meta[i].via_group, 0);
		} else if (kind == 3) {
			assert_int_equal(meta[i].drop, RSW_DROP_LPM4_MISS);
		} else if (kind == 4) {
			assert_int_equal(meta[i].drop, RSW_DROP_TTL_EXPIRED);
		} else {
			assert_int_equal(meta[i].drop, 0);
			assert_int_equal(meta[i].via_group, 1);
			assert_int_equal(meta[i].egress_port, one[i].egress_port);
			assert_int_equal(meta[i].bucket, one[i].bucket);
		}
	}
	rsw_switch_free(sw);
}

/* One spelling per prefix: the length is plain decimal in the family's width, the address what
 * inet_pton takes (no spaces, no leading zeros in IPv4 octets). */
static void prefix_parser_is_strict(void **state)
{
	(void)state;
	struct rsw_prefix p;
	static const char *const good[] = {"10.0.0.0/8", "0.0.0.0/0", "10.1.2.3/32", "2001:db8::/32",
					   "::/0", "2001:db8::1/128"};
	static const char *const bad[] = {"10.0.0.0/016", "10.0.0.0/ 8", "10.0.0.0/+8", "10.0.0.0/-8",
					  "10.0.0.0/8 ", " 10.0.0.0/8", "010.0.0.0/8", "10.0.0.0/00",
					  "10.0.0.0/", "10.0.0.0", "10.0.0.0/33", "::/129", "::/0128",
					  "10.0.0.0/8/8", "10.0.0.0/0x8", "10.0.0.0/8\n", "/8", "10.0.0.0/1e1"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(rsw_prefix_parse(good[i], &p), 0);
	assert_int_equal(rsw_prefix_parse("10.0.0.0/8", &p), 0);
	assert_int_equal(p.len, 8);
	assert_int_equal(rsw_prefix_parse("2001:db8::/32", &p), 0);
	assert_int_equal(p.len, 32);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s\n", bad[i]);
		assert_int_equal(rsw_prefix_parse(bad[i], &p), -1);
	}
	assert_int_equal(rsw_prefix_parse("10.0.0.1/8", &p), -2);
}

int main(void)
{
	if (rsw_eal_init_quiet("test_tables") < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(member_removed_by_config),
		cmocka_unit_test(member_removed_by_port_down),
		cmocka_unit_test(failed_transaction_changes_nothing),
		cmocka_unit_test(policy_route_overrides),
		cmocka_unit_test(prepare_abort_publish),
		cmocka_unit_test(burst_decides_as_one_by_one),
		cmocka_unit_test(prefix_parser_is_strict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
