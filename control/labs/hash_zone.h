/* The hash lab over a zone: every flow of the traffic follows the zone's own tables (the
 * dataplane's ingress stage at each switch, so each ECMP group hashes it with that switch's
 * policy) from the switch port of its source address's neighbour entry to a host or out of the
 * zone; its bytes are counted on every link it crosses. Links between switches are judged per
 * tier: up (sent from a port whose role is uplink) and down (role downlink). */
#ifndef RSW_HASH_ZONE_H
#define RSW_HASH_ZONE_H

#include <stdint.h>

#include "hash_lab.h"
#include "dataplane/config/zone.h"

enum { RSW_TIER_UP = 0, RSW_TIER_DOWN, RSW_TIERS };

struct rsw_zone_link_load {
	int sw;                 /* sending switch */
	uint16_t port;          /* its port */
	int tier;               /* RSW_TIER_*, or -1 for links to hosts */
	uint64_t flows, packets, bytes;
};

struct rsw_zone_tier {
	unsigned n_links;
	double max_mean;        /* busiest link's bytes over the tier's mean */
	double jain;
	unsigned fat_n, fat_links_colliding; /* links carrying two or more of the fat_n largest flows */
};

struct rsw_zone_lab {
	unsigned n_links;
	struct rsw_zone_link_load link[2 * RSW_ZONE_MAX_LINKS];
	struct rsw_zone_tier tier[RSW_TIERS];
	uint64_t flows_delivered, flows_left, flows_dropped, flows_unplaced, flows_looped;
};

/* Follows every flow of t through z. Returns -1 when out of memory. */
int rsw_lab_zone(const struct rsw_lab_traffic *t, const struct rsw_zone *z, struct rsw_zone_lab *r);

/* `rocesw hash --zone Z`: each policy in turn on every switch of Z (its configs compiled with the
 * policy), tables or JSON on stdout, and if html a page with a bar chart of each tier's links
 * per policy. rules: --switch-hash GLOB:[policy=NAME][,seed=N][,offset=N], what the switches
 * whose name matches GLOB (fnmatch; the last matching rule wins) hash with instead: another of
 * the policies, and/or the compared policy with its own seed or offset, as hardware sets them
 * per device. Returns the command's exit code. */
int rsw_cmd_hash_zone(const struct rsw_lab_traffic *t, const char *zone, const char *const *names,
		      const struct rsw_hash_policy *const *pols, unsigned n_pol, int json,
		      const char *html, const char *const *rules, unsigned n_rules);

#endif
