/* CSPF over a zone's links for a collective's traffic matrix (docs/te.md): flows in order of
 * demand, each on the shortest up-down path with room for it, pinned by policy routes wherever
 * its switch had another path of the same length to choose. */
#include <stdlib.h>
#include <string.h>

#include "te.h"
#include "dataplane/tables/state.h"
#include "dataplane/tables/switch.h"

#define MAX_HOPS 16
#define MAX_PATHS 4096
#define EPS 1e-6

struct path {
	uint32_t dir[MAX_HOPS];
	unsigned n;
	uint8_t failed;            /* uses a failed link */
};

struct adj {
	uint32_t *dir;             /* link directions leaving the switch */
	unsigned n;
};

struct te {
	const struct rsw_zone *z;
	const uint8_t *down;
	struct adj *adj;           /* by switch */
	int *host_link;            /* by host */
	unsigned *tier;            /* by switch: 1 with hosts, else 1 + the lowest neighbour's */
	uint8_t *reach;            /* by switch: the flow's destination is below it */
	struct path *paths;
	unsigned n_paths;
	uint16_t dst;
	int32_t *key;              /* open addressing: route index, -1 free */
	unsigned key_mask;
	struct rsw_te_result *res;
	char *err;
	size_t errlen;
};

struct rsw_topo_end rsw_te_dir_from(const struct rsw_zone *z, uint32_t dir)
{
	const struct rsw_topo_link *l = &z->link[dir / 2];
	return dir & 1 ? l->b : l->a;
}

struct rsw_topo_end rsw_te_dir_to(const struct rsw_zone *z, uint32_t dir)
{
	const struct rsw_topo_link *l = &z->link[dir / 2];
	return dir & 1 ? l->a : l->b;
}

const char *rsw_te_end_name(const struct rsw_zone *z, struct rsw_topo_end e, char *buf,
			    size_t len)
{
	if (e.sw == RSW_TOPO_HOST)
		snprintf(buf, len, "%s", z->host[e.idx].name);
	else
		snprintf(buf, len, "%s|%s", z->sw[e.sw].name,
			 z->sw[e.sw].sw->state->ports[e.idx].name);
	return buf;
}

/* ---- the topology ---- */

static int build_graph(struct te *t)
{
	const struct rsw_zone *z = t->z;
	t->adj = calloc(z->n_sw ? z->n_sw : 1, sizeof(*t->adj));
	t->host_link = malloc((z->n_host ? z->n_host : 1) * sizeof(*t->host_link));
	t->tier = calloc(z->n_sw ? z->n_sw : 1, sizeof(*t->tier));
	t->reach = calloc(z->n_sw ? z->n_sw : 1, 1);
	if (!t->adj || !t->host_link || !t->tier || !t->reach)
		return -1;
	for (unsigned h = 0; h < z->n_host; h++)
		t->host_link[h] = -1;
	for (unsigned i = 0; i < z->n_link; i++)
		for (unsigned d = 0; d < 2; d++) {
			struct rsw_topo_end from = rsw_te_dir_from(z, 2 * i + d);
			if (from.sw == RSW_TOPO_HOST) {
				t->host_link[from.idx] = (int)i;
				continue;
			}
			struct adj *a = &t->adj[from.sw];
			void *p = realloc(a->dir, (a->n + 1) * sizeof(*a->dir));
			if (!p)
				return -1;
			a->dir = p;
			a->dir[a->n++] = 2 * i + d;
		}
	/* tiers by breadth from the hosts' switches */
	for (unsigned h = 0; h < z->n_host; h++) {
		const struct rsw_topo_link *l = &z->link[t->host_link[h]];
		t->tier[l->a.sw == RSW_TOPO_HOST ? l->b.sw : l->a.sw] = 1;
	}
	for (unsigned level = 1, more = 1; more; level++) {
		more = 0;
		for (unsigned s = 0; s < z->n_sw; s++) {
			if (t->tier[s] != level)
				continue;
			for (unsigned k = 0; k < t->adj[s].n; k++) {
				struct rsw_topo_end to = rsw_te_dir_to(z, t->adj[s].dir[k]);
				if (to.sw != RSW_TOPO_HOST && !t->tier[to.sw]) {
					t->tier[to.sw] = level + 1;
					more = 1;
				}
			}
		}
	}
	return 0;
}

/* Which switches reach dst by going only down (to lower tiers). */
static void mark_reach(struct te *t, uint16_t dst)
{
	const struct rsw_zone *z = t->z;
	const struct rsw_topo_link *hl = &z->link[t->host_link[dst]];
	memset(t->reach, 0, z->n_sw);
	t->reach[hl->a.sw == RSW_TOPO_HOST ? hl->b.sw : hl->a.sw] = 1;
	for (unsigned changed = 1; changed;) {
		changed = 0;
		for (unsigned s = 0; s < z->n_sw; s++) {
			if (t->reach[s])
				continue;
			for (unsigned k = 0; k < t->adj[s].n; k++) {
				struct rsw_topo_end to = rsw_te_dir_to(z, t->adj[s].dir[k]);
				if (to.sw != RSW_TOPO_HOST && t->tier[to.sw] < t->tier[s] &&
				    t->reach[to.sw]) {
					t->reach[s] = changed = 1;
					break;
				}
			}
		}
	}
}

/* ---- paths ---- */

static int add_path(struct te *t, const struct path *p)
{
	if (t->n_paths == MAX_PATHS) {
		snprintf(t->err, t->errlen, "more than %d up-down paths to %s: too wide for rocesw "
			 "te's enumeration", MAX_PATHS, t->z->host[t->dst].name);
		return -1;
	}
	if (!(t->n_paths & (t->n_paths - 1)) || !t->n_paths) {
		void *q = realloc(t->paths, (t->n_paths ? 2 * t->n_paths : 16) * sizeof(*t->paths));
		if (!q) {
			snprintf(t->err, t->errlen, "out of memory");
			return -1;
		}
		t->paths = q;
	}
	t->paths[t->n_paths++] = *p;
	return 0;
}

/* Every valley-free path on from switch s: up while the path has not gone down, then down
 * towards the destination, never through a link of the same tier. */
static int walk(struct te *t, unsigned s, struct path *p, int going_down)
{
	const struct rsw_zone *z = t->z;
	uint32_t came = p->dir[p->n - 1] / 2;
	for (unsigned k = 0; k < t->adj[s].n; k++) {
		uint32_t dir = t->adj[s].dir[k];
		if (dir / 2 == came || p->n == MAX_HOPS)
			continue;
		struct rsw_topo_end to = rsw_te_dir_to(z, dir);
		uint8_t failed = p->failed;
		p->failed |= t->down && t->down[dir / 2];
		p->dir[p->n++] = dir;
		int rc = 0;
		if (to.sw == RSW_TOPO_HOST) {
			if (to.idx == t->dst)
				rc = add_path(t, p);
		} else if (t->tier[to.sw] > t->tier[s] && !going_down) {
			rc = walk(t, (unsigned)to.sw, p, 0);
		} else if (t->tier[to.sw] < t->tier[s] && t->reach[to.sw]) {
			rc = walk(t, (unsigned)to.sw, p, 1);
		}
		p->n--;
		p->failed = failed;
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int enumerate(struct te *t, uint16_t src, uint16_t dst)
{
	const struct rsw_zone *z = t->z;
	unsigned li = (unsigned)t->host_link[src];
	uint32_t dir = 2 * li + (z->link[li].a.sw == RSW_TOPO_HOST ? 0 : 1);
	struct path p = {.dir = {dir}, .n = 1, .failed = t->down && t->down[li]};
	t->n_paths = 0;
	t->dst = dst;
	mark_reach(t, dst);
	return walk(t, (unsigned)rsw_te_dir_to(z, dir).sw, &p, 0);
}

/* ---- routes ---- */

static unsigned key_hash(unsigned sw, unsigned in_port, unsigned dst)
{
	uint64_t k = ((uint64_t)sw << 40) ^ ((uint64_t)in_port << 20) ^ dst;
	k *= 0x9E3779B97F4A7C15ull;
	return (unsigned)(k >> 32);
}

/* The route slot of <sw, in_port, dst>: its index in key[], holding -1 when there is none. */
static unsigned key_slot(const struct te *t, unsigned sw, unsigned in_port, unsigned dst)
{
	unsigned i = key_hash(sw, in_port, dst) & t->key_mask;
	for (;; i = (i + 1) & t->key_mask) {
		int32_t r = t->key[i];
		if (r < 0)
			return i;
		const struct rsw_te_route *rt = &t->res->route[r];
		if (rt->sw == sw && rt->in_port == in_port && rt->dst == dst)
			return i;
	}
}

/* The route a path meets on its hop into switch to(dir[i]), or -1. */
static int32_t route_at(const struct te *t, const struct path *p, unsigned i)
{
	struct rsw_topo_end in = rsw_te_dir_to(t->z, p->dir[i]);
	return t->key[key_slot(t, (unsigned)in.sw, in.idx, t->dst)];
}

static int consistent(const struct te *t, const struct path *p)
{
	for (unsigned i = 0; i + 1 < p->n; i++) {
		int32_t r = route_at(t, p, i);
		if (r >= 0 && t->res->route[r].out_port != rsw_te_dir_from(t->z, p->dir[i + 1]).idx)
			return 0;
	}
	return 1;
}

/* Another path of the same length leaves the switch after hop i differently. */
static int has_choice(const struct te *t, const struct path *p, unsigned i)
{
	for (unsigned k = 0; k < t->n_paths; k++) {
		const struct path *q = &t->paths[k];
		if (q->n == p->n && q->dir[i + 1] != p->dir[i + 1] &&
		    !memcmp(q->dir, p->dir, (i + 1) * sizeof(q->dir[0])))
			return 1;
	}
	return 0;
}

static int neighbour_of(const struct rsw_state *st, unsigned port, struct rsw_ip *ip)
{
	for (size_t k = 0; k < st->n_neigh; k++)
		if (st->neigh[k].port == port && st->neigh[k].ip.family == 4) {
			*ip = st->neigh[k].ip;
			return 0;
		}
	return -1;
}

static int pin(struct te *t, unsigned fi, const struct path *p, const struct rsw_coll *c)
{
	struct rsw_te_result *res = t->res;
	for (unsigned i = 0; i + 1 < p->n; i++) {
		if (!has_choice(t, p, i))
			continue;
		struct rsw_topo_end in = rsw_te_dir_to(t->z, p->dir[i]);
		struct rsw_topo_end out = rsw_te_dir_from(t->z, p->dir[i + 1]);
		unsigned slot = key_slot(t, (unsigned)in.sw, in.idx, t->dst);
		if (t->key[slot] >= 0) {
			res->route[t->key[slot]].n_flows++;
			continue;
		}
		const struct rsw_switch *sw = t->z->sw[in.sw].sw;
		struct rsw_te_route r = {.sw = (uint16_t)in.sw, .in_port = in.idx,
					 .out_port = out.idx, .dst = t->dst, .flow = fi,
					 .n_flows = 1};
		if (neighbour_of(sw->state, out.idx, &r.nexthop) < 0) {
			snprintf(t->err, t->errlen, "%s: no IPv4 NEIGH on %s: a policy route needs "
				 "the next hop's address", t->z->sw[in.sw].name,
				 sw->state->ports[out.idx].name);
			return -1;
		}
		uint32_t v = (uint32_t)c->ip_base[0] << 24 | (uint32_t)c->ip_base[1] << 16 |
			     (uint32_t)c->ip_base[2] << 8 | c->ip_base[3];
		v += (uint32_t)t->dst * c->ip_stride;
		r.prefix.ip.family = 4;
		for (unsigned k = 0; k < 4; k++)
			r.prefix.ip.a[k] = (uint8_t)(v >> (24 - 8 * k));
		r.prefix.len = 32;
		t->key[slot] = (int32_t)res->n_route;
		res->route[res->n_route++] = r;
	}
	return 0;
}

/* ---- placement ---- */

static double capacity(const struct te *t, uint32_t dir)
{
	return t->z->link[dir / 2].speed_mbps;
}

static double room(const struct te *t, const struct path *p)
{
	double m = 1e300;
	for (unsigned i = 0; i < p->n; i++) {
		double r = capacity(t, p->dir[i]) - t->res->load_mbps[p->dir[i]];
		m = r < m ? r : m;
	}
	return m;
}

/* a better than b: fewer hops, then more room, then the lower link directions */
static int better(const struct te *t, const struct path *a, const struct path *b, int room_first)
{
	double ra = room(t, a), rb = room(t, b);
	if (room_first && (ra > rb + EPS || ra < rb - EPS))
		return ra > rb;
	if (a->n != b->n)
		return a->n < b->n;
	if (ra > rb + EPS || ra < rb - EPS)
		return ra > rb;
	return memcmp(a->dir, b->dir, a->n * sizeof(a->dir[0])) < 0;
}

static int place(struct te *t, unsigned fi, const struct rsw_coll *c)
{
	struct rsw_te_flow *f = &t->res->flow[fi];
	if (enumerate(t, f->src, f->dst) < 0)
		return -1;
	f->n_alternatives = t->n_paths;
	const struct path *fit = NULL, *any = NULL;
	for (unsigned k = 0; k < t->n_paths; k++) {
		const struct path *p = &t->paths[k];
		if (p->failed || !consistent(t, p))
			continue;
		if (room(t, p) >= f->demand_mbps - EPS && (!fit || better(t, p, fit, 0)))
			fit = p;
		if (!any || better(t, p, any, 1))
			any = p;
	}
	const struct path *p = fit ? fit : any;
	if (!p) {
		f->status = RSW_TE_UNREACHABLE;
		t->res->n_unreachable++;
		return 0;
	}
	f->status = fit ? RSW_TE_PLACED : RSW_TE_OVER;
	t->res->n_over += !fit;
	memcpy(f->path, p->dir, p->n * sizeof(p->dir[0]));
	f->n_path = p->n;
	for (unsigned i = 0; i < p->n; i++)
		t->res->load_mbps[p->dir[i]] += f->demand_mbps;
	return pin(t, fi, p, c);
}

/* ---- the matrix ---- */

static int by_pair(const void *a, const void *b)
{
	const struct rsw_te_flow *x = a, *y = b;
	return x->src != y->src ? (x->src > y->src) - (x->src < y->src)
				: (x->dst > y->dst) - (x->dst < y->dst);
}

/* largest demand first; ties by source host, then destination host */
static int by_demand(const void *a, const void *b)
{
	const struct rsw_te_flow *x = a, *y = b;
	if (x->demand_mbps > y->demand_mbps + EPS || x->demand_mbps < y->demand_mbps - EPS)
		return x->demand_mbps > y->demand_mbps ? -1 : 1;
	return by_pair(a, b);
}

static double host_speed(const struct te *t, unsigned h)
{
	return t->z->link[t->host_link[h]].speed_mbps;
}

/* One flow per (source, destination) host pair, bytes summed over the collective's transfers;
 * each host's rate shared over its peers in proportion to the bytes, on both ends. */
static int matrix(struct te *t, const struct rsw_coll *c)
{
	/* a round has one transfer on each of the collective's connections: the flows are its
	 * slots, their bytes summed over the rounds */
	struct rsw_coll_plan p;
	rsw_coll_plan(c, &p);
	size_t n = p.per_round;
	struct rsw_coll_xfer *x = malloc((n ? n : 1) * sizeof(*x));
	struct rsw_te_result *res = t->res;
	res->flow = calloc(n ? n : 1, sizeof(*res->flow));
	double *out = calloc(t->z->n_host, sizeof(*out)), *in = calloc(t->z->n_host, sizeof(*in));
	if (!x || !res->flow || !out || !in) {
		free(x);
		free(out);
		free(in);
		return -1;
	}
	for (uint64_t r = 0; r < p.rounds; r++) {
		rsw_coll_round(c, &p, r, x);
		for (size_t i = 0; i < n; i++)
			res->flow[i] = (struct rsw_te_flow){.src = c->rank_host[x[i].src],
							    .dst = c->rank_host[x[i].dst],
							    .bytes = res->flow[i].bytes + x[i].bytes};
	}
	free(x);
	if (!p.rounds)
		n = 0;
	qsort(res->flow, n, sizeof(*res->flow), by_pair);
	unsigned m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !by_pair(&res->flow[m - 1], &res->flow[i]))
			res->flow[m - 1].bytes += res->flow[i].bytes;
		else
			res->flow[m++] = res->flow[i];
	}
	res->n_flow = m;
	for (unsigned i = 0; i < m; i++) {
		out[res->flow[i].src] += (double)res->flow[i].bytes;
		in[res->flow[i].dst] += (double)res->flow[i].bytes;
	}
	for (unsigned i = 0; i < m; i++) {
		struct rsw_te_flow *f = &res->flow[i];
		double b = (double)f->bytes, s = host_speed(t, f->src) * b / out[f->src];
		double r = host_speed(t, f->dst) * b / in[f->dst];
		f->demand_mbps = s < r ? s : r;
	}
	free(out);
	free(in);
	qsort(res->flow, m, sizeof(*res->flow), by_demand);
	return 0;
}

static void te_free(struct te *t)
{
	for (unsigned s = 0; t->adj && s < t->z->n_sw; s++)
		free(t->adj[s].dir);
	free(t->adj);
	free(t->host_link);
	free(t->tier);
	free(t->reach);
	free(t->paths);
	free(t->key);
}

static int by_route(const void *a, const void *b)
{
	const struct rsw_te_route *x = a, *y = b;
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->in_port != y->in_port)
		return x->in_port < y->in_port ? -1 : 1;
	return (x->dst > y->dst) - (x->dst < y->dst);
}

int rsw_te_fail(const struct rsw_zone *z, const char *what, uint8_t *link_down, char *err,
		size_t errlen)
{
	int h = rsw_zone_host_index(z, what), n = 0;
	unsigned sw;
	uint16_t port;
	for (unsigned s = 0; s < z->n_sw; s++)
		if (!strcmp(z->sw[s].name, what))
			for (unsigned i = 0; i < z->n_link; i++)
				if (z->link[i].a.sw == (int)s || z->link[i].b.sw == (int)s)
					link_down[i] = (uint8_t)++n;
	if (n)
		return 0;
	struct rsw_topo_end e;
	if (h >= 0)
		e = (struct rsw_topo_end){.sw = RSW_TOPO_HOST, .idx = (uint16_t)h};
	else if (strchr(what, '|') && rsw_zone_port(z, what, &sw, &port) == 0)
		e = (struct rsw_topo_end){.sw = (int)sw, .idx = port};
	else {
		snprintf(err, errlen, "--fail %s: no switch, host or SWITCH|PORT of the zone has "
			 "that name", what);
		return -1;
	}
	for (unsigned i = 0; i < z->n_link; i++) {
		const struct rsw_topo_link *l = &z->link[i];
		if ((l->a.sw == e.sw && l->a.idx == e.idx) || (l->b.sw == e.sw && l->b.idx == e.idx)) {
			link_down[i] = 1;
			return 0;
		}
	}
	snprintf(err, errlen, "--fail %s: that port has no link in the zone", what);
	return -1;
}

void rsw_te_free(struct rsw_te_result *res)
{
	free(res->flow);
	free(res->route);
	free(res->load_mbps);
	memset(res, 0, sizeof(*res));
}

int rsw_te_compute(const struct rsw_zone *z, const struct rsw_coll *c, const uint8_t *link_down,
		   struct rsw_te_result *res, char *err, size_t errlen)
{
	struct te t = {.z = z, .down = link_down, .res = res, .err = err, .errlen = errlen};
	memset(res, 0, sizeof(*res));
	err[0] = 0;
	for (unsigned i = 0; i < c->n_ranks; i++)
		if (c->rank_host[i] >= z->n_host) {
			snprintf(err, errlen, "rank %u is host %u but the zone has %u hosts", i,
				 c->rank_host[i], z->n_host);
			return -1;
		}
	int rc = -1;
	if (build_graph(&t) < 0 || matrix(&t, c) < 0)
		goto oom;
	res->n_dir = 2 * z->n_link;
	res->load_mbps = calloc(res->n_dir ? res->n_dir : 1, sizeof(*res->load_mbps));
	/* a route per hop of a flow at most */
	size_t max_routes = (size_t)res->n_flow * MAX_HOPS + 1;
	res->route = calloc(max_routes, sizeof(*res->route));
	unsigned cap = 64;
	while (cap < 2 * max_routes)
		cap *= 2;
	t.key = malloc(cap * sizeof(*t.key));
	t.key_mask = cap - 1;
	if (!res->load_mbps || !res->route || !t.key)
		goto oom;
	memset(t.key, 0xff, cap * sizeof(*t.key));
	for (unsigned f = 0; f < res->n_flow; f++)
		if (place(&t, f, c) < 0)
			goto out;
	qsort(res->route, res->n_route, sizeof(*res->route), by_route);
	rc = 0;
	goto out;
oom:
	if (!err[0])
		snprintf(err, errlen, "out of memory");
out:
	te_free(&t);
	if (rc < 0)
		rsw_te_free(res);
	return rc;
}
