/* Looking at what a queue holds without taking it off: replay's deadlock detector asks which
 * ingress PGs and flows a paused queue's packets came from. */
#include "tm.h"

unsigned rsw_tm_queue_walk(const struct rsw_tm *tm, uint16_t port, unsigned q,
			   int (*fn)(void *arg, struct rte_mbuf *m), void *arg)
{
	const struct rsw_tm_port *tp = &tm->port[port];
	const struct rsw_voq *v = &tp->voq[q];
	unsigned seen = 0;
	if (v->ring) /* a live ring is read by its owner only */
		return 0;
	/* the owner's cache holds the oldest packets, the FIFO the rest in order */
	for (unsigned i = tp->c_head[q]; i < tp->c_n[q]; i++, seen++)
		if (fn(arg, tp->cache[q][i]))
			return seen + 1;
	for (uint32_t i = 0; i < v->n; i++, seen++)
		if (fn(arg, v->fifo[(v->head + i) & (v->cap - 1)]))
			return seen + 1;
	return seen;
}
