/* PFC deadlock: a cyclic buffer dependency found in the switches' own state (docs/replay.md,
 * "PFC deadlock"). The wait-for graph of paused queues and its cycle search are shared with the
 * live zone (dataplane/tm/pfc_wait.h); this file builds the graph from replay's switches and
 * links and keeps what a run reports.
 *
 * Checked when a switch sends a PFC frame (at most every hold / 8 of virtual time) and when a
 * watchdog acts, never per frame; a cycle is reported once, when it has been held for the hold
 * time, with the time it formed (the last member's pause began) and the flows of the frames in
 * its queues. */
#include <stdlib.h>
#include <string.h>

#include "dataplane/pkt/addr.h"
#include "dataplane/tm/pfc_wait.h"
#include "dataplane/tm/tm.h"
#include "replay_deadlock.h"
#include "replay_engine.h"
#include "replay_node.h"

struct rp_deadlock {
	struct rsw_pfc_wait g;
	uint8_t *seen;                /* per reported deadlock: found by this check */
	unsigned seen_cap;
};

/* The paused, non-empty queues whose peer is a switch with that priority's PG over XOFF. */
static int collect(struct replay *r, struct rp_deadlock *d, uint64_t t)
{
	const struct rsw_replay_model *md = r->model;
	if (rsw_pfc_wait_begin(&d->g, md->n_sw) < 0)
		return -1;
	for (unsigned s = 0; s < md->n_sw; s++) {
		const struct sw_node *n = &r->sw[s];
		for (uint16_t p = 0; p < n->fib->n_ports; p++) {
			const struct rsw_tm_port *tp = rsw_tm_port_read(n->tm, p);
			int dir = n->port[p].tx_link;
			if (dir < 0 || r->link[dir].to.sw == RSW_TOPO_HOST)
				continue; /* a host's link: a cycle through a host is not a deadlock */
			uint8_t paused = rsw_pause_mask(&tp->pause, t);
			const struct rsw_topo_end *to = &r->link[dir].to;
			const struct rsw_tm_port *pp = rsw_tm_port_read(r->sw[to->sw].tm, to->idx);
			for (unsigned bits = paused & pp->xoff_pgs; bits; bits &= bits - 1) {
				unsigned q = (unsigned)__builtin_ctz(bits);
				if (!rsw_tm_queue_bytes(n->tm, p, q))
					continue;
				if (!rsw_pfc_wait_add(&d->g, n->tm, (uint16_t)s, p, (uint8_t)q,
						      (uint16_t)to->sw, to->idx))
					return -1;
			}
		}
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

/* A cycle the search closed: reported if held long enough and new. */
static int found(struct replay *r, struct rp_deadlock *d, const unsigned *cyc, unsigned len,
		 uint64_t t)
{
	uint64_t formed = 0;
	for (unsigned i = 0; i < len; i++) {
		const struct rsw_pfc_wait_node *a = &d->g.node[cyc[i]];
		const struct rsw_tm_port *tp = rsw_tm_port_read(r->sw[a->sw].tm, a->port);
		uint64_t since = rsw_pause_since(&tp->pause, a->prio, t);
		formed = since > formed ? since : formed;
	}
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
	if (r->log.f)
		event_found(r, dl);
	return 0;
}

struct search_ctx {
	struct replay *r;
	struct rp_deadlock *d;
	uint64_t t;
};

static int on_cycle(void *arg, const unsigned *cyc, unsigned len)
{
	struct search_ctx *x = arg;
	return found(x->r, x->d, cyc, len, x->t);
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
	struct rp_deadlock *d = r->dl;
	if (r->part) { /* a cycle may span parts: refused with --ranks (docs/replay-parallel.md) */
		r->dl_next_ns = UINT64_MAX;
		return;
	}
	r->dl_next_ns = t + (r->res->deadlock_hold_ns / 8 ? r->res->deadlock_hold_ns / 8 : 1);
	if (!d) {
		d = r->dl = calloc(1, sizeof(*d));
		if (!d) {
			r->oom = 1;
			return;
		}
	}
	if (collect(r, d, t) < 0)
		goto oom;
	if (r->res->n_deadlock)
		memset(d->seen, 0, r->res->n_deadlock);
	struct search_ctx x = {.r = r, .d = d, .t = t};
	if (rsw_pfc_wait_search(&d->g, on_cycle, &x) < 0)
		goto oom;
	for (unsigned k = 0; k < r->res->n_deadlock; k++) {
		struct rsw_replay_deadlock *dl = &r->res->deadlock[k];
		if (!d->seen[k] && !dl->broken_ns) {
			dl->broken_ns = t;
			if (r->log.f)
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
	free(d->seen);
	free(d);
	r->dl = NULL;
}
