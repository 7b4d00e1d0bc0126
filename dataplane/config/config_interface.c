/* INTERFACE (SONiC's router interfaces): "PORT" alone enables routing on the port (nothing to do
 * here: every port routes), "PORT|ADDR/LEN" gives it an address, IPv4 or IPv6, host bits set
 * ("Ethernet0|10.1.0.0/31", "Ethernet0|10.1.0.2/24", "Ethernet0|fc00::1/126"). Each address is
 * one table write; the switch answers ARP / neighbour solicitations for it and learns and
 * resolves neighbours in its subnet (docs/dataplane.md). */
#include <string.h>

#include "config_cc.h"

/* SONiC fields of an INTERFACE entry, all of which change nothing here (config_schema.c). */
static int known_field(const char *name)
{
	return rsw_schema_field(rsw_schema_tables[T_INTF].fields, name) >= 0;
}

int rsw_cc_interface(struct cc *c, yaml_node_t *t)
{
	if (!t)
		return 0;
	if (rsw_cc_want_map(c, t, "INTERFACE") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		const char *s = ydoc_str(k) ? ydoc_str(k) : "?";
		char key[128], pn[RSW_NAME_MAX];
		snprintf(key, sizeof(key), "INTERFACE|%s", s);
		const char *bar = strchr(s, '|');
		size_t pl = bar ? (size_t)(bar - s) : strlen(s);
		if (pl >= sizeof(pn))
			return ydoc_error(&c->y, k, "INTERFACE", "no port named '%s' in PORT", s);
		memcpy(pn, s, pl);
		pn[pl] = 0;
		int port = rsw_cc_port_by_name(c, k, key, pn);
		if (port < 0)
			return -1;
		if (v && v->type == YAML_MAPPING_NODE) {
			YDOC_FOREACH_PAIR(&c->y, v, f) {
				const char *name = ydoc_str(ydoc_node(&c->y, f->key));
				if (!name || !known_field(name))
					return ydoc_error(&c->y, ydoc_node(&c->y, f->key), key,
							  "unknown field '%s' (expected none, or "
							  "SONiC's scope, family, vrf_name)",
							  name ? name : "?");
			}
		} else if (!(v && v->type == YAML_SCALAR_NODE && !*ydoc_str(v))) {
			return ydoc_error(&c->y, v, key, "expected a mapping (usually {})");
		}
		if (!bar)
			continue;
		struct rsw_table_write w;
		memset(&w, 0, sizeof(w));
		w.op = RSW_W_INSERT;
		w.table = RSW_T_INTERFACE;
		w.u.intf.port = (uint16_t)port;
		/* host bits are the point here: -2 (host bits set) is the usual case */
		if (rsw_prefix_parse(bar + 1, &w.u.intf.addr) == -1)
			return ydoc_error(&c->y, k, "INTERFACE", "expected a key like "
					  "\"Ethernet0|10.1.0.0/31\" (an address and its prefix length), "
					  "got '%s'", s);
		rsw_cc_origin(c, k, w.u.intf.origin);
		if (rsw_cc_add(c, &w) < 0)
			return -1;
	}
	return 0;
}
