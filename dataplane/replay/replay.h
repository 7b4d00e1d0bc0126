/* Deterministic replay of captures through one switch on virtual time: packets enter at their
 * capture timestamps, run through the same parser, tables and traffic manager as live, and leave
 * each port at the time its shaper lets them, written to a capture per port. Same inputs, config
 * and seed give byte-identical outputs. */
#ifndef RSW_REPLAY_H
#define RSW_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "dataplane/pkt/flow_table.h"
#include "dataplane/tables/switch.h"

struct rsw_replay_input {
	uint16_t port;      /* switch port the capture enters */
	const char *path;
};

struct rsw_replay_port_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t pfc_rx_frames, pause_rx_frames, pfc_tx_frames;
};

/* A flow's life through the switch (dataplane/pkt/flow_table.h keys). */
struct rsw_replay_flow {
	uint64_t first_in_ns;      /* arrival of its first packet */
	uint64_t done_ns;          /* last bit of its last departed packet left */
	uint64_t packets_in, bytes_in, packets_out;
};

struct rsw_replay_result {
	uint64_t end_ns;              /* departure of the last frame */
	uint64_t received, transmitted, dropped, consumed, queued;
	uint64_t drops[64];           /* by enum rsw_drop_reason */
	struct rsw_replay_port_stats port[RSW_MAX_PORTS];
	struct rsw_tm *tm;            /* the TM at the end, for its counters */
	size_t n_flows;
	struct rsw_flow_key *flow_key; /* by flow, in order of first arrival */
	struct rsw_replay_flow *flow;
};

/* Frees what a result holds (the TM and the flows). */
void rsw_replay_result_free(struct rsw_replay_result *res);

struct rsw_replay_opts {
	uint64_t until_ns;   /* 0: run to the end */
	FILE *progress;      /* progress line, or NULL */
	FILE *events;        /* JSON-lines event log, or NULL */
	uint64_t sample_ns;  /* queue-depth sampling period of the event log */
};

/* Replays the inputs through sw (its tables as committed) into out_dir/<port>.pcap. Returns 0, or
 * -1 with a message. */
int rsw_replay_run(struct rsw_switch *sw, const struct rsw_replay_input *in, unsigned n_in,
		   const char *out_dir, const struct rsw_replay_opts *opts,
		   struct rsw_replay_result *res, char *err, size_t errlen);

#endif
