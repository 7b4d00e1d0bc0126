#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errlist.h"
#include "sparse_mem.h"
#include "state.h"

_Static_assert(offsetof(struct rsw_state, n_qos) - offsetof(struct rsw_state, ports) <
		       sizeof(((struct rsw_state *)0)->ports) + 8,
	       "a clone copies the fields before ports, the ports it has, then n_qos to the end");

void rsw_qos_azure_dscp_to_tc(uint8_t map[64])
{
	memset(map, 1, 64);
	map[3] = 3;
	map[4] = 4;
	map[5] = 2;
	map[8] = 0;
	map[46] = 5;
	map[48] = 6;
}

void rsw_qos_azure_tc_to_pg(uint8_t map[8])
{
	memset(map, 0, 8);
	map[3] = 3;
	map[4] = 4;
	map[7] = 7;
}

static int fail(char *err, size_t errlen, const char *origin, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (origin && *origin)
		snprintf(err, errlen, "%s: %s", origin, msg);
	else
		snprintf(err, errlen, "%s", msg);
	return -1;
}

/* Grow-by-one append for the plain arrays of the state. */
static void *push(void *arr, size_t *n, size_t elem)
{
	void *p = realloc(arr, (*n + 1) * elem);
	if (p)
		(*n)++;
	return p;
}

struct rsw_state *rsw_state_new(void)
{
	struct rsw_state *s = rsw_sparse_alloc(sizeof(*s));
	if (!s)
		return NULL;
	s->sw.dmac_check = 1;
	s->qos = calloc(2, sizeof(*s->qos));
	s->pol = calloc(1, sizeof(*s->pol));
	s->cls = calloc(2, sizeof(*s->cls));
	if (!s->qos || !s->pol || !s->cls) {
		rsw_state_free(s);
		return NULL;
	}
	s->n_qos = 2;
	snprintf(s->qos[0].name, RSW_NAME_MAX, "AZURE");
	s->qos[0].kind = RSW_QOS_DSCP_TO_TC;
	rsw_qos_azure_dscp_to_tc(s->qos[0].map);
	snprintf(s->qos[1].name, RSW_NAME_MAX, "AZURE");
	s->qos[1].kind = RSW_QOS_TC_TO_PG;
	rsw_qos_azure_tc_to_pg(s->qos[1].map);
	/* SONiC's default ECMP hash: the 5-tuple plus the ingress port, CRC */
	s->n_pol = 1;
	snprintf(s->pol[0].name, RSW_NAME_MAX, RSW_DEFAULT_POLICY);
	s->pol[0].pol.algo = 0;
	s->pol[0].pol.fields = 1u << RSW_HF_SRC_IP | 1u << RSW_HF_DST_IP | 1u << RSW_HF_IP_PROTOCOL |
			       1u << RSW_HF_L4_SRC_PORT | 1u << RSW_HF_L4_DST_PORT |
			       1u << RSW_HF_IN_PORT;
	/* receiver-driven clear-to-send on DSCP 48 and CNPs overtake bulk data: TC 6 is STRICT */
	s->n_cls = 2;
	s->cls[0] = (struct rsw_classifier_rule){.name = "cts", .priority = 100, .dscp = 48,
						 .dscp_mask = 0x3F, .qp_hi = 0xFFFFFF,
						 .len_hi = UINT32_MAX, .in_port = -1, .tc = 6,
						 .origin = "(default)"};
	s->cls[1] = (struct rsw_classifier_rule){.name = "cnp", .priority = 90, .opcode = 0x81,
						 .opcode_mask = 0xFF, .roce_only = 1,
						 .qp_hi = 0xFFFFFF, .len_hi = UINT32_MAX,
						 .in_port = -1, .tc = 6, .origin = "(default)"};
	return s;
}

static void *dup_array(const void *src, size_t n, size_t elem)
{
	void *d = malloc(n ? n * elem : 1);
	if (d && n)
		memcpy(d, src, n * elem);
	return d;
}

struct rsw_state *rsw_state_clone(const struct rsw_state *s)
{
	/* the ports it has, not the 256 it may: the rest of the copy stays untouched zero pages */
	struct rsw_state *c = rsw_sparse_alloc(sizeof(*c));
	if (!c)
		return NULL;
	memcpy(c, s, offsetof(struct rsw_state, ports));
	memcpy(c->ports, s->ports, s->n_ports * sizeof(s->ports[0]));
	memcpy(&c->n_qos, &s->n_qos, sizeof(*s) - offsetof(struct rsw_state, n_qos));
	c->qos = dup_array(s->qos, s->n_qos, sizeof(*s->qos));
	c->pol = dup_array(s->pol, s->n_pol, sizeof(*s->pol));
	c->neigh = dup_array(s->neigh, s->n_neigh, sizeof(*s->neigh));
	c->routes = dup_array(s->routes, s->n_routes, sizeof(*s->routes));
	c->routes_cap = s->n_routes;
	c->route_ix.slot = NULL;
	c->route_ix.mask = 0;
	c->cls = dup_array(s->cls, s->n_cls, sizeof(*s->cls));
	c->intf = dup_array(s->intf, s->n_intf, sizeof(*s->intf));
	c->nhg = calloc(s->n_nhg ? s->n_nhg : 1, sizeof(*c->nhg));
	int ok = c->qos && c->pol && c->neigh && c->routes && c->nhg && c->cls && c->intf &&
		 rsw_route_index_copy(&c->route_ix, &s->route_ix) == 0;
	for (size_t i = 0; ok && i < s->n_nhg; i++) {
		c->nhg[i] = malloc(sizeof(struct rsw_nhg));
		if (!c->nhg[i]) {
			ok = 0;
			break;
		}
		*c->nhg[i] = *s->nhg[i];
		c->nhg[i]->rbt.bucket = NULL;
		if (s->nhg[i]->rbt.bucket && rsw_rbt_copy(&c->nhg[i]->rbt, &s->nhg[i]->rbt) < 0)
			ok = 0;
	}
	if (!ok) {
		rsw_state_free(c);
		return NULL;
	}
	return c;
}

static void nhg_free(struct rsw_nhg *g)
{
	if (g) {
		rsw_rbt_free(&g->rbt);
		free(g);
	}
}

void rsw_state_free(struct rsw_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->nhg && i < s->n_nhg; i++)
		nhg_free(s->nhg[i]);
	free(s->nhg);
	free(s->qos);
	free(s->pol);
	free(s->neigh);
	free(s->routes);
	rsw_route_index_free(&s->route_ix);
	free(s->cls);
	free(s->intf);
	rsw_sparse_free(s, sizeof(*s));
}

int rsw_state_port_index(const struct rsw_state *s, const char *name)
{
	for (int i = 0; i < s->n_ports; i++)
		if (strcmp(s->ports[i].name, name) == 0)
			return i;
	return -1;
}

static long find_nhg(const struct rsw_state *s, const char *name)
{
	for (size_t i = 0; i < s->n_nhg; i++)
		if (strcmp(s->nhg[i]->name, name) == 0)
			return (long)i;
	return -1;
}

const struct rsw_nhg *rsw_state_nhg(const struct rsw_state *s, const char *name)
{
	long i = find_nhg(s, name);
	return i < 0 ? NULL : s->nhg[i];
}

static long find_policy(const struct rsw_state *s, const char *name)
{
	for (size_t i = 0; i < s->n_pol; i++)
		if (strcmp(s->pol[i].name, name) == 0)
			return (long)i;
	return -1;
}

const struct rsw_named_policy *rsw_state_policy(const struct rsw_state *s, const char *name)
{
	long i = find_policy(s, name);
	return i < 0 ? NULL : &s->pol[i];
}

static long find_qos(const struct rsw_state *s, const char *name, unsigned kind)
{
	for (size_t i = 0; i < s->n_qos; i++)
		if (s->qos[i].kind == kind && strcmp(s->qos[i].name, name) == 0)
			return (long)i;
	return -1;
}

const struct rsw_qos_map *rsw_state_qos(const struct rsw_state *s, const char *name, unsigned kind)
{
	long i = find_qos(s, name, kind);
	return i < 0 ? NULL : &s->qos[i];
}

static long find_neigh(const struct rsw_state *s, uint16_t port, const struct rsw_ip *ip)
{
	for (size_t i = 0; i < s->n_neigh; i++)
		if (s->neigh[i].port == port && rsw_ip_eq(&s->neigh[i].ip, ip))
			return (long)i;
	return -1;
}

const struct rsw_neighbor *rsw_state_resolve(const struct rsw_state *s, const struct rsw_ip *ip)
{
	for (size_t i = 0; i < s->n_neigh; i++)
		if (rsw_ip_eq(&s->neigh[i].ip, ip))
			return &s->neigh[i];
	return NULL;
}

static long find_intf(const struct rsw_state *s, uint16_t port, const struct rsw_ip *ip)
{
	for (size_t i = 0; i < s->n_intf; i++)
		if (s->intf[i].port == port && rsw_ip_eq(&s->intf[i].addr.ip, ip))
			return (long)i;
	return -1;
}

int rsw_state_intf_port(const struct rsw_state *s, const struct rsw_ip *ip,
			const struct rsw_interface **addr)
{
	for (size_t i = 0; i < s->n_intf; i++)
		if (rsw_prefix_contains(&s->intf[i].addr, ip)) {
			if (addr)
				*addr = &s->intf[i];
			return s->intf[i].port;
		}
	return -1;
}

const struct rsw_interface *rsw_state_intf_addr(const struct rsw_state *s, const struct rsw_ip *ip)
{
	for (size_t i = 0; i < s->n_intf; i++)
		if (rsw_ip_eq(&s->intf[i].addr.ip, ip))
			return &s->intf[i];
	return NULL;
}

static long find_route(const struct rsw_state *s, const struct rsw_route *r)
{
	return rsw_route_index_find(&s->route_ix, s->routes, r);
}

const struct rsw_route *rsw_state_route(const struct rsw_state *s, const struct rsw_route *r)
{
	long i = find_route(s, r);
	return i < 0 ? NULL : &s->routes[i];
}

/* Appends r to the routes (capacity doubles) and indexes it. */
static int route_append(struct rsw_state *s, const struct rsw_route *r)
{
	if (s->n_routes == s->routes_cap) {
		size_t cap = s->routes_cap < 16 ? 16 : 2 * s->routes_cap;
		void *p = realloc(s->routes, cap * sizeof(*s->routes));
		if (!p)
			return -1;
		s->routes = p;
		s->routes_cap = cap;
	}
	s->routes[s->n_routes] = *r;
	if (rsw_route_index_add(&s->route_ix, s->routes, s->n_routes + 1, s->n_routes) < 0)
		return -1;
	s->n_routes++;
	return 0;
}

/* Checks the op against whether the key exists; returns 1 to insert, 0 to modify/delete. */
static int op_check(const struct rsw_table_write *w, long found, const char *what, const char *key,
		    char *err, size_t errlen, const char *origin)
{
	if (w->op == RSW_W_INSERT && found >= 0)
		return fail(err, errlen, origin, "%s '%s' already exists", what, key);
	if ((w->op == RSW_W_MODIFY || w->op == RSW_W_DELETE) && found < 0)
		return fail(err, errlen, origin, "%s '%s' does not exist", what, key);
	return found < 0 ? 1 : 0;
}

/* Member set of a group changed: keep the slots of members that stay. */
/* What a next-hop group must be before it enters the state. */
static int nhg_check(const struct rsw_nhg *in, char *err, size_t errlen)
{
	if (in->n_members == 0)
		return fail(err, errlen, in->origin, "next-hop group '%s' has no members", in->name);
	if (in->n_buckets == 0 || in->n_buckets > RSW_RBT_MAX_BUCKETS)
		return fail(err, errlen, in->origin, "next-hop group '%s': buckets must be 1..%u, got %u",
			    in->name, RSW_RBT_MAX_BUCKETS, in->n_buckets);
	if (in->ars.mode >= RSW_ARS_MODES ||
	    (in->ars.mode && (in->ars.max_flows == 0 || in->ars.max_flows > RSW_ARS_MAX_FLOWS)))
		return fail(err, errlen, in->origin,
			    "next-hop group '%s': ARS max_flows must be 1..%u, got %u", in->name,
			    RSW_ARS_MAX_FLOWS, in->ars.max_flows);
	for (unsigned i = 0; i < in->n_members; i++)
		for (unsigned j = 0; j < i; j++)
			if (rsw_ip_eq(&in->members[i].ip, &in->members[j].ip))
				return fail(err, errlen, in->origin,
					    "next-hop group '%s' lists a next hop twice", in->name);
	return 0;
}

/* A new group: members in slots by their order, none active yet. */
static int nhg_add(struct rsw_state *s, const struct rsw_nhg *in, char *err, size_t errlen)
{
	struct rsw_nhg *g = calloc(1, sizeof(*g));
	struct rsw_nhg **arr = g ? push(s->nhg, &s->n_nhg, sizeof(*s->nhg)) : NULL;
	if (!arr) {
		free(g);
		return fail(err, errlen, in->origin, "out of memory");
	}
	s->nhg = arr;
	s->nhg[s->n_nhg - 1] = g;
	*g = *in;
	g->rbt.bucket = NULL;
	for (unsigned i = 0; i < g->n_members; i++) {
		g->members[i].slot = (uint16_t)i;
		g->members[i].active = 0;
	}
	return 0;
}

/* A group's new member list: members that stay keep their slot and state, those that left give
 * their buckets to the others, newcomers take free slots, lowest first. */
static void nhg_members(struct rsw_nhg *g, const struct rsw_nhg *in)
{
	struct rsw_nhg_member old[RSW_ECMP_MAX_MEMBERS];
	uint16_t n_old = g->n_members;
	memcpy(old, g->members, sizeof(old));
	uint8_t used[RSW_ECMP_MAX_MEMBERS] = {0};
	for (unsigned i = 0; i < in->n_members; i++) {
		g->members[i] = in->members[i];
		g->members[i].slot = UINT16_MAX;
		g->members[i].active = 0;
		for (unsigned j = 0; j < n_old; j++)
			if (rsw_ip_eq(&old[j].ip, &in->members[i].ip)) {
				g->members[i].slot = old[j].slot;
				g->members[i].active = old[j].active;
				used[old[j].slot] = 1;
			}
	}
	for (unsigned j = 0; j < n_old; j++)
		if (!used[old[j].slot] && old[j].active && g->rbt.bucket)
			rsw_rbt_remove(&g->rbt, old[j].slot);
	for (unsigned i = 0; i < in->n_members; i++) {
		if (g->members[i].slot != UINT16_MAX)
			continue;
		unsigned sl = 0;
		while (used[sl])
			sl++;
		used[sl] = 1;
		g->members[i].slot = (uint16_t)sl;
	}
	g->n_members = in->n_members;
}

static int nhg_set(struct rsw_state *s, const void *entry, long idx, char *err, size_t errlen)
{
	const struct rsw_nhg *in = entry;
	if (nhg_check(in, err, errlen) < 0)
		return -1;
	if (idx < 0)
		return nhg_add(s, in, err, errlen);
	struct rsw_nhg *g = s->nhg[idx];
	if (g->n_buckets != in->n_buckets && g->rbt.bucket) {
		/* a new table size redistributes everything, as on hardware */
		rsw_rbt_free(&g->rbt);
		for (unsigned i = 0; i < g->n_members; i++)
			g->members[i].active = 0;
	}
	nhg_members(g, in);
	memcpy(g->policy, in->policy, sizeof(g->policy));
	g->n_buckets = in->n_buckets;
	g->resilient = in->resilient;
	g->ars = in->ars;
	memcpy(g->origin, in->origin, sizeof(g->origin));
	return 0;
}

/* The table descriptors: what differs between the keyed tables. apply_keyed() writes the rest
 * once: find the key, check the op against it, then delete or store. */

static long port_find(const struct rsw_state *s, const void *e)
{
	return rsw_state_port_index(s, ((const struct rsw_port_cfg *)e)->name);
}

/* Ports are referenced by index from neighbours, addresses and policy routes. */
static int port_check_delete(const struct rsw_state *s, const void *e, long i, char *err,
			     size_t errlen)
{
	const struct rsw_port_cfg *p = e;
	for (size_t n = 0; n < s->n_neigh; n++)
		if (s->neigh[n].port == i)
			return fail(err, errlen, p->origin, "port '%s' still has neighbours",
				    p->name);
	for (size_t n = 0; n < s->n_intf; n++)
		if (s->intf[n].port == i)
			return fail(err, errlen, p->origin,
				    "port '%s' still has interface addresses", p->name);
	for (size_t n = 0; n < s->n_routes; n++)
		if (s->routes[n].in_port == i)
			return fail(err, errlen, p->origin, "port '%s' still has policy routes",
				    p->name);
	/* ports are referenced by index: only the last one can go */
	if (i != s->n_ports - 1)
		return fail(err, errlen, p->origin,
			    "port '%s' is not the last port; ports are removed last-first",
			    p->name);
	return 0;
}

static void port_remove(struct rsw_state *s, long i)
{
	(void)i;
	s->n_ports--;
}

/* Ports live in a fixed array, not a grown one. */
static int port_store(struct rsw_state *s, const void *e, long i, char *err, size_t errlen)
{
	const struct rsw_port_cfg *p = e;
	if (i < 0) {
		if (s->n_ports == RSW_MAX_PORTS)
			return fail(err, errlen, p->origin, "more than %d ports", RSW_MAX_PORTS);
		i = s->n_ports++;
	}
	s->ports[i] = *p;
	return 0;
}

static long qos_find(const struct rsw_state *s, const void *e)
{
	const struct rsw_qos_map *q = e;
	return find_qos(s, q->name, q->kind);
}

static long policy_find(const struct rsw_state *s, const void *e)
{
	return find_policy(s, ((const struct rsw_named_policy *)e)->name);
}

static const char *neigh_key(const void *e, char *buf, size_t len)
{
	return rsw_ip_str(&((const struct rsw_neighbor *)e)->ip, buf, len);
}

static int neigh_check_key(const struct rsw_state *s, const void *e, const char *key, char *err,
			   size_t errlen)
{
	const struct rsw_neighbor *n = e;
	if (n->port >= s->n_ports)
		return fail(err, errlen, n->origin, "neighbour %s: no port with index %u", key,
			    n->port);
	return 0;
}

static long neigh_find(const struct rsw_state *s, const void *e)
{
	const struct rsw_neighbor *n = e;
	return find_neigh(s, n->port, &n->ip);
}

static long nhg_find(const struct rsw_state *s, const void *e)
{
	return find_nhg(s, ((const struct rsw_nhg *)e)->name);
}

static void nhg_remove(struct rsw_state *s, long i)
{
	nhg_free(s->nhg[i]);
	s->nhg[i] = s->nhg[--s->n_nhg];
}

static const char *route_key(const void *e, char *buf, size_t len)
{
	return rsw_ip_str(&((const struct rsw_route *)e)->prefix.ip, buf, len);
}

static int route_check_key(const struct rsw_state *s, const void *e, const char *key, char *err,
			   size_t errlen)
{
	const struct rsw_route *r = e;
	if (r->in_port >= (int32_t)s->n_ports)
		return fail(err, errlen, r->origin, "route %s/%u: no ingress port with index %d",
			    key, r->prefix.len, r->in_port);
	return 0;
}

static long route_find(const struct rsw_state *s, const void *e)
{
	return find_route(s, e);
}

static void route_remove(struct rsw_state *s, long i)
{
	rsw_route_index_remove(&s->route_ix, s->routes, (size_t)i, s->n_routes - 1);
	s->routes[i] = s->routes[--s->n_routes];
}

/* Routes grow by doubling and are indexed by key. */
static int route_store(struct rsw_state *s, const void *e, long i, char *err, size_t errlen)
{
	const struct rsw_route *r = e;
	if (i < 0)
		return route_append(s, r) < 0 ? fail(err, errlen, r->origin, "out of memory") : 0;
	s->routes[i] = *r;
	return 0;
}

static long cls_find(const struct rsw_state *s, const void *e)
{
	const struct rsw_classifier_rule *r = e;
	for (size_t k = 0; k < s->n_cls; k++)
		if (strcmp(s->cls[k].name, r->name) == 0)
			return (long)k;
	return -1;
}

static int cls_check_value(const struct rsw_state *s, const void *e, long i, char *err,
			   size_t errlen)
{
	const struct rsw_classifier_rule *r = e;
	(void)i;
	if (r->in_port >= (int32_t)s->n_ports)
		return fail(err, errlen, r->origin, "classifier rule '%s': no port with index %d",
			    r->name, r->in_port);
	if (r->tc > 7 || r->qp_lo > r->qp_hi || r->len_lo > r->len_hi)
		return fail(err, errlen, r->origin, "classifier rule '%s': tc above 7 or an "
			    "empty range", r->name);
	return 0;
}

static const char *intf_key(const void *e, char *buf, size_t len)
{
	return rsw_ip_str(&((const struct rsw_interface *)e)->addr.ip, buf, len);
}

static int intf_check_key(const struct rsw_state *s, const void *e, const char *key, char *err,
			  size_t errlen)
{
	const struct rsw_interface *a = e;
	if (a->port >= s->n_ports)
		return fail(err, errlen, a->origin, "interface address %s: no port with index %u",
			    key, a->port);
	if (a->addr.len > (a->addr.ip.family == 4 ? 32 : 128))
		return fail(err, errlen, a->origin, "interface address %s: prefix length %u",
			    key, a->addr.len);
	return 0;
}

static long intf_find(const struct rsw_state *s, const void *e)
{
	const struct rsw_interface *a = e;
	return find_intf(s, a->port, &a->addr.ip);
}

/* An address belongs to one port only. */
static int intf_check_value(const struct rsw_state *s, const void *e, long i, char *err,
			    size_t errlen)
{
	const struct rsw_interface *a = e;
	char ip[64];
	for (size_t k = 0; k < s->n_intf; k++)
		if ((long)k != i && rsw_ip_eq(&s->intf[k].addr.ip, &a->addr.ip))
			return fail(err, errlen, a->origin, "interface address %s is already "
				    "on port %s", rsw_ip_str(&a->addr.ip, ip, sizeof(ip)),
				    s->ports[s->intf[k].port].name);
	return 0;
}

struct table_desc {
	const char *what;  /* the entry in messages: "port", "QoS map", ... */
	size_t origin_off; /* offsetof the entry's origin */
	size_t name_off;   /* offsetof the entry's name, the key messages print... */
	/* ...or, for the tables keyed by address, the address formatted into buf */
	const char *(*key)(const void *e, char *buf, size_t len);
	/* checks of the key before the lookup, or NULL */
	int (*check_key)(const struct rsw_state *s, const void *e, const char *key, char *err,
			 size_t errlen);
	long (*find)(const struct rsw_state *s, const void *e); /* index, or -1 */
	/* refuses to delete entry i while others refer to it, or NULL */
	int (*check_delete)(const struct rsw_state *s, const void *e, long i, char *err,
			    size_t errlen);
	/* checks of an insert or modify (i is -1 for an insert), or NULL */
	int (*check_value)(const struct rsw_state *s, const void *e, long i, char *err,
			   size_t errlen);
	/* NULL for the plain arrays: elem, arr_off and n_off say where they are */
	void (*remove)(struct rsw_state *s, long i);
	int (*store)(struct rsw_state *s, const void *e, long i, char *err, size_t errlen);
	size_t elem;           /* entry size */
	size_t arr_off, n_off; /* offsetof the array and its size_t count in struct rsw_state */
};

/* An entry of type t, called w in messages. */
#define ENTRY(t, w) .what = w, .origin_off = offsetof(t, origin)
#define NAMED(t) .name_off = offsetof(t, name)
/* Kept in the grown array arr of n entries of struct rsw_state. */
#define PLAIN_ARRAY(t, arr, n) \
	.elem = sizeof(t), .arr_off = offsetof(struct rsw_state, arr), \
	.n_off = offsetof(struct rsw_state, n)

static const struct table_desc table_descs[RSW_T_COUNT] = {
	[RSW_T_PORT] = {ENTRY(struct rsw_port_cfg, "port"), NAMED(struct rsw_port_cfg),
			.find = port_find, .check_delete = port_check_delete,
			.remove = port_remove, .store = port_store},
	[RSW_T_QOS_MAP] = {ENTRY(struct rsw_qos_map, "QoS map"), NAMED(struct rsw_qos_map),
			   .find = qos_find, PLAIN_ARRAY(struct rsw_qos_map, qos, n_qos)},
	[RSW_T_HASH_POLICY] = {ENTRY(struct rsw_named_policy, "hash policy"),
			       NAMED(struct rsw_named_policy), .find = policy_find,
			       PLAIN_ARRAY(struct rsw_named_policy, pol, n_pol)},
	[RSW_T_NEIGHBOR] = {ENTRY(struct rsw_neighbor, "neighbour"), .key = neigh_key,
			    .check_key = neigh_check_key, .find = neigh_find,
			    PLAIN_ARRAY(struct rsw_neighbor, neigh, n_neigh)},
	[RSW_T_NHG] = {ENTRY(struct rsw_nhg, "next-hop group"), NAMED(struct rsw_nhg),
		       .find = nhg_find, .remove = nhg_remove, .store = nhg_set},
	[RSW_T_ROUTE] = {ENTRY(struct rsw_route, "route"), .key = route_key,
			 .check_key = route_check_key, .find = route_find,
			 .remove = route_remove, .store = route_store},
	[RSW_T_CLASSIFIER] = {ENTRY(struct rsw_classifier_rule, "classifier rule"),
			      NAMED(struct rsw_classifier_rule), .find = cls_find,
			      .check_value = cls_check_value,
			      PLAIN_ARRAY(struct rsw_classifier_rule, cls, n_cls)},
	[RSW_T_INTERFACE] = {ENTRY(struct rsw_interface, "interface address"), .key = intf_key,
			     .check_key = intf_check_key, .find = intf_find,
			     .check_value = intf_check_value,
			     PLAIN_ARRAY(struct rsw_interface, intf, n_intf)},
};

#undef ENTRY
#undef NAMED
#undef PLAIN_ARRAY

/* The plain arrays are reached by offset: memcpy moves their pointer whatever its type. */
static void *plain_array(const struct rsw_state *s, const struct table_desc *d)
{
	void *arr;
	memcpy(&arr, (const char *)s + d->arr_off, sizeof(arr));
	return arr;
}

static size_t *plain_count(struct rsw_state *s, const struct table_desc *d)
{
	return (size_t *)(void *)((char *)s + d->n_off);
}

/* Deletes entry i: the last entry takes its place. */
static void plain_remove(struct rsw_state *s, const struct table_desc *d, long i)
{
	char *arr = plain_array(s, d);
	size_t *n = plain_count(s, d);
	--*n;
	memmove(arr + (size_t)i * d->elem, arr + *n * d->elem, d->elem);
}

/* Overwrites entry i, or appends when i is -1. */
static int plain_store(struct rsw_state *s, const struct table_desc *d, const void *e, long i,
		       const char *origin, char *err, size_t errlen)
{
	char *arr = plain_array(s, d);
	size_t *n = plain_count(s, d);
	if (i < 0) {
		arr = push(arr, n, d->elem);
		if (!arr)
			return fail(err, errlen, origin, "out of memory");
		memcpy((char *)s + d->arr_off, &arr, sizeof(arr));
		i = (long)*n - 1;
	}
	memcpy(arr + (size_t)i * d->elem, e, d->elem);
	return 0;
}

static int apply_keyed(struct rsw_state *s, const struct table_desc *d,
		       const struct rsw_table_write *w, char *err, size_t errlen)
{
	const void *e = &w->u;
	const char *origin = (const char *)e + d->origin_off;
	char buf[64];
	const char *key = d->key ? d->key(e, buf, sizeof(buf)) : (const char *)e + d->name_off;
	long i;

	if (d->check_key && d->check_key(s, e, key, err, errlen) < 0)
		return -1;
	i = d->find(s, e);
	/* from here i is -1 exactly when the write inserts */
	if (op_check(w, i, d->what, key, err, errlen, origin) < 0)
		return -1;
	if (w->op == RSW_W_DELETE) {
		if (d->check_delete && d->check_delete(s, e, i, err, errlen) < 0)
			return -1;
		if (d->remove)
			d->remove(s, i);
		else
			plain_remove(s, d, i);
		return 0;
	}
	if (d->check_value && d->check_value(s, e, i, err, errlen) < 0)
		return -1;
	if (d->store)
		return d->store(s, e, i, err, errlen);
	return plain_store(s, d, e, i, origin, err, errlen);
}

int rsw_state_apply(struct rsw_state *s, const struct rsw_table_write *w, char *err, size_t errlen)
{
	if (w->table == RSW_T_SWITCH) {
		if (w->op != RSW_W_SET && w->op != RSW_W_MODIFY)
			return fail(err, errlen, NULL, "SWITCH can only be set");
		s->sw = w->u.sw;
		return 0;
	}
	if (w->table >= RSW_T_COUNT)
		return fail(err, errlen, NULL, "unknown table %u", w->table);
	return apply_keyed(s, &table_descs[w->table], w, err, errlen);
}

/* A member is usable when its next hop resolves to a neighbour on an up port. */
static int member_usable(const struct rsw_state *s, const struct rsw_nhg_member *m)
{
	const struct rsw_neighbor *n = rsw_state_resolve(s, &m->ip);
	return n && s->ports[n->port].admin_up;
}

static void nhg_reconcile(const struct rsw_state *s, struct rsw_nhg *g)
{
	if (!g->rbt.bucket) {
		/* a new table: the usable members round-robin, in slot order, as FG ECMP does */
		uint16_t slots[RSW_ECMP_MAX_MEMBERS];
		unsigned n = 0;
		for (unsigned sl = 0; sl < RSW_ECMP_MAX_MEMBERS; sl++)
			for (unsigned i = 0; i < g->n_members; i++)
				if (g->members[i].slot == sl && member_usable(s, &g->members[i]))
					slots[n++] = (uint16_t)sl;
		if (n == 0 || rsw_rbt_init_slots(&g->rbt, g->n_buckets, slots, n) < 0)
			return;
		for (unsigned i = 0; i < g->n_members; i++)
			g->members[i].active = (uint8_t)member_usable(s, &g->members[i]);
		return;
	}
	for (unsigned i = 0; i < g->n_members; i++) {
		struct rsw_nhg_member *m = &g->members[i];
		int want = member_usable(s, m);
		if (want == m->active)
			continue;
		if (want)
			rsw_rbt_add(&g->rbt, m->slot);
		else
			rsw_rbt_remove(&g->rbt, m->slot);
		m->active = (uint8_t)want;
	}
}

/* One error of the references check, added to the list as fail() words it. */
static void note(struct rsw_errlist *l, const char *origin, const char *fmt, ...)
{
	char msg[512], line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s%s%s", origin && *origin ? origin : "",
		 origin && *origin ? ": " : "", msg);
	rsw_errlist_add(l, line);
}

static int finish_list(struct rsw_state *s, struct rsw_errlist *l)
{
	char ip[64];
	size_t before = rsw_errlist_count(l);

	for (unsigned p = 0; p < s->n_ports; p++) {
		const struct rsw_port_cfg *pc = &s->ports[p];
		if (!rsw_state_qos(s, pc->dscp_to_tc_map, RSW_QOS_DSCP_TO_TC))
			note(l, pc->origin, "port '%s': no DSCP_TO_TC_MAP named '%s'", pc->name,
			     pc->dscp_to_tc_map);
		if (!rsw_state_qos(s, pc->tc_to_pg_map, RSW_QOS_TC_TO_PG))
			note(l, pc->origin, "port '%s': no TC_TO_PRIORITY_GROUP_MAP named '%s'",
			     pc->name, pc->tc_to_pg_map);
	}
	for (size_t i = 0; i < s->n_nhg; i++) {
		struct rsw_nhg *g = s->nhg[i];
		if (!rsw_state_policy(s, g->policy))
			note(l, g->origin, "next-hop group '%s': no hash policy named '%s'", g->name,
			     g->policy);
		for (unsigned m = 0; m < g->n_members; m++)
			if (g->members[m].ip.family == 0) {
				note(l, g->origin, "next-hop group '%s': empty member", g->name);
				break;
			}
	}
	for (size_t i = 0; i < s->n_routes; i++) {
		const struct rsw_route *r = &s->routes[i];
		if (r->target == RSW_TGT_GROUP && find_nhg(s, r->group) < 0)
			note(l, r->origin, "route %s/%u: no next-hop group named '%s'",
			     rsw_ip_str(&r->prefix.ip, ip, sizeof(ip)), r->prefix.len, r->group);
		if (r->target == RSW_TGT_NEXTHOP && r->nexthop.family != r->prefix.ip.family &&
		    r->nexthop.family != 0) {
			/* IPv4 over an IPv6 next hop (RFC 5549) is not modelled */
			note(l, r->origin, "route %s/%u: next hop is of the other address family",
			     rsw_ip_str(&r->prefix.ip, ip, sizeof(ip)), r->prefix.len);
		}
	}
	if (rsw_errlist_count(l) != before)
		return -1;
	for (size_t i = 0; i < s->n_nhg; i++)
		nhg_reconcile(s, s->nhg[i]);
	return 0;
}

int rsw_state_finish(struct rsw_state *s, char *err, size_t errlen)
{
	struct rsw_errlist l;
	rsw_errlist_init(&l);
	finish_list(s, &l);
	return rsw_errlist_finish(&l, err, errlen);
}

int rsw_state_apply_all(struct rsw_state *s, const struct rsw_txn *txn, char *err, size_t errlen)
{
	struct rsw_errlist l;
	char one[1024];
	rsw_errlist_init(&l);
	for (size_t i = 0; i < rsw_txn_len(txn); i++)
		if (rsw_state_apply(s, rsw_txn_at(txn, i), one, sizeof(one)) < 0)
			rsw_errlist_add(&l, one);
	finish_list(s, &l);
	return rsw_errlist_finish(&l, err, errlen);
}
