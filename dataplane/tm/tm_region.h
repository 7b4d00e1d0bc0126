/* Where traffic managers' port records live: address space for a number of ports, handed out in
 * the order ports are first used. Replay gives all of a zone's switches one region, so the
 * records the traffic reaches lie together, on as few pages as they fill, whichever switch they
 * belong to; a TM given none has one of its own. Reserved once (untouched pages cost nothing),
 * so making a record never fails. Counted references: each TM holds one, the creator one. */
#ifndef RSW_TM_REGION_H
#define RSW_TM_REGION_H

#include <stddef.h>

struct rsw_tm_port;
struct rsw_tm_port_cold;

struct rsw_tm_region {
	struct rsw_tm_port *hot;       /* what every event of a port reads */
	struct rsw_tm_port_cold *cold; /* what some do, apart, so it spreads no hot page */
	size_t n, reserved, used; /* records in all, promised to TMs, made */
	unsigned refs;
};

/* A region for n_ports records, one reference held by the caller; NULL: out of memory. */
struct rsw_tm_region *rsw_tm_region_new(size_t n_ports);
struct rsw_tm_region *rsw_tm_region_hold(struct rsw_tm_region *r);
/* Drops a reference; the last one frees the region. */
void rsw_tm_region_put(struct rsw_tm_region *r);

#endif
