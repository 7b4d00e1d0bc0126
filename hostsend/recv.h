/* `rocesw send IFACE --receive`: count the RoCE frames arriving on IFACE per QP, with the
 * reordering an RC receiver would see (recv.c). */
#ifndef RSW_HOSTSEND_RECV_H
#define RSW_HOSTSEND_RECV_H

#include <stdint.h>

struct rsw_recv_opts {
	uint64_t count;      /* stop after this many RC data packets; 0: at SIGINT/SIGTERM */
	uint32_t start_psn;  /* every QP's first PSN (what its connection set-up agreed) */
	int json;
};

/* Receives until the count or a signal, then reports on stdout. Returns the exit status. */
int rsw_send_receive(const char *ifname, const struct rsw_recv_opts *o);

#endif
