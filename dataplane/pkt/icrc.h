/* RoCEv2 invariant CRC (REFERENCE §1). Used to verify captures and by the traffic generator;
 * the forwarding path never recomputes it. */
#ifndef RSW_ICRC_H
#define RSW_ICRC_H

#include <stdint.h>

#include "pkt_meta.h"

/* ICRC of a parsed RoCE packet (m from rsw_parse with RSW_META_F_ROCE). */
uint32_t rsw_icrc_compute(const uint8_t *frame, const struct rsw_pkt_meta *m);
/* The same, for a packet whose last n_zero bytes before the ICRC are zeros (a generated
 * payload and its pad), which it does not read: the same value in constant time for any
 * payload length (m->icrc_off - n_zero must not be inside the headers). */
uint32_t rsw_icrc_compute_zero_tail(const uint8_t *frame, const struct rsw_pkt_meta *m,
				    uint32_t n_zero);
/* The ICRC carried by the packet (least significant byte first on the wire). */
uint32_t rsw_icrc_read(const uint8_t *frame, const struct rsw_pkt_meta *m);
/* 1 if the carried ICRC matches, 0 if not, -1 if the packet is not a parsed RoCE packet. */
int rsw_icrc_check(const uint8_t *frame, const struct rsw_pkt_meta *m);

#endif
