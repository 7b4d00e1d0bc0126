/* Builds RoCEv2 frames (Ethernet, IPv4, UDP/4791, BTH, RETH when the opcode has one, payload,
 * pad, ICRC) for the traffic generator and tests of the switch itself. The IPv4 checksum and the
 * ICRC are computed here; the UDP checksum is 0, as RoCEv2 NICs send it. */
#ifndef RSW_ROCE_BUILD_H
#define RSW_ROCE_BUILD_H

#include <stddef.h>
#include <stdint.h>

struct rsw_roce_spec {
	uint8_t dmac[6], smac[6];
	uint8_t src_ip[4], dst_ip[4];
	uint8_t dscp, ecn, ttl;
	uint16_t sport;
	uint8_t opcode;
	uint32_t dest_qp;    /* 24 bits */
	uint32_t psn;        /* 24 bits */
	uint8_t ackreq;
	uint64_t va;         /* RETH virtual address, when the opcode carries a RETH */
	uint32_t rkey, dma_len;
	uint32_t payload;    /* payload bytes (zeros); 0 for ACKNOWLEDGE and CNP */
	uint8_t syndrome;    /* AETH of an RC ACKNOWLEDGE (0x11): ACK 0x1F, NAK 0x60 | code */
	uint32_t msn;        /* AETH message sequence number (24 bits) */
	uint8_t icrc_unread; /* leave the ICRC zero: no one will read this frame's bytes (a replay
			      * writing no capture), and CRC over the headers is most of its cost */
};

/* Largest frame this builds: Ethernet + IPv4 + UDP + BTH + RETH + payload + pad + ICRC. */
#define RSW_ROCE_BUILD_OVERHEAD (14 + 20 + 8 + 12 + 16 + 3 + 4)

/* Writes the frame into buf (cap bytes) and returns its length, or 0 if it does not fit or the
 * opcode is not one this builds (RC SEND and RDMA WRITE families, RC ACKNOWLEDGE, CNP). */
size_t rsw_roce_build(uint8_t *buf, size_t cap, const struct rsw_roce_spec *s);

/* Bytes a frame's headers may take (Ethernet, IPv4, UDP, BTH, RETH or AETH or the CNP's
 * reserved bytes): past them a built frame holds only its zero payload, zero pad and ICRC. */
#define RSW_ROCE_HDR_MAX (14 + 20 + 8 + 12 + 16)

/* rsw_roce_build into a buffer known to be zero past its first RSW_ROCE_HDR_MAX bytes: the
 * payload is not written (a generator's frames are mostly payload). The same frame. */
size_t rsw_roce_build_on_zeros(uint8_t *buf, size_t cap, const struct rsw_roce_spec *s);
/* Brings a buffer that holds a frame of len bytes built (and then changed only in its headers)
 * back to zero past its headers, for the next rsw_roce_build_on_zeros. */
void rsw_roce_scrub(uint8_t *buf, size_t len);

/* The UDP source port Linux derives from the QP numbers (REFERENCE §1). */
uint16_t rsw_roce_linux_sport(uint32_t lqpn, uint32_t rqpn);

#endif
