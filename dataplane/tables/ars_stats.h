/* An ARS group's counters as the front ends report them (`rocesw show ars`, the metrics page,
 * replay's summary.json): one reading and one JSON form, so the three agree. */
#ifndef RSW_ARS_STATS_H
#define RSW_ARS_STATS_H

#include <stdint.h>

#include <jansson.h>

#include "ars.h"

struct rsw_fib;
struct rsw_fib_group;

/* g's counters now, in rsw_ars_stat_names' order (live workers may be adding: atomic reads).
 * 0, or -1 when g is plain ECMP (all zero then). */
int rsw_ars_stats_get(const struct rsw_fib_group *g, uint64_t v[RSW_ARS_STATS]);

/* {"object", "mode", "flowlet_idle_time" (µs), "max_flows", then each counter by its SAI name}
 * for an ARS group; NULL for a plain ECMP group. */
json_t *rsw_ars_group_json(const struct rsw_fib_group *g);

/* [{"group": name, then rsw_ars_group_json's keys}] of every ARS group of fib, or NULL when
 * no group uses ARS (so a summary without ARS stays as it was). */
json_t *rsw_ars_groups_json(const struct rsw_fib *fib);

#endif
