/* What `rocesw replay` reports: summary.json and the readable summary on stdout. */
#ifndef RSW_REPLAY_SUMMARY_H
#define RSW_REPLAY_SUMMARY_H

#include <stdio.h>

#include <jansson.h>

#include "dataplane/replay/replay.h"
#include "dataplane/config/zone.h"

/* The wire time (with FCS, preamble and gap) of the largest frame a replay carries (9216 bytes,
 * docs/replay.md): what a utilization window adds after the last frame started to leave. */
static inline double rsw_replay_last_frame_ns(uint64_t speed_mbps)
{
	return speed_mbps ? (9216.0 + 24.0) * 8e3 / (double)speed_mbps : 0;
}

/* summary.json: for one switch (not zone) the switch's ports, drops and conservation at the top
 * level; for a zone, switches[], hosts[] and links[] and the zone's conservation. */
/* coll: the closed-loop collective that ran (its figures under "collective"), or NULL. */
json_t *rsw_replay_summary_json(const struct rsw_zone *z, int zone,
				const struct rsw_replay_result *r, const struct rsw_coll *coll);
/* A line saying that --until cut the run and what was left undone then; nothing otherwise. */
void rsw_replay_cut_print(FILE *f, const struct rsw_replay_result *r, unsigned n_host);
/* The PFC deadlocks found (replay_deadlocks.c): summary.json's `deadlocks`, and a line each. */
json_t *rsw_replay_deadlocks_json(const struct rsw_zone *z, const struct rsw_replay_result *r);
void rsw_replay_deadlocks_print(FILE *f, const struct rsw_zone *z,
				const struct rsw_replay_result *r);
void rsw_replay_summary_print(FILE *f, const struct rsw_zone *z, int zone,
			      const struct rsw_replay_result *r, const struct rsw_coll *coll);

#endif
