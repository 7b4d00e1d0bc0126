/* Deterministic replay of captures through one switch or a zone of switches, hosts and links, on
 * virtual time (ns). Switches run the same parser, tables and traffic manager as live; each port
 * serializes at its speed; links add their propagation delay; PFC frames travel over links and
 * pause whatever is at the other end (a switch's egress queues, or a host's next packets of that
 * priority). Same inputs, model and seed give byte-identical outputs. */
#ifndef RSW_REPLAY_H
#define RSW_REPLAY_H

#include <stdint.h>

#include <pcap/pcap.h>
#include <stdio.h>

#include "collective.h"
#include "dataplane/pkt/flow_table.h"
#include "dataplane/tables/switch.h"
#include "dataplane/topo/topo.h"

/* A capture entering a switch port directly: each frame arrives whole at its timestamp. */
struct rsw_replay_input {
	uint16_t sw, port;
	const char *path;
};

enum rsw_fault_kind { RSW_FAULT_LINK = 0, RSW_FAULT_SWITCH };

/* A link (index into link[]) or a switch (index into sw[]) fails or recovers at t. */
struct rsw_replay_fault {
	uint64_t t;
	unsigned kind;       /* enum rsw_fault_kind */
	unsigned idx;
	int up;              /* 1: recovery */
};

/* Table writes a controller commits on switch sw at t (rocesw replay --te-reinstall-ns: TE's
 * routes for the links then down). The model keeps the transaction; replay only commits it. */
struct rsw_replay_install {
	uint64_t t;
	unsigned sw;
	const struct rsw_txn *txn;
	const char *what;    /* for the event log */
};

struct rsw_replay_model {
	const struct rsw_topo_switch *sw;
	unsigned n_sw;
	const struct rsw_topo_host *host;
	unsigned n_host;
	const struct rsw_topo_link *link;
	unsigned n_link;
	const struct rsw_replay_input *in;
	unsigned n_in;
	int zone;              /* outputs DIR/<switch>/<port>.pcap and DIR/<host>.pcap */
	int hosts_ignore_pfc;  /* hosts send at the captured times whatever they receive */
	const struct rsw_coll *coll; /* closed-loop hosts run this collective (no captures) */
	const struct rsw_replay_fault *fault; /* in time order */
	unsigned n_fault;
	const struct rsw_replay_install *install; /* in time order; after faults of the same t */
	unsigned n_install;
};

/* A line each: a switch hop counts on two ports, a line each at zone scale. */
struct __attribute__((aligned(64))) rsw_replay_port_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t pfc_rx_frames, pause_rx_frames, pfc_tx_frames;
};

struct rsw_replay_switch_result {
	uint64_t received, transmitted, dropped, consumed, queued;
	uint64_t drops[64];           /* by enum rsw_drop_reason */
	uint64_t lossless_drops[64];  /* of them, packets of a lossless PG dropped in the TM */
	struct rsw_replay_port_stats port[RSW_MAX_PORTS];
	struct rsw_tm *tm;            /* the TM at the end, for its counters */
};

struct rsw_replay_host_result {
	uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes, pfc_rx_frames;
	uint64_t delayed_packets;     /* left later than captured (paused or link busy) */
	uint64_t max_delay_ns, total_delay_ns;
	uint64_t paused_ns[8];        /* time each priority was paused by received PFC */
	uint64_t unsent;              /* still waiting at the end (--until) */
	uint64_t injected_drops;      /* frames lost on purpose on its link (closed loop) */
};

/* Where something happened in the run: the wake-up (time, entity) and the count of such things
 * within it. Runs of a zone in parts give the same keys as one run, so results merged by key are
 * in one run's order (replay_part.h). */
struct rsw_replay_order {
	uint64_t t;
	uint32_t id, n;
	uint8_t ordered;
};

/* A flow's life: from its first packet entering (a host sending it, or a direct input arriving)
 * to its last packet leaving (received whole by a host, or its last bit out of a switch port with
 * no link). */
struct rsw_replay_flow {
	uint64_t first_in_ns, done_ns;
	uint64_t packets_in, bytes_in, packets_out;
	/* the link directions its frames were put on (index 2 x link + 0 for a→b, 1 for b→a), in
	 * the order first used: its path through the zone, more than one per tier if ECMP moved it */
	struct rsw_replay_hop {
		uint32_t dir;
		uint64_t packets, bytes;
		struct rsw_replay_order first; /* its first frame put on the link */
	} *hop;
	uint32_t n_hop;
	struct rsw_replay_order first;   /* the flow was first seen (ordered: 0 if not here) */
};

/* A cyclic buffer dependency the run held (replay_deadlock.c, docs/replay.md "PFC deadlock"):
 * members in order, each a paused egress queue of a switch whose peer's ingress PG (of the same
 * priority) is over XOFF because of frames queued on the next member. */
struct rsw_replay_deadlock {
	uint64_t formed_ns;           /* the last member's pause began: the cycle was closed */
	uint64_t found_ns;            /* the check that found it held for the hold time */
	uint64_t broken_ns;           /* the first check that no longer found it; 0: held to the
				       * end of the run */
	struct rsw_replay_dl_member {
		uint16_t sw, port;
		uint8_t prio;
		uint64_t frames, bytes; /* queued on it when found */
	} *member;
	unsigned n_member;
	struct rsw_replay_dl_flow {
		uint32_t flow;        /* index in the result's flows */
		struct rsw_flow_key key;
		uint64_t frames;      /* of its frames, queued in the cycle's queues when found */
	} *flow;
	unsigned n_flow;
};

struct rsw_replay_result {
	uint64_t start_ns;            /* the first frame entered */
	uint64_t end_ns;              /* start of the last frame sent anywhere */
	uint64_t cut_ns;              /* --until stopped the run here with events still due (0:
				       * it ran to its end); pauses in force count up to it */
	struct rsw_replay_switch_result *sw;
	struct rsw_replay_host_result *host;
	/* the whole model: every frame put on a wire is delivered, consumed, dropped, queued or
	 * still on a link: entered + generated = delivered + left + consumed + dropped + queued +
	 * in_flight */
	uint64_t entered;             /* frames sent by hosts and direct inputs */
	uint64_t generated;           /* PFC frames sent by switches */
	uint64_t delivered;           /* frames received by hosts */
	uint64_t left;                /* data frames out of switch ports without a link */
	uint64_t consumed, dropped, queued, in_flight;
	size_t n_flows;
	struct rsw_flow_key *flow_key; /* by flow, in order of first arrival */
	struct rsw_replay_flow *flow;
	struct rsw_coll_result *coll; /* closed loop: what the collective did, or NULL */
	uint64_t *link_lost;          /* with faults: per link direction, frames put on it while
				       * it was down (lost, counted in dropped); else NULL */
	struct rsw_replay_deadlock *deadlock; /* PFC deadlocks, in the order found */
	unsigned n_deadlock;
	uint64_t deadlock_hold_ns;    /* how long a cycle was held before it was reported */
	uint64_t queue_sample_ns;     /* the event log's queue-depth sampling period; 0: none */
};

/* Frees what a result holds. */
void rsw_replay_result_free(struct rsw_replay_result *res, unsigned n_sw);

/* A collective's hosts generate their payload (zeros): its captures keep each frame's first
 * bytes by default, every RoCE header (at most 14 + 40 + 8 + 12 + 16 + 4) and a few of the
 * payload, as `tcpdump -s 128` would. */
#define RSW_REPLAY_GENERATED_SNAPLEN 128

/* Which captures replay writes and what goes into them (docs/replay.md, "Captures"). */
struct rsw_replay_capture {
	int off;                 /* no capture files at all */
	const char *const *only; /* NULL, or fnmatch(3) patterns of the names kept: a host, a
				    port of a single switch, or SWITCH|PORT in a zone */
	unsigned n_only;
	uint64_t from_ns, to_ns; /* departure-time window (to_ns 0: no end) */
	uint32_t every;          /* keep 1 frame in N per capture (0, 1: all) */
	uint32_t snaplen;        /* bytes kept of each frame (0: whole frames) */
	uint8_t snaplen_given;   /* --capture-snaplen was given (else a collective's default) */
	const char *filter;      /* a pcap-filter(7) expression, or NULL */
	struct bpf_program prog; /* compiled from filter by rsw_replay_run */
	/* filled in by the run: what was written */
	unsigned files;
	uint64_t bytes;
};

/* replay --trace: which frames arriving at a switch are traced, and where their traces go
 * (the pipeline's records, trace.h). match sees the frame as it arrives, before the pipeline
 * rewrites it; write gets it too. */
struct rsw_trace;
struct rsw_verdict;
struct rsw_fib;
struct rsw_replay_trace {
	int (*match)(void *arg, const uint8_t *frame, uint32_t len);
	void (*write)(void *arg, uint64_t t_ns, const char *sw, const char *port,
		      const struct rsw_fib *fib, const struct rsw_trace *tr,
		      const struct rsw_verdict *v);
	void *arg;
};

struct rsw_replay_opts {
	uint64_t until_ns;   /* 0: run to the end */
	FILE *progress;      /* progress line, or NULL */
	FILE *events;        /* JSON-lines event log, or NULL */
	uint64_t sample_ns;  /* queue-depth sampling period of the event log */
	struct rsw_replay_capture *capture; /* NULL: every port and host captured whole */
	uint64_t deadlock_ns; /* a cyclic buffer dependency held this long is reported (0:
			       * RSW_REPLAY_DEADLOCK_NS) */
	const struct rsw_replay_trace *trace; /* NULL: no frame traced */
	/* where to say how much CPU time (user + system) the process had spent when the first
	 * event ran: its set-up, which a benchmark subtracts from the whole run's; NULL: nowhere */
	FILE *setup_cpu;
};

/* The default hold time of a PFC deadlock before it is reported: 500 us, about six pauses of a
 * 400G port's XOFF (65535 quanta = 83.9 us), so a cycle that PFC's refreshes sustain is told
 * from a transient one that drains as soon as a pause runs out. */
#define RSW_REPLAY_DEADLOCK_NS 500000ull

/* Runs the model, writing the captures into out_dir. Returns 0, or -1 with a message. */
int rsw_replay_run(const struct rsw_replay_model *model, const char *out_dir,
		   const struct rsw_replay_opts *opts, struct rsw_replay_result *res, char *err,
		   size_t errlen);

/* The machine's available memory in bytes (MemAvailable of /proc/meminfo), 0 if unknown: what
 * replay's packet memory may still grow into. */
uint64_t rsw_mem_available(void);

#endif
