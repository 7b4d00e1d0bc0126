#include <stdlib.h>
#include <string.h>

#include "dataplane/pipeline/pipeline.h"
#include "dataplane/tables/switch.h"
#include "hash_zone.h"

#define MAX_HOPS 16 /* a longer path is a routing loop */

/* The switch port whose neighbour table holds the source address: where the flow enters. */
static int entry(const struct rsw_zone *z, const struct rsw_pkt_meta *m, unsigned *sw,
		 uint16_t *port)
{
	uint8_t fam = m->l3 == RSW_L3_IPV4 ? 4 : 6;
	size_t len = fam == 4 ? 4 : 16;
	for (unsigned s = 0; s < z->n_sw; s++) {
		const struct rsw_state *st = z->sw[s].sw->state;
		for (size_t i = 0; i < st->n_neigh; i++)
			if (st->neigh[i].ip.family == fam && !memcmp(st->neigh[i].ip.a, m->src_ip, len)) {
				*sw = s;
				*port = st->neigh[i].port;
				return 0;
			}
	}
	return -1;
}

/* Index in r->link of what (sw, port) sends on, or -1 when the port has no link. */
static int out_link(const struct rsw_zone *z, unsigned sw, uint16_t port,
		    struct rsw_topo_end *far)
{
	for (unsigned i = 0; i < z->n_link; i++) {
		const struct rsw_topo_link *l = &z->link[i];
		if (l->a.sw == (int)sw && l->a.idx == port) {
			*far = l->b;
			return (int)(2 * i);
		}
		if (l->b.sw == (int)sw && l->b.idx == port) {
			*far = l->a;
			return (int)(2 * i + 1);
		}
	}
	return -1;
}

/* Flow indices by bytes, largest first (ties by index, so the order is reproducible). */
static int cmp_bytes_desc(const void *a, const void *b, void *flows)
{
	const struct rsw_lab_flow *fl = flows;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (fl[i].bytes != fl[j].bytes)
		return fl[i].bytes < fl[j].bytes ? 1 : -1;
	return i < j ? -1 : i > j;
}

/* max/mean, Jain and fat-flow collisions of one tier; path[f][k] lists flow f's links. */
static int judge_tier(const struct rsw_lab_traffic *t, struct rsw_zone_lab *r, int tier,
		      const int16_t *path)
{
	struct rsw_zone_tier *tr = &r->tier[tier];
	double sum = 0, sq = 0, max = 0;
	for (unsigned i = 0; i < r->n_links; i++) {
		if (r->link[i].tier != tier)
			continue;
		double b = (double)r->link[i].bytes;
		tr->n_links++;
		sum += b;
		sq += b * b;
		max = b > max ? b : max;
	}
	if (!tr->n_links || sum == 0)
		return 0;
	tr->max_mean = max / (sum / tr->n_links);
	tr->jain = sum * sum / (tr->n_links * sq);
	/* the n_links largest flows: which of this tier's links carry two or more of them */
	size_t *order = malloc((t->n_flows + 1) * sizeof(*order));
	unsigned *fat = calloc(r->n_links, sizeof(*fat));
	if (!order || !fat) {
		free(order);
		free(fat);
		return -1;
	}
	for (size_t f = 0; f < t->n_flows; f++)
		order[f] = f;
	qsort_r(order, t->n_flows, sizeof(*order), cmp_bytes_desc, t->flows);
	tr->fat_n = tr->n_links < t->n_flows ? tr->n_links : (unsigned)t->n_flows;
	for (unsigned k = 0; k < tr->fat_n; k++) {
		size_t f = order[k];
		for (unsigned h = 0; h < MAX_HOPS && path[f * MAX_HOPS + h] >= 0; h++) {
			int l = path[f * MAX_HOPS + h];
			if (r->link[l].tier == tier)
				fat[l]++;
		}
	}
	for (unsigned i = 0; i < r->n_links; i++)
		tr->fat_links_colliding += fat[i] >= 2;
	free(order);
	free(fat);
	return 0;
}

/* Every link in both directions, each with the tier its sending port's role puts it in (-1:
 * none, or a host's end). */
static void link_tiers(const struct rsw_zone *z, struct rsw_zone_lab *r)
{
	r->n_links = 2 * z->n_link;
	for (unsigned i = 0; i < z->n_link; i++) {
		const struct rsw_topo_end *from[2] = {&z->link[i].a, &z->link[i].b};
		const struct rsw_topo_end *to[2] = {&z->link[i].b, &z->link[i].a};
		for (unsigned d = 0; d < 2; d++) {
			struct rsw_zone_link_load *l = &r->link[2 * i + d];
			l->sw = from[d]->sw;
			l->port = from[d]->idx;
			l->tier = -1;
			if (from[d]->sw == RSW_TOPO_HOST || to[d]->sw == RSW_TOPO_HOST)
				continue;
			unsigned role = z->sw[from[d]->sw].sw->state->ports[from[d]->idx].role;
			l->tier = role == RSW_ROLE_UPLINK ? RSW_TIER_UP
				  : role == RSW_ROLE_DOWNLINK ? RSW_TIER_DOWN : -1;
		}
	}
}

/* Flow f's path from its first packet (index i), hop by hop: each hop sees the frame the
 * previous one sent (TTL - 1, new MACs); its packets counted on every link. -1: no memory. */
static int walk_flow(const struct rsw_lab_traffic *t, const struct rsw_zone *z,
		     struct rsw_zone_lab *r, size_t f, size_t i, int16_t *path,
		     struct rsw_ingress_ctx *ictx)
{
	const struct rsw_pkt_meta *m0 = &t->meta[i];
	unsigned s;
	uint16_t p;
	if (entry(z, m0, &s, &p) < 0) {
		r->flows_unplaced++;
		return 0;
	}
	uint8_t *buf = malloc(m0->frame_len ? m0->frame_len : 1);
	if (!buf)
		return -1;
	memcpy(buf, t->frame[i], m0->frame_len);
	unsigned h;
	for (h = 0; h < MAX_HOPS; h++) {
		struct rsw_pkt_meta m;
		struct rsw_pipeline pl = {.fib = rsw_switch_fib(z->sw[s].sw), .ictx = ictx};
		struct rsw_verdict v = rsw_pipeline_frame(&pl, p, buf, m0->frame_len, NULL, &m, NULL);
		if (v.kind != RSW_VERDICT_ENQUEUED) { /* MAC control is not a flow's */
			r->flows_dropped++;
			break;
		}
		struct rsw_topo_end far;
		int l = out_link(z, s, v.port, &far);
		if (l < 0) {
			r->flows_left++;
			break;
		}
		path[f * MAX_HOPS + h] = (int16_t)l;
		r->link[l].flows++;
		r->link[l].packets += t->flows[f].packets;
		r->link[l].bytes += t->flows[f].bytes;
		if (far.sw == RSW_TOPO_HOST) {
			r->flows_delivered++;
			break;
		}
		s = (unsigned)far.sw;
		p = far.idx;
	}
	if (h == MAX_HOPS)
		r->flows_looped++;
	free(buf);
	return 0;
}

/* Each flow's path found once, from its first packet (every field a deterministic hash reads is
 * the same in all of a flow's packets), then each tier judged. */
int rsw_lab_zone(const struct rsw_lab_traffic *t, const struct rsw_zone *z, struct rsw_zone_lab *r)
{
	memset(r, 0, sizeof(*r));
	link_tiers(z, r);
	int16_t *path = malloc((t->n_flows + 1) * MAX_HOPS * sizeof(*path));
	size_t *first = malloc((t->n_flows + 1) * sizeof(*first));
	int rc = path && first ? 0 : -1;
	if (rc == 0) {
		memset(path, 0xFF, (t->n_flows + 1) * MAX_HOPS * sizeof(*path));
		for (size_t f = 0; f < t->n_flows; f++)
			first[f] = SIZE_MAX;
		for (size_t i = t->n_pkts; i-- > 0;)
			first[t->flow[i]] = i;
	}
	struct rsw_ingress_ctx ictx = {.rnd = 0x9E3779B97F4A7C15ull};
	for (size_t f = 0; rc == 0 && f < t->n_flows; f++)
		if (first[f] != SIZE_MAX)
			rc = walk_flow(t, z, r, f, first[f], path, &ictx);
	for (int tier = 0; tier < RSW_TIERS && rc == 0; tier++)
		rc = judge_tier(t, r, tier, path);
	free(path);
	free(first);
	return rc;
}
