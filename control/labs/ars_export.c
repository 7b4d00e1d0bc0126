/* ARS settings for SONiC and EOS (ars_export.h). SONiC: the tables of its Local ARS design and
 * YANG module sonic-ars (ARS_PROFILE, ARS_OBJECT, ARS_INTERFACES, ARS_NEXTHOPS; sonic-swss
 * orchagent/arsorch.cpp reads the same field names), groups selected by their next hops
 * (ars_nhg_path_selector_mode "nexthop"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ars_export.h"
#include "dataplane/config/config.h"
#include "dataplane/pkt/addr.h"
#include "dataplane/tables/ars.h"

#define YANG_U16 65535u              /* past/future load values are uint16 in sonic-ars */
#define IDLE_MIN 2u                  /* flowlet_idle_time: uint16, range 2..2047 */
#define IDLE_MAX 2047u

int rsw_ars_export_load(const char *path, struct rsw_txn **txn, char *err, size_t errlen)
{
	*txn = rsw_txn_new();
	if (!*txn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	char e[1024];
	if (rsw_config_compile(path, *txn, e, sizeof(e)) < 0) {
		rsw_txn_free(*txn);
		*txn = NULL;
		/* a policy file is no switch config: it cannot name an ARS object */
		if (!strstr(e, "ARS_") && !strstr(e, "ars_object"))
			return 0;
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	for (size_t i = 0; i < rsw_txn_len(*txn); i++) {
		const struct rsw_table_write *w = rsw_txn_at(*txn, i);
		if (w->table == RSW_T_NHG && w->u.nhg.ars.mode != RSW_ARS_OFF)
			return 1;
	}
	rsw_txn_free(*txn);
	*txn = NULL;
	return 0;
}

static const struct rsw_switch_cfg *switch_cfg(const struct rsw_txn *txn)
{
	for (size_t i = 0; i < rsw_txn_len(txn); i++)
		if (rsw_txn_at(txn, i)->table == RSW_T_SWITCH)
			return &rsw_txn_at(txn, i)->u.sw;
	return NULL;
}

/* The name of the port whose neighbour holds ip, or NULL. */
static const char *member_port(const struct rsw_txn *txn, const struct rsw_ip *ip)
{
	int port = -1;
	for (size_t i = 0; i < rsw_txn_len(txn) && port < 0; i++) {
		const struct rsw_table_write *w = rsw_txn_at(txn, i);
		if (w->table == RSW_T_NEIGHBOR && rsw_ip_eq(&w->u.neigh.ip, ip))
			port = w->u.neigh.port;
	}
	for (size_t i = 0, k = 0; i < rsw_txn_len(txn) && port >= 0; i++) {
		const struct rsw_table_write *w = rsw_txn_at(txn, i);
		if (w->table == RSW_T_PORT && (int)k++ == port)
			return w->u.port.name;
	}
	return NULL;
}

static json_t *str(const char *fmt, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), fmt, v);
	return json_string(b);
}

static json_t *table(json_t *db, const char *name)
{
	json_t *t = json_object_get(db, name);
	if (!t) {
		t = json_object();
		json_object_set_new(db, name, t);
	}
	return t;
}

static int profile_sonic(const struct rsw_ars_profile *p, json_t *db, char *why, size_t len)
{
	const struct { const char *key; uint64_t v; } u16[] = {
		{"past_load_min_value", p->load_min}, {"past_load_max_value", p->load_max},
		{"future_load_min_value", p->queue_min}, {"future_load_max_value", p->queue_max},
	};
	json_t *o = json_object();
	json_object_set_new(o, "algorithm", json_string("ewma"));
	json_object_set_new(o, "ars_nhg_path_selector_mode", json_string("nexthop"));
	json_object_set_new(o, "sampling_interval", str("%" PRIu64, p->sample_us));
	for (unsigned i = 0; i < 4; i++) {
		if (u16[i].v > YANG_U16) {
			snprintf(why, len, "ARS_PROFILE|%s %s %" PRIu64 " is above 65535 (uint16 in "
				 "SONiC's sonic-ars YANG model)", p->name, u16[i].key, u16[i].v);
			json_decref(o);
			return -1;
		}
		json_object_set_new(o, u16[i].key, str("%" PRIu64, u16[i].v));
		if (i == 1)
			json_object_set_new(o, "past_load_weight", str("%" PRIu64, p->load_exp));
	}
	json_object_set_new(o, "future_load_weight", str("%" PRIu64, p->queue_exp));
	json_object_set_new(o, "ipv4_enable", json_string(p->ipv4 ? "true" : "false"));
	json_object_set_new(o, "ipv6_enable", json_string(p->ipv6 ? "true" : "false"));
	json_object_set_new(table(db, "ARS_PROFILE"), p->name, o);
	fprintf(stderr, "rocesw hash export: ARS_PROFILE|%s: SONiC has no field for "
		"port_load_weight %u / port_queue_weight %u (how the load and queue bands combine "
		"is the ASIC's) nor random_seed %u: not exported\n", p->name, p->load_weight,
		p->queue_weight, p->seed);
	return 0;
}

static int object_sonic(const struct rsw_ars_obj *o, json_t *db, char *why, size_t len)
{
	if (o->mode != RSW_ARS_FLOWLET_QUALITY && o->mode != RSW_ARS_PER_PACKET_QUALITY) {
		snprintf(why, len, "ARS_OBJECT|%s assign_mode %s: SONiC's assign_mode is "
			 "per_flowlet_quality or per_packet_quality", o->name,
			 rsw_ars_mode_name(o->mode));
		return -1;
	}
	if (o->idle_us < IDLE_MIN || o->idle_us > IDLE_MAX) {
		snprintf(why, len, "ARS_OBJECT|%s flowlet_idle_time %u is outside SONiC's range "
			 "2..2047 us", o->name, o->idle_us);
		return -1;
	}
	json_t *t = table(db, "ARS_OBJECT");
	if (json_object_get(t, o->name))
		return 0;
	json_t *e = json_object();
	json_object_set_new(e, "assign_mode", json_string(rsw_ars_mode_name(o->mode)));
	json_object_set_new(e, "flowlet_idle_time", str("%" PRIu64, o->idle_us));
	json_object_set_new(e, "max_flows", str("%" PRIu64, o->max_flows));
	json_object_set_new(t, o->name, e);
	if (o->match_udp)
		fprintf(stderr, "rocesw hash export: ARS_OBJECT|%s: SONiC's ARS_OBJECT has no "
			"match: match_l4_dst_port %u is not exported (every packet of its groups "
			"takes ARS; SONiC excludes traffic with the ACL action "
			"DISABLE_ARS_FORWARDING instead)\n", o->name, o->match_dport);
	return 0;
}

/* ARS_INTERFACES|PORT and ARS_NEXTHOPS|default|IP naming the group's object; one object per
 * port, as SONiC asks of the interfaces of a group. */
static int members_sonic(const struct rsw_txn *txn, const struct rsw_nhg *g, json_t *db,
			 char *why, size_t len)
{
	json_t *ifs = table(db, "ARS_INTERFACES"), *nhs = table(db, "ARS_NEXTHOPS");
	for (unsigned k = 0; k < g->n_members; k++) {
		char ip[64], key[80];
		rsw_ip_str(&g->members[k].ip, ip, sizeof(ip));
		const char *port = member_port(txn, &g->members[k].ip);
		if (!port) {
			snprintf(why, len, "NEXTHOP_GROUP|%s: next hop %s has no NEIGH entry: its "
				 "interface (ARS_INTERFACES) is unknown", g->name, ip);
			return -1;
		}
		json_t *have = json_object_get(json_object_get(ifs, port), "ars_obj_name");
		if (have && strcmp(json_string_value(have), g->ars.name)) {
			snprintf(why, len, "%s carries groups of ARS objects %s and %s: SONiC asks one "
				 "object per interface", port, json_string_value(have), g->ars.name);
			return -1;
		}
		json_object_set_new(ifs, port, json_pack("{s:s}", "ars_obj_name", g->ars.name));
		snprintf(key, sizeof(key), "default|%s", ip);
		json_object_set_new(nhs, key, json_pack("{s:s}", "ars_obj_name", g->ars.name));
	}
	return 0;
}

int rsw_ars_export_sonic(const struct rsw_txn *txn, json_t *db, char *why, size_t len)
{
	const struct rsw_switch_cfg *sw = switch_cfg(txn);
	if (!sw || profile_sonic(&sw->ars, db, why, len) < 0)
		return -1;
	for (size_t i = 0; i < rsw_txn_len(txn); i++) {
		const struct rsw_table_write *w = rsw_txn_at(txn, i);
		if (w->table != RSW_T_NHG || w->u.nhg.ars.mode == RSW_ARS_OFF)
			continue;
		if (object_sonic(&w->u.nhg.ars, db, why, len) < 0 ||
		    members_sonic(txn, &w->u.nhg, db, why, len) < 0)
			return -1;
	}
	return 0;
}

void rsw_ars_export_eos(const struct rsw_txn *txn, FILE *out)
{
	const struct rsw_switch_cfg *sw = switch_cfg(txn);
	if (!sw)
		return;
	const struct rsw_ars_profile *p = &sw->ars;
	fprintf(out, "! ARS: EOS has Dynamic Load Balancing (DLB) on ECMP groups (EOS 4.30.2F), "
		"measuring\n! each member's bytes sent and packets queued, as ARS does. No DLB command "
		"is\n! written: its syntax is not checked against a public Arista document. Set these\n"
		"! values with the switch's DLB configuration (docs/ars.md, \"Export\"):\n");
	fprintf(out, "! ars profile %s sampling_interval_us %u load_exponent %u queue_exponent %u\n",
		p->name, p->sample_us, p->load_exp, p->queue_exp);
	fprintf(out, "! ars profile %s load_bytes %" PRIu64 "-%" PRIu64 " queue_bytes %" PRIu64
		"-%" PRIu64 " weights %u/%u seed %u\n", p->name, p->load_min, p->load_max,
		p->queue_min, p->queue_max, p->load_weight, p->queue_weight, p->seed);
	for (size_t i = 0; i < rsw_txn_len(txn); i++) {
		const struct rsw_table_write *w = rsw_txn_at(txn, i);
		if (w->table != RSW_T_NHG || w->u.nhg.ars.mode == RSW_ARS_OFF)
			continue;
		const struct rsw_ars_obj *o = &w->u.nhg.ars;
		fprintf(out, "! ars group %s object %s mode %s idle_time_us %u max_flows %u",
			w->u.nhg.name, o->name, rsw_ars_mode_name(o->mode), o->idle_us,
			o->max_flows);
		if (o->match_udp)
			fprintf(out, " udp_dst_port %u", o->match_dport);
		fprintf(out, " members");
		for (unsigned k = 0; k < w->u.nhg.n_members; k++) {
			const char *port = member_port(txn, &w->u.nhg.members[k].ip);
			fprintf(out, " %s", port ? port : "?");
		}
		fprintf(out, "\n");
	}
}
