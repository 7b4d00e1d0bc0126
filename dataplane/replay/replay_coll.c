/* Closed-loop hosts: the ranks of a collective run as NCCL runs them (docs/replay.md,
 * "Closed-loop hosts"). A transfer (a chunk from one rank to another) is posted when every chunk
 * it depends on has arrived, as messages on its connection's RC QPs (replay_rc.c, the transport
 * both ends run); with CTS admission the receiver grants each connection a window of chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_coll.h"
#include "replay_engine.h"
#include "replay_node.h"
#include "replay_rc.h"

/* A transfer the run holds: one chunk on its connection (the slot of its round). */
struct xfer {
	uint64_t bytes;
	uint32_t step;
	uint32_t parts_left;   /* messages of it not yet arrived */
	uint32_t next_dep;     /* head of the list of transfers waiting for this one (+1), 0: none */
	uint32_t dep_link[2];  /* next in the lists this one is on (+1) */
	uint8_t waiting;       /* transfers it depends on, not arrived yet */
	uint8_t ready;         /* nothing to wait for: posted once those before it on its
				* connection are */
	uint8_t arrived;
};

/* A connection: the QPs from one host to another (QPs qp0 .. qp0 + qps of the transport), one
 * transfer a round. */
struct conn {
	uint16_t src, dst;
	uint32_t qp0;
	uint32_t posted, arrived; /* posted: its next transfer's round */
	uint32_t cts_sent;     /* chunks its receiver granted */
	uint32_t rr;           /* next QP for round-robin placement */
};

/* A host of the zone: its rank. */
struct coll_host {
	int rank;              /* -1: not in the collective */
};

/* The transfers held are the rounds from lo (the oldest with a transfer not arrived) to hi (one
 * past the furthest a connection has reached), in a ring of cap rounds: transfer xi is round
 * xi / per_round, slot xi % per_round. A ring AllReduce's ranks keep to a few rounds of each
 * other, so what is held follows the ranks, not the collective's size (2(N-1) rounds of N). */
struct rp_coll {
	const struct rsw_coll *c;
	struct rsw_coll_plan plan;
	uint32_t n_x;          /* rounds x per_round */
	struct xfer *x;        /* cap rounds of per_round */
	uint32_t *round_arrived; /* by round in the ring: its transfers arrived */
	uint64_t lo, hi, cap;
	uint64_t held_max;     /* the most rounds held at once */
	int starting;          /* rp_coll_start's first pass: ready() is called in order */
	struct rsw_coll_xfer *made; /* a round as the plan makes it */
	struct conn *conn;
	uint32_t n_conn;
	struct rp_conn_map conns; /* which connection joins two hosts */
	struct coll_host *h;
	unsigned n_host;
	uint32_t arrived;
	struct rp_rc *rc;      /* the connections' QPs */
};

/* ---- the transfers held ---- */

static struct xfer *xfer_at(struct rp_coll *L, uint32_t xi)
{
	uint64_t round = xi / L->plan.per_round;
	return &L->x[(round % L->cap) * L->plan.per_round + xi % L->plan.per_round];
}

/* Room for one more round: the ring doubles, rounds keeping their places by round % cap. */
static int grow_rounds(struct rp_coll *L)
{
	uint64_t cap = L->cap ? 2 * L->cap : 4, per = L->plan.per_round;
	struct xfer *x = calloc(cap * per, sizeof(*x));
	uint32_t *ra = calloc(cap, sizeof(*ra));
	if (!x || !ra) {
		free(x);
		free(ra);
		return -1;
	}
	for (uint64_t r = L->lo; r < L->hi; r++) {
		memcpy(&x[(r % cap) * per], &L->x[(r % L->cap) * per], per * sizeof(*x));
		ra[r % cap] = L->round_arrived[r % L->cap];
	}
	free(L->x);
	free(L->round_arrived);
	L->x = x;
	L->round_arrived = ra;
	L->cap = cap;
	return 0;
}

/* Round hi made and held: each transfer waits for those it depends on that have not arrived
 * (below lo every transfer has); out of rp_coll_start's first pass, one with nothing to wait
 * for is ready, as it was made so at the start or when its last dependency arrived. */
static int make_round(struct replay *r)
{
	struct rp_coll *L = r->coll;
	uint32_t per = L->plan.per_round;
	if (L->hi - L->lo == L->cap && grow_rounds(L) < 0)
		return -1;
	uint64_t round = L->hi++;
	if (L->hi - L->lo > L->held_max)
		L->held_max = L->hi - L->lo;
	rsw_coll_round(L->c, &L->plan, round, L->made);
	L->round_arrived[round % L->cap] = 0;
	struct xfer *row = &L->x[(round % L->cap) * per];
	for (uint32_t k = 0; k < per; k++) {
		const struct rsw_coll_xfer *m = &L->made[k];
		uint32_t i = (uint32_t)(round * per + k);
		struct xfer *x = &row[k];
		*x = (struct xfer){.bytes = m->bytes, .step = m->step};
		for (unsigned j = 0; j < 2; j++) {
			if (m->dep[j] < 0 || (uint64_t)m->dep[j] < L->lo * per)
				continue;
			struct xfer *d = xfer_at(L, (uint32_t)m->dep[j]);
			if (d->arrived)
				continue;
			x->dep_link[j] = d->next_dep;
			d->next_dep = (i + 1) << 1 | j; /* which of its links continues the list */
			x->waiting++;
		}
		x->ready = !L->starting && !x->waiting;
	}
	return 0;
}

/* The transfer of connection k in round `round`, made if need be (NULL: no memory). */
static struct xfer *conn_xfer(struct replay *r, uint32_t k, uint64_t round)
{
	struct rp_coll *L = r->coll;
	while (round >= L->hi)
		if (make_round(r) < 0) {
			r->oom = 1;
			return NULL;
		}
	return &L->x[(round % L->cap) * L->plan.per_round + k];
}

/* Rounds whose every transfer arrived are let go. */
static void retire_rounds(struct rp_coll *L)
{
	while (L->lo < L->hi && L->round_arrived[L->lo % L->cap] == L->plan.per_round)
		L->lo++;
}

/* Connections in slot order: the slots of round 0 (the same in every round). */
static int build_conns(struct rp_coll *L)
{
	const struct rsw_coll *c = L->c;
	uint32_t per = L->plan.per_round;
	L->conn = calloc(per ? per : 1, sizeof(*L->conn));
	L->made = malloc((per ? per : 1) * sizeof(*L->made));
	if (!L->conn || !L->made)
		return -1;
	if (!L->plan.rounds)
		return 0;
	rsw_coll_round(c, &L->plan, 0, L->made);
	for (uint32_t k = 0; k < per; k++)
		L->conn[k] = (struct conn){.src = c->rank_host[L->made[k].src],
					   .dst = c->rank_host[L->made[k].dst],
					   .qp0 = k * c->qps};
	L->n_conn = per;
	return 0;
}

/* ---- the collective's progress ---- */

static void ready(struct replay *r, uint32_t xi);

/* Transfer xi arrived whole at t: its step may be done, and what waited for it may start. */
static void arrived(struct replay *r, uint32_t xi, uint64_t t)
{
	struct rp_coll *L = r->coll;
	struct rsw_coll_result *cr = r->res->coll;
	struct xfer *x = xfer_at(L, xi);
	uint32_t k = xi % L->plan.per_round;
	struct conn *cn = &L->conn[k];
	x->arrived = 1;
	cn->arrived++;
	L->arrived++;
	L->round_arrived[(xi / L->plan.per_round) % L->cap]++;
	if (t > cr->step_done_ns[x->step])
		cr->step_done_ns[x->step] = t;
	if (t > cr->done_ns)
		cr->done_ns = t;
	/* the receiver grants the connection's next chunk */
	if (L->c->cts_window && cn->cts_sent < L->plan.rounds) {
		cn->cts_sent++;
		rp_rc_cts(L->rc, k);
	}
	for (uint32_t d = x->next_dep; d;) {
		uint32_t yi = (d >> 1) - 1;
		struct xfer *y = xfer_at(L, yi);
		d = y->dep_link[d & 1];
		if (--y->waiting == 0)
			ready(r, yi);
	}
	retire_rounds(L);
}

/* A message of transfer xi arrived whole (the transport's rp_rc_done_fn). */
static void message_done(struct replay *r, uint32_t xi, uint64_t t)
{
	struct rp_coll *L = r->coll;
	if (xi / L->plan.per_round < L->lo) /* its round was let go: it arrived already */
		return;
	if (--xfer_at(L, xi)->parts_left == 0)
		arrived(r, xi, t);
}

/* Connection k's next transfer goes on its QPs as its messages. */
static void post(struct replay *r, uint32_t k)
{
	struct rp_coll *L = r->coll;
	const struct rsw_coll *c = L->c;
	struct conn *cn = &L->conn[k];
	uint32_t seq = cn->posted++, xi = seq * L->plan.per_round + k;
	struct xfer *x = xfer_at(L, xi);
	if (c->split) {
		for (unsigned q = 0; q < c->qps; q++) {
			uint64_t b = x->bytes / c->qps + (q < x->bytes % c->qps);
			if (!b)
				continue;
			if (rp_rc_post(L->rc, cn->qp0 + q, xi, seq, b) < 0)
				return;
			x->parts_left++;
		}
	} else {
		if (rp_rc_post(L->rc, cn->qp0 + cn->rr++ % c->qps, xi, seq, x->bytes) < 0)
			return;
		x->parts_left = 1;
	}
}

/* Connection k posts what it may: its transfers go in the algorithm's order (loop, then step),
 * as a rank's kernel runs them one after the other: one that is ready early waits for those
 * before it, so the QPs and the receiver's CTS grants see one order. */
static void post_ready(struct replay *r, uint32_t k)
{
	struct rp_coll *L = r->coll;
	struct conn *cn = &L->conn[k];
	struct xfer *x;
	while (cn->posted < L->plan.rounds && (x = conn_xfer(r, k, cn->posted)) && x->ready)
		post(r, k);
}

/* Transfer xi's dependencies arrived. */
static void ready(struct replay *r, uint32_t xi)
{
	struct rp_coll *L = r->coll;
	xfer_at(L, xi)->ready = 1;
	post_ready(r, xi % L->plan.per_round);
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

/* The transport of the connections: which joins which hosts, their QPs and the results'
 * counters of them. Returns 0, -1 out of memory, or -2 (err says why). */
static int build_rc(struct replay *r, struct rp_coll *L, struct rsw_coll_result *cr, char *err,
		    size_t errlen)
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
	uint32_t dup = 0;
	int rc = rp_conn_map_build(&L->conns, ends, L->n_conn, &dup);
	if (rc == -2) /* the plan gives each connection one slot */
		snprintf(err, errlen, "collective: ranks %u and %u have two connections",
			 L->made[dup].src, L->made[dup].dst);
	if (rc == 0) {
		L->rc = rp_rc_new(r, L->c, ends, L->n_conn, &L->conns, cr->qp, message_done);
		rc = L->rc ? 0 : -1;
	}
	free(ends);
	return rc;
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
	rsw_coll_plan(c, &L->plan);
	if (L->plan.rounds * L->plan.per_round > UINT32_MAX) {
		snprintf(err, errlen, "collective: %llu transfers, more than 2^32",
			 (unsigned long long)(L->plan.rounds * L->plan.per_round));
		return -1;
	}
	L->n_x = (uint32_t)(L->plan.rounds * L->plan.per_round);
	int bc = build_conns(L) < 0 ? -1 : build_rc(r, L, cr, err, errlen);
	if (bc == -2)
		return -1;
	if (bc < 0)
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
	/* in the algorithm's order, each transfer with nothing to wait for is ready, and its
	 * connection posts what it then may. Past the rounds some connection has reached, no
	 * connection posts at the start: those rounds are made later, their transfers ready as
	 * they are made. */
	L->starting = 1;
	if (L->n_x && conn_xfer(r, 0, 0))
		for (uint64_t round = 0; round < L->hi; round++) {
			int reached = 0;
			for (uint32_t k = 0; k < L->n_conn; k++) {
				reached |= L->conn[k].posted == round;
				if (!conn_xfer(r, k, round)->waiting)
					ready(r, (uint32_t)(round * L->plan.per_round + k));
			}
			if (!reached)
				break;
		}
	/* what the first pass made and did not reach is ready as later rounds will be */
	for (uint64_t round = L->lo; round < L->hi; round++)
		for (uint32_t k = 0; k < L->n_conn; k++) {
			struct xfer *x = &L->x[(round % L->cap) * L->plan.per_round + k];
			x->ready |= !x->waiting;
		}
	L->starting = 0;
	/* a receiver whose sender is held by another part (replay_part.h) knows the messages to
	 * expect, as the sender posts them in the algorithm's order: all of them, up front */
	for (uint32_t k = 0; r->part && k < L->n_conn; k++) {
		struct conn *cn = &L->conn[k];
		if (rp_host_here(r, cn->src) || !rp_host_here(r, cn->dst))
			continue;
		while (cn->posted < L->plan.rounds && conn_xfer(r, k, cn->posted))
			post(r, k);
	}
	for (uint32_t k = 0; L->c->cts_window && k < L->n_conn; k++) {
		struct conn *cn = &L->conn[k];
		if (!rp_host_here(r, cn->dst)) /* its receiver's part grants it */
			continue;
		while (cn->cts_sent < L->plan.rounds && cn->cts_sent < L->c->cts_window) {
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
	rp_rc_fold(L->rc);
	for (unsigned h = 0; h < L->n_host; h++)
		r->res->host[h].unsent += rp_rc_unsent(L->rc, h);
	if (r->opts && r->opts->setup_cpu)
		fprintf(r->opts->setup_cpu,
			"replay: collective: at most %llu of %llu rounds held (%u transfers a round)\n",
			(unsigned long long)L->held_max, (unsigned long long)L->plan.rounds,
			L->plan.per_round);
}

void rp_coll_free(struct replay *r)
{
	struct rp_coll *L = r->coll;
	if (!L)
		return;
	rp_rc_free(L->rc);
	free(L->conn);
	free(L->conns.k);
	free(L->made);
	free(L->round_arrived);
	free(L->x);
	free(L->h);
	free(L);
	r->coll = NULL;
}
