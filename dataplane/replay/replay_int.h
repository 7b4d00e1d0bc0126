/* Replay internals shared by the engine (replay.c), the switches (replay_switch.c) and the hosts
 * (replay_host.c). One thread; time in ns. */
#ifndef RSW_REPLAY_INT_H
#define RSW_REPLAY_INT_H

#include <pcap/pcap.h>
#include <jansson.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "dataplane/tables/ingress.h"
#include "dataplane/tm/pfc.h"
#include "dataplane/tm/shaper.h"
#include "event_heap.h"
#include "replay.h"
#include "replay_part.h"

#define NEVER UINT64_MAX
#define NO_FLOW UINT32_MAX
#define HOST_CTRL_PRIO 8
#define REPLAY_MEM_CLASSES 4 /* packet memory by frame size (replay.c) */

/* A capture being read: the frame held is valid until the next read. */
struct cap_in {
	pcap_t *p;
	const char *path;
	int eof;
	uint64_t t;
	uint32_t len;
	const uint8_t *data;
};

/* The first capture the run could not write (a full disk): it ends the run, and every capture
 * left incomplete is removed. */
struct rp_write_error {
	int err;        /* errno, 0: none */
	char path[4096];
};

/* One output capture: NULL dumper when this port or host is not captured. */
struct rp_cap {
	pcap_dumper_t *d;
	const struct rsw_replay_capture *cfg;
	uint64_t seen;  /* frames offered, for 1-in-N sampling */
	uint64_t bytes; /* bytes written (records and headers) */
	char *iobuf;    /* its stream's buffer (rp_capture_buffer) */
	uint64_t records;
	char *path;
	struct rp_write_error *werr; /* the run's */
};

struct in_flight {
	uint64_t t; /* its last bit reaches the far end */
	struct rte_mbuf *m;
};

/* One direction of a link: a FIFO of frames on the wire. */
struct link_dir {
	struct rsw_topo_end to;
	uint32_t speed_mbps;
	uint64_t delay_ns;
	struct in_flight *q;
	size_t head, n, cap;
	uint64_t last_t;
	int down;                    /* failed: what is put on it is lost */
	uint64_t lost;
};

/* A packet pool of n frames of data_room bytes: in DPDK's memory while it lasts, then in an
 * external heap grown from anonymous memory while the machine has some free (replay_mem.c). */
struct rte_mempool *rp_pool_create(const char *name, unsigned n, uint16_t data_room);

/* A set of a switch's ports (one bit each). */
#define RP_PORT_WORDS ((RSW_MAX_PORTS + 63) / 64)
struct rp_ports {
	uint64_t w[RP_PORT_WORDS];
};

static inline void rp_ports_add(struct rp_ports *s, unsigned p)
{
	s->w[p / 64] |= 1ull << (p % 64);
}

static inline void rp_ports_del(struct rp_ports *s, unsigned p)
{
	s->w[p / 64] &= ~(1ull << (p % 64));
}

static inline int rp_ports_has(const struct rp_ports *s, unsigned p)
{
	return (s->w[p / 64] >> (p % 64)) & 1;
}

/* Removes and returns the lowest port of s, or -1 when s is empty. */
static inline int rp_ports_pop(struct rp_ports *s)
{
	for (unsigned i = 0; i < RP_PORT_WORDS; i++)
		if (s->w[i]) {
			unsigned b = (unsigned)__builtin_ctzll(s->w[i]);
			s->w[i] &= s->w[i] - 1;
			return (int)(i * 64 + b);
		}
	return -1;
}

struct sw_node {
	const char *name;
	const struct rsw_fib *fib;
	struct rsw_tm *tm;
	int capturing;                /* some port's capture is open: out[] is worth reading */
	struct rp_cap out[RSW_MAX_PORTS];
	int tx_link[RSW_MAX_PORTS];   /* link direction a port transmits on, or -1 */
	struct rsw_ingress_ctx ictx; /* RANDOM hash state, and the arrival time for ARS */
	struct rsw_replay_switch_result *res;
	struct rp_ports xoff_ports;   /* ports with an XOFF in force at their peer */
	struct rp_ports dirty_ctrl, dirty_tx; /* ports to poll for PFC / to reschedule after this event */
	struct rp_ports stalled;      /* ports that could not send when woken */
};

struct pending {
	struct pending *next;
	uint64_t t_cap, order;
	uint32_t flow, len;
	uint8_t data[];
};

struct host_node {
	const char *name;
	struct cap_in in;
	int has_in;
	struct rp_cap out;
	int tx_link;
	int att_sw;                  /* switch at the far end of its link (classification) */
	uint16_t att_port;
	uint32_t speed_mbps;
	struct rsw_shaper shaper;
	struct rsw_pause_state pause;
	struct pending *head[HOST_CTRL_PRIO + 1], *tail[HOST_CTRL_PRIO + 1];
	uint64_t n_pending, n_read;
	struct rsw_replay_host_result *res;
};

struct replay {
	const struct rsw_replay_model *model;
	struct rsw_replay_result *res;
	size_t capture_buffer;       /* bytes of each capture stream's buffer */
	struct {                     /* packet memory of one size class: pools added as it fills */
		struct rte_mempool **pool;
		unsigned n, cap;
		unsigned skip; /* frames not to try a new pool for, after one could not be made */
	} mem[REPLAY_MEM_CLASSES];
	int flow_field;              /* mbuf dynamic field: the frame's flow index */
	struct rsw_flow_cache *decided; /* every switch's ingress decisions per flow, or NULL */
	struct rsw_event_heap q;
	uint32_t id_host, id_link, id_port, id_ctrl; /* first entity id of each kind */
	uint32_t id_fault;           /* the failure agenda */
	unsigned next_fault, next_install;
	struct cap_in *in;
	struct sw_node *sw;
	struct host_node *host;
	struct link_dir *link;       /* 2 per link: a->b, b->a */
	FILE *events;
	uint64_t sample_ns, next_sample;
	struct rsw_replay_capture *capture; /* NULL: capture everything */
	const struct rsw_replay_trace *trace; /* --trace, or NULL */
	struct rsw_flow_table flows;
	struct rsw_replay_flow *fl;
	size_t fl_cap;
	uint32_t last_flow;          /* index of the flow rp_flow_index found last */
	int oom;
	char *err;                   /* first read error of a capture, which ends the run */
	size_t errlen;
	int failed;
	struct rp_write_error werr;
	unsigned werr_removed;       /* captures removed as incomplete */
	struct loop *loop;           /* closed-loop hosts running a collective, or NULL */
	struct rp_deadlock *dl;      /* the deadlock detector's graph (replay_deadlock.c) */
	uint64_t dl_next_ns;         /* a PFC frame sent from then on runs the next check */
	unsigned settle_sw;          /* switch and time of the sw_settle running (watchdog log) */
	uint64_t settle_t;
	/* a part of a zone run apart (replay_part.h), or NULL: the whole zone */
	const struct rsw_replay_part *part;
	uint64_t wake_t;             /* the wake-up being run, and the event-log lines it wrote: */
	uint32_t wake_id, wake_lines; /* the key of its lines in a part */
	uint32_t wake_n;             /* flow look-ups and hops in it (rsw_replay_order) */
	uint32_t fault_steps;        /* steps of the failure agenda's wake-up (replay_fault.c) */
	const struct rsw_replay_opts *opts;
	uint64_t n_events;
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

static inline uint32_t *frame_flow(const struct replay *r, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, r->flow_field, uint32_t *);
}

/* replay.c */
/* Reads the next frame of a capture; on a read error ends it and fails the run with the reason. */
void rp_cap_next(struct replay *r, struct cap_in *in);
uint32_t rp_flow_index(struct replay *r, const struct rsw_pkt_meta *m);
void rp_flow_enter(struct replay *r, uint32_t flow, uint64_t t, uint32_t len);
void rp_flow_leave(struct replay *r, uint32_t flow, uint64_t done_ns);
void rp_link_send(struct replay *r, int dir, uint64_t t_start, struct rte_mbuf *m);
/* A frame of len put on link direction dir at t_start with no packet memory to carry it: it
 * counts as dropped (no_mbuf) at the far end, so no frame goes unaccounted. */
void rp_link_lost(struct replay *r, int dir, uint64_t t_start, uint32_t len);
/* A frame of flow in new packet memory (NULL when there is none): a copy of data, or with
 * roce_sparse, of a frame known to be zero outside its first RSW_ROCE_HDR_MAX bytes and its
 * ICRC (as the closed-loop hosts build them): only those bytes are written. */
struct rte_mbuf *rp_mbuf(struct replay *r, const uint8_t *data, uint32_t len, uint32_t flow,
			 int roce_sparse);
#define RP_ROOM_PRIV 8 /* a packet buffer's private area: what rp_mbuf left in its data room */
/* Records a frame that departs at t in capture c, as c's settings select (window, sampling,
 * filter, snap length). */
void rp_write(struct rp_cap *c, uint64_t t, const uint8_t *data, uint32_t len);
void rp_schedule(struct replay *r, uint32_t id, uint64_t t);
void rp_event(struct replay *r, uint64_t t, const char *kind, const char *node_key,
	      const char *node, const char *port, json_t *fields);
void rp_event_pfc(struct replay *r, uint64_t t, const char *kind, const char *node_key,
		  const char *node, const char *port, uint8_t enable, const uint16_t time[8]);

/* replay_deadlock.c */
/* Looks for a cycle of paused queues each waiting on the next, at t; reports each held for the
 * hold time once (result, event log) and marks the end of those no longer found. */
void rp_deadlock_check(struct replay *r, uint64_t t);
void rp_deadlock_free(struct replay *r);
/* A PFC frame was sent at t: a check, if the last one is older than an eighth of the hold time. */
static inline void rp_deadlock_poke(struct replay *r, uint64_t t)
{
	if (t >= r->dl_next_ns)
		rp_deadlock_check(r, t);
}

/* replay_fault.c */
void rp_fault_start(struct replay *r);
void rp_fault_due(struct replay *r, uint64_t t);

/* replay_switch.c */
void sw_arrive(struct replay *r, unsigned s, uint16_t port, uint64_t t, struct rte_mbuf *m,
	       int entering);
/* A frame that reached port but found no packet memory: received, then dropped as no_mbuf. */
void sw_lost(struct replay *r, unsigned s, uint16_t port, uint64_t t, uint32_t len);
/* The TM's flushed callback (arg: the replay): a packet its watchdog flushed, dropped and
 * logged as pfcwd_drop by the switch of the sw_settle running. */
void sw_flushed(void *arg, uint16_t port, struct rte_mbuf *m);
void sw_service(struct replay *r, unsigned s, uint16_t port, uint64_t t);
void sw_settle(struct replay *r, unsigned s, uint64_t t);
void sw_sample(struct replay *r, unsigned s, uint64_t t);

/* replay_host.c */
void host_wake(struct replay *r, unsigned h, uint64_t t);
void host_rx(struct replay *r, unsigned h, uint64_t t, struct rte_mbuf *m);
void host_finish(struct replay *r, unsigned h, uint64_t end_ns);
void host_free_pending(struct host_node *hn);
/* The flow (index in the run's flow table) of a frame host h sends, NO_FLOW if not IP. */
uint32_t host_flow(struct replay *r, unsigned h, const uint8_t *data, uint32_t len);
/* Host h puts a frame of flow on its link at t (lost: an injected drop, it never arrives). */
void host_send(struct replay *r, unsigned h, uint64_t t, const uint8_t *data, uint32_t len,
	       uint32_t flow, int lost, int roce_sparse);

/* replay_loop.c: closed-loop hosts */
int loop_init(struct replay *r, char *err, size_t errlen);
void loop_start(struct replay *r);
void loop_wake(struct replay *r, unsigned h, uint64_t t);
/* A frame reached host h (m: its parse): the collective's frames drive its QPs. Returns 1 if
 * it was one. */
int loop_rx(struct replay *r, unsigned h, uint64_t t, const uint8_t *data,
	    const struct rsw_pkt_meta *m);
void loop_finish(struct replay *r);
void loop_free(struct replay *r);

#endif
