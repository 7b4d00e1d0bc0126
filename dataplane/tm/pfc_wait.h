/* The wait-for graph of paused queues, the cycle search shared by replay's deadlock detector
 * (dataplane/replay/replay_deadlock.c) and the live zone's `show pfc deadlock`
 * (dataplane/live/dp_deadlock.c). A node is an egress queue (switch, port, priority) that holds
 * frames, is paused, and whose peer (peer switch, peer port) has that priority's PG over XOFF.
 * Node A waits on node B when B is a paused queue of A's peer switch holding frames that came in
 * through the PG that pauses A (the TM's tag: in_port, pg): A cannot send until that PG drains,
 * and it cannot drain until B sends. A cycle of such nodes never drains by itself (Hu et al.,
 * "Deadlocks in Datacenter Networks", HotNets 2016). The caller knows the topology and the
 * pause state; this file only keeps the nodes, reads their queues' sources and finds cycles. */
#ifndef RSW_PFC_WAIT_H
#define RSW_PFC_WAIT_H

#include <stdint.h>

#include "tm.h"

#define RSW_PFC_WAIT_SRC_MAX 32 /* distinct (in_port, pg) kept per queue; more: waits on all */

struct rsw_pfc_wait_node {
	uint16_t sw, port, peer_sw, peer_port;
	uint8_t prio, all_src, n_src;
	uint16_t src[RSW_PFC_WAIT_SRC_MAX]; /* in_port << 3 | pg of the frames it holds */
};

struct rsw_pfc_wait {
	struct rsw_pfc_wait_node *node;
	unsigned n, cap, n_sw, cur_sw;
	unsigned *first;          /* per switch + 1: its nodes are node[first[s] .. first[s+1]) */
	unsigned *next_j, *stack; /* DFS: successor cursor, path */
	unsigned *cycle;          /* the cycle handed to the caller, lowest member first */
	uint8_t *color;           /* 0 new, 1 on the path, 2 done */
	unsigned work_cap;
};

/* Empties the graph for switches 0 .. n_sw - 1. Nodes are then added in switch order. */
int rsw_pfc_wait_begin(struct rsw_pfc_wait *g, unsigned n_sw);
/* Adds the paused queue (sw, port, prio) whose peer is (peer_sw, peer_port), reading the sources
 * of the frames tm holds on it (rsw_tm_queue_walk). Returns the node, or NULL out of memory. */
struct rsw_pfc_wait_node *rsw_pfc_wait_add(struct rsw_pfc_wait *g, const struct rsw_tm *tm,
					   uint16_t sw, uint16_t port, uint8_t prio,
					   uint16_t peer_sw, uint16_t peer_port);
/* The sources of the frames tm holds on a's queue (a->port, a->prio) into a. */
void rsw_pfc_wait_sources(struct rsw_pfc_wait_node *a, const struct rsw_tm *tm);
/* Adds a copy of a node read elsewhere (by another process, of its own switches); nodes are
 * added in switch order. Returns the node, or NULL out of memory. */
struct rsw_pfc_wait_node *rsw_pfc_wait_put(struct rsw_pfc_wait *g,
					   const struct rsw_pfc_wait_node *a);
/* Calls fn with every cycle a depth-first search closes (one or more per strongly connected set
 * of waits): the node indices in wait order, rotated so that the lowest (switch, port,
 * priority) comes first, which names a cycle once whatever node the search entered it by.
 * Returns 0, -1 out of memory, or fn's first negative return. */
int rsw_pfc_wait_search(struct rsw_pfc_wait *g,
			int (*fn)(void *arg, const unsigned *cycle, unsigned len), void *arg);
void rsw_pfc_wait_free(struct rsw_pfc_wait *g);

#endif
