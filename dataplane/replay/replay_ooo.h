/* A responder's out-of-order placement (ooo=accept, docs/replay.md "Receivers and
 * reordering"): the PSNs received past the expected one and their payload sizes, held until
 * the gap before them fills. Data is placed as it arrives, so what is held is only a record; its
 * size is the reorder buffer a NIC that cannot place out of order would need. */
#ifndef RSW_REPLAY_OOO_H
#define RSW_REPLAY_OOO_H

#include <stdint.h>

struct rsw_ooo {
	uint16_t *len;        /* by PSN mod cap: payload bytes + 1, 0: not received */
	uint32_t cap;         /* a power of two; every PSN held lies in (epsn, epsn + cap) */
	uint64_t held_pkts, held_bytes;
};

/* Hold psn (> epsn) of len payload bytes (len < 65535). 1: held now, 0: already held (a
 * duplicate), -1: out of memory. */
int rsw_ooo_place(struct rsw_ooo *o, uint64_t epsn, uint64_t psn, uint32_t len);
/* Is psn held? Then it is released (the gap before it filled): 1, else 0. */
int rsw_ooo_take(struct rsw_ooo *o, uint64_t psn);
void rsw_ooo_free(struct rsw_ooo *o);

#endif
