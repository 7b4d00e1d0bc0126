/* Egress header rewrites. Each keeps the IPv4 header checksum valid by incremental update
 * (RFC 1624); none touches the ICRC, whose masked fields are exactly these (REFERENCE §1). */
#ifndef RSW_REWRITE_H
#define RSW_REWRITE_H

#include <stdint.h>

#include "pkt_meta.h"

/* Decrement TTL / hop limit. The caller has already dropped packets with TTL <= 1. */
void rsw_rewrite_ttl(uint8_t *frame, struct rsw_pkt_meta *m);
/* Set destination and source MAC. */
void rsw_rewrite_mac(uint8_t *frame, const uint8_t dmac[6], const uint8_t smac[6]);
/* Mark ECN CE (11) on an ECN-capable packet; returns 0 if the packet is not ECT. */
int rsw_rewrite_ecn_ce(uint8_t *frame, struct rsw_pkt_meta *m);
/* The same on the IP header at frame + l3_off (l3: enum rsw_l3), reading the ECN from it;
 * returns 1 if it marked, 0 if the packet is not ECT(0)/ECT(1) (already CE: left as it is). */
int rsw_rewrite_ecn_ce_at(uint8_t *frame, uint8_t l3, uint16_t l3_off);
/* RFC 1624 eqn. 3: checksum after one 16-bit word changed from old to new (host order). */
uint16_t rsw_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word);

#endif
