/* The parser: ethernet → vlan{0,2} → ipv4|ipv6 → udp|tcp → bth → extended headers by opcode,
 * and ethernet → mac_control (PFC, 802.3x PAUSE). It never reads past len. */
#ifndef RSW_PARSE_H
#define RSW_PARSE_H

#include <stdint.h>

#include "pkt_meta.h"

#define RSW_ETHERTYPE_IPV4 0x0800
#define RSW_ETHERTYPE_IPV6 0x86DD
#define RSW_ETHERTYPE_VLAN 0x8100
#define RSW_ETHERTYPE_QINQ 0x88A8
#define RSW_ETHERTYPE_MAC_CONTROL 0x8808
#define RSW_MAC_CONTROL_PAUSE 0x0001
#define RSW_MAC_CONTROL_PFC 0x0101

/* Extension headers walked before giving up with ipv6_ext_limit. */
#define RSW_IPV6_EXT_MAX 8

/* Parse one frame. Fills the parser part of *m (ingress fields are zeroed) and returns 0 or the
 * enum rsw_drop_reason that rejects it; m->drop holds the same value. */
unsigned rsw_parse(const uint8_t *frame, uint32_t len, struct rsw_pkt_meta *m);

/* The two ways rsw_parse takes: the fast path for the common RoCEv2 shape (1 when it took the
 * frame, with *m as rsw_parse_full fills it; 0 leaves *m undefined), and the full parser. */
int rsw_parse_fast(const uint8_t *frame, uint32_t len, struct rsw_pkt_meta *m);
unsigned rsw_parse_full(const uint8_t *frame, uint32_t len, struct rsw_pkt_meta *m);

static inline uint16_t rsw_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rsw_rd24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t rsw_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif
