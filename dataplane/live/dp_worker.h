#ifndef RSW_DP_WORKER_H
#define RSW_DP_WORKER_H

#include "dp_ctx.h"

/* lcore entry: arg is a struct rsw_dp_worker whose ->index selects the ports it owns. */
int rsw_dp_worker_main(void *arg);
/* Set before launching workers. */
void rsw_dp_worker_bind(struct rsw_dp *dp);

#endif
