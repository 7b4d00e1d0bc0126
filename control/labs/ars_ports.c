/* The hash lab's egress ports as ARS sees them offline (ars_ports.h). */
#include <math.h>

#include "ars_ports.h"

void rsw_ars_ports_advance(struct rsw_ars_ports *p, const struct rsw_fib *fib, uint64_t now)
{
	if (!fib->ars)
		return;
	uint64_t dt = now > p->now_ns && p->now_ns ? now - p->now_ns : 0;
	p->now_ns = now;
	for (uint16_t i = 0; i < fib->n_ports && dt; i++) {
		/* Mb/s is bits per us: bytes per ns = speed / 8000 */
		double out = (double)dt * fib->ports[i].speed_mbps / 8000.0;
		if (out > p->queue[i])
			out = p->queue[i];
		p->queue[i] -= out;
		p->sent[i] += out;
	}
	if (!rsw_ars_sample_due(fib->ars, now))
		return;
	struct rsw_ars_sample s[RSW_MAX_PORTS];
	for (uint16_t i = 0; i < fib->n_ports; i++) {
		s[i].tx_bytes = (uint64_t)llround(p->sent[i]);
		s[i].queue_bytes = (uint64_t)llround(p->queue[i]);
	}
	rsw_ars_sample(fib->ars, now, s);
}

void rsw_ars_ports_enqueue(struct rsw_ars_ports *p, uint16_t port, uint32_t len)
{
	if (port < RSW_MAX_PORTS)
		p->queue[port] += len;
}
