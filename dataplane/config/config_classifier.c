/* CLASSIFIER (a rocesw table, no SONiC equivalent short of an ACL): rules that set the traffic
 * class before the DSCP map, e.g. to put receiver-driven clear-to-send packets on a strict queue.
 *
 *   CLASSIFIER:
 *     cts: {priority: 100, dscp: 48, tc: 6}
 *     cnp: {priority: 90, bth_opcode: 0x81, tc: 6}
 *     r1:  {dscp: "24/0x38", bth_opcode: "0x06/0xff", dest_qp: "0x100-0x1ff",
 *           length: "64-256", in_port: Ethernet0, tc: 5}
 *
 * A file with a CLASSIFIER table replaces the shipped rules "cts" and "cnp" unless it names them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"

/* "48" or "48/0x3f" → value, mask (mask defaults to all of max) */
static int ternary(struct cc *c, yaml_node_t *v, const char *key, const char *field,
		   unsigned max, uint8_t *val, uint8_t *mask)
{
	const char *s = ydoc_str(v);
	char *end;
	unsigned long x = s ? strtoul(s, &end, 0) : max + 1, m = max;
	if (s && *end == '/') {
		const char *p = end + 1;
		m = strtoul(p, &end, 0);
		if (end == p)
			m = max + 1;
	}
	if (!s || !*s || *end || x > max || m > max || (x & ~m))
		return ydoc_error(&c->y, v, key, "%s: expected a value 0..%u, optionally with a mask "
				  "like \"24/0x38\" (value bits outside the mask not allowed), got "
				  "'%s'", field, max, s ? s : "?");
	*val = (uint8_t)x;
	*mask = (uint8_t)m;
	return 0;
}

/* "lo-hi" or "n" */
static int range(struct cc *c, yaml_node_t *v, const char *key, const char *field,
		 unsigned long max, uint32_t *lo, uint32_t *hi)
{
	const char *s = ydoc_str(v);
	char *end;
	unsigned long a = s ? strtoul(s, &end, 0) : max + 1, b = a;
	if (s && *end == '-') {
		const char *p = end + 1;
		b = strtoul(p, &end, 0);
		if (end == p)
			b = max + 1;
	}
	if (!s || !*s || *end || a > b || b > max || s[0] == '-')
		return ydoc_error(&c->y, v, key, "%s: expected a range lo-hi within 0..%lu like "
				  "\"0x100-0x1ff\", got '%s'", field, max, s ? s : "?");
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

static int parse_rule(struct cc *c, yaml_node_t *k, yaml_node_t *v, struct rsw_classifier_rule *r)
{
	char key[96];
	struct rsw_fval f[CL_IN_PORT + 1];
	snprintf(key, sizeof(key), "CLASSIFIER|%s", ydoc_str(k) ? ydoc_str(k) : "?");
	memset(r, 0, sizeof(*r));
	if (rsw_cc_get_name(c, k, "CLASSIFIER", r->name) < 0)
		return -1;
	rsw_cc_origin(c, k, r->origin);
	r->qp_hi = 0xFFFFFF;
	r->len_hi = UINT32_MAX;
	r->in_port = -1;
	if (rsw_cc_fields(c, rsw_schema_tables[T_CLASSIFIER].fields, key, k, v, f))
		return -1;
	int rc = 0;
	r->priority = (uint16_t)f[CL_PRIORITY].u;
	r->tc = (uint8_t)f[CL_TC].u;
	if (f[CL_DSCP].v && ternary(c, f[CL_DSCP].v, key, "dscp", 63, &r->dscp, &r->dscp_mask) < 0)
		rc = -1;
	if (f[CL_OPCODE].v) {
		r->roce_only = 1;
		if (ternary(c, f[CL_OPCODE].v, key, "bth_opcode", 255, &r->opcode,
			    &r->opcode_mask) < 0)
			rc = -1;
	}
	if (f[CL_QP].v) {
		r->roce_only = 1;
		if (range(c, f[CL_QP].v, key, "dest_qp", 0xFFFFFF, &r->qp_lo, &r->qp_hi) < 0)
			rc = -1;
	}
	if (f[CL_LENGTH].v && range(c, f[CL_LENGTH].v, key, "length", 65535, &r->len_lo,
				    &r->len_hi) < 0)
		rc = -1;
	if (f[CL_IN_PORT].v) {
		char fkey[128];
		snprintf(fkey, sizeof(fkey), "%s: in_port", key);
		int pi = rsw_cc_port_by_name(c, f[CL_IN_PORT].v, fkey, f[CL_IN_PORT].s);
		if (pi < 0)
			rc = -1;
		r->in_port = pi;
	}
	return rc;
}

int rsw_cc_classifier(struct cc *c)
{
	yaml_node_t *t = c->tables[T_CLASSIFIER];
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "CLASSIFIER") < 0)
		return -1;
	int named_cts = 0, named_cnp = 0;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_CLASSIFIER};
		if (parse_rule(c, k, v, &w.u.cls) < 0)
			continue;
		int dup = 0;
		for (const yaml_node_pair_t *q = t->data.mapping.pairs.start; q < pr; q++)
			dup |= !strcmp(ydoc_str(ydoc_node(&c->y, q->key)) ?: "", w.u.cls.name);
		if (dup) {
			ydoc_error(&c->y, k, "CLASSIFIER", "rule '%s' defined twice", w.u.cls.name);
			continue;
		}
		named_cts |= !strcmp(w.u.cls.name, "cts");
		named_cnp |= !strcmp(w.u.cls.name, "cnp");
		if (rsw_cc_add(c, &w) < 0)
			return -1;
	}
	/* the file's rules replace the shipped ones */
	const char *defaults[2] = {named_cts ? NULL : "cts", named_cnp ? NULL : "cnp"};
	for (unsigned i = 0; i < 2; i++) {
		if (!defaults[i])
			continue;
		struct rsw_table_write w = {.op = RSW_W_DELETE, .table = RSW_T_CLASSIFIER};
		snprintf(w.u.cls.name, sizeof(w.u.cls.name), "%s", defaults[i]);
		rsw_cc_origin(c, t, w.u.cls.origin);
		if (rsw_cc_add(c, &w) < 0)
			return -1;
	}
	return 0;
}
