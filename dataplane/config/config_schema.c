/* The CONFIG_DB tables rocesw reads, as data (config_schema.h). Names, types and ranges follow
 * SONiC's sonic-yang-models (sonic-port, sonic-device_metadata, sonic-buffer-*, sonic-queue,
 * sonic-scheduler, sonic-wred-profile, sonic-dscp-tc-map, sonic-tc-priority-group-map,
 * sonic-tc-queue-map, sonic-port-qos-map, sonic-static-route, sonic-hash, sonic-pfcwd); a field
 * SONiC has and rocesw does not model is listed as RSW_FM_UNMODELLED so that a SONiC
 * config_db.json gets a warning for it instead of an "unknown field" error. */
#include <stdio.h>
#include <string.h>

#include "config_schema.h"
#include "dataplane/hash/hash_policy.h"

#define F(n, t, ...) {.name = n, .type = RSW_FT_##t, .model = RSW_FM_MODELLED, __VA_ARGS__}
#define IGN(n, why) {.name = n, .type = RSW_FT_TEXT, .model = RSW_FM_IGNORED, .help = why}
#define SONIC(n, why) {.name = n, .type = RSW_FT_TEXT, .model = RSW_FM_UNMODELLED, .help = why}
#define END {.name = NULL}

#define NAME_HELP "a name of 1..47 characters"
#define HASH_FIELDS                                                                           \
	"list of SRC_IP, DST_IP, IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT, IN_PORT, "            \
	"IPV6_FLOW_LABEL, RDMA_BTH_OPCODE, RDMA_BTH_DEST_QP"
#define HASH_ALGOS "CRC|CRC_CCITT|CRC_32LO|CRC_32HI|XOR|CRC_XOR|JENKINS_LO|JENKINS_HI|RANDOM"

static const struct rsw_field_schema device_fields[] = {
	[DM_HOSTNAME] = F("hostname", NAME, .help = "the switch's name"),
	[DM_MAC] = F("mac", MAC, .help = "router MAC: frames to it are routed"),
	[DM_DMAC_CHECK] = F("dmac_check", ENUM, .words = "strict|any", .dflt = "strict",
			    .help = "rocesw: `strict` routes only frames to the router or port MAC; "
				    "`any` routes any unicast (captures taken elsewhere)"),
	[DM_TYPE] = IGN("type", "informational (ToRRouter, LeafRouter, SpineRouter...)"),
	[DM_PLATFORM] = F("platform", TEXT,
			  .help = "SONiC's platform string; its vendor chooses the buffer convention "
				  "unless buffer_convention is given (docs/tm.md): x86_64-arista_* "
				  "(but 7170), x86_64-dell_* broadcom; x86_64-mlnx_*, x86_64-nvidia_* "
				  "mellanox"),
	[DM_HWSKU] = F("hwsku", TEXT,
		       .help = "SONiC's HWSKU; as platform when that names no vendor: Arista-* "
			       "(but 7170), Force10-*, DellEMC-* broadcom; Mellanox-*, ACS-MSN*, "
			       "ACS-SN* mellanox"),
	[DM_BUF_CONV] = F("buffer_convention", ENUM, .words = "broadcom|mellanox",
			  .dflt = "from platform/hwsku, else mellanox",
			  .help = "rocesw: how BUFFER_PROFILE size and BUFFER_POOL xoff are read "
				  "(docs/tm.md, \"Buffer conventions\"): `broadcom` size is the "
				  "reserve and xoff headroom beside it, the pool's xoff a headroom pool "
				  "carved out of its size; `mellanox` size is xon + xoff, or the reserve "
				  "(= xon) with the pool's xoff a headroom pool beside its size"),
	SONIC("bgp_asn", "no BGP: routes are static"),
	SONIC("deployment_id", "deployment bookkeeping"),
	SONIC("default_bgp_status", "no BGP"),
	SONIC("default_pfcwd_status", "the PFC watchdog follows PORT_QOS_MAP.pfcwd_sw_enable"),
	SONIC("buffer_model", "buffers are always the traditional model: BUFFER_* as written, "
			      "defaults computed once"),
	SONIC("region", "deployment bookkeeping"),
	SONIC("cloudtype", "deployment bookkeeping"),
	SONIC("docker_routing_config_mode", "no routing daemons"),
	SONIC("synchronous_mode", "no SAI"),
	SONIC("sub_role", "single ASIC"),
	SONIC("switch_type", "no VOQ chassis"),
	SONIC("switch_id", "no VOQ chassis"),
	SONIC("max_cores", "no VOQ chassis"),
	SONIC("asic_name", "single ASIC"),
	SONIC("asic_id", "single ASIC"),
	SONIC("timezone", "host setting"),
	SONIC("bgp_router_id", "no BGP"),
	SONIC("frr_mgmt_framework_config", "no routing daemons"),
	SONIC("yang_config_validation", "rocesw validates against its own schema"),
	SONIC("subtype", "deployment bookkeeping"),
	SONIC("peer_switch", "no dual ToR"),
	SONIC("suppress-fib-pending", "no routing daemons"),
	SONIC("rack_mgmt_map", "deployment bookkeeping"),
	SONIC("bgp_adv_lo_prefix_as_128", "no BGP"),
	SONIC("create_only_config_db_buffers", "buffers are always compiled from the file"),
	END,
};

static const struct rsw_field_schema port_fields[] = {
	[PORT_SPEED] = F("speed", UINT, .lo = 1, .hi = 1600000, .words = "line", .units = "Mb/s",
			 .help = "required: the port drains at this rate (docs/tm.md); `line` = "
				 "unshaped, with 400G for pause and headroom arithmetic. A SONiC "
				 "config_db.json without it (SONiC takes it from the platform) runs the "
				 "port as `line`, with a warning"),
	[PORT_ROLE] = F("role", CUSTOM, .words = "host|uplink|downlink",
			.help = "rocesw: `host`, `uplink` or `downlink`, what the port faces (counters and `show` group by it). "
				"SONiC's roles (Ext, Int, Inb, Rec, Dpc) are ignored with a warning "
				"in a config_db.json"),
	[PORT_DEVARGS] = F("devargs", TEXT,
			   .help = "rocesw: DPDK device (`net_af_packet0,iface=veth0`, "
				   "`net_pcap0,rx_pcap=...`, a PCI address...)"),
	[PORT_MTU] = F("mtu", UINT, .lo = 68, .hi = 9216, .dflt = "9100", .units = "bytes"),
	[PORT_MAC] = F("mac", MAC, .dflt = "the router MAC"),
	[PORT_ADMIN] = F("admin_status", ENUM, .words = "up|down", .dflt = "up"),
	[PORT_ALIAS] = F("alias", NAME),
	IGN("lanes", "hardware detail with no meaning for a software switch"),
	IGN("index", "hardware detail; the order of PORT is the port index"),
	IGN("fec", "hardware detail"),
	IGN("description", "informational"),
	SONIC("autoneg", "no PHY"),
	SONIC("adv_speeds", "no PHY"),
	SONIC("adv_interface_types", "no PHY"),
	SONIC("interface_type", "no PHY"),
	SONIC("link_training", "no PHY"),
	SONIC("pfc_asym", "PFC is symmetric"),
	SONIC("tpid", "no VLANs"),
	SONIC("parent_port", "no breakout"),
	SONIC("subport", "no breakout"),
	SONIC("asic_port_name", "single ASIC"),
	SONIC("mode", "no VLANs"),
	SONIC("dhcp_rate_limit", "no CPU trap policers"),
	END,
};

static const struct rsw_field_schema cable_fields[] = {
	[MAP_ANY] = F("*", CUSTOM, .units = "metres", .dflt = "5m",
		      .help = "`PORT: 40m`: cable length for headroom sizing, 0..100000"),
	END,
};

static const struct rsw_field_schema dscp_fields[] = {
	[MAP_ANY] = F("*", CUSTOM, .help = "`\"DSCP\": TC` (0..63 to 0..7); unlisted DSCPs map to 0"),
	END,
};

static const struct rsw_field_schema tc_pg_fields[] = {
	[MAP_ANY] = F("*", CUSTOM, .help = "`\"TC\": PG` (0..7 to 0..7); unlisted TCs map to 0"),
	END,
};

static const struct rsw_field_schema identity_map_fields[] = {
	[MAP_ANY] = F("*", CUSTOM, .help = "0..7 to 0..7; accepted as the identity, which is what "
					  "rocesw does (TC = queue = PFC priority): any other "
					  "entry is a warning"),
	END,
};

static const struct rsw_field_schema port_qos_fields[] = {
	[PQ_DSCP_TO_TC] = F("dscp_to_tc_map", NAME, .dflt = "AZURE", .help = "a DSCP_TO_TC_MAP"),
	[PQ_TC_TO_PG] = F("tc_to_pg_map", NAME, .dflt = "AZURE",
			  .help = "a TC_TO_PRIORITY_GROUP_MAP"),
	[PQ_PFC_ENABLE] = F("pfc_enable", PRIOS, .dflt = "3,4",
			    .help = "lossless priorities: PFC sent and honoured"),
	[PQ_PFCWD_SW] = F("pfcwd_sw_enable", PRIOS, .dflt = "pfc_enable",
			  .help = "priorities the PFC watchdog watches"),
	[PQ_PFC_PAUSE] = F("pfc_pause_time", UINT, .lo = 1, .hi = 65535, .dflt = "65535",
			   .units = "quanta", .help = "rocesw: quanta carried by the XOFF frames "
						     "the port sends"),
	[PQ_TC_TO_QUEUE] = F("tc_to_queue_map", NAME,
			     .help = "a TC_TO_QUEUE_MAP; queues are the TC here"),
	IGN("pfc_to_queue_map", "the identity here (PFC priority = queue)"),
	IGN("pfc_to_pg_map", "the identity here (PFC priority = PG for lossless traffic)"),
	IGN("scheduler", "port-level shaping is PORT.speed"),
	SONIC("dscp_to_fc_map", "no forwarding classes"),
	SONIC("exp_to_fc_map", "no MPLS"),
	SONIC("dot1p_to_tc_map", "no VLAN tags: DSCP classifies"),
	SONIC("tc_to_dscp_map", "no remarking"),
	SONIC("tc_to_dot1p_map", "no remarking"),
	END,
};

/* The fields of a hash policy, under SONiC's names in SWITCH_HASH and rocesw's in HASH_POLICY. */
#define POLICY_FIELDS(fields, algo, seed, offset, udf)                                       \
	[HP_FIELDS] = F(fields, CUSTOM, .help = HASH_FIELDS),                                 \
	[HP_ALGO] = F(algo, ENUM, .words = HASH_ALGOS, .dflt = "CRC"),                        \
	[HP_SEED] = F(seed, UINT, .lo = 0, .hi = 0xFFFFFFFFll, .dflt = "0"),                  \
	[HP_OFFSET] = F(offset, UINT, .lo = 0, .hi = 15, .dflt = "0", .units = "bits",         \
			.help = "the 16-bit hash is shifted right by it"),                    \
	[HP_UDF] = F(udf, CUSTOM, .help = "rocesw: list of `{base, offset, length, mask, match}` " \
					  "(docs/hash.md)")

static const struct rsw_field_schema interface_fields[] = {
	IGN("scope", "one scope"),
	IGN("family", "read from the address"),
	IGN("vrf_name", "one VRF"),
	IGN("mpls", "no MPLS"),
	IGN("ipv6_use_link_local_only", "addresses as written"),
	IGN("nat_zone", "no NAT"),
	IGN("mac_addr", "the port's MAC"),
	IGN("loopback_action", "no loopback handling"),
	END,
};

static const struct rsw_field_schema switch_hash_fields[] = {
	POLICY_FIELDS("ecmp_hash", "ecmp_hash_algorithm", "ecmp_hash_seed", "ecmp_hash_offset",
		      "ecmp_hash_udf"),
	[SH_HASH_V4_RDMA] = F("ecmp_hash_ipv4_rdma", CUSTOM,
			      .help = HASH_FIELDS "; SONiC's list for RoCEv2 over IPv4. rocesw "
				      "hashes every packet with one list: when given, it is that "
				      "list (the fabric carries RoCE), and a different ecmp_hash "
				      "is a warning"),
	[SH_HASH_V6_RDMA] = F("ecmp_hash_ipv6_rdma", CUSTOM,
			      .help = "as ecmp_hash_ipv4_rdma for IPv6; must equal it when both "
				      "are given"),
	SONIC("lag_hash", "no LAGs"),
	SONIC("lag_hash_algorithm", "no LAGs"),
	SONIC("lag_hash_seed", "no LAGs"),
	SONIC("lag_hash_offset", "no LAGs"),
	SONIC("ecmp_hash_ipv4", "one field list for every packet: ecmp_hash"),
	SONIC("ecmp_hash_ipv6", "one field list for every packet: ecmp_hash"),
	SONIC("ecmp_hash_ipnip", "no tunnels"),
	SONIC("lag_hash_ipv4", "no LAGs"),
	SONIC("lag_hash_ipv6", "no LAGs"),
	SONIC("lag_hash_ipnip", "no LAGs"),
	SONIC("lag_hash_ipv4_rdma", "no LAGs"),
	SONIC("lag_hash_ipv6_rdma", "no LAGs"),
	END,
};

static const struct rsw_field_schema hash_policy_fields[] = {
	POLICY_FIELDS("fields", "algorithm", "seed", "offset", "udf"),
	END,
};

const struct rsw_field_schema rsw_schema_udf[] = {
	[UDF_BASE] = F("base", ENUM, .required = 1, .words = "L2|L3|L4"),
	[UDF_OFFSET] = F("offset", UINT, .required = 1, .lo = 0, .hi = RSW_UDF_OFFSET_MAX,
			  .units = "bytes"),
	[UDF_LENGTH] = F("length", UINT, .required = 1, .lo = 1, .hi = 8, .units = "bytes"),
	[UDF_MASK] = F("mask", CUSTOM, .dflt = "all ones",
		       .help = "hex, no wider than length: `0xffffff`"),
	[UDF_MATCH] = F("match", CUSTOM, .help = "`{ip_protocol, l4_dst_port}`"),
	END,
};

const struct rsw_field_schema rsw_schema_udf_match[] = {
	[UM_IP_PROTOCOL] = F("ip_protocol", UINT, .lo = 0, .hi = 255, .dflt = "any"),
	[UM_L4_DST_PORT] = F("l4_dst_port", UINT, .lo = 0, .hi = 65535, .dflt = "any"),
	END,
};

static const struct rsw_field_schema neigh_fields[] = {
	[NB_NEIGH] = F("neigh", MAC, .required = 1, .help = "the neighbour's MAC"),
	[NB_FAMILY] = F("family", ENUM, .words = "IPv4|IPv6", .help = "checked against the key"),
	END,
};

static const struct rsw_field_schema nhg_fields[] = {
	[NHG_NEXTHOP] = F("nexthop", CUSTOM, .required = 1,
			  .help = "\"ip,ip,...\"; an address named twice counts once (warning)"),
	[NHG_POLICY] = F("hash_policy", NAME, .dflt = "default", .help = "a HASH_POLICY"),
	[NHG_BUCKETS] = F("buckets", UINT, .lo = 1, .hi = 65536, .dflt = "4096"),
	[NHG_RESILIENT] = F("resilient", BOOL, .dflt = "true",
			    .help = "a named group keeps its bucket table across changes"),
	[NHG_ARS] = F("ars_object", NAME, .dflt = "none",
		      .help = "an ARS_OBJECT: adaptive routing on this group (docs/ars.md)"),
	END,
};

/* SONiC's ARS_PROFILE (sonic-swss arsorch) = SAI_OBJECT_TYPE_ARS_PROFILE; FBOSS's
 * FlowletSwitchingConfig fields map onto it (docs/ars.md). */
static const struct rsw_field_schema ars_profile_fields[] = {
	[AP_ALGO] = F("algorithm", ENUM, .words = "ewma", .dflt = "ewma",
		      .help = "SAI_ARS_PROFILE_ALGO_EWMA, the only one SAI defines"),
	[AP_SAMPLE] = F("sampling_interval", UINT, .lo = 1, .hi = 1000000, .dflt = "16",
			.units = "us", .help = "how often port load and queue are sampled "
					       "(FBOSS dynamicSampleRate)"),
	[AP_SEED] = F("random_seed", UINT, .lo = 0, .hi = 0xFFFFFFFFll, .dflt = "0",
		      .help = "SAI_ARS_PROFILE_ATTR_ARS_RANDOM_SEED: ties and random modes"),
	[AP_PAST_MIN] = F("past_load_min_value", UINT, .lo = 0, .hi = 1ll << 40, .dflt = "0",
			  .units = "bytes", .help = "port load (bytes sent in a sampling interval, "
						    "averaged) at or below which it is band 0 "
						    "(FBOSS dynamicEgressMinThresholdBytes)"),
	[AP_PAST_MAX] = F("past_load_max_value", UINT, .lo = 1, .hi = 1ll << 40, .dflt = "200000",
			  .units = "bytes", .help = "port load at or above which it is band 7 "
						    "(default: 100 Gb/s for 16 us; FBOSS "
						    "dynamicEgressMaxThresholdBytes)"),
	[AP_PAST_WEIGHT] = F("past_load_weight", UINT, .lo = 0, .hi = 16, .dflt = "2",
			     .help = "EWMA exponent of the port load: avg += (x - avg) / 2^w "
				     "(FBOSS dynamicEgressLoadExponent)"),
	[AP_FUT_MIN] = F("future_load_min_value", UINT, .lo = 0, .hi = 1ll << 40, .dflt = "0",
			 .units = "bytes", .help = "queued bytes (averaged) at or below which the "
						   "queue is band 0 (FBOSS "
						   "dynamicQueueMinThresholdBytes)"),
	[AP_FUT_MAX] = F("future_load_max_value", UINT, .lo = 1, .hi = 1ll << 40,
			 .dflt = "1048576", .units = "bytes",
			 .help = "queued bytes at or above which it is band 7 (FBOSS "
				 "dynamicQueueMaxThresholdBytes)"),
	[AP_FUT_WEIGHT] = F("future_load_weight", UINT, .lo = 0, .hi = 16, .dflt = "2",
			    .help = "EWMA exponent of the queue size (FBOSS dynamicQueueExponent)"),
	[AP_LOAD_PCT] = F("port_load_weight", UINT, .lo = 0, .hi = 100, .dflt = "50",
			  .units = "%", .help = "rocesw (FBOSS portLoadWeight): the load band's "
						"share of a port's quality band"),
	[AP_QUEUE_PCT] = F("port_queue_weight", UINT, .lo = 0, .hi = 100, .dflt = "50",
			   .units = "%", .help = "rocesw (FBOSS portQueueWeight): the queue band's "
						 "share"),
	[AP_V4] = F("ipv4_enable", BOOL, .dflt = "true", .help = "SAI_ARS_PROFILE_ATTR_ENABLE_IPV4"),
	[AP_V6] = F("ipv6_enable", BOOL, .dflt = "true", .help = "SAI_ARS_PROFILE_ATTR_ENABLE_IPV6"),
	IGN("max_flows", "each ARS_OBJECT's max_flows sizes its groups' flowlet tables"),
	IGN("current_load_min_value", "no current-load term: load and queue averages only"),
	IGN("current_load_max_value", "no current-load term"),
	IGN("ars_nhg_path_selector_mode", "a NEXTHOP_GROUP names its ARS_OBJECT"),
	IGN("default_ars_object", "a NEXTHOP_GROUP names its ARS_OBJECT"),
	END,
};

/* SONiC's ARS_OBJECT = SAI_OBJECT_TYPE_ARS. */
static const struct rsw_field_schema ars_object_fields[] = {
	[AO_MODE] = F("assign_mode", ENUM,
		      .words = "per_flowlet_quality|per_flowlet_random|per_packet_quality|"
			       "per_packet_random|fixed|FLOWLET_QUALITY|PER_PACKET_QUALITY|"
			       "PER_PACKET_RANDOM|FIXED_ASSIGNMENT",
		      .dflt = "per_flowlet_quality",
		      .help = "SAI_ARS_MODE_*; FBOSS's switchingMode names are accepted"),
	[AO_IDLE] = F("flowlet_idle_time", UINT, .lo = 1, .hi = 10000000, .dflt = "256",
		      .units = "us", .help = "SAI_ARS_ATTR_IDLE_TIME: a flow idle this long may "
					     "move (FBOSS inactivityIntervalUsecs)"),
	[AO_MAXFLOWS] = F("max_flows", UINT, .lo = 1, .hi = 65536, .dflt = "512",
			  .help = "SAI_ARS_ATTR_MAX_FLOWS: flowlet table entries, indexed by the "
				  "flow hash (FBOSS flowletTableSize)"),
	[AO_DPORT] = F("match_l4_dst_port", UINT, .lo = 0, .hi = 65535, .dflt = "any",
		       .help = "rocesw: only UDP packets to this port take ARS (4791: RoCEv2, as "
			       "FBOSS's tests select it with an ACL); others keep the hash"),
	IGN("primary_path_threshold", "one member set: no primary/alternate paths"),
	IGN("alternative_path_cost", "one member set: no primary/alternate paths"),
	END,
};

#define ROUTE_FIELDS                                                                          \
	[RT_NEXTHOP] = F("nexthop", CUSTOM,                                                   \
			 .help = "one IP, or several (\"ip,ip\": a group of its own; an address " \
				 "named twice counts once, with a warning)"),                     \
	[RT_GROUP] = F("nexthop_group", NAME, .help = "rocesw: a NEXTHOP_GROUP"),             \
	[RT_BLACKHOLE] = F("blackhole", BOOL, .dflt = "false")

static const struct rsw_field_schema route_fields[] = {
	ROUTE_FIELDS,
	[RT_FALLBACK] = SONIC("fallback", "POLICY_ROUTE only"),
	[RT_DISTANCE] = F("distance", CUSTOM, .dflt = "0",
			  .help = "SONiC's per-next-hop list, in nexthop's order (\"0,10\"), 0..255: "
				  "the next hops of the lowest distance carry the route; those of "
				  "the next (a backup, as FRR's staticd installs a floating static "
				  "route) take over only while none of the first is usable (its port "
				  "down), and give it back when one is; at most two distances"),
	IGN("ifname", "the neighbour gives the port"),
	IGN("advertise", "no BGP"),
	SONIC("nexthop-vrf", "one VRF"),
	SONIC("bfd", "no BFD"),
	END,
};

static const struct rsw_field_schema pbr_fields[] = {
	ROUTE_FIELDS,
	[RT_FALLBACK] = F("fallback", BOOL, .dflt = "true",
			  .help = "while its next hop's port is down the route is left out and "
				  "packets take the main table's route; `false` keeps it "
				  "(dropped as egress_port_down)"),
	END,
};

static const struct rsw_field_schema pool_fields[] = {
	[BP_SIZE] = F("size", UINT, .required = 1, .lo = 1, .hi = 1ll << 40, .units = "bytes"),
	[BP_TYPE] = F("type", ENUM, .required = 1, .words = "ingress|egress"),
	[BP_MODE] = F("mode", ENUM, .words = "dynamic|static", .dflt = "dynamic"),
	[BP_XOFF] = F("xoff", UINT, .lo = 0, .hi = 1ll << 40, .units = "bytes", .dflt = "0",
		      .help = "ingress pool: the shared headroom pool (SAI XOFF_SIZE) the lossless "
			      "PGs' headroom comes from, each PG at most its profile's xoff; inside "
			      "size (broadcom) or beside it (mellanox); 0: each PG its own headroom"),
	END,
};

static const struct rsw_field_schema profile_fields[] = {
	[BPR_POOL] = F("pool", CUSTOM, .required = 1,
		       .help = "a BUFFER_POOL, also as `\"[BUFFER_POOL|name]\"`"),
	[BPR_SIZE] = F("size", UINT, .lo = 0, .hi = 1ll << 40, .units = "bytes",
		       .help = "lossless: broadcom, the reserve (SAI RESERVED_BUFFER_SIZE), xoff beside "
			       "it; mellanox, xon + xoff, or the reserve (= xon) with a shared "
			       "headroom pool (docs/tm.md, \"Buffer conventions\"); lossy: the reserve"),
	[BPR_DYN_TH] = F("dynamic_th", INT, .lo = -7, .hi = 7, .units = "(alpha = 2^dynamic_th)",
			 .help = "alpha = 2^dynamic_th; exactly one of dynamic_th, static_th"),
	[BPR_STATIC_TH] = F("static_th", UINT, .lo = 0, .hi = 1ll << 40, .units = "bytes"),
	[BPR_XOFF] = F("xoff", UINT, .lo = 1, .hi = 1ll << 32, .units = "bytes",
		       .help = "headroom (SAI XOFF_TH): makes the profile lossless; with a shared "
			       "headroom pool, the most of it one PG may hold"),
	[BPR_XON] = F("xon", UINT, .lo = 0, .hi = 1ll << 32, .units = "bytes",
		      .help = "XON floor (SAI XON_TH): XON once shared use is below max(xon, "
			      "threshold - xon_offset)"),
	[BPR_XON_OFFSET] = F("xon_offset", UINT, .lo = 0, .hi = 1ll << 32, .units = "bytes",
			     .help = "XON hysteresis below the XOFF threshold (SAI XON_OFFSET_TH)"),
	SONIC("headroom_type", "headroom is as written or computed once"),
	SONIC("packet_discard_action", "lossy packets over the threshold are dropped"),
	END,
};

static const struct rsw_field_schema binding_fields[] = {
	[BIND_PROFILE] = F("profile", CUSTOM, .required = 1,
			   .help = "a BUFFER_PROFILE, also as `\"[BUFFER_PROFILE|name]\"`"),
	END,
};

static const struct rsw_field_schema sched_fields[] = {
	[SC_TYPE] = F("type", ENUM, .required = 1, .words = "STRICT|DWRR|WRR",
		      .help = "WRR is run as DWRR"),
	[SC_WEIGHT] = F("weight", UINT, .lo = 1, .hi = 100, .help = "required for DWRR and WRR"),
	[SC_PRIORITY] = F("priority", UINT, .lo = 0, .hi = 7,
			  .help = "rocesw: order among strict queues"),
	SONIC("meter_type", "queue shaping is not modelled: ports are shaped by PORT.speed"),
	SONIC("pir", "queue shaping is not modelled"),
	SONIC("pbs", "queue shaping is not modelled"),
	SONIC("cir", "queue shaping is not modelled"),
	SONIC("cbs", "queue shaping is not modelled"),
	END,
};

#define COLOUR(c)                                                                             \
	IGN(c "_min_threshold", "no policer colours packets"),                                \
	IGN(c "_max_threshold", "no policer colours packets"),                                \
	IGN(c "_drop_probability", "no policer colours packets"),                             \
	IGN("wred_" c "_enable", "no policer colours packets")

static const struct rsw_field_schema wred_fields[] = {
	[WR_ECN] = F("ecn", ENUM, .words = "ecn_all|ecn_green|ecn_green_yellow|ecn_green_red|"
					   "ecn_none|ecn_yellow|ecn_red|ecn_yellow_red",
		     .help = "mark instead of dropping; every packet is green here, so any "
			     "setting with green marks"),
	[WR_GMIN] = F("green_min_threshold", UINT, .required = 1, .lo = 0, .hi = 1ll << 40,
		      .units = "bytes"),
	[WR_GMAX] = F("green_max_threshold", UINT, .required = 1, .lo = 0, .hi = 1ll << 40,
		      .units = "bytes"),
	[WR_GPROB] = F("green_drop_probability", UINT, .required = 1, .lo = 0, .hi = 100,
		       .units = "percent"),
	[WR_MARK] = F("mark", ENUM, .words = "dequeue|enqueue", .dflt = "dequeue",
		      .help = "rocesw: where ECN marking is decided"),
	IGN("wred_green_enable", "WRED is on when the profile is bound"),
	COLOUR("yellow"),
	COLOUR("red"),
	END,
};

static const struct rsw_field_schema queue_fields[] = {
	[Q_SCHEDULER] = F("scheduler", CUSTOM, .help = "a SCHEDULER, also as `\"[SCHEDULER|name]\"`"),
	[Q_WRED] = F("wred_profile", CUSTOM,
		     .help = "a WRED_PROFILE, also as `\"[WRED_PROFILE|name]\"`"),
	END,
};

static const struct rsw_field_schema pfcwd_fields[] = {
	[WD_ACTION] = F("action", ENUM, .words = "drop|forward|alert", .dflt = "drop"),
	[WD_DETECT] = F("detection_time", UINT, .lo = 1, .hi = 60000, .dflt = "200", .units = "ms"),
	[WD_RESTORE] = F("restoration_time", UINT, .lo = 1, .hi = 60000, .dflt = "200",
			 .units = "ms"),
	[WD_POLL] = F("POLL_INTERVAL", UINT, .lo = 1, .hi = 60000, .dflt = "200", .units = "ms",
		      .help = "key GLOBAL only"),
	SONIC("BIG_RED_SWITCH", "no storm override"),
	END,
};

static const struct rsw_field_schema classifier_fields[] = {
	[CL_PRIORITY] = F("priority", UINT, .lo = 0, .hi = 65535, .dflt = "0",
			  .help = "higher first, ties by name"),
	[CL_TC] = F("tc", UINT, .required = 1, .lo = 0, .hi = 7, .help = "the traffic class it sets"),
	[CL_DSCP] = F("dscp", CUSTOM, .help = "`48` or `24/0x38`"),
	[CL_OPCODE] = F("bth_opcode", CUSTOM, .help = "`0x81` or with a mask"),
	[CL_QP] = F("dest_qp", CUSTOM, .help = "`lo-hi`"),
	[CL_LENGTH] = F("length", CUSTOM, .units = "bytes", .help = "frame without FCS, `lo-hi`"),
	[CL_IN_PORT] = F("in_port", NAME, .help = "a PORT"),
	END,
};

static const struct rsw_field_schema roceswd_fields[] = {
	F("eal_args", TEXT, .dflt = "--no-huge -m 1024 --no-pci -l 0-1"),
	F("control_socket", TEXT, .dflt = "/run/rocesw/dataplane.sock"),
	F("control_group", TEXT),
	F("metrics_port", UINT, .lo = 1, .hi = 65535, .dflt = "none",
	  .help = "Prometheus metrics"),
	F("metrics_address", TEXT, .dflt = "127.0.0.1", .help = "numeric IPv4 or IPv6"),
	F("metrics_timeout", UINT, .lo = 1, .hi = 3600, .dflt = "10", .units = "s",
	  .help = "time a metrics connection may take"),
	F("dataplane", TEXT, .help = "binary path"),
	F("control_readonly_group", TEXT, .help = "members may only read"),
	F("user", TEXT, .help = "the dataplane runs as it once started"),
	END,
};

static const struct rsw_field_schema no_fields[] = {END};

#define T(n, k, f, h, ...) {.name = n, .key = k, .fields = f, .help = h, __VA_ARGS__}
#define UNMODELLED(n, why) {.name = n, .key = "", .fields = no_fields, .help = why,           \
			    .model = RSW_FM_UNMODELLED}

const struct rsw_table_schema rsw_schema_tables[] = {
	T("DEVICE_METADATA", "localhost", device_fields, "the switch"),
	T("PORT", "port name", port_fields, "ports; the order of PORT is the port index"),
	T("CABLE_LENGTH", "AZURE", cable_fields, "cable lengths, for headroom sizing"),
	T("DSCP_TO_TC_MAP", "map name", dscp_fields,
	  "built-in `AZURE` = SONiC's (3→3, 4→4, 5→2, 8→0, 46→5, 48→6, else 1)"),
	T("TC_TO_PRIORITY_GROUP_MAP", "map name", tc_pg_fields,
	  "built-in `AZURE` (3→3, 4→4, 7→7, else 0)"),
	T("TC_TO_QUEUE_MAP", "map name", identity_map_fields, "checked, identity only"),
	T("MAP_PFC_PRIORITY_TO_QUEUE", "map name", identity_map_fields, "checked, identity only"),
	T("PORT_QOS_MAP", "port", port_qos_fields, "per-port QoS"),
	T("INTERFACE", "PORT, or PORT|ADDR/LEN", interface_fields,
	  "a router interface address, IPv4 or IPv6, host bits set as SONiC writes them "
	  "(`Ethernet0|10.1.0.0/31`, `Ethernet8|10.1.0.2/24`, `Ethernet0|fc00::/127`); an address is "
	  "on one port only. The live switch answers ARP and neighbour solicitations for it, "
	  "answers pings to it, and learns and resolves neighbours in its subnet "
	  "(docs/dataplane.md). `PORT` alone (every port routes here) is accepted and changes "
	  "nothing. Packets to the address end at the switch (`to_switch` in replay)"),
	T("SWITCH_HASH", "GLOBAL", switch_hash_fields,
	  "the hash policy named `default` (built-in: 5-tuple + IN_PORT, CRC)"),
	T("HASH_POLICY", "name", hash_policy_fields, "named hash policies (docs/hash.md)",
	  .rocesw_only = 1),
	T("NEIGH", "PORT|IP", neigh_fields, "static neighbours"),
	T("NEXTHOP_GROUP", "name", nhg_fields, "named ECMP groups", .rocesw_only = 1),
	T("STATIC_ROUTE", "prefix, or VRF|prefix", route_fields,
	  "exactly one of nexthop, nexthop_group, blackhole: true; with several next hops, "
	  "SONiC's `distance` list (`nexthop: \"10.254.1.0,10.254.2.0\", distance: \"0,10\"`) "
	  "makes the higher-distance ones a backup that takes over only while the lower's are "
	  "down (FRR's floating static route: SONiC's bgpcfgd hands STATIC_ROUTE to staticd); "
	  "equal distances share by ECMP. A VRF prefix (`default|`) is accepted for the default "
	  "VRF only"),
	T("POLICY_ROUTE", "PORT|prefix", pbr_fields,
	  "as STATIC_ROUTE, for packets entering that port (centralized TE path pinning)",
	  .rocesw_only = 1),
	T("CLASSIFIER", "rule name", classifier_fields,
	  "rules that set the TC before the DSCP map; shipped rules `cts` (DSCP 48 → TC 6) and "
	  "`cnp` (opcode 0x81 → TC 6) unless the file has the table (docs/tm.md)",
	  .rocesw_only = 1),
	T("BUFFER_POOL", "pool name", pool_fields, "at most 4 pools"),
	T("BUFFER_PROFILE", "profile name", profile_fields, "buffer profiles"),
	T("BUFFER_PG", "PORT|3-4", binding_fields,
	  "a PG in pfc_enable needs a profile with xoff, one outside it must not have one"),
	T("BUFFER_QUEUE", "PORT|0-2", binding_fields,
	  "an egress pool's profile; queues in pfc_enable are lossless"),
	T("WRED_PROFILE", "name", wred_fields, "ECN marking profiles"),
	T("SCHEDULER", "name", sched_fields, "queue schedulers"),
	T("QUEUE", "PORT|3 or PORT|0-2", queue_fields, "per-queue scheduler and WRED"),
	T("PFC_WD", "port, or GLOBAL", pfcwd_fields, "the PFC watchdog"),
	T("ROCESWD", "GLOBAL", roceswd_fields, "how roceswd runs the dataplane (docs/roceswd.md)",
	  .rocesw_only = 1),
	T("ARS_PROFILE", "profile name", ars_profile_fields,
	  "the switch's one ARS profile (SAI_SWITCH_ATTR_ARS_PROFILE): how port quality is "
	  "measured and banded (docs/ars.md)"),
	T("ARS_OBJECT", "object name", ars_object_fields,
	  "ARS objects (SAI_OBJECT_TYPE_ARS): mode, idle time, flowlet table; a NEXTHOP_GROUP "
	  "names one in ars_object (docs/ars.md)"),
	/* SONiC tables a config_db.json carries that rocesw does not model */
	UNMODELLED("BUFFER_PORT_INGRESS_PROFILE_LIST", "ingress accounting is per PG"),
	UNMODELLED("BUFFER_PORT_EGRESS_PROFILE_LIST", "egress accounting is per queue"),
	UNMODELLED("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "headroom defaults are fixed"),
	UNMODELLED("LOSSLESS_TRAFFIC_PATTERN", "headroom defaults are fixed"),
	UNMODELLED("DOT1P_TO_TC_MAP", "no VLAN tags"),
	UNMODELLED("DSCP_TO_FC_MAP", "no forwarding classes"),
	UNMODELLED("EXP_TO_FC_MAP", "no MPLS"),
	UNMODELLED("TC_TO_DSCP_MAP", "no remarking"),
	UNMODELLED("TC_TO_DOT1P_MAP", "no remarking"),
	UNMODELLED("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PFC priority = PG"),
	UNMODELLED("LOOPBACK_INTERFACE", "no loopbacks"),
	UNMODELLED("VLAN", "no VLANs"),
	UNMODELLED("VLAN_MEMBER", "no VLANs"),
	UNMODELLED("VLAN_INTERFACE", "no VLANs"),
	UNMODELLED("PORTCHANNEL", "no LAGs"),
	UNMODELLED("PORTCHANNEL_MEMBER", "no LAGs"),
	UNMODELLED("PORTCHANNEL_INTERFACE", "no LAGs"),
	UNMODELLED("BGP_NEIGHBOR", "no BGP: routes are static"),
	UNMODELLED("BGP_PEER_RANGE", "no BGP"),
	UNMODELLED("DEVICE_NEIGHBOR", "topology bookkeeping"),
	UNMODELLED("DEVICE_NEIGHBOR_METADATA", "topology bookkeeping"),
	UNMODELLED("ACL_TABLE", "no ACLs (CLASSIFIER sets TCs)"),
	UNMODELLED("ACL_RULE", "no ACLs"),
	UNMODELLED("MGMT_INTERFACE", "no management port"),
	UNMODELLED("MGMT_PORT", "no management port"),
	UNMODELLED("CRM", "no resource monitor"),
	UNMODELLED("FLEX_COUNTER_TABLE", "counters are always on"),
	UNMODELLED("FEATURE", "no containers"),
	UNMODELLED("NTP_SERVER", "host setting"),
	UNMODELLED("SYSLOG_SERVER", "host setting"),
	UNMODELLED("MIRROR_SESSION", "no mirroring"),
	UNMODELLED("VRF", "one VRF"),
	UNMODELLED("SWITCH", "SONiC's switch attributes; hashing is SWITCH_HASH"),
	END,
};

const struct rsw_table_schema *rsw_schema_table(const char *name)
{
	for (const struct rsw_table_schema *t = rsw_schema_tables; name && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

int rsw_schema_field(const struct rsw_field_schema *f, const char *name)
{
	for (int i = 0; name && f[i].name; i++)
		if (!strcmp(f[i].name, name) || !strcmp(f[i].name, "*"))
			return i;
	return -1;
}

/* "a|b|c" → "a, b or c" */
static void words_list(const char *w, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	for (const char *p = w; *p && o + 4 < len; p++) {
		if (*p != '|') {
			out[o++] = *p;
			continue;
		}
		const char *sep = strchr(p + 1, '|') ? ", " : " or ";
		o += (size_t)snprintf(out + o, len - o, "%s", sep);
		if (o >= len)
			o = len - 1;
	}
	out[o] = 0;
}

void rsw_schema_expect(const struct rsw_field_schema *f, char *out, size_t len)
{
	char w[256] = "";
	if (f->words)
		words_list(f->words, w, sizeof(w));
	switch (f->type) {
	case RSW_FT_UINT:
	case RSW_FT_INT:
		snprintf(out, len, "an integer %lld..%lld%s%s%s%s", f->lo, f->hi, f->units ? " " : "",
			 f->units ? f->units : "", f->words ? " or " : "", w);
		break;
	case RSW_FT_BOOL:
		snprintf(out, len, "true or false");
		break;
	case RSW_FT_ENUM:
		snprintf(out, len, "%s", w);
		break;
	case RSW_FT_NAME:
		snprintf(out, len, NAME_HELP);
		break;
	case RSW_FT_MAC:
		snprintf(out, len, "a MAC address like 02:00:00:00:00:01");
		break;
	case RSW_FT_PRIOS:
		snprintf(out, len, "priorities 0..7 separated by commas, like \"3,4\"");
		break;
	default:
		snprintf(out, len, "%s", f->help ? f->help : "a value");
	}
}

static const char *model_name(const struct rsw_field_schema *f)
{
	return f->model == RSW_FM_MODELLED ? "yes" : f->model == RSW_FM_IGNORED ? "accepted, no effect"
										: "SONiC only: warning";
}

/* Markdown cell text: '|' escaped. */
static void cell(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

void rsw_schema_markdown(FILE *out)
{
	fprintf(out, "| table | key | what |\n|---|---|---|\n");
	for (const struct rsw_table_schema *t = rsw_schema_tables; t->name; t++) {
		if (t->model != RSW_FM_MODELLED)
			continue;
		fprintf(out, "| `%s`%s | ", t->name, t->rocesw_only ? " (+)" : "");
		cell(out, t->key);
		fprintf(out, " | ");
		cell(out, t->help);
		fprintf(out, " |\n");
	}
	for (const struct rsw_table_schema *t = rsw_schema_tables; t->name; t++) {
		if (t->model != RSW_FM_MODELLED)
			continue;
		fprintf(out, "\n#### %s\n\n| field | type | default | modelled | notes |\n"
			     "|---|---|---|---|---|\n", t->name);
		for (const struct rsw_field_schema *f = t->fields; f->name; f++) {
			char e[512];
			rsw_schema_expect(f, e, sizeof(e));
			fprintf(out, "| `%s`%s | ", f->name, f->required ? " (required)" : "");
			if (f->type == RSW_FT_CUSTOM || f->type == RSW_FT_TEXT)
				fprintf(out, "%s", f->type == RSW_FT_TEXT ? "text" : "see notes");
			else
				cell(out, e);
			fprintf(out, " | ");
			cell(out, f->dflt ? f->dflt : "");
			fprintf(out, " | %s | ", model_name(f));
			cell(out, f->help ? f->help : "");
			fprintf(out, " |\n");
		}
	}
	fprintf(out, "\nSONiC tables read as warnings only (`--sonic`):");
	for (const struct rsw_table_schema *t = rsw_schema_tables; t->name; t++)
		if (t->model == RSW_FM_UNMODELLED)
			fprintf(out, " `%s`%s", t->name, t[1].name ? "," : ".\n");
}
