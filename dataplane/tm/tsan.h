/* Happens-before edges that ThreadSanitizer cannot see (docs/testing.md, "ThreadSanitizer"):
 * - through DPDK's compiled code, which is not instrumented: an mbuf handed to a device or to the
 *   packet pool and taken back later, perhaps by another worker; the end of a worker that
 *   rte_eal_mp_wait_lcore() waits for;
 * - through a multi-producer rte_ring: a producer publishes its tail after waiting, with a
 *   relaxed load, for the earlier producers' tails; the consumer acquires only the last store,
 *   which in C11's model (TSan's) carries none of the earlier producers' writes, though every
 *   CPU DPDK runs on orders them (x86 TSO, ARMv8's cumulative release). A producer releases the
 *   ring before it enqueues, and the consumer acquires it after dequeueing.
 * Each is an ordering DPDK guarantees; these tell TSan about it. In every other build they are
 * DPDK's own calls, or nothing. */
#ifndef RSW_TM_TSAN_H
#define RSW_TM_TSAN_H

#include <rte_mbuf.h>

#if defined(__SANITIZE_THREAD__)
#define RSW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RSW_TSAN 1
#endif
#endif

#ifdef RSW_TSAN
#include <sanitizer/tsan_interface.h>
/* this thread's accesses so far happen before whatever follows an acquire of the same addr */
#define RSW_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#define RSW_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#else
#define RSW_TSAN_RELEASE(addr) ((void)(addr))
#define RSW_TSAN_ACQUIRE(addr) ((void)(addr))
#endif

/* mbufs leaving this thread for DPDK's code (a device's TX, rte_pktmbuf_free_bulk): each is
 * released on its own address, the key its next owner acquires */
static inline void rsw_mbufs_out(struct rte_mbuf *const *m, unsigned n)
{
#ifdef RSW_TSAN
	for (unsigned i = 0; i < n; i++)
		RSW_TSAN_RELEASE(m[i]);
#else
	(void)m;
	(void)n;
#endif
}

/* mbufs DPDK's code handed to this thread (a device's RX) */
static inline void rsw_mbufs_in(struct rte_mbuf *const *m, unsigned n)
{
#ifdef RSW_TSAN
	for (unsigned i = 0; i < n; i++)
		RSW_TSAN_ACQUIRE(m[i]);
#else
	(void)m;
	(void)n;
#endif
}

/* rte_pktmbuf_alloc, acquiring the mbuf before its fields are reset */
static inline struct rte_mbuf *rsw_mbuf_alloc(struct rte_mempool *mp)
{
#ifdef RSW_TSAN
	struct rte_mbuf *m = rte_mbuf_raw_alloc(mp);
	if (m) {
		RSW_TSAN_ACQUIRE(m);
		rte_pktmbuf_reset(m);
	}
	return m;
#else
	return rte_pktmbuf_alloc(mp);
#endif
}

/* rte_pktmbuf_free, releasing each segment after its last access and before the pool has it */
static inline void rsw_mbuf_free(struct rte_mbuf *m)
{
#ifdef RSW_TSAN
	while (m) {
		struct rte_mbuf *next = m->next;
		struct rte_mbuf *seg = rte_pktmbuf_prefree_seg(m);
		if (seg) {
			RSW_TSAN_RELEASE(seg);
			rte_mbuf_raw_free(seg);
		}
		m = next;
	}
#else
	rte_pktmbuf_free(m);
#endif
}

#endif
