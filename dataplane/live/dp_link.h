/* An in-memory link between two switches of a zone run live: one direction is a single-producer,
 * single-consumer rte_ring from the owner of the sending port to the owner of the receiving port.
 * No kernel and no device: the sender stamps each frame with when its last bit reaches the far end
 * (it starts when the wire is free, takes its serialization time at the link's speed, then the
 * propagation delay: the model of docs/replay.md's links), and the receiver takes frames off in
 * order once that time has come. PFC frames travel like any frame. */
#ifndef RSW_DP_LINK_H
#define RSW_DP_LINK_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/tm/shaper.h"

/* Frames on the wire and waiting at the far end. Data takes at most RSW_DP_LINK_DATA of the
 * ring's slots (then it waits in the sender's pending buffer and queues, as for a device whose TX
 * ring is full); the rest is kept for MAC control (PFC) and the main lcore's frames, so a link
 * full of data never refuses a PFC frame. The packet memory is sized for a full ring (dp_zone.c). */
#define RSW_DP_LINK_RING 1024u
#define RSW_DP_LINK_DATA 768u
#define RSW_DP_LINK_HELD 32u   /* frames taken off the ring, not yet due */
/* Frames one direction of a link can hold: the packet memory a zone reserves for it. */
#define RSW_DP_LINK_FRAMES (RSW_DP_LINK_RING - 1u + RSW_DP_LINK_HELD)

struct rsw_dp_link {
	struct rte_ring *ring;
	uint32_t speed_mbps;
	uint64_t delay_ns;
	/* sender side (owner of the transmitting port) */
	struct rsw_shaper wire;
	uint64_t last_due;
	uint64_t frames, bytes;
	uint64_t pfc_frames; /* of them, PFC frames */
	/* receiver side (owner of the receiving port), on its own cache line */
	struct rte_mbuf *held[RSW_DP_LINK_HELD] __rte_cache_aligned;
	uint16_t h_head, h_n;
	uint64_t due_head; /* when held[h_head] is due, for the receiver's idle decisions */
} __rte_cache_aligned;

/* Creates the ring (name unique in the process). Returns -1 with a message. */
int rsw_dp_link_init(struct rsw_dp_link *l, const char *name, uint32_t speed_mbps,
		     uint64_t delay_ns, char *err, size_t errlen);
/* What a frame handed to a link is: data, the main lcore's frames (ARP/ND) or PFC. The last
 * two may use the slots data leaves free; PFC frames are counted apart. */
enum rsw_dp_link_kind { RSW_DP_LINK_TX_DATA, RSW_DP_LINK_TX_CTL, RSW_DP_LINK_TX_PFC };
/* Puts up to n frames of one kind on the wire at now; returns how many it took (the rest wait,
 * as for a device whose TX ring is full). */
uint16_t rsw_dp_link_tx(struct rsw_dp_link *l, struct rte_mbuf **m, uint16_t n, uint64_t now,
			enum rsw_dp_link_kind kind);
/* Frames whose last bit has arrived by now, in order, up to max. */
uint16_t rsw_dp_link_rx(struct rsw_dp_link *l, struct rte_mbuf **m, uint16_t max, uint64_t now);
/* Frames on the wire or waiting at the far end (exact once both ends stopped). */
uint64_t rsw_dp_link_in_flight(const struct rsw_dp_link *l);
/* Frees the ring and what it still carries; returns how many frames that was. */
uint64_t rsw_dp_link_free(struct rsw_dp_link *l);

#endif
