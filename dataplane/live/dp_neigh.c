#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "dataplane/pkt/arp_nd.h"
#include "dataplane/tm/tsan.h"
#include "dp_neigh.h"

#define J(v) json_integer((json_int_t)(v))
#define RING_SIZE RSW_DP_PUNT_RING

static const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t ZERO_MAC[6];

struct rsw_dp_neigh *rsw_dp_neigh_new(struct rsw_dp *dp, unsigned idx, unsigned timeout_s,
				      char *err, size_t errlen)
{
	struct rsw_dp_neigh *n = rte_zmalloc("rsw_neigh", sizeof(*n), RTE_CACHE_LINE_SIZE);
	char name[RTE_RING_NAMESIZE];
	if (!n) {
		snprintf(err, errlen, "out of memory for the neighbour tables");
		return NULL;
	}
	n->timeout_ns = (uint64_t)timeout_s * 1000000000ull;
	snprintf(name, sizeof(name), "rsw_punt%u", idx);
	n->punt = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "rsw_miss%u", idx);
	n->miss = rte_ring_create_elem(name, sizeof(struct rsw_dp_miss), RING_SIZE, SOCKET_ID_ANY,
				       RING_F_SC_DEQ);
	int ok = n->punt && n->miss;
	for (unsigned p = 0; ok && p < dp->n_ports; p++) {
		snprintf(name, sizeof(name), "rsw_inj%u_%u", idx, p);
		n->inject[p] = rte_ring_create(name, RSW_DP_INJECT_RING, SOCKET_ID_ANY,
					       RING_F_SP_ENQ | RING_F_SC_DEQ);
		ok = n->inject[p] != NULL;
	}
	if (!ok) {
		snprintf(err, errlen, "cannot create the neighbour rings: %s", rte_strerror(rte_errno));
		rsw_dp_neigh_free(n);
		return NULL;
	}
	return n;
}

void rsw_dp_neigh_free(struct rsw_dp_neigh *n)
{
	struct rte_mbuf *m;
	if (!n)
		return;
	while (n->punt && rte_ring_dequeue(n->punt, (void **)&m) == 0)
		rsw_mbuf_free(m);
	rte_ring_free(n->punt);
	rte_ring_free(n->miss);
	for (unsigned p = 0; p < RSW_MAX_PORTS; p++) {
		while (n->inject[p] && rte_ring_dequeue(n->inject[p], (void **)&m) == 0)
			rsw_mbuf_free(m);
		rte_ring_free(n->inject[p]);
	}
	rte_free(n);
}

static const uint8_t *port_mac(const struct rsw_state *s, uint16_t port)
{
	return s->ports[port].has_mac ? s->ports[port].mac : s->sw.router_mac;
}

/* The frame goes out of port, sent by the port's owner. */
static void inject(struct rsw_dp *dp, uint16_t port, struct rte_mbuf *m, uint32_t len)
{
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	if (port >= dp->n_ports || rte_ring_sp_enqueue(dp->neigh->inject[port], m) != 0) {
		dp->neigh->st.inject_full++;
		rsw_mbuf_free(m);
	}
}

/* The address of port that is addr, or NULL. */
static const struct rsw_interface *ours(const struct rsw_state *s, const struct rsw_ip *ip,
					uint16_t port)
{
	const struct rsw_interface *a = rsw_state_intf_addr(s, ip);
	return a && a->port == port ? a : NULL;
}

/* The configured (static) or the learnt neighbour for ip, on any port; NULL if none. */
static const struct rsw_neighbor *neigh_of(const struct rsw_state *s, const struct rsw_ip *ip,
					   int dynamic)
{
	for (size_t i = 0; i < s->n_neigh; i++)
		if (s->neigh[i].dynamic == dynamic && rsw_ip_eq(&s->neigh[i].ip, ip))
			return &s->neigh[i];
	return NULL;
}

static struct rsw_dp_learnt *find_learnt(struct rsw_dp_neigh *n, const struct rsw_ip *ip)
{
	for (unsigned i = 0; i < n->n_learnt; i++)
		if (rsw_ip_eq(&n->learnt[i].ip, ip))
			return &n->learnt[i];
	return NULL;
}

/* An ARP request or NS for ip out of port, from the port's address in ip's subnet; dmac NULL
 * broadcasts (ARP) or goes to the solicited-node group (ND), else it is a unicast probe. */
static int solicit(struct rsw_dp *dp, const struct rsw_ip *ip, const uint8_t *dmac)
{
	const struct rsw_state *s = dp->sw->state;
	struct rsw_dp_neigh *n = dp->neigh;
	const struct rsw_interface *a;
	int port = rsw_state_intf_port(s, ip, &a);
	if (port < 0) {
		n->st.resolve_no_interface++;
		return -1;
	}
	struct rte_mbuf *m = rsw_mbuf_alloc(dp->pool);
	if (!m) {
		n->st.no_mbuf++;
		return -1;
	}
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	const uint8_t *smac = port_mac(s, (uint16_t)port);
	uint32_t len;
	if (ip->family == 4) {
		len = rsw_arp_build(d, 1, dmac ? dmac : BCAST, smac, a->addr.ip.a, ZERO_MAC, ip->a);
		n->st.arp_request_tx++;
	} else {
		len = rsw_nd_build_ns(d, smac, a->addr.ip.a, ip->a, dmac);
		n->st.ns_tx++;
	}
	inject(dp, (uint16_t)port, m, len);
	return 0;
}

/* What a host said about itself: ip is at mac behind port. Only addresses of the port's own
 * subnets are learnt, and a configured neighbour is never overridden. */
static void learn(struct rsw_dp *dp, uint16_t port, const struct rsw_ip *ip, const uint8_t mac[6],
		  uint64_t now)
{
	const struct rsw_state *s = dp->sw->state;
	struct rsw_dp_neigh *n = dp->neigh;
	const struct rsw_interface *a;
	if (ip->family == 0 || rsw_state_intf_port(s, ip, &a) != port || rsw_state_intf_addr(s, ip)) {
		n->st.outside_subnet++;
		return;
	}
	const struct rsw_neighbor *st = neigh_of(s, ip, 0);
	if (st) {
		if (st->port != port || memcmp(st->mac, mac, 6))
			n->st.static_kept++;
		return;
	}
	struct rsw_dp_learnt *e = find_learnt(n, ip);
	if (!e) {
		if (n->n_learnt == RSW_DP_NEIGH_MAX) {
			n->st.table_full++;
			return;
		}
		e = &n->learnt[n->n_learnt++];
		memset(e, 0, sizeof(*e));
		e->ip = *ip;
		e->dirty = 1;
		n->st.learnt++;
	} else if (e->port != port || memcmp(e->mac, mac, 6)) {
		e->dirty = 1;
		n->st.moved++;
	} else {
		n->st.refreshed++;
	}
	e->port = port;
	memcpy(e->mac, mac, 6);
	e->seen_ns = now;
	e->probed_ns = 0;
}

static void handle(struct rsw_dp *dp, struct rte_mbuf *m, uint64_t now)
{
	const struct rsw_state *s = dp->sw->state;
	struct rsw_dp_neigh *n = dp->neigh;
	struct rsw_nd_msg msg;
	uint16_t port = m->port;
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	if (port >= dp->n_ports || rsw_nd_parse(d, m->data_len, &msg) < 0) {
		n->st.other_rx++;
		rsw_mbuf_free(m);
		return;
	}
	const uint8_t *smac = port_mac(s, port);
	const struct rsw_interface *a = ours(s, &msg.target, port);
	switch (msg.kind) {
	case RSW_ND_ARP_REQUEST:
	case RSW_ND_ARP_REPLY:
		if (msg.kind == RSW_ND_ARP_REQUEST)
			n->st.arp_request_rx++;
		else
			n->st.arp_reply_rx++;
		if (msg.has_mac)
			learn(dp, port, &msg.sender, msg.mac, now);
		if (msg.kind == RSW_ND_ARP_REQUEST && a && msg.has_mac) {
			/* RFC 826: the reply goes to the requester, saying where the target is */
			struct rsw_ip sender = msg.sender;
			inject(dp, port, m, rsw_arp_build(d, 2, msg.mac, smac, a->addr.ip.a, msg.mac,
							  sender.family ? sender.a : (uint8_t[4]){0}));
			n->st.arp_reply_tx++;
			return;
		}
		break;
	case RSW_ND_NS:
		n->st.ns_rx++;
		if (msg.has_mac)
			learn(dp, port, &msg.sender, msg.mac, now);
		if (a) {
			/* RFC 4861 7.2.4: solicited, to the source; a DAD probe (from ::) is answered
			 * to all nodes, unsolicited */
			static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
			static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
			int dad = msg.sender.family == 0;
			uint8_t dst[16], dmac[6], tgt[16];
			memcpy(dst, dad ? all_nodes : msg.sender.a, 16);
			memcpy(dmac, dad ? all_nodes_mac : msg.has_mac ? msg.mac : msg.eth_src, 6);
			memcpy(tgt, a->addr.ip.a, 16);
			inject(dp, port, m, rsw_nd_build_na(d, smac, tgt, dmac, dst,
							    RSW_NA_ROUTER | RSW_NA_OVERRIDE |
							    (dad ? 0 : RSW_NA_SOLICITED)));
			n->st.na_tx++;
			return;
		}
		break;
	case RSW_ND_NA:
		n->st.na_rx++;
		/* Linux answers a unicast solicitation (a probe) without the target link-layer
		 * option (RFC 4861 7.2.4 lets it): the frame's source is the target's MAC then */
		if (msg.has_mac)
			learn(dp, port, &msg.target, msg.mac, now);
		else if ((msg.na_flags & RSW_NA_SOLICITED) && !(msg.eth_src[0] & 1))
			learn(dp, port, &msg.target, msg.eth_src, now);
		break;
	case RSW_ND_ECHO4:
	case RSW_ND_ECHO6:
		n->st.echo_rx++;
		if (rsw_state_intf_addr(s, &msg.target)) {
			inject(dp, port, m, rsw_echo_reply(d, m->data_len, smac));
			n->st.echo_reply_tx++;
			return;
		}
		break;
	}
	rsw_mbuf_free(m);
}

static void add_write(struct rsw_txn *t, uint8_t op, uint16_t port, const struct rsw_ip *ip,
		      const uint8_t *mac)
{
	struct rsw_table_write w;
	memset(&w, 0, sizeof(w));
	w.op = op;
	w.table = RSW_T_NEIGHBOR;
	w.u.neigh.port = port;
	w.u.neigh.ip = *ip;
	w.u.neigh.dynamic = 1;
	if (mac)
		memcpy(w.u.neigh.mac, mac, 6);
	snprintf(w.u.neigh.origin, sizeof(w.u.neigh.origin), "learnt");
	rsw_txn_add(t, &w);
}

/* Learnt entries not written yet, and those that aged out, as one transaction. */
static void commit(struct rsw_dp *dp, uint64_t now)
{
	struct rsw_dp_neigh *n = dp->neigh;
	const struct rsw_state *s = dp->sw->state;
	struct rsw_txn *t = rsw_txn_new();
	if (!t)
		return;
	for (unsigned i = 0; i < n->n_learnt;) {
		struct rsw_dp_learnt *e = &n->learnt[i];
		const struct rsw_neighbor *cur = neigh_of(s, &e->ip, 1);
		int expired = n->timeout_ns && now - e->seen_ns > n->timeout_ns;
		if (neigh_of(s, &e->ip, 0)) {
			/* configured since (a reload, `rocesw`), maybe on another port: the
			 * configured entry stands alone */
			if (cur)
				add_write(t, RSW_W_DELETE, cur->port, &cur->ip, NULL);
			n->learnt[i] = n->learnt[--n->n_learnt];
			continue;
		}
		if (expired || (!cur && !e->dirty)) {
			if (cur)
				add_write(t, RSW_W_DELETE, cur->port, &cur->ip, NULL);
			n->st.aged += expired;
			n->learnt[i] = n->learnt[--n->n_learnt];
			continue;
		}
		if (e->dirty) {
			if (cur && cur->port != e->port)
				add_write(t, RSW_W_DELETE, cur->port, &cur->ip, NULL);
			add_write(t, RSW_W_SET, e->port, &e->ip, e->mac);
			e->dirty = 0;
		}
		i++;
	}
	if (rsw_txn_len(t)) {
		char err[512];
		if (rsw_switch_commit(dp->sw, t, err, sizeof(err)) < 0) {
			n->st.commit_failed++;
			fprintf(stderr, "rocesw-dataplane: %s%slearnt neighbours: %s\n",
				dp->name ? dp->name : "", dp->name ? ": " : "", err);
		}
	}
	rsw_txn_free(t);
}

/* A next hop no neighbour resolves: solicit it, once a second at most. */
static void resolve(struct rsw_dp *dp, const struct rsw_ip *ip, uint64_t now)
{
	struct rsw_dp_neigh *n = dp->neigh;
	if (rsw_state_resolve(dp->sw->state, ip))
		return;
	unsigned k, oldest = 0;
	for (k = 0; k < n->n_tried && !rsw_ip_eq(&n->tried[k].ip, ip); k++)
		if (n->tried[k].sent_ns < n->tried[oldest].sent_ns)
			oldest = k;
	if (k < n->n_tried && now - n->tried[k].sent_ns < RSW_DP_RESOLVE_INTERVAL_NS)
		return;
	if (k == n->n_tried)
		k = n->n_tried < RTE_DIM(n->tried) ? n->n_tried++ : oldest;
	n->tried[k].ip = *ip;
	n->tried[k].sent_ns = now;
	solicit(dp, ip, NULL);
}

/* Learnt entries quiet for half the timeout are probed (unicast, as Linux's PROBE state) every
 * eighth of it, four times before they age: an answer refreshes them, silence lets them age
 * out. Four chances, not two: a host on a loaded machine may answer one probe late. */
static void probe(struct rsw_dp *dp, uint64_t now)
{
	struct rsw_dp_neigh *n = dp->neigh;
	for (unsigned i = 0; i < n->n_learnt; i++) {
		struct rsw_dp_learnt *e = &n->learnt[i];
		if (now - e->seen_ns < n->timeout_ns / 2 ||
		    (e->probed_ns && now - e->probed_ns < n->timeout_ns / 8))
			continue;
		e->probed_ns = now;
		if (solicit(dp, &e->ip, e->mac) == 0)
			n->st.probe_tx++;
	}
}

void rsw_dp_neigh_poll(struct rsw_dp *dp)
{
	struct rsw_dp_neigh *n = dp->neigh;
	if (!n)
		return;
	uint64_t now = rsw_clock_now(&dp->clock);
	struct rte_mbuf *m[64];
	unsigned got, dirty = 0;
	while ((got = rte_ring_sc_dequeue_burst(n->punt, (void **)m, RTE_DIM(m), NULL)) > 0) {
		RSW_TSAN_ACQUIRE(n->punt);
		for (unsigned i = 0; i < got; i++)
			handle(dp, m[i], now);
	}
	for (unsigned i = 0; i < n->n_learnt; i++)
		dirty |= n->learnt[i].dirty;
	if (dirty || (n->timeout_ns && now >= n->next_age_ns)) {
		commit(dp, now);
		if (n->timeout_ns) {
			probe(dp, now);
			/* a tenth of a second or a hundredth of the timeout, whichever is less */
			uint64_t step = n->timeout_ns / 100 < 100000000ull ? n->timeout_ns / 100
									   : 100000000ull;
			n->next_age_ns = now + step;
		}
	}
	struct rsw_dp_miss miss[32];
	while ((got = rte_ring_sc_dequeue_burst_elem(n->miss, miss, sizeof(miss[0]), RTE_DIM(miss),
						      NULL)) > 0)
		for (unsigned i = 0; i < got; i++)
			resolve(dp, &miss[i].ip, now);
}

json_t *rsw_dp_neigh_show(struct rsw_dp *dp, unsigned family)
{
	const struct rsw_state *s = dp->sw->state;
	struct rsw_dp_neigh *n = dp->neigh;
	uint64_t now = n ? rsw_clock_now(&dp->clock) : 0;
	json_t *out = json_object(), *arr = json_array();
	for (size_t i = 0; i < s->n_neigh; i++) {
		const struct rsw_neighbor *e = &s->neigh[i];
		if (e->ip.family != family)
			continue;
		char ip[64], mac[32];
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", e->mac[0], e->mac[1],
			 e->mac[2], e->mac[3], e->mac[4], e->mac[5]);
		json_t *o = json_object();
		json_object_set_new(o, "address", json_string(rsw_ip_str(&e->ip, ip, sizeof(ip))));
		json_object_set_new(o, "mac", json_string(mac));
		json_object_set_new(o, "port", json_string(s->ports[e->port].name));
		json_object_set_new(o, "type", json_string(e->dynamic ? "dynamic" : "static"));
		const struct rsw_dp_learnt *l = e->dynamic && n ? find_learnt(n, &e->ip) : NULL;
		if (l)
			json_object_set_new(o, "age_ms", J((now - l->seen_ns) / 1000000));
		json_array_append_new(arr, o);
	}
	json_object_set_new(out, "entries", arr);
	json_object_set_new(out, "timeout_s", J(n ? n->timeout_ns / 1000000000ull : 0));
	json_t *c = json_object();
	if (n) {
#define C(f) json_object_set_new(c, #f, J(n->st.f))
		C(arp_request_rx); C(arp_reply_rx); C(ns_rx); C(na_rx); C(echo_rx); C(other_rx);
		C(arp_reply_tx); C(na_tx); C(arp_request_tx); C(ns_tx); C(probe_tx);
		C(echo_reply_tx); C(learnt); C(moved); C(refreshed); C(aged); C(static_kept);
		C(outside_subnet); C(table_full); C(resolve_no_interface); C(inject_full);
		C(no_mbuf); C(commit_failed);
#undef C
	}
	json_object_set_new(out, "counters", c);
	return out;
}
