/* The flow cache's growth, against counts worked out by hand: a fixed cache never grows; a
 * growing one doubles only at the end of a window of as many lookups as it has slots in which
 * more than one lookup in RSW_FC_GROW_EVICTING evicted another flow, starts empty when it does
 * (what it answers is only ever what was put), and stops at its largest size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/hash/hash_policy.h"
#include "dataplane/tables/flow_cache.h"

/* Flow i's key (the tables' identity 1, ingress port i) and the decision it stands for. */
static struct rsw_fc_key key(unsigned i)
{
	return (struct rsw_fc_key){.fib = 1, .port = i, .dport_qp = 4791};
}

/* One frame of flow i through the cache as rsw_ingress takes it: a lookup, and on a miss the
 * decision (egress port i % 64) put. Returns whether it hit; a hit must give flow i's answer. */
static int frame(struct rsw_flow_cache *c, unsigned i)
{
	struct rsw_fc_key k = key(i);
	struct rsw_pkt_meta m;
	memset(&m, 0, sizeof(m));
	if (rsw_flow_cache_find(c, &k, &m)) {
		assert_int_equal(m.egress_port, i % 64);
		assert_int_equal(m.nexthop, i);
		return 1;
	}
	m.egress_port = (uint16_t)(i % 64);
	m.nexthop = i;
	rsw_flow_cache_put(c, NULL, &k, &m);
	return 0;
}

static unsigned slots(const struct rsw_flow_cache *c)
{
	return c->mask + 1;
}

/* Flows that fit with room to spare in a cache that may grow: once each has been put, every
 * frame hits unless two share a slot; a fixed cache of the same size answers the same. */
static void few_flows_hit(void **state)
{
	(void)state;
	struct rsw_flow_cache *c = rsw_flow_cache_new(4096);
	assert_non_null(c);
	rsw_flow_cache_grow_upto(c, 1 << 16);
	unsigned hits = 0;
	for (unsigned round = 0; round < 50; round++)
		for (unsigned i = 0; i < 8; i++)
			hits += (unsigned)frame(c, i);
	struct rsw_flow_cache_stats st;
	rsw_flow_cache_stats(c, &st);
	assert_int_equal(st.hits + st.misses, 400);
	assert_int_equal(hits, st.hits);
	/* 8 flows over 4,096 slots: at most a pair share one, evicting each other each round
	 * (2 lookups of 8 a round: 1 in 4, above 1 in 16), yet a window is 4,096 lookups and
	 * only 400 were made: no window ended, no growth */
	assert_int_equal(st.grown, 0);
	assert_int_equal(slots(c), 4096);
	assert_true(st.misses >= 8);
	rsw_flow_cache_free(c);
}

/* 1,000 flows in turn through 64 slots: nearly every lookup evicts. The cache doubles at the
 * end of each window (64, 128, ... lookups) until its largest size, 1,024, where all but the
 * flows that share a slot hit. */
static void churn_grows_to_the_cap(void **state)
{
	(void)state;
	struct rsw_flow_cache *c = rsw_flow_cache_new(64);
	assert_non_null(c);
	rsw_flow_cache_grow_upto(c, 1500); /* rounded down: 1,024 */
	struct rsw_flow_cache_stats st;
	/* the first window: 64 lookups, all misses, 0 evictions until the slots fill (64 flows
	 * into 64 slots: some share), so it may or may not double; by 64 + 128 + ... lookups of
	 * flows that outnumber the slots 1,000 to 64, it must */
	for (unsigned round = 0; round < 20; round++)
		for (unsigned i = 0; i < 1000; i++)
			frame(c, i);
	rsw_flow_cache_stats(c, &st);
	assert_int_equal(slots(c), 1024);
	assert_int_equal(st.grown, 4); /* 64 -> 128 -> 256 -> 512 -> 1,024 */
	assert_int_equal(st.hits + st.misses, 20000);
	/* at 1,024 slots 1,000 flows still share some: the cache grows no more */
	unsigned before = (unsigned)st.misses;
	for (unsigned i = 0; i < 1000; i++)
		frame(c, i);
	rsw_flow_cache_stats(c, &st);
	assert_int_equal(slots(c), 1024);
	assert_int_equal(st.grown, 4);
	/* taken in turn, a flow alone in its slot hits, and one that shares it misses (the
	 * others of its slot came between): counted from where the keys fall */
	unsigned in_slot[1024] = {0}, shared = 0;
	for (unsigned f = 0; f < 1000; f++) {
		struct rsw_fc_key k = key(f);
		in_slot[rsw_fc_slot(c, &k)]++;
	}
	for (unsigned s = 0; s < 1024; s++)
		shared += in_slot[s] > 1 ? in_slot[s] : 0;
	assert_int_equal(st.misses - before, shared);
	rsw_flow_cache_free(c);
}

/* Without rsw_flow_cache_grow_upto a cache keeps its size whatever it evicts (a live
 * worker's). */
static void fixed_never_grows(void **state)
{
	(void)state;
	struct rsw_flow_cache *c = rsw_flow_cache_new(64);
	assert_non_null(c);
	for (unsigned round = 0; round < 20; round++)
		for (unsigned i = 0; i < 1000; i++)
			frame(c, i);
	struct rsw_flow_cache_stats st;
	rsw_flow_cache_stats(c, &st);
	assert_int_equal(slots(c), 64);
	assert_int_equal(st.grown, 0);
	assert_true(st.evictions > 19000 - 64);
	rsw_flow_cache_free(c);
}

/* A doubled cache starts empty: the frame after a growth misses, and hits again once put. */
static void grown_starts_empty(void **state)
{
	(void)state;
	struct rsw_flow_cache *c = rsw_flow_cache_new(2);
	assert_non_null(c);
	rsw_flow_cache_grow_upto(c, 4);
	/* 3 flows over 2 slots: the window is 2 lookups; lookups evict from the third on */
	unsigned i = 0;
	struct rsw_flow_cache_stats st;
	do {
		frame(c, i++ % 3);
		rsw_flow_cache_stats(c, &st);
	} while (!st.grown && i < 100);
	assert_int_equal(st.grown, 1);
	assert_int_equal(slots(c), 4);
	for (unsigned f = 0; f < 3; f++) {
		struct rsw_fc_key k = key(f);
		struct rsw_pkt_meta m;
		memset(&m, 0, sizeof(m));
		/* the flow whose put made the cache grow was put into the new slots */
		if (f != (i - 1) % 3)
			assert_int_equal(rsw_flow_cache_find(c, &k, &m), 0);
	}
	rsw_flow_cache_free(c);
}

/* A parsed RoCEv2 frame's metadata: IPv4 10.0.0.1 -> 10.0.0.dst, or IPv6 2001:db8::1 ->
 * 2001:db8::dst with flow label `label`; UDP 4791, destination QP 0x11. */
static void meta(struct rsw_pkt_meta *m, int v6, unsigned dst, uint32_t label)
{
	memset(m, 0, sizeof(*m));
	m->l3 = v6 ? RSW_L3_IPV6 : RSW_L3_IPV4;
	m->flags = RSW_META_F_UDP | RSW_META_F_ROCE;
	m->ip_proto = 17;
	m->ttl = 64;
	m->dport = 4791;
	m->sport = 0xc000;
	m->bth_dest_qp = 0x11;
	m->flow_label = label;
	if (v6) {
		m->src_ip[0] = m->dst_ip[0] = 0x20;
		m->src_ip[1] = m->dst_ip[1] = 0x01;
		m->src_ip[15] = 1;
		m->dst_ip[15] = (uint8_t)dst;
	} else {
		m->src_ip[0] = m->dst_ip[0] = 10;
		m->src_ip[3] = 1;
		m->dst_ip[3] = (uint8_t)dst;
	}
}

/* Exact match whatever part of the key tells flows apart: an IPv4 flow's key fits the entry's
 * first line, an IPv6 one's last address bytes and a flow label are in its second. In a cache of
 * one slot, each flow finds the previous flow's entry there: it must miss, and after its own
 * decision is put, hit with that decision; an IPv6 flow comes again after an IPv4 one, whose
 * entry was put over the first line only. */
static void flows_differing_anywhere_miss(void **state)
{
	(void)state;
	static struct rsw_fib fib;
	fib.cache_id = 7;
	fib.cache_key = RSW_FC_KEY_QP | RSW_FC_KEY_LABEL;
	static const uint8_t frame[64] = {0x02, 0, 0, 0, 1, 0, 0x02, 0, 0, 0, 2, 0};
	const struct {
		int v6;
		unsigned dst;
		uint32_t label;
	} flows[] = {{0, 3, 0}, {0, 5, 0}, {1, 3, 0}, {1, 5, 0}, {1, 5, 0x12345}, {0, 5, 0x12345},
		     {0, 3, 0}, {1, 5, 0x12345}, {0, 3, 0}, {1, 3, 0}};
	const unsigned n = sizeof(flows) / sizeof(flows[0]);
	struct rsw_flow_cache *c = rsw_flow_cache_new(1);
	assert_non_null(c);
	for (unsigned i = 0; i < n; i++) {
		struct rsw_pkt_meta m;
		struct rsw_fc_key k;
		meta(&m, flows[i].v6, flows[i].dst, flows[i].label);
		assert_int_equal(rsw_flow_key(&fib, frame, &m, 3, &k), 1);
		assert_false(rsw_flow_cache_find(c, &k, &m));
		m.egress_port = (uint16_t)(10 + i);
		m.drop = (uint8_t)i;
		rsw_flow_cache_put(c, &fib, &k, &m);
		meta(&m, flows[i].v6, flows[i].dst, flows[i].label);
		assert_true(rsw_flow_cache_find(c, &k, &m));
		assert_int_equal(m.egress_port, 10 + i);
		assert_int_equal(m.drop, i);
	}
	rsw_flow_cache_free(c);
}

/* A hash policy's UDF over the BTH destination QP's low bytes (L4 + 13, as Arista's UDF on
 * the QP): three bytes are kept in the key's first line, four in its second. Either way, flows
 * that differ only in those bytes (QP 0x11 and 0x12) miss each other in a one-slot cache, and
 * a flow differing only past the UDF's bytes is the same flow. */
static void flows_differing_in_udf_bytes_miss(void **state)
{
	(void)state;
	for (unsigned len = 3; len <= 4; len++) {
		static struct rsw_hash_policy pol;
		memset(&pol, 0, sizeof(pol));
		pol.n_udf = 1;
		pol.udf[0] = (struct rsw_udf){.base = RSW_UDF_L4, .length = (uint8_t)len,
					      .offset = (uint16_t)(16 - len),
					      .match_ip_protocol = -1, .match_l4_dst_port = -1};
		memset(pol.udf[0].mask, 0xff, len);
		static struct rsw_fib fib;
		memset(&fib, 0, sizeof(fib));
		fib.policies = &pol;
		fib.n_policies = 1;
		rsw_flow_cache_recipe(&fib);
		assert_int_equal(!!(fib.cache_key & RSW_FC_KEY_UDF3), len == 3);
		struct rsw_flow_cache *c = rsw_flow_cache_new(1);
		assert_non_null(c);
		/* Ethernet, IPv4, UDP (l4_off 34), the BTH at 42: its destination QP in 47..49 */
		uint8_t frame[2][64] = {{0}};
		const uint8_t qp_lo[] = {0x11, 0x12, 0x11};
		for (unsigned i = 0; i < 3; i++) {
			uint8_t *f = frame[i % 2];
			memset(f, 0, 64);
			f[34 + 15] = qp_lo[i];
			f[34 + 17] = (uint8_t)(0xa0 + i); /* past the UDF: not in the key */
			struct rsw_pkt_meta m;
			struct rsw_fc_key k;
			meta(&m, 0, 3, 0);
			m.l4_off = 34;
			m.frame_len = 64;
			assert_int_equal(rsw_flow_key(&fib, f, &m, 3, &k), 1);
			int hit = rsw_flow_cache_find(c, &k, &m);
			assert_int_equal(hit, 0); /* the previous frame's QP was another one */
			m.egress_port = (uint16_t)(10 + qp_lo[i]);
			rsw_flow_cache_put(c, &fib, &k, &m);
			/* the same QP, other bytes past the UDF: its own decision */
			f[34 + 17] ^= 0xff;
			meta(&m, 0, 3, 0);
			m.l4_off = 34;
			m.frame_len = 64;
			struct rsw_fc_key k2;
			assert_int_equal(rsw_flow_key(&fib, f, &m, 3, &k2), 1);
			assert_true(rsw_flow_cache_find(c, &k2, &m));
			assert_int_equal(m.egress_port, 10 + qp_lo[i]);
		}
		rsw_flow_cache_free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(few_flows_hit),
					   cmocka_unit_test(churn_grows_to_the_cap),
					   cmocka_unit_test(fixed_never_grows),
					   cmocka_unit_test(grown_starts_empty),
					   cmocka_unit_test(flows_differing_anywhere_miss),
					   cmocka_unit_test(flows_differing_in_udf_bytes_miss)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
