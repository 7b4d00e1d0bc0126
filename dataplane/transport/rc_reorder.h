/* What an RC receiver sees of its QPs' PSN order, shared by replay's closed-loop responders
 * (ooo=accept, docs/replay.md "Receivers and reordering") and `rocesw send --receive` on a
 * live host: the packets that arrived past the expected PSN (as ConnectX counts
 * out_of_sequence), the largest such distance, and the PSNs held past a gap until it fills.
 * Data is placed as it arrives, so what is held is only a record; its size is the reorder
 * buffer a NIC that cannot place out of order would need. */
#ifndef RSW_RC_REORDER_H
#define RSW_RC_REORDER_H

#include <stdint.h>

#define RSW_PSN_MASK 0xFFFFFFu

struct rsw_ooo {
	uint16_t *len;        /* by PSN mod cap: payload bytes + 1, 0: not received */
	uint32_t cap;         /* a power of two; every PSN held lies in (epsn, epsn + cap) */
	uint64_t held_pkts, held_bytes;
};

/* A QP's reordering as its receiver counts it. */
struct rsw_reorder_counts {
	uint64_t ooo_packets;          /* data packets that arrived past the expected PSN */
	uint64_t ooo_max_distance;     /* the largest PSN - expected PSN of those */
	uint64_t reorder_max_packets;  /* most packets held past a gap at once */
	uint64_t reorder_max_bytes;    /* ... and their payload bytes */
};

/* Hold psn (> epsn) of len payload bytes (len < 65535). 1: held now, 0: already held (a
 * duplicate), -1: out of memory. */
int rsw_ooo_place(struct rsw_ooo *o, uint64_t epsn, uint64_t psn, uint32_t len);
/* Is psn held? Then it is released (the gap before it filled): 1, else 0. */
int rsw_ooo_take(struct rsw_ooo *o, uint64_t psn);
void rsw_ooo_free(struct rsw_ooo *o);

/* The 64-bit PSN whose low 24 bits are p, nearest to ref. */
uint64_t rsw_psn_unwrap(uint64_t ref, uint32_t p);
/* A data packet with psn past epsn: counted out of order, with its distance. */
void rsw_reorder_seen(struct rsw_reorder_counts *c, uint64_t epsn, uint64_t psn);
/* ... and held (placed) until the gap fills: rsw_ooo_place's result, the buffer maxima kept. */
int rsw_reorder_hold(struct rsw_ooo *o, struct rsw_reorder_counts *c, uint64_t epsn,
		     uint64_t psn, uint32_t len);

/* A receiver that places every packet (an out-of-order-placing NIC) watching one QP: fed each
 * data packet in arrival order, it counts what rsw_reorder_counts says and, apart, the packets
 * of a PSN already received or passed (duplicates, retransmissions). */
struct rsw_psn_observer {
	struct rsw_ooo held;
	struct rsw_reorder_counts c;
	uint64_t epsn;        /* the next PSN expected in order (64-bit, unwrapped) */
	uint64_t packets, bytes, duplicates;
};

/* Starts watching a QP whose first PSN is psn0. */
void rsw_psn_observer_init(struct rsw_psn_observer *q, uint32_t psn0);
/* One data packet of PSN psn (24 bits) and len payload bytes. */
void rsw_psn_observe(struct rsw_psn_observer *q, uint32_t psn, uint32_t len);
void rsw_psn_observer_free(struct rsw_psn_observer *q);

#endif
