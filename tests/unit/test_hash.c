/* Hash algorithms against published check values (CRC catalogue, "123456789"), and the key
 * layout of native fields and UDFs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/hash/hash_algo.h"
#include "dataplane/hash/hash_policy.h"
#include "dataplane/pkt/parse.h"

static const uint8_t check[] = "123456789";

static void crc_catalogue(void **state)
{
	(void)state;
	/* reveng CRC catalogue check values */
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC, 0, check, 9, NULL), 0xBB3D);       /* CRC-16/ARC */
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC_CCITT, 0, check, 9, NULL), 0x31C3); /* CRC-16/XMODEM */
	/* CRC-32/ISO-HDLC check 0xCBF43926 */
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC_32LO, 0, check, 9, NULL), 0x3926);
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC_32HI, 0, check, 9, NULL), 0xCBF4);
	/* CRC-16/IBM-3740 (init 0xFFFF, otherwise XMODEM) check 0x29B1: the seed is the init */
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC_CCITT, 0xFFFF, check, 9, NULL), 0x29B1);
	/* CRC-16/CMS is not reflected; CRC-16/MODBUS (ARC with init 0xFFFF) check 0x4B37 */
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC, 0xFFFF, check, 9, NULL), 0x4B37);
}

static void xor_by_hand(void **state)
{
	(void)state;
	/* 0x3132 ^ 0x3334 ^ 0x3536 ^ 0x3738 ^ 0x3900 */
	uint16_t x = 0x3132 ^ 0x3334 ^ 0x3536 ^ 0x3738 ^ 0x3900;
	assert_int_equal(rsw_hash_compute(RSW_HASH_XOR, 0, check, 9, NULL), x);
	assert_int_equal(rsw_hash_compute(RSW_HASH_XOR, 0x00FF, check, 9, NULL), x ^ 0x00FF);
	assert_int_equal(rsw_hash_compute(RSW_HASH_CRC_XOR, 0, check, 9, NULL), 0xBB3D ^ x);
}

static void jenkins_lookup3(void **state)
{
	(void)state;
	/* lookup3.c driver5: hashlittle("Four score and seven years ago", 30, 0) = 0x17770551,
	 * and with initval 1: 0xcd628161 */
	const uint8_t *s = (const uint8_t *)"Four score and seven years ago";
	assert_int_equal(rsw_hash_compute(RSW_HASH_JENKINS_LO, 0, s, 30, NULL), 0x0551);
	assert_int_equal(rsw_hash_compute(RSW_HASH_JENKINS_HI, 0, s, 30, NULL), 0x1777);
	assert_int_equal(rsw_hash_compute(RSW_HASH_JENKINS_HI, 1, s, 30, NULL), 0xcd62);
}

static void random_is_seeded(void **state)
{
	(void)state;
	uint64_t a = 42, b = 42;
	uint32_t x[4], y[4];
	for (int i = 0; i < 4; i++) {
		x[i] = rsw_hash_compute(RSW_HASH_RANDOM, 0, check, 9, &a);
		y[i] = rsw_hash_compute(RSW_HASH_RANDOM, 0, check, 9, &b);
	}
	assert_memory_equal(x, y, sizeof(x));
	assert_true(x[0] != x[1] || x[1] != x[2]);
}

static void names_round_trip(void **state)
{
	(void)state;
	for (unsigned a = 0; a < RSW_HASH_ALGO_COUNT; a++)
		assert_int_equal(rsw_hash_algo_from_name(rsw_hash_algo_name(a)), a);
	assert_int_equal(rsw_hash_algo_from_name("CRC32"), RSW_HASH_ALGO_COUNT);
	for (unsigned f = 0; f < RSW_HF_COUNT; f++)
		assert_int_equal(rsw_hash_field_from_name(rsw_hash_field_name(f)), f);
}

/* A hand-assembled IPv4/UDP/BTH frame: offsets known without the parser. */
static size_t roce_frame(uint8_t *p, uint32_t qp, uint16_t sport)
{
	static const uint8_t hdr[] = {
		0x02, 0, 0, 0, 1, 0, 0x02, 0, 0, 0, 0x10, 1, 0x08, 0x00, /* Ethernet */
		0x45, 0x0e, 0, 72, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 1, 0, 1, 10, 2, 0, 1, /* IPv4 */
		0, 0, 0x12, 0xb7, 0, 52, 0, 0,                           /* UDP → 4791 */
		0x0a, 0, 0xff, 0xff, 0, 0, 0, 0, 0x80, 0, 0, 7,           /* BTH */
	};
	memset(p, 0, 128);
	memcpy(p, hdr, sizeof(hdr));
	p[34] = (uint8_t)(sport >> 8);
	p[35] = (uint8_t)sport;
	p[42 + 5] = (uint8_t)(qp >> 16);
	p[42 + 6] = (uint8_t)(qp >> 8);
	p[42 + 7] = (uint8_t)qp;
	/* header checksum */
	uint32_t sum = 0;
	for (int i = 14; i < 34; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	p[24] = (uint8_t)(~sum >> 8);
	p[25] = (uint8_t)~sum;
	return 14 + 72;
}

static void udf_selects_dest_qp(void **state)
{
	(void)state;
	uint8_t f[128], key[RSW_HASH_KEY_MAX];
	struct rsw_pkt_meta m;
	struct rsw_hash_policy pol = {.algo = RSW_HASH_CRC_CCITT, .n_udf = 1};
	pol.udf[0] = (struct rsw_udf){.base = RSW_UDF_L4, .offset = 13, .length = 3,
				      .mask = {0xFF, 0xFF, 0xFF}, .match_ip_protocol = 17,
				      .match_l4_dst_port = 4791};
	size_t len = roce_frame(f, 0xABCDEF, 49152);
	assert_int_equal(rsw_parse(f, (uint32_t)len, &m), 0);
	assert_int_equal(rsw_hash_key(&pol, f, &m, key), 3);
	assert_int_equal(key[0], 0xAB);
	assert_int_equal(key[1], 0xCD);
	assert_int_equal(key[2], 0xEF);
	/* a different source port changes nothing; a different QP does */
	uint32_t h1 = rsw_hash_packet(&pol, f, &m, NULL);
	roce_frame(f, 0xABCDEF, 50000);
	rsw_parse(f, (uint32_t)len, &m);
	assert_int_equal(rsw_hash_packet(&pol, f, &m, NULL), h1);
	/* the native field gives the same bytes */
	struct rsw_hash_policy nat = {.algo = RSW_HASH_CRC_CCITT,
				      .fields = 1u << RSW_HF_RDMA_BTH_DEST_QP};
	assert_int_equal(rsw_hash_packet(&nat, f, &m, NULL), h1);
	/* match on a port the packet does not use: zeros of the UDF's length */
	pol.udf[0].match_l4_dst_port = 4792;
	assert_int_equal(rsw_hash_key(&pol, f, &m, key), 3);
	assert_int_equal(key[0] | key[1] | key[2], 0);
	/* mask */
	pol.udf[0].match_l4_dst_port = 4791;
	pol.udf[0].mask[0] = 0x0F;
	rsw_hash_key(&pol, f, &m, key);
	assert_int_equal(key[0], 0x0B);
}

static void five_tuple_key_order(void **state)
{
	(void)state;
	uint8_t f[128], key[RSW_HASH_KEY_MAX];
	struct rsw_pkt_meta m;
	struct rsw_hash_policy pol = {.algo = RSW_HASH_CRC,
				      .fields = 1u << RSW_HF_SRC_IP | 1u << RSW_HF_DST_IP |
						1u << RSW_HF_IP_PROTOCOL | 1u << RSW_HF_L4_SRC_PORT |
						1u << RSW_HF_L4_DST_PORT};
	size_t len = roce_frame(f, 1, 0xC123);
	rsw_parse(f, (uint32_t)len, &m);
	static const uint8_t want[] = {10, 1, 0, 1, 10, 2, 0, 1, 17, 0xC1, 0x23, 0x12, 0xB7};
	assert_int_equal(rsw_hash_key(&pol, f, &m, key), sizeof(want));
	assert_memory_equal(key, want, sizeof(want));
}

/* The 5-tuple's key from metadata alone: no L4 (ports are zeros), IPv6, and a UDF after it. */
static void five_tuple_key_cases(void **state)
{
	(void)state;
	uint8_t key[RSW_HASH_KEY_MAX], f[128];
	struct rsw_hash_policy pol = {.algo = RSW_HASH_CRC, .fields = RSW_HASH_FIVE_TUPLE};
	struct rsw_pkt_meta m = {.l3 = RSW_L3_IPV4, .ip_proto = 1, .sport = 0x1111,
				 .dport = 0x2222, .src_ip = {192, 0, 2, 1}, .dst_ip = {198, 51, 100, 7}};
	static const uint8_t icmp[] = {192, 0, 2, 1, 198, 51, 100, 7, 1, 0, 0, 0, 0};
	assert_int_equal(rsw_hash_key(&pol, NULL, &m, key), sizeof(icmp));
	assert_memory_equal(key, icmp, sizeof(icmp));
	/* TCP: the ports, big-endian */
	m.ip_proto = 6;
	m.flags = RSW_META_F_TCP;
	static const uint8_t tcp[] = {192, 0, 2, 1, 198, 51, 100, 7, 6, 0x11, 0x11, 0x22, 0x22};
	assert_int_equal(rsw_hash_key(&pol, NULL, &m, key), sizeof(tcp));
	assert_memory_equal(key, tcp, sizeof(tcp));
	/* IPv6: 16-byte addresses (2001:db8::1 -> 2001:db8::2), UDP 49152 -> 4791 */
	struct rsw_pkt_meta m6 = {.l3 = RSW_L3_IPV6, .ip_proto = 17, .flags = RSW_META_F_UDP,
				  .sport = 49152, .dport = 4791,
				  .src_ip = {0x20, 0x01, 0x0d, 0xb8, [15] = 1},
				  .dst_ip = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
	static const uint8_t v6[] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
				     0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
				     17, 0xC0, 0x00, 0x12, 0xB7};
	assert_int_equal(rsw_hash_key(&pol, NULL, &m6, key), sizeof(v6));
	assert_memory_equal(key, v6, sizeof(v6));
	/* the 5-tuple then the destination-QP UDF (the E-ECMP policy of config/rtsw.yaml) */
	pol.n_udf = 1;
	pol.udf[0] = (struct rsw_udf){.base = RSW_UDF_L4, .offset = 13, .length = 3,
				      .mask = {0xFF, 0xFF, 0xFF}, .match_ip_protocol = 17,
				      .match_l4_dst_port = 4791};
	size_t len = roce_frame(f, 0x00ABCD, 0xC123);
	struct rsw_pkt_meta r;
	assert_int_equal(rsw_parse(f, (uint32_t)len, &r), 0);
	static const uint8_t qp[] = {10, 1, 0, 1, 10, 2, 0, 1, 17, 0xC1, 0x23, 0x12, 0xB7,
				     0x00, 0xAB, 0xCD};
	assert_int_equal(rsw_hash_key(&pol, f, &r, key), sizeof(qp));
	assert_memory_equal(key, qp, sizeof(qp));
	/* one field fewer takes the field-by-field path: the same bytes without the protocol */
	pol.fields &= ~(1u << RSW_HF_IP_PROTOCOL);
	static const uint8_t no_proto[] = {10, 1, 0, 1, 10, 2, 0, 1, 0xC1, 0x23, 0x12, 0xB7,
					   0x00, 0xAB, 0xCD};
	assert_int_equal(rsw_hash_key(&pol, f, &r, key), sizeof(no_proto));
	assert_memory_equal(key, no_proto, sizeof(no_proto));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc_catalogue),       cmocka_unit_test(xor_by_hand),
		cmocka_unit_test(jenkins_lookup3),     cmocka_unit_test(random_is_seeded),
		cmocka_unit_test(names_round_trip),    cmocka_unit_test(udf_selects_dest_qp),
		cmocka_unit_test(five_tuple_key_order), cmocka_unit_test(five_tuple_key_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
