/* Per-packet metadata: what the parser found and what the ingress tables decided. Stages talk
 * through this struct only (DESIGN.md). Offsets are from the start of the frame. */
#ifndef RSW_PKT_META_H
#define RSW_PKT_META_H

#include <stdint.h>

enum rsw_l3 { RSW_L3_NONE = 0, RSW_L3_IPV4, RSW_L3_IPV6 };
enum rsw_l2_kind { RSW_L2_DATA = 0, RSW_L2_PFC, RSW_L2_PAUSE };

#define RSW_META_F_FRAG 0x01       /* IP fragment (any) */
#define RSW_META_F_FRAG_LATER 0x02 /* non-first fragment: no L4 header */
#define RSW_META_F_UDP 0x04
#define RSW_META_F_TCP 0x08
#define RSW_META_F_ROCE 0x10       /* UDP/4791 with a valid BTH */
#define RSW_META_F_CNP 0x20
#define RSW_META_F_IPV4_OPTS 0x40

/* Laid out without holes in 128 bytes: the parser clears it for every packet. */
struct rsw_pkt_meta {
	/* parser output */
	uint32_t frame_len;
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t bth_off;
	uint16_t payload_off; /* RoCE payload after the extended headers */
	uint16_t icrc_off;
	uint16_t ext_present; /* RSW_EXT_* bits */
	uint16_t ethertype;   /* innermost */
	uint16_t vlan_tci[2];
	uint8_t n_vlan;
	uint8_t l2_kind;      /* enum rsw_l2_kind */
	uint8_t l3;           /* enum rsw_l3 */
	uint8_t flags;        /* RSW_META_F_* */
	uint8_t ip_proto;     /* IPv4 protocol / IPv6 final next header */
	uint8_t dscp;
	uint8_t ecn;
	uint8_t ttl;
	uint8_t pfc_class_enable; /* MAC control */
	uint8_t drop;         /* enum rsw_drop_reason; 0 = forward */
	uint32_t flow_label;  /* IPv6 */
	uint8_t src_ip[16];   /* IPv4 in the first 4 bytes, network order */
	uint8_t dst_ip[16];
	uint16_t sport;
	uint16_t dport;
	uint16_t bth_pkey;
	uint8_t bth_opcode;
	uint8_t bth_flags;    /* byte 1 */
	uint8_t bth_becn_fecn;
	uint8_t bth_ackreq;
	uint16_t in_port;     /* set by the caller before the ingress tables */
	uint32_t bth_dest_qp;
	uint32_t bth_psn;
	uint16_t pfc_time[8]; /* MAC control; for 802.3x PAUSE, pfc_time[0] holds the time */
	/* ingress decisions */
	uint16_t egress_port;
	uint16_t member;      /* member slot chosen in the group */
	uint8_t tc;
	uint8_t pg;
	uint8_t via_group;    /* the route resolved through an ECMP group */
	uint8_t reserved;
	uint32_t nexthop;     /* index into the compiled next-hop table */
	uint32_t group;       /* ECMP group index when via_group */
	uint32_t hash;        /* ECMP hash value when via_group */
	uint32_t bucket;
};

#endif
