#include <string.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>

#include "arp_nd.h"

#define ETH_HLEN 14
#define IP6_HLEN 40
#define ICMP6_NS 135
#define ICMP6_NA 136
#define ICMP6_ECHO 128
#define ICMP6_ECHO_REPLY 129
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void set_ip(struct rsw_ip *ip, unsigned family, const uint8_t *a)
{
	memset(ip, 0, sizeof(*ip));
	ip->family = (uint8_t)family;
	memcpy(ip->a, a, family == 4 ? 4 : 16);
}

static int parse_arp(const uint8_t *f, uint32_t len, struct rsw_nd_msg *msg)
{
	const uint8_t *a = f + ETH_HLEN;
	static const uint8_t zero[4];
	/* RFC 826 over Ethernet: hardware type 1, protocol IPv4, lengths 6 and 4 */
	if (len < ETH_HLEN + 28 || rd16(a) != 1 || rd16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return -1;
	uint16_t op = rd16(a + 6);
	if (op != 1 && op != 2)
		return -1;
	msg->kind = op == 1 ? RSW_ND_ARP_REQUEST : RSW_ND_ARP_REPLY;
	memcpy(msg->mac, a + 8, 6);
	msg->has_mac = !(msg->mac[0] & 1);
	if (memcmp(a + 14, zero, 4)) /* a probe (RFC 5227) says nothing about its sender */
		set_ip(&msg->sender, 4, a + 14);
	set_ip(&msg->target, 4, a + 24);
	return 0;
}

/* NS/NA (RFC 4861 7.1.1, 7.1.2): l4 is the ICMPv6 message, n its length. */
static int parse_nd(const uint8_t *ip6, const uint8_t *l4, uint32_t n, struct rsw_nd_msg *msg)
{
	static const uint8_t unspec[16];
	if (ip6[7] != 255 || l4[1] != 0 || n < 24 || (l4[8] == 0xFF))
		return -1;
	if (rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)ip6, l4))
		return -1;
	int from_unspec = !memcmp(ip6 + 8, unspec, 16);
	msg->kind = l4[0] == ICMP6_NS ? RSW_ND_NS : RSW_ND_NA;
	if (msg->kind == RSW_ND_NA) {
		msg->na_flags = l4[4] & 0xE0;
		/* a solicited advertisement is never sent to a multicast address */
		if ((msg->na_flags & RSW_NA_SOLICITED) && ip6[24] == 0xFF)
			return -1;
	}
	if (!from_unspec)
		set_ip(&msg->sender, 6, ip6 + 8);
	set_ip(&msg->target, 6, l4 + 8);
	for (uint32_t o = 24; o < n;) {
		if (o + 2 > n || l4[o + 1] == 0 || o + l4[o + 1] * 8u > n)
			return -1;
		uint8_t type = l4[o], olen = l4[o + 1];
		if (type == (msg->kind == RSW_ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA) && olen == 1) {
			if (from_unspec)
				return -1; /* DAD: no source link-layer address */
			memcpy(msg->mac, l4 + o + 2, 6);
			msg->has_mac = !(msg->mac[0] & 1);
		}
		o += olen * 8u;
	}
	return 0;
}

int rsw_nd_parse(const uint8_t *f, uint32_t len, struct rsw_nd_msg *msg)
{
	memset(msg, 0, sizeof(*msg));
	if (len < ETH_HLEN)
		return -1;
	memcpy(msg->eth_src, f + 6, 6);
	uint16_t et = rd16(f + 12);
	int rc = -1;
	if (et == RSW_ETHERTYPE_ARP) {
		rc = parse_arp(f, len, msg);
	} else if (et == 0x86DD && len >= ETH_HLEN + IP6_HLEN + 8) {
		const uint8_t *ip6 = f + ETH_HLEN, *l4 = ip6 + IP6_HLEN;
		uint32_t n = rd16(ip6 + 4);
		if ((ip6[0] >> 4) != 6 || ip6[6] != 58 || ETH_HLEN + IP6_HLEN + n > len || n < 8)
			return -1;
		if (l4[0] == ICMP6_NS || l4[0] == ICMP6_NA) {
			rc = parse_nd(ip6, l4, n, msg);
		} else if (l4[0] == ICMP6_ECHO && l4[1] == 0) {
			msg->kind = RSW_ND_ECHO6;
			set_ip(&msg->sender, 6, ip6 + 8);
			set_ip(&msg->target, 6, ip6 + 24);
			rc = 0;
		}
	} else if (et == 0x0800 && len >= ETH_HLEN + 20) {
		const uint8_t *ip = f + ETH_HLEN;
		unsigned ihl = (ip[0] & 15u) * 4u;
		uint32_t tot = rd16(ip + 2);
		if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl + 8 || ETH_HLEN + tot > len ||
		    ip[9] != 1 || (rd16(ip + 6) & 0x3FFF))
			return -1; /* not ICMP, or a fragment */
		if (ip[ihl] == RTE_IP_ICMP_ECHO_REQUEST && ip[ihl + 1] == 0) {
			msg->kind = RSW_ND_ECHO4;
			set_ip(&msg->sender, 4, ip + 12);
			set_ip(&msg->target, 4, ip + 16);
			rc = 0;
		}
	}
	if (rc)
		msg->kind = RSW_ND_NONE;
	return rc;
}

uint32_t rsw_arp_build(uint8_t *buf, uint16_t op, const uint8_t eth_dst[6], const uint8_t sha[6],
		       const uint8_t spa[4], const uint8_t tha[6], const uint8_t tpa[4])
{
	memset(buf, 0, RSW_ARP_FRAME_LEN);
	memcpy(buf, eth_dst, 6);
	memcpy(buf + 6, sha, 6);
	wr16(buf + 12, RSW_ETHERTYPE_ARP);
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(buf + ETH_HLEN);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	memcpy(&a->arp_data.arp_sha, sha, 6);
	memcpy(&a->arp_data.arp_sip, spa, 4);
	memcpy(&a->arp_data.arp_tha, tha, 6);
	memcpy(&a->arp_data.arp_tip, tpa, 4);
	return RSW_ARP_FRAME_LEN;
}

/* Ethernet + IPv6 (hop limit 255, as ND requires) + an ICMPv6 NS/NA with one link-layer option;
 * the checksum over the pseudo-header is DPDK's. */
static uint32_t nd_frame(uint8_t *buf, const uint8_t smac[6], const uint8_t dmac[6],
			 const uint8_t src[16], const uint8_t dst[16], uint8_t type, uint8_t flags,
			 const uint8_t target[16], uint8_t opt)
{
	memset(buf, 0, RSW_ND_FRAME_LEN);
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	wr16(buf + 12, 0x86DD);
	uint8_t *ip6 = buf + ETH_HLEN, *l4 = ip6 + IP6_HLEN;
	ip6[0] = 0x60;
	wr16(ip6 + 4, 32);
	ip6[6] = 58;
	ip6[7] = 255;
	memcpy(ip6 + 8, src, 16);
	memcpy(ip6 + 24, dst, 16);
	l4[0] = type;
	l4[4] = flags;
	memcpy(l4 + 8, target, 16);
	l4[24] = opt;
	l4[25] = 1;
	memcpy(l4 + 26, smac, 6);
	uint16_t ck = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip6, l4);
	memcpy(l4 + 2, &ck, 2);
	return RSW_ND_FRAME_LEN;
}

uint32_t rsw_nd_build_na(uint8_t *buf, const uint8_t smac[6], const uint8_t target[16],
			 const uint8_t dmac[6], const uint8_t dst[16], uint8_t flags)
{
	return nd_frame(buf, smac, dmac, target, dst, ICMP6_NA, flags, target, ND_OPT_TLLA);
}

uint32_t rsw_nd_build_ns(uint8_t *buf, const uint8_t smac[6], const uint8_t src[16],
			 const uint8_t target[16], const uint8_t *dmac)
{
	uint8_t dst[16], mc[6];
	if (dmac) {
		memcpy(dst, target, 16);
	} else {
		/* solicited-node multicast ff02::1:ffXX:XXXX (RFC 4291 2.7.1), MAC 33:33 + its
		 * last 32 bits (RFC 2464 7) */
		static const uint8_t pfx[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};
		memcpy(dst, pfx, 13);
		memcpy(dst + 13, target + 13, 3);
		mc[0] = mc[1] = 0x33;
		memcpy(mc + 2, dst + 12, 4);
		dmac = mc;
	}
	return nd_frame(buf, smac, dmac, src, dst, ICMP6_NS, 0, target, ND_OPT_SLLA);
}

uint32_t rsw_echo_reply(uint8_t *f, uint32_t len, const uint8_t smac[6])
{
	uint8_t t[16];
	memcpy(f, f + 6, 6);
	memcpy(f + 6, smac, 6);
	uint8_t *ip = f + ETH_HLEN;
	if (rd16(f + 12) == 0x0800) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
		unsigned ihl = (ip[0] & 15u) * 4u, tot = rd16(ip + 2);
		memcpy(t, ip + 12, 4);
		memcpy(ip + 12, ip + 16, 4);
		memcpy(ip + 16, t, 4);
		h->time_to_live = 64;
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
		uint8_t *icmp = ip + ihl;
		icmp[0] = RTE_IP_ICMP_ECHO_REPLY;
		icmp[2] = icmp[3] = 0;
		uint16_t ck = (uint16_t)~rte_raw_cksum(icmp, tot - ihl);
		memcpy(icmp + 2, &ck, 2);
		return len;
	}
	memcpy(t, ip + 8, 16);
	memcpy(ip + 8, ip + 24, 16);
	memcpy(ip + 24, t, 16);
	ip[7] = 64;
	uint8_t *l4 = ip + IP6_HLEN;
	l4[0] = ICMP6_ECHO_REPLY;
	l4[2] = l4[3] = 0;
	uint16_t ck = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, l4);
	memcpy(l4 + 2, &ck, 2);
	return len;
}
