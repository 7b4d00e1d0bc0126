/* PFC watchdog (SONiC defaults: detection, restoration and polling 200 ms): a storm is detected
 * within detection time + one poll of the pause starting, only while PFC keeps arriving, and is
 * restored one restoration time after the last PFC frame (again within one poll). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/pfc.h"
#include "dataplane/tm/pfcwd.h"

#define MS 1000000ull

static void storm_detected_and_restored(void **state)
{
	(void)state;
	const struct rsw_pfcwd_cfg cfg = {.enabled = 1, .action = RSW_PFCWD_DROP,
					  .detection_ns = 200 * MS, .restoration_ns = 200 * MS};
	const uint64_t poll = 200 * MS, start = 37 * MS, storm_end = 1500 * MS;
	struct rsw_pause_state ps;
	struct rsw_pfcwd wd;
	memset(&ps, 0, sizeof(ps));
	memset(&wd, 0, sizeof(wd));
	uint16_t t[8] = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
	uint64_t detected = 0, restored = 0, next_poll = poll, next_pfc = start;
	/* a peer refreshing XOFF every 100 us at 100G (pause 335 us) from start to storm_end */
	for (uint64_t now = 0; now < 3000 * MS; now += 100000) {
		if (now >= next_pfc && now < storm_end) {
			rsw_pause_rx(&ps, 1u << 3, t, 0, now, 100000);
			rsw_pfcwd_pfc_rx(&wd, now);
			next_pfc += 100000;
		}
		if (now >= next_poll) {
			next_poll += poll;
			enum rsw_pfcwd_event e = rsw_pfcwd_poll(&wd, &cfg, rsw_pause_since(&ps, 3, now), now);
			if (e == RSW_PFCWD_DETECTED) {
				detected = now;
				ps.ignore_mask |= 1u << 3; /* the drop action stops honouring it */
				rsw_pause_clear(&ps, 3, now);
			} else if (e == RSW_PFCWD_RESTORED) {
				restored = now;
				ps.ignore_mask &= (uint8_t)~(1u << 3);
			}
		}
	}
	assert_true(detected >= start + cfg.detection_ns);
	assert_true(detected <= start + cfg.detection_ns + poll);
	uint64_t last_pfc = storm_end - 100000;
	assert_true(restored >= last_pfc + cfg.restoration_ns);
	assert_true(restored <= last_pfc + cfg.restoration_ns + poll);
	assert_int_equal(wd.storms_detected, 1);
	assert_int_equal(wd.storms_restored, 1);
}

/* A long pause from one frame that is not refreshed is not a storm; nor is a disabled watchdog. */
static void single_long_pause_is_not_a_storm(void **state)
{
	(void)state;
	struct rsw_pfcwd_cfg cfg = {.enabled = 1, .detection_ns = 200 * MS, .restoration_ns = 200 * MS};
	struct rsw_pfcwd wd;
	memset(&wd, 0, sizeof(wd));
	rsw_pfcwd_pfc_rx(&wd, 0);
	/* paused since 0 (a slow link's long pause), PFC last seen at 0 */
	assert_int_equal(rsw_pfcwd_poll(&wd, &cfg, 0, 400 * MS), RSW_PFCWD_NONE);
	cfg.enabled = 0;
	rsw_pfcwd_pfc_rx(&wd, 399 * MS);
	assert_int_equal(rsw_pfcwd_poll(&wd, &cfg, 0, 400 * MS), RSW_PFCWD_NONE);
	assert_int_equal(rsw_pfcwd_action_from_name("forward"), RSW_PFCWD_FORWARD);
	assert_int_equal(rsw_pfcwd_action_from_name("bogus"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(storm_detected_and_restored),
		cmocka_unit_test(single_long_pause_is_not_a_storm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
