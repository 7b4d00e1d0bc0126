/* A replay run in aggregate (replay_digest.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_digest.h"
#include "replay_summary.h"
#include "json_get.h"

static const char *const tier_names[RSW_LT_N] = {
	"host → leaf", "leaf → host", "up: leaf → spine", "down: spine → leaf",
	"switch → switch", "port transmit"};

const char *rsw_digest_tier_name(unsigned tier)
{
	return tier < RSW_LT_N ? tier_names[tier] : "?";
}

void rsw_digest_node(const char *end, char *out, size_t len)
{
	snprintf(out, len, "%s", end);
	char *bar = strchr(out, '|');
	if (bar)
		*bar = 0;
}

unsigned rsw_digest_tier_of(const struct rsw_digest *d, const char *from, const char *to)
{
	char a[128], b[128];
	if (!strchr(from, '|'))
		return RSW_LT_HOST_TX;
	if (!strchr(to, '|'))
		return RSW_LT_HOST_RX;
	rsw_digest_node(from, a, sizeof(a));
	rsw_digest_node(to, b, sizeof(b));
	int la = json_object_get(d->leaf, a) != NULL, lb = json_object_get(d->leaf, b) != NULL;
	return la && !lb ? RSW_LT_UP : !la && lb ? RSW_LT_DOWN : RSW_LT_FLAT;
}

double rsw_digest_util_pct(uint64_t t0, uint64_t t1, uint64_t bytes, uint64_t frames,
			   uint64_t speed_mbps)
{
	if (!speed_mbps)
		return 0;
	double win = (double)(t1 - t0) + rsw_replay_last_frame_ns(speed_mbps);
	return (double)(bytes + frames * 24) * 8 * 1e3 / (double)speed_mbps / win * 100;
}

static uint64_t pfc_sum(const json_t *port, const char *dir)
{
	uint64_t n = 0;
	char k[48];
	for (unsigned i = 0; i < 8; i++) {
		snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_%s_PKTS", i, dir);
		n += ju(json_object_get(port, "pfc"), k);
	}
	return n;
}

uint64_t rsw_digest_pfc_sent(const json_t *port)
{
	return pfc_sum(port, "TX");
}

/* Switch ports: totals and non-empty queues; every port indexed by "SWITCH|PORT" in at. */
static int add_port(struct rsw_digest *d, const char *sw, const json_t *p, size_t *cap)
{
	d->rx_packets += ju(p, "rx_packets");
	d->rx_bytes += ju(p, "rx_bytes");
	d->tx_packets += ju(p, "tx_packets");
	d->tx_bytes += ju(p, "tx_bytes");
	uint64_t tx = pfc_sum(p, "TX");
	d->pfc_tx += tx;
	d->pfc_tx_ports += tx > 0;
	d->pfc_rx += pfc_sum(p, "RX");
	size_t i;
	json_t *q;
	json_array_foreach(json_object_get(p, "queues"), i, q) {
		uint64_t ecn = ju(q, "ecn_marked_packets");
		d->ecn_marked += ecn;
		d->ecn_queues += ecn > 0;
		if (!ju(q, "max_depth_bytes"))
			continue;
		if (d->n_q == *cap) {
			size_t c = *cap ? 2 * *cap : 256;
			void *n = realloc(d->q, c * sizeof(*d->q));
			if (!n)
				return -1;
			d->q = n;
			*cap = c;
		}
		d->q[d->n_q++] = (struct rsw_queue_at){
			.sw = sw, .port = js(p, "name"), .queue = (unsigned)ju(q, "queue"),
			.depth = ju(q, "max_depth_bytes"), .packets = ju(q, "packets"),
			.ecn_marked = ecn, .dropped = ju(q, "dropped_packets")};
	}
	return 0;
}

static int add_ports(struct rsw_digest *d, const json_t *sum, json_t *at)
{
	size_t cap = 0, i, j;
	json_t *sw, *p;
	char key[256];
	if (!d->zone) {
		json_array_foreach(json_object_get(sum, "ports"), j, p)
			if (add_port(d, NULL, p, &cap) < 0)
				return -1;
		return 0;
	}
	json_array_foreach(json_object_get(sum, "switches"), i, sw)
		json_array_foreach(json_object_get(sw, "ports"), j, p) {
			if (add_port(d, js(sw, "name"), p, &cap) < 0)
				return -1;
			snprintf(key, sizeof(key), "%s|%s", js(sw, "name"), js(p, "name"));
			json_object_set(at, key, p);
		}
	return 0;
}

/* Every link direction (one switch: every port's transmit side). */
static int add_dirs(struct rsw_digest *d, const json_t *sum, json_t *at)
{
	size_t i, k;
	json_t *l, *x;
	if (!d->zone) {
		json_t *ports = json_object_get(sum, "ports");
		d->dir = calloc(json_array_size(ports) + 1, sizeof(*d->dir));
		if (!d->dir)
			return -1;
		json_array_foreach(ports, i, x)
			d->dir[d->n_dir++] = (struct rsw_link_dir){
				.from = js(x, "name"), .to = "", .link = i, .tier = RSW_LT_PORT,
				.bytes = ju(x, "tx_bytes"), .frames = ju(x, "tx_packets"),
				.speed_mbps = ju(x, "speed"), .pfc_tx = rsw_digest_pfc_sent(x)};
		return 0;
	}
	json_t *links = json_object_get(sum, "links");
	d->dir = calloc(2 * json_array_size(links) + 1, sizeof(*d->dir));
	if (!d->dir)
		return -1;
	json_array_foreach(links, i, l)
		json_array_foreach(json_object_get(l, "directions"), k, x) {
			json_t *port = json_object_get(at, js(x, "from"));
			d->dir[d->n_dir++] = (struct rsw_link_dir){
				.from = js(x, "from"), .to = js(x, "to"), .link = i,
				.dir = (unsigned)k,
				.tier = rsw_digest_tier_of(d, js(x, "from"), js(x, "to")),
				.bytes = ju(x, "bytes"), .frames = ju(x, "frames"),
				.speed_mbps = ju(l, "speed"),
				.pfc_tx = port ? rsw_digest_pfc_sent(port) : 0};
		}
	return 0;
}

/* The switches with a host link. */
static void find_leaves(struct rsw_digest *d, const json_t *sum)
{
	size_t i;
	json_t *l;
	char key[256];
	json_array_foreach(json_object_get(sum, "links"), i, l) {
		const char *a = js(l, "a"), *b = js(l, "b");
		int ha = !strchr(a, '|'), hb = !strchr(b, '|');
		if (ha != hb) {
			rsw_digest_node(ha ? b : a, key, sizeof(key));
			json_object_set_new(d->leaf, key, json_true());
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double rank(const double *v, size_t n, double p)
{
	size_t r = (size_t)ceil(p * (double)n); /* nearest rank */
	return v[(r ? r : 1) - 1];
}

static int tier_dists(struct rsw_digest *d)
{
	double *v = malloc((d->n_dir + 1) * sizeof(*v));
	if (!v)
		return -1;
	for (unsigned t = 0; t < RSW_LT_N; t++) {
		struct rsw_tier_dist *td = &d->tier[t];
		double sum = 0;
		size_t n = 0;
		for (size_t i = 0; i < d->n_dir; i++)
			if (d->dir[i].tier == t) {
				v[n++] = d->dir[i].util;
				sum += d->dir[i].util;
				td->idle += d->dir[i].frames == 0;
			}
		td->n = n;
		if (!n)
			continue;
		qsort(v, n, sizeof(*v), cmp_double);
		td->min = v[0];
		td->p50 = rank(v, n, 0.5);
		td->p90 = rank(v, n, 0.9);
		td->p99 = rank(v, n, 0.99);
		td->max = v[n - 1];
		td->mean = sum / (double)n;
	}
	free(v);
	return 0;
}

static int cmp_dir(const void *a, const void *b, void *ctx)
{
	const struct rsw_link_dir *dir = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (dir[i].bytes != dir[j].bytes)
		return dir[i].bytes < dir[j].bytes ? 1 : -1;
	return i < j ? -1 : i > j;
}

struct queue_ord {
	struct rsw_queue_at q;
	size_t ord;
};

static int cmp_queue(const void *a, const void *b)
{
	const struct queue_ord *x = a, *y = b;
	if (x->q.depth != y->q.depth)
		return x->q.depth < y->q.depth ? 1 : -1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Deepest first, ties in the ports' order. */
static int sort_queues(struct rsw_digest *d)
{
	struct queue_ord *t = malloc((d->n_q + 1) * sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < d->n_q; i++)
		t[i] = (struct queue_ord){d->q[i], i};
	qsort(t, d->n_q, sizeof(*t), cmp_queue);
	for (size_t i = 0; i < d->n_q; i++)
		d->q[i] = t[i].q;
	free(t);
	return 0;
}

int rsw_digest_build(const json_t *sum, struct rsw_digest *d)
{
	memset(d, 0, sizeof(*d));
	d->zone = json_object_get(sum, "switches") != NULL;
	d->n_switches = d->zone ? json_array_size(json_object_get(sum, "switches")) : 1;
	d->n_hosts = json_array_size(json_object_get(sum, "hosts"));
	d->n_links = json_array_size(json_object_get(sum, "links"));
	d->t0 = ju(sum, "start_ns");
	d->t1 = ju(sum, "end_ns");
	d->leaf = json_object();
	json_t *at = json_object();
	if (!d->leaf || !at)
		goto oom;
	find_leaves(d, sum);
	if (add_ports(d, sum, at) < 0 || add_dirs(d, sum, at) < 0)
		goto oom;
	for (size_t i = 0; i < d->n_dir; i++)
		d->dir[i].util = rsw_digest_util_pct(d->t0, d->t1, d->dir[i].bytes,
						     d->dir[i].frames, d->dir[i].speed_mbps);
	d->by_bytes = malloc((d->n_dir + 1) * sizeof(*d->by_bytes));
	if (!d->by_bytes || tier_dists(d) < 0 || sort_queues(d) < 0)
		goto oom;
	for (size_t i = 0; i < d->n_dir; i++)
		d->by_bytes[i] = i;
	qsort_r(d->by_bytes, d->n_dir, sizeof(*d->by_bytes), cmp_dir, d->dir);
	json_decref(at);
	return 0;
oom:
	json_decref(at);
	rsw_digest_free(d);
	return -1;
}

void rsw_digest_free(struct rsw_digest *d)
{
	free(d->dir);
	free(d->by_bytes);
	free(d->q);
	json_decref(d->leaf);
	memset(d, 0, sizeof(*d));
}
