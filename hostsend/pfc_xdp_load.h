/* Loading the PFC-watching XDP program onto an interface and reading its state. */
#ifndef RSW_PFC_XDP_LOAD_H
#define RSW_PFC_XDP_LOAD_H

#include <stddef.h>

#include "pfc_xdp.h"

struct rsw_pfc_xdp {
	struct bpf_object *obj;
	int prog_fd;
	int ifindex;          /* 0 when not attached */
	unsigned xdp_flags;   /* how it is attached (XDP_FLAGS_DRV_MODE or _SKB_MODE) */
	volatile struct rsw_pfc_xdp_state *state; /* mmap of the map's one entry */
};

/* Opens and loads the embedded program (no interface yet). -1 with a message. */
int rsw_pfc_xdp_open(struct rsw_pfc_xdp *x, unsigned link_mbps, char *err, size_t errlen);
/* Attaches it to ifindex: native (driver) mode first, else generic (SKB) mode; `mode` "auto",
 * "native" or "skb". -1 with a message if the kernel refuses. */
int rsw_pfc_xdp_attach(struct rsw_pfc_xdp *x, int ifindex, const char *mode, char *err,
		       size_t errlen);
/* Detaches (only the program it attached) and frees everything. */
void rsw_pfc_xdp_close(struct rsw_pfc_xdp *x);
/* libbpf's version, for --version */
const char *rsw_pfc_xdp_libbpf_version(void);
/* fd of the program, for BPF_PROG_TEST_RUN */
static inline int rsw_pfc_xdp_prog_fd(const struct rsw_pfc_xdp *x)
{
	return x->prog_fd;
}

#endif
