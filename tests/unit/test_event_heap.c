/* Replay's agenda against a plain model: after any mix of schedules, reschedules (earlier and
 * later), cancels and pops, the heap pops exactly what the model's smallest (time, id) is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dataplane/replay/event_heap.h"

#define IDS 300
#define NONE UINT64_MAX

static uint64_t model[IDS]; /* time of each entity's wake-up, NONE if it has none */

static int model_pop(uint64_t *t, uint32_t *id)
{
	int best = -1;
	for (int i = 0; i < IDS; i++)
		if (model[i] != NONE && (best < 0 || model[i] < model[best]))
			best = i; /* the lowest id wins a tie: ids are scanned upwards */
	if (best < 0)
		return 0;
	*t = model[best];
	*id = (uint32_t)best;
	model[best] = NONE;
	return 1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void random_ops(void **state)
{
	(void)state;
	struct rsw_event_heap q;
	assert_int_equal(rsw_event_heap_init(&q, IDS), 0);
	for (int i = 0; i < IDS; i++)
		model[i] = NONE;
	uint64_t now = 0;
	for (int step = 0; step < 200000; step++) {
		unsigned op = (unsigned)(next() % 10);
		uint32_t id = (uint32_t)(next() % IDS);
		if (op < 5) { /* schedule or reschedule, never before now; few distinct times */
			uint64_t t = now + next() % 8;
			assert_int_equal(rsw_event_at(&q, id, t), 0);
			model[id] = t;
		} else if (op < 6) {
			rsw_event_cancel(&q, id);
			model[id] = NONE;
		} else {
			uint64_t mt;
			uint32_t mid;
			struct rsw_wake w;
			int have = model_pop(&mt, &mid);
			assert_int_equal(rsw_event_peek(&q), have ? mt : UINT64_MAX);
			assert_int_equal(rsw_event_pop(&q, &w), have);
			if (have) {
				assert_int_equal(w.t, mt);
				assert_int_equal(w.id, mid);
				now = w.t;
			}
		}
	}
	uint32_t live = 0;
	for (int i = 0; i < IDS; i++)
		live += model[i] != NONE;
	assert_int_equal(q.n, live); /* only live wake-ups are held */
	rsw_event_heap_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(random_ops)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
