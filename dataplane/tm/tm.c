#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ring.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/rewrite.h"
#include "counter.h"
#include "tm.h"
#include "tsan.h"

/* ---- VOQs ---- */

/* Live VOQs are rings (tm->voq_slots: packets each holds), replay's lists (voq_slots 0). */

static unsigned voq_enqueue(const struct rsw_tm *tm, struct rsw_tm_port *tp, unsigned q,
			    struct rte_mbuf **pkts, unsigned n)
{
	if (tm->voq_slots) {
		struct rte_ring *r = tp->cold->ring[q];
		RSW_TSAN_RELEASE(r); /* the packets' contents, for ring_dequeue (tsan.h) */
		return rte_ring_enqueue_burst(r, (void **)pkts, n, NULL);
	}
	struct rsw_tm_queue *v = &tp->q[q];
	for (unsigned i = 0; i < n; i++) { /* (one segment each: next is NULL) */
		if (v->n++)
			v->last->next = pkts[i];
		else
			v->first = pkts[i];
		v->last = pkts[i];
	}
	return n;
}

static unsigned ring_dequeue(struct rte_ring *r, struct rte_mbuf **out, unsigned max)
{
	unsigned n = rte_ring_sc_dequeue_burst(r, (void **)out, max, NULL);
	RSW_TSAN_ACQUIRE(r);
	return n;
}

static unsigned list_dequeue(struct rsw_tm_queue *v, struct rte_mbuf **out, unsigned max)
{
	unsigned n = v->n < max ? v->n : max;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = v->first;
		v->first = m->next;
		m->next = NULL;
		out[i] = m;
	}
	v->n -= n;
	return n;
}

/* Packets in a VOQ, also read by other threads than the ring's users (the stats): what
 * rte_ring_count() computes, with the tails loaded atomically (it reads them plainly). */
static uint64_t voq_count(const struct rsw_tm_port *tp, unsigned q)
{
	const struct rte_ring *r = tp->cold->ring[q];
	if (!r)
		return tp->q[q].n;
	uint32_t n = (__atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED) -
		      __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED)) & r->mask;
	return n > r->capacity ? r->capacity : n;
}

/* ---- set-up ---- */

static uint64_t hdrm_pkts_all(const struct rsw_tm_config *tc, uint16_t n_ports)
{
	uint64_t n = 0;
	for (uint16_t p = 0; p < n_ports; p++)
		for (unsigned g = 0; g < RSW_TM_PGS; g++)
			n += rsw_buf_hdrm_pkts(&tc->port[p].pg[g]);
	return n;
}

static uint64_t desc_for(const struct rsw_tm_config *tc, uint16_t n_ports, uint64_t all)
{
	uint64_t h = hdrm_pkts_all(tc, n_ports), floor = (uint64_t)n_ports * 256;
	return all > h + floor ? all - h : floor;
}

uint64_t rsw_tm_live_desc(const struct rsw_tm_config *tc, uint16_t n_ports)
{
	return desc_for(tc, n_ports, (uint64_t)n_ports * RSW_TM_DESC_PER_PORT);
}

uint64_t rsw_tm_live_hold(const struct rsw_tm_config *tc, uint16_t n_ports, unsigned producers,
			  uint64_t budget)
{
	return desc_for(tc, n_ports, budget) + hdrm_pkts_all(tc, n_ports) + 64u * producers;
}

void rsw_tm_live_limit(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint64_t budget)
{
	uint64_t d = desc_for(tc, tm->n_ports, budget);
	if (tm->desc.size && d < tm->desc.size)
		tm->desc.size = d;
}

static const struct rsw_tm_port_cold idle_cold;
const struct rsw_tm_port rsw_tm_port_idle = {.cold = (struct rsw_tm_port_cold *)&idle_cold};

struct rsw_tm_port *rsw_tm_port_make(struct rsw_tm *tm, uint16_t p)
{
	/* the region has room for every port of every TM given it: the next one is this port's */
	struct rsw_tm_region *rg = tm->region;
	struct rsw_tm_port *tp = &rg->hot[rg->used];
	struct rsw_tm_port_cold *cold = &rg->cold[rg->used++];
	const struct rsw_tm_port_seed *sd = &tm->seed[p];
	memset(tp, 0, sizeof(*tp));
	memset(cold, 0, sizeof(*cold));
	tp->cold = cold;
	for (unsigned g = 0; g < RSW_TM_PGS; g++)
		tp->pg[g].hdrm_pkts_max = sd->hdrm_pkts_max[g];
	rsw_shaper_init(&tp->shaper, sd->shaper_mbps, tm->shaper_burst_ns);
	/* seeded per port: the same seed gives the same marks run after run */
	tp->rng = (tm->ecn_seed + 1) * 0x9E3779B97F4A7C15ULL + p * 0xBF58476D1CE4E5B9ULL;
	tp->rng_in = tp->rng ^ 0x94D049BB133111EBULL;
	if (!tp->rng)
		tp->rng = 1;
	if (!tp->rng_in)
		tp->rng_in = 1;
	tm->port[p] = tp;
	return tp;
}

/* Live: every port's record now, in port order, with its VOQ rings. */
static int make_live_ports(struct rsw_tm *tm, const char *name, char *err, size_t errlen)
{
	for (uint16_t p = 0; p < tm->n_ports; p++) {
		struct rsw_tm_port *tp = rsw_tm_port_make(tm, p);
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			char rn[RTE_RING_NAMESIZE];
			snprintf(rn, sizeof(rn), "%s-%u-%u", name, p, q);
			unsigned flags = RING_F_SC_DEQ | (tm->mt ? 0 : RING_F_SP_ENQ);
			tp->cold->ring[q] = rte_ring_create(rn, rte_align32pow2(tm->voq_slots + 1),
							    SOCKET_ID_ANY, flags);
			if (!tp->cold->ring[q]) {
				snprintf(err, errlen, "cannot create VOQ %s of %u packets: %s", rn,
					 tm->voq_slots, rte_strerror(rte_errno));
				return -1;
			}
		}
	}
	return 0;
}

static struct rsw_tm *tm_alloc(const char *name, uint16_t n_ports, unsigned producers,
			       const struct rsw_tm_config *tc, uint64_t shaper_burst_ns, int growing,
			       struct rsw_tm_region *region, char *err, size_t errlen)
{
	size_t sz = sizeof(struct rsw_tm) + n_ports * sizeof(struct rsw_tm_port *);
	struct rsw_tm *tm = calloc(1, sz);
	if (!tm) {
		snprintf(err, errlen, "out of memory for the traffic manager");
		return NULL;
	}
	tm->n_ports = n_ports;
	tm->mt = producers > 1;
	tm->ecn_seed = tc->pools.ecn_seed;
	tm->shaper_burst_ns = shaper_burst_ns;
	if (region && region->n - region->reserved < n_ports) {
		snprintf(err, errlen, "the traffic managers' region has room for %zu more ports, "
			 "not %u", region->n - region->reserved, n_ports);
		free(tm);
		return NULL;
	}
	tm->region = region ? rsw_tm_region_hold(region) : rsw_tm_region_new(n_ports);
	if (tm->region)
		tm->region->reserved += n_ports;
	tm->seed = calloc(n_ports ? n_ports : 1, sizeof(*tm->seed));
	if (!tm->region || !tm->seed) {
		snprintf(err, errlen, "out of memory for the traffic manager");
		rsw_tm_free(tm);
		return NULL;
	}
	for (uint16_t p = 0; p < n_ports; p++) {
		const struct rsw_tm_port_cfg *cfg = &tc->port[p];
		for (unsigned g = 0; g < RSW_TM_PGS; g++)
			tm->seed[p].hdrm_pkts_max[g] = (uint32_t)rsw_buf_hdrm_pkts(&cfg->pg[g]);
		tm->seed[p].shaper_mbps = cfg->unshaped ? 0 : tc->speed_mbps[p];
	}
	if (growing)
		return tm;
	/* every packet the descriptors and headrooms let in fits any one ring, with room for
	 * what concurrent admissions may overshoot by (a burst per producer) */
	tm->desc.size = rsw_tm_live_desc(tc, n_ports);
	tm->voq_slots = (uint32_t)(tm->desc.size + hdrm_pkts_all(tc, n_ports) + 64u * producers);
	if (make_live_ports(tm, name, err, errlen) < 0) {
		rsw_tm_free(tm);
		return NULL;
	}
	return tm;
}

struct rsw_tm *rsw_tm_new(const char *name, uint16_t n_ports, unsigned producers,
			  const struct rsw_tm_config *tc, uint64_t shaper_burst_ns, char *err,
			  size_t errlen)
{
	return tm_alloc(name, n_ports, producers, tc, shaper_burst_ns, 0, NULL, err, errlen);
}

struct rsw_tm *rsw_tm_new_growing(uint16_t n_ports, const struct rsw_tm_config *tc,
				  uint64_t shaper_burst_ns, struct rsw_tm_region *region,
				  char *err, size_t errlen)
{
	return tm_alloc(NULL, n_ports, 1, tc, shaper_burst_ns, 1, region, err, errlen);
}

void rsw_tm_free(struct rsw_tm *tm)
{
	if (!tm)
		return;
	for (uint16_t p = 0; p < tm->n_ports; p++) {
		struct rsw_tm_port *tp = tm->port[p];
		if (!tp)
			continue;
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			for (unsigned k = tp->c_head[q]; k < tp->c_n[q]; k++)
				rsw_mbuf_free(tp->cold->cache[q][k]);
			struct rte_mbuf *m;
			struct rte_ring *r = tp->cold->ring[q];
			while (r ? ring_dequeue(r, &m, 1) : list_dequeue(&tp->q[q], &m, 1))
				rsw_mbuf_free(m);
			rte_ring_free(r);
		}
	}
	rsw_tm_region_put(tm->region);
	free(tm->seed);
	free(tm);
}

/* n packets of len bytes in all leave PG pg of port in */
static void release_pg(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t in, unsigned pg,
		       uint32_t len, unsigned n)
{
	struct rsw_buf_use *u = &tm->port[in]->pg[pg].use; /* made when the packets were admitted */
	const struct rsw_tm_pg_hot_cfg *gh = &tc->pg_hot[in][pg];
	if (!gh->pooled) {
		__atomic_fetch_sub(&u->bytes, len, __ATOMIC_RELAXED);
		return;
	}
	const struct rsw_buf_profile_cfg *p = &gh->prof;
	uint32_t hdrm = rsw_buf_release(u, p, &tm->pool_used[p->pool], len, tm->mt);
	if (hdrm && tc->pools.pool[p->pool].xoff)
		__atomic_fetch_sub(&tm->pool_hdrm[p->pool], hdrm, __ATOMIC_RELAXED);
	rsw_buf_pkts_release(u, &tm->desc, n, tm->mt);
}

static void release_q(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t eport, unsigned q,
		      uint32_t len, unsigned n)
{
	struct rsw_buf_count *c = &tm->port[eport]->q[q].use; /* made when they were admitted */
	const struct rsw_tm_queue_hot_cfg *qh = &tc->queue_hot[eport][q];
	if (!qh->pooled) {
		__atomic_fetch_sub(&c->bytes, len, __ATOMIC_RELAXED);
		return;
	}
	const struct rsw_buf_profile_cfg *p = &qh->prof;
	rsw_buf_queue_release(c, p, &tm->pool_used[p->pool], len, n, tm->mt);
}

/* Undoes the buffer charges of a packet leaving the TM other than by the scheduler. */
static void release(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t eport,
		    struct rte_mbuf *m)
{
	const struct rsw_tm_tag *t = rsw_tm_tag(m);
	release_pg(tm, tc, t->in_port, t->pg, m->pkt_len, 1);
	release_q(tm, tc, eport, t->queue, m->pkt_len, 1);
}

static void note_pool_peak(struct rsw_tm *tm, unsigned pool)
{
	rsw_buf_max(&tm->pool_peak[pool], __atomic_load_n(&tm->pool_used[pool], __ATOMIC_RELAXED));
}

static inline struct rsw_tm_tag *tag(struct rte_mbuf *m, const struct rsw_pkt_meta *meta)
{
	struct rsw_tm_tag *t = rsw_tm_tag(m);
	/* whole stores: the main lcore may read a queued packet's source as it is reused
	 * (tm_walk.c); plain moves on x86-64 and ARMv8 */
	__atomic_store_n(&t->in_port, meta->in_port, __ATOMIC_RELAXED);
	t->l3_off = meta->l3_off;
	__atomic_store_n(&t->pg, (uint8_t)(meta->pg & 7), __ATOMIC_RELAXED);
	t->queue = meta->tc & 7;
	t->l3 = meta->l3;
	t->marked = 0;
	return t;
}

unsigned rsw_tm_admit_bin(struct rsw_tm *tm, const struct rsw_tm_config *tc, struct rte_mbuf **pkts,
			  const struct rsw_pkt_meta *const *meta, unsigned n, uint8_t *verdict)
{
	const struct rsw_pkt_meta *m0 = meta[0];
	uint16_t in = m0->in_port, e = m0->egress_port;
	uint8_t q = m0->tc & 7, pg = m0->pg & 7;
	struct rsw_tm_queue *eq = &rsw_tm_port_use(tm, e)->q[q];
	struct rsw_tm_pg_hot *ig = &rsw_tm_port_use(tm, in)->pg[pg];
	const struct rsw_tm_queue_hot_cfg *qh = &tc->queue_hot[e][q];
	const struct rsw_buf_profile_cfg *qp = &qh->prof, *gp = &tc->pg_hot[in][pg].prof;
	const struct rsw_buf_pool_cfg *pools = tc->pools.pool;

	/* the whole bin at once when it plainly fits: one charge instead of one per packet */
	if (tc->pools.n_pools && !__atomic_load_n(&eq->storm, __ATOMIC_RELAXED) &&
	    !qh->mark_on_enqueue) {
		uint64_t total = 0;
		for (unsigned i = 0; i < n; i++)
			total += pkts[i]->pkt_len;
		if (rsw_buf_queue_fits_all(&eq->use, qp, &pools[qp->pool], &tm->pool_used[qp->pool],
					   total) &&
		    rsw_buf_pg_fits_all(&ig->use, gp, &pools[gp->pool], &tm->pool_used[gp->pool],
					total, &tm->desc, n)) {
			rsw_buf_charge(&ig->use, gp, &tm->pool_used[gp->pool], total, tm->mt);
			rsw_buf_pkts_charge(&ig->use, &tm->desc, n, tm->mt);
			rsw_buf_queue_charge(&eq->use, qp, &tm->pool_used[qp->pool], total, n, tm->mt);
			note_pool_peak(tm, gp->pool);
			note_pool_peak(tm, qp->pool);
			for (unsigned i = 0; i < n; i++) {
				tag(pkts[i], meta[i]);
				verdict[i] = 0;
			}
			return n;
		}
	}
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		verdict[i] = (uint8_t)rsw_tm_admit(tm, tc, pkts[i], meta[i]);
		k += verdict[i] == 0;
	}
	return k;
}

unsigned rsw_tm_admit(struct rsw_tm *tm, const struct rsw_tm_config *tc, struct rte_mbuf *m,
		      const struct rsw_pkt_meta *meta)
{
	uint16_t in = meta->in_port, e = meta->egress_port;
	uint8_t q = meta->tc & 7, pg = meta->pg & 7;
	uint32_t len = m->pkt_len;
	struct rsw_tm_port *ep = rsw_tm_port_use(tm, e), *ip = rsw_tm_port_use(tm, in);
	struct rsw_tm_queue *eq = &ep->q[q];
	struct rsw_tm_pg_hot *ig = &ip->pg[pg];
	const struct rsw_tm_queue_hot_cfg *qh = &tc->queue_hot[e][q];

	if (__atomic_load_n(&eq->storm, __ATOMIC_RELAXED) && qh->wd_drop) {
		__atomic_fetch_add(&ep->cold->qd[q].pfcwd_dropped, 1, __ATOMIC_RELAXED);
		return RSW_DROP_PFCWD_DROP;
	}
	uint64_t qbytes = __atomic_load_n(&eq->use.bytes, __ATOMIC_RELAXED);
	if (tc->pools.n_pools) {
		const struct rsw_buf_profile_cfg *qp = &qh->prof, *gp = &tc->pg_hot[in][pg].prof;
		const struct rsw_buf_pool_cfg *pools = tc->pools.pool;
		unsigned reason = 0;
		if (!rsw_buf_queue_fits(&eq->use, qp, &pools[qp->pool], &tm->pool_used[qp->pool], len))
			reason = RSW_DROP_QUEUE_TAIL_DROP;
		else if (rsw_buf_pg_admit(&ig->use, gp, &pools[gp->pool], &tm->pool_used[gp->pool],
					  len, tm->mt, &tm->desc, ig->hdrm_pkts_max,
					  &tm->pool_hdrm[gp->pool]) == RSW_BUF_DROP)
			reason = gp->lossless ? RSW_DROP_HEADROOM_OVERFLOW : RSW_DROP_PG_THRESHOLD;
		if (reason) {
			__atomic_fetch_add(&ep->cold->qd[q].dropped_packets, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&ep->cold->qd[q].dropped_bytes, len, __ATOMIC_RELAXED);
			return reason;
		}
		rsw_buf_queue_charge(&eq->use, qp, &tm->pool_used[qp->pool], len, 1, tm->mt);
		note_pool_peak(tm, gp->pool);
		note_pool_peak(tm, qp->pool);
	} else {
		__atomic_fetch_add(&ig->use.bytes, len, __ATOMIC_RELAXED);
		__atomic_fetch_add(&eq->use.bytes, len, __ATOMIC_RELAXED);
	}
	struct rsw_tm_tag *t = tag(m, meta);
	/* the workers of the ingress port's RX queues admit: they draw from its random source
	 * with relaxed loads and stores (two may draw the same number; no torn state, and one
	 * worker's sequence is the single-queue one) */
	if (qh->mark_on_enqueue && meta->ecn) {
		const struct rsw_wred *w = &qh->wred;
		uint64_t rng = __atomic_load_n(&ip->rng_in, __ATOMIC_RELAXED);
		int mark = rsw_wred_mark(w, qbytes, &rng);
		__atomic_store_n(&ip->rng_in, rng, __ATOMIC_RELAXED);
		if (mark)
			t->marked = (uint8_t)rsw_rewrite_ecn_ce_at(rte_pktmbuf_mtod(m, uint8_t *),
								   t->l3, t->l3_off);
	}
	return 0;
}

unsigned rsw_tm_enqueue_burst(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			      uint8_t queue, struct rte_mbuf **pkts, unsigned n)
{
	struct rsw_tm_port *ep = rsw_tm_port_use(tm, port);
	unsigned k = voq_enqueue(tm, ep, queue, pkts, n);
	if (k) {
		if (tm->mt)
			__atomic_fetch_or(&ep->busy, (uint8_t)(1u << queue), __ATOMIC_SEQ_CST);
		else
			ep->busy |= (uint8_t)(1u << queue);
	}
	for (unsigned j = k; j < n; j++) {
		release(tm, tc, port, pkts[j]);
		__atomic_fetch_add(&ep->cold->qd[queue].dropped_packets, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&ep->cold->qd[queue].dropped_bytes, pkts[j]->pkt_len,
				   __ATOMIC_RELAXED);
	}
	return k;
}

/* What the owner's cache holds, for rsw_tm_queued on another thread. */
static void publish_cached(struct rsw_tm_port *ep)
{
	/* the eight queues' counts at once: each c_n[q] >= c_head[q] (no borrow between bytes),
	 * and their sum fits the top byte of the multiply */
	_Static_assert(RSW_TM_QUEUES * RSW_TM_DEQ_BURST < 256, "cached packets in a byte");
	uint64_t c_head, c_n;
	memcpy(&c_head, ep->c_head, sizeof(c_head));
	memcpy(&c_n, ep->c_n, sizeof(c_n));
	RSW_CNT_SET(ep->cached, (uint32_t)(((c_n - c_head) * 0x0101010101010101ull) >> 56));
}

/* The owner's cache of a live VOQ is also read by another thread (tm_walk.c, the deadlock
 * detector), so the owner stores its indexes and slots whole (relaxed atomics: plain stores on
 * the CPUs DPDK runs on); the owner's own reads need nothing. */
static inline void cache_index_set(uint8_t *at, unsigned v)
{
	__atomic_store_n(at, (uint8_t)v, __ATOMIC_RELAXED);
}

/* The head peek() returned, taken off. */
static inline struct rte_mbuf *take(const struct rsw_tm *tm, struct rsw_tm_port *ep, unsigned q)
{
	if (!tm->voq_slots) {
		struct rte_mbuf *m;
		list_dequeue(&ep->q[q], &m, 1);
		return m;
	}
	uint8_t h = ep->c_head[q];
	cache_index_set(&ep->c_head[q], h + 1u);
	return ep->cold->cache[q][h];
}

/* A burst of a ring VOQ into its owner's cache. */
static unsigned cache_fill(struct rsw_tm_port *ep, unsigned q)
{
	struct rte_mbuf *got[RSW_TM_DEQ_BURST];
	unsigned n = ring_dequeue(ep->cold->ring[q], got, RSW_TM_DEQ_BURST);
	for (unsigned i = 0; i < n; i++)
		__atomic_store_n(&ep->cold->cache[q][i], got[i], __ATOMIC_RELAXED);
	cache_index_set(&ep->c_n[q], n);
	return n;
}

static inline void busy_clear(struct rsw_tm *tm, struct rsw_tm_port *ep, unsigned q)
{
	if (tm->mt)
		__atomic_fetch_and(&ep->busy, (uint8_t)~(1u << q), __ATOMIC_SEQ_CST);
	else
		ep->busy &= (uint8_t)~(1u << q);
}

static inline struct rte_mbuf *peek(struct rsw_tm *tm, struct rsw_tm_port *ep, unsigned q)
{
	if (!tm->voq_slots) {
		const struct rsw_tm_queue *v = &ep->q[q];
		/* a list (replay's growing VOQs, one thread): its head in place, never cached, so
		 * each packet's link (its second line) is read once, as it goes */
		if (v->n)
			return v->first;
		busy_clear(tm, ep, q);
		return NULL;
	}
	if (ep->c_head[q] != ep->c_n[q])
		return ep->cold->cache[q][ep->c_head[q]];
	cache_index_set(&ep->c_head[q], 0);
	cache_index_set(&ep->c_n[q], 0);
	if (!(__atomic_load_n(&ep->busy, __ATOMIC_RELAXED) & (1u << q)))
		return NULL;
	if (cache_fill(ep, q) == 0) {
		/* clear, then look again: a producer that enqueued meanwhile set the bit after its
		 * enqueue, so either this second look or the next call sees its packets */
		busy_clear(tm, ep, q);
		if (cache_fill(ep, q) == 0)
			return NULL;
		if (tm->mt)
			__atomic_fetch_or(&ep->busy, (uint8_t)(1u << q), __ATOMIC_SEQ_CST);
		else
			ep->busy |= (uint8_t)(1u << q);
	}
	return ep->cold->cache[q][0];
}

/* The heads of the queues that can have one (packets cached or a VOQ marked busy): their lengths
 * in head_len; returns the queues that have one. */
static uint8_t look_heads(struct rsw_tm *tm, struct rsw_tm_port *ep, uint8_t cached,
			  uint32_t head_len[RSW_TM_QUEUES])
{
	uint8_t nonempty = 0;
	uint8_t look = __atomic_load_n(&ep->busy, __ATOMIC_RELAXED) | cached;
	for (unsigned bits = look; bits; bits &= bits - 1) {
		unsigned q = (unsigned)__builtin_ctz(bits);
		struct rte_mbuf *h = peek(tm, ep, q);
		head_len[q] = h ? h->pkt_len : 0;
		nonempty |= (uint8_t)((h != NULL) << q);
	}
	return nonempty;
}

unsigned rsw_tm_dequeue(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			uint64_t now_ns, struct rte_mbuf **out, unsigned max)
{
	struct rsw_tm_port *ep = rsw_tm_port_use(tm, port);
	const struct rsw_tm_port_cfg *cfg = &tc->port[port];
	if (!ep->sched_ready) {
		rsw_sched_init(&ep->sched, &cfg->sched);
		ep->sched_ready = 1;
	}
	/* nothing cached and no VOQ marked busy (a port that only receives): the heads, the
	 * scheduler and the releases below would all find nothing */
	_Static_assert(sizeof(ep->c_head) == sizeof(uint64_t), "eight queues' cache indexes");
	uint64_t c_head, c_n;
	memcpy(&c_head, ep->c_head, sizeof(c_head));
	memcpy(&c_n, ep->c_n, sizeof(c_n));
	if (c_head == c_n && !__atomic_load_n(&ep->busy, __ATOMIC_RELAXED))
		return 0;
	uint8_t eligible = (uint8_t)~rsw_pause_mask(&ep->pause, now_ns);
	unsigned n = 0;
	/* heads are looked at once per call; a queue that fills meanwhile waits for the next */
	uint32_t head_len[RSW_TM_QUEUES] = {0};
	uint8_t nonempty = look_heads(tm, ep, rsw_tm_byte_mask(c_head ^ c_n), head_len);
	/* Buffer releases are summed over the call (per queue, and per run of packets from one
	 * ingress PG) and applied once; the ECN check subtracts what is not applied yet. */
	uint32_t q_rel[RSW_TM_QUEUES] = {0}, run_len = 0;
	uint16_t q_reln[RSW_TM_QUEUES] = {0};
	uint8_t released = 0; /* the queues q_rel holds bytes of */
	unsigned run_n = 0;
	uint16_t run_in = 0;
	uint8_t run_pg = 0;
	while (n < max && rsw_shaper_ready(&ep->shaper, now_ns)) {
		int q = rsw_sched_pick(&ep->sched, head_len, nonempty & eligible);
		if (q < 0)
			break;
		struct rte_mbuf *m = take(tm, ep, (unsigned)q);
		struct rsw_tm_tag *t = rsw_tm_tag(m);
		const struct rsw_tm_queue_hot_cfg *qh = &tc->queue_hot[port][q];
		/* instantaneous queue bytes, this packet included */
		uint64_t qbytes = __atomic_load_n(&ep->q[q].use.bytes, __ATOMIC_RELAXED) - q_rel[q];
		/* at or below Kmin nothing is marked: the curve's line is not read */
		if (!qh->mark_on_enqueue && qh->ecn && qbytes > qh->kmin &&
		    rsw_wred_mark(&qh->wred, qbytes, &ep->rng))
			t->marked = (uint8_t)rsw_rewrite_ecn_ce_at(rte_pktmbuf_mtod(m, uint8_t *), t->l3,
								   t->l3_off);
		if (t->marked)
			RSW_CNT_ADD(ep->cold->qd[q].ecn_marked_packets, 1);
		uint32_t len = m->pkt_len;
		if (run_len && (run_in != t->in_port || run_pg != t->pg)) {
			release_pg(tm, tc, run_in, run_pg, run_len, run_n);
			run_len = 0;
			run_n = 0;
		}
		run_in = t->in_port;
		run_pg = t->pg;
		run_len += len;
		run_n++;
		q_rel[q] += len;
		q_reln[q]++;
		released |= (uint8_t)(1u << q);
		struct rte_mbuf *next = peek(tm, ep, (unsigned)q);
		head_len[q] = next ? next->pkt_len : 0;
		if (!next)
			nonempty &= (uint8_t)~(1u << q);
		rsw_sched_charge(&ep->sched, q, len, next == NULL);
		rsw_shaper_send(&ep->shaper, now_ns, len);
		RSW_CNT_ADD(ep->q[q].packets, 1);
		RSW_CNT_ADD(ep->q[q].bytes, len);
		out[n++] = m;
	}
	if (run_len)
		release_pg(tm, tc, run_in, run_pg, run_len, run_n);
	for (unsigned bits = released; bits; bits &= bits - 1) {
		unsigned q = (unsigned)__builtin_ctz(bits);
		release_q(tm, tc, port, q, q_rel[q], q_reln[q]);
	}
	publish_cached(ep);
	return n;
}

void rsw_tm_pause_rx(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
		     const struct rsw_pkt_meta *meta, uint64_t arrived_after_ns, uint64_t now_ns)
{
	struct rsw_tm_port *ep = rsw_tm_port_use(tm, port);
	int pause = meta->l2_kind == RSW_L2_PAUSE;
	uint8_t enable = pause ? 0xFF : meta->pfc_class_enable;
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++)
		if (enable & (1u << i))
			rsw_pfcwd_pfc_rx(&ep->cold->wd[i], now_ns);
	/* PFC pauses only the port's lossless priorities; 802.3x PAUSE the whole link. Queues
	 * whose watchdog fired (forward/drop action) ignore it until restored. */
	ep->pause.ignore_mask = ep->wd_ignore;
	if (!pause)
		ep->pause.ignore_mask |= (uint8_t)~tc->port[port].pfc_enable;
	rsw_pause_rx_since(&ep->pause, enable, meta->pfc_time, pause, arrived_after_ns, now_ns,
			   tc->speed_mbps[port]);
}

void rsw_tm_config_finish(struct rsw_tm_config *c)
{
	for (unsigned p = 0; p < RSW_TM_MAX_PORTS; p++) {
		struct rsw_tm_port_brief *b = &c->brief[p];
		b->pfc_enable = c->port[p].pfc_enable;
		b->wd_enable = 0;
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
			if (c->port[p].wd[q].enabled)
				b->wd_enable |= (uint8_t)(1u << q);
		/* XOFF refresh at half the pause time: the peer never resumes while we are above
		 * XON */
		b->refresh_ns = c->speed_mbps[p] ?
			rsw_pause_ns(c->port[p].pfc_pause_quanta, c->speed_mbps[p]) / 2 : 0;
		/* saturated: a PG above 4 GiB only gets the full check */
		for (unsigned pg = 0; pg < RSW_TM_PGS; pg++) {
			uint64_t r = c->port[p].pg[pg].reserved;
			b->pg_reserved[pg] = r < UINT32_MAX ? (uint32_t)r : UINT32_MAX;
		}
		if (p >= c->n_ports)
			continue; /* no such port: its records are never read */
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			struct rsw_tm_queue_hot_cfg *h = &c->queue_hot[p][q];
			h->prof = c->port[p].queue[q];
			h->wd_drop = c->port[p].wd[q].action == RSW_PFCWD_DROP;
			h->wred = c->port[p].wred[q];
			h->mark_on_enqueue = h->wred.mark_on_enqueue;
			h->ecn = h->wred.ecn;
			h->pooled = c->pools.n_pools != 0;
			h->kmin = h->wred.kmin;
		}
		for (unsigned pg = 0; pg < RSW_TM_PGS; pg++) {
			c->pg_hot[p][pg].prof = c->port[p].pg[pg];
			c->pg_hot[p][pg].pfc = (b->pfc_enable >> pg) & 1;
			c->pg_hot[p][pg].pooled = c->pools.n_pools != 0;
		}
	}
}

uint64_t rsw_tm_ctrl_next(const struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			  uint64_t now_ns)
{
	const struct rsw_tm_port_brief *b = &tc->brief[port];
	const struct rsw_tm_port *tp = rsw_tm_port_read(tm, port);
	uint64_t next = UINT64_MAX;
	for (unsigned bits = tp->xoff_pgs; bits; bits &= bits - 1) {
		unsigned pg = (unsigned)__builtin_ctz(bits);
		if (tp->cold->gen[pg].last_sent_ns + b->refresh_ns < next)
			next = tp->cold->gen[pg].last_sent_ns + b->refresh_ns;
	}
	if (!b->wd_enable)
		return next;
	uint8_t paused = rsw_pause_mask(&tp->pause, now_ns);
	for (unsigned bits = b->wd_enable; bits; bits &= bits - 1) {
		unsigned q = (unsigned)__builtin_ctz(bits);
		if (tp->cold->wd[q].storm || (paused & (1u << q))) {
			if (tp->next_wd_poll_ns < next)
				next = tp->next_wd_poll_ns;
			break;
		}
	}
	return next;
}

int rsw_tm_pfc_may_act(const struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
		       unsigned pg)
{
	const struct rsw_tm_port *ip = rsw_tm_port_read(tm, port);
	if (__atomic_load_n(&ip->pg[pg].port_xoff, __ATOMIC_RELAXED))
		return 1;
	const struct rsw_tm_pg_hot_cfg *gh = &tc->pg_hot[port][pg];
	if (!gh->pfc || tc->pools.n_pools == 0)
		return 0;
	const struct rsw_buf_profile_cfg *gp = &gh->prof;
	return rsw_buf_pg_over_xoff(&ip->pg[pg].use, gp, &tc->pools.pool[gp->pool],
				    &tm->pool_used[gp->pool], &tm->desc);
}

int rsw_tm_pfc_due(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
		   uint64_t now_ns, uint8_t *class_enable, uint16_t time[8])
{
	const struct rsw_tm_port_brief *b = &tc->brief[port];
	struct rsw_tm_port *ip = rsw_tm_port_use(tm, port);
	const struct rsw_buf_pool_cfg *pools = tc->pools.pool;
	*class_enable = 0;
	if (!b->pfc_enable || tc->pools.n_pools == 0)
		return 0;
	const struct rsw_tm_port_cfg *cfg = &tc->port[port];
	uint64_t refresh = b->refresh_ns;
	memset(time, 0, RSW_TM_PGS * sizeof(time[0]));
	/* only the lossless PGs, in order: most of a port's eight are not */
	for (unsigned bits = b->pfc_enable; bits; bits &= bits - 1) {
		unsigned pg = (unsigned)__builtin_ctz(bits);
		/* an idle PG with no XOFF in force has nothing to say: skip the threshold math
		 * (and the profile's settings) */
		if (!(ip->xoff_pgs & (1u << pg)) &&
		    __atomic_load_n(&ip->pg[pg].use.bytes, __ATOMIC_RELAXED) <= b->pg_reserved[pg] &&
		    __atomic_load_n(&ip->pg[pg].use.hdrm, __ATOMIC_RELAXED) == 0 &&
		    __atomic_load_n(&ip->pg[pg].use.hdrm_pkts, __ATOMIC_RELAXED) == 0 &&
		    (!tm->desc.size || __atomic_load_n(&ip->pg[pg].use.pkts, __ATOMIC_RELAXED) == 0))
			continue;
		const struct rsw_buf_profile_cfg *gp = &tc->pg_hot[port][pg].prof;
		int over = rsw_buf_pg_over_xoff(&ip->pg[pg].use, gp, &pools[gp->pool],
						&tm->pool_used[gp->pool], &tm->desc);
		int below = rsw_buf_pg_below_xon(&ip->pg[pg].use, gp, &pools[gp->pool],
						 &tm->pool_used[gp->pool], &tm->desc);
		struct rsw_pfc_gen *gen = &ip->cold->gen[pg];
		enum rsw_pfc_action a = rsw_pfc_gen_poll(gen, over, below, now_ns, refresh);
		if (a == RSW_PFC_NONE)
			continue;
		/* only the owner writes it; the main lcore reads it (show deadlock, counters) */
		uint8_t x = gen->xoff ? (uint8_t)(ip->xoff_pgs | 1u << pg)
				      : (uint8_t)(ip->xoff_pgs & ~(1u << pg));
		if (!x != !ip->xoff_pgs)
			for (unsigned g = 0; g < RSW_TM_PGS; g++)
				__atomic_store_n(&ip->pg[g].port_xoff, (uint8_t)(x != 0),
						 __ATOMIC_RELAXED);
		__atomic_store_n(&ip->xoff_pgs, x, __ATOMIC_RELAXED);
		*class_enable |= (uint8_t)(1u << pg);
		time[pg] = a == RSW_PFC_SEND_XOFF ? cfg->pfc_pause_quanta : 0;
		RSW_CNT_ADD(gen->tx_frames, 1);
	}
	return *class_enable != 0;
}

static void logf_tm(struct rsw_tm *tm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_tm(struct rsw_tm *tm, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (tm->log)
		tm->log(tm->log_arg, line);
}

/* Drop action: everything queued on (port, q) is discarded and counted. */
static uint64_t flush_queue(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			    unsigned q)
{
	struct rsw_tm_port *ep = rsw_tm_port_use(tm, port);
	struct rte_mbuf *m;
	uint64_t n = 0;
	while ((m = peek(tm, ep, q)) != NULL) {
		take(tm, ep, q);
		const struct rsw_tm_tag *t = rsw_tm_tag(m);
		struct rsw_tm_queue_drops *qd = &ep->cold->qd[q];
		qd->pfcwd_flushed_lossless += tc->pg_hot[t->in_port][t->pg].prof.lossless;
		release(tm, tc, port, m);
		RSW_CNT_ADD(qd->pfcwd_flushed, 1);
		if (tm->flushed)
			tm->flushed(tm->log_arg, port, m);
		else
			rsw_mbuf_free(m);
		n++;
	}
	publish_cached(ep);
	return n;
}

uint64_t rsw_tm_watchdog(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port,
			 uint64_t now_ns)
{
	struct rsw_tm_port *ep = rsw_tm_port_use(tm, port);
	const struct rsw_tm_port_cfg *cfg = &tc->port[port];
	uint64_t flushed = 0;
	if (now_ns < ep->next_wd_poll_ns)
		return 0;
	/* polls at multiples of the interval, as a timer would: not at whichever event came */
	uint64_t poll = tc->pools.pfcwd_poll_ns ? tc->pools.pfcwd_poll_ns : 1;
	ep->next_wd_poll_ns = (now_ns / poll + 1) * poll;
	for (unsigned bits = tc->brief[port].wd_enable; bits; bits &= bits - 1) {
		unsigned q = (unsigned)__builtin_ctz(bits);
		const struct rsw_pfcwd_cfg *wc = &cfg->wd[q];
		enum rsw_pfcwd_event ev =
			rsw_pfcwd_poll(&ep->cold->wd[q], wc, rsw_pause_since(&ep->pause, q, now_ns),
				       now_ns);
		__atomic_store_n(&ep->q[q].storm, ep->cold->wd[q].storm, __ATOMIC_RELAXED);
		if (ev == RSW_PFCWD_DETECTED) {
			logf_tm(tm, "pfcwd: storm detected on %s queue %u, action %s",
				tc->port_name[port], q, rsw_pfcwd_action_name(wc->action));
			if (wc->action != RSW_PFCWD_ALERT) {
				ep->wd_ignore |= (uint8_t)(1u << q);
				rsw_pause_clear(&ep->pause, q, now_ns);
			}
			if (wc->action == RSW_PFCWD_DROP)
				flushed += flush_queue(tm, tc, port, q);
		} else if (ev == RSW_PFCWD_RESTORED) {
			logf_tm(tm, "pfcwd: storm restored on %s queue %u", tc->port_name[port], q);
			ep->wd_ignore &= (uint8_t)~(1u << q);
		}
	}
	return flushed;
}

void rsw_tm_pfcwd_stats(const struct rsw_tm *tm, uint16_t port, unsigned queue,
			uint64_t out[RSW_PFCWD_STATS])
{
	const struct rsw_tm_port *tp = rsw_tm_port_read(tm, port);
	const struct rsw_tm_queue_drops *s = &tp->cold->qd[queue];
	out[RSW_PFCWD_STAT_DETECTED] = RSW_CNT_GET(tp->cold->wd[queue].storms_detected);
	out[RSW_PFCWD_STAT_RESTORED] = RSW_CNT_GET(tp->cold->wd[queue].storms_restored);
	out[RSW_PFCWD_STAT_TX_DROPPED] = RSW_CNT_GET(s->pfcwd_dropped) +
					 RSW_CNT_GET(s->pfcwd_flushed);
}

void rsw_tm_port_stats(const struct rsw_tm *tm, uint16_t port, uint64_t now_ns,
		       struct rsw_tm_port_stats *s)
{
	const struct rsw_tm_port *tp = rsw_tm_port_read(tm, port);
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
		const struct rsw_tm_queue *qt = &tp->q[q];
		const struct rsw_tm_queue_drops *qd = &tp->cold->qd[q];
		s->qs[q] = (struct rsw_tm_queue_stats){
			.packets = RSW_CNT_GET(qt->packets), .bytes = RSW_CNT_GET(qt->bytes),
			.dropped_packets = RSW_CNT_GET(qd->dropped_packets),
			.dropped_bytes = RSW_CNT_GET(qd->dropped_bytes),
			.ecn_marked_packets = RSW_CNT_GET(qd->ecn_marked_packets),
			.pfcwd_dropped = RSW_CNT_GET(qd->pfcwd_dropped),
			.pfcwd_flushed = RSW_CNT_GET(qd->pfcwd_flushed)};
		s->q_peak[q] = RSW_CNT_GET(tp->q[q].use.peak);
		s->q_bytes[q] = RSW_CNT_GET(tp->q[q].use.bytes);
		s->wd_detected[q] = RSW_CNT_GET(tp->cold->wd[q].storms_detected);
		s->wd_restored[q] = RSW_CNT_GET(tp->cold->wd[q].storms_restored);
	}
	for (unsigned g = 0; g < RSW_TM_PGS; g++) {
		s->pg_peak[g] = RSW_CNT_GET(tp->pg[g].use.peak);
		s->pg_dropped[g] = RSW_CNT_GET(tp->pg[g].use.dropped_packets);
		s->pg_bytes[g] = RSW_CNT_GET(tp->pg[g].use.bytes);
		s->pg_hdrm[g] = RSW_CNT_GET(tp->pg[g].use.hdrm);
		s->pg_pkts[g] = RSW_CNT_GET(tp->pg[g].use.pkts) + RSW_CNT_GET(tp->pg[g].use.hdrm_pkts);
		s->pfc_tx[g] = RSW_CNT_GET(tp->cold->gen[g].tx_frames);
		s->xoff[g] = RSW_CNT_GET(tp->cold->gen[g].xoff_transitions);
		s->xon[g] = RSW_CNT_GET(tp->cold->gen[g].xon_transitions);
	}
	s->xoff_pgs = __atomic_load_n(&tp->xoff_pgs, __ATOMIC_RELAXED);
	s->paused = 0;
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++) {
		if (now_ns < RSW_CNT_GET(tp->pause.until_ns[i]))
			s->paused |= (uint8_t)(1u << i);
		s->pfc_rx[i] = RSW_CNT_GET(tp->pause.rx_frames[i]);
		s->paused_ns[i] = rsw_pause_total_ns(&tp->pause, i, now_ns);
	}
}

uint64_t rsw_tm_queued(const struct rsw_tm *tm)
{
	uint64_t n = 0;
	for (uint16_t p = 0; p < tm->n_ports; p++) {
		const struct rsw_tm_port *tp = tm->port[p];
		for (unsigned q = 0; tp && q < RSW_TM_QUEUES; q++)
			n += voq_count(tp, q);
		n += tp ? RSW_CNT_GET(tp->cached) : 0;
	}
	return n;
}

uint64_t rsw_tm_queue_bytes(const struct rsw_tm *tm, uint16_t port, unsigned queue)
{
	return __atomic_load_n(&rsw_tm_port_read(tm, port)->q[queue].use.bytes, __ATOMIC_RELAXED);
}

void rsw_tm_port_bytes(const struct rsw_tm *tm, uint16_t port, uint64_t *sent, uint64_t *queued)
{
	uint64_t s = 0, q = 0;
	for (unsigned i = 0; i < RSW_TM_QUEUES; i++) {
		s += __atomic_load_n(&rsw_tm_port_read(tm, port)->q[i].bytes, __ATOMIC_RELAXED);
		q += rsw_tm_queue_bytes(tm, port, i);
	}
	*sent = s;
	*queued = q;
}
