/* The control plane's copy of every table (shadow state). A transaction is applied to a clone;
 * only if every write and the final validation succeed does the clone replace the original. */
#ifndef RSW_STATE_H
#define RSW_STATE_H

#include <stddef.h>

#include "route_index.h"
#include "table_write.h"

struct rsw_state {
	struct rsw_switch_cfg sw;
	uint16_t n_ports;
	struct rsw_port_cfg ports[RSW_MAX_PORTS];
	size_t n_qos, n_pol, n_neigh, n_nhg, n_routes, n_cls, n_intf;
	struct rsw_qos_map *qos;
	struct rsw_named_policy *pol;
	struct rsw_neighbor *neigh;
	struct rsw_nhg **nhg;
	struct rsw_route *routes;
	struct rsw_classifier_rule *cls;
	struct rsw_interface *intf;
	size_t routes_cap;               /* allocated routes (doubling, not one realloc each) */
	struct rsw_route_index route_ix; /* routes by (in_port, prefix) */
};

/* An empty state with the shipped defaults: the AZURE QoS maps, the "default" hash policy and
 * the classifier rules "cts" (DSCP 48 → TC 6) and "cnp" (BTH opcode 0x81 → TC 6). */
struct rsw_state *rsw_state_new(void);
struct rsw_state *rsw_state_clone(const struct rsw_state *s);
void rsw_state_free(struct rsw_state *s);

/* Apply one write. On error returns -1 with a message in err naming the write. */
int rsw_state_apply(struct rsw_state *s, const struct rsw_table_write *w, char *err, size_t errlen);
/* Check references between tables and bring each group's bucket table in line with which members
 * resolve. Returns -1 with every dangling reference in err, one per line. */
int rsw_state_finish(struct rsw_state *s, char *err, size_t errlen);
/* Every write of txn, then the references check: a write that fails is skipped and the others
 * are still tried, so that err lists every error (one per line); -1 if there was any, and s is
 * then only fit to be freed. */
struct rsw_txn;
int rsw_state_apply_all(struct rsw_state *s, const struct rsw_txn *txn, char *err, size_t errlen);

int rsw_state_port_index(const struct rsw_state *s, const char *name); /* -1 if none */
const struct rsw_nhg *rsw_state_nhg(const struct rsw_state *s, const char *name);
const struct rsw_named_policy *rsw_state_policy(const struct rsw_state *s, const char *name);
const struct rsw_qos_map *rsw_state_qos(const struct rsw_state *s, const char *name, unsigned kind);
/* The route with r's key (ingress port and prefix), or NULL. */
const struct rsw_route *rsw_state_route(const struct rsw_state *s, const struct rsw_route *r);
/* Neighbour for a next-hop IP, on any port; NULL if unresolved. */
const struct rsw_neighbor *rsw_state_resolve(const struct rsw_state *s, const struct rsw_ip *ip);

/* The port whose interface subnet holds ip (the first such address), or -1; with the address
 * in *addr when found. Where the switch learns and resolves neighbours. */
int rsw_state_intf_port(const struct rsw_state *s, const struct rsw_ip *ip,
			const struct rsw_interface **addr);
/* The interface address ip is, on any port; NULL if it is not the switch's. */
const struct rsw_interface *rsw_state_intf_addr(const struct rsw_state *s, const struct rsw_ip *ip);

/* SONiC's AZURE maps (REFERENCE §4). */
void rsw_qos_azure_dscp_to_tc(uint8_t map[64]);
void rsw_qos_azure_tc_to_pg(uint8_t map[8]);

#endif
