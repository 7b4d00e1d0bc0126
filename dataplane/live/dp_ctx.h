/* Shared state of the live dataplane: ports, the switch tables, workers and their counters. */
#ifndef RSW_DP_CTX_H
#define RSW_DP_CTX_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/tables/switch.h"
#include "dataplane/tm/clock.h"
#include "dataplane/tm/tm.h"

#define RSW_DP_MAX_WORKERS 16
#define RSW_DP_BURST 32
#define RSW_DP_COUNTED_GROUPS 64
/* an injected PFC storm's XOFF frames come at least this often, as a storming peer's do: more
 * often than any watchdog's detection time (SONiC's smallest is 100 ms) */
#define RSW_DP_STORM_GAP_NS 500000ull
/* RX queues a DPDK port may be given (--rxq): each one is polled by one worker */
#define RSW_DP_MAX_RXQ RSW_DP_MAX_WORKERS

/* Counters of one worker; only that worker writes them, the stats thread reads (relaxed). */
struct rsw_dp_counters {
	uint64_t rx_pkts[RSW_MAX_PORTS], rx_bytes[RSW_MAX_PORTS];
	uint64_t tx_pkts[RSW_MAX_PORTS], tx_bytes[RSW_MAX_PORTS];
	uint64_t drops[RSW_DROP_COUNT];
	uint64_t lossless_drops[RSW_DROP_COUNT]; /* of them, lossless PGs' packets dropped in the TM */
	uint64_t pfc_rx[RSW_MAX_PORTS];
	uint64_t pause_rx[RSW_MAX_PORTS];
	uint64_t pfc_tx_frames[RSW_MAX_PORTS]; /* PFC frames this switch sent */
	uint64_t pfc_tx_failed[RSW_MAX_PORTS]; /* PFC frames the device did not take */
	uint64_t icrc_ok[RSW_MAX_PORTS], icrc_bad[RSW_MAX_PORTS]; /* with --verify-icrc */
	uint64_t pfc_injected[RSW_MAX_PORTS];  /* PFC frames a storm injection stood in for */
	uint64_t punted[RSW_MAX_PORTS];   /* ARP, ND, frames to the switch: to the main lcore */
	uint64_t ctl_tx[RSW_MAX_PORTS];   /* frames the main lcore sent (ARP/ND, ping replies) */
	uint64_t ctl_tx_failed[RSW_MAX_PORTS];
	/* PFC/PAUSE frames received on an RX queue of a port another worker owns that its hand-off
	 * ring had no room for (their pause was not applied) */
	uint64_t pause_lost[RSW_MAX_PORTS];
	uint64_t ecmp[RSW_DP_COUNTED_GROUPS][RSW_ECMP_MAX_MEMBERS];
} __rte_cache_aligned;

/* What a switch port is cabled to. */
enum rsw_dp_port_kind {
	RSW_DP_PORT_ETH,  /* a DPDK port (af_packet, af_xdp, tap, memif, a NIC...) */
	RSW_DP_PORT_LINK, /* an in-memory link to another switch of the zone (dp_link.h) */
	RSW_DP_PORT_NONE, /* nothing: what it sends leaves the model (counted as transmitted) */
};

struct rsw_dp_link;
struct rsw_dp_neigh;

/* A PFC or PAUSE frame a worker received on an RX queue of a port it does not own, handed to the
 * owner (who alone keeps the port's pause state) over the port's pause_in ring. */
struct rsw_dp_pause_msg {
	uint64_t since_ns, now_ns;
	uint16_t time[8];
	uint8_t l2_kind, class_enable;
	uint8_t pad[6];
};

struct rsw_dp_port {
	uint16_t port_id;         /* DPDK port (RSW_DP_PORT_ETH) */
	uint16_t owner;           /* worker index that polls RX queue 0 and alone drains TX */
	uint16_t n_rxq;           /* RX queues (--rxq), each polled by one worker (dp_zone.c) */
	/* n_rxq > 1: PFC/PAUSE frames other workers' queues received, for the owner (MP/SC) */
	struct rte_ring *pause_in;
	uint8_t kind;             /* enum rsw_dp_port_kind */
	const char *devargs;      /* RSW_DP_PORT_ETH: what was probed */
	struct rsw_dp_link *tx_link, *rx_link; /* RSW_DP_PORT_LINK: the two directions */
	/* Largest frame the device can carry (af_xdp: one page per frame), 0 if the mbuf's. */
	uint32_t max_frame;
	/* Packets the traffic manager released to this port that the device has not taken yet. */
	uint16_t n_pending;
	struct rte_mbuf *pending[2 * RSW_DP_BURST];
	/* Fault injection (`rocesw set pfc-storm`): priorities for which the owner acts as if the
	 * peer kept sending PFC XOFF; set by the control socket, read by the owner. */
	uint8_t storm;
	uint64_t storm_next_ns;   /* owner only */
	/* the previous RX poll of each queue (its worker only): what a poll finds arrived since
	 * then, which after a stall of the worker is long before the poll (the PFC watchdog's pause
	 * continuity) */
	uint64_t rx_polled_ns[RSW_DP_MAX_RXQ];
};

struct rsw_dp_worker {
	unsigned index;
	unsigned lcore;
	struct rsw_ingress_ctx ictx; /* RANDOM hash state; the burst's arrival time */
	struct rsw_dp_counters *cnt;
};

/* One switch: its tables, traffic manager, ports and counters. A zone run live is several of
 * these sharing the workers, the RCU state and the packet memory (dp_zone.h). */
struct rsw_dp {
	const char *name;       /* the switch's name in a zone; NULL for a single --config */
	struct rsw_switch *sw;
	struct rte_rcu_qsbr *qsbr;
	struct rte_mempool *pool;
	struct rte_mempool *xdp_pool; /* af_xdp ports' RX pool (their UMEM), NULL without them */
	uint32_t xdp_max_frame;
	struct rsw_tm *tm;
	struct rsw_clock clock;
	uint16_t n_ports;
	struct rsw_dp_port ports[RSW_MAX_PORTS];
	unsigned n_workers;
	struct rsw_dp_worker workers[RSW_DP_MAX_WORKERS];
	int verify_icrc;        /* count ICRC check results (off the fast path by default) */
	struct rsw_dp_neigh *neigh; /* ARP/ND control plane (dp_neigh.h) */
};

#endif
