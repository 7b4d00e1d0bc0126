/* The nodes of a replay: a switch's and a host's state, which the run builds, the nodes' own
 * files work on and the failure agenda and deadlock detector read. Data only: no node's code. */
#ifndef RSW_REPLAY_NODE_H
#define RSW_REPLAY_NODE_H

#include "dataplane/tables/ingress.h"
#include "dataplane/tm/pfc.h"
#include "dataplane/tm/shaper.h"
#include "replay.h"
#include "replay_capture.h"

#define HOST_CTRL_PRIO 8

/* A set of a switch's ports (one bit each), with a bit for each word that may hold some: the
 * set after an event holds a port or two, and its walk (rp_sw_settle, two or three a hop) then
 * reads one word, not all RP_PORT_WORDS. */
#define RP_PORT_WORDS ((RSW_MAX_PORTS + 63) / 64)
struct rp_ports {
	uint64_t any; /* bit i: w[i] may be non-zero */
	uint64_t w[RP_PORT_WORDS];
};

static inline void rp_ports_add(struct rp_ports *s, unsigned p)
{
	s->w[p / 64] |= 1ull << (p % 64);
	s->any |= 1ull << (p / 64);
}

static inline void rp_ports_del(struct rp_ports *s, unsigned p)
{
	s->w[p / 64] &= ~(1ull << (p % 64));
	if (!s->w[p / 64])
		s->any &= ~(1ull << (p / 64));
}

/* s becomes s | o */
static inline void rp_ports_union(struct rp_ports *s, const struct rp_ports *o)
{
	for (uint64_t a = o->any; a; a &= a - 1)
		s->w[__builtin_ctzll(a)] |= o->w[__builtin_ctzll(a)];
	s->any |= o->any;
}

static inline void rp_ports_clear(struct rp_ports *s)
{
	for (uint64_t a = s->any; a; a &= a - 1)
		s->w[__builtin_ctzll(a)] = 0;
	s->any = 0;
}

static inline int rp_ports_has(const struct rp_ports *s, unsigned p)
{
	return (s->w[p / 64] >> (p % 64)) & 1;
}

/* Where the last frame a port received went: a flow's frames mostly go the same way, so reading
 * ahead for the port's next arrival asks for its flow-cache entry and its egress queue's records
 * before the frame is parsed (a wrong guess costs a few prefetches, never a different run). */
struct rp_rx_hint {
	uint32_t fc_slot, nexthop;
	uint16_t egress; /* UINT16_MAX: none yet */
	uint8_t queue, pg;
};

/* What a hop reads and counts of a switch's port besides its tables and TM, in one line: the
 * link it transmits on, where its last frame went, and its frames and bytes in and out, added to
 * the switch's results at the end (rp_sw_fold) so that a hop writes no line of those. The ports
 * of all switches lie in one array, each switch's sized by its own ports, not 256 ports' worth
 * in every node (docs/performance.md, "the 208-switch hop's pages"). */
struct __rte_cache_aligned rp_sw_port {
	int tx_link; /* link direction the port transmits on, or -1 */
	struct rp_rx_hint rx_hint;
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
};
_Static_assert(sizeof(struct rp_sw_port) == RTE_CACHE_LINE_SIZE, "a port's hop in one line");

struct sw_node {
	const struct rsw_fib *fib;
	const struct rsw_tm_config *tc; /* fib->tm, or the same settings shared (rp_sw_tables) */
	struct rsw_tm *tm;
	struct rp_sw_port *port;      /* fib->n_ports of them */
	int capturing;                /* some port's capture is open: out[] is there to read */
	/* each port's capture (n_ports of them), only when one is open: the node's own fields,
	 * which every hop of it reads, then stay within a few lines */
	struct rp_cap *out;
	struct rsw_ingress_ctx ictx; /* RANDOM hash state, and the arrival time for ARS */
	struct rsw_replay_switch_result *res;
	struct rp_ports xoff_ports;   /* ports with an XOFF in force at their peer */
	struct rp_ports dirty_ctrl, dirty_tx; /* ports to poll for PFC / to reschedule after this event */
	struct rp_ports stalled;      /* ports that could not send when woken */
	const char *name; /* past the four lines every event reads (nodes begin a line each) */
} __rte_cache_aligned;
_Static_assert(offsetof(struct sw_node, name) == 4 * RTE_CACHE_LINE_SIZE,
	       "what every event of a switch reads in four lines");

/* A frame a host's application posted, waiting for its NIC: its bytes where its capture holds
 * them (read in place), or a copy of its own after the struct. */
struct pending {
	struct pending *next;
	uint64_t t_cap, order;
	uint32_t flow, len, head; /* head: the bytes the run reads (rp_frame_head) */
	const uint8_t *data;
	uint64_t at;              /* data's offset in the capture (cap_in.at) */
	uint8_t copy[];
};

/* What a host's wake-up and the sending of its frame read of it come first: its link, its
 * counters' record, its shaper and whether anything pauses it, in the first line (the array is
 * line-aligned); at zone scale each host's lines are misses. */
struct __attribute__((aligned(64))) host_node {
	int tx_link;
	int att_sw;                  /* switch at the far end of its link (classification) */
	uint16_t att_port;
	uint32_t speed_mbps;
	struct rsw_replay_host_result *res;
	struct rsw_shaper shaper;
	struct rsw_pause_state pause;
	struct rp_cap out;
	const char *name;
	struct cap_in in;
	int has_in;
	struct pending *head[HOST_CTRL_PRIO + 1], *tail[HOST_CTRL_PRIO + 1];
	struct pending *spare;       /* sent frames' records without a copy, for the next ones */
	uint64_t n_pending, n_read;
};
_Static_assert(__builtin_offsetof(struct host_node, pause.latest_until_ns) + 8 <= 64,
	       "a host's wake-up reads one line of it, and its capture's");

#endif
