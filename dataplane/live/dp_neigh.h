/* The live switch's neighbour control plane, run by the main lcore: ARP and IPv6 neighbour
 * discovery for the switch's interface addresses (INTERFACE), ping replies, neighbours learnt
 * from what hosts send, resolution of next hops nobody configured, ageing.
 *
 * Workers never write tables: they hand ARP, NS/NA and frames to the switch's own addresses
 * over `punt` (mbufs; counted as consumed), and the next hops a route could not resolve over
 * `miss`. The main lcore answers, writes learnt neighbours through the table-write API (one
 * transaction per poll, so RCU and the shadow state's rules hold) and hands the frames it sends
 * to each port's owner over `inject` (workers alone transmit). */
#ifndef RSW_DP_NEIGH_H
#define RSW_DP_NEIGH_H

#include <stdint.h>

#include <jansson.h>

#include "dp_ctx.h"

#define RSW_DP_NEIGH_TIMEOUT_S 300     /* default age of a learnt neighbour nothing refreshed */
#define RSW_DP_NEIGH_MAX 4096          /* learnt neighbours per switch */
#define RSW_DP_PUNT_RING 1024          /* frames to the main lcore, per switch */
#define RSW_DP_INJECT_RING 256         /* frames from the main lcore, per port */
#define RSW_DP_RESOLVE_INTERVAL_NS 1000000000ull /* one ARP request / NS per next hop a second */

/* What the worker hands over for a next hop that did not resolve. */
struct rsw_dp_miss {
	struct rsw_ip ip;
	uint8_t pad[3];
};

struct rsw_dp_neigh_stats {
	uint64_t arp_request_rx, arp_reply_rx, ns_rx, na_rx, echo_rx, other_rx;
	uint64_t arp_reply_tx, na_tx, arp_request_tx, ns_tx, probe_tx, echo_reply_tx;
	uint64_t learnt, moved, refreshed, aged, static_kept, outside_subnet, table_full;
	uint64_t resolve_no_interface, inject_full, no_mbuf, commit_failed;
};

struct rsw_dp_learnt {
	struct rsw_ip ip;
	uint16_t port;
	uint8_t mac[6];
	uint8_t dirty;            /* to be written */
	uint64_t seen_ns, probed_ns;
};

struct rsw_dp_neigh {
	struct rte_ring *punt;    /* mbufs, workers → main; mbuf->port holds the switch port */
	struct rte_ring *miss;    /* struct rsw_dp_miss, workers → main */
	struct rte_ring *inject[RSW_MAX_PORTS]; /* mbufs, main → the port's owner */
	uint64_t timeout_ns;
	unsigned n_learnt;
	struct rsw_dp_learnt learnt[RSW_DP_NEIGH_MAX];
	unsigned n_tried;
	struct {
		struct rsw_ip ip;
		uint64_t sent_ns;
	} tried[256];
	uint64_t next_age_ns;
	struct rsw_dp_neigh_stats st;
};

/* Rings for switch number idx; timeout_s: the age of learnt entries. NULL with a message. */
struct rsw_dp_neigh *rsw_dp_neigh_new(struct rsw_dp *dp, unsigned idx, unsigned timeout_s,
				      char *err, size_t errlen);
void rsw_dp_neigh_free(struct rsw_dp_neigh *n);
/* Main lcore: answer what the workers punted, learn, resolve, age. */
void rsw_dp_neigh_poll(struct rsw_dp *dp);
/* `show arp` (family 4) / `show ndp` (6): every neighbour, configured and learnt, and the
 * counters above. */
json_t *rsw_dp_neigh_show(struct rsw_dp *dp, unsigned family);

#endif
