/* report.html of a replay: a self-contained page (inline SVG, no script, no network) drawn from
 * the run's summary.json and events.jsonl: queue depth over time of the busiest queues, link
 * utilization, the PFC pause timeline and flow completion times. */
#ifndef RSW_REPLAY_REPORT_H
#define RSW_REPLAY_REPORT_H

#include <stddef.h>

/* Reads DIR/summary.json and DIR/events.jsonl, writes path. Returns -1 with a message. */
int rsw_replay_report(const char *dir, const char *path, char *err, size_t errlen);

#endif
