/* Replay's agenda against a plain model: after any mix of schedules, reschedules (earlier and
 * later), cancels and pops, the agenda pops exactly what the model's smallest (time, id) is;
 * with times on the wheel (within RSW_WHEEL_NS of now), beyond it, either side of its edge,
 * and before now. */
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

/* When a wake-up is scheduled, relative to now. */
enum when { SOON, ACROSS_HORIZON, ANY_TIME };

static uint64_t pick_time(uint64_t now, enum when w)
{
	uint64_t r = next();
	if (w == SOON) /* few distinct times: many ties */
		return now + r % 8;
	if (w == ACROSS_HORIZON) { /* either side of the wheel's edge, and far beyond */
		const uint64_t W = RSW_WHEEL_NS;
		uint64_t d[] = {0, 1, W - 1, W, W + 1, 3 * W + 5, 1ull << 40};
		uint64_t at = now + d[r % 7] + (r >> 8) % 3;
		return at < now || at >= 1ull << 63 ? now : at; /* the clock stays below 2^63 */
	}
	return r % 4 ? now + (r >> 4) % 1000 : r >> 2; /* anywhere, also before now */
}

static void random_ops(enum when when, int steps)
{
	struct rsw_event_heap q;
	assert_int_equal(rsw_event_heap_init(&q, IDS), 0);
	for (int i = 0; i < IDS; i++)
		model[i] = NONE;
	uint64_t now = 0;
	for (int step = 0; step < steps; step++) {
		unsigned op = (unsigned)(next() % 10);
		uint32_t id = (uint32_t)(next() % IDS);
		if (op < 5) { /* schedule or reschedule */
			uint64_t t = pick_time(now, when);
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
	assert_int_equal(rsw_event_count(&q), live); /* only live wake-ups are held */
	rsw_event_heap_free(&q);
}

static void ties_soon(void **state)
{
	(void)state;
	random_ops(SOON, 200000);
}

static void across_the_horizon(void **state)
{
	(void)state;
	random_ops(ACROSS_HORIZON, 200000);
}

static void anywhere_and_before_now(void **state)
{
	(void)state;
	random_ops(ANY_TIME, 100000);
}

/* A capture clock (ns since 1970) is far beyond the wheel of an agenda at 0: its first frames
 * wait in the far heap and come onto the wheel, in order, as they come due. */
static void epoch_times(void **state)
{
	(void)state;
	struct rsw_event_heap q;
	assert_int_equal(rsw_event_heap_init(&q, 1u << 20), 0);
	const uint64_t epoch = 1764000000000000000ull;
	uint32_t ids[] = {7, 3, 9, 1000000, 5};
	uint64_t ts[] = {epoch + 20, epoch + 10, epoch + 10, epoch + 30 + (1ull << 44), epoch};
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(rsw_event_at(&q, ids[i], ts[i]), 0);
	assert_int_equal(rsw_event_peek(&q), epoch);
	const unsigned order[] = {4, 1, 2, 0, 3}; /* by time, then id: 3 before 9 at epoch + 10 */
	for (unsigned k = 0; k < 5; k++) {
		struct rsw_wake w;
		assert_int_equal(rsw_event_pop(&q, &w), 1);
		assert_int_equal(w.t, ts[order[k]]);
		assert_int_equal(w.id, ids[order[k]]);
	}
	assert_int_equal(rsw_event_peek(&q), UINT64_MAX);
	rsw_event_heap_free(&q);
}

/* Groups of one time, of every size up to 300 wake-ups, scheduled in a scrambled order (id
 * i * 97 mod n), on the wheel or in the far heap: each pops in id order; an entity popped and
 * due again at the same time joins the group in its id's place, so it pops again next. */
static void tie_groups_of_any_size(void **state)
{
	(void)state;
	struct rsw_event_heap q;
	assert_int_equal(rsw_event_heap_init(&q, IDS), 0);
	uint64_t t = 0;
	for (uint32_t n = 1; n <= IDS; n += n < 40 ? 1 : 37) {
		t += n % 2 ? 3 : 3 * RSW_WHEEL_NS; /* on the wheel, or beyond it */
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(rsw_event_at(&q, (uint32_t)(i * 97u % n), t), 0);
		for (uint32_t i = 0, again = n / 2; i < n; i++) {
			struct rsw_wake w;
			assert_int_equal(rsw_event_pop(&q, &w), 1);
			assert_int_equal(w.t, t);
			assert_int_equal(w.id, i);
			if (i == again) {
				assert_int_equal(rsw_event_at(&q, i, t), 0);
				assert_int_equal(rsw_event_pop(&q, &w), 1);
				assert_int_equal(w.id, i);
			}
		}
		assert_int_equal(rsw_event_peek(&q), UINT64_MAX);
	}
	rsw_event_heap_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(ties_soon),
					   cmocka_unit_test(across_the_horizon),
					   cmocka_unit_test(anywhere_and_before_now),
					   cmocka_unit_test(epoch_times),
					   cmocka_unit_test(tie_groups_of_any_size)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
