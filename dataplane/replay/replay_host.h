/* A host's NIC in replay (replay_host.c): what the capture player and the collective's ranks
 * send and receive through, and what the run calls at the end. */
#ifndef RSW_REPLAY_HOST_H
#define RSW_REPLAY_HOST_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/hash/hash_policy.h"

struct replay;
struct host_node;

/* What anyone may read of a frame the hosts built (rsw_roce_build: Ethernet, IPv4, UDP) when its
 * bytes are unread: rp_frame_head's bound, its L4 header being at 34 */
#define RP_BUILT_HEAD (14 + 20 + RSW_UDF_OFFSET_MAX + RSW_UDF_MAX_LEN)

/* Priority (0-7), or HOST_CTRL_PRIO for MAC control frames, and flow of a frame host hn sends;
 * with head, the bytes of it the run reads (rp_frame_head). */
unsigned rp_host_classify(struct replay *r, const struct host_node *hn, const uint8_t *data,
			  uint32_t len, uint32_t *flow, uint32_t *head);
/* The flow (index in the run's flow table) of a frame host h sends, NO_FLOW if not IP. */
uint32_t rp_host_flow(struct replay *r, unsigned h, const uint8_t *data, uint32_t len);
/* A frame leaves host hn at t (its capture records it); lost: it never reaches the far end (a
 * closed-loop test's injected drop), counted as dropped. head, roce_sparse: see rp_mbuf; where:
 * the same bytes in the mapping of hn's capture (rp_cap_mapped), or NULL. */
void rp_host_send_frame(struct replay *r, struct host_node *hn, uint64_t t, const uint8_t *data,
			const uint8_t *where, uint32_t len, uint32_t head, uint32_t flow, int lost,
			int roce_sparse);
void rp_host_send(struct replay *r, unsigned h, uint64_t t, const uint8_t *data, uint32_t len,
		  uint32_t flow, int lost, int roce_sparse);
/* The engine's host ops (struct rp_node_ops): a frame whole at host h at t, and one that found
 * no packet memory. */
void rp_host_rx(struct replay *r, unsigned h, uint64_t t, struct rte_mbuf *m);
void rp_host_lost(struct replay *r, unsigned h, uint64_t t);
void rp_host_finish(struct replay *r, unsigned h, uint64_t end_ns);
void rp_host_free_pending(struct host_node *hn);

#endif
