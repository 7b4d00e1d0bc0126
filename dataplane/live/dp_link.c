#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include "dataplane/tm/counter.h"
#include "dataplane/tm/tsan.h"
#include "dp_link.h"

/* When a frame's last bit reaches the far end: a dynamic mbuf field, since the 8 bytes the
 * traffic manager keeps in the mbuf belong to the switch the frame is queued in. */
static int due_off = -1;

static inline uint64_t *due_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, due_off, uint64_t *);
}

int rsw_dp_link_init(struct rsw_dp_link *l, const char *name, uint32_t speed_mbps,
		     uint64_t delay_ns, char *err, size_t errlen)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "rsw_link_due", .size = sizeof(uint64_t), .align = __alignof__(uint64_t),
	};
	if (due_off < 0 && (due_off = rte_mbuf_dynfield_register(&desc)) < 0) {
		snprintf(err, errlen, "cannot register the link timestamp: %s", rte_strerror(rte_errno));
		return -1;
	}
	memset(l, 0, sizeof(*l));
	l->speed_mbps = speed_mbps;
	l->delay_ns = delay_ns;
	rsw_shaper_init(&l->wire, speed_mbps, 0);
	l->ring = rte_ring_create(name, RSW_DP_LINK_RING, SOCKET_ID_ANY,
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!l->ring) {
		snprintf(err, errlen, "cannot create link ring %s: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

uint16_t rsw_dp_link_tx(struct rsw_dp_link *l, struct rte_mbuf **m, uint16_t n, uint64_t now,
			enum rsw_dp_link_kind kind)
{
	unsigned used = rte_ring_count(l->ring), room = rte_ring_free_count(l->ring);
	if (kind == RSW_DP_LINK_TX_DATA)
		room = used < RSW_DP_LINK_DATA ? RSW_DP_LINK_DATA - used : 0;
	if (n > room)
		n = (uint16_t)room;
	uint64_t bytes = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint32_t len = m[i]->pkt_len;
		/* it starts when the wire is free (never before now), as replay's links do */
		uint64_t start = rsw_shaper_free_ns(&l->wire);
		if (start < now)
			start = now;
		rsw_shaper_send(&l->wire, now, len);
		uint64_t due = start + rsw_frame_ns(len, l->speed_mbps) + l->delay_ns;
		if (due < l->last_due)
			due = l->last_due;
		l->last_due = due;
		*due_of(m[i]) = due;
		bytes += len;
	}
	/* the sending port's owner is their one writer; the main lcore reads them (counters) */
	RSW_CNT_ADD(l->bytes, bytes);
	RSW_CNT_ADD(l->frames, n);
	if (kind == RSW_DP_LINK_TX_PFC)
		RSW_CNT_ADD(l->pfc_frames, n);
	/* single producer and the room checked: all n go */
	return (uint16_t)rte_ring_sp_enqueue_burst(l->ring, (void **)m, n, NULL);
}

uint16_t rsw_dp_link_rx(struct rsw_dp_link *l, struct rte_mbuf **m, uint16_t max, uint64_t now)
{
	/* h_n: the receiving port's owner is its one writer; the main lcore reads it (in_flight) */
	uint16_t held = l->h_n;
	if (held == 0) {
		l->h_head = 0;
		held = (uint16_t)rte_ring_sc_dequeue_burst(l->ring, (void **)l->held,
							   RSW_DP_LINK_HELD, NULL);
		if (held == 0)
			return 0;
	}
	uint16_t n = 0;
	while (n < max && held && *due_of(l->held[l->h_head]) <= now) {
		m[n++] = l->held[l->h_head++];
		held--;
	}
	RSW_CNT_SET(l->h_n, held);
	l->due_head = held ? *due_of(l->held[l->h_head]) : 0;
	return n;
}

uint64_t rsw_dp_link_in_flight(const struct rsw_dp_link *l)
{
	uint64_t n = 0;
	if (l->ring) {
		/* what rte_ring_count() computes, with the tails loaded atomically (it reads them
		 * plainly while the ends move them) */
		const struct rte_ring *r = l->ring;
		uint32_t c = (__atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED) -
			      __atomic_load_n(&r->cons.tail, __ATOMIC_RELAXED)) & r->mask;
		n = c > r->capacity ? r->capacity : c;
	}
	return n + __atomic_load_n(&l->h_n, __ATOMIC_RELAXED);
}

uint64_t rsw_dp_link_free(struct rsw_dp_link *l)
{
	uint64_t n = 0;
	struct rte_mbuf *m;
	for (uint16_t i = 0; i < l->h_n; i++)
		rsw_mbuf_free(l->held[l->h_head + i]);
	n += l->h_n;
	RSW_CNT_SET(l->h_n, 0);
	while (l->ring && rte_ring_sc_dequeue(l->ring, (void **)&m) == 0) {
		rsw_mbuf_free(m);
		n++;
	}
	rte_ring_free(l->ring);
	l->ring = NULL;
	return n;
}
