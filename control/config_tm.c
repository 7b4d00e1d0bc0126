/* Traffic-manager tables in SONiC CONFIG_DB vocabulary: BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG,
 * BUFFER_QUEUE, WRED_PROFILE, SCHEDULER, QUEUE, PFC_WD. Named profiles are resolved into per-port
 * values (struct rsw_tm_port_cfg). What the file leaves out gets the defaults docs/config.md
 * lists: SONiC's AZURE templates, headroom computed from speed, cable and MTU (REFERENCE §2), and
 * queue 6 STRICT for clear-to-send and CNP traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"

#define MAX_PROFILES 64
#define MAX_SCHEDULERS 32
#define MAX_WRED 32
#define DEFAULT_POOL_BYTES (32ull << 20)

struct named_profile {
	char name[RSW_TM_NAME_MAX];
	char pool_name[RSW_TM_NAME_MAX];
	struct rsw_buf_profile_cfg p;
	int has_th;
};

struct named_sched {
	char name[RSW_TM_NAME_MAX];
	uint8_t type, weight, priority;
};

struct named_wred {
	char name[RSW_TM_NAME_MAX];
	struct rsw_wred w;
};

struct tm_cc {
	struct cc *c;
	unsigned n_prof, n_sched, n_wred;
	struct named_profile prof[MAX_PROFILES];
	struct named_sched sched[MAX_SCHEDULERS];
	struct named_wred wred[MAX_WRED];
	/* what the file set per port; the rest gets defaults */
	uint8_t pg_set[RSW_MAX_PORTS], queue_set[RSW_MAX_PORTS], sched_set[RSW_MAX_PORTS],
		wred_set[RSW_MAX_PORTS], wd_set[RSW_MAX_PORTS];
};

static const char *fname(struct cc *c, yaml_node_t *n)
{
	const char *s = ydoc_str(n);
	(void)c;
	return s ? s : "?";
}

/* The start of a named entry "TABLE|name": its key for messages, a free slot, its name, and a
 * mapping as its value. */
static int entry_start(struct cc *c, const char *table, yaml_node_t *k, yaml_node_t *v, unsigned n,
		       unsigned max, char *key, size_t keylen, char *name)
{
	snprintf(key, keylen, "%s|%s", table, fname(c, k));
	if (n == max)
		return ydoc_error(&c->y, k, key, "more than %u entries in %s", max, table);
	if (rsw_cc_get_name(c, k, table, name) < 0 || rsw_cc_want_map(c, v, key) < 0)
		return -1;
	return 0;
}

/* "ingress_lossless_pool" or SONiC's older "[BUFFER_POOL|ingress_lossless_pool]" */
static const char *strip_ref(const char *s, const char *table, char *buf, size_t len)
{
	size_t tl = strlen(table);
	if (s[0] == '[' && !strncmp(s + 1, table, tl) && s[1 + tl] == '|') {
		snprintf(buf, len, "%s", s + 2 + tl);
		char *e = strchr(buf, ']');
		if (e)
			*e = 0;
		return buf;
	}
	return s;
}

static int pool_index(const struct rsw_tm_pools *tp, const char *name)
{
	for (unsigned i = 0; i < tp->n_pools; i++)
		if (!strcmp(tp->name[i], name))
			return (int)i;
	return -1;
}

/* The pools SONiC's default profiles name, by role (docs/config.md, "Traffic-manager defaults"). */
enum pool_role { ROLE_INGRESS = 0, ROLE_EGRESS_LOSSY, ROLE_EGRESS_LOSSLESS };
static const struct {
	const char *name, *what;
	uint8_t type, dynamic;
} role_pool[] = {
	[ROLE_INGRESS] = {"ingress_lossless_pool", "the priority groups", RSW_POOL_INGRESS, 1},
	[ROLE_EGRESS_LOSSY] = {"egress_lossy_pool", "the lossy queues", RSW_POOL_EGRESS, 1},
	[ROLE_EGRESS_LOSSLESS] = {"egress_lossless_pool", "the lossless queues", RSW_POOL_EGRESS, 0},
};

static void add_default_pool(struct rsw_tm_pools *tp, enum pool_role role)
{
	unsigned i = tp->n_pools++;
	snprintf(tp->name[i], RSW_TM_NAME_MAX, "%s", role_pool[role].name);
	tp->pool[i].size = DEFAULT_POOL_BYTES;
	tp->pool[i].type = role_pool[role].type;
	tp->pool[i].dynamic = role_pool[role].dynamic;
}

/* The pool a default profile of this role uses: the one of the role's name, whatever the order
 * of BUFFER_POOL; filled in with its default when the file has none (a file's BUFFER_POOL adds
 * to the defaults as every other table does, it does not remove them). -1 with a message when
 * it cannot be. */
static int pool_for_role(struct tm_cc *t, enum pool_role role)
{
	struct cc *c = t->c;
	struct rsw_tm_pools *tp = &c->sw.tm;
	int i = pool_index(tp, role_pool[role].name);
	if (i >= 0) {
		if (tp->pool[i].type != role_pool[role].type)
			return ydoc_error(&c->y, c->tables[T_BUFPOOL], "BUFFER_POOL",
					  "pool '%s' is %s; the default profiles of %s need it %s",
					  role_pool[role].name,
					  tp->pool[i].type == RSW_POOL_INGRESS ? "ingress" : "egress",
					  role_pool[role].what,
					  role_pool[role].type == RSW_POOL_INGRESS ? "ingress" : "egress");
		return i;
	}
	if (tp->n_pools == RSW_BUF_POOLS)
		return ydoc_error(&c->y, c->tables[T_BUFPOOL], "BUFFER_POOL",
				  "no pool '%s' for the default profiles of %s, and no room to add "
				  "it (at most %u pools): define it, or give them profiles",
				  role_pool[role].name, role_pool[role].what, RSW_BUF_POOLS);
	add_default_pool(tp, role);
	return (int)tp->n_pools - 1;
}

static int parse_pools(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	struct rsw_tm_pools *tp = &c->sw.tm;
	if (!n) {
		/* all three, in this order, so `show` lists the same pools for every config */
		for (unsigned r = 0; r < sizeof(role_pool) / sizeof(role_pool[0]); r++)
			add_default_pool(tp, (enum pool_role)r);
		return 0;
	}
	if (rsw_cc_want_map(c, n, "BUFFER_POOL") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		unsigned i = tp->n_pools;
		if (entry_start(c, "BUFFER_POOL", k, v, i, RSW_BUF_POOLS, key, sizeof(key), tp->name[i]) < 0)
			return -1;
		if (pool_index(tp, tp->name[i]) >= 0)
			return ydoc_error(&c->y, k, key, "pool defined twice");
		tp->pool[i].dynamic = 1;
		int have_size = 0, have_type = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160];
			unsigned long long x;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "size")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 1ull << 40, &x) < 0)
					return -1;
				tp->pool[i].size = x;
				have_size = 1;
			} else if (!strcmp(name, "type")) {
				if (val && !strcmp(val, "ingress"))
					tp->pool[i].type = RSW_POOL_INGRESS;
				else if (val && !strcmp(val, "egress"))
					tp->pool[i].type = RSW_POOL_EGRESS;
				else
					return ydoc_error(&c->y, fv, fkey, "expected ingress or egress");
				have_type = 1;
			} else if (!strcmp(name, "mode")) {
				if (val && !strcmp(val, "dynamic"))
					tp->pool[i].dynamic = 1;
				else if (val && !strcmp(val, "static"))
					tp->pool[i].dynamic = 0;
				else
					return ydoc_error(&c->y, fv, fkey, "expected dynamic or static");
			} else if (!strcmp(name, "xoff")) {
				return ydoc_error(&c->y, fk, fkey,
						  "a shared headroom pool is not modelled; give each "
						  "lossless PG its headroom in BUFFER_PROFILE.xoff");
			} else {
				return ydoc_error(&c->y, fk, key,
						  "unknown field '%s' (expected size, type, mode)", name);
			}
		}
		if (!have_size || !have_type)
			return ydoc_error(&c->y, k, key, "missing '%s'", have_size ? "type" : "size");
		tp->n_pools++;
	}
	return 0;
}

static struct named_profile *find_profile(struct tm_cc *t, const char *name)
{
	for (unsigned i = 0; i < t->n_prof; i++)
		if (!strcmp(t->prof[i].name, name))
			return &t->prof[i];
	return NULL;
}

static int parse_profiles(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n)
		return 0;
	if (rsw_cc_want_map(c, n, "BUFFER_PROFILE") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		struct named_profile *np = &t->prof[t->n_prof];
		memset(np, 0, sizeof(*np));
		if (entry_start(c, "BUFFER_PROFILE", k, v, t->n_prof, MAX_PROFILES, key, sizeof(key),
				np->name) < 0)
			return -1;
		if (find_profile(t, np->name))
			return ydoc_error(&c->y, k, key, "profile defined twice");
		int have_pool = 0;
		unsigned long long size = 0;
		int have_size = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160], buf[RSW_TM_NAME_MAX];
			unsigned long long x;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "pool")) {
				const char *pn = val ? strip_ref(val, "BUFFER_POOL", buf, sizeof(buf)) : NULL;
				int pi = pn ? pool_index(&c->sw.tm, pn) : -1;
				if (pi < 0)
					return ydoc_error(&c->y, fv, fkey, "no pool named '%s' in BUFFER_POOL",
							  pn ? pn : "?");
				np->p.pool = (uint8_t)pi;
				snprintf(np->pool_name, sizeof(np->pool_name), "%s", pn);
				have_pool = 1;
			} else if (!strcmp(name, "size")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 1ull << 40, &size) < 0)
					return -1;
				have_size = 1;
			} else if (!strcmp(name, "dynamic_th")) {
				char *end;
				long th = val ? strtol(val, &end, 10) : 99;
				if (!val || *end || th < -7 || th > 7)
					return ydoc_error(&c->y, fv, fkey, "expected an integer -7..7 "
							  "(alpha = 2^dynamic_th), got '%s'", val ? val : "?");
				np->p.dynamic = 1;
				np->p.dynamic_th = (int8_t)th;
				np->has_th++;
			} else if (!strcmp(name, "static_th")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 1ull << 40, &x) < 0)
					return -1;
				np->p.dynamic = 0;
				np->p.static_th = x;
				np->has_th++;
			} else if (!strcmp(name, "xoff")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 1ull << 32, &x) < 0)
					return -1;
				np->p.xoff = x;
				np->p.lossless = 1;
			} else if (!strcmp(name, "xon")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 1ull << 32, &x) < 0)
					return -1;
				np->p.xon = x;
			} else if (!strcmp(name, "xon_offset")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 1ull << 32, &x) < 0)
					return -1;
				np->p.xon_offset = x;
			} else {
				return ydoc_error(&c->y, fk, key,
						  "unknown field '%s' (expected pool, size, dynamic_th, "
						  "static_th, xon, xoff, xon_offset)", name);
			}
		}
		if (!have_pool)
			return ydoc_error(&c->y, k, key, "missing 'pool'");
		if (np->has_th != 1)
			return ydoc_error(&c->y, k, key, "expected exactly one of dynamic_th, static_th");
		if (np->p.dynamic && !c->sw.tm.pool[np->p.pool].dynamic)
			return ydoc_error(&c->y, k, key, "dynamic_th on pool '%s' whose mode is static",
					  np->pool_name);
		/* SONiC: a lossless profile's size is xon + xoff; the xoff part is headroom */
		if (np->p.lossless) {
			if (have_size && size < np->p.xoff)
				return ydoc_error(&c->y, k, key,
						  "size %llu is less than xoff %llu (size = reserved + "
						  "headroom)", size, (unsigned long long)np->p.xoff);
			np->p.reserved = have_size ? size - np->p.xoff : np->p.xon;
		} else {
			np->p.reserved = size;
		}
		t->n_prof++;
	}
	return 0;
}

/* "3-4", "0", "0-2,5-6" → bit mask of indices 0..7 */
static int parse_range(const char *s, uint8_t *mask)
{
	*mask = 0;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0 || a > 7)
			return -1;
		if (*end == '-') {
			const char *p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b > 7)
				return -1;
		}
		for (long i = a; i <= b; i++)
			*mask |= (uint8_t)(1u << i);
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return *mask ? 0 : -1;
}

/* "Ethernet0|3-4" → port index and index mask. */
static int port_range_key(struct cc *c, yaml_node_t *k, const char *table, int *port, uint8_t *mask)
{
	const char *s = ydoc_str(k);
	char name[RSW_NAME_MAX];
	const char *bar = s ? strchr(s, '|') : NULL;
	if (!bar || (size_t)(bar - s) >= sizeof(name))
		return ydoc_error(&c->y, k, table, "expected a key like \"Ethernet0|3-4\", got '%s'",
				  s ? s : "?");
	memcpy(name, s, (size_t)(bar - s));
	name[bar - s] = 0;
	*port = rsw_cc_port_by_name(c, k, table, name);
	if (*port < 0)
		return -1;
	if (parse_range(bar + 1, mask) < 0)
		return ydoc_error(&c->y, k, table, "expected indices 0..7 like 3-4 or 0-2,5 after '|', "
				  "got '%s'", bar + 1);
	return 0;
}

/* BUFFER_PG (pg = 1) or BUFFER_QUEUE (pg = 0) */
static int parse_bindings(struct tm_cc *t, yaml_node_t *n, int pg)
{
	struct cc *c = t->c;
	const char *table = pg ? "BUFFER_PG" : "BUFFER_QUEUE";
	if (!n)
		return 0;
	if (rsw_cc_want_map(c, n, table) < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		int port;
		uint8_t mask;
		char key[128];
		snprintf(key, sizeof(key), "%s|%s", table, fname(c, k));
		if (port_range_key(c, k, table, &port, &mask) < 0 || rsw_cc_want_map(c, v, key) < 0)
			return -1;
		struct named_profile *np = NULL;
		yaml_node_t *at = k;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160], buf[RSW_TM_NAME_MAX];
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (strcmp(name, "profile"))
				return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected profile)",
						  name);
			const char *pn = val ? strip_ref(val, "BUFFER_PROFILE", buf, sizeof(buf)) : "?";
			np = find_profile(t, pn);
			if (!np)
				return ydoc_error(&c->y, fv, fkey, "no profile named '%s' in BUFFER_PROFILE",
						  pn);
			at = fv;
		}
		if (!np)
			return ydoc_error(&c->y, k, key, "missing 'profile'");
		struct rsw_port_cfg *p = &c->ports[port];
		unsigned want = pg ? RSW_POOL_INGRESS : RSW_POOL_EGRESS;
		if (c->sw.tm.pool[np->p.pool].type != want)
			return ydoc_error(&c->y, at, key, "profile '%s' uses %s pool '%s'; a %s needs an "
					  "%s pool", np->name, want ? "ingress" : "egress",
					  np->pool_name, pg ? "PG" : "queue", pg ? "ingress" : "egress");
		for (unsigned i = 0; i < 8; i++) {
			if (!(mask & (1u << i)))
				continue;
			int lossless = (p->pfc_enable >> i) & 1;
			if (pg && lossless != np->p.lossless)
				return ydoc_error(&c->y, at, key,
						  lossless ? "PG %u is lossless (pfc_enable) but profile "
							     "'%s' has no xoff headroom"
							   : "PG %u is not in pfc_enable but profile '%s' "
							     "has xoff headroom",
						  i, np->name);
			if (pg) {
				p->tm.pg[i] = np->p;
				snprintf(p->tm.pg_profile[i], RSW_TM_NAME_MAX, "%s", np->name);
			} else {
				p->tm.queue[i] = np->p;
				p->tm.queue[i].lossless = (uint8_t)lossless;
				snprintf(p->tm.queue_profile[i], RSW_TM_NAME_MAX, "%s", np->name);
			}
		}
		if (pg)
			t->pg_set[port] |= mask;
		else
			t->queue_set[port] |= mask;
	}
	return 0;
}

static int parse_schedulers(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n)
		return 0;
	if (rsw_cc_want_map(c, n, "SCHEDULER") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		struct named_sched *ns = &t->sched[t->n_sched];
		memset(ns, 0, sizeof(*ns));
		if (entry_start(c, "SCHEDULER", k, v, t->n_sched, MAX_SCHEDULERS, key, sizeof(key),
				ns->name) < 0)
			return -1;
		int have_type = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160];
			unsigned long long x;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "type")) {
				if (val && !strcmp(val, "STRICT"))
					ns->type = RSW_SCHED_STRICT;
				else if (val && !strcmp(val, "DWRR"))
					ns->type = RSW_SCHED_DWRR;
				else if (val && !strcmp(val, "WRR"))
					ns->type = RSW_SCHED_WRR;
				else
					return ydoc_error(&c->y, fv, fkey, "expected STRICT, DWRR or WRR, "
							  "got '%s'", val ? val : "?");
				have_type = 1;
			} else if (!strcmp(name, "weight")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 100, &x) < 0)
					return -1;
				ns->weight = (uint8_t)x;
			} else if (!strcmp(name, "priority")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 7, &x) < 0)
					return -1;
				ns->priority = (uint8_t)x;
			} else if (!strcmp(name, "meter_type") || !strcmp(name, "pir") ||
				   !strcmp(name, "pbs") || !strcmp(name, "cir") || !strcmp(name, "cbs")) {
				return ydoc_error(&c->y, fk, fkey, "queue shaping is not modelled (ports "
						  "are shaped by PORT.speed)");
			} else {
				return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected type, "
						  "weight, priority)", name);
			}
		}
		if (!have_type)
			return ydoc_error(&c->y, k, key, "missing 'type'");
		if (ns->type != RSW_SCHED_STRICT && !ns->weight)
			return ydoc_error(&c->y, k, key, "missing 'weight' (1..100) for %s",
					  ns->type == RSW_SCHED_WRR ? "WRR" : "DWRR");
		t->n_sched++;
	}
	return 0;
}

static int parse_wred(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n)
		return 0;
	if (rsw_cc_want_map(c, n, "WRED_PROFILE") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		struct named_wred *nw = &t->wred[t->n_wred];
		memset(nw, 0, sizeof(*nw));
		if (entry_start(c, "WRED_PROFILE", k, v, t->n_wred, MAX_WRED, key, sizeof(key),
				nw->name) < 0)
			return -1;
		int have_min = 0, have_max = 0, have_p = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160];
			unsigned long long x;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "ecn")) {
				if (val && (!strcmp(val, "ecn_all") || !strcmp(val, "ecn_green") ||
					    !strcmp(val, "ecn_green_yellow") || !strcmp(val, "ecn_green_red")))
					nw->w.ecn = 1; /* every packet is green here */
				else if (val && !strcmp(val, "ecn_none"))
					nw->w.ecn = 0;
				else
					return ydoc_error(&c->y, fv, fkey, "expected ecn_all, ecn_green or "
							  "ecn_none, got '%s'", val ? val : "?");
			} else if (!strcmp(name, "green_min_threshold")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 1ull << 40, &x) < 0)
					return -1;
				nw->w.kmin = x;
				have_min = 1;
			} else if (!strcmp(name, "green_max_threshold")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 1ull << 40, &x) < 0)
					return -1;
				nw->w.kmax = x;
				have_max = 1;
			} else if (!strcmp(name, "green_drop_probability")) {
				if (rsw_cc_get_u64(c, fv, fkey, 0, 100, &x) < 0)
					return -1;
				nw->w.pmax_ppm = (uint32_t)x * 10000u;
				have_p = 1;
			} else if (!strcmp(name, "mark")) {
				if (val && !strcmp(val, "dequeue"))
					nw->w.mark_on_enqueue = 0;
				else if (val && !strcmp(val, "enqueue"))
					nw->w.mark_on_enqueue = 1;
				else
					return ydoc_error(&c->y, fv, fkey, "expected dequeue or enqueue");
			} else if (!strncmp(name, "yellow_", 7) || !strncmp(name, "red_", 4) ||
				   !strncmp(name, "wred_", 5)) {
				/* colours other than green do not occur: no policers colour packets */
			} else {
				return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected ecn, "
						  "green_min_threshold, green_max_threshold, "
						  "green_drop_probability, mark)", name);
			}
		}
		if (!have_min || !have_max || !have_p)
			return ydoc_error(&c->y, k, key, "missing '%s'",
					  !have_min ? "green_min_threshold"
					  : !have_max ? "green_max_threshold" : "green_drop_probability");
		if (nw->w.kmax < nw->w.kmin)
			return ydoc_error(&c->y, k, key, "green_max_threshold is below green_min_threshold");
		t->n_wred++;
	}
	return 0;
}

static int parse_queues(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n)
		return 0;
	if (rsw_cc_want_map(c, n, "QUEUE") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		int port;
		uint8_t mask;
		char key[128];
		snprintf(key, sizeof(key), "QUEUE|%s", fname(c, k));
		if (port_range_key(c, k, "QUEUE", &port, &mask) < 0 || rsw_cc_want_map(c, v, key) < 0)
			return -1;
		struct rsw_tm_port_cfg *tm = &c->ports[port].tm;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160], buf[RSW_TM_NAME_MAX];
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "scheduler")) {
				const char *sn = val ? strip_ref(val, "SCHEDULER", buf, sizeof(buf)) : "?";
				struct named_sched *ns = NULL;
				for (unsigned i = 0; i < t->n_sched; i++)
					if (!strcmp(t->sched[i].name, sn))
						ns = &t->sched[i];
				if (!ns)
					return ydoc_error(&c->y, fv, fkey, "no scheduler named '%s' in "
							  "SCHEDULER", sn);
				for (unsigned q = 0; q < 8; q++) {
					if (!(mask & (1u << q)))
						continue;
					tm->sched.type[q] = ns->type;
					tm->sched.weight[q] = ns->weight;
					tm->sched.priority[q] = ns->priority;
					snprintf(tm->scheduler[q], RSW_TM_NAME_MAX, "%s", ns->name);
				}
				t->sched_set[port] |= mask;
			} else if (!strcmp(name, "wred_profile")) {
				const char *wn = val ? strip_ref(val, "WRED_PROFILE", buf, sizeof(buf)) : "?";
				struct named_wred *nw = NULL;
				for (unsigned i = 0; i < t->n_wred; i++)
					if (!strcmp(t->wred[i].name, wn))
						nw = &t->wred[i];
				if (!nw)
					return ydoc_error(&c->y, fv, fkey, "no profile named '%s' in "
							  "WRED_PROFILE", wn);
				for (unsigned q = 0; q < 8; q++) {
					if (!(mask & (1u << q)))
						continue;
					tm->wred[q] = nw->w;
					snprintf(tm->wred_profile[q], RSW_TM_NAME_MAX, "%s", nw->name);
				}
				t->wred_set[port] |= mask;
			} else {
				return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected scheduler, "
						  "wred_profile)", name);
			}
		}
	}
	return 0;
}

/* PFC_WD: { GLOBAL: {POLL_INTERVAL: ms}, Ethernet0: {action, detection_time, restoration_time} } */
static int parse_pfcwd(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	c->sw.tm.pfcwd_poll_ns = 200ull * 1000000u;
	if (!n)
		return 0;
	if (rsw_cc_want_map(c, n, "PFC_WD") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		const char *pn = fname(c, k);
		char key[96];
		snprintf(key, sizeof(key), "PFC_WD|%s", pn);
		if (rsw_cc_want_map(c, v, key) < 0)
			return -1;
		int global = !strcmp(pn, "GLOBAL"), port = -1;
		if (!global && (port = rsw_cc_port_by_name(c, k, "PFC_WD", pn)) < 0)
			return -1;
		struct rsw_pfcwd_cfg wd = {.enabled = 1, .action = RSW_PFCWD_DROP,
					   .detection_ns = 200ull * 1000000u,
					   .restoration_ns = 200ull * 1000000u};
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = fname(c, fk), *val = ydoc_str(fv);
			char fkey[160];
			unsigned long long x;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (global && !strcmp(name, "POLL_INTERVAL")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 60000, &x) < 0)
					return -1;
				c->sw.tm.pfcwd_poll_ns = x * 1000000u;
			} else if (global) {
				return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected "
						  "POLL_INTERVAL)", name);
			} else if (!strcmp(name, "action")) {
				int a = val ? rsw_pfcwd_action_from_name(val) : -1;
				if (a < 0)
					return ydoc_error(&c->y, fv, fkey, "expected drop, forward or alert, "
							  "got '%s'", val ? val : "?");
				wd.action = (uint8_t)a;
			} else if (!strcmp(name, "detection_time")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 60000, &x) < 0)
					return -1;
				wd.detection_ns = x * 1000000u;
			} else if (!strcmp(name, "restoration_time")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 60000, &x) < 0)
					return -1;
				wd.restoration_ns = x * 1000000u;
			} else {
				return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected action, "
						  "detection_time, restoration_time)", name);
			}
		}
		if (!global) {
			for (unsigned q = 0; q < 8; q++)
				c->ports[port].tm.wd[q] = wd;
			t->wd_set[port] = 1;
		}
	}
	return 0;
}

/* Everything the file did not set, per port (docs/config.md, "Traffic-manager defaults"). */
static int port_defaults(struct tm_cc *t, unsigned pi)
{
	struct cc *c = t->c;
	struct rsw_port_cfg *p = &c->ports[pi];
	struct rsw_tm_port_cfg *tm = &p->tm;
	const struct rsw_tm_pools *tp = &c->sw.tm;

	tm->pfc_enable = p->pfc_enable;
	if (!tm->pfcwd_set)
		tm->pfcwd_enable = p->pfc_enable;
	if (!tm->pfc_pause_quanta)
		tm->pfc_pause_quanta = 0xFFFF;
	for (unsigned i = 0; i < 8; i++) {
		int lossless = (p->pfc_enable >> i) & 1;
		if (!(t->pg_set[pi] & (1u << i))) {
			struct rsw_buf_profile_cfg *g = &tm->pg[i];
			int in_pool = pool_for_role(t, ROLE_INGRESS);
			if (in_pool < 0)
				return -1;
			memset(g, 0, sizeof(*g));
			g->pool = (uint8_t)in_pool;
			g->dynamic = tp->pool[in_pool].dynamic;
			if (lossless) {
				/* SONiC dynamic buffer: pg_lossless_<speed>_<cable>m_profile */
				g->lossless = 1;
				g->xoff = rsw_headroom_bytes(p->speed_mbps, p->cable_length_m, p->mtu);
				g->xon = 2ull * p->mtu;
				g->xon_offset = 2ull * p->mtu;
				g->reserved = g->xon;
				g->dynamic_th = 0;
				g->static_th = tp->pool[in_pool].size / 8;
				snprintf(tm->pg_profile[i], RSW_TM_NAME_MAX, "pg_lossless_%u_%um_profile",
					 p->speed_mbps, p->cable_length_m);
			} else {
				g->dynamic_th = 3;
				g->static_th = tp->pool[in_pool].size;
				snprintf(tm->pg_profile[i], RSW_TM_NAME_MAX, "ingress_lossy_profile");
			}
		}
		if (!(t->queue_set[pi] & (1u << i))) {
			struct rsw_buf_profile_cfg *q = &tm->queue[i];
			int qpool = pool_for_role(t, lossless ? ROLE_EGRESS_LOSSLESS : ROLE_EGRESS_LOSSY);
			if (qpool < 0)
				return -1;
			memset(q, 0, sizeof(*q));
			q->lossless = (uint8_t)lossless;
			q->pool = (uint8_t)qpool;
			if (lossless) {
				q->dynamic = 0;
				q->static_th = tp->pool[q->pool].size;
				snprintf(tm->queue_profile[i], RSW_TM_NAME_MAX, "egress_lossless_profile");
			} else {
				q->dynamic = tp->pool[q->pool].dynamic;
				q->dynamic_th = 3;
				q->static_th = tp->pool[q->pool].size;
				q->reserved = 1518;
				snprintf(tm->queue_profile[i], RSW_TM_NAME_MAX, "egress_lossy_profile");
			}
		}
		if (!(t->sched_set[pi] & (1u << i))) {
			/* 6 carries CTS and CNP, 7 control: strict; data shares by DWRR as SONiC's
			 * scheduler.0 (14) and scheduler.1 (15) for the lossless queues */
			if (i >= 6) {
				tm->sched.type[i] = RSW_SCHED_STRICT;
				snprintf(tm->scheduler[i], RSW_TM_NAME_MAX, "scheduler.strict");
			} else {
				tm->sched.type[i] = RSW_SCHED_DWRR;
				tm->sched.weight[i] = lossless ? 15 : 14;
				snprintf(tm->scheduler[i], RSW_TM_NAME_MAX, "scheduler.%d", lossless);
			}
		}
		if (!(t->wred_set[pi] & (1u << i)) && lossless) {
			/* SONiC AZURE_LOSSLESS */
			tm->wred[i] = (struct rsw_wred){.ecn = 1, .kmin = 1048576, .kmax = 2097152,
							.pmax_ppm = 50000};
			snprintf(tm->wred_profile[i], RSW_TM_NAME_MAX, "AZURE_LOSSLESS");
		}
		if (!t->wd_set[pi])
			tm->wd[i] = (struct rsw_pfcwd_cfg){.enabled = 1, .action = RSW_PFCWD_DROP,
							   .detection_ns = 200ull * 1000000u,
							   .restoration_ns = 200ull * 1000000u};
		tm->wd[i].enabled = (uint8_t)((tm->pfcwd_enable >> i) & 1);
	}
	return 0;
}

int rsw_cc_tm(struct cc *c)
{
	struct tm_cc *t = calloc(1, sizeof(*t));
	int rc = -1;
	if (!t) {
		snprintf(c->y.err, c->y.errlen, "out of memory");
		return -1;
	}
	t->c = c;
	c->sw.tm.ecn_seed = 1;
	if (parse_pools(t, c->tables[T_BUFPOOL]) < 0 || parse_profiles(t, c->tables[T_BUFPROF]) < 0 ||
	    parse_bindings(t, c->tables[T_BUFPG], 1) < 0 ||
	    parse_bindings(t, c->tables[T_BUFQ], 0) < 0 ||
	    parse_schedulers(t, c->tables[T_SCHED]) < 0 || parse_wred(t, c->tables[T_WRED]) < 0 ||
	    parse_queues(t, c->tables[T_QUEUE]) < 0 || parse_pfcwd(t, c->tables[T_PFCWD]) < 0)
		goto out;
	for (unsigned i = 0; i < c->n_ports; i++)
		if (port_defaults(t, i) < 0)
			goto out;
	rc = 0;
out:
	free(t);
	return rc;
}
