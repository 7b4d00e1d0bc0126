/* Defaults and NCCL's bandwidth arithmetic of a closed-loop collective. */
#include <string.h>

#include "collective.h"

void rsw_coll_defaults(struct rsw_coll *c)
{
	memset(c, 0, sizeof(*c));
	c->pattern = RSW_COLL_RING;
	c->message = 1u << 20;
	c->mtu = 4096;
	c->qps = 1;
	c->split = 1;
	/* the lossless RoCE class of the shipped configs: SONiC's AZURE DSCP_TO_TC_MAP puts 3 on
	 * TC 3, in pfc_enable "3,4" (26, RoCEv2 NICs' own default, is lossy TC 1 there) */
	c->dscp = 3;
	c->cts_dscp = 48;   /* the CTS classifier's strict queue (REFERENCE §6) */
	c->cnp_dscp = 48;   /* CNPs as NVIDIA NICs send them (cnp_dscp 48) */
	const uint8_t ip[4] = {10, 1, 0, 1}, mac[6] = {0x02, 0, 0, 0, 0x01, 0};
	memcpy(c->ip_base, ip, 4);
	c->ip_stride = 2;
	memcpy(c->router_mac, mac, 6);
	c->ack_every = 16;
	/* the QP's transport timer: 4.096 us x 2^timeout (the IB timeout attribute, as ConnectX
	 * and Linux's qib_rc.c compute it; NCCL sets it with NCCL_IB_TIMEOUT): 14 gives 67.1 ms */
	c->rto_ns = 4096ull << 14;
	c->retry_cnt = 7;   /* NCCL_IB_RETRY_CNT's default, the largest the 3-bit field allows */
	c->nak = 1;
	rsw_dcqcn_defaults(&c->dcqcn_p);
}

double rsw_coll_busbw_factor(unsigned pattern, unsigned n)
{
	switch (pattern) {
	case RSW_COLL_RING:
	case RSW_COLL_TREE:
		return 2.0 * (n - 1) / n;
	case RSW_COLL_ALLGATHER:
	case RSW_COLL_REDUCE_SCATTER:
	case RSW_COLL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

const char *rsw_coll_pattern_name(unsigned pattern)
{
	static const char *const names[RSW_COLL_PATTERNS] = {
		"ring", "tree", "allgather", "reducescatter", "alltoall", "incast"};
	return pattern < RSW_COLL_PATTERNS ? names[pattern] : "?";
}
