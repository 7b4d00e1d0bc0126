/* SONiC buffer profiles read by each vendor's convention (docs/tm.md, "Buffer conventions"):
 * the Broadcom and Mellanox config_db.json files of tests/configs/buffers compile to the
 * reserve, headroom and pools their convention gives, and the traffic manager, fed one frame at
 * a time from one ingress PG to a queue that does not drain, sends XOFF, overflows its headroom
 * and sends XON at the frame counts worked by hand below from each profile's formula.
 *
 * argv[1]: the source tree (the configs are read from it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include "control/cli/eal_quiet.h"
#include "dataplane/config/config.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/switch.h"
#include "dataplane/tm/tm.h"

static const char *src_root = ".";
static struct rte_mempool *mp;
static char err[4096];

static struct rsw_switch *load(const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/configs/buffers/%s", src_root, rel);
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	assert_non_null(sw);
	if (rsw_config_apply(sw, path, err, sizeof(err)) != 0)
		fail_msg("%s: %s", path, err);
	return sw;
}

static int pool_named(const struct rsw_tm_config *tc, const char *name)
{
	for (unsigned i = 0; i < tc->pools.n_pools; i++)
		if (!strcmp(tc->pools.name[i], name))
			return (int)i;
	fail_msg("no pool %s", name);
	return -1;
}

/* A lossless frame of len bytes from in_port's PG 3 to queue 3 of out_port, admitted and
 * queued: 0, or the drop reason. */
static unsigned send_frame(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t in_port,
			   uint16_t out_port, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, (uint16_t)len));
	memset(rte_pktmbuf_mtod(m, void *), 0, len);
	struct rsw_pkt_meta meta;
	memset(&meta, 0, sizeof(meta));
	meta.in_port = in_port;
	meta.egress_port = out_port;
	meta.tc = 3;
	meta.pg = 3;
	unsigned v = rsw_tm_admit(tm, tc, m, &meta);
	if (v) {
		rte_pktmbuf_free(m);
		return v;
	}
	assert_int_equal(rsw_tm_enqueue_burst(tm, tc, out_port, 3, &m, 1), 1);
	return 0;
}

/* What port's PG 3 says to its peer now: 1 XOFF, -1 XON, 0 nothing. */
static int pfc3(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t port, uint64_t now)
{
	uint8_t ce;
	uint16_t t[8];
	if (!rsw_tm_pfc_due(tm, tc, port, now, &ce, t) || !(ce & (1u << 3)))
		return 0;
	return t[3] ? 1 : -1;
}

struct fill {
	unsigned xoff_at;  /* frame (1-based) after which XOFF was due */
	unsigned hdrm0;    /* the first frame that went into headroom */
	unsigned hdrm;     /* frames that went into headroom */
	unsigned drop_at;  /* frame refused (headroom_overflow) */
};

/* Frames of len from in_port into out_port's queue 3 until one is refused. */
static struct fill fill_pg(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t in_port,
			   uint16_t out_port, uint32_t len, uint64_t now)
{
	struct fill f = {0};
	for (unsigned i = 1; i < 40000; i++) {
		uint64_t hdrm = rsw_tm_port_read(tm, in_port)->pg[3].use.hdrm;
		unsigned v = send_frame(tm, tc, in_port, out_port, len);
		if (v) {
			assert_int_equal(v, RSW_DROP_HEADROOM_OVERFLOW);
			f.drop_at = i;
			return f;
		}
		if (rsw_tm_port_read(tm, in_port)->pg[3].use.hdrm > hdrm && !f.hdrm++)
			f.hdrm0 = i;
		if (pfc3(tm, tc, in_port, now) == 1) {
			assert_int_equal(f.xoff_at, 0);
			f.xoff_at = i;
		}
	}
	fail_msg("the PG never overflowed");
	return f;
}

/* Frames out_port sends (one each µs) until in_port sends XON. */
static unsigned drain_to_xon(struct rsw_tm *tm, const struct rsw_tm_config *tc, uint16_t in_port,
			     uint16_t out_port, uint64_t now)
{
	for (unsigned n = 1; n < 40000; n++) {
		struct rte_mbuf *m;
		now += 1000;
		assert_int_equal(rsw_tm_dequeue(tm, tc, out_port, now, &m, 1), 1);
		rte_pktmbuf_free(m);
		if (pfc3(tm, tc, in_port, now) == -1)
			return n;
	}
	fail_msg("no XON");
	return 0;
}

/* Tomahawk 3, 400G 40 m (sonic-mgmt spytest's TH3 settings): ingress_lossless_pool size
 * 59001152 with a shared headroom pool xoff 7428992; pg_lossless_400000_40m_profile size 1270,
 * xoff 190500, xon 0, xon_offset 2540, dynamic_th -2. Broadcom: reserve 1270 (SAI
 * RESERVED_BUFFER_SIZE), headroom 190500 beside it (XOFF_TH), shared space S = 59001152 -
 * 7428992 = 51572160 (the headroom pool carved out, sonic-mgmt's TD2/TD3 arithmetic). */
static void th3_400g_profile(void **state)
{
	(void)state;
	struct rsw_switch *sw = load("broadcom-th3.json");
	const struct rsw_tm_config *tc = &rsw_switch_fib(sw)->tm;
	assert_int_equal(tc->pools.convention, RSW_BUF_BROADCOM);
	int in = pool_named(tc, "ingress_lossless_pool");
	assert_int_equal(tc->pools.pool[in].size, 51572160);
	assert_int_equal(tc->pools.pool[in].xoff, 7428992);
	const struct rsw_buf_profile_cfg *pg = &tc->port[0].pg[3];
	assert_true(pg->lossless && pg->dynamic);
	assert_int_equal(pg->pool, in);
	assert_int_equal(pg->reserved, 1270);
	assert_int_equal(pg->xoff, 190500);
	assert_int_equal(pg->xon, 0);
	assert_int_equal(pg->xon_offset, 2540);
	assert_int_equal(pg->dynamic_th, -2);

	/* Frames of L = 1270 bytes from Ethernet0 to Ethernet8, which does not send. Frame 1
	 * fills the reserve. XOFF is due once shared use s reaches alpha (S - s), alpha = 1/4,
	 * i.e. s >= S / 5 = 10314432, or a frame must go into headroom, whichever comes first.
	 * Frame 1 + k takes s = kL while kL <= alpha (S - (k-1)L): 5kL <= S + L, k <= 51573430 /
	 * 6350 = 8121.8, so 8121 frames share (s = 10313670 < S / 5; the threshold's floor
	 * changes nothing: (S - 8120 L) / 4 = 10314940 exactly). Frame 8123 does not fit, goes
	 * into headroom and XOFF is due: the PG holds 8123 x 1270 = 10316210 bytes. Headroom takes
	 * 190500 / 1270 = 150 frames (8123..8272); frame 8273 overflows. */
	struct rsw_tm *tm = rsw_tm_new_growing(rsw_switch_fib(sw)->n_ports, tc, 1, NULL, err,
						  sizeof(err));
	assert_non_null(tm);
	struct fill f = fill_pg(tm, tc, 0, 1, 1270, 1000);
	assert_int_equal(f.xoff_at, 8123);
	assert_int_equal(f.hdrm0, 8123);
	assert_int_equal(f.hdrm, 150);
	assert_int_equal(f.drop_at, 8273);
	const struct rsw_tm_port *p0 = rsw_tm_port_read(tm, 0);
	assert_int_equal(p0->pg[3].use.bytes + p0->pg[3].use.hdrm, 8272ull * 1270);
	assert_int_equal(tm->pool_hdrm[in], 190500);
	/* Departures release headroom first (150 frames), then shared. XON needs no headroom and
	 * s < max(xon, alpha (S - s) - xon_offset): s = 8121 L: floor((S - s) / 4) - 2540 =
	 * 10314622 - 2540 = 10312082 < s; s = 8120 L = 10312400: 10314940 - 2540 = 10312400, not
	 * below; s = 8119 L = 10311130: floor(41261030 / 4) - 2540 = 10312717 > s. XON after 152
	 * frames: the headroom and xon_offset = 2 frames. */
	assert_int_equal(drain_to_xon(tm, tc, 0, 1, 1000000), 152);
	assert_int_equal(tm->pool_hdrm[in], 0);
	rsw_tm_free(tm);
	rsw_switch_free(sw);
}

/* Trident 3, 100G 300 m (spytest's TD3 settings): ingress_lossless_pool size 12766208 with a
 * shared headroom pool xoff 196608; pg_lossless_100000_300m_profile size 9427, xoff 50176, xon
 * 0, xon_offset 3584, dynamic_th 1. Each PG may hold 50176 bytes of headroom, all of them
 * together 196608 (SAI XOFF_TH with XOFF_SIZE > 0): three PGs take 49 frames of 1024 each
 * (50176 = 49 x 1024, the 50th overflows the PG), the fourth only 196608 - 3 x 50176 = 46080 =
 * 45 frames, its 46th overflows the pool. */
static void td3_shared_headroom_pool(void **state)
{
	(void)state;
	struct rsw_switch *sw = load("broadcom-td3.json");
	const struct rsw_tm_config *tc = &rsw_switch_fib(sw)->tm;
	assert_int_equal(tc->pools.convention, RSW_BUF_BROADCOM);
	int in = pool_named(tc, "ingress_lossless_pool");
	assert_int_equal(tc->pools.pool[in].size, 12766208 - 196608);
	assert_int_equal(tc->pools.pool[in].xoff, 196608);
	const struct rsw_buf_profile_cfg *pg = &tc->port[0].pg[3];
	assert_int_equal(pg->reserved, 9427);
	assert_int_equal(pg->xoff, 50176);
	assert_int_equal(pg->xon_offset, 3584);
	assert_int_equal(pg->dynamic_th, 1);
	/* alpha = 2: a lone PG's XOFF threshold is 2 x the free shared space */
	assert_int_equal(rsw_buf_threshold(pg, &tc->pools.pool[in], 1000000),
			 2ull * (12569600 - 1000000));

	struct rsw_tm *tm = rsw_tm_new_growing(rsw_switch_fib(sw)->n_ports, tc, 1, NULL, err,
						  sizeof(err));
	assert_non_null(tm);
	/* The first PG, alone in the pool (S = 12569600): XOFF once s >= 2 (S - s), s >= 2S / 3
	 * = 8379733.3; frame i holds s = 1024 i - 9427 (the reserve first), so frame 8193 (s =
	 * 8380205, admitted as 8380205 <= 2 (S - 8379181) = 8380838). The others go on in what it
	 * left; each sends XOFF no later than its first headroom frame. */
	static const unsigned want_hdrm[4] = {49, 49, 49, 45};
	for (uint16_t p = 0; p < 4; p++) {
		struct fill f = fill_pg(tm, tc, p, 4, 1024, 1000);
		if (p == 0)
			assert_int_equal(f.xoff_at, 8193);
		assert_in_range(f.xoff_at, 1, f.hdrm0);
		assert_int_equal(f.hdrm, want_hdrm[p]);
		assert_int_equal(f.drop_at, f.hdrm0 + want_hdrm[p]);
	}
	assert_int_equal(tm->pool_hdrm[in], 196608);
	rsw_tm_free(tm);
	rsw_switch_free(sw);
}

/* Mellanox Spectrum-2, 100G 5 m, no shared headroom pool: pg_lossless_100000_5m_profile xon
 * 19456, xoff 34816, size 54272 = xon + xoff (sonic-swss buffer_headroom_mellanox.lua): the
 * reserve is size - xoff = 19456 and xoff private headroom; the pool's size 10485760 is all
 * shared space. Frames of 1024: 19 fill the reserve; XOFF once s reaches alpha (S - s), alpha
 * 1: s >= S / 2 = 5120 frames, frame 19 + 5120 = 5139 (sonic-mgmt's pkts_num_trig_pfc = the
 * shared limit + xon); it was admitted (5120 L <= S - 5119 L) and frame 5140 goes into headroom;
 * 34816 / 1024 = 34 headroom frames, frame 5174 overflows (pkts_num_trig_ingr_drp = the shared
 * limit + size). XON (xon_offset 0): no headroom and s < max(19456, S - s): after the 34
 * headroom frames s = 5120 L = S - s, not below; one more, 5119 L < S - 5119 L. */
static void mellanox_private_headroom(void **state)
{
	(void)state;
	struct rsw_switch *sw = load("mellanox-spc2.json");
	const struct rsw_tm_config *tc = &rsw_switch_fib(sw)->tm;
	assert_int_equal(tc->pools.convention, RSW_BUF_MELLANOX);
	int in = pool_named(tc, "ingress_lossless_pool");
	assert_int_equal(tc->pools.pool[in].size, 10485760);
	assert_int_equal(tc->pools.pool[in].xoff, 0);
	const struct rsw_buf_profile_cfg *pg = &tc->port[0].pg[3];
	assert_int_equal(pg->reserved, 19456);
	assert_int_equal(pg->xoff, 34816);
	struct rsw_tm *tm = rsw_tm_new_growing(rsw_switch_fib(sw)->n_ports, tc, 1, NULL, err,
						  sizeof(err));
	assert_non_null(tm);
	struct fill f = fill_pg(tm, tc, 0, 1, 1024, 1000);
	assert_int_equal(f.xoff_at, 5139);
	assert_int_equal(f.hdrm0, 5140);
	assert_int_equal(f.hdrm, 34);
	assert_int_equal(f.drop_at, 5174);
	assert_int_equal(drain_to_xon(tm, tc, 0, 1, 1000000), 35);
	rsw_tm_free(tm);
	rsw_switch_free(sw);
}

/* Mellanox with a shared headroom pool (SONiC's shared headroom pool design): size = xon =
 * 19456 is the reserve, xoff 31744 the most one PG takes from the pool's 49152 (beside the
 * pool's 10485760, which stays all shared). One PG takes 31 frames of 1024 into headroom (its
 * 32nd overflows its xoff), the next 49152 - 31744 = 17408 = 17 frames (its 18th overflows the
 * pool). */
static void mellanox_shared_headroom_pool(void **state)
{
	(void)state;
	struct rsw_switch *sw = load("mellanox-spc2-shp.json");
	const struct rsw_tm_config *tc = &rsw_switch_fib(sw)->tm;
	assert_int_equal(tc->pools.convention, RSW_BUF_MELLANOX);
	int in = pool_named(tc, "ingress_lossless_pool");
	assert_int_equal(tc->pools.pool[in].size, 10485760);
	assert_int_equal(tc->pools.pool[in].xoff, 49152);
	assert_int_equal(tc->port[0].pg[3].reserved, 19456);
	assert_int_equal(tc->port[0].pg[3].xoff, 31744);
	struct rsw_tm *tm = rsw_tm_new_growing(rsw_switch_fib(sw)->n_ports, tc, 1, NULL, err,
						  sizeof(err));
	assert_non_null(tm);
	struct fill a = fill_pg(tm, tc, 0, 2, 1024, 1000);
	struct fill b = fill_pg(tm, tc, 1, 2, 1024, 1000);
	assert_int_equal(a.hdrm, 31);
	assert_int_equal(b.hdrm, 17);
	assert_int_equal(tm->pool_hdrm[in], 49152);
	rsw_tm_free(tm);
	rsw_switch_free(sw);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		src_root = argv[1];
	if (rsw_eal_init_quiet("test_buffer_convention") < 0)
		return 1;
	mp = rte_pktmbuf_pool_create("conv", 16383, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (!mp)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(th3_400g_profile),
		cmocka_unit_test(td3_shared_headroom_pool),
		cmocka_unit_test(mellanox_private_headroom),
		cmocka_unit_test(mellanox_shared_headroom_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
