/* The hash-policy lab: traffic from captures, hashed by the dataplane's own hash stage
 * (rsw_hash_packet), spread over N members by modulo or by a resilient bucket table, and judged
 * (load per member, max/mean, Jain's index, collisions of the largest flows, what moves when
 * members fail). Runs without EAL: nothing here needs DPDK memory. */
#ifndef RSW_HASH_LAB_H
#define RSW_HASH_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/hash/hash_policy.h"
#include "dataplane/pkt/flow_table.h"
#include "dataplane/pkt/pkt_meta.h"

/* A flow (dataplane/pkt/flow_table.h: addresses, protocol, ports, RoCE destination QP) and its
 * totals. */
struct rsw_lab_flow {
	uint64_t packets, bytes;
};

struct rsw_lab_traffic {
	size_t n_pkts, n_flows;
	uint8_t **frame;             /* each packet's bytes */
	struct rsw_pkt_meta *meta;   /* each packet's parse */
	uint32_t *flow;              /* each packet's flow index */
	uint32_t *wire_len;          /* each packet's length on the wire (pcap len, not caplen) */
	struct rsw_lab_flow *flows;  /* by flow index of ix */
	struct rsw_flow_table ix;
	uint64_t skipped_not_ip;     /* frames not hashed: MAC control, other EtherTypes */
	uint64_t skipped_malformed;  /* frames the parser rejected */
};

/* Reads the captures (libpcap). Returns NULL with a message naming the file on error. */
struct rsw_lab_traffic *rsw_lab_load(const char *const *pcaps, unsigned n, char *err, size_t errlen);
void rsw_lab_free(struct rsw_lab_traffic *t);

/* The hash of every packet under pol, with in_port as the IN_PORT field. */
void rsw_lab_hash(const struct rsw_lab_traffic *t, const struct rsw_hash_policy *pol,
		  uint16_t in_port, uint64_t seed, uint32_t *hash);

/* Member of every packet: n_members members, fail_mask (bit m: member m failed; at most 64
 * members can fail), buckets 0 for hash % active members (in member order, as the dataplane's
 * non-resilient groups), else a resilient table of that many buckets, built round-robin with all
 * members and then losing the failed ones. Returns -1 if no member is left. */
int rsw_lab_assign(const struct rsw_lab_traffic *t, const uint32_t *hash, unsigned n_members,
		   uint32_t buckets, uint64_t fail_mask, uint16_t *member);

struct rsw_lab_result {
	unsigned n_members;
	uint64_t flows[256], packets[256], bytes[256];
	double max_mean;        /* busiest member's bytes over the mean of the active members */
	double jain;            /* (sum x)^2 / (n sum x^2) over the active members' bytes */
	unsigned fat_n;         /* how many largest flows were looked at (= active members) */
	unsigned fat_collisions;/* members carrying two or more of them */
	unsigned fat_flows_colliding; /* largest flows sharing a member with another */
};

/* Metrics of an assignment; failed members are left out of the means. */
void rsw_lab_metrics(const struct rsw_lab_traffic *t, const uint16_t *member, unsigned n_members,
		     uint64_t fail_mask, struct rsw_lab_result *r);

/* Flows whose member (of their first packet) differs between two assignments. */
size_t rsw_lab_moved_flows(const struct rsw_lab_traffic *t, const uint16_t *a, const uint16_t *b);

#endif
