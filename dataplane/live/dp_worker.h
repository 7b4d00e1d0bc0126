#ifndef RSW_DP_WORKER_H
#define RSW_DP_WORKER_H

#include <rte_rcu_qsbr.h>

#include "dp_ctx.h"

/* A port a worker owns: port of switch dp. */
struct rsw_dp_item {
	struct rsw_dp *dp;
	uint16_t port;
};

/* One worker lcore and the ports it owns, of one switch or of several switches of a zone. */
struct rsw_dp_lcore {
	unsigned index;            /* worker index: RCU thread id, counters dp->workers[index] */
	unsigned lcore;
	volatile int *stop;
	struct rte_rcu_qsbr *qsbr; /* shared by every switch of the process */
	unsigned n_items;
	struct rsw_dp_item *items;
};

/* lcore entry: arg is a struct rsw_dp_lcore. */
int rsw_dp_worker_main(void *arg);

#endif
