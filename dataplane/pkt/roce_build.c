#include <string.h>

#include "icrc.h"
#include "parse.h"
#include "roce_build.h"
#include "roce_hdr.h"

uint16_t rsw_roce_linux_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	v ^= v >> 20;
	v ^= v >> 40;
	uint32_t fl = (uint32_t)(v & 0xFFFFF);
	return (uint16_t)(((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static size_t build(uint8_t *buf, size_t cap, const struct rsw_roce_spec *s, int on_zeros)
{
	uint16_t ext = rsw_roce_opcode_ext[s->opcode];
	/* RC SEND/WRITE families (RETH), RC ACKNOWLEDGE (AETH) and the CNP */
	const uint16_t allowed = RSW_OPC_VALID | RSW_EXT_RETH | RSW_EXT_AETH | RSW_EXT_CNP;
	if (!(ext & RSW_OPC_VALID) || (ext & ~allowed) ||
	    (s->opcode > 0x1F && s->opcode != RSW_OP_CNP) ||
	    ((ext & (RSW_EXT_AETH | RSW_EXT_CNP)) && s->payload))
		return 0;
	unsigned reth = (ext & RSW_EXT_RETH) ? RSW_RETH_LEN : 0;
	unsigned aeth = (ext & RSW_EXT_AETH) ? RSW_AETH_LEN : 0;
	unsigned cnp = (ext & RSW_EXT_CNP) ? RSW_CNP_RSVD_LEN : 0;
	unsigned pad = (4 - (s->payload & 3)) & 3;
	size_t roce = RSW_BTH_LEN + reth + aeth + cnp + s->payload + pad + RSW_ICRC_LEN;
	size_t len = 14 + 20 + 8 + roce;
	if (len > cap || len - 14 > 0xFFFF)
		return 0;
	memset(buf, 0, on_zeros && len > RSW_ROCE_HDR_MAX ? RSW_ROCE_HDR_MAX : len);
	memcpy(buf, s->dmac, 6);
	memcpy(buf + 6, s->smac, 6);
	put16(buf + 12, RSW_ETHERTYPE_IPV4);
	uint8_t *ip = buf + 14;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(s->dscp << 2 | (s->ecn & 3));
	put16(ip + 2, (uint16_t)(len - 14));
	put16(ip + 6, 0x4000); /* DF, as RoCE NICs send */
	ip[8] = s->ttl;
	ip[9] = 17;
	memcpy(ip + 12, s->src_ip, 4);
	memcpy(ip + 16, s->dst_ip, 4);
	uint32_t sum = 0;
	for (unsigned i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	put16(ip + 10, (uint16_t)~sum);
	uint8_t *udp = ip + 20;
	put16(udp, s->sport);
	put16(udp + 2, RSW_ROCE_UDP_PORT);
	put16(udp + 4, (uint16_t)(8 + roce));
	uint8_t *bth = udp + 8;
	bth[0] = s->opcode;
	bth[1] = (uint8_t)(pad << RSW_BTH_PADCNT_SHIFT);
	put16(bth + 2, 0xFFFF); /* default P_Key */
	put32(bth + 4, s->dest_qp & 0xFFFFFF);
	put32(bth + 8, s->psn & 0xFFFFFF);
	if (s->ackreq)
		bth[8] |= RSW_BTH_ACKREQ;
	if (reth) {
		uint8_t *r = bth + RSW_BTH_LEN;
		put32(r, (uint32_t)(s->va >> 32));
		put32(r + 4, (uint32_t)s->va);
		put32(r + 8, s->rkey);
		put32(r + 12, s->dma_len);
	}
	if (aeth) /* syndrome (ACK, or NAK and its code) and the responder's MSN */
		put32(bth + RSW_BTH_LEN, (uint32_t)s->syndrome << 24 | (s->msn & 0xFFFFFF));
	if (cnp) /* a CNP carries the BECN bit (IBTA RoCEv2 Annex A17.9.2) */
		bth[4] |= RSW_BTH_BECN;
	if (s->icrc_unread) /* its four bytes stay zero, as the buffer was */
		return len;
	/* where the ICRC reads, as the parser would find it in the frame just laid out */
	struct rsw_pkt_meta m = {.l3 = RSW_L3_IPV4, .l3_off = 14, .l4_off = 14 + 20,
				 .bth_off = 14 + 20 + 8, .icrc_off = (uint16_t)(len - RSW_ICRC_LEN)};
	uint32_t crc = rsw_icrc_compute_zero_tail(buf, &m, s->payload + pad);
	for (unsigned i = 0; i < 4; i++) /* least significant byte first on the wire */
		buf[m.icrc_off + i] = (uint8_t)(crc >> (8 * i));
	return len;
}

size_t rsw_roce_build(uint8_t *buf, size_t cap, const struct rsw_roce_spec *s)
{
	return build(buf, cap, s, 0);
}

size_t rsw_roce_build_on_zeros(uint8_t *buf, size_t cap, const struct rsw_roce_spec *s)
{
	return build(buf, cap, s, 1);
}

void rsw_roce_scrub(uint8_t *buf, size_t len)
{
	memset(buf, 0, len < RSW_ROCE_HDR_MAX ? len : RSW_ROCE_HDR_MAX);
	if (len >= RSW_ICRC_LEN)
		memset(buf + len - RSW_ICRC_LEN, 0, RSW_ICRC_LEN);
}
