/* Shared-buffer accounting (REFERENCE §3), in bytes, per (ingress port, priority group) and per
 * (egress port, queue), against pools (SONiC BUFFER_POOL) with profiles (BUFFER_PROFILE).
 *
 * A PG or queue first uses its reserved minimum, then shared pool space up to its threshold:
 * dynamic, alpha × (pool size − pool shared use) with alpha = 2^dynamic_th, or static
 * (static_th). A lossless PG past its threshold goes on into its headroom (`xoff` bytes, and with
 * a shared headroom pool no more than the pool has left: SAI_BUFFER_POOL_ATTR_XOFF_SIZE); past
 * that it drops (headroom_overflow: a mis-sized headroom). A lossy PG or queue past its threshold
 * drops. Lossless egress queues are accounted but never drop: their PG's PFC holds the sender.
 * These are the TM's own terms: the config compiler reads SONiC's BUFFER_PROFILE and BUFFER_POOL
 * into them by the switch's vendor convention (docs/tm.md, "Buffer conventions").
 *
 * As the reference MMU (HPCC ns-3 switch-mmu.cc), a departing packet is released from headroom
 * first, then from shared space, then from the reserve. With mt set, counters are updated with
 * atomics (an ingress PG is charged by its port's worker and released by any egress worker);
 * without, by plain adds for a single thread. */
#ifndef RSW_TM_BUFFER_H
#define RSW_TM_BUFFER_H

#include <stdint.h>

#define RSW_BUF_POOLS 4

enum rsw_pool_type { RSW_POOL_INGRESS = 0, RSW_POOL_EGRESS };

struct rsw_buf_pool_cfg {
	uint64_t size;   /* shared space the thresholds divide */
	uint64_t xoff;   /* ingress: shared headroom pool (0: each PG's headroom is its own) */
	uint8_t type;    /* enum rsw_pool_type */
	uint8_t dynamic; /* mode: dynamic (1) or static (0) */
};

struct rsw_buf_profile_cfg {
	uint8_t pool;       /* index */
	uint8_t dynamic;    /* threshold from dynamic_th (1) or static_th (0) */
	uint8_t lossless;   /* has headroom (xoff) and takes part in PFC */
	int8_t dynamic_th;  /* alpha = 2^dynamic_th, -7..7 */
	uint64_t static_th; /* bytes of shared space */
	uint64_t reserved;  /* guaranteed minimum, bytes (SAI RESERVED_BUFFER_SIZE) */
	uint64_t xoff;      /* lossless PG: headroom bytes it may hold (SAI XOFF_TH) */
	uint64_t xon;       /* lossless PG: XON point floor, bytes of shared use */
	uint64_t xon_offset;/* lossless PG: XON point = threshold − xon_offset */
};

/* What an egress queue holds. It takes no headroom and counts its drops with its other
 * counters (tm.h), so three counters say it all, and leave room in the queue's line for its VOQ
 * and transmit counters. */
struct rsw_buf_count {
	uint64_t bytes; /* reserved + shared part */
	uint64_t pkts;  /* packets held */
	uint64_t peak;  /* watermark of bytes */
};

/* Use of one ingress PG. */
struct rsw_buf_use {
	uint64_t bytes;     /* reserved + shared part */
	uint64_t hdrm;      /* headroom part (PG only) */
	uint64_t peak;      /* watermark of bytes + hdrm */
	uint64_t dropped_packets, dropped_bytes;
	uint64_t pkts;      /* packets held outside headroom (descriptors) */
	uint64_t hdrm_pkts; /* packets held in headroom (PG only) */
};

/* Packet descriptors (docs/tm.md, "Packets as well as bytes"): a switch holds a packet in a
 * descriptor (a ring slot, an mbuf) whatever its length, so a PG's packets are accounted against a
 * descriptor pool as its bytes are against a byte pool, with the same threshold rule: alpha ×
 * (size − used) for a dynamic profile, the whole pool for a static one. A lossless PG past either
 * threshold sends XOFF and takes what still arrives into headroom, counted in packets too
 * (rsw_buf_hdrm_pkts). size 0: packets are not limited (replay's queues and packet memory grow). */
struct rsw_buf_desc {
	uint64_t size;      /* shared descriptors */
	uint64_t used;      /* in use outside headroom (atomic with mt) */
};

/* Smallest frame on the wire: 64 bytes with the FCS, plus preamble, SFD and inter-frame gap. */
#define RSW_BUF_MIN_WIRE_FRAME 84u

/* Packets the headroom of a lossless profile must take: its bytes in flight after XOFF arriving
 * as the smallest frames (REFERENCE §2's headroom is wire bytes), plus the frame being received. */
static inline uint64_t rsw_buf_hdrm_pkts(const struct rsw_buf_profile_cfg *p)
{
	return p->lossless ? (p->xoff + RSW_BUF_MIN_WIRE_FRAME - 1) / RSW_BUF_MIN_WIRE_FRAME + 1 : 0;
}

enum rsw_buf_verdict { RSW_BUF_ADMIT = 0, RSW_BUF_HEADROOM, RSW_BUF_DROP };

/* *peak = max(*peak, v), exact when several threads raise it at once: a compare-and-swap only
 * on a new peak (rare once warm), where a load and a store could put back a smaller value. */
static inline void rsw_buf_max(uint64_t *peak, uint64_t v)
{
	uint64_t p = __atomic_load_n(peak, __ATOMIC_RELAXED);
	while (v > p &&
	       !__atomic_compare_exchange_n(peak, &p, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Shared-space threshold of a profile given the pool's current shared use. */
uint64_t rsw_buf_threshold(const struct rsw_buf_profile_cfg *p, const struct rsw_buf_pool_cfg *pool,
			   uint64_t pool_used);

static inline uint64_t rsw_buf_shared(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p)
{
	uint64_t b = __atomic_load_n(&u->bytes, __ATOMIC_RELAXED);
	return b > p->reserved ? b - p->reserved : 0;
}

/* Ingress (PG) admission of one packet of len bytes; charges the PG, the pool and (with d) the
 * descriptors on ADMIT/HEADROOM. d may be NULL or of size 0: packets not limited. hdrm_pkts_max:
 * packets the PG's headroom may hold when d limits packets. pool_hdrm: bytes in the pool's shared
 * headroom pool (charged on HEADROOM; may be NULL when pool->xoff is 0). */
enum rsw_buf_verdict rsw_buf_pg_admit(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
				      const struct rsw_buf_pool_cfg *pool, uint64_t *pool_used,
				      uint32_t len, int mt, struct rsw_buf_desc *d,
				      uint64_t hdrm_pkts_max, uint64_t *pool_hdrm);
/* Egress (queue) check of len bytes, without charging: 1 if it fits or the queue is lossless. */
int rsw_buf_queue_fits(const struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
		       const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used, uint32_t len);
/* Charges n packets of bytes in all to a queue (after rsw_buf_queue_fits or _fits_all), or
 * releases n departing packets of bytes in all (from shared space first, then the reserve). */
void rsw_buf_queue_charge(struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
			  uint64_t *pool_used, uint64_t bytes, unsigned n, int mt);
void rsw_buf_queue_release(struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
			   uint64_t *pool_used, uint64_t bytes, unsigned n, int mt);
/* Bursts: do total bytes arriving together fit (PG: in shared space, without headroom)? Checked
 * against the threshold after all of them, so a yes means each would have been admitted one by
 * one. rsw_buf_charge (PG) and rsw_buf_queue_charge then charge them at once. */
int rsw_buf_pg_fits_all(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used, uint64_t total,
			const struct rsw_buf_desc *d, unsigned n);
int rsw_buf_queue_fits_all(const struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
			   const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			   uint64_t total);
void rsw_buf_charge(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p, uint64_t *pool_used,
		    uint64_t total, int mt);
/* Releases len bytes of a PG's departing packets: headroom first, then shared, then reserved.
 * Returns the headroom bytes released (the caller gives them back to a shared headroom pool). */
uint32_t rsw_buf_release(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 uint64_t *pool_used, uint32_t len, int mt);
/* A PG's packets: n more held outside headroom (charged to d when it limits packets), or n
 * leaving (from headroom first). */
void rsw_buf_pkts_charge(struct rsw_buf_use *u, struct rsw_buf_desc *d, unsigned n, int mt);
void rsw_buf_pkts_release(struct rsw_buf_use *u, struct rsw_buf_desc *d, unsigned n, int mt);
/* Packet threshold of a profile given the descriptors in use (UINT64_MAX: not limited). */
uint64_t rsw_buf_pkts_threshold(const struct rsw_buf_profile_cfg *p, const struct rsw_buf_desc *d);

/* PFC points of a lossless PG at this instant: XOFF when it holds headroom or its bytes or (with
 * d) its packets reach their threshold; XON when it holds no headroom and both are below their
 * XON points (packets: threshold − xon_offset counted in smallest frames). */
int rsw_buf_pg_over_xoff(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			 const struct rsw_buf_desc *d);
int rsw_buf_pg_below_xon(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			 const struct rsw_buf_desc *d);

/* Headroom a lossless PG needs (REFERENCE §2, SONiC dynamic buffer): MTU + the bytes on the cable
 * both ways + the peer's response time (905 quanta at 400G, 394 at 100G, 80 at 25G; linear in
 * speed between and beyond). */
uint64_t rsw_headroom_bytes(uint32_t speed_mbps, uint32_t cable_m, uint32_t mtu);
/* Peer response time in pause quanta for a speed (the table above). */
uint32_t rsw_peer_response_quanta(uint32_t speed_mbps);

#endif
