/* ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861) frames, and ping replies: what the live
 * switch's control plane reads and answers for its interface addresses (dataplane/live/
 * dp_neigh.c). Plain functions on untagged Ethernet frames, no state. */
#ifndef RSW_ARP_ND_H
#define RSW_ARP_ND_H

#include <stdint.h>

#include "addr.h"

#define RSW_ETHERTYPE_ARP 0x0806
#define RSW_ARP_FRAME_LEN 60 /* 42 bytes of ARP over Ethernet, padded to the minimum frame */
#define RSW_ND_FRAME_LEN 86  /* Ethernet, IPv6, NS/NA with one link-layer address option */

#define RSW_NA_ROUTER 0x80
#define RSW_NA_SOLICITED 0x40
#define RSW_NA_OVERRIDE 0x20

enum rsw_nd_kind {
	RSW_ND_NONE = 0,
	RSW_ND_ARP_REQUEST,
	RSW_ND_ARP_REPLY,
	RSW_ND_NS,
	RSW_ND_NA,
	RSW_ND_ECHO4, /* ICMP echo request */
	RSW_ND_ECHO6, /* ICMPv6 echo request */
};

struct rsw_nd_msg {
	uint8_t kind;             /* enum rsw_nd_kind */
	uint8_t has_mac;          /* mac holds the sender's link-layer address */
	uint8_t na_flags;         /* NA: RSW_NA_* */
	uint8_t mac[6];           /* ARP sha, NS source / NA target link-layer address option */
	struct rsw_ip sender;     /* ARP spa, the IPv6 source; family 0 when unspecified (DAD,
				   * an ARP probe from 0.0.0.0) */
	struct rsw_ip target;     /* ARP tpa, NS/NA target; an echo's destination */
	uint8_t eth_src[6];
};

/* Reads an untagged frame of len bytes. Returns 0 with msg filled for ARP over Ethernet/IPv4,
 * a neighbour solicitation or advertisement that passes RFC 4861's validity checks (hop limit
 * 255, code 0, ICMPv6 checksum, length, target not multicast, options of non-zero length, no
 * source link-layer option from the unspecified address), or an ICMP/ICMPv6 echo request;
 * -1 otherwise. */
int rsw_nd_parse(const uint8_t *f, uint32_t len, struct rsw_nd_msg *msg);

/* An ARP frame (op 1 request, 2 reply), RSW_ARP_FRAME_LEN bytes. */
uint32_t rsw_arp_build(uint8_t *buf, uint16_t op, const uint8_t eth_dst[6], const uint8_t sha[6],
		       const uint8_t spa[4], const uint8_t tha[6], const uint8_t tpa[4]);
/* A neighbour advertisement for `target` (also its source address) to dst/dmac, with a target
 * link-layer address option (smac); flags RSW_NA_*. RSW_ND_FRAME_LEN bytes. */
uint32_t rsw_nd_build_na(uint8_t *buf, const uint8_t smac[6], const uint8_t target[16],
			 const uint8_t dmac[6], const uint8_t dst[16], uint8_t flags);
/* A neighbour solicitation from src (smac) for target: to its solicited-node multicast address
 * (dmac NULL), or unicast to dmac and target (a reachability probe). RSW_ND_FRAME_LEN bytes. */
uint32_t rsw_nd_build_ns(uint8_t *buf, const uint8_t smac[6], const uint8_t src[16],
			 const uint8_t target[16], const uint8_t *dmac);
/* Turns an echo request of len bytes (msg from rsw_nd_parse) into its reply in place: addresses
 * swapped, source MAC smac, TTL / hop limit 64, checksums recomputed. Returns len. */
uint32_t rsw_echo_reply(uint8_t *f, uint32_t len, const uint8_t smac[6]);

#endif
