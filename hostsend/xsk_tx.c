/* TX-only AF_XDP socket over a small UMEM. No XDP program is loaded for it (a TX-only socket
 * needs none: XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD), so the interface keeps only the program
 * that watches PFC. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <xdp/xsk.h>

#include "hostsend/xsk_tx.h"

#define N_FRAMES 4096
#define RING 2048

static int open_packet(struct rsw_tx *t, int ifindex, char *err, size_t errlen)
{
	t->pkt_fd = socket(AF_PACKET, SOCK_RAW, 0); /* protocol 0: receives nothing */
	if (t->pkt_fd < 0) {
		snprintf(err, errlen, "cannot open an AF_PACKET socket: %s", strerror(errno));
		return -1;
	}
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_ifindex = ifindex};
	if (bind(t->pkt_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		snprintf(err, errlen, "cannot bind an AF_PACKET socket: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int open_xdp(struct rsw_tx *t, const char *ifname, char *err, size_t errlen)
{
	t->frame_size = XSK_UMEM__DEFAULT_FRAME_SIZE;
	t->n_frames = N_FRAMES;
	size_t len = (size_t)t->frame_size * t->n_frames;
	t->buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->buf == MAP_FAILED) {
		t->buf = NULL;
		snprintf(err, errlen, "cannot allocate the UMEM: %s", strerror(errno));
		return -1;
	}
	t->tx = calloc(1, sizeof(struct xsk_ring_prod));
	t->fq = calloc(1, sizeof(struct xsk_ring_prod));
	t->cq = calloc(1, sizeof(struct xsk_ring_cons));
	t->free_addr = calloc(t->n_frames, sizeof(uint64_t));
	if (!t->tx || !t->fq || !t->cq || !t->free_addr) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct xsk_umem_config ucfg = {.fill_size = RING, .comp_size = RING,
				       .frame_size = t->frame_size, .frame_headroom = 0};
	int rc = xsk_umem__create(&t->umem, t->buf, len, t->fq, t->cq, &ucfg);
	if (rc) {
		snprintf(err, errlen, "xsk_umem__create: %s", strerror(-rc));
		return -1;
	}
	struct xsk_socket_config scfg = {.rx_size = RING, .tx_size = RING,
					 .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					 .bind_flags = XDP_USE_NEED_WAKEUP};
	rc = xsk_socket__create(&t->xsk, ifname, 0, t->umem, NULL, t->tx, &scfg);
	if (rc) {
		snprintf(err, errlen, "xsk_socket__create: %s", strerror(-rc));
		return -1;
	}
	for (uint32_t i = 0; i < t->n_frames; i++)
		t->free_addr[i] = (uint64_t)i * t->frame_size;
	t->n_free = t->n_frames;
	t->use_xdp = 1;
	return 0;
}

static void close_xdp(struct rsw_tx *t)
{
	if (t->xsk)
		xsk_socket__delete(t->xsk);
	if (t->umem)
		xsk_umem__delete(t->umem);
	if (t->buf)
		munmap(t->buf, (size_t)t->frame_size * t->n_frames);
	free(t->tx);
	free(t->fq);
	free(t->cq);
	free(t->free_addr);
	t->xsk = NULL;
	t->umem = NULL;
	t->buf = t->tx = t->fq = t->cq = NULL;
	t->free_addr = NULL;
	t->use_xdp = 0;
}

int rsw_tx_open(struct rsw_tx *t, const char *ifname, int ifindex, const char *mode, char *err,
		size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->pkt_fd = -1;
	if (open_packet(t, ifindex, err, errlen) < 0)
		return -1;
	if (!strcmp(mode, "packet"))
		return 0;
	char e[256];
	if (open_xdp(t, ifname, e, sizeof(e)) == 0)
		return 0;
	close_xdp(t);
	if (!strcmp(mode, "xdp")) {
		snprintf(err, errlen, "%s: AF_XDP refused: %s", ifname, e);
		return -1;
	}
	fprintf(stderr, "rocesw send: %s: AF_XDP refused (%s); sending through a raw AF_PACKET "
		"socket instead\n", ifname, e);
	return 0;
}

void rsw_tx_kick(struct rsw_tx *t)
{
	if (!t->use_xdp)
		return;
	struct xsk_ring_prod *tx = t->tx;
	if (xsk_ring_prod__needs_wakeup(tx))
		sendto(xsk_socket__fd(t->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(t->cq, RING, &idx);
	for (uint32_t i = 0; i < n; i++)
		t->free_addr[t->n_free++] = *xsk_ring_cons__comp_addr(t->cq, idx + i);
	if (n)
		xsk_ring_cons__release(t->cq, n);
}

uint32_t rsw_tx_in_flight(const struct rsw_tx *t)
{
	return t->use_xdp ? t->n_frames - t->n_free : 0;
}

int rsw_tx_send(struct rsw_tx *t, const uint8_t *frame, uint32_t len, char *err, size_t errlen)
{
	if (!t->use_xdp || len > t->frame_size) {
		/* a UMEM frame is one page (the kernel's limit without multi-buffer): longer
		 * frames take the AF_PACKET socket */
		ssize_t n = send(t->pkt_fd, frame, len, 0);
		if (n < 0) {
			if (errno == ENOBUFS || errno == EAGAIN)
				return 0;
			snprintf(err, errlen, "send: %s", strerror(errno));
			return -1;
		}
		t->via_packet += t->use_xdp;
		t->tx_frames++;
		t->tx_bytes += len;
		return 1;
	}
	uint32_t idx;
	if (t->n_free == 0 || xsk_ring_prod__reserve(t->tx, 1, &idx) != 1)
		return 0;
	uint64_t addr = t->free_addr[--t->n_free];
	memcpy(xsk_umem__get_data(t->buf, addr), frame, len);
	struct xdp_desc *d = xsk_ring_prod__tx_desc(t->tx, idx);
	d->addr = addr;
	d->len = len;
	d->options = 0;
	xsk_ring_prod__submit(t->tx, 1);
	t->tx_frames++;
	t->tx_bytes += len;
	return 1;
}

void rsw_tx_close(struct rsw_tx *t)
{
	close_xdp(t);
	if (t->pkt_fd >= 0)
		close(t->pkt_fd);
	t->pkt_fd = -1;
}
