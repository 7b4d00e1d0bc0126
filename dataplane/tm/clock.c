#include <rte_cycles.h>

#include "clock.h"

static uint64_t tsc_now(const struct rsw_clock *c)
{
	uint64_t d = rte_rdtsc() - c->tsc_start;
	return (uint64_t)((__uint128_t)d * 1000000000u / c->tsc_hz);
}

static uint64_t virt_now(const struct rsw_clock *c)
{
	return c->virt_ns;
}

void rsw_clock_init_tsc(struct rsw_clock *c)
{
	c->now_ns = tsc_now;
	c->tsc_hz = rte_get_tsc_hz();
	c->tsc_start = rte_rdtsc();
	c->virt_ns = 0;
}

void rsw_clock_init_virtual(struct rsw_clock *c, uint64_t start_ns)
{
	c->now_ns = virt_now;
	c->tsc_hz = 0;
	c->tsc_start = 0;
	c->virt_ns = start_ns;
}
