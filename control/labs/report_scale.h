/* report.html's blocks for a zone at scale (more than RSW_DIGEST_SCALE_SWITCHES switches), where a
 * drawing of every host and a bar per link no longer read: heat maps of the fabric (spine x leaf,
 * each direction) and of the racks' host links, the distribution of link utilization per tier
 * (CDF and percentiles), the top-N link directions, and flows per uplink as a histogram. */
#ifndef RSW_REPORT_SCALE_H
#define RSW_REPORT_SCALE_H

#include <jansson.h>

#include "replay_digest.h"

/* The heat maps (an array of "heatmap" blocks) of the zone summarised in d, whose summary.json
 * is sum: "fabric-up" (leaf → spine), "fabric-down" (spine → leaf), "racks" (host links per
 * leaf: the busiest of each rack's links, each direction). */
json_t *rsw_report_heatmaps(const json_t *sum, const struct rsw_digest *d);

/* "util-cdf": per tier, the fraction of link directions at or below each utilization. */
json_t *rsw_report_util_cdf(const struct rsw_digest *d);

/* "util-dist": per tier, directions, idle, min, p50, p90, p99, max, mean (%). */
json_t *rsw_report_util_dist(const struct rsw_digest *d);

/* "util-top": the n link directions with the most bytes. */
json_t *rsw_report_util_top(const struct rsw_digest *d, unsigned n);

/* "flows-uplink" as a histogram: how many uplinks carried 0, 1, 2... flows; flows[i] is the
 * count of uplink i. */
json_t *rsw_report_uplink_hist(const size_t *flows, size_t n);

#endif
