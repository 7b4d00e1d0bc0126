/* Config reload as a diff (dataplane/tables/state_diff.c): for pairs of configs A and B, the
 * writes diff(A, B) applied to A's tables give exactly the tables B builds on its own (every
 * table compared entry by entry, where each entry came from aside); the same config gives no
 * writes; a change of ports is refused; a group losing a member keeps every other bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dataplane/config/config.h"
#include "dataplane/tables/state_diff.h"

static char err[2048];

static const char *BASE =
	"DEVICE_METADATA:\n  localhost: {hostname: a, mac: \"02:00:00:00:01:00\"}\n"
	"PORT:\n  Ethernet0: {speed: 100000}\n  Ethernet8: {speed: 100000}\n"
	"  Ethernet16: {speed: 100000}\n  Ethernet24: {speed: 100000}\n";

static struct rsw_state *build(const char *extra)
{
	char path[] = "/tmp/rocesw-diff-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "%s%s", BASE, extra);
	fclose(f);
	struct rsw_txn *t = rsw_txn_new();
	int rc = rsw_config_compile(path, t, err, sizeof(err));
	unlink(path);
	if (rc < 0)
		fail_msg("%s", err);
	struct rsw_state *s = rsw_state_from_txn(t, err, sizeof(err));
	rsw_txn_free(t);
	if (!s)
		fail_msg("%s", err);
	return s;
}

/* Counts the entries of b that a holds with the same key and content (origin aside). */
#define SAME_SET(a, b, n, arr, key_eq)                                                          \
	do {                                                                                    \
		assert_int_equal((a)->n, (b)->n);                                               \
		for (size_t i_ = 0; i_ < (b)->n; i_++) {                                        \
			int found_ = 0;                                                         \
			for (size_t j_ = 0; j_ < (a)->n; j_++) {                                \
				__typeof__((a)->arr[0]) x_ = (a)->arr[j_], y_ = (b)->arr[i_];   \
				memset(x_.origin, 0, sizeof(x_.origin));                        \
				memset(y_.origin, 0, sizeof(y_.origin));                        \
				if (key_eq && !memcmp(&x_, &y_, sizeof(x_)))                    \
					found_ = 1;                                             \
			}                                                                       \
			assert_true(found_);                                                    \
		}                                                                               \
	} while (0)

static void assert_same(const struct rsw_state *a, const struct rsw_state *b)
{
	assert_memory_equal(&a->sw, &b->sw, sizeof(a->sw));
	assert_int_equal(a->n_ports, b->n_ports);
	for (unsigned p = 0; p < a->n_ports; p++) {
		struct rsw_port_cfg x = a->ports[p], y = b->ports[p];
		memset(x.origin, 0, sizeof(x.origin));
		memset(y.origin, 0, sizeof(y.origin));
		assert_memory_equal(&x, &y, sizeof(x));
	}
	SAME_SET(a, b, n_routes, routes, 1);
	SAME_SET(a, b, n_neigh, neigh, 1);
	SAME_SET(a, b, n_pol, pol, 1);
	SAME_SET(a, b, n_qos, qos, 1);
	SAME_SET(a, b, n_cls, cls, 1);
	SAME_SET(a, b, n_intf, intf, 1);
	assert_int_equal(a->n_nhg, b->n_nhg);
	for (size_t i = 0; i < b->n_nhg; i++) {
		const struct rsw_nhg *g = rsw_state_nhg(a, b->nhg[i]->name);
		assert_non_null(g);
		assert_string_equal(g->policy, b->nhg[i]->policy);
		assert_int_equal(g->n_members, b->nhg[i]->n_members);
		for (unsigned m = 0; m < g->n_members; m++)
			assert_true(rsw_ip_eq(&g->members[m].ip, &b->nhg[i]->members[m].ip));
	}
}

/* A + diff(A, B) == B. */
static struct rsw_state *apply_diff(const char *a_extra, const char *b_extra, size_t *writes)
{
	struct rsw_state *a = build(a_extra), *b = build(b_extra);
	struct rsw_txn *d = rsw_txn_new();
	assert_int_equal(rsw_state_diff(a, b, d, err, sizeof(err)), 0);
	*writes = rsw_txn_len(d);
	for (size_t i = 0; i < rsw_txn_len(d); i++)
		if (rsw_state_apply(a, rsw_txn_at(d, i), err, sizeof(err)) < 0)
			fail_msg("write %zu: %s", i, err);
	if (rsw_state_finish(a, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_same(a, b);
	rsw_txn_free(d);
	rsw_state_free(b);
	return a;
}

static const char *NEIGH =
	"NEIGH:\n  \"Ethernet8|10.255.0.1\": {neigh: \"02:00:00:00:20:01\"}\n"
	"  \"Ethernet16|10.255.0.3\": {neigh: \"02:00:00:00:20:03\"}\n"
	"  \"Ethernet24|10.255.0.5\": {neigh: \"02:00:00:00:20:05\"}\n";

static void test_pairs(void **state)
{
	(void)state;
	char a[4096], b[4096];
	size_t n;
	/* routes added, removed and changed; a group's members; a policy; a QoS map; a port field */
	snprintf(a, sizeof(a), "%sNEXTHOP_GROUP:\n  up: {nexthop: \"10.255.0.1,10.255.0.3\"}\n"
		 "STATIC_ROUTE:\n  \"10.2.0.0/16\": {nexthop_group: up}\n"
		 "  \"10.3.0.0/16\": {nexthop: 10.255.0.1}\n  \"10.9.0.0/16\": {blackhole: true}\n",
		 NEIGH);
	snprintf(b, sizeof(b), "%sNEXTHOP_GROUP:\n  up: {nexthop: \"10.255.0.1,10.255.0.3,10.255.0.5\"}\n"
		 "STATIC_ROUTE:\n  \"10.2.0.0/16\": {nexthop_group: up}\n"
		 "  \"10.3.0.0/16\": {nexthop: 10.255.0.5}\n  \"10.4.0.0/16\": {nexthop: 10.255.0.3}\n"
		 "HASH_POLICY:\n  qp: {algorithm: CRC_CCITT, fields: [SRC_IP]}\n"
		 "DSCP_TO_TC_MAP:\n  MINE: {\"26\": 3}\n", NEIGH);
	rsw_state_free(apply_diff(a, b, &n));
	assert_true(n >= 5);
	rsw_state_free(apply_diff(b, a, &n)); /* and back */
	/* a group and its route go away together */
	snprintf(b, sizeof(b), "%s", NEIGH);
	rsw_state_free(apply_diff(a, b, &n));
	/* the same file: nothing to do */
	rsw_state_free(apply_diff(a, a, &n));
	assert_int_equal(n, 0);
	/* a port field (admin status) is a MODIFY */
	char c[4096];
	snprintf(c, sizeof(c), "%s", a);
	rsw_state_free(apply_diff(c, "PORT_QOS_MAP:\n  Ethernet0: {pfc_enable: \"3\"}\n", &n));
}

static void test_ports_need_restart(void **state)
{
	(void)state;
	struct rsw_state *a = build(""), *b = build("  Ethernet32: {speed: 100000}\n");
	struct rsw_txn *d = rsw_txn_new();
	assert_int_equal(rsw_state_diff(a, b, d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "adding or removing ports needs a restart"));
	assert_int_equal(rsw_txn_len(d), 0);
	rsw_txn_free(d);
	rsw_state_free(a);
	rsw_state_free(b);
}

/* A member removed by reload: its buckets move, every other bucket stays. */
static void test_resilient_across_reload(void **state)
{
	(void)state;
	char a[4096], b[4096];
	snprintf(a, sizeof(a), "%sNEXTHOP_GROUP:\n  up: {nexthop: \"10.255.0.1,10.255.0.3,10.255.0.5\", "
		 "buckets: 96}\nSTATIC_ROUTE:\n  \"10.2.0.0/16\": {nexthop_group: up}\n", NEIGH);
	snprintf(b, sizeof(b), "%sNEXTHOP_GROUP:\n  up: {nexthop: \"10.255.0.1,10.255.0.5\", "
		 "buckets: 96}\nSTATIC_ROUTE:\n  \"10.2.0.0/16\": {nexthop_group: up}\n", NEIGH);
	struct rsw_state *before = build(a);
	const struct rsw_nhg *g0 = rsw_state_nhg(before, "up");
	uint16_t old[96];
	unsigned removed_slot = g0->members[1].slot;
	for (unsigned i = 0; i < 96; i++)
		old[i] = g0->rbt.bucket[i];
	size_t n;
	struct rsw_state *after = apply_diff(a, b, &n);
	const struct rsw_nhg *g1 = rsw_state_nhg(after, "up");
	unsigned moved = 0;
	for (unsigned i = 0; i < 96; i++) {
		if (old[i] == removed_slot) {
			assert_int_not_equal(g1->rbt.bucket[i], removed_slot);
			moved++;
		} else {
			assert_int_equal(g1->rbt.bucket[i], old[i]);
		}
	}
	assert_int_equal(moved, 32);
	rsw_state_free(before);
	rsw_state_free(after);
}

/* INTERFACE addresses move, appear and go by reload; a learnt (dynamic) neighbour is kept by a
 * reload whose config does not name it, and a configured one for its address replaces it. */
static void test_interfaces_and_learnt(void **state)
{
	(void)state;
	size_t n;
	const char *a = "INTERFACE:\n  \"Ethernet0|10.1.0.0/31\": {}\n"
			"  \"Ethernet8|fc00::2/127\": {}\n";
	const char *b = "INTERFACE:\n  \"Ethernet8|10.1.0.0/31\": {}\n"
			"  \"Ethernet16|10.1.0.2/24\": {}\n";
	rsw_state_free(apply_diff(a, b, &n));
	assert_int_equal(n, 4); /* two deletes, two sets */
	rsw_state_free(apply_diff(b, a, &n));

	struct rsw_state *cur = build(a), *next = build(a);
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = RSW_W_INSERT;
	w.table = RSW_T_NEIGHBOR;
	w.u.neigh.port = 0;
	w.u.neigh.dynamic = 1;
	assert_int_equal(rsw_ip_parse("10.1.0.1", &w.u.neigh.ip), 0);
	assert_int_equal(rsw_state_apply(cur, &w, err, sizeof(err)), 0);
	struct rsw_txn *d = rsw_txn_new();
	assert_int_equal(rsw_state_diff(cur, next, d, err, sizeof(err)), 0);
	assert_int_equal(rsw_txn_len(d), 0);
	rsw_txn_free(d);
	rsw_state_free(next);
	next = build("NEIGH:\n  \"Ethernet0|10.1.0.1\": {neigh: \"02:00:00:00:10:01\"}\n");
	d = rsw_txn_new();
	assert_int_equal(rsw_state_diff(cur, next, d, err, sizeof(err)), 0);
	for (size_t i = 0; i < rsw_txn_len(d); i++)
		assert_int_equal(rsw_state_apply(cur, rsw_txn_at(d, i), err, sizeof(err)), 0);
	assert_int_equal(cur->n_neigh, 1);
	assert_int_equal(cur->neigh[0].dynamic, 0);
	assert_int_equal(cur->neigh[0].mac[5], 0x01);
	assert_int_equal(cur->n_intf, 0);
	rsw_txn_free(d);
	rsw_state_free(cur);
	rsw_state_free(next);

	/* the subnet test: 10.1.0.0/31 holds .0 and .1, not .2; fc00::2/127 holds ::3 */
	struct rsw_prefix p;
	struct rsw_ip ip;
	assert_int_equal(rsw_prefix_parse("10.1.0.0/31", &p), 0);
	rsw_ip_parse("10.1.0.1", &ip);
	assert_true(rsw_prefix_contains(&p, &ip));
	rsw_ip_parse("10.1.0.2", &ip);
	assert_false(rsw_prefix_contains(&p, &ip));
	assert_int_equal(rsw_prefix_parse("fc00::2/127", &p), 0);
	rsw_ip_parse("fc00::3", &ip);
	assert_true(rsw_prefix_contains(&p, &ip));
	rsw_ip_parse("fc00::4", &ip);
	assert_false(rsw_prefix_contains(&p, &ip));
	assert_int_equal(rsw_prefix_parse("10.1.0.2/24", &p), -2); /* host bits: an address */
	rsw_ip_parse("10.1.0.200", &ip);
	assert_true(rsw_prefix_contains(&p, &ip));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_ports_need_restart),
		cmocka_unit_test(test_resilient_across_reload),
		cmocka_unit_test(test_interfaces_and_learnt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
