/* Frames out of one interface: an AF_XDP socket (libxdp's xsk API, TX only, copy or zero-copy
 * as the driver allows), else a raw AF_PACKET socket. */
#ifndef RSW_XSK_TX_H
#define RSW_XSK_TX_H

#include <stddef.h>
#include <stdint.h>

struct xsk_umem;
struct xsk_socket;

struct rsw_tx {
	int use_xdp;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	void *tx, *fq, *cq;            /* struct xsk_ring_prod / _cons, kept opaque here */
	void *buf;
	uint32_t frame_size, n_frames;
	uint64_t *free_addr;           /* stack of free UMEM frames */
	uint32_t n_free;
	int pkt_fd;                    /* AF_PACKET: fallback, and frames longer than a UMEM frame */
	uint64_t via_packet;           /* frames sent through AF_PACKET */
	uint64_t tx_frames, tx_bytes;
};

/* mode: "auto" (AF_XDP, else AF_PACKET saying so on stderr), "xdp" or "packet". */
int rsw_tx_open(struct rsw_tx *t, const char *ifname, int ifindex, const char *mode, char *err,
		size_t errlen);
/* 1 sent (queued to the kernel), 0 no room now (call rsw_tx_kick and retry), -1 error. */
int rsw_tx_send(struct rsw_tx *t, const uint8_t *frame, uint32_t len, char *err, size_t errlen);
/* Wakes the kernel's TX and takes back completed frames. */
void rsw_tx_kick(struct rsw_tx *t);
/* Frames handed over but not yet completed. */
uint32_t rsw_tx_in_flight(const struct rsw_tx *t);
void rsw_tx_close(struct rsw_tx *t);

#endif
