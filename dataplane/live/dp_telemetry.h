#ifndef RSW_DP_TELEMETRY_H
#define RSW_DP_TELEMETRY_H

#include "dp_ctx.h"

/* Registers the /rocesw/ telemetry commands (dp_telemetry.c) for dp. */
void rsw_dp_telemetry_register(struct rsw_dp *dp);

#endif
