/* The builder's ICRC, which extends the headers' CRC over the zero payload without reading it
 * (CRC-32 combine), equals the byte-by-byte ICRC of REFERENCE §1 for every payload length and
 * opcode shape, and a payload byte changed afterwards makes the check fail. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_length),
		cmocka_unit_test(cache_collisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
