/* rocesw replay --trace FILTER: the frames a BPF expression (pcap-filter(7), compiled by
 * libpcap for Ethernet) matches as they arrive at a switch are traced through the pipeline,
 * one JSON line per frame and switch in DIR/trace.jsonl (docs/replay.md). */
#ifndef RSW_REPLAY_TRACE_H
#define RSW_REPLAY_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/replay/replay.h"

/* At most this many arrivals are traced: the file says when more matched. */
#define RSW_REPLAY_TRACE_MAX 100000

struct rsw_replay_tracer;

/* Compiles filter and opens DIR/trace.jsonl. Returns the tracer (its hooks in *hooks), or NULL
 * with a message naming the filter's error or the file. */
struct rsw_replay_tracer *rsw_replay_tracer_open(const char *filter, const char *dir,
						 struct rsw_replay_trace *hooks, char *err,
						 size_t errlen);
/* Closes the file (a last line says how many matched beyond the bound) and prints how many
 * frames were traced on out. Returns 0, or -1 with a message when the file could not be written
 * (then removed). out NULL: the run failed, the file is removed. t NULL: nothing. */
int rsw_replay_tracer_close(struct rsw_replay_tracer *t, FILE *out, char *err, size_t errlen);

#endif
