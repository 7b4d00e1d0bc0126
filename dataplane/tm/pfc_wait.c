/* The wait-for graph of paused queues and its cycle search (pfc_wait.h). */
#include <stdlib.h>
#include <string.h>

#include "pfc_wait.h"

int rsw_pfc_wait_begin(struct rsw_pfc_wait *g, unsigned n_sw)
{
	if (n_sw > g->n_sw || !g->first) {
		free(g->first);
		g->first = calloc(n_sw + 1, sizeof(*g->first));
		if (!g->first)
			return -1;
	}
	g->n_sw = n_sw;
	g->n = 0;
	g->cur_sw = 0;
	memset(g->first, 0, (n_sw + 1) * sizeof(*g->first));
	return 0;
}

static int add_src(void *arg, struct rte_mbuf *m)
{
	struct rsw_pfc_wait_node *a = arg;
	const struct rsw_tm_tag *tg = rsw_tm_tag(m);
	/* whole loads: a live packet's tag may be rewritten as it is read (tm_walk.c) */
	uint16_t in_port = __atomic_load_n(&tg->in_port, __ATOMIC_RELAXED);
	uint8_t pg = __atomic_load_n(&tg->pg, __ATOMIC_RELAXED);
	uint16_t k = (uint16_t)(in_port << 3 | (pg & 7));
	for (unsigned i = 0; i < a->n_src; i++)
		if (a->src[i] == k)
			return 0;
	if (a->n_src == RSW_PFC_WAIT_SRC_MAX) {
		a->all_src = 1;
		return 1;
	}
	a->src[a->n_src++] = k;
	return 0;
}

/* Switches up to sw start at the current end (their nodes, if any, were added). */
static void close_switches(struct rsw_pfc_wait *g, unsigned sw)
{
	while (g->cur_sw < sw)
		g->first[++g->cur_sw] = g->n;
}

void rsw_pfc_wait_sources(struct rsw_pfc_wait_node *a, const struct rsw_tm *tm)
{
	a->n_src = a->all_src = 0;
	rsw_tm_queue_walk(tm, a->port, a->prio, add_src, a);
}

struct rsw_pfc_wait_node *rsw_pfc_wait_put(struct rsw_pfc_wait *g,
					   const struct rsw_pfc_wait_node *a)
{
	close_switches(g, a->sw);
	if (g->n == g->cap) {
		unsigned cap = g->cap ? 2 * g->cap : 64;
		void *x = realloc(g->node, cap * sizeof(*g->node));
		if (!x)
			return NULL;
		g->node = x;
		g->cap = cap;
	}
	g->node[g->n] = *a;
	return &g->node[g->n++];
}

struct rsw_pfc_wait_node *rsw_pfc_wait_add(struct rsw_pfc_wait *g, const struct rsw_tm *tm,
					   uint16_t sw, uint16_t port, uint8_t prio,
					   uint16_t peer_sw, uint16_t peer_port)
{
	struct rsw_pfc_wait_node a = {.sw = sw, .port = port, .prio = prio, .peer_sw = peer_sw,
				      .peer_port = peer_port};
	rsw_pfc_wait_sources(&a, tm);
	return rsw_pfc_wait_put(g, &a);
}

/* Does A wait on B: B, on A's peer switch, holds frames of the PG that pauses A? */
static int waits_on(const struct rsw_pfc_wait_node *a, const struct rsw_pfc_wait_node *b)
{
	if (b->sw != a->peer_sw)
		return 0;
	if (b->all_src)
		return 1;
	uint16_t k = (uint16_t)(a->peer_port << 3 | a->prio);
	for (unsigned i = 0; i < b->n_src; i++)
		if (b->src[i] == k)
			return 1;
	return 0;
}

static int node_cmp(const struct rsw_pfc_wait_node *x, const struct rsw_pfc_wait_node *y)
{
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int report(struct rsw_pfc_wait *g, unsigned from, unsigned depth,
		  int (*fn)(void *arg, const unsigned *cycle, unsigned len), void *arg)
{
	unsigned len = depth - from, lo = 0;
	for (unsigned i = 1; i < len; i++)
		if (node_cmp(&g->node[g->stack[from + i]], &g->node[g->stack[from + lo]]) < 0)
			lo = i;
	for (unsigned i = 0; i < len; i++)
		g->cycle[i] = g->stack[from + (lo + i) % len];
	return fn(arg, g->cycle, len);
}

int rsw_pfc_wait_search(struct rsw_pfc_wait *g,
			int (*fn)(void *arg, const unsigned *cycle, unsigned len), void *arg)
{
	close_switches(g, g->n_sw);
	if (g->work_cap < g->n || !g->stack) {
		free(g->next_j);
		free(g->stack);
		free(g->cycle);
		free(g->color);
		g->work_cap = g->cap;
		g->next_j = malloc((g->work_cap + 1) * sizeof(*g->next_j));
		g->stack = malloc((g->work_cap + 1) * sizeof(*g->stack));
		g->cycle = malloc((g->work_cap + 1) * sizeof(*g->cycle));
		g->color = malloc(g->work_cap + 1);
		if (!g->next_j || !g->stack || !g->cycle || !g->color) {
			g->work_cap = 0;
			return -1;
		}
	}
	memset(g->color, 0, g->n);
	for (unsigned root = 0; root < g->n; root++) {
		if (g->color[root])
			continue;
		unsigned depth = 0;
		g->stack[depth++] = root;
		g->color[root] = 1;
		g->next_j[root] = g->first[g->node[root].peer_sw];
		while (depth) {
			unsigned a = g->stack[depth - 1];
			unsigned end = g->first[g->node[a].peer_sw + 1];
			unsigned j = g->next_j[a];
			while (j < end && !waits_on(&g->node[a], &g->node[j]))
				j++;
			if (j == end) {
				g->color[a] = 2;
				depth--;
				continue;
			}
			g->next_j[a] = j + 1;
			if (g->color[j] == 1) { /* back to the path: a cycle */
				unsigned from = depth;
				while (g->stack[--from] != j)
					;
				int rc = report(g, from, depth, fn, arg);
				if (rc < 0)
					return rc;
			} else if (!g->color[j]) {
				g->color[j] = 1;
				g->next_j[j] = g->first[g->node[j].peer_sw];
				g->stack[depth++] = j;
			}
		}
	}
	return 0;
}

void rsw_pfc_wait_free(struct rsw_pfc_wait *g)
{
	free(g->node);
	free(g->first);
	free(g->next_j);
	free(g->stack);
	free(g->cycle);
	free(g->color);
	memset(g, 0, sizeof(*g));
}
