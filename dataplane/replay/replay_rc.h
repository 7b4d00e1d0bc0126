/* RC transport between closed-loop hosts (replay_rc.c): the QPs of a collective's connections,
 * both ends, as a NIC runs them, and each host's sending of their frames. The collective
 * (replay_coll.c) posts messages on them and hears of each message that arrived whole; it never
 * reads a QP. */
#ifndef RSW_REPLAY_RC_H
#define RSW_REPLAY_RC_H

#include <stdint.h>

#include "collective.h"

struct replay;
struct rsw_pkt_meta;
struct rp_rc;

/* A connection: the QPs (collective.h's qps of them) from host src to host dst. */
struct rp_rc_conn {
	uint16_t src, dst;
};

/* Which connection joins two hosts: a key (src << 16 | dst) per connection, sorted, so that a
 * lookup costs a search over the connections, not a hosts x hosts table (16,384 hosts: 1 GB). */
struct rp_conn_key {
	uint32_t hosts;
	uint32_t conn;
};
struct rp_conn_map {
	struct rp_conn_key *k;
	uint32_t n;
};
/* The map of n_conn connections. Returns 0, -1 out of memory, or -2 when two join the same
 * hosts (*dup: the first of them). */
int rp_conn_map_build(struct rp_conn_map *m, const struct rp_rc_conn *conn, uint32_t n_conn,
		      uint32_t *dup);
/* The connection from host src to host dst, or -1. */
int32_t rp_conn_find(const struct rp_conn_map *m, unsigned src, unsigned dst);

/* A message of transfer xfer arrived whole at its receiver at t. */
typedef void rp_rc_done_fn(struct replay *r, uint32_t xfer, uint64_t t);

/* The QPs of n_conn connections (QP k * qps + q is QP q of connection k), their counters in st
 * (n_conn * qps of them); map: which connection joins two hosts (kept, not copied). NULL out of
 * memory. */
struct rp_rc *rp_rc_new(struct replay *r, const struct rsw_coll *c, const struct rp_rc_conn *conn,
			uint32_t n_conn, const struct rp_conn_map *map,
			struct rsw_coll_qp_stats *st, rp_rc_done_fn *done);
/* The counts the QPs keep in their own lines, into their results (struct rsw_coll_qp_stats): at
 * the end of the run, before the results are read. */
void rp_rc_fold(struct rp_rc *rc);
void rp_rc_free(struct rp_rc *rc);

/* Posts bytes of transfer xfer on QP qp as one message; seq: the transfer's place among its
 * connection's, which CTS grants count. Returns 0, or -1 out of memory (the run marked). */
int rp_rc_post(struct rp_rc *rc, uint32_t qp, uint32_t xfer, uint32_t seq, uint64_t bytes);
/* The receiver of connection conn grants it one more chunk: a CTS frame. */
void rp_rc_cts(struct rp_rc *rc, uint32_t conn);

/* A RoCE frame reached host h at t (m: its parse). Returns 1 if it was one of the QPs'. */
int rp_rc_rx(struct rp_rc *rc, unsigned h, uint64_t t, const uint8_t *data,
	     const struct rsw_pkt_meta *m);
/* Host h's wake-up at t: its QPs' timers due, then, if its link is free and a frame may go, its
 * next frame (control frames first, then data from its QPs in turn); it wakes again when its
 * link frees, a pause ends, a timer fires or a rate limiter lets a packet go. */
void rp_rc_wake(struct rp_rc *rc, unsigned h, uint64_t t);
/* Control frames host h still had to send. */
uint64_t rp_rc_unsent(const struct rp_rc *rc, unsigned h);

#endif
