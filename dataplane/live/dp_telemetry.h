#ifndef RSW_DP_TELEMETRY_H
#define RSW_DP_TELEMETRY_H

#include "dp_zone.h"

/* Registers the /rocesw/ telemetry commands (dp_telemetry.c) for the switches of z. */
void rsw_dp_telemetry_register(const struct rsw_dp_zone *z);

#endif
