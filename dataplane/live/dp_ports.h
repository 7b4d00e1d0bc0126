#ifndef RSW_DP_PORTS_H
#define RSW_DP_PORTS_H

#include <stddef.h>

#include "dp_ctx.h"

/* Packet memory for n_mbufs frames of up to max_mtu bytes, in one segment each: a data room of
 * max_mtu + RSW_DP_POOL_SLACK (Ethernet header, VLAN tag, FCS room). NULL with a message. */
#define RSW_DP_POOL_SLACK 64u
struct rte_mempool *rsw_dp_pool_create(const char *name, unsigned n_mbufs, uint32_t max_mtu,
				       char *err, size_t errlen);
/* af_packet ring frames for a port of this MTU when its devargs leave them to the default
 * (2 KiB, which cuts larger frames): bytes per ring frame, or 0 when the default holds the
 * port's largest frame or the devargs size the ring themselves. */
uint32_t rsw_dp_af_packet_frame(const char *devargs, unsigned mtu);
/* A ring frame holds a tpacket2_hdr (32 bytes aligned: the PMD's receive offset) and then the
 * frame; the mbuf data room an af_packet port with ring frames of that size needs. */
#define RSW_AF_PACKET_HDR 32u
#define RSW_AF_PACKET_DATA(frame) ((frame) - RSW_AF_PACKET_HDR)
/* Frames n_eth DPDK ports of rxq RX queues each hold in their descriptors (what the traffic
 * managers and links hold comes on top: dp_zone.c). */
unsigned rsw_dp_pool_mbufs(unsigned n_eth, unsigned rxq);
/* Probe every RSW_DP_PORT_ETH port from its devargs and start it on dp->pool with n_rxq RX
 * queues (RSS where the device hashes) and one TX queue (set by the caller, as are the ports'
 * kinds, owners and n_rxq). Returns -1 with a message naming the port. */
int rsw_dp_ports_start(struct rsw_dp *dp, char *err, size_t errlen);
/* Stop and close the ports; frees what is left in the egress rings and returns how many packets
 * that was (they count as queued at the end). */
uint64_t rsw_dp_ports_stop(struct rsw_dp *dp);

#endif
