/* The replay engine: one agenda of wake-ups (inputs, hosts, link heads, switch ports, PFC timers,
 * the failure agenda) run in (time, entity) order; links that carry frames with their
 * serialization and propagation delay; flows followed from where they enter to where they leave.
 *
 * This header is what the nodes (switches, hosts, the failure agenda) call: the run's state, the
 * agenda, links and flows, and the services' entry points (packet memory, captures, event log)
 * in the run's terms. The engine calls the nodes only through the ops the run sets
 * (struct rp_node_ops, struct rp_host_ops), so no node's code is below it. */
#ifndef RSW_REPLAY_ENGINE_H
#define RSW_REPLAY_ENGINE_H

#include <rte_mbuf.h>

#include "dataplane/pkt/flow_table.h"
#include "event_heap.h"
#include "replay.h"
#include "replay_capture.h"
#include "replay_log.h"
#include "replay_mem.h"
#include "replay_part.h"

#define NEVER UINT64_MAX
#define NO_FLOW UINT32_MAX

/* One direction of a link: a FIFO of frames on the wire, in one cache line (the array is
 * line-aligned): sending and arriving frames read all of it, at zone scale a miss per line.
 * The FIFO runs through the frames' own tags (rp_frame_tag's wire_next and wire_t), which a hop
 * reads anyway, rather than through an array of its own: a slot of that would be one more line
 * a hop, written at sending and read at arriving. */
struct link_dir {
	struct rsw_topo_end to;
	uint32_t speed_mbps;
	int down;                    /* failed: what is put on it is lost */
	uint64_t delay_ns;
	struct rte_mbuf *first, *last; /* the frames on the wire, first to arrive first */
	uint32_t n;
	uint64_t last_t;
	uint64_t lost;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct link_dir) == 64, "a link direction in one line");

struct replay;
struct rsw_pkt_meta;

/* What the engine runs at a node's wake-up: set by the run when it builds the nodes. */
struct rp_node_ops {
	/* a frame whole at switch s's port at t, from a link; then the switch settles */
	void (*sw_rx)(struct replay *r, unsigned s, uint16_t port, uint64_t t, struct rte_mbuf *m);
	/* a frame of a direct input enters at switch s's port (m NULL: no packet memory held its
	 * len bytes); then the switch settles */
	void (*sw_input)(struct replay *r, unsigned s, uint16_t port, uint64_t t,
			 struct rte_mbuf *m, uint32_t len);
	/* a frame that reached port but found no packet memory: received, then dropped */
	void (*sw_lost)(struct replay *r, unsigned s, uint16_t port, uint64_t t, uint32_t len);
	/* port may send (its wake-up), or its PFC timer fired; then the switch settles */
	void (*sw_tx)(struct replay *r, unsigned s, uint16_t port, uint64_t t);
	void (*sw_ctrl)(struct replay *r, unsigned s, uint16_t port, uint64_t t);
	/* queue-depth samples of every switch at each period start from `from` to `to` */
	void (*sw_sample_all)(struct replay *r, uint64_t from, uint64_t to, uint64_t step);
	/* the PFC deadlock check at t (rp_engine_grid_at) */
	void (*deadlock)(struct replay *r, uint64_t t);
	/* a frame whole at host h at t, from its link */
	void (*host_rx)(struct replay *r, unsigned h, uint64_t t, struct rte_mbuf *m);
	/* a frame that reached host h found no packet memory: dropped (no_mbuf) */
	void (*host_lost)(struct replay *r, unsigned h, uint64_t t);
	/* the failure agenda's wake-up: failures, recoveries and table writes due at t */
	void (*due)(struct replay *r, uint64_t t);
	/* reading ahead (rp_engine_run_one): a frame is to arrive at switch s's port, or port is
	 * to send, in stage + 1 wake-ups (arrivals 2 .. 0, sending 3 .. 0: what one stage asked
	 * for may point to what the next asks for) */
	void (*sw_rx_ahead)(const struct replay *r, unsigned s, uint16_t port, unsigned stage);
	void (*sw_tx_ahead)(const struct replay *r, unsigned s, uint16_t port, unsigned stage);
};

/* What a host runs: a capture player (replay_player.c) or a rank of a collective
 * (replay_coll.c). Its NIC (replay_host.c) is common to both. */
struct rp_host_ops {
	void (*wake)(struct replay *r, unsigned h, uint64_t t);
	/* a data frame reached host h at t (m: its parse); NULL: it is only counted */
	void (*rx)(struct replay *r, unsigned h, uint64_t t, const uint8_t *data,
		   const struct rsw_pkt_meta *m);
};

/* The first links of a flow's path and what it put on each, in one cache line a flow: what a
 * switch hop reads of the flow (flow_hop). Folded into the path's record at the end. */
#define RP_HOT_HOPS 4
struct __attribute__((aligned(64))) rp_flow_hot {
	struct rp_hot_hop {
		uint32_t dir1;     /* link direction + 1, 0: not yet */
		uint32_t packets;  /* its carry goes into the path's record */
		uint32_t bytes;    /* so does this one's */
		/* while reading ahead: the flow-cache slot of the flow's last frame at the switch the
		 * link leads to, where its next frame's decision is (the port's last frame may be
		 * another flow's, on a link many flows share) */
		uint32_t fc_slot;
	} hop[RP_HOT_HOPS];
};

struct replay {
	const struct rsw_replay_model *model;
	struct rsw_replay_result *res;
	const struct rp_node_ops *ops;
	const struct rp_host_ops *host_ops;
	struct rp_mem mem;
	struct rp_captures cap;
	struct rp_log log;
	struct rsw_flow_cache *decided; /* every switch's ingress decisions per flow, or NULL */
	struct rsw_event_heap q;
	uint32_t id_host, id_link, id_port, id_ctrl; /* first entity id of each kind */
	uint32_t id_fault;           /* the failure agenda */
	unsigned next_fault, next_install;
	struct cap_in *in;
	struct sw_node *sw;
	struct rp_sw_port *sw_port;  /* every switch's ports (struct sw_node's port) */
	/* the distinct TM settings of the switches, each one copy (rp_sw_tables) */
	struct rsw_tm_config **tm_cfg;
	unsigned n_tm_cfg;
	struct host_node *host;
	struct link_dir *link;       /* 2 per link: a->b, b->a */
	uint64_t sample_ns, next_sample;
	const struct rsw_replay_trace *trace; /* --trace, or NULL */
	/* how far into a frame anything besides the switches and hosts reads: 0 when no capture
	 * (on any rank) and no trace sees its bytes, a capture's snap length, or UINT32_MAX; a
	 * frame's packet memory holds only what someone reads (rp_frame_head) */
	uint32_t read_to;
	/* one frame's bytes in one piece, for another part, when frames of the hosts' captures
	 * hold their bytes past the headers where they lie in the capture (replay_run.c) */
	uint8_t *linear;
	struct rsw_flow_table flows;
	struct rsw_replay_flow *fl;
	struct rp_flow_hot *fl_hot;  /* by flow, as fl: the first links' counts (flow_hop) */
	size_t fl_cap;
	uint32_t last_flow;          /* index of the flow rp_flow_index found last */
	int oom;
	char *err;                   /* first read error of a capture, which ends the run */
	size_t errlen;
	int failed;
	struct rp_coll *coll;        /* closed-loop hosts running a collective, or NULL */
	struct rp_deadlock *dl;      /* the deadlock detector's graph (replay_deadlock.c) */
	uint64_t dl_step_ns;         /* its grid (rp_engine_grid_at) and the grid's next point */
	uint64_t dl_next_ns;
	uint8_t dl_armed;            /* a PFC frame sent or a watchdog's action since its last */
	uint8_t dl_watching;         /* its last check saw a cycle */
	unsigned settle_sw;          /* switch and time of the settle running (watchdog log) */
	uint64_t settle_t;
	/* a part of a zone run apart (replay_part.h), or NULL: the whole zone */
	const struct rsw_replay_part *part;
	uint64_t wake_t;             /* the wake-up being run */
	uint32_t wake_id;
	uint32_t wake_n;             /* flow look-ups and hops in it (rsw_replay_order) */
	uint32_t fault_steps;        /* steps of the failure agenda's wake-up (replay_fault.c) */
	const struct rsw_replay_opts *opts;
	uint64_t n_events;
	int read_ahead;              /* ask for the next wake-ups' records ahead (replay_run.c) */
};

/* Whether this process holds switch s / host h (always, unless the zone is run in parts). */
static inline int rp_sw_here(const struct replay *r, unsigned s)
{
	return !r->part || r->part->sw_rank[s] == r->part->rank;
}

static inline int rp_host_here(const struct replay *r, unsigned h)
{
	return !r->part || r->part->host_rank[h] == r->part->rank;
}

static inline int rp_end_here(const struct replay *r, const struct rsw_topo_end *e)
{
	return e->sw == RSW_TOPO_HOST ? rp_host_here(r, e->idx) : rp_sw_here(r, (unsigned)e->sw);
}

static inline struct rsw_replay_order rp_order(struct replay *r)
{
	return (struct rsw_replay_order){.t = r->wake_t, .id = r->wake_id, .n = r->wake_n++,
					 .ordered = 1};
}

/* ---- the agenda and links ---- */

/* Entity id wakes at t (replacing its wake-up, if any). */
void rp_schedule(struct replay *r, uint32_t id, uint64_t t);
/* Puts m on link direction dir at t_start: it arrives after its serialization and the link's
 * delay (at another part, if that holds the receiver). */
void rp_link_send(struct replay *r, int dir, uint64_t t_start, struct rte_mbuf *m);
/* A frame of len put on link direction dir at t_start with no packet memory to carry it: it
 * counts as dropped (no_mbuf) at the far end, so no frame goes unaccounted. */
void rp_link_lost(struct replay *r, int dir, uint64_t t_start, uint32_t len);

/* ---- flows ---- */

uint32_t rp_flow_index(struct replay *r, const struct rsw_pkt_meta *m);
void rp_flow_enter(struct replay *r, uint32_t flow, uint64_t t, uint32_t len);
void rp_flow_leave(struct replay *r, uint32_t flow, uint64_t done_ns);
/* The first links' counts into the flows' path records (at the end of the run). */
void rp_flows_fold(struct replay *r);

/* ---- the run's services ---- */

static inline uint32_t *frame_flow(const struct replay *r, struct rte_mbuf *m)
{
	return rp_mbuf_flow(&r->mem, m);
}

/* A frame gone (delivered, dropped, out of the zone): the capture it holds bytes of hears. */
static inline void rp_frame_free(struct replay *r, struct rte_mbuf *m)
{
	const struct rp_rest *x = m ? rp_mbuf_rest(&r->mem, m) : NULL;
	if (x)
		rp_cap_walk_drop(x->owner, x->rest, m->pkt_len - m->data_len);
	rte_pktmbuf_free(m);
}

/* While reading ahead: the flow-cache slot frame m's decision took at the switch its last link
 * led to, for the flow's next frame there (struct rp_flow_hot). */
static inline void rp_flow_fc_seen(struct replay *r, struct rte_mbuf *m, uint32_t slot)
{
	const struct rp_frame_tag *tg = rp_mbuf_tag(&r->mem, m);
	uint32_t k = tg->hops - 1;
	if (tg->flow != NO_FLOW && k < RP_HOT_HOPS)
		r->fl_hot[tg->flow].hop[k].fc_slot = slot;
}

/* Reads the next frame of a capture; on a read error ends it and fails the run with the reason. */
static inline void rp_cap_next(struct replay *r, struct cap_in *in)
{
	if (rp_cap_read(in, r->failed ? NULL : r->err, r->errlen) < 0)
		r->failed = 1;
}

static inline void rp_event(struct replay *r, uint64_t t, const char *kind, const char *node_key,
			    const char *node, const char *port, json_t *fields)
{
	rp_log_event(&r->log, t, kind, node_key, node, port, fields);
}

static inline void rp_event_pfc(struct replay *r, uint64_t t, const char *kind,
				const char *node_key, const char *node, const char *port,
				uint8_t enable, const uint16_t time[8])
{
	rp_log_pfc(&r->log, t, kind, node_key, node, port, enable, time);
}

/* ---- for the run (replay_run.c) ---- */

/* The agenda's entity ids and the agenda. Returns 0, or -1 out of memory. */
int rp_engine_init(struct replay *r);
/* Pops the next wake-up and runs it. */
void rp_engine_run_one(struct replay *r);
/* Queue-depth samples of every period start from the next one not sampled up to t. */
void rp_engine_sample_to(struct replay *r, uint64_t t);
/* The PFC deadlock detector's grid (docs/replay.md, "PFC deadlock"): the point at
 * (r->dl_next_ns), no wake-up at or after it run yet; armed: a PFC frame was sent or a
 * watchdog acted since the last point (in a part: in any part). Unless armed or a cycle was seen
 * at the last check, the points up to upto see what this one sees and are passed; else the
 * period's queue-depth samples (sample), then the check (ops->deadlock), its lines after the
 * samples of its time. In a part, every part calls it alike. Returns 0, -1 out of memory. */
int rp_engine_grid_at(struct replay *r, uint64_t at, int armed, uint64_t upto, int sample);
static inline int rp_engine_failed(const struct replay *r)
{
	return r->failed || r->oom || r->cap.werr.err;
}
/* Frees the agenda, the frames still on links and the flows not handed to the result. */
void rp_engine_free(struct replay *r);

#endif
