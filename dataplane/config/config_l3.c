/* NEIGH, NEXTHOP_GROUP, STATIC_ROUTE and POLICY_ROUTE as table writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"

/* "PORT|IP" keys of NEIGH and POLICY_ROUTE. */
static int split_key(struct cc *c, yaml_node_t *k, const char *table, int *port, char *rest,
		     size_t restlen)
{
	const char *s = ydoc_str(k);
	const char *bar = s ? strchr(s, '|') : NULL;
	char pn[RSW_NAME_MAX];
	if (!bar || (size_t)(bar - s) >= sizeof(pn) || strlen(bar + 1) >= restlen)
		return ydoc_error(&c->y, k, table, "expected a key like \"Ethernet0|%s\", got '%s'",
				  strcmp(table, "NEIGH") ? "10.1.0.0/16" : "10.0.0.1", s ? s : "?");
	memcpy(pn, s, (size_t)(bar - s));
	pn[bar - s] = 0;
	strcpy(rest, bar + 1);
	*port = rsw_cc_port_by_name(c, k, table, pn);
	return *port < 0 ? -1 : 0;
}

static void parse_neigh(struct cc *c, yaml_node_t *t)
{
	if (!t || rsw_cc_want_map(c, t, "NEIGH") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_INSERT, .table = RSW_T_NEIGHBOR};
		struct rsw_neighbor *n = &w.u.neigh;
		char ip[64];
		int port;
		if (split_key(c, k, "NEIGH", &port, ip, sizeof(ip)) < 0)
			continue;
		n->port = (uint16_t)port;
		if (rsw_ip_parse(ip, &n->ip) < 0) {
			ydoc_error(&c->y, k, "NEIGH", "'%s' is not an IPv4 or IPv6 address", ip);
			continue;
		}
		char key[128];
		snprintf(key, sizeof(key), "NEIGH|%s", ydoc_str(k));
		rsw_cc_origin(c, k, n->origin);
		struct rsw_fval f[NB_FAMILY + 1];
		if (rsw_cc_fields(c, rsw_schema_tables[T_NEIGH].fields, key, k, v, f))
			continue;
		memcpy(n->mac, f[NB_NEIGH].mac, 6);
		const char *want = n->ip.family == 4 ? "IPv4" : "IPv6";
		if (f[NB_FAMILY].v && strcmp(f[NB_FAMILY].s, want)) {
			ydoc_error(&c->y, f[NB_FAMILY].v, key, "family: expected %s for this address",
				   want);
			continue;
		}
		rsw_cc_add(c, &w);
	}
}

/* "10.0.0.1,10.0.0.3" → members. An address listed twice counts once (a warning says so):
 * SONiC takes such a list as it comes, and one next hop twice would not be a weight here. */
static int parse_members(struct cc *c, yaml_node_t *v, const char *key, struct rsw_nhg *g)
{
	const char *s = ydoc_str(v);
	char buf[8192];
	if (!s || strlen(s) >= sizeof(buf))
		return ydoc_error(&c->y, v, key, "nexthop: expected next hops like "
				  "\"10.0.0.1,10.0.0.3\"");
	strcpy(buf, s);
	g->n_members = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (g->n_members == RSW_ECMP_MAX_MEMBERS)
			return ydoc_error(&c->y, v, key, "nexthop: more than %d next hops",
					  RSW_ECMP_MAX_MEMBERS);
		struct rsw_ip ip;
		memset(&ip, 0, sizeof(ip));
		if (rsw_ip_parse(tok, &ip) < 0)
			return ydoc_error(&c->y, v, key, "nexthop: '%s' is not an IPv4 or IPv6 address",
					  tok);
		int dup = 0;
		for (unsigned i = 0; i < g->n_members; i++)
			dup |= !memcmp(&g->members[i].ip, &ip, sizeof(ip));
		if (dup) {
			rsw_cc_warn(c, v, "%s: nexthop: %s listed twice; counted once", key, tok);
			continue;
		}
		g->members[g->n_members++].ip = ip;
	}
	if (g->n_members == 0)
		return ydoc_error(&c->y, v, key, "nexthop: expected at least one next hop");
	return 0;
}

static void parse_nhg(struct cc *c, yaml_node_t *t)
{
	if (!t || rsw_cc_want_map(c, t, "NEXTHOP_GROUP") < 0)
		return;
	struct rsw_table_write *w = calloc(1, sizeof(*w));
	if (!w) {
		ydoc_error(&c->y, t, "NEXTHOP_GROUP", "out of memory");
		return;
	}
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		memset(w, 0, sizeof(*w));
		w->op = RSW_W_INSERT;
		w->table = RSW_T_NHG;
		struct rsw_nhg *g = &w->u.nhg;
		char key[96];
		if (rsw_cc_get_name(c, k, "NEXTHOP_GROUP", g->name) < 0)
			continue;
		snprintf(key, sizeof(key), "NEXTHOP_GROUP|%s", g->name);
		rsw_cc_origin(c, k, g->origin);
		strcpy(g->policy, RSW_DEFAULT_POLICY);
		g->n_buckets = RSW_DEFAULT_BUCKETS;
		g->resilient = 1;
		struct rsw_fval f[NHG_ARS + 1];
		if (rsw_cc_fields(c, rsw_schema_tables[T_NHG].fields, key, k, v, f) ||
		    parse_members(c, f[NHG_NEXTHOP].v, key, g) < 0)
			continue;
		if (f[NHG_POLICY].v)
			strcpy(g->policy, f[NHG_POLICY].s);
		if (f[NHG_BUCKETS].v)
			g->n_buckets = (uint32_t)f[NHG_BUCKETS].u;
		if (f[NHG_RESILIENT].v)
			g->resilient = (uint8_t)f[NHG_RESILIENT].b;
		if (f[NHG_ARS].v && rsw_cc_ars_object(c, f[NHG_ARS].v, key, &g->ars) < 0)
			continue;
		rsw_cc_add(c, w);
	}
	free(w);
}

/* A STATIC_ROUTE with several next hops gets a group of its own, named after its line (and
 * `suffix`): of all of them, or with a distance list, of those of one distance (tier). */
static int implicit_group(struct cc *c, yaml_node_t *at, const char *key, const char *suffix,
			  const struct rsw_nhg *tier, char *name_out)
{
	struct rsw_table_write *w = calloc(1, sizeof(*w));
	if (!w)
		return ydoc_error(&c->y, at, key, "out of memory");
	w->op = RSW_W_SET;
	w->table = RSW_T_NHG;
	struct rsw_nhg *g = &w->u.nhg;
	int rc = -1;
	if (tier)
		*g = *tier;
	else if (parse_members(c, at, key, g) < 0)
		goto out;
	snprintf(g->name, RSW_NAME_MAX, "ecmp%u%s", ydoc_line(at), suffix);
	strcpy(g->policy, RSW_DEFAULT_POLICY);
	g->n_buckets = RSW_DEFAULT_BUCKETS;
	g->resilient = 1;
	rsw_cc_origin(c, at, g->origin);
	strcpy(name_out, g->name);
	rc = rsw_cc_add(c, w);
out:
	free(w);
	return rc;
}

/* The prefix of a STATIC_ROUTE key: "10.1.0.0/16", or SONiC's "VRF|10.1.0.0/16" for the
 * default VRF (the only one here). */
static int route_prefix(struct cc *c, yaml_node_t *k, const char *ks, char *pfx, size_t len)
{
	const char *bar = ks ? strchr(ks, '|') : NULL;
	if (bar) {
		size_t vl = (size_t)(bar - ks);
		if (vl != 7 || strncmp(ks, "default", 7))
			return ydoc_error(&c->y, k, "STATIC_ROUTE", "VRF '%.*s': only the default VRF "
					  "is modelled (expected 'default|PREFIX' or a prefix)",
					  (int)vl, ks);
		ks = bar + 1;
	}
	if (!ks || strlen(ks) >= len)
		return ydoc_error(&c->y, k, "STATIC_ROUTE", "expected a prefix like 10.1.0.0/16");
	strcpy(pfx, ks);
	return 0;
}

/* STATIC_ROUTE `distance`, SONiC's list beside `nexthop` (FRR's administrative distance of
 * each next hop): the next hops of the lowest distance carry the route (one, or a group of
 * them), those of the next distance become its backup group, used only while the first are
 * down (tables/fib.c). 1: the route is set up; 0: no tiers (one distance for all); -1: error. */
static int route_tiers(struct cc *c, const struct rsw_fval *f, const char *key, struct rsw_route *r)
{
	const char *nh = f[RT_NEXTHOP].s, *ds = f[RT_DISTANCE].s;
	if (!f[RT_DISTANCE].v)
		return 0;
	if (!ds || !f[RT_NEXTHOP].v)
		return ydoc_error(&c->y, f[RT_DISTANCE].v, key, "distance: expected a list like "
				  "\"0,10\", one per next hop of `nexthop`");
	struct rsw_nhg *all = calloc(3, sizeof(*all)), *tier = all + 1;
	if (!all)
		return ydoc_error(&c->y, f[RT_DISTANCE].v, key, "out of memory");
	unsigned dist[RSW_ECMP_MAX_MEMBERS], n = 0, lo = 256, hi = 0;
	int rc = -1;
	char buf[1024];
	if (parse_members(c, f[RT_NEXTHOP].v, key, all) < 0)
		goto out;
	if (strlen(ds) >= sizeof(buf)) {
		ydoc_error(&c->y, f[RT_DISTANCE].v, key, "distance: too long");
		goto out;
	}
	strcpy(buf, ds);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long d = strtol(tok, &end, 10);
		if (end == tok || *end || d < 0 || d > 255 || n == RSW_ECMP_MAX_MEMBERS) {
			ydoc_error(&c->y, f[RT_DISTANCE].v, key, "distance: '%s' is not 0..255", tok);
			goto out;
		}
		dist[n++] = (unsigned)d;
	}
	unsigned listed = 1;
	for (const char *p = nh; *p; p++)
		listed += *p == ',';
	if (n != listed || all->n_members != listed) {
		ydoc_error(&c->y, f[RT_DISTANCE].v, key, "distance: %u value%s for %u next hops "
			   "(one per next hop, in nexthop's order, each next hop once)", n,
			   n == 1 ? "" : "s", listed);
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		lo = dist[i] < lo ? dist[i] : lo;
		hi = dist[i] > hi ? dist[i] : hi;
	}
	for (unsigned i = 0; i < n; i++)
		if (dist[i] != lo && dist[i] != hi) {
			ydoc_error(&c->y, f[RT_DISTANCE].v, key, "distance: at most two distances (the "
				   "next hops in use and their backup), got %u, %u and %u", lo,
				   dist[i], hi);
			goto out;
		}
	if (lo == hi) {
		rc = 0;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		struct rsw_nhg *t = &tier[dist[i] != lo];
		t->members[t->n_members++].ip = all->members[i].ip;
	}
	if (tier[0].n_members == 1) {
		r->target = RSW_TGT_NEXTHOP;
		r->nexthop = tier[0].members[0].ip;
	} else {
		r->target = RSW_TGT_GROUP;
		if (implicit_group(c, f[RT_NEXTHOP].v, key, "", &tier[0], r->group) < 0)
			goto out;
	}
	rc = implicit_group(c, f[RT_NEXTHOP].v, key, "backup", &tier[1], r->backup) < 0 ? -1 : 1;
out:
	free(all);
	return rc;
}

static void parse_routes(struct cc *c, yaml_node_t *t, int pbr)
{
	const char *tname = pbr ? "POLICY_ROUTE" : "STATIC_ROUTE";
	if (!t || rsw_cc_want_map(c, t, tname) < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_INSERT, .table = RSW_T_ROUTE};
		struct rsw_route *r = &w.u.route;
		char pfx[96];
		const char *ks = ydoc_str(k);
		r->in_port = -1;
		if (pbr) {
			int port;
			if (split_key(c, k, tname, &port, pfx, sizeof(pfx)) < 0)
				continue;
			r->in_port = port;
		} else if (route_prefix(c, k, ks, pfx, sizeof(pfx)) < 0) {
			continue;
		}
		int prc = rsw_prefix_parse(pfx, &r->prefix);
		if (prc == -2) {
			ydoc_error(&c->y, k, tname, "'%s' has host bits set", pfx);
			continue;
		}
		if (prc < 0) {
			ydoc_error(&c->y, k, tname, "'%s' is not a prefix (expected like 10.1.0.0/16 or "
				   "2001:db8::/32)", pfx);
			continue;
		}
		char key[160];
		snprintf(key, sizeof(key), "%s|%s", tname, ks);
		rsw_cc_origin(c, k, r->origin);
		struct rsw_fval f[RT_DISTANCE + 1];
		const struct rsw_table_schema *ts = &rsw_schema_tables[pbr ? T_PBR : T_ROUTE];
		if (rsw_cc_fields(c, ts->fields, key, k, v, f))
			continue;
		int n_targets = !!f[RT_NEXTHOP].v + !!f[RT_GROUP].v +
				(f[RT_BLACKHOLE].v && f[RT_BLACKHOLE].b);
		if (n_targets != 1) {
			ydoc_error(&c->y, k, key,
				   "expected exactly one of nexthop, nexthop_group, blackhole: true");
			continue;
		}
		const char *nh = f[RT_NEXTHOP].s;
		int tiers = pbr ? 0 : route_tiers(c, f, key, r);
		if (tiers < 0)
			continue;
		if (tiers) {
			/* the next hops in use and their backup */
		} else if (f[RT_NEXTHOP].v && nh && strchr(nh, ',')) {
			r->target = RSW_TGT_GROUP;
			if (implicit_group(c, f[RT_NEXTHOP].v, key, "", NULL, r->group) < 0)
				continue;
		} else if (f[RT_NEXTHOP].v) {
			r->target = RSW_TGT_NEXTHOP;
			if (!nh || rsw_ip_parse(nh, &r->nexthop) < 0) {
				ydoc_error(&c->y, f[RT_NEXTHOP].v, key,
					   "nexthop: expected a next-hop address");
				continue;
			}
		} else if (f[RT_GROUP].v) {
			r->target = RSW_TGT_GROUP;
			strcpy(r->group, f[RT_GROUP].s);
		} else {
			r->target = RSW_TGT_BLACKHOLE;
		}
		if (pbr && f[RT_FALLBACK].v)
			r->keep_when_down = (uint8_t)!f[RT_FALLBACK].b;
		rsw_cc_add(c, &w);
	}
}

void rsw_cc_l3(struct cc *c)
{
	parse_neigh(c, c->tables[T_NEIGH]);
	parse_nhg(c, c->tables[T_NHG]);
	parse_routes(c, c->tables[T_ROUTE], 0);
	parse_routes(c, c->tables[T_PBR], 1);
}
