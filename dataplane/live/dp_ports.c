#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dp_ports.h"

#define RX_DESC 1024
#define TX_DESC 1024

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
	uint32_t room = RTE_PKTMBUF_HEADROOM + (max_mtu > 1500 ? max_mtu : 1500) + 64;
	if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
		room = RTE_MBUF_DEFAULT_BUF_SIZE;
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n_mbufs, 256, 0, (uint16_t)room,
							 (int)rte_socket_id());
	if (!mp)
		snprintf(err, errlen, "cannot create the mbuf pool (%u × %u bytes): %s", n_mbufs, room,
			 rte_strerror(rte_errno));
	return mp;
}

unsigned rsw_dp_pool_mbufs(unsigned n_eth, unsigned n_other)
{
	/* descriptors, pending buffers, and packets held in the VOQs; an in-memory link has no
	 * descriptors and its frames come from the sender's share */
	return 4096 + n_eth * (RX_DESC + TX_DESC + 4096) + n_other * 1024;
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
		if (probe(p->devargs, &id, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "%s: port %s%s%s: %s", pc->origin, sw, bar, pc->name, e);
			return -1;
		}
		p->port_id = id;
		struct rte_eth_conf conf;
		memset(&conf, 0, sizeof(conf));
		int rc = rte_eth_dev_configure(p->port_id, 1, 1, &conf);
		if (rc == 0)
			rc = rte_eth_rx_queue_setup(p->port_id, 0, RX_DESC,
						    (unsigned)rte_eth_dev_socket_id(p->port_id), NULL,
						    dp->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, 0, TX_DESC,
						    (unsigned)rte_eth_dev_socket_id(p->port_id), NULL);
		if (rc == 0)
			rc = rte_eth_dev_start(p->port_id);
		if (rc < 0) {
			snprintf(err, errlen, "%s: port %s%s%s (%s): cannot start: %s", pc->origin, sw,
				 bar, pc->name, p->devargs, rte_strerror(-rc));
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
			rte_pktmbuf_free(p->pending[k]);
		queued += p->n_pending;
		p->n_pending = 0;
		if (p->kind == RSW_DP_PORT_ETH && p->port_id < RTE_MAX_ETHPORTS) {
			rte_eth_dev_stop(p->port_id);
			rte_eth_dev_close(p->port_id);
		}
	}
	return queued;
}
