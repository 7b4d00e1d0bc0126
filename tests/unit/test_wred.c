/* ECN marking rate over 100k packets at several queue depths, against
 * Pmax (q - Kmin) / (Kmax - Kmin) (REFERENCE §3), within 5 standard deviations of a binomial. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "dataplane/tm/wred.h"

static void mark_rate_follows_formula(void **state)
{
	(void)state;
	/* SONiC AZURE_LOSSLESS-like: 1 MB / 2 MB, and Pmax 20 % (HPCC) to make the slope visible */
	struct rsw_wred w = {.ecn = 1, .kmin = 1000000, .kmax = 2000000, .pmax_ppm = 200000};
	const uint64_t depths[] = {1000000, 1100000, 1250000, 1500000, 1900000, 2000000};
	uint64_t rng = 12345;
	const unsigned n = 100000;
	for (unsigned d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		double p = 0.2 * (double)(depths[d] - w.kmin) / (double)(w.kmax - w.kmin);
		unsigned marks = 0;
		for (unsigned i = 0; i < n; i++)
			marks += (unsigned)rsw_wred_mark(&w, depths[d], &rng);
		double sd = sqrt(n * p * (1 - p));
		double lo = n * p - 5 * sd, hi = n * p + 5 * sd;
		if (marks < lo || marks > hi)
			fail_msg("q=%lu: %u marks, expected %.0f +- %.0f", (unsigned long)depths[d], marks,
				 n * p, 5 * sd);
	}
}

static void edges(void **state)
{
	(void)state;
	struct rsw_wred w = {.ecn = 1, .kmin = 4000, .kmax = 16000, .pmax_ppm = 50000};
	uint64_t rng = 1;
	for (unsigned i = 0; i < 10000; i++) {
		assert_false(rsw_wred_mark(&w, 4000, &rng)); /* at Kmin: never */
		assert_false(rsw_wred_mark(&w, 0, &rng));
		assert_true(rsw_wred_mark(&w, 16001, &rng)); /* above Kmax: always */
	}
	assert_int_equal(rsw_wred_prob_ppm(&w, 10000), 25000); /* halfway: Pmax / 2 */
	w.ecn = 0;
	assert_false(rsw_wred_mark(&w, 1000000, &rng));
}

static void same_seed_same_marks(void **state)
{
	(void)state;
	struct rsw_wred w = {.ecn = 1, .kmin = 0, .kmax = 100, .pmax_ppm = 500000};
	uint64_t a = 99, b = 99;
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(rsw_wred_mark(&w, 50, &a), rsw_wred_mark(&w, 50, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mark_rate_follows_formula),
		cmocka_unit_test(edges),
		cmocka_unit_test(same_seed_same_marks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
