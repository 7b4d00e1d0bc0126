/* Why a packet did not leave the switch. Every packet that is not transmitted or queued ends with
 * exactly one of these, and each has its own counter. The names are the counter names users see. */
#ifndef RSW_DROP_REASON_H
#define RSW_DROP_REASON_H

#define RSW_DROP_REASONS(X)                                                                    \
	/* parser: L2 */                                                                        \
	X(ETH_TRUNCATED, "eth_truncated")                                                       \
	X(VLAN_TRUNCATED, "vlan_truncated")                                                     \
	X(VLAN_TOO_MANY_TAGS, "vlan_too_many_tags")                                             \
	X(ETHERTYPE_UNSUPPORTED, "ethertype_unsupported")                                       \
	X(MAC_CONTROL_TRUNCATED, "mac_control_truncated")                                       \
	X(MAC_CONTROL_BAD_OPCODE, "mac_control_bad_opcode")                                     \
	/* parser: L3 */                                                                        \
	X(IPV4_TRUNCATED, "ipv4_truncated")                                                     \
	X(IPV4_BAD_VERSION, "ipv4_bad_version")                                                 \
	X(IPV4_BAD_IHL, "ipv4_bad_ihl")                                                         \
	X(IPV4_BAD_TOTAL_LENGTH, "ipv4_bad_total_length")                                       \
	X(IPV4_BAD_CHECKSUM, "ipv4_bad_checksum")                                               \
	X(IPV6_TRUNCATED, "ipv6_truncated")                                                     \
	X(IPV6_BAD_VERSION, "ipv6_bad_version")                                                 \
	X(IPV6_BAD_PAYLOAD_LENGTH, "ipv6_bad_payload_length")                                   \
	X(IPV6_EXT_TRUNCATED, "ipv6_ext_truncated")                                             \
	X(IPV6_EXT_LIMIT, "ipv6_ext_limit")                                                     \
	/* parser: L4 and RoCE */                                                               \
	X(UDP_TRUNCATED, "udp_truncated")                                                       \
	X(UDP_BAD_LENGTH, "udp_bad_length")                                                     \
	X(BTH_TRUNCATED, "bth_truncated")                                                       \
	X(BTH_BAD_OPCODE, "bth_bad_opcode")                                                     \
	X(BTH_BAD_VERSION, "bth_bad_version")                                                   \
	X(RDETH_TRUNCATED, "rdeth_truncated")                                                   \
	X(DETH_TRUNCATED, "deth_truncated")                                                     \
	X(FETH_TRUNCATED, "feth_truncated")                                                     \
	X(RETH_TRUNCATED, "reth_truncated")                                                     \
	X(ATOMICETH_TRUNCATED, "atomiceth_truncated")                                           \
	X(AETH_TRUNCATED, "aeth_truncated")                                                     \
	X(ATOMICACKETH_TRUNCATED, "atomicacketh_truncated")                                     \
	X(IMMDT_TRUNCATED, "immdt_truncated")                                                   \
	X(IETH_TRUNCATED, "ieth_truncated")                                                     \
	X(CNP_TRUNCATED, "cnp_truncated")                                                       \
	X(ICRC_TRUNCATED, "icrc_truncated")                                                     \
	X(ROCE_BAD_PAD, "roce_bad_pad")                                                         \
	/* ingress match-action */                                                              \
	X(DMAC_NOT_ROUTER, "dmac_not_router")                                                   \
	X(SMAC_MULTICAST, "smac_multicast")                                                     \
	X(IP_MULTICAST, "ip_multicast")                                                         \
	X(TTL_EXPIRED, "ttl_expired")                                                           \
	X(LPM4_MISS, "lpm4_miss")                                                               \
	X(LPM6_MISS, "lpm6_miss")                                                               \
	X(BLACKHOLE_ROUTE, "blackhole_route")                                                   \
	X(NEIGHBOR_MISS, "neighbor_miss")                                                       \
	X(INGRESS_PORT_DOWN, "ingress_port_down")                                               \
	X(EGRESS_PORT_DOWN, "egress_port_down")                                                 \
	X(ECMP_GROUP_EMPTY, "ecmp_group_empty")                                                 \
	X(NO_TABLES, "no_tables")                                                               \
	/* addressed to the switch itself (INTERFACE): the live dataplane hands these to its    \
	 * control plane (ARP, ND, ping; docs/dataplane.md) instead of dropping them */          \
	X(TO_SWITCH, "to_switch")                                                               \
	/* traffic manager */                                                                   \
	X(PG_THRESHOLD, "pg_threshold")                                                         \
	X(HEADROOM_OVERFLOW, "headroom_overflow")                                               \
	X(QUEUE_TAIL_DROP, "queue_tail_drop")                                                   \
	X(VOQ_FULL, "voq_full")                                                                 \
	X(PFCWD_DROP, "pfcwd_drop")                                                             \
	X(NO_MBUF, "no_mbuf")                                                                   \
	/* live ports, egress / TX */                                                          \
	X(RX_MULTISEG, "rx_multiseg")                                                           \
	X(TX_FULL, "tx_full")                                                                   \
	X(TX_TOO_BIG, "tx_too_big")                                                             \
	X(PUNT_QUEUE_FULL, "punt_queue_full")

enum rsw_drop_reason {
	RSW_DROP_NONE = 0,
#define RSW_X(e, s) RSW_DROP_##e,
	RSW_DROP_REASONS(RSW_X)
#undef RSW_X
	RSW_DROP_COUNT
};

/* Counter name of a reason ("none" for RSW_DROP_NONE). */
const char *rsw_drop_reason_name(unsigned reason);
/* Reason from its counter name; RSW_DROP_COUNT if unknown. */
unsigned rsw_drop_reason_from_name(const char *name);
/* True for reasons the parser gives (the packet was malformed for the switch). */
static inline int rsw_drop_is_parse(unsigned reason)
{
	return reason >= RSW_DROP_ETH_TRUNCATED && reason <= RSW_DROP_ROCE_BAD_PAD;
}

#endif
