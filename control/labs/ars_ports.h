/* What the hash lab's ports report to ARS's quality sampler offline (docs/hash-lab.md, "ARS"):
 * the lab has no traffic manager, so each egress port is a queue of bytes drained at the port's
 * configured speed from the frames the lab routed to it. The sampler (rsw_ars_sample) and the
 * decision are the dataplane's. */
#ifndef RSW_ARS_PORTS_H
#define RSW_ARS_PORTS_H

#include <stdint.h>

#include "dataplane/tables/ars.h"
#include "dataplane/tables/fib.h"

struct rsw_ars_ports {
	uint64_t now_ns;                  /* the time the queues were drained to */
	double queue[RSW_MAX_PORTS];      /* bytes waiting */
	double sent[RSW_MAX_PORTS];       /* bytes that left (monotonic) */
};

/* Drain every port of fib to now, then take ARS's sample if one is due (the pipeline's order:
 * sample, then the ingress). */
void rsw_ars_ports_advance(struct rsw_ars_ports *p, const struct rsw_fib *fib, uint64_t now);
/* A frame of len bytes routed to port at the last advance. */
void rsw_ars_ports_enqueue(struct rsw_ars_ports *p, uint16_t port, uint32_t len);

#endif
