#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "dataplane/tm/tsan.h"
#include "dp_ports.h"

#define RX_DESC 1024
#define TX_DESC 1024
/* The af_xdp PMD's fill ring (2 × XSK_RING_CONS__DEFAULT_NUM_DESCS), reserved at queue setup. */
#define XDP_FILL_DESC 4096
/* Kernel headroom in front of every AF_XDP frame (XDP_PACKET_HEADROOM, linux/bpf.h). */
#define XDP_HEADROOM 256

/* DPDK 22.11's af_xdp PMD lays its UMEM over the RX mempool: one UMEM chunk per mbuf object
 * (object header + struct rte_mbuf + data room, after the mempool's channel spreading). The
 * kernel refuses chunks larger than a page (xdp_umem_reg: chunk_size > PAGE_SIZE is EINVAL,
 * "Failed to create umem"), so the data room sized for MTU 9100 cannot work there; and there is
 * no multi-buffer AF_XDP in that PMD. af_xdp ports get their own pool whose objects fit a page:
 * the largest data room DPDK's own size calculation keeps within one page. */
static uint16_t xdp_data_room(void)
{
	uint32_t page = (uint32_t)getpagesize();
	for (uint32_t room = page; room > RTE_PKTMBUF_HEADROOM + XDP_HEADROOM; room -= 64)
		if (rte_mempool_calc_obj_size((uint32_t)sizeof(struct rte_mbuf) + room, 0, NULL) <=
		    page)
			return (uint16_t)room;
	return 0;
}

static int is_af_xdp(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	return rte_eth_dev_info_get(port_id, &info) == 0 && info.driver_name &&
	       !strcmp(info.driver_name, "net_af_xdp");
}

/* The MTU of the kernel interface an af_xdp port opens (iface=...), 0 if unknown. */
static unsigned iface_mtu(const char *devargs)
{
	const char *at = strstr(devargs, "iface=");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (!at)
		return 0;
	at += 6;
	size_t n = strcspn(at, ",");
	if (n >= sizeof(ifr.ifr_name))
		return 0;
	memcpy(ifr.ifr_name, at, n);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return 0;
	int rc = ioctl(fd, SIOCGIFMTU, &ifr);
	close(fd);
	return rc == 0 ? (unsigned)ifr.ifr_mtu : 0;
}

/* The pool a switch's af_xdp ports share (so a frame forwarded between two of them is not
 * copied); one per switch of a zone. */
static struct rte_mempool *xdp_pool(struct rsw_dp *dp, unsigned n_xdp, char *err, size_t errlen)
{
	static unsigned seq;
	if (dp->xdp_pool)
		return dp->xdp_pool;
	uint16_t room = xdp_data_room();
	unsigned n = 4096 + n_xdp * (XDP_FILL_DESC + RX_DESC + TX_DESC + 4096);
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "rsw_xdp%u", seq++);
	dp->xdp_pool = rte_pktmbuf_pool_create(name, n, 256, 0, room, (int)rte_socket_id());
	if (!dp->xdp_pool)
		snprintf(err, errlen, "cannot create the af_xdp mbuf pool (%u × %u bytes): %s", n,
			 room, rte_strerror(rte_errno));
	dp->xdp_max_frame = (uint32_t)(room - RTE_PKTMBUF_HEADROOM - XDP_HEADROOM);
	return dp->xdp_pool;
}

/* Pool for port p: af_xdp ports get the page-sized one and say what they carry. */
static struct rte_mempool *port_pool(struct rsw_dp *dp, struct rsw_dp_port *p,
				     const struct rsw_port_cfg *pc, char *err, size_t errlen)
{
	p->max_frame = 0;
	if (!is_af_xdp(p->port_id))
		return dp->pool;
	const struct rsw_state *s = dp->sw->state;
	unsigned n_xdp = 0;
	for (unsigned k = 0; k < s->n_ports; k++)
		n_xdp += dp->ports[k].devargs && !strncmp(dp->ports[k].devargs, "net_af_xdp", 10);
	struct rte_mempool *pool = xdp_pool(dp, n_xdp ? n_xdp : 1, err, errlen);
	if (!pool)
		return NULL;
	p->max_frame = dp->xdp_max_frame;
	if (pc->mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN > p->max_frame)
		fprintf(stderr,
			"rocesw-dataplane: port %s (%s): af_xdp carries frames of at most %u bytes "
			"(one page per frame); larger frames to it are dropped (tx_too_big), larger "
			"frames from it are dropped by the kernel. Set mtu: %u or less, or use "
			"net_af_packet for jumbo frames\n", pc->name, p->devargs, p->max_frame,
			p->max_frame - RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN);
	return pool;
}

/* The ring's blocks must be whole pages and hold whole frames, which ring frames in 1 KiB steps
 * allow with at most four frames per block. */
#define AF_PACKET_DEFAULT_FRAME 2048u
#define AF_PACKET_STEP 1024u
#define PAGE 4096u

uint32_t rsw_dp_af_packet_frame(const char *devargs, unsigned mtu)
{
	if (strncmp(devargs, "net_af_packet", 13) || strstr(devargs, "framesz=") ||
	    strstr(devargs, "blocksz="))
		return 0;
	uint32_t need = mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RSW_AF_PACKET_HDR;
	return need <= AF_PACKET_DEFAULT_FRAME ? 0 : RTE_ALIGN_CEIL(need, AF_PACKET_STEP);
}

/* devargs with the ring sized for the port's MTU, when they leave it to the default; a ring
 * the devargs size too small for the MTU is said at start, as the kernel cuts what it cannot
 * hold before any counter sees it. */
static const char *sized_devargs(const char *devargs, const char *port, unsigned mtu,
				 unsigned rxq, char *buf, size_t len)
{
	uint32_t frame = rsw_dp_af_packet_frame(devargs, mtu);
	const char *given = strstr(devargs, "framesz=");
	if (!strncmp(devargs, "net_af_packet", 13) && given) {
		unsigned long fs = strtoul(given + 8, NULL, 0);
		if (fs > RSW_AF_PACKET_HDR &&
		    RSW_AF_PACKET_DATA(fs) < mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)
			fprintf(stderr,
				"rocesw-dataplane: port %s (%s): af_packet ring frames of %lu bytes "
				"carry frames of at most %lu bytes; the kernel cuts larger ones. Leave "
				"framesz/blocksz out to have the ring sized for mtu %u\n",
				port, devargs, fs, RSW_AF_PACKET_DATA(fs), mtu);
	}
	/* --rxq on af_packet: that many sockets in one PACKET_FANOUT_HASH group */
	int qpairs = rxq > 1 && !strncmp(devargs, "net_af_packet", 13) && !strstr(devargs, "qpairs=");
	if (!frame && !qpairs)
		return devargs;
	int n = snprintf(buf, len, "%s", devargs);
	if (qpairs)
		n += snprintf(buf + n, len - (size_t)n, ",qpairs=%u", rxq);
	if (frame) {
		uint32_t block = frame;
		while (block % PAGE)
			block += frame;
		snprintf(buf + n, len - (size_t)n, ",framesz=%u,blocksz=%u", frame, block);
	}
	return buf;
}

static int probe(const char *devargs, uint16_t *port_id, char *err, size_t errlen)
{
	char name[RSW_DEVARGS_MAX];
	const char *comma = strchr(devargs, ',');
	size_t n = comma ? (size_t)(comma - devargs) : strlen(devargs);
	memcpy(name, devargs, n);
	name[n] = 0;
	/* a PCI address or a port given by -a/--vdev on the EAL command line already exists */
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	/* a kernel-interface PMD on a missing interface fails with a misleading errno: say why */
	const char *iface = strstr(devargs, "iface=");
	if (iface) {
		char ifname[IF_NAMESIZE + 1];
		size_t len = strcspn(iface + 6, ",");
		snprintf(ifname, sizeof(ifname), "%.*s", (int)(len < IF_NAMESIZE ? len : IF_NAMESIZE),
			 iface + 6);
		if (len >= IF_NAMESIZE || !if_nametoindex(ifname)) {
			snprintf(err, errlen,
				 "cannot probe '%s': no network interface '%.*s' in this namespace (create "
				 "it first: scripts/lab.py up CONFIG makes a lab's veths)",
				 devargs, (int)len, iface + 6);
			return -1;
		}
	}
	if (rte_dev_probe(devargs) < 0) {
		snprintf(err, errlen, "cannot probe '%s': %s", devargs, rte_strerror(rte_errno));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, port_id) != 0) {
		snprintf(err, errlen, "'%s' probed but no ethdev named '%s' appeared", devargs, name);
		return -1;
	}
	return 0;
}

struct rte_mempool *rsw_dp_pool_create(const char *name, unsigned n_mbufs, uint32_t max_mtu,
				       char *err, size_t errlen)
{
	/* one segment per frame: the parser sees whole packets */
	uint32_t room = RTE_PKTMBUF_HEADROOM + (max_mtu > 1500 ? max_mtu : 1500) + RSW_DP_POOL_SLACK;
	if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
		room = RTE_MBUF_DEFAULT_BUF_SIZE;
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n_mbufs, 256, 0, (uint16_t)room,
							 (int)rte_socket_id());
	if (!mp)
		snprintf(err, errlen, "cannot create the mbuf pool (%u × %u bytes): %s", n_mbufs, room,
			 rte_strerror(rte_errno));
	return mp;
}

unsigned rsw_dp_pool_mbufs(unsigned n_eth, unsigned rxq)
{
	/* the devices' RX (each RX queue its own) and TX descriptors, and a spare for the main
	 * lcore's frames */
	return 4096 + n_eth * (rxq * RX_DESC + TX_DESC);
}

/* RX queues for port p: the n_rxq asked for (--rxq) or as many as the device offers if fewer
 * (said on stderr), with RSS on IP, UDP and TCP where the device hashes itself (a NIC,
 * net_null...), so a flow always lands on the same queue. af_packet spreads its qpairs sockets
 * with the kernel's PACKET_FANOUT_HASH (the flow hash: one flow, one queue); pcap has one queue
 * per rx_pcap file. */
static int rx_queues_conf(struct rsw_dp_port *p, const char *port, struct rte_eth_conf *conf,
			  char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the device's capabilities: %s", rte_strerror(-rc));
		return -1;
	}
	if (p->n_rxq > info.max_rx_queues) {
		fprintf(stderr, "rocesw-dataplane: port %s (%s): %u RX queues, not %u: the device "
			"has no more (af_packet: qpairs=N in its devargs, pcap: one rx_pcap per "
			"queue)\n", port, p->devargs, info.max_rx_queues ? info.max_rx_queues : 1,
			p->n_rxq);
		p->n_rxq = info.max_rx_queues ? info.max_rx_queues : 1;
	}
	uint64_t hf = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP;
	if (p->n_rxq > 1 && (info.flow_type_rss_offloads & hf)) {
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_key = NULL; /* the driver's key */
		conf->rx_adv_conf.rss_conf.rss_hf = hf & info.flow_type_rss_offloads;
	}
	return 0;
}

/* The ring on which other workers hand the owner of a port with several RX queues the PFC and
 * PAUSE frames their queues received. */
static int pause_ring(struct rsw_dp_port *p, char *err, size_t errlen)
{
	static unsigned seq;
	char name[RTE_RING_NAMESIZE];
	if (p->n_rxq < 2)
		return 0;
	snprintf(name, sizeof(name), "rsw_pause%u", seq++);
	p->pause_in = rte_ring_create_elem(name, sizeof(struct rsw_dp_pause_msg), 1024,
					   SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (!p->pause_in)
		snprintf(err, errlen, "cannot create the ring %s: %s", name, rte_strerror(rte_errno));
	return p->pause_in ? 0 : -1;
}

int rsw_dp_ports_start(struct rsw_dp *dp, char *err, size_t errlen)
{
	const struct rsw_state *s = dp->sw->state;
	const char *sw = dp->name ? dp->name : "", *bar = dp->name ? "|" : "";

	dp->n_ports = s->n_ports;
	for (unsigned i = 0; i < s->n_ports; i++) {
		const struct rsw_port_cfg *pc = &s->ports[i];
		struct rsw_dp_port *p = &dp->ports[i];
		char e[512];
		if (p->kind != RSW_DP_PORT_ETH)
			continue; /* no device: port_id stays RTE_MAX_ETHPORTS, its counters read 0 */
		if (!p->devargs || !p->devargs[0]) {
			snprintf(err, errlen, "%s: port %s%s%s has no devargs", pc->origin, sw, bar,
				 pc->name);
			return -1;
		}
		uint16_t id;
		char sized[RSW_DEVARGS_MAX + 64];
		if (probe(sized_devargs(p->devargs, pc->name, pc->mtu, p->n_rxq, sized, sizeof(sized)),
			  &id, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "%s: port %s%s%s: %s", pc->origin, sw, bar, pc->name, e);
			return -1;
		}
		p->port_id = id;
		struct rte_mempool *pool = port_pool(dp, p, pc, e, sizeof(e));
		if (!pool) {
			snprintf(err, errlen, "%s: port %s%s%s: %s", pc->origin, sw, bar, pc->name, e);
			return -1;
		}
		struct rte_eth_conf conf;
		memset(&conf, 0, sizeof(conf));
		if (p->n_rxq == 0)
			p->n_rxq = 1;
		if (rx_queues_conf(p, pc->name, &conf, e, sizeof(e)) < 0 ||
		    pause_ring(p, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "%s: port %s%s%s (%s): %s", pc->origin, sw, bar, pc->name,
				 p->devargs, e);
			return -1;
		}
		int rc = rte_eth_dev_configure(p->port_id, p->n_rxq, 1, &conf);
		for (uint16_t q = 0; rc == 0 && q < p->n_rxq; q++)
			rc = rte_eth_rx_queue_setup(p->port_id, q, RX_DESC,
						    (unsigned)rte_eth_dev_socket_id(p->port_id), NULL,
						    pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, 0, TX_DESC,
						    (unsigned)rte_eth_dev_socket_id(p->port_id), NULL);
		if (rc == 0)
			rc = rte_eth_dev_start(p->port_id);
		if (rc < 0) {
			unsigned mtu = p->max_frame ? iface_mtu(p->devargs) : 0;
			char why[160] = "";
			if (mtu && mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN > p->max_frame)
				/* the usual cause: XDP without multi-buffer refuses (veth: "Peer MTU
				 * is too large to set XDP") an interface whose frames exceed a page */
				snprintf(why, sizeof(why),
					 "; its interface has MTU %u and af_xdp needs frames in one page: "
					 "set the interface (and a veth's peer) to mtu %u or less, or use "
					 "net_af_packet", mtu,
					 p->max_frame - RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN);
			snprintf(err, errlen, "%s: port %s%s%s (%s): cannot start: %s%s", pc->origin, sw,
				 bar, pc->name, p->devargs, rte_strerror(-rc), why);
			return -1;
		}
		/* routed ports see frames for the router MAC; af_packet/tap need promiscuous mode */
		rte_eth_promiscuous_enable(p->port_id);
	}
	return 0;
}

uint64_t rsw_dp_ports_stop(struct rsw_dp *dp)
{
	uint64_t queued = 0;

	for (unsigned i = 0; i < dp->n_ports; i++) {
		struct rsw_dp_port *p = &dp->ports[i];
		for (unsigned k = 0; k < p->n_pending; k++)
			rsw_mbuf_free(p->pending[k]);
		queued += p->n_pending;
		p->n_pending = 0;
		if (p->kind == RSW_DP_PORT_ETH && p->port_id < RTE_MAX_ETHPORTS) {
			rte_eth_dev_stop(p->port_id);
			rte_eth_dev_close(p->port_id);
		}
		rte_ring_free(p->pause_in); /* what is left on it was consumed when received */
		p->pause_in = NULL;
	}
	/* after the ports: their UMEMs overlay it */
	rte_mempool_free(dp->xdp_pool);
	dp->xdp_pool = NULL;
	return queued;
}
