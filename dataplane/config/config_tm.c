/* Traffic-manager tables in SONiC CONFIG_DB vocabulary: BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG,
 * BUFFER_QUEUE, WRED_PROFILE, SCHEDULER, QUEUE, PFC_WD. Named profiles are resolved into per-port
 * values (struct rsw_tm_port_cfg). What the file leaves out gets the defaults docs/config.md
 * lists: SONiC's AZURE templates, headroom computed from speed, cable and MTU (REFERENCE §2), and
 * queue 6 STRICT for clear-to-send and CNP traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_cc.h"

#define MAX_PROFILES 64
#define MAX_SCHEDULERS 32
#define MAX_WRED 32
#define DEFAULT_POOL_BYTES (32ull << 20)

struct named_profile {
	char name[RSW_TM_NAME_MAX];
	char pool_name[RSW_TM_NAME_MAX];
	struct rsw_buf_profile_cfg p;
	int refused; /* in error: its bindings are not reported again */
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

/* The start of a named entry "TABLE|name": its key for messages, a free slot and its name.
 * -2 when the table is full (stop), -1 for a bad name (next entry). */
static int entry_start(struct cc *c, const char *table, yaml_node_t *k, yaml_node_t *v, unsigned n,
		       unsigned max, char *key, size_t keylen, char *name)
{
	snprintf(key, keylen, "%s|%s", table, fname(c, k));
	(void)v;
	if (n == max) {
		ydoc_error(&c->y, k, key, "more than %u entries in %s", max, table);
		return -2;
	}
	return rsw_cc_get_name(c, k, table, name);
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

/* SONiC platform and HWSKU strings whose ASIC vendor is known (docs/tm.md, "Buffer
 * conventions"), first match wins: Arista's SONiC switches are Broadcom (Trident, Tomahawk,
 * Jericho) but for the 7170 (Barefoot Tofino, neither convention); Dell's are Broadcom;
 * Mellanox/NVIDIA's Spectrum. */
static const struct {
	const char *prefix;
	int conv; /* enum rsw_buf_convention, or -1: a vendor of neither convention */
} vendor_prefix[] = {
	{"x86_64-arista_7170", -1}, {"x86_64-arista_", RSW_BUF_BROADCOM},
	{"x86_64-dell_", RSW_BUF_BROADCOM}, {"x86_64-dellemc_", RSW_BUF_BROADCOM},
	{"x86_64-mlnx_", RSW_BUF_MELLANOX}, {"x86_64-nvidia_", RSW_BUF_MELLANOX},
	{"Arista-7170", -1}, {"Arista-", RSW_BUF_BROADCOM}, {"Force10-", RSW_BUF_BROADCOM},
	{"DellEMC-", RSW_BUF_BROADCOM}, {"Mellanox-", RSW_BUF_MELLANOX},
	{"ACS-MSN", RSW_BUF_MELLANOX}, {"ACS-SN", RSW_BUF_MELLANOX},
};

static int vendor_of(const char *s)
{
	for (size_t i = 0; s && i < sizeof(vendor_prefix) / sizeof(vendor_prefix[0]); i++)
		if (!strncasecmp(s, vendor_prefix[i].prefix, strlen(vendor_prefix[i].prefix)))
			return vendor_prefix[i].conv;
	return -1;
}

static const char *conv_name(unsigned conv)
{
	return conv == RSW_BUF_BROADCOM ? "broadcom" : "mellanox";
}

void rsw_cc_buffer_convention(struct cc *c, const char *given, const char *platform,
			      const char *hwsku)
{
	int v;
	if (given) {
		c->sw.tm.convention = !strcmp(given, "broadcom") ? RSW_BUF_BROADCOM : RSW_BUF_MELLANOX;
		snprintf(c->buf_conv_why, sizeof(c->buf_conv_why), "DEVICE_METADATA buffer_convention");
	} else if ((v = vendor_of(platform)) >= 0) {
		c->sw.tm.convention = (uint8_t)v;
		snprintf(c->buf_conv_why, sizeof(c->buf_conv_why), "from platform %.80s", platform);
	} else if ((v = vendor_of(hwsku)) >= 0) {
		c->sw.tm.convention = (uint8_t)v;
		snprintf(c->buf_conv_why, sizeof(c->buf_conv_why), "from hwsku %.80s", hwsku);
	} else {
		c->sw.tm.convention = RSW_BUF_MELLANOX;
		snprintf(c->buf_conv_why, sizeof(c->buf_conv_why),
			 "the default: DEVICE_METADATA names no buffer_convention, nor a platform or "
			 "hwsku of a known vendor");
	}
}

/* BUFFER_POOL xoff, the shared headroom pool (SAI_BUFFER_POOL_ATTR_XOFF_SIZE) of an ingress
 * pool: carved out of its size on Broadcom (sonic-mgmt's TD2/TD3 arithmetic: shared = size −
 * xoff), beside it on Mellanox (the pool size is the shared buffer alone). */
static int pool_headroom(struct tm_cc *t, const struct rsw_fval *f, const char *key,
			 struct rsw_buf_pool_cfg *pool)
{
	struct cc *c = t->c;
	unsigned long long size = f[BP_SIZE].u, xoff = f[BP_XOFF].u;
	if (pool->type != RSW_POOL_INGRESS)
		return ydoc_error(&c->y, f[BP_XOFF].v, key, "xoff: a shared headroom pool is an "
				  "ingress pool's (lossless PGs' headroom); this pool is egress");
	if (c->sw.tm.convention == RSW_BUF_BROADCOM) {
		if (xoff >= size)
			return ydoc_error(&c->y, f[BP_XOFF].v, key, "xoff %llu leaves no shared space "
					  "in size %llu: under the broadcom buffer convention (%s) "
					  "the headroom pool is carved out of the pool (shared = "
					  "size - xoff)", xoff, size, c->buf_conv_why);
		pool->size = size - xoff;
	}
	pool->xoff = xoff;
	return 0;
}

static void parse_pools(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	struct rsw_tm_pools *tp = &c->sw.tm;
	if (!n) {
		/* all three, in this order, so `show` lists the same pools for every config */
		for (unsigned r = 0; r < sizeof(role_pool) / sizeof(role_pool[0]); r++)
			add_default_pool(tp, (enum pool_role)r);
		return;
	}
	if (rsw_cc_want_map(c, n, "BUFFER_POOL") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		unsigned i = tp->n_pools;
		struct rsw_fval f[BP_XOFF + 1];
		int e = entry_start(c, "BUFFER_POOL", k, v, i, RSW_BUF_POOLS, key, sizeof(key),
				tp->name[i]);
		if (e == -2)
			return;
		if (e < 0)
			continue;
		if (pool_index(tp, tp->name[i]) >= 0) {
			ydoc_error(&c->y, k, key, "pool defined twice");
			continue;
		}
		if (rsw_cc_fields(c, rsw_schema_tables[T_BUFPOOL].fields, key, k, v, f))
			continue;
		tp->pool[i].size = f[BP_SIZE].u;
		tp->pool[i].type = f[BP_TYPE].word == 1 ? RSW_POOL_INGRESS : RSW_POOL_EGRESS;
		tp->pool[i].dynamic = !f[BP_MODE].v || f[BP_MODE].word == 1;
		if (f[BP_XOFF].u && pool_headroom(t, f, key, &tp->pool[i]) < 0)
			continue;
		tp->n_pools++;
	}
}

static struct named_profile *find_profile(struct tm_cc *t, const char *name)
{
	for (unsigned i = 0; i < t->n_prof; i++)
		if (!strcmp(t->prof[i].name, name))
			return &t->prof[i];
	return NULL;
}

/* A lossless profile's reserve and headroom by the switch's buffer convention (docs/tm.md,
 * "Buffer conventions"). Broadcom (SAI RESERVED_BUFFER_SIZE = size, XOFF_TH = xoff): the reserve
 * is size, the headroom xoff beside it. Mellanox (sonic-swss buffer_headroom_mellanox.lua):
 * size = xon + xoff, the xoff part private headroom; with a shared headroom pool size = xon, the
 * reserve, and the headroom comes from the pool. */
static int lossless_reserve(struct tm_cc *t, struct named_profile *np, const struct rsw_fval *f,
			    yaml_node_t *k, const char *key)
{
	struct cc *c = t->c;
	const struct rsw_buf_pool_cfg *pool = &c->sw.tm.pool[np->p.pool];
	unsigned conv = c->sw.tm.convention;
	unsigned long long size = f[BPR_SIZE].u, xon = np->p.xon, xoff = np->p.xoff;
	if (pool->xoff && xoff > pool->xoff)
		return ydoc_error(&c->y, k, key, "xoff %llu is more than the shared headroom pool "
				  "of '%s' (BUFFER_POOL xoff %llu): under the %s buffer convention "
				  "(%s) a PG's xoff is the most of that pool it may hold", xoff,
				  np->pool_name, (unsigned long long)pool->xoff, conv_name(conv),
				  c->buf_conv_why);
	if (conv == RSW_BUF_BROADCOM || pool->xoff) {
		np->p.reserved = f[BPR_SIZE].v ? size : conv == RSW_BUF_BROADCOM ? 0 : xon;
		return 0;
	}
	if (f[BPR_SIZE].v && size < xon + xoff)
		return ydoc_error(&c->y, k, key, "size %llu is less than xon %llu + xoff %llu: under "
				  "the mellanox buffer convention (%s) a lossless profile's size "
				  "is xon + xoff, its xoff private headroom; a Broadcom profile "
				  "(size the reserve, xoff beside it) needs DEVICE_METADATA "
				  "buffer_convention: broadcom", size, xon, xoff, c->buf_conv_why);
	np->p.reserved = f[BPR_SIZE].v ? size - xoff : xon;
	return 0;
}

static void parse_profiles(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n || rsw_cc_want_map(c, n, "BUFFER_PROFILE") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96], buf[RSW_TM_NAME_MAX];
		struct named_profile *np = &t->prof[t->n_prof];
		struct rsw_fval f[BPR_XON_OFFSET + 1];
		memset(np, 0, sizeof(*np));
		int e = entry_start(c, "BUFFER_PROFILE", k, v, t->n_prof, MAX_PROFILES, key, sizeof(key),
				np->name);
		if (e == -2)
			return;
		if (e < 0)
			continue;
		if (find_profile(t, np->name)) {
			ydoc_error(&c->y, k, key, "profile defined twice");
			continue;
		}
		if (rsw_cc_fields(c, rsw_schema_tables[T_BUFPROF].fields, key, k, v, f))
			continue;
		const char *pn = f[BPR_POOL].s ? strip_ref(f[BPR_POOL].s, "BUFFER_POOL", buf,
							   sizeof(buf)) : "?";
		int pi = pool_index(&c->sw.tm, pn);
		if (pi < 0) {
			ydoc_error(&c->y, f[BPR_POOL].v, key, "pool: no pool named '%s' in BUFFER_POOL",
				   pn);
			continue;
		}
		np->p.pool = (uint8_t)pi;
		snprintf(np->pool_name, sizeof(np->pool_name), "%s", pn);
		if (!!f[BPR_DYN_TH].v + !!f[BPR_STATIC_TH].v != 1) {
			ydoc_error(&c->y, k, key, "expected exactly one of dynamic_th, static_th");
			continue;
		}
		np->p.dynamic = f[BPR_DYN_TH].v != NULL;
		np->p.dynamic_th = (int8_t)f[BPR_DYN_TH].i;
		np->p.static_th = f[BPR_STATIC_TH].u;
		np->p.xoff = f[BPR_XOFF].u;
		np->p.lossless = f[BPR_XOFF].v != NULL;
		np->p.xon = f[BPR_XON].u;
		np->p.xon_offset = f[BPR_XON_OFFSET].u;
		if (np->p.dynamic && !c->sw.tm.pool[np->p.pool].dynamic) {
			ydoc_error(&c->y, k, key, "dynamic_th on pool '%s' whose mode is static",
				   np->pool_name);
			continue;
		}
		np->p.reserved = f[BPR_SIZE].u;
		np->refused = np->p.lossless && lossless_reserve(t, np, f, k, key) < 0;
		t->n_prof++;
	}
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

/* "Ethernet0|3-4", or SONiC's "Ethernet0,Ethernet4|3-4" → port mask and index mask. */
static int port_range_key(struct cc *c, yaml_node_t *k, const char *table, uint8_t *ports,
			  uint8_t *mask)
{
	const char *s = ydoc_str(k);
	char names[1024];
	const char *bar = s ? strrchr(s, '|') : NULL;
	if (!bar || (size_t)(bar - s) >= sizeof(names))
		return ydoc_error(&c->y, k, table, "expected a key like \"Ethernet0|3-4\", got '%s'",
				  s ? s : "?");
	memcpy(names, s, (size_t)(bar - s));
	names[bar - s] = 0;
	memset(ports, 0, RSW_MAX_PORTS);
	char *save = NULL;
	int rc = 0;
	for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		int port = rsw_cc_port_by_name(c, k, table, n);
		if (port < 0)
			rc = -1;
		else
			ports[port] = 1;
	}
	if (parse_range(bar + 1, mask) < 0)
		return ydoc_error(&c->y, k, table, "expected indices 0..7 like 3-4 or 0-2,5 after '|', "
				  "got '%s'", bar + 1);
	return rc;
}

/* A profile bound to one port's PGs (pg = 1) or queues. */
static void bind_profile(struct tm_cc *t, unsigned port, uint8_t mask, int pg,
			 const struct named_profile *np, yaml_node_t *at, const char *key)
{
	struct cc *c = t->c;
	struct rsw_port_cfg *p = &c->ports[port];
	for (unsigned i = 0; i < 8; i++) {
		if (!(mask & (1u << i)))
			continue;
		int lossless = (p->pfc_enable >> i) & 1;
		if (pg && lossless != np->p.lossless) {
			ydoc_error(&c->y, at, key,
				   lossless ? "PG %u is lossless (pfc_enable) but profile '%s' has no "
					      "xoff headroom"
					    : "PG %u is not in pfc_enable but profile '%s' has xoff "
					      "headroom",
				   i, np->name);
			return;
		}
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

/* BUFFER_PG (pg = 1) or BUFFER_QUEUE (pg = 0) */
static void parse_bindings(struct tm_cc *t, yaml_node_t *n, int pg)
{
	struct cc *c = t->c;
	const char *table = pg ? "BUFFER_PG" : "BUFFER_QUEUE";
	if (!n || rsw_cc_want_map(c, n, table) < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		uint8_t ports[RSW_MAX_PORTS], mask;
		char key[128], buf[RSW_TM_NAME_MAX];
		struct rsw_fval f[BIND_PROFILE + 1];
		snprintf(key, sizeof(key), "%s|%s", table, fname(c, k));
		if (port_range_key(c, k, table, ports, &mask) < 0 ||
		    rsw_cc_fields(c, rsw_schema_tables[pg ? T_BUFPG : T_BUFQ].fields, key, k, v, f))
			continue;
		const char *pn = f[BIND_PROFILE].s ? strip_ref(f[BIND_PROFILE].s, "BUFFER_PROFILE",
							       buf, sizeof(buf)) : "?";
		if (c->sonic && !strcmp(pn, "NULL")) {
			/* SONiC's dynamic buffer model: the profile is computed, as here */
			rsw_cc_warn(c, k, "%s: profile NULL: rocesw's computed default is used", table);
			continue;
		}
		struct named_profile *np = find_profile(t, pn);
		if (np && np->refused)
			continue; /* its own error said why */
		if (!np) {
			ydoc_error(&c->y, f[BIND_PROFILE].v, key,
				   "profile: no profile named '%s' in BUFFER_PROFILE", pn);
			continue;
		}
		unsigned want = pg ? RSW_POOL_INGRESS : RSW_POOL_EGRESS;
		if (c->sw.tm.pool[np->p.pool].type != want) {
			ydoc_error(&c->y, f[BIND_PROFILE].v, key, "profile '%s' uses %s pool '%s'; a %s "
				   "needs an %s pool", np->name, want ? "ingress" : "egress",
				   np->pool_name, pg ? "PG" : "queue", pg ? "ingress" : "egress");
			continue;
		}
		for (unsigned port = 0; port < c->n_ports; port++)
			if (ports[port])
				bind_profile(t, port, mask, pg, np, f[BIND_PROFILE].v, key);
	}
}

static void parse_schedulers(struct tm_cc *t, yaml_node_t *n)
{
	static const uint8_t types[] = {RSW_SCHED_STRICT, RSW_SCHED_DWRR, RSW_SCHED_WRR};
	struct cc *c = t->c;
	if (!n || rsw_cc_want_map(c, n, "SCHEDULER") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		struct named_sched *ns = &t->sched[t->n_sched];
		struct rsw_fval f[SC_PRIORITY + 1];
		memset(ns, 0, sizeof(*ns));
		int e = entry_start(c, "SCHEDULER", k, v, t->n_sched, MAX_SCHEDULERS, key, sizeof(key),
				ns->name);
		if (e == -2)
			return;
		if (e < 0)
			continue;
		if (rsw_cc_fields(c, rsw_schema_tables[T_SCHED].fields, key, k, v, f))
			continue;
		ns->type = types[f[SC_TYPE].word - 1];
		ns->weight = (uint8_t)f[SC_WEIGHT].u;
		ns->priority = (uint8_t)f[SC_PRIORITY].u;
		if (ns->type != RSW_SCHED_STRICT && !ns->weight) {
			ydoc_error(&c->y, k, key, "missing 'weight' (1..100) for %s",
				   ns->type == RSW_SCHED_WRR ? "WRR" : "DWRR");
			continue;
		}
		t->n_sched++;
	}
}

static void parse_wred(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n || rsw_cc_want_map(c, n, "WRED_PROFILE") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char key[96];
		struct named_wred *nw = &t->wred[t->n_wred];
		struct rsw_fval f[WR_MARK + 1];
		memset(nw, 0, sizeof(*nw));
		int e = entry_start(c, "WRED_PROFILE", k, v, t->n_wred, MAX_WRED, key, sizeof(key),
				nw->name);
		if (e == -2)
			return;
		if (e < 0)
			continue;
		if (rsw_cc_fields(c, rsw_schema_tables[T_WRED].fields, key, k, v, f))
			continue;
		/* every packet is green here: a setting that marks green marks */
		nw->w.ecn = f[WR_ECN].v && strstr(f[WR_ECN].s, "green") != NULL;
		if (f[WR_ECN].v && !strcmp(f[WR_ECN].s, "ecn_all"))
			nw->w.ecn = 1;
		nw->w.kmin = f[WR_GMIN].u;
		nw->w.kmax = f[WR_GMAX].u;
		nw->w.pmax_ppm = (uint32_t)f[WR_GPROB].u * 10000u;
		nw->w.mark_on_enqueue = f[WR_MARK].word == 2;
		if (nw->w.kmax < nw->w.kmin) {
			ydoc_error(&c->y, k, key, "green_max_threshold is below green_min_threshold");
			continue;
		}
		t->n_wred++;
	}
}

/* The entry a QUEUE field names ("name" or "[TABLE|name]") among n named entries of stride
 * bytes starting at names: its index, or -1 (absent, or reported as missing). */
static int named_ref(struct cc *c, const struct rsw_fval *f, const char *key, const char *table,
		     const char *what, const char *names, size_t stride, unsigned n)
{
	char buf[RSW_TM_NAME_MAX];
	if (!f->v)
		return -1;
	const char *name = f->s ? strip_ref(f->s, table, buf, sizeof(buf)) : "?";
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(names + i * stride, name))
			return (int)i;
	const char *field = ydoc_str(f->k) ? ydoc_str(f->k) : "?";
	return ydoc_error(&c->y, f->v, key, "%s: no %s named '%s' in %s", field, what, name, table);
}

static void parse_queues(struct tm_cc *t, yaml_node_t *n)
{
	struct cc *c = t->c;
	if (!n || rsw_cc_want_map(c, n, "QUEUE") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		uint8_t ports[RSW_MAX_PORTS], mask;
		char key[128];
		struct rsw_fval f[Q_WRED + 1];
		snprintf(key, sizeof(key), "QUEUE|%s", fname(c, k));
		if (port_range_key(c, k, "QUEUE", ports, &mask) < 0 ||
		    rsw_cc_fields(c, rsw_schema_tables[T_QUEUE].fields, key, k, v, f))
			continue;
		int si = named_ref(c, &f[Q_SCHEDULER], key, "SCHEDULER", "scheduler", t->sched[0].name,
				   sizeof(t->sched[0]), t->n_sched);
		int wi = named_ref(c, &f[Q_WRED], key, "WRED_PROFILE", "profile", t->wred[0].name,
				   sizeof(t->wred[0]), t->n_wred);
		struct named_sched *ns = si >= 0 ? &t->sched[si] : NULL;
		struct named_wred *nw = wi >= 0 ? &t->wred[wi] : NULL;
		for (unsigned port = 0; port < c->n_ports; port++) {
			struct rsw_tm_port_cfg *tm = &c->ports[port].tm;
			for (unsigned q = 0; ports[port] && q < 8; q++) {
				if (!(mask & (1u << q)))
					continue;
				if (ns) {
					tm->sched.type[q] = ns->type;
					tm->sched.weight[q] = ns->weight;
					tm->sched.priority[q] = ns->priority;
					snprintf(tm->scheduler[q], RSW_TM_NAME_MAX, "%s", ns->name);
				}
				if (nw) {
					tm->wred[q] = nw->w;
					snprintf(tm->wred_profile[q], RSW_TM_NAME_MAX, "%s", nw->name);
				}
			}
			if (ports[port] && ns)
				t->sched_set[port] |= mask;
			if (ports[port] && nw)
				t->wred_set[port] |= mask;
		}
	}
}

/* PFC_WD: { GLOBAL: {POLL_INTERVAL: ms}, Ethernet0: {action, detection_time, restoration_time} } */
static void parse_pfcwd(struct tm_cc *t, yaml_node_t *n)
{
	static const uint8_t actions[] = {RSW_PFCWD_DROP, RSW_PFCWD_FORWARD, RSW_PFCWD_ALERT};
	struct cc *c = t->c;
	c->sw.tm.pfcwd_poll_ns = 200ull * 1000000u;
	if (!n || rsw_cc_want_map(c, n, "PFC_WD") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, n, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		const char *pn = fname(c, k);
		char key[96];
		struct rsw_fval f[WD_POLL + 1];
		snprintf(key, sizeof(key), "PFC_WD|%s", pn);
		int global = !strcmp(pn, "GLOBAL"), port = -1;
		if (!global && (port = rsw_cc_port_by_name(c, k, "PFC_WD", pn)) < 0)
			continue;
		if (rsw_cc_fields(c, rsw_schema_tables[T_PFCWD].fields, key, k, v, f))
			continue;
		for (unsigned i = 0; i <= WD_POLL; i++)
			if (f[i].v && global != (i == WD_POLL)) {
				ydoc_error(&c->y, f[i].k, key, "%s: %s", rsw_schema_tables[T_PFCWD]
					   .fields[i].name, global ? "expected only POLL_INTERVAL "
					   "under GLOBAL" : "POLL_INTERVAL goes under GLOBAL");
				global = -1;
			}
		if (global < 0)
			continue;
		if (global) {
			if (f[WD_POLL].v)
				c->sw.tm.pfcwd_poll_ns = f[WD_POLL].u * 1000000u;
			continue;
		}
		struct rsw_pfcwd_cfg wd = {.enabled = 1, .action = RSW_PFCWD_DROP,
					   .detection_ns = 200ull * 1000000u,
					   .restoration_ns = 200ull * 1000000u};
		if (f[WD_ACTION].v)
			wd.action = actions[f[WD_ACTION].word - 1];
		if (f[WD_DETECT].v)
			wd.detection_ns = f[WD_DETECT].u * 1000000u;
		if (f[WD_RESTORE].v)
			wd.restoration_ns = f[WD_RESTORE].u * 1000000u;
		for (unsigned q = 0; q < 8; q++)
			c->ports[port].tm.wd[q] = wd;
		t->wd_set[port] = 1;
	}
}

/* Priority group i of port p as SONiC's buffer defaults make it. */
static int default_pg(struct tm_cc *t, struct rsw_port_cfg *p, unsigned i, int lossless)
{
	const struct rsw_tm_pools *tp = &t->c->sw.tm;
	struct rsw_tm_port_cfg *tm = &p->tm;
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
	return 0;
}

/* Queue i's buffer profile as SONiC's defaults make it. */
static int default_queue(struct tm_cc *t, struct rsw_tm_port_cfg *tm, unsigned i, int lossless)
{
	const struct rsw_tm_pools *tp = &t->c->sw.tm;
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
	return 0;
}

/* 6 carries CTS and CNP, 7 control: strict; data shares by DWRR as SONiC's scheduler.0 (14)
 * and scheduler.1 (15) for the lossless queues. */
static void default_sched(struct rsw_tm_port_cfg *tm, unsigned i, int lossless)
{
	if (i >= 6) {
		tm->sched.type[i] = RSW_SCHED_STRICT;
		snprintf(tm->scheduler[i], RSW_TM_NAME_MAX, "scheduler.strict");
	} else {
		tm->sched.type[i] = RSW_SCHED_DWRR;
		tm->sched.weight[i] = lossless ? 15 : 14;
		snprintf(tm->scheduler[i], RSW_TM_NAME_MAX, "scheduler.%d", lossless);
	}
}

/* Everything the file did not set on port pi, per priority (docs/config.md, "Traffic-manager
 * defaults"): PG and queue buffers, scheduler, WRED/ECN on lossless queues, the PFC watchdog. */
static int port_defaults(struct tm_cc *t, unsigned pi)
{
	struct rsw_port_cfg *p = &t->c->ports[pi];
	struct rsw_tm_port_cfg *tm = &p->tm;

	tm->pfc_enable = p->pfc_enable;
	if (!tm->pfcwd_set)
		tm->pfcwd_enable = p->pfc_enable;
	if (!tm->pfc_pause_quanta)
		tm->pfc_pause_quanta = 0xFFFF;
	for (unsigned i = 0; i < 8; i++) {
		int lossless = (p->pfc_enable >> i) & 1;
		if (!(t->pg_set[pi] & (1u << i)) && default_pg(t, p, i, lossless) < 0)
			return -1;
		if (!(t->queue_set[pi] & (1u << i)) && default_queue(t, tm, i, lossless) < 0)
			return -1;
		if (!(t->sched_set[pi] & (1u << i)))
			default_sched(tm, i, lossless);
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
	parse_pools(t, c->tables[T_BUFPOOL]);
	parse_profiles(t, c->tables[T_BUFPROF]);
	parse_bindings(t, c->tables[T_BUFPG], 1);
	parse_bindings(t, c->tables[T_BUFQ], 0);
	parse_schedulers(t, c->tables[T_SCHED]);
	parse_wred(t, c->tables[T_WRED]);
	parse_queues(t, c->tables[T_QUEUE]);
	parse_pfcwd(t, c->tables[T_PFCWD]);
	/* defaults resolve pools by role: only once the file's pools are known good */
	if (c->y.n_err)
		goto out;
	for (unsigned i = 0; i < c->n_ports; i++)
		if (port_defaults(t, i) < 0)
			goto out;
	rc = 0;
out:
	free(t);
	return rc;
}
