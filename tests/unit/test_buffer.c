/* Shared buffer: dynamic-threshold admission, headroom, release order and headroom sizing against
 * numbers worked by hand from REFERENCE §2-§3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/buffer.h"

static const struct rsw_buf_pool_cfg pool = {.size = 1000000, .type = RSW_POOL_INGRESS, .dynamic = 1};

/* alpha = 2^-1 = 0.5: a lone PG can take x with x = 0.5 (1e6 - x), x = 333333 bytes */
static void dynamic_threshold_by_hand(void **state)
{
	(void)state;
	struct rsw_buf_profile_cfg p = {.pool = 0, .dynamic = 1, .dynamic_th = -1, .reserved = 1000};
	struct rsw_buf_use u = {0};
	uint64_t used = 0;
	assert_int_equal(rsw_buf_threshold(&p, &pool, 0), 500000);
	assert_int_equal(rsw_buf_threshold(&p, &pool, 200000), 400000);
	p.dynamic_th = 1; /* alpha 2 */
	assert_int_equal(rsw_buf_threshold(&p, &pool, 200000), 1600000);
	p.dynamic_th = -1;

	unsigned admitted = 0;
	while (rsw_buf_pg_admit(&u, &p, &pool, &used, 1000, 1, NULL, 0, NULL) == RSW_BUF_ADMIT)
		admitted++;
	/* first 1000 bytes in the reserve; shared s admitted while s <= 0.5 (1e6 - s_before):
	 * s = 333000 fits (333000 <= 0.5 * (1e6 - 332000) = 334000), s = 334000 does not
	 * (334000 > 0.5 * (1e6 - 333000) = 333500). */
	assert_int_equal(admitted, 1 + 333);
	assert_int_equal(used, 333000);
	assert_int_equal(u.bytes, 334000);
	assert_int_equal(u.dropped_packets, 1);

	/* release: shared first from the top, the reserve last */
	rsw_buf_release(&u, &p, &used, 1000, 1);
	assert_int_equal(used, 332000);
	for (unsigned i = 0; i < 333; i++)
		rsw_buf_release(&u, &p, &used, 1000, 1);
	assert_int_equal(used, 0);
	assert_int_equal(u.bytes, 0);
	assert_int_equal(u.peak, 334000);
}

static void static_threshold(void **state)
{
	(void)state;
	struct rsw_buf_profile_cfg p = {.dynamic = 0, .static_th = 5000, .reserved = 0};
	struct rsw_buf_use u = {0};
	uint64_t used = 0;
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(rsw_buf_pg_admit(&u, &p, &pool, &used, 1000, 1, NULL, 0, NULL),
				 RSW_BUF_ADMIT);
	assert_int_equal(rsw_buf_pg_admit(&u, &p, &pool, &used, 1, 1, NULL, 0, NULL), RSW_BUF_DROP);
}

/* Lossless, with the single-thread counters: past the threshold into headroom, XOFF while headroom is used, overflow past xoff,
 * headroom released first, XON once below max(xon, threshold - xon_offset). */
static void lossless_headroom(void **state)
{
	(void)state;
	struct rsw_buf_profile_cfg p = {.dynamic = 0, .static_th = 10000, .reserved = 0, .lossless = 1,
					.xoff = 3000, .xon = 2000, .xon_offset = 4000};
	struct rsw_buf_use u = {0};
	uint64_t used = 0;
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(rsw_buf_pg_admit(&u, &p, &pool, &used, 1000, 0, NULL, 0, NULL),
				 RSW_BUF_ADMIT);
	assert_true(rsw_buf_pg_over_xoff(&u, &p, &pool, &used, NULL)); /* shared 10000 >= 10000 */
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(rsw_buf_pg_admit(&u, &p, &pool, &used, 1000, 0, NULL, 0, NULL),
				 RSW_BUF_HEADROOM);
	assert_int_equal(rsw_buf_pg_admit(&u, &p, &pool, &used, 1000, 0, NULL, 0, NULL), RSW_BUF_DROP);
	assert_int_equal(u.hdrm, 3000);
	assert_int_equal(used, 10000); /* headroom is not pool shared space */

	for (unsigned i = 0; i < 3; i++) {
		rsw_buf_release(&u, &p, &used, 1000, 0);
		rsw_buf_pkts_release(&u, NULL, 1, 0);
	}
	assert_int_equal(u.hdrm, 0);
	assert_int_equal(u.hdrm_pkts, 0);
	assert_int_equal(u.bytes, 10000);
	/* XON point max(2000, 10000 - 4000) = 6000: shared 6000 is not below, 5000 is */
	for (unsigned i = 0; i < 4; i++) {
		rsw_buf_release(&u, &p, &used, 1000, 0);
		rsw_buf_pkts_release(&u, NULL, 1, 0);
	}
	assert_false(rsw_buf_pg_below_xon(&u, &p, &pool, &used, NULL));
	rsw_buf_release(&u, &p, &used, 1000, 0);
	assert_true(rsw_buf_pg_below_xon(&u, &p, &pool, &used, NULL));
}

/* Small frames: the descriptor limit is nearer than the byte limit. With alpha = 1 a lone PG's
 * packet threshold alpha × (D − used) meets its use at D / 2 (Choudhury-Hahne's fixed point), so
 * XOFF comes at 500 of 1000 descriptors while 64-byte frames fill 32 KB of a 1 MB pool; then the
 * headroom takes ceil(xoff / 84) + 1 packets (the smallest frame on the wire is 84 bytes), and
 * only the next one is refused. Released, XON comes below threshold − ceil(xon_offset / 84). */
static void packets_reach_xoff_first(void **state)
{
	(void)state;
	const struct rsw_buf_pool_cfg big = {.size = 1000000, .type = RSW_POOL_INGRESS, .dynamic = 1};
	struct rsw_buf_profile_cfg p = {.dynamic = 1, .dynamic_th = 0, .lossless = 1, .xoff = 68520,
					.xon = 2000, .xon_offset = 8400};
	struct rsw_buf_desc d = {.size = 1000};
	struct rsw_buf_use u = {0};
	uint64_t used = 0, hmax = rsw_buf_hdrm_pkts(&p);
	assert_int_equal(hmax, (68520 + 83) / 84 + 1); /* 817 */
	unsigned admitted = 0, hdrm = 0;
	enum rsw_buf_verdict v;
	while ((v = rsw_buf_pg_admit(&u, &p, &big, &used, 64, 0, &d, hmax, NULL)) == RSW_BUF_ADMIT)
		admitted++;
	assert_int_equal(admitted, 500);
	assert_int_equal(d.used, 500);
	assert_int_equal(u.bytes, 500 * 64);
	assert_true(u.bytes < rsw_buf_threshold(&p, &big, used)); /* bytes far from XOFF */
	assert_true(rsw_buf_pg_over_xoff(&u, &p, &big, &used, &d));
	assert_true(rsw_buf_pg_over_xoff(&u, &p, &big, &used, NULL)); /* in headroom now */
	for (hdrm = 1; v == RSW_BUF_HEADROOM; hdrm++)
		v = rsw_buf_pg_admit(&u, &p, &big, &used, 64, 0, &d, hmax, NULL);
	assert_int_equal(v, RSW_BUF_DROP);
	assert_int_equal(hdrm - 1, hmax);
	assert_int_equal(u.hdrm_pkts, hmax);
	assert_int_equal(d.used, 500); /* headroom is not shared descriptors */
	/* drain the headroom: still XOFF (500 >= 500), not XON until below 500 - 100 = 400 */
	rsw_buf_pkts_release(&u, &d, (unsigned)hmax, 0);
	rsw_buf_release(&u, &p, &used, (uint32_t)(hmax * 64), 0);
	assert_int_equal(u.hdrm_pkts, 0);
	assert_false(rsw_buf_pg_below_xon(&u, &p, &big, &used, &d));
	rsw_buf_pkts_release(&u, &d, 67, 0); /* 433 held: threshold 567, XON point 467 */
	rsw_buf_release(&u, &p, &used, 67 * 64, 0);
	assert_false(rsw_buf_pg_over_xoff(&u, &p, &big, &used, &d));
	assert_true(rsw_buf_pg_below_xon(&u, &p, &big, &used, &d));
	/* without a descriptor limit the same frames go on into shared space */
	struct rsw_buf_use w = {0};
	uint64_t used2 = 0;
	for (unsigned i = 0; i < 2000; i++)
		assert_int_equal(rsw_buf_pg_admit(&w, &p, &big, &used2, 64, 0, NULL, 0, NULL),
				 RSW_BUF_ADMIT);
}

static void lossless_queue_never_refused(void **state)
{
	(void)state;
	struct rsw_buf_profile_cfg lossy = {.dynamic = 0, .static_th = 1000};
	struct rsw_buf_profile_cfg lossless = lossy;
	lossless.lossless = 1;
	struct rsw_buf_count u = {.bytes = 5000};
	uint64_t used = 5000;
	assert_false(rsw_buf_queue_fits(&u, &lossy, &pool, &used, 100));
	assert_true(rsw_buf_queue_fits(&u, &lossless, &pool, &used, 100));
}

/* A queue (reserve 1000 B, alpha 1/2) charged by bursts and released by departures: the pool
 * holds only what is past the reserve; the watermark stays at the deepest point. */
static void queue_bursts_charge_and_release(void **state)
{
	(void)state;
	struct rsw_buf_profile_cfg p = {.dynamic = 1, .dynamic_th = -1, .reserved = 1000};
	struct rsw_buf_count c = {0};
	uint64_t used = 0;
	/* 3 x 600 B: 1800 B, 800 of them shared; threshold 0.5 x (1e6 - 800) = 499600 */
	assert_true(rsw_buf_queue_fits_all(&c, &p, &pool, &used, 1800));
	rsw_buf_queue_charge(&c, &p, &used, 1800, 3, 0);
	assert_int_equal(c.bytes, 1800);
	assert_int_equal(c.pkts, 3);
	assert_int_equal(used, 800);
	/* 333,000 B more in one burst: shared 333,800 against 0.5 x (1e6 - 333,800) = 333,100 */
	assert_false(rsw_buf_queue_fits_all(&c, &p, &pool, &used, 333000));
	assert_true(rsw_buf_queue_fits(&c, &p, &pool, &used, 1000));
	rsw_buf_queue_charge(&c, &p, &used, 1000, 1, 1);
	assert_int_equal(used, 1800);
	/* two leave (1200 B): the shared part goes first, 1800 -> 600 */
	rsw_buf_queue_release(&c, &p, &used, 1200, 2, 0);
	assert_int_equal(c.bytes, 1600);
	assert_int_equal(c.pkts, 2);
	assert_int_equal(used, 600);
	/* the rest: down past the reserve to nothing */
	rsw_buf_queue_release(&c, &p, &used, 1600, 2, 1);
	assert_int_equal(c.bytes, 0);
	assert_int_equal(c.pkts, 0);
	assert_int_equal(used, 0);
	assert_int_equal(c.peak, 2800);
}

/* REFERENCE §2: MTU + 2 x length x speed / 2e8 m/s (in bytes) + response quanta x 64 bytes */
static void headroom_formula(void **state)
{
	(void)state;
	assert_int_equal(rsw_peer_response_quanta(400000), 905);
	assert_int_equal(rsw_peer_response_quanta(100000), 394);
	assert_int_equal(rsw_peer_response_quanta(25000), 80);
	/* 400G, 5 m, MTU 9100: cable 2 x 5 m / 2e8 x 4e11 / 8 = 2500 B; 905 x 64 = 57920 B */
	assert_int_equal(rsw_headroom_bytes(400000, 5, 9100), 9100 + 2500 + 57920);
	/* 100G, 40 m, MTU 9100: 2 x 40 / 2e8 x 1e11 / 8 = 5000 B; 394 x 64 = 25216 B */
	assert_int_equal(rsw_headroom_bytes(100000, 40, 9100), 9100 + 5000 + 25216);
	/* 25G, 300 m, MTU 1500: 2 x 300 / 2e8 x 2.5e10 / 8 = 9375 B; 80 x 64 = 5120 B */
	assert_int_equal(rsw_headroom_bytes(25000, 300, 1500), 1500 + 9375 + 5120);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dynamic_threshold_by_hand),
		cmocka_unit_test(static_threshold),
		cmocka_unit_test(lossless_headroom),
		cmocka_unit_test(lossless_queue_never_refused),
		cmocka_unit_test(queue_bursts_charge_and_release),
		cmocka_unit_test(packets_reach_xoff_first),
		cmocka_unit_test(headroom_formula),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
