/* `rocesw te`: centralized traffic engineering as Meta's controller does it (docs/te.md): a
 * traffic matrix from a collective, flows placed one by one on constrained shortest paths over
 * the links' remaining capacity (CSPF), and the policy routes <ingress port, destination prefix>
 * -> next hop that pin each flow to its path. */
#ifndef RSW_TE_H
#define RSW_TE_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/config/zone.h"
#include "dataplane/replay/collective.h"
#include "dataplane/tables/table_types.h"

enum rsw_te_status {
	RSW_TE_PLACED = 0,  /* on a path with room for its demand */
	RSW_TE_OVER,        /* no path had room: on the least loaded one, over capacity */
	RSW_TE_UNREACHABLE, /* no up-down path without a failed link: left to the main table */
};

/* A flow of the matrix: everything one host sends another. */
struct rsw_te_flow {
	uint16_t src, dst;         /* zone hosts */
	uint64_t bytes;            /* what src sends dst over the whole collective */
	double demand_mbps;        /* the rate it needs (docs/te.md, "Demands") */
	unsigned status;           /* enum rsw_te_status */
	uint32_t path[16];         /* link directions, 2 x link + (0 a->b, 1 b->a), host to host */
	unsigned n_path;
	unsigned n_alternatives;   /* up-down paths it had, failed links included */
};

/* A policy route: on switch sw, packets entering in_port for dst's /32 leave out_port. */
struct rsw_te_route {
	uint16_t sw, in_port, out_port, dst;
	struct rsw_prefix prefix;
	struct rsw_ip nexthop;     /* the neighbour on out_port */
	unsigned flow;             /* the first flow that set it */
	unsigned n_flows;          /* flows that use it */
};

struct rsw_te_result {
	struct rsw_te_flow *flow;  /* in placement order */
	unsigned n_flow;
	struct rsw_te_route *route; /* by switch, ingress port, prefix */
	unsigned n_route;
	double *load_mbps;         /* by link direction */
	unsigned n_dir;
	unsigned n_over, n_unreachable;
};

/* Computes TE for collective c on zone z with the links link_down[i] != 0 failed (or NULL).
 * Returns 0, or -1 with the reason in err. */
int rsw_te_compute(const struct rsw_zone *z, const struct rsw_coll *c, const uint8_t *link_down,
		   struct rsw_te_result *res, char *err, size_t errlen);
void rsw_te_free(struct rsw_te_result *res);

/* Marks in link_down the links WHAT names: a switch (all of its links), SWITCH|PORT or a host
 * (the link at it). Returns 0, or -1 with the reason. */
int rsw_te_fail(const struct rsw_zone *z, const char *what, uint8_t *link_down, char *err,
		size_t errlen);

/* The switch and port a link direction leaves from (sw RSW_TOPO_HOST: a host). */
struct rsw_topo_end rsw_te_dir_from(const struct rsw_zone *z, uint32_t dir);
struct rsw_topo_end rsw_te_dir_to(const struct rsw_zone *z, uint32_t dir);
/* "rtsw1|Ethernet256" or "h0", the end's name, in buf. */
const char *rsw_te_end_name(const struct rsw_zone *z, struct rsw_topo_end e, char *buf,
			    size_t len);

#endif
