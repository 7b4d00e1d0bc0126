/* A replay run in aggregate, from its summary.json: every link direction (one switch: every
 * port's transmit side) with its tier and wire utilization, the distribution of utilization per
 * tier, the link directions by bytes, the non-empty queues by depth, and totals. What a person
 * reads first at zone scale; replay's text summary and report.html both draw on it. */
#ifndef RSW_REPLAY_DIGEST_H
#define RSW_REPLAY_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A zone of more switches than this is shown in aggregate (top-N tables, distributions, a heat
 * map) unless the user asks for every port. */
#define RSW_DIGEST_SCALE_SWITCHES 8

/* Link tiers, by direction: a leaf is a switch with a host link. */
enum rsw_link_tier {
	RSW_LT_HOST_TX = 0, /* host → leaf */
	RSW_LT_HOST_RX,     /* leaf → host */
	RSW_LT_UP,          /* leaf → spine */
	RSW_LT_DOWN,        /* spine → leaf */
	RSW_LT_FLAT,        /* switch → switch when both or neither have hosts */
	RSW_LT_PORT,        /* one switch: a port's transmit side */
	RSW_LT_N
};

struct rsw_link_dir {
	const char *from, *to; /* "host" or "SWITCH|PORT" (one switch: the port, and "") */
	size_t link;           /* index in links[] (one switch: in ports[]) */
	unsigned dir;          /* 0: a → b, 1: b → a */
	unsigned tier;         /* enum rsw_link_tier */
	uint64_t bytes, frames, speed_mbps;
	uint64_t pfc_tx;       /* PFC frames the sending port put on it */
	double util;           /* wire utilization, percent */
};

struct rsw_queue_at {
	const char *sw, *port; /* sw NULL for one switch */
	unsigned queue;
	uint64_t depth, packets, ecn_marked, dropped;
};

struct rsw_tier_dist {
	size_t n, idle;                           /* directions; those that carried no frame */
	double min, p50, p90, p99, max, mean; /* percent; nearest-rank percentiles */
};

struct rsw_digest {
	int zone;
	size_t n_switches, n_hosts, n_links;
	uint64_t t0, t1;
	struct rsw_link_dir *dir;
	size_t n_dir;
	size_t *by_bytes;         /* indices into dir, most bytes first (ties: links' order) */
	struct rsw_queue_at *q;   /* non-empty queues, deepest first (ties: ports' order) */
	size_t n_q;
	struct rsw_tier_dist tier[RSW_LT_N];
	/* switch ports' totals */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, pfc_tx, pfc_rx, ecn_marked;
	size_t pfc_tx_ports, ecn_queues;
	json_t *leaf; /* switch name → true, for the switches with a host link */
};

/* Fills d from a summary.json document (which must outlive d). -1: out of memory. */
int rsw_digest_build(const json_t *sum, struct rsw_digest *d);
void rsw_digest_free(struct rsw_digest *d);

/* Whether a run of this many switches is shown in aggregate by default. */
static inline int rsw_digest_at_scale(const struct rsw_digest *d)
{
	return d->zone && d->n_switches > RSW_DIGEST_SCALE_SWITCHES;
}

/* "host → leaf", ...: how a tier is named in tables and on the page. */
const char *rsw_digest_tier_name(unsigned tier);

/* The tier of a link direction between two ends ("host" or "SWITCH|PORT"). */
unsigned rsw_digest_tier_of(const struct rsw_digest *d, const char *from, const char *to);

/* The node of an end: the switch of "SWITCH|PORT", or the host. */
void rsw_digest_node(const char *end, char *out, size_t len);

/* Wire utilization in percent: wire bits (frames + 24 bytes of FCS, preamble and gap) over the
 * window from t0 to t1 plus the largest frame's wire time at this speed. */
double rsw_digest_util_pct(uint64_t t0, uint64_t t1, uint64_t bytes, uint64_t frames,
			   uint64_t speed_mbps);

/* The PFC frames a port object of summary.json sent, all priorities. */
uint64_t rsw_digest_pfc_sent(const json_t *port);

#endif
