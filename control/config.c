/* Tables (SONiC names where SONiC has one): DEVICE_METADATA, PORT, CABLE_LENGTH, DSCP_TO_TC_MAP,
 * TC_TO_PRIORITY_GROUP_MAP, PORT_QOS_MAP, SWITCH_HASH, HASH_POLICY, NEIGH, NEXTHOP_GROUP,
 * STATIC_ROUTE, POLICY_ROUTE, INTERFACE. Each entry becomes one table write carrying "FILE:LINE" as origin. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "dataplane/hash/hash_algo.h"
#include "config_cc.h"
#include "config_roceswd.h"



static const char *const known_tables[] = {
	"DEVICE_METADATA", "PORT", "CABLE_LENGTH", "DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP",
	"PORT_QOS_MAP", "SWITCH_HASH", "HASH_POLICY", "NEIGH", "NEXTHOP_GROUP", "STATIC_ROUTE",
	"POLICY_ROUTE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "WRED_PROFILE",
	"SCHEDULER", "QUEUE", "PFC_WD", "CLASSIFIER", "ROCESWD", "INTERFACE", NULL,
};

void rsw_cc_origin(struct cc *c, const yaml_node_t *n, char *out)
{
	snprintf(out, RSW_ORIGIN_MAX, "%s:%u", c->y.file, ydoc_line(n));
}

int rsw_cc_add(struct cc *c, struct rsw_table_write *w)
{
	if (rsw_txn_add(c->txn, w) < 0) {
		snprintf(c->y.err, c->y.errlen, "out of memory");
		return -1;
	}
	return 0;
}

int rsw_cc_want_map(struct cc *c, yaml_node_t *n, const char *key)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return ydoc_error(&c->y, n, key, "expected a mapping");
	return 0;
}

int rsw_cc_get_u64(struct cc *c, yaml_node_t *v, const char *key, unsigned long long lo,
		   unsigned long long hi, unsigned long long *out)
{
	const char *s = ydoc_str(v);
	char *end;
	if (!s || !*s)
		return ydoc_error(&c->y, v, key, "expected an integer %llu..%llu", lo, hi);
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end || s[0] == '-' || x < lo || x > hi)
		return ydoc_error(&c->y, v, key, "expected an integer %llu..%llu, got '%s'", lo, hi, s);
	*out = x;
	return 0;
}

int rsw_cc_get_bool(struct cc *c, yaml_node_t *v, const char *key, int *out)
{
	const char *s = ydoc_str(v);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")))
		*out = 1;
	else if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")))
		*out = 0;
	else
		return ydoc_error(&c->y, v, key, "expected true or false, got '%s'", s ? s : "?");
	return 0;
}

int rsw_cc_get_name(struct cc *c, yaml_node_t *v, const char *key, char *out)
{
	const char *s = ydoc_str(v);
	if (!s || !*s || strlen(s) >= RSW_NAME_MAX)
		return ydoc_error(&c->y, v, key, "expected a name of 1..%d characters",
				  RSW_NAME_MAX - 1);
	strcpy(out, s);
	return 0;
}

int rsw_cc_port_by_name(struct cc *c, yaml_node_t *at, const char *key, const char *name)
{
	for (unsigned i = 0; i < c->n_ports; i++)
		if (!strcmp(c->ports[i].name, name))
			return (int)i;
	return ydoc_error(&c->y, at, key, "no port named '%s' in PORT", name);
}

/* Comma-separated priorities ("3,4") → bit mask. */
int rsw_cc_get_prio_list(struct cc *c, yaml_node_t *v, const char *key, uint8_t *mask)
{
	const char *s = ydoc_str(v);
	*mask = 0;
	if (!s)
		return ydoc_error(&c->y, v, key, "expected a list of priorities like \"3,4\"");
	if (!*s)
		return 0;
	const char *p = s;
	while (*p) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p || x < 0 || x > 7 || (*end && *end != ','))
			return ydoc_error(&c->y, v, key,
					  "expected priorities 0..7 separated by commas, got '%s'", s);
		*mask |= (uint8_t)(1u << x);
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_device(struct cc *c, yaml_node_t *t)
{
	c->sw.dmac_check = 1;
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "DEVICE_METADATA") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		if (!ydoc_str(k) || strcmp(ydoc_str(k), "localhost"))
			return ydoc_error(&c->y, k, "DEVICE_METADATA", "expected the one key 'localhost'");
		if (rsw_cc_want_map(c, v, "DEVICE_METADATA|localhost") < 0)
			return -1;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			const char *val = ydoc_str(fv);
			if (!strcmp(name, "hostname")) {
				if (rsw_cc_get_name(c, fv, "DEVICE_METADATA|localhost.hostname", c->sw.hostname) < 0)
					return -1;
			} else if (!strcmp(name, "mac")) {
				if (!val || rsw_mac_parse(val, c->sw.router_mac) < 0)
					return ydoc_error(&c->y, fv, "DEVICE_METADATA|localhost.mac",
							  "expected a MAC address like 02:00:00:00:00:01");
			} else if (!strcmp(name, "dmac_check")) {
				if (val && !strcmp(val, "strict"))
					c->sw.dmac_check = 1;
				else if (val && !strcmp(val, "any"))
					c->sw.dmac_check = 0;
				else
					return ydoc_error(&c->y, fv, "DEVICE_METADATA|localhost.dmac_check",
							  "expected strict or any");
			} else if (!strcmp(name, "type") || !strcmp(name, "platform") ||
				   !strcmp(name, "hwsku")) {
				/* informational, as in SONiC */
			} else {
				return ydoc_error(&c->y, fk, "DEVICE_METADATA|localhost",
						  "unknown field '%s' (expected hostname, mac, type, "
						  "platform, hwsku, dmac_check)", name);
			}
		}
	}
	return 0;
}

static int parse_ports(struct cc *c, yaml_node_t *t)
{
	if (!t)
		return ydoc_error(&c->y, ydoc_root(&c->y), "PORT", "missing; a switch needs ports");
	if (rsw_cc_want_map(c, t, "PORT") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		if (c->n_ports == RSW_MAX_PORTS)
			return ydoc_error(&c->y, k, "PORT", "more than %d ports", RSW_MAX_PORTS);
		struct rsw_port_cfg *p = &c->ports[c->n_ports];
		memset(p, 0, sizeof(*p));
		if (rsw_cc_get_name(c, k, "PORT", p->name) < 0)
			return -1;
		for (unsigned i = 0; i < c->n_ports; i++)
			if (!strcmp(c->ports[i].name, p->name))
				return ydoc_error(&c->y, k, "PORT", "port '%s' defined twice", p->name);
		char key[96];
		snprintf(key, sizeof(key), "PORT|%s", p->name);
		if (rsw_cc_want_map(c, v, key) < 0)
			return -1;
		rsw_cc_origin(c, k, p->origin);
		p->admin_up = 1;
		p->mtu = 9100;
		p->cable_length_m = 5;
		strcpy(p->dscp_to_tc_map, "AZURE");
		strcpy(p->tc_to_pg_map, "AZURE");
		p->pfc_enable = 0x18; /* PORT_QOS_MAP default of a SONiC RoCE switch: "3,4" */
		int have_speed = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			const char *val = ydoc_str(fv);
			char fkey[128];
			unsigned long long x;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "speed") && val && !strcmp(val, "line")) {
				/* unshaped; pause and headroom arithmetic use 400G */
				p->speed_mbps = 400000;
				p->tm.unshaped = 1;
				have_speed = 1;
			} else if (!strcmp(name, "speed")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, 1600000, &x) < 0)
					return -1;
				p->speed_mbps = (uint32_t)x;
				have_speed = 1;
			} else if (!strcmp(name, "mtu")) {
				if (rsw_cc_get_u64(c, fv, fkey, 68, 9216, &x) < 0)
					return -1;
				p->mtu = (uint32_t)x;
			} else if (!strcmp(name, "role")) {
				p->role = (uint8_t)rsw_port_role_from_name(val ? val : "");
				if (p->role == RSW_ROLE_COUNT)
					return ydoc_error(&c->y, fv, fkey,
							  "expected host, uplink or downlink, got '%s'",
							  val ? val : "?");
			} else if (!strcmp(name, "devargs")) {
				if (!val || strlen(val) >= RSW_DEVARGS_MAX)
					return ydoc_error(&c->y, fv, fkey,
							  "expected DPDK device arguments like "
							  "net_af_packet0,iface=veth0");
				strcpy(p->devargs, val);
			} else if (!strcmp(name, "mac")) {
				if (!val || rsw_mac_parse(val, p->mac) < 0)
					return ydoc_error(&c->y, fv, fkey,
							  "expected a MAC address like 02:00:00:00:00:01");
				p->has_mac = 1;
			} else if (!strcmp(name, "admin_status")) {
				if (val && !strcmp(val, "up"))
					p->admin_up = 1;
				else if (val && !strcmp(val, "down"))
					p->admin_up = 0;
				else
					return ydoc_error(&c->y, fv, fkey, "expected up or down");
			} else if (!strcmp(name, "alias")) {
				if (rsw_cc_get_name(c, fv, fkey, p->alias) < 0)
					return -1;
			} else if (!strcmp(name, "lanes") || !strcmp(name, "index") ||
				   !strcmp(name, "fec") || !strcmp(name, "description")) {
				/* hardware detail with no meaning for a software switch */
			} else {
				return ydoc_error(&c->y, fk, key,
						  "unknown field '%s' (expected speed, role, devargs, mtu, "
						  "mac, admin_status, alias)", name);
			}
		}
		if (!have_speed)
			return ydoc_error(&c->y, k, key, "missing 'speed' (Mb/s, e.g. 400000, or line)");
		c->n_ports++;
	}
	return 0;
}

/* CABLE_LENGTH: { AZURE: { Ethernet0: 5m } } */
static int parse_cable(struct cc *c, yaml_node_t *t)
{
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "CABLE_LENGTH") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *v = ydoc_node(&c->y, pr->value);
		if (rsw_cc_want_map(c, v, "CABLE_LENGTH|AZURE") < 0)
			return -1;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *pn = ydoc_str(fk), *val = ydoc_str(fv);
			int pi = rsw_cc_port_by_name(c, fk, "CABLE_LENGTH", pn ? pn : "?");
			if (pi < 0)
				return -1;
			char *end;
			long m = val ? strtol(val, &end, 10) : -1;
			if (!val || m < 0 || m > 100000 || (strcmp(end, "m") && *end))
				return ydoc_error(&c->y, fv, "CABLE_LENGTH",
						  "expected a length in metres like 5m, got '%s'",
						  val ? val : "?");
			c->ports[pi].cable_length_m = (uint32_t)m;
		}
	}
	return 0;
}

static int parse_qos_maps(struct cc *c, yaml_node_t *t, unsigned kind)
{
	const char *tname = kind == RSW_QOS_DSCP_TO_TC ? "DSCP_TO_TC_MAP" : "TC_TO_PRIORITY_GROUP_MAP";
	unsigned n_keys = kind == RSW_QOS_DSCP_TO_TC ? 64 : 8;
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, tname) < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_QOS_MAP};
		struct rsw_qos_map *q = &w.u.qos;
		q->kind = (uint8_t)kind;
		if (rsw_cc_get_name(c, k, tname, q->name) < 0)
			return -1;
		char key[96];
		snprintf(key, sizeof(key), "%s|%s", tname, q->name);
		if (rsw_cc_want_map(c, v, key) < 0)
			return -1;
		rsw_cc_origin(c, k, q->origin);
		/* SONiC: values not listed map to 0 */
		memset(q->map, 0, sizeof(q->map));
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			unsigned long long from, to;
			if (rsw_cc_get_u64(c, fk, key, 0, n_keys - 1, &from) < 0 ||
			    rsw_cc_get_u64(c, fv, key, 0, 7, &to) < 0)
				return -1;
			q->map[from] = (uint8_t)to;
		}
		if (rsw_cc_add(c, &w) < 0)
			return -1;
	}
	return 0;
}

static int parse_port_qos(struct cc *c, yaml_node_t *t)
{
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "PORT_QOS_MAP") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		const char *pn = ydoc_str(k);
		int pi = rsw_cc_port_by_name(c, k, "PORT_QOS_MAP", pn ? pn : "?");
		if (pi < 0)
			return -1;
		char key[96];
		snprintf(key, sizeof(key), "PORT_QOS_MAP|%s", pn);
		if (rsw_cc_want_map(c, v, key) < 0)
			return -1;
		struct rsw_port_cfg *p = &c->ports[pi];
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			char fkey[128];
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "dscp_to_tc_map")) {
				if (rsw_cc_get_name(c, fv, fkey, p->dscp_to_tc_map) < 0)
					return -1;
			} else if (!strcmp(name, "tc_to_pg_map")) {
				if (rsw_cc_get_name(c, fv, fkey, p->tc_to_pg_map) < 0)
					return -1;
			} else if (!strcmp(name, "pfc_enable")) {
				if (rsw_cc_get_prio_list(c, fv, fkey, &p->pfc_enable) < 0)
					return -1;
			} else if (!strcmp(name, "pfcwd_sw_enable")) {
				if (rsw_cc_get_prio_list(c, fv, fkey, &p->tm.pfcwd_enable) < 0)
					return -1;
				p->tm.pfcwd_set = 1;
			} else if (!strcmp(name, "pfc_pause_time")) {
				unsigned long long x;
				if (rsw_cc_get_u64(c, fv, fkey, 1, 65535, &x) < 0)
					return -1;
				p->tm.pfc_pause_quanta = (uint16_t)x;
			} else if (!strcmp(name, "tc_to_queue_map") ||
				   !strcmp(name, "pfc_to_queue_map") || !strcmp(name, "scheduler") ||
				   !strcmp(name, "pfc_to_pg_map")) {
				/* identity maps: TC = queue = PFC priority = PG for lossless traffic */
			} else {
				return ydoc_error(&c->y, fk, key,
						  "unknown field '%s' (expected dscp_to_tc_map, "
						  "tc_to_pg_map, pfc_enable, pfcwd_sw_enable, pfc_pause_time)",
						  name);
			}
		}
	}
	return 0;
}

static int parse_field_list(struct cc *c, yaml_node_t *v, const char *key, uint16_t *fields)
{
	*fields = 0;
	if (!v || v->type != YAML_SEQUENCE_NODE)
		return ydoc_error(&c->y, v, key, "expected a list of hash fields like [SRC_IP, DST_IP]");
	YDOC_FOREACH_ITEM(&c->y, v, it) {
		yaml_node_t *n = ydoc_node(&c->y, *it);
		const char *s = ydoc_str(n);
		unsigned f = rsw_hash_field_from_name(s ? s : "");
		if (f == RSW_HF_COUNT)
			return ydoc_error(&c->y, n, key,
					  "unknown hash field '%s' (expected SRC_IP, DST_IP, "
					  "IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT, IN_PORT, "
					  "IPV6_FLOW_LABEL, RDMA_BTH_OPCODE, RDMA_BTH_DEST_QP)",
					  s ? s : "?");
		*fields |= (uint16_t)(1u << f);
	}
	return 0;
}

static int parse_algo(struct cc *c, yaml_node_t *v, const char *key, uint8_t *algo)
{
	const char *s = ydoc_str(v);
	unsigned a = rsw_hash_algo_from_name(s ? s : "");
	if (a == RSW_HASH_ALGO_COUNT)
		return ydoc_error(&c->y, v, key,
				  "unknown algorithm '%s' (expected CRC, CRC_CCITT, CRC_32LO, "
				  "CRC_32HI, XOR, CRC_XOR, JENKINS_LO, JENKINS_HI, RANDOM)",
				  s ? s : "?");
	*algo = (uint8_t)a;
	return 0;
}

static int parse_udf(struct cc *c, yaml_node_t *v, const char *key, struct rsw_udf *u)
{
	unsigned long long x;
	int have_len = 0, have_off = 0, have_base = 0;

	if (rsw_cc_want_map(c, v, key) < 0)
		return -1;
	memset(u, 0, sizeof(*u));
	u->match_ip_protocol = -1;
	u->match_l4_dst_port = -1;
	memset(u->mask, 0xFF, sizeof(u->mask));
	const char *mask_s = NULL;
	yaml_node_t *mask_n = NULL;
	YDOC_FOREACH_PAIR(&c->y, v, f) {
		yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
		const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
		char fkey[256];
		snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
		if (!strcmp(name, "base")) {
			const char *s = ydoc_str(fv);
			u->base = (uint8_t)rsw_udf_base_from_name(s ? s : "");
			if (u->base > RSW_UDF_L4)
				return ydoc_error(&c->y, fv, fkey, "expected L2, L3 or L4");
			have_base = 1;
		} else if (!strcmp(name, "offset")) {
			if (rsw_cc_get_u64(c, fv, fkey, 0, 255, &x) < 0)
				return -1;
			u->offset = (uint16_t)x;
			have_off = 1;
		} else if (!strcmp(name, "length")) {
			if (rsw_cc_get_u64(c, fv, fkey, 1, RSW_UDF_MAX_LEN, &x) < 0)
				return -1;
			u->length = (uint8_t)x;
			have_len = 1;
		} else if (!strcmp(name, "mask")) {
			mask_s = ydoc_str(fv);
			mask_n = fv;
		} else if (!strcmp(name, "match")) {
			if (rsw_cc_want_map(c, fv, fkey) < 0)
				return -1;
			YDOC_FOREACH_PAIR(&c->y, fv, m) {
				yaml_node_t *mk = ydoc_node(&c->y, m->key), *mv = ydoc_node(&c->y, m->value);
				const char *mn = ydoc_str(mk) ? ydoc_str(mk) : "?";
				char mkey[320];
				snprintf(mkey, sizeof(mkey), "%s.%s", fkey, mn);
				if (!strcmp(mn, "ip_protocol")) {
					if (rsw_cc_get_u64(c, mv, mkey, 0, 255, &x) < 0)
						return -1;
					u->match_ip_protocol = (int32_t)x;
				} else if (!strcmp(mn, "l4_dst_port")) {
					if (rsw_cc_get_u64(c, mv, mkey, 0, 65535, &x) < 0)
						return -1;
					u->match_l4_dst_port = (int32_t)x;
				} else {
					return ydoc_error(&c->y, mk, fkey,
							  "unknown match '%s' (expected ip_protocol, "
							  "l4_dst_port)", mn);
				}
			}
		} else {
			return ydoc_error(&c->y, fk, key,
					  "unknown field '%s' (expected base, offset, length, mask, match)",
					  name);
		}
	}
	if (!have_base || !have_off || !have_len)
		return ydoc_error(&c->y, v, key, "a UDF needs base, offset and length");
	if (mask_s) {
		/* hex, as wide as the field: "0xffffff" for 3 bytes */
		char *end;
		errno = 0;
		unsigned long long m = strtoull(mask_s, &end, 16);
		unsigned bits = u->length * 8u;
		if (errno || *end || strncmp(mask_s, "0x", 2) || (bits < 64 && m >> bits))
			return ydoc_error(&c->y, mask_n, key,
					  "mask: expected a hex value like 0xffffff no wider than "
					  "length (%u bytes), got '%s'", u->length, mask_s);
		for (unsigned i = 0; i < u->length; i++)
			u->mask[i] = (uint8_t)(m >> (8 * (u->length - 1 - i)));
	}
	return 0;
}

static int parse_policy_body(struct cc *c, yaml_node_t *v, const char *key,
			     struct rsw_hash_policy *pol, int sonic_names)
{
	unsigned long long x;
	int have_fields = 0;
	const char *f_fields = sonic_names ? "ecmp_hash" : "fields";
	const char *f_algo = sonic_names ? "ecmp_hash_algorithm" : "algorithm";
	const char *f_seed = sonic_names ? "ecmp_hash_seed" : "seed";
	const char *f_off = sonic_names ? "ecmp_hash_offset" : "offset";
	const char *f_udf = sonic_names ? "ecmp_hash_udf" : "udf";

	if (rsw_cc_want_map(c, v, key) < 0)
		return -1;
	memset(pol, 0, sizeof(*pol));
	YDOC_FOREACH_PAIR(&c->y, v, f) {
		yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
		const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
		char fkey[128];
		snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
		if (!strcmp(name, f_fields)) {
			if (parse_field_list(c, fv, fkey, &pol->fields) < 0)
				return -1;
			have_fields = 1;
		} else if (!strcmp(name, f_algo)) {
			if (parse_algo(c, fv, fkey, &pol->algo) < 0)
				return -1;
		} else if (!strcmp(name, f_seed)) {
			if (rsw_cc_get_u64(c, fv, fkey, 0, 0xFFFFFFFFull, &x) < 0)
				return -1;
			pol->seed = (uint32_t)x;
		} else if (!strcmp(name, f_off)) {
			if (rsw_cc_get_u64(c, fv, fkey, 0, 15, &x) < 0)
				return -1;
			pol->offset = (uint8_t)x;
		} else if (!strcmp(name, f_udf)) {
			if (!fv || fv->type != YAML_SEQUENCE_NODE)
				return ydoc_error(&c->y, fv, fkey, "expected a list of UDFs");
			YDOC_FOREACH_ITEM(&c->y, fv, it) {
				if (pol->n_udf == RSW_UDF_MAX)
					return ydoc_error(&c->y, fv, fkey, "more than %d UDFs", RSW_UDF_MAX);
				char ukey[200];
				snprintf(ukey, sizeof(ukey), "%s[%u]", fkey, pol->n_udf);
				if (parse_udf(c, ydoc_node(&c->y, *it), ukey, &pol->udf[pol->n_udf]) < 0)
					return -1;
				pol->n_udf++;
			}
		} else if (sonic_names && (!strcmp(name, "lag_hash") ||
					   !strcmp(name, "lag_hash_algorithm"))) {
			/* LAGs are not modelled */
		} else {
			return ydoc_error(&c->y, fk, key, "unknown field '%s' (expected %s, %s, %s, %s, %s)",
					  name, f_fields, f_algo, f_seed, f_off, f_udf);
		}
	}
	if (!have_fields && pol->n_udf == 0)
		return ydoc_error(&c->y, v, key, "a hash policy needs '%s' or '%s'", f_fields, f_udf);
	return 0;
}

static int parse_hash(struct cc *c, yaml_node_t *swhash, yaml_node_t *pols)
{
	if (swhash) {
		if (rsw_cc_want_map(c, swhash, "SWITCH_HASH") < 0)
			return -1;
		YDOC_FOREACH_PAIR(&c->y, swhash, pr) {
			yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
			if (!ydoc_str(k) || strcmp(ydoc_str(k), "GLOBAL"))
				return ydoc_error(&c->y, k, "SWITCH_HASH", "expected the one key 'GLOBAL'");
			struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_HASH_POLICY};
			strcpy(w.u.policy.name, RSW_DEFAULT_POLICY);
			rsw_cc_origin(c, k, w.u.policy.origin);
			if (parse_policy_body(c, v, "SWITCH_HASH|GLOBAL", &w.u.policy.pol, 1) < 0 ||
			    rsw_cc_add(c, &w) < 0)
				return -1;
		}
	}
	if (!pols)
		return 0;
	if (rsw_cc_want_map(c, pols, "HASH_POLICY") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, pols, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_HASH_POLICY};
		if (rsw_cc_get_name(c, k, "HASH_POLICY", w.u.policy.name) < 0)
			return -1;
		char key[96];
		snprintf(key, sizeof(key), "HASH_POLICY|%s", w.u.policy.name);
		rsw_cc_origin(c, k, w.u.policy.origin);
		if (parse_policy_body(c, v, key, &w.u.policy.pol, 0) < 0 || rsw_cc_add(c, &w) < 0)
			return -1;
	}
	return 0;
}

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

static int parse_neigh(struct cc *c, yaml_node_t *t)
{
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "NEIGH") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_INSERT, .table = RSW_T_NEIGHBOR};
		struct rsw_neighbor *n = &w.u.neigh;
		char ip[64];
		int port;
		if (split_key(c, k, "NEIGH", &port, ip, sizeof(ip)) < 0)
			return -1;
		n->port = (uint16_t)port;
		if (rsw_ip_parse(ip, &n->ip) < 0)
			return ydoc_error(&c->y, k, "NEIGH", "'%s' is not an IPv4 or IPv6 address", ip);
		char key[128];
		snprintf(key, sizeof(key), "NEIGH|%s", ydoc_str(k));
		if (rsw_cc_want_map(c, v, key) < 0)
			return -1;
		rsw_cc_origin(c, k, n->origin);
		int have_mac = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			const char *val = ydoc_str(fv);
			if (!strcmp(name, "neigh")) {
				if (!val || rsw_mac_parse(val, n->mac) < 0)
					return ydoc_error(&c->y, fv, key,
							  "neigh: expected a MAC address like "
							  "02:00:00:00:00:01");
				have_mac = 1;
			} else if (!strcmp(name, "family")) {
				const char *want = n->ip.family == 4 ? "IPv4" : "IPv6";
				if (!val || strcmp(val, want))
					return ydoc_error(&c->y, fv, key, "family: expected %s for this address",
							  want);
			} else {
				return ydoc_error(&c->y, fk, key,
						  "unknown field '%s' (expected neigh, family)", name);
			}
		}
		if (!have_mac)
			return ydoc_error(&c->y, k, key, "missing 'neigh' (the neighbour's MAC)");
		if (rsw_cc_add(c, &w) < 0)
			return -1;
	}
	return 0;
}

/* "10.0.0.1,10.0.0.3" → members. */
static int parse_members(struct cc *c, yaml_node_t *v, const char *key, struct rsw_nhg *g)
{
	const char *s = ydoc_str(v);
	char buf[8192];
	if (!s || strlen(s) >= sizeof(buf))
		return ydoc_error(&c->y, v, key, "expected next hops like \"10.0.0.1,10.0.0.3\"");
	strcpy(buf, s);
	g->n_members = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (g->n_members == RSW_ECMP_MAX_MEMBERS)
			return ydoc_error(&c->y, v, key, "more than %d next hops", RSW_ECMP_MAX_MEMBERS);
		if (rsw_ip_parse(tok, &g->members[g->n_members].ip) < 0)
			return ydoc_error(&c->y, v, key, "'%s' is not an IPv4 or IPv6 address", tok);
		g->n_members++;
	}
	if (g->n_members == 0)
		return ydoc_error(&c->y, v, key, "expected at least one next hop");
	return 0;
}

static int parse_nhg(struct cc *c, yaml_node_t *t)
{
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "NEXTHOP_GROUP") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write *w = calloc(1, sizeof(*w));
		if (!w)
			return ydoc_error(&c->y, k, "NEXTHOP_GROUP", "out of memory");
		w->op = RSW_W_INSERT;
		w->table = RSW_T_NHG;
		struct rsw_nhg *g = &w->u.nhg;
		int rc = -1, have_nh = 0;
		char key[96];
		if (rsw_cc_get_name(c, k, "NEXTHOP_GROUP", g->name) < 0)
			goto out;
		snprintf(key, sizeof(key), "NEXTHOP_GROUP|%s", g->name);
		if (rsw_cc_want_map(c, v, key) < 0)
			goto out;
		rsw_cc_origin(c, k, g->origin);
		strcpy(g->policy, RSW_DEFAULT_POLICY);
		g->n_buckets = RSW_DEFAULT_BUCKETS;
		g->resilient = 1;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			char fkey[128];
			unsigned long long x;
			int b;
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "nexthop")) {
				if (parse_members(c, fv, fkey, g) < 0)
					goto out;
				have_nh = 1;
			} else if (!strcmp(name, "hash_policy")) {
				if (rsw_cc_get_name(c, fv, fkey, g->policy) < 0)
					goto out;
			} else if (!strcmp(name, "buckets")) {
				if (rsw_cc_get_u64(c, fv, fkey, 1, RSW_RBT_MAX_BUCKETS, &x) < 0)
					goto out;
				g->n_buckets = (uint32_t)x;
			} else if (!strcmp(name, "resilient")) {
				if (rsw_cc_get_bool(c, fv, fkey, &b) < 0)
					goto out;
				g->resilient = (uint8_t)b;
			} else {
				ydoc_error(&c->y, fk, key,
					   "unknown field '%s' (expected nexthop, hash_policy, buckets, "
					   "resilient)", name);
				goto out;
			}
		}
		if (!have_nh) {
			ydoc_error(&c->y, k, key, "missing 'nexthop'");
			goto out;
		}
		rc = rsw_cc_add(c, w);
out:
		free(w);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* A STATIC_ROUTE with several next hops gets a group of its own, named after them. */
static int implicit_group(struct cc *c, yaml_node_t *at, const char *key, char *name_out)
{
	struct rsw_table_write *w = calloc(1, sizeof(*w));
	if (!w)
		return ydoc_error(&c->y, at, key, "out of memory");
	w->op = RSW_W_SET;
	w->table = RSW_T_NHG;
	struct rsw_nhg *g = &w->u.nhg;
	int rc = -1;
	if (parse_members(c, at, key, g) < 0)
		goto out;
	snprintf(g->name, RSW_NAME_MAX, "ecmp%u", ydoc_line(at));
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

static int parse_routes(struct cc *c, yaml_node_t *t, int pbr)
{
	const char *tname = pbr ? "POLICY_ROUTE" : "STATIC_ROUTE";
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, tname) < 0)
		return -1;
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
				return -1;
			r->in_port = port;
		} else {
			if (!ks || strlen(ks) >= sizeof(pfx))
				return ydoc_error(&c->y, k, tname, "expected a prefix like 10.1.0.0/16");
			strcpy(pfx, ks);
		}
		int prc = rsw_prefix_parse(pfx, &r->prefix);
		if (prc == -2)
			return ydoc_error(&c->y, k, tname, "'%s' has host bits set", pfx);
		if (prc < 0)
			return ydoc_error(&c->y, k, tname,
					  "'%s' is not a prefix (expected like 10.1.0.0/16 or 2001:db8::/32)",
					  pfx);
		char key[160];
		snprintf(key, sizeof(key), "%s|%s", tname, ks);
		if (rsw_cc_want_map(c, v, key) < 0)
			return -1;
		rsw_cc_origin(c, k, r->origin);
		int n_targets = 0;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			const char *val = ydoc_str(fv);
			char fkey[200];
			snprintf(fkey, sizeof(fkey), "%s.%s", key, name);
			if (!strcmp(name, "nexthop")) {
				n_targets++;
				if (val && strchr(val, ',')) {
					r->target = RSW_TGT_GROUP;
					if (implicit_group(c, fv, fkey, r->group) < 0)
						return -1;
				} else {
					r->target = RSW_TGT_NEXTHOP;
					if (!val || rsw_ip_parse(val, &r->nexthop) < 0)
						return ydoc_error(&c->y, fv, fkey,
								  "expected a next-hop address");
				}
			} else if (!strcmp(name, "nexthop_group")) {
				n_targets++;
				r->target = RSW_TGT_GROUP;
				if (rsw_cc_get_name(c, fv, fkey, r->group) < 0)
					return -1;
			} else if (!strcmp(name, "blackhole")) {
				int b;
				if (rsw_cc_get_bool(c, fv, fkey, &b) < 0)
					return -1;
				if (b) {
					n_targets++;
					r->target = RSW_TGT_BLACKHOLE;
				}
			} else if (pbr && !strcmp(name, "fallback")) {
				int b;
				if (rsw_cc_get_bool(c, fv, fkey, &b) < 0)
					return -1;
				r->keep_when_down = (uint8_t)!b;
			} else if (!strcmp(name, "ifname") || !strcmp(name, "distance") ||
				   !strcmp(name, "advertise")) {
				/* SONiC fields with no effect here: the neighbour gives the port */
			} else {
				return ydoc_error(&c->y, fk, key,
						  "unknown field '%s' (expected nexthop, nexthop_group, "
						  "blackhole%s)", name, pbr ? ", fallback" : "");
			}
		}
		if (n_targets != 1)
			return ydoc_error(&c->y, k, key,
					  "expected exactly one of nexthop, nexthop_group, blackhole: true");
		if (rsw_cc_add(c, &w) < 0)
			return -1;
	}
	return 0;
}

/* Edit distance of two short names (0..UINT_MAX if either is long). */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[40];
	if (la >= 40 || lb >= 40)
		return ~0u;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* An unknown top-level key is not quoted: the file may be something else than a config (a
 * password file named by mistake or on purpose), and its first line would be the key. A close
 * miss of a table name is named instead, which says nothing the table list does not. */
static int unknown_table(struct cc *c, yaml_node_t *k, const char *name)
{
	const char *near = NULL;
	for (int i = 0; name && known_tables[i] && !near; i++)
		if (edit_distance(name, known_tables[i]) <= 2)
			near = known_tables[i];
	return ydoc_error(&c->y, k, "(top level)",
			  "unknown table%s%s%s (expected DEVICE_METADATA, PORT, CABLE_LENGTH, "
			  "DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, PORT_QOS_MAP, SWITCH_HASH, "
			  "HASH_POLICY, NEIGH, NEXTHOP_GROUP, STATIC_ROUTE, POLICY_ROUTE, "
			  "BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG, BUFFER_QUEUE, WRED_PROFILE, "
			  "SCHEDULER, QUEUE, PFC_WD, CLASSIFIER, ROCESWD, INTERFACE)",
			  near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
}

/* Loads path (or, with fd >= 0, the file open on fd, path naming it in messages) and finds its
 * tables (unknown or repeated ones are errors). */
static int load_tables(struct cc *c, const char *path, int fd, char *err, size_t errlen)
{
	if ((fd >= 0 ? ydoc_load_fd(&c->y, fd, path, err, errlen)
		     : ydoc_load(&c->y, path, err, errlen)) < 0)
		return -1;
	yaml_node_t *root = ydoc_root(&c->y);
	if (root->type != YAML_MAPPING_NODE)
		return ydoc_error(&c->y, root, "(top level)", "expected a mapping of tables like PORT:");
	YDOC_FOREACH_PAIR(&c->y, root, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key);
		const char *name = ydoc_str(k);
		int i;
		for (i = 0; known_tables[i]; i++)
			if (name && !strcmp(name, known_tables[i]))
				break;
		if (!known_tables[i])
			return unknown_table(c, k, name);
		if (c->tables[i])
			return ydoc_error(&c->y, k, name, "table appears twice");
		c->tables[i] = ydoc_node(&c->y, pr->value);
	}
	return 0;
}

int rsw_config_hash_policies(const char *path, struct rsw_txn *txn, char *err, size_t errlen)
{
	struct cc *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->txn = txn;
	int rc = load_tables(c, path, -1, err, errlen);
	if (rc == 0 && !c->tables[T_SWHASH] && !c->tables[T_HASHPOL])
		rc = ydoc_error(&c->y, ydoc_root(&c->y), "(top level)",
				"no SWITCH_HASH or HASH_POLICY table: no hash policy to read");
	if (rc == 0)
		rc = parse_hash(c, c->tables[T_SWHASH], c->tables[T_HASHPOL]);
	ydoc_free(&c->y);
	free(c);
	return rc;
}

int rsw_config_compile(const char *path, struct rsw_txn *txn, char *err, size_t errlen)
{
	return rsw_config_compile_fd(-1, path, txn, err, errlen);
}

int rsw_config_compile_fd(int fd, const char *name, struct rsw_txn *txn, char *err, size_t errlen)
{
	struct cc *c = calloc(1, sizeof(*c));
	int rc = -1;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->txn = txn;
	if (load_tables(c, name, fd, err, errlen) < 0)
		goto out;
	struct rsw_daemon_cfg daemon; /* checked here, used by roceswd */
	rsw_daemon_cfg_defaults(&daemon);
	if (rsw_daemon_cfg_parse(&c->y, c->tables[T_ROCESWD], &daemon) < 0)
		goto out;
	if (parse_device(c, c->tables[T_DEVICE]) < 0 || parse_ports(c, c->tables[T_PORT]) < 0 ||
	    parse_cable(c, c->tables[T_CABLE]) < 0 ||
	    parse_qos_maps(c, c->tables[T_DSCP], RSW_QOS_DSCP_TO_TC) < 0 ||
	    parse_qos_maps(c, c->tables[T_TCPG], RSW_QOS_TC_TO_PG) < 0 ||
	    parse_port_qos(c, c->tables[T_PQOS]) < 0 || rsw_cc_tm(c) < 0 ||
	    parse_hash(c, c->tables[T_SWHASH], c->tables[T_HASHPOL]) < 0)
		goto out;
	struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_SWITCH};
	w.u.sw = c->sw;
	if (rsw_cc_add(c, &w) < 0)
		goto out;
	for (unsigned i = 0; i < c->n_ports; i++) {
		struct rsw_table_write pw = {.op = RSW_W_SET, .table = RSW_T_PORT};
		pw.u.port = c->ports[i];
		if (rsw_cc_add(c, &pw) < 0)
			goto out;
	}
	if (rsw_cc_classifier(c) < 0 || rsw_cc_interface(c, c->tables[T_INTF]) < 0 ||
	    parse_neigh(c, c->tables[T_NEIGH]) < 0 ||
	    parse_nhg(c, c->tables[T_NHG]) < 0 ||
	    parse_routes(c, c->tables[T_ROUTE], 0) < 0 || parse_routes(c, c->tables[T_PBR], 1) < 0)
		goto out;
	rc = 0;
out:
	ydoc_free(&c->y);
	free(c);
	return rc;
}

int rsw_config_apply(struct rsw_switch *sw, const char *path, char *err, size_t errlen)
{
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = rsw_config_compile(path, txn, err, errlen);
	if (rc == 0)
		rc = rsw_switch_commit(sw, txn, err, errlen);
	rsw_txn_free(txn);
	return rc;
}
