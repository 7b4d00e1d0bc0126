/* Entries of the switch's match-action tables as the control plane writes them (the "shadow"
 * state). The dataplane never reads these: commit compiles them into struct rsw_fib. */
#ifndef RSW_TABLE_TYPES_H
#define RSW_TABLE_TYPES_H

#include <stdint.h>

#include "../hash/hash_policy.h"
#include "../hash/resilient.h"
#include "../pkt/addr.h"
#include "../tm/tm_cfg.h"

#define RSW_MAX_PORTS RSW_TM_MAX_PORTS
#define RSW_NAME_MAX 48
#define RSW_ORIGIN_MAX 160
#define RSW_DEVARGS_MAX 256
#define RSW_DEFAULT_BUCKETS 4096
#define RSW_DEFAULT_POLICY "default"

enum rsw_port_role { RSW_ROLE_HOST = 0, RSW_ROLE_UPLINK, RSW_ROLE_DOWNLINK, RSW_ROLE_COUNT };

/* ARS (adaptive routing and switching, SAI 1.14's saiars.h / saiarsprofile.h; docs/ars.md). */
enum rsw_ars_mode {
	RSW_ARS_OFF = 0,
	RSW_ARS_FLOWLET_QUALITY,
	RSW_ARS_FLOWLET_RANDOM,
	RSW_ARS_PER_PACKET_QUALITY,
	RSW_ARS_PER_PACKET_RANDOM,
	RSW_ARS_FIXED,
	RSW_ARS_MODES
};
#define RSW_ARS_BANDS 8
#define RSW_ARS_MAX_FLOWS 65536 /* the hash is 16 bits: one entry per value at most */

/* The switch's one ARS profile (SAI_SWITCH_ATTR_ARS_PROFILE): how port quality is measured. */
struct rsw_ars_profile {
	uint8_t present;         /* an ARS_PROFILE was configured */
	uint8_t ipv4, ipv6;      /* SAI_ARS_PROFILE_ATTR_ENABLE_IPV4/6 */
	uint8_t load_exp;        /* EWMA exponent of the port load (past_load_weight) */
	uint8_t queue_exp;       /* EWMA exponent of the queue size (future_load_weight) */
	uint8_t load_weight;     /* percent of the load band in the quality (FBOSS portLoadWeight) */
	uint8_t queue_weight;    /* percent of the queue band (FBOSS portQueueWeight) */
	uint32_t sample_us;      /* SAI_ARS_PROFILE_ATTR_SAMPLING_INTERVAL */
	uint32_t seed;           /* SAI_ARS_PROFILE_ATTR_ARS_RANDOM_SEED */
	uint64_t load_min, load_max;   /* bytes sent in a sampling interval: bands 0 and 7 */
	uint64_t queue_min, queue_max; /* bytes queued: bands 0 and 7 */
	char name[RSW_NAME_MAX];
};

/* An ARS object (SAI_OBJECT_TYPE_ARS, SONiC's ARS_OBJECT) as a group uses it. */
struct rsw_ars_obj {
	uint8_t mode;            /* enum rsw_ars_mode; RSW_ARS_OFF: plain ECMP */
	uint8_t match_udp;       /* only UDP packets to match_dport take ARS */
	uint16_t match_dport;
	uint32_t idle_us;        /* SAI_ARS_ATTR_IDLE_TIME */
	uint32_t max_flows;      /* SAI_ARS_ATTR_MAX_FLOWS: flowlet table entries */
	char name[RSW_NAME_MAX];
};

struct rsw_switch_cfg {
	char hostname[RSW_NAME_MAX];
	uint8_t router_mac[6];
	/* 1: only frames to the router MAC or the port MAC are routed (a real router). 0: any unicast
	 * destination MAC is accepted, for replaying captures taken elsewhere. */
	uint8_t dmac_check;
	struct rsw_tm_pools tm;  /* BUFFER_POOL, PFC_WD|GLOBAL */
	struct rsw_ars_profile ars; /* ARS_PROFILE */
};

struct rsw_port_cfg {
	char name[RSW_NAME_MAX];
	char alias[RSW_NAME_MAX];
	char devargs[RSW_DEVARGS_MAX];
	uint32_t speed_mbps;    /* SONiC PORT.speed */
	uint32_t mtu;
	uint32_t cable_length_m;
	uint8_t role;           /* enum rsw_port_role */
	uint8_t admin_up;
	uint8_t has_mac;
	uint8_t mac[6];         /* the router MAC if !has_mac */
	uint8_t pfc_enable;     /* bit per priority (PORT_QOS_MAP.pfc_enable) */
	char dscp_to_tc_map[RSW_NAME_MAX];
	char tc_to_pg_map[RSW_NAME_MAX];
	struct rsw_tm_port_cfg tm;
	char origin[RSW_ORIGIN_MAX];
};

enum rsw_qos_map_kind { RSW_QOS_DSCP_TO_TC = 0, RSW_QOS_TC_TO_PG };

struct rsw_qos_map {
	char name[RSW_NAME_MAX];
	uint8_t kind;
	uint8_t map[64];        /* DSCP→TC uses 64 entries, TC→PG 8 */
	char origin[RSW_ORIGIN_MAX];
};

struct rsw_named_policy {
	char name[RSW_NAME_MAX];
	struct rsw_hash_policy pol;
	char origin[RSW_ORIGIN_MAX];
};

struct rsw_neighbor {
	uint16_t port;
	struct rsw_ip ip;
	uint8_t mac[6];
	uint8_t dynamic;        /* learnt from ARP/ND (dataplane/live/dp_neigh.c), not configured */
	char origin[RSW_ORIGIN_MAX];
};

/* A router interface address (SONiC's INTERFACE "PORT|ADDR/LEN"): the switch answers ARP and
 * neighbour solicitations for addr.ip on the port and owns packets to it; the subnet is where
 * the port learns and resolves neighbours. Host bits are the address (10.1.0.2/24). */
struct rsw_interface {
	uint16_t port;
	struct rsw_prefix addr;
	char origin[RSW_ORIGIN_MAX];
};

struct rsw_nhg_member {
	struct rsw_ip ip;
	uint16_t slot;          /* slot in the bucket table, stable while the member exists */
	uint8_t active;         /* resolved through a neighbour on an up port */
};

struct rsw_nhg {
	char name[RSW_NAME_MAX];
	char policy[RSW_NAME_MAX];
	uint32_t n_buckets;
	uint8_t resilient;
	uint16_t n_members;
	struct rsw_nhg_member members[RSW_ECMP_MAX_MEMBERS];
	struct rsw_rbt rbt;     /* valid once the group had an active member */
	struct rsw_ars_obj ars; /* NEXTHOP_GROUP.ars_object resolved */
	char origin[RSW_ORIGIN_MAX];
};

enum rsw_route_target { RSW_TGT_NEXTHOP = 0, RSW_TGT_GROUP, RSW_TGT_BLACKHOLE };

struct rsw_route {
	struct rsw_prefix prefix;
	int32_t in_port;        /* -1: the main table; else a policy route for this ingress port */
	uint8_t target;         /* enum rsw_route_target */
	uint8_t keep_when_down; /* policy route: stays when its next hop is down (else the packets
				 * fall back to the main table, as if the route were withdrawn) */
	struct rsw_ip nexthop;
	char group[RSW_NAME_MAX];
	/* main table: a group that carries the route instead while its target is down (its
	 * neighbour's port down, or no member of its group usable): a backup next hop of higher
	 * distance. "": none */
	char backup[RSW_NAME_MAX];
	char origin[RSW_ORIGIN_MAX];
};

/* A classifier rule (before the TC map): ternary DSCP and BTH opcode, ranges of destination QP
 * and frame length, ingress port; the first matching rule by priority sets the traffic class. */
struct rsw_classifier_rule {
	char name[RSW_NAME_MAX];
	uint16_t priority;      /* higher first; ties by name */
	uint8_t dscp, dscp_mask;
	uint8_t opcode, opcode_mask;
	uint8_t roce_only;      /* opcode or QP matched: only RoCE packets can match */
	uint32_t qp_lo, qp_hi;
	uint32_t len_lo, len_hi;
	int32_t in_port;        /* -1: any */
	uint8_t tc;
	char origin[RSW_ORIGIN_MAX];
};

const char *rsw_port_role_name(unsigned role);
unsigned rsw_port_role_from_name(const char *s); /* RSW_ROLE_COUNT if unknown */

#endif
