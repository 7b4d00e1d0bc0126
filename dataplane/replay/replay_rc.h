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

/* A message of transfer xfer arrived whole at its receiver at t. */
typedef void rp_rc_done_fn(struct replay *r, uint32_t xfer, uint64_t t);

/* The QPs of n_conn connections (QP k * qps + q is QP q of connection k), their counters in st
 * (n_conn * qps of them); conn_of[src * n_host + dst]: the connection from src to dst or -1
 * (kept, not copied). NULL out of memory. */
struct rp_rc *rp_rc_new(struct replay *r, const struct rsw_coll *c, const struct rp_rc_conn *conn,
			uint32_t n_conn, const int32_t *conn_of, struct rsw_coll_qp_stats *st,
			rp_rc_done_fn *done);
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
