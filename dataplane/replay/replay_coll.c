/* Closed-loop hosts: the ranks of a collective run as NCCL runs them (docs/replay.md,
 * "Closed-loop hosts"). A transfer (a chunk from one rank to another) is posted when every chunk
 * it depends on has arrived, as messages on its connection's RC QPs (replay_rc.c, the transport
 * both ends run); with CTS admission the receiver grants each connection a window of chunks. */
#include <stdlib.h>
#include <string.h>

#include "replay_coll.h"
#include "replay_engine.h"
#include "replay_node.h"
#include "replay_rc.h"

/* A transfer: one chunk from rank src to rank dst. */
struct xfer {
	uint16_t src, dst;
	uint32_t step;
	uint64_t bytes;
	int32_t dep[2];        /* transfers that must have arrived at src first, -1: none */
	uint8_t waiting;       /* of those, not arrived yet */
	uint8_t ready;         /* nothing to wait for: posted once those before it on its
				* connection are */
	uint32_t parts_left;   /* messages of it not yet arrived */
	uint32_t conn;         /* its connection */
	uint32_t seq;          /* its place among the connection's transfers */
	uint32_t next_dep;     /* head of the list of transfers waiting for this one (+1), 0: none */
	uint32_t dep_link[2];  /* next in the lists this one is on (+1) */
};

/* A connection: the QPs from one host to another (QPs qp0 .. qp0 + qps of the transport), and
 * the transfers on it. */
struct conn {
	uint16_t src, dst;
	uint32_t qp0;
	uint32_t x0;           /* its transfers in order: cx[x0 .. x0 + n_xfers) */
	uint32_t n_xfers, posted, arrived;
	uint32_t cts_sent;     /* chunks its receiver granted */
	uint32_t rr;           /* next QP for round-robin placement */
};

/* A host of the zone: its rank. */
struct coll_host {
	int rank;              /* -1: not in the collective */
};

struct rp_coll {
	const struct rsw_coll *c;
	struct xfer *x;
	uint32_t n_x;
	struct conn *conn;
	uint32_t n_conn;
	int32_t *conn_of;      /* by src host * n_host + dst host: connection, -1 */
	uint32_t *cx;          /* transfers by connection, in the algorithm's order */
	struct coll_host *h;
	unsigned n_host;
	uint32_t arrived;
	struct rp_rc *rc;      /* the connections' QPs */
};

/* ---- building the collective ---- */

/* The collective's transfers (collective.c), each with the state it runs with here. */
static int build_xfers(struct rp_coll *L)
{
	struct rsw_coll_xfer *cx;
	uint32_t n;
	if (rsw_coll_xfers(L->c, &cx, &n) < 0)
		return -1;
	L->x = calloc(n ? n : 1, sizeof(*L->x));
	if (!L->x) {
		free(cx);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct xfer *x = &L->x[i];
		x->src = cx[i].src;
		x->dst = cx[i].dst;
		x->step = cx[i].step;
		x->bytes = cx[i].bytes;
		x->dep[0] = cx[i].dep[0];
		x->dep[1] = cx[i].dep[1];
	}
	L->n_x = n;
	free(cx);
	return 0;
}

/* Connections in order of first use; each transfer's dependency lists. */
static int build_conns(struct rp_coll *L)
{
	const struct rsw_coll *c = L->c;
	unsigned nh = L->n_host;
	L->conn_of = malloc((size_t)nh * nh * sizeof(*L->conn_of));
	L->conn = calloc(L->n_x ? L->n_x : 1, sizeof(*L->conn));
	if (!L->conn_of || !L->conn)
		return -1;
	for (size_t i = 0; i < (size_t)nh * nh; i++)
		L->conn_of[i] = -1;
	for (uint32_t i = 0; i < L->n_x; i++) {
		struct xfer *x = &L->x[i];
		unsigned sh = c->rank_host[x->src], dh = c->rank_host[x->dst];
		int32_t *ci = &L->conn_of[(size_t)sh * nh + dh];
		if (*ci < 0) {
			*ci = (int32_t)L->n_conn;
			L->conn[L->n_conn] = (struct conn){.src = (uint16_t)sh, .dst = (uint16_t)dh,
							  .qp0 = L->n_conn * c->qps};
			L->n_conn++;
		}
		struct conn *cn = &L->conn[*ci];
		x->conn = (uint32_t)*ci;
		x->seq = cn->n_xfers++;
		for (unsigned k = 0; k < 2; k++)
			if (x->dep[k] >= 0) {
				struct xfer *d = &L->x[x->dep[k]];
				x->dep_link[k] = d->next_dep;
				d->next_dep = (i + 1) << 1 | k; /* which of its links continues the list */
				x->waiting++;
			}
	}
	L->cx = malloc((L->n_x ? L->n_x : 1) * sizeof(*L->cx));
	if (!L->cx)
		return -1;
	for (uint32_t k = 0, off = 0; k < L->n_conn; k++) {
		L->conn[k].x0 = off;
		off += L->conn[k].n_xfers;
	}
	for (uint32_t i = 0; i < L->n_x; i++)
		L->cx[L->conn[L->x[i].conn].x0 + L->x[i].seq] = i;
	return 0;
}

/* ---- the collective's progress ---- */

static void ready(struct replay *r, uint32_t xi);

/* Transfer xi arrived whole at t: its step may be done, and what waited for it may start. */
static void arrived(struct replay *r, uint32_t xi, uint64_t t)
{
	struct rp_coll *L = r->coll;
	struct rsw_coll_result *cr = r->res->coll;
	struct xfer *x = &L->x[xi];
	struct conn *cn = &L->conn[x->conn];
	cn->arrived++;
	L->arrived++;
	if (t > cr->step_done_ns[x->step])
		cr->step_done_ns[x->step] = t;
	if (t > cr->done_ns)
		cr->done_ns = t;
	/* the receiver grants the connection's next chunk */
	if (L->c->cts_window && cn->cts_sent < cn->n_xfers) {
		cn->cts_sent++;
		rp_rc_cts(L->rc, x->conn);
	}
	for (uint32_t d = x->next_dep; d;) {
		uint32_t yi = (d >> 1) - 1;
		struct xfer *y = &L->x[yi];
		d = y->dep_link[d & 1];
		if (--y->waiting == 0)
			ready(r, yi);
	}
}

/* A message of transfer xi arrived whole (the transport's rp_rc_done_fn). */
static void message_done(struct replay *r, uint32_t xi, uint64_t t)
{
	if (--r->coll->x[xi].parts_left == 0)
		arrived(r, xi, t);
}

/* Transfer xi goes on the connection's QPs as its messages. */
static void post(struct replay *r, uint32_t xi)
{
	struct rp_coll *L = r->coll;
	const struct rsw_coll *c = L->c;
	struct xfer *x = &L->x[xi];
	struct conn *cn = &L->conn[x->conn];
	cn->posted++;
	if (c->split) {
		for (unsigned k = 0; k < c->qps; k++) {
			uint64_t b = x->bytes / c->qps + (k < x->bytes % c->qps);
			if (!b)
				continue;
			if (rp_rc_post(L->rc, cn->qp0 + k, xi, x->seq, b) < 0)
				return;
			x->parts_left++;
		}
	} else {
		if (rp_rc_post(L->rc, cn->qp0 + cn->rr++ % c->qps, xi, x->seq, x->bytes) < 0)
			return;
		x->parts_left = 1;
	}
}

/* Transfer xi's dependencies arrived. A connection's transfers are posted in the algorithm's
 * order (loop, then step), as a rank's kernel runs them one after the other: one that is ready
 * early waits for those before it, so the QPs and the receiver's CTS grants see one order. */
static void ready(struct replay *r, uint32_t xi)
{
	struct rp_coll *L = r->coll;
	struct conn *cn = &L->conn[L->x[xi].conn];
	L->x[xi].ready = 1;
	while (cn->posted < cn->n_xfers && L->x[L->cx[cn->x0 + cn->posted]].ready)
		post(r, L->cx[cn->x0 + cn->posted]);
}

/* ---- the hosts ---- */

static void coll_wake(struct replay *r, unsigned h, uint64_t t)
{
	rp_rc_wake(r->coll->rc, h, t);
}

/* A frame reached host h at t: the collective's frames drive its QPs, and may let it send. */
static void coll_rx(struct replay *r, unsigned h, uint64_t t, const uint8_t *data,
		    const struct rsw_pkt_meta *m)
{
	if (rp_rc_rx(r->coll->rc, h, t, data, m))
		rp_rc_wake(r->coll->rc, h, t);
}

const struct rp_host_ops rp_coll_ops = {.wake = coll_wake, .rx = coll_rx};

/* ---- set-up and results ---- */

/* The transport of the connections: their QPs and the results' counters of them. */
static int build_rc(struct replay *r, struct rp_coll *L, struct rsw_coll_result *cr)
{
	struct rp_rc_conn *ends = malloc((L->n_conn ? L->n_conn : 1) * sizeof(*ends));
	uint32_t n_qp = L->n_conn * L->c->qps;
	cr->qp = calloc(n_qp ? n_qp : 1, sizeof(*cr->qp));
	if (!ends || !cr->qp) {
		free(ends);
		return -1;
	}
	cr->n_qps = n_qp;
	for (uint32_t k = 0; k < L->n_conn; k++)
		ends[k] = (struct rp_rc_conn){.src = L->conn[k].src, .dst = L->conn[k].dst};
	L->rc = rp_rc_new(r, L->c, ends, L->n_conn, L->conn_of, cr->qp, message_done);
	free(ends);
	return L->rc ? 0 : -1;
}

/* Each rank's host: one rank a host, every rank's host with a link. */
static int place_ranks(struct replay *r, struct rp_coll *L, char *err, size_t errlen)
{
	const struct rsw_coll *c = L->c;
	for (unsigned h = 0; h < L->n_host; h++)
		L->h[h].rank = -1;
	for (unsigned i = 0; i < c->n_ranks; i++) {
		if (c->rank_host[i] >= L->n_host || L->h[c->rank_host[i]].rank >= 0) {
			snprintf(err, errlen, "collective: rank %u: bad or repeated host %u", i,
				 c->rank_host[i]);
			return -1;
		}
		L->h[c->rank_host[i]].rank = (int)i;
		if (r->host[c->rank_host[i]].tx_link < 0) {
			snprintf(err, errlen, "collective: host %s has no link",
				 r->host[c->rank_host[i]].name);
			return -1;
		}
	}
	return 0;
}

int rp_coll_init(struct replay *r, char *err, size_t errlen)
{
	const struct rsw_coll *c = r->model->coll;
	struct rp_coll *L = calloc(1, sizeof(*L));
	struct rsw_coll_result *cr = calloc(1, sizeof(*cr));
	r->coll = L;
	r->res->coll = cr;
	if (!L || !cr)
		goto oom;
	L->c = c;
	L->n_host = r->model->n_host;
	L->h = calloc(L->n_host, sizeof(*L->h));
	if (!L->h)
		goto oom;
	if (place_ranks(r, L, err, errlen) < 0)
		return -1;
	cr->n_steps = rsw_coll_n_steps(c);
	cr->step_done_ns = calloc(cr->n_steps ? cr->n_steps : 1, sizeof(*cr->step_done_ns));
	if (!cr->step_done_ns)
		goto oom;
	if (build_xfers(L) < 0 || build_conns(L) < 0 || build_rc(r, L, cr) < 0)
		goto oom;
	switch (c->pattern) {
	case RSW_COLL_ALL_TO_ALL: cr->bytes = c->message; break;
	case RSW_COLL_INCAST: cr->bytes = c->message * (c->n_ranks - 1); break;
	default: cr->bytes = c->message; break;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* At t = 0 every transfer with nothing to wait for is posted, and with CTS admission every
 * receiver grants each incoming connection its first window. */
void rp_coll_start(struct replay *r)
{
	struct rp_coll *L = r->coll;
	for (uint32_t i = 0; i < L->n_x; i++)
		if (!L->x[i].waiting)
			ready(r, i);
	/* a receiver whose sender is held by another part (replay_part.h) knows the messages to
	 * expect, as the sender posts them in the algorithm's order: all of them, up front */
	for (uint32_t k = 0; r->part && k < L->n_conn; k++) {
		struct conn *cn = &L->conn[k];
		if (rp_host_here(r, cn->src) || !rp_host_here(r, cn->dst))
			continue;
		while (cn->posted < cn->n_xfers)
			post(r, L->cx[cn->x0 + cn->posted]);
	}
	for (uint32_t k = 0; L->c->cts_window && k < L->n_conn; k++) {
		struct conn *cn = &L->conn[k];
		if (!rp_host_here(r, cn->dst)) /* its receiver's part grants it */
			continue;
		while (cn->cts_sent < cn->n_xfers && cn->cts_sent < L->c->cts_window) {
			cn->cts_sent++;
			rp_rc_cts(L->rc, k);
		}
	}
	for (unsigned h = 0; h < L->n_host; h++)
		if (L->h[h].rank >= 0 && rp_host_here(r, h))
			rp_schedule(r, r->id_host + h, 0);
}

void rp_coll_finish(struct replay *r)
{
	struct rp_coll *L = r->coll;
	struct rsw_coll_result *cr = r->res->coll;
	cr->complete = L->arrived == L->n_x;
	cr->transfers = L->n_x;
	cr->arrived = L->arrived;
	for (unsigned h = 0; h < L->n_host; h++)
		r->res->host[h].unsent += rp_rc_unsent(L->rc, h);
}

void rp_coll_free(struct replay *r)
{
	struct rp_coll *L = r->coll;
	if (!L)
		return;
	rp_rc_free(L->rc);
	free(L->conn);
	free(L->conn_of);
	free(L->cx);
	free(L->x);
	free(L->h);
	free(L);
	r->coll = NULL;
}
