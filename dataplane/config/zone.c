#include <libgen.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "yaml_doc.h"
#include "zone.h"

#define NS_PER_M 5 /* propagation at 2e8 m/s (REFERENCE §2, headroom) */

static yaml_node_t *table(struct ydoc *y, const char *name)
{
	yaml_node_t *root = ydoc_root(y);
	if (!root || root->type != YAML_MAPPING_NODE)
		return NULL;
	YDOC_FOREACH_PAIR(y, root, pr) {
		const char *k = ydoc_str(ydoc_node(y, pr->key));
		if (k && !strcmp(k, name))
			return ydoc_node(y, pr->value);
	}
	return NULL;
}

int rsw_zone_detect(const char *path, char *err, size_t errlen)
{
	struct ydoc y;
	if (ydoc_load(&y, path, err, errlen) < 0)
		return -1;
	/* a zone by its ZONE table; SWITCH alone is also a SONiC CONFIG_DB table */
	int zone = table(&y, "ZONE") ||
		   (table(&y, "SWITCH") && table(&y, "LINK") && !table(&y, "PORT"));
	ydoc_free(&y);
	return zone;
}

/* A switch config compiled and committed, with the run's seed and policy override. */
static struct rsw_switch *compile_switch(const char *path, uint64_t seed,
					 const struct rsw_hash_policy *policy,
					 struct rte_rcu_qsbr *qsbr, char *err, size_t errlen)
{
	struct rsw_txn *txn = rsw_txn_new();
	struct rsw_switch *sw = rsw_switch_new(qsbr, err, errlen);
	int ok = txn && sw && rsw_config_compile(path, txn, err, errlen) == 0;
	if (!txn || !sw)
		snprintf(err, errlen, "out of memory");
	for (size_t i = 0; ok && i < rsw_txn_len(txn); i++) {
		struct rsw_table_write *w = (struct rsw_table_write *)rsw_txn_at(txn, i);
		if (w->table == RSW_T_SWITCH)
			w->u.sw.tm.ecn_seed = seed; /* the ECN random source */
		if (w->table == RSW_T_HASH_POLICY && policy)
			w->u.policy.pol = *policy;
	}
	if (ok && policy) {
		/* the built-in default too, for groups of a config without SWITCH_HASH */
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_HASH_POLICY};
		strcpy(w.u.policy.name, RSW_DEFAULT_POLICY);
		w.u.policy.pol = *policy;
		snprintf(w.u.policy.origin, sizeof(w.u.policy.origin), "--hash-policy");
		ok = rsw_txn_add(txn, &w) == 0;
	}
	ok = ok && rsw_switch_commit(sw, txn, err, errlen) == 0;
	rsw_txn_free(txn);
	if (!ok) {
		rsw_switch_free(sw);
		return NULL;
	}
	return sw;
}

int rsw_zone_single(const char *path, const struct rsw_zone_opts *o, struct rsw_zone *z,
		    char *err, size_t errlen)
{
	memset(z, 0, sizeof(*z));
	z->sw[0].sw = compile_switch(path, o->ecn_seed, o->policy, o->qsbr, err, errlen);
	if (!z->sw[0].sw)
		return -1;
	z->sw[0].name = strdup(z->sw[0].sw->state->sw.hostname[0] ? z->sw[0].sw->state->sw.hostname
								 : "switch");
	z->sw_config[0] = strdup(path);
	z->n_sw = 1;
	if (!z->sw[0].name || !z->sw_config[0]) {
		snprintf(err, errlen, "out of memory");
		rsw_zone_free(z);
		return -1;
	}
	return 0;
}

void rsw_zone_free(struct rsw_zone *z)
{
	for (unsigned s = 0; s < z->n_sw; s++) {
		rsw_switch_free(z->sw[s].sw);
		free((char *)z->sw[s].name);
		free(z->sw_config[s]);
	}
	for (unsigned h = 0; h < z->n_host; h++) {
		free((char *)z->host[h].name);
		free((char *)z->host[h].pcap);
		free(z->host_devargs[h]);
	}
	free(z->name);
	memset(z, 0, sizeof(*z));
}

int rsw_zone_host_index(const struct rsw_zone *z, const char *name)
{
	for (unsigned h = 0; h < z->n_host; h++)
		if (!strcmp(z->host[h].name, name))
			return (int)h;
	return -1;
}

static int switch_index(const struct rsw_zone *z, const char *name, size_t len)
{
	for (unsigned s = 0; s < z->n_sw; s++)
		if (strlen(z->sw[s].name) == len && !strncmp(z->sw[s].name, name, len))
			return (int)s;
	return -1;
}

int rsw_zone_port(const struct rsw_zone *z, const char *spec, unsigned *sw, uint16_t *port)
{
	const char *bar = strchr(spec, '|');
	int s = bar ? switch_index(z, spec, (size_t)(bar - spec)) : z->n_sw == 1 ? 0 : -1;
	if (s < 0)
		return -1;
	int p = rsw_state_port_index(z->sw[s].sw->state, bar ? bar + 1 : spec);
	if (p < 0)
		return -1;
	*sw = (unsigned)s;
	*port = (uint16_t)p;
	return 0;
}

static char *resolve(const char *zone_path, const char *rel)
{
	if (rel[0] == '/')
		return strdup(rel);
	char *copy = strdup(zone_path);
	if (!copy)
		return NULL;
	const char *dir = dirname(copy);
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *out = malloc(n);
	if (out)
		snprintf(out, n, "%s/%s", dir, rel);
	free(copy);
	return out;
}

static int get_field(struct ydoc *y, yaml_node_t *map, const char *key, const char *field,
		     const char **out, const char *const *allowed)
{
	*out = NULL;
	if (map->type != YAML_MAPPING_NODE)
		return ydoc_error(y, map, key, "expected a mapping");
	YDOC_FOREACH_PAIR(y, map, pr) {
		yaml_node_t *k = ydoc_node(y, pr->key), *v = ydoc_node(y, pr->value);
		const char *ks = ydoc_str(k);
		int known = 0;
		for (const char *const *a = allowed; *a; a++)
			known |= ks && !strcmp(ks, *a);
		if (!known) {
			char list[256] = "";
			for (const char *const *a = allowed; *a; a++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 a == allowed ? "" : ", ", *a);
			return ydoc_error(y, k, key, "unknown field '%s' (expected %s)", ks ? ks : "?",
					  list);
		}
		if (!strcmp(ks, field)) {
			if (!ydoc_str(v))
				return ydoc_error(y, v, key, "%s: expected a scalar", field);
			*out = ydoc_str(v);
		}
	}
	return 0;
}

static int parse_switches(struct ydoc *y, yaml_node_t *t, const char *path,
			  const struct rsw_zone_opts *o, struct rsw_zone *z)
{
	static const char *const fields[] = {"config", NULL};
	if (t->type != YAML_MAPPING_NODE || t->data.mapping.pairs.start == t->data.mapping.pairs.top)
		return ydoc_error(y, t, "SWITCH", "expected a mapping of switch name to {config: FILE}");
	YDOC_FOREACH_PAIR(y, t, pr) {
		yaml_node_t *k = ydoc_node(y, pr->key), *v = ydoc_node(y, pr->value);
		const char *name = ydoc_str(k), *cfg;
		if (!name || !*name || strchr(name, '|') || strchr(name, '/'))
			return ydoc_error(y, k, "SWITCH", "expected a switch name without '|' or '/'");
		if (z->n_sw == RSW_ZONE_MAX_SWITCHES)
			return ydoc_error(y, k, "SWITCH", "more than %d switches", RSW_ZONE_MAX_SWITCHES);
		if (switch_index(z, name, strlen(name)) >= 0)
			return ydoc_error(y, k, "SWITCH", "switch '%s' defined twice", name);
		if (get_field(y, v, "SWITCH", "config", &cfg, fields) < 0)
			return -1;
		if (!cfg)
			return ydoc_error(y, v, "SWITCH", "%s: missing config: FILE", name);
		unsigned s = z->n_sw;
		z->sw_config[s] = resolve(path, cfg);
		z->sw[s].name = strdup(name);
		z->n_sw++;
		if (!z->sw_config[s] || !z->sw[s].name)
			return ydoc_error(y, v, "SWITCH", "out of memory");
		char e[1024];
		const struct rsw_hash_policy *own =
			o->switch_policy ? o->switch_policy(o->switch_policy_ctx, name) : NULL;
		z->sw[s].sw = compile_switch(z->sw_config[s], o->ecn_seed + s, own ? own : o->policy,
					   o->qsbr, e, sizeof(e));
		if (!z->sw[s].sw)
			return ydoc_error(y, v, "SWITCH", "%s: %s", name, e);
	}
	return 0;
}

/* The hosts by name, as they are read: a zone of 3,072 hosts is not searched host by host for
 * each name and each link end. */
struct host_names {
	struct hsearch_data tab;
	int made;
};

/* The host named name (the first of that name, as rsw_zone_host_index), or -1. */
static int host_named(struct host_names *hn, const char *name)
{
	ENTRY e = {.key = (char *)name}, *got;
	return hn->made && hsearch_r(e, FIND, &got, &hn->tab) ? (int)(uintptr_t)got->data - 1 : -1;
}

static int parse_hosts(struct ydoc *y, yaml_node_t *t, const char *path, struct rsw_zone *z,
		       struct host_names *hn)
{
	static const char *const fields[] = {"pcap", "devargs", "description", NULL};
	if (!t)
		return 0;
	if (t->type != YAML_MAPPING_NODE)
		return ydoc_error(y, t, "HOST", "expected a mapping of host name to {pcap: FILE}");
	size_t n = (size_t)(t->data.mapping.pairs.top - t->data.mapping.pairs.start);
	if (!hcreate_r(2 * n + 1, &hn->tab))
		return ydoc_error(y, t, "HOST", "out of memory");
	hn->made = 1;
	YDOC_FOREACH_PAIR(y, t, pr) {
		yaml_node_t *k = ydoc_node(y, pr->key), *v = ydoc_node(y, pr->value);
		const char *name = ydoc_str(k), *pcap, *devargs = NULL;
		if (!name || !*name || strchr(name, '|') || strchr(name, '/'))
			return ydoc_error(y, k, "HOST", "expected a host name without '|' or '/'");
		if (z->n_host == RSW_ZONE_MAX_HOSTS)
			return ydoc_error(y, k, "HOST", "more than %d hosts", RSW_ZONE_MAX_HOSTS);
		if (host_named(hn, name) >= 0 || switch_index(z, name, strlen(name)) >= 0)
			return ydoc_error(y, k, "HOST", "name '%s' is already used", name);
		if (v->type == YAML_SCALAR_NODE && !*ydoc_str(v))
			pcap = NULL; /* "h0:" with nothing */
		else if (get_field(y, v, "HOST", "pcap", &pcap, fields) < 0 ||
			 get_field(y, v, "HOST", "devargs", &devargs, fields) < 0)
			return -1;
		if (devargs && (!*devargs || strlen(devargs) >= RSW_DEVARGS_MAX))
			return ydoc_error(y, v, "HOST", "%s: devargs: expected a DPDK device of at most "
					  "%d characters", name, RSW_DEVARGS_MAX - 1);
		struct rsw_topo_host *h = &z->host[z->n_host];
		h->name = strdup(name);
		h->pcap = pcap ? resolve(path, pcap) : NULL;
		z->host_devargs[z->n_host++] = devargs ? strdup(devargs) : NULL;
		ENTRY e = {.key = (char *)h->name, .data = (void *)(uintptr_t)z->n_host}, *got;
		if (!h->name || (pcap && !h->pcap) || (devargs && !z->host_devargs[z->n_host - 1]) ||
		    !hsearch_r(e, ENTER, &got, &hn->tab))
			return ydoc_error(y, v, "HOST", "out of memory");
	}
	return 0;
}

/* What the links are read with: the hosts by name, and the link that took each end first (1 +
 * its index; 0: free), so that neither costs a pass over every host or link per link (a zone
 * of 3,072 hosts has 6,144 links). */
struct link_ctx {
	struct host_names *hosts;
	uint32_t *host_link;       /* by host */
	uint32_t *port_link;       /* by switch * RSW_MAX_PORTS + port */
};

static int link_ctx_init(struct link_ctx *cx, const struct rsw_zone *z, struct host_names *hn)
{
	cx->hosts = hn;
	cx->host_link = calloc(z->n_host ? z->n_host : 1, sizeof(*cx->host_link));
	cx->port_link = calloc(z->n_sw ? (size_t)z->n_sw * RSW_MAX_PORTS : 1,
			       sizeof(*cx->port_link));
	return cx->host_link && cx->port_link ? 0 : -1;
}

static void link_ctx_free(struct link_ctx *cx)
{
	free(cx->host_link);
	free(cx->port_link);
}

static uint32_t *end_link(struct link_ctx *cx, const struct rsw_topo_end *e)
{
	return e->sw == RSW_TOPO_HOST ? &cx->host_link[e->idx]
				      : &cx->port_link[(size_t)e->sw * RSW_MAX_PORTS + e->idx];
}

/* "HOST" or "SWITCH|PORT" as a link end. */
static int parse_end(struct ydoc *y, yaml_node_t *at, const struct rsw_zone *z,
		     struct link_ctx *cx, const char *spec, struct rsw_topo_end *e)
{
	int h = host_named(cx->hosts, spec);
	if (h >= 0) {
		*e = (struct rsw_topo_end){.sw = RSW_TOPO_HOST, .idx = (uint16_t)h};
		return 0;
	}
	unsigned s;
	uint16_t p;
	if (!strchr(spec, '|') || rsw_zone_port(z, spec, &s, &p) < 0)
		return ydoc_error(y, at, "LINK", "'%s' is neither a host nor SWITCH|PORT of a switch "
				  "in SWITCH", spec);
	*e = (struct rsw_topo_end){.sw = (int)s, .idx = p};
	return 0;
}

/* A LINK entry's fields as written: both ends named, the optional length (metres) and speed
 * (Mb/s, 0: unset). */
struct link_text {
	const char *a, *b, *speed, *length;
	unsigned long m;
	uint32_t speed_mbps;
};

static int link_fields(struct ydoc *y, yaml_node_t *v, struct link_text *lt)
{
	static const char *const fields[] = {"a", "b", "speed", "length", NULL};
	if (get_field(y, v, "LINK", "a", &lt->a, fields) < 0 ||
	    get_field(y, v, "LINK", "b", &lt->b, fields) < 0 ||
	    get_field(y, v, "LINK", "speed", &lt->speed, fields) < 0 ||
	    get_field(y, v, "LINK", "length", &lt->length, fields) < 0)
		return -1;
	if (!lt->a || !lt->b)
		return ydoc_error(y, v, "LINK", "a link needs both ends, a and b");
	return 0;
}

/* The length and speed as numbers. */
static int link_numbers(struct ydoc *y, yaml_node_t *v, struct link_text *lt)
{
	char *end;
	lt->m = 0;
	if (lt->length) {
		lt->m = strtoul(lt->length, &end, 10);
		if (lt->length[0] == '-' || end == lt->length || (strcmp(end, "m") && *end) ||
		    lt->m > 100000)
			return ydoc_error(y, v, "LINK", "length: expected metres like 40m, got '%s'",
					  lt->length);
	}
	lt->speed_mbps = 0;
	if (lt->speed) {
		unsigned long x = strtoul(lt->speed, &end, 10);
		if (lt->speed[0] == '-' || *end || x == 0 || x > 1600000)
			return ydoc_error(y, v, "LINK", "speed: expected Mb/s like 400000, got '%s'",
					  lt->speed);
		lt->speed_mbps = (uint32_t)x;
	}
	return 0;
}

/* Neither end of l is an end of an earlier link; the one named is that of the earliest link
 * taking either (a if it took both). */
static int ends_free(struct ydoc *y, yaml_node_t *v, struct link_ctx *cx,
		     const struct rsw_topo_link *l, const struct link_text *lt)
{
	uint32_t a = *end_link(cx, &l->a), b = *end_link(cx, &l->b);
	if (a && (!b || a <= b))
		return ydoc_error(y, v, "LINK", "%s is already linked", lt->a);
	if (b)
		return ydoc_error(y, v, "LINK", "%s is already linked", lt->b);
	return 0;
}

/* The switch ends' port speeds: they must agree with each other and with speed; the link
 * takes theirs. A length other than a port's CABLE_LENGTH is warned of. */
static int link_speed(struct ydoc *y, yaml_node_t *v, const struct rsw_zone_opts *o,
		      const struct rsw_zone *z, struct rsw_topo_link *l, struct link_text *lt)
{
	const struct rsw_topo_end *ends[2] = {&l->a, &l->b};
	const char *names[2] = {lt->a, lt->b};
	for (unsigned k = 0; k < 2; k++) {
		if (ends[k]->sw == RSW_TOPO_HOST)
			continue;
		const struct rsw_port_cfg *pc = &z->sw[ends[k]->sw].sw->state->ports[ends[k]->idx];
		if (lt->speed_mbps && pc->speed_mbps != lt->speed_mbps)
			return ydoc_error(y, v, "LINK", "%s - %s: %s runs at %u Mb/s, the link at "
					  "%u", lt->a, lt->b, names[k], pc->speed_mbps,
					  lt->speed_mbps);
		lt->speed_mbps = pc->speed_mbps;
		if (lt->length && o->warnings && pc->cable_length_m != lt->m)
			fprintf(o->warnings, "%s:%u: LINK: warning: %s - %s is %lum but %s's "
				"headroom assumes CABLE_LENGTH %um\n", y->file, ydoc_line(v), lt->a,
				lt->b, lt->m, names[k], pc->cable_length_m);
	}
	l->speed_mbps = lt->speed_mbps;
	return 0;
}

/* One LINK entry into z's links. */
static int parse_link(struct ydoc *y, yaml_node_t *v, const struct rsw_zone_opts *o,
		      struct rsw_zone *z, struct link_ctx *cx)
{
	struct link_text lt;
	if (link_fields(y, v, &lt) < 0)
		return -1;
	if (z->n_link == RSW_ZONE_MAX_LINKS)
		return ydoc_error(y, v, "LINK", "more than %d links", RSW_ZONE_MAX_LINKS);
	struct rsw_topo_link *l = &z->link[z->n_link];
	if (parse_end(y, v, z, cx, lt.a, &l->a) < 0 || parse_end(y, v, z, cx, lt.b, &l->b) < 0)
		return -1;
	if (l->a.sw == RSW_TOPO_HOST && l->b.sw == RSW_TOPO_HOST)
		return ydoc_error(y, v, "LINK", "%s - %s: a link needs a switch at one end", lt.a,
				  lt.b);
	if (ends_free(y, v, cx, l, &lt) < 0 || link_numbers(y, v, &lt) < 0 ||
	    link_speed(y, v, o, z, l, &lt) < 0)
		return -1;
	if (!lt.length) {
		/* the cable length the switch's headroom was computed for */
		const struct rsw_topo_end *se = l->a.sw != RSW_TOPO_HOST ? &l->a : &l->b;
		lt.m = z->sw[se->sw].sw->state->ports[se->idx].cable_length_m;
	}
	l->delay_ns = (uint64_t)lt.m * NS_PER_M;
	z->link_length_m[z->n_link++] = (uint32_t)lt.m;
	uint32_t *ea = end_link(cx, &l->a), *eb = end_link(cx, &l->b);
	if (!*ea)
		*ea = z->n_link;
	if (!*eb)
		*eb = z->n_link;
	return 0;
}

static int parse_links(struct ydoc *y, yaml_node_t *t, const struct rsw_zone_opts *o,
		       struct rsw_zone *z, struct host_names *hn)
{
	if (!t)
		return 0;
	if (t->type != YAML_SEQUENCE_NODE)
		return ydoc_error(y, t, "LINK", "expected a list of {a: END, b: END, length: Nm}");
	struct link_ctx cx;
	int rc = link_ctx_init(&cx, z, hn);
	if (rc < 0)
		ydoc_error(y, t, "LINK", "out of memory");
	YDOC_FOREACH_ITEM(y, t, it) {
		if (rc == 0 && parse_link(y, ydoc_node(y, *it), o, z, &cx) < 0)
			rc = -1;
	}
	/* a host without a link is a mistake: it could never send or receive */
	for (unsigned h = 0; rc == 0 && h < z->n_host; h++)
		if (!cx.host_link[h])
			rc = ydoc_error(y, t, "LINK", "host %s has no link", z->host[h].name);
	link_ctx_free(&cx);
	return rc;
}

int rsw_zone_switch_configs(const char *path, char ***out, unsigned *n, char *err, size_t errlen)
{
	struct ydoc y;
	*out = NULL;
	*n = 0;
	if (ydoc_load(&y, path, err, errlen) < 0)
		return -1;
	yaml_node_t *t = table(&y, "SWITCH");
	int rc = 0;
	if (t && t->type == YAML_MAPPING_NODE) {
		size_t cap = (size_t)(t->data.mapping.pairs.top - t->data.mapping.pairs.start);
		*out = calloc(cap + 1, sizeof(**out));
		rc = *out ? 0 : -1;
		YDOC_FOREACH_PAIR(&y, t, pr) {
			yaml_node_t *v = ydoc_node(&y, pr->value);
			const char *cfg = NULL;
			if (rc < 0 || v->type != YAML_MAPPING_NODE)
				continue; /* rsw_zone_load says what is wrong with it */
			YDOC_FOREACH_PAIR(&y, v, f) {
				const char *k = ydoc_str(ydoc_node(&y, f->key));
				if (k && !strcmp(k, "config"))
					cfg = ydoc_str(ydoc_node(&y, f->value));
			}
			if (cfg && !((*out)[(*n)++] = resolve(path, cfg)))
				rc = -1;
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	ydoc_free(&y);
	return rc;
}

int rsw_zone_load(const char *path, const struct rsw_zone_opts *o, struct rsw_zone *z, char *err,
		  size_t errlen)
{
	/* ROCESWD: how roceswd --zone runs the zone (docs/roceswd.md), ignored here */
	static const char *const known[] = {"ZONE", "SWITCH", "HOST", "LINK", "ROCESWD", NULL};
	struct ydoc y;
	struct host_names hn = {.made = 0};
	memset(z, 0, sizeof(*z));
	if (ydoc_load(&y, path, err, errlen) < 0)
		return -1;
	int rc = -1;
	yaml_node_t *root = ydoc_root(&y);
	if (!root || root->type != YAML_MAPPING_NODE) {
		ydoc_error(&y, root, "(top)", "expected a mapping of tables");
		goto out;
	}
	YDOC_FOREACH_PAIR(&y, root, pr) {
		yaml_node_t *k = ydoc_node(&y, pr->key);
		const char *ks = ydoc_str(k);
		int ok = 0;
		for (const char *const *n = known; *n; n++)
			ok |= ks && !strcmp(ks, *n);
		if (!ok) {
			ydoc_error(&y, k, ks ? ks : "?", "unknown table in a zone config (expected ZONE, "
				   "SWITCH, HOST, LINK, ROCESWD)");
			goto out;
		}
	}
	yaml_node_t *zt = table(&y, "ZONE");
	const char *zname = NULL;
	if (zt) {
		static const char *const zf[] = {"name", "description", NULL};
		if (get_field(&y, zt, "ZONE", "name", &zname, zf) < 0)
			goto out;
	}
	z->name = strdup(zname ? zname : "zone");
	if (!z->name) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (parse_switches(&y, table(&y, "SWITCH"), path, o, z) < 0 ||
	    parse_hosts(&y, table(&y, "HOST"), path, z, &hn) < 0 ||
	    parse_links(&y, table(&y, "LINK"), o, z, &hn) < 0)
		goto out;
	rc = 0;
out:
	if (hn.made)
		hdestroy_r(&hn.tab);
	ydoc_free(&y);
	if (rc < 0)
		rsw_zone_free(z);
	return rc;
}
