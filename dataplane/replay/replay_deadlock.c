/* PFC deadlock: a cyclic buffer dependency found in the switches' own state (docs/replay.md,
 * "PFC deadlock"; Hu et al., HotNets 2016). A node of the wait-for graph is an egress queue
 * (switch, port, priority) that holds frames, is paused, and whose peer switch has the ingress PG
 * of that priority over XOFF. Node A waits on node B when B is a paused queue of A's peer switch
 * holding frames that came in through that PG (the TM's tag: in_port, pg): A cannot send until
 * that PG drains, and it cannot drain until B sends. A cycle of such nodes never drains by
 * itself: PFC's refreshes keep every member paused.
 *
 * Checked when a switch sends a PFC frame (at most every hold / 8 of virtual time) and when a
 * watchdog acts, never per frame; a cycle is reported once, when it has been held for the hold
 * time, with the time it formed (the last member's pause began) and the flows of the frames in
 * its queues. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/addr.h"
#include "dataplane/tm/tm.h"
#include "replay_int.h"

#define DL_SRC_MAX 32 /* distinct (in_port, pg) kept per queue; more: waits on every PG */

struct dl_node {
	uint16_t sw, port, peer_sw, peer_port;
	uint8_t prio, all_src, n_src;
	uint16_t src[DL_SRC_MAX];     /* in_port << 3 | pg of the frames it holds */
};

struct rp_deadlock {
	struct dl_node *node;
	unsigned n, cap;
	unsigned *first;              /* per switch + 1: its nodes are node[first[s] .. first[s+1]) */
	unsigned *next_j, *stack;     /* DFS: successor cursor, path */
	uint8_t *color;               /* 0 new, 1 on the path, 2 done */
	uint8_t *seen;                /* per reported deadlock: found by this check */
	unsigned seen_cap;
};

static int add_src(void *arg, struct rte_mbuf *m)
{
	struct dl_node *a = arg;
	const struct rsw_tm_tag *tg = rsw_tm_tag(m);
	uint16_t k = (uint16_t)(tg->in_port << 3 | (tg->pg & 7));
	for (unsigned i = 0; i < a->n_src; i++)
		if (a->src[i] == k)
			return 0;
	if (a->n_src == DL_SRC_MAX) {
		a->all_src = 1;
		return 1;
	}
	a->src[a->n_src++] = k;
	return 0;
}

/* The paused, non-empty queues whose peer is a switch with that priority's PG over XOFF. */
static int collect(struct replay *r, struct rp_deadlock *d, uint64_t t)
{
	const struct rsw_replay_model *md = r->model;
	d->n = 0;
	for (unsigned s = 0; s < md->n_sw; s++) {
		const struct sw_node *n = &r->sw[s];
		d->first[s] = d->n;
		for (uint16_t p = 0; p < n->fib->n_ports; p++) {
			const struct rsw_tm_port *tp = &n->tm->port[p];
			int dir = n->tx_link[p];
			if (dir < 0 || r->link[dir].to.sw == RSW_TOPO_HOST)
				continue; /* a host's link: a cycle through a host is not a deadlock */
			uint8_t paused = rsw_pause_mask(&tp->pause, t);
			const struct rsw_topo_end *to = &r->link[dir].to;
			const struct rsw_tm_port *pp = &r->sw[to->sw].tm->port[to->idx];
			for (unsigned bits = paused & pp->xoff_pgs; bits; bits &= bits - 1) {
				unsigned q = (unsigned)__builtin_ctz(bits);
				if (!rsw_tm_queue_bytes(n->tm, p, q))
					continue;
				if (d->n == d->cap) {
					unsigned cap = d->cap ? 2 * d->cap : 64;
					void *x = realloc(d->node, cap * sizeof(*d->node));
					if (!x)
						return -1;
					d->node = x;
					d->cap = cap;
				}
				struct dl_node *a = &d->node[d->n++];
				*a = (struct dl_node){.sw = (uint16_t)s, .port = p, .prio = (uint8_t)q,
						      .peer_sw = (uint16_t)to->sw,
						      .peer_port = to->idx};
				rsw_tm_queue_walk(n->tm, p, q, add_src, a);
			}
		}
	}
	d->first[md->n_sw] = d->n;
	return 0;
}

/* Does A wait on B: B, on A's peer switch, holds frames of the PG that pauses A? */
static int waits_on(const struct dl_node *a, const struct dl_node *b)
{
	if (b->sw != a->peer_sw)
		return 0;
	if (b->all_src)
		return 1;
	uint16_t k = (uint16_t)(a->peer_port << 3 | a->prio);
	for (unsigned i = 0; i < b->n_src; i++)
		if (b->src[i] == k)
			return 1;
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

struct flow_acc {
	struct replay *r;
	struct rsw_replay_deadlock *dl;
	int oom;
};

static int add_flow(void *arg, struct rte_mbuf *m)
{
	struct flow_acc *fa = arg;
	struct rsw_replay_deadlock *dl = fa->dl;
	uint32_t f = *frame_flow(fa->r, m);
	if (f == NO_FLOW)
		return 0;
	for (unsigned i = 0; i < dl->n_flow; i++)
		if (dl->flow[i].flow == f) {
			dl->flow[i].frames++;
			return 0;
		}
	if (!(dl->n_flow & (dl->n_flow - 1)) || !dl->n_flow) { /* capacity 1, 2, 4...: full */
		void *x = realloc(dl->flow, (dl->n_flow ? 2 * dl->n_flow : 1) * sizeof(*dl->flow));
		if (!x) {
			fa->oom = 1;
			return 1;
		}
		dl->flow = x;
	}
	dl->flow[dl->n_flow++] = (struct rsw_replay_dl_flow){.flow = f, .frames = 1};
	return 0;
}

static int flow_cmp(const void *a, const void *b)
{
	const struct rsw_replay_dl_flow *x = a, *y = b;
	return x->flow < y->flow ? -1 : x->flow > y->flow;
}

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
		const struct rsw_flow_key *k = &r->flows.key[dl->flow[i].flow];
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

/* The cycle on the DFS path from stack[from] to its top: reported if held long enough and new. */
static int found(struct replay *r, struct rp_deadlock *d, unsigned from, unsigned depth,
		 uint64_t t)
{
	unsigned len = depth - from, lo = 0;
	struct rsw_replay_dl_member *m = calloc(len, sizeof(*m));
	if (!m)
		return -1;
	uint64_t formed = 0;
	for (unsigned i = 0; i < len; i++) {
		const struct dl_node *a = &d->node[d->stack[from + i]];
		m[i] = (struct rsw_replay_dl_member){.sw = a->sw, .port = a->port, .prio = a->prio};
		uint64_t since = rsw_pause_since(&r->sw[a->sw].tm->port[a->port].pause, a->prio, t);
		formed = since > formed ? since : formed;
		if (member_cmp(&m[i], &m[lo]) < 0)
			lo = i;
	}
	struct rsw_replay_dl_member *c = calloc(len, sizeof(*c));
	if (!c) {
		free(m);
		return -1;
	}
	for (unsigned i = 0; i < len; i++) /* the lowest member first: one name per cycle */
		c[i] = m[(lo + i) % len];
	free(m);
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
	struct rsw_replay_deadlock *dl = &res->deadlock[res->n_deadlock];
	*dl = (struct rsw_replay_deadlock){.formed_ns = formed, .found_ns = t, .member = c,
					   .n_member = len};
	d->seen[res->n_deadlock++] = 1;
	struct flow_acc fa = {.r = r, .dl = dl};
	for (unsigned i = 0; i < len; i++) {
		struct rsw_tm *tm = r->sw[c[i].sw].tm;
		c[i].frames = rsw_tm_queue_walk(tm, c[i].port, c[i].prio, add_flow, &fa);
		c[i].bytes = rsw_tm_queue_bytes(tm, c[i].port, c[i].prio);
	}
	if (fa.oom)
		return -1;
	qsort(dl->flow, dl->n_flow, sizeof(*dl->flow), flow_cmp);
	if (r->events)
		event_found(r, dl);
	return 0;
}

/* Every cycle a depth-first search closes (one or more per strongly connected set of waits). */
static int search(struct replay *r, struct rp_deadlock *d, uint64_t t)
{
	memset(d->color, 0, d->n);
	for (unsigned root = 0; root < d->n; root++) {
		if (d->color[root])
			continue;
		unsigned depth = 0;
		d->stack[depth++] = root;
		d->color[root] = 1;
		d->next_j[root] = d->first[d->node[root].peer_sw];
		while (depth) {
			unsigned a = d->stack[depth - 1];
			unsigned end = d->first[d->node[a].peer_sw + 1];
			unsigned j = d->next_j[a];
			while (j < end && !waits_on(&d->node[a], &d->node[j]))
				j++;
			if (j == end) {
				d->color[a] = 2;
				depth--;
				continue;
			}
			d->next_j[a] = j + 1;
			if (d->color[j] == 1) { /* back to the path: a cycle */
				unsigned from = depth;
				while (d->stack[--from] != j)
					;
				if (found(r, d, from, depth, t) < 0)
					return -1;
			} else if (!d->color[j]) {
				d->color[j] = 1;
				d->next_j[j] = d->first[d->node[j].peer_sw];
				d->stack[depth++] = j;
			}
		}
	}
	return 0;
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

void rp_deadlock_check(struct replay *r, uint64_t t)
{
	const struct rsw_replay_model *md = r->model;
	struct rp_deadlock *d = r->dl;
	r->dl_next_ns = t + (r->res->deadlock_hold_ns / 8 ? r->res->deadlock_hold_ns / 8 : 1);
	if (!d) {
		d = r->dl = calloc(1, sizeof(*d));
		if (!d || !(d->first = calloc(md->n_sw + 1, sizeof(*d->first)))) {
			r->oom = 1;
			return;
		}
	}
	unsigned cap = d->cap;
	if (collect(r, d, t) < 0)
		goto oom;
	if (d->cap != cap || !d->stack) {
		free(d->next_j);
		free(d->stack);
		free(d->color);
		d->next_j = malloc((d->cap + 1) * sizeof(*d->next_j));
		d->stack = malloc((d->cap + 1) * sizeof(*d->stack));
		d->color = malloc(d->cap + 1);
		if (!d->next_j || !d->stack || !d->color)
			goto oom;
	}
	if (r->res->n_deadlock)
		memset(d->seen, 0, r->res->n_deadlock);
	if (search(r, d, t) < 0)
		goto oom;
	for (unsigned k = 0; k < r->res->n_deadlock; k++) {
		struct rsw_replay_deadlock *dl = &r->res->deadlock[k];
		if (!d->seen[k] && !dl->broken_ns) {
			dl->broken_ns = t;
			if (r->events)
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
	free(d->node);
	free(d->first);
	free(d->next_j);
	free(d->stack);
	free(d->color);
	free(d->seen);
	free(d);
	r->dl = NULL;
}
