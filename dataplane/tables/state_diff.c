/* The writes that turn one state into another: what a config reload applies as one transaction.
 * Entries are matched by their table's key; an entry whose content (not where it came from)
 * differs is set again; entries only in the old state are deleted. Deletes come first, routes
 * before the groups and neighbours they use; sets in dependency order. Ports are DPDK devices
 * opened at start: adding, removing or re-cabling one (devargs) needs a restart. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "state_diff.h"

/* Equal in everything but `origin` (where the entry came from). */
static int same_but_origin(const void *a, const void *b, size_t size, size_t off, size_t len)
{
	const char *x = a, *y = b;
	return !memcmp(x, y, off) && !memcmp(x + off + len, y + off + len, size - off - len);
}
#define SAME(a, b)                                                                              \
	same_but_origin((a), (b), sizeof(*(a)), offsetof(__typeof__(*(a)), origin),              \
			sizeof((a)->origin))

static int add(struct rsw_txn *t, uint8_t op, uint8_t table, const void *entry, size_t len)
{
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = op;
	w.table = table;
	memcpy(&w.u, entry, len);
	return rsw_txn_add(t, &w);
}

static const struct rsw_qos_map *qos_in(const struct rsw_state *s, const struct rsw_qos_map *q)
{
	for (size_t i = 0; i < s->n_qos; i++)
		if (s->qos[i].kind == q->kind && !strcmp(s->qos[i].name, q->name))
			return &s->qos[i];
	return NULL;
}

static const struct rsw_named_policy *pol_in(const struct rsw_state *s, const char *name)
{
	return rsw_state_policy(s, name);
}

static const struct rsw_neighbor *neigh_in(const struct rsw_state *s, const struct rsw_neighbor *n)
{
	for (size_t i = 0; i < s->n_neigh; i++)
		if (s->neigh[i].port == n->port && rsw_ip_eq(&s->neigh[i].ip, &n->ip))
			return &s->neigh[i];
	return NULL;
}

static const struct rsw_interface *intf_in(const struct rsw_state *s,
					   const struct rsw_interface *a)
{
	for (size_t i = 0; i < s->n_intf; i++)
		if (s->intf[i].port == a->port && rsw_ip_eq(&s->intf[i].addr.ip, &a->addr.ip))
			return &s->intf[i];
	return NULL;
}

static const struct rsw_route *route_in(const struct rsw_state *s, const struct rsw_route *r)
{
	return rsw_state_route(s, r);
}

static const struct rsw_classifier_rule *cls_in(const struct rsw_state *s, const char *name)
{
	for (size_t i = 0; i < s->n_cls; i++)
		if (!strcmp(s->cls[i].name, name))
			return &s->cls[i];
	return NULL;
}

/* A group as configured: name, policy, buckets, members' addresses (not the bucket table). */
static int nhg_same(const struct rsw_nhg *a, const struct rsw_nhg *b)
{
	if (strcmp(a->policy, b->policy) || a->n_buckets != b->n_buckets ||
	    a->resilient != b->resilient || a->n_members != b->n_members ||
	    memcmp(&a->ars, &b->ars, sizeof(a->ars)))
		return 0;
	for (unsigned i = 0; i < a->n_members; i++)
		if (!rsw_ip_eq(&a->members[i].ip, &b->members[i].ip))
			return 0;
	return 1;
}

/* The group as a write: its configuration, without the old bucket table. */
static int add_nhg(struct rsw_txn *t, uint8_t op, const struct rsw_nhg *g)
{
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = op;
	w.table = RSW_T_NHG;
	memcpy(w.u.nhg.name, g->name, sizeof(g->name));
	if (op != RSW_W_DELETE) {
		memcpy(w.u.nhg.policy, g->policy, sizeof(g->policy));
		w.u.nhg.n_buckets = g->n_buckets;
		w.u.nhg.resilient = g->resilient;
		w.u.nhg.ars = g->ars;
		w.u.nhg.n_members = g->n_members;
		for (unsigned i = 0; i < g->n_members; i++)
			w.u.nhg.members[i].ip = g->members[i].ip;
		memcpy(w.u.nhg.origin, g->origin, sizeof(g->origin));
	}
	return rsw_txn_add(t, &w);
}

static int check_ports(const struct rsw_state *cur, const struct rsw_state *next, char *err,
		       size_t errlen)
{
	if (cur->n_ports != next->n_ports) {
		snprintf(err, errlen, "the new config has %u ports, the running one %u: adding or "
			 "removing ports needs a restart", next->n_ports, cur->n_ports);
		return -1;
	}
	for (unsigned p = 0; p < cur->n_ports; p++)
		if (strcmp(cur->ports[p].name, next->ports[p].name) ||
		    strcmp(cur->ports[p].devargs, next->ports[p].devargs)) {
			snprintf(err, errlen, "port %u is %s (%s) in the running config and %s (%s) in "
				 "the new one: changing ports needs a restart", p, cur->ports[p].name,
				 cur->ports[p].devargs, next->ports[p].name, next->ports[p].devargs);
			return -1;
		}
	return 0;
}

int rsw_state_diff(const struct rsw_state *cur, const struct rsw_state *next, struct rsw_txn *t,
		   char *err, size_t errlen)
{
	int rc = 0;
	if (check_ports(cur, next, err, errlen) < 0)
		return -1;
	/* deletes: routes, then what they may use */
	for (size_t i = 0; i < cur->n_routes && !rc; i++)
		if (!route_in(next, &cur->routes[i]))
			rc = add(t, RSW_W_DELETE, RSW_T_ROUTE, &cur->routes[i], sizeof(cur->routes[i]));
	for (size_t i = 0; i < cur->n_nhg && !rc; i++)
		if (!rsw_state_nhg(next, cur->nhg[i]->name))
			rc = add_nhg(t, RSW_W_DELETE, cur->nhg[i]);
	/* learnt neighbours are not the config's: a reload keeps them (a configured one for the
	 * same address replaces its learnt entry below) */
	for (size_t i = 0; i < cur->n_neigh && !rc; i++)
		if (!cur->neigh[i].dynamic && !neigh_in(next, &cur->neigh[i]))
			rc = add(t, RSW_W_DELETE, RSW_T_NEIGHBOR, &cur->neigh[i], sizeof(cur->neigh[i]));
	for (size_t i = 0; i < cur->n_intf && !rc; i++)
		if (!intf_in(next, &cur->intf[i]))
			rc = add(t, RSW_W_DELETE, RSW_T_INTERFACE, &cur->intf[i], sizeof(cur->intf[i]));
	for (size_t i = 0; i < cur->n_cls && !rc; i++)
		if (!cls_in(next, cur->cls[i].name))
			rc = add(t, RSW_W_DELETE, RSW_T_CLASSIFIER, &cur->cls[i], sizeof(cur->cls[i]));
	for (size_t i = 0; i < cur->n_pol && !rc; i++)
		if (!pol_in(next, cur->pol[i].name))
			rc = add(t, RSW_W_DELETE, RSW_T_HASH_POLICY, &cur->pol[i], sizeof(cur->pol[i]));
	for (size_t i = 0; i < cur->n_qos && !rc; i++)
		if (!qos_in(next, &cur->qos[i]))
			rc = add(t, RSW_W_DELETE, RSW_T_QOS_MAP, &cur->qos[i], sizeof(cur->qos[i]));
	/* sets, in the order references need them */
	if (!rc && memcmp(&cur->sw, &next->sw, sizeof(cur->sw)))
		rc = add(t, RSW_W_SET, RSW_T_SWITCH, &next->sw, sizeof(next->sw));
	for (unsigned p = 0; p < next->n_ports && !rc; p++)
		if (!SAME(&cur->ports[p], &next->ports[p]))
			rc = add(t, RSW_W_MODIFY, RSW_T_PORT, &next->ports[p], sizeof(next->ports[p]));
	for (size_t i = 0; i < next->n_qos && !rc; i++) {
		const struct rsw_qos_map *o = qos_in(cur, &next->qos[i]);
		if (!o || !SAME(o, &next->qos[i]))
			rc = add(t, RSW_W_SET, RSW_T_QOS_MAP, &next->qos[i], sizeof(next->qos[i]));
	}
	for (size_t i = 0; i < next->n_pol && !rc; i++) {
		const struct rsw_named_policy *o = pol_in(cur, next->pol[i].name);
		if (!o || !SAME(o, &next->pol[i]))
			rc = add(t, RSW_W_SET, RSW_T_HASH_POLICY, &next->pol[i], sizeof(next->pol[i]));
	}
	for (size_t i = 0; i < next->n_cls && !rc; i++) {
		const struct rsw_classifier_rule *o = cls_in(cur, next->cls[i].name);
		if (!o || !SAME(o, &next->cls[i]))
			rc = add(t, RSW_W_SET, RSW_T_CLASSIFIER, &next->cls[i], sizeof(next->cls[i]));
	}
	for (size_t i = 0; i < next->n_intf && !rc; i++) {
		const struct rsw_interface *o = intf_in(cur, &next->intf[i]);
		if (!o || !SAME(o, &next->intf[i]))
			rc = add(t, RSW_W_SET, RSW_T_INTERFACE, &next->intf[i], sizeof(next->intf[i]));
	}
	for (size_t i = 0; i < next->n_neigh && !rc; i++) {
		const struct rsw_neighbor *o = neigh_in(cur, &next->neigh[i]);
		if (!o || !SAME(o, &next->neigh[i]))
			rc = add(t, RSW_W_SET, RSW_T_NEIGHBOR, &next->neigh[i], sizeof(next->neigh[i]));
	}
	for (size_t i = 0; i < next->n_nhg && !rc; i++) {
		const struct rsw_nhg *o = rsw_state_nhg(cur, next->nhg[i]->name);
		if (!o || !nhg_same(o, next->nhg[i]))
			rc = add_nhg(t, RSW_W_SET, next->nhg[i]);
	}
	for (size_t i = 0; i < next->n_routes && !rc; i++) {
		const struct rsw_route *o = route_in(cur, &next->routes[i]);
		if (!o || !SAME(o, &next->routes[i]))
			rc = add(t, RSW_W_SET, RSW_T_ROUTE, &next->routes[i], sizeof(next->routes[i]));
	}
	if (rc)
		snprintf(err, errlen, "out of memory");
	return rc ? -1 : 0;
}

struct rsw_state *rsw_state_from_txn(const struct rsw_txn *txn, char *err, size_t errlen)
{
	struct rsw_state *s = rsw_state_new();
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (rsw_state_apply_all(s, txn, err, errlen) < 0) {
		rsw_state_free(s);
		return NULL;
	}
	return s;
}
