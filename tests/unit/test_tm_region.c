/* Where a traffic manager's port records come from (tm_region.h): a record is made the first time
 * its port is used, in that order, from the region's next slot, whichever TM of the region it
 * belongs to; reading a port never used gives the idle record and makes nothing; a region refuses
 * a TM it has no room for, saying how much it has; the region lives while a TM holds it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/tm.h"

static char err[256];

static void records_by_first_use(void **state)
{
	(void)state;
	struct rsw_tm_config *tc = calloc(1, sizeof(*tc)); /* every port: no buffer, unshaped */
	assert_non_null(tc);
	struct rsw_tm_region *rg = rsw_tm_region_new(8);
	assert_non_null(rg);
	struct rsw_tm *a = rsw_tm_new_growing(4, tc, 1, rg, err, sizeof(err));
	assert_non_null(a);
	/* 4 of 8 promised: a TM of 5 does not fit, and is told so */
	assert_null(rsw_tm_new_growing(5, tc, 1, rg, err, sizeof(err)));
	assert_string_equal(err, "the traffic managers' region has room for 4 more ports, not 5");
	struct rsw_tm *c = rsw_tm_new_growing(4, tc, 1, rg, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(rg->refs, 3); /* the creator's and the two TMs' */

	/* read, not used: idle, nothing made */
	assert_ptr_equal(rsw_tm_port_read(a, 2), &rsw_tm_port_idle);
	assert_int_equal(rsw_tm_queue_bytes(a, 2, 0), 0);
	assert_int_equal(rsw_tm_maybe_queued(a, 2), 0);
	assert_int_equal(rsw_tm_queued(a), 0);
	assert_null(a->port[2]);
	assert_int_equal(rg->used, 0);

	/* used: the region's slots in the order of first use, across TMs; a second use is the
	 * same record */
	struct rsw_tm_port *c3 = rsw_tm_port_use(c, 3);
	struct rsw_tm_port *a1 = rsw_tm_port_use(a, 1);
	assert_ptr_equal(c3, &rg->hot[0]);
	assert_ptr_equal(a1, &rg->hot[1]);
	assert_ptr_equal(c3->cold, &rg->cold[0]);
	assert_ptr_equal(rsw_tm_port_use(c, 3), c3);
	assert_ptr_equal(rsw_tm_port_read(c, 3), c3);
	assert_int_equal(rg->used, 2);
	/* a record is made as a port starts: the seeded random sources are never 0 */
	assert_true(c3->rng != 0 && c3->rng_in != 0);

	rsw_tm_region_put(rg); /* the TMs still hold it */
	rsw_tm_free(a);
	assert_int_equal(rg->refs, 1);
	assert_ptr_equal(rsw_tm_port_read(c, 3), c3);
	rsw_tm_free(c); /* the last reference: the region goes (ASan says if it does not) */
	free(tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_by_first_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
