/* RC transport between closed-loop hosts (replay_rc.h), as a NIC runs RC QPs: a message's bytes go
 * out as RDMA WRITE packets; the responder ACKs in-order packets (coalesced), NAKs the first
 * packet past a gap and drops out-of-sequence ones (or with ooo=accept places them); the
 * requester goes back to the NAKed PSN, or to its oldest unacknowledged PSN when the
 * retransmission timer fires. With CTS admission a receiver grants each connection a window of
 * chunks with clear-to-send frames; DCQCN paces a requester on the CNPs its responder returns.
 * Every frame is a real RoCEv2 frame with its ICRC, sent by the host's NIC (replay_host.c) as
 * its link and PFC let it. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_build.h"
#include "dataplane/pkt/roce_hdr.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/transport/rc_reorder.h"
#include "replay_engine.h"
#include "replay_host.h"
#include "replay_node.h"
#include "replay_rc.h"

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

/* One message on a QP: a transfer, or its share when transfers are split over the QPs. */
struct msg {
	uint32_t xfer;
	uint32_t seq;          /* the transfer's place among its connection's (CTS grants) */
	uint64_t bytes;
	uint64_t psn0;
	uint32_t npkts;
};

/* A QP of a connection, both ends: the requester at the sending host, the responder at the
 * receiving one. Each end only learns what the frames it receives tell it. */
/* What a host's wake-up reads of each of its QPs (may it send, when are its timers) comes first,
 * in one cache line (the array is line-aligned): at zone scale each line is a miss. */
struct __attribute__((aligned(64))) qp {
	/* requester */
	uint64_t snd_nxt, posted_psn;
	uint64_t next_tx;      /* the rate limiter lets the next packet go */
	uint64_t rto_at;
	struct msg *msg;
	size_t n_msg, cur_msg;            /* cur_msg: the message holding snd_nxt */
	uint32_t conn;
	uint8_t error;         /* st->error: the QP stopped */
	uint16_t src, dst;     /* hosts */
	uint16_t q;
	uint32_t src_qpn, dst_qpn;
	uint16_t sport;
	size_t cap_msg;
	size_t msg_base;                  /* msg[0] is message msg_base: those before were let go */
	size_t una_msg;                   /* the message holding snd_una */
	uint64_t snd_una, snd_max;
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
	struct rsw_coll_qp_stats *st;
	/* the flows of its data frames and of the control frames its responder sends back (each
	 * kind has one address, port and QP tuple), found at the first frame of each */
	uint32_t flow[2];
	/* data packets and bytes sent, retransmissions included: counted in the line a send reads
	 * anyway, into st at the end (rp_rc_fold) */
	uint64_t sent_packets, sent_bytes;
};
_Static_assert(__builtin_offsetof(struct qp, error) < 64, "a wake-up's fields in one line");

/* Message i of qp (one it still holds). */
static inline struct msg *msg_at(const struct qp *qp, size_t i)
{
	return &qp->msg[i - qp->msg_base];
}

struct ctl {
	struct ctl *next;
	uint8_t kind;
	uint32_t qp;
	uint64_t psn;
	uint32_t msn;
};

/* A host's end of the transport: the control frames it owes, the QPs it sends on. */
struct rc_host {
	struct ctl *head, *tail;
	uint32_t *qps;
	size_t n_qps;
	size_t rr;
	uint8_t data_prio, ctl_prio[4]; /* the priority PFC pauses each kind of frame by */
	uint64_t data_sent;    /* data frames put on the link, for drop injection */
};

struct rp_rc {
	struct replay *r;
	const struct rsw_coll *c;
	rp_rc_done_fn *done;
	struct qp *qp;
	uint32_t n_qp;
	uint32_t *granted;     /* by connection: chunks the sender may send (CTS frames received) */
	const struct rp_conn_map *conns; /* which connection joins two hosts */
	struct rc_host *h;
	unsigned n_host;
	uint8_t frame[RSW_ROCE_BUILD_OVERHEAD + 9216];
	uint32_t frame_len;   /* the frame last built in it (build_frame) */
	uint8_t icrc_unread;  /* no capture will show a frame's bytes: ICRCs are not computed */
};

/* ---- frames ---- */

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

static void spec_of(const struct rp_rc *rc, unsigned from, unsigned to, uint32_t dest_qp,
		    uint16_t sport, uint8_t dscp, struct rsw_roce_spec *s)
{
	const struct rsw_coll *c = rc->c;
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
	s->icrc_unread = rc->icrc_unread;
}

/* Frames are built in one buffer kept zero past the last frame's headers: the payload is never
 * written, only the bytes the last frame set are cleared. */
static uint32_t build_frame(struct rp_rc *rc, const struct rsw_roce_spec *s)
{
	rsw_roce_scrub(rc->frame, rc->frame_len);
	rc->frame_len = (uint32_t)rsw_roce_build_on_zeros(rc->frame, sizeof(rc->frame), s);
	return rc->frame_len;
}

/* The data packet of qp at PSN psn (its message is mg). */
static uint32_t build_data(struct rp_rc *rc, const struct qp *qp, const struct msg *mg,
			   uint64_t psn)
{
	const struct rsw_coll *c = rc->c;
	struct rsw_roce_spec s;
	spec_of(rc, qp->src, qp->dst, qp->dst_qpn, qp->sport, c->dscp, &s);
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
	return build_frame(rc, &s);
}

static uint32_t build_ctl(struct rp_rc *rc, const struct ctl *k)
{
	const struct rsw_coll *c = rc->c;
	const struct qp *qp = &rc->qp[k->qp];
	struct rsw_roce_spec s;
	/* from the responder (qp->dst) back to the requester's QP */
	spec_of(rc, qp->dst, qp->src, qp->src_qpn, qp->sport,
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
	return build_frame(rc, &s);
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

static void queue_ctl(struct rp_rc *rc, unsigned h, uint8_t kind, uint32_t qp, uint64_t psn,
		      uint32_t msn)
{
	struct rc_host *lh = &rc->h[h];
	struct ctl *k = malloc(sizeof(*k));
	if (!k) {
		rc->r->oom = 1;
		return;
	}
	*k = (struct ctl){.kind = kind, .qp = qp, .psn = psn, .msn = msn};
	if (lh->tail)
		lh->tail->next = k;
	else
		lh->head = k;
	lh->tail = k;
}

void rp_rc_cts(struct rp_rc *rc, uint32_t conn)
{
	uint32_t qi = conn * rc->c->qps;
	struct qp *qp0 = &rc->qp[qi];
	queue_ctl(rc, qp0->dst, CTL_CTS, qi, qp0->rx_cts_psn++, 0);
	qp0->st->cts_tx++;
}

int rp_rc_post(struct rp_rc *rc, uint32_t qi, uint32_t xfer, uint32_t seq, uint64_t bytes)
{
	struct qp *qp = &rc->qp[qi];
	unsigned mtu = rc->c->mtu;
	/* messages both ends are done with (acknowledged, and completed at the responder) are let
	 * go when they are half the list: a QP holds what is in flight, not all it ever sent */
	size_t done = qp->una_msg < qp->msn ? qp->una_msg : (size_t)qp->msn;
	if (qp->cap_msg && qp->n_msg - qp->msg_base == qp->cap_msg &&
	    done - qp->msg_base >= qp->cap_msg / 2) {
		memmove(qp->msg, msg_at(qp, done), (qp->n_msg - done) * sizeof(*qp->msg));
		qp->msg_base = done;
	}
	if (qp->n_msg - qp->msg_base == qp->cap_msg) {
		size_t nc = qp->cap_msg ? qp->cap_msg * 2 : 16;
		void *p = realloc(qp->msg, nc * sizeof(*qp->msg));
		if (!p) {
			rc->r->oom = 1;
			return -1;
		}
		qp->msg = p;
		qp->cap_msg = nc;
	}
	uint32_t npkts = (uint32_t)((bytes + mtu - 1) / mtu);
	*msg_at(qp, qp->n_msg++) = (struct msg){.xfer = xfer, .seq = seq, .bytes = bytes,
					    .psn0 = qp->posted_psn, .npkts = npkts};
	qp->posted_psn += npkts;
	return 0;
}

/* A DCQCN rate change in the event log: what the requester's rate limiter now allows. */
/* An event's fields naming qp (its peer, its number), first of those it has. */
static json_t *qp_fields(const struct replay *r, const struct qp *qp)
{
	json_t *f = json_object();
	json_object_set_new(f, "peer", json_string(r->host[qp->dst].name));
	json_object_set_new(f, "qp", json_integer(qp->q));
	return f;
}

static void log_rate(struct replay *r, const struct qp *qp, uint64_t t)
{
	if (!r->log.f)
		return;
	json_t *f = qp_fields(r, qp);
	json_object_set_new(f, "rate_mbps", json_real(qp->cc.rc));
	json_object_set_new(f, "target_mbps", json_real(qp->cc.rt));
	json_object_set_new(f, "alpha", json_real(qp->cc.alpha));
	rp_event(r, t, "dcqcn_rate", "host", r->host[qp->src].name, NULL, f);
}

/* ---- requester ---- */

/* May qp send its next packet: something posted, granted by CTS, not waiting on an error. */
static int sendable(const struct rp_rc *rc, struct qp *qp, uint64_t t)
{
	if (qp->error || qp->snd_nxt >= qp->posted_psn || qp->next_tx > t)
		return 0;
	/* messages posted after the QP ran dry start where the last one ended */
	while (qp->cur_msg + 1 < qp->n_msg && msg_at(qp, qp->cur_msg + 1)->psn0 <= qp->snd_nxt)
		qp->cur_msg++;
	if (!rc->c->cts_window)
		return 1;
	return msg_at(qp, qp->cur_msg)->seq < rc->granted[qp->conn];
}

static void go_back(struct qp *qp, uint64_t psn)
{
	qp->snd_nxt = psn;
	while (qp->cur_msg > qp->msg_base && msg_at(qp, qp->cur_msg)->psn0 > psn)
		qp->cur_msg--;
	while (qp->cur_msg + 1 < qp->n_msg && msg_at(qp, qp->cur_msg + 1)->psn0 <= psn)
		qp->cur_msg++;
}

/* A QP that exhausted its retries, in the event log. */
static void log_qp_error(struct replay *r, const struct qp *qp, uint64_t t)
{
	if (!r->log.f)
		return;
	json_t *f = qp_fields(r, qp);
	json_object_set_new(f, "timeouts", json_integer(qp->retries));
	json_object_set_new(f, "unacked_psn", json_integer((json_int_t)qp->snd_una));
	rp_event(r, t, "qp_retry_exceeded", "host", r->host[qp->src].name, NULL, f);
}

/* The retransmission timer runs while packets are unacknowledged: started by a send when none
 * was outstanding, restarted by each ACK that makes progress (as Linux rxe and ConnectX do). */
static void timer_check(struct rp_rc *rc, struct qp *qp, uint64_t t)
{
	const struct rsw_coll *c = rc->c;
	if (qp->rto_at > t || qp->error)
		return;
	qp->st->timeouts++;
	if (++qp->retries > c->retry_cnt) {
		qp->st->error = qp->error = 1; /* IBV_WC_RETRY_EXC_ERR: the QP stops */
		qp->st->error_ns = t;
		qp->st->unacked_psn = qp->snd_una;
		qp->st->sent_psn = qp->snd_max;
		qp->rto_at = NEVER;
		log_qp_error(rc->r, qp, t);
		return;
	}
	go_back(qp, qp->snd_una);
	qp->rto_at = t + c->rto_ns;
}

static void acked(struct rp_rc *rc, struct qp *qp, uint64_t upto, uint64_t t)
{
	if (upto <= qp->snd_una)
		return;
	if (upto > qp->snd_max)
		upto = qp->snd_max;
	qp->snd_una = upto;
	qp->retries = 0;
	while (qp->una_msg < qp->n_msg &&
	       msg_at(qp, qp->una_msg)->psn0 + msg_at(qp, qp->una_msg)->npkts <= upto)
		qp->una_msg++;
	if (qp->snd_nxt < upto)
		go_back(qp, upto);
	qp->rto_at = qp->snd_una < qp->snd_max ? t + rc->c->rto_ns : NEVER;
}

/* Host h's retransmission and DCQCN timers due at t. */
static void timers(struct rp_rc *rc, unsigned h, uint64_t t)
{
	const struct rc_host *lh = &rc->h[h];
	for (size_t i = 0; i < lh->n_qps; i++) {
		struct qp *qp = &rc->qp[lh->qps[i]];
		timer_check(rc, qp, t);
		if (rc->c->dcqcn && rsw_dcqcn_timers(&qp->cc, &rc->c->dcqcn_p, t))
			log_rate(rc->r, qp, t);
	}
}

/* The earlier of next and when one of host h's QPs has a timer or its rate limiter due. */
static uint64_t next_wake(const struct rp_rc *rc, unsigned h, uint64_t t, uint64_t next)
{
	const struct rc_host *lh = &rc->h[h];
	for (size_t i = 0; i < lh->n_qps; i++) {
		const struct qp *qp = &rc->qp[lh->qps[i]];
		uint64_t at = qp->rto_at;
		if (rc->c->dcqcn && rsw_dcqcn_next(&qp->cc) < at)
			at = rsw_dcqcn_next(&qp->cc);
		if (qp->next_tx > t && qp->next_tx < at && !qp->error &&
		    qp->snd_nxt < qp->posted_psn)
			at = qp->next_tx;
		if (at < next)
			next = at > t ? at : t + 1;
	}
	return next;
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
static void drain(struct rp_rc *rc, struct qp *qp, uint64_t t)
{
	int ack = 0;
	while (rsw_ooo_take(&qp->ooo, qp->epsn)) {
		const struct msg *mg = msg_at(qp, qp->msn);
		uint32_t xi = NO_FLOW;
		if (qp->epsn == mg->psn0 + mg->npkts - 1) {
			xi = mg->xfer;
			qp->msn++;
		}
		qp->epsn++;
		qp->unacked++;
		if (xi != NO_FLOW || (rc->c->ack_every && qp->unacked >= rc->c->ack_every)) {
			ack = 1;
			qp->unacked = 0;
		}
		if (xi != NO_FLOW)
			rc->done(rc->r, xi, t);
	}
	if (ack) {
		queue_ctl(rc, qp->dst, CTL_ACK, (uint32_t)(qp - rc->qp), qp->epsn - 1,
			  (uint32_t)qp->msn);
		qp->st->acks_tx++;
	}
}

/* A data packet at or past the expected PSN, or a duplicate: counted, NAKed or ACKed again. */
static void rx_out_of_order(struct rp_rc *rc, struct qp *qp, const uint8_t *data,
			    const struct rsw_pkt_meta *m, uint64_t psn)
{
	const struct rsw_coll *c = rc->c;
	uint32_t qi = (uint32_t)(qp - rc->qp);
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
			queue_ctl(rc, qp->dst, CTL_NAK, qi, qp->epsn, (uint32_t)qp->msn);
			qp->st->naks_tx++;
		}
	} else if (m->bth_ackreq) {
		/* a duplicate asking for an ACK: the requester lost ours */
		queue_ctl(rc, qp->dst, CTL_ACK, qi, qp->epsn - 1, (uint32_t)qp->msn);
		qp->st->acks_tx++;
	}
}

static void rx_data(struct rp_rc *rc, struct qp *qp, const uint8_t *data,
		    const struct rsw_pkt_meta *m, uint64_t t)
{
	const struct rsw_coll *c = rc->c;
	uint32_t qi = (uint32_t)(qp - rc->qp);
	uint64_t psn = rsw_psn_unwrap(qp->epsn, m->bth_psn);
	if (c->dcqcn && m->ecn == 3 &&
	    (qp->last_cnp == NEVER || t >= qp->last_cnp + c->dcqcn_p.cnp_interval_ns)) {
		qp->last_cnp = t; /* at most one CNP per QP per interval */
		queue_ctl(rc, qp->dst, CTL_CNP, qi, 0, 0);
		qp->st->cnps_tx++;
	}
	if (psn != qp->epsn) {
		rx_out_of_order(rc, qp, data, m, psn);
		return;
	}
	qp->epsn++;
	qp->nak_sent = 0;
	qp->unacked++;
	int last = m->bth_opcode == OP_WRITE_LAST || m->bth_opcode == OP_WRITE_ONLY;
	struct qp *req = qp; /* both ends share the struct: the message list is the requester's */
	uint32_t xi = NO_FLOW;
	if (last) {
		xi = msg_at(req, qp->msn)->xfer;
		qp->msn++;
	}
	if (last || (c->ack_every && qp->unacked >= c->ack_every)) {
		queue_ctl(rc, qp->dst, CTL_ACK, qi, qp->epsn - 1, (uint32_t)qp->msn);
		qp->st->acks_tx++;
		qp->unacked = 0;
	}
	if (xi != NO_FLOW)
		rc->done(rc->r, xi, t);
	if (qp->ooo.held_pkts)
		drain(rc, qp, t);
}

/* An ACK or NAK reached the requester of qp. */
static void rx_ack(struct rp_rc *rc, struct qp *qp, const uint8_t *data,
		   const struct rsw_pkt_meta *m, uint64_t t)
{
	uint8_t syn = data[m->bth_off + RSW_BTH_LEN];
	uint64_t psn = rsw_psn_unwrap(qp->snd_una, m->bth_psn);
	if ((syn & 0xE0) == AETH_NAK_PSN) {
		qp->st->naks_rx++;
		acked(rc, qp, psn, t);
		go_back(qp, qp->snd_una);
		if (qp->snd_una < qp->snd_max)
			qp->rto_at = t + rc->c->rto_ns;
	} else {
		qp->st->acks_rx++;
		acked(rc, qp, psn + 1, t);
	}
}

/* A CNP reached the requester of qp: DCQCN cuts its rate. */
static void rx_cnp(struct rp_rc *rc, struct qp *qp, uint64_t t)
{
	qp->st->cnps_rx++;
	if (!rc->c->dcqcn)
		return;
	rsw_dcqcn_cnp(&qp->cc, &rc->c->dcqcn_p, t);
	qp->st->rate_cuts++;
	qp->st->min_rate_mbps = (uint64_t)qp->cc.min_rc;
	if (qp->next_tx > t) /* the new rate applies to the packet waiting */
		qp->next_tx = t;
	log_rate(rc->r, qp, t);
}

int rp_rc_rx(struct rp_rc *rc, unsigned h, uint64_t t, const uint8_t *data,
	     const struct rsw_pkt_meta *m)
{
	const struct rsw_coll *c = rc->c;
	if (!(m->flags & RSW_META_F_ROCE))
		return 0;
	uint32_t n = m->bth_dest_qp - QPN_BASE;
	if (m->bth_dest_qp < QPN_BASE || n / c->qps >= rc->n_host)
		return 0;
	unsigned peer = n / c->qps, q = n % c->qps;
	uint8_t op = m->bth_opcode;
	int to_requester = op == OP_ACK || op == OP_SEND_ONLY || op == RSW_OP_CNP;
	int32_t ci = to_requester ? rp_conn_find(rc->conns, h, peer)
				  : rp_conn_find(rc->conns, peer, h);
	if (ci < 0)
		return 0;
	struct qp *qp = &rc->qp[(uint32_t)ci * c->qps + q];
	if (op == OP_ACK) {
		rx_ack(rc, qp, data, m, t);
	} else if (op == OP_SEND_ONLY) {
		rc->granted[ci]++;
		qp->st->cts_rx++;
	} else if (op == RSW_OP_CNP) {
		rx_cnp(rc, qp, t);
	} else if (op >= OP_WRITE_FIRST && op <= OP_WRITE_ONLY && op != 0x09) {
		rx_data(rc, qp, data, m, t);
	} else {
		return 0;
	}
	return 1;
}

/* ---- sending ---- */

/* The oldest control frame of a priority not paused, built; 0 if none. */
static uint32_t next_ctl(struct rp_rc *rc, struct rc_host *lh, uint8_t paused, uint32_t **flow)
{
	for (struct ctl **pk = &lh->head, *prev = NULL; *pk; prev = *pk, pk = &(*pk)->next) {
		struct ctl *k = *pk;
		if (paused & (1u << lh->ctl_prio[k->kind]))
			continue;
		uint32_t len = build_ctl(rc, k);
		*flow = &rc->qp[k->qp].flow[1];
		*pk = k->next;
		if (lh->tail == k)
			lh->tail = prev;
		free(k);
		return len;
	}
	return 0;
}

/* qp's next data packet, built at t: its requester's state moves past it. */
static uint32_t send_data(struct rp_rc *rc, struct qp *qp, uint64_t t)
{
	const struct rsw_coll *c = rc->c;
	const struct msg *mg = msg_at(qp, qp->cur_msg);
	uint32_t len = build_data(rc, qp, mg, qp->snd_nxt);
	qp->sent_packets++;
	qp->sent_bytes += len;
	if (qp->snd_nxt < qp->snd_max)
		qp->st->retransmitted++;
	if (qp->snd_una == qp->snd_max && qp->snd_nxt == qp->snd_max)
		qp->rto_at = t + c->rto_ns; /* first outstanding packet */
	if (c->dcqcn) {
		if (rsw_dcqcn_sent(&qp->cc, &c->dcqcn_p, len))
			log_rate(rc->r, qp, t);
		/* the rate limiter spaces packets by their wire time at Rc */
		if (qp->cc.rc < qp->cc.line)
			qp->next_tx = t + rsw_wire_ns(len, (uint32_t)qp->cc.rc);
	}
	qp->snd_nxt++;
	if (qp->snd_nxt > qp->snd_max)
		qp->snd_max = qp->snd_nxt;
	if (qp->snd_nxt == mg->psn0 + mg->npkts && qp->cur_msg + 1 < qp->n_msg)
		qp->cur_msg++;
	return len;
}

/* Host h's link is free at t: its next frame, control frames first (oldest first, skipping
 * paused priorities), then data from its QPs in turn, built in rc->frame. Returns the frame
 * length or 0; *is_data, and *flow: where the frame's flow is kept. */
static uint32_t next_frame(struct rp_rc *rc, unsigned h, uint64_t t, uint8_t paused,
			   int *is_data, uint32_t **flow)
{
	struct rc_host *lh = &rc->h[h];
	*is_data = 0;
	uint32_t len = next_ctl(rc, lh, paused, flow);
	if (len)
		return len;
	if (paused & (1u << lh->data_prio))
		return 0;
	for (size_t i = 0; i < lh->n_qps; i++) {
		size_t j = (lh->rr + i) % lh->n_qps;
		struct qp *qp = &rc->qp[lh->qps[j]];
		if (!sendable(rc, qp, t))
			continue;
		lh->rr = j + 1;
		*flow = &qp->flow[0];
		*is_data = 1;
		return send_data(rc, qp, t);
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
/* Host h's NIC sends its next frame at t, if its link is free and a frame may go;
 * returns when it should wake next for that (NEVER: nothing to send). */
static uint64_t send_next(struct rp_rc *rc, unsigned h, uint64_t t)
{
	struct replay *r = rc->r;
	struct host_node *hn = &r->host[h];
	struct rc_host *lh = &rc->h[h];
	const struct rsw_coll *c = rc->c;
	uint64_t free_ns = rsw_shaper_free_ns(&hn->shaper);
	if (free_ns > t)
		return free_ns;
	uint8_t paused = r->model->hosts_ignore_pfc ? 0 : rsw_pause_mask(&hn->pause, t);
	int is_data;
	uint32_t *flow;
	uint32_t len = next_frame(rc, h, t, paused, &is_data, &flow);
	uint64_t next = NEVER;
	if (!len) {
		/* nothing may go: wake when a pause ends */
		for (unsigned p = 0; p < 8; p++)
			if ((paused & (1u << p)) && hn->pause.until_ns[p] < next)
				next = hn->pause.until_ns[p];
		return next;
	}
	uint8_t *frame = rc->frame;
	rsw_shaper_send(&hn->shaper, t, len);
	int lost = is_data && injected(c->drop, c->n_drop, h, lh->data_sent);
	if (is_data && injected(c->ce, c->n_ce, h, lh->data_sent))
		mark_ce(frame);
	if (is_data)
		lh->data_sent++;
	if (*flow == NO_FLOW)
		*flow = rp_host_flow(r, h, frame, len);
	rp_host_send(r, h, t, frame, len, *flow, lost, 1); /* built on zeros */
	if (lost)
		r->res->coll->injected_drops++;
	return rsw_shaper_free_ns(&hn->shaper);
}

void rp_rc_wake(struct rp_rc *rc, unsigned h, uint64_t t)
{
	struct replay *r = rc->r;
	timers(rc, h, t);
	uint64_t next = send_next(rc, h, t);
	/* and when a retransmission or DCQCN timer fires, or a rate limiter lets a packet go */
	next = next_wake(rc, h, t, next);
	if (next == NEVER)
		rsw_event_cancel(&r->q, r->id_host + h);
	else
		rp_schedule(r, r->id_host + h, next);
}

/* ---- set-up and results ---- */

static int by_hosts(const void *a, const void *b)
{
	uint32_t x = ((const struct rp_conn_key *)a)->hosts, y = ((const struct rp_conn_key *)b)->hosts;
	return x < y ? -1 : x > y;
}

int rp_conn_map_build(struct rp_conn_map *m, const struct rp_rc_conn *conn, uint32_t n_conn,
		      uint32_t *dup)
{
	m->n = n_conn;
	m->k = malloc((n_conn ? n_conn : 1) * sizeof(*m->k));
	if (!m->k)
		return -1;
	for (uint32_t i = 0; i < n_conn; i++)
		m->k[i] = (struct rp_conn_key){.hosts = (uint32_t)conn[i].src << 16 | conn[i].dst,
					       .conn = i};
	qsort(m->k, n_conn, sizeof(*m->k), by_hosts);
	for (uint32_t i = 1; i < n_conn; i++)
		if (m->k[i].hosts == m->k[i - 1].hosts) {
			*dup = m->k[i].conn < m->k[i - 1].conn ? m->k[i].conn : m->k[i - 1].conn;
			return -2;
		}
	return 0;
}

int32_t rp_conn_find(const struct rp_conn_map *m, unsigned src, unsigned dst)
{
	uint32_t key = (uint32_t)src << 16 | dst, lo = 0, hi = m->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (m->k[mid].hosts < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->k[lo].hosts == key ? (int32_t)m->k[lo].conn : -1;
}

static int add_host_qp(struct rc_host *h, uint32_t qp)
{
	void *p = realloc(h->qps, (h->n_qps + 1) * sizeof(*h->qps));
	if (!p)
		return -1;
	h->qps = p;
	h->qps[h->n_qps++] = qp;
	return 0;
}

/* QP k * qps + q: QP q of connection k, both ends. */
static int build_qps(struct rp_rc *rc, const struct rp_rc_conn *conn,
		     struct rsw_coll_qp_stats *st)
{
	const struct rsw_coll *c = rc->c;
	for (uint32_t k = 0; k < rc->n_qp; k++) {
		struct qp *qp = &rc->qp[k];
		const struct rp_rc_conn *cn = &conn[k / c->qps];
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
		qp->st = &st[k];
		qp->st->host = cn->src;
		qp->st->peer = cn->dst;
		qp->st->q = qp->q;
		if (add_host_qp(&rc->h[cn->src], k) < 0)
			return -1;
	}
	for (uint32_t k = 0; k < rc->n_qp; k++) {
		struct qp *qp = &rc->qp[k];
		qp->last_cnp = NEVER;
		rsw_dcqcn_init(&qp->cc, rc->r->host[qp->src].speed_mbps);
		qp->st->min_rate_mbps = rc->r->host[qp->src].speed_mbps;
	}
	return 0;
}

/* The priority each kind of frame is paused by: classify one of each. */
static void classify_kinds(struct rp_rc *rc)
{
	struct replay *r = rc->r;
	for (unsigned h = 0; h < rc->n_host; h++) {
		struct rc_host *lh = &rc->h[h];
		if (!lh->n_qps)
			continue;
		struct qp *qp = &rc->qp[lh->qps[0]];
		struct msg mg = {.bytes = 1, .npkts = 1};
		lh->data_prio = prio_of(r, h, build_data(rc, qp, &mg, 0), rc->frame);
		for (uint8_t k = CTL_ACK; k <= CTL_CNP; k++) {
			struct ctl ck = {.kind = k, .qp = lh->qps[0]};
			/* control frames leave the responder: classify at the peer's switch */
			uint32_t len = build_ctl(rc, &ck);
			rc->h[qp->dst].ctl_prio[k] = prio_of(r, qp->dst, len, rc->frame);
		}
	}
}

struct rp_rc *rp_rc_new(struct replay *r, const struct rsw_coll *c, const struct rp_rc_conn *conn,
			uint32_t n_conn, const struct rp_conn_map *map,
			struct rsw_coll_qp_stats *st, rp_rc_done_fn *done)
{
	struct rp_rc *rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
	*rc = (struct rp_rc){.r = r, .c = c, .done = done, .conns = map,
			     .n_host = r->model->n_host, .n_qp = n_conn * c->qps};
	/* replay's switches and hosts do not check ICRCs: only captures show them */
	rc->icrc_unread = 1;
	for (unsigned s = 0; s < r->model->n_sw; s++)
		rc->icrc_unread &= !r->sw[s].capturing;
	for (unsigned h = 0; h < rc->n_host; h++)
		rc->icrc_unread &= r->host[h].out.d == NULL;
	rc->h = calloc(rc->n_host ? rc->n_host : 1, sizeof(*rc->h));
	size_t qp_bytes = (rc->n_qp ? rc->n_qp : 1) * sizeof(*rc->qp);
	rc->qp = rp_zalloc_lines(qp_bytes); /* a QP's first line is its own */
	rc->granted = calloc(n_conn ? n_conn : 1, sizeof(*rc->granted));
	if (!rc->h || !rc->qp || !rc->granted || build_qps(rc, conn, st) < 0) {
		rp_rc_free(rc);
		return NULL;
	}
	classify_kinds(rc);
	return rc;
}

uint64_t rp_rc_unsent(const struct rp_rc *rc, unsigned h)
{
	uint64_t n = 0;
	for (const struct ctl *k = rc->h[h].head; k; k = k->next)
		n++;
	return n;
}

void rp_rc_fold(struct rp_rc *rc)
{
	for (uint32_t k = 0; k < rc->n_qp; k++) {
		struct qp *qp = &rc->qp[k];
		qp->st->data_packets += qp->sent_packets;
		qp->st->data_bytes += qp->sent_bytes;
		qp->sent_packets = qp->sent_bytes = 0;
	}
}

void rp_rc_free(struct rp_rc *rc)
{
	if (!rc)
		return;
	for (unsigned h = 0; rc->h && h < rc->n_host; h++) {
		while (rc->h[h].head) {
			struct ctl *k = rc->h[h].head;
			rc->h[h].head = k->next;
			free(k);
		}
		free(rc->h[h].qps);
	}
	for (uint32_t k = 0; rc->qp && k < rc->n_qp; k++) {
		free(rc->qp[k].msg);
		rsw_ooo_free(&rc->qp[k].ooo);
	}
	free(rc->qp);
	free(rc->granted);
	free(rc->h);
	free(rc);
}
