/* A responder's out-of-order record (dataplane/transport/rc_reorder.c): packets held past a gap
 * keep their sizes when the ring grows to a distance 4 times its first size, duplicates are
 * refused, and releasing them in PSN order gives back exactly what was held; a receiver's
 * counts (out of order, distance, buffer, duplicates) for an arrival order worked by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dataplane/transport/rc_reorder.h"

static void held_through_growth(void **state)
{
	(void)state;
	struct rsw_ooo o = {0};
	/* 1000 is the gap; 1001..1050 arrive first (a ring of 64), then 1200 down to 1051, which
	 * grows it with those held; packet p has 10 + p % 7 bytes */
	uint64_t epsn = 1000, bytes = 0;
	for (uint64_t p = 1001; p <= 1050; p++) {
		assert_int_equal(rsw_ooo_place(&o, epsn, p, 10 + p % 7), 1);
		bytes += 10 + p % 7;
	}
	assert_int_equal(o.cap, 64);
	for (uint64_t p = 1200; p > 1050; p--) {
		assert_int_equal(rsw_ooo_place(&o, epsn, p, 10 + p % 7), 1);
		bytes += 10 + p % 7;
	}
	assert_int_equal(o.cap, 256);
	assert_int_equal(o.held_pkts, 200);
	assert_int_equal(o.held_bytes, bytes);
	assert_int_equal(rsw_ooo_place(&o, epsn, 1100, 10), 0); /* a copy: already held */
	assert_int_equal(o.held_pkts, 200);
	assert_int_equal(rsw_ooo_take(&o, epsn), 0);           /* the gap itself is not held */
	for (uint64_t p = epsn + 1; p <= 1200; p++) {
		assert_int_equal(rsw_ooo_take(&o, p), 1);
		bytes -= 10 + p % 7;
		assert_int_equal(o.held_bytes, bytes);
	}
	assert_int_equal(o.held_pkts, 0);
	assert_int_equal(rsw_ooo_take(&o, 1201), 0);
	/* a PSN further than the 24-bit space could ever put it is refused */
	assert_int_equal(rsw_ooo_place(&o, 0, 1u << 25, 1), -1);
	rsw_ooo_free(&o);
}

/* A receiver watching one QP, fed 0 2 3 1 4 6 5 5 (100-byte payloads), by hand: 2 and 3 wait
 * for 1 (distances 1 and 2, two held at once), 6 waits for 5 (distance 1), the second 5 is a
 * duplicate: 3 out of order, largest distance 2, at most 2 packets (200 bytes) held. */
static void observer_counts(void **state)
{
	(void)state;
	struct rsw_psn_observer q;
	rsw_psn_observer_init(&q, 0);
	static const uint32_t order[] = {0, 2, 3, 1, 4, 6, 5, 5};
	for (unsigned i = 0; i < 8; i++)
		rsw_psn_observe(&q, order[i], 100);
	assert_int_equal(q.c.ooo_packets, 3);
	assert_int_equal(q.c.ooo_max_distance, 2);
	assert_int_equal(q.c.reorder_max_packets, 2);
	assert_int_equal(q.c.reorder_max_bytes, 200);
	assert_int_equal(q.duplicates, 1);
	assert_int_equal(q.packets, 8);
	assert_int_equal(q.epsn, 7);
	assert_int_equal(q.held.held_pkts, 0);
	rsw_psn_observer_free(&q);
	/* across the 24-bit wrap: 0xFFFFFE, 0, 0xFFFFFF, 1: 0 is one ahead of 0xFFFFFF */
	rsw_psn_observer_init(&q, 0xFFFFFE);
	static const uint32_t wrap[] = {0xFFFFFE, 0, 0xFFFFFF, 1};
	for (unsigned i = 0; i < 4; i++)
		rsw_psn_observe(&q, wrap[i], 10);
	assert_int_equal(q.c.ooo_packets, 1);
	assert_int_equal(q.c.ooo_max_distance, 1);
	assert_int_equal(q.duplicates, 0);
	assert_int_equal(q.epsn & RSW_PSN_MASK, 2);
	rsw_psn_observer_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(held_through_growth),
		cmocka_unit_test(observer_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
