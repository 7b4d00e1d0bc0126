/* The compact IPv4 route table (a RIB trie, rte_fib's RTE_FIB_DUMMY) that replay uses answers
 * exactly as the live dataplane's DIR-24-8 and as a longest-prefix match done by hand, and costs
 * memory in proportion to its routes, not DIR-24-8's 2^24 four-byte entries (64 MiB).
 *
 * 3000 random routes, nested (lengths 1 to 32, most inside 10.0.0.0/8), each to its own next hop;
 * 200,000 addresses looked up in both tables and by a linear walk over the routes; the compact
 * table's exact matches of its longest prefix lengths answer exactly where the longest match
 * has one of those lengths; a zone's switch with a /32 per host and a /16 never walks the trie. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_fib.h>
#include <rte_malloc.h>

#include "control/cli/eal_quiet.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/state.h"

enum { ROUTES = 3000, LOOKUPS = 200000 };

static char err[1024];
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t prefix_addr[ROUTES];
static uint8_t prefix_len[ROUTES];
static unsigned n_routes;

static uint32_t mask(unsigned len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* n routes; lengths from lens[] (n_lens of them), or 1 to 32 when n_lens is 0 */
static struct rsw_state *state_with_routes(unsigned n, const uint8_t *lens, unsigned n_lens)
{
	struct rsw_state *s = rsw_state_new();
	assert_non_null(s);
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = RSW_W_INSERT;
	w.table = RSW_T_PORT;
	snprintf(w.u.port.name, sizeof(w.u.port.name), "Ethernet0");
	w.u.port.admin_up = 1;
	strcpy(w.u.port.dscp_to_tc_map, "AZURE"); /* the built-in maps */
	strcpy(w.u.port.tc_to_pg_map, "AZURE");
	assert_int_equal(rsw_state_apply(s, &w, err, sizeof(err)), 0);
	n_routes = 0;
	while (n_routes < n) {
		unsigned len = n_lens ? lens[next() % n_lens] : 1 + (unsigned)(next() % 32);
		uint32_t a = (uint32_t)next();
		if (next() % 4)
			a = 0x0A000000u | (a & 0x00FFFFFFu); /* 10/8: nested prefixes */
		if (len < 8)
			len += 8;
		a &= mask(len);
		int dup = 0;
		for (unsigned i = 0; i < n_routes && !dup; i++)
			dup = prefix_addr[i] == a && prefix_len[i] == len;
		if (dup)
			continue;
		memset(&w, 0, sizeof(w));
		w.op = RSW_W_INSERT;
		w.table = RSW_T_ROUTE;
		w.u.route.in_port = -1;
		w.u.route.target = RSW_TGT_NEXTHOP;
		w.u.route.prefix.ip.family = 4;
		w.u.route.prefix.ip.a[0] = (uint8_t)(a >> 24);
		w.u.route.prefix.ip.a[1] = (uint8_t)(a >> 16);
		w.u.route.prefix.ip.a[2] = (uint8_t)(a >> 8);
		w.u.route.prefix.ip.a[3] = (uint8_t)a;
		w.u.route.prefix.len = (uint8_t)len;
		/* next hop 192.168.x.y: route i's own */
		w.u.route.nexthop.family = 4;
		w.u.route.nexthop.a[0] = 192;
		w.u.route.nexthop.a[1] = 168;
		w.u.route.nexthop.a[2] = (uint8_t)(n_routes >> 8);
		w.u.route.nexthop.a[3] = (uint8_t)n_routes;
		snprintf(w.u.route.origin, sizeof(w.u.route.origin), "test");
		if (rsw_state_apply(s, &w, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		prefix_addr[n_routes] = a;
		prefix_len[n_routes++] = (uint8_t)len;
	}
	if (rsw_state_finish(s, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return s;
}

/* The route index i that a longest-prefix match picks for addr, or -1. */
static long by_hand(uint32_t addr)
{
	long best = -1;
	for (unsigned i = 0; i < n_routes; i++)
		if ((addr & mask(prefix_len[i])) == prefix_addr[i] &&
		    (best < 0 || prefix_len[i] > prefix_len[best]))
			best = i;
	return best;
}

static size_t heap_used(void)
{
	struct rte_malloc_socket_stats st;
	size_t used = 0;
	for (int sock = 0; sock < RTE_MAX_NUMA_NODES; sock++)
		if (rte_malloc_get_socket_stats(sock, &st) == 0)
			used += st.heap_allocsz_bytes;
	return used;
}

/* the next-hop index f gives to 192.168.(i>>8).(i&255) */
static uint32_t nh_of_route(const struct rsw_fib *f, unsigned i)
{
	for (uint32_t k = 0; k < f->n_nh; k++)
		if (f->nh[k].ip.a[0] == 192 && f->nh[k].ip.a[2] == (uint8_t)(i >> 8) &&
		    f->nh[k].ip.a[3] == (uint8_t)i)
			return RSW_LPM_NEXTHOP << RSW_LPM_KIND_SHIFT | k;
	fail_msg("route %u has no next hop in the table", i);
	return 0;
}

static void test_compact_answers_as_dir24_8(void **st)
{
	(void)st;
	struct rsw_state *s = state_with_routes(ROUTES, NULL, 0);
	unsigned n_long = 0;
	size_t h0 = heap_used();
	rsw_fib_compact_ipv4(0);
	struct rsw_fib *wide = rsw_fib_build(s, 1, err, sizeof(err));
	assert_non_null(wide);
	size_t h1 = heap_used();
	rsw_fib_compact_ipv4(1);
	struct rsw_fib *compact = rsw_fib_build(s, 2, err, sizeof(err));
	assert_non_null(compact);
	size_t h2 = heap_used();
	printf("DPDK memory for %u routes: DIR-24-8 %zu KiB, compact %zu KiB\n", n_routes,
	       (h1 - h0) / 1024, (h2 - h1) / 1024);
	assert_true(h1 - h0 >= (1u << 24) * 4u);      /* tbl24: 2^24 entries of 4 bytes */
	assert_true(h2 - h1 < n_routes * 1024u + (1u << 20)); /* in proportion to the routes */
	for (unsigned n = 0; n < LOOKUPS; n++) {
		uint32_t addr = (uint32_t)next();
		if (n % 4 == 1) /* a route's own address: every /32 route is hit */
			addr = prefix_addr[next() % n_routes];
		else if (n % 4) /* mostly where the routes are, near a route's own prefix */
			addr = prefix_addr[next() % n_routes] | ((uint32_t)next() & 0xFFu);
		uint64_t a, b;
		rte_fib_lookup_bulk(wide->fib4, &addr, &a, 1);
		rte_fib_lookup_bulk(compact->fib4, &addr, &b, 1);
		long r = by_hand(addr);
		uint64_t want = r < 0 ? RSW_FIB4_MISS : nh_of_route(wide, (unsigned)r);
		if (a != want || b != want)
			fail_msg("%08x: by hand %llx, DIR-24-8 %llx, compact %llx", addr,
				 (unsigned long long)want, (unsigned long long)a,
				 (unsigned long long)b);
		/* the compact table's longest lengths (here 32 down to 29) by exact match: a hit
		 * exactly where the longest match has one of them, with its answer */
		uint32_t h = rsw_long4_find(&compact->long4, addr);
		if (r >= 0 && prefix_len[r] > 32 - RSW_LONG4_LENS)
			assert_int_equal(h, want);
		else
			assert_int_equal(h, RSW_LONG4_EMPTY);
		n_long += h != RSW_LONG4_EMPTY;
	}
	assert_non_null(compact->long4.slot);
	assert_int_equal(compact->long4.n_len, RSW_LONG4_LENS);
	assert_int_equal(compact->long4.len[0], 32);
	assert_null(wide->long4.slot);
	assert_true(n_long > LOOKUPS / 100); /* the exact-match path was taken */
	rsw_fib_free(wide);
	rsw_fib_free(compact);
	rsw_state_free(s);
}

/* A zone switch's shape: /32s for its hosts and a /16 for the rest (and a /8 beside): every
 * lookup that some route matches is answered by the exact-match lengths, never by the trie. */
static void test_zone_shaped_table_never_walks_the_trie(void **st)
{
	(void)st;
	static const uint8_t lens[] = {32, 32, 32, 16, 8};
	struct rsw_state *s = state_with_routes(600, lens, sizeof(lens));
	rsw_fib_compact_ipv4(1);
	struct rsw_fib *f = rsw_fib_build(s, 3, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(f->long4.n_len, 3);
	unsigned hits = 0;
	for (unsigned n = 0; n < LOOKUPS / 4; n++) {
		uint32_t addr = prefix_addr[next() % n_routes] | ((uint32_t)next() & 0xFFFFu);
		if (n % 3 == 0)
			addr = prefix_addr[next() % n_routes];
		long r = by_hand(addr);
		uint32_t h = rsw_long4_find(&f->long4, addr);
		if (r < 0) {
			assert_int_equal(h, RSW_LONG4_EMPTY);
			continue;
		}
		assert_int_equal(h, nh_of_route(f, (unsigned)r));
		hits++;
	}
	assert_true(hits > LOOKUPS / 8);
	rsw_fib_free(f);
	rsw_state_free(s);
}

int main(void)
{
	if (rsw_eal_init_quiet("test_fib_compact") < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact_answers_as_dir24_8),
		cmocka_unit_test(test_zone_shaped_table_never_walks_the_trie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
