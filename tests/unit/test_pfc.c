/* PFC: pause durations at 100G and 400G (REFERENCE §2: 5.12 ns and 1.28 ns per quantum), pause
 * state on receipt (time 0 resumes, refresh extends, PAUSE applies to all), the XOFF / refresh /
 * XON sequence of generation, the frame layout, and the shaper's wire time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/pfc.h"
#include "dataplane/tm/shaper.h"

static void pause_durations(void **state)
{
	(void)state;
	/* 0xFFFF x 5.12 ns = 335539.2 ns, rounded up; x 1.28 ns = 83884.8 ns */
	assert_int_equal(rsw_pause_ns(0xFFFF, 100000), 335540);
	assert_int_equal(rsw_pause_ns(0xFFFF, 400000), 83885);
	assert_int_equal(rsw_pause_ns(1, 100000), 6);   /* 5.12 -> 6 */
	assert_int_equal(rsw_pause_ns(100, 400000), 128);
	assert_int_equal(rsw_pause_ns(1000, 25000), 20480);
}

static void pause_state(void **state)
{
	(void)state;
	struct rsw_pause_state ps;
	memset(&ps, 0, sizeof(ps));
	uint16_t t[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
	rsw_pause_rx(&ps, 1u << 3, t, 0, 1000, 100000); /* 1000 quanta = 5120 ns */
	assert_int_equal(rsw_pause_mask(&ps, 1000), 1u << 3);
	assert_int_equal(rsw_pause_mask(&ps, 6119), 1u << 3);
	assert_int_equal(rsw_pause_mask(&ps, 6120), 0);
	assert_int_equal(rsw_pause_total_ns(&ps, 3, 10000), 5120);
	/* refresh while paused extends from the new frame; the pause is one continuous pause */
	rsw_pause_rx(&ps, 1u << 3, t, 0, 20000, 100000);
	rsw_pause_rx(&ps, 1u << 3, t, 0, 24000, 100000);
	assert_int_equal(rsw_pause_since(&ps, 3, 25000), 20000);
	assert_int_equal(rsw_pause_mask(&ps, 29119), 1u << 3);
	/* time 0 resumes at once */
	uint16_t z[8] = {0};
	rsw_pause_rx(&ps, 1u << 3, z, 0, 26000, 100000);
	assert_int_equal(rsw_pause_mask(&ps, 26000), 0);
	assert_int_equal(rsw_pause_since(&ps, 3, 26000), UINT64_MAX);
	assert_int_equal(rsw_pause_total_ns(&ps, 3, 30000), 5120 + 6000);
	assert_int_equal(ps.rx_frames[3], 4);
	/* 802.3x PAUSE: every priority */
	uint16_t p[8] = {10, 0, 0, 0, 0, 0, 0, 0};
	rsw_pause_rx(&ps, 0xFF, p, 1, 40000, 400000);
	assert_int_equal(rsw_pause_mask(&ps, 40000), 0xFF);
	assert_int_equal(rsw_pause_mask(&ps, 40013), 0); /* 10 x 1.28 = 12.8 -> 13 ns */
	assert_int_equal(ps.pause_rx_frames, 1);
	/* ignored priorities are counted, not paused */
	ps.ignore_mask = 1u << 4;
	uint16_t t4[8] = {0, 0, 0, 0, 500, 0, 0, 0};
	rsw_pause_rx(&ps, 1u << 4, t4, 0, 50000, 100000);
	assert_int_equal(rsw_pause_mask(&ps, 50000), 0);
	assert_int_equal(ps.rx_frames[4], 1);
}

static void generation_sequence(void **state)
{
	(void)state;
	struct rsw_pfc_gen g;
	memset(&g, 0, sizeof(g));
	const uint64_t refresh = 40000;
	assert_int_equal(rsw_pfc_gen_poll(&g, 0, 1, 0, refresh), RSW_PFC_NONE);
	assert_int_equal(rsw_pfc_gen_poll(&g, 1, 0, 1000, refresh), RSW_PFC_SEND_XOFF);
	/* between XON and XOFF: hysteresis, refresh only when due */
	assert_int_equal(rsw_pfc_gen_poll(&g, 0, 0, 2000, refresh), RSW_PFC_NONE);
	assert_int_equal(rsw_pfc_gen_poll(&g, 0, 0, 40999, refresh), RSW_PFC_NONE);
	assert_int_equal(rsw_pfc_gen_poll(&g, 0, 0, 41000, refresh), RSW_PFC_SEND_XOFF);
	assert_int_equal(rsw_pfc_gen_poll(&g, 0, 1, 50000, refresh), RSW_PFC_SEND_XON);
	assert_int_equal(rsw_pfc_gen_poll(&g, 0, 1, 100000, refresh), RSW_PFC_NONE);
	assert_int_equal(g.xoff_transitions, 1);
	assert_int_equal(g.xon_transitions, 1);
}

/* IEEE 802.1Qbb layout written out by hand */
static void frame_layout(void **state)
{
	(void)state;
	const uint8_t mac[6] = {0x02, 0, 0, 0, 1, 0};
	uint16_t t[8] = {0, 0, 0, 0xFFFF, 0x1234, 0, 0, 0};
	uint8_t f[RSW_PFC_FRAME_LEN];
	assert_int_equal(rsw_pfc_build(f, mac, 0x18, t), 60);
	const uint8_t want[34] = {0x01, 0x80, 0xC2, 0, 0, 0x01, 0x02, 0, 0, 0, 1, 0, 0x88, 0x08,
				  0x01, 0x01, 0x00, 0x18, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0x12, 0x34,
				  0, 0, 0, 0, 0, 0};
	assert_memory_equal(f, want, sizeof(want));
	for (unsigned i = sizeof(want); i < 60; i++)
		assert_int_equal(f[i], 0);
}

/* An idle port starts at most burst behind now: polled late, it sends the frames the burst
 * owes back to back and no more, each no earlier than the first frame's time less the burst
 * plus its place times the wire time (what tests/live/test_live_tm.py sees on a real port). */
static void shaper_catch_up_within_burst(void **state)
{
	(void)state;
	struct rsw_shaper s;
	rsw_shaper_init(&s, 10, 1000000); /* 10 Mb/s, 1 ms */
	const uint32_t len = 100;
	const uint64_t wire = rsw_wire_ns(len, 10), t0 = 50000000;
	assert_int_equal(wire, 99200); /* 124 B x 800 ns */
	unsigned sent = 0;
	while (rsw_shaper_ready(&s, t0)) {
		rsw_shaper_send(&s, t0, len);
		sent++;
	}
	/* starts at t0 - 1 ms: frames at t0 - 1 ms + k x wire for k x wire <= 1 ms, 11 of them */
	assert_int_equal(sent, 1000000 / wire + 1);
	/* later polls: frame k no earlier than t0 - 1 ms + k x wire */
	for (uint64_t now = t0 + 1; sent < 40; now += 7919) {
		while (rsw_shaper_ready(&s, now)) {
			assert_true(now + 1000000 >= t0 + sent * wire);
			rsw_shaper_send(&s, now, len);
			sent++;
		}
	}
}

/* A 1000-byte frame takes 1024 wire bytes (FCS, preamble, IFG): 20.48 ns at 400G, 81.92 ns at
 * 100G; a 40-byte frame is padded to 60 + 24. Back-to-back frames keep exact spacing. */
static void shaper_wire_time(void **state)
{
	(void)state;
	struct rsw_shaper s;
	rsw_shaper_init(&s, 400000, 0);
	uint64_t end = 0;
	for (unsigned i = 0; i < 1000; i++)
		end = rsw_shaper_send(&s, 0, 1000);
	assert_int_equal(end, 20480); /* 1000 x 20.48 ns, no drift */
	assert_false(rsw_shaper_ready(&s, 20479));
	assert_true(rsw_shaper_ready(&s, 20480));
	rsw_shaper_init(&s, 100000, 0);
	assert_int_equal(rsw_shaper_send(&s, 1000, 40), 1000 + 7); /* 84 B x 0.08 ns = 6.72 */
	rsw_shaper_init(&s, 0, 0);
	assert_true(rsw_shaper_ready(&s, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pause_durations),
		cmocka_unit_test(pause_state),
		cmocka_unit_test(generation_sequence),
		cmocka_unit_test(frame_layout),
		cmocka_unit_test(shaper_wire_time),
		cmocka_unit_test(shaper_catch_up_within_burst),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
