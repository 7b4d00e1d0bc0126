/* PFC watchdog (SONiC defaults: detection, restoration and polling 200 ms): a storm is detected
 * within detection time + one poll of the pause starting, only while PFC keeps arriving, and is
 * restored one restoration time after the last PFC frame (again within one poll). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/clock.h"
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

#define US 1000ull

/* A worker on a virtual clock that looks at its port every 10 us, except that it is descheduled
 * for stall_ns out of every 2 ms (a busy 2-core machine). A peer storms from 37 ms to 1500 ms,
 * refreshing XOFF (0xFFFF quanta, 335.5 us at 100G) every 100 us; what it sent during a stall
 * is read at the next look, as a poll of the RX ring would. since_prev: frames are known to have
 * arrived after the previous look (the fix); otherwise they count as arriving at the look (the
 * old behaviour, whose pause restarted after every stall longer than a pause). Returns when the
 * storm was detected, 0 if never. */
static uint64_t storm_with_stalls(uint64_t stall_ns, int since_prev)
{
	const struct rsw_pfcwd_cfg cfg = {.enabled = 1, .action = RSW_PFCWD_DROP,
					  .detection_ns = 200 * MS, .restoration_ns = 200 * MS};
	const uint64_t poll = 200 * MS, start = 37 * MS, storm_end = 1500 * MS;
	struct rsw_clock clk;
	struct rsw_pause_state ps;
	struct rsw_pfcwd wd;
	rsw_clock_init_virtual(&clk, 0);
	memset(&ps, 0, sizeof(ps));
	memset(&wd, 0, sizeof(wd));
	uint16_t t[8] = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
	uint64_t next_pfc = start, next_poll = poll, prev_look = 0;
	for (uint64_t at = 0; at < 3000 * MS; at += 10 * US) {
		if (at % (2 * MS) >= 500 * US && at % (2 * MS) < 500 * US + stall_ns)
			continue; /* descheduled: no look */
		rsw_clock_set(&clk, at);
		uint64_t now = rsw_clock_now(&clk);
		while (next_pfc <= now && next_pfc < storm_end) {
			if (since_prev)
				rsw_pause_rx_since(&ps, 1u << 3, t, 0, prev_look, now, 100000);
			else
				rsw_pause_rx(&ps, 1u << 3, t, 0, now, 100000);
			rsw_pfcwd_pfc_rx(&wd, now);
			next_pfc += 100 * US;
		}
		prev_look = now;
		if (now >= next_poll) {
			next_poll = now + poll; /* as rsw_tm_watchdog: one poll interval after this one */
			if (rsw_pfcwd_poll(&wd, &cfg, rsw_pause_since(&ps, 3, now), now) ==
			    RSW_PFCWD_DETECTED)
				return now;
		}
	}
	return 0;
}

static void storm_detected_through_worker_stalls(void **state)
{
	(void)state;
	const uint64_t start = 37 * MS, detection = 200 * MS, poll = 200 * MS;
	/* stalls of 1 ms, three pause times: the pause state says paused since the storm began */
	uint64_t at = storm_with_stalls(1 * MS, 1);
	assert_true(at >= start + detection);
	/* within detection + one poll, plus the stall that may delay the poll itself */
	assert_true(at <= start + detection + poll + 1 * MS);
	/* the defect this guards against: with the frames stamped when read, each stall looked like
	 * the end of the pause and the storm was never detected */
	assert_int_equal(storm_with_stalls(1 * MS, 0), 0);
	/* without stalls both agree */
	assert_int_equal(storm_with_stalls(0, 1), storm_with_stalls(0, 0));
}

/* A real gap, seen by a worker that kept looking, ends the pause: paused-since restarts. */
static void pause_gap_seen_restarts(void **state)
{
	(void)state;
	struct rsw_pause_state ps;
	memset(&ps, 0, sizeof(ps));
	uint16_t t[8] = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
	uint64_t pause = rsw_pause_ns(0xFFFF, 100000); /* 65535 × 512 bits at 100G, rounded up */
	assert_int_equal(pause, 335540);
	rsw_pause_rx_since(&ps, 1u << 3, t, 0, 0, 1000, 100000);
	assert_int_equal(rsw_pause_since(&ps, 3, 2000), 1000);
	/* looked at 1000 + pause + 10 (after the expiry) and found nothing; a frame then */
	uint64_t look = 1000 + pause + 10, now = look + 10 * US;
	rsw_pause_rx_since(&ps, 1u << 3, t, 0, look, now, 100000);
	assert_int_equal(rsw_pause_since(&ps, 3, now), now);
	assert_int_equal(rsw_pause_total_ns(&ps, 3, now), pause);
	/* last look before the expiry (a stall), frame read long after: one pause goes on */
	uint64_t look2 = now + pause - 1, now2 = now + 5 * pause;
	rsw_pause_rx_since(&ps, 1u << 3, t, 0, look2, now2, 100000);
	assert_int_equal(rsw_pause_since(&ps, 3, now2), now);
	assert_int_equal(rsw_pause_total_ns(&ps, 3, now2), pause + (now2 - now));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(storm_detected_and_restored),
		cmocka_unit_test(single_long_pause_is_not_a_storm),
		cmocka_unit_test(storm_detected_through_worker_stalls),
		cmocka_unit_test(pause_gap_seen_restarts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
