/* The traffic manager: VOQs, shared buffer, scheduler, shaper, ECN, PFC generation and honouring,
 * watchdog, wired together for a switch (REFERENCE §2-§3). One instance per switch; it reads its
 * settings from its own part of the published tables (struct rsw_tm_config, tm_cfg.h) and keeps
 * its own state.
 *
 * Threads: any worker enqueues (VOQs are multi-producer rings, buffer counters atomics, when
 * there are several workers; single-producer rings and plain adds for one), the workers of an
 * ingress port's RX queues among them; each egress port is dequeued, and its PFC frames
 * generated and honoured, by one worker: the port's owner. Time comes from the caller in ns (clock.h), so replay runs this code on virtual time. */
#ifndef RSW_TM_H
#define RSW_TM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/pkt_meta.h"
#include "pfc.h"
#include "pfcwd.h"
#include "sched.h"
#include "shaper.h"
#include "tm_cfg.h"
#include "tm_region.h"

#define RSW_TM_DEQ_BURST 16 /* packets taken off a VOQ at a time */
/* Live: packets the mbuf pool provides per port for what the TM holds (dp_ports.c); the TM's
 * descriptor pool is that less the packet headroom of the lossless PGs. */
#define RSW_TM_DESC_PER_PORT 4096u

/* What the TM keeps with a queued packet, 8 bytes in the mbuf's RX hash field: it is in the
 * mbuf's first cache line, which TX touches anyway (a dynamic field would be in the second, a
 * cache miss at enqueue and at dequeue). The length is the mbuf's pkt_len. */
struct rsw_tm_tag {
	uint16_t in_port;
	uint16_t l3_off;
	uint8_t pg;
	uint8_t queue;
	uint8_t l3;
	uint8_t marked; /* CE set by this switch */
};

/* Per-queue counters with SAI's meaning (SAI_QUEUE_STAT_*). */
struct rsw_tm_queue_stats {
	uint64_t packets, bytes;          /* transmitted */
	uint64_t dropped_packets, dropped_bytes;
	uint64_t ecn_marked_packets;      /* WRED_ECN_MARKED_PACKETS */
	uint64_t pfcwd_dropped;           /* refused at admission during a storm (drop action) */
	uint64_t pfcwd_flushed;           /* queued packets discarded when a storm was detected */
	uint64_t pfcwd_flushed_lossless;  /* of them, packets of a lossless PG */
};

/* What admission and dequeue read and write of one ingress (port, PG) and one egress (port, queue),
 * a cache line each: a queue's VOQ, buffer counters and transmit counters are read and written
 * together at its every enqueue and dequeue, so they share one line. */
struct rsw_tm_pg_hot {
	struct rsw_buf_use use;
	/* packets its headroom may hold (live: fixed when the VOQs were sized) */
	uint32_t hdrm_pkts_max;
	/* the port's xoff_pgs is not 0 (set with it by the owner): the check after an admission
	 * reads this line, which admission read, not the port's first */
	uint8_t port_xoff;
} __rte_cache_aligned;

/* A VOQ: live, a fixed multi-producer ring sized so that the descriptor accounting never lets it
 * overflow (in the port's cold record: the owner takes bursts of it into its cache there);
 * replay, a FIFO of the packets themselves (one thread), linked through their mbufs' next
 * pointer, NULL again once a packet leaves it: it never runs out of room, and a packet's slot is
 * not one more cache line to touch, at enqueue and again at dequeue. */
struct rsw_tm_queue {
	struct rte_mbuf *first, *last; /* replay's VOQ */
	uint32_t n;
	/* from here on, its state and counters (what a run's parts exchange: replay_mpi.c) */
	uint8_t storm;            /* wd[q].storm, for admission, which reads this line anyway */
	struct rsw_buf_count use;
	uint64_t packets, bytes;  /* transmitted (SAI_QUEUE_STAT_PACKETS, _BYTES) */
} __rte_cache_aligned;
_Static_assert(sizeof(struct rsw_tm_queue) == RTE_CACHE_LINE_SIZE, "a queue in one line");

/* The rest of a queue's counters (struct rsw_tm_queue_stats), which only drops and marks move. */
struct rsw_tm_queue_drops {
	uint64_t dropped_packets, dropped_bytes;
	uint64_t ecn_marked_packets; /* WRED_ECN_MARKED_PACKETS */
	uint64_t pfcwd_dropped;
	uint64_t pfcwd_flushed;
	uint64_t pfcwd_flushed_lossless;
};

/* What only some events of a port read or write: the owner's dequeue cache (live; replay's list
 * VOQs are read in place), drop counters, PFC generation and watchdog state. Kept apart from the
 * port's record so that the lines every hop reads lie on fewer pages. */
struct rsw_tm_port_cold {
	/* live: each queue's VOQ ring (NULL: replay's VOQs are lists, in struct rsw_tm_queue),
	 * and the packets taken off it in bursts, waiting for the scheduler (owner only) */
	struct rte_ring *ring[RSW_TM_QUEUES];
	struct rte_mbuf *cache[RSW_TM_QUEUES][RSW_TM_DEQ_BURST];
	struct rsw_tm_queue_drops qd[RSW_TM_QUEUES];
	struct rsw_pfc_gen gen[RSW_TM_PGS];
	struct rsw_pfcwd wd[RSW_TM_QUEUES];
};

/* A port's state: what every event of the port reads first, in its first cache line (queues
 * marked busy, the owner's cache indexes, the shaper, whether anything is paused), the scheduler
 * in the next, then per PG and per queue; the rest in its cold record. At zone scale each line a
 * hop touches is a cache miss, and each page a TLB miss (docs/performance.md). */
struct rsw_tm_port {
	/* queues that may hold packets: set by producers after enqueueing, cleared by the owner
	 * only after it saw the ring empty, so the owner never polls empty rings */
	uint8_t busy;
	uint8_t sched_ready;
	uint8_t xoff_pgs;                     /* PGs with an XOFF in force (gen[].xoff) */
	uint8_t wd_ignore;                    /* queues whose received PFC the watchdog ignores */
	uint32_t cached; /* how many in all, for other threads (rsw_tm_queued), set by the owner */
	uint8_t c_head[RSW_TM_QUEUES], c_n[RSW_TM_QUEUES];
	struct rsw_shaper shaper;
	/* received pauses (owner): its latest_until_ns ends the first line, until_ns[] the next */
	struct rsw_pause_state pause;
	/* owner-only state */
	struct rsw_sched sched __rte_cache_aligned;
	uint64_t rng;                         /* ECN on dequeue (egress owner) */
	uint64_t rng_in;                      /* ECN on enqueue (ingress owner) */
	uint64_t next_wd_poll_ns;
	struct rsw_tm_pg_hot pg[RSW_TM_PGS];      /* as ingress port */
	struct rsw_tm_queue q[RSW_TM_QUEUES]; /* as egress port */
	struct rsw_tm_port_cold *cold;
} __rte_cache_aligned;
_Static_assert(offsetof(struct rsw_tm_port, pause.latest_until_ns) < RTE_CACHE_LINE_SIZE,
	       "a port's first line says whether anything is paused");
_Static_assert(sizeof(struct rsw_sched) <= RTE_CACHE_LINE_SIZE, "the scheduler in one line");

struct rsw_tm {
	uint16_t n_ports;
	int mt;                            /* several workers enqueue: atomic counters, MP rings */
	struct rsw_buf_desc desc;          /* packet descriptors (size 0: not limited) */
	uint32_t voq_slots;                /* live: packets a VOQ ring holds (0: replay's lists) */
	uint64_t pool_used[RSW_BUF_POOLS]; /* shared bytes in use per pool (atomic) */
	uint64_t pool_peak[RSW_BUF_POOLS];
	uint64_t pool_hdrm[RSW_BUF_POOLS]; /* bytes in each pool's shared headroom pool (atomic) */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	/* the watchdog's drop action hands each packet it flushes from a storming queue here
	 * (released from the buffer; the callee frees it), so a caller counts it as it counts the
	 * packets it refuses at admission; NULL: freed and counted in pfcwd_flushed only. Called
	 * from rsw_tm_watchdog, with log_arg. */
	void (*flushed)(void *arg, uint16_t port, struct rte_mbuf *m);
	/* Where port records are made, in the order ports are first used: replay makes only the
	 * ports traffic reaches, so a switch whose ring uses 3 of its 32 ports touches 3 records;
	 * live makes every port at creation, in port order. */
	struct rsw_tm_region *region;
	struct rsw_tm_port_seed *seed; /* what each port's record starts with */
	uint64_t ecn_seed, shaper_burst_ns;
	struct rsw_tm_port *port[]; /* NULL until first used: rsw_tm_port_use, rsw_tm_port_read */
};

/* A port's settings its record starts with (copied from the settings at creation: replay's
 * tables may be replaced before a port is first used, the record keeps what it began with). */
struct rsw_tm_port_seed {
	uint32_t hdrm_pkts_max[RSW_TM_PGS];
	uint32_t shaper_mbps; /* 0: unshaped */
};

/* What a port that was never used reads as: nothing queued, paused, counted or stormed. */
extern const struct rsw_tm_port rsw_tm_port_idle;
struct rsw_tm_port *rsw_tm_port_make(struct rsw_tm *tm, uint16_t port);

/* Port's record to change, made on first use. */
static inline struct rsw_tm_port *rsw_tm_port_use(struct rsw_tm *tm, uint16_t port)
{
	struct rsw_tm_port *tp = tm->port[port];
	return __builtin_expect(tp != NULL, 1) ? tp : rsw_tm_port_make(tm, port);
}

/* Port's record to read: a port never used reads as idle, and is not made by being read. */
static inline const struct rsw_tm_port *rsw_tm_port_read(const struct rsw_tm *tm, uint16_t port)
{
	const struct rsw_tm_port *tp = tm->port[port];
	return __builtin_expect(tp != NULL, 1) ? tp : &rsw_tm_port_idle;
}

/* A live TM for n_ports ports fed by `producers` threads; shaper_burst_ns is how late a
 * backlogged port may catch up (live polling slack). name makes the ring names unique. Packets
 * are limited by descriptors (rsw_tm_live_desc): with the headrooms' packets the TM holds at most
 * n_ports × RSW_TM_DESC_PER_PORT packets, which each VOQ ring can take and the mbuf pool
 * provides, so neither ever refuses a packet the buffer admitted. */
struct rsw_tm *rsw_tm_new(const char *name, uint16_t n_ports, unsigned producers,
			  const struct rsw_tm_config *tc, uint64_t shaper_burst_ns, char *err,
			  size_t errlen);
/* Replay's TM: one thread, VOQs that grow, packets limited by bytes only. Its WRED random source
 * is seeded from tc's ECN seed, here; later calls may pass any settings rsw_tm_config_same as
 * tc. Its port records come from region, which must have room for n_ports more (NULL: a region
 * of its own). */
struct rsw_tm *rsw_tm_new_growing(uint16_t n_ports, const struct rsw_tm_config *tc,
				  uint64_t shaper_burst_ns, struct rsw_tm_region *region,
				  char *err, size_t errlen);
/* Live descriptor pool of n_ports ports: n_ports × RSW_TM_DESC_PER_PORT less the packet headroom
 * of every lossless PG of tc (at least 256 a port). */
uint64_t rsw_tm_live_desc(const struct rsw_tm_config *tc, uint16_t n_ports);
/* With budget packets of memory for the TM instead of n_ports × RSW_TM_DESC_PER_PORT (a zone's
 * in-memory link ports get less than device ports): the most packets it can then hold, its
 * descriptors, its lossless headrooms' packets and a burst per producer that concurrent
 * admissions may overshoot by. rsw_tm_live_limit applies the budget to a live TM (before any
 * traffic; its VOQ rings, sized for more, stay). */
uint64_t rsw_tm_live_hold(const struct rsw_tm_config *tc, uint16_t n_ports, unsigned producers,
			  uint64_t budget);
void rsw_tm_live_limit(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint64_t budget);
/* Frees the TM and every packet still queued. */
void rsw_tm_free(struct rsw_tm *tm);

static inline struct rsw_tm_tag *rsw_tm_tag(struct rte_mbuf *m)
{
	_Static_assert(sizeof(struct rsw_tm_tag) == sizeof(m->hash), "tag fits the hash field");
	return (struct rsw_tm_tag *)(void *)&m->hash;
}

/* Admission of one routed packet (meta from ingress, already rewritten). Returns 0 with the tag
 * filled and the buffer charged, or the drop reason (the caller frees and counts it). */
unsigned rsw_tm_admit(struct rsw_tm *tm, const struct rsw_tm_config *tc, struct rte_mbuf *m,
		      const struct rsw_pkt_meta *meta);
/* Prefetches what rsw_tm_admit will read for meta: run over a burst before admitting it, so the
 * (cold) settings and counters of its queues arrive together instead of one miss per packet. */
static inline void rsw_tm_prefetch_at(const struct rsw_tm *tm, const struct rsw_tm_config *tc,
				      uint16_t egress, unsigned q, uint16_t in_port, unsigned pg)
{
	rte_prefetch0(&tc->queue_hot[egress][q & 7]);
	rte_prefetch0(&tc->pg_hot[in_port][pg & 7]);
	if (tm->port[egress]) /* not made yet: nothing to fetch ahead */
		rte_prefetch0(&tm->port[egress]->q[q & 7]);
	if (tm->port[in_port])
		rte_prefetch0(&tm->port[in_port]->pg[pg & 7]);
}

static inline void rsw_tm_prefetch(const struct rsw_tm *tm, const struct rsw_tm_config *tc,
				   const struct rsw_pkt_meta *meta)
{
	rsw_tm_prefetch_at(tm, tc, meta->egress_port, meta->tc, meta->in_port, meta->pg);
}

/* Admission of n packets of one bin: same ingress port and PG, same egress port and queue.
 * verdict[i] is 0 (admitted) or the drop reason; returns how many were admitted. Same decisions
 * as rsw_tm_admit one by one, but a bin that fits is charged once. */
unsigned rsw_tm_admit_bin(struct rsw_tm *tm, const struct rsw_tm_config *tc, struct rte_mbuf **pkts,
			  const struct rsw_pkt_meta *const *meta, unsigned n, uint8_t *verdict);
/* Puts admitted packets, all for one (egress port, queue), on their VOQ. Returns how many went
 * in; the rest were released from the buffer and must be dropped as voq_full by the caller. */
unsigned rsw_tm_enqueue_burst(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			      uint8_t queue, struct rte_mbuf **pkts, unsigned n);

/* Egress: up to max packets the scheduler and shaper let port send at now, ECN-marked on
 * dequeue, released from the buffer. The caller transmits them (and keeps what the device
 * refuses: it has left the TM). */
unsigned rsw_tm_dequeue(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			uint64_t now_ns, struct rte_mbuf **out, unsigned max);

/* A PFC or PAUSE frame received on port (meta from the parser), seen at now, arrived since
 * arrived_after_ns (live: the previous RX poll of the port; replay: now). */
void rsw_tm_pause_rx(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
		     const struct rsw_pkt_meta *meta, uint64_t arrived_after_ns, uint64_t now_ns);

/* PFC generation for port as an ingress port: 1 with the frame's class-enable vector and times
 * when a frame is due now (XOFF, refresh or XON for any of its lossless PGs). */
int rsw_tm_pfc_due(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
		   uint64_t now_ns, uint8_t *class_enable, uint16_t time[8]);

/* Whether port's PFC generation may act after its PG pg admitted a packet: an XOFF in force on
 * the port (refresh, XON), or pg now over its XOFF point. XOFF is decided as a packet is admitted
 * to its PG, as the MMU does; a PG that did not grow cannot cross it. */
int rsw_tm_pfc_may_act(const struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
		       unsigned pg);

/* When port next has time-driven control work, for a caller that sleeps between events (replay):
 * an XOFF refresh, or a watchdog poll while one of its queues is paused or in a storm.
 * UINT64_MAX if none. */
uint64_t rsw_tm_ctrl_next(const struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			  uint64_t now_ns);

/* Watchdog poll of port's queues when its poll interval has passed; applies actions and logs
 * detection and restoration. Packets flushed by the drop action are freed and counted; returns
 * how many were. */
uint64_t rsw_tm_watchdog(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			 uint64_t now_ns);

/* Bit q set when byte q of d (eight queues' cache head ^ count) is not zero. */
static inline uint8_t rsw_tm_byte_mask(uint64_t d)
{
	if (!d) /* nothing cached: always so for a list VOQ, which is read in place */
		return 0;
	d |= d >> 4;
	d |= d >> 2;
	d |= d >> 1;
	d &= 0x0101010101010101ull;
	return (uint8_t)((d * 0x0102040810204080ull) >> 56);
}

/* Queues of port that may hold packets (a superset of those that do): marked busy by producers,
 * or with packets taken into the owner's cache. Owner only. */
static inline uint8_t rsw_tm_maybe_queued(const struct rsw_tm *tm, uint16_t port)
{
	const struct rsw_tm_port *tp = rsw_tm_port_read(tm, port);
	_Static_assert(sizeof(tp->c_head) == sizeof(uint64_t), "eight queues' cache indexes");
	uint64_t c_head, c_n;
	memcpy(&c_head, tp->c_head, sizeof(c_head));
	memcpy(&c_n, tp->c_n, sizeof(c_n));
	return __atomic_load_n(&tp->busy, __ATOMIC_RELAXED) | rsw_tm_byte_mask(c_head ^ c_n);
}

/* Is the packet's class lossless (its ingress PG takes part in PFC)? */
static inline int rsw_tm_lossless(const struct rsw_tm_config *tc, const struct rsw_pkt_meta *meta)
{
	return tc->pools.n_pools && meta->in_port < tc->n_ports &&
	       tc->pg_hot[meta->in_port][meta->pg & 7].prof.lossless;
}

/* The invariant of lossless classes (docs/tm.md): the only drops of their packets in the TM are
 * headroom overflows (the headroom was too small for what the link had in flight) and the
 * watchdog's drop action; a ring, a descriptor or packet memory never drops them. */
static inline int rsw_tm_lossless_drop_allowed(unsigned reason)
{
	return reason == RSW_DROP_HEADROOM_OVERFLOW || reason == RSW_DROP_PFCWD_DROP;
}

/* SONiC's watchdog counters of (port, queue), indexed as rsw_pfcwd_stat_names. */
void rsw_tm_pfcwd_stats(const struct rsw_tm *tm, uint16_t port, unsigned queue,
			uint64_t out[RSW_PFCWD_STATS]);


/* One port's statistics as another thread than its owner reads them (the control socket, the
 * stats, DPDK's telemetry): each value loaded atomically, so none is torn; not a snapshot of all
 * of them at one instant. */
struct rsw_tm_port_stats {
	struct rsw_tm_queue_stats qs[RSW_TM_QUEUES];
	uint64_t q_peak[RSW_TM_QUEUES], q_bytes[RSW_TM_QUEUES];      /* bytes */
	uint64_t wd_detected[RSW_TM_QUEUES], wd_restored[RSW_TM_QUEUES];
	uint64_t pg_peak[RSW_TM_PGS], pg_dropped[RSW_TM_PGS];
	/* now: bytes (shared and reserved), headroom bytes, packets outside headroom */
	uint64_t pg_bytes[RSW_TM_PGS], pg_hdrm[RSW_TM_PGS], pg_pkts[RSW_TM_PGS];
	uint8_t xoff_pgs; /* PGs with an XOFF in force (bit = PG) */
	uint8_t paused;   /* priorities paused at now (received PFC or an injected storm) */
	uint64_t pfc_tx[RSW_TM_PGS], xoff[RSW_TM_PGS], xon[RSW_TM_PGS]; /* per PG = priority */
	uint64_t pfc_rx[RSW_PFC_PRIOS], paused_ns[RSW_PFC_PRIOS];
};
void rsw_tm_port_stats(const struct rsw_tm *tm, uint16_t port, uint64_t now_ns,
		       struct rsw_tm_port_stats *s);
/* Packets queued in the TM (for the conservation check). */
uint64_t rsw_tm_queued(const struct rsw_tm *tm);
/* Bytes queued on (port, queue). */
uint64_t rsw_tm_queue_bytes(const struct rsw_tm *tm, uint16_t port, unsigned queue);
/* Calls fn on each packet queued on (port, q), oldest first, until fn returns non-zero; returns
 * how many it was called on. A live ring is read by another thread than its owner without being
 * taken from: exact for a paused queue, a snapshot otherwise (tm_walk.c). */
unsigned rsw_tm_queue_walk(const struct rsw_tm *tm, uint16_t port, unsigned q,
			   int (*fn)(void *arg, struct rte_mbuf *m), void *arg);

/* Bytes port has transmitted since it started, and bytes queued on it now, over its queues
 * (what ARS samples for a port's quality, docs/ars.md). */
void rsw_tm_port_bytes(const struct rsw_tm *tm, uint16_t port, uint64_t *sent, uint64_t *queued);

#endif
