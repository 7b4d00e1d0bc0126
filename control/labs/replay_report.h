/* report.html of a replay: one self-contained page (control/labs/html.h) drawn from the run's
 * summary.json and events.jsonl: overview, topology of a zone, queue depth as steps, link
 * utilization by tier, flows per uplink, PFC pauses by port and priority, ECN marks, flow completion CDF,
 * conservation, and a closed-loop collective's figures. */
#ifndef RSW_REPLAY_REPORT_H
#define RSW_REPLAY_REPORT_H

#include <stddef.h>

#include <jansson.h>

/* Reads DIR/summary.json and DIR/events.jsonl, writes path. Returns -1 with a message. */
int rsw_replay_report(const char *dir, const char *path, char *err, size_t errlen);
/* The same from sum, the summary the run just wrote to DIR/summary.json (not read back: at zone
 * scale it is tens of MB to parse). */
int rsw_replay_report_of(const char *dir, json_t *sum, const char *path, char *err,
			 size_t errlen);

/* The page blocks of one run (new reference), or NULL with a message: "summary", "overview"
 * (table rows), "topology" (zones), "queue", "ecn", "pfc", "util" (array), "flows_uplink"
 * (chart) and "flow_collisions" (table) in zones with uplinks, "fct", "fct_stats",
 * "conservation", "closed_loop" (when summary.json has "collective"). */
json_t *rsw_replay_view(const char *dir, char *err, size_t errlen);
/* The same from sum (borrowed) instead of DIR/summary.json. */
json_t *rsw_replay_view_of(const char *dir, json_t *sum, char *err, size_t errlen);

#endif
