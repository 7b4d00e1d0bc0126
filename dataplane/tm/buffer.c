#include "buffer.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* Atomic read-modify-write only when several threads share the counters (mt): a lone worker or
 * the replay loop pays plain adds, as DPDK's rings do with their single-producer flags; the
 * store is still atomic (relaxed, a plain store on x86-64), since the stats read meanwhile. */
static inline uint64_t ADD(uint64_t *p, uint64_t v, int mt)
{
	if (mt)
		return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	uint64_t o = *p;
	__atomic_store_n(p, o + v, __ATOMIC_RELAXED);
	return o;
}

static inline uint64_t SUB(uint64_t *p, uint64_t v, int mt)
{
	if (mt)
		return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
	uint64_t o = *p;
	__atomic_store_n(p, o - v, __ATOMIC_RELAXED);
	return o;
}

uint64_t rsw_buf_threshold(const struct rsw_buf_profile_cfg *p, const struct rsw_buf_pool_cfg *pool,
			   uint64_t pool_used)
{
	if (!p->dynamic)
		return p->static_th;
	uint64_t free_b = pool->size > pool_used ? pool->size - pool_used : 0;
	return p->dynamic_th >= 0 ? free_b << p->dynamic_th : free_b >> -p->dynamic_th;
}

static inline uint64_t shared_of(uint64_t bytes, uint64_t reserved)
{
	return bytes > reserved ? bytes - reserved : 0;
}

static void note_peak(struct rsw_buf_use *u)
{
	rsw_buf_max(&u->peak, LD(&u->bytes) + LD(&u->hdrm));
}

/* Would len more bytes than b stay within the shared threshold and the pool? */
static int shared_fits(uint64_t b, const struct rsw_buf_profile_cfg *p,
		       const struct rsw_buf_pool_cfg *pool, uint64_t pool_used, uint32_t len)
{
	uint64_t grow = shared_of(b + len, p->reserved) - shared_of(b, p->reserved);
	if (grow == 0)
		return 1; /* within the reserve */
	return shared_of(b + len, p->reserved) <= rsw_buf_threshold(p, pool, pool_used) &&
	       pool_used + grow <= pool->size;
}

/* len more bytes in *bytes, and in the pool what of them is shared; returns the new bytes */
static uint64_t charge_bytes(uint64_t *bytes, const struct rsw_buf_profile_cfg *p,
			     uint64_t *pool_used, uint64_t len, int mt)
{
	uint64_t old = ADD(bytes, len, mt);
	uint64_t grow = shared_of(old + len, p->reserved) - shared_of(old, p->reserved);
	if (grow)
		ADD(pool_used, grow, mt);
	return old + len;
}

/* len fewer bytes in *bytes, and in the pool what of them was shared */
static void release_bytes(uint64_t *bytes, const struct rsw_buf_profile_cfg *p,
			  uint64_t *pool_used, uint64_t len, int mt)
{
	uint64_t old = SUB(bytes, len, mt);
	uint64_t shrink = shared_of(old, p->reserved) - shared_of(old - len, p->reserved);
	if (shrink)
		SUB(pool_used, shrink, mt);
}

static void charge(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p, uint64_t *pool_used,
		   uint64_t len, int mt)
{
	charge_bytes(&u->bytes, p, pool_used, len, mt);
	note_peak(u);
}

/* Takes up to n off *p (headroom first on release), atomically with mt; returns what it took. */
static uint64_t take_upto(uint64_t *p, uint64_t n, int mt)
{
	uint64_t h = LD(p), take = h < n ? h : n;
	if (take && mt) {
		while (!__atomic_compare_exchange_n(p, &h, h - take, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED)) {
			take = h < n ? h : n;
			if (!take)
				break;
		}
	} else if (take) {
		__atomic_store_n(p, h - take, __ATOMIC_RELAXED); /* read by the stats meanwhile */
	}
	return take;
}

static inline int limits_pkts(const struct rsw_buf_desc *d)
{
	return d && d->size;
}

uint64_t rsw_buf_pkts_threshold(const struct rsw_buf_profile_cfg *p, const struct rsw_buf_desc *d)
{
	if (!limits_pkts(d))
		return UINT64_MAX;
	if (!p->dynamic)
		return d->size;
	uint64_t used = LD(&d->used), free_d = d->size > used ? d->size - used : 0;
	return p->dynamic_th >= 0 ? free_d << p->dynamic_th : free_d >> -p->dynamic_th;
}

/* Would n more packets stay within the PG's packet threshold and the descriptor pool? Judged
 * with the n taken, as all_fit does for bytes. */
static int pkts_fit(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
		    const struct rsw_buf_desc *d, unsigned n)
{
	if (!limits_pkts(d))
		return 1;
	uint64_t used = LD(&d->used);
	if (used + n > d->size)
		return 0;
	struct rsw_buf_desc after = {.size = d->size, .used = used + n};
	return LD(&u->pkts) + n <= rsw_buf_pkts_threshold(p, &after);
}

static inline int in_headroom(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p)
{
	return p->lossless && (LD(&u->hdrm) || LD(&u->hdrm_pkts));
}

void rsw_buf_pkts_charge(struct rsw_buf_use *u, struct rsw_buf_desc *d, unsigned n, int mt)
{
	ADD(&u->pkts, n, mt);
	if (limits_pkts(d))
		ADD(&d->used, n, mt);
}

void rsw_buf_pkts_release(struct rsw_buf_use *u, struct rsw_buf_desc *d, unsigned n, int mt)
{
	unsigned rest = n - (unsigned)take_upto(&u->hdrm_pkts, n, mt);
	if (!rest)
		return;
	SUB(&u->pkts, rest, mt);
	if (limits_pkts(d))
		SUB(&d->used, rest, mt);
}

enum rsw_buf_verdict rsw_buf_pg_admit(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
				      const struct rsw_buf_pool_cfg *pool, uint64_t *pool_used,
				      uint32_t len, int mt, struct rsw_buf_desc *d,
				      uint64_t hdrm_pkts_max, uint64_t *pool_hdrm)
{
	/* once in headroom, stay there until it drains: XOFF is in force */
	if (!in_headroom(u, p) && shared_fits(LD(&u->bytes), p, pool, LD(pool_used), len) &&
	    pkts_fit(u, p, d, 1)) {
		charge(u, p, pool_used, len, mt);
		rsw_buf_pkts_charge(u, d, 1, mt);
		return RSW_BUF_ADMIT;
	}
	if (p->lossless && LD(&u->hdrm) + len <= p->xoff &&
	    (!limits_pkts(d) || LD(&u->hdrm_pkts) + 1 <= hdrm_pkts_max) &&
	    (!pool->xoff || LD(pool_hdrm) + len <= pool->xoff)) {
		if (pool->xoff)
			ADD(pool_hdrm, len, mt);
		ADD(&u->hdrm, len, mt);
		ADD(&u->hdrm_pkts, 1, mt);
		note_peak(u);
		return RSW_BUF_HEADROOM;
	}
	ADD(&u->dropped_packets, 1, mt);
	ADD(&u->dropped_bytes, len, mt);
	return RSW_BUF_DROP;
}

/* Would total bytes arriving together, on top of b, fit in shared space? Judged against the
 * threshold after all of them, so never more permissive than admitting them one at a time. */
static int all_fit(uint64_t b, const struct rsw_buf_profile_cfg *p,
		   const struct rsw_buf_pool_cfg *pool, uint64_t pool_used, uint64_t total)
{
	uint64_t grow = shared_of(b + total, p->reserved) - shared_of(b, p->reserved);
	if (grow == 0)
		return 1;
	return shared_of(b + total, p->reserved) <= rsw_buf_threshold(p, pool, pool_used + grow) &&
	       pool_used + grow <= pool->size;
}

int rsw_buf_pg_fits_all(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used, uint64_t total,
			const struct rsw_buf_desc *d, unsigned n)
{
	return !in_headroom(u, p) && all_fit(LD(&u->bytes), p, pool, LD(pool_used), total) &&
	       pkts_fit(u, p, d, n);
}

int rsw_buf_queue_fits_all(const struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
			   const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			   uint64_t total)
{
	return p->lossless || all_fit(LD(&c->bytes), p, pool, LD(pool_used), total);
}

void rsw_buf_charge(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p, uint64_t *pool_used,
		    uint64_t total, int mt)
{
	charge(u, p, pool_used, total, mt);
}

int rsw_buf_queue_fits(const struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
		       const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used, uint32_t len)
{
	return p->lossless || shared_fits(LD(&c->bytes), p, pool, LD(pool_used), len);
}

void rsw_buf_queue_charge(struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
			  uint64_t *pool_used, uint64_t bytes, unsigned n, int mt)
{
	rsw_buf_max(&c->peak, charge_bytes(&c->bytes, p, pool_used, bytes, mt));
	ADD(&c->pkts, n, mt);
}

void rsw_buf_queue_release(struct rsw_buf_count *c, const struct rsw_buf_profile_cfg *p,
			   uint64_t *pool_used, uint64_t bytes, unsigned n, int mt)
{
	release_bytes(&c->bytes, p, pool_used, bytes, mt);
	SUB(&c->pkts, n, mt);
}

uint32_t rsw_buf_release(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 uint64_t *pool_used, uint32_t len, int mt)
{
	uint32_t hdrm = (uint32_t)take_upto(&u->hdrm, len, mt), rest = len - hdrm;
	if (rest)
		release_bytes(&u->bytes, p, pool_used, rest, mt);
	return hdrm;
}

int rsw_buf_pg_over_xoff(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			 const struct rsw_buf_desc *d)
{
	return in_headroom(u, p) ||
	       rsw_buf_shared(u, p) >= rsw_buf_threshold(p, pool, LD(pool_used)) ||
	       LD(&u->pkts) >= rsw_buf_pkts_threshold(p, d);
}

int rsw_buf_pg_below_xon(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			 const struct rsw_buf_desc *d)
{
	if (in_headroom(u, p))
		return 0;
	uint64_t thr = rsw_buf_threshold(p, pool, LD(pool_used));
	uint64_t off = thr > p->xon_offset ? thr - p->xon_offset : 0;
	uint64_t xon = p->xon > off ? p->xon : off;
	if (rsw_buf_shared(u, p) >= xon)
		return 0;
	if (!limits_pkts(d))
		return 1;
	uint64_t pthr = rsw_buf_pkts_threshold(p, d);
	uint64_t poff = (p->xon_offset + RSW_BUF_MIN_WIRE_FRAME - 1) / RSW_BUF_MIN_WIRE_FRAME;
	return LD(&u->pkts) < (pthr > poff + 1 ? pthr - poff : 1); /* empty is below */
}

uint32_t rsw_peer_response_quanta(uint32_t speed_mbps)
{
	/* REFERENCE §2 gives 80 at 25G, 394 at 100G, 905 at 400G: piecewise linear between, the
	 * end segments extended beyond */
	static const uint32_t sp[3] = {25000, 100000, 400000}, qu[3] = {80, 394, 905};
	unsigned i = speed_mbps <= sp[1] ? 0 : 1;
	int64_t dq = (int64_t)qu[i + 1] - qu[i], ds = (int64_t)sp[i + 1] - sp[i];
	int64_t q = qu[i] + ((int64_t)speed_mbps - sp[i]) * dq / ds;
	return q < 1 ? 1 : (uint32_t)q;
}

uint64_t rsw_headroom_bytes(uint32_t speed_mbps, uint32_t cable_m, uint32_t mtu)
{
	/* bytes on the cable both ways: 2 × length / 2e8 m/s × speed / 8, rounded up; in Mb/s
	 * that is 2 × L × speed / 1600 */
	uint64_t cable = ((uint64_t)2 * cable_m * speed_mbps + 1599u) / 1600u;
	uint64_t response = (uint64_t)rsw_peer_response_quanta(speed_mbps) * 512u / 8u;
	return mtu + cable + response;
}
