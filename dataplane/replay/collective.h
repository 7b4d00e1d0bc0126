/* A collective run closed loop by a zone's hosts in replay (docs/replay.md, "Closed-loop hosts"):
 * what the ranks exchange (the pattern and its step dependencies), how the NICs carry it (RC QPs
 * with PSNs, coalesced ACKs, go-back-N on a NAK or the retransmission timeout, or receivers that
 * place out-of-order packets), receiver-driven CTS admission and DCQCN as options, and what it
 * measured. */
#ifndef RSW_REPLAY_COLLECTIVE_H
#define RSW_REPLAY_COLLECTIVE_H

#include <stdint.h>

#include "dataplane/transport/rc_reorder.h"

#include "dcqcn.h"

enum rsw_coll_pattern {
	RSW_COLL_RING = 0,       /* ring AllReduce: ReduceScatter then AllGather, 2(N-1) steps */
	RSW_COLL_TREE,           /* binary-tree AllReduce: reduce up, broadcast down */
	RSW_COLL_ALLGATHER,      /* ring AllGather, N-1 steps */
	RSW_COLL_REDUCE_SCATTER, /* ring ReduceScatter, N-1 steps */
	RSW_COLL_ALL_TO_ALL,
	RSW_COLL_INCAST,         /* every rank but the root sends the message to the root */
	RSW_COLL_PATTERNS
};

#define RSW_COLL_MAX_DROPS 16
#define RSW_COLL_MAX_RANKS 16384 /* every host of the largest zone (RSW_ZONE_MAX_HOSTS) */

/* The n-th data frame (0-based, retransmissions included) host `host` puts on its link is lost on
 * the wire: a test's way to see the transport recover. */
struct rsw_coll_drop {
	uint16_t host;
	uint64_t nth;
};

struct rsw_coll {
	unsigned pattern;          /* enum rsw_coll_pattern */
	unsigned n_ranks;
	uint16_t rank_host[RSW_COLL_MAX_RANKS]; /* zone host index of each rank */
	unsigned root;             /* incast: the receiving rank */
	uint64_t message;          /* bytes: each rank's buffer (AllReduce), the whole output
				    * (AllGather) or input (ReduceScatter), what each rank sends to
				    * the others in all (all-to-all), what each sender sends (incast) */
	uint64_t chunk;            /* pipelining unit in bytes: a step's data moves in chunks, the
				    * next step's chunk starts when its own arrived (0: one chunk) */
	unsigned mtu;              /* RoCE payload bytes per packet */
	unsigned qps;              /* QPs per connection */
	int split;                 /* 1: every chunk split evenly over the QPs; 0: chunks round-robin */
	uint32_t fixed_sport;      /* 0: Linux's per-QP UDP source port; else this port on every QP */
	uint8_t dscp, cts_dscp, cnp_dscp;
	uint8_t ip_base[4];        /* host i's address: ip_base + i * ip_stride */
	unsigned ip_stride;
	uint8_t router_mac[6];     /* where hosts send (their switch's gateway MAC) */
	/* RC transport */
	unsigned ack_every;        /* the responder ACKs every this many packets and each message end */
	uint64_t rto_ns;           /* retransmission timeout */
	unsigned retry_cnt;        /* timeouts in a row without progress before the QP errors out */
	int nak;                   /* 1: a PSN gap is answered by a NAK (sequence error) */
	/* receivers that place out-of-order packets (ooo=accept) instead of answering a gap with
	 * a NAK and dropping what follows it (ooo=nak), by zone host index; ooo_set: ooo= given,
	 * the reordering each QP saw is reported */
	uint8_t ooo_accept[RSW_COLL_MAX_RANKS];
	int ooo_set;
	/* receiver-driven admission: chunks granted ahead per connection, 0 = off */
	unsigned cts_window;
	int dcqcn;                 /* 1: responders answer CE with CNPs, requesters run DCQCN */
	struct rsw_dcqcn_params dcqcn_p;
	struct rsw_coll_drop drop[RSW_COLL_MAX_DROPS];
	unsigned n_drop;
	struct rsw_coll_drop ce[RSW_COLL_MAX_DROPS]; /* data frames that leave CE-marked (tests) */
	unsigned n_ce;
};

/* Fills the defaults (ring, 1 MiB, MTU 4096, one QP, split, Linux ports, DSCP 3, CTS/CNP DSCP
 * 48, 10.1.0.1 + 2i, ACK every 16 packets, ConnectX's timeout for local_ack_timeout 14, retry 7,
 * NAK on, CTS off, DCQCN off with the published parameters). */
void rsw_coll_defaults(struct rsw_coll *c);

/* Per QP, one direction: what the sender did and what reached it. */
struct rsw_coll_qp_stats {
	uint16_t host, peer;       /* zone host indexes: sender, receiver */
	uint16_t q;
	uint64_t data_packets, data_bytes;  /* sent, retransmissions included */
	uint64_t retransmitted;    /* data packets sent again (go-back-N) */
	uint64_t timeouts, naks_rx, acks_rx, naks_tx, acks_tx;
	uint64_t cnps_rx, cnps_tx, rate_cuts, cts_rx, cts_tx;
	uint64_t min_rate_mbps;    /* lowest DCQCN rate reached */
	int error;                 /* retry_cnt timeouts in a row: the QP gave up */
	uint64_t error_ns;         /* when it gave up (IBV_WC_RETRY_EXC_ERR) */
	uint64_t unacked_psn;      /* then: its first unacknowledged PSN, of snd_max */
	uint64_t sent_psn;
	/* reordering at the receiver: data packets that arrived past the expected PSN (as
	 * ConnectX's out_of_sequence counts them), the largest such distance, and (ooo=accept)
	 * the most packets and payload bytes held past a gap at once: the reorder buffer needed */
	struct rsw_reorder_counts reorder;
};

struct rsw_coll_result {
	unsigned n_steps;
	uint64_t *step_done_ns;        /* n_steps: when every chunk of step s had arrived */
	uint64_t start_ns, done_ns;    /* first frame sent, last chunk arrived */
	int complete;                  /* every chunk arrived */
	uint64_t transfers, arrived;   /* chunk transfers in all, and those that arrived */
	uint64_t bytes;                /* the collective's size, as NCCL's tests count it */
	uint64_t injected_drops;
	uint64_t n_qps;
	struct rsw_coll_qp_stats *qp;  /* by sender host, peer, QP */
};

/* A transfer: one chunk from rank src to rank dst, posted once the transfers it depends on have
 * arrived at src. */
struct rsw_coll_xfer {
	uint16_t src, dst;     /* ranks */
	uint32_t step;
	uint64_t bytes;
	int64_t dep[2];        /* indexes of earlier transfers, -1: none */
};

/* A collective's transfers come in rounds: round r holds one transfer on each of per_round
 * connections, the same connections (slots) every round, and transfer r * per_round + slot is
 * the algorithm's order (ring and tree as NCCL runs them, pipelined by chunks; all-to-all and
 * incast chunk by chunk). A ring's round is a step of a loop, a tree's a loop, all-to-all's and
 * incast's a chunk. A transfer depends only on transfers of its own or earlier rounds, so a
 * run can make rounds as it reaches them. */
struct rsw_coll_plan {
	uint64_t rounds;
	uint32_t per_round;
	uint64_t loops, chunk; /* the buffer cut into loops of chunk bytes (the last may be less) */
};
void rsw_coll_plan(const struct rsw_coll *c, struct rsw_coll_plan *p);
/* The per_round transfers of round r into out[]; their dep[] index the whole order. */
void rsw_coll_round(const struct rsw_coll *c, const struct rsw_coll_plan *p, uint64_t r,
		    struct rsw_coll_xfer *out);
/* Steps of the pattern: 2(n-1) ring, n-1 allgather/reducescatter, 2 x depth tree, else 1. */
unsigned rsw_coll_n_steps(const struct rsw_coll *c);

/* NCCL's bus-bandwidth factor of a pattern for n ranks (PERFORMANCE.md of nccl-tests):
 * AllReduce 2(n-1)/n, AllGather, ReduceScatter and all-to-all (n-1)/n; incast 1. */
double rsw_coll_busbw_factor(unsigned pattern, unsigned n);
const char *rsw_coll_pattern_name(unsigned pattern);

#endif
