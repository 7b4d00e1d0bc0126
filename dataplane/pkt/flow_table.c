#include <stdlib.h>
#include <string.h>

#include <rte_jhash.h>

#include "flow_table.h"

void rsw_flow_key_of(const struct rsw_pkt_meta *m, struct rsw_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->l3 = m->l3;
	k->proto = m->ip_proto;
	k->sport = m->sport;
	k->dport = m->dport;
	k->qp = (m->flags & RSW_META_F_ROCE) ? m->bth_dest_qp : 0;
	memcpy(k->src, m->src_ip, 16);
	memcpy(k->dst, m->dst_ip, 16);
}

static uint32_t key_hash(const struct rsw_flow_key *k)
{
	uint32_t h = rte_jhash(k->src, 16, k->l3);
	h = rte_jhash(k->dst, 16, h);
	return rte_jhash_3words(k->proto, (uint32_t)k->sport << 16 | k->dport, k->qp, h);
}

static int same(const struct rsw_flow_key *a, const struct rsw_flow_key *b)
{
	return a->l3 == b->l3 && a->proto == b->proto && a->sport == b->sport &&
	       a->dport == b->dport && a->qp == b->qp && !memcmp(a->src, b->src, 16) &&
	       !memcmp(a->dst, b->dst, 16);
}

static int rehash(struct rsw_flow_table *t)
{
	size_t slots = t->slots ? t->slots * 2 : 1024;
	uint32_t *s = calloc(slots, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = key_hash(&t->key[i]) & (slots - 1);
		while (s[j])
			j = (j + 1) & (slots - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->slots = slots;
	return 0;
}

long rsw_flow_table_find_add(struct rsw_flow_table *t, const struct rsw_flow_key *k)
{
	if ((t->n + 1) * 2 > t->slots && rehash(t) < 0)
		return -1;
	size_t j = key_hash(k) & (t->slots - 1);
	while (t->slot[j]) {
		if (same(&t->key[t->slot[j] - 1], k))
			return (long)t->slot[j] - 1;
		j = (j + 1) & (t->slots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		void *p = realloc(t->key, cap * sizeof(*t->key));
		if (!p)
			return -1;
		t->key = p;
		t->cap = cap;
	}
	t->key[t->n] = *k;
	t->slot[j] = (uint32_t)++t->n;
	return (long)t->n - 1;
}

void rsw_flow_table_free(struct rsw_flow_table *t)
{
	free(t->key);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
