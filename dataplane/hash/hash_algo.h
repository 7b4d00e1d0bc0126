/* Switch hash algorithms, named as SAI names them (saiswitch.h SAI_HASH_ALGORITHM_*).
 * docs/hash.md states each one exactly; tests pin them with catalogue check values. */
#ifndef RSW_HASH_ALGO_H
#define RSW_HASH_ALGO_H

#include <stddef.h>
#include <stdint.h>

enum rsw_hash_algo {
	RSW_HASH_CRC = 0,   /* CRC-16/ARC: poly 0x8005 reflected, init = seed, xorout 0 */
	RSW_HASH_CRC_CCITT, /* CRC-16/XMODEM: poly 0x1021 not reflected, init = seed, xorout 0 */
	RSW_HASH_CRC_32LO,  /* low 16 bits of CRC-32/ISO-HDLC (zlib crc32(seed, ...)) */
	RSW_HASH_CRC_32HI,  /* high 16 bits of the same CRC-32 */
	RSW_HASH_XOR,       /* XOR of the big-endian 16-bit words of the key, XOR seed */
	RSW_HASH_CRC_XOR,   /* CRC (CRC-16/ARC) XOR the XOR value */
	RSW_HASH_JENKINS_LO,/* low 16 bits of Bob Jenkins' lookup3 hashlittle(key, seed) */
	RSW_HASH_JENKINS_HI,/* high 16 bits of the same */
	RSW_HASH_RANDOM,    /* per-packet pseudo-random (xorshift64*, seeded): not flow-stable */
	RSW_HASH_ALGO_COUNT
};

const char *rsw_hash_algo_name(unsigned algo);
/* enum value from the SAI name without prefix ("CRC_CCITT"); RSW_HASH_ALGO_COUNT if unknown. */
unsigned rsw_hash_algo_from_name(const char *name);

/* 16-bit hash of key. *rnd is the RANDOM state (may be NULL for the other algorithms). */
uint32_t rsw_hash_compute(unsigned algo, uint32_t seed, const uint8_t *key, size_t len,
			  uint64_t *rnd);

uint16_t rsw_crc16_arc(uint16_t init, const uint8_t *p, size_t n);
uint16_t rsw_crc16_xmodem(uint16_t init, const uint8_t *p, size_t n);
uint16_t rsw_xor16(const uint8_t *p, size_t n);

#endif
