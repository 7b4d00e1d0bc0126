/* Scheduler: DWRR byte shares follow the weights within 2 %; strict priority starves the others;
 * a paused queue is skipped and keeps its packets. Always-backlogged queues with mixed sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/sched.h"

/* Packet sizes cycle per queue so that sizes and quanta do not line up. */
static uint32_t size_of(unsigned q, unsigned k)
{
	static const uint32_t sizes[] = {64, 1500, 4096, 9100, 300, 1024, 777};
	return sizes[(q * 3 + k) % 7];
}

static void run(struct rsw_sched *s, uint8_t backlogged, uint8_t eligible, unsigned n,
		uint64_t bytes[RSW_TM_QUEUES])
{
	unsigned k[RSW_TM_QUEUES] = {0};
	memset(bytes, 0, sizeof(uint64_t) * RSW_TM_QUEUES);
	for (unsigned i = 0; i < n; i++) {
		uint32_t head[RSW_TM_QUEUES];
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
			head[q] = (backlogged & (1u << q)) ? size_of(q, k[q]) : 0;
		uint8_t ready = 0;
		for (unsigned r = 0; r < RSW_TM_QUEUES; r++)
			ready |= (uint8_t)((head[r] != 0) << r);
		int q = rsw_sched_pick(s, head, ready & eligible);
		if (q < 0)
			return;
		assert_true(eligible & (1u << q));
		bytes[q] += head[q];
		k[q]++;
		rsw_sched_charge(s, q, head[q], 0);
	}
}

static void dwrr_shares_follow_weights(void **state)
{
	(void)state;
	struct rsw_sched_cfg cfg = {0};
	const uint8_t w[RSW_TM_QUEUES] = {1, 2, 5, 15, 14, 7, 30, 26};
	memcpy(cfg.weight, w, sizeof(w));
	struct rsw_sched s;
	rsw_sched_init(&s, &cfg);
	uint64_t bytes[RSW_TM_QUEUES], total = 0;
	run(&s, 0xFF, 0xFF, 400000, bytes);
	unsigned wsum = 0;
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
		total += bytes[q];
		wsum += w[q];
	}
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
		double share = (double)bytes[q] / (double)total, want = (double)w[q] / wsum;
		if (share < want * 0.98 || share > want * 1.02)
			fail_msg("queue %u: share %.4f, weight share %.4f", q, share, want);
	}
}

static void strict_starves_lower(void **state)
{
	(void)state;
	struct rsw_sched_cfg cfg = {0};
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
		cfg.weight[q] = 10;
	cfg.type[6] = RSW_SCHED_STRICT;
	struct rsw_sched s;
	rsw_sched_init(&s, &cfg);
	uint64_t bytes[RSW_TM_QUEUES];
	run(&s, (1u << 3) | (1u << 6), 0xFF, 1000, bytes);
	assert_int_equal(bytes[3], 0);
	assert_true(bytes[6] > 0);
	/* two strict queues: the higher priority first, then the higher index on a tie */
	cfg.type[7] = RSW_SCHED_STRICT;
	rsw_sched_init(&s, &cfg);
	run(&s, 0xC0, 0xFF, 100, bytes);
	assert_int_equal(bytes[6], 0);
	cfg.priority[6] = 5;
	rsw_sched_init(&s, &cfg);
	run(&s, 0xC0, 0xFF, 100, bytes);
	assert_int_equal(bytes[7], 0);
}

static void paused_queue_is_skipped(void **state)
{
	(void)state;
	struct rsw_sched_cfg cfg = {0};
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
		cfg.weight[q] = 1;
	cfg.type[6] = RSW_SCHED_STRICT;
	struct rsw_sched s;
	rsw_sched_init(&s, &cfg);
	uint64_t bytes[RSW_TM_QUEUES];
	uint8_t eligible = (uint8_t)~((1u << 3) | (1u << 6)); /* 3 and 6 paused */
	run(&s, (1u << 3) | (1u << 6) | (1u << 1), eligible, 1000, bytes);
	assert_int_equal(bytes[3], 0);
	assert_int_equal(bytes[6], 0);
	assert_true(bytes[1] > 0);
	/* everything paused: nothing to send, and no queue is lost */
	uint32_t head[RSW_TM_QUEUES] = {100, 100, 100, 100, 100, 100, 100, 100};
	assert_int_equal(rsw_sched_pick(&s, head, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dwrr_shares_follow_weights),
		cmocka_unit_test(strict_starves_lower),
		cmocka_unit_test(paused_queue_is_skipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
