/* An index of the shadow state's routes by key (ingress port, prefix): open addressing with
 * linear probing over positions in the routes array, so finding, adding and removing a route
 * cost O(1) on average instead of a walk over every route (a config of 1M routes took hours). */
#ifndef RSW_ROUTE_INDEX_H
#define RSW_ROUTE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "table_types.h"

struct rsw_route_index {
	uint32_t *slot;  /* position in the routes array + 1; 0 = empty */
	size_t mask;     /* slots - 1 (a power of two), 0 when there is no table yet */
};

/* Position of the route with r's key in routes[0..n), or -1. */
long rsw_route_index_find(const struct rsw_route_index *ix, const struct rsw_route *routes,
			  const struct rsw_route *r);
/* routes[pos] was appended (n routes now, pos = n - 1). -1 if out of memory. */
int rsw_route_index_add(struct rsw_route_index *ix, const struct rsw_route *routes, size_t n,
			size_t pos);
/* routes[pos] is about to be removed by moving routes[last] into its place. */
void rsw_route_index_remove(struct rsw_route_index *ix, const struct rsw_route *routes,
			    size_t pos, size_t last);
int rsw_route_index_copy(struct rsw_route_index *dst, const struct rsw_route_index *src);
/* Slots examined by every index's finds, adds and removals so far, in all threads: a count of
 * the index's work that no machine's speed moves (tests/unit/test_route_scale.c: loading N
 * routes stays O(N) only while probe runs stay short). */
uint64_t rsw_route_index_probes(void);
void rsw_route_index_free(struct rsw_route_index *ix);

#endif
