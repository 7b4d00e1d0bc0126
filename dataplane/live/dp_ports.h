#ifndef RSW_DP_PORTS_H
#define RSW_DP_PORTS_H

#include <stddef.h>

#include "dp_ctx.h"

/* Packet memory for n_mbufs frames of up to max_mtu bytes, in one segment each. NULL with a
 * message. */
struct rte_mempool *rsw_dp_pool_create(const char *name, unsigned n_mbufs, uint32_t max_mtu,
				       char *err, size_t errlen);
/* How many frames a switch's ports need: n_eth DPDK ports, n_other links or unconnected ports. */
unsigned rsw_dp_pool_mbufs(unsigned n_eth, unsigned n_other);
/* Probe every RSW_DP_PORT_ETH port from its devargs and start it on dp->pool (set by the
 * caller, as are the ports' kinds and owners). Returns -1 with a message naming the port. */
int rsw_dp_ports_start(struct rsw_dp *dp, char *err, size_t errlen);
/* Stop and close the ports; frees what is left in the egress rings and returns how many packets
 * that was (they count as queued at the end). */
uint64_t rsw_dp_ports_stop(struct rsw_dp *dp);

#endif
