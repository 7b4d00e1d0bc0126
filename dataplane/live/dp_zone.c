#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dataplane/config/config.h"
#include "dataplane/tm/tsan.h"
#include "dp_neigh.h"
#include "dp_ports.h"
#include "dp_trace.h"
#include "dp_zone.h"

/* A backlogged port polled late may catch up by this much: a worker the kernel preempts (on a
 * small VM, for the capture tools sharing its core) does not lose its ports' sending time. */
#define SHAPER_SLACK_NS 1000000u
#define RSW_DP_FLOW_CACHE 4096 /* flows a worker keeps decided: 512 KiB */
#define HOST_IFNAME_MAX 15 /* IFNAMSIZ - 1 */

void rsw_dp_log_line(void *arg, const char *line)
{
	const struct rsw_dp *dp = arg;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tmv;
	char when[32];
	gmtime_r(&ts.tv_sec, &tmv);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tmv);
	fprintf(stderr, "%s.%03ldZ rocesw-dataplane: %s%s%s\n", when, ts.tv_nsec / 1000000,
		dp->name ? dp->name : "", dp->name ? ": " : "", line);
}

static struct rsw_dp *new_switch(struct rsw_dp_zone *z, const char *name, struct rsw_switch *sw,
				 int verify_icrc, char *err, size_t errlen)
{
	struct rsw_dp *dp = rte_zmalloc("rsw_dp", sizeof(*dp), RTE_CACHE_LINE_SIZE);
	if (!dp) {
		snprintf(err, errlen, "out of memory for switch %s", name ? name : "");
		return NULL;
	}
	z->dp[z->n_sw++] = dp;
	dp->name = name;
	dp->sw = sw;
	dp->qsbr = z->qsbr;
	dp->verify_icrc = verify_icrc;
	dp->n_ports = sw->state->n_ports;
	dp->n_workers = z->n_workers;
	for (unsigned w = 0; w < z->n_workers; w++) {
		dp->workers[w].index = w;
		dp->workers[w].lcore = z->lc[w].lcore;
		dp->workers[w].ictx.rnd = 0x9E3779B97F4A7C15ull * (w + 1) + z->n_sw;
		if (!z->cache[w] && rsw_flow_cache_wanted() &&
		    !(z->cache[w] = rsw_flow_cache_new(RSW_DP_FLOW_CACHE))) {
			snprintf(err, errlen, "out of memory for the flow cache");
			return NULL;
		}
		dp->workers[w].ictx.cache = z->cache[w];
		dp->workers[w].cnt = rte_zmalloc("rsw_cnt", sizeof(struct rsw_dp_counters),
						 RTE_CACHE_LINE_SIZE);
		if (!dp->workers[w].cnt) {
			snprintf(err, errlen, "out of memory for counters");
			return NULL;
		}
	}
	/* a port with devargs in its switch config is that device; without, nothing (a zone's
	 * links below say otherwise) */
	for (unsigned p = 0; p < dp->n_ports; p++) {
		const char *d = sw->state->ports[p].devargs;
		dp->ports[p].kind = d[0] || !z->model ? RSW_DP_PORT_ETH : RSW_DP_PORT_NONE;
		dp->ports[p].port_id = RTE_MAX_ETHPORTS; /* until probed */
		dp->ports[p].devargs = d;
	}
	return dp;
}

/* The host end of a link: the zone's devargs for the host, else the switch config's for the
 * port, else af_packet on the veth rsw-HOST that scripts/lab.py makes. */
static int host_port(struct rsw_dp_zone *z, unsigned h, struct rsw_dp_port *p, char *err,
		     size_t errlen)
{
	struct rsw_zone *m = z->model;
	const char *host = m->host[h].name;
	p->kind = RSW_DP_PORT_ETH;
	if (m->host_devargs[h]) {
		p->devargs = m->host_devargs[h];
		return 0;
	}
	if (p->devargs && p->devargs[0])
		return 0;
	if (strlen("rsw-") + strlen(host) > HOST_IFNAME_MAX) {
		snprintf(err, errlen, "host %s: no devargs, and rsw-%s is too long for an interface "
			 "name (%d characters at most): give the host devargs in HOST", host, host,
			 HOST_IFNAME_MAX);
		return -1;
	}
	char d[RSW_DEVARGS_MAX];
	snprintf(d, sizeof(d), "net_af_packet_%s,iface=rsw-%s", host, host);
	m->host_devargs[h] = strdup(d);
	if (!m->host_devargs[h]) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->devargs = m->host_devargs[h];
	return 0;
}

static int build_links(struct rsw_dp_zone *z, char *err, size_t errlen)
{
	struct rsw_zone *m = z->model;
	unsigned n = 0;
	for (unsigned i = 0; i < m->n_link; i++)
		n += m->link[i].a.sw != RSW_TOPO_HOST && m->link[i].b.sw != RSW_TOPO_HOST ? 2 : 0;
	z->link = rte_zmalloc("rsw_links", (n ? n : 1) * sizeof(*z->link), RTE_CACHE_LINE_SIZE);
	z->link_of = calloc(n ? n : 1, sizeof(*z->link_of));
	if (!z->link || !z->link_of) {
		snprintf(err, errlen, "out of memory for links");
		return -1;
	}
	for (unsigned i = 0; i < m->n_link; i++) {
		const struct rsw_topo_link *l = &m->link[i];
		if (l->a.sw == RSW_TOPO_HOST || l->b.sw == RSW_TOPO_HOST) {
			const struct rsw_topo_end *h = l->a.sw == RSW_TOPO_HOST ? &l->a : &l->b;
			const struct rsw_topo_end *s = h == &l->a ? &l->b : &l->a;
			if (host_port(z, h->idx, &z->dp[s->sw]->ports[s->idx], err, errlen) < 0)
				return -1;
			continue;
		}
		struct rsw_dp_port *pa = &z->dp[l->a.sw]->ports[l->a.idx];
		struct rsw_dp_port *pb = &z->dp[l->b.sw]->ports[l->b.idx];
		for (unsigned d = 0; d < 2; d++) {
			char name[RTE_RING_NAMESIZE];
			snprintf(name, sizeof(name), "rsw_link%u", z->n_links);
			struct rsw_dp_link *dl = &z->link[z->n_links];
			z->link_of[z->n_links] = i;
			if (rsw_dp_link_init(dl, name, l->speed_mbps, l->delay_ns, err, errlen) < 0)
				return -1;
			z->n_links++;
			(d ? pb : pa)->tx_link = dl;
			(d ? pa : pb)->rx_link = dl;
		}
		pa->kind = pb->kind = RSW_DP_PORT_LINK;
	}
	return 0;
}

/* Packets a switch's traffic manager may hold: RSW_TM_DESC_PER_PORT per device port, as a
 * single switch always had, and less per in-memory link or unconnected port, whose frames cost
 * no device descriptors but are packet memory all the same. */
#define LINK_PORT_TM_PKTS 1024u

static uint64_t tm_budget(const struct rsw_dp *dp)
{
	uint64_t b = 0;
	for (unsigned p = 0; p < dp->n_ports; p++)
		b += dp->ports[p].kind == RSW_DP_PORT_ETH ? RSW_TM_DESC_PER_PORT : LINK_PORT_TM_PKTS;
	return b;
}

/* Packet memory for every frame the zone can hold at once, so that no frame is ever refused
 * for want of an mbuf (a lossless class would lose it where PFC cannot help: a device's RX
 * that cannot allocate leaves frames to the kernel, a PFC frame that cannot be built is not
 * sent): what the traffic managers may hold (descriptors, headrooms, producers' overshoot),
 * each port's pending buffer, PFC frame and frames from the main lcore, each switch's punt
 * ring, each link direction's ring and held frames, each device's descriptors, and each
 * lcore's burst and mempool cache. */
static unsigned pool_mbufs(const struct rsw_dp_zone *z, unsigned n_eth, unsigned rxq)
{
	uint64_t n = rsw_dp_pool_mbufs(n_eth, rxq);
	for (unsigned s = 0; s < z->n_sw; s++) {
		const struct rsw_dp *dp = z->dp[s];
		n += rsw_tm_live_hold(&rsw_switch_fib(dp->sw)->tm, dp->n_ports, z->n_workers,
				      tm_budget(dp));
		n += (uint64_t)dp->n_ports * (RTE_DIM(dp->ports[0].pending) + 1 + RSW_DP_INJECT_RING);
		n += RSW_DP_PUNT_RING;
	}
	n += (uint64_t)z->n_links * RSW_DP_LINK_FRAMES;
	n += (uint64_t)(z->n_workers + 1) * (RSW_DP_BURST + 512);
	return n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
}

/* The worker a switch is pinned to (--pin), or -1. */
static int pinned(const struct rsw_dp_zone_opts *o, const struct rsw_dp *dp)
{
	for (unsigned i = 0; i < o->n_pin; i++)
		if (dp->name && !strcmp(o->pin[i].sw, dp->name))
			return (int)o->pin[i].worker;
	return -1;
}

/* Ports round-robin over the workers, switch after switch: one switch's ports spread like a
 * single switch's always did. A port's RX queues (--rxq) go to the workers after its own, so a
 * port's queues land on different workers and the owners (queue 0's worker) stay spread. A
 * pinned switch's ports and queues all go to its worker. */
static int spread(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
		  size_t errlen)
{
	unsigned total = 0, k = 0;
	for (unsigned i = 0; i < o->n_pin; i++) {
		if (!z->model || !rsw_dp_zone_switch(z, o->pin[i].sw)) {
			snprintf(err, errlen, "--pin %s=%u: %s", o->pin[i].sw, o->pin[i].worker,
				 z->model ? "no such switch in the zone" : "--pin needs --zone");
			return -1;
		}
		if (o->pin[i].worker >= z->n_workers) {
			snprintf(err, errlen, "--pin %s=%u: there are %u workers (0-%u): one per EAL "
				 "lcore after the first", o->pin[i].sw, o->pin[i].worker, z->n_workers,
				 z->n_workers - 1);
			return -1;
		}
	}
	for (unsigned s = 0; s < z->n_sw; s++)
		for (uint16_t p = 0; p < z->dp[s]->n_ports; p++)
			total += z->dp[s]->ports[p].n_rxq;
	for (unsigned w = 0; w < z->n_workers; w++) {
		z->lc[w].items = calloc(total ? total : 1, sizeof(*z->lc[w].items));
		if (!z->lc[w].items) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	for (unsigned s = 0; s < z->n_sw; s++)
		for (uint16_t p = 0; p < z->dp[s]->n_ports; p++) {
			int pw = pinned(o, z->dp[s]);
			unsigned base = pw >= 0 ? (unsigned)pw : k++ % z->n_workers;
			z->dp[s]->ports[p].owner = (uint16_t)base;
			for (uint16_t q = 0; q < z->dp[s]->ports[p].n_rxq; q++) {
				unsigned w = pw >= 0 ? base : (base + q) % z->n_workers;
				z->lc[w].items[z->lc[w].n_items++] =
					(struct rsw_dp_item){z->dp[s], p, q, q == 0};
			}
		}
	return 0;
}

/* A lcore per worker, each with its trace buffer, and the RCU they report quiescence to. */
static int open_workers(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
			size_t errlen)
{
	unsigned lc;
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (z->n_workers == RSW_DP_MAX_WORKERS)
			break;
		z->lc[z->n_workers] = (struct rsw_dp_lcore){.index = z->n_workers, .lcore = lc,
							     .stop = &z->stop,
							     .idle_max_ns = o->idle_max_ns};
		/* ordinary memory: hugepages (--socket-mem) are for packets and tables */
		z->lc[z->n_workers].trace = calloc(1, sizeof(struct rsw_dp_trace));
		if (!z->lc[z->n_workers++].trace) {
			snprintf(err, errlen, "out of memory for the workers' trace buffers");
			return -1;
		}
	}
	if (z->n_workers == 0) {
		snprintf(err, errlen, "no worker lcore: give EAL at least two, e.g. -l 0-1");
		return -1;
	}
	size_t qsz = rte_rcu_qsbr_get_memsize(z->n_workers);
	z->qsbr = rte_zmalloc("rsw_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	if (!z->qsbr || rte_rcu_qsbr_init(z->qsbr, z->n_workers) < 0) {
		snprintf(err, errlen, "cannot set up RCU");
		return -1;
	}
	for (unsigned w = 0; w < z->n_workers; w++)
		z->lc[w].qsbr = z->qsbr;
	return 0;
}

/* The zone's switches and links, each switch programmed from its config. */
static int open_zone(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
		     size_t errlen)
{
	struct rsw_zone_opts zo = {.ecn_seed = 1, .warnings = stderr, .qsbr = z->qsbr};
	z->model = calloc(1, sizeof(*z->model));
	if (!z->model) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rsw_zone_load(o->zone, &zo, z->model, err, errlen) < 0) {
		free(z->model);
		z->model = NULL;
		return -1;
	}
	z->name = z->model->name;
	for (unsigned s = 0; s < z->model->n_sw; s++) {
		z->config[s] = z->model->sw_config[s];
		if (!new_switch(z, z->model->sw[s].name, z->model->sw[s].sw, o->verify_icrc, err,
				errlen))
			return -1;
	}
	return build_links(z, err, errlen);
}

/* One switch from one config. */
static int open_one(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
		    size_t errlen)
{
	struct rsw_switch *sw = rsw_switch_new(z->qsbr, err, errlen);
	if (!sw)
		return -1;
	if (rsw_config_apply(sw, o->config, err, errlen) < 0) {
		rsw_switch_free(sw);
		return -1;
	}
	z->config[0] = o->config;
	if (!new_switch(z, NULL, sw, o->verify_icrc, err, errlen)) {
		if (z->n_sw == 0)
			rsw_switch_free(sw);
		return -1;
	}
	return 0;
}

/* Each port's RX queue count, and the packet pool sized for them and the largest frame. */
static int open_pool(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
		     size_t errlen)
{
	unsigned n_eth = 0, rxq = o->rxq ? o->rxq : 1;
	uint32_t max_mtu = 1500;
	for (unsigned s = 0; s < z->n_sw; s++)
		for (unsigned p = 0; p < z->dp[s]->n_ports; p++) {
			const struct rsw_port_cfg *pc = &z->dp[s]->sw->state->ports[p];
			/* --rxq applies to devices; a link or nothing has one queue */
			int eth = z->dp[s]->ports[p].kind == RSW_DP_PORT_ETH;
			z->dp[s]->ports[p].n_rxq = (uint16_t)(eth ? rxq : 1);
			if (eth)
				n_eth++;
			if (pc->mtu > max_mtu)
				max_mtu = pc->mtu;
			/* an af_packet port hands over whole ring frames' data: mbufs must hold it */
			const char *da = z->dp[s]->ports[p].devargs;
			uint32_t fr = da ? rsw_dp_af_packet_frame(da, pc->mtu) : 0;
			if (fr && RSW_AF_PACKET_DATA(fr) > max_mtu + RSW_DP_POOL_SLACK)
				max_mtu = RSW_AF_PACKET_DATA(fr) - RSW_DP_POOL_SLACK;
		}
	z->pool = rsw_dp_pool_create("rsw_mbufs", o->mbufs ? o->mbufs : pool_mbufs(z, n_eth, rxq),
				     max_mtu, err, errlen);
	return z->pool ? 0 : -1;
}

/* Every switch's ports started, its traffic manager and its neighbour table. */
static int start_switches(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
			  size_t errlen)
{
	/* one time base for every switch: a link's sender stamps when a frame is due in its
	 * clock, and the receiver compares with its own */
	struct rsw_clock clock;
	rsw_clock_init_tsc(&clock);
	for (unsigned s = 0; s < z->n_sw; s++) {
		struct rsw_dp *dp = z->dp[s];
		char tm_name[16];
		dp->pool = z->pool;
		if (rsw_dp_ports_start(dp, err, errlen) < 0)
			return -1;
		dp->clock = clock;
		snprintf(tm_name, sizeof(tm_name), z->model ? "rsw%u" : "rsw", s);
		dp->tm = rsw_tm_new(tm_name, dp->n_ports, z->n_workers, &rsw_switch_fib(dp->sw)->tm,
				    SHAPER_SLACK_NS, err, errlen);
		if (!dp->tm)
			return -1;
		rsw_tm_live_limit(dp->tm, &rsw_switch_fib(dp->sw)->tm, tm_budget(dp));
		dp->tm->log = rsw_dp_log_line;
		dp->tm->log_arg = dp;
		dp->neigh = rsw_dp_neigh_new(dp, s, o->neigh_timeout_s, err, errlen);
		if (!dp->neigh)
			return -1;
	}
	return 0;
}

/* The start-up order is the point; a failure leaves z to rsw_dp_zone_close. */
int rsw_dp_zone_open(struct rsw_dp_zone *z, const struct rsw_dp_zone_opts *o, char *err,
		     size_t errlen)
{
	memset(z, 0, sizeof(*z));
	if (open_workers(z, o, err, errlen) < 0 ||
	    (o->zone ? open_zone(z, o, err, errlen) : open_one(z, o, err, errlen)) < 0 ||
	    open_pool(z, o, err, errlen) < 0 || start_switches(z, o, err, errlen) < 0)
		return -1;
	/* after the ports started: how many RX queues each got */
	return spread(z, o, err, errlen);
}

void rsw_dp_zone_launch(struct rsw_dp_zone *z)
{
	for (unsigned w = 0; w < z->n_workers; w++)
		rte_eal_remote_launch(rsw_dp_worker_main, &z->lc[w], z->lc[w].lcore);
}

void rsw_dp_zone_wait(struct rsw_dp_zone *z)
{
	rte_eal_mp_wait_lcore();
	/* each worker released its lcore at its end; EAL's own atomics order that before this */
	for (unsigned w = 0; w < z->n_workers; w++)
		RSW_TSAN_ACQUIRE(&z->lc[w]);
}

struct rsw_dp *rsw_dp_zone_switch(const struct rsw_dp_zone *z, const char *name)
{
	for (unsigned s = 0; s < z->n_sw; s++)
		if (z->dp[s]->name && !strcmp(z->dp[s]->name, name))
			return z->dp[s];
	return NULL;
}

uint64_t rsw_dp_zone_in_flight(const struct rsw_dp_zone *z)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < z->n_links; i++)
		n += rsw_dp_link_in_flight(&z->link[i]);
	return n;
}

uint64_t rsw_dp_zone_close(struct rsw_dp_zone *z)
{
	uint64_t left = 0;
	for (unsigned s = 0; s < z->n_sw; s++)
		rsw_dp_ports_stop(z->dp[s]);
	for (unsigned i = 0; i < z->n_links; i++)
		left += rsw_dp_link_free(&z->link[i]);
	for (unsigned s = 0; s < z->n_sw; s++) {
		struct rsw_dp *dp = z->dp[s];
		rsw_tm_free(dp->tm);
		rsw_dp_neigh_free(dp->neigh);
		for (unsigned w = 0; w < z->n_workers; w++)
			rte_free(dp->workers[w].cnt);
		if (!z->model)
			rsw_switch_free(dp->sw);
		rte_free(dp);
	}
	for (unsigned w = 0; w < z->n_workers; w++)
		free(z->lc[w].trace);
	for (unsigned w = 0; w < RSW_DP_MAX_WORKERS; w++) {
		rsw_flow_cache_free(z->cache[w]);
		z->cache[w] = NULL;
	}
	if (z->model) {
		rsw_zone_free(z->model);
		free(z->model);
	}
	for (unsigned w = 0; w < z->n_workers; w++)
		free(z->lc[w].items);
	for (unsigned s = 0; s < RSW_ZONE_MAX_SWITCHES; s++)
		free(z->config_owned[s]);
	rte_free(z->link);
	free(z->link_of);
	rte_mempool_free(z->pool);
	rte_free(z->qsbr);
	memset(z, 0, sizeof(*z));
	return left;
}
