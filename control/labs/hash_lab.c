#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/hash/resilient.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/parse.h"
#include "hash_lab.h"

/* Index of the flow of m (its totals slot grown with it); -1 when out of memory. */
static long flow_of(struct rsw_lab_traffic *t, const struct rsw_pkt_meta *m, size_t *flows_cap)
{
	struct rsw_flow_key key;
	rsw_flow_key_of(m, &key);
	long fi = rsw_flow_table_find_add(&t->ix, &key);
	if (fi < 0)
		return -1;
	if ((size_t)fi == *flows_cap) {
		size_t cap = *flows_cap ? *flows_cap * 2 : 1024;
		void *p = realloc(t->flows, cap * sizeof(*t->flows));
		if (!p)
			return -1;
		t->flows = p;
		*flows_cap = cap;
	}
	if ((size_t)fi == t->n_flows) {
		t->flows[fi] = (struct rsw_lab_flow){0};
		t->n_flows++;
	}
	return fi;
}

static int push_packet(struct rsw_lab_traffic *t, size_t *cap, const uint8_t *data, uint32_t len,
		       uint32_t wire_len, const struct rsw_pkt_meta *m, uint32_t flow)
{
	if (t->n_pkts == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		void *a = realloc(t->frame, c * sizeof(*t->frame));
		if (a)
			t->frame = a;
		void *b = realloc(t->meta, c * sizeof(*t->meta));
		if (b)
			t->meta = b;
		void *d = realloc(t->flow, c * sizeof(*t->flow));
		if (d)
			t->flow = d;
		void *e = realloc(t->wire_len, c * sizeof(*t->wire_len));
		if (e)
			t->wire_len = e;
		if (!a || !b || !d || !e)
			return -1;
		*cap = c;
	}
	uint8_t *copy = malloc(len);
	if (!copy)
		return -1;
	memcpy(copy, data, len);
	t->frame[t->n_pkts] = copy;
	t->meta[t->n_pkts] = *m;
	t->flow[t->n_pkts] = flow;
	t->wire_len[t->n_pkts] = wire_len;
	t->n_pkts++;
	return 0;
}

struct rsw_lab_traffic *rsw_lab_load(const char *const *pcaps, unsigned n, char *err, size_t errlen)
{
	struct rsw_lab_traffic *t = calloc(1, sizeof(*t));
	size_t pcap_cap = 0, flows_cap = 0;
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (unsigned f = 0; f < n; f++) {
		char perr[PCAP_ERRBUF_SIZE];
		pcap_t *p = pcap_open_offline(pcaps[f], perr);
		if (!p) {
			snprintf(err, errlen, "%s: %s", pcaps[f], perr);
			goto fail;
		}
		if (pcap_datalink(p) != DLT_EN10MB) {
			snprintf(err, errlen, "%s: link type %s, expected Ethernet", pcaps[f],
				 pcap_datalink_val_to_name(pcap_datalink(p)));
			pcap_close(p);
			goto fail;
		}
		struct pcap_pkthdr *h;
		const u_char *data;
		int rc;
		while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
			struct rsw_pkt_meta m;
			if (rsw_parse(data, h->caplen, &m)) {
				t->skipped_malformed++;
				continue;
			}
			if (m.l3 == RSW_L3_NONE) {
				t->skipped_not_ip++;
				continue;
			}
			long fi = flow_of(t, &m, &flows_cap);
			if (fi < 0 || push_packet(t, &pcap_cap, data, h->caplen, h->len, &m, (uint32_t)fi) < 0) {
				snprintf(err, errlen, "%s: out of memory", pcaps[f]);
				pcap_close(p);
				goto fail;
			}
			t->flows[fi].packets++;
			t->flows[fi].bytes += h->len;
		}
		if (rc == -1) {
			/* a truncated capture: say so instead of judging part of it */
			snprintf(err, errlen, "%s: %s", pcaps[f], pcap_geterr(p));
			pcap_close(p);
			goto fail;
		}
		pcap_close(p);
	}
	return t;
fail:
	rsw_lab_free(t);
	return NULL;
}

void rsw_lab_free(struct rsw_lab_traffic *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_pkts; i++)
		free(t->frame[i]);
	free(t->frame);
	free(t->meta);
	free(t->flow);
	free(t->wire_len);
	free(t->flows);
	rsw_flow_table_free(&t->ix);
	free(t);
}

void rsw_lab_hash(const struct rsw_lab_traffic *t, const struct rsw_hash_policy *pol,
		  uint16_t in_port, uint64_t seed, uint32_t *hash)
{
	uint64_t rnd = seed ? seed : 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < t->n_pkts; i++) {
		struct rsw_pkt_meta m = t->meta[i];
		m.in_port = in_port;
		hash[i] = rsw_hash_packet(pol, t->frame[i], &m, &rnd);
	}
}

int rsw_lab_assign(const struct rsw_lab_traffic *t, const uint32_t *hash, unsigned n_members,
		   uint32_t buckets, uint64_t fail_mask, uint16_t *member)
{
	uint16_t active[RSW_ECMP_MAX_MEMBERS];
	unsigned n_active = 0;
	for (unsigned m = 0; m < n_members; m++)
		if (m >= 64 || !(fail_mask >> m & 1))
			active[n_active++] = (uint16_t)m;
	if (n_active == 0)
		return -1;
	if (buckets == 0) {
		for (size_t i = 0; i < t->n_pkts; i++)
			member[i] = active[hash[i] % n_active];
		return 0;
	}
	struct rsw_rbt rbt = {0};
	if (rsw_rbt_init(&rbt, buckets, (uint16_t)n_members) < 0)
		return -1;
	for (unsigned m = 0; m < n_members && m < 64; m++)
		if (fail_mask >> m & 1)
			rsw_rbt_remove(&rbt, (uint16_t)m);
	for (size_t i = 0; i < t->n_pkts; i++)
		member[i] = rbt.bucket[hash[i] % buckets];
	rsw_rbt_free(&rbt);
	return 0;
}

static int by_bytes_desc(const void *a, const void *b, void *arg)
{
	const struct rsw_lab_flow *f = arg;
	uint64_t x = f[*(const uint32_t *)a].bytes, y = f[*(const uint32_t *)b].bytes;
	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void rsw_lab_metrics(const struct rsw_lab_traffic *t, const uint16_t *member, unsigned n_members,
		     uint64_t fail_mask, struct rsw_lab_result *r)
{
	memset(r, 0, sizeof(*r));
	r->n_members = n_members;
	uint16_t *flow_member = malloc((t->n_flows + 1) * sizeof(*flow_member));
	uint32_t *order = malloc((t->n_flows + 1) * sizeof(*order));
	if (!flow_member || !order) {
		free(flow_member);
		free(order);
		return;
	}
	for (size_t f = 0; f < t->n_flows; f++)
		flow_member[f] = UINT16_MAX;
	for (size_t i = 0; i < t->n_pkts; i++) {
		uint16_t m = member[i];
		r->packets[m]++;
		r->bytes[m] += t->wire_len[i];
		/* a flow counts on the member of its first packet */
		if (flow_member[t->flow[i]] == UINT16_MAX) {
			flow_member[t->flow[i]] = m;
			r->flows[m]++;
		}
	}
	unsigned n_active = 0;
	double sum = 0, sum2 = 0, max = 0;
	for (unsigned m = 0; m < n_members; m++) {
		if (m < 64 && (fail_mask >> m & 1))
			continue;
		double x = (double)r->bytes[m];
		n_active++;
		sum += x;
		sum2 += x * x;
		if (x > max)
			max = x;
	}
	r->max_mean = sum > 0 ? max / (sum / n_active) : 0;
	r->jain = sum2 > 0 ? sum * sum / (n_active * sum2) : 0;
	/* the n_active largest flows: how many share a member */
	for (size_t f = 0; f < t->n_flows; f++)
		order[f] = (uint32_t)f;
	qsort_r(order, t->n_flows, sizeof(*order), by_bytes_desc, t->flows);
	r->fat_n = n_active < t->n_flows ? n_active : (unsigned)t->n_flows;
	unsigned per_member[256] = {0};
	for (unsigned k = 0; k < r->fat_n; k++)
		per_member[flow_member[order[k]]]++;
	for (unsigned m = 0; m < n_members; m++)
		if (per_member[m] >= 2) {
			r->fat_collisions++;
			r->fat_flows_colliding += per_member[m];
		}
	free(flow_member);
	free(order);
}

size_t rsw_lab_moved_flows(const struct rsw_lab_traffic *t, const uint16_t *a, const uint16_t *b)
{
	uint8_t *seen = calloc(t->n_flows + 1, 1);
	size_t moved = 0;
	if (!seen)
		return 0;
	for (size_t i = 0; i < t->n_pkts; i++) {
		uint32_t f = t->flow[i];
		if (seen[f])
			continue;
		seen[f] = 1;
		moved += a[i] != b[i];
	}
	free(seen);
	return moved;
}
