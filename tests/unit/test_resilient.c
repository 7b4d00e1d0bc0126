/* Resilient bucket table: removing one member moves only its buckets; adding one takes only
 * from the others; the table stays balanced within one bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/hash/resilient.h"

static void balanced(const struct rsw_rbt *t)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	for (uint16_t s = 0; s < t->n_slots; s++) {
		if (!t->active[s]) {
			assert_int_equal(rsw_rbt_load(t, s), 0);
			continue;
		}
		uint32_t l = rsw_rbt_load(t, s);
		lo = l < lo ? l : lo;
		hi = l > hi ? l : hi;
	}
	assert_true(hi - lo <= 1);
}

static void remove_one_of_eight(void **state)
{
	(void)state;
	struct rsw_rbt t;
	assert_int_equal(rsw_rbt_init(&t, 4096, 8), 0);
	balanced(&t);
	for (unsigned b = 0; b < 4096; b++) /* a new table is round-robin */
		assert_int_equal(t.bucket[b], b % 8);
	uint16_t *before = malloc(4096 * sizeof(uint16_t));
	memcpy(before, t.bucket, 4096 * sizeof(uint16_t));
	assert_int_equal(rsw_rbt_remove(&t, 5), 0);
	unsigned moved = 0;
	for (unsigned b = 0; b < 4096; b++) {
		if (before[b] == 5) {
			assert_int_not_equal(t.bucket[b], 5);
			moved++;
		} else {
			assert_int_equal(t.bucket[b], before[b]); /* nobody else moved */
		}
	}
	assert_int_equal(moved, 512);
	assert_int_equal(rsw_rbt_n_active(&t), 7);
	balanced(&t);
	/* adding it back takes buckets only from the others, and only as many as its share */
	memcpy(before, t.bucket, 4096 * sizeof(uint16_t));
	assert_int_equal(rsw_rbt_add(&t, 5), 0);
	unsigned changed = 0;
	for (unsigned b = 0; b < 4096; b++)
		if (t.bucket[b] != before[b]) {
			assert_int_equal(t.bucket[b], 5);
			changed++;
		}
	assert_int_equal(changed, 512);
	balanced(&t);
	/* the buckets it took are spread over the table: no hash range moves as a block */
	unsigned run = 0, longest = 0;
	for (unsigned b = 0; b < 4096; b++) {
		run = t.bucket[b] != before[b] ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	assert_true(longest <= 2);
	unsigned quarter[4] = {0};
	for (unsigned b = 0; b < 4096; b++)
		quarter[b / 1024] += t.bucket[b] != before[b];
	for (int q = 0; q < 4; q++)
		assert_true(quarter[q] >= 100 && quarter[q] <= 156);
	free(before);
	rsw_rbt_free(&t);
}

static void errors_and_edges(void **state)
{
	(void)state;
	struct rsw_rbt t;
	assert_int_equal(rsw_rbt_init(&t, 0, 4), -1);
	assert_int_equal(rsw_rbt_init(&t, 100, 0), -1);
	assert_int_equal(rsw_rbt_init(&t, 100, 3), 0);
	assert_int_equal(rsw_rbt_remove(&t, 7), -1);  /* never used */
	assert_int_equal(rsw_rbt_add(&t, 1), -1);     /* already active */
	assert_int_equal(rsw_rbt_remove(&t, 0), 0);
	assert_int_equal(rsw_rbt_remove(&t, 0), -1);  /* twice */
	balanced(&t);
	rsw_rbt_free(&t);
	/* an empty table: the first member takes everything */
	assert_int_equal(rsw_rbt_alloc(&t, 64), 0);
	assert_int_equal(rsw_rbt_add(&t, 3), 0);
	assert_int_equal(rsw_rbt_load(&t, 3), 64);
	assert_int_equal(rsw_rbt_add(&t, 0), 0);
	assert_int_equal(rsw_rbt_load(&t, 0), 32);
	rsw_rbt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(remove_one_of_eight),
		cmocka_unit_test(errors_and_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
