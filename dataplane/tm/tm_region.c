#include <stdlib.h>

#include <rte_common.h>

#include "tm.h"
#include "tm_region.h"

struct rsw_tm_region *rsw_tm_region_new(size_t n_ports)
{
	struct rsw_tm_region *r = calloc(1, sizeof(*r));
	size_t n = n_ports ? n_ports : 1;
	if (!r)
		return NULL;
	/* page-aligned, so the first records share no page with anything else */
	r->hot = aligned_alloc(4096, RTE_ALIGN_CEIL(n * sizeof(*r->hot), 4096));
	r->cold = malloc(n * sizeof(*r->cold));
	if (!r->hot || !r->cold) {
		free(r->hot);
		free(r->cold);
		free(r);
		return NULL;
	}
	r->n = n_ports;
	r->refs = 1;
	return r;
}

struct rsw_tm_region *rsw_tm_region_hold(struct rsw_tm_region *r)
{
	r->refs++;
	return r;
}

void rsw_tm_region_put(struct rsw_tm_region *r)
{
	if (!r || --r->refs)
		return;
	free(r->hot);
	free(r->cold);
	free(r);
}
