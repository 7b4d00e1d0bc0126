#include "buffer.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* Atomic read-modify-write only when several threads share the counters (mt): a lone worker or
 * the replay loop pays plain adds, as DPDK's rings do with their single-producer flags. */
static inline uint64_t ADD(uint64_t *p, uint64_t v, int mt)
{
	if (mt)
		return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	uint64_t o = *p;
	*p = o + v;
	return o;
}

static inline uint64_t SUB(uint64_t *p, uint64_t v, int mt)
{
	if (mt)
		return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
	uint64_t o = *p;
	*p = o - v;
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
	uint64_t cur = LD(&u->bytes) + LD(&u->hdrm);
	if (cur > LD(&u->peak))
		__atomic_store_n(&u->peak, cur, __ATOMIC_RELAXED);
}

/* Would len more bytes stay within the shared threshold and the pool? */
static int shared_fits(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
		       const struct rsw_buf_pool_cfg *pool, uint64_t pool_used, uint32_t len)
{
	uint64_t b = LD(&u->bytes);
	uint64_t grow = shared_of(b + len, p->reserved) - shared_of(b, p->reserved);
	if (grow == 0)
		return 1; /* within the reserve */
	return shared_of(b + len, p->reserved) <= rsw_buf_threshold(p, pool, pool_used) &&
	       pool_used + grow <= pool->size;
}

static void charge(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p, uint64_t *pool_used,
		   uint32_t len, int mt)
{
	uint64_t old = ADD(&u->bytes, len, mt);
	uint64_t grow = shared_of(old + len, p->reserved) - shared_of(old, p->reserved);
	if (grow)
		ADD(pool_used, grow, mt);
	note_peak(u);
}

enum rsw_buf_verdict rsw_buf_pg_admit(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
				      const struct rsw_buf_pool_cfg *pool, uint64_t *pool_used,
				      uint32_t len, int mt)
{
	/* once in headroom, stay there until it drains: XOFF is in force */
	if (!(p->lossless && LD(&u->hdrm)) && shared_fits(u, p, pool, LD(pool_used), len)) {
		charge(u, p, pool_used, len, mt);
		return RSW_BUF_ADMIT;
	}
	if (p->lossless && LD(&u->hdrm) + len <= p->xoff) {
		ADD(&u->hdrm, len, mt);
		note_peak(u);
		return RSW_BUF_HEADROOM;
	}
	ADD(&u->dropped_packets, 1, mt);
	ADD(&u->dropped_bytes, len, mt);
	return RSW_BUF_DROP;
}

/* Would total bytes arriving together fit in shared space? Judged against the threshold after
 * all of them, so never more permissive than admitting them one at a time. */
static int all_fit(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
		   const struct rsw_buf_pool_cfg *pool, uint64_t pool_used, uint64_t total)
{
	uint64_t b = LD(&u->bytes);
	uint64_t grow = shared_of(b + total, p->reserved) - shared_of(b, p->reserved);
	if (grow == 0)
		return 1;
	return shared_of(b + total, p->reserved) <= rsw_buf_threshold(p, pool, pool_used + grow) &&
	       pool_used + grow <= pool->size;
}

int rsw_buf_pg_fits_all(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used, uint64_t total)
{
	return !(p->lossless && LD(&u->hdrm)) && all_fit(u, p, pool, LD(pool_used), total);
}

int rsw_buf_queue_fits_all(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			   const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used,
			   uint64_t total)
{
	return p->lossless || all_fit(u, p, pool, LD(pool_used), total);
}

void rsw_buf_charge(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p, uint64_t *pool_used,
		    uint64_t total, int mt)
{
	charge(u, p, pool_used, (uint32_t)total, mt);
}

int rsw_buf_queue_fits(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
		       const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used, uint32_t len)
{
	return p->lossless || shared_fits(u, p, pool, LD(pool_used), len);
}

void rsw_buf_queue_charge(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			  uint64_t *pool_used, uint32_t len, int mt)
{
	charge(u, p, pool_used, len, mt);
}

void rsw_buf_release(struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p, uint64_t *pool_used,
		     uint32_t len, int mt)
{
	uint64_t h = LD(&u->hdrm), take = h < len ? h : len;
	if (take && mt) {
		while (!__atomic_compare_exchange_n(&u->hdrm, &h, h - take, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED)) {
			take = h < len ? h : len;
			if (!take)
				break;
		}
	} else if (take) {
		u->hdrm = h - take;
	}
	uint32_t rest = len - (uint32_t)take;
	if (rest == 0)
		return;
	uint64_t old = SUB(&u->bytes, rest, mt);
	uint64_t shrink = shared_of(old, p->reserved) - shared_of(old - rest, p->reserved);
	if (shrink)
		SUB(pool_used, shrink, mt);
}

int rsw_buf_pg_over_xoff(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used)
{
	return LD(&u->hdrm) > 0 ||
	       rsw_buf_shared(u, p) >= rsw_buf_threshold(p, pool, LD(pool_used));
}

int rsw_buf_pg_below_xon(const struct rsw_buf_use *u, const struct rsw_buf_profile_cfg *p,
			 const struct rsw_buf_pool_cfg *pool, const uint64_t *pool_used)
{
	if (LD(&u->hdrm) > 0)
		return 0;
	uint64_t thr = rsw_buf_threshold(p, pool, LD(pool_used));
	uint64_t off = thr > p->xon_offset ? thr - p->xon_offset : 0;
	uint64_t xon = p->xon > off ? p->xon : off;
	return rsw_buf_shared(u, p) < xon;
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
