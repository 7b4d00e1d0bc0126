/* Where the traffic manager gets time. Every TM function takes `now` (nanoseconds) from the caller,
 * which reads it from one of these clocks once per burst: the TSC live, a counter the event loop
 * advances in replay. The TM itself never reads a clock, so the same code runs on both. */
#ifndef RSW_TM_CLOCK_H
#define RSW_TM_CLOCK_H

#include <stdint.h>

struct rsw_clock {
	uint64_t (*now_ns)(const struct rsw_clock *c);
	uint64_t tsc_hz;     /* live: TSC frequency */
	uint64_t tsc_start;  /* live: TSC at time 0 */
	uint64_t virt_ns;    /* replay: current virtual time */
};

/* Live clock on the TSC (rte_rdtsc), nanoseconds since the call. */
void rsw_clock_init_tsc(struct rsw_clock *c);
/* Virtual clock starting at start_ns, moved only by rsw_clock_set. */
void rsw_clock_init_virtual(struct rsw_clock *c, uint64_t start_ns);

static inline uint64_t rsw_clock_now(const struct rsw_clock *c)
{
	return c->now_ns(c);
}

/* Replay: time only moves forward. */
static inline void rsw_clock_set(struct rsw_clock *c, uint64_t ns)
{
	if (ns > c->virt_ns)
		c->virt_ns = ns;
}

#endif
