/* The shadow state's route index (dataplane/tables/route_index.c) and what it is for: loading,
 * cloning, diffing and deleting N routes costs O(N), not O(N^2).
 *
 * - 20,000 random inserts, modifies and deletes (IPv4 and IPv6, main table and policy routes)
 *   against a plain list kept beside: after each, rsw_state_route finds exactly the routes the
 *   list holds (checked by a linear walk, the old lookup) and nothing else.
 * - Growth: the same work (build from a transaction, clone, diff against a state with every
 *   tenth route changed, delete every route) for 20k and 80k routes, counted in the slots the
 *   index examines (rsw_route_index_probes): a count, not a time, so neither a busy machine nor
 *   the larger table's cache misses move it. Linear cost makes the ratio about 4; probe runs that
 *   grow with the table, 16. The test fails above 9, and above 4 slots examined an operation.
 * - Memory: a transaction of 20k route writes holds at most twice a route's own size per route
 *   (a write once took a next-hop group's 6 KiB: 7.2 GiB at 1M routes), the state built from it
 *   three times (its array doubles as it grows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__)
/* the sanitizer runtime's (its header is not installed with gcc here) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "dataplane/tables/route_index.h"
#include "dataplane/tables/state.h"
#include "dataplane/tables/state_diff.h"

static char err[1024];

static struct rsw_route route(unsigned i, int v6, int in_port)
{
	struct rsw_route r;
	memset(&r, 0, sizeof(r));
	r.in_port = in_port;
	r.target = RSW_TGT_BLACKHOLE;
	r.prefix.ip.family = v6 ? 6 : 4;
	if (v6) {
		r.prefix.ip.a[0] = 0x20;
		r.prefix.ip.a[1] = 0x01;
		r.prefix.ip.a[4] = (uint8_t)(i >> 16);
		r.prefix.ip.a[5] = (uint8_t)(i >> 8);
		r.prefix.ip.a[6] = (uint8_t)i;
		r.prefix.len = 64;
	} else {
		r.prefix.ip.a[0] = (uint8_t)(16 + (i >> 16));
		r.prefix.ip.a[1] = (uint8_t)(i >> 8);
		r.prefix.ip.a[2] = (uint8_t)i;
		r.prefix.len = 24;
	}
	snprintf(r.origin, sizeof(r.origin), "test");
	return r;
}

static int apply(struct rsw_state *s, uint8_t op, const struct rsw_route *r)
{
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = op;
	w.table = RSW_T_ROUTE;
	w.u.route = *r;
	return rsw_state_apply(s, &w, err, sizeof(err));
}

static long linear_find(const struct rsw_state *s, const struct rsw_route *r)
{
	for (size_t i = 0; i < s->n_routes; i++)
		if (s->routes[i].in_port == r->in_port && s->routes[i].prefix.len == r->prefix.len &&
		    rsw_ip_eq(&s->routes[i].prefix.ip, &r->prefix.ip))
			return (long)i;
	return -1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct rsw_state *with_ports(void)
{
	struct rsw_state *s = rsw_state_new();
	assert_non_null(s);
	for (unsigned p = 0; p < 2; p++) {
		struct rsw_table_write w;
		memset(&w, 0, sizeof(w));
		w.op = RSW_W_INSERT;
		w.table = RSW_T_PORT;
		snprintf(w.u.port.name, sizeof(w.u.port.name), "Ethernet%u", 8 * p);
		assert_int_equal(rsw_state_apply(s, &w, err, sizeof(err)), 0);
	}
	return s;
}

static void test_index_matches_a_list(void **st)
{
	(void)st;
	enum { KEYS = 3000 };
	static uint8_t present[KEYS];
	struct rsw_state *s = with_ports();
	memset(present, 0, sizeof(present));
	for (unsigned step = 0; step < 20000; step++) {
		unsigned k = (unsigned)(next() % KEYS);
		/* key k: IPv4 or IPv6, main table or a policy route of port 1 */
		struct rsw_route r = route(k / 4, k & 1, (k & 2) ? 1 : -1);
		if (present[k] && next() % 3 == 0) {
			r.target = RSW_TGT_NEXTHOP; /* modify: same key, new content */
			assert_int_equal(apply(s, RSW_W_MODIFY, &r), 0);
		} else if (present[k]) {
			assert_int_equal(apply(s, RSW_W_DELETE, &r), 0);
			present[k] = 0;
		} else {
			assert_int_equal(apply(s, RSW_W_INSERT, &r), 0);
			assert_int_not_equal(apply(s, RSW_W_INSERT, &r), 0); /* already exists */
			present[k] = 1;
		}
		if (step % 97 == 0 || step > 19900) {
			/* every key: found iff present, at the position a linear walk finds */
			struct rsw_state *c = rsw_state_clone(s);
			assert_non_null(c);
			for (unsigned j = 0; j < KEYS; j++) {
				struct rsw_route q = route(j / 4, j & 1, (j & 2) ? 1 : -1);
				const struct rsw_route *got = rsw_state_route(c, &q);
				long want = linear_find(c, &q);
				assert_int_equal(want >= 0, present[j]);
				assert_ptr_equal(got, want < 0 ? NULL : &c->routes[want]);
			}
			rsw_state_free(c);
		}
	}
	rsw_state_free(s);
}

/* The insert of the i-th route of the growth and memory runs: half of them IPv6. */
static struct rsw_table_write insert_route(unsigned i)
{
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = RSW_W_INSERT;
	w.table = RSW_T_ROUTE;
	w.u.route = route(i / 2, i & 1, -1);
	return w;
}

/* Load n routes (half IPv6) from a transaction, clone, diff against a state with every tenth
 * changed, delete them all. The index's slots examined. */
static double work(unsigned n)
{
	struct rsw_txn *a = rsw_txn_new(), *b = rsw_txn_new();
	assert_non_null(a);
	assert_non_null(b);
	for (unsigned i = 0; i < n; i++) {
		struct rsw_table_write w = insert_route(i);
		assert_int_equal(rsw_txn_add(a, &w), 0);
		if (i % 10 == 0)
			w.u.route.target = RSW_TGT_NEXTHOP;
		assert_int_equal(rsw_txn_add(b, &w), 0);
	}
	uint64_t p0 = rsw_route_index_probes();
	struct rsw_state *sa = rsw_state_from_txn(a, err, sizeof(err));
	struct rsw_state *sb = rsw_state_from_txn(b, err, sizeof(err));
	assert_non_null(sa);
	assert_non_null(sb);
	struct rsw_state *c = rsw_state_clone(sa);
	struct rsw_txn *d = rsw_txn_new();
	assert_int_equal(rsw_state_diff(sa, sb, d, err, sizeof(err)), 0);
	assert_int_equal(rsw_txn_len(d), (n + 9) / 10);
	for (unsigned i = 0; i < n; i++) {
		struct rsw_route r = route(i / 2, i & 1, -1);
		assert_int_equal(apply(c, RSW_W_DELETE, &r), 0);
	}
	assert_int_equal(c->n_routes, 0);
	double t = (double)(rsw_route_index_probes() - p0);
	rsw_state_free(sa);
	rsw_state_free(sb);
	rsw_state_free(c);
	rsw_txn_free(a);
	rsw_txn_free(b);
	rsw_txn_free(d);
	return t;
}

static void test_cost_grows_linearly(void **st)
{
	(void)st;
	double small = work(20000), large = work(80000);
	/* operations: 2n adds (two states), n finds (the diff), n deletes (a find and a removal) */
	double per_op = large / (5.0 * 80000);
	printf("20k routes %.0f slots examined, 80k routes %.0f: ratio %.2f (linear 4, quadratic 16), "
	       "%.2f an operation\n", small, large, large / small, per_op);
	assert_true(large / small < 9.0);
	assert_true(per_op < 4.0);
}

/* Bytes the heap holds now (the sanitizer's allocator replaces glibc's under ASan). */
static size_t heap_in_use(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

static void test_memory_per_route(void **st)
{
	(void)st;
	enum { N = 20000 };
	const double budget = 2.0 * sizeof(struct rsw_route); /* the entry, twice */
	size_t h0 = heap_in_use();
	struct rsw_txn *t = rsw_txn_new();
	assert_non_null(t);
	for (unsigned i = 0; i < N; i++) {
		struct rsw_table_write w = insert_route(i);
		assert_int_equal(rsw_txn_add(t, &w), 0);
	}
	size_t h1 = heap_in_use();
	struct rsw_state *s = rsw_state_from_txn(t, err, sizeof(err));
	assert_non_null(s);
	size_t h2 = heap_in_use();
	double txn_per = (double)(h1 - h0) / N, state_per = (double)(h2 - h1) / N;
	printf("per route: %.0f bytes in the transaction, %.0f in the state (a route is %zu)\n",
	       txn_per, state_per, sizeof(struct rsw_route));
	assert_true(txn_per <= budget);
	assert_true(state_per <= 1.5 * budget); /* the array doubles: up to half of it spare */
	rsw_state_free(s);
	rsw_txn_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_matches_a_list),
		cmocka_unit_test(test_cost_grows_linearly),
		cmocka_unit_test(test_memory_per_route),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
