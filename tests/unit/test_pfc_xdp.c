/* The PFC-watching XDP program of `rocesw send`, run by the kernel on hand-built frames with
 * BPF_PROG_TEST_RUN: the pause-until time it records must be the arrival time plus quanta ×
 * 512 bit times at the link speed (REFERENCE.md §2: 0xFFFF quanta ≈ 335.5 µs at 100G), XON (0)
 * must clear it, 802.3x PAUSE must pause every priority, MAC control frames are dropped and
 * everything else passes. Needs root (loading BPF), as the live tests do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "hostsend/pfc_xdp_load.h"

static struct rsw_pfc_xdp g_x;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Ethernet header to 01:80:c2:00:00:01 with the given EtherType, then body, padded to 60. */
static size_t frame(uint8_t *buf, uint16_t ethertype, const uint8_t *body, size_t n)
{
	static const uint8_t dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
	static const uint8_t src[6] = {0x02, 0x00, 0x00, 0x00, 0x01, 0x00};
	memset(buf, 0, 64);
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = (uint8_t)(ethertype >> 8);
	buf[13] = (uint8_t)ethertype;
	memcpy(buf + 14, body, n);
	return 14 + n < 60 ? 60 : 14 + n;
}

/* PFC body: opcode 0x0101, class-enable vector, eight 16-bit times (priority 0 first). */
static size_t pfc(uint8_t *buf, uint8_t cev, const uint16_t times[8])
{
	uint8_t b[20] = {0x01, 0x01, 0x00, cev};
	for (int i = 0; i < 8; i++) {
		b[4 + 2 * i] = (uint8_t)(times[i] >> 8);
		b[5 + 2 * i] = (uint8_t)times[i];
	}
	return frame(buf, 0x8808, b, sizeof(b));
}

struct run_out {
	uint32_t retval;
	uint64_t t0, t1;
};

static struct run_out run(const uint8_t *data, size_t len, unsigned link_mbps)
{
	struct run_out o;
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	memset((void *)s, 0, sizeof(*s));
	s->link_mbps = link_mbps;
	uint8_t out[128];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	o.t0 = mono_ns();
	int rc = bpf_prog_test_run_opts(rsw_pfc_xdp_prog_fd(&g_x), &opts);
	o.t1 = mono_ns();
	assert_int_equal(rc, 0);
	o.retval = opts.retval;
	return o;
}

/* REFERENCE.md §2: one quantum is 512 bit times; at S Mb/s a bit lasts 1000/S ns. */
static double pause_ns(unsigned quanta, unsigned mbps)
{
	return quanta * 512.0 / (mbps * 1e6) * 1e9;
}

static void assert_until(uint64_t until, struct run_out o, unsigned quanta, unsigned mbps)
{
	double d = pause_ns(quanta, mbps);
	/* arrival lies between the clock reads around the run; the program rounds down */
	assert_true((double)until >= (double)o.t0 + d - 1.0);
	assert_true((double)until <= (double)o.t1 + d);
}

static void test_pfc_xoff_100g(void **state)
{
	(void)state;
	uint8_t buf[64];
	uint16_t t[8] = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
	struct run_out o = run(buf, pfc(buf, 0x08, t), 100000);
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	assert_int_equal(o.retval, XDP_DROP);
	assert_until(s->pause_until[3], o, 0xFFFF, 100000);
	/* ≈ 335.5 µs, as REFERENCE.md says */
	assert_true(s->pause_until[3] - o.t0 > 335000 && s->pause_until[3] - o.t1 < 336000);
	for (int p = 0; p < 8; p++) {
		if (p != 3)
			assert_int_equal(s->pause_until[p], 0);
		assert_int_equal(s->pfc_frames[p], p == 3);
		assert_int_equal(s->xoff[p], p == 3);
	}
	assert_int_equal(s->pause_ns[3], 335539); /* 65535 × 512 / 100 Gb/s, rounded down */
	assert_int_equal(s->mac_control_dropped, 1);
	assert_int_equal(s->passed, 0);
}

static void test_pfc_only_enabled_classes(void **state)
{
	(void)state;
	uint8_t buf[64];
	/* priority 1 has a time but its enable bit is clear: it must not pause */
	uint16_t t[8] = {5, 7, 0, 0, 1000, 0, 0, 0};
	struct run_out o = run(buf, pfc(buf, 0x11, t), 400000);
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	assert_int_equal(o.retval, XDP_DROP);
	assert_until(s->pause_until[0], o, 5, 400000);
	assert_until(s->pause_until[4], o, 1000, 400000); /* 1000 × 1.28 ns at 400G */
	assert_int_equal(s->pause_until[1], 0);
	assert_int_equal(s->pfc_frames[1], 0);
}

static void test_pfc_xon_clears(void **state)
{
	(void)state;
	uint8_t buf[64];
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	uint16_t t[8] = {0};
	size_t len = pfc(buf, 0x08, t);
	memset((void *)s, 0, sizeof(*s));
	s->link_mbps = 10000;
	s->pause_until[3] = mono_ns() + 1000000000ULL; /* paused for a second */
	uint32_t retval = 0;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = buf, .data_size_in = (uint32_t)len,
		    .repeat = 1);
	assert_int_equal(bpf_prog_test_run_opts(rsw_pfc_xdp_prog_fd(&g_x), &opts), 0);
	retval = opts.retval;
	assert_int_equal(retval, XDP_DROP);
	assert_int_equal(s->pause_until[3], 0);
	assert_int_equal(s->xon[3], 1);
	assert_int_equal(s->xoff[3], 0);
}

static void test_pause_all_priorities(void **state)
{
	(void)state;
	uint8_t buf[64];
	uint8_t body[4] = {0x00, 0x01, 0x00, 100}; /* 802.3x PAUSE, 100 quanta */
	struct run_out o = run(buf, frame(buf, 0x8808, body, sizeof(body)), 10000);
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	assert_int_equal(o.retval, XDP_DROP);
	for (int p = 0; p < 8; p++)
		assert_until(s->pause_until[p], o, 100, 10000); /* 5.12 µs at 10G */
	assert_int_equal(s->pause_frames, 1);
}

static void test_other_frames_pass(void **state)
{
	(void)state;
	uint8_t buf[64];
	uint8_t ip[20] = {0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17};
	struct run_out o = run(buf, frame(buf, 0x0800, ip, sizeof(ip)), 10000);
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	assert_int_equal(o.retval, XDP_PASS);
	assert_int_equal(s->passed, 1);
	assert_int_equal(s->mac_control_dropped, 0);
	for (int p = 0; p < 8; p++)
		assert_int_equal(s->pause_until[p], 0);
}

static void test_malformed_mac_control_dropped(void **state)
{
	(void)state;
	uint8_t buf[64];
	/* a PFC opcode with its times cut off (frame of 18 bytes), and an unknown opcode */
	uint8_t cut[4] = {0x01, 0x01, 0x00, 0xff};
	frame(buf, 0x8808, cut, sizeof(cut));
	struct run_out o = run(buf, 18, 10000);
	volatile struct rsw_pfc_xdp_state *s = g_x.state;
	assert_int_equal(o.retval, XDP_DROP);
	assert_int_equal(s->mac_control_bad, 1);
	for (int p = 0; p < 8; p++)
		assert_int_equal(s->pause_until[p], 0);
	uint8_t odd[4] = {0x00, 0x02, 0x00, 0x10};
	o = run(buf, frame(buf, 0x8808, odd, sizeof(odd)), 10000);
	assert_int_equal(o.retval, XDP_DROP);
	assert_int_equal(s->mac_control_bad, 1);
}

static int setup(void **state)
{
	(void)state;
	char err[256];
	if (rsw_pfc_xdp_open(&g_x, 10000, err, sizeof(err)) < 0) {
		fprintf(stderr, "test_pfc_xdp: %s (the unit suite runs as root, as CI does)\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rsw_pfc_xdp_close(&g_x);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pfc_xoff_100g),
		cmocka_unit_test(test_pfc_only_enabled_classes),
		cmocka_unit_test(test_pfc_xon_clears),
		cmocka_unit_test(test_pause_all_priorities),
		cmocka_unit_test(test_other_frames_pass),
		cmocka_unit_test(test_malformed_mac_control_dropped),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
