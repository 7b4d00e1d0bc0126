/* Closed-loop hosts: the ranks of a collective run as NCCL runs them over RC QPs (docs/replay.md,
 * "Closed-loop hosts"). A transfer (a chunk from one rank to another) is posted when every chunk
 * it depends on has arrived; its bytes go out as RDMA WRITE packets on the connection's QPs; the
 * responder ACKs in-order packets (coalesced), NAKs the first packet past a gap and drops
 * out-of-sequence ones; the requester goes back to the NAKed PSN, or to its oldest unacknowledged
 * PSN when the retransmission timer fires. With CTS admission a receiver grants each connection a
 * window of chunks with clear-to-send frames. Every frame is a real RoCEv2 frame with its ICRC. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_build.h"
#include "dataplane/pkt/roce_hdr.h"
#include "dataplane/tables/ingress.h"
#include "replay_coll.h"
#include "replay_engine.h"
#include "replay_host.h"
#include "replay_node.h"
#include "dataplane/transport/rc_reorder.h"

#define QPN_BASE 0x100u
#define OP_SEND_ONLY 0x04
#define OP_WRITE_FIRST 0x06
#define OP_WRITE_MIDDLE 0x07
#define OP_WRITE_LAST 0x08
#define OP_WRITE_ONLY 0x0A
#define OP_ACK 0x11
#define AETH_ACK 0x1F       /* ACK, credit count "invalid" (end-to-end credits off) */
#define AETH_NAK_PSN 0x60   /* NAK, PSN sequence error */
#define CTS_PAYLOAD 16u
#define PSN_MASK 0xFFFFFFu

enum ctl_kind { CTL_ACK, CTL_NAK, CTL_CTS, CTL_CNP };

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

/* One message on a QP: a transfer, or its share when transfers are split over the QPs. */
struct msg {
	uint32_t xfer;
	uint64_t bytes;
	uint64_t psn0;
	uint32_t npkts;
};

/* A QP of a connection, both ends: the requester at the sending host, the responder at the
 * receiving one. Each end only learns what the frames it receives tell it. */
struct qp {
	uint16_t src, dst;     /* hosts */
	uint16_t q;
	uint32_t conn;
	uint32_t src_qpn, dst_qpn;
	uint16_t sport;
	/* requester */
	struct msg *msg;
	size_t n_msg, cap_msg;
	size_t una_msg, cur_msg;          /* messages holding snd_una and snd_nxt */
	uint64_t snd_una, snd_nxt, snd_max, posted_psn;
	uint64_t rto_at;
	unsigned retries;
	/* responder */
	uint64_t epsn, msn;
	uint32_t unacked;
	int nak_sent;
	uint32_t rx_cts_psn;   /* CTS frames carry their own PSN sequence */
	struct rsw_ooo ooo;    /* ooo=accept: PSNs placed past a gap */
	uint64_t last_cnp;     /* when the responder last sent a CNP, NEVER: not yet */
	/* DCQCN at the requester */
	struct rsw_dcqcn cc;
	uint64_t next_tx;      /* the rate limiter lets the next packet go */
	struct rsw_coll_qp_stats *st;
	/* the flows of its data frames and of the control frames its responder sends back (each
	 * kind has one address, port and QP tuple), found at the first frame of each */
	uint32_t flow[2];
};

/* A connection: the QPs from one host to another, and its CTS credit. */
struct conn {
	uint16_t src, dst;
	uint32_t qp0;          /* first of its qps QPs in loop.qp */
	uint32_t x0;           /* its transfers in order: loop.cx[x0 .. x0 + n_xfers) */
	uint32_t n_xfers, posted, arrived;
	uint32_t granted;      /* chunks the sender may send (CTS frames received) */
	uint32_t cts_sent;
	uint32_t rr;           /* next QP for round-robin placement */
};

struct ctl {
	struct ctl *next;
	uint8_t kind;
	uint32_t qp;
	uint64_t psn;
	uint32_t msn;
};

struct lhost {
	int rank;              /* -1: not in the collective */
	struct ctl *head, *tail;
	uint32_t *qps;         /* QPs this host sends on */
	size_t n_qps;
	size_t rr;
	uint64_t data_sent;    /* data frames put on the link, for drop injection */
	uint8_t data_prio, ctl_prio[4];
};

struct rp_coll {
	const struct rsw_coll *c;
	struct xfer *x;
	uint32_t n_x;
	struct conn *conn;
	uint32_t n_conn;
	int32_t *conn_of;      /* by src host * n_host + dst host: connection, -1 */
	uint32_t *cx;          /* transfers by connection, in the algorithm's order */
	struct qp *qp;
	uint32_t n_qp;
	struct lhost *h;
	unsigned n_host;
	uint32_t arrived;
	uint8_t frame[RSW_ROCE_BUILD_OVERHEAD + 9216];
	uint32_t frame_len;   /* the frame last built in it (build_frame) */
	uint8_t icrc_unread;  /* no capture will show a frame's bytes: ICRCs are not computed */
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

static void host_ip(const struct rsw_coll *c, unsigned i, uint8_t ip[4])
{
	uint32_t v = (uint32_t)c->ip_base[0] << 24 | (uint32_t)c->ip_base[1] << 16 |
		     (uint32_t)c->ip_base[2] << 8 | c->ip_base[3];
	v += i * c->ip_stride;
	for (unsigned k = 0; k < 4; k++)
		ip[k] = (uint8_t)(v >> (24 - 8 * k));
}

/* QP number at host `at` of its connection with `peer`, QP q (as rocesw gen numbers them). */
static uint32_t qpn(const struct rsw_coll *c, unsigned peer, unsigned q)
{
	return (QPN_BASE + peer * c->qps + q) & PSN_MASK;
}

static int add_host_qp(struct lhost *h, uint32_t qp)
{
	void *p = realloc(h->qps, (h->n_qps + 1) * sizeof(*h->qps));
	if (!p)
		return -1;
	h->qps = p;
	h->qps[h->n_qps++] = qp;
	return 0;
}

/* Connections and their QPs, in order of first use; each transfer's dependency lists. */
static int build_conns(struct rp_coll *L, struct rsw_coll_result *cr)
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
	L->n_qp = L->n_conn * c->qps;
	L->qp = calloc(L->n_qp ? L->n_qp : 1, sizeof(*L->qp));
	cr->qp = calloc(L->n_qp ? L->n_qp : 1, sizeof(*cr->qp));
	if (!L->qp || !cr->qp)
		return -1;
	cr->n_qps = L->n_qp;
	for (uint32_t k = 0; k < L->n_qp; k++) {
		struct qp *qp = &L->qp[k];
		const struct conn *cn = &L->conn[k / c->qps];
		qp->src = cn->src;
		qp->dst = cn->dst;
		qp->q = (uint16_t)(k % c->qps);
		qp->conn = k / c->qps;
		qp->src_qpn = qpn(c, cn->dst, qp->q);
		qp->dst_qpn = qpn(c, cn->src, qp->q);
			qp->sport = c->fixed_sport ? (uint16_t)c->fixed_sport
					   : rsw_roce_linux_sport(qp->src_qpn, qp->dst_qpn);
		qp->rto_at = NEVER;
		qp->flow[0] = qp->flow[1] = NO_FLOW;
		qp->st = &cr->qp[k];
		qp->st->host = cn->src;
		qp->st->peer = cn->dst;
		qp->st->q = qp->q;
		if (add_host_qp(&L->h[cn->src], k) < 0)
			return -1;
	}
	return 0;
}

/* ---- frames ---- */

static void spec_of(const struct rp_coll *L, unsigned from, unsigned to, uint32_t dest_qp,
		    uint16_t sport, uint8_t dscp, struct rsw_roce_spec *s)
{
	const struct rsw_coll *c = L->c;
	memset(s, 0, sizeof(*s));
	memcpy(s->dmac, c->router_mac, 6);
	const uint8_t mac[6] = {0x02, 0, 0, 0x01, (uint8_t)(from >> 8), (uint8_t)from};
	memcpy(s->smac, mac, 6);
	host_ip(c, from, s->src_ip);
	host_ip(c, to, s->dst_ip);
	s->ttl = 64;
	s->dscp = dscp;
	s->dest_qp = dest_qp;
	s->sport = sport;
	s->icrc_unread = L->icrc_unread;
}

/* Frames are built in one buffer kept zero past the last frame's headers: the payload is never
 * written, only the bytes the last frame set are cleared. */
static uint32_t build_frame(struct rp_coll *L, const struct rsw_roce_spec *s)
{
	rsw_roce_scrub(L->frame, L->frame_len);
	L->frame_len = (uint32_t)rsw_roce_build_on_zeros(L->frame, sizeof(L->frame), s);
	return L->frame_len;
}

/* The data packet of qp at PSN psn (its message is L->qp.msg[qp->cur_msg]). */
static uint32_t build_data(struct rp_coll *L, const struct qp *qp, const struct msg *mg, uint64_t psn)
{
	const struct rsw_coll *c = L->c;
	struct rsw_roce_spec s;
	spec_of(L, qp->src, qp->dst, qp->dst_qpn, qp->sport, c->dscp, &s);
	s.ecn = 2; /* ECT(0), as DCQCN-capable NICs send */
	uint32_t i = (uint32_t)(psn - mg->psn0);
	uint64_t off = (uint64_t)i * c->mtu;
	s.payload = (uint32_t)(mg->bytes - off < c->mtu ? mg->bytes - off : c->mtu);
	int first = i == 0, last = i + 1 == mg->npkts;
	s.opcode = first && last ? OP_WRITE_ONLY : first ? OP_WRITE_FIRST
					 : last ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
	if (first) {
		s.va = 0x10000000ull * (qp->q + 1) + (uint64_t)mg->xfer * c->chunk;
		s.rkey = 0x1000 + qp->dst;
		s.dma_len = (uint32_t)mg->bytes;
	}
	s.ackreq = (uint8_t)(last || (c->ack_every && (i + 1) % c->ack_every == 0));
	s.psn = (uint32_t)psn & PSN_MASK;
	return build_frame(L, &s);
}

static uint32_t build_ctl(struct rp_coll *L, const struct ctl *k)
{
	const struct rsw_coll *c = L->c;
	const struct qp *qp = &L->qp[k->qp];
	struct rsw_roce_spec s;
	/* from the responder (qp->dst) back to the requester's QP */
	spec_of(L, qp->dst, qp->src, qp->src_qpn, qp->sport,
		k->kind == CTL_CTS ? c->cts_dscp : k->kind == CTL_CNP ? c->cnp_dscp : c->dscp, &s);
	s.psn = (uint32_t)k->psn & PSN_MASK;
	switch (k->kind) {
	case CTL_ACK:
	case CTL_NAK:
		s.opcode = OP_ACK;
		s.syndrome = k->kind == CTL_ACK ? AETH_ACK : AETH_NAK_PSN;
		s.msn = k->msn;
		break;
	case CTL_CTS:
		s.opcode = OP_SEND_ONLY;
		s.payload = CTS_PAYLOAD;
		break;
	default:
		s.opcode = RSW_OP_CNP;
		s.psn = 0;
		break;
	}
	return build_frame(L, &s);
}

/* The PG the host's switch puts a frame of this DSCP in: the priority PFC pauses it by. */
static uint8_t prio_of(struct replay *r, unsigned h, uint32_t len, const uint8_t *frame)
{
	const struct host_node *hn = &r->host[h];
	struct rsw_pkt_meta m;
	if (hn->att_sw < 0 || rsw_parse(frame, len, &m))
		return 0;
	m.in_port = hn->att_port;
	rsw_classify(r->sw[hn->att_sw].fib, &m);
	return m.pg & 7;
}

static void queue_ctl(struct replay *r, unsigned h, uint8_t kind, uint32_t qp, uint64_t psn,
		      uint32_t msn)
{
	struct lhost *lh = &r->coll->h[h];
	struct ctl *k = malloc(sizeof(*k));
	if (!k) {
		r->oom = 1;
		return;
	}
	*k = (struct ctl){.kind = kind, .qp = qp, .psn = psn, .msn = msn};
	if (lh->tail)
		lh->tail->next = k;
	else
		lh->head = k;
	lh->tail = k;
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
		struct qp *qp0 = &L->qp[cn->qp0];
		queue_ctl(r, cn->dst, CTL_CTS, cn->qp0, qp0->rx_cts_psn++, 0);
		qp0->st->cts_tx++;
	}
	for (uint32_t d = x->next_dep; d;) {
		uint32_t yi = (d >> 1) - 1;
		struct xfer *y = &L->x[yi];
		d = y->dep_link[d & 1];
		if (--y->waiting == 0)
			ready(r, yi);
	}
}

static int add_msg(struct replay *r, struct qp *qp, uint32_t xi, uint64_t bytes)
{
	unsigned mtu = r->coll->c->mtu;
	if (qp->n_msg == qp->cap_msg) {
		size_t nc = qp->cap_msg ? qp->cap_msg * 2 : 16;
		void *p = realloc(qp->msg, nc * sizeof(*qp->msg));
		if (!p) {
			r->oom = 1;
			return -1;
		}
		qp->msg = p;
		qp->cap_msg = nc;
	}
	uint32_t npkts = (uint32_t)((bytes + mtu - 1) / mtu);
	qp->msg[qp->n_msg++] = (struct msg){.xfer = xi, .bytes = bytes, .psn0 = qp->posted_psn,
					    .npkts = npkts};
	qp->posted_psn += npkts;
	return 0;
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
			if (add_msg(r, &L->qp[cn->qp0 + k], xi, b) < 0)
				return;
			x->parts_left++;
		}
	} else {
		if (add_msg(r, &L->qp[cn->qp0 + cn->rr++ % c->qps], xi, x->bytes) < 0)
			return;
		x->parts_left = 1;
	}
}

/* A DCQCN rate change in the event log: what the requester's rate limiter now allows. */
static void log_rate(struct replay *r, const struct qp *qp, uint64_t t)
{
	if (!r->log.f)
		return;
	json_t *f = json_object();
	json_object_set_new(f, "peer", json_string(r->host[qp->dst].name));
	json_object_set_new(f, "qp", json_integer(qp->q));
	json_object_set_new(f, "rate_mbps", json_real(qp->cc.rc));
	json_object_set_new(f, "target_mbps", json_real(qp->cc.rt));
	json_object_set_new(f, "alpha", json_real(qp->cc.alpha));
	rp_event(r, t, "dcqcn_rate", "host", r->host[qp->src].name, NULL, f);
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

/* ---- requester ---- */

/* May qp send its next packet: something posted, granted by CTS, not waiting on an error. */
static int sendable(const struct rp_coll *L, struct qp *qp, uint64_t t)
{
	if (qp->st->error || qp->snd_nxt >= qp->posted_psn || qp->next_tx > t)
		return 0;
	/* messages posted after the QP ran dry start where the last one ended */
	while (qp->cur_msg + 1 < qp->n_msg && qp->msg[qp->cur_msg + 1].psn0 <= qp->snd_nxt)
		qp->cur_msg++;
	if (!L->c->cts_window)
		return 1;
	const struct msg *mg = &qp->msg[qp->cur_msg];
	return L->x[mg->xfer].seq < L->conn[qp->conn].granted;
}

static void go_back(struct qp *qp, uint64_t psn)
{
	qp->snd_nxt = psn;
	while (qp->cur_msg > 0 && qp->msg[qp->cur_msg].psn0 > psn)
		qp->cur_msg--;
	while (qp->cur_msg + 1 < qp->n_msg && qp->msg[qp->cur_msg + 1].psn0 <= psn)
		qp->cur_msg++;
}

/* A QP that exhausted its retries, in the event log. */
static void log_qp_error(struct replay *r, const struct qp *qp, uint64_t t)
{
	if (!r->log.f)
		return;
	json_t *f = json_object();
	json_object_set_new(f, "peer", json_string(r->host[qp->dst].name));
	json_object_set_new(f, "qp", json_integer(qp->q));
	json_object_set_new(f, "timeouts", json_integer(qp->retries));
	json_object_set_new(f, "unacked_psn", json_integer((json_int_t)qp->snd_una));
	rp_event(r, t, "qp_retry_exceeded", "host", r->host[qp->src].name, NULL, f);
}

/* The retransmission timer runs while packets are unacknowledged: started by a send when none
 * was outstanding, restarted by each ACK that makes progress (as Linux rxe and ConnectX do). */
static void timer_check(struct replay *r, struct qp *qp, uint64_t t)
{
	const struct rsw_coll *c = r->coll->c;
	if (qp->rto_at > t || qp->st->error)
		return;
	qp->st->timeouts++;
	if (++qp->retries > c->retry_cnt) {
		qp->st->error = 1; /* IBV_WC_RETRY_EXC_ERR: the QP stops */
		qp->st->error_ns = t;
		qp->st->unacked_psn = qp->snd_una;
		qp->st->sent_psn = qp->snd_max;
		qp->rto_at = NEVER;
		log_qp_error(r, qp, t);
		return;
	}
	go_back(qp, qp->snd_una);
	qp->rto_at = t + c->rto_ns;
}

static void acked(struct replay *r, struct qp *qp, uint64_t upto, uint64_t t)
{
	if (upto <= qp->snd_una)
		return;
	if (upto > qp->snd_max)
		upto = qp->snd_max;
	qp->snd_una = upto;
	qp->retries = 0;
	while (qp->una_msg < qp->n_msg &&
	       qp->msg[qp->una_msg].psn0 + qp->msg[qp->una_msg].npkts <= upto)
		qp->una_msg++;
	if (qp->snd_nxt < upto)
		go_back(qp, upto);
	qp->rto_at = qp->snd_una < qp->snd_max ? t + r->coll->c->rto_ns : NEVER;
}

/* ---- responder ---- */

/* A data packet past the expected PSN, counted as ConnectX counts out_of_sequence. */
static void reordered(struct qp *qp, uint64_t psn)
{
	rsw_reorder_seen(&qp->st->reorder, qp->epsn, psn);
}

/* ooo=accept: the packet is placed where it belongs, no NAK; what is held past the gap is the
 * reorder buffer a strict receiver would need. Out of memory it is dropped, as if lost. */
static void hold(struct qp *qp, uint64_t psn, uint32_t payload)
{
	rsw_reorder_hold(&qp->ooo, &qp->st->reorder, qp->epsn, psn, payload);
}

/* ooo=accept: the gap before held packets filled. They complete in PSN order (an OOO QP still
 * completes its work requests in order: Linux's "RDMA/mlx5: Support OOO RX WQE consumption"),
 * a message when its last PSN is passed; one cumulative ACK covers them. */
static void drain(struct replay *r, struct qp *qp, uint64_t t)
{
	struct rp_coll *L = r->coll;
	int ack = 0;
	while (rsw_ooo_take(&qp->ooo, qp->epsn)) {
		const struct msg *mg = &qp->msg[qp->msn];
		uint32_t xi = NO_FLOW;
		if (qp->epsn == mg->psn0 + mg->npkts - 1) {
			xi = mg->xfer;
			qp->msn++;
		}
		qp->epsn++;
		qp->unacked++;
		if (xi != NO_FLOW || (L->c->ack_every && qp->unacked >= L->c->ack_every)) {
			ack = 1;
			qp->unacked = 0;
		}
		if (xi != NO_FLOW && --L->x[xi].parts_left == 0)
			arrived(r, xi, t);
	}
	if (ack) {
		queue_ctl(r, qp->dst, CTL_ACK, (uint32_t)(qp - L->qp), qp->epsn - 1,
			  (uint32_t)qp->msn);
		qp->st->acks_tx++;
	}
}

static void rx_data(struct replay *r, struct qp *qp, const uint8_t *data,
		    const struct rsw_pkt_meta *m, uint64_t t)
{
	struct rp_coll *L = r->coll;
	const struct rsw_coll *c = L->c;
	uint32_t qi = (uint32_t)(qp - L->qp);
	uint64_t psn = rsw_psn_unwrap(qp->epsn, m->bth_psn);
	if (c->dcqcn && m->ecn == 3 &&
	    (qp->last_cnp == NEVER || t >= qp->last_cnp + c->dcqcn_p.cnp_interval_ns)) {
		qp->last_cnp = t; /* at most one CNP per QP per interval */
		queue_ctl(r, qp->dst, CTL_CNP, qi, 0, 0);
		qp->st->cnps_tx++;
	}
	if (psn != qp->epsn) {
		if (psn > qp->epsn) {
			reordered(qp, psn);
			if (c->ooo_accept[qp->dst]) {
				hold(qp, psn, m->icrc_off - m->payload_off -
						      ((data[m->bth_off + 1] >> 4) & 3u));
				return;
			}
			/* a gap: one NAK, then silence until the expected PSN comes */
			if (c->nak && !qp->nak_sent) {
				qp->nak_sent = 1;
				queue_ctl(r, qp->dst, CTL_NAK, qi, qp->epsn, (uint32_t)qp->msn);
				qp->st->naks_tx++;
			}
		} else if (m->bth_ackreq) {
			/* a duplicate asking for an ACK: the requester lost ours */
			queue_ctl(r, qp->dst, CTL_ACK, qi, qp->epsn - 1, (uint32_t)qp->msn);
			qp->st->acks_tx++;
		}
		return;
	}
	qp->epsn++;
	qp->nak_sent = 0;
	qp->unacked++;
	int last = m->bth_opcode == OP_WRITE_LAST || m->bth_opcode == OP_WRITE_ONLY;
	struct qp *req = qp; /* both ends share the struct: the message list is the requester's */
	uint32_t xi = NO_FLOW;
	if (last) {
		xi = req->msg[qp->msn].xfer;
		qp->msn++;
	}
	if (last || (c->ack_every && qp->unacked >= c->ack_every)) {
		queue_ctl(r, qp->dst, CTL_ACK, qi, qp->epsn - 1, (uint32_t)qp->msn);
		qp->st->acks_tx++;
		qp->unacked = 0;
	}
	if (xi != NO_FLOW && --L->x[xi].parts_left == 0)
		arrived(r, xi, t);
	if (qp->ooo.held_pkts)
		drain(r, qp, t);
}

/* A RoCE frame reached closed-loop host h at t: the collective's frames drive its QPs. */
static void loop_wake(struct replay *r, unsigned h, uint64_t t);

static void loop_rx(struct replay *r, unsigned h, uint64_t t, const uint8_t *data,
		    const struct rsw_pkt_meta *m)
{
	struct rp_coll *L = r->coll;
	const struct rsw_coll *c = L->c;
	if (!(m->flags & RSW_META_F_ROCE))
		return;
	uint32_t n = m->bth_dest_qp - QPN_BASE;
	if (m->bth_dest_qp < QPN_BASE || n / c->qps >= L->n_host)
		return;
	unsigned peer = n / c->qps, q = n % c->qps;
	uint8_t op = m->bth_opcode;
	int to_requester = op == OP_ACK || op == OP_SEND_ONLY || op == RSW_OP_CNP;
	int32_t ci = to_requester ? L->conn_of[(size_t)h * L->n_host + peer]
				  : L->conn_of[(size_t)peer * L->n_host + h];
	if (ci < 0)
		return;
	struct conn *cn = &L->conn[ci];
	struct qp *qp = &L->qp[cn->qp0 + q];
	if (op == OP_ACK) {
		uint8_t syn = data[m->bth_off + RSW_BTH_LEN];
		uint64_t psn = rsw_psn_unwrap(qp->snd_una, m->bth_psn);
		if ((syn & 0xE0) == AETH_NAK_PSN) {
			qp->st->naks_rx++;
			acked(r, qp, psn, t);
			go_back(qp, qp->snd_una);
			if (qp->snd_una < qp->snd_max)
				qp->rto_at = t + c->rto_ns;
		} else {
			qp->st->acks_rx++;
			acked(r, qp, psn + 1, t);
		}
	} else if (op == OP_SEND_ONLY) {
		cn->granted++;
		qp->st->cts_rx++;
	} else if (op == RSW_OP_CNP) {
		qp->st->cnps_rx++;
		if (c->dcqcn) {
			rsw_dcqcn_cnp(&qp->cc, &c->dcqcn_p, t);
			qp->st->rate_cuts++;
			qp->st->min_rate_mbps = (uint64_t)qp->cc.min_rc;
			if (qp->next_tx > t) /* the new rate applies to the packet waiting */
				qp->next_tx = t;
			log_rate(r, qp, t);
		}
	} else if (op >= OP_WRITE_FIRST && op <= OP_WRITE_ONLY && op != 0x09) {
		rx_data(r, qp, data, m, t);
	} else {
		return;
	}
	loop_wake(r, h, t);
}

/* ---- sending ---- */

/* The host's link is free at t: its next frame, control frames first (oldest first, skipping
 * paused priorities), then data from its QPs in turn. Returns the frame length or 0; *is_data,
 * and *flow: where the frame's flow is kept. */
static uint32_t next_frame(struct replay *r, unsigned h, uint64_t t, uint8_t paused, int *is_data,
			   uint32_t **flow)
{
	struct rp_coll *L = r->coll;
	struct lhost *lh = &L->h[h];
	*is_data = 0;
	for (struct ctl **pk = &lh->head, *prev = NULL; *pk; prev = *pk, pk = &(*pk)->next) {
		struct ctl *k = *pk;
		if (paused & (1u << lh->ctl_prio[k->kind]))
			continue;
		uint32_t len = build_ctl(L, k);
		*flow = &L->qp[k->qp].flow[1];
		*pk = k->next;
		if (lh->tail == k)
			lh->tail = prev;
		free(k);
		return len;
	}
	if (paused & (1u << lh->data_prio))
		return 0;
	for (size_t i = 0; i < lh->n_qps; i++) {
		size_t j = (lh->rr + i) % lh->n_qps;
		struct qp *qp = &L->qp[lh->qps[j]];
		if (!sendable(L, qp, t))
			continue;
		lh->rr = j + 1;
		const struct msg *mg = &qp->msg[qp->cur_msg];
		uint32_t len = build_data(L, qp, mg, qp->snd_nxt);
		*flow = &qp->flow[0];
		qp->st->data_packets++;
		qp->st->data_bytes += len;
		if (qp->snd_nxt < qp->snd_max)
			qp->st->retransmitted++;
		if (qp->snd_una == qp->snd_max && qp->snd_nxt == qp->snd_max)
			qp->rto_at = t + L->c->rto_ns; /* first outstanding packet */
		if (L->c->dcqcn) {
			if (rsw_dcqcn_sent(&qp->cc, &L->c->dcqcn_p, len))
				log_rate(r, qp, t);
			/* the rate limiter spaces packets by their wire time at Rc */
			if (qp->cc.rc < qp->cc.line)
				qp->next_tx = t + rsw_wire_ns(len, (uint32_t)qp->cc.rc);
		}
		qp->snd_nxt++;
		if (qp->snd_nxt > qp->snd_max)
			qp->snd_max = qp->snd_nxt;
		if (qp->snd_nxt == mg->psn0 + mg->npkts && qp->cur_msg + 1 < qp->n_msg)
			qp->cur_msg++;
		*is_data = 1;
		return len;
	}
	return 0;
}

/* Is this host's n-th data frame in a test's list (to lose, or to mark)? */
static int injected(const struct rsw_coll_drop *list, unsigned n, unsigned h, uint64_t nth)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i].host == h && list[i].nth == nth)
			return 1;
	return 0;
}

/* ECN CE in the IPv4 header, as a congested switch would mark it: the checksum follows; the
 * ICRC does not cover the TOS byte. */
static void mark_ce(uint8_t *frame)
{
	uint8_t *ip = frame + 14;
	ip[1] |= 3;
	ip[10] = ip[11] = 0;
	uint32_t sum = 0;
	for (unsigned i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

static void loop_wake(struct replay *r, unsigned h, uint64_t t)
{
	struct host_node *hn = &r->host[h];
	struct rp_coll *L = r->coll;
	struct lhost *lh = &L->h[h];
	uint64_t free_ns = rsw_shaper_free_ns(&hn->shaper);
	uint64_t next = NEVER;
	for (size_t i = 0; i < lh->n_qps; i++) {
		struct qp *qp = &L->qp[lh->qps[i]];
		timer_check(r, qp, t);
		if (L->c->dcqcn && rsw_dcqcn_timers(&qp->cc, &L->c->dcqcn_p, t))
			log_rate(r, qp, t);
	}
	if (free_ns <= t) {
		uint8_t paused = r->model->hosts_ignore_pfc ? 0 : rsw_pause_mask(&hn->pause, t);
		int is_data;
		uint32_t *flow;
		uint32_t len = next_frame(r, h, t, paused, &is_data, &flow);
		if (len) {
			rsw_shaper_send(&hn->shaper, t, len);
			int lost = is_data && injected(L->c->drop, L->c->n_drop, h, lh->data_sent);
			if (is_data && injected(L->c->ce, L->c->n_ce, h, lh->data_sent))
				mark_ce(L->frame);
			if (is_data)
				lh->data_sent++;
			if (*flow == NO_FLOW)
				*flow = host_flow(r, h, L->frame, len);
			host_send(r, h, t, L->frame, len, *flow, lost, 1); /* built on zeros */
			if (lost)
				r->res->coll->injected_drops++;
			next = rsw_shaper_free_ns(&hn->shaper);
		} else {
			/* nothing may go: wake when a pause ends */
			for (unsigned p = 0; p < 8; p++)
				if ((paused & (1u << p)) && hn->pause.until_ns[p] < next)
					next = hn->pause.until_ns[p];
		}
	} else {
		next = free_ns;
	}
	/* and when a retransmission or DCQCN timer fires, or a rate limiter lets a packet go */
	for (size_t i = 0; i < lh->n_qps; i++) {
		const struct qp *qp = &L->qp[lh->qps[i]];
		uint64_t at = qp->rto_at;
		if (L->c->dcqcn && rsw_dcqcn_next(&qp->cc) < at)
			at = rsw_dcqcn_next(&qp->cc);
		if (qp->next_tx > t && qp->next_tx < at && !qp->st->error &&
		    qp->snd_nxt < qp->posted_psn)
			at = qp->next_tx;
		if (at < next)
			next = at > t ? at : t + 1;
	}
	if (next == NEVER)
		rsw_event_cancel(&r->q, r->id_host + h);
	else
		rp_schedule(r, r->id_host + h, next);
}

/* ---- set-up and results ---- */

int loop_init(struct replay *r, char *err, size_t errlen)
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
	L->icrc_unread = 1; /* replay's switches and hosts do not check ICRCs: only captures show them */
	for (unsigned s = 0; s < r->model->n_sw; s++)
		L->icrc_unread &= !r->sw[s].capturing;
	for (unsigned h = 0; h < L->n_host; h++)
		L->icrc_unread &= r->host[h].out.d == NULL;
	L->h = calloc(L->n_host, sizeof(*L->h));
	if (!L->h)
		goto oom;
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
	cr->n_steps = rsw_coll_n_steps(c);
	cr->step_done_ns = calloc(cr->n_steps ? cr->n_steps : 1, sizeof(*cr->step_done_ns));
	if (!cr->step_done_ns)
		goto oom;
	if (build_xfers(L) < 0 || build_conns(L, cr) < 0)
		goto oom;
	for (uint32_t k = 0; k < L->n_qp; k++) {
		struct qp *qp = &L->qp[k];
		qp->last_cnp = NEVER;
		rsw_dcqcn_init(&qp->cc, r->host[qp->src].speed_mbps);
		qp->st->min_rate_mbps = r->host[qp->src].speed_mbps;
	}
	switch (c->pattern) {
	case RSW_COLL_ALL_TO_ALL: cr->bytes = c->message; break;
	case RSW_COLL_INCAST: cr->bytes = c->message * (c->n_ranks - 1); break;
	default: cr->bytes = c->message; break;
	}
	/* the priority each kind of frame is paused by: classify one of each */
	for (unsigned h = 0; h < L->n_host; h++) {
		struct lhost *lh = &L->h[h];
		if (lh->rank < 0 || !lh->n_qps)
			continue;
		struct qp *qp = &L->qp[lh->qps[0]];
		struct msg mg = {.bytes = 1, .npkts = 1};
		lh->data_prio = prio_of(r, h, build_data(L, qp, &mg, 0), L->frame);
		for (uint8_t k = CTL_ACK; k <= CTL_CNP; k++) {
			struct ctl ck = {.kind = k, .qp = lh->qps[0]};
			/* control frames leave the responder: classify at the peer's switch */
			uint32_t len = build_ctl(L, &ck);
			L->h[qp->dst].ctl_prio[k] = prio_of(r, qp->dst, len, L->frame);
		}
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* At t = 0 every transfer with nothing to wait for is posted, and with CTS admission every
 * receiver grants each incoming connection its first window. */
void loop_start(struct replay *r)
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
		struct qp *qp0 = &L->qp[cn->qp0];
		if (!rp_host_here(r, cn->dst)) /* its receiver's part grants it */
			continue;
		while (cn->cts_sent < cn->n_xfers && cn->cts_sent < L->c->cts_window) {
			cn->cts_sent++;
			queue_ctl(r, cn->dst, CTL_CTS, cn->qp0, qp0->rx_cts_psn++, 0);
			qp0->st->cts_tx++;
		}
	}
	for (unsigned h = 0; h < L->n_host; h++)
		if (L->h[h].rank >= 0 && rp_host_here(r, h))
			rp_schedule(r, r->id_host + h, 0);
}

void loop_finish(struct replay *r)
{
	struct rp_coll *L = r->coll;
	struct rsw_coll_result *cr = r->res->coll;
	cr->complete = L->arrived == L->n_x;
	cr->transfers = L->n_x;
	cr->arrived = L->arrived;
	for (unsigned h = 0; h < L->n_host; h++)
		for (const struct ctl *k = L->h[h].head; k; k = k->next)
			r->res->host[h].unsent++;
}

void loop_free(struct replay *r)
{
	struct rp_coll *L = r->coll;
	if (!L)
		return;
	for (unsigned h = 0; L->h && h < L->n_host; h++) {
		while (L->h[h].head) {
			struct ctl *k = L->h[h].head;
			L->h[h].head = k->next;
			free(k);
		}
		free(L->h[h].qps);
	}
	for (uint32_t k = 0; L->qp && k < L->n_qp; k++) {
		free(L->qp[k].msg);
		rsw_ooo_free(&L->qp[k].ooo);
	}
	free(L->qp);
	free(L->conn);
	free(L->conn_of);
	free(L->cx);
	free(L->x);
	free(L->h);
	free(L);
	r->coll = NULL;
}

const struct rp_host_ops rp_coll_ops = {.wake = loop_wake, .rx = loop_rx};
