/* The builder's ICRC, which extends the headers' CRC over the zero payload without reading it
 * (CRC-32 combine), equals the byte-by-byte ICRC of REFERENCE §1 for every payload length and
 * opcode shape, and a payload byte changed afterwards makes the check fail; frames built over a
 * reused buffer that is kept zero past the headers equal frames built from scratch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/pkt/icrc.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_build.h"

static uint8_t buf[9216 + RSW_ROCE_BUILD_OVERHEAD];

static void check_len(uint8_t opcode, uint32_t payload)
{
	struct rsw_roce_spec s = {.dmac = {2, 0, 0, 0, 1, 0}, .smac = {2, 0, 0, 0, 0, 1},
				  .src_ip = {10, 1, 0, 1}, .dst_ip = {10, 1, 0, 3}, .dscp = 26,
				  .ttl = 64, .sport = 0xC123, .opcode = opcode,
				  .dest_qp = 0x000ABC, .psn = 77, .va = 0x1000, .rkey = 5,
				  .dma_len = payload, .payload = payload};
	size_t len = rsw_roce_build(buf, sizeof(buf), &s);
	assert_true(len > 0);
	struct rsw_pkt_meta m;
	assert_int_equal(rsw_parse(buf, (uint32_t)len, &m), 0);
	assert_int_equal(rsw_icrc_check(buf, &m), 1);
	assert_int_equal(rsw_icrc_read(buf, &m), rsw_icrc_compute(buf, &m));
	if (payload) { /* the check reads the payload: one changed bit fails it */
		buf[m.icrc_off - 1 - (payload + 3) / 4 * 4 + payload] ^= 0x01;
		assert_int_equal(rsw_icrc_check(buf, &m), 0);
	}
}

static void every_length(void **state)
{
	(void)state;
	static const uint8_t ops[] = {0x04 /* SEND_ONLY */, 0x0A /* WRITE_ONLY, RETH */,
				      0x06 /* WRITE_FIRST, RETH */, 0x00 /* SEND_FIRST */};
	for (unsigned o = 0; o < sizeof(ops); o++) {
		for (uint32_t n = 0; n <= 300; n++)
			check_len(ops[o], n);
		for (uint32_t n = 301; n <= 9000; n += 37)
			check_len(ops[o], n);
		check_len(ops[o], 4096);
		check_len(ops[o], 4095);
	}
}

/* the per-length cache is keyed by length: lengths that share a slot alternate correctly */
static void cache_collisions(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 3; round++)
		for (uint32_t n = 16; n <= 16 * 40; n += 16)
			check_len(0x04, n);
}

/* Frames built one after another in one buffer kept zero past the headers (rsw_roce_scrub, then
 * rsw_roce_build_on_zeros) equal frames built into a fresh buffer by rsw_roce_build, whatever
 * the previous frame's headers, length and ICRC were. */
static uint8_t fresh[sizeof(buf)], reused[sizeof(buf)];

static void build_on_zeros_equals_full_build(void **state)
{
	(void)state;
	static const uint8_t ops[] = {0x04, 0x0A, 0x06, 0x07, 0x08, 0x11 /* ACK, AETH */,
				      0x81 /* CNP */};
	uint64_t x = 0x243F6A8885A308D3ull;
	size_t last = 0;
	memset(reused, 0, sizeof(reused));
	for (unsigned i = 0; i < 5000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint8_t op = ops[x % sizeof(ops)];
		int ctl = op == 0x11 || op == 0x81;
		struct rsw_roce_spec s = {.dmac = {2, 0, 0, 0, 1, (uint8_t)x},
					  .smac = {2, 0, 0, 0, 0, 1}, .src_ip = {10, 1, 0, 1},
					  .dst_ip = {10, 1, 0, (uint8_t)(x >> 8)}, .dscp = 26,
					  .ttl = 64, .sport = (uint16_t)(x >> 16), .opcode = op,
					  .dest_qp = (uint32_t)(x >> 24) & 0xFFFFFF,
					  .psn = (uint32_t)x & 0xFFFFFF, .ackreq = (uint8_t)(x & 1),
					  .va = x, .rkey = 7, .dma_len = 100,
					  .payload = ctl ? 0 : (uint32_t)((x >> 40) % 4200),
					  .syndrome = 0x1F, .msn = 3};
		memset(fresh, 0xA5, sizeof(fresh)); /* rsw_roce_build may not rely on zeros */
		size_t want = rsw_roce_build(fresh, sizeof(fresh), &s);
		assert_true(want > 0);
		rsw_roce_scrub(reused, last);
		last = rsw_roce_build_on_zeros(reused, sizeof(reused), &s);
		assert_int_equal(last, want);
		assert_memory_equal(reused, fresh, want);
		if (x & 2) /* a header changed after the build (as a CE mark is) */
			reused[15] |= 3;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_length),
		cmocka_unit_test(cache_collisions),
		cmocka_unit_test(build_on_zeros_equals_full_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
