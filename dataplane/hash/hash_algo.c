#include <string.h>
#include <zlib.h>

#include <rte_jhash.h>

#include "hash_algo.h"

static const char *const algo_names[RSW_HASH_ALGO_COUNT] = {
	"CRC", "CRC_CCITT", "CRC_32LO", "CRC_32HI", "XOR", "CRC_XOR", "JENKINS_LO", "JENKINS_HI",
	"RANDOM",
};

const char *rsw_hash_algo_name(unsigned algo)
{
	return algo < RSW_HASH_ALGO_COUNT ? algo_names[algo] : "?";
}

unsigned rsw_hash_algo_from_name(const char *name)
{
	for (unsigned i = 0; i < RSW_HASH_ALGO_COUNT; i++)
		if (strcmp(algo_names[i], name) == 0)
			return i;
	return RSW_HASH_ALGO_COUNT;
}

/* Slicing-by-8 tables (Kounavis & Berry), built once: 8 × 512 bytes each. t[0] is the classic
 * byte-wise table; t[k] advances it k more bytes, so eight input bytes cost one dependent step
 * instead of eight (a 16-byte 5-tuple + QP key is two steps). */
static uint16_t arc_t[8][256], xmodem_t[8][256];

static void __attribute__((constructor)) crc16_tables_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint16_t r = (uint16_t)i; /* reflected: poly 0x8005 bit-reversed is 0xA001 */
		for (int b = 0; b < 8; b++)
			r = (r & 1) ? (uint16_t)((r >> 1) ^ 0xA001) : (uint16_t)(r >> 1);
		arc_t[0][i] = r;
		uint16_t x = (uint16_t)(i << 8);
		for (int b = 0; b < 8; b++)
			x = (x & 0x8000) ? (uint16_t)((x << 1) ^ 0x1021) : (uint16_t)(x << 1);
		xmodem_t[0][i] = x;
	}
	for (int k = 1; k < 8; k++)
		for (unsigned i = 0; i < 256; i++) {
			uint16_t r = arc_t[k - 1][i];
			arc_t[k][i] = (uint16_t)((r >> 8) ^ arc_t[0][r & 0xFF]);
			uint16_t x = xmodem_t[k - 1][i];
			xmodem_t[k][i] = (uint16_t)((x << 8) ^ xmodem_t[0][x >> 8]);
		}
}

uint16_t rsw_crc16_arc(uint16_t crc, const uint8_t *p, size_t n)
{
	for (; n >= 8; n -= 8, p += 8) {
		uint16_t x = (uint16_t)(crc ^ (p[0] | p[1] << 8));
		crc = (uint16_t)(arc_t[7][x & 0xFF] ^ arc_t[6][x >> 8] ^ arc_t[5][p[2]] ^
				 arc_t[4][p[3]] ^ arc_t[3][p[4]] ^ arc_t[2][p[5]] ^ arc_t[1][p[6]] ^
				 arc_t[0][p[7]]);
	}
	for (; n >= 4; n -= 4, p += 4) {
		uint16_t x = (uint16_t)(crc ^ (p[0] | p[1] << 8));
		crc = (uint16_t)(arc_t[3][x & 0xFF] ^ arc_t[2][x >> 8] ^ arc_t[1][p[2]] ^ arc_t[0][p[3]]);
	}
	while (n--)
		crc = (uint16_t)((crc >> 8) ^ arc_t[0][(crc ^ *p++) & 0xFF]);
	return crc;
}

uint16_t rsw_crc16_xmodem(uint16_t crc, const uint8_t *p, size_t n)
{
	for (; n >= 8; n -= 8, p += 8) {
		uint16_t x = (uint16_t)(crc ^ (p[0] << 8 | p[1]));
		crc = (uint16_t)(xmodem_t[7][x >> 8] ^ xmodem_t[6][x & 0xFF] ^ xmodem_t[5][p[2]] ^
				 xmodem_t[4][p[3]] ^ xmodem_t[3][p[4]] ^ xmodem_t[2][p[5]] ^
				 xmodem_t[1][p[6]] ^ xmodem_t[0][p[7]]);
	}
	for (; n >= 4; n -= 4, p += 4) {
		uint16_t x = (uint16_t)(crc ^ (p[0] << 8 | p[1]));
		crc = (uint16_t)(xmodem_t[3][x >> 8] ^ xmodem_t[2][x & 0xFF] ^ xmodem_t[1][p[2]] ^
				 xmodem_t[0][p[3]]);
	}
	while (n--)
		crc = (uint16_t)((crc << 8) ^ xmodem_t[0][((crc >> 8) ^ *p++) & 0xFF]);
	return crc;
}

uint16_t rsw_xor16(const uint8_t *p, size_t n)
{
	uint16_t x = 0;
	size_t i;
	for (i = 0; i + 1 < n; i += 2)
		x ^= (uint16_t)(p[i] << 8 | p[i + 1]);
	if (i < n) /* an odd last byte is the high byte of a word padded with zero */
		x ^= (uint16_t)(p[i] << 8);
	return x;
}

/* rte_jhash reads whole aligned words, up to 3 bytes past the end: hash an aligned copy. */
static uint32_t jhash(const uint8_t *key, size_t len, uint32_t seed)
{
	uint32_t buf[64];
	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, key, len);
	return rte_jhash(buf, (uint32_t)len, seed);
}

uint32_t rsw_hash_compute(unsigned algo, uint32_t seed, const uint8_t *key, size_t len,
			  uint64_t *rnd)
{
	switch (algo) {
	case RSW_HASH_CRC:
		return rsw_crc16_arc((uint16_t)seed, key, len);
	case RSW_HASH_CRC_CCITT:
		return rsw_crc16_xmodem((uint16_t)seed, key, len);
	case RSW_HASH_CRC_32LO:
		return (uint32_t)crc32(seed, key, (uInt)len) & 0xFFFF;
	case RSW_HASH_CRC_32HI:
		return (uint32_t)crc32(seed, key, (uInt)len) >> 16;
	case RSW_HASH_XOR:
		return (rsw_xor16(key, len) ^ seed) & 0xFFFF;
	case RSW_HASH_CRC_XOR:
		return (uint32_t)(rsw_crc16_arc((uint16_t)seed, key, len) ^ rsw_xor16(key, len));
	case RSW_HASH_JENKINS_LO:
		return jhash(key, len, seed) & 0xFFFF;
	case RSW_HASH_JENKINS_HI:
		return jhash(key, len, seed) >> 16;
	case RSW_HASH_RANDOM:
		if (!rnd)
			return 0;
		/* xorshift64*: deterministic for a given seed, so replays repeat */
		*rnd ^= *rnd >> 12;
		*rnd ^= *rnd << 25;
		*rnd ^= *rnd >> 27;
		return (uint32_t)((*rnd * 0x2545F4914F6CDD1DULL) >> 48);
	default:
		return 0;
	}
}
