#include <string.h>

#include "rewrite.h"

uint16_t rsw_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word)
{
	uint32_t sum = (uint16_t)~csum + (uint32_t)(uint16_t)~old_word + new_word;
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static void ipv4_set_word(uint8_t *h, unsigned off, uint16_t new_word)
{
	uint16_t old = (uint16_t)(h[off] << 8 | h[off + 1]);
	uint16_t ck = (uint16_t)(h[10] << 8 | h[11]);
	ck = rsw_csum_update16(ck, old, new_word);
	h[off] = (uint8_t)(new_word >> 8);
	h[off + 1] = (uint8_t)new_word;
	h[10] = (uint8_t)(ck >> 8);
	h[11] = (uint8_t)ck;
}

void rsw_rewrite_ttl(uint8_t *p, struct rsw_pkt_meta *m)
{
	uint8_t *h = p + m->l3_off;

	if (m->l3 == RSW_L3_IPV4) {
		/* TTL shares a 16-bit word with the protocol */
		ipv4_set_word(h, 8, (uint16_t)((unsigned)(uint8_t)(h[8] - 1) << 8 | h[9]));
		m->ttl = h[8];
	} else if (m->l3 == RSW_L3_IPV6) {
		h[7]--;
		m->ttl = h[7];
	}
}

void rsw_rewrite_mac(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6])
{
	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
}

int rsw_rewrite_ecn_ce_at(uint8_t *p, uint8_t l3, uint16_t l3_off)
{
	uint8_t *h = p + l3_off;

	if (l3 == RSW_L3_IPV4) {
		if ((h[1] & 3) == 0 || (h[1] & 3) == 3)
			return 0;
		ipv4_set_word(h, 0, (uint16_t)(h[0] << 8 | h[1] | 3));
	} else if (l3 == RSW_L3_IPV6) {
		/* ECN is the low 2 bits of the traffic class: bits 4-5 of byte 1 */
		if ((h[1] & 0x30) == 0 || (h[1] & 0x30) == 0x30)
			return 0;
		h[1] |= 0x30;
	} else {
		return 0;
	}
	return 1;
}

int rsw_rewrite_ecn_ce(uint8_t *p, struct rsw_pkt_meta *m)
{
	if (m->ecn == 0 || !rsw_rewrite_ecn_ce_at(p, m->l3, m->l3_off))
		return 0;
	m->ecn = 3;
	return 1;
}
