/* The replay engine (replay_engine.h): the agenda's wake-ups dispatched to the nodes' ops, links,
 * and flows followed through the zone. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/parse.h"
#include "dataplane/tables/flow_cache.h"
#include "dataplane/tm/shaper.h"
#include "replay_engine.h"

/* ---- flows ---- */

/* Room in the flows' records for flow fi. Returns 0, or -1 out of memory. */
static int flow_room(struct replay *r, long fi)
{
	if ((size_t)fi < r->fl_cap)
		return 0;
	size_t cap = r->fl_cap ? r->fl_cap * 2 : 1024;
	void *p = realloc(r->fl, cap * sizeof(*r->fl));
	if (!p)
		return -1;
	r->fl = p;
	memset(r->fl + r->fl_cap, 0, (cap - r->fl_cap) * sizeof(*r->fl));
	struct rp_flow_hot *h = rp_zalloc_lines(cap * sizeof(*h));
	if (!h)
		return -1;
	if (r->fl_cap)
		memcpy(h, r->fl_hot, r->fl_cap * sizeof(*h));
	free(r->fl_hot);
	r->fl_hot = h;
	r->fl_cap = cap;
	return 0;
}

uint32_t rp_flow_index(struct replay *r, const struct rsw_pkt_meta *m)
{
	struct rsw_flow_key k;
	struct rsw_replay_order o = rp_order(r);
	rsw_flow_key_of(m, &k);
	/* packets of a flow come in trains: the last flow found is the likely one */
	if (r->last_flow != NO_FLOW && !memcmp(&k, &r->flows.key[r->last_flow], sizeof(k)))
		return r->last_flow;
	long fi = rsw_flow_table_find_add(&r->flows, &k);
	if (fi < 0 || flow_room(r, fi) < 0) {
		r->oom = 1;
		return NO_FLOW;
	}
	if (!r->fl[fi].first.ordered)
		r->fl[fi].first = o;
	r->last_flow = (uint32_t)fi;
	return (uint32_t)fi;
}

void rp_flow_enter(struct replay *r, uint32_t flow, uint64_t t, uint32_t len)
{
	if (flow == NO_FLOW)
		return;
	struct rsw_replay_flow *f = &r->fl[flow];
	if (!f->packets_in++)
		f->first_in_ns = t;
	f->bytes_in += len;
}

void rp_flow_leave(struct replay *r, uint32_t flow, uint64_t done_ns)
{
	if (flow == NO_FLOW)
		return;
	struct rsw_replay_flow *f = &r->fl[flow];
	f->packets_out++;
	if (done_ns > f->done_ns)
		f->done_ns = done_ns;
}

/* A frame of the flow (its tag) put on link direction dir: its path. A flow's frames mostly
 * keep to one path, so the frame's count of links so far is the place to look first. The first
 * RP_HOT_HOPS links of a path are counted in the flow's line of r->fl_hot, which a hop reads
 * alone (at zone scale each line a hop reads is a cache miss); the path's record (f->hop, with
 * each link's first frame) is read only when a flow takes a link it had not taken, or a path is
 * longer. A direction is in the path once, so any search finds the same place. */
static void flow_hop(struct replay *r, struct rp_frame_tag *tag, uint32_t dir, uint32_t len)
{
	if (tag->flow == NO_FLOW)
		return;
	struct rsw_replay_order o = rp_order(r); /* counts every hop of the wake-up */
	struct rp_flow_hot *h = &r->fl_hot[tag->flow];
	uint32_t k = tag->hops;
	if (k >= RP_HOT_HOPS || h->hop[k].dir1 != dir + 1)
		for (k = 0; k < RP_HOT_HOPS && h->hop[k].dir1 != dir + 1; k++)
			;
	if (k < RP_HOT_HOPS) {
		if (!++h->hop[k].packets) /* the counts' carries, into the path's record */
			r->fl[tag->flow].hop[k].packets += 1ull << 32;
		if ((h->hop[k].bytes += len) < len)
			r->fl[tag->flow].hop[k].bytes += 1ull << 32;
		tag->hops = k + 1;
		return;
	}
	struct rsw_replay_flow *f = &r->fl[tag->flow];
	for (k = f->n_hop; k-- > RP_HOT_HOPS && f->hop[k].dir != dir;)
		;
	if (k >= RP_HOT_HOPS && k < f->n_hop) {
		f->hop[k].packets++;
		f->hop[k].bytes += len;
		tag->hops = k + 1;
		return;
	}
	uint32_t n = f->n_hop;
	if (n == 0 || (n >= 4 && !(n & (n - 1)))) { /* capacity 4, 8, 16...: full at those */
		void *p = realloc(f->hop, (n ? 2 * n : 4) * sizeof(*f->hop));
		if (!p) {
			r->oom = 1;
			return;
		}
		f->hop = p;
	}
	int hot = n < RP_HOT_HOPS; /* its counts go in the flow's line */
	f->hop[n] = (struct rsw_replay_hop){
		.dir = dir, .packets = !hot, .bytes = hot ? 0 : len, .first = o};
	if (hot)
		h->hop[n] = (struct rp_hot_hop){.dir1 = dir + 1, .packets = 1, .bytes = len};
	tag->hops = f->n_hop = n + 1;
}

void rp_flows_fold(struct replay *r)
{
	for (size_t i = 0; r->fl_hot && i < r->flows.n; i++) {
		struct rsw_replay_flow *f = &r->fl[i];
		for (uint32_t k = 0; k < f->n_hop && k < RP_HOT_HOPS; k++) {
			f->hop[k].packets += r->fl_hot[i].hop[k].packets;
			f->hop[k].bytes += r->fl_hot[i].hop[k].bytes;
		}
	}
	free(r->fl_hot);
	r->fl_hot = NULL;
}

/* ---- the agenda ---- */

void rp_schedule(struct replay *r, uint32_t id, uint64_t t)
{
	if (rsw_event_at(&r->q, id, t) < 0)
		r->oom = 1;
}

int rp_engine_init(struct replay *r)
{
	const struct rsw_replay_model *md = r->model;
	r->id_host = md->n_in;
	r->id_link = r->id_host + md->n_host;
	r->id_port = r->id_link + 2 * md->n_link;
	r->id_ctrl = r->id_port + md->n_sw * RSW_MAX_PORTS;
	r->id_fault = r->id_ctrl + md->n_sw * RSW_MAX_PORTS;
	return rsw_event_heap_init(&r->q, r->id_fault + 1);
}

/* ---- links ---- */

/* m joins link direction dir's frames on the wire, to arrive whole at t. */
static inline void link_enqueue(struct replay *r, unsigned dir, uint64_t t, struct rte_mbuf *m)
{
	struct link_dir *l = &r->link[dir];
	struct rp_frame_tag *tag = rp_mbuf_tag(&r->mem, m);
	tag->wire_t = t;
	tag->wire_next = NULL;
	if (l->n++)
		rp_mbuf_tag(&r->mem, l->last)->wire_next = m;
	else {
		l->first = m;
		rp_schedule(r, r->id_link + dir, t);
	}
	l->last = m;
}

void rp_link_send(struct replay *r, int dir, uint64_t t_start, struct rte_mbuf *m)
{
	struct link_dir *l = &r->link[dir];
	if (l->down) {
		l->lost++;
		r->res->dropped++;
		rp_frame_free(r, m);
		return;
	}
	/* received whole after its serialization and the propagation; never before the frame
	 * ahead of it (captures replayed as captured may overlap on the wire) */
	flow_hop(r, rp_mbuf_tag(&r->mem, m), (uint32_t)dir, m->pkt_len);
	uint64_t t = t_start + rsw_frame_ns(m->pkt_len, l->speed_mbps) + l->delay_ns;
	if (t < l->last_t)
		t = l->last_t;
	l->last_t = t;
	if (!rp_end_here(r, &l->to)) { /* its receiver is held by another part */
		uint32_t fi = *frame_flow(r, m);
		const uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
		uint32_t held = m->data_len;
		const struct rp_rest *x = rp_mbuf_rest(&r->mem, m);
		if (x && r->linear) { /* the other part gets the frame's bytes, in one piece */
			memcpy(r->linear, data, held);
			memcpy(r->linear + held, x->rest, m->pkt_len - held);
			data = r->linear;
			held = m->pkt_len;
		}
		r->part->send(r->part->arg, (unsigned)dir, t, data, held, m->pkt_len,
			      fi != NO_FLOW ? &r->flows.key[fi] : NULL);
		rp_frame_free(r, m);
		return;
	}
	link_enqueue(r, (unsigned)dir, t, m);
}

void rp_link_lost(struct replay *r, int dir, uint64_t t_start, uint32_t len)
{
	/* logged when it was sent: the event log stays in time order */
	const struct link_dir *l = &r->link[dir];
	uint64_t t = t_start;
	if (!rp_end_here(r, &l->to)) { /* counted here: the far end's part never sees it */
		r->res->dropped++;
		return;
	}
	if (l->to.sw != RSW_TOPO_HOST) {
		r->ops->sw_lost(r, (unsigned)l->to.sw, l->to.idx, t, len);
		return;
	}
	r->ops->host_lost(r, l->to.idx, t);
}

static void link_arrive(struct replay *r, unsigned dir, uint64_t t)
{
	struct link_dir *l = &r->link[dir];
	struct rte_mbuf *m = l->first;
	l->first = rp_mbuf_tag(&r->mem, m)->wire_next;
	if (--l->n)
		rp_schedule(r, r->id_link + dir, rp_mbuf_tag(&r->mem, l->first)->wire_t);
	if (l->to.sw == RSW_TOPO_HOST)
		r->ops->host_rx(r, l->to.idx, t, m);
	else
		r->ops->sw_rx(r, (unsigned)l->to.sw, l->to.idx, t, m);
}

/* ---- the run ---- */

/* A direct input's frame enters its switch at t; its next frame is due. */
static void input_arrive(struct replay *r, uint32_t id, uint64_t t)
{
	const struct rsw_replay_input *ri = &r->model->in[id];
	struct cap_in *in = &r->in[id];
	struct rte_mbuf *m = rp_mbuf(&r->mem, in->data, in->len, in->len, NO_FLOW, 0);
	r->res->entered++;
	r->ops->sw_input(r, ri->sw, ri->port, t, m, in->len);
	rp_cap_next(r, in);
	rp_cap_keep(in, NULL);
	if (!in->eof) /* time never goes back, even if a capture does */
		rp_schedule(r, id, in->t > t ? in->t : t);
}

/* ---- reading ahead ---- */

/* Nearly every wake-up has the next ones due at the same nanosecond, in the agenda's tie group,
 * so which records they read is known before they run. At zone scale each is a miss (what a few
 * thousand flows touch over hundreds of switches is past the L2; past the L3 at thousands of
 * hosts), so the loop asks for them ahead, in stages as each record's pointers to the next
 * become readable: for a link's arrival, three wake-ups ahead the link, then the frame's buffer
 * and its receiver's node, then the frame's headers, its flow's line and the receiver's records
 * (with where the port's last frame went: its flow-cache entry and egress queue), and last the
 * flow-cache entry the flow's last frame took at that switch (kept in the flow's line), the
 * receiver's classifier and next hop. Nothing it reads changes what the run does. */
#define AHEAD 4

static void ahead(const struct replay *r, uint32_t id, unsigned stage)
{
	if (id >= r->id_link && id < r->id_port) {
		const struct link_dir *l = &r->link[id - r->id_link];
		if (stage == 3) {
			__builtin_prefetch(l);
			return;
		}
		if (!l->n)
			return;
		struct rte_mbuf *m = l->first;
		if (stage == 2) {
			__builtin_prefetch(m);
			__builtin_prefetch((const char *)m + 64);
			if (l->to.sw != RSW_TOPO_HOST)
				r->ops->sw_rx_ahead(r, (unsigned)l->to.sw, l->to.idx, 2);
			return;
		}
		if (stage == 1) {
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t fi = rp_mbuf_tag(&r->mem, m)->flow;
			__builtin_prefetch(d);
			__builtin_prefetch(d + 64);
			if (fi != NO_FLOW)
				__builtin_prefetch(&r->fl_hot[fi]);
			if (l->to.sw != RSW_TOPO_HOST)
				r->ops->sw_rx_ahead(r, (unsigned)l->to.sw, l->to.idx, 1);
			return;
		}
		/* the flow's line, asked for a stage ago: where its last frame's decision was kept at
		 * the switch this link leads to */
		if (l->to.sw == RSW_TOPO_HOST)
			return;
		const struct rp_frame_tag *tg = rp_mbuf_tag(&r->mem, m);
		uint32_t k = tg->hops - 1;
		if (tg->flow != NO_FLOW && k < RP_HOT_HOPS && r->decided &&
		    r->fl_hot[tg->flow].hop[k].dir1 == id - r->id_link + 1) {
			rsw_flow_cache_prefetch(r->decided, r->fl_hot[tg->flow].hop[k].fc_slot);
		}
		r->ops->sw_rx_ahead(r, (unsigned)l->to.sw, l->to.idx, 0);
	} else if (id >= r->id_port && id < r->id_ctrl && stage) {
		/* (a port's last stage has nothing left to ask for) */
		unsigned sp = id - r->id_port;
		r->ops->sw_tx_ahead(r, sp / RSW_MAX_PORTS, (uint16_t)(sp % RSW_MAX_PORTS), stage);
	}
}

static void read_ahead(const struct replay *r)
{
	uint32_t n;
	const uint32_t *id = rsw_event_ties(&r->q, &n);
	for (unsigned k = n < AHEAD ? n : AHEAD; k-- > 0;)
		ahead(r, id[k], k);
}

static void dispatch(struct replay *r, const struct rsw_wake *w)
{
	uint64_t t = w->t;
	uint32_t id = w->id;
	if (id < r->id_host) {
		input_arrive(r, id, t);
	} else if (id < r->id_link) {
		r->host_ops->wake(r, id - r->id_host, t);
	} else if (id < r->id_port) {
		link_arrive(r, id - r->id_link, t);
	} else if (id < r->id_ctrl) {
		unsigned s = (id - r->id_port) / RSW_MAX_PORTS, p = (id - r->id_port) % RSW_MAX_PORTS;
		r->ops->sw_tx(r, s, (uint16_t)p, t);
	} else if (id == r->id_fault) {
		r->ops->due(r, t);
	} else {
		unsigned s = (id - r->id_ctrl) / RSW_MAX_PORTS, p = (id - r->id_ctrl) % RSW_MAX_PORTS;
		r->ops->sw_ctrl(r, s, (uint16_t)p, t);
	}
}

void rp_engine_sample_to(struct replay *r, uint64_t t)
{
	if (!r->log.f || !r->sample_ns || t < r->next_sample)
		return;
	/* each period start up to t finds the zone as the last wake-up left it, before any wake-up
	 * of that nanosecond runs: what a sample sees depends neither on the order within a
	 * nanosecond nor on which switches other wake-ups were for (nor, in a part, on which
	 * switches are here: replay_part.h) */
	uint64_t last = t - t % r->sample_ns;
	r->ops->sw_sample_all(r, r->next_sample, last, r->sample_ns);
	r->next_sample = last + r->sample_ns;
}

int rp_engine_grid_at(struct replay *r, uint64_t at, int armed, uint64_t upto, int sample)
{
	uint64_t step = r->dl_step_ns;
	r->dl_armed = 0;
	if (!armed && !r->dl_watching) { /* the points up to upto see what this one sees */
		r->dl_next_ns = (upto / step + 1) * step;
		return 0;
	}
	r->dl_next_ns = at + step;
	if (sample)
		rp_engine_sample_to(r, at); /* the period's samples come first */
	rp_log_check(&r->log, at);
	r->ops->deadlock(r, at);
	return r->oom ? -1 : 0;
}

/* Out of line, so a profile can collect the event loop alone by this function's name
 * (docs/performance.md). */
__attribute__((noinline)) void rp_engine_run_one(struct replay *r)
{
	struct rsw_wake w;
	int got = rsw_event_pop(&r->q, &w);
	if (r->q.failed) /* a wheel slot could not grow: the run stops, out of memory */
		r->oom = 1;
	if (!got)
		return;
	if (!r->res->entered && !r->res->generated)
		r->res->start_ns = w.t;
	r->wake_t = w.t;
	r->wake_id = w.id;
	r->wake_n = 0;
	while (w.t >= r->dl_next_ns && !r->part && !r->oom) /* (a part's carrier runs it) */
		rp_engine_grid_at(r, r->dl_next_ns, r->dl_armed, w.t, 1);
	if (r->log.f && r->sample_ns && w.t >= r->next_sample)
		rp_engine_sample_to(r, w.t);
	rp_log_wake(&r->log, w.t, w.id);
	if (r->log.oom)
		r->oom = 1;
	if (r->read_ahead)
		read_ahead(r);
	dispatch(r, &w);
	r->n_events++;
}

uint64_t rsw_replay_part_next(const struct replay *r)
{
	return rsw_event_peek(&r->q);
}

uint64_t rsw_replay_part_last(const struct replay *r)
{
	return r->wake_t;
}

void rsw_replay_part_sample_to(struct replay *r, uint64_t t)
{
	rp_engine_sample_to(r, t);
}

uint64_t rsw_replay_part_dl_next(const struct replay *r)
{
	return r->dl_next_ns;
}

int rsw_replay_part_dl_armed(const struct replay *r)
{
	return r->dl_armed;
}

int rsw_replay_part_dl_at(struct replay *r, uint64_t at, int armed, uint64_t upto, int sample)
{
	return rp_engine_grid_at(r, at, armed, upto, sample);
}

int rsw_replay_part_run_at(struct replay *r, uint64_t t)
{
	while (!rp_engine_failed(r) && rsw_event_peek(&r->q) == t)
		rp_engine_run_one(r);
	return rp_engine_failed(r) ? -1 : 0;
}

void rsw_replay_part_deliver(struct replay *r, unsigned dir, uint64_t t, const uint8_t *data,
			     uint32_t held, uint32_t len, const struct rsw_flow_key *flow)
{
	uint32_t fi = NO_FLOW;
	if (flow) {
		long f = rsw_flow_table_find_add(&r->flows, flow);
		if (f < 0 || flow_room(r, f) < 0)
			r->oom = 1;
		else
			fi = (uint32_t)f;
	}
	struct rte_mbuf *m = rp_mbuf(&r->mem, data, len, held, fi, 0);
	if (!m) {
		rp_link_lost(r, (int)dir, t, len);
		return;
	}
	link_enqueue(r, dir, t, m);
}

void rp_engine_free(struct replay *r)
{
	for (unsigned i = 0; r->link && i < 2 * r->model->n_link; i++) {
		struct link_dir *l = &r->link[i];
		for (struct rte_mbuf *m = l->first, *next; l->n; m = next, l->n--) {
			next = rp_mbuf_tag(&r->mem, m)->wire_next;
			rte_pktmbuf_free(m);
		}
	}
	free(r->link);
	r->link = NULL;
	rsw_event_heap_free(&r->q);
	/* (on success the run handed the flows to the result and r->fl is NULL) */
	for (size_t i = 0; r->fl && i < r->flows.n; i++)
		free(r->fl[i].hop);
	rsw_flow_table_free(&r->flows);
	free(r->fl);
	r->fl = NULL;
	free(r->fl_hot);
	r->fl_hot = NULL;
}
