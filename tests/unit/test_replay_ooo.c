/* A responder's out-of-order record (dataplane/replay/replay_ooo.c): packets held past a gap
 * keep their sizes when the ring grows to a distance 4 times its first size, duplicates are
 * refused, and releasing them in PSN order gives back exactly what was held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dataplane/replay/replay_ooo.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(held_through_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
