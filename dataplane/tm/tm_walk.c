/* Looking at what a queue holds without taking it off: the deadlock detector (pfc_wait.c) asks
 * which ingress PGs and flows a paused queue's packets came from.
 *
 * Replay's growing VOQs are read directly. A live VOQ is a ring only its owner takes from; another
 * thread (the main lcore answering `show pfc deadlock`) reads the owner's cache and the ring's
 * slots between the consumer's and the producers' tails, without moving either. For the queues
 * this is asked about, paused ones, the owner takes nothing off, so what is read is what is
 * queued; a queue that resumes meanwhile may give a stale packet, which is still packet memory
 * (the pool is never unmapped) and at worst names a source that has just left. What is read from
 * another thread is stored and loaded whole (relaxed atomics), so never torn: the owner's cache
 * indexes and slots (tm.c, cache_fill) and the tag's source fields. */
#include <rte_ring.h>

#include "tm.h"

static unsigned walk_ring(const struct rsw_tm_port *tp, unsigned q,
			  int (*fn)(void *arg, struct rte_mbuf *m), void *arg)
{
	const struct rte_ring *r = tp->cold->ring[q];
	unsigned seen = 0;
	uint8_t h = __atomic_load_n(&tp->c_head[q], __ATOMIC_RELAXED),
		n = __atomic_load_n(&tp->c_n[q], __ATOMIC_RELAXED);
	for (unsigned i = h; i < n && i < RSW_TM_DEQ_BURST; i++, seen++) {
		struct rte_mbuf *m = __atomic_load_n(&tp->cold->cache[q][i], __ATOMIC_RELAXED);
		if (m && fn(arg, m))
			return seen + 1;
	}
	/* the producers write a slot before they move prod.tail (release) */
	uint32_t tail = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE),
		 head = __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED);
	void *const *slot = (void *const *)(const void *)&r[1]; /* rte_ring's objects follow it */
	uint32_t count = (tail - head) & r->mask;
	for (uint32_t i = 0; i < count && i < r->capacity; i++, seen++) {
		struct rte_mbuf *m = __atomic_load_n(&slot[(head + i) & r->mask], __ATOMIC_RELAXED);
		if (m && fn(arg, m))
			return seen + 1;
	}
	return seen;
}

unsigned rsw_tm_queue_walk(const struct rsw_tm *tm, uint16_t port, unsigned q,
			   int (*fn)(void *arg, struct rte_mbuf *m), void *arg)
{
	const struct rsw_tm_port *tp = rsw_tm_port_read(tm, port);
	const struct rsw_tm_queue *v = &tp->q[q];
	unsigned seen = 0;
	if (tp->cold->ring[q])
		return walk_ring(tp, q, fn, arg);
	/* the owner's cache holds the oldest packets, the FIFO the rest in order */
	for (unsigned i = tp->c_head[q]; i < tp->c_n[q]; i++, seen++)
		if (fn(arg, tp->cold->cache[q][i]))
			return seen + 1;
	struct rte_mbuf *m = v->first;
	for (uint32_t i = 0; i < v->n; i++, seen++, m = m->next)
		if (fn(arg, m))
			return seen + 1;
	return seen;
}
