/* CRC-32 (zlib polynomial) over 8 bytes of 0xFF, then IP..payload with the variant fields
 * (those a router may change) replaced by ones, as Linux rxe_icrc.c does. */
#include <string.h>
#include <zlib.h>

#include "icrc.h"
#include "roce_hdr.h"

/* The ICRC's CRC over the packet up to byte end (icrc_off for the whole packet). */
static uLong icrc_until(const uint8_t *p, const struct rsw_pkt_meta *m, uint32_t end)
{
	static const uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
	uint8_t fixed[40];
	uLong crc = crc32(0L, ones, sizeof(ones));

	if (m->l3 == RSW_L3_IPV4) {
		memcpy(fixed, p + m->l3_off, 20);
		fixed[1] = 0xFF;                /* DSCP + ECN */
		fixed[8] = 0xFF;                /* TTL */
		fixed[10] = fixed[11] = 0xFF;   /* header checksum */
		crc = crc32(crc, fixed, 20);
		crc = crc32(crc, p + m->l3_off + 20, (uInt)(m->l4_off - m->l3_off - 20));
	} else {
		memcpy(fixed, p + m->l3_off, 40);
		fixed[0] |= 0x0F;               /* traffic class, flow label */
		fixed[1] = fixed[2] = fixed[3] = 0xFF;
		fixed[7] = 0xFF;                /* hop limit */
		crc = crc32(crc, fixed, 40);
		crc = crc32(crc, p + m->l3_off + 40, (uInt)(m->l4_off - m->l3_off - 40));
	}
	memcpy(fixed, p + m->l4_off, 8);
	fixed[6] = fixed[7] = 0xFF;             /* UDP checksum */
	crc = crc32(crc, fixed, 8);
	memcpy(fixed, p + m->bth_off, RSW_BTH_LEN);
	fixed[4] = 0xFF;                        /* FECN, BECN, reserved */
	crc = crc32(crc, fixed, RSW_BTH_LEN);
	uint32_t rest = m->bth_off + RSW_BTH_LEN;
	crc = crc32(crc, p + rest, (uInt)(end - rest));
	return crc;
}

uint32_t rsw_icrc_compute(const uint8_t *p, const struct rsw_pkt_meta *m)
{
	return (uint32_t)icrc_until(p, m, m->icrc_off);
}

/* A CRC-32 continued over n zero bytes, without reading them: CRC-32 is linear, so appending a
 * block is zlib's combine of the two CRCs, whose operator (x^(8n) mod P) and the zeros' own CRC
 * depend only on n. A generator's frames have a few payload lengths: they are cached per thread,
 * which turns 4 KB of byte-wise CRC per frame into one multiplication modulo P. */
#define ZERO_CACHE 16
static uLong crc32_zeros(uLong crc, uint32_t n)
{
	static __thread struct {
		uint32_t n;
		uLong op, crc;
	} cache[ZERO_CACHE];
	static const uint8_t zeros[1024];
	unsigned slot = n % ZERO_CACHE;
	if (n == 0)
		return crc;
	if (cache[slot].n != n) {
		uLong z = crc32(0L, Z_NULL, 0);
		for (uint32_t left = n; left;) {
			uint32_t k = left < sizeof(zeros) ? left : (uint32_t)sizeof(zeros);
			z = crc32(z, zeros, k);
			left -= k;
		}
		cache[slot].op = crc32_combine_gen((z_off_t)n);
		cache[slot].crc = z;
		cache[slot].n = n;
	}
	return crc32_combine_op(crc, cache[slot].crc, cache[slot].op);
}

uint32_t rsw_icrc_compute_zero_tail(const uint8_t *p, const struct rsw_pkt_meta *m,
				    uint32_t n_zero)
{
	return (uint32_t)crc32_zeros(icrc_until(p, m, m->icrc_off - n_zero), n_zero);
}

uint32_t rsw_icrc_read(const uint8_t *p, const struct rsw_pkt_meta *m)
{
	const uint8_t *c = p + m->icrc_off;
	return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

int rsw_icrc_check(const uint8_t *p, const struct rsw_pkt_meta *m)
{
	if (!(m->flags & RSW_META_F_ROCE) || m->drop)
		return -1;
	return rsw_icrc_compute(p, m) == rsw_icrc_read(p, m);
}
