/* The wait-for graph of paused queues (dataplane/tm/pfc_wait.h), on hand-built graphs: a node
 * waits on a paused queue of its peer switch only when that queue holds frames of the PG that
 * pauses it (ingress port = the node's peer port, PG = its priority); a cycle is handed over
 * once, in wait order, from its lowest (switch, port, priority); a queue that waits on a cycle
 * without being in it is not named; a queue holding more sources than are kept waits on all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/tm/pfc_wait.h"

/* A traffic manager with empty queues: the walk finds no frame, the test sets the sources. */
static struct rsw_tm *empty_tm(void)
{
	return calloc(1, sizeof(struct rsw_tm) + 8 * sizeof(struct rsw_tm_port));
}

struct seen {
	unsigned n, len[4];
	unsigned cyc[4][8];
};

static int keep(void *arg, const unsigned *cycle, unsigned len)
{
	struct seen *s = arg;
	assert_true(s->n < 4 && len <= 8);
	s->len[s->n] = len;
	memcpy(s->cyc[s->n++], cycle, len * sizeof(*cycle));
	return 0;
}

static struct rsw_pfc_wait_node *add(struct rsw_pfc_wait *g, struct rsw_tm *tm, uint16_t sw,
				     uint16_t port, uint16_t peer_sw, uint16_t peer_port,
				     uint16_t src_port)
{
	struct rsw_pfc_wait_node *a = rsw_pfc_wait_add(g, tm, sw, port, 3, peer_sw, peer_port);
	assert_non_null(a);
	a->src[a->n_src++] = (uint16_t)(src_port << 3 | 3); /* frames that came in on src_port, PG 3 */
	return a;
}

/* 1: sw0 port 1 -> sw1 port 0; 2: sw1 port 1 -> sw2 port 0; 3: sw2 port 1 -> sw0 port 0, each
 * holding frames that came in on port 0 (from the previous switch): the cycle 1 -> 2 -> 3 -> 1.
 * 0: sw0 port 5 -> sw1 port 0 too, holding frames from port 9: it waits on node 2, nothing waits
 * on it. The search enters at node 0 (0 -> 2 -> 3 -> 1 -> 2) and closes the cycle at node 2; it
 * is handed over from node 1, the lowest, without the tail. */
static void cycle_named_once_from_lowest(void **state)
{
	(void)state;
	struct rsw_tm *tm = empty_tm();
	struct rsw_pfc_wait g = {0};
	assert_int_equal(rsw_pfc_wait_begin(&g, 3), 0);
	add(&g, tm, 0, 5, 1, 0, 9);
	add(&g, tm, 0, 1, 1, 0, 0);
	add(&g, tm, 1, 1, 2, 0, 0);
	add(&g, tm, 2, 1, 0, 0, 0);
	struct seen s = {0};
	assert_int_equal(rsw_pfc_wait_search(&g, keep, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.len[0], 3);
	assert_int_equal(s.cyc[0][0], 1);
	assert_int_equal(s.cyc[0][1], 2);
	assert_int_equal(s.cyc[0][2], 3);
	rsw_pfc_wait_free(&g);
	free(tm);
}

/* The same ring with sw2's queue holding only frames from another port: no wait closes. */
static void wrong_source_no_cycle(void **state)
{
	(void)state;
	struct rsw_tm *tm = empty_tm();
	struct rsw_pfc_wait g = {0};
	assert_int_equal(rsw_pfc_wait_begin(&g, 3), 0);
	add(&g, tm, 0, 1, 1, 0, 0);
	add(&g, tm, 1, 1, 2, 0, 0);
	add(&g, tm, 2, 1, 0, 0, 7);
	struct seen s = {0};
	assert_int_equal(rsw_pfc_wait_search(&g, keep, &s), 0);
	assert_int_equal(s.n, 0);
	/* ... unless it holds more sources than are kept: it then waits on every PG */
	g.node[2].all_src = 1;
	assert_int_equal(rsw_pfc_wait_search(&g, keep, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.len[0], 3);
	assert_int_equal(s.cyc[0][0], 0);
	rsw_pfc_wait_free(&g);
	free(tm);
}

/* A switch with no paused queue between two that have some; the graph is reused. */
static void switches_without_nodes(void **state)
{
	(void)state;
	struct rsw_tm *tm = empty_tm();
	struct rsw_pfc_wait g = {0};
	for (int round = 0; round < 2; round++) {
		assert_int_equal(rsw_pfc_wait_begin(&g, 4), 0);
		add(&g, tm, 1, 2, 3, 6, 0); /* sw1 -> sw3, holding what came from sw3 (port 0) */
		add(&g, tm, 3, 0, 1, 0, 6); /* sw3 -> sw1, holding what came from sw1 (port 6) */
		struct seen s = {0};
		assert_int_equal(rsw_pfc_wait_search(&g, keep, &s), 0);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.len[0], 2);
		assert_int_equal(s.cyc[0][0], 0);
		assert_int_equal(s.cyc[0][1], 1);
	}
	rsw_pfc_wait_free(&g);
	free(tm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cycle_named_once_from_lowest),
		cmocka_unit_test(wrong_source_no_cycle),
		cmocka_unit_test(switches_without_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
