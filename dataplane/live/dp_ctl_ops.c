/* The control protocol's operations (docs/control.md): show what the switch has and counts, and
 * the changes a lab user makes by hand (port admin state, routes, an injected PFC storm). Every
 * change is one table-write transaction: applied whole or refused with the reason, changing
 * nothing. Runs on the main lcore, the only thread that commits. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/config/config.h"
#include "dataplane/hash/hash_algo.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_build.h"
#include "dataplane/pipeline/pipeline.h"
#include "dataplane/pipeline/trace_explain.h"
#include "dataplane/tables/ars_stats.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/tables/state_diff.h"
#include "dp_ctl.h"
#include "dp_neigh.h"
#include "dp_stats.h"
#include "dp_trace.h"
#include "dp_zone.h"

#define J(v) json_integer((json_int_t)(v))

static const char *str_arg(json_t *req, const char *k)
{
	return json_string_value(json_object_get(req, k));
}

static json_t *counters(struct rsw_dp *dp)
{
	struct rsw_dp_totals t;
	rsw_dp_stats_sum(dp, &t, rsw_dp_queued(dp));
	return rsw_dp_stats_json(dp, &t);
}

/* One key of every port object of the counters, with the port's name. */
static json_t *per_port(struct rsw_dp *dp, const char *key)
{
	json_t *all = counters(dp), *out = json_array(), *p;
	size_t i;
	json_array_foreach(json_object_get(all, "ports"), i, p) {
		json_t *o = json_object();
		json_object_set(o, "name", json_object_get(p, "name"));
		json_object_set(o, key, json_object_get(p, key));
		json_array_append_new(out, o);
	}
	json_decref(all);
	return out;
}

/* One target of `show`: its name and how to build the answer. */
struct show_target {
	const char *what;
	json_t *(*build)(struct rsw_ctl *c, const struct show_target *t);
	const char *port_key; /* per_port's key, for the targets that are one */
	int family;           /* the neighbour table's, for arp and ndp */
};

static json_t *show_counters(struct rsw_ctl *c, const struct show_target *t)
{
	(void)t;
	return counters(c->dp);
}

static json_t *show_per_port(struct rsw_ctl *c, const struct show_target *t)
{
	return per_port(c->dp, t->port_key);
}

static json_t *show_neighbours(struct rsw_ctl *c, const struct show_target *t)
{
	return rsw_dp_neigh_show(c->dp, t->family);
}

static json_t *ports(struct rsw_ctl *c, const struct show_target *t)
{
	struct rsw_dp *dp = c->dp;
	(void)t;
	const struct rsw_state *st = dp->sw->state;
	json_t *all = counters(dp), *out = json_array();
	for (unsigned p = 0; p < dp->n_ports; p++) {
		const struct rsw_port_cfg *pc = &st->ports[p];
		json_t *c = json_array_get(json_object_get(all, "ports"), p), *o = json_object();
		json_object_set_new(o, "name", json_string(pc->name));
		json_object_set_new(o, "alias", json_string(pc->alias));
		json_object_set_new(o, "role", json_string(rsw_port_role_name(pc->role)));
		json_object_set_new(o, "admin_status", json_string(pc->admin_up ? "up" : "down"));
		json_object_set_new(o, "speed", J(pc->speed_mbps));
		json_object_set_new(o, "mtu", J(pc->mtu));
		json_object_set_new(o, "pfc_enable", J(pc->pfc_enable));
		static const char *const keys[] = {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
						   "port_rx_missed"};
		for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			json_object_set(o, keys[k], json_object_get(c, keys[k]));
		json_array_append_new(out, o);
	}
	json_decref(all);
	return out;
}

static json_t *buffers(struct rsw_ctl *c, const struct show_target *t)
{
	struct rsw_dp *dp = c->dp;
	(void)t;
	const struct rsw_fib *fib = rsw_switch_fib(dp->sw);
	json_t *pools = json_array();
	for (unsigned i = 0; i < fib->tm.pools.n_pools; i++) {
		const struct rsw_buf_pool_cfg *pc = &fib->tm.pools.pool[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(fib->tm.pools.name[i]));
		json_object_set_new(o, "size", J(pc->size));
		if (pc->xoff) {
			json_object_set_new(o, "xoff", J(pc->xoff));
			json_object_set_new(o, "SAI_BUFFER_POOL_STAT_XOFF_ROOM_CURR_OCCUPANCY_BYTES",
					    J(__atomic_load_n(&dp->tm->pool_hdrm[i],
							      __ATOMIC_RELAXED)));
		}
		json_object_set_new(o, "SAI_BUFFER_POOL_STAT_CURR_OCCUPANCY_BYTES",
				    J(__atomic_load_n(&dp->tm->pool_used[i], __ATOMIC_RELAXED)));
		json_object_set_new(o, "SAI_BUFFER_POOL_STAT_WATERMARK_BYTES",
				    J(__atomic_load_n(&dp->tm->pool_peak[i], __ATOMIC_RELAXED)));
		json_array_append_new(pools, o);
	}
	json_t *out = json_object();
	json_object_set_new(out, "pools", pools);
	/* the packet memory: a PG's packet thresholds are taken from what is free of it */
	json_object_set_new(out, "descriptors",
			    json_pack("{s:I, s:I}", "size", (json_int_t)dp->tm->desc.size, "used",
				      (json_int_t)__atomic_load_n(&dp->tm->desc.used,
								  __ATOMIC_RELAXED)));
	json_object_set_new(out, "ports", per_port(dp, "priority_groups"));
	return out;
}

static json_t *routes(struct rsw_ctl *c, const struct show_target *t)
{
	const struct rsw_state *st = c->dp->sw->state;
	(void)t;
	json_t *out = json_array();
	for (size_t i = 0; i < st->n_routes; i++) {
		const struct rsw_route *r = &st->routes[i];
		char pfx[64], ip[64];
		struct rsw_ip a = {.family = r->prefix.ip.family};
		memcpy(a.a, r->prefix.ip.a, 16);
		snprintf(pfx, sizeof(pfx), "%s/%u", rsw_ip_str(&a, ip, sizeof(ip)), r->prefix.len);
		json_t *o = json_object();
		json_object_set_new(o, "prefix", json_string(pfx));
		if (r->in_port >= 0)
			json_object_set_new(o, "in_port", json_string(st->ports[r->in_port].name));
		if (r->target == RSW_TGT_NEXTHOP)
			json_object_set_new(o, "nexthop", json_string(rsw_ip_str(&r->nexthop, ip,
										   sizeof(ip))));
		else if (r->target == RSW_TGT_GROUP)
			json_object_set_new(o, "nexthop_group", json_string(r->group));
		else
			json_object_set_new(o, "blackhole", json_true());
		if (r->backup[0])
			json_object_set_new(o, "backup_group", json_string(r->backup));
		json_object_set_new(o, "origin", json_string(r->origin));
		json_array_append_new(out, o);
	}
	return out;
}

/* The counters' groups plus each member's share of the resilient buckets. */
static json_t *ecmp(struct rsw_ctl *c, const struct show_target *t)
{
	struct rsw_dp *dp = c->dp;
	(void)t;
	const struct rsw_fib *fib = rsw_switch_fib(dp->sw);
	json_t *all = counters(dp), *groups = json_object_get(all, "ecmp_groups"), *g;
	size_t i;
	json_array_foreach(groups, i, g) {
		const struct rsw_fib_group *fg = &fib->groups[i];
		json_object_set_new(g, "buckets", J(fg->n_buckets));
		json_object_set_new(g, "resilient", json_boolean(fg->resilient));
		json_t *m;
		size_t k;
		json_array_foreach(json_object_get(g, "members"), k, m) {
			uint64_t slot = (uint64_t)json_integer_value(json_object_get(m, "member")), n = 0;
			for (uint32_t b = 0; fg->bucket_slot && b < fg->n_buckets; b++)
				n += fg->bucket_slot[b] == slot;
			json_object_set_new(m, "buckets", J(n));
		}
	}
	json_incref(groups);
	json_decref(all);
	return groups;
}

/* Every ARS group with its mode and counters (SAI's names); [] when none uses ARS. */
static json_t *ars(struct rsw_ctl *c, const struct show_target *t)
{
	(void)t;
	json_t *a = rsw_ars_groups_json(rsw_switch_fib(c->dp->sw));
	return a ? a : json_array();
}

static json_t *config(struct rsw_ctl *c, const struct show_target *t)
{
	(void)t;
	const struct rsw_switch *sw = c->dp->sw;
	const struct rsw_state *st = sw->state;
	json_t *o = json_object();
	json_object_set_new(o, "hostname", json_string(st->sw.hostname));
	json_object_set_new(o, "config", json_string(c->config_path ? c->config_path : ""));
	json_object_set_new(o, "generation", J(sw->generation));
	json_object_set_new(o, "commits", J(sw->commits));
	json_object_set_new(o, "rejects", J(sw->rejects));
	json_object_set_new(o, "ports", J(st->n_ports));
	json_object_set_new(o, "neighbours", J(st->n_neigh));
	json_object_set_new(o, "nexthop_groups", J(st->n_nhg));
	json_object_set_new(o, "routes", J(st->n_routes));
	json_object_set_new(o, "hash_policies", J(st->n_pol));
	json_object_set_new(o, "workers", J(c->dp->n_workers));
	json_object_set_new(o, "reloads", J(c->reloads));
	return o;
}

static json_t *control_stats(struct rsw_ctl *c, const struct show_target *t)
{
	(void)t;
	json_t *o = json_object();
	json_object_set_new(o, "protocol", J(RSW_CTL_PROTOCOL));
	json_object_set_new(o, "requests", J(c->stats.requests));
	json_object_set_new(o, "errors", J(c->stats.errors));
	json_object_set_new(o, "refused_peers", J(c->stats.refused_peers));
	json_object_set_new(o, "oversized", J(c->stats.oversized));
	json_object_set_new(o, "slow_clients", J(c->stats.slow_clients));
	json_object_set_new(o, "too_many_clients", J(c->stats.too_many_clients));
	json_object_set_new(o, "idle_clients", J(c->stats.idle_clients));
	json_object_set_new(o, "hung_up", J(c->stats.hung_up));
	return o;
}

/* In the order the error message lists them. */
static const struct show_target show_targets[] = {
	{.what = "counters", .build = show_counters},
	{.what = "ports", .build = ports},
	{.what = "queues", .build = show_per_port, .port_key = "queues"},
	{.what = "buffers", .build = buffers},
	{.what = "pfc", .build = show_per_port, .port_key = "pfc"},
	/* the PFC_WD_* counters are per queue */
	{.what = "watchdog", .build = show_per_port, .port_key = "queues"},
	{.what = "routes", .build = routes},
	{.what = "ecmp", .build = ecmp},
	{.what = "ars", .build = ars},
	{.what = "config", .build = config},
	{.what = "control", .build = control_stats},
	{.what = "arp", .build = show_neighbours, .family = 4},
	{.what = "ndp", .build = show_neighbours, .family = 6},
};

#define N_SHOW_TARGETS (sizeof(show_targets) / sizeof(show_targets[0]))

static json_t *show(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	const char *what = str_arg(req, "what");
	for (size_t k = 0; what && k < N_SHOW_TARGETS; k++)
		if (!strcmp(what, show_targets[k].what))
			return show_targets[k].build(c, &show_targets[k]);
	int n = snprintf(err, errlen, "show: \"what\" must be one of");
	for (size_t k = 0; k < N_SHOW_TARGETS && n > 0 && (size_t)n < errlen; k++)
		n += snprintf(err + n, errlen - (size_t)n, "%s %s", k ? "," : "",
			      show_targets[k].what);
	return NULL;
}

/* Commits one write; the reply says what changed. */
static json_t *commit_one(struct rsw_ctl *c, const struct rsw_table_write *w, char *err,
			  size_t errlen)
{
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn || rsw_txn_add(txn, w) < 0) {
		rsw_txn_free(txn);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int rc = rsw_switch_commit(c->dp->sw, txn, err, errlen);
	rsw_txn_free(txn);
	return rc < 0 ? NULL : json_pack("{s:I}", "generation", (json_int_t)c->dp->sw->generation);
}

static json_t *set_port(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	const char *name = str_arg(req, "port"), *admin = str_arg(req, "admin");
	const struct rsw_state *st = c->dp->sw->state;
	int p = name ? rsw_state_port_index(st, name) : -1;
	if (p < 0 || !admin || (strcmp(admin, "up") && strcmp(admin, "down"))) {
		snprintf(err, errlen, "set_port: expected {\"port\": NAME, \"admin\": \"up\"|\"down\"}%s%s",
			 name && p < 0 ? "; no port named " : "", name && p < 0 ? name : "");
		return NULL;
	}
	struct rsw_table_write w = {.op = RSW_W_MODIFY, .table = RSW_T_PORT};
	w.u.port = st->ports[p];
	w.u.port.admin_up = !strcmp(admin, "up");
	snprintf(w.u.port.origin, sizeof(w.u.port.origin), "control socket");
	return commit_one(c, &w, err, errlen);
}

static json_t *route(struct rsw_ctl *c, json_t *req, int del, char *err, size_t errlen)
{
	const char *pfx = str_arg(req, "prefix"), *nh = str_arg(req, "nexthop"),
		   *grp = str_arg(req, "nexthop_group");
	int bh = json_is_true(json_object_get(req, "blackhole"));
	struct rsw_table_write w = {.op = del ? RSW_W_DELETE : RSW_W_SET, .table = RSW_T_ROUTE};
	struct rsw_route *r = &w.u.route;
	r->in_port = -1;
	if (!pfx || rsw_prefix_parse(pfx, &r->prefix) < 0) {
		snprintf(err, errlen, "%s: \"prefix\" must be an IPv4 or IPv6 prefix like 10.9.0.0/16",
			 del ? "del_route" : "set_route");
		return NULL;
	}
	if (!del) {
		if ((nh != NULL) + (grp != NULL) + bh != 1) {
			snprintf(err, errlen, "set_route: give exactly one of \"nexthop\", "
				 "\"nexthop_group\", \"blackhole\": true");
			return NULL;
		}
		if (nh && rsw_ip_parse(nh, &r->nexthop) < 0) {
			snprintf(err, errlen, "set_route: \"nexthop\" '%s' is not an IP address", nh);
			return NULL;
		}
		r->target = nh ? RSW_TGT_NEXTHOP : grp ? RSW_TGT_GROUP : RSW_TGT_BLACKHOLE;
		if (grp)
			snprintf(r->group, sizeof(r->group), "%s", grp);
	}
	snprintf(r->origin, sizeof(r->origin), "control socket");
	return commit_one(c, &w, err, errlen);
}

static json_t *set_route(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	return route(c, req, 0, err, errlen);
}

static json_t *del_route(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	return route(c, req, 1, err, errlen);
}

static json_t *pfc_storm(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	const char *name = str_arg(req, "port");
	json_t *prio = json_object_get(req, "priority"), *on = json_object_get(req, "on");
	int p = name ? rsw_state_port_index(c->dp->sw->state, name) : -1;
	if (p < 0 || !json_is_integer(prio) || json_integer_value(prio) < 0 ||
	    json_integer_value(prio) > 7 || !json_is_boolean(on)) {
		snprintf(err, errlen, "pfc_storm: expected {\"port\": NAME, \"priority\": 0-7, "
			 "\"on\": true|false}");
		return NULL;
	}
	uint8_t bit = (uint8_t)(1u << json_integer_value(prio));
	if (json_is_true(on))
		__atomic_fetch_or(&c->dp->ports[p].storm, bit, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&c->dp->ports[p].storm, (uint8_t)~bit, __ATOMIC_RELEASE);
	return json_pack("{s:s, s:i}", "port", name,
			 "storm", __atomic_load_n(&c->dp->ports[p].storm, __ATOMIC_ACQUIRE));
}

static int ip4_arg(json_t *req, const char *k, uint8_t out[4])
{
	struct rsw_ip ip;
	const char *v = str_arg(req, k);
	if (!v || rsw_ip_parse(v, &ip) < 0 || ip.family != 4)
		return -1;
	memcpy(out, ip.a, 4);
	return 0;
}

static int u32_arg(json_t *req, const char *k, uint32_t def, uint32_t max, uint32_t *out)
{
	json_t *v = json_object_get(req, k);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return -1;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

/* What the live tables do with a RoCEv2 packet of the given addresses, ports and QP entering a
 * port: the route, and for an ECMP group the bytes fed to its hash, the hash, the bucket and the
 * member (the same code as the workers). */
static json_t *hash_explain(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	const struct rsw_fib *fib = rsw_switch_fib(c->dp->sw);
	struct rsw_roce_spec spec = {.ttl = 64, .opcode = 0x0A, .dscp = 3, .ecn = 2};
	uint32_t sport, dport, qp;
	const char *in = str_arg(req, "in_port");
	int port = in ? rsw_state_port_index(c->dp->sw->state, in) : 0;
	if (ip4_arg(req, "src", spec.src_ip) < 0 || ip4_arg(req, "dst", spec.dst_ip) < 0 ||
	    u32_arg(req, "sport", 49152, 65535, &sport) < 0 ||
	    u32_arg(req, "dport", 4791, 65535, &dport) < 0 ||
	    u32_arg(req, "qp", 0, 0xFFFFFF, &qp) < 0 || port < 0) {
		snprintf(err, errlen, "hash_explain: expected {\"src\": IPv4, \"dst\": IPv4, "
			 "\"sport\", \"dport\", \"qp\" (numbers), \"in_port\": NAME}");
		return NULL;
	}
	memcpy(spec.dmac, fib->router_mac, 6);
	spec.smac[0] = 0x02;
	spec.sport = (uint16_t)sport;
	spec.dest_qp = qp;
	uint8_t frame[256];
	size_t len = rsw_roce_build(frame, sizeof(frame), &spec);
	frame[36] = (uint8_t)(dport >> 8); /* UDP destination port (the builder writes 4791) */
	frame[37] = (uint8_t)dport;
	if (!len) {
		snprintf(err, errlen, "hash_explain: cannot build the packet");
		return NULL;
	}
	/* the pipeline's trace of the packet, without a TM: nothing is sent */
	struct rsw_pkt_meta m;
	/* ARS decides as for a packet arriving now, and changes nothing (ars_dry) */
	struct rsw_ingress_ctx ictx = {.rnd = 0x9E3779B97F4A7C15ull,
				       .now_ns = rsw_clock_now(&c->dp->clock), .ars_dry = 1};
	struct rsw_pipeline p = {.fib = fib, .ictx = &ictx};
	static _Thread_local struct rsw_trace tr;
	struct rsw_verdict v = rsw_pipeline_frame(&p, (uint16_t)port, frame, (uint32_t)len, NULL,
						  &m, &tr);
	return rsw_trace_explain_json(&tr, &v, fib);
}

void rsw_ctl_keep_run_params(struct rsw_txn *file, const struct rsw_state *running)
{
	for (size_t i = 0; i < rsw_txn_len(file); i++) {
		struct rsw_table_write *w = (struct rsw_table_write *)rsw_txn_at(file, i);
		if (w->table == RSW_T_SWITCH)
			w->u.sw.tm.ecn_seed = running->sw.tm.ecn_seed;
	}
}

/* A whole config file, applied as the difference to the running tables in one transaction.
 * An invalid file, or one that changes the ports, is refused and the running tables stay. The
 * file comes open from the client (SCM_RIGHTS), read with the client's rights: the dataplane
 * opens no path on anyone's behalf. */
static json_t *reload(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	json_t *files = json_object_get(req, "files");
	if (!files) {
		snprintf(err, errlen, "reload: the dataplane opens no file for a client: open the config "
			 "and pass its descriptor with the request (SCM_RIGHTS) and \"files\": [NAME] "
			 "(docs/control.md); `rocesw reload FILE` does this%s",
			 json_object_get(req, "config") ? "; a \"config\" path is not read" : "");
		return NULL;
	}
	if (json_array_size(files) != 1) {
		snprintf(err, errlen, "reload: \"files\" names one config, got %zu",
			 json_array_size(files));
		return NULL;
	}
	const char *name = json_string_value(json_array_get(files, 0));
	struct rsw_txn *file = rsw_txn_new(), *diff = rsw_txn_new();
	struct rsw_state *next = NULL;
	json_t *result = NULL;
	if (!file || !diff) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (rsw_config_compile_fd(c->req_fd[0], name, file, err, errlen) < 0)
		goto out;
	rsw_ctl_keep_run_params(file, c->dp->sw->state);
	if (!(next = rsw_state_from_txn(file, err, errlen)) ||
	    rsw_state_diff(c->dp->sw->state, next, diff, err, errlen) < 0)
		goto out;
	if (rsw_txn_len(diff) && rsw_switch_commit(c->dp->sw, diff, err, errlen) < 0)
		goto out;
	snprintf(c->config_buf, sizeof(c->config_buf), "%s", name);
	c->config_path = c->config_buf;
	c->reloads++;
	result = json_pack("{s:I, s:I}", "generation", (json_int_t)c->dp->sw->generation, "writes",
			   (json_int_t)rsw_txn_len(diff));
out:
	rsw_state_free(next);
	rsw_txn_free(file);
	rsw_txn_free(diff);
	return result;
}

static json_t *hello(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	(void)req;
	(void)err;
	(void)errlen;
	return json_pack("{s:i, s:s, s:I}", "protocol", RSW_CTL_PROTOCOL, "program",
			 "rocesw-dataplane", "generation", (json_int_t)c->dp->sw->generation);
}

/* Every op of the protocol, in the order the unknown-op error lists them. */
/* trace_add {"count": N}: every worker traces its next N frames too, VPP's `trace add`
 * (dp_trace.h); trace_show: what they traced; trace_clear: drop it and stop. */
static int no_workers(const struct rsw_ctl *c, char *err, size_t errlen)
{
	if (c->zone && c->zone->n_workers)
		return 0;
	snprintf(err, errlen, "no workers to trace");
	return 1;
}

static json_t *trace_add(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	json_t *n = json_object_get(req, "count");
	if (no_workers(c, err, errlen))
		return NULL;
	if (!json_is_integer(n) || json_integer_value(n) < 1 ||
	    json_integer_value(n) > RSW_DP_TRACE_MAX) {
		snprintf(err, errlen, "trace_add: expected {\"count\": N}, N from 1 to %d (frames "
			 "each worker traces)", RSW_DP_TRACE_MAX);
		return NULL;
	}
	if (rsw_dp_trace_request(c->zone, (unsigned)json_integer_value(n), 0, err, errlen) < 0)
		return NULL;
	return json_pack("{s:I, s:i}", "count", json_integer_value(n), "workers",
			 (int)c->zone->n_workers);
}

static json_t *trace_show(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	(void)req;
	return no_workers(c, err, errlen) ? NULL : rsw_dp_trace_json(c->zone);
}

static json_t *trace_clear(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	(void)req;
	if (no_workers(c, err, errlen) || rsw_dp_trace_request(c->zone, 0, 1, err, errlen) < 0)
		return NULL;
	return json_pack("{s:i}", "workers", (int)c->zone->n_workers);
}

static const struct ctl_op {
	const char *name;
	json_t *(*handle)(struct rsw_ctl *c, json_t *req, char *err, size_t errlen);
	bool changes;     /* changes the switch: logged with who asked and what became of it */
	bool takes_files; /* reads the files that come with the request */
} ctl_ops[] = {
	{.name = "hello", .handle = hello},
	{.name = "show", .handle = show},
	{.name = "set_port", .handle = set_port, .changes = true},
	{.name = "set_route", .handle = set_route, .changes = true},
	{.name = "del_route", .handle = del_route, .changes = true},
	{.name = "pfc_storm", .handle = pfc_storm, .changes = true},
	{.name = "reload", .handle = reload, .changes = true, .takes_files = true},
	{.name = "hash_explain", .handle = hash_explain},
	/* tracing changes no table, but what the workers do and cost: a change, logged */
	{.name = "trace_add", .handle = trace_add, .changes = true},
	{.name = "trace_show", .handle = trace_show},
	{.name = "trace_clear", .handle = trace_clear, .changes = true},
};

#define N_CTL_OPS (sizeof(ctl_ops) / sizeof(ctl_ops[0]))

static const struct ctl_op *ctl_op(const char *name)
{
	for (size_t k = 0; k < N_CTL_OPS; k++)
		if (!strcmp(name, ctl_ops[k].name))
			return &ctl_ops[k];
	return NULL;
}

int rsw_ctl_op_changes(const char *op)
{
	const struct ctl_op *o = ctl_op(op);
	return o && o->changes;
}

/* "files" names the descriptors that came with the request, one each, in order; only ops that
 * read files take them. */
int rsw_ctl_check_files(struct rsw_ctl *c, const char *op, json_t *req, char *err, size_t errlen)
{
	json_t *files = json_object_get(req, "files"), *f;
	size_t i;
	if (c->req_fd_truncated) {
		snprintf(err, errlen, "more than %d descriptors with one request", RSW_CTL_MAX_FDS);
		return -1;
	}
	if (!files && !c->n_req_fd)
		return 0;
	const struct ctl_op *o = ctl_op(op);
	if (!o || !o->takes_files) {
		snprintf(err, errlen, "%.64s takes no files", op);
		return -1;
	}
	if (!json_is_array(files)) {
		snprintf(err, errlen, "%u descriptors came without \"files\": [NAME, ...] naming them",
			 c->n_req_fd);
		return -1;
	}
	json_array_foreach(files, i, f) {
		const char *n = json_string_value(f);
		size_t len = n ? strlen(n) : 0;
		int ctrl = 0;
		for (size_t k = 0; k < len; k++)
			ctrl |= (unsigned char)n[k] < 0x20 || n[k] == 0x7f;
		if (!len || len > RSW_CTL_MAX_NAME || ctrl || len != json_string_length(f)) {
			snprintf(err, errlen, "\"files\"[%zu]: a name (for messages) of 1-%d bytes "
				 "without control characters", i, RSW_CTL_MAX_NAME);
			return -1;
		}
	}
	if (json_array_size(files) != c->n_req_fd) {
		snprintf(err, errlen, "\"files\" names %zu files but %u descriptors came with the "
			 "request (SCM_RIGHTS): a client passes each file open, the dataplane opens no "
			 "path", json_array_size(files), c->n_req_fd);
		return -1;
	}
	return 0;
}

static json_t *dispatch(struct rsw_ctl *c, const char *op, json_t *req, char *err, size_t errlen)
{
	if (rsw_ctl_check_files(c, op, req, err, errlen) < 0)
		return NULL;
	const struct ctl_op *o = ctl_op(op);
	if (o)
		return o->handle(c, req, err, errlen);
	int n = snprintf(err, errlen, "unknown op '%.64s' (", op);
	for (size_t k = 0; k < N_CTL_OPS && n > 0 && (size_t)n < errlen; k++)
		n += snprintf(err + n, errlen - (size_t)n, "%s%s", ctl_ops[k].name,
			      k + 1 < N_CTL_OPS ? ", " : ")");
	return NULL;
}

/* Every request that changes the switch is logged with who sent it (SO_PEERCRED) and what
 * became of it; the request is logged as JSON, so a name cannot forge a log line. */
void rsw_ctl_log_change(struct rsw_ctl *c, const char *op, json_t *req, json_t *result,
			const char *err)
{
	const struct ctl_op *o = ctl_op(op);
	if (!c->log || !o || !o->changes)
		return;
	char *text = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char line[1024];
	const struct rsw_ctl_peer *p = c->req_peer;
	int n = snprintf(line, sizeof(line), "control: uid %u gid %u pid %d: %.400s: ",
			 p ? p->uid : 0u, p ? p->gid : 0u, p ? p->pid : 0, text ? text : op);
	if (n > 0 && (size_t)n < sizeof(line)) {
		if (result)
			snprintf(line + n, sizeof(line) - (size_t)n, "ok, generation %llu",
				 (unsigned long long)c->dp->sw->generation);
		else
			snprintf(line + n, sizeof(line) - (size_t)n, "refused: %s", err);
	}
	free(text);
	c->log(c->dp, line);
}

json_t *rsw_ctl_handle(struct rsw_ctl *c, const char *op, json_t *req, char *err, size_t errlen)
{
	json_t *result = dispatch(c, op, req, err, errlen);
	rsw_ctl_log_change(c, op, req, result, err);
	return result;
}
