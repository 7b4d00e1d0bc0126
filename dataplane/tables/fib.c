#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_memory.h>
#include <rte_lpm6.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include "ars.h"
#include "fib.h"
#include "flow_cache.h"
#include "sparse_mem.h"
#include "state.h"

/* rte_lpm names are global to the process: make each one unique. */
static atomic_uint_fast64_t lpm_serial;

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 17);
}

/* The tbl8 groups an LPM table needs for the main-table routes of one family: one per distinct
 * leading `b` bytes among the routes longer than 8b bits, for each b from 3 (tbl24) on. Sized
 * from the routes, not as a multiple of their count: 1M /24 routes need none, where 256 + n
 * groups of 256 entries asked DPDK for 1 GiB (IPv6: 16 per route, 1.6 GiB at 100k). */
static unsigned long tbl8_groups(const struct rsw_state *s, unsigned family)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_routes; i++)
		n += s->routes[i].in_port < 0 && s->routes[i].prefix.ip.family == family &&
		     s->routes[i].prefix.len > 24;
	if (!n)
		return 0;
	uint8_t (*k)[17] = malloc(n * sizeof(*k)); /* address, then length */
	if (!k)
		return ~0ul;
	n = 0;
	for (size_t i = 0; i < s->n_routes; i++) {
		const struct rsw_route *r = &s->routes[i];
		if (r->in_port < 0 && r->prefix.ip.family == family && r->prefix.len > 24) {
			memcpy(k[n], r->prefix.ip.a, 16);
			k[n++][16] = r->prefix.len;
		}
	}
	/* sorted, the routes sharing leading bytes sit together (also among those long enough) */
	qsort(k, n, sizeof(*k), key_cmp);
	unsigned long groups = 0;
	for (unsigned b = 3; b < (family == 4 ? 4u : 16u); b++) {
		const uint8_t *prev = NULL;
		for (size_t i = 0; i < n; i++) {
			if (k[i][16] <= 8 * b)
				continue;
			if (!prev || memcmp(prev, k[i], b))
				groups++;
			prev = k[i];
		}
	}
	free(k);
	return groups;
}

static int fib4_compact;

void rsw_fib_compact_ipv4(int on)
{
	fib4_compact = on;
}

/* IPv4: rte_fib's DIR-24-8 (the lookup rte_lpm does) over a RIB tree of the rules; rte_lpm
 * kept its rules in per-depth arrays searched linearly on every add, so 100k routes of one
 * length took a minute to load and 1M would take hours. Compact: the RIB tree alone
 * (RTE_FIB_DUMMY), whose lookup walks at most 32 levels of a path-compressed trie; it costs
 * about 100 bytes per route instead of DIR-24-8's 64 MiB tbl24 (16 MiB even with 1-byte next
 * hops, which our kind|index values do not fit). */
static struct rte_fib *fib4_new(unsigned n_rules, unsigned long tbl8)
{
	char name[64];
	struct rte_fib_conf cfg = {
		.type = fib4_compact ? RTE_FIB_DUMMY : RTE_FIB_DIR24_8,
		.default_nh = RSW_FIB4_MISS,
		.max_routes = (int)(n_rules < 64 ? 64 : n_rules * 2),
		.dir24_8 = {.nh_sz = RTE_FIB_DIR24_8_4B,
			    /* the groups the routes need, with room for one commit's new ones */
			    .num_tbl8 = (uint32_t)(256 + tbl8 + tbl8 / 4)},
	};
	snprintf(name, sizeof(name), "rsw4_%lu", (unsigned long)atomic_fetch_add(&lpm_serial, 1));
	return rte_fib_create(name, SOCKET_ID_ANY, &cfg);
}

static struct rte_lpm6 *lpm6_new(unsigned n_rules, unsigned long tbl8)
{
	char name[RTE_LPM6_NAMESIZE];
	struct rte_lpm6_config cfg = {
		.max_rules = n_rules < 64 ? 64 : n_rules * 2,
		.number_tbl8s = (uint32_t)(1024 + tbl8 + tbl8 / 4),
	};
	snprintf(name, sizeof(name), "rsw6_%lu", (unsigned long)atomic_fetch_add(&lpm_serial, 1));
	return rte_lpm6_create(name, SOCKET_ID_ANY, &cfg);
}

static struct rte_rib *rib4_new(unsigned n_rules)
{
	char name[64];
	struct rte_rib_conf cfg = {.ext_sz = 0, .max_nodes = (int)(n_rules * 2 + 16)};
	snprintf(name, sizeof(name), "rswr4_%lu", (unsigned long)atomic_fetch_add(&lpm_serial, 1));
	return rte_rib_create(name, SOCKET_ID_ANY, &cfg);
}

static struct rte_rib6 *rib6_new(unsigned n_rules)
{
	char name[64];
	struct rte_rib6_conf cfg = {.ext_sz = 0, .max_nodes = (int)(n_rules * 2 + 16)};
	snprintf(name, sizeof(name), "rswr6_%lu", (unsigned long)atomic_fetch_add(&lpm_serial, 1));
	return rte_rib6_create(name, SOCKET_ID_ANY, &cfg);
}

/* Next-hop index for an IP, added on first use. */
static long nh_index(struct rsw_fib *f, const struct rsw_state *s, const struct rsw_ip *ip,
		     uint32_t *cap)
{
	for (uint32_t i = 0; i < f->n_nh; i++)
		if (rsw_ip_eq(&f->nh[i].ip, ip))
			return i;
	if (f->n_nh == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 16;
		void *p = realloc(f->nh, nc * sizeof(*f->nh));
		if (!p)
			return -1;
		f->nh = p;
		*cap = nc;
	}
	struct rsw_fib_nh *nh = &f->nh[f->n_nh];
	memset(nh, 0, sizeof(*nh));
	nh->ip = *ip;
	const struct rsw_neighbor *n = rsw_state_resolve(s, ip);
	if (n) {
		nh->resolved = 1;
		nh->port = n->port;
		memcpy(nh->dmac, n->mac, 6);
		const struct rsw_port_cfg *pc = &s->ports[n->port];
		memcpy(nh->smac, pc->has_mac ? pc->mac : s->sw.router_mac, 6);
	}
	return f->n_nh++;
}

static int build_group(struct rsw_fib *f, const struct rsw_state *s, const struct rsw_nhg *g,
		       struct rsw_fib_group *fg, uint32_t *nh_cap)
{
	long nh_of_slot[RSW_ECMP_MAX_MEMBERS];

	memset(fg, 0, sizeof(*fg));
	snprintf(fg->name, sizeof(fg->name), "%s", g->name);
	fg->resilient = g->resilient;
	fg->n_buckets = g->n_buckets;
	for (uint32_t p = 0; p < f->n_policies; p++)
		if (strcmp(f->policy_names[p], g->policy) == 0)
			fg->policy = (uint16_t)p;
	for (unsigned i = 0; i < RSW_ECMP_MAX_MEMBERS; i++)
		nh_of_slot[i] = -1;
	for (unsigned i = 0; i < g->n_members; i++) {
		long nh = nh_index(f, s, &g->members[i].ip, nh_cap);
		if (nh < 0)
			return -1;
		nh_of_slot[g->members[i].slot] = nh;
		if (g->members[i].active)
			fg->n_active++;
	}
	fg->bucket_m = UINT64_MAX / fg->n_buckets + 1;
	fg->active_m = fg->n_active ? UINT64_MAX / fg->n_active + 1 : 0;
	fg->active_nh = calloc(fg->n_active + 1u, sizeof(uint32_t));
	fg->active_slot = calloc(fg->n_active + 1u, sizeof(uint8_t));
	fg->active_port = calloc(fg->n_active + 1u, sizeof(uint16_t));
	if (!fg->active_nh || !fg->active_slot || !fg->active_port)
		return -1;
	unsigned k = 0;
	/* non-resilient order: by slot, so hash % n matches the member list order */
	for (unsigned sl = 0; sl < RSW_ECMP_MAX_MEMBERS; sl++)
		for (unsigned i = 0; i < g->n_members; i++)
			if (g->members[i].slot == sl && g->members[i].active) {
				fg->active_slot[k] = (uint8_t)sl;
				fg->active_port[k] = f->nh[nh_of_slot[sl]].port;
				fg->active_nh[k++] = (uint32_t)nh_of_slot[sl];
			}
	if (fg->n_active && g->rbt.bucket) {
		fg->bucket_slot = malloc(g->n_buckets);
		if (!fg->bucket_slot)
			return -1;
		for (uint32_t b = 0; b < g->n_buckets; b++)
			fg->bucket_slot[b] = (uint8_t)g->rbt.bucket[b];
		for (unsigned sl = 0; sl < RSW_ECMP_MAX_MEMBERS; sl++)
			fg->slot_nh[sl] = nh_of_slot[sl] < 0 ? 0 : (uint32_t)nh_of_slot[sl];
	}
	return 0;
}

static int route_value(struct rsw_fib *f, const struct rsw_state *s, const struct rsw_route *r,
		       uint32_t *nh_cap, uint32_t *val)
{
	if (r->target == RSW_TGT_BLACKHOLE) {
		*val = RSW_LPM_BLACKHOLE << RSW_LPM_KIND_SHIFT;
		return 0;
	}
	if (r->target == RSW_TGT_GROUP) {
		for (uint32_t g = 0; g < f->n_groups; g++)
			if (strcmp(f->groups[g].name, r->group) == 0) {
				*val = RSW_LPM_GROUP << RSW_LPM_KIND_SHIFT | g;
				return 0;
			}
		return -1;
	}
	long nh = nh_index(f, s, &r->nexthop, nh_cap);
	if (nh < 0 || nh > (long)RSW_LPM_INDEX_MASK)
		return -1;
	*val = RSW_LPM_NEXTHOP << RSW_LPM_KIND_SHIFT | (uint32_t)nh;
	return 0;
}

/* A group with no usable member (0 when there is no such group). */
static int group_down(const struct rsw_fib *f, const char *name)
{
	for (uint32_t g = 0; g < f->n_groups; g++)
		if (strcmp(f->groups[g].name, name) == 0)
			return f->groups[g].n_active == 0;
	return 0;
}

/* A route's next hop is unreachable: its neighbour's port down, or every member of its group
 * unusable. */
static int target_down(const struct rsw_fib *f, const struct rsw_state *s,
		       const struct rsw_route *r)
{
	if (r->target == RSW_TGT_BLACKHOLE)
		return 0;
	if (r->target == RSW_TGT_GROUP)
		return group_down(f, r->group);
	const struct rsw_neighbor *n = rsw_state_resolve(s, &r->nexthop);
	return n && !s->ports[n->port].admin_up;
}

/* A policy route whose next hop is unreachable is left out, so its packets take the main
 * table's route, as when a controller withdraws it; unless it is to be kept (then they are
 * dropped at the down port). */
static int policy_route_down(const struct rsw_fib *f, const struct rsw_state *s,
			     const struct rsw_route *r)
{
	return r->in_port >= 0 && !r->keep_when_down && target_down(f, s, r);
}

/* The route as installed: its backup group instead of its target while the target is down
 * and the backup is not (a floating static route, STATIC_ROUTE distance). */
static const struct rsw_route *route_in_use(const struct rsw_fib *f, const struct rsw_state *s,
					    const struct rsw_route *r, struct rsw_route *tmp)
{
	if (!r->backup[0] || group_down(f, r->backup) || !target_down(f, s, r))
		return r;
	*tmp = *r;
	tmp->target = RSW_TGT_GROUP;
	memcpy(tmp->group, r->backup, sizeof(tmp->group));
	return tmp;
}

static uint32_t ip4_host(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static int long4_holds(const struct rsw_long4 *h, unsigned len)
{
	for (unsigned k = 0; k < h->n_len; k++)
		if (h->len[k] == len)
			return 1;
	return 0;
}

/* a route is added once per build: a key already there is the same route (a rebuild of it) */
static void long4_add(struct rsw_long4 *h, uint32_t ip, unsigned len, uint32_t val)
{
	uint32_t i = rsw_long4_hash(ip, len, h->mask);
	while (h->slot[i].len_val != RSW_LONG4_EMPTY &&
	       !(h->slot[i].ip == ip && h->slot[i].len_val >> 24 == len))
		i = (i + 1) & h->mask;
	h->slot[i] = (struct rsw_long4_slot){.ip = ip, .len_val = (uint32_t)len << 24 | val};
}

/* The main IPv4 routes' longest lengths (up to RSW_LONG4_LENS of them), and a table sized for
 * their routes at most half full. Route values fit 24 bits (RSW_LPM_KIND_SHIFT + 2 bits). */
static int long4_new(struct rsw_long4 *h, const struct rsw_state *s)
{
	unsigned count[33] = {0}, n = 0;
	for (size_t i = 0; i < s->n_routes; i++)
		if (s->routes[i].in_port < 0 && s->routes[i].prefix.ip.family == 4 &&
		    s->routes[i].prefix.len > 0)
			count[s->routes[i].prefix.len]++;
	for (unsigned len = 32; len > 0 && h->n_len < RSW_LONG4_LENS; len--)
		if (count[len]) {
			h->len[h->n_len++] = (uint8_t)len;
			n += count[len];
		}
	if (!n)
		return 0;
	uint32_t slots = 16;
	while (slots < 2 * n)
		slots *= 2;
	h->slot = malloc(slots * sizeof(*h->slot));
	if (!h->slot)
		return -1;
	for (uint32_t i = 0; i < slots; i++)
		h->slot[i] = (struct rsw_long4_slot){.len_val = RSW_LONG4_EMPTY};
	h->mask = slots - 1;
	return 0;
}

static int add_route(struct rsw_fib *f, const struct rsw_route *r, uint32_t val)
{
	if (r->in_port >= 0) {
		struct rsw_fib_port *p = &f->ports[r->in_port];
		if (r->prefix.ip.family == 4) {
			struct rte_rib_node *n = rte_rib_insert(p->pbr4, ip4_host(r->prefix.ip.a),
								r->prefix.len);
			return n ? rte_rib_set_nh(n, val) : -1;
		}
		struct rte_rib6_node *n = rte_rib6_insert(p->pbr6, r->prefix.ip.a, r->prefix.len);
		return n ? rte_rib6_set_nh(n, val) : -1;
	}
	if (r->prefix.len == 0) {
		if (r->prefix.ip.family == 4) {
			f->has_default4 = 1;
			f->default4 = val;
		} else {
			f->has_default6 = 1;
			f->default6 = val;
		}
		return 0;
	}
	if (r->prefix.ip.family == 4) {
		if (f->long4.slot && long4_holds(&f->long4, r->prefix.len))
			long4_add(&f->long4, ip4_host(r->prefix.ip.a), r->prefix.len, val);
		return rte_fib_add(f->fib4, ip4_host(r->prefix.ip.a), r->prefix.len, val);
	}
	return rte_lpm6_add(f->lpm6, r->prefix.ip.a, r->prefix.len, val);
}

static int cls_order(const void *a, const void *b)
{
	const struct rsw_classifier_rule *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The rules in match order: priority, then name, so equal priorities are deterministic. */
static struct rsw_classifier_rule *dup_rules(const struct rsw_classifier_rule *r, size_t n)
{
	struct rsw_classifier_rule *d = malloc((n ? n : 1) * sizeof(*d));
	if (d && n) {
		memcpy(d, r, n * sizeof(*d));
		qsort(d, n, sizeof(*d), cls_order);
	}
	return d;
}

/* The DSCPs some rule of f matches (the rules are read only for them). */
static uint64_t cls_dscps(const struct rsw_fib *f)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < f->n_cls; i++)
		for (unsigned d = 0; d < 64; d++)
			if (!((d ^ f->cls[i].dscp) & f->cls[i].dscp_mask))
				m |= 1ull << d;
	return m;
}

/* Each group that takes ARS gets its state over its active members, and the switch its ports'
 * quality (none when no group takes ARS). 0 or -1 (memory). */
static int ars_build(struct rsw_fib *f, const struct rsw_state *s)
{
	for (uint32_t i = 0; i < f->n_groups; i++) {
		const struct rsw_ars_obj *o = &s->nhg[i]->ars;
		struct rsw_fib_group *g = &f->groups[i];
		if (!rsw_ars_wanted(o))
			continue;
		struct rsw_ars_members mb = {g->active_nh, g->active_slot, g->active_port,
					     g->n_active};
		if (!(g->ars = rsw_ars_group_new(o, &mb, s->sw.ars.seed, i)))
			return -1;
		if (!f->ars && !(f->ars = rsw_ars_switch_new(&s->sw.ars, f->n_ports)))
			return -1;
	}
	return 0;
}

void rsw_fib_carry(struct rsw_fib *next, const struct rsw_fib *prev)
{
	if (!next || !prev || !prev->ars || !next->ars)
		return;
	rsw_ars_switch_carry(next->ars, prev->ars);
	for (uint32_t i = 0; i < next->n_groups; i++) {
		struct rsw_ars_group *a = next->groups[i].ars;
		for (uint32_t j = 0; a && j < prev->n_groups; j++) {
			const struct rsw_ars_group *b = prev->groups[j].ars;
			if (b && !strcmp(next->groups[i].name, prev->groups[j].name)) {
				rsw_ars_group_carry(a, b);
				break;
			}
		}
	}
}

static int no_memory(char *err, unsigned errlen)
{
	snprintf(err, errlen, "out of memory compiling the tables");
	return -1;
}

/* The hash policies, by index (groups name theirs). */
static int compile_policies(struct rsw_fib *f, const struct rsw_state *s)
{
	f->n_policies = (uint32_t)s->n_pol;
	f->policies = calloc(s->n_pol + 1, sizeof(*f->policies));
	f->policy_names = calloc(s->n_pol + 1, sizeof(*f->policy_names));
	if (!f->policies || !f->policy_names)
		return -1;
	for (size_t i = 0; i < s->n_pol; i++) {
		f->policies[i] = s->pol[i].pol;
		memcpy(f->policy_names[i], s->pol[i].name, RSW_NAME_MAX);
	}
	return 0;
}

/* Each port as ingress and egress read it (state, MAC, QoS maps), and the TM's own settings. */
static int compile_ports(struct rsw_fib *f, const struct rsw_state *s, char *err,
			 unsigned errlen)
{
	for (unsigned p = 0; p < s->n_ports; p++) {
		const struct rsw_port_cfg *pc = &s->ports[p];
		struct rsw_fib_port *fp = &f->ports[p];
		fp->up = pc->admin_up;
		fp->role = pc->role;
		fp->pfc_enable = pc->pfc_enable;
		fp->speed_mbps = pc->speed_mbps;
		memcpy(fp->mac, pc->has_mac ? pc->mac : s->sw.router_mac, 6);
		/* rsw_state_finish checked that both maps exist */
		const struct rsw_qos_map *d2t = rsw_state_qos(s, pc->dscp_to_tc_map, RSW_QOS_DSCP_TO_TC);
		const struct rsw_qos_map *t2p = rsw_state_qos(s, pc->tc_to_pg_map, RSW_QOS_TC_TO_PG);
		if (!d2t || !t2p) {
			snprintf(err, errlen, "%s: port %s: QoS map missing", pc->origin, pc->name);
			return -1;
		}
		memcpy(fp->dscp_to_tc, d2t->map, 64);
		memcpy(fp->tc_to_pg, t2p->map, 8);
		snprintf(fp->name, sizeof(fp->name), "%s", pc->name);
		f->tm.port[p] = pc->tm;
		f->tm.speed_mbps[p] = pc->speed_mbps;
		snprintf(f->tm.port_name[p], sizeof(f->tm.port_name[p]), "%s", pc->name);
	}
	f->tm.n_ports = (uint16_t)s->n_ports;
	f->tm.pools = s->sw.tm;
	rsw_tm_config_finish(&f->tm);
	return 0;
}

/* The switch's own addresses (INTERFACE). */
static int compile_locals(struct rsw_fib *f, const struct rsw_state *s)
{
	f->local4 = calloc(s->n_intf + 1, sizeof(*f->local4));
	f->local6 = calloc(s->n_intf + 1, sizeof(*f->local6));
	if (!f->local4 || !f->local6)
		return -1;
	for (size_t i = 0; i < s->n_intf; i++) {
		const struct rsw_ip *a = &s->intf[i].addr.ip;
		if (a->family == 4)
			f->local4[f->n_local4++] = ip4_host(a->a);
		else
			memcpy(f->local6[f->n_local6++], a->a, 16);
	}
	return 0;
}

/* The ECMP groups over their next hops, and ARS over them. */
static int compile_groups(struct rsw_fib *f, const struct rsw_state *s, uint32_t *nh_cap)
{
	f->groups = calloc(s->n_nhg + 1, sizeof(*f->groups));
	if (!f->groups)
		return -1;
	for (size_t i = 0; i < s->n_nhg; i++) {
		if (build_group(f, s, s->nhg[i], &f->groups[i], nh_cap) < 0)
			return -1;
		f->n_groups++;
	}
	return ars_build(f, s);
}

/* The empty LPM tables, sized to the routes: the main IPv4 and IPv6 ones, and each port's
 * policy routes. */
static int create_lpms(struct rsw_fib *f, const struct rsw_state *s, char *err, unsigned errlen)
{
	unsigned n4 = 0, n6 = 0, n_pbr[RSW_MAX_PORTS] = {0};
	for (size_t i = 0; i < s->n_routes; i++) {
		if (s->routes[i].in_port >= 0)
			n_pbr[s->routes[i].in_port]++;
		else if (s->routes[i].prefix.ip.family == 4)
			n4++;
		else
			n6++;
	}
	if (fib4_compact && long4_new(&f->long4, s) < 0)
		return no_memory(err, errlen);
	unsigned long t4 = n4 ? tbl8_groups(s, 4) : 0, t6 = n6 ? tbl8_groups(s, 6) : 0;
	if (t4 == ~0ul || t6 == ~0ul)
		return no_memory(err, errlen);
	if ((n4 && !(f->fib4 = fib4_new(n4, t4))) || (n6 && !(f->lpm6 = lpm6_new(n6, t6))))
		goto lpm_fail;
	for (unsigned p = 0; p < s->n_ports; p++) {
		if (!n_pbr[p])
			continue;
		f->ports[p].pbr4 = rib4_new(n_pbr[p]);
		f->ports[p].pbr6 = rib6_new(n_pbr[p]);
		if (!f->ports[p].pbr4 || !f->ports[p].pbr6)
			goto lpm_fail;
	}
	return 0;
lpm_fail:
	snprintf(err, errlen, "cannot create an LPM table: %s", rte_strerror(rte_errno));
	return -1;
}

/* Every route in use into its table, as its value (next hop, group or blackhole). */
static int add_routes(struct rsw_fib *f, const struct rsw_state *s, uint32_t *nh_cap, char *err,
		      unsigned errlen)
{
	for (size_t i = 0; i < s->n_routes; i++) {
		struct rsw_route tmp;
		const struct rsw_route *r = route_in_use(f, s, &s->routes[i], &tmp);
		uint32_t val;
		if (policy_route_down(f, s, r))
			continue;
		if (route_value(f, s, r, nh_cap, &val) < 0) {
			snprintf(err, errlen, "%s: route cannot be compiled (too many next hops?)",
				 r->origin);
			return -1;
		}
		if (add_route(f, r, val) < 0) {
			snprintf(err, errlen, "%s: the LPM table refused the route (full?)", r->origin);
			return -1;
		}
	}
	return 0;
}

/* Zeroed and on a cache line (the TM's records are a line each, tm_cfg.h): a page-aligned
 * mapping of its own, where the records of ports a switch does not have stay untouched zero
 * pages (sparse_mem.h). */
static struct rsw_fib *fib_alloc(void)
{
	return rsw_sparse_alloc(sizeof(struct rsw_fib));
}

static void fib_release(struct rsw_fib *f)
{
	rsw_sparse_free(f, sizeof(*f));
}

/* Each compiled table in the order the next reads it. */
struct rsw_fib *rsw_fib_build(const struct rsw_state *s, uint64_t generation, char *err,
			      unsigned errlen)
{
	struct rsw_fib *f = fib_alloc();
	uint32_t nh_cap = 0;
	if (!f) {
		no_memory(err, errlen);
		return NULL;
	}
	f->generation = generation;
	memcpy(f->router_mac, s->sw.router_mac, 6);
	f->dmac_check = s->sw.dmac_check;
	f->n_ports = s->n_ports;
	if (compile_policies(f, s) < 0)
		goto oom;
	if (compile_ports(f, s, err, errlen) < 0)
		goto fail;
	f->n_cls = (uint32_t)s->n_cls;
	if (compile_locals(f, s) < 0 || !(f->cls = dup_rules(s->cls, s->n_cls)) ||
	    compile_groups(f, s, &nh_cap) < 0)
		goto oom;
	f->cls_dscp = cls_dscps(f);
	if (create_lpms(f, s, err, errlen) < 0 || add_routes(f, s, &nh_cap, err, errlen) < 0)
		goto fail;
	rsw_flow_cache_recipe(f);
	return f;
oom:
	no_memory(err, errlen);
fail:
	rsw_fib_free(f);
	return NULL;
}

static int process_exiting;

void rsw_fib_process_exiting(void)
{
	process_exiting = 1;
}

void rsw_fib_free(struct rsw_fib *f)
{
	if (!f)
		return;
	/* DPDK zeroes what rte_free releases: 64 MiB per DIR-24-8 table, pages touched for the
	 * first time. A process about to exit leaves that memory to the kernel. */
	if (!process_exiting) {
		rte_fib_free(f->fib4);
		rte_lpm6_free(f->lpm6);
		for (unsigned p = 0; p < RSW_MAX_PORTS; p++) {
			rte_rib_free(f->ports[p].pbr4);
			rte_rib6_free(f->ports[p].pbr6);
		}
	}
	free(f->long4.slot);
	free(f->ars);
	for (uint32_t g = 0; f->groups && g < f->n_groups; g++) {
		free(f->groups[g].ars);
		free(f->groups[g].bucket_slot);
		free(f->groups[g].active_nh);
		free(f->groups[g].active_slot);
		free(f->groups[g].active_port);
	}
	free(f->groups);
	free(f->nh);
	free(f->policies);
	free(f->policy_names);
	free(f->cls);
	free(f->local4);
	free(f->local6);
	fib_release(f);
}
