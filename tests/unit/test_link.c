/* A zone's in-memory link (dataplane/live/dp_link.c) on a real rte_ring: data fills at most
 * RSW_DP_LINK_DATA slots and is then refused (it waits at the sender, nothing is lost), while a
 * PFC frame still goes on behind it (before, data could fill the whole ring and a PFC frame
 * found no room: the pause was not sent and the peer overflowed its headroom); frames leave in
 * order once due (serialization at the link's speed plus the delay); what is on the link is
 * counted and freed at close. Runs EAL without hugepages or shared config. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "dataplane/live/dp_link.h"

static struct rte_mempool *pool;

static struct rte_mbuf *frame(uint32_t len, uint8_t tag)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	assert_non_null(m);
	uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(d);
	memset(d, tag, len);
	return m;
}

static void data_leaves_room_for_pfc(void **state)
{
	(void)state;
	struct rsw_dp_link l;
	char err[256];
	assert_int_equal(rsw_dp_link_init(&l, "t_link0", 100000, 1000, err, sizeof(err)), 0);
	unsigned took = 0;
	for (;;) {
		struct rte_mbuf *m = frame(1000, 1);
		if (rsw_dp_link_tx(&l, &m, 1, 0, RSW_DP_LINK_TX_DATA) == 0) {
			rte_pktmbuf_free(m); /* the sender would keep it pending */
			break;
		}
		took++;
	}
	assert_int_equal(took, RSW_DP_LINK_DATA);
	/* a link full of data still takes PFC frames, up to the ring's size */
	unsigned ctl = 0;
	for (;;) {
		struct rte_mbuf *m = frame(64, 2);
		if (rsw_dp_link_tx(&l, &m, 1, 0, RSW_DP_LINK_TX_PFC) == 0) {
			rte_pktmbuf_free(m);
			break;
		}
		ctl++;
	}
	assert_int_equal(ctl, RSW_DP_LINK_RING - 1 - RSW_DP_LINK_DATA);
	assert_int_equal(l.pfc_frames, ctl);
	assert_int_equal(l.frames, RSW_DP_LINK_RING - 1);
	assert_int_equal(rsw_dp_link_in_flight(&l), RSW_DP_LINK_RING - 1);
	assert_int_equal(rsw_dp_link_free(&l), RSW_DP_LINK_RING - 1);
}

static void in_order_when_due(void **state)
{
	(void)state;
	struct rsw_dp_link l;
	char err[256];
	/* 1 Gb/s, 500 ns: a 1000-byte frame's last bit is (1000 + FCS 4 + preamble 8) x 8 ns after
	 * its start, the next starts after the inter-frame gap too, (1000 + 24) x 8 ns later
	 * (REFERENCE §3) */
	assert_int_equal(rsw_dp_link_init(&l, "t_link1", 1000, 500, err, sizeof(err)), 0);
	struct rte_mbuf *m[3] = {frame(1000, 0), frame(1000, 1), frame(1000, 2)};
	assert_int_equal(rsw_dp_link_tx(&l, m, 3, 0, RSW_DP_LINK_TX_DATA), 3);
	struct rte_mbuf *out[4];
	const uint64_t last_bit = 1012 * 8, wire = 1024 * 8;
	assert_int_equal(rsw_dp_link_rx(&l, out, 4, last_bit + 499), 0);
	assert_int_equal(rsw_dp_link_rx(&l, out, 4, last_bit + 500), 1);
	assert_int_equal(*rte_pktmbuf_mtod(out[0], uint8_t *), 0);
	rte_pktmbuf_free(out[0]);
	assert_int_equal(rsw_dp_link_rx(&l, out, 4, 2 * wire + last_bit + 499), 1);
	assert_int_equal(rsw_dp_link_rx(&l, out + 1, 3, 2 * wire + last_bit + 500), 1);
	assert_int_equal(*rte_pktmbuf_mtod(out[0], uint8_t *), 1);
	assert_int_equal(*rte_pktmbuf_mtod(out[1], uint8_t *), 2);
	rte_pktmbuf_free_bulk(out, 2);
	assert_int_equal(rsw_dp_link_free(&l), 0);
}

int main(void)
{
	/* no shared config and a prefix of its own: runs beside any dataplane */
	char prefix[40];
	snprintf(prefix, sizeof(prefix), "test_link%d", (int)getpid());
	char *argv[] = {"test_link", "--no-huge", "-m", "64", "--no-pci", "--no-shconf",
			"--file-prefix", prefix, "-l", "0", "--log-level", "error"};
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("t_pool", 2048, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM,
				       SOCKET_ID_ANY);
	if (!pool)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_leaves_room_for_pfc),
		cmocka_unit_test(in_order_when_due),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return rc;
}
