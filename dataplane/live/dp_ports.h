#ifndef RSW_DP_PORTS_H
#define RSW_DP_PORTS_H

#include <stddef.h>

#include "dp_ctx.h"

/* Probe every configured port from its devargs, create the mbuf pool and the egress rings, and
 * start the ports. Returns -1 with a message naming the port. */
int rsw_dp_ports_start(struct rsw_dp *dp, char *err, size_t errlen);
/* Stop and close the ports; frees what is left in the egress rings and returns how many packets
 * that was (they count as queued at the end). */
uint64_t rsw_dp_ports_stop(struct rsw_dp *dp);

#endif
