/* Egress rewrite: TTL decrement and ECN CE keep the IPv4 checksum equal to a full recomputation;
 * the ICRC stays valid (the fields changed are the masked ones of REFERENCE §1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/pkt/icrc.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/rewrite.h"

/* RFC 791 checksum, summed from scratch */
static uint16_t full_cksum(const uint8_t *h, unsigned len)
{
	uint32_t sum = 0;
	for (unsigned i = 0; i < len; i += 2)
		if (i != 10)
			sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static size_t frame(uint8_t *p, uint8_t ttl, uint8_t tos)
{
	static const uint8_t hdr[] = {
		0x02, 0, 0, 0, 1, 0, 0x02, 0, 0, 0, 0x10, 1, 0x08, 0x00,
		0x45, 0, 0, 52, 0x12, 0x34, 0x40, 0, 0, 17, 0, 0, 10, 1, 0, 1, 10, 2, 0, 1,
		0xc0, 0x00, 0x12, 0xb7, 0, 32, 0, 0,
		0x04, 0, 0xff, 0xff, 0, 0, 0, 0x12, 0, 0, 0, 1,
	};
	memset(p, 0, 128);
	memcpy(p, hdr, sizeof(hdr));
	p[15] = tos;
	p[22] = ttl;
	uint16_t c = full_cksum(p + 14, 20);
	p[24] = (uint8_t)(c >> 8);
	p[25] = (uint8_t)c;
	return 14 + 52;
}

static void ttl_every_value(void **state)
{
	(void)state;
	uint8_t p[128];
	struct rsw_pkt_meta m;
	for (unsigned ttl = 2; ttl <= 255; ttl++) {
		size_t n = frame(p, (uint8_t)ttl, 0x0E);
		assert_int_equal(rsw_parse(p, (uint32_t)n, &m), 0);
		/* give it a valid ICRC first */
		uint32_t ic = rsw_icrc_compute(p, &m);
		memcpy(p + m.icrc_off, &ic, 4);
		assert_int_equal(rsw_icrc_check(p, &m), 1);
		rsw_rewrite_ttl(p, &m);
		assert_int_equal(p[22], ttl - 1);
		assert_int_equal(p[24] << 8 | p[25], full_cksum(p + 14, 20));
		assert_int_equal(rsw_icrc_check(p, &m), 1);
	}
}

static void ecn_ce_only_when_ect(void **state)
{
	(void)state;
	uint8_t p[128];
	struct rsw_pkt_meta m;
	for (unsigned tos = 0; tos < 256; tos++) {
		size_t n = frame(p, 64, (uint8_t)tos);
		assert_int_equal(rsw_parse(p, (uint32_t)n, &m), 0);
		uint32_t ic = rsw_icrc_compute(p, &m);
		memcpy(p + m.icrc_off, &ic, 4);
		int marked = rsw_rewrite_ecn_ce(p, &m);
		assert_int_equal(marked, (tos & 3) == 1 || (tos & 3) == 2); /* ECT(1), ECT(0); CE stays */
		assert_int_equal(p[15], (tos & 3) ? (tos | 3) : tos);
		assert_int_equal(p[24] << 8 | p[25], full_cksum(p + 14, 20));
		assert_int_equal(rsw_icrc_check(p, &m), 1);
	}
}

/* IPv6: the ECN bits are the low two of the traffic class (byte 1, bits 5-4); the flow label and
 * the DSCP stay as they were. */
static void ecn_ce_ipv6(void **state)
{
	(void)state;
	for (unsigned tclass = 0; tclass < 256; tclass++) {
		uint8_t h[40] = {0};
		uint32_t vtf = 6u << 28 | tclass << 20 | 0xABCDE;
		h[0] = (uint8_t)(vtf >> 24);
		h[1] = (uint8_t)(vtf >> 16);
		h[2] = (uint8_t)(vtf >> 8);
		h[3] = (uint8_t)vtf;
		int ect = (tclass & 3) == 1 || (tclass & 3) == 2;
		assert_int_equal(rsw_rewrite_ecn_ce_at(h, RSW_L3_IPV6, 0), ect);
		uint32_t after = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		uint32_t want_tc = ect ? (tclass | 3) : tclass;
		assert_int_equal(after, 6u << 28 | want_tc << 20 | 0xABCDE);
	}
}

static void rfc1624_example(void **state)
{
	(void)state;
	/* RFC 1624 §4: HC = 0xDD2F, m = 0x5555 → m' = 0x3285 gives HC' = 0x0000 */
	assert_int_equal(rsw_csum_update16(0xDD2F, 0x5555, 0x3285), 0x0000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ttl_every_value),
		cmocka_unit_test(ecn_ce_only_when_ect),
		cmocka_unit_test(ecn_ce_ipv6),
		cmocka_unit_test(rfc1624_example),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
