/* SWITCH_HASH (SONiC's, as the policy named "default") and HASH_POLICY (rocesw's named
 * policies), with their UDFs. docs/hash.md describes the policies. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"
#include "dataplane/hash/hash_algo.h"

static int parse_field_list(struct cc *c, yaml_node_t *v, const char *key, const char *fname,
			    uint16_t *fields)
{
	*fields = 0;
	if (!v || v->type != YAML_SEQUENCE_NODE)
		return ydoc_error(&c->y, v, key, "%s: expected a list of hash fields like "
				  "[SRC_IP, DST_IP]", fname);
	int rc = 0;
	YDOC_FOREACH_ITEM(&c->y, v, it) {
		yaml_node_t *n = ydoc_node(&c->y, *it);
		const char *s = ydoc_str(n);
		unsigned f = rsw_hash_field_from_name(s ? s : "");
		if (f == RSW_HF_COUNT)
			rc = ydoc_error(&c->y, n, key,
					"%s: unknown hash field '%s' (expected SRC_IP, DST_IP, "
					"IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT, IN_PORT, "
					"IPV6_FLOW_LABEL, RDMA_BTH_OPCODE, RDMA_BTH_DEST_QP)",
					fname, s ? s : "?");
		else
			*fields |= (uint16_t)(1u << f);
	}
	return rc;
}

static int parse_udf(struct cc *c, yaml_node_t *at, yaml_node_t *v, const char *key,
		     struct rsw_udf *u)
{
	struct rsw_fval f[UDF_MATCH + 1], m[UM_L4_DST_PORT + 1];
	memset(u, 0, sizeof(*u));
	u->match_ip_protocol = -1;
	u->match_l4_dst_port = -1;
	memset(u->mask, 0xFF, sizeof(u->mask));
	if (rsw_cc_fields(c, rsw_schema_udf, key, at, v, f))
		return -1;
	u->base = (uint8_t)(f[UDF_BASE].word - 1);
	u->offset = (uint16_t)f[UDF_OFFSET].u;
	u->length = (uint8_t)f[UDF_LENGTH].u;
	if (f[UDF_MATCH].v) {
		char mkey[256];
		snprintf(mkey, sizeof(mkey), "%s.match", key);
		if (rsw_cc_fields(c, rsw_schema_udf_match, mkey, f[UDF_MATCH].v, f[UDF_MATCH].v, m))
			return -1;
		if (m[UM_IP_PROTOCOL].v)
			u->match_ip_protocol = (int32_t)m[UM_IP_PROTOCOL].u;
		if (m[UM_L4_DST_PORT].v)
			u->match_l4_dst_port = (int32_t)m[UM_L4_DST_PORT].u;
	}
	const char *mask_s = f[UDF_MASK].s;
	if (f[UDF_MASK].v) {
		/* hex, as wide as the field: "0xffffff" for 3 bytes */
		char *end = NULL;
		errno = 0;
		unsigned long long x = mask_s ? strtoull(mask_s, &end, 16) : 0;
		unsigned bits = u->length * 8u;
		if (!mask_s || errno || *end || strncmp(mask_s, "0x", 2) || (bits < 64 && x >> bits))
			return ydoc_error(&c->y, f[UDF_MASK].v, key,
					  "mask: expected a hex value like 0xffffff no wider than "
					  "length (%u bytes), got '%s'", u->length,
					  mask_s ? mask_s : "?");
		for (unsigned i = 0; i < u->length; i++)
			u->mask[i] = (uint8_t)(x >> (8 * (u->length - 1 - i)));
	}
	return 0;
}

static int parse_udfs(struct cc *c, yaml_node_t *v, const char *key, const char *fname,
		      struct rsw_hash_policy *pol)
{
	if (!v || v->type != YAML_SEQUENCE_NODE)
		return ydoc_error(&c->y, v, key, "%s: expected a list of UDFs", fname);
	int rc = 0;
	YDOC_FOREACH_ITEM(&c->y, v, it) {
		if (pol->n_udf == RSW_UDF_MAX)
			return ydoc_error(&c->y, v, key, "%s: more than %d UDFs", fname, RSW_UDF_MAX);
		char ukey[200];
		snprintf(ukey, sizeof(ukey), "%s.%s[%u]", key, fname, pol->n_udf);
		yaml_node_t *u = ydoc_node(&c->y, *it);
		if (parse_udf(c, u, u, ukey, &pol->udf[pol->n_udf]) < 0)
			rc = -1;
		pol->n_udf++;
	}
	return rc;
}

/* The five fields of a policy, at the same index in either table's schema. */
static int policy_body(struct cc *c, const struct rsw_fval *f, const struct rsw_field_schema *fs,
		       yaml_node_t *at, const char *key, struct rsw_hash_policy *pol)
{
	int rc = 0;
	memset(pol, 0, sizeof(*pol));
	if (f[HP_FIELDS].v &&
	    parse_field_list(c, f[HP_FIELDS].v, key, fs[HP_FIELDS].name, &pol->fields) < 0)
		rc = -1;
	if (f[HP_ALGO].v)
		pol->algo = (uint8_t)rsw_hash_algo_from_name(f[HP_ALGO].s);
	if (f[HP_SEED].v)
		pol->seed = (uint32_t)f[HP_SEED].u;
	if (f[HP_OFFSET].v)
		pol->offset = (uint8_t)f[HP_OFFSET].u;
	if (f[HP_UDF].v && parse_udfs(c, f[HP_UDF].v, key, fs[HP_UDF].name, pol) < 0)
		rc = -1;
	if (rc == 0 && !f[HP_FIELDS].v && pol->n_udf == 0)
		rc = ydoc_error(&c->y, at, key, "a hash policy needs '%s' or '%s'",
				fs[HP_FIELDS].name, fs[HP_UDF].name);
	return rc;
}

/* SONiC's per-packet-type lists for RoCEv2: rocesw hashes every packet with one list, and on
 * a RoCE fabric that is the RDMA one. */
static int rdma_lists(struct cc *c, const struct rsw_fval *f, const char *key,
		      struct rsw_hash_policy *pol, int have_ecmp_hash)
{
	uint16_t v4 = 0, v6 = 0;
	const struct rsw_field_schema *fs = rsw_schema_tables[T_SWHASH].fields;
	if (f[SH_HASH_V4_RDMA].v && parse_field_list(c, f[SH_HASH_V4_RDMA].v, key,
						     fs[SH_HASH_V4_RDMA].name, &v4) < 0)
		return -1;
	if (f[SH_HASH_V6_RDMA].v && parse_field_list(c, f[SH_HASH_V6_RDMA].v, key,
						     fs[SH_HASH_V6_RDMA].name, &v6) < 0)
		return -1;
	if (f[SH_HASH_V4_RDMA].v && f[SH_HASH_V6_RDMA].v && v4 != v6)
		return ydoc_error(&c->y, f[SH_HASH_V6_RDMA].v, key,
				  "ecmp_hash_ipv6_rdma: differs from ecmp_hash_ipv4_rdma; rocesw "
				  "hashes IPv4 and IPv6 RoCE with one field list");
	uint16_t rdma = f[SH_HASH_V4_RDMA].v ? v4 : v6;
	yaml_node_t *at = f[SH_HASH_V4_RDMA].v ? f[SH_HASH_V4_RDMA].v : f[SH_HASH_V6_RDMA].v;
	if (have_ecmp_hash && pol->fields != rdma)
		rsw_cc_warn(c, at, "%s: ecmp_hash differs from the RDMA list; rocesw hashes every "
			    "packet with one list and uses the RDMA one", key);
	pol->fields = rdma;
	return 0;
}

static void parse_switch_hash(struct cc *c, yaml_node_t *t)
{
	if (!t || rsw_cc_want_map(c, t, "SWITCH_HASH") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		if (!ydoc_str(k) || strcmp(ydoc_str(k), "GLOBAL")) {
			ydoc_error(&c->y, k, "SWITCH_HASH", "expected the one key 'GLOBAL'");
			continue;
		}
		const struct rsw_field_schema *fs = rsw_schema_tables[T_SWHASH].fields;
		struct rsw_fval f[SH_HASH_V6_RDMA + 1];
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_HASH_POLICY};
		strcpy(w.u.policy.name, RSW_DEFAULT_POLICY);
		rsw_cc_origin(c, k, w.u.policy.origin);
		if (rsw_cc_fields(c, fs, "SWITCH_HASH|GLOBAL", k, v, f))
			continue;
		int rdma = f[SH_HASH_V4_RDMA].v || f[SH_HASH_V6_RDMA].v;
		struct rsw_fval g[SH_HASH_V6_RDMA + 1];
		memcpy(g, f, sizeof(g));
		if (rdma && !g[HP_FIELDS].v)
			g[HP_FIELDS].v = f[SH_HASH_V4_RDMA].v ?: f[SH_HASH_V6_RDMA].v;
		if (policy_body(c, g, fs, k, "SWITCH_HASH|GLOBAL", &w.u.policy.pol) < 0)
			continue;
		if (rdma && rdma_lists(c, f, "SWITCH_HASH|GLOBAL", &w.u.policy.pol,
				       f[HP_FIELDS].v != NULL) < 0)
			continue;
		rsw_cc_add(c, &w);
	}
}

static void parse_hash_policies(struct cc *c, yaml_node_t *t)
{
	if (!t || rsw_cc_want_map(c, t, "HASH_POLICY") < 0)
		return;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_HASH_POLICY};
		if (rsw_cc_get_name(c, k, "HASH_POLICY", w.u.policy.name) < 0)
			continue;
		char key[96];
		snprintf(key, sizeof(key), "HASH_POLICY|%s", w.u.policy.name);
		rsw_cc_origin(c, k, w.u.policy.origin);
		const struct rsw_field_schema *fs = rsw_schema_tables[T_HASHPOL].fields;
		struct rsw_fval f[HP_UDF + 1];
		if (rsw_cc_fields(c, fs, key, k, v, f) == 0 &&
		    policy_body(c, f, fs, k, key, &w.u.policy.pol) == 0)
			rsw_cc_add(c, &w);
	}
}

void rsw_cc_hash(struct cc *c)
{
	parse_switch_hash(c, c->tables[T_SWHASH]);
	parse_hash_policies(c, c->tables[T_HASHPOL]);
}
