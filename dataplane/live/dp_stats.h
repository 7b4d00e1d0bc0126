#ifndef RSW_DP_STATS_H
#define RSW_DP_STATS_H

#include <stdio.h>

#include <jansson.h>

#include "dp_ctx.h"

struct rsw_dp_totals {
	struct rsw_dp_counters c;  /* summed over workers */
	uint64_t received, transmitted, dropped, consumed, queued;
};

void rsw_dp_stats_sum(const struct rsw_dp *dp, struct rsw_dp_totals *t, uint64_t queued);
/* Packets the switch holds: in the traffic manager, or released to a port the device has not
 * taken yet (read from any thread; exact once the workers stopped). */
uint64_t rsw_dp_queued(const struct rsw_dp *dp);
/* One line per port with rx/tx packets per second since prev. */
void rsw_dp_stats_print_rates(const struct rsw_dp *dp, const struct rsw_dp_totals *now,
			      const struct rsw_dp_totals *prev, double seconds, FILE *f);
/* Final counters, readable. */
void rsw_dp_stats_print_final(const struct rsw_dp *dp, const struct rsw_dp_totals *t, FILE *f);
/* The counters as one JSON document (docs/dataplane.md): ports with their TM counters, drops,
 * ECMP groups, conservation. */
json_t *rsw_dp_stats_json(const struct rsw_dp *dp, const struct rsw_dp_totals *t);

/* Traffic-manager counters (dp_stats_tm.c). */
uint64_t rsw_dp_stats_tm_flushed(const struct rsw_dp *dp, uint64_t *lossless);
void rsw_dp_stats_tm_json(const struct rsw_dp *dp, const struct rsw_dp_totals *t, unsigned port,
			  json_t *port_obj, uint64_t now_ns);
void rsw_dp_stats_tm_print(const struct rsw_dp *dp, const struct rsw_dp_totals *t, FILE *f,
			   uint64_t now_ns);

#endif
