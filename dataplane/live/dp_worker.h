#ifndef RSW_DP_WORKER_H
#define RSW_DP_WORKER_H

#include <rte_rcu_qsbr.h>

#include "dp_ctx.h"

struct rsw_dp_trace;

/* What a worker polls: RX queue `queue` of port of switch dp; with tx set it also owns the
 * port's egress (its traffic-manager queues, PFC, TX): the worker of the port's queue 0. */
struct rsw_dp_item {
	struct rsw_dp *dp;
	uint16_t port;
	uint16_t queue;
	uint8_t tx;
};

/* One worker lcore and the ports it owns, of one switch or of several switches of a zone. */
struct rsw_dp_lcore {
	unsigned index;            /* worker index: RCU thread id, counters dp->workers[index] */
	unsigned lcore;
	int *stop;                 /* set once (atomic): drain and return */
	struct rte_rcu_qsbr *qsbr; /* shared by every switch of the process */
	unsigned n_items;
	struct rsw_dp_item *items;
	uint64_t idle_max_ns;      /* longest back-off sleep; 0: never sleep (spin) */
	struct rsw_dp_trace *trace; /* `trace add`: this worker's buffer (dp_trace.h) */
	/* written by the worker, read by anyone (relaxed) */
	uint64_t rounds, sleeps, slept_ns;
};

/* Back-off of a worker with nothing to do: after this many empty rounds it pauses (rte_pause)
 * between rounds, then, if none of its ports holds a frame, sleeps from RSW_DP_IDLE_MIN_NS,
 * doubling up to idle_max_ns, until a round does some work (docs/dataplane.md). */
#define RSW_DP_IDLE_SPIN 256u
#define RSW_DP_IDLE_MIN_NS 1000u
#define RSW_DP_IDLE_MAX_NS 50000u /* default of idle_max_ns */

/* lcore entry: arg is a struct rsw_dp_lcore. */
int rsw_dp_worker_main(void *arg);

#endif
