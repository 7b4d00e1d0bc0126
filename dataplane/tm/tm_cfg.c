/* Traffic-manager settings compared and copied port by port: only a switch's own ports hold
 * anything, and its settings are sized for the largest switch (tm_cfg.h). */
#include <stddef.h>
#include <string.h>

#include "tm_cfg.h"

/* Each per-port array of the settings, as (offset, bytes a port) */
#define PER_PORT(f) {offsetof(struct rsw_tm_config, f), sizeof(((struct rsw_tm_config *)0)->f[0])}
static const struct {
	size_t off, size;
} per_port[] = {PER_PORT(port),  PER_PORT(speed_mbps), PER_PORT(port_name),
		PER_PORT(brief), PER_PORT(queue_hot),  PER_PORT(pg_hot)};

int rsw_tm_config_same(const struct rsw_tm_config *a, const struct rsw_tm_config *b)
{
	struct rsw_tm_pools pa = a->pools;
	pa.ecn_seed = b->pools.ecn_seed; /* read once, by rsw_tm_new*, from the switch's own */
	if (a->n_ports != b->n_ports || memcmp(&pa, &b->pools, sizeof(pa)))
		return 0;
	for (size_t i = 0; i < sizeof(per_port) / sizeof(per_port[0]); i++)
		if (memcmp((const char *)a + per_port[i].off, (const char *)b + per_port[i].off,
			   per_port[i].size * a->n_ports))
			return 0;
	return 1;
}

void rsw_tm_config_copy(struct rsw_tm_config *dst, const struct rsw_tm_config *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->n_ports = src->n_ports;
	dst->pools = src->pools;
	for (size_t i = 0; i < sizeof(per_port) / sizeof(per_port[0]); i++)
		memcpy((char *)dst + per_port[i].off, (const char *)src + per_port[i].off,
		       per_port[i].size * src->n_ports);
}
