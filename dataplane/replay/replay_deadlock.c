/* PFC deadlock: a cyclic buffer dependency found in the switches' own state (docs/replay.md,
 * "PFC deadlock"). The wait-for graph of paused queues and its cycle search are shared with the
 * live zone (dataplane/tm/pfc_wait.h); this file builds the graph from replay's switches and
 * links and keeps what a run reports.
 *
 * Checked on a grid of virtual time, every hold / 8, never per frame (the engine's grid,
 * rp_engine_grid_at): at a point when a switch sent a PFC frame or a watchdog acted since the
 * last point, or while the last check saw a cycle; and once at the end of the run. A check at T
 * sees the zone as the wake-ups before T left it, so what it finds depends neither on the order of wake-ups within a nanosecond nor on
 * which process holds which switch. A cycle is reported once, when it has been held for the
 * hold time, with the time it formed (the last member's pause began) and the flows of the
 * frames in its queues.
 *
 * In a part of a zone (replay_part.h) each part reads its own switches (their paused queues,
 * their PGs over XOFF), the parts exchange what they read, and every part builds the same graph
 * and reaches the same reports; the frames and flows of a new report's queues are exchanged
 * the same way. The part of rank 0 writes the events. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/addr.h"
#include "dataplane/tm/pfc_wait.h"
#include "dataplane/tm/tm.h"
#include "replay_deadlock.h"
#include "replay_engine.h"
#include "replay_node.h"
#include "room.h"

/* What a switch reads of itself, handed to the other parts: a paused queue that holds frames
 * and the start of its pause; a port with PGs over XOFF. */
struct dl_queue {
	struct rsw_pfc_wait_node node;
	uint64_t since;
};

struct dl_xoff {
	uint16_t sw, port;
	uint32_t pgs;
};

/* A new report's member queue as its switch reads it, then n_flow struct dl_flow_rec */
struct dl_member_rec {
	uint32_t dl, member, n_flow, pad;
	uint64_t frames, bytes;
};

struct dl_flow_rec {
	struct rsw_flow_key key;
	uint64_t frames;
};

struct buf {
	char *b;
	size_t n, cap;
	int oom;
};

struct rp_deadlock {
	struct rsw_pfc_wait g;
	struct dl_queue *q;           /* the graph's nodes, with the start of their pauses */
	size_t q_cap;
	struct dl_xoff *x;
	unsigned n_x;
	size_t x_cap;
	uint8_t *seen;                /* per reported deadlock: found by this check */
	unsigned seen_cap;
	unsigned first_new;           /* the reports of this check: deadlock[first_new..] */
	struct buf mine;
};

static void put(struct buf *b, const void *d, size_t len)
{
	if (b->oom || !len)
		return;
	if (rp_room((void **)&b->b, &b->cap, b->n + len, 1) < 0) {
		b->oom = 1;
		return;
	}
	memcpy(b->b + b->n, d, len);
	b->n += len;
}

/* Every part's bytes, in rank order (one part: its own). Returns 0, -1 out of memory. */
static int exchange(struct replay *r, const struct buf *mine, char **all, size_t *len)
{
	if (mine->oom)
		return -1;
	if (!r->part) {
		*all = mine->b;
		*len = mine->n;
		return 0;
	}
	return r->part->gather(r->part->arg, mine->b, mine->n, all, len);
}

static void exchanged(struct replay *r, char *all)
{
	if (r->part)
		free(all);
}

/* This part's switches at t: their paused, non-empty queues whose peer is a switch, then their
 * ports facing a switch with PGs over XOFF, after a count of each. */
static void read_mine(struct replay *r, struct rp_deadlock *d, uint64_t t)
{
	const struct rsw_replay_model *md = r->model;
	struct buf *b = &d->mine;
	uint32_t n[2] = {0, 0};
	b->n = 0;
	put(b, n, sizeof(n));
	d->n_x = 0;
	for (unsigned s = 0; s < md->n_sw; s++) {
		const struct sw_node *nd = &r->sw[s];
		if (!rp_sw_here(r, s))
			continue;
		for (uint16_t p = 0; p < nd->fib->n_ports; p++) {
			const struct rsw_tm_port *tp = rsw_tm_port_read(nd->tm, p);
			int dir = nd->port[p].tx_link;
			if (dir < 0 || r->link[dir].to.sw == RSW_TOPO_HOST)
				continue; /* a host's link: a cycle through a host is not a deadlock */
			const struct rsw_topo_end *to = &r->link[dir].to;
			if (tp->xoff_pgs) {
				if (rp_room((void **)&d->x, &d->x_cap, d->n_x + 1, sizeof(*d->x)) < 0)
					b->oom = 1;
				else
					d->x[d->n_x++] = (struct dl_xoff){.sw = (uint16_t)s, .port = p,
									  .pgs = tp->xoff_pgs};
			}
			for (unsigned bits = rsw_pause_mask(&tp->pause, t); bits; bits &= bits - 1) {
				unsigned q = (unsigned)__builtin_ctz(bits);
				if (!rsw_tm_queue_bytes(nd->tm, p, q))
					continue;
				struct dl_queue a = {
					.node = {.sw = (uint16_t)s, .port = p, .prio = (uint8_t)q,
						 .peer_sw = (uint16_t)to->sw, .peer_port = to->idx},
					.since = rsw_pause_since(&tp->pause, q, t)};
				rsw_pfc_wait_sources(&a.node, nd->tm);
				put(b, &a, sizeof(a));
				n[0]++;
			}
		}
	}
	n[1] = d->n_x;
	put(b, d->x, (size_t)d->n_x * sizeof(*d->x));
	if (!b->oom)
		memcpy(b->b, n, sizeof(n));
}

static int queue_cmp(const void *a, const void *b)
{
	const struct rsw_pfc_wait_node *x = &((const struct dl_queue *)a)->node;
	const struct rsw_pfc_wait_node *y = &((const struct dl_queue *)b)->node;
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int xoff_cmp(const void *a, const void *b)
{
	const struct dl_xoff *x = a, *y = b;
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* The graph of every part's reading: the queues whose peer has that priority's PG over XOFF,
 * in (switch, port, priority) order, as one process reads them. Returns 0, -1 out of memory. */
static int build(struct replay *r, struct rp_deadlock *d, const char *all, size_t len)
{
	unsigned nq = 0;
	d->n_x = 0;
	for (size_t at = 0; at < len;) {
		uint32_t n[2];
		memcpy(n, all + at, sizeof(n));
		at += sizeof(n);
		if (rp_room((void **)&d->q, &d->q_cap, nq + n[0], sizeof(*d->q)) < 0 ||
		    rp_room((void **)&d->x, &d->x_cap, d->n_x + n[1], sizeof(*d->x)) < 0)
			return -1;
		if (n[0]) /* (no array yet when nothing was ever read) */
			memcpy(d->q + nq, all + at, (size_t)n[0] * sizeof(*d->q));
		at += (size_t)n[0] * sizeof(*d->q);
		if (n[1])
			memcpy(d->x + d->n_x, all + at, (size_t)n[1] * sizeof(*d->x));
		at += (size_t)n[1] * sizeof(*d->x);
		nq += n[0];
		d->n_x += n[1];
	}
	if (nq)
		qsort(d->q, nq, sizeof(*d->q), queue_cmp);
	if (d->n_x)
		qsort(d->x, d->n_x, sizeof(*d->x), xoff_cmp);
	if (rsw_pfc_wait_begin(&d->g, r->model->n_sw) < 0)
		return -1;
	unsigned kept = 0;
	for (unsigned i = 0; i < nq; i++) {
		const struct rsw_pfc_wait_node *a = &d->q[i].node;
		struct dl_xoff key = {.sw = a->peer_sw, .port = a->peer_port};
		const struct dl_xoff *x =
			d->n_x ? bsearch(&key, d->x, d->n_x, sizeof(*d->x), xoff_cmp) : NULL;
		if (!x || !((x->pgs >> a->prio) & 1))
			continue; /* its peer does not hold it back any more */
		if (!rsw_pfc_wait_put(&d->g, a))
			return -1;
		d->q[kept++] = d->q[i]; /* d->q[k]: the graph's node k */
	}
	return 0;
}

static int member_cmp(const struct rsw_replay_dl_member *x, const struct rsw_replay_dl_member *y)
{
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int same_members(const struct rsw_replay_dl_member *x,
			const struct rsw_replay_dl_member *y, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (member_cmp(&x[i], &y[i]))
			return 0;
	return 1;
}

/* A cycle the search closed: reported if held long enough and new. */
static int found(struct replay *r, struct rp_deadlock *d, const unsigned *cyc, unsigned len,
		 uint64_t t)
{
	uint64_t formed = 0;
	for (unsigned i = 0; i < len; i++)
		formed = d->q[cyc[i]].since > formed ? d->q[cyc[i]].since : formed;
	struct rsw_replay_dl_member *c = calloc(len, sizeof(*c));
	if (!c)
		return -1;
	for (unsigned i = 0; i < len; i++) { /* the lowest member first: one name per cycle */
		const struct rsw_pfc_wait_node *a = &d->g.node[cyc[i]];
		c[i] = (struct rsw_replay_dl_member){.sw = a->sw, .port = a->port, .prio = a->prio};
	}
	struct rsw_replay_result *res = r->res;
	for (unsigned k = 0; k < res->n_deadlock; k++) {
		const struct rsw_replay_deadlock *o = &res->deadlock[k];
		if (o->formed_ns == formed && o->n_member == len && !o->broken_ns &&
		    same_members(o->member, c, len)) {
			d->seen[k] = 1;
			free(c);
			return 0;
		}
	}
	if (t - formed < res->deadlock_hold_ns) {
		free(c);
		return 0;
	}
	if (res->n_deadlock == d->seen_cap) { /* room for one more in both */
		unsigned cap = d->seen_cap ? 2 * d->seen_cap : 4;
		void *x = realloc(res->deadlock, cap * sizeof(*res->deadlock));
		if (x)
			res->deadlock = x;
		void *y = x ? realloc(d->seen, cap) : NULL;
		if (!y) {
			free(c);
			return -1;
		}
		d->seen = y;
		d->seen_cap = cap;
	}
	res->deadlock[res->n_deadlock] = (struct rsw_replay_deadlock){
		.formed_ns = formed, .found_ns = t, .member = c, .n_member = len};
	d->seen[res->n_deadlock++] = 1;
	return 0;
}

struct search_ctx {
	struct replay *r;
	struct rp_deadlock *d;
	uint64_t t;
	unsigned cycles;
};

static int on_cycle(void *arg, const unsigned *cyc, unsigned len)
{
	struct search_ctx *x = arg;
	x->cycles++;
	return found(x->r, x->d, cyc, len, x->t);
}

/* ---- a new report's frames and flows, read by the parts holding its queues ---- */

struct flow_acc {
	struct replay *r;
	struct dl_flow_rec *f;
	unsigned n;
	size_t cap;
	int oom;
};

static int add_flow(void *arg, struct rte_mbuf *m)
{
	struct flow_acc *fa = arg;
	uint32_t f = *frame_flow(fa->r, m);
	if (f == NO_FLOW)
		return 0;
	const struct rsw_flow_key *k = &fa->r->flows.key[f];
	for (unsigned i = 0; i < fa->n; i++)
		if (!memcmp(&fa->f[i].key, k, sizeof(*k))) {
			fa->f[i].frames++;
			return 0;
		}
	if (rp_room((void **)&fa->f, &fa->cap, fa->n + 1, sizeof(*fa->f)) < 0) {
		fa->oom = 1;
		return 1;
	}
	fa->f[fa->n++] = (struct dl_flow_rec){.key = *k, .frames = 1};
	return 0;
}

/* Each member of this check's reports held here: its frames, bytes and flows. */
static int read_members(struct replay *r, struct rp_deadlock *d)
{
	struct buf *b = &d->mine;
	struct flow_acc fa = {.r = r};
	b->n = 0;
	for (unsigned k = d->first_new; k < r->res->n_deadlock; k++) {
		const struct rsw_replay_deadlock *dl = &r->res->deadlock[k];
		for (unsigned i = 0; i < dl->n_member; i++) {
			const struct rsw_replay_dl_member *m = &dl->member[i];
			if (!rp_sw_here(r, m->sw))
				continue;
			struct rsw_tm *tm = r->sw[m->sw].tm;
			fa.n = 0;
			struct dl_member_rec rec = {.dl = k, .member = i};
			rec.frames = rsw_tm_queue_walk(tm, m->port, m->prio, add_flow, &fa);
			rec.bytes = rsw_tm_queue_bytes(tm, m->port, m->prio);
			rec.n_flow = fa.n;
			put(b, &rec, sizeof(rec));
			put(b, fa.f, (size_t)fa.n * sizeof(*fa.f));
		}
	}
	free(fa.f);
	return fa.oom || b->oom ? -1 : 0;
}

/* Flows by their addresses, then ports and QP: an order no part's numbering decides. */
static int flow_cmp(const void *a, const void *b)
{
	const struct rsw_replay_dl_flow *x = a, *y = b;
	int c = memcmp(x->key.src, y->key.src, 16);
	if (!c)
		c = memcmp(x->key.dst, y->key.dst, 16);
	if (c)
		return c;
	if (x->key.sport != y->key.sport)
		return x->key.sport < y->key.sport ? -1 : 1;
	if (x->key.dport != y->key.dport)
		return x->key.dport < y->key.dport ? -1 : 1;
	if (x->key.qp != y->key.qp)
		return x->key.qp < y->key.qp ? -1 : 1;
	return x->key.proto < y->key.proto ? -1 : x->key.proto > y->key.proto;
}

static int add_flows(struct rsw_replay_deadlock *dl, const struct dl_flow_rec *f, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		unsigned i;
		for (i = 0; i < dl->n_flow; i++)
			if (!memcmp(&dl->flow[i].key, &f[j].key, sizeof(f[j].key)))
				break;
		if (i < dl->n_flow) {
			dl->flow[i].frames += f[j].frames;
			continue;
		}
		if (!(dl->n_flow & (dl->n_flow - 1)) || !dl->n_flow) { /* capacity 1, 2, 4...: full */
			void *x = realloc(dl->flow, (dl->n_flow ? 2 * dl->n_flow : 1) * sizeof(*dl->flow));
			if (!x)
				return -1;
			dl->flow = x;
		}
		dl->flow[dl->n_flow++] = (struct rsw_replay_dl_flow){
			.flow = UINT32_MAX, .key = f[j].key, .frames = f[j].frames};
	}
	return 0;
}

/* Every part's members of this check's reports into them; their flows in key order, each with
 * its index in this process's flows (a part's are numbered again when the parts merge). */
static int fill_members(struct replay *r, struct rp_deadlock *d, const char *all, size_t len)
{
	struct rsw_replay_result *res = r->res;
	for (size_t at = 0; at < len;) {
		struct dl_member_rec rec;
		memcpy(&rec, all + at, sizeof(rec));
		at += sizeof(rec);
		struct rsw_replay_deadlock *dl = &res->deadlock[rec.dl];
		dl->member[rec.member].frames = rec.frames;
		dl->member[rec.member].bytes = rec.bytes;
		struct dl_flow_rec *f = malloc((rec.n_flow + 1) * sizeof(*f));
		if (!f)
			return -1;
		memcpy(f, all + at, rec.n_flow * sizeof(*f));
		at += rec.n_flow * sizeof(*f);
		int rc = add_flows(dl, f, rec.n_flow);
		free(f);
		if (rc < 0)
			return -1;
	}
	for (unsigned k = d->first_new; k < res->n_deadlock; k++) {
		struct rsw_replay_deadlock *dl = &res->deadlock[k];
		if (dl->n_flow)
			qsort(dl->flow, dl->n_flow, sizeof(*dl->flow), flow_cmp);
		for (unsigned i = 0; !r->part && i < dl->n_flow; i++) {
			long f = rsw_flow_table_find_add(&r->flows, &dl->flow[i].key);
			if (f < 0)
				return -1;
			dl->flow[i].flow = (uint32_t)f;
		}
	}
	return 0;
}

/* ---- the event log ---- */

static void event_found(struct replay *r, const struct rsw_replay_deadlock *dl)
{
	json_t *f = json_object(), *cyc = json_array(), *fl = json_array();
	json_object_set_new(f, "formed_ns", json_integer((json_int_t)dl->formed_ns));
	for (unsigned i = 0; i < dl->n_member; i++) {
		const struct rsw_replay_dl_member *m = &dl->member[i];
		json_array_append_new(cyc, json_pack(
			"{s:s, s:s, s:i, s:I, s:I}", "switch", r->sw[m->sw].name, "port",
			r->sw[m->sw].fib->ports[m->port].name, "priority", m->prio, "frames",
			(json_int_t)m->frames, "bytes", (json_int_t)m->bytes));
	}
	json_object_set_new(f, "cycle", cyc);
	for (unsigned i = 0; i < dl->n_flow; i++) {
		const struct rsw_flow_key *k = &dl->flow[i].key;
		struct rsw_ip a = {.family = k->l3 == 2 ? 6 : 4}, b = a;
		char sa[64], sb[64];
		memcpy(a.a, k->src, 16);
		memcpy(b.a, k->dst, 16);
		json_array_append_new(fl, json_pack(
			"{s:s, s:s, s:i, s:i, s:I, s:I}", "src", rsw_ip_str(&a, sa, sizeof(sa)),
			"dst", rsw_ip_str(&b, sb, sizeof(sb)), "sport", k->sport, "dport", k->dport,
			"dest_qp", (json_int_t)k->qp, "frames", (json_int_t)dl->flow[i].frames));
	}
	json_object_set_new(f, "flows", fl);
	rp_event(r, dl->found_ns, "pfc_deadlock", NULL, NULL, NULL, f);
}

static void event_broken(struct replay *r, const struct rsw_replay_deadlock *dl)
{
	json_t *f = json_object();
	json_object_set_new(f, "formed_ns", json_integer((json_int_t)dl->formed_ns));
	const struct rsw_replay_dl_member *m = &dl->member[0];
	json_object_set_new(f, "first_switch", json_string(r->sw[m->sw].name));
	json_object_set_new(f, "first_port", json_string(r->sw[m->sw].fib->ports[m->port].name));
	json_object_set_new(f, "priority", json_integer(m->prio));
	rp_event(r, dl->broken_ns, "pfc_deadlock_end", NULL, NULL, NULL, f);
}

/* ---- the check ---- */

void rp_deadlock_check(struct replay *r, uint64_t t)
{
	struct rp_deadlock *d = r->dl;
	struct rsw_replay_result *res = r->res;
	if (!d) {
		d = r->dl = calloc(1, sizeof(*d));
		if (!d)
			goto oom;
	}
	char *all;
	size_t len;
	read_mine(r, d, t);
	if (exchange(r, &d->mine, &all, &len) < 0)
		goto oom;
	int rc = build(r, d, all, len);
	exchanged(r, all);
	if (rc < 0)
		goto oom;
	if (res->n_deadlock)
		memset(d->seen, 0, res->n_deadlock);
	d->first_new = res->n_deadlock;
	struct search_ctx x = {.r = r, .d = d, .t = t};
	if (rsw_pfc_wait_search(&d->g, on_cycle, &x) < 0)
		goto oom;
	r->dl_watching = x.cycles > 0;
	if (res->n_deadlock > d->first_new) { /* every part decides alike: all exchange */
		if (read_members(r, d) < 0 || exchange(r, &d->mine, &all, &len) < 0)
			goto oom;
		rc = fill_members(r, d, all, len);
		exchanged(r, all);
		if (rc < 0)
			goto oom;
	}
	int log = r->log.f && (!r->part || !r->part->rank);
	for (unsigned k = d->first_new; log && k < res->n_deadlock; k++)
		event_found(r, &res->deadlock[k]);
	for (unsigned k = 0; k < d->first_new; k++) {
		struct rsw_replay_deadlock *dl = &res->deadlock[k];
		if (!d->seen[k] && !dl->broken_ns) {
			dl->broken_ns = t;
			if (log)
				event_broken(r, dl);
		}
	}
	return;
oom:
	r->oom = 1;
}

void rp_deadlock_free(struct replay *r)
{
	struct rp_deadlock *d = r->dl;
	if (!d)
		return;
	rsw_pfc_wait_free(&d->g);
	free(d->q);
	free(d->x);
	free(d->seen);
	free(d->mine.b);
	free(d);
	r->dl = NULL;
}

