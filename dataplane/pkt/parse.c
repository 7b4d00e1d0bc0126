/* Parser states follow the headers on the wire. A header that does not fit in the frame is
 * "<header>_truncated"; a length field that contradicts its header is "<header>_bad_...".
 * For RoCE, a frame that ends before the end its UDP length claims lacks its ICRC. */
#include <string.h>

#include <rte_ip.h>

#include "drop_reason.h"
#include "parse.h"
#include "roce_hdr.h"

#define ETH_HLEN 14
#define VLAN_HLEN 4

/* The header's ones' complement sum is 0xFFFF. The common 20-byte header is summed as five
 * 32-bit words and folded (the same sum: end-around carry makes the word size immaterial, and
 * 0xFFFF reads the same in either byte order) instead of rte_raw_cksum's generic loop. */
static inline int ipv4_cksum_ok(const uint8_t *h, uint32_t ihl)
{
	if (ihl != 20)
		return rte_raw_cksum(h, ihl) == 0xFFFF;
	uint32_t w[5];
	memcpy(w, h, sizeof(w));
	uint64_t s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	s = (s & 0xFFFFFFFF) + (s >> 32);
	s = (s & 0xFFFFFFFF) + (s >> 32);
	s = (s & 0xFFFF) + (s >> 16);
	s = (s & 0xFFFF) + (s >> 16);
	return s == 0xFFFF;
}

static inline unsigned reject(struct rsw_pkt_meta *m, unsigned reason)
{
	m->drop = (uint8_t)reason;
	return reason;
}

static unsigned parse_mac_control(const uint8_t *p, uint32_t off, uint32_t len,
				  struct rsw_pkt_meta *m)
{
	if (off + 2 > len)
		return reject(m, RSW_DROP_MAC_CONTROL_TRUNCATED);
	uint16_t opcode = rsw_rd16(p + off);
	if (opcode == RSW_MAC_CONTROL_PFC) {
		/* opcode, reserved byte, class-enable vector, 8 × 16-bit times */
		if (off + 4 + 16 > len)
			return reject(m, RSW_DROP_MAC_CONTROL_TRUNCATED);
		m->l2_kind = RSW_L2_PFC;
		m->pfc_class_enable = p[off + 3];
		for (int i = 0; i < 8; i++)
			m->pfc_time[i] = rsw_rd16(p + off + 4 + 2 * i);
		return 0;
	}
	if (opcode == RSW_MAC_CONTROL_PAUSE) {
		if (off + 4 > len)
			return reject(m, RSW_DROP_MAC_CONTROL_TRUNCATED);
		m->l2_kind = RSW_L2_PAUSE;
		m->pfc_time[0] = rsw_rd16(p + off + 2);
		return 0;
	}
	return reject(m, RSW_DROP_MAC_CONTROL_BAD_OPCODE);
}

static const uint8_t ext_truncated_reason[RSW_EXT_COUNT] = {
	RSW_DROP_RDETH_TRUNCATED, RSW_DROP_DETH_TRUNCATED, RSW_DROP_FETH_TRUNCATED,
	RSW_DROP_RETH_TRUNCATED, RSW_DROP_ATOMICETH_TRUNCATED, RSW_DROP_AETH_TRUNCATED,
	RSW_DROP_ATOMICACKETH_TRUNCATED, RSW_DROP_IMMDT_TRUNCATED, RSW_DROP_IETH_TRUNCATED,
	RSW_DROP_CNP_TRUNCATED,
};

/* BTH at off; claimed_end is where the UDP length says the datagram ends, len the frame end. */
static unsigned parse_roce(const uint8_t *p, uint32_t off, uint32_t claimed_end, uint32_t len,
			   struct rsw_pkt_meta *m)
{
	uint32_t limit = claimed_end < len ? claimed_end : len;

	if (off + RSW_BTH_LEN > limit)
		return reject(m, RSW_DROP_BTH_TRUNCATED);
	const uint8_t *b = p + off;
	m->bth_off = (uint16_t)off;
	m->bth_opcode = b[0];
	m->bth_flags = b[1];
	m->bth_pkey = rsw_rd16(b + 2);
	m->bth_becn_fecn = b[4];
	m->bth_dest_qp = rsw_rd24(b + 5);
	m->bth_ackreq = b[8];
	m->bth_psn = rsw_rd24(b + 9);

	uint16_t ext = rsw_roce_opcode_ext[m->bth_opcode];
	if (!(ext & RSW_OPC_VALID))
		return reject(m, RSW_DROP_BTH_BAD_OPCODE);
	if (m->bth_flags & RSW_BTH_TVER_MASK)
		return reject(m, RSW_DROP_BTH_BAD_VERSION);

	off += RSW_BTH_LEN;
	/* the opcode's headers follow in bit order: visit only the set bits */
	for (unsigned bits = ext & ((1u << RSW_EXT_COUNT) - 1); bits; bits &= bits - 1) {
		unsigned i = (unsigned)__builtin_ctz(bits);
		uint32_t hl = rsw_roce_ext_len(i);
		if (off + hl > limit)
			return reject(m, ext_truncated_reason[i]);
		off += hl;
	}
	m->ext_present = ext & (uint16_t)~RSW_OPC_VALID;
	m->payload_off = (uint16_t)off;
	if (claimed_end > len || off + RSW_ICRC_LEN > claimed_end)
		return reject(m, RSW_DROP_ICRC_TRUNCATED);
	m->icrc_off = (uint16_t)(claimed_end - RSW_ICRC_LEN);
	unsigned pad = (m->bth_flags & RSW_BTH_PADCNT_MASK) >> RSW_BTH_PADCNT_SHIFT;
	if (m->icrc_off - off < pad)
		return reject(m, RSW_DROP_ROCE_BAD_PAD);
	m->flags |= RSW_META_F_ROCE;
	if (m->bth_opcode == RSW_OP_CNP)
		m->flags |= RSW_META_F_CNP;
	return 0;
}

/* L4 at off; l3_end is where the IP header says the packet ends (may exceed len). */
static unsigned parse_l4(const uint8_t *p, uint32_t off, uint32_t l3_end, uint32_t len,
			 struct rsw_pkt_meta *m, unsigned l3_truncated)
{
	uint32_t limit = l3_end < len ? l3_end : len;

	m->l4_off = (uint16_t)off;
	if (m->flags & RSW_META_F_FRAG_LATER)
		goto tail;
	if (m->ip_proto == 17) {
		if (off + 8 > limit)
			return reject(m, RSW_DROP_UDP_TRUNCATED);
		m->flags |= RSW_META_F_UDP;
		m->sport = rsw_rd16(p + off);
		m->dport = rsw_rd16(p + off + 2);
		uint32_t ulen = rsw_rd16(p + off + 4);
		if (ulen < 8 || off + ulen > l3_end)
			return reject(m, RSW_DROP_UDP_BAD_LENGTH);
		/* A first fragment holds only part of the datagram: no ICRC to find. */
		if (m->dport == RSW_ROCE_UDP_PORT && !(m->flags & RSW_META_F_FRAG))
			return parse_roce(p, off + 8, off + ulen, len, m);
	} else if (m->ip_proto == 6) {
		/* Only the ports are needed (hashing); a short TCP header is left to the hosts. */
		if (off + 4 <= limit) {
			m->flags |= RSW_META_F_TCP;
			m->sport = rsw_rd16(p + off);
			m->dport = rsw_rd16(p + off + 2);
		}
	}
tail:
	if (l3_end > len)
		return reject(m, l3_truncated);
	return 0;
}

static unsigned parse_ipv4(const uint8_t *p, uint32_t off, uint32_t len, struct rsw_pkt_meta *m)
{
	if (off + 20 > len)
		return reject(m, RSW_DROP_IPV4_TRUNCATED);
	const uint8_t *h = p + off;
	if ((h[0] >> 4) != 4)
		return reject(m, RSW_DROP_IPV4_BAD_VERSION);
	uint32_t ihl = (h[0] & 0x0F) * 4u;
	if (ihl < 20)
		return reject(m, RSW_DROP_IPV4_BAD_IHL);
	if (off + ihl > len)
		return reject(m, RSW_DROP_IPV4_TRUNCATED);
	if (!ipv4_cksum_ok(h, ihl))
		return reject(m, RSW_DROP_IPV4_BAD_CHECKSUM);
	uint32_t tot = rsw_rd16(h + 2);
	if (tot < ihl)
		return reject(m, RSW_DROP_IPV4_BAD_TOTAL_LENGTH);

	m->l3 = RSW_L3_IPV4;
	m->l3_off = (uint16_t)off;
	m->dscp = h[1] >> 2;
	m->ecn = h[1] & 3;
	m->ttl = h[8];
	m->ip_proto = h[9];
	memcpy(m->src_ip, h + 12, 4);
	memcpy(m->dst_ip, h + 16, 4);
	if (ihl > 20)
		m->flags |= RSW_META_F_IPV4_OPTS;
	uint16_t frag = rsw_rd16(h + 6);
	if (frag & 0x3FFF) /* MF or a non-zero offset */
		m->flags |= RSW_META_F_FRAG;
	if (frag & 0x1FFF)
		m->flags |= RSW_META_F_FRAG_LATER;
	return parse_l4(p, off + ihl, off + tot, len, m, RSW_DROP_IPV4_TRUNCATED);
}

static unsigned parse_ipv6(const uint8_t *p, uint32_t off, uint32_t len, struct rsw_pkt_meta *m)
{
	if (off + 40 > len)
		return reject(m, RSW_DROP_IPV6_TRUNCATED);
	const uint8_t *h = p + off;
	uint32_t vtf = rsw_rd32(h);
	if ((vtf >> 28) != 6)
		return reject(m, RSW_DROP_IPV6_BAD_VERSION);
	uint32_t plen = rsw_rd16(h + 4);
	if (plen == 0) /* jumbograms do not exist on Ethernet */
		return reject(m, RSW_DROP_IPV6_BAD_PAYLOAD_LENGTH);

	m->l3 = RSW_L3_IPV6;
	m->l3_off = (uint16_t)off;
	m->dscp = (uint8_t)((vtf >> 22) & 0x3F);
	m->ecn = (uint8_t)((vtf >> 20) & 3);
	m->flow_label = vtf & 0xFFFFF;
	m->ttl = h[7];
	memcpy(m->src_ip, h + 8, 16);
	memcpy(m->dst_ip, h + 24, 16);

	uint32_t l3_end = off + 40 + plen;
	uint32_t limit = l3_end < len ? l3_end : len;
	uint8_t nh = h[6];
	uint32_t x = off + 40;
	for (int n = 0;; n++) {
		uint32_t hl;
		if (nh != 0 && nh != 43 && nh != 44 && nh != 51 && nh != 60)
			break;
		if (n == RSW_IPV6_EXT_MAX)
			return reject(m, RSW_DROP_IPV6_EXT_LIMIT);
		if (x + 8 > limit) /* every extension header is at least 8 bytes */
			return reject(m, RSW_DROP_IPV6_EXT_TRUNCATED);
		if (nh == 44) {
			uint16_t fo = rsw_rd16(p + x + 2);
			m->flags |= RSW_META_F_FRAG;
			if (fo & 0xFFF8)
				m->flags |= RSW_META_F_FRAG_LATER;
			hl = 8;
		} else if (nh == 51) {
			hl = (p[x + 1] + 2u) * 4u;
		} else {
			hl = (p[x + 1] + 1u) * 8u;
		}
		if (x + hl > limit)
			return reject(m, RSW_DROP_IPV6_EXT_TRUNCATED);
		nh = p[x];
		x += hl;
	}
	m->ip_proto = nh;
	return parse_l4(p, x, l3_end, len, m, RSW_DROP_IPV6_TRUNCATED);
}

/* Zeroes the metadata with 16-byte stores: gcc turns a memset of this size into `rep stos`,
 * whose start-up cost was 8 % of the worker loop in a profile. */
static inline void meta_clear(struct rsw_pkt_meta *m)
{
	typedef uint64_t v16 __attribute__((vector_size(16), aligned(1), may_alias));
	_Static_assert(sizeof(*m) % 16 == 0, "pkt_meta is cleared in 16-byte stores");
	v16 *v = (v16 *)(void *)m;
#pragma GCC unroll 16
	for (unsigned i = 0; i < sizeof(*m) / 16; i++)
		v[i] = (v16){0, 0};
}

/* The common RoCEv2 shape in one pass: Ethernet, at most one 802.1Q tag, IPv4 without options
 * or fragmentation and with a good checksum, UDP to 4791 inside the IP packet inside the frame,
 * a valid BTH and its opcode's headers, an ICRC and the pad inside the UDP datagram. The same
 * fields as rsw_parse_full; anything else (and every rejection) is left to it. */
int rsw_parse_fast(const uint8_t *p, uint32_t len, struct rsw_pkt_meta *m)
{
	uint32_t l3 = ETH_HLEN;
	/* the shortest frame it takes, tagged, before any byte is read */
	if (len < ETH_HLEN + VLAN_HLEN + 20 + 8 + RSW_BTH_LEN + RSW_ICRC_LEN)
		return 0;
	uint16_t et = rsw_rd16(p + 12), tci = 0;
	if (et == RSW_ETHERTYPE_VLAN) {
		tci = rsw_rd16(p + 14);
		et = rsw_rd16(p + 16);
		l3 += VLAN_HLEN;
	}
	const uint8_t *h = p + l3, *u = h + 20, *b = u + 8;
	uint32_t tot = rsw_rd16(h + 2), ulen = rsw_rd16(u + 4);
	if (et != RSW_ETHERTYPE_IPV4 || h[0] != 0x45 || (rsw_rd16(h + 6) & 0x3FFF) || h[9] != 17 ||
	    rsw_rd16(u + 2) != RSW_ROCE_UDP_PORT || l3 + tot > len ||
	    ulen < 8 + RSW_BTH_LEN + RSW_ICRC_LEN || 20 + ulen > tot)
		return 0;
	uint16_t ext = rsw_roce_opcode_ext[b[0]];
	if (!(ext & RSW_OPC_VALID) || (b[1] & RSW_BTH_TVER_MASK) || !ipv4_cksum_ok(h, 20))
		return 0;
	uint32_t bth = l3 + 28, end = l3 + 20 + ulen, off = bth + RSW_BTH_LEN;
	for (unsigned bits = ext & ((1u << RSW_EXT_COUNT) - 1); bits; bits &= bits - 1)
		off += rsw_roce_ext_len((unsigned)__builtin_ctz(bits));
	unsigned pad = (b[1] & RSW_BTH_PADCNT_MASK) >> RSW_BTH_PADCNT_SHIFT;
	if (off + RSW_ICRC_LEN > end || end - RSW_ICRC_LEN - off < pad)
		return 0;

	meta_clear(m);
	m->frame_len = len;
	if (l3 != ETH_HLEN) {
		m->n_vlan = 1;
		m->vlan_tci[0] = tci;
	}
	m->ethertype = RSW_ETHERTYPE_IPV4;
	m->l3 = RSW_L3_IPV4;
	m->l3_off = (uint16_t)l3;
	m->dscp = h[1] >> 2;
	m->ecn = h[1] & 3;
	m->ttl = h[8];
	m->ip_proto = 17;
	memcpy(m->src_ip, h + 12, 4);
	memcpy(m->dst_ip, h + 16, 4);
	m->l4_off = (uint16_t)(l3 + 20);
	m->sport = rsw_rd16(u);
	m->dport = RSW_ROCE_UDP_PORT;
	m->bth_off = (uint16_t)bth;
	m->bth_opcode = b[0];
	m->bth_flags = b[1];
	m->bth_pkey = rsw_rd16(b + 2);
	m->bth_becn_fecn = b[4];
	m->bth_dest_qp = rsw_rd24(b + 5);
	m->bth_ackreq = b[8];
	m->bth_psn = rsw_rd24(b + 9);
	m->ext_present = ext & (uint16_t)~RSW_OPC_VALID;
	m->payload_off = (uint16_t)off;
	m->icrc_off = (uint16_t)(end - RSW_ICRC_LEN);
	m->flags = RSW_META_F_UDP | RSW_META_F_ROCE | (b[0] == RSW_OP_CNP ? RSW_META_F_CNP : 0);
	return 1;
}

unsigned rsw_parse(const uint8_t *p, uint32_t len, struct rsw_pkt_meta *m)
{
	return rsw_parse_fast(p, len, m) ? 0 : rsw_parse_full(p, len, m);
}

unsigned rsw_parse_full(const uint8_t *p, uint32_t len, struct rsw_pkt_meta *m)
{
	meta_clear(m);
	m->frame_len = len;
	if (len < ETH_HLEN)
		return reject(m, RSW_DROP_ETH_TRUNCATED);
	uint32_t off = 12;
	uint16_t et = rsw_rd16(p + off);
	while (et == RSW_ETHERTYPE_VLAN || et == RSW_ETHERTYPE_QINQ) {
		if (m->n_vlan == 2)
			return reject(m, RSW_DROP_VLAN_TOO_MANY_TAGS);
		if (off + 2 + VLAN_HLEN > len)
			return reject(m, RSW_DROP_VLAN_TRUNCATED);
		m->vlan_tci[m->n_vlan++] = rsw_rd16(p + off + 2);
		off += VLAN_HLEN;
		et = rsw_rd16(p + off);
	}
	off += 2;
	m->ethertype = et;
	m->l3_off = (uint16_t)off;
	switch (et) {
	case RSW_ETHERTYPE_IPV4:
		return parse_ipv4(p, off, len, m);
	case RSW_ETHERTYPE_IPV6:
		return parse_ipv6(p, off, len, m);
	case RSW_ETHERTYPE_MAC_CONTROL:
		return parse_mac_control(p, off, len, m);
	default:
		return reject(m, RSW_DROP_ETHERTYPE_UNSUPPORTED);
	}
}
